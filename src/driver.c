/* driver.c - the pipeline, one stage per line:
 *   parse (.tc -> syntax tree) -> lower (-> IR, with domain inference and
 *   bounds analysis) -> verify -> emit C, header, IR text.
 * Model graphs (.json) come after every spec (a graph may call their defs):
 *   load (-> Graph) -> lower (-> one Kernel) -> fuse -> verify; after the
 *   per-op schedules each graph kernel gets its buffer plan. */
#include "lgen.h"

#include <stdlib.h>
#include <string.h>

#include "emit/c_emit.h"
#include "frontend/opdsl.h"
#include "frontend/tc.h"
#include "graph/graph.h"
#include "graph/passes.h"

/* The buffer itself changes hands, not a copy: the C of a model with big
 * weights is several times their size, and a copy would double the peak. */
static char *take(StrBuf *sb) {
  char *s = sb->data;
  if (!s) {
    s = xmalloc(1);
    s[0] = '\0';
  }
  sb->data = NULL;
  sb->len = sb->cap = 0;
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
  PtrVec graphs;    /* GraphKernel*: the module's kernels that are model graphs */
  PtrVec fused_defs; /* FusedDef*: defs of several comprehensions that fusion changed */
  PtrVec file_deps; /* const char*: files the graph loaders read */
  ScheduleFile *schedule_file; /* --schedule=FILE, read before the graph passes */
  GraphDimOverride *dims; /* --dim and --input-shape, parsed */
  int ndims;
  StrBuf c, h, ir, list, sched, weights;
} Compilation;

/* A model graph's kernel and what the graph passes decided for it. */
typedef struct {
  Kernel *k;
  PtrVec folded; /* const char*: scale/shift chains folded into weights (fold_bn.c) */
  PtrVec shared; /* const char*: matmuls merged over one input (share_input.c) */
  PtrVec convs;  /* const char*: conv algorithms (conv_algo.c) */
  PtrVec diags;  /* const char*: diag folded into matmuls (fold_diag.c) */
  PtrVec softmaxes; /* const char*: softmax patterns run as one op (softmax_pattern.c) */
  PtrVec widened;   /* const char*: f16 sums computed in f32 (widen_f16.c) */
  FuseReport fusion;
  BufferPlan *plan;
} GraphKernel;

/* A def from a spec whose comprehensions fusion combined (an epilogue). */
typedef struct {
  const Kernel *k;
  FuseReport fusion;
} FusedDef;

static GraphKernel *graph_kernel(const Compilation *cx, const Kernel *k) {
  for (int i = 0; i < cx->graphs.len; i++)
    if (((GraphKernel *)cx->graphs.items[i])->k == k)
      return cx->graphs.items[i];
  return NULL;
}

static bool fusion_enabled(const lgen_options *options) {
  return !(options->fuse && strcmp(options->fuse, "none") == 0);
}

static bool only_fusion(const ScheduleSpec *spec) { /* graph-level keys only: fuse, algorithm */
  for (int i = 0; i < spec->entries.len; i++)
    if (strcmp(((const ScheduleEntry *)spec->entries.items[i])->key, "fuse") != 0 &&
        strcmp(((const ScheduleEntry *)spec->entries.items[i])->key, "layout") != 0 &&
        strcmp(((const ScheduleEntry *)spec->entries.items[i])->key, "algorithm") != 0)
      return false;
  return spec->entries.len > 0;
}

/* The schedule file's `fuse:` entries for kernel k. */
static FuseOptions fuse_options(const Compilation *cx, const Kernel *k, const lgen_options *options, Arena *arena) {
  FuseOptions fo = {.enabled = fusion_enabled(options)};
  const ScheduleFile *file = cx->schedule_file;
  PtrVec found = {0};
  for (int f = 0; file && f < file->specs.len; f++) {
    const ScheduleSpec *spec = file->specs.items[f];
    if (strcmp(spec->kernel, k->name) != 0)
      continue;
    for (int i = 0; i < spec->entries.len; i++) {
      const ScheduleEntry *e = spec->entries.items[i];
      for (int j = 0; strcmp(e->key, "fuse") == 0 && j < e->nitems; j++) {
        FuseOverride *o = arena_alloc(arena, sizeof *o);
        *o = (FuseOverride){e->names[j], e->values[j * LG_MAX_LEVELS] != 0, e->locs[j]};
        vec_push(arena, &found, o);
      }
    }
  }
  FuseOverride *list = arena_alloc(arena, sizeof *list * (size_t)(found.len + 1));
  for (int i = 0; i < found.len; i++)
    list[i] = *(FuseOverride *)found.items[i];
  fo.noverrides = found.len;
  fo.overrides = list;
  return fo;
}

/* One OpPlan per op of every kernel: plain (no reshape), automatic (every
 * unit dim folded, every legal chain collapsed, then scheduled from the
 * view's structure), or from a file (ops a file does not mention get the
 * automatic one; those it mentions get only what it says). */
static OpPlan **choose_schedules(Compilation *cx, Arena *arena, const lgen_options *options, const Target *target) {
  const char *mode = options->schedule ? options->schedule : "auto";
  ScheduleFile *file = cx->schedule_file;
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
      if (op->ext) { /* a template: no loops to schedule */
        plan->view = (OpView){k, op};
        schedule_none(op, &plan->s);
        continue;
      }
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
      if (only_fusion(spec))
        continue;
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
      if (k->ops[spec->op].ext)
        diag_error(&cx->diag, spec->loc, "op %d of '%s' is the non-structured op '%s' (a template); it has no schedule",
                   spec->op, k->name, k->ops[spec->op].ext->kind);
      OpPlan *plan = &all[ki][spec->op];
      schedule_resolve(spec, k, &k->ops[spec->op], plan, arena, &cx->diag);
      plan->from_file = true;
      ir_verify_op(&cx->diag, plan->view.k, plan->view.op);
      schedule_verify(plan->view.k, plan->view.op, &plan->s, spec->loc, &cx->diag);
      schedule_warn_ineffective(spec, plan->view.op, &plan->s, &cx->diag);
    }
  for (int i = 0; i < m->kernels.len; i++) {
    const Kernel *k = m->kernels.items[i];
    for (int j = 0; j < k->nops; j++) {
      if (!k->ops[j].ext) {
        schedule_print_yaml(&cx->sched, k, j, &k->ops[j], &all[i][j]);
        continue;
      }
      if (j == 0) {
        schedule_yaml_name(&cx->sched, k->name);
        sb_puts(&cx->sched, ":\n");
      }
      sb_printf(&cx->sched, "  # op %d: %s (non-structured: a template, not scheduled)\n", j, k->ops[j].ext->kind);
    }
  }
  return all;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

typedef enum { SRC_TC, SRC_JSON, SRC_ONNX } SourceKind;

/* What a source is: by its name (*.tc, *.json, *.onnx), else (standard
 * input, other names) by --input-format, else by its content: JSON is an
 * object, a binary ONNX model has control bytes or starts with its
 * ir_version's tag, anything else is a .tc spec or OpDSL YAML (see
 * is_opdsl_source, asked only of what is not a graph). */
static SourceKind source_kind(const Source *src, const lgen_options *options) {
  if (ends_with(src->name, ".json"))
    return SRC_JSON;
  if (ends_with(src->name, ".tc"))
    return SRC_TC;
  if (ends_with(src->name, ".onnx"))
    return SRC_ONNX;
  if (ends_with(src->name, ".yaml") || ends_with(src->name, ".yml"))
    return SRC_TC; /* OpDSL YAML: not a graph */
  if (options->input_format)
    return strcmp(options->input_format, "json") == 0   ? SRC_JSON
           : strcmp(options->input_format, "onnx") == 0 ? SRC_ONNX
                                                        : SRC_TC;
  if (graph_json_sniff(src->text, src->len))
    return SRC_JSON;
  return onnx_pb_sniff(src->text, src->len) ? SRC_ONNX : SRC_TC;
}

static bool is_graph_source(const Source *src, const lgen_options *options) {
  return source_kind(src, options) != SRC_TC;
}

/* OpDSL YAML: by its name (*.yaml, *.yml), else --input-format, else its
 * content (a `!LinalgOpConfig` document). */
static bool is_opdsl_source(const Source *src, const lgen_options *options) {
  if (ends_with(src->name, ".yaml") || ends_with(src->name, ".yml"))
    return true;
  if (ends_with(src->name, ".tc") || ends_with(src->name, ".json") || ends_with(src->name, ".onnx"))
    return false;
  if (options->input_format)
    return strcmp(options->input_format, "yaml") == 0;
  return !graph_json_sniff(src->text, src->len) && opdsl_sniff(src->text, src->len);
}

/* The folder of a source, for the files its constants name. */
static const char *source_dir(const Source *src, Arena *arena) {
  const char *slash = strrchr(src->name, '/');
  if (!slash || src->name[0] == '<')
    return ".";
  return slash == src->name ? "/" : arena_strndup(arena, src->name, (size_t)(slash - src->name));
}

/* The schedule file's `layout: channels_last` for graph k (the last entry
 * wins). Off by default: on this machine lgen's channels-first window
 * schedules beat its channels-last ones (see lgen(1), LAYOUT). */
static bool channels_last_wanted(const Compilation *cx, const Kernel *k, const lgen_options *options) {
  const ScheduleFile *file = cx->schedule_file;
  bool want = false;
  for (int f = 0; file && f < file->specs.len && fusion_enabled(options); f++) {
    const ScheduleSpec *spec = file->specs.items[f];
    for (int i = 0; strcmp(spec->kernel, k->name) == 0 && i < spec->entries.len; i++) {
      const ScheduleEntry *e = spec->entries.items[i];
      if (strcmp(e->key, "layout") == 0)
        want = strcmp(e->scalar, "channels_last") == 0;
    }
  }
  return want;
}

/* The schedule file's `algorithm:` choices for the graph named `name`. */
static ConvAlgoChoice *conv_choices(const Compilation *cx, const char *name, int *count, Arena *arena) {
  const ScheduleFile *file = cx->schedule_file;
  PtrVec found = {0};
  for (int f = 0; file && f < file->specs.len; f++) {
    const ScheduleSpec *spec = file->specs.items[f];
    for (int i = 0; strcmp(spec->kernel, name) == 0 && i < spec->entries.len; i++) {
      const ScheduleEntry *e = spec->entries.items[i];
      for (int j = 0; strcmp(e->key, "algorithm") == 0 && j < e->nitems; j++) {
        ConvAlgoChoice *c = arena_alloc(arena, sizeof *c);
        *c = (ConvAlgoChoice){e->names[j], schedule_conv_algorithm(e->values[j * LG_MAX_LEVELS]), e->locs[j]};
        vec_push(arena, &found, c);
      }
    }
  }
  ConvAlgoChoice *list = arena_alloc(arena, sizeof *list * (size_t)(found.len + 1));
  for (int i = 0; i < found.len; i++)
    list[i] = *(ConvAlgoChoice *)found.items[i];
  *count = found.len;
  return list;
}

/* "NAME=VALUE" (--dim) or "NAME=D0,D1,..." (--input-shape): the name is
 * what comes before the last '=' (ONNX dim names are free text). */
static void parse_override(Compilation *cx, Arena *arena, const char *arg, bool shape, GraphDimOverride *o) {
  const char *opt = shape ? "--input-shape" : "--dim";
  const char *eq = strrchr(arg, '=');
  if (!eq || eq == arg)
    diag_usage_error(&cx->diag, "%s '%s' is not %s", opt, arg, shape ? "NAME=D0,D1,..." : "NAME=VALUE");
  o->arg = arena_strdup(arena, arg);
  o->name = arena_strndup(arena, arg, (size_t)(eq - arg));
  o->is_shape = shape;
  const char *p = eq + 1;
  for (;;) {
    int64_t v = 0;
    const char *start = p;
    for (; *p >= '0' && *p <= '9'; p++) {
      if (v > (INT64_C(1) << 40) / 10)
        diag_usage_error(&cx->diag, "%s '%s': a dim above 2^40", opt, arg);
      v = v * 10 + (*p - '0');
    }
    if (p == start || v <= 0 || (*p && *p != ','))
      diag_usage_error(&cx->diag, "%s '%s': %s must be %s", opt, arg, shape ? "each dim" : "the value",
                       "a positive integer");
    if (o->rank == LG_MAX_RANK)
      diag_usage_error(&cx->diag, "%s '%s': more than %d dims", opt, arg, LG_MAX_RANK);
    o->values[o->rank++] = v;
    if (!*p)
      break;
    if (!shape)
      diag_usage_error(&cx->diag, "%s '%s': the value must be a positive integer", opt, arg);
    p++;
  }
  if (!shape)
    o->rank = 0;
}

static void parse_overrides(Compilation *cx, Arena *arena, const lgen_options *options) {
  cx->ndims = (int)(options->ndims + options->ninput_shapes);
  cx->dims = arena_alloc(arena, sizeof *cx->dims * (size_t)(cx->ndims + 1));
  for (size_t i = 0; i < options->ndims; i++)
    parse_override(cx, arena, options->dims[i], false, &cx->dims[i]);
  for (size_t i = 0; i < options->ninput_shapes; i++)
    parse_override(cx, arena, options->input_shapes[i], true, &cx->dims[options->ndims + i]);
}

/* After loading every graph: an override that none of them used names
 * nothing (a typo, or a dim that is static already). */
static void check_overrides_used(Compilation *cx, Arena *arena, Graph **graphs, int ngraphs) {
  for (int i = 0; i < cx->ndims; i++) {
    const GraphDimOverride *o = &cx->dims[i];
    if (o->used)
      continue;
    StrBuf known = {0};
    for (int k = 0; k < ngraphs; k++) {
      const Graph *g = graphs[k];
      for (int s = 0; !o->is_shape && s < g->symbols.len; s++)
        sb_printf(&known, "%s'%s'", known.len ? ", " : "", (const char *)g->symbols.items[s]);
      for (int t = 0; o->is_shape && t < g->inputs.len; t++)
        sb_printf(&known, "%s'%s'", known.len ? ", " : "", GRAPH_VALUE(g, g->inputs.items[t])->name);
    }
    const char *list = arena_strdup(arena, sb_cstr(&known));
    sb_free(&known);
    diag_usage_error(&cx->diag, "%s '%s': no model graph has %s named '%s'%s%s%s",
                     o->is_shape ? "--input-shape" : "--dim", o->arg, o->is_shape ? "an input" : "a symbolic dim",
                     o->name, *list ? " (it has " : "", list, *list ? ")" : "");
  }
}

static Graph *load_graph(Compilation *cx, Arena *arena, const Source *src, const lgen_options *options) {
  GraphLoadOptions *load = arena_alloc(arena, sizeof *load); /* the graph keeps it */
  *load = (GraphLoadOptions){.max_constant_bytes = options->max_constant_bytes,
                             .allow_external = options->allow_external,
                             .nallow_external = (int)options->nallow_external,
                             .dims = cx->dims,
                             .ndims = cx->ndims};
  const char *dir = source_dir(src, arena);
  if (source_kind(src, options) == SRC_ONNX)
    return graph_load_onnx_pb(src, dir, &cx->module, &cx->file_deps, load, arena, &cx->diag);
  return graph_load_json(src, dir, &cx->module, &cx->file_deps, load, arena, &cx->diag);
}

static void compile_graph(Compilation *cx, Arena *arena, Graph *g, const lgen_options *options) {
  GraphKernel *gk = arena_alloc(arena, sizeof *gk);
  int nchoices;
  ConvAlgoChoice *choices = conv_choices(cx, options->name ? options->name : g->name, &nchoices, arena);
  graph_conv_algorithms(g, choices, nchoices, &gk->convs); /* a choice, not fusion: --fuse=none keeps it */
  /* always on: folding constants is not fusion, so --fuse=none keeps it */
  graph_fold_scale_shift(g, &gk->folded);
  if (fusion_enabled(options)) {
    graph_share_inputs(g, &gk->shared);
    graph_fold_diag(g, &gk->diags);
    graph_recognize_softmax(g, &gk->softmaxes);
  }
  graph_widen_f16(g, &gk->widened); /* accuracy, not fusion: --fuse=none keeps it */
  gk->k = graph_lower(g, options->name, arena, &cx->diag);
  if (channels_last_wanted(cx, gk->k, options))
    choose_layouts(gk->k, &gk->fusion.decisions, arena);
  FuseOptions fuse = fuse_options(cx, gk->k, options, arena);
  fuse_kernel(gk->k, &fuse, &gk->fusion, arena, &cx->diag);
  ir_verify_kernel(&cx->diag, gk->k);
  vec_push(arena, &cx->module.kernels, gk->k);
  vec_push(arena, &cx->graphs, gk);
}

/* Notes name the model's tensors: printable text only, so that no name
 * can end the comment line and add a key to the schedule. */
static void comment_line(StrBuf *out, const char *note) {
  sb_puts(out, "#   ");
  sb_put_printable(out, note);
  sb_putc(out, '\n');
}

static void comment_heading(StrBuf *out, const char *what, const char *kernel, const char *tail) {
  sb_printf(out, "# %s in ", what);
  sb_put_printable(out, kernel);
  sb_printf(out, ":%s\n", tail);
}

/* After the per-op schedules: each graph's fusion decisions and buffer
 * plan, as comments (a schedule file read back ignores them). */
static void print_graph_passes(Compilation *cx) {
  for (int i = 0; i < cx->fused_defs.len; i++) {
    const FusedDef *fd = cx->fused_defs.items[i];
    comment_heading(&cx->sched, "fusion", fd->k->name, "");
    for (int d = 0; d < fd->fusion.decisions.len; d++)
      comment_line(&cx->sched, fd->fusion.decisions.items[d]);
  }
  for (int i = 0; i < cx->graphs.len; i++) {
    const GraphKernel *gk = cx->graphs.items[i];
    if (gk->folded.len)
      comment_heading(&cx->sched, "folded", gk->k->name, "");
    for (int d = 0; d < gk->folded.len; d++)
      comment_line(&cx->sched, gk->folded.items[d]);
    if (gk->shared.len)
      comment_heading(&cx->sched, "input sharing", gk->k->name, "");
    for (int d = 0; d < gk->shared.len; d++)
      comment_line(&cx->sched, gk->shared.items[d]);
    if (gk->convs.len)
      comment_heading(&cx->sched, "conv algorithms", gk->k->name, "");
    for (int d = 0; d < gk->convs.len; d++)
      comment_line(&cx->sched, gk->convs.items[d]);
    if (gk->diags.len)
      comment_heading(&cx->sched, "diag folded", gk->k->name, "");
    for (int d = 0; d < gk->diags.len; d++)
      comment_line(&cx->sched, gk->diags.items[d]);
    if (gk->softmaxes.len)
      comment_heading(&cx->sched, "softmax", gk->k->name, "");
    for (int d = 0; d < gk->softmaxes.len; d++)
      comment_line(&cx->sched, gk->softmaxes.items[d]);
    if (gk->widened.len)
      comment_heading(&cx->sched, "f16", gk->k->name, "");
    for (int d = 0; d < gk->widened.len; d++)
      comment_line(&cx->sched, gk->widened.items[d]);
    comment_heading(&cx->sched, "fusion", gk->k->name, gk->fusion.decisions.len ? "" : " none");
    for (int d = 0; d < gk->fusion.decisions.len; d++)
      comment_line(&cx->sched, gk->fusion.decisions.items[d]);
    plan_print_yaml(&cx->sched, gk->k, gk->plan);
  }
}

static void run_pipeline(Compilation *cx, Arena *arena, const lgen_source *sources, size_t nsources,
                         const lgen_options *options) {
  parse_overrides(cx, arena, options);
  Source **srcs = arena_alloc(arena, sizeof *srcs * (nsources + 1));
  int nchoices;
  OpdslChoice *choices = opdsl_parse_choices(options->opdsl, &nchoices, arena, &cx->diag);
  PtrVec opdsl_files = {0};
  for (size_t i = 0; i < nsources; i++) {
    Source *src = srcs[i] = arena_alloc(arena, sizeof *src);
    src->name = arena_strdup(arena, sources[i].name);
    src->text = arena_strndup(arena, sources[i].text, sources[i].len);
    src->len = sources[i].len;
    if (is_graph_source(src, options))
      continue;
    if (is_opdsl_source(src, options)) {
      OpdslFile *file = opdsl_parse(src, arena, &cx->diag);
      vec_push(arena, &opdsl_files, file);
      opdsl_lower(file, &cx->module, choices, nchoices, arena, &cx->diag);
      continue;
    }
    AstFile *file = tc_parse(src, arena, &cx->diag);
    tc_lower(file, &cx->module, arena, &cx->diag);
  }
  opdsl_check_choices(&opdsl_files, choices, nchoices, &cx->diag);
  for (int i = 0; i < cx->module.kernels.len; i++)
    ir_verify_kernel(&cx->diag, cx->module.kernels.items[i]);
  if (options->schedule && strcmp(options->schedule, "file") == 0) {
    Source *src = arena_alloc(arena, sizeof *src);
    src->name = arena_strdup(arena, options->schedule_file->name);
    src->text = arena_strndup(arena, options->schedule_file->text, options->schedule_file->len);
    src->len = options->schedule_file->len;
    cx->schedule_file = schedule_file_parse(src, arena, &cx->diag);
  }
  /* every graph is read before any is lowered, so that a --dim or
   * --input-shape that names nothing is reported first */
  Graph **graphs = arena_alloc(arena, sizeof *graphs * (nsources + 1));
  int ngraphs = 0;
  for (size_t i = 0; i < nsources; i++)
    if (is_graph_source(srcs[i], options))
      graphs[ngraphs++] = load_graph(cx, arena, srcs[i], options);
  check_overrides_used(cx, arena, graphs, ngraphs);
  for (int i = 0; i < ngraphs; i++)
    compile_graph(cx, arena, graphs[i], options);
  /* a def's comprehensions fuse like a graph's ops (a matmul and its bias
   * add become one nest); after the graphs, which may call the defs */
  for (int i = 0; i < cx->module.kernels.len && fusion_enabled(options); i++) {
    Kernel *k = cx->module.kernels.items[i];
    if (graph_kernel(cx, k) || k->nops < 2)
      continue;
    FusedDef *fd = arena_alloc(arena, sizeof *fd);
    fd->k = k;
    FuseOptions fo = fuse_options(cx, k, options, arena);
    fuse_kernel(k, &fo, &fd->fusion, arena, &cx->diag);
    if (fd->fusion.decisions.len)
      vec_push(arena, &cx->fused_defs, fd);
  }
  const Target *target = options->target ? target_lookup(options->target) : target_default();
  if (!target)
    diag_error(&cx->diag, (Loc){0}, "unknown target '%s' (known: %s)", options->target, target_names());
  OpPlan **plans = choose_schedules(cx, arena, options, target);
  for (int i = 0; i < cx->module.kernels.len && fusion_enabled(options); i++) {
    GraphKernel *gk = graph_kernel(cx, cx->module.kernels.items[i]);
    if (!gk)
      continue;
    FuseOptions fo = fuse_options(cx, gk->k, options, arena);
    const char **keep = arena_alloc(arena, sizeof(char *) * (size_t)(fo.noverrides + 1));
    int nkeep = 0;
    for (int o = 0; o < fo.noverrides; o++)
      if (!fo.overrides[o].inline_it)
        keep[nkeep++] = fo.overrides[o].tensor;
    plan_prologues(gk->k, plans[i], &gk->fusion.decisions, arena);
    plan_row_groups(gk->k, plans[i], target, keep, nkeep, arena, &gk->fusion.decisions);
  }
  BufferPlan **buffer_plans = arena_alloc(arena, sizeof *buffer_plans * (size_t)(cx->module.kernels.len + 1));
  for (int i = 0; i < cx->module.kernels.len; i++) {
    GraphKernel *gk = graph_kernel(cx, cx->module.kernels.items[i]);
    if (!gk)
      continue;
    OpSpan *spans = arena_alloc(arena, sizeof(OpSpan) * (size_t)(gk->k->nops + 1));
    for (int j = 0; j < gk->k->nops; j++) {
      int size = plans[i][j].group_size;
      for (int m = j; m < j + (size > 1 ? size : 1); m++)
        spans[m] = (OpSpan){j, j + (size > 1 ? size : 1) - 1, -1};
      j += size > 1 ? size - 1 : 0;
    }
    for (int j = 0; j < gk->k->nops; j++) /* a prologue runs in its consumer; its result never exists */
      if (plans[i][j].is_prologue) {
        int c = plans[i][j].prologue_of;
        spans[j] = (OpSpan){spans[c].first, spans[c].last, plans[i][c].prologue_tensor};
        spans[c].unmaterialized = plans[i][c].prologue_tensor;
      }
    int64_t *bytes = arena_alloc(arena, sizeof(int64_t) * (size_t)(gk->k->ntensors + 1));
    for (int t = 0; t < gk->k->ntensors; t++)
      bytes[t] = -1;
    for (int j = 0; j < gk->k->nops; j++) /* a softmax group's chunk buffers */
      for (int c = 0; c < plans[i][j].nchunk_local; c++)
        bytes[plans[i][j].chunk_local[c]] = plans[i][j].chunk_local_bytes[c];
    buffer_plans[i] = gk->plan = plan_buffers(gk->k, spans, bytes, arena);
  }
  print_graph_passes(cx);
  TemplateSet *templates = arena_alloc(arena, sizeof *templates);
  templates_load(templates, &cx->module, &cx->file_deps, arena, &cx->diag);
  EmitOptions eo = {
      .prefix = options->prefix ? options->prefix : "",
      .checks = options->checks != 0,
      .header_name = options->header_name,
      .guard = derive_guard(arena, options),
      .input_name = nsources ? base_name(sources[0].name) : "<nothing>",
      .plans = plans,
      .target = target,
      .buffer_plans = buffer_plans,
      .separate_weights = options->separate_weights != 0,
      .templates = templates,
  };
  check_function_names(&cx->module, eo.prefix, arena, &cx->diag);
  emit_c_file(&cx->c, &cx->module, &eo, arena);
  emit_c_header(&cx->h, &cx->module, &eo, arena);
  if (eo.separate_weights)
    emit_c_weights(&cx->weights, &cx->module, &eo, arena);
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
    out->weights = options->separate_weights ? take(&cx->weights) : NULL;
    sb_free(&cx->weights);
    StrBuf deps = {0};
    for (int i = 0; i < cx->file_deps.len; i++)
      sb_printf(&deps, "%s\n", (const char *)cx->file_deps.items[i]);
    out->depends = take(&deps);
  } else {
    sb_free(&cx->weights);
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
  return status == 0 ? LGEN_OK : status == 1 ? LGEN_INPUT_ERROR : status == 3 ? LGEN_USAGE_ERROR : LGEN_INTERNAL_ERROR;
}

void lgen_output_free(lgen_output *out) {
  free(out->c_source);
  free(out->header);
  free(out->ir);
  free(out->op_list);
  free(out->schedule);
  free(out->weights);
  free(out->depends);
  free(out->diagnostics);
  memset(out, 0, sizeof *out);
}

int lgen_target_known(const char *name) { return target_lookup(name) != NULL; }
