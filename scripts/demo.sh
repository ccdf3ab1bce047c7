#!/usr/bin/env bash
# The demo behind `make demo`: grades the reference solution of every lab on CPU (table: lab, P, M, v, bubble
# measured vs theory, peak stashes, gradient error, score), shows the timelines of the schedules, renders the
# figures into out/ when gnuplot is installed, and ends with a minute of pplab train on Shakespeare's plays. In a
# student handout (no solutions/) it shows the canonical schedules, the theory and where the student's labs stand
# instead, and exits 0.
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
pplab="$build/pplab"
say() { printf '\n== %s\n' "$*"; }

# A student handout has no solutions: show the schedules as pplab's clock runs their canonical orders (no code of
# the student's is needed), the theory, where the student's labs stand, and where to start.
if [ ! -d solutions ]; then
    say "The schedules on pplab's virtual clock: their canonical orders, drawn without running any code"
    for args in "naive 4 1" "gpipe 4 6" "1f1b 4 8" "interleaved 4 8 --chunks 2" "loopedbfs 4 8 --chunks 2" \
                "zbh1 4 8" "zbh2 4 8" "zbinterleaved 4 8 --chunks 2" "zbv 2 4 --chunks 2" "dualpipev 2 4 --chunks 2" \
                "dualpipe 4 8 --chunks 2"; do
        set -- $args
        printf -- '-- %s, %s stages, %s micro-batches %s\n' "$1" "$2" "$3" "${5:+x $5 chunks}"
        "$pplab" run --canonical --schedule "$1" --stages "$2" --microbatches "$3" ${4:+$4 $5} --timeline
    done
    say "Theory: bubble and peak stashes per rank, P = 4 (what your schedules must reach)"
    printf '%-14s %3s %3s %3s  %-8s %s\n' schedule P M v bubble "peak stashes"
    for args in "naive 4 1 1" "gpipe 4 8 1" "gpipe 4 32 1" "1f1b 4 8 1" "1f1b 4 32 1" "interleaved 4 8 2" \
                "interleaved 4 8 4" "loopedbfs 4 8 2" "zbh1 4 8 1" "zbh2 4 8 1" "zbinterleaved 4 8 2" "zbv 4 8 2" \
                "dualpipev 4 8 2" "dualpipe 4 8 2"; do
        set -- $args
        out=$("$pplab" run --canonical --schedule "$1" --stages "$2" --microbatches "$3" --chunks "$4")
        printf '%-14s %3s %3s %3s  %-8s %s\n' "$1" "$2" "$3" "$4" "$(sed -n 's/^bubble: \([0-9.]*\).*/\1/p' <<<"$out")" \
            "$(sed -n 's/^peak stashes: //p' <<<"$out")"
    done
    if command -v gnuplot >/dev/null 2>&1; then
        say "Figures (gnuplot) of the canonical schedules into out/"
        mkdir -p out
        for args in "gpipe 4 6 1" "1f1b 4 8 1" "interleaved 4 8 2"; do
            set -- $args
            "$pplab" run --canonical --schedule "$1" --stages "$2" --microbatches "$3" --chunks "$4" \
                --plot "out/canonical-$1-P$2-M$3.png" >/dev/null && echo "  out/canonical-$1-P$2-M$3.png"
        done
    fi
    say "Your labs/ today (make grade grades them; every lab starts at 0)"
    "$pplab" grade --impl labs --lab all --quiet | sed -n '/^Score by lab/,$p'
    say "Once your 1F1B grades, build/pplab train trains the kit's model on Shakespeare's plays with it (docs/train.md)"
    say "Start here: read docs/00-warmup.md, fill in labs/00-warmup/warmup.c, then run: make grade LAB=warmup"
    exit 0
fi

impl=solutions

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
say "ZB-H1, 4 stages, 8 micro-batches: backwards split, weight halves held back to fill the cool-down"
"$pplab" run --impl "$impl" --schedule zbh1 --stages 4 --microbatches 8 --timeline

if command -v gnuplot >/dev/null 2>&1; then
    say "Figures (gnuplot) into out/"
    LAB= IMPL=$impl bash scripts/plots.sh "$build" out | tail -20
else
    say "gnuplot is not installed: no figures (apt-get install gnuplot-nox, or make deps as root)"
fi
say "Training: the kit's model learns Shakespeare's plays, 1F1B on 2 stages as grading runs it (docs/train.md)"
plot=""
command -v gnuplot >/dev/null 2>&1 && mkdir -p out && plot="--plot out/train.png"
"$pplab" train --impl "$impl" $plot || rc=1
say "Next: edit labs/02-gpipe/gpipe.c, then run: make grade LAB=gpipe"
exit $rc
