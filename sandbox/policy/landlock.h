/* landlock.h: hiding the file system from a jailed process with Landlock, the kernel's unprivileged access
 * control (Linux 5.13 and later; inherited across fork and execve, and allowed by the default seccomp profile of
 * Docker 23 and later, where namespaces are not). What the kernel's ABI does not know is left out, so an older
 * kernel gets the rules it can enforce; pp__landlock_abi() says which. */
#ifndef PP_LANDLOCK_H
#define PP_LANDLOCK_H

/* The Landlock ABI version of the running kernel, 0 when it has none (or it is disabled). */
int pp__landlock_abi(void);

/* A driver's view: nothing at all but executing the file open on exe_fd (the driver itself, which the caller
 * execs next), no TCP (ABI 4), no signals or abstract sockets beyond its own domain (ABI 6). Raw system calls
 * only, no allocation: safe between a vfork and its execve. Needs no_new_privs (or CAP_SYS_ADMIN) first.
 * 0, or -1 with errno set. */
int pp__landlock_driver(int exe_fd);

/* A build's view: read and execute beneath each folder of the NULL-terminated list tools (the toolchain), read
 * /etc/ld.so.cache, read and write /dev/null, and everything inside the current folder (the private build
 * folder); no TCP, no signals outside. For a forked child (it opens the folders); like the driver's, it needs
 * no_new_privs (or CAP_SYS_ADMIN) first. 0, or -1 with errno set. */
int pp__landlock_build(const char *const *tools);

#endif /* PP_LANDLOCK_H */
