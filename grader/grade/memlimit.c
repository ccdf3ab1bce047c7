/* memlimit.c: a missing result told apart (a full disk or not), and a SIGKILL: the cgroup's memory limit (v1 or v2:
 * a container's --memory, a Slurm job's) or the machine's memory. The grader's processes share its cgroup, so the
 * limit they met is this process's or an ancestor's. */
#include "memlimit.h"

#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

/* The value after "key " in the file at path, or -1. */
static long long read_key(const char *path, const char *key) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    long long v = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, n) && line[n] == ' ' && sscanf(line + n + 1, "%lld", &v) == 1) break;
    fclose(f);
    return v;
}

/* From cgroup cg of the hierarchy mounted at base up to its root: the first that killed for a memory limit it has
 * (its kill counter, key of file events, above 0), written into buf; 0 when none did. Inside a container the
 * hierarchy's root is the container's own cgroup, whatever path /proc/self/cgroup gives, so the walk reaches it. */
static int walk(const char *base, char *cg, const char *events, const char *key, const char *max_file, char *buf,
                size_t len) {
    for (;;) {
        char dir[1024], path[1100];
        snprintf(dir, sizeof dir, "%s%s", base, strcmp(cg, "/") ? cg : "");
        snprintf(path, sizeof path, "%s/%s", dir, events);
        long long kills = read_key(path, key), max = -1;
        snprintf(path, sizeof path, "%s/%s", dir, max_file);
        FILE *m = fopen(path, "r");
        if (m) {
            if (fscanf(m, "%lld", &max) != 1) max = -1; /* v2's "max": no limit here */
            fclose(m);
        }
        /* v1 says "no limit" with a number near 2^63 */
        if (kills > 0 && max > 0 && max < (1LL << 50)) {
            snprintf(buf, len, "the kernel's OOM killer, at the memory limit of %lld MiB (%s): raise it (a "
                     "container's: docker run --memory) or grade fewer tests at once (--jobs 1)",
                     max >> 20, path);
            return 1;
        }
        char *slash = strrchr(cg, '/');
        if (!slash || !strcmp(cg, "/")) return 0;
        if (slash == cg) slash[1] = 0;
        else *slash = 0;
    }
}

const char *pp__memlimit_why_killed(char *buf, size_t len) {
    snprintf(buf, len, "the machine ran out of memory (the kernel's OOM killer)");
    /* cgroup v2's line "0::/path", and v1's memory controller, "N:memory:/path" */
    char v2[512] = "", v1[512] = "", line[600];
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return buf;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!b || b[1] != '/') continue;
        *b = 0;
        if (!strcmp(a + 1, "")) snprintf(v2, sizeof v2, "%s", b + 1);
        for (char *c = strtok(a + 1, ","); c; c = strtok(NULL, ","))
            if (!strcmp(c, "memory")) snprintf(v1, sizeof v1, "%s", b + 1);
    }
    fclose(f);
    if (v1[0] && walk("/sys/fs/cgroup/memory", v1, "memory.oom_control", "oom_kill", "memory.limit_in_bytes", buf, len))
        return buf;
    if (v2[0]) walk("/sys/fs/cgroup", v2, "memory.events", "oom_kill", "memory.max", buf, len);
    return buf;
}

const char *pp__memlimit_why_no_result(const char *path, const char *other, char *buf, size_t len) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) *slash = 0;
    struct statvfs fs;
    unsigned long long avail = 0;
    if (statvfs(dir, &fs) == 0 && (avail = (unsigned long long)fs.f_bavail * fs.f_frsize) < (1ULL << 20)) {
        snprintf(buf, len, "the disk holding %s has %llu KiB free, too little for the test's results: free some "
                 "space there, or set TMPDIR to a folder on a larger disk", dir, avail >> 10);
        return buf;
    }
    snprintf(buf, len, "%s", other);
    return buf;
}
