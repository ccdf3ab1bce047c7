/* runopts.h: how this grading runs its tests, as the grading command set it: the
 * sandbox, the transport, the plot folder, the in-process debugging mode. Read by the runner and by every lab
 * kind, below both. */
#ifndef PP_RUNOPTS_H
#define PP_RUNOPTS_H

#include "policy.h"

/* How later tests run their drivers (uid, limits, lockdown); copied. The default is pp__sandbox_defaults(). */
void pp__runopts_set_sandbox(const pp_sandbox *sb);

/* Picks how later tests run, by what the transport can do: ranks as threads (the default, threads: every rank a
 * thread of the supervisor, serving its driver) or as processes (mpi: the supervisor starts `mpirun -np P pplab_exe
 * grade-one ...`; pplab_exe must stay valid). A lab without ranks (the warm-up) never uses MPI. Returns -1 for a
 * transport that grading cannot use (transport.h's PP_TRANSPORT_GRADES). */
int pp__runopts_set_transport(const char *transport, const char *pplab_exe);
/* Under mpi, the host file each test's mpirun is given (NULL: none, this machine alone); must stay valid. */
void pp__runopts_set_hostfile(const char *hostfile);

/* When dir is set, every test whose run completes also draws its timeline above the canonical one as
 * dir/<test name>.png (gnuplot; the folder must exist). */
void pp__runopts_set_plot_dir(const char *dir);

/* The unsafe debugging mode (pplab grade --in-process): schedules run inside each test's supervisor, from
 * the lab's shared object, unsandboxed. For debugging the grader and for measuring what the sandbox costs. */
void pp__runopts_set_in_process(int on);

/* The sandbox of later tests: as set, else the defaults, probed once (the pre-exec filter, the drivers' empty
 * root, the build's view). A probe that fails leaves the defaults: the driver's start then names what failed.
 * Writable for a test's supervisor, which makes it its own (its uid, its capture file). */
pp_sandbox *pp__runopts_sandbox(void);
/* 1 in the unsafe debugging mode: the student's object runs inside the supervisor. */
int pp__runopts_in_process(void);
/* The pplab that mpirun starts as each rank, NULL when ranks are threads of the supervisor. */
const char *pp__runopts_mpi_exe(void);
/* The nodes mpirun spreads ranks over, NULL for this machine alone. */
const char *pp__runopts_hostfile(void);
/* The folder a completed run's timeline is drawn in, NULL for none. */
const char *pp__runopts_plot_dir(void);

#endif /* PP_RUNOPTS_H */
