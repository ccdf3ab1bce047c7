/* launch.c: what the commands that run a lab share (pplab run, pplab train): the launch under mpirun or srun, and
 * the lab's program, built and then run in sandboxed drivers or, with --in-process, in this process. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "host.h"
#include "impl_build.h"
#include "transport.h"
#include "uids.h"

int pp__cli_launch_check(const char *cmd, pp_run_config *cfg) {
    int np = pp__mpi_env_size(), me = pp__mpi_env_rank();
    const char *launcher = pp__mpi_env_launcher(), *launched = pp__transport_launched(cfg->transport);
    if (!launcher || !launched) return 0;
    if (!pp__transport_built(launched)) {
        if (me == 0)
            fprintf(stderr, "pplab %s: started by %s but this pplab was built without MPI: install libopenmpi-dev "
                            "and rebuild, or run pplab without %s\n", cmd, launcher, launcher);
        return -1;
    }
    int world = pp__config_world(cfg);
    if (np > 0 && np != world) {
        if (me == 0)
            fprintf(stderr, "pplab %s: %s started %d processes but --stages %s%sis %d: use %s %d\n", cmd, launcher,
                    np, cfg->D > 1 ? "x --dp " : "", cfg->T > 1 ? "x --tp " : "", world,
                    strcmp(launcher, "srun") ? "mpirun -np" : "srun -n", world);
        return -1;
    }
    cfg->transport = launched;
    return me;
}

int pp__cli_program_start(const char *cmd, const char *impl, int P, int in_process, pp_sandbox *sb,
                          const pp_lab_info *lab, pp_program *prog, int me) {
    char dir[PATH_MAX], err[4096];
    if (pp__impl_dir(impl, dir, sizeof dir)) {
        if (me == 0) fprintf(stderr, "pplab %s: --impl %s: no such folder (%s)\n", cmd, impl, pp__impl_choices());
        return 2;
    }
    if (!in_process && sb->lockdown && pp__sandbox_probe(sb, err, sizeof err)) {
        if (me == 0) fprintf(stderr, "pplab %s: %s; or debug with --in-process\n", cmd, err);
        return 1;
    }
    static pp_impl built;
    if (pp__impl_build(dir, lab, sb, &built, err, sizeof err) != PP_OK) {
        if (me == 0) fprintf(stderr, "pplab %s: %s\n", cmd, err);
        return 1;
    }
    if (in_process) {
        if (pp__impl_program(&built, lab, prog, err, sizeof err)) {
            if (me == 0) fprintf(stderr, "pplab %s: %s\n", cmd, err);
            return 1;
        }
        if (me == 0)
            fprintf(stderr, "pplab %s: --in-process: %s runs inside pplab, unsandboxed (for gdb, ASan and printf "
                            "debugging; grading always sandboxes it)\n", cmd, lab->symbol);
        return 0;
    }
    pp__sandbox_size_tasks(sb, P);
    if (pp__host_open(sb, built.driver, built.object, err, sizeof err)) {
        if (me == 0) fprintf(stderr, "pplab %s: %s\n", cmd, err);
        return 1;
    }
    prog->sandbox = sb;
    return 0;
}

void pp__cli_program_end(pp_sandbox *sb, int in_process) {
    pp__host_close(sb);
    /* as root the run's drivers had a uid of their own: nothing of it may be left */
    if (sb->drop_uid && sb->lockdown && !in_process) pp__uid_reap(sb->uid);
}
