/* replay.c: a fuzz target without libFuzzer: every file named (a folder: every file in it) is fed to
 * LLVMFuzzerTestOneInput once, in name order. make test runs each target this way over its seed corpus and its
 * regression inputs, so that a finding once fixed stays fixed on machines without clang. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (!buf) return -1;
    /* libFuzzer hands a buffer of exactly the input's size: a read past it is caught the same way here */
    unsigned char *exact = malloc(n ? n : 1);
    if (n) memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
    int inputs = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) continue; /* a target without regression inputs yet */
        if (!S_ISDIR(st.st_mode)) {
            bad |= replay_file(argv[i]) != 0;
            inputs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) continue;
        char **names = NULL;
        size_t n = 0;
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.') continue;
            names = realloc(names, (n + 1) * sizeof *names);
            size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
            names[n] = malloc(len);
            snprintf(names[n++], len, "%s/%s", argv[i], e->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof *names, by_name);
        for (size_t k = 0; k < n; k++) {
            bad |= replay_file(names[k]) != 0;
            inputs++;
            free(names[k]);
        }
        free(names);
    }
    printf("replayed %d inputs\n", inputs);
    return bad;
}
