/* claim.c - the claim pass (loops.h): inside a model graph's one parallel
 * region, worksharing nests and singles become work the threads claim.
 *
 * A worksharing loop nest (an `omp for`, collapse(n), with its implicit
 * barrier) of an op becomes a loop over chunks of its iterations that each
 * thread claims from a shared counter, then a wait until every chunk is
 * done. The barrier waited for every thread to arrive: with another
 * process on one of two cores, each of a model's ~70 barriers waited for a
 * descheduled thread (a 3.6 ms model took 6.2 ms at 2 threads). Now a late
 * thread finds the chunks taken and the others go on. Loops with a
 * reduction clause or simd on the collapsed nest, and loops inside other
 * loops (the counter would need a reset per outer iteration) keep their
 * `omp for`.
 *
 * The pass knows the runtime helpers only by name (lgen_claim, lgen_finish,
 * lgen_wait, lgen_min); the caller defines them, as LoopClaims says. */
#include "loops/loops.h"

#include <string.h>

typedef struct {
  Arena *arena;
  const char *array; /* the counters' C name */
  LoopNamer fresh;
  void *ctx;
  LoopClaims used;
} Claims;

static bool claimable(const LoopNode *f) {
  if (f->kind != LN_FOR || f->par != PAR_WORKSHARING || f->reduction || f->simd || f->collapse > 8)
    return false;
  const LoopNode *g = f;
  for (int i = 0; i < (f->collapse > 1 ? f->collapse : 1); i++) {
    if (!g || g->kind != LN_FOR || g->step_expr || g->next_value || g->step <= 0 || (i > 0 && (g->par || g->simd)))
      return false;
    if (i + 1 < f->collapse && (g->body.first != g->body.last))
      return false;
    if (i + 1 == (f->collapse > 1 ? f->collapse : 1) && loops_has_worksharing(&g->body))
      return false; /* a callee's loops shared among the region's threads: every thread must call */
    g = i + 1 < f->collapse ? g->body.first : NULL;
  }
  return true;
}

static LoopNode *claim_nest(Claims *c, LoopNode *f) {
  Arena *a = c->arena;
  int n = f->collapse > 1 ? f->collapse : 1;
  const LoopNode *loops[8];
  const char *trips[8];
  const LoopNode *g = f;
  for (int i = 0; i < n; i++, g = g->body.first) {
    loops[i] = g;
    trips[i] = g->step == 1 && strcmp(g->lo, "0") == 0 ? arena_printf(a, "(%s)", g->hi)
               : g->step == 1                          ? arena_printf(a, "((%s) - (%s))", g->hi, g->lo)
                            : arena_printf(a, "(((%s) - (%s) + %lld) / %lld)", g->hi, g->lo, (long long)g->step - 1,
                                           (long long)g->step);
  }
  const LoopList *inner = &loops[n - 1]->body;
  int k = c->used.counters;
  c->used.counters += 2;
  c->used.nests = true;
  const char *next = arena_printf(a, "&%s[%d]", c->array, k);
  const char *done = arena_printf(a, "&%s[%d]", c->array, k + 1);
  const char *total = c->fresh(c->ctx, "claim_total");
  const char *chunk = c->fresh(c->ctx, "claim_chunk");
  const char *first = c->fresh(c->ctx, "claim_first");
  const char *it = c->fresh(c->ctx, "claim_it");
  LoopNode *block = loops_block(a, REGION_NONE);
  block->thread_slots = f->thread_slots; /* the region's cap (loops_cap_threads) */
  StrBuf prod = {0};
  for (int i = 0; i < n; i++)
    sb_printf(&prod, "%s%s", i ? " * " : "", trips[i]);
  loops_append(&block->body, loops_let(a, "const int64_t", total, arena_strdup(a, sb_cstr(&prod))));
  sb_free(&prod);
  /* 32 claims an op: balance within 3 %, one atomic per chunk */
  loops_append(&block->body, loops_let(a, "const int64_t", chunk, arena_printf(a, "(%s + 31) / 32", total)));
  LoopNode *claim = loops_for(a, first, arena_printf(a, "lgen_claim(%s, %s)", next, chunk), total, 1);
  claim->next_value = claim->lo;
  claim->note = "chunks claimed as the threads come";
  loops_append(&block->body, claim);
  LoopNode *each = loops_for(a, it, first, arena_printf(a, "lgen_min(%s + %s, %s)", first, chunk, total), 1);
  loops_append(&claim->body, each);
  for (int i = 0; i < n; i++) {
    const char *index = it;
    const char *below = NULL;
    for (int j = i + 1; j < n; j++)
      below = below ? arena_printf(a, "%s * %s", below, trips[j]) : trips[j];
    if (below)
      index = arena_printf(a, "%s / (%s)", index, below);
    if (i > 0)
      index = arena_printf(a, "(%s) %% %s", index, trips[i]);
    const char *value = strcmp(loops[i]->lo, "0") == 0 && loops[i]->step == 1
                            ? index
                        : loops[i]->step == 1 ? arena_printf(a, "%s + (%s)", loops[i]->lo, index)
                                            : arena_printf(a, "%s + (%s) * %lld", loops[i]->lo, index,
                                                           (long long)loops[i]->step);
    loops_append(&each->body, loops_let(a, "const int64_t", loops[i]->var, value));
  }
  LoopNode *work = loops_block(a, REGION_NONE);
  work->body = *inner;
  loops_append(&each->body, work);
  const char *args[2] = {done, arena_printf(a, "lgen_min(%s + %s, %s) - %s", first, chunk, total, first)};
  loops_append(&claim->body, loops_call(a, "lgen_finish", 2, args));
  const char *wargs[2] = {done, total};
  loops_append(&block->body, loops_call(a, "lgen_wait", 2, wargs));
  return block;
}

/* An op under `omp single` (and its barrier): the first thread to claim
 * it runs it, the others wait until it is done. */
static LoopNode *claim_single(Claims *c, LoopNode *single) {
  Arena *a = c->arena;
  int k = c->used.counters;
  c->used.counters += 2;
  const char *done = arena_printf(a, "&%s[%d]", c->array, k + 1);
  LoopNode *block = loops_block(a, REGION_NONE);
  LoopNode *first = loops_if(a, arena_printf(a, "lgen_claim(&%s[%d], 1) == 0", c->array, k));
  first->note = "one thread runs it";
  single->region = REGION_NONE;
  loops_append(&first->body, single);
  const char *args[2] = {done, "1"};
  loops_append(&first->body, loops_call(a, "lgen_finish", 2, args));
  loops_append(&block->body, first);
  loops_append(&block->body, loops_call(a, "lgen_wait", 2, args));
  return block;
}

/* Replaces the claimable nests and the singles of `list` (not inside
 * loops or nested regions). */
static void claim_list(Claims *c, LoopList *list) {
  LoopList out = {0};
  for (LoopNode *n = list->first, *next; n; n = next) {
    next = n->next;
    n->next = NULL;
    if (claimable(n)) {
      loops_append(&out, claim_nest(c, n));
      continue;
    }
    if (n->kind == LN_BLOCK && n->region == REGION_SINGLE && !loops_has_worksharing(&n->body)) {
      loops_append(&out, claim_single(c, n));
      continue;
    }
    if (n->kind == LN_BLOCK && n->region == REGION_NONE)
      claim_list(c, &n->body);
    else if (n->kind == LN_IF) {
      claim_list(c, &n->body);
      claim_list(c, &n->els);
    }
    loops_append(&out, n);
  }
  *list = out;
}

LoopClaims loops_claim(Arena *arena, LoopList *list, const char *array, LoopNamer fresh, void *ctx) {
  Claims c = {arena, array, fresh, ctx, {0, false}};
  claim_list(&c, list);
  return c.used;
}
