#!/usr/bin/env bash
# plots.sh BUILD OUT: renders every figure of the course into OUT with BUILD/pplab (gnuplot, headless):
# the Gantt chart of the seed example, the sweeps of `pplab figures` (Gantt per schedule, bubble vs M,
# bubble vs comm latency, peak stashes per rank, loss curve). Each figure is NAME.dat + NAME.gp + NAME.png +
# NAME.svg; re-render one with `cd OUT && gnuplot NAME.gp`. IMPL=labs|solutions|DIR picks the schedules
# (default: solutions, the reference implementations, where the kit has them; labs, your own, in a handout). A
# Gantt chart of a schedule that does not run yet (an untouched stub) shows its canonical order instead, and says
# so; the sweeps skip what does not run, one line each.
# LAB=X (a number such as 05, or a schedule's name) draws that lab's run beside the canonical order instead
# (pplab figures --lab), from your own code (IMPL=labs) unless IMPL says otherwise; an unsolved lab is one line
# and exit status 3. Without LAB, labs 05-08 are drawn so too, each unsolved one skipped in one line.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: scripts/plots.sh BUILD OUT   (e.g. scripts/plots.sh build out)" >&2
    exit 2
fi
BUILD=$1
OUT=$2
if [ -z "${IMPL:-}" ]; then
    # a lab's figures are there to show the student's own run
    if [ -z "${LAB:-}" ] && [ -d "$(dirname "$0")/../solutions" ]; then IMPL=solutions; else IMPL=labs; fi
fi
PPLAB="$BUILD/pplab"

if [ ! -x "$PPLAB" ]; then
    echo "plots.sh: $PPLAB not found: build it first with 'make BUILD=$BUILD'" >&2
    exit 1
fi
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "plots.sh: gnuplot is not installed: apt-get install gnuplot (or run scripts/deps.sh)" >&2
    exit 1
fi
mkdir -p "$OUT"

if [ -n "${LAB:-}" ]; then
    echo "+ $PPLAB figures --impl $IMPL --lab $LAB $OUT"
    exec "$PPLAB" figures --impl "$IMPL" --lab "$LAB" "$OUT"
fi

status=0
run() {
    echo "+ $*"
    "$@" >/dev/null || { echo "plots.sh: failed: $*" >&2; status=1; }
}

# A Gantt chart of IMPL's schedule, or of the canonical order when that does not run yet.
gantt() {
    local png=$1
    shift
    echo "+ $PPLAB run --impl $IMPL $* --plot $png"
    if "$PPLAB" run --impl "$IMPL" "$@" --plot "$png" >/dev/null 2>&1; then return; fi
    echo "  ($IMPL's schedule does not run yet: its canonical order is drawn instead)"
    run "$PPLAB" run --canonical "$@" --plot "$png"
}
# The seed example of the course: GPipe, 4 stages, 6 micro-batches.
gantt "$OUT/gantt-gpipe-P4-M6.png" --schedule gpipe --stages 4 --microbatches 6
# The naive schedule: the whole batch at once.
gantt "$OUT/gantt-naive-P4.png" --schedule naive --stages 4 --microbatches 1
# The sweeps.
run "$PPLAB" figures --impl "$IMPL" "$OUT"
# The later labs, each beside its canonical order; pplab figures says which are not solved yet (status 3).
for lab in 05 06 07 08; do
    echo "+ $PPLAB figures --impl $IMPL --lab $lab $OUT"
    "$PPLAB" figures --impl "$IMPL" --lab "$lab" "$OUT" >/dev/null && continue
    rc=$?
    [ $rc -eq 3 ] || { echo "plots.sh: failed: $PPLAB figures --impl $IMPL --lab $lab $OUT" >&2; status=1; }
done

echo "figures in $OUT:"
ls "$OUT"/*.png 2>/dev/null | sed 's/^/  /' || true
exit $status
