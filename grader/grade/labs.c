/* labs.c: the labs' table, built from the schedule table before main, each row with its kind. */
#include "labs.h"

#include <stdio.h>
#include <string.h>

#include "error.h"
#include "schedules.h"

const pp_lab_info *pp__labs;
int pp__nlabs;

/* Before main: every lab is known to every command from the start. */
__attribute__((constructor)) static void labs_from_table(void) {
    pp_lab_info *labs = pp__xcalloc((size_t)pp__nschedules + 2, sizeof *labs);
    labs[0] = (pp_lab_info){"warmup", "00-warmup", "warmup", NULL, &pp__warmup_lab};
    for (int i = 0; i < pp__nschedules; i++) {
        const pp_schedule_def *d = &pp__schedules[i];
        labs[i + 1] = (pp_lab_info){d->name, d->folder, d->file, d->symbol, &pp__schedule_lab};
    }
    labs[pp__nschedules + 1] = (pp_lab_info){"scheduler", "09-scheduler", "scheduler", NULL, &pp__scheduler_lab};
    pp__labs = labs;
    pp__nlabs = pp__nschedules + 2;
}

const char *pp__lab_names(char *buf, size_t len, const char *sep, const char *last) {
    char rest[256];
    snprintf(buf, len, "%s%s%s%s%s", pp__labs[0].name, sep, pp__schedule_names(rest, sizeof rest, sep, sep), last,
             pp__labs[pp__nlabs - 1].name);
    return buf;
}

const pp_lab_info *pp__lab_find(const char *name) {
    for (int i = 0; i < pp__nlabs; i++)
        if (!strcmp(name, pp__labs[i].name) || !strcmp(name, pp__labs[i].folder)) return &pp__labs[i];
    return NULL;
}

const pp_lab_info *pp__lab_for_schedule(const char *schedule) {
    const pp_lab_info *l = pp__lab_find(schedule);
    return l && l->symbol ? l : NULL;
}
