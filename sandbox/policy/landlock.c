/* landlock.c: Landlock rulesets for the driver and the build (landlock.h). The structures are written out here
 * with every field up to ABI 6 because the C library's headers lag the kernel; the size passed to the kernel
 * says which fields it reads. */
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

enum {
    FS_EXECUTE = 1 << 0, FS_WRITE_FILE = 1 << 1, FS_READ_FILE = 1 << 2, FS_READ_DIR = 1 << 3,
    FS_REMOVE_DIR = 1 << 4, FS_REMOVE_FILE = 1 << 5, FS_MAKE_CHAR = 1 << 6, FS_MAKE_DIR = 1 << 7,
    FS_MAKE_REG = 1 << 8, FS_MAKE_SOCK = 1 << 9, FS_MAKE_FIFO = 1 << 10, FS_MAKE_BLOCK = 1 << 11,
    FS_MAKE_SYM = 1 << 12, FS_REFER = 1 << 13, FS_TRUNCATE = 1 << 14, FS_IOCTL_DEV = 1 << 15,
};
enum { NET_BIND_TCP = 1, NET_CONNECT_TCP = 2 };
enum { SCOPE_ABSTRACT_UNIX_SOCKET = 1, SCOPE_SIGNAL = 2 };
enum { RULE_PATH_BENEATH = 1, CREATE_RULESET_VERSION = 1 };

struct ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net; /* ABI 4 */
    uint64_t scoped;             /* ABI 6 */
};

struct path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

int pp__landlock_abi(void) {
    long v = syscall(SYS_landlock_create_ruleset, NULL, 0, CREATE_RULESET_VERSION);
    return v > 0 ? (int)v : 0;
}

/* Every file-system right the kernel of this ABI knows: those it does not handle would stay allowed. */
static uint64_t fs_rights(int abi) {
    uint64_t all = (FS_MAKE_SYM << 1) - 1;
    if (abi >= 2) all |= FS_REFER;
    if (abi >= 3) all |= FS_TRUNCATE;
    if (abi >= 5) all |= FS_IOCTL_DEV;
    return all;
}

static uint64_t file_rights(int abi) {
    return (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | (abi >= 3 ? FS_TRUNCATE : 0) | (abi >= 5 ? FS_IOCTL_DEV : 0));
}

/* A ruleset handling everything this kernel can restrict; its descriptor, or -1. */
static int ruleset_new(int abi) {
    struct ruleset_attr attr = {.handled_access_fs = fs_rights(abi)};
    size_t size = sizeof attr.handled_access_fs;
    if (abi >= 4) attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP, size += sizeof attr.handled_access_net;
    if (abi >= 6) attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL, size += sizeof attr.scoped;
    return (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
}

static int rule_add(int ruleset, int fd, uint64_t access) {
    struct path_beneath_attr pb = {.allowed_access = access, .parent_fd = fd};
    return (int)syscall(SYS_landlock_add_rule, ruleset, RULE_PATH_BENEATH, &pb, 0);
}

/* Opens path (O_PATH) and allows access beneath it (for a file, only the file rights among them). A path this
 * machine lacks has nothing to allow. */
static int rule_path(int ruleset, const char *path, uint64_t access, int abi) {
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_PATH | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    int rc = rule_add(ruleset, fd, access);
    if (rc && errno == EINVAL) rc = rule_add(ruleset, fd, access & file_rights(abi)); /* a file, not a folder */
    int e = errno;
    syscall(SYS_close, fd);
    errno = e;
    return rc;
}

static int restrict_self(int ruleset) {
    int rc = (int)syscall(SYS_landlock_restrict_self, ruleset, 0);
    int e = errno;
    syscall(SYS_close, ruleset);
    errno = e;
    return rc;
}

int pp__landlock_driver(int exe_fd) {
    int abi = pp__landlock_abi();
    if (!abi) return errno = ENOSYS, -1;
    int rs = ruleset_new(abi);
    if (rs < 0) return -1;
    /* exec opens the file for reading too: it needs both rights, on this one file */
    if (rule_add(rs, exe_fd, FS_EXECUTE | FS_READ_FILE)) {
        int e = errno;
        syscall(SYS_close, rs);
        return errno = e, -1;
    }
    return restrict_self(rs);
}

int pp__landlock_build(const char *const *tools) {
    int abi = pp__landlock_abi();
    if (!abi) return errno = ENOSYS, -1;
    int rs = ruleset_new(abi);
    if (rs < 0) return -1;
    int rc = 0;
    for (int i = 0; tools[i] && !rc; i++) rc = rule_path(rs, tools[i], FS_EXECUTE | FS_READ_FILE | FS_READ_DIR, abi);
    if (!rc) rc = rule_path(rs, "/etc/ld.so.cache", FS_READ_FILE, abi);
    if (!rc) rc = rule_path(rs, "/dev/null", FS_READ_FILE | FS_WRITE_FILE | (abi >= 3 ? FS_TRUNCATE : 0), abi);
    if (!rc) rc = rule_path(rs, ".", fs_rights(abi) & ~(uint64_t)(FS_MAKE_CHAR | FS_MAKE_BLOCK), abi);
    if (rc) {
        int e = errno;
        syscall(SYS_close, rs);
        return errno = e, -1;
    }
    return restrict_self(rs);
}
