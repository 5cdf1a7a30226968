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
  if (x->kind == PN_CONST)
    return x->fvalue == y->fvalue && x->ivalue == y->ivalue;
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
  bool gt = cmp->op == SOP_CMPF_OGT || cmp->op == SOP_CMPI_SGT || cmp->op == SOP_CMPI_UGT;
  bool lt = cmp->op == SOP_CMPF_OLT || cmp->op == SOP_CMPI_SLT || cmp->op == SOP_CMPI_ULT;
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

/* C(m, n) += A(.., ..) * B(.., ..) with each map a permutation of two dims. */
bool match_gemm(const Kernel *k, const StructuredOp *op, GemmShape *g) {
  int x;
  if (op->ndims != 3 || op->nyields != 1 || match_reduction(op, 0, &x) != COMBINE_ADD)
    return false;
  const PayloadNode *mul = &op->nodes[x];
  if (mul->kind != PN_OP || mul->op != SOP_MULF)
    return false;
  const PayloadNode *a = &op->nodes[mul->args[0]], *b = &op->nodes[mul->args[1]];
  if (a->kind != PN_READ || b->kind != PN_READ)
    return false;
  const Operand *oc = &op->operands[op->yields[0].operand];
  const Operand *oa = &op->operands[a->operand], *ob = &op->operands[b->operand];
  const Operand *ops[3] = {oc, oa, ob};
  for (int i = 0; i < 3; i++) {
    const TensorParam *t = &k->tensors[ops[i]->tensor];
    if (t->rank != 2 || ops[i]->map[0]->kind != AE_DIM || ops[i]->map[1]->kind != AE_DIM ||
        ops[i]->map[0]->index == ops[i]->map[1]->index)
      return false;
  }
  int kdim = -1;
  for (int d = 0; d < 3; d++)
    if (op->dims[d].kind == ITER_REDUCTION)
      kdim = d;
  if (kdim < 0)
    return false;
  /* the output is [m][n]; m is what A reads besides k */
  int m = oc->map[0]->index, n = oc->map[1]->index;
  bool a_has_m = oa->map[0]->index == m || oa->map[1]->index == m;
  if (!a_has_m) { /* C = B' A': swap the roles of the inputs */
    const Operand *tmp = oa;
    oa = ob;
    ob = tmp;
  }
  if (!((oa->map[0]->index == m && oa->map[1]->index == kdim) || (oa->map[0]->index == kdim && oa->map[1]->index == m)))
    return false;
  if (!((ob->map[0]->index == kdim && ob->map[1]->index == n) || (ob->map[0]->index == n && ob->map[1]->index == kdim)))
    return false;
  g->m = m;
  g->n = n;
  g->k = kdim;
  g->a = (int)(oa - op->operands);
  g->b = (int)(ob - op->operands);
  g->c = (int)(oc - op->operands);
  g->trans_a = oa->map[0]->index == kdim;
  g->trans_b = ob->map[0]->index == n;
  g->type = k->tensors[oc->tensor].type;
  return k->tensors[oa->tensor].type == g->type && k->tensors[ob->tensor].type == g->type &&
         (g->type == TY_F32 || g->type == TY_F64);
}
