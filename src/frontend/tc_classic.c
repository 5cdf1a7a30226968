/* tc_classic.c - from the classic Tensor Comprehensions syntax tree to IR
 * kernels, the same structured ops tc_sema.c builds from .tc specs.
 *
 * What TC means, and how it maps onto the IR:
 *  - Inputs are tensors with a shape of size names and integers; a scalar
 *    parameter (`float eps`) is a 0-d input tensor (passed by pointer).
 *  - Outputs are untyped: the first statement that writes one gives its
 *    rank (its indices), its extents (each index's range) and its element
 *    type (its value's). An index's range comes from an access that uses
 *    the bare index on a tensor whose shape is known (an input, or an output
 *    an earlier statement wrote), from the statement's `where i in 0:E`, or
 *    from a sliding window `I(w + r_k)` (window_range).
 *  - Each statement is one StructuredOp, run in order. Indices on the
 *    right-hand side only are reduced over (TC's `r_` prefix is a naming
 *    convention, not required). `=` writes and may not reduce; `op=` (+=,
 *    *=, min=, max=) combines the value with the output's current element
 *    (what the caller's buffer or an earlier statement holds); `op=!` first
 *    fills the output with the reduction's identity (0, 1, +inf, -inf or the
 *    integer type's limits) by an op of its own, then combines.
 *  - Values: C's operators and precedence, literals, casts `float(x)`,
 *    `int32(x)`, ..., TC's math builtins (table below), loop indices and
 *    size names as i64 values. Operands of different types convert as C's
 *    usual arithmetic conversions do (an integer meets a float: the float
 *    type; two floats or two integers: the wider), through scalar_ops.def's
 *    casts. A literal takes the type of the operand beside it.
 *  - A read in a branch of `?:` may index outside its tensor (`(rf - D >= 0)
 *    ? X(rf - D) : 0` in WaveNet): such reads are guarded (0 outside), since
 *    the branch that uses them is only taken inside.
 *  - Data-dependent indexing (`LUT(I(i, k), j)`) has no affine indexing
 *    map, so it is a located error; so are `where exists`, lets, and ranges
 *    that do not start at 0 or that differ from the accesses' range. */
#include "analysis/analysis.h"
#include "analysis/poly.h"
#include "frontend/tc_classic.h"

#include <math.h>
#include <string.h>

typedef struct {
  Arena *arena;
  Diag *diag;
  const CDef *def;
  Kernel *k;
  bool *known;        /* per tensor: shape and type known (inputs; outputs once written) */
  const CStmt *st;
  int out;            /* the tensor the statement writes */
  PtrVec dims;        /* Dim* */
  PtrVec operands;    /* Operand* */
  PtrVec nodes;       /* PayloadNode* */
  int branch;         /* depth inside ?: branches */
} Sema;

/* ---- names ---- */

static const struct {
  const char *name;
  ElemType type;
} type_names[] = {
    {"float", TY_F32},  {"float32", TY_F32}, {"double", TY_F64}, {"float64", TY_F64}, {"float16", TY_F16},
    {"half", TY_F16},   {"bool", TY_I1},     {"int8", TY_I8},    {"int16", TY_I16},   {"int32", TY_I32},
    {"int", TY_I32},    {"int64", TY_I64},   {"long", TY_I64},   {"uint8", TY_U8},    {"uint16", TY_U16},
    {"uint32", TY_U32}, {"uint64", TY_U64},
};

static bool type_named(const char *name, ElemType *out) {
  for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
    if (strcmp(type_names[i].name, name) == 0) {
      *out = type_names[i].type;
      return true;
    }
  return false;
}

/* TC's builtins (CUDA math names, with or without the f suffix) and the
 * scalar op each becomes; "rsqrt" and "fma" are two ops each (below), and
 * "min"/"max" pick the integer form on integer operands. */
static const struct {
  const char *name;
  ScalarOp op;
  int arity;
} builtins[] = {
    {"exp", SOP_EXP, 1},     {"log", SOP_LOG, 1},     {"tanh", SOP_TANH, 1},   {"sqrt", SOP_SQRT, 1},
    {"rsqrt", SOP_SQRT, 1},  {"fabs", SOP_ABSF, 1},   {"abs", SOP_ABSF, 1},    {"floor", SOP_FLOORF, 1},
    {"ceil", SOP_CEILF, 1},  {"round", SOP_ROUNDF, 1}, {"erf", SOP_ERF, 1},     {"sin", SOP_SIN, 1},
    {"cos", SOP_COS, 1},     {"tan", SOP_TAN, 1},     {"asin", SOP_ASIN, 1},   {"acos", SOP_ACOS, 1},
    {"atan", SOP_ATAN, 1},   {"sinh", SOP_SINH, 1},   {"cosh", SOP_COSH, 1},   {"asinh", SOP_ASINH, 1},
    {"acosh", SOP_ACOSH, 1}, {"atanh", SOP_ATANH, 1}, {"fmax", SOP_MAXF, 2},   {"fmin", SOP_MINF, 2},
    {"max", SOP_MAXF, 2},    {"min", SOP_MINF, 2},    {"pow", SOP_POWF, 2},    {"fma", SOP_ADDF, 3},
};

static int builtin_named(const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++) {
    size_t m = strlen(builtins[i].name);
    /* expf, fmaxf, ...: C's float spellings */
    if (strcmp(builtins[i].name, name) == 0 || (n == m + 1 && name[m] == 'f' && strncmp(builtins[i].name, name, m) == 0))
      return (int)i;
  }
  return -1;
}

static int find_tensor(Sema *s, const char *name) { return kernel_tensor_named(s->k, name); }

static int find_size(Sema *s, const char *name) { return kernel_size_named(s->k, name); }

static int find_dim(Sema *s, const char *name) {
  for (int i = 0; i < s->dims.len; i++)
    if (strcmp(((Dim *)s->dims.items[i])->name, name) == 0)
      return i;
  return -1;
}

static int dim_named(Sema *s, const char *name, Loc loc) {
  int d = find_dim(s, name);
  if (d >= 0)
    return d;
  if (s->dims.len == LG_MAX_DIMS)
    diag_error(s->diag, loc, "more than %d indices in one statement", LG_MAX_DIMS);
  Dim *dim = arena_alloc(s->arena, sizeof *dim);
  dim->name = name;
  dim->loc = loc;
  dim->extent_operand = -1;
  vec_push(s->arena, &s->dims, dim);
  return s->dims.len - 1;
}

/* ---- parameters ---- */

static void check_new_name(Sema *s, const char *name, Loc loc) {
  if (find_tensor(s, name) >= 0)
    diag_error(s->diag, loc, "'%s' is already declared as a tensor", name);
  if (find_size(s, name) >= 0)
    diag_error(s->diag, loc, "'%s' is already declared as a size", name);
  ElemType t;
  if (type_named(name, &t) || builtin_named(name) >= 0)
    diag_error(s->diag, loc, "'%s' is a type or builtin name; it cannot name a tensor", name);
}

static int size_symbol(Sema *s, const char *name, Loc loc) {
  int z = find_size(s, name);
  if (z >= 0)
    return z;
  if (find_tensor(s, name) >= 0)
    diag_error(s->diag, loc, "'%s' is a tensor, not a size", name);
  if (s->k->nsizes == LG_MAX_DIMS * 2)
    diag_error(s->diag, loc, "more than %d size names", LG_MAX_DIMS * 2);
  s->k->sizes[s->k->nsizes] = (SizeSym){.name = name, .loc = loc};
  return s->k->nsizes++;
}

static void declare_tensor(Sema *s, const CParam *x, bool is_output) {
  check_new_name(s, x->name, x->loc);
  TensorParam *p = &s->k->tensors[s->k->ntensors];
  p->name = x->name;
  p->loc = x->loc;
  p->is_output = is_output;
  p->shape = arena_alloc(s->arena, sizeof(AffineExpr *) * (size_t)(x->rank ? x->rank : 1));
  if (x->type) {
    if (!type_named(x->type, &p->type))
      diag_error(s->diag, x->type_loc,
                 "unknown type '%s' (TC's types: float, double, float16, float32, float64, bool, int8, int16, "
                 "int32, int64, uint8, uint16, uint32, uint64)",
                 x->type);
    p->rank = x->rank;
    for (int i = 0; i < x->rank; i++) {
      const CExpr *e = x->shape[i];
      if (e->kind == CE_NUM && e->ivalue > (INT64_C(1) << 40))
        diag_error(s->diag, e->loc, "an extent above 2^40");
      p->shape[i] = e->kind == CE_NUM ? affine_const(s->arena, e->ivalue)
                                      : affine_leaf(s->arena, AE_SIZE, size_symbol(s, e->name, e->loc), 0);
    }
    s->known[s->k->ntensors] = true;
  }
  s->k->ntensors++;
}

/* ---- index expressions: affine in indices, sizes and integers ---- */

/* Does e read a tensor (a data-dependent index)? */
static const CExpr *tensor_read_in(Sema *s, const CExpr *e) {
  if (e->kind == CE_APPLY && find_tensor(s, e->name) >= 0)
    return e;
  if (e->kind == CE_NAME && find_tensor(s, e->name) >= 0)
    return e;
  for (int i = 0; i < e->nargs; i++) {
    const CExpr *r = tensor_read_in(s, e->args[i]);
    if (r)
      return r;
  }
  return NULL;
}

static Loc start_of(const CExpr *e) {
  while ((e->kind == CE_BINARY || e->kind == CE_TERNARY) && e->nargs)
    e = e->args[0];
  return e->loc;
}

/* dims_ok: the loop indices of the statement may appear (an access), or not
 * (a range's bound). */
static AffineExpr *lower_index(Sema *s, const CExpr *e, bool dims_ok) {
  switch (e->kind) {
  case CE_NUM:
    if (e->is_float)
      diag_error(s->diag, e->loc, "an index must be an integer, not %s", e->text);
    return affine_const(s->arena, e->ivalue);
  case CE_NAME: {
    int z = find_size(s, e->name);
    if (z >= 0)
      return affine_leaf(s->arena, AE_SIZE, z, 0);
    if (find_tensor(s, e->name) >= 0)
      diag_error(s->diag, e->loc,
                 "data-dependent indexing is not supported: this index reads tensor '%s'; an index must be "
                 "affine in loop indices, sizes and integers",
                 e->name);
    if (!dims_ok)
      diag_error(s->diag, e->loc, "'%s' is not a size: a range's bound uses sizes and integers", e->name);
    return affine_leaf(s->arena, AE_DIM, dim_named(s, e->name, e->loc), 0);
  }
  case CE_APPLY: {
    const CExpr *r = tensor_read_in(s, e);
    if (r)
      diag_error(s->diag, e->loc,
                 "data-dependent indexing is not supported: this index reads tensor '%s'; an index must be "
                 "affine in loop indices, sizes and integers",
                 r->name);
    diag_error(s->diag, e->loc, "a call cannot be an index: an index is affine in loop indices, sizes and integers");
  }
  case CE_UNARY:
    if (strcmp(e->name, "-") == 0)
      return affine_binary(s->arena, AE_NEG, lower_index(s, e->args[0], dims_ok), NULL);
    if (strcmp(e->name, "+") == 0)
      return lower_index(s, e->args[0], dims_ok);
    break;
  case CE_BINARY: {
    const char *op = e->name;
    AffineKind kind = strcmp(op, "+") == 0   ? AE_ADD
                      : strcmp(op, "-") == 0 ? AE_SUB
                      : strcmp(op, "*") == 0 ? AE_MUL
                      : strcmp(op, "/") == 0 ? AE_FLOORDIV
                      : strcmp(op, "%") == 0 ? AE_MOD
                                             : AE_CONST;
    if (kind == AE_CONST)
      break;
    AffineExpr *l = lower_index(s, e->args[0], dims_ok), *r = lower_index(s, e->args[1], dims_ok);
    if (kind == AE_MUL && affine_has_dims(l) && affine_has_dims(r))
      diag_error(s->diag, e->loc, "non-affine index: one operand of '*' must be a size or an integer");
    if ((kind == AE_FLOORDIV || kind == AE_MOD) && affine_has_dims(r))
      diag_error(s->diag, e->loc, "non-affine index: the right operand of '%s' must be a size or an integer", op);
    if ((kind == AE_FLOORDIV || kind == AE_MOD) && r->kind == AE_CONST && r->value <= 0)
      diag_error(s->diag, e->loc, "the divisor must be positive");
    return affine_binary(s->arena, kind, l, r);
  }
  case CE_TERNARY:
    break;
  }
  const CExpr *r = tensor_read_in(s, e);
  if (r)
    diag_error(s->diag, start_of(e),
               "data-dependent indexing is not supported: this index reads tensor '%s'; an index must be affine in "
               "loop indices, sizes and integers",
               r->name);
  diag_error(s->diag, e->loc, "'%s' cannot appear in an index: an index is affine (+, -, *, / and %% of loop indices, "
             "sizes and integers)", e->name);
}

/* ---- payload nodes ---- */

static int add_node(Sema *s, PayloadNode n) {
  PayloadNode *p = arena_alloc(s->arena, sizeof *p);
  *p = n;
  vec_push(s->arena, &s->nodes, p);
  return s->nodes.len - 1;
}

static ElemType type_of(Sema *s, int n) { return ((PayloadNode *)s->nodes.items[n])->type; }

static int op1(Sema *s, ScalarOp op, ElemType t, int a, Loc loc) {
  return add_node(s, (PayloadNode){.kind = PN_OP, .op = op, .type = t, .nargs = 1, .args = {a}, .loc = loc});
}

static int op2(Sema *s, ScalarOp op, ElemType t, int a, int b, Loc loc) {
  return add_node(s, (PayloadNode){.kind = PN_OP, .op = op, .type = t, .nargs = 2, .args = {a, b}, .loc = loc});
}

static int constant(Sema *s, ElemType t, double f, int64_t i, Loc loc) {
  return add_node(s, (PayloadNode){.kind = PN_CONST, .type = t, .fvalue = f, .ivalue = i, .loc = loc});
}

/* x converted to t: C's conversion; bools convert as 0 and 1. */
static int convert(Sema *s, int x, ElemType t, Loc loc) {
  ElemType from = type_of(s, x);
  if (from == t)
    return x;
  if (t == TY_I1) { /* C's (bool)x: x != 0 */
    int zero = constant(s, from, 0.0, 0, loc);
    int eq = op2(s, elem_type_is_float(from) ? SOP_CMPF_OEQ : SOP_CMPI_EQ, TY_I1, x, zero, loc);
    return op2(s, SOP_XORI, TY_I1, eq, constant(s, TY_I1, 1.0, 1, loc), loc);
  }
  bool as_unsigned = from == TY_I1 || elem_type_is_unsigned(from);
  return op1(s, as_unsigned ? SOP_CAST_UNSIGNED : SOP_CAST_SIGNED, t, x, loc);
}

static int rank_of(ElemType t) {
  if (elem_type_is_float(t))
    return 100 + elem_type_bits(t);
  return elem_type_bits(t) * 2 + (elem_type_is_unsigned(t) ? 1 : 0);
}

/* C's usual arithmetic conversions, simplified: the float type if either
 * is one (the wider of two), else the wider integer (unsigned on a tie),
 * and bools are at least i32. */
static ElemType common_type(ElemType a, ElemType b) {
  ElemType t = rank_of(a) >= rank_of(b) ? a : b;
  return t == TY_I1 || (!elem_type_is_float(t) && elem_type_bits(t) < 32) ? TY_I32 : t;
}

static int lower_value(Sema *s, const CExpr *e, int want);

/* A literal's type: `want` when the literal fits it, else f32 or i64. */
static int lower_literal(Sema *s, const CExpr *e, int want) {
  if (e->is_float) {
    ElemType t = want >= 0 && elem_type_is_float((ElemType)want) ? (ElemType)want : TY_F32;
    if (t == TY_F32 && fabs(e->fvalue) > 3.4028235677973366e38)
      t = TY_F64;
    return constant(s, t, e->fvalue, 0, e->loc);
  }
  ElemType t = want >= 0 ? (ElemType)want : TY_I64;
  if (!elem_type_is_float(t) && (e->ivalue > elem_int_highest(t) || t == TY_U64 || t == TY_I1))
    t = e->ivalue <= 1 && t == TY_I1 ? TY_I1 : TY_I64;
  return constant(s, t, (double)e->ivalue, e->ivalue, e->loc);
}

/* Two operands of a binary operation, a literal taking the other's type;
 * both converted to their common type. */
static void lower_pair(Sema *s, const CExpr *a, const CExpr *b, int want, int *x, int *y) {
  if (a->kind == CE_NUM && b->kind != CE_NUM) {
    *y = lower_value(s, b, want);
    *x = lower_value(s, a, (int)type_of(s, *y));
  } else {
    *x = lower_value(s, a, want);
    *y = lower_value(s, b, (int)type_of(s, *x));
  }
  ElemType t = common_type(type_of(s, *x), type_of(s, *y));
  if (type_of(s, *x) == type_of(s, *y))
    t = type_of(s, *x);
  *x = convert(s, *x, t, a->loc);
  *y = convert(s, *y, t, b->loc);
}

static int to_float(Sema *s, int x, Loc loc) {
  return elem_type_is_float(type_of(s, x)) ? x : convert(s, x, TY_F32, loc);
}

static bool same_map(const Operand *o, int t, AffineExpr **map, int rank) {
  if (o->tensor != t)
    return false;
  for (int i = 0; i < rank; i++)
    if (!affine_equal(o->map[i], map[i]))
      return false;
  return true;
}

static int lower_read(Sema *s, const CExpr *e, int t) {
  TensorParam *p = &s->k->tensors[t];
  if (!s->known[t])
    diag_error(s->diag, e->loc, "'%s' is read before any statement writes it", p->name);
  int nidx = e->kind == CE_NAME ? 0 : e->nargs;
  if (nidx != p->rank)
    diag_error(s->diag, e->loc, "'%s' has rank %d but is indexed with %d %s", p->name, p->rank, nidx,
               nidx == 1 ? "index" : "indices");
  AffineExpr **map = arena_alloc(s->arena, sizeof(AffineExpr *) * (size_t)(p->rank ? p->rank : 1));
  Loc *locs = arena_alloc(s->arena, sizeof(Loc) * (size_t)(p->rank ? p->rank : 1));
  bool bare = true;
  for (int i = 0; i < nidx; i++) {
    map[i] = lower_index(s, e->args[i], true);
    locs[i] = start_of(e->args[i]);
    bare &= map[i]->kind == AE_DIM;
  }
  /* the element being written is the only one of the output a statement can read */
  if (t == s->out && !same_map(s->operands.items[0], t, map, p->rank))
    diag_error(s->diag, e->loc, "'%s' is written by this statement, so it can only be read at the element written",
               p->name);
  int o = -1;
  for (int i = 0; i < s->operands.len && o < 0; i++)
    if (same_map(s->operands.items[i], t, map, p->rank))
      o = i;
  if (o < 0) {
    Operand *x = arena_alloc(s->arena, sizeof *x);
    x->tensor = t;
    x->map = map;
    x->loc = e->loc;
    x->index_locs = locs;
    vec_push(s->arena, &s->operands, x);
    o = s->operands.len - 1;
  }
  Operand *x = s->operands.items[o];
  if (s->branch > 0 && !bare && !p->is_output)
    x->guarded = true; /* pad_value 0: never used, the branch is not taken there */
  return add_node(s, (PayloadNode){.kind = PN_READ, .type = p->type, .operand = o, .loc = e->loc});
}

static int lower_apply(Sema *s, const CExpr *e, int want) {
  int t = find_tensor(s, e->name);
  if (t >= 0)
    return lower_read(s, e, t);
  ElemType cast;
  if (type_named(e->name, &cast)) {
    if (e->nargs != 1)
      diag_error(s->diag, e->loc, "the cast %s(...) takes 1 value, found %d", e->name, e->nargs);
    int x = e->args[0]->kind == CE_NUM ? lower_literal(s, e->args[0], (int)cast) : lower_value(s, e->args[0], -1);
    return convert(s, x, cast, e->loc);
  }
  int b = builtin_named(e->name);
  if (b < 0)
    diag_error(s->diag, e->loc,
               "unknown function or tensor '%s' (builtins: exp, log, tanh, sqrt, rsqrt, fabs, floor, ceil, round, "
               "erf, sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, fmax, fmin, max, min, pow, "
               "fma, each also with an f suffix; casts: float(x), int32(x), ...)",
               e->name);
  if (e->nargs != builtins[b].arity)
    diag_error(s->diag, e->loc, "%s takes %d value%s, found %d", e->name, builtins[b].arity,
               builtins[b].arity == 1 ? "" : "s", e->nargs);
  ScalarOp op = builtins[b].op;
  if (builtins[b].arity == 1) {
    int x = to_float(s, lower_value(s, e->args[0], want), e->loc);
    ElemType ty = type_of(s, x);
    int r = op1(s, op, ty, x, e->loc);
    if (strncmp(e->name, "rsqrt", 5) == 0) /* 1 / sqrt(x) */
      r = op2(s, SOP_DIVF, ty, constant(s, ty, 1.0, 0, e->loc), r, e->loc);
    return r;
  }
  if (builtins[b].arity == 3) { /* fma(a, b, c) = a * b + c */
    int x, y;
    lower_pair(s, e->args[0], e->args[1], want, &x, &y);
    x = to_float(s, x, e->loc);
    y = to_float(s, y, e->loc);
    int z = convert(s, lower_value(s, e->args[2], (int)type_of(s, x)), type_of(s, x), e->loc);
    return op2(s, SOP_ADDF, type_of(s, x), op2(s, SOP_MULF, type_of(s, x), x, y, e->loc), z, e->loc);
  }
  int x, y;
  lower_pair(s, e->args[0], e->args[1], want, &x, &y);
  ElemType ty = type_of(s, x);
  bool is_minmax = strcmp(e->name, "max") == 0 || strcmp(e->name, "min") == 0;
  if (is_minmax && !elem_type_is_float(ty)) {
    bool u = elem_type_is_unsigned(ty);
    op = op == SOP_MAXF ? (u ? SOP_MAXUI : SOP_MAXSI) : (u ? SOP_MINUI : SOP_MINSI);
    return op2(s, op, ty, x, y, e->loc);
  }
  x = to_float(s, x, e->loc);
  y = to_float(s, y, e->loc);
  return op2(s, op, type_of(s, x), x, y, e->loc);
}

static int lower_binary(Sema *s, const CExpr *e, int want) {
  const char *o = e->name;
  Loc loc = e->loc;
  if (strcmp(o, "&&") == 0 || strcmp(o, "||") == 0) {
    int x = convert(s, lower_value(s, e->args[0], -1), TY_I1, loc);
    int y = convert(s, lower_value(s, e->args[1], -1), TY_I1, loc);
    return op2(s, o[0] == '&' ? SOP_ANDI : SOP_ORI, TY_I1, x, y, loc);
  }
  bool compare = strchr("<>=!", o[0]) != NULL;
  int x, y;
  lower_pair(s, e->args[0], e->args[1], compare ? -1 : want, &x, &y);
  ElemType t = type_of(s, x);
  bool f = elem_type_is_float(t), u = elem_type_is_unsigned(t) || t == TY_I1;
  if (compare) {
    ScalarOp lt = f ? SOP_CMPF_OLT : u ? SOP_CMPI_ULT : SOP_CMPI_SLT;
    ScalarOp gt = f ? SOP_CMPF_OGT : u ? SOP_CMPI_UGT : SOP_CMPI_SGT;
    ScalarOp eq = f ? SOP_CMPF_OEQ : SOP_CMPI_EQ;
    int one = -1;
    if (strcmp(o, "<") == 0)
      return op2(s, lt, TY_I1, x, y, loc);
    if (strcmp(o, ">") == 0)
      return op2(s, gt, TY_I1, x, y, loc);
    if (strcmp(o, "==") == 0)
      return op2(s, eq, TY_I1, x, y, loc);
    one = constant(s, TY_I1, 1.0, 1, loc);
    if (strcmp(o, "!=") == 0) /* C's != is true on NaN: not (x == y) */
      return op2(s, SOP_XORI, TY_I1, op2(s, eq, TY_I1, x, y, loc), one, loc);
    /* <= and >=: ordered for floats (false on NaN), as C's */
    bool le = strcmp(o, "<=") == 0;
    if (f)
      return op2(s, SOP_ORI, TY_I1, op2(s, le ? lt : gt, TY_I1, x, y, loc), op2(s, eq, TY_I1, x, y, loc), loc);
    return op2(s, SOP_XORI, TY_I1, op2(s, le ? gt : lt, TY_I1, x, y, loc), one, loc);
  }
  if (t == TY_I1) { /* arithmetic on bools is on ints, as in C */
    x = convert(s, x, TY_I32, loc);
    y = convert(s, y, TY_I32, loc);
    t = TY_I32;
    f = false;
    u = false;
  }
  switch (o[0]) {
  case '+':
    return op2(s, f ? SOP_ADDF : SOP_ADDI, t, x, y, loc);
  case '-':
    return op2(s, f ? SOP_SUBF : SOP_SUBI, t, x, y, loc);
  case '*':
    return op2(s, f ? SOP_MULF : SOP_MULI, t, x, y, loc);
  case '/':
    return op2(s, f ? SOP_DIVF : u ? SOP_DIVIU : SOP_DIVIS, t, x, y, loc);
  default:
    diag_error(s->diag, loc, "the remainder '%%' of values is not supported yet (in indices it is)");
  }
}

static int lower_value(Sema *s, const CExpr *e, int want) {
  switch (e->kind) {
  case CE_NUM:
    return lower_literal(s, e, want);
  case CE_NAME: {
    int t = find_tensor(s, e->name);
    if (t >= 0)
      return lower_read(s, e, t);
    int z = find_size(s, e->name);
    if (z >= 0)
      return add_node(s, (PayloadNode){.kind = PN_SIZE, .type = TY_I64, .size = z, .loc = e->loc});
    ElemType ty;
    if (type_named(e->name, &ty) || builtin_named(e->name) >= 0)
      diag_error(s->diag, e->loc, "'%s' is a type or a function; call it with (...)", e->name);
    int d = dim_named(s, e->name, e->loc);
    return add_node(s, (PayloadNode){.kind = PN_INDEX, .type = TY_I64, .dim = d, .loc = e->loc});
  }
  case CE_APPLY:
    return lower_apply(s, e, want);
  case CE_UNARY: {
    int x = lower_value(s, e->args[0], want);
    ElemType t = type_of(s, x);
    if (e->name[0] == '+')
      return x;
    if (e->name[0] == '!')
      return op2(s, SOP_XORI, TY_I1, convert(s, x, TY_I1, e->loc), constant(s, TY_I1, 1.0, 1, e->loc), e->loc);
    if (e->args[0]->kind == CE_NUM) { /* -1, -1e-5: a negative literal */
      PayloadNode *n = s->nodes.items[x];
      n->fvalue = -n->fvalue;
      n->ivalue = -n->ivalue;
      if (t == TY_I1 || elem_type_is_unsigned(t))
        n->type = TY_I64;
      return x;
    }
    if (elem_type_is_float(t))
      return op1(s, SOP_NEGF, t, x, e->loc);
    if (t == TY_I1 || elem_type_bits(t) < 32) {
      x = convert(s, x, TY_I32, e->loc);
      t = TY_I32;
    }
    return op2(s, SOP_SUBI, t, constant(s, t, 0.0, 0, e->loc), x, e->loc);
  }
  case CE_BINARY:
    return lower_binary(s, e, want);
  case CE_TERNARY: {
    int c = convert(s, lower_value(s, e->args[0], -1), TY_I1, e->loc);
    s->branch++;
    int x, y;
    lower_pair(s, e->args[1], e->args[2], want, &x, &y);
    s->branch--;
    return add_node(s, (PayloadNode){.kind = PN_OP, .op = SOP_SELECT, .type = type_of(s, x), .nargs = 3,
                                     .args = {c, x, y}, .loc = e->loc});
  }
  }
  diag_bug(s->diag, "unknown expression kind %d", (int)e->kind);
}

/* ---- statements ---- */

static void *copy_vec(Sema *s, const PtrVec *v, size_t elem) {
  char *out = arena_alloc(s->arena, elem * (size_t)(v->len ? v->len : 1));
  for (int i = 0; i < v->len; i++)
    memcpy(out + elem * (size_t)i, v->items[i], elem);
  return out;
}

static const CRange *range_of(const CStmt *st, const char *dim) {
  for (int i = 0; i < st->nranges; i++)
    if (strcmp(st->ranges[i].dim, dim) == 0)
      return &st->ranges[i];
  return NULL;
}

/* The range of dim d from a where clause or a bare use on a tensor of known
 * shape other than the output being inferred; NULL when neither exists. */
static AffineExpr *bare_range(Sema *s, int d) {
  const CRange *r = range_of(s->st, ((const Dim *)s->dims.items[d])->name);
  if (r)
    return lower_index(s, r->hi, false);
  for (int o = 1; o < s->operands.len; o++) {
    const Operand *x = s->operands.items[o];
    const TensorParam *q = &s->k->tensors[x->tensor];
    for (int j = 0; j < q->rank; j++)
      if (affine_is_dim(x->map[j], d))
        return q->shape[j];
  }
  return NULL;
}

/* TC's range inference for the sliding-window form `I(h + r_k)` (a conv):
 * the largest range of dim d that keeps d + c (c >= 0) or d + r (r a dim
 * of known range R) inside an extent E: 0:E-c, or 0:E-R+1. */
static AffineExpr *window_range(Sema *s, int d) {
  for (int o = 1; o < s->operands.len; o++) {
    const Operand *x = s->operands.items[o];
    const TensorParam *q = &s->k->tensors[x->tensor];
    for (int j = 0; j < q->rank; j++) {
      const AffineExpr *e = x->map[j];
      if (e->kind != AE_ADD)
        continue;
      const AffineExpr *other = affine_is_dim(e->lhs, d) ? e->rhs : affine_is_dim(e->rhs, d) ? e->lhs : NULL;
      if (!other)
        continue;
      if (other->kind == AE_CONST && other->value >= 0)
        return affine_binary(s->arena, AE_SUB, q->shape[j], affine_const(s->arena, other->value));
      if (other->kind == AE_DIM && other->index != d) {
        AffineExpr *r = bare_range(s, other->index);
        if (r)
          return affine_binary(s->arena, AE_ADD, affine_binary(s->arena, AE_SUB, q->shape[j], r),
                               affine_const(s->arena, 1));
      }
    }
  }
  return NULL;
}

/* The first statement writing an output gives its shape: each index's
 * range, from its `where`, from a bare use on a tensor of known shape, or
 * from a sliding window (window_range). */
static void infer_output_shape(Sema *s, int nlhs) {
  TensorParam *p = &s->k->tensors[s->out];
  p->rank = nlhs;
  p->shape = arena_alloc(s->arena, sizeof(AffineExpr *) * (size_t)(nlhs ? nlhs : 1));
  for (int i = 0; i < nlhs; i++) {
    const Dim *dim = s->dims.items[i];
    p->shape[i] = bare_range(s, i);
    if (!p->shape[i])
      p->shape[i] = window_range(s, i);
    if (!p->shape[i])
      diag_error(s->diag, s->st->idx_loc[i],
                 "cannot infer the range of '%s': no tensor of known shape is indexed by '%s' alone or by '%s + "
                 "k' in this statement; add 'where %s in 0:N'",
                 dim->name, dim->name, dim->name, dim->name);
  }
  s->known[s->out] = true;
}

/* The op that fills the output with the reduction's identity (op=!). */
static StructuredOp lower_init(Sema *s, const StructuredOp *main, int nlhs, ScalarOp combine) {
  StructuredOp op = {.loc = s->st->loc, .ndims = nlhs, .noperands = 1, .nnodes = 1, .nyields = 1};
  op.dims = arena_alloc(s->arena, sizeof(Dim) * (size_t)(nlhs ? nlhs : 1));
  for (int i = 0; i < nlhs; i++) {
    op.dims[i] = main->dims[i];
    op.dims[i].kind = ITER_PARALLEL;
  }
  op.operands = arena_alloc(s->arena, sizeof(Operand));
  op.operands[0] = main->operands[0];
  op.operands[0].guarded = false;
  ElemType t = s->k->tensors[s->out].type;
  PayloadNode n = {.kind = PN_CONST, .type = t, .loc = s->st->op_loc};
  bool f = elem_type_is_float(t);
  switch (combine) {
  case SOP_ADDF:
  case SOP_ADDI:
    break;
  case SOP_MULF:
  case SOP_MULI:
    n.fvalue = 1.0;
    n.ivalue = 1;
    break;
  case SOP_MAXF:
  case SOP_MAXSI:
  case SOP_MAXUI:
    n.fvalue = -INFINITY;
    n.ivalue = f ? 0 : elem_int_lowest(t);
    break;
  default:
    n.fvalue = INFINITY;
    n.ivalue = f ? 0 : elem_int_highest(t);
    break;
  }
  if (t == TY_F16 && isinf(n.fvalue))
    n.fvalue = n.fvalue > 0 ? 65504.0 : -65504.0;
  op.nodes = arena_alloc(s->arena, sizeof(PayloadNode));
  op.nodes[0] = n;
  op.yields = arena_alloc(s->arena, sizeof(Yield));
  op.yields[0] = (Yield){.operand = 0, .value = 0};
  return op;
}

static ScalarOp combine_op(const char *assign, ElemType t) {
  bool f = elem_type_is_float(t), u = elem_type_is_unsigned(t);
  switch (assign[0]) {
  case '+':
    return f ? SOP_ADDF : SOP_ADDI;
  case '*':
    return f ? SOP_MULF : SOP_MULI;
  default:
    if (strcmp(assign, "max=") == 0)
      return f ? SOP_MAXF : u ? SOP_MAXUI : SOP_MAXSI;
    return f ? SOP_MINF : u ? SOP_MINUI : SOP_MINSI;
  }
}

static void lower_stmt(Sema *s, const CStmt *st, PtrVec *ops) {
  s->st = st;
  memset(&s->dims, 0, sizeof s->dims);
  memset(&s->operands, 0, sizeof s->operands);
  memset(&s->nodes, 0, sizeof s->nodes);
  s->out = find_tensor(s, st->lhs);
  if (s->out < 0)
    diag_error(s->diag, st->loc, "'%s' is not a tensor of def '%s' (declare outputs in '-> (...)')", st->lhs,
               s->def->name);
  TensorParam *p = &s->k->tensors[s->out];
  if (!p->is_output)
    diag_error(s->diag, st->loc, "'%s' is an input; only outputs can be written", st->lhs);
  int nlhs = st->nidx < 0 ? 0 : st->nidx;
  if (s->known[s->out] && nlhs != p->rank)
    diag_error(s->diag, st->loc, "'%s' has rank %d but is written with %d %s", p->name, p->rank, nlhs,
               nlhs == 1 ? "index" : "indices");
  /* the written element is operand 0; its indices are dims 0..nlhs-1 */
  AffineExpr **map = arena_alloc(s->arena, sizeof(AffineExpr *) * (size_t)(nlhs ? nlhs : 1));
  for (int i = 0; i < nlhs; i++) {
    const char *name = st->idx[i];
    ElemType ty;
    if (find_dim(s, name) >= 0)
      diag_error(s->diag, st->idx_loc[i], "index '%s' appears twice in the output", name);
    if (find_size(s, name) >= 0 || find_tensor(s, name) >= 0 || type_named(name, &ty))
      diag_error(s->diag, st->idx_loc[i], "'%s' is not an index name (it names a %s)", name,
                 find_size(s, name) >= 0 ? "size" : find_tensor(s, name) >= 0 ? "tensor" : "type");
    map[i] = affine_leaf(s->arena, AE_DIM, dim_named(s, name, st->idx_loc[i]), 0);
  }
  Operand *w = arena_alloc(s->arena, sizeof *w);
  w->tensor = s->out;
  w->map = map;
  w->loc = st->loc;
  w->index_locs = st->idx_loc;
  vec_push(s->arena, &s->operands, w);

  int value = lower_value(s, st->rhs, s->known[s->out] ? (int)p->type : -1);
  for (int i = 0; i < st->nranges; i++) {
    const CRange *r = &st->ranges[i];
    if (find_dim(s, r->dim) < 0)
      diag_error(s->diag, r->loc, "'%s' is not an index of this statement", r->dim);
    if (r->lo->kind != CE_NUM || r->lo->is_float || r->lo->ivalue != 0)
      diag_error(s->diag, r->lo->loc, "lgen supports ranges that start at 0 (where %s in 0:N)", r->dim);
    for (int j = 0; j < i; j++)
      if (strcmp(st->ranges[j].dim, r->dim) == 0)
        diag_error(s->diag, r->loc, "'%s' has two ranges", r->dim);
  }
  if (!s->known[s->out]) {
    infer_output_shape(s, nlhs);
    p->type = type_of(s, value);
  }
  value = convert(s, value, p->type, st->rhs->loc);
  ScalarOp combine = SOP_COUNT;
  if (strcmp(st->op, "=") != 0) {
    combine = combine_op(st->op, p->type);
    int acc = add_node(s, (PayloadNode){.kind = PN_READ, .type = p->type, .operand = 0, .loc = st->loc});
    value = op2(s, combine, p->type, acc, value, st->op_loc);
  }

  StructuredOp op = {.loc = st->loc};
  op.ndims = s->dims.len;
  op.dims = copy_vec(s, &s->dims, sizeof(Dim));
  op.noperands = s->operands.len;
  op.operands = copy_vec(s, &s->operands, sizeof(Operand));
  op.nnodes = s->nodes.len;
  op.nodes = copy_vec(s, &s->nodes, sizeof(PayloadNode));
  op.nyields = 1;
  op.yields = arena_alloc(s->arena, sizeof(Yield));
  op.yields[0] = (Yield){.operand = 0, .value = value};
  for (int d = 0; d < op.ndims; d++) {
    op.dims[d].kind = d < nlhs ? ITER_PARALLEL : ITER_REDUCTION;
    if (d >= nlhs && combine == SOP_COUNT)
      diag_error(s->diag, op.dims[d].loc,
                 "'%s' does not index '%s', so this statement reduces over it; write a reduction (+=!, +=, *=!, "
                 "min=!, max=!, ...) instead of '='",
                 op.dims[d].name, p->name);
  }
  for (int d = nlhs; d < op.ndims; d++) {
    bool bare = false;
    for (int o = 0; o < op.noperands && !bare; o++)
      for (int j = 0; j < s->k->tensors[op.operands[o].tensor].rank && !bare; j++)
        bare = affine_is_dim(op.operands[o].map[j], d);
    if (!bare)
      diag_error(s->diag, op.dims[d].loc,
                 "'%s' has no range: no tensor is indexed by '%s' alone in this statement (a 'where' range "
                 "bounds only an output's index)",
                 op.dims[d].name, op.dims[d].name);
  }
  infer_domain(s->diag, s->arena, s->k, &op);
  for (int i = 0; i < st->nranges; i++) {
    const CRange *r = &st->ranges[i];
    const Dim *dim = &op.dims[find_dim(s, r->dim)];
    AffineExpr *hi = lower_index(s, r->hi, false);
    Poly *diff = poly_add(s->arena, poly_from_affine(s->arena, hi), poly_from_affine(s->arena, dim->extent), -1);
    if (!poly_is_zero(diff))
      diag_error(s->diag, r->hi->loc,
                 "this range of '%s' differs from the one its accesses give; lgen supports 'where' ranges equal "
                 "to it (a narrower or wider range is not supported yet)",
                 r->dim);
  }
  if (st->bang) {
    StructuredOp *init = arena_alloc(s->arena, sizeof *init);
    *init = lower_init(s, &op, nlhs, combine);
    vec_push(s->arena, ops, init);
  }
  StructuredOp *keep = arena_alloc(s->arena, sizeof *keep);
  *keep = op;
  vec_push(s->arena, ops, keep);
}

static Kernel *lower_def(Sema *s, const CDef *d) {
  Kernel *k = arena_alloc(s->arena, sizeof *k);
  s->k = k;
  s->def = d;
  k->name = d->name;
  k->loc = d->loc;
  k->tensors = arena_alloc(s->arena, sizeof(TensorParam) * (size_t)(d->nins + d->nouts));
  k->sizes = arena_alloc(s->arena, sizeof(SizeSym) * LG_MAX_DIMS * 2);
  k->attrs = arena_alloc(s->arena, sizeof(AttrParam));
  s->known = arena_alloc(s->arena, sizeof(bool) * (size_t)(d->nins + d->nouts));
  for (int i = 0; i < d->nins; i++)
    declare_tensor(s, &d->ins[i], false);
  for (int i = 0; i < d->nouts; i++)
    declare_tensor(s, &d->outs[i], true);
  PtrVec ops = {0};
  for (int i = 0; i < d->nstmts; i++)
    lower_stmt(s, &d->stmts[i], &ops);
  for (int t = 0; t < k->ntensors; t++)
    if (k->tensors[t].is_output && !s->known[t])
      diag_error(s->diag, k->tensors[t].loc, "output '%s' is never written, so its shape is unknown",
                 k->tensors[t].name);
  k->nops = ops.len;
  k->ops = copy_vec(s, &ops, sizeof(StructuredOp));
  return k;
}

void tc_classic_lower(const CFile *file, Module *module, Arena *arena, Diag *diag) {
  Sema s = {.arena = arena, .diag = diag};
  for (int i = 0; i < file->defs.len; i++) {
    const CDef *d = file->defs.items[i];
    for (int j = 0; j < module->kernels.len; j++) {
      const Kernel *other = module->kernels.items[j];
      if (strcmp(other->name, d->name) == 0)
        diag_error(diag, d->loc, "def '%s' is defined twice (first at %s:%d)", d->name, other->loc.src->name,
                   other->loc.line);
    }
    vec_push(arena, &module->kernels, lower_def(&s, d));
  }
}
