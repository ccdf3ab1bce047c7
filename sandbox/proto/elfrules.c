/* elfrules.c: the rules of elfrules.h. The object may be hostile or corrupt: every offset, size, index and
 * count is checked against the buffer before it is used, and arithmetic on values from the file is done so it
 * cannot wrap. */
#include "elfrules.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NAME_MAX_SHOWN 64

const char *pp__elf_printable(const char *s, char *out, size_t cap) {
    size_t n = 0;
    for (; s[n] && n + 1 < cap; n++) out[n] = s[n] >= 0x20 && s[n] < 0x7f ? s[n] : '?';
    if (cap) out[n < cap ? n : cap - 1] = 0;
    return out;
}

/* "refused: WHO " and the rest, one line; always -1, so a rule can return it. */
static int refuse(char *err, size_t errlen, const char *who, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int refuse(char *err, size_t errlen, const char *who, const char *fmt, ...) {
    if (!errlen) return -1;
    int n = snprintf(err, errlen, "refused: %s ", who);
    if (n < 0 || (size_t)n >= errlen) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static int malformed(char *err, size_t errlen, const char *who, const char *why) {
    return refuse(err, errlen, who, "is not a well-formed object (%s): rebuild it from the lab file", why);
}

/* A NUL-terminated string at offset off of the string table section s, or NULL. */
static const char *str_at(const pp_elf *e, const Elf64_Shdr *s, uint64_t off) {
    if (s->sh_type != SHT_STRTAB || off >= s->sh_size) return NULL;
    const char *p = (const char *)e->buf + s->sh_offset + off;
    return memchr(p, 0, s->sh_size - off) ? p : NULL;
}

const char *pp__elf_section_name(const pp_elf *e, size_t i) {
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)e->buf;
    return str_at(e, &e->sh[eh->e_shstrndx], e->sh[i].sh_name);
}

const char *pp__elf_symbol_name(const pp_elf *e, size_t k) {
    return str_at(e, &e->sh[e->sh[e->symtab].sh_link], e->sym[k].st_name);
}

int pp__elf_open(pp_elf *e, const void *buf, size_t len, const char *who, char *err, size_t errlen) {
    memset(e, 0, sizeof *e);
    const Elf64_Ehdr *eh = buf;
    if ((uintptr_t)buf % 8) /* the caller's mistake: every table is read in place */
        return refuse(err, errlen, who, "was handed over at an address not aligned to 8 bytes");
    if (!buf || len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_ident[EI_VERSION] != EV_CURRENT || eh->e_type != ET_REL ||
        eh->e_machine != EM_X86_64 || eh->e_version != EV_CURRENT)
        return refuse(err, errlen, who, "is not a 64-bit little-endian x86-64 ELF relocatable object (a .o file)");
    if (eh->e_ident[EI_OSABI] != ELFOSABI_SYSV && eh->e_ident[EI_OSABI] != ELFOSABI_GNU)
        return malformed(err, errlen, who, "an unknown OS/ABI");
    if (eh->e_shentsize != sizeof(Elf64_Shdr)) return malformed(err, errlen, who, "section headers of a foreign size");
    if (eh->e_shnum == 0 || eh->e_shstrndx == SHN_XINDEX)
        return malformed(err, errlen, who, "extended section numbering, which a lab object never needs");
    e->buf = buf, e->len = len, e->shnum = eh->e_shnum;
    if (e->shnum > PP_ELF_MAX_SECTIONS)
        return refuse(err, errlen, who, "has %zu sections; a lab object may have at most %d", e->shnum,
                      PP_ELF_MAX_SECTIONS);
    if (eh->e_shoff > len || e->shnum > (len - eh->e_shoff) / sizeof(Elf64_Shdr) || eh->e_shoff % 8)
        return malformed(err, errlen, who, "the section table lies outside the file");
    e->sh = (const Elf64_Shdr *)(e->buf + eh->e_shoff);
    if (eh->e_shstrndx == 0 || eh->e_shstrndx >= e->shnum)
        return malformed(err, errlen, who, "no table of section names");
    for (size_t i = 0; i < e->shnum; i++) {
        const Elf64_Shdr *s = &e->sh[i];
        if (s->sh_type != SHT_NOBITS && (s->sh_offset > len || s->sh_size > len - s->sh_offset))
            return malformed(err, errlen, who, "a section lies outside the file");
    }
    for (size_t i = 1; i < e->shnum; i++)
        if (!pp__elf_section_name(e, i)) return malformed(err, errlen, who, "a section name lies outside its table");
    for (size_t i = 1; i < e->shnum; i++) {
        const Elf64_Shdr *s = &e->sh[i];
        if (s->sh_type == SHT_SYMTAB_SHNDX)
            return malformed(err, errlen, who, "extended section numbering, which a lab object never needs");
        if (s->sh_type != SHT_SYMTAB) continue;
        if (e->symtab) return malformed(err, errlen, who, "two symbol tables");
        if (s->sh_entsize != sizeof(Elf64_Sym) || s->sh_size % sizeof(Elf64_Sym) || s->sh_offset % 8 ||
            s->sh_link == 0 || s->sh_link >= e->shnum || e->sh[s->sh_link].sh_type != SHT_STRTAB)
            return malformed(err, errlen, who, "a broken symbol table");
        e->symtab = i;
        e->sym = (const Elf64_Sym *)(e->buf + s->sh_offset);
        e->nsym = s->sh_size / sizeof(Elf64_Sym);
    }
    if (!e->symtab || e->nsym == 0) return malformed(err, errlen, who, "no symbol table");
    for (size_t k = 1; k < e->nsym; k++)
        if (!pp__elf_symbol_name(e, k)) return malformed(err, errlen, who, "a symbol name lies outside its table");
    return 0;
}

static int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

/* Section names that a linker turns into code run at start-up or at exit. */
static int startup_name(const char *n) {
    return starts(n, ".init") || starts(n, ".preinit_array") || starts(n, ".ctors");
}
static int exit_name(const char *n) { return starts(n, ".fini") || starts(n, ".dtors"); }

/* Flags a loaded section may carry besides write, alloc and exec: merging hints and bookkeeping. */
#define LOADED_FLAGS_OK                                                                                       \
    (SHF_WRITE | SHF_ALLOC | SHF_EXECINSTR | SHF_MERGE | SHF_STRINGS | SHF_INFO_LINK | SHF_LINK_ORDER |       \
     SHF_GNU_RETAIN)

int pp__elf_section_kind(const pp_elf *e, size_t i, const char *who, char *err, size_t errlen) {
    if (i == 0) return PP_ELF_SKIP;
    const Elf64_Shdr *s = &e->sh[i];
    char shown[NAME_MAX_SHOWN];
    const char *name = pp__elf_section_name(e, i);
    pp__elf_printable(name, shown, sizeof shown);
    uint64_t fl = s->sh_flags;
    unsigned t = s->sh_type;
    if (t == SHT_INIT_ARRAY || t == SHT_PREINIT_ARRAY || startup_name(name))
        return refuse(err, errlen, who, "has a constructor (__attribute__((constructor)) or section %s), code the "
                      "lab's loader never runs: do that work in your step function", shown);
    if (t == SHT_FINI_ARRAY || exit_name(name))
        return refuse(err, errlen, who, "has a destructor (__attribute__((destructor)) or section %s), code the "
                      "lab's loader never runs: do that work in your step function", shown);
    if (t == SHT_GROUP || (fl & SHF_GROUP))
        return refuse(err, errlen, who, "has a section group (a comdat: section %s), which a lab file never needs",
                      shown);
    if (fl & SHF_TLS)
        return refuse(err, errlen, who, "has thread-local data (section %s: _Thread_local or __thread): thread-local "
                      "storage is not supported; use a plain static variable", shown);
    if (!strcmp(name, ".note.GNU-stack") && (fl & SHF_EXECINSTR))
        return refuse(err, errlen, who, "asks for an executable stack (.note.GNU-stack), which a lab file never "
                      "needs: do not take the address of a nested function");
    if (t == SHT_REL) {
        if (s->sh_info < e->shnum && !(e->sh[s->sh_info].sh_flags & SHF_ALLOC) && !(fl & SHF_ALLOC))
            return PP_ELF_SKIP;
        return refuse(err, errlen, who, "carries SHT_REL relocations (section %s); the lab's loader takes only "
                      "SHT_RELA, which x86-64 compilers emit", shown);
    }
    if (t == SHT_RELA) {
        if (fl & SHF_ALLOC)
            return refuse(err, errlen, who, "has relocations in a loaded section (%s), which plain C never makes",
                          shown);
        return PP_ELF_RELA;
    }
    if (!(fl & SHF_ALLOC)) {
        if (t == SHT_PROGBITS || t == SHT_NOTE || t == SHT_NOBITS || t == SHT_STRTAB || t == SHT_SYMTAB)
            return PP_ELF_SKIP;
        return refuse(err, errlen, who, "has section %s of type 0x%x, which plain C never makes", shown, t);
    }
    if ((t == SHT_PROGBITS || t == SHT_X86_64_UNWIND) && !strcmp(name, ".eh_frame")) return PP_ELF_SKIP;
    if (t == SHT_NOTE) return PP_ELF_SKIP;
    if (t != SHT_PROGBITS && t != SHT_NOBITS)
        return refuse(err, errlen, who, "has section %s of type 0x%x, which plain C never makes", shown, t);
    if ((fl & SHF_WRITE) && (fl & SHF_EXECINSTR))
        return refuse(err, errlen, who, "has section %s both writable and executable, which a lab file never "
                      "needs", shown);
    if (fl & ~(uint64_t)LOADED_FLAGS_OK)
        return refuse(err, errlen, who, "has section %s with flags 0x%llx, which plain C never makes", shown,
                      (unsigned long long)fl);
    uint64_t a = s->sh_addralign;
    if (a & (a - 1))
        return malformed(err, errlen, who, "a section's alignment is not a power of two");
    if (a > PP_ELF_MAX_ALIGN)
        return refuse(err, errlen, who, "aligns section %s to %llu bytes; a lab file may align to at most %d (a "
                      "page)", shown, (unsigned long long)a, PP_ELF_MAX_ALIGN);
    if (t == SHT_NOBITS) {
        if ((fl & SHF_WRITE) && !(fl & SHF_EXECINSTR)) return PP_ELF_BSS;
        return refuse(err, errlen, who, "has section %s of zeroes that is not plain writable data, which plain C "
                      "never makes", shown);
    }
    return fl & SHF_EXECINSTR ? PP_ELF_TEXT : fl & SHF_WRITE ? PP_ELF_DATA : PP_ELF_RODATA;
}

int pp__elf_symbol_check(const pp_elf *e, size_t k, const pp_loader_symbol *table, size_t ntable,
                         const pp_loader_symbol **found, const char *who, char *err, size_t errlen) {
    const Elf64_Sym *s = &e->sym[k];
    unsigned bind = ELF64_ST_BIND(s->st_info), type = ELF64_ST_TYPE(s->st_info);
    char shown[NAME_MAX_SHOWN];
    const char *name = pp__elf_symbol_name(e, k);
    pp__elf_printable(name, shown, sizeof shown);
    *found = NULL;
    if (bind == STB_GNU_UNIQUE)
        return refuse(err, errlen, who, "makes %s a unique global symbol (gnu_unique_object), which a lab file "
                      "never needs", shown);
    if (type == STT_GNU_IFUNC)
        return refuse(err, errlen, who, "defines %s as an ifunc (__attribute__((ifunc))), which a lab file never "
                      "needs: call the function itself", shown);
    if (type == STT_TLS)
        return refuse(err, errlen, who, "has thread-local data (%s: _Thread_local or __thread): thread-local "
                      "storage is not supported; use a plain static variable", shown);
    if (s->st_shndx == SHN_COMMON || type == STT_COMMON)
        return refuse(err, errlen, who, "leaves %s a common symbol (a tentative definition under -fcommon): "
                      "initialise it (int x = 0;) or make it static", shown);
    if (bind == STB_WEAK)
        return refuse(err, errlen, who, s->st_shndx == SHN_UNDEF
                      ? "has a weak reference to %s (__attribute__((weak))), which a lab file never needs"
                      : "makes %s weak (__attribute__((weak))), which a lab file never needs: define it normally",
                      shown);
    if (bind != STB_LOCAL && bind != STB_GLOBAL)
        return refuse(err, errlen, who, "gives symbol %s the binding %u, which plain C never makes", shown, bind);
    if (type > STT_FILE)
        return refuse(err, errlen, who, "gives symbol %s the type %u, which plain C never makes", shown, type);
    if (type == STT_FILE && bind != STB_LOCAL) return malformed(err, errlen, who, "a global file symbol");
    if (s->st_shndx == SHN_ABS) {
        if (type == STT_FILE) return 0;
        return refuse(err, errlen, who, "defines %s as an absolute symbol, which plain C never makes", shown);
    }
    if (s->st_shndx == SHN_XINDEX)
        return malformed(err, errlen, who, "extended section numbering, which a lab object never needs");
    if (s->st_shndx >= SHN_LORESERVE || (s->st_shndx != SHN_UNDEF && s->st_shndx >= e->shnum))
        return malformed(err, errlen, who, "a symbol of a section that does not exist");
    if (s->st_shndx != SHN_UNDEF) {
        if (s->st_value > e->sh[s->st_shndx].sh_size)
            return malformed(err, errlen, who, "a symbol lies outside its section");
        return 0;
    }
    if (bind != STB_GLOBAL || type == STT_SECTION || type == STT_FILE)
        return malformed(err, errlen, who, "an undefined local symbol");
    if (!strcmp(name, "_GLOBAL_OFFSET_TABLE_")) return 0;
    for (size_t q = 0; q < ntable; q++)
        if (!strcmp(name, table[q].name)) {
            *found = &table[q];
            return 0;
        }
    pp__elf_refuse_unknown(e, k, who, err, errlen);
    return -1;
}

long pp__elf_rela_target(const pp_elf *e, size_t i, const char *who, char *err, size_t errlen) {
    const Elf64_Shdr *s = &e->sh[i];
    if (s->sh_link != e->symtab || s->sh_entsize != sizeof(Elf64_Rela) || s->sh_size % sizeof(Elf64_Rela) ||
        s->sh_offset % 8)
        return malformed(err, errlen, who, "a broken relocation section");
    if (s->sh_info == 0 || s->sh_info >= e->shnum || s->sh_info == i)
        return malformed(err, errlen, who, "relocations for a section that does not exist");
    return (long)s->sh_info;
}

const Elf64_Rela *pp__elf_relas(const pp_elf *e, size_t i, size_t *n) {
    *n = e->sh[i].sh_size / sizeof(Elf64_Rela);
    return (const Elf64_Rela *)(e->buf + e->sh[i].sh_offset);
}

int pp__elf_reloc_width(unsigned type) {
    switch (type) {
    case R_X86_64_NONE: return 0;
    case R_X86_64_64: case R_X86_64_PC64: case R_X86_64_GOTOFF64: return 8;
    case R_X86_64_PC32: case R_X86_64_PLT32: case R_X86_64_32: case R_X86_64_32S: case R_X86_64_GOTPCREL:
    case R_X86_64_GOTPCRELX: case R_X86_64_REX_GOTPCRELX: case R_X86_64_GOTPC32: return 4;
    default: return -1;
    }
}

int pp__elf_reloc_check(const pp_elf *e, size_t i, size_t k, const char *who, char *err, size_t errlen) {
    size_t n;
    const Elf64_Rela *r = &pp__elf_relas(e, i, &n)[k];
    const Elf64_Shdr *target = &e->sh[e->sh[i].sh_info];
    char shown[NAME_MAX_SHOWN];
    pp__elf_printable(pp__elf_section_name(e, e->sh[i].sh_info), shown, sizeof shown);
    unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
    uint64_t sym = ELF64_R_SYM(r->r_info);
    if (type == R_X86_64_IRELATIVE)
        return refuse(err, errlen, who, "carries an IRELATIVE relocation (an ifunc), which a lab file never needs");
    int width = pp__elf_reloc_width(type);
    if (width < 0)
        return refuse(err, errlen, who, "carries a relocation of type %u (in section %s), which the lab's loader "
                      "does not handle", type, shown);
    if (target->sh_type == SHT_NOBITS)
        return malformed(err, errlen, who, "relocations for a section of zeroes");
    if (r->r_offset > target->sh_size || (uint64_t)width > target->sh_size - r->r_offset)
        return malformed(err, errlen, who, "a relocation outside its section");
    if (sym >= e->nsym) return malformed(err, errlen, who, "a relocation of a symbol that does not exist");
    const Elf64_Sym *s = &e->sym[sym];
    if (sym == 0) return type == R_X86_64_NONE ? 0 : malformed(err, errlen, who, "a relocation of no symbol");
    if (ELF64_ST_TYPE(s->st_info) == STT_FILE || s->st_shndx == SHN_ABS)
        return malformed(err, errlen, who, "a relocation of a file or absolute symbol");
    if (s->st_shndx == SHN_UNDEF || s->st_shndx >= e->shnum) return 0; /* the symbol check judges these */
    char scratch[8];
    int kind = pp__elf_section_kind(e, s->st_shndx, who, scratch, sizeof scratch);
    if (!PP_ELF_LOADED(kind)) {
        char sym_shown[NAME_MAX_SHOWN], sec_shown[NAME_MAX_SHOWN];
        pp__elf_printable(pp__elf_symbol_name(e, sym), sym_shown, sizeof sym_shown);
        pp__elf_printable(pp__elf_section_name(e, s->st_shndx), sec_shown, sizeof sec_shown);
        return refuse(err, errlen, who, "refers from section %s to %s in section %s, which is never loaded", shown,
                      *sym_shown ? sym_shown : "a symbol", sec_shown);
    }
    return 0;
}

void pp__elf_refuse_unknown(const pp_elf *e, size_t k, const char *who, char *err, size_t errlen) {
    int called = 0;
    for (size_t i = 1; i < e->shnum && !called; i++) {
        if (e->sh[i].sh_type != SHT_RELA || pp__elf_rela_target(e, i, who, NULL, 0) < 0) continue;
        size_t n;
        const Elf64_Rela *r = pp__elf_relas(e, i, &n);
        for (size_t q = 0; q < n && !called; q++)
            called = ELF64_R_SYM(r[q].r_info) == k && ELF64_R_TYPE(r[q].r_info) == R_X86_64_PLT32;
    }
    char shown[NAME_MAX_SHOWN];
    pp__elf_printable(pp__elf_symbol_name(e, k), shown, sizeof shown);
    refuse(err, errlen, who, called ? "calls %s(), which a lab file may not use: it may use pp.h and the C library "
                                      "functions listed in docs/design.md"
                                    : "uses %s, which a lab file may not use: it may use pp.h, stdout, stderr and "
                                      "the C library functions listed in docs/design.md",
           shown);
}
