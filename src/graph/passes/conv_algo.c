/* conv_algo.c - the algorithm of each 2-D convolution (see graph.h):
 * direct (the conv's own loop nest), im2col (the input's windows as a
 * matrix, then lgen's matmul by the filter seen as [KH * KW * C, F]; NHWC
 * convs only), winograd (F(2x2, 3x3): filter, input and output transforms
 * around 16 matmuls, for 3x3 stride-1 convs) or winograd6 (F(6x6, 3x3):
 * the same with output_tile_size 6, 64 matmuls).
 *
 * The choice comes from the schedule file's `algorithm: {OUTPUT: im2col}`
 * under the graph's name, else from the node's `algorithm` attribute, else
 * it is automatic (--conv-algorithm=auto, the default): winograd where it
 * applies and pays (winograd_pays), direct elsewhere. F(2x2, 3x3) rounds
 * differently but no worse than the direct conv (lgen(1), Accuracy);
 * im2col, which trades memory for a GEMM, and winograd6, whose f32 error
 * is 30 times larger, are never automatic. The conv node is replaced by
 * the new nodes, the last of which writes the conv's result value, so
 * readers and graph outputs are unchanged. */
#include <string.h>

#include "graph/graph.h"

static GraphValue *val(const Graph *g, int v) { return GRAPH_VALUE(g, v); }

/* The dims of v, -1 for a symbolic batch (dim 0) when batch_may_vary;
 * false when another dim is symbolic. */
static bool dims_static(const GraphValue *v, int64_t *out, bool batch_may_vary) {
  for (int d = 0; d < v->rank; d++)
    if (!graph_dim_value(v->shape[d], &out[d])) {
      if (d > 0 || !batch_may_vary)
        return false;
      out[d] = -1;
    }
  return true;
}

static GraphAttr ints_attr(Graph *g, const char *name, int n, const int64_t *v) {
  GraphAttr a = {.name = name, .kind = GA_INTS, .n = n};
  a.ints = arena_alloc(g->arena, sizeof *a.ints * (size_t)(n + 1));
  memcpy(a.ints, v, sizeof *a.ints * (size_t)n);
  return a;
}

/* The conv's two spatial values of a pair attribute (default 1). */
static void pair(const Graph *g, const GraphNode *n, const char *name, int64_t *v) {
  const GraphAttr *a = graph_attr(g, n, name);
  v[0] = v[1] = 1;
  if (a && a->kind == GA_INTS && a->n == 2) {
    v[0] = a->ints[0];
    v[1] = a->ints[1];
  }
}

void graph_replace_node(Graph *g, int at, int first) {
  int added = g->nodes.len - first;
  void **moved = arena_alloc(g->arena, sizeof(void *) * (size_t)(added + 1));
  memcpy(moved, &g->nodes.items[first], sizeof(void *) * (size_t)added);
  memmove(&g->nodes.items[at + added], &g->nodes.items[at + 1], sizeof(void *) * (size_t)(first - at - 1));
  memcpy(&g->nodes.items[at], moved, sizeof(void *) * (size_t)added);
  g->nodes.len = first - 1 + added;
  for (int i = at; i < g->nodes.len; i++) {
    GraphNode *n = GRAPH_NODE(g, i);
    for (int j = 0; j < n->noutputs; j++)
      val(g, n->outputs[j])->producer = i;
  }
}

void graph_write_result(Graph *g, int y) {
  GraphNode *last = GRAPH_NODE(g, g->nodes.len - 1);
  last->outputs[0] = y;
}

/* padding as [top, bottom, left, right]: GA_INTS2 pairs, or ONNX's flat
 * begins then ends. */
static void padding(const Graph *g, const GraphNode *n, int64_t *p) {
  const GraphAttr *pad = graph_attr(g, n, "padding");
  p[0] = p[1] = p[2] = p[3] = 0;
  if (pad && pad->kind == GA_INTS2 && pad->n == 2)
    for (int i = 0; i < 4; i++)
      p[i] = pad->ints[i];
  else if (pad && pad->kind == GA_INTS && pad->n == 4) {
    p[0] = pad->ints[0];
    p[1] = pad->ints[2];
    p[2] = pad->ints[1];
    p[3] = pad->ints[3];
  }
}

/* The origin of the nodes a conv becomes: its own with its name
 * ("conv1: Conv"), which the lowered ops carry into the C's comments and
 * the profile (lower.c's node_origin names only a named node). */
static const char *origin_of(Graph *g, const GraphNode *n) {
  const char *op = n->origin ? n->origin : graph_op_info(n->op)->name;
  return n->name && *n->name ? arena_printf(g->arena, "%s: %s", n->name, op) : op;
}

static void im2col(Graph *g, GraphNode *n, const int64_t *ws, const int64_t *ys) {
  int64_t k[2] = {ws[0], ws[1]}, s[2], d[2];
  pair(g, n, "strides", s);
  pair(g, n, "dilations", d);
  int64_t p[4];
  padding(g, n, p);
  GraphAttr a[4] = {ints_attr(g, "kernel", 2, k), ints_attr(g, "strides", 2, s), ints_attr(g, "dilations", 2, d),
                    ints_attr(g, "padding", 4, p)};
  int x = n->inputs[0], w = n->inputs[1];
  int col = graph_add_node(g, GOP_IM2COL, NULL, 1, &x, 4, a, NULL, n->path, origin_of(g, n));
  int64_t wshape[2] = {ws[0] * ws[1] * ws[2], ws[3]};
  GraphAttr ra = ints_attr(g, "shape", 2, wshape);
  int wm = graph_add_node(g, GOP_RESHAPE, NULL, 1, &w, 1, &ra, NULL, n->path, origin_of(g, n));
  int ins[2] = {col, wm};
  int mm = graph_add_node(g, GOP_MATMUL, NULL, 2, ins, 0, NULL, NULL, n->path, origin_of(g, n));
  GraphAttr oa = ints_attr(g, "shape", 4, ys);
  graph_add_node(g, GOP_RESHAPE, NULL, 1, &mm, 1, &oa, NULL, n->path, origin_of(g, n));
}

static GraphAttr perm_attr(Graph *g, int64_t a, int64_t b, int64_t c, int64_t d) {
  return ints_attr(g, "perm", 4, (const int64_t[]){a, b, c, d});
}

static int transpose(Graph *g, const GraphNode *n, int x, GraphAttr perm) {
  return graph_add_node(g, GOP_TRANSPOSE, NULL, 1, &x, 1, &perm, NULL, n->path, origin_of(g, n));
}

/* F(m x m, 3x3), m = 2 or 6 (winograd6). ys is the output's [N, OH, OW],
 * N -1 when it is symbolic: the output transform then takes [OH, OW] and
 * finds N from the tile count.
 * ONNX's conv (NCHW, FCHW filter, a bias) reaches the same NHWC transforms
 * through transposes: the filter's folds with it, and the activations'
 * are plain copies once the layout pass stores them channels-last. */
static void winograd(Graph *g, GraphNode *n, const int64_t *ys, int64_t m) {
  bool nchw = n->op == GOP_CONV;
  int64_t p[4];
  padding(g, n, p);
  GraphAttr ta = {.name = "output_tile_size", .kind = GA_INT, .i = m};
  GraphAttr pa[2] = {ints_attr(g, "padding", 4, p), ta};
  GraphAttr sa[2] = {ys[0] < 0 ? ints_attr(g, "shape", 2, ys + 1) : ints_attr(g, "shape", 3, ys), ta};
  int x = n->inputs[0], w = n->inputs[1];
  if (nchw) {
    x = transpose(g, n, x, perm_attr(g, 0, 2, 3, 1));
    w = transpose(g, n, w, perm_attr(g, 2, 3, 1, 0)); /* FCHW -> HWCF */
  }
  int u = graph_add_node(g, GOP_WINOGRAD_FILTER_TRANSFORM, NULL, 1, &w, 1, &ta, NULL, n->path, origin_of(g, n));
  int v = graph_add_node(g, GOP_WINOGRAD_INPUT_TRANSFORM, NULL, 1, &x, 2, pa, NULL, n->path, origin_of(g, n));
  int ins[2] = {v, u};
  int mm = graph_add_node(g, GOP_MATMUL, NULL, 2, ins, 0, NULL, NULL, n->path, origin_of(g, n)); /* (m+2)^2 [P,C] x [C,F] */
  int y = graph_add_node(g, GOP_WINOGRAD_OUTPUT_TRANSFORM, NULL, 1, &mm, 2, sa, NULL, n->path, origin_of(g, n));
  if (!nchw)
    return;
  if (n->ninputs > 2 && n->inputs[2] >= 0) { /* the bias, over the NHWF result's last dim */
    int yb[2] = {y, n->inputs[2]};
    y = graph_add_node(g, GOP_ADD, NULL, 2, yb, 0, NULL, NULL, n->path, origin_of(g, n));
  }
  transpose(g, n, y, perm_attr(g, 0, 3, 1, 2));
}

/* A 2-D conv's shapes in NHWC terms: x [N, H, W, C], the filter [KH, KW,
 * C, F] and y [N, OH, OW, F], from conv_2d_nhwc_hwcf or from ONNX's conv
 * (NCHW, FCHW filter) with one group. False for other convs. *known: all
 * dims are static but perhaps the batch, which is then -1. */
static bool conv_shapes(const Graph *g, const GraphNode *n, int64_t *xs, int64_t *ws, int64_t *ys, bool *known) {
  if (n->op != GOP_CONV_2D_NHWC_HWCF && n->op != GOP_CONV)
    return false;
  const GraphValue *x = val(g, n->inputs[0]), *w = val(g, n->inputs[1]), *y = val(g, n->outputs[0]);
  if (n->op == GOP_CONV_2D_NHWC_HWCF) {
    *known = dims_static(x, xs, true) && dims_static(w, ws, false) && dims_static(y, ys, true);
    return true;
  }
  if (x->rank != 4 || w->rank != 4 || graph_attr_int(g, n, "group", 1) != 1)
    return false;
  int64_t a[4], b[4], c[4];
  *known = dims_static(x, a, true) && dims_static(w, b, false) && dims_static(y, c, true);
  static const int nhwc[4] = {0, 2, 3, 1}, hwcf[4] = {2, 3, 1, 0};
  for (int d = 0; d < 4 && *known; d++) {
    xs[d] = a[nhwc[d]];
    ws[d] = b[hwcf[d]];
    ys[d] = c[nhwc[d]];
  }
  return true;
}

/* Whether Winograd's transforms fit the conv: a 3x3 window, strides and
 * dilations 1; and a float type. */
static bool winograd_window(const Graph *g, const GraphNode *n, const int64_t *ws) {
  int64_t s[2], d[2];
  pair(g, n, "strides", s);
  pair(g, n, "dilations", d);
  return ws[0] == 3 && ws[1] == 3 && s[0] == 1 && s[1] == 1 && d[0] == 1 && d[1] == 1;
}

static bool winograd_type(const Graph *g, const GraphNode *n) {
  ElemType t = val(g, n->inputs[0])->type;
  return t == TY_F32 || t == TY_F64;
}

/* The automatic choice (--conv-algorithm=auto): F(2x2, 3x3) wherever it
 * applies with 16 channels or more in and out. It does 16 multiplies per
 * 2x2 outputs and channel pair instead of 36, with an f32 error no larger
 * than the direct conv's (lgen(1), Accuracy), and its filter transform is
 * folded at generation time. Measured against the direct conv at 1
 * thread (one conv, HxW C->F): 56x56 64->64 1.8x faster, 28x28 128->128
 * 1.95x, 14x14 256->256 2.4x, 7x7 512->512 1.4x, 32x32 32->32 1.3x, and
 * 64x64 16->16 a tie; fewer channels make its matmuls too thin. */
static bool winograd_pays(const Graph *g, const GraphNode *n, const int64_t *ws) {
  return winograd_window(g, n, ws) && val(g, n->inputs[0])->type == TY_F32 && ws[2] >= 16 && ws[3] >= 16;
}

/* The conv's algorithm: the schedule file's, its attribute, or the
 * automatic choice (NULL shapes: unknown, which keeps it direct). */
static const char *choice_of(const Graph *g, const GraphNode *n, const ConvAlgoChoice *choices, int nchoices,
                             bool auto_winograd, const int64_t *ws, bool *used, const char **where) {
  const char *y = val(g, n->outputs[0])->name;
  for (int i = 0; i < nchoices; i++)
    if (strcmp(choices[i].tensor, y) == 0) {
      used[i] = true;
      *where = "the schedule file";
      return choices[i].algorithm;
    }
  *where = "its attribute";
  if (graph_attr(g, n, "algorithm"))
    return graph_attr_string(g, n, "algorithm", "direct");
  *where = "--conv-algorithm=auto";
  return auto_winograd && ws && winograd_pays(g, n, ws) ? "winograd" : "direct";
}

/* A located error: at the schedule file's entry, or at the attribute. */
static LG_NORETURN void refuse(const Graph *g, const GraphNode *n, const ConvAlgoChoice *c, const char *why,
                               const char *algo) {
  const GraphAttr *a = graph_attr(g, n, "algorithm");
  if (c)
    diag_error(g->diag, c->loc, "the %s path of conv '%s' %s", algo, val(g, n->outputs[0])->name, why);
  graph_error(g, a && a->path ? a->path : n->path, "%sthe %s path %s", graph_node_desc(g, n), algo, why);
}

void graph_conv_algorithms(Graph *g, const ConvAlgoChoice *choices, int nchoices, bool auto_winograd,
                           PtrVec *notes) {
  bool *used = arena_alloc(g->arena, sizeof(bool) * (size_t)(nchoices + 1));
  for (int i = 0; i < g->nodes.len; i++) {
    GraphNode *n = GRAPH_NODE(g, i);
    int64_t xs[4], ws[4], ys[4];
    bool known;
    if (!conv_shapes(g, n, xs, ws, ys, &known))
      continue;
    const char *where;
    const char *algo = choice_of(g, n, choices, nchoices, auto_winograd, known ? ws : NULL, used, &where);
    const ConvAlgoChoice *c = NULL;
    for (int j = 0; j < nchoices; j++)
      if (strcmp(choices[j].tensor, val(g, n->outputs[0])->name) == 0)
        c = &choices[j];
    bool wino6 = strcmp(algo, "winograd6") == 0, wino = wino6 || strcmp(algo, "winograd") == 0;
    if (strcmp(algo, "direct") != 0 && strcmp(algo, "im2col") != 0 && !wino) {
      if (c)
        diag_error(g->diag, c->loc, "unknown conv algorithm '%s' (expected direct, im2col, winograd or winograd6)",
                   algo);
      graph_error(g, graph_attr(g, n, "algorithm")->path, "%sunknown conv algorithm '%s' (expected direct, "
                  "im2col, winograd or winograd6)", graph_node_desc(g, n), algo);
    }
    const GraphValue *y = val(g, n->outputs[0]);
    if (strcmp(algo, "direct") == 0) {
      if (graph_attr(g, n, "algorithm") || c)
        vec_push(g->arena, notes, arena_printf(g->arena, "conv '%s': direct (from %s)", y->name, where));
      continue;
    }
    if (!known)
      refuse(g, n, c, "needs static shapes", algo);
    if (!wino && xs[0] < 0)
      refuse(g, n, c, "needs a static batch", algo);
    if (n->op == GOP_CONV && !wino)
      refuse(g, n, c, "needs an NHWC conv (conv_2d_nhwc_hwcf)", algo);
    if (wino && !winograd_window(g, n, ws))
      refuse(g, n, c, "needs a 3x3 window, strides 1 and dilations 1", algo);
    if (wino && !winograd_type(g, n))
      refuse(g, n, c, "needs f32 or f64", algo);
    int first = g->nodes.len;
    if (strcmp(algo, "im2col") == 0)
      im2col(g, n, ws, ys);
    else
      winograd(g, n, ys, wino6 ? 6 : 2);
    graph_write_result(g, n->outputs[0]);
    graph_replace_node(g, i, first);
    if (strcmp(algo, "im2col") == 0)
      vec_push(g->arena, notes, arena_printf(g->arena, "conv '%s': im2col [%lld, %lld, %lld] then matmul by the "
               "filter as [%lld, %lld] (from %s)", y->name, (long long)xs[0], (long long)(ys[1] * ys[2]),
               (long long)(ws[0] * ws[1] * ws[2]), (long long)(ws[0] * ws[1] * ws[2]), (long long)ws[3], where));
    else {
      int64_t m = wino6 ? 6 : 2, per_image = ((ys[1] + m - 1) / m) * ((ys[2] + m - 1) / m);
      const char *tiles = xs[0] < 0 ? arena_printf(g->arena, "%s * %lld", graph_dim_str(g, val(g, n->inputs[0])->shape[0]),
                                                   (long long)per_image)
                                    : arena_printf(g->arena, "%lld", (long long)(xs[0] * per_image));
      vec_push(g->arena, notes, arena_printf(g->arena, "conv '%s': winograd F(%lldx%lld, 3x3), %s tiles, %lld "
               "matmuls [%s, %lld] x [%lld, %lld] (from %s)", y->name, (long long)m, (long long)m, tiles,
               (long long)((m + 2) * (m + 2)), tiles, (long long)ws[2], (long long)ws[2], (long long)ws[3], where));
    }
    i += g->nodes.len - first; /* skip the new nodes */
  }
  for (int j = 0; j < nchoices; j++)
    if (!used[j])
      diag_error(g->diag, choices[j].loc, "no 2-D conv (conv_2d_nhwc_hwcf, or conv with one group) writes '%s'",
                 choices[j].tensor);
}
