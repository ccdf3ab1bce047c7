#!/usr/bin/env bash
# compare.sh BUILD: pplab beside mainstream tools on this CPU, in one run, as ratios (pplab's time / theirs):
#   1. one training step of the GPT on one device vs PyTorch eager (bench/torch_step.py), hidden 256 and 1024
#   2. a 2-rank GPipe and 1F1B step vs torch.distributed.pipelining on gloo (bench/torch_pipeline.py)
#   3. GEMM GFLOP/s of pplab's cpu backend vs numpy's matmul at the shapes of `pplab bench gemm`
#   4. causal attention alone, forward + backward (`pplab bench attention`) vs PyTorch's
#      F.scaled_dot_product_attention(is_causal=True) (bench/torch_attention.py)
#   5. grading every lab's default set (pplab grade --lab all) at --jobs 1 and 2
# Time ratios are pplab's time over theirs (below 1: pplab is faster). One thread per rank on both sides. Parts 1-4
# need PyTorch / numpy in $PYTHON (default python3); a part whose tool is missing is skipped with the reason. Prints
# figures only; exits 0 unless pplab itself fails.
set -u
BUILD=${1:-build}
PY=${PYTHON:-python3}
PPLAB=$BUILD/pplab
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
here=$(cd "$(dirname "$0")" && pwd)
shape=(--seq 16 --batch 64 --vocab 1024) # 1024 tokens per step

echo "# compare: pplab vs PyTorch / numpy on this CPU, one thread per rank; load average $(cut -d' ' -f1-3 /proc/loadavg)"
$PPLAB info | grep -m1 "cpu   usable" | sed 's/^ */#   /'

# ms/step of `pplab run ARGS` (the median its time line prints)
pplab_ms() { $PPLAB run --impl solutions "$@" | sed -n 's/^time: \([0-9.]*\) ms\/step.*/\1/p'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }'; }
mean2() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (a + b) / 2 }'; }

have_torch=0
if "$PY" -c "import torch" 2>/dev/null; then have_torch=1; fi
why_torch="PyTorch is not importable by $PY (pip install torch, or PYTHON=/path/to/python make bench)"

echo
echo "# 1. one GPT step on one device: pplab run --schedule naive --stages 1 vs bench/torch_step.py --device cpu"
echo "#    8 layers, 1024 tokens in one micro-batch, vocab 1024, heads of 64 columns; each side twice, alternating,"
echo "#    the mean of the two medians"
if [ $have_torch = 0 ]; then
    echo "#    skipped: $why_torch"
else
    printf "  %7s  %5s  %5s  %12s  %12s  %6s\n" hidden heads seq "pplab ms" "torch ms" ratio
    # hidden, heads, seq: the seq-128 row is where attention's T^2 work shows
    for row in "256 4 16" "256 4 128" "1024 16 16"; do
        read -r h nh T <<<"$row"
        steps=6; [ "$h" -ge 1024 ] && steps=4
        p=() t=()
        for round in 1 2; do
            p+=("$(pplab_ms --schedule naive --stages 1 --microbatches 1 --microbatch-size $((1024 / T)) --seq "$T" \
                --width "$h" --heads "$nh" --layers 8 --vocab 1024 --steps "$steps")")
            t+=("$("$PY" "$here/torch_step.py" --device cpu --threads 1 --hidden "$h" --heads "$nh" --seq "$T" \
                --layers 8 --tokens 1024 --vocab 1024 --steps "$steps" --warmup 1 2>/dev/null | awk '!/^#/ { print $7 }')")
        done
        pm=$(mean2 "${p[0]}" "${p[1]}") tm=$(mean2 "${t[0]}" "${t[1]}")
        printf "  %7d  %5d  %5d  %12s  %12s  %6s\n" "$h" "$nh" "$T" "$pm" "$tm" "$(ratio "$pm" "$tm")"
    done
fi

echo
echo "# 2. a 2-rank step: pplab run --stages 2 vs torch.distributed.pipelining (gloo, 2 processes)"
echo "#    hidden 256, 8 layers, 1024 tokens in 4 micro-batches"
if [ $have_torch = 0 ]; then
    echo "#    skipped: $why_torch"
else
    # a worker that dies ends its part (torch_pipeline.py watches both ranks); the whole part has 5 minutes
    tp=$(timeout 300 "$PY" "$here/torch_pipeline.py" --hidden 256 --layers 8 --microbatches 4 --steps 5 2>"$BUILD/compare-torch.err")
    tp_rc=$?
    printf "  %9s  %12s  %12s  %6s\n" schedule "pplab ms" "torch ms" ratio
    for s in gpipe 1f1b; do
        pm=$(pplab_ms --schedule "$s" --stages 2 --microbatches 4 --width 256 --layers 8 "${shape[@]}" --steps 5)
        tm=$(printf '%s\n' "$tp" | awk -v s="$s" '$1 == s { print $6 }')
        printf "  %9s  %12s  %12.1f  %6s\n" "$s" "$pm" "${tm:-0}" "$(ratio "$pm" "${tm:-0}")"
    done
    if [ $tp_rc -ne 0 ] || grep -q failed <<<"$tp"; then
        why=$(grep -v '^\s*$' "$BUILD/compare-torch.err" | tail -1)
        [ $tp_rc -eq 124 ] && why="it ran past 5 minutes and was stopped"
        echo "#    torch.distributed.pipelining failed: ${why:-no message}; the figures above without one are missing"
    fi
fi

echo
echo "# 3. GEMM: pplab's gemm slot (pplab bench gemm) vs numpy.matmul, fp32, GFLOP/s; the ratio is pplab's rate"
echo "#    over numpy's (above 1: pplab is faster)"
if ! "$PY" -c "import numpy" 2>/dev/null; then
    echo "#    skipped: numpy is not importable by $PY (pip install numpy)"
else
    # a row: shape name (one or two words), op, m, n, k, calls, slot and direct GFLOP/s, ratio
    rows=$($PPLAB bench gemm --quick | awk '!/^#/ && NF >= 9 {
        name = $1; for (i = 2; i <= NF - 8; i++) name = name "_" $i
        print name "_" $(NF - 7), $(NF - 6), $(NF - 5), $(NF - 4), $(NF - 2) }')
    specs=$(printf '%s\n' "$rows" | awk '{ n = split($1, a, "_"); print a[n] ":" $2 "x" $3 "x" $4 }')
    # shellcheck disable=SC2086
    np=$("$PY" "$here/numpy_gemm.py" $specs)
    printf "  %-10s  %5s  %5s  %5s  %9s  %9s  %6s\n" shape m n k pplab numpy ratio
    paste -d' ' <(printf '%s\n' "$rows") <(printf '%s\n' "$np") |
        awk '{ printf "  %-10s  %5d  %5d  %5d  %9.1f  %9.1f  %6.2f\n", $1, $2, $3, $4, $5, $10, $5 / $10 }'
fi

echo
echo "# 4. causal attention, forward + backward: pplab bench attention vs bench/torch_attention.py"
echo "#    (F.scaled_dot_product_attention(is_causal=True) and its backward, torch.set_num_threads(1)), ms per call"
if [ $have_torch = 0 ]; then
    echo "#    skipped: $why_torch"
else
    # a row: B T nh hd calls ms GFLOP/s
    rows=$($PPLAB bench attention | awk '!/^#/ && NF == 7 { print $1, $2, $3, $4, $6 }')
    if [ -z "$rows" ]; then
        echo "#    pplab bench attention printed no figures: $($PPLAB bench attention | grep -m1 'attention:')"
    else
        specs=$(printf '%s\n' "$rows" | awk '{ print $1 ":" $2 ":" $3 ":" $4 }')
        # shellcheck disable=SC2086
        ta=$("$PY" "$here/torch_attention.py" $specs 2>/dev/null | awk '!/^#/ { print $6 }')
        printf "  %3s  %4s  %3s  %3s  %9s  %9s  %6s\n" B T nh hd "pplab ms" "torch ms" ratio
        paste -d' ' <(printf '%s\n' "$rows") <(printf '%s\n' "$ta") |
            awk '{ printf "  %3d  %4d  %3d  %3d  %9.3f  %9.3f  %6.2f\n", $1, $2, $3, $4, $5, $6, ($6 > 0 ? $5 / $6 : 0) }'
    fi
fi

echo
echo "# 5. grading: pplab grade --impl solutions --lab all, wall seconds"
for j in 1 2; do
    t0=$(date +%s.%N)
    $PPLAB grade --impl solutions --lab all --jobs $j --quiet > /dev/null || echo "#    grading failed at --jobs $j"
    t1=$(date +%s.%N)
    awk -v j=$j -v a="$t0" -v b="$t1" 'BEGIN { printf "  --jobs %d  %6.2f s\n", j, b - a }'
done
echo "# load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
