#!/usr/bin/env bash
# Runs the pplab and make commands that README.md, docs/*.md and the lab READMEs quote, and compares the output
# they show with what the commands print here, so the docs cannot drift from the tool.
#   scripts/doccheck.sh BUILD [FILE...]   from the project root (make check runs it through scripts/selfcheck.sh);
#                                         FILEs instead of the docs (tests/test_cli.c feeds it wrong quotes)
#   scripts/doccheck.sh --quick BUILD     the quoted paths, and the commands but those that grade, train or run
#                                         make (make test: seconds, not minutes; make check runs them all)
#   scripts/doccheck.sh --list            prints the commands the docs quote, one a line, in blocks and inline in
#                                         the prose, and runs none (make answers records what the ones that run
#                                         pplab show)
#
# Inside a fenced code block:
#   $ CMD              a command whose output the doc quotes: the lines after it, up to the next "$ " line or
#   output...          the end of the block, must be what CMD prints (stdout and stderr, NO_COLOR=1, no
#                      COLUMNS), line by line with trailing blanks, a grade line's wall time ("(0.12 s)") and
#                      the figures of pplab run's "time: ... ms/step" line ignored; a line "..." stands for any
#                      number of lines.
#   build/pplab ...    a command shown without output (a "# ..." comment after it is dropped): it must run and
#   make ...           not be refused (exit status 0, or 1 for "not full marks" and runs that fail on purpose;
#                      a lab's own code that does not finish in 120 s is the lab's business, not the doc's).
#   mpirun ...         the same, where mpirun and the mpi transport are here; as root too, with only the flags
#                      the doc shows (Open MPI's OMPI_ALLOW_RUN_AS_ROOT variables are dropped)
# A command whose output cannot be the same on every machine is listed in SKIP below with the reason.
# Commands run in a scratch folder that links to the tree, so files they write (--trace t.csv) land there.
# Every path the docs quote (lib/..., labs/..., tests/..., a relative link) must exist: in this tree, and, in the
# kit, in the handout staged from it (scripts/handout.sh --stage: its kit-only blocks left out), so that no path
# or command of a handout dangles. In a handout every command runs too; none may need what a handout lacks.
# Prints one line per failing command or path (file:line, the command, the first difference) and a summary
# line; exits 1 when any failed.
set -uo pipefail
quick=0 list=0
if [ "${1:-}" = --quick ]; then quick=1; shift; fi
if [ "${1:-}" = --list ]; then list=1; shift; fi
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# pattern (bash glob on the command) | reason; the first match wins
SKIP=(
    "make demo*|the whole demo: checked on its own (make test in the kit and in a handout)"
    "make test*|this check runs inside make test"
    "make deps*|installs packages with apt-get"
    "make asan*|rebuilds everything under sanitizers: .ci/run runs it"
    "make NO_*|rebuilds the shared build without a part, under the suites that grade with it beside this check"
    "make handout*|writes the handout tarball from the git checkout: tests/test_cli.c builds and checks it"
    "make bench*|prints wall times, which differ on every run"
    "*pplab bench*|prints wall times, which differ on every run"
    "*pplab info*|lists what this machine and build have (BLAS, MPI, CUDA)"
    "*--backend cuda*|needs a GPU"
    "*--transport nccl*|needs GPUs"
    "*--transport mpi*|needs Open MPI's mpirun; tests/test_mpi.c covers it"
    "*--hostfile*|needs the nodes of a host file: make check-hosts runs these commands on hosts of its own"
    "*--rankfile*|needs the nodes a rankfile names"
    "srun*|needs a Slurm cluster"
    "*check-hosts.sh*|makes network-namespace hosts as root: make check-hosts runs it"
    "sbatch*|needs a Slurm cluster"
    "*apt-get*|installs packages"
    "*--config hidden.cfg*|needs the instructor's hidden configuration file"
    "*/tmp/mine*|runs the reader's own variant of the lab, which the text describes"
    "*\$*|a line of a script (uses shell variables)"
)
# mpirun's commands run where this build has the mpi transport and Open MPI's mpirun is installed
if ! command -v mpirun >/dev/null || ! "$build/pplab" info 2>/dev/null | grep -qE '^ *mpi +usable'; then
    SKIP=("mpirun*|needs Open MPI's mpirun and a build with the mpi transport (apt-get install openmpi-bin libopenmpi-dev)" "${SKIP[@]}")
fi
# The kit has solutions/; a handout does not.
handout=0
[ -d solutions ] || handout=1

work=$(mktemp -d)
scratch=$(mktemp -d)
trap 'rm -rf "$work" "$scratch"' EXIT
for f in "$root"/* "$root"/.ci; do [ -e "$f" ] && ln -s "$f" "$scratch/$(basename "$f")"; done

# Extraction: one numbered entry per command: N.where (file:line), N.cmd, N.kind (out | run), N.exp.
files=(README.md docs/*.md labs/*/README.md)
[ $# -gt 1 ] && files=("${@:2}")
awk -v dir="$work" '
    function flush() { if (n && kind == "out") close(dir "/" n ".exp") }
    # a command continued with a trailing backslash, joined into one line
    function joined(cmd,    more) {
        while (cmd ~ /\\$/) { sub(/[ \t]*\\$/, " ", cmd); if ((getline more) > 0) cmd = cmd more }
        return cmd
    }
    function start(k, cmd) {
        flush(); n++; kind = k
        print FILENAME ":" FNR > (dir "/" n ".where"); close(dir "/" n ".where")
        print cmd > (dir "/" n ".cmd"); close(dir "/" n ".cmd")
        print k > (dir "/" n ".kind"); close(dir "/" n ".kind")
        if (k == "out") printf "" > (dir "/" n ".exp")
    }
    FNR == 1 { inblock = 0; kind = "" }
    /^[ \t]*```/ {
        inblock = !inblock
        if (!inblock) { flush(); kind = "" } else indent = match($0, /[^ \t]/) - 1
        next
    }
    !inblock { next }
    # a block inside a list item is indented as its fence is
    { if (substr($0, 1, indent) ~ /^[ \t]*$/) $0 = substr($0, indent + 1) }
    /^\$ / { start("out", joined(substr($0, 3))); next }
    /^(build\/pplab|make|mpirun)( |$)/ {
        cmd = joined($0)
        sub(/[ \t]+#.*$/, "", cmd)
        start("run", cmd); kind = ""; next
    }
    kind == "out" { print > (dir "/" n ".exp") }
    END { flush(); print n + 0 > (dir "/count") }
' "${files[@]}"

if [ $list = 1 ]; then
    for ((i = 1; i <= $(cat "$work/count"); i++)); do cat "$work/$i.cmd"; done
    # and the ones the prose quotes inline, which a reader types as well (a line break inside one is a space)
    for f in "${files[@]}"; do tr '\n' ' ' < "$f" | grep -oE '`build/pplab run [^`]*`' | tr -d '`'; done
    exit 0
fi

# Compares expected (with "..." lines) against actual; prints the first difference, exits 1 on one.
match() {
    awk '
        # a grade line ends with its wall time, "(0.12 s)", and pplab run prints the step time: not compared
        { gsub(/[ \t]+$/, ""); sub(/\([0-9]+\.[0-9]+ s\)$/, "(time)"); sub(/^time: [0-9.]+ ms\/step.*/, "time: (wall)") }
        FNR == NR { want[++nw] = $0; next }
        { got[++ng] = $0 }
        END {
            # w and g walk both; "..." lets g skip ahead to the next line that fits
            w = 1; g = 1
            while (w <= nw) {
                if (want[w] == "...") {
                    w++
                    if (w > nw) exit 0
                    while (g <= ng && got[g] != want[w]) g++
                    if (g > ng) { printf "expected \"%s\" after \"...\", not found\n", want[w]; exit 1 }
                    continue
                }
                if (g > ng) { printf "expected \"%s\", the output ended\n", want[w]; exit 1 }
                if (got[g] != want[w]) { printf "line %d: expected \"%s\"\n         got \"%s\"\n", g, want[w], got[g]; exit 1 }
                w++; g++
            }
            if (g <= ng) { printf "extra output from line %d: \"%s\"\n", g, got[g]; exit 1 }
        }' "$1" "$2"
}

ran=0 failed=0 skipped=0
declare -A reasons
count=$(cat "$work/count")
for ((i = 1; i <= count; i++)); do
    where=$(cat "$work/$i.where") cmd=$(cat "$work/$i.cmd") kind=$(cat "$work/$i.kind")
    reason=""
    if [ $quick = 1 ] && [[ $cmd == *"pplab grade"* || $cmd == *"pplab train"* || $cmd == make* ]]; then
        reason="--quick: grading, training and make commands are for make check"
    fi
    for s in "${SKIP[@]}"; do
        [ -n "$reason" ] && break
        # shellcheck disable=SC2053
        if [[ $cmd == ${s%%|*} ]]; then reason=${s#*|}; break; fi
    done
    if [ -n "$reason" ]; then
        skipped=$((skipped + 1)); reasons[$reason]=1
        continue
    fi
    ran=$((ran + 1))
    # build/pplab is this build's binary; make runs the tree's Makefile with the same build
    run=${cmd//build\/pplab/$root\/$build\/pplab}
    # Open MPI's leave to run as root comes from the command, as the docs show it, never from this environment
    out=$(cd "$scratch" && env -u COLUMNS -u OMPI_ALLOW_RUN_AS_ROOT -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM NO_COLOR=1 \
        timeout 120 bash -c "$run" 2>&1 < /dev/null)
    rc=$?
    if [ "$kind" = out ]; then
        printf '%s\n' "$out" > "$work/$i.act"
        if ! diff=$(match "$work/$i.exp" "$work/$i.act"); then
            failed=$((failed + 1))
            echo "doccheck: FAIL $where: \$ $cmd"
            printf '%s\n' "$diff" | sed 's/^/    /'
        fi
    else
        # make reports a recipe's exit status 1 as its own 2 with "Error 1"; a time limit (124) is a lab's code
        # that did not finish (a student's work in progress), never a refused command
        ok=0
        [ $rc -le 1 ] || [ $rc = 124 ] && ok=1
        [ $rc = 2 ] && [[ $cmd == make* ]] && grep -q '\*\*\* \[.*\] Error 1$' <<<"$out" && ok=1
        if [ $ok = 0 ]; then
            failed=$((failed + 1))
            echo "doccheck: FAIL $where: $cmd (exit $rc)"
            printf '%s\n' "$out" | tail -3 | sed 's/^/    /'
        fi
    fi
done
# Paths: ROOT then the files (relative to ROOT) to read; prints "file:line: path" for every quoted path or link
# that does not exist under ROOT. A placeholder (<name>, NN, NAME, *, ...) is no path.
missing_paths() {
    local top=$1
    shift
    for f in "$@"; do
        [ -f "$top/$f" ] || continue
        {
            # a path from the tree's root, a relative link from the file's folder, what --impl names
            grep -noE '(^|[^A-Za-z0-9_./-])(\.\./)*(base|lib|labs|docs|tests|solutions|grader|scripts|kernels|bench|sandbox|driver|data)/[A-Za-z0-9_./<>*-]*' \
                "$top/$f" | sed -E 's/^([0-9]+):[^.a-z]*/\1:root:/'
            grep -noE '\]\([^)#: ]+' "$top/$f" | sed -E 's/^([0-9]+):\]\(/\1:here:/'
            grep -noE -- '--impl [A-Za-z0-9_.-][A-Za-z0-9_./-]*' "$top/$f" | sed -E 's/^([0-9]+):--impl /\1:root:/'
        } | while IFS=: read -r line from tok; do
            case $tok in *'<'* | *'>'* | *'*'* | *NN* | *NAME* | *...* | http* | mailto* | DIR | '') continue ;; esac
            while [[ $tok == *[.,\;:] ]]; do tok=${tok%?}; done
            local at=$top/$tok
            [[ $from == here || $tok == ../* ]] && at=$top/$(dirname "$f")/$tok
            [ -e "$at" ] || echo "$f:$line: $tok"
        done
    done
}
bad_paths=$(missing_paths "$root" "${files[@]}")
where="this tree"
if [ $handout = 0 ] && [ $# -le 1 ]; then
    staged=$(mktemp -d)
    if bash scripts/handout.sh --stage "$staged" >/dev/null; then
        (cd "$staged/pplab" && ls README.md docs/*.md labs/*/README.md) > "$staged/list"
        mapfile -t hfiles < "$staged/list"
        hbad=$(missing_paths "$staged/pplab" "${hfiles[@]}" | sed 's/^/handout: /')
        [ -n "$hbad" ] && bad_paths=$(printf '%s\n%s' "$bad_paths" "$hbad")
        where="this tree and the handout staged from it"
    else
        bad_paths=$(printf '%s\n%s' "$bad_paths" "handout: scripts/handout.sh --stage failed")
    fi
    rm -rf "$staged"
fi
npaths=0
while IFS= read -r b; do
    [ -n "$b" ] || continue
    echo "doccheck: FAIL $b: no such file or folder"
    npaths=$((npaths + 1))
done <<<"$bad_paths"
echo "doccheck: $ran commands from the docs run, $failed failed, $skipped skipped; $npaths quoted paths missing in $where:"
for r in "${!reasons[@]}"; do echo "    skipped: $r"; done | sort
[ $failed -eq 0 ] && [ $npaths -eq 0 ]
