/* opdsl.c - an OpDSL config (opdsl_read.c) made into an IR Kernel.
 *
 * What lgen decides where an OpDSL config is generic:
 *  - Types: a type variable takes the type of the operands it types (graph
 *    calls), else the --opdsl choice (`U=i32`, or `matmul.U=i32` for one
 *    op), else f32. I1, I8, I16, I32, I64, F16, F32 and F64 are fixed types
 *    (upstream's generator knows I32, I64, F32 and F64).
 *  - Rank: a rank-polymorphic (elementwise) op is instantiated at the rank
 *    of its graph call's first tensor input, else the `rank` choice, else 1:
 *    identical dense row-major shapes make an elementwise op over N-d
 *    tensors the same as over their flat element count.
 *  - Sizes: a tensor dimension whose shape is a bare symbol is the size
 *    parameter `sN`; any other (a window `s1 * s2 + s3 * s4`, `s0 + s1`) is
 *    a size of its own, TENSOR_dP, because Linalg takes loop bounds from the
 *    operands and an input may be larger than the window reads.
 *  - Index attributes (strides, dilations) are `const int64_t NAME[N]`
 *    kernel parameters; graph calls bake in the node's values or the
 *    defaults. Fn attributes choose a function when lgen runs: the choice
 *    (`cast=cast_unsigned`, or a graph node's attribute), else the default.
 *  - Scalar operands are 0-d tensors (a pointer to one element).
 *  - Iterator types are checked against the outputs' maps: a dim that does
 *    not index the outputs is a reduction whatever the file says (a
 *    warning), one that indexes some outputs but not all is an error. */
#include "frontend/opdsl.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

typedef struct {
  const OpdslOp *op;
  const OpdslBinding *b;
  Arena *arena;
  Diag *diag;
  Kernel *k;
  int tensor_of_arg[64]; /* kernel tensor of each operand arg, or -1 */
  int map_of_arg[64];    /* the op's map of each operand arg */
  int attr_of_arg[64];   /* kernel attribute of each index attribute arg, or -1 */
  /* symbols: what each one stands for */
  int sym_attr[LG_MAX_DIMS * 4], sym_elem[LG_MAX_DIMS * 4]; /* index attribute arg and element, or -1 */
  int sym_size[LG_MAX_DIMS * 4];                            /* kernel size, or -1 */
  int nsyms;
  int rank; /* rank-polymorphic ops */
  int ndims;
  const char *type_names[64];
  ElemType types[64];
  int ntypes;
  PtrVec nodes; /* PayloadNode* */
  int *reads;   /* per operand: read by the payload */
} Inst;

static void inst_error(Inst *s, Loc loc, const char *fmt, ...) LG_PRINTF(3, 4) LG_NORETURN;
static void inst_error(Inst *s, Loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  StrBuf sb = {0};
  sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  char *msg = arena_strdup(s->arena, sb_cstr(&sb));
  sb_free(&sb);
  /* an instantiation for a graph call reports at the node, naming the op */
  if (s->b->what)
    diag_error(s->diag, s->b->loc, "%s'%s': %s", s->b->what, s->op->name, msg);
  diag_error(s->diag, loc, "%s", msg);
}

/* ---- choices ---- */

static const OpdslChoice *choice(const OpdslBinding *b, const char *op, const char *key) {
  const OpdslChoice *global = NULL;
  for (int i = 0; i < b->nchoices; i++) {
    const OpdslChoice *c = &b->choices[i];
    if (strcmp(c->key, key) != 0)
      continue;
    if (c->op && strcmp(c->op, op) == 0)
      return c;
    if (!c->op)
      global = c;
  }
  return global;
}

/* ---- types ---- */

static bool fixed_type(const char *name, ElemType *t) {
  static const struct {
    const char *name;
    ElemType type;
  } fixed[] = {{"I1", TY_I1},   {"I8", TY_I8},   {"I16", TY_I16}, {"I32", TY_I32},
               {"I64", TY_I64}, {"F16", TY_F16}, {"F32", TY_F32}, {"F64", TY_F64}};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
    if (strcmp(fixed[i].name, name) == 0) {
      *t = fixed[i].type;
      return true;
    }
  return false;
}

static int find_type(Inst *s, const char *name) {
  for (int i = 0; i < s->ntypes; i++)
    if (strcmp(s->type_names[i], name) == 0)
      return i;
  return -1;
}

static void bind_type(Inst *s, const char *name, ElemType t) {
  if (s->ntypes == 64) /* the reader allows 64 args, each naming one type variable at most */
    diag_bug(s->diag, "'%s' has more than 64 type variables", s->op->name);
  s->type_names[s->ntypes] = name;
  s->types[s->ntypes++] = t;
}

static ElemType parse_type_choice(Inst *s, const OpdslChoice *c) {
  ElemType t;
  if (!elem_type_parse(c->value, &t))
    inst_error(s, c->loc, "--opdsl: unknown element type '%s' for '%s' (expected f16, f32, f64, i1, i8, i16, i32, "
               "i64, u8, u16, u32 or u64)", c->value, c->key);
  return t;
}

static bool is_operand(const OpdslArg *a) { return a->kind == OA_INPUT || a->kind == OA_OUTPUT || a->kind == OA_SCALAR; }

/* Whether expression e reads operand `name` directly as a select's condition. */
static bool is_condition(const OpdslExpr *e, const char *name) {
  if (e->kind != OE_FN)
    return false;
  if (e->fn_kind == FK_TERNARY && e->ops[0]->kind == OE_ARG && strcmp(e->ops[0]->arg, name) == 0)
    return true;
  for (int i = 0; i < e->nops; i++)
    if (is_condition(e->ops[i], name))
      return true;
  return false;
}

/* Binds every type variable an operand names: from the operands' own
 * types (graph calls), fixed names, choices, else the default (i1 for an
 * operand read as a select's condition). */
static void bind_types(Inst *s) {
  const OpdslOp *op = s->op;
  for (int pass = 0; pass < 2; pass++) /* inputs and scalars, then outputs: the kernel's order */
    for (int i = 0; i < op->nargs; i++) {
      const OpdslArg *a = &op->args[i];
      if (!is_operand(a) || (a->kind == OA_OUTPUT) != (pass == 1))
        continue;
      int t = s->tensor_of_arg[i];
      ElemType fixed;
      int known = s->b->arg_types && t < s->b->narg_info ? s->b->arg_types[t] : -1;
      if (fixed_type(a->type_var, &fixed)) {
        if (known >= 0 && (ElemType)known != fixed)
          inst_error(s, a->type_loc, "'%s' is %s, but the operand given is %s", a->name, elem_type_name(fixed),
                     elem_type_name((ElemType)known));
        continue;
      }
      int have = find_type(s, a->type_var);
      if (known < 0)
        continue;
      if (have >= 0 && s->types[have] != (ElemType)known)
        inst_error(s, a->type_loc, "type variable '%s' is %s from an earlier operand, but '%s' is given %s",
                   a->type_var, elem_type_name(s->types[have]), a->name, elem_type_name((ElemType)known));
      if (have < 0)
        bind_type(s, a->type_var, (ElemType)known);
    }
  /* the default for the rest: a graph call's first input's type, else f32 */
  ElemType dflt = TY_F32;
  if (s->b->arg_types && s->b->narg_info > 0 && s->b->arg_types[0] >= 0)
    dflt = (ElemType)s->b->arg_types[0];
  for (int i = 0; i < op->nargs; i++) {
    const OpdslArg *a = &op->args[i];
    ElemType fixed;
    if (!is_operand(a) || fixed_type(a->type_var, &fixed) || find_type(s, a->type_var) >= 0)
      continue;
    const OpdslChoice *c = choice(s->b, op->name, a->type_var);
    bool cond = false;
    for (int y = 0; y < op->nassigns && !cond; y++)
      cond = is_condition(op->assigns[y].value, a->name);
    bind_type(s, a->type_var, c ? parse_type_choice(s, c) : cond ? TY_I1 : dflt);
  }
}

static ElemType type_of_var(Inst *s, const char *name, Loc loc) {
  ElemType t;
  if (fixed_type(name, &t))
    return t;
  int i = find_type(s, name);
  if (i < 0)
    inst_error(s, loc, "type variable '%s' is the type of no operand (nor one of I32, I64, F32, F64, ...)", name);
  return s->types[i];
}

/* ---- sizes and symbols ---- */

static bool name_taken(const Kernel *k, const char *name) {
  for (int i = 0; i < k->ntensors; i++)
    if (strcmp(k->tensors[i].name, name) == 0)
      return true;
  for (int i = 0; i < k->nsizes; i++)
    if (strcmp(k->sizes[i].name, name) == 0)
      return true;
  for (int i = 0; i < k->nattrs; i++)
    if (strcmp(k->attrs[i].name, name) == 0)
      return true;
  return false;
}

static int new_size(Inst *s, const char *name, Loc loc) {
  Kernel *k = s->k;
  if (k->nsizes == LG_MAX_DIMS * 4)
    inst_error(s, loc, "more than %d size symbols", LG_MAX_DIMS * 4);
  while (name_taken(k, name))
    name = arena_printf(s->arena, "%s_", name);
  k->sizes[k->nsizes] = (SizeSym){.name = name, .loc = loc};
  return k->nsizes++;
}

/* A symbol of a map, as the kernel sees it. */
static AffineExpr *symbol(Inst *s, int sym, Loc loc) {
  if (sym >= s->nsyms) /* the reader checks each symbol against its map's list, and nsyms covers every map */
    diag_bug(s->diag, "symbol s%d is beyond the op's %d symbols", sym, s->nsyms);
  if (s->sym_attr[sym] >= 0) {
    int arg = s->sym_attr[sym], elem = s->sym_elem[sym];
    const OpdslArg *a = &s->op->args[arg];
    if (s->attr_of_arg[arg] >= 0)
      return affine_leaf(s->arena, AE_ATTR, s->attr_of_arg[arg], elem);
    const OpdslChoice *c = choice(s->b, s->op->name, a->name);
    if (c && c->nints != a->attr_map->nresults)
      inst_error(s, c->loc, "'%s' takes %d integer%s, not %d", a->name, a->attr_map->nresults,
                 a->attr_map->nresults == 1 ? "" : "s", c->nints);
    if (!c && a->ndefaults < 0)
      inst_error(s, a->loc, "the index attribute '%s' has no default, so it must be given", a->name);
    return affine_const(s->arena, c ? c->ints[elem] : a->defaults[elem]);
  }
  if (s->sym_size[sym] >= 0)
    return affine_leaf(s->arena, AE_SIZE, s->sym_size[sym], 0);
  inst_error(s, loc, "symbol s%d is neither an index attribute nor the extent of a tensor dimension", sym);
}

static AffineExpr *subst(Inst *s, const AffineExpr *e, Loc loc) {
  if (e->kind == AE_SIZE)
    return symbol(s, e->index, loc);
  if (e->kind == AE_CONST || e->kind == AE_DIM)
    return (AffineExpr *)e;
  AffineExpr *l = subst(s, e->lhs, loc), *r = e->rhs ? subst(s, e->rhs, loc) : NULL;
  if (e->kind == AE_MUL && affine_has_dims(l) && affine_has_dims(r)) /* the reader refuses d * d; symbols are no dims */
    diag_bug(s->diag, "non-affine expression: a product of two dims");
  return affine_binary(s->arena, e->kind, l, r);
}

static void check_symbols(Inst *s, const OpdslMap *m) {
  if (m->nsyms > s->nsyms)
    s->nsyms = m->nsyms;
  if (s->nsyms > LG_MAX_DIMS * 4)
    inst_error(s, m->loc, "more than %d symbols", LG_MAX_DIMS * 4);
}

/* Index attributes: which symbols they bind; kernel parameters unless baked. */
static void lower_attrs(Inst *s) {
  const OpdslOp *op = s->op;
  for (int i = 0; i < LG_MAX_DIMS * 4; i++)
    s->sym_attr[i] = s->sym_size[i] = -1;
  for (int i = 0; i < op->nargs; i++) {
    const OpdslArg *a = &op->args[i];
    s->attr_of_arg[i] = -1;
    if (a->kind != OA_INDEX_ATTR)
      continue;
    check_symbols(s, a->attr_map);
    for (int e = 0; e < a->attr_map->nresults; e++) {
      int sym = a->attr_map->results[e]->index;
      if (s->sym_attr[sym] >= 0)
        inst_error(s, a->attr_map->result_locs[e], "symbol s%d is bound by two index attribute elements", sym);
      s->sym_attr[sym] = i;
      s->sym_elem[sym] = e;
    }
    if (s->b->bake_attrs)
      continue;
    if (name_taken(s->k, a->name)) /* the reader refuses two args of one name; no size exists yet */
      diag_bug(s->diag, "'%s' names two operands", a->name);
    AttrParam *p = &s->k->attrs[s->k->nattrs];
    p->name = a->name;
    p->loc = a->loc;
    p->type = TY_I64;
    p->ndims = 1;
    p->dims[0] = a->attr_map->nresults;
    p->count = a->attr_map->nresults;
    s->attr_of_arg[i] = s->k->nattrs++;
  }
}

/* t = x | x * k | k * x, x a size symbol, k a constant or an index
 * attribute's (baked) symbol: sets *x and *k. */
static bool window_term(Inst *s, const AffineExpr *t, int *x, int64_t *k) {
  const AffineExpr *a = t, *b = NULL;
  if (t->kind == AE_MUL)
    a = t->lhs, b = t->rhs;
  if (b && a->kind != AE_SIZE)
    a = t->rhs, b = t->lhs;
  if (a->kind != AE_SIZE || s->sym_attr[a->index] >= 0)
    return false;
  *x = a->index;
  *k = 1;
  if (!b)
    return true;
  if (b->kind == AE_CONST)
    *k = b->value;
  else if (b->kind == AE_SIZE && s->sym_attr[b->index] >= 0)
    *k = symbol(s, b->index, s->op->loc)->value;
  else
    return false;
  return true;
}

/* A graph call's output extent `sym` that no input gives bare, from a
 * window: an input dimension whose shape is sym * stride + k * dilation (k
 * an extent some input gives) has E elements, so the output has
 * (E - dilation * (k - 1) - 1) floordiv stride + 1 (a valid convolution or
 * pooling). NULL if no input reads sym that way. */
static AffineExpr *window_extent(Inst *s, int sym) {
  const OpdslOp *op = s->op;
  Arena *A = s->arena;
  for (int i = 0; i < op->nargs; i++) {
    const OpdslArg *a = &op->args[i];
    if (a->kind != OA_INPUT || op->rank_polymorphic)
      continue;
    const TensorParam *p = &s->k->tensors[s->tensor_of_arg[i]];
    for (int d = 0; d < a->shape->nresults; d++) {
      const AffineExpr *e = a->shape->results[d];
      int x, y;
      int64_t stride, dil;
      if (e->kind != AE_ADD || !p->shape[d])
        continue;
      for (int side = 0; side < 2; side++) {
        const AffineExpr *l = side ? e->rhs : e->lhs, *r = side ? e->lhs : e->rhs;
        if (!window_term(s, l, &x, &stride) || x != sym || !window_term(s, r, &y, &dil) || s->sym_size[y] < 0 ||
            stride <= 0 || dil < 0)
          continue;
        AffineExpr *k = affine_leaf(A, AE_SIZE, s->sym_size[y], 0);
        AffineExpr *span = affine_binary(A, AE_MUL, affine_const(A, dil),
                                         affine_binary(A, AE_SUB, k, affine_const(A, 1)));
        AffineExpr *room = affine_binary(A, AE_SUB, affine_binary(A, AE_SUB, p->shape[d], span), affine_const(A, 1));
        return affine_binary(A, AE_ADD, affine_binary(A, AE_FLOORDIV, room, affine_const(A, stride)),
                             affine_const(A, 1));
      }
    }
  }
  return NULL;
}

static void lower_tensors(Inst *s) {
  const OpdslOp *op = s->op;
  Kernel *k = s->k;
  int nmap = 0;
  for (int i = 0; i < op->nargs; i++)
    s->tensor_of_arg[i] = s->map_of_arg[i] = -1;
  for (int i = 0; i < op->nargs; i++)
    if (is_operand(&op->args[i]))
      s->map_of_arg[i] = nmap++;
  if (nmap != op->nmaps)
    inst_error(s, op->maps_loc, "%d indexing maps for %d operands (tensors and scalars)", op->nmaps, nmap);
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < op->nargs; i++) {
      const OpdslArg *a = &op->args[i];
      if (!is_operand(a) || (a->kind == OA_OUTPUT) != (pass == 1))
        continue;
      if (name_taken(k, a->name)) /* the reader refuses two args of one name */
        diag_bug(s->diag, "'%s' names two operands", a->name);
      TensorParam *p = &k->tensors[k->ntensors];
      s->tensor_of_arg[i] = k->ntensors++;
      p->name = a->name;
      p->loc = a->loc;
      p->is_output = a->kind == OA_OUTPUT;
    }
  bind_types(s);
  for (int i = 0; i < op->nargs; i++) {
    const OpdslArg *a = &op->args[i];
    if (is_operand(a))
      check_symbols(s, op->maps[s->map_of_arg[i]]);
    if (a->shape)
      check_symbols(s, a->shape);
  }
  lower_attrs(s);
  /* sizes in the order of the kernel's tensors */
  for (int t = 0; t < k->ntensors; t++) {
    int i = 0;
    while (s->tensor_of_arg[i] != t)
      i++;
    const OpdslArg *a = &op->args[i];
    TensorParam *p = &k->tensors[t];
    p->type = type_of_var(s, a->type_var, a->type_loc);
    if (a->kind == OA_SCALAR) {
      p->rank = 0;
      p->shape = arena_alloc(s->arena, sizeof(AffineExpr *));
      continue;
    }
    const OpdslMap *shape = a->shape;
    p->rank = op->rank_polymorphic ? s->rank : shape->nresults;
    p->shape = arena_alloc(s->arena, sizeof(AffineExpr *) * (size_t)(p->rank + 1));
    for (int d = 0; d < p->rank; d++) {
      if (op->rank_polymorphic) { /* every tensor has the one shape */
        int z = -1;
        for (int j = 0; j < k->nsizes && z < 0; j++)
          if (strcmp(k->sizes[j].name, arena_printf(s->arena, "s%d", d)) == 0)
            z = j;
        if (z < 0)
          z = new_size(s, arena_printf(s->arena, "s%d", d), a->loc);
        p->shape[d] = affine_leaf(s->arena, AE_SIZE, z, 0);
        continue;
      }
      const AffineExpr *e = shape->results[d];
      if (e->kind == AE_CONST) {
        if (e->value < 0)
          inst_error(s, shape->result_locs[d], "an extent cannot be negative");
        p->shape[d] = (AffineExpr *)e;
      } else if (e->kind == AE_SIZE && s->sym_attr[e->index] < 0) {
        AffineExpr *w = p->is_output && s->b->bake_attrs && s->sym_size[e->index] < 0 ? window_extent(s, e->index) : NULL;
        if (w) {
          p->shape[d] = w;
          continue;
        }
        if (s->sym_size[e->index] < 0)
          s->sym_size[e->index] = new_size(s, arena_printf(s->arena, "s%d", e->index), shape->result_locs[d]);
        p->shape[d] = affine_leaf(s->arena, AE_SIZE, s->sym_size[e->index], 0);
      } else {
        int z = new_size(s, arena_printf(s->arena, "%s_d%d", a->name, d), shape->result_locs[d]);
        p->shape[d] = affine_leaf(s->arena, AE_SIZE, z, 0);
      }
    }
  }
}

/* ---- the payload ---- */

static int add_node(Inst *s, PayloadNode n) {
  PayloadNode *p = arena_alloc(s->arena, sizeof *p);
  *p = n;
  vec_push(s->arena, &s->nodes, p);
  return s->nodes.len - 1;
}

static ElemType node_type(Inst *s, int n) { return ((PayloadNode *)s->nodes.items[n])->type; }

static int op1(Inst *s, ScalarOp op, int a, ElemType t, Loc loc) {
  return add_node(s, (PayloadNode){.kind = PN_OP, .op = op, .type = t, .nargs = 1, .args = {a}, .loc = loc});
}

static int op2(Inst *s, ScalarOp op, int a, int b, ElemType t, Loc loc) {
  return add_node(s, (PayloadNode){.kind = PN_OP, .op = op, .type = t, .nargs = 2, .args = {a, b}, .loc = loc});
}

static int op3(Inst *s, ScalarOp op, int a, int b, int c, ElemType t, Loc loc) {
  return add_node(s, (PayloadNode){.kind = PN_OP, .op = op, .type = t, .nargs = 3, .args = {a, b, c}, .loc = loc});
}

static int constant(Inst *s, ElemType t, double f, int64_t i, Loc loc) {
  return add_node(s, (PayloadNode){.kind = PN_CONST, .type = t, .fvalue = f, .ivalue = i, .loc = loc});
}

/* The function an expression calls: its own, or its fn attribute's choice. */
static const char *fn_of(Inst *s, const OpdslExpr *e) {
  if (e->fn_name)
    return e->fn_name;
  static const OpdslArgKind want[] = {OA_UNARY_FN, OA_BINARY_FN, OA_TERNARY_FN, OA_TYPE_FN};
  static const char *const kinds[] = {"unary", "binary", "ternary", "type"};
  for (int i = 0; i < s->op->nargs; i++) {
    const OpdslArg *a = &s->op->args[i];
    if (strcmp(a->name, e->attr_name) != 0)
      continue;
    if (a->kind != want[e->fn_kind])
      inst_error(s, e->fn_loc, "'%s' is not a %s fn attribute", e->attr_name, kinds[e->fn_kind]);
    const OpdslChoice *c = choice(s->b, s->op->name, a->name);
    if (c)
      return c->value;
    if (!a->default_fn)
      inst_error(s, a->loc, "the fn attribute '%s' has no default_fn, so it must be given (--opdsl=%s=FN)", a->name,
                 a->name);
    return a->default_fn;
  }
  inst_error(s, e->fn_loc, "'%s' is no fn attribute of '%s'", e->attr_name, s->op->name);
}

static int lower_expr(Inst *s, const OpdslExpr *e);

static void need_float(Inst *s, const OpdslExpr *e, const char *fn, ElemType t) {
  if (!elem_type_is_float(t))
    inst_error(s, e->loc, "'%s' takes floating-point operands, not %s", fn, elem_type_name(t));
}

static int lower_unary(Inst *s, const OpdslExpr *e, const char *fn, int x) {
  static const struct {
    const char *name;
    ScalarOp op;
  } direct[] = {{"exp", SOP_EXP},     {"log", SOP_LOG},    {"abs", SOP_ABSF},     {"ceil", SOP_CEILF},
                {"floor", SOP_FLOORF}, {"negf", SOP_NEGF}, {"round", SOP_ROUNDF}, {"sqrt", SOP_SQRT},
                {"tanh", SOP_TANH},   {"erf", SOP_ERF}};
  ElemType t = node_type(s, x);
  for (size_t i = 0; i < sizeof direct / sizeof *direct; i++)
    if (strcmp(direct[i].name, fn) == 0) {
      need_float(s, e, fn, t);
      return op1(s, direct[i].op, x, t, e->loc);
    }
  if (strcmp(fn, "square") == 0) {
    need_float(s, e, fn, t);
    return op2(s, SOP_MULF, x, x, t, e->loc);
  }
  if (strcmp(fn, "reciprocal") == 0 || strcmp(fn, "rsqrt") == 0) {
    need_float(s, e, fn, t);
    int one = constant(s, t, 1.0, 1, e->loc);
    return op2(s, SOP_DIVF, one, fn[0] == 'r' && fn[1] == 's' ? op1(s, SOP_SQRT, x, t, e->loc) : x, t, e->loc);
  }
  inst_error(s, e->fn_loc, "unknown unary function '%s' (expected exp, log, abs, ceil, floor, negf, round, sqrt, rsqrt, "
             "square, tanh, erf or reciprocal)", fn);
}

static int lower_binary(Inst *s, const OpdslExpr *e, const char *fn, int a, int b) {
  ElemType t = node_type(s, a);
  if (node_type(s, b) != t)
    inst_error(s, e->loc, "'%s' of %s and %s: the operands of a binary function have one type (cast one)", fn,
               elem_type_name(t), elem_type_name(node_type(s, b)));
  bool fl = elem_type_is_float(t);
  if (t == TY_I1) { /* booleans, as upstream: add is or, mul is and */
    int one = constant(s, TY_I1, 1, 1, e->loc), zero = constant(s, TY_I1, 0, 0, e->loc);
    if (strcmp(fn, "add") == 0 || strcmp(fn, "max_unsigned") == 0 || strcmp(fn, "min_signed") == 0)
      return op3(s, SOP_SELECT, a, one, b, t, e->loc); /* a | b */
    if (strcmp(fn, "mul") == 0 || strcmp(fn, "min_unsigned") == 0 || strcmp(fn, "max_signed") == 0)
      return op3(s, SOP_SELECT, a, b, zero, t, e->loc); /* a & b */
    inst_error(s, e->loc, "'%s' is not defined on i1 (booleans have add, mul, max and min)", fn);
  }
  static const struct {
    const char *name;
    ScalarOp f, i;
  } table[] = {
      {"add", SOP_ADDF, SOP_ADDI},          {"sub", SOP_SUBF, SOP_SUBI},
      {"mul", SOP_MULF, SOP_MULI},          {"div", SOP_DIVF, SOP_DIVIS},
      {"div_unsigned", SOP_DIVF, SOP_DIVIU}, {"max_signed", SOP_MAXIMUMF, SOP_MAXSI},
      {"min_signed", SOP_MINIMUMF, SOP_MINSI}, {"max_unsigned", SOP_MAXIMUMF, SOP_MAXUI},
      {"min_unsigned", SOP_MINIMUMF, SOP_MINUI}, {"powf", SOP_POWF, SOP_COUNT},
  };
  for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
    if (strcmp(table[i].name, fn) != 0)
      continue;
    ScalarOp op = fl ? table[i].f : table[i].i;
    if (op == SOP_COUNT)
      inst_error(s, e->loc, "'%s' takes floating-point operands, not %s", fn, elem_type_name(t));
    if (elem_type_is_unsigned(t)) /* u8..u64: div, max_signed, min_signed on their values */
      op = scalar_op_info(op)->unsigned_form;
    return op2(s, op, a, b, t, e->loc);
  }
  inst_error(s, e->fn_loc, "unknown binary function '%s' (expected add, sub, mul, div, div_unsigned, max_signed, "
             "min_signed, max_unsigned, min_unsigned or powf)", fn);
}

static int lower_fn(Inst *s, const OpdslExpr *e) {
  const char *fn = fn_of(s, e);
  int args[3];
  for (int i = 0; i < e->nops; i++)
    args[i] = lower_expr(s, e->ops[i]);
  switch (e->fn_kind) {
  case FK_UNARY:
    return lower_unary(s, e, fn, args[0]);
  case FK_BINARY:
    return lower_binary(s, e, fn, args[0], args[1]);
  case FK_TERNARY:
    if (strcmp(fn, "select") != 0)
      inst_error(s, e->fn_loc, "unknown ternary function '%s' (expected select)", fn);
    if (node_type(s, args[0]) != TY_I1)
      inst_error(s, e->loc, "select's condition must be i1, not %s", elem_type_name(node_type(s, args[0])));
    if (node_type(s, args[1]) != node_type(s, args[2]))
      inst_error(s, e->loc, "select's values are %s and %s: they have one type", elem_type_name(node_type(s, args[1])),
                 elem_type_name(node_type(s, args[2])));
    return op3(s, SOP_SELECT, args[0], args[1], args[2], node_type(s, args[1]), e->loc);
  case FK_TYPE: {
    bool is_unsigned = strcmp(fn, "cast_unsigned") == 0;
    if (!is_unsigned && strcmp(fn, "cast_signed") != 0 && strcmp(fn, "cast") != 0)
      inst_error(s, e->fn_loc, "unknown type function '%s' (expected cast_signed or cast_unsigned)", fn);
    ElemType to = type_of_var(s, e->type_var, e->type_loc);
    if (to == node_type(s, args[0]))
      return args[0];
    return op1(s, is_unsigned ? SOP_CAST_UNSIGNED : SOP_CAST_SIGNED, args[0], to, e->loc);
  }
  }
  diag_bug(s->diag, "unknown fn kind %d", (int)e->fn_kind);
}

static int lower_expr(Inst *s, const OpdslExpr *e) {
  switch (e->kind) {
  case OE_ARG:
    for (int i = 0; i < s->op->nargs; i++) {
      const OpdslArg *a = &s->op->args[i];
      if (strcmp(a->name, e->arg) != 0)
        continue;
      if (!is_operand(a))
        inst_error(s, e->loc, "'%s' is an attribute; scalar_arg reads a tensor or a scalar", e->arg);
      int t = s->tensor_of_arg[i];
      s->reads[t] = 1;
      return add_node(s, (PayloadNode){.kind = PN_READ, .type = s->k->tensors[t].type, .operand = t, .loc = e->loc});
    }
    inst_error(s, e->loc, "'%s' is no operand of '%s'", e->arg, s->op->name);
  case OE_CONST:
    return constant(s, e->type, e->fvalue, e->ivalue, e->loc);
  case OE_INDEX:
    if (e->dim >= s->ndims)
      inst_error(s, e->loc, "scalar_index %d: the op has %d dim%s", e->dim, s->ndims, s->ndims == 1 ? "" : "s");
    return add_node(s, (PayloadNode){.kind = PN_INDEX, .type = TY_I64, .dim = e->dim, .loc = e->loc});
  case OE_FN:
    return lower_fn(s, e);
  }
  diag_bug(s->diag, "unknown expression kind %d", (int)e->kind);
}

/* ---- the op ---- */

static void *copy_nodes(Inst *s) {
  PayloadNode *out = arena_alloc(s->arena, sizeof(PayloadNode) * (size_t)(s->nodes.len + 1));
  for (int i = 0; i < s->nodes.len; i++)
    out[i] = *(PayloadNode *)s->nodes.items[i];
  return out;
}

static void lower_op(Inst *s, StructuredOp *op) {
  const OpdslOp *o = s->op;
  Kernel *k = s->k;
  op->loc = o->loc;
  op->ndims = s->ndims;
  op->dims = arena_alloc(s->arena, sizeof(Dim) * (size_t)(s->ndims + 1));
  for (int d = 0; d < s->ndims; d++)
    op->dims[d] = (Dim){.name = arena_printf(s->arena, "d%d", d),
                        .kind = o->rank_polymorphic ? ITER_PARALLEL : o->iters[d],
                        .extent_operand = -1,
                        .loc = o->rank_polymorphic ? o->loc : o->iters_loc};
  /* one operand per tensor, in the kernel's order */
  op->noperands = k->ntensors;
  op->operands = arena_alloc(s->arena, sizeof(Operand) * (size_t)(k->ntensors + 1));
  for (int i = 0; i < o->nargs; i++) {
    int t = s->tensor_of_arg[i];
    if (t < 0)
      continue;
    const OpdslMap *m = o->maps[s->map_of_arg[i]];
    Operand *x = &op->operands[t];
    int rank = k->tensors[t].rank;
    x->tensor = t;
    x->loc = m->loc;
    x->map = arena_alloc(s->arena, sizeof(AffineExpr *) * (size_t)(rank + 1));
    x->index_locs = arena_alloc(s->arena, sizeof(Loc) * (size_t)(rank + 1));
    if (o->rank_polymorphic) {
      for (int p = 0; p < rank; p++) {
        x->map[p] = affine_leaf(s->arena, AE_DIM, p, 0);
        x->index_locs[p] = m->loc;
      }
      continue;
    }
    if (m->ndims != s->ndims)
      inst_error(s, m->loc, "this map has %d dims but the op has %d iterator types", m->ndims, s->ndims);
    if (m->nresults != rank)
      inst_error(s, m->loc, "'%s' has rank %d but its map has %d result%s", o->args[i].name, rank, m->nresults,
                 m->nresults == 1 ? "" : "s");
    for (int p = 0; p < rank; p++) {
      x->map[p] = subst(s, m->results[p], m->result_locs[p]);
      x->index_locs[p] = m->result_locs[p];
    }
  }
  s->reads = arena_alloc(s->arena, sizeof(int) * (size_t)(k->ntensors + 1));
  op->nyields = o->nassigns;
  op->yields = arena_alloc(s->arena, sizeof(Yield) * (size_t)(o->nassigns + 1));
  for (int y = 0; y < o->nassigns; y++) {
    const OpdslAssign *a = &o->assigns[y];
    int t = -1;
    for (int i = 0; i < o->nargs && t < 0; i++)
      if (strcmp(o->args[i].name, a->arg) == 0)
        t = s->tensor_of_arg[i];
    if (t < 0 || !k->tensors[t].is_output)
      inst_error(s, a->loc, "'%s' is not an output of '%s'", a->arg, o->name);
    for (int z = 0; z < y; z++)
      if (op->yields[z].operand == t)
        inst_error(s, a->loc, "'%s' is assigned twice", a->arg);
    int v = lower_expr(s, a->value);
    if (node_type(s, v) != k->tensors[t].type)
      inst_error(s, a->value->loc, "this value is %s but '%s' holds %s", elem_type_name(node_type(s, v)), a->arg,
                 elem_type_name(k->tensors[t].type));
    op->yields[y] = (Yield){.operand = t, .value = v};
  }
  for (int t = 0; t < k->ntensors; t++) {
    bool assigned = false;
    for (int y = 0; y < op->nyields; y++)
      assigned |= op->yields[y].operand == t;
    if (k->tensors[t].is_output && !assigned)
      inst_error(s, k->tensors[t].loc, "the output '%s' is never assigned", k->tensors[t].name);
    op->operands[t].shape_only = !k->tensors[t].is_output && !s->reads[t];
  }
  op->nnodes = s->nodes.len;
  op->nodes = copy_nodes(s);
  /* iterator types, checked against the outputs' maps */
  for (int d = 0; d < op->ndims; d++) {
    int in_outputs = 0;
    for (int y = 0; y < op->nyields; y++) {
      const Operand *x = &op->operands[op->yields[y].operand];
      for (int p = 0; p < k->tensors[x->tensor].rank; p++)
        if (affine_uses_dim(x->map[p], d)) {
          in_outputs++;
          break;
        }
    }
    Dim *dim = &op->dims[d];
    if (in_outputs == op->nyields && dim->kind == ITER_REDUCTION)
      inst_error(s, o->iters_loc, "d%d is a reduction but indexes the output", d);
    if (in_outputs == 0 && dim->kind == ITER_PARALLEL) {
      diag_warning(s->diag, o->iters_loc, "d%d does not index the output, so it is summed over: treating it as a "
                   "reduction, not parallel", d);
      dim->kind = ITER_REDUCTION;
    }
    if (in_outputs && in_outputs < op->nyields)
      inst_error(s, o->iters_loc, "d%d indexes some outputs but not all", d);
  }
  /* an output index is a dim or a constant, each dim at most once (one point per element) */
  for (int y = 0; y < op->nyields; y++) {
    const Operand *x = &op->operands[op->yields[y].operand];
    for (int p = 0; p < k->tensors[x->tensor].rank; p++)
      if (x->map[p]->kind != AE_DIM && x->map[p]->kind != AE_CONST)
        inst_error(s, x->index_locs[p], "an output's index must be a dim or a constant");
  }
}

Kernel *opdsl_instantiate(const OpdslOp *op, const OpdslBinding *b, Arena *arena, Diag *diag) {
  Inst s = {.op = op, .b = b, .arena = arena, .diag = diag};
  Kernel *k = s.k = arena_alloc(arena, sizeof *k);
  k->name = b->name ? b->name : op->name;
  k->doc = op->doc;
  k->loc = op->loc;
  k->opdsl = op;
  k->tensors = arena_alloc(arena, sizeof(TensorParam) * (size_t)(op->nargs + 1));
  k->sizes = arena_alloc(arena, sizeof(SizeSym) * LG_MAX_DIMS * 4);
  k->attrs = arena_alloc(arena, sizeof(AttrParam) * (size_t)(op->nargs + 1));
  if (op->rank_polymorphic) {
    const OpdslChoice *c = choice(b, op->name, "rank");
    s.rank = b->rank;
    /* a graph call: the rank of the first tensor input (kernel order: inputs and scalars first) */
    for (int i = 0, t = 0; b->arg_ranks && i < op->nargs; i++) {
      const OpdslArg *a = &op->args[i];
      if (!is_operand(a) || a->kind == OA_OUTPUT)
        continue;
      if (a->kind == OA_INPUT && t < b->narg_info && b->arg_ranks[t] >= 0) {
        s.rank = b->arg_ranks[t];
        break;
      }
      t++;
    }
    if (c) {
      char *end;
      long v = strtol(c->value, &end, 10);
      if (!*c->value || *end || v < 0 || v > LG_MAX_RANK)
        inst_error(&s, c->loc, "--opdsl: rank '%s' is not an integer from 0 to %d", c->value, LG_MAX_RANK);
      s.rank = (int)v;
    }
    s.ndims = s.rank;
  } else {
    s.ndims = op->niters;
  }
  lower_tensors(&s);
  k->nops = 1;
  k->ops = arena_alloc(arena, sizeof(StructuredOp));
  lower_op(&s, &k->ops[0]);
  infer_domain(diag, arena, k, &k->ops[0]);
  return k;
}

/* ---- the command line's choices ---- */

OpdslChoice *opdsl_parse_choices(const char *text, int *count, Arena *arena, Diag *diag) {
  PtrVec items = {0};
  const char *p = text ? text : "";
  while (*p) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char *item = arena_strndup(arena, p, n);
    p += n + (end ? 1 : 0);
    if (!*item)
      continue;
    const char *whole = arena_strdup(arena, item); /* item is cut at '=' and '.' below */
    char *eq = strchr(item, '=');
    if (!eq || eq == item || !eq[1])
      diag_error(diag, (Loc){0}, "--opdsl: '%s' is not KEY=VALUE (like U=i32, matmul.U=i32 or rank=2)", item);
    *eq = '\0';
    OpdslChoice *c = arena_alloc(arena, sizeof *c);
    char *dot = strchr(item, '.');
    if (dot) {
      *dot = '\0';
      c->op = item;
      c->key = dot + 1;
    } else {
      c->key = item;
    }
    c->value = eq + 1;
    if (!*c->key || (c->op && !*c->op))
      diag_error(diag, (Loc){0}, "--opdsl: '%s' is not [OP.]KEY=VALUE", whole);
    vec_push(arena, &items, c);
  }
  OpdslChoice *out = arena_alloc(arena, sizeof *out * (size_t)(items.len + 1));
  for (int i = 0; i < items.len; i++)
    out[i] = *(OpdslChoice *)items.items[i];
  *count = items.len;
  return out;
}

/* Whether an op of the file can use choice c (warns about typos). */
static bool choice_fits(const OpdslOp *op, const OpdslChoice *c) {
  if (c->op && strcmp(c->op, op->name) != 0)
    return false;
  if (strcmp(c->key, "rank") == 0)
    return op->rank_polymorphic;
  for (int i = 0; i < op->nargs; i++) {
    const OpdslArg *a = &op->args[i];
    if ((is_operand(a) && a->type_var && strcmp(a->type_var, c->key) == 0) ||
        (a->kind >= OA_UNARY_FN && strcmp(a->name, c->key) == 0))
      return true;
  }
  return false;
}

void opdsl_lower(const OpdslFile *file, Module *module, const OpdslChoice *choices, int nchoices, Arena *arena,
                 Diag *diag) {
  OpdslBinding b = {.choices = choices, .nchoices = nchoices, .rank = 1};
  for (int i = 0; i < file->ops.len; i++) {
    const OpdslOp *op = file->ops.items[i];
    for (int j = 0; j < module->kernels.len; j++) {
      const Kernel *other = module->kernels.items[j];
      if (strcmp(other->name, op->name) == 0)
        diag_error(diag, op->loc, "op '%s' is defined twice (first at %s:%d)", op->name, other->loc.src->name,
                   other->loc.line);
    }
    vec_push(arena, &module->kernels, opdsl_instantiate(op, &b, arena, diag));
  }
}

void opdsl_check_choices(const PtrVec *files, const OpdslChoice *choices, int nchoices, Diag *diag) {
  for (int c = 0; c < nchoices; c++) {
    bool used = false;
    for (int f = 0; f < files->len && !used; f++) {
      const OpdslFile *file = files->items[f];
      for (int i = 0; i < file->ops.len && !used; i++)
        used = choice_fits(file->ops.items[i], &choices[c]);
    }
    if (!used && choices[c].op)
      diag_warning(diag, (Loc){0}, "--opdsl: no OpDSL op '%s' has a type variable, fn attribute or rank named '%s'",
                   choices[c].op, choices[c].key);
    else if (!used)
      diag_warning(diag, (Loc){0}, "--opdsl: no OpDSL op has a type variable, fn attribute or rank named '%s'",
                   choices[c].key);
  }
}
