/* report.h: what the grader prints and writes once tests have run: a progress line per finished test, the
 * per-lab summary with the final verdict, the demo table, and the machine-readable reports (JSON, JUnit XML,
 * Gradescope results.json). Every function reads an array of finished pp_test_result values and never changes
 * it; none of them reads the environment (the caller decides colour, e.g. from NO_COLOR and isatty). */
#ifndef PP_REPORT_H
#define PP_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "grade.h"
#include "text.h"

/* ---- terminal ------------------------------------------------------------------------------------------ */

/* Prints the line for one finished test: "[ 3/52] gpipe P=4 M=8 seed=3 ........ 10/10  ok  (0.12 s)".
 * index is the test's 1-based position, printed as given; total is the number of tests. A test that lost
 * points shows FAIL, then one indented line per failed check ("    - gradients (0/4): <msg>"); a run that did
 * not complete (status != PP_OK, timed out, crashed) adds "    run: <first line of the error>" and the rest of
 * the error; a failed test with captured output ends with "    output (last lines):" and that output, each of
 * its lines as "      | <line>". Text is cleaned and marked as in every report (pp__report_clean,
 * pp__report_quote, pp__report_error), so an escape sequence in it cannot repaint the terminal. ANSI colour only
 * when color != 0. */
void pp__report_progress(FILE *out, const pp_test_result *r, int index, int total, int color);

/* Prints the score per lab (warmup, naive, gpipe, 1f1b, interleaved, then any other lab name, in order of
 * first appearance; only labs present), the total "Score: 87/120", and a last line "FULL MARKS" or
 * "NOT FULL MARKS: N tests lost points" ("no tests ran" when n == 0). ANSI colour only when color != 0. */
void pp__report_summary(FILE *out, const pp_test_result *r, int n, int color);

/* Prints the demo table, fixed-width columns under a '#'-headed header: lab, P, M, v, bubble measured, theory,
 * peak stashes (the per-rank list when it fits the column, else the max over ranks), gradient error (%.1e),
 * score, ok/FAIL, then a config note for what else sets the test apart (latency=, recompute, steps=, layers=,
 * hidden=, part=, "(hidden test)"; nothing for a plain default test). Figures of a run that did not complete,
 * and NaN figures, are shown as "-". */
void pp__report_table(FILE *out, const pp_test_result *r, int n);

/* ---- lab 09's leaderboard ---------------------------------------------------------------------------- */

typedef struct pp_leaderboard {
    int tests;      /* lab 09's tests it is over: the hidden ones, or every one when none is hidden */
    int hidden;     /* 1 when over the hidden ones */
    int invalid;    /* of them, orders that were not valid or broke their cap (each counts as bubble 1, memory 1) */
    double bubble;  /* the mean bubble of the orders on the virtual clock: lower ranks higher */
    double memory;  /* the mean, over tests, of the fullest rank's peak stashes as a share of the cap: lower ranks
                       higher on a tie */
} pp_leaderboard;

/* Fills lb from the lab 09 results among r; returns lb->tests (0: no lab 09 test, no leaderboard). */
int pp__report_leaderboard(const pp_test_result *r, int n, pp_leaderboard *lb);

/* ---- files --------------------------------------------------------------------------------------------- */
/* Each writer below writes the whole file at path (replacing it) for the n results r, and returns 0, or -1
 * after one line on stderr saying what failed and what to do. impl and backend name what was graded (e.g.
 * "labs", "cpu"); either may be NULL (written as ""). Every text is cleaned (pp__report_clean) and the student's
 * lines are marked (pp__report_quote, pp__report_error), as on the terminal. */

/* JSON (cJSON): {score, max_score, impl, backend, tests: [{name, lab, config {P, M, v, steps, seed, latency,
 * recompute, layers, hidden (model width, 0: default), time (limit, s), from_config_file (a hidden test), part},
 * score, max_score, status "passed"|"failed", error, timed_out, crashed, bubble, theory, peak_stashes [P],
 * peak_bound [P], grad_err, weight_err, loss_err (-1 when not compared), seconds, checks [{name, score,
 * max_score, passed, message}], output (the output tail, each line marked "| ")}], and with lab 09 tests
 * leaderboard {bubble, memory, tests, hidden, invalid} (pp__report_leaderboard)}. NaN figures are written as null. */
int pp__report_json(const char *path, const pp_test_result *r, int n, const char *impl, const char *backend);

/* JUnit XML (tests/junit.xsd): <testsuites> holding one <testsuite id name package timestamp hostname tests
 * failures errors skipped time> per lab (same order as the summary), a <testcase name classname="pplab.<lab>"
 * time> per test and, when the test lost points, either an <error> (the run could not reach its verdict: a
 * crash, a timeout, a compile error, a sandbox refusal, a resource limit, an I/O or backend failure) or a
 * <failure> (checks lost points, including a deadlock or a misuse the schedule made), with message="..." naming
 * the failed checks and the run's error, then <system-out> with the output tail, each line marked "| ", when
 * there is one. Everything is cleaned and XML-escaped; U+FFFE and U+FFFF, which XML 1.0 cannot hold, become '?'
 * too. */
int pp__report_junit(const char *path, const pp_test_result *r, int n, const char *impl, const char *backend);

/* Gradescope results.json: {score, execution_time (sum of seconds, rounded up), output (the summary text),
 * output_format, test_output_format and test_name_format "text", visibility "visible", stdout_visibility
 * "hidden", tests: [{name, number (1-based position), score, max_score, status "passed"|"failed", output
 * ("all N checks passed"; else, for a run that did not complete, "<verdict>: the run did not complete" first,
 * then the failed checks, the run's error and the output tail, marked), visibility ("after_published" for hidden
 * configurations, whose names start with "hidden: ", "visible" otherwise)}]}. No leaderboard: pplab ranks
 * nobody. impl and backend are named in the top-level output. */
int pp__report_gradescope(const char *path, const pp_test_result *r, int n, const char *impl,
                          const char *backend);

/* ---- helpers shared by the writers (report_term.c) ----------------------------------------------------- */

/* 1 when the test earned every point: its run completed and every check passed. */
int pp__report_passed(const pp_test_result *r);

/* Labs in report order: fills labs[0..max) with pointers into r[].cfg.lab (warmup, naive, gpipe, 1f1b,
 * interleaved first, then unknown names by first appearance, each once); returns how many. */
int pp__report_labs(const pp_test_result *r, int n, const char **labs, int max);

/* Writes why the test lost points as plain text into buf (always NUL-terminated, truncated to len): one line
 * per failed check "- gradients (0/4): <msg>", then "run: <error>" when the run did not complete, then, when
 * with_output is set and there is output, "output (last lines):" and the tail, marked (pp__report_quote).
 * Cleaned throughout (pp__report_clean, pp__report_error). Empty for a passed test. */
void pp__report_failure_text(const pp_test_result *r, int with_output, char *buf, size_t len);

/* What stopped a run that did not complete, as a CI system would name it: "timeout", "crash", "compile
 * error", else the status's description ("deadlock", "refused by the sandbox", ...); NULL when it completed. */
const char *pp__report_run_verdict(const pp_test_result *r);

/* Makes r[i].name differ from every r[0..i).name by appending " #2", " #3", ... (CI systems and Gradescope key
 * tests by name; a configuration file may repeat a test, e.g. with another time limit). */
void pp__report_name_unique(pp_test_result *r, int i);

/* Formats points compactly ("10", "7.5") into buf; returns buf. */
const char *pp__report_points(double p, char *buf, size_t len);

/* Every report passes text it did not compose itself (the student's output, errors and check messages, which
 * can quote the student's pp_fail message or the compiler) through the three functions below, so that what a
 * submission prints can neither rewrite a terminal nor pass for a line of the grader's. */

/* The cleaning and marking of text the grader did not write (base/text.h), as the reports name them. */
#define PP_REPORT_MARK PP_TEXT_MARK
static inline char *pp__report_clean(const char *s, size_t max) { return pp__text_clean(s, max); }
static inline char *pp__report_quote(const char *s, size_t max) { return pp__text_quote(s, max); }

/* r->error as every report shows it: cleaned, and, for a compile error, whose first line is the grader's and whose
 * others are the compiler's, those other lines marked as by pp__report_quote. Everything a driver sent (a pp_fail
 * message, the detail of a driver's own failure) is marked by the runtime as it composes the error. The caller
 * frees it; NULL only when memory runs out. */
char *pp__report_error(const pp_test_result *r);

/* Writes text (NUL-terminated) to path, replacing it; returns 0, or -1 after one line on stderr naming the
 * report (what, e.g. "JSON report"), the path and the reason. text stays the caller's. */
int pp__report_write(const char *path, const char *text, const char *what);

/* Adds string field key to a cJSON object from a buffer of max bytes that may be unterminated or hold invalid
 * UTF-8 or control characters, cleaned (pp__report_clean). Returns 0, or -1 when out of memory. Shared by the
 * JSON and Gradescope writers. */
struct cJSON;
int pp__report_add_text(struct cJSON *obj, const char *key, const char *s, size_t max);

/* Prints the report tree root (unless building it failed: built = 0) to path through pp__report_write, and frees
 * root in any case. Returns 0, or -1 after one line on stderr naming the report (what) and the reason. */
int pp__report_write_json(const char *path, struct cJSON *root, int built, const char *what);

#endif /* PP_REPORT_H */
