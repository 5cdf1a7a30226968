/* util.h - arena, string buffer and growable arrays shared by every stage.
 *
 * Ownership rule: everything reachable from an Arena lives until the arena is
 * freed (one arena per compilation; IR nodes are never freed one by one).
 * A StrBuf owns its heap block; sb_free releases it. */
#ifndef LGEN_UTIL_H
#define LGEN_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define LG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define LG_NORETURN __attribute__((noreturn))
#else
#define LG_PRINTF(f, a)
#define LG_NORETURN
#endif

/* A double as an int64_t, saturated: 2^63 and above (INT64_MAX, which a
 * double cannot hold, reads as 2^63) give INT64_MAX, below -2^63
 * INT64_MIN, NaN 0 (a plain cast is undefined there, and on x86 gives
 * INT64_MIN for INT64_MAX). Integers beyond 2^53 have lost their low bits
 * before they reach here. */
static inline int64_t int64_of_double(double v) {
  if (v != v)
    return 0;
  if (v >= 9223372036854775808.0)
    return INT64_MAX;
  if (v < -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)v;
}

/* ---- arena.c ---- */
typedef struct Arena Arena;

Arena *arena_new(void);
void arena_free(Arena *arena);
void *arena_alloc(Arena *arena, size_t size);           /* zeroed */
char *arena_strndup(Arena *arena, const char *s, size_t n);
char *arena_strdup(Arena *arena, const char *s);
char *arena_printf(Arena *arena, const char *fmt, ...) LG_PRINTF(2, 3);

/* Growable array of pointers whose storage lives in an arena. */
typedef struct {
  void **items;
  int len;
  int cap;
} PtrVec;

void vec_push(Arena *arena, PtrVec *vec, void *item);

/* ---- strmap.c ----
 * A map from NUL-terminated strings to pointers, for lookups by name in
 * time independent of the number of names (a zeroed StrMap is empty). Keys
 * are not copied: they must live as long as the map (arena strings). Never
 * iterated: generated output must not depend on hash order. */
typedef struct {
  const char **keys;
  void **vals;
  size_t cap, len;
} StrMap;

void *strmap_get(const StrMap *m, const char *key); /* NULL if absent */
bool strmap_has(const StrMap *m, const char *key);
bool strmap_has_n(const StrMap *m, const char *key, size_t n); /* key: its first n bytes */
void *strmap_get_n(const StrMap *m, const char *key, size_t n);
void strmap_put(StrMap *m, Arena *arena, const char *key, void *val);

/* ---- strbuf.c ---- */
typedef struct {
  char *data; /* always NUL-terminated once anything was appended */
  size_t len;
  size_t cap;
} StrBuf;

void sb_putn(StrBuf *sb, const char *s, size_t n);
void sb_puts(StrBuf *sb, const char *s);
/* s's n bytes put in at byte `at` (<= len), what follows moved after them */
void sb_insert(StrBuf *sb, size_t at, const char *s, size_t n);
void sb_putc(StrBuf *sb, char c);
void sb_printf(StrBuf *sb, const char *fmt, ...) LG_PRINTF(2, 3);
/* s with every byte outside printable ASCII written as \xNN: text from an
 * input on one line of a terminal, a YAML comment or a listing, where a
 * newline or an escape sequence in a name must not act as one. */
void sb_put_printable(StrBuf *sb, const char *s);
void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap);
const char *sb_cstr(StrBuf *sb); /* "" for an empty buffer */
void sb_free(StrBuf *sb);

/* Out of memory is the one failure that is not reported through Diag:
 * the allocators print "lgen: error: out of memory" and exit(3). */
void *xmalloc(size_t size);
void *xrealloc(void *p, size_t size);
LG_NORETURN void out_of_memory(void);

#endif
