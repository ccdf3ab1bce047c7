/* reduce.h: the gradient all-reduce of pp.h (pp_grad_reduce, pp_grad_ireduce) over a data-parallel group, the D
 * ranks (0, p) .. (D-1, p) that hold the same stage, on the virtual clock's reduce lane (reduce.c).
 *
 * The k-th reduce a rank starts in a step is the group's k-th: every member must reduce its chunks in the same
 * order (NCCL would hang otherwise; here the run stops naming both orders). It starts at the later of the latest
 * member's clock at its call and the end of the group's reduce k-1 (the lane is free), and holds the lane for
 * pp__config_reduce_cost of the chunk's gradient bytes; compute goes on meanwhile. Gradients are summed in
 * replica order 0, 1, ..., D-1, whichever member arrived last, so that every transport gets the same bits. */
#ifndef PP_REDUCE_H
#define PP_REDUCE_H

#include "rank.h"

/* Sets up w's groups (w->cfg, w->P set; ranks not yet); frees them. */
void pp__reduce_world_init(pp_world *w);
void pp__reduce_world_free(pp_world *w);
/* Rank r's per-step reduce state: made at setup, reset at each step, freed at teardown. */
void pp__reduce_rank_init(pp_rank *r);
void pp__reduce_rank_reset(pp_rank *r);
void pp__reduce_rank_free(pp_rank *r);
/* Rank r's step function returned or left: members waiting on its reduce must stop waiting. */
void pp__reduce_rank_returned(pp_rank *r);
/* pp__reduce_wait (declared in comm.h, for pp_wait) completes a reduce request of rank r: it copies the group's
 * sum into r's gradients, moves r's clock to the reduce's end and sets the event's times. It does not return when
 * the group can never complete it. */
/* The first of rank r's reduces not yet waited, or NULL (pp_optimizer_step refuses to step past one). */
const pp_request *pp__reduce_in_flight(const pp_rank *r, int chunk);

#endif /* PP_REDUCE_H */
