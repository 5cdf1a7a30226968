/* print.c - a Graph as text, for --dump=parse and --dump=graph: one line
 * per input, constant, node and output, in the graph's order.
 *
 *   graph mlp (symbols: N)
 *     input x: f32(N, 784)
 *     const w1: f32(784, 128)
 *     node 'fc1' matmul(x, w1) -> h: f32(N, 128)
 *     node 'act' relu(h) -> y: f32(N, 128) {alpha = 0x1p-1}
 *     output y
 *
 * Names are the model's own text: printed as printable ASCII (\xNN for
 * other bytes), so no name can forge a line. */
#include "graph/graph.h"

static const char *symbol_name(void *ctx, int i) { return ((const Graph *)ctx)->symbols.items[i]; }

/* A dim prints on one line, so escaping it whole escapes its symbols. */
static void print_type(StrBuf *out, const Graph *g, const GraphValue *v) {
  AffineNames names = {NULL, symbol_name, NULL, (void *)g, false};
  StrBuf dim = {0};
  sb_printf(out, "%s(", elem_type_name(v->type));
  for (int i = 0; i < v->rank; i++) {
    if (i)
      sb_puts(out, ", ");
    dim.len = 0;
    affine_print(&dim, v->shape[i], &names);
    sb_put_printable(out, sb_cstr(&dim));
  }
  sb_putc(out, ')');
  sb_free(&dim);
}

static void print_value(StrBuf *out, const Graph *g, int v) {
  const GraphValue *x = GRAPH_VALUE(g, v);
  sb_put_printable(out, x->name);
  sb_puts(out, ": ");
  print_type(out, g, x);
}

static void print_attr(StrBuf *out, const GraphAttr *a) {
  sb_put_printable(out, a->name);
  sb_puts(out, " = ");
  switch (a->kind) {
  case GA_INT:
    sb_printf(out, "%lld", (long long)a->i);
    break;
  case GA_FLOAT:
    sb_printf(out, "%a", a->f);
    break;
  case GA_STRING:
    sb_putc(out, '\'');
    sb_put_printable(out, a->s);
    sb_putc(out, '\'');
    break;
  case GA_INTS:
  case GA_INTS2:
    sb_putc(out, '[');
    for (int i = 0; i < (a->kind == GA_INTS2 ? 2 * a->n : a->n); i++)
      sb_printf(out, "%s%lld", i ? ", " : "", (long long)a->ints[i]);
    sb_putc(out, ']');
    break;
  case GA_FLOATS:
    sb_putc(out, '[');
    for (int i = 0; i < a->n; i++)
      sb_printf(out, "%s%a", i ? ", " : "", a->floats[i]);
    sb_putc(out, ']');
    break;
  }
}

static void print_node(StrBuf *out, const Graph *g, const GraphNode *n) {
  sb_puts(out, "  node ");
  if (n->name && *n->name) {
    sb_putc(out, '\'');
    sb_put_printable(out, n->name);
    sb_puts(out, "' ");
  }
  sb_printf(out, "%s(", n->def ? n->def->name : graph_op_info(n->op)->name);
  for (int i = 0; i < n->ninputs; i++) {
    if (i)
      sb_puts(out, ", ");
    if (n->inputs[i] < 0)
      sb_puts(out, "-");
    else
      sb_put_printable(out, GRAPH_VALUE(g, n->inputs[i])->name);
  }
  sb_puts(out, ") -> ");
  for (int i = 0; i < n->noutputs; i++) {
    if (i)
      sb_puts(out, ", ");
    print_value(out, g, n->outputs[i]);
  }
  for (int i = 0; i < n->nattrs; i++) {
    sb_puts(out, i ? ", " : " {");
    print_attr(out, &n->attrs[i]);
  }
  sb_puts(out, n->nattrs ? "}\n" : "\n");
}

/* Whether value v is read by a node or is an output: folding leaves
 * constants behind that nothing reads any more. */
static bool value_used(const Graph *g, int v) {
  for (int i = 0; i < g->outputs.len; i++)
    if (g->outputs.items[i] == v)
      return true;
  for (int n = 0; n < g->nodes.len; n++) {
    const GraphNode *node = GRAPH_NODE(g, n);
    for (int i = 0; i < node->ninputs; i++)
      if (node->inputs[i] == v)
        return true;
  }
  return false;
}

void graph_print(StrBuf *out, const Graph *g) {
  sb_puts(out, "graph ");
  sb_put_printable(out, g->name ? g->name : "");
  for (int i = 0; i < g->symbols.len; i++) {
    sb_puts(out, i ? ", " : " (symbols: ");
    sb_put_printable(out, g->symbols.items[i]);
  }
  sb_puts(out, g->symbols.len ? ")\n" : "\n");
  for (int i = 0; i < g->inputs.len; i++) {
    sb_puts(out, "  input ");
    print_value(out, g, g->inputs.items[i]);
    sb_putc(out, '\n');
  }
  for (int v = 0; v < g->values.len; v++) {
    const GraphValue *x = GRAPH_VALUE(g, v);
    if (x->kind != GV_CONST || !value_used(g, v))
      continue;
    sb_puts(out, "  const ");
    print_value(out, g, v);
    sb_putc(out, '\n');
  }
  for (int n = 0; n < g->nodes.len; n++)
    print_node(out, g, GRAPH_NODE(g, n));
  for (int i = 0; i < g->outputs.len; i++) {
    sb_puts(out, "  output ");
    sb_put_printable(out, GRAPH_VALUE(g, g->outputs.items[i])->name);
    sb_putc(out, '\n');
  }
}
