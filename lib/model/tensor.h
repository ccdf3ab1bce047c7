/* tensor.h: the tensor behind pp.h's opaque handle: a 2-D row-major block of device memory that carries the
 * virtual time at which its contents became ready. */
#ifndef PP_TENSOR_H
#define PP_TENSOR_H

#include <stddef.h>
#include "backend.h"
#include "pp.h"

typedef enum { PP_F32 = 0, PP_I32 = 1 } pp_dtype;

/* What the T shards' copies of a tensor are together (pp.h, tensor parallelism): the same values on each, each
 * shard's own columns, or parts whose sum is the value. Every tensor is whole unless a block call made it else. */
typedef enum { PP_KIND_WHOLE = 0, PP_KIND_SPLIT, PP_KIND_PARTIAL } pp_kind;

struct pp_tensor {
    int rows, cols;          /* shape (rows, cols), row-major */
    pp_dtype dtype;
    size_t bytes;
    void *data;              /* on the backend's device */
    pp_backend *be;          /* who owns data */
    double ready;            /* virtual time at which the contents are valid */
    int pending;             /* 1 while a nonblocking receive has not been waited */
    pp_kind kind;            /* under tensor parallelism: whole, split or partial over the shards */
    int owner;               /* rank that made it */
    struct pp_tensor *next;  /* the arena list it lives on (freed at the end of the step) */
    /* early release (pp.h, "Ownership"): a received or sent tensor's memory goes once nothing needs it, not at
     * the end of the step, so memory follows the schedule instead of growing with M */
    int handed;              /* a stage op's output or a receive's: what pp.h's early release applies to */
    int received, sent;      /* it came from a receive; it was sent at least once */
    int uses;                /* live stashes holding it as a forward's x or a backward's dy */
    int sends_pending;       /* posted sends of it not completed yet */
    /* what freed its memory early (NULL while it has it), to name it when the tensor is used after: the send
     * that completed last, or the stash whose backward finished; both live to the end of the step, as this does */
    const pp_request *released_by_send;
    const pp_stash *released_by_stash;
};

/* A list of tensors freed together: a rank's per-step arena, or a model's parameters. */
typedef struct pp_arena {
    pp_tensor *head;
    size_t live_bytes;
} pp_arena;

/* Makes a zeroed rows x cols tensor on be, owned by arena (NULL: the caller frees it with pp__tensor_free). */
pp_tensor *pp__tensor_new(pp_backend *be, pp_arena *arena, int rows, int cols, pp_dtype dtype, int owner);
/* The same, fp32, for an operation's output: its contents are undefined until that operation, which must write
 * every element (a GEMM with beta 0, a forward, an overwriting backward, a receive). */
pp_tensor *pp__tensor_new_output(pp_backend *be, pp_arena *arena, int rows, int cols, int owner);
/* Stash `by` no longer holds t (its backward finished: drop_use), or send `by` of t completed (send_done): when t
 * was received or sent and nothing holds it any more, its memory is freed now and `by` recorded (nothing is
 * formatted on this path; pp__tensor_released_why says it on a later use). The struct stays until its arena is
 * cleared. */
void pp__tensor_drop_use(pp_tensor *t, const pp_stash *by);
void pp__tensor_send_done(pp_tensor *t, const pp_request *by);
/* Frees a tensor made with a NULL arena. */
void pp__tensor_free(pp_tensor *t);
/* Frees every tensor of the arena. */
void pp__arena_clear(pp_arena *a);
/* Copies the tensor's contents to host memory dst (t->bytes bytes). */
void pp__tensor_to_host(const pp_tensor *t, void *dst);
/* Copies host memory src (t->bytes bytes) into the tensor. */
void pp__tensor_from_host(pp_tensor *t, const void *src);
/* "64x32 f32": shape and dtype for messages; buf must hold 48 bytes. */
const char *pp__tensor_describe(const pp_tensor *t, char *buf, size_t len);

#endif /* PP_TENSOR_H */
