/* file_keys.c - what a schedule file says, stage by stage: its graph-level
 * keys (fuse, layout, algorithm), which the graph passes read before any
 * op has a schedule, and its per-op decisions, applied on top of the
 * automatic plans. The driver asks here instead of walking the file. */
#include "schedule/schedule.h"

#include <string.h>

/* Keys that are not the op's schedule: an entry of these only leaves the
 * op's automatic plan as it is. */
bool schedule_key_not_op(const char *key) {
  return strcmp(key, "fuse") == 0 || strcmp(key, "layout") == 0 || strcmp(key, "algorithm") == 0 ||
         strcmp(key, "outline") == 0 || strcmp(key, "libcall") == 0;
}

static const ScheduleEntry *outline_entry(const ScheduleSpec *spec) {
  for (int i = 0; i < spec->entries.len; i++) {
    const ScheduleEntry *e = spec->entries.items[i];
    if (strcmp(e->key, "outline") == 0 || strcmp(e->key, "libcall") == 0)
      return e;
  }
  return NULL;
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
    if (!schedule_key_not_op(((const ScheduleEntry *)spec->entries.items[i])->key))
      return false;
  return spec->entries.len > 0;
}

static int kernel_index(const Module *m, const char *name) {
  for (int i = 0; i < m->kernels.len; i++)
    if (strcmp(((const Kernel *)m->kernels.items[i])->name, name) == 0)
      return i;
  return -1;
}

/* `outline: NAME` and `libcall: NAME`: recorded on the op's plan, whatever
 * else the entry says (checked after row fusion, schedule_check_outlines). */
static void apply_outline(const ScheduleSpec *spec, const ScheduleEntry *e, const Module *m, OpPlan **plans,
                          Diag *diag) {
  int ki = kernel_index(m, spec->kernel);
  if (ki < 0)
    diag_error(diag, spec->loc, "no op named '%s' in the inputs", spec->kernel);
  const Kernel *k = m->kernels.items[ki];
  if (spec->op < 0 || spec->op >= k->nops)
    diag_error(diag, spec->loc, "'%s' has %d comprehension%s; there is no op %d", k->name, k->nops,
               k->nops == 1 ? "" : "s", spec->op);
  OpPlan *plan = &plans[ki][spec->op];
  if (plan->outline)
    diag_error(diag, e->loc, "op %d of '%s' is already the %s '%s'", spec->op, k->name,
               plan->libcall ? "libcall" : "outline", plan->outline);
  plan->outline = e->scalar;
  plan->libcall = strcmp(e->key, "libcall") == 0;
  plan->outline_loc = e->loc;
}

void schedule_check_outlines(const Module *m, OpPlan **plans, const bool *graph, Diag *diag) {
  for (int i = 0; i < m->kernels.len; i++) {
    const Kernel *k = m->kernels.items[i];
    for (int j = 0; j < k->nops; j++) {
      const OpPlan *plan = &plans[i][j];
      const char *key = plan->libcall ? "libcall" : "outline";
      if (!plan->outline)
        continue;
      if (!graph[i])
        diag_error(diag, plan->outline_loc,
                   "%s applies to a model graph's ops; '%s' is a def of a spec (its C function is its own)", key,
                   k->name);
      if (plan->group_size < 0) {
        int head = j;
        while (head > 0 && plans[i][head].group_size < 0)
          head--;
        diag_error(diag, plan->outline_loc,
                   "op %d of '%s' is not a group: it runs in the row-fused group of ops %d to %d (put the %s on "
                   "op %d, or end that group before op %d with fuse: {T: keep} for the tensor T it reads)",
                   j, k->name, head, head + plans[i][head].group_size - 1, key, head, j);
      }
      if (plan->is_prologue)
        diag_error(diag, plan->outline_loc,
                   "op %d of '%s' is not a group: op %d computes it in its pack copy (put the %s on op %d)", j,
                   k->name, plan->prologue_of, key, plan->prologue_of);
    }
  }
}

void schedule_file_apply(const ScheduleFile *file, const Module *m, OpPlan **plans, Arena *arena, Diag *diag) {
  for (int f = 0; file && f < file->specs.len; f++) {
    const ScheduleSpec *spec = file->specs.items[f];
    const ScheduleEntry *outline = outline_entry(spec);
    if (outline)
      apply_outline(spec, outline, m, plans, diag);
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
    const ExtOp *x = k->ops[spec->op].ext;
    if (x && !x->rows_loop && spec->entries.len == 0)
      continue; /* `G: {}`: --print-schedule's word for a graph of templates without schedules */
    OpPlan *plan = &plans[ki][spec->op];
    if (x) {
      schedule_template_resolve(spec, k, spec->op, &plan->s, diag);
      plan->from_file = true;
      continue;
    }
    schedule_resolve(spec, k, &k->ops[spec->op], plan, arena, diag);
    plan->from_file = true;
    ir_verify_op(diag, plan->view.k, plan->view.op);
    schedule_verify(plan->view.k, plan->view.op, &plan->s, spec->loc, diag);
    schedule_warn_ineffective(spec, plan->view.op, &plan->s, diag);
  }
}
