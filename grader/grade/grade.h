/* grade.h: what a graded test is, what it reports, and the pieces of the grader that produce it.
 * A test = (lab, configuration). Its schedule runs in sandboxed drivers under a supervisor with a time limit
 * (runner.h); only raw data comes back, in a file, and the grader computes every check and score itself. */
#ifndef PP_GRADE_H
#define PP_GRADE_H

#include <stdint.h>
#include <stdio.h>

#include "runtime.h"

#define PP_MAX_CHECKS 12
#define PP_MAX_RANKS 64

typedef struct pp_check {
    char name[48];          /* "gradients", "weights after K steps", "bubble", ... */
    double points, max;
    int passed;
    int better;             /* passed, and the run did better than the canonical order (a smaller bubble, fewer
                               stashes on some rank): the message says by how much and where */
    char msg[600];          /* expected vs seen, and a hint when it failed */
} pp_check;

/* One graded configuration. */
typedef struct pp_test_config {
    char lab[16];           /* naive, gpipe, 1f1b, interleaved, warmup */
    char part[16];          /* warm-up only: one of pp__warmup_part() (bubble, peaks, ...) */
    int P, M, v, steps, layers;
    unsigned seed;          /* the model's weights and data; a warm-up part's cases when drawn is set */
    double latency;
    int recompute;
    double time_limit_s;
    int hidden;             /* hidden size of the model; 0: default */
    char layout[64];        /* --layout: blocks per virtual stage ("first:3,last:3"); "": as even as possible */
    double edge;            /* --edge-cost: the embedding's and the head's extra forward cost */
    int D;                  /* --dp: replicas (0 or 1: one pipeline) */
    int T;                  /* --tp: tensor-parallel shards of each stage (0 or 1: none) */
    int cap;                /* lab 09: live activation stashes per rank, at most (0: P * v) */
    int node_size;          /* --node-size: ranks per node of a topology (0: none) */
    char placement[4];      /* --placement: the axes' order ("": tdp) */
    double alpha, beta;     /* --reduce-alpha, --reduce-beta when D > 1; negative: the defaults */
    int secret;             /* 1 for configurations from an instructor's --config file (hidden tests) */
    int on_gpu;             /* the default set's: 1 when also in the smaller set a CUDA grading run uses */
    int drawn;              /* warm-up only: 1 when the part's cases are drawn from seed (a hidden configuration's
                             * warmup-seed line), 0 for its fixed public cases */
    unsigned char file_sha256[32]; /* warm-up only: the graded file's SHA-256, set by the runner from its build:
                             * with seed, the key of the drawn cases, so that each file is asked its own */
} pp_test_config;

typedef struct pp_test_result {
    char name[96];          /* "gpipe P=4 M=8 seed=3" */
    pp_test_config cfg;
    pp_status status;       /* PP_OK when the run itself completed */
    char error[1200];       /* the run's failure (deadlock report, misuse...), truncated */
    pp_check checks[PP_MAX_CHECKS];
    int nchecks;
    double score, max;
    /* figures for tables and reports */
    double bubble, theory;
    double exposed, exposed_theory; /* lab 07: exposed communication measured and in theory (0 elsewhere) */
    int peak[PP_MAX_RANKS];
    int peak_bound[PP_MAX_RANKS];
    double grad_err;        /* worst per-tensor relative error of the gradients */
    double weight_err;      /* worst per-tensor relative error of the weights after K steps (-1: not compared) */
    double loss_err;        /* worst relative error of a step's loss (-1: not compared) */
    double seconds;
    int timed_out, crashed;
    char output_tail[1500]; /* the last lines the student's code printed (filled by the parent) */
} pp_test_result;

/* 1 when r's test could not be graded: pplab or the machine failed (a supervisor or reference process that died,
 * mpirun that would not start, ranks lost with their node), not the submission, so its points are no grade. */
static inline int pp__test_ungraded(const pp_test_result *r) {
    return r->status == PP_ERR_INTERNAL || r->status == PP_ERR_LOST;
}

/* Adds a check to r (points earned = passed ? max : 0, unless partial is set by the caller afterwards). */
pp_check *pp__check_add(pp_test_result *r, const char *name, double max, int passed, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

typedef struct pp_sandbox pp_sandbox;
typedef struct pp_wire pp_wire;
typedef struct pp_warmup_fns pp_warmup_fns;

/* The warm-up, in two halves, which draw the same cases from cfg alone (its public cases, or when cfg->drawn
 * those of cfg->seed). In the test's supervisor: starts a driver of the student's warm-up file (sb, whose
 * exe_fd is open), or calls fns in this process when given (the unsandboxed debugging mode), and makes every
 * call part cfg->part needs, appending the answers to rec; returns PP_OK, or how the driver failed with one
 * line in err. In the grader: replays the same calls on the recorded answers (len bytes at rec) and fills out
 * with the part's checks and score. */
pp_status pp__warmup_record(const pp_test_config *cfg, const pp_sandbox *sb, const pp_warmup_fns *fns, pp_wire *rec,
                            char *err, size_t len);
void pp__warmup_grade(const pp_test_config *cfg, const void *rec, size_t len, pp_test_result *out);
/* A warm-up part that could not be graded (a crash, a timeout, a refused call): every check of the part with 0
 * points, status st and msg as the error. */
/* The warm-up's parts, in order ("bubble", "peaks", ...): the default set grades each, a config file names them. */
int pp__warmup_nparts(void);
const char *pp__warmup_part(int i);
void pp__warmup_fail(const pp_test_config *cfg, pp_status st, const char *msg, pp_test_result *out);
/* Writes every answer key the warm-up asks for from now on into f as a line of answers.rec ("warmup KEY = VALUE");
 * NULL stops. The kit's recorder grades the public cases with it on. */
void pp__warmup_keys_log(FILE *f);

#endif /* PP_GRADE_H */
