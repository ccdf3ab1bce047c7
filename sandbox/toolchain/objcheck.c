/* objcheck.c: the build's check of a lab object (objcheck.h). The structural rules are elfrules.c's, the same
 * the loader applies; what is here is only this check's own: section names, the visible symbols, and the lab's
 * functions being there. */
#include "objcheck.h"

#include <stdio.h>
#include <string.h>

#include "elfrules.h"
#include "symbols.h"

#define PP_OBJCHECK_NAME(name) {#name, NULL, 0},
static const pp_loader_symbol known[] = {PP_SYMBOLS_API(PP_OBJCHECK_NAME) PP_SYMBOLS_LIBC(PP_OBJCHECK_NAME)
                                             PP_SYMBOLS_DATA(PP_OBJCHECK_NAME)};
#undef PP_OBJCHECK_NAME

#define TEXT_FLAGS (SHF_ALLOC | SHF_EXECINSTR)

/* The sections a C compiler emits for plain code, by name (a prefix ending in '*'), type and flags: the flags
 * in `need` must be set, those in `deny` must not. */
static const struct section_rule {
    const char *name;
    unsigned type;
    unsigned long long need, deny;
} rules[] = {
    {".text*", SHT_PROGBITS, TEXT_FLAGS, SHF_WRITE},
    {".data*", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, SHF_EXECINSTR},
    {".bss*", SHT_NOBITS, SHF_ALLOC | SHF_WRITE, SHF_EXECINSTR},
    {".rodata*", SHT_PROGBITS, SHF_ALLOC, SHF_WRITE | SHF_EXECINSTR},
    {".rela.*", SHT_RELA, 0, SHF_ALLOC},
    {".debug_*", SHT_PROGBITS, 0, SHF_ALLOC},
    {".comment", SHT_PROGBITS, 0, SHF_ALLOC},
    {".note.GNU-stack", SHT_PROGBITS, 0, ~0ull},
    {".note.gnu.property", SHT_NOTE, SHF_ALLOC, SHF_WRITE | SHF_EXECINSTR},
    {".eh_frame", SHT_PROGBITS, SHF_ALLOC, SHF_WRITE | SHF_EXECINSTR},
    {".eh_frame", SHT_X86_64_UNWIND, SHF_ALLOC, SHF_WRITE | SHF_EXECINSTR},
    {".symtab", SHT_SYMTAB, 0, SHF_ALLOC},
    {".strtab", SHT_STRTAB, 0, SHF_ALLOC},
    {".shstrtab", SHT_STRTAB, 0, SHF_ALLOC},
};

static int name_matches(const char *rule, const char *name) {
    size_t n = strlen(rule);
    return rule[n - 1] == '*' ? !strncmp(name, rule, n - 1) : !strcmp(name, rule);
}

/* 1 when a rule names section i and its type and flags are that rule's; *named: some rule had its name. */
static int section_allowed(const pp_elf *e, size_t i, int *named) {
    const Elf64_Shdr *s = &e->sh[i];
    const char *name = pp__elf_section_name(e, i);
    *named = 0;
    for (size_t r = 0; r < sizeof rules / sizeof *rules; r++) {
        if (!name_matches(rules[r].name, name)) continue;
        *named = 1;
        if (s->sh_type == rules[r].type && (s->sh_flags & rules[r].need) == rules[r].need &&
            !(s->sh_flags & rules[r].deny))
            return 1;
    }
    return 0;
}

static int sections(const pp_elf *e, const char *name, char *err, size_t errlen) {
    unsigned long long loaded = 0;
    for (size_t i = 1; i < e->shnum; i++) {
        int kind = pp__elf_section_kind(e, i, name, err, errlen), named;
        if (kind < 0) return -1;
        /* the image's size, near enough for the early message (the loader counts the GOT and stubs too); a
         * .bss's size is the file's word alone, so it is held to the cap before it is added, which cannot wrap
         * then (alignments are at most a page, pp__elf_section_kind) */
        if (PP_ELF_LOADED(kind) && (e->sh[i].sh_size > PP_LAB_MAX_IMAGE ||
                                    (loaded += e->sh[i].sh_size + e->sh[i].sh_addralign) > PP_LAB_MAX_IMAGE)) {
            snprintf(err, errlen, "refused: %s's code and data need more than the %zu KiB a lab file may have: "
                     "keep large arrays out of it (a schedule needs only a few handles per micro-batch)", name,
                     (size_t)PP_LAB_MAX_IMAGE >> 10);
            return -1;
        }
        if (section_allowed(e, i, &named)) continue;
        char shown[64];
        pp__elf_printable(pp__elf_section_name(e, i), shown, sizeof shown);
        if (named)
            snprintf(err, errlen, "refused: %s has section %s with type 0x%x and flags 0x%llx, which plain C never "
                     "gives it (remove the __attribute__((section)))", name, shown, (unsigned)e->sh[i].sh_type,
                     (unsigned long long)e->sh[i].sh_flags);
        else
            snprintf(err, errlen, "refused: %s puts code or data into section %s, which a lab file never needs "
                     "(remove the __attribute__((section)))", name, shown);
        return -1;
    }
    return 0;
}

/* The relocations of every loaded section, by the loader's rules. */
static int relocations(const pp_elf *e, const char *name, char *err, size_t errlen) {
    for (size_t i = 1; i < e->shnum; i++) {
        if (e->sh[i].sh_type != SHT_RELA) continue;
        long target = pp__elf_rela_target(e, i, name, err, errlen);
        if (target < 0) return -1;
        int kind = pp__elf_section_kind(e, (size_t)target, name, err, errlen);
        if (kind < 0) return -1;
        if (!PP_ELF_LOADED(kind)) continue;
        size_t n;
        pp__elf_relas(e, i, &n);
        for (size_t k = 0; k < n; k++)
            if (pp__elf_reloc_check(e, i, k, name, err, errlen)) return -1;
    }
    return 0;
}

static int kept(const char *s, const char *const *keep, int nkeep) {
    for (int q = 0; q < nkeep; q++)
        if (!strcmp(s, keep[q])) return q;
    return -1;
}

int pp__objcheck(const void *buf, size_t len, const char *name, const char *const *keep, int nkeep, int require,
                 char *err, size_t errlen) {
    pp_elf e;
    /* in the loader's order (sections, symbols, relocations), so both give the same first refusal */
    if (pp__elf_open(&e, buf, len, name, err, errlen) || sections(&e, name, err, errlen)) return -1;
    unsigned long long found = 0; /* one bit per function of keep */
    for (size_t k = 1; k < e.nsym; k++) {
        const pp_loader_symbol *ext;
        if (pp__elf_symbol_check(&e, k, known, sizeof known / sizeof *known, &ext, name, err, errlen)) return -1;
        const Elf64_Sym *s = &e.sym[k];
        if (ELF64_ST_BIND(s->st_info) == STB_LOCAL || s->st_shndx == SHN_UNDEF) continue;
        const char *sym = pp__elf_symbol_name(&e, k);
        int q = kept(sym, keep, nkeep);
        char shown[64];
        pp__elf_printable(sym, shown, sizeof shown);
        if (q < 0) {
            snprintf(err, errlen, "refused: %s leaves %s visible, which only the lab's functions may be (was the "
                     "object not narrowed with objcopy --keep-global-symbol?)", name, shown);
            return -1;
        }
        if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx >= e.shnum ||
            pp__elf_section_kind(&e, s->st_shndx, name, err, errlen) != PP_ELF_TEXT) {
            snprintf(err, errlen, "refused: %s defines %s, but not as a function: keep the declaration the lab "
                     "gives", name, shown);
            return -1;
        }
        if (q < 64) found |= 1ull << q;
    }
    if (relocations(&e, name, err, errlen)) return -1;
    for (int q = 0; require && q < nkeep && q < 64; q++)
        if (!(found >> q & 1)) {
            snprintf(err, errlen, "%s does not define %s(): keep the function name the lab gives (and do not make "
                     "it static)", name, keep[q]);
            return -1;
        }
    return 0;
}
