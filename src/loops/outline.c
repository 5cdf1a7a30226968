/* outline.c - LN_PROC nodes become functions of the file (see loops.h).
 *
 * A builder writes a piece of code once as an LN_PROC where it stands, in
 * the scope of the variables it reads, and calls it from there (a register
 * block, c_loops.c: once with constant extents for the full block and each
 * sub-block, once with run-time extents). C has no nested functions, so this
 * pass moves it to file scope. What it reads of the enclosing function it
 * now gets as parameters: the identifiers of its text that name a variable
 * in scope where it stood (a parameter of the function, a let, a loop
 * variable, a buffer) and that it does not declare itself. Identifiers that
 * name nothing in scope are the file's (helpers, constants, macros). */
#include "loops/loops_internal.h"

#include <string.h>

typedef struct {
  Arena *arena;
  const char *prefix;
  int count;    /* procs named so far */
  LoopList *procs;
  LoopVar *scope; /* the variables in scope, outermost first */
  int nscope, cap;
} Outline;

static void push(Outline *o, const char *type, const char *name) {
  if (o->nscope == o->cap) {
    int cap = o->cap ? o->cap * 2 : 64;
    LoopVar *grown = arena_alloc(o->arena, sizeof *grown * (size_t)cap);
    if (o->nscope)
      memcpy(grown, o->scope, sizeof *grown * (size_t)o->nscope);
    o->scope = grown;
    o->cap = cap;
  }
  o->scope[o->nscope].type = type;
  o->scope[o->nscope].name = name;
  o->nscope++;
}

/* Every identifier of C text into set (loops_next_ident: not member
 * names, literals or the letters of numbers). */
static void identifiers(void *ctx, const char *text) {
  void **args = ctx;
  StrMap *set = args[0];
  Arena *arena = args[1];
  size_t len;
  const char *p = text;
  for (const char *s; (s = loops_next_ident(text, &p, &len));)
    if (!strmap_has_n(set, s, len))
      strmap_put(set, arena, arena_strndup(arena, s, len), (void *)1);
}

/* The names a statement list declares, at any depth, into set. */
static void declared(const LoopList *list, StrMap *set, Arena *arena) {
  for (const LoopNode *n = list->first; n; n = n->next) {
    const char *name = n->kind == LN_FOR ? n->var
                       : n->kind == LN_LET || n->kind == LN_ARRAY || n->kind == LN_ALLOC ? n->name
                                                                                          : NULL;
    if (name)
      strmap_put(set, arena, name, (void *)1);
    declared(&n->body, set, arena);
    declared(&n->els, set, arena);
  }
}

static void walk(Outline *o, LoopList *list);

/* Proc p, standing at the current scope: its captures become parameters,
 * its unread parameters go, and it moves to o->procs. */
static void outline_proc(Outline *o, LoopNode *p) {
  StrMap used = {0}, own = {0};
  void *args[] = {&used, o->arena};
  loops_each_text(&p->body, identifiers, args);
  declared(&p->body, &own, o->arena);
  /* the parameters it reads, then the variables it captures */
  int cap = p->nparams + o->nscope;
  const char **types = arena_alloc(o->arena, sizeof(char *) * (size_t)(cap + 1));
  const char **names = arena_alloc(o->arena, sizeof(char *) * (size_t)(cap + 1));
  bool *keep = arena_alloc(o->arena, sizeof(bool) * (size_t)(p->nparams + 1));
  int n = 0;
  for (int i = 0; i < p->nparams; i++) {
    keep[i] = strmap_has(&used, p->pnames[i]);
    if (keep[i]) {
      types[n] = p->ptypes[i];
      names[n++] = p->pnames[i];
    }
  }
  int explicit = n;
  for (int i = 0; i < o->nscope; i++) {
    const char *name = o->scope[i].name;
    if (!strmap_has(&used, name) || strmap_has(&own, name))
      continue;
    bool shadowed = false; /* an inner variable of the same name is the one it reads */
    for (int j = i + 1; j < o->nscope && !shadowed; j++)
      shadowed = strcmp(o->scope[j].name, name) == 0;
    if (shadowed)
      continue;
    types[n] = o->scope[i].type;
    names[n++] = name;
  }
  p->kept = keep;
  p->nexplicit = p->nparams;
  p->ncaptures = n - explicit;
  p->ptypes = types;
  p->pnames = names;
  p->nparams = n;
  p->name = arena_printf(o->arena, "%s%d", o->prefix, ++o->count);
}

/* A call of an outlined proc: the kept arguments, then the captures. */
static void outline_call(Outline *o, LoopNode *c) {
  const LoopNode *p = c->callee;
  const char **args = arena_alloc(o->arena, sizeof(char *) * (size_t)(p->nparams + 1));
  int n = 0;
  for (int i = 0; i < c->nargs && i < p->nexplicit; i++)
    if (p->kept[i])
      args[n++] = c->args[i];
  for (int i = p->nparams - p->ncaptures; i < p->nparams; i++)
    args[n++] = p->pnames[i];
  c->args = args;
  c->nargs = n;
  c->fn = p->name;
}

static void walk(Outline *o, LoopList *list) {
  int depth = o->nscope;
  LoopNode *prev = NULL;
  for (LoopNode *n = list->first, *next; n; n = next) {
    next = n->next;
    if (n->kind == LN_PROC) {
      outline_proc(o, n);
      if (prev) /* out of the list */
        prev->next = next;
      else
        list->first = next;
      if (list->last == n)
        list->last = prev;
      /* its body: procs in it would be outlined with its parameters in scope */
      loops_append(o->procs, n);
      continue;
    }
    if (n->kind == LN_CALL && n->callee)
      outline_call(o, n);
    if (n->kind == LN_FOR) {
      int inner = o->nscope;
      push(o, "int64_t", n->var);
      walk(o, &n->body);
      o->nscope = inner;
    } else {
      walk(o, &n->body);
      walk(o, &n->els);
    }
    if (n->kind == LN_LET)
      push(o, n->type, n->name);
    else if (n->kind == LN_ALLOC)
      push(o, arena_printf(o->arena, n->alloc == ALLOC_HEAP ? "%s *" : "%s *restrict", n->type), n->name);
    else if (n->kind == LN_ARRAY)
      push(o, arena_printf(o->arena, "%s *", n->type), n->name); /* as a pointer: one-dimensional arrays only */
    prev = n;
  }
  o->nscope = depth;
}

void loops_outline(Arena *arena, LoopList *tree, const LoopVar *params, int nparams, const char *prefix,
                   LoopList *procs) {
  Outline o = {arena, prefix, 0, procs, NULL, 0, 0};
  for (int i = 0; i < nparams; i++)
    push(&o, params[i].type, params[i].name);
  walk(&o, tree);
}
