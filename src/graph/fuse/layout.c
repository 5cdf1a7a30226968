/* layout.c - the memory layout of a model graph's intermediates.
 *
 * ONNX CNNs are channels-first (N, C, H, W), and lgen's window schedules
 * are fastest channels-last: the output channel is the contiguous, vectorised
 * dim of the register block and the input channel the contiguous run of a
 * reduction. An intermediate's layout is lgen's own choice (its producer
 * simply writes it that way and its readers read it that way), so the
 * activations around channels-first windows are stored channels-last, and
 * the graph's inputs and outputs keep their layout: the first op that reads
 * an input (a padded copy) and the last op that writes an output convert as
 * they go.
 *
 * Decided from maps and iterator kinds only. A window op is a reduction
 * whose output (rank >= 3) is indexed by bare parallel dims and which reads
 * an input of the same rank at the output's batch dim, a channel that is a
 * reduction dim or the output's channel, and spatial positions that use
 * the output's spatial dims (windows). Its output and that input are
 * activations. Elementwise ops spread the choice: tensors of one rank that
 * an op reads and writes with the same dim at each position (padded copies
 * add offsets) share their layout. Only workspace tensors move: no
 * parameters, constants, aliases (a reshape needs the row-major order) or
 * tensors of non-structured ops (templates index row-major). */
#include "graph/passes.h"

#include <string.h>

/* The one dim an index uses, as `d` or `d + c`; -1 otherwise. */
static int index_dim(const AffineExpr *e) {
  if (e->kind == AE_DIM)
    return e->index;
  if ((e->kind == AE_ADD || e->kind == AE_SUB) && e->lhs->kind == AE_DIM && e->rhs->kind == AE_CONST)
    return e->lhs->index;
  return -1;
}

static bool uses_dim(const AffineExpr *e, int d) { return affine_uses_dim(e, d); }

/* Whether op is a channels-first window op; *in gets its activation input. */
static bool window_op(const Kernel *k, const StructuredOp *op, int *in) {
  if (op->ext || op->nyields != 1)
    return false;
  bool reduces = false;
  for (int d = 0; d < op->ndims; d++)
    reduces |= op->dims[d].kind == ITER_REDUCTION;
  const Operand *out = &op->operands[op->yields[0].operand];
  int r = k->tensors[out->tensor].rank;
  if (!reduces || r < 3)
    return false;
  for (int i = 0; i < r; i++)
    if (out->map[i]->kind != AE_DIM || op->dims[out->map[i]->index].kind != ITER_PARALLEL)
      return false;
  for (int o = 0; o < op->noperands; o++) {
    const Operand *x = &op->operands[o];
    if (x->tensor == out->tensor || x->shape_only || k->tensors[x->tensor].rank != r)
      continue;
    if (!affine_is_dim(x->map[0], out->map[0]->index))
      continue;
    int ch = index_dim(x->map[1]);
    bool channel = false; /* the input channel: a reduction (a conv), the output's (depthwise, pooling) */
    for (int d = 0; d < op->ndims; d++)
      channel |= uses_dim(x->map[1], d) && (op->dims[d].kind == ITER_REDUCTION || d == out->map[1]->index);
    (void)ch;
    bool spatial = channel;
    for (int i = 2; i < r && spatial; i++)
      spatial = uses_dim(x->map[i], out->map[i]->index) && !uses_dim(x->map[i], out->map[1]->index);
    if (spatial) {
      *in = x->tensor;
      return true;
    }
  }
  return false;
}

static int root(const Kernel *k, int t) {
  while (k->tensors[t].storage == TS_ALIAS)
    t = k->tensors[t].alias_of;
  return t;
}

/* The number of leading dims (after the batch) that alias a gives its
 * memory's channel, when a is a reshape of a workspace tensor [N, C, S...]
 * to [N, C1, ..., Cg, T...]: the same N, C1 * ... * Cg = C, and the T
 * the same elements as the S (equal dims, or equal constant products).
 * Such a view stays a reshape of the same memory when both move their
 * channels last ([N, S..., C] as [N, T..., C1, ..., Cg]): the spatial
 * elements keep their row-major order, and so do the channels. Examples:
 * ConvTranspose's phases split out of its convolution's output channels; a
 * vision transformer's patch embedding flattened to [N, C, tokens]. 0
 * otherwise. */
static int channel_split(const Kernel *k, int a) {
  const TensorParam *v = &k->tensors[a];
  if (v->storage != TS_ALIAS)
    return 0;
  const TensorParam *m = &k->tensors[v->alias_of];
  int r = m->rank;
  if (m->storage != TS_WORKSPACE || r < 3 || v->rank < 2 || !affine_equal(v->shape[0], m->shape[0]) ||
      m->shape[1]->kind != AE_CONST)
    return 0;
  int g = 0; /* the fewest leading dims whose product reaches C */
  int64_t channels = 1;
  while (channels < m->shape[1]->value && g + 1 < v->rank) {
    if (v->shape[++g]->kind != AE_CONST)
      return 0;
    channels *= v->shape[g]->value;
  }
  if (g < 1 || channels != m->shape[1]->value)
    return 0;
  bool same = v->rank - g - 1 == r - 2; /* T is S */
  for (int i = 2; i < r && same; i++)
    same = affine_equal(v->shape[g + i - 1], m->shape[i]);
  if (same)
    return g;
  int64_t s = 1, t = 1; /* or the same count of elements, when constant */
  for (int i = 2; i < r; i++)
    s = m->shape[i]->kind == AE_CONST && s >= 0 ? s * m->shape[i]->value : -1;
  for (int i = g + 1; i < v->rank; i++)
    t = v->shape[i]->kind == AE_CONST && t >= 0 ? t * v->shape[i]->value : -1;
  return s >= 0 && s == t ? g : 0;
}

/* Tensors that must keep the row-major order of their graph shape. */
static bool *pinned_tensors(const Kernel *k, Arena *arena) {
  bool *pinned = arena_alloc(arena, (size_t)k->ntensors + 1);
  for (int t = 0; t < k->ntensors; t++) {
    const TensorParam *p = &k->tensors[t];
    pinned[t] |= p->storage != TS_WORKSPACE || p->rank < 3;
    if (p->storage == TS_ALIAS && !channel_split(k, t))
      pinned[root(k, t)] = true;
  }
  for (int i = 0; i < k->nops; i++)
    if (k->ops[i].ext)
      for (int o = 0; o < k->ops[i].noperands; o++)
        pinned[root(k, k->ops[i].operands[o].tensor)] = true;
  return pinned;
}

/* Whether operands a and b use the same single dim at every position. */
static bool aligned(const Kernel *k, const Operand *a, const Operand *b) {
  int r = k->tensors[a->tensor].rank;
  if (k->tensors[b->tensor].rank != r)
    return false;
  for (int i = 0; i < r; i++) {
    int da = index_dim(a->map[i]), db = index_dim(b->map[i]);
    if (da < 0 || da != db)
      return false;
  }
  return true;
}

static void permute_tensor(Kernel *k, int t, const int *perm, Arena *arena);

/* Moves position 1 (the channel) of tensor t last. */
static void channels_last(Kernel *k, int t, Arena *arena) {
  int r = k->tensors[t].rank, perm[LG_MAX_RANK];
  for (int i = 0; i < r; i++)
    perm[i] = i == 0 ? 0 : i == r - 1 ? 1 : i + 1;
  permute_tensor(k, t, perm, arena);
}

/* Rewrites tensor t to the layout whose position i is old position
 * perm[i]: its shape, every access, the dims' extent sources, and a
 * constant's data. */
static void permute_tensor(Kernel *k, int t, const int *perm, Arena *arena) {
  TensorParam *p = &k->tensors[t];
  int r = p->rank, inv[LG_MAX_RANK];
  for (int i = 0; i < r; i++)
    inv[perm[i]] = i;
  AffineExpr **shape = arena_alloc(arena, sizeof(AffineExpr *) * (size_t)(r + 1));
  for (int i = 0; i < r; i++)
    shape[i] = p->shape[perm[i]];
  if (p->data) { /* static shape: checked by the caller */
    int64_t ext[LG_MAX_RANK], count = 1, size = elem_type_bits(p->type) / 8;
    for (int i = 0; i < r; i++)
      count *= ext[i] = p->shape[i]->value;
    unsigned char *data = arena_alloc(arena, (size_t)(count * size + 1));
    int64_t idx[LG_MAX_RANK] = {0};
    for (int64_t e = 0; e < count; e++) {
      int64_t to = 0; /* e's element (old row-major index idx) in the new order */
      for (int i = 0; i < r; i++)
        to = to * ext[perm[i]] + idx[perm[i]];
      memcpy(data + to * size, (const unsigned char *)p->data + e * size, (size_t)size);
      for (int i = r - 1; i >= 0 && ++idx[i] == ext[i]; i--)
        idx[i] = 0;
    }
    p->data = data;
  }
  p->shape = shape;
  for (int j = 0; j < k->nops; j++) {
    StructuredOp *op = &k->ops[j];
    bool touched = false;
    for (int o = 0; o < op->noperands; o++)
      touched |= op->operands[o].tensor == t;
    if (!touched)
      continue;
    Operand *operands = arena_alloc(arena, sizeof(Operand) * (size_t)(op->noperands + 1));
    memcpy(operands, op->operands, sizeof(Operand) * (size_t)op->noperands);
    for (int o = 0; o < op->noperands; o++) {
      if (operands[o].tensor != t)
        continue;
      AffineExpr **map = arena_alloc(arena, sizeof(AffineExpr *) * (size_t)(r + 1));
      Loc *locs = operands[o].index_locs ? arena_alloc(arena, sizeof(Loc) * (size_t)(r + 1)) : NULL;
      for (int i = 0; i < r; i++) {
        map[i] = operands[o].map[perm[i]];
        if (locs)
          locs[i] = operands[o].index_locs[perm[i]];
      }
      operands[o].map = map;
      operands[o].index_locs = locs;
    }
    Dim *dims = arena_alloc(arena, sizeof(Dim) * (size_t)(op->ndims + 1));
    memcpy(dims, op->dims, sizeof(Dim) * (size_t)op->ndims);
    for (int d = 0; d < op->ndims; d++)
      if (dims[d].extent_operand >= 0 && operands[dims[d].extent_operand].tensor == t && dims[d].extent_pos >= 0)
        dims[d].extent_pos = inv[dims[d].extent_pos];
    op->operands = operands;
    op->dims = dims;
  }
}

/* A window op's constant filter, read at bare dims, is reordered so that
 * the output channel is innermost and the input channel next (F C K... ->
 * K... C F): the register block's vector of output channels is then one
 * contiguous load. Every op that reads the filter reads it reordered. */
/* (f: the output channel's dim; channel: the dims of the input channel's
 * index, both taken before the activations moved) */
static bool filter_channels_last(Kernel *k, const StructuredOp *op, int in, int f, unsigned long long channel,
                                 Arena *arena, PtrVec *decisions) {
  const Operand *out = &op->operands[op->yields[0].operand];
  for (int o = 0; o < op->noperands; o++) {
    const Operand *w = &op->operands[o];
    TensorParam *p = &k->tensors[w->tensor];
    if (p->storage != TS_CONST || !p->data || w->tensor == in || w->tensor == out->tensor || p->rank < 2)
      continue;
    int key[LG_MAX_RANK], perm[LG_MAX_RANK], n = 0;
    bool plain = true;
    for (int i = 0; i < p->rank; i++) {
      plain &= w->map[i]->kind == AE_DIM && p->shape[i]->kind == AE_CONST;
      if (!plain)
        break;
      int d = w->map[i]->index;
      key[i] = d == f ? 2 : (channel >> d & 1) && op->dims[d].kind == ITER_REDUCTION ? 1 : 0;
    }
    if (!plain)
      continue;
    for (int pass = 0; pass < 3; pass++)
      for (int i = 0; i < p->rank; i++)
        if (key[i] == pass)
          perm[n++] = i;
    bool identity = true;
    for (int i = 0; i < p->rank; i++)
      identity &= perm[i] == i;
    if (identity)
      return false;
    permute_tensor(k, w->tensor, perm, arena);
    vec_push(arena, decisions,
             arena_printf(arena, "layout: filter '%s' is stored with its output channel innermost", p->name));
    return true;
  }
  return false;
}

/* Renumbers op's dims so that new dim i is old dim order[i] (the loops of
 * `none` and the heuristics of `auto` follow the dims' order). */
static void reorder_dims(const Kernel *k, StructuredOp *op, const int *order, Arena *arena) {
  int n = op->ndims, inv[LG_MAX_DIMS];
  for (int i = 0; i < n; i++)
    inv[order[i]] = i;
  AffineExpr *refs[LG_MAX_DIMS];
  for (int d = 0; d < n; d++)
    refs[d] = affine_leaf(arena, AE_DIM, inv[d], 0);
  Dim *dims = arena_alloc(arena, sizeof(Dim) * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    dims[i] = op->dims[order[i]];
  Operand *operands = arena_alloc(arena, sizeof(Operand) * (size_t)(op->noperands + 1));
  memcpy(operands, op->operands, sizeof(Operand) * (size_t)op->noperands);
  for (int o = 0; o < op->noperands; o++) {
    int rank = k->tensors[operands[o].tensor].rank;
    AffineExpr **map = arena_alloc(arena, sizeof(AffineExpr *) * (size_t)(rank + 1));
    for (int i = 0; i < rank; i++)
      map[i] = affine_subst_dims(arena, operands[o].map[i], refs);
    operands[o].map = map;
  }
  op->dims = dims;
  op->operands = operands;
}

/* A window op over channels-last activations runs its dims in the order of
 * lgen's channels-last named convs (batch, output spatial, output channel,
 * window, input channel): the input channel is then the innermost,
 * contiguous reduction, as in conv_2d_nhwc_hwcf. */
static void channels_last_dims(const Kernel *k, StructuredOp *op, int f, unsigned long long channel, Arena *arena) {
  const Operand *out = &op->operands[op->yields[0].operand];
  int order[LG_MAX_DIMS], n = 0, r = k->tensors[out->tensor].rank;
  bool used[LG_MAX_DIMS] = {false};
  /* the output's positions in their new order: batch, spatial..., channel */
  for (int i = 0; i < r; i++) {
    int d = out->map[i]->index;
    order[n++] = d;
    used[d] = true;
  }
  for (int pass = 0; pass < 2; pass++) /* window dims, then the input channel */
    for (int d = 0; d < op->ndims; d++)
      if (!used[d] && ((channel >> d & 1) != 0) == (pass == 1)) {
        order[n++] = d;
        used[d] = true;
      }
  (void)f;
  reorder_dims(k, op, order, arena);
}

void choose_layouts(Kernel *k, PtrVec *decisions, Arena *arena) {
  bool *pinned = pinned_tensors(k, arena);
  bool *chosen = arena_alloc(arena, (size_t)k->ntensors + 1);
  int *window_in = arena_alloc(arena, sizeof(int) * (size_t)(k->nops + 1)), *window_f = window_in;
  unsigned long long *window_c = arena_alloc(arena, sizeof(unsigned long long) * (size_t)(k->nops + 1));
  window_f = arena_alloc(arena, sizeof(int) * (size_t)(k->nops + 1));
  for (int i = 0; i < k->nops; i++) {
    window_in[i] = -1;
    int in;
    if (!window_op(k, &k->ops[i], &in))
      continue;
    const StructuredOp *op = &k->ops[i];
    const Operand *out = &op->operands[op->yields[0].operand];
    /* an output that keeps its layout (a graph output) keeps the window's
     * input channels-first too (its padded copy): with the input alone
     * channels-last, no input reads the output's innermost dim in its own
     * innermost index, and the window lost its vector dim */
    if (pinned[out->tensor])
      continue;
    chosen[out->tensor] = true;
    chosen[in] = true;
    window_in[i] = in;
    window_f[i] = out->map[1]->index;
    for (int o = 0; o < op->noperands; o++)
      for (int d = 0; d < op->ndims && op->operands[o].tensor == in; d++)
        if (affine_uses_dim(op->operands[o].map[1], d))
          window_c[i] |= 1ull << d;
  }
  /* spread over elementwise ops until nothing changes */
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = 0; i < k->nops; i++) {
      const StructuredOp *op = &k->ops[i];
      bool pointwise = !op->ext;
      for (int d = 0; d < op->ndims && pointwise; d++)
        pointwise = op->dims[d].kind == ITER_PARALLEL;
      if (!pointwise)
        continue;
      for (int a = 0; a < op->noperands; a++)
        for (int b = 0; b < op->noperands; b++) {
          const Operand *x = &op->operands[a], *y = &op->operands[b];
          if (chosen[x->tensor] && !chosen[y->tensor] && !pinned[y->tensor] && aligned(k, x, y)) {
            chosen[y->tensor] = true;
            changed = true;
          }
        }
    }
  }
  /* the views that split a channel, found before their memory moves */
  int *split = arena_alloc(arena, sizeof(int) * (size_t)(k->ntensors + 1));
  for (int a = 0; a < k->ntensors; a++)
    split[a] = channel_split(k, a);
  for (int t = 0; t < k->ntensors; t++) {
    if (!chosen[t] || pinned[t])
      continue;
    channels_last(k, t, arena);
    vec_push(arena, decisions,
             arena_printf(arena, "layout: '%s' is stored channels-last (its dim 1 innermost)", k->tensors[t].name));
  }
  for (int a = 0; a < k->ntensors; a++) { /* such a view of a moved tensor moves its channels last too */
    int g = split[a], perm[LG_MAX_RANK], r = k->tensors[a].rank, t = k->tensors[a].alias_of;
    if (!g || !chosen[t] || pinned[t])
      continue;
    for (int i = 0; i < r; i++)
      perm[i] = i == 0 ? 0 : i < r - g ? i + g : i - (r - g) + 1;
    permute_tensor(k, a, perm, arena);
  }
  /* then the filters of the window ops whose output moved */
  for (int i = 0; i < k->nops; i++) {
    StructuredOp *op = &k->ops[i];
    if (window_in[i] < 0 || pinned[op->operands[op->yields[0].operand].tensor])
      continue;
    filter_channels_last(k, op, window_in[i], window_f[i], window_c[i], arena, decisions);
    channels_last_dims(k, op, window_f[i], window_c[i], arena);
  }
}
