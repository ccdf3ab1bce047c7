/* main.c: pplab's command line: run, grade, info, bench, figures, similar; help and --version. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cpu/cpu_kernels.h"

/* `pplab help`: the commands from their table, so that a new one is listed by being added there. */
static void commands(FILE *out) {
    fprintf(out, "usage: pplab <command> [flag ...]\n");
    for (int i = 0; i < pp__cli_ncommands; i++) {
        const pp_cli_command *c = pp__cli_commands[i];
        if (c->summary) fprintf(out, "  %-9s %s\n", c->name, c->summary);
    }
    fprintf(out, "  help      this list; pplab help COMMAND (or pplab COMMAND --help): the command's flags\n"
                 "Every flag takes its value as --flag VALUE or --flag=VALUE. pplab --version prints the version.\n");
}

int main(int argc, char **argv) {
    pp__cpu_blas_settle(argv);
    if (argc < 2) {
        commands(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || (!strcmp(cmd, "help") && argc == 2)) {
        commands(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("pplab %s\n", pp_version());
        return 0;
    }
    if (!strcmp(cmd, "help")) {
        const pp_cli_command *c = pp__cli_command(argv[2]);
        if (!c || argc > 3) {
            fprintf(stderr, "pplab help: %s '%s': use pplab help COMMAND with one of run, grade, info, bench, "
                    "figures or similar\n", c ? "one command only, got" : "unknown command", c ? argv[3] : argv[2]);
            return 2;
        }
        pp__cli_help(stdout, c);
        return 0;
    }
    const pp_cli_command *c = pp__cli_command(cmd);
    if (!c) {
        fprintf(stderr, "pplab: unknown command '%s': use run, grade, info, bench, figures or similar (pplab help)\n",
                cmd);
        return 2;
    }
    pp__cli_set_command(cmd);
    return c->main(argc, argv);
}
