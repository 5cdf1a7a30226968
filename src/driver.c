/* driver.c - the pipeline, one stage per line (run_pipeline):
 *   parse    .tc -> syntax tree -> IR (domain inference, bounds); a model
 *            graph (.json, after every spec: it may call their defs) ->
 *            Graph (shape inference, folding)
 *   graph    the graph passes (compile_graph, one line each)
 *   lower    Graph -> one Kernel of structured ops
 *   fuse     inlining, epilogues, inits, siblings (graph kernels and defs)
 *   schedule each op's plan (none, auto, a file), then prologues and row
 *            groups
 *   plan     each graph kernel's buffer plan
 *   emit     C, header, weights, IR text
 * --dump=STAGE prints the program after a stage (dump_* below); the notes
 * each stage records are one table per kernel (KernelRecord). */
#include "lgen.h"

#include <stdlib.h>
#include <string.h>

#include "emit/c_emit.h"
#include "frontend/opdsl.h"
#include "frontend/tc_classic.h"
#include "frontend/tc.h"
#include "frontend/graph_load.h"
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

/* One line per op: a name's newline or control byte shows as \xNN. */
static void list_ops(StrBuf *out, const Module *m) {
  StrBuf sig = {0};
  for (int i = 0; i < m->kernels.len; i++) {
    sig.len = 0;
    ir_print_signature(&sig, m->kernels.items[i]);
    sb_put_printable(out, sb_cstr(&sig));
    sb_putc(out, '\n');
  }
  sb_free(&sig);
}

/* What the graph passes, fusion and grouping decided for one kernel: one
 * record per pass, in the order they ran, printed by print_notes. */
typedef struct {
  const char *pass; /* the heading: "# PASS in KERNEL:" */
  bool always;      /* printed even when empty (" none") */
  PtrVec lines;     /* const char*: one decision each */
} NoteGroup;

/* A kernel of the module and what the stages decided for it. */
typedef struct {
  Kernel *k;
  bool graph;        /* a model graph's (else a def of a spec) */
  PtrVec notes;      /* NoteGroup* */
  BufferPlan *plan;  /* graphs: the buffer plan */
} KernelRecord;

/* Everything the compilation changes after setjmp lives behind this pointer,
 * so its values are well defined after a longjmp back. */
typedef struct {
  jmp_buf on_error;
  Diag diag;
  Module module;
  PtrVec records;   /* KernelRecord*: graph kernels, and defs that fusion changed */
  PtrVec file_deps; /* const char*: files the graph loaders read */
  ScheduleFile *schedule_file; /* --schedule=FILE, read before the graph passes */
  GraphDimOverride *dims; /* --dim and --input-shape, parsed */
  int ndims;
  const lgen_options *options;
  Arena *arena;
  StrBuf c, h, ir, list, sched, weights, dump;
} Compilation;

static KernelRecord *record_of(const Compilation *cx, const Kernel *k) {
  for (int i = 0; i < cx->records.len; i++)
    if (((KernelRecord *)cx->records.items[i])->k == k)
      return cx->records.items[i];
  return NULL;
}

static KernelRecord *graph_record(const Compilation *cx, const Kernel *k) {
  KernelRecord *r = record_of(cx, k);
  return r && r->graph ? r : NULL;
}

/* The lines of r's record for `pass` (a new record after the last one
 * of another pass). */
static PtrVec *notes(Compilation *cx, KernelRecord *r, const char *pass, bool always) {
  NoteGroup *last = r->notes.len ? r->notes.items[r->notes.len - 1] : NULL;
  if (last && strcmp(last->pass, pass) == 0)
    return &last->lines;
  for (int i = 0; i < r->notes.len; i++) /* fusion's record collects layout, prologues and row groups too */
    if (strcmp(((NoteGroup *)r->notes.items[i])->pass, pass) == 0)
      return &((NoteGroup *)r->notes.items[i])->lines;
  NoteGroup *g = arena_alloc(cx->arena, sizeof *g);
  g->pass = pass;
  g->always = always;
  vec_push(cx->arena, &r->notes, g);
  return &g->lines;
}

/* Every record of r as comments (a schedule file read back ignores them).
 * Notes name the model's tensors: printable text only, so that no name can
 * end the comment line and add a key to the schedule. */
static void print_notes(StrBuf *out, const KernelRecord *r) {
  for (int i = 0; i < r->notes.len; i++) {
    const NoteGroup *g = r->notes.items[i];
    if (!g->lines.len && !g->always)
      continue;
    sb_printf(out, "# %s in ", g->pass);
    sb_put_printable(out, r->k->name);
    sb_puts(out, g->lines.len ? ":\n" : ": none\n");
    for (int d = 0; d < g->lines.len; d++) {
      sb_puts(out, "#   ");
      sb_put_printable(out, g->lines.items[d]);
      sb_putc(out, '\n');
    }
  }
}

/* ---- --dump=STAGE ---- */

static const char *const dump_stages[] = {"parse", "graph", "lower", "fuse", "schedule", "plan", "loops"};

static bool dumping(const Compilation *cx, const char *stage) {
  const char *list = cx->options->dump;
  size_t n = strlen(stage);
  for (const char *p = list; p && *p;) {
    size_t len = strcspn(p, ",");
    if (len == n && strncmp(p, stage, n) == 0)
      return true;
    p += len + (p[len] == ',');
  }
  return false;
}

static StrBuf *dump_begin(Compilation *cx, const char *stage, const char *what) {
  sb_printf(&cx->dump, "## after %s: ", stage);
  sb_put_printable(&cx->dump, what);
  sb_putc(&cx->dump, '\n');
  return &cx->dump;
}

static void dump_kernel(Compilation *cx, const char *stage, const Kernel *k) {
  if (dumping(cx, stage))
    ir_print_kernel(dump_begin(cx, stage, k->name), k);
}

static void dump_graph(Compilation *cx, const char *stage, const Graph *g, const KernelRecord *r) {
  if (!dumping(cx, stage))
    return;
  StrBuf *out = dump_begin(cx, stage, g->name ? g->name : "graph");
  graph_print(out, g);
  for (int i = 0; r && i < r->notes.len; i++) { /* the passes' notes, before a kernel has a name */
    const NoteGroup *ng = r->notes.items[i];
    for (int d = 0; d < ng->lines.len; d++) {
      sb_printf(out, "# %s: ", ng->pass);
      sb_put_printable(out, ng->lines.items[d]);
      sb_putc(out, '\n');
    }
  }
}

/* ---- stages ---- */

static bool fusion_enabled(const lgen_options *options) {
  return !(options->fuse && strcmp(options->fuse, "none") == 0);
}

/* The schedule file's `fuse:` entries for kernel k. */
static FuseOptions fuse_options(const Compilation *cx, const Kernel *k) {
  ScheduleItem *items;
  int n = schedule_file_items(cx->schedule_file, k->name, "fuse", &items, cx->arena);
  FuseOverride *list = arena_alloc(cx->arena, sizeof *list * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    list[i] = (FuseOverride){items[i].name, items[i].value != 0, items[i].loc};
  return (FuseOptions){fusion_enabled(cx->options), n, list};
}

/* Whether graph k's activations around window ops are stored
 * channels-last: the default with fusion on (the channels-last conv, pool
 * and depthwise schedules fill vectors with channels, where channels-first
 * ones fill them with the output width, 7 at the end of ResNet-18); the
 * schedule file's `layout: given` turns it off (the last entry wins). */
static bool channels_last_wanted(const Compilation *cx, const Kernel *k) {
  ScheduleItem *items;
  int n = schedule_file_items(cx->schedule_file, k->name, "layout", &items, cx->arena);
  return fusion_enabled(cx->options) && (n == 0 || strcmp(items[n - 1].scalar, "channels_last") == 0);
}

/* The schedule file's `algorithm:` choices for the graph named `name`. */
static ConvAlgoChoice *conv_choices(const Compilation *cx, const char *name, int *count) {
  ScheduleItem *items;
  int n = schedule_file_items(cx->schedule_file, name, "algorithm", &items, cx->arena);
  ConvAlgoChoice *list = arena_alloc(cx->arena, sizeof *list * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    list[i] = (ConvAlgoChoice){items[i].name, schedule_conv_algorithm(items[i].value), items[i].loc};
  *count = n;
  return list;
}

/* One OpPlan per op of every kernel: plain (no reshape), automatic (every
 * unit dim folded, every legal chain collapsed, then scheduled from the
 * view's structure), or from a file (ops a file does not mention get the
 * automatic one; those it mentions get only what it says). */
static OpPlan **choose_schedules(Compilation *cx, const Target *target) {
  Arena *arena = cx->arena;
  const char *mode = cx->options->schedule ? cx->options->schedule : "auto";
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
      if (op->ext) { /* a template: at most its loop over rows to schedule */
        plan->view = (OpView){k, op};
        if (none)
          schedule_none(op, &plan->s);
        else
          schedule_template_auto(op, &plan->s);
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
  schedule_file_apply(cx->schedule_file, m, all, arena, &cx->diag);
  return all;
}

/* Prologues and row groups of each graph kernel: which ops run inside
 * another's loops, decided from their schedules. */
static void group_ops(Compilation *cx, OpPlan **plans, const Target *target) {
  for (int i = 0; i < cx->module.kernels.len && fusion_enabled(cx->options); i++) {
    KernelRecord *r = graph_record(cx, cx->module.kernels.items[i]);
    if (!r)
      continue;
    FuseOptions fo = fuse_options(cx, r->k);
    const char **keep = arena_alloc(cx->arena, sizeof(char *) * (size_t)(fo.noverrides + 1));
    int nkeep = 0;
    for (int o = 0; o < fo.noverrides; o++)
      if (!fo.overrides[o].inline_it)
        keep[nkeep++] = fo.overrides[o].tensor;
    plan_prologues(r->k, plans[i], notes(cx, r, "fusion", true), cx->arena);
    plan_row_groups(r->k, plans[i], target, keep, nkeep, cx->arena, notes(cx, r, "fusion", true));
  }
}

/* The schedule as a file: each op's decisions, then each kernel's notes and
 * buffer plan as comments. A graph of templates only is `G: {}`, a
 * mapping with no decisions, so that it reads back. */
static void print_schedule(StrBuf *out, const Compilation *cx, OpPlan **plans, const Kernel *only) {
  const Module *m = &cx->module;
  for (int i = 0; i < m->kernels.len; i++) {
    const Kernel *k = m->kernels.items[i];
    if (only && k != only)
      continue;
    bool any = false; /* some op has decisions: the kernel's entry is a list */
    for (int j = 0; j < k->nops; j++)
      any |= !k->ops[j].ext || k->ops[j].ext->rows_loop || plans[i][j].outline;
    for (int j = 0; j < k->nops; j++) {
      if (k->ops[j].ext)
        schedule_template_print_yaml(out, k, j, &plans[i][j], any);
      else
        schedule_print_yaml(out, k, j, &k->ops[j], &plans[i][j]);
    }
  }
  if (only)
    return;
  for (int i = 0; i < cx->records.len; i++) {
    const KernelRecord *r = cx->records.items[i];
    if (!r->graph)
      print_notes(out, r);
  }
  for (int i = 0; i < cx->records.len; i++) {
    const KernelRecord *r = cx->records.items[i];
    if (!r->graph)
      continue;
    print_notes(out, r);
    plan_print_yaml(out, r->k, r->plan);
  }
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

/* A spec (.tc, or OpDSL YAML with the --opdsl choices): parse, then lower
 * to the IR (domain inference, bounds). OpDSL files are kept in
 * opdsl_files for the check that every choice names something. */
static void compile_spec(Compilation *cx, const Source *src, const OpdslChoice *choices, int nchoices,
                         PtrVec *opdsl_files) {
  int before = cx->module.kernels.len;
  if (is_opdsl_source(src, cx->options)) {
    OpdslFile *file = opdsl_parse(src, cx->arena, &cx->diag);
    vec_push(cx->arena, opdsl_files, file);
    opdsl_lower(file, &cx->module, choices, nchoices, cx->arena, &cx->diag);
  } else if ((cx->options->input_format && strcmp(cx->options->input_format, "tc-classic") == 0) ||
             tc_classic_sniff(src->text, src->len)) {
    /* classic Tensor Comprehensions: told apart by the first parameter */
    CFile *file = tc_classic_parse(src, cx->arena, &cx->diag);
    tc_classic_lower(file, &cx->module, cx->arena, &cx->diag);
  } else {
    AstFile *file = tc_parse(src, cx->arena, &cx->diag);
    tc_lower(file, &cx->module, cx->arena, &cx->diag);
  }
  for (int i = before; i < cx->module.kernels.len; i++)
    dump_kernel(cx, "parse", cx->module.kernels.items[i]);
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

/* "NAME=V0,V1,..." (--input-value): read as the input's type when the
 * input is declared (graph_add_input); here only its form. */
static void parse_input_value(Compilation *cx, Arena *arena, const char *arg, GraphDimOverride *o) {
  const char *eq = strrchr(arg, '=');
  if (!eq || eq == arg || !eq[1] || eq[strlen(eq) - 1] == ',' || strstr(eq, ",,") || eq[1] == ',')
    diag_usage_error(&cx->diag, "--input-value '%s' is not NAME=V0,V1,...", arg);
  o->arg = arena_strdup(arena, arg);
  o->name = arena_strndup(arena, arg, (size_t)(eq - arg));
  o->text = arena_strdup(arena, eq + 1);
}

static void parse_overrides(Compilation *cx, Arena *arena, const lgen_options *options) {
  cx->ndims = (int)(options->ndims + options->ninput_shapes + options->ninput_values);
  cx->dims = arena_alloc(arena, sizeof *cx->dims * (size_t)(cx->ndims + 1));
  for (size_t i = 0; i < options->ndims; i++)
    parse_override(cx, arena, options->dims[i], false, &cx->dims[i]);
  for (size_t i = 0; i < options->ninput_shapes; i++)
    parse_override(cx, arena, options->input_shapes[i], true, &cx->dims[options->ndims + i]);
  for (size_t i = 0; i < options->ninput_values; i++)
    parse_input_value(cx, arena, options->input_values[i], &cx->dims[options->ndims + options->ninput_shapes + i]);
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
      bool by_input = o->is_shape || o->text;
      for (int s = 0; !by_input && s < g->symbols.len; s++)
        sb_printf(&known, "%s'%s'", known.len ? ", " : "", (const char *)g->symbols.items[s]);
      for (int t = 0; by_input && t < g->inputs.len; t++)
        sb_printf(&known, "%s'%s'", known.len ? ", " : "", GRAPH_VALUE(g, g->inputs.items[t])->name);
    }
    const char *list = arena_strdup(arena, sb_cstr(&known));
    sb_free(&known);
    diag_usage_error(&cx->diag, "%s '%s': no model graph has %s named '%s'%s%s%s",
                     o->text ? "--input-value" : o->is_shape ? "--input-shape" : "--dim", o->arg,
                     o->is_shape || o->text ? "an input" : "a symbolic dim",
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

/* A model graph, loaded (shape inference, folding): the graph passes (each
 * one line, each recording what it did), lowering to one kernel, kernel
 * passes, fusion. */
static void compile_graph(Compilation *cx, Graph *g) {
  Arena *arena = cx->arena;
  const lgen_options *options = cx->options;
  bool fusion = fusion_enabled(options);
  KernelRecord *r = arena_alloc(arena, sizeof *r);
  r->graph = true;
  dump_graph(cx, "parse", g, NULL);
  int nchoices;
  ConvAlgoChoice *choices = conv_choices(cx, options->name ? options->name : g->name, &nchoices);
  /* folding, choices and accuracy, not fusion: --fuse=none keeps them. A
   * scale and shift folds into a conv's filter before the conv becomes
   * another algorithm's ops. */
  graph_fold_scale_shift(g, notes(cx, r, "folded", false));
  bool auto_winograd = !options->conv_algorithm || strcmp(options->conv_algorithm, "direct") != 0;
  graph_conv_algorithms(g, choices, nchoices, auto_winograd, notes(cx, r, "conv algorithms", false));
  if (fusion)
    graph_share_inputs(g, notes(cx, r, "input sharing", false));
  if (fusion)
    graph_fold_diag(g, notes(cx, r, "diag folded", false));
  if (fusion)
    graph_recognize_softmax(g, notes(cx, r, "softmax", false));
  graph_widen_f16(g, notes(cx, r, "f16", false));
  dump_graph(cx, "graph", g, r);
  r->k = graph_lower(g, options->name, arena, &cx->diag);
  dump_kernel(cx, "lower", r->k);
  PtrVec *fused = notes(cx, r, "fusion", true);
  if (channels_last_wanted(cx, r->k))
    choose_layouts(r->k, fused, arena);
  FuseOptions fo = fuse_options(cx, r->k);
  FuseReport report = {*fused};
  fuse_kernel(r->k, &fo, &report, arena, &cx->diag);
  *fused = report.decisions;
  ir_verify_kernel(&cx->diag, r->k);
  dump_kernel(cx, "fuse", r->k);
  vec_push(arena, &cx->module.kernels, r->k);
  vec_push(arena, &cx->records, r);
}

/* A def's comprehensions fuse like a graph's ops (a matmul and its bias
 * add become one nest); after the graphs, which may call the defs. */
static void fuse_defs(Compilation *cx) {
  for (int i = 0; i < cx->module.kernels.len && fusion_enabled(cx->options); i++) {
    Kernel *k = cx->module.kernels.items[i];
    if (record_of(cx, k) || k->nops < 2)
      continue;
    KernelRecord *r = arena_alloc(cx->arena, sizeof *r);
    r->k = k;
    FuseOptions fo = fuse_options(cx, k);
    FuseReport report = {0};
    fuse_kernel(k, &fo, &report, cx->arena, &cx->diag);
    if (!report.decisions.len)
      continue;
    *notes(cx, r, "fusion", false) = report.decisions;
    vec_push(cx->arena, &cx->records, r);
    dump_kernel(cx, "fuse", k);
  }
}

/* The buffer plan of every graph kernel; NULL for the defs of specs. */
static BufferPlan **plan_buffers_all(Compilation *cx, OpPlan **plans) {
  const Module *m = &cx->module;
  BufferPlan **all = arena_alloc(cx->arena, sizeof *all * (size_t)(m->kernels.len + 1));
  for (int i = 0; i < m->kernels.len; i++) {
    KernelRecord *r = graph_record(cx, m->kernels.items[i]);
    if (r)
      all[i] = r->plan = plan_graph_buffers(r->k, plans[i], cx->arena);
    if (r && dumping(cx, "plan"))
      plan_print_yaml(dump_begin(cx, "plan", r->k->name), r->k, r->plan);
  }
  return all;
}

static void dump_schedules(Compilation *cx, OpPlan **plans) {
  for (int i = 0; i < cx->module.kernels.len && dumping(cx, "schedule"); i++) {
    const Kernel *k = cx->module.kernels.items[i];
    StrBuf *out = dump_begin(cx, "schedule", k->name);
    print_schedule(out, cx, plans, k);
    const KernelRecord *r = record_of(cx, k);
    if (r)
      print_notes(out, r);
  }
}

static Source *copy_source(Arena *arena, const lgen_source *s) {
  Source *src = arena_alloc(arena, sizeof *src);
  src->name = arena_strdup(arena, s->name);
  src->text = arena_strndup(arena, s->text, s->len);
  src->len = s->len;
  return src;
}

static void run_pipeline(Compilation *cx, const lgen_source *sources, size_t nsources) {
  Arena *arena = cx->arena;
  const lgen_options *options = cx->options;
  parse_overrides(cx, arena, options);
  Source **srcs = arena_alloc(arena, sizeof *srcs * (nsources + 1));
  for (size_t i = 0; i < nsources; i++)
    srcs[i] = copy_source(arena, &sources[i]);
  int nchoices;
  OpdslChoice *choices = opdsl_parse_choices(options->opdsl, &nchoices, arena, &cx->diag);
  PtrVec opdsl_files = {0};
  for (size_t i = 0; i < nsources; i++)
    if (!is_graph_source(srcs[i], options))
      compile_spec(cx, srcs[i], choices, nchoices, &opdsl_files);
  opdsl_check_choices(&opdsl_files, choices, nchoices, &cx->diag);
  for (int i = 0; i < cx->module.kernels.len; i++)
    ir_verify_kernel(&cx->diag, cx->module.kernels.items[i]);
  if (options->schedule && strcmp(options->schedule, "file") == 0)
    cx->schedule_file = schedule_file_parse(copy_source(arena, options->schedule_file), arena, &cx->diag);
  /* every graph is read before any is lowered, so that a --dim or
   * --input-shape that names nothing is reported first */
  Graph **graphs = arena_alloc(arena, sizeof *graphs * (nsources + 1));
  int ngraphs = 0;
  for (size_t i = 0; i < nsources; i++)
    if (is_graph_source(srcs[i], options))
      graphs[ngraphs++] = load_graph(cx, arena, srcs[i], options);
  check_overrides_used(cx, arena, graphs, ngraphs);
  for (int i = 0; i < ngraphs; i++)
    compile_graph(cx, graphs[i]);
  fuse_defs(cx);
  const Target *target = options->target ? target_lookup(options->target) : target_default();
  if (!target) {
    char known[256];
    target_names(known, sizeof known);
    diag_error(&cx->diag, (Loc){0}, "unknown target '%s' (known: %s)", options->target, known);
  }
  OpPlan **plans = choose_schedules(cx, target);
  group_ops(cx, plans, target);
  bool *graph = arena_alloc(arena, sizeof(bool) * (size_t)(cx->module.kernels.len + 1));
  for (int i = 0; i < cx->module.kernels.len; i++)
    graph[i] = graph_record(cx, cx->module.kernels.items[i]) != NULL;
  schedule_check_outlines(&cx->module, plans, graph, &cx->diag);
  dump_schedules(cx, plans);
  BufferPlan **buffer_plans = plan_buffers_all(cx, plans);
  print_schedule(&cx->sched, cx, plans, NULL);
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
      .constant_values = options->constant_values != 0,
      .templates = templates,
      .diag = &cx->diag,
      .dump_loops = dumping(cx, "loops") ? &cx->dump : NULL,
      .abi_view = options->abi && strcmp(options->abi, "view") == 0,
  };
  if (options->abi && !eo.abi_view && strcmp(options->abi, "dense") != 0)
    diag_error(&cx->diag, (Loc){0}, "unknown ABI '%s' (known: dense, view)", options->abi);
  check_function_names(&cx->module, eo.prefix, arena, &cx->diag);
  check_outline_names(&cx->module, plans, eo.prefix, options->separate_weights && options->weights_blob, arena,
                      &cx->diag);
  if (eo.separate_weights && options->weights_blob)
    eo.blob = emit_weights_layout(&cx->module, &eo, arena);
  emit_c_file(&cx->c, &cx->module, &eo, arena);
  emit_c_header(&cx->h, &cx->module, &eo, arena);
  if (eo.blob)
    emit_weights_blob(&cx->weights, eo.blob);
  else if (eo.separate_weights)
    emit_c_weights(&cx->weights, &cx->module, &eo, arena);
  if (!options->no_ir)
    ir_print_module(&cx->ir, &cx->module);
  list_ops(&cx->list, &cx->module);
}

int lgen_compile(const lgen_source *sources, size_t nsources, const lgen_options *options, lgen_output *out) {
  memset(out, 0, sizeof *out);
  Arena *arena = arena_new();
  Compilation *cx = arena_alloc(arena, sizeof *cx);
  cx->diag.on_error = &cx->on_error;
  cx->options = options;
  cx->arena = arena;
  int status = setjmp(cx->on_error);
  if (status == 0) {
    run_pipeline(cx, sources, nsources);
    out->c_source = take(&cx->c);
    out->header = take(&cx->h);
    out->ir = take(&cx->ir);
    out->op_list = take(&cx->list);
    out->schedule = take(&cx->sched);
    out->weights_size = cx->weights.len;
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
  out->dump = take(&cx->dump); /* the stages before a failure too */
  arena_free(arena);
  return status == 0                   ? LGEN_OK
         : status == DIAG_UNWIND_INPUT ? LGEN_INPUT_ERROR
         : status == DIAG_UNWIND_USAGE ? LGEN_USAGE_ERROR
                                       : LGEN_INTERNAL_ERROR; /* DIAG_UNWIND_BUG or _IO */
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
  free(out->dump);
  memset(out, 0, sizeof *out);
}

int lgen_target_known(const char *name) { return target_lookup(name) != NULL; }

void lgen_target_names(char *buf, size_t size) { target_names(buf, size); }

int lgen_dump_stage_known(const char *name) {
  for (size_t i = 0; i < sizeof dump_stages / sizeof *dump_stages; i++)
    if (strcmp(dump_stages[i], name) == 0)
      return 1;
  return 0;
}
