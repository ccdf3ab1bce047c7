/* HOSTILE ON PURPOSE (object socket-out): opens a network socket. */
#include "sys.h"
#include "pp.h"
void pp_gpipe_step(pp_rank *r) { sys(NR_socket, 2 /* AF_INET */, 1 /* SOCK_STREAM */, 0); (void)r; }
