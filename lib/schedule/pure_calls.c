/* pure_calls.c: pp.h's two calls that read no state, pp_tag (base's tag layout, tag.h, under pp.h's name and
 * types) and pp_version. The schedule driver answers the same two itself (driver/client.c), from the same layout. */
#include "pp.h"
#include "tag.h"

_Static_assert(PP_FWD == 0 && PP_BWD == 1 && PP_TAG_MAX_MB == PP__TAG_MAX_MB &&
                   PP_TAG_MAX_VSTAGE == PP__TAG_MAX_VSTAGE && PP_TAG_RAW_MAX == PP__TAG_RAW_MAX,
               "pp.h's tag limits are the layout's (tag.h)");

int pp_tag(pp_dir dir, int mb, int vstage) { return pp__tag_make((int)dir, mb, vstage); }

const char *pp_version(void) { return PP_VERSION; }
