/* elementwise.c: the small vector kernels: bias add and its gradient, axpy, fill. */
#include <stddef.h>

#include "cpu/cpu_kernels.h"

/* x[i,j] += bias[j] (n x c). */
PP_CPU_CLONES void pp__cpu_bias_add(void *ctx, float *x, const float *bias, int n, int c) {
    for (int i = 0; i < n; i++) {
        float *xi = x + (size_t)i * c;
        for (int j = 0; j < c; j++) xi[j] += bias[j];
    }
}

/* db[j] += sum_i dout[i,j] (n x c). */
PP_CPU_CLONES void pp__cpu_bias_grad(void *ctx, float *db, const float *dout, int n, int c) {
    /* Column sums row by row: a fixed order, and the inner loop walks memory contiguously. */
    for (int i = 0; i < n; i++) {
        const float *di = dout + (size_t)i * c;
        for (int j = 0; j < c; j++) db[j] += di[j];
    }
}

/* y += alpha * x over count elements. */
PP_CPU_CLONES void pp__cpu_axpy(void *ctx, float *y, float alpha, const float *x, int count) {
    for (int i = 0; i < count; i++) y[i] += alpha * x[i];
}

/* x = value over count elements. */
PP_CPU_CLONES void pp__cpu_fill(void *ctx, float *x, float value, int count) {
    for (int i = 0; i < count; i++) x[i] = value;
}
