/* plugin.h: the CUDA half of libpp, build/libpp_cuda.so (the cuda backend, the nccl transport and their
 * kernels), opened the first time a run asks for it. A process that never touches a GPU then never maps CUDA's
 * libraries, which cost every pplab process, every test and every fork of them a tenth of a second. */
#ifndef PP_PLUGIN_H
#define PP_PLUGIN_H

#include <stddef.h>

/* The address of `name` in libpp_cuda.so, which is looked for beside the running program (build/pplab) and one
 * folder up (build/tests/...) and opened once per process. NULL, with a one-line reason in err (when given),
 * when the plugin is missing, does not load, or lacks the name. Thread-safe. */
void *pp__plugin_symbol(const char *name, char *err, size_t errlen);

#endif /* PP_PLUGIN_H */
