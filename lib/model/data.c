/* data.c: a run's tokens and targets: the synthetic task's (model.c) or a corpus's windows. A corpus is mapped
 * read-only on first use and kept for the process's life, in a list under a lock that every rank's thread and the
 * reference share. */
#include "data.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "hash.h"

typedef struct loaded {
    pp_corpus c;
    char *path;
    struct loaded *next;
} loaded;

static loaded *g_loaded;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

#define FAIL(...) (snprintf(err, errlen, __VA_ARGS__), -1)

/* Maps the file at path into *c. 0, or -1 with the reason in err. */
static int corpus_map(const char *path, pp_corpus *c, char *err, size_t errlen) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return FAIL("corpus %s: %s: give the path of a text file with --corpus (the kit's is data/shakespeare.txt; "
                    "scripts/make-corpus.py writes it)", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return FAIL("corpus %s: not a regular file: give the path of a text file with --corpus", path);
    }
    c->size = (size_t)st.st_size;
    void *p = c->size ? mmap(NULL, c->size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    int e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return FAIL("corpus %s: %s: give the path of a text file with --corpus", path,
                    c->size ? strerror(e) : "the file is empty");
    c->bytes = p;
    c->train = c->size - c->size / 10; /* the last tenth is the validation tail */
    return 0;
}

const pp_corpus *pp__corpus_open(const char *path, int seq, char *err, size_t errlen) {
    pthread_mutex_lock(&g_lock);
    loaded *l = g_loaded;
    while (l && strcmp(l->path, path)) l = l->next;
    if (!l) {
        pp_corpus c;
        if (corpus_map(path, &c, err, errlen)) {
            pthread_mutex_unlock(&g_lock);
            return NULL;
        }
        l = pp__xcalloc(1, sizeof *l);
        l->c = c;
        l->path = strdup(path);
        PP_ASSERT(l->path);
        l->next = g_loaded;
        g_loaded = l;
    }
    pthread_mutex_unlock(&g_lock);
    const pp_corpus *c = &l->c;
    size_t window = (size_t)seq + 1;
    if (c->train < window || c->size - c->train < window) {
        snprintf(err, errlen, "corpus %s: %zu bytes leave %zu for training and %zu for validation (its last tenth), "
                 "each less than a window of --seq %d + 1 bytes: lower --seq or use a longer text", path, c->size,
                 c->train, c->size - c->train, seq);
        return NULL;
    }
    return c;
}

/* splitmix64, as the model's weights and the synthetic data draw theirs. */
static uint64_t mix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

size_t pp__corpus_offset(const pp_corpus *c, unsigned seed, int seq, int step, int mb, int i) {
    uint64_t s = pp__hash_text(PP_HASH_INIT ^ seed, "corpus", 16) ^ ((uint64_t)(step + 1) << 32) ^
                 (uint64_t)(mb + 1) * 0x51ED27ull;
    s ^= (uint64_t)(i + 1) * 0x9E3779B1ull << 16;
    mix64(&s);
    return (size_t)(mix64(&s) % (uint64_t)(c->train - (size_t)seq));
}

void pp__corpus_window(const pp_corpus *c, size_t off, int seq, int *tokens, int *targets) {
    PP_ASSERT(off + (size_t)seq < c->size);
    for (int j = 0; j < seq; j++) tokens[j] = c->bytes[off + (size_t)j], targets[j] = c->bytes[off + (size_t)j + 1];
}

size_t pp__corpus_val_offset(const pp_corpus *c, int seq, int i, int n) {
    size_t room = c->size - c->train - (size_t)seq - 1; /* the last start that leaves a whole window */
    return c->train + (n > 1 ? room * (size_t)i / (size_t)(n - 1) : 0);
}

void pp__data_fill(const char *corpus, const pp_model_dims *d, int mb_size, int step, int mb, int *tokens,
                   int *targets) {
    if (!corpus) {
        pp__data_microbatch(d, mb_size, step, mb, tokens, targets);
        return;
    }
    char err[1024];
    const pp_corpus *c = pp__corpus_open(corpus, d->seq, err, sizeof err);
    if (!c) PP_DIE("check the configuration before the run (pp__config_check opens its corpus)", "%s", err);
    for (int i = 0; i < mb_size; i++)
        pp__corpus_window(c, pp__corpus_offset(c, d->seed, d->seq, step, mb, i), d->seq, tokens + i * d->seq,
                          targets + i * d->seq);
}
