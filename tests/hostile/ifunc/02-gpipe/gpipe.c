/* HOSTILE ON PURPOSE (ifunc): defines an ifunc whose resolver runs while the program is being relocated.
 * tests/test_hostile.c asserts what stops it. */
#include <stdio.h>

#include "pp.h"

static void real_helper(void) {}
static void (*resolve_helper(void))(void) {
    fopen("/etc/shadow", "r");
    return real_helper;
}
void helper(void) __attribute__((ifunc("resolve_helper")));

void pp_gpipe_step(pp_rank *r) { helper(); (void)r; }
