/* fill.c - the fill pass (loops.h: loops_fill_elements).
 *
 * A prologue (schedule/prologue.c) is a pointwise op computed inside its
 * consumer's pack copy: its result is never stored, each element is
 * computed as the copy moves it into the packed buffer. The pack copy is
 * built plainly, as if it read the result from memory, and marks its
 * store with the element it reads and its coordinates; this pass puts
 * the prologue's payload at those coordinates (its caller's fill) in the
 * read's place. The nest builder knows nothing of prologues. */
#include "loops/loops_internal.h"

#include <string.h>

typedef struct {
  Arena *arena;
  const char *source;
  LoopFill fill;
  void *ctx;
} Fill;

/* text with its first occurrence of `part` replaced by `by`. */
static const char *replace_first(Arena *arena, const char *text, const char *part, const char *by) {
  const char *at = strstr(text, part);
  if (!at)
    return text;
  return arena_printf(arena, "%.*s%s%s", (int)(at - text), text, by, at + strlen(part));
}

static void fill_list(const Fill *f, LoopList *list) {
  for (LoopNode *n = list->first; n; n = n->next) {
    if (n->kind == LN_STORE && n->source && n->element && strcmp(n->source, f->source) == 0) {
      const char *value = f->fill(f->ctx, n->coords, n->ncoords);
      n->value = replace_first(f->arena, n->value, n->element, value);
      n->source = n->element = NULL;
      n->coords = NULL;
      n->ncoords = 0;
    }
    fill_list(f, &n->body);
    fill_list(f, &n->els);
  }
}

void loops_fill_elements(Arena *arena, LoopList *tree, const char *source, LoopFill fill, void *ctx) {
  Fill f = {arena, source, fill, ctx};
  fill_list(&f, tree);
}
