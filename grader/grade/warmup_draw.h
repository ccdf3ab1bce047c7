/* warmup_draw.h: the warm-up's drawn cases. A graded run (a hidden configuration with a warmup-seed line) grades
 * each part on cases drawn for it instead of its public table, so that a table of the public answers earns nothing
 * there. Each part draws from its own splitmix64 stream, started from HMAC-SHA-256 keyed by the instructor's seed
 * over the part's name and the graded file's SHA-256. The seed never leaves the hidden configuration and the
 * instructor's JSON report, so the cases cannot be computed from the handout; and a file that holds a table of the
 * cases it was asked is a new file, asked new ones. The same file and seed give the same cases on every run and
 * machine and in both halves of the grading (each draws from cfg alone), and one part's cases say nothing about
 * another's. Every part's generator sits next to its public table (the schedule cases' siblings here, shared by
 * several parts), draws the same checks over the same schedules, and stays where the answer keys and the
 * handout's rules hold (interleaved M a multiple of P, the zero-bubble bubbles at M >= P); no drawn case is a
 * public one. A grade function's draw is NULL for the public cases, and a drawn case's messages never show the
 * answer key's value, only the hint. */
#ifndef PP_WARMUP_DRAW_H
#define PP_WARMUP_DRAW_H

#include <stdint.h>

#include "grade.h"

/* One part's stream. */
typedef struct pp_warmup_draw {
    uint64_t s;
} pp_warmup_draw;

/* Starts part's stream from cfg's seed and graded file. */
void pp__warmup_draw_init(pp_warmup_draw *d, const pp_test_config *cfg, const char *part);

/* The next draw, uniform in lo..hi. */
int pp__warmup_draw_int(pp_warmup_draw *d, int lo, int hi);

/* A case of a schedule's figures: its P ranks, M micro-batches and v chunks. */
typedef struct pp_warmup_case {
    const char *schedule;
    int P, M, v;
} pp_warmup_case;

/* 1 when a and b are the same case. */
int pp__warmup_case_same(const pp_warmup_case *a, const pp_warmup_case *b);

/* One drawn sibling of each of the n public cases pub into out, none of them public or a repeat: its schedule, P
 * in 2..8, M on pub's side of P (1 where pub's one-micro-batch case has 1; a short pipeline stays short) and a
 * multiple of P where chunks loop round the ranks, v in 2..4 there (2 in a V). The zero-bubble cases' M stays
 * >= P with pub's, where their closed formula holds. */
void pp__warmup_draw_siblings(pp_warmup_draw *d, const pp_warmup_case *pub, int n, pp_warmup_case *out);

#endif /* PP_WARMUP_DRAW_H */
