/* chunk.c - the chunk-buffer pass (loops.h: loops_shift_arrays).
 *
 * A softmax row-fused with the op before it and the op after it
 * (schedule/rows.c) can keep the tensor they share in a buffer per thread
 * that holds only the running chunk's rows (c_ext.c call_softmax). The
 * members' nests are built as if the tensor held every row; this pass then
 * moves each element they read or write, A[i], to A[i - shift], the same
 * element of the chunk buffer. Doing it on the tree keeps the knowledge
 * of chunk buffers out of the nest builder and its access spelling. */
#include "loops/loops_internal.h"

#include <string.h>

typedef struct {
  Arena *arena;
  const char *const *arrays;
  int narrays;
  const char *shift;
} Shift;

static bool shifted(const Shift *s, const char *name, size_t len) {
  for (int i = 0; i < s->narrays; i++)
    if (strlen(s->arrays[i]) == len && memcmp(s->arrays[i], name, len) == 0)
      return true;
  return false;
}

/* The ']' that closes the subscript opened just before `p`, or NULL. */
static const char *subscript_end(const char *p) {
  int depth = 1;
  for (; *p; p++) {
    depth += *p == '[' ? 1 : *p == ']' ? -1 : 0;
    if (depth == 0)
      return p;
  }
  return NULL;
}

static const char *shift_text(void *ctx, const char *text) {
  const Shift *s = ctx;
  StrBuf sb = {0};
  size_t len;
  const char *p = text, *done = text;
  for (const char *id; (id = loops_next_ident(text, &p, &len));) {
    if (*p != '[' || !shifted(s, id, len))
      continue;
    const char *end = subscript_end(p + 1);
    if (!end)
      break;
    sb_putn(&sb, done, (size_t)(end - done));
    sb_printf(&sb, " - %s", s->shift);
    done = end;
  }
  if (done == text) {
    sb_free(&sb);
    return text;
  }
  sb_puts(&sb, done);
  const char *r = arena_strdup(s->arena, sb_cstr(&sb));
  sb_free(&sb);
  return r;
}

void loops_shift_arrays(Arena *arena, LoopList *tree, const char *const *arrays, int narrays, const char *shift) {
  Shift s = {arena, arrays, narrays, shift};
  for (LoopNode *n = tree->first; n && narrays > 0; n = n->next)
    loops_map_text(n, shift_text, &s);
}
