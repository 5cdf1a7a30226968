/* plan.c - buffer planning (see passes.h): every TS_WORKSPACE tensor of a
 * graph kernel gets a byte offset in one workspace.
 *
 * A buffer is live from the first op that touches it (its writer) to the
 * last op that touches it (its last reader); an alias (a reshape seen as
 * the same memory) keeps its root alive. Two buffers whose live ranges
 * overlap must not overlap in memory; others may share bytes.
 *
 * With static sizes two greedy placements are tried (biggest first, and
 * first-fit in op order), each putting a buffer at the lowest 64-aligned
 * offset that clears the buffers it conflicts with; the smaller total wins.
 * With symbolic sizes an offset must be right for every value of the
 * symbols, so buffers are grouped into slots instead: a slot holds buffers
 * with pairwise disjoint live ranges whose sizes are ordered for every
 * symbol value (one of them is provably the largest, so the slot's size is
 * that buffer's, an affine expression with no run-time max); offsets are
 * sums of the earlier slots' sizes. */
#include "graph/passes.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/poly.h"
#include "schedule/schedule.h"

enum { ALIGN = 64 };

typedef struct {
  int tensor;
  int first, last;  /* live range in ops; first > last: never touched */
  AffineExpr *bytes; /* rounded up to ALIGN */
  int64_t size;      /* the same when static, else -1 */
  Poly *raw;         /* unrounded bytes as a polynomial; NULL if not one */
} Buffer;

/* The tensor whose memory t is (itself unless an alias); the hop count
 * guards against a malformed cycle. */
static int storage_root(const Kernel *k, int t) {
  for (int hops = 0; k->tensors[t].storage == TS_ALIAS && hops <= k->ntensors; hops++)
    t = k->tensors[t].alias_of;
  return t;
}

/* Affine floordiv rounds toward minus infinity, unlike C's '/'. */
static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* The value of an expression without symbols; false if it has some (or
 * overflows). */
static bool fold_const(const AffineExpr *e, int64_t *v) {
  int64_t a, b;
  switch (e->kind) {
  case AE_CONST:
    *v = e->value;
    return true;
  case AE_NEG:
    if (!fold_const(e->lhs, &a))
      return false;
    *v = -a;
    return true;
  case AE_ADD:
  case AE_SUB:
  case AE_MUL:
    if (!fold_const(e->lhs, &a) || !fold_const(e->rhs, &b))
      return false;
    if (e->kind == AE_ADD)
      return !__builtin_add_overflow(a, b, v);
    if (e->kind == AE_SUB)
      return !__builtin_sub_overflow(a, b, v);
    return !__builtin_mul_overflow(a, b, v);
  case AE_FLOORDIV:
  case AE_CEILDIV:
  case AE_MOD:
    if (!fold_const(e->lhs, &a) || !fold_const(e->rhs, &b) || b == 0)
      return false;
    if (e->kind == AE_CEILDIV)
      *v = -floor_div(-a, b);
    else if (e->kind == AE_FLOORDIV)
      *v = floor_div(a, b);
    else
      *v = a - floor_div(a, b) * b;
    return true;
  default:
    return false;
  }
}

static int64_t round_up(int64_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

/* Bytes of tensor t: the element size times every extent, constants folded
 * into one leading factor. */
static AffineExpr *raw_bytes(const Kernel *k, int t, Arena *arena) {
  const TensorParam *tp = &k->tensors[t];
  int64_t constant = (elem_type_bits(tp->type) + 7) / 8;
  AffineExpr *e = NULL;
  for (int i = 0; i < tp->rank; i++) {
    int64_t v;
    if (fold_const(tp->shape[i], &v))
      constant *= v;
    else
      e = e ? affine_binary(arena, AE_MUL, e, tp->shape[i]) : tp->shape[i];
  }
  if (!e)
    return affine_const(arena, constant);
  return constant == 1 ? e : affine_binary(arena, AE_MUL, affine_const(arena, constant), e);
}

/* x rounded up to a multiple of ALIGN, unless every term already is one. */
static AffineExpr *round_expr(AffineExpr *x, const Poly *p, Arena *arena) {
  bool aligned = p != NULL;
  for (int i = 0; p && i < p->nterms; i++)
    aligned &= p->terms[i].coef % ALIGN == 0;
  if (aligned)
    return x;
  AffineExpr *sum = affine_binary(arena, AE_ADD, x, affine_const(arena, ALIGN - 1));
  return affine_binary(arena, AE_MUL, affine_binary(arena, AE_FLOORDIV, sum, affine_const(arena, ALIGN)),
                       affine_const(arena, ALIGN));
}

static void touch(Buffer *b, int op) {
  if (b->first > b->last) {
    b->first = op;
    b->last = op;
  } else {
    b->last = op;
  }
}

/* The workspace tensors, their sizes and live ranges, in tensor order. */
static Buffer *collect_buffers(const Kernel *k, const OpSpan *spans, const int64_t *bytes, int *count,
                               Arena *arena) {
  Buffer *bufs = arena_alloc(arena, sizeof *bufs * (size_t)(k->ntensors + 1));
  int *slot_of = arena_alloc(arena, sizeof *slot_of * (size_t)(k->ntensors + 1));
  int n = 0;
  for (int t = 0; t < k->ntensors; t++) {
    slot_of[t] = -1;
    if (k->tensors[t].storage != TS_WORKSPACE)
      continue;
    Buffer *b = &bufs[n];
    slot_of[t] = n++;
    b->tensor = t;
    b->first = 1;
    b->last = 0;
    AffineExpr *raw = bytes && bytes[t] >= 0 ? affine_const(arena, bytes[t]) : raw_bytes(k, t, arena);
    b->raw = poly_from_affine(arena, raw);
    int64_t v;
    if (fold_const(raw, &v)) {
      b->size = round_up(v);
      b->bytes = affine_const(arena, b->size);
    } else {
      b->size = -1;
      b->bytes = round_expr(raw, b->raw, arena);
    }
  }
  for (int i = 0; i < k->nops; i++)
    for (int o = 0; o < op_all_operands(&k->ops[i]); o++) {
      const Operand *opd = op_operand_at(&k->ops[i], o);
      int root = storage_root(k, opd->tensor);
      if (spans && opd->tensor == spans[i].unmaterialized)
        continue;
      if (!opd->shape_only && slot_of[root] >= 0)
      {
        /* an op of a row-fused group runs interleaved with the others:
         * it touches its buffers over the whole group */
        touch(&bufs[slot_of[root]], spans ? spans[i].first : i);
        touch(&bufs[slot_of[root]], spans ? spans[i].last : i);
      }
    }
  /* a tensor no op touches (fusion left it behind) needs no bytes */
  int kept = 0;
  for (int i = 0; i < n; i++)
    if (bufs[i].first <= bufs[i].last)
      bufs[kept++] = bufs[i];
  *count = kept;
  return bufs;
}

/* ---- static sizes: greedy offsets ---- */

typedef int (*BufferOrder)(const Buffer *a, const Buffer *b);

typedef struct {
  const char *name;
  BufferOrder before;
} Strategy;

static int by_size(const Buffer *a, const Buffer *b) {
  if (a->size != b->size)
    return a->size > b->size ? -1 : 1;
  return a->tensor - b->tensor;
}

static int by_first_op(const Buffer *a, const Buffer *b) {
  if (a->first != b->first)
    return a->first - b->first;
  return a->tensor - b->tensor;
}

/* order[] = the buffer indices sorted by cmp: a merge sort (a graph of
 * 10^5 ops has as many buffers; qsort would need its comparator's context
 * in a global). cmp is a total order, so the result is deterministic. */
static void sort_buffers(const Buffer *bufs, int n, BufferOrder cmp, int *order) {
  int *tmp = xmalloc(sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    order[i] = i;
  for (int width = 1; width < n; width *= 2) {
    for (int lo = 0; lo < n; lo += 2 * width) {
      int mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      int a = lo, b = mid, o = lo;
      while (a < mid && b < hi)
        tmp[o++] = cmp(&bufs[order[b]], &bufs[order[a]]) < 0 ? order[b++] : order[a++];
      while (a < mid)
        tmp[o++] = order[a++];
      while (b < hi)
        tmp[o++] = order[b++];
    }
    memcpy(order, tmp, sizeof(int) * (size_t)n);
  }
  free(tmp);
}

/* Which buffers' live ranges overlap which: live[op] lists the buffers
 * live at op, starts[op] those whose range starts there (CSR arrays). The
 * buffers overlapping b are those live at b's first op and those starting
 * after it within b's range: found in time proportional to their number
 * and b's length, not to all buffers. */
typedef struct {
  int nops;
  int *live_at, *live; /* live[live_at[op] .. live_at[op + 1]) */
  int *start_at, *starts;
} Overlaps;

static void overlaps_build(Overlaps *ov, const Buffer *bufs, int n, int nops) {
  ov->nops = nops;
  ov->live_at = xmalloc(sizeof(int) * (size_t)(nops + 2));
  ov->start_at = xmalloc(sizeof(int) * (size_t)(nops + 2));
  memset(ov->live_at, 0, sizeof(int) * (size_t)(nops + 2));
  memset(ov->start_at, 0, sizeof(int) * (size_t)(nops + 2));
  size_t total = 0;
  for (int i = 0; i < n; i++) {
    for (int op = bufs[i].first; op <= bufs[i].last; op++)
      ov->live_at[op + 1]++;
    ov->start_at[bufs[i].first + 1]++;
    total += (size_t)(bufs[i].last - bufs[i].first + 1);
  }
  for (int op = 0; op <= nops; op++) {
    ov->live_at[op + 1] += ov->live_at[op];
    ov->start_at[op + 1] += ov->start_at[op];
  }
  ov->live = xmalloc(sizeof(int) * (total + 1));
  ov->starts = xmalloc(sizeof(int) * (size_t)(n + 1));
  int *fill = xmalloc(sizeof(int) * (size_t)(nops + 1));
  memcpy(fill, ov->live_at, sizeof(int) * (size_t)(nops + 1));
  for (int i = 0; i < n; i++)
    for (int op = bufs[i].first; op <= bufs[i].last; op++)
      ov->live[fill[op]++] = i;
  memcpy(fill, ov->start_at, sizeof(int) * (size_t)(nops + 1));
  for (int i = 0; i < n; i++)
    ov->starts[fill[bufs[i].first]++] = i;
  free(fill);
}

static void overlaps_free(Overlaps *ov) {
  free(ov->live_at);
  free(ov->live);
  free(ov->start_at);
  free(ov->starts);
}

/* The buffers (b itself included) whose live ranges overlap b's, into
 * out (room for n); their count. */
static int overlapping(const Overlaps *ov, const Buffer *b, int *out) {
  int m = 0;
  for (int j = ov->live_at[b->first]; j < ov->live_at[b->first + 1]; j++)
    out[m++] = ov->live[j];
  for (int op = b->first + 1; op <= b->last; op++)
    for (int j = ov->start_at[op]; j < ov->start_at[op + 1]; j++)
      out[m++] = ov->starts[j];
  return m;
}

/* Places bufs in `order`, each at the lowest offset (0 or the end of a
 * placed conflicting buffer) that clears every placed conflicting buffer.
 * Returns the total. */
static int64_t place_greedy(const Buffer *bufs, int n, const int *order, const Overlaps *ov, int64_t *offset,
                            bool *placed) {
  int64_t total = 0;
  int *conflicts = xmalloc(sizeof(int) * (size_t)(n + 1));
  memset(placed, 0, sizeof *placed * (size_t)n);
  for (int oi = 0; oi < n; oi++) {
    int i = order[oi];
    int m = 0, all = overlapping(ov, &bufs[i], conflicts);
    for (int x = 0; x < all; x++)
      if (placed[conflicts[x]])
        conflicts[m++] = conflicts[x];
    int64_t best = -1;
    for (int c = -1; c < m; c++) {
      int64_t at = c < 0 ? 0 : offset[conflicts[c]] + bufs[conflicts[c]].size;
      if (best >= 0 && at >= best)
        continue;
      bool clear = true;
      for (int x = 0; x < m && clear; x++) {
        int j = conflicts[x];
        if (at < offset[j] + bufs[j].size && offset[j] < at + bufs[i].size)
          clear = false;
      }
      if (clear)
        best = at;
    }
    offset[i] = best;
    placed[i] = true;
    if (best + bufs[i].size > total)
      total = best + bufs[i].size;
  }
  free(conflicts);
  return total;
}

/* The bytes live at once, maximised over the ops. */
static int64_t max_live(const Kernel *k, const Buffer *bufs, int n) {
  int64_t *delta = xmalloc(sizeof(int64_t) * (size_t)(k->nops + 2));
  memset(delta, 0, sizeof(int64_t) * (size_t)(k->nops + 2));
  for (int i = 0; i < n; i++)
    if (bufs[i].first <= bufs[i].last && bufs[i].first < k->nops) {
      delta[bufs[i].first] += bufs[i].size;
      delta[(bufs[i].last < k->nops ? bufs[i].last : k->nops - 1) + 1] -= bufs[i].size;
    }
  int64_t best = 0, live = 0;
  for (int op = 0; op < k->nops; op++) {
    live += delta[op];
    if (live > best)
      best = live;
  }
  free(delta);
  return best;
}

static void plan_static(const Kernel *k, const Buffer *bufs, int n, BufferPlan *plan, Arena *arena) {
  static const Strategy strategies[] = {{"greedy by size", by_size}, {"first fit in op order", by_first_op}};
  int *order = arena_alloc(arena, sizeof *order * (size_t)(n + 1));
  int64_t *offset = arena_alloc(arena, sizeof *offset * (size_t)(n + 1));
  int64_t *best_offset = arena_alloc(arena, sizeof *best_offset * (size_t)(n + 1));
  bool *placed = arena_alloc(arena, sizeof *placed * (size_t)(n + 1));
  int64_t best_total = -1;
  Overlaps ov;
  overlaps_build(&ov, bufs, n, k->nops);
  for (size_t s = 0; s < sizeof strategies / sizeof *strategies; s++) {
    sort_buffers(bufs, n, strategies[s].before, order);
    int64_t total = place_greedy(bufs, n, order, &ov, offset, placed);
    if (best_total < 0 || total < best_total) {
      best_total = total;
      memcpy(best_offset, offset, sizeof *offset * (size_t)n);
      plan->strategy = strategies[s].name;
    }
  }
  overlaps_free(&ov);
  int64_t sum = 0;
  for (int i = 0; i < n; i++) {
    plan->buffers[i].offset = affine_const(arena, best_offset[i]);
    plan->buffers[i].slot = i;
    sum += bufs[i].size;
  }
  plan->total_static = best_total < 0 ? 0 : best_total;
  plan->total = affine_const(arena, plan->total_static);
  plan->lower_bound = max_live(k, bufs, n);
  plan->sum_bytes = sum;
}

/* ---- symbolic sizes: slots ---- */

/* +1: a >= b for every (non-negative) symbol value; -1: a <= b; 0: unknown. */
static int compare_sizes(const Buffer *a, const Buffer *b, Arena *arena) {
  if (a->size >= 0 && b->size >= 0)
    return a->size >= b->size ? 1 : -1;
  if (affine_equal(a->bytes, b->bytes))
    return 1;
  Poly *d = poly_add(arena, a->raw, b->raw, -1);
  if (!d)
    return 0;
  bool nonneg = true, nonpos = true;
  for (int i = 0; i < d->nterms; i++) {
    nonneg &= d->terms[i].coef >= 0;
    nonpos &= d->terms[i].coef <= 0;
  }
  return nonneg ? 1 : nonpos ? -1 : 0;
}

/* p as an affine expression, when its variables are all size symbols
 * (NULL otherwise): its terms in order, each as coefficient * symbols. */
static AffineExpr *affine_of_poly(const Poly *p, Arena *arena) {
  AffineExpr *sum = NULL;
  for (int i = 0; i < p->nterms; i++) {
    const Term *t = &p->terms[i];
    AffineExpr *x = NULL;
    for (int v = 0; v < t->degree; v++) {
      if (poly_var_kind(t->vars[v]) != PV_SIZE)
        return NULL;
      AffineExpr *leaf = affine_leaf(arena, AE_SIZE, poly_var_index(t->vars[v]), 0);
      x = x ? affine_binary(arena, AE_MUL, x, leaf) : leaf;
    }
    if (!x)
      x = affine_const(arena, t->coef);
    else if (t->coef != 1)
      x = affine_binary(arena, AE_MUL, affine_const(arena, t->coef), x);
    sum = sum ? affine_binary(arena, AE_ADD, sum, x) : x;
  }
  return sum ? sum : affine_const(arena, 0);
}

static void plan_slots(const Buffer *bufs, int n, BufferPlan *plan, Arena *arena) {
  int *order = arena_alloc(arena, sizeof *order * (size_t)(n + 1));
  int *slot = arena_alloc(arena, sizeof *slot * (size_t)(n + 1));
  int *largest = arena_alloc(arena, sizeof *largest * (size_t)(n + 1)); /* per slot: its biggest buffer */
  /* per slot: the last op of its buffers' ranges. Buffers come in order
   * of their first op, so one overlaps a slot's buffers iff it starts by
   * then. */
  int *slot_last = arena_alloc(arena, sizeof *slot_last * (size_t)(n + 1));
  int nslots = 0;
  sort_buffers(bufs, n, by_first_op, order);
  for (int i = 0; i < n; i++)
    slot[i] = -1;
  for (int oi = 0; oi < n; oi++) {
    int i = order[oi];
    for (int s = 0; s < nslots && slot[i] < 0; s++) {
      bool fits = slot_last[s] < bufs[i].first;
      int cmp = fits ? compare_sizes(&bufs[i], &bufs[largest[s]], arena) : 0;
      if (cmp != 0) {
        slot[i] = s;
        if (cmp > 0)
          largest[s] = i;
        if (bufs[i].last > slot_last[s])
          slot_last[s] = bufs[i].last;
      }
    }
    if (slot[i] < 0) {
      slot[i] = nslots;
      slot_last[nslots] = bufs[i].last;
      largest[nslots++] = i;
    }
  }
  /* a slot's offset is the sum of the sizes of the slots before it, its
   * like terms collected (64 * N + 64 * N is 128 * N): the sum of a
   * thousand slots written out term by term made the C quadratic in size */
  AffineExpr **slot_offset = arena_alloc(arena, sizeof *slot_offset * (size_t)(nslots + 1));
  AffineExpr *end = affine_const(arena, 0);
  Poly *end_poly = poly_const(arena, 0);
  for (int s = 0; s < nslots; s++) {
    AffineExpr *collected = end_poly ? affine_of_poly(end_poly, arena) : NULL;
    slot_offset[s] = collected ? collected : end;
    const AffineExpr *size = bufs[largest[s]].bytes;
    end = s == 0 ? (AffineExpr *)size : affine_binary(arena, AE_ADD, end, (AffineExpr *)size);
    end_poly = end_poly ? poly_add(arena, end_poly, poly_from_affine(arena, size), 1) : NULL;
  }
  if (end_poly && affine_of_poly(end_poly, arena))
    end = affine_of_poly(end_poly, arena);
  for (int i = 0; i < n; i++) {
    plan->buffers[i].offset = slot_offset[slot[i]];
    plan->buffers[i].slot = slot[i];
  }
  plan->total = end;
  plan->total_static = -1;
  plan->lower_bound = -1;
  plan->sum_bytes = -1;
  plan->strategy = "slots (symbolic sizes)";
}

/* ---- in place ----
 *
 * An elementwise op that reads T where it writes U (the same index maps, a
 * permutation of its dims), reads T nowhere else and is T's last reader
 * and U's first writer can write U over T: each point reads its T element
 * and writes the U element at the same address, in the same iteration.
 * U then shares T's buffer (same type and shape, so the same bytes). */

/* What in_place_pair asks of every op's tensors, indexed once. */
typedef struct {
  int *buffer_of; /* per tensor: its buffer, or -1 */
  bool *aliased;  /* per tensor: another tensor's memory is its */
} TensorIndex;

static int buffer_of(const TensorIndex *x, int t) { return x->buffer_of[t]; }

static bool same_map(const Kernel *k, const Operand *a, const Operand *b) {
  for (int i = 0; i < k->tensors[a->tensor].rank; i++)
    if (!affine_equal(a->map[i], b->map[i]))
      return false;
  return true;
}

/* The buffer U of op i's output that can take over buffer of T, read by op
 * i, or -1; *from gets T's buffer. */
static int in_place_pair(const Kernel *k, const OpSpan *spans, const Buffer *bufs, const TensorIndex *x, int i,
                         int *from) {
  const StructuredOp *op = &k->ops[i];
  if (op->ext || op->init || op->epilogue || op->nyields != 1 || (spans && spans[i].first != spans[i].last))
    return -1;
  for (int d = 0; d < op->ndims; d++)
    if (op->dims[d].kind != ITER_PARALLEL)
      return -1;
  const Operand *out = &op->operands[op->yields[0].operand];
  const TensorParam *U = &k->tensors[out->tensor];
  int bu = buffer_of(x, out->tensor);
  if (U->storage != TS_WORKSPACE || bu < 0 || bufs[bu].first != i || U->rank != op->ndims)
    return -1;
  bool seen[LG_MAX_DIMS] = {false};
  for (int p = 0; p < U->rank; p++) {
    const AffineExpr *m = out->map[p];
    if (m->kind != AE_DIM || seen[m->index])
      return -1;
    seen[m->index] = true;
  }
  for (int o = 0; o < op->noperands; o++) {
    int t = op->operands[o].tensor;
    const TensorParam *T = &k->tensors[t];
    int bt = buffer_of(x, t);
    if (t == out->tensor || bt < 0 || bufs[bt].last != i || T->type != U->type || T->rank != U->rank ||
        op->operands[o].guarded || op->operands[o].shape_only)
      continue;
    bool ok = true;
    for (int p = 0; p < T->rank && ok; p++)
      ok = affine_equal(T->shape[p], U->shape[p]);
    for (int q = 0; q < op->noperands && ok; q++) /* every read of T at U's point; nothing else aliases T */
      if (storage_root(k, op->operands[q].tensor) == t)
        ok = op->operands[q].tensor == t && same_map(k, &op->operands[q], out);
    ok = ok && !x->aliased[t];
    if (ok) {
      *from = bt;
      return bu;
    }
  }
  return -1;
}

/* same[i]: the buffer that buffer i shares (-1: its own), root first. */
static int *merge_in_place(const Kernel *k, const OpSpan *spans, Buffer *bufs, int n, Arena *arena) {
  int *same = arena_alloc(arena, sizeof *same * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    same[i] = -1;
  TensorIndex x;
  x.buffer_of = xmalloc(sizeof(int) * (size_t)(k->ntensors + 1));
  x.aliased = xmalloc(sizeof(bool) * (size_t)(k->ntensors + 1));
  for (int t = 0; t < k->ntensors; t++) {
    x.buffer_of[t] = -1;
    x.aliased[t] = false;
  }
  for (int t = 0; t < k->ntensors; t++)
    if (k->tensors[t].storage == TS_ALIAS && storage_root(k, t) != t)
      x.aliased[storage_root(k, t)] = true;
  for (int i = n - 1; i >= 0; i--) /* the first buffer of a tensor, as a search would find */
    x.buffer_of[bufs[i].tensor] = i;
  for (int i = 0; i < k->nops; i++) {
    int bt, bu = in_place_pair(k, spans, bufs, &x, i, &bt);
    if (bu < 0 || same[bu] >= 0)
      continue;
    int root = bt;
    while (same[root] >= 0)
      root = same[root];
    same[bu] = root;
    if (bufs[bu].last > bufs[root].last)
      bufs[root].last = bufs[bu].last;
  }
  free(x.buffer_of);
  free(x.aliased);
  return same;
}

BufferPlan *plan_buffers(const Kernel *k, const OpSpan *spans, const int64_t *bytes, Arena *arena) {
  BufferPlan *plan = arena_alloc(arena, sizeof *plan);
  int n = 0;
  Buffer *bufs = collect_buffers(k, spans, bytes, &n, arena);
  plan->nbuffers = n;
  plan->buffers = arena_alloc(arena, sizeof *plan->buffers * (size_t)(n + 1));
  bool all_static = true;
  for (int i = 0; i < n; i++) {
    BufferPlacement *p = &plan->buffers[i];
    p->tensor = bufs[i].tensor;
    p->bytes = bufs[i].bytes;
    p->first_op = bufs[i].first;
    p->last_op = bufs[i].last;
    all_static &= bufs[i].size >= 0;
  }
  /* the buffers that own memory are placed; the others take their owner's */
  int *same = merge_in_place(k, spans, bufs, n, arena);
  int *index = arena_alloc(arena, sizeof *index * (size_t)(n + 1));
  Buffer *own = arena_alloc(arena, sizeof *own * (size_t)(n + 1));
  int nown = 0;
  int64_t sum = 0;
  for (int i = 0; i < n; i++) {
    sum += bufs[i].size;
    if (same[i] < 0) {
      index[i] = nown;
      own[nown++] = bufs[i];
    }
  }
  BufferPlan placed = {.buffers = arena_alloc(arena, sizeof *plan->buffers * (size_t)(nown + 1))};
  if (all_static)
    plan_static(k, own, nown, &placed, arena);
  else
    plan_slots(own, nown, &placed, arena);
  for (int i = 0; i < n; i++) {
    int r = same[i] < 0 ? i : same[i];
    plan->buffers[i].offset = placed.buffers[index[r]].offset;
    plan->buffers[i].slot = placed.buffers[index[r]].slot;
    plan->buffers[i].in_place_of = same[i] < 0 ? -1 : bufs[same[i]].tensor;
  }
  plan->total = placed.total;
  plan->total_static = placed.total_static;
  plan->lower_bound = placed.lower_bound;
  plan->sum_bytes = all_static ? sum : -1;
  plan->strategy = placed.strategy;
  return plan;
}

BufferPlan *plan_graph_buffers(const Kernel *k, const OpPlan *plans, Arena *arena) {
  OpSpan *spans = arena_alloc(arena, sizeof(OpSpan) * (size_t)(k->nops + 1));
  for (int j = 0; j < k->nops; j++) {
    int size = plans[j].group_size > 1 ? plans[j].group_size : 1;
    for (int m = j; m < j + size; m++)
      spans[m] = (OpSpan){j, j + size - 1, -1};
    j += size - 1;
  }
  for (int j = 0; j < k->nops; j++) /* a prologue runs in its consumer; its result never exists */
    if (plans[j].is_prologue) {
      int c = plans[j].prologue_of;
      spans[j] = (OpSpan){spans[c].first, spans[c].last, plans[c].prologue_tensor};
      spans[c].unmaterialized = plans[c].prologue_tensor;
    }
  int64_t *bytes = arena_alloc(arena, sizeof(int64_t) * (size_t)(k->ntensors + 1));
  for (int t = 0; t < k->ntensors; t++)
    bytes[t] = -1;
  for (int j = 0; j < k->nops; j++) /* a softmax group's chunk buffers */
    for (int c = 0; c < plans[j].nchunk_local; c++)
      bytes[plans[j].chunk_local[c]] = plans[j].chunk_local_bytes[c];
  return plan_buffers(k, spans, bytes, arena);
}

/* ---- --print-schedule ---- */

static const char *size_name(void *ctx, int i) { return ((const Kernel *)ctx)->sizes[i].name; }
static const char *no_name(void *ctx, int i) {
  (void)ctx, (void)i;
  return "?";
}
static const char *no_attr(void *ctx, int i, int elem) {
  (void)ctx, (void)i, (void)elem;
  return "?";
}

static void put_expr(StrBuf *out, const Kernel *k, const AffineExpr *e) {
  AffineNames names = {no_name, size_name, no_attr, (void *)k, false};
  int64_t v;
  if (fold_const(e, &v))
    sb_printf(out, "%lld", (long long)v);
  else {
    sb_putc(out, '"');
    affine_print(out, e, &names);
    sb_putc(out, '"');
  }
}

/* One comment line, whole: its names and dims are the model's text, printed
 * as printable ASCII so that none can end the line. */
static void put_line(StrBuf *out, StrBuf *line) {
  sb_put_printable(out, sb_cstr(line));
  sb_putc(out, '\n');
  line->len = 0;
  if (line->data)
    line->data[0] = '\0';
}

/* Comments only: a schedule file read back must not see unknown keys. */
void plan_print_yaml(StrBuf *out, const Kernel *k, const BufferPlan *plan) {
  StrBuf line = {0};
  sb_printf(&line, "# buffer plan of %s (%s)", k->name, plan->strategy ? plan->strategy : "none");
  put_line(out, &line);
  sb_puts(&line, "#   workspace: ");
  put_expr(&line, k, plan->total);
  put_line(out, &line);
  if (plan->total_static >= 0) {
    sb_printf(&line, "#   lower_bound: %lld  # most bytes live at once", (long long)plan->lower_bound);
    put_line(out, &line);
    sb_printf(&line, "#   without_reuse: %lld", (long long)plan->sum_bytes);
    put_line(out, &line);
  }
  sb_puts(&line, plan->nbuffers ? "#   buffers:" : "#   buffers: []");
  put_line(out, &line);
  for (int i = 0; i < plan->nbuffers; i++) {
    const BufferPlacement *b = &plan->buffers[i];
    sb_printf(&line, "#     - {tensor: %s, offset: ", k->tensors[b->tensor].name);
    put_expr(&line, k, b->offset);
    sb_puts(&line, ", bytes: ");
    put_expr(&line, k, b->bytes);
    sb_printf(&line, ", live: [%d, %d]", b->first_op, b->last_op);
    if (b->in_place_of >= 0)
      sb_printf(&line, ", in_place_of: %s", k->tensors[b->in_place_of].name);
    if (plan->total_static < 0)
      sb_printf(&line, ", slot: %d", b->slot);
    sb_putc(&line, '}');
    put_line(out, &line);
  }
  sb_free(&line);
}
