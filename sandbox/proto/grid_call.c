/* grid_call.c: asking the grid lab's submission for its mapping (grid_call.h). */
#include "grid_call.h"

#include <string.h>

static const char axes[3] = {'t', 'p', 'd'};

void pp__grid_ask(int T, int P, int D, pp_grid_place_fn *place, pp_grid_group_fn *group, pp_wire *w) {
    int W = T * P * D;
    static int members[PP_GRID_MAX + 1];
    pp__wire_u32(w, (uint32_t)W);
    for (int g = 0; g < W; g++) {
        int t = -1, p = -1, d = -1;
        place(g, T, P, D, &t, &p, &d);
        pp__wire_i64(w, t), pp__wire_i64(w, p), pp__wire_i64(w, d);
    }
    for (int g = 0; g < W; g++)
        for (int a = 0; a < 3; a++) {
            memset(members, 0xff, sizeof members);
            int n = group(axes[a], g, T, P, D, members);
            if (n < 0 || n > PP_GRID_MAX) n = n < 0 ? -1 : PP_GRID_MAX + 1; /* said as such, with no members */
            pp__wire_i64(w, n);
            for (int i = 0; i < n && n <= PP_GRID_MAX; i++) pp__wire_i64(w, members[i]);
        }
}

