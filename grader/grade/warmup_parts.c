/* warmup_parts.c: the warm-up's parts (warmup_parts.h): each part's checks with their points, and its row. */
#include "warmup_parts.h"

static const pp_warmup_check bubble_checks[] = {{"bubble naive", 1},       {"bubble gpipe", 1}, {"bubble 1f1b", 1},
                                                {"bubble interleaved", 2}, {"bubble zbh1", 2},  {"bubble zbh2", 1}};
static const pp_warmup_check peak_checks[] = {{"peaks gpipe", 1},      {"peaks 1f1b", 2}, {"peaks interleaved", 2},
                                              {"peaks zbh1", 1},       {"peaks zbh2", 1}};
static const pp_warmup_check order_checks[] = {
    {"orders gpipe P=4 M=8", 1}, {"orders 1f1b P=4 M=8", 2}, {"orders 1f1b P=4 M=2", 1}, {"orders short buffer", 1}};
/* the same checks on drawn P and M, which the messages name */
static const pp_warmup_check order_drawn_checks[] = {
    {"orders gpipe", 1}, {"orders 1f1b M >= P", 2}, {"orders 1f1b M < P", 1}, {"orders short buffer", 1}};
static const pp_warmup_check chunk_order_checks[] = {{"chunk-orders interleaved P=4 M=8 v=2", 2},
                                                     {"chunk-orders interleaved P=2 M=4 v=3", 1},
                                                     {"chunk-orders interleaved P=4 M=4 v=2", 1}};
/* the same checks on drawn P, M and v, which the messages name */
static const pp_warmup_check chunk_order_drawn_checks[] = {{"chunk-orders interleaved M > P", 2},
                                                           {"chunk-orders interleaved v > 2", 1},
                                                           {"chunk-orders interleaved M = P", 1}};
static const pp_warmup_check idle_checks[] = {{"idle gpipe", 1}, {"idle 1f1b", 1}, {"idle interleaved", 1}};
static const pp_warmup_check uneven_checks[] = {{"uneven: a faster first stage", 1}, {"uneven: a slower last stage", 1},
                                                {"uneven: mixed stages", 1}};
static const pp_warmup_check chunks_checks[] = {{"chunks without latency", 1}, {"chunks with latency", 2}};
static const pp_warmup_check traffic_checks[] = {{"traffic: one chunk per rank", 1}, {"traffic: interleaved", 1},
                                                 {"traffic: V-shaped", 1}};
static const pp_warmup_check memory_checks[] = {{"memory gpipe", 1}, {"memory 1f1b", 1}, {"memory interleaved", 1}};
static const pp_warmup_check grid_checks[] = {{"grid gpus", 1},
                                              {"grid pipeline bytes: one chunk", 1},
                                              {"grid pipeline bytes: interleaved", 1},
                                              {"grid data-parallel bytes", 1},
                                              {"grid links: Llama 3's placement", 1},
                                              {"grid links: other placements", 1}};
static const pp_warmup_check partition_checks[] = {{"partition valid", 1},
                                                   {"partition optimal: 64-layer LM", 1},
                                                   {"partition optimal: uneven", 1},
                                                   {"partition optimal: deepening", 1},
                                                   {"partition impossible", 1}};

#define PART(name, sym, fn, tbl, drawn) {name, sym, fn, tbl, drawn, (int)(sizeof tbl / sizeof *tbl)}
const pp_warmup_part pp__warmup_parts[] = {
    PART("bubble", "pp_warmup_bubble", pp__warmup_grade_bubble, bubble_checks, NULL),
    PART("peaks", "pp_warmup_peak_stashes", pp__warmup_grade_peaks, peak_checks, NULL),
    PART("orders", "pp_warmup_order", pp__warmup_grade_orders, order_checks, order_drawn_checks),
    PART("partition", "pp_warmup_partition", pp__warmup_grade_partition, partition_checks, NULL),
    PART("chunk-orders", "pp_warmup_chunk_order", pp__warmup_grade_chunk_orders, chunk_order_checks,
         chunk_order_drawn_checks),
    PART("idle", "pp_warmup_idle_ranks", pp__warmup_grade_idle, idle_checks, NULL),
    PART("uneven", "pp_warmup_uneven_bubble", pp__warmup_grade_uneven, uneven_checks, NULL),
    PART("chunks", "pp_warmup_best_chunks", pp__warmup_grade_chunks, chunks_checks, NULL),
    PART("traffic", "pp_warmup_traffic", pp__warmup_grade_traffic, traffic_checks, NULL),
    PART("memory", "pp_warmup_checkpoint_bytes", pp__warmup_grade_memory, memory_checks, NULL),
    PART("grid", "pp_warmup_grid_gpus", pp__warmup_grade_grid, grid_checks, NULL),
};

int pp__warmup_nparts(void) { return PP_WARMUP_COUNT(pp__warmup_parts); }
