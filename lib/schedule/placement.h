/* placement.h: which rank holds each virtual stage. Two placements exist. Looped (naive to interleaved, the
 * zero-bubble rows): chunk c of rank r is virtual stage c*P + r, so data leaves every rank for the next one and
 * wraps from rank P-1 to rank 0. V (ZBV, DualPipeV; v = 2): rank r holds virtual stages r and 2P-1-r, so data goes
 * down the ranks through chunk 0, turns on rank P-1 without leaving it, and comes back up through chunk 1; rank 0
 * holds both the first and the last virtual stage. Dual (full DualPipe, on the V's numbering): two pipelines instead
 * of one. Micro-batches 0..M/2-1 run virtual stages 0..P-1 (ranks 0 up to P-1, chunk 0), micro-batches M/2..M-1
 * run P..2P-1 (ranks P-1 down to 0, chunk 1), and virtual stage vs holds the model's stage vs mod P, so each of
 * the model's P stages lives twice: on rank s, chunk 0, and on rank P-1-s, chunk 1. These are pure functions of
 * (P, v, vshape, dual), shared by the runtime, the schedule driver and the grader. */
#ifndef PP_PLACEMENT_H
#define PP_PLACEMENT_H

/* The virtual stage of rank's chunk. */
static inline int pp__place_vstage(int P, int vshape, int rank, int chunk) {
    return vshape ? (chunk == 0 ? rank : 2 * P - 1 - rank) : chunk * P + rank;
}

/* The rank that holds virtual stage vs, and the chunk it is there. */
static inline int pp__place_rank(int P, int vshape, int vs) { return vshape ? (vs < P ? vs : 2 * P - 1 - vs) : vs % P; }
static inline int pp__place_chunk(int P, int vshape, int vs) { return vshape ? vs >= P : vs / P; }

/* The virtual stage before vs on its micro-batches' path, -1 where vs is a path's first (it reads the tokens), and
 * the one after it, -1 where vs is a path's last (it holds the loss). */
static inline int pp__place_prev(int P, int dual, int vs) { return vs == 0 || (dual && vs % P == 0) ? -1 : vs - 1; }
static inline int pp__place_next(int P, int v, int dual, int vs) {
    return dual ? (vs % P == P - 1 ? -1 : vs + 1) : vs + 1 < P * v ? vs + 1 : -1;
}
/* The model's stage that virtual stage vs holds (its blocks, its embedding or head): vs itself, but for the two
 * copies of dual. */
static inline int pp__place_stage(int P, int dual, int vs) { return dual ? vs % P : vs; }
/* 1 when micro-batch mb of M travels through virtual stage vs: always, but for dual's two pipelines. */
static inline int pp__place_carries(int P, int M, int dual, int vs, int mb) { return !dual || (vs >= P) == (mb >= M / 2); }

#endif /* PP_PLACEMENT_H */
