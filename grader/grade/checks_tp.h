/* checks_tp.h: the checks of a lab whose schedule writes its tensor-parallel blocks (lab 08: tpblock), beside
 * checks.c's: the cause of wrong gradients when it is a block call's, the shards' all-reduces against
 * Megatron-LM's, and the activation memory each shard keeps. */
#ifndef PP_CHECKS_TP_H
#define PP_CHECKS_TP_H

#include "grade.h"

#define PP_PTS_TP_SUMS 2
#define PP_PTS_TP_MEMORY 1
#define PP_PTS_GRID_STEP 2

/* 1 when c's schedule writes its blocks and cuts them over T > 1 shards (these checks apply). */
int pp__checks_tp_applies(const pp_run_config *c);
/* The first block call of the run given a tensor of a kind that does not fit it (pp.h: whole, split, partial),
 * as a sentence into msg, and 1; 0 when the run made no such call. */
int pp__checks_tp_diagnose(const pp_run_config *c, const pp_run_result *res, char *msg, size_t len);
/* The checks of a run whose gradients are right. */
void pp__checks_tp(const pp_run_config *c, const pp_run_result *res, pp_test_result *out);
/* The same checks at zero, with why (the gradients or the run failed first). */
void pp__checks_tp_gated(const pp_run_config *c, pp_test_result *out, const char *why);

/* The grid lab's check (tpgrid): the step on the topology, placed by the submission's mapping (c->place), against
 * the canonical order on the canonical placement (tdp: a stage's shards side by side in a node, then its
 * replicas, then the stages), with the link a longer step pays named. Nothing for other rows; gated with the
 * rest when not graded. */
void pp__checks_grid(const pp_run_config *c, const pp_run_result *res, pp_test_result *out);
void pp__checks_grid_gated(const pp_run_config *c, pp_test_result *out, const char *why);

#endif /* PP_CHECKS_TP_H */
