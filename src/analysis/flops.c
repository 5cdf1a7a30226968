/* flops.c - how many floating-point operations an op does per point of its
 * iteration domain, for the profile's GFLOP/s (-DLGEN_PROFILE, c_graph.c).
 * The count is the conventional one: each payload op that computes a float
 * from floats of its own type is one (a multiply-add is two, a max or a
 * select of floats one, an exp one); conversions, comparisons and integer
 * ops are none. An ext op (a template) has no payload and counts none. */
#include "analysis/analysis.h"

static int64_t payload_flops(const StructuredOp *op) {
  int64_t n = 0;
  for (int i = 0; op && i < op->nnodes; i++) {
    const PayloadNode *p = &op->nodes[i];
    n += p->kind == PN_OP && scalar_op_info(p->op)->result == SOR_SAME && elem_type_is_float(p->type);
  }
  return n;
}

int64_t op_flops_per_point(const StructuredOp *op) { return op->ext ? 0 : payload_flops(op); }
