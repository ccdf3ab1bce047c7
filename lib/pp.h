/* pp.h: the public API of libpp, the one header a student reads.
 *
 * A pipeline step is a function you write, called once per rank (all ranks at once, one thread or process
 * each). It decides which stage operation runs, for which micro-batch and chunk, in which order, and does the
 * plumbing a real pipeline owns: receive inputs, send outputs, keep and free activation stashes, scale the loss
 * by 1/M, and step the optimizer once at the end. Layers and kernels are the library's job.
 *
 *     void pp_gpipe_step(pp_rank *r)          labs/02-gpipe/gpipe.c
 *
 * Vocabulary. P ranks, each owning v chunks (model pieces); the model is cut into P*v virtual stages, which a
 * micro-batch runs through in order, 0 to P*v-1. Which rank holds which virtual stage is the schedule's placement,
 * and pp_virtual_stage(r, chunk) is the one place to ask: looped (chunk c of rank r is virtual stage c*P + r, so
 * stage s lives on rank s mod P) for every schedule but the V-shaped ones (ZBV, DualPipeV), where rank r holds
 * virtual stages r and 2P-1-r, so two neighbouring stages, P-1 and P, share rank P-1. A stage's depth (how many
 * blocks, so what its ops cost) comes from the run's layout: as even as the block count allows by default,
 * uneven with --layout. M micro-batches make one replica's batch. Virtual stage 0 embeds the tokens itself; the
 * last virtual stage ends in the loss.
 *
 * Data parallelism (--dp D, lab 07). The run may hold D replicas of that pipeline, D*P ranks: rank (d, p) holds
 * stage p of replica d. Everything above is within one replica: pp_rank_id is p, ranks are addressed 0..P-1 in
 * the caller's own replica (another replica's ranks have no address, so a message never crosses replicas), and
 * replica d's micro-batch mb is micro-batch d*M + mb of the global batch of D*M. The D ranks holding stage p form
 * its data-parallel group: pp_grad_reduce sums their gradients, so that every replica steps the same weights. At
 * D = 1 (the default) there is one replica and a reduce is free.
 *
 * Ownership. You never free a tensor: the library does, at the end of the step, or earlier for two kinds that a
 * pipeline is done with long before, so that memory follows the schedule instead of growing with M: a tensor
 * you received goes once the backward of every micro-batch you passed it to (as x or dy) has finished, and a
 * tensor you sent goes once every send of it has completed. Using one after that stops the run with a message
 * naming when it went. Stashes are the activation memory the library counts: you free each one with
 * pp_stash_free() once its backward is done.
 *
 * Errors. A misuse (wrong rank, stash used after free, shape mismatch...) stops the rank that made it with a
 * one-line message naming what was wrong and a hint; the function does not return to you. The other ranks run on
 * until they finish, fail too, or wait on what can no longer come, and the run reports the failure that came
 * first on the virtual clock (on a tie, the lowest rank's), then what followed from it: the same program gets the
 * same report on every run. A deadlock is reported when every rank waits and none failed.
 *
 * State. Keep what belongs to a rank in your step function's variables, or ask pp.h for it (pp_rank_id,
 * pp_rank_shard, pp_block_shard...): graded, every rank runs in a process of its own, but under --in-process all
 * ranks are threads of one, and a file-scope variable is then one for all of them.
 */
#ifndef PP_H
#define PP_H

#include <stddef.h>

/* The version of this header; pp_version() says which library a program runs against. */
#define PP_VERSION "0.1.0"

/* The largest micro-batch and virtual stage a pp_tag can name, and the largest raw tag of a program's own. */
#define PP_TAG_MAX_MB 16383
#define PP_TAG_MAX_VSTAGE 32767
#define PP_TAG_RAW_MAX 1073741823

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_rank pp_rank;       /* one pipeline rank: its stages, its clock, its channel to the others */
typedef struct pp_tensor pp_tensor;   /* an activation or gradient on the rank's device */
typedef struct pp_stash pp_stash;     /* what a forward keeps for its backward (counted activation memory) */
typedef struct pp_request pp_request; /* a nonblocking send, receive or gradient reduce in flight */

/* Direction of a boundary message, for pp_tag(). */
typedef enum { PP_FWD = 0, PP_BWD = 1 } pp_dir;

/* ---- who am I ------------------------------------------------------------------------------------------ */

/* This rank's index in its pipeline, 0..P-1 (its stage p; the same in every replica). */
int pp_rank_id(const pp_rank *r);
/* This rank's replica d, 0..D-1: it takes micro-batches d*M .. d*M+M-1 of the global batch. */
int pp_rank_replica(const pp_rank *r);
/* D: the number of replicas of the pipeline (--dp; 1 unless the run asks for data parallelism). */
int pp_rank_replicas(const pp_rank *r);
/* P: the number of ranks in this replica's pipeline (each holds v chunks, so there are P * v virtual stages; see
 * pp_virtual_stages). */
int pp_rank_stages(const pp_rank *r);
/* M: the number of micro-batches this rank's replica runs in this step (the global batch is D*M). */
int pp_rank_microbatches(const pp_rank *r);
/* v: the number of chunks (model pieces) each rank owns, as the schedule sets it: 1 for naive, GPipe, 1F1B and the
 * zero-bubble ZB-H1 and ZB-H2; --chunks for interleaved; 2 for the V-shaped ZBV and DualPipeV. */
int pp_rank_chunks(const pp_rank *r);
/* 1 when this run asks for activation recomputation (see pp_stash_checkpoint), else 0. */
int pp_rank_recompute(const pp_rank *r);
/* The virtual stage this rank's chunk is: chunk * P + rank when looped, rank or 2P-1-rank (chunk 0 or 1) in a V
 * and in full DualPipe, whose two pipelines are virtual stages 0..P-1 (micro-batches 0..M/2-1) and P..2P-1
 * (M/2..M-1), virtual stage vs holding a copy of the model's stage vs mod P. Fails if chunk is not in 0..v-1. */
int pp_virtual_stage(const pp_rank *r, int chunk);
/* The number of virtual stages, P * v. Virtual stage 0 holds the embedding, the last one the loss (in DualPipe
 * each pipeline's first holds an embedding and its last a loss: 0 and P, P-1 and 2P-1). */
int pp_virtual_stages(const pp_rank *r);

/* ---- compute ------------------------------------------------------------------------------------------- */

/* Runs the forward of this rank's chunk on micro-batch mb and returns its output.
 * x: the activation received from the previous virtual stage; must be NULL on virtual stage 0, which reads
 * micro-batch mb's tokens itself. On the last virtual stage the output is the micro-batch's mean loss (1x1).
 * *stash receives what the backward of (chunk, mb) will need; it stays alive (and counted) until you pass it
 * to pp_stash_free(). */
pp_tensor *pp_stage_forward(pp_rank *r, int chunk, int mb, pp_tensor *x, pp_stash **stash);

/* Runs the whole backward of the forward that made stash and returns the gradient for the previous virtual
 * stage (NULL on virtual stage 0). Weight gradients are ADDED to the rank's gradient buffers.
 * dy: the gradient received from the next virtual stage; on the last virtual stage, the loss gradient made
 * by pp_loss_grad(). Equals pp_stage_backward_input() followed by pp_stage_backward_weight(). */
pp_tensor *pp_stage_backward(pp_rank *r, pp_stash *stash, pp_tensor *dy);

/* The input-gradient half of a backward (B): returns dx as pp_stage_backward does, adds no weight gradient.
 * Call pp_stage_backward_weight() on the same stash later. */
pp_tensor *pp_stage_backward_input(pp_rank *r, pp_stash *stash, pp_tensor *dy);

/* The weight-gradient half of a backward (W): adds the weight gradients. Requires pp_stage_backward_input()
 * on this stash first. */
void pp_stage_backward_weight(pp_rank *r, pp_stash *stash);

/* The seed of the backward on the last virtual stage: d(total loss)/d(this micro-batch's loss). The total loss
 * of a step is the mean over all its samples, so with M equal micro-batches the right value is 1.0f / M; over D
 * replicas, whose reduce sums their gradients, 1.0f / (D * M). Fails on a rank that does not hold the last
 * virtual stage. */
pp_tensor *pp_loss_grad(pp_rank *r, float scale);

/* ---- activation stashes -------------------------------------------------------------------------------- */

/* Drops everything stash holds except the stage input, so that it costs one activation instead of a stage's
 * worth; its backward then recomputes the forward first (costing one more forward of virtual time). */
void pp_stash_checkpoint(pp_rank *r, pp_stash *stash);

/* Releases a stash. Its backward must be complete (both halves when split): freeing earlier is an error. */
void pp_stash_free(pp_rank *r, pp_stash *stash);

/* ---- optimizer ----------------------------------------------------------------------------------------- */

/* Applies one optimizer update (the run's SGD or AdamW) to every parameter this rank owns, from the gradients
 * accumulated so far. Call it once per step, after the last backward. The library zeroes gradients before
 * each step. */
void pp_optimizer_step(pp_rank *r);

/* Sets this rank's gradient buffers to zero. The library already does so before each step. */
void pp_grad_zero(pp_rank *r);

/* ---- data parallelism: the gradient all-reduce ------------------------------------------------------ */

/* Sums the weight gradients of this rank's chunk over its data-parallel group (the D ranks holding the same
 * stage, one per replica; in full DualPipe also the stage's second copy, rank P-1-r's chunk 1-c, so that a group
 * has 2D members) and leaves the sum in each member's gradient buffers: a blocking all-reduce. Sums, does
 * not average: scale the loss by 1/(D*M) instead. Call it once per chunk per step, after the chunk's last
 * backward (both halves when split) and before pp_optimizer_step. A reduce matches by its place among each
 * member's reduces of the step (the k-th with the k-th), so members must reduce in the same order: when members
 * name copies of different stages, or one returns from its step without the reduce, every member that called it
 * fails when it waits, naming the other member (the same report on every run). On the virtual clock it
 * starts once every member has called it and the group's previous reduce is done, runs on its own lane (compute
 * and messages go on), and this call returns at its end; its cost model (--reduce-alpha, --reduce-beta) is lab
 * 07's chapter. Free with one member (D = 1, one pipeline). */
void pp_grad_reduce(pp_rank *r, int chunk);

/* The same reduce, started: returns at once, and pp_wait()/pp_waitall() completes it (the sum is in the gradient
 * buffers only then, and the caller's clock moves to the reduce's end if it is later). Leave the chunk's gradients
 * alone until then. pp_optimizer_step refuses to run while one is in flight. */
pp_request *pp_grad_ireduce(pp_rank *r, int chunk);

/* ---- messages ------------------------------------------------------------------------------------------ */

/* The tag of a boundary message: direction, micro-batch and the virtual stage that RECEIVES it. A forward
 * message from virtual stage s goes to s+1 (tag pp_tag(PP_FWD, mb, s+1)); a backward one from s to s-1.
 * Because such a tag names its boundary, sends and receives check it: the peer must be the rank that holds the
 * other side (the placement pp_virtual_stage says), and the stage and micro-batch must exist. A boundary whose
 * two stages live on one rank (the turn of a V) carries no message: pass the tensor straight to the next op.
 * Returns -1 when dir is neither PP_FWD nor PP_BWD, or mb or vstage is negative or past what a tag holds
 * (PP_TAG_MAX_MB, PP_TAG_MAX_VSTAGE). Sends and receives also take a raw tag of yours, 0 .. PP_TAG_RAW_MAX
 * (every pp_tag is above it); such a tag names no boundary, so only its peer and its match are checked, and a
 * negative tag is refused. */
int pp_tag(pp_dir dir, int mb, int vstage);

/* Sends t to rank dst of this replica (0..P-1; a dst outside that names no rank and is refused). In rendezvous
 * mode (the default, as NCCL) it returns only once dst has posted the matching receive; in eager mode it may
 * return at once. Messages match on (source, destination, tag). */
void pp_send(pp_rank *r, pp_tensor *t, int dst, int tag);

/* Receives the activation-shaped tensor that rank src sends with this tag. */
pp_tensor *pp_recv(pp_rank *r, int src, int tag);

/* Starts a send and returns at once; the send completes in pp_wait(). t must not change until then. */
pp_request *pp_isend(pp_rank *r, pp_tensor *t, int dst, int tag);

/* Starts a receive and returns at once; *out is the tensor it fills, usable only after pp_wait(). */
pp_request *pp_irecv(pp_rank *r, int src, int tag, pp_tensor **out);

/* Blocks until req (a send, a receive or a gradient reduce) completes. Each request is waited exactly once. */
void pp_wait(pp_rank *r, pp_request *req);

/* Blocks until all n requests complete (in any order). */
void pp_waitall(pp_rank *r, pp_request **reqs, int n);

/* Between pp_group_start() and pp_group_end(), pp_send() and pp_recv() only post their operation (a tensor from
 * pp_recv() is filled at pp_group_end()), and pp_group_end() waits for all of them, like ncclGroupStart/End:
 * how a rank sends to one neighbour while receiving from another without either side blocking first. */
void pp_group_start(pp_rank *r);
void pp_group_end(pp_rank *r);

/* ---- tensor parallelism: your own blocks (lab 08) ------------------------------------------------------ */

/* With --tp T every stage is cut over T ranks, its shards: a run is T*D*P ranks, and each (d, p) above has T of
 * them, which run the same step function, the same ops on the same micro-batches, each on its part of every
 * block. The model's block is a small GPT's, two residual halves, each a LayerNorm, a linear, a step of its own, a
 * linear and a bias:
 *     x1 = x + Wo attn(LN1(x)) + bo             causal multi-head self-attention over H heads of width h/H, its
 *                                               queries, keys and values LN1(x) Wq + bq, LN1(x) Wk, LN1(x) Wv + bv
 *     y  = x1 + W2 gelu(W1 LN2(x1) + b1) + b2   the MLP, W1 of h x F, F the FFN width (4 x --width)
 * Shard t holds whole heads, heads t*H/T .. (t+1)*H/T-1: their columns of Wq, bq, Wk, Wv and bv, and the same rows
 * of Wo; and columns t*F/T .. (t+1)*F/T-1 of W1 and b1 and the same rows of W2. LN1, LN2, bo, b2, the embedding
 * and the head are whole on every shard. Messages, reduces and everything above stay among the ranks of one shard.
 *
 * In the tpblock and tpgrid labs the schedule writes the blocks itself: a forward is pp_stage_forward_begin, then each block
 * of the stage in turn (your function, made of the calls below), then pp_stage_forward_end; a backward is
 * pp_stage_backward_begin, the blocks from the last to the first, and pp_stage_backward_end. The library charges
 * the op its usual cost plus what its shards' sums cost, as one F or B, and keeps the stash as pp_stage_forward
 * would. In between, only the block calls may run.
 *
 * A tensor of a block is, on the T shards together, one of three things: whole (every shard holds the same
 * values), split (every shard holds its own columns of it) or partial (every shard holds a part, and the value is
 * the sum of the parts). Which of the three each tensor of your block is follows from the parameters a shard
 * holds, and working it out is lab 08's part 1 (docs/08-tensor.md asks the questions). The library follows each
 * tensor's kind, and the grader reports the first call given one that does not fit. */
typedef struct pp_block pp_block; /* block i of the stage, during one micro-batch's forward or backward */

/* t: this rank's shard, 0..T-1. */
int pp_rank_shard(const pp_rank *r);
/* T: the shards of every stage (--tp; 1 unless the run cuts its stages). */
int pp_rank_shards(const pp_rank *r);
/* The blocks of this rank's chunk: what a forward runs between its begin and its end. */
int pp_stage_blocks(const pp_rank *r, int chunk);

/* pp_stage_forward, opened: the same arguments and checks, the embedding run on virtual stage 0. Returns block
 * 0's input (whole). *stash is the forward's, as pp_stage_forward's; its blocks are pp_stash_block's. Only the
 * tpblock and tpgrid labs run a stage this way; a forward or backward of it must end before another op or message starts. */
pp_tensor *pp_stage_forward_begin(pp_rank *r, int chunk, int mb, pp_tensor *x, pp_stash **stash);
/* Ends the forward opened on stash with x, the last block's output (whole): runs the head and the loss on the last
 * virtual stage and returns what pp_stage_forward would (the output to send on, or the 1x1 loss). */
pp_tensor *pp_stage_forward_end(pp_rank *r, pp_stash *stash, pp_tensor *x);
/* pp_stage_backward, opened on a stash whose forward ended: dy as pp_stage_backward takes it; runs the head's
 * backward on the last virtual stage. Returns the gradient of the last block's output (whole). */
pp_tensor *pp_stage_backward_begin(pp_rank *r, pp_stash *stash, pp_tensor *dy);
/* Ends the backward opened on stash with dy, the gradient of block 0's input (whole): returns the dx
 * pp_stage_backward would (NULL on virtual stage 0, whose embedding takes it). Free the stash after, as ever. */
pp_tensor *pp_stage_backward_end(pp_rank *r, pp_stash *stash, pp_tensor *dy);
/* Block i (0..pp_stage_blocks-1) of the stage whose forward or backward is open on stash. */
pp_block *pp_stash_block(pp_rank *r, pp_stash *stash, int i);
/* t: the shard of the rank whose block b is, as pp_rank_shard gives it, for code that holds the block and not the
 * rank (-1 for NULL). */
int pp_block_shard(const pp_block *b);

/* The block's layers, forward, in two halves. Each keeps its input in the stash for its backward (counted
 * activation memory: call each once per block). n is the micro-batch's tokens, h the width, T the shards. */
/* The attention half. LayerNorm of x (n x h) with LN1's gain and bias: returns n x h. */
pp_tensor *pp_block_ln1(pp_block *b, pp_tensor *x);
/* ln Wq + bq, ln Wk, ln Wv + bv with this shard's heads' columns of Wq, bq, Wk, Wv and bv (ln: n x h): returns
 * qkv, n x 3h/T, the shard's queries, keys and values one after the other (each n x h/T). */
pp_tensor *pp_block_qkv(pp_block *b, pp_tensor *ln);
/* Causal self-attention of each of this shard's heads over its own queries, keys and values (qkv: n x 3h/T), each
 * token attending to the tokens of its sequence up to itself: returns a, n x h/T, the heads' outputs side by side. */
pp_tensor *pp_block_attention(pp_block *b, pp_tensor *qkv);
/* a Wo with this shard's rows of Wo (a: n x h/T): returns n x h, without bo. */
pp_tensor *pp_block_proj(pp_block *b, pp_tensor *a);
/* y += bo, in place (bo is whole on every shard). */
void pp_block_proj_bias(pp_block *b, pp_tensor *y);
/* The MLP half. LayerNorm of x (n x h, the attention half's result) with LN2's gain and bias: returns n x h. */
pp_tensor *pp_block_ln2(pp_block *b, pp_tensor *x);
/* ln W1 + b1 with this shard's columns of W1 and b1 (ln: n x h): returns h1, n x F/T. */
pp_tensor *pp_block_linear1(pp_block *b, pp_tensor *ln);
/* gelu(h1), value by value: returns a1, the same shape. */
pp_tensor *pp_block_gelu(pp_block *b, pp_tensor *h1);
/* a1 W2 with this shard's rows of W2 (a1: n x F/T): returns n x h, without b2. */
pp_tensor *pp_block_linear2(pp_block *b, pp_tensor *a1);
/* y += b2, in place (b2 is whole on every shard). */
void pp_block_bias2(pp_block *b, pp_tensor *y);
/* Both halves. y += x, in place (n x h both): a half's residual, or in the backward the residual's gradient. It
 * counts for the half whose layer ran last. */
void pp_block_residual(pp_block *b, pp_tensor *y, pp_tensor *x);
/* Replaces t (n x h, or one of the shard's own widths: n x 3h/T, n x h/T, n x F/T) by the sum of the T shards' t,
 * in place, added in shard order, so that every shard gets the same bits: an all-reduce over the stage's shards,
 * blocking until all T called it (the k-th call of each shard meets the k-th of the others). It costs virtual
 * time inside the open op: a ring over the shards' link, 2(T-1) steps of --tp-alpha plus 2(T-1)/T of t's bytes at
 * --tp-beta (pp_rank_shards = 1: nothing). */
void pp_block_allreduce(pp_block *b, pp_tensor *t);

/* The block's layers, backward, from the gradient of each layer's output (run the forward's layers in reverse,
 * the MLP half first; each adds its weight gradients). */
/* The MLP half. From dy (n x h, the gradient of W2's output): adds a1^T dy to this shard's rows of W2's gradient,
 * returns d a1 = dy W2^T, n x F/T. */
pp_tensor *pp_block_linear2_backward(pp_block *b, pp_tensor *dy);
/* Adds dy's column sums to b2's gradient. */
void pp_block_bias2_backward(pp_block *b, pp_tensor *dy);
/* From d a1: returns d h1 = gelu'(h1) * d a1, the same shape. */
pp_tensor *pp_block_gelu_backward(pp_block *b, pp_tensor *da1);
/* From d h1 (n x F/T): adds ln^T dh1 and dh1's column sums to this shard's columns of W1's and b1's gradients,
 * returns dh1 W1^T with those columns, n x h. */
pp_tensor *pp_block_linear1_backward(pp_block *b, pp_tensor *dh1);
/* From d ln (n x h, the gradient of LN2's output): adds LN2's gradients, returns the gradient of the MLP half's
 * input through LN2, n x h (the residual's share is pp_block_residual's). */
pp_tensor *pp_block_ln2_backward(pp_block *b, pp_tensor *dln);
/* The attention half. From dy (n x h, the gradient of Wo's output): adds a^T dy to this shard's rows of Wo's
 * gradient, returns d a = dy Wo^T, n x h/T. */
pp_tensor *pp_block_proj_backward(pp_block *b, pp_tensor *dy);
/* Adds dy's column sums to bo's gradient. */
void pp_block_proj_bias_backward(pp_block *b, pp_tensor *dy);
/* From d a (n x h/T): returns the gradients of this shard's heads' queries, keys and values through their
 * attention, n x 3h/T, laid out as pp_block_qkv returns them. */
pp_tensor *pp_block_attention_backward(pp_block *b, pp_tensor *da);
/* From d qkv (n x 3h/T): adds ln^T times each part to this shard's columns of Wq's, Wk's and Wv's gradients (and
 * the column sums of the query and value parts to bq's and bv's), returns the sum of the three parts times their
 * weights transposed, n x h. */
pp_tensor *pp_block_qkv_backward(pp_block *b, pp_tensor *dqkv);
/* From d ln (n x h, the gradient of LN1's output): adds LN1's gradients, returns the gradient of the block's input
 * through LN1, n x h (the residual's share is pp_block_residual's). */
pp_tensor *pp_block_ln1_backward(pp_block *b, pp_tensor *dln);

/* ---- misc ---------------------------------------------------------------------------------------------- */

/* Stops the run with a message of yours (printf format), e.g. for a configuration your schedule refuses. */
void pp_fail(pp_rank *r, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* The library version string, "MAJOR.MINOR.PATCH": PP_VERSION as the library was built (a program built
 * against another pp.h can compare the two). */
const char *pp_version(void);

#ifdef __cplusplus
}
#endif
#endif /* PP_H */
