/* grad_mix.h: the diagnosis of wrong gradients: a stage's gradient explained as a mix of the micro-batches' own
 * gradients, found by least squares, and told as the mistake it looks like (a scaled loss, a micro-batch missing
 * or counted twice, gradients zeroed between micro-batches, a stage fed the wrong tensors). */
#ifndef PP_GRAD_MIX_H
#define PP_GRAD_MIX_H

#include <stddef.h>

#include "grade.h"
#include "reference.h"

/* Explains a virtual stage's gradient g as a mix sum_m c_m * g_m of the micro-batches' own gradients (least
 * squares over the stage's parameters). A correct pipeline has every c_m = 1/M. Writes a diagnosis into msg. */
void pp__grad_mix_explain(const pp_run_result *res, const pp_reference *ref, int vs, char *msg, size_t len);

#endif /* PP_GRAD_MIX_H */
