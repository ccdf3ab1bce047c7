/* gelu.c: GELU, tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), and its derivative. */
#include <math.h>

#include "cpu/cpu_kernels.h"

#define PP__GELU_S 0.7978845608028654f /* sqrt(2/pi) */
#define PP__GELU_C 0.044715f

/* out = gelu(x) over count elements; out may alias x. */
void pp__cpu_gelu_fwd(void *ctx, float *out, const float *x, int count) {
    for (int i = 0; i < count; i++) {
        float v = x[i];
        out[i] = 0.5f * v * (1.0f + tanhf(PP__GELU_S * (v + PP__GELU_C * v * v * v)));
    }
}

/* dx = gelu'(x) * dout (overwrites); dx may alias dout. */
void pp__cpu_gelu_bwd(void *ctx, float *dx, const float *x, const float *dout, int count) {
    for (int i = 0; i < count; i++) {
        float v = x[i];
        float t = tanhf(PP__GELU_S * (v + PP__GELU_C * v * v * v));
        float du = PP__GELU_S * (1.0f + 3.0f * PP__GELU_C * v * v);
        float grad = 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
        dx[i] = grad * dout[i];
    }
}
