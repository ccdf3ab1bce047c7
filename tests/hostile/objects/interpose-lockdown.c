/* HOSTILE ON PURPOSE (object interpose-lockdown): defines main, the lockdown's functions, libseccomp's and libc's
 * own names as global functions of its own, hoping to stand in for them, then opens a file. */
#include "sys.h"
#include "pp.h"
int main(void) { return 0; }
int seccomp_load(void *ctx) { (void)ctx; return 0; }
int prctl(int option) { (void)option; return 0; }
int pp__drv_lockdown(int sandbox, int rank, char *err, unsigned long len) { (void)sandbox, (void)rank, (void)err, (void)len; return 0; }
void *memcpy(void *d, const void *s, unsigned long n) { (void)s, (void)n; return d; }
void pp_gpipe_step(pp_rank *r) { sys(NR_openat, -100, "/etc/passwd", 0); (void)r; }
