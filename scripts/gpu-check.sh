#!/usr/bin/env bash
# gpu-check.sh: the one script to run on a machine with an NVIDIA GPU. Checks the libraries, builds, runs the
# CUDA test suites, grades the reference solutions on the cuda backend, and times a few runs (pplab, and the
# PyTorch reference when torch is importable). Every step runs even when an earlier one failed; a summary
# with each step's status closes the log, and the exit status is 1 if any step failed.
#
#   scripts/gpu-check.sh                 logs into out/gpu-check/
#   OUT=/some/dir scripts/gpu-check.sh   logs into $OUT (one file per step plus summary.txt)
#   QUICK=1                              skips the hidden-4096 benchmarks
set -u
cd "$(dirname "$0")/.." || exit 2

DEST="${OUT:-out/gpu-check}"
BUILD="${BUILD:-build}"
mkdir -p "$DEST"
SUMMARY="$DEST/summary.txt"
: >"$SUMMARY"
FAILED=0

# step NAME TIMEOUT_S CMD...: runs CMD with a time limit, output to the terminal and $DEST/NAME.log.
step() {
    local name="$1" limit="$2"
    shift 2
    echo "=== $name: $*" | tee "$DEST/$name.log"
    local t0 t1 rc
    t0=$(date +%s.%N)
    timeout --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$DEST/$name.log"
    rc=${PIPESTATUS[0]}
    t1=$(date +%s.%N)
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    local status=ok
    if [ "$rc" -ne 0 ]; then
        status="FAILED (exit $rc)"
        [ "$rc" -eq 124 ] && status="FAILED (timeout ${limit}s)"
        FAILED=1
    fi
    printf '%-28s %-22s %8ss\n' "$name" "$status" "$secs" | tee -a "$SUMMARY"
}

# ---- what is installed -------------------------------------------------------------------------------
# shellcheck disable=SC2016 # expanded by the inner shell
step libs 30 bash -c '
    for lib in libcuda.so.1 libcudart.so libcublas.so libnccl.so; do
        if ldconfig -p | grep -q "$lib"; then echo "found   $lib"; else echo "missing $lib"; fi
    done
    ldconfig -p | grep -q libcuda.so.1 || { echo "no driver library: this is not a GPU machine"; exit 1; }'
step nvidia-smi 30 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv

# ---- build and unit tests ----------------------------------------------------------------------------
step build 480 make BUILD="$BUILD" -j"$(nproc)"
step test-cuda 300 "$BUILD/tests/test_cuda" --verbose
step test-kernels-cuda 300 env PP_TEST_BACKEND=cuda "$BUILD/tests/test_kernels" --verbose
step info 30 "$BUILD/pplab" info

# ---- grading on the GPU ------------------------------------------------------------------------------
step grade-cuda 600 "$BUILD/pplab" grade --impl solutions --lab all --backend cuda --json "$DEST/grade-cuda.json"
step grade-cuda-no-green 600 env PP_CUDA_GREEN=0 "$BUILD/pplab" grade --impl solutions --lab 1f1b --backend cuda

# ---- ranks as MPI processes on the GPUs ------------------------------------------------------------------
# Each process takes the GPU of its rank on the node; lab 07's reduce and lab 08's shards' sums go over NCCL (one
# communicator per data-parallel group and per stage's shards, its id sent over MPI) when every member of a group
# has a GPU of its own, over MPI through host memory otherwise (one GPU: the processes share it). Either way the
# gradients must be the threads run's, bit for bit.
if command -v mpirun >/dev/null; then
    MPIRUN="mpirun --allow-run-as-root --oversubscribe"
    for run in "1f1b:2:--schedule 1f1b --stages 2 --microbatches 4" \
               "dp1f1b:2:--schedule dp1f1b --stages 1 --microbatches 4 --dp 2" \
               "dpinterleaved:4:--schedule dpinterleaved --stages 2 --chunks 2 --microbatches 4 --dp 2" \
               "tpblock:4:--schedule tpblock --tp 2 --stages 2 --microbatches 4"; do
        name=${run%%:*} rest=${run#*:}
        np=${rest%%:*} args=${rest#*:}
        step "mpi-cuda-$name" 300 bash -c "set -e
            $BUILD/pplab run --impl solutions $args --backend cuda --dump-grads $DEST/threads-$name.grads
            $MPIRUN -np $np $BUILD/pplab run --impl solutions $args --backend cuda --dump-grads $DEST/mpi-$name.grads
            cmp $DEST/threads-$name.grads $DEST/mpi-$name.grads && echo 'gradients bitwise equal ($np processes)'"
    done
else
    echo "mpi-cuda                     skipped (no mpirun)" | tee -a "$SUMMARY"
fi

# ---- timing ------------------------------------------------------------------------------------------
# Several ranks on one GPU: green contexts (default) against plain streams, with CUDA-event traces so the
# measured timeline can be set beside the virtual replay.
SIZES="512 1024"
[ "${QUICK:-0}" = 1 ] || SIZES="$SIZES 4096"
for h in $SIZES; do
    for green in 1 0; do
        step "run-1f1b-h$h-green$green" 300 env PP_CUDA_GREEN=$green "$BUILD/pplab" run --impl solutions \
            --schedule 1f1b --stages 4 --microbatches 8 --layers 8 --width "$h" --vocab 1024 --seq 64 \
            --microbatch-size 4 --steps 5 --backend cuda --trace "$DEST/trace-1f1b-h$h-green$green.csv"
    done
    # the unpipelined step, the same work as the PyTorch reference below
    step "run-naive-h$h" 300 "$BUILD/pplab" run --impl solutions --schedule naive --stages 1 --microbatches 1 \
        --layers 8 --width "$h" --vocab 1024 --seq 64 --microbatch-size 32 --steps 5 --backend cuda
done

if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    hs=$(echo "$SIZES" | tr ' ' ',')
    step torch-step 300 python3 bench/torch_step.py --hidden "$hs" --layers 8 --vocab 1024 --tokens 2048
else
    echo "torch-step                   skipped (no torch with CUDA)" | tee -a "$SUMMARY"
fi

echo "=== summary ($SUMMARY)"
cat "$SUMMARY"
exit $FAILED
