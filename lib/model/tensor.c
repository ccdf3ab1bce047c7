/* tensor.c: 2-D device tensors and the arenas that free them together. */
#include "tensor.h"

#include <stdio.h>

#include "error.h"

static size_t dtype_size(pp_dtype dt) { return dt == PP_I32 ? sizeof(int) : sizeof(float); }

static pp_tensor *tensor_new(pp_backend *be, pp_arena *arena, int rows, int cols, pp_dtype dtype, int owner,
                             int zeroed) {
    PP_ASSERT(rows > 0 && cols > 0);
    pp_tensor *t = pp__xcalloc(1, sizeof *t);
    t->rows = rows;
    t->cols = cols;
    t->dtype = dtype;
    t->bytes = (size_t)rows * (size_t)cols * dtype_size(dtype);
    t->be = be;
    t->data = zeroed || !be->ops->alloc_uninit ? be->ops->alloc(be->ctx, t->bytes) : be->ops->alloc_uninit(be->ctx, t->bytes);
    t->owner = owner;
    if (arena) {
        t->next = arena->head;
        arena->head = t;
        arena->live_bytes += t->bytes;
    }
    return t;
}

pp_tensor *pp__tensor_new(pp_backend *be, pp_arena *arena, int rows, int cols, pp_dtype dtype, int owner) {
    return tensor_new(be, arena, rows, cols, dtype, owner, 1);
}

pp_tensor *pp__tensor_new_output(pp_backend *be, pp_arena *arena, int rows, int cols, int owner) {
    return tensor_new(be, arena, rows, cols, PP_F32, owner, 0);
}

/* 1 when t's memory may go now: handed out, received or sent, and held by no stash and no pending send. */
static int releasable(const pp_tensor *t) {
    return t->handed && t->uses == 0 && t->sends_pending == 0 && (t->received || t->sent) && t->data;
}

static void release(pp_tensor *t) {
    t->be->ops->free(t->be->ctx, t->data);
    t->data = NULL;
}

void pp__tensor_drop_use(pp_tensor *t, const pp_stash *by) {
    PP_ASSERT(t->uses > 0);
    t->uses--;
    if (releasable(t)) release(t), t->released_by_stash = by;
}

void pp__tensor_send_done(pp_tensor *t, const pp_request *by) {
    PP_ASSERT(t->sends_pending > 0);
    t->sends_pending--;
    if (releasable(t)) release(t), t->released_by_send = by;
}

void pp__tensor_free(pp_tensor *t) {
    if (!t) return;
    if (t->data) t->be->ops->free(t->be->ctx, t->data);
    free(t);
}

void pp__arena_clear(pp_arena *a) {
    pp_tensor *t = a->head;
    while (t) {
        pp_tensor *next = t->next;
        pp__tensor_free(t);
        t = next;
    }
    a->head = NULL;
    a->live_bytes = 0;
}

void pp__tensor_to_host(const pp_tensor *t, void *dst) { t->be->ops->to_host(t->be->ctx, dst, t->data, t->bytes); }

void pp__tensor_from_host(pp_tensor *t, const void *src) {
    t->be->ops->from_host(t->be->ctx, t->data, src, t->bytes);
}

const char *pp__tensor_describe(const pp_tensor *t, char *buf, size_t len) {
    snprintf(buf, len, "%dx%d %s", t->rows, t->cols, t->dtype == PP_I32 ? "i32" : "f32");
    return buf;
}
