/* BROKEN ON PURPOSE (thread-crash): rank 0 starts a worker thread that dereferences NULL while rank 0 itself
 * waits in pp_recv for a message rank 1 never sends (rank 1, after a pause, waits for rank 0 in turn). When the
 * ranks then look deadlocked, the cause is the crash, and the report must say so.
 * tests/test_grader.c asserts that the grader catches it with the right message. */
#define _POSIX_C_SOURCE 199309L
#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include "pp.h"

static void *crash(void *arg) {
    volatile int *p = arg;
    *p = 1;
    return NULL;
}

void pp_gpipe_step(pp_rank *r) {
    if (pp_rank_id(r) == 0) {
        pthread_t t;
        pthread_create(&t, NULL, crash, NULL);
        pp_recv(r, 1, pp_tag(PP_BWD, 0, 0));
    } else if (pp_rank_id(r) == 1) {
        struct timespec pause = {0, 300000000};
        nanosleep(&pause, NULL);
        pp_recv(r, 0, pp_tag(PP_FWD, 0, 1));
    }
}
