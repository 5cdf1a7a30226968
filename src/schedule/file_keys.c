/* file_keys.c - what a schedule file says, stage by stage: its graph-level
 * keys (fuse, layout, algorithm), which the graph passes read before any
 * op has a schedule, and its per-op decisions, applied on top of the
 * automatic plans. The driver asks here instead of walking the file. */
#include "schedule/schedule.h"

#include <string.h>

static bool graph_level_key(const char *key) {
  return strcmp(key, "fuse") == 0 || strcmp(key, "layout") == 0 || strcmp(key, "algorithm") == 0;
}

int schedule_file_items(const ScheduleFile *file, const char *kernel, const char *key, ScheduleItem **items,
                        Arena *arena) {
  PtrVec found = {0};
  for (int f = 0; file && f < file->specs.len; f++) {
    const ScheduleSpec *spec = file->specs.items[f];
    for (int i = 0; strcmp(spec->kernel, kernel) == 0 && i < spec->entries.len; i++) {
      const ScheduleEntry *e = spec->entries.items[i];
      if (strcmp(e->key, key) != 0)
        continue;
      for (int j = 0; j < e->nitems; j++) {
        ScheduleItem *it = arena_alloc(arena, sizeof *it);
        *it = (ScheduleItem){e->names[j], e->values[j * LG_MAX_LEVELS], NULL, e->locs[j]};
        vec_push(arena, &found, it);
      }
      if (e->scalar) {
        ScheduleItem *it = arena_alloc(arena, sizeof *it);
        *it = (ScheduleItem){NULL, 0, e->scalar, e->loc};
        vec_push(arena, &found, it);
      }
    }
  }
  *items = arena_alloc(arena, sizeof **items * (size_t)(found.len + 1));
  for (int i = 0; i < found.len; i++)
    (*items)[i] = *(ScheduleItem *)found.items[i];
  return found.len;
}

/* A spec with graph-level keys only: no op's decisions. (One with no keys
 * at all is an op's: `matmul: {}` gives it `none`.) */
static bool only_graph_keys(const ScheduleSpec *spec) {
  for (int i = 0; i < spec->entries.len; i++)
    if (!graph_level_key(((const ScheduleEntry *)spec->entries.items[i])->key))
      return false;
  return spec->entries.len > 0;
}

void schedule_file_apply(const ScheduleFile *file, const Module *m, OpPlan **plans, Arena *arena, Diag *diag) {
  for (int f = 0; file && f < file->specs.len; f++) {
    const ScheduleSpec *spec = file->specs.items[f];
    if (only_graph_keys(spec))
      continue;
    const Kernel *k = NULL;
    int ki = -1;
    for (int i = 0; i < m->kernels.len && !k; i++)
      if (strcmp(((const Kernel *)m->kernels.items[i])->name, spec->kernel) == 0) {
        k = m->kernels.items[i];
        ki = i;
      }
    if (!k)
      diag_error(diag, spec->loc, "no op named '%s' in the inputs", spec->kernel);
    if (spec->op < 0 || spec->op >= k->nops)
      diag_error(diag, spec->loc, "'%s' has %d comprehension%s; there is no op %d", k->name, k->nops,
                 k->nops == 1 ? "" : "s", spec->op);
    if (k->ops[spec->op].ext && spec->entries.len == 0)
      continue; /* `G: {}`: --print-schedule's word for a graph of templates only */
    if (k->ops[spec->op].ext)
      diag_error(diag, spec->loc, "op %d of '%s' is the non-structured op '%s' (a template); it has no schedule",
                 spec->op, k->name, k->ops[spec->op].ext->kind);
    OpPlan *plan = &plans[ki][spec->op];
    schedule_resolve(spec, k, &k->ops[spec->op], plan, arena, diag);
    plan->from_file = true;
    ir_verify_op(diag, plan->view.k, plan->view.op);
    schedule_verify(plan->view.k, plan->view.op, &plan->s, spec->loc, diag);
    schedule_warn_ineffective(spec, plan->view.op, &plan->s, diag);
  }
}
