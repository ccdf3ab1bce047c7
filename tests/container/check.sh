#!/usr/bin/env bash
# The container of the top-level Dockerfile, as a student on macOS, Windows or Codespaces uses it (run by
# tests/test_container.c, make check-long; root, Debian 12). Docker Hub is out of reach, so the Dockerfile's base
# image is made here: a debootstrap of Debian 12 from the mirror apt already uses, kept as a tarball under
# ~/.cache/pplab (a second run skips it), imported under the name the Dockerfile's FROM gives. The engine is
# Debian's docker.io: a dockerd of this script's own on a private socket, data and exec roots in a scratch
# folder, no iptables and no bridge (builds and runs use the host's network), vfs storage; it is stopped by its
# pid at the end. The Dockerfile is built unchanged, then in the container:
#   - as its default user: make demo (the reference solutions at full marks), pplab info (the jail's fallback
#     view), the stubs of labs/ graded at 0;
#   - as root: the solutions at full marks and the stubs at 0, with a uid of each test's own;
#   - a copy of the tree owned by uid 4242, mounted and graded as that uid (docker run --user, as the README says
#     for a Linux host) and as root; what was written there is still there after the container is gone; the
#     default user there is stopped by the entry point in one line naming both uids and the fix;
#   - a memory limit smaller than a grade needs: each test it kills fails in one line naming that limit.
#   - a /tmp too small for the grader's files: each test fails in one line naming that disk and TMPDIR;
#   - make test as root in a clone of the kit (HEAD: what is committed), as CI's root runs it.
# make test as the default user is not run: there two of the kit's own hostile suites fail (test_hostile's thread
# cap and its compile-bomb's leftover cc1), which is still to be understood; make demo and the grades are what a
# student runs there.
# The arm64 image is not built here (QEMU would take hours on two cores): every package the Dockerfile installs is
# checked to exist for arm64 in the mirror's own index instead.
#   tests/container/check.sh BUILD
set -euo pipefail
cd "$(dirname "$0")/../.."
say() { printf 'container: %s\n' "$*"; }
fail() { printf 'container: FAILED: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (it starts a Docker engine): run it as root, as CI does"
for t in dockerd debootstrap; do
    command -v "$t" >/dev/null || fail "$t is missing: apt-get install docker.io debootstrap (scripts/deps.sh --ci)"
done
# Debian's client, the engine's own version (a newer client earlier on PATH would ask for buildx)
docker=/usr/bin/docker
[ -x "$docker" ] || fail "$docker is missing: apt-get install docker.io"

# the mirror apt uses: the first deb URI of the main archive (not the security one)
mirror=$(sed -n 's/^URIs: *//p; s/^deb  *\(\[[^]]*\] *\)\{0,1\}\(http[^ ]*\) .*/\2/p' /etc/apt/sources.list \
    /etc/apt/sources.list.d/* 2>/dev/null | tr ' ' '\n' | grep -v security | head -1 || true)
[ -n "$mirror" ] || fail "no Debian mirror in /etc/apt/sources.list*: add one (apt must reach it)"
from=$(sed -n 's/^FROM  *\([^ ]*\).*/\1/p' Dockerfile | head -1)
[ -n "$from" ] || fail "Dockerfile has no FROM line"
arch=$(dpkg --print-architecture)

scratch=$(mktemp -d /tmp/pplab-ct.XXXXXX)
dpid=""
cleanup() {
    if [ -n "$dpid" ]; then
        DOCKER_HOST=unix://$scratch/d.sock "$docker" ps -q 2>/dev/null | xargs -r "$docker" -H "unix://$scratch/d.sock" kill >/dev/null 2>&1 || true
        kill "$dpid" 2>/dev/null || true
        # dockerd stops its containerd before it exits; wait for both so the scratch folder is free
        for _ in $(seq 60); do kill -0 "$dpid" 2>/dev/null || break; sleep 0.5; done
    fi
    # vfs layers may hold read-only folders; a mount left by a killed container is undone first
    grep -o " $scratch[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
    rm -rf "$scratch"
}
trap cleanup EXIT

# 1. the base image, made once
cache=${HOME:-/root}/.cache/pplab
base="$cache/debian12-$arch.tar"
t0=$(date +%s)
if [ ! -s "$base" ]; then
    mkdir -p "$cache"
    debootstrap --variant=minbase bookworm "$scratch/rootfs" "$mirror" > "$scratch/debootstrap.log" 2>&1 ||
        { tail -20 "$scratch/debootstrap.log" >&2; fail "debootstrap of bookworm from $mirror failed (above)"; }
    tar -C "$scratch/rootfs" --numeric-owner -cf "$base.tmp" . && mv "$base.tmp" "$base"
    rm -rf "$scratch/rootfs"
    say "base image made by debootstrap from $mirror in $(( $(date +%s) - t0 )) s, kept in $base"
else
    say "base image from the cache: $base"
fi

# 2. the engine
"$(command -v dockerd)" --host "unix://$scratch/d.sock" --data-root "$scratch/data" --exec-root "$scratch/exec" \
    --pidfile "$scratch/d.pid" --iptables=false --bridge=none --storage-driver=vfs > "$scratch/dockerd.log" 2>&1 &
dpid=$!
export DOCKER_HOST=unix://$scratch/d.sock DOCKER_BUILDKIT=0
for _ in $(seq 60); do "$docker" version >/dev/null 2>&1 && break; kill -0 "$dpid" 2>/dev/null || break; sleep 0.5; done
"$docker" version >/dev/null 2>&1 || { tail -20 "$scratch/dockerd.log" >&2; fail "dockerd did not start (its log above)"; }
"$docker" import "$base" "$from" >/dev/null

# 3. the Dockerfile, unchanged, from the tree
t0=$(date +%s)
"$docker" build --network host -t pplab-check . > "$scratch/build.log" 2>&1 ||
    { tail -30 "$scratch/build.log" >&2; fail "docker build failed (the end of its log above)"; }
size=$("$docker" image inspect -f '{{.Size}}' pplab-check)
say "ok   docker build of the Dockerfile: $(( $(date +%s) - t0 )) s, image $(( size / 1000000 )) MB"

# the tree as a student's folder holds it: what git tracks or would track, copied (never this tree itself)
tree() {
    mkdir -p "$1"
    git ls-files -z --cached --others --exclude-standard | xargs -0 cp -P --parents -t "$1"
    chown -R "$2:$2" "$1"
}
run() {
    local dir=$1; shift
    "$docker" run --rm --network host -v "$dir:/work/pplab" "$@"
}
expect() {   # expect LABEL PATTERN FILE: the file holds the pattern, else the check fails with the file's end
    grep -q -- "$2" "$3" || { tail -40 "$3" >&2; fail "$1: no \"$2\" in its output (its end above)"; }
}

# 4. as the default user (uid 1000), in a folder of that uid
tree "$scratch/student" 1000
t0=$(date +%s)
run "$scratch/student" pplab-check make demo > "$scratch/demo.log" 2>&1 ||
    { tail -40 "$scratch/demo.log" >&2; fail "make demo as the default user failed"; }
expect "make demo" "FULL MARKS" "$scratch/demo.log"
say "ok   make demo as the default user: the reference solutions at full marks ($(( $(date +%s) - t0 )) s)"
run "$scratch/student" pplab-check id -un > "$scratch/id.log"
expect "the default user" "^student$" "$scratch/id.log"
run "$scratch/student" pplab-check build/pplab info > "$scratch/info.log" 2>&1
expect "pplab info" "view landlock, the fallback\|view none:" "$scratch/info.log"
expect "pplab info" "user namespaces refused" "$scratch/info.log"
say "ok   pplab info: $(sed -n 's/^  builds    //p' "$scratch/info.log" | cut -c1-60)..."
grade() {   # grade LABEL IMPL WANT DIR [docker run flags]: WANT full (exit 0, full marks) or zero (Score: 0/)
    local label=$1 impl=$2 want=$3 dir=$4; shift 4
    local rc=0
    run "$dir" "$@" pplab-check build/pplab grade --impl "$impl" --lab all --quiet > "$scratch/grade.log" 2>&1 || rc=$?
    if [ "$want" = full ]; then
        [ $rc = 0 ] || { tail -30 "$scratch/grade.log" >&2; fail "$label: $impl exited $rc"; }
        expect "$label" "FULL MARKS" "$scratch/grade.log"
    else
        [ $rc != 0 ] || fail "$label: $impl passed"
        expect "$label" "^Score: 0/" "$scratch/grade.log"
    fi
    say "ok   $label: $impl $(grep '^Score:' "$scratch/grade.log")"
}
grade "the default user" labs zero "$scratch/student"

# 5. as root: a uid of each test's own
grade "root" solutions full "$scratch/student" --user root
grade "root" labs zero "$scratch/student" --user root

# 6. a host folder of another uid: graded as that uid, and as root; the work outlives the container
tree "$scratch/other" 4242
cp solutions/02-gpipe/gpipe.c "$scratch/other/labs/02-gpipe/gpipe.c" && chown 4242:4242 "$scratch/other/labs/02-gpipe/gpipe.c"
run "$scratch/other" --user 4242:4242 pplab-check make -s build > "$scratch/build4242.log" 2>&1 ||
    { tail -30 "$scratch/build4242.log" >&2; fail "make as uid 4242 in its own folder failed"; }
run "$scratch/other" --user 4242:4242 pplab-check build/pplab grade --impl labs --lab gpipe > "$scratch/g.log" 2>&1 ||
    { tail -30 "$scratch/g.log" >&2; fail "uid 4242 grading its own folder: gpipe below full marks"; }
expect "uid 4242" "FULL MARKS" "$scratch/g.log"
grade "uid 4242 in its folder" solutions full "$scratch/other" --user 4242:4242
# the default user there cannot write: one line, naming the uids and the fix
rc=0
run "$scratch/other" pplab-check make grade LAB=gpipe > "$scratch/deny.log" 2>&1 || rc=$?
[ $rc = 2 ] && [ "$(wc -l < "$scratch/deny.log")" = 1 ] || { cat "$scratch/deny.log" >&2; fail "uid 1000 in uid 4242's folder: not one line and exit 2 (got $rc)"; }
expect "uid 1000 in uid 4242's folder" "belongs to uid 4242.*--user 4242:4242" "$scratch/deny.log"
say "ok   the default user in uid 4242's folder: exit 2, one line: $(cut -c1-80 "$scratch/deny.log")..."
grade "root in uid 4242's folder" solutions full "$scratch/other" --user root
[ "$(stat -c %u "$scratch/other/build/pplab")" = 4242 ] || fail "build/pplab in uid 4242's folder is not its own"
[ -s "$scratch/other/labs/02-gpipe/gpipe.c" ] && [ -x "$scratch/other/build/pplab" ] ||
    fail "the work written in the mounted folder is gone with the container"
say "ok   uid 4242's folder: built and graded as 4242 and as root; its files still there, still its own"

# 7. too little memory: one line naming it
rc=0
run "$scratch/student" --memory 64m --memory-swap 64m pplab-check build/pplab grade --impl solutions --lab gpipe \
    > "$scratch/oom.log" 2>&1 || rc=$?
[ $rc != 0 ] || fail "a grade under a 64 MB memory limit passed: the limit did not hold"
grep -q "memory limit of 64 MiB" "$scratch/oom.log" ||
    { tail -20 "$scratch/oom.log" >&2; fail "a grade killed at the memory limit does not name it"; }
say "ok   64 MiB of memory: exit $rc, $(grep -o -m1 "the kernel's OOM killer, at the memory limit of [0-9]* MiB" "$scratch/oom.log")"

# 8. a full disk: the grader's private folder on a /tmp of 256 KiB
rc=0
run "$scratch/student" --tmpfs /tmp:size=256k,mode=1777 pplab-check build/pplab grade --impl solutions --lab gpipe \
    > "$scratch/disk.log" 2>&1 || rc=$?
[ $rc != 0 ] || fail "a grade on a full /tmp passed"
grep -q "the disk holding /tmp/.* has [0-9]* KiB free.*TMPDIR" "$scratch/disk.log" ||
    { tail -20 "$scratch/disk.log" >&2; fail "a grade on a full /tmp does not name the disk"; }
say "ok   a full /tmp: exit $rc, $(grep -o -m1 "the disk holding .* KiB free" "$scratch/disk.log")"

# 9. make test as root in a clone of the kit (its suites build handouts from git): as CI runs it
git clone -q --no-local . "$scratch/clone"
t0=$(date +%s)
run "$scratch/clone" --user root -e OMPI_ALLOW_RUN_AS_ROOT=1 -e OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 pplab-check make test \
    > "$scratch/test.log" 2>&1 || { grep -v "^  [A-Z]* \|^\[PASS\]\|^\[RUN \]" "$scratch/test.log" | tail -60 >&2; fail "make test as root failed"; }
say "ok   make test as root: $(grep '^unit tests:' "$scratch/test.log") ($(( $(date +%s) - t0 )) s with its build)"

# 10. arm64: every package the Dockerfile installs exists in the mirror's arm64 index
# apt's own folders of an index of its own, so that the host's lists and caches stay as they are
mkdir -p "$scratch/arm64/lists/partial" "$scratch/arm64/cache" "$scratch/arm64/etc/preferences.d"
echo "deb [arch=arm64 trusted=yes] $mirror bookworm main" > "$scratch/arm64/etc/sources.list"
apto=(-o "Dir::Etc::SourceList=$scratch/arm64/etc/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
      -o "Dir::State::Lists=$scratch/arm64/lists" -o "Dir::Etc::Preferences=/dev/null"
      -o "Dir::Etc::PreferencesParts=$scratch/arm64/etc/preferences.d" -o "APT::Architecture=arm64"
      -o "APT::Architectures::=arm64" -o "Dir::State::Status=/dev/null" -o "Dir::Cache=$scratch/arm64/cache")
apt-get "${apto[@]}" update -qq > "$scratch/arm64.log" 2>&1 || { cat "$scratch/arm64.log" >&2; fail "the arm64 index of $mirror could not be read"; }
missing=()
for p in $(bash scripts/deps.sh --list); do
    apt-cache "${apto[@]}" show "$p:arm64" > /dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} = 0 ] || fail "not in Debian 12's arm64 archive: ${missing[*]} (the image would not build on arm64)"
# and a simulated install resolves every dependency there
apt-get "${apto[@]}" install -s --no-install-recommends $(bash scripts/deps.sh --list | sed 's/$/:arm64/') \
    > "$scratch/arm64-sim.log" 2>&1 || { tail -20 "$scratch/arm64-sim.log" >&2; fail "the packages do not install together on arm64"; }
say "ok   arm64: all $(bash scripts/deps.sh --list | wc -l) packages of scripts/deps.sh resolve in $mirror's arm64 index"
say "all passed"
