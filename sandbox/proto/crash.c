/* crash.c: crash reports that name the rank. Only async-signal-safe calls in the handler. */
#include "crash.h"

#include <string.h>
#include <unistd.h>

static int (*rank_of)(void);
static void (*note_of)(int sig, const siginfo_t *info);

static void put(const char *s) { (void)!write(2, s, strlen(s)); }

static void on_crash(int sig, siginfo_t *info, void *uctx) {
    (void)uctx;
    char num[16];
    int r = rank_of ? rank_of() : -1, n = 0;
    if (note_of) note_of(sig, info);
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
    put(n ? " in the schedule code\n" : "\n");
    /* die of the signal itself, so a parent's waitpid sees a crash, not an exit status a program could choose */
    raise(sig); /* SA_RESETHAND restored the default action, SA_NODEFER lets it through at once */
    _exit(128 + sig);
}

void pp__crash_install(int (*current_rank)(void), void (*note)(int sig, const siginfo_t *info)) {
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    rank_of = current_rank;
    note_of = note;
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_crash;
        sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
        sigaction(sigs[i], &sa, NULL);
    }
}
