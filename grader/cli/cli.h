/* cli.h: pplab's commands and their flags. Each command's flags are one table of pp_flag rows that both the
 * parser and the command's --help read, so a flag the parser takes is always in the help, with its default.
 * Every bad flag or value ends in one line naming it and what to do. */
#ifndef PP_CLI_H
#define PP_CLI_H

#include "labs.h"
#include "runtime.h"
#include "replay.h"

/* Options of `pplab run` that are not the run's configuration itself. */
typedef struct pp_cli_run {
    pp_run_config cfg;
    const char *schedule;      /* --schedule NAME, which pp__cli_run_defaults turns into cfg.schedule's row */
    const char *impl;          /* --impl: labs (default), solutions or a folder */
    int timeline, forward_only;
    int batch;                 /* --batch B: micro-batch size B / M (0: use --microbatch-size) */
    int wall;                  /* --wall: also print the wall-clock bubble (always on for GPU backends) */
    int per_rank;              /* --per-rank: also print each rank's idle share */
    int canonical;             /* --canonical: replay the ideal schedule instead of running an implementation */
    unsigned given;            /* which of --schedule, --stages, --microbatches, --chunks, --vocab were given
                                  (PP_CLI_GIVEN_*) */
    const char *plot;          /* --plot FILE.png */
    const char *trace;         /* --trace FILE.csv */
    const char *export_order;  /* --export-order FILE.csv: the order as PyTorch's compute-only CSV */
    const char *order;         /* --order FILE.csv: run the order in FILE instead of a lab */
} pp_cli_run;

enum {
    PP_CLI_GIVEN_SCHEDULE = 1, PP_CLI_GIVEN_STAGES = 2, PP_CLI_GIVEN_MICROBATCHES = 4, PP_CLI_GIVEN_CHUNKS = 8,
    PP_CLI_GIVEN_VOCAB = 16
};

/* Parses an integer flag value within [lo, hi]; dies with "pplab: --flag needs ..." otherwise. */
int pp__cli_int(const char *flag, const char *val, int lo, int hi);
/* Names the subcommand whose flags are being parsed (main sets it), for the messages of pp__cli_int,
 * pp__cli_num and the notices of old flag names; "run" until set. */
void pp__cli_set_command(const char *cmd);
/* Parses a non-negative number. */
double pp__cli_num(const char *flag, const char *val);
/* Prints text with "{schedules}", "{chunked}" and "{labs}" replaced by the names of the schedule table
 * ("naive, gpipe, ... or dualpipev"), of its rows that take --chunks, and of the labs: help never lists a
 * schedule by hand. */
void pp__cli_usage(FILE *out, const char *text);
/* 0 when a report could be written to path later without changing anything now: its folder exists and this user
 * may write there, and path is not a folder nor a file it may not write. -1 with "PATH: why" in err. */
int pp__cli_writable(const char *path, char *err, size_t len);
/* Prints "pplab <cmd>: <msg>" and a usage hint to stderr, exits 2. */
void pp__cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* How pp__cli_fail and --help end the process: fn(status), which must not return (longjmp), instead of exit;
 * NULL restores exit. For a program that parses many command lines in one process. */
void pp__cli_set_exit(void (*fn)(int status));

/* One flag of a command: every command's flags are a table of these, parsed the same way and listed in its
 * --help from the same rows. */
typedef enum {
    PP_FLAG_STR,    /* to: const char **; the value as given */
    PP_FLAG_INT,    /* to: int *; an integer in [lo, hi] */
    PP_FLAG_UINT,   /* to: unsigned *; an integer in [lo, hi] */
    PP_FLAG_MIB,    /* to: size_t *; an integer of MiB in [lo, hi], stored in bytes */
    PP_FLAG_NUM,    /* to: double *; a number >= 0 (and > 0 when lo > 0) */
    PP_FLAG_FLOAT,  /* to: float *; the same */
    PP_FLAG_CHOICE, /* to: int * (or an enum's storage); the index of the value in `choices` */
    PP_FLAG_SET,    /* to: int *; no value: stores `set` */
} pp_flag_kind;

typedef struct pp_flag {
    const char *name;    /* "--stages" */
    pp_flag_kind kind;
    void *to;
    double lo, hi;       /* the range of INT, UINT, MIB */
    int set;             /* what SET stores */
    unsigned *given;     /* when not NULL, `bit` is or'ed in once the flag is seen */
    unsigned bit;
    const char *alias;   /* a second spelling ("-j"), or NULL */
    const char *need;    /* an INT flag's "needs ..." for a bad value, when the default does not say enough */
    const char *choices; /* CHOICE: the values, "|" between them ("sgd|adamw") */
    /* what --help says of it */
    const char *arg;     /* the value's name ("P", "FILE.png"); NULL: N for integers, X for numbers, MiB, the
                            choices, VALUE */
    const char *help;    /* what it does (wrapped by the help; {schedules}, {chunked} and {labs} expand) */
    const char *dflt;    /* the default in words ("one per CPU"), or "required"; NULL: what *to holds when the
                            table is made ("off" for SET, "none" for a NULL string) */
    int for_tests;       /* 1: for the kit's own tests and diagnosis: listed apart, marked as such */
    const char *old;     /* a former name, still accepted with a one-line notice naming this one; or NULL */
} pp_flag;

/* The most rows a command's table has. */
#define PP_CLI_MAX_FLAGS 64

/* Parses argv[*i] if it is one of the n flags, as "--flag value" or "--flag=value": stores its value (advancing
 * *i past a separate value) and returns 1; 0 when it is none of them. A missing or bad value, a value given
 * to a flag that takes none, or a flag given a second time in one parse, ends in one line naming the flag (pp__cli_fail); a former name works after a
 * notice on stderr ("pplab grade: --plots is now --plot-dir"), once per name and process. */
int pp__cli_flag(const pp_flag *flags, int n, int argc, char **argv, int *i);

/* A command of pplab: what `pplab help` lists, what `pplab CMD --help` prints, and where it starts. */
typedef struct pp_cli_command {
    const char *name;    /* "run" */
    const char *summary; /* its line in `pplab help`; NULL for a command not meant to be typed (grade-one) */
    const char *usage;   /* the hand-written top of --help: "usage: ..." and what the command does */
    const char *notes;   /* the hand-written end of --help (exit status, ...), or NULL */
    /* Writes the command's flags into out (room for PP_CLI_MAX_FLAGS), their storage holding the defaults;
     * returns how many. The table the command parses with, so --help cannot leave one out. */
    int (*flags)(pp_flag *out);
    int (*main)(int argc, char **argv); /* argv[1] is the command's name */
} pp_cli_command;

/* The commands, in the order `pplab help` lists them (grade-one last, unlisted). */
extern const pp_cli_command *const pp__cli_commands[];
extern const int pp__cli_ncommands;
/* The command called name, or NULL. */
const pp_cli_command *pp__cli_command(const char *name);
/* Prints cmd's --help: its usage text, then its flags from its table (each with its default, the ones for the
 * kit's own tests apart), then its notes. */
void pp__cli_help(FILE *out, const pp_cli_command *cmd);
/* Parses a command's argv[2..] with its table: --help or -h anywhere prints pp__cli_help and exits 0; each flag
 * is stored; any other argument not starting with "-" goes to operand when there is one (which refuses what
 * it cannot take with a line of its own), else it is an unknown flag (one line). */
void pp__cli_parse(const pp_cli_command *cmd, const pp_flag *flags, int n, int argc, char **argv,
                   void (*operand)(void *ctx, const char *arg), void *ctx);

/* Settles flags that depend on each other once all are parsed (--batch over --microbatches); dies on a conflict. */
void pp__cli_run_finish(pp_cli_run *o);
/* The schedule's row from --schedule (an unknown name ends the command with the table's names), and the defaults
 * that depend on it (two chunks for interleaved and the V schedules unless --chunks says otherwise); call after
 * the flags, before the configuration is checked. Returns 1 when it chose the chunks
 * of a schedule that could take others (interleaved), which the run then says. */
int pp__cli_run_defaults(pp_cli_run *o);

/* --order: reads o->order into s (freed with pp__schedule_free) and settles o's shape from it: --stages from its
 * rows, --chunks from its stages, --microbatches from its largest micro-batch unless given (at least that); dies
 * with one line on a file it cannot read, a placement or shape the named schedule does not have, --canonical,
 * --recompute, a data-parallel schedule or another transport. Call after the defaults, before the check. */
void pp__cli_order_load(pp_cli_run *o, pp_schedule *s);
/* Grades a completed --order run as pplab grade grades a test of c's schedule (pp__schedule_lab_check: the
 * full-batch reference, every check), and prints the test's line and its failed checks. Returns 0 at full marks,
 * else 1. */
int pp__cli_order_grade(const pp_run_config *c, const pp_run_result *res, const char *path);

/* ---- what the commands that run a lab share (launch.c) ---- */

/* Under mpirun or srun: checks the launch (the transport whose ranks are processes compiled in, as many processes
 * as ranks) and switches cfg to that transport. Returns the process's rank (0 when no launcher started it; only
 * rank 0 prints), or -1 when the launch is wrong (rank 0 says why, as "pplab CMD: ...").
 * Rank 0 speaks for the job, exit status included: the other processes exit 0 even when the run failed, since
 * the launcher kills the whole job at the first non-zero exit, which could stop rank 0 before its report is out;
 * mpirun and srun still exit non-zero, from rank 0's status. */
int pp__cli_launch_check(const char *cmd, pp_run_config *cfg);
/* Builds the lab of --impl `impl` and sets prog up to run it on P ranks: sandboxed drivers (sb; as grading runs it),
 * or the shared object in this process (in_process). Returns 0, or once rank 0 (me) said what went wrong, 2 for a
 * folder that is not there (a usage error) and 1 for the rest. Before the transport starts: no fork() after
 * MPI_Init. */
int pp__cli_program_start(const char *cmd, const char *impl, int P, int in_process, pp_sandbox *sb,
                          const pp_lab_info *lab, pp_program *prog, int me);
/* After the run: the drivers' host closed, and as root whatever their uid left. */
void pp__cli_program_end(pp_sandbox *sb, int in_process);

extern const pp_cli_command pp__cli_run, pp__cli_grade, pp__cli_info, pp__cli_train, pp__cli_bench,
    pp__cli_figures, pp__cli_similar, pp__cli_grade_one;

/* The median of x[0..n-1] (n >= 1); reorders x. For the figures pplab run and pplab bench print. */
double pp__cli_median(double *x, int n);

#endif /* PP_CLI_H */
