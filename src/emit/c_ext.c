/* c_ext.c - C for non-structured ops (ExtOp): the op's template
 * (templates/TMPL.c, read by templates.c) instantiated for its element and
 * index types as static functions, defined once per file, and one call
 * that passes the shapes.
 *
 * Shapes are passed as the row view [outer, n, inner] around the op's axis
 * (products of the tensor's extents, C expressions in the kernel's sizes) or,
 * for ops that need every dim, as a local array. The templates' parallel
 * loops are orphaned `omp for`s: inside a graph's region every thread makes
 * the call and the threads share the loops (their barriers order the op
 * before the next); outside one, the call gets a region of its own.
 *
 * Calls: c_names.c, c_expr.c, c_runtime.c, c_access.c. */
#include <string.h>

#include "emit/c_internal.h"

typedef struct {
  Emitter *e;
  const ExtOp *x;
  const char *fn; /* the instance's function name */
  LoopNode *call; /* the call built */
  bool grouped;   /* a softmax with the ops before and after it (emit_ext_op) */
  bool in_region; /* in a graph's parallel region (emit_ext_op) */
  const OpPlan *chunk_group; /* a softmax group's head plan, with chunk buffers (emit_ext_op) */
  const Schedule *sched;     /* the op's (rows_parallel, rows_tile) */
} ExtCall;

static const TensorParam *tensor_of(const ExtCall *c, int i) { return &c->e->k->tensors[c->x->tensors[i]]; }
static const char *name_of(const ExtCall *c, int i) { return c->e->kn.tensors[c->x->tensors[i]]; }

/* The product of extents [from, to) of tensor i as a C expression of type
 * int64_t (numbers folded into one factor). */
static const char *extent_product(const ExtCall *c, int i, int from, int to) {
  const TensorParam *t = tensor_of(c, i);
  int64_t number = 1;
  StrBuf sb = {0};
  for (int d = from; d < to; d++) {
    const AffineExpr *x = t->shape[d];
    if (x->kind == AE_CONST) {
      number *= x->value;
      continue;
    }
    sb_printf(&sb, "%s(int64_t)(%s)", sb.len ? " * " : "", affine_str(c->e, NULL, x));
  }
  const char *s;
  if (!sb.len)
    s = arena_printf(c->e->arena, "%lld", (long long)number);
  else if (number == 1)
    s = arena_strdup(c->e->arena, sb_cstr(&sb));
  else
    s = arena_printf(c->e->arena, "%lld * %s", (long long)number, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

static const char *extent(const ExtCall *c, int i, int d) { return extent_product(c, i, d, d + 1); }

/* "const int64_t NAME[] = {e0, e1, ...};" of extents [from, to) of tensor i. */
static void dims_array(const ExtCall *c, const char *name, int i, int from, int to) {
  StrBuf sb = {0};
  for (int d = from; d < to; d++)
    sb_printf(&sb, "%s%s", d > from ? ", " : "", extent(c, i, d));
  put(c->e, loops_let(c->e->arena, "const int64_t", arena_printf(c->e->arena, "%s[]", name),
                      arena_printf(c->e->arena, "{%s}", sb_cstr(&sb))));
  sb_free(&sb);
}

static const char *lowest(ElemType t) { return elem_type_c_lowest(t); }
static const char *highest(ElemType t) { return elem_type_c_highest(t); }

static const char *template_text(const Emitter *e, const char *name) {
  const TemplateSet *set = e->opt->templates;
  for (int i = 0; set && i < set->count; i++)
    if (strcmp(set->files[i].name, name) == 0)
      return set->files[i].text;
  return NULL;
}

/* Appends text with every @KEY@ replaced by its value. */
static void substitute(StrBuf *out, const char *text, const char *const *keys, const char *const *values, int n) {
  for (const char *p = text; *p;) {
    if (*p == '@') {
      bool done = false;
      for (int i = 0; i < n && !done; i++) {
        size_t len = strlen(keys[i]);
        if (strncmp(p + 1, keys[i], len) == 0 && p[1 + len] == '@') {
          sb_puts(out, values[i]);
          p += len + 2;
          done = true;
        }
      }
      if (done)
        continue;
    }
    sb_putc(out, *p++);
  }
}

/* The C function computing fn (exp, log, ...) on type t for a template. */
static const char *ext_math_function(Emitter *e, const char *fn, ElemType t) {
  ExprCtx ctx = {.helpers = e->helpers, .helper_names = e->helper_names, .arena = e->arena, .needs = &e->needs};
  return c_math_function(&ctx, fn, t);
}

/* The template instantiated for value type t and index type it (once per
 * file); c->fn gets the instance's entry point, lgen_TMPL_SUFFIX. */
static void instantiate(ExtCall *c, ElemType t, ElemType it, bool indexed) {
  Emitter *e = c->e;
  const char *suffix = indexed ? arena_printf(e->arena, "%s_%s", elem_type_name(t), elem_type_name(it))
                               : elem_type_name(t);
  c->fn = arena_printf(e->arena, "lgen_%s_%s", c->x->tmpl, suffix);
  for (int i = 0; i < e->helper_names->len; i++)
    if (strcmp(e->helper_names->items[i], c->fn) == 0)
      return;
  vec_push(e->arena, e->helper_names, (void *)c->fn);
  const char *text = template_text(e, c->x->tmpl);
  if (!text) /* templates_load reads every template an ExtOp names */
    diag_bug(e->opt->diag, "template %s was not loaded", c->x->tmpl);
  static const char *const keys[] = {"S",    "T",       "I",    "LOWEST", "HIGHEST", "EXP",  "LOG",
                                     "TOF32", "FROMF32", "SINT", "EXPNEG", "C",       "TOC",  "FROMC",
                                     "CFMA",  "CEXP",    "CEXPNEG", "CTANH",   "CSIMD", "ISNAN", "ARITH"};
  /* @SINT@: the signed integer type as wide as @T@ (ordering keys of floats) */
  /* @C@: the type a template computes in (attention.c): float for f16 and
   * f32, double for f64; @TOC@ and @FROMC@ convert, @CFMA@, @CEXP@,
   * @CEXPNEG@ and @CTANH@ compute in it, @CSIMD@ vectorises a loop that
   * calls them */
  ElemType ct = t == TY_F64 ? TY_F64 : TY_F32;
  const char *values[] = {suffix,
                          c_type_name(t),
                          c_type_name(it),
                          lowest(t),
                          highest(t),
                          "exp",
                          "log",
                          "(float)",
                          arena_printf(e->arena, "(%s)", c_type_name(t)),
                          t == TY_F64 ? "int64_t" : t == TY_F32 ? "int32_t" : c_type_name(t),
                          "exp",
                          c_type_name(ct),
                          NULL, /* @TOC@, @FROMC@: below */
                          NULL,
                          ct == TY_F64 ? "LGEN_FMA" : "LGEN_FMAF",
                          "exp",
                          "exp",
                          "tanh",
                          /* @CSIMD@: `omp simd` on a loop that calls @CEXPNEG@, which only
                           * lgen's f32 helper allows (clang warns of a requested
                           * vectorisation it cannot do around libm's exp) */
                          ct == TY_F64 ? "/* libm's exp: no omp simd */" : "LGEN_OMP_SIMD(omp simd)",
                          /* @ISNAN@(v): a macro, so that integers compare nothing to
                           * itself (gcc warns of such a comparison) */
                          elem_type_is_float(t) ? "LGEN_ISNAN" : "LGEN_NEVER_NAN",
                          /* @ARITH@: the type + and * compute in, converted back to
                           * @T@: integers in unsigned arithmetic (it wraps; int
                           * promotion of u16 * u16 could overflow int) */
                          elem_type_is_float(t) || t == TY_I1 ? c_type_name(t)
                          : elem_type_bits(t) == 64           ? "uint64_t"
                                                              : "uint32_t"};
  if (strstr(text, "@ISNAN@"))
    use_helper(e->helpers_used, values[19]);
  /* @TOF32@ and @FROMF32@: a value of @T@ to float and back (f16 computes in float) */
  if (t == TY_F16 && (strstr(text, "@TOF32@") || strstr(text, "@TOC@"))) {
    values[7] = "LGEN_F16_TO_F32";
    values[8] = "LGEN_F32_TO_F16";
    e->needs.widens_f16 = e->needs.narrows_f16 = true;
  }
  /* ... and to @C@ and back: the same but for f64, which stays double */
  values[12] = t == TY_F64 ? "(double)" : values[7];
  values[13] = values[8];
  if (strstr(text, "@CFMA@"))
    e->needs.fma = true;
  /* @EXP@, @LOG@, @EXPNEG@ (on @T@) and @CEXP@, @CEXPNEG@, @CTANH@ (on
   * @C@): lgen's vectorisable f32 helpers (defined before the template's
   * text, once per file), libm's for f64 */
  static const struct {
    const char *key, *fn;
    int slot;
    bool on_c;
  } math[] = {{"@EXP@", "exp", 5, false},    {"@LOG@", "log", 6, false},         {"@EXPNEG@", "expneg", 10, false},
              {"@CEXP@", "exp", 15, true},   {"@CEXPNEG@", "expneg", 16, true}, {"@CTANH@", "tanh", 17, true}};
  for (size_t i = 0; i < sizeof math / sizeof math[0]; i++)
    if (strstr(text, math[i].key))
      values[math[i].slot] = ext_math_function(e, math[i].fn, math[i].on_c ? ct : t);
  sb_printf(e->helpers, "/* templates/%s.c for %s */\n", c->x->tmpl, suffix);
  /* its standard headers go to the top of the file with the others */
  StrBuf body = {0};
  for (const char *p = text; *p;) {
    size_t n = strcspn(p, "\n");
    if (n == 19 && strncmp(p, "#include <string.h>", n) == 0)
      e->includes |= INC_STRING;
    else
      sb_putn(&body, p, n + (p[n] == '\n'));
    p += n + (p[n] == '\n');
  }
  substitute(e->helpers, sb_cstr(&body), keys, (const char *const *)values, (int)(sizeof keys / sizeof keys[0]));
  sb_free(&body);
  sb_putc(e->helpers, '\n');
}

/* ---- the calls ---- */

/* The template's call with the arguments fmt gives, one list ("a, b,
 * c"; commas inside parentheses or braces do not separate). */
static void call_args(ExtCall *c, const char *fmt, ...) LG_PRINTF(2, 3);
static void call_args(ExtCall *c, const char *fmt, ...) {
  Arena *a = c->e->arena;
  va_list ap;
  va_start(ap, fmt);
  StrBuf sb = {0};
  sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  PtrVec args = {0};
  const char *text = sb_cstr(&sb), *start = text;
  int depth = 0;
  for (const char *p = text;; p++) {
    depth += *p == '(' || *p == '{' ? 1 : *p == ')' || *p == '}' ? -1 : 0;
    if (*p == '\0' || (depth == 0 && p[0] == ',' && p[1] == ' ')) {
      vec_push(a, &args, arena_strndup(a, start, (size_t)(p - start)));
      if (!*p)
        break;
      start = p + 2;
    }
  }
  c->call = put(c->e, loops_call(a, c->fn, args.len, (const char *const *)args.items));
  sb_free(&sb);
}

static int attr_int(const ExtCall *c, const char *name, int64_t dflt) {
  return (int)ext_attr_int(c->x, name, dflt);
}

/* outer, n, inner of tensor i around `axis`. */
static const char *rows(const ExtCall *c, int i, int axis) {
  return arena_printf(c->e->arena, "%s, %s, %s", extent_product(c, i, 0, axis), extent(c, i, axis),
                      extent_product(c, i, axis + 1, tensor_of(c, i)->rank));
}

static int combiner_code(const char *s) {
  static const char *const names[] = {"replace", "add", "mul", "max", "min"};
  for (int i = 0; i < 5; i++)
    if (strcmp(s, names[i]) == 0)
      return i;
  return 0;
}

/* attention, online_attention, attention_scores (templates/attention.c):
 * q's leading dims flatten to [B, H] (H the dim before Lq; B the rest), the
 * mask's broadcast becomes element strides (0: broadcast), lgen_exp_f32,
 * lgen_expneg_f32 and lgen_tanh_f32 are emitted for it, and the thread
 * slots of its scratch cap the region's threads. */
static void call_attention(ExtCall *c) {
  Emitter *e = c->e;
  const ExtOp *x = c->x;
  int r = tensor_of(c, 0)->rank, out = x->ninputs, nscr = x->ninputs + x->noutputs;
  int mask = (int)ext_attr_int(x, "mask_input", -1), lens = (int)ext_attr_int(x, "lens_input", -1);
  ElemType t = tensor_of(c, 0)->type, ct = t == TY_F64 ? TY_F64 : TY_F32; /* the type it computes in */
  use_helper(e->helpers_used, "lgen_thread_slots");
  instantiate(c, t, lens >= 0 ? tensor_of(c, lens)->type : TY_I64, true);
  const char *B = r > 3 ? extent_product(c, 0, 0, r - 3) : "1", *H = r > 2 ? extent(c, 0, r - 3) : "1";
  const char *Hkv = r > 2 ? extent(c, 1, r - 3) : "1";
  /* k and v stored transposed ([..., D, Lk], [..., Dv, Lk]: k_map, v_map) */
  int kt = attr_int(c, "k_transposed", 0), vt = attr_int(c, "v_transposed", 0);
  const char *Lk = extent(c, 1, r - 2 + kt), *Dv = extent(c, 2, r - 1 - vt);
  /* q stored [..., D, Lq] and the output [..., Dv, Lq] (q_map, o_map) */
  int qt = attr_int(c, "q_transposed", 0), ot = attr_int(c, "o_transposed", 0);
  const char *Lq = extent(c, 0, r - 2 + qt), *D = extent(c, 0, r - 1 - qt);
  /* the mask's element strides over [B, H, Lq, Lk] and its key columns */
  const char *ms[4] = {"0", "0", "0", "0"}, *mask_lk = "0";
  const char *fmask = "0", *bmask = "0";
  if (mask >= 0) {
    const TensorParam *m = tensor_of(c, mask);
    int mr = m->rank;
    bool pad = ext_attr_int(x, "mask_pad", 0) != 0;
    const char *stride = "1";
    for (int d = mr - 1; d >= 0; d--) {
      int qd = r - mr + d; /* q's dim under it: r - 1 is the keys */
      int slot = qd == r - 1 ? 3 : qd == r - 2 ? 2 : qd == r - 3 ? 1 : 0;
      bool one = m->shape[d]->kind == AE_CONST && m->shape[d]->value == 1;
      if (slot == 3) {
        mask_lk = one && !pad ? Lk : extent(c, mask, d);
        ms[3] = one && !pad ? "0" : "1";
      } else if (!one && (slot != 0 || qd == r - 4)) {
        ms[slot] = stride; /* B: the innermost batch dim's stride (all or none are broadcast) */
      }
      stride = arena_printf(e->arena, "%s * %s", stride, extent(c, mask, d));
    }
    if (m->type == TY_I1)
      bmask = arena_printf(e->arena, "(const unsigned char *)%s", name_of(c, mask));
    else
      fmask = name_of(c, mask);
  }
  bool online = strcmp(x->kind, "online_attention") == 0, sc = strcmp(x->kind, "attention_scores") == 0;
  StrBuf f = {0};
  c_float_literal(&f, ext_attr_float(x, "scale", 1), ct);
  sb_puts(&f, ", ");
  c_float_literal(&f, ext_attr_float(x, "softcap", 0), ct);
  call_args(c, "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
            "%s, %d, %lld, %d, %d, %d, %d, %d, %d", name_of(c, 0), name_of(c, 1), name_of(c, 2), fmask, bmask,
            lens >= 0 ? name_of(c, lens) : "0", sc ? "0" : name_of(c, out), online ? name_of(c, out + 1) : "0",
            online ? name_of(c, out + 2) : "0", sc ? name_of(c, out) : "0", name_of(c, nscr), extent(c, nscr, 1),
            extent(c, nscr, 0), B, H, Hkv, Lq, Lk, D, Dv, ms[0], ms[1], ms[2],
            ms[3], mask_lk, sb_cstr(&f), (int)ext_attr_int(x, "causal", 0),
            (long long)ext_attr_int(x, "causal_offset", 0), (int)ext_attr_int(x, "causal_lens", 0),
            (int)ext_attr_int(x, "qk_mode", 0), kt, vt, qt, ot);
  c->call->thread_slots = true; /* its scratch has a slot per thread */
  sb_free(&f);
}

/* Tensor i of a softmax call on a chunk's rows alone (rows lgen_u0 on, as
 * rows 0 on): its chunk buffer's slot, or its row lgen_u0 (each row of x
 * and y has n elements, of max_init and sum_init one). */
static const char *chunk_rows_of(const ExtCall *c, int i, const char *n) {
  const OpPlan *g = c->chunk_group;
  for (int l = 0; l < g->nchunk_local; l++)
    if (g->chunk_local[l] == c->x->tensors[i])
      return arena_printf(c->e->arena, "%s + lgen_slot", name_of(c, i));
  return arena_printf(c->e->arena, "%s + lgen_u0%s%s", name_of(c, i), n ? " * " : "", n ? n : "");
}

/* softmax (templates/softmax.c), x [, max_init, sum_init] -> y, max, sum,
 * scale: the call runs one chunk of rows (lgen_softmax_chunk), and the
 * chunks are this loop's, shared out among the threads. A row-fused op
 * after the softmax (`grouped`: c_emit.c puts it in the loop) runs inside
 * it, on the chunk's rows lgen_u0 .. lgen_u1 - 1, while they are in cache;
 * a row-fused op before it computes the chunk's rows of its input just
 * before the call. With
 * chunk buffers (c->chunk_group: x or y kept per thread, a chunk each,
 * which needs a thread slot per thread and chunks of at most
 * LG_SOFTMAX_CHUNK_ROWS), the call sees the chunk's rows as rows 0 on. */
static void call_softmax(ExtCall *c) {
  bool grouped = c->grouped;
  Emitter *e = c->e;
  const ExtOp *x = c->x;
  int out = x->ninputs, axis = attr_int(c, "axis", -1), is_log = attr_int(c, "log", 0);
  ElemType t = tensor_of(c, 0)->type;
  instantiate(c, t, TY_I64, false);
  StrBuf scale = {0}, post = {0};
  c_float_literal(&scale, ext_attr_float(x, "scale", 1.0), t);
  c_float_literal(&post, ext_attr_float(x, "out_scale", 1.0), t);
  const char *outer = extent_product(c, 0, 0, axis), *inner = extent_product(c, 0, axis + 1, tensor_of(c, 0)->rank);
  const char *n = extent(c, 0, axis), *threads = NULL;
  bool chunked = c->chunk_group != NULL;
  Arena *a = e->arena;
  LoopList *outside = e->cur;
  e->cur = &put(e, loops_block(a, REGION_NONE))->body;
  put(e, loops_let(a, "const int64_t", "lgen_units",
                   arena_printf(a, "lgen_softmax_units_%s(%s, %s)", elem_type_name(t), outer, inner)));
  if (chunked) {
    use_helper(e->helpers_used, "lgen_min");
    use_helper(e->helpers_used, "lgen_thread_slots");
    if (!c->in_region) /* else the graph's region carries the cap (the loop's mark) */
      threads = arena_printf(a, "lgen_thread_slots(%d)", LG_SCRATCH_THREAD_SLOTS);
    put(e, loops_let(a, "const int64_t", "lgen_chunk",
                     arena_printf(a, "lgen_min(lgen_softmax_chunk_%s(%s, %s, %d), %d)", elem_type_name(t), outer,
                                  inner, is_log, LG_SOFTMAX_CHUNK_ROWS)));
  } else {
    put(e, loops_let(a, "const int64_t", "lgen_chunk",
                     arena_printf(a, "lgen_softmax_chunk_%s(%s, %s, %d)", elem_type_name(t), outer, inner, is_log)));
  }
  LoopNode *chunks = put(e, loops_for(a, "lgen_c", "0", "(lgen_units + lgen_chunk - 1) / lgen_chunk", 1));
  chunks->par = grouped && !c->in_region ? PAR_REGION : PAR_WORKSHARING;
  chunks->threads = threads;
  chunks->thread_slots = chunked;
  chunks->schedule = "schedule(static)";
  e->cur = &chunks->body;
  put(e, loops_let(a, "const int64_t", "lgen_u0", "lgen_c * lgen_chunk"));
  put(e, loops_let(a, "const int64_t", "lgen_u1", "lgen_units - lgen_u0 < lgen_chunk ? lgen_units : lgen_u0 + lgen_chunk"));
  if (chunked) {
    put(e, loops_let(a, "const int64_t", "lgen_slot",
                     arena_printf(a, "(int64_t)LGEN_THREAD_NUM() * %d * %s", LG_SOFTMAX_CHUNK_ROWS, n)));
    put(e, loops_let(a, "const int64_t", "lgen_shift", arena_printf(a, "lgen_u0 * %s - lgen_slot", n)))->note =
        "row lgen_u0 of a chunk buffer: its slot";
  }
  if (chunked)
    call_args(c, "%s, %s, %s, %s, %s, %s, %s, lgen_u1 - lgen_u0, %s, 1, %s, %s, %d, 0, lgen_u1 - lgen_u0",
         chunk_rows_of(c, 0, n), chunk_rows_of(c, out, n), chunk_rows_of(c, out + 1, NULL),
         chunk_rows_of(c, out + 2, NULL), chunk_rows_of(c, out + 3, NULL),
         x->ninputs > 1 ? chunk_rows_of(c, 1, NULL) : "0", x->ninputs > 2 ? chunk_rows_of(c, 2, NULL) : "0", n,
         sb_cstr(&scale), sb_cstr(&post), is_log);
  else
    call_args(c, "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %d, lgen_u0, lgen_u1", name_of(c, 0),
         name_of(c, out), name_of(c, out + 1), name_of(c, out + 2), name_of(c, out + 3),
         x->ninputs > 1 ? name_of(c, 1) : "0", x->ninputs > 2 ? name_of(c, 2) : "0", rows(c, 0, axis),
         sb_cstr(&scale), sb_cstr(&post), is_log);
  e->cur = outside;
  sb_free(&scale);
  sb_free(&post);
}

/* The last argument of a template with a loop over rows: its schedule's
 * rows per thread at a time (0: an equal share each; -1: not shared out,
 * one thread runs every row), which lgen_row_chunk turns into the loop's
 * OpenMP chunk. */
static long long row_tile(ExtCall *c) {
  use_helper(c->e->helpers_used, "lgen_row_chunk");
  const Schedule *s = c->sched;
  return s && s->rows_parallel ? (long long)s->rows_tile : -1;
}

static void call_gather(ExtCall *c) {
  int out = c->x->ninputs; /* first output */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, tensor_of(c, 1)->type, true);
  call_args(c, "%s, %s, %s, %s, %s, %lld", name_of(c, 0), name_of(c, 1), name_of(c, out),
       rows(c, 0, attr_int(c, "axis", 0)), extent_product(c, 1, 0, tensor_of(c, 1)->rank), row_tile(c));
}

static void call_gather_elements(ExtCall *c) {
  int out = c->x->ninputs; /* first output */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, tensor_of(c, 1)->type, true);
  int r = tensor_of(c, 0)->rank;
  dims_array(c, "lgen_ishape", 1, 0, r);
  dims_array(c, "lgen_dshape", 0, 0, r);
  call_args(c, "%s, %s, %s, %d, lgen_ishape, lgen_dshape, %d", name_of(c, 0), name_of(c, 1),
       name_of(c, out), r, attr_int(c, "axis", 0));
}

static void call_gather_nd(ExtCall *c) {
  int out = c->x->ninputs; /* first output */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, tensor_of(c, 1)->type, true);
  int b = attr_int(c, "batch_dims", 0), q = tensor_of(c, 1)->rank, r = tensor_of(c, 0)->rank;
  const AffineExpr *last = tensor_of(c, 1)->shape[q - 1];
  int m = (int)last->value;
  dims_array(c, "lgen_dims", 0, b, b + m);
  call_args(c, "%s, %s, %s, %s, %s, %d, lgen_dims, %s", name_of(c, 0), name_of(c, 1), name_of(c, out),
       extent_product(c, 0, 0, b), extent_product(c, 1, b, q - 1), m, extent_product(c, 0, b + m, r));
}

static void call_arg(ExtCall *c) {
  int out = c->x->ninputs; /* first output */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, tensor_of(c, out)->type, true);
  call_args(c, "%s, %s, %s, %d, %d, %lld", name_of(c, 0), name_of(c, out), rows(c, 0, attr_int(c, "axis", 0)),
       attr_int(c, "is_min", 0), attr_int(c, "select_last_index", 0), row_tile(c));
}

static const char *payload_function(ExtCall *c, const char *text, ElemType t, const char *const names[2],
                                    ElemType want, const char *role);

static void call_topk(ExtCall *c) { /* the thread count: how many segments a few long rows are cut into */
  Emitter *e = c->e;
  const ExtOp *x = c->x;
  int out = c->x->ninputs; /* first output */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, tensor_of(c, out + 1)->type, true);
  long long tile = row_tile(c);
  if (tile >= 0) /* shared out: a few long rows are cut among the threads too */
    use_helper(e->helpers_used, "LGEN_MAX_THREADS");
  static const char *const names[2] = {"lhs", "rhs"};
  const char *cmp = payload_function(c, ext_attr_string(x, "comparator", NULL), t0, names, TY_I1, "comparator");
  call_args(c, "%s, %s, %s, %s, %s, %s, %lld, %d, %s, %s, %lld", name_of(c, 0),
       x->ninputs > 1 ? name_of(c, 1) : "0", name_of(c, out),
       name_of(c, out + 1), name_of(c, out + 2), rows(c, 0, attr_int(c, "axis", -1)),
       (long long)ext_attr_int(x, "k", 0), attr_int(c, "largest", 1), cmp ? cmp : "0",
       tile >= 0 ? "LGEN_MAX_THREADS()" : "1",
       tile);
}

static const char *payload_body(ExtCall *c, const char *text, const ElemType *types, const char *const *names,
                                int nnames, ElemType want, const char *role, bool *used);

/* A sort of several operands (templates/sortn.c): the order as a static
 * function of the operands and two element offsets, lgen_comparator_OUT,
 * reading the elements the comparator names (lhsK, rhsK: operand K's at
 * the two offsets; lhs, rhs: operand 0's), or without one operand 0's
 * order as the one-operand sort's (NaN last); the operands' pointers and
 * element sizes in arrays named after the first output. */
static void call_sortn(ExtCall *c) {
  Emitter *e = c->e;
  const ExtOp *x = c->x;
  int nops = x->ninputs, out = nops, nnames = 2;
  const char *first = name_of(c, out);
  instantiate(c, TY_I64, TY_I64, false);
  const char *names[2 + 2 * LG_SORT_MAX_OPERANDS] = {"lhs", "rhs"};
  ElemType types[2 + 2 * LG_SORT_MAX_OPERANDS] = {tensor_of(c, 0)->type, tensor_of(c, 0)->type};
  int operand_of[2 + 2 * LG_SORT_MAX_OPERANDS] = {0, 0};
  for (int k = 0; k < nops; k++)
    for (int side = 0; side < 2; side++) {
      names[nnames] = arena_printf(e->arena, "%s%d", side ? "rhs" : "lhs", k);
      types[nnames] = tensor_of(c, k)->type;
      operand_of[nnames++] = k;
    }
  const char *text = ext_attr_string(x, "comparator", NULL), *fn = arena_printf(e->arena, "lgen_comparator_%s", first);
  bool used[2 + 2 * LG_SORT_MAX_OPERANDS] = {false};
  const char *body;
  if (text) {
    body = payload_body(c, text, types, names, nnames, TY_I1, "comparator", used);
  } else {
    used[0] = used[1] = true;
    const char *isnan = elem_type_is_float(types[0]) ? "LGEN_ISNAN" : NULL;
    const char *cmp = attr_int(c, "descending", 0) ? "lhs > rhs" : "lhs < rhs";
    if (isnan)
      use_helper(e->helpers_used, isnan);
    body = isnan ? arena_printf(e->arena, "%s(lhs) || %s(rhs) ? %s(rhs) && !%s(lhs) : %s", isnan, isnan, isnan, isnan,
                                cmp)
                 : cmp;
    text = attr_int(c, "descending", 0) ? "operand 0 descending, NaN last" : "operand 0 ascending, NaN last";
  }
  sb_printf(e->helpers, "/* the order of %s: %s */\nstatic int %s(const void *const *lgen_ops, int64_t lgen_a, "
            "int64_t lgen_b)\n{\n", first, c_comment_text(e->arena, text), fn);
  for (int i = 0; i < nnames; i++)
    if (used[i]) {
      const char *ct = c_type_name(types[i]);
      sb_printf(e->helpers, "  const %s %s = ((const %s *)lgen_ops[%d])[lgen_%c];\n", ct, names[i], ct, operand_of[i],
                names[i][0] == 'l' ? 'a' : 'b');
    }
  sb_printf(e->helpers, "  return %s;\n}\n\n", body);
  StrBuf ins = {0}, outs = {0}, sizes = {0};
  for (int k = 0; k < nops; k++) {
    sb_printf(&ins, "%s%s", k ? ", " : "", name_of(c, k));
    sb_printf(&outs, "%s%s", k ? ", " : "", name_of(c, out + k));
    sb_printf(&sizes, "%ssizeof(%s)", k ? ", " : "", c_type_name(tensor_of(c, k)->type));
  }
  Arena *a = e->arena;
  const char *vins = arena_printf(a, "lgen_ins_%s", first), *vouts = arena_printf(a, "lgen_outs_%s", first);
  const char *vsizes = arena_printf(a, "lgen_sizes_%s", first);
  put(e, loops_let(a, "const void *const", arena_printf(a, "%s[]", vins), arena_printf(a, "{%s}", sb_cstr(&ins))));
  put(e, loops_let(a, "void *const", arena_printf(a, "%s[]", vouts), arena_printf(a, "{%s}", sb_cstr(&outs))));
  put(e, loops_let(a, "const size_t", arena_printf(a, "%s[]", vsizes), arena_printf(a, "{%s}", sb_cstr(&sizes))));
  sb_free(&ins);
  sb_free(&outs);
  sb_free(&sizes);
  call_args(c, "%s, %s, %s, %d, %s, %s, %s, %lld", vins, vouts, vsizes, nops, name_of(c, out + nops),
            rows(c, 0, attr_int(c, "axis", -1)), fn, row_tile(c));
}

static void call_sort(ExtCall *c) {
  int out = c->x->ninputs; /* first output */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, TY_I64, false);
  static const char *const names[2] = {"lhs", "rhs"};
  const char *cmp = payload_function(c, ext_attr_string(c->x, "comparator", NULL), t0, names, TY_I1, "comparator");
  call_args(c, "%s, %s, %s, %s, %d, %s, %lld", name_of(c, 0), name_of(c, out), name_of(c, out + 1),
       rows(c, 0, attr_int(c, "axis", -1)), attr_int(c, "descending", 0), cmp ? cmp : "0", row_tile(c));
}

/* The C expression of a payload expression over scalars `names` of
 * `types` (build_ext.c has parsed it), its value of type `want`; used[i]
 * says whether it reads names[i] (NULL: not asked). */
static const char *payload_body(ExtCall *c, const char *text, const ElemType *types, const char *const *names,
                                int nnames, ElemType want, const char *role, bool *used) {
  Emitter *e = c->e;
  PayloadNode *nodes;
  int count;
  if (payload_expr_parse_typed(e->arena, text, types, names, nnames, want, &nodes, &count))
    diag_bug(e->opt->diag, "the %s '%s' did not parse again", role, text);
  for (int i = 0; used && i < count; i++)
    if (nodes[i].kind == PN_READ)
      used[nodes[i].operand] = true;
  StructuredOp op = {.nnodes = count, .nodes = nodes};
  const char **node_names = arena_alloc(e->arena, sizeof *node_names * (size_t)count);
  memset(node_names, 0, sizeof *node_names * (size_t)count);
  const char **values = arena_alloc(e->arena, sizeof *values * (size_t)nnames);
  for (int i = 0; i < nnames; i++)
    values[i] = names[i];
  ExprCtx ctx = {.op = &op, .operand_values = values, .node_names = node_names, .helpers = e->helpers,
                 .helper_names = e->helper_names, .arena = e->arena, .needs = &e->needs};
  StrBuf body = {0};
  c_expr(&body, &ctx, count - 1);
  e->uses_bool |= strstr(sb_cstr(&body), "lgen_bool") != NULL; /* i1 ops (std_ori, ...) cast to it */
  const char *s = arena_strdup(e->arena, sb_cstr(&body));
  sb_free(&body);
  return s;
}

/* A payload expression over two scalars of type t (build_ext.c has parsed
 * it: a text with a call) as a static function of them, named `role`_OUT
 * after the op's first output, returning `want` (scan's combiner: t; a
 * sort's comparator: i1, as int); NULL for a text without a call (scan's
 * add, mul, max and min). */
static const char *payload_function(ExtCall *c, const char *text, ElemType t, const char *const names[2],
                                    ElemType want, const char *role) {
  Emitter *e = c->e;
  if (!text || !strchr(text, '('))
    return NULL;
  const ElemType types[2] = {t, t};
  const char *body = payload_body(c, text, types, names, 2, want, role, NULL);
  const char *fn = arena_printf(e->arena, "lgen_%s_%s", role, name_of(c, c->x->ninputs));
  const char *ct = c_type_name(t);
  sb_printf(e->helpers, "/* the %s of %s: %s */\nstatic %s %s(%s %s, %s %s)\n{\n  return %s;\n}\n\n", role,
            name_of(c, c->x->ninputs), c_comment_text(e->arena, text), want == TY_I1 ? "int" : ct, fn, ct,
            names[0], ct, names[1], body);
  return fn;
}

static void call_scan(ExtCall *c) {
  const ExtOp *x = c->x;
  int out = c->x->ninputs; /* first output */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, TY_I64, false);
  static const char *const names[2] = {"acc", "x"};
  const char *comb = ext_attr_string(x, "combiner", "add"), *body = payload_function(c, comb, t0, names, t0, "combiner");
  call_args(c, "%s, %s, %s, %s, %s, %d, %s, %d, %d, %lld", name_of(c, 0), x->ninputs > 1 ? name_of(c, 1) : "0",
       name_of(c, out),
       x->noutputs > 1 ? name_of(c, out + 1) : "0", rows(c, 0, attr_int(c, "axis", 0)),
       body ? 0 : combiner_code(comb) - 1, body ? body : "0", attr_int(c, "inclusive", 1),
       attr_int(c, "reverse", 0), row_tile(c));
}

static void call_scatter(ExtCall *c) {
  Emitter *e = c->e;
  const ExtOp *x = c->x;
  int out = c->x->ninputs; /* first output */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, tensor_of(c, 1)->type, true);
  int r = tensor_of(c, 0)->rank, q = tensor_of(c, 1)->rank, m;
  const int64_t *map = ext_attr_ints(x, "dimension_map", &m);
  StrBuf sb = {0};
  for (int j = 0; j < m; j++)
    sb_printf(&sb, "%s%lld", j ? ", " : "", (long long)map[j]);
  dims_array(c, "lgen_dims", 0, 0, r);
  put(e, loops_let(e->arena, "const int64_t", "lgen_map[]", arena_printf(e->arena, "{%s}", sb_cstr(&sb))));
  sb_free(&sb);
  call_args(c, "%s, %s, %s, %s, %d, lgen_dims, %d, lgen_map, %s, %d", name_of(c, 0), name_of(c, 1),
       name_of(c, 2), name_of(c, out), r, m, extent_product(c, 1, 0, q - 1),
       combiner_code(ext_attr_string(x, "combiner", "replace")));
}

static void call_scatter_elements(ExtCall *c) {
  const ExtOp *x = c->x;
  int out = c->x->ninputs; /* first output */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, tensor_of(c, 1)->type, true);
  int r = tensor_of(c, 0)->rank;
  dims_array(c, "lgen_ishape", 1, 0, r);
  dims_array(c, "lgen_dshape", 0, 0, r);
  call_args(c, "%s, %s, %s, %s, %d, lgen_ishape, lgen_dshape, %d, %d", name_of(c, 0), name_of(c, 1),
       name_of(c, 2), name_of(c, out), r, attr_int(c, "axis", 0),
       combiner_code(ext_attr_string(x, "combiner", "replace")));
}

static void call_maxpool_index(ExtCall *c) { /* 1-D pools as H = 1 */
  const ExtOp *x = c->x;
  int out = c->x->ninputs; /* first output */
  int cnt; /* list attributes' lengths, checked by build_ext.c */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, TY_I64, true);
  const int64_t *wn = ext_attr_ints(x, "window", &cnt), *st = ext_attr_ints(x, "strides", &cnt);
  const int64_t *dl = ext_attr_ints(x, "dilations", &cnt), *pd = ext_attr_ints(x, "padding", &cnt);
  int r = tensor_of(c, 0)->rank, two = r == 4;
  call_args(c, "%s, %s, %s, %s, %s, %s, %s, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %d",
       name_of(c, 0), name_of(c, out), extent_product(c, 0, 0, 2), two ? extent(c, 0, 2) : "1",
       extent(c, 0, r - 1), two ? extent(c, 1, 2) : "1", extent(c, 1, r - 1), (long long)(two ? wn[0] : 1),
       (long long)wn[two], (long long)(two ? st[0] : 1), (long long)st[two], (long long)(two ? dl[0] : 1),
       (long long)dl[two], (long long)(two ? pd[0] : 0), (long long)pd[2 * two], attr_int(c, "storage_order", 0));
}

static void call_diag(ExtCall *c) {
  int out = c->x->ninputs; /* first output */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, TY_I64, false);
  call_args(c, "%s, %s, %s", name_of(c, 0), name_of(c, out), extent(c, 0, 0));
}

static void call_fft(ExtCall *c) {
  Emitter *e = c->e;
  const ExtOp *x = c->x;
  int out = c->x->ninputs; /* first output */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, TY_I64, false);
  e->needs.math = true; /* the twiddles' cos and sin */
  int nscr = x->ninputs + x->noutputs, r = tensor_of(c, 0)->rank;
  const char *o = name_of(c, out), *ws = name_of(c, nscr), *tw = name_of(c, nscr + 1);
  int inverse = attr_int(c, "inverse", 0);
  if (strcmp(x->kind, "fft") == 0) { /* real and imaginary parts apart */
    const char *n = extent(c, 0, r - 1);
    call_args(c, "%s, %s, %s, %s, %s, %s, %s, %s, 1, 1, %s, %s, 1, %d, 0", name_of(c, 0), name_of(c, 1), o,
         name_of(c, out + 1), ws, tw, extent_product(c, 0, 0, r - 1), n, n, n, inverse);
  } else { /* dft: [outer, n, inner, cin] -> [outer, nout, inner, cout] */
    int axis = attr_int(c, "axis", 0), onesided = attr_int(c, "onesided", 0);
    int64_t cin = tensor_of(c, 0)->shape[r - 1]->value, cout = inverse && onesided ? 1 : 2;
    const char *xi = cin == 2 ? arena_printf(e->arena, "%s + 1", name_of(c, 0)) : "0";
    const char *yi = cout == 2 ? arena_printf(e->arena, "%s + 1", o) : "0";
    call_args(c, "%s, %s, %s, %s, %s, %s, %s, %s, %s, %lld, %lld, %s, %lld, %d, %d", name_of(c, 0), xi, o,
         yi, ws, tw, extent_product(c, 0, 0, axis), extent(c, 0, axis), extent_product(c, 0, axis + 1, r - 1),
         (long long)cin, (long long)ext_attr_int(x, "length", 0), extent(c, out, axis), (long long)cout, inverse,
         inverse && onesided);
  }
}

static void call_im2col(ExtCall *c) {
  const ExtOp *x = c->x;
  int out = c->x->ninputs; /* first output */
  int cnt; /* list attributes' lengths, checked by build_ext.c */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, TY_I64, false);
  const int64_t *kn = ext_attr_ints(x, "kernel", &cnt), *st = ext_attr_ints(x, "strides", &cnt);
  const int64_t *dl = ext_attr_ints(x, "dilations", &cnt), *pd = ext_attr_ints(x, "padding", &cnt);
  int nchw = (int)ext_attr_int(x, "nchw", 0), hd = nchw ? 2 : 1;
  int64_t h = tensor_of(c, 0)->shape[hd]->value, w = tensor_of(c, 0)->shape[hd + 1]->value;
  int64_t oh = (h + pd[0] + pd[1] - (kn[0] - 1) * dl[0] - 1) / st[0] + 1;
  int64_t ow = (w + pd[2] + pd[3] - (kn[1] - 1) * dl[1] - 1) / st[1] + 1;
  call_args(c, "%s, %s, %s, %lld, %lld, %s, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %d, %lld, "
       "%lld, %lld, %lld", name_of(c, 0), name_of(c, out), extent(c, 0, 0), (long long)h, (long long)w,
       extent(c, 0, nchw ? 1 : 3), (long long)oh, (long long)ow, (long long)kn[0], (long long)kn[1], (long long)st[0],
       (long long)st[1], (long long)dl[0], (long long)dl[1], (long long)pd[0], (long long)pd[2], nchw,
       (long long)ext_attr_int(x, "m_offset", 0), (long long)ext_attr_int(x, "m_size", 0),
       (long long)ext_attr_int(x, "k_offset", 0), (long long)ext_attr_int(x, "k_size", 0));
}

/* The Winograd transforms (templates/winograd_*.c): m is the output tile
 * (output_tile_size, 2 or 6), tiles every m rows and columns. */
static void call_winograd_filter(ExtCall *c) {
  int out = c->x->ninputs; /* first output */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, TY_I64, false);
  call_args(c, "%s, %s, %s, %s, %d", name_of(c, 0), name_of(c, out), extent(c, 0, 2), extent(c, 0, 3),
            attr_int(c, "output_tile_size", 2));
}

static void call_winograd_input(ExtCall *c) {
  const ExtOp *x = c->x;
  int out = c->x->ninputs; /* first output */
  int cnt; /* list attributes' lengths, checked by build_ext.c */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, TY_I64, false);
  const int64_t *pd = ext_attr_ints(x, "padding", &cnt);
  int m = attr_int(c, "output_tile_size", 2);
  int64_t h = tensor_of(c, 0)->shape[1]->value, w = tensor_of(c, 0)->shape[2]->value;
  int64_t oh = h + pd[0] + pd[1] - 2, ow = w + pd[2] + pd[3] - 2;
  call_args(c, "%s, %s, %s, %lld, %lld, %s, %lld, %lld, %lld, %lld, %d", name_of(c, 0), name_of(c, out),
       extent(c, 0, 0), (long long)h, (long long)w, extent(c, 0, 3), (long long)((oh + m - 1) / m),
       (long long)((ow + m - 1) / m), (long long)pd[0], (long long)pd[2], m);
}

static void call_winograd_output(ExtCall *c) {
  const ExtOp *x = c->x;
  int out = c->x->ninputs; /* first output */
  int cnt; /* list attributes' lengths, checked by build_ext.c */
  ElemType t0 = tensor_of(c, 0)->type;
  instantiate(c, t0, TY_I64, false);
  const int64_t *sh = ext_attr_ints(x, "shape", &cnt), *hw = sh + cnt - 2; /* [N,] OH, OW */
  int m = attr_int(c, "output_tile_size", 2);
  call_args(c, "%s, %s, %s, %lld, %lld, %s, %lld, %lld, %d", name_of(c, 0), name_of(c, out),
       extent(c, out, 0), (long long)hw[0], (long long)hw[1], extent(c, 0, 3), (long long)((hw[0] + m - 1) / m),
       (long long)((hw[1] + m - 1) / m), m);
}

/* rnn (templates/rnn.c): the optional inputs are those the with_* flags
 * name, in order (null pointers for the others); the activations are
 * codes (lower_ext.c) with their alpha and beta, in the type the template
 * computes in. */
static void call_rnn(ExtCall *c) {
  Emitter *e = c->e;
  const ExtOp *x = c->x;
  int out = x->ninputs, nscr = x->ninputs + x->noutputs;
  static const char *const flags[] = {"with_rb", "with_h0", "with_c0", "with_p", "with_lens"};
  const char *opt[5];
  for (int i = 0, at = 2; i < 5; i++)
    opt[i] = ext_attr_int(x, flags[i], 0) ? name_of(c, at++) : "0";
  ElemType t = tensor_of(c, 0)->type, ct = t == TY_F64 ? TY_F64 : TY_F32;
  bool lens = ext_attr_int(x, "with_lens", 0) != 0;
  instantiate(c, t, lens ? tensor_of(c, x->ninputs - 1)->type : TY_I64, true);
  e->needs.math = true; /* Softplus's log1p */
  const char *kind = ext_attr_string(x, "kind", "lstm");
  StrBuf f = {0};
  static const char *const act[3] = {"af", "ag", "ah"}, *const alpha[3] = {"alpha_f", "alpha_g", "alpha_h"},
                           *const beta[3] = {"beta_f", "beta_g", "beta_h"};
  for (int k = 0; k < 3; k++) {
    sb_printf(&f, "%d, ", attr_int(c, act[k], 1));
    c_float_literal(&f, ext_attr_float(x, alpha[k], 1), ct);
    sb_puts(&f, ", ");
    c_float_literal(&f, ext_attr_float(x, beta[k], 1), ct);
    sb_puts(&f, ", ");
  }
  c_float_literal(&f, ext_attr_float(x, "clip", 0), ct);
  call_args(c, "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %d, %d, %s, %d, %d", name_of(c, 0),
            name_of(c, 1), opt[0], opt[1], opt[2], opt[3], opt[4], name_of(c, out), name_of(c, out + 1),
            x->noutputs > 2 ? name_of(c, out + 2) : "0", name_of(c, nscr), extent(c, 0, 0), extent(c, 0, 1),
            extent(c, 1, 0), kind[0] == 'r' ? 0 : kind[0] == 'g' ? 1 : 2, attr_int(c, "reverse", 0), sb_cstr(&f),
            attr_int(c, "input_forget", 0), attr_int(c, "linear_before_reset", 0));
  sb_free(&f);
}

/* Each template's call, by the name graph/ext_ops.def gives it. */
static const struct {
  const char *tmpl;
  void (*call)(ExtCall *c);
} calls[] = {
#define E(op, tmpl, sched) {#tmpl, call_##tmpl},
#include "graph/ext_ops.def"
#undef E
    {"sortn", call_sortn}, /* sort's template for several operands (lower_ext.c) */
};

static void call(ExtCall *c) {
  for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
    if (strcmp(calls[i].tmpl, c->x->tmpl) == 0) {
      calls[i].call(c);
      return;
    }
  diag_bug(c->e->opt->diag, "no call for template %s", c->x->tmpl);
}

LoopNode *emit_ext_op(Emitter *e, const StructuredOp *op, const Schedule *s, int index, bool grouped, bool in_region,
                      const OpPlan *chunk_group) {
  ExtCall c = {.e = e, .x = op->ext, .grouped = grouped, .in_region = in_region, .chunk_group = chunk_group,
               .sched = s};
  /* the graph node it computes, as the structured ops' groups say theirs:
   * "top: topk (templates/topk.c)", "Softmax as online_softmax (...)" */
  const char *what = arena_printf(e->arena, "op %d: %s", index + 1, c.x->kind);
  if (op->origin) {
    size_t n = strlen(op->origin), m = strlen(c.x->kind);
    bool named = n >= m && strcmp(op->origin + n - m, c.x->kind) == 0;
    what = named ? c_comment_text(e->arena, op->origin)
                 : arena_printf(e->arena, "%s as %s", c_comment_text(e->arena, op->origin), c.x->kind);
  }
  put(e, loops_comment(e->arena, arena_printf(e->arena, "%s (templates/%s.c)", what, c.x->tmpl)));
  if (in_region || grouped) { /* every thread of the graph's region calls; the loops are shared */
    call(&c);
    if (!grouped) /* its loops are `omp for`s (the group's chunk loop is the softmax's) */
      c.call->par = PAR_WORKSHARING;
    return c.call;
  }
  if (c.x->rows_loop && !(s && s->rows_parallel)) { /* one thread: no region to open */
    call(&c);
    return c.call;
  }
  LoopNode *region = put(e, loops_block(e->arena, REGION_PARALLEL));
  LoopList *outside = build_into(e, &region->body);
  call(&c);
  e->cur = outside;
  (void)loops_cap_threads(region, arena_printf(e->arena, "lgen_thread_slots(%d)", LG_SCRATCH_THREAD_SLOTS));
  return c.call;
}
