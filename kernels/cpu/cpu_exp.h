/* cpu_exp.h: the exp of the CPU kernels' vectorised loops (gelu.c, attention.c). libm's expf is a scalar call
 * that no compiler vectorises without -ffast-math (several ns per element); this one is a few instructions with
 * no branch, which GCC vectorises inside each caller's loop, once per ISA (PP_CPU_CLONES). Each caller clamps
 * its argument as its own use wants (GELU saturates, the softmax flushes to 0). */
#ifndef PP_CPU_EXP_H
#define PP_CPU_EXP_H

#include <stdint.h>
#include <string.h>

/* exp(z) for z in [-87, 87], where 2^n stays a normal float (outside it the result is wrong: the caller clamps
 * first, which also turns a NaN into a number before the float-to-int conversion): n = round(z / ln 2) by the
 * 1.5 * 2^23 trick (no rounding instruction needed), r = z - n ln 2 in two parts (Cody-Waite), e^r by its
 * degree-6 Taylor polynomial on |r| <= ln2/2 (truncation < 2e-8 relative), and 2^n built in the exponent field. */
static inline float pp__cpu_exp_core(float z) {
    const float shift = 12582912.0f; /* 1.5 * 2^23 */
    float t = z * 1.44269504088896341f + shift;
    float n = t - shift;
    float r = z - n * 0.693145751953125f; /* ln 2, high part: exact in n * hi */
    r = r - n * 1.428606765330187e-06f;   /* ln 2, low part */
    float p = 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

#endif /* PP_CPU_EXP_H */
