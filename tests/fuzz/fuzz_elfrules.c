/* fuzz_elfrules.c: a lab object as the build's object check sees it, bytes a student's compiler and objcopy
 * produced or that the student wrote by hand. First the whole check (pp__objcheck) the way the grader calls it,
 * for a schedule lab (one kept function, required) and for the warm-up (its functions, each optional); then
 * the rules of sandbox/proto/elfrules.h one by one, in the check's order (open, section kinds, symbols,
 * relocation sections and their entries), each called wherever its precondition holds rather than only up to
 * the first refusal, so that every rule meets every object.
 *
 * Properties: every call accepts or refuses with one non-empty line of printable text (names from the object
 * pass through pp__elf_printable, so no byte of the object can break a message), a rule's refusal names the
 * object it was told; what a rule accepts has the structure elfrules.h promises (a loaded kind is an SHF_ALLOC
 * section, an accepted relocation lies inside its section, a resolved name is the table's); and an object the
 * whole check accepts passes every rule on its own and fits the image a lab may have. */
#include <limits.h>

#include "elfrules.h"
#include "fuzz.h"
#include "objcheck.h"
#include "schedules.h"
#include "symbols.h"
#include "warmup_call.h"

#define WHO "02-gpipe/gpipe.c"

/* The names the check resolves, built from symbols.h as objcheck.c builds its own. */
#define FUZZ_NAME(name) {#name, NULL, 0},
static const pp_loader_symbol known[] = {PP_SYMBOLS_API(FUZZ_NAME) PP_SYMBOLS_LIBC(FUZZ_NAME)
                                             PP_SYMBOLS_DATA(FUZZ_NAME)};
#undef FUZZ_NAME
#define NKNOWN (sizeof known / sizeof *known)

#define FUZZ_WU_NAME(field, symbol, type) #symbol,
static const char *const warmup_fns[] = {PP_WARMUP_FUNCTIONS(FUZZ_WU_NAME)};
#undef FUZZ_WU_NAME

/* Every schedule lab's function, from the schedule table: the seeds come from all of them, and one kept name would
 * refuse the others' objects at their first visible symbol, before the relocations are ever read. */
static const char *lab_fns[64];
static int nlab_fns;

/* The table's step functions into lab_fns, once; gpipe's (WHO's) first. */
static void lab_fns_fill(void) {
    if (nlab_fns) return;
    lab_fns[nlab_fns++] = pp__schedule_def("gpipe")->symbol;
    for (int i = 0; i < pp__nschedules && nlab_fns < (int)(sizeof lab_fns / sizeof *lab_fns); i++)
        if (strcmp(pp__schedules[i].name, "gpipe")) lab_fns[nlab_fns++] = pp__schedules[i].symbol;
}


static void refused_as(const char *err, size_t cap, const char *what) {
    fuzz_one_line(err, cap, what);
    fuzz_require(!strncmp(err, "refused: " WHO " ", strlen("refused: " WHO " ")), "%s: a refusal that does not "
                 "name the object: %s", what, err);
}

/* pp__elf_printable keeps the printable bytes of s, writes '?' for the others and always fits cap. */
static void check_printable(const char *s) {
    char out[65];
    static const size_t caps[] = {65, 8, 1};
    for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
        memset(out, 'x', sizeof out);
        pp__elf_printable(s, out, caps[c]);
        size_t n = strnlen(out, caps[c]);
        fuzz_require(n < caps[c], "pp__elf_printable wrote no terminator inside %zu bytes", caps[c]);
        fuzz_require(n == strnlen(s, caps[c] - 1), "pp__elf_printable kept %zu of %zu bytes", n, strlen(s));
        for (size_t i = 0; i < n; i++)
            fuzz_require(out[i] == ((s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?'),
                         "pp__elf_printable changed byte %zu of a name", i);
        for (size_t i = caps[c]; i < sizeof out; i++)
            fuzz_require(out[i] == 'x', "pp__elf_printable wrote past its %zu bytes", caps[c]);
    }
    memset(out, 'x', sizeof out);
    pp__elf_printable(s, out, 0);
    fuzz_require(out[0] == 'x', "pp__elf_printable wrote into a buffer of no bytes");
}

static void objcheck(const void *buf, size_t len, const char *const *keep, int nkeep, int require, int *accepted) {
    char err[600] = "";
    int rc = pp__objcheck(buf, len, WHO, keep, nkeep, require, err, sizeof err);
    fuzz_require(rc == 0 || rc == -1, "pp__objcheck returned %d", rc);
    *accepted = rc == 0;
    if (rc == 0) return;
    fuzz_one_line(err, sizeof err, "pp__objcheck");
    fuzz_require(!strncmp(err, "refused: " WHO, strlen("refused: " WHO)) ||
                     (require && !strncmp(err, WHO " does not define ", strlen(WHO " does not define "))),
                 "pp__objcheck: a refusal that does not name the object: %s", err);
}

/* The rules one by one; whether any of them refused, and in *loaded the bytes of the loaded sections. */
static int rules(const pp_elf *e, unsigned long long *loaded_out) {
    char err[600];
    int refused = 0;
    int kind[PP_ELF_MAX_SECTIONS];
    unsigned long long loaded = 0;
    for (size_t i = 1; i < e->shnum; i++) {
        const Elf64_Shdr *s = &e->sh[i];
        const char *name = pp__elf_section_name(e, i);
        fuzz_require(name, "section %zu has no name once the object opened", i);
        check_printable(name);
        err[0] = 0;
        kind[i] = pp__elf_section_kind(e, i, WHO, err, sizeof err);
        if (kind[i] < 0) {
            fuzz_require(kind[i] == -1, "pp__elf_section_kind returned %d", kind[i]);
            refused_as(err, sizeof err, "pp__elf_section_kind");
            refused = 1;
            continue;
        }
        fuzz_require(kind[i] <= PP_ELF_RELA, "pp__elf_section_kind returned %d", kind[i]);
        fuzz_require((kind[i] == PP_ELF_RELA) == (s->sh_type == SHT_RELA && !(s->sh_flags & SHF_ALLOC)),
                     "section %zu of type 0x%x is of kind %d", i, (unsigned)s->sh_type, kind[i]);
        if (!PP_ELF_LOADED(kind[i])) continue;
        fuzz_require(s->sh_flags & SHF_ALLOC, "section %zu is loaded without SHF_ALLOC", i);
        fuzz_require((kind[i] == PP_ELF_BSS) == (s->sh_type == SHT_NOBITS), "section %zu of type 0x%x is of kind %d",
                     i, (unsigned)s->sh_type, kind[i]);
        fuzz_require(s->sh_type == SHT_PROGBITS || s->sh_type == SHT_NOBITS, "a loaded section of type 0x%x",
                     (unsigned)s->sh_type);
        fuzz_require(!((s->sh_flags & SHF_WRITE) && (s->sh_flags & SHF_EXECINSTR)), "section %zu is loaded "
                     "writable and executable", i);
        fuzz_require((kind[i] == PP_ELF_TEXT) == !!(s->sh_flags & SHF_EXECINSTR), "section %zu is of kind %d with "
                     "flags 0x%llx", i, kind[i], (unsigned long long)s->sh_flags);
        fuzz_require(s->sh_addralign <= PP_ELF_MAX_ALIGN && !(s->sh_addralign & (s->sh_addralign - 1)),
                     "section %zu is loaded aligned to %llu", i, (unsigned long long)s->sh_addralign);
        loaded = s->sh_size > ULLONG_MAX - loaded ? ULLONG_MAX : loaded + s->sh_size;
    }
    for (size_t k = 1; k < e->nsym; k++) {
        const Elf64_Sym *s = &e->sym[k];
        const char *name = pp__elf_symbol_name(e, k);
        fuzz_require(name, "symbol %zu has no name once the object opened", k);
        check_printable(name);
        const pp_loader_symbol *found = (const pp_loader_symbol *)1;
        err[0] = 0;
        int rc = pp__elf_symbol_check(e, k, known, NKNOWN, &found, WHO, err, sizeof err);
        fuzz_require(rc == 0 || rc == -1, "pp__elf_symbol_check returned %d", rc);
        if (rc) {
            fuzz_require(!found, "pp__elf_symbol_check refused and left a name resolved");
            refused_as(err, sizeof err, "pp__elf_symbol_check");
            refused = 1;
            continue;
        }
        if (found) {
            fuzz_require(found >= known && found < known + NKNOWN, "a symbol resolved outside the table");
            fuzz_require(!strcmp(found->name, name), "symbol %s resolved to %s", name, found->name);
            fuzz_require(s->st_shndx == SHN_UNDEF, "a defined symbol resolved against the table");
        } else if (s->st_shndx == SHN_UNDEF) {
            fuzz_require(!strcmp(name, "_GLOBAL_OFFSET_TABLE_"), "undefined symbol %zu accepted unresolved", k);
        } else if (s->st_shndx != SHN_ABS) {
            fuzz_require(s->st_shndx < e->shnum && s->st_value <= e->sh[s->st_shndx].sh_size,
                         "symbol %zu accepted outside its section", k);
        }
    }
    for (size_t i = 1; i < e->shnum; i++) {
        if (e->sh[i].sh_type != SHT_RELA || kind[i] != PP_ELF_RELA) continue;
        err[0] = 0;
        long target = pp__elf_rela_target(e, i, WHO, err, sizeof err);
        if (target < 0) {
            fuzz_require(target == -1, "pp__elf_rela_target returned %ld", target);
            refused_as(err, sizeof err, "pp__elf_rela_target");
            refused = 1;
            continue;
        }
        fuzz_require(target > 0 && (size_t)target < e->shnum && (size_t)target != i, "relocations of section %zu "
                     "apply to section %ld", i, target);
        if (kind[target] < 0 || !PP_ELF_LOADED(kind[target])) continue;
        size_t n;
        const Elf64_Rela *r = pp__elf_relas(e, i, &n);
        fuzz_require(n == e->sh[i].sh_size / sizeof *r, "section %zu has %zu relocations", i, n);
        for (size_t q = 0; q < n; q++) {
            unsigned type = (unsigned)ELF64_R_TYPE(r[q].r_info);
            int width = pp__elf_reloc_width(type);
            fuzz_require(width == -1 || width == 0 || width == 4 || width == 8, "relocation type %u of width %d",
                         type, width);
            err[0] = 0;
            int rc = pp__elf_reloc_check(e, i, q, WHO, err, sizeof err);
            fuzz_require(rc == 0 || rc == -1, "pp__elf_reloc_check returned %d", rc);
            if (rc) {
                refused_as(err, sizeof err, "pp__elf_reloc_check");
                refused = 1;
                continue;
            }
            const Elf64_Shdr *t = &e->sh[target];
            fuzz_require(width >= 0 && t->sh_type != SHT_NOBITS && r[q].r_offset <= t->sh_size &&
                             (uint64_t)width <= t->sh_size - r[q].r_offset,
                         "relocation %zu of section %zu accepted outside its section", q, i);
            fuzz_require(ELF64_R_SYM(r[q].r_info) < e->nsym, "relocation %zu of section %zu accepted for symbol "
                         "%llu", q, i, (unsigned long long)ELF64_R_SYM(r[q].r_info));
        }
    }
    *loaded_out = loaded;
    return refused;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* the check reads its tables in place, from a buffer the grader read the object into: malloc's alignment,
     * and exactly the object's bytes, so a read past its end is one the sanitizer sees */
    unsigned char *buf = calloc(1, size ? size : 1);
    if (!buf) abort();
    if (size) memcpy(buf, data, size);

    int lab, lab_any, warmup;
    lab_fns_fill();
    objcheck(buf, size, lab_fns, 1, 1, &lab);
    objcheck(buf, size, lab_fns, nlab_fns, 0, &lab_any);
    objcheck(buf, size, warmup_fns, (int)(sizeof warmup_fns / sizeof *warmup_fns), 0, &warmup);
    fuzz_require(!lab || lab_any, "an object accepted for one lab function and refused for all of them");

    /* a buffer that is not 8-byte aligned is the caller's mistake, refused before anything is read */
    char err[600] = "";
    pp_elf e;
    if (size > 1) {
        fuzz_require(pp__elf_open(&e, buf + 1, size - 1, WHO, err, sizeof err) == -1, "an unaligned object opened");
        refused_as(err, sizeof err, "pp__elf_open");
    }
    /* a refusal cut to a small buffer still ends inside it */
    char *small = malloc(12);
    if (!small) abort();
    int opened_small = pp__elf_open(&e, buf, size, WHO, small, 12);
    if (opened_small) fuzz_require(memchr(small, 0, 12), "a refusal cut to 12 bytes is not terminated");
    free(small);

    err[0] = 0;
    int rc = pp__elf_open(&e, buf, size, WHO, err, sizeof err);
    fuzz_require(rc == opened_small, "pp__elf_open answered %d, and %d with a smaller message buffer", rc,
                 opened_small);
    if (rc) {
        fuzz_require(rc == -1, "pp__elf_open returned %d", rc);
        refused_as(err, sizeof err, "pp__elf_open");
        fuzz_require(!lab_any && !warmup, "pp__objcheck accepted an object pp__elf_open refuses");
    } else {
        fuzz_require(e.buf == buf && e.len == size && e.shnum > 0 && e.shnum <= PP_ELF_MAX_SECTIONS,
                     "pp__elf_open filled %zu sections", e.shnum);
        fuzz_require(e.symtab > 0 && e.symtab < e.shnum && e.nsym > 0, "pp__elf_open found no symbol table");
        fuzz_require((const unsigned char *)e.sh >= buf && (const unsigned char *)(e.sh + e.shnum) <= buf + size,
                     "the section table lies outside the object");
        fuzz_require((const unsigned char *)e.sym >= buf && (const unsigned char *)(e.sym + e.nsym) <= buf + size,
                     "the symbol table lies outside the object");
        unsigned long long loaded;
        int refused = rules(&e, &loaded);
        fuzz_require(!refused || (!lab_any && !warmup), "pp__objcheck accepted an object one of its rules refuses");
        /* the check's estimate of the image may be rough, but never below the sections it loads */
        fuzz_require((!lab_any && !warmup) || loaded <= PP_LAB_MAX_IMAGE, "pp__objcheck accepted an object whose "
                     "loaded sections need %llu bytes; a lab file may have %zu", loaded, PP_LAB_MAX_IMAGE);
    }
    free(buf);
    return 0;
}
