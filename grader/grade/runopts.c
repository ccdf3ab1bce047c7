/* runopts.c: the grading's settings for its tests, set once by the grading command. */
#include "runopts.h"

#include <stdio.h>

#include "caps.h"

static const char *plot_dir;
static const char *mpi_exe;      /* pplab to start under mpirun; NULL: ranks are threads of the supervisor */
static const char *mpi_hostfile; /* ... and the nodes it spreads them over; NULL: this machine */
static pp_sandbox sandbox;
static int sandbox_set;
static int in_process;

void pp__runopts_set_in_process(int on) { in_process = on; }

int pp__runopts_in_process(void) { return in_process; }

void pp__runopts_set_plot_dir(const char *dir) { plot_dir = dir; }

const char *pp__runopts_plot_dir(void) { return plot_dir; }

void pp__runopts_set_sandbox(const pp_sandbox *sb) {
    sandbox = *sb;
    sandbox_set = 1;
}

pp_sandbox *pp__runopts_sandbox(void) {
    if (!sandbox_set) {
        char err[600];
        pp__sandbox_defaults(&sandbox);
        if (pp__sandbox_probe(&sandbox, err, sizeof err)) fprintf(stderr, "pplab: %s\n", err);
        sandbox_set = 1;
    }
    return &sandbox;
}

void pp__runopts_set_hostfile(const char *hostfile) { mpi_hostfile = hostfile; }

const char *pp__runopts_hostfile(void) { return mpi_hostfile; }

int pp__runopts_set_transport(const char *transport, const char *pplab_exe) {
    unsigned caps = pp__transport_caps(transport);
    if (!(caps & PP_TRANSPORT_GRADES)) return -1;
    if (!(caps & PP_TRANSPORT_PROCESSES)) {
        mpi_exe = NULL;
        return 0;
    }
    if (!pplab_exe) return -1;
    mpi_exe = pplab_exe;
    return 0;
}

const char *pp__runopts_mpi_exe(void) { return mpi_exe; }
