/* cmd_grade.c: `pplab grade`: builds the implementation of each lab (before any test process starts), runs
 * the configuration set test by test, prints progress and the score, and writes the requested reports.
 * Exit 0 iff full marks. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "impl.h"
#include "report.h"
#include "runner.h"
#include "host.h"
#include "suite.h"
#include "transport.h"

static const char *usage =
    "usage: pplab grade [--impl labs|solutions|DIR] [--lab all|{labs}]\n"
    "                   [--config FILE] [--only-config] [--backend cpu|cuda] [--json F] [--junit F]\n"
    "                   [--gradescope F] [--table] [--quiet] [--jobs N] [--plots DIR]\n"
    "                   [--transport threads|mpi] [--memory-limit MiB] [--unsafe-no-sandbox]\n"
    "                   [--unsafe-in-process] [--view auto|namespaces|landlock|none]\n"
    "Grades each lab over its configuration set (gradients against full-batch training, weights after K\n"
    "steps, one F and one B per micro-batch and stage, bubble against theory, stash peak, message count).\n"
    "--config adds the configurations of FILE (hidden tests); --only-config grades those alone.\n"
    "--plots DIR draws each run's timeline above the canonical one into DIR/<test>.png, and writes the run's\n"
    "trace as DIR/<test>.json (Trace Event Format: ui.perfetto.dev, chrome://tracing).\n"
    "--jobs N runs N tests at once (default: one per CPU); each keeps its own time limit.\n"
    "--transport mpi runs each test as `mpirun -np P pplab grade-one ...` (one process per rank; deadlocks are\n"
    "found by a deadline inside the time limit) instead of P threads in one process.\n"
    "Every schedule runs sandboxed: one process per rank, as an unprivileged user when pplab is root, allowed only\n"
    "pp.h and memory (seccomp); --memory-limit sets its address space (default 256 MiB). Where the machine refuses\n"
    "seccomp or the uid switch, grading stops unless --unsafe-no-sandbox is given (trusted submissions only).\n"
    "--unsafe-in-process runs each schedule inside its test's own process instead (debugging, benchmarks).\n"
    "--view says how the build's tools see the file system: auto (default: namespaces where bubblewrap works,\n"
    "else landlock), namespaces, landlock or none; for tests of the sandbox.\n"
    "Exit status 0 iff full marks.\n";

/* Ctrl-C or a CI cancel: end the tests in flight too (each runs in its own process group, out of the
 * terminal's reach), then die of the same signal. */
static void on_interrupt(int sig) {
    pp__runner_abort_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* As root, what a jailed uid must never read: the hidden configuration, the reference solutions and the build
 * folder (the solutions' builds). One that others could read is made private, and said so. */
static void keep_private(const char *cfgfile) {
    char build[PATH_MAX], root[PATH_MAX], p[PATH_MAX + 16];
    pp__impl_dirs(build, root, sizeof build);
    snprintf(p, sizeof p, "%s/solutions", root);
    const char *what[][2] = {{cfgfile, "the hidden configuration"}, {p, "the reference solutions"},
                             {build, "the build folder"}};
    for (size_t i = 0; i < sizeof what / sizeof *what; i++) {
        if (!what[i][0]) continue;
        int rc = pp__private_fix(what[i][0]);
        if (rc > 0)
            fprintf(stderr, "pplab grade: %s (%s) was open to other users: made it private (chmod go-rwx); keep it "
                    "so (docs/design.md, \"The trust boundary\")\n", what[i][0], what[i][1]);
        else if (rc < 0)
            pp__cli_fail("grade", "%s (%s) is open to other users, and its mode cannot be changed: make it private "
                         "(chmod go-rwx) before grading as root", what[i][0], what[i][1]);
    }
}

int pp__cmd_grade(int argc, char **argv) {
    const char *impl = "labs", *lab = "all", *backend = "cpu", *json = NULL, *junit = NULL, *gs = NULL, *cfgfile = NULL, *plots = NULL,
               *transport = "threads";
    int only_config = 0, table = 0, quiet = 0, jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    pp_sandbox sb;
    pp__sandbox_defaults(&sb);
    int in_process = 0, unsafe = 0;
    const char *view = "auto";
    const pp_flag flags[] = {
        {.name = "--view", .kind = PP_FLAG_STR, .to = &view},
        {.name = "--impl", .kind = PP_FLAG_STR, .to = &impl},
        {.name = "--lab", .kind = PP_FLAG_STR, .to = &lab},
        {.name = "--backend", .kind = PP_FLAG_STR, .to = &backend},
        {.name = "--json", .kind = PP_FLAG_STR, .to = &json},
        {.name = "--junit", .kind = PP_FLAG_STR, .to = &junit},
        {.name = "--gradescope", .kind = PP_FLAG_STR, .to = &gs},
        {.name = "--config", .kind = PP_FLAG_STR, .to = &cfgfile},
        {.name = "--plots", .kind = PP_FLAG_STR, .to = &plots},
        {.name = "--transport", .kind = PP_FLAG_STR, .to = &transport},
        {.name = "--jobs", .alias = "-j", .kind = PP_FLAG_INT, .to = &jobs, .lo = 1, .hi = 64,
         .need = "a number of tests to run at once, 1..64"},
        {.name = "--memory-limit", .kind = PP_FLAG_MIB, .to = &sb.memory_limit, .lo = 16, .hi = 1 << 20},
        {.name = "--unsafe-no-sandbox", .kind = PP_FLAG_SET, .to = &unsafe, .set = 1},
        {.name = "--unsafe-in-process", .kind = PP_FLAG_SET, .to = &in_process, .set = 1},
        {.name = "--only-config", .kind = PP_FLAG_SET, .to = &only_config, .set = 1},
        {.name = "--table", .kind = PP_FLAG_SET, .to = &table, .set = 1},
        {.name = "--quiet", .kind = PP_FLAG_SET, .to = &quiet, .set = 1},
    };
    for (int i = 2; i < argc; i++) {
        if (pp__cli_flag(flags, (int)(sizeof flags / sizeof flags[0]), argc, argv, &i)) continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            pp__cli_usage(stdout, usage);
            return 0;
        }
        pp__cli_fail("grade", "unknown flag '%s'", argv[i]);
    }
    if (unsafe) sb.lockdown = 0, sb.drop_uid = 0;
    if (pp__view_parse(view) < 0) pp__cli_fail("grade", "unknown --view '%s': use auto, namespaces, landlock or none", view);
    sb.view = (pp_view)pp__view_parse(view);
    if (strcmp(lab, "all") && !pp__lab_find(lab))
        pp__cli_fail("grade", "unknown lab '%s': use all, %s", lab, pp__lab_names((char[300]){0}, 300, ", ", " or "));
    const pp_lab_info *li = pp__lab_find(lab);
    if (li) lab = li->name;
    if (strcmp(backend, "cpu") && strcmp(backend, "cuda")) pp__cli_fail("grade", "unknown backend '%s': use cpu or cuda", backend);
    if (only_config && !cfgfile) pp__cli_fail("grade", "%s needs --config FILE", "--only-config");
    /* under mpi this process stays free of MPI: each test is an mpirun of this very binary */
    char exe[PATH_MAX];
    if (strcmp(transport, "threads") && strcmp(transport, "mpi"))
        pp__cli_fail("grade", "unknown transport '%s': use threads or mpi", transport);
    if (!strcmp(transport, "mpi")) {
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (!pp__mpi_built())
            pp__cli_fail("grade", "--transport %s: this pplab was built without MPI: install libopenmpi-dev and rebuild",
                              transport);
        if (system("command -v mpirun >/dev/null 2>&1") != 0)
            pp__cli_fail("grade", "--transport %s: mpirun not found: install openmpi-bin (Open MPI)", transport);
        if (k <= 0) pp__cli_fail("grade", "--transport %s: cannot find the pplab executable (/proc/self/exe)", transport);
        exe[k] = 0;
        if (pp__mpi_env_launcher())
            pp__cli_fail("grade", "--transport %s: run pplab grade itself without mpirun; it starts one mpirun per test",
                              transport);
        pp__runner_set_transport("mpi", exe);
    }
    char dir[PATH_MAX], err[4096];
    if (pp__impl_dir(impl, dir, sizeof dir))
        pp__cli_fail("grade", "--impl %s: no such folder (use labs, solutions or a folder with the labs' layout)", impl);
    keep_private(cfgfile);

    pp_test_config *cfgs = NULL;
    int n = only_config ? 0 : pp__suite_default(lab, !strcmp(backend, "cuda"), &cfgs);
    if (cfgfile && pp__suite_load(cfgfile, lab, &cfgs, &n, err, sizeof err)) {
        fprintf(stderr, "pplab grade: %s\n", err);
        free(cfgs);
        return 2;
    }
    if (n == 0) {
        fprintf(stderr, "pplab grade: no configurations to grade for lab %s\n", lab);
        free(cfgs);
        return 2;
    }
    /* The sandbox must work here before anything of a submission is built or run: no silent downgrade. */
    if (in_process && !strcmp(transport, "mpi"))
        pp__cli_fail("grade", "--unsafe-in-process runs schedules in the test's own process: use it with --transport threads");
    if (!in_process && sb.lockdown && pp__sandbox_probe(&sb, err, sizeof err)) pp__cli_fail("grade", "%s", err);
    pp__runner_set_sandbox(&sb);
    pp__runner_set_in_process(in_process);
    /* Build every lab involved first: nothing is forked or threaded yet. */
    pp_impl *built = pp__xcalloc((size_t)pp__nlabs, sizeof *built);
    pp_status *build_st = pp__xcalloc((size_t)pp__nlabs, sizeof *build_st);
    char (*build_err)[2048] = pp__xcalloc((size_t)pp__nlabs, sizeof *build_err);
    for (int l = 0; l < pp__nlabs; l++) {
        int used = 0;
        build_st[l] = PP_OK;
        for (int i = 0; i < n; i++) used |= !strcmp(cfgs[i].lab, pp__labs[l].name);
        if (used) build_st[l] = pp__impl_build(dir, &pp__labs[l], &sb, &built[l], build_err[l], sizeof build_err[l]);
    }
    if (plots) {
        mkdir(plots, 0755);
        pp__runner_set_plot_dir(plots);
    }
    /* `pplab grade | head` must still write the report files */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    int color = isatty(1) && !getenv("NO_COLOR");
    pp_test_result *res = pp__xcalloc((size_t)n, sizeof *res);
    if (!quiet)
        printf("grading %s (%s) on %s%s: %d tests%s\n", impl, dir, backend,
               strcmp(transport, "mpi") ? "" : ", one mpirun per test", n,
               in_process ? " (UNSANDBOXED: --unsafe-in-process)" : sb.lockdown ? "" : " (UNSANDBOXED: --unsafe-no-sandbox)");
    /* `jobs` tests in flight at once; results are reported in configuration order */
    pp_runner_job **job = pp__xcalloc((size_t)n, sizeof *job);
    int started = 0;
    for (int i = 0; i < n; i++) {
        for (; started < n && started < i + jobs; started++) {
            int l = (int)(pp__lab_find(cfgs[started].lab) - pp__labs);
            job[started] = pp__runner_start(&cfgs[started], build_st[l] == PP_OK ? &built[l] : NULL, build_st[l],
                                            build_err[l], backend, &res[started]);
        }
        pp__runner_finish(job[i], &res[i]);
        pp__report_name_unique(res, i);
        if (!quiet) {
            pp__report_progress(stdout, &res[i], i + 1, n, color);
            fflush(stdout);
        }
    }
    free(job);
    free(built);
    free(build_st);
    free(build_err);
    if (table) pp__report_table(stdout, res, n);
    pp__report_summary(stdout, res, n, color);
    int rc = 0;
    if (json && pp__report_json(json, res, n, impl, backend)) rc = 2;
    if (junit && pp__report_junit(junit, res, n, impl, backend)) rc = 2;
    if (gs && pp__report_gradescope(gs, res, n, impl, backend)) rc = 2;
    double score = 0, max = 0;
    for (int i = 0; i < n; i++) score += res[i].score, max += res[i].max;
    if (!rc) rc = score == max ? 0 : 1;
    free(res);
    free(cfgs);
    return rc;
}
