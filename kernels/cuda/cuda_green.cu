/* cuda_green.cu: when several ranks share one GPU, gives each its own disjoint share of the SMs with a green
 * context, so that stages run side by side as on separate (smaller) GPUs instead of time-slicing one.
 *
 * The driver API is reached through cudaGetDriverEntryPointByVersion at run time, never linked, so pplab still
 * starts on a machine without a driver. Anything missing or refused (old driver, too many ranks for the minimum
 * partition, PP_CUDA_GREEN=0) falls back to a plain stream and the reason lands in the rank's describe() line.
 *
 * The split is made once per device per process and cached: every rank on the device takes group `local` of the
 * same split, so the shares are disjoint. (Under one process per rank, each process splits on its own; the
 * split is a pure function of the device, so the groups still agree.) */
#include "cuda_common.h"

#include <cuda.h>
#include <pthread.h>
#include <string.h>

#define PP_GREEN_MAX_DEVICES 16
#define PP_GREEN_MAX_SHARE 64
#define PP_GREEN_DRIVER_MIN 12050 /* cuGreenCtxStreamCreate */

typedef CUresult (*pfn_get_resource)(CUdevice, CUdevResource *, CUdevResourceType);
typedef CUresult (*pfn_split)(CUdevResource *, unsigned int *, const CUdevResource *, CUdevResource *, unsigned int,
                              unsigned int);
typedef CUresult (*pfn_gen_desc)(CUdevResourceDesc *, CUdevResource *, unsigned int);
typedef CUresult (*pfn_green_create)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned int);
typedef CUresult (*pfn_green_destroy)(CUgreenCtx);
typedef CUresult (*pfn_green_stream)(CUstream *, CUgreenCtx, unsigned int, int);
typedef CUresult (*pfn_stream_destroy)(CUstream);
typedef CUresult (*pfn_device_get)(CUdevice *, int);

typedef struct green_api {
    pfn_device_get device_get;
    pfn_get_resource get_resource;
    pfn_split split;
    pfn_gen_desc gen_desc;
    pfn_green_create create;
    pfn_green_destroy destroy;
    pfn_green_stream stream_create;
    pfn_stream_destroy stream_destroy;
} green_api;

/* One cached split per device. */
typedef struct green_split {
    int share;                        /* ranks the split was made for; 0 = not made yet */
    unsigned int groups;
    CUdevResource part[PP_GREEN_MAX_SHARE];
    unsigned int total, min_size, align;
    char why[160];                    /* set when the split failed: every rank of the device falls back */
} green_split;

static pthread_mutex_t green_lock = PTHREAD_MUTEX_INITIALIZER;
static green_split green_splits[PP_GREEN_MAX_DEVICES];
static green_api green_fns;
static int green_fns_state; /* 0 unknown, 1 loaded, -1 unavailable */
static char green_fns_why[160];

/* Looks one driver symbol up; 0 on success. */
static int green_sym(const char *name, void **fn, unsigned int version)
{
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    *fn = NULL;
    if (cudaGetDriverEntryPointByVersion(name, fn, version, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !*fn) {
        (void)cudaGetLastError();
        snprintf(green_fns_why, sizeof green_fns_why, "driver has no %s", name);
        return -1;
    }
    return 0;
}

/* Loads the driver entry points once; 0 when all are there. Called under green_lock. */
static int green_load(void)
{
    if (green_fns_state) return green_fns_state > 0 ? 0 : -1;
    int drv = 0;
    if (cudaDriverGetVersion(&drv) != cudaSuccess || drv < PP_GREEN_DRIVER_MIN) {
        (void)cudaGetLastError();
        snprintf(green_fns_why, sizeof green_fns_why, "driver %d.%d is older than 12.5", drv / 1000, drv % 1000 / 10);
        green_fns_state = -1;
        return -1;
    }
    green_api *a = &green_fns;
    int bad = green_sym("cuDeviceGet", (void **)&a->device_get, 12000) ||
              green_sym("cuDeviceGetDevResource", (void **)&a->get_resource, 12040) ||
              green_sym("cuDevSmResourceSplitByCount", (void **)&a->split, 12040) ||
              green_sym("cuDevResourceGenerateDesc", (void **)&a->gen_desc, 12040) ||
              green_sym("cuGreenCtxCreate", (void **)&a->create, 12040) ||
              green_sym("cuGreenCtxDestroy", (void **)&a->destroy, 12040) ||
              green_sym("cuGreenCtxStreamCreate", (void **)&a->stream_create, 12050) ||
              green_sym("cuStreamDestroy", (void **)&a->stream_destroy, 12000);
    green_fns_state = bad ? -1 : 1;
    return bad ? -1 : 0;
}

/* Makes (or reuses) the split of device dev into `share` equal groups. Called under green_lock. */
static green_split *green_split_get(int dev, CUdevice cudev, int share)
{
    green_split *s = &green_splits[dev];
    if (s->share == share) return s;
    memset(s, 0, sizeof *s);
    s->share = share;
    CUdevResource all;
    memset(&all, 0, sizeof all);
    CUresult r = green_fns.get_resource(cudev, &all, CU_DEV_RESOURCE_TYPE_SM);
    if (r != CUDA_SUCCESS) {
        snprintf(s->why, sizeof s->why, "cuDeviceGetDevResource failed (CUresult %d)", (int)r);
        return s;
    }
    s->total = all.sm.smCount;
    s->min_size = all.sm.minSmPartitionSize ? all.sm.minSmPartitionSize : 1;
    s->align = all.sm.smCoscheduledAlignment ? all.sm.smCoscheduledAlignment : 1;
    /* equal shares, rounded down to the alignment the driver reports, never below its minimum partition */
    unsigned int per = s->total / (unsigned)share / s->align * s->align;
    if (per < s->min_size) {
        snprintf(s->why, sizeof s->why, "%d ranks on %u SMs leave %u SMs each, below the minimum partition of %u",
                 share, s->total, per, s->min_size);
        return s;
    }
    unsigned int n = (unsigned)share;
    r = green_fns.split(s->part, &n, &all, NULL, 0, per);
    if (r != CUDA_SUCCESS || n < (unsigned)share) {
        snprintf(s->why, sizeof s->why, "splitting %u SMs into %d groups of %u failed (CUresult %d, %u groups)",
                 s->total, share, per, (int)r, n);
        return s;
    }
    s->groups = n;
    return s;
}

void pp__cuda_green_open(int dev, int local, int share_count, pp_cuda_share *sh, cudaStream_t *stream)
{
    *stream = NULL;
    sh->green = NULL;
    sh->mode = "stream";
    sh->why[0] = '\0';
    const char *env = getenv("PP_CUDA_GREEN");
    if (share_count <= 1) {
        snprintf(sh->why, sizeof sh->why, "one rank on this GPU");
        return;
    }
    if (env && strcmp(env, "0") == 0) {
        snprintf(sh->why, sizeof sh->why, "green contexts disabled by PP_CUDA_GREEN=0");
        return;
    }
    if (dev >= PP_GREEN_MAX_DEVICES || share_count > PP_GREEN_MAX_SHARE) {
        snprintf(sh->why, sizeof sh->why, "more than %d ranks per GPU", PP_GREEN_MAX_SHARE);
        return;
    }
    pthread_mutex_lock(&green_lock);
    if (green_load() != 0) {
        snprintf(sh->why, sizeof sh->why, "%s", green_fns_why);
        pthread_mutex_unlock(&green_lock);
        return;
    }
    CUdevice cudev = 0;
    CUresult r = green_fns.device_get(&cudev, dev);
    green_split *s = r == CUDA_SUCCESS ? green_split_get(dev, cudev, share_count) : NULL;
    if (!s || s->groups == 0) {
        if (s) snprintf(sh->why, sizeof sh->why, "%s", s->why);
        else snprintf(sh->why, sizeof sh->why, "cuDeviceGet failed (CUresult %d)", (int)r);
        pthread_mutex_unlock(&green_lock);
        return;
    }
    CUdevResource mine = s->part[local];
    pthread_mutex_unlock(&green_lock);

    CUdevResourceDesc desc = NULL;
    CUgreenCtx g = NULL;
    CUstream st = NULL;
    if ((r = green_fns.gen_desc(&desc, &mine, 1)) != CUDA_SUCCESS) {
        snprintf(sh->why, sizeof sh->why, "cuDevResourceGenerateDesc failed (CUresult %d)", (int)r);
        return;
    }
    if ((r = green_fns.create(&g, desc, cudev, CU_GREEN_CTX_DEFAULT_STREAM)) != CUDA_SUCCESS) {
        snprintf(sh->why, sizeof sh->why, "cuGreenCtxCreate failed (CUresult %d)", (int)r);
        return;
    }
    if ((r = green_fns.stream_create(&st, g, CU_STREAM_NON_BLOCKING, 0)) != CUDA_SUCCESS) {
        snprintf(sh->why, sizeof sh->why, "cuGreenCtxStreamCreate failed (CUresult %d)", (int)r);
        green_fns.destroy(g);
        return;
    }
    sh->green = (void *)g;
    sh->mode = "green context";
    sh->sms = (int)mine.sm.smCount;
    *stream = (cudaStream_t)st;
}

void pp__cuda_green_close(pp_cuda_share *sh, cudaStream_t stream)
{
    if (!sh->green) return;
    if (stream) green_fns.stream_destroy((CUstream)stream);
    green_fns.destroy((CUgreenCtx)sh->green);
    sh->green = NULL;
}
