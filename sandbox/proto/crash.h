/* crash.h: turns a crash inside schedule code into one line naming the rank and the signal. Used by the
 * schedule driver (one rank per process) and by pplab itself when it runs a schedule in-process. */
#ifndef PP_CRASH_H
#define PP_CRASH_H

#include <signal.h>

/* Installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT that print
 * "pplab: rank R crashed with SIGSEGV (segmentation fault) in the schedule code" and a HINT to stderr (R from
 * current_rank(), which returns -1 outside a rank), call note(sig, info) when given, then die of the same
 * signal (so a parent sees a crash, not an exit status). Everything they call is async-signal-safe. */
void pp__crash_install(int (*current_rank)(void), void (*note)(int sig, const siginfo_t *info));

#endif /* PP_CRASH_H */
