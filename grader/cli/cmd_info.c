/* cmd_info.c: `pplab info`: what was compiled in and whether it works on this machine, the sandbox included. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "impl_build.h"
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
    if (pp__sandbox_probe(&sb, err, sizeof err) || pp__sandbox_view(&sb, sb.view, err, sizeof err)) {
        fprintf(f, "  refused   %s\n", err);
        return;
    }
    char driver[4096];
    pp__impl_driver(driver, sizeof driver);
    if (pp__sandbox_check_driver(&sb, driver, err, sizeof err)) {
        fprintf(f, "  refused   %s\n", err);
        return;
    }
    char landlock[64];
    snprintf(landlock, sizeof landlock, abi ? "Landlock ABI %d" : "no Landlock (the filter alone closes files)", abi);
    fprintf(f, "  drivers   seccomp allow list, %s, %s\n",
            sb.drop_uid ? "a uid of each test's own and an empty root (root)" : "this user's uid (not root)", landlock);
    /* why there are no namespaces, from what pp__sandbox_view decided on: bubblewrap absent, or present and
     * refused (a container's seccomp profile, as Docker's and Podman's default ones, or a kernel that allows no
     * unprivileged user namespaces) */
    const char *why = pp__view_bwrap() ? "bubblewrap cannot make namespaces here (user namespaces refused, as in a "
                                         "container under Docker's default seccomp profile)"
                                       : "bubblewrap is not installed (apt-get install bubblewrap)";
    if (sb.view == PP_VIEW_NAMESPACES)
        fprintf(f, "  builds    view namespaces: bubblewrap, only the toolchain and the build folder exist\n");
    else if (sb.view == PP_VIEW_LANDLOCK)
        fprintf(f, "  builds    view landlock, the fallback: %s; Landlock opens only the toolchain and the build "
                "folder\n", why);
    else
        fprintf(f, "  builds    view none: %s, and Landlock is absent or refused (a kernel before 5.13, or Docker's "
                "profile before release 23); only the uid and the files' modes\n",
                why);
}

static const char usage[] =
    "usage: pplab info [--lab-files]\n"
    "Prints pplab's version, the backends and transports compiled in and whether each is usable here, and how\n"
    "grading would sandbox a submission on this machine.\n";

/* The one table of info's flags. */
static int info_table(int *lab_files, pp_flag *out) {
    const pp_flag f[] = {
        {.name = "--lab-files", .kind = PP_FLAG_SET, .to = lab_files, .set = 1,
         .help = "print only each lab's file, one a line, as a submission holds them (00-warmup/warmup.c ...), "
                 "from the schedule table: what an autograder script copies"},
    };
    memcpy(out, f, sizeof f);
    return (int)(sizeof f / sizeof *f);
}

static int info_flags(pp_flag *out) {
    static int defaults;
    return info_table(&defaults, out);
}

static int info_main(int argc, char **argv) {
    static int lab_files;
    pp_flag flags[PP_CLI_MAX_FLAGS];
    pp__cli_parse(&pp__cli_info, flags, info_table(&lab_files, flags), argc, argv, NULL, NULL);
    if (lab_files) {
        for (int l = 0; l < pp__nlabs; l++) printf("%s/%s.c\n", pp__labs[l].folder, pp__labs[l].file);
        return 0;
    }
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
    .flags = info_flags,
    .main = info_main,
};
