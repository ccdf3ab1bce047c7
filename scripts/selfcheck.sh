#!/usr/bin/env bash
# The grader's self-check: the reference solutions score full marks on every default configuration, and the
# pristine handout (the stubs generated from solutions/ into a temporary folder, never the student's labs/)
# scores 0, fails with exit status 1 (not a crash), and fails at once (no test waits out its time limit); and the
# commands the docs quote print what the docs say. In a student handout (no solutions/) it checks that pplab, the canonical schedules,
# grading and the docs' commands work there.
#   scripts/selfcheck.sh BUILD [--quick]    --quick (make test): not the untouched handout's grading, and of the
#                                           docs the quoted paths and the commands that do not grade (make check
#                                           runs all of it)
set -uo pipefail
build=$1
mode=""
docs_what="the commands the docs quote print what the docs say (scripts/doccheck.sh)"
if [ "${2:-}" = --quick ]; then
    mode=--quick
    docs_what="the docs' paths exist and their quick commands print what the docs say (scripts/doccheck.sh --quick)"
fi
# its report only when something failed: one line per failing command or path
docs="bash scripts/doccheck.sh $mode '$build' > '$build/doccheck.txt' 2>&1 || { grep -v '^    skipped' '$build/doccheck.txt'; false; }"
cd "$(dirname "$0")/.."
ok=0 bad=0
check() { if eval "$2"; then echo "selfcheck: ok   $1"; ok=$((ok + 1)); else echo "selfcheck: FAIL $1"; bad=$((bad + 1)); fi; }

if [ ! -d solutions ]; then
    check "student handout: pplab runs (pplab info)" "'$build/pplab' info > /dev/null"
    check "the canonical GPipe, P = 4, M = 6, has bubble 1/3" \
        "'$build/pplab' run --canonical --schedule gpipe --stages 4 --microbatches 6 | grep -qx 'bubble: 0.3333 (theory 0.3333)'"
    "$build/pplab" grade --impl labs --lab all --quiet > "$build/selfcheck-labs.txt" 2>&1
    rc=$?
    score=$(sed -n 's/^Score: //p' "$build/selfcheck-labs.txt")
    case $rc in 0) what="full marks" ;; 1) what="not full marks yet" ;; *) what="grading itself failed" ;; esac
    check "grading labs/ runs, sandboxed, and gives a score (${score:-none}; exit $rc: $what)" \
        "[ $rc -le 1 ] || { tail -8 '$build/selfcheck-labs.txt'; false; }"
    check "$docs_what" "$docs"
    echo "selfcheck: $ok passed, $bad failed"
    [ $bad -eq 0 ]; exit
fi

check "committed labs/ are generated from solutions/ (scripts/mklabs.sh --check)" "scripts/mklabs.sh --check"
start=$(date +%s%N)
"$build/pplab" grade --impl solutions --lab all --quiet > "$build/selfcheck-solutions.txt" 2>&1
rc=$?; ms=$(( ($(date +%s%N) - start) / 1000000 ))
# the grading's own lines only when something failed: make test's output holds its verdicts alone
check "solutions/ full marks on every default config (exit $rc, ${ms} ms)" \
    "{ [ $rc -eq 0 ] && grep -q '^FULL MARKS' '$build/selfcheck-solutions.txt'; } || { tail -16 '$build/selfcheck-solutions.txt'; false; }"

if [ -n "$mode" ]; then
    # the untouched handout's grading (every lab, every default configuration) is make check's; in make test,
    # test_grader's untouched_lab_scores_zero grades five labs' untouched stubs on one configuration each
    check "$docs_what" "$docs"
    echo "selfcheck: $ok passed, $bad failed (--quick: the untouched handout is graded by make check)"
    [ $bad -eq 0 ]; exit
fi
pristine=$(mktemp -d)
trap 'rm -rf "$pristine"' EXIT
bash scripts/mklabs.sh --out "$pristine/labs"
start=$(date +%s%N)
"$build/pplab" grade --impl "$pristine/labs" --lab all --quiet --json "$build/selfcheck-labs.json" > "$build/selfcheck-labs.txt" 2>&1
rc=$?; ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "untouched handout exits 1 (got $rc)" "[ $rc -eq 1 ] || { tail -8 '$build/selfcheck-labs.txt'; false; }"
check "untouched handout scores 0" "grep -q '\"score\":[[:space:]]*0[,}]' '$build/selfcheck-labs.json'"
# a stub must fail at once, not wait out its test's time limit: what the JSON says, not the wall clock of a
# machine that may be busy (the time is a figure here)
check "untouched handout: no test ran out of its time limit (graded in ${ms} ms)" \
    "! grep -q '\"timed_out\":[[:space:]]*true' '$build/selfcheck-labs.json'"
check "$docs_what" "$docs"
echo "selfcheck: $ok passed, $bad failed"
[ $bad -eq 0 ]
