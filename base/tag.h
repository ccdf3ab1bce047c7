/* tag.h: the layout of a message tag, on plain integers: a mark bit, the direction, the receiving virtual stage
 * and the micro-batch, from the high bit down. Both sides of the trust boundary speak it and neither owns it: the
 * runtime reads tags (a message's description, the deadlock report, the trace), and the schedule driver answers
 * pp_tag itself, from these same functions, without a request. So it lies in base/, under both, and includes no
 * pp.h: pp.h states the limits a student reads (PP_TAG_MAX_MB, PP_TAG_MAX_VSTAGE, PP_TAG_RAW_MAX), and each
 * implementation of pp_tag holds them to this layout with a static assertion. (The channel's facts would not do:
 * a tag is a function of its arguments, not a fact of the rank.) */
#ifndef PP_TAG_H
#define PP_TAG_H

#include <stddef.h>

/* The layout's limits: the largest micro-batch and virtual stage a tag holds, the largest raw tag (a program's own,
 * never read as a boundary message's). */
#define PP__TAG_MAX_MB 16383
#define PP__TAG_MAX_VSTAGE 32767
#define PP__TAG_RAW_MAX 1073741823

/* The tag of a boundary message: dir 0 forward, 1 backward (pp.h's PP_FWD, PP_BWD). -1 when dir is neither, or mb or
 * vstage is negative or past the limits above. */
int pp__tag_make(int dir, int mb, int vstage);
/* Splits a tag into direction, micro-batch and receiving virtual stage; returns 0 if it is not a pp__tag_make one. */
int pp__tag_split(int tag, int *dir, int *mb, int *vstage);
/* A tag's parts, for messages: "F mb3 vs2" ("raw 7" for a tag of the program's own). buf should hold 32 bytes. */
const char *pp__tag_describe(int tag, char *buf, size_t len);

#endif /* PP_TAG_H */
