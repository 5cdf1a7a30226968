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

/* The view's index of the kernel's tensor t (a view keeps the kernel's
 * order: transform/reshape.c), or -1 when the view does not have it. */
static int in_view(const Kernel *view, int t) {
  if (!view->view_tensor)
    return t;
  int lo = 0, hi = view->ntensors;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (view->view_tensor[mid] < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < view->ntensors && view->view_tensor[lo] == t ? lo : -1;
}

/* Whether the view sees tensor t of k unchanged (or not at all). */
static bool same_view(const Kernel *k, const Kernel *view, int t) {
  int v = in_view(view, t);
  if (v < 0)
    return true;
  if (view->tensors[v].rank != k->tensors[t].rank)
    return false;
  for (int i = 0; i < k->tensors[t].rank; i++)
    if (!affine_equal(view->tensors[v].shape[i], k->tensors[t].shape[i]))
      return false;
  return true;
}

/* Whether the view sees tensor t of k (its tensor v) with at most some
 * unit positions dropped (its op's folded dims): the pack copy's
 * coordinates then align with t's positions, 0 at the dropped ones
 * (prologue_position). */
static bool unit_view(const Kernel *k, const Kernel *view, int t, int v) {
  int j = 0;
  const TensorParam *a = &k->tensors[t], *b = &view->tensors[v];
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
  TensorUses uses;
  tensor_uses(&uses, k, arena);
  /* aliased[t]: another tensor's memory is t's */
  bool *aliased = arena_alloc(arena, (size_t)k->ntensors + 1);
  for (int u = 0; u < k->ntensors; u++)
    if (root(k, u) != u)
      aliased[root(k, u)] = true;
  for (int c = 0; c < k->nops; c++) {
    const StructuredOp *C = &k->ops[c];
    const OpPlan *cp = &plans[c];
    const Kernel *view = cp->view.k;
    if (C->ext || cp->s.library_call || plans[c].has_prologue || plans[c].is_prologue)
      continue;
    for (int v = 0; v < view->ntensors && v < LG_MAX_TENSORS; v++) {
      int t = view->view_tensor ? view->view_tensor[v] : v;
      if (!cp->s.pack[v] || k->tensors[t].storage != TS_WORKSPACE || aliased[t] || !unit_view(k, view, t, v) ||
          writes(C, t))
        continue;
      /* t's one writer p comes before C, and no op but C and p reads it */
      int p = uses.nwriters[t] == 1 ? uses.writers[uses.write_start[t]] : -1;
      bool ok = p >= 0 && p < c;
      for (int r = 0; r < uses.nreaders[t] && ok; r++) {
        int q = uses.readers[uses.read_start[t] + r];
        ok = q == c || q == p;
      }
      if (!ok || plans[p].is_prologue || plans[p].has_prologue || plans[p].group_size ||
          !pointwise_writer(k, &k->ops[p], t))
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
        ok = same_view(k, view, in) && !aliased[root(k, in)];
        for (int q = p + 1; q < c && ok; q++) /* P's inputs hold their values until C */
          for (int x = 0; x < op_all_operands(&k->ops[q]) && ok; x++) {
            int w = op_operand_at(&k->ops[q], x)->tensor;
            ok = !(writes(&k->ops[q], w) && root(k, w) == root(k, in));
          }
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
