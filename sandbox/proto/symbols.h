/* symbols.h: every name a lab object may leave undefined, which is every name the schedule driver's loader
 * resolves (driver/loader.c) and every name the build's object check accepts (sandbox/toolchain/objcheck.c).
 * One list, so the two can never disagree: a function missing here is refused at build time with its name, not
 * at run time with a crash.
 *
 * The list is pp.h and the part of the C library a schedule or a warm-up answer has a use for: memory, strings,
 * printing, sorting, math, a sleep, a thread, assert; and what the compiler emits by itself (memcpy and memset
 * for struct copies, the stack protector, the _FORTIFY_SOURCE checks, libgcc's arithmetic helpers). Nothing here
 * opens a file, starts a process or reaches the network, so what the seccomp filter refuses is never reached by a
 * function the loader hands out, only by code that got past every other check.
 *
 *   PP_SYMBOLS_API(X)   the functions of pp.h (tests/test_layout.c holds the list to the header)
 *   PP_SYMBOLS_LIBC(X)  C library and libgcc functions
 *   PP_SYMBOLS_DATA(X)  C library objects (stdout, stderr), reached through the GOT */
#ifndef PP_SYMBOLS_H
#define PP_SYMBOLS_H

#define PP_SYMBOLS_API(X)                                                                                      \
    X(pp_rank_id) X(pp_rank_stages) X(pp_rank_microbatches) X(pp_rank_chunks) X(pp_rank_recompute)            \
    X(pp_virtual_stage) X(pp_virtual_stages) X(pp_stage_forward) X(pp_stage_backward)                          \
    X(pp_stage_backward_input) X(pp_stage_backward_weight) X(pp_loss_grad) X(pp_stash_checkpoint)              \
    X(pp_stash_free) X(pp_optimizer_step) X(pp_grad_zero) X(pp_send) X(pp_recv) X(pp_isend) X(pp_irecv)        \
    X(pp_wait) X(pp_waitall) X(pp_group_start) X(pp_group_end) X(pp_tag) X(pp_version) X(pp_fail)              \
    X(pp_rank_replica) X(pp_rank_replicas) X(pp_grad_reduce) X(pp_grad_ireduce) X(pp_rank_shard)              \
    X(pp_rank_shards) X(pp_stage_blocks) X(pp_stage_forward_begin) X(pp_stage_forward_end)                     \
    X(pp_stage_backward_begin) X(pp_stage_backward_end) X(pp_stash_block) X(pp_block_shard)                    \
    X(pp_block_ln1) X(pp_block_qkv) X(pp_block_attention) X(pp_block_proj) X(pp_block_proj_bias)               \
    X(pp_block_ln2) X(pp_block_linear1) X(pp_block_gelu) X(pp_block_linear2) X(pp_block_bias2)                 \
    X(pp_block_residual) X(pp_block_allreduce) X(pp_block_linear2_backward) X(pp_block_bias2_backward)         \
    X(pp_block_gelu_backward) X(pp_block_linear1_backward) X(pp_block_ln2_backward) X(pp_block_proj_backward)  \
    X(pp_block_proj_bias_backward) X(pp_block_attention_backward) X(pp_block_qkv_backward)                     \
    X(pp_block_ln1_backward)

#define PP_SYMBOLS_LIBC(X)                                                                                     \
    /* memory: allocations pass through the driver, which notes a failed one for the report */                 \
    X(malloc) X(calloc) X(realloc) X(free) X(aligned_alloc) X(posix_memalign)                                  \
    /* strings and bytes */                                                                                    \
    X(memcpy) X(memmove) X(memset) X(memcmp) X(memchr) X(strlen) X(strnlen) X(strcmp) X(strncmp) X(strcpy)   \
    X(strncpy) X(strcat) X(strncat) X(strchr) X(strrchr) X(strstr) X(strspn) X(strcspn) X(strdup)             \
    /* numbers from text and back */                                                                           \
    X(atoi) X(atol) X(atof) X(strtol) X(strtoul) X(strtoll) X(strtoull) X(strtod) X(strtof) X(__isoc99_sscanf) \
    X(sscanf) X(abs) X(labs) X(llabs) X(qsort) X(bsearch) X(rand) X(srand) X(rand_r)                           \
    X(isalpha) X(isdigit) X(isalnum) X(isspace) X(isupper) X(islower) X(toupper) X(tolower)                   \
    X(__ctype_b_loc) X(__ctype_tolower_loc) X(__ctype_toupper_loc) X(__errno_location)                         \
    /* printing: to the captured output, or into a buffer */                                                   \
    X(printf) X(fprintf) X(vprintf) X(vfprintf) X(snprintf) X(vsnprintf) X(sprintf) X(vsprintf) X(puts)       \
    X(putchar) X(fputs) X(fputc) X(putc) X(fwrite) X(fflush)                                                   \
    /* math */                                                                                                 \
    X(sqrt) X(sqrtf) X(cbrt) X(fabs) X(fabsf) X(floor) X(floorf) X(ceil) X(ceilf) X(round) X(roundf)          \
    X(lround) X(llround) X(trunc) X(rint) X(lrint) X(fmod) X(fmodf) X(pow) X(powf) X(exp) X(expf) X(exp2)     \
    X(log) X(logf) X(log2) X(log2f) X(log10) X(log1p) X(sin) X(cos) X(tan) X(atan) X(atan2) X(tanh)          \
    X(tanhf) X(erf) X(hypot) X(fmin) X(fmax) X(fminf) X(fmaxf) X(ldexp) X(frexp)                              \
    /* time, sleeping, threads, ending */                                                                      \
    X(clock_gettime) X(timespec_get) X(time) X(clock) X(nanosleep) X(usleep) X(sleep) X(sched_yield)          \
    X(pthread_create) X(pthread_join) X(pthread_detach) X(pthread_self) X(pthread_mutex_init)                 \
    X(pthread_mutex_lock) X(pthread_mutex_unlock) X(pthread_mutex_destroy) X(exit) X(abort) X(__assert_fail)  \
    /* what the compiler emits on its own */                                                                   \
    X(__stack_chk_fail) X(__printf_chk) X(__fprintf_chk) X(__vprintf_chk) X(__vfprintf_chk) X(__sprintf_chk)  \
    X(__snprintf_chk) X(__vsnprintf_chk) X(__vsprintf_chk) X(__memcpy_chk) X(__memmove_chk) X(__memset_chk)   \
    X(__strcpy_chk) X(__strncpy_chk) X(__strcat_chk) X(__strncat_chk)                        \
    X(__popcountdi2) X(__muldc3) X(__mulsc3) X(__divdc3) X(__divsc3) X(__powidf2) X(__powisf2) X(__divti3)    \
    X(__udivti3) X(__modti3) X(__umodti3)

#define PP_SYMBOLS_DATA(X) X(stdout) X(stderr)

/* The sizes both sides hold a lab to: its object file (the build refuses a larger one, the driver reads no more)
 * and its loaded image, code, data and zeroed data together. A schedule needs a few KiB of each. */
#define PP_LAB_MAX_OBJECT ((size_t)4 << 20)
#define PP_LAB_MAX_IMAGE ((size_t)8 << 20)

#endif /* PP_SYMBOLS_H */
