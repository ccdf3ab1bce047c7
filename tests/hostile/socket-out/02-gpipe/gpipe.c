/* HOSTILE ON PURPOSE (socket-out): opens a socket to send what it found elsewhere.
 * tests/test_hostile.c asserts what stops it. */
#include <sys/socket.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    socket(AF_INET, SOCK_STREAM, 0);
    (void)r;
}
