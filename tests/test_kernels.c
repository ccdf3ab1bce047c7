/* test_kernels.c: every kernel of a compute backend against an independent double-precision reference.
 * Forwards are compared with a double forward written here; backwards with central finite differences of that
 * double forward (step 1e-5, so the reference itself is exact to ~1e-10 and the whole difference is the fp32
 * kernel's rounding). Kernels are called through the ops table on device buffers, so the suite runs unchanged on
 * another backend: PP_TEST_BACKEND=cuda selects one (default cpu).
 *
 * Tolerances are |got - ref| <= atol + rtol*|ref|, each stated beside its check with the worst |diff| measured
 * on the cpu backend (OpenBLAS, one thread); they sit roughly 10x above that noise, far below any real mistake
 * (a wrong sign, a missing term or a factor 1/n are errors of order 1e-2 .. 1). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <strings.h>
#include <unistd.h>

#include "backend.h"
#include "cpu/cpu_kernels.h"
#include "testutil.h"

static pp_backend *be;
static const pp_backend_ops *K;
static void *C;

/* Device buffers and host scratch made by a test, released after it. */
static void *dev_ptrs[256], *host_ptrs[256];
static int ndev, nhost;

/* Opens the backend called name (NULL or empty: cpu) for a test. A cuda backend that cannot open (no device
 * here, or a build without it) skips the test as a machine without a GPU must; any other backend that cannot open
 * is a failure. */
static void open_backend(const char *name) {
    char err[256] = "";
    if (!name || !*name || strcmp(name, "cpu") == 0)
        be = pp__backend_cpu_open(0, 1, err, sizeof err);
    else
        be = pp__backend_open(name, 0, 1, err, sizeof err);
    if (!be && name && !strcmp(name, "cuda")) test_skip_no_gpu("backend 'cuda' not usable here: %s", err);
    cr_assert(be, "backend '%s' did not open: %s", name ? name : "cpu", err);
    K = be->ops;
    C = be->ctx;
}

/* The kernels suite runs on the backend PP_TEST_BACKEND names; the blas suite, OpenBLAS's, on the cpu one. */
static void setup(void) { open_backend(getenv("PP_TEST_BACKEND")); }
static void setup_cpu(void) { open_backend("cpu"); }

static void teardown(void) {
    if (!be) return;
    for (int i = 0; i < ndev; i++) K->free(C, dev_ptrs[i]);
    for (int i = 0; i < nhost; i++) free(host_ptrs[i]);
    ndev = nhost = 0;
    pp__backend_close(be);
    be = NULL;
}

TestSuite(kernels, .init = setup, .fini = teardown, .timeout = 60);
TestSuite(blas, .init = setup_cpu, .fini = teardown, .timeout = 120);

static void *host_alloc(size_t bytes) {
    cr_assert(nhost < 256, "test uses too many host buffers");
    void *p = calloc(1, bytes ? bytes : 1);
    cr_assert(p, "out of host memory");
    return host_ptrs[nhost++] = p;
}

static float *hf(size_t n) { return host_alloc(n * sizeof(float)); }
static double *hd(size_t n) { return host_alloc(n * sizeof(double)); }

static float *rand_f(tu_rng *r, size_t n, double lo, double hi) {
    float *x = hf(n);
    tu_fill_uniform(r, x, n, lo, hi);
    return x;
}

static double *to_d(const float *x, size_t n) {
    double *d = hd(n);
    for (size_t i = 0; i < n; i++) d[i] = x[i];
    return d;
}

static void *dev_alloc(size_t bytes) {
    cr_assert(ndev < 256, "test uses too many device buffers");
    return dev_ptrs[ndev++] = K->alloc(C, bytes);
}

static float *dev_f(const float *host, size_t n) {
    float *d = dev_alloc(n * sizeof(float));
    if (host) K->from_host(C, d, host, n * sizeof(float));
    return d;
}

static int *dev_i(const int *host, size_t n) {
    int *d = dev_alloc(n * sizeof(int));
    K->from_host(C, d, host, n * sizeof(int));
    return d;
}

/* Device to a fresh host array, after the backend's queued work. */
static float *get_f(const float *d, size_t n) {
    float *h = hf(n);
    K->sync(C);
    K->to_host(C, h, d, n * sizeof(float));
    return h;
}

/* A host array of n copies of v (to prefill outputs that a kernel must overwrite or accumulate into). */
static float *const_f(size_t n, float v) {
    float *x = hf(n);
    for (size_t i = 0; i < n; i++) x[i] = v;
    return x;
}

/* Central differences of the scalar loss(ud) with respect to x[0..n-1], in double. */
#define FD_STEP 1e-5
static void fd_grad(double *x, size_t n, double (*loss)(void *), void *ud, double *grad) {
    for (size_t i = 0; i < n; i++) {
        double s = x[i];
        x[i] = s + FD_STEP;
        double lp = loss(ud);
        x[i] = s - FD_STEP;
        double lm = loss(ud);
        x[i] = s;
        grad[i] = (lp - lm) / (2 * FD_STEP);
    }
}

static double dot_d(const double *a, const double *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* ---- double-precision reference forwards ---------------------------------------------------------------- */

static void gemm_d(int tA, int tB, int m, int n, int k, double alpha, const double *A, int lda, const double *B,
                   int ldb, double beta, double *Cm, int ldc) {
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int p = 0; p < k; p++)
                s += (tA ? A[(size_t)p * lda + i] : A[(size_t)i * lda + p]) *
                     (tB ? B[(size_t)j * ldb + p] : B[(size_t)p * ldb + j]);
            double *c = &Cm[(size_t)i * ldc + j];
            *c = alpha * s + (beta == 0 ? 0 : beta * *c);
        }
}

static void layernorm_d(double *out, double *mean, double *rstd, const double *x, const double *g, const double *b,
                        int n, int h) {
    for (int i = 0; i < n; i++) {
        const double *xi = x + (size_t)i * h;
        double mu = 0, var = 0;
        for (int j = 0; j < h; j++) mu += xi[j];
        mu /= h;
        for (int j = 0; j < h; j++) var += (xi[j] - mu) * (xi[j] - mu);
        double r = 1.0 / sqrt(var / h + 1e-5);
        for (int j = 0; j < h; j++) out[(size_t)i * h + j] = (xi[j] - mu) * r * g[j] + b[j];
        if (mean) mean[i] = mu;
        if (rstd) rstd[i] = r;
    }
}

static double gelu_d(double x) { return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }

static double xent_d(double *probs, const double *logits, const int *targets, int n, int V) {
    double loss = 0;
    for (int i = 0; i < n; i++) {
        const double *li = logits + (size_t)i * V;
        double mx = li[0], s = 0;
        for (int j = 1; j < V; j++) mx = fmax(mx, li[j]);
        for (int j = 0; j < V; j++) s += exp(li[j] - mx);
        if (probs)
            for (int j = 0; j < V; j++) probs[(size_t)i * V + j] = exp(li[j] - mx) / s;
        loss += log(s) - (li[targets[i]] - mx);
    }
    return loss / n;
}

/* ---- gemm --------------------------------------------------------------------------------------------------- */

/* All four transpositions, padded row strides (ld > columns), alpha and beta; the padding of C must survive. */
static void check_gemm(int tA, int tB, int m, int n, int k, float alpha, float beta, unsigned seed) {
    tu_rng r = {seed};
    int ra = tA ? k : m, ca = tA ? m : k, rb = tB ? n : k, cb = tB ? k : n;
    int lda = ca + 3, ldb = cb + 2, ldc = n + 1;
    float *A = rand_f(&r, (size_t)ra * lda, -1, 1), *B = rand_f(&r, (size_t)rb * ldb, -1, 1);
    float *C0 = rand_f(&r, (size_t)m * ldc, -1, 1);
    if (beta == 0)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) C0[(size_t)i * ldc + j] = NAN; /* beta == 0 must not read C */
    float *dC = dev_f(C0, (size_t)m * ldc);
    K->gemm(C, tA, tB, m, n, k, alpha, dev_f(A, (size_t)ra * lda), lda, dev_f(B, (size_t)rb * ldb), ldb, beta, dC,
            ldc);
    float *got = get_f(dC, (size_t)m * ldc);
    double *ref = to_d(C0, (size_t)m * ldc);
    gemm_d(tA, tB, m, n, k, alpha, to_d(A, (size_t)ra * lda), lda, to_d(B, (size_t)rb * ldb), ldb, beta, ref, ldc);
    char what[96];
    snprintf(what, sizeof what, "gemm tA=%d tB=%d %dx%dx%d alpha=%g beta=%g", tA, tB, m, n, k, alpha, beta);
    /* k products of magnitude <= 1, so the rounding grows with k: atol 1e-7 * k. Measured worst |diff|
     * 3.4e-7 at k = 9 and 3.7e-6 at k = 65 (there |C| reaches 5; worst |diff| / allowance 0.15). */
    expect_close_arr_d(what, got, ref, (size_t)m * ldc, 1e-7 * k, 1e-5);
    for (int i = 0; i < m; i++)
        cr_expect(memcmp(&got[(size_t)i * ldc + n], &C0[(size_t)i * ldc + n], sizeof(float)) == 0,
                  "%s wrote into the padding of C row %d (column %d, beyond n)", what, i, n);
}

Test(kernels, gemm_transpositions) {
    /* run by blas/every_core_this_cpu_runs under one forced kernel each: prove that kernel is the one tested */
    const char *want = getenv("PP_TEST_EXPECT_CORE");
    if (want && !strcmp(K->name, "cpu"))
        cr_assert(!strcasecmp(openblas_get_corename(), want), "OPENBLAS_CORETYPE=%s ran the %s kernel", want,
                  openblas_get_corename());
    for (int tA = 0; tA < 2; tA++)
        for (int tB = 0; tB < 2; tB++) {
            check_gemm(tA, tB, 5, 7, 9, 1.0f, 0.0f, 11 + tA * 2 + tB);
            check_gemm(tA, tB, 5, 7, 9, 0.7f, -0.4f, 21 + tA * 2 + tB);
            check_gemm(tA, tB, 33, 17, 65, -1.3f, 1.0f, 31 + tA * 2 + tB);
            /* the model's shapes, past the kernels' block sizes, with edges that fit no register tile */
            check_gemm(tA, tB, 67, 259, 131, 1.0f, 1.0f, 41 + tA * 2 + tB);
            check_gemm(tA, tB, 64, 1024, 256, 1.0f, 0.0f, 51 + tA * 2 + tB);
        }
}

/* Each OpenBLAS kernel this CPU can run, forced in a child of this suite, passes the GEMM test: whichever kernel
 * pplab picks (or a user forces), the GEMM is right. */
Test(blas, every_core_this_cpu_runs) {
    static const char *const cores[] = {"Prescott", "Sandybridge", "Haswell", "SkylakeX"};
    int tried = 0;
    for (size_t i = 0; i < sizeof cores / sizeof cores[0]; i++) {
        if (pp__cpu_blas_core_isa(cores[i]) > pp__cpu_isa()) continue;
        char cmd[512];
        /* /proc/self/exe is the shell by the time it runs the command: name this binary instead; without
         * BXFI_MAP, the child runs as a test binary of its own, not as a worker of this one */
        char self[256];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        cr_assert(n > 0, "cannot read /proc/self/exe");
        self[n] = 0;
        snprintf(cmd, sizeof cmd,
                 "env -u BXFI_MAP PP_TEST_BACKEND=cpu OPENBLAS_CORETYPE=%s PP_TEST_EXPECT_CORE=%s '%s' "
                 "--filter='kernels/gemm_transpositions' -j1 "
                 ">/dev/null 2>&1",
                 cores[i], cores[i], self);
        cr_expect(system(cmd) == 0, "the GEMM test fails with OPENBLAS_CORETYPE=%s: %s", cores[i], cmd);
        tried++;
    }
    cr_assert(tried >= 1, "no OpenBLAS kernel listed runs on this CPU");
}

/* The replacement rule: a generic kernel on a CPU with wider vectors is replaced by the best of that width, a
 * kernel as wide as the CPU (or one pplab does not know) is left alone. */
Test(blas, better_core_rule) {
    cr_expect_str_eq(pp__cpu_blas_better_core("Prescott", PP_ISA_AVX512), "SkylakeX");
    cr_expect_str_eq(pp__cpu_blas_better_core("Core2", PP_ISA_AVX2), "Haswell");
    cr_expect_str_eq(pp__cpu_blas_better_core("Sandybridge", PP_ISA_AVX2), "Haswell");
    cr_expect_str_eq(pp__cpu_blas_better_core("haswell", PP_ISA_AVX512), "SkylakeX");
    cr_expect_null(pp__cpu_blas_better_core("SkylakeX", PP_ISA_AVX512));
    cr_expect_null(pp__cpu_blas_better_core("Zen", PP_ISA_AVX2));
    cr_expect_null(pp__cpu_blas_better_core("Cooperlake", PP_ISA_AVX2)); /* never a downgrade */
    cr_expect_null(pp__cpu_blas_better_core("Prescott", PP_ISA_SSE));
    cr_expect_null(pp__cpu_blas_better_core("NEOVERSEN1", PP_ISA_UNKNOWN));
    cr_expect_null(pp__cpu_blas_better_core("SomeFutureCore", PP_ISA_AVX512));
    cr_expect_null(pp__cpu_blas_better_core(NULL, PP_ISA_AVX512));
}

/* ---- embedding ---------------------------------------------------------------------------------------------- */

typedef struct {
    double *table, *w;
    const int *tok;
    int n, h;
} emb_ud;

static double emb_loss(void *p) {
    emb_ud *u = p;
    double s = 0;
    for (int i = 0; i < u->n; i++) s += dot_d(u->table + (size_t)u->tok[i] * u->h, u->w + (size_t)i * u->h, u->h);
    return s;
}

Test(kernels, embedding) {
    enum { V = 6, H = 5, N = 8 };
    static const int tok[N] = {1, 3, 1, 0, 5, 3, 1, 2}; /* token 1 three times, 3 twice, 4 never */
    tu_rng r = {7};
    float *table = rand_f(&r, V * H, -1, 1), *w = rand_f(&r, N * H, -1, 1), *d0 = rand_f(&r, V * H, -1, 1);
    int *dtok = dev_i(tok, N);
    float *dout = dev_f(NULL, N * H);
    K->embedding_fwd(C, dout, dev_f(table, V * H), dtok, N, H);
    float *out = get_f(dout, N * H);
    for (int i = 0; i < N; i++)
        cr_expect(memcmp(out + i * H, table + tok[i] * H, H * sizeof(float)) == 0,
                  "embedding_fwd row %d is not table row %d", i, tok[i]);

    float *ddt = dev_f(d0, V * H); /* accumulates onto what is there */
    K->embedding_bwd(C, ddt, dev_f(w, N * H), dtok, N, H);
    emb_ud u = {to_d(table, V * H), to_d(w, N * H), tok, N, H};
    double *ref = hd(V * H);
    fd_grad(u.table, V * H, emb_loss, &u, ref);
    for (int i = 0; i < V * H; i++) ref[i] += d0[i];
    /* at most three float adds per element: measured worst 1.5e-7 */
    expect_close_arr_d("embedding_bwd dtable (+=, repeated tokens)", get_f(ddt, V * H), ref, V * H, 1e-6, 1e-6);
}

/* ---- layernorm ---------------------------------------------------------------------------------------------- */

typedef struct {
    double *x, *g, *b, *w, *out;
    int n, h;
} ln_ud;

static double ln_loss(void *p) {
    ln_ud *u = p;
    layernorm_d(u->out, NULL, NULL, u->x, u->g, u->b, u->n, u->h);
    return dot_d(u->out, u->w, (size_t)u->n * u->h);
}

Test(kernels, layernorm) {
    enum { N = 6, H = 16 };
    tu_rng r = {3};
    float *x = rand_f(&r, N * H, -1, 1), *g = rand_f(&r, H, 0.5, 1.5), *b = rand_f(&r, H, -0.5, 0.5);
    float *w = rand_f(&r, N * H, -1, 1), *dg0 = rand_f(&r, H, -1, 1), *db0 = rand_f(&r, H, -1, 1);
    for (int j = 0; j < H; j++) x[j] += 50.0f; /* a row with a large mean: the variance must not cancel */
    float *dx_ = dev_f(x, N * H), *dg_ = dev_f(g, H), *dm = dev_f(NULL, N), *dr = dev_f(NULL, N);
    float *dy = dev_f(NULL, N * H);
    K->layernorm_fwd(C, dy, dm, dr, dx_, dg_, dev_f(b, H), N, H);

    ln_ud u = {to_d(x, N * H), to_d(g, H), to_d(b, H), to_d(w, N * H), hd(N * H), N, H};
    double *ref = hd(N * H), *rmean = hd(N), *rrstd = hd(N);
    layernorm_d(ref, rmean, rrstd, u.x, u.g, u.b, N, H);
    /* measured worst: out 1.8e-7, mean 1.7e-6 (half an ulp at 50, hence rtol), rstd 9.6e-8 */
    expect_close_arr_d("layernorm_fwd out", get_f(dy, N * H), ref, N * H, 1e-6, 1e-5);
    expect_close_arr_d("layernorm_fwd mean", get_f(dm, N), rmean, N, 1e-6, 1e-6);
    expect_close_arr_d("layernorm_fwd rstd", get_f(dr, N), rrstd, N, 1e-6, 1e-5);

    /* combined backward: dx overwrites (prefilled with junk), dg and db accumulate */
    float *ddx = dev_f(const_f(N * H, 1e3f), N * H), *ddg = dev_f(dg0, H), *ddb = dev_f(db0, H);
    float *dw = dev_f(w, N * H);
    K->layernorm_bwd(C, ddx, ddg, ddb, dw, dx_, dm, dr, dg_, N, H);
    double *fx = hd(N * H), *fg = hd(H), *fb = hd(H);
    fd_grad(u.x, N * H, ln_loss, &u, fx);
    fd_grad(u.g, H, ln_loss, &u, fg);
    fd_grad(u.b, H, ln_loss, &u, fb);
    for (int j = 0; j < H; j++) {
        fg[j] += dg0[j];
        fb[j] += db0[j];
    }
    /* The saved mean is fp32, so on the row shifted by 50 every xhat the backward rebuilds is off by up to
     * ulp(50)/2 * rstd = 4e-6: measured worst dx 1.4e-6, dg 3.0e-6, db 2.7e-7 (2.7e-7 on unshifted rows). */
    float *gx = get_f(ddx, N * H), *gg = get_f(ddg, H), *gb = get_f(ddb, H);
    expect_close_arr_d("layernorm_bwd dx", gx, fx, N * H, 1e-5, 1e-5);
    expect_close_arr_d("layernorm_bwd dg (+=)", gg, fg, H, 1e-5, 1e-5);
    expect_close_arr_d("layernorm_bwd db (+=)", gb, fb, H, 1e-5, 1e-5);

    /* the two halves apart give exactly the combined result */
    float *sdx = dev_f(NULL, N * H), *sdg = dev_f(dg0, H), *sdb = dev_f(db0, H);
    K->layernorm_bwd(C, sdx, NULL, NULL, dw, dx_, dm, dr, dg_, N, H);
    K->layernorm_bwd(C, NULL, sdg, sdb, dw, dx_, dm, dr, dg_, N, H);
    expect_close_arr("layernorm_bwd dx alone vs combined", get_f(sdx, N * H), gx, N * H, 0, 0);
    expect_close_arr("layernorm_bwd dg alone vs combined", get_f(sdg, H), gg, H, 0, 0);
    expect_close_arr("layernorm_bwd db alone vs combined", get_f(sdb, H), gb, H, 0, 0);
}

/* ---- gelu --------------------------------------------------------------------------------------------------- */

typedef struct {
    double *x, *w;
    int n;
} gelu_ud;

static double gelu_loss(void *p) {
    gelu_ud *u = p;
    double s = 0;
    for (int i = 0; i < u->n; i++) s += gelu_d(u->x[i]) * u->w[i];
    return s;
}

Test(kernels, gelu) {
    enum { N = 64 };
    tu_rng r = {5};
    float *x = rand_f(&r, N, -5, 5), *w = rand_f(&r, N, -1, 1);
    x[0] = 0.0f;
    float *dxv = dev_f(x, N), *dy = dev_f(NULL, N);
    K->gelu_fwd(C, dy, dxv, N);
    gelu_ud u = {to_d(x, N), to_d(w, N), N};
    double *ref = hd(N);
    for (int i = 0; i < N; i++) ref[i] = gelu_d(u.x[i]);
    /* measured worst 4.0e-7 */
    expect_close_arr_d("gelu_fwd", get_f(dy, N), ref, N, 2e-6, 1e-5);

    float *ddx = dev_f(const_f(N, 1e3f), N); /* overwritten, not accumulated */
    K->gelu_bwd(C, ddx, dxv, dev_f(w, N), N);
    double *fd = hd(N);
    fd_grad(u.x, N, gelu_loss, &u, fd);
    /* measured worst 3.5e-7 */
    expect_close_arr_d("gelu_bwd dx", get_f(ddx, N), fd, N, 2e-6, 1e-5);
}

/* Double-precision GELU derivative, for the dense sweep (the finite differences above check the formula itself). */
static double gelu_grad_d(double x) {
    double s = sqrt(2 / M_PI), t = tanh(s * (x + 0.044715 * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * s * (1 + 3 * 0.044715 * x * x);
}

/* Every float step of [-12, 12] at 2^20 points, the tails where exp over- and underflows, and in place (out == x,
 * the vectorised loop's aliasing case). The contract of every backend is |diff| <= 2e-6 + 1e-5 |ref|; the CPU's
 * own kernel (gelu.c: sigmoid form, its own exp) holds a 10x tighter bound, 2e-7 + 1e-6 |ref|, measured worst
 * 0.24 (forward) and 0.66 (backward) of 1e-7 + 1e-6 |ref|, where libm's tanhf in the textbook form reached 0.77
 * and 5.5 (the backward's 1 - tanh^2 cancels). */
Test(kernels, gelu_dense) {
    enum { N = (1 << 20) + 8 };
    float *x = host_alloc(N * sizeof *x);
    for (int i = 0; i < N - 8; i++) x[i] = -12.0f + 24.0f * (float)i / (N - 8);
    const float tails[8] = {-1e4f, -200.0f, -40.0f, -1e-30f, 0.0f, 40.0f, 200.0f, 1e4f};
    memcpy(x + N - 8, tails, sizeof tails);
    int cpu = !strcmp(K->name, "cpu");
    double atol = cpu ? 2e-7 : 2e-6, rtol = cpu ? 1e-6 : 1e-5;
    double *ref = hd(N), *gref = hd(N);
    for (int i = 0; i < N; i++) {
        ref[i] = gelu_d(x[i]);
        gref[i] = gelu_grad_d(x[i]);
    }
    float *dxv = dev_f(x, N), *dy = dev_f(NULL, N), *ones = dev_f(const_f(N, 1.0f), N);
    K->gelu_fwd(C, dy, dxv, N);
    expect_close_arr_d("gelu_fwd dense", get_f(dy, N), ref, N, atol, rtol);
    K->gelu_bwd(C, ones, dxv, ones, N); /* dx aliases dout */
    expect_close_arr_d("gelu_bwd dense (in place)", get_f(ones, N), gref, N, atol, rtol);
    K->gelu_fwd(C, dxv, dxv, N); /* out aliases x */
    expect_close_arr_d("gelu_fwd dense (in place)", get_f(dxv, N), ref, N, atol, rtol);
}

/* ---- bias, axpy, fill --------------------------------------------------------------------------------------- */

typedef struct {
    double *b, *w;
    int n, c;
} bias_ud;

static double bias_loss(void *p) { /* sum(w * (x + b)) less the x part, which does not depend on b */
    bias_ud *u = p;
    double s = 0;
    for (int i = 0; i < u->n; i++) s += dot_d(u->b, u->w + (size_t)i * u->c, u->c);
    return s;
}

Test(kernels, bias_add_and_grad) {
    enum { N = 7, Cc = 9 };
    tu_rng r = {9};
    float *x = rand_f(&r, N * Cc, -1, 1), *b = rand_f(&r, Cc, -1, 1), *w = rand_f(&r, N * Cc, -1, 1);
    float *db0 = rand_f(&r, Cc, -1, 1);
    float *dx = dev_f(x, N * Cc);
    K->bias_add(C, dx, dev_f(b, Cc), N, Cc);
    double *ref = hd(N * Cc);
    for (int i = 0; i < N * Cc; i++) ref[i] = (double)x[i] + b[i % Cc];
    /* one rounding, at most half an ulp (6e-8 relative): measured worst 6.0e-8 */
    expect_close_arr_d("bias_add", get_f(dx, N * Cc), ref, N * Cc, 1e-7, 1e-7);

    float *ddb = dev_f(db0, Cc);
    K->bias_grad(C, ddb, dev_f(w, N * Cc), N, Cc);
    bias_ud u = {to_d(b, Cc), to_d(w, N * Cc), N, Cc};
    double *fd = hd(Cc);
    fd_grad(u.b, Cc, bias_loss, &u, fd);
    for (int j = 0; j < Cc; j++) fd[j] += db0[j];
    /* N float adds: measured worst 4.7e-8 */
    expect_close_arr_d("bias_grad (+=)", get_f(ddb, Cc), fd, Cc, 1e-6, 1e-6);
}

Test(kernels, axpy_and_fill) {
    enum { N = 37 };
    tu_rng r = {13};
    float *x = rand_f(&r, N, -1, 1), *y = rand_f(&r, N, -1, 1);
    float *dy = dev_f(y, N);
    K->axpy(C, dy, -0.3f, dev_f(x, N), N);
    double *ref = hd(N);
    for (int i = 0; i < N; i++) ref[i] = (double)y[i] + (double)-0.3f * x[i];
    /* two roundings: measured worst 5.8e-8 */
    expect_close_arr_d("axpy", get_f(dy, N), ref, N, 2e-7, 2e-7);

    K->fill(C, dy, 2.5f, N - 1); /* the last element is outside count and must stay */
    float *got = get_f(dy, N), *exp_ = const_f(N, 2.5f);
    exp_[N - 1] = got[N - 1];
    expect_close_arr("fill", got, exp_, N, 0, 0);
    cr_expect(got[N - 1] != 2.5f, "fill wrote beyond count");
}

/* ---- cross-entropy ------------------------------------------------------------------------------------------ */

typedef struct {
    double *logits, dloss;
    const int *tg;
    int n, V;
} xent_ud;

static double xent_loss(void *p) {
    xent_ud *u = p;
    return u->dloss * xent_d(NULL, u->logits, u->tg, u->n, u->V);
}

Test(kernels, xent) {
    enum { N = 5, V = 11 };
    static const int tg[N] = {0, 10, 3, 3, 7};
    tu_rng r = {17};
    float *lg = rand_f(&r, N * V, -3, 3);
    for (int j = 0; j < V; j++) lg[2 * V + j] += 100.0f; /* exp(100) overflows fp32: softmax must subtract max */
    lg[4 * V + 7] = -20.0f;                              /* a target with a tiny probability: loss ~ 20 */
    float *dl = dev_f(lg, N * V), *dp = dev_f(NULL, N * V), *dloss = dev_f(NULL, 1);
    int *dt = dev_i(tg, N);
    K->xent_fwd(C, dloss, dp, dl, dt, N, V);
    xent_ud u = {to_d(lg, N * V), 0.37, tg, N, V};
    double *rp = hd(N * V);
    double rl = xent_d(rp, u.logits, tg, N, V);
    float *probs = get_f(dp, N * V);
    /* measured worst: probs 2.3e-8, loss 5.7e-7 (at loss 7.9) */
    expect_close_arr_d("xent_fwd probs", probs, rp, N * V, 1e-7, 1e-5);
    expect_close("xent_fwd loss", get_f(dloss, 1)[0], rl, 1e-6, 1e-6);

    float dls = 0.37f;
    float *dd = dev_f(const_f(N * V, 1e3f), N * V); /* overwritten */
    K->xent_bwd(C, dd, dp, dt, dev_f(&dls, 1), N, V);
    double *fd = hd(N * V);
    u.dloss = dls;
    fd_grad(u.logits, N * V, xent_loss, &u, fd);
    /* measured worst 3.1e-9 */
    expect_close_arr_d("xent_bwd dlogits", get_f(dd, N * V), fd, N * V, 1e-7, 1e-5);
}

/* ---- optimizers --------------------------------------------------------------------------------------------- */

Test(kernels, sgd) {
    enum { N = 29 };
    tu_rng r = {19};
    float *p = rand_f(&r, N, -1, 1), *g = rand_f(&r, N, -1, 1);
    float lr = 0.05f, wd = 0.1f;
    float *dp = dev_f(p, N);
    K->sgd(C, dp, dev_f(g, N), lr, wd, N);
    double *ref = hd(N);
    for (int i = 0; i < N; i++) ref[i] = p[i] - (double)lr * (g[i] + (double)wd * p[i]);
    /* measured worst 3.0e-8 */
    expect_close_arr_d("sgd", get_f(dp, N), ref, N, 2e-7, 2e-7);
}

Test(kernels, adamw_two_steps) {
    enum { N = 31 };
    tu_rng r = {23};
    float *p = rand_f(&r, N, -1, 1), *g1 = rand_f(&r, N, -1, 1), *g2 = rand_f(&r, N, -1, 1);
    const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.01f;
    float *dp = dev_f(p, N), *dm = dev_f(NULL, N), *dv = dev_f(NULL, N);
    K->adamw(C, dp, dev_f(g1, N), dm, dv, lr, b1, b2, eps, wd, 1, N);
    K->adamw(C, dp, dev_f(g2, N), dm, dv, lr, b1, b2, eps, wd, 2, N);

    double *rp = to_d(p, N), *rm = hd(N), *rv = hd(N);
    const float *gs[2] = {g1, g2};
    for (int t = 1; t <= 2; t++)
        for (int i = 0; i < N; i++) {
            double gi = gs[t - 1][i];
            rm[i] = (double)b1 * rm[i] + (1 - (double)b1) * gi;
            rv[i] = (double)b2 * rv[i] + (1 - (double)b2) * gi * gi;
            double mh = rm[i] / (1 - pow(b1, t)), vh = rv[i] / (1 - pow(b2, t));
            rp[i] -= (double)lr * (mh / (sqrt(vh) + eps) + (double)wd * rp[i]);
        }
    /* measured worst: p 4.5e-8, m 9.3e-9, v 5.8e-11 */
    expect_close_arr_d("adamw p after 2 steps", get_f(dp, N), rp, N, 5e-7, 1e-6);
    expect_close_arr_d("adamw m after 2 steps", get_f(dm, N), rm, N, 1e-7, 1e-5);
    expect_close_arr_d("adamw v after 2 steps", get_f(dv, N), rv, N, 1e-8, 1e-5);
}

/* ---- causal multi-head self-attention ----------------------------------------------------------------------- */

typedef struct {
    int B, T, nh, hd;
} attn_shape;

static size_t attn_n(attn_shape s) { return (size_t)s.B * s.T * s.nh * s.hd; }
static size_t attn_nt(attn_shape s) { return (size_t)s.B * s.nh * s.T * s.T; }

/* Double-precision causal attention, loop by loop: out (B*T x nh*hd) and att (B x nh x T x T, zero above the
 * diagonal); logits q.k / sqrt(hd) over keys t' <= t, softmax with the row max subtracted. */
static void attn_fwd_d(double *out, double *att, const double *q, const double *k, const double *v, attn_shape s) {
    int ld = s.nh * s.hd;
    double scale = 1.0 / sqrt(s.hd);
    for (int b = 0; b < s.B; b++)
        for (int h = 0; h < s.nh; h++)
            for (int t = 0; t < s.T; t++) {
                double *p = att + (((size_t)b * s.nh + h) * s.T + t) * s.T, mx = -INFINITY, sum = 0;
                const double *qt = q + ((size_t)b * s.T + t) * ld + h * s.hd;
                for (int u = 0; u < s.T; u++) {
                    p[u] = 0;
                    if (u > t) continue;
                    const double *ku = k + ((size_t)b * s.T + u) * ld + h * s.hd;
                    p[u] = scale * dot_d(qt, ku, s.hd);
                    mx = fmax(mx, p[u]);
                }
                for (int u = 0; u <= t; u++) sum += p[u] = exp(p[u] - mx);
                for (int u = 0; u <= t; u++) p[u] /= sum;
                for (int c = 0; c < s.hd; c++) {
                    double o = 0;
                    for (int u = 0; u <= t; u++) o += p[u] * v[((size_t)b * s.T + u) * ld + h * s.hd + c];
                    out[((size_t)b * s.T + t) * ld + h * s.hd + c] = o;
                }
            }
}

/* Its backward from the probabilities P of attn_fwd_d, loop by loop: dV = P^T dO, dP = dO V^T,
 * dS = P o (dP - rowsum(dP o P)), dQ = dS K / sqrt(hd), dK = dS^T Q / sqrt(hd). */
static void attn_bwd_d(double *dq, double *dk, double *dv, const double *att, const double *dout, const double *q,
                       const double *k, const double *v, attn_shape s) {
    int ld = s.nh * s.hd;
    double scale = 1.0 / sqrt(s.hd);
    memset(dq, 0, attn_n(s) * sizeof *dq);
    memset(dk, 0, attn_n(s) * sizeof *dk);
    memset(dv, 0, attn_n(s) * sizeof *dv);
    double *ds = calloc((size_t)s.T, sizeof *ds);
    cr_assert(ds);
    for (int b = 0; b < s.B; b++)
        for (int h = 0; h < s.nh; h++)
            for (int t = 0; t < s.T; t++) {
                const double *p = att + (((size_t)b * s.nh + h) * s.T + t) * s.T;
                size_t rt = ((size_t)b * s.T + t) * ld + h * s.hd;
                double c = 0;
                for (int u = 0; u <= t; u++) {
                    size_t ru = ((size_t)b * s.T + u) * ld + h * s.hd;
                    ds[u] = dot_d(dout + rt, v + ru, s.hd); /* dP */
                    c += ds[u] * p[u];
                    for (int e = 0; e < s.hd; e++) dv[ru + e] += p[u] * dout[rt + e];
                }
                for (int u = 0; u <= t; u++) {
                    size_t ru = ((size_t)b * s.T + u) * ld + h * s.hd;
                    double g = p[u] * (ds[u] - c) * scale;
                    for (int e = 0; e < s.hd; e++) {
                        dq[rt + e] += g * k[ru + e];
                        dk[ru + e] += g * q[rt + e];
                    }
                }
            }
    free(ds);
}

/* What the backend computed for one case: the forward's out and att, the backward's dq, dk, dv. */
typedef struct {
    float *out, *att, *dq, *dk, *dv;
} attn_got;

/* Runs the backend's attn_fwd and attn_bwd (dout as the output's gradient). Every output is prefilled with junk and
 * the scratch with NaN: a kernel must write all it returns and read nothing of the scratch it did not write. */
static attn_got attn_run(const float *q, const float *k, const float *v, const float *dout, attn_shape s) {
    size_t n = attn_n(s), nt = attn_nt(s);
    float *dq_ = dev_f(q, n), *dk_ = dev_f(k, n), *dv_ = dev_f(v, n);
    float *out = dev_f(const_f(n, 1e3f), n), *att = dev_f(const_f(nt, NAN), nt);
    K->attn_fwd(C, out, att, dq_, dk_, dv_, s.B, s.T, s.nh, s.hd);
    float *gq = dev_f(const_f(n, 1e3f), n), *gk = dev_f(const_f(n, 1e3f), n), *gv = dev_f(const_f(n, 1e3f), n);
    K->attn_bwd(C, gq, gk, gv, dev_f(const_f(nt, NAN), nt), dev_f(dout, n), dq_, dk_, dv_, att, s.B, s.T, s.nh,
                s.hd);
    attn_got g = {get_f(out, n), get_f(att, nt), get_f(gq, n), get_f(gk, n), get_f(gv, n)};
    return g;
}

/* Each row of att: exactly 0 above the diagonal, in [0, 1] and summing to 1 within tol up to it. */
static void check_att_rows(const char *what, const float *att, attn_shape s, double tol) {
    size_t bad = 0;
    double worst = 0;
    for (size_t r = 0; r < (size_t)s.B * s.nh * s.T; r++) {
        const float *p = att + r * s.T;
        int t = (int)(r % s.T);
        double sum = 0;
        for (int u = 0; u < s.T; u++) {
            if (u > t ? p[u] != 0.0f : !(p[u] >= 0.0f && p[u] <= 1.0f)) bad++;
            sum += p[u];
        }
        if (!(fabs(sum - 1) <= worst)) worst = fabs(sum - 1); /* NaN counts as the worst */
    }
    cr_log_info("%s: rows sum to 1 within %.3g", what, worst);
    cr_expect(bad == 0, "%s: %zu probabilities outside [0, 1] or not exactly 0 above the diagonal", what, bad);
    cr_expect(worst <= tol, "%s: a row sums to 1 only within %.3g (allowed %g)", what, worst, tol);
}

/* One shape against the double reference: q, k, v uniform in [-a, a], dout in [-1, 1]. */
static void check_attention(attn_shape s, double a, unsigned seed) {
    tu_rng r = {seed};
    size_t n = attn_n(s), nt = attn_nt(s);
    float *q = rand_f(&r, n, -a, a), *k = rand_f(&r, n, -a, a), *v = rand_f(&r, n, -1, 1);
    float *dout = rand_f(&r, n, -1, 1);
    attn_got g = attn_run(q, k, v, dout, s);
    double *qd = to_d(q, n), *kd = to_d(k, n), *vd = to_d(v, n);
    double *out = hd(n), *att = hd(nt), *dq = hd(n), *dk = hd(n), *dv = hd(n);
    attn_fwd_d(out, att, qd, kd, vd, s);
    attn_bwd_d(dq, dk, dv, att, to_d(dout, n), qd, kd, vd, s);
    char what[5][96];
    const char *names[5] = {"out", "att", "dq", "dk", "dv"};
    for (int i = 0; i < 5; i++)
        snprintf(what[i], sizeof what[i], "attn B=%d T=%d nh=%d hd=%d (|q|,|k| <= %g) %s", s.B, s.T, s.nh, s.hd, a,
                 names[i]);
    /* measured worst on the cpu backend over the shapes below (|q|, |k| <= 2): out 1.2e-7, att 1.0e-7, dq 7.9e-8,
     * dk 1.4e-7, dv 5.8e-7 (where |dv| is 0.5), row sums 1.3e-7 */
    expect_close_arr_d(what[0], g.out, out, n, 2e-6, 1e-5);
    expect_close_arr_d(what[1], g.att, att, nt, 1e-6, 1e-5);
    check_att_rows(what[1], g.att, s, 2e-6);
    expect_close_arr_d(what[2], g.dq, dq, n, 5e-6, 1e-5);
    expect_close_arr_d(what[3], g.dk, dk, n, 5e-6, 1e-5);
    expect_close_arr_d(what[4], g.dv, dv, n, 5e-6, 1e-5);
}

/* T = 1 (a row of one key: out = v), B > 1, nh = 1, head sizes that are no power of two, T past the CPU's row
 * blocks (32) and vector lanes (16) with a remainder of each. */
Test(kernels, attention_small_shapes) {
    check_attention((attn_shape){1, 1, 1, 1}, 1, 101);
    check_attention((attn_shape){3, 1, 2, 4}, 1, 102);
    check_attention((attn_shape){1, 5, 1, 3}, 1, 103);
    check_attention((attn_shape){2, 7, 3, 5}, 2, 104);
    check_attention((attn_shape){1, 16, 2, 8}, 2, 105);
}

Test(kernels, attention_block_edges) {
    check_attention((attn_shape){2, 37, 3, 12}, 1, 106);
    check_attention((attn_shape){1, 64, 2, 16}, 1, 107);
    check_attention((attn_shape){2, 70, 2, 24}, 1, 108);
    check_attention((attn_shape){1, 100, 1, 33}, 1, 109);
}

typedef struct {
    double *q, *k, *v, *w, *out, *att;
    attn_shape s;
} attn_ud;

static double attn_loss(void *p) {
    attn_ud *u = p;
    attn_fwd_d(u->out, u->att, u->q, u->k, u->v, u->s);
    return dot_d(u->out, u->w, attn_n(u->s));
}

/* The backward against central differences of the double forward (which also checks attn_bwd_d, the reference of
 * the other tests), loss = sum(out * w). */
Test(kernels, attention_backward_finite_differences) {
    attn_shape s = {2, 4, 2, 3};
    size_t n = attn_n(s), nt = attn_nt(s);
    tu_rng r = {111};
    float *q = rand_f(&r, n, -2, 2), *k = rand_f(&r, n, -2, 2), *v = rand_f(&r, n, -1, 1), *w = rand_f(&r, n, -1, 1);
    attn_got g = attn_run(q, k, v, w, s);
    attn_ud u = {to_d(q, n), to_d(k, n), to_d(v, n), to_d(w, n), hd(n), hd(nt), s};
    double *fq = hd(n), *fk = hd(n), *fv = hd(n), *dq = hd(n), *dk = hd(n), *dv = hd(n);
    fd_grad(u.q, n, attn_loss, &u, fq);
    fd_grad(u.k, n, attn_loss, &u, fk);
    fd_grad(u.v, n, attn_loss, &u, fv);
    attn_fwd_d(u.out, u.att, u.q, u.k, u.v, s);
    attn_bwd_d(dq, dk, dv, u.att, u.w, u.q, u.k, u.v, s);
    /* the double reference's backward is the finite differences' to ~1e-10; the kernel's measured worst 5.9e-8 */
    double worst = 0;
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fmax(fabs(dq[i] - fq[i]), fmax(fabs(dk[i] - fk[i]), fabs(dv[i] - fv[i]))));
    cr_expect(worst < 1e-8, "the double backward differs from finite differences by %.3g", worst);
    expect_close_arr_d("attn_bwd dq vs finite differences", g.dq, fq, n, 2e-6, 1e-5);
    expect_close_arr_d("attn_bwd dk vs finite differences", g.dk, fk, n, 2e-6, 1e-5);
    expect_close_arr_d("attn_bwd dv vs finite differences", g.dv, fv, n, 2e-6, 1e-5);
}

/* Logits of order 1e6 (q and k entries up to 1e3): exp without the row max subtracted overflows to inf, and the
 * rows are one-hot to float precision. Nothing may come out inf or NaN, and the results still match the reference. */
Test(kernels, attention_huge_logits) {
    attn_shape s = {2, 40, 2, 8};
    size_t n = attn_n(s), nt = attn_nt(s);
    tu_rng r = {121};
    float *q = rand_f(&r, n, -1e3, 1e3), *k = rand_f(&r, n, -1e3, 1e3), *v = rand_f(&r, n, -1, 1);
    attn_got g = attn_run(q, k, v, rand_f(&r, n, -1, 1), s);
    const float *all[5] = {g.out, g.att, g.dq, g.dk, g.dv};
    const char *names[5] = {"out", "att", "dq", "dk", "dv"};
    for (int a = 0; a < 5; a++) {
        size_t count = a == 1 ? nt : n, bad = 0;
        for (size_t i = 0; i < count; i++) bad += !isfinite(all[a][i]);
        cr_expect(bad == 0, "huge logits: %zu of %zu elements of %s are inf or NaN", bad, count, names[a]);
    }
    check_att_rows("huge logits att", g.att, s, 2e-6);
    check_attention(s, 1e3, 121);
}

/* ---- one residual MLP block: y = x + W2 gelu(W1 LN(x) + b1) + b2 (weights stored out x in) ----------------- */

enum { BN = 4, BH = 8, BF = 32 };

typedef struct {
    double *x, *g, *b, *W1, *b1, *W2, *b2, *w;
    double ln[BN * BH], a[BN * BF], y[BN * BH];
} mlp_ud;

static void mlp_fwd_d(mlp_ud *u) {
    layernorm_d(u->ln, NULL, NULL, u->x, u->g, u->b, BN, BH);
    gemm_d(0, 1, BN, BF, BH, 1, u->ln, BH, u->W1, BH, 0, u->a, BF);
    for (int i = 0; i < BN * BF; i++) u->a[i] = gelu_d(u->a[i] + u->b1[i % BF]);
    for (int i = 0; i < BN * BH; i++) u->y[i] = u->x[i] + u->b2[i % BH];
    gemm_d(0, 1, BN, BH, BF, 1, u->a, BF, u->W2, BF, 1, u->y, BH);
}

static double mlp_loss(void *p) {
    mlp_ud *u = p;
    mlp_fwd_d(u);
    return dot_d(u->y, u->w, BN * BH);
}

Test(kernels, mlp_block_backward) {
    tu_rng r = {29};
    float *x = rand_f(&r, BN * BH, -1, 1), *g = rand_f(&r, BH, 0.5, 1.5), *b = rand_f(&r, BH, -0.2, 0.2);
    float *W1 = rand_f(&r, BF * BH, -0.5, 0.5), *b1 = rand_f(&r, BF, -0.2, 0.2);
    float *W2 = rand_f(&r, BH * BF, -0.2, 0.2), *b2 = rand_f(&r, BH, -0.2, 0.2);
    float *w = rand_f(&r, BN * BH, -1, 1);

    /* forward, composed from the kernels as the model does */
    float *dx = dev_f(x, BN * BH), *dg = dev_f(g, BH), *dW1 = dev_f(W1, BF * BH), *dW2 = dev_f(W2, BH * BF);
    float *ln = dev_f(NULL, BN * BH), *mean = dev_f(NULL, BN), *rstd = dev_f(NULL, BN);
    float *a = dev_f(NULL, BN * BF), *z = dev_f(NULL, BN * BF), *y = dev_f(NULL, BN * BH);
    K->layernorm_fwd(C, ln, mean, rstd, dx, dg, dev_f(b, BH), BN, BH);
    K->gemm(C, 0, 1, BN, BF, BH, 1.0f, ln, BH, dW1, BH, 0.0f, a, BF);
    K->bias_add(C, a, dev_f(b1, BF), BN, BF);
    K->gelu_fwd(C, z, a, BN * BF);
    K->copy(C, y, dx, BN * BH * sizeof(float));
    K->gemm(C, 0, 1, BN, BH, BF, 1.0f, z, BF, dW2, BF, 1.0f, y, BH);
    K->bias_add(C, y, dev_f(b2, BH), BN, BH);

    mlp_ud u = {to_d(x, BN * BH), to_d(g, BH), to_d(b, BH), to_d(W1, BF * BH), to_d(b1, BF), to_d(W2, BH * BF),
                to_d(b2, BH), to_d(w, BN * BH), {0}, {0}, {0}};
    mlp_fwd_d(&u);
    /* measured worst 1.3e-7 */
    expect_close_arr_d("mlp block forward y", get_f(y, BN * BH), u.y, BN * BH, 2e-6, 1e-5);

    /* backward, dy = w; weight gradients accumulate into zeroed buffers */
    float *dy = dev_f(w, BN * BH);
    float *gx = dev_f(NULL, BN * BH), *gxln = dev_f(NULL, BN * BH), *gg = dev_f(NULL, BH), *gb = dev_f(NULL, BH);
    float *gW1 = dev_f(NULL, BF * BH), *gb1 = dev_f(NULL, BF), *gW2 = dev_f(NULL, BH * BF), *gb2 = dev_f(NULL, BH);
    float *gz = dev_f(NULL, BN * BF), *ga = dev_f(NULL, BN * BF), *gln = dev_f(NULL, BN * BH);
    K->copy(C, gx, dy, BN * BH * sizeof(float)); /* the residual path */
    K->gemm(C, 0, 0, BN, BF, BH, 1.0f, dy, BH, dW2, BF, 0.0f, gz, BF);
    K->gemm(C, 1, 0, BH, BF, BN, 1.0f, dy, BH, z, BF, 1.0f, gW2, BF);
    K->bias_grad(C, gb2, dy, BN, BH);
    K->gelu_bwd(C, ga, a, gz, BN * BF);
    K->gemm(C, 0, 0, BN, BH, BF, 1.0f, ga, BF, dW1, BH, 0.0f, gln, BH);
    K->gemm(C, 1, 0, BF, BH, BN, 1.0f, ga, BF, ln, BH, 1.0f, gW1, BH);
    K->bias_grad(C, gb1, ga, BN, BF);
    K->layernorm_bwd(C, gxln, gg, gb, gln, dx, mean, rstd, dg, BN, BH);
    K->axpy(C, gx, 1.0f, gxln, BN * BH);

    struct {
        const char *name;
        double *param;
        float *grad;
        int n;
    } checks[] = {
        {"mlp block dx", u.x, gx, BN * BH},   {"mlp block dln_g", u.g, gg, BH},  {"mlp block dln_b", u.b, gb, BH},
        {"mlp block dW1", u.W1, gW1, BF * BH}, {"mlp block db1", u.b1, gb1, BF}, {"mlp block dW2", u.W2, gW2, BH * BF},
        {"mlp block db2", u.b2, gb2, BH},
    };
    for (size_t c = 0; c < sizeof checks / sizeof checks[0]; c++) {
        double *fd = hd(checks[c].n);
        fd_grad(checks[c].param, checks[c].n, mlp_loss, &u, fd);
        /* measured worst over all seven: 2.9e-7 (dW2); 5e-6 leaves room for larger blocks on other backends */
        expect_close_arr_d(checks[c].name, get_f(checks[c].grad, checks[c].n), fd, checks[c].n, 5e-6, 1e-5);
    }
}

/* ---- the backend registry ----------------------------------------------------------------------------------- */


Test(registry, open_errors) {
    char err[256] = "";
    cr_expect_null(pp__backend_open("tpu", 0, 1, err, sizeof err));
    cr_expect_str_eq(err, "unknown backend 'tpu': use cpu or cuda");
    pp_backend *cuda = pp__backend_open("cuda", 0, 1, err, sizeof err);
    if (cuda)
        pp__backend_close(cuda);
    else
        cr_expect(strncmp(err, "cuda backend not compiled in", 28) == 0 || strncmp(err, "no CUDA device", 14) == 0,
                  "opening cuda failed with an unexpected reason: %s", err);
    pp_backend *cpu = pp__backend_open("cpu", 1, 2, err, sizeof err);
    cr_assert_not_null(cpu, "cpu backend did not open: %s", err);
    cr_expect_str_eq(cpu->ops->name, "cpu");
    pp__backend_close(cpu);
}

Test(registry, missing_ops) {
    char buf[256];
    cr_expect_eq(pp__backend_missing_ops(&pp__backend_cpu_ops, buf, sizeof buf), 0, "cpu backend misses: %s", buf);
    cr_expect_str_eq(buf, "");
    pp_backend_ops partial = pp__backend_cpu_ops;
    partial.gemm = NULL;
    partial.adamw = NULL;
    partial.timer_epoch = NULL; /* optional: not counted */
    cr_expect_eq(pp__backend_missing_ops(&partial, buf, sizeof buf), 2);
    cr_expect_str_eq(buf, "gemm, adamw");
    cr_expect_eq(pp__backend_missing_ops(&partial, buf, 6), 2, "a short buffer still counts every slot");
    cr_expect_str_eq(buf, "gemm,");
}

Test(registry, describe_all) {
    char text[2048] = "";
    FILE *f = fmemopen(text, sizeof text - 1, "w");
    cr_assert_not_null(f);
    pp__backend_describe_all(f);
    fclose(f);
    cr_expect(strstr(text, "cpu   usable: OpenBLAS") != NULL, "describe_all says: %s", text);
    cr_expect(strstr(text, "all 24 ops filled") != NULL, "describe_all says: %s", text);
}
