#!/usr/bin/env bash
# The demo behind `make demo`: grades the reference solution of every lab on CPU (table: lab, P, M, v, bubble
# measured vs theory, peak stashes, gradient error, score), shows the timelines of the four schedules, and
# renders the figures into out/ when gnuplot is installed.
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
pplab="$build/pplab"
# the kit grades its reference solutions; a student handout has none, so it shows the student's own labs
impl=solutions
[ -d solutions ] || impl=labs
say() { printf '\n== %s\n' "$*"; }

say "Grading $impl/ of every lab (CPU, virtual clock)"
"$pplab" grade --impl "$impl" --lab all --table --quiet
rc=$?

say "GPipe, 4 stages, 6 micro-batches, forward only: the staircase of the GPipe paper"
"$pplab" run --impl "$impl" --schedule gpipe --stages 4 --microbatches 6 --timeline --forward-only
say "GPipe, whole step: every forward, then every backward (peak 6 stashes on every rank)"
"$pplab" run --impl "$impl" --schedule gpipe --stages 4 --microbatches 6 --timeline
say "1F1B, 4 stages, 8 micro-batches: the same bubble, at most P-r stashes on rank r"
"$pplab" run --impl "$impl" --schedule 1f1b --stages 4 --microbatches 8 --timeline
say "Interleaved 1F1B, 4 ranks x 2 chunks, 8 micro-batches: a smaller bubble for 7/3 the messages"
"$pplab" run --impl "$impl" --schedule interleaved --stages 4 --microbatches 8 --chunks 2 --timeline

if command -v gnuplot >/dev/null 2>&1; then
    say "Figures (gnuplot) into out/"
    IMPL=$impl bash scripts/plots.sh "$build" out | tail -20
else
    say "gnuplot is not installed: no figures (apt-get install gnuplot-nox, or make deps as root)"
fi
say "Next: edit labs/02-gpipe/gpipe.c, then run: make grade LAB=gpipe"
exit $rc
