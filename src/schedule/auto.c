/* auto.c - --schedule=auto: decisions from the op's structure and a Target.
 *
 * The op is classified from its maps, iterator types and payload alone:
 *  - a contraction: one output, reductions, payload out = out + a * b over
 *    two inputs (matmul, batch matmul, convolutions, matvec, ...). It gets
 *    BLIS-style blocking: the output's innermost dim (unit stride in the
 *    output) is the vector dim N, the innermost other parallel dim read by
 *    the other input is M; M x N is register blocked, N, K and M are tiled
 *    for L3, L1 and L2, and inputs read through plain dims are packed.
 *  - a window reduction (pooling, depthwise convolution, vector-matrix):
 *    the inputs' innermost dim is parallel and the output's innermost too;
 *    it and the next output dim form a register block across the reductions.
 *  - a copy that reads across rows (a transpose): 32 x 32 tiles.
 *  - anything else: the plain schedule (outer parallel loop, inner simd
 *    loop), with the reduction split across threads when the op has no
 *    parallel dims at all (a dot product, a full sum; not max or min, whose
 *    OpenMP combine may treat NaN differently).
 * Sizes are run-time values, so every choice is a constant from the target;
 * partial tiles are exact, so no choice can be wrong, only slow. */
#include "schedule/schedule.h"

#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"

static const Target targets[] = {
    /* name             vec  regs  L1        L2          L3                threads */
    {"x86-64-avx2", 32, 16, 32 * 1024, 512 * 1024, 16 * 1024 * 1024, 2},
    {"x86-64-avx512", 64, 32, 32 * 1024, 1024 * 1024, 32 * 1024 * 1024, 2},
    {"aarch64-neon", 16, 32, 64 * 1024, 1024 * 1024, 16 * 1024 * 1024, 2},
};

const Target *target_lookup(const char *name) {
  for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
    if (strcmp(targets[i].name, name) == 0)
      return &targets[i];
  return NULL;
}

/* The default is a fixed model, never the build host: output must not
 * depend on the machine lgen runs on. It is the AVX2 model because its
 * register blocks (16 vector registers) also fit an AVX-512 machine, while
 * the AVX-512 model's blocks spill on the many x86-64 machines without
 * AVX-512 (ResNet-18 ran 3x slower on an AVX2 EPYC). The first row. */
const Target *target_default(void) { return &targets[0]; }

void target_names(char *buf, size_t size) {
  size_t at = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof targets / sizeof *targets && at < size; i++)
    at += (size_t)snprintf(buf + at, size - at, "%s%s", i ? ", " : "", targets[i].name);
}

static bool reads_through(const Kernel *k, const StructuredOp *op, int operand, int dim) {
  const Operand *o = &op->operands[operand];
  for (int i = 0; i < k->tensors[o->tensor].rank; i++)
    if (affine_uses_dim(o->map[i], dim))
      return true;
  return false;
}

/* out = out + a * b, with a and b reads of two different inputs. */
static bool is_contraction(const StructuredOp *op, int *a_operand, int *b_operand) {
  int x;
  if (match_reduction(op, 0, &x) != COMBINE_ADD)
    return false;
  const PayloadNode *mul = &op->nodes[x];
  if (mul->kind != PN_OP || (mul->op != SOP_MULF && mul->op != SOP_MULI))
    return false;
  const PayloadNode *a = &op->nodes[mul->args[0]], *b = &op->nodes[mul->args[1]];
  /* look through sign extensions of integer contractions */
  if (a->kind == PN_OP && a->op == SOP_SEXTI32)
    a = &op->nodes[a->args[0]];
  if (b->kind == PN_OP && b->op == SOP_SEXTI32)
    b = &op->nodes[b->args[0]];
  if (a->kind != PN_READ || b->kind != PN_READ || a->operand == b->operand)
    return false;
  *a_operand = a->operand;
  *b_operand = b->operand;
  return true;
}

/* Register block sizes for elements of `elem` bytes: two vectors along the
 * vector dim; rows of accumulators use all but four registers (loads of B,
 * the broadcast of A). */
static void register_block(const Target *t, int elem, int64_t *mr, int64_t *nr) {
  *nr = 2 * (t->vector_bytes / elem);
  *mr = (t->vector_regs - 4) / 2 > 8 ? 8 : (t->vector_regs - 4) / 2;
}

static bool windowed(const Kernel *k, const StructuredOp *op, int d);

static int64_t const_extent(const StructuredOp *op, int d) {
  const AffineExpr *e = op->dims[d].extent;
  return e && e->kind == AE_CONST ? e->value : -1;
}

/* A direct convolution over channels-last activations: out[.., o1, f] +=
 * x[.., o1 * s + k1, c] * w[.., c, f] with static extents, f (N) the
 * contiguous output channel, o1 (M) the output width, and two or more
 * reductions (the window and the input channel). The blocking of ONNX
 * Runtime's NCHWc kernels (mlas snchwc.cpp), from the op's structure:
 *  - the register block is nr output channels (v vectors) by mr output
 *    columns, chosen from the extents: nr divides F (no partial channel
 *    tiles, whose generic path is several times slower), mr divides the
 *    width when it can (7 x 7 maps: partial blocks of 4 + 2 + 1 stream
 *    the filter three times), and the accumulators leave a broadcast
 *    register and two spares (the filter is read by the FMAs from L1);
 *  - F is tiled by nr at level 0 and the input channels by kc, so that the
 *    filter's block for one tile pair (KH x KW x kc x nr) takes about 3/4 of L1;
 *    that block stays in L1 while the whole output plane of the tile
 *    (every row, every column block) is computed on it: the filter streams
 *    from memory once, not once per output row (ResNet-18's 3 x 3 x 512 x
 *    512 filter is 9.4 MB);
 *  - the filter is packed (a constant: at generation time) into those
 *    blocks, contiguous: read in place, its rows lie 4 * F bytes apart and
 *    the 72 rows of a block fell into a few L1 sets;
 *  - threads share out the channel tiles (and the batch); when there are
 *    fewer than two per thread, also the output rows, which then run
 *    outside the input-channel tiles.
 * Measured on a 2-core AMD EPYC (AVX2) against the previous schedule
 * (order: rows, channel tiles, window, channels, columns; no tiles), single
 * 3 x 3 convs of ResNet-18, CPU ms at 1 thread: 56 x 56 x 64 5.7 -> 5.2,
 * 14 x 14 x 256 8.1 -> 4.3, 7 x 7 x 512 43 -> 7.0 (ONNX Runtime: 4.0,
 * 3.5, 4.3). */
static bool direct_conv(const Kernel *k, const StructuredOp *op, const Target *t, Schedule *s, int a, int b, int m,
                        int n, int elem) {
  int64_t F = const_extent(op, n), W = const_extent(op, m);
  int64_t lanes = t->vector_bytes / elem, window = 1, C = -1;
  int c = -1;
  if (F <= 0 || W <= 0)
    return false;
  /* the input channel: the reduction in the innermost index of the input
   * (A); the others make the window */
  const Operand *oa = &op->operands[a];
  int ra = k->tensors[oa->tensor].rank;
  if (ra == 0 || oa->map[ra - 1]->kind != AE_DIM)
    return false;
  c = oa->map[ra - 1]->index;
  if (op->dims[c].kind != ITER_REDUCTION || (C = const_extent(op, c)) <= 0)
    return false;
  for (int d = 0; d < op->ndims; d++) {
    if (op->dims[d].kind != ITER_REDUCTION || d == c)
      continue;
    int64_t e = const_extent(op, d);
    if (e <= 0)
      return false;
    window *= e;
  }
  /* register block: the best (nr, mr) by vector loads and broadcasts per
   * FMA, times the work that partial column blocks waste */
  int64_t budget = t->vector_regs - 3, best_nr = 0, best_mr = 0;
  double best = 1e30;
  for (int64_t nr = 4 * lanes; nr >= 8; nr -= 8) {
    int64_t v = (nr + lanes - 1) / lanes;
    if (F % nr != 0 && !(nr == 2 * lanes && best_nr == 0 && F < 8))
      continue;
    for (int64_t mr = 1; mr <= 8 && v * mr <= budget; mr++) {
      double cost = (double)(v + mr) / (double)(v * mr) * (double)((W + mr - 1) / mr * mr) / (double)W;
      if (cost < best - 1e-9) {
        best = cost;
        best_nr = nr;
        best_mr = mr;
      }
    }
  }
  if (best_nr == 0)
    return false; /* F not a multiple of 8: the generic schedule */
  /* kc: the filter block takes about 3/4 of L1, kc rounded to the nearest
   * multiple of 8. Half of L1 rounded down gave DenseNet's 3 x 3 convs
   * (F = 32: 1152 bytes of filter per channel) kc = 8, a block of a
   * quarter of L1; measured on the avx512 machine, 1 thread, 128 -> 32
   * channels 3 x 3 on 56 x 56, best of 200 (three alternating runs):
   * kc = 8 90-97 GFLOP/s, 16 94-104, 24 104-107, 32 102-106. Filters of
   * 64 channels (ResNet, SqueezeNet) keep kc = 8. */
  int64_t kc = t->l1_bytes * 3 / 4 / (window * best_nr * elem);
  kc = kc < 8 ? 8 : (kc + 4) / 8 * 8;
  if (kc >= C)
    kc = 0; /* the channels in one tile */
  int64_t ftiles = F / best_nr;
  bool rows_parallel = ftiles < 2 * t->threads;
  /* order: the other parallel dims (batch, rows), f, c, the rest */
  int order[LG_MAX_DIMS], len = 0, rows[LG_MAX_DIMS], nrows = 0;
  for (int i = 0; i < op->ndims; i++) {
    int d = s->order[i];
    if (op->dims[d].kind == ITER_PARALLEL && d != m && d != n) {
      /* the batch first, the image's other dims (windowed: rows) later */
      if (windowed(k, op, d))
        rows[nrows++] = d;
      else
        order[len++] = d;
    }
  }
  int batch = len;
  order[len++] = n;
  if (rows_parallel)
    for (int i = 0; i < nrows; i++)
      order[len++] = rows[i];
  order[len++] = c;
  if (!rows_parallel)
    for (int i = 0; i < nrows; i++)
      order[len++] = rows[i];
  order[len++] = m;
  for (int i = 0; i < op->ndims; i++) {
    int d = s->order[i];
    if (op->dims[d].kind == ITER_REDUCTION && d != c)
      order[len++] = d;
  }
  if (len != op->ndims)
    return false;
  memcpy(s->order, order, sizeof(int) * (size_t)op->ndims);
  memset(s->parallel, 0, sizeof s->parallel);
  s->unroll[n] = best_nr;
  s->unroll[m] = best_mr;
  s->vector_dim = n;
  s->nlevels = 1;
  s->tile[0][n] = best_nr;
  s->tile[0][c] = kc;
  if (op->operands[b].tensor < LG_MAX_TENSORS)
    s->pack[op->operands[b].tensor] = true;
  for (int i = 0; i < batch; i++)
    s->parallel[order[i]] = true;
  s->parallel[n] = true;
  if (rows_parallel)
    for (int i = 0; i < nrows; i++)
      s->parallel[rows[i]] = true;
  return true;
}

static bool contraction(const Kernel *k, const StructuredOp *op, const Target *t, Schedule *s) {
  int a, b;
  if (op->nyields != 1 || !is_contraction(op, &a, &b))
    return false;
  const Operand *out = &op->operands[op->yields[0].operand];
  int out_rank = k->tensors[out->tensor].rank;
  if (out_rank == 0)
    return false;
  /* N: the output's innermost dim; B is the input that reads it. */
  const AffineExpr *inner = out->map[out_rank - 1];
  if (inner->kind != AE_DIM)
    return false;
  int n = inner->index;
  if (reads_through(k, op, a, n) && !reads_through(k, op, b, n)) {
    int tmp = a;
    a = b;
    b = tmp;
  }
  if (!reads_through(k, op, b, n) || reads_through(k, op, a, n))
    return false;
  /* M: the innermost other output dim that A reads and B does not. */
  int m = -1;
  for (int i = out_rank - 2; i >= 0 && m < 0; i--) {
    const AffineExpr *e = out->map[i];
    if (e->kind == AE_DIM && reads_through(k, op, a, e->index) && !reads_through(k, op, b, e->index))
      m = e->index;
  }
  if (m < 0)
    return false;

  ElemType type = k->tensors[out->tensor].type;
  int elem = elem_type_bits(type) / 8;
  if (elem < 4)
    return false;
  int64_t mr, nr;
  register_block(t, elem, &mr, &nr);
  bool packed_a = packable_operand(k, op, op->operands[a].tensor) != NULL;
  bool packed_b = packable_operand(k, op, op->operands[b].tensor) != NULL;
  int reductions = 0;
  for (int d = 0; d < op->ndims; d++)
    reductions += op->dims[d].kind == ITER_REDUCTION;
  bool matmul_like = packed_b && reductions == 1;
  if (!matmul_like && packed_b && reductions >= 2 && direct_conv(k, op, t, s, a, b, m, n, elem))
    return true;
  /* Matmul-like ops get BLIS's blocking with the operands' roles mirrored
   * (the vector loads come from B here, the broadcasts from A):
   *  - K tile kc: an A micro-panel (mr x kc) and a B micro-panel (kc x nr)
   *    share about 1.5 x L1;
   *  - N tile nc: 4 x nr. The register tiles of N stream through the
   *    packed B block (kc x nc, well inside L2); without outer parallel
   *    dims, threads share out N's tiles, each packing its own B block
   *    into its own L2. Small blocks keep two threads balanced: measured
   *    at 2 threads, sgemm 2048^3 0.92x OpenBLAS with nc = 128 against
   *    0.82x with a half-L2 nc = 320 shared by threads splitting M, and
   *    skinny 64x4096x1024 1.75x against 1.12x;
   *  - M tile mc: the packed A block (mc x kc) takes a quarter of L3, so B
   *    is packed once per mc rows (rarely more than once).
   * Measured on the avx512 machine: m-outer/n-inner register tiles beat
   * n-outer by 10-20 % at 1024^3-2048^3, since the A micro-panel stays in
   * L1 while B streams from L2. */
  int64_t kc = t->l1_bytes * 3 / 2 / (nr * elem);
  kc = kc > 384 ? 384 : kc < 32 ? 32 : kc;
  int64_t nc = 4 * nr;
  /* A static N of at most two such tiles (an MLP's hidden layers) would
   * leave a second thread idle: one register tile per N tile then gives
   * the threads several (measured on the MLP example at 2 threads) */
  bool small_n = op->dims[n].extent && op->dims[n].extent->kind == AE_CONST &&
                 op->dims[n].extent->value <= 2 * nc;
  /* ... unless M has register tiles enough for every thread (a 1 x 1
   * conv's pixels): then N is one tile, so each pixel's output row is
   * written in one pass, not in N / nr passes over the whole image, each
   * leaving the row's other lines to be fetched again. EfficientNet-B0's
   * 16 -> 96 expansion at 112 x 112 (M 12544, K 16): 1.47 -> 1.07 ms
   * with N one tile, 1 thread. */
  int64_t M_static = const_extent(op, m);
  int64_t n_regs = small_n ? (op->dims[n].extent->value + nr - 1) / nr : 0;
  /* N's register tiles fewer than 2 x threads: the threads shared out M's
   * register tiles already (m_threads below), and still do */
  bool m_shares = M_static > 0 && M_static / mr >= 16 * t->threads && n_regs < 2 * t->threads;
  if (small_n && m_shares)
    nc = n_regs * nr;
  else if (small_n)
    nc = nr;
  /* With such an N, a static K whose whole A micro-panel (mr x K) fits in
   * L1 is not split either: each split stores and reloads C's register
   * blocks once more, and a short last tile (784 = 384 + 384 + 16, the
   * MLP's first layer) runs at a fraction of the peak. Measured
   * on the MLP example (64 x 784 x 256), 1 thread: 0.143 -> 0.139 ms. Not
   * for wide N: sgemm 1024^3 lost 5 % with K whole (its packed A block
   * outgrows L2). */
  for (int d = 0; d < op->ndims && small_n && matmul_like; d++) {
    const AffineExpr *ext = op->dims[d].extent;
    if (op->dims[d].kind != ITER_REDUCTION || !ext || ext->kind != AE_CONST)
      continue;
    if (ext->value > kc && mr * ext->value * elem <= t->l1_bytes)
      kc = ext->value;
    /* K in one tile: an A whose rows run along K is read in place, as its
     * micro-panel is then mr contiguous rows that stay in L1 as the packed
     * one would, and the copy is saved (the MLP's three layers: 1 thread
     * -5 %, 2 threads -8 %) */
    const Operand *oa = &op->operands[a];
    int ra = k->tensors[oa->tensor].rank;
    if (ext->value <= kc && ra > 0 && oa->map[ra - 1]->kind == AE_DIM && oa->map[ra - 1]->index == d)
      packed_a = false;
  }
  int64_t mc = t->l3_bytes / 4 / (kc * elem) / mr * mr;
  mc = mc > 4096 ? 4096 : mc < mr ? mr : mc;

  /* loop order: other parallel dims (batch, outer image dims), then M,
   * the reductions, N for matmul-like ops; N, the reductions, M otherwise
   * (convolutions: their A is not packed, and N's weights stay in L1) */
  int order[LG_MAX_DIMS], len = 0;
  for (int i = 0; i < op->ndims; i++) {
    int d = s->order[i];
    if (op->dims[d].kind == ITER_PARALLEL && d != m && d != n)
      order[len++] = d;
  }
  order[len++] = matmul_like ? m : n;
  for (int i = 0; i < op->ndims; i++)
    if (op->dims[s->order[i]].kind == ITER_REDUCTION)
      order[len++] = s->order[i];
  order[len++] = matmul_like ? n : m;
  memcpy(s->order, order, sizeof(int) * (size_t)op->ndims);

  memset(s->parallel, 0, sizeof s->parallel);
  s->unroll[m] = mr;
  s->unroll[n] = nr;
  s->vector_dim = n;
  if (matmul_like) {
    s->nlevels = 1;
    s->tile[0][n] = nc;
    s->tile[0][m] = mc;
    for (int d = 0; d < op->ndims; d++)
      if (op->dims[d].kind == ITER_REDUCTION)
        s->tile[0][d] = kc;
    /* pack[] covers the first LG_MAX_TENSORS tensors: a big graph's later
     * ones stay unpacked (correct, only slower) */
    if (op->operands[b].tensor < LG_MAX_TENSORS)
      s->pack[op->operands[b].tensor] = true;
    if (packed_a && op->operands[a].tensor < LG_MAX_TENSORS)
      s->pack[op->operands[a].tensor] = true;
  }
  /* Threads: outer parallel dims (batch, image rows), collapsed with the
   * next tile loop; with none, N's tile loop for matmul-like ops (see nc),
   * or the register tiles of N (BLIS's jr loop), fine-grained enough for
   * small images, inside a parallel region. */
  bool outer = false;
  int first = matmul_like ? m : n;
  for (int i = 0; i < op->ndims && op->dims[s->order[i]].kind == ITER_PARALLEL; i++) {
    int d = s->order[i];
    if (d == m || d == n)
      break;
    s->parallel[d] = true;
    outer = true;
  }
  if (outer && s->tile[0][first])
    s->parallel[first] = true; /* collapses with the outer dims */
  /* With few tiles of a static N (a 1 x 1 conv's output channels, its
   * pixels collapsed into M: 16 channels of 55 x 55) and many more register
   * tiles of a static M, the threads share out M's register tiles instead:
   * N's one or two tiles left a thread idle. */
  int64_t N = const_extent(op, n), M = M_static;
  int64_t ntiles = N > 0 ? (N + s->tile[0][n] - 1) / (s->tile[0][n] ? s->tile[0][n] : N) : -1;
  bool m_threads = matmul_like && ntiles > 0 && ntiles < 2 * t->threads && M > 0 && M / mr >= 4 * t->threads * ntiles;
  if (!outer && m_threads)
    s->parallel_reg[m] = true;
  else if (!outer && matmul_like)
    s->parallel[n] = true;
  else if (!outer)
    s->parallel_reg[n] = true;
  return true;
}

/* The dim indexing the innermost position of the input with most dims: the
 * one whose unit stride matters most. -1 if that index is not a plain dim. */
static int innermost_input_dim(const Kernel *k, const StructuredOp *op) {
  const Operand *best = NULL;
  int best_rank = -1;
  for (int o = 0; o < op->noperands; o++) {
    const Operand *operand = &op->operands[o];
    const TensorParam *p = &k->tensors[operand->tensor];
    if (!op_reads_only(k, op, operand->tensor) || operand->shape_only || p->rank <= best_rank)
      continue;
    best = operand;
    best_rank = p->rank;
  }
  if (!best || best_rank == 0)
    return -1;
  const AffineExpr *e = best->map[best_rank - 1];
  return e->kind == AE_DIM ? e->index : -1;
}

/* Reductions over windows (pooling, depthwise convolution, vector-matrix
 * products): when the inputs' innermost dim is parallel and is also the
 * output's innermost, keep a register block of the output (that dim, and the
 * next output dim out) in accumulators across the reduction loops. */
/* Whether some input reads dim d in an index that also moves with a
 * reduction dim: a sliding window (ow + kw). */
static bool windowed(const Kernel *k, const StructuredOp *op, int d) {
  for (int o = 0; o < op->noperands; o++) {
    const Operand *operand = &op->operands[o];
    if (operand->shape_only || !op_reads_only(k, op, operand->tensor))
      continue;
    for (int i = 0; i < k->tensors[operand->tensor].rank; i++)
      for (int r = 0; r < op->ndims; r++)
        if (op->dims[r].kind == ITER_REDUCTION && affine_uses_dim(operand->map[i], d) &&
            affine_uses_dim(operand->map[i], r))
          return true;
  }
  return false;
}

/* The constant step of index e along dim d (1 for `d + k`, 2 for
 * `2 * d + k`, 0 where e does not use d); NO_STEP where e is not linear in d
 * (d inside a division, or times a size). */
enum { NO_STEP = 1 << 30 };
static int64_t index_step(const AffineExpr *e, int d) {
  int64_t a, b;
  switch (e->kind) {
  case AE_DIM:
    return e->index == d;
  case AE_CONST:
  case AE_SIZE:
  case AE_ATTR:
    return 0;
  case AE_NEG:
    a = index_step(e->lhs, d);
    return a == NO_STEP ? a : -a;
  case AE_ADD:
  case AE_SUB:
    a = index_step(e->lhs, d);
    b = index_step(e->rhs, d);
    if (a == NO_STEP || b == NO_STEP)
      return NO_STEP;
    a = e->kind == AE_ADD ? a + b : a - b;
    return a > -NO_STEP && a < NO_STEP ? a : NO_STEP;
  case AE_MUL:
    if (!affine_uses_dim(e, d))
      return 0;
    if (e->lhs->kind == AE_CONST || e->rhs->kind == AE_CONST) {
      int64_t c = e->lhs->kind == AE_CONST ? e->lhs->value : e->rhs->value;
      a = index_step(e->lhs->kind == AE_CONST ? e->rhs : e->lhs, d);
      return a == NO_STEP || c <= -64 || c >= 64 ? NO_STEP : a * c;
    }
    return NO_STEP;
  default:
    return affine_uses_dim(e, d) ? NO_STEP : 0;
  }
}

/* The vector dim of a window reduction: the output's innermost dim, when it
 * is parallel and the inputs that read it walk it only in their innermost
 * position with a small constant step, plainly (pooling over channels-last
 * activations, a vector-matrix product) or along a window (x[o1 + k1] of a
 * channels-first depthwise conv or pooling, x[2 * o1 + k1] strided). Its
 * consecutive points are then consecutive (or nearly) in memory, and the
 * reductions, whatever their extents, run around a register block of it.
 * Without this, such an op fell to the plain schedule, whose innermost loop
 * is a kernel-width reduction of 3 or 5: vectorised along that, it barely
 * ran vector code at all. -1 if there is no such dim. */
/* The dim d where e is d plus something constant along every dim (`d`,
 * `d + 64`: a slice of a concatenation); -1 if none. */
static int offset_dim(const StructuredOp *op, const AffineExpr *e) {
  int n = -1;
  for (int d = 0; d < op->ndims; d++) {
    int64_t step = index_step(e, d);
    if (step == 0)
      continue;
    if (step != 1 || n >= 0)
      return -1;
    n = d;
  }
  return n;
}

/* The innermost index through which op reads input x, or NULL when x is
 * not such an input (shape only, written, a scalar); *outer is set when
 * one of x's other indices uses dim n. */
static const AffineExpr *innermost_read(const Kernel *k, const StructuredOp *op, const Operand *x, int n,
                                        bool *outer) {
  int r = k->tensors[x->tensor].rank;
  if (x->shape_only || !op_reads_only(k, op, x->tensor) || r == 0)
    return NULL;
  for (int i = 0; i < r - 1; i++)
    *outer |= affine_uses_dim(x->map[i], n);
  return x->map[r - 1];
}

static int window_vector_dim(const Kernel *k, const StructuredOp *op) {
  const Operand *out = &op->operands[op->yields[0].operand];
  int rank = k->tensors[out->tensor].rank;
  if (rank == 0)
    return -1;
  /* the output's innermost index may be offset: a concatenation's second
   * part writes y[..., c + 64], still unit stride along c */
  int n = offset_dim(op, out->map[rank - 1]);
  if (n < 0 || op->dims[n].kind != ITER_PARALLEL)
    return -1;
  bool read = false;
  for (int o = 0; o < op->noperands; o++) {
    bool outer = false;
    const AffineExpr *e = innermost_read(k, op, &op->operands[o], n, &outer);
    if (!e)
      continue;
    if (outer)
      return -1;
    int64_t step = index_step(e, n);
    if (step == NO_STEP || step < 0 || step > 2)
      return -1;
    read |= step > 0;
  }
  return read ? n : -1;
}

/* Whether op reads one tensor only (pooling; not a depthwise convolution,
 * which also reads its weights). */
static bool reads_one_tensor(const Kernel *k, const StructuredOp *op) {
  int read = -1;
  for (int o = 0; o < op->noperands; o++) {
    const Operand *x = &op->operands[o];
    if (x->shape_only || !op_reads_only(k, op, x->tensor) || x->tensor == read)
      continue;
    if (read >= 0)
      return false;
    read = x->tensor;
  }
  return read >= 0;
}

/* The divisor q of the vector dim n's block when some input reads it only
 * through floordiv(n, q) in an index: the gcd of those q (the input channel
 * floordiv(f, F / G) * C + c of a grouped convolution), 0 if none. */
static int64_t vector_divisor(const AffineExpr *e, int n, int64_t q) {
  if (!e)
    return q;
  if (e->kind == AE_FLOORDIV && affine_is_dim(e->lhs, n) && e->rhs->kind == AE_CONST && e->rhs->value > 0) {
    int64_t a = q, b = e->rhs->value;
    while (b) {
      int64_t r = a % b;
      a = b;
      b = r;
    }
    return a;
  }
  return vector_divisor(e->rhs, n, vector_divisor(e->lhs, n, q));
}

/* Whether e uses dim n outside every floordiv(n, q). */
static bool uses_beside_divisions(const AffineExpr *e, int n) {
  if (!e)
    return false;
  if (e->kind == AE_FLOORDIV && affine_is_dim(e->lhs, n) && e->rhs->kind == AE_CONST)
    return false;
  return affine_is_dim(e, n) || uses_beside_divisions(e->lhs, n) || uses_beside_divisions(e->rhs, n);
}

/* The output's innermost dim n when it is parallel and every input reads it
 * in its innermost position only, plainly or through floordiv(n, q) (a
 * grouped convolution over channels-last activations: the input channel
 * floordiv(f, F / G) * C + c); -1 otherwise. */
static int grouped_vector_dim(const Kernel *k, const StructuredOp *op) {
  const Operand *out = &op->operands[op->yields[0].operand];
  int rank = k->tensors[out->tensor].rank;
  if (rank == 0 || out->map[rank - 1]->kind != AE_DIM)
    return -1;
  int n = out->map[rank - 1]->index;
  if (op->dims[n].kind != ITER_PARALLEL)
    return -1;
  bool divided = false;
  for (int o = 0; o < op->noperands; o++) {
    bool outer = false;
    const AffineExpr *e = innermost_read(k, op, &op->operands[o], n, &outer);
    if (!e)
      continue;
    if (outer)
      return -1;
    if (affine_is_dim(e, n) || !affine_uses_dim(e, n))
      continue;
    if (uses_beside_divisions(e, n))
      return -1;
    divided = true;
  }
  return divided ? n : -1;
}

/* Does op read, through its vector dim n and a reduction, a constant
 * tensor that can be packed (a weight matrix)? Then it is marked packed,
 * at generation time, in the layout the loops read it. */
static bool vector_matrix_constant(const Kernel *k, const StructuredOp *op, int n, Schedule *s) {
  for (int o = 0; o < op->noperands; o++) {
    int x = op->operands[o].tensor;
    if (x >= LG_MAX_TENSORS || k->tensors[x].storage != TS_CONST || !packable_operand(k, op, x) ||
        !reads_through(k, op, o, n))
      continue;
    for (int d = 0; d < op->ndims; d++)
      if (op->dims[d].kind == ITER_REDUCTION && reads_through(k, op, o, d)) {
        s->pack[x] = true;
        return true;
      }
  }
  return false;
}

static bool window_reduction(const Kernel *k, const StructuredOp *op, const Target *t, Schedule *s) {
  if (op->nyields != 1)
    return false;
  const Operand *out = &op->operands[op->yields[0].operand];
  const TensorParam *o = &k->tensors[out->tensor];
  int n = innermost_input_dim(k, op);
  if (o->rank > 0 && (n < 0 || op->dims[n].kind != ITER_PARALLEL || !affine_is_dim(out->map[o->rank - 1], n)))
    n = window_vector_dim(k, op);
  if (o->rank > 0 && n < 0)
    n = grouped_vector_dim(k, op);
  if (o->rank == 0 || n < 0 || op->dims[n].kind != ITER_PARALLEL || !affine_is_dim(out->map[o->rank - 1], n))
    return false;
  int elem = elem_type_bits(o->type) / 8;
  if (elem < 4)
    return false;
  int64_t mr, nr;
  register_block(t, elem, &mr, &nr);
  int m = -1, h = -1;
  for (int i = o->rank - 2; i >= 0 && h < 0; i--)
    if (out->map[i]->kind == AE_DIM && out->map[i]->index != n) {
      if (m < 0)
        m = out->map[i]->index;
      else if (out->map[i]->index != m)
        h = out->map[i]->index;
    }
  /* Two windowed output dims (oh, ow of pooling and depthwise convolution):
   * block both, 2 columns by MR / 2 rows, so the vector dim's block covers
   * a 2-D patch of outputs. Measured on the avx512 machine against the
   * MR x NR block over ow alone: depthwise 3x3 0.55-0.60x -> 0.75x oneDNN
   * at one thread, max pooling 1.3-1.5x -> 1.75x. */
  bool patch = m >= 0 && h >= 0 && mr >= 4 && windowed(k, op, m) && windowed(k, op, h);
  /* Pooling over channels-last activations on a target of 16 vector
   * registers (AVX2): every channel of one output point in accumulators (up
   * to half the registers), the window's loops around them, one output
   * point after another. The patch's 12 accumulators of 3 x 2 points were
   * kept in memory by gcc, which does not unroll the points' loops inside
   * the window's: ResNet-18's 3 x 3 / 2 max pool of 64 x 112 x 112 took
   * 1.0-2.2 ms of CPU time a run at one thread, this block 0.23-0.37 ms
   * (AMD EPYC znver3, gcc -O3 -march=native -fopenmp, three alternating
   * runs of 20 each). Ops that read a second tensor (depthwise
   * convolutions' weights) keep the patch: not measured here. */
  int64_t lanes = t->vector_bytes / elem, channels = const_extent(op, n);
  if (t->vector_regs < 32 && !windowed(k, op, n) && reads_one_tensor(k, op) && channels > 0 &&
      channels % lanes == 0 && channels / lanes <= t->vector_regs / 2) {
    patch = false;
    m = -1;
    nr = channels;
  }
  if (!patch)
    h = -1;
  /* A vector dim read through floordiv(n, q) (a grouped convolution's
   * channels, groups of q): a block of gcd(nr, q) channels, aligned, reads
   * one group's input (c_loops.c's block_divisions: a broadcast, not a
   * gather), and the patch is chosen again for the narrower block.
   * RegNet-Y-400MF (groups of 8), avx512 target: its grouped 3x3 convs ran
   * at 2-3.5 GFLOP/s (vgatherqps), 65 % of the model's time. */
  int64_t q = 0, patch_cols = 2;
  for (int o = 0; o < op->noperands; o++) {
    const Operand *x = &op->operands[o];
    if (x->shape_only || !op_reads_only(k, op, x->tensor))
      continue;
    for (int i = 0; i < k->tensors[x->tensor].rank; i++)
      q = vector_divisor(x->map[i], n, q);
  }
  int64_t g = q, rest = nr;
  while (rest) {
    int64_t x = g % rest;
    g = rest;
    rest = x;
  }
  if (q > 0 && q % nr != 0 && g >= 4) { /* blocks of 1 to 3 channels: the gather stays */
    nr = g;
    if (patch) {
      /* rows x columns of accumulators, at most 16 (gcc unrolls no bigger
       * block: 4 x 5 of 8-wide ones stayed in memory) and all but four of
       * the registers, the most of them per point of work (partial blocks
       * at the edges waste some) */
      int64_t vecs = (nr + lanes - 1) / lanes, most = t->vector_regs - 4 < 16 ? t->vector_regs - 4 : 16;
      int64_t H = const_extent(op, h), W = const_extent(op, m), rows = mr / 2;
      double best = 0;
      for (int64_t r = 1; r <= 8; r++)
        for (int64_t c = 2; c <= 8 && r * c * vecs <= most; c++) {
          double waste = (H > 0 ? (double)((H + r - 1) / r * r) / (double)H : 1) *
                         (W > 0 ? (double)((W + c - 1) / c * c) / (double)W : 1);
          double score = (double)(r * c) / waste;
          if (score > best + 1e-9) {
            best = score;
            rows = r;
            patch_cols = c;
          }
        }
      mr = 2 * rows;
    }
  }
  /* order: parallel dims, the reductions, then the register-blocked dims */
  int order[LG_MAX_DIMS], len = 0;
  for (int pass = 0; pass < 3; pass++)
    for (int i = 0; i < op->ndims; i++) {
      int d = s->order[i];
      bool blocked = d == n || d == m || d == h;
      bool reduction = op->dims[d].kind == ITER_REDUCTION;
      if ((pass == 0 && !blocked && !reduction) || (pass == 1 && reduction) || (pass == 2 && blocked))
        order[len++] = d;
    }
  memcpy(s->order, order, sizeof(int) * (size_t)op->ndims);
  memset(s->parallel, 0, sizeof s->parallel);
  s->unroll[n] = nr;
  if (m >= 0)
    s->unroll[m] = patch ? patch_cols : mr;
  if (patch)
    s->unroll[h] = mr / 2;
  s->vector_dim = n;
  if (patch) {
    /* threads share out the patch rows (a batch of 1 must not starve them) */
    s->parallel_reg[h] = true;
  } else if (op->dims[s->order[0]].kind == ITER_PARALLEL && s->unroll[s->order[0]] <= 1) {
    s->parallel[s->order[0]] = true;
    if (op->ndims > 1 && op->dims[s->order[1]].kind == ITER_PARALLEL && s->unroll[s->order[1]] <= 1)
      s->parallel[s->order[1]] = true; /* collapse: a batch of 1 must not starve the threads */
  } else if (m >= 0 && s->unroll[m] > 1) {
    /* no outer parallel dim (a plain 2-D conv): threads share out the
     * register tiles of the next dim out, the image's rows */
    s->parallel_reg[m] = true;
  } else if (s->unroll[n] > 1) {
    /* no outer parallel dim: tile the vector dim to give the threads work */
    int64_t tile = nr * 8;
    if (vector_matrix_constant(k, op, n, s)) {
      /* A vector times a constant matrix (a classifier's last layer at
       * batch 1): the matrix is laid out at generation time as the loops
       * read it, nr columns after nr columns along K, and each block keeps
       * twice the accumulators, so consecutive FMAs do not wait on each
       * other and the matrix streams from contiguous memory instead of
       * one cache line per row. ShuffleNet-V2's 1024 -> 1000 layer, avx2
       * target, 1 thread (thread-CPU time under load): 0.22-0.35 ->
       * 0.17-0.21 ms. */
      s->unroll[n] = 2 * nr;
    }
    s->nlevels = 1;
    s->tile[0][n] = tile;
    s->parallel[n] = true;
    int reorder[LG_MAX_DIMS], r = 0;
    reorder[r++] = n;
    for (int i = 0; i < op->ndims; i++)
      if (s->order[i] != n)
        reorder[r++] = s->order[i];
    memcpy(s->order, reorder, sizeof(int) * (size_t)op->ndims);
  }
  return true;
}

/* Elementwise copies whose input is read across its rows (transposes):
 * square tiles keep both sides' cache lines in use. */
static void transpose_tiles(const Kernel *k, const StructuredOp *op, Schedule *s) {
  const Operand *out = &op->operands[op->yields[0].operand];
  int rank = k->tensors[out->tensor].rank;
  int n = innermost_input_dim(k, op);
  if (rank < 2 || n < 0 || affine_is_dim(out->map[rank - 1], n) || out->map[rank - 1]->kind != AE_DIM)
    return;
  s->nlevels = 1;
  s->tile[0][n] = 32;
  s->tile[0][out->map[rank - 1]->index] = 32;
}

/* Points of the iteration domain when every extent is a constant; -1 if
 * some extent depends on a size symbol. */
int64_t schedule_static_points(const StructuredOp *op) {
  int64_t points = 1;
  for (int d = 0; d < op->ndims; d++) {
    const AffineExpr *e = op->dims[d].extent;
    if (e->kind != AE_CONST)
      return -1;
    points *= e->value;
    if (points > (INT64_C(1) << 40))
      return points;
  }
  return points;
}

/* An op this small finishes in about the time a fork/join of the threads
 * takes (a few microseconds), so it runs on the calling thread: a model
 * graph's softmax over a batch of 64 rows of 10, a bias of 128. */
enum { MIN_PARALLEL_POINTS = 16384 };

bool schedule_worth_threads(int64_t points) { return points < 0 || points > MIN_PARALLEL_POINTS; }

static void drop_parallelism(const StructuredOp *op, Schedule *s) {
  for (int d = 0; d < op->ndims; d++)
    s->parallel[d] = s->parallel_reg[d] = false;
  s->split_reduction = false;
}

static void schedule_auto_parallel(const Kernel *k, const StructuredOp *op, const Target *t, Schedule *s);

void schedule_auto(const Kernel *k, const StructuredOp *op, const Target *t, Schedule *s) {
  schedule_auto_parallel(k, op, t, s);
  int64_t points = schedule_static_points(op);
  if (points >= 0 && points <= MIN_PARALLEL_POINTS)
    drop_parallelism(op, s);
}

static void schedule_auto_parallel(const Kernel *k, const StructuredOp *op, const Target *t, Schedule *s) {
  schedule_none(op, s);
  bool has_parallel = false, has_reduction = false;
  for (int d = 0; d < op->ndims; d++) {
    has_parallel |= op->dims[d].kind == ITER_PARALLEL;
    has_reduction |= op->dims[d].kind == ITER_REDUCTION;
  }
  if (op->nyields == 0 || op->ndims == 0)
    return;
  if (has_reduction && !has_parallel) {
    if (float_sum_or_product(op)) {
      s->split_reduction = true;
      s->parallel[s->order[0]] = true;
    }
    return;
  }
  if (has_reduction && (contraction(k, op, t, s) || window_reduction(k, op, t, s)))
    return;
  if (!has_reduction) {
    /* the output's innermost dim innermost, when every input reads it
     * contiguously too: an op over channels-last activations (the padding
     * copy before a conv) keeps its dims in the logical NCHW order, and its
     * innermost loop was the width, a store with a stride of C */
    int inner = window_vector_dim(k, op);
    if (inner >= 0 && s->order[op->ndims - 1] != inner) {
      int r = 0;
      for (int i = 0; i < op->ndims; i++)
        if (s->order[i] != inner)
          s->order[r++] = s->order[i];
      s->order[r] = inner;
      s->vector_dim = inner;
      memset(s->parallel, 0, sizeof s->parallel);
      s->parallel[s->order[0]] = true;
    }
    transpose_tiles(k, op, s);
  }
  /* plain nests: collapse the two outer parallel loops, so that a leading
   * dim of extent 1 (a batch of one image) still feeds every thread */
  int first = s->order[0], second = op->ndims > 1 ? s->order[1] : -1;
  if (second >= 0 && op->dims[second].kind == ITER_PARALLEL && s->parallel[first] && !s->tile[0][first] &&
      !s->tile[0][second] && s->vector_dim != second)
    s->parallel[second] = true;
  /* a vectorised reduction loop (row sums): four vectors of partial sums, so
   * that consecutive vector adds do not wait on each other's latency */
  if (s->vector_dim >= 0 && op->dims[s->vector_dim].kind == ITER_REDUCTION && float_sum_or_product(op)) {
    /* at most what the loop holds: a constant extent below P gave a main
     * loop of 0 steps and left every point to the scalar remainder */
    int64_t lanes = t->vector_bytes / (elem_type_bits(op->nodes[op->yields[0].value].type) / 8);
    int64_t parts = 4 * lanes;
    const AffineExpr *ext = op->dims[s->vector_dim].extent;
    if (ext && ext->kind == AE_CONST)
      parts = ext->value >= parts ? parts : ext->value / lanes * lanes;
    s->partials = parts > 1 ? parts : 0;
  }
}
