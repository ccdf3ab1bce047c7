/* cli.h: flag parsing shared by pplab's subcommands: every bad flag or value ends in one line naming it. */
#ifndef PP_CLI_H
#define PP_CLI_H

#include "runtime.h"

/* Options of `pplab run` (and the run-shaped part of other subcommands). */
typedef struct pp_cli_run {
    pp_run_config cfg;
    const char *impl;          /* --impl: labs (default), solutions or a folder */
    int timeline, forward_only;
    int batch;                 /* --batch B: micro-batch size B / M (0: use --microbatch-size) */
    int wall;
    int per_rank;
    int canonical;
    unsigned given;            /* which of --schedule, --stages, --microbatches were given (PP_CLI_GIVEN_*) */             /* --canonical: replay the ideal schedule instead of running an implementation */              /* --per-rank: also print each rank's idle share */                  /* --wall: also print the wall-clock bubble (always on for GPU backends) */
    const char *plot;          /* --plot FILE.png */
    const char *trace;         /* --trace FILE.csv */
} pp_cli_run;

enum { PP_CLI_GIVEN_SCHEDULE = 1, PP_CLI_GIVEN_STAGES = 2, PP_CLI_GIVEN_MICROBATCHES = 4, PP_CLI_GIVEN_CHUNKS = 8 };

/* Parses an integer flag value within [lo, hi]; dies with "pplab: --flag needs ..." otherwise. */
int pp__cli_int(const char *flag, const char *val, int lo, int hi);
/* Names the subcommand whose flags are being parsed (main sets it), for the messages of pp__cli_int,
 * pp__cli_num and pp__cli_value; "run" until set. */
void pp__cli_set_command(const char *cmd);
/* Parses a non-negative number. */
double pp__cli_num(const char *flag, const char *val);
/* The value after argv[*i] (advancing *i), or dies with "--flag needs a value". */
const char *pp__cli_value(int argc, char **argv, int *i);
/* Prints a command's usage text with "{schedules}" and "{labs}" replaced by the names of the schedule table
 * ("naive|gpipe|...") and of the labs ("warmup|naive|..."): usage never lists a schedule by hand. */
void pp__cli_usage(FILE *out, const char *usage);
/* Prints "pplab <cmd>: <msg>" and a usage hint to stderr, exits 2. */
void pp__cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* One flag of a command, for pp__cli_flag: every command's flags are a table of these, parsed the same way. */
typedef enum {
    PP_FLAG_STR,   /* to: const char **; the next argument */
    PP_FLAG_INT,   /* to: int *; an integer in [lo, hi] */
    PP_FLAG_UINT,  /* to: unsigned *; an integer in [lo, hi] */
    PP_FLAG_MIB,   /* to: size_t *; an integer of MiB in [lo, hi], stored in bytes */
    PP_FLAG_NUM,   /* to: double *; a number >= 0 (and > 0 when lo > 0) */
    PP_FLAG_FLOAT, /* to: float *; the same */
    PP_FLAG_SET,   /* to: int *; no value: stores `set` */
} pp_flag_kind;

typedef struct pp_flag {
    const char *name;   /* "--stages" */
    pp_flag_kind kind;
    void *to;
    double lo, hi;      /* the range of INT, UINT, MIB */
    int set;            /* what SET stores */
    unsigned *given;    /* when not NULL, `bit` is or'ed in once the flag is seen */
    unsigned bit;
    const char *alias;  /* a second spelling ("-j"), or NULL */
    const char *need;   /* an INT flag's "needs ..." for a bad value, when the default does not say enough */
} pp_flag;

/* Parses argv[*i] if it is one of the n flags: stores its value (advancing *i past it) and returns 1; 0 when it
 * is none of them. A missing or bad value ends in one line naming the flag (pp__cli_fail). */
int pp__cli_flag(const pp_flag *flags, int n, int argc, char **argv, int *i);

/* Parses one run flag at argv[*i] into o; returns 1 if it was one, 0 if not a run flag. */
int pp__cli_run_flag(pp_cli_run *o, int argc, char **argv, int *i);
/* Settles flags that depend on each other once all are parsed (--batch over --microbatches); dies on a conflict. */
void pp__cli_run_finish(pp_cli_run *o);
/* Defaults that depend on the schedule (two chunks for the V schedules unless --chunks says otherwise); call after
 * the flags, before the configuration is checked. */
void pp__cli_run_defaults(pp_cli_run *o);

int pp__cmd_run(int argc, char **argv);
int pp__cmd_info(int argc, char **argv);
int pp__cmd_grade(int argc, char **argv);
/* `pplab grade-one`: one graded test on the mpi transport, started by `pplab grade --transport mpi` under
 * mpirun (every process runs it; rank 0 writes the result). Not meant to be typed: its flags may change. */
int pp__cmd_grade_one(int argc, char **argv);
int pp__cmd_bench(int argc, char **argv);
int pp__cmd_figures(int argc, char **argv);

/* The median of x[0..n-1] (n >= 1); reorders x. For the figures pplab run and pplab bench print. */
double pp__cli_median(double *x, int n);

#endif /* PP_CLI_H */
