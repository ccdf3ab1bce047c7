/* grid.h: lab 08's grid (the tpgrid schedule): the submission says which (t, p, d) each global rank plays and
 * which ranks make each rank's tensor-, pipeline- and data-parallel groups, as Megatron-LM's
 * initialize_model_parallel does; the kit checks that the answer is one grid and places the run by it: global
 * rank g sits on node g / G, so the mapping decides which link each message, sum and reduce crosses. */
#ifndef PP_GRID_H
#define PP_GRID_H

#include <stddef.h>

#include "config.h"
#include "grid_call.h"
#include "wire.h"

/* Reads an answer written by pp__grid_ask (its bytes are the submission's: every value is checked) and, when it
 * is one grid whose groups follow from its coordinates, fills place[id] with the global rank that plays world
 * rank id = (t*D + d)*P + p; returns 0. Else -1 with what is wrong, naming the rank, and what to do, in err. */
int pp__grid_read(const pp_run_config *c, pp_wire_in *in, int *place, char *err, size_t len);

#endif /* PP_GRID_H */
