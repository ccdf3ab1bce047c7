/* caps.c: the transports the kit knows, by name, and what each one can do (caps.h), whether or not it was built. */
#include "caps.h"

#include <stdio.h>
#include <string.h>

/* Every transport, built or not, the default first. */
static const struct {
    const char *name;
    unsigned caps;
} known[] = {
    {"threads", PP_TRANSPORT_THREADS_CAPS},
    {"mpi", PP_TRANSPORT_MPI_CAPS},
    {"nccl", PP_TRANSPORT_NCCL_CAPS},
};
#define NKNOWN ((int)(sizeof known / sizeof known[0]))

/* The row of the transport called name (NULL: the default), or -1. */
static int known_index(const char *name) {
    if (!name) return 0;
    for (int i = 0; i < NKNOWN; i++)
        if (!strcmp(name, known[i].name)) return i;
    return -1;
}

const char *pp__transport_name(int i) { return i >= 0 && i < NKNOWN ? known[i].name : NULL; }

unsigned pp__transport_caps(const char *name) {
    int i = known_index(name);
    return i < 0 ? 0 : known[i].caps;
}

const char *pp__transport_names(unsigned caps, char *buf, size_t len, const char *sep, const char *last) {
    int n = 0, total = 0;
    for (int i = 0; i < NKNOWN; i++) total += (known[i].caps & caps) == caps;
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < NKNOWN; i++) {
        if ((known[i].caps & caps) != caps) continue;
        const char *join = n == 0 ? "" : n == total - 1 ? last : sep;
        int k = snprintf(buf + at, at < len ? len - at : 0, "%s%s", join, known[i].name);
        at += k > 0 ? (size_t)k : 0;
        n++;
    }
    return buf;
}

const char *pp__transport_launched(const char *name) {
    int i = known_index(name);
    if (i < 0) return NULL;
    if (known[i].caps & PP_TRANSPORT_PROCESSES) return known[i].name;
    if (i != 0) return NULL;
    for (int k = 0; k < NKNOWN; k++)
        if (known[k].caps & PP_TRANSPORT_PROCESSES) return known[k].name;
    return NULL;
}
