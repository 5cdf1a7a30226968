/* tc_sema.c - from the .tc syntax tree to IR kernels.
 *
 * Name resolution follows upstream (tc-format.md section 5): in a shape every
 * name is a size symbol; in a comprehension a name is an attribute, else a
 * dim already seen, else a size symbol, else a new dim (numbered in order of
 * first appearance, LHS first, a reduction list before its op's arguments).
 *
 * Decisions lgen makes where upstream is sloppy:
 *  - A dim is a reduction iff it does not index the outputs, whether or not a
 *    `<...>` list names it (upstream conv specs sum over `c` unlisted).
 *  - The accumulator dialect is decided per reduction op: if none of its
 *    arguments reads the tensor being written, the old implicit dialect is
 *    meant and the output's current value becomes the first argument.
 *  - One tensor may be read through several different index tuples (each is
 *    its own operand); upstream rejects that.
 *  - Several comprehensions in one def run in order (upstream rejects). */
#include "analysis/analysis.h"
#include "analysis/poly.h"
#include "frontend/tc.h"

#include <math.h>
#include <string.h>

typedef struct {
  Arena *arena;
  Diag *diag;
  const AstDef *def;
  Kernel *k;
  /* per comprehension */
  const AstComprehension *comp;
  PtrVec dims;     /* Dim* */
  PtrVec operands; /* Operand* */
  PtrVec nodes;    /* PayloadNode* */
  bool listed[LG_MAX_DIMS]; /* dim named in some <...> list */
} Sema;

/* ---- kernel parameters ---- */

/* Upstream lexes `w-kw` as one identifier; almost always a subtraction was meant. */
static void warn_hyphen(Sema *s, const char *name, Loc loc) {
  if (!strchr(name, '-'))
    return;
  StrBuf spaced = {0};
  for (const char *p = name; *p; p++)
    sb_puts(&spaced, *p == '-' ? " - " : (char[2]){*p, 0});
  diag_warning(s->diag, loc, "'%s' is a single name: '-' is an identifier character in .tc; write '%s' to subtract",
               name, sb_cstr(&spaced));
  sb_free(&spaced);
}

static void check_new_name(Sema *s, const char *name, Loc loc) {
  for (int i = 0; i < s->k->ntensors; i++)
    if (strcmp(s->k->tensors[i].name, name) == 0)
      diag_error(s->diag, loc, "'%s' is already declared as a tensor", name);
  for (int i = 0; i < s->k->nsizes; i++)
    if (strcmp(s->k->sizes[i].name, name) == 0)
      diag_error(s->diag, loc, "'%s' is already declared as a size symbol", name);
  for (int i = 0; i < s->k->nattrs; i++)
    if (strcmp(s->k->attrs[i].name, name) == 0)
      diag_error(s->diag, loc, "'%s' is already declared as an attribute", name);
}

static int size_symbol(Sema *s, const char *name, Loc loc) {
  for (int i = 0; i < s->k->nsizes; i++)
    if (strcmp(s->k->sizes[i].name, name) == 0)
      return i;
  for (int i = 0; i < s->k->ntensors; i++)
    if (strcmp(s->k->tensors[i].name, name) == 0)
      diag_error(s->diag, loc, "'%s' is a tensor, not a size", name);
  if (s->k->nsizes == LG_MAX_DIMS * 2)
    diag_error(s->diag, loc, "more than %d size symbols", LG_MAX_DIMS * 2);
  warn_hyphen(s, name, loc);
  s->k->sizes[s->k->nsizes] = (SizeSym){.name = name, .loc = loc};
  return s->k->nsizes++;
}

static AffineExpr *lower_shape(Sema *s, const AstIndex *e) {
  switch (e->kind) {
  case AX_INT:
    return affine_const(s->arena, e->value);
  case AX_NAME:
    return affine_leaf(s->arena, AE_SIZE, size_symbol(s, e->name, e->loc), 0);
  case AX_INDEXED:
    diag_error(s->diag, e->loc, "a shape cannot use an attribute ('%s[...]'); use a size symbol", e->name);
  case AX_NEG:
    return affine_binary(s->arena, AE_NEG, lower_shape(s, e->lhs), NULL);
  default: {
    static const AffineKind kinds[] = {[AX_ADD] = AE_ADD,           [AX_SUB] = AE_SUB,
                                       [AX_MUL] = AE_MUL,           [AX_FLOORDIV] = AE_FLOORDIV,
                                       [AX_CEILDIV] = AE_CEILDIV,   [AX_MOD] = AE_MOD};
    AffineExpr *l = lower_shape(s, e->lhs), *r = lower_shape(s, e->rhs);
    if ((e->kind == AX_FLOORDIV || e->kind == AX_CEILDIV || e->kind == AX_MOD) && r->kind == AE_CONST &&
        r->value <= 0)
      diag_error(s->diag, e->loc, "the divisor must be positive");
    return affine_binary(s->arena, kinds[e->kind], l, r);
  }
  }
}

static void lower_tensor(Sema *s, const AstTensorDef *t, bool is_output) {
  check_new_name(s, t->name, t->loc);
  TensorParam *p = &s->k->tensors[s->k->ntensors];
  p->name = t->name;
  p->loc = t->loc;
  p->is_output = is_output;
  if (!elem_type_parse(t->type, &p->type))
    diag_error(s->diag, t->type_loc, "unknown element type '%s' (expected one of %s)", t->type, elem_type_names());
  p->rank = t->rank;
  p->shape = arena_alloc(s->arena, sizeof(AffineExpr *) * (size_t)(t->rank ? t->rank : 1));
  s->k->ntensors++; /* visible for the name checks below */
  int64_t elements = 1;
  for (int i = 0; i < t->rank; i++) {
    p->shape[i] = lower_shape(s, t->shape[i]);
    Poly *value = poly_from_affine(s->arena, p->shape[i]);
    if (value && (value->nterms == 0 || (value->nterms == 1 && value->terms[0].degree == 0))) {
      int64_t c = value->nterms ? value->terms[0].coef : 0;
      if (c < 0)
        diag_error(s->diag, t->shape[i]->loc, "an extent cannot be negative (this one is %lld)", (long long)c);
      if (c > 0 && elements > (INT64_C(1) << 62) / c)
        diag_error(s->diag, t->shape[i]->loc, "'%s' would have more than 2^62 elements", t->name);
      elements *= c ? c : 1;
    }
  }
}

static void lower_attr(Sema *s, const AstAttrDef *a) {
  check_new_name(s, a->name, a->loc);
  AttrParam *p = &s->k->attrs[s->k->nattrs];
  p->name = a->name;
  p->loc = a->loc;
  p->optional = a->optional;
  p->is_array = a->is_array;
  p->ndims = a->ndims;
  /* u32 too (its values fit the int64 index arithmetic; u64's do not) */
  if (!elem_type_parse(a->type, &p->type) ||
      !(p->type == TY_F32 || p->type == TY_F64 || p->type == TY_I32 || p->type == TY_I64 || p->type == TY_U32))
    diag_error(s->diag, a->type_loc, "unsupported attribute element type '%s' (expected f32, f64, i32, i64 or u32)",
               a->type);
  p->count = a->is_array ? -1 : 1;
  for (int i = 0; i < a->ndims; i++) {
    if (a->dims[i] <= 0)
      diag_error(s->diag, a->type_loc, "an attribute dimension must be positive");
    if (p->count > INT32_MAX / a->dims[i])
      diag_error(s->diag, a->type_loc, "attribute '%s' has too many elements", a->name);
    p->dims[i] = a->dims[i];
    p->count *= a->dims[i];
  }
  s->k->nattrs++;
}

/* ---- index expressions inside a comprehension ---- */

static int find_attr(Sema *s, const char *name) {
  for (int i = 0; i < s->k->nattrs; i++)
    if (strcmp(s->k->attrs[i].name, name) == 0)
      return i;
  return -1;
}

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
    diag_error(s->diag, loc, "more than %d dims in one comprehension", LG_MAX_DIMS);
  for (int i = 0; i < s->k->ntensors; i++)
    if (strcmp(s->k->tensors[i].name, name) == 0)
      diag_error(s->diag, loc, "'%s' is a tensor; it cannot be used as an index", name);
  warn_hyphen(s, name, loc);
  Dim *dim = arena_alloc(s->arena, sizeof *dim);
  dim->name = name;
  dim->loc = loc;
  dim->extent_operand = -1;
  vec_push(s->arena, &s->dims, dim);
  return s->dims.len - 1;
}

static AffineExpr *attr_use(Sema *s, const AstIndex *e, int a) {
  const AttrParam *p = &s->k->attrs[a];
  if (elem_type_is_float(p->type))
    diag_error(s->diag, e->loc, "attribute '%s' is %s; index expressions need integer attributes", p->name,
               elem_type_name(p->type));
  if (e->kind == AX_NAME) {
    if (p->ndims || p->is_array)
      diag_error(s->diag, e->loc, "attribute '%s' has several elements; pick one with '%s[i]'", p->name, p->name);
    return affine_leaf(s->arena, AE_ATTR, a, 0);
  }
  int want = p->is_array ? 1 : p->ndims;
  if (e->nsubs != want)
    diag_error(s->diag, e->loc, "number of indices mismatch: attribute '%s' takes %d, found %d", p->name, want,
               e->nsubs);
  int64_t flat = 0;
  for (int i = 0; i < e->nsubs; i++) {
    if (!p->is_array && e->subs[i] >= p->dims[i])
      diag_error(s->diag, e->loc, "index %lld is out of range for attribute '%s' (dimension %d has %lld elements)",
                 (long long)e->subs[i], p->name, i, (long long)p->dims[i]);
    if (p->is_array && e->subs[i] > INT32_MAX)
      diag_error(s->diag, e->loc, "attribute index too large");
    flat = p->is_array ? e->subs[i] : flat * p->dims[i] + e->subs[i];
  }
  return affine_leaf(s->arena, AE_ATTR, a, (int)flat);
}

static AffineExpr *lower_index(Sema *s, const AstIndex *e) {
  switch (e->kind) {
  case AX_INT:
    return affine_const(s->arena, e->value);
  case AX_NAME: {
    int a = find_attr(s, e->name);
    if (a >= 0)
      return attr_use(s, e, a);
    int d = find_dim(s, e->name);
    if (d >= 0)
      return affine_leaf(s->arena, AE_DIM, d, 0);
    int z = find_size(s, e->name);
    if (z >= 0)
      return affine_leaf(s->arena, AE_SIZE, z, 0);
    return affine_leaf(s->arena, AE_DIM, dim_named(s, e->name, e->loc), 0);
  }
  case AX_INDEXED: {
    int a = find_attr(s, e->name);
    if (a < 0)
      diag_error(s->diag, e->loc, "'%s' is not an attribute, so it cannot be indexed with '[...]'", e->name);
    return attr_use(s, e, a);
  }
  case AX_NEG:
    return affine_binary(s->arena, AE_NEG, lower_index(s, e->lhs), NULL);
  case AX_MUL: {
    AffineExpr *l = lower_index(s, e->lhs), *r = lower_index(s, e->rhs);
    if (affine_has_dims(l) && affine_has_dims(r))
      diag_error(s->diag, e->loc,
                 "non-affine expression: one operand of '*' must be a constant, a size or an attribute");
    return affine_binary(s->arena, AE_MUL, l, r);
  }
  case AX_FLOORDIV:
  case AX_CEILDIV:
  case AX_MOD: {
    AffineExpr *l = lower_index(s, e->lhs), *r = lower_index(s, e->rhs);
    if (affine_has_dims(r))
      diag_error(s->diag, e->loc,
                 "non-affine expression: the right operand of floordiv, ceildiv and mod must be a constant, "
                 "a size or an attribute");
    if (r->kind == AE_CONST && r->value <= 0)
      diag_error(s->diag, e->loc, "the divisor must be positive");
    AffineKind kind = e->kind == AX_FLOORDIV ? AE_FLOORDIV : e->kind == AX_CEILDIV ? AE_CEILDIV : AE_MOD;
    return affine_binary(s->arena, kind, l, r);
  }
  case AX_ADD:
  case AX_SUB: {
    AffineExpr *l = lower_index(s, e->lhs);
    return affine_binary(s->arena, e->kind == AX_ADD ? AE_ADD : AE_SUB, l, lower_index(s, e->rhs));
  }
  }
  diag_bug(s->diag, "unknown index kind %d", (int)e->kind);
}

/* ---- operands and payload ---- */

static int find_tensor(Sema *s, const char *name) { return kernel_tensor_named(s->k, name); }

static AffineExpr **lower_use_map(Sema *s, const AstTensorUse *u, int t) {
  const TensorParam *p = &s->k->tensors[t];
  if (u->nidx != p->rank)
    diag_error(s->diag, u->loc, "'%s' has rank %d but is indexed with %d %s", p->name, p->rank, u->nidx,
               u->nidx == 1 ? "index" : "indices");
  AffineExpr **map = arena_alloc(s->arena, sizeof(AffineExpr *) * (size_t)(p->rank ? p->rank : 1));
  for (int i = 0; i < u->nidx; i++)
    map[i] = lower_index(s, u->idx[i]);
  return map;
}

static bool same_map(const Operand *o, int t, AffineExpr **map, int rank) {
  if (o->tensor != t)
    return false;
  for (int i = 0; i < rank; i++)
    if (!affine_equal(o->map[i], map[i]))
      return false;
  return true;
}

/* The operand reading tensor t through map, created on first use. */
static int operand_for(Sema *s, int t, AffineExpr **map, Loc loc, Loc *index_locs) {
  for (int i = 0; i < s->operands.len; i++)
    if (same_map(s->operands.items[i], t, map, s->k->tensors[t].rank))
      return i;
  Operand *o = arena_alloc(s->arena, sizeof *o);
  o->tensor = t;
  o->map = map;
  o->loc = loc;
  o->index_locs = index_locs;
  vec_push(s->arena, &s->operands, o);
  return s->operands.len - 1;
}

/* Where an index expression starts (a binary node's own loc is its operator). */
static Loc start_of(const AstIndex *e) {
  while (e->lhs && e->kind != AX_NEG)
    e = e->lhs;
  return e->loc;
}

static Loc *index_locs_of(Sema *s, const AstTensorUse *u) {
  Loc *locs = arena_alloc(s->arena, sizeof(Loc) * (size_t)(u->nidx ? u->nidx : 1));
  for (int i = 0; i < u->nidx; i++)
    locs[i] = start_of(u->idx[i]);
  return locs;
}

static int add_node(Sema *s, PayloadNode n) {
  PayloadNode *p = arena_alloc(s->arena, sizeof *p);
  *p = n;
  vec_push(s->arena, &s->nodes, p);
  return s->nodes.len - 1;
}

static ElemType node_type(Sema *s, int n) { return ((PayloadNode *)s->nodes.items[n])->type; }

/* Does the expression read tensor t anywhere? */
static bool mentions(const AstExpr *e, const char *tensor) {
  if (e->is_literal || e->is_index)
    return false;
  if (!e->is_call)
    return strcmp(e->use.name, tensor) == 0;
  for (int i = 0; i < e->nargs; i++)
    if (mentions(e->args[i], tensor))
      return true;
  return false;
}

static int lower_read(Sema *s, const AstTensorUse *u) {
  int t = find_tensor(s, u->name);
  AffineExpr **map = lower_use_map(s, u, t);
  /* An output written by this comprehension is read as its current value,
   * which is only meaningful at the element being written. */
  for (int i = 0; i < s->comp->nlhs; i++) {
    if (strcmp(s->comp->lhs[i].name, u->name) != 0)
      continue;
    const Operand *w = s->operands.items[i];
    if (!same_map(w, t, map, s->k->tensors[t].rank))
      diag_error(s->diag, u->loc, "output '%s' must be read with the same indices it is written with", u->name);
  }
  int o = operand_for(s, t, map, u->loc, index_locs_of(s, u));
  return add_node(s, (PayloadNode){.kind = PN_READ, .type = s->k->tensors[t].type, .operand = o, .loc = u->loc});
}

static ElemType check_types(Sema *s, const AstExpr *e, ScalarOp op, const int *args, int nargs) {
  const ScalarOpInfo *info = scalar_op_info(op);
  const char *name = info->spelling;
  if (info->result == SOR_CHOSEN)
    diag_error(s->diag, e->loc, "%s has no result type in .tc specs (it exists for model graphs)", name);
  int first = 0;
  if (info->operands == SOC_SELECT) {
    if (node_type(s, args[0]) != TY_I1)
      diag_error(s->diag, e->loc, "%s: the condition must be i1, not %s", name,
                 elem_type_name(node_type(s, args[0])));
    first = 1;
  }
  ElemType t = node_type(s, args[first]);
  for (int i = first + 1; i < nargs; i++)
    if (node_type(s, args[i]) != t)
      diag_error(s->diag, e->loc, "%s: operands have different types (%s and %s); convert one explicitly", name,
                 elem_type_name(t), elem_type_name(node_type(s, args[i])));
  if (info->operands == SOC_FLOAT && !elem_type_is_float(t))
    diag_error(s->diag, e->loc, "%s takes floating-point operands, not %s", name, elem_type_name(t));
  if ((info->operands == SOC_INT || info->operands == SOC_SINT) && elem_type_is_float(t))
    diag_error(s->diag, e->loc, "%s takes integer operands, not %s", name, elem_type_name(t));
  if (info->operands == SOC_SINT && elem_type_is_unsigned(t))
    diag_error(s->diag, e->loc, "%s reads its operands as signed, and %s is unsigned; use %s", name,
               elem_type_name(t), scalar_op_info(info->unsigned_form)->spelling);
  switch (info->result) {
  case SOR_SAME:
    return t;
  case SOR_BOOL:
    return TY_I1;
  case SOR_I32:
    if (elem_type_bits(t) > 32)
      diag_error(s->diag, e->loc, "%s cannot %s-extend %s to i32", name, op == SOP_ZEXTI32 ? "zero" : "sign",
                 elem_type_name(t));
    return TY_I32;
  case SOR_WIDER:
    if (t == TY_F64)
      diag_error(s->diag, e->loc, "%s: there is no float type wider than f64", name);
    return t == TY_F16 ? TY_F32 : TY_F64;
  case SOR_NARROWER:
    if (t == TY_F16)
      diag_error(s->diag, e->loc, "%s: there is no float type narrower than f16", name);
    return t == TY_F64 ? TY_F32 : TY_F16;
  case SOR_CHOSEN:
    break;
  }
  return t;
}

/* A literal as a node of type `want` (-1: unknown, then i64 or f64). */
static int lower_literal(Sema *s, const AstExpr *e, int want) {
  ElemType t = want >= 0 ? (ElemType)want : e->is_float ? TY_F64 : TY_I64;
  PayloadNode n = {.kind = PN_CONST, .type = t, .loc = e->loc};
  if (elem_type_is_float(t)) {
    n.fvalue = e->fvalue;
    if (t == TY_F16 && fabs(e->fvalue) >= 65520.0)
      diag_error(s->diag, e->loc, "%s is too large for f16", e->text);
    if (t == TY_F32 && fabs(e->fvalue) > 3.4028235677973366e38)
      diag_error(s->diag, e->loc, "%s is too large for f32", e->text);
    return add_node(s, n);
  }
  if (e->is_float)
    diag_error(s->diag, e->loc, "%s is not an integer, but the operation's operands are %s (cast one: cast_f32(...))",
               e->text, elem_type_name(t));
  int bits = elem_type_bits(t);
  bool u = elem_type_is_unsigned(t); /* u64 literals stop at INT64_MAX, the lexer's range */
  int64_t lo = t == TY_I1 || u ? 0 : bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
  int64_t hi = t == TY_I1 ? 1 : bits == 64 ? INT64_MAX : u ? (INT64_C(1) << bits) - 1 : (INT64_C(1) << (bits - 1)) - 1;
  if (e->ivalue < lo || e->ivalue > hi)
    diag_error(s->diag, e->loc, "%s does not fit %s", e->text, elem_type_name(t));
  n.ivalue = e->ivalue;
  return add_node(s, n);
}

/* `lhs` is the use being written by the expression this call belongs to;
 * `want` the type a literal here must have (-1: unknown). */
static int lower_expr(Sema *s, const AstExpr *e, const AstTensorUse *lhs, int want) {
  if (e->is_literal)
    return lower_literal(s, e, want);
  if (e->is_index) {
    if (find_attr(s, e->text) >= 0 || find_size(s, e->text) >= 0 || find_tensor(s, e->text) >= 0)
      diag_error(s->diag, e->loc, "'%s' is not a dim: index(...) takes an index variable", e->text);
    int d = dim_named(s, e->text, e->loc);
    return add_node(s, (PayloadNode){.kind = PN_INDEX, .type = TY_I64, .dim = d, .loc = e->loc});
  }
  if (!e->is_call)
    return lower_read(s, &e->use);
  ElemType cast_type;
  bool cast_unsigned;
  if (tc_cast_name(e->callee, &cast_type, &cast_unsigned)) {
    if (e->nred)
      diag_error(s->diag, e->loc, "a cast takes no reduction list");
    if (e->nargs != 1)
      diag_error(s->diag, e->loc, "%s takes 1 operand, found %d", e->callee, e->nargs);
    int x = lower_expr(s, e->args[0], lhs, -1);
    if (node_type(s, x) == cast_type)
      return x;
    return add_node(s, (PayloadNode){.kind = PN_OP, .op = cast_unsigned ? SOP_CAST_UNSIGNED : SOP_CAST_SIGNED,
                                     .type = cast_type, .nargs = 1, .args = {x}, .loc = e->loc});
  }
  ScalarOp op;
  if (!scalar_op_lookup(e->callee, &op)) /* tc_parse refuses any other callee */
    diag_bug(s->diag, "unknown operation '%s' got past the parser", e->callee);
  for (int i = 0; i < e->nred; i++) {
    if (find_attr(s, e->red[i]) >= 0 || find_size(s, e->red[i]) >= 0 || find_tensor(s, e->red[i]) >= 0)
      diag_error(s->diag, e->red_loc[i], "'%s' is not a dim: a reduction list names index variables", e->red[i]);
    s->listed[dim_named(s, e->red[i], e->red_loc[i])] = true;
  }
  int args[LG_MAX_ARGS + 1];
  int nargs = 0;
  /* Implicit-accumulator dialect: the output's current value is the first operand. */
  bool implicit = false;
  if (e->nred > 0) {
    implicit = true;
    for (int i = 0; i < e->nargs; i++)
      if (mentions(e->args[i], lhs->name))
        implicit = false;
  }
  int arity = scalar_op_info(op)->arity;
  int given = e->nargs + (implicit ? 1 : 0);
  if (given != arity)
    diag_error(s->diag, e->loc, "%s takes %d operand%s, found %d%s", e->callee, arity, arity == 1 ? "" : "s",
               e->nargs, implicit ? " plus the implicit accumulator" : "");
  if (implicit)
    args[nargs++] = lower_read(s, lhs);
  /* operands first, in order (dims are numbered as they appear), then the
   * literals, which take the type of the operands beside them */
  int first = implicit ? 1 : 0;
  for (int i = 0; i < e->nargs; i++)
    args[first + i] = e->args[i]->is_literal ? -1 : lower_expr(s, e->args[i], lhs, -1);
  nargs = first + e->nargs;
  bool select = op == SOP_SELECT;
  int sibling = -1;
  for (int i = select ? 1 : 0; i < nargs && sibling < 0; i++)
    if (args[i] >= 0)
      sibling = (int)node_type(s, args[i]);
  if (sibling < 0 && !select)
    sibling = want;
  if (sibling < 0 && select && want >= 0)
    sibling = want;
  for (int i = 0; i < e->nargs; i++)
    if (args[first + i] < 0)
      args[first + i] = lower_literal(s, e->args[i], select && first + i == 0 ? (int)TY_I1 : sibling);
  PayloadNode n = {.kind = PN_OP, .op = op, .nargs = nargs, .loc = e->loc};
  memcpy(n.args, args, sizeof(int) * (size_t)nargs);
  n.type = check_types(s, e, op, args, nargs);
  return add_node(s, n);
}

/* ---- iterator types ---- */

static void classify_dims(Sema *s, StructuredOp *op) {
  for (int d = 0; d < op->ndims; d++) {
    int in_outputs = 0;
    for (int y = 0; y < op->nyields; y++) {
      const Operand *o = &op->operands[op->yields[y].operand];
      for (int i = 0; i < s->k->tensors[o->tensor].rank; i++)
        if (affine_is_dim(o->map[i], d)) {
          in_outputs++;
          break;
        }
    }
    Dim *dim = &op->dims[d];
    if (in_outputs == op->nyields) {
      if (s->listed[d])
        diag_error(s->diag, dim->loc, "dim '%s' is in a reduction list but indexes the output", dim->name);
      dim->kind = ITER_PARALLEL;
    } else if (in_outputs == 0) {
      dim->kind = ITER_REDUCTION;
      if (!s->listed[d])
        diag_warning(s->diag, dim->loc,
                     "dim '%s' does not index the output, so it is summed over, but no reduction list names it; "
                     "treating it as a reduction",
                     dim->name);
    } else {
      diag_error(s->diag, dim->loc, "dim '%s' indexes some outputs but not all; every output must be indexed "
                 "by the same dims", dim->name);
    }
  }
}

static void check_output_indices(Sema *s, const AstTensorUse *u, const Operand *o) {
  for (int i = 0; i < u->nidx; i++) {
    AffineKind kind = o->map[i]->kind;
    if (kind != AE_DIM && kind != AE_CONST)
      diag_error(s->diag, u->idx[i]->loc, "an output index must be a dim or a constant");
  }
}

/* A tensor no comprehension mentions gives the reduction dims of the
 * top-level reduction op their extents (upstream's shape-only operand). */
static void add_shape_only_operand(Sema *s, const bool *used_anywhere) {
  const AstExpr *top = s->comp->rhs[0];
  if (!top->is_call || top->nred == 0)
    return;
  int unused = -1, count = 0;
  for (int t = 0; t < s->k->ntensors; t++)
    if (!used_anywhere[t]) {
      unused = t;
      count++;
    }
  if (count != 1)
    return;
  const TensorParam *p = &s->k->tensors[unused];
  if (p->rank != top->nred)
    diag_error(s->diag, p->loc,
               "'%s' is used only for its shape, so it gives the extents of the reduction list <...> of '%s'; "
               "it has rank %d but the list names %d dims",
               p->name, top->callee, p->rank, top->nred);
  AffineExpr **map = arena_alloc(s->arena, sizeof(AffineExpr *) * (size_t)p->rank);
  for (int i = 0; i < p->rank; i++)
    map[i] = affine_leaf(s->arena, AE_DIM, find_dim(s, top->red[i]), 0);
  int o = operand_for(s, unused, map, p->loc, NULL);
  ((Operand *)s->operands.items[o])->shape_only = true;
}

static void *copy_vec(Sema *s, const PtrVec *v, size_t elem) {
  char *out = arena_alloc(s->arena, elem * (size_t)(v->len ? v->len : 1));
  for (int i = 0; i < v->len; i++)
    memcpy(out + elem * (size_t)i, v->items[i], elem);
  return out;
}

static void lower_comprehension(Sema *s, const AstComprehension *c, StructuredOp *op, const bool *used_anywhere) {
  s->comp = c;
  memset(&s->dims, 0, sizeof s->dims);
  memset(&s->operands, 0, sizeof s->operands);
  memset(&s->nodes, 0, sizeof s->nodes);
  memset(s->listed, 0, sizeof s->listed);
  if (c->nlhs != c->nrhs)
    diag_error(s->diag, c->loc, "%d tensor%s written but %d value%s given", c->nlhs, c->nlhs == 1 ? "" : "s",
               c->nrhs, c->nrhs == 1 ? "" : "s");
  /* Outputs first: they are operands 0..nlhs-1 and number the parallel dims. */
  for (int i = 0; i < c->nlhs; i++) {
    const AstTensorUse *u = &c->lhs[i];
    int t = find_tensor(s, u->name);
    if (!s->k->tensors[t].is_output)
      diag_error(s->diag, u->loc, "'%s' is an input; only outputs can be written", u->name);
    for (int j = 0; j < i; j++)
      if (strcmp(c->lhs[j].name, u->name) == 0)
        diag_error(s->diag, u->loc, "'%s' is written twice in one comprehension", u->name);
    AffineExpr **map = lower_use_map(s, u, t);
    Operand *o = arena_alloc(s->arena, sizeof *o);
    o->tensor = t;
    o->map = map;
    o->loc = u->loc;
    o->index_locs = index_locs_of(s, u);
    vec_push(s->arena, &s->operands, o);
    check_output_indices(s, u, o);
  }
  int values[64];
  for (int i = 0; i < c->nrhs; i++)
    values[i] = lower_expr(s, c->rhs[i], &c->lhs[i], (int)s->k->tensors[find_tensor(s, c->lhs[i].name)].type);
  for (int i = 0; i < c->nrhs; i++) {
    ElemType want = s->k->tensors[find_tensor(s, c->lhs[i].name)].type;
    if (node_type(s, values[i]) != want)
      diag_error(s->diag, c->rhs[i]->loc, "this value is %s but '%s' holds %s", elem_type_name(node_type(s, values[i])),
                 c->lhs[i].name, elem_type_name(want));
  }
  add_shape_only_operand(s, used_anywhere);

  op->loc = c->loc;
  op->ndims = s->dims.len;
  op->dims = copy_vec(s, &s->dims, sizeof(Dim));
  op->noperands = s->operands.len;
  op->operands = copy_vec(s, &s->operands, sizeof(Operand));
  op->nnodes = s->nodes.len;
  op->nodes = copy_vec(s, &s->nodes, sizeof(PayloadNode));
  op->nyields = c->nlhs;
  op->yields = arena_alloc(s->arena, sizeof(Yield) * (size_t)c->nlhs);
  for (int i = 0; i < c->nlhs; i++)
    op->yields[i] = (Yield){.operand = i, .value = values[i]};
  classify_dims(s, op);
}

static void mark_used(const AstExpr *e, const Kernel *k, bool *used) {
  if (e->is_literal || e->is_index)
    return;
  if (!e->is_call) {
    for (int t = 0; t < k->ntensors; t++)
      if (strcmp(k->tensors[t].name, e->use.name) == 0)
        used[t] = true;
    return;
  }
  for (int i = 0; i < e->nargs; i++)
    mark_used(e->args[i], k, used);
}

static Kernel *lower_def(Sema *s, const AstDef *d) {
  Kernel *k = arena_alloc(s->arena, sizeof *k);
  s->k = k;
  s->def = d;
  k->name = d->name;
  k->loc = d->loc;
  k->doc = d->doc;
  k->tensors = arena_alloc(s->arena, sizeof(TensorParam) * (size_t)(d->nins + d->nouts));
  k->sizes = arena_alloc(s->arena, sizeof(SizeSym) * LG_MAX_DIMS * 2);
  k->attrs = arena_alloc(s->arena, sizeof(AttrParam) * (size_t)(d->nattrs ? d->nattrs : 1));
  for (int i = 0; i < d->nins; i++)
    lower_tensor(s, &d->ins[i], false);
  for (int i = 0; i < d->nouts; i++)
    lower_tensor(s, &d->outs[i], true);
  for (int i = 0; i < d->nattrs; i++)
    lower_attr(s, &d->attrs[i]);

  bool used[128] = {false}, written[128] = {false};
  for (int c = 0; c < d->ncomps; c++) {
    for (int i = 0; i < d->comps[c].nlhs; i++)
      written[find_tensor(s, d->comps[c].lhs[i].name)] = true;
    for (int i = 0; i < d->comps[c].nlhs; i++)
      mark_used(&(AstExpr){.use = d->comps[c].lhs[i]}, k, used);
    for (int i = 0; i < d->comps[c].nrhs; i++)
      mark_used(d->comps[c].rhs[i], k, used);
  }
  k->nops = d->ncomps;
  k->ops = arena_alloc(s->arena, sizeof(StructuredOp) * (size_t)d->ncomps);
  for (int c = 0; c < d->ncomps; c++) {
    lower_comprehension(s, &d->comps[c], &k->ops[c], used);
    infer_domain(s->diag, s->arena, k, &k->ops[c]);
  }
  for (int t = 0; t < k->ntensors; t++) {
    bool shape_only = false;
    for (int c = 0; c < k->nops; c++)
      for (int o = 0; o < k->ops[c].noperands; o++)
        shape_only |= k->ops[c].operands[o].tensor == t;
    if (!used[t] && !shape_only)
      diag_warning(s->diag, k->tensors[t].loc, "tensor '%s' is never used", k->tensors[t].name);
    else if (k->tensors[t].is_output && !written[t])
      diag_warning(s->diag, k->tensors[t].loc, "output '%s' is never written", k->tensors[t].name);
  }
  return k;
}

void tc_lower(const AstFile *file, Module *module, Arena *arena, Diag *diag) {
  Sema s = {.arena = arena, .diag = diag};
  for (int i = 0; i < file->defs.len; i++) {
    const AstDef *d = file->defs.items[i];
    for (int j = 0; j < module->kernels.len; j++) {
      const Kernel *other = module->kernels.items[j];
      if (strcmp(other->name, d->name) == 0)
        diag_error(diag, d->loc, "op '%s' is defined twice (first at %s:%d)", d->name, other->loc.src->name,
                   other->loc.line);
    }
    vec_push(arena, &module->kernels, lower_def(&s, d));
  }
}
