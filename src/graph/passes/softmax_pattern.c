/* softmax_pattern.c - softmax written from primitives runs as one op.
 *
 * ONNX exporters (and lgen's own expansion of softmax, expand.c) write
 * softmax as reduce_max, sub, exp, reduce_sum and div over one axis, and
 * log-softmax with log and sub in place of the div. As primitives that is
 * three passes over each row and two intermediates the size of x. The
 * pattern is found from the graph's structure (the ops, their axes and
 * which value feeds which), never from node names or origins, and becomes
 * one online_softmax node (templates/softmax.c: one pass over each row
 * that fits in cache). A scaling of x by one constant before it (the 1 /
 * sqrt(d) of attention scores) moves into the op's `scale`, and one of its
 * result after it, when that is the result's only use, into `out_scale`.
 *
 * The old nodes stay in the graph: values that nothing reads any more are
 * not lowered (lower.c keeps what an output depends on), and a value that
 * something else still reads (the sum, say) is still computed. */
#include <string.h>

#include "graph/graph.h"

typedef struct {
  int *readers; /* per value: how many node inputs read it (+1 for a graph output) */
} Uses;

static GraphValue *val(const Graph *g, int v) { return GRAPH_VALUE(g, v); }

/* The node producing value v when it is op `op`, else NULL. */
static const GraphNode *made_by(const Graph *g, int v, GraphOp op) {
  if (v < 0 || val(g, v)->kind != GV_NODE || val(g, v)->producer < 0)
    return NULL;
  const GraphNode *n = GRAPH_NODE(g, val(g, v)->producer);
  return n->op == op ? n : NULL;
}

/* A reduction over exactly one axis that keeps it: that axis, else -1. */
static int single_axis(const Graph *g, const GraphNode *r) {
  const GraphAttr *axes = graph_attr(g, r, "axes");
  if (!axes || axes->kind != GA_INTS || axes->n != 1 || graph_attr_int(g, r, "keepdims", 1) != 1)
    return -1;
  return (int)axes->ints[0];
}

static bool same_shape(const Graph *g, int a, int b) {
  const GraphValue *x = val(g, a), *y = val(g, b);
  if (x->rank != y->rank || x->type != y->type)
    return false;
  for (int d = 0; d < x->rank; d++)
    if (!graph_dims_equal(g->arena, x->shape[d], y->shape[d]))
      return false;
  return true;
}

/* The single value of a constant with one element (of any shape), or false. */
static bool scalar_const(const Graph *g, int v, double *out) {
  const GraphValue *c = val(g, v);
  if (c->kind != GV_CONST || c->count != 1 || !c->data || !elem_type_is_float(c->type))
    return false;
  *out = graph_const_f(c, 0);
  return true;
}

typedef struct {
  int x;     /* the softmax's input */
  int axis;
  bool log;
  double scale;
  const char *scaled; /* the value whose scaling moved into the op, or NULL */
} Match;

/* y = div(e, sum(e)) or y = sub(t, log(sum(e))), e = exp(t), t = sub(x,
 * max(x)), every reduction over the same single axis, keepdims, and every
 * value but the reductions shaped like x. */
static bool match(const Graph *g, const GraphNode *last, Match *m) {
  if (last->ninputs != 2)
    return false;
  int t, sum;
  const GraphNode *exp_node = NULL, *sum_node, *log_node = NULL;
  if (last->op == GOP_DIV) {
    exp_node = made_by(g, last->inputs[0], GOP_EXP);
    sum = last->inputs[1];
    if (!exp_node)
      return false;
    t = exp_node->inputs[0];
  } else if (last->op == GOP_SUB) {
    log_node = made_by(g, last->inputs[1], GOP_LOG);
    if (!log_node)
      return false;
    sum = log_node->inputs[0];
    t = last->inputs[0];
  } else {
    return false;
  }
  sum_node = made_by(g, sum, GOP_REDUCE_SUM);
  const GraphNode *sub = made_by(g, t, GOP_SUB);
  if (!sum_node || !sub)
    return false;
  const GraphNode *e = made_by(g, sum_node->inputs[0], GOP_EXP);
  if (!e || e->inputs[0] != t || (exp_node && exp_node != e))
    return false;
  int x = sub->inputs[0];
  const GraphNode *max = made_by(g, sub->inputs[1], GOP_REDUCE_MAX);
  if (!max || max->inputs[0] != x)
    return false;
  int axis = single_axis(g, max);
  if (axis < 0 || single_axis(g, sum_node) != axis)
    return false;
  const GraphValue *xv = val(g, x);
  if (xv->type != TY_F32 && xv->type != TY_F64 && xv->type != TY_F16)
    return false;
  if (!same_shape(g, x, t) || !same_shape(g, x, e->outputs[0]) || !same_shape(g, x, last->outputs[0]))
    return false;
  *m = (Match){.x = x, .axis = axis, .log = log_node != NULL, .scale = 1.0};
  return true;
}

static Uses count_uses(const Graph *g) {
  Uses u = {arena_alloc(g->arena, sizeof(int) * (size_t)(g->values.len + 1))};
  for (int i = 0; i < g->nodes.len; i++) {
    const GraphNode *n = GRAPH_NODE(g, i);
    for (int j = 0; j < n->ninputs; j++)
      if (n->inputs[j] >= 0)
        u.readers[n->inputs[j]]++;
  }
  for (int i = 0; i < g->outputs.len; i++)
    u.readers[g->outputs.items[i]]++;
  return u;
}

/* x = mul(x0, c) or div(x0, c) with c one constant, read only by the
 * pattern's max and sub: the op reads x0 with scale c (or 1 / c). */
static void absorb_scale(const Graph *g, const Uses *u, Match *m) {
  const GraphNode *p = made_by(g, m->x, GOP_MUL);
  if (!p)
    p = made_by(g, m->x, GOP_DIV);
  if (!p || u->readers[m->x] != 2 || p->ninputs != 2)
    return;
  double c;
  int x0;
  if (scalar_const(g, p->inputs[1], &c))
    x0 = p->inputs[0];
  else if (p->op == GOP_MUL && scalar_const(g, p->inputs[0], &c))
    x0 = p->inputs[1];
  else
    return;
  /* an f16 x * c is rounded to f16 before the softmax: folded in, it
   * would be computed in f32 (the f16 softmax runs in f32), which moves a
   * large logit's exp by percents against the graph's meaning */
  if (!same_shape(g, x0, m->x) || (p->op == GOP_DIV && c == 0) || val(g, m->x)->type == TY_F16)
    return;
  m->scaled = val(g, m->x)->name;
  m->scale = p->op == GOP_DIV ? 1.0 / c : c;
  m->x = x0;
}

/* The softmax's result s (node `at`) read once, by mul(s, c), mul(c, s) or
 * div(s, c) with c one constant: that node leaves the graph, the softmax
 * writes its result with out_scale c (or 1 / c). Returns the name of the
 * value whose scaling moved in, or NULL. */
static const char *absorb_post_scale(Graph *g, const Uses *u, int at) {
  GraphNode *sm = GRAPH_NODE(g, at);
  int y = sm->outputs[0];
  if (u->readers[y] != 1) /* a graph output counts as a reader */
    return NULL;
  for (int c = at + 1; c < g->nodes.len; c++) {
    GraphNode *n = GRAPH_NODE(g, c);
    int slot = n->ninputs == 2 && n->inputs[0] == y ? 0 : n->ninputs == 2 && n->inputs[1] == y ? 1 : -1;
    bool reads = false;
    for (int j = 0; j < n->ninputs; j++)
      reads |= n->inputs[j] == y;
    if (!reads)
      continue;
    double k;
    if (slot < 0 || !(n->op == GOP_MUL || (n->op == GOP_DIV && slot == 0)) ||
        !scalar_const(g, n->inputs[1 - slot], &k) || (n->op == GOP_DIV && k == 0) ||
        !same_shape(g, y, n->outputs[0]))
      return NULL;
    for (int a = 0; a < sm->nattrs; a++)
      if (strcmp(sm->attrs[a].name, "out_scale") == 0)
        sm->attrs[a].f = n->op == GOP_DIV ? 1.0 / k : k;
    const char *scaled = val(g, n->outputs[0])->name;
    sm->outputs[0] = n->outputs[0];
    val(g, n->outputs[0])->producer = at;
    val(g, y)->producer = -1; /* read by nothing now */
    graph_replace_node(g, c, g->nodes.len); /* no nodes take its place */
    return scaled;
  }
  return NULL;
}

void graph_recognize_softmax(Graph *g, PtrVec *notes) {
  Uses u = count_uses(g);
  for (int i = 0; i < g->nodes.len; i++) {
    GraphNode *n = GRAPH_NODE(g, i);
    Match m;
    if (!match(g, n, &m))
      continue;
    absorb_scale(g, &u, &m);
    int y = n->outputs[0], first = g->nodes.len;
    GraphAttr attrs[3] = {{.name = "axis", .kind = GA_INT, .i = m.axis},
                          {.name = "log", .kind = GA_INT, .i = m.log},
                          {.name = "scale", .kind = GA_FLOAT, .f = m.scale}};
    /* f16 runs in f32 between two casts (the template computes in its
     * element type; an op row-fused after the softmax, schedule/rows.c,
     * takes the cast back) and rounds once, where the primitives round
     * every intermediate */
    bool half = val(g, m.x)->type == TY_F16;
    GraphAttr to_f32 = {.name = "to", .kind = GA_STRING, .s = "f32"}, to_f16 = {.name = "to", .kind = GA_STRING,
                                                                                .s = "f16"};
    int in = half ? graph_add_node(g, GOP_CAST, NULL, 1, &m.x, 1, &to_f32, NULL, n->path, n->origin) : m.x;
    int sm = graph_add_node(g, GOP_ONLINE_SOFTMAX, NULL, 1, &in, 3, attrs, NULL, n->path, n->origin);
    if (half)
      graph_add_node(g, GOP_CAST, NULL, 1, &sm, 1, &to_f16, NULL, n->path, n->origin);
    const char *what = m.log ? "log-softmax" : "softmax";
    vec_push(g->arena, notes,
             m.scaled ? arena_printf(g->arena, "'%s' = %s of '%s' along axis %d, the scaling '%s' by %g folded in",
                                     val(g, y)->name, what, val(g, m.x)->name, m.axis, m.scaled, m.scale)
                      : arena_printf(g->arena, "'%s' = %s of '%s' along axis %d", val(g, y)->name, what,
                                     val(g, m.x)->name, m.axis));
    graph_write_result(g, y);
    graph_replace_node(g, i, first);
    if (half) {
      vec_push(g->arena, notes, arena_printf(g->arena, "'%s' is f16: computed in f32 between two casts",
                                             val(g, y)->name));
      i += 2;
      continue;
    }
    const char *post = absorb_post_scale(g, &u, i);
    if (post)
      vec_push(g->arena, notes, arena_printf(g->arena, "'%s' = '%s' scaled by %g, folded into the softmax", post,
                                             val(g, y)->name, graph_attr_float(g, GRAPH_NODE(g, i), "out_scale", 1)));
  }
}
