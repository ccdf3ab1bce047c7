/* optim.c: the optimizer updates, SGD with weight decay and AdamW (decoupled weight decay, bias-corrected). */
#include <math.h>

#include "cpu/cpu_kernels.h"

/* p -= lr * (g + wd * p) over count elements. */
PP_CPU_CLONES void pp__cpu_sgd(void *ctx, float *p, const float *g, float lr, float wd, int count) {
    for (int i = 0; i < count; i++) p[i] -= lr * (g[i] + wd * p[i]);
}

/* One AdamW step t >= 1 (moments m, v start at zero and are updated in place):
 * p -= lr * (mhat / (sqrt(vhat) + eps) + wd * p), mhat = m / (1 - beta1^t), vhat = v / (1 - beta2^t). */
PP_CPU_CLONES void pp__cpu_adamw(void *ctx, float *p, const float *g, float *m, float *v, float lr, float beta1, float beta2,
                   float eps, float wd, int t, int count) {
    /* Bias corrections in double: 1 - beta2^t for beta2 = 0.999 and small t cancels badly in float. */
    float bc1 = (float)(1.0 - pow((double)beta1, t));
    float bc2 = (float)(1.0 - pow((double)beta2, t));
    for (int i = 0; i < count; i++) {
        m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
        v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
        float mhat = m[i] / bc1;
        float vhat = v[i] / bc2;
        p[i] -= lr * (mhat / (sqrtf(vhat) + eps) + wd * p[i]);
    }
}
