/* widen_f16.c - f16 sums accumulate in f32.
 *
 * A payload computes an f16 value in float and rounds it back to f16 once
 * (c_expr.c), but a reduction's accumulator has its output's type: an f16
 * matmul, conv or sum would round after every multiply-add, and a sum of a
 * thousand f16 values drifts by percents. Every framework accumulates f16
 * contractions in f32; so does lgen. A node that sums (a contraction, a
 * conv, reduce_sum, reduce_mean, reduce_prod, sum and average pooling) over
 * f16 values becomes the
 * same node over f32 between casts: its f16 inputs are cast to f32 (a
 * constant's cast folds into an f32 constant; fusion computes the others
 * in the op's reads or pack copies), and its f32 result is cast back to
 * f16 once (fusion applies that cast as an epilogue before the store).
 * reduce_max, reduce_min and max and min pooling are exact in f16 and stay
 * as they are.
 *
 * Always on, also under --fuse=none: it is about the result, not speed. */
#include "graph/graph.h"

static bool sums(const GraphNode *n) {
  GraphOpClass c = graph_op_info(n->op)->cls;
  return c == GC_CONTRACT || c == GC_CONV || n->op == GOP_REDUCE_SUM || n->op == GOP_REDUCE_MEAN ||
         n->op == GOP_REDUCE_PROD || n->op == GOP_POOLING_NHWC_SUM || n->op == GOP_POOLING_NHWC_AVG ||
         n->op == GOP_POOLING_NCHW_SUM || n->op == GOP_POOLING_NCHW_AVG;
}

void graph_widen_f16(Graph *g, PtrVec *notes) {
  GraphAttr to_f32 = {.name = "to", .kind = GA_STRING, .s = "f32"};
  GraphAttr to_f16 = {.name = "to", .kind = GA_STRING, .s = "f16"};
  for (int i = 0; i < g->nodes.len; i++) {
    GraphNode *n = GRAPH_NODE(g, i);
    if (!sums(n) || n->noutputs != 1 || GRAPH_VALUE(g, n->outputs[0])->type != TY_F16)
      continue;
    /* adding nodes may move n: what it says is copied first */
    const GraphNode node = *n;
    int y = node.outputs[0], first = g->nodes.len;
    int *inputs = arena_alloc(g->arena, sizeof(int) * (size_t)(node.ninputs + 1));
    for (int j = 0; j < node.ninputs; j++) {
      int v = node.inputs[j];
      inputs[j] = v >= 0 && GRAPH_VALUE(g, v)->type == TY_F16
                      ? graph_add_node(g, GOP_CAST, NULL, 1, &v, 1, &to_f32, NULL, node.path, node.origin)
                      : v;
    }
    int wide = graph_add_node(g, node.op, NULL, node.ninputs, inputs, node.nattrs, node.attrs, NULL, node.path,
                              node.origin);
    graph_add_node(g, GOP_CAST, NULL, 1, &wide, 1, &to_f16, NULL, node.path, node.origin);
    graph_write_result(g, y);
    graph_replace_node(g, i, first);
    vec_push(g->arena, notes,
             arena_printf(g->arena, "'%s' (%s) sums in f32 and is rounded to f16 once", GRAPH_VALUE(g, y)->name,
                          graph_op_info(node.op)->name));
  }
}
