/* warmup_draw.c: the warm-up's draws (warmup_draw.h): each part's stream, and the drawn siblings of the schedule
 * cases several parts share, whose rules the schedule table states. */
#include "warmup_draw.h"

#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "schedules.h"

static uint64_t draw_next(pp_warmup_draw *d) {
    uint64_t z = (d->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void pp__warmup_draw_init(pp_warmup_draw *d, const pp_test_config *cfg, const char *part) {
    char key[64];
    int nkey = snprintf(key, sizeof key, "pplab warm-up seed %u", cfg->seed);
    unsigned char mac[crypto_auth_hmacsha256_BYTES];
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, (const unsigned char *)key, (size_t)nkey);
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)part, strlen(part) + 1);
    crypto_auth_hmacsha256_update(&st, cfg->file_sha256, sizeof cfg->file_sha256);
    crypto_auth_hmacsha256_final(&st, mac);
    d->s = 0;
    for (int i = 0; i < 8; i++) d->s = d->s << 8 | mac[i];
}

int pp__warmup_draw_int(pp_warmup_draw *d, int lo, int hi) {
    return lo + (int)(draw_next(d) % (uint64_t)(hi - lo + 1));
}

int pp__warmup_case_same(const pp_warmup_case *a, const pp_warmup_case *b) {
    return !strcmp(a->schedule, b->schedule) && a->P == b->P && a->M == b->M && a->v == b->v;
}

static int case_in(const pp_warmup_case *c, const pp_warmup_case *list, int n) {
    for (int i = 0; i < n; i++)
        if (pp__warmup_case_same(c, &list[i])) return 1;
    return 0;
}

/* A drawn sibling of public case pub (pp__warmup_draw_siblings states the rules). */
static pp_warmup_case draw_like(pp_warmup_draw *d, const pp_warmup_case *pub) {
    const pp_schedule_def *def = pp__schedule_def(pub->schedule);
    pp_warmup_case c = {pub->schedule, pp__warmup_draw_int(d, 2, 8), 1, 1};
    if (def->chunked && !def->vshape) c.v = pp__warmup_draw_int(d, 2, 4), c.M = c.P * pp__warmup_draw_int(d, 1, 4);
    else if (pub->M == 1 && def->one_microbatch) c.M = 1;
    else if (pub->M < pub->P) c.M = pp__warmup_draw_int(d, 1, c.P - 1);
    else c.M = pp__warmup_draw_int(d, c.P, 4 * c.P);
    if (def->vshape) c.v = 2; /* a V holds two chunks per rank */
    return c;
}

void pp__warmup_draw_siblings(pp_warmup_draw *d, const pp_warmup_case *pub, int n, pp_warmup_case *out) {
    for (int i = 0; i < n; i++)
        do out[i] = draw_like(d, &pub[i]);
        while (case_in(&out[i], pub, n) || case_in(&out[i], out, i));
}
