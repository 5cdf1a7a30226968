/* share_input.c - input sharing (the ByteIR case): contractions that read
 * one activation with different constant weights become one contraction
 * over the weights concatenated along their output axis (see graph.h).
 *
 * The Q, K and V projections of a transformer block read the same x with
 * three weights [K, N_i]: three matmuls each read x and each pack it. One
 * matmul over [K, N_1 + N_2 + N_3] reads and packs x once and runs one wider
 * GEMM, whose register blocks fill better than three narrow ones. Each
 * original result becomes a slice of the wide one along its last axis; the
 * slices are layout copies that fusion folds into their readers' maps.
 *
 * Decided from structure: a `matmul` node whose second input is a rank-2
 * constant of numbers (the weight, [K, N]), whose first input is shared
 * with at least one other such node of the same element type and K, and
 * whose result has a static shape (slices are static). The wide matmul takes
 * the place of the group's first node in the node order, so it runs before
 * every slice of it; the weights' elements are copied, not rounded. */
#include <string.h>

#include "graph/graph.h"

static GraphValue *val(const Graph *g, int v) { return GRAPH_VALUE(g, v); }

static bool static_shape(const GraphValue *v) {
  int64_t x;
  for (int i = 0; i < v->rank; i++)
    if (!graph_dim_value(v->shape[i], &x))
      return false;
  return true;
}

/* Whether node n is a matmul by a constant [K, N] weight with a static result. */
static bool shares_candidate(const Graph *g, const GraphNode *n) {
  if (n->op != GOP_MATMUL || n->ninputs != 2 || n->noutputs != 1)
    return false;
  const GraphValue *x = val(g, n->inputs[0]), *w = val(g, n->inputs[1]), *y = val(g, n->outputs[0]);
  return x->kind != GV_CONST && x->rank >= 2 && w->kind == GV_CONST && w->data && w->rank == 2 &&
         w->type == x->type && static_shape(y);
}

/* Whether nodes a and b can share: same activation, same K. */
static bool same_group(const Graph *g, const GraphNode *a, const GraphNode *b) {
  int64_t ka, kb;
  return a->inputs[0] == b->inputs[0] && graph_dim_value(val(g, a->inputs[1])->shape[0], &ka) &&
         graph_dim_value(val(g, b->inputs[1])->shape[0], &kb) && ka == kb;
}

/* base + "_shared", or with a number after it when the graph has that name:
 * one weight can lead two groups (an unrolled recurrence reads its matrix
 * once per step, from different activations). */
static const char *shared_name(Graph *g, const char *base) {
  const char *name = arena_printf(g->arena, "%s_shared", base);
  for (int k = 2; graph_find(g, name) >= 0; k++)
    name = arena_printf(g->arena, "%s_shared%d", base, k);
  return name;
}

/* [K, N_1 + ... + N_m]: row k is row k of every weight, in group order. */
static int concat_weights(Graph *g, GraphNode **group, int m, int64_t k, int64_t total, const char *path) {
  const GraphValue *w0 = val(g, group[0]->inputs[1]);
  size_t esize = (size_t)graph_elem_bytes(w0->type);
  uint8_t *data = arena_alloc(g->arena, esize * (size_t)(k * total) + 1);
  int64_t col = 0;
  for (int i = 0; i < m; i++) {
    const GraphValue *w = val(g, group[i]->inputs[1]);
    int64_t n;
    graph_dim_value(w->shape[1], &n);
    for (int64_t r = 0; r < k; r++)
      memcpy(data + esize * (size_t)(r * total + col), (const uint8_t *)w->data + esize * (size_t)(r * n),
             esize * (size_t)n);
    col += n;
  }
  int64_t shape[2] = {k, total};
  const char *name = shared_name(g, w0->name);
  return graph_add_const(g, name, w0->type, 2, shape, data, path);
}

/* Moves the last node of g to position `at`, renumbering producers. */
static void move_last_node_to(Graph *g, int at) {
  void *last = g->nodes.items[g->nodes.len - 1];
  memmove(&g->nodes.items[at + 1], &g->nodes.items[at], sizeof(void *) * (size_t)(g->nodes.len - 1 - at));
  g->nodes.items[at] = last;
  for (int i = at; i < g->nodes.len; i++) {
    GraphNode *n = GRAPH_NODE(g, i);
    for (int j = 0; j < n->noutputs; j++)
      val(g, n->outputs[j])->producer = i;
  }
}

/* Node n becomes `slice` of wide along the last axis, columns [col, col + N). */
static void become_slice(Graph *g, GraphNode *n, int wide, int64_t col) {
  const GraphValue *y = val(g, n->outputs[0]);
  int rank = y->rank;
  GraphAttr *attrs = arena_alloc(g->arena, sizeof *attrs * 3);
  const char *names[3] = {"starts", "sizes", "strides"};
  for (int a = 0; a < 3; a++) {
    attrs[a] = (GraphAttr){.name = names[a], .kind = GA_INTS, .n = rank};
    attrs[a].ints = arena_alloc(g->arena, sizeof(int64_t) * (size_t)rank);
    for (int i = 0; i < rank; i++) {
      int64_t extent;
      graph_dim_value(y->shape[i], &extent);
      attrs[a].ints[i] = a == 0 ? (i == rank - 1 ? col : 0) : a == 1 ? extent : 1;
    }
  }
  int *inputs = arena_alloc(g->arena, sizeof(int));
  inputs[0] = wide;
  n->op = GOP_SLICE;
  n->ninputs = 1;
  n->inputs = inputs;
  n->nattrs = 3;
  n->attrs = attrs;
}

static void share_group(Graph *g, GraphNode **group, int m, int first_index, PtrVec *notes) {
  int64_t k, total = 0;
  graph_dim_value(val(g, group[0]->inputs[1])->shape[0], &k);
  for (int i = 0; i < m; i++) {
    int64_t n;
    graph_dim_value(val(g, group[i]->inputs[1])->shape[1], &n);
    total += n;
  }
  int w = concat_weights(g, group, m, k, total, group[0]->path);
  int ins[2] = {group[0]->inputs[0], w};
  const char *name = shared_name(g, val(g, group[0]->outputs[0])->name);
  const char *out_names[1] = {name};
  int wide = graph_add_node(g, GOP_MATMUL, name, 2, ins, 0, NULL, out_names, group[0]->path, "matmul");
  move_last_node_to(g, first_index);
  StrBuf sb = {0};
  sb_printf(&sb, "one matmul over the weights of");
  int64_t col = 0;
  for (int i = 0; i < m; i++) {
    int64_t n;
    graph_dim_value(val(g, group[i]->inputs[1])->shape[1], &n);
    sb_printf(&sb, "%s '%s'", i ? "," : "", val(g, group[i]->outputs[0])->name);
    become_slice(g, group[i], wide, col);
    col += n;
  }
  sb_printf(&sb, ", which all read '%s'", val(g, ins[0])->name);
  vec_push(g->arena, notes, arena_strdup(g->arena, sb_cstr(&sb)));
  sb_free(&sb);
}

void graph_share_inputs(Graph *g, PtrVec *notes) {
  int nnodes = g->nodes.len;
  /* every group of two or more adds one node: the list grows by < half */
  bool *done = arena_alloc(g->arena, sizeof(bool) * (size_t)(2 * nnodes + 2));
  GraphNode **group = arena_alloc(g->arena, sizeof(GraphNode *) * (size_t)(nnodes + 1));
  for (int i = 0; i < nnodes; i++) {
    GraphNode *a = GRAPH_NODE(g, i);
    if (done[i] || !shares_candidate(g, a))
      continue;
    int m = 0;
    group[m++] = a;
    for (int j = i + 1; j < nnodes; j++) {
      GraphNode *b = GRAPH_NODE(g, j);
      if (!done[j] && shares_candidate(g, b) && same_group(g, a, b)) {
        group[m++] = b;
        done[j] = true;
      }
    }
    if (m < 2)
      continue;
    share_group(g, group, m, i, notes);
    /* the wide matmul now sits at i: the slices moved one place down */
    memmove(&done[i + 1], &done[i], sizeof(bool) * (size_t)(nnodes - i));
    done[i] = true;
    nnodes++;
    i++;
  }
}
