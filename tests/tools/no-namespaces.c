/* no-namespaces: runs a command the way Docker's default seccomp profile runs a container's processes, as far as
 * the sandbox can tell: unshare, setns and every clone that asks for a new namespace fail with EPERM, and clone3
 * with ENOSYS (so that glibc falls back to clone, whose flags the filter can read). The kit's Gradescope test runs
 * the autograder's scripts under it, as root, to grade as Gradescope does.
 *   no-namespaces COMMAND [ARG ...] */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: no-namespaces COMMAND [ARG ...]\n");
        return 2;
    }
    static const unsigned long new_ns[] = {CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,   CLONE_NEWUSER,
                                           CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP};
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
    int rc = !f ? -ENOMEM : 0;
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0);
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setns), 0);
    if (!rc) rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    /* one rule per flag: rules for one call are or'ed, and any new namespace is refused */
    for (size_t i = 0; !rc && i < sizeof new_ns / sizeof *new_ns; i++)
        rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, new_ns[i], new_ns[i]));
    if (!rc) rc = seccomp_load(f);
    if (rc) {
        fprintf(stderr, "no-namespaces: cannot install the filter: %s\n", strerror(rc < 0 ? -rc : rc));
        return 2;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "no-namespaces: %s: %s\n", argv[1], strerror(errno));
    return 127;
}
