/* fold_diag.c - a matmul by a diagonal matrix made by `diag` is a scaling
 * (see graph.h): diag(v) @ b scales b's rows by v, a @ diag(v) scales a's
 * columns. The fold replaces the matmul by one broadcasting mul (v reshaped
 * to [n, 1] for rows), O(n m) instead of an O(n^2 m) contraction over a
 * materialised n x n matrix. Decided from structure: the operand's
 * producer is a diag node; the diag stays only while other nodes read it. */
#include <string.h>

#include "graph/graph.h"

static GraphValue *val(const Graph *g, int v) { return GRAPH_VALUE(g, v); }

/* The vector v when value x is diag(v), else -1. */
static int diag_source(const Graph *g, int x) {
  const GraphValue *v = val(g, x);
  if (v->kind != GV_NODE)
    return -1;
  const GraphNode *p = GRAPH_NODE(g, v->producer);
  return p->op == GOP_DIAG ? p->inputs[0] : -1;
}

void graph_fold_diag(Graph *g, PtrVec *notes) {
  for (int i = 0; i < g->nodes.len; i++) {
    GraphNode *n = GRAPH_NODE(g, i);
    if (n->op != GOP_MATMUL || n->ninputs != 2)
      continue;
    int a = n->inputs[0], b = n->inputs[1];
    int va = diag_source(g, a), vb = diag_source(g, b);
    if (va < 0 && vb < 0)
      continue;
    if (val(g, a)->type != val(g, b)->type)
      continue;
    int y = n->outputs[0], first = g->nodes.len;
    const char *what;
    if (va >= 0) { /* diag(v) @ b: row i of b times v[i] */
      int other = b;
      if (val(g, b)->rank >= 2) {
        int64_t shape[2] = {-1, 1};
        GraphAttr ra = {.name = "shape", .kind = GA_INTS, .n = 2};
        ra.ints = arena_alloc(g->arena, sizeof shape);
        memcpy(ra.ints, shape, sizeof shape);
        va = graph_add_node(g, GOP_RESHAPE, NULL, 1, &va, 1, &ra, NULL, n->path, n->origin);
      }
      int ins[2] = {va, other};
      graph_add_node(g, GOP_MUL, NULL, 2, ins, 0, NULL, NULL, n->path, n->origin);
      what = arena_printf(g->arena, "a row scaling of '%s'", val(g, b)->name);
    } else { /* a @ diag(v): column j of a times v[j] */
      int ins[2] = {a, vb};
      graph_add_node(g, GOP_MUL, NULL, 2, ins, 0, NULL, NULL, n->path, n->origin);
      what = arena_printf(g->arena, "a column scaling of '%s'", val(g, a)->name);
    }
    vec_push(g->arena, notes, arena_printf(g->arena, "matmul '%s': diag '%s' folded as %s", val(g, y)->name,
                                           val(g, va >= 0 ? a : b)->name, what));
    graph_write_result(g, y);
    graph_replace_node(g, i, first);
    i += g->nodes.len - first;
  }
}
