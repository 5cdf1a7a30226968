/* prologue.c - elementwise producers applied while their consumer packs.
 *
 * A matmul packs its operands: it copies each tile of A into a contiguous
 * buffer once and reads the buffer many times. When A is the result of an
 * elementwise op P (a LayerNorm's scale and shift, a GELU, a transpose), the
 * copy can compute P's payload instead of loading A: A is never written to
 * memory and read back, and P never runs as a pass of its own. Inlining P
 * into the matmul's payload would recompute it at every one of the matmul's
 * N reads of each element; in the copy it runs once per element per tile.
 *
 * Decided after scheduling, because it depends on the consumer packing the
 * tensor: from the consumer's pack decisions, the producer's iterator kinds
 * and maps. P must be pointwise (all dims parallel, one output written at a
 * permutation of its dims), the only writer of T, with C as T's only
 * reader, through one packed operand; nothing between them may write P's
 * inputs; and C's view must see T and P's inputs with their own shapes (the
 * copy indexes T as P writes it). One prologue per consumer. */
#include "schedule/schedule.h"

#include <string.h>

static int root(const Kernel *k, int t) {
  while (k->tensors[t].storage == TS_ALIAS)
    t = k->tensors[t].alias_of;
  return t;
}

static bool writes(const StructuredOp *op, int t) { return op_writes_tensor(op, t); }

static bool reads(const StructuredOp *op, int t) { return op_reads_tensor(op, t); }

static bool has_alias(const Kernel *k, int t) {
  for (int u = 0; u < k->ntensors; u++)
    if (u != t && root(k, u) == t)
      return true;
  return false;
}

/* Whether P is pointwise over the tensor it writes. */
static bool pointwise_writer(const Kernel *k, const StructuredOp *P, int t) {
  if (P->ext || P->init || P->epilogue || P->nyields != 1 || P->ndims != k->tensors[t].rank ||
      op_reads_index(P, -1)) /* its dims would be the pack's coordinates */
    return false;
  const Operand *out = &P->operands[P->yields[0].operand];
  if (out->tensor != t || reads(P, t))
    return false;
  bool seen[LG_MAX_DIMS] = {false};
  for (int i = 0; i < P->ndims; i++) {
    const AffineExpr *m = out->map[i];
    if (m->kind != AE_DIM || seen[m->index] || P->dims[m->index].kind != ITER_PARALLEL)
      return false;
    seen[m->index] = true;
  }
  for (int o = 0; o < P->noperands; o++)
    if (P->operands[o].guarded)
      return false;
  /* a pack copy walks a tile in the packed layout's order, which rarely
   * vectorises: a transcendental there runs scalar, slower than the pass of
   * its own it saves (measured: a softmax's exp in the attention matmul's
   * copy cost a third of the transformer) */
  for (int n = 0; n < P->nnodes; n++) {
    const PayloadNode *x = &P->nodes[n];
    if (x->kind == PN_OP && (x->op == SOP_EXP || x->op == SOP_LOG || x->op == SOP_TANH || x->op == SOP_ERF ||
                             x->op == SOP_POWF || x->op == SOP_SQRT))
      return false;
  }
  return true;
}

/* Whether the view sees tensor t of k unchanged. */
static bool same_view(const Kernel *k, const Kernel *view, int t) {
  if (view->tensors[t].rank != k->tensors[t].rank)
    return false;
  for (int i = 0; i < k->tensors[t].rank; i++)
    if (!affine_equal(view->tensors[t].shape[i], k->tensors[t].shape[i]))
      return false;
  return true;
}

/* Whether the view sees tensor t of k with at most some unit positions
 * dropped (its op's folded dims): the pack copy's coordinates then align
 * with t's positions, 0 at the dropped ones (prologue_position). */
static bool unit_view(const Kernel *k, const Kernel *view, int t) {
  int j = 0;
  const TensorParam *a = &k->tensors[t], *b = &view->tensors[t];
  for (int i = 0; i < a->rank; i++) {
    if (j < b->rank && affine_equal(b->shape[j], a->shape[i]))
      j++;
    else if (!(a->shape[i]->kind == AE_CONST && a->shape[i]->value == 1))
      return false;
  }
  return j == b->rank;
}

void plan_prologues(const Kernel *k, OpPlan *plans, PtrVec *decisions, Arena *arena) {
  for (int c = 0; c < k->nops; c++)
    plans[c].is_prologue = plans[c].has_prologue = false;
  for (int c = 0; c < k->nops; c++) {
    const StructuredOp *C = &k->ops[c];
    const OpPlan *cp = &plans[c];
    if (C->ext || cp->s.library_call || plans[c].has_prologue || plans[c].is_prologue)
      continue;
    for (int t = 0; t < k->ntensors && t < LG_MAX_TENSORS; t++) {
      if (!cp->s.pack[t] || k->tensors[t].storage != TS_WORKSPACE || has_alias(k, t) || !unit_view(k, cp->view.k, t))
        continue;
      int p = -1;
      bool ok = true;
      for (int q = 0; q < k->nops && ok; q++) {
        if (q == c)
          continue;
        if (writes(&k->ops[q], t)) {
          ok = p < 0 && q < c;
          p = q;
        } else if (reads(&k->ops[q], t)) {
          ok = false;
        }
      }
      if (!ok || p < 0 || plans[p].is_prologue || plans[p].has_prologue || plans[p].group_size ||
          !pointwise_writer(k, &k->ops[p], t) || writes(C, t))
        continue;
      const StructuredOp *P = &k->ops[p];
      for (int o = 0; o < C->noperands && ok; o++) /* one operand of t in C: the packed one */
        for (int o2 = 0; o2 < C->noperands && ok && C->operands[o].tensor == t; o2++)
          if (C->operands[o2].tensor == t)
            for (int i = 0; i < k->tensors[t].rank && ok; i++)
              ok = affine_equal(C->operands[o].map[i], C->operands[o2].map[i]);
      for (int o = 0; o < P->noperands && ok; o++) {
        int in = P->operands[o].tensor;
        if (in == t)
          continue;
        ok = same_view(k, cp->view.k, in) && !has_alias(k, root(k, in));
        for (int q = p + 1; q < c && ok; q++) /* P's inputs hold their values until C */
          for (int x = 0; x < k->ntensors && ok; x++)
            ok = !(writes(&k->ops[q], x) && root(k, x) == root(k, in));
      }
      if (!ok)
        continue;
      plans[c].has_prologue = true;
      plans[c].prologue_op = p;
      plans[c].prologue_tensor = t;
      plans[p].is_prologue = true;
      plans[p].prologue_of = c;
      vec_push(arena, decisions,
               arena_printf(arena, "prologue: op %d computes '%s' while op %d packs it; '%s' is not kept", p,
                            k->tensors[t].name, c, k->tensors[t].name));
      break;
    }
  }
}
