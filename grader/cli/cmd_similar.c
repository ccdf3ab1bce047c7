/* cmd_similar.c: `pplab similar`: an instructor's search for copies. Every student's lab file is compared with the
 * same file of every other submission and with the kit's own code (its lab's reference solution and the sources
 * that compute what the labs grade), and each pair whose similarity reaches the threshold is listed with the line
 * ranges that match. The comparing is sim_c's, Debian's similarity tester (package similarity-tester), run as a
 * child process: this file chooses its options, feeds it files and reads its output, and measures nothing itself.
 * A similarity is evidence for a person to read, never a verdict. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "impl_build.h"
#include "report.h"
#include "text.h"

#ifndef PP_ANSWER_SOURCES
/* The kit's answer sources, space-separated paths relative to the kit root: the code that computes what the labs
 * grade (canonical orders, the order interpreter, the warm-up's keys, the model's tensor-parallel block). The
 * Makefile passes the list (-DPP_ANSWER_SOURCES='"a.c b.c"'), so that it is written once, where the build names
 * those files; a build without it compares the submissions with the reference solutions alone. */
#define PP_ANSWER_SOURCES ""
#endif

/* Measured on the kit's own files (each reference solution against copies of it renamed, reordered and
 * reformatted, and against the valid solutions of tests/valid written apart from it), with the stubs' text left
 * out as below. At sim_c's own minimum run of 24 tokens every disguised copy scored 88% or more (GPipe with two
 * statements swapped the lowest) and every solution written apart 32% or less (a GPipe of isend/irecv requests:
 * GPipe is short, and pp.h leaves few ways to write its loops). 50 sits in the middle of that gap. At a run of 16
 * the same independent GPipe scored 86%; at 32 the reordered GPipe fell to 80% and independent work gained nothing,
 * so the minimum run stays sim_c's default. */
enum { SIM_THRESHOLD = 50, SIM_MIN_RUN = 24 };

/* Caps on what a submission may hand the comparison: a lab file is a page or two of C. */
enum { SIM_MAX_BYTES = 4 << 20, SIM_MAX_DEPTH = 32, SIM_SHOWN_RUNS = 20 };

static const char usage[] =
    "usage: pplab similar [flag ...] SUBMISSION ...\n"
    "Compares each lab file of the submissions with the same file of every other submission and with the kit's own\n"
    "code (the lab's reference solution and the sources that compute what the labs grade), and lists each pair at\n"
    "least --threshold similar, most similar first, with the line ranges that match. A SUBMISSION is a folder (a\n"
    "student's tree, whose labs/NN-lab/ hold the lab files, or a flat upload such as Gradescope's, in which each lab\n"
    "file is found by its name anywhere below) or a single lab file; the report names it as given. Text a file\n"
    "shares with its lab's stub, which every student starts from, counts for no one. sim_c (Debian's\n"
    "similarity-tester) does the comparing: layout, comments and the names of identifiers do not count, so a\n"
    "renamed, re-indented or reordered copy still matches. A similarity is evidence to read, never a verdict.\n";

static const char notes[] = "Exit status 0 when no pair reaches the threshold, 1 when one does, 2 for a usage error, a "
                            "submission that\ncannot be read, or when sim_c is missing or fails.\n";

/* Everything `pplab similar` parses. */
typedef struct similar_opts {
    const char *kit, *stubs, *json, *sources;
    int threshold, min_run;
    const char **subs; /* the operands, in the order given */
    int nsubs;
} similar_opts;

static void similar_opts_init(similar_opts *o) {
    *o = (similar_opts){.threshold = SIM_THRESHOLD, .min_run = SIM_MIN_RUN, .sources = PP_ANSWER_SOURCES};
}

/* The one table of similar's flags: the parser's and --help's. */
static int similar_table(similar_opts *o, pp_flag *out) {
    const pp_flag f[] = {
        {.name = "--threshold", .kind = PP_FLAG_INT, .to = &o->threshold, .lo = 1, .hi = 100, .arg = "PCT",
         .help = "list the pairs at least PCT% similar: the larger of the pair's two shares, a file's share being "
                 "the part of its tokens that sim_c finds in the other file"},
        {.name = "--min-run", .kind = PP_FLAG_INT, .to = &o->min_run, .lo = 8, .hi = 10000, .arg = "N",
         .help = "the shortest run of tokens that counts as shared (sim_c -r); shorter runs also match work done "
                 "apart, as pp.h leaves few ways to write a loop"},
        {.name = "--kit", .kind = PP_FLAG_STR, .to = &o->kit, .arg = "DIR",
         .help = "the kit the submissions are compared with: its solutions/, its answer sources and its labs/ "
                 "stubs", .dflt = "the folder above this pplab's build folder"},
        {.name = "--stubs", .kind = PP_FLAG_STR, .to = &o->stubs, .arg = "DIR",
         .help = "the stubs every student starts from, as DIR/NN-lab/file.c: text a file shares with its stub is "
                 "left out of every comparison", .dflt = "KIT/labs"},
        {.name = "--json", .kind = PP_FLAG_STR, .to = &o->json, .arg = "F",
         .help = "also write the pairs as JSON, with their shares and line ranges", .dflt = "not written"},
        {.name = "--answer-sources", .kind = PP_FLAG_STR, .to = &o->sources, .arg = "PATHS", .for_tests = 1,
         .help = "the kit's answer sources, space-separated paths relative to the kit, instead of the list the "
                 "build was given", .dflt = PP_ANSWER_SOURCES[0] ? PP_ANSWER_SOURCES : "none"},
    };
    memcpy(out, f, sizeof f);
    return (int)(sizeof f / sizeof f[0]);
}

static int similar_flags(pp_flag *out) {
    static similar_opts defaults;
    similar_opts_init(&defaults);
    return similar_table(&defaults, out);
}

static char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    return memcpy(pp__xmalloc(n), s, n);
}

/* s as one line of the report: cleaned as all text pplab did not write (text.h), its tabs and newlines made '?'
 * too, so that a folder's name can neither repaint a terminal nor pass for a line of the report's own. Freed by
 * the caller. */
static char *shown(const char *s) {
    char *c = pp__text_clean(s, strlen(s));
    if (!c) PP_DIE("free some memory and rerun", "out of memory");
    for (char *p = c; *p; p++)
        if (*p == '\n' || *p == '\t') *p = '?';
    return c;
}

static void sub_operand(void *ctx, const char *arg) {
    similar_opts *o = ctx;
    for (int i = 0; i < o->nsubs; i++)
        if (!strcmp(o->subs[i], arg)) {
            char *name = shown(arg);
            pp__cli_fail("similar", "%s is given twice: name each submission once", name);
        }
    o->subs[o->nsubs++] = arg;
}

/* ---- what is compared -------------------------------------------------------------------------------------------- */

/* A lab file as the schedule table names it (pplab info --lab-files): "02-gpipe" and "gpipe.c". */
typedef struct lab_file {
    const char *folder;
    char name[128], rel[256]; /* "gpipe.c", "02-gpipe/gpipe.c" */
} lab_file;

/* One file's text and the path the report shows for it (cleaned). */
typedef struct sim_text {
    char *shown;
    char *bytes; /* NULL: no such file */
    size_t len;
} sim_text;

typedef struct submission {
    char *name;     /* the operand, cleaned */
    sim_text *file; /* one per lab file */
} submission;

/* The labs' files from the schedule table, each once (two labs could share a file). */
static int lab_files(lab_file *out) {
    int n = 0;
    for (int l = 0; l < pp__nlabs; l++) {
        char name[128];
        snprintf(name, sizeof name, "%s.c", pp__labs[l].file);
        int seen = 0;
        for (int k = 0; k < n; k++) seen |= !strcmp(out[k].name, name);
        if (seen) continue;
        out[n].folder = pp__labs[l].folder;
        snprintf(out[n].name, sizeof out[n].name, "%s", name);
        snprintf(out[n].rel, sizeof out[n].rel, "%s/%s", pp__labs[l].folder, name);
        n++;
    }
    return n;
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Reads a whole file of at most SIM_MAX_BYTES into t->bytes. A submission's file is opened without following a
 * symbolic link and must be a plain file (a FIFO would block the read, a device has no end); the kit's files are
 * the kit's. 0, or -1 with the reason in err. */
static int read_text(const char *path, int nofollow, sim_text *t, char *err, size_t len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0) {
        snprintf(err, len, "%s",
                 errno == ELOOP ? "is a symbolic link: refused (give the file itself)" : strerror(errno));
        return -1;
    }
    struct stat st;
    const char *why = fstat(fd, &st) ? strerror(errno)
                      : !S_ISREG(st.st_mode) ? "is not a plain file"
                      : st.st_size > SIM_MAX_BYTES ? "is larger than a lab file can be (4 MiB)" : NULL;
    if (why) {
        snprintf(err, len, "%s", why);
        close(fd);
        return -1;
    }
    t->bytes = pp__xcalloc((size_t)st.st_size + 1, 1);
    size_t got = 0;
    ssize_t k = 0;
    while (got < (size_t)st.st_size && (k = read(fd, t->bytes + got, (size_t)st.st_size - got)) > 0) got += (size_t)k;
    close(fd);
    if (k < 0) {
        snprintf(err, len, "%s", strerror(errno));
        free(t->bytes);
        t->bytes = NULL;
        return -1;
    }
    t->len = got;
    return 0;
}

/* Reads a submission's lab file at path into t, or dies naming it. */
static void take_file(sim_text *t, const char *path) {
    char err[256];
    t->shown = shown(path);
    if (read_text(path, 1, t, err, sizeof err)) pp__cli_fail("similar", "%s: %s", t->shown, err);
}

/* Dies unless the entry at path (st from lstat) can be a lab file: a symbolic link is refused rather than followed
 * (it could lead to any file of the machine's), and only a plain file has text to compare. */
static void check_entry(const char *path, const struct stat *st) {
    if (S_ISLNK(st->st_mode) || !S_ISREG(st->st_mode)) {
        char *where = shown(path);
        pp__cli_fail("similar", "%s %s", where, S_ISLNK(st->st_mode) ? "is a symbolic link where a lab file should "
                     "be: refused (give the file itself)" : "is not a plain file");
    }
}

/* A flat upload: every entry below dir whose name is a lab file's, without following a symbolic link. A symbolic
 * link or anything but a plain file by that name is refused; two files by one name are a choice for the
 * instructor, not for this command. */
static void find_flat(submission *s, const lab_file *lf, int nlf, const char *dir, int depth, char **found) {
    if (depth > SIM_MAX_DEPTH) {
        char *where = shown(dir);
        pp__cli_fail("similar", "%s: folders nested deeper than %d: not a submission", where, SIM_MAX_DEPTH);
    }
    DIR *d = opendir(dir);
    if (!d) {
        char *where = shown(dir);
        pp__cli_fail("similar", "%s: %s", where, strerror(errno));
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
        struct stat st;
        if (lstat(path, &st)) continue;
        if (S_ISDIR(st.st_mode)) {
            find_flat(s, lf, nlf, path, depth + 1, found);
            continue;
        }
        for (int k = 0; k < nlf; k++) {
            if (strcmp(e->d_name, lf[k].name)) continue;
            check_entry(path, &st);
            char *where = shown(path);
            if (found[k]) {
                char *other = shown(found[k]);
                pp__cli_fail("similar", "%s holds two files named %s, %s and %s: keep the one to compare", s->name,
                             lf[k].name, other, where);
            }
            free(where);
            found[k] = xstrdup(path);
        }
    }
    closedir(d);
}

/* Loads submission arg: a student's tree (a labs/ folder: its labs/NN-lab/file.c only, so that the kit's own files
 * a tree holds, grader/ or bench/, never pass for the student's), a flat upload, or one lab file. Dies with one
 * line on anything it cannot take. */
static void load_submission(submission *s, const char *arg, const lab_file *lf, int nlf) {
    s->name = shown(arg);
    s->file = pp__xcalloc((size_t)nlf, sizeof *s->file);
    struct stat st;
    if (stat(arg, &st)) pp__cli_fail("similar", "%s: %s", s->name, strerror(errno));
    int have = 0;
    if (S_ISDIR(st.st_mode)) {
        /* paths below it are joined to the folder without its trailing slashes (a shell's completion adds one) */
        char top[PATH_MAX], labs[PATH_MAX], path[PATH_MAX];
        snprintf(top, sizeof top, "%s", arg);
        for (size_t n = strlen(top); n > 1 && top[n - 1] == '/'; n--) top[n - 1] = 0;
        snprintf(labs, sizeof labs, "%s/labs", top);
        struct stat ls;
        if (lstat(labs, &ls) == 0 && S_ISDIR(ls.st_mode)) {
            for (int k = 0; k < nlf; k++) {
                snprintf(path, sizeof path, "%s/%s/%s", labs, lf[k].folder, lf[k].name);
                if (lstat(path, &ls)) {
                    if (errno == ENOENT) continue;
                    char *where = shown(path);
                    pp__cli_fail("similar", "%s: %s", where, strerror(errno));
                }
                check_entry(path, &ls);
                take_file(&s->file[k], path);
                have++;
            }
        } else {
            char **found = pp__xcalloc((size_t)nlf, sizeof *found);
            find_flat(s, lf, nlf, top, 0, found);
            for (int k = 0; k < nlf; k++) {
                if (!found[k]) continue;
                take_file(&s->file[k], found[k]);
                have++;
                free(found[k]);
            }
            free(found);
        }
    } else {
        struct stat ls;
        if (lstat(arg, &ls) == 0) check_entry(arg, &ls);
        const char *base = strrchr(arg, '/') ? strrchr(arg, '/') + 1 : arg;
        for (int k = 0; k < nlf && !have; k++)
            if (!strcmp(base, lf[k].name)) take_file(&s->file[k], arg), have = 1;
        if (!have)
            pp__cli_fail("similar", "%s: not a lab file: a file given alone must be named as one (pplab info "
                         "--lab-files lists them)", s->name);
    }
    if (!have)
        pp__cli_fail("similar", "%s holds no lab file: none of the names pplab info --lab-files lists is in it",
                     s->name);
}

/* ---- sim_c ------------------------------------------------------------------------------------------------------- */

/* Where sim_c is on PATH, into path; 0 or -1. */
static int find_sim(char *path, size_t len) {
    const char *env = getenv("PATH");
    char *dirs = xstrdup(env && *env ? env : "/usr/bin:/bin");
    int rc = -1;
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d && rc; d = strtok_r(NULL, ":", &save)) {
        snprintf(path, len, "%s/sim_c", *d ? d : ".");
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0) rc = 0;
    }
    free(dirs);
    return rc;
}

/* One run sim_c reports: lines a1-a2 of file a match lines b1-b2 of file b (-1: the stub), `tokens` tokens long. */
typedef struct sim_match {
    int a, b, a1, a2, b1, b2, tokens;
} sim_match;

/* One sim_c invocation's findings over the n files of a comparison. */
typedef struct sim_out {
    int n;
    int *tokens; /* each file's tokens as sim_c counted them (its "File f3.c: 280 tokens, 47 lines") */
    sim_match *m;
    size_t nm, cap;
    int unread; /* it could not open a file it was given */
} sim_out;

/* A line of sim_c -n: "f0.c: line 12-14 |f3.c: line 10-12 [60]" (or "... |stub.c: ..."), or a file's header.
 * Every name is one this command gave, so the parse never meets a name of the student's. */
static void sim_line(sim_out *o, const char *l) {
    sim_match x = {0};
    int k, tok;
    if (strstr(l, ">>>> cannot open <<<<")) o->unread = 1;
    if (sscanf(l, "File f%d.c: %d tokens", &k, &tok) == 2) {
        if (k >= 0 && k < o->n) o->tokens[k] = tok;
        return;
    }
    if (sscanf(l, "f%d.c: line %d-%d |f%d.c: line %d-%d [%d]", &x.a, &x.a1, &x.a2, &x.b, &x.b1, &x.b2,
               &x.tokens) != 7) {
        x.b = -1;
        if (sscanf(l, "f%d.c: line %d-%d |stub.c: line %d-%d [%d]", &x.a, &x.a1, &x.a2, &x.b1, &x.b2, &x.tokens) != 6)
            return;
    }
    if (x.a < 0 || x.a >= o->n || x.b < -1 || x.b >= o->n || x.a1 < 1 || x.a2 < x.a1 || x.tokens <= 0) return;
    if (o->nm == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 64;
        o->m = pp__xrealloc(o->m, o->cap * sizeof *o->m);
    }
    o->m[o->nm++] = x;
}

/* Runs sim_c (at sim) in folder dir with args (args[0] its name, NULL-terminated) as a child process, without a
 * shell: fork and exec, its stdout and stderr read back through a pipe, every line parsed into o. Returns 0, or
 * -1 with the reason in err (its exit status and the first line it printed). */
static int sim_run(const char *sim, const char *dir, char *const args[], sim_out *o, char *err, size_t len) {
    int fd[2];
    if (pipe2(fd, O_CLOEXEC)) return snprintf(err, len, "cannot start sim_c: %s", strerror(errno)), -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]), close(fd[1]);
        return snprintf(err, len, "cannot start sim_c: %s", strerror(errno)), -1;
    }
    if (pid == 0) {
        if (chdir(dir) || dup2(fd[1], 1) < 0 || dup2(fd[1], 2) < 0) _exit(126);
        execv(sim, args);
        _exit(127);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    char first[160] = "", *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while (f && (n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] == '\n') line[--n] = 0;
        if (!first[0] && n) snprintf(first, sizeof first, "%s", line);
        sim_line(o, line);
    }
    free(line);
    if (f) fclose(f);
    else close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return snprintf(err, len, "sim_c: %s", strerror(errno)), -1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && !o->unread) return 0;
    if (o->unread) return snprintf(err, len, "sim_c could not open a file of %s", dir), -1;
    char *said = shown(first);
    if (WIFEXITED(st))
        snprintf(err, len, "sim_c failed (exit status %d)%s%s", WEXITSTATUS(st), *said ? ": " : "", said);
    else snprintf(err, len, "sim_c was killed by signal %d", WTERMSIG(st));
    free(said);
    return -1;
}

/* ---- one lab file's comparison ----------------------------------------------------------------------------------- */

/* A file of a comparison: a submission's (sub >= 0) or the kit's (sub -1, kit its path relative to the kit). */
typedef struct member {
    int sub;
    const char *kit;
    const sim_text *text;
    int stub_tokens; /* its tokens in runs shared with the stub */
    int tokens;      /* before the stub's lines were left out */
    char *blank;     /* per line (from 1): 1 when it is left out as the stub's */
    int nlines;
} member;

/* A pair at or above the threshold. */
typedef struct sim_pair {
    int lab;
    const member *a, *b;
    int percent, a_in_b, b_in_a;
    sim_match *runs; /* a's lines in a1-a2, b's in b1-b2 */
    int nruns;
} sim_pair;

typedef struct similar_run {
    const similar_opts *o;
    const char *sim, *tmp;
    const lab_file *lf;
    const submission *subs;
    sim_pair *pairs;
    int npairs, cap;
    long compared;
} similar_run;

/* Writes member k's text to tmp/f<k>.c, the lines marked as the stub's emptied; their newlines stay, so that
 * sim_c's line numbers are the student's own. */
static int write_member(const similar_run *r, const member *m, int k, char *err, size_t len) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/f%d.c", r->tmp, k);
    FILE *f = fopen(path, "w");
    if (!f) return snprintf(err, len, "cannot write %s: %s", path, strerror(errno)), -1;
    int line = 1;
    for (size_t i = 0; i < m->text->len; i++) {
        char c = m->text->bytes[i];
        if (c == '\n' || !m->blank || line > m->nlines || !m->blank[line]) fputc(c, f);
        if (c == '\n') line++;
    }
    if (fclose(f)) return snprintf(err, len, "cannot write %s: %s", path, strerror(errno)), -1;
    return 0;
}

/* sim_c's arguments: name, options, then f0.c ... f<n-1>.c, then extra (NULL-terminated) after them. */
static char **sim_args(int n, const char *const *opts, int nopts, const char *const *extra, int nextra) {
    char **a = pp__xcalloc((size_t)(1 + nopts + n + nextra + 1), sizeof *a);
    int k = 0;
    a[k++] = xstrdup("sim_c");
    for (int i = 0; i < nopts; i++) a[k++] = xstrdup(opts[i]);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%d.c", i);
        a[k++] = xstrdup(name);
    }
    for (int i = 0; i < nextra; i++) a[k++] = xstrdup(extra[i]);
    return a;
}

static void free_args(char **a) {
    for (char **p = a; *p; p++) free(*p);
    free(a);
}

static void free_out(sim_out *o) {
    free(o->tokens);
    free(o->m);
    memset(o, 0, sizeof *o);
}

/* The stub: every student starts from it, so what a file shares with it (its signatures, the lines the stub
 * gives) says nothing of copying, yet on a short lab it is a good part of what two files share. sim_c has no way to
 * discount a file's text; its new/old separator only keeps the stub from being compared as a submission. So
 * the stub is compared first, alone against every file ("-S": new files against the old one only), and the lines
 * of each run found there are emptied before the files are compared with each other: what the stub gave is then
 * in no file. Lines are sim_c's unit of position, and a run may end inside a line, so a few tokens of the file's
 * own can go with it; a file that would lose many more tokens than its runs with the stub hold (its own code
 * packed onto the stub's lines, to hide it) keeps its stub lines instead, which only counts the stub's text
 * against it. */
static int stub_pass(similar_run *r, member *m, int n, const char *stub, char *err, size_t len) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/stub.c", r->tmp);
    FILE *f = fopen(path, "w");
    if (!f || fwrite(stub, 1, strlen(stub), f) != strlen(stub) || fclose(f)) {
        if (f) fclose(f);
        return snprintf(err, len, "cannot write %s: %s", path, strerror(errno)), -1;
    }
    char minrun[16];
    snprintf(minrun, sizeof minrun, "%d", r->o->min_run);
    const char *opts[] = {"-e", "-S", "-n", "-w", "200", "-r", minrun};
    const char *extra[] = {"/", "stub.c"};
    char **args = sim_args(n, opts, 7, extra, 2);
    sim_out o = {.n = n, .tokens = pp__xcalloc((size_t)n, sizeof(int))};
    int rc = sim_run(r->sim, r->tmp, args, &o, err, len);
    free_args(args);
    unlink(path);
    for (size_t i = 0; !rc && i < o.nm; i++) {
        member *x = &m[o.m[i].a];
        if (o.m[i].b != -1 || o.m[i].a2 > x->nlines) continue;
        if (!x->blank) x->blank = pp__xcalloc((size_t)x->nlines + 1, 1);
        memset(x->blank + o.m[i].a1, 1, (size_t)(o.m[i].a2 - o.m[i].a1 + 1));
        x->stub_tokens += o.m[i].tokens;
    }
    for (int i = 0; !rc && i < n; i++) m[i].tokens = o.tokens[i];
    free_out(&o);
    return rc;
}

static int lines_of(const sim_text *t) {
    int n = 1;
    for (size_t i = 0; i < t->len; i++) n += t->bytes[i] == '\n';
    return n;
}

static int by_first_line(const void *x, const void *y) {
    const sim_match *a = x, *b = y;
    return a->a1 != b->a1 ? (a->a1 > b->a1) - (a->a1 < b->a1) : (a->b1 > b->b1) - (a->b1 < b->b1);
}

/* A file's share of its tokens found in the other, in whole percents as sim_c -p rounds it. */
static int share(long shared, int tokens) { return tokens > 0 ? (int)((100 * shared + tokens / 2) / tokens) : 0; }

/* Records the pairs of lab file l that reach the threshold, from sim_c's runs o over the members m. */
static void collect(similar_run *r, int l, member *m, int n, const sim_out *o) {
    long *shared = pp__xcalloc((size_t)n * (size_t)n, sizeof *shared);
    for (size_t i = 0; i < o->nm; i++)
        if (o->m[i].b >= 0 && o->m[i].a != o->m[i].b) shared[o->m[i].a * n + o->m[i].b] += o->m[i].tokens;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (m[i].sub < 0) continue; /* the kit's files are not compared with each other */
            r->compared++;
            int ab = share(shared[i * n + j], o->tokens[i]), ba = share(shared[j * n + i], o->tokens[j]);
            int pct = ab > ba ? ab : ba;
            if (pct < r->o->threshold) continue;
            if (r->npairs == r->cap) {
                r->cap = r->cap ? 2 * r->cap : 16;
                r->pairs = pp__xrealloc(r->pairs, (size_t)r->cap * sizeof *r->pairs);
            }
            sim_pair *p = &r->pairs[r->npairs++];
            *p = (sim_pair){.lab = l, .a = &m[i], .b = &m[j], .percent = pct, .a_in_b = ab, .b_in_a = ba};
            /* the runs of the direction that gave the share, with i's lines first either way */
            int from = ab >= ba ? i : j, to = ab >= ba ? j : i;
            for (size_t k = 0; k < o->nm; k++)
                if (o->m[k].a == from && o->m[k].b == to) p->nruns++;
            p->runs = pp__xcalloc((size_t)p->nruns + 1, sizeof *p->runs);
            int at = 0;
            for (size_t k = 0; k < o->nm; k++) {
                sim_match x = o->m[k];
                if (x.a != from || x.b != to) continue;
                if (from != i) x = (sim_match){i, j, x.b1, x.b2, x.a1, x.a2, x.tokens};
                p->runs[at++] = x;
            }
            qsort(p->runs, (size_t)p->nruns, sizeof *p->runs, by_first_line);
        }
    free(shared);
}

/* Compares lab file l's n members (the submissions holding it, then the kit's files), its stub's text left out. */
static int compare_lab(similar_run *r, int l, member *m, int n, const char *stub, char *err, size_t len) {
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        m[i].nlines = lines_of(m[i].text);
        rc = write_member(r, &m[i], i, err, len); /* whole, for the stub's pass */
    }
    if (!rc && stub) rc = stub_pass(r, m, n, stub, err, len);
    char minrun[16];
    snprintf(minrun, sizeof minrun, "%d", r->o->min_run);
    /* -e: each pair in isolation, so no third file takes a run from it and a share is the pair's own; -a: both
     * ways, so a copy padded with code of its own is still found from the other side; -s: no file against
     * itself; -n: one line per run, its files and lines. sim_c reads every identifier as one token (IDF), so its
     * defaults already match renamed copies; its -F (names of called functions must agree) is not given, since a
     * copy with its helper functions renamed would then miss. */
    const char *opts[] = {"-e", "-a", "-s", "-n", "-w", "200", "-r", minrun};
    char **args = sim_args(n, opts, 8, NULL, 0);
    sim_out o = {0};
    for (int pass = 0; pass < 2 && !rc; pass++) {
        int keep_any = 0;
        for (int i = 0; i < n && !rc; i++) rc = write_member(r, &m[i], i, err, len);
        free_out(&o);
        o = (sim_out){.n = n, .tokens = pp__xcalloc((size_t)n, sizeof(int))};
        if (rc || (rc = sim_run(r->sim, r->tmp, args, &o, err, len))) break;
        if (pass) break;
        /* emptying a file's stub lines took no more than its runs with the stub and a run's end lines hold */
        for (int i = 0; i < n; i++) {
            int lost = m[i].tokens - o.tokens[i], slack = m[i].tokens / 20;
            if (slack < 2 * r->o->min_run) slack = 2 * r->o->min_run;
            if (m[i].blank && lost > m[i].stub_tokens + slack) {
                free(m[i].blank);
                m[i].blank = NULL;
                keep_any = 1;
            }
        }
        if (!keep_any) break;
    }
    free_args(args);
    if (!rc) collect(r, l, m, n, &o);
    free_out(&o);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/f%d.c", r->tmp, i);
        unlink(path);
    }
    return rc;
}

/* ---- the report -------------------------------------------------------------------------------------------------- */

static const char *side_name(const similar_run *r, const member *m) {
    return m->sub >= 0 ? r->subs[m->sub].name : m->kit;
}

static int by_similarity(const void *x, const void *y) {
    const sim_pair *a = x, *b = y;
    if (a->percent != b->percent) return b->percent - a->percent;
    if (a->lab != b->lab) return a->lab - b->lab;
    if (a->a->sub != b->a->sub) return a->a->sub - b->a->sub;
    int sa = a->b->sub < 0 ? 1 << 30 : a->b->sub, sb = b->b->sub < 0 ? 1 << 30 : b->b->sub;
    if (sa != sb) return (sa > sb) - (sa < sb);
    return strcmp(a->b->kit ? a->b->kit : "", b->b->kit ? b->b->kit : "");
}

static void print_pair(const similar_run *r, const sim_pair *p) {
    const char *lab = r->lf[p->lab].rel;
    printf("%s %s ~ %s%s %d%%\n", side_name(r, p->a), lab, p->b->sub < 0 ? "kit: " : "", side_name(r, p->b),
           p->percent);
    printf("  %s ~ %s: %d%% of the first in the second, %d%% the other way\n", p->a->text->shown,
           p->b->text->shown, p->a_in_b, p->b_in_a);
    for (int k = 0; k < p->nruns && k < SIM_SHOWN_RUNS; k++)
        printf("  lines %d-%d ~ lines %d-%d (%d tokens)\n", p->runs[k].a1, p->runs[k].a2, p->runs[k].b1,
               p->runs[k].b2, p->runs[k].tokens);
    if (p->nruns > SIM_SHOWN_RUNS) printf("  ... %d more runs (--json lists them all)\n", p->nruns - SIM_SHOWN_RUNS);
}

static int add_side(cJSON *pair, const char *key, const similar_run *r, const member *m) {
    cJSON *o = cJSON_AddObjectToObject(pair, key);
    if (!o) return -1;
    int bad = !cJSON_AddBoolToObject(o, "kit", m->sub < 0);
    if (m->sub >= 0) bad |= pp__report_add_text(o, "submission", r->subs[m->sub].name, strlen(r->subs[m->sub].name));
    bad |= pp__report_add_text(o, "file", m->text->shown, strlen(m->text->shown));
    return bad ? -1 : 0;
}

/* The report as JSON, at path: the same pairs as the text, every run of each. 0, or -1 after one line. */
static int write_json(const similar_run *r, const char *path, const char *kit, int reference) {
    cJSON *root = cJSON_CreateObject();
    int bad = !root;
    cJSON *subs = NULL, *pairs = NULL;
    if (root) {
        bad |= pp__report_add_text(root, "kit", kit, strlen(kit)) |
               !cJSON_AddBoolToObject(root, "reference_code", reference) |
               !cJSON_AddNumberToObject(root, "threshold", r->o->threshold) |
               !cJSON_AddNumberToObject(root, "min_run", r->o->min_run) |
               !cJSON_AddNumberToObject(root, "pairs_compared", (double)r->compared) |
               !cJSON_AddNumberToObject(root, "pairs_at_threshold", r->npairs);
        subs = cJSON_AddArrayToObject(root, "submissions");
        pairs = cJSON_AddArrayToObject(root, "pairs");
        bad |= !subs || !pairs;
    }
    for (int i = 0; !bad && i < r->o->nsubs; i++) {
        cJSON *s = cJSON_CreateString(r->subs[i].name);
        bad |= !s || !cJSON_AddItemToArray(subs, s);
    }
    for (int i = 0; !bad && i < r->npairs; i++) {
        const sim_pair *p = &r->pairs[i];
        cJSON *o = cJSON_CreateObject(), *runs = NULL;
        bad |= !o || !cJSON_AddItemToArray(pairs, o);
        if (bad) break;
        bad |= pp__report_add_text(o, "lab_file", r->lf[p->lab].rel, strlen(r->lf[p->lab].rel)) |
               add_side(o, "a", r, p->a) | add_side(o, "b", r, p->b) |
               !cJSON_AddNumberToObject(o, "percent", p->percent) | !cJSON_AddNumberToObject(o, "a_in_b", p->a_in_b) |
               !cJSON_AddNumberToObject(o, "b_in_a", p->b_in_a) | !(runs = cJSON_AddArrayToObject(o, "runs"));
        for (int k = 0; !bad && k < p->nruns; k++) {
            cJSON *x = cJSON_CreateObject();
            int a[2] = {p->runs[k].a1, p->runs[k].a2}, b[2] = {p->runs[k].b1, p->runs[k].b2};
            bad |= !x || !cJSON_AddItemToArray(runs, x);
            if (bad) break;
            cJSON *ja = cJSON_CreateIntArray(a, 2), *jb = cJSON_CreateIntArray(b, 2);
            bad |= !ja || !cJSON_AddItemToObject(x, "a_lines", ja);
            if (!bad) bad |= !jb || !cJSON_AddItemToObject(x, "b_lines", jb);
            else cJSON_Delete(jb);
            if (!bad) bad |= !cJSON_AddNumberToObject(x, "tokens", p->runs[k].tokens);
        }
    }
    return pp__report_write_json(path, root, !bad, "similarity report");
}

/* ---- the command ------------------------------------------------------------------------------------------------- */

/* Reads the kit's file at rel into t (shown as rel); 0, or -1 when it is not there. */
static int kit_text(const char *kit, const char *rel, sim_text *t) {
    char path[PATH_MAX], err[256];
    snprintf(path, sizeof path, "%s/%s", kit, rel);
    if (read_text(path, 0, t, err, sizeof err)) return -1;
    t->shown = shown(rel);
    return 0;
}

static void free_text(sim_text *t) {
    free(t->shown);
    free(t->bytes);
}

/* Refuses options that name what is not there: the kit, the stubs, a --json that cannot be written. */
static void check_options(const similar_opts *o) {
    char err[PATH_MAX + 256];
    if (!o->nsubs)
        pp__cli_fail("similar", "name the submissions to compare: folders (students' trees or a Gradescope "
                     "export's uploads) or lab files");
    if (!is_dir(o->kit))
        pp__cli_fail("similar", "--kit %s: no such folder: name the kit's root (its solutions/ and labs/)", o->kit);
    if (o->stubs && !is_dir(o->stubs)) pp__cli_fail("similar", "--stubs %s: no such folder", o->stubs);
    if (o->json && pp__cli_writable(o->json, err, sizeof err)) pp__cli_fail("similar", "--json %s", err);
}

/* The answer sources, each read once, into *nsrc texts; one missing from a kit (it has solutions/) is a list out
 * of date. *reference: whether the kit has any reference code (solutions or sources) to compare with. */
static sim_text *read_sources(const similar_opts *o, int *nsrc, int *reference) {
    char solutions[PATH_MAX + 16];
    snprintf(solutions, sizeof solutions, "%s/solutions", o->kit);
    int have_solutions = is_dir(solutions);
    char *list = xstrdup(o->sources ? o->sources : "");
    sim_text *src = pp__xcalloc(strlen(list) / 2 + 1, sizeof *src);
    *nsrc = 0;
    for (char *save = NULL, *p = strtok_r(list, " \t\n", &save); p; p = strtok_r(NULL, " \t\n", &save)) {
        if (!kit_text(o->kit, p, &src[*nsrc])) (*nsrc)++;
        else if (have_solutions)
            fprintf(stderr, "pplab similar: %s/%s is missing: not compared (the build's list of answer sources is "
                    "out of date)\n", o->kit, p);
    }
    free(list);
    *reference = have_solutions || *nsrc > 0;
    if (!*reference)
        printf("no reference code in %s (a student handout?): the submissions are compared with each other only\n",
               o->kit);
    return src;
}

/* Compares lab l's members: the submissions that hold it, the kit's solution (read into *sol) and the answer
 * sources, with the lab's stub blanked out. Returns 0 when nothing was compared, 1 when it was, -1 on an error
 * (said); *nstubs counts the stubs found. m has room for every submission and source and the solution. */
static int compare_members(similar_run *r, int l, member *m, sim_text *sol, sim_text *src, int nsrc, int *nstubs) {
    const similar_opts *o = r->o;
    char err[PATH_MAX + 256];
    int n = 0;
    for (int i = 0; i < o->nsubs; i++)
        if (r->subs[i].file[l].bytes) m[n++] = (member){.sub = i, .text = &r->subs[i].file[l]};
    if (!n) return 0;
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "solutions/%s", r->lf[l].rel);
    if (!kit_text(o->kit, rel, sol)) m[n++] = (member){.sub = -1, .kit = sol->shown, .text = sol};
    for (int k = 0; k < nsrc; k++) m[n++] = (member){.sub = -1, .kit = src[k].shown, .text = &src[k]};
    if (n < 2) return 0;
    char stubpath[PATH_MAX];
    if (o->stubs) snprintf(stubpath, sizeof stubpath, "%s/%s", o->stubs, r->lf[l].rel);
    else snprintf(stubpath, sizeof stubpath, "%s/labs/%s", o->kit, r->lf[l].rel);
    sim_text stub = {0};
    if (!read_text(stubpath, 0, &stub, err, sizeof err)) (*nstubs)++;
    int rc = 1;
    if (compare_lab(r, l, m, n, stub.bytes, err, sizeof err)) {
        char *said = shown(err);
        fprintf(stderr, "pplab similar: %s\n", said);
        free(said);
        rc = -1;
    }
    free(stub.bytes);
    for (int i = 0; i < n; i++) free(m[i].blank), m[i].blank = NULL;
    return rc;
}

/* The pairs at or above the threshold, most similar first, their count, and the JSON report. Returns the exit
 * status: 1 when a pair was found, 0 when none, 2 when the report could not be written. */
static int print_pairs(similar_run *r, int reference) {
    const similar_opts *o = r->o;
    if (r->npairs) qsort(r->pairs, (size_t)r->npairs, sizeof *r->pairs, by_similarity);
    for (int i = 0; i < r->npairs; i++) {
        if (i) printf("\n");
        print_pair(r, &r->pairs[i]);
    }
    if (r->npairs) printf("\n");
    printf("%ld pair%s compared, %d at or above %d%%\n", r->compared, r->compared == 1 ? "" : "s", r->npairs,
           o->threshold);
    fflush(stdout);
    if (o->json && write_json(r, o->json, o->kit, reference)) return 2;
    return r->npairs ? 1 : 0;
}

static void free_submissions(submission *subs, int nsubs, int nlf) {
    for (int i = 0; i < nsubs; i++) {
        for (int l = 0; l < nlf; l++) free_text(&subs[i].file[l]);
        free(subs[i].file);
        free(subs[i].name);
    }
    free(subs);
}

static int similar_main(int argc, char **argv) {
    similar_opts o;
    pp_flag flags[PP_CLI_MAX_FLAGS];
    similar_opts_init(&o);
    o.subs = pp__xcalloc((size_t)argc, sizeof *o.subs);
    pp__cli_parse(&pp__cli_similar, flags, similar_table(&o, flags), argc, argv, sub_operand, &o);
    char root[PATH_MAX], build[PATH_MAX];
    if (o.nsubs && !o.kit) pp__impl_dirs(build, root, sizeof root), o.kit = root;
    check_options(&o);
    char sim[PATH_MAX];
    if (find_sim(sim, sizeof sim)) {
        fflush(stdout);
        fprintf(stderr, "pplab similar: sim_c not found: apt-get install similarity-tester\n");
        free(o.subs);
        return 2;
    }

    lab_file *lf = pp__xcalloc((size_t)pp__nlabs, sizeof *lf);
    int nlf = lab_files(lf);
    submission *subs = pp__xcalloc((size_t)o.nsubs, sizeof *subs);
    for (int i = 0; i < o.nsubs; i++) load_submission(&subs[i], o.subs[i], lf, nlf);
    int nsrc, reference;
    sim_text *src = read_sources(&o, &nsrc, &reference);

    char tmp[PATH_MAX];
    const char *tmpdir = getenv("TMPDIR");
    snprintf(tmp, sizeof tmp, "%s/pplab-similar-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int rc = 0, nstubs = 0, ncompared_labs = 0, made = mkdtemp(tmp) != NULL;
    if (!made) {
        fprintf(stderr, "pplab similar: cannot make a temporary folder %s: %s\n", tmp, strerror(errno));
        rc = 2;
    }
    similar_run r = {.o = &o, .sim = sim, .tmp = tmp, .lf = lf, .subs = subs};
    /* each lab's members and the kit's solution stay until the report is written: the pairs point at them */
    member **members = pp__xcalloc((size_t)nlf, sizeof *members);
    sim_text *sol = pp__xcalloc((size_t)nlf, sizeof *sol);
    for (int l = 0; l < nlf && !rc; l++) {
        members[l] = pp__xcalloc((size_t)(o.nsubs + nsrc + 1), sizeof *members[l]);
        int compared = compare_members(&r, l, members[l], &sol[l], src, nsrc, &nstubs);
        if (compared < 0) rc = 2;
        else ncompared_labs += compared;
    }
    if (made) rmdir(tmp);
    if (!rc && ncompared_labs && !nstubs)
        printf("no stubs in %s: text every student starts from counts as shared\n",
               o.stubs ? o.stubs : "the kit's labs/");
    if (!rc) rc = print_pairs(&r, reference);

    for (int i = 0; i < r.npairs; i++) free(r.pairs[i].runs);
    free(r.pairs);
    for (int l = 0; l < nlf; l++) free(members[l]), free_text(&sol[l]);
    free(members);
    free(sol);
    for (int k = 0; k < nsrc; k++) free_text(&src[k]);
    free(src);
    free_submissions(subs, o.nsubs, nlf);
    free(lf);
    free(o.subs);
    return rc;
}

const pp_cli_command pp__cli_similar = {
    .name = "similar",
    .summary = "find copies among submissions and of the kit's own code (sim_c)",
    .usage = usage,
    .notes = notes,
    .flags = similar_flags,
    .main = similar_main,
};
