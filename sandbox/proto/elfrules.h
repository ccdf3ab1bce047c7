/* elfrules.h: what a lab object may hold, as rules on its ELF structure, shared by the two readers of that
 * object: the build's object check (sandbox/toolchain/objcheck.c), which runs in the grader and gives the early,
 * friendly refusal, and the schedule driver's loader (driver/loader.c), which runs in the jail and is
 * the boundary. One copy of each rule, so the two can only differ where they mean to (the check also holds
 * section names to what a C compiler emits, and the lab's functions to the only visible symbols).
 *
 * Every function here reads only bytes it has checked lie inside the object, and writes a refusal as one line,
 * "refused: WHO ...", where WHO names the object for the reader ("02-gpipe/gpipe.c", "the lab file"). */
#ifndef PP_ELFRULES_H
#define PP_ELFRULES_H

#include <elf.h>
#include <stddef.h>

/* One name a lab object may leave undefined, and what it resolves to (NULL for a check that only needs the
 * names). data: an object (stdout), reached through the GOT, never through a call stub. */
typedef struct pp_loader_symbol {
    const char *name;
    void *addr;
    int data;
} pp_loader_symbol;

/* The most sections an object may have: plain C makes a few dozen. */
#define PP_ELF_MAX_SECTIONS 1024
/* The largest alignment a section may ask for: the image's regions start on pages. */
#define PP_ELF_MAX_ALIGN 4096

/* An object whose structure pp__elf_open checked: every section (but NOBITS ones) lies inside the buffer,
 * every section and symbol name is a NUL-terminated string inside its table, and there is exactly one symbol
 * table. Pointers point into the caller's buffer. */
typedef struct pp_elf {
    const unsigned char *buf;
    size_t len;
    const Elf64_Shdr *sh;
    size_t shnum;
    const Elf64_Sym *sym;
    size_t nsym;
    size_t symtab; /* the index of the symbol table's section */
} pp_elf;

/* What a section is to the loader. */
enum pp_elf_kind {
    PP_ELF_SKIP,   /* not loaded: debug info, notes, .eh_frame, .comment, string tables, non-alloc relocations */
    PP_ELF_TEXT,   /* loaded, executable */
    PP_ELF_RODATA, /* loaded, read-only */
    PP_ELF_DATA,   /* loaded, writable, from the file */
    PP_ELF_BSS,    /* loaded, writable, zero */
    PP_ELF_RELA,   /* SHT_RELA: its relocations matter when the section it applies to is loaded */
};
#define PP_ELF_LOADED(kind) ((kind) >= PP_ELF_TEXT && (kind) <= PP_ELF_BSS)

/* Checks the ELF header, the section table and the symbol table of the len bytes at buf (ELF64, little-endian,
 * ET_REL, x86-64, no extended numbering; buf 8-byte aligned, since the tables are read in place) and fills *e.
 * Returns 0, or -1 with the refusal in err. */
int pp__elf_open(pp_elf *e, const void *buf, size_t len, const char *who, char *err, size_t errlen);

/* The name of section i (0 < i < e->shnum) or of symbol k (0 < k < e->nsym), the entries pp__elf_open checked;
 * never NULL once it succeeded (index 0, the null entry ELF reserves, is never asked for). */
const char *pp__elf_section_name(const pp_elf *e, size_t i);
const char *pp__elf_symbol_name(const pp_elf *e, size_t k);

/* The kind of section i, by its type, flags and name: constructors, destructors, groups, thread-local data,
 * writable code, an executable stack, over-aligned or unknown loaded sections and SHT_REL for a loaded section
 * are refused. Returns the kind, or -1 with the refusal in err. */
int pp__elf_section_kind(const pp_elf *e, size_t i, const char *who, char *err, size_t errlen);

/* Checks symbol k (0 < k < e->nsym): binding local or global (weak and unique refused), type none, object,
 * function, section or file (common, TLS and ifunc refused), defined in a section of the object (absolute only
 * for a file symbol, value inside its section) or undefined and global. An undefined one other than
 * _GLOBAL_OFFSET_TABLE_ must be in table (ntable entries): *found is set to its entry (NULL for
 * _GLOBAL_OFFSET_TABLE_ and for a defined symbol). Returns 0, or -1 with the refusal in err. */
int pp__elf_symbol_check(const pp_elf *e, size_t k, const pp_loader_symbol *table, size_t ntable,
                         const pp_loader_symbol **found, const char *who, char *err, size_t errlen);

/* Checks relocation section i (of kind PP_ELF_RELA): it uses the symbol table, its entries are whole
 * Elf64_Rela, and it applies to a section of the object, whose index it returns (the caller decides whether
 * that section is loaded). Returns -1 with the refusal in err. */
long pp__elf_rela_target(const pp_elf *e, size_t i, const char *who, char *err, size_t errlen);

/* The bytes a relocation of this x86-64 type writes (0 for R_X86_64_NONE), or -1 for a type the loader does
 * not handle. */
int pp__elf_reloc_width(unsigned type);

/* Checks relocation k of section i (whose target section is loaded): a type the loader handles, a symbol of
 * the table, and a field that lies inside the target section. Returns 0, or -1 with the refusal in err. */
int pp__elf_reloc_check(const pp_elf *e, size_t i, size_t k, const char *who, char *err, size_t errlen);

/* The relocation entries of section i, which pp__elf_rela_target accepted, and how many there are. */
const Elf64_Rela *pp__elf_relas(const pp_elf *e, size_t i, size_t *n);

/* The refusal for an undefined symbol the table lacks: "calls NAME()" when the object calls it (a PLT32
 * relocation), "uses NAME" otherwise. */
void pp__elf_refuse_unknown(const pp_elf *e, size_t k, const char *who, char *err, size_t errlen);

/* s, cut to fit out (cap bytes) and with every byte outside printable ASCII written as '?', so a name from
 * the object can never break a one-line message. Returns out. */
const char *pp__elf_printable(const char *s, char *out, size_t cap);

#endif /* PP_ELFRULES_H */
