/* arena.c - bump allocator for everything a compilation builds. */
#include "util.h"
#include "util/fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ARENA_CHUNK = 64 * 1024 };

/* C99 has no MaxAlign: this union is at least as strictly aligned. */
typedef union {
  long double ld;
  void *p;
  int64_t i;
  double d;
} MaxAlign;

typedef struct Chunk {
  struct Chunk *next;
  size_t used;
  size_t size;
  MaxAlign data[]; /* keeps every allocation maximally aligned */
} Chunk;

struct Arena {
  Chunk *head;
};

Arena *arena_new(void) {
  Arena *arena = xmalloc(sizeof *arena);
  arena->head = NULL;
  return arena;
}

void arena_free(Arena *arena) {
  if (!arena)
    return;
  Chunk *c = arena->head;
  while (c) {
    Chunk *next = c->next;
    free(c);
    c = next;
  }
  free(arena);
}

/* Room for size bytes, maximally aligned, not zeroed. */
static void *arena_take(Arena *arena, size_t size) {
  size_t align = sizeof(MaxAlign);
  size = (size + align - 1) / align * align;
  if (size == 0)
    size = align;
  Chunk *c = arena->head;
  if (!c || c->size - c->used < size) {
    size_t chunk = size > ARENA_CHUNK ? size : ARENA_CHUNK;
    c = xmalloc(sizeof(Chunk) + chunk);
    c->size = chunk;
    c->used = 0;
    c->next = arena->head;
    arena->head = c;
  }
  void *p = (char *)c->data + c->used;
  c->used += size;
  return p;
}

void *arena_alloc(Arena *arena, size_t size) {
  void *p = arena_take(arena, size);
  memset(p, 0, size);
  return p;
}

char *arena_strndup(Arena *arena, const char *s, size_t n) {
  char *p = arena_take(arena, n + 1);
  if (n > 0) /* an empty protobuf string's data may be a null pointer */
    memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *arena_strdup(Arena *arena, const char *s) {
  return arena_strndup(arena, s, strlen(s));
}

/* Formats straight into the current chunk when the text fits there (most
 * do: the emitter's expressions are short), else measures it and takes
 * room: no heap buffer in between, which generation at 100k nodes felt. */
char *arena_printf(Arena *arena, const char *fmt, ...) {
  va_list ap;
  Chunk *c = arena->head;
  int n;
  if (c && c->size - c->used > 1) {
    char *at = (char *)c->data + c->used;
    size_t room = c->size - c->used;
    va_start(ap, fmt);
    n = vsnprintf(at, room, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < room) {
      /* room is a multiple of the alignment, so the text's room is taken
       * from c, at `at`; the copy is for a chunk that would break that */
      char *p = arena_take(arena, (size_t)n + 1);
      if (p != at)
        memcpy(p, at, (size_t)n + 1);
      return p;
    }
  } else {
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
  }
  if (n < 0) /* an encoding error: sb_vprintf prints nothing either */
    return arena_strdup(arena, "");
  char *p = arena_take(arena, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

void vec_push(Arena *arena, PtrVec *vec, void *item) {
  if (vec->len == vec->cap) {
    int cap = vec->cap ? vec->cap * 2 : 8;
    void **items = arena_alloc(arena, sizeof(void *) * (size_t)cap);
    if (vec->len)
      memcpy(items, vec->items, sizeof(void *) * (size_t)vec->len);
    vec->items = items;
    vec->cap = cap;
  }
  vec->items[vec->len++] = item;
}

void out_of_memory(void) {
  fputs("lgen: error: out of memory\n", stderr);
  exit(3);
}

void *xmalloc(size_t size) {
  void *p = fault_inject() ? NULL : malloc(size ? size : 1);
  if (!p)
    out_of_memory();
  return p;
}

void *xrealloc(void *p, size_t size) {
  p = fault_inject() ? NULL : realloc(p, size ? size : 1);
  if (!p)
    out_of_memory();
  return p;
}

#ifdef LGEN_FAULT_INJECTION
void *fault_malloc(size_t size) { return fault_inject() ? NULL : malloc(size); }
#endif
