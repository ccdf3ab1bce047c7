/* cmd_grade.c: `pplab grade`: builds the implementation of each lab (before any test process starts), runs
 * the configuration set test by test, prints progress and the score, and writes the requested reports.
 * Exit 0 iff full marks. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "answers.h"
#include "cli.h"
#include "impl_build.h"
#include "report.h"
#include "runner.h"
#include "scheduler_lab.h"
#include "host.h"
#include "suite.h"
#include "testcfg.h"
#include "transport.h"

static const char usage[] =
    "usage: pplab grade [flag ...]\n"
    "Grades each lab over its configuration set (gradients against full-batch training, weights after K\n"
    "steps, one F and one B per micro-batch and stage, bubble against theory, stash peak, message count) and\n"
    "prints a line per test as it finishes, then the score per lab.\n"
    "Every schedule runs sandboxed: one process per rank, as an unprivileged user when pplab is root, allowed only\n"
    "pp.h and memory (seccomp). Where the machine refuses seccomp or the uid switch, grading stops unless\n"
    "--unsafe-no-sandbox is given.\n";

static const char notes[] = "Exit status 0 iff full marks, 1 when a point was lost, 2 for a usage error, a bad "
                           "configuration file\nor a report that could not be written, 3 when a test could not be "
                           "graded (pplab or the machine\nfailed, not the submission: the score is no grade).\n";

/* Everything `pplab grade` parses. */
typedef struct grade_opts {
    const char *impl, *lab, *backend, *json, *junit, *gs, *cfgfile, *plots, *transport, *hostfile;
    int only_config, table, quiet, jobs, in_process, unsafe;
    double time_limit; /* 0: each test's own */
    pp_sandbox sb;
} grade_opts;

static void grade_opts_init(grade_opts *o) {
    memset(o, 0, sizeof *o);
    o->impl = "labs", o->lab = "all", o->backend = "cpu", o->transport = "threads";
    o->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    pp__sandbox_defaults(&o->sb);
}

/* The one table of grade's flags: the parser's and --help's. */
static int grade_table(grade_opts *o, pp_flag *out) {
    const pp_flag f[] = {
        {.name = "--impl", .kind = PP_FLAG_STR, .to = &o->impl, .arg = "I",
         .help = pp__impl_choices()},
        {.name = "--lab", .kind = PP_FLAG_STR, .to = &o->lab, .arg = "L",
         .help = "all, a lab ({labs}) or a lab's folder, which grades every lab in it (05-zerobubble: zbh1, "
                 "zbh2 and zbinterleaved)"},
        {.name = "--config", .kind = PP_FLAG_STR, .to = &o->cfgfile, .arg = "FILE",
         .help = "add the configurations of FILE (hidden tests)"},
        {.name = "--only-config", .kind = PP_FLAG_SET, .to = &o->only_config, .set = 1,
         .help = "grade the --config file's configurations alone, without the default set"},
        {.name = "--backend", .kind = PP_FLAG_STR, .to = &o->backend, .arg = "cpu|cuda",
         .help = "where the schedules compute (cuda grades a smaller set)"},
        {.name = "--jobs", .alias = "-j", .kind = PP_FLAG_INT, .to = &o->jobs, .lo = 1, .hi = 64,
         .need = "a number of tests to run at once, 1..64", .help = "tests run at once; each keeps its own time limit",
         .dflt = "one per CPU"},
        {.name = "--quiet", .kind = PP_FLAG_SET, .to = &o->quiet, .set = 1,
         .help = "no line per test (nor its failed checks and output): only the score per lab, and --table's table"},
        {.name = "--table", .kind = PP_FLAG_SET, .to = &o->table, .set = 1,
         .help = "after the tests, a table of one row per test: lab, P, M, v, bubble, theory, peaks, gradient error, "
                 "score and result, with a note of its configuration (latency, recompute, steps, sizes, hidden test)"},
        {.name = "--json", .kind = PP_FLAG_STR, .to = &o->json, .arg = "F",
         .help = "write the report as JSON (what scripts should read)", .dflt = "not written"},
        {.name = "--junit", .kind = PP_FLAG_STR, .to = &o->junit, .arg = "F",
         .help = "write the report as JUnit XML (Jenkins, GitLab, GitHub)", .dflt = "not written"},
        {.name = "--gradescope", .kind = PP_FLAG_STR, .to = &o->gs, .arg = "F",
         .help = "write Gradescope's results.json", .dflt = "not written"},
        {.name = "--plot-dir", .kind = PP_FLAG_STR, .to = &o->plots, .arg = "DIR", .old = "--plots",
         .help = "draw each run's timeline above the canonical one into DIR/<test>.png (gnuplot), and write the "
                 "run's trace as DIR/<test>.json (Trace Event Format: ui.perfetto.dev, chrome://tracing)",
         .dflt = "not drawn"},
        {.name = "--transport", .kind = PP_FLAG_STR, .to = &o->transport, .arg = "threads|mpi",
         .help = "threads: a test's P ranks are threads of its process; mpi: each test is `mpirun -np P pplab "
                 "grade-one ...`, one process per rank (a deadlock is found by a deadline inside the time limit)"},
        {.name = "--hostfile", .kind = PP_FLAG_STR, .to = &o->hostfile, .arg = "F",
         .help = "with --transport mpi: the nodes each test's mpirun spreads its ranks over (Open MPI's host file; "
                 "rank 0, which writes the result, on the first one; the build and $TMPDIR at the same path on "
                 "every node)", .dflt = "this machine alone"},
        {.name = "--memory-limit", .kind = PP_FLAG_MIB, .to = &o->sb.memory_limit, .lo = 16, .hi = 1 << 20,
         .help = "address space of each schedule's process"},
        {.name = "--unsafe-no-sandbox", .kind = PP_FLAG_SET, .to = &o->unsafe, .set = 1,
         .help = "where the machine refuses seccomp or the uid switch, run schedules without them instead of "
                 "stopping: trusted submissions only"},
        {.name = "--in-process", .kind = PP_FLAG_SET, .to = &o->in_process, .set = 1, .old = "--unsafe-in-process",
         .help = "run each schedule inside its test's own process, unsandboxed: trusted code only (debugging the "
                 "grader, benchmarks)"},
        /* the choices in pp_view's order */
        {.name = "--view", .kind = PP_FLAG_CHOICE, .to = &o->sb.view, .choices = "auto|namespaces|landlock|none",
         .for_tests = 1, .help = "how the build's tools see the file system (auto: namespaces where bubblewrap "
                                 "works, else landlock), for the sandbox's own tests"},
        {.name = "--time-limit", .kind = PP_FLAG_NUM, .to = &o->time_limit, .lo = 1, .arg = "S", .for_tests = 1,
         .help = "caps every test's time limit at S seconds, so that the kit's sweeps over its broken submissions "
                 "(an endless loop among them) stay short", .dflt = "each test's own, 10 s unless its time= says"},
    };
    memcpy(out, f, sizeof f);
    return (int)(sizeof f / sizeof f[0]);
}

static int grade_flags(pp_flag *out) {
    static grade_opts defaults;
    grade_opts_init(&defaults);
    return grade_table(&defaults, out);
}

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

/* The grading's transport, checked, into runopts: where ranks are processes this process stays free of MPI, and
 * each test is a launch (mpirun) of this very binary. */
static void grade_transport(const grade_opts *o) {
    static char exe[PATH_MAX]; /* runopts keeps it */
    const char *transport = o->transport;
    char names[64];
    unsigned caps = pp__transport_caps(transport);
    if (!(caps & PP_TRANSPORT_GRADES))
        pp__cli_fail("grade", "unknown transport '%s': use %s", transport,
                     pp__transport_names(PP_TRANSPORT_GRADES, names, sizeof names, ", ", " or "));
    if (!(caps & PP_TRANSPORT_PROCESSES)) {
        if (o->hostfile)
            pp__cli_fail("grade", "--hostfile spreads mpirun's ranks over nodes: use it with --transport mpi");
        return;
    }
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (!pp__transport_built(transport))
        pp__cli_fail("grade", "--transport %s: this pplab was built without MPI: install libopenmpi-dev and rebuild",
                     transport);
    if (system("command -v mpirun >/dev/null 2>&1") != 0)
        pp__cli_fail("grade", "--transport %s: mpirun not found: install openmpi-bin (Open MPI)", transport);
    if (k <= 0) pp__cli_fail("grade", "--transport %s: cannot find the pplab executable (/proc/self/exe)", transport);
    exe[k] = 0;
    if (pp__mpi_env_launcher())
        pp__cli_fail("grade", "--transport %s: run pplab grade itself without mpirun; it starts one mpirun per test",
                     transport);
    pp__runopts_set_transport(transport, exe);
    if (o->hostfile && access(o->hostfile, R_OK))
        pp__cli_fail("grade", "--hostfile %s: %s: give Open MPI's host file (one node per line, slots=N)", o->hostfile,
                     strerror(errno));
    pp__runopts_set_hostfile(o->hostfile);
}

/* The configurations to grade into *cfgs: the lab's default set and --config's. Their count, or -1 once it said
 * why there are none to grade. */
static int grade_configs(const grade_opts *o, pp_test_config **cfgs) {
    char err[4096];
    int n = o->only_config ? 0 : pp__suite_default(o->lab, !strcmp(o->backend, "cuda"), cfgs);
    if (o->cfgfile && pp__suite_load(o->cfgfile, o->lab, cfgs, &n, err, sizeof err)) {
        fprintf(stderr, "pplab grade: %s\n", err);
        free(*cfgs);
        return -1;
    }
    if (n == 0) {
        fprintf(stderr, "pplab grade: no configurations to grade for lab %s\n", o->lab);
        free(*cfgs);
        return -1;
    }
    return n;
}

/* A handout holds the answers of its public configurations alone (answers.h): what it cannot grade is refused
 * here, in one line, before anything is built. */
static void grade_refuse_unheld(const grade_opts *o, const pp_test_config *cfgs, int n, int recorded) {
    char err[4096];
    for (int i = 0; i < n; i++) {
        if (!strcmp(cfgs[i].lab, "warmup")) {
            if (cfgs[i].drawn && recorded)
                pp__cli_fail("grade", "--config %s: its warmup-seed line draws warm-up cases whose answer keys only "
                             "the instructor's kit computes; this handout grades the public cases: drop the line",
                             o->cfgfile ? o->cfgfile : "");
            continue;
        }
        pp_run_config rc;
        if (!strcmp(cfgs[i].lab, "scheduler")) {
            /* lab 09 grades against its references: a handout holds its public problems' alone (the kit computes
             * any, and a problem the configuration check passed is one) */
            pp_sched_problem pb;
            pp_sched_refs refs;
            if (recorded && (pp__scheduler_problem(&cfgs[i], &pb, &rc, err, sizeof err) ||
                             pp__sched_refs(&pb, 0, &refs, err, sizeof err)))
                pp__cli_fail("grade", "%s%s scheduler P=%d M=%d v=%d: %s", cfgs[i].secret ? "--config " : "",
                             cfgs[i].secret && o->cfgfile ? o->cfgfile : "", cfgs[i].P, cfgs[i].M, cfgs[i].v, err);
            continue;
        }
        pp__test_to_run(&cfgs[i], o->backend, &rc);
        rc.place = NULL; /* a grid lab's run is held to the canonical placement's step */
        if (!pp__theory_held(&rc))
            pp__cli_fail("grade", "%s%s %s P=%d M=%d v=%d: %s", cfgs[i].secret ? "--config " : "",
                         cfgs[i].secret && o->cfgfile ? o->cfgfile : "", cfgs[i].lab, rc.P, rc.M, rc.v,
                         pp__theory_unheld(&rc, err, sizeof err));
    }
}

/* The sandbox must work here before anything of a submission is built or run: no silent downgrade. Nothing on disk
 * changes before every argument has been checked. */
static void grade_sandbox(const grade_opts *o, pp_sandbox *sb) {
    char err[4096], driver[PATH_MAX];
    const char *outs[][2] = {{o->json, "--json"}, {o->junit, "--junit"}, {o->gs, "--gradescope"}};
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++)
        if (outs[i][0] && pp__cli_writable(outs[i][0], err, sizeof err)) pp__cli_fail("grade", "%s %s", outs[i][1], err);
    pp__impl_driver(driver, sizeof driver);
    if (!o->in_process && pp__sandbox_check_driver(sb, driver, err, sizeof err)) pp__cli_fail("grade", "%s", err);
    keep_private(o->cfgfile);
    if (o->in_process && (pp__transport_caps(o->transport) & PP_TRANSPORT_PROCESSES))
        pp__cli_fail("grade", "--in-process runs schedules in the test's own process: use it with --transport threads");
    if (!o->in_process && sb->lockdown && pp__sandbox_probe(sb, err, sizeof err)) pp__cli_fail("grade", "%s", err);
    pp__runopts_set_sandbox(sb);
    pp__runopts_set_in_process(o->in_process);
}

/* Every lab the configurations use, built before anything is forked or threaded. */
typedef struct grade_builds {
    pp_impl *built;
    pp_status *st;
    char (*err)[2048];
} grade_builds;

static void grade_build(const char *dir, const pp_test_config *cfgs, int n, pp_sandbox *sb, grade_builds *b) {
    b->built = pp__xcalloc((size_t)pp__nlabs, sizeof *b->built);
    b->st = pp__xcalloc((size_t)pp__nlabs, sizeof *b->st);
    b->err = pp__xcalloc((size_t)pp__nlabs, sizeof *b->err);
    for (int l = 0; l < pp__nlabs; l++) {
        int used = 0;
        b->st[l] = PP_OK;
        for (int i = 0; i < n; i++) used |= !strcmp(cfgs[i].lab, pp__labs[l].name);
        if (used) b->st[l] = pp__impl_build(dir, &pp__labs[l], sb, &b->built[l], b->err[l], sizeof b->err[l]);
    }
}

/* Runs the tests, `jobs` in flight at once, and reports each one as it finishes, in configuration order. */
static void grade_run(const grade_opts *o, const pp_test_config *cfgs, int n, const grade_builds *b,
                      pp_test_result *res, int color) {
    pp_runner_job **job = pp__xcalloc((size_t)n, sizeof *job);
    int started = 0;
    for (int i = 0; i < n; i++) {
        for (; started < n && started < i + o->jobs; started++) {
            int l = (int)(pp__lab_find(cfgs[started].lab) - pp__labs);
            job[started] = pp__runner_start(&cfgs[started], b->st[l] == PP_OK ? &b->built[l] : NULL, b->st[l],
                                            b->err[l], o->backend, &res[started]);
        }
        pp__runner_finish(job[i], &res[i]);
        pp__report_name_unique(res, i);
        if (!o->quiet) {
            pp__report_progress(stdout, &res[i], i + 1, n, color);
            fflush(stdout);
        }
    }
    free(job);
}

/* The summary and the report files; the exit status: 0 iff full marks, 1 below, 2 for a report not written, 3 for
 * a test that could not be graded. */
static int grade_report(const grade_opts *o, pp_test_result *res, int n, int color) {
    if (o->table) pp__report_table(stdout, res, n);
    pp__report_summary(stdout, res, n, color);
    int rc = 0;
    if (o->json && pp__report_json(o->json, res, n, o->impl, o->backend)) rc = 2;
    if (o->junit && pp__report_junit(o->junit, res, n, o->impl, o->backend)) rc = 2;
    if (o->gs && pp__report_gradescope(o->gs, res, n, o->impl, o->backend)) rc = 2;
    double score = 0, max = 0;
    int ungraded = 0;
    for (int i = 0; i < n; i++) score += res[i].score, max += res[i].max, ungraded += pp__test_ungraded(&res[i]);
    if (ungraded)
        printf("NOT GRADED: %d test%s failed in pplab or the machine, not in the submission (see each one's error): "
               "the score above is no grade; fix the cause and grade again\n", ungraded, ungraded > 1 ? "s" : "");
    if (!rc) rc = ungraded ? 3 : score == max ? 0 : 1;
    return rc;
}

/* Where an mpi grading's ranks run, for its first line: the host file's nodes (the first word of each line, in its
 * order, which is mpirun's), else the Slurm allocation mpirun takes its slots from, else this machine. */
static void grade_where(const grade_opts *o, char *out, size_t len) {
    const char *job = getenv("SLURM_JOB_ID"), *nodes = getenv("SLURM_JOB_NODELIST");
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(out, len, "this machine (%s)", host);
    if (job && *job) snprintf(out, len, "Slurm job %s's nodes (%s)", job, nodes && *nodes ? nodes : "?");
    FILE *f = o->hostfile ? fopen(o->hostfile, "r") : NULL;
    if (!f) return;
    size_t n = (size_t)snprintf(out, len, "the nodes of %s (", o->hostfile);
    char line[512], name[256];
    for (int k = 0; fgets(line, sizeof line, f) && n < len;)
        if (sscanf(line, " %255s", name) == 1 && name[0] != '#')
            n += (size_t)snprintf(out + n, len - n, "%s%s", k++ ? ", " : "", name);
    fclose(f);
    if (n < len) snprintf(out + n, len - n, ")");
}

static int grade_main(int argc, char **argv) {
    static grade_opts o;
    pp_flag flags[PP_CLI_MAX_FLAGS];
    grade_opts_init(&o);
    pp__cli_parse(&pp__cli_grade, flags, grade_table(&o, flags), argc, argv, NULL, NULL);
    pp_sandbox sb = o.sb;
    if (o.unsafe) sb.lockdown = 0, sb.drop_uid = 0;
    /* a folder names every lab in it (05-zerobubble: zbh1 and zbh2), which the suite selects by folder */
    if (strcmp(o.lab, "all") && !pp__lab_find(o.lab))
        pp__cli_fail("grade", "unknown lab '%s': use all, %s, or a lab's folder", o.lab,
                     pp__lab_names((char[300]){0}, 300, ", ", " or "));
    if (strcmp(o.backend, "cpu") && strcmp(o.backend, "cuda"))
        pp__cli_fail("grade", "unknown backend '%s': use cpu or cuda", o.backend);
    if (o.only_config && !o.cfgfile) pp__cli_fail("grade", "%s needs --config FILE", "--only-config");
    grade_transport(&o);
    char dir[PATH_MAX];
    if (pp__impl_dir(o.impl, dir, sizeof dir))
        pp__cli_fail("grade", "--impl %s: no such folder (%s)", o.impl, pp__impl_choices());
    pp_test_config *cfgs = NULL;
    int n = grade_configs(&o, &cfgs);
    if (n < 0) return 2;
    int recorded = !strcmp(pp__answers_source(), "recorded");
    grade_refuse_unheld(&o, cfgs, n, recorded);
    for (int i = 0; i < n && o.time_limit > 0; i++)
        if (cfgs[i].time_limit_s > o.time_limit) cfgs[i].time_limit_s = o.time_limit;
    grade_sandbox(&o, &sb);
    grade_builds b;
    grade_build(dir, cfgs, n, &sb, &b);
    if (o.plots) {
        mkdir(o.plots, 0755);
        pp__runopts_set_plot_dir(o.plots);
    }
    /* `pplab grade | head` must still write the report files */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    int color = isatty(1) && !getenv("NO_COLOR");
    pp_test_result *res = pp__xcalloc((size_t)n, sizeof *res);
    char where[1024] = "";
    if (pp__transport_caps(o.transport) & PP_TRANSPORT_PROCESSES) {
        char nodes[sizeof where - 64];
        grade_where(&o, nodes, sizeof nodes);
        snprintf(where, sizeof where, ", transport %s: one mpirun per test on %s", o.transport, nodes);
    }
    if (!o.quiet)
        printf("grading %s (%s) on %s%s: %d tests%s%s\n", o.impl, dir, o.backend, where, n,
               o.in_process ? " (UNSANDBOXED: --in-process)" : sb.lockdown ? "" : " (UNSANDBOXED: --unsafe-no-sandbox)",
               recorded ? "; this handout grades its public configurations, with the answers it records (the "
                          "instructor's kit grades hidden ones)" : "");
    grade_run(&o, cfgs, n, &b, res, color);
    free(b.built);
    free(b.st);
    free(b.err);
    int rc = grade_report(&o, res, n, color);
    free(res);
    free(cfgs);
    return rc;
}

const pp_cli_command pp__cli_grade = {
    .name = "grade",
    .summary = "grade a lab implementation",
    .usage = usage,
    .notes = notes,
    .flags = grade_flags,
    .main = grade_main,
};
