/* HOSTILE ON PURPOSE (object exec-memory): makes a page of its own data executable, to run code the loader never
 * saw. */
#include "sys.h"
#include "pp.h"
static unsigned char code[8192] __attribute__((aligned(4096))) = {0xc3};
void pp_gpipe_step(pp_rank *r) { sys(NR_mprotect, code, 4096, 7 /* PROT_READ | PROT_WRITE | PROT_EXEC */); (void)r; }
