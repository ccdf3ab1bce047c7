/* reference.h: the single-device full-batch trainer the grader compares pipelines against. It lives in the
 * grader, not in pp.h: a schedule cannot get correct gradients without actually pipelining. */
#ifndef PP_REFERENCE_H
#define PP_REFERENCE_H

#include "runtime.h"
#include "wire.h"

typedef struct pp_reference {
    pp_param_result *params;   /* same names and order as pp_run_result's; grad = step-1 gradient */
    int nparams;
    float *loss;               /* per step, mean over the step's whole batch */
    float **mb_grad;           /* per micro-batch m of step 1: gradient of micro-batch m's mean loss alone,
                                  flattened over all params (NULL unless asked) */
    size_t total;              /* floats in one flattened gradient */
    int M;
} pp_reference;

/* Trains the whole model on the whole batch (all M micro-batches at once, D*M over D replicas, loss = mean over all samples) for
 * c->steps steps with c's optimizer, on the cpu backend. With per_mb, also the gradient of each micro-batch
 * alone (for diagnosing skipped or repeated micro-batches). Returns 0, or -1 with a reason in err. */
int pp__reference_run(const pp_run_config *c, int per_mb, pp_reference *ref, char *err, size_t errlen);
void pp__reference_free(pp_reference *ref);

/* Appends ref (its step-1 gradients, final weights and c->steps losses; never the per-micro-batch gradients) to w,
 * for the grader's reference process to hand it over. */
void pp__reference_encode(pp_wire *w, const pp_reference *ref, int steps);
/* Reads what pp__reference_encode wrote into ref (freed with pp__reference_free), checking every count against the
 * bytes that are there. Returns 0, or -1 (ref empty) when anything is malformed. */
int pp__reference_decode(pp_wire_in *r, int steps, pp_reference *ref);

/* Loss per step of the reference (loss_per_step holds c->steps floats). Returns 0 or -1. */
int pp__reference_losses(const pp_run_config *c, float *loss_per_step);

#endif /* PP_REFERENCE_H */
