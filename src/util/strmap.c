/* strmap.c - string-keyed hash map in an arena.
 *
 * Open addressing with linear probing, FNV-1a hashes, grown at half full.
 * Used only for lookups: nothing may iterate it (its order depends on the
 * hash), so what the generator writes never depends on it. */
#include "util.h"

#include <string.h>

static uint64_t hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 1099511628211u;
  return h;
}

/* The slot of key (its first n bytes), or the empty slot where it would go. */
static size_t slot_n(const StrMap *m, const char *key, size_t n) {
  size_t mask = m->cap - 1, i = (size_t)hash(key, n) & mask;
  while (m->keys[i] && !(strncmp(m->keys[i], key, n) == 0 && m->keys[i][n] == '\0'))
    i = (i + 1) & mask;
  return i;
}

static size_t slot(const StrMap *m, const char *key) { return slot_n(m, key, strlen(key)); }

bool strmap_has_n(const StrMap *m, const char *key, size_t n) {
  return m->len > 0 && m->keys[slot_n(m, key, n)] != NULL;
}

void *strmap_get(const StrMap *m, const char *key) {
  if (m->len == 0)
    return NULL;
  size_t i = slot(m, key);
  return m->keys[i] ? m->vals[i] : NULL;
}

void *strmap_get_n(const StrMap *m, const char *key, size_t n) {
  if (m->len == 0)
    return NULL;
  size_t i = slot_n(m, key, n);
  return m->keys[i] ? m->vals[i] : NULL;
}

bool strmap_has(const StrMap *m, const char *key) {
  return m->len > 0 && m->keys[slot(m, key)] != NULL;
}

static void grow(StrMap *m, Arena *arena) {
  StrMap bigger = {0};
  bigger.cap = m->cap ? m->cap * 2 : 16;
  bigger.keys = arena_alloc(arena, bigger.cap * sizeof *bigger.keys);
  bigger.vals = arena_alloc(arena, bigger.cap * sizeof *bigger.vals);
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i]) {
      size_t j = slot(&bigger, m->keys[i]);
      bigger.keys[j] = m->keys[i];
      bigger.vals[j] = m->vals[i];
    }
  bigger.len = m->len;
  *m = bigger; /* the old arrays stay in the arena: at most as much again */
}

void strmap_put(StrMap *m, Arena *arena, const char *key, void *val) {
  if ((m->len + 1) * 2 > m->cap)
    grow(m, arena);
  size_t i = slot(m, key);
  if (!m->keys[i]) {
    m->keys[i] = key;
    m->len++;
  }
  m->vals[i] = val;
}
