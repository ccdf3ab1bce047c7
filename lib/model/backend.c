/* backend.c: the backend registry: opens a backend by name, closes it, and describes what was compiled in.
 * `cpu` is always here; `cuda` only when built with nvcc (PP_HAVE_CUDA), and this is the one lib/ file that
 * may test that macro. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"

#ifdef PP_HAVE_CUDA
#include "plugin.h"

/* The cuda backend lives in libpp_cuda.so (plugin.h), opened on its first use. */
static const pp_backend_ops *cuda_ops(void) {
    return (const pp_backend_ops *)pp__plugin_symbol("pp__backend_cuda_ops", NULL, 0);
}

static pp_backend *cuda_open(int rank, int nranks, char *err, size_t errlen) {
    pp_backend *(*open)(int, int, char *, size_t);
    *(void **)&open = pp__plugin_symbol("pp__backend_cuda_open", err, errlen);
    return open ? open(rank, nranks, err, errlen) : NULL;
}

static void cuda_close(pp_backend *be) {
    void (*close)(pp_backend *);
    *(void **)&close = pp__plugin_symbol("pp__backend_cuda_close", NULL, 0);
    if (close) close(be);
}
#endif

static const pp_backend_ops *cpu_ops(void) { return &pp__backend_cpu_ops; }

typedef struct pp_backend_entry {
    const char *name;
    const pp_backend_ops *(*ops)(void); /* NULL when a plugin that holds the backend cannot be opened */
    pp_backend *(*open)(int rank, int nranks, char *err, size_t errlen);
    void (*close)(pp_backend *be);
} pp_backend_entry;

static const pp_backend_entry backends[] = {
    {"cpu", cpu_ops, pp__backend_cpu_open, pp__backend_cpu_close},
#ifdef PP_HAVE_CUDA
    {"cuda", cuda_ops, cuda_open, cuda_close},
#endif
};
#define PP__NBACKENDS ((int)(sizeof backends / sizeof backends[0]))

/* The required slots come first: the last of them ends where the first optional one begins. */
_Static_assert(offsetof(pp_backend_ops, timer_epoch) ==
                   sizeof(const char *) + PP_BACKEND_NREQUIRED * sizeof(void (*)(void)),
               "pp_backend_ops: the required slots must come before timer_epoch, as PP_BACKEND_REQUIRED_OPS lists them");

static void append_name(char *buf, size_t len, size_t *used, const char *name) {
    if (!buf || len == 0) return;
    int w = snprintf(buf + *used, len - *used, "%s%s", *used ? ", " : "", name);
    if (w < 0) return;
    *used += (size_t)w;
    if (*used >= len) *used = len - 1;
}

int pp__backend_missing_ops(const pp_backend_ops *ops, char *buf, size_t len) {
    int missing = 0;
    size_t used = 0;
    if (buf && len) buf[0] = '\0';
#define PP__CHECK_OP(slot)                                                                                     \
    if (!ops->slot) {                                                                                          \
        missing++;                                                                                             \
        append_name(buf, len, &used, #slot);                                                                   \
    }
    PP_BACKEND_REQUIRED_OPS(PP__CHECK_OP)
#undef PP__CHECK_OP
    return missing;
}

static const pp_backend_entry *find_backend(const char *name) {
    for (int i = 0; i < PP__NBACKENDS; i++)
        if (name && strcmp(backends[i].name, name) == 0) return &backends[i];
    return NULL;
}

/* Opens backend `name` for rank of nranks; NULL with a one-line reason in err when it is unknown, not
 * compiled in, or not usable here. Close with pp__backend_close. */
pp_backend *pp__backend_open(const char *name, int rank, int nranks, char *err, size_t errlen) {
    const pp_backend_entry *e = find_backend(name);
    if (!e) {
        if (name && strcmp(name, "cuda") == 0)
            snprintf(err, errlen, "cuda backend not compiled in: rebuild with nvcc installed, or use --backend cpu");
        else
            snprintf(err, errlen, "unknown backend '%s': use cpu or cuda", name ? name : "(null)");
        return NULL;
    }
    return e->open(rank, nranks, err, errlen);
}

/* Closes an instance from pp__backend_open through the backend that made it (NULL is fine). */
void pp__backend_close(pp_backend *be) {
    if (!be) return;
    for (int i = 0; i < PP__NBACKENDS; i++)
        if (be->ops == backends[i].ops()) {
            backends[i].close(be);
            return;
        }
}

/* One line per compiled-in backend: name, usable here (its description) or why not, and empty op slots. */
void pp__backend_describe_all(FILE *out) {
    for (int i = 0; i < PP__NBACKENDS; i++) {
        const pp_backend_entry *e = &backends[i];
        char err[256] = "", missing[512];
        pp_backend *be = e->open(0, 1, err, sizeof err);
        if (be) {
            const char *d = be->ops->describe ? be->ops->describe(be->ctx) : NULL;
            fprintf(out, "  %-5s usable%s%s", e->name, d ? ": " : "", d ? d : "");
            e->close(be);
        } else {
            fprintf(out, "  %-5s not usable here: %s", e->name, err[0] ? err : "open failed without a reason");
        }
        const pp_backend_ops *ops = e->ops();
        int n = ops ? pp__backend_missing_ops(ops, missing, sizeof missing) : 0;
        if (!ops)
            fprintf(out, "\n");
        else if (n)
            fprintf(out, "; missing: %s\n", missing);
        else
            fprintf(out, "; all %d ops filled\n", PP_BACKEND_NREQUIRED);
    }
}
