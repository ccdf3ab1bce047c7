/* placement.h: which rank holds each virtual stage. Two placements exist. Looped (naive to interleaved, the
 * zero-bubble rows): chunk c of rank r is virtual stage c*P + r, so data leaves every rank for the next one and
 * wraps from rank P-1 to rank 0. V (ZBV, DualPipeV; v = 2): rank r holds virtual stages r and 2P-1-r, so data goes
 * down the ranks through chunk 0, turns on rank P-1 without leaving it, and comes back up through chunk 1; rank 0
 * holds both the first and the last virtual stage. These are pure functions of (P, v, vshape), shared by the
 * runtime, the schedule driver and the grader. */
#ifndef PP_PLACEMENT_H
#define PP_PLACEMENT_H

/* The virtual stage of rank's chunk. */
static inline int pp__place_vstage(int P, int vshape, int rank, int chunk) {
    return vshape ? (chunk == 0 ? rank : 2 * P - 1 - rank) : chunk * P + rank;
}

/* The rank that holds virtual stage vs, and the chunk it is there. */
static inline int pp__place_rank(int P, int vshape, int vs) { return vshape ? (vs < P ? vs : 2 * P - 1 - vs) : vs % P; }
static inline int pp__place_chunk(int P, int vshape, int vs) { return vshape ? vs >= P : vs / P; }

#endif /* PP_PLACEMENT_H */
