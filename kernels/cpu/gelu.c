/* gelu.c: GELU, tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), and its derivative.
 *
 * Written through the identity 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u)) = sigmoid(2u), which has no cancellation
 * (1 + tanh(u) for u << 0 loses every digit), and with the kernels' own exp (cpu_exp.h): libm's tanhf is a scalar
 * call that no compiler vectorises (7-8 ns per element here), and was half the CPU step once GEMM ran its proper
 * kernel. The loops below are branch-free so that GCC vectorises them, once per ISA (PP_CPU_CLONES): about 1 ns
 * per element.
 * Error against double precision over [-12, 12] (tests/test_kernels.c, gelu_dense): |diff| <= 0.24 (forward)
 * and 0.66 (backward) of 1e-7 + 1e-6 |ref|, where libm's tanhf in the textbook form reached 0.77 and 5.5. */
#include "cpu/cpu_kernels.h"
#include "cpu/cpu_exp.h"

#define PP__GELU_S 0.7978845608028654f /* sqrt(2/pi) */
#define PP__GELU_C 0.044715f

/* exp(z) with z clamped to [-87, 87] first (cpu_exp.h): GELU saturates there, and a NaN becomes -87, never a
 * float-to-int conversion out of range (x itself carries the NaN into the result). */
static inline float gelu_exp(float z) {
    z = z > -87.0f ? z : -87.0f;
    z = z < 87.0f ? z : 87.0f;
    return pp__cpu_exp_core(z);
}

/* e = exp(-2u) at the GELU argument u of x; then 0.5 (1 + tanh u) = 1 / (1 + e). */
static inline float gelu_exp_m2u(float x) {
    float u = PP__GELU_S * (x + PP__GELU_C * x * x * x);
    return gelu_exp(-2.0f * u);
}

/* out = gelu(x) over count elements; out may alias x. */
PP_CPU_CLONES void pp__cpu_gelu_fwd(void *ctx, float *out, const float *x, int count) {
    for (int i = 0; i < count; i++) out[i] = x[i] / (1.0f + gelu_exp_m2u(x[i]));
}

/* dx = gelu'(x) * dout (overwrites); dx may alias dout. With s = 1 / (1 + e) = 0.5 (1 + tanh u):
 * 1 - tanh^2 u = 4 s (1 - s) and 1 - s = e s (no cancellation where s is near 1), so
 * gelu' = s + 2 x e s^2 du/dx. */
PP_CPU_CLONES void pp__cpu_gelu_bwd(void *ctx, float *dx, const float *x, const float *dout, int count) {
    for (int i = 0; i < count; i++) {
        float v = x[i];
        float e = gelu_exp_m2u(v);
        float s = 1.0f / (1.0f + e);
        float du = PP__GELU_S * (1.0f + 3.0f * PP__GELU_C * v * v);
        float one_minus_s = e * s; /* <= 1 even where e is huge: e first with v would overflow */
        dx[i] = (s + 2.0f * v * one_minus_s * s * du) * dout[i];
    }
}
