/* testcfg.h: a test's name, its knobs in words, and the run configuration it asks for. */
#ifndef PP_TESTCFG_H
#define PP_TESTCFG_H

#include <stddef.h>

#include "grade.h"

/* The test's name: "gpipe P=4 M=8 v=2 latency=0.5 recompute seed=3" (v, latency, recompute, layers, layout,
 * edge, width and steps only when not the default), "warmup bubble" for a warm-up part, drawn or not (no
 * student-visible name holds the seed); "hidden: " first for a configuration from an instructor's file. */
void pp__test_name(const pp_test_config *c, char *buf, size_t len);

/* What a model test sets beyond lab, P, M and v: " latency=0.5 recompute layers=16 width=64 steps=3", each knob
 * only when it is not the default ("" when none). Shared by the test's name and the --table note. */
void pp__test_knobs(const pp_test_config *c, char *buf, size_t len);

/* The test's time limit in seconds: its own, or the default 10 where it set none. */
double pp__test_limit_s(const pp_test_config *t);

/* Turns a test configuration into a run configuration for `backend`. */
void pp__test_to_run(const pp_test_config *t, const char *backend, pp_run_config *rc);

#endif /* PP_TESTCFG_H */
