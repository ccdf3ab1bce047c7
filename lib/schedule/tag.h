/* tag.h: the pure functions of pp.h, shared by the runtime and the schedule driver (which answers them itself):
 * the tag of a boundary message and its parts, and the library version. */
#ifndef PP_TAG_H
#define PP_TAG_H

#include <stddef.h>

#include "pp.h"

/* Splits a tag into direction, micro-batch and receiving virtual stage; returns 0 if it is not a pp_tag(). */
int pp__tag_split(int tag, int *dir, int *mb, int *vstage);
/* A tag's parts, for messages: "F mb3 vs2" ("raw 7" for a tag of the program's own). buf should hold 32 bytes. */
const char *pp__tag_describe(int tag, char *buf, size_t len);

#endif /* PP_TAG_H */
