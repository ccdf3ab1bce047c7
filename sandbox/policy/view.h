/* view.h: what of the file system a jailed build can see. Three ways, the best this machine allows:
 *   namespaces  the build's tools run under bubblewrap (its own mount, pid, network, ipc and uts namespaces):
 *               they see the toolchain read-only, a /dev with null and urandom, an empty /tmp and the private
 *               build folder, and nothing else exists for them;
 *   landlock    where namespaces are refused (Docker's default seccomp profile refuses unshare and the
 *               CLONE_NEW* flags, and Gradescope runs there): the same tools see the whole tree, but may open
 *               only the toolchain, /etc/ld.so.cache, /dev/null and the build folder;
 *   none        neither: only the uid and the files' modes keep secrets from the build.
 * A schedule driver needs no view at all: it is given an empty root (as root) and, where Landlock exists, may
 * open nothing; its seccomp filter has no open() anyway. */
#ifndef PP_VIEW_H
#define PP_VIEW_H

#include <stddef.h>
#include <sys/types.h>

typedef enum { PP_VIEW_AUTO = 0, PP_VIEW_NAMESPACES, PP_VIEW_LANDLOCK, PP_VIEW_NONE } pp_view;

/* "namespaces", "landlock", "none" (and "auto"). */
const char *pp__view_name(pp_view v);
/* The view called name; -1 when there is none. */
int pp__view_parse(const char *name);

/* bubblewrap, found where Debian installs it or on PATH; NULL when missing. */
const char *pp__view_bwrap(void);

/* The toolchain's folders, NULL-terminated, for compiler command cc: /usr, and the prefix of cc when it lives
 * elsewhere (CC=/opt/gcc-14/bin/gcc brings /opt/gcc-14). Static storage. */
const char *const *pp__view_tools(const char *cc);

/* Writes into argv (cap entries) the bubblewrap command that runs a tool inside the namespaces view, with the
 * current folder (the private build folder) at /build and its working directory there; the tool's own argv
 * follows. Returns the number of entries written, or -1 when cap is too small. Static strings only. */
int pp__view_bwrap_argv(const char *const *tools, const char *build_dir, char **argv, int cap);

#endif /* PP_VIEW_H */
