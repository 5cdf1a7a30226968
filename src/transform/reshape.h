/* reshape.h - the domain rewrites that run before tiling: unit-extent dim
 * folding and contiguous-dim collapsing (linalg's FoldUnitExtentDims and
 * CollapseDims, decided from maps and iterator types only).
 *
 *  - Folding drops a dim whose extent is the constant 1: its indices become
 *    0, and a tensor position of constant extent 1 that every operand of the
 *    tensor indexes with 0 leaves the tensor's view.
 *  - Collapsing merges a chain of dims d1, d2, ..., dr of one iterator kind
 *    into one dim of extent E1*E2*...*Er. It is legal when every operand
 *    either never mentions the chain's dims, or reads them bare, in that
 *    order, at consecutive positions whose extents after the first are
 *    exactly E2..Er (and nowhere else), and every operand of one tensor
 *    agrees. Then the merged index (d1*E2 + d2)*E3 + ... lands on the same
 *    row-major address, so the tensor's view merges those positions.
 *
 * The result is an OpView: a view kernel holding only the tensors the op
 * touches (renumbered; Kernel.view_base and view_tensor lead back to the
 * kernel's), with the reshaped shapes (the C signature and pointers are
 * untouched, only how the op's loops index them changes), and the
 * rewritten op, its operands numbered in the view. Every view of a
 * structured op is such a view, reshaped or not; a non-structured op's is
 * the kernel and the op themselves. Schedules then speak
 * about the view's dims; a merged dim keeps the name of its first dim. */
#ifndef LGEN_RESHAPE_H
#define LGEN_RESHAPE_H

#include "ir/ir.h"

typedef struct {
  bool fold[LG_MAX_DIMS]; /* dims of constant extent 1 to drop */
  int next[LG_MAX_DIMS];  /* the dim merged right after d, or -1 */
} Reshape;

typedef struct {
  const Kernel *k;        /* tensors reshaped for this op; ops are the original kernel's */
  const StructuredOp *op; /* the rewritten op (the original if nothing changes) */
} OpView;

void reshape_identity(Reshape *r);
bool reshape_is_identity(const Reshape *r, int ndims);
/* What --schedule=auto does: fold every unit dim, collapse every legal chain. */
void reshape_auto(const Kernel *k, const StructuredOp *op, Reshape *r, Arena *arena);
/* NULL if dim d can be folded, else the reason it cannot. */
const char *reshape_fold_problem(const StructuredOp *op, int d);
/* The first dim of d's collapse group: d itself when d heads one or is in
 * none. */
int reshape_head(const Reshape *r, int ndims, int d);
/* NULL if dim b can be merged right after dim a (dims of the original op,
 * with r's folds applied first), else the reason, in the arena. */
const char *reshape_collapse_problem(const Kernel *k, const StructuredOp *op, const Reshape *r, int a, int b,
                                     Arena *arena);
OpView reshape_apply(const Kernel *k, const StructuredOp *op, const Reshape *r, Arena *arena);

#endif
