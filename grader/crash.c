/* crash.c: crash reports that name the rank. Only async-signal-safe calls in the handler. */
#include "crash.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

static void put(const char *s) { (void)!write(2, s, strlen(s)); }

static void on_crash(int sig) {
    char num[16];
    int r = pp__current_rank(), n = 0;
    put("pplab: ");
    if (r >= 0) {
        char tmp[16];
        int k = 0;
        do tmp[k++] = (char)('0' + r % 10), r /= 10;
        while (r && k < 15);
        while (k) num[n++] = tmp[--k];
        num[n] = 0;
        put("rank "), put(num), put(" crashed with ");
    } else {
        put("crashed with ");
    }
    put(sig == SIGSEGV ? "SIGSEGV (segmentation fault)" : sig == SIGBUS ? "SIGBUS (bus error)"
        : sig == SIGFPE ? "SIGFPE (arithmetic error)" : sig == SIGILL ? "SIGILL (illegal instruction)"
        : "SIGABRT (abort)");
    put(pp__current_rank() >= 0 ? " in the schedule code\nHINT: check pointers and indices in your step function (run it under gdb or with make asan)\n"
                                : "\n");
    _exit(128 + sig);
}

void pp__crash_install(void) {
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_crash;
        sigaction(sigs[i], &sa, NULL);
    }
}
