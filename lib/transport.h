/* transport.h: the registry of message transports (threads always; mpi when built with Open MPI). */
#ifndef PP_TRANSPORT_H
#define PP_TRANSPORT_H

#include <stdio.h>
#include "comm.h"

/* The transport called name ("threads", "mpi"), or NULL with a one-line reason in err. */
const pp_transport_ops *pp__transport_find(const char *name, char *err, size_t errlen);
/* One line per compiled-in transport for `pplab info`. */
void pp__transport_describe_all(FILE *out);

#endif /* PP_TRANSPORT_H */
