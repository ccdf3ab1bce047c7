/* crash.h: turns a crash inside schedule code into one line naming the rank and the signal. */
#ifndef PP_CRASH_H
#define PP_CRASH_H

/* Installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT that print
 * "pplab: rank R crashed with SIGSEGV (segmentation fault) in the schedule code" to stderr, then die of the
 * same signal (so a parent sees a crash, not an exit status). */
void pp__crash_install(void);

#endif /* PP_CRASH_H */
