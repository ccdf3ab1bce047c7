#!/usr/bin/env bash
# Makes sure the Debian packages pplab builds and tests with are installed.
#   scripts/deps.sh           install what is missing (as root), else print the apt-get line and fail
#   scripts/deps.sh --ci      also what --cluster and the container's test need, and PyTorch from PyPI for the
#                             round trip of tests/test_torch.c, into the virtual environment PPLAB_TORCH_VENV names
#                             (.ci/run sets it; pip only where it is missing)
#   scripts/deps.sh --cluster   also slurm-wlm and munge, for make check-slurm's one-node cluster
#   scripts/deps.sh --required  only what building and grading need (the CI templates of docs/ci/)
#   scripts/deps.sh --list      print the packages the plain form installs, one a line, and install nothing (the
#                               container's check of them on another architecture reads them)
# The one list of packages: make demo, make test and .ci/run all install through it.

set -euo pipefail
required=(gcc libc6-dev binutils make pkg-config libopenblas-dev libcjson-dev libcriterion-dev libseccomp-dev libsodium-dev libxml2-dev)
# libxml2-dev: the fuzz target of the JUnit report parses what the report wrote (replayed by make test)
# bubblewrap gives the build the namespaces view (docs/design.md, "The trust boundary"); without it, Landlock
# zip and unzip: make autograder writes Gradescope's zip, and its test unpacks one; clang and libclang-rt-dev:
# make fuzz (libFuzzer); similarity-tester: pplab similar (sim_c) compares submissions with the kit's own code and
# with each other; python3 and python3-yaml: the CI templates' test reads their YAML as the platforms do
# libglpk-dev: the kit's lab 09 optimum (GLPK's integer program, grader/theory/sched_ilp.c)
optional=(gnuplot-nox libopenmpi-dev openmpi-bin libxml2-utils bubblewrap git iproute2 zip unzip clang libclang-rt-dev
          similarity-tester python3 python3-yaml libglpk-dev)
# --cluster: a one-node Slurm cluster with its authentication (make check-slurm installs them through this, so that
# make demo and make test never put daemons on a student's machine); --ci: those, python3-venv for the virtual
# environment that holds torch (Debian's python3 is externally managed: pip installs into no system path), and
# docker.io and debootstrap: the container's test builds the Dockerfile on a base image it makes (tests/container/)
[ "${1:-}" = --cluster ] && optional+=(slurm-wlm munge)
[ "${1:-}" = --ci ] && optional+=(slurm-wlm munge python3-venv docker.io debootstrap)
[ "${1:-}" = --required ] && optional=()
# PyPI packages, for --ci only: torch's own pipeline schedules, whose orders tests/test_torch.c compares with the
# kit's (the version the fixtures were dumped with: tests/fixtures/)
pypi_ci=(torch==2.15.0)
case "${1:-}" in
    ""|--ci|--cluster|--required) ;;
    --list) printf '%s\n' "${required[@]}" "${optional[@]}"; exit 0 ;;
    *) echo "deps.sh: unknown option $1: use --ci, --cluster, --required, --list or none" >&2; exit 2 ;;
esac

# Installs what pypi_ci lists into PPLAB_TORCH_VENV, each package only where its version is not there already (a
# local build tag such as torch's +cu132 counts as the version).
pypi_install() {
    local venv=${PPLAB_TORCH_VENV:?deps.sh --ci installs torch into the virtual environment PPLAB_TORCH_VENV names: set it (.ci/run does)}
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    for spec in "${pypi_ci[@]}"; do
        local name=${spec%%==*} want=${spec#*==} have
        have=$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$name'))" 2>/dev/null || true)
        [ "${have%%+*}" = "$want" ] && continue
        echo "pplab: installing $spec from PyPI into $venv"
        "$venv/bin/python" -m pip install -q --disable-pip-version-check "$spec"
    done
}

missing=()
for p in "${required[@]}" "${optional[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    [ "${1:-}" = --ci ] && pypi_install
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "pplab: installing missing packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    [ "${1:-}" = --ci ] && pypi_install
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
