/* loader.c: the loader of loader.h. Three passes over the checked object: classify every section and symbol
 * (elfrules.c refuses what a lab object may not hold), scan the relocations of loaded sections to learn which
 * symbols need a GOT slot or a call stub, then lay out, copy, relocate and protect one mapping. Sizes from the
 * file are added with saturation, so an absurd bss is refused by the cap instead of wrapping. */
#include "loader.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define WHO "the lab file"
#define PAGE 4096u
#define STUB 16u /* jmp *slot(%rip) is 6 bytes; the rest int3 */

/* What the relocations need of one symbol. */
typedef struct symx {
    const pp_loader_symbol *ext; /* resolved against the table */
    uint32_t got;                /* slot number + 1, 0: none */
    uint32_t stub;               /* stub number + 1, 0: none */
    uint8_t is_got;              /* _GLOBAL_OFFSET_TABLE_ */
} symx;

typedef struct layout {
    pp_elf e;
    uint8_t kind[PP_ELF_MAX_SECTIONS];
    uint64_t at[PP_ELF_MAX_SECTIONS]; /* a loaded section's offset in the image */
    symx *x;
    uint32_t ngot, nstub;
    size_t nfns, names; /* exported functions and the bytes of their names */
    uint64_t text, text_end, stubs, ro, got, fns, fn_names, rw, end;
    unsigned char *base;
} layout;

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* at rounded up to align (a power of two), saturating. */
static uint64_t align_up(uint64_t at, uint64_t align) {
    if (align < 2) return at;
    uint64_t up = sat_add(at, align - 1);
    return up == UINT64_MAX ? UINT64_MAX : up & ~(align - 1);
}

/* Places every loaded section of kind k after at, and returns the end. */
static uint64_t place(layout *l, int k, uint64_t at) {
    for (size_t i = 1; i < l->e.shnum; i++) {
        if (l->kind[i] != k) continue;
        at = align_up(at, l->e.sh[i].sh_addralign);
        l->at[i] = at;
        at = sat_add(at, l->e.sh[i].sh_size);
    }
    return at;
}

static int is_export(const layout *l, size_t k) {
    const Elf64_Sym *s = &l->e.sym[k];
    return ELF64_ST_BIND(s->st_info) == STB_GLOBAL && ELF64_ST_TYPE(s->st_info) == STT_FUNC &&
           s->st_shndx != SHN_UNDEF && s->st_shndx < l->e.shnum && l->kind[s->st_shndx] == PP_ELF_TEXT;
}

static int classify(layout *l, const pp_loader_symbol *table, size_t ntable, char *err, size_t errlen) {
    for (size_t i = 0; i < l->e.shnum; i++) {
        int k = pp__elf_section_kind(&l->e, i, WHO, err, errlen);
        if (k < 0) return -1;
        l->kind[i] = (uint8_t)k;
    }
    for (size_t k = 1; k < l->e.nsym; k++) {
        if (pp__elf_symbol_check(&l->e, k, table, ntable, &l->x[k].ext, WHO, err, errlen)) return -1;
        const Elf64_Sym *s = &l->e.sym[k];
        l->x[k].is_got = s->st_shndx == SHN_UNDEF && !l->x[k].ext;
        if (is_export(l, k)) l->nfns++, l->names += strlen(pp__elf_symbol_name(&l->e, k)) + 1;
    }
    return 0;
}

/* The relocation sections whose target is loaded; others (debug info, .eh_frame) are never read. */
static int applies(const layout *l, size_t i) {
    return l->kind[i] == PP_ELF_RELA && l->e.sh[i].sh_info < l->e.shnum && PP_ELF_LOADED(l->kind[l->e.sh[i].sh_info]);
}

static int is_gotpcrel(unsigned t) {
    return t == R_X86_64_GOTPCREL || t == R_X86_64_GOTPCRELX || t == R_X86_64_REX_GOTPCRELX;
}

/* A call or a PC-relative reference to a function of the table: it goes through the function's stub. */
static int via_stub(const symx *x, unsigned t) {
    return x->ext && !x->ext->data && (t == R_X86_64_PLT32 || t == R_X86_64_PC32);
}

static int scan_relocations(layout *l, char *err, size_t errlen) {
    for (size_t i = 1; i < l->e.shnum; i++) {
        if (!applies(l, i)) continue;
        if (pp__elf_rela_target(&l->e, i, WHO, err, errlen) < 0) return -1;
        size_t n;
        const Elf64_Rela *r = pp__elf_relas(&l->e, i, &n);
        for (size_t q = 0; q < n; q++) {
            if (pp__elf_reloc_check(&l->e, i, q, WHO, err, errlen)) return -1;
            unsigned t = (unsigned)ELF64_R_TYPE(r[q].r_info);
            symx *x = &l->x[ELF64_R_SYM(r[q].r_info)];
            if ((is_gotpcrel(t) || via_stub(x, t)) && !x->got) x->got = ++l->ngot;
            if (via_stub(x, t) && !x->stub) x->stub = ++l->nstub;
        }
    }
    return 0;
}

/* text | read-only data, GOT, lookup table | writable data, bss; each region on its own pages. */
static void lay_out(layout *l) {
    l->text = 0;
    l->text_end = place(l, PP_ELF_TEXT, 0);
    l->stubs = align_up(l->text_end, STUB);
    l->text_end = sat_add(l->stubs, (uint64_t)l->nstub * STUB);
    l->ro = align_up(l->text_end, PAGE);
    uint64_t at = place(l, PP_ELF_RODATA, l->ro);
    l->got = align_up(at, 8);
    l->fns = sat_add(l->got, (uint64_t)l->ngot * 8);
    l->fn_names = sat_add(l->fns, (uint64_t)l->nfns * sizeof(pp_image_fn));
    l->rw = align_up(sat_add(l->fn_names, l->names), PAGE);
    at = place(l, PP_ELF_DATA, l->rw);
    l->end = align_up(place(l, PP_ELF_BSS, at), PAGE);
    if (l->end == 0) l->end = PAGE; /* an empty object still gets a mapping, so a loaded image is never empty */
}

static uint64_t symbol_address(const layout *l, size_t k) {
    const Elf64_Sym *s = &l->e.sym[k];
    if (l->x[k].ext) return (uint64_t)(uintptr_t)l->x[k].ext->addr;
    if (l->x[k].is_got) return (uint64_t)(uintptr_t)(l->base + l->got);
    return (uint64_t)(uintptr_t)(l->base + l->at[s->st_shndx]) + s->st_value;
}

static int fits_s32(uint64_t v) { return (int64_t)v >= INT32_MIN && (int64_t)v <= INT32_MAX; }

static int overflow(const layout *l, size_t target, const Elf64_Rela *r, char *err, size_t errlen) {
    char shown[64];
    pp__elf_printable(pp__elf_section_name(&l->e, target), shown, sizeof shown);
    snprintf(err, errlen, "refused: %s has a relocation (type %u at %s+0x%llx) whose value does not fit its 32 "
             "bits: build the lab file with -fPIC, as the kit does", WHO, (unsigned)ELF64_R_TYPE(r->r_info),
             shown, (unsigned long long)r->r_offset);
    return -1;
}

static int relocate(layout *l, char *err, size_t errlen) {
    uint64_t got = (uint64_t)(uintptr_t)(l->base + l->got);
    for (size_t i = 1; i < l->e.shnum; i++) {
        if (!applies(l, i)) continue;
        size_t n, target = l->e.sh[i].sh_info;
        const Elf64_Rela *r = pp__elf_relas(&l->e, i, &n);
        for (size_t q = 0; q < n; q++) {
            unsigned t = (unsigned)ELF64_R_TYPE(r[q].r_info);
            size_t k = ELF64_R_SYM(r[q].r_info);
            if (t == R_X86_64_NONE) continue;
            unsigned char *where = l->base + l->at[target] + r[q].r_offset;
            uint64_t P = (uint64_t)(uintptr_t)where, A = (uint64_t)r[q].r_addend, S = symbol_address(l, k);
            if (via_stub(&l->x[k], t)) S = (uint64_t)(uintptr_t)(l->base + l->stubs) + (l->x[k].stub - 1) * STUB;
            uint64_t G = got + (uint64_t)(l->x[k].got ? l->x[k].got - 1 : 0) * 8, v;
            int ok = 1;
            switch (t) {
            case R_X86_64_64: v = S + A; break;
            case R_X86_64_PC64: v = S + A - P; break;
            case R_X86_64_GOTOFF64: v = S + A - got; break;
            case R_X86_64_32: v = S + A, ok = v <= UINT32_MAX; break;
            case R_X86_64_32S: v = S + A, ok = fits_s32(v); break;
            case R_X86_64_PC32: case R_X86_64_PLT32: v = S + A - P, ok = fits_s32(v); break;
            case R_X86_64_GOTPC32: v = got + A - P, ok = fits_s32(v); break;
            default: v = G + A - P, ok = fits_s32(v); break; /* the GOTPCREL family, as scan_relocations saw */
            }
            if (!ok) return overflow(l, target, &r[q], err, errlen);
            if (pp__elf_reloc_width(t) == 8) {
                memcpy(where, &v, 8);
            } else {
                uint32_t v32 = (uint32_t)v;
                memcpy(where, &v32, 4);
            }
        }
    }
    return 0;
}

/* The GOT's slots, the stubs that jump through them, and the lookup table of the exported functions. */
static int fill(layout *l, char *err, size_t errlen) {
    uint64_t *got = (uint64_t *)(l->base + l->got);
    for (size_t k = 1; k < l->e.nsym; k++) {
        const symx *x = &l->x[k];
        if (x->got) got[x->got - 1] = symbol_address(l, k);
        if (!x->stub) continue;
        unsigned char *stub = l->base + l->stubs + (uint64_t)(x->stub - 1) * STUB;
        uint64_t rel = (uint64_t)(uintptr_t)&got[x->got - 1] - (uint64_t)(uintptr_t)(stub + 6);
        if (!fits_s32(rel)) {
            snprintf(err, errlen, "refused: the lab's image is too large for its call stubs to reach their slots");
            return -1;
        }
        int32_t rel32 = (int32_t)rel;
        memset(stub, 0xcc, STUB);
        stub[0] = 0xff, stub[1] = 0x25; /* jmp *rel32(%rip) */
        memcpy(stub + 2, &rel32, 4);
    }
    pp_image_fn *fns = (pp_image_fn *)(l->base + l->fns);
    char *names = (char *)(l->base + l->fn_names);
    size_t f = 0;
    for (size_t k = 1; k < l->e.nsym; k++) {
        if (!is_export(l, k)) continue;
        const char *name = pp__elf_symbol_name(&l->e, k);
        size_t len = strlen(name) + 1;
        memcpy(names, name, len);
        fns[f++] = (pp_image_fn){(void *)(uintptr_t)symbol_address(l, k), names};
        names += len;
    }
    return 0;
}

int pp__loader_load(pp_image *img, const void *obj, size_t len, const pp_loader_symbol *table, size_t ntable,
                    size_t max_image, char *err, size_t errlen) {
    memset(img, 0, sizeof *img);
    if (errlen) *err = 0;
    layout *l = calloc(1, sizeof *l);
    if (!l) return snprintf(err, errlen, "the lab's loader ran out of memory"), -1;
    int rc = -1;
    if (pp__elf_open(&l->e, obj, len, WHO, err, errlen)) goto out;
    if (!(l->x = calloc(l->e.nsym, sizeof *l->x))) {
        snprintf(err, errlen, "the lab's loader ran out of memory");
        goto out;
    }
    if (classify(l, table, ntable, err, errlen) || scan_relocations(l, err, errlen)) goto out;
    lay_out(l);
    if (l->end > max_image) {
        snprintf(err, errlen, "refused: the lab's code and data need %llu KiB; a lab file may have at most %zu KiB",
                 (unsigned long long)(l->end / 1024 + (l->end % 1024 != 0)), max_image / 1024);
        goto out;
    }
    void *m = mmap(NULL, (size_t)l->end, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        snprintf(err, errlen, "the lab's image of %llu KiB could not be mapped: %s",
                 (unsigned long long)(l->end / 1024), strerror(errno));
        goto out;
    }
    l->base = m;
    for (size_t i = 1; i < l->e.shnum; i++)
        if (PP_ELF_LOADED(l->kind[i]) && l->kind[i] != PP_ELF_BSS)
            memcpy(l->base + l->at[i], l->e.buf + l->e.sh[i].sh_offset, l->e.sh[i].sh_size);
    if (relocate(l, err, errlen) || fill(l, err, errlen)) goto unmap;
    if ((l->ro > 0 && mprotect(l->base, (size_t)l->ro, PROT_READ | PROT_EXEC)) ||
        (l->rw > l->ro && mprotect(l->base + l->ro, (size_t)(l->rw - l->ro), PROT_READ))) {
        snprintf(err, errlen, "the lab's image could not be protected: %s", strerror(errno));
        goto unmap;
    }
    *img = (pp_image){l->base, (size_t)l->end, l->base, (size_t)l->text_end, (const pp_image_fn *)(l->base + l->fns),
                      l->nfns};
    rc = 0;
    goto out;
unmap:
    munmap(l->base, (size_t)l->end);
out:
    free(l->x);
    free(l);
    return rc;
}

void *pp__loader_symbol(const pp_image *img, const char *name) {
    for (size_t i = 0; i < img->nfns; i++)
        if (!strcmp(img->fns[i].name, name)) return img->fns[i].addr;
    return NULL;
}

void pp__loader_unload(pp_image *img) {
    if (img->base) munmap(img->base, img->size);
    memset(img, 0, sizeof *img);
}
