/* ext.c - non-structured ops (ExtOp, see ir.h): attribute lookup, and the
 * read/write questions every pass asks of a kernel step of either kind. */
#include "ir/ir.h"

#include <string.h>

static const ExtAttr *find(const ExtOp *x, const char *name) {
  for (int i = 0; i < x->nattrs; i++)
    if (strcmp(x->attrs[i].name, name) == 0)
      return &x->attrs[i];
  return NULL;
}

int64_t ext_attr_int(const ExtOp *x, const char *name, int64_t dflt) {
  const ExtAttr *a = find(x, name);
  return a ? a->i : dflt;
}

double ext_attr_float(const ExtOp *x, const char *name, double dflt) {
  const ExtAttr *a = find(x, name);
  return a ? a->f : dflt;
}

const char *ext_attr_string(const ExtOp *x, const char *name, const char *dflt) {
  const ExtAttr *a = find(x, name);
  return a && a->s ? a->s : dflt;
}

const int64_t *ext_attr_ints(const ExtOp *x, const char *name, int *count) {
  const ExtAttr *a = find(x, name);
  *count = a && a->kind == 'l' ? a->n : 0;
  return a && a->kind == 'l' ? a->ints : NULL;
}

bool op_reads_tensor(const StructuredOp *op, int t) {
  if (op->ext) {
    const ExtOp *x = op->ext;
    for (int i = 0; i < x->ninputs; i++)
      if (x->tensors[i] == t)
        return true;
    for (int i = x->ninputs + x->noutputs; i < x->ninputs + x->noutputs + x->nscratch; i++)
      if (x->tensors[i] == t)
        return true;
    return false;
  }
  for (int n = 0; n < op->nnodes; n++)
    if (op->nodes[n].kind == PN_READ && op->operands[op->nodes[n].operand].tensor == t)
      return true;
  return (op->init && op_reads_tensor(op->init, t)) || (op->epilogue && op_reads_tensor(op->epilogue, t));
}

bool op_writes_tensor(const StructuredOp *op, int t) {
  if (op->ext) {
    const ExtOp *x = op->ext;
    for (int i = x->ninputs; i < x->ninputs + x->noutputs + x->nscratch; i++)
      if (x->tensors[i] == t)
        return true;
    return false;
  }
  for (int y = 0; y < op->nyields; y++)
    if (op->operands[op->yields[y].operand].tensor == t)
      return true;
  return (op->init && op_writes_tensor(op->init, t)) || (op->epilogue && op_writes_tensor(op->epilogue, t));
}

bool op_reads_index(const StructuredOp *op, int d) {
  for (int n = 0; n < op->nnodes; n++)
    if (op->nodes[n].kind == PN_INDEX && (d < 0 || op->nodes[n].dim == d))
      return true;
  return false;
}
