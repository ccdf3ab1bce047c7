/* fuzz_loader.c: a lab object as the schedule driver's loader gets it in the jail (pp__loader_load), resolved
 * against the driver's own table (driver/symtab.c, every name of sandbox/proto/symbols.h): the bytes
 * a student's build produced, or any bytes, since the loader is the boundary and the build's check may have
 * been got past. Each input is loaded, its functions looked up (pp__loader_symbol) and the image unloaded;
 * nothing of the image is ever called.
 *
 * The loader is not in the kit's libraries (only the static driver has it), so its files are compiled into
 * this target: loader.c, the table of symtab.c and the allocation wrappers of memory.c that the table hands
 * out for malloc and its kin. Of the rest of the driver the table needs only pp__drv_exit (client.c, which
 * would also bring the driver's own pp.h over the channel in place of the kit's), so a stand-in is defined
 * here; it is an address in the table, never called. The pp.h names resolve to the kit's functions, the C
 * library's to this process's: addresses the loader writes into the image's GOT and relocations, never jumps
 * to. The image is mapped as the driver maps it, read-write then read-execute for its code: an ordinary
 * process may, so the loader runs unchanged.
 *
 * Properties: every input loads or is refused with one non-empty line of printable text and a zeroed image; a
 * loaded image is one page-aligned mapping no larger than the cap, its code read-execute, its lookup table
 * read-only and no page of it both writable and executable; the table lists exactly the object's global functions
 * of executable sections, in order, each inside the code and named by a string inside the image, and
 * pp__loader_symbol finds each; unloading leaves none of it mapped, so loads do not pile up; the cap is exact (the
 * same object under a cap one byte smaller than its image is refused for its size); and an object the build's
 * check (pp__objcheck) accepts is refused by the loader only for what the check leaves to it: the image's exact
 * size, a 32-bit field that does not reach (code not built with -fPIC), or a mapping the process cannot get. */
#include "fuzz.h"
#include "objcheck.h"

#include "../../driver/loader.c"
#include "../../driver/memory.c"
#include "../../driver/symtab.c"
/* symtab.c's names for the table alone: from here on malloc is malloc again */
#undef malloc
#undef calloc
#undef realloc
#undef aligned_alloc
#undef posix_memalign
#undef exit

pp_chan *pp__drv_chan;

void pp__drv_exit(int status) {
    (void)status;
    abort();
}

/* Past this many visible names the cross-check with the build's check is skipped: it compares names pairwise. */
#define FUZZ_MAX_KEEP 256


static int zeroed(const pp_image *img) {
    static const pp_image none;
    return !memcmp(img, &none, sizeof none);
}

static int starts_with(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

/* What pp__objcheck says of the object, kept to its own visible names (as objcopy would have narrowed it):
 * 1 accepted, 0 refused, -1 not asked. */
static int build_check(const unsigned char *buf, size_t size) {
    pp_elf e;
    char err[600];
    if (pp__elf_open(&e, buf, size, "lab.c", err, sizeof err)) return 0;
    const char **keep = malloc(FUZZ_MAX_KEEP * sizeof *keep);
    if (!keep) abort();
    int nkeep = 0, asked = 1;
    for (size_t k = 1; k < e.nsym && asked; k++) {
        if (ELF64_ST_BIND(e.sym[k].st_info) == STB_LOCAL || e.sym[k].st_shndx == SHN_UNDEF) continue;
        if (nkeep == FUZZ_MAX_KEEP) asked = 0;
        else keep[nkeep++] = pp__elf_symbol_name(&e, k);
    }
    int verdict = -1;
    if (asked) verdict = pp__objcheck(buf, size, "lab.c", keep, nkeep, 0, err, sizeof err) == 0;
    free(keep);
    return verdict;
}

/* The object's functions as the loader must export them: global functions of executable sections. */
static void check_exports(const pp_image *img, const unsigned char *buf, size_t size) {
    pp_elf e;
    char err[600], scratch[8];
    fuzz_require(pp__elf_open(&e, buf, size, WHO, err, sizeof err) == 0, "an object loaded that does not open: %s",
                 err);
    size_t f = 0;
    for (size_t k = 1; k < e.nsym; k++) {
        const Elf64_Sym *s = &e.sym[k];
        if (ELF64_ST_BIND(s->st_info) != STB_GLOBAL || ELF64_ST_TYPE(s->st_info) != STT_FUNC ||
            s->st_shndx == SHN_UNDEF || s->st_shndx >= e.shnum ||
            pp__elf_section_kind(&e, s->st_shndx, WHO, scratch, sizeof scratch) != PP_ELF_TEXT)
            continue;
        fuzz_require(f < img->nfns, "the image lists %zu functions; the object has more", img->nfns);
        fuzz_require(!strcmp(img->fns[f].name, pp__elf_symbol_name(&e, k)), "function %zu of the image is %s, "
                     "not the object's %s", f, img->fns[f].name, pp__elf_symbol_name(&e, k));
        f++;
    }
    fuzz_require(f == img->nfns, "the image lists %zu functions; the object has %zu", img->nfns, f);
}

/* The protections of the image's pages, from /proc/self/maps: the code read-execute, the lookup table (with the
 * GOT and the read-only data) read-only, and no page both writable and executable. A line of the maps may run
 * past the image, since the kernel merges neighbouring mappings alike; only its part inside counts. */
static void check_protection(const pp_image *img) {
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps) return; /* no /proc: the property cannot be seen, and nothing else depends on it */
    uintptr_t lo = (uintptr_t)img->base, hi = lo + img->size, text = (uintptr_t)img->text,
              fns = (uintptr_t)img->fns;
    size_t covered = 0;
    int text_seen = 0, fns_seen = 0;
    char line[512];
    while (fgets(line, sizeof line, maps)) {
        unsigned long a, b;
        char perm[5];
        if (sscanf(line, "%lx-%lx %4s", &a, &b, perm) != 3 || b <= lo || a >= hi) continue;
        covered += (b < hi ? b : hi) - (a > lo ? a : lo);
        fuzz_require(!(perm[1] == 'w' && perm[2] == 'x'), "the image has pages both writable and executable");
        if (img->text_size && text >= a && text < b) {
            fuzz_require(!strncmp(perm, "r-x", 3), "the image's code is mapped %s", perm);
            text_seen = 1;
        }
        if (img->nfns && fns >= a && fns < b) {
            fuzz_require(!strncmp(perm, "r--", 3), "the image's lookup table is mapped %s", perm);
            fns_seen = 1;
        }
        if (!strchr(line, '\n')) /* a line longer than the buffer: skip its rest */
            for (int c; (c = fgetc(maps)) != EOF && c != '\n';) continue;
    }
    fclose(maps);
    fuzz_require(covered == img->size, "%zu of the image's %zu bytes are mapped", covered, img->size);
    fuzz_require(text_seen || !img->text_size, "the image's code is not mapped");
    fuzz_require(fns_seen || !img->nfns, "the image's lookup table is not mapped");
}

static void check_image(const pp_image *img, const unsigned char *buf, size_t size) {
    const unsigned char *base = img->base, *end = img->base + img->size;
    fuzz_require(base && img->size > 0 && img->size % PAGE == 0 && img->size <= PP_LAB_MAX_IMAGE,
                 "an image of %zu bytes", img->size);
    fuzz_require(img->text == base && img->text_size <= img->size, "code of %zu bytes in an image of %zu",
                 img->text_size, img->size);
    const unsigned char *fns = (const unsigned char *)img->fns;
    fuzz_require(fns >= base && fns <= end && img->nfns <= (size_t)(end - fns) / sizeof *img->fns,
                 "the lookup table of %zu functions lies outside the image", img->nfns);
    for (size_t i = 0; i < img->nfns; i++) {
        const unsigned char *addr = img->fns[i].addr, *name = (const unsigned char *)img->fns[i].name;
        fuzz_require(addr >= img->text && addr <= img->text + img->text_size, "function %zu lies outside the "
                     "image's code", i);
        fuzz_require(name >= base && name < end && memchr(name, 0, (size_t)(end - name)), "the name of function "
                     "%zu lies outside the image", i);
        void *found = pp__loader_symbol(img, img->fns[i].name);
        size_t first = 0;
        while (strcmp(img->fns[first].name, img->fns[i].name)) first++;
        fuzz_require(found == img->fns[first].addr, "pp__loader_symbol does not find %s", img->fns[i].name);
    }
    check_exports(img, buf, size);
    check_protection(img);
    /* a name the object does not export is not found, whatever the object holds */
    int lists = 0;
    for (size_t i = 0; i < img->nfns; i++) lists |= !strcmp(img->fns[i].name, "pp_gpipe_step");
    fuzz_require(lists || !pp__loader_symbol(img, "pp_gpipe_step"), "pp__loader_symbol found a name not exported");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* the driver reads the object into a buffer of its own, which the loader reads in place: malloc's
     * alignment, and exactly the object's bytes, so a read past its end is one the sanitizer sees */
    unsigned char *buf = calloc(1, size ? size : 1);
    if (!buf) abort();
    if (size) memcpy(buf, data, size);
    size_t ntable;
    const pp_loader_symbol *table = pp__drv_symbols(&ntable);

    pp_image img;
    memset(&img, 0xa5, sizeof img); /* a refusal must zero it, whatever it held */
    char err[600];
    memset(err, 'x', sizeof err);
    int rc = pp__loader_load(&img, buf, size, table, ntable, PP_LAB_MAX_IMAGE, err, sizeof err);
    fuzz_require(rc == 0 || rc == -1, "pp__loader_load returned %d", rc);
    if (rc == 0) {
        check_image(&img, buf, size);
        size_t loaded = img.size;
        void *base = img.base;
        pp__loader_unload(&img);
        fuzz_require(zeroed(&img), "pp__loader_unload left the image's fields");
        /* msync fails with ENOMEM on a range that is not mapped: every page of the image went back */
        errno = 0;
        fuzz_require(msync(base, loaded, MS_ASYNC) == -1 && errno == ENOMEM, "pp__loader_unload left the image "
                     "mapped");
        pp__loader_unload(&img); /* a zeroed image is nothing to unload */

        /* the cap counts the whole image: one byte less is refused, before anything is mapped */
        rc = pp__loader_load(&img, buf, size, table, ntable, loaded - 1, err, sizeof err);
        fuzz_require(rc == -1, "an image of %zu bytes loaded under a cap of %zu", loaded, loaded - 1);
        fuzz_require(starts_with(err, "refused: the lab's code and data need "), "an image of %zu bytes refused "
                     "under a cap of %zu for another reason: %s", loaded, loaded - 1, err);
        fuzz_require(zeroed(&img), "a refused load left the image's fields");
    } else {
        fuzz_one_line(err, sizeof err, "pp__loader_load");
        fuzz_require(zeroed(&img), "a refused load left the image's fields");
        int checked = build_check(buf, size);
        fuzz_require(checked != 1 || starts_with(err, "refused: the lab's code and data need ") ||
                         starts_with(err, "refused: " WHO " has a relocation (type ") ||
                         starts_with(err, "the lab's image of ") ||
                         starts_with(err, "refused: the lab's image is too large for its call stubs"),
                     "the build's check accepts an object the loader refuses: %s", err);
    }
    free(buf);
    return 0;
}
