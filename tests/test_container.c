/* test_container.c: the container of the top-level Dockerfile, built and used as a student on macOS, Windows or
 * Codespaces uses it: tests/container/check.sh makes Debian 12's base image with debootstrap (Docker Hub is out
 * of reach; the tarball is kept under ~/.cache/pplab), builds the Dockerfile unchanged with Debian's docker.io
 * engine started on a private socket, runs make demo and grades the reference solutions (full marks) and the stubs
 * (0) as the container's default user and as root, grades in a mounted folder of another uid, checks that a
 * memory limit and a full /tmp are named when a grade meets them, runs make test as root in a clone, and checks
 * that every package resolves for arm64. Root only (it starts an engine); skipped elsewhere with the reason,
 * failed in CI. Run by make check-long (about eight minutes on two cores: the image's build, make demo and make
 * test inside take most of it). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

TestSuite(container, .timeout = 2400);

static char out[1 << 20];

Test(container, builds_and_grades_as_on_debian) {
    if (geteuid() != 0) test_skip("the container's check starts a Docker engine: run make check-long as root");
    if (access("/usr/sbin/dockerd", X_OK) || access("/usr/sbin/debootstrap", X_OK))
        test_skip("no dockerd or debootstrap here: apt-get install docker.io debootstrap (scripts/deps.sh --ci)");
    int rc = test_capture("bash tests/container/check.sh 2>&1", out, sizeof out);
    cr_expect_eq(rc, 0, "tests/container/check.sh exited %d:\n%s", rc, out);
    cr_expect(strstr(out, "container: all passed"), "the check did not end:\n%s", out);
    /* its measures (build time, image size, each part's time) go to the suite's log */
    cr_log_info("%s", out);
}
