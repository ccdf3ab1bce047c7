/* warmup_keys.h: the warm-up's answer keys. Each case of a part names its key as one line of text, its form
 * written where the part is graded (warmup_parts.h: "bubble gpipe 4 6 1", "idle 1f1b 4 8 1 15", ...), and gets its
 * answer as text: numbers in %.17g, lists space-separated. The kit computes a key from the canonical schedules and
 * their replays, an exact partition search and the grid's counts (warmup_keys.c); a student handout has none of
 * that code and looks the key up among the ones the kit recorded for the public cases (warmup_recorded.c, over
 * lib/schedule/answers.rec). The Makefile builds one of the two, as it builds one of answers.h's. */
#ifndef PP_WARMUP_KEYS_H
#define PP_WARMUP_KEYS_H

#include <stddef.h>

/* The answer of the case `key` into val (len bytes, NUL-terminated); 0, or -1 when this build has none for it (a
 * malformed key, or a case a handout did not record). */
int pp__warmup_key(const char *key, char *val, size_t len);

#endif /* PP_WARMUP_KEYS_H */
