/* compile.c: the sandboxed build of compile.h. The parent prepares the build folder, gives it to a uid of the
 * build's own (as root) and waits, with the time limit, for a builder child, which enters the build's jail
 * (policy.h), runs each tool (under bubblewrap in the namespaces view) and sends back one verdict: a status byte
 * and a message. Once the builder is gone and every process of its uid is killed, the parent reads the object,
 * checks it again itself, and keeps it. */
#include "compile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "objcheck.h"
#include "symbols.h"
#include "tokens.h"
#include "uids.h"

#define VERDICT_MAX 8192

/* ---- files ---------------------------------------------------------------------------------------------- */

static int copy_file(const char *from, const char *to, mode_t mode) {
    size_t n;
    char *buf = pp__file_read(from, (size_t)1 << 30, &n);
    if (!buf) return -1;
    int rc = pp__file_write(to, buf, n, mode);
    free(buf);
    return rc;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static void rm_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static uid_t chown_uid;
static gid_t chown_gid;
static int chown_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return lchown(p, chown_uid, chown_gid);
}

/* ---- in the builder (the child, unprivileged) ----------------------------------------------------------- */

typedef struct builder {
    const pp_compile *c;
    char *cc[8];             /* $CC split into words, then the tool's own arguments */
    int ncc;
    char *envp[5];
    int verdict_fd;
    char sysdirs[8][PATH_MAX];
    int nsys;
    char pp_h_real[PATH_MAX];
    pp_view view;            /* namespaces: every tool runs under bubblewrap */
    const char *const *tools; /* the toolchain's folders, which the view shows */
    pp_sandbox jail;          /* the build's jail, which each tool enters once more for its own limits */
    const char *dir;         /* the build folder */
} builder;

static void __attribute__((noreturn)) verdict(builder *b, pp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void verdict(builder *b, pp_status st, const char *fmt, ...) {
    char msg[VERDICT_MAX];
    msg[0] = (char)st;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg + 1, sizeof msg - 1, fmt, ap);
    va_end(ap);
    size_t len = 1 + (n < 0 ? 0 : (size_t)n < sizeof msg - 1 ? (size_t)n : sizeof msg - 2);
    (void)!write(b->verdict_fd, msg, len);
    _exit(0);
}

/* Runs argv (a NULL-terminated list) with stdout to out and stderr to errf (NULL: discarded). Returns the
 * exit status, or -1 when it died of a signal (a limit) or could not start. */
static int run(builder *b, char *const *argv, const char *out, const char *errf) {
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(errf ? errf : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0) _exit(126);
        dup2(o, 1), dup2(e, 2);
        char *full[96];
        int n = 0;
        if (b->view == PP_VIEW_NAMESPACES && (n = pp__view_bwrap_argv(b->tools, b->dir, full, 64)) < 0) _exit(126);
        for (int i = 0; argv[i] && n < 95; i++) full[n++] = argv[i];
        full[n] = NULL;
        /* the tool's own address space, set last: nothing of this (maybe sanitized) process allocates after it */
        const char *what;
        if (pp__jail_enter(&b->jail, PP_JAIL_TOOL, &what)) _exit(126);
        execvpe(full[0], full, b->envp);
        _exit(127);
    }
    int st;
    if (pid < 0) return -1;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    /* and what the tool left (bubblewrap's own children): the builder is a subreaper and has no other child */
    while (waitpid(-1, NULL, WNOHANG) > 0) continue;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127) return -127;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The compiler ($CC, else cc) followed by args. */
static int run_cc(builder *b, const char *const *args, const char *out, const char *errf) {
    char *argv[64];
    int n = 0;
    for (int i = 0; i < b->ncc; i++) argv[n++] = b->cc[i];
    for (int i = 0; args[i] && n < 63; i++) argv[n++] = (char *)args[i];
    argv[n] = NULL;
    return run(b, argv, out, errf);
}

/* The compiler's own #include <...> folders, from `cc -E -v`. */
static void find_sysdirs(builder *b) {
    const char *args[] = {"-E", "-v", "-x", "c", "/dev/null", "-o", "/dev/null", NULL};
    if (run_cc(b, args, NULL, "sysdirs.txt") != 0) verdict(b, PP_ERR_IO, "the C compiler does not run (%s): "
                                                           "install gcc, or set CC", b->cc[0]);
    size_t n;
    char *text = pp__file_read("sysdirs.txt", 1 << 20, &n);
    char *at = text ? strstr(text, "#include <...> search starts here:") : NULL;
    for (char *line = at ? strchr(at, '\n') : NULL; line && b->nsys < 8; line = strchr(line + 1, '\n')) {
        char dir[PATH_MAX];
        if (sscanf(line + 1, " %4095[^\n]", dir) != 1 || !strncmp(dir, "End of search list", 18)) break;
        if (realpath(dir, b->sysdirs[b->nsys])) b->nsys++;
    }
    free(text);
}

/* 1 when path (as the dependency pass named it) is pp.h or a system header. */
static int header_allowed(const builder *b, const char *path) {
    char real[PATH_MAX];
    if (!realpath(path, real)) return 0;
    if (!strcmp(real, b->pp_h_real)) return 1;
    for (int i = 0; i < b->nsys; i++) {
        size_t k = strlen(b->sysdirs[i]);
        if (!strncmp(real, b->sysdirs[i], k) && real[k] == '/') return 1;
    }
    return 0;
}

/* The next file name of a make-style dependency list (backslash escapes, "$$"), or 0 at the end. */
static int dep_next(const char **p, char *out, size_t cap) {
    const char *s = *p;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\n') s++;
        if (s[0] == '\\' && s[1] == '\n') s += 2;
        else break;
    }
    if (!*s) return 0;
    size_t n = 0;
    while (*s && *s != ' ' && *s != '\t' && *s != '\n') {
        if (s[0] == '\\' && s[1] == '\n') break;
        char ch = *s++;
        if (ch == '\\' && (*s == ' ' || *s == '\\' || *s == '#' || *s == ':')) ch = *s++;
        else if (ch == '$' && *s == '$') s++;
        if (n + 1 < cap) out[n++] = ch;
    }
    out[n] = 0;
    *p = s;
    return 1;
}

/* One more name the dependency pass listed: pp.h or a system header, or the build is refused. */
static void dep_check(builder *b, const char *name) {
    if (!strcmp(name, "pplab-deps:") || !strcmp(name, b->c->rel)) return;
    if (!header_allowed(b, name))
        verdict(b, PP_ERR_SANDBOX, "refused: %s includes \"%s\", which is neither pp.h nor a header of the C "
                "compiler or library: a lab file is compiled alone and may include only those", b->c->rel, name);
}

/* The preprocessor flags of every pass: the same macros (__OPTIMIZE__, __PIC__) in each, so that the files the
 * dependency pass saw are the files the compile reads. */
#define PP_FLAGS "-std=c11", "-O1", "-fPIC", "-Iinc"

/* One header the file opened itself (depth 1 of -H): pp.h, or one of pp__tokens_headers in a system folder
 * (the raw check held the names as written to the same list; this holds what the compiler opened). */
static void direct_check(builder *b, const char *name) {
    char real[PATH_MAX];
    if (!realpath(name, real) || !strcmp(real, b->pp_h_real)) return; /* missing ones: the compile names them */
    for (int i = 0; i < b->nsys; i++) {
        size_t k = strlen(b->sysdirs[i]);
        if (strncmp(real, b->sysdirs[i], k) || real[k] != '/') continue;
        for (size_t h = 0; pp__tokens_headers[h]; h++)
            if (!strcmp(real + k + 1, pp__tokens_headers[h])) return;
    }
    verdict(b, PP_ERR_SANDBOX, "refused: %s includes \"%s\", which is not pp.h or a standard C header: a lab file "
            "may include pp.h, the C library's standard headers, pthread.h and unistd.h", b->c->rel, name);
}

static void check_dependencies(builder *b) {
    /* -M -MG lists every header, found or not; -H names each one as it is opened, even when a later error
     * stops the list. Neither pass's messages are ever read: they could quote another file. */
    const char *args[] = {PP_FLAGS, "-M", "-MG", "-MT", "pplab-deps", "-H", b->c->rel, NULL};
    run_cc(b, args, "deps.txt", "deps.err");
    size_t n;
    char name[PATH_MAX], *deps = pp__file_read("deps.txt", 16 << 20, &n);
    for (const char *p = deps; p && dep_next(&p, name, sizeof name);) dep_check(b, name);
    free(deps);
    char *opened = pp__file_read("deps.err", 16 << 20, &n);
    for (char *line = opened; line && *line;) {
        char *eol = strchr(line, '\n');
        if (eol) *eol = 0;
        char *t = line;
        while (*t == '.') t++;
        if (t > line && *t == ' ') dep_check(b, t + 1);
        if (t == line + 1 && *t == ' ') direct_check(b, t + 1);
        line = eol ? eol + 1 : line + strlen(line);
    }
    free(opened);
}

/* The preprocessed text, by tokens: no inline assembly, pragma or attribute outside the short list in the
 * student's own lines (a macro could have pasted one together, or brought one from a header). */
static void check_preprocessed(builder *b) {
    size_t n;
    char *text = pp__file_read("pre.i", PP_BUILD_MAX_FILE, &n), why[600];
    if (!text) verdict(b, PP_ERR_IO, "the compiler left no preprocessed text for %s", b->c->rel);
    if (pp__tokens_check_preprocessed(text, n, b->c->rel, why, sizeof why)) verdict(b, PP_ERR_SANDBOX, "%s", why);
    free(text);
}

/* Assembler directives that read other files or make new directives. The compiler never emits them for C; only
 * a string smuggled into the assembly (a section name, an asm label) can. */
static void check_assembly(builder *b) {
    static const char *const bad[] = {".incbin", ".include", ".macro", ".irp", ".irpc", ".rept", ".altmacro",
                                      ".purgem"};
    size_t n;
    char *text = pp__file_read("lab.s", PP_BUILD_MAX_FILE, &n);
    if (!text) verdict(b, PP_ERR_IO, "the compiler left no assembly for %s", b->c->rel);
    for (char *s = text; *s; s++) {
        /* at the start of a statement: after a newline or ';', blanks, and any labels */
        if (s != text && s[-1] != '\n' && s[-1] != ';') continue;
        char *t = s;
        for (;;) {
            while (*t == ' ' || *t == '\t') t++;
            char *w = t;
            while (*w && !strchr(" \t\n;:", *w)) w++;
            if (*w == ':' && w > t) t = w + 1;
            else break;
        }
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            size_t k = strlen(bad[i]);
            if (!strncasecmp(t, bad[i], k) && (!t[k] || strchr(" \t\n;", t[k])))
                verdict(b, PP_ERR_SANDBOX, "refused: compiling %s produced the assembler directive %s (through a "
                        "section name, an asm label or a string of assembly?), which could read other files into "
                        "the build", b->c->rel, bad[i]);
        }
    }
    free(text);
}

/* 1 when a file of the build folder reached the size limit (a tool then fails with SIGXFSZ or EFBIG). */
static int big_file(void) {
    static const char *const outputs[] = {"pre.i", "lab.s", "lab.o", "lab.k.o", "lab.so"};
    for (size_t i = 0; i < sizeof outputs / sizeof *outputs; i++) {
        struct stat st;
        if (stat(outputs[i], &st) == 0 && (size_t)st.st_size >= PP_BUILD_MAX_FILE) return 1;
    }
    return 0;
}

/* The compiler's messages, for a compile error; they can only quote pp.h, system headers and the file itself. */
static void __attribute__((noreturn)) compile_failed(builder *b, const char *log, const char *what) {
    size_t n = 0;
    if (big_file())
        verdict(b, PP_ERR_SANDBOX, "refused: building %s wrote a file larger than the %zu MiB a build may write: a "
                "lab file needs no large initialised data", b->c->rel, PP_BUILD_MAX_FILE >> 20);
    char *text = pp__file_read(log, VERDICT_MAX * 4, &n);
    verdict(b, PP_ERR_COMPILE, "%s %s:\n%s", what, b->c->src, text ? text : "(the compiler printed nothing)");
}

static void __attribute__((noreturn)) build(builder *b) {
    const pp_compile *c = b->c;
    if (!realpath("inc/pp.h", b->pp_h_real)) verdict(b, PP_ERR_IO, "the build folder lost inc/pp.h");
    size_t nsrc;
    char *src = pp__file_read(c->rel, PP_COMPILE_MAX_SOURCE, &nsrc), why[600];
    if (!src) verdict(b, PP_ERR_IO, "the build folder lost %s", c->rel);
    /* the raw file, by tokens: directives, inline assembly, pragmas and attributes, before any tool reads it */
    if (pp__tokens_check_source(src, nsrc, c->rel, why, sizeof why)) verdict(b, PP_ERR_SANDBOX, "%s", why);
    free(src);
    find_sysdirs(b);
    check_dependencies(b);
    /* the compile reads this preprocessed text, and nothing else: what was checked is what is built */
    const char *cpp[] = {PP_FLAGS, "-E", "-Wall", "-Wextra", "-fdiagnostics-color=never", c->rel, "-o", "pre.i", NULL};
    int rc = run_cc(b, cpp, NULL, "cc.log");
    if (rc == -127) verdict(b, PP_ERR_IO, "the C compiler (%s) could not be started: install gcc, or set CC", b->cc[0]);
    if (rc != 0) compile_failed(b, "cc.log", rc < 0 ? "the compiler was stopped by its time or memory limit on" : "compile error in");
    check_preprocessed(b);
    const char *cc1[] = {"-std=c11", "-O1", "-g", "-fPIC", "-fno-common", "-Wall", "-Wextra", "-Wno-unused-parameter",
                         "-fdiagnostics-color=never", "-S", "pre.i", "-o", "lab.s", NULL};
    rc = run_cc(b, cc1, NULL, "cc.log");
    if (rc != 0) compile_failed(b, "cc.log", rc < 0 ? "the compiler was stopped by its time or memory limit on" : "compile error in");
    check_assembly(b);
    const char *as[] = {"-c", "lab.s", "-o", "lab.o", NULL};
    if (run_cc(b, as, NULL, "as.log") != 0) compile_failed(b, "as.log", "cannot assemble");
    /* only the lab's own functions stay visible */
    char *oc[32] = {"objcopy"};
    char keep[16][80];
    int k = 1;
    for (int i = 0; i < c->nkeep && i < 16; i++) {
        snprintf(keep[i], sizeof keep[i], "--keep-global-symbol=%s", c->keep[i]);
        oc[k++] = keep[i];
    }
    oc[k++] = "lab.o", oc[k++] = "lab.k.o", oc[k] = NULL;
    if (run(b, oc, NULL, "objcopy.log") != 0) compile_failed(b, "objcopy.log", "objcopy (binutils) failed on");
    size_t n;
    char *obj = pp__file_read("lab.k.o", PP_LAB_MAX_OBJECT, &n);
    if (!obj && errno == EFBIG)
        verdict(b, PP_ERR_SANDBOX, "refused: the object compiled from %s is larger than the %zu KiB a lab may have",
                c->rel, PP_LAB_MAX_OBJECT >> 10);
    if (!obj) verdict(b, PP_ERR_IO, "the compiler left no object for %s", c->rel);
    if (pp__objcheck(obj, n, c->rel, c->keep, c->nkeep, c->require, why, sizeof why))
        verdict(b, strncmp(why, "refused", 7) ? PP_ERR_COMPILE : PP_ERR_SANDBOX, "%s", why);
    free(obj);
    /* the same code as a shared object, for pplab run --in-process (gdb, ASan, printf debugging) */
    const char *so[] = {"-shared", "-o", "lab.so", "lab.k.o", "-lm", NULL};
    if (run_cc(b, so, NULL, "so.log") != 0) compile_failed(b, "so.log", "cannot link");
    verdict(b, PP_OK, "built");
}

/* ---- in the parent -------------------------------------------------------------------------------------- */

static void __attribute__((noreturn)) builder_start(builder *b, const pp_compile *c, const char *dir, int fd,
                                                    const pp_sandbox *sb) {
    memset(b, 0, sizeof *b);
    b->c = c;
    b->verdict_fd = fd;
    b->dir = dir;
    b->view = sb->lockdown ? sb->view : PP_VIEW_NONE;
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    b->tools = pp__view_tools(cc);
    static char words[256];
    snprintf(words, sizeof words, "%s", cc);
    for (char *t = strtok(words, " \t"); t && b->ncc < 6; t = strtok(NULL, " \t")) b->cc[b->ncc++] = t;
    static char path[] = "PATH=/usr/local/bin:/usr/bin:/bin", lang[] = "LC_ALL=C", tmp[] = "TMPDIR=.";
    b->envp[0] = path, b->envp[1] = lang, b->envp[2] = tmp, b->envp[3] = NULL;
    /* the folder first, then the jail: relative paths work wherever the build's uid could not walk */
    if (setsid() < 0 || chdir(dir)) verdict(b, PP_ERR_IO, "cannot enter the build folder %s", dir);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    b->jail = *sb;
    b->jail.tools = b->tools;
    const char *what = NULL;
    if (pp__jail_enter(&b->jail, PP_JAIL_BUILD, &what))
        verdict(b, PP_ERR_SANDBOX, "cannot enter the build's jail (%s): %s", what, strerror(errno));
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) dup2(nul, 0), close(nul);
    build(b);
}

pp_status pp__compile_read(const char *root, const char *rel, char **text, size_t *n, char *err, size_t len) {
    char folder[256];
    snprintf(folder, sizeof folder, "%.*s", (int)strcspn(rel, "/"), rel);
    if ((strchr(rel, '/') && pp__file_check_folder(root, folder, err, len)) ||
        !(*text = pp__file_read_plain(root, rel, PP_COMPILE_MAX_SOURCE, n, err, len)))
        return strncmp(err, "refused", 7) ? PP_ERR_IO : PP_ERR_SANDBOX;
    return PP_OK;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Reads the build's file `name` (at most max bytes) and writes it to `to`. 0, or -1 with the reason in err. */
static int keep_file(const char *dir, const char *name, size_t max, const char *to, mode_t mode, char *err,
                     size_t len, char **bytes, size_t *nbytes) {
    char from[2 * PATH_MAX];
    snprintf(from, sizeof from, "%s/%s", dir, name);
    size_t n;
    char *buf = pp__file_read(from, max, &n);
    if (!buf) {
        snprintf(err, len, "the build left no %s (%s)", name, strerror(errno));
        return -1;
    }
    int rc = pp__file_write(to, buf, n, mode);
    if (rc) snprintf(err, len, "cannot write %s: %s", to, strerror(errno));
    if (bytes && !rc) *bytes = buf, *nbytes = n;
    else free(buf);
    return rc;
}

/* Waits for builder pid (killed after limit seconds, *timed_out then 1), reading its verdict from fd into msg
 * (VERDICT_MAX bytes at most) as it comes: a full pipe must not stall the builder. Returns the bytes read. */
static size_t builder_wait(pid_t pid, int fd, double limit, char *msg, int *timed_out) {
    size_t got = 0;
    double t0 = now_s();
    ssize_t k;
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    while (pid > 0) {
        struct timespec nap = {0, 2000000};
        int st;
        while (got < VERDICT_MAX && (k = read(fd, msg + got, VERDICT_MAX - got)) > 0) got += (size_t)k;
        if (waitpid(pid, &st, WNOHANG) == pid) break;
        if (now_s() - t0 > limit) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            *timed_out = 1;
            break;
        }
        nanosleep(&nap, NULL);
    }
    while (got < VERDICT_MAX && (k = read(fd, msg + got, VERDICT_MAX - got)) > 0) got += (size_t)k;
    return got;
}

pp_status pp__compile_lab(const pp_compile *c, const char *out_object, const char *out_shared, char *err,
                          size_t len) {
    pp_sandbox sb = *c->sb;
    if ((sb.drop_uid && pp__uid_take(&sb.uid, err, len)) ||
        (sb.lockdown && sb.view == PP_VIEW_AUTO && pp__sandbox_view(&sb, sb.view, err, len)))
        return PP_ERR_SANDBOX;
    sb.gid = (gid_t)sb.uid;
    /* under $TMPDIR, not in a private folder: the build's uid (and bubblewrap, running as it) must reach it, so a
     * $TMPDIR it cannot enter (one inside a folder only root may) gives way to /tmp, as one that is full does */
    const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[PATH_MAX], p[2 * PATH_MAX];
    snprintf(dir, sizeof dir, "%s/pplab-build-XXXXXX", tmp);
    int made = mkdtemp(dir) != NULL;
    if (made && sb.drop_uid && !pp__path_others_reach(dir)) rmdir(dir), made = 0;
    if (!made && (snprintf(dir, sizeof dir, "/tmp/pplab-build-XXXXXX"), !mkdtemp(dir))) {
        snprintf(err, len, "cannot make a build folder under %s: %s", tmp, strerror(errno));
        return PP_ERR_IO;
    }
    char folder[PATH_MAX];
    snprintf(folder, sizeof folder, "%s", c->rel);
    char *slash = strrchr(folder, '/');
    if (slash) *slash = 0;
    int ok = (snprintf(p, sizeof p, "%s/inc", dir), mkdir(p, 0755) == 0) &&
             (snprintf(p, sizeof p, "%s/inc/pp.h", dir), copy_file(c->pp_h, p, 0644) == 0) &&
             (!slash || (snprintf(p, sizeof p, "%s/%s", dir, folder), mkdir(p, 0755) == 0)) &&
             (snprintf(p, sizeof p, "%s/%s", dir, c->rel), pp__file_write(p, c->text, c->ntext, 0644) == 0);
    if (ok && sb.drop_uid) {
        chown_uid = sb.uid, chown_gid = sb.gid;
        ok = nftw(dir, chown_entry, 16, FTW_PHYS) == 0;
    }
    int fds[2] = {-1, -1};
    if (!ok || pipe2(fds, O_CLOEXEC)) {
        snprintf(err, len, "cannot prepare the build folder %s: %s", dir, strerror(errno));
        rm_tree(dir);
        return PP_ERR_IO;
    }
    fflush(stdout);
    fflush(stderr);
    /* what the builder's tools leave (bubblewrap's own children among them) comes here, to be reaped below */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        builder b;
        builder_start(&b, c, dir, fds[1], &sb);
    }
    close(fds[1]);
    char msg[VERDICT_MAX + 1];
    double limit = c->time_limit_s > 0 ? c->time_limit_s : 60;
    int timed_out = 0;
    size_t got = builder_wait(pid, fds[0], limit, msg, &timed_out);
    close(fds[0]);
    /* whatever the builder left running: its session, and as root every process of its uid, wherever it went */
    kill(-pid, SIGKILL);
    if (sb.drop_uid) pp__uid_reap(sb.uid);
    msg[got] = 0;
    pp_status st = got ? (pp_status)(unsigned char)msg[0] : PP_ERR_IO;
    if (timed_out)
        snprintf(err, len, "compiling %s took longer than %.0f s: the build was stopped (a lab file this slow to "
                 "compile is refused)", c->src, limit), st = PP_ERR_SANDBOX;
    else if (pid < 0 || !got || st >= PP_STATUS_COUNT)
        snprintf(err, len, "the build of %s stopped without a verdict (killed by its memory limit?)", c->src),
            st = PP_ERR_IO;
    else
        snprintf(err, len, "%s", msg + 1);
    if (st == PP_OK) {
        /* nothing of the build's uid runs any more: what is read now stays what was built, and is checked again
         * here, on this side of the boundary */
        char *obj = NULL;
        size_t nobj = 0;
        if (keep_file(dir, "lab.k.o", PP_LAB_MAX_OBJECT, out_object, 0600, err, len, &obj, &nobj) ||
            keep_file(dir, "lab.so", 2 * PP_LAB_MAX_OBJECT, out_shared, 0600, err, len, NULL, NULL))
            st = PP_ERR_IO;
        else if (pp__objcheck(obj, nobj, c->rel, c->keep, c->nkeep, c->require, err, len))
            st = PP_ERR_SANDBOX;
        free(obj);
    }
    rm_tree(dir);
    return st;
}
