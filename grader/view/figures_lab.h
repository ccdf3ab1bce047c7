/* figures_lab.h: one lab's figures, the student's own runs beside the canonical replay: behind
 * `pplab figures --lab X OUTDIR` and `make plots LAB=X`. */
#ifndef PP_FIGURES_LAB_H
#define PP_FIGURES_LAB_H

#include <stddef.h>

#include "labs.h"
#include "runtime.h"

/* The lab a --lab value names: its number ("05" or "5": the folder's first row, its main schedule), its name as
 * the lab table has it ("zbh2", "warmup") or its folder ("05-zerobubble"). NULL with one line in err that names
 * the value and lists the choices. */
const pp_lab_info *pp__figures_lab_find(const char *arg, char *err, size_t len);

/* Runs c once with prog to see whether the lab is solved: 0 when the run ended well and some rank ran an
 * operation; else -1 after one line on stderr that names the lab, says what went wrong and what to do (impl is
 * the --impl folder the student writes in, for that line). */
int pp__figures_lab_solved(const pp_lab_info *lab, const pp_run_config *c, const pp_program *prog,
                           const char *impl);

/* Writes lab's figures into outdir (which must exist), each a .dat/.gp/.png/.svg set named after its schedule:
 *   NAME-gantt             one step of the student's run above the canonical replay (P=4 M=8, or the lab's docs'
 *                          configuration: --dp 2 for lab 07, --tp 2 --stages 2 --microbatches 4 for lab 08), every
 *                          lane of the run drawn: each shard's, each rank's reduces
 *   NAME-bubble-vs-M       measured bubble (points) on the canonical one (line) as M grows
 *   NAME-bubble-vs-latency the same as --comm-latency grows
 *   NAME-peak-stashes      peak stashes per rank, the run's beside the canonical order's
 *   NAME-reduce            (rows with a gradient reduce) exposed communication vs replicas D
 *   NAME-sums              (rows that cut blocks over shards) the virtual step vs shards T
 * The warm-up has no step function (prog NULL): its figures are the canonical orders it asks about (GPipe, 1F1B,
 * interleaved), warmup-gantt-NAME and warmup-bubble-vs-M. Lab 09 has none of its own. handout 1: the canonical
 * side is drawn only at the configurations this build records, which titles and the console say. base supplies
 * the model (its layers, width, seed); the sweeps set the rest. Returns 0 when every figure was written, 1 when
 * the lab is not solved yet, its run fails or it has no figures (one line on stderr, no figure), -1 when a
 * figure failed (one line each). */
int pp__figures_lab(const char *outdir, const pp_lab_info *lab, const pp_program *prog, const pp_run_config *base,
                    const char *impl, int handout);

#endif /* PP_FIGURES_LAB_H */
