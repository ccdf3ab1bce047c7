/* figures.h: the course's figures, each rendered from real runs of the given schedules: Gantt charts, bubble
 * vs micro-batches, bubble vs comm latency, peak activation stashes per rank, and the loss curve against the
 * full-batch reference. Behind `pplab figures OUTDIR`. */
#ifndef PP_FIGURES_H
#define PP_FIGURES_H

#include "runtime.h"

/* Runs the sweeps on the threads transport and writes, in outdir (which must exist), a .dat/.gp/.png/.svg set
 * per figure (plot.h):
 *   gantt-gpipe, gantt-1f1b, gantt-interleaved  one step at P=4, M=8 (interleaved v=2)
 *   bubble-vs-M          measured bubble of each schedule at P=4 (points) on the theory curves (lines)
 *   bubble-vs-latency    1F1B vs interleaved (v=2) at P=4, M=8 as --comm-latency grows, measured and replayed
 *   peak-stashes         peak activation stashes per rank per schedule at P=4, M=8, in stage-sized units
 *   loss-curve           loss per step of a 1F1B run vs the full-batch reference (when the grader has one)
 * base supplies everything the sweeps do not set (model shape, micro-batch size, seed, backend, edge cost);
 * its schedule, P, M, v, comm latency and steps are overridden. A NULL step function skips the figures that
 * need it, and so does one that is not solved yet (it runs no op or fails at P=4, M=8: one line on stderr that
 * names its lab and what to do, the --impl folder impl being where the student writes). Returns 0 when every
 * figure of the schedules that run was written, -1 when any failed (each failure is one line on stderr; the other
 * figures are still made). The step functions and base stay the caller's. */
int pp__figures_all(const char *outdir, pp_step_fn gpipe, pp_step_fn onef1b, pp_step_fn interleaved,
                    const pp_run_config *base, const char *impl);

#endif /* PP_FIGURES_H */
