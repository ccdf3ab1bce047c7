#!/usr/bin/env bash
# docs-figures.sh BUILD: draws the one figure each lab's chapter shows, docs/figures/NN-NAME.png, with BUILD/pplab
# and gnuplot: the canonical order where a replay draws the whole picture, the reference solution's run where
# only a run has it (lab 07's reduce lanes, every replica; lab 08's shards and their sums). Kit only: a handout
# ships the pictures and lacks the solutions. The .dat and .gp beside each are not kept.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
PPLAB="$BUILD/pplab"
if [ ! -x "$PPLAB" ]; then echo "docs-figures.sh: $PPLAB not found: run make first" >&2; exit 1; fi
if [ ! -d solutions ]; then echo "docs-figures.sh: no solutions/ here: the figures are drawn in the kit" >&2; exit 1; fi
OUT=docs/figures
mkdir -p "$OUT"
draw() {
    local name=$1
    shift
    echo "+ pplab run $* --plot $OUT/$name.png"
    "$PPLAB" run "$@" --plot "$OUT/$name.png" >/dev/null
    rm -f "$OUT/$name.dat" "$OUT/$name.gp" "$OUT/$name.svg"
}
draw 00-warmup --canonical --schedule gpipe --stages 3 --microbatches 4
draw 01-naive --canonical --schedule naive --stages 4 --microbatches 1
draw 02-gpipe --canonical --schedule gpipe --stages 4 --microbatches 8
draw 03-1f1b --canonical --schedule 1f1b --stages 4 --microbatches 8
draw 04-interleaved --canonical --schedule interleaved --stages 3 --chunks 2 --microbatches 6
draw 05-zerobubble --canonical --schedule zbh1 --stages 4 --microbatches 8
draw 06-vshape --canonical --schedule dualpipev --stages 2 --microbatches 4
draw 07-hybrid --impl solutions --schedule dp1f1b --stages 2 --microbatches 4 --dp 2
draw 08-tensor --impl solutions --schedule tpgrid --tp 2 --stages 2 --dp 2 --microbatches 4 --node-size 2
