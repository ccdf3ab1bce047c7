/* reduce.h: the rules of pp.h's gradient all-reduce (pp_grad_reduce, pp_grad_ireduce) over a reduce group, and
 * where its parts meet for ranks that share a process (reduce.c). A group is the ranks whose chunks hold copies of
 * the same stages: the D ranks (0, p) .. (D-1, p) of a data-parallel group, or, in full DualPipe, the 2D ranks
 * (d, p) and (d, P-1-p), whose chunk c and 1-c hold the two copies of one stage of the model. Its members are
 * numbered in the order the sum adds them: replica by replica, and within a replica the lower rank first.
 *
 * The k-th reduce a rank starts in a step is its group's k-th. It is decided from one part per member, in replica
 * order: the member's call (its chunk, the chunk's size, its clock then, and its gradients then), or, for a member
 * that left its step with fewer than k + 1 reduces, how it left. The decision is a function of the parts alone,
 * never of which member came first, so it is the same on every transport and every run:
 *   - every member called it for the same stage (its chunk's copy): done. The sum of the members' gradients,
 *     added in member order, lands in each member's gradients when it waits; the reduce starts at the later of the latest
 *     call and the end of the group's previous reduce (one lane per group) and lasts pp__config_reduce_cost of the
 *     chunk's bytes; with one member it is free and leaves the gradients alone;
 *   - the members named different chunks (a collective matches by order; NCCL would hang): every member that
 *     called it fails when it waits, naming the lowest replica whose call differs from its own;
 *   - otherwise, a member failed or was stopped before it: the others stop waiting, that failure is the cause;
 *   - otherwise, a member returned from its step without it: every member that called it fails when it waits,
 *     naming the lowest such replica.
 * Where the parts meet is the transport's (comm.h, reduce_post): in memory for ranks that are threads of one
 * process (pp__reduce_local_post: the threads and nccl transports), by collectives under MPI (mpi_reduce.c). */
#ifndef PP_REDUCE_H
#define PP_REDUCE_H

#include <stdint.h>

#include "rank.h"

/* What a member contributes to its group's reduce k. A plain struct of fixed-size fields: it travels between
 * processes as bytes. */
typedef enum { PP_PART_CALL = 1, PP_PART_RETURNED, PP_PART_LEFT } pp_part_kind;
typedef struct pp_reduce_part {
    int32_t kind;            /* pp_part_kind: it called it; it returned without it; it failed or stopped first */
    int32_t k;               /* the reduce's place among the group's reduces of the step */
    int32_t chunk;           /* a call's chunk */
    int32_t stage;           /* ... and the model's stage that chunk holds (pp__config_stage): what members match */
    uint64_t floats;         /* a call's gradient floats (the chunk's size) */
    double clock;            /* the member's virtual clock at its call */
} pp_reduce_part;

/* A reduce request's verdict (pp_request.red.verdict), once its group decided it. */
typedef enum {
    PP_REDUCE_PENDING = 0,
    PP_REDUCE_DONE,          /* the sum and the lane's times are in the request */
    PP_REDUCE_MISMATCH,      /* red.other named chunk red.other_chunk as its reduce k */
    PP_REDUCE_MISSED,        /* member red.other returned from its step without reduce k */
    PP_REDUCE_STOPPED        /* a member failed or stopped first: this one stops waiting */
} pp_reduce_verdict;

/* The group of a world rank (a number below T*P; its members: pp__config_reduce_members), its place among the
 * group's members, and the world rank of member m of group g. Each tensor-parallel shard's groups are apart:
 * shard t of a stage sums with shard t of its replicas and copies. */
int pp__reduce_group(const pp_run_config *c, int rank);
int pp__reduce_member(const pp_run_config *c, int rank);
int pp__reduce_member_rank(const pp_run_config *c, int g, int m);

/* The verdict for member `me` of a group whose D parts are all known (parts[d]: member d's), and the replica it
 * names (*other, and for a mismatch the chunk that replica named). Members that did not call it have no verdict. */
pp_reduce_verdict pp__reduce_judge(const pp_reduce_part *parts, int D, int me, int *other, int *other_chunk);
/* A done reduce's place on group's lane, which is free from `lane` on: [*start, *end), its length the ring over the
 * group's members (pp__config_ring_cost: the reduce's link, or with a topology the slowest link it crosses). */
void pp__reduce_place(const pp_run_config *c, int group, const pp_reduce_part *parts, int D, double lane,
                      double *start, double *end);
/* sum[0..n) = contrib[0] + contrib[1] + ... + contrib[D-1] (the members'), added in that order whatever the transport, so that
 * every one gets the same bits. */
void pp__reduce_sum(const float *const *contrib, int D, size_t n, float *sum);
/* Floats of rank r's chunk's gradients, and copies between them and a host buffer of that many floats. */
size_t pp__reduce_chunk_floats(const pp_rank *r, int chunk);
void pp__reduce_grads_out(pp_rank *r, int chunk, float *dst);
void pp__reduce_grads_in(pp_rank *r, int chunk, const float *src);

/* The in-process groups' state (ranks that are threads): set up with the world (w->cfg, w->P set; ranks not
 * yet), freed with it. */
void pp__reduce_world_init(pp_world *w);
void pp__reduce_world_free(pp_world *w);
/* The reduce_post of transports whose ranks share this process: records rank's part of its group's reduce
 * part->k, and once the group's parts are all in, judges it, sums it and completes the members' requests with
 * the transport's complete (which marks one done and wakes its rank if it waits, under the lock its waits
 * sleep on). q is the rank's request (NULL for a part that says how it left); grads, a malloc'd copy of the
 * chunk's gradients at the call (NULL at D = 1), is this function's to free. */
void pp__reduce_local_post(pp_world *w, int rank, pp_request *q, const pp_reduce_part *part, float *grads,
                           void (*complete)(pp_world *w, pp_request *q));

/* The same meeting for a tensor-parallel group's sums (the T shards of one stage of one replica, model.h's
 * pp_tp_shard): part->k is the sum's place among the rank's sums of the step, data (malloc'd, this function's to
 * free) its partial product, and the verdict the same rules' with the shards as members in shard order. A done
 * sum is added in shard order and handed to each member's request as a buffer of its own (red.sum, which the
 * member frees once it has copied it). */
void pp__reduce_tp_post(pp_world *w, int rank, pp_request *q, const pp_reduce_part *part, float *data,
                        void (*complete)(pp_world *w, pp_request *q));

/* Rank r's per-step reduce state: made at setup, reset at each step, freed at teardown. */
void pp__reduce_rank_init(pp_rank *r);
void pp__reduce_rank_reset(pp_rank *r);
void pp__reduce_rank_free(pp_rank *r);
/* The first of rank r's reduces (of chunk, or of any chunk when chunk < 0) not yet waited, or NULL
 * (pp_optimizer_step refuses to step past one). */
const pp_request *pp__reduce_in_flight(const pp_rank *r, int chunk);

#endif /* PP_REDUCE_H */
