/* cmd_info.c: `pplab info`: what was compiled in and whether it works on this machine, the sandbox included. */
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "impl.h"
#include "landlock.h"
#include "policy.h"
#include "transport.h"
#include "view.h"

/* How grading would jail a submission here: what the probe finds, in the words of docs/design.md. */
static void sandbox_describe(FILE *f) {
    pp_sandbox sb;
    char err[600];
    pp__sandbox_defaults(&sb);
    int abi = pp__landlock_abi();
    fprintf(f, "sandbox:\n");
    if (pp__sandbox_probe(&sb, err, sizeof err) || pp__view_resolve(sb.view, sb.drop_uid, sb.uid, &sb.view, err, sizeof err)) {
        fprintf(f, "  refused   %s\n", err);
        return;
    }
    char build[4096], root[4096], driver[4200];
    pp__impl_dirs(build, root, sizeof build);
    snprintf(driver, sizeof driver, "%s/pplab-driver", build);
    if (pp__sandbox_check_driver(&sb, driver, err, sizeof err)) {
        fprintf(f, "  refused   %s\n", err);
        return;
    }
    char landlock[64];
    snprintf(landlock, sizeof landlock, abi ? "Landlock ABI %d" : "no Landlock (the filter alone closes files)", abi);
    fprintf(f, "  drivers   seccomp allow list, %s, %s\n",
            sb.drop_uid ? "a uid of each test's own and an empty root (root)" : "this user's uid (not root)", landlock);
    fprintf(f, "  builds    view %s%s\n", pp__view_name(sb.view),
            sb.view == PP_VIEW_NAMESPACES ? ": bubblewrap, only the toolchain and the build folder exist"
            : sb.view == PP_VIEW_LANDLOCK ? ": no namespaces here; Landlock opens only the toolchain and the build folder"
                                          : ": neither namespaces nor Landlock; only the uid and the files' modes");
}

static const char usage[] =
    "usage: pplab info\n"
    "Prints pplab's version, the backends and transports compiled in and whether each is usable here, and how\n"
    "grading would sandbox a submission on this machine.\n";

static int info_main(int argc, char **argv) {
    pp__cli_parse(&pp__cli_info, NULL, 0, argc, argv, NULL, NULL);
    printf("pplab %s\n", pp_version());
    printf("backends:\n");
    pp__backend_describe_all(stdout);
    printf("transports:\n");
    pp__transport_describe_all(stdout);
    sandbox_describe(stdout);
    return 0;
}

const pp_cli_command pp__cli_info = {
    .name = "info",
    .summary = "backends and transports compiled in, and usable here",
    .usage = usage,
    .main = info_main,
};
