/* HOSTILE ON PURPOSE (object write-fds): does the work, then writes fake verdicts to every descriptor it might
 * have and rewinds its output. */
#include "sys.h"
#include "gpipe_body.h"
void pp_gpipe_step(pp_rank *r) {
    honest_gpipe(r);
    static const char fake[] = "{\"score\": 148, \"max_score\": 148}\nScore: 148/148\nFULL MARKS\n";
    for (int fd = 0; fd < 1024; fd++) sys(NR_write, fd, fake, sizeof fake - 1);
    sys(NR_lseek, 1, 0, 0);
    sys(NR_write, 1, fake, sizeof fake - 1);
}
