#!/usr/bin/env bash
# plots.sh BUILD OUT: renders every figure of the course into OUT with BUILD/pplab (gnuplot, headless):
# the Gantt chart of the seed example, the sweeps of `pplab figures` (Gantt per schedule, bubble vs M,
# bubble vs comm latency, peak stashes per rank, loss curve). Each figure is NAME.dat + NAME.gp + NAME.png +
# NAME.svg; re-render one with `cd OUT && gnuplot NAME.gp`. IMPL=labs|solutions|DIR picks the schedules
# (default: solutions, the reference implementations).
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: scripts/plots.sh BUILD OUT   (e.g. scripts/plots.sh build out)" >&2
    exit 2
fi
BUILD=$1
OUT=$2
IMPL=${IMPL:-solutions}
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

status=0
run() {
    echo "+ $*"
    "$@" >/dev/null || { echo "plots.sh: failed: $*" >&2; status=1; }
}

# The seed example of the course: GPipe, 4 stages, 6 micro-batches (bubble 1/3).
run "$PPLAB" run --impl "$IMPL" --schedule gpipe --stages 4 --microbatches 6 --plot "$OUT/gantt-gpipe-P4-M6.png"
# The naive schedule: the whole batch at once, (P-1)/P of the time idle.
run "$PPLAB" run --impl "$IMPL" --schedule naive --stages 4 --microbatches 1 --plot "$OUT/gantt-naive-P4.png"
# The sweeps.
run "$PPLAB" figures --impl "$IMPL" "$OUT"

echo "figures in $OUT:"
ls "$OUT"/*.png 2>/dev/null | sed 's/^/  /' || true
exit $status
