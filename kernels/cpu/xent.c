/* xent.c: softmax cross-entropy over the vocabulary: numerically stable softmax and mean loss, and its
 * gradient with respect to the logits. */
#include <math.h>
#include <stddef.h>

#include "cpu/cpu_kernels.h"
#include "error.h"

/* probs = softmax(logits) per row (n x V); loss[0] = mean over rows of -log probs[i, targets[i]].
 * A target outside [0, V) is a bug in the caller and stops the run. */
PP_CPU_CLONES void pp__cpu_xent_fwd(void *ctx, float *loss, float *probs, const float *logits, const int *targets, int n,
                      int V) {
    /* summed in double, as the CUDA kernel does: a float sum over a whole batch's rows (tens of thousands) would
     * lose more than the per-row losses themselves carry */
    double total = 0.0;
    for (int i = 0; i < n; i++) {
        const float *li = logits + (size_t)i * V;
        float *pi = probs + (size_t)i * V;
        int t = targets[i];
        PP_ASSERT(t >= 0 && t < V);
        float mx = li[0];
        for (int j = 1; j < V; j++) mx = li[j] > mx ? li[j] : mx;
        float sum = 0.0f;
        for (int j = 0; j < V; j++) {
            pi[j] = expf(li[j] - mx);
            sum += pi[j];
        }
        float inv = 1.0f / sum;
        for (int j = 0; j < V; j++) pi[j] *= inv;
        /* -log p from the logits, not log(probs): a tiny probability would round to 0 and give inf. */
        total += (double)(logf(sum) - (li[t] - mx));
    }
    loss[0] = n > 0 ? (float)(total / n) : 0.0f;
}

/* dlogits = (probs - onehot(targets)) * dloss[0] / n (overwrites); probs from xent_fwd. */
PP_CPU_CLONES void pp__cpu_xent_bwd(void *ctx, float *dlogits, const float *probs, const int *targets, const float *dloss,
                      int n, int V) {
    float scale = dloss[0] / n;
    for (int i = 0; i < n; i++) {
        const float *pi = probs + (size_t)i * V;
        float *di = dlogits + (size_t)i * V;
        for (int j = 0; j < V; j++) di[j] = pi[j] * scale;
        di[targets[i]] -= scale;
    }
}
