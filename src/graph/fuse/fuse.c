/* fuse.c - producer-consumer fusion over a graph kernel's op sequence.
 *
 * The one transformation here is inlining: an op P that computes a workspace
 * tensor T point by point (all dims parallel, T written once through a
 * permutation of P's dims, nothing else writing T) can be recomputed inside
 * every op that reads T. Each read T[M(c)] of a consumer becomes P's payload
 * with P's dims replaced by the read's indices: P's dim d is the index M at
 * the position where P writes d. P's own reads compose with that
 * substitution, so a chain of elementwise ops, broadcasts and transposes
 * collapses into the maps and payload of its last consumer, and T never
 * exists. Everything is decided from maps, iterator kinds and payloads.
 *
 * When inlining recomputes work: a consumer whose reads of T do not mention
 * all its dims reads each element of T many times (a matmul reading its
 * operand N times). P is then inlined only when it is pure data movement
 * in the order of its dims (is_cheap below). A read through a guarded (padded)
 * operand is never inlined: the padding belongs to T, not to P's inputs.
 * P is removed only if every reader of T takes it; otherwise nothing
 * changes, so an intermediate that something still needs is computed once
 * (the ByteIR diamond and "output also consumed" cases).
 *
 * After inlining come epilogues and inits (a reduction applies the
 * pointwise op after it before its store, and starts from the op that
 * filled its output), then sibling reductions: reductions reading one
 * tensor over the same domain become one op with several yields, so the
 * tensor is read once (see "sibling reductions" below). */
#include "graph/passes.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

enum { MAX_FUSED_NODES = 256, CHEAP_OPS = 0 };

typedef struct {
  Kernel *k;
  Arena *arena;
  Diag *diag;
  const FuseOptions *opt;
  FuseReport *report;
  bool *removed; /* per op */
  bool *used;    /* per override */
  /* Which ops touch (and write) the memory of each root tensor (an alias's
   * root is the tensor whose memory it is): every op that does is listed,
   * maybe also some that no longer do (an op is added again whenever it
   * changes; the questions below check the op itself). The passes ask
   * "which ops read T", "does any op between P and C write X" of every
   * op: answered from these lists, not by a scan of every op and tensor. */
  OpList *touch, *write;
  bool *aliased; /* per tensor: another tensor's memory is its */
  /* The arrays inline_into gives an op live on the heap (heap[op]), not in
   * the arena: a chain is inlined one op at a time, each step copying the
   * payload so far, and the arena would keep every copy (memory quadratic
   * in the payload, up to MAX_FUSED_NODES). A copy is freed when the op's
   * next rewrite replaces it or the op is inlined away; the ones left are
   * copied into the arena at the end. */
  struct HeapArrays {
    void *nodes, *operands, *dims, *yields;
  } *heap;
  /* The ops' origins while fusing (joined_origin): a chain's grows by a
   * node at each step, and every step's string would stay in the arena
   * (the sum over a group is quadratic in its size: 206 MB of a 100,000-
   * node chain's 2.2 GB). The survivors' are copied into the arena at the
   * end and this one freed. */
  Arena *origins;
  int *sorted;   /* scratch for ops_touching */
  int sorted_cap;
} Fuser;

/* Non-structured ops (ExtOp) take part only as readers and writers: they
 * are never inlined and nothing is inlined into them (their template reads
 * memory, not a payload). */
static bool op_writes(const StructuredOp *op, int t) { return op_writes_tensor(op, t); }

static bool op_reads(const StructuredOp *op, int t) { return op_reads_tensor(op, t); }

/* The tensor an op reads memory of, seen through aliases. */
static int root_of(const Kernel *k, int t) {
  while (k->tensors[t].storage == TS_ALIAS)
    t = k->tensors[t].alias_of;
  return t;
}

static bool has_alias(const Fuser *f, int t) { return f->aliased[t]; }

/* Lists op i under every tensor it touches now (call again when it changes). */
static void index_op(Fuser *f, int i) {
  const StructuredOp *op = &f->k->ops[i];
  for (int o = 0; o < op_all_operands(op); o++) {
    int t = op_operand_at(op, o)->tensor, r = root_of(f->k, t);
    oplist_add(f->arena, &f->touch[r], i);
    if (op_writes_tensor(op, t))
      oplist_add(f->arena, &f->write[r], i);
  }
}

static int compare_ints(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return x < y ? -1 : x > y;
}

/* The ops (not removed) in list l strictly between lo and hi, in order, in
 * f->sorted (valid until the next call); their count. */
static int ops_in(Fuser *f, const OpList *l, int lo, int hi) {
  if (f->sorted_cap < l->len + 1) {
    f->sorted_cap = (l->len + 1) * 2;
    f->sorted = arena_alloc(f->arena, sizeof(int) * (size_t)f->sorted_cap);
  }
  int n = 0;
  for (int i = 0; i < l->len; i++)
    if (l->items[i] > lo && l->items[i] < hi && !f->removed[l->items[i]])
      f->sorted[n++] = l->items[i];
  qsort(f->sorted, (size_t)n, sizeof(int), compare_ints);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (m == 0 || f->sorted[m - 1] != f->sorted[i])
      f->sorted[m++] = f->sorted[i];
  return m;
}

/* If P can be inlined, the tensor it writes, with pos_of_dim[d] = the
 * position of T that P's dim d indexes; else -1. */
static int inlinable_output(const Fuser *f, int p, int *pos_of_dim) {
  const Kernel *k = f->k;
  const StructuredOp *op = &k->ops[p];
  if (op->ext || op->nyields != 1 || op->ndims > LG_MAX_DIMS)
    return -1;
  const Operand *out = &op->operands[op->yields[0].operand];
  int t = out->tensor;
  const TensorParam *T = &k->tensors[t];
  if (T->storage != TS_WORKSPACE || T->rank != op->ndims || has_alias(f, t) || op_reads(op, t))
    return -1;
  for (int d = 0; d < op->ndims; d++) {
    if (op->dims[d].kind != ITER_PARALLEL)
      return -1;
    pos_of_dim[d] = -1;
  }
  for (int i = 0; i < T->rank; i++) {
    const AffineExpr *m = out->map[i];
    if (m->kind != AE_DIM || pos_of_dim[m->index] >= 0)
      return -1;
    pos_of_dim[m->index] = i;
  }
  const OpList *w = &f->write[root_of(k, t)];
  for (int i = 0; i < w->len; i++) {
    int q = w->items[i];
    if (q != p && !f->removed[q] && op_writes(&k->ops[q], t))
      return -1;
  }
  return t;
}

/* Cheap enough to recompute at every read of a reader that reuses its
 * elements: pure data movement (a broadcast, a slice, a copy) with no
 * arithmetic, no guarded read (a padded copy exists so that its reader's
 * inner loop has no guard), and reads in the order of its dims (a
 * transpose inlined into such a reader turns its contiguous loads into
 * strided ones, which costs more than the one pass that writes the
 * transposed copy). Arithmetic is left out even when it is one add: the
 * reader (a matmul) packs its operands, and an operand computed on the fly
 * cannot be packed, which costs more than the pass the inlining saves. */
static bool is_cheap(const Kernel *k, const StructuredOp *op) {
  const Operand *out = &op->operands[op->yields[0].operand];
  for (int i = 0; i < op->ndims; i++)
    if (!affine_is_dim(out->map[i], i))
      return false;
  for (int o = 0; o < op->noperands; o++) {
    const Operand *x = &op->operands[o];
    if (x->guarded)
      return false;
    if (x == out || x->shape_only)
      continue;
    int last = -1; /* bare dims in increasing order, or broadcast constants */
    for (int i = 0; i < k->tensors[x->tensor].rank; i++) {
      const AffineExpr *m = x->map[i];
      if (m->kind == AE_CONST)
        continue;
      if (m->kind != AE_DIM || m->index <= last)
        return false;
      last = m->index;
    }
  }
  int ops = 0;
  for (int n = 0; n < op->nnodes; n++) {
    const PayloadNode *x = &op->nodes[n];
    if (x->kind != PN_OP)
      continue;
    if (scalar_op_is_libm(x->op))
      return false;
    switch (x->op) {
    case SOP_EXP:
    case SOP_LOG:
    case SOP_TANH:
    case SOP_SQRT:
    case SOP_ERF:
    case SOP_POWF:
    case SOP_DIVF:
    case SOP_DIVIS:
    case SOP_DIVIU:
      return false;
    default:
      ops++;
    }
  }
  return ops <= CHEAP_OPS;
}

/* Whether op writes memory of tensor `root` (through any alias). */
static bool writes_root(const Kernel *k, const StructuredOp *op, int root) {
  if (op->ext) {
    for (int i = op->ext->ninputs; i < op->noperands; i++)
      if (root_of(k, op->ext->tensors[i]) == root)
        return true;
    return false;
  }
  for (int y = 0; y < op->nyields; y++)
    if (root_of(k, op->operands[op->yields[y].operand].tensor) == root)
      return true;
  return false;
}

/* Whether an op strictly between lo and hi writes memory of `root`. */
static bool written_between(const Fuser *f, int root, int lo, int hi) {
  const OpList *w = &f->write[root];
  for (int i = 0; i < w->len; i++) {
    int q = w->items[i];
    if (q > lo && q < hi && !f->removed[q] && writes_root(f->k, &f->k->ops[q], root))
      return true;
  }
  return false;
}

/* Whether an op strictly between lo and hi writes memory of `root`
 * through any tensor it writes (its init's and epilogue's included). */
static bool written_any_between(const Fuser *f, int root, int lo, int hi) {
  const OpList *w = &f->write[root];
  for (int i = 0; i < w->len; i++) {
    int q = w->items[i];
    if (q <= lo || q >= hi || f->removed[q])
      continue;
    const StructuredOp *Q = &f->k->ops[q];
    for (int o = 0; o < op_all_operands(Q); o++) {
      int x = op_operand_at(Q, o)->tensor;
      if (root_of(f->k, x) == root && op_writes_tensor(Q, x))
        return true;
    }
  }
  return false;
}

/* Whether an op strictly between lo and hi touches memory of `root`. */
static bool touched_between(const Fuser *f, int root, int lo, int hi) {
  const OpList *l = &f->touch[root];
  for (int i = 0; i < l->len; i++) {
    int q = l->items[i];
    if (q <= lo || q >= hi || f->removed[q])
      continue;
    const StructuredOp *Q = &f->k->ops[q];
    for (int o = 0; o < op_all_operands(Q); o++)
      if (root_of(f->k, op_operand_at(Q, o)->tensor) == root)
        return true;
  }
  return false;
}

/* Whether consumer c can take P (writing t) at every read of t. */
static bool reads_guarded(const StructuredOp *op) {
  for (int o = 0; o < op->noperands; o++)
    if (op->operands[o].guarded)
      return true;
  return false;
}

static bool consumer_accepts(const Fuser *f, int p, int c, int t, bool cheap) {
  const Kernel *k = f->k;
  const StructuredOp *P = &k->ops[p], *C = &k->ops[c];
  if (C->ext || op_writes(C, t) || C->nnodes + P->nnodes > MAX_FUSED_NODES || op_reads_index(C, -1))
    return false;
  for (int o = 0; o < C->noperands; o++) {
    const Operand *operand = &C->operands[o];
    if (operand->tensor != t)
      continue;
    if (operand->guarded || operand->shape_only)
      return false;
    if (cheap)
      continue;
    /* a padded copy (P reads guarded) stays before a reduction: inlined into
     * a pooling or depthwise window, whose reads move with every dim, its
     * guard returned to the window's inner loop and kept gcc scalar there
     * (ResNet-18's 3 x 3 max pool: 4.3 ms of CPU, about 5 % of the network) */
    if (reads_guarded(P))
      for (int d = 0; d < C->ndims; d++)
        if (C->dims[d].kind == ITER_REDUCTION)
          return false;
    for (int d = 0; d < C->ndims; d++) { /* every dim of C must move the read: no reuse */
      bool used = false;
      for (int i = 0; i < k->tensors[t].rank && !used; i++)
        used = affine_uses_dim(operand->map[i], d);
      if (!used)
        return false;
    }
  }
  /* P's inputs must hold the same values when C runs: nothing in between
   * (C included) may write them */
  for (int o = 0; o < P->noperands; o++)
    if (written_between(f, root_of(k, P->operands[o].tensor), p, c + 1))
      return false;
  return true;
}

static void *heap_array(size_t size, int n) {
  void *p = xmalloc(size * (size_t)(n > 0 ? n : 1));
  memset(p, 0, size * (size_t)(n > 0 ? n : 1));
  return p;
}

/* Not zeroed: for an array whose elements are each written whole before
 * they are read, up to a count kept beside it (an op's nodes and
 * operands: zeroing their room was 4% of a 10,000-node chain's run). */
static void *heap_array_unzeroed(size_t size, int n) { return xmalloc(size * (size_t)(n > 0 ? n : 1)); }

/* Frees op i's heap arrays (which its StructuredOp may still point at). */
static void heap_release(Fuser *f, int i) {
  free(f->heap[i].nodes);
  free(f->heap[i].operands);
  free(f->heap[i].dims);
  free(f->heap[i].yields);
  f->heap[i] = (struct HeapArrays){NULL, NULL, NULL, NULL};
}

/* op's arrays and origin copied into the arena (its init's and
 * epilogue's too): the heap ones are freed when fusion ends, and so is the
 * scratch arena of origins (Fuser.origins). */
static void settle(Arena *a, StructuredOp *op) {
  if (op->origin)
    op->origin = arena_strdup(a, op->origin);
  Dim *dims = arena_alloc(a, sizeof(Dim) * (size_t)(op->ndims + 1));
  memcpy(dims, op->dims, sizeof(Dim) * (size_t)op->ndims);
  Operand *operands = arena_alloc(a, sizeof(Operand) * (size_t)(op->noperands + 1));
  memcpy(operands, op->operands, sizeof(Operand) * (size_t)op->noperands);
  PayloadNode *nodes = arena_alloc(a, sizeof(PayloadNode) * (size_t)(op->nnodes + 1));
  memcpy(nodes, op->nodes, sizeof(PayloadNode) * (size_t)op->nnodes);
  Yield *yields = arena_alloc(a, sizeof(Yield) * (size_t)(op->nyields + 1));
  memcpy(yields, op->yields, sizeof(Yield) * (size_t)op->nyields);
  op->dims = dims;
  op->operands = operands;
  op->nodes = nodes;
  op->yields = yields;
  if (op->init) {
    StructuredOp *init = arena_alloc(a, sizeof *init);
    *init = *op->init;
    settle(a, init);
    op->init = init;
  }
  if (op->epilogue) {
    StructuredOp *epilogue = arena_alloc(a, sizeof *epilogue);
    *epilogue = *op->epilogue;
    settle(a, epilogue);
    op->epilogue = epilogue;
  }
}

static bool same_operand(const Kernel *k, const Operand *a, const Operand *b) {
  if (a->tensor != b->tensor || a->guarded != b->guarded || a->shape_only != b->shape_only ||
      (a->guarded && a->pad_value != b->pad_value))
    return false;
  for (int i = 0; i < k->tensors[a->tensor].rank; i++)
    if (!affine_equal(a->map[i], b->map[i]))
      return false;
  return true;
}

/* Appends an operand to a list being built, reusing an identical one. */
static int add_operand(const Kernel *k, Operand *list, int *n, Operand o) {
  for (int i = 0; i < *n; i++)
    if (same_operand(k, &list[i], &o))
      return i;
  list[*n] = o;
  return (*n)++;
}

/* The graph nodes an op computes once b's are in it (StructuredOp.origin):
 * "a + b", and what b became in parentheses (NULL: inlined). */
static const char *joined_origin(Arena *arena, const char *a, const char *b, const char *how) {
  if (!b)
    return a;
  if (!a)
    return b;
  StrBuf sb = {0}, part = {0};
  sb_puts(&sb, a);
  bool added = false;
  for (const char *p = b; *p;) { /* b's nodes that a does not name yet */
    const char *end = strstr(p, " + ");
    size_t n = end ? (size_t)(end - p) : strlen(p);
    part.len = 0;
    sb_putn(&part, p, n);
    char *paren = strstr(part.data, " (");
    if (paren)
      *paren = '\0';
    if (!strstr(sb_cstr(&sb), part.data)) {
      sb_printf(&sb, " + %s", part.data);
      added = true;
    }
    p += n + (end ? 3 : 0);
  }
  if (added && how)
    sb_printf(&sb, " (%s)", how);
  const char *s = arena_strdup(arena, sb_cstr(&sb));
  sb_free(&sb);
  sb_free(&part);
  return s;
}

/* ---- common subexpressions ----
 * Inlining copies P's payload at every read of T, so an op that reads T
 * twice (x * x, or a diamond's two branches merged into one op) would
 * compute P twice. Identical nodes (kind, type, op, constant, operand,
 * arguments) become one; the C writer computes a node used twice once, in
 * a temporary. Reads of one operand are one value: an op computes every
 * value before it stores any. */

static bool same_node(const PayloadNode *a, const PayloadNode *b) {
  if (a->kind != b->kind || a->type != b->type || a->nargs != b->nargs)
    return false;
  for (int i = 0; i < a->nargs; i++)
    if (a->args[i] != b->args[i])
      return false;
  switch (a->kind) {
  case PN_READ:
    return a->operand == b->operand;
  case PN_OP:
    return a->op == b->op;
  case PN_INDEX:
    return a->dim == b->dim;
  case PN_SIZE:
    return a->size == b->size;
  default: /* bit-identical constants (a NaN is equal to itself, -0.0 is not 0.0) */
    return memcmp(&a->fvalue, &b->fvalue, sizeof a->fvalue) == 0 && a->ivalue == b->ivalue;
  }
}

/* A hash of what same_node compares, so that equal nodes hash equal. */
static uint64_t node_hash(const PayloadNode *x) {
  uint64_t h = 1469598103934665603u;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211u)
  MIX(x->kind);
  MIX(x->type);
  MIX(x->nargs);
  for (int i = 0; i < x->nargs; i++)
    MIX(x->args[i]);
  switch (x->kind) {
  case PN_READ: MIX(x->operand); break;
  case PN_OP: MIX(x->op); break;
  case PN_INDEX: MIX(x->dim); break;
  case PN_SIZE: MIX(x->size); break;
  default: {
    uint64_t bits;
    memcpy(&bits, &x->fvalue, sizeof bits);
    MIX(bits);
    MIX(x->ivalue);
  }
  }
#undef MIX
  return h;
}

/* In place: op's nodes and yields are inline_into's fresh heap arrays, and
 * compacting only moves a node down (n <= i), after it was read. A hash
 * table finds an earlier equal node: a chain fused step by step rewrites
 * its payload once per op, so a search over all earlier nodes made long
 * chains quadratic. */
static void share_common_nodes(StructuredOp *op) {
  int *map = heap_array(sizeof(int), op->nnodes);
  size_t slots = 16;
  while (slots < 2 * (size_t)op->nnodes)
    slots *= 2;
  int *table = heap_array(sizeof(int), (int)slots); /* zeroed; kept node index + 1, 0: empty */
  PayloadNode *nodes = op->nodes;
  int n = 0;
  for (int i = 0; i < op->nnodes; i++) {
    PayloadNode x = op->nodes[i];
    for (int j = 0; j < x.nargs; j++)
      x.args[j] = map[x.args[j]];
    size_t at = (size_t)node_hash(&x) & (slots - 1);
    while (table[at] && !same_node(&nodes[table[at] - 1], &x))
      at = (at + 1) & (slots - 1);
    if (table[at]) {
      map[i] = table[at] - 1;
    } else {
      map[i] = n;
      nodes[n++] = x;
      table[at] = n;
    }
  }
  for (int y = 0; y < op->nyields; y++)
    op->yields[y].value = map[op->yields[y].value];
  op->nnodes = n;
  free(map);
  free(table);
}

/* Rewrites consumer C so that every read of t computes P's payload instead.
 * keep: C also stores that value to t, where it read it (C's first yield):
 * t is written once, by C, and not read back. */
static void inline_into(Fuser *f, const StructuredOp *P, int c, int t, const int *pos_of_dim, bool keep) {
  const Kernel *k = f->k;
  StructuredOp *C = &f->k->ops[c];
  Arena *a = f->arena; /* for the composed maps; the arrays are on the heap (Fuser.heap) */
  /* sized for what the rewrite makes: each read of t becomes P's nodes
   * (and P's operands); a chain inlined step by step is rewritten once per
   * op, so room for more would grow with the chain */
  int reads = 0;
  for (int n = 0; n < C->nnodes; n++)
    reads += C->nodes[n].kind == PN_READ && C->operands[C->nodes[n].operand].tensor == t;
  int max_operands = C->noperands + P->noperands * reads + 2; /* + keep's */
  Operand *operands = heap_array_unzeroed(sizeof(Operand), max_operands);
  int noperands = 0;
  int *operand_map = heap_array(sizeof(int), C->noperands);
  for (int o = 0; o < C->noperands; o++) {
    bool written = false; /* C rewriting t in place (an epilogue composed before it) keeps its write */
    for (int y = 0; y < C->nyields; y++)
      written |= C->yields[y].operand == o;
    operand_map[o] = C->operands[o].tensor == t && !written ? -1 : add_operand(k, operands, &noperands, C->operands[o]);
  }

  int max_nodes = C->nnodes + P->nnodes * reads + 1, kept_value = -1, kept_operand = -1;
  PayloadNode *nodes = heap_array_unzeroed(sizeof(PayloadNode), max_nodes);
  int nnodes = 0;
  int *node_map = heap_array(sizeof(int), C->nnodes);
  int *p_node_map = heap_array(sizeof(int), P->nnodes);
  AffineExpr **dim_values = heap_array(sizeof(AffineExpr *), P->ndims + 1);
  for (int n = 0; n < C->nnodes; n++) {
    PayloadNode x = C->nodes[n];
    if (x.kind == PN_READ && C->operands[x.operand].tensor == t) {
      const Operand *read = &C->operands[x.operand];
      for (int d = 0; d < P->ndims; d++)
        dim_values[d] = read->map[pos_of_dim[d]];
      for (int j = 0; j < P->nnodes; j++) {
        PayloadNode y = P->nodes[j];
        if (y.kind == PN_READ) {
          Operand composed = P->operands[y.operand];
          int rank = k->tensors[composed.tensor].rank;
          composed.map = arena_alloc(a, sizeof(AffineExpr *) * (size_t)(rank + 1));
          for (int i = 0; i < rank; i++)
            composed.map[i] = affine_subst_dims(a, P->operands[y.operand].map[i], dim_values);
          composed.index_locs = NULL;
          y.operand = add_operand(k, operands, &noperands, composed);
        }
        for (int i = 0; i < y.nargs; i++)
          y.args[i] = p_node_map[y.args[i]];
        p_node_map[j] = nnodes;
        nodes[nnodes++] = y;
      }
      node_map[n] = p_node_map[P->yields[0].value];
      if (keep && kept_value < 0) {
        kept_value = node_map[n];
        kept_operand = add_operand(k, operands, &noperands, *read);
      }
      continue;
    }
    if (x.kind == PN_READ)
      x.operand = operand_map[x.operand];
    for (int i = 0; i < x.nargs; i++)
      x.args[i] = node_map[x.args[i]];
    node_map[n] = nnodes;
    nodes[nnodes++] = x;
  }
  int nyields = 0;
  Yield *yields = heap_array(sizeof(Yield), C->nyields + 1);
  if (kept_value >= 0)
    yields[nyields++] = (Yield){kept_operand, kept_value};
  for (int y = 0; y < C->nyields; y++) {
    yields[nyields].operand = operand_map[C->yields[y].operand];
    yields[nyields++].value = node_map[C->yields[y].value];
  }
  Dim *dims = heap_array(sizeof(Dim), C->ndims + 1);
  memcpy(dims, C->dims, sizeof(Dim) * (size_t)C->ndims);
  for (int d = 0; d < C->ndims; d++)
    if (dims[d].extent_operand >= 0)
      dims[d].extent_operand = operand_map[dims[d].extent_operand];
  free(operand_map);
  free(node_map);
  free(p_node_map);
  free(dim_values);
  heap_release(f, c); /* C's previous arrays: read above, referenced by nothing else (see Fuser.heap) */
  f->heap[c] = (struct HeapArrays){nodes, operands, dims, yields};
  C->dims = dims;
  C->operands = operands;
  C->noperands = noperands;
  C->nodes = nodes;
  C->nnodes = nnodes;
  C->yields = yields;
  C->nyields = nyields;
  share_common_nodes(C);
  /* preconditions speak of the old operands; graph ops have none */
  C->npre = 0;
  C->origin = joined_origin(f->origins, P->origin, C->origin, NULL);
  C->pre = NULL;
}

static const char *op_label(const Kernel *k, const StructuredOp *op) {
  if (op->ext)
    return k->tensors[op->ext->tensors[op->ext->ninputs]].name;
  if (op->nyields == 0)
    return "?";
  return k->tensors[op->operands[op->yields[0].operand].tensor].name;
}

/* The schedule file's override for tensor t, or NULL; marks it used. */
static const FuseOverride *override_of(Fuser *f, int t) {
  for (int i = 0; i < f->opt->noverrides; i++)
    if (strcmp(f->opt->overrides[i].tensor, f->k->tensors[t].name) == 0) {
      f->used[i] = true;
      return &f->opt->overrides[i];
    }
  return NULL;
}

static bool merge_branches(Fuser *f, int p, int t);

/* P's streamed reads: operands read at a new element for every point of
 * P's domain (every dim of extent above 1 moves the read), as opposed to
 * broadcast ones (a bias row) that stay in cache. Memory traffic is what a
 * pointwise op costs, and these are its traffic. */
static int streamed_reads(const Kernel *k, const StructuredOp *P) {
  const Operand *out = &P->operands[P->yields[0].operand];
  int n = 0;
  for (int o = 0; o < P->noperands; o++) {
    const Operand *x = &P->operands[o];
    if (x == out || x->shape_only)
      continue;
    bool moves = true;
    for (int d = 0; d < P->ndims && moves; d++) {
      const AffineExpr *e = P->dims[d].extent;
      if (e && e->kind == AE_CONST && e->value <= 1)
        continue;
      bool used = false;
      for (int i = 0; i < k->tensors[x->tensor].rank && !used; i++)
        used = affine_uses_dim(x->map[i], d);
      moves = used;
    }
    n += moves;
  }
  return n;
}

/* Whether recomputing P in each of its n readers moves fewer bytes than
 * storing it once: inlined, every reader streams P's r inputs (n * r
 * passes); kept, P streams them once, writes its output and each reader
 * reads that (r + 1 + n). Without this test a residual stream (each
 * layer's x + f(x) read by a LayerNorm's three ops and by the next
 * residual add) was inlined into every reader, layer after layer, so the
 * last layer's ops recomputed all the earlier adds: ViT-Ti's 12 layers
 * read up to 39 tensors per element, 12 % of its run time. */
static bool recompute_pays(int nreaders, int r) {
  return nreaders <= 1 || nreaders * r <= r + 1 + nreaders;
}

static void try_inline(Fuser *f, int p) {
  Kernel *k = f->k;
  int pos_of_dim[LG_MAX_DIMS];
  /* a payload that reads a loop index keeps its own domain: fused into
   * another op, its dims would be renamed (left for later) */
  if (op_reads_index(&k->ops[p], -1))
    return;
  int t = inlinable_output(f, p, pos_of_dim);
  if (t < 0)
    return;
  const FuseOverride *o = override_of(f, t);
  if (o && !o->inline_it) {
    vec_push(f->arena, &f->report->decisions,
             arena_printf(f->arena, "keep '%s' (the schedule file says so)", k->tensors[t].name));
    return;
  }
  /* an override to inline treats the producer as cheap: it may recompute */
  bool cheap = o || is_cheap(k, &k->ops[p]);
  if (!cheap) /* a diamond: its branches become one op, which computes P once */
    merge_branches(f, p, t);
  int consumers = 0;
  int ntouch = ops_in(f, &f->touch[root_of(k, t)], p, k->nops);
  int *readers = arena_alloc(f->arena, sizeof(int) * (size_t)(ntouch + 1)), nreaders = 0;
  for (int i = 0; i < ntouch; i++)
    if (op_reads(&k->ops[f->sorted[i]], t))
      readers[nreaders++] = f->sorted[i];
  for (int i = 0; i < nreaders; i++) {
    int c = readers[i];
    if (!consumer_accepts(f, p, c, t, cheap)) {
      if (o)
        diag_warning(f->diag, o->loc, "'%s' cannot be inlined into the op writing '%s' (a padded read, a write of "
                     "it, or a payload too large); it stays in the workspace", k->tensors[t].name,
                     op_label(k, &k->ops[c]));
      return;
    }
    consumers++;
  }
  if (consumers == 0) /* a dead value: lowering keeps only what is used, so leave it */
    return;
  int streamed = cheap ? 0 : streamed_reads(k, &k->ops[p]);
  if (!cheap && !recompute_pays(nreaders, streamed)) {
    vec_push(f->arena, &f->report->decisions,
             arena_printf(f->arena, "keep '%s': its %d readers would each recompute its %d streamed reads",
                          k->tensors[t].name, nreaders, streamed));
    return;
  }
  for (int i = 0; i < nreaders; i++) {
    int c = readers[i];
    vec_push(f->arena, &f->report->decisions,
             arena_printf(f->arena, "inline '%s' into the op writing '%s'", k->tensors[t].name,
                          op_label(k, &k->ops[c])));
    inline_into(f, &k->ops[p], c, t, pos_of_dim, false);
    index_op(f, c);
  }
  f->removed[p] = true;
  heap_release(f, p); /* its payload now lives in its consumers */
}

/* ---- epilogues ----
 *
 * A reduction (a matmul, a conv, a row sum) P writes T, and T's one reader
 * is a pointwise op C that reads it at the point P writes (a bias add, an
 * activation, a residual add, a scale). C then becomes P's epilogue: P
 * applies it to each output point once that point's reductions are done,
 * in registers, before the one store (emit/c_loops.c), so T is never
 * written and read back. C's output U takes T's place: P and the ops that
 * initialise T write U instead, and the epilogue rewrites U in place. C may
 * also rewrite T in place (a mean's division), and when P has an epilogue
 * already, C reads its result: C is composed after it (the old epilogue is
 * inlined into C, as inlining does between ops). Inlining runs first, so an
 * elementwise chain after P is one C by then. */

/* The output of a reduction op with one output: written at bare distinct
 * dims that are exactly its parallel dims (one output point per point of
 * them) and at 0 where T's extent is 1 (a reduction's kept dims), and read
 * only there, as the accumulator; out_pos[d] = the position of T that dim
 * d indexes. -1 if the op is no such reduction. */
static int accumulated_output(const Kernel *k, const StructuredOp *op, int *out_pos) {
  if (op->nyields != 1 || op->ndims > LG_MAX_DIMS)
    return -1;
  int parallel = 0;
  for (int d = 0; d < op->ndims; d++) {
    parallel += op->dims[d].kind == ITER_PARALLEL;
    out_pos[d] = -1;
  }
  const Operand *out = &op->operands[op->yields[0].operand];
  int t = out->tensor;
  const TensorParam *T = &k->tensors[t];
  if (parallel == op->ndims)
    return -1;
  int seen = 0;
  for (int i = 0; i < T->rank; i++) {
    const AffineExpr *m = out->map[i];
    if (m->kind == AE_CONST && m->value == 0 && T->shape[i]->kind == AE_CONST && T->shape[i]->value == 1)
      continue;
    if (m->kind != AE_DIM || op->dims[m->index].kind != ITER_PARALLEL || out_pos[m->index] >= 0)
      return -1;
    out_pos[m->index] = i;
    seen++;
  }
  if (seen != parallel)
    return -1;
  for (int o = 0; o < op->noperands; o++) /* the accumulator is read where it is written */
    for (int i = 0; i < T->rank && op->operands[o].tensor == t; i++)
      if (!affine_equal(op->operands[o].map[i], out->map[i]) || op->operands[o].guarded)
        return -1;
  return t;
}

/* Whether op c is pointwise over T: all dims parallel, one output U
 * written where it reads T (U may be T: in place), and every read of T one
 * permutation of its dims; U gets T's shape and type. Sets *u. */
static bool pointwise_over(const Kernel *k, const StructuredOp *C, int t, int *u) {
  const TensorParam *T = &k->tensors[t];
  if (C->nyields != 1 || C->epilogue || C->init || C->ndims != T->rank)
    return false;
  for (int d = 0; d < C->ndims; d++)
    if (C->dims[d].kind != ITER_PARALLEL)
      return false;
  const Operand *out = &C->operands[C->yields[0].operand];
  const TensorParam *U = &k->tensors[out->tensor];
  if (U->type != T->type || U->rank != T->rank ||
      !(U->storage == TS_WORKSPACE || (U->storage == TS_PARAM && U->is_output)) ||
      (out->tensor != t && op_reads(C, out->tensor)))
    return false;
  bool seen[LG_MAX_DIMS] = {false};
  for (int i = 0; i < T->rank; i++) {
    const AffineExpr *m = out->map[i];
    if (m->kind != AE_DIM || seen[m->index] || !affine_equal(U->shape[i], T->shape[i]))
      return false;
    seen[m->index] = true;
  }
  for (int o = 0; o < C->noperands; o++) {
    const Operand *x = &C->operands[o];
    if (x->tensor != t)
      continue;
    if (x->guarded || x->shape_only)
      return false;
    for (int i = 0; i < T->rank; i++)
      if (!affine_equal(x->map[i], out->map[i]))
        return false;
  }
  *u = out->tensor;
  return true;
}

static Operand *renamed_operands(Fuser *f, const StructuredOp *op, int from, int to) {
  Operand *operands = arena_alloc(f->arena, sizeof(Operand) * (size_t)(op->noperands + 1));
  memcpy(operands, op->operands, sizeof(Operand) * (size_t)op->noperands);
  for (int o = 0; o < op->noperands; o++)
    if (operands[o].tensor == from)
      operands[o].tensor = to;
  return operands;
}

/* The op that can take P's result T as an epilogue's input: T's first
 * reader after P, which must be its only reader, or rewrite T in place
 * (later readers then see what P with the epilogue stores). -1: none. */
static int sole_reader(Fuser *f, int p, int t) {
  int c = -1;
  int n = ops_in(f, &f->touch[root_of(f->k, t)], -1, f->k->nops);
  for (int i = 0; i < n; i++) {
    int q = f->sorted[i];
    if (q == p)
      continue;
    const StructuredOp *Q = &f->k->ops[q];
    if (op_reads(Q, t)) {
      if (q < p)
        return -1;
      if (c >= 0) {
        const StructuredOp *C = &f->k->ops[c];
        return op_writes(C, t) && C->nyields == 1 ? c : -1;
      }
      c = q;
    } else if (q > p && op_writes(Q, t)) {
      return c >= 0 && op_writes(&f->k->ops[c], t) ? c : -1;
    }
  }
  return c;
}

static bool try_epilogue(Fuser *f, int p) {
  Kernel *k = f->k;
  int out_pos[LG_MAX_DIMS];
  int t = accumulated_output(k, &k->ops[p], out_pos);
  if (t < 0)
    return false;
  int c = sole_reader(f, p, t), u = -1;
  if (c < 0 || !pointwise_over(k, &k->ops[c], t, &u) || op_reads_index(&k->ops[p], -1) ||
      op_reads_index(&k->ops[c], -1))
    return false;
  bool in_place = u == t;
  const StructuredOp *P = &k->ops[p], *C = &k->ops[c], *old = P->epilogue;
  /* T vanishes unless C rewrites it in place: then nothing else may see it */
  if (!in_place && (k->tensors[t].storage != TS_WORKSPACE || has_alias(f, t)))
    return false;
  if (old && old->nnodes + C->nnodes > MAX_FUSED_NODES)
    return false;
  const OpList *uw = &f->write[root_of(k, u)];
  for (int i = 0; i < uw->len && !in_place; i++) { /* U has one writer, C */
    int q = uw->items[i];
    if (q != c && !f->removed[q] && op_writes(&k->ops[q], u))
      return false;
  }
  /* the epilogue runs when P does: C's inputs must hold their values by
   * then, and nothing in between may look at U's memory */
  if (touched_between(f, root_of(k, u), p, c))
    return false;
  for (int o = 0; o < C->noperands; o++)
    if (C->operands[o].tensor != t && written_any_between(f, root_of(k, C->operands[o].tensor), p, c))
      return false;
  const FuseOverride *o = override_of(f, t);
  if (o && !o->inline_it && !in_place) {
    vec_push(f->arena, &f->report->decisions,
             arena_printf(f->arena, "keep '%s' (the schedule file says so)", k->tensors[t].name));
    return false;
  }
  const Operand *c_out = &C->operands[C->yields[0].operand];
  if (old) { /* C computes C(old(T)): the old epilogue writes T in place at C's read point */
    int pos_of_dim[LG_MAX_DIMS];
    const Operand *old_out = &old->operands[old->yields[0].operand];
    for (int i = 0; i < k->tensors[t].rank; i++)
      pos_of_dim[old_out->map[i]->index] = i;
    inline_into(f, old, c, t, pos_of_dim, false);
    C = &k->ops[c];
    c_out = &C->operands[C->yields[0].operand];
  }
  StructuredOp *E = arena_alloc(f->arena, sizeof *E);
  *E = *C;
  E->operands = renamed_operands(f, C, t, u);
  E->npre = 0;
  E->pre = NULL;
  int *dims = arena_alloc(f->arena, sizeof(int) * (size_t)(E->ndims + 1));
  for (int j = 0; j < E->ndims; j++)
    dims[j] = -1; /* at T's unit positions: the point 0 */
  for (int d = 0; d < P->ndims; d++)
    if (out_pos[d] >= 0)
      dims[c_out->map[out_pos[d]]->index] = d;
  int nw = in_place ? 0 : ops_in(f, &f->write[root_of(k, t)], -1, p + 1);
  for (int i = 0; i < nw; i++) {
    int q = f->sorted[i];
    if (op_writes(&k->ops[q], t)) {
      k->ops[q].operands = renamed_operands(f, &k->ops[q], t, u);
      index_op(f, q);
    }
  }
  k->ops[p].epilogue = E;
  k->ops[p].epilogue_dims = dims;
  k->ops[p].origin = joined_origin(f->origins, P->origin, C->origin, "epilogue");
  index_op(f, p);
  f->removed[c] = true;
  const char *what = old ? "is applied after the epilogue of" : "is applied in";
  if (in_place)
    vec_push(f->arena, &f->report->decisions,
             arena_printf(f->arena, "epilogue: the op rewriting '%s' in place %s the op writing it, before its store",
                          k->tensors[t].name, what));
  else
    vec_push(f->arena, &f->report->decisions,
             arena_printf(f->arena, "epilogue: the op writing '%s' %s the op writing '%s' before its store; '%s' is "
                          "not kept (the op writes '%s' directly)",
                          k->tensors[u].name, what, k->tensors[t].name, k->tensors[t].name, k->tensors[u].name));
  return true;
}

/* ---- inits ----
 *
 * A reduction's output is first filled with the reduction's identity (or a
 * conv's bias, broadcast) by a pointwise op Q that reads nothing of it. Q
 * becomes P's init: P starts each output point's accumulators from Q's
 * payload instead of loading what Q stored (emit/c_loops.c), so the fill
 * pass, and in a graph's parallel region its barrier, are gone. */
static void try_init(Fuser *f, int p) {
  Kernel *k = f->k;
  StructuredOp *P = &k->ops[p];
  int out_pos[LG_MAX_DIMS];
  int t = P->init || op_reads_index(P, -1) ? -1 : accumulated_output(k, P, out_pos);
  if (t < 0)
    return;
  int q = -1; /* the last op before P that touches T's memory */
  for (int i = ops_in(f, &f->touch[root_of(k, t)], -1, p) - 1; i >= 0 && q < 0; i--) {
    const StructuredOp *Q = &k->ops[f->sorted[i]];
    for (int o = 0; o < op_all_operands(Q) && q < 0; o++)
      if (root_of(k, op_operand_at(Q, o)->tensor) == root_of(k, t))
        q = f->sorted[i];
  }
  if (q < 0 || op_reads_index(&k->ops[q], -1))
    return;
  const StructuredOp *Q = &k->ops[q];
  const TensorParam *T = &k->tensors[t];
  if (Q->nyields != 1 || Q->init || Q->epilogue || Q->ndims != T->rank || op_reads(Q, t))
    return;
  const Operand *w = &Q->operands[Q->yields[0].operand];
  if (w->tensor != t)
    return;
  for (int o = 0; o < Q->noperands; o++)
    if (root_of(k, Q->operands[o].tensor) == root_of(k, t) && Q->operands[o].tensor != t)
      return;
  bool seen[LG_MAX_DIMS] = {false};
  for (int i = 0; i < T->rank; i++) { /* Q writes all of T, each element once */
    const AffineExpr *m = w->map[i];
    if (m->kind != AE_DIM || seen[m->index] || Q->dims[m->index].kind != ITER_PARALLEL ||
        !affine_equal(Q->dims[m->index].extent, T->shape[i]))
      return;
    seen[m->index] = true;
  }
  /* Q's inputs must hold their values when P runs */
  for (int o = 0; o < Q->noperands; o++)
    if (written_any_between(f, root_of(k, Q->operands[o].tensor), q, p))
      return;
  int *dims = arena_alloc(f->arena, sizeof(int) * (size_t)(Q->ndims + 1));
  const Operand *out = &P->operands[P->yields[0].operand];
  for (int i = 0; i < T->rank; i++)
    dims[w->map[i]->index] = out->map[i]->kind == AE_DIM ? out->map[i]->index : -1;
  StructuredOp *init = arena_alloc(f->arena, sizeof *init);
  *init = *Q;
  init->npre = 0;
  init->pre = NULL;
  P->init = init;
  P->origin = joined_origin(f->origins, P->origin, Q->origin, "init");
  P->init_dims = dims;
  index_op(f, p);
  f->removed[q] = true;
  vec_push(f->arena, &f->report->decisions,
           arena_printf(f->arena, "init: the op writing '%s' starts its accumulators from the op that filled it",
                        k->tensors[t].name));
}

/* ---- sibling reductions ----
 *
 * Two reductions P (earlier) and Q that read the same tensor X over the
 * same iteration domain become one op with two yields, so X is read once:
 * the E[x] and E[x^2] of a variance, or a row's sum and sum of squares.
 * Q's dims are matched to P's through the maps of their reads of X (a bare
 * dim at the same position of X is the same dim), and must then agree in
 * kind and extent. Q's operands, payload and yield are appended to P's
 * (an identical read of X becomes one operand), and Q's init and epilogue
 * are appended to P's the same way, matched through their dims' maps to
 * the op's dims. Q's work moves to P's place, so nothing in between may
 * write what Q reads or touch what it writes, and neither may read the
 * other's result.
 *
 * Merged only where it does not lose: every yield must be a float sum or
 * product (one simd loop reduces them all, one clause per accumulator), or
 * every yield a max or min (whose float form has no simd reduction, alone
 * or merged). A sum beside a max would take the sum's vectorisation away:
 * measured slower than two passes, so they stay apart. The ops need a
 * parallel dim (a reduction to a scalar is split across threads, one
 * accumulator only), and the shared read's innermost index must be a
 * reduction dim: row reductions, whose plain schedule vectorises the
 * reduction loop; a reduction across rows gets auto's register-blocked
 * schedule for one output, which the merged op would not. */

/* 1: a float (not f16) sum or product; 2: a max or min; 0: neither. */
static int combine_class(const StructuredOp *op, int y) {
  StructuredOp view = *op;
  view.nyields = 1;
  view.yields = &op->yields[y];
  int x;
  Combiner c = match_reduction(&view, 0, &x);
  ElemType t = op->nodes[op->yields[y].value].type;
  if ((c == COMBINE_ADD || c == COMBINE_MUL) && elem_type_is_float(t) && t != TY_F16)
    return 1;
  return c == COMBINE_MAX || c == COMBINE_MIN ? 2 : 0;
}

/* Whether yield y of op accumulates into its output (accumulated_output). */
static bool accumulates(const Kernel *k, const StructuredOp *op, int y) {
  StructuredOp view = *op;
  view.nyields = 1;
  view.yields = &op->yields[y];
  int out_pos[LG_MAX_DIMS];
  return accumulated_output(k, &view, out_pos) >= 0;
}

/* Q's dims as P's (pi), matched through a read of one tensor by both; the
 * tensor, or -1. */
static int shared_read(const Kernel *k, const StructuredOp *P, const StructuredOp *Q, int *pi) {
  for (int oq = 0; oq < Q->noperands; oq++) {
    const Operand *a = &Q->operands[oq];
    if (a->shape_only || a->guarded || op_writes(Q, a->tensor) || op_writes(P, a->tensor))
      continue;
    const TensorParam *X = &k->tensors[a->tensor];
    for (int op_ = 0; op_ < P->noperands; op_++) {
      const Operand *b = &P->operands[op_];
      if (b->tensor != a->tensor || b->shape_only || b->guarded || X->rank == 0)
        continue;
      for (int d = 0; d < Q->ndims; d++)
        pi[d] = -1;
      bool ok = true;
      for (int i = 0; i < X->rank && ok; i++) {
        const AffineExpr *ma = a->map[i], *mb = b->map[i];
        if (ma->kind != AE_DIM || mb->kind != AE_DIM)
          ok = affine_equal(ma, mb) && !affine_has_dims(ma);
        else if (pi[ma->index] < 0 || pi[ma->index] == mb->index)
          pi[ma->index] = mb->index;
        else
          ok = false;
      }
      /* the innermost index of X: a reduction dim (a row reduction) */
      const AffineExpr *inner = b->map[X->rank - 1];
      ok = ok && inner->kind == AE_DIM && P->dims[inner->index].kind == ITER_REDUCTION;
      bool used[LG_MAX_DIMS] = {false};
      for (int d = 0; d < Q->ndims && ok; d++) {
        ok = pi[d] >= 0 && !used[pi[d]] && Q->dims[d].kind == P->dims[pi[d]].kind &&
             affine_equal(Q->dims[d].extent, P->dims[pi[d]].extent);
        if (ok)
          used[pi[d]] = true;
      }
      if (ok)
        return a->tensor;
    }
  }
  return -1;
}

/* A's operands, payload and yields, then B's with B's dim d read as
 * dim_values[d]: the op that computes both (A's dims). */
static StructuredOp *appended(Fuser *f, const StructuredOp *A, const StructuredOp *B, AffineExpr **dim_values) {
  const Kernel *k = f->k;
  Arena *a = f->arena;
  StructuredOp *M = arena_alloc(a, sizeof *M);
  *M = *A;
  Operand *operands = arena_alloc(a, sizeof(Operand) * (size_t)(A->noperands + B->noperands + 1));
  int noperands = 0;
  for (int o = 0; o < A->noperands; o++)
    operands[noperands++] = A->operands[o];
  int *operand_map = arena_alloc(a, sizeof(int) * (size_t)(B->noperands + 1));
  for (int o = 0; o < B->noperands; o++) {
    Operand x = B->operands[o];
    int rank = k->tensors[x.tensor].rank;
    x.map = arena_alloc(a, sizeof(AffineExpr *) * (size_t)(rank + 1));
    for (int i = 0; i < rank; i++)
      x.map[i] = affine_subst_dims(a, B->operands[o].map[i], dim_values);
    x.index_locs = NULL;
    operand_map[o] = add_operand(k, operands, &noperands, x);
  }
  PayloadNode *nodes = arena_alloc(a, sizeof(PayloadNode) * (size_t)(A->nnodes + B->nnodes + 1));
  memcpy(nodes, A->nodes, sizeof(PayloadNode) * (size_t)A->nnodes);
  for (int n = 0; n < B->nnodes; n++) {
    PayloadNode x = B->nodes[n];
    if (x.kind == PN_READ)
      x.operand = operand_map[x.operand];
    for (int i = 0; i < x.nargs; i++)
      x.args[i] += A->nnodes;
    nodes[A->nnodes + n] = x;
  }
  Yield *yields = arena_alloc(a, sizeof(Yield) * (size_t)(A->nyields + B->nyields + 1));
  memcpy(yields, A->yields, sizeof(Yield) * (size_t)A->nyields);
  for (int y = 0; y < B->nyields; y++)
    yields[A->nyields + y] = (Yield){operand_map[B->yields[y].operand], B->yields[y].value + A->nnodes};
  M->operands = operands;
  M->noperands = noperands;
  M->nodes = nodes;
  M->nnodes = A->nnodes + B->nnodes;
  M->yields = yields;
  M->nyields = A->nyields + B->nyields;
  M->npre = 0;
  M->pre = NULL;
  return M;
}

/* P's attached op EP (dims ep_dims) and Q's EQ as one, through pi (Q's dim
 * -> P's dim): *merged and *merged_dims, NULL when neither has one. An
 * epilogue on one side only is kept as it is (the other result is stored
 * as the op computes it); an init must be on both sides (the other's fill
 * would otherwise run before the merged op reads it, which can_move_up
 * refuses anyway). EQ's unit dims (where Q writes index 0) become one
 * unit dim of EP's, added if EP has none. False: they do not match. */
static bool merge_attached(Fuser *f, const StructuredOp *EP, const int *ep_dims, const StructuredOp *EQ,
                           const int *eq_dims, const int *pi, bool one_sided, const StructuredOp **merged,
                           const int **merged_dims) {
  *merged = EP;
  *merged_dims = ep_dims;
  if (!EQ)
    return true;
  if (EQ->ext || (EP && EP->ext))
    return false;
  if (!EP) {
    if (!one_sided)
      return false;
    int *dims = arena_alloc(f->arena, sizeof(int) * (size_t)(EQ->ndims + 1));
    for (int j = 0; j < EQ->ndims; j++)
      dims[j] = eq_dims[j] < 0 ? -1 : pi[eq_dims[j]];
    *merged = EQ;
    *merged_dims = dims;
    return true;
  }
  if (EP->nnodes + EQ->nnodes > MAX_FUSED_NODES || EP->ndims >= LG_MAX_DIMS)
    return false;
  int unit = -1;
  for (int i = 0; i < EP->ndims && unit < 0; i++)
    if (ep_dims[i] < 0)
      unit = i;
  bool add_unit = false;
  AffineExpr **values = arena_alloc(f->arena, sizeof(AffineExpr *) * (size_t)(EQ->ndims + 1));
  for (int j = 0; j < EQ->ndims; j++) {
    values[j] = NULL;
    if (eq_dims[j] < 0) {
      add_unit |= unit < 0;
      values[j] = affine_leaf(f->arena, AE_DIM, unit < 0 ? EP->ndims : unit, 0);
      continue;
    }
    for (int i = 0; i < EP->ndims && !values[j]; i++)
      if (ep_dims[i] == pi[eq_dims[j]])
        values[j] = affine_leaf(f->arena, AE_DIM, i, 0);
    if (!values[j])
      return false;
  }
  StructuredOp *M = appended(f, EP, EQ, values);
  int *dims = arena_alloc(f->arena, sizeof(int) * (size_t)(EP->ndims + 2));
  memcpy(dims, ep_dims, sizeof(int) * (size_t)EP->ndims);
  if (add_unit) {
    Dim *d = arena_alloc(f->arena, sizeof(Dim) * (size_t)(EP->ndims + 1));
    memcpy(d, EP->dims, sizeof(Dim) * (size_t)EP->ndims);
    for (int j = 0; j < EQ->ndims; j++)
      if (eq_dims[j] < 0) {
        d[EP->ndims] = EQ->dims[j];
        d[EP->ndims].extent_operand = d[EP->ndims].extent_pos = -1;
        break;
      }
    dims[EP->ndims] = -1;
    M->dims = d;
    M->ndims = EP->ndims + 1;
  }
  *merged = M;
  *merged_dims = dims;
  return true;
}

/* Whether op r reads or writes memory of tensor `root`. */
static bool touches_root(const Kernel *k, const StructuredOp *r, int root) {
  for (int o = 0; o < op_all_operands(r); o++)
    if (root_of(k, op_operand_at(r, o)->tensor) == root)
      return true;
  return false;
}

/* Q's work can move to P's place: see above. */
static bool can_move_up(const Fuser *f, int p, int q) {
  const Kernel *k = f->k;
  const StructuredOp *P = &k->ops[p], *Q = &k->ops[q];
  for (int o = 0; o < op_all_operands(Q); o++) {
    int root = root_of(k, op_operand_at(Q, o)->tensor);
    bool q_writes = writes_root(k, Q, root);
    if (writes_root(k, P, root) || (q_writes && touches_root(k, P, root)))
      return false;
    if (written_between(f, root, p, q) || (q_writes && touched_between(f, root, p, q)))
      return false;
  }
  return true;
}

/* The ops after `after` that read a tensor P reads (the only ones that can
 * be its siblings: shared_read), in order; their count. */
static int sibling_candidates(Fuser *f, const StructuredOp *P, int after, int **out) {
  int n = 0;
  for (int o = 0; o < P->noperands; o++)
    n += f->touch[root_of(f->k, P->operands[o].tensor)].len;
  int *c = arena_alloc(f->arena, sizeof(int) * (size_t)(n + 1)), m = 0;
  for (int o = 0; o < P->noperands; o++) {
    const OpList *l = &f->touch[root_of(f->k, P->operands[o].tensor)];
    for (int i = 0; i < l->len; i++)
      if (l->items[i] > after && !f->removed[l->items[i]])
        c[m++] = l->items[i];
  }
  qsort(c, (size_t)m, sizeof(int), compare_ints);
  n = 0;
  for (int i = 0; i < m; i++)
    if (n == 0 || c[n - 1] != c[i])
      c[n++] = c[i];
  *out = c;
  return n;
}

static void try_siblings(Fuser *f, int p) {
  Kernel *k = f->k;
  /* what the loop below asks of P alone: a reduction whose yields all
   * accumulate and combine alike */
  const StructuredOp *P0 = &k->ops[p];
  if (P0->ext || P0->ndims > LG_MAX_DIMS || P0->nyields < 1 || !combine_class(P0, 0))
    return;
  for (int y = 0; y < P0->nyields; y++)
    if (combine_class(P0, y) != combine_class(P0, 0) || !accumulates(k, P0, y))
      return;
  int *cand;
  int ncand = sibling_candidates(f, P0, p, &cand);
  for (int i = 0; i < ncand; i++) {
    int q = cand[i];
    StructuredOp *P = &k->ops[p];
    const StructuredOp *Q = &k->ops[q];
    if (f->removed[q] || P->ext || Q->ext || Q->nyields != 1 || P->ndims != Q->ndims || P->ndims > LG_MAX_DIMS ||
        P->nnodes + Q->nnodes > MAX_FUSED_NODES || op_reads_index(P, -1) || op_reads_index(Q, -1))
      continue;
    bool parallel = false;
    for (int d = 0; d < P->ndims; d++)
      parallel |= P->dims[d].kind == ITER_PARALLEL;
    int cls = combine_class(Q, 0);
    bool ok = parallel && cls && accumulates(k, Q, 0);
    for (int y = 0; y < P->nyields && ok; y++)
      ok = combine_class(P, y) == cls && accumulates(k, P, y);
    int pi[LG_MAX_DIMS];
    int x = ok ? shared_read(k, P, Q, pi) : -1;
    if (x < 0 || !can_move_up(f, p, q))
      continue;
    AffineExpr **values = arena_alloc(f->arena, sizeof(AffineExpr *) * (size_t)(Q->ndims + 1));
    for (int d = 0; d < Q->ndims; d++)
      values[d] = affine_leaf(f->arena, AE_DIM, pi[d], 0);
    const StructuredOp *init, *epilogue;
    const int *init_dims, *epilogue_dims;
    if (!P->init != !Q->init ||
        !merge_attached(f, P->init, P->init_dims, Q->init, Q->init_dims, pi, false, &init, &init_dims) ||
        !merge_attached(f, P->epilogue, P->epilogue_dims, Q->epilogue, Q->epilogue_dims, pi, true, &epilogue,
                        &epilogue_dims))
      continue;
    const char *a = op_label(k, P), *b = op_label(k, Q);
    const FuseOverride *oa = NULL, *ob = NULL;
    for (int y = 0; y < P->nyields; y++) {
      const FuseOverride *o = override_of(f, P->operands[P->yields[y].operand].tensor);
      if (o && !o->inline_it && !oa)
        oa = o;
    }
    ob = override_of(f, Q->operands[Q->yields[0].operand].tensor);
    if ((oa && !oa->inline_it) || (ob && !ob->inline_it)) {
      vec_push(f->arena, &f->report->decisions,
               arena_printf(f->arena, "keep '%s' and '%s' as separate passes over '%s' (the schedule file says so)",
                            a, b, k->tensors[x].name));
      continue;
    }
    StructuredOp *M = appended(f, P, Q, values);
    M->init = init;
    M->init_dims = init_dims;
    M->epilogue = epilogue;
    M->epilogue_dims = epilogue_dims;
    M->origin = joined_origin(f->origins, P->origin, Q->origin, "siblings");
    *P = *M;
    index_op(f, p);
    f->removed[q] = true;
    vec_push(f->arena, &f->report->decisions,
             arena_printf(f->arena, "siblings: '%s' and '%s' share one pass over '%s'", a, b, k->tensors[x].name));
    ncand = sibling_candidates(f, P, q, &cand); /* P reads Q's tensors too now */
    i = -1;
  }
}

/* ---- diamonds and stored intermediates ----
 *
 * A pointwise value that two pointwise ops read (a = tanh(x); b = a + 1;
 * c = a * 2) would be computed in both once inlined. The branches become
 * one op first (one pass, two yields, as sibling reductions do), so the
 * value is inlined once and computed once per point. And a pointwise value
 * that must be stored (a graph output) and that a pointwise op reads next
 * is computed by that op, which stores it and uses it in registers: one
 * pass, the value stored once and not read back.
 *
 * Both need ops of the same domain that read the value once per point:
 * all dims parallel, one output written at distinct bare dims covering the
 * domain, no init or epilogue, and every read of the value through one
 * map of distinct bare dims (which matches the two ops' dims). */

static bool plain_pointwise(const Kernel *k, const StructuredOp *C) {
  if (C->ext || C->nyields != 1 || C->init || C->epilogue || C->ndims > LG_MAX_DIMS)
    return false;
  for (int d = 0; d < C->ndims; d++)
    if (C->dims[d].kind != ITER_PARALLEL)
      return false;
  const Operand *out = &C->operands[C->yields[0].operand];
  if (k->tensors[out->tensor].rank != C->ndims)
    return false;
  bool seen[LG_MAX_DIMS] = {false};
  for (int i = 0; i < C->ndims; i++) {
    const AffineExpr *m = out->map[i];
    if (m->kind != AE_DIM || seen[m->index])
      return false;
    seen[m->index] = true;
  }
  return true;
}

/* C's one map of its reads of t, when each read uses it and it is distinct
 * bare dims covering C's domain (one read per element of t); else NULL. */
static const Operand *read_once(const Kernel *k, const StructuredOp *C, int t) {
  const Operand *r = NULL;
  if (k->tensors[t].rank != C->ndims)
    return NULL;
  for (int o = 0; o < C->noperands; o++) {
    const Operand *x = &C->operands[o];
    if (x->tensor != t)
      continue;
    if (x->guarded || x->shape_only || (r && !same_operand(k, r, x)))
      return NULL;
    r = x;
  }
  bool seen[LG_MAX_DIMS] = {false};
  for (int i = 0; r && i < C->ndims; i++) {
    const AffineExpr *m = r->map[i];
    if (m->kind != AE_DIM || seen[m->index] || !affine_equal(C->dims[m->index].extent, k->tensors[t].shape[i]))
      return NULL;
    seen[m->index] = true;
  }
  return r;
}

/* Whether an op with a reduction writes tensor x: C, reading x, may become
 * that op's epilogue, which a merged op (two yields) cannot. */
static bool written_by_reduction(Fuser *f, int x) {
  int n = ops_in(f, &f->write[root_of(f->k, x)], -1, f->k->nops);
  for (int i = 0; i < n; i++) {
    const StructuredOp *Q = &f->k->ops[f->sorted[i]];
    if (Q->ext || !op_writes(Q, x))
      continue;
    for (int d = 0; d < Q->ndims; d++)
      if (Q->dims[d].kind == ITER_REDUCTION)
        return true;
  }
  return false;
}

/* A branch that merges: plain pointwise, reading t once per point,
 * writing a graph output (a branch writing an intermediate may be
 * inlined further, into an op where the branches meet again; there the
 * shared value is one node after all), and reading nothing a reduction
 * writes (it may become that op's epilogue). */
static bool branch_merges(Fuser *f, const StructuredOp *C, int t) {
  const Kernel *k = f->k;
  /* a branch reading a loop index keeps its own dims (merged, they would
   * be renamed to the first branch's) */
  if (!plain_pointwise(k, C) || !read_once(k, C, t) || op_writes(C, t) || op_reads_index(C, -1))
    return false;
  const TensorParam *out = &k->tensors[C->operands[C->yields[0].operand].tensor];
  if (out->storage != TS_PARAM || !out->is_output)
    return false;
  for (int o = 0; o < C->noperands; o++)
    if (C->operands[o].tensor != t && written_by_reduction(f, C->operands[o].tensor))
      return false;
  return true;
}

static bool merge_branches(Fuser *f, int p, int t) {
  Kernel *k = f->k;
  int first = -1;
  bool merged = false;
  /* the ops after P touching t's memory (a copy: the calls below reuse f->sorted) */
  int ntouch = ops_in(f, &f->touch[root_of(k, t)], p, k->nops);
  int *after = arena_alloc(f->arena, sizeof(int) * (size_t)(ntouch + 1));
  memcpy(after, f->sorted, sizeof(int) * (size_t)ntouch);
  for (int i = 0; i < ntouch; i++) {
    int c = after[i];
    if (f->removed[c] || !op_reads(&k->ops[c], t) || !branch_merges(f, &k->ops[c], t))
      continue;
    if (first < 0) {
      first = c;
      continue;
    }
    StructuredOp *B = &k->ops[first];
    const StructuredOp *C = &k->ops[c];
    if (!can_move_up(f, first, c) || B->nnodes + C->nnodes > MAX_FUSED_NODES)
      continue; /* stays a branch of its own (recomputing P) */
    const Operand *rb = read_once(k, B, t), *rc = read_once(k, C, t);
    AffineExpr **values = arena_alloc(f->arena, sizeof(AffineExpr *) * (size_t)(C->ndims + 1));
    for (int i = 0; i < C->ndims; i++) /* C's dim at position i of t is B's dim there */
      values[rc->map[i]->index] = affine_leaf(f->arena, AE_DIM, rb->map[i]->index, 0);
    const char *a = op_label(k, B), *b = op_label(k, C);
    StructuredOp *M = appended(f, B, C, values);
    M->origin = joined_origin(f->origins, B->origin, C->origin, "one pass");
    *B = *M;
    index_op(f, first);
    f->removed[c] = true;
    merged = true;
    vec_push(f->arena, &f->report->decisions,
             arena_printf(f->arena, "diamond: '%s' and '%s' share one pass over '%s'", a, b, k->tensors[t].name));
  }
  return merged;
}

/* P computes the output T point by point and T's next reader C is
 * pointwise over it: C computes and stores T (see above). */
static void try_keep_store(Fuser *f, int p) {
  Kernel *k = f->k;
  const StructuredOp *P = &k->ops[p];
  if (!plain_pointwise(k, P) || op_reads_index(P, -1)) /* as try_inline */
    return;
  int t = P->operands[P->yields[0].operand].tensor, pos_of_dim[LG_MAX_DIMS];
  const TensorParam *T = &k->tensors[t];
  if (T->storage != TS_PARAM || !T->is_output || has_alias(f, t) || op_reads(P, t))
    return;
  for (int i = 0; i < T->rank; i++)
    pos_of_dim[P->operands[P->yields[0].operand].map[i]->index] = i;
  int c = -1, ntouch = ops_in(f, &f->touch[root_of(k, t)], -1, k->nops);
  for (int i = 0; i < ntouch && c < 0; i++) {
    int q = f->sorted[i];
    if (q == p || !(op_reads(&k->ops[q], t) || op_writes(&k->ops[q], t)))
      continue;
    if (q < p || !op_reads(&k->ops[q], t))
      return; /* another writer, or a reader before P */
    c = q;
  }
  if (c < 0 || !plain_pointwise(k, &k->ops[c]) || !read_once(k, &k->ops[c], t) || !consumer_accepts(f, p, c, t, false))
    return;
  const FuseOverride *o = override_of(f, t);
  if (o && !o->inline_it)
    return;
  vec_push(f->arena, &f->report->decisions,
           arena_printf(f->arena, "store '%s' from the op writing '%s', which computes it and reads it in registers",
                        T->name, op_label(k, &k->ops[c])));
  inline_into(f, P, c, t, pos_of_dim, true);
  index_op(f, c);
  f->removed[p] = true;
  heap_release(f, p); /* its payload now lives in C */
}

void fuse_kernel(Kernel *k, const FuseOptions *opt, FuseReport *report, Arena *arena, Diag *diag) {
  if (!opt->enabled) {
    for (int i = 0; i < opt->noverrides; i++)
      diag_warning(diag, opt->overrides[i].loc, "fusion is off (--fuse=none): the entry for '%s' has no effect",
                   opt->overrides[i].tensor);
    return;
  }
  Fuser f = {.k = k, .arena = arena, .diag = diag, .opt = opt, .report = report};
  f.removed = arena_alloc(arena, sizeof(bool) * (size_t)k->nops);
  f.used = arena_alloc(arena, sizeof(bool) * (size_t)(opt->noverrides + 1));
  f.touch = arena_alloc(arena, sizeof(OpList) * (size_t)(k->ntensors + 1));
  f.write = arena_alloc(arena, sizeof(OpList) * (size_t)(k->ntensors + 1));
  f.aliased = arena_alloc(arena, sizeof(bool) * (size_t)(k->ntensors + 1));
  f.heap = xmalloc(sizeof *f.heap * (size_t)(k->nops + 1));
  f.origins = arena_new();
  memset(f.heap, 0, sizeof *f.heap * (size_t)(k->nops + 1));
  for (int t = 0; t < k->ntensors; t++)
    if (root_of(k, t) != t)
      f.aliased[root_of(k, t)] = true;
  for (int i = 0; i < k->nops; i++)
    index_op(&f, i);
  /* in op order: once P is inlined into C, C may be inlined further, so a
   * chain folds into its last op in one pass, each step linear in size */
  for (int p = 0; p < k->nops; p++)
    try_inline(&f, p);
  for (int p = 0; p < k->nops; p++) /* again after each: the next reader may follow */
    while (!f.removed[p] && try_epilogue(&f, p))
      ;
  for (int p = 0; p < k->nops; p++)
    if (!f.removed[p])
      try_init(&f, p);
  for (int p = 0; p < k->nops; p++)
    if (!f.removed[p])
      try_keep_store(&f, p);
  for (int p = 0; p < k->nops; p++)
    if (!f.removed[p])
      try_siblings(&f, p);
  for (int i = 0; i < opt->noverrides; i++)
    if (!f.used[i])
      diag_warning(diag, opt->overrides[i].loc,
                   "'%s' is not an intermediate that fusion could inline or apply as an epilogue (a graph input, "
                   "output or constant, or no tensor of '%s'); the entry has no effect",
                   opt->overrides[i].tensor, k->name);
  int n = 0;
  for (int i = 0; i < k->nops; i++)
    if (!f.removed[i]) {
      if (f.heap[i].nodes || k->ops[i].init || k->ops[i].epilogue)
        settle(arena, &k->ops[i]); /* an init or epilogue may be a removed op's arrays */
      else if (k->ops[i].origin)
        k->ops[i].origin = arena_strdup(arena, k->ops[i].origin);
      k->ops[n++] = k->ops[i];
    }
  arena_free(f.origins);
  for (int i = 0; i < k->nops; i++)
    heap_release(&f, i);
  free(f.heap);
  k->nops = n;
  for (int i = 0; i < k->nops; i++)
    ir_verify_op(diag, k, &k->ops[i]);
}
