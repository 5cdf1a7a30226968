/* acc.c - the init and epilogue passes (loops.h: loops_init_at_load,
 * loops_epilogue_at_store).
 *
 * A reduction keeps its running values in accumulators: loaded from the
 * output before a run of its reduction loops, stored back after it. An
 * op with an init (the reduction's first values: a convolution's bias)
 * or an epilogue (a pointwise op applied to its final values: a ReLU) is
 * built plainly, loading and storing the output as if the init had run
 * before it and the epilogue would run after it; these passes then put
 * the init at the loads that start a run at the reduction's first
 * iteration and the epilogue at the stores that end one at its last,
 * under the condition the enclosing reduction loops give, so that
 * neither needs a pass over the output of its own. They read only the
 * tree: the loads and stores are marked (LoopNode.acc, .site) and the
 * loops over reduction dims say which dim they run over and when they
 * run its last iteration (LoopNode.reduce, .last); the builder's
 * callback builds the init or epilogue at a site. */
#include "loops/loops_internal.h"

#include <string.h>

/* The loops around a node, innermost first. */
typedef struct Frame {
  const LoopNode *loop;
  const struct Frame *up;
} Frame;

typedef struct {
  Arena *arena;
  AccKind kind; /* ACC_LOAD or ACC_STORE */
  bool last; /* conditions on the last iterations (else the first) */
  LoopAttach attach;
  void *ctx;
  int sites;
  bool ok;
} Acc;

/* When every enclosing reduction loop is at its first (or last)
 * iteration: one term per reduction dim, from its innermost loop, in the
 * order of the dims; "" when there is none (every run is whole). NULL
 * when a loop does not know its last iteration, so neither are the runs'
 * ends known. */
static const char *condition(const Acc *a, const Frame *up) {
  int most = 0;
  for (const Frame *f = up; f; f = f->up) {
    if (!f->loop->last) /* a register tile's: its blocks cut a run in pieces */
      return NULL;
    if (f->loop->reduce > most)
      most = f->loop->reduce;
  }
  StrBuf sb = {0};
  for (int r = 1; r <= most; r++)
    for (const Frame *f = up; f; f = f->up)
      if (f->loop->reduce == r) {
        sb_puts(&sb, sb.len ? " && " : "");
        if (a->last)
          sb_puts(&sb, f->loop->last);
        else
          sb_printf(&sb, "%s == 0", f->loop->var);
        break;
      }
  const char *s = arena_strdup(a->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

/* Whether the pass can apply: every site's condition is known, and no
 * reduction loop is shared among threads (each thread's accumulators
 * would hold a part of a run whose ends it does not see). */
static void check(Acc *a, const LoopList *list, const Frame *up) {
  for (const LoopNode *n = list->first; n && a->ok; n = n->next) {
    if (n->acc == a->kind) {
      a->sites++;
      if (!condition(a, up))
        a->ok = false;
      continue;
    }
    Frame f = {n, up};
    bool reduce = n->kind == LN_FOR && n->reduce > 0;
    if (reduce && n->par != PAR_NONE)
      a->ok = false;
    check(a, &n->body, reduce ? &f : up);
    check(a, &n->els, reduce ? &f : up);
  }
}

/* Rewrites the sites of `list` (each a run of nodes with one site). */
static void rewrite(Acc *a, LoopList *list, const Frame *up) {
  LoopList out = {0};
  LoopNode *n = list->first;
  while (n) {
    LoopNode *next = n->next;
    if (n->acc != a->kind) {
      Frame f = {n, up};
      bool reduce = n->kind == LN_FOR && n->reduce > 0;
      rewrite(a, &n->body, reduce ? &f : up);
      rewrite(a, &n->els, reduce ? &f : up);
      loops_append(&out, n);
      n = next;
      continue;
    }
    const void *site = n->site;
    const char *cond = condition(a, up);
    LoopNode *branch = *cond ? loops_if(a->arena, cond) : NULL;
    /* a declaration keeps its place, uninitialised, and its value goes
     * to the plain branch as a store */
    for (; n && n->acc == a->kind && n->site == site; n = next) {
      next = n->next;
      n->acc = ACC_NONE;
      n->site = NULL;
      LoopNode *plain = n;
      if (n->kind == LN_LET) {
        plain = loops_store(a->arena, n->name, n->value);
        n->value = NULL;
        loops_append(&out, n);
      }
      if (branch)
        loops_append(&branch->els, plain);
    }
    LoopList made = {0};
    a->attach(a->ctx, site, &made);
    if (branch) {
      loops_splice(&branch->body, &made);
      loops_append(&out, branch);
    } else {
      loops_splice(&out, &made);
    }
  }
  *list = out;
}

static bool apply(Arena *arena, LoopList *tree, AccKind kind, LoopAttach attach, void *ctx) {
  Acc a = {arena, kind, kind == ACC_STORE, attach, ctx, 0, true};
  check(&a, tree, NULL);
  if (!a.ok || !a.sites)
    return false;
  rewrite(&a, tree, NULL);
  return true;
}

bool loops_init_at_load(Arena *arena, LoopList *tree, LoopAttach init, void *ctx) {
  return apply(arena, tree, ACC_LOAD, init, ctx);
}

bool loops_epilogue_at_store(Arena *arena, LoopList *tree, LoopAttach epilogue, void *ctx) {
  return apply(arena, tree, ACC_STORE, epilogue, ctx);
}
