#!/usr/bin/env bash
# Runs the Criterion test binaries given, in parallel lanes, and (with --selfcheck) the grader's self-check beside
# them, from the project root. Much of the suites' time is spent waiting on child processes (mpirun, gnuplot,
# forked grader runs), so there are more lanes than cores. Prints one line per suite in a fixed order with the
# time it took, the reasons of skipped tests, the whole log of a failing suite, the self-check's lines, and ends
# with one summary line "unit tests: N passed, N failed, N skipped (T s)". Exit 1 if any test failed or crashed,
# or the self-check failed.
#   scripts/run-tests.sh [--selfcheck quick|full] BUILD TEST_BINARY...
set -uo pipefail
# the suites start as from a shell: a make job server this script was started under (make asan's) does not
# reach them, and its descriptors were not handed down, so a suite that runs make itself must not see it
unset MAKEFLAGS MFLAGS
selfcheck=""
if [ "${1:-}" = --selfcheck ]; then selfcheck=$2; shift 2; fi
build=$1; shift
cd "$(dirname "$0")/.."
lanes=${PPLAB_TEST_LANES:-$(( $(nproc) + 1 ))}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
t0=$(date +%s%N)
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

sc_pid=""
if [ -n "$selfcheck" ]; then
    mode=""; [ "$selfcheck" = quick ] && mode=--quick
    ( s=$(date +%s%N); bash scripts/selfcheck.sh "$build" $mode > "$logs/selfcheck.log" 2>&1; echo $? > "$logs/selfcheck.rc"
      echo $(( ($(date +%s%N) - s) / 1000000 )) > "$logs/selfcheck.ms" ) &
    sc_pid=$!
fi

if [ $# -eq 0 ] && [ ! -d tests ]; then
    echo "unit tests: none in this tree (a student handout comes without the kit's own test suites); the"
    echo "self-check below checks that the build, the canonical schedules and grading work here"
fi
# the slowest suites first, so the lanes finish together
first=() rest=()
for t in "$@"; do case $t in *test_ci|*test_container|*test_handout|*test_grader|*test_sweeps|*test_tolerance|*test_mpi|*test_cli|*test_bench|*test_jail*) first+=("$t") ;; *) rest+=("$t") ;; esac; done
[ $# -gt 0 ] && printf '%s\n' "${first[@]}" "${rest[@]}" | xargs -P "$lanes" -I{} sh -c '
    s=$(date +%s%N); "$1" --jobs 1 --short-filename --verbose > "$2/$(basename "$1").log" 2>&1
    echo $? > "$2/$(basename "$1").rc"; echo $(( ($(date +%s%N) - s) / 1000000 )) > "$2/$(basename "$1").ms"' _ {} "$logs"
passed=0 failed=0 skipped=0 bad=()
for t in "$@"; do
    name=$(basename "$t")
    log="$logs/$name.log"
    rc=$(cat "$logs/$name.rc" 2>/dev/null || echo 99)
    ms=$(cat "$logs/$name.ms" 2>/dev/null || echo 0)
    synth=$(grep -a "Synthesis:" "$log" | tail -1)
    pass=$(sed -n 's/.*Passing: \([0-9]*\).*/\1/p' <<<"$synth")
    fail=$(sed -n 's/.*Failing: \([0-9]*\).*/\1/p' <<<"$synth")
    crash=$(sed -n 's/.*Crashing: \([0-9]*\).*/\1/p' <<<"$synth")
    skip=$(grep -ac "^\[SKIP\]" "$log" || true)
    passed=$((passed + ${pass:-0})); failed=$((failed + ${fail:-0} + ${crash:-0})); skipped=$((skipped + skip))
    if [ "$rc" -ne 0 ] || [ -z "$synth" ]; then
        bad+=("$name"); grep -av "^\[RUN \]\|^\[PASS\]" "$log"
        [ -z "$synth" ] && failed=$((failed + 1))
    else
        printf '%-22s %5.1f s  %s%s\n' "$name" "$(awk "BEGIN{print $ms/1000}")" "${synth#*Synthesis: }" \
            "$([ "$skip" -gt 0 ] && echo "| Skipped: $skip")"
        grep -a "^\[SKIP\]" "$log" | sed 's/^/    /' | head -3
    fi
done
[ $# -gt 0 ] && echo "unit tests: $passed passed, $failed failed, $skipped skipped ($(awk "BEGIN{print $(ms_since "$t0")/1000}") s)"
sc_bad=0
if [ -n "$sc_pid" ]; then
    wait "$sc_pid"
    cat "$logs/selfcheck.log"
    echo "selfcheck ($selfcheck): $(awk "BEGIN{print $(cat "$logs/selfcheck.ms")/1000}") s"
    [ "$(cat "$logs/selfcheck.rc")" = 0 ] || sc_bad=1
fi
echo "all of it: $(awk "BEGIN{print $(ms_since "$t0")/1000}") s"
if [ ${#bad[@]} -ne 0 ]; then echo "failing suites: ${bad[*]}"; exit 1; fi
[ $sc_bad -eq 0 ]
