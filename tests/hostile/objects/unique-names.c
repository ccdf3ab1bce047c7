/* HOSTILE ON PURPOSE (object unique-names): main, seccomp_load, pp__drv_lockdown, prctl and memcpy as
 * STB_GNU_UNIQUE symbols, which once replaced the driver's own at its static link. */
#include "pp.h"
__asm__(".text\n"
        ".globl main\n.type main, @gnu_unique_object\nmain: ret\n"
        ".globl seccomp_load\n.type seccomp_load, @gnu_unique_object\nseccomp_load: xor %eax, %eax\nret\n"
        ".globl pp__drv_lockdown\n.type pp__drv_lockdown, @gnu_unique_object\npp__drv_lockdown: xor %eax, %eax\nret\n"
        ".globl prctl\n.type prctl, @gnu_unique_object\nprctl: xor %eax, %eax\nret\n"
        ".globl memcpy\n.type memcpy, @gnu_unique_object\nmemcpy: ret\n");
void pp_gpipe_step(pp_rank *r) { (void)r; }
