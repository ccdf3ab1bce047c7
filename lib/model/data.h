/* data.h: what a run trains on. By default the kit's synthetic task (pp__data_microbatch, model.h), which every
 * graded run uses; or a corpus of text (pp_run_config.corpus), whose tokens are its bytes (a vocabulary of 256):
 * each micro-batch a few windows of the training part, drawn from the seed, the step and the micro-batch. A corpus
 * is read once per process and shared by every rank the process runs, and by the full-batch reference, so that
 * every rank, thread or process, reads the same bytes. */
#ifndef PP_DATA_H
#define PP_DATA_H

#include <stddef.h>

#include "model.h"

/* The vocabulary of a corpus: its tokens are bytes. */
#define PP_CORPUS_VOCAB 256
typedef struct pp_corpus {
    const unsigned char *bytes; /* the whole file, read-only */
    size_t size;
    size_t train;               /* bytes [0, train) are the training part, [train, size) the validation tail: the
                                   last tenth, train = size - size / 10 */
} pp_corpus;

/* The corpus in the file at path, read on the first call of the process and kept for its life (later calls with the
 * same path return the same bytes). NULL with one line in err (the path, what is wrong, what to do) when the file
 * cannot be read, or when either part is shorter than a window of seq + 1 bytes. Thread-safe. */
const pp_corpus *pp__corpus_open(const char *path, int seq, char *err, size_t errlen);

/* Where window i (0..mb_size-1) of micro-batch mb (global index) of step `step` starts in the training part:
 * an offset in [0, train - seq - 1], drawn from (seed, step, mb, i) alone. */
size_t pp__corpus_offset(const pp_corpus *c, unsigned seed, int seq, int step, int mb, int i);

/* The tokens and next-token targets of a window of seq + 1 bytes at offset off: tokens = bytes[off, off + seq),
 * targets = bytes[off + 1, off + seq]. */
void pp__corpus_window(const pp_corpus *c, size_t off, int seq, int *tokens, int *targets);

/* Where validation window i of n starts: n windows spread evenly over the validation tail, the first at its start
 * and the last at its end (the same every time: a fixed validation batch). */
size_t pp__corpus_val_offset(const pp_corpus *c, int seq, int i, int n);

/* The tokens and targets of micro-batch mb (global index) of step `step`, mb_size * d->seq ints each: the corpus's
 * windows (pp__corpus_offset) when corpus names one, else the synthetic task's (pp__data_microbatch). The corpus
 * must open (a configuration that named it passed pp__config_check, which opened it). */
void pp__data_fill(const char *corpus, const pp_model_dims *d, int mb_size, int step, int mb, int *tokens,
                   int *targets);

#endif /* PP_DATA_H */
