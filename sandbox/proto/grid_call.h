/* grid_call.h: the grid lab's question to the submission (lab 08, tpgrid), on the wire: which (t, p, d) each
 * global rank plays and which ranks make its groups. The driver asks it once, before its first step; the
 * runtime checks the answer (lib/run/grid.h). */
#ifndef PP_GRID_CALL_H
#define PP_GRID_CALL_H

#include "wire.h"

/* The submission's two functions, as labs/08-tensor/tpgrid.c declares them: rank g's coordinates, and the
 * members of its group along axis 't', 'p' or 'd' (global ranks, in the order of that coordinate) into members
 * (room for T*P*D), returning their count. */
typedef void pp_grid_place_fn(int rank, int T, int P, int D, int *t, int *p, int *d);
typedef int pp_grid_group_fn(char axis, int rank, int T, int P, int D, int *members);

/* The most ranks a grid lab runs: its answer crosses in one message. */
#define PP_GRID_MAX 64

/* Calls the two functions for every global rank of a T x P x D grid and writes their answers to w: what a driver
 * sends before its first step (pp__grid_read checks it). */
void pp__grid_ask(int T, int P, int D, pp_grid_place_fn *place, pp_grid_group_fn *group, pp_wire *w);

#endif /* PP_GRID_CALL_H */
