/* domain.c - the iteration domain comes from the operands.
 *
 * Each dim's extent is the extent of the first tensor dimension (tensors in
 * declaration order: inputs, then outputs) that is indexed by the bare dim.
 * Every other tensor dimension indexed by the bare dim must have the same
 * extent: when lgen cannot see that from the shapes, the equality becomes a
 * precondition. Every compound or constant index is checked by bounds.c. */
#include "analysis/analysis.h"
#include "analysis/poly.h"

static bool same_extent(Arena *arena, const AffineExpr *a, const AffineExpr *b) {
  if (affine_equal(a, b))
    return true;
  Poly *d = poly_add(arena, poly_from_affine(arena, a), poly_from_affine(arena, b), -1);
  return poly_is_zero(d);
}

static void add_pre(Arena *arena, StructuredOp *op, Precondition pre) {
  Precondition *grown = arena_alloc(arena, sizeof(Precondition) * (size_t)(op->npre + 1));
  for (int i = 0; i < op->npre; i++)
    grown[i] = op->pre[i];
  grown[op->npre++] = pre;
  op->pre = grown;
}

static void choose_extent(Diag *diag, const Kernel *k, StructuredOp *op, int d) {
  Dim *dim = &op->dims[d];
  for (int t = 0; t < k->ntensors; t++)
    for (int o = 0; o < op->noperands; o++) {
      const Operand *operand = &op->operands[o];
      if (operand->tensor != t)
        continue;
      for (int pos = 0; pos < k->tensors[t].rank; pos++)
        if (affine_is_dim(operand->map[pos], d)) {
          dim->extent = k->tensors[t].shape[pos];
          dim->extent_operand = o;
          dim->extent_pos = pos;
          return;
        }
    }
  diag_error(diag, dim->loc,
             "dim '%s' has no extent: no operand is indexed by '%s' alone; index one with it, or declare a "
             "tensor used only for its shape to bound the reduction list",
             dim->name, dim->name);
}

void infer_domain(Diag *diag, Arena *arena, const Kernel *k, StructuredOp *op) {
  for (int d = 0; d < op->ndims; d++)
    choose_extent(diag, k, op, d);
  for (int o = 0; o < op->noperands; o++) {
    const Operand *operand = &op->operands[o];
    const TensorParam *t = &k->tensors[operand->tensor];
    for (int pos = 0; pos < t->rank; pos++) {
      const AffineExpr *index = operand->map[pos];
      if (index->kind == AE_DIM) {
        const Dim *dim = &op->dims[index->index];
        if ((dim->extent_operand != o || dim->extent_pos != pos) && !same_extent(arena, t->shape[pos], dim->extent))
          add_pre(arena, op, (Precondition){PRE_EQUAL, index->index, o, pos, operand->loc});
        continue;
      }
      if (operand->guarded) /* reads its pad value outside: never out of bounds */
        continue;
      const char *why;
      BoundVerdict v = check_index_bounds(arena, k, op, o, pos, &why);
      if (v == BOUND_PROVEN)
        continue;
      Loc loc = operand->index_locs ? operand->index_locs[pos] : operand->loc;
      if (v == BOUND_NEVER)
        diag_error(diag, loc, "this index leaves dimension %d of '%s' whenever the domain is not empty: %s", pos, t->name, why);
      add_pre(arena, op, (Precondition){PRE_IN_BOUNDS, -1, o, pos, loc});
      if (v == BOUND_UNKNOWN)
        diag_warning(diag, loc,
                     "cannot prove that this index stays inside dimension %d of '%s' for all sizes: %s "
                     "(--checks verifies the sizes at run time)",
                     pos, t->name, why);
    }
  }
}
