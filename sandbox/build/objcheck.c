/* objcheck.c: a careful reader of one ELF64 relocatable object (the host's byte order). Every offset and size is
 * checked against the file before it is used; a malformed object is refused like a forbidden one. */
#include "objcheck.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

/* Section names a compiler emits for plain C (prefixes: ".text.unlikely", ".rodata.str1.1", ".rela.text"...). */
static const char *const allowed_prefix[] = {".text", ".data", ".rodata", ".bss", ".tdata", ".tbss", ".rela.",
                                             ".rel.", ".debug_", ".note.GNU-stack", ".note.gnu.property",
                                             ".eh_frame", ".comment", ".symtab", ".strtab", ".shstrtab",
                                             ".symtab_shndx", ".group"};
/* Names that the linker turns into code run at start-up or exit. */
static const char *const startup_prefix[] = {".init_array", ".preinit_array", ".ctors", ".init"};
static const char *const exit_prefix[] = {".fini_array", ".dtors", ".fini"};

static int has_prefix(const char *s, const char *const *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!strncmp(s, list[i], strlen(list[i]))) return 1;
    return 0;
}

#define N(a) (sizeof a / sizeof *a)

/* A NUL-terminated string at offset off of a string table [base, base + size), or NULL. */
static const char *str_at(const unsigned char *buf, size_t base, size_t size, size_t off) {
    if (off >= size) return NULL;
    const char *s = (const char *)buf + base + off;
    return memchr(s, 0, size - off) ? s : NULL;
}

int pp__objcheck(const void *data, size_t len, const char *name, const char *const *req, int nreq, char *err,
                 size_t errlen) {
    const unsigned char *buf = data;
    const Elf64_Ehdr *eh = data;
    if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_type != ET_REL || eh->e_shentsize != sizeof(Elf64_Shdr)) {
        snprintf(err, errlen, "refused: the object compiled from %s is not a 64-bit ELF relocatable file", name);
        return -1;
    }
    size_t shnum = eh->e_shnum, shoff = eh->e_shoff;
    if (shoff > len || shnum > (len - shoff) / sizeof(Elf64_Shdr) || eh->e_shstrndx >= shnum) goto malformed;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(buf + shoff);
    for (size_t i = 0; i < shnum; i++)
        if (sh[i].sh_type != SHT_NOBITS && (sh[i].sh_offset > len || sh[i].sh_size > len - sh[i].sh_offset))
            goto malformed;
    const Elf64_Shdr *names = &sh[eh->e_shstrndx];
    int irelative = eh->e_machine == EM_X86_64 ? R_X86_64_IRELATIVE : eh->e_machine == EM_AARCH64 ? R_AARCH64_IRELATIVE : -1;
    for (size_t i = 1; i < shnum; i++) {
        const char *sn = str_at(buf, names->sh_offset, names->sh_size, sh[i].sh_name);
        if (!sn) goto malformed;
        unsigned t = sh[i].sh_type;
        if (t == SHT_INIT_ARRAY || t == SHT_PREINIT_ARRAY || has_prefix(sn, startup_prefix, N(startup_prefix))) {
            snprintf(err, errlen, "refused: %s has a constructor (__attribute__((constructor)) or section %s), code "
                     "that would run before the sandbox is locked: do that work in your step function", name, sn);
            return -1;
        }
        if (t == SHT_FINI_ARRAY || has_prefix(sn, exit_prefix, N(exit_prefix))) {
            snprintf(err, errlen, "refused: %s has a destructor (__attribute__((destructor)) or section %s), which "
                     "a lab file never needs: do that work in your step function", name, sn);
            return -1;
        }
        if (!has_prefix(sn, allowed_prefix, N(allowed_prefix))) {
            snprintf(err, errlen, "refused: %s puts code or data into section %s, which a lab file never needs "
                     "(remove the __attribute__((section)))", name, sn);
            return -1;
        }
        if (t == SHT_RELA && sh[i].sh_entsize == sizeof(Elf64_Rela)) {
            const Elf64_Rela *ra = (const Elf64_Rela *)(buf + sh[i].sh_offset);
            for (size_t k = 0; k < sh[i].sh_size / sizeof *ra; k++)
                if ((int)ELF64_R_TYPE(ra[k].r_info) == irelative) {
                    snprintf(err, errlen, "refused: %s carries an IRELATIVE relocation (an ifunc), code that would "
                             "run before the sandbox is locked", name);
                    return -1;
                }
        }
    }
    /* symbols: no ifunc resolvers; the required functions defined */
    int found[8] = {0};
    for (size_t i = 1; i < shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB) continue;
        if (sh[i].sh_entsize != sizeof(Elf64_Sym) || sh[i].sh_link >= shnum) goto malformed;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        const Elf64_Sym *sym = (const Elf64_Sym *)(buf + sh[i].sh_offset);
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
            const char *s = str_at(buf, strs->sh_offset, strs->sh_size, sym[k].st_name);
            if (!s) goto malformed;
            if (ELF64_ST_TYPE(sym[k].st_info) == STT_GNU_IFUNC) {
                snprintf(err, errlen, "refused: %s defines %s as an ifunc (__attribute__((ifunc))), whose resolver "
                         "would run before the sandbox is locked", name, s);
                return -1;
            }
            int global = ELF64_ST_BIND(sym[k].st_info) == STB_GLOBAL, defined = sym[k].st_shndx != SHN_UNDEF;
            for (int q = 0; q < nreq && q < (int)N(found); q++)
                if (global && defined && ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && !strcmp(s, req[q]))
                    found[q] = 1;
        }
    }
    for (int q = 0; q < nreq && q < (int)N(found); q++)
        if (!found[q]) {
            snprintf(err, errlen, "%s does not define %s(): keep the function name the lab gives (and do not make "
                     "it static)", name, req[q]);
            return -1;
        }
    return 0;
malformed:
    snprintf(err, errlen, "refused: the object compiled from %s is malformed", name);
    return -1;
}
