/* lower_ext.c - a non-structured graph node (class EXT, or a gather whose
 * data or indices are computed at run time) as one ExtOp kernel step.
 *
 * The step names the op and its template, its tensors (the node's inputs,
 * its outputs, and the scratch the template needs: sort's row buffers,
 * topk's heaps, in the workspace so that G_run never allocates) and the
 * node's attributes, which build_ext.c has already checked and normalised.
 * Everything shape-dependent is left to the emitter, which reads the
 * tensors' shapes. */
#include <string.h>

#include "graph/lower_ext.h"

static const char *template_of(GraphOp op) {
  switch (op) {
#define E(op, tmpl, sched) \
  case GOP_##op:           \
    return #tmpl;
#include "graph/ext_ops.def"
#undef E
  default:
    return NULL;
  }
}

static bool rows_loop_of(GraphOp op) {
  switch (op) {
#define E(op, tmpl, sched) \
  case GOP_##op:           \
    return LG_TEMPLATE_##sched;
#include "graph/ext_ops.def"
#undef E
  default:
    return false;
  }
}

static void add_tensor(ExtOp *x, int t) { x->tensors[x->ninputs + x->noutputs + x->nscratch] = t; }

static void copy_attrs(ExtOp *x, const GraphNode *n) {
  for (int i = 0; i < n->nattrs && x->nattrs < LG_EXT_MAX_ATTRS; i++) {
    const GraphAttr *a = &n->attrs[i];
    ExtAttr *e = &x->attrs[x->nattrs];
    *e = (ExtAttr){.name = a->name};
    switch (a->kind) {
    case GA_INT:
      e->kind = 'i';
      e->i = a->i;
      break;
    case GA_FLOAT:
      e->kind = 'f';
      e->f = a->f;
      break;
    case GA_STRING:
      e->kind = 's';
      e->s = a->s;
      break;
    case GA_INTS:
    case GA_INTS2: /* pairs: 2n values, [lo0, hi0, lo1, hi1, ...] */
      e->kind = 'l';
      e->n = a->kind == GA_INTS2 ? 2 * a->n : a->n;
      e->ints = a->ints;
      break;
    default:
      continue;
    }
    x->nattrs++;
  }
}

/* A scratch tensor named after the node's first output. */
static int scratch(Lower *L, ElemType t, int rank, AffineExpr **shape) {
  const Graph *g = lower_graph(L);
  const GraphValue *out = GRAPH_VALUE(g, lower_node_of(L)->outputs[0]);
  Arena *arena = lower_arena(L);
  const char *name = arena_printf(arena, "%s_scratch", out->name);
  AffineExpr **copy = arena_alloc(arena, sizeof *copy * (size_t)(rank + 1)); /* the tensor keeps it */
  for (int d = 0; d < rank; d++)
    copy[d] = shape[d];
  return lower_scratch(L, name, t, rank, copy);
}

static const GraphAttr *node_attr(const GraphNode *n, const char *name) {
  for (int i = 0; i < n->nattrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0)
      return &n->attrs[i];
  return NULL;
}

/* pack and unpack are data movement through affine maps, so they are
 * structured ops (fusion and schedules see them like a transpose): one
 * parallel dim per output dim, out[dims] = in[map], where for pack the
 * unpacked dim d tiled by t at outer position j and tile position k reads
 * o_j * t + i_k (a guarded read: the padding gives padding_value), and for
 * unpack the packed input is read at d floordiv t (outer) and d mod t
 * (inner). */
static void lower_pack(Lower *L, bool unpack) {
  const GraphNode *n = lower_node_of(L);
  Arena *arena = lower_arena(L);
  int in = lower_read(L, 0), out = lower_write(L, 0);
  const TensorParam *ti = lower_tensor(L, in), *to = lower_tensor(L, out);
  const GraphAttr *pos = node_attr(n, "inner_dims_pos"), *tiles = node_attr(n, "inner_tiles");
  const GraphAttr *perm = node_attr(n, "outer_dims_perm");
  int r = unpack ? to->rank : ti->rank, K = pos->n;
  StructuredOp *op = arena_alloc(arena, sizeof *op);
  op->ndims = to->rank;
  op->dims = arena_alloc(arena, sizeof(Dim) * (size_t)(op->ndims + 1));
  for (int d = 0; d < op->ndims; d++)
    op->dims[d] = (Dim){.name = arena_printf(arena, "d%d", d), .kind = ITER_PARALLEL, .extent = to->shape[d],
                        .extent_operand = -1, .extent_pos = -1, .loc = lower_loc(L)};
  AffineExpr **omap = arena_alloc(arena, sizeof(AffineExpr *) * (size_t)(to->rank + 1));
  for (int d = 0; d < to->rank; d++)
    omap[d] = affine_leaf(arena, AE_DIM, d, 0);
  AffineExpr **imap = arena_alloc(arena, sizeof(AffineExpr *) * (size_t)(ti->rank + 1));
  for (int j = 0; j < r; j++) {
    int d = (int)perm->ints[j];
    int k = -1;
    for (int q = 0; q < K; q++)
      if (pos->ints[q] == d)
        k = q;
    if (!unpack) { /* in[d] = o_j * t + i_k */
      AffineExpr *o = affine_leaf(arena, AE_DIM, j, 0);
      imap[d] = k < 0 ? o
                      : affine_binary(arena, AE_ADD,
                                      affine_binary(arena, AE_MUL, o, affine_const(arena, tiles->ints[k])),
                                      affine_leaf(arena, AE_DIM, r + k, 0));
    } else { /* in[j] = d floordiv t, in[r + k] = d mod t */
      AffineExpr *x = affine_leaf(arena, AE_DIM, d, 0);
      imap[j] = k < 0 ? x : affine_binary(arena, AE_FLOORDIV, x, affine_const(arena, tiles->ints[k]));
      if (k >= 0)
        imap[r + k] = affine_binary(arena, AE_MOD, x, affine_const(arena, tiles->ints[k]));
    }
  }
  const GraphAttr *padded = node_attr(n, "padded"), *value = node_attr(n, "padding_value");
  op->noperands = 2;
  op->operands = arena_alloc(arena, sizeof(Operand) * 2);
  op->operands[0] = (Operand){.tensor = out, .map = omap, .loc = lower_loc(L)};
  op->operands[1] = (Operand){.tensor = in, .map = imap, .loc = lower_loc(L)};
  if (!unpack && padded && padded->i) {
    op->operands[1].guarded = true;
    op->operands[1].pad_value = value ? value->f : 0;
  }
  op->nnodes = 1;
  op->nodes = arena_alloc(arena, sizeof(PayloadNode));
  op->nodes[0] = (PayloadNode){.kind = PN_READ, .type = ti->type, .operand = 1, .loc = lower_loc(L)};
  op->nyields = 1;
  op->yields = arena_alloc(arena, sizeof(Yield));
  op->yields[0] = (Yield){.operand = 0, .value = 0};
  lower_push(L, op);
}

void lower_ext(Lower *L) {
  const GraphNode *n = lower_node_of(L);
  const Graph *g = lower_graph(L);
  Arena *arena = lower_arena(L);
  if (n->op == GOP_PACK || n->op == GOP_UNPACK) {
    lower_pack(L, n->op == GOP_UNPACK);
    return;
  }
  ExtOp *x = arena_alloc(arena, sizeof *x);
  x->kind = graph_op_info(n->op)->name;
  x->tmpl = template_of(n->op);
  if (!x->tmpl)
    diag_bug(g->diag, "no template for graph op %s", x->kind);
  x->rows_loop = rows_loop_of(n->op);
  for (int i = 0; i < n->ninputs; i++) {
    add_tensor(x, lower_read(L, i));
    x->ninputs++;
  }
  for (int i = 0; i < n->noutputs; i++) {
    add_tensor(x, lower_write(L, i));
    x->noutputs++;
  }
  const GraphValue *in0 = GRAPH_VALUE(g, n->inputs[0]);
  if (n->op == GOP_SORT) { /* two row buffers per row: of values, or of several operands' element offsets */
    AffineExpr *shape[LG_MAX_RANK + 1];
    shape[0] = affine_const(arena, 2);
    for (int d = 0; d < in0->rank; d++)
      shape[d + 1] = in0->shape[d];
    add_tensor(x, scratch(L, n->ninputs > 1 ? TY_I64 : in0->type, in0->rank + 1, shape));
    x->nscratch++;
    if (n->ninputs > 1)
      x->tmpl = "sortn";
  } else if (n->op == GOP_TOPK) { /* k heap slots per row, and at least 16 heaps (templates/topk.c) */
    const GraphValue *vals = GRAPH_VALUE(g, n->outputs[0]);
    AffineExpr *numel = affine_const(arena, 1);
    for (int d = 0; d < vals->rank; d++)
      numel = affine_binary(arena, AE_MUL, numel, vals->shape[d]);
    AffineExpr *slots = affine_binary(arena, AE_ADD, numel, affine_const(arena, 16 * graph_attr_int(g, n, "k", 0)));
    add_tensor(x, scratch(L, TY_I64, 1, &slots));
    x->nscratch++;
  } else if (n->op == GOP_FFT || n->op == GOP_DFT) {
    /* each row's transform runs in f64 in a buffer of its own (10 *
     * length: the signal, then the plain DFT's result or Bluestein's
     * sequence of < 4 * length points), and the rows share the tables of
     * templates/fft.c (18 * length) */
    const GraphAttr *la = node_attr(n, "length");
    int axis = n->op == GOP_FFT ? in0->rank - 1 : (int)node_attr(n, "axis")->i;
    AffineExpr *len = la ? affine_const(arena, la->i) : in0->shape[axis];
    AffineExpr *shape[LG_MAX_RANK + 1];
    int r = 0;
    for (int d = 0; d < in0->rank; d++)
      if (d != axis && (n->op == GOP_FFT || d != in0->rank - 1))
        shape[r++] = in0->shape[d];
    shape[r++] = affine_binary(arena, AE_MUL, affine_const(arena, 10), len);
    add_tensor(x, scratch(L, TY_F64, r, shape));
    x->nscratch++;
    AffineExpr **tw = arena_alloc(arena, sizeof *tw * 2); /* the tensor keeps it */
    tw[0] = affine_binary(arena, AE_MUL, affine_const(arena, 18), len);
    const char *name = arena_printf(arena, "%s_twiddles", GRAPH_VALUE(g, n->outputs[0])->name);
    add_tensor(x, lower_scratch(L, name, TY_F64, 1, tw));
    x->nscratch++;
  } else if (n->op == GOP_ATTENTION || n->op == GOP_ONLINE_ATTENTION || n->op == GOP_ATTENTION_SCORES) {
    /* one slot of tiles per thread (the graph's region is capped at
     * LG_SCRATCH_THREAD_SLOTS = 16 threads), in the type the template
     * computes in (f64 for f64, else f32): with templates/attention.c's QT
     * query rows and KT keys, QT*D + KT*D + KT*Dv + QT*KT + QT*Dv + 2*QT
     * values */
    enum { QT = 128, KT = 128 };
    const GraphValue *v = GRAPH_VALUE(g, n->inputs[2]);
    int vt = graph_attr_int(g, n, "v_transposed", 0) != 0; /* v stored [..., Dv, Lk] */
    int qt = graph_attr_int(g, n, "q_transposed", 0) != 0; /* q stored [..., D, Lq] */
    AffineExpr *dq = in0->shape[in0->rank - 1 - qt], *dv = v->shape[v->rank - 1 - vt];
    AffineExpr *per = affine_binary(
        arena, AE_ADD,
        affine_binary(arena, AE_ADD, affine_binary(arena, AE_MUL, affine_const(arena, QT + KT), dq),
                      affine_binary(arena, AE_MUL, affine_const(arena, QT + KT), dv)),
        affine_const(arena, QT * KT + 2 * QT));
    AffineExpr *shape[2] = {affine_const(arena, LG_SCRATCH_THREAD_SLOTS), per};
    add_tensor(x, scratch(L, in0->type == TY_F64 ? TY_F64 : TY_F32, 2, shape));
    x->nscratch++;
  } else if (n->op == GOP_RNN) {
    /* a batch row's state and gates: h, c, G * H gates and H more, in the
     * type templates/rnn.c computes in */
    const GraphValue *y = GRAPH_VALUE(g, n->outputs[0]), *rt = GRAPH_VALUE(g, n->inputs[1]);
    AffineExpr *shape[2] = {y->shape[1], affine_binary(arena, AE_ADD, rt->shape[1],
                                                      affine_binary(arena, AE_MUL, affine_const(arena, 3), rt->shape[0]))};
    add_tensor(x, scratch(L, in0->type == TY_F64 ? TY_F64 : TY_F32, 2, shape));
    x->nscratch++;
  }
  copy_attrs(x, n);
  if (n->op == GOP_RNN) /* the activations' codes */
    for (int k = 0; k < 3; k++) {
      static const char *const names[3] = {"act_f", "act_g", "act_h"}, *const codes[3] = {"af", "ag", "ah"};
      const char *f = graph_attr_string(g, n, names[k], "tanh");
      int code = 0;
      while (graph_rnn_activations[code] && strcmp(graph_rnn_activations[code], f) != 0)
        code++;
      x->attrs[x->nattrs++] = (ExtAttr){.name = codes[k], .kind = 'i', .i = code};
    }
  if (n->op == GOP_ARGMIN || n->op == GOP_ARGMAX)
    x->attrs[x->nattrs++] = (ExtAttr){.name = "is_min", .kind = 'i', .i = n->op == GOP_ARGMIN};

  StructuredOp *op = arena_alloc(arena, sizeof *op);
  op->ext = x;
  op->noperands = x->ninputs + x->noutputs + x->nscratch;
  op->operands = arena_alloc(arena, sizeof(Operand) * (size_t)op->noperands);
  for (int o = 0; o < op->noperands; o++) {
    const TensorParam *t = lower_tensor(L, x->tensors[o]);
    AffineExpr **map = arena_alloc(arena, sizeof(AffineExpr *) * (size_t)(t->rank + 1));
    for (int d = 0; d < t->rank; d++)
      map[d] = affine_const(arena, 0);
    op->operands[o] = (Operand){.tensor = x->tensors[o], .map = map, .loc = lower_loc(L)};
  }
  lower_push(L, op);
}
