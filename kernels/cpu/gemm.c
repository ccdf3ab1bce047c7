/* gemm.c: the CPU matrix multiply, row-major, through OpenBLAS's cblas_sgemm. The backend sets OpenBLAS to
 * one thread at its first open, so each rank's GEMMs run on that rank's own thread, reproducibly. */
#include <cblas.h>

#include "cpu/cpu_kernels.h"

/* C[m,n] = alpha * op(A) * op(B) + beta * C, row-major with row strides lda/ldb/ldc; beta == 0 ignores C. */
void pp__cpu_gemm(void *ctx, int tA, int tB, int m, int n, int k, float alpha, const float *A, int lda,
                  const float *B, int ldb, float beta, float *C, int ldc) {
    if (m <= 0 || n <= 0) return;
    cblas_sgemm(CblasRowMajor, tA ? CblasTrans : CblasNoTrans, tB ? CblasTrans : CblasNoTrans, m, n, k, alpha, A,
                lda, B, ldb, beta, C, ldc);
}
