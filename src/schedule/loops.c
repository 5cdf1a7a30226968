/* loops.c - the loop nest a schedule gives an op, and which of its loops
 * run in parallel: shared by the C emitter (emit/c_loops.c builds its nest
 * from it) and by the check that warns about schedule-file `parallel:` and
 * `vector:` entries the nest cannot honour. */
#include "schedule/schedule.h"

#include <string.h>

static bool tiled(const Schedule *s, int d) {
  for (int l = 0; l < s->nlevels; l++)
    if (s->tile[l][d] > 0)
      return true;
  return false;
}

typedef struct {
  Loop *loops;
  int n;
} LoopList;

static void add_loop(LoopList *L, int dim, LoopKind kind, int level, int64_t step, bool band0) {
  bool first = true;
  for (int i = 0; i < L->n; i++)
    first &= L->loops[i].dim != dim;
  L->loops[L->n++] = (Loop){dim, kind, level, step, band0, first};
}

int schedule_loops(const StructuredOp *op, const Schedule *s, Loop *loops) {
  LoopList L = {loops, 0};
  const int *order = s->order;
  for (int i = 0; i < op->ndims; i++) {
    int d = order[i];
    if (s->nlevels > 0 && s->tile[0][d] > 0)
      add_loop(&L, d, LOOP_TILE, 0, s->tile[0][d], true);
    else if (!tiled(s, d) && s->unroll[d] <= 1 && op->dims[d].kind == ITER_PARALLEL)
      add_loop(&L, d, LOOP_POINT, 0, 1, true);
  }
  for (int l = 1; l < s->nlevels; l++)
    for (int i = 0; i < op->ndims; i++)
      if (s->tile[l][order[i]] > 0)
        add_loop(&L, order[i], LOOP_TILE, l, s->tile[l][order[i]], false);
  for (int i = 0; i < op->ndims; i++)
    if (s->unroll[order[i]] > 1)
      add_loop(&L, order[i], LOOP_REG_TILE, 0, s->unroll[order[i]], false);
  for (int i = 0; i < op->ndims; i++) {
    int d = order[i];
    if (s->unroll[d] <= 1 && (tiled(s, d) || op->dims[d].kind == ITER_REDUCTION))
      add_loop(&L, d, LOOP_POINT, 0, 1, false);
  }
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < op->ndims; i++) {
      int d = order[i];
      if (s->unroll[d] > 1 && (d == s->vector_dim) == (pass == 1))
        add_loop(&L, d, LOOP_REG_POINT, 0, 1, false);
    }
  return L.n;
}

int schedule_parallel_loop(const StructuredOp *op, const Schedule *s, const Loop *loops, int nloops, int *count) {
  int first = -1;
  *count = 0;
  for (int i = 0; i < nloops && first < 0; i++) {
    const Loop *l = &loops[i];
    if ((l->first && s->parallel[l->dim] && l->kind != LOOP_REG_POINT) ||
        (l->kind == LOOP_REG_TILE && s->parallel_reg[l->dim]))
      first = i;
  }
  if (first < 0)
    return -1;
  *count = 1;
  /* a split reduction stands alone; otherwise adjacent outermost band-0
   * loops of other parallel dims collapse with the first */
  if (op->dims[loops[first].dim].kind == ITER_REDUCTION)
    return first;
  while (first + *count < nloops) {
    const Loop *l = &loops[first + *count];
    if (!l->first || !s->parallel[l->dim] || op->dims[l->dim].kind != ITER_PARALLEL || !l->band0)
      break;
    (*count)++;
  }
  return first;
}

/* The location of `name` (d or d.reg) in the spec's parallel entry, or
 * the entry's, or the spec's. */
static Loc parallel_name_loc(const ScheduleSpec *spec, const char *name, bool reg) {
  size_t len = strlen(name);
  for (int e = 0; e < spec->entries.len; e++) {
    const ScheduleEntry *en = spec->entries.items[e];
    if (strcmp(en->key, "parallel") != 0)
      continue;
    for (int i = 0; i < en->nitems; i++)
      if (strncmp(en->names[i], name, len) == 0 && strcmp(en->names[i] + len, reg ? ".reg" : "") == 0)
        return en->locs[i];
    return en->loc;
  }
  return spec->loc;
}

/* The spec's `vector:` entry, or NULL. */
static const ScheduleEntry *vector_entry(const ScheduleSpec *spec) {
  for (int e = 0; e < spec->entries.len; e++) {
    const ScheduleEntry *en = spec->entries.items[e];
    if (strcmp(en->key, "vector") == 0)
      return en;
  }
  return NULL;
}

void schedule_warn_ineffective(const ScheduleSpec *spec, const StructuredOp *op, const Schedule *s, Diag *diag) {
  Loop loops[LG_MAX_LOOPS];
  int n = schedule_loops(op, s, loops), count;
  int first = schedule_parallel_loop(op, s, loops, n, &count);
  /* `omp simd` goes on the innermost loop only, when it is the vector dim's */
  const ScheduleEntry *ve = vector_entry(spec);
  if (ve && s->vector_dim >= 0 && n > 0 && loops[n - 1].dim != s->vector_dim)
    diag_warning(diag, ve->loc, "vector '%s' has no effect: the innermost loop of the nest is the loop of '%s'",
                 op->dims[s->vector_dim].name, op->dims[loops[n - 1].dim].name);
  for (int d = 0; d < op->ndims; d++)
    for (int reg = 0; reg < 2; reg++) {
      if (!(reg ? s->parallel_reg[d] : s->parallel[d]))
        continue;
      bool taken = false;
      for (int i = first; i >= 0 && i < first + count; i++)
        taken |= loops[i].dim == d && (reg ? loops[i].kind == LOOP_REG_TILE : loops[i].first);
      if (taken || first < 0)
        continue;
      const char *name = op->dims[d].name;
      const Loop *f = &loops[first];
      if (reg || f->kind == LOOP_REG_TILE)
        diag_warning(diag, parallel_name_loc(spec, name, reg),
                     "parallel '%s%s' has no effect: the nest runs one loop in parallel, '%s%s'", name,
                     reg ? ".reg" : "", op->dims[f->dim].name, f->kind == LOOP_REG_TILE ? ".reg" : "");
      else
        diag_warning(diag, parallel_name_loc(spec, name, reg),
                     "parallel '%s' has no effect: its outermost loop is not next to the parallel loop of '%s' "
                     "(only adjacent outermost loops collapse); reorder the dims",
                     name, op->dims[f->dim].name);
    }
}
