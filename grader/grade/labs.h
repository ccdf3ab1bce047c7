/* labs.h: the labs, one row each: the warm-up, then every schedule of the schedule table, in its order, then lab 09,
 * whose student writes the scheduler. */
#ifndef PP_LABS_H
#define PP_LABS_H

#include <stddef.h>

#include "labkind.h"

typedef struct pp_lab_info {
    const char *name;     /* the name used on the command line: the schedule's */
    const char *folder;   /* its folder under labs/ and solutions/ */
    const char *file;     /* the student's file in it, without ".c" */
    const char *symbol;   /* its step function; NULL for a lab of calls (the warm-up's functions, lab 09's
                             scheduler: warmup_call.h) */
    const pp_lab_kind *kind; /* what its tests run and how they are graded */
} pp_lab_info;

extern const pp_lab_info *pp__labs;
extern int pp__nlabs;

/* The labs' names joined for a message or a usage line (as pp__schedule_names: the warm-up first). Returns buf. */
const char *pp__lab_names(char *buf, size_t len, const char *sep, const char *last);
/* The lab called name (also accepts the folder name), or NULL. */
const pp_lab_info *pp__lab_find(const char *name);
/* The lab whose step function runs `schedule` (naive, gpipe, 1f1b, interleaved). */
const pp_lab_info *pp__lab_for_schedule(const char *schedule);

#endif /* PP_LABS_H */
