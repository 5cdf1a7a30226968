/* loops.c - building and querying loop trees (see loops.h). */
#include "loops/loops_internal.h"

void loops_append(LoopList *list, LoopNode *n) {
  n->next = NULL;
  if (list->last)
    list->last->next = n;
  else
    list->first = n;
  list->last = n;
}

void loops_prepend(LoopList *list, LoopNode *n) {
  n->next = list->first;
  list->first = n;
  if (!list->last)
    list->last = n;
}

void loops_splice(LoopList *to, LoopList *from) {
  if (!from->first)
    return;
  if (to->last)
    to->last->next = from->first;
  else
    to->first = from->first;
  to->last = from->last;
  from->first = from->last = NULL;
}

void loops_insert_after(LoopList *list, LoopNode *at, LoopNode *n) {
  n->next = at->next;
  at->next = n;
  if (list->last == at)
    list->last = n;
}

void loops_insert_before(LoopList *list, LoopNode *at, LoopNode *n) {
  if (list->first == at) {
    loops_prepend(list, n);
    return;
  }
  for (LoopNode *p = list->first; p; p = p->next)
    if (p->next == at) {
      loops_insert_after(list, p, n);
      return;
    }
}

bool loops_empty(const LoopList *list) { return !list->first; }

void loops_each_text(const LoopList *list, void (*fn)(void *, const char *), void *ctx) {
  for (const LoopNode *n = list->first; n; n = n->next) {
    const char *const *texts[] = LOOPS_NODE_TEXTS(n);
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
      if (*texts[i])
        fn(ctx, *texts[i]);
    for (int i = 0; i < n->nargs; i++)
      if (n->args[i])
        fn(ctx, n->args[i]);
    for (int i = 0; i < n->ncoords; i++)
      fn(ctx, n->coords[i]);
    for (int i = 0; i < n->nparams; i++) {
      fn(ctx, n->ptypes[i]);
      fn(ctx, n->pnames[i]);
    }
    loops_each_text(&n->body, fn, ctx);
    loops_each_text(&n->els, fn, ctx);
  }
}

LoopNode *loops_node(Arena *arena, LoopNodeKind kind) {
  LoopNode *n = arena_alloc(arena, sizeof *n);
  n->kind = kind;
  n->step = 1;
  return n;
}

LoopNode *loops_block(Arena *arena, RegionKind region) {
  LoopNode *n = loops_node(arena, LN_BLOCK);
  n->region = region;
  return n;
}

LoopNode *loops_for(Arena *arena, const char *var, const char *lo, const char *hi, int64_t step) {
  LoopNode *n = loops_node(arena, LN_FOR);
  n->var = var;
  n->lo = lo;
  n->hi = hi;
  n->step = step;
  return n;
}

LoopNode *loops_if(Arena *arena, const char *cond) {
  LoopNode *n = loops_node(arena, LN_IF);
  n->cond = cond;
  return n;
}

LoopNode *loops_let(Arena *arena, const char *type, const char *name, const char *value) {
  LoopNode *n = loops_node(arena, LN_LET);
  n->type = type;
  n->name = name;
  n->value = value;
  return n;
}

LoopNode *loops_array(Arena *arena, const char *type, const char *name, const char *extents, bool zeroed) {
  LoopNode *n = loops_node(arena, LN_ARRAY);
  n->type = type;
  n->name = name;
  n->extents = extents;
  n->zeroed = zeroed;
  return n;
}

LoopNode *loops_store(Arena *arena, const char *target, const char *value) {
  LoopNode *n = loops_node(arena, LN_STORE);
  n->target = target;
  n->value = value;
  return n;
}

LoopNode *loops_call(Arena *arena, const char *fn, int nargs, const char *const *args) {
  LoopNode *n = loops_node(arena, LN_CALL);
  n->fn = fn;
  n->nargs = nargs;
  n->args = arena_alloc(arena, sizeof(char *) * (size_t)(nargs + 1));
  for (int i = 0; i < nargs; i++)
    n->args[i] = args[i];
  return n;
}

LoopNode *loops_barrier(Arena *arena) { return loops_node(arena, LN_BARRIER); }

LoopNode *loops_comment(Arena *arena, const char *text) {
  LoopNode *n = loops_node(arena, LN_COMMENT);
  n->text = text;
  return n;
}

LoopNode *loops_proc(Arena *arena, const char *type, int nparams, const char *const *ptypes,
                     const char *const *pnames) {
  LoopNode *n = loops_node(arena, LN_PROC);
  n->type = type;
  n->nparams = nparams;
  n->ptypes = arena_alloc(arena, sizeof(char *) * (size_t)(nparams + 1));
  n->pnames = arena_alloc(arena, sizeof(char *) * (size_t)(nparams + 1));
  for (int i = 0; i < nparams; i++) {
    n->ptypes[i] = ptypes[i];
    n->pnames[i] = pnames[i];
  }
  return n;
}

LoopNode *loops_call_proc(Arena *arena, LoopNode *proc, int nargs, const char *const *args) {
  LoopNode *n = loops_call(arena, NULL, nargs, args);
  n->callee = proc;
  return n;
}

bool loops_has_worksharing(const LoopList *list) {
  for (const LoopNode *n = list->first; n; n = n->next) {
    if ((n->kind == LN_FOR || n->kind == LN_CALL) && n->par == PAR_WORKSHARING)
      return true;
    if (n->kind == LN_BLOCK && n->region == REGION_PARALLEL)
      continue; /* its loops share its own threads */
    if (n->kind == LN_FOR && n->par == PAR_REGION)
      continue;
    if (loops_has_worksharing(&n->body) || loops_has_worksharing(&n->els))
      return true;
  }
  return false;
}

bool loops_uses_thread_slots(const LoopList *list) {
  for (const LoopNode *n = list->first; n; n = n->next) {
    if ((n->kind == LN_BLOCK && n->region == REGION_PARALLEL) || (n->kind == LN_FOR && n->par == PAR_REGION))
      continue; /* a region of its own: its team is its own business */
    if (n->thread_slots || loops_uses_thread_slots(&n->body) || loops_uses_thread_slots(&n->els))
      return true;
  }
  return false;
}

bool loops_cap_threads(LoopNode *region, const char *cap) {
  if (!loops_uses_thread_slots(&region->body))
    return false;
  region->threads = cap;
  return true;
}

void loops_join_region(Arena *arena, LoopList *list) {
  for (LoopNode *n = list->first; n; n = n->next) {
    if (n->kind == LN_BLOCK && n->region == REGION_PARALLEL) {
      n->region = REGION_NONE;
      n->threads = NULL;
      LoopNode *barrier = loops_barrier(arena);
      loops_insert_after(list, n, barrier);
      n = barrier; /* its body's loops are the enclosing region's already (`omp for`s of its own region) */
    } else if (n->kind == LN_FOR && n->par == PAR_REGION) {
      n->par = PAR_WORKSHARING; /* its body runs on the loop's thread: nothing to join there */
      n->threads = NULL;
    } else {
      loops_join_region(arena, &n->body);
      loops_join_region(arena, &n->els);
    }
  }
}

LoopNode *loops_find_parallel(LoopList *list) {
  for (LoopNode *n = list->first; n; n = n->next) {
    if (n->kind == LN_FOR && n->par != PAR_NONE)
      return n;
    LoopNode *inner = loops_find_parallel(&n->body);
    if (!inner)
      inner = loops_find_parallel(&n->els);
    if (inner)
      return inner;
  }
  return NULL;
}
