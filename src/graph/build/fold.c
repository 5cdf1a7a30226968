/* fold.c - constant folding at generation time (see graph.h).
 *
 * graph_fold_node evaluates a node whose inputs are all constants (the
 * builder calls it after inferring the output's type and shape) and turns
 * its output into a constant. Semantics are exactly src/graph/ops.md's:
 *
 *   - floating-point math is done in double from the input elements and
 *     rounded once to the element type (f16 round-to-nearest-even);
 *   - integer math wraps like two's complement of the type's width
 *     (unsigned types: division and comparisons on the unsigned values); an
 *     operation that is undefined in C (division by zero, INT_MIN / -1, a
 *     float out of a signed integer's range) is not folded, so it stays
 *     what the generated code would do at run time; a float converts to an
 *     unsigned type saturating, as the generated code does;
 *   - i64 constants may hold symbolic elements (one AffineExpr each): data
 *     movement passes them through, + - * build expressions, / builds a
 *     floordiv only where it equals C's truncating division.
 *
 * Every fold computes into fresh arena memory and touches the output value
 * only once it has succeeded, so `false` always means "nothing changed". */
#include <math.h>
#include <string.h>

#include "graph/graph.h"

/* Folding embeds the result in the generated C file and costs time here:
 * beyond these sizes the node is cheaper to run at run time. A fold that
 * expands its inputs (a broadcast or fill of a few values, a Tile) is left
 * to run time past FOLD_MAX_EXPANDED elements: its result would be mostly
 * copies, in the C file and in lgen's memory, and its size is the input's
 * to choose (a Trilu's index vector over a dim of 2^25 took seconds). */
enum { FOLD_MAX_ELEMS = 1 << 26, FOLD_MAX_WORK = 1 << 27, FOLD_MAX_EXPANDED = 1 << 16, FOLD_EXPANSION = 16 };

#define X(e, name, nin_min, nin_max, nout, cls) GC_##cls,
static const GraphOpClass op_class[] = {
#include "graph/graph_ops.def"
};
#undef X

/* ---- element bytes: little-endian, f16 as raw IEEE half bits ---- */

static int elem_size(ElemType t) { return elem_type_bytes(t); }

static uint64_t load_le(const uint8_t *p, int n) {
  uint64_t x = 0;
  for (int b = n - 1; b >= 0; b--)
    x = x << 8 | p[b];
  return x;
}

static void store_le(uint8_t *p, int n, uint64_t x) {
  for (int b = 0; b < n; b++, x >>= 8)
    p[b] = (uint8_t)(x & 0xff);
}

/* The int64 whose two's complement bits are x, without relying on the
 * implementation-defined conversion of out-of-range unsigned values. */
static int64_t as_int64(uint64_t x) { return x <= (uint64_t)INT64_MAX ? (int64_t)x : -(int64_t)(~x) - 1; }

/* The most negative value of integer type t (i1 and unsigned: 0). */
static int64_t int_min(ElemType t) { return elem_int_lowest(t); }

/* The value C gives x stored into an integer of type t (i1 is _Bool; u64
 * keeps the bits). */
static int64_t wrap_int(ElemType t, int64_t x) { return elem_int_wrap(t, (uint64_t)x); }

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 0)
    v = ldexp(m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

/* A scalar on its way between element types: float types compute in
 * double, integer types in int64 (unsigned ones as elem_int_wrap's bits,
 * is_unsigned set). */
typedef struct {
  bool is_float, is_unsigned;
  double f;
  int64_t i;
} Num;

static Num num_f(double f) {
  Num n = {true, false, f, 0};
  return n;
}

static Num num_i(int64_t i) {
  Num n = {false, false, 0, i};
  return n;
}

static Num read_num(const GraphValue *v, int64_t i) {
  const uint8_t *p = (const uint8_t *)v->data + i * elem_size(v->type);
  uint64_t bits = load_le(p, elem_size(v->type));
  switch (v->type) {
  case TY_F16:
    return num_f(half_to_double((uint16_t)bits));
  case TY_F32: {
    uint32_t w = (uint32_t)bits;
    float f;
    memcpy(&f, &w, sizeof f);
    return num_f(f);
  }
  case TY_F64: {
    double d;
    memcpy(&d, &bits, sizeof d);
    return num_f(d);
  }
  default: {
    Num n = num_i(elem_int_wrap(v->type, bits));
    n.is_unsigned = elem_type_is_unsigned(v->type);
    return n;
  }
  }
}

/* Stores x as element i of type t with C's conversion; false where C's
 * conversion is undefined (a float outside a signed integer type's range;
 * to unsigned types floats saturate, as c_expr.c's conversion does). */
static bool write_num(ElemType t, void *data, int64_t i, Num x) {
  uint8_t *p = (uint8_t *)data + i * elem_size(t);
  if (t == TY_F16 || t == TY_F64) {
    double d = x.is_float ? x.f : x.is_unsigned ? (double)(uint64_t)x.i : (double)x.i;
    uint64_t bits;
    if (t == TY_F16)
      bits = elem_f16_bits(d);
    else
      memcpy(&bits, &d, sizeof bits);
    store_le(p, elem_size(t), bits);
    return true;
  }
  if (t == TY_F32) {
    /* int64 -> float directly: through double it could round twice */
    float f = x.is_float ? (float)x.f : x.is_unsigned ? (float)(uint64_t)x.i : (float)x.i;
    uint32_t w;
    memcpy(&w, &f, sizeof w);
    store_le(p, 4, w);
    return true;
  }
  int64_t v;
  if (!x.is_float)
    v = x.i;
  else if (t == TY_I1)
    v = x.f != 0;
  else if (elem_type_is_unsigned(t))
    v = elem_int_saturate(t, x.f);
  else {
    double tr = trunc(x.f), range = ldexp(1, elem_type_bits(t) - 1);
    if (!(tr >= -range && tr < range)) /* NaN, infinities, out of range */
      return false;
    v = (int64_t)tr;
  }
  store_le(p, elem_size(t), (uint64_t)wrap_int(t, v));
  return true;
}

/* ---- shapes and indices ---- */

typedef struct {
  int rank;
  int64_t dim[LG_MAX_RANK];
  int64_t count;
} Shape;

static bool static_shape(const GraphValue *v, Shape *s) {
  if (v->rank < 0 || v->rank > LG_MAX_RANK)
    return false;
  s->rank = v->rank;
  s->count = 1;
  for (int d = 0; d < v->rank; d++) {
    if (!v->shape[d] || v->shape[d]->kind != AE_CONST || v->shape[d]->value < 0)
      return false;
    s->dim[d] = v->shape[d]->value;
    if (s->dim[d] > 0 && s->count > FOLD_MAX_ELEMS / s->dim[d])
      return false;
    s->count *= s->dim[d];
  }
  return true;
}

/* Advances a row-major multi-index; false after the last one. */
static bool next_index(const Shape *s, int64_t *idx) {
  for (int d = s->rank - 1; d >= 0; d--) {
    if (++idx[d] < s->dim[d])
      return true;
    idx[d] = 0;
  }
  return false;
}

static int64_t flatten(const Shape *s, const int64_t *idx) {
  int64_t flat = 0;
  for (int d = 0; d < s->rank; d++)
    flat = flat * s->dim[d] + idx[d];
  return flat;
}

/* The element of `in` that NumPy broadcasting reads for output index idx. */
static int64_t broadcast_index(const Shape *in, const Shape *out, const int64_t *idx) {
  int64_t flat = 0;
  for (int d = 0; d < in->rank; d++) {
    int64_t i = in->dim[d] == 1 ? 0 : idx[d + out->rank - in->rank];
    flat = flat * in->dim[d] + i;
  }
  return flat;
}

/* ---- the node being folded ---- */

typedef struct {
  Graph *g;
  GraphNode *n;
  int nin;
  const GraphValue **in; /* NULL: an omitted optional input */
  Shape *ins;
  GraphValue *out;
  Shape os;
} Fold;

static const GraphAttr *find_attr(const GraphNode *n, const char *name, GraphAttrKind kind) {
  for (int a = 0; a < n->nattrs; a++)
    if (strcmp(n->attrs[a].name, name) == 0)
      return n->attrs[a].kind == kind ? &n->attrs[a] : NULL;
  return NULL;
}

static int64_t attr_int(const GraphNode *n, const char *name, int64_t dflt) {
  const GraphAttr *a = find_attr(n, name, GA_INT);
  return a ? a->i : dflt;
}

static double attr_float(const GraphNode *n, const char *name, double dflt) {
  const GraphAttr *a = find_attr(n, name, GA_FLOAT);
  return a ? a->f : dflt;
}

/* A GA_INTS attribute with exactly `len` elements, or NULL. */
static const int64_t *attr_ints(const GraphNode *n, const char *name, int len) {
  const GraphAttr *a = find_attr(n, name, GA_INTS);
  return a && a->n == len ? a->ints : NULL;
}

static bool has_sym(const GraphValue *v) { return v && v->sym != NULL; }

static void *new_data(const Fold *f) {
  return arena_alloc(f->g->arena, (size_t)(f->os.count ? f->os.count : 1) * (size_t)elem_size(f->out->type));
}

static bool commit_data(Fold *f, void *data) {
  f->g->const_bytes += f->os.count * elem_size(f->out->type);
  f->out->kind = GV_CONST;
  f->out->count = f->os.count;
  f->out->data = data;
  f->out->sym = NULL;
  return true;
}

/* Element i of an integer constant as an expression (data elements become
 * AE_CONST); NULL for a float constant. */
static AffineExpr *elem_expr(const Fold *f, const GraphValue *v, int64_t i) {
  if (v->sym)
    return v->sym[i];
  if (elem_type_is_float(v->type))
    return NULL;
  return affine_const(f->g->arena, read_num(v, i).i);
}

/* Element i of an integer constant as a plain integer; false when it is a
 * symbolic expression or not an integer. */
static bool elem_int(const GraphValue *v, int64_t i, int64_t *out) {
  if (v->sym) {
    if (v->sym[i]->kind != AE_CONST)
      return false;
    *out = v->sym[i]->value;
    return true;
  }
  Num x = read_num(v, i);
  *out = x.i;
  return !x.is_float;
}

/* The result as expressions: plain data when every element is a constant
 * (any output type), a symbolic constant when the type can hold one. */
static bool commit_exprs(Fold *f, AffineExpr **e) {
  bool all_const = true;
  for (int64_t i = 0; i < f->os.count; i++)
    all_const = all_const && e[i]->kind == AE_CONST;
  if (all_const) {
    void *data = new_data(f);
    for (int64_t i = 0; i < f->os.count; i++)
      if (!write_num(f->out->type, data, i, num_i(e[i]->value)))
        return false;
    return commit_data(f, data);
  }
  /* Symbolic elements are i64 values (ops.md); an i32 cast of them is kept
   * symbolic too so that Shape -> Cast(int32) -> ... chains fold. */
  if (f->out->type != TY_I64 && f->out->type != TY_I32)
    return false;
  f->g->const_bytes += f->os.count * (int64_t)sizeof *e;
  f->out->kind = GV_CONST;
  f->out->count = f->os.count;
  f->out->data = NULL;
  f->out->sym = e;
  return true;
}

/* ---- symbolic integer arithmetic, with the simplifications that keep
 * shape chains readable ---- */

static bool is_const(const AffineExpr *e, int64_t v) { return e->kind == AE_CONST && e->value == v; }

/* True when e is provably >= 0: symbolic dims are extents, so non-negative. */
static bool nonnegative(const AffineExpr *e) {
  switch (e->kind) {
  case AE_CONST:
    return e->value >= 0;
  case AE_SIZE:
    return true;
  case AE_ADD:
  case AE_MUL:
    return nonnegative(e->lhs) && nonnegative(e->rhs);
  case AE_FLOORDIV:
  case AE_CEILDIV:
    return nonnegative(e->lhs) && e->rhs->kind == AE_CONST && e->rhs->value > 0;
  case AE_MOD:
    return e->rhs->kind == AE_CONST && e->rhs->value > 0;
  default:
    return false;
  }
}

static AffineExpr *sym_neg(Arena *a, AffineExpr *x) {
  if (x->kind == AE_CONST)
    return affine_const(a, as_int64(0 - (uint64_t)x->value));
  if (x->kind == AE_NEG)
    return x->lhs;
  return affine_binary(a, AE_NEG, x, NULL);
}

static AffineExpr *sym_add(Arena *a, AffineExpr *x, AffineExpr *y) {
  if (x->kind == AE_CONST && y->kind == AE_CONST)
    return affine_const(a, as_int64((uint64_t)x->value + (uint64_t)y->value));
  if (is_const(x, 0))
    return y;
  if (is_const(y, 0))
    return x;
  if (y->kind == AE_CONST && y->value < 0 && y->value != INT64_MIN) /* N + -1 reads N - 1 */
    return affine_binary(a, AE_SUB, x, affine_const(a, -y->value));
  return affine_binary(a, AE_ADD, x, y);
}

static AffineExpr *sym_sub(Arena *a, AffineExpr *x, AffineExpr *y) {
  if (x->kind == AE_CONST && y->kind == AE_CONST)
    return affine_const(a, as_int64((uint64_t)x->value - (uint64_t)y->value));
  if (is_const(y, 0))
    return x;
  if (affine_equal(x, y))
    return affine_const(a, 0);
  if (is_const(x, 0))
    return sym_neg(a, y);
  return affine_binary(a, AE_SUB, x, y);
}

static AffineExpr *sym_mul(Arena *a, AffineExpr *x, AffineExpr *y) {
  if (x->kind == AE_CONST && y->kind == AE_CONST)
    return affine_const(a, as_int64((uint64_t)x->value * (uint64_t)y->value));
  if (is_const(x, 0) || is_const(y, 0))
    return affine_const(a, 0);
  if (is_const(x, 1))
    return y;
  if (is_const(y, 1))
    return x;
  return affine_binary(a, AE_MUL, x, y);
}

/* C's truncating x / y, or NULL when it cannot be written exactly: a
 * floordiv equals it only for a non-negative dividend and a positive
 * divisor. */
static AffineExpr *sym_div(Arena *a, AffineExpr *x, AffineExpr *y) {
  if (y->kind != AE_CONST || y->value <= 0 || !nonnegative(x))
    return NULL;
  int64_t d = y->value;
  if (d == 1)
    return x;
  if (x->kind == AE_CONST)
    return affine_const(a, x->value / d);
  /* (x floordiv p) floordiv d = x floordiv (p d) */
  if (x->kind == AE_FLOORDIV && x->rhs->kind == AE_CONST && x->rhs->value > 0 && x->rhs->value <= INT64_MAX / d &&
      nonnegative(x->lhs))
    return sym_div(a, x->lhs, affine_const(a, x->rhs->value * d));
  /* (k * N) / d with d dividing k: exact, no floordiv needed */
  if (x->kind == AE_MUL) {
    if (x->lhs->kind == AE_CONST && x->lhs->value % d == 0)
      return sym_mul(a, affine_const(a, x->lhs->value / d), x->rhs);
    if (x->rhs->kind == AE_CONST && x->rhs->value % d == 0)
      return sym_mul(a, x->lhs, affine_const(a, x->rhs->value / d));
  }
  return affine_binary(a, AE_FLOORDIV, x, y);
}

/* ---- scalar op semantics (ops.md's table) ---- */

typedef struct {
  double alpha, beta, gamma, lo, hi;
  bool has_lo, has_hi, tanh_gelu;
} Params;

static Params read_params(const GraphNode *n) {
  Params p;
  double alpha_default = 1.0;
  if (n->op == GOP_LEAKY_RELU)
    alpha_default = 0.01;
  else if (n->op == GOP_SELU)
    alpha_default = 1.67326319217681884765625;
  else if (n->op == GOP_HARD_SIGMOID)
    alpha_default = 0.2;
  p.alpha = attr_float(n, "alpha", alpha_default);
  p.beta = attr_float(n, "beta", 0.5);
  p.gamma = attr_float(n, "gamma", 1.05070102214813232421875);
  p.has_lo = find_attr(n, "min", GA_FLOAT) != NULL;
  p.has_hi = find_attr(n, "max", GA_FLOAT) != NULL;
  p.lo = attr_float(n, "min", 0);
  p.hi = attr_float(n, "max", 0);
  const GraphAttr *approx = find_attr(n, "approximate", GA_STRING);
  p.tanh_gelu = approx && approx->s && strcmp(approx->s, "tanh") == 0;
  return p;
}

/* max and min as the generated code spells them: a > b ? a : b. */
static double max_f(double a, double b) { return a > b ? a : b; }
static double min_f(double a, double b) { return a < b ? a : b; }

static bool unary_f(GraphOp op, const Params *p, double x, double *r) {
  const double pi = 3.14159265358979323846;
  switch (op) {
  case GOP_NEG: *r = -x; break;
  case GOP_ABS: *r = fabs(x); break;
  case GOP_EXP: *r = exp(x); break;
  case GOP_LOG: *r = log(x); break;
  case GOP_SQRT: *r = sqrt(x); break;
  case GOP_RSQRT: *r = 1 / sqrt(x); break;
  case GOP_RECIPROCAL: *r = 1 / x; break;
  case GOP_TANH: *r = tanh(x); break;
  case GOP_SIGMOID: *r = 1 / (1 + exp(-x)); break;
  case GOP_RELU: *r = x < 0 ? 0 : x; break;
  case GOP_GELU:
    *r = p->tanh_gelu ? 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x * x * x)))
                      : 0.5 * x * (1 + erf(x / sqrt(2.0)));
    break;
  case GOP_ERF: *r = erf(x); break;
  case GOP_FLOOR: *r = floor(x); break;
  case GOP_CEIL: *r = ceil(x); break;
  case GOP_LEAKY_RELU: *r = x < 0 ? p->alpha * x : x; break;
  case GOP_ELU: *r = x < 0 ? p->alpha * (exp(x) - 1) : x; break;
  case GOP_SELU: *r = x > 0 ? p->gamma * x : p->gamma * (p->alpha * exp(x) - p->alpha); break;
  case GOP_CELU: *r = max_f(0, x) + min_f(0, p->alpha * (exp(x / p->alpha) - 1)); break;
  case GOP_HARD_SIGMOID: *r = max_f(0, min_f(1, p->alpha * x + p->beta)); break;
  case GOP_HARD_SWISH: *r = x * max_f(0, min_f(1, x / 6 + 0.5)); break;
  case GOP_SOFTPLUS: *r = log(exp(x) + 1); break;
  case GOP_CLIP:
    if (p->has_lo)
      x = max_f(x, p->lo);
    if (p->has_hi)
      x = min_f(x, p->hi);
    *r = x;
    break;
  case GOP_COPY: *r = x; break;
  case GOP_SIN: *r = sin(x); break;
  case GOP_COS: *r = cos(x); break;
  case GOP_TAN: *r = tan(x); break;
  case GOP_ASIN: *r = asin(x); break;
  case GOP_ACOS: *r = acos(x); break;
  case GOP_ATAN: *r = atan(x); break;
  case GOP_SINH: *r = sinh(x); break;
  case GOP_COSH: *r = cosh(x); break;
  case GOP_ASINH: *r = asinh(x); break;
  case GOP_ACOSH: *r = acosh(x); break;
  case GOP_ATANH: *r = atanh(x); break;
  case GOP_ROUND: *r = nearbyint(x); break; /* half to even in the default rounding mode */
  case GOP_SIGN: *r = x > 0 ? 1 : x < 0 ? -1 : x; break;
  default:
    return false;
  }
  return true;
}

static bool binary_f(GraphOp op, double a, double b, double *r) {
  switch (op) {
  case GOP_ADD: *r = a + b; break;
  case GOP_SUB: *r = a - b; break;
  case GOP_MUL: *r = a * b; break;
  case GOP_DIV: *r = a / b; break;
  case GOP_MAX: *r = max_f(a, b); break;
  case GOP_MIN: *r = min_f(a, b); break;
  case GOP_POW: *r = pow(a, b); break;
  case GOP_FMOD: *r = fmod(a, b); break;
  case GOP_MOD: /* NumPy's: a non-zero remainder takes the divisor's sign */
    *r = fmod(a, b);
    if (*r != 0 && (*r < 0) != (b < 0))
      *r += b;
    break;
  case GOP_EQUAL: *r = a == b; break;
  case GOP_LESS: *r = a < b; break;
  case GOP_GREATER: *r = a > b; break;
  default:
    return false;
  }
  return true;
}

/* An integer clip bound: only integral bounds have one obvious meaning. */
static bool int_bound(double b, int64_t *out) {
  if (!(b >= -9223372036854775808.0 && b < 9223372036854775808.0) || b != floor(b))
    return false;
  *out = (int64_t)b;
  return true;
}

/* Integer ops compute modulo 2^64 in uint64 (the caller wraps to the
 * type's width), which gives two's complement results for every width. */
static bool unary_i(GraphOp op, ElemType t, const Params *p, int64_t x, int64_t *r) {
  int64_t b;
  bool u = elem_type_is_unsigned(t);
  switch (op) {
  case GOP_NEG: *r = as_int64(0 - (uint64_t)x); return true;
  case GOP_ABS: *r = x < 0 && !u ? as_int64(0 - (uint64_t)x) : x; return true;
  case GOP_RELU: *r = x < 0 && !u ? 0 : x; return true;
  case GOP_BITWISE_NOT: *r = t == TY_I1 ? !x : as_int64(~(uint64_t)x); return true;
  case GOP_COPY: *r = x; return true;
  case GOP_SIGN: *r = t == TY_I1 ? x : x == 0 ? 0 : u || x > 0 ? 1 : -1; return true;
  case GOP_CLIP: /* bounds as lowering makes them constants of t: saturated */
    if (p->has_lo) {
      if (!int_bound(p->lo, &b))
        return false;
      b = elem_int_saturate(t, p->lo);
      x = elem_int_less(t, b, x) ? x : b;
    }
    if (p->has_hi) {
      if (!int_bound(p->hi, &b))
        return false;
      b = elem_int_saturate(t, p->hi);
      x = elem_int_less(t, x, b) ? x : b;
    }
    *r = x;
    return true;
  default:
    return false;
  }
}

static bool binary_i(GraphOp op, ElemType t, int64_t a, int64_t b, int64_t *r) {
  switch (op) {
  case GOP_ADD: *r = as_int64((uint64_t)a + (uint64_t)b); return true;
  case GOP_SUB: *r = as_int64((uint64_t)a - (uint64_t)b); return true;
  case GOP_MUL: *r = as_int64((uint64_t)a * (uint64_t)b); return true;
  case GOP_DIV:
    /* undefined in C: leave it to run time rather than invent a value */
    if (b == 0 || (b == -1 && t != TY_I1 && !elem_type_is_unsigned(t) && a == int_min(t)))
      return false;
    *r = elem_type_is_unsigned(t) ? as_int64((uint64_t)a / (uint64_t)b) : a / b;
    return true;
  case GOP_MOD:
  case GOP_FMOD: {
    /* zero and the lowest value over -1 are undefined in C: run time's */
    bool u = elem_type_is_unsigned(t);
    if (b == 0 || (b == -1 && t != TY_I1 && !u && a == int_min(t)))
      return false;
    int64_t m = u ? as_int64((uint64_t)a % (uint64_t)b) : a % b;
    if (op == GOP_MOD && !u && m != 0 && (m < 0) != (b < 0))
      m += b;
    *r = m;
    return true;
  }
  case GOP_MAX: *r = elem_int_less(t, b, a) ? a : b; return true;
  case GOP_MIN: *r = elem_int_less(t, a, b) ? a : b; return true;
  case GOP_EQUAL: *r = a == b; return true;
  case GOP_BITWISE_AND: *r = as_int64((uint64_t)a & (uint64_t)b); return true;
  case GOP_BITWISE_OR: *r = as_int64((uint64_t)a | (uint64_t)b); return true;
  case GOP_BITWISE_XOR: *r = as_int64((uint64_t)a ^ (uint64_t)b); return true;
  case GOP_SHIFT_LEFT:
  case GOP_SHIFT_RIGHT: { /* unsigned types only (build.c): a, b hold the bits */
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    if (ub >= (uint64_t)elem_type_bits(t))
      *r = 0;
    else
      *r = as_int64(op == GOP_SHIFT_LEFT ? ua << ub : ua >> ub);
    return true;
  }
  case GOP_LESS: *r = elem_int_less(t, a, b); return true;
  case GOP_GREATER: *r = elem_int_less(t, b, a); return true;
  default:
    return false;
  }
}

/* ---- elementwise ops ---- */

/* One output element from the input elements at src[] (data constants). */
static bool eval_element(const Fold *f, const Params *p, const int64_t *src, void *data, int64_t i) {
  GraphOp op = f->n->op;
  const GraphValue *a = f->in[0];
  if (op == GOP_WHERE) {
    const GraphValue *pick = read_num(a, src[0]).i ? f->in[1] : f->in[2];
    int64_t at = read_num(a, src[0]).i ? src[1] : src[2];
    int size = elem_size(f->out->type);
    memcpy((uint8_t *)data + i * size, (const uint8_t *)pick->data + at * size, (size_t)size);
    return true;
  }
  Num x = read_num(a, src[0]);
  if (op == GOP_CAST)
    return write_num(f->out->type, data, i, x);
  bool binary = op_class[op] == GC_BINARY;
  Num y = binary ? read_num(f->in[1], src[1]) : num_i(0);
  if (x.is_float) {
    double r;
    if (!(binary ? binary_f(op, x.f, y.f, &r) : unary_f(op, p, x.f, &r)))
      return false;
    return write_num(f->out->type, data, i, num_f(r));
  }
  int64_t r;
  if (!(binary ? binary_i(op, a->type, x.i, y.i, &r) : unary_i(op, a->type, p, x.i, &r)))
    return false;
  return write_num(f->out->type, data, i, num_i(r));
}

/* One output element over symbolic inputs; NULL when it has no exact
 * expression. Elements that are all constants take the numeric path. */
static AffineExpr *eval_element_sym(const Fold *f, const Params *p, AffineExpr **x) {
  Arena *a = f->g->arena;
  GraphOp op = f->n->op;
  int nx = f->nin;
  bool all_const = true;
  for (int k = 0; k < nx; k++)
    all_const = all_const && x[k]->kind == AE_CONST;
  if (op == GOP_WHERE) {
    if (x[0]->kind != AE_CONST)
      return NULL;
    return x[0]->value ? x[1] : x[2];
  }
  if (op == GOP_CAST) {
    /* integer to integer: the value is kept (wrapped when known) */
    if (elem_type_is_float(f->out->type) || f->out->type == TY_I1)
      return all_const ? x[0] : NULL;
    return all_const ? affine_const(a, wrap_int(f->out->type, x[0]->value)) : x[0];
  }
  ElemType t = f->in[0]->type;
  if (all_const) {
    int64_t r;
    bool ok = op_class[op] == GC_BINARY ? binary_i(op, t, x[0]->value, x[1]->value, &r)
                                        : unary_i(op, t, p, x[0]->value, &r);
    return ok ? affine_const(a, wrap_int(op == GOP_EQUAL || op == GOP_LESS || op == GOP_GREATER ? TY_I1 : t, r))
              : NULL;
  }
  switch (op) {
  case GOP_COPY: return x[0];
  case GOP_NEG: return sym_neg(a, x[0]);
  case GOP_ADD: return sym_add(a, x[0], x[1]);
  case GOP_SUB: return sym_sub(a, x[0], x[1]);
  case GOP_MUL: return sym_mul(a, x[0], x[1]);
  case GOP_DIV: return sym_div(a, x[0], x[1]);
  case GOP_MOD:
  case GOP_FMOD: /* equal for a non-negative dividend */
    if (x[1]->kind != AE_CONST || x[1]->value <= 0 || (op == GOP_FMOD && !nonnegative(x[0])))
      return NULL;
    return affine_binary(a, AE_MOD, x[0], x[1]);
  case GOP_MAX:
  case GOP_MIN: return affine_equal(x[0], x[1]) ? x[0] : NULL;
  case GOP_EQUAL: return affine_equal(x[0], x[1]) ? affine_const(a, 1) : NULL;
  case GOP_ABS:
  case GOP_RELU: return nonnegative(x[0]) ? x[0] : NULL;
  default: return NULL;
  }
}

static bool fold_elementwise(Fold *f) {
  Params p = read_params(f->n);
  bool sym = false;
  for (int k = 0; k < f->nin; k++) {
    if (!f->in[k])
      return false;
    sym = sym || has_sym(f->in[k]);
  }
  int64_t idx[LG_MAX_RANK] = {0}, src[3];
  if (f->nin > 3)
    return false;
  if (sym) {
    AffineExpr **e = arena_alloc(f->g->arena, (size_t)(f->os.count ? f->os.count : 1) * sizeof *e);
    for (int64_t i = 0; i < f->os.count; i++, next_index(&f->os, idx)) {
      AffineExpr *x[3];
      for (int k = 0; k < f->nin; k++)
        if (!(x[k] = elem_expr(f, f->in[k], broadcast_index(&f->ins[k], &f->os, idx))))
          return false;
      if (!(e[i] = eval_element_sym(f, &p, x)))
        return false;
    }
    return commit_exprs(f, e);
  }
  void *data = new_data(f);
  for (int64_t i = 0; i < f->os.count; i++, next_index(&f->os, idx)) {
    for (int k = 0; k < f->nin; k++)
      src[k] = broadcast_index(&f->ins[k], &f->os, idx);
    if (!eval_element(f, &p, src, data, i))
      return false;
  }
  return commit_data(f, data);
}

/* ---- data movement: each layout op says where an output element comes
 * from, one mover copies bytes or expressions ---- */

/* Sets *input (-1: the pad value) and *index (flat, in that input) of the
 * output element at idx; false to give up folding. */
typedef bool (*Locate)(const Fold *f, const int64_t *idx, int64_t flat, int *input, int64_t *index);

static bool locate_same(const Fold *f, const int64_t *idx, int64_t flat, int *input, int64_t *index) {
  (void)f, (void)idx;
  *input = 0;
  *index = flat;
  return true;
}

static bool locate_broadcast(const Fold *f, const int64_t *idx, int64_t flat, int *input, int64_t *index) {
  (void)flat;
  *input = 0;
  *index = broadcast_index(&f->ins[0], &f->os, idx);
  return true;
}

static bool locate_transpose(const Fold *f, const int64_t *idx, int64_t flat, int *input, int64_t *index) {
  const Shape *in = &f->ins[0];
  const int64_t *perm = attr_ints(f->n, "perm", in->rank);
  int64_t src[LG_MAX_RANK];
  (void)flat;
  for (int j = 0; j < in->rank; j++) {
    int64_t d = perm ? perm[j] : in->rank - 1 - j;
    if (d < 0 || d >= in->rank)
      return false;
    src[d] = idx[j];
  }
  *input = 0;
  *index = flatten(in, src);
  return true;
}

static bool locate_slice(const Fold *f, const int64_t *idx, int64_t flat, int *input, int64_t *index) {
  const Shape *in = &f->ins[0];
  const int64_t *starts = attr_ints(f->n, "starts", in->rank), *strides = attr_ints(f->n, "strides", in->rank);
  int64_t src[LG_MAX_RANK];
  (void)flat;
  if (!starts || !strides)
    return false;
  for (int d = 0; d < in->rank; d++) {
    src[d] = starts[d] + idx[d] * strides[d];
    if (src[d] < 0 || src[d] >= in->dim[d])
      return false;
  }
  *input = 0;
  *index = flatten(in, src);
  return true;
}

static bool locate_concat(const Fold *f, const int64_t *idx, int64_t flat, int *input, int64_t *index) {
  int axis = (int)attr_int(f->n, "axis", 0);
  int64_t src[LG_MAX_RANK], pos = idx[axis];
  (void)flat;
  for (int k = 0; k < f->nin; k++) {
    if (pos < f->ins[k].dim[axis]) {
      memcpy(src, idx, sizeof(int64_t) * (size_t)f->os.rank);
      src[axis] = pos;
      *input = k;
      *index = flatten(&f->ins[k], src);
      return true;
    }
    pos -= f->ins[k].dim[axis];
  }
  return false;
}

static bool locate_pad(const Fold *f, const int64_t *idx, int64_t flat, int *input, int64_t *index) {
  const Shape *in = &f->ins[0];
  const GraphAttr *pad = find_attr(f->n, "padding", GA_INTS2);
  const GraphAttr *mode = find_attr(f->n, "mode", GA_STRING);
  char m = mode && mode->s ? mode->s[0] : 'c'; /* constant, reflect, edge, wrap (checked by the builder) */
  int64_t src[LG_MAX_RANK];
  (void)flat;
  *input = 0;
  for (int d = 0; d < in->rank; d++) {
    int64_t n = in->dim[d], j = idx[d] - (pad && pad->n == in->rank ? pad->ints[2 * d] : 0);
    if (m != 'c' && n > 0 && (j < 0 || j >= n))
      j = m == 'e' ? (j < 0 ? 0 : n - 1) : m == 'w' ? (j < 0 ? j + n : j - n) : (j < 0 ? -j : 2 * (n - 1) - j);
    src[d] = j;
    if (src[d] < 0 || src[d] >= in->dim[d])
      *input = -1;
  }
  *index = *input < 0 ? 0 : flatten(in, src);
  return true;
}

static bool locate_tile(const Fold *f, const int64_t *idx, int64_t flat, int *input, int64_t *index) {
  const Shape *in = &f->ins[0];
  int64_t src[LG_MAX_RANK];
  (void)flat;
  for (int d = 0; d < in->rank; d++) {
    if (in->dim[d] == 0)
      return false;
    src[d] = idx[d] % in->dim[d];
  }
  *input = 0;
  *index = flatten(in, src);
  return true;
}

static bool locate_repeat(const Fold *f, const int64_t *idx, int64_t flat, int *input, int64_t *index) {
  const Shape *in = &f->ins[0];
  const int64_t *rep = attr_ints(f->n, "repeats", in->rank);
  int64_t src[LG_MAX_RANK];
  (void)flat;
  if (!rep)
    return false;
  for (int d = 0; d < in->rank; d++)
    src[d] = idx[d] / rep[d];
  *input = 0;
  *index = flatten(in, src);
  return true;
}

static bool locate_reverse(const Fold *f, const int64_t *idx, int64_t flat, int *input, int64_t *index) {
  const Shape *in = &f->ins[0];
  const GraphAttr *dims = find_attr(f->n, "dims", GA_INTS);
  int64_t src[LG_MAX_RANK];
  (void)flat;
  memcpy(src, idx, sizeof(int64_t) * (size_t)in->rank);
  for (int k = 0; dims && k < dims->n; k++) {
    int64_t d = dims->ints[k];
    if (d < 0 || d >= in->rank)
      return false;
    src[d] = in->dim[d] - 1 - idx[d];
  }
  *input = 0;
  *index = flatten(in, src);
  return true;
}

/* out = data[:axis] + indices + data[axis+1:]; negative indices count from
 * the end. A constant index out of range is the model's error (ONNX
 * rejects it too), reported here because only folding sees the values. */
static bool locate_gather(const Fold *f, const int64_t *idx, int64_t flat, int *input, int64_t *index) {
  const Shape *data = &f->ins[0], *ind = &f->ins[1];
  int axis = (int)attr_int(f->n, "axis", 0);
  int64_t src[LG_MAX_RANK], which;
  (void)flat;
  if (axis < 0 || axis >= data->rank)
    return false;
  for (int d = 0; d < axis; d++)
    src[d] = idx[d];
  if (!elem_int(f->in[1], flatten(ind, idx + axis), &which))
    return false;
  int64_t given = which;
  if (which < 0)
    which += data->dim[axis];
  if (which < 0 || which >= data->dim[axis])
    graph_error(f->g, f->n->path, "%sindex %lld is out of range for axis %d of extent %lld",
                graph_node_desc(f->g, f->n), (long long)given, axis, (long long)data->dim[axis]);
  src[axis] = which;
  for (int d = axis + 1; d < data->rank; d++)
    src[d] = idx[d - 1 + ind->rank];
  *input = 0;
  *index = flatten(data, src);
  return true;
}

/* Copies every output element from where `locate` says; `moved` inputs
 * carry data (the others, like gather's indices, only steer). */
static bool move_elements(Fold *f, Locate locate, int moved, double pad) {
  int64_t idx[LG_MAX_RANK] = {0}, index;
  int input;
  bool sym = false;
  for (int k = 0; k < moved; k++) {
    if (!f->in[k])
      return false;
    sym = sym || has_sym(f->in[k]);
  }
  if (sym) {
    AffineExpr **e = arena_alloc(f->g->arena, (size_t)(f->os.count ? f->os.count : 1) * sizeof *e);
    for (int64_t i = 0; i < f->os.count; i++, next_index(&f->os, idx)) {
      if (!locate(f, idx, i, &input, &index))
        return false;
      if (input < 0 && (pad != floor(pad) || fabs(pad) > 9e18))
        return false;
      e[i] = input < 0 ? affine_const(f->g->arena, (int64_t)pad) : elem_expr(f, f->in[input], index);
      if (!e[i])
        return false;
    }
    return commit_exprs(f, e);
  }
  void *data = new_data(f);
  int size = elem_size(f->out->type);
  for (int64_t i = 0; i < f->os.count; i++, next_index(&f->os, idx)) {
    if (!locate(f, idx, i, &input, &index))
      return false;
    if (input < 0) {
      if (!write_num(f->out->type, data, i, num_f(pad)))
        return false;
    } else {
      if (f->in[input]->type != f->out->type)
        return false;
      memcpy((uint8_t *)data + i * size, (const uint8_t *)f->in[input]->data + index * size, (size_t)size);
    }
  }
  return commit_data(f, data);
}

static bool fold_layout(Fold *f) {
  switch (f->n->op) {
  case GOP_RESHAPE:
    return f->ins[0].count == f->os.count && move_elements(f, locate_same, 1, 0);
  case GOP_BROADCAST: return move_elements(f, locate_broadcast, 1, 0);
  case GOP_TRANSPOSE: return move_elements(f, locate_transpose, 1, 0);
  case GOP_SLICE: return move_elements(f, locate_slice, 1, 0);
  case GOP_CONCAT: return move_elements(f, locate_concat, f->nin, 0);
  case GOP_PAD: return move_elements(f, locate_pad, 1, attr_float(f->n, "value", 0));
  case GOP_TILE: return move_elements(f, locate_tile, 1, 0);
  case GOP_REPEAT: return move_elements(f, locate_repeat, 1, 0);
  case GOP_REVERSE: return move_elements(f, locate_reverse, 1, 0);
  case GOP_GATHER:
    return f->in[1] && f->ins[0].rank + f->ins[1].rank - 1 == f->os.rank && move_elements(f, locate_gather, 1, 0);
  default:
    return false;
  }
}

/* ---- fill (no inputs) ---- */

static bool fold_fill(Fold *f) {
  void *data = new_data(f);
  double value = attr_float(f->n, "value", 0);
  for (int64_t i = 0; i < f->os.count; i++)
    if (!write_num(f->out->type, data, i, num_f(value)))
      return false;
  return commit_data(f, data);
}

/* ---- the Winograd filter transform of a constant filter ---- */

/* U = G g G^T per (c, f) of the HWCF filter g [3, 3, C, F], exactly as
 * templates/winograd_filter.c defines it (F(2x2, 3x3) or F(6x6, 3x3)), in
 * double and rounded once: a model's filters are constants, and their
 * transform would otherwise run at every run. */
static bool fold_winograd_filter(Fold *f) {
  static const double g2[4][3] = {{1, 0, 0}, {.5, .5, .5}, {.5, -.5, .5}, {0, 0, 1}};
  static const double g6[8][3] = {
      {1, 0, 0}, {-2. / 9, -2. / 9, -2. / 9}, {-2. / 9, 2. / 9, -2. / 9}, {1. / 90, 1. / 45, 2. / 45},
      {1. / 90, -1. / 45, 2. / 45}, {32. / 45, 16. / 45, 8. / 45}, {32. / 45, -16. / 45, 8. / 45}, {0, 0, 1}};
  const GraphValue *g = f->in[0];
  int64_t m = attr_int(f->n, "output_tile_size", 2), n = m + 2;
  if (f->nin != 1 || !g || has_sym(g) || !elem_type_is_float(g->type) || f->ins[0].rank != 4 ||
      f->ins[0].dim[0] != 3 || f->ins[0].dim[1] != 3 || (m != 2 && m != 6))
    return false;
  const double(*gm)[3] = m == 2 ? g2 : g6;
  int64_t cf = f->ins[0].dim[2] * f->ins[0].dim[3];
  void *data = new_data(f);
  for (int64_t e = 0; e < cf; e++) {
    double t[8][3];
    for (int a = 0; a < n; a++) /* G g */
      for (int j = 0; j < 3; j++) {
        t[a][j] = 0;
        for (int i = 0; i < 3; i++)
          t[a][j] += gm[a][i] * read_num(g, (i * 3 + j) * cf + e).f;
      }
    for (int a = 0; a < n; a++) /* (G g) G^T */
      for (int b = 0; b < n; b++) {
        double acc = 0;
        for (int j = 0; j < 3; j++)
          acc += t[a][j] * gm[b][j];
        write_num(f->out->type, data, (a * n + b) * cf + e, num_f(acc));
      }
  }
  return commit_data(f, data);
}

/* ---- reductions ---- */

static bool reduced_axes(const Fold *f, bool *reduced) {
  const GraphAttr *axes = find_attr(f->n, "axes", GA_INTS);
  int rank = f->ins[0].rank;
  for (int d = 0; d < rank; d++)
    reduced[d] = !axes || axes->n == 0;
  for (int k = 0; axes && k < axes->n; k++) {
    if (axes->ints[k] < 0 || axes->ints[k] >= rank)
      return false;
    reduced[axes->ints[k]] = true;
  }
  return true;
}

/* The output element an input element accumulates into: its index over
 * the kept dims (the same flat index with or without keepdims). */
static int64_t reduce_target(const Shape *in, const bool *reduced, const int64_t *idx) {
  int64_t flat = 0;
  for (int d = 0; d < in->rank; d++)
    if (!reduced[d])
      flat = flat * in->dim[d] + idx[d];
  return flat;
}

static bool combine_f(GraphOp op, double *acc, double x) {
  switch (op) {
  case GOP_REDUCE_SUM:
  case GOP_REDUCE_MEAN: *acc += x; return true;
  case GOP_REDUCE_PROD: *acc *= x; return true;
  case GOP_REDUCE_MAX: *acc = max_f(*acc, x); return true;
  case GOP_REDUCE_MIN: *acc = min_f(*acc, x); return true;
  default: return false;
  }
}

static AffineExpr *combine_sym(Arena *a, GraphOp op, ElemType t, AffineExpr *acc, AffineExpr *x) {
  switch (op) {
  case GOP_REDUCE_SUM: return sym_add(a, acc, x);
  case GOP_REDUCE_PROD: return sym_mul(a, acc, x);
  case GOP_REDUCE_MAX:
    if (acc->kind == AE_CONST && x->kind == AE_CONST)
      return elem_int_less(t, x->value, acc->value) ? acc : x;
    return NULL;
  case GOP_REDUCE_MIN:
    if (acc->kind == AE_CONST && x->kind == AE_CONST)
      return elem_int_less(t, acc->value, x->value) ? acc : x;
    return NULL;
  default: return NULL;
  }
}

static bool fold_reduce_float(Fold *f, const bool *reduced, int64_t per_out) {
  GraphOp op = f->n->op;
  double init = op == GOP_REDUCE_PROD ? 1 : op == GOP_REDUCE_MAX ? -INFINITY : op == GOP_REDUCE_MIN ? INFINITY : 0;
  double *acc = arena_alloc(f->g->arena, (size_t)(f->os.count ? f->os.count : 1) * sizeof *acc);
  int64_t idx[LG_MAX_RANK] = {0};
  for (int64_t o = 0; o < f->os.count; o++)
    acc[o] = init;
  for (int64_t i = 0; i < f->ins[0].count; i++, next_index(&f->ins[0], idx))
    if (!combine_f(op, &acc[reduce_target(&f->ins[0], reduced, idx)], read_num(f->in[0], i).f))
      return false;
  void *data = new_data(f);
  for (int64_t o = 0; o < f->os.count; o++)
    write_num(f->out->type, data, o, num_f(op == GOP_REDUCE_MEAN ? acc[o] / (double)per_out : acc[o]));
  return commit_data(f, data);
}

/* Integer reductions go through expressions, which also covers the
 * symbolic ones exporters build (reduce_prod of a Shape: the element count). */
static bool fold_reduce_int(Fold *f, const bool *reduced, int64_t per_out) {
  Arena *a = f->g->arena;
  GraphOp op = f->n->op;
  ElemType t = f->in[0]->type;
  int64_t lowest = elem_int_lowest(t), highest = elem_int_highest(t);
  int64_t init = op == GOP_REDUCE_PROD ? 1 : op == GOP_REDUCE_MAX ? lowest : op == GOP_REDUCE_MIN ? highest : 0;
  AffineExpr **acc = arena_alloc(a, (size_t)(f->os.count ? f->os.count : 1) * sizeof *acc);
  int64_t idx[LG_MAX_RANK] = {0};
  GraphOp comb = op == GOP_REDUCE_MEAN ? GOP_REDUCE_SUM : op;
  for (int64_t o = 0; o < f->os.count; o++)
    acc[o] = affine_const(a, init);
  for (int64_t i = 0; i < f->ins[0].count; i++, next_index(&f->ins[0], idx)) {
    int64_t o = reduce_target(&f->ins[0], reduced, idx);
    AffineExpr *x = elem_expr(f, f->in[0], i);
    if (!x || !(acc[o] = combine_sym(a, comb, t, acc[o], x)))
      return false;
    if (acc[o]->kind == AE_CONST) /* wrap as the element type does */
      acc[o] = affine_const(a, wrap_int(t, acc[o]->value));
  }
  if (op == GOP_REDUCE_MEAN)
    for (int64_t o = 0; o < f->os.count; o++) {
      AffineExpr *q = per_out == 0                   ? NULL
                      : acc[o]->kind != AE_CONST       ? sym_div(a, acc[o], affine_const(a, per_out))
                      : elem_type_is_unsigned(t) ? affine_const(a, as_int64((uint64_t)acc[o]->value / (uint64_t)per_out))
                                                 : affine_const(a, acc[o]->value / per_out);
      if (!q)
        return false;
      acc[o] = q;
    }
  return commit_exprs(f, acc);
}

static bool fold_reduce(Fold *f) {
  bool reduced[LG_MAX_RANK];
  if (!f->in[0] || !reduced_axes(f, reduced))
    return false;
  int64_t kept = 1;
  for (int d = 0; d < f->ins[0].rank; d++)
    if (!reduced[d])
      kept *= f->ins[0].dim[d];
  if (kept != f->os.count)
    return false;
  /* how many input elements each output element reduces (reduce_mean) */
  int64_t per_out = kept ? f->ins[0].count / kept : 0;
  if (kept == 0) {
    per_out = 1;
    for (int d = 0; d < f->ins[0].rank; d++)
      if (reduced[d])
        per_out *= f->ins[0].dim[d];
  }
  if (elem_type_is_float(f->in[0]->type))
    return fold_reduce_float(f, reduced, per_out);
  return fold_reduce_int(f, reduced, per_out);
}

/* ---- contractions, all as einsum ---- */

typedef struct {
  int nletters;
  char letter[LG_MAX_DIMS];
  int64_t extent[LG_MAX_DIMS];
  int out_letters;              /* the first out_letters letters index the output */
  int64_t stride[8][LG_MAX_DIMS]; /* per operand, per letter: flat stride (0: broadcast) */
} Einsum;

static int letter_of(Einsum *e, char c) {
  for (int l = 0; l < e->nletters; l++)
    if (e->letter[l] == c)
      return l;
  if (e->nletters == LG_MAX_DIMS)
    return -1;
  e->letter[e->nletters] = c;
  e->extent[e->nletters] = 1;
  return e->nletters++;
}

/* Sets up the letters of "ab,bc->ac": output letters first, extents from
 * the operands (an operand's extent 1 broadcasts, as matmul's batch dims),
 * and each operand's stride per letter (a repeated letter is a diagonal:
 * its strides add up). */
static bool einsum_setup(const Fold *f, const char *equation, Einsum *e) {
  const char *arrow = strstr(equation, "->");
  if (!arrow || f->nin > 8)
    return false;
  memset(e, 0, sizeof *e);
  for (const char *c = arrow + 2; *c; c++)
    if (letter_of(e, *c) < 0)
      return false;
  e->out_letters = e->nletters;
  if (e->out_letters != f->os.rank)
    return false;
  for (int l = 0; l < e->out_letters; l++)
    e->extent[l] = f->os.dim[l];
  const char *term = equation;
  for (int k = 0; k < f->nin; k++) {
    const char *end = k + 1 < f->nin ? strchr(term, ',') : arrow;
    if (!end || end > arrow || end - term != f->ins[k].rank || !f->in[k])
      return false;
    int64_t stride = 1;
    for (int d = f->ins[k].rank - 1; d >= 0; d--) {
      int l = letter_of(e, term[d]);
      int64_t ext = f->ins[k].dim[d];
      if (l < 0)
        return false;
      if (ext != 1) {
        if (e->extent[l] != 1 && e->extent[l] != ext)
          return false;
        e->extent[l] = ext;
        e->stride[k][l] += stride;
      }
      stride *= ext;
    }
    term = end + 1;
  }
  return true;
}

/* Sum over the non-output letters of the product of the operands. Floats
 * accumulate in double and round once; integers wrap. */
static bool einsum_eval(Fold *f, const Einsum *e) {
  Shape sum = {0, {0}, 1};
  if (e->nletters - e->out_letters > LG_MAX_RANK)
    return false;
  for (int l = e->out_letters; l < e->nletters; l++) {
    sum.dim[sum.rank++] = e->extent[l];
    sum.count *= e->extent[l];
  }
  if (sum.count > 0 && f->os.count > FOLD_MAX_WORK / sum.count)
    return false;
  bool is_float = elem_type_is_float(f->in[0]->type);
  void *data = new_data(f);
  int64_t oidx[LG_MAX_RANK] = {0};
  for (int64_t o = 0; o < f->os.count; o++, next_index(&f->os, oidx)) {
    int64_t sidx[LG_MAX_DIMS] = {0}, iacc = 0;
    double facc = 0;
    for (int64_t s = 0; s < sum.count; s++, next_index(&sum, sidx)) {
      double fp = 1;
      uint64_t ip = 1;
      for (int k = 0; k < f->nin; k++) {
        int64_t at = 0;
        for (int l = 0; l < e->nletters; l++)
          at += e->stride[k][l] * (l < e->out_letters ? oidx[l] : sidx[l - e->out_letters]);
        Num x = read_num(f->in[k], at);
        fp *= x.f;
        ip *= (uint64_t)x.i;
      }
      facc += fp;
      iacc = as_int64((uint64_t)iacc + ip);
    }
    if (!write_num(f->out->type, data, o, is_float ? num_f(facc) : num_i(iacc)))
      return false;
  }
  return commit_data(f, data);
}

/* matmul and its named relatives as einsum equations. NumPy matmul: a 1-D
 * operand is promoted (its 1 removed from the result); batch dims align
 * from the right and broadcast. */
static const char *contraction_equation(const Fold *f) {
  static const char batch[] = "ABCDEFGHIJKLMNOP";
  int ra = f->ins[0].rank, rb = f->ins[1].rank;
  switch (f->n->op) {
  case GOP_MATVEC: return "mk,k->m";
  case GOP_VECMAT: return "k,kn->n";
  case GOP_DOT: return "k,k->";
  case GOP_BATCH_MATMUL: return "bmk,bkn->bmn";
  case GOP_MATMUL: break;
  default: return NULL;
  }
  int nb = f->os.rank - (ra > 1) - (rb > 1), na = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
  if (nb < 0 || nb > 16 || na > nb || nbb > nb)
    return NULL;
  return arena_printf(f->g->arena, "%.*s%s,%.*s%s->%.*s%s%s", na, batch + nb - na, ra > 1 ? "mk" : "k", nbb,
                      batch + nb - nbb, rb > 1 ? "kn" : "k", nb, batch, ra > 1 ? "m" : "", rb > 1 ? "n" : "");
}

static bool fold_contract(Fold *f) {
  for (int k = 0; k < f->nin; k++)
    if (!f->in[k] || has_sym(f->in[k]) || f->in[k]->type != f->in[0]->type)
      return false;
  const char *eq;
  if (f->n->op == GOP_EINSUM) {
    const GraphAttr *a = find_attr(f->n, "equation", GA_STRING);
    eq = a ? a->s : NULL;
  } else {
    if (f->nin != 2)
      return false;
    eq = contraction_equation(f);
  }
  Einsum e;
  return eq && einsum_setup(f, eq, &e) && einsum_eval(f, &e);
}

/* ---- entry point ---- */

/* Reads the node's values and static shapes; false when something is not
 * a constant we can read or the output is not static. */
static bool fold_setup(Graph *g, GraphNode *n, Fold *f) {
  if ((int)n->op < 0 || n->op >= GOP_COUNT || n->noutputs != 1 || n->ninputs < 0)
    return false;
  f->g = g;
  f->n = n;
  f->nin = n->ninputs;
  f->in = arena_alloc(g->arena, (size_t)(n->ninputs + 1) * sizeof *f->in);
  f->ins = arena_alloc(g->arena, (size_t)(n->ninputs + 1) * sizeof *f->ins);
  f->out = GRAPH_VALUE(g, n->outputs[0]);
  /* a result that would overrun the constant budget runs at run time (8
   * bytes an element: symbolic elements are pointers) */
  if (!static_shape(f->out, &f->os) || f->os.count > FOLD_MAX_ELEMS || !graph_const_fits(g, f->os.count * 8))
    return false;
  int64_t in_elems = 0;
  for (int k = 0; k < n->ninputs; k++) {
    if (n->inputs[k] < 0)
      continue;
    const GraphValue *v = GRAPH_VALUE(g, n->inputs[k]);
    f->in[k] = v;
    if (v->kind != GV_CONST || !static_shape(v, &f->ins[k]) || v->count != f->ins[k].count)
      return false;
    if (v->count > 0 && !v->data && !v->sym)
      return false;
    if (v->sym && elem_type_is_float(v->type))
      return false;
    in_elems += v->count;
  }
  return f->os.count <= FOLD_MAX_EXPANDED || f->os.count <= FOLD_EXPANSION * in_elems;
}

bool graph_fold_node(Graph *g, GraphNode *n) {
  Fold f;
  if (!fold_setup(g, n, &f))
    return false;
  switch (op_class[n->op]) {
  case GC_UNARY:
  case GC_BINARY:
  case GC_TERNARY:
    return fold_elementwise(&f);
  case GC_LAYOUT:
    return fold_layout(&f);
  case GC_REDUCE:
    return fold_reduce(&f);
  case GC_CONTRACT:
    return fold_contract(&f);
  case GC_SOURCE:
    return fold_fill(&f);
  case GC_EXT:
    return n->op == GOP_WINOGRAD_FILTER_TRANSFORM && fold_winograd_filter(&f);
  /* GC_SHAPE (shape) never comes here: the builder gives its value
   * directly (add_shape_value), symbolic dims and all */
  default:
    return false;
  }
}
