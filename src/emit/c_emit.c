/* c_emit.c - C99 source and header files from IR kernels (see c_emit.h):
 * file layout, signatures, doc comments, the runtime helpers a file needs.
 * Loop nests are c_loops.c's, run-time size checks c_checks.c's. */
#include "emit/c_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void line(Emitter *e, const char *fmt, ...) {
  for (int i = 0; i < e->indent; i++)
    sb_puts(e->out, "  ");
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(e->out, fmt, ap);
  va_end(ap);
  sb_putc(e->out, '\n');
}


/* ---- affine expressions in C ---- */

const char *c_dim(void *ctx, int i) { return ((Emitter *)ctx)->dim_names[i]; }
static const char *c_size(void *ctx, int i) { return ((Emitter *)ctx)->kn.sizes[i]; }
static const char *c_attr(void *ctx, int i, int elem) {
  Emitter *e = ctx;
  const AttrParam *a = &e->k->attrs[i];
  if (a->ndims == 0 && !a->is_array)
    return e->kn.attrs[i];
  return arena_printf(e->arena, "%s[%d]", e->kn.attrs[i], elem);
}


static void note_divisions(Emitter *e, const AffineExpr *x) {
  if (!x)
    return;
  if (x->kind == AE_FLOORDIV)
    use_helper(e->helpers_used, "lgen_floordiv");
  else if (x->kind == AE_CEILDIV)
    use_helper(e->helpers_used, "lgen_ceildiv");
  else if (x->kind == AE_MOD)
    use_helper(e->helpers_used, "lgen_mod");
  note_divisions(e, x->lhs);
  note_divisions(e, x->rhs);
}

void c_affine(Emitter *e, StrBuf *out, const AffineExpr *x) {
  AffineNames names = {c_dim, c_size, c_attr, e, true};
  note_divisions(e, x);
  affine_print(out, x, &names);
}

const char *affine_str(Emitter *e, const AffineExpr *x) {
  StrBuf sb = {0};
  c_affine(e, &sb, x);
  const char *s = arena_strdup(e->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

/* Whether tensor t lives in chunk buffers (Emitter.chunk_group). */
static bool in_chunk_buffer(const Emitter *e, int t) {
  for (int c = 0; e->chunk_group && c < e->chunk_group->nchunk_local; c++)
    if (e->chunk_group->chunk_local[c] == t)
      return true;
  return false;
}

/* T[((i0) * S1 + i1) * S2 + i2]: row-major linearisation in Horner form
 * (minus lgen_shift in a chunk buffer). */
const char *access_str(Emitter *e, const Operand *o) {
  const TensorParam *t = &e->k->tensors[o->tensor];
  if (t->rank == 0)
    return arena_printf(e->arena, "%s[0]", e->kn.tensors[o->tensor]);
  AffineExpr *lin = o->map[0];
  for (int i = 1; i < t->rank; i++)
    lin = affine_binary(e->arena, AE_ADD, affine_binary(e->arena, AE_MUL, lin, t->shape[i]), o->map[i]);
  return arena_printf(e->arena, "%s[%s%s]", e->kn.tensors[o->tensor], affine_str(e, lin),
                      in_chunk_buffer(e, o->tensor) ? " - lgen_shift" : "");
}

/* ---- signatures ---- */

static void signature(Emitter *e, StrBuf *out, const char *restrict_kw) {
  const Kernel *k = e->k;
  sb_printf(out, "void %s(", e->kn.function);
  for (int i = 0; i < k->ntensors; i++) {
    const TensorParam *t = &k->tensors[i];
    sb_printf(out, "%s%s%s *%s %s", i ? ", " : "", t->is_output ? "" : "const ", c_type_name(t->type),
              restrict_kw, e->kn.tensors[i]);
  }
  for (int i = 0; i < k->nsizes; i++)
    sb_printf(out, ", int64_t %s", e->kn.sizes[i]);
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

static void doc_comment(Emitter *e) {
  const Kernel *k = e->k;
  StrBuf sb = {0};
  ir_print_signature(&sb, k);
  sb_printf(e->out, "/* %s\n", c_comment_text(e->arena, sb_cstr(&sb)));
  sb_free(&sb);
  if (k->doc) {
    /* first non-blank line of the doc string, without a comment terminator */
    const char *p = k->doc;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
      p++;
    size_t n = strcspn(p, "\r\n");
    if (n)
      sb_printf(e->out, " * %s\n", c_comment_text(e->arena, arena_strndup(e->arena, p, n)));
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
      sb_printf(e->out, touched == 2 ? " * Updates %s: its value on entry is read (accumulated into).\n"
                                     : " * Overwrites %s.\n",
                k->tensors[t].name);
      break;
    }
  }
  sb_puts(e->out, " */\n");
}

/* Is `name` used as an identifier in the C code `text` (string literals,
 * such as --checks messages, and comments do not count)? One pass over the
 * text. */
static bool mentions_identifier(const char *text, const char *name) {
  size_t n = strlen(name);
  for (const char *p = text; *p;) {
    if (*p == '"') { /* skip a string literal */
      for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1])
          p++;
      if (*p)
        p++;
    } else if (p[0] == '/' && p[1] == '*') { /* skip a comment ("pack l1 into l1_pack" is no use of l1) */
      const char *end = strstr(p + 2, "*/");
      p = end ? end + 2 : p + strlen(p);
    } else if (*p == '_' || ((*p | 32) >= 'a' && (*p | 32) <= 'z')) {
      const char *start = p;
      while (*p == '_' || (*p >= '0' && *p <= '9') || ((*p | 32) >= 'a' && (*p | 32) <= 'z'))
        p++;
      if ((size_t)(p - start) == n && memcmp(start, name, n) == 0)
        return true;
    } else if (*p >= '0' && *p <= '9') { /* a number, suffixes included */
      while (*p == '_' || (*p >= '0' && *p <= '9') || ((*p | 32) >= 'a' && (*p | 32) <= 'z'))
        p++;
    } else {
      p++;
    }
  }
  return false;
}

static void emit_kernel(Emitter *e, const Kernel *k, int index) {
  e->k = k;
  kernel_names_init(&e->kn, k, e->opt->prefix, e->arena);
  StrBuf body = {0};
  StrBuf *saved = e->out;
  e->out = &body;
  e->indent = 1;
  if (e->opt->checks)
    emit_checks(e);
  for (int i = 0; i < k->nops; i++) {
    /* the loops index the op's reshaped view of the tensors */
    const OpPlan *plan = &e->opt->plans[index][i];
    e->sched = &plan->s;
    e->k = plan->view.k;
    emit_op(e, plan->view.op, i);
    e->k = k;
  }
  e->out = saved;
  e->indent = 0;

  doc_comment(e);
  signature(e, e->out, "restrict");
  sb_puts(e->out, "\n{\n");
  /* parameters that only describe shapes would trip -Wunused-parameter */
  const char *text = sb_cstr(&body);
  for (int i = 0; i < k->ntensors; i++)
    if (!mentions_identifier(text, e->kn.tensors[i]))
      line(e, "  (void)%s;", e->kn.tensors[i]);
  for (int i = 0; i < k->nsizes; i++)
    if (!mentions_identifier(text, e->kn.sizes[i]))
      line(e, "  (void)%s;", e->kn.sizes[i]);
  for (int i = 0; i < k->nattrs; i++) {
    if (!mentions_identifier(text, e->kn.attrs[i]))
      line(e, "  (void)%s;", e->kn.attrs[i]);
    if (k->attrs[i].is_array && !mentions_identifier(text, e->kn.attr_counts[i]))
      line(e, "  (void)%s;", e->kn.attr_counts[i]);
  }
  sb_puts(e->out, text);
  sb_puts(e->out, "}\n");
  sb_free(&body);
}

/* ---- model graphs (contracts.md section 3) ----
 * A graph kernel G is three functions: G_workspace_size (the buffer plan's
 * total), G_run (each op's loop nest in a block that first points its
 * intermediates, aliases and constants at their memory) and G (mallocs an
 * aligned workspace around G_run). Constants are file-scope arrays. */

static const BufferPlan *graph_plan(const EmitOptions *opt, int index) {
  return opt->buffer_plans ? opt->buffer_plans[index] : NULL;
}

/* The tensor whose memory t is: itself unless an alias. */
static int alias_root(const Kernel *k, int t) {
  for (int hops = 0; k->tensors[t].storage == TS_ALIAS && hops <= k->ntensors; hops++)
    t = k->tensors[t].alias_of;
  return t;
}

/* The array of constant t. A tensor's C name never starts with lgen_
 * (c_names.c renames such names), so no local shadows it; the prefix keeps
 * two models' weights apart when they are extern. */
static const char *const_symbol(const Emitter *e, int t) {
  const char *prefix = e->opt->prefix;
  return arena_printf(e->arena, "%slgen_%s_%s", prefix, e->kn.function + strlen(prefix), e->kn.tensors[t]);
}

/* Element count of a constant; its shape is static (-1 if it is not). */
static int64_t const_count(const TensorParam *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) {
    if (t->shape[i]->kind != AE_CONST)
      return -1;
    n *= t->shape[i]->value;
  }
  return n;
}

static uint64_t load_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

/* The value of IEEE binary16 bits, exactly (every one is a double). */
static double f16_value(unsigned bits) {
  unsigned exp = (bits >> 10) & 0x1fu, man = bits & 0x3ffu;
  double v;
  if (exp == 0x1f) {
    v = man ? NAN : INFINITY;
  } else {
    v = exp ? (double)(man | 0x400u) : (double)man;
    int e2 = exp ? (int)exp - 25 : -24; /* value = v * 2^e2 */
    for (; e2 < 0; e2++)
      v *= 0.5;
    for (; e2 > 0; e2--)
      v *= 2.0;
  }
  return (bits & 0x8000u) ? -v : v;
}

/* Non-finite values as <math.h>'s constant expressions (a division by zero
 * is not one); finite ones exactly, in hex. */
static void float_initializer(StrBuf *out, double v, ElemType t, bool *needs_math) {
  if (isnan(v) || isinf(v)) {
    sb_printf(out, "%s%s", signbit(v) ? "-" : "", isnan(v) ? "NAN" : "INFINITY");
    *needs_math = true;
    return;
  }
  c_float_literal(out, v, t);
}

/* One element of a constant. f16: the value cast to lgen_f16 where it is
 * _Float16 (native_f16), else the IEEE bits that lgen_f16 holds. */
static void element_initializer(StrBuf *out, ElemType t, const unsigned char *p, bool native_f16,
                                bool *needs_math) {
  int bits = elem_type_bits(t);
  uint64_t u = load_le(p, bits < 8 ? 1 : bits / 8);
  switch (t) {
  case TY_F16:
    if (native_f16) {
      sb_puts(out, "(lgen_f16)");
      float_initializer(out, f16_value((unsigned)u), TY_F32, needs_math);
    } else {
      sb_printf(out, "0x%04x", (unsigned)u);
    }
    return;
  case TY_F32: {
    uint32_t b = (uint32_t)u;
    float f;
    memcpy(&f, &b, sizeof f);
    float_initializer(out, f, TY_F32, needs_math);
    return;
  }
  case TY_F64: {
    double d;
    memcpy(&d, &u, sizeof d);
    float_initializer(out, d, TY_F64, needs_math);
    return;
  }
  case TY_I1:
    sb_puts(out, u ? "1" : "0");
    return;
  default: {
    /* sign-extend; the most negative value is written as an expression
     * because its magnitude is not a literal of the type */
    uint64_t sign = (uint64_t)1 << (bits - 1);
    int64_t v = (u & sign) ? -(int64_t)((~u & (sign - 1)) + 1) : (int64_t)u;
    if (u == sign && bits == 64)
      sb_puts(out, "(-INT64_C(9223372036854775807) - 1)");
    else if (u == sign)
      sb_printf(out, "(%lld - 1)", (long long)(v + 1));
    else if (t == TY_I64)
      sb_printf(out, "INT64_C(%lld)", (long long)v);
    else
      sb_printf(out, "%lld", (long long)v);
    return;
  }
  }
}

static void constant_body(StrBuf *out, const TensorParam *tp, int64_t n, bool native_f16, bool *needs_math) {
  int bytes = (elem_type_bits(tp->type) + 7) / 8;
  const unsigned char *data = tp->data;
  sb_puts(out, " = {");
  if (n == 0 || !data)
    sb_puts(out, "0");
  for (int64_t i = 0; data && i < n; i++) {
    sb_puts(out, i % 8 == 0 ? "\n  " : " ");
    element_initializer(out, tp->type, data + i * bytes, native_f16, needs_math);
    sb_putc(out, ',');
  }
  sb_puts(out, "\n};\n");
}

/* The definition of constant t: static in the kernels' file, external in
 * the --weights file. C99 has no empty arrays: a constant without elements
 * gets one unused zero. */
static void constant_definition_of(StrBuf *out, Emitter *e, const TensorParam *tp, const char *symbol,
                                   bool external) {
  int64_t n = const_count(tp);
  const char *decl = arena_printf(e->arena, "%sconst %s %s[%lld] LGEN_ALIGN64", external ? "" : "static ",
                                  c_type_name(tp->type), symbol, (long long)(n > 0 ? n : 1));
  if (n < 0) {
    sb_printf(out, "#error \"lgen bug: constant %s has a symbolic shape\"\n", c_string_text(e->arena, tp->name));
    return;
  }
  e->uses_align64 = true;
  if (tp->type == TY_F16) {
    sb_printf(out, "#if defined(__FLT16_MANT_DIG__) && !defined(__cplusplus)\n%s", decl);
    constant_body(out, tp, n, true, &e->needs_math);
    sb_printf(out, "#else\n%s", decl);
    constant_body(out, tp, n, false, &e->needs_math);
    sb_puts(out, "#endif\n");
  } else {
    sb_puts(out, decl);
    constant_body(out, tp, n, false, &e->needs_math);
  }
}

/* A constant's array where it is defined (this file, or the --weights
 * file), else an extern declaration of it. */
static void constant_array(StrBuf *out, Emitter *e, const TensorParam *tp, const char *symbol, bool external_file) {
  if (external_file || !e->opt->separate_weights)
    constant_definition_of(out, e, tp, symbol, external_file);
  else
    sb_printf(out, "extern const %s %s[%lld];\n", c_type_name(tp->type), symbol,
              (long long)(const_count(tp) > 0 ? const_count(tp) : 1));
}

/* The graph's constants. A static one that the run body (`body`) does not
 * read, because every reader reads it pre-packed, is left out (an unused
 * static array draws a warning); external ones are all kept, so that the
 * --weights file defines every constant. */
static void graph_constants(Emitter *e, StrBuf *out, bool external_file, const char *body) {
  for (int t = 0; t < e->k->ntensors; t++) {
    const TensorParam *tp = &e->k->tensors[t];
    bool is_static = !external_file && !e->opt->separate_weights;
    if (tp->storage == TS_CONST && (!is_static || mentions_identifier(body, const_symbol(e, t))))
      constant_array(out, e, tp, const_symbol(e, t), external_file);
  }
}

/* Pre-packed constants (c_loops.c) are named after the op and the tensor;
 * "lgenpk" cannot begin another symbol of the file. */
const char *packed_constant(Emitter *e, int t, const void *data, int64_t count) {
  const char *prefix = e->opt->prefix;
  const char *symbol = arena_printf(e->arena, "%slgenpk%d_%s_%s", prefix, e->op_index,
                                    e->kn.function + strlen(prefix), e->kn.tensors[t]);
  TensorParam *tp = arena_alloc(e->arena, sizeof *tp);
  tp->type = e->k->tensors[t].type;
  tp->name = symbol;
  tp->storage = TS_CONST;
  tp->rank = 1;
  tp->shape = arena_alloc(e->arena, sizeof *tp->shape);
  tp->shape[0] = affine_const(e->arena, count);
  tp->data = data;
  constant_array(e->constants, e, tp, symbol, e->weights_file);
  return symbol;
}

/* "x: f32(N, 784)" */
static const char *size_by_name(void *ctx, int i) { return ((const Kernel *)ctx)->sizes[i].name; }

static void print_tensor_decl(StrBuf *out, const Kernel *k, int t) {
  const TensorParam *tp = &k->tensors[t];
  AffineNames names = {c_dim, size_by_name, NULL, (void *)k, false};
  sb_printf(out, "%s: %s(", tp->name, elem_type_name(tp->type));
  for (int i = 0; i < tp->rank; i++) {
    if (i)
      sb_puts(out, ", ");
    affine_print(out, tp->shape[i], &names);
  }
  sb_putc(out, ')');
}

static void graph_doc(Emitter *e, StrBuf *out, int64_t workspace_static) {
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
  sb_printf(out, "/* %s\n", c_comment_text(e->arena, sb_cstr(&decl)));
  sb_free(&decl);
  for (int t = 0; t < k->ntensors; t++) {
    nconst += k->tensors[t].storage == TS_CONST;
    nwork += k->tensors[t].storage == TS_WORKSPACE;
  }
  sb_printf(out, " * %d op%s, %d constant%s, %d intermediate%s in the workspace", k->nops, k->nops == 1 ? "" : "s",
            nconst, nconst == 1 ? "" : "s", nwork, nwork == 1 ? "" : "s");
  if (workspace_static >= 0)
    sb_printf(out, " (%lld bytes)", (long long)workspace_static);
  sb_printf(out, ".\n * %s_run uses the caller's workspace (64-byte aligned, %s_workspace_size bytes);\n"
                 " * %s allocates one and returns 0, or -1 if that fails.\n */\n",
            e->kn.function, e->kn.function, e->kn.function);
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
  for (int i = 0; i < k->nsizes; i++) {
    sb_printf(out, "%s%s%s", first ? "" : ", ", types ? "int64_t " : "", e->kn.sizes[i]);
    first = false;
  }
}

typedef struct {
  const char *size_fn, *run_fn, *workspace;
} GraphNames;

static void graph_prototypes(const Emitter *e, StrBuf *out, const GraphNames *gn, const char *restrict_kw,
                             const char *end) {
  const Kernel *k = e->k;
  sb_printf(out, "size_t %s(", gn->size_fn);
  for (int i = 0; i < k->nsizes; i++)
    sb_printf(out, "%sint64_t %s", i ? ", " : "", e->kn.sizes[i]);
  sb_printf(out, "%s)%s", k->nsizes ? "" : "void", end);
  sb_printf(out, "void %s(", gn->run_fn);
  graph_params(e, out, restrict_kw, true);
  sb_printf(out, ", void *%s %s)%s", restrict_kw, gn->workspace, end);
  sb_printf(out, "int %s(", e->kn.function);
  graph_params(e, out, restrict_kw, true);
  sb_printf(out, ")%s", end);
}

static GraphNames graph_names(Emitter *e) {
  GraphNames gn;
  gn.size_fn = arena_printf(e->arena, "%s_workspace_size", e->kn.function);
  gn.run_fn = arena_printf(e->arena, "%s_run", e->kn.function);
  gn.workspace = names_claim(&e->kn.table, "workspace");
  return gn;
}

/* Where tensor `root` (not an alias) lives, as a C pointer expression. */
static const char *root_address(Emitter *e, const BufferPlan *plan, int root, const char *ws) {
  const TensorParam *tp = &e->k->tensors[root];
  if (tp->storage == TS_CONST)
    return const_symbol(e, root);
  if (tp->storage != TS_WORKSPACE)
    return e->kn.tensors[root];
  for (int i = 0; i < plan->nbuffers; i++)
    if (plan->buffers[i].tensor == root) {
      const AffineExpr *off = plan->buffers[i].offset;
      if (off->kind == AE_CONST && off->value == 0)
        return ws;
      return arena_printf(e->arena, "((char *)%s + %s)", ws, affine_str(e, off));
    }
  return arena_printf(e->arena, "%s /* lgen bug: %s has no place in the plan */", ws,
                      c_comment_text(e->arena, tp->name));
}

/* Pointers for the tensors that op's code (`code`) uses and that are not
 * parameters. A pointer is restrict unless another tensor of the op shares
 * its memory (an alias and its root). */
static void declare_ops_tensors(Emitter *e, const BufferPlan *plan, const StructuredOp *const *list, int n,
                                const char *code, const char *ws) {
  const Kernel *k = e->k;
  bool *used = arena_alloc(e->arena, (size_t)k->ntensors + 1);
  for (int i = 0; i < n; i++)
    for (int o = 0; o < op_all_operands(list[i]); o++) {
      int t = op_operand_at(list[i], o)->tensor;
      used[t] = mentions_identifier(code, e->kn.tensors[t]);
    }
  for (int o = 0; e->prologue && o < e->prologue->noperands; o++) { /* what its pack copy computes from */
    int t = e->prologue->operands[o].tensor;
    used[t] = mentions_identifier(code, e->kn.tensors[t]);
  }
  for (int t = 0; t < k->ntensors; t++) {
    const TensorParam *tp = &k->tensors[t];
    if (!used[t] || tp->storage == TS_PARAM)
      continue;
    int root = alias_root(k, t);
    bool shared = false;
    for (int u = 0; u < k->ntensors; u++)
      shared |= u != t && used[u] && alias_root(k, u) == root;
    const TensorParam *rp = &k->tensors[root];
    bool read_only = rp->storage == TS_CONST || (rp->storage == TS_PARAM && !rp->is_output);
    const char *cq = read_only ? "const " : "";
    const char *type = c_type_name(tp->type);
    const char *addr = root_address(e, plan, root, ws);
    bool same_type = rp->storage != TS_WORKSPACE && rp->type == tp->type;
    if (same_type)
      line(e, "%s%s *%s%s = %s;", cq, type, shared ? "" : "restrict ", e->kn.tensors[t], addr);
    else
      line(e, "%s%s *%s%s = (%s%s *)%s;", cq, type, shared ? "" : "restrict ", e->kn.tensors[t], cq, type, addr);
  }
}

/* The declarations of op's tensors that code mentions. */
static void declare_op_tensors(Emitter *e, const BufferPlan *plan, const StructuredOp *op, const char *code,
                               const char *ws) {
  declare_ops_tensors(e, plan, &op, 1, code, ws);
}

/* Packing in graph ops: buffers in the scratch area, constants pre-packed. */
static const char *const scratch_name = "lgen_scratch";

static void graph_packing(Emitter *e) {
  e->scratch = scratch_name;
  e->prepack_constants = true;
}

/* The scratch area's size: the largest need of any op (c_loops.c); `value`
 * gets it, or -1 when it depends on the sizes (then the C text is a
 * statement list that leaves it in lgen_scratch_bytes). */
static const char *graph_scratch_bytes(Emitter *e, int index, int64_t *value) {
  const Kernel *k = e->k;
  StrBuf steps = {0};
  int64_t most = 0;
  bool symbolic = false;
  for (int i = 0; i < k->nops; i++) {
    const OpPlan *op_plan = &e->opt->plans[index][i];
    int64_t v;
    e->sched = &op_plan->s;
    e->k = op_plan->view.k;
    const char *bytes = op_scratch_bytes(e, op_plan->view.op, &v);
    e->k = k;
    if (v >= 0) {
      most = v > most ? v : most;
      continue;
    }
    symbolic = true;
    sb_printf(&steps, "  if ((size_t)(%s) > lgen_scratch_bytes)\n    lgen_scratch_bytes = (size_t)(%s);\n", bytes,
              bytes);
  }
  const char *text = arena_printf(e->arena, "  size_t lgen_scratch_bytes = %lld;\n%s", (long long)most, sb_cstr(&steps));
  sb_free(&steps);
  *value = symbolic ? -1 : most;
  return text;
}

/* The whole workspace's size when static (-1 otherwise): the buffer plan's
 * intermediates, then the scratch area. */
static int64_t graph_workspace_static(Emitter *e, int index, const BufferPlan *plan) {
  int64_t scratch;
  graph_packing(e);
  graph_scratch_bytes(e, index, &scratch);
  return plan->total_static >= 0 && scratch >= 0 ? plan->total_static + scratch : -1;
}

/* One op of G_run as C, in `code`. In the graph's parallel region
 * (e->graph_region), an op with no worksharing loop runs under `omp
 * single` (whose barrier orders it before the next op), and an op whose
 * parallel loop cannot be orphaned is emitted again as it would be alone,
 * under `omp single` (its own region is then nested and inactive: it runs
 * on one thread). Returns whether the op needs `omp single`. */
static bool emit_graph_op(Emitter *e, StrBuf *code, const Kernel *k, const OpPlan *op_plan, int i, int indent) {
  e->out = code;
  e->indent = indent;
  e->sched = &op_plan->s;
  e->k = op_plan->view.k;
  e->op_index = i;
  e->op_worksharing = e->op_not_orphanable = false;
  bool saved_cap = e->region_thread_cap;
  emit_op(e, op_plan->view.op, i);
  bool single = e->graph_region && (!e->op_worksharing || e->op_not_orphanable);
  if (e->graph_region && e->op_not_orphanable) {
    sb_free(code);
    *code = (StrBuf){0};
    e->out = code;
    e->region_thread_cap = saved_cap;
    e->graph_region = false;
    emit_op(e, op_plan->view.op, i);
    e->graph_region = true;
  }
  e->k = k;
  return single;
}

/* Whether some op of the graph has a parallel loop that can be orphaned (no
 * reduction clause, no library call): then G_run opens one region for all. */
static bool graph_wants_region(const Emitter *e, int index) {
  for (int i = 0; i < e->k->nops; i++) {
    const Schedule *s = &e->opt->plans[index][i].s;
    if (s->split_reduction || s->library_call)
      continue;
    for (int d = 0; d < LG_MAX_DIMS; d++)
      if (s->parallel[d] || s->parallel_reg[d])
        return true;
  }
  return false;
}

/* A softmax and the ops just before and after it, row-fused
 * (schedule/rows.c): each op's block for each row of a chunk, its row dims
 * bound to that row's coordinates (the softmax's outer dims, row-major). */
typedef struct {
  int index, before, after; /* the ops (-1: none) */
} SoftmaxRows;

/* Member m of a row-fused group, its row dims bound to `values` (C
 * expressions of the group's rows), with no threads of its own. */
static void emit_row_member(Emitter *e, int index, int m, int rows, const char *const *values) {
  const Kernel *k = e->k;
  OpPlan member = e->opt->plans[index][m];
  for (int d = 0; d < LG_MAX_DIMS; d++)
    member.s.parallel[d] = member.s.parallel_reg[d] = false;
  const char **bound = arena_alloc(e->arena, sizeof(char *) * (size_t)(member.view.op->ndims + 1));
  row_group_bindings(&member, &k->ops[m], rows, values, bound);
  e->sched = &member.s;
  e->k = member.view.k;
  e->op_index = m;
  e->bound_dims = bound;
  emit_op(e, member.view.op, m);
  e->bound_dims = NULL;
  e->sched = NULL;
  e->k = k;
}

static void emit_softmax_member(Emitter *e, void *ctx, bool after) {
  const SoftmaxRows *sr = ctx;
  const Kernel *k = e->k;
  int member = after ? sr->after : sr->before;
  if (member < 0)
    return;
  const StructuredOp *op = &k->ops[member];
  int rows = e->opt->plans[sr->index][member].group_rows;
  line(e, "for (int64_t lgen_r = lgen_u0; lgen_r < lgen_u1; ++lgen_r) {");
  e->indent++;
  const char *values[LG_MAX_DIMS];
  const char *rest = "lgen_r";
  for (int q = rows - 1; q >= 0; q--) { /* the innermost row dim varies fastest */
    const AffineExpr *x = op->dims[q].extent;
    if (x->kind == AE_CONST && x->value == 1) {
      values[q] = "0";
      continue;
    }
    values[q] = names_claim(&e->kn.table, op->dims[q].name);
    const char *n = affine_str(e, x);
    if (q == 0)
      line(e, "const int64_t %s = %s;", values[q], rest);
    else
      line(e, "const int64_t %s = %s %% (%s);", values[q], rest, n);
    rest = arena_printf(e->arena, "%s / (%s)", rest, n);
  }
  bool saved_region = e->graph_region;
  e->graph_region = false;
  e->in_row_group = true;
  emit_row_member(e, sr->index, member, rows, values);
  e->in_row_group = false;
  e->graph_region = saved_region;
  e->indent--;
  line(e, "}");
}

static void emit_softmax_group(Emitter *e, StrBuf *ops, int index, int first, const BufferPlan *plan, const char *ws,
                               bool region) {
  const Kernel *k = e->k;
  int size = e->opt->plans[index][first].group_size, sm = k->ops[first].ext ? first : first + 1;
  SoftmaxRows sr = {index, sm > first ? first : -1, sm < first + size - 1 ? sm + 1 : -1};
  StrBuf code = {0};
  int base = region ? 2 : 1;
  e->out = &code;
  e->indent = base + 1;
  line(e, "/* comprehensions %d to %d, chunk by chunk: %s%s%s */", first + 1, first + size,
       sr.before >= 0 ? "the op before the softmax on a chunk's rows, " : "", "the softmax's rows",
       sr.after >= 0 ? ", then the op after it on them" : "");
  e->softmax_rows = emit_softmax_member;
  e->softmax_rows_ctx = &sr;
  const OpPlan *head = &e->opt->plans[index][first];
  e->chunk_group = head->nchunk_local ? head : NULL;
  e->sched = &e->opt->plans[index][sm].s;
  e->op_index = sm;
  bool saved_region = e->graph_region;
  emit_ext_op(e, &k->ops[sm], sm);
  e->graph_region = saved_region;
  e->softmax_rows = NULL;
  e->softmax_rows_ctx = NULL;
  e->chunk_group = NULL;
  e->out = ops;
  e->indent = base;
  line(e, "{");
  e->indent++;
  const StructuredOp *members[3];
  for (int m = 0; m < size; m++)
    members[m] = &k->ops[first + m];
  declare_ops_tensors(e, plan, members, size, sb_cstr(&code), ws);
  e->indent--;
  sb_puts(ops, sb_cstr(&code));
  line(e, "}");
  sb_free(&code);
}

/* A row-fused group (schedule/rows.c), ops first .. first + size - 1, into
 * `ops`: one loop nest over the rows (a worksharing loop when a member
 * would have used threads; else, in the graph's region, under `omp
 * single`), each member's block inside it with its row dims bound to the
 * rows and no threads of its own. A group around a softmax is
 * emit_softmax_group's. */
static void emit_graph_group(Emitter *e, StrBuf *ops, int index, int first, const BufferPlan *plan, const char *ws,
                             bool region) {
  const Kernel *k = e->k;
  if (k->ops[first].ext || k->ops[first + 1].ext) {
    emit_softmax_group(e, ops, index, first, plan, ws, region);
    return;
  }
  const OpPlan *head = &e->opt->plans[index][first];
  const StructuredOp *op0 = &k->ops[first];
  int size = head->group_size, rows = head->group_rows, base = region ? 2 : 1;
  bool threads = head->group_threads;
  const char *values[LG_MAX_DIMS];
  int loops = 0;
  e->out = ops;
  e->indent = base;
  if (region && !threads)
    line(e, "LGEN_OMP(omp single)");
  line(e, "{");
  e->indent++;
  for (int q = 0; q < rows; q++) {
    const AffineExpr *x = op0->dims[q].extent;
    values[q] = x->kind == AE_CONST && x->value == 1 ? "0" : names_claim(&e->kn.table, op0->dims[q].name);
    loops += values[q][0] != '0';
  }
  line(e, "/* comprehensions %d to %d, row by row */", first + 1, first + size);
  if (threads) {
    const char *collapse = loops > 1 ? arena_printf(e->arena, " collapse(%d)", loops) : "";
    line(e, "LGEN_OMP(omp %sfor%s)", region ? "" : "parallel ", collapse);
  }
  for (int q = 0; q < rows; q++)
    if (values[q][0] != '0') {
      line(e, "for (int64_t %s = 0; %s < %s; ++%s) {", values[q], values[q], affine_str(e, op0->dims[q].extent),
           values[q]);
      e->indent++;
    }
  bool saved_region = e->graph_region;
  e->graph_region = false;
  e->in_row_group = true;
  for (int m = first; m < first + size; m++) {
    StrBuf code = {0};
    int indent = e->indent;
    e->out = &code;
    e->indent = indent + 1;
    emit_row_member(e, index, m, rows, values);
    e->out = ops;
    e->indent = indent;
    line(e, "{");
    e->indent++;
    declare_op_tensors(e, plan, &k->ops[m], sb_cstr(&code), ws);
    e->indent--;
    sb_puts(ops, sb_cstr(&code));
    line(e, "}");
    sb_free(&code);
  }
  e->in_row_group = false;
  e->graph_region = saved_region;
  for (int q = 0; q < rows; q++)
    if (values[q][0] != '0') {
      e->indent--;
      line(e, "}");
    }
  e->indent--;
  line(e, "}");
}

static void graph_run_body(Emitter *e, StrBuf *body, int index, const BufferPlan *plan, const char *ws) {
  const Kernel *k = e->k;
  e->out = body;
  e->indent = 1;
  graph_packing(e);
  if (e->opt->checks)
    emit_checks(e);
  bool region = graph_wants_region(e, index);
  StrBuf ops = {0};
  e->graph_region = region;
  for (int i = 0; i < k->nops; i++) {
    const OpPlan *op_plan = &e->opt->plans[index][i];
    if (op_plan->is_prologue) /* its consumer's pack copy computes it */
      continue;
    e->prologue = op_plan->has_prologue ? &k->ops[op_plan->prologue_op] : NULL;
    e->prologue_tensor = op_plan->prologue_tensor;
    e->prologue_shape = e->prologue ? k->tensors[op_plan->prologue_tensor].shape : NULL;
    if (op_plan->group_size > 1) {
      emit_graph_group(e, &ops, index, i, plan, ws, region);
      i += op_plan->group_size - 1;
      continue;
    }
    StrBuf code = {0};
    int base = region ? 2 : 1;
    bool single = emit_graph_op(e, &code, k, op_plan, i, base + 1);
    e->out = &ops;
    e->indent = base;
    if (single)
      line(e, "LGEN_OMP(omp single)");
    line(e, "{");
    e->indent = base + 1;
    declare_op_tensors(e, plan, &k->ops[i], sb_cstr(&code), ws);
    if (mentions_identifier(sb_cstr(&code), scratch_name)) {
      const AffineExpr *end = plan->total;
      if (end->kind == AE_CONST && end->value == 0)
        line(e, "char *restrict %s = (char *)%s;", scratch_name, ws);
      else /* the plan's total is a multiple of 64: so is the scratch area */
        line(e, "char *restrict %s = (char *)%s + %s;", scratch_name, ws, affine_str(e, end));
    }
    sb_puts(&ops, sb_cstr(&code));
    e->indent = base;
    line(e, "}");
    sb_free(&code);
    e->prologue = NULL;
  }
  e->prologue = NULL;
  e->graph_region = false;
  e->out = body;
  e->indent = 1;
  if (region) {
    /* per-thread scratch slots exist for LG_SCRATCH_THREAD_SLOTS threads */
    if (e->region_thread_cap)
      use_helper(e->helpers_used, "lgen_thread_slots");
    line(e, "/* one parallel region for the whole graph: the ops share its threads */");
    line(e, "LGEN_OMP(omp parallel%s)", e->region_thread_cap
                                            ? arena_printf(e->arena, " num_threads(lgen_thread_slots(%d))",
                                                           LG_SCRATCH_THREAD_SLOTS)
                                            : "");
    line(e, "{");
  }
  sb_puts(body, sb_cstr(&ops));
  if (region)
    line(e, "}");
  e->region_thread_cap = false;
  sb_free(&ops);
}

static void emit_graph(Emitter *e, const Kernel *k, int index, const BufferPlan *plan) {
  e->k = k;
  e->has_graphs = true;
  kernel_names_init(&e->kn, k, e->opt->prefix, e->arena);
  GraphNames gn = graph_names(e);
  StrBuf body = {0};
  StrBuf *saved = e->out;
  graph_run_body(e, &body, index, plan, gn.workspace);
  graph_constants(e, e->constants, false, sb_cstr(&body));
  e->out = saved;
  e->indent = 0;

  int64_t scratch_static;
  const char *scratch = graph_scratch_bytes(e, index, &scratch_static);
  int64_t workspace_static = plan->total_static >= 0 && scratch_static >= 0 ? plan->total_static + scratch_static : -1;
  graph_doc(e, e->out, workspace_static);
  /* G_workspace_size: the plan's intermediates, then the scratch area */
  const char *total = affine_str(e, plan->total);
  sb_printf(e->out, "size_t %s(", gn.size_fn);
  for (int i = 0; i < k->nsizes; i++)
    sb_printf(e->out, "%sint64_t %s", i ? ", " : "", e->kn.sizes[i]);
  sb_printf(e->out, "%s)\n{\n", k->nsizes ? "" : "void");
  const char *mentioned = workspace_static >= 0 ? "" : arena_printf(e->arena, "%s %s", total, scratch);
  for (int i = 0; i < k->nsizes; i++)
    if (!mentions_identifier(mentioned, e->kn.sizes[i]))
      line(e, "  (void)%s;", e->kn.sizes[i]);
  if (workspace_static >= 0) {
    line(e, "  return %lld;", (long long)workspace_static);
  } else {
    sb_puts(e->out, scratch);
    line(e, "  return (size_t)(%s) + lgen_scratch_bytes;", total);
  }
  sb_puts(e->out, "}\n\n");
  /* G_run */
  sb_printf(e->out, "void %s(", gn.run_fn);
  graph_params(e, e->out, "restrict", true);
  sb_printf(e->out, ", void *restrict %s)\n{\n", gn.workspace);
  const char *text = sb_cstr(&body);
  for (int t = 0; t < k->ntensors; t++)
    if (k->tensors[t].storage == TS_PARAM && !mentions_identifier(text, e->kn.tensors[t]))
      line(e, "  (void)%s;", e->kn.tensors[t]);
  for (int i = 0; i < k->nsizes; i++)
    if (!mentions_identifier(text, e->kn.sizes[i]))
      line(e, "  (void)%s;", e->kn.sizes[i]);
  if (!mentions_identifier(text, gn.workspace))
    line(e, "  (void)%s;", gn.workspace);
  sb_puts(e->out, text);
  sb_puts(e->out, "}\n\n");
  sb_free(&body);
  /* G: lgen_ names cannot be parameters' (c_names.c), so they are free */
  sb_printf(e->out, "int %s(", e->kn.function);
  graph_params(e, e->out, "restrict", true);
  sb_puts(e->out, ")\n{\n");
  StrBuf args = {0};
  graph_params(e, &args, "", false);
  StrBuf sizes = {0};
  for (int i = 0; i < k->nsizes; i++)
    sb_printf(&sizes, "%s%s", i ? ", " : "", e->kn.sizes[i]);
  line(e, "  void *lgen_raw = malloc(%s(%s) + 64);", gn.size_fn, sb_cstr(&sizes));
  line(e, "  if (!lgen_raw)");
  line(e, "    return -1;");
  line(e, "  %s(%s, (void *)(((uintptr_t)lgen_raw + 63) & ~(uintptr_t)63));", gn.run_fn, sb_cstr(&args));
  line(e, "  free(lgen_raw);");
  line(e, "  return 0;");
  sb_puts(e->out, "}\n");
  sb_free(&args);
  sb_free(&sizes);
}

static void graph_header(Emitter *e, StrBuf *out, int index, const BufferPlan *plan) {
  GraphNames gn = graph_names(e);
  int64_t workspace_static = graph_workspace_static(e, index, plan);
  graph_doc(e, out, workspace_static);
  if (workspace_static >= 0)
    sb_printf(out, "#define %s_WORKSPACE_SIZE %lld\n", e->kn.function, (long long)workspace_static);
  graph_prototypes(e, out, &gn, "LGEN_RESTRICT", ";\n");
  sb_putc(out, '\n');
}

static const char *const align64_prelude = "/* constants are 64-byte aligned where the compiler can say so */\n"
                                           "#ifndef LGEN_ALIGN64\n#if defined(__GNUC__)\n"
                                           "#define LGEN_ALIGN64 __attribute__((aligned(64)))\n#else\n"
                                           "#define LGEN_ALIGN64\n#endif\n#endif\n\n";

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
    "#if defined(__FLT16_MANT_DIG__) && !defined(__cplusplus) && !defined(__x86_64__) && !defined(__i386__)\n";

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
  if (widen || narrow)
    sb_puts(out, "#include <string.h>\n");
  if (widen)
    sb_puts(out, f16_widen);
  if (narrow)
    sb_puts(out, f16_narrow);
  sb_puts(out, "#define LGEN_F16_TO_F32(h) lgen_f16_to_f32(h)\n"
               "#define LGEN_F32_TO_F16(f) lgen_f32_to_f16(f)\n"
               "#endif\n\n");
}

static void type_prelude(StrBuf *out, const Module *m, const Emitter *e) {
  if (module_uses_type(m, TY_I1))
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
      f16_conversions(out, e->widens_f16, e->narrows_f16);
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

/* Run-time helpers the generated code may call, in dependency order. Only
 * those a file uses are emitted: clang warns about unused static functions. */
typedef struct {
  const char *name;
  const char *deps; /* space-separated names of earlier entries */
  const char *code;
} RuntimeHelper;

static const RuntimeHelper runtime_helpers[] = {
    {"lgen_floordiv", "",
     "/* affine floordiv, ceildiv and mod round toward minus infinity, unlike C's / and % */\n"
     "static inline int64_t lgen_floordiv(int64_t a, int64_t b) {\n"
     "  int64_t q = a / b;\n  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n"},
    {"lgen_ceildiv", "lgen_floordiv",
     "static inline int64_t lgen_ceildiv(int64_t a, int64_t b) { return -lgen_floordiv(-a, b); }\n"},
    {"lgen_mod", "lgen_floordiv",
     "static inline int64_t lgen_mod(int64_t a, int64_t b) { return a - lgen_floordiv(a, b) * b; }\n"},
    {"lgen_min", "", "static inline int64_t lgen_min(int64_t a, int64_t b) { return a < b ? a : b; }\n"},
    {"lgen_alloc", "",
     "/* packed operands live in 64-byte aligned heap buffers; when malloc\n"
     " * fails, LGEN_ALLOC_FAILED() runs (define it first to handle that) */\n"
     "#include <stdlib.h>\n"
     "#ifndef LGEN_ALLOC_FAILED\n#define LGEN_ALLOC_FAILED() abort()\n#endif\n"
     "static inline void *lgen_alloc(size_t bytes, void **raw) {\n"
     "  *raw = malloc(bytes + 64);\n"
     "  if (!*raw)\n    LGEN_ALLOC_FAILED();\n"
     "  return (void *)(((uintptr_t)*raw + 63) & ~(uintptr_t)63);\n}\n"},
    {"lgen_thread_slots", "",
     "/* a model graph's per-thread packed buffers live in thread slots of its\n"
     " * workspace: the parallel regions that use them ask for at most that many\n"
     " * threads, and thread i packs into slot i */\n"
     "#if defined(_OPENMP)\n#include <omp.h>\n"
     "static inline int lgen_thread_slots(int slots) {\n"
     "  int threads = omp_get_max_threads();\n  return threads < slots ? threads : slots;\n}\n"
     "#define LGEN_THREAD_NUM() omp_get_thread_num()\n#else\n#define LGEN_THREAD_NUM() 0\n#endif\n"},
    {"LGEN_ISNAN", "", "/* NaN, the one value unequal to itself (templates' @ISNAN@ on floats) */\n"
                       "#define LGEN_ISNAN(v) ((v) != (v))\n"},
    {"LGEN_NEVER_NAN", "", "/* templates' @ISNAN@ on integers */\n#define LGEN_NEVER_NAN(v) 0\n"},
    {"LGEN_MAX_THREADS", "",
     "/* the threads a parallel region would have (1 without OpenMP) */\n"
     "#if defined(_OPENMP)\n#include <omp.h>\n#define LGEN_MAX_THREADS() omp_get_max_threads()\n"
     "#else\n#define LGEN_MAX_THREADS() 1\n#endif\n"},
    {"LGEN_CHECK_FAILED", "",
     "/* --checks: a size violation calls LGEN_CHECK_FAILED(message); define it\n"
     " * before this point to handle violations yourself. */\n"
     "#ifndef LGEN_CHECK_FAILED\n#include <stdio.h>\n#include <stdlib.h>\n"
     "#define LGEN_CHECK_FAILED(msg) (fprintf(stderr, \"%s\\n\", (msg)), abort())\n#endif\n"},
    {"lgen_range", "",
     "/* the values an index expression takes over the iteration domain */\n"
     "typedef struct { int64_t lo, hi; } lgen_range;\n"
     "static inline lgen_range lgen_range_of(int64_t lo, int64_t hi) {\n"
     "  lgen_range r;\n  r.lo = lo;\n  r.hi = hi;\n  return r;\n}\n"},
    {"lgen_range_neg", "lgen_range",
     "static inline lgen_range lgen_range_neg(lgen_range a) { return lgen_range_of(-a.hi, -a.lo); }\n"},
    {"lgen_range_add", "lgen_range",
     "static inline lgen_range lgen_range_add(lgen_range a, lgen_range b) {\n"
     "  return lgen_range_of(a.lo + b.lo, a.hi + b.hi);\n}\n"},
    {"lgen_range_sub", "lgen_range",
     "static inline lgen_range lgen_range_sub(lgen_range a, lgen_range b) {\n"
     "  return lgen_range_of(a.lo - b.hi, a.hi - b.lo);\n}\n"},
    {"lgen_range_mul", "lgen_range",
     "static inline lgen_range lgen_range_mul(lgen_range a, lgen_range b) {\n"
     "  int64_t p[4], lo, hi;\n  int i;\n"
     "  p[0] = a.lo * b.lo;\n  p[1] = a.lo * b.hi;\n  p[2] = a.hi * b.lo;\n  p[3] = a.hi * b.hi;\n"
     "  lo = hi = p[0];\n"
     "  for (i = 1; i < 4; i++) {\n    lo = p[i] < lo ? p[i] : lo;\n    hi = p[i] > hi ? p[i] : hi;\n  }\n"
     "  return lgen_range_of(lo, hi);\n}\n"},
    {"lgen_range_floordiv", "lgen_range lgen_floordiv",
     "/* divisors are single values (never dims); a divisor <= 0 fails the check */\n"
     "static inline lgen_range lgen_range_floordiv(lgen_range a, lgen_range b) {\n"
     "  if (b.lo <= 0)\n    return lgen_range_of(-1, INT64_MAX);\n"
     "  return lgen_range_of(lgen_floordiv(a.lo, b.lo), lgen_floordiv(a.hi, b.lo));\n}\n"},
    {"lgen_range_ceildiv", "lgen_range lgen_ceildiv",
     "static inline lgen_range lgen_range_ceildiv(lgen_range a, lgen_range b) {\n"
     "  if (b.lo <= 0)\n    return lgen_range_of(-1, INT64_MAX);\n"
     "  return lgen_range_of(lgen_ceildiv(a.lo, b.lo), lgen_ceildiv(a.hi, b.lo));\n}\n"},
    {"lgen_range_mod", "lgen_range",
     "static inline lgen_range lgen_range_mod(lgen_range a, lgen_range b) {\n"
     "  if (b.lo <= 0)\n    return lgen_range_of(-1, INT64_MAX);\n"
     "  if (a.lo >= 0 && a.hi < b.lo)\n    return a;\n"
     "  return lgen_range_of(0, b.lo - 1);\n}\n"},
};

enum { NUM_RUNTIME_HELPERS = sizeof runtime_helpers / sizeof *runtime_helpers };

void use_helper(bool *used, const char *name) {
  for (int i = 0; i < NUM_RUNTIME_HELPERS; i++) {
    if (strcmp(runtime_helpers[i].name, name) != 0 || used[i])
      continue;
    used[i] = true;
    char deps[128];
    snprintf(deps, sizeof deps, "%s", runtime_helpers[i].deps);
    for (char *save = NULL, *d = strtok_r(deps, " ", &save); d; d = strtok_r(NULL, " ", &save))
      use_helper(used, d);
  }
}

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
               .constants = &constants};
  for (int i = 0; i < m->kernels.len; i++) {
    if (i)
      sb_putc(&bodies, '\n');
    if (graph_plan(opt, i))
      emit_graph(&e, m->kernels.items[i], i, graph_plan(opt, i));
    else
      emit_kernel(&e, m->kernels.items[i], i);
  }
  sb_printf(out, "/* Generated by lgen from %s. Do not edit. */\n", c_comment_text(arena, opt->input_name));
  if (opt->target && opt->target->vector_bytes == 64 && uses_register_blocks(m, opt))
    sb_puts(out, "/* the register blocks are sized for 512-bit vectors (--target); let gcc use them */\n"
                 "#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)\n"
                 "#pragma GCC target(\"prefer-vector-width=512\")\n#endif\n");
  if (opt->header_name)
    sb_printf(out, "#include \"%s\"\n", opt->header_name);
  if (e.has_graphs)
    sb_puts(out, "#include <stddef.h>\n");
  sb_puts(out, "#include <stdint.h>\n");
  if (e.has_graphs)
    sb_puts(out, "#include <stdlib.h>\n");
  if (e.needs_math || e.needs_fma)
    sb_puts(out, "#include <math.h>\n");
  if (e.uses_cblas)
    sb_puts(out, "#include <cblas.h>\n");
  sb_putc(out, '\n');
  type_prelude(out, m, &e);
  sb_puts(out, omp_prelude);
  if (e.needs_fma)
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
  bool any_helper = false;
  for (int i = 0; i < NUM_RUNTIME_HELPERS; i++)
    if (e.helpers_used[i]) {
      sb_puts(out, runtime_helpers[i].code);
      any_helper = true;
    }
  if (any_helper)
    sb_putc(out, '\n');
  if (helpers.len) {
    sb_puts(out, sb_cstr(&helpers));
    sb_putc(out, '\n');
  }
  if (e.uses_align64)
    sb_puts(out, align64_prelude);
  if (constants.len) {
    append_taking(out, &constants);
    sb_putc(out, '\n');
  }
  sb_puts(out, sb_cstr(&bodies));
  sb_free(&helpers);
  sb_free(&bodies);
  sb_free(&constants);
}

void emit_c_header(StrBuf *out, const Module *m, const EmitOptions *opt, Arena *arena) {
  sb_printf(out, "/* Generated by lgen from %s. Do not edit. */\n", c_comment_text(arena, opt->input_name));
  sb_printf(out, "#ifndef %s\n#define %s\n\n#include <stddef.h>\n#include <stdint.h>\n\n", opt->guard, opt->guard);
  type_prelude(out, m, NULL);
  sb_puts(out, "#ifndef LGEN_RESTRICT\n#ifdef __cplusplus\n#define LGEN_RESTRICT __restrict\n#else\n"
               "#define LGEN_RESTRICT restrict\n#endif\n#endif\n\n");
  sb_puts(out, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  Emitter e = {.out = out, .opt = opt, .arena = arena};
  for (int i = 0; i < m->kernels.len; i++) {
    e.k = m->kernels.items[i];
    kernel_names_init(&e.kn, e.k, opt->prefix, arena);
    if (graph_plan(opt, i)) {
      graph_header(&e, out, i, graph_plan(opt, i));
      continue;
    }
    doc_comment(&e);
    signature(&e, out, "LGEN_RESTRICT");
    sb_puts(out, ";\n\n");
  }
  sb_printf(out, "#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s */\n", opt->guard);
}

/* The run bodies are generated again (and dropped) for the pre-packed
 * constants they define and for which constants they still read. */
void emit_c_weights(StrBuf *out, const Module *m, const EmitOptions *opt, Arena *arena) {
  StrBuf defs = {0}, helpers = {0};
  PtrVec helper_names = {0};
  Emitter e = {.opt = opt, .arena = arena, .helpers = &helpers, .helper_names = &helper_names, .constants = &defs,
               .weights_file = true};
  for (int i = 0; i < m->kernels.len; i++) {
    if (!graph_plan(opt, i))
      continue;
    e.k = m->kernels.items[i];
    kernel_names_init(&e.kn, e.k, opt->prefix, arena);
    GraphNames gn = graph_names(&e);
    StrBuf body = {0};
    graph_run_body(&e, &body, i, graph_plan(opt, i), gn.workspace);
    graph_constants(&e, &defs, true, sb_cstr(&body));
    sb_free(&body);
  }
  sb_free(&helpers);
  sb_printf(out, "/* Generated by lgen from %s: the constants of its model graphs. Do not edit. */\n",
            c_comment_text(arena, opt->input_name));
  sb_puts(out, "#include <stdint.h>\n");
  if (e.needs_math)
    sb_puts(out, "#include <math.h>\n");
  sb_putc(out, '\n');
  type_prelude(out, m, NULL);
  sb_puts(out, align64_prelude);
  append_taking(out, &defs);
}
