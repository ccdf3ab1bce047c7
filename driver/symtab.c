/* symtab.c: the table the driver hands its loader, every name of sandbox/proto/symbols.h with its address in
 * this (static) program. A lab object gets exactly these and nothing else of the driver; its allocations go
 * through memory.c's noting functions. The names the compiler calls on its own (the _FORTIFY_SOURCE checks,
 * libgcc's helpers, the scanf that -std=c11 selects) are not declared by the headers this file is built with,
 * so they are declared here, with their real prototypes. */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "loader.h"
#include "symbols.h"

int __isoc99_sscanf(const char *s, const char *fmt, ...);
void __stack_chk_fail(void);
int __printf_chk(int flag, const char *fmt, ...);
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
int __vprintf_chk(int flag, const char *fmt, va_list ap);
int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
int __sprintf_chk(char *s, int flag, size_t slen, const char *fmt, ...);
int __snprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, ...);
int __vsnprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, va_list ap);
int __vsprintf_chk(char *s, int flag, size_t slen, const char *fmt, va_list ap);
void *__memcpy_chk(void *d, const void *s, size_t n, size_t dlen);
void *__memmove_chk(void *d, const void *s, size_t n, size_t dlen);
void *__memset_chk(void *d, int c, size_t n, size_t dlen);
char *__strcpy_chk(char *d, const char *s, size_t dlen);
char *__strncpy_chk(char *d, const char *s, size_t n, size_t dlen);
char *__strcat_chk(char *d, const char *s, size_t dlen);
char *__strncat_chk(char *d, const char *s, size_t n, size_t dlen);
/* libgcc */
int __popcountdi2(long x);
double _Complex __muldc3(double a, double b, double c, double d);
float _Complex __mulsc3(float a, float b, float c, float d);
double _Complex __divdc3(double a, double b, double c, double d);
float _Complex __divsc3(float a, float b, float c, float d);
double __powidf2(double x, int n);
float __powisf2(float x, int n);
__int128 __divti3(__int128 a, __int128 b);
unsigned __int128 __udivti3(unsigned __int128 a, unsigned __int128 b);
__int128 __modti3(__int128 a, __int128 b);
unsigned __int128 __umodti3(unsigned __int128 a, unsigned __int128 b);

/* The lab's allocations are the driver's noting ones, and its exit waits for its calls (pp__drv_exit): each table
 * entry below takes its address from the name, and these names, for this table alone, mean the wrappers. */
#define malloc pp__drv_malloc
#define calloc pp__drv_calloc
#define realloc pp__drv_realloc
#define aligned_alloc pp__drv_aligned_alloc
#define posix_memalign pp__drv_posix_memalign
#define exit pp__drv_exit

#define PP_SYMTAB_FN(name) {#name, (void *)&name, 0},
#define PP_SYMTAB_DATA(name) {#name, (void *)&name, 1},
static const pp_loader_symbol table[] = {PP_SYMBOLS_API(PP_SYMTAB_FN) PP_SYMBOLS_LIBC(PP_SYMTAB_FN)
                                             PP_SYMBOLS_DATA(PP_SYMTAB_DATA)};

const pp_loader_symbol *pp__drv_symbols(size_t *n) {
    *n = sizeof table / sizeof *table;
    return table;
}
