/* hint.cu: what to do about a failed CUDA call (cuda_common.h's PP_CUDA_CHECK), one line per kind of failure. */
#include "cuda_common.h"

const char *pp__cuda_hint(cudaError_t e)
{
    switch (e) {
    case cudaErrorMemoryAllocation:
        return "the GPU is out of memory: use a smaller --microbatch-size, fewer micro-batches or fewer ranks per GPU";
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
        return "no usable GPU here: run with --backend cpu";
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
        return "a kernel touched memory it does not own: rerun with CUDA_LAUNCH_BLOCKING=1 (or under "
               "compute-sanitizer) to find which";
    default:
        return "rerun with CUDA_LAUNCH_BLOCKING=1 to find the failing kernel, and check the GPU with nvidia-smi";
    }
}
