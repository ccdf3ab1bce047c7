/* fuzz_cli.c: pplab's command line as a user types it: the input's first byte picks a command of pp__cli_commands,
 * the rest split at its NUL bytes is argv[2..], parsed with the command's own table (cmd->flags, what its main
 * parses with and --help lists) by pp__cli_parse; pplab run's parse goes on through the checks its main makes
 * before it runs anything (pp__cli_run_defaults, pp__config_check, pp__cli_run_finish). The command's main is
 * never called: past its parse it would grade or run. A refusal ends in pp__cli_fail, whose way out is a longjmp
 * back here (pp__cli_set_exit) instead of exit. Every command line is either taken, with nothing on stderr but
 * the once-per-process notices of former flag names, or refused with status 2 and exactly one line naming the
 * command ("pplab grade: ... (see: pplab grade --help)"), or answered with the help on stdout and status 0. */
#include <setjmp.h>
#include <stddef.h>

#include "cli.h"
#include "fuzz.h"

#define MAX_ARGS 64

static jmp_buf out;
static int exit_status;

static void leave(int status) {
    exit_status = status;
    longjmp(out, 1);
}

/* The commands that take a word that is not a flag (pplab figures DIR, pplab bench WHICH): their own operand
 * functions are their mains' and refuse what they would refuse at run time; here any word is taken. */
static void take_operand(void *ctx, const char *arg) { (void)ctx, (void)arg; }

static int takes_operand(const char *cmd) { return !strcmp(cmd, "figures") || !strcmp(cmd, "bench"); }

/* What pplab run checks between its parse and its run (cmd_run.c's run_main), on the options its table parsed
 * into: everything but the files it would write. Refusals end in pp__cli_fail as there. */
static void run_checks(const pp_cli_run *parsed) {
    pp_cli_run o = *parsed;
    char err[4096];
    if (o.forward_only && !o.timeline) pp__cli_fail("run", "--forward-only only applies with --timeline");
    (void)pp__cli_run_defaults(&o);
    if (strcmp(o.cfg.backend, "cpu") && strcmp(o.cfg.backend, "cuda"))
        pp__cli_fail("run", "unknown backend '%s': use cpu or cuda", o.cfg.backend);
    if (strcmp(o.cfg.transport, "threads") && strcmp(o.cfg.transport, "mpi") && strcmp(o.cfg.transport, "nccl"))
        pp__cli_fail("run", "unknown transport '%s': use threads, mpi or nccl", o.cfg.transport);
    if (pp__config_check(&o.cfg, err, sizeof err)) pp__cli_fail("run", "%s", err);
    pp__cli_run_finish(&o);
    if (pp__config_check(&o.cfg, err, sizeof err)) pp__cli_fail("run", "%s", err);
}

/* The pp_cli_run a table parses into, when it is pplab run's: the one whose `given` bits its flags set. Other
 * tables keep `given` bits too (pplab train's --chunks) in structs of their own, so the command is asked first. */
static const pp_cli_run *run_options(const pp_cli_command *cmd, const pp_flag *flags, int n) {
    if (cmd != &pp__cli_run) return NULL;
    for (int i = 0; i < n; i++)
        if (flags[i].given) return (const pp_cli_run *)((const char *)flags[i].given - offsetof(pp_cli_run, given));
    return NULL;
}

/* Skips the notices of former flag names at the start of text, which a parse prints once per process before
 * its verdict if it has one: lines exactly "pplab CMD: OLD is now NEW" for a row of the table. */
static const char *past_notices(const char *text, const char *cmd, const pp_flag *flags, int n) {
    for (int k = 0; k < n; k++) {
        if (!flags[k].old) continue;
        char notice[160];
        snprintf(notice, sizeof notice, "pplab %s: %s is now %s\n", cmd, flags[k].old, flags[k].name);
        if (!strncmp(text, notice, strlen(notice))) return past_notices(text + strlen(notice), cmd, flags, n);
    }
    return text;
}

/* Parses argv with cmd's table as its main would; returns with what it wrote to stderr and stdout (malloc'd)
 * and exit_status: -1 when the command line was taken, else the status it would have exited with. */
static void parse_once(const pp_cli_command *cmd, const pp_flag *flags, int n, int argc, char **argv, char **said,
                       char **printed) {
    /* both streams go to memory for this input (glibc's streams are variables); the sanitizers write to the file
     * descriptor and stay visible */
    size_t said_len = 0, printed_len = 0;
    FILE *err = open_memstream(said, &said_len), *std = open_memstream(printed, &printed_len);
    if (!err || !std) abort();
    FILE *real_err = stderr, *real_out = stdout;
    stderr = err, stdout = std;
    pp__cli_set_exit(leave);
    pp__cli_set_command(cmd->name);
    exit_status = -1;
    if (!setjmp(out)) {
        pp__cli_parse(cmd, flags, n, argc, argv, takes_operand(cmd->name) ? take_operand : NULL, NULL);
        const pp_cli_run *run = run_options(cmd, flags, n);
        if (run) run_checks(run);
    }
    pp__cli_set_exit(NULL);
    stderr = real_err, stdout = real_out;
    fclose(err);
    fclose(std);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const pp_cli_command *cmd = pp__cli_commands[data[0] % pp__cli_ncommands];
    char *args = fuzz_string(data + 1, size - 1);
    char *argv[MAX_ARGS + 3] = {"pplab", (char *)cmd->name};
    int argc = 2, newline = 0;
    for (size_t at = 0; at < size - 1 && argc < MAX_ARGS + 2; at += strlen(args + at) + 1) {
        argv[argc++] = args + at;
        newline |= strchr(args + at, '\n') != NULL;
    }
    argv[argc] = NULL;

    pp_flag flags[PP_CLI_MAX_FLAGS];
    int n = cmd->flags(flags);
    fuzz_require(n > 0 && n <= PP_CLI_MAX_FLAGS, "%s has %d flags", cmd->name, n);

    char *said = NULL, *printed = NULL;
    parse_once(cmd, flags, n, argc, argv, &said, &printed);

    char prefix[64], see[96];
    snprintf(prefix, sizeof prefix, "pplab %s: ", cmd->name);
    snprintf(see, sizeof see, " (see: pplab %s --help)\n", cmd->name);
    const char *verdict = past_notices(said, cmd->name, flags, n);
    if (exit_status == -1) {
        fuzz_require(!*verdict, "pplab %s took its command line but said: %s", cmd->name, verdict);
    } else if (exit_status == 0) {
        fuzz_require(strstr(printed, "usage: ") && strstr(printed, "--help"), "pplab %s's help: %s", cmd->name,
                     printed);
        fuzz_require(!*said, "pplab %s printed its help and said: %s", cmd->name, said);
    } else {
        fuzz_require(exit_status == 2, "pplab %s refused with status %d", cmd->name, exit_status);
        size_t len = strlen(verdict), tail = strlen(see);
        fuzz_require(!strncmp(verdict, prefix, strlen(prefix)), "a refusal that does not name pplab %s: %s",
                     cmd->name, verdict);
        fuzz_require(len > tail && !strcmp(verdict + len - tail, see), "a refusal that does not end in%s: %s", see,
                     verdict);
        /* one line: unless the user's own words hold a newline, which the refusal quotes as given */
        fuzz_require(newline || strchr(verdict, '\n') == verdict + len - 1, "a refusal of more than one line: %s",
                     verdict);
        fuzz_require(!*printed, "pplab %s refused and printed: %s", cmd->name, printed);
    }
    free(said);
    free(printed);
    free(args);
    return 0;
}
