/* HOSTILE ON PURPOSE (interpose-lockdown): defines prctl and seccomp_load of its own so the driver's lockdown would do nothing, then opens a file.
 * tests/test_hostile.c asserts what stops it. */
#include <stdio.h>

#include "pp.h"

int prctl(int option, ...) { (void)option; return 0; }
int seccomp_load(void *ctx) { (void)ctx; return 0; }

void pp_gpipe_step(pp_rank *r) {
    FILE *f = fopen("/etc/hostname", "r");
    if (f) puts("the lockdown was bypassed");
    (void)r;
}
