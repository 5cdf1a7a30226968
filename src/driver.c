/* driver.c - the pipeline, one stage per line:
 *   parse (.tc -> syntax tree) -> lower (-> IR, with domain inference and
 *   bounds analysis) -> verify -> emit C, header, IR text. */
#include "lgen.h"

#include <stdlib.h>
#include <string.h>

#include "emit/c_emit.h"
#include "frontend/tc.h"

static char *take(StrBuf *sb) {
  char *s = xmalloc(sb->len + 1);
  memcpy(s, sb_cstr(sb), sb->len + 1);
  sb_free(sb);
  return s;
}

static const char *derive_guard(Arena *arena, const lgen_options *opt) {
  if (opt->guard)
    return opt->guard;
  const char *base = opt->header_name ? opt->header_name : "lgen_kernels.h";
  const char *slash = strrchr(base, '/');
  if (slash)
    base = slash + 1;
  char *g = arena_printf(arena, "%s%s", opt->prefix ? opt->prefix : "", base);
  for (char *p = g; *p; p++) {
    char c = *p;
    bool ok = (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    *p = (c >= 'a' && c <= 'z') ? (char)(c - 32) : ok ? c : '_';
  }
  if (g[0] >= '0' && g[0] <= '9')
    g = arena_printf(arena, "LGEN_%s", g);
  return g;
}

/* The banner names the input without its folder, so output does not depend on
 * where the build runs (absolute paths, VPATH builds). */
static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static void list_ops(StrBuf *out, const Module *m) {
  for (int i = 0; i < m->kernels.len; i++) {
    ir_print_signature(out, m->kernels.items[i]);
    sb_putc(out, '\n');
  }
}

/* Everything the compilation changes after setjmp lives behind this pointer,
 * so its values are well defined after a longjmp back. */
typedef struct {
  jmp_buf on_error;
  Diag diag;
  Module module;
  StrBuf c, h, ir, list, sched;
} Compilation;

/* One OpPlan per op of every kernel: plain (no reshape), automatic (every
 * unit dim folded, every legal chain collapsed, then scheduled from the
 * view's structure), or from a file (ops a file does not mention get the
 * automatic one; those it mentions get only what it says). */
static OpPlan **choose_schedules(Compilation *cx, Arena *arena, const lgen_options *options, const Target *target) {
  const char *mode = options->schedule ? options->schedule : "auto";
  ScheduleFile *file = NULL;
  if (strcmp(mode, "file") == 0) {
    Source *src = arena_alloc(arena, sizeof *src);
    src->name = arena_strdup(arena, options->schedule_file->name);
    src->text = arena_strndup(arena, options->schedule_file->text, options->schedule_file->len);
    src->len = options->schedule_file->len;
    file = schedule_file_parse(src, arena, &cx->diag);
  }
  const Module *m = &cx->module;
  OpPlan **all = arena_alloc(arena, sizeof(OpPlan *) * (size_t)(m->kernels.len + 1));
  for (int i = 0; i < m->kernels.len; i++) {
    const Kernel *k = m->kernels.items[i];
    all[i] = arena_alloc(arena, sizeof(OpPlan) * (size_t)(k->nops ? k->nops : 1));
    for (int j = 0; j < k->nops; j++) {
      OpPlan *plan = &all[i][j];
      const StructuredOp *op = &k->ops[j];
      bool none = strcmp(mode, "none") == 0;
      reshape_identity(&plan->reshape);
      if (!none)
        reshape_auto(k, op, &plan->reshape, arena);
      plan->view = reshape_apply(k, op, &plan->reshape, arena);
      ir_verify_op(&cx->diag, plan->view.k, plan->view.op);
      if (none)
        schedule_none(plan->view.op, &plan->s);
      else
        schedule_auto(plan->view.k, plan->view.op, target, &plan->s);
      schedule_verify(plan->view.k, plan->view.op, &plan->s, op->loc, &cx->diag);
    }
  }
  if (file)
    for (int f = 0; f < file->specs.len; f++) {
      const ScheduleSpec *spec = file->specs.items[f];
      const Kernel *k = NULL;
      int ki = -1;
      for (int i = 0; i < m->kernels.len && !k; i++)
        if (strcmp(((const Kernel *)m->kernels.items[i])->name, spec->kernel) == 0) {
          k = m->kernels.items[i];
          ki = i;
        }
      if (!k)
        diag_error(&cx->diag, spec->loc, "no op named '%s' in the inputs", spec->kernel);
      if (spec->op < 0 || spec->op >= k->nops)
        diag_error(&cx->diag, spec->loc, "'%s' has %d comprehension%s; there is no op %d", k->name, k->nops,
                   k->nops == 1 ? "" : "s", spec->op);
      OpPlan *plan = &all[ki][spec->op];
      schedule_resolve(spec, k, &k->ops[spec->op], plan, arena, &cx->diag);
      ir_verify_op(&cx->diag, plan->view.k, plan->view.op);
      schedule_verify(plan->view.k, plan->view.op, &plan->s, spec->loc, &cx->diag);
    }
  for (int i = 0; i < m->kernels.len; i++) {
    const Kernel *k = m->kernels.items[i];
    for (int j = 0; j < k->nops; j++)
      schedule_print_yaml(&cx->sched, k, j, &k->ops[j], &all[i][j]);
  }
  return all;
}

static void run_pipeline(Compilation *cx, Arena *arena, const lgen_source *sources, size_t nsources,
                         const lgen_options *options) {
  for (size_t i = 0; i < nsources; i++) {
    Source *src = arena_alloc(arena, sizeof *src);
    src->name = arena_strdup(arena, sources[i].name);
    src->text = arena_strndup(arena, sources[i].text, sources[i].len);
    src->len = sources[i].len;
    AstFile *file = tc_parse(src, arena, &cx->diag);
    tc_lower(file, &cx->module, arena, &cx->diag);
  }
  for (int i = 0; i < cx->module.kernels.len; i++)
    ir_verify_kernel(&cx->diag, cx->module.kernels.items[i]);
  const Target *target = options->target ? target_lookup(options->target) : target_default();
  if (!target)
    diag_error(&cx->diag, (Loc){0}, "unknown target '%s' (known: %s)", options->target, target_names());
  OpPlan **plans = choose_schedules(cx, arena, options, target);
  EmitOptions eo = {
      .prefix = options->prefix ? options->prefix : "",
      .checks = options->checks != 0,
      .header_name = options->header_name,
      .guard = derive_guard(arena, options),
      .input_name = nsources ? base_name(sources[0].name) : "<nothing>",
      .plans = plans,
      .target = target,
  };
  check_function_names(&cx->module, eo.prefix, arena, &cx->diag);
  emit_c_file(&cx->c, &cx->module, &eo, arena);
  emit_c_header(&cx->h, &cx->module, &eo, arena);
  ir_print_module(&cx->ir, &cx->module);
  list_ops(&cx->list, &cx->module);
}

int lgen_compile(const lgen_source *sources, size_t nsources, const lgen_options *options, lgen_output *out) {
  memset(out, 0, sizeof *out);
  Arena *arena = arena_new();
  Compilation *cx = arena_alloc(arena, sizeof *cx);
  cx->diag.on_error = &cx->on_error;
  int status = setjmp(cx->on_error);
  if (status == 0) {
    run_pipeline(cx, arena, sources, nsources, options);
    out->c_source = take(&cx->c);
    out->header = take(&cx->h);
    out->ir = take(&cx->ir);
    out->op_list = take(&cx->list);
    out->schedule = take(&cx->sched);
  } else {
    sb_free(&cx->sched);
    sb_free(&cx->c);
    sb_free(&cx->h);
    sb_free(&cx->ir);
    sb_free(&cx->list);
  }
  out->errors = cx->diag.errors;
  out->warnings = cx->diag.warnings;
  out->diagnostics = take(&cx->diag.out);
  arena_free(arena);
  return status == 0 ? LGEN_OK : status == 1 ? LGEN_INPUT_ERROR : LGEN_INTERNAL_ERROR;
}

void lgen_output_free(lgen_output *out) {
  free(out->c_source);
  free(out->header);
  free(out->ir);
  free(out->op_list);
  free(out->schedule);
  free(out->diagnostics);
  memset(out, 0, sizeof *out);
}

int lgen_target_known(const char *name) { return target_lookup(name) != NULL; }
