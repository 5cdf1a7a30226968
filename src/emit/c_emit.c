/* c_emit.c - C99 source and header files from IR kernels (see c_emit.h):
 * file layout, preludes, signatures, doc comments, each def's body and a
 * graph's three functions. The bodies are loop trees (loops/loops.h) that
 * the builders below it make (c_loops.c, c_ext.c, c_checks.c, c_graph.c)
 * and loops_print_c writes.
 *
 * Calls: c_names.c, c_expr.c, c_runtime.c, c_access.c, c_consts.c, c_checks.c,
 *   c_loops.c, c_view.c, c_graph.c. */
#include "emit/c_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One line of file-level C (function bodies are loop trees; these are the
 * lines around them). A statement over LOOPS_WIDTH columns is broken as
 * the loop printer breaks them (loops_put_line); preprocessor lines and
 * text of several lines go out as they are. */
static void line(Emitter *e, const char *fmt, ...) LG_PRINTF(2, 3);
static void line(Emitter *e, const char *fmt, ...) {
  StrBuf text = {0};
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&text, fmt, ap);
  va_end(ap);
  const char *s = sb_cstr(&text);
  int lead = (int)strspn(s, " ");
  if (s[lead] == '#' || strchr(s, '\n')) {
    sb_puts(e->out, s);
    sb_putc(e->out, '\n');
  } else {
    loops_put_line(e->out, lead, lead + 4, s + lead);
  }
  sb_free(&text);
}

/* ---- signatures ---- */

/* A declaration "T f(params)" and `tail` (";" or ""), its parameters
 * broken onto lines aligned after the parenthesis where it is long. */
static void put_decl(StrBuf *out, StrBuf *decl, const char *tail) {
  sb_puts(decl, tail);
  const char *text = sb_cstr(decl), *paren = strchr(text, '(');
  loops_put_line(out, 0, paren ? (int)(paren - text) + 1 : 4, text);
  sb_free(decl);
}

/* The first line of a block comment, "/\* text", broken after commas into
 * " *   " lines where it is long. */
static void put_comment_head(StrBuf *out, const char *text) {
  size_t col = 3;
  bool first = true;
  sb_puts(out, "/* ");
  while (*text) {
    const char *comma = strstr(text, ", ");
    size_t n = comma ? (size_t)(comma - text) + 1 : strlen(text);
    if (!first && col + 1 + n > LOOPS_WIDTH) {
      sb_puts(out, "\n *   ");
      col = 5;
    } else if (!first) {
      sb_putc(out, ' ');
      col++;
    }
    sb_putn(out, text, n);
    col += n;
    text += n;
    text += *text == ' ';
    first = false;
  }
  sb_putc(out, '\n');
}

/* "void NAME(params)"; with `view` (--abi=view, c_view.c) each tensor is a
 * pointer to its strided view's descriptor. */
static void signature(Emitter *e, StrBuf *out, const char *restrict_kw, const char *name, bool view) {
  const Kernel *k = e->k;
  sb_printf(out, "void %s(", name);
  for (int i = 0; i < k->ntensors; i++) {
    const TensorParam *t = &k->tensors[i];
    if (view)
      sb_printf(out, "%sconst %s *%s", i ? ", " : "", view_type_name(e->arena, t->type, t->rank), e->kn.tensors[i]);
    else
      sb_printf(out, "%s%s%s *%s %s", i ? ", " : "", t->is_output ? "" : "const ", c_type_name(t->type),
                restrict_kw, e->kn.tensors[i]);
  }
  if (k->nsizes)
    sb_printf(out, ", %s", size_list(e, true));
  for (int i = 0; i < k->nattrs; i++) {
    const AttrParam *a = &k->attrs[i];
    /* contracts.md: integer vectors and arrays are int64_t, scalars keep their type */
    bool vector = a->ndims || a->is_array;
    const char *type = elem_type_is_float(a->type) || !vector ? c_type_name(a->type) : "int64_t";
    if (a->is_array)
      sb_printf(out, ", const %s *%s, int64_t %s", type, e->kn.attrs[i], e->kn.attr_counts[i]);
    else if (a->ndims)
      sb_printf(out, ", const %s %s[%lld]", type, e->kn.attrs[i], (long long)a->count);
    else
      sb_printf(out, ", %s %s", type, e->kn.attrs[i]);
  }
  sb_putc(out, ')');
}

/* The parameters `signature` declares, as the variables a function body
 * starts with; *count gets their number. */
static LoopVar *signature_params(Emitter *e, bool view, int *count) {
  const Kernel *k = e->k;
  Arena *a = e->arena;
  LoopVar *v = arena_alloc(a, sizeof *v * (size_t)(k->ntensors + k->nsizes + 2 * k->nattrs + 1));
  int n = 0;
  for (int i = 0; i < k->ntensors; i++) {
    const TensorParam *t = &k->tensors[i];
    v[n].type = view ? arena_printf(a, "const %s *", view_type_name(a, t->type, t->rank))
                     : arena_printf(a, "%s%s *restrict", t->is_output ? "" : "const ", c_type_name(t->type));
    v[n++].name = e->kn.tensors[i];
  }
  for (int i = 0; i < k->nsizes; i++)
    v[n++] = (LoopVar){"int64_t", e->kn.sizes[i]};
  for (int i = 0; i < k->nattrs; i++) {
    const AttrParam *at = &k->attrs[i];
    bool vector = at->ndims || at->is_array;
    const char *type = elem_type_is_float(at->type) || !vector ? c_type_name(at->type) : "int64_t";
    v[n].type = vector ? arena_printf(a, "const %s *", type) : type; /* an array parameter is a pointer */
    v[n++].name = e->kn.attrs[i];
    if (at->is_array)
      v[n++] = (LoopVar){"int64_t", e->kn.attr_counts[i]};
  }
  *count = n;
  return v;
}

/* text as " * " lines of a block comment, words wrapped at LOOPS_WIDTH
 * (a word longer than a line gets a line of its own). */
static void put_comment_body(StrBuf *out, const char *text) {
  size_t col = 0;
  while (*text) {
    while (*text == ' ')
      text++;
    size_t n = strcspn(text, " ");
    if (!n)
      break;
    if (col && col + 1 + n > LOOPS_WIDTH) {
      sb_putc(out, '\n');
      col = 0;
    }
    if (!col) {
      sb_puts(out, " *");
      col = 2;
    }
    sb_putc(out, ' ');
    sb_putn(out, text, n);
    col += 1 + n;
    text += n;
  }
  if (col)
    sb_putc(out, '\n');
}

static void doc_comment(Emitter *e) {
  const Kernel *k = e->k;
  StrBuf sb = {0};
  ir_print_signature(&sb, k);
  put_comment_head(e->out, c_comment_text(e->arena, sb_cstr(&sb)));
  sb_free(&sb);
  if (k->doc) {
    /* first non-blank line of the doc string, without a comment terminator */
    const char *p = k->doc;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
      p++;
    size_t n = strcspn(p, "\r\n");
    if (n)
      put_comment_body(e->out, c_comment_text(e->arena, arena_strndup(e->arena, p, n)));
  }
  /* Whether an output's value on entry matters: it does when the first
   * comprehension that touches the output reads it. */
  for (int t = 0; t < k->ntensors; t++) {
    if (!k->tensors[t].is_output)
      continue;
    for (int i = 0; i < k->nops; i++) {
      const StructuredOp *op = &k->ops[i];
      /* 1 written only, 2 read */
      int touched = op_reads_tensor(op, t) ? 2 : op_writes_tensor(op, t) ? 1 : 0;
      if (!touched)
        continue;
      put_comment_body(e->out, arena_printf(e->arena,
                                            touched == 2 ? "Updates %s: its value on entry is read (accumulated into)."
                                                         : "Overwrites %s.",
                                            c_comment_text(e->arena, k->tensors[t].name)));
      break;
    }
  }
  sb_puts(e->out, " */\n");
}


/* --dump=loops: the function's tree, before it becomes C. */
static void dump_loops(Emitter *e, const Kernel *k, const LoopList *tree) {
  StrBuf *out = e->dump;
  if (!out)
    return;
  sb_puts(out, "## after loops: ");
  sb_put_printable(out, k->name);
  sb_putc(out, '\n');
  loops_print_dump(out, tree, 0);
}

static void function_body(Emitter *e, const char *text);

static void emit_kernel(Emitter *e, const Kernel *k, int index) {
  e->k = k;
  kernel_names_init(&e->kn, k, e->opt->prefix, e->arena);
  LoopList tree = {0};
  e->cur = &tree;
  if (e->opt->checks)
    emit_checks(e);
  for (int i = 0; i < k->nops; i++) {
    /* the loops index the op's reshaped view of the tensors; several
     * comprehensions get a block each, which owns its names */
    const OpPlan *plan = &e->opt->plans[index][i];
    int mark = names_mark(&e->kn.table);
    e->cur = k->nops > 1 ? &put(e, loops_block(e->arena, REGION_NONE))->body : &tree;
    emitter_view(e, plan->view.k);
    emit_op(e, plan->view.op, &plan->s, i, THREADS_OWN, NULL);
    emitter_view(e, k);
    e->cur = &tree;
    names_release(&e->kn.table, mark);
  }
  e->cur = NULL;
  int nparams;
  const LoopVar *params = signature_params(e, false, &nparams);
  loops_tidy_names(e->arena, &tree, params, nparams, names_plain, &e->kn.table);
  dump_loops(e, k, &tree);
  const char *dense_fn = e->opt->abi_view ? arena_printf(e->arena, "lgen_dense_%s", e->kn.function) : NULL;
  emit_procs(e, e->out, &tree, params, nparams,
              arena_printf(e->arena, dense_fn ? "%s_block" : "lgen_%s_block", dense_fn ? dense_fn : e->kn.function));
  StrBuf body = {0};
  loops_print_c(&body, &tree, 1);

  StrBuf sig = {0};
  if (e->opt->abi_view) {
    /* --abi=view: this is the kernel the views run when they are dense
     * (c_view.c); lgen_ names are never a def's */
    sb_printf(e->out, "/* %s on dense row-major arrays: what its views run when they are dense */\n",
              e->kn.function);
    sb_puts(&sig, "static ");
    signature(e, &sig, "restrict", dense_fn, false);
    put_decl(e->out, &sig, "");
    function_body(e, sb_cstr(&body));
    sb_free(&body);
    sb_putc(e->out, '\n');
    LoopList view = {0};
    view_body(e, &view, dense_fn, index);
    params = signature_params(e, true, &nparams);
    emit_procs(e, e->out, &view, params, nparams, arena_printf(e->arena, "lgen_%s_block", e->kn.function));
    loops_print_c(&body, &view, 1);
    doc_comment(e);
    signature(e, &sig, "restrict", e->kn.function, true);
  } else {
    doc_comment(e);
    signature(e, &sig, "restrict", e->kn.function, false);
  }
  put_decl(e->out, &sig, "");
  function_body(e, sb_cstr(&body));
  sb_free(&body);
}

/* A def's function body: `text` after the parameters it does not use. */
static void function_body(Emitter *e, const char *text) {
  const Kernel *k = e->k;
  sb_puts(e->out, "{\n");
  /* parameters that only describe shapes would trip -Wunused-parameter */
  for (int i = 0; i < k->ntensors; i++)
    if (!loops_text_mentions(text, e->kn.tensors[i]))
      line(e, "  (void)%s;", e->kn.tensors[i]);
  for (int i = 0; i < k->nsizes; i++)
    if (!loops_text_mentions(text, e->kn.sizes[i]))
      line(e, "  (void)%s;", e->kn.sizes[i]);
  for (int i = 0; i < k->nattrs; i++) {
    if (!loops_text_mentions(text, e->kn.attrs[i]))
      line(e, "  (void)%s;", e->kn.attrs[i]);
    if (k->attrs[i].is_array && !loops_text_mentions(text, e->kn.attr_counts[i]))
      line(e, "  (void)%s;", e->kn.attr_counts[i]);
  }
  sb_puts(e->out, text);
  sb_puts(e->out, "}\n");
}

/* ---- model graphs (contracts.md section 3) ----
 * A graph kernel G is three functions: G_workspace_size (the buffer plan's
 * total), G_run (each op's loop nest in a block that first points its
 * intermediates, aliases and constants at their memory) and G (mallocs an
 * aligned workspace around G_run). Constants are file-scope arrays. */

static const BufferPlan *graph_plan(const EmitOptions *opt, int index) {
  return opt->buffer_plans ? opt->buffer_plans[index] : NULL;
}

static bool module_has_graphs(const Module *m, const EmitOptions *opt) {
  for (int i = 0; i < m->kernels.len; i++)
    if (graph_plan(opt, i))
      return true;
  return false;
}


/* "x: f32(N, 784)" */
static const char *size_by_name(void *ctx, int i) { return ((const Kernel *)ctx)->sizes[i].name; }
/* A tensor's shape is in sizes and attributes: it has no dims to name. */
static const char *no_dim(void *ctx, int i) {
  (void)ctx, (void)i;
  return "?";
}

static void print_tensor_decl(StrBuf *out, const Kernel *k, int t) {
  const TensorParam *tp = &k->tensors[t];
  AffineNames names = {no_dim, size_by_name, NULL, (void *)k, false};
  sb_printf(out, "%s: %s(", tp->name, elem_type_name(tp->type));
  for (int i = 0; i < tp->rank; i++) {
    if (i)
      sb_puts(out, ", ");
    affine_print(out, tp->shape[i], &names);
  }
  sb_putc(out, ')');
}

static void graph_doc(Emitter *e, StrBuf *out, int index, int64_t workspace_static) {
  const Kernel *k = e->k;
  int nconst = 0, nwork = 0;
  /* names and dims are the model's own text: sanitised as a whole */
  StrBuf decl = {0};
  sb_printf(&decl, "model graph %s: (", k->name);
  for (int pass = 0; pass < 2; pass++) {
    bool first = true;
    for (int t = 0; t < k->ntensors; t++)
      if (k->tensors[t].storage == TS_PARAM && k->tensors[t].is_output == (pass == 1)) {
        sb_puts(&decl, first ? "" : ", ");
        print_tensor_decl(&decl, k, t);
        first = false;
      }
    sb_puts(&decl, pass == 0 ? ") -> (" : ")");
  }
  put_comment_head(out, c_comment_text(e->arena, sb_cstr(&decl)));
  sb_free(&decl);
  for (int t = 0; t < k->ntensors; t++) {
    nconst += k->tensors[t].storage == TS_CONST;
    nwork += k->tensors[t].storage == TS_WORKSPACE;
  }
  sb_printf(out, " * %d op%s, %d constant%s, %d intermediate%s in the workspace", k->nops, k->nops == 1 ? "" : "s",
            nconst, nconst == 1 ? "" : "s", nwork, nwork == 1 ? "" : "s");
  if (workspace_static >= 0)
    sb_printf(out, " (%lld bytes)", (long long)workspace_static);
  sb_printf(out, ".\n * %s_run uses the caller's workspace (64-byte aligned, %s_workspace_size bytes);\n",
            e->kn.function, e->kn.function);
  if (graph_wants_region(e, index))
    sb_printf(out, " * its last %d bytes keep the run's thread count (one thread or the full team,\n"
                   " * whichever ran faster) from run to run.\n",
              LG_TEAM_BYTES);
  sb_printf(out, " * %s allocates one and returns 0, or -1 if that fails.\n */\n", e->kn.function);
}

/* The parameters: tensors (inputs, then outputs), then sizes. */
static void graph_params(const Emitter *e, StrBuf *out, const char *restrict_kw, bool types) {
  const Kernel *k = e->k;
  bool first = true;
  for (int t = 0; t < k->ntensors; t++) {
    const TensorParam *tp = &k->tensors[t];
    if (tp->storage != TS_PARAM)
      continue;
    if (types)
      sb_printf(out, "%s%s%s *%s %s", first ? "" : ", ", tp->is_output ? "" : "const ", c_type_name(tp->type),
                restrict_kw, e->kn.tensors[t]);
    else
      sb_printf(out, "%s%s", first ? "" : ", ", e->kn.tensors[t]);
    first = false;
  }
  if (k->nsizes)
    sb_printf(out, "%s%s", first ? "" : ", ", size_list(e, types));
}

typedef struct {
  const char *size_fn, *run_fn, *workspace;
  const char *weights; /* --weights=FILE.bin: G_run's and G's blob parameter; NULL otherwise */
} GraphNames;

/* The three functions' declarations, each followed by `tail` (";" for
 * prototypes); G_workspace_size's (which = 0), G_run's (1) or G's (2). */
static void graph_declaration(const Emitter *e, StrBuf *out, const GraphNames *gn, const char *restrict_kw,
                              const char *tail, int which) {
  const Kernel *k = e->k;
  StrBuf d = {0};
  if (which == 0) {
    sb_printf(&d, "size_t %s(%s)", gn->size_fn, k->nsizes ? size_list(e, true) : "void");
  } else if (which == 1) {
    sb_printf(&d, "void %s(", gn->run_fn);
    graph_params(e, &d, restrict_kw, true);
    if (gn->weights)
      sb_printf(&d, ", const void *%s %s", restrict_kw, gn->weights);
    sb_printf(&d, ", void *%s %s)", restrict_kw, gn->workspace);
  } else {
    sb_printf(&d, "int %s(", e->kn.function);
    graph_params(e, &d, restrict_kw, true);
    if (gn->weights)
      sb_printf(&d, ", const void *%s %s", restrict_kw, gn->weights);
    sb_putc(&d, ')');
  }
  put_decl(out, &d, tail);
}

static void graph_prototypes(const Emitter *e, StrBuf *out, const GraphNames *gn, const char *restrict_kw) {
  for (int which = 0; which < 3; which++)
    graph_declaration(e, out, gn, restrict_kw, ";", which);
}

static GraphNames graph_names(Emitter *e) {
  GraphNames gn;
  gn.size_fn = arena_printf(e->arena, "%s_workspace_size", e->kn.function);
  gn.run_fn = arena_printf(e->arena, "%s_run", e->kn.function);
  gn.workspace = names_claim(&e->kn.table, "workspace");
  gn.weights = e->opt->blob ? names_claim(&e->kn.table, "weights") : NULL;
  return gn;
}


/* G_run's pointers into the weights blob: the entries of graph `index`
 * that its body reads (`used` has their symbols, the body scanned). */
static void blob_pointers(Emitter *e, int index, const NameSet *used, const char *weights) {
  const WeightsLayout *l = e->opt->blob;
  for (int i = 0; i < l->n; i++) {
    const WeightsEntry *w = &l->entries[i];
    if (w->graph != index || !nameset_seen(used, w->symbol))
      continue;
    const char *type = c_type_name(w->type);
    line(e, "  const %s *const %s = (const %s *)((const unsigned char *)%s + %lld);", type, w->symbol, type,
         weights, (long long)w->offset);
  }
}

/* Scans text, G_run's body, into set, without its -DLGEN_PROFILE lines
 * (the printer's `#ifdef LGEN_PROFILE` ... `#endif`): what G_run is when
 * compiled without it, which decides the (void) lines of unused
 * parameters. The text is cut at each such block for the scan (a NUL
 * written there for the while), not copied: at 10^5 graph nodes it is
 * most of the C. */
static void scan_without_profile(NameSet *set, char *text) {
  static const char open[] = "#ifdef LGEN_PROFILE\n", close[] = "\n#endif\n";
  for (char *p = text; *p;) {
    char *at = strstr(p, open);
    while (at && at != text && at[-1] != '\n')
      at = strstr(at + 1, open);
    if (!at) {
      nameset_scan(set, p);
      break;
    }
    *at = '\0';
    nameset_scan(set, p);
    *at = open[0];
    const char *end = strstr(at, close);
    p = end ? (char *)end + sizeof close - 1 : at + strlen(at);
  }
}

/* -DLGEN_PROFILE's helpers, once per file with graphs (all under the
 * macro): the clock, each graph's laps, and the table. Thread 0 keeps the
 * time: in the graph's region every op ends where the threads meet. */
static const char *const profile_prelude =
    "#ifdef LGEN_PROFILE\n"
    "/* -DLGEN_PROFILE: each graph's run times its groups (an op with what is\n"
    " * fused into it, or a row-fused group) and counts their floating-point\n"
    " * operations; NAME_profile(FILE *) prints the table, NAME_profile_reset()\n"
    " * clears it. The counters are static: profile one run at a time. */\n"
    "#if defined(_OPENMP)\n"
    "static inline int lgen_profile_keeper(void) { return omp_get_thread_num() == 0; }\n"
    "#else\n"
    "static inline int lgen_profile_keeper(void) { return 1; }\n"
    "#endif\n"
    "#if defined(CLOCK_MONOTONIC)\n"
    "static inline double lgen_profile_now(void) {\n"
    "  struct timespec t;\n"
    "  clock_gettime(CLOCK_MONOTONIC, &t);\n"
    "  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;\n"
    "}\n"
    "#elif defined(_OPENMP)\n"
    "static inline double lgen_profile_now(void) { return omp_get_wtime(); }\n"
    "#else /* no POSIX clock: processor time */\n"
    "static inline double lgen_profile_now(void) { return (double)clock() / CLOCKS_PER_SEC; }\n"
    "#endif\n"
    "typedef struct {\n"
    "  double last;    /* the clock at the last group's end */\n"
    "  long long runs; /* calls of the graph's run */\n"
    "  int n;          /* groups */\n"
    "  double *seconds, *flops;\n"
    "  long long *calls;\n"
    "  const char *const *ops; /* the graph nodes each group carries */\n"
    "} lgen_profile;\n"
    "static inline void lgen_profile_start(lgen_profile *p) {\n"
    "  if (lgen_profile_keeper()) {\n"
    "    p->runs++;\n"
    "    p->last = lgen_profile_now();\n"
    "  }\n"
    "}\n"
    "static inline void lgen_profile_lap(lgen_profile *p, int group, double flops) {\n"
    "  if (lgen_profile_keeper()) {\n"
    "    double now = lgen_profile_now();\n"
    "    p->seconds[group] += now - p->last;\n"
    "    p->flops[group] += flops;\n"
    "    p->calls[group]++;\n"
    "    p->last = now;\n"
    "  }\n"
    "}\n"
    "static void lgen_profile_clear(lgen_profile *p) {\n"
    "  p->runs = 0;\n"
    "  for (int i = 0; i < p->n; i++) {\n"
    "    p->seconds[i] = p->flops[i] = 0;\n"
    "    p->calls[i] = 0;\n"
    "  }\n"
    "}\n"
    "static void lgen_profile_print(FILE *f, const char *graph, const lgen_profile *p) {\n"
    "  double total = 0;\n"
    "  for (int i = 0; i < p->n; i++)\n"
    "    total += p->seconds[i];\n"
    "  fprintf(f, \"lgen profile of %s: %lld runs, %.3f ms, %.3f ms a run\\n\", graph, p->runs, 1e3 * total,\n"
    "          p->runs ? 1e3 * total / (double)p->runs : 0.0);\n"
    "  fprintf(f, \"%5s %8s %11s %7s %11s %9s  %s\\n\", \"group\", \"calls\", \"total ms\", \"share\", \"FLOP/call\",\n"
    "          \"GFLOP/s\", \"graph ops\");\n"
    "  for (int i = 0; i < p->n; i++) {\n"
    "    double share = total > 0 ? 100 * p->seconds[i] / total : 0.0;\n"
    "    double per_call = p->calls[i] ? p->flops[i] / (double)p->calls[i] : 0.0;\n"
    "    fprintf(f, \"%5d %8lld %11.3f %6.1f%% %11.5g \", i + 1, p->calls[i], 1e3 * p->seconds[i], share,\n"
    "            per_call);\n"
    "    if (p->flops[i] > 0 && p->seconds[i] > 0)\n"
    "      fprintf(f, \"%9.2f\", 1e-9 * p->flops[i] / p->seconds[i]);\n"
    "    else\n"
    "      fprintf(f, \"%9s\", \"-\");\n"
    "    fprintf(f, \"  %s\\n\", p->ops[i]);\n"
    "  }\n"
    "}\n"
    "#endif\n";

/* `text` (escaped already) as an initializer line "text", split into
 * adjacent literals after a space where the line would pass 100 columns
 * (a space is never inside an escape sequence). */
static void put_string_literal(StrBuf *out, const char *text) {
  enum { PIECE = 90 };
  size_t n = strlen(text);
  do {
    size_t len = n;
    if (n > PIECE) {
      len = PIECE;
      while (len > 0 && text[len - 1] != ' ')
        len--;
      if (len == 0) /* no space early enough: the first one after */
        for (len = PIECE; len < n && text[len - 1] != ' '; len++)
          ;
    }
    sb_puts(out, "  \"");
    sb_putn(out, text, len);
    sb_puts(out, len == n ? "\",\n" : "\"\n");
    text += len;
    n -= len;
  } while (n > 0);
}

/* The graph's profile data (before G_run) or its two functions (after G). */
static void profile_data(Emitter *e, const ProfileGroups *g) {
  const char *f = e->kn.function;
  int n = g->n ? g->n : 1;
  sb_puts(e->out, "#ifdef LGEN_PROFILE\n");
  sb_printf(e->out, "static const char *const %s_profile_ops[%d] = {\n", f, n);
  for (int i = 0; i < g->n; i++)
    put_string_literal(e->out, g->ops[i]);
  if (!g->n)
    sb_puts(e->out, "  \"\",\n");
  sb_puts(e->out, "};\n");
  sb_printf(e->out, "static double %s_profile_seconds[%d], %s_profile_flops[%d];\n", f, n, f, n);
  sb_printf(e->out, "static long long %s_profile_calls[%d];\n", f, n);
  loops_put_line(e->out, 0, 4,
                 arena_printf(e->arena, "static lgen_profile %s = {0, 0, %d, %s_profile_seconds, %s_profile_flops, "
                                        "%s_profile_calls, %s_profile_ops};",
                              g->state, g->n, f, f, f, f));
  sb_puts(e->out, "#endif\n");
}

static void profile_functions(Emitter *e, const ProfileGroups *g) {
  const char *f = e->kn.function;
  sb_puts(e->out, "#ifdef LGEN_PROFILE\n\n");
  sb_printf(e->out, "void %s_profile(FILE *f)\n{\n  lgen_profile_print(f, \"%s\", &%s);\n}\n\n", f, f, g->state);
  sb_printf(e->out, "void %s_profile_reset(void)\n{\n  lgen_profile_clear(&%s);\n}\n", f, g->state);
  sb_puts(e->out, "#endif\n");
}

static void emit_graph(Emitter *e, const Kernel *k, int index, const BufferPlan *plan) {
  e->k = k;
  e->consts.graph = index;
  kernel_names_init_outlines(&e->kn, k, e->opt->prefix, e->opt->plans[index], e->arena);
  GraphNames gn = graph_names(e);
  LoopList tree = {0};
  ProfileGroups groups = {arena_printf(e->arena, "%s_profile_data", e->kn.function), 0, 0, NULL};
  PtrVec outlines = {0};
  graph_run_body(e, &tree, index, plan, gn.workspace, &groups, &outlines);
  /* G_run's parameters, as graph_declaration writes them: its register
   * blocks' functions are outlined (and printed into `procs`) first */
  LoopVar *params = arena_alloc(e->arena, sizeof *params * (size_t)(k->ntensors + k->nsizes + 2));
  int nparams = 0;
  for (int t = 0; t < k->ntensors; t++)
    if (k->tensors[t].storage == TS_PARAM)
      params[nparams++] = (LoopVar){arena_printf(e->arena, "%s%s *restrict", k->tensors[t].is_output ? "" : "const ",
                                                 c_type_name(k->tensors[t].type)),
                                    e->kn.tensors[t]};
  for (int i = 0; i < k->nsizes; i++)
    params[nparams++] = (LoopVar){"int64_t", e->kn.sizes[i]};
  if (gn.weights)
    params[nparams++] = (LoopVar){"const void *restrict", gn.weights};
  params[nparams++] = (LoopVar){"void *restrict", gn.workspace};
  loops_tidy_names(e->arena, &tree, params, nparams, names_plain, &e->kn.table);
  dump_loops(e, k, &tree);
  graph_outlines_tidy(e, &outlines, gn.workspace);
  graph_outlines_dump(e, &outlines);
  StrBuf procs = {0};
  emit_procs(e, &procs, &tree, params, nparams, arena_printf(e->arena, "lgen_%s_block", e->kn.function));
  /* G_run's body is printed where it goes, at the end of the output; what
   * goes before it (which depends on what the body mentions) is written
   * into `head`, then put in front of it: the body, most of a big graph's
   * C, exists once and is never copied */
  StrBuf *out = e->out, head = {0};
  size_t at = out->len;
  loops_print_c(out, &tree, 1);
  sb_putc(out, '\0'); /* out->data exists; the NUL is taken off again below */
  out->len--;
  e->out = &head;
  char *body = out->data + at; /* out is not written to until head goes in */
  StrBuf outlined = {0}; /* the groups that are functions of their own */
  graph_outline_definitions(e, &outlines, &outlined, index, gn.workspace);
  sb_puts(&head, sb_cstr(&procs)); /* before G_run's doc: the functions G_run calls */
  if (outlined.len || procs.len) {
    StrBuf both = {0};
    sb_printf(&both, "%s%s%s", body, sb_cstr(&outlined), sb_cstr(&procs));
    graph_constants(e, e->consts.defs, false, sb_cstr(&both));
    sb_free(&both);
  } else {
    graph_constants(e, e->consts.defs, false, body);
  }
  sb_free(&procs);

  int64_t scratch_static;
  const char *scratch = graph_scratch_bytes(e, index, &scratch_static);
  int64_t workspace_static = plan->total_static >= 0 && scratch_static >= 0 ? plan->total_static + scratch_static : -1;
  graph_doc(e, e->out, index, workspace_static);
  /* G_workspace_size: the plan's intermediates, then the scratch area */
  const char *total = affine_str(e, NULL, plan->total);
  graph_declaration(e, e->out, &gn, "restrict", "", 0);
  sb_puts(e->out, "{\n");
  const char *mentioned = workspace_static >= 0 ? "" : arena_printf(e->arena, "%s %s", total, scratch);
  for (int i = 0; i < k->nsizes; i++)
    if (!loops_text_mentions(mentioned, e->kn.sizes[i]))
      line(e, "  (void)%s;", e->kn.sizes[i]);
  if (workspace_static >= 0) {
    line(e, "  return %lld;", (long long)workspace_static);
  } else {
    sb_puts(e->out, scratch);
    line(e, "  return (size_t)(%s) + lgen_scratch_bytes;", total);
  }
  sb_puts(e->out, "}\n\n");
  sb_puts(e->out, sb_cstr(&outlined));
  sb_free(&outlined);
  /* G_run */
  profile_data(e, &groups);
  graph_declaration(e, e->out, &gn, "restrict", "", 1);
  sb_puts(e->out, "{\n");
  /* the names whose (void) lines depend on the body, looked for in one
   * pass over it; and the blob's symbols */
  const WeightsLayout *l = gn.weights ? e->opt->blob : NULL;
  int nnames = 0;
  const char **names = arena_alloc(e->arena, sizeof(char *) * (size_t)(k->ntensors + k->nsizes + 1 + (l ? l->n : 0)));
  for (int t = 0; t < k->ntensors; t++)
    if (k->tensors[t].storage == TS_PARAM)
      names[nnames++] = e->kn.tensors[t];
  for (int i = 0; i < k->nsizes; i++)
    names[nnames++] = e->kn.sizes[i];
  names[nnames++] = gn.workspace;
  for (int i = 0; l && i < l->n; i++)
    if (l->entries[i].graph == index)
      names[nnames++] = l->entries[i].symbol;
  NameSet used;
  nameset_init(&used, names, nnames, e->arena);
  scan_without_profile(&used, body);
  for (int t = 0; t < k->ntensors; t++)
    if (k->tensors[t].storage == TS_PARAM && !nameset_seen(&used, e->kn.tensors[t]))
      line(e, "  (void)%s;", e->kn.tensors[t]);
  for (int i = 0; i < k->nsizes; i++)
    if (!nameset_seen(&used, e->kn.sizes[i]))
      line(e, "  (void)%s;", e->kn.sizes[i]);
  if (!nameset_seen(&used, gn.workspace))
    line(e, "  (void)%s;", gn.workspace);
  if (gn.weights)
    blob_pointers(e, index, &used, gn.weights);
  if (gn.weights && !e->opt->blob->n)
    line(e, "  (void)%s;", gn.weights);
  e->out = out;
  sb_insert(out, at, sb_cstr(&head), head.len);
  sb_free(&head);
  sb_puts(e->out, "}\n\n");
  /* G: lgen_ names cannot be parameters' (c_names.c), so they are free */
  graph_declaration(e, e->out, &gn, "restrict", "", 2);
  sb_puts(e->out, "{\n");
  StrBuf args = {0};
  graph_params(e, &args, "", false);
  /* dims the graph took as equal without a proof (SizeAssume): -1, or
   * under --checks G_run's report */
  for (int i = 0; i < k->nassumes && !e->opt->checks; i++) {
    line(e, "  if (%s %s %s) /* %s */", affine_str(e, NULL, k->assumes[i].a), k->assumes[i].at_least ? "<" : "!=",
         affine_str(e, NULL, k->assumes[i].b), c_comment_text(e->arena, k->assumes[i].what));
    line(e, "    return -1;");
  }
  line(e, "  void *lgen_raw = malloc(%s(%s) + 64);", gn.size_fn, size_list(e, false));
  line(e, "  if (!lgen_raw)");
  line(e, "    return -1;");
  line(e, "  %s(%s%s%s, (void *)(((uintptr_t)lgen_raw + 63) & ~(uintptr_t)63));", gn.run_fn, sb_cstr(&args),
       gn.weights ? ", " : "", gn.weights ? gn.weights : "");
  line(e, "  free(lgen_raw);");
  line(e, "  return 0;");
  sb_puts(e->out, "}\n");
  profile_functions(e, &groups);
  sb_free(&args);
}

/* The blob's layout in the header: its size, and where each of the
 * graph's constants is. */
static void blob_doc(Emitter *e, StrBuf *out, int index) {
  const WeightsLayout *l = e->opt->blob;
  sb_puts(out, "/* The weights blob (--weights=FILE.bin), which G_run and G take as `weights`:\n"
               " * little-endian, each constant at an offset that is a multiple of 64 (the\n"
               " * gaps are zero); the pointer must be at least 8-byte aligned (64: best).\n"
               " * Every graph of this file reads the same blob. This graph's constants:\n");
  for (int i = 0; i < l->n; i++) {
    const WeightsEntry *w = &l->entries[i];
    if (w->graph == index)
      sb_printf(out, " *   offset %lld: %s[%lld] %s\n", (long long)w->offset, elem_type_name(w->type),
                (long long)w->count, c_comment_text(e->arena, w->name));
  }
  sb_puts(out, " */\n");
  sb_printf(out, "#define %s_WEIGHTS_SIZE %lld\n", e->kn.function, (long long)l->size);
}

static void graph_header(Emitter *e, StrBuf *out, int index, const BufferPlan *plan) {
  GraphNames gn = graph_names(e);
  int64_t workspace_static = graph_workspace_static(e, index, plan);
  graph_doc(e, out, index, workspace_static);
  if (workspace_static >= 0)
    sb_printf(out, "#define %s_WORKSPACE_SIZE %lld\n", e->kn.function, (long long)workspace_static);
  if (gn.weights)
    blob_doc(e, out, index);
  graph_prototypes(e, out, &gn, "LGEN_RESTRICT");
  graph_outline_prototypes(e, out, index, "LGEN_RESTRICT");
  sb_printf(out, "#ifdef LGEN_PROFILE /* time per group (man lgen: Profiling) */\n"
                 "void %s_profile(FILE *f);\nvoid %s_profile_reset(void);\n#endif\n",
            e->kn.function, e->kn.function);
  sb_putc(out, '\n');
}

static const char *const align64_prelude = "/* constants are 64-byte aligned where the compiler can say so */\n"
                                           "#ifndef LGEN_ALIGN64\n#if defined(__GNUC__)\n"
                                           "#define LGEN_ALIGN64 __attribute__((aligned(64)))\n#else\n"
                                           "#define LGEN_ALIGN64\n#endif\n#endif\n\n";

/* c_consts.c's large constants are string literals of little-endian bytes,
 * longer than the 4095 characters C99 promises (gcc and clang take any
 * length, and warn under -pedantic) */
static const char *const byte_literals_prelude =
    "/* large constants are string literals of their little-endian bytes */\n"
    "#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \\\n"
    "    __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__\n"
    "#error \"constants are little-endian bytes here: generate this file with lgen --constants=values\"\n"
    "#endif\n"
    "#if defined(__GNUC__)\n#pragma GCC diagnostic ignored \"-Woverlength-strings\"\n#endif\n\n";

/* ---- files ---- */

static bool module_uses_type(const Module *m, ElemType t) {
  for (int i = 0; i < m->kernels.len; i++) {
    const Kernel *k = m->kernels.items[i];
    for (int j = 0; j < k->ntensors; j++)
      if (k->tensors[j].type == t)
        return true;
    for (int j = 0; j < k->nops; j++)
      for (const StructuredOp *op = &k->ops[j]; op; op = op->epilogue)
        for (int n = 0; n < op->nnodes; n++)
          if (op->nodes[n].type == t)
            return true;
  }
  return false;
}

/* f16 arithmetic is done in float. The conversions work on the IEEE bits,
 * with selects instead of branches so that compilers vectorise the loops
 * that call them: gcc 12 on x86-64 converts a native _Float16 with one
 * scalar vcvtph2ps per element and never vectorises it, and without F16C
 * it calls libgcc per element. Converting 64K values, -O3 -march=native
 * (AVX-512): widening 15.7 us native, 5.7 here; narrowing 15.7 and 6.7;
 * -O3 -mavx2: 284 and 65, 446 and 21. Both are exact, round to nearest
 * even, and give a NaN for a NaN (here always the quiet NaN 0x7e00 with its
 * sign); tests/f16conv.test checks them against an exact reference over
 * every f16 and a sample of floats. Only on other targets, where the
 * native conversions vectorise, are they used. */
static const char *const f16_native_condition =
    "#if defined(__FLT16_MANT_DIG__) && !defined(__cplusplus) && \\\n"
    "    !defined(__x86_64__) && !defined(__i386__)\n";

static const char *const f16_widen =
    "static inline float lgen_f16_to_f32(lgen_f16 h) {\n"
    "  /* shift exponent and mantissa into place and rebias the exponent by\n"
    "   * 127 - 15; inf and nan get the rest of the way to 255; zero and\n"
    "   * subnormals are 2^-14 (1 + m / 1024) - 2^-14, exact in float */\n"
    "  uint16_t b;\n"
    "  uint32_t o, exp, sub;\n"
    "  float f, fsub;\n"
    "  memcpy(&b, &h, sizeof b);\n"
    "  o = (uint32_t)(b & 0x7fffu) << 13;\n"
    "  exp = o & 0x0f800000u;\n"
    "  o += (uint32_t)(127 - 15) << 23;\n"
    "  o += exp == 0x0f800000u ? (uint32_t)(128 - 16) << 23 : 0u;\n"
    "  sub = o + (1u << 23);\n"
    "  memcpy(&fsub, &sub, sizeof fsub);\n"
    "  fsub -= 6.103515625e-05f; /* 2^-14 */\n"
    "  memcpy(&sub, &fsub, sizeof sub);\n"
    "  o = exp == 0 ? sub : o;\n"
    "  o |= (uint32_t)(b & 0x8000u) << 16;\n"
    "  memcpy(&f, &o, sizeof f);\n"
    "  return f;\n"
    "}\n";

static const char *const f16_narrow =
    "static inline lgen_f16 lgen_f32_to_f16(float f) {\n"
    "  /* below 2^-14 (f16 subnormals and zero): adding 2^-1 makes the float\n"
    "   * add round to nearest even at the f16 ulp 2^-24, and the result's low\n"
    "   * bits are the f16 bits; normals: rebias the exponent and round the\n"
    "   * mantissa to nearest even with an integer add (a carry into the\n"
    "   * exponent is right, up to infinity); 2^16 and beyond, inf and nan.\n"
    "   * Masks, not ?:, pick the result: gcc moves the add into the branch\n"
    "   * that uses it, then will not vectorise a float op that may trap. */\n"
    "  uint32_t x, sign, sub, norm, o, mask;\n"
    "  uint16_t b;\n"
    "  float fsub;\n"
    "  lgen_f16 h;\n"
    "  memcpy(&x, &f, sizeof x);\n"
    "  sign = x & 0x80000000u;\n"
    "  x ^= sign;\n"
    "  memcpy(&fsub, &x, sizeof fsub);\n"
    "  fsub += 0.5f;\n"
    "  memcpy(&sub, &fsub, sizeof sub);\n"
    "  sub -= 0x3f000000u;\n"
    "  norm = (x + ((uint32_t)(15 - 127) << 23) + 0xfffu + ((x >> 13) & 1u)) >> 13;\n"
    "  mask = (uint32_t)0 - (uint32_t)(x < (113u << 23));\n"
    "  o = (sub & mask) | (norm & ~mask);\n"
    "  mask = (uint32_t)0 - (uint32_t)(x >= (143u << 23));\n"
    "  o = ((x > 0x7f800000u ? 0x7e00u : 0x7c00u) & mask) | (o & ~mask);\n"
    "  b = (uint16_t)(o | sign >> 16);\n"
    "  memcpy(&h, &b, sizeof h);\n"
    "  return h;\n"
    "}\n";

/* Only the conversions the file uses are defined (clang warns about unused
 * ones). */
static void f16_conversions(StrBuf *out, bool widen, bool narrow) {
  sb_puts(out, f16_native_condition);
  sb_puts(out, "#define LGEN_F16_TO_F32(h) ((float)(h))\n"
               "#define LGEN_F32_TO_F16(f) ((lgen_f16)(f))\n"
               "#else\n");
  if (widen)
    sb_puts(out, f16_widen);
  if (narrow)
    sb_puts(out, f16_narrow);
  sb_puts(out, "#define LGEN_F16_TO_F32(h) lgen_f16_to_f32(h)\n"
               "#define LGEN_F32_TO_F16(f) lgen_f32_to_f16(f)\n"
               "#endif\n\n");
}

static void type_prelude(StrBuf *out, const Module *m, const Emitter *e) {
  if (module_uses_type(m, TY_I1) || (e && e->uses_bool))
    sb_puts(out, "#ifndef LGEN_BOOL_DEFINED\n#define LGEN_BOOL_DEFINED\n"
                 "#ifdef __cplusplus\ntypedef bool lgen_bool;\n#else\ntypedef _Bool lgen_bool;\n#endif\n#endif\n\n");
  if (module_uses_type(m, TY_F16)) {
    sb_puts(out, "#ifndef LGEN_F16_DEFINED\n#define LGEN_F16_DEFINED\n"
                 "#if defined(__FLT16_MANT_DIG__) && !defined(__cplusplus)\n"
                 "__extension__ typedef _Float16 lgen_f16;\n"
                 "#else\n"
                 "typedef uint16_t lgen_f16; /* IEEE binary16 bits */\n"
                 "#endif\n#endif\n\n");
    if (e)
      f16_conversions(out, e->needs.widens_f16, e->needs.narrows_f16);
  }
}

static const char *const omp_prelude =
    "/* OpenMP is optional: without it the pragmas vanish and the loops run\n"
    " * sequentially with the same results (up to reassociation of reductions). */\n"
    "#ifndef LGEN_OMP\n"
    "#if defined(_OPENMP)\n"
    "#define LGEN_OMP(directive) _Pragma(#directive)\n"
    "#else\n"
    "#define LGEN_OMP(directive)\n"
    "#endif\n"
    "#endif\n"
    "#ifndef LGEN_OMP_SIMD\n"
    "#if defined(_OPENMP) && _OPENMP >= 201307\n"
    "#define LGEN_OMP_SIMD(directive) _Pragma(#directive)\n"
    "#else\n"
    "#define LGEN_OMP_SIMD(directive)\n"
    "#endif\n"
    "#endif\n\n";


static bool uses_register_blocks(const Module *m, const EmitOptions *opt) {
  for (int i = 0; i < m->kernels.len; i++) {
    const Kernel *k = m->kernels.items[i];
    for (int j = 0; j < k->nops; j++)
      for (int d = 0; d < opt->plans[i][j].view.op->ndims; d++)
        if (opt->plans[i][j].s.unroll[d] > 1)
          return true;
  }
  return false;
}

/* out followed by tail, in tail's buffer (tail is left empty): a model's
 * constants are most of its C, and appending a copy of them would double
 * the peak memory. The text before them moves instead. */
static void append_taking(StrBuf *out, StrBuf *tail) {
  if (tail->len <= out->len) {
    sb_putn(out, sb_cstr(tail), tail->len);
    sb_free(tail);
    return;
  }
  size_t head = out->len, n = tail->len;
  sb_putn(tail, sb_cstr(out), head); /* room for the head, at the end for now */
  memmove(tail->data + head, tail->data, n);
  memcpy(tail->data, sb_cstr(out), head);
  sb_free(out);
  *out = *tail;
  tail->data = NULL;
  tail->len = tail->cap = 0;
}

void emit_c_file(StrBuf *out, const Module *m, const EmitOptions *opt, Arena *arena) {
  StrBuf helpers = {0}, bodies = {0}, constants = {0};
  PtrVec helper_names = {0};
  Emitter e = {.out = &bodies, .opt = opt, .arena = arena, .helpers = &helpers, .helper_names = &helper_names,
               .consts = {.defs = &constants}, .dump = opt->dump_loops};
  for (int i = 0; i < m->kernels.len; i++) {
    if (i)
      sb_putc(&bodies, '\n');
    if (graph_plan(opt, i))
      emit_graph(&e, m->kernels.items[i], i, graph_plan(opt, i));
    else
      emit_kernel(&e, m->kernels.items[i], i);
  }
  sb_printf(out, "/* Generated by lgen from %s. Do not edit. */\n", c_comment_text(arena, opt->input_name));
  bool graphs = module_has_graphs(m, opt);
  if (graphs) /* before any header: -std=c99 hides POSIX's clock_gettime */
    sb_puts(out, "#if defined(LGEN_PROFILE) && !defined(_POSIX_C_SOURCE)\n"
                 "#define _POSIX_C_SOURCE 199309L /* the profile's clock_gettime */\n#endif\n");
  /* every header at the top */
  unsigned inc = e.includes | runtime_helpers_includes(e.helpers_used);
  inc |= graphs ? INC_STDDEF | INC_STDLIB : 0;
  inc |= e.needs.math || e.needs.fma ? INC_MATH : 0;
  inc |= module_uses_type(m, TY_F16) && (e.needs.widens_f16 || e.needs.narrows_f16) ? INC_STRING : 0;
  inc |= e.needs.bits ? INC_STRING : 0;
  inc |= graphs ? INC_OMP : 0; /* the profile's omp_get_thread_num */
  if (opt->header_name)
    sb_printf(out, "#include \"%s\"\n", opt->header_name);
  static const struct {
    unsigned bit;
    const char *name;
  } headers[] = {{INC_STDDEF, "stddef.h"}, {0, "stdint.h"},   {INC_STDIO, "stdio.h"},  {INC_STDLIB, "stdlib.h"},
                 {INC_STRING, "string.h"}, {INC_MATH, "math.h"}, {INC_CBLAS, "cblas.h"}};
  for (size_t i = 0; i < sizeof headers / sizeof *headers; i++)
    if (!headers[i].bit || (inc & headers[i].bit))
      sb_printf(out, "#include <%s>\n", headers[i].name);
  if (inc & INC_OMP)
    sb_puts(out, "#if defined(_OPENMP)\n#include <omp.h>\n#endif\n");
  if (graphs) /* the profile's (profile_prelude) */
    sb_printf(out, "#ifdef LGEN_PROFILE\n%s#include <time.h>\n#endif\n", inc & INC_STDIO ? "" : "#include <stdio.h>\n");
  if (opt->target && opt->target->vector_bytes == 64 && uses_register_blocks(m, opt))
    sb_puts(out, "/* the register blocks are sized for 512-bit vectors (--target); let gcc use them */\n"
                 "#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)\n"
                 "#pragma GCC target(\"prefer-vector-width=512\")\n#endif\n");
  sb_putc(out, '\n');
  type_prelude(out, m, &e);
  view_typedefs(out, m, opt, arena);
  if (opt->blob) /* the blob holds the constants' bytes as a little-endian machine reads them */
    sb_puts(out, "#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \\\n"
                 "    __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__\n"
                 "#error \"the weights blob (--weights=FILE.bin) is little-endian\"\n#endif\n\n");
  sb_puts(out, omp_prelude);
  if (e.needs.fma)
    sb_puts(out, "/* a * b + c rounds once where the target has fused multiply-add; define\n"
                 " * LGEN_NO_FMA (and compile with -ffp-contract=off) for two roundings */\n"
                 "#ifndef LGEN_FMAF\n"
                 "#if (defined(__FMA__) || defined(__ARM_FEATURE_FMA)) && !defined(LGEN_NO_FMA)\n"
                 "#define LGEN_FMAF(a, b, c) fmaf(a, b, c)\n"
                 "#define LGEN_FMA(a, b, c) fma(a, b, c)\n"
                 "#else\n"
                 "#define LGEN_FMAF(a, b, c) ((a) * (b) + (c))\n"
                 "#define LGEN_FMA(a, b, c) ((a) * (b) + (c))\n"
                 "#endif\n"
                 "#endif\n\n");
  if (runtime_helpers_print(out, e.helpers_used))
    sb_putc(out, '\n');
  if (helpers.len) {
    sb_puts(out, sb_cstr(&helpers));
    sb_putc(out, '\n');
  }
  if (graphs)
    sb_puts(out, profile_prelude);
  if (e.consts.align64)
    sb_puts(out, align64_prelude);
  if (e.consts.byte_literals)
    sb_puts(out, byte_literals_prelude);
  if (constants.len) {
    append_taking(out, &constants);
    sb_putc(out, '\n');
  }
  append_taking(out, &bodies); /* the graphs' bodies are most of the C: moved, not copied */
  sb_free(&helpers);
  sb_free(&bodies);
  sb_free(&constants);
}

void emit_c_header(StrBuf *out, const Module *m, const EmitOptions *opt, Arena *arena) {
  sb_printf(out, "/* Generated by lgen from %s. Do not edit. */\n", c_comment_text(arena, opt->input_name));
  sb_printf(out, "#ifndef %s\n#define %s\n\n#include <stddef.h>\n#include <stdint.h>\n", opt->guard, opt->guard);
  if (module_has_graphs(m, opt)) /* NAME_profile's FILE */
    sb_puts(out, "#ifdef LGEN_PROFILE\n#include <stdio.h>\n#endif\n");
  sb_putc(out, '\n');
  type_prelude(out, m, NULL);
  view_typedefs(out, m, opt, arena);
  sb_puts(out, "#ifndef LGEN_RESTRICT\n#ifdef __cplusplus\n#define LGEN_RESTRICT __restrict\n#else\n"
               "#define LGEN_RESTRICT restrict\n#endif\n#endif\n\n");
  sb_puts(out, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  Emitter e = {.out = out, .opt = opt, .arena = arena};
  for (int i = 0; i < m->kernels.len; i++) {
    e.k = m->kernels.items[i];
    kernel_names_init_outlines(&e.kn, e.k, opt->prefix, graph_plan(opt, i) ? opt->plans[i] : NULL, arena);
    if (graph_plan(opt, i)) {
      graph_header(&e, out, i, graph_plan(opt, i));
      continue;
    }
    doc_comment(&e);
    StrBuf sig = {0};
    signature(&e, &sig, "LGEN_RESTRICT", e.kn.function, opt->abi_view);
    put_decl(out, &sig, ";");
    sb_putc(out, '\n');
  }
  sb_printf(out, "#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s */\n", opt->guard);
}

/* Every graph's run body built again (and dropped) for the pre-packed
 * constants it defines and the constants it still reads: their
 * definitions go to defs (or, laying out the blob, to e->consts.collect). */
static void rebuild_run_bodies(Emitter *e, const Module *m, StrBuf *defs) {
  for (int i = 0; i < m->kernels.len; i++) {
    if (!graph_plan(e->opt, i))
      continue;
    e->k = m->kernels.items[i];
    e->consts.graph = i;
    kernel_names_init_outlines(&e->kn, e->k, e->opt->prefix, e->opt->plans[i], e->arena);
    GraphNames gn = graph_names(e);
    LoopList tree = {0};
    PtrVec outlines = {0};
    graph_run_body(e, &tree, i, graph_plan(e->opt, i), gn.workspace, NULL, &outlines);
    const char *text = tree_text(e, &tree);
    if (outlines.len) /* and the outlined groups' code */
      text = arena_printf(e->arena, "%s%s", text, graph_outlines_text(e, &outlines));
    graph_constants(e, defs, true, text);
  }
}

void emit_c_weights(StrBuf *out, const Module *m, const EmitOptions *opt, Arena *arena) {
  StrBuf defs = {0}, helpers = {0};
  PtrVec helper_names = {0};
  Emitter e = {.opt = opt, .arena = arena, .helpers = &helpers, .helper_names = &helper_names,
               .consts = {.defs = &defs, .weights_file = true}};
  rebuild_run_bodies(&e, m, &defs);
  sb_free(&helpers);
  sb_printf(out, "/* Generated by lgen from %s. Do not edit.\n * The constants of its model graphs. */\n",
            c_comment_text(arena, opt->input_name));
  sb_puts(out, "#include <stdint.h>\n");
  if (e.needs.math)
    sb_puts(out, "#include <math.h>\n");
  sb_putc(out, '\n');
  type_prelude(out, m, NULL);
  sb_puts(out, align64_prelude);
  if (e.consts.byte_literals)
    sb_puts(out, byte_literals_prelude);
  append_taking(out, &defs);
}

const WeightsLayout *emit_weights_layout(const Module *m, const EmitOptions *opt, Arena *arena) {
  StrBuf helpers = {0}, defs = {0};
  PtrVec helper_names = {0};
  WeightsLayout *layout = arena_alloc(arena, sizeof *layout);
  Emitter e = {.opt = opt, .arena = arena, .helpers = &helpers, .helper_names = &helper_names,
               .consts = {.defs = &defs, .weights_file = true, .collect = layout}};
  rebuild_run_bodies(&e, m, &defs);
  sb_free(&helpers);
  sb_free(&defs);
  return layout;
}

void emit_weights_blob(StrBuf *out, const WeightsLayout *layout) {
  for (int i = 0; i < layout->n; i++) {
    const WeightsEntry *w = &layout->entries[i];
    while ((int64_t)out->len < w->offset)
      sb_putc(out, '\0');
    int64_t bytes = w->count * ((elem_type_bits(w->type) + 7) / 8);
    if (w->data)
      sb_putn(out, w->data, (size_t)bytes);
    else
      for (int64_t b = 0; b < bytes; b++)
        sb_putc(out, '\0');
  }
}
