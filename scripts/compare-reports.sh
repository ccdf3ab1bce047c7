#!/usr/bin/env bash
# Grades every variant of tests/broken and tests/valid, the solutions and the stubs with a build and keeps the
# reports, so that a change meant to keep behaviour can be shown to keep every report byte for byte (timings and
# the root's path aside).
#   scripts/compare-reports.sh save BUILD DIR     grade with BUILD, write each variant's reports into DIR
#   scripts/compare-reports.sh diff DIR_A DIR_B   print every report that differs; exit 1 if any does
# Run from a checkout; BUILD is a build folder (its pplab). Each variant's folder holds one lab, graded alone.
# Optional, from the environment:
#   TRANSPORT=mpi          grade with --transport mpi (one mpirun per test) instead of the default threads
#   VARIANTS="V[:LAB] ..." grade only these (e.g. "solutions:tpgrid tests/broken/mpi-deadlock"); LAB picks one lab of
#                          solutions or labs, whose report is then named after it
set -euo pipefail
cd "$(dirname "$0")/.."

# The parts of a report that may change between two gradings of the same code: seconds, and where it lay.
normalize() {
    sed -E -e "s#$PWD#ROOT#g" -e 's/"(seconds|execution_time)":[[:space:]]*[0-9.e+-]+/"\1": T/g' \
        -e 's/\(([0-9]+\.[0-9]+) s\)/(T s)/g' -e 's/time="[0-9.]+"/time="T"/g' -e 's/timestamp="[^"]*"/timestamp="T"/g' "$1"
}

case "${1:-}" in
save)
    build=${2:?usage: compare-reports.sh save BUILD DIR} out=${3:?usage: compare-reports.sh save BUILD DIR}
    mkdir -p "$out"
    # the variants, one lab each; then the reference solutions and the untouched stubs, every lab (the warm-up's
    # answers and its failures among them)
    transport=()
    [ -n "${TRANSPORT:-}" ] && transport=(--transport "$TRANSPORT")
    for item in ${VARIANTS:-tests/broken/* tests/valid/* solutions labs}; do
        v=${item%%:*} lab=${item#*:}
        [ -d "$v" ] || continue
        name=$(echo "$v" | tr / _)
        if [ "$lab" != "$item" ]; then
            name=${name}_$lab
        else
            case $v in
            solutions | labs) lab=all ;;
            *) lab=$(basename "$(find "$v" -mindepth 1 -maxdepth 1 -type d | head -1)") ;;
            esac
        fi
        "$build/pplab" grade --impl "$v" --lab "$lab" "${transport[@]}" --jobs 2 --json "$out/$name.json" \
            --junit "$out/$name.xml" --gradescope "$out/$name.gs.json" > "$out/$name.out" 2>&1 || true
        for f in "$out/$name".*; do normalize "$f" > "$f.n" && mv "$f.n" "$f"; done
    done ;;
diff)
    a=${2:?usage: compare-reports.sh diff DIR_A DIR_B} b=${3:?usage: compare-reports.sh diff DIR_A DIR_B}
    diff -r "$a" "$b" && echo "every report is the same in $a and $b" ;;
*)
    sed -n 2,6p "$0" >&2
    exit 2 ;;
esac
