/* grid.c: the grid lab's mapping of global ranks to (t, p, d), asked of the submission and checked (grid.h). */
#include "grid.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char axes[3] = {'t', 'p', 'd'};

#define BAD(...) (snprintf(err, len, __VA_ARGS__), -1)

int pp__grid_read(const pp_run_config *c, pp_wire_in *in, int *place, char *err, size_t len) {
    int T = c->T > 1 ? c->T : 1, P = c->P, D = c->D, W = T * P * D, size[3] = {T, P, D};
    int coord[PP_GRID_MAX][3], owner[PP_GRID_MAX];
    if (W > PP_GRID_MAX) return BAD("a grid lab runs at most %d ranks: --tp x --stages x --dp is %d", PP_GRID_MAX, W);
    if ((int)pp__wire_get_u32(in, 0, PP_GRID_MAX) != W || in->bad)
        return BAD("the submission's grid did not arrive whole: its driver wrote past its arrays?");
    for (int i = 0; i < W; i++) owner[i] = -1;
    for (int g = 0; g < W; g++) {
        for (int a = 0; a < 3; a++) coord[g][a] = (int)pp__wire_get_i64(in, INT32_MIN, INT32_MAX);
        if (in->bad) return BAD("the submission's grid did not arrive whole");
        for (int a = 0; a < 3; a++)
            if (coord[g][a] < 0 || coord[g][a] >= size[a])
                return BAD("pp_tpgrid_place(%d): %c = %d is out of range: t is 0..%d, p 0..%d, d 0..%d", g, axes[a],
                           coord[g][a], T - 1, P - 1, D - 1);
        int id = pp__config_rank_of(c, coord[g][0], coord[g][2], coord[g][1]);
        if (owner[id] >= 0)
            return BAD("pp_tpgrid_place: ranks %d and %d both play (t %d, p %d, d %d): every global rank plays one "
                       "place of the grid and every place one rank", owner[id], g, coord[g][0], coord[g][1],
                       coord[g][2]);
        owner[id] = g;
        place[id] = g;
    }
    for (int g = 0; g < W; g++)
        for (int a = 0; a < 3; a++) {
            int n = (int)pp__wire_get_i64(in, -1, PP_GRID_MAX + 1);
            if (in->bad) return BAD("the submission's groups did not arrive whole");
            if (n < 0 || n > PP_GRID_MAX)
                return BAD("pp_tpgrid_group('%c', %d) returned %s: return the number of members, 1..%d", axes[a], g,
                           n < 0 ? "a negative count" : "more members than the grid has ranks", size[a]);
            /* the group the coordinates make: the ranks that share the other two, in the order of this one */
            int want[PP_GRID_MAX];
            for (int k = 0; k < size[a]; k++) {
                int x[3] = {coord[g][0], coord[g][1], coord[g][2]};
                x[a] = k;
                want[k] = owner[pp__config_rank_of(c, x[0], x[2], x[1])];
            }
            char listed[200] = "", expect[200] = "";
            size_t m = 0, e = 0;
            for (int k = 0; k < size[a] && e < sizeof expect; k++)
                e += (size_t)snprintf(expect + e, sizeof expect - e, "%s%d", k ? ", " : "", want[k]);
            int same = n == size[a];
            for (int k = 0; k < (n > 0 ? n : 0); k++) {
                int got = (int)pp__wire_get_i64(in, INT32_MIN, INT32_MAX);
                if (in->bad) return BAD("the submission's groups did not arrive whole");
                same &= k < size[a] && got == want[k];
                if (m < sizeof listed) m += (size_t)snprintf(listed + m, sizeof listed - m, "%s%d", k ? ", " : "", got);
            }
            if (!same)
                return BAD("pp_tpgrid_group('%c', %d) returned %d rank%s {%s}; by pp_tpgrid_place, rank %d's %s group is "
                           "{%s}: the ranks that share its other two coordinates, in the order of %c", axes[a], g, n,
                           n == 1 ? "" : "s", listed, g, a == 0 ? "tensor-parallel" : a == 1 ? "pipeline" :
                           "data-parallel", expect, axes[a]);
        }
    return 0;
}
