#!/usr/bin/env bash
# Makes sure the Debian packages pplab builds and tests with are installed.
#   scripts/deps.sh           install what is missing (as root), else print the apt-get line and fail
#   scripts/deps.sh --ci      also what CI's own machine-making checks need (make check-hosts, make check-slurm)
#   scripts/deps.sh --required  only what building and grading need (the CI templates of docs/ci/)
# The one list of packages: make demo, make test and .ci/run all install through it.

set -euo pipefail
required=(gcc libc6-dev binutils make pkg-config libopenblas-dev libcjson-dev libcriterion-dev libseccomp-dev libsodium-dev libxml2-dev)
# libxml2-dev: the fuzz target of the JUnit report parses what the report wrote (replayed by make test)
# bubblewrap gives the build the namespaces view (docs/design.md, "The trust boundary"); without it, Landlock
# zip and unzip: make autograder writes Gradescope's zip, and its test unpacks one; clang and libclang-rt-dev:
# make fuzz (libFuzzer); similarity-tester: pplab similar (sim_c) compares submissions with the kit's own code and
# with each other; python3 and python3-yaml: the CI templates' test reads their YAML as the platforms do
optional=(gnuplot-nox libopenmpi-dev openmpi-bin libxml2-utils bubblewrap git iproute2 zip unzip clang libclang-rt-dev
          similarity-tester python3 python3-yaml)
# network-namespace hosts (iproute2, above) and a one-node Slurm cluster with its authentication
[ "${1:-}" = --ci ] && optional+=(slurm-wlm munge)
[ "${1:-}" = --required ] && optional=()
missing=()
for p in "${required[@]}" "${optional[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "pplab: installing missing packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    exit 0
fi
req_missing=()
for p in "${missing[@]}"; do
    for r in "${required[@]}"; do [ "$p" = "$r" ] && req_missing+=("$p"); done
done
echo "pplab: missing packages: ${missing[*]}" >&2
echo "pplab: install them with: sudo apt-get install ${missing[*]}" >&2
# optional ones only cost features (plots, MPI, the JUnit schema test); required ones stop the build
[ ${#req_missing[@]} -eq 0 ]
