/* expand.c - composite graph ops written from primitives (see graph.h).
 *
 * softmax is not a primitive of the lowering: writing it as reductions and
 * elementwise ops here lets fusion and scheduling treat it like any other
 * chain of those, and keeps the subtraction of the max that makes it
 * numerically safe explicit in the graph. */
#include "graph/graph.h"

/* One primitive of the expansion: an unnamed node at the composite's path. */
static int add_step(Graph *g, GraphOp op, int a, int b, const GraphAttr *attrs, int nattrs, const char *out_name,
                    const char *path, const char *origin) {
  int inputs[2] = {a, b};
  const char *names[1] = {out_name};
  return graph_add_node(g, op, NULL, b >= 0 ? 2 : 1, inputs, nattrs, attrs, names, path, origin);
}

int graph_softmax(Graph *g, int x, int64_t axis, bool log, const char *out_name, const char *path,
                  const char *origin) {
  const GraphValue *v = GRAPH_VALUE(g, x);
  const char *what = origin ? origin : log ? "log_softmax" : "softmax";
  if (v->rank == 0)
    graph_error(g, path, "%s of a scalar '%s' has no axis", what, v->name);
  if (axis < -v->rank || axis >= v->rank)
    graph_error(g, path, "%s: axis %lld is out of range for rank %d", what, (long long)axis, v->rank);
  if (!elem_type_is_float(v->type))
    graph_error(g, path, "%s of '%s' needs a floating-point type, not %s", what, v->name,
                elem_type_name(v->type));
  int64_t ax = axis < 0 ? axis + v->rank : axis;
  GraphAttr reduce_attrs[2] = {
      {.name = "axes", .kind = GA_INTS, .n = 1, .ints = &ax},
      {.name = "keepdims", .kind = GA_INT, .i = 1},
  };
  int max = add_step(g, GOP_REDUCE_MAX, x, -1, reduce_attrs, 2, NULL, path, origin);
  int shifted = add_step(g, GOP_SUB, x, max, NULL, 0, NULL, path, origin);
  int e = add_step(g, GOP_EXP, shifted, -1, NULL, 0, NULL, path, origin);
  int sum = add_step(g, GOP_REDUCE_SUM, e, -1, reduce_attrs, 2, NULL, path, origin);
  if (!log)
    return add_step(g, GOP_DIV, e, sum, NULL, 0, out_name, path, origin);
  int logsum = add_step(g, GOP_LOG, sum, -1, NULL, 0, NULL, path, origin);
  return add_step(g, GOP_SUB, shifted, logsum, NULL, 0, out_name, path, origin);
}
