#!/usr/bin/env bash
# Runs every Criterion test binary given, from the project root, and ends with one summary line
# "N passed, N failed, N skipped" (tests) so CI logs show the total. Exit 1 if any test failed or crashed.
set -uo pipefail
build=$1; shift
cd "$(dirname "$0")/.."
passed=0 failed=0 skipped=0 bad=()
for t in "$@"; do
    name=$(basename "$t")
    log=$(mktemp)
    "$t" --jobs 2 --short-filename --verbose >"$log" 2>&1
    rc=$?
    synth=$(grep -a "Synthesis:" "$log" | tail -1)
    tested=$(sed -n 's/.*Tested: \([0-9]*\).*/\1/p' <<<"$synth")
    pass=$(sed -n 's/.*Passing: \([0-9]*\).*/\1/p' <<<"$synth")
    fail=$(sed -n 's/.*Failing: \([0-9]*\).*/\1/p' <<<"$synth")
    crash=$(sed -n 's/.*Crashing: \([0-9]*\).*/\1/p' <<<"$synth")
    skip=$(grep -ac "^\[SKIP\]" "$log" || true)
    passed=$((passed + ${pass:-0})); failed=$((failed + ${fail:-0} + ${crash:-0})); skipped=$((skipped + skip))
    if [ $rc -ne 0 ] || [ -z "$synth" ]; then
        bad+=("$name"); grep -av "^\[RUN \]\|^\[PASS\]" "$log"
        [ -z "$synth" ] && failed=$((failed + 1))
    else
        printf '%-22s %s%s\n' "$name" "${synth#*Synthesis: }" "$([ "$skip" -gt 0 ] && echo "| Skipped: $skip")"
        grep -a "^\[SKIP\]" "$log" | sed 's/^/    /' | head -3
    fi
    rm -f "$log"
    : "${tested:=0}"
done
echo "unit tests: $passed passed, $failed failed, $skipped skipped"
if [ ${#bad[@]} -ne 0 ]; then echo "failing suites: ${bad[*]}"; exit 1; fi
