/* HOSTILE ON PURPOSE (object exec-driver): starts a program again, through any descriptor that might still
 * hold one. */
#include "sys.h"
#include "pp.h"
void pp_gpipe_step(pp_rank *r) {
    char *argv[] = {"x", 0}, *envp[] = {0};
    for (int fd = 3; fd < 8; fd++) sys(NR_execveat, fd, "", argv, envp, 0x1000 /* AT_EMPTY_PATH */);
    (void)r;
}
