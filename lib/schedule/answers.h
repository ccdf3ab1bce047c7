/* answers.h: what the labs grade, behind one interface. For a row of the schedule table at P ranks, M
 * micro-batches and v chunks: its canonical order, each rank's stash peak, its closed bubble and the boundary
 * messages of its step; where a placement's axes put each rank of a grid; the library's own tensor-parallel
 * block; and the warm-up's answer keys, where a build records them.
 *
 * Two builds answer it. The kit computes every answer (answers_generated.c, over canonical.c's orders). A student
 * handout has none of that code: it reads the answers the kit recorded for the handout's public configurations
 * (answers_recorded.c, over answers.rec, which `make answers` writes), so that nothing a student receives
 * computes what a lab grades. The Makefile builds one or the other (its ANSWERS line); every caller is the same
 * in both, and asks pp__answers_held first where a configuration may be one a handout does not record. */
#ifndef PP_ANSWERS_H
#define PP_ANSWERS_H

#include <stddef.h>

#include "schedules.h"

/* "generated" (the kit) or "recorded" (a handout). */
const char *pp__answers_source(void);

/* 1 when this build holds the answers of row def at (P, M, v): always in the kit, for an M and v the row's rules
 * admit; in a handout, for a recorded configuration only. */
int pp__answers_held(const pp_schedule_def *def, int P, int M, int v);

/* Rank r's canonical order into ops (room for PP_SCHED_ROOM(M, v)), each op's cost and split 0; returns the
 * number of ops, or -1 where the answers are not held. */
int pp__answers_order(const pp_schedule_def *def, int P, int M, int v, int r, pp_sched_op *ops);

/* The most stashes rank r holds at once in the canonical order (a stash lives from its F to its last backward
 * op); -1 where not held. */
int pp__answers_peak(const pp_schedule_def *def, int P, int M, int v, int r);

/* The canonical order's bubble with no latency, no edge cost and even stages, in closed form; -1 where the row
 * has no closed form at (P, M, v) (the theory replays the order then), or where not held. */
double pp__answers_bubble(const pp_schedule_def *def, int P, int M, int v);

/* The boundary messages of one step: per micro-batch, an activation forward and a gradient back across every
 * boundary of its path between virtual stages on two different ranks; -1 where not held. */
int pp__answers_messages(const pp_schedule_def *def, int P, int M, int v);

/* The slot (global rank; its node is slot / G) of world rank w = (t*D + d)*P + p when a placement lists the axes
 * t (shard), d (replica) and p (stage) fastest first in `order` ("tdp" is Megatron-LM's); -1 where this build
 * does not hold that placement of a T x D x P grid. */
int pp__answers_place(const char *order, int T, int D, int P, int w);

/* One step of a half of a block of the model on a tensor-parallel shard: both halves (attention's, x + Wo attn(LN1(x))
 * + bo, and the MLP's, x + W2 gelu(W1 LN2(x) + b1) + b2) have one shape, LayerNorm, a first linear cut by columns
 * (IN: Wq/Wk/Wv; W1), the half's own step (ACT: attention; GELU), a last linear cut by rows (OUT: Wo; W2) and its
 * bias (BIAS: bo; b2). Forward, each layer on the step's running tensor; backward, each layer's input gradient (the
 * weight gradients are the weight half's, in either order). PP_BLOCK_SUM is the shards' all-reduce of the running
 * tensor, PP_BLOCK_RESIDUAL adds the half's input (forward) or its output's gradient (backward). */
typedef enum {
    PP_BLOCK_LN, PP_BLOCK_IN, PP_BLOCK_ACT, PP_BLOCK_OUT, PP_BLOCK_BIAS, PP_BLOCK_RESIDUAL, PP_BLOCK_SUM
} pp_block_step;

#define PP_BLOCK_MAX_STEPS 8

/* A half-block as the steps of its forward and of its backward's input half; both halves follow it. */
typedef struct pp_block_recipe {
    int nfwd, nbwd;
    pp_block_step fwd[PP_BLOCK_MAX_STEPS], bwd[PP_BLOCK_MAX_STEPS];
} pp_block_recipe;

/* The library's own tensor-parallel block: what a stage of whole-stage ops (pp_stage_forward, ...) runs when
 * --tp cuts it over shards. NULL where this build has none (a handout: writing it is lab 08's tpblock). */
const pp_block_recipe *pp__answers_tp_block(void);

/* The recorded value of `key` (a line "KEY = VALUE" of answers.rec: the warm-up's keys, "warmup ..."); NULL
 * where this build records none. The kit records nothing: it computes. */
const char *pp__answers_record(const char *key);

/* The configurations of row def this build holds, for a refusal's message ("P=2 M=4, P=4 M=8 v=2, ..."), into
 * buf; "every one its rules admit" in the kit. Returns buf. */
const char *pp__answers_held_list(const pp_schedule_def *def, char *buf, size_t len);

#endif /* PP_ANSWERS_H */
