/* warmup_recorded.c: the warm-up's answer keys as a student handout has them (warmup_keys.h): the ones the kit
 * recorded for the public cases, nothing computed. */
#include "warmup_keys.h"

#include <stdio.h>

#include "answers.h"

int pp__warmup_key(const char *key, char *val, size_t len) {
    char full[8192];
    if (snprintf(full, sizeof full, "warmup %s", key) >= (int)sizeof full) return -1;
    const char *found = pp__answers_record(full);
    if (!found || snprintf(val, len, "%s", found) >= (int)len) return -1;
    return 0;
}
