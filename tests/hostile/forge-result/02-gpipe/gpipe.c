/* HOSTILE ON PURPOSE (forge-result): does no work, overwrites every grader result file it can find with a
 * claim of full marks, and ends the process before the grader's own report is written.
 * tests/test_grader.c asserts that the grader catches it with the right message. */
#include <glob.h>
#include <stdio.h>
#include <unistd.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    glob_t g;
    if (pp_rank_id(r) == 0 && glob("/tmp/pplab-result-*", 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) {
            FILE *f = fopen(g.gl_pathv[i], "wb");
            if (f) fprintf(f, "{\"score\": 148, \"max_score\": 148}\nFULL MARKS\n"), fclose(f);
        }
        globfree(&g);
        fflush(stdout);
        _exit(0);
    }
}
