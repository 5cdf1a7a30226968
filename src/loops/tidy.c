/* tidy.c - the names pass (loops.h): a local that got a numbered suffix
 * (k_2, t2_3) only because its plain name was taken somewhere else in the
 * function gets the plain name back where no clash forces the suffix.
 *
 * The builders claim names from one table per function, and a name stays
 * taken while the scope that claimed it is open: a tensor `k` of a model
 * graph, declared in one op's block, made every loop over a dim k of every
 * other op k_2, and two sibling loops of one op t2_2 and t2_3. Here a
 * declaration (a let, an array, a buffer, a loop variable) whose name the
 * namer says is a suffixed form of a plain one is renamed to the plain one
 * when
 *  - no parameter and no declaration of an enclosing scope has that name
 *    (no shadowing), and
 *  - the name is not an identifier anywhere in the new name's scope (the
 *    declaration itself, then the rest of its list, or a loop's header and
 *    body): nothing there can mean something else by it.
 * C text is renamed token by token (not inside string and character
 * literals, not member names). A register block's LN_PROC keeps what it
 * reads of the enclosing scope under the same names, so loops_outline
 * finds the same captures after the pass. */
#include "loops/loops_internal.h"

#include <string.h>

typedef struct {
  Arena *arena;
  LoopPlainName plain;
  void *ctx;
  const char **scope; /* the names in scope, outermost first */
  int n, cap;
} Tidy;

static void push(Tidy *t, const char *name) {
  if (t->n == t->cap) {
    int cap = t->cap ? t->cap * 2 : 64;
    const char **grown = arena_alloc(t->arena, sizeof *grown * (size_t)cap);
    if (t->n)
      memcpy(grown, t->scope, sizeof *grown * (size_t)t->n);
    t->scope = grown;
    t->cap = cap;
  }
  t->scope[t->n++] = name;
}

static bool in_scope(const Tidy *t, const char *name) {
  for (int i = t->n - 1; i >= 0; i--)
    if (strcmp(t->scope[i], name) == 0)
      return true;
  return false;
}

static bool list_mentions(const LoopList *list, const LoopNode *from, const char *name);

static bool node_mentions(const LoopNode *n, const char *name) {
  const char *const *texts[] = LOOPS_NODE_TEXTS(n);
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
    if (loops_text_mentions(*texts[i], name))
      return true;
  for (int i = 0; i < n->nargs; i++)
    if (loops_text_mentions(n->args[i], name))
      return true;
  for (int i = 0; i < n->ncoords; i++)
    if (loops_text_mentions(n->coords[i], name))
      return true;
  for (int i = 0; i < n->nparams; i++)
    if (loops_text_mentions(n->ptypes[i], name) || loops_text_mentions(n->pnames[i], name))
      return true;
  return list_mentions(&n->body, n->body.first, name) || list_mentions(&n->els, n->els.first, name);
}

/* Whether `name` is an identifier of the nodes of list from `from` on. */
static bool list_mentions(const LoopList *list, const LoopNode *from, const char *name) {
  (void)list;
  for (const LoopNode *n = from; n; n = n->next)
    if (node_mentions(n, name))
      return true;
  return false;
}

static void rename_list(Arena *arena, LoopNode *from, const char *old, const char *to) {
  for (LoopNode *n = from; n; n = n->next)
    loops_rename_node(arena, n, old, to);
}

/* The plain name a declaration of `name` can have in the scope of n (n and
 * what follows it in its list, or a loop's own header and body), or NULL. */
static const char *plain_for(Tidy *t, const LoopNode *n, const char *name, bool loop) {
  const char *plain = t->plain(t->ctx, name);
  if (!plain || strcmp(plain, name) == 0 || in_scope(t, plain))
    return NULL;
  if (loop ? node_mentions(n, plain) : list_mentions(NULL, n, plain))
    return NULL;
  return plain;
}

static void tidy_list(Tidy *t, LoopList *list);

static void tidy_node(Tidy *t, LoopNode *n) {
  int mark = t->n;
  switch (n->kind) {
  case LN_FOR: {
    const char *plain = plain_for(t, n, n->var, true);
    if (plain)
      loops_rename_node(t->arena, n, n->var, plain);
    push(t, n->var);
    tidy_list(t, &n->body);
    break;
  }
  case LN_PROC:
    for (int i = 0; i < n->nparams; i++)
      push(t, n->pnames[i]);
    tidy_list(t, &n->body);
    break;
  default:
    tidy_list(t, &n->body);
    t->n = mark;
    tidy_list(t, &n->els);
    break;
  }
  t->n = mark;
}

static void tidy_list(Tidy *t, LoopList *list) {
  int mark = t->n;
  for (LoopNode *n = list->first; n; n = n->next) {
    if (n->kind == LN_LET || n->kind == LN_ARRAY || n->kind == LN_ALLOC) {
      const char *names[2] = {n->name, n->kind == LN_ALLOC && n->alloc == ALLOC_HEAP ? n->raw : NULL};
      for (int i = 0; i < 2; i++) {
        if (!names[i])
          continue;
        const char *plain = plain_for(t, n, names[i], false);
        if (plain)
          rename_list(t->arena, n, names[i], plain);
        push(t, i == 0 ? n->name : n->raw);
      }
      continue;
    }
    tidy_node(t, n);
  }
  t->n = mark;
}

void loops_tidy_names(Arena *arena, LoopList *tree, const LoopVar *params, int nparams, LoopPlainName plain,
                      void *ctx) {
  Tidy t = {arena, plain, ctx, NULL, 0, 0};
  for (int i = 0; i < nparams; i++)
    push(&t, params[i].name);
  tidy_list(&t, tree);
}
