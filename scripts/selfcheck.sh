#!/usr/bin/env bash
# The grader's self-check: the reference solutions score full marks on every default configuration, and the
# untouched handout (labs/) scores 0, fails with exit status 1 (not a crash), and does so within a minute.
set -uo pipefail
build=$1
cd "$(dirname "$0")/.."
ok=0 bad=0
check() { if eval "$2"; then echo "selfcheck: ok   $1"; ok=$((ok + 1)); else echo "selfcheck: FAIL $1"; bad=$((bad + 1)); fi; }

check "labs/ is generated from solutions/ (scripts/mklabs.sh --check)" "scripts/mklabs.sh --check"
if [ -d solutions ]; then
    start=$(date +%s%N)
    "$build/pplab" grade --impl solutions --lab all --quiet > "$build/selfcheck-solutions.txt" 2>&1
    rc=$?; ms=$(( ($(date +%s%N) - start) / 1000000 ))
    cat "$build/selfcheck-solutions.txt" | tail -8
    check "solutions/ full marks on every default config (exit $rc, ${ms} ms)" "[ $rc -eq 0 ] && grep -q '^FULL MARKS' '$build/selfcheck-solutions.txt'"
fi
start=$(date +%s%N)
"$build/pplab" grade --impl labs --lab all --quiet --json "$build/selfcheck-labs.json" > "$build/selfcheck-labs.txt" 2>&1
rc=$?; ms=$(( ($(date +%s%N) - start) / 1000000 ))
tail -3 "$build/selfcheck-labs.txt"
check "untouched labs/ exit 1 (got $rc)" "[ $rc -eq 1 ]"
check "untouched labs/ score 0" "grep -q '\"score\":[[:space:]]*0[,}]' '$build/selfcheck-labs.json'"
check "untouched labs/ graded in under 60 s (${ms} ms)" "[ $ms -lt 60000 ]"
echo "selfcheck: $ok passed, $bad failed"
[ $bad -eq 0 ]
