/* error.c: status names and the fatal-error path for setup failures. */
#include "error.h"

#include <stdarg.h>
#include <string.h>

static const char *const status_names[] = {
#define PP__NAME(name, msg) #name,
    PP_STATUS_TABLE(PP__NAME)
#undef PP__NAME
};

static const char *const status_msgs[] = {
#define PP__MSG(name, msg) msg,
    PP_STATUS_TABLE(PP__MSG)
#undef PP__MSG
};

const char *pp__status_name(pp_status s) {
    return (s >= 0 && s < PP_STATUS_COUNT) ? status_names[s] : "PP_ERR_UNKNOWN";
}

const char *pp__status_str(pp_status s) {
    return (s >= 0 && s < PP_STATUS_COUNT) ? status_msgs[s] : "unknown status";
}

static pp_die_handler die_handler;

void pp__die_set_handler(pp_die_handler h) { die_handler = h; }

void pp__die(const char *file, int line, const char *hint, const char *fmt, ...) {
    va_list ap;
    pp_die_handler h = die_handler;
    die_handler = NULL; /* once: a handler that fails the same way falls through to the default */
    if (h) {
        char what[1024];
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        h(what, hint);
    }
    fflush(stdout);
    fprintf(stderr, "pplab: error: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (%s:%d)\n", file, line);
    if (hint && *hint) fprintf(stderr, "HINT: %s\n", hint);
    exit(2);
}

void *pp__xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) PP_DIE("the machine is out of memory: try fewer micro-batches or a smaller model", "out of memory allocating %zu bytes (malloc)", n);
    return p;
}

void *pp__xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) PP_DIE("the machine is out of memory: try fewer micro-batches or a smaller model", "out of memory allocating %zu x %zu bytes (calloc)", n, size);
    return p;
}

void *pp__xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) PP_DIE("the machine is out of memory: try fewer micro-batches or a smaller model", "out of memory allocating %zu bytes (realloc)", n);
    return q;
}
