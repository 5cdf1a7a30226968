/* lower.c - a Graph as one Kernel of structured ops (see graph.h; ops.md is
 * the meaning of every op).
 *
 * Tensors, in this order: graph inputs and outputs (parameters), the
 * constants that live nodes read (embedded data), then node results in node
 * order: intermediates (workspace) and aliases (a row-major reshape of a
 * tensor is that tensor's memory seen with another shape, so it costs no
 * op). A graph output written by its node is that node's result directly;
 * an output that is an input, a constant, an alias or listed twice gets a
 * copy op.
 *
 * Ops follow the nodes: elementwise ops and layout copies are one parallel
 * op each with NumPy-broadcast or layout maps; reductions, contractions,
 * convolutions and pools are a fill of the identity followed by an
 * accumulation `out = combine(out, x)` (the form analysis/reduce.c
 * recognises). Padded windows read a padded copy of their input, written by
 * a copy op whose guarded read gives the pad value outside the tensor (the
 * window op itself then reads plain memory). Nodes nothing needs (no
 * output depends on them) are dropped. */
#include "analysis/analysis.h"
#include "analysis/poly.h"
#include "graph/graph.h"
#include "graph/lower_ext.h"

#include <math.h>
#include <string.h>

enum { MAX_OPERANDS = 16, MAX_NODES = 96 };

struct Lower {
  const Graph *g;
  Arena *arena;
  Diag *diag;
  PtrVec tensors;   /* TensorParam* */
  PtrVec ops;       /* StructuredOp* */
  int *tensor_of;   /* per value: its kernel tensor, -1 if none yet */
  bool *live;       /* per value: some output depends on it */
  const GraphNode *node; /* the node being lowered */
  Loc loc;          /* its location */
  struct OpBuilder *spare; /* builders op_end is done with, for op_begin to reuse */
};

/* One StructuredOp under construction (10 KB: one per op, kept in the
 * arena, was most of the memory a chain of 10^5 nodes took). */
typedef struct OpBuilder {
  Lower *L;
  struct OpBuilder *next_spare;
  int ndims;
  Dim dims[LG_MAX_DIMS];
  int noperands;
  Operand operands[MAX_OPERANDS];
  int nnodes;
  PayloadNode nodes[MAX_NODES];
  int nyields;
  Yield yields[MAX_OPERANDS];
} OpBuilder;

/* ---- affine helpers (folding constants keeps maps readable and bounds provable) ---- */

static bool is_const(const AffineExpr *e, int64_t v) { return e->kind == AE_CONST && e->value == v; }

static AffineExpr *cst(Lower *L, int64_t v) { return affine_const(L->arena, v); }

static AffineExpr *dim_ref(Lower *L, int d) { return affine_leaf(L->arena, AE_DIM, d, 0); }

static AffineExpr *add(Lower *L, AffineExpr *a, AffineExpr *b) {
  if (a->kind == AE_CONST && b->kind == AE_CONST)
    return cst(L, a->value + b->value);
  if (is_const(b, 0))
    return a;
  if (is_const(a, 0))
    return b;
  return affine_binary(L->arena, AE_ADD, a, b);
}

static AffineExpr *sub(Lower *L, AffineExpr *a, AffineExpr *b) {
  if (a->kind == AE_CONST && b->kind == AE_CONST)
    return cst(L, a->value - b->value);
  if (is_const(b, 0))
    return a;
  return affine_binary(L->arena, AE_SUB, a, b);
}

static AffineExpr *mul(Lower *L, AffineExpr *a, AffineExpr *b) {
  if (a->kind == AE_CONST && b->kind == AE_CONST)
    return cst(L, a->value * b->value);
  if (is_const(a, 1))
    return b;
  if (is_const(b, 1))
    return a;
  if (is_const(a, 0) || is_const(b, 0))
    return cst(L, 0);
  return affine_binary(L->arena, AE_MUL, a, b);
}

static AffineExpr *floordiv(Lower *L, AffineExpr *a, AffineExpr *b) {
  if (is_const(b, 1))
    return a;
  if (a->kind == AE_CONST && b->kind == AE_CONST && a->value >= 0 && b->value > 0)
    return cst(L, a->value / b->value);
  return affine_binary(L->arena, AE_FLOORDIV, a, b);
}

static bool same_extent(Arena *arena, const AffineExpr *a, const AffineExpr *b) {
  if (affine_equal(a, b))
    return true;
  Poly *pa = poly_from_affine(arena, a), *pb = poly_from_affine(arena, b);
  return pa && pb && poly_is_zero(poly_add(arena, pa, pb, -1));
}

static AffineExpr **new_map(Lower *L, int rank) {
  return arena_alloc(L->arena, sizeof(AffineExpr *) * (size_t)(rank ? rank : 1));
}

/* ---- graph access ---- */

static const GraphValue *value(Lower *L, int v) { return GRAPH_VALUE(L->g, v); }
static const GraphValue *in(Lower *L, int i) { return value(L, L->node->inputs[i]); }
static const GraphValue *out(Lower *L, int i) { return value(L, L->node->outputs[i]); }
static bool has_input(Lower *L, int i) { return i < L->node->ninputs && L->node->inputs[i] >= 0; }

static const GraphAttr *attr(Lower *L, const char *name) {
  for (int i = 0; i < L->node->nattrs; i++)
    if (strcmp(L->node->attrs[i].name, name) == 0)
      return &L->node->attrs[i];
  return NULL;
}

static int64_t attr_int(Lower *L, const char *name, int64_t dflt) {
  const GraphAttr *a = attr(L, name);
  return a && a->kind == GA_INT ? a->i : dflt;
}

static double attr_float(Lower *L, const char *name, double dflt) {
  const GraphAttr *a = attr(L, name);
  if (!a)
    return dflt;
  return a->kind == GA_FLOAT ? a->f : a->kind == GA_INT ? (double)a->i : dflt;
}

/* Element i of an int list attribute (GA_INTS), or dflt when absent or short. */
static int64_t attr_ints_at(Lower *L, const char *name, int i, int64_t dflt) {
  const GraphAttr *a = attr(L, name);
  return a && a->kind == GA_INTS && i < a->n ? a->ints[i] : dflt;
}

/* Padding of spatial dim i: [lo, hi] pairs (GA_INTS2; a flat GA_INTS as ONNX's begins then ends). */
static void attr_pad(Lower *L, const char *name, int i, int nsp, int64_t *lo, int64_t *hi) {
  const GraphAttr *a = attr(L, name);
  *lo = *hi = 0;
  if (a && a->kind == GA_INTS2 && i < a->n) {
    *lo = a->ints[2 * i];
    *hi = a->ints[2 * i + 1];
  } else if (a && a->kind == GA_INTS && a->n == 2 * nsp) {
    *lo = a->ints[i];
    *hi = a->ints[nsp + i];
  }
}

static LG_NORETURN void node_error(Lower *L, const char *msg) {
  graph_error(L->g, L->node->path, "%s%s", graph_node_desc(L->g, L->node), msg);
}

/* ---- tensors ---- */

static int add_tensor(Lower *L, const char *name, ElemType type, int rank, AffineExpr **shape, TensorStorage storage,
                      bool is_output, const char *path) {
  TensorParam *t = arena_alloc(L->arena, sizeof *t);
  t->name = name;
  t->type = type;
  t->rank = rank;
  t->shape = shape ? shape : new_map(L, rank);
  t->storage = storage;
  t->is_output = is_output;
  t->alias_of = -1;
  t->loc = path ? graph_loc(L->g, path) : L->loc;
  vec_push(L->arena, &L->tensors, t);
  return L->tensors.len - 1;
}

static TensorParam *tensor(Lower *L, int t) { return L->tensors.items[t]; }

static int value_tensor(Lower *L, const GraphValue *v, TensorStorage storage, bool is_output) {
  int t = add_tensor(L, v->name, v->type, v->rank, v->shape, storage, is_output, NULL);
  /* A node's result is where its node is (L->loc): no second lookup by the
   * front-end's locator for every intermediate. */
  tensor(L, t)->loc = v->kind == GV_NODE && L->node ? L->loc : graph_loc(L->g, v->path ? v->path : "");
  return t;
}

static int root_tensor(Lower *L, int t) {
  while (tensor(L, t)->storage == TS_ALIAS)
    t = tensor(L, t)->alias_of;
  return t;
}

/* The tensor a node reads for input i. */
static int read_tensor(Lower *L, int i) {
  int t = L->tensor_of[L->node->inputs[i]];
  if (t < 0)
    diag_bug(L->diag, "graph lowering: value '%s' is read before it is computed", in(L, i)->name);
  return t;
}

/* The tensor a node writes its output i into: the output parameter, or a new intermediate. */
static int write_tensor(Lower *L, int i) {
  int v = L->node->outputs[i];
  if (L->tensor_of[v] < 0)
    L->tensor_of[v] = value_tensor(L, value(L, v), TS_WORKSPACE, true);
  return L->tensor_of[v];
}

/* ---- the op builder ---- */

static OpBuilder *op_begin(Lower *L) {
  OpBuilder *b = L->spare;
  if (b) {
    L->spare = b->next_spare;
    memset(b, 0, sizeof *b);
  } else {
    b = arena_alloc(L->arena, sizeof *b);
  }
  b->L = L;
  return b;
}

static int op_dim(OpBuilder *b, const char *name, IterKind kind, AffineExpr *extent) {
  if (b->ndims == LG_MAX_DIMS)
    graph_error(b->L->g, b->L->node->path, "%smore than %d loop dims in one op", graph_node_desc(b->L->g, b->L->node),
                LG_MAX_DIMS);
  b->dims[b->ndims] = (Dim){.name = name, .kind = kind, .extent = extent, .extent_operand = -1, .extent_pos = -1,
                            .loc = b->L->loc};
  return b->ndims++;
}

/* Parallel dims over a shape, named prefix0, prefix1, ...; returns the first. */
static int op_dims_over(OpBuilder *b, const char *prefix, int rank, AffineExpr **shape) {
  int first = b->ndims;
  for (int i = 0; i < rank; i++)
    op_dim(b, arena_printf(b->L->arena, "%s%d", prefix, i), ITER_PARALLEL, shape[i]);
  return first;
}

static int op_operand(OpBuilder *b, int t, AffineExpr **map) {
  if (b->noperands == MAX_OPERANDS)
    diag_bug(b->L->diag, "graph lowering: too many operands in one op");
  b->operands[b->noperands] = (Operand){.tensor = t, .map = map, .loc = b->L->loc};
  return b->noperands++;
}

/* An operand reading t through dims first.. in order. */
static int op_bare(OpBuilder *b, int t, int first) {
  int rank = tensor(b->L, t)->rank;
  AffineExpr **map = new_map(b->L, rank);
  for (int i = 0; i < rank; i++)
    map[i] = dim_ref(b->L, first + i);
  return op_operand(b, t, map);
}

/* An input of rank <= the op's output rank, NumPy-broadcast: trailing dims
 * aligned; an extent-1 dim where the output's is not reads index 0. */
static int op_broadcast(OpBuilder *b, int t, int first, AffineExpr **out_shape, int out_rank) {
  const TensorParam *p = tensor(b->L, t);
  AffineExpr **map = new_map(b->L, p->rank);
  for (int i = 0; i < p->rank; i++) {
    int j = out_rank - p->rank + i;
    bool stretched = is_const(p->shape[i], 1) && !is_const(out_shape[j], 1);
    map[i] = stretched ? cst(b->L, 0) : dim_ref(b->L, first + j);
  }
  return op_operand(b, t, map);
}

static int op_node(OpBuilder *b, PayloadNode n) {
  if (b->nnodes == MAX_NODES)
    diag_bug(b->L->diag, "graph lowering: payload too large");
  n.loc = b->L->loc;
  b->nodes[b->nnodes] = n;
  return b->nnodes++;
}

static ElemType node_type(OpBuilder *b, int n) { return b->nodes[n].type; }

static int op_read(OpBuilder *b, int operand) {
  return op_node(b, (PayloadNode){.kind = PN_READ, .type = tensor(b->L, b->operands[operand].tensor)->type,
                                  .operand = operand});
}

/* A constant of type t: floats hold v, integers v saturated to t's range
 * (a clip bound of -1 on u8 is 0, which clips the same). */
static int op_const(OpBuilder *b, ElemType t, double v) {
  PayloadNode n = {.kind = PN_CONST, .type = t};
  if (elem_type_is_float(t))
    n.fvalue = v;
  else
    n.ivalue = elem_int_saturate(t, v);
  return op_node(b, n);
}

/* An integer constant: v as elem_int_wrap gives it (u64: its bits). */
static int op_const_i(OpBuilder *b, ElemType t, int64_t v) {
  return op_node(b, (PayloadNode){.kind = PN_CONST, .type = t, .ivalue = v, .fvalue = elem_int_to_double(t, v)});
}

/* A scalar op on earlier nodes; its type follows the op table's result
 * rule. On unsigned operands a signed op becomes its unsigned form
 * (cmpi_sgt -> cmpi_ugt, divis -> diviu, ...), so that lowering says
 * "greater" once for every integer type. */
static int op_apply(OpBuilder *b, ScalarOp op, int a0, int a1, int a2) {
  ElemType t = node_type(b, op == SOP_SELECT ? a1 : a0);
  if (elem_type_is_unsigned(t))
    op = scalar_op_info(op)->unsigned_form;
  PayloadNode n = {.kind = PN_OP, .op = op, .nargs = scalar_op_info(op)->arity, .args = {a0, a1, a2}};
  switch (scalar_op_info(op)->result) {
  case SOR_BOOL:
    t = TY_I1;
    break;
  case SOR_I32:
    t = TY_I32;
    break;
  case SOR_WIDER:
    t = t == TY_F16 ? TY_F32 : TY_F64;
    break;
  case SOR_NARROWER:
    t = t == TY_F64 ? TY_F32 : TY_F16;
    break;
  default:
    break;
  }
  n.type = t;
  return op_node(b, n);
}

static int op1(OpBuilder *b, ScalarOp op, int x) { return op_apply(b, op, x, 0, 0); }
static int op2(OpBuilder *b, ScalarOp op, int x, int y) { return op_apply(b, op, x, y, 0); }
static int op3(OpBuilder *b, ScalarOp op, int x, int y, int z) { return op_apply(b, op, x, y, z); }

static void op_yield(OpBuilder *b, int operand, int node) {
  b->yields[b->nyields++] = (Yield){.operand = operand, .value = node};
}

/* Each dim's extent source: the first operand indexing it bare with the same extent. */
static void locate_extents(OpBuilder *b) {
  for (int d = 0; d < b->ndims; d++)
    for (int o = 0; o < b->noperands && b->dims[d].extent_operand < 0; o++) {
      const TensorParam *t = tensor(b->L, b->operands[o].tensor);
      for (int p = 0; p < t->rank; p++)
        if (affine_is_dim(b->operands[o].map[p], d) && same_extent(b->L->arena, t->shape[p], b->dims[d].extent)) {
          b->dims[d].extent_operand = o;
          b->dims[d].extent_pos = p;
          break;
        }
    }
}

static void *copy_array(Lower *L, const void *items, size_t size, int n) {
  void *p = arena_alloc(L->arena, size * (size_t)(n ? n : 1));
  if (n)
    memcpy(p, items, size * (size_t)n);
  return p;
}

/* "fc1: MatMul" (or "MatMul"): the node being lowered, for the comment over
 * its ops in the C; NULL outside a node (the copies to outputs). */
static const char *node_origin(const Lower *L) {
  const GraphNode *n = L->node;
  if (!n)
    return NULL;
  const char *op = n->origin ? n->origin : graph_op_info(n->op)->name;
  return n->name && *n->name ? arena_printf(L->arena, "%s: %s", n->name, op) : op;
}

static void op_end(OpBuilder *b) {
  Lower *L = b->L;
  locate_extents(b);
  StructuredOp *op = arena_alloc(L->arena, sizeof *op);
  op->ndims = b->ndims;
  op->dims = copy_array(L, b->dims, sizeof(Dim), b->ndims);
  op->noperands = b->noperands;
  op->operands = copy_array(L, b->operands, sizeof(Operand), b->noperands);
  op->nnodes = b->nnodes;
  op->nodes = copy_array(L, b->nodes, sizeof(PayloadNode), b->nnodes);
  op->nyields = b->nyields;
  op->yields = copy_array(L, b->yields, sizeof(Yield), b->nyields);
  op->loc = L->loc;
  op->origin = node_origin(L);
  vec_push(L->arena, &L->ops, op);
  b->next_spare = L->spare; /* the caller is done with b */
  L->spare = b;
}

/* ---- scalar helpers ---- */

/* -inf / the lowest integer (high = false), +inf / the highest (high = true). */
static int op_extreme(OpBuilder *b, ElemType t, bool high) {
  if (elem_type_is_float(t))
    return op_const(b, t, high ? INFINITY : -INFINITY);
  return op_const_i(b, t, high ? elem_int_highest(t) : elem_int_lowest(t));
}

static double extreme_value(ElemType t, bool high) {
  if (elem_type_is_float(t))
    return high ? INFINITY : -INFINITY;
  return elem_int_to_double(t, high ? elem_int_highest(t) : elem_int_lowest(t));
}

/* COMB_MINU: unsigned min (OpDSL's min_unsigned); only its identity is used */
typedef enum { COMB_ADD, COMB_MUL, COMB_MAX, COMB_MIN, COMB_MINU } Comb;

/* combine(acc, x) in the accumulator forms analysis/reduce.c recognises. */
static int op_combine(OpBuilder *b, Comb c, int acc, int x) {
  bool f = elem_type_is_float(node_type(b, acc));
  switch (c) {
  case COMB_ADD:
    return op2(b, f ? SOP_ADDF : SOP_ADDI, acc, x);
  case COMB_MUL:
    return op2(b, f ? SOP_MULF : SOP_MULI, acc, x);
  case COMB_MAX:
    return f ? op2(b, SOP_MAXF, acc, x) : op3(b, SOP_SELECT, op2(b, SOP_CMPI_SGT, x, acc), x, acc);
  case COMB_MIN:
    return f ? op2(b, SOP_MINF, acc, x) : op3(b, SOP_SELECT, op2(b, SOP_CMPI_SLT, x, acc), x, acc);
  case COMB_MINU:
    return op2(b, SOP_MINUI, acc, x);
  }
  return acc;
}

static int op_identity(OpBuilder *b, ElemType t, Comb c) {
  switch (c) {
  case COMB_MUL:
    return op_const(b, t, 1);
  case COMB_MAX:
    return op_extreme(b, t, false);
  case COMB_MIN:
    return op_extreme(b, t, true);
  case COMB_MINU: /* all ones */
    return t == TY_I1 ? op_const_i(b, t, 1) : op_const_i(b, t, -1);
  default:
    return op_const(b, t, 0);
  }
}

/* ---- whole-tensor ops ---- */

/* t = the identity of c, everywhere. */
static void emit_fill(Lower *L, int t, Comb c) {
  OpBuilder *b = op_begin(L);
  const TensorParam *p = tensor(L, t);
  int first = op_dims_over(b, "d", p->rank, p->shape);
  int o = op_bare(b, t, first);
  op_yield(b, o, op_identity(b, p->type, c));
  op_end(b);
}

/* dst = src, both of one shape. */
static void emit_copy(Lower *L, int dst, int src) {
  OpBuilder *b = op_begin(L);
  const TensorParam *p = tensor(L, dst);
  int first = op_dims_over(b, "d", p->rank, p->shape);
  int o = op_bare(b, dst, first);
  op_yield(b, o, op_read(b, op_bare(b, src, first)));
  op_end(b);
}

/* dst = src in row-major order, shapes differing (a reshape into an output
 * parameter): dst's element at linear index l is src's at l. */
static void emit_reshape_copy(Lower *L, int dst, int src) {
  OpBuilder *b = op_begin(L);
  const TensorParam *p = tensor(L, dst), *q = tensor(L, src);
  int first = op_dims_over(b, "d", p->rank, p->shape);
  int o = op_bare(b, dst, first);
  AffineExpr *lin = cst(L, 0);
  for (int i = 0; i < p->rank; i++)
    lin = add(L, mul(L, lin, p->shape[i]), dim_ref(L, first + i));
  AffineExpr **map = new_map(L, q->rank);
  AffineExpr *stride = cst(L, 1);
  for (int i = q->rank - 1; i >= 0; i--) {
    AffineExpr *x = floordiv(L, lin, stride);
    map[i] = i == 0 ? x : affine_binary(L->arena, AE_MOD, x, q->shape[i]);
    stride = mul(L, stride, q->shape[i]);
  }
  op_yield(b, o, op_read(b, op_operand(b, src, map)));
  op_end(b);
}

/* ---- elementwise ---- */

/* The one scalar op graph op `op` is on floats (float_type) or integers
 * (elementwise.def); -1: none. */
static int direct_scalar_op(GraphOp op, bool float_type) {
  enum { SOP_NONE = -1 };
  static const struct {
    GraphOp op;
    int on_float, on_int;
  } table[] = {
#define E(G, F, I) {GOP_##G, SOP_##F, SOP_##I},
#include "graph/lower/elementwise.def"
#undef E
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].op == op)
      return float_type ? table[i].on_float : table[i].on_int;
  return -1;
}

static int unary_float(OpBuilder *b, GraphOp op, int x, ElemType t) {
  Lower *L = b->L;
  int direct = direct_scalar_op(op, true);
  if (direct >= 0)
    return op1(b, (ScalarOp)direct, x);
  switch (op) {
  case GOP_RSQRT:
    return op2(b, SOP_DIVF, op_const(b, t, 1), op1(b, SOP_SQRT, x));
  case GOP_RECIPROCAL:
    return op2(b, SOP_DIVF, op_const(b, t, 1), x);
  case GOP_SIGMOID:
    return op2(b, SOP_DIVF, op_const(b, t, 1), op2(b, SOP_ADDF, op_const(b, t, 1), op1(b, SOP_EXP, op1(b, SOP_NEGF, x))));
  case GOP_RELU:
    return op3(b, SOP_SELECT, op2(b, SOP_CMPF_OLT, x, op_const(b, t, 0)), op_const(b, t, 0), x);
  case GOP_GELU: {
    const GraphAttr *a = attr(L, "approximate");
    int half_x = op2(b, SOP_MULF, op_const(b, t, 0.5), x);
    int inner;
    if (a && a->kind == GA_STRING && strcmp(a->s, "tanh") == 0) {
      int x3 = op2(b, SOP_MULF, op2(b, SOP_MULF, x, x), x);
      int poly = op2(b, SOP_ADDF, x, op2(b, SOP_MULF, op_const(b, t, 0.044715), x3));
      inner = op1(b, SOP_TANH, op2(b, SOP_MULF, op_const(b, t, sqrt(2.0 / 3.14159265358979323846)), poly));
    } else {
      inner = op1(b, SOP_ERF, op2(b, SOP_DIVF, x, op_const(b, t, sqrt(2.0))));
    }
    return op2(b, SOP_MULF, half_x, op2(b, SOP_ADDF, op_const(b, t, 1), inner));
  }
  case GOP_LEAKY_RELU: {
    int ax = op2(b, SOP_MULF, op_const(b, t, attr_float(L, "alpha", 0.01)), x);
    return op3(b, SOP_SELECT, op2(b, SOP_CMPF_OLT, x, op_const(b, t, 0)), ax, x);
  }
  case GOP_ELU: {
    int em1 = op2(b, SOP_SUBF, op1(b, SOP_EXP, x), op_const(b, t, 1));
    int neg = op2(b, SOP_MULF, op_const(b, t, attr_float(L, "alpha", 1.0)), em1);
    return op3(b, SOP_SELECT, op2(b, SOP_CMPF_OLT, x, op_const(b, t, 0)), neg, x);
  }
  case GOP_SELU: {
    int alpha = op_const(b, t, attr_float(L, "alpha", 1.67326319217681884765625));
    int gamma = op_const(b, t, attr_float(L, "gamma", 1.05070102214813232421875));
    int pos = op2(b, SOP_MULF, gamma, x);
    int neg = op2(b, SOP_MULF, gamma, op2(b, SOP_SUBF, op2(b, SOP_MULF, alpha, op1(b, SOP_EXP, x)), alpha));
    return op3(b, SOP_SELECT, op2(b, SOP_CMPF_OGT, x, op_const(b, t, 0)), pos, neg);
  }
  case GOP_CELU: {
    int alpha = op_const(b, t, attr_float(L, "alpha", 1.0));
    int em1 = op2(b, SOP_SUBF, op1(b, SOP_EXP, op2(b, SOP_DIVF, x, alpha)), op_const(b, t, 1));
    int neg = op2(b, SOP_MINF, op_const(b, t, 0), op2(b, SOP_MULF, alpha, em1));
    return op2(b, SOP_ADDF, op2(b, SOP_MAXF, op_const(b, t, 0), x), neg);
  }
  case GOP_HARD_SIGMOID: {
    int lin = op2(b, SOP_ADDF, op2(b, SOP_MULF, op_const(b, t, attr_float(L, "alpha", 0.2)), x),
                  op_const(b, t, attr_float(L, "beta", 0.5)));
    return op2(b, SOP_MAXF, op_const(b, t, 0), op2(b, SOP_MINF, op_const(b, t, 1), lin));
  }
  case GOP_HARD_SWISH: {
    int lin = op2(b, SOP_ADDF, op2(b, SOP_DIVF, x, op_const(b, t, 6)), op_const(b, t, 0.5));
    return op2(b, SOP_MULF, x, op2(b, SOP_MAXF, op_const(b, t, 0), op2(b, SOP_MINF, op_const(b, t, 1), lin)));
  }
  case GOP_SIN: return op1(b, SOP_SIN, x);
  case GOP_COS: return op1(b, SOP_COS, x);
  case GOP_TAN: return op1(b, SOP_TAN, x);
  case GOP_ASIN: return op1(b, SOP_ASIN, x);
  case GOP_ACOS: return op1(b, SOP_ACOS, x);
  case GOP_ATAN: return op1(b, SOP_ATAN, x);
  case GOP_SINH: return op1(b, SOP_SINH, x);
  case GOP_COSH: return op1(b, SOP_COSH, x);
  case GOP_ASINH: return op1(b, SOP_ASINH, x);
  case GOP_ACOSH: return op1(b, SOP_ACOSH, x);
  case GOP_ATANH: return op1(b, SOP_ATANH, x);
  case GOP_ROUND: return op1(b, SOP_ROUNDEVENF, x);
  case GOP_SIGN: /* x > 0 ? 1 : x < 0 ? -1 : x (0 and NaN stay) */
    return op3(b, SOP_SELECT, op2(b, SOP_CMPF_OGT, x, op_const(b, t, 0)), op_const(b, t, 1),
               op3(b, SOP_SELECT, op2(b, SOP_CMPF_OLT, x, op_const(b, t, 0)), op_const(b, t, -1), x));
  case GOP_SOFTPLUS: /* max(x, 0) + log(1 + exp(-|x|)): exp(x) would overflow from x = 89 (f32), 11 (f16) */
    return op2(b, SOP_ADDF, op2(b, SOP_MAXF, x, op_const(b, t, 0)),
               op1(b, SOP_LOG, op2(b, SOP_ADDF, op_const(b, t, 1), op1(b, SOP_EXP, op1(b, SOP_NEGF, op1(b, SOP_ABSF, x))))));
  default:
    return -1;
  }
}

static int unary_int(OpBuilder *b, GraphOp op, int x, ElemType t) {
  /* unsigned values are their own absolute value and never negative (and
   * x < 0 on them would be a comparison compilers warn about) */
  if (elem_type_is_unsigned(t) && (op == GOP_ABS || op == GOP_RELU))
    return x;
  int direct = direct_scalar_op(op, false);
  if (direct >= 0)
    return op1(b, (ScalarOp)direct, x);
  switch (op) {
  case GOP_NEG:
    return op2(b, SOP_SUBI, op_const(b, t, 0), x);
  case GOP_ABS:
    return op3(b, SOP_SELECT, op2(b, SOP_CMPI_SLT, x, op_const(b, t, 0)), op2(b, SOP_SUBI, op_const(b, t, 0), x), x);
  case GOP_RELU:
    return op3(b, SOP_SELECT, op2(b, SOP_CMPI_SLT, x, op_const(b, t, 0)), op_const(b, t, 0), x);
  case GOP_SIGN: /* i1: itself; unsigned: 0 or 1 (no x < 0, which compilers warn of) */
    if (t == TY_I1)
      return x;
    if (elem_type_is_unsigned(t))
      return op3(b, SOP_SELECT, op2(b, SOP_CMPI_SGT, x, op_const(b, t, 0)), op_const(b, t, 1), op_const(b, t, 0));
    return op3(b, SOP_SELECT, op2(b, SOP_CMPI_SGT, x, op_const(b, t, 0)), op_const(b, t, 1),
               op3(b, SOP_SELECT, op2(b, SOP_CMPI_SLT, x, op_const(b, t, 0)), op_const(b, t, -1), op_const(b, t, 0)));
  default:
    return -1;
  }
}

static int clip(OpBuilder *b, int x, ElemType t) {
  const GraphAttr *lo = attr(b->L, "min"), *hi = attr(b->L, "max");
  bool f = elem_type_is_float(t);
  if (lo)
    x = op2(b, f ? SOP_MAXF : SOP_MAXSI, x, op_const(b, t, attr_float(b->L, "min", 0)));
  if (hi)
    x = op2(b, f ? SOP_MINF : SOP_MINSI, x, op_const(b, t, attr_float(b->L, "max", 0)));
  return x;
}

static int unary(OpBuilder *b, GraphOp op, int x, ElemType t, ElemType result) {
  if (op == GOP_COPY)
    return x;
  if (op == GOP_CLIP)
    return clip(b, x, t);
  if (op == GOP_CAST) {
    if (t == result)
      return x;
    int n = op1(b, SOP_CAST, x);
    b->nodes[n].type = result; /* lgen_cast's result type is the producer's choice */
    return n;
  }
  int r = elem_type_is_float(t) ? unary_float(b, op, x, t) : unary_int(b, op, x, t);
  if (r < 0)
    node_error(b->L, elem_type_is_float(t) ? "this op cannot be lowered yet"
                                           : "this op takes floating-point inputs");
  return r;
}

/* x mod y (the divisor's sign) or x fmod y (the dividend's): C's
 * remainder, fmod for floats and x - (x / y) y for integers (truncating,
 * as C's %), then for mod y added to a non-zero remainder of the other
 * sign, as NumPy does (unsigned remainders are never negative: the two
 * agree). */
static int remainder_op(OpBuilder *b, GraphOp op, int x, int y, ElemType t) {
  bool f = elem_type_is_float(t);
  int r = f ? op2(b, SOP_REMF, x, y) : op2(b, SOP_SUBI, x, op2(b, SOP_MULI, op2(b, SOP_DIVIS, x, y), y));
  if (op == GOP_FMOD || elem_type_is_unsigned(t))
    return r;
  ScalarOp lt = f ? SOP_CMPF_OLT : SOP_CMPI_SLT, gt = f ? SOP_CMPF_OGT : SOP_CMPI_SGT;
  int zero = op_const(b, t, 0);
  int other_sign = op3(b, SOP_SELECT, op2(b, lt, r, zero), op2(b, gt, y, zero),
                       op2(b, SOP_ANDI, op2(b, gt, r, zero), op2(b, lt, y, zero)));
  return op3(b, SOP_SELECT, other_sign, op2(b, f ? SOP_ADDF : SOP_ADDI, r, y), r);
}

static int binary(OpBuilder *b, GraphOp op, int x, int y, ElemType t) {
  bool f = elem_type_is_float(t);
  if (op == GOP_MOD || op == GOP_FMOD)
    return remainder_op(b, op, x, y, t);
  int direct = direct_scalar_op(op, f);
  if (direct < 0)
    node_error(b->L, f ? "this op takes integer inputs" : "this op takes floating-point inputs");
  return op2(b, (ScalarOp)direct, x, y);
}

static void lower_elementwise(Lower *L) {
  const GraphNode *n = L->node;
  const GraphValue *y = out(L, 0);
  int yt = write_tensor(L, 0);
  OpBuilder *b = op_begin(L);
  int first = op_dims_over(b, "d", y->rank, y->shape);
  int o = op_bare(b, yt, first);
  int x[3];
  for (int i = 0; i < n->ninputs; i++)
    x[i] = op_read(b, op_broadcast(b, read_tensor(L, i), first, y->shape, y->rank));
  ElemType t = in(L, n->ninputs - 1)->type; /* where: the type of a and b */
  int r;
  if (n->op == GOP_WHERE)
    r = op3(b, SOP_SELECT, x[0], x[1], x[2]);
  else if (n->ninputs == 1)
    r = unary(b, n->op, x[0], t, y->type);
  else
    r = binary(b, n->op, x[0], x[1], t);
  op_yield(b, o, r);
  op_end(b);
}

/* ---- contractions ---- */

/* Batch positions 0..nb-1 of an operand of rank `rank`, broadcast against the
 * output's batch dims 0..out_nb-1. */
static void batch_map(Lower *L, AffineExpr **map, const GraphValue *x, int nb, const GraphValue *y, int out_nb) {
  for (int p = 0; p < nb; p++) {
    int j = out_nb - nb + p;
    bool stretched = is_const(x->shape[p], 1) && !is_const(y->shape[j], 1);
    map[p] = stretched ? cst(L, 0) : dim_ref(L, j);
  }
}

/* matmul (NumPy), matvec, vecmat, dot, batch_matmul: out += a * b over k. */
static void lower_matmul(Lower *L) {
  const GraphValue *a = in(L, 0), *bv = in(L, 1), *y = out(L, 0);
  int yt = write_tensor(L, 0);
  emit_fill(L, yt, COMB_ADD);
  bool a_mat = a->rank >= 2, b_mat = bv->rank >= 2;
  int nbatch = y->rank - a_mat - b_mat;
  OpBuilder *b = op_begin(L);
  for (int j = 0; j < nbatch; j++)
    op_dim(b, arena_printf(L->arena, "b%d", j), ITER_PARALLEL, y->shape[j]);
  int m = a_mat ? op_dim(b, "m", ITER_PARALLEL, y->shape[nbatch]) : -1;
  int n = b_mat ? op_dim(b, "n", ITER_PARALLEL, y->shape[y->rank - 1]) : -1;
  int k = op_dim(b, "k", ITER_REDUCTION, a->shape[a->rank - 1]);
  int o = op_bare(b, yt, 0);
  AffineExpr **ma = new_map(L, a->rank), **mb = new_map(L, bv->rank);
  batch_map(L, ma, a, a->rank - 2, y, nbatch);
  batch_map(L, mb, bv, bv->rank - 2, y, nbatch);
  if (a_mat)
    ma[a->rank - 2] = dim_ref(L, m);
  ma[a->rank - 1] = dim_ref(L, k);
  if (b_mat) {
    mb[bv->rank - 2] = dim_ref(L, k);
    mb[bv->rank - 1] = dim_ref(L, n);
  } else {
    mb[0] = dim_ref(L, k);
  }
  int xa = op_read(b, op_operand(b, read_tensor(L, 0), ma));
  int xb = op_read(b, op_operand(b, read_tensor(L, 1), mb));
  bool f = elem_type_is_float(y->type);
  int prod = op2(b, f ? SOP_MULF : SOP_MULI, xa, xb);
  op_yield(b, o, op_combine(b, COMB_ADD, op_read(b, o), prod));
  op_end(b);
}

static bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* einsum: one dim per letter (output letters first, parallel; the rest summed). */
static void lower_einsum(Lower *L) {
  const GraphNode *nd = L->node;
  const GraphAttr *eq = attr(L, "equation");
  if (!eq || eq->kind != GA_STRING)
    node_error(L, "einsum needs an equation");
  const char *arrow = strstr(eq->s, "->");
  if (!arrow)
    node_error(L, "einsum equation without '->' (the builder makes it explicit)");
  const GraphValue *y = out(L, 0);
  int letter_dim[128];
  for (int i = 0; i < 128; i++)
    letter_dim[i] = -1;
  OpBuilder *b = op_begin(L);
  int yt = write_tensor(L, 0);
  /* output letters */
  AffineExpr **ymap = new_map(L, y->rank);
  int pos = 0;
  for (const char *p = arrow + 2; *p; p++) {
    if (!is_letter(*p))
      continue;
    if (pos >= y->rank || letter_dim[(int)*p] >= 0)
      node_error(L, "einsum output term does not match the result (a letter repeated, or a wrong count)");
    letter_dim[(int)*p] = op_dim(b, arena_printf(L->arena, "%c", *p), ITER_PARALLEL, y->shape[pos]);
    ymap[pos++] = dim_ref(L, letter_dim[(int)*p]);
  }
  /* input terms: their maps, and the summed letters' dims */
  AffineExpr **maps[8];
  int term = 0;
  pos = 0;
  maps[0] = new_map(L, in(L, 0)->rank);
  for (const char *p = eq->s; p < arrow; p++) {
    if (*p == ',') {
      if (pos != in(L, term)->rank)
        node_error(L, "einsum term shorter than its input's rank");
      if (++term >= nd->ninputs)
        node_error(L, "einsum equation has more terms than inputs");
      maps[term] = new_map(L, in(L, term)->rank);
      pos = 0;
      continue;
    }
    if (!is_letter(*p))
      continue;
    const GraphValue *x = in(L, term);
    if (pos >= x->rank)
      node_error(L, "einsum term longer than its input's rank");
    if (letter_dim[(int)*p] < 0)
      letter_dim[(int)*p] = op_dim(b, arena_printf(L->arena, "%c", *p), ITER_REDUCTION, x->shape[pos]);
    maps[term][pos++] = dim_ref(L, letter_dim[(int)*p]);
  }
  if (term != nd->ninputs - 1 || pos != in(L, term)->rank)
    node_error(L, "einsum equation does not match its inputs");
  bool reduces = false;
  for (int d = 0; d < b->ndims; d++)
    reduces |= b->dims[d].kind == ITER_REDUCTION;
  int o = op_operand(b, yt, ymap);
  bool f = elem_type_is_float(y->type);
  int prod = -1;
  for (int i = 0; i < nd->ninputs; i++) {
    int x = op_read(b, op_operand(b, read_tensor(L, i), maps[i]));
    prod = prod < 0 ? x : op2(b, f ? SOP_MULF : SOP_MULI, prod, x);
  }
  if (reduces) {
    emit_fill(L, yt, COMB_ADD);
    prod = op_combine(b, COMB_ADD, op_read(b, o), prod);
  }
  op_yield(b, o, prod);
  op_end(b);
}

/* ---- windows: convolutions and pooling ---- */

typedef struct {
  int nsp;
  int64_t stride[LG_MAX_RANK], dilation[LG_MAX_RANK], lo[LG_MAX_RANK], hi[LG_MAX_RANK];
  bool padded; /* some index may leave the input */
} Window;

static void read_window(Lower *L, Window *w, int nsp) {
  w->nsp = nsp;
  w->padded = attr_int(L, "ceil_mode", 0) != 0;
  for (int i = 0; i < nsp; i++) {
    w->stride[i] = attr_ints_at(L, "strides", i, 1);
    w->dilation[i] = attr_ints_at(L, "dilations", i, 1);
    attr_pad(L, "padding", i, nsp, &w->lo[i], &w->hi[i]);
    w->padded |= w->lo[i] != 0 || w->hi[i] != 0;
  }
}

/* o * stride + k * dilation - lo */
static AffineExpr *window_index(Lower *L, const Window *w, int i, int o, int k) {
  AffineExpr *x = add(L, mul(L, dim_ref(L, o), cst(L, w->stride[i])), mul(L, dim_ref(L, k), cst(L, w->dilation[i])));
  return sub(L, x, cst(L, w->lo[i]));
}

typedef enum { FILTER_SPATIAL_FIRST, FILTER_F_FIRST, FILTER_DEPTHWISE } FilterLayout;

typedef struct {
  int nsp;
  bool channels_first; /* input and output N C S... (else N S... C) */
  FilterLayout filter; /* K... C F; F C K...; K... C */
} ConvLayout;

static ConvLayout conv_layout(Lower *L) {
  switch (L->node->op) {
  case GOP_CONV_1D_NWC_WCF:
    return (ConvLayout){1, false, FILTER_SPATIAL_FIRST};
  case GOP_CONV_2D_NHWC_HWCF:
    return (ConvLayout){2, false, FILTER_SPATIAL_FIRST};
  case GOP_CONV_3D_NDHWC_DHWCF:
    return (ConvLayout){3, false, FILTER_SPATIAL_FIRST};
  case GOP_CONV_1D_NCW_FCW:
    return (ConvLayout){1, true, FILTER_F_FIRST};
  case GOP_CONV_2D_NCHW_FCHW:
    return (ConvLayout){2, true, FILTER_F_FIRST};
  case GOP_CONV_3D_NCDHW_FCDHW:
    return (ConvLayout){3, true, FILTER_F_FIRST};
  case GOP_DEPTHWISE_CONV_2D_NHWC_HWC:
    return (ConvLayout){2, false, FILTER_DEPTHWISE};
  default:
    return (ConvLayout){in(L, 0)->rank - 2, true, FILTER_F_FIRST};
  }
}

/* The output's dims in its order (n, then channel and spatial in layout order). */
static void window_out_dims(OpBuilder *b, const GraphValue *y, bool channels_first, const char *channel, int *n,
                            int *ch, int *o) {
  int nsp = y->rank - 2;
  *n = op_dim(b, "n", ITER_PARALLEL, y->shape[0]);
  if (channels_first)
    *ch = op_dim(b, channel, ITER_PARALLEL, y->shape[1]);
  for (int i = 0; i < nsp; i++)
    o[i] = op_dim(b, arena_printf(b->L->arena, "o%d", i), ITER_PARALLEL, y->shape[channels_first ? 2 + i : 1 + i]);
  if (!channels_first)
    *ch = op_dim(b, channel, ITER_PARALLEL, y->shape[y->rank - 1]);
}

/* Input map [n, ch, spatial...] or [n, spatial..., ch]. */
static AffineExpr **window_input_map(Lower *L, const Window *w, int rank, bool channels_first, int n,
                                     AffineExpr *ch, const int *o, const int *k) {
  AffineExpr **map = new_map(L, rank);
  map[0] = dim_ref(L, n);
  map[channels_first ? 1 : rank - 1] = ch;
  for (int i = 0; i < w->nsp; i++)
    map[(channels_first ? 2 : 1) + i] = window_index(L, w, i, o[i], k[i]);
  return map;
}

/* A window op with padding reads its input through a padded copy: a
 * workspace tensor holding exactly the positions the windows touch, with
 * the padding written once. The window op then reads it unguarded, so its
 * inner loops stay plain loads that vectorize (a guarded read per
 * multiply-add keeps gcc scalar), at the cost of one pass over the input.
 * The copy's spatial extent is (out - 1) * stride + (k - 1) * dilation + 1;
 * on return the window has no padding left. */
static int padded_window_input(Lower *L, int xt, const GraphValue *y, Window *w, bool channels_first,
                               AffineExpr *const *kext, double pad_value) {
  const TensorParam *x = tensor(L, xt);
  AffineExpr **shape = new_map(L, x->rank);
  int sp0 = channels_first ? 2 : 1, ysp0 = sp0;
  for (int i = 0; i < x->rank; i++)
    shape[i] = x->shape[i];
  for (int i = 0; i < w->nsp; i++) {
    AffineExpr *last_out = sub(L, y->shape[ysp0 + i], cst(L, 1));
    AffineExpr *reach = add(L, mul(L, last_out, cst(L, w->stride[i])),
                            mul(L, sub(L, kext[i], cst(L, 1)), cst(L, w->dilation[i])));
    shape[sp0 + i] = add(L, reach, cst(L, 1));
  }
  int pt = add_tensor(L, arena_printf(L->arena, "%s_padded_input", y->name), x->type, x->rank, shape, TS_WORKSPACE,
                      true, NULL);
  OpBuilder *b = op_begin(L);
  int first = op_dims_over(b, "d", x->rank, shape);
  int o = op_bare(b, pt, first);
  AffineExpr **map = new_map(L, x->rank);
  for (int i = 0; i < x->rank; i++)
    map[i] = dim_ref(L, first + i);
  for (int i = 0; i < w->nsp; i++)
    map[sp0 + i] = sub(L, dim_ref(L, first + sp0 + i), cst(L, w->lo[i]));
  int xo = op_operand(b, xt, map);
  b->operands[xo].guarded = true;
  b->operands[xo].pad_value = pad_value;
  op_yield(b, o, op_read(b, xo));
  op_end(b);
  for (int i = 0; i < w->nsp; i++)
    w->lo[i] = w->hi[i] = 0;
  w->padded = false;
  return pt;
}

/* The conv's bias (ONNX 3rd input) broadcast over the output: its initial value. */
static void emit_bias_init(Lower *L, int yt, int bias, bool channels_first) {
  OpBuilder *b = op_begin(L);
  const TensorParam *p = tensor(L, yt);
  int first = op_dims_over(b, "d", p->rank, p->shape);
  int o = op_bare(b, yt, first);
  AffineExpr **map = new_map(L, 1);
  map[0] = dim_ref(L, first + (channels_first ? 1 : p->rank - 1));
  op_yield(b, o, op_read(b, op_operand(b, bias, map)));
  op_end(b);
}

static void lower_conv(Lower *L) {
  const GraphValue *x = in(L, 0), *w = in(L, 1), *y = out(L, 0);
  ConvLayout lay = conv_layout(L);
  Window win;
  read_window(L, &win, lay.nsp);
  int yt = write_tensor(L, 0);
  if (L->node->op == GOP_CONV && has_input(L, 2))
    emit_bias_init(L, yt, read_tensor(L, 2), true);
  else
    emit_fill(L, yt, COMB_ADD);
  bool depthwise = lay.filter == FILTER_DEPTHWISE;
  int kpos = lay.filter == FILTER_F_FIRST ? 2 : 0; /* first spatial position in the filter */
  int xt = read_tensor(L, 0);
  if (win.padded)
    xt = padded_window_input(L, xt, y, &win, lay.channels_first, w->shape + kpos, 0);
  OpBuilder *b = op_begin(L);
  int n, f, o[LG_MAX_RANK], k[LG_MAX_RANK], c = -1;
  window_out_dims(b, y, lay.channels_first, depthwise ? "c" : "f", &n, &f, o);
  AffineExpr *c_extent = w->shape[lay.filter == FILTER_F_FIRST ? 1 : lay.nsp];
  if (lay.channels_first && !depthwise)
    c = op_dim(b, "c", ITER_REDUCTION, c_extent);
  for (int i = 0; i < lay.nsp; i++)
    k[i] = op_dim(b, arena_printf(L->arena, "k%d", i), ITER_REDUCTION, w->shape[kpos + i]);
  if (!lay.channels_first && !depthwise)
    c = op_dim(b, "c", ITER_REDUCTION, c_extent);
  int out = op_bare(b, yt, 0);
  /* input channel: the group's first channel plus c */
  AffineExpr *ch = dim_ref(L, depthwise ? f : c);
  int64_t group = L->node->op == GOP_CONV ? attr_int(L, "group", 1) : 1;
  if (group > 1) {
    AffineExpr *per_group_out = floordiv(L, y->shape[1], cst(L, group));
    ch = add(L, mul(L, floordiv(L, dim_ref(L, f), per_group_out), c_extent), ch);
  }
  int xo = op_operand(b, xt, window_input_map(L, &win, x->rank, lay.channels_first, n, ch, o, k));
  AffineExpr **wm = new_map(L, w->rank);
  for (int i = 0; i < lay.nsp; i++)
    wm[kpos + i] = dim_ref(L, k[i]);
  switch (lay.filter) {
  case FILTER_SPATIAL_FIRST:
    wm[lay.nsp] = dim_ref(L, c);
    wm[lay.nsp + 1] = dim_ref(L, f);
    break;
  case FILTER_F_FIRST:
    wm[0] = dim_ref(L, f);
    wm[1] = dim_ref(L, c);
    break;
  case FILTER_DEPTHWISE:
    wm[lay.nsp] = dim_ref(L, f);
    break;
  }
  int wo = op_operand(b, read_tensor(L, 1), wm);
  bool fl = elem_type_is_float(y->type);
  int prod = op2(b, fl ? SOP_MULF : SOP_MULI, op_read(b, xo), op_read(b, wo));
  op_yield(b, out, op_combine(b, COMB_ADD, op_read(b, out), prod));
  op_end(b);
}

/* How many of the window's elements at output position o (one spatial dim)
 * lie inside [lo_bound, hi_bound) of the input's index space. */
static int64_t ceil_div_pos(int64_t a, int64_t b) { /* b > 0 */
  return a >= 0 ? a / b + (a % b != 0) : -(-a / b);
}

/* Counted in closed form, not by walking the window: the window's extent
 * comes from the model, and a kernel_shape of 2^31 took lgen seconds per
 * output position (found by fuzzing). Taps k in [0, window) land at
 * base + k * dilation; those in [lo_bound, hi_bound) count. */
static int64_t window_count(const Window *w, int i, int64_t o, int64_t window, int64_t lo_bound, int64_t hi_bound) {
  int64_t base = o * w->stride[i] - w->lo[i], d = w->dilation[i] > 0 ? w->dilation[i] : 1;
  int64_t first = ceil_div_pos(lo_bound - base, d), end = ceil_div_pos(hi_bound - base, d);
  if (first < 0)
    first = 0;
  if (end > window)
    end = window;
  return end > first ? end - first : 0;
}

static uint16_t half_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000u, man = x & 0x7fffffu;
  int exp = (int)((x >> 23) & 0xff) - 127 + 15;
  if (exp >= 31)
    return (uint16_t)(sign | 0x7c00u);
  if (exp <= 0) /* counts are >= 1: never subnormal */
    return (uint16_t)sign;
  uint32_t h = sign | (uint32_t)exp << 10 | man >> 13, rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    h++;
  return (uint16_t)h;
}

/* Element i of a little-endian array of type t := v. */
static void put_elem(uint8_t *data, ElemType t, int64_t i, double v) {
  int size = graph_elem_bytes(t);
  uint64_t bits;
  if (t == TY_F16) {
    bits = half_bits((float)v);
  } else if (t == TY_F32) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    bits = u;
  } else if (t == TY_F64) {
    memcpy(&bits, &v, sizeof bits);
  } else {
    bits = (uint64_t)elem_int_saturate(t, v);
  }
  for (int j = 0; j < size; j++)
    data[i * size + j] = (uint8_t)(bits >> (8 * j));
}

/* out /= the number of window elements counted (ops.md's count_include_pad
 * rule): by a constant when every window counts the same, else through a
 * table of counts per output position, computed here. */
static void emit_average(Lower *L, int yt, const Window *w, const GraphValue *x, const GraphValue *y,
                         const int64_t *window, bool channels_first) {
  int nsp = w->nsp, sp_in = channels_first ? 2 : 1;
  bool include_pad = attr_int(L, "count_include_pad", 0) != 0;
  int64_t in_ext[LG_MAX_RANK], out_ext[LG_MAX_RANK], full = 1, cells = 1;
  bool uniform = true, fixed = true;
  for (int i = 0; i < nsp; i++) {
    full *= window[i];
    fixed &= graph_dim_value(x->shape[sp_in + i], &in_ext[i]) && graph_dim_value(y->shape[sp_in + i], &out_ext[i]);
  }
  if (!fixed && w->padded)
    node_error(L, arena_printf(L->arena, "average pooling with padding needs static spatial extents%s",
                               graph_dims_hint(L->g, nsp, x->shape + sp_in)));
  int64_t *counts[LG_MAX_RANK];
  for (int i = 0; i < nsp && fixed; i++) {
    counts[i] = arena_alloc(L->arena, sizeof(int64_t) * (size_t)(out_ext[i] ? out_ext[i] : 1));
    int64_t lo_bound = include_pad ? -w->lo[i] : 0, hi_bound = in_ext[i] + (include_pad ? w->hi[i] : 0);
    for (int64_t o = 0; o < out_ext[i]; o++) {
      counts[i][o] = window_count(w, i, o, window[i], lo_bound, hi_bound);
      uniform &= counts[i][o] == window[i];
    }
    cells *= out_ext[i];
  }
  OpBuilder *b = op_begin(L);
  const TensorParam *p = tensor(L, yt);
  int first = op_dims_over(b, "d", p->rank, p->shape);
  int o = op_bare(b, yt, first);
  int divisor;
  if (uniform) {
    divisor = op_const(b, y->type, (double)full);
  } else {
    AffineExpr **shape = new_map(L, nsp);
    for (int i = 0; i < nsp; i++)
      shape[i] = y->shape[sp_in + i];
    uint8_t *data = arena_alloc(L->arena, (size_t)(cells * graph_elem_bytes(y->type)) + 1);
    for (int64_t cell = 0; cell < cells; cell++) {
      int64_t rest = cell, product = 1;
      for (int i = nsp - 1; i >= 0; i--) {
        product *= counts[i][rest % out_ext[i]];
        rest /= out_ext[i];
      }
      put_elem(data, y->type, cell, (double)product);
    }
    int ct = add_tensor(L, arena_printf(L->arena, "%s_count", y->name), y->type, nsp, shape, TS_CONST, false, NULL);
    tensor(L, ct)->data = data;
    divisor = op_read(b, op_bare(b, ct, first + sp_in));
  }
  op_yield(b, o, op2(b, elem_type_is_float(y->type) ? SOP_DIVF : SOP_DIVIS, op_read(b, o), divisor));
  op_end(b);
}

static void lower_pool(Lower *L) {
  const GraphValue *x = in(L, 0), *y = out(L, 0);
  GraphOp op = L->node->op;
  bool channels_first = op >= GOP_POOLING_NCHW_MAX;
  int kind = (int)(op - (channels_first ? GOP_POOLING_NCHW_MAX : GOP_POOLING_NHWC_MAX)); /* max min sum avg */
  static const Comb combs[] = {COMB_MAX, COMB_MIN, COMB_ADD, COMB_ADD};
  Comb comb = combs[kind];
  int nsp = x->rank - 2;
  Window win;
  read_window(L, &win, nsp);
  int64_t window[LG_MAX_RANK];
  for (int i = 0; i < nsp; i++)
    window[i] = attr_ints_at(L, "window", i, 1);
  int yt = write_tensor(L, 0);
  emit_fill(L, yt, comb);
  double pad = comb == COMB_MAX ? extreme_value(x->type, false) : comb == COMB_MIN ? extreme_value(x->type, true) : 0;
  Window read = win; /* emit_average counts with the padded geometry */
  int xt = read_tensor(L, 0);
  if (read.padded) {
    AffineExpr *kext[LG_MAX_RANK];
    for (int i = 0; i < nsp; i++)
      kext[i] = cst(L, window[i]);
    xt = padded_window_input(L, xt, y, &read, channels_first, kext, pad);
  }
  OpBuilder *b = op_begin(L);
  int n, c, o[LG_MAX_RANK], k[LG_MAX_RANK];
  window_out_dims(b, y, channels_first, "c", &n, &c, o);
  for (int i = 0; i < nsp; i++)
    k[i] = op_dim(b, arena_printf(L->arena, "k%d", i), ITER_REDUCTION, cst(L, window[i]));
  int out = op_bare(b, yt, 0);
  int xo = op_operand(b, xt, window_input_map(L, &read, x->rank, channels_first, n, dim_ref(L, c), o, k));
  op_yield(b, out, op_combine(b, comb, op_read(b, out), op_read(b, xo)));
  op_end(b);
  if (kind == 3)
    emit_average(L, yt, &win, x, y, window, channels_first);
}

/* ---- reductions ---- */

static void lower_reduce(Lower *L) {
  const GraphValue *x = in(L, 0), *y = out(L, 0);
  bool reduced[LG_MAX_RANK] = {false};
  const GraphAttr *axes = attr(L, "axes");
  bool all = !axes || axes->kind != GA_INTS || axes->n == 0;
  for (int i = 0; !all && i < axes->n; i++)
    if (axes->ints[i] >= 0 && axes->ints[i] < x->rank)
      reduced[axes->ints[i]] = true;
  for (int i = 0; all && i < x->rank; i++)
    reduced[i] = true;
  bool keep = attr_int(L, "keepdims", 1) != 0;
  static const Comb combs[] = {[GOP_REDUCE_SUM] = COMB_ADD, [GOP_REDUCE_MAX] = COMB_MAX, [GOP_REDUCE_MIN] = COMB_MIN,
                               [GOP_REDUCE_MEAN] = COMB_ADD, [GOP_REDUCE_PROD] = COMB_MUL};
  Comb comb = combs[L->node->op];
  int yt = write_tensor(L, 0);
  emit_fill(L, yt, comb);
  OpBuilder *b = op_begin(L);
  AffineExpr **ymap = new_map(L, y->rank);
  int pos = 0;
  for (int i = 0; i < x->rank; i++) {
    int d = op_dim(b, arena_printf(L->arena, "%s%d", reduced[i] ? "r" : "d", i),
                   reduced[i] ? ITER_REDUCTION : ITER_PARALLEL, x->shape[i]);
    if (!reduced[i])
      ymap[pos++] = dim_ref(L, d);
    else if (keep)
      ymap[pos++] = cst(L, 0);
  }
  if (pos != y->rank)
    diag_bug(L->diag, "graph lowering: reduction result of rank %d, expected %d", y->rank, pos);
  int o = op_operand(b, yt, ymap);
  int xo = op_bare(b, read_tensor(L, 0), 0);
  op_yield(b, o, op_combine(b, comb, op_read(b, o), op_read(b, xo)));
  op_end(b);
  if (L->node->op != GOP_REDUCE_MEAN)
    return;
  /* the count of reduced elements: the static extents' product, times the
   * symbolic extents' product, which a kernel step counts at run time into
   * an i64 scalar (a loop of adds over those extents: exact, and cheap
   * next to the sum; payloads have no node for a size's value) */
  int64_t count = 1;
  AffineExpr *sym[LG_MAX_RANK];
  int nsym = 0;
  for (int i = 0; i < x->rank; i++) {
    int64_t e;
    if (!reduced[i])
      continue;
    if (graph_dim_value(x->shape[i], &e))
      count *= e;
    else
      sym[nsym++] = x->shape[i];
  }
  int ct = -1;
  if (nsym) {
    AffineExpr **one = new_map(L, 1); /* the tensor keeps the array */
    one[0] = cst(L, 1);
    ct = add_tensor(L, arena_printf(L->arena, "%s_count", y->name), TY_I64, 1, one, TS_WORKSPACE, true, NULL);
    emit_fill(L, ct, COMB_ADD);
    b = op_begin(L);
    for (int i = 0; i < nsym; i++)
      op_dim(b, arena_printf(L->arena, "r%d", i), ITER_REDUCTION, sym[i]);
    AffineExpr **zero = new_map(L, 1);
    zero[0] = cst(L, 0);
    int co = op_operand(b, ct, zero);
    op_yield(b, co, op2(b, SOP_ADDI, op_read(b, co), op_const_i(b, TY_I64, 1)));
    op_end(b);
  }
  b = op_begin(L);
  int first = op_dims_over(b, "d", y->rank, y->shape);
  o = op_bare(b, yt, first);
  bool f = elem_type_is_float(y->type);
  int divisor = op_const(b, y->type, (double)count);
  if (ct >= 0) {
    AffineExpr **zero = new_map(L, 1);
    zero[0] = cst(L, 0);
    int n = op1(b, SOP_CAST, op_read(b, op_operand(b, ct, zero)));
    b->nodes[n].type = y->type;
    divisor = count == 1 ? n : op2(b, f ? SOP_MULF : SOP_MULI, n, divisor);
  }
  op_yield(b, o, op2(b, f ? SOP_DIVF : SOP_DIVIS, op_read(b, o), divisor));
  op_end(b);
}

/* ---- layout ---- */

static void lower_transpose(Lower *L) {
  const GraphValue *x = in(L, 0), *y = out(L, 0);
  int yt = write_tensor(L, 0);
  OpBuilder *b = op_begin(L);
  int first = op_dims_over(b, "d", y->rank, y->shape);
  int o = op_bare(b, yt, first);
  AffineExpr **map = new_map(L, x->rank);
  for (int j = 0; j < y->rank; j++)
    map[attr_ints_at(L, "perm", j, y->rank - 1 - j)] = dim_ref(L, first + j);
  op_yield(b, o, op_read(b, op_operand(b, read_tensor(L, 0), map)));
  op_end(b);
}

static void lower_slice(Lower *L) {
  const GraphValue *x = in(L, 0), *y = out(L, 0);
  int yt = write_tensor(L, 0);
  OpBuilder *b = op_begin(L);
  int first = op_dims_over(b, "d", y->rank, y->shape);
  int o = op_bare(b, yt, first);
  AffineExpr **map = new_map(L, x->rank);
  bool symbolic_size = false;
  for (int i = 0; i < x->rank; i++) {
    map[i] = add(L, cst(L, attr_ints_at(L, "starts", i, 0)),
                 mul(L, dim_ref(L, first + i), cst(L, attr_ints_at(L, "strides", i, 1))));
    /* a size given as an expression (the builder left 0 in `sizes`): no
     * proof that it stays inside x, so reads outside give 0, never memory
     * past x (a run whose sequence is longer than the table it cuts) */
    symbolic_size |= attr_ints_at(L, "sizes", i, 1) == 0 && y->shape[i]->kind != AE_CONST;
  }
  int xo = op_operand(b, read_tensor(L, 0), map);
  b->operands[xo].guarded = symbolic_size;
  op_yield(b, o, op_read(b, xo));
  op_end(b);
}

/* Pad modes that read x again (reflect, edge, wrap): the output splits,
 * along each padded dim, into the low pad, the middle (x) and the high pad,
 * and each of the up to 3^k blocks is one copy whose map reads x where the
 * mode says: low pad i (0 <= i < lo) reads reflect lo - i, edge 0, wrap
 * d - lo + i; high pad i reads reflect d - 2 - i, edge d - 1, wrap i (the
 * builder checked the pads against the static extent d). */
static void lower_pad_mode(Lower *L, char mode) {
  const GraphValue *x = in(L, 0);
  int yt = write_tensor(L, 0), xt = read_tensor(L, 0);
  int r = x->rank, padded[LG_MAX_RANK], k = 0;
  int64_t lo[LG_MAX_RANK], hi[LG_MAX_RANK];
  for (int i = 0; i < r; i++) {
    attr_pad(L, "padding", i, r, &lo[i], &hi[i]);
    if (lo[i] || hi[i])
      padded[k++] = i;
  }
  int blocks = 1;
  for (int j = 0; j < k; j++)
    blocks *= 3;
  for (int blk = 0; blk < blocks; blk++) {
    int part[LG_MAX_RANK] = {0}; /* per dim: 0 low, 1 middle, 2 high */
    for (int i = 0; i < r; i++)
      part[i] = 1;
    bool empty = false;
    for (int j = 0, c = blk; j < k; j++, c /= 3) {
      int i = padded[j];
      part[i] = c % 3;
      empty |= (part[i] == 0 && lo[i] == 0) || (part[i] == 2 && hi[i] == 0);
    }
    if (empty)
      continue;
    OpBuilder *b = op_begin(L);
    AffineExpr *ext[LG_MAX_RANK];
    for (int i = 0; i < r; i++)
      ext[i] = part[i] == 0 ? cst(L, lo[i]) : part[i] == 2 ? cst(L, hi[i]) : x->shape[i];
    int first = op_dims_over(b, "d", r, ext);
    AffineExpr **ymap = new_map(L, r), **xmap = new_map(L, r);
    for (int i = 0; i < r; i++) {
      AffineExpr *di = dim_ref(L, first + i), *d = x->shape[i];
      if (part[i] == 1) {
        ymap[i] = add(L, di, cst(L, lo[i]));
        xmap[i] = di;
      } else if (part[i] == 0) {
        ymap[i] = di;
        xmap[i] = mode == 'r' ? sub(L, cst(L, lo[i]), di) : mode == 'e' ? cst(L, 0) : add(L, sub(L, d, cst(L, lo[i])), di);
      } else {
        ymap[i] = add(L, add(L, di, cst(L, lo[i])), d);
        xmap[i] = mode == 'r' ? sub(L, sub(L, d, cst(L, 2)), di) : mode == 'e' ? sub(L, d, cst(L, 1)) : di;
      }
    }
    int o = op_operand(b, yt, ymap);
    int xo = op_operand(b, xt, xmap);
    for (int i = 0; i < r; i++) /* edge of a symbolic dim that may be 0 */
      b->operands[xo].guarded |= part[i] != 1 && x->shape[i]->kind != AE_CONST;
    op_yield(b, o, op_read(b, xo));
    op_end(b);
  }
}

static void lower_pad(Lower *L) {
  const GraphAttr *mode = attr(L, "mode");
  if (mode && mode->kind == GA_STRING && strcmp(mode->s, "constant") != 0) {
    lower_pad_mode(L, mode->s[0]);
    return;
  }
  const GraphValue *x = in(L, 0), *y = out(L, 0);
  int yt = write_tensor(L, 0);
  OpBuilder *b = op_begin(L);
  int first = op_dims_over(b, "d", y->rank, y->shape);
  int o = op_bare(b, yt, first);
  AffineExpr **map = new_map(L, x->rank);
  bool padded = false;
  for (int i = 0; i < x->rank; i++) {
    int64_t lo, hi;
    attr_pad(L, "padding", i, x->rank, &lo, &hi);
    padded |= lo != 0 || hi != 0;
    map[i] = sub(L, dim_ref(L, first + i), cst(L, lo));
  }
  int xo = op_operand(b, read_tensor(L, 0), map);
  b->operands[xo].guarded = padded;
  b->operands[xo].pad_value = attr_float(L, "value", 0);
  op_yield(b, o, op_read(b, xo));
  op_end(b);
}

/* y[d] = x[position(d)]: Tile (d mod the input's extent where a dim
 * repeats) and Repeat (d floordiv its count) differ only in the map. */
static void lower_remap(Lower *L, AffineExpr *(*position)(Lower *L, AffineExpr *d, int i)) {
  const GraphValue *x = in(L, 0), *y = out(L, 0);
  int yt = write_tensor(L, 0);
  OpBuilder *b = op_begin(L);
  int first = op_dims_over(b, "d", y->rank, y->shape);
  int o = op_bare(b, yt, first);
  AffineExpr **map = new_map(L, x->rank);
  for (int i = 0; i < x->rank; i++)
    map[i] = position(L, dim_ref(L, first + i), i);
  op_yield(b, o, op_read(b, op_operand(b, read_tensor(L, 0), map)));
  op_end(b);
}

static AffineExpr *tile_position(Lower *L, AffineExpr *d, int i) {
  return attr_ints_at(L, "repeats", i, 1) == 1 ? d : affine_binary(L->arena, AE_MOD, d, in(L, 0)->shape[i]);
}

static AffineExpr *repeat_position(Lower *L, AffineExpr *d, int i) {
  return floordiv(L, d, cst(L, attr_ints_at(L, "repeats", i, 1)));
}

static void lower_tile(Lower *L) { lower_remap(L, tile_position); }

static void lower_repeat(Lower *L) { lower_remap(L, repeat_position); }

static void lower_reverse(Lower *L) {
  const GraphValue *x = in(L, 0), *y = out(L, 0);
  int yt = write_tensor(L, 0);
  OpBuilder *b = op_begin(L);
  int first = op_dims_over(b, "d", y->rank, y->shape);
  int o = op_bare(b, yt, first);
  AffineExpr **map = new_map(L, x->rank);
  for (int i = 0; i < x->rank; i++)
    map[i] = dim_ref(L, first + i);
  const GraphAttr *dims = attr(L, "dims");
  for (int j = 0; dims && dims->kind == GA_INTS && j < dims->n; j++) {
    int i = (int)dims->ints[j];
    if (i >= 0 && i < x->rank)
      map[i] = sub(L, sub(L, x->shape[i], cst(L, 1)), dim_ref(L, first + i));
  }
  op_yield(b, o, op_read(b, op_operand(b, read_tensor(L, 0), map)));
  op_end(b);
}

static void lower_broadcast(Lower *L) {
  const GraphValue *y = out(L, 0);
  int yt = write_tensor(L, 0);
  OpBuilder *b = op_begin(L);
  int first = op_dims_over(b, "d", y->rank, y->shape);
  int o = op_bare(b, yt, first);
  op_yield(b, o, op_read(b, op_broadcast(b, read_tensor(L, 0), first, y->shape, y->rank)));
  op_end(b);
}

/* One copy per input, each written at its offset along the axis. */
static void lower_concat(Lower *L) {
  const GraphValue *y = out(L, 0);
  int axis = (int)attr_int(L, "axis", 0);
  int yt = write_tensor(L, 0);
  AffineExpr *offset = cst(L, 0);
  for (int i = 0; i < L->node->ninputs; i++) {
    const GraphValue *x = in(L, i);
    OpBuilder *b = op_begin(L);
    int first = op_dims_over(b, "d", x->rank, x->shape);
    AffineExpr **map = new_map(L, y->rank);
    for (int p = 0; p < y->rank; p++)
      map[p] = p == axis ? add(L, dim_ref(L, first + p), offset) : dim_ref(L, first + p);
    int o = op_operand(b, yt, map);
    op_yield(b, o, op_read(b, op_bare(b, read_tensor(L, i), first)));
    op_end(b);
    offset = add(L, offset, x->shape[axis]);
  }
}

static void lower_fill(Lower *L) {
  const GraphValue *y = out(L, 0);
  int yt = write_tensor(L, 0);
  OpBuilder *b = op_begin(L);
  int first = op_dims_over(b, "d", y->rank, y->shape);
  int o = op_bare(b, yt, first);
  op_yield(b, o, op_const(b, y->type, attr_float(L, "value", 0)));
  op_end(b);
}

/* ---- reshapes: aliases ---- */

/* Does the node only reinterpret its input's row-major memory? A reshape; a
 * copy; a broadcast that stretches nothing (it only adds unit dims); a
 * transpose that keeps the non-unit dims in order. */
static bool is_rowmajor_reshape(Lower *L) {
  const GraphNode *n = L->node;
  if (n->op == GOP_RESHAPE || n->op == GOP_COPY)
    return true;
  const GraphValue *x = in(L, 0), *y = out(L, 0);
  if (n->op == GOP_BROADCAST) {
    for (int j = 0; j < y->rank; j++) {
      int i = j - (y->rank - x->rank);
      bool unit_in = i < 0 || is_const(x->shape[i], 1);
      if (unit_in && !is_const(y->shape[j], 1))
        return false;
    }
    return true;
  }
  if (n->op == GOP_TRANSPOSE) {
    int last = -1;
    for (int j = 0; j < y->rank; j++) {
      int src = (int)attr_ints_at(L, "perm", j, y->rank - 1 - j);
      if (is_const(y->shape[j], 1))
        continue;
      if (src < last)
        return false;
      last = src;
    }
    return true;
  }
  return false;
}

static bool same_shape(Lower *L, const TensorParam *a, const TensorParam *b) {
  if (a->rank != b->rank)
    return false;
  for (int i = 0; i < a->rank; i++)
    if (!same_extent(L->arena, a->shape[i], b->shape[i]))
      return false;
  return true;
}

static void lower_reshape(Lower *L) {
  int src = read_tensor(L, 0);
  int v = L->node->outputs[0];
  int dst = L->tensor_of[v];
  if (dst >= 0) { /* a graph output: it has its own memory */
    if (same_shape(L, tensor(L, dst), tensor(L, src)))
      emit_copy(L, dst, src);
    else
      emit_reshape_copy(L, dst, src);
    return;
  }
  int root = root_tensor(L, src);
  int t = value_tensor(L, out(L, 0), TS_ALIAS, tensor(L, root)->is_output);
  tensor(L, t)->alias_of = root;
  L->tensor_of[v] = t;
}

/* ---- calls of .tc defs ---- */

static AffineExpr *subst_sizes(Lower *L, const AffineExpr *e, AffineExpr *const *sizes) {
  if (e->kind == AE_SIZE)
    return sizes[e->index];
  AffineExpr *c = arena_alloc(L->arena, sizeof *c);
  *c = *e;
  c->lhs = e->lhs ? subst_sizes(L, e->lhs, sizes) : NULL;
  c->rhs = e->rhs ? subst_sizes(L, e->rhs, sizes) : NULL;
  return c;
}

/* The def's size symbols, from the shapes of the values bound to its tensors. */
static AffineExpr **bind_sizes(Lower *L, const Kernel *def, const int *bound) {
  AffineExpr **sizes = arena_alloc(L->arena, sizeof(AffineExpr *) * (size_t)(def->nsizes + 1));
  for (int t = 0; t < def->ntensors; t++) {
    const GraphValue *v = value(L, bound[t]);
    for (int p = 0; p < def->tensors[t].rank && p < v->rank; p++) {
      const AffineExpr *e = def->tensors[t].shape[p];
      if (e->kind == AE_SIZE && !sizes[e->index])
        sizes[e->index] = v->shape[p];
    }
  }
  for (int s = 0; s < def->nsizes; s++)
    if (!sizes[s])
      graph_error(L->g, L->node->path, "%scannot bind size '%s' of '%s' from the shapes of its tensors",
                  graph_node_desc(L->g, L->node), def->sizes[s].name, def->name);
  return sizes;
}

/* The initial value of a def's output: the identity of the first op's reduction that writes it. */
static Comb call_init(const Kernel *def, int t) {
  for (int i = 0; i < def->nops; i++) {
    const StructuredOp *op = &def->ops[i];
    for (int y = 0; y < op->nyields; y++) {
      if (op->operands[op->yields[y].operand].tensor != t)
        continue;
      /* OpDSL's max and min: NaN-propagating for floats, unsigned for integers */
      const PayloadNode *v = &op->nodes[op->yields[y].value];
      if (v->kind == PN_OP && (v->op == SOP_MAXIMUMF || v->op == SOP_MINIMUMF || v->op == SOP_MINUI))
        return v->op == SOP_MAXIMUMF ? COMB_MAX : v->op == SOP_MINIMUMF ? COMB_MIN : COMB_MINU;
      int x;
      switch (match_reduction(op, y, &x)) {
      case COMBINE_MAX:
        return COMB_MAX;
      case COMBINE_MIN:
        return COMB_MIN;
      case COMBINE_MUL:
        return COMB_MUL;
      default:
        return COMB_ADD;
      }
    }
  }
  return COMB_ADD;
}

static void lower_call(Lower *L) {
  const GraphNode *n = L->node;
  const Kernel *def = n->def;
  if (!def)
    node_error(L, "call without a def");
  if (def->nattrs > 0)
    node_error(L, "calling a def with attributes is not supported yet");
  int *bound = arena_alloc(L->arena, sizeof(int) * (size_t)(def->ntensors + 1));
  int *remap = arena_alloc(L->arena, sizeof(int) * (size_t)(def->ntensors + 1));
  int nin = 0, nout = 0;
  for (int t = 0; t < def->ntensors; t++) {
    if (def->tensors[t].is_output) {
      if (nout >= n->noutputs)
        node_error(L, "the def has more outputs than the node");
      bound[t] = n->outputs[nout];
      remap[t] = write_tensor(L, nout++);
    } else {
      if (nin >= n->ninputs)
        node_error(L, "the def has more inputs than the node");
      bound[t] = n->inputs[nin];
      remap[t] = read_tensor(L, nin++);
    }
  }
  AffineExpr **sizes = bind_sizes(L, def, bound);
  for (int t = 0; t < def->ntensors; t++)
    if (def->tensors[t].is_output)
      emit_fill(L, remap[t], call_init(def, t));
  for (int i = 0; i < def->nops; i++) {
    const StructuredOp *src = &def->ops[i];
    StructuredOp *op = arena_alloc(L->arena, sizeof *op);
    *op = *src;
    op->npre = 0; /* the def's run-time checks are about its own parameters */
    op->pre = NULL;
    op->loc = L->loc;
    op->origin = node_origin(L);
    op->dims = copy_array(L, src->dims, sizeof(Dim), src->ndims);
    for (int d = 0; d < op->ndims; d++)
      op->dims[d].extent = subst_sizes(L, src->dims[d].extent, sizes);
    op->operands = copy_array(L, src->operands, sizeof(Operand), src->noperands);
    for (int o = 0; o < op->noperands; o++) {
      int t = src->operands[o].tensor;
      op->operands[o].tensor = remap[t];
      op->operands[o].map = new_map(L, def->tensors[t].rank);
      for (int p = 0; p < def->tensors[t].rank; p++)
        op->operands[o].map[p] = subst_sizes(L, src->operands[o].map[p], sizes);
    }
    /* a size read as a value (classic TC's `/ K`): the graph's kernel has
     * its own size symbols, so only a size bound to a constant carries over */
    if (src->nnodes > 0) {
      op->nodes = copy_array(L, src->nodes, sizeof(PayloadNode), src->nnodes);
      for (int j = 0; j < op->nnodes; j++) {
        PayloadNode *x = &op->nodes[j];
        if (x->kind != PN_SIZE)
          continue;
        if (sizes[x->size]->kind != AE_CONST)
          node_error(L, arena_printf(L->arena, "the def reads the value of size '%s', which this graph does not "
                                               "fix; give it a constant extent", def->sizes[x->size].name));
        *x = (PayloadNode){.kind = PN_CONST, .type = TY_I64, .ivalue = sizes[x->size]->value, .loc = x->loc};
      }
    }
    vec_push(L->arena, &L->ops, op);
  }
}

/* ---- what lower_ext.c sees of the lowering (lower_ext.h) ---- */

const Graph *lower_graph(const Lower *L) { return L->g; }
const GraphNode *lower_node_of(const Lower *L) { return L->node; }
Arena *lower_arena(const Lower *L) { return L->arena; }
Loc lower_loc(const Lower *L) { return L->loc; }
int lower_read(Lower *L, int i) { return read_tensor(L, i); }
int lower_write(Lower *L, int i) { return write_tensor(L, i); }
const TensorParam *lower_tensor(Lower *L, int t) { return tensor(L, t); }

int lower_scratch(Lower *L, const char *name, ElemType type, int rank, AffineExpr **shape) {
  return add_tensor(L, name, type, rank, shape, TS_WORKSPACE, true, NULL);
}

void lower_push(Lower *L, StructuredOp *op) {
  op->loc = L->loc;
  op->origin = node_origin(L);
  vec_push(L->arena, &L->ops, op);
}

/* ---- the graph ---- */

static void lower_node(Lower *L) {
  const GraphNode *n = L->node;
  if (is_rowmajor_reshape(L)) {
    lower_reshape(L);
    return;
  }
  switch (graph_op_info(n->op)->cls) {
  case GC_UNARY:
  case GC_BINARY:
  case GC_TERNARY:
    lower_elementwise(L);
    return;
  case GC_CONTRACT:
    if (n->op == GOP_EINSUM)
      lower_einsum(L);
    else
      lower_matmul(L);
    return;
  case GC_CONV:
    lower_conv(L);
    return;
  case GC_POOL:
    lower_pool(L);
    return;
  case GC_REDUCE:
    lower_reduce(L);
    return;
  case GC_SOURCE:
    lower_fill(L);
    return;
  case GC_CALL:
    lower_call(L);
    return;
  case GC_EXT:
    lower_ext(L);
    return;
  case GC_LAYOUT:
    break;
  default:
    node_error(L, "this op should have been folded or expanded before lowering");
  }
  switch (n->op) {
  case GOP_TRANSPOSE:
    lower_transpose(L);
    return;
  case GOP_BROADCAST:
    lower_broadcast(L);
    return;
  case GOP_SLICE:
    lower_slice(L);
    return;
  case GOP_CONCAT:
    lower_concat(L);
    return;
  case GOP_PAD:
    lower_pad(L);
    return;
  case GOP_TILE:
    lower_tile(L);
    return;
  case GOP_REPEAT:
    lower_repeat(L);
    return;
  case GOP_REVERSE:
    lower_reverse(L);
    return;
  case GOP_GATHER:
    lower_ext(L);
    return;
  default:
    node_error(L, "this layout op cannot be lowered yet");
  }
}

/* Folded nodes produce constants, and nodes no output depends on are dropped. */
static bool node_runs(Lower *L, const GraphNode *n) {
  for (int i = 0; i < n->noutputs; i++) {
    const GraphValue *v = value(L, n->outputs[i]);
    if (v->kind == GV_NODE && L->live[n->outputs[i]])
      return true;
  }
  return false;
}

static void mark_live(Lower *L) {
  const Graph *g = L->g;
  for (int i = 0; i < g->outputs.len; i++)
    L->live[g->outputs.items[i]] = true;
  for (int i = g->nodes.len - 1; i >= 0; i--) {
    const GraphNode *n = GRAPH_NODE(g, i);
    if (!node_runs(L, n))
      continue;
    for (int j = 0; j < n->ninputs; j++)
      if (n->inputs[j] >= 0)
        L->live[n->inputs[j]] = true;
  }
}

static void add_parameters(Lower *L) {
  const Graph *g = L->g;
  for (int i = 0; i < g->inputs.len; i++) {
    int v = g->inputs.items[i];
    L->tensor_of[v] = value_tensor(L, value(L, v), TS_PARAM, false);
  }
  for (int i = 0; i < g->outputs.len; i++) {
    int v = g->outputs.items[i];
    int t = value_tensor(L, value(L, v), TS_PARAM, true);
    /* a node writes its output parameter directly; anything else is copied at the end */
    if (value(L, v)->kind == GV_NODE && L->tensor_of[v] < 0)
      L->tensor_of[v] = t;
  }
}

/* A dim's value as a payload: e in the kernel's size symbols (the graph's
 * symbols, in one order), i64. floordiv, ceildiv and mod round toward
 * minus infinity as affine expressions do, from C's truncating division by
 * a positive constant divisor. */
static int sym_payload(OpBuilder *b, const GraphValue *c, const AffineExpr *e) {
  Lower *L = b->L;
  switch (e->kind) {
  case AE_CONST:
    return op_const_i(b, TY_I64, e->value);
  case AE_SIZE:
    return op_node(b, (PayloadNode){.kind = PN_SIZE, .type = TY_I64, .size = e->index});
  case AE_NEG:
    return op2(b, SOP_SUBI, op_const_i(b, TY_I64, 0), sym_payload(b, c, e->lhs));
  case AE_ADD:
  case AE_SUB:
  case AE_MUL: {
    int x = sym_payload(b, c, e->lhs), y = sym_payload(b, c, e->rhs);
    return op2(b, e->kind == AE_ADD ? SOP_ADDI : e->kind == AE_SUB ? SOP_SUBI : SOP_MULI, x, y);
  }
  case AE_FLOORDIV:
  case AE_CEILDIV:
  case AE_MOD: {
    if (e->rhs->kind != AE_CONST || e->rhs->value <= 0)
      break;
    int x = sym_payload(b, c, e->lhs), d = op_const_i(b, TY_I64, e->rhs->value);
    int zero = op_const_i(b, TY_I64, 0), one = op_const_i(b, TY_I64, 1);
    int q = op2(b, SOP_DIVIS, x, d), r = op2(b, SOP_SUBI, x, op2(b, SOP_MULI, q, d));
    if (e->kind == AE_CEILDIV) /* truncation went down for x > 0 with a remainder */
      return op2(b, SOP_ADDI, q, op3(b, SOP_SELECT, op2(b, SOP_CMPI_SGT, r, zero), one, zero));
    int fq = op2(b, SOP_SUBI, q, op3(b, SOP_SELECT, op2(b, SOP_CMPI_SLT, r, zero), one, zero));
    if (e->kind == AE_FLOORDIV)
      return fq;
    return op2(b, SOP_SUBI, x, op2(b, SOP_MULI, fq, d));
  }
  default:
    break;
  }
  graph_error(L->g, c->path, "constant '%s' has an element (%s) that lgen cannot compute at run time", c->name,
              graph_dim_str(L->g, e));
}

/* A constant whose elements depend on symbolic dims (a Shape's values
 * used as data: Shape -> Gather -> Cast -> arithmetic), computed when the
 * kernel runs: element i = its expression in the size symbols, one op
 * over the elements selecting by index. */
static int sym_constant(Lower *L, const GraphValue *c) {
  L->loc = graph_loc(L->g, c->path ? c->path : "");
  int t = value_tensor(L, c, TS_WORKSPACE, true);
  OpBuilder *b = op_begin(L);
  int first = op_dims_over(b, "d", c->rank, c->shape);
  int o = op_bare(b, t, first);
  int idx = c->rank ? op_node(b, (PayloadNode){.kind = PN_INDEX, .type = TY_I64, .dim = first}) : -1;
  int x = sym_payload(b, c, c->sym[c->count - 1]);
  for (int64_t i = c->count - 2; i >= 0; i--) {
    if (b->nnodes + 64 >= MAX_NODES)
      graph_error(L->g, c->path, "constant '%s' has too many elements that depend on symbolic dims (%lld) to compute "
                                 "at run time", c->name, (long long)c->count);
    int is_i = op2(b, SOP_CMPI_EQ, idx, op_const_i(b, TY_I64, i));
    x = op3(b, SOP_SELECT, is_i, sym_payload(b, c, c->sym[i]), x);
  }
  if (c->type != TY_I64) {
    x = op1(b, SOP_CAST, x);
    b->nodes[x].type = c->type;
  }
  op_yield(b, o, x);
  op_end(b);
  return t;
}

static void add_constants(Lower *L) {
  const Graph *g = L->g;
  for (int v = 0; v < g->values.len; v++) {
    const GraphValue *c = value(L, v);
    if (c->kind != GV_CONST || !L->live[v])
      continue;
    if (!c->data) {
      L->tensor_of[v] = sym_constant(L, c);
      continue;
    }
    int t = value_tensor(L, c, TS_CONST, false);
    tensor(L, t)->data = c->data;
    L->tensor_of[v] = t;
  }
}

/* Output parameters not written by their node: copies of inputs, constants,
 * aliases' sources and outputs listed before. */
static void copy_outputs(Lower *L) {
  const Graph *g = L->g;
  int first_output = g->inputs.len;
  for (int i = 0; i < g->outputs.len; i++) {
    int v = g->outputs.items[i], param = first_output + i;
    if (L->tensor_of[v] == param)
      continue;
    L->loc = graph_loc(g, value(L, v)->path);
    emit_copy(L, param, L->tensor_of[v]);
  }
}

Kernel *graph_lower(const Graph *g, const char *name, Arena *arena, Diag *diag) {
  Lower *L = arena_alloc(arena, sizeof *L);
  L->g = g;
  L->arena = arena;
  L->diag = diag;
  int nvalues = g->values.len;
  L->tensor_of = arena_alloc(arena, sizeof(int) * (size_t)(nvalues + 1));
  L->live = arena_alloc(arena, sizeof(bool) * (size_t)(nvalues + 1));
  for (int v = 0; v < nvalues; v++)
    L->tensor_of[v] = -1;
  mark_live(L);
  add_parameters(L);
  add_constants(L);
  for (int i = 0; i < g->nodes.len; i++) {
    L->node = GRAPH_NODE(g, i);
    if (!node_runs(L, L->node))
      continue;
    L->loc = graph_loc(g, L->node->path);
    lower_node(L);
  }
  L->node = NULL;
  copy_outputs(L);

  Kernel *k = arena_alloc(arena, sizeof *k);
  k->name = name ? name : g->name;
  k->loc = graph_loc(g, g->name_path ? g->name_path : ""); /* a bad C name points at the graph's name */
  k->ntensors = L->tensors.len;
  k->tensors = arena_alloc(arena, sizeof(TensorParam) * (size_t)(k->ntensors + 1));
  for (int t = 0; t < k->ntensors; t++)
    k->tensors[t] = *tensor(L, t);
  k->nsizes = g->symbols.len;
  k->sizes = arena_alloc(arena, sizeof(SizeSym) * (size_t)(k->nsizes + 1));
  for (int s = 0; s < k->nsizes; s++)
    k->sizes[s] = (SizeSym){.name = g->symbols.items[s], .loc = k->loc};
  k->nassumes = g->assumes.len;
  k->assumes = arena_alloc(arena, sizeof(SizeAssume) * (size_t)(k->nassumes + 1));
  for (int i = 0; i < k->nassumes; i++)
    k->assumes[i] = *(const SizeAssume *)g->assumes.items[i];
  k->nops = L->ops.len;
  k->ops = arena_alloc(arena, sizeof(StructuredOp) * (size_t)(k->nops + 1));
  for (int i = 0; i < k->nops; i++)
    k->ops[i] = *(StructuredOp *)L->ops.items[i];
  ir_verify_kernel(diag, k);
  return k;
}
