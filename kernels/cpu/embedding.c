/* embedding.c: token embedding lookup and its gradient (a scatter-add into the table). */
#include <stddef.h>
#include <string.h>

#include "cpu/cpu_kernels.h"

/* out[i,:] = table[tokens[i],:] (n x h); tokens must lie inside the table. */
PP_CPU_CLONES void pp__cpu_embedding_fwd(void *ctx, float *out, const float *table, const int *tokens, int n, int h) {
    for (int i = 0; i < n; i++) memcpy(out + (size_t)i * h, table + (size_t)tokens[i] * h, (size_t)h * sizeof(float));
}

/* dtable[tokens[i],:] += dout[i,:]; accumulates, so the caller zeroes dtable once per step. */
PP_CPU_CLONES void pp__cpu_embedding_bwd(void *ctx, float *dtable, const float *dout, const int *tokens, int n, int h) {
    /* Rows in order, so a token seen twice always sums its gradients in the same order. */
    for (int i = 0; i < n; i++) {
        float *row = dtable + (size_t)tokens[i] * h;
        const float *d = dout + (size_t)i * h;
        for (int j = 0; j < h; j++) row[j] += d[j];
    }
}
