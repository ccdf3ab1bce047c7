/* tracefile.h: a run's trace as a file, in the format its name asks for: ".csv" (one row per op, the columns
 * pplab always wrote) or ".json" (the Trace Event Format that ui.perfetto.dev and chrome://tracing open). */
#ifndef PP_TRACEFILE_H
#define PP_TRACEFILE_H

#include <stddef.h>

#include "lanes.h"
#include "trace.h"

/* Virtual time in a JSON trace: one unit of pplab's clock (one block's forward) is drawn as this many
 * microseconds, so that a viewer's millisecond ruler counts units. */
#define PP_TRACE_JSON_US_PER_UNIT 1000.0

/* 0 when path names a format pp__tracefile_write knows (.csv, .json), else -1 with the one-line reason in err:
 * checked before a run, so that a wrong name costs no run. */
int pp__tracefile_format_check(const char *path, char *err, size_t errlen);

/* Writes the P ranks' traces (D replicas of P/D ranks each; D = 1 for one pipeline) to path, CSV or JSON by its
 * extension. Returns 0, or -1 with the reason in err (an extension that is neither, a file that cannot be
 * written). */
int pp__tracefile_write(const pp_trace *traces, int P, int D, const char *path, char *err, size_t errlen);

/* The same for a run's lanes (lanes.h), src staying the caller's. The JSON has a thread per world rank, g = (shard*D
 * + replica)*P + stage, named "rank 2 (stage 0, shard 1)" under --tp and sorted shards under their stage; each op a
 * complete event named and categorised by its cell kind ("F", "B", "I", "W"), and inside it, as complete events that
 * nest in its span exactly, its rebuilt forward (category "recompute") and its shards' sums (category "sum", args:
 * the link, "inside a node" or "between nodes", and the op). otherData.categories gives each category's meaning and
 * the colour every view draws it in. Messages, reduces and arrows are shard 0's, as in pp__tracefile_write_json; the
 * CSV holds shard 0's ops alone, as ever. */
int pp__tracefile_write_lanes(const pp_lanes_src *src, const char *path, char *err, size_t errlen);
/* pp__tracefile_describe of what pp__tracefile_write_lanes writes, with the shards' threads and sums under --tp. */
const char *pp__tracefile_describe_lanes(const pp_lanes_src *src, const char *path, char *buf, size_t len);

/* The JSON trace of traces alone (no shards): two processes, "virtual clock" (ts and dur in virtual time) and "wall
 * clock" (measured), each split into one process per replica when D > 1 ("virtual clock, replica 1"), one thread per
 * rank; each compute op a complete event ("X") on its rank's thread, a rebuilt forward nested in its backward, each
 * send and receive an async slice ("b" to "e": messages overlap each other and the compute, which slices on one
 * thread may not), all with micro-batch, chunk, virtual stage and both clocks' times in args; and for each send a
 * flow arrow ("s" to "f") from the op that produced its tensor to the op that consumed it on the receiver. */
int pp__tracefile_write_json(const pp_trace *traces, int P, int D, const char *path);

/* What pp__tracefile_write puts in path for these traces, as the end of a line that says a trace was written:
 * "52 compute slices, 48 message slices and 24 arrows on each of the two clocks" (.json) or "100 rows: 52 compute
 * ops, 48 message ends" (.csv), saying so when the traces hold no messages (a canonical replay). Returns buf. */
const char *pp__tracefile_describe(const pp_trace *traces, int P, const char *path, char *buf, size_t len);

#endif /* PP_TRACEFILE_H */
