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
            /* checked member by member against the coordinates the submission gave: each must share the rank's
             * other two and hold the k-th value of this one, and there must be one per value */
            const char *group = a == 0 ? "tensor-parallel" : a == 1 ? "pipeline" : "data-parallel";
            for (int k = 0; k < (n > 0 ? n : 0); k++) {
                long long got = pp__wire_get_i64(in, INT32_MIN, INT32_MAX);
                if (in->bad) return BAD("the submission's groups did not arrive whole");
                if (k >= size[a])
                    return BAD("pp_tpgrid_group('%c', %d) returned %d ranks: a %s group holds one rank per value of %c, "
                               "%d in all", axes[a], g, n, group, axes[a], size[a]);
                if (got < 0 || got >= W)
                    return BAD("pp_tpgrid_group('%c', %d): member %d is %lld, which is no rank of the grid (0..%d)",
                               axes[a], g, k, got, W - 1);
                const int *at = coord[got]; /* what the member plays */
                int other = 0;
                for (int b = 0; b < 3; b++) other |= b != a && at[b] != coord[g][b];
                if (other)
                    return BAD("pp_tpgrid_group('%c', %d): member %d is rank %lld, which plays (t %d, p %d, d %d) by "
                               "pp_tpgrid_place, and rank %d plays (t %d, p %d, d %d): a %s group's ranks share their "
                               "other two coordinates", axes[a], g, k, got, at[0], at[1], at[2], g, coord[g][0],
                               coord[g][1], coord[g][2], group);
                if (at[a] != k)
                    return BAD("pp_tpgrid_group('%c', %d): member %d is rank %lld, whose %c is %d by pp_tpgrid_place: "
                               "the members come in the order of %c, member k being the one whose %c is k", axes[a], g,
                               k, got, axes[a], at[a], axes[a], axes[a]);
            }
            if (n != size[a])
                return BAD("pp_tpgrid_group('%c', %d) returned %d rank%s: a %s group holds one rank per value of %c, "
                           "%d in all", axes[a], g, n, n == 1 ? "" : "s", group, axes[a], size[a]);
        }
    return 0;
}
