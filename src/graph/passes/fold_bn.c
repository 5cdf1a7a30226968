/* fold_bn.c - folds per-channel scale and shift into the constant weights
 * and bias of the conv or matmul that feeds them (see graph.h).
 *
 * Inference BatchNormalization reaches the graph as y = x * s + t with s
 * and t constants that vary only along the channel axis (onnx_json.c folds
 * them from scale, bias, mean, var); Gemm becomes matmul, then mul by alpha
 * and add of C. When such a chain follows an op whose weight is a
 * constant, the chain is an affine map per output channel m,
 *
 *   z[.., m, ..] = S[m] * P(x, W)[.., m, ..] + T[m]
 *
 * and P is linear in W along m, so z = P(x, W * S) + T: the weights absorb
 * S and the bias (conv's third input, or for ops without one a single add
 * that stays) absorbs T. The chain's nodes leave the graph and P writes
 * the chain's final value under its name.
 *
 * Everything is decided from structure: which op class reads a constant
 * weight, which axis of the output is its output-channel axis, and along
 * which axis each constant of the chain broadcasts. S and T are composed
 * in double and every folded element is rounded once to its type (f32 and
 * f64; other types are left alone). Folding constants is not fusion, so
 * --fuse=none does not turn it off. */
#include <string.h>

#include "graph/graph.h"

/* An op that reads a constant weight, and where its output channels are. */
typedef struct {
  int weight;          /* input index of the weight */
  int w_axis;          /* the weight's output-channel axis */
  int y_axis;          /* the output's channel axis */
  int64_t channels;    /* extent of both */
  bool bias_slot;      /* `conv`: input 2 is a per-channel bias added by the op itself */
} WeightOp;

/* One node of a scale/shift chain: value op c, c a per-channel constant. */
typedef enum { STEP_MUL, STEP_DIV, STEP_ADD, STEP_SUB } StepKind;

typedef struct {
  int node;
  StepKind kind;
  const GraphValue *c;
} Step;

/* Who reads each value: how often (a graph output counts as a reader), and
 * the node when there is exactly one. */
typedef struct {
  int *uses;
  int *reader;
} Readers;

static GraphValue *val(const Graph *g, int v) { return GRAPH_VALUE(g, v); }

static bool foldable_type(ElemType t) { return t == TY_F32 || t == TY_F64; }

/* A constant whose elements are numbers now (not symbolic), of type t. */
static bool numeric_const(const Graph *g, int v, ElemType t) {
  if (v < 0)
    return false;
  const GraphValue *c = val(g, v);
  return c->kind == GV_CONST && c->data && c->type == t;
}

static bool channels_last_conv(GraphOp op) {
  return op == GOP_CONV_1D_NWC_WCF || op == GOP_CONV_2D_NHWC_HWCF || op == GOP_CONV_3D_NDHWC_DHWCF ||
         op == GOP_DEPTHWISE_CONV_2D_NHWC_HWC;
}

/* The channel axes of n's weight and output, by op class and layout (ops.md):
 * convs have F first (nchw, `conv`) or last (nhwc, depthwise); the
 * contractions whose second operand is [.., K, N] have N last in both. */
static bool weight_axes(const Graph *g, const GraphNode *n, WeightOp *w) {
  const GraphValue *y = val(g, n->outputs[0]);
  const GraphOpInfo *info = graph_op_info(n->op);
  memset(w, 0, sizeof *w);
  if (info->cls == GC_CONV) {
    w->weight = 1;
    bool last = channels_last_conv(n->op);
    w->w_axis = last ? val(g, n->inputs[1])->rank - 1 : 0;
    w->y_axis = last ? y->rank - 1 : 1;
    w->bias_slot = n->op == GOP_CONV;
    return true;
  }
  if (n->op == GOP_MATMUL || n->op == GOP_BATCH_MATMUL || n->op == GOP_VECMAT) {
    w->weight = 1;
    int rank = val(g, n->inputs[1])->rank;
    if (rank < 2) /* a 1-D right operand has no N: matmul drops that dim */
      return false;
    w->w_axis = rank - 1;
    w->y_axis = y->rank - 1;
    return true;
  }
  if (n->op == GOP_MATVEC) { /* A[M, K] x[K] -> [M] */
    w->weight = 0;
    w->w_axis = 0;
    w->y_axis = 0;
    return true;
  }
  return false;
}

/* n reads a constant weight (and bias, if it has one) that can absorb a
 * per-channel scale and shift. */
static bool weight_op(const Graph *g, const GraphNode *n, WeightOp *w) {
  if (n->noutputs != 1 || !weight_axes(g, n, w))
    return false;
  const GraphValue *y = val(g, n->outputs[0]);
  if (!foldable_type(y->type) || y->rank < 1 || w->y_axis >= y->rank)
    return false;
  int wv = n->inputs[w->weight];
  if (!numeric_const(g, wv, y->type))
    return false;
  if (w->bias_slot && n->ninputs > 2 && n->inputs[2] >= 0 && !numeric_const(g, n->inputs[2], y->type))
    return false;
  const GraphValue *wt = val(g, wv);
  if (!graph_dim_value(y->shape[w->y_axis], &w->channels) ||
      !graph_dims_equal(g->arena, wt->shape[w->w_axis], y->shape[w->y_axis]))
    return false;
  return true;
}

/* c broadcasts against y (rank r) without changing y's shape and varies at
 * most along `axis`: every dim is 1 except, at the axis, the channel count. */
static bool per_channel(const GraphValue *c, const GraphValue *y, int axis, int64_t channels) {
  if (c->rank > y->rank || (c->count != 1 && c->count != channels))
    return false;
  for (int i = 0; i < c->rank; i++) {
    int64_t e = 0;
    graph_dim_value(c->shape[i], &e);
    int at = y->rank - c->rank + i; /* NumPy aligns trailing dims */
    if (e != 1 && !(at == axis && e == channels))
      return false;
  }
  return true;
}

/* Element m (the channel) of a per-channel constant. */
static double channel_elem(const GraphValue *c, int64_t m) { return graph_const_f(c, c->count == 1 ? 0 : m); }

static bool has_zero(const GraphValue *c) {
  for (int64_t i = 0; i < c->count; i++)
    if (graph_const_f(c, i) == 0.0)
      return true;
  return false;
}

/* Whether node n is `x op c` (or `c op x` for mul and add) with c a
 * per-channel constant along the chain's channel axis. */
static bool chain_step(const Graph *g, int n_ix, int x, const WeightOp *w, Step *out) {
  const GraphNode *n = GRAPH_NODE(g, n_ix);
  if (n->ninputs != 2 || n->noutputs != 1)
    return false;
  StepKind kind;
  switch (n->op) {
  case GOP_MUL:
    kind = STEP_MUL;
    break;
  case GOP_DIV:
    kind = STEP_DIV;
    break;
  case GOP_ADD:
    kind = STEP_ADD;
    break;
  case GOP_SUB:
    kind = STEP_SUB;
    break;
  default:
    return false;
  }
  bool commutes = kind == STEP_MUL || kind == STEP_ADD;
  int other;
  if (n->inputs[0] == x && n->inputs[1] != x)
    other = n->inputs[1];
  else if (commutes && n->inputs[1] == x && n->inputs[0] != x)
    other = n->inputs[0];
  else
    return false;
  const GraphValue *xv = val(g, x), *c = val(g, other);
  if (!numeric_const(g, other, xv->type) || !per_channel(c, xv, w->y_axis, w->channels))
    return false;
  if (kind == STEP_DIV && has_zero(c))
    return false;
  out->node = n_ix;
  out->kind = kind;
  out->c = c;
  return true;
}

static Readers count_readers(const Graph *g) {
  Readers r;
  size_t n = (size_t)(g->values.len ? g->values.len : 1);
  r.uses = arena_alloc(g->arena, sizeof *r.uses * n);
  r.reader = arena_alloc(g->arena, sizeof *r.reader * n);
  for (int v = 0; v < g->values.len; v++)
    r.uses[v] = val(g, v)->is_output ? 1 : 0;
  for (int i = 0; i < g->nodes.len; i++) {
    const GraphNode *node = GRAPH_NODE(g, i);
    for (int j = 0; j < node->ninputs; j++)
      if (node->inputs[j] >= 0) {
        r.uses[node->inputs[j]]++;
        r.reader[node->inputs[j]] = i;
      }
  }
  return r;
}

/* The longest chain of scale/shift steps after y, each the only reader of
 * the value before it (an intermediate that is a graph output, or that
 * anything else reads, ends the chain). */
static int collect_chain(const Graph *g, const Readers *r, int y, const WeightOp *w, Step *steps, int max) {
  int count = 0, x = y;
  while (count < max && r->uses[x] == 1 && !val(g, x)->is_output) {
    if (!chain_step(g, r->reader[x], x, w, &steps[count]))
      break;
    x = GRAPH_NODE(g, steps[count].node)->outputs[0];
    count++;
  }
  return count;
}

static bool is_shift(StepKind k) { return k == STEP_ADD || k == STEP_SUB; }

/* S and T per channel, in double: the chain's steps composed in order,
 * starting from S = 1 and T = the op's own bias (0 without one). */
static void compose(const Step *steps, int count, const GraphValue *bias, int64_t channels, double *S, double *T) {
  for (int64_t m = 0; m < channels; m++) {
    S[m] = 1.0;
    T[m] = bias ? graph_const_f(bias, m) : 0.0;
    for (int i = 0; i < count; i++) {
      double c = channel_elem(steps[i].c, m);
      switch (steps[i].kind) {
      case STEP_MUL:
        S[m] *= c;
        T[m] *= c;
        break;
      case STEP_DIV:
        S[m] /= c;
        T[m] /= c;
        break;
      case STEP_ADD:
        T[m] += c;
        break;
      case STEP_SUB:
        T[m] -= c;
        break;
      }
    }
  }
}

/* Element i of a little-endian f32 or f64 buffer, rounded once from double. */
static void store_elem(uint8_t *p, ElemType t, int64_t i, double v) {
  if (t == TY_F32) {
    float f = (float)v;
    uint32_t raw;
    memcpy(&raw, &f, sizeof raw);
    for (int b = 0; b < 4; b++)
      p[i * 4 + b] = (uint8_t)(raw >> (8 * b));
    return;
  }
  uint64_t raw;
  memcpy(&raw, &v, sizeof raw);
  for (int b = 0; b < 8; b++)
    p[i * 8 + b] = (uint8_t)(raw >> (8 * b));
}

/* "<base>_folded", or with a number when that is taken: the old constant
 * keeps its name, since other nodes may still read it. */
static const char *folded_name(const Graph *g, const char *base) {
  const char *s = arena_printf(g->arena, "%s_folded", base);
  for (int i = 2; graph_find(g, s) >= 0; i++)
    s = arena_printf(g->arena, "%s_folded%d", base, i);
  return s;
}

static int64_t const_shape_elem(const GraphValue *v, int i) {
  int64_t e = 0;
  graph_dim_value(v->shape[i], &e);
  return e;
}

/* W * S along the weight's channel axis, as a new constant. */
static int scaled_weight(Graph *g, const GraphValue *wt, int axis, const double *S, int64_t channels) {
  int64_t shape[LG_MAX_RANK], inner = 1;
  for (int i = 0; i < wt->rank; i++) {
    shape[i] = const_shape_elem(wt, i);
    if (i > axis)
      inner *= shape[i];
  }
  int bytes = graph_elem_bytes(wt->type);
  uint8_t *data = arena_alloc(g->arena, (size_t)(wt->count ? wt->count : 1) * (size_t)bytes);
  for (int64_t i = 0; i < wt->count; i++)
    store_elem(data, wt->type, i, graph_const_f(wt, i) * S[(i / inner) % channels]);
  return graph_add_const(g, folded_name(g, wt->name), wt->type, wt->rank, shape, data, wt->path);
}

/* T as a new constant of rank `rank`: [C] then 1s, which broadcasts along
 * the output's channel axis when that axis is `rank` dims from the end. */
static int bias_const(Graph *g, const char *base, ElemType t, int rank, const double *T, int64_t channels,
                      const char *path) {
  int64_t shape[LG_MAX_RANK];
  shape[0] = channels;
  for (int i = 1; i < rank; i++)
    shape[i] = 1;
  uint8_t *data = arena_alloc(g->arena, (size_t)channels * (size_t)graph_elem_bytes(t) + 1);
  for (int64_t m = 0; m < channels; m++)
    store_elem(data, t, m, T[m]);
  return graph_add_const(g, folded_name(g, base), t, rank, shape, data, path);
}

/* A node for the --print-schedule note: its name, else its output's. */
static const char *node_label(const Graph *g, const GraphNode *n) {
  if (n->name && *n->name)
    return n->name;
  return val(g, n->outputs[0])->name;
}

static void note_fold(Graph *g, PtrVec *notes, const GraphNode *p, const Step *steps, int count, bool kept_add,
                      int out) {
  StrBuf sb = {0};
  sb_printf(&sb, "%s (%s): folded", node_label(g, p), graph_op_info(p->op)->name);
  for (int i = 0; i < count; i++) {
    const GraphNode *s = GRAPH_NODE(g, steps[i].node);
    sb_printf(&sb, "%s %s %s", i ? "," : "", graph_op_info(s->op)->name, node_label(g, s));
  }
  sb_printf(&sb, " into its weights%s; %s is %s", kept_add ? " and one bias add" : p->op == GOP_CONV ? " and bias" : "",
            val(g, out)->name, kept_add ? "the bias add's output" : "its output");
  vec_push(g->arena, notes, arena_strdup(g->arena, sb_cstr(&sb)));
  sb_free(&sb);
}

/* Rewrites P and the chain after it: P reads W * S (and, with a bias slot,
 * T as its bias); without a bias slot a shift stays as one add of T (the
 * chain's first shift node, reused). The other chain nodes are marked in
 * `removed`; their outputs are dead. */
static void fold_chain(Graph *g, int p_ix, const WeightOp *w, const Step *steps, int count, bool *removed,
                       PtrVec *notes) {
  GraphNode *p = GRAPH_NODE(g, p_ix);
  const GraphValue *wt = val(g, p->inputs[w->weight]);
  const GraphValue *bias = w->bias_slot && p->ninputs > 2 && p->inputs[2] >= 0 ? val(g, p->inputs[2]) : NULL;
  int keep = -1; /* the step whose node stays as the bias add */
  bool shifted = bias != NULL;
  for (int i = 0; i < count; i++)
    if (is_shift(steps[i].kind)) {
      shifted = true;
      if (keep < 0 && !w->bias_slot)
        keep = i;
    }
  double *S = arena_alloc(g->arena, sizeof *S * (size_t)w->channels);
  double *T = arena_alloc(g->arena, sizeof *T * (size_t)w->channels);
  compose(steps, count, bias, w->channels, S, T);
  int out = GRAPH_NODE(g, steps[count - 1].node)->outputs[0];
  int y = p->outputs[0];
  const GraphValue *yv = val(g, y);
  note_fold(g, notes, p, steps, count, keep >= 0, out);

  int *inputs = arena_alloc(g->arena, sizeof *inputs * 3);
  memcpy(inputs, p->inputs, sizeof *inputs * (size_t)p->ninputs);
  inputs[w->weight] = scaled_weight(g, wt, w->w_axis, S, w->channels);
  if (w->bias_slot && shifted) {
    inputs[2] = bias_const(g, arena_printf(g->arena, "%s_bias", node_label(g, p)), yv->type, 1, T, w->channels,
                           p->path);
    p->ninputs = 3;
  }
  p->inputs = inputs;

  for (int i = 0; i < count; i++) {
    if (i == keep)
      continue;
    removed[steps[i].node] = true;
    int dead = GRAPH_NODE(g, steps[i].node)->outputs[0];
    if (dead != out)
      val(g, dead)->producer = -1; /* read by no node any more */
  }
  if (keep < 0) {
    val(g, y)->producer = -1;
    p->outputs[0] = out;
    return;
  }
  GraphNode *add = GRAPH_NODE(g, steps[keep].node);
  int rank = yv->rank - w->y_axis;
  add->op = GOP_ADD;
  add->inputs[0] = y;
  add->inputs[1] = bias_const(g, arena_printf(g->arena, "%s_bias", node_label(g, p)), yv->type, rank, T,
                              w->channels, add->path);
  if (add->outputs[0] != out)
    val(g, add->outputs[0])->producer = -1;
  add->outputs[0] = out;
}

/* Drops the removed nodes and renumbers the producers of the rest. */
static void compact_nodes(Graph *g, const bool *removed) {
  int kept = 0;
  for (int i = 0; i < g->nodes.len; i++) {
    if (removed[i])
      continue;
    GraphNode *n = GRAPH_NODE(g, i);
    g->nodes.items[kept] = n;
    for (int j = 0; j < n->noutputs; j++)
      val(g, n->outputs[j])->producer = kept;
    kept++;
  }
  g->nodes.len = kept;
}

/* Without a bias slot a chain of shifts only is already one bias add (or
 * could merge into one): folding pays when a scale moves into the weights. */
static bool worth_folding(const WeightOp *w, const Step *steps, int count) {
  if (w->bias_slot)
    return count > 0;
  for (int i = 0; i < count; i++)
    if (!is_shift(steps[i].kind))
      return true;
  return false;
}

enum { MAX_CHAIN = 16 };

void graph_fold_scale_shift(Graph *g, PtrVec *notes) {
  int nnodes = g->nodes.len;
  if (nnodes == 0)
    return;
  Readers r = count_readers(g);
  bool *removed = arena_alloc(g->arena, sizeof *removed * (size_t)nnodes);
  bool any = false;
  for (int i = 0; i < nnodes; i++) {
    GraphNode *n = GRAPH_NODE(g, i);
    WeightOp w;
    if (removed[i] || !weight_op(g, n, &w))
      continue;
    Step steps[MAX_CHAIN];
    int count = collect_chain(g, &r, n->outputs[0], &w, steps, MAX_CHAIN);
    if (!worth_folding(&w, steps, count))
      continue;
    fold_chain(g, i, &w, steps, count, removed, notes);
    any = true;
  }
  if (any)
    compact_nodes(g, removed);
}
