/* tag.c: the tag layout (tag.h): making a boundary message's tag, splitting it, describing it. */
#include "tag.h"

#include <stdio.h>

/* tag = 1 | dir | receiving virtual stage | micro-batch, from the high bit down */
#define TAG_MARK (1 << 30)
#define TAG_DIR_SHIFT 29
#define TAG_VS_SHIFT 14
#define TAG_MB_MASK ((1 << TAG_VS_SHIFT) - 1)
#define TAG_VS_MASK ((1 << (TAG_DIR_SHIFT - TAG_VS_SHIFT)) - 1)
_Static_assert(TAG_MB_MASK == PP__TAG_MAX_MB && TAG_VS_MASK == PP__TAG_MAX_VSTAGE && TAG_MARK - 1 == PP__TAG_RAW_MAX,
               "tag.h's limits are the layout's");

int pp__tag_make(int dir, int mb, int vstage) {
    if ((dir != 0 && dir != 1) || mb < 0 || mb > TAG_MB_MASK || vstage < 0 || vstage > TAG_VS_MASK) return -1;
    return TAG_MARK | (dir << TAG_DIR_SHIFT) | (vstage << TAG_VS_SHIFT) | mb;
}

int pp__tag_split(int tag, int *dir, int *mb, int *vstage) {
    if (tag < 0 || !(tag & TAG_MARK)) return 0;
    *dir = (tag >> TAG_DIR_SHIFT) & 1;
    *vstage = (tag >> TAG_VS_SHIFT) & TAG_VS_MASK;
    *mb = tag & TAG_MB_MASK;
    return 1;
}

const char *pp__tag_describe(int tag, char *buf, size_t len) {
    int dir, mb, vs;
    if (pp__tag_split(tag, &dir, &mb, &vs))
        snprintf(buf, len, "%s mb%d vs%d", dir == 0 ? "F" : "B", mb, vs);
    else
        snprintf(buf, len, "raw %d", tag);
    return buf;
}
