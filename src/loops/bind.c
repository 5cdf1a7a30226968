/* bind.c - the bind pass (loops.h: loops_bind_dims).
 *
 * Row fusion (schedule/rows.c) runs several ops in one loop nest over
 * their shared leading dims, the rows. Each member is built as it would
 * run alone, with its own loop over every row dim; this pass then binds
 * those dims to the group's row: a loop over a bound dim goes, its body
 * takes its place, and its variable becomes the group's. Binding one
 * point of a parallel dim is legal wherever its loop stands, so the nest
 * builder needs to know nothing of groups: the builder marks each loop
 * that runs over a dim one point at a time (LoopNode.dim), and the caller
 * says which dims are bound. */
#include "loops/loops_internal.h"

typedef struct {
  Arena *arena;
  const char *const *values;
  int nvalues;
} Bind;

static const char *value_of(const Bind *b, const LoopNode *n) {
  if (n->kind != LN_FOR || n->dim <= 0 || n->dim > b->nvalues)
    return NULL;
  return b->values[n->dim - 1];
}

static void bind_list(const Bind *b, LoopList *list) {
  LoopNode *prev = NULL;
  for (LoopNode *n = list->first; n;) {
    const char *value = value_of(b, n);
    if (!value) {
      bind_list(b, &n->body);
      bind_list(b, &n->els);
      prev = n;
      n = n->next;
      continue;
    }
    for (LoopNode *c = n->body.first; c; c = c->next)
      loops_rename_node(b->arena, c, n->var, value);
    /* the body in the loop's place; its nodes are walked next (a bound
     * loop may hold another) */
    LoopNode *next = n->next, *first = n->body.first ? n->body.first : next;
    if (n->body.first) {
      n->body.last->next = next;
      if (list->last == n)
        list->last = n->body.last;
    } else if (list->last == n) {
      list->last = prev;
    }
    if (prev)
      prev->next = first;
    else
      list->first = first;
    n = first;
  }
}

void loops_bind_dims(Arena *arena, LoopList *tree, const char *const *values, int nvalues) {
  Bind b = {arena, values, nvalues};
  bind_list(&b, tree);
}
