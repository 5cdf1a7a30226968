/* reduce.c - recognise `out = combine(out, X)` payloads (see analysis.h). */
#include "analysis/analysis.h"

static bool reads_operand(const StructuredOp *op, int node, int operand) {
  const PayloadNode *n = &op->nodes[node];
  if (n->kind == PN_READ)
    return n->operand == operand;
  for (int i = 0; i < n->nargs; i++)
    if (reads_operand(op, n->args[i], operand))
      return true;
  return false;
}

static bool is_acc(const StructuredOp *op, int node, int operand) {
  return op->nodes[node].kind == PN_READ && op->nodes[node].operand == operand;
}

static bool same_value(const StructuredOp *op, int a, int b) {
  const PayloadNode *x = &op->nodes[a], *y = &op->nodes[b];
  if (a == b)
    return true;
  if (x->kind != y->kind || x->type != y->type)
    return false;
  if (x->kind == PN_READ)
    return x->operand == y->operand;
  if (x->op != y->op || x->nargs != y->nargs)
    return false;
  for (int i = 0; i < x->nargs; i++)
    if (!same_value(op, x->args[i], y->args[i]))
      return false;
  return true;
}

/* select(cmp(p, q), a, b) as max/min of the accumulator and X. */
static Combiner match_select(const StructuredOp *op, const PayloadNode *n, int acc, int *x) {
  const PayloadNode *cmp = &op->nodes[n->args[0]];
  if (cmp->kind != PN_OP)
    return COMBINE_NONE;
  bool gt = cmp->op == SOP_CMPF_OGT || cmp->op == SOP_CMPI_SGT;
  bool lt = cmp->op == SOP_CMPF_OLT || cmp->op == SOP_CMPI_SLT;
  if (!gt && !lt)
    return COMBINE_NONE;
  int p = cmp->args[0], q = cmp->args[1], a = n->args[1], b = n->args[2];
  /* select(p > q, p, q) is max(p, q); select(p < q, p, q) is min(p, q). */
  if (!same_value(op, p, a) || !same_value(op, q, b))
    return COMBINE_NONE;
  int other;
  if (is_acc(op, q, acc) && !reads_operand(op, p, acc))
    other = p;
  else if (is_acc(op, p, acc) && !reads_operand(op, q, acc))
    other = q;
  else
    return COMBINE_NONE;
  *x = other;
  return gt ? COMBINE_MAX : COMBINE_MIN;
}

Combiner match_reduction(const StructuredOp *op, int y, int *x) {
  if (op->nyields != 1)
    return COMBINE_NONE;
  int acc = op->yields[y].operand;
  const PayloadNode *n = &op->nodes[op->yields[y].value];
  if (n->kind != PN_OP)
    return COMBINE_NONE;
  if (n->op == SOP_SELECT)
    return match_select(op, n, acc, x);
  Combiner c;
  switch (n->op) {
  case SOP_ADDF:
  case SOP_ADDI:
    c = COMBINE_ADD;
    break;
  case SOP_MULF:
  case SOP_MULI:
    c = COMBINE_MUL;
    break;
  case SOP_MAXF:
    c = COMBINE_MAX;
    break;
  case SOP_MINF:
    c = COMBINE_MIN;
    break;
  default:
    return COMBINE_NONE;
  }
  /* i1 arithmetic is not an OpenMP reduction of the same meaning */
  if (n->type == TY_I1)
    return COMBINE_NONE;
  int a = n->args[0], b = n->args[1];
  if (is_acc(op, a, acc) && !reads_operand(op, b, acc))
    *x = b;
  else if (is_acc(op, b, acc) && !reads_operand(op, a, acc))
    *x = a;
  else
    return COMBINE_NONE;
  return c;
}
