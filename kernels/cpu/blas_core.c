/* blas_core.c: which OpenBLAS kernel runs the CPU backend's GEMM. A DYNAMIC_ARCH OpenBLAS (Debian's) picks its
 * kernel from the CPU's family and model when it loads. A virtual machine that hides the model gets the generic
 * SSE3 kernel (`Prescott`) even on an AVX-512 Xeon, 4-5x slower, and every step of the CPU backend with it.
 * OpenBLAS reads OPENBLAS_CORETYPE only while it loads, so the fix is taken before anything runs: pplab's main
 * compares OpenBLAS's choice with what the CPU's features allow and, when the choice is weaker, re-executes
 * itself once with OPENBLAS_CORETYPE set. A core type already in the environment is the user's and is kept. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cpu/cpu_kernels.h"

/* Set by the re-execution to the core OpenBLAS had picked, so the process can say why its core was forced. */
#define PP__BLAS_PICKED_ENV "PPLAB_BLAS_REPLACED"

/* OpenBLAS's x86 core names by the widest vector ISA their sgemm kernel uses (OpenBLAS driver/others/dynamic.c).
 * A name missing here is not an x86 generic fallback (another architecture, a newer core): it is never replaced. */
static const struct {
    const char *core;
    int isa;
} blas_cores[] = {
    {"Katmai", PP_ISA_SSE},       {"Coppermine", PP_ISA_SSE},   {"Northwood", PP_ISA_SSE},
    {"Prescott", PP_ISA_SSE},     {"Banias", PP_ISA_SSE},       {"Atom", PP_ISA_SSE},
    {"Core2", PP_ISA_SSE},        {"Penryn", PP_ISA_SSE},       {"Dunnington", PP_ISA_SSE},
    {"Nehalem", PP_ISA_SSE},      {"Athlon", PP_ISA_SSE},       {"Opteron", PP_ISA_SSE},
    {"Opteron_SSE3", PP_ISA_SSE}, {"Barcelona", PP_ISA_SSE},    {"Nano", PP_ISA_SSE},
    {"Bobcat", PP_ISA_SSE},       {"Sandybridge", PP_ISA_AVX},  {"Bulldozer", PP_ISA_AVX},
    {"Piledriver", PP_ISA_AVX},   {"Steamroller", PP_ISA_AVX},  {"Excavator", PP_ISA_AVX2},
    {"Haswell", PP_ISA_AVX2},     {"Zen", PP_ISA_AVX2},         {"SkylakeX", PP_ISA_AVX512},
    {"Cooperlake", PP_ISA_AVX512}, {"SapphireRapids", PP_ISA_AVX512},
};

/* The OpenBLAS core that uses an ISA level best; its sgemm kernel is OpenBLAS's fastest for that level. */
static const char *const blas_core_for_isa[] = {
    [PP_ISA_SSE] = "Prescott", [PP_ISA_AVX] = "Sandybridge", [PP_ISA_AVX2] = "Haswell", [PP_ISA_AVX512] = "SkylakeX"};

int pp__cpu_blas_core_isa(const char *core) {
    for (size_t i = 0; core && i < sizeof blas_cores / sizeof blas_cores[0]; i++)
        if (!strcasecmp(core, blas_cores[i].core)) return blas_cores[i].isa;
    return PP_ISA_UNKNOWN;
}

int pp__cpu_isa(void) {
#if defined(__x86_64__) || defined(__i386__)
    /* libgcc's checks include the OS's XSAVE state: a feature the kernel does not save counts as absent. */
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd"))
        return PP_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return PP_ISA_AVX2;
    if (__builtin_cpu_supports("avx")) return PP_ISA_AVX;
    return PP_ISA_SSE;
#else
    return PP_ISA_UNKNOWN;
#endif
}

const char *pp__cpu_blas_better_core(const char *chosen, int isa) {
    int have = pp__cpu_blas_core_isa(chosen);
    if (have == PP_ISA_UNKNOWN || isa == PP_ISA_UNKNOWN || have >= isa) return NULL;
    return blas_core_for_isa[isa];
}

void pp__cpu_blas_settle(char **argv) {
    if (getenv("OPENBLAS_CORETYPE")) return; /* the user's choice, or this process is the re-execution */
    const char *chosen = openblas_get_corename();
    const char *better = pp__cpu_blas_better_core(chosen, pp__cpu_isa());
    if (!better) return;
    setenv("OPENBLAS_CORETYPE", better, 1);
    setenv(PP__BLAS_PICKED_ENV, chosen, 1);
    execv("/proc/self/exe", argv);
    /* No /proc (a chroot, a sandbox): run on with the slower kernel, and say so where the core is described. */
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv(PP__BLAS_PICKED_ENV);
}

void pp__cpu_blas_describe(char *buf, size_t len) {
    /* openblas_get_config() starts with "OpenBLAS <version>" followed by build options; keep the first two words. */
    const char *cfg = openblas_get_config();
    if (!cfg || !*cfg) cfg = "OpenBLAS";
    int vlen = 0, words = 0;
    while (cfg[vlen]) {
        if (cfg[vlen] == ' ' && ++words == 2) break;
        vlen++;
    }
    const char *core = openblas_get_corename();
    const char *forced = getenv("OPENBLAS_CORETYPE"), *replaced = getenv(PP__BLAS_PICKED_ENV);
    const char *better = pp__cpu_blas_better_core(core, pp__cpu_isa());
    if (forced && replaced)
        snprintf(buf, len, "%.*s, %s kernel (set from the CPU's features: OpenBLAS took it for a %s)", vlen, cfg, core,
                 replaced);
    else if (forced)
        snprintf(buf, len, "%.*s, %s kernel (OPENBLAS_CORETYPE=%s)", vlen, cfg, core, forced);
    else if (better)
        snprintf(buf, len, "%.*s, %s kernel, slower than this CPU allows: run with OPENBLAS_CORETYPE=%s", vlen, cfg,
                 core, better);
    else
        snprintf(buf, len, "%.*s, %s kernel", vlen, cfg, core);
}
