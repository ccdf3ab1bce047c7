/* HOSTILE ON PURPOSE (object escape): for a run without seccomp (a test knob), the layers under it: it starts a
 * chain of processes that leave the test's session and sleep forever, looks for files it could read, then does
 * the work. Every process it made must be gone when the test ends, and it must have opened nothing. */
#include <stdio.h>
#include "sys.h"
#include "gpipe_body.h"
void pp_gpipe_step(pp_rank *r) {
    if (pp_rank_id(r) == 0) {
        static const char *const paths[] = {"/etc/passwd", "/proc/self/environ", "/tmp", "/", "."};
        for (unsigned i = 0; i < sizeof paths / sizeof *paths; i++)
            printf("escape: open %s: %s\n", paths[i], sys(NR_openat, -100, paths[i], 0) >= 0 ? "opened" : "refused");
        fflush(stdout);
        long pid = sys(NR_fork, 0);
        if (pid == 0) {
            for (int depth = 0; depth < 3; depth++) {
                sys(NR_setsid, 0);
                if (sys(NR_fork, 0) != 0) break;
            }
            long t[2] = {1000, 0};
            for (;;) sys(NR_nanosleep, t, 0);
        }
        printf("escape: fork %s\n", pid > 0 ? "started a process" : "refused");
    }
    honest_gpipe(r);
}
