/* HOSTILE ON PURPOSE (whoami): reports who it runs as and what it inherited, to see what a schedule could reach.
 * tests/test_hostile.c asserts what it sees. */
#include <stdio.h>
#include <unistd.h>

#include "pp.h"

void pp_gpipe_step(pp_rank *r) {
    if (pp_rank_id(r) != 0) return;
    int open_fds = 0;
    for (int fd = 0; fd < 1024; fd++) open_fds += lseek(fd, 0, SEEK_CUR) >= 0 || write(fd, "", 0) == 0;
    printf("whoami uid=%d euid=%d gid=%d fds=%d\n", (int)getuid(), (int)geteuid(), (int)getgid(), open_fds);
}
