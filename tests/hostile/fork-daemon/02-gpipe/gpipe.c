/* HOSTILE ON PURPOSE (fork-daemon): forks a child that leaves its session and outlives the test.
 * tests/test_hostile.c asserts what stops it. */
#include <unistd.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    if (pp_rank_id(r) == 0 && fork() == 0) {
        setsid();
        for (;;) sleep(1);
    }
}
