/* reshape.c - unit-extent dim folding and contiguous-dim collapsing; see
 * reshape.h for the legality rules. Both stages build a fresh view (kernel
 * copy with its own tensor array, op copy with its own dims and operands) in
 * the arena; the original IR is never modified. Folding runs first, so a
 * chain may span a folded unit position (A(m, 0, n) with shape (M, 1, N)). */
#include "transform/reshape.h"

#include <stdlib.h>
#include <string.h>

void reshape_identity(Reshape *r) {
  memset(r->fold, 0, sizeof r->fold);
  for (int d = 0; d < LG_MAX_DIMS; d++)
    r->next[d] = -1;
}

bool reshape_is_identity(const Reshape *r, int ndims) {
  for (int d = 0; d < ndims; d++)
    if (r->fold[d] || r->next[d] >= 0)
      return false;
  return true;
}

static bool is_const(const AffineExpr *e, int64_t v) { return e->kind == AE_CONST && e->value == v; }

/* An op with a fused init or epilogue folds its unit dims together with
 * theirs (fold_attached), and collapses a chain only where each of them can
 * collapse the same chain (attached_pair_problem). */

const char *reshape_fold_problem(const StructuredOp *op, int d) {
  if (!is_const(op->dims[d].extent, 1))
    return "only a dim whose extent is the constant 1 can be folded";
  return NULL;
}

int reshape_head(const Reshape *r, int ndims, int d) {
  for (int a = 0; a < ndims; a++)
    if (r->next[a] == d)
      return reshape_head(r, ndims, a);
  return d;
}

/* e with dim d renamed to dim_map[d], or the constant 0 where dim_map[d] < 0.
 * Leaves without dims are immutable and shared. */
static AffineExpr *rename_dims(Arena *a, AffineExpr *e, const int *dim_map) {
  if (!affine_has_dims(e))
    return e;
  if (e->kind == AE_DIM)
    return dim_map[e->index] < 0 ? affine_const(a, 0) : affine_leaf(a, AE_DIM, dim_map[e->index], 0);
  AffineExpr *lhs = e->lhs ? rename_dims(a, e->lhs, dim_map) : NULL;
  AffineExpr *rhs = e->rhs ? rename_dims(a, e->rhs, dim_map) : NULL;
  /* a folded window dim leaves `o0 + 0` (a 1 x 1 conv's input): the bare
   * dim, which can then collapse with its neighbours */
  if ((e->kind == AE_ADD || e->kind == AE_SUB) && is_const(rhs, 0))
    return lhs;
  if (e->kind == AE_ADD && is_const(lhs, 0))
    return rhs;
  AffineExpr *c = arena_alloc(a, sizeof *c);
  *c = *e;
  c->lhs = lhs;
  c->rhs = rhs;
  return c;
}

static AffineExpr *product(Arena *a, AffineExpr *x, AffineExpr *y) {
  if (x->kind == AE_CONST && y->kind == AE_CONST)
    return affine_const(a, x->value * y->value);
  if (is_const(x, 1))
    return y;
  if (is_const(y, 1))
    return x;
  return affine_binary(a, AE_MUL, x, y);
}

/* ---- the op's own tensors ----
 *
 * A view holds only the tensors its op touches (its operands', its init's
 * and epilogue's, and the roots of their aliases), in the kernel's order,
 * renumbered from 0: a model graph's kernel has a tensor per node, and a
 * copy of them all per op made the generator quadratic in the graph's size
 * (and kept tensors after the first LG_MAX_TENSORS from being packed). */

static int compare_ints(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return x < y ? -1 : x > y;
}

/* The position of t in the sorted ids[0..n). */
static int local_index(const int *ids, int n, int t) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (ids[mid] < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static StructuredOp *renumbered(const StructuredOp *op, const int *ids, int n, Arena *a) {
  StructuredOp *c = arena_alloc(a, sizeof *c);
  *c = *op;
  c->operands = arena_alloc(a, sizeof(Operand) * (size_t)(op->noperands + 1));
  memcpy(c->operands, op->operands, sizeof(Operand) * (size_t)op->noperands);
  for (int o = 0; o < op->noperands; o++)
    c->operands[o].tensor = local_index(ids, n, op->operands[o].tensor);
  if (op->init)
    c->init = renumbered(op->init, ids, n, a);
  if (op->epilogue)
    c->epilogue = renumbered(op->epilogue, ids, n, a);
  return c;
}

/* (k, op) as a view of op's own tensors; a view of a view views the same
 * base kernel. A non-structured op stays as it is (it is never reshaped,
 * and its ExtOp names the kernel's tensors). */
static OpView localize(const Kernel *k, const StructuredOp *op, Arena *a) {
  if (op->ext)
    return (OpView){k, op};
  int cap = op_all_operands(op) * 2 + 1, n = 0;
  int *ids = arena_alloc(a, sizeof(int) * (size_t)cap);
  for (int i = 0; i < op_all_operands(op); i++) {
    /* the tensor and its aliases' chain down to the root, whose memory it is */
    for (int t = op_operand_at(op, i)->tensor, hops = 0;; t = k->tensors[t].alias_of, hops++) {
      if (n == cap) {
        int *more = arena_alloc(a, sizeof(int) * (size_t)cap * 2);
        memcpy(more, ids, sizeof(int) * (size_t)n);
        ids = more;
        cap *= 2;
      }
      ids[n++] = t;
      if (k->tensors[t].storage != TS_ALIAS || hops > k->ntensors)
        break;
    }
  }
  qsort(ids, (size_t)n, sizeof *ids, compare_ints);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (m == 0 || ids[m - 1] != ids[i])
      ids[m++] = ids[i];
  Kernel *vk = arena_alloc(a, sizeof *vk);
  *vk = *k;
  vk->ntensors = m;
  vk->tensors = arena_alloc(a, sizeof(TensorParam) * (size_t)(m + 1));
  int *base_ids = arena_alloc(a, sizeof(int) * (size_t)(m + 1));
  for (int i = 0; i < m; i++) {
    vk->tensors[i] = k->tensors[ids[i]];
    if (vk->tensors[i].storage == TS_ALIAS)
      vk->tensors[i].alias_of = local_index(ids, m, k->tensors[ids[i]].alias_of);
    base_ids[i] = k->view_tensor ? k->view_tensor[ids[i]] : ids[i];
  }
  vk->view_base = k->view_base ? k->view_base : k;
  vk->view_tensor = base_ids;
  return (OpView){vk, renumbered(op, ids, m, a)};
}

/* Copies of the kernel and op that a stage may rewrite: own tensor, dim and
 * operand arrays (maps are replaced wholesale, never edited in place). */
static void copy_shell(const Kernel *k, const StructuredOp *op, Arena *a, Kernel **vk, StructuredOp **vop) {
  Kernel *nk = arena_alloc(a, sizeof *nk);
  *nk = *k;
  nk->tensors = arena_alloc(a, sizeof(TensorParam) * (size_t)(k->ntensors + 1));
  memcpy(nk->tensors, k->tensors, sizeof(TensorParam) * (size_t)k->ntensors);
  StructuredOp *nop = arena_alloc(a, sizeof *nop);
  *nop = *op;
  nop->dims = arena_alloc(a, sizeof(Dim) * (size_t)(op->ndims + 1));
  nop->operands = arena_alloc(a, sizeof(Operand) * (size_t)(op->noperands + 1));
  memcpy(nop->operands, op->operands, sizeof(Operand) * (size_t)op->noperands);
  nop->npre = 0; /* run-time checks use the original op */
  nop->pre = NULL;
  *vk = nk;
  *vop = nop;
}

/* Each dim's extent source: the first operand that reads it bare. */
static void locate_extents(const Kernel *k, StructuredOp *op) {
  for (int d = 0; d < op->ndims; d++) {
    op->dims[d].extent_operand = op->dims[d].extent_pos = -1;
    for (int o = 0; o < op->noperands && op->dims[d].extent_operand < 0; o++)
      for (int p = 0; p < k->tensors[op->operands[o].tensor].rank; p++)
        if (affine_is_dim(op->operands[o].map[p], d)) {
          op->dims[d].extent_operand = o;
          op->dims[d].extent_pos = p;
          break;
        }
  }
}

/* The payload with each loop-index read (PN_INDEX) of dim d renamed to
 * dim_map[d], or the constant 0 where the dim folds away; shared when it
 * reads none. Collapsing never merges a dim that is read (pair_problem). */
static void rename_index_reads(StructuredOp *op, const int *dim_map, Arena *a) {
  if (!op_reads_index(op, -1))
    return;
  PayloadNode *nodes = arena_alloc(a, sizeof(PayloadNode) * (size_t)(op->nnodes + 1));
  memcpy(nodes, op->nodes, sizeof(PayloadNode) * (size_t)op->nnodes);
  for (int i = 0; i < op->nnodes; i++)
    if (nodes[i].kind == PN_INDEX && dim_map[nodes[i].dim] < 0)
      nodes[i] = (PayloadNode){.kind = PN_CONST, .type = TY_I64, .ivalue = 0, .loc = nodes[i].loc};
    else if (nodes[i].kind == PN_INDEX)
      nodes[i].dim = dim_map[nodes[i].dim];
  op->nodes = nodes;
}

/* ---- folding ---- */

static OpView fold_unit_dims(const Kernel *k, const StructuredOp *op, const bool *fold, Arena *a, int *dim_map) {
  Kernel *vk;
  StructuredOp *vop;
  copy_shell(k, op, a, &vk, &vop);
  int n = 0;
  for (int d = 0; d < op->ndims; d++) {
    dim_map[d] = fold[d] ? -1 : n;
    if (!fold[d])
      vop->dims[n++] = op->dims[d];
  }
  vop->ndims = n;
  rename_index_reads(vop, dim_map, a);
  AffineExpr ***renamed = arena_alloc(a, sizeof(AffineExpr **) * (size_t)(op->noperands + 1));
  for (int o = 0; o < op->noperands; o++) {
    int rank = k->tensors[op->operands[o].tensor].rank;
    renamed[o] = arena_alloc(a, sizeof(AffineExpr *) * (size_t)(rank + 1));
    for (int p = 0; p < rank; p++)
      renamed[o][p] = rename_dims(a, op->operands[o].map[p], dim_map);
  }
  /* a position of constant extent 1 that every read indexes with 0 goes */
  for (int t = 0; t < k->ntensors; t++) {
    const TensorParam *tp = &k->tensors[t];
    bool keep[LG_MAX_RANK], used = false;
    for (int p = 0; p < tp->rank; p++)
      keep[p] = !is_const(tp->shape[p], 1);
    for (int o = 0; o < op->noperands; o++)
      if (op->operands[o].tensor == t) {
        used = true;
        for (int p = 0; p < tp->rank; p++)
          keep[p] |= !is_const(renamed[o][p], 0);
      }
    if (!used)
      continue;
    int rank = 0;
    AffineExpr **shape = arena_alloc(a, sizeof(AffineExpr *) * (size_t)(tp->rank + 1));
    for (int p = 0; p < tp->rank; p++)
      if (keep[p])
        shape[rank++] = tp->shape[p];
    for (int o = 0; o < op->noperands; o++)
      if (op->operands[o].tensor == t) {
        int q = 0;
        for (int p = 0; p < tp->rank; p++)
          if (keep[p])
            renamed[o][q++] = renamed[o][p];
        vop->operands[o].map = renamed[o];
        vop->operands[o].index_locs = NULL;
      }
    vk->tensors[t].rank = rank;
    vk->tensors[t].shape = shape;
  }
  locate_extents(vk, vop);
  return (OpView){vk, vop};
}

/* ---- collapsing ---- */

/* NULL if b can follow a in a merged dim of op (already folded). */
static const char *pair_problem(const Kernel *k, const StructuredOp *op, int a, int b, Arena *arena) {
  const Dim *da = &op->dims[a], *db = &op->dims[b];
  if (a == b)
    return arena_printf(arena, "'%s' cannot be merged with itself", da->name);
  if (op_reads_index(op, a) || op_reads_index(op, b))
    return arena_printf(arena, "the payload reads the value of '%s'", op_reads_index(op, a) ? da->name : db->name);
  if (da->kind != db->kind)
    return arena_printf(arena, "'%s' is a %s dim and '%s' a %s dim: only dims of one iterator kind merge", da->name,
                        da->kind == ITER_PARALLEL ? "parallel" : "reduction", db->name,
                        db->kind == ITER_PARALLEL ? "parallel" : "reduction");
  int *where = arena_alloc(arena, sizeof(int) * (size_t)(k->ntensors + 1));
  for (int t = 0; t < k->ntensors; t++)
    where[t] = -2; /* not read yet; -1: read without a or b */
  for (int o = 0; o < op->noperands; o++) {
    const Operand *operand = &op->operands[o];
    const TensorParam *t = &k->tensors[operand->tensor];
    int uses = 0, pa = -1;
    for (int p = 0; p < t->rank; p++) {
      uses += affine_uses_dim(operand->map[p], a) || affine_uses_dim(operand->map[p], b);
      if (affine_is_dim(operand->map[p], a))
        pa = p;
    }
    int here = -1;
    if (uses) {
      if (uses != 2 || pa < 0 || pa + 1 >= t->rank || !affine_is_dim(operand->map[pa + 1], b))
        return arena_printf(arena, "'%s' is not indexed by '%s' and then '%s' as consecutive plain indices", t->name,
                            da->name, db->name);
      if (!affine_equal(t->shape[pa + 1], db->extent))
        return arena_printf(arena, "the extent of '%s' where it is indexed by '%s' is not the extent of '%s'", t->name,
                            db->name, db->name);
      here = pa;
    }
    if (where[operand->tensor] != -2 && where[operand->tensor] != here)
      return arena_printf(arena, "the reads of '%s' do not all index it by '%s' and '%s' in the same places", t->name,
                          da->name, db->name);
    where[operand->tensor] = here;
  }
  return NULL;
}

static int chain_length(const int *next, int head) {
  int n = 1;
  for (int d = next[head]; d >= 0; d = next[d])
    n++;
  return n;
}

static OpView collapse_dims(const Kernel *k, const StructuredOp *op, const int *next, Arena *a) {
  Kernel *vk;
  StructuredOp *vop;
  copy_shell(k, op, a, &vk, &vop);
  bool member[LG_MAX_DIMS] = {false}; /* merged into an earlier dim */
  for (int d = 0; d < op->ndims; d++)
    if (next[d] >= 0)
      member[next[d]] = true;
  int dim_map[LG_MAX_DIMS], n = 0;
  for (int d = 0; d < op->ndims; d++) {
    if (member[d])
      continue;
    Dim dim = op->dims[d];
    dim_map[d] = n;
    for (int x = next[d]; x >= 0; x = next[x]) {
      dim_map[x] = n;
      dim.extent = product(a, dim.extent, op->dims[x].extent);
    }
    vop->dims[n++] = dim;
  }
  vop->ndims = n;
  rename_index_reads(vop, dim_map, a);
  for (int t = 0; t < k->ntensors; t++) {
    const TensorParam *tp = &k->tensors[t];
    /* run[p]: how many positions from p merge into one (legality makes every
     * read of t agree, so any read with the chain's head tells) */
    int run[LG_MAX_RANK];
    bool used = false;
    for (int p = 0; p < tp->rank; p++)
      run[p] = 1;
    for (int o = 0; o < op->noperands; o++)
      if (op->operands[o].tensor == t) {
        used = true;
        for (int p = 0; p < tp->rank; p++) {
          const AffineExpr *x = op->operands[o].map[p];
          if (x->kind == AE_DIM && !member[x->index] && next[x->index] >= 0)
            run[p] = chain_length(next, x->index);
        }
      }
    if (!used)
      continue;
    AffineExpr **shape = arena_alloc(a, sizeof(AffineExpr *) * (size_t)(tp->rank + 1));
    int rank = 0;
    for (int p = 0; p < tp->rank; p += run[p]) {
      shape[rank] = tp->shape[p];
      for (int q = 1; q < run[p]; q++)
        shape[rank] = product(a, shape[rank], tp->shape[p + q]);
      rank++;
    }
    for (int o = 0; o < op->noperands; o++) {
      if (op->operands[o].tensor != t)
        continue;
      AffineExpr **map = arena_alloc(a, sizeof(AffineExpr *) * (size_t)(rank + 1));
      int q = 0;
      for (int p = 0; p < tp->rank; p += run[p])
        map[q++] = rename_dims(a, op->operands[o].map[p], dim_map);
      vop->operands[o].map = map;
      vop->operands[o].index_locs = NULL;
    }
    vk->tensors[t].rank = rank;
    vk->tensors[t].shape = shape;
  }
  locate_extents(vk, vop);
  return (OpView){vk, vop};
}

/* The new index of each dim once the chains in next[] merge (a chain's
 * members take their head's). */
static void collapsed_index(const int *next, int ndims, int *index) {
  bool member[LG_MAX_DIMS] = {false};
  for (int d = 0; d < ndims; d++)
    if (next[d] >= 0)
      member[next[d]] = true;
  int n = 0;
  for (int d = 0; d < ndims; d++)
    if (!member[d]) {
      for (int x = d; x >= 0; x = next[x])
        index[x] = n;
      n++;
    }
}

/* The dim of attached op E (dims: E's dim j is the op's dims[j]) that is
 * the op's dim d, or -1. */
static int attached_dim(const StructuredOp *E, const int *dims, int d) {
  for (int j = 0; j < E->ndims; j++)
    if (dims[j] == d)
      return j;
  return -1;
}

/* NULL if dims a and b of op (folded, with its folded init and epilogue)
 * can merge in its init and epilogue too: each runs over both, and they
 * merge there by pair_problem's rules. */
static const char *attached_pair_problem(const Kernel *k, const StructuredOp *op, int a, int b, Arena *arena) {
  const StructuredOp *parts[2] = {op->init, op->epilogue};
  const int *dims[2] = {op->init_dims, op->epilogue_dims};
  for (int p = 0; p < 2; p++) {
    if (!parts[p])
      continue;
    int ja = attached_dim(parts[p], dims[p], a), jb = attached_dim(parts[p], dims[p], b);
    if (ja < 0 || jb < 0)
      return arena_printf(arena, "the op's fused %s does not run over '%s' and '%s'", p ? "epilogue" : "init",
                          op->dims[a].name, op->dims[b].name);
    const char *problem = pair_problem(k, parts[p], ja, jb, arena);
    if (problem)
      return problem;
  }
  return NULL;
}

/* Whether tensor t is one of op's operands (read or written). */
static bool has_operand(const StructuredOp *op, int t) {
  for (int o = 0; o < op->noperands; o++)
    if (op->operands[o].tensor == t)
      return true;
  return false;
}

/* collapse_dims of an op with an init or epilogue (all three folded; the
 * chains legal for all, attached_pair_problem): each attached op merges the
 * same chains in its own dims, and its tensors that the op does not touch
 * take its view. */
static OpView collapse_with_attached(const Kernel *k, const StructuredOp *op, const int *next, Arena *a) {
  OpView v = collapse_dims(k, op, next, a);
  if (!op->init && !op->epilogue)
    return v;
  Kernel *vk = (Kernel *)v.k; /* collapse_dims's own copies */
  StructuredOp *vop = (StructuredOp *)v.op;
  int op_index[LG_MAX_DIMS];
  collapsed_index(next, op->ndims, op_index);
  for (int p = 0; p < 2; p++) {
    const StructuredOp *E = p ? op->epilogue : op->init;
    const int *dims = p ? op->epilogue_dims : op->init_dims;
    if (!E)
      continue;
    int e_next[LG_MAX_DIMS], e_index[LG_MAX_DIMS];
    for (int j = 0; j < E->ndims; j++)
      e_next[j] = dims[j] >= 0 && next[dims[j]] >= 0 ? attached_dim(E, dims, next[dims[j]]) : -1;
    OpView ve = collapse_dims(k, E, e_next, a);
    collapsed_index(e_next, E->ndims, e_index);
    int *new_dims = arena_alloc(a, sizeof(int) * (size_t)(ve.op->ndims + 1));
    for (int j = 0; j < E->ndims; j++)
      new_dims[e_index[j]] = dims[j] < 0 ? -1 : op_index[dims[j]];
    for (int t = 0; t < k->ntensors; t++) {
      bool in_op = has_operand(op, t), in_e = has_operand(E, t);
      if (in_e && !in_op)
        vk->tensors[t] = ve.k->tensors[t];
    }
    if (p) {
      vop->epilogue = ve.op;
      vop->epilogue_dims = new_dims;
    } else {
      vop->init = ve.op;
      vop->init_dims = new_dims;
    }
  }
  return v;
}

static OpView fold_with_attached(const Kernel *k, const StructuredOp *op, const bool *fold, Arena *a, int *dim_map);

/* ---- the public steps ---- */

void reshape_auto(const Kernel *k, const StructuredOp *op, Reshape *r, Arena *arena) {
  OpView own = localize(k, op, arena);
  k = own.k;
  op = own.op;
  reshape_identity(r);
  for (int d = 0; d < op->ndims; d++)
    r->fold[d] = reshape_fold_problem(op, d) == NULL;
  bool attached = op->epilogue || op->init;
  int dim_map[LG_MAX_DIMS], original[LG_MAX_DIMS];
  OpView v = attached ? fold_with_attached(k, op, r->fold, arena, dim_map) : fold_unit_dims(k, op, r->fold, arena, dim_map);
  if (attached && v.op == op)
    return; /* the attached ops do not fold with it: nothing collapses either */
  for (int d = 0; d < op->ndims; d++)
    if (dim_map[d] >= 0)
      original[dim_map[d]] = d;
  int next[LG_MAX_DIMS], prev[LG_MAX_DIMS];
  for (int d = 0; d < LG_MAX_DIMS; d++)
    next[d] = prev[d] = -1;
  /* candidate pairs: consecutive plain indices of some read */
  for (int o = 0; o < v.op->noperands; o++) {
    const Operand *operand = &v.op->operands[o];
    for (int p = 0; p + 1 < v.k->tensors[operand->tensor].rank; p++) {
      const AffineExpr *x = operand->map[p], *y = operand->map[p + 1];
      if (x->kind != AE_DIM || y->kind != AE_DIM || next[x->index] >= 0 || prev[y->index] >= 0)
        continue;
      bool cycle = false; /* cannot happen for legal pairs; cheap to rule out */
      for (int d = y->index; d >= 0 && !cycle; d = next[d])
        cycle = d == x->index;
      if (cycle || pair_problem(v.k, v.op, x->index, y->index, arena) ||
          (attached && attached_pair_problem(v.k, v.op, x->index, y->index, arena)))
        continue;
      next[x->index] = y->index;
      prev[y->index] = x->index;
    }
  }
  for (int d = 0; d < v.op->ndims; d++)
    if (next[d] >= 0)
      r->next[original[d]] = original[next[d]];
}

const char *reshape_collapse_problem(const Kernel *k, const StructuredOp *op, const Reshape *r, int a, int b,
                                     Arena *arena) {
  if (r->fold[a] || r->fold[b])
    return arena_printf(arena, "'%s' is folded away and cannot be merged", op->dims[r->fold[a] ? a : b].name);
  OpView own = localize(k, op, arena);
  k = own.k;
  op = own.op;
  int dim_map[LG_MAX_DIMS];
  if (op->epilogue || op->init) {
    OpView v = fold_with_attached(k, op, r->fold, arena, dim_map);
    if (v.op == op)
      return "the op's fused init or epilogue does not fold with it";
    const char *problem = pair_problem(v.k, v.op, dim_map[a], dim_map[b], arena);
    return problem ? problem : attached_pair_problem(v.k, v.op, dim_map[a], dim_map[b], arena);
  }
  OpView v = fold_unit_dims(k, op, r->fold, arena, dim_map);
  return pair_problem(v.k, v.op, dim_map[a], dim_map[b], arena);
}

/* Folds an op's attached op E (its init or epilogue, dims[j] the op's dim
 * of E's dim j): E's dims of folded dims (and those at the op's unit output
 * positions) fold too. The view vk takes E's view of the tensors only E
 * reads; the output they share must lose the same positions in both (it
 * does: its unit positions are indexed by folded dims or 0 on both
 * sides). False if E cannot follow. */
static bool fold_attached(const Kernel *k, const StructuredOp *op, const StructuredOp *E, const int *dims,
                          const bool *fold, const int *dim_map, Kernel *vk, const StructuredOp **out_e,
                          const int **out_dims, Arena *a) {
  bool e_fold[LG_MAX_DIMS];
  for (int j = 0; j < E->ndims; j++) {
    e_fold[j] = dims[j] < 0 || fold[dims[j]];
    if (e_fold[j] && !is_const(E->dims[j].extent, 1))
      return false;
  }
  int e_map[LG_MAX_DIMS];
  OpView ve = fold_unit_dims(k, E, e_fold, a, e_map);
  for (int t = 0; t < k->ntensors; t++) {
    bool in_op = has_operand(op, t), in_e = has_operand(E, t);
    if (in_e && in_op && vk->tensors[t].rank != ve.k->tensors[t].rank)
      return false;
    if (in_e && !in_op)
      vk->tensors[t] = ve.k->tensors[t];
  }
  int *new_dims = arena_alloc(a, sizeof(int) * (size_t)(ve.op->ndims + 1));
  for (int j = 0; j < E->ndims; j++)
    if (e_map[j] >= 0)
      new_dims[e_map[j]] = dim_map[dims[j]];
  *out_e = ve.op;
  *out_dims = new_dims;
  return true;
}

/* Folds an op with an init or epilogue, and them with it; nothing when
 * one of them cannot follow. */
static OpView fold_with_attached(const Kernel *k, const StructuredOp *op, const bool *fold, Arena *a, int *dim_map) {
  OpView v = fold_unit_dims(k, op, fold, a, dim_map);
  Kernel *vk = (Kernel *)v.k; /* fold_unit_dims's own copies */
  StructuredOp *vop = (StructuredOp *)v.op;
  if (op->init && !fold_attached(k, op, op->init, op->init_dims, fold, dim_map, vk, &vop->init, &vop->init_dims, a))
    return (OpView){k, op};
  if (op->epilogue && !fold_attached(k, op, op->epilogue, op->epilogue_dims, fold, dim_map, vk, &vop->epilogue,
                                     &vop->epilogue_dims, a))
    return (OpView){k, op};
  return v;
}

OpView reshape_apply(const Kernel *k, const StructuredOp *op, const Reshape *r, Arena *arena) {
  OpView own = localize(k, op, arena);
  if (reshape_is_identity(r, op->ndims))
    return own;
  k = own.k;
  op = own.op;
  int dim_map[LG_MAX_DIMS];
  bool attached = op->epilogue || op->init;
  OpView folded =
      attached ? fold_with_attached(k, op, r->fold, arena, dim_map) : fold_unit_dims(k, op, r->fold, arena, dim_map);
  if (attached && folded.op == op)
    return folded; /* not folded: reshape_*_problem refuse collapsing it */
  int next[LG_MAX_DIMS];
  for (int d = 0; d < LG_MAX_DIMS; d++)
    next[d] = -1;
  bool any = false;
  for (int d = 0; d < op->ndims; d++)
    if (r->next[d] >= 0) {
      next[dim_map[d]] = dim_map[r->next[d]];
      any = true;
    }
  return any ? collapse_with_attached(folded.k, folded.op, next, arena) : folded;
}
