/* reap.c: ending what a test's processes leave below the process that ran them. */
#include "reap.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void pp__reap_children(const pid_t *keep, int nkeep) {
    pid_t me = getpid();
    for (int round = 0; round < 1000; round++) {
        DIR *d = opendir("/proc");
        if (!d) return;
        pid_t kids[256];
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d)) && n < 256) {
            char *end;
            long pid = strtol(e->d_name, &end, 10);
            if (*end || pid <= 0) continue;
            char path[64], buf[512];
            snprintf(path, sizeof path, "/proc/%ld/stat", pid);
            FILE *f = fopen(path, "r");
            if (!f) continue;
            size_t k = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[k] = 0;
            char *close_paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
            long ppid;
            char state;
            if (!close_paren || sscanf(close_paren + 1, " %c %ld", &state, &ppid) != 2 || ppid != me) continue;
            int kept = 0;
            for (int i = 0; i < nkeep; i++) kept |= keep[i] == (pid_t)pid;
            if (!kept) kids[n++] = (pid_t)pid;
        }
        closedir(d);
        if (!n) return;
        for (int i = 0; i < n; i++) kill(kids[i], SIGKILL);
        for (int i = 0; i < n; i++)
            while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR) {}
    }
}
