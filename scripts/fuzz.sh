#!/usr/bin/env bash
# Runs every fuzz target built in BUILD/fuzz for SECONDS each, from its seed corpus, and fails on any finding.
#   scripts/fuzz.sh BUILD SECONDS [TARGET...]      (make fuzz: BUILD=build-fuzz, SECONDS=$FUZZ_S)
# FUZZ_RUNS=N (optional) also stops a target after N executions, whichever comes first: a long run is
# FUZZ_S=3600 FUZZ_RUNS=10000000 (an hour or ten million executions per target).
# Each target fuzzes from three folders: the corpus it grew on earlier runs (BUILD/corpus/NAME, kept), the seeds
# kept in the tree (tests/fuzz/corpus/NAME) and seeds made here from the real thing (BUILD/seeds/NAME: the
# objects the kit's C files compile to, the configurations of its docs; see seeds_* below), with its dictionary
# (tests/fuzz/NAME.dict) when it has one. A crash, a leak, a timeout (10 s for one input), memory past 2 GiB or a
# broken property (fuzz_require) stops the target; its input is kept in BUILD/findings/NAME/, and once the bug is
# fixed it belongs in tests/fuzz/regress/NAME/, which make test replays. Prints executions and coverage per target.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/fuzz.sh BUILD SECONDS [TARGET...]} seconds=${2:?usage: scripts/fuzz.sh BUILD SECONDS [TARGET...]}
shift 2
case $seconds in '' | *[!0-9]*) echo "fuzz: FUZZ_S must be a whole number of seconds, got '$seconds'" >&2; exit 2 ;; esac
runs=${FUZZ_RUNS:-}
case $runs in *[!0-9]*) echo "fuzz: FUZZ_RUNS must be a whole number of executions, got '$runs'" >&2; exit 2 ;; esac
runcap=()
[ -n "$runs" ] && runcap=("-runs=$runs")

# Seeds from the real thing, per target: a function seeds_NAME OUT fills OUT.
# The configurations the docs hand an instructor, one file per fenced block that holds a lab's line.
seeds_fuzz_config() {
    for f in docs/*.md; do
        awk -v out="$1/$(basename "$f" .md)" '
            /^```/ { if (inblock) { inblock = 0; n++ } else inblock = 1; next }
            inblock { print > (out "-" n ".cfg") }
        ' "$f"
    done
    # only the blocks that hold a configuration line: a lab and key=value words, or the warm-up's seed
    for c in "$1"/*.cfg; do
        [ -e "$c" ] || continue
        grep -Eq '^[a-z0-9]+([[:space:]]+[A-Za-z_]+=[^[:space:]]+)+|^warmup-seed=' "$c" || rm -f "$c"
    done
}
# Every object a C file of the kit's labs, solutions, broken, valid and hostile variants compiles to, as a
# student's build compiles it (position-independent, pp.h on the path); a file that does not compile is left out,
# and so is one whose compile takes more than 20 s (a hostile variant is a compile bomb: the jail's build limits
# stop it when it is graded).
seeds_objects() {
    local out=$1 i=0
    while IFS= read -r f; do
        i=$((i + 1))
        # TERM first (timeout then exits 124 itself), KILL only for a compile that ignores it
        timeout -k 5 20 cc -std=c11 -O2 -fPIC -Ilib -c "$f" -o "$out/$i-$(basename "$f" .c).o" 2>/dev/null || true
    done < <(find labs solutions tests/broken tests/valid tests/hostile -name '*.c' 2>/dev/null | sort)
}
seeds_fuzz_elfrules() { seeds_objects "$1"; }
# the same objects: copied when the ELF rules' seeds are there already
seeds_fuzz_loader() {
    if [ -n "$(ls -A "$build/seeds/fuzz_elfrules" 2>/dev/null)" ]; then cp "$build/seeds/fuzz_elfrules"/* "$1"/; else seeds_objects "$1"; fi
}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for b in "$build"/fuzz/fuzz_*; do [ -x "$b" ] && targets+=("$(basename "$b")"); done
fi
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: no targets in $build/fuzz: build them with make fuzz" >&2; exit 2; }

failed=0
printf 'fuzz: %d targets, %s s each%s\n' ${#targets[@]} "$seconds" "${runs:+ or $runs executions}"
for t in "${targets[@]}"; do
    bin=$build/fuzz/$t
    [ -x "$bin" ] || { echo "fuzz: $bin is missing: build it with make fuzz" >&2; failed=1; continue; }
    corpus=$build/corpus/$t seeds=$build/seeds/$t findings=$build/findings/$t log=$build/logs/$t.log
    mkdir -p "$corpus" "$seeds" "$findings" "$(dirname "$log")"
    if declare -F "seeds_$t" >/dev/null && [ -z "$(ls -A "$seeds")" ]; then "seeds_$t" "$seeds"; fi
    dirs=("$corpus" "$seeds")
    [ -d tests/fuzz/corpus/$t ] && dirs+=("tests/fuzz/corpus/$t")
    [ -d tests/fuzz/regress/$t ] && dirs+=("tests/fuzz/regress/$t")
    dict=()
    [ -f tests/fuzz/$t.dict ] && dict=("-dict=tests/fuzz/$t.dict")
    # the first folder is the one libFuzzer adds new inputs to: the grown corpus, never the tree's
    start=$SECONDS
    "$bin" -max_total_time="$seconds" "${runcap[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$findings/" "${dict[@]}" "${dirs[@]}" > "$log" 2>&1
    rc=$?
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
    printf '  %-22s %10s executions  %6s edges  %6s features  %5d s  %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
        $((SECONDS - start)) "$([ $rc -eq 0 ] && echo ok || echo FOUND)"
    if [ $rc -ne 0 ]; then
        failed=1
        grep -E 'ERROR|SUMMARY|fuzz: property|Test unit written|timeout|out-of-memory' "$log" | head -8 | sed 's/^/    /'
        echo "    the input is in $findings/ (full log: $log); once fixed, keep it in tests/fuzz/regress/$t/"
    fi
done
[ $failed -eq 0 ] && echo "fuzz: no findings" || { echo "fuzz: findings above" >&2; exit 1; }
