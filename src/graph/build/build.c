/* build.c - the graph builder (see graph.h): values, nodes, name lookup,
 * attribute access, type and shape inference, located diagnostics.
 *
 * The builder is the one place that knows the shape and type rules of
 * src/graph/ops.md. It stores nodes with normalised, complete attributes
 * (negative axes made non-negative, every default written out, einsum in
 * explicit form, reshape/broadcast targets consumed into the output shape),
 * so fold.c and lower.c never re-derive them. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/poly.h"
#include "graph/graph.h"

/* ---------------------------------------------------------------- op table */

static const GraphOpInfo op_table[GOP_COUNT] = {
#define X(e, name, nin_min, nin_max, nout, cls) {name, nin_min, nin_max, nout, GC_##cls},
#include "graph/graph_ops.def"
#undef X
};

const GraphOpInfo *graph_op_info(GraphOp op) {
  if ((int)op < 0 || op >= GOP_COUNT)
    return NULL;
  return &op_table[op];
}

bool graph_op_lookup(const char *name, GraphOp *out) {
  for (int i = 0; i < GOP_COUNT; i++)
    if (strcmp(op_table[i].name, name) == 0) {
      *out = (GraphOp)i;
      return true;
    }
  return false;
}

void intvec_push(Arena *arena, IntVec *v, int x) {
  if (v->len == v->cap) {
    int cap = v->cap ? v->cap * 2 : 8;
    int *items = arena_alloc(arena, sizeof *items * (size_t)cap);
    if (v->len)
      memcpy(items, v->items, sizeof *items * (size_t)v->len);
    v->items = items;
    v->cap = cap;
  }
  v->items[v->len++] = x;
}

/* ------------------------------------------------------------ name index */

/* Open addressing with linear probing; lookups only (output order always
 * comes from g->values, never from this table). */
struct NameIndex {
  int cap; /* a power of two */
  int len;
  const char **keys;
  int *vals;      /* -1: the name was given up (see rename_generated) */
  bool *generated; /* a name the builder made up, which a later given name may take */
};

static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static NameIndex *index_new(Arena *arena, int cap) {
  NameIndex *ix = arena_alloc(arena, sizeof *ix);
  ix->cap = cap;
  ix->keys = arena_alloc(arena, sizeof *ix->keys * (size_t)cap);
  ix->vals = arena_alloc(arena, sizeof *ix->vals * (size_t)cap);
  ix->generated = arena_alloc(arena, sizeof *ix->generated * (size_t)cap);
  return ix;
}

static int index_slot(const NameIndex *ix, const char *name) {
  uint32_t mask = (uint32_t)ix->cap - 1;
  uint32_t i = name_hash(name) & mask;
  while (ix->keys[i] && strcmp(ix->keys[i], name) != 0)
    i = (i + 1) & mask;
  return (int)i;
}

static void index_put(Arena *arena, NameIndex **ixp, const char *name, int value, bool generated);

static void index_grow(Arena *arena, NameIndex **ixp) {
  NameIndex *old = *ixp;
  NameIndex *ix = index_new(arena, old->cap * 2);
  *ixp = ix;
  for (int i = 0; i < old->cap; i++)
    if (old->keys[i])
      index_put(arena, ixp, old->keys[i], old->vals[i], old->generated[i]);
}

static void index_put(Arena *arena, NameIndex **ixp, const char *name, int value, bool generated) {
  if (((*ixp)->len + 1) * 2 > (*ixp)->cap)
    index_grow(arena, ixp);
  NameIndex *ix = *ixp;
  int s = index_slot(ix, name);
  if (!ix->keys[s])
    ix->len++;
  ix->keys[s] = name;
  ix->vals[s] = value;
  ix->generated[s] = generated;
}

int graph_find(const Graph *g, const char *name) {
  if (!name || !g->index)
    return -1;
  int s = index_slot(g->index, name);
  return g->index->keys[s] ? g->index->vals[s] : -1;
}

/* ------------------------------------------------------------ the graph */

Graph *graph_new(Arena *arena, Diag *diag, GraphLocate locate, void *locate_data, const Module *specs) {
  Graph *g = arena_alloc(arena, sizeof *g);
  g->arena = arena;
  g->diag = diag;
  g->locate = locate;
  g->locate_data = locate_data;
  g->specs = specs;
  g->name = "graph";
  g->index = index_new(arena, 64);
  g->max_const_bytes = GRAPH_DEFAULT_MAX_CONSTANT_BYTES;
  return g;
}

void graph_apply_options(Graph *g, const GraphLoadOptions *opts) {
  g->load = opts;
  if (opts && opts->max_constant_bytes > 0)
    g->max_const_bytes = opts->max_constant_bytes;
}

static void collect_symbols(const AffineExpr *e, bool *seen, int nsyms) {
  if (!e)
    return;
  if (e->kind == AE_SIZE && e->index >= 0 && e->index < nsyms)
    seen[e->index] = true;
  collect_symbols(e->lhs, seen, nsyms);
  collect_symbols(e->rhs, seen, nsyms);
}

static const char *symbols_hint(const Graph *g, const bool *seen) {
  int nsyms = g->symbols.len;
  StrBuf names = {0}, example = {0};
  int count = 0;
  for (int s = 0; s < nsyms; s++) {
    if (!seen[s])
      continue;
    const char *name = g->symbols.items[s];
    sb_printf(&names, "%s'%s'", count ? ", " : "", name);
    sb_printf(&example, "%s--dim %s=VALUE", count ? " " : "", name);
    count++;
  }
  const char *hint = count ? arena_printf(g->arena, "; the symbolic dim%s %s can be fixed with %s", count > 1 ? "s" : "",
                                          sb_cstr(&names), sb_cstr(&example))
                           : "";
  sb_free(&names);
  sb_free(&example);
  return hint;
}

const char *graph_dims_hint(const Graph *g, int n, AffineExpr *const *dims) {
  int nsyms = g->symbols.len;
  bool *seen = arena_alloc(g->arena, (size_t)nsyms + 1);
  for (int i = 0; i < n; i++)
    collect_symbols(dims[i], seen, nsyms);
  return symbols_hint(g, seen);
}

const char *graph_runtime_dims_hint(const Graph *g, int value) {
  enum { MAX_VISITS = 256 };
  int nsyms = g->symbols.len, stack[MAX_VISITS], sp = 0;
  bool *seen = arena_alloc(g->arena, (size_t)nsyms + 1);
  stack[sp++] = value;
  /* a bounded walk (a hint, not a proof): values met twice cost a visit each */
  for (int visits = 0; sp > 0 && visits < MAX_VISITS; visits++) {
    const GraphValue *v = GRAPH_VALUE(g, stack[--sp]);
    if (v->kind == GV_CONST && v->sym) {
      for (int64_t i = 0; i < v->count; i++)
        collect_symbols(v->sym[i], seen, nsyms);
    } else if (v->kind == GV_NODE) {
      const GraphNode *n = GRAPH_NODE(g, v->producer);
      for (int i = 0; i < n->ninputs && sp < MAX_VISITS; i++)
        if (n->inputs[i] >= 0)
          stack[sp++] = n->inputs[i];
    }
  }
  return symbols_hint(g, seen);
}

const char *graph_runtime_dims_why(const Graph *g, int value) {
  const char *hint = graph_runtime_dims_hint(g, value);
  if (!*hint)
    return "";
  return arena_printf(g->arena, "; it is computed from symbolic dims through ops that keep no affine expression of "
                                "them (a float Cast, Mod, ...)%s", hint);
}

int graph_symbol(Graph *g, const char *name) {
  for (int i = 0; i < g->symbols.len; i++)
    if (strcmp(g->symbols.items[i], name) == 0)
      return i;
  vec_push(g->arena, &g->symbols, arena_strdup(g->arena, name));
  return g->symbols.len - 1;
}

/* ------------------------------------------------------------ diagnostics */

Loc graph_loc(const Graph *g, const char *path) {
  if (!g->locate)
    return (Loc){0};
  return g->locate(g->locate_data, path);
}

/* The message formatted into the arena: diag_error has no va_list form. */
static const char *format_message(const Graph *g, const char *fmt, va_list ap) {
  StrBuf sb = {0};
  sb_vprintf(&sb, fmt, ap);
  const char *msg = arena_strdup(g->arena, sb_cstr(&sb));
  sb_free(&sb);
  return msg;
}

void graph_error(const Graph *g, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *msg = format_message(g, fmt, ap);
  va_end(ap);
  diag_error(g->diag, graph_loc(g, path), "%s", msg);
}

void graph_warning(const Graph *g, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *msg = format_message(g, fmt, ap);
  va_end(ap);
  diag_warning(g->diag, graph_loc(g, path), "%s", msg);
}

/* The trailing array index of a node's path ("/nodes/12" -> 12),
 * or -1: nodes without a name are told apart by their place in the file. */
static long path_index(const char *path) {
  if (!path)
    return -1;
  const char *slash = strrchr(path, '/');
  if (!slash || !slash[1])
    return -1;
  long v = 0;
  for (const char *p = slash + 1; *p; p++) {
    if (*p < '0' || *p > '9' || v > 100000000)
      return -1;
    v = v * 10 + (*p - '0');
  }
  return v;
}

const char *graph_node_desc(const Graph *g, const GraphNode *n) {
  const char *origin = n->origin ? n->origin : graph_op_info(n->op)->name;
  if (n->name && *n->name)
    return arena_printf(g->arena, "node '%s' (%s): ", n->name, origin);
  long ix = path_index(n->path);
  return arena_printf(g->arena, "node %ld (%s): ", ix >= 0 ? ix : (long)g->nodes.len, origin);
}

/* ------------------------------------------------------------ dims */

AffineExpr *graph_dim_const(Graph *g, int64_t v) { return affine_const(g->arena, v); }

bool graph_dim_value(const AffineExpr *d, int64_t *v) {
  if (!d || d->kind != AE_CONST)
    return false;
  if (v)
    *v = d->value;
  return true;
}

static bool is_const(const AffineExpr *d, int64_t v) { return d && d->kind == AE_CONST && d->value == v; }

/* e = base + offset with a constant offset split off, so that chains like
 * (in + 2) - 3 + 1 fold to in. */
static const AffineExpr *split_offset(const AffineExpr *e, int64_t *offset) {
  *offset = 0;
  if ((e->kind == AE_ADD || e->kind == AE_SUB) && e->rhs->kind == AE_CONST) {
    /* an AE_SUB constant came from dim_add_const: never INT64_MIN */
    *offset = e->kind == AE_ADD ? e->rhs->value : -e->rhs->value;
    return e->lhs;
  }
  return e;
}

/* Constant dim arithmetic, checked: attributes (pads, strides, repeats)
 * can be anything up to INT64_MAX, and a sum or product of them must be an
 * error, not an overflow. The error names the node being built (g->at). */
static void dim_overflow(Graph *g) {
  graph_error(g, g->at ? g->at->path : NULL, "%sthe shape arithmetic overflows 64-bit integers",
              g->at ? graph_node_desc(g, g->at) : "");
}

static int64_t dim_plus(Graph *g, int64_t a, int64_t b) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
    dim_overflow(g);
  return a + b;
}

static int64_t dim_times(Graph *g, int64_t a, int64_t b) {
  if (a != 0 && b != 0) {
    bool bad = a == -1 ? b == INT64_MIN : b == -1 ? a == INT64_MIN
             : (a > 0) == (b > 0) ? (a > 0 ? a > INT64_MAX / b : a < INT64_MAX / b)
             : (a > 0 ? b < INT64_MIN / a : a < INT64_MIN / b);
    if (bad)
      dim_overflow(g);
  }
  return a * b;
}

static AffineExpr *dim_add_const(Graph *g, AffineExpr *a, int64_t c) {
  if (a->kind == AE_CONST)
    return graph_dim_const(g, dim_plus(g, a->value, c));
  int64_t off;
  AffineExpr *base = (AffineExpr *)split_offset(a, &off);
  off = dim_plus(g, off, c);
  if (off == 0)
    return base;
  if (off < 0)
    return affine_binary(g->arena, AE_SUB, base, graph_dim_const(g, dim_times(g, off, -1)));
  return affine_binary(g->arena, AE_ADD, base, graph_dim_const(g, off));
}

static AffineExpr *dim_mul(Graph *g, AffineExpr *a, AffineExpr *b);

static AffineExpr *dim_add(Graph *g, AffineExpr *a, AffineExpr *b) {
  if (b->kind == AE_CONST)
    return dim_add_const(g, a, b->value);
  if (a->kind == AE_CONST)
    return dim_add_const(g, b, a->value);
  if (affine_equal(a, b)) /* N + N, as concatenating a tensor with itself gives */
    return dim_mul(g, a, graph_dim_const(g, 2));
  return affine_binary(g->arena, AE_ADD, a, b);
}

static AffineExpr *dim_sub(Graph *g, AffineExpr *a, AffineExpr *b) {
  if (b->kind == AE_CONST)
    return dim_add_const(g, a, dim_times(g, b->value, -1));
  if (affine_equal(a, b))
    return graph_dim_const(g, 0);
  return affine_binary(g->arena, AE_SUB, a, b);
}

static AffineExpr *dim_mul(Graph *g, AffineExpr *a, AffineExpr *b) {
  if (a->kind == AE_CONST && b->kind != AE_CONST) {
    AffineExpr *t = a;
    a = b;
    b = t;
  }
  if (b->kind == AE_CONST) {
    if (a->kind == AE_CONST)
      return graph_dim_const(g, dim_times(g, a->value, b->value));
    if (b->value == 1)
      return a;
    if (b->value == 0)
      return b;
    if (a->kind == AE_MUL && a->rhs->kind == AE_CONST) /* (x * c1) * c2 */
      return dim_mul(g, a->lhs, graph_dim_const(g, dim_times(g, a->rhs->value, b->value)));
  }
  return affine_binary(g->arena, AE_MUL, a, b);
}

static int64_t floordiv64(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static AffineExpr *dim_div(Graph *g, AffineKind kind, AffineExpr *a, AffineExpr *b) {
  if (is_const(b, 1))
    return a;
  /* (x floordiv p) floordiv q = x floordiv (p q) for positive p, q (and
   * ceildiv alike): strided layers' extents stay one division, and equal
   * dims compare equal */
  if ((kind == AE_FLOORDIV || kind == AE_CEILDIV) && a->kind == kind && b->kind == AE_CONST && b->value > 0 &&
      a->rhs->kind == AE_CONST && a->rhs->value > 0)
    return dim_div(g, kind, a->lhs, graph_dim_const(g, dim_times(g, a->rhs->value, b->value)));
  /* (x floordiv p + c) floordiv q = (x + c p) floordiv (p q) for an integer
   * c (ceildiv alike): a chain of unpadded strided layers,
   * ((H - 3) floordiv 2 - 2) floordiv 2, reads (H - 7) floordiv 4 */
  if ((kind == AE_FLOORDIV || kind == AE_CEILDIV) && b->kind == AE_CONST && b->value > 0) {
    int64_t c;
    const AffineExpr *base = split_offset(a, &c);
    if (c != 0 && base->kind == kind && base->rhs->kind == AE_CONST && base->rhs->value > 0) {
      int64_t p = base->rhs->value;
      return dim_div(g, kind, dim_add_const(g, base->lhs, dim_times(g, c, p)),
                     graph_dim_const(g, dim_times(g, p, b->value)));
    }
  }
  /* (x * c) floordiv q = x * (c / q) where q divides c: a batch of
   * Winograd tiles, (N * 49) floordiv 49, gives the batch N back */
  if ((kind == AE_FLOORDIV || kind == AE_CEILDIV) && b->kind == AE_CONST && b->value > 0 && a->kind == AE_MUL &&
      a->rhs->kind == AE_CONST && a->rhs->value % b->value == 0)
    return dim_mul(g, a->lhs, graph_dim_const(g, a->rhs->value / b->value));
  if (a->kind == AE_CONST && b->kind == AE_CONST && b->value != 0) {
    if (b->value == -1)
      dim_times(g, a->value, -1); /* INT64_MIN / -1 overflows too */
    int64_t q = floordiv64(a->value, b->value);
    if (kind == AE_CEILDIV && dim_times(g, q, b->value) != a->value)
      q++;
    return graph_dim_const(g, q);
  }
  return affine_binary(g->arena, kind, a, b);
}

AffineExpr *graph_dim_arith(Graph *g, AffineKind kind, AffineExpr *a, AffineExpr *b) {
  switch (kind) {
  case AE_ADD:
    return dim_add(g, a, b);
  case AE_SUB:
    return dim_sub(g, a, b);
  case AE_MUL:
    return dim_mul(g, a, b);
  case AE_MOD: /* dim_div would give the quotient */
    if (a->kind == AE_CONST && b->kind == AE_CONST && b->value > 0)
      return dim_sub(g, a, dim_mul(g, dim_div(g, AE_FLOORDIV, a, b), b));
    return affine_binary(g->arena, AE_MOD, a, b);
  default:
    return dim_div(g, kind, a, b);
  }
}

bool graph_dims_equal(Arena *arena, const AffineExpr *a, const AffineExpr *b) {
  if (affine_equal(a, b))
    return true;
  if (!a || !b)
    return false;
  Poly *pa = poly_from_affine(arena, a), *pb = poly_from_affine(arena, b);
  if (pa && pb) {
    Poly *d = poly_add(arena, pa, pb, -1);
    if (d)
      return poly_is_zero(d);
  }
  /* floordiv and friends are not polynomials: compare them part by part */
  if (a->kind == b->kind && (a->kind == AE_FLOORDIV || a->kind == AE_CEILDIV || a->kind == AE_MOD))
    return graph_dims_equal(arena, a->lhs, b->lhs) && graph_dims_equal(arena, a->rhs, b->rhs);
  return false;
}

static bool dims_equal(Graph *g, const AffineExpr *a, const AffineExpr *b) {
  return graph_dims_equal(g->arena, a, b);
}

AffineExpr *graph_numel(Graph *g, const GraphValue *v) {
  AffineExpr *n = graph_dim_const(g, 1);
  for (int i = 0; i < v->rank; i++)
    n = dim_mul(g, n, v->shape[i]);
  return n;
}

/* ------------------------------------------------------------ printing */

static const char *symbol_name(void *ctx, int index) {
  const Graph *g = ctx;
  return index >= 0 && index < g->symbols.len ? g->symbols.items[index] : "?";
}

static const char *no_name(void *ctx, int index) {
  (void)ctx, (void)index;
  return "?";
}

static const char *no_attr_name(void *ctx, int index, int elem) {
  (void)ctx, (void)index, (void)elem;
  return "?";
}

static void print_dim(const Graph *g, StrBuf *sb, const AffineExpr *d) {
  AffineNames names = {no_name, symbol_name, no_attr_name, (void *)g, false};
  affine_print(sb, d, &names);
}

static const char *dim_str(const Graph *g, const AffineExpr *d) {
  StrBuf sb = {0};
  print_dim(g, &sb, d);
  const char *s = arena_strdup(g->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

const char *graph_dim_str(const Graph *g, const AffineExpr *d) { return dim_str(g, d); }

/* "[N, 3, 224]" */
static const char *shape_str(const Graph *g, int rank, AffineExpr *const *shape) {
  StrBuf sb = {0};
  sb_putc(&sb, '[');
  for (int i = 0; i < rank; i++) {
    if (i)
      sb_puts(&sb, ", ");
    print_dim(g, &sb, shape[i]);
  }
  sb_putc(&sb, ']');
  const char *s = arena_strdup(g->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

static const char *value_shape_str(const Graph *g, const GraphValue *v) { return shape_str(g, v->rank, v->shape); }

/* ------------------------------------------------------------ elements */

int graph_elem_bytes(ElemType t) { return elem_type_bytes(t); }

static uint64_t load_le(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

static double half_to_double(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0)
    v = mant / 1024.0 / 16384.0; /* subnormal: mant * 2^-24 */
  else if (exp == 31)
    v = mant ? 0.0 / 0.0 : 1.0 / 0.0;
  else {
    v = 1.0 + mant / 1024.0;
    for (int e = exp - 15; e > 0; e--)
      v *= 2;
    for (int e = exp - 15; e < 0; e++)
      v /= 2;
  }
  return sign ? -v : v;
}

double graph_const_f(const GraphValue *v, int64_t i) {
  if (!v->data) {
    int64_t x = 0;
    if (v->sym)
      graph_dim_value(v->sym[i], &x);
    return (double)x;
  }
  int bytes = graph_elem_bytes(v->type);
  const uint8_t *p = (const uint8_t *)v->data + i * bytes;
  uint64_t raw = load_le(p, bytes);
  switch (v->type) {
  case TY_F16:
    return half_to_double((uint16_t)raw);
  case TY_F32: {
    uint32_t r32 = (uint32_t)raw;
    float f;
    memcpy(&f, &r32, sizeof f);
    return f;
  }
  case TY_F64: {
    double d;
    memcpy(&d, &raw, sizeof d);
    return d;
  }
  default:
    return elem_int_to_double(v->type, elem_int_wrap(v->type, raw));
  }
}

int64_t graph_const_i(const GraphValue *v, int64_t i) {
  if (!v->data) {
    /* a symbolic element has no value now; callers check v->sym first */
    int64_t x = 0;
    if (v->sym)
      graph_dim_value(v->sym[i], &x);
    return x;
  }
  int bytes = graph_elem_bytes(v->type);
  const uint8_t *p = (const uint8_t *)v->data + i * bytes;
  uint64_t raw = load_le(p, bytes);
  if (elem_type_is_float(v->type))
    return int64_of_double(graph_const_f(v, i)); /* saturated: a plain cast is undefined out of range */
  if (v->type == TY_U64 && raw > (uint64_t)INT64_MAX)
    return INT64_MAX; /* the value, saturated */
  return elem_int_wrap(v->type, raw);
}

/* ------------------------------------------------------------ values */

static GraphValue *value_of(const Graph *g, int v) { return GRAPH_VALUE(g, v); }

static const char *fresh_name(Graph *g, const char *base);

/* A given name that a generated one already took (softmax's temporaries
 * are named before the file's later values are read): the generated value
 * gets another name, so files never see the builder's naming. */
static bool rename_generated(Graph *g, const char *name) {
  NameIndex *ix = g->index;
  int s = index_slot(ix, name);
  if (!ix->keys[s] || !ix->generated[s])
    return false;
  int v = ix->vals[s];
  ix->vals[s] = -1;
  GraphValue *val = value_of(g, v);
  val->name = fresh_name(g, NULL);
  index_put(g->arena, &g->index, val->name, v, true);
  return true;
}

static void check_new_name(Graph *g, const char *name, const char *path) {
  int old = graph_find(g, name);
  if (old < 0 || rename_generated(g, name))
    return;
  const GraphValue *o = value_of(g, old);
  if (o->path && g->locate) {
    Loc at = graph_loc(g, o->path);
    if (at.field)
      graph_error(g, path, "'%s' is already defined (at byte %zu, %s)", name, at.offset, at.field);
    graph_error(g, path, "'%s' is already defined (at line %d)", name, at.line);
  }
  graph_error(g, path, "'%s' is already defined", name);
}

static void check_rank(Graph *g, const char *name, int rank, const char *path) {
  if (rank < 0 || rank > LG_MAX_RANK)
    graph_error(g, path, "'%s' has rank %d, out of range (at most %d dims)", name, rank, LG_MAX_RANK);
}

/* A name nobody has: "<base>_out", else "t<N>". */
static const char *fresh_name(Graph *g, const char *base) {
  if (base && *base) {
    const char *s = arena_printf(g->arena, "%s_out", base);
    if (graph_find(g, s) < 0)
      return s;
  }
  for (;;) {
    const char *s = arena_printf(g->arena, "t%d", g->temp_counter++);
    if (graph_find(g, s) < 0)
      return s;
  }
}

static int push_value(Graph *g, GraphValue *v, bool generated) {
  vec_push(g->arena, &g->values, v);
  int ix = g->values.len - 1;
  index_put(g->arena, &g->index, v->name, ix, generated);
  return ix;
}

static AffineExpr **copy_shape(Graph *g, int rank, AffineExpr *const *shape) {
  AffineExpr **s = arena_alloc(g->arena, sizeof *s * (size_t)(rank ? rank : 1));
  for (int i = 0; i < rank; i++)
    s[i] = shape[i];
  return s;
}

/* Element counts stay below 2^40 (the .tc front-end's bound on extents'
 * products is of the same kind): index arithmetic in the generated C and in
 * lgen itself multiplies extents in int64_t, and must not overflow. Only
 * static extents can be checked here; symbolic ones are the caller's. */
enum { MAX_ELEMENTS_LOG2 = 40 };

static void check_size(Graph *g, const char *name, int rank, AffineExpr *const *shape, const char *path) {
  int64_t count = 1;
  for (int i = 0; i < rank; i++) {
    int64_t extent;
    if (!graph_dim_value(shape[i], &extent) || extent <= 0)
      continue;
    if (extent > (INT64_C(1) << MAX_ELEMENTS_LOG2) / count)
      graph_error(g, path, "'%s' would have more than 2^%d elements (extent %lld at position %d)", name,
                  MAX_ELEMENTS_LOG2, (long long)extent, i);
    count *= extent;
  }
}

static GraphValue *new_value(Graph *g, const char *name, ElemType t, int rank, AffineExpr *const *shape,
                             GraphValueKind kind, const char *path) {
  check_new_name(g, name, path);
  check_rank(g, name, rank, path);
  check_size(g, name, rank, shape, path);
  GraphValue *v = arena_alloc(g->arena, sizeof *v);
  v->name = arena_strdup(g->arena, name);
  v->type = t;
  v->rank = rank;
  v->shape = copy_shape(g, rank, shape);
  v->kind = kind;
  v->producer = -1;
  v->path = path ? arena_strdup(g->arena, path) : NULL;
  return v;
}

AffineExpr **graph_input_shape(Graph *g, const char *input, int rank, const int64_t *values,
                               const char *const *syms) {
  AffineExpr **shape = arena_alloc(g->arena, sizeof *shape * (size_t)(rank + 1));
  GraphDimOverride *whole = NULL;
  for (int i = 0; g->load && i < g->load->ndims; i++) {
    GraphDimOverride *o = &g->load->dims[i];
    if (!o->is_shape || o->text || strcmp(o->name, input) != 0)
      continue;
    o->used = true;
    whole = o;
    if (o->rank != rank)
      diag_usage_error(g->diag, "--input-shape '%s': input '%s' has rank %d, not %d", o->arg, input, rank,
                       o->rank);
  }
  for (int d = 0; d < rank; d++) {
    if (whole) {
      if (!syms[d] && values[d] != 0 && values[d] != whole->values[d])
        diag_usage_error(g->diag, "--input-shape '%s': dim %d of input '%s' is %lld in the model, not %lld",
                         whole->arg, d, input, (long long)values[d], (long long)whole->values[d]);
      shape[d] = graph_dim_const(g, whole->values[d]);
      continue;
    }
    if (!syms[d]) {
      shape[d] = graph_dim_const(g, values[d]);
      continue;
    }
    shape[d] = NULL;
    for (int i = 0; g->load && i < g->load->ndims && !shape[d]; i++) {
      GraphDimOverride *o = &g->load->dims[i];
      if (!o->is_shape && !o->text && strcmp(o->name, syms[d]) == 0) {
        o->used = true;
        shape[d] = graph_dim_const(g, o->values[0]);
      }
    }
    if (!shape[d])
      shape[d] = affine_leaf(g->arena, AE_SIZE, graph_symbol(g, syms[d]), 0);
  }
  return shape;
}

/* The --input-value override naming input `name`, or NULL. */
static GraphDimOverride *input_value_of(Graph *g, const char *name) {
  for (int i = 0; g->load && i < g->load->ndims; i++)
    if (g->load->dims[i].text && strcmp(g->load->dims[i].name, name) == 0)
      return &g->load->dims[i];
  return NULL;
}

/* One --input-value element as type t, little-endian, at out; false if the
 * text is not a number of the type (an integer in its range, or any
 * number for a float type). */
static bool input_value_element(const char *text, size_t len, ElemType t, unsigned char *out) {
  char buf[64];
  if (len == 0 || len >= sizeof buf)
    return false;
  memcpy(buf, text, len);
  buf[len] = 0;
  char *end;
  int bytes = graph_elem_bytes(t);
  uint64_t bits;
  errno = 0;
  if (t == TY_F32 || t == TY_F64) {
    double d = strtod(buf, &end);
    if (*end || errno == ERANGE)
      return false;
    if (t == TY_F32) {
      if (isfinite(d) && fabs(d) >= 0x1.ffffffp127) /* rounds to infinity: and the conversion is undefined */
        return false;
      float f = (float)d;
      uint32_t u;
      memcpy(&u, &f, 4);
      bits = u;
    } else {
      memcpy(&bits, &d, 8);
    }
  } else if (elem_type_is_unsigned(t)) {
    if (buf[0] == '-')
      return false;
    unsigned long long v = strtoull(buf, &end, 10);
    if (*end || errno == ERANGE || (bytes < 8 && v >> (8 * bytes)))
      return false;
    bits = v;
  } else if (t == TY_I8 || t == TY_I16 || t == TY_I32 || t == TY_I64 || t == TY_I1) {
    long long v = strtoll(buf, &end, 10);
    if (*end || errno == ERANGE || v < elem_int_lowest(t) || v > elem_int_highest(t))
      return false;
    bits = (uint64_t)v;
  } else {
    return false; /* f16: not yet */
  }
  for (int b = 0; b < bytes; b++)
    out[b] = (unsigned char)(bits >> (8 * b));
  return true;
}

/* Input `name` as the constant an --input-value gives it: its shape must
 * be static, and the values as many as its elements, or one to fill it. */
static int input_as_constant(Graph *g, GraphDimOverride *o, const char *name, ElemType t, int rank,
                             AffineExpr **shape, const char *path) {
  o->used = true;
  int64_t dims[LG_MAX_RANK], count = 1;
  for (int d = 0; d < rank; d++) {
    if (shape[d]->kind != AE_CONST)
      diag_usage_error(g->diag, "--input-value '%s': input '%s' has a symbolic dim %d (fix it with --dim or "
                       "--input-shape)", o->arg, name, d);
    dims[d] = shape[d]->value;
    count *= dims[d];
  }
  int64_t given = 1;
  for (const char *p = o->text; *p; p++)
    given += *p == ',';
  if (given != count && given != 1)
    diag_usage_error(g->diag, "--input-value '%s': input '%s' has %lld element(s), not %lld", o->arg, name,
                     (long long)count, (long long)given);
  int bytes = graph_elem_bytes(t);
  unsigned char *data = graph_const_buffer(g, t, count, path, arena_printf(g->arena, "input '%s'", name));
  const char *p = o->text;
  for (int64_t i = 0; i < given; i++) {
    size_t len = strcspn(p, ",");
    if (!input_value_element(p, len, t, data + i * bytes))
      diag_usage_error(g->diag, "--input-value '%s': '%.*s' is not a value of input '%s' (%s)", o->arg, (int)len,
                       p, name, elem_type_name(t));
    p += len + (p[len] == ',');
  }
  for (int64_t i = given; i < count; i++)
    memcpy(data + i * bytes, data, (size_t)bytes);
  return graph_add_const(g, name, t, rank, dims, data, path);
}

int graph_add_input(Graph *g, const char *name, ElemType t, int rank, AffineExpr **shape, const char *path) {
  GraphDimOverride *o = input_value_of(g, name);
  if (o)
    return input_as_constant(g, o, name, t, rank, shape, path);
  GraphValue *v = new_value(g, name, t, rank, shape, GV_INPUT, path);
  int ix = push_value(g, v, false);
  intvec_push(g->arena, &g->inputs, ix);
  return ix;
}

bool graph_const_fits(const Graph *g, int64_t bytes) {
  return bytes >= 0 && bytes <= g->max_const_bytes - g->const_bytes;
}

/* Counts are below 2^40 (check_size) or checked here, so bytes fit. */
int64_t graph_const_check(Graph *g, ElemType t, int64_t count, const char *path, const char *what) {
  if (count < 0 || count > (INT64_C(1) << MAX_ELEMENTS_LOG2))
    graph_error(g, path, "%s would have %lld elements, more than 2^%d", what, (long long)count, MAX_ELEMENTS_LOG2);
  int64_t bytes = count * graph_elem_bytes(t);
  if (!graph_const_fits(g, bytes))
    graph_error(g, path,
                "%s would be a constant of %lld bytes; with the %lld bytes of constants before it, that is over "
                "the limit of %lld (--max-constant-bytes)",
                what, (long long)bytes, (long long)g->const_bytes, (long long)g->max_const_bytes);
  return bytes;
}

void *graph_const_buffer(Graph *g, ElemType t, int64_t count, const char *path, const char *what) {
  return arena_alloc(g->arena, (size_t)graph_const_check(g, t, count, path, what) + 1);
}

int graph_add_const(Graph *g, const char *name, ElemType t, int rank, const int64_t *shape, const void *data,
                    const char *path) {
  check_rank(g, name, rank, path);
  AffineExpr *dims[LG_MAX_RANK] = {0};
  int64_t count = 1;
  for (int i = 0; i < rank; i++) {
    if (shape[i] < 0)
      graph_error(g, path, "constant '%s' has a negative extent %lld", name, (long long)shape[i]);
    dims[i] = graph_dim_const(g, shape[i]);
  }
  GraphValue *v = new_value(g, name, t, rank, dims, GV_CONST, path); /* bounds the count */
  for (int i = 0; i < rank; i++)
    count *= shape[i];
  size_t bytes = (size_t)graph_const_check(g, t, count, path, arena_printf(g->arena, "'%s'", name));
  g->const_bytes += (int64_t)bytes;
  void *copy = arena_alloc(g->arena, bytes ? bytes : 1);
  if (bytes)
    memcpy(copy, data, bytes);
  v->count = count;
  v->data = copy;
  return push_value(g, v, false);
}

/* An i64 constant's elements as data when every one is a number, so that
 * `sym` is set exactly when some element depends on symbolic dims. */
static void set_i64_elements(Graph *g, GraphValue *v, int64_t count, AffineExpr *const *elems) {
  v->count = count;
  bool all_const = true;
  for (int64_t i = 0; i < count; i++)
    all_const = all_const && elems[i]->kind == AE_CONST;
  if (all_const) {
    uint8_t *data = arena_alloc(g->arena, (size_t)(count ? count : 1) * 8);
    for (int64_t i = 0; i < count; i++)
      for (int b = 0; b < 8; b++)
        data[i * 8 + b] = (uint8_t)((uint64_t)elems[i]->value >> (8 * b));
    v->data = data;
    return;
  }
  AffineExpr **sym = arena_alloc(g->arena, sizeof *sym * (size_t)count);
  for (int64_t i = 0; i < count; i++)
    sym[i] = elems[i];
  v->sym = sym;
}

static int sym_const(Graph *g, const char *name, int64_t count, AffineExpr *const *elems, bool scalar,
                     const char *path, bool generated) {
  if (scalar && count != 1)
    graph_error(g, path, "constant '%s' is a scalar: it has one element, not %lld", name, (long long)count);
  AffineExpr *dim = graph_dim_const(g, count);
  GraphValue *v = new_value(g, name, TY_I64, scalar ? 0 : 1, &dim, GV_CONST, path);
  set_i64_elements(g, v, count, elems);
  return push_value(g, v, generated);
}

int graph_add_sym_const(Graph *g, const char *name, int64_t count, AffineExpr **elems, bool scalar,
                        const char *path) {
  return sym_const(g, name, count, elems, scalar, path, false);
}

void graph_add_output(Graph *g, int value, const char *path) {
  GraphValue *v = value_of(g, value);
  if (v->is_output)
    graph_error(g, path, "'%s' is listed as an output twice", v->name);
  v->is_output = true;
  intvec_push(g->arena, &g->outputs, value);
}

/* ------------------------------------------------------------ attributes */

static const char *attr_kind_name(GraphAttrKind k) {
  switch (k) {
  case GA_INT:
    return "an integer";
  case GA_FLOAT:
    return "a number";
  case GA_INTS:
    return "a list of integers";
  case GA_FLOATS:
    return "a list of numbers";
  case GA_STRING:
    return "a string";
  case GA_INTS2:
    return "a list of [lo, hi] pairs";
  }
  return "?";
}

static const char *attr_path(const GraphNode *n, const GraphAttr *a) { return a && a->path ? a->path : n->path; }

const GraphAttr *graph_attr(const Graph *g, const GraphNode *n, const char *name) {
  if (n == g->attr_node && g->attr_asked) /* a cache of what was asked: the graph is not const */
    vec_push(g->arena, g->attr_asked, (void *)name);
  for (int i = 0; i < n->nattrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0)
      return &n->attrs[i];
  return NULL;
}

static LG_NORETURN void wrong_kind(const Graph *g, const GraphNode *n, const GraphAttr *a, GraphAttrKind want) {
  graph_error(g, attr_path(n, a), "%sattribute '%s' must be %s", graph_node_desc(g, n), a->name,
              attr_kind_name(want));
}

int64_t graph_attr_int(const Graph *g, const GraphNode *n, const char *name, int64_t dflt) {
  const GraphAttr *a = graph_attr(g, n, name);
  if (!a)
    return dflt;
  if (a->kind != GA_INT)
    wrong_kind(g, n, a, GA_INT);
  return a->i;
}

double graph_attr_float(const Graph *g, const GraphNode *n, const char *name, double dflt) {
  const GraphAttr *a = graph_attr(g, n, name);
  if (!a)
    return dflt;
  if (a->kind == GA_INT) /* JSON does not tell 1 from 1.0 */
    return (double)a->i;
  if (a->kind != GA_FLOAT)
    wrong_kind(g, n, a, GA_FLOAT);
  return a->f;
}

const char *graph_attr_string(const Graph *g, const GraphNode *n, const char *name, const char *dflt) {
  const GraphAttr *a = graph_attr(g, n, name);
  if (!a)
    return dflt;
  if (a->kind != GA_STRING)
    wrong_kind(g, n, a, GA_STRING);
  return a->s;
}

/* Replaces the attribute of that name, or appends it. */
static GraphAttr *put_attr(Graph *g, GraphNode *n, GraphAttr a) {
  for (int i = 0; i < n->nattrs; i++)
    if (strcmp(n->attrs[i].name, a.name) == 0) {
      if (!a.path)
        a.path = n->attrs[i].path;
      n->attrs[i] = a;
      return &n->attrs[i];
    }
  GraphAttr *attrs = arena_alloc(g->arena, sizeof *attrs * (size_t)(n->nattrs + 1));
  if (n->nattrs)
    memcpy(attrs, n->attrs, sizeof *attrs * (size_t)n->nattrs);
  attrs[n->nattrs] = a;
  n->attrs = attrs;
  return &n->attrs[n->nattrs++];
}

static void remove_attr(GraphNode *n, const char *name) {
  int k = 0;
  for (int i = 0; i < n->nattrs; i++)
    if (strcmp(n->attrs[i].name, name) != 0)
      n->attrs[k++] = n->attrs[i];
  n->nattrs = k;
}

static void default_int(Graph *g, GraphNode *n, const char *name, int64_t v) {
  const GraphAttr *a = graph_attr(g, n, name);
  if (a) {
    graph_attr_int(g, n, name, 0); /* checks the kind */
    return;
  }
  put_attr(g, n, (GraphAttr){.name = name, .kind = GA_INT, .i = v});
}

/* Absent: the default; an integer: made a float, so that later stages see one kind. */
static void default_float(Graph *g, GraphNode *n, const char *name, double v) {
  const GraphAttr *a = graph_attr(g, n, name);
  double x = graph_attr_float(g, n, name, v);
  put_attr(g, n, (GraphAttr){.name = name, .kind = GA_FLOAT, .f = x, .path = a ? a->path : NULL});
}

static void optional_float(Graph *g, GraphNode *n, const char *name) {
  if (graph_attr(g, n, name))
    default_float(g, n, name, 0);
}

static const char *default_string(Graph *g, GraphNode *n, const char *name, const char *v) {
  const char *s = graph_attr_string(g, n, name, NULL);
  if (s)
    return s;
  put_attr(g, n, (GraphAttr){.name = name, .kind = GA_STRING, .s = v});
  return v;
}

/* A GA_INTS attribute (a lone GA_INT reads as a list of one), or NULL. */
static GraphAttr *ints_attr(Graph *g, GraphNode *n, const char *name) {
  GraphAttr *a = (GraphAttr *)graph_attr(g, n, name);
  if (!a)
    return NULL;
  if (a->kind == GA_INT) {
    int64_t *one = arena_alloc(g->arena, sizeof *one);
    *one = a->i;
    a->kind = GA_INTS;
    a->ints = one;
    a->n = 1;
  }
  if (a->kind != GA_INTS)
    wrong_kind(g, n, a, GA_INTS);
  return a;
}

static GraphAttr *required_ints(Graph *g, GraphNode *n, const char *name) {
  GraphAttr *a = ints_attr(g, n, name);
  if (!a)
    graph_error(g, n->path, "%sattribute '%s' is missing", graph_node_desc(g, n), name);
  return a;
}

static void check_count(Graph *g, GraphNode *n, const GraphAttr *a, int want) {
  if (a->n != want)
    graph_error(g, attr_path(n, a), "%sattribute '%s' needs %d value%s, not %d", graph_node_desc(g, n), a->name,
                want, want == 1 ? "" : "s", a->n);
}

/* `count` values, each `v` when absent. */
static GraphAttr *default_ints(Graph *g, GraphNode *n, const char *name, int count, int64_t v) {
  GraphAttr *a = ints_attr(g, n, name);
  if (a) {
    check_count(g, n, a, count);
    return a;
  }
  int64_t *ints = arena_alloc(g->arena, sizeof *ints * (size_t)(count ? count : 1));
  for (int i = 0; i < count; i++)
    ints[i] = v;
  return put_attr(g, n, (GraphAttr){.name = name, .kind = GA_INTS, .n = count, .ints = ints});
}

static GraphAttr *set_ints(Graph *g, GraphNode *n, const char *name, int count, const int64_t *vals,
                           const char *path) {
  int64_t *ints = arena_alloc(g->arena, sizeof *ints * (size_t)(count ? count : 1));
  for (int i = 0; i < count; i++)
    ints[i] = vals[i];
  return put_attr(g, n, (GraphAttr){.name = name, .kind = GA_INTS, .n = count, .ints = ints, .path = path});
}

/* An axis in [-rank, rank) made non-negative; else a located error. */
static int normalise_axis(Graph *g, GraphNode *n, const GraphAttr *a, int64_t axis, int rank) {
  if (axis < -rank || axis >= rank)
    graph_error(g, attr_path(n, a), "%saxis %lld is out of range for rank %d", graph_node_desc(g, n),
                (long long)axis, rank);
  return (int)(axis < 0 ? axis + rank : axis);
}

/* The list attribute's axes normalised in place; duplicates are errors. */
static void normalise_axes(Graph *g, GraphNode *n, GraphAttr *a, int rank) {
  bool seen[LG_MAX_RANK] = {false};
  for (int i = 0; i < a->n; i++) {
    int ax = normalise_axis(g, n, a, a->ints[i], rank);
    if (seen[ax])
      graph_error(g, attr_path(n, a), "%saxis %d appears twice in '%s'", graph_node_desc(g, n), ax, a->name);
    seen[ax] = true;
    a->ints[i] = ax;
  }
}

/* Padding: r [lo, hi] pairs, non-negative; zeros when absent. */
static GraphAttr *padding_attr(Graph *g, GraphNode *n, int r) {
  GraphAttr *a = (GraphAttr *)graph_attr(g, n, "padding");
  if (!a) {
    int64_t *ints = arena_alloc(g->arena, sizeof *ints * (size_t)(2 * r + 1));
    return put_attr(g, n, (GraphAttr){.name = "padding", .kind = GA_INTS2, .n = r, .ints = ints});
  }
  if (a->kind != GA_INTS2)
    wrong_kind(g, n, a, GA_INTS2);
  if (a->n != r)
    graph_error(g, attr_path(n, a), "%sattribute 'padding' needs %d [lo, hi] pair%s, not %d",
                graph_node_desc(g, n), r, r == 1 ? "" : "s", a->n);
  for (int i = 0; i < 2 * r; i++)
    if (a->ints[i] < 0)
      graph_error(g, attr_path(n, a), "%spadding must not be negative (%lld)", graph_node_desc(g, n),
                  (long long)a->ints[i]);
  return a;
}

static void check_positive(Graph *g, GraphNode *n, const GraphAttr *a) {
  for (int i = 0; i < a->n; i++)
    if (a->ints[i] < 1)
      graph_error(g, attr_path(n, a), "%s'%s' must be positive (%lld)", graph_node_desc(g, n), a->name,
                  (long long)a->ints[i]);
}

/* ------------------------------------------------------------ inference */

/* What shape inference produces for one output. */
typedef GraphShape OutShape;

typedef struct {
  Graph *g;
  GraphNode *n;
  const char *desc; /* graph_node_desc(n) */
  const char *out_name; /* the (first) output's name */
  OutShape out[1];  /* every op but `call` has one output */
} Infer;

static GraphValue *in_value(const Infer *s, int i) { return value_of(s->g, s->n->inputs[i]); }

static bool has_input(const Infer *s, int i) { return i < s->n->ninputs && s->n->inputs[i] >= 0; }

static LG_NORETURN void node_error(const Infer *s, const char *fmt, const char *a, const char *b) {
  /* fmt has up to two %s after the node prefix */
  graph_error(s->g, s->n->path, fmt, s->desc, a ? a : "", b ? b : "");
}

static void set_out(Infer *s, ElemType t, int rank, AffineExpr *const *shape) {
  if (rank > LG_MAX_RANK)
    graph_error(s->g, s->n->path, "%sthe result has rank %d (at most %d)", s->desc, rank, LG_MAX_RANK);
  s->out[0].type = t;
  s->out[0].rank = rank;
  for (int i = 0; i < rank; i++)
    s->out[0].shape[i] = shape[i];
}

static void want_rank(const Infer *s, int i, int rank) {
  const GraphValue *v = in_value(s, i);
  if (v->rank != rank)
    graph_error(s->g, s->n->path, "%sinput %d ('%s') must have rank %d, not %d (shape %s)", s->desc, i, v->name,
                rank, v->rank, value_shape_str(s->g, v));
}

static void want_same_type(const Infer *s, int i, int j) {
  const GraphValue *a = in_value(s, i), *b = in_value(s, j);
  if (a->type != b->type)
    graph_error(s->g, s->n->path, "%sinputs '%s' (%s) and '%s' (%s) must have the same element type", s->desc,
                a->name, elem_type_name(a->type), b->name, elem_type_name(b->type));
}

static void want_float(const Infer *s, int i) {
  const GraphValue *v = in_value(s, i);
  if (!elem_type_is_float(v->type))
    graph_error(s->g, s->n->path, "%s'%s' is %s; this op needs a floating-point type", s->desc, v->name,
                elem_type_name(v->type));
}

/* Dims a and b must be equal. Equal as expressions, fine; two different
 * numbers, not; otherwise (a symbolic dim lgen cannot prove equal to the
 * other: (H - 1) floordiv 16 + 1 and ((H - 1) floordiv 32 + 1) * 2, equal
 * when H is a multiple of 32, in PaddleOCR's detector) the graph assumes
 * it, and the generated entry point checks it at run time. */
static bool dims_agree(const Infer *s, const AffineExpr *a, const AffineExpr *b, const char *what) {
  if (dims_equal(s->g, a, b))
    return true;
  if (a->kind == AE_CONST && b->kind == AE_CONST)
    return false;
  for (int i = 0; i < s->g->assumes.len; i++) {
    const SizeAssume *x = s->g->assumes.items[i];
    if ((affine_equal(x->a, a) && affine_equal(x->b, b)) || (affine_equal(x->a, b) && affine_equal(x->b, a)))
      return true;
  }
  SizeAssume *x = arena_alloc(s->g->arena, sizeof *x);
  x->a = a, x->b = b;
  x->what = arena_printf(s->g->arena, "%s%s: %s and %s", s->desc, what, dim_str(s->g, a), dim_str(s->g, b));
  vec_push(s->g->arena, &s->g->assumes, x);
  return true;
}

void graph_assume_at_least(Graph *g, const AffineExpr *a, const AffineExpr *b, const char *what) {
  SizeAssume *x = arena_alloc(g->arena, sizeof *x);
  x->a = a, x->b = b, x->what = what, x->at_least = true;
  vec_push(g->arena, &g->assumes, x);
}

static void want_dims_equal(const Infer *s, const AffineExpr *a, const AffineExpr *b, const char *what) {
  if (!dims_agree(s, a, b, what))
    graph_error(s->g, s->n->path, "%s%s do not match: %s vs %s", s->desc, what, dim_str(s->g, a), dim_str(s->g, b));
}

/* NumPy broadcasting of two shapes into out (rank max(ra, rb)). */
static int broadcast_shapes(const Infer *s, int ra, AffineExpr *const *a, int rb, AffineExpr *const *b,
                            AffineExpr **out) {
  int r = ra > rb ? ra : rb;
  for (int i = 0; i < r; i++) {
    int ia = ra - r + i, ib = rb - r + i;
    AffineExpr *da = ia >= 0 ? a[ia] : NULL, *db = ib >= 0 ? b[ib] : NULL;
    if (!da || (is_const(da, 1) && db))
      out[i] = db;
    else if (!db || is_const(db, 1))
      out[i] = da;
    else if (dims_agree(s, da, db, "broadcast dims"))
      out[i] = da->kind == AE_CONST ? da : db->kind == AE_CONST ? db : da;
    else
      node_error(s, "%scannot broadcast %s and %s", shape_str(s->g, ra, a), shape_str(s->g, rb, b));
  }
  return r;
}

/* ---- elementwise ---- */

static bool float_only(GraphOp op) {
  switch (op) {
  case GOP_NEG:
  case GOP_ABS:
  case GOP_RELU:
  case GOP_CLIP:
  case GOP_CAST:
  case GOP_COPY:
  case GOP_ADD:
  case GOP_SUB:
  case GOP_MUL:
  case GOP_DIV:
  case GOP_MAX:
  case GOP_MIN:
  case GOP_EQUAL:
  case GOP_LESS:
  case GOP_GREATER:
  case GOP_WHERE:
  case GOP_BITWISE_AND:
  case GOP_BITWISE_OR:
  case GOP_BITWISE_XOR:
  case GOP_BITWISE_NOT:
  case GOP_SHIFT_LEFT:
  case GOP_SHIFT_RIGHT:
  case GOP_SIGN:
  case GOP_MOD:
  case GOP_FMOD:
    return false;
  default:
    return true;
  }
}

/* The bitwise ops take integers (i1 too), the shifts unsigned ones. */
static void want_int_input(const Infer *s) {
  GraphOp op = s->n->op;
  bool bitwise = op == GOP_BITWISE_AND || op == GOP_BITWISE_OR || op == GOP_BITWISE_XOR || op == GOP_BITWISE_NOT;
  bool shift = op == GOP_SHIFT_LEFT || op == GOP_SHIFT_RIGHT;
  const GraphValue *v = in_value(s, 0);
  if ((bitwise && elem_type_is_float(v->type)) || (shift && !elem_type_is_unsigned(v->type)))
    graph_error(s->g, s->n->path, "%s'%s' is %s; this op needs %s type", s->desc, v->name, elem_type_name(v->type),
                shift ? "an unsigned integer" : "an integer");
}

static void unary_attrs(Infer *s) {
  Graph *g = s->g;
  GraphNode *n = s->n;
  switch (n->op) {
  case GOP_GELU: {
    const char *ap = default_string(g, n, "approximate", "none");
    if (strcmp(ap, "none") != 0 && strcmp(ap, "tanh") != 0)
      graph_error(g, attr_path(n, graph_attr(g, n, "approximate")),
                  "%s'approximate' must be \"none\" or \"tanh\", not \"%s\"", s->desc, ap);
    break;
  }
  case GOP_LEAKY_RELU:
    default_float(g, n, "alpha", 0.01);
    break;
  case GOP_ELU:
  case GOP_CELU:
    default_float(g, n, "alpha", 1.0);
    break;
  case GOP_SELU:
    default_float(g, n, "alpha", 1.67326319217681884765625);
    default_float(g, n, "gamma", 1.05070102214813232421875);
    break;
  case GOP_HARD_SIGMOID:
    default_float(g, n, "alpha", 0.2);
    default_float(g, n, "beta", 0.5);
    break;
  case GOP_CLIP:
    optional_float(g, n, "min");
    optional_float(g, n, "max");
    break;
  default:
    break;
  }
}

/* Every input is there: elementwise ops have none optional, so check_arity
 * has refused an omitted one ("input %d is required"). */
static void infer_elementwise(Infer *s) {
  int nin = s->n->ninputs;
  int first = s->n->op == GOP_WHERE ? 1 : 0; /* where's cond is i1; a, b agree */
  for (int i = first + 1; i < nin; i++)
    want_same_type(s, first, i);
  if (s->n->op == GOP_WHERE && in_value(s, 0)->type != TY_I1)
    graph_error(s->g, s->n->path, "%sthe condition '%s' must be i1, not %s", s->desc, in_value(s, 0)->name,
                elem_type_name(in_value(s, 0)->type));
  if (float_only(s->n->op))
    want_float(s, first);
  want_int_input(s);
  unary_attrs(s);
  const GraphValue *v0 = in_value(s, 0);
  int rank = v0->rank;
  AffineExpr *shape[LG_MAX_RANK], *next[LG_MAX_RANK];
  for (int i = 0; i < rank; i++)
    shape[i] = v0->shape[i];
  for (int i = 1; i < nin; i++) {
    const GraphValue *v = in_value(s, i);
    rank = broadcast_shapes(s, rank, shape, v->rank, v->shape, next);
    memcpy(shape, next, sizeof *shape * (size_t)rank);
  }
  ElemType t = in_value(s, first)->type;
  if (s->n->op == GOP_EQUAL || s->n->op == GOP_LESS || s->n->op == GOP_GREATER)
    t = TY_I1;
  if (s->n->op == GOP_CAST) {
    const GraphAttr *a = graph_attr(s->g, s->n, "to");
    const char *to = graph_attr_string(s->g, s->n, "to", NULL);
    if (!to)
      graph_error(s->g, s->n->path, "%sattribute 'to' is missing", s->desc);
    if (!elem_type_parse(to, &t))
      graph_error(s->g, attr_path(s->n, a), "%s'%s' is not an element type", s->desc, to);
  }
  set_out(s, t, rank, shape);
}

/* ---- contractions ---- */

static void infer_matmul(Infer *s) {
  const GraphValue *a = in_value(s, 0), *b = in_value(s, 1);
  if (a->rank < 1 || b->rank < 1)
    node_error(s, "%smatmul needs operands of rank 1 or more, not %s and %s", value_shape_str(s->g, a),
               value_shape_str(s->g, b));
  AffineExpr *one = graph_dim_const(s->g, 1);
  /* 1-D operands promoted: a to [1, K], b to [K, 1] */
  AffineExpr *m = a->rank == 1 ? one : a->shape[a->rank - 2];
  AffineExpr *ka = a->shape[a->rank - 1];
  AffineExpr *kb = b->rank == 1 ? b->shape[0] : b->shape[b->rank - 2];
  AffineExpr *nn = b->rank == 1 ? one : b->shape[b->rank - 1];
  if (!dims_equal(s->g, ka, kb))
    node_error(s, "%sthe inner dims of %s and %s do not match", value_shape_str(s->g, a), value_shape_str(s->g, b));
  int ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
  AffineExpr *shape[LG_MAX_RANK + 2];
  int r = broadcast_shapes(s, ba, a->shape, bb, b->shape, shape);
  if (a->rank > 1)
    shape[r++] = m;
  if (b->rank > 1)
    shape[r++] = nn;
  set_out(s, a->type, r, shape);
}

static void infer_contract(Infer *s);

static void infer_named_contract(Infer *s) {
  const GraphValue *a = in_value(s, 0), *b = in_value(s, 1);
  AffineExpr *shape[3];
  switch (s->n->op) {
  case GOP_MATVEC:
    want_rank(s, 0, 2);
    want_rank(s, 1, 1);
    want_dims_equal(s, a->shape[1], b->shape[0], "the K dims");
    shape[0] = a->shape[0];
    set_out(s, a->type, 1, shape);
    break;
  case GOP_VECMAT:
    want_rank(s, 0, 1);
    want_rank(s, 1, 2);
    want_dims_equal(s, a->shape[0], b->shape[0], "the K dims");
    shape[0] = b->shape[1];
    set_out(s, a->type, 1, shape);
    break;
  case GOP_DOT:
    want_rank(s, 0, 1);
    want_rank(s, 1, 1);
    want_dims_equal(s, a->shape[0], b->shape[0], "the K dims");
    set_out(s, a->type, 0, shape);
    break;
  case GOP_BATCH_MATMUL:
    want_rank(s, 0, 3);
    want_rank(s, 1, 3);
    want_dims_equal(s, a->shape[0], b->shape[0], "the batch dims");
    want_dims_equal(s, a->shape[2], b->shape[1], "the K dims");
    shape[0] = a->shape[0];
    shape[1] = a->shape[1];
    shape[2] = b->shape[2];
    set_out(s, a->type, 3, shape);
    break;
  default:
    infer_matmul(s);
    break;
  }
}

/* einsum lives in its own section below */
static void infer_einsum(Infer *s);

static void infer_contract(Infer *s) {
  for (int i = 0; i < s->n->ninputs; i++) {
    if (!has_input(s, i))
      graph_error(s->g, s->n->path, "%sinput %d is missing", s->desc, i);
    if (i > 0)
      want_same_type(s, 0, i);
  }
  if (s->n->op == GOP_EINSUM)
    infer_einsum(s);
  else
    infer_named_contract(s);
}

/* ---- einsum ---- */

enum { EINSUM_MAX_TERMS = 9 };

typedef struct {
  char letters[LG_MAX_RANK + 1];
  int nletters;     /* explicit letters */
  int ellipsis_at;  /* position of "..." among the letters, or -1 */
} EinsumTerm;

static LG_NORETURN void einsum_error(const Infer *s, const char *why) {
  const GraphAttr *a = graph_attr(s->g, s->n, "equation");
  graph_error(s->g, attr_path(s->n, a), "%sbad einsum equation \"%s\": %s", s->desc, a ? a->s : "", why);
}

static bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* One term from *p up to ',' '-' or the end. */
static void parse_einsum_term(const Infer *s, const char **p, EinsumTerm *t) {
  t->nletters = 0;
  t->ellipsis_at = -1;
  for (const char *q = *p;; q++) {
    if (*q == ' ')
      continue;
    if (is_letter(*q)) {
      if (t->nletters >= LG_MAX_RANK)
        einsum_error(s, "a term has too many dims");
      t->letters[t->nletters++] = *q;
    } else if (q[0] == '.' && q[1] == '.' && q[2] == '.') {
      if (t->ellipsis_at >= 0)
        einsum_error(s, "a term has two ellipses");
      t->ellipsis_at = t->nletters;
      q += 2;
    } else if (*q == ',' || *q == '-' || *q == '\0') {
      *p = q;
      return;
    } else {
      einsum_error(s, "unexpected character");
    }
  }
}

typedef struct {
  int nterms; /* inputs */
  EinsumTerm in[EINSUM_MAX_TERMS];
  EinsumTerm out;
  bool has_out;
} EinsumEq;

static void parse_einsum(const Infer *s, const char *eq, EinsumEq *e) {
  const char *p = eq;
  e->nterms = 0;
  e->has_out = false;
  for (;;) {
    if (e->nterms == EINSUM_MAX_TERMS)
      einsum_error(s, "too many terms");
    parse_einsum_term(s, &p, &e->in[e->nterms++]);
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p == '-') {
      if (p[1] != '>')
        einsum_error(s, "'-' must start '->'");
      p += 2;
      parse_einsum_term(s, &p, &e->out);
      if (*p != '\0')
        einsum_error(s, "text after the output term");
      e->has_out = true;
    }
    return;
  }
}

/* Letters the equation does not use, for the dims an ellipsis stands for. */
static void pick_ellipsis_letters(const char *eq, int count, char *out) {
  bool used[128] = {false};
  for (const char *p = eq; *p; p++)
    used[(unsigned char)*p & 127] = true;
  static const char pool[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  int k = 0;
  for (const char *p = pool; *p && k < count; p++)
    if (!used[(unsigned char)*p])
      out[k++] = *p;
}

/* The term with "..." replaced by the last `ne` of the ellipsis letters. */
static void expand_term(const EinsumTerm *t, const char *ell, int ell_rank, int ne, char *out, int *len) {
  int k = 0;
  for (int i = 0; i <= t->nletters; i++) {
    if (i == t->ellipsis_at)
      for (int j = ell_rank - ne; j < ell_rank; j++)
        out[k++] = ell[j];
    if (i < t->nletters)
      out[k++] = t->letters[i];
  }
  out[k] = '\0';
  *len = k;
}

static int letter_slot(char c) { return c >= 'a' ? c - 'a' : 26 + c - 'A'; }

static void infer_einsum(Infer *s) {
  Graph *g = s->g;
  const char *eq = graph_attr_string(g, s->n, "equation", NULL);
  if (!eq)
    graph_error(g, s->n->path, "%sattribute 'equation' is missing", s->desc);
  EinsumEq e;
  parse_einsum(s, eq, &e);
  if (e.nterms != s->n->ninputs)
    einsum_error(s, arena_printf(g->arena, "%d terms for %d inputs", e.nterms, s->n->ninputs));
  /* how many dims each ellipsis stands for; they broadcast against each other */
  int ell_rank = 0, ne[EINSUM_MAX_TERMS];
  for (int i = 0; i < e.nterms; i++) {
    int rank = in_value(s, i)->rank;
    ne[i] = rank - e.in[i].nletters;
    if (ne[i] < 0 || (ne[i] > 0 && e.in[i].ellipsis_at < 0))
      einsum_error(s, arena_printf(g->arena, "term %d has %d letters for an input of rank %d", i,
                                   e.in[i].nletters, rank));
    if (ne[i] > ell_rank)
      ell_rank = ne[i];
  }
  char ell[LG_MAX_RANK];
  pick_ellipsis_letters(eq, ell_rank, ell);
  /* the extent of every letter; ellipsis letters broadcast, others must agree */
  AffineExpr *extent[52] = {0};
  int count[52] = {0};
  bool is_ell[52] = {false};
  for (int j = 0; j < ell_rank; j++)
    is_ell[letter_slot(ell[j])] = true;
  StrBuf norm = {0};
  for (int i = 0; i < e.nterms; i++) {
    char term[2 * LG_MAX_RANK + 1];
    int len;
    expand_term(&e.in[i], ell, ell_rank, ne[i], term, &len);
    const GraphValue *v = in_value(s, i);
    for (int d = 0; d < len; d++) {
      int l = letter_slot(term[d]);
      count[l]++;
      AffineExpr *x = v->shape[d];
      if (!extent[l] || (is_ell[l] && is_const(extent[l], 1)))
        extent[l] = x;
      else if (!dims_equal(g, extent[l], x) && !(is_ell[l] && is_const(x, 1))) {
        sb_free(&norm);
        if (is_ell[l]) /* a letter of lgen's choosing, not the user's: say '...' */
          einsum_error(s, arena_printf(g->arena, "the dims under '...' do not broadcast: %s and %s",
                                       dim_str(g, extent[l]), dim_str(g, x)));
        einsum_error(s, arena_printf(g->arena, "'%c' is %s in one place and %s in another", term[d],
                                     dim_str(g, extent[l]), dim_str(g, x)));
      }
    }
    sb_printf(&norm, "%s%s", i ? "," : "", term);
  }
  char outt[2 * LG_MAX_RANK + 1];
  int olen = 0;
  if (e.has_out) {
    if (e.out.ellipsis_at < 0 && ell_rank > 0) {
      sb_free(&norm);
      einsum_error(s, "the output must have '...' when an input does");
    }
    expand_term(&e.out, ell, ell_rank, ell_rank, outt, &olen);
  } else {
    /* implicit: the ellipsis dims, then the letters used once, alphabetically */
    for (int j = 0; j < ell_rank; j++)
      outt[olen++] = ell[j];
    static const char pool[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    for (const char *p = pool; *p; p++)
      if (count[letter_slot(*p)] == 1 && !is_ell[letter_slot(*p)])
        outt[olen++] = *p;
    outt[olen] = '\0';
  }
  AffineExpr *shape[LG_MAX_RANK];
  bool in_out[52] = {false};
  if (olen > LG_MAX_RANK) {
    sb_free(&norm);
    einsum_error(s, "the output has too many dims");
  }
  for (int d = 0; d < olen; d++) {
    int l = letter_slot(outt[d]);
    if (!extent[l] || in_out[l]) {
      sb_free(&norm);
      einsum_error(s, arena_printf(g->arena, extent[l] ? "'%c' appears twice in the output"
                                                       : "output letter '%c' is in no input",
                                   outt[d]));
    }
    in_out[l] = true;
    shape[d] = extent[l];
  }
  sb_printf(&norm, "->%s", outt);
  const GraphAttr *old = graph_attr(g, s->n, "equation");
  put_attr(g, s->n, (GraphAttr){.name = "equation", .kind = GA_STRING, .s = arena_strdup(g->arena, sb_cstr(&norm)),
                                .path = old->path});
  sb_free(&norm);
  set_out(s, in_value(s, 0)->type, olen, shape);
}

/* ---- windows: convolutions and pooling ---- */

/* floor((in + lo + hi - dil * (k - 1) - 1) / stride) + 1, or for ceil_mode
 * ceil(...) + 1 less the last window when it would start in the right
 * padding. That correction compares (out - 1) * stride with in + lo; both
 * sides move with `in` the same way, so which one wins is decided by
 * hi - eff + stride alone: min(ceil((in + lo + hi - eff) / s),
 * floor((in + lo - 1) / s)) + 1 = the first when hi - eff + s <= 0. */
static AffineExpr *window_extent(Infer *s, AffineExpr *in, int64_t lo, int64_t hi, int64_t dil, AffineExpr *k,
                                 int64_t stride, bool ceil_mode, int spatial) {
  Graph *g = s->g;
  AffineExpr *eff = dim_add_const(g, dim_mul(g, graph_dim_const(g, dil), dim_add_const(g, k, -1)), 1);
  AffineExpr *padded = dim_add_const(g, in, dim_plus(g, lo, hi));
  AffineExpr *span = dim_sub(g, padded, eff); /* in + lo + hi - eff */
  int64_t sv, ev;
  if (graph_dim_value(span, &sv) && sv < 0)
    graph_error(g, s->n->path, "%sspatial dim %d: the window (%s) is larger than the padded input (%s)", s->desc,
                spatial, dim_str(g, eff), dim_str(g, padded));
  AffineExpr *st = graph_dim_const(g, stride);
  if (!ceil_mode)
    return dim_add_const(g, dim_div(g, AE_FLOORDIV, span, st), 1);
  if (!graph_dim_value(eff, &ev)) /* conv passes no ceil_mode, pooling a constant window */
    diag_bug(g->diag, "%sceil_mode needs a static window", s->desc);
  if (dim_plus(g, dim_plus(g, hi, -ev), stride) <= 0)
    return dim_add_const(g, dim_div(g, AE_CEILDIV, span, st), 1);
  return dim_add_const(g, dim_div(g, AE_FLOORDIV, dim_add_const(g, in, lo - 1), st), 1);
}

/* The window attributes common to convs and pools, for r spatial dims. */
typedef struct {
  GraphAttr *strides, *dilations, *padding;
} WindowAttrs;

static WindowAttrs window_attrs(Infer *s, int r) {
  WindowAttrs w;
  w.strides = default_ints(s->g, s->n, "strides", r, 1);
  w.dilations = default_ints(s->g, s->n, "dilations", r, 1);
  check_positive(s->g, s->n, w.strides);
  check_positive(s->g, s->n, w.dilations);
  w.padding = padding_attr(s->g, s->n, r);
  return w;
}

/* Positions of dims in a conv layout: batch, channels, spatial, and in the
 * filter: input channels, output channels, window. */
typedef struct {
  int rank;        /* of the input */
  int in_c;        /* channel position in the input */
  int sp;          /* first spatial position in the input */
  int f_c, f_f, f_k; /* filter: C, F (-1: depthwise), first window dim */
  bool channels_last;
} ConvLayout;

static ConvLayout conv_layout(GraphOp op, int rank) {
  switch (op) {
  case GOP_CONV_1D_NWC_WCF:
    return (ConvLayout){3, 2, 1, 1, 2, 0, true};
  case GOP_CONV_2D_NHWC_HWCF:
    return (ConvLayout){4, 3, 1, 2, 3, 0, true};
  case GOP_CONV_3D_NDHWC_DHWCF:
    return (ConvLayout){5, 4, 1, 3, 4, 0, true};
  case GOP_CONV_1D_NCW_FCW:
    return (ConvLayout){3, 1, 2, 1, 0, 2, false};
  case GOP_CONV_2D_NCHW_FCHW:
    return (ConvLayout){4, 1, 2, 1, 0, 2, false};
  case GOP_CONV_3D_NCDHW_FCDHW:
    return (ConvLayout){5, 1, 2, 1, 0, 2, false};
  case GOP_DEPTHWISE_CONV_2D_NHWC_HWC:
    return (ConvLayout){4, 3, 1, 2, -1, 0, true};
  default: /* ONNX conv: N C S1..Sr, M C/group K1..Kr */
    return (ConvLayout){rank < 3 ? 3 : rank, 1, 2, 1, 0, 2, false};
  }
}

static void infer_conv(Infer *s) {
  Graph *g = s->g;
  GraphNode *n = s->n;
  const GraphValue *x = in_value(s, 0), *w = in_value(s, 1);
  ConvLayout L = conv_layout(n->op, x->rank);
  want_rank(s, 0, L.rank);
  int r = L.rank - 2;
  int wrank = n->op == GOP_DEPTHWISE_CONV_2D_NHWC_HWC ? 3 : L.rank;
  want_rank(s, 1, wrank);
  want_same_type(s, 0, 1);
  WindowAttrs wa = window_attrs(s, r);
  int64_t group = 1;
  if (n->op == GOP_CONV) {
    default_int(g, n, "group", 1);
    group = graph_attr_int(g, n, "group", 1);
    if (group < 1)
      graph_error(g, attr_path(n, graph_attr(g, n, "group")), "%s'group' must be positive", s->desc);
  } else if (graph_attr(g, n, "group")) {
    graph_error(g, attr_path(n, graph_attr(g, n, "group")), "%sonly 'conv' takes 'group'", s->desc);
  }
  /* input channels: the filter's C times group */
  AffineExpr *c_in = x->shape[L.in_c];
  want_dims_equal(s, c_in, dim_mul(g, w->shape[L.f_c], graph_dim_const(g, group)), "the input channels");
  AffineExpr *f = L.f_f >= 0 ? w->shape[L.f_f] : c_in;
  int64_t fv;
  if (group > 1 && graph_dim_value(f, &fv) && fv % group != 0)
    graph_error(g, n->path, "%s%lld output channels do not split into %lld groups", s->desc, (long long)fv,
                (long long)group);
  if (group > 1 && !graph_dim_value(f, NULL)) {
    /* symbolic output channels: the entry point checks at run time that
     * they split into the groups (F = (F floordiv group) * group); an F
     * that does not would read input channels past the last */
    AffineExpr *whole = dim_mul(g, dim_div(g, AE_FLOORDIV, f, graph_dim_const(g, group)), graph_dim_const(g, group));
    dims_agree(s, f, whole, "the output channels and a multiple of 'group'");
  }
  if (has_input(s, 2)) {
    want_rank(s, 2, 1);
    want_same_type(s, 0, 2);
    want_dims_equal(s, in_value(s, 2)->shape[0], f, "the bias and output channels");
  }
  AffineExpr *shape[LG_MAX_RANK];
  shape[0] = x->shape[0];
  for (int i = 0; i < r; i++) {
    const int64_t *pad = &wa.padding->ints[2 * i];
    shape[L.sp + i] = window_extent(s, x->shape[L.sp + i], pad[0], pad[1], wa.dilations->ints[i],
                                    w->shape[L.f_k + i], wa.strides->ints[i], false, i);
  }
  shape[L.in_c] = f;
  set_out(s, x->type, L.rank, shape);
}

static bool pool_is_nhwc(GraphOp op) { return op >= GOP_POOLING_NHWC_MAX && op <= GOP_POOLING_NHWC_AVG; }

static void infer_pool(Infer *s) {
  Graph *g = s->g;
  GraphNode *n = s->n;
  const GraphValue *x = in_value(s, 0);
  bool nhwc = pool_is_nhwc(n->op);
  if (nhwc)
    want_rank(s, 0, 4);
  else if (x->rank < 3)
    graph_error(g, n->path, "%sthe input must have rank 3 or more (N C spatial...), not %d", s->desc, x->rank);
  int r = x->rank - 2, sp = nhwc ? 1 : 2;
  GraphAttr *window = required_ints(g, n, "window");
  check_count(g, n, window, r);
  check_positive(g, n, window);
  WindowAttrs wa = window_attrs(s, r);
  default_int(g, n, "ceil_mode", 0);
  bool ceil_mode = graph_attr_int(g, n, "ceil_mode", 0) != 0;
  if (n->op == GOP_POOLING_NHWC_AVG || n->op == GOP_POOLING_NCHW_AVG)
    default_int(g, n, "count_include_pad", 0);
  AffineExpr *shape[LG_MAX_RANK];
  for (int i = 0; i < x->rank; i++)
    shape[i] = x->shape[i];
  for (int i = 0; i < r; i++) {
    const int64_t *pad = &wa.padding->ints[2 * i];
    shape[sp + i] = window_extent(s, x->shape[sp + i], pad[0], pad[1], wa.dilations->ints[i],
                                  graph_dim_const(g, window->ints[i]), wa.strides->ints[i], ceil_mode, i);
  }
  set_out(s, x->type, x->rank, shape);
}

/* ---- reductions ---- */

static void infer_reduce(Infer *s) {
  Graph *g = s->g;
  GraphNode *n = s->n;
  const GraphValue *x = in_value(s, 0);
  GraphAttr *axes = ints_attr(g, n, "axes");
  bool reduced[LG_MAX_RANK] = {false};
  if (axes && axes->n > 0) {
    normalise_axes(g, n, axes, x->rank);
    for (int i = 0; i < axes->n; i++)
      reduced[axes->ints[i]] = true;
  } else {
    for (int i = 0; i < x->rank; i++)
      reduced[i] = true;
  }
  /* stored as the sorted list of every reduced axis */
  int64_t list[LG_MAX_RANK];
  int count = 0;
  for (int i = 0; i < x->rank; i++)
    if (reduced[i])
      list[count++] = i;
  set_ints(g, n, "axes", count, list, axes ? axes->path : NULL);
  default_int(g, n, "keepdims", 1);
  bool keep = graph_attr_int(g, n, "keepdims", 1) != 0;
  AffineExpr *shape[LG_MAX_RANK];
  int r = 0;
  for (int i = 0; i < x->rank; i++)
    if (!reduced[i])
      shape[r++] = x->shape[i];
    else if (keep)
      shape[r++] = graph_dim_const(g, 1);
  set_out(s, x->type, r, shape);
}

/* ---- layout ---- */

static void infer_transpose(Infer *s) {
  Graph *g = s->g;
  const GraphValue *x = in_value(s, 0);
  GraphAttr *perm = ints_attr(g, s->n, "perm");
  if (!perm) {
    int64_t rev[LG_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
      rev[i] = x->rank - 1 - i;
    perm = set_ints(g, s->n, "perm", x->rank, rev, NULL);
  }
  check_count(g, s->n, perm, x->rank);
  normalise_axes(g, s->n, perm, x->rank);
  AffineExpr *shape[LG_MAX_RANK];
  for (int j = 0; j < x->rank; j++)
    shape[j] = x->shape[perm->ints[j]];
  set_out(s, x->type, x->rank, shape);
}

/* The product of shape[0..r) without position `skip` (-1: all). */
static AffineExpr *shape_product(Graph *g, int r, AffineExpr *const *shape, int skip) {
  AffineExpr *p = graph_dim_const(g, 1);
  for (int i = 0; i < r; i++)
    if (i != skip)
      p = dim_mul(g, p, shape[i]);
  return p;
}

/* A product split into a constant and the non-constant factors (nested
 * products flattened), so that N * 784 / 784 cancels to N even where the
 * factors are not polynomials. */
typedef struct {
  int64_t c;
  int n;
  AffineExpr *f[2 * LG_MAX_RANK + 8];
  bool used[2 * LG_MAX_RANK + 8];
  bool failed; /* too many factors, or the constant overflowed: no answer */
} Factors;

static void add_factor(Factors *p, AffineExpr *d) {
  if (d->kind == AE_CONST)
    p->failed |= __builtin_mul_overflow(p->c, d->value, &p->c);
  else if (d->kind == AE_MUL) {
    add_factor(p, d->lhs);
    add_factor(p, d->rhs);
  } else if (p->n < (int)(sizeof p->f / sizeof p->f[0]))
    p->f[p->n++] = d;
  else
    p->failed = true;
}

/* in / known as a product expression, or NULL when it does not divide. */
static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

/* in / known; NULL when known's symbolic factors are not all in `in`, or
 * (unless `inexact`) when the constants do not divide. `inexact`: the
 * quotient rounded down, (c * rest) floordiv k (c / k reduced), for a
 * reshape that is right only for some values of the dims (S floordiv 2
 * rows of 16 from S rows of 8: S even), which the caller then checks. */
static AffineExpr *divide_factors_at(Graph *g, Factors *in, Factors *known, bool inexact) {
  if (in->failed || known->failed)
    return NULL;
  for (int j = 0; j < known->n; j++) {
    int hit = -1;
    for (int i = 0; i < in->n && hit < 0; i++)
      if (!in->used[i] && dims_equal(g, in->f[i], known->f[j]))
        hit = i;
    if (hit < 0)
      return NULL;
    in->used[hit] = true;
  }
  if (known->c <= 0)
    return NULL;
  int64_t c = in->c, k = known->c;
  if (c % k != 0) {
    if (!inexact || c <= 0)
      return NULL;
    int64_t d = gcd64(c, k);
    c /= d, k /= d;
  } else {
    c /= k, k = 1;
  }
  AffineExpr *r = graph_dim_const(g, c);
  for (int i = 0; i < in->n; i++)
    if (!in->used[i])
      r = dim_mul(g, r, in->f[i]);
  if (k != 1 && r->kind == AE_CONST)
    return NULL; /* static and not a multiple: a plain error */
  return k == 1 ? r : dim_div(g, AE_FLOORDIV, r, graph_dim_const(g, k));
}

static AffineExpr *divide_factors(Graph *g, Factors *in, Factors *known) {
  return divide_factors_at(g, in, known, false);
}

/* The target shape of reshape/broadcast: attr `shape`, else the 2nd input,
 * which must be an i64 constant (folded, possibly symbolic). Consumes both:
 * the node keeps only its data input. */
static int target_shape(Infer *s, AffineExpr **target, const char **where) {
  Graph *g = s->g;
  GraphNode *n = s->n;
  const GraphAttr *a = ints_attr(g, n, "shape");
  int r;
  if (has_input(s, 1)) {
    if (a)
      graph_error(g, attr_path(n, a), "%sthe shape is given both as an attribute and as an input", s->desc);
    const GraphValue *t = in_value(s, 1);
    if (t->kind != GV_CONST)
      graph_error(g, n->path, "%sthe shape of '%s' depends on run-time data (value '%s')%s", s->desc,
                  s->out_name, t->name, graph_runtime_dims_why(g, n->inputs[1]));
    if (t->type != TY_I64 || t->rank > 1)
      graph_error(g, n->path, "%sthe shape '%s' must be a 1-D i64 tensor, not %s %s", s->desc, t->name,
                  elem_type_name(t->type), value_shape_str(g, t));
    if (t->count > LG_MAX_RANK)
      graph_error(g, n->path, "%sthe shape '%s' has %lld elements (at most %d dims)", s->desc, t->name,
                  (long long)t->count, LG_MAX_RANK);
    r = (int)t->count;
    for (int i = 0; i < r; i++)
      target[i] = t->sym ? t->sym[i] : graph_dim_const(g, graph_const_i(t, i));
    *where = n->path;
  } else if (a) {
    r = a->n;
    if (r > LG_MAX_RANK)
      graph_error(g, attr_path(n, a), "%sthe shape has %d dims (at most %d)", s->desc, r, LG_MAX_RANK);
    for (int i = 0; i < r; i++)
      target[i] = graph_dim_const(g, a->ints[i]);
    *where = attr_path(n, a);
  } else {
    graph_error(g, n->path, "%sthe target shape is missing (attribute 'shape' or a 2nd input)", s->desc);
  }
  remove_attr(n, "shape");
  n->ninputs = 1;
  return r;
}

static void infer_reshape(Infer *s) {
  Graph *g = s->g;
  GraphNode *n = s->n;
  const GraphValue *x = in_value(s, 0);
  default_int(g, n, "allowzero", 0);
  bool allowzero = graph_attr_int(g, n, "allowzero", 0) != 0;
  remove_attr(n, "allowzero");
  AffineExpr *shape[LG_MAX_RANK];
  const char *where;
  int r = target_shape(s, shape, &where);
  int infer_at = -1;
  Factors in = {.c = 1}, known = {.c = 1};
  for (int i = 0; i < x->rank; i++)
    add_factor(&in, x->shape[i]);
  for (int i = 0; i < r; i++) {
    int64_t v;
    if (graph_dim_value(shape[i], &v) && v == -1) {
      if (infer_at >= 0)
        graph_error(g, where, "%sthe shape has more than one -1", s->desc);
      infer_at = i;
      continue;
    }
    if (graph_dim_value(shape[i], &v) && v == 0 && !allowzero) {
      if (i >= x->rank)
        graph_error(g, where, "%sshape element %d is 0 (copy the input's extent), but the input has rank %d",
                    s->desc, i, x->rank);
      shape[i] = x->shape[i];
    } else if (graph_dim_value(shape[i], &v) && v < 0) {
      graph_error(g, where, "%sshape element %d is negative (%lld)", s->desc, i, (long long)v);
    }
    add_factor(&known, shape[i]);
  }
  /* Counts lgen cannot prove equal (a symbolic shape computed at run
   * time, [B, S floordiv 2, 16] from [B, S, 8]) are assumed equal and
   * checked when the kernel runs, as broadcasts' dims are. */
  if (infer_at >= 0) {
    Factors in_copy = in;
    AffineExpr *d = divide_factors(g, &in_copy, &known);
    if (!d) {
      in_copy = in;
      d = divide_factors_at(g, &in_copy, &known, true);
      if (d) {
        shape[infer_at] = d;
        if (!dims_agree(s, graph_numel(g, x), shape_product(g, r, shape, -1), "the element counts"))
          d = NULL;
      }
    }
    if (!d)
      graph_error(g, where, "%scannot infer the -1 in the shape: %s elements do not divide by %s", s->desc,
                  dim_str(g, graph_numel(g, x)), dim_str(g, shape_product(g, r, shape, infer_at)));
    shape[infer_at] = d;
  } else {
    Factors in_copy = in;
    AffineExpr *d = divide_factors(g, &in_copy, &known);
    AffineExpr *nx = graph_numel(g, x), *ny = shape_product(g, r, shape, -1);
    bool same = (d && is_const(d, 1)) || dims_equal(g, nx, ny);
    if (!same && !dims_agree(s, nx, ny, "the element counts"))
      graph_error(g, where, "%scannot reshape %s into %s: the element counts differ", s->desc,
                  value_shape_str(g, x), shape_str(g, r, shape));
  }
  set_out(s, x->type, r, shape);
}

static void infer_broadcast(Infer *s) {
  const GraphValue *x = in_value(s, 0);
  AffineExpr *target[LG_MAX_RANK], *shape[LG_MAX_RANK];
  const char *where;
  int r = target_shape(s, target, &where);
  for (int i = 0; i < r; i++) {
    int64_t v;
    if (graph_dim_value(target[i], &v) && v < 0)
      graph_error(s->g, where, "%sshape element %d is negative (%lld)", s->desc, i, (long long)v);
  }
  r = broadcast_shapes(s, x->rank, x->shape, r, target, shape);
  set_out(s, x->type, r, shape);
}

static void infer_slice(Infer *s) {
  Graph *g = s->g;
  GraphNode *n = s->n;
  const GraphValue *x = in_value(s, 0);
  GraphAttr *sizes = required_ints(g, n, "sizes");
  check_count(g, n, sizes, x->rank);
  GraphAttr *starts = default_ints(g, n, "starts", x->rank, 0);
  GraphAttr *strides = default_ints(g, n, "strides", x->rank, 1);
  AffineExpr *shape[LG_MAX_RANK];
  /* an optional 2nd input, a 1-D i64 constant of one size per dim, may give
   * a size as an expression in the symbolic dims (a table cut to a sequence
   * length: ONNX Slice's ends from Shape); consumed here, like reshape's
   * shape. Such a size is the output's extent as it is: that the slice
   * stays inside x is checked by the bounds analysis (--checks at run time) */
  AffineExpr *sym_size[LG_MAX_RANK] = {0};
  if (has_input(s, 1)) {
    const GraphValue *t = in_value(s, 1);
    if (t->kind != GV_CONST || t->type != TY_I64 || t->rank != 1 || t->count != x->rank)
      graph_error(g, n->path, "%sthe sizes input '%s' must be a constant 1-D i64 tensor of %d elements", s->desc,
                  t->name, x->rank);
    for (int i = 0; i < x->rank; i++) {
      int64_t v;
      AffineExpr *e = t->sym ? t->sym[i] : graph_dim_const(g, graph_const_i(t, i));
      if (graph_dim_value(e, &v)) {
        sizes->ints[i] = v;
        continue;
      }
      if (starts->ints[i] < 0 || strides->ints[i] <= 0)
        graph_error(g, n->path, "%sdim %d: a symbolic size (%s) needs a start >= 0 and a stride > 0", s->desc, i,
                    dim_str(g, e));
      sym_size[i] = e;
      sizes->ints[i] = 0; /* the output's extent says it */
    }
    n->ninputs = 1;
  }
  for (int i = 0; i < x->rank; i++) {
    int64_t start = starts->ints[i], size = sizes->ints[i], stride = strides->ints[i], in;
    if (sym_size[i]) {
      shape[i] = sym_size[i];
      continue;
    }
    if (size < 0 && start >= 0 && stride > 0 && size >= -((int64_t)1 << 40)) {
      /* size -1 - k: from start up to the extent less k, by stride; with a
       * symbolic extent an expression ((in - k - start) ceildiv stride), which
       * a run with a smaller extent makes empty, never reads past */
      AffineExpr *avail = dim_add_const(g, x->shape[i], dim_times(g, dim_plus(g, -1 - size, start), -1));
      if (graph_dim_value(avail, &in)) {
        size = in <= 0 ? 0 : (in + stride - 1) / stride;
        sizes->ints[i] = size;
        if (size == 0)
          starts->ints[i] = 0;
        shape[i] = graph_dim_const(g, size);
      } else {
        shape[i] = dim_div(g, AE_CEILDIV, avail, graph_dim_const(g, stride));
      }
      continue;
    }
    if (size < 0 || start < 0 || stride == 0)
      graph_error(g, n->path, "%sdim %d: start %lld, size %lld, stride %lld are not normalised", s->desc, i,
                  (long long)start, (long long)size, (long long)stride);
    int64_t last = start + (size - 1) * stride;
    if (size > 0 && graph_dim_value(x->shape[i], &in) && (start >= in || last < 0 || last >= in))
      graph_error(g, n->path, "%sdim %d: the slice reads outside [0, %lld)", s->desc, i, (long long)in);
    shape[i] = graph_dim_const(g, size);
  }
  set_out(s, x->type, x->rank, shape);
}

static void infer_concat(Infer *s) {
  Graph *g = s->g;
  GraphNode *n = s->n;
  const GraphValue *x = in_value(s, 0);
  if (x->rank == 0)
    graph_error(g, n->path, "%scannot concatenate scalars", s->desc);
  default_int(g, n, "axis", 0);
  const GraphAttr *a = graph_attr(g, n, "axis");
  int axis = normalise_axis(g, n, a, a->i, x->rank);
  put_attr(g, n, (GraphAttr){.name = "axis", .kind = GA_INT, .i = axis, .path = a->path});
  AffineExpr *shape[LG_MAX_RANK];
  for (int d = 0; d < x->rank; d++)
    shape[d] = x->shape[d];
  for (int i = 1; i < n->ninputs; i++) {
    if (!has_input(s, i))
      graph_error(g, n->path, "%sinput %d is missing", s->desc, i);
    want_same_type(s, 0, i);
    const GraphValue *v = in_value(s, i);
    if (v->rank != x->rank)
      node_error(s, "%scannot concatenate %s and %s", value_shape_str(g, x), value_shape_str(g, v));
    for (int d = 0; d < x->rank; d++)
      if (d == axis)
        shape[d] = dim_add(g, shape[d], v->shape[d]);
      else if (!dims_agree(s, shape[d], v->shape[d], "concatenated dims"))
        node_error(s, "%scannot concatenate %s and %s: the other dims differ", value_shape_str(g, x),
                   value_shape_str(g, v));
  }
  set_out(s, x->type, x->rank, shape);
}

static void infer_pad(Infer *s) {
  const GraphValue *x = in_value(s, 0);
  GraphAttr *pad = padding_attr(s->g, s->n, x->rank);
  default_float(s->g, s->n, "value", 0.0);
  /* the other modes read x again: reflect about the first and last
   * elements (pads up to d - 1) and wrap around (pads up to d); on a
   * symbolic dim the entry point checks that bound at run time (-1 when
   * the dim is too short, where ONNX Runtime reflects again or refuses);
   * repeat the edge (any pads, d >= 1; a symbolic d that is 0 at run time
   * reads pad_value's 0 instead) */
  const char *mode = default_string(s->g, s->n, "mode", "constant");
  bool reflect = strcmp(mode, "reflect") == 0, edge = strcmp(mode, "edge") == 0, wrap = strcmp(mode, "wrap") == 0;
  if (!reflect && !edge && !wrap && strcmp(mode, "constant") != 0)
    graph_error(s->g, attr_path(s->n, graph_attr(s->g, s->n, "mode")),
                "%s'mode' must be constant, reflect, edge or wrap, not '%s'", s->desc, mode);
  AffineExpr *shape[LG_MAX_RANK];
  for (int i = 0; i < x->rank; i++) {
    int64_t lo = pad->ints[2 * i], hi = pad->ints[2 * i + 1], d;
    if ((reflect || edge || wrap) && (lo || hi)) {
      if (edge && !graph_dim_value(x->shape[i], &d)) {
        d = 1;
      } else if (!graph_dim_value(x->shape[i], &d)) {
        int64_t need = dim_plus(s->g, lo > hi ? lo : hi, reflect ? 1 : 0);
        graph_assume_at_least(s->g, x->shape[i], graph_dim_const(s->g, need),
                              arena_printf(s->g->arena, "%s%s padding of dim %d (%s) by [%lld, %lld] needs it at least %lld",
                                           s->desc, mode, i, dim_str(s->g, x->shape[i]), (long long)lo, (long long)hi,
                                           (long long)need));
        d = need; /* the bound itself: the check below passes */
      }
      int64_t most = reflect ? d - 1 : wrap ? d : d > 0 ? INT64_MAX : 0;
      if (lo > most || hi > most)
        graph_error(s->g, s->n->path, "%s%s padding of dim %d by [%lld, %lld] needs pads of at most %lld (its extent is %lld)",
                    s->desc, mode, i, (long long)lo, (long long)hi, (long long)(most < 0 ? 0 : most), (long long)d);
    }
    shape[i] = dim_add_const(s->g, x->shape[i], dim_plus(s->g, lo, hi));
  }
  set_out(s, x->type, x->rank, shape);
}

static void infer_tile(Infer *s) {
  const GraphValue *x = in_value(s, 0);
  GraphAttr *rep = required_ints(s->g, s->n, "repeats");
  check_count(s->g, s->n, rep, x->rank);
  AffineExpr *shape[LG_MAX_RANK];
  for (int i = 0; i < x->rank; i++) {
    if (rep->ints[i] < 0)
      graph_error(s->g, attr_path(s->n, rep), "%srepeats must not be negative", s->desc);
    shape[i] = dim_mul(s->g, x->shape[i], graph_dim_const(s->g, rep->ints[i]));
  }
  set_out(s, x->type, x->rank, shape);
}

/* repeat: dim i grows by repeats[i], each element repeated in place. */
static void infer_repeat(Infer *s) {
  const GraphValue *x = in_value(s, 0);
  GraphAttr *rep = required_ints(s->g, s->n, "repeats");
  check_count(s->g, s->n, rep, x->rank);
  AffineExpr *shape[LG_MAX_RANK];
  for (int i = 0; i < x->rank; i++) {
    if (rep->ints[i] < 1)
      graph_error(s->g, attr_path(s->n, rep), "%srepeats must be positive", s->desc);
    shape[i] = dim_mul(s->g, x->shape[i], graph_dim_const(s->g, rep->ints[i]));
  }
  set_out(s, x->type, x->rank, shape);
}

static void infer_reverse(Infer *s) {
  const GraphValue *x = in_value(s, 0);
  GraphAttr *dims = required_ints(s->g, s->n, "dims");
  normalise_axes(s->g, s->n, dims, x->rank);
  set_out(s, x->type, x->rank, x->shape);
}

static void infer_gather(Infer *s) {
  Graph *g = s->g;
  GraphNode *n = s->n;
  const GraphValue *x = in_value(s, 0), *ix = in_value(s, 1);
  if (ix->type != TY_I32 && ix->type != TY_I64)
    graph_error(g, n->path, "%sthe indices '%s' must be i32 or i64, not %s", s->desc, ix->name,
                elem_type_name(ix->type));
  if (x->rank == 0)
    graph_error(g, n->path, "%scannot gather from a scalar", s->desc);
  default_int(g, n, "axis", 0);
  const GraphAttr *a = graph_attr(g, n, "axis");
  int axis = normalise_axis(g, n, a, a->i, x->rank);
  put_attr(g, n, (GraphAttr){.name = "axis", .kind = GA_INT, .i = axis, .path = a->path});
  AffineExpr *shape[2 * LG_MAX_RANK];
  int r = 0;
  for (int i = 0; i < axis; i++)
    shape[r++] = x->shape[i];
  for (int i = 0; i < ix->rank; i++)
    shape[r++] = ix->shape[i];
  for (int i = axis + 1; i < x->rank; i++)
    shape[r++] = x->shape[i];
  set_out(s, x->type, r, shape);
}

static void infer_fill(Infer *s) {
  Graph *g = s->g;
  GraphNode *n = s->n;
  GraphAttr *shp = required_ints(g, n, "shape");
  if (shp->n > LG_MAX_RANK)
    graph_error(g, attr_path(n, shp), "%sthe shape has %d dims (at most %d)", s->desc, shp->n, LG_MAX_RANK);
  const char *tname = default_string(g, n, "type", "f32");
  ElemType t;
  if (!elem_type_parse(tname, &t))
    graph_error(g, attr_path(n, graph_attr(g, n, "type")), "%s'%s' is not an element type", s->desc, tname);
  default_float(g, n, "value", 0.0);
  AffineExpr *shape[LG_MAX_RANK];
  for (int i = 0; i < shp->n; i++) {
    if (shp->ints[i] < 0)
      graph_error(g, attr_path(n, shp), "%sshape element %d is negative", s->desc, i);
    shape[i] = graph_dim_const(g, shp->ints[i]);
  }
  set_out(s, t, shp->n, shape);
}

static void infer_layout(Infer *s) {
  for (int i = 0; i < s->n->ninputs; i++)
    if (!has_input(s, i))
      graph_error(s->g, s->n->path, "%sinput %d is missing", s->desc, i);
  switch (s->n->op) {
  case GOP_TRANSPOSE:
    infer_transpose(s);
    break;
  case GOP_RESHAPE:
    infer_reshape(s);
    break;
  case GOP_BROADCAST:
    infer_broadcast(s);
    break;
  case GOP_SLICE:
    infer_slice(s);
    break;
  case GOP_CONCAT:
    infer_concat(s);
    break;
  case GOP_PAD:
    infer_pad(s);
    break;
  case GOP_TILE:
    infer_tile(s);
    break;
  case GOP_REPEAT:
    infer_repeat(s);
    break;
  case GOP_REVERSE:
    infer_reverse(s);
    break;
  case GOP_GATHER:
    infer_gather(s);
    break;
  default:
    diag_bug(s->g->diag, "no shape rule for graph op %s", graph_op_info(s->n->op)->name);
  }
}

static void infer(Infer *s) {
  switch (graph_op_info(s->n->op)->cls) {
  case GC_UNARY:
  case GC_BINARY:
  case GC_TERNARY:
    infer_elementwise(s);
    break;
  case GC_CONTRACT:
    infer_contract(s);
    break;
  case GC_CONV:
    infer_conv(s);
    break;
  case GC_POOL:
    infer_pool(s);
    break;
  case GC_REDUCE:
    infer_reduce(s);
    break;
  case GC_LAYOUT:
    infer_layout(s);
    break;
  case GC_SOURCE:
    infer_fill(s);
    break;
  default:
    diag_bug(s->g->diag, "no shape rule for graph op %s", graph_op_info(s->n->op)->name);
  }
}

/* ------------------------------------------------------------ nodes */

/* A deep copy: the builder normalises lists in place, and callers may pass
 * arrays on their stack. */
static GraphAttr copy_attr(Graph *g, const GraphAttr *a) {
  GraphAttr c = *a;
  c.name = arena_strdup(g->arena, a->name);
  if (a->path)
    c.path = arena_strdup(g->arena, a->path);
  if (a->s)
    c.s = arena_strdup(g->arena, a->s);
  if (a->ints) {
    size_t count = (size_t)(a->kind == GA_INTS2 ? 2 * a->n : a->n);
    c.ints = arena_alloc(g->arena, sizeof *c.ints * (count ? count : 1));
    if (count)
      memcpy(c.ints, a->ints, sizeof *c.ints * count);
  }
  if (a->floats) {
    c.floats = arena_alloc(g->arena, sizeof *c.floats * (size_t)(a->n ? a->n : 1));
    if (a->n)
      memcpy(c.floats, a->floats, sizeof *c.floats * (size_t)a->n);
  }
  return c;
}

static GraphNode *new_node(Graph *g, GraphOp op, const char *node_name, int ninputs, const int *inputs, int nattrs,
                           const GraphAttr *attrs, const char *path, const char *origin) {
  GraphNode *n = arena_alloc(g->arena, sizeof *n);
  n->name = node_name ? arena_strdup(g->arena, node_name) : "";
  n->op = op;
  /* copied: loaders may pass strings owned by their JSON parser */
  n->path = path ? arena_strdup(g->arena, path) : NULL;
  n->origin = origin ? arena_strdup(g->arena, origin) : graph_op_info(op)->name;
  n->ninputs = ninputs;
  n->inputs = arena_alloc(g->arena, sizeof *n->inputs * (size_t)(ninputs ? ninputs : 1));
  for (int i = 0; i < ninputs; i++) {
    if (inputs[i] < -1 || inputs[i] >= g->values.len)
      diag_bug(g->diag, "graph node input %d is not a value", inputs[i]);
    n->inputs[i] = inputs[i];
  }
  n->nattrs = nattrs;
  n->attrs = arena_alloc(g->arena, sizeof *n->attrs * (size_t)(nattrs ? nattrs : 1));
  for (int i = 0; i < nattrs; i++)
    n->attrs[i] = copy_attr(g, &attrs[i]);
  g->at = n;
  return n;
}

static void check_arity(Graph *g, const GraphNode *n) {
  const GraphOpInfo *info = graph_op_info(n->op);
  if (n->ninputs < info->min_inputs || n->ninputs > info->max_inputs) {
    if (info->min_inputs == info->max_inputs)
      graph_error(g, n->path, "%stakes %d input%s, not %d", graph_node_desc(g, n), info->min_inputs,
                  info->min_inputs == 1 ? "" : "s", n->ninputs);
    graph_error(g, n->path, "%stakes %d to %d inputs, not %d", graph_node_desc(g, n), info->min_inputs,
                info->max_inputs, n->ninputs);
  }
  for (int i = 0; i < info->min_inputs; i++)
    if (n->inputs[i] < 0)
      graph_error(g, n->path, "%sinput %d is required", graph_node_desc(g, n), i);
}

static bool all_inputs_const(const Graph *g, const GraphNode *n) {
  for (int i = 0; i < n->ninputs; i++)
    if (n->inputs[i] >= 0 && value_of(g, n->inputs[i])->kind != GV_CONST)
      return false;
  return true;
}

/* Pushes n with its output values (GV_NODE) and folds it when all its
 * inputs are constants. A folded node leaves g->nodes again: fold.c has
 * made its outputs GV_CONST, so nothing runs it (its values keep their
 * names; `producer` becomes -1). */
static int push_node(Graph *g, GraphNode *n, int nout, const OutShape *outs, const char *const *names,
                     const bool *generated) {
  int node_ix = g->nodes.len;
  n->noutputs = nout;
  n->outputs = arena_alloc(g->arena, sizeof *n->outputs * (size_t)(nout ? nout : 1));
  for (int i = 0; i < nout; i++) {
    GraphValue *v = new_value(g, names[i], outs[i].type, outs[i].rank, outs[i].shape, GV_NODE, n->path);
    v->producer = node_ix;
    n->outputs[i] = push_value(g, v, generated[i]);
  }
  vec_push(g->arena, &g->nodes, n);
  if (all_inputs_const(g, n) && graph_fold_node(g, n)) {
    g->nodes.len--;
    for (int i = 0; i < nout; i++) {
      GraphValue *v = value_of(g, n->outputs[i]);
      if (v->kind != GV_CONST)
        diag_bug(g->diag, "folding '%s' left '%s' without a value", n->origin, v->name);
      v->producer = -1;
    }
  }
  return n->outputs[0];
}

/* `shape` needs no node: the input's dims are known now, symbolic or not. */
static int add_shape_value(Graph *g, GraphNode *n, const char *out_name, bool generated) {
  const GraphValue *x = value_of(g, n->inputs[0]);
  int64_t r = x->rank;
  int64_t start = graph_attr_int(g, n, "start", 0), end = graph_attr_int(g, n, "end", r);
  /* ONNX Shape-15: negative counts from the end, then clamped to [0, rank] */
  if (start < 0)
    start += r;
  if (end < 0)
    end += r;
  start = start < 0 ? 0 : start > r ? r : start;
  end = end < 0 ? 0 : end > r ? r : end;
  int64_t count = end > start ? end - start : 0;
  return sym_const(g, out_name, count, x->shape + start, false, n->path, generated);
}

/* A node of class EXT: shapes from build_ext.c; it may have several outputs. */
static int push_ext_node(Graph *g, GraphNode *n, const char **out_names, const char *first, bool first_generated) {
  for (int i = 0; i < n->ninputs; i++)
    if (n->inputs[i] < 0)
      graph_error(g, n->path, "%sinput %d is missing", graph_node_desc(g, n), i);
  GraphShape outs[LG_EXT_MAX_TENSORS];
  int nout = graph_ext_infer(g, n, outs);
  if (n->listed_outputs && n->listed_outputs != nout) /* the file's count, which the loader let through */
    graph_error(g, arena_printf(g->arena, "%s/outputs", n->path), "op '%s' has %d output%s, not %d",
                graph_op_info(n->op)->name, nout, nout == 1 ? "" : "s", n->listed_outputs);
  const char *names[LG_EXT_MAX_TENSORS];
  bool generated[LG_EXT_MAX_TENSORS];
  for (int i = 0; i < nout; i++) {
    names[i] = i == 0 ? first : out_names && out_names[i] ? out_names[i] : NULL;
    generated[i] = i == 0 ? first_generated : !names[i];
    if (i > 0 && names[i])
      check_new_name(g, names[i], n->path);
    if (!names[i])
      names[i] = fresh_name(g, i == 0 ? n->name : NULL);
  }
  return push_node(g, n, nout, outs, names, generated);
}

static int64_t softmax_axis(Graph *g, GraphNode *n) { return graph_attr_int(g, n, "axis", -1); }

/* Levenshtein distance, for suggestions (names are short). */
static size_t edit_distance(const char *a, const char *b) {
  size_t n = strlen(b), row[64];
  if (n >= 64 || strlen(a) >= 64)
    return SIZE_MAX;
  for (size_t j = 0; j <= n; j++)
    row[j] = j;
  for (size_t i = 1; a[i - 1]; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= n; j++) {
      size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      diag = up;
      row[j] = best;
    }
  }
  return row[n];
}

/* The closest of `names` to `name`, if close enough to be a misspelling
 * (two edits, or a third of its length); NULL otherwise. */
const char *graph_suggest(const char *name, const char *const *names, int count) {
  const char *best = NULL;
  size_t best_d = SIZE_MAX, limit = strlen(name) / 3 > 2 ? strlen(name) / 3 : 2;
  for (int i = 0; i < count; i++) {
    size_t d = edit_distance(name, names[i]);
    if (d < best_d && d <= limit && strcmp(name, names[i]) != 0)
      best = names[i], best_d = d;
  }
  return best;
}

/* lgen-graph/1 names attributes itself: one the builder never asked the
 * node for is a misspelling or a mistake, never silently ignored
 * ("dimensoin_map" was the identity map). "algorithm" is read later, by
 * conv_algo.c. */
static void check_attrs_asked(Graph *g, const GraphNode *n, int nattrs, const GraphAttr *attrs, const PtrVec *asked) {
  for (int i = 0; i < nattrs; i++) {
    bool known = strcmp(attrs[i].name, "algorithm") == 0 && graph_op_info(n->op)->cls == GC_CONV;
    for (int j = 0; j < asked->len && !known; j++)
      known = strcmp(asked->items[j], attrs[i].name) == 0;
    if (known)
      continue;
    const char *near = graph_suggest(attrs[i].name, (const char *const *)asked->items, asked->len);
    graph_error(g, attrs[i].path ? attrs[i].path : n->path, "%sunknown attribute '%s'%s%s%s", graph_node_desc(g, n),
                attrs[i].name, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
  }
}

static int add_node(Graph *g, GraphNode *n, const char **out_names);

static int add_node_listed(Graph *g, GraphOp op, const char *node_name, int ninputs, const int *inputs, int nattrs,
                           const GraphAttr *attrs, const char **out_names, int listed, const char *path,
                           const char *origin) {
  const GraphOpInfo *info = graph_op_info(op);
  if (!info || op == GOP_CALL)
    diag_bug(g->diag, "graph_add_node: op %d needs graph_add_call or does not exist", (int)op);
  GraphNode *n = new_node(g, op, node_name, ninputs, inputs, nattrs, attrs, path, origin);
  n->listed_outputs = listed;
  if (origin || nattrs == 0) /* the importers' attributes are lgen's own */
    return add_node(g, n, out_names);
  const GraphNode *outer = g->attr_node;
  PtrVec *outer_asked = g->attr_asked, asked = {0};
  g->attr_node = n, g->attr_asked = &asked;
  int first = add_node(g, n, out_names);
  check_attrs_asked(g, n, nattrs, attrs, &asked);
  g->attr_node = outer, g->attr_asked = outer_asked;
  return first;
}

int graph_add_node(Graph *g, GraphOp op, const char *node_name, int ninputs, const int *inputs, int nattrs,
                   const GraphAttr *attrs, const char **out_names, const char *path, const char *origin) {
  return add_node_listed(g, op, node_name, ninputs, inputs, nattrs, attrs, out_names, 0, path, origin);
}

int graph_add_node_listed(Graph *g, GraphOp op, const char *node_name, int ninputs, const int *inputs, int nattrs,
                          const GraphAttr *attrs, const char **out_names, int listed, const char *path) {
  return add_node_listed(g, op, node_name, ninputs, inputs, nattrs, attrs, out_names, listed, path, NULL);
}

static int add_node(Graph *g, GraphNode *n, const char **out_names) {
  const char *path = n->path;
  GraphOp op = n->op;
  const GraphOpInfo *info = graph_op_info(op);
  check_arity(g, n);
  const char *out_name = out_names && out_names[0] ? out_names[0] : NULL;
  if (out_name)
    check_new_name(g, out_name, path);
  if (info->cls == GC_COMPOSITE) {
    int64_t axis = softmax_axis(g, n);
    return graph_softmax(g, n->inputs[0], axis, op == GOP_LOG_SOFTMAX, out_name, path, n->origin);
  }
  bool generated = !out_name;
  if (generated)
    out_name = fresh_name(g, n->name);
  if (op == GOP_SHAPE)
    return add_shape_value(g, n, out_name, generated);
  if (info->cls == GC_EXT) /* non-structured ops: build_ext.c */
    return push_ext_node(g, n, out_names, out_name, generated);
  Infer s = {.g = g, .n = n, .desc = graph_node_desc(g, n), .out_name = out_name};
  infer(&s);
  return push_node(g, n, 1, s.out, &out_name, &generated);
}

/* ------------------------------------------------------------ calls */

/* A def's shape expression with its size symbols replaced by the graph's
 * dims bound to them; NULL for what a graph cannot give (attributes). */
/* A def's tensor extent with its size symbols bound. The front-ends build
 * extents from integers and size symbols only (tc_sema's lower_shape
 * refuses attributes, opdsl gives any other extent a size of its own,
 * tc_classic infers outputs from inputs' extents and where-ranges of sizes),
 * and bind_sizes has bound every symbol, so the result is never NULL. */
static AffineExpr *subst_sizes(Graph *g, const AffineExpr *e, AffineExpr *const *binding) {
  switch (e->kind) {
  case AE_CONST:
    return graph_dim_const(g, e->value);
  case AE_SIZE:
    return binding[e->index];
  case AE_NEG:
    return dim_sub(g, graph_dim_const(g, 0), subst_sizes(g, e->lhs, binding));
  case AE_ADD:
  case AE_SUB:
  case AE_MUL:
  case AE_FLOORDIV:
  case AE_CEILDIV:
  case AE_MOD: {
    AffineExpr *l = subst_sizes(g, e->lhs, binding), *r = subst_sizes(g, e->rhs, binding);
    if (e->kind == AE_ADD)
      return dim_add(g, l, r);
    if (e->kind == AE_SUB)
      return dim_sub(g, l, r);
    if (e->kind == AE_MUL)
      return dim_mul(g, l, r);
    if (e->kind == AE_MOD)
      return affine_binary(g->arena, AE_MOD, l, r);
    return dim_div(g, e->kind, l, r);
  }
  default:
    diag_bug(g->diag, "a def's tensor extent uses a dim or an attribute (kind %d)", (int)e->kind);
  }
}

static int count_def_inputs(const Kernel *def) {
  int k = 0;
  for (int t = 0; t < def->ntensors; t++)
    k += !def->tensors[t].is_output;
  return k;
}

/* Binds each size symbol from the first input dim that is exactly it. */
static void bind_sizes(Graph *g, const GraphNode *n, const Kernel *def, AffineExpr **binding) {
  int k = 0;
  for (int t = 0; t < def->ntensors; t++) {
    const TensorParam *tp = &def->tensors[t];
    if (tp->is_output)
      continue;
    const GraphValue *v = value_of(g, n->inputs[k++]);
    for (int d = 0; d < tp->rank; d++)
      if (tp->shape[d]->kind == AE_SIZE && !binding[tp->shape[d]->index])
        binding[tp->shape[d]->index] = v->shape[d];
  }
  for (int s = 0; s < def->nsizes; s++)
    if (!binding[s])
      graph_error(g, n->path, "%ssize '%s' of '%s' is not the extent of any input dim", graph_node_desc(g, n),
                  def->sizes[s].name, def->name);
}

static void check_call_inputs(Graph *g, const GraphNode *n, const Kernel *def, AffineExpr **binding) {
  int k = 0;
  for (int t = 0; t < def->ntensors; t++) {
    const TensorParam *tp = &def->tensors[t];
    if (tp->is_output)
      continue;
    const GraphValue *v = value_of(g, n->inputs[k++]);
    if (v->rank != tp->rank || v->type != tp->type)
      graph_error(g, n->path, "%s'%s' is %s %s, but '%s' of '%s' takes %s of rank %d", graph_node_desc(g, n),
                  v->name, elem_type_name(v->type), value_shape_str(g, v), tp->name, def->name,
                  elem_type_name(tp->type), tp->rank);
    for (int d = 0; d < tp->rank; d++) {
      AffineExpr *want = subst_sizes(g, tp->shape[d], binding);
      if (!dims_equal(g, want, v->shape[d]))
        graph_error(g, n->path, "%s'%s' has shape %s, but '%s' of '%s' needs dim %d to be %s",
                    graph_node_desc(g, n), v->name, value_shape_str(g, v), tp->name, def->name, d,
                    dim_str(g, want));
    }
  }
}

int graph_add_call(Graph *g, const Kernel *def, const char *node_name, int ninputs, const int *inputs,
                   const char **out_names, const char *path) {
  GraphNode *n = new_node(g, GOP_CALL, node_name, ninputs, inputs, 0, NULL, path, def->name);
  n->def = def;
  const char *desc = graph_node_desc(g, n);
  int want = count_def_inputs(def);
  if (ninputs != want)
    graph_error(g, path, "%s'%s' takes %d input%s, not %d", desc, def->name, want, want == 1 ? "" : "s", ninputs);
  for (int i = 0; i < ninputs; i++)
    if (inputs[i] < 0)
      graph_error(g, path, "%sinput %d is required", desc, i);
  for (int a = 0; a < def->nattrs; a++)
    if (!def->attrs[a].optional)
      graph_error(g, path, "%s'%s' has attribute '%s', which a graph call cannot give", desc, def->name,
                  def->attrs[a].name);
  AffineExpr **binding = arena_alloc(g->arena, sizeof *binding * (size_t)(def->nsizes + 1));
  bind_sizes(g, n, def, binding);
  check_call_inputs(g, n, def, binding);
  int nout = def->ntensors - want;
  if (nout < 1)
    graph_error(g, path, "%s'%s' has no outputs", desc, def->name);
  OutShape *outs = arena_alloc(g->arena, sizeof *outs * (size_t)nout);
  const char **names = arena_alloc(g->arena, sizeof *names * (size_t)nout);
  bool *generated = arena_alloc(g->arena, sizeof *generated * (size_t)nout);
  int k = 0;
  for (int t = 0; t < def->ntensors; t++) {
    const TensorParam *tp = &def->tensors[t];
    if (!tp->is_output)
      continue;
    outs[k].type = tp->type;
    outs[k].rank = tp->rank;
    for (int d = 0; d < tp->rank; d++) {
      outs[k].shape[d] = subst_sizes(g, tp->shape[d], binding);
    }
    const char *given = out_names ? out_names[k] : NULL;
    generated[k] = !given;
    names[k] = given ? given : nout == 1 ? fresh_name(g, n->name) : fresh_name(g, NULL);
    k++;
  }
  for (int i = 0; i < nout; i++)
    for (int j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0)
        graph_error(g, path, "%s'%s' names two outputs", desc, names[i]);
  return push_node(g, n, nout, outs, names, generated);
}
