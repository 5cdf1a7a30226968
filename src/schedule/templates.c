/* templates.c - schedules of non-structured ops. A template (templates/NAME.c)
 * brings its own loops, so most of the structured ops' decisions mean
 * nothing to it; but the templates that run one loop over rows (the dims
 * outside the op's axis, flattened: ExtOp.rows_loop, from
 * graph/ext_ops.def) can share that loop out among threads, a tile of rows
 * at a time, as IREE tiles and distributes its linalg_ext ops along their
 * batch dims. Two keys, named after the structured ops' own:
 *
 *   parallel: [rows]   the rows are shared out (`[]`: one thread runs them)
 *   tile: {rows: N}    N rows at a time (without it: an equal share each)
 *
 * The plain schedule runs the rows on one thread; auto shares them out.
 * (An outline or libcall key on the same entry is file_keys.c's.) */
#include "schedule/schedule.h"

#include <string.h>

static const char *const rows_name = "rows";

void schedule_template_auto(const StructuredOp *op, Schedule *s) {
  schedule_none(op, s);
  s->rows_parallel = op->ext->rows_loop;
}

static void check_rows_name(const ScheduleEntry *e, int j, Diag *diag) {
  if (strcmp(e->names[j], rows_name) != 0)
    diag_error(diag, e->locs[j], "a template's schedule names only its loop over rows, 'rows', not '%s'", e->names[j]);
}

void schedule_template_resolve(const ScheduleSpec *spec, const Kernel *k, int index, Schedule *s, Diag *diag) {
  const StructuredOp *op = &k->ops[index];
  const ExtOp *x = op->ext;
  if (!x->rows_loop)
    diag_error(diag, spec->loc, "op %d of '%s' is the non-structured op '%s' (a template); it has no schedule",
               index, k->name, x->kind);
  schedule_none(op, s);
  for (int i = 0; i < spec->entries.len; i++) {
    const ScheduleEntry *e = spec->entries.items[i];
    if (schedule_key_not_op(e->key))
      continue;
    if (strcmp(e->key, "parallel") == 0) {
      for (int j = 0; j < e->nitems; j++)
        check_rows_name(e, j, diag);
      s->rows_parallel = e->nitems > 0;
    } else if (strcmp(e->key, "tile") == 0) {
      for (int j = 0; j < e->nitems; j++) {
        check_rows_name(e, j, diag);
        if (e->nvalues[j] != 1)
          diag_error(diag, e->locs[j], "a template's rows take one tile size, not %d", e->nvalues[j]);
        s->rows_tile = e->values[j * LG_MAX_LEVELS];
      }
    } else {
      diag_error(diag, e->loc,
                 "op %d of '%s' is the non-structured op '%s' (a template): its schedule has only "
                 "'parallel: [rows]' and 'tile: {rows: N}', not '%s'",
                 index, k->name, x->kind, e->key);
    }
  }
}

void schedule_template_print_yaml(StrBuf *out, const Kernel *k, int index, const OpPlan *plan, bool as_list) {
  const ExtOp *x = k->ops[index].ext;
  const Schedule *s = &plan->s;
  if (index == 0) {
    schedule_yaml_name(out, k->name);
    sb_puts(out, as_list ? ":\n" : ": {}\n");
  }
  if (!x->rows_loop) {
    sb_printf(out, "  # op %d: %s (non-structured: a template, not scheduled)\n", index, x->kind);
    if (plan->outline)
      sb_printf(out, "  - op: %d\n", index);
  } else {
    sb_printf(out, "  - op: %d  # %s (non-structured: a template; its loop over rows)\n", index, x->kind);
    sb_printf(out, "    parallel: [%s]\n", s->rows_parallel ? rows_name : "");
    if (s->rows_tile > 0)
      sb_printf(out, "    tile: {%s: %lld}\n", rows_name, (long long)s->rows_tile);
  }
  if (plan->outline)
    sb_printf(out, "    %s: %s\n", plan->libcall ? "libcall" : "outline", plan->outline);
}
