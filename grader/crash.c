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
    /* die of the signal itself, so a parent's waitpid sees a crash, not an exit status a program could choose */
    raise(sig); /* SA_RESETHAND restored the default action, SA_NODEFER lets it through at once */
    _exit(128 + sig);
}

void pp__crash_install(void) {
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_crash;
        sa.sa_flags = SA_RESETHAND | SA_NODEFER;
        sigaction(sigs[i], &sa, NULL);
    }
}
