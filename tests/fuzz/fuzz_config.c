/* fuzz_config.c: an instructor's hidden configuration file (pp__suite_load), then each test it yields as the
 * grader goes on to see it: its name and its run configuration, checked. Every input either loads or is refused
 * with a message naming its line; what loads names itself and passes or fails the check, never anything else. */
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "fuzz.h"
#include "suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int fd = memfd_create("config", MFD_CLOEXEC);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size)) abort();
    char path[64], err[600] = "";
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    pp_test_config *tests = NULL;
    int n = 0;
    if (pp__suite_load(path, "all", &tests, &n, err, sizeof err) == 0) {
        for (int i = 0; i < n; i++) {
            char name[96], why[600];
            pp__test_name(&tests[i], name, sizeof name);
            fuzz_require(name[0], "test %d of a loaded file has no name", i);
            pp_run_config rc;
            pp__test_to_run(&tests[i], "cpu", &rc);
            if (strcmp(tests[i].lab, "warmup")) (void)pp__config_check(&rc, why, sizeof why);
        }
    } else {
        fuzz_require(!strncmp(err, path, strlen(path)), "a refusal that does not name the file: %s", err);
    }
    free(tests);
    close(fd);
    return 0;
}
