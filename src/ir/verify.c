/* verify.c - structural invariants of the IR. The front-ends guarantee them
 * for any input; a violation is therefore an lgen bug, not a user error. */
#include "ir/ir.h"

static void verify_affine(Diag *diag, const Kernel *k, const StructuredOp *op, const AffineExpr *e) {
  switch (e->kind) {
  case AE_CONST:
    return;
  case AE_DIM:
    if (!op || e->index < 0 || e->index >= op->ndims)
      diag_bug(diag, "%s: affine expression uses dim %d outside the domain", k->name, e->index);
    return;
  case AE_SIZE:
    if (e->index < 0 || e->index >= k->nsizes)
      diag_bug(diag, "%s: unknown size symbol %d", k->name, e->index);
    return;
  case AE_ATTR:
    if (e->index < 0 || e->index >= k->nattrs)
      diag_bug(diag, "%s: unknown attribute %d", k->name, e->index);
    return;
  case AE_NEG:
    verify_affine(diag, k, op, e->lhs);
    return;
  case AE_MUL:
    if (affine_has_dims(e->lhs) && affine_has_dims(e->rhs))
      diag_bug(diag, "%s: product of two dims", k->name);
    break;
  case AE_FLOORDIV:
  case AE_CEILDIV:
  case AE_MOD:
    if (affine_has_dims(e->rhs))
      diag_bug(diag, "%s: division by a dim", k->name);
    break;
  default:
    break;
  }
  verify_affine(diag, k, op, e->lhs);
  verify_affine(diag, k, op, e->rhs);
}

void ir_verify_op(Diag *diag, const Kernel *k, const StructuredOp *op);

/* An init or epilogue is a pointwise op over some of the op's parallel
 * dims (or dims of extent 1 where the op writes index 0) that writes the
 * op's outputs at the points the op writes them, one yield per output (an
 * op with several yields: sibling reductions, graph/fuse/fuse.c); an init never
 * reads them. */
static void verify_attached(Diag *diag, const Kernel *k, const StructuredOp *op, const StructuredOp *e,
                            const int *dims, const char *what) {
  ir_verify_op(diag, k, e);
  if (op->nyields < 1 || e->nyields < 1 || e->nyields > op->nyields || e->epilogue || e->init)
    diag_bug(diag, "%s: an %s needs outputs of its op", k->name, what);
  for (int d = 0; d < e->ndims; d++) {
    int od = dims[d];
    bool unit = od == -1 && e->dims[d].extent->kind == AE_CONST && e->dims[d].extent->value == 1;
    if (e->dims[d].kind != ITER_PARALLEL || (!unit && (od < 0 || od >= op->ndims || op->dims[od].kind != ITER_PARALLEL)))
      diag_bug(diag, "%s: %s dim %d is no parallel dim of its op", k->name, what, d);
  }
  for (int y = 0; y < e->nyields; y++) {
    bool found = false;
    for (int z = 0; z < op->nyields; z++)
      found |= e->operands[e->yields[y].operand].tensor == op->operands[op->yields[z].operand].tensor;
    if (!found)
      diag_bug(diag, "%s: the %s writes another tensor than its op", k->name, what);
  }
  for (int o = 0; o < e->noperands; o++) {
    const Operand *x = &e->operands[o], *out = NULL;
    for (int z = 0; z < op->nyields; z++)
      if (op->operands[op->yields[z].operand].tensor == x->tensor)
        out = &op->operands[op->yields[z].operand];
    if (!out)
      continue;
    for (int i = 0; i < k->tensors[x->tensor].rank; i++) {
      const AffineExpr *m = x->map[i], *w = out->map[i];
      bool same = m->kind == AE_DIM && (w->kind == AE_DIM ? dims[m->index] == w->index
                                                          : w->kind == AE_CONST && w->value == 0 && dims[m->index] == -1);
      if (!same)
        diag_bug(diag, "%s: the %s touches its op's output at another point", k->name, what);
    }
    if (e == op->init)
      for (int n = 0; n < e->nnodes; n++)
        if (e->nodes[n].kind == PN_READ && e->nodes[n].operand == o)
          diag_bug(diag, "%s: an init reads the output it initialises", k->name);
  }
}

/* An ext op: its operands are its tensors, in order, and it has no loops
 * or payload; what it writes is an output. */
static void verify_ext(Diag *diag, const Kernel *k, const StructuredOp *op) {
  const ExtOp *x = op->ext;
  int n = x->ninputs + x->noutputs + x->nscratch;
  if (op->ndims || op->nnodes || op->nyields || n != op->noperands || n > LG_EXT_MAX_TENSORS || x->noutputs < 1)
    diag_bug(diag, "%s: ext op %s is malformed", k->name, x->kind);
  for (int i = 0; i < n; i++) {
    int t = x->tensors[i];
    if (t < 0 || t >= k->ntensors || op->operands[i].tensor != t)
      diag_bug(diag, "%s: ext op %s names no tensor as its operand %d", k->name, x->kind, i);
    if (i >= x->ninputs && !k->tensors[t].is_output)
      diag_bug(diag, "%s: ext op %s writes %s, which is not an output", k->name, x->kind, k->tensors[t].name);
  }
}

void ir_verify_op(Diag *diag, const Kernel *k, const StructuredOp *op) {
  if (op->ext) {
    verify_ext(diag, k, op);
    return;
  }
  for (int d = 0; d < op->ndims; d++) {
    if (!op->dims[d].extent || affine_has_dims(op->dims[d].extent))
      diag_bug(diag, "%s: dim %s has no extent in sizes", k->name, op->dims[d].name);
    verify_affine(diag, k, NULL, op->dims[d].extent);
  }
  for (int o = 0; o < op->noperands; o++) {
    const Operand *operand = &op->operands[o];
    if (operand->tensor < 0 || operand->tensor >= k->ntensors)
      diag_bug(diag, "%s: operand %d names no tensor", k->name, o);
    for (int i = 0; i < k->tensors[operand->tensor].rank; i++)
      verify_affine(diag, k, op, operand->map[i]);
  }
  for (int i = 0; i < op->nnodes; i++) {
    const PayloadNode *n = &op->nodes[i];
    if (n->kind == PN_READ) {
      if (n->operand < 0 || n->operand >= op->noperands || op->operands[n->operand].shape_only)
        diag_bug(diag, "%s: node %d reads an invalid operand", k->name, i);
      if (n->type != k->tensors[op->operands[n->operand].tensor].type)
        diag_bug(diag, "%s: node %d has the wrong type", k->name, i);
      continue;
    }
    if (n->kind == PN_CONST)
      continue;
    if (n->kind == PN_SIZE) {
      if (n->size < 0 || n->size >= k->nsizes || n->type != TY_I64)
        diag_bug(diag, "%s: node %d reads an invalid size", k->name, i);
      continue;
    }
    if (n->kind == PN_INDEX) {
      if (n->dim < 0 || n->dim >= op->ndims || n->type != TY_I64)
        diag_bug(diag, "%s: node %d reads an invalid loop index", k->name, i);
      continue;
    }
    if (n->nargs != scalar_op_info(n->op)->arity)
      diag_bug(diag, "%s: node %d has %d operands", k->name, i, n->nargs);
    for (int a = 0; a < n->nargs; a++)
      if (n->args[a] < 0 || n->args[a] >= i)
        diag_bug(diag, "%s: node %d uses a later node (the payload must be topologically ordered)", k->name, i);
  }
  for (int y = 0; y < op->nyields; y++) {
    const Yield *yield = &op->yields[y];
    if (yield->operand < 0 || yield->operand >= op->noperands ||
        !k->tensors[op->operands[yield->operand].tensor].is_output)
      diag_bug(diag, "%s: yield %d does not write an output", k->name, y);
    if (yield->value < 0 || yield->value >= op->nnodes)
      diag_bug(diag, "%s: yield %d has no value", k->name, y);
    if (op->nodes[yield->value].type != k->tensors[op->operands[yield->operand].tensor].type)
      diag_bug(diag, "%s: yield %d has the wrong type", k->name, y);
  }
  if (op->init)
    verify_attached(diag, k, op, op->init, op->init_dims, "init");
  if (op->epilogue)
    verify_attached(diag, k, op, op->epilogue, op->epilogue_dims, "epilogue");
}

void ir_verify_kernel(Diag *diag, const Kernel *k) {
  for (int t = 0; t < k->ntensors; t++)
    for (int i = 0; i < k->tensors[t].rank; i++) {
      if (affine_has_dims(k->tensors[t].shape[i]))
        diag_bug(diag, "%s: shape of %s uses a dim", k->name, k->tensors[t].name);
      verify_affine(diag, k, NULL, k->tensors[t].shape[i]);
    }
  for (int i = 0; i < k->nops; i++)
    ir_verify_op(diag, k, &k->ops[i]);
}
