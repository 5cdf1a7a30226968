/* auto.c - --schedule=auto: decisions from the op's structure and a Target.
 *
 * The op is classified from its maps, iterator types and payload alone:
 *  - a contraction: one output, reductions, payload out = out + a * b over
 *    two inputs (matmul, batch matmul, convolutions, matvec, ...). It gets
 *    BLIS-style blocking: the output's innermost dim (unit stride in the
 *    output) is the vector dim N, the innermost other parallel dim read by
 *    the other input is M; M x N is register blocked, N, K and M are tiled
 *    for L3, L1 and L2, and inputs read through plain dims are packed.
 *  - anything else: the plain schedule (outer parallel loop, inner simd
 *    loop), with the reduction split across threads when the op has no
 *    parallel dims at all (a dot product, a full sum).
 * Sizes are run-time values, so every choice is a constant from the target;
 * partial tiles are exact, so no choice can be wrong, only slow. */
#include "schedule/schedule.h"

#include <string.h>

#include "analysis/analysis.h"

static const Target targets[] = {
    /* name             vec  regs  L1        L2          L3                threads */
    {"x86-64-avx512", 64, 32, 32 * 1024, 1024 * 1024, 32 * 1024 * 1024, 2},
    {"x86-64-avx2", 32, 16, 32 * 1024, 512 * 1024, 16 * 1024 * 1024, 2},
    {"aarch64-neon", 16, 32, 64 * 1024, 1024 * 1024, 16 * 1024 * 1024, 2},
};

const Target *target_lookup(const char *name) {
  for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
    if (strcmp(targets[i].name, name) == 0)
      return &targets[i];
  return NULL;
}

/* The default is a fixed model, never the build host: output must not
 * depend on the machine lgen runs on. */
const Target *target_default(void) { return &targets[0]; }

const char *target_names(void) { return "x86-64-avx512, x86-64-avx2, aarch64-neon"; }

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

void schedule_auto(const Kernel *k, const StructuredOp *op, const Target *t, Schedule *s) {
  schedule_none(op, s);
  bool has_parallel = false, has_reduction = false;
  for (int d = 0; d < op->ndims; d++) {
    has_parallel |= op->dims[d].kind == ITER_PARALLEL;
    has_reduction |= op->dims[d].kind == ITER_REDUCTION;
  }
  int x;
  if (has_reduction && !has_parallel) {
    ElemType type = op->nodes[op->yields[0].value].type;
    if (match_reduction(op, 0, &x) != COMBINE_NONE && elem_type_is_float(type) && type != TY_F16) {
      s->split_reduction = true;
      s->parallel[s->order[0]] = true;
    }
    return;
  }
  int a, b;
  if (!has_reduction || op->nyields != 1 || !is_contraction(op, &a, &b))
    return;
  const Operand *out = &op->operands[op->yields[0].operand];
  int out_rank = k->tensors[out->tensor].rank;
  if (out_rank == 0)
    return;
  /* N: the output's innermost dim; B is the input that reads it. */
  const AffineExpr *inner = out->map[out_rank - 1];
  if (inner->kind != AE_DIM)
    return;
  int n = inner->index;
  if (reads_through(k, op, a, n) && !reads_through(k, op, b, n)) {
    int tmp = a;
    a = b;
    b = tmp;
  }
  if (!reads_through(k, op, b, n) || reads_through(k, op, a, n))
    return;
  /* M: the innermost other output dim that A reads and B does not. */
  int m = -1;
  for (int i = out_rank - 2; i >= 0 && m < 0; i--) {
    const AffineExpr *e = out->map[i];
    if (e->kind == AE_DIM && reads_through(k, op, a, e->index) && !reads_through(k, op, b, e->index))
      m = e->index;
  }
  if (m < 0)
    return;

  ElemType type = k->tensors[out->tensor].type;
  int elem = elem_type_bits(type) / 8;
  if (elem < 4)
    return;
  int lanes = t->vector_bytes / elem;
  /* Register block: two vectors of N per row; M rows of accumulators use
   * all but four registers (loads of B, the broadcast of A). */
  int64_t nr = 2 * lanes;
  int64_t mr = (t->vector_regs - 4) / 2 > 8 ? 8 : (t->vector_regs - 4) / 2;
  /* K tile: the B micro-panel (kc x nr) stays in about 1.5 x L1 (it streams
   * once per micro-tile); M tile: the packed A block fills half of L2;
   * N tile: 512 keeps a packed B panel in L3 and gives threads work. */
  int64_t kc = t->l1_bytes * 3 / 2 / (nr * elem);
  kc = kc > 384 ? 384 : kc < 32 ? 32 : kc;
  int64_t mc = t->l2_bytes / 2 / (kc * elem) / mr * mr;
  mc = mc > 256 ? 256 : mc < mr ? mr : mc;
  int64_t nc = 512;

  /* loop order: other parallel dims (batch, outer image dims), N, the
   * reductions, M */
  int order[LG_MAX_DIMS], len = 0;
  for (int i = 0; i < op->ndims; i++) {
    int d = s->order[i];
    if (op->dims[d].kind == ITER_PARALLEL && d != m && d != n)
      order[len++] = d;
  }
  order[len++] = n;
  for (int i = 0; i < op->ndims; i++)
    if (op->dims[s->order[i]].kind == ITER_REDUCTION)
      order[len++] = s->order[i];
  order[len++] = m;
  memcpy(s->order, order, sizeof(int) * (size_t)op->ndims);

  memset(s->parallel, 0, sizeof s->parallel);
  s->unroll[m] = mr;
  s->unroll[n] = nr;
  s->vector_dim = n;
  bool packed_a = packable_operand(k, op, op->operands[a].tensor) != NULL;
  bool packed_b = packable_operand(k, op, op->operands[b].tensor) != NULL;
  int reductions = 0;
  for (int d = 0; d < op->ndims; d++)
    reductions += op->dims[d].kind == ITER_REDUCTION;
  bool one_reduction = reductions == 1;
  if (packed_b && one_reduction) {
    /* matmul-like: cache blocking and packing pay */
    s->nlevels = 1;
    s->tile[0][n] = nc;
    s->tile[0][m] = mc;
    for (int d = 0; d < op->ndims; d++)
      if (op->dims[d].kind == ITER_REDUCTION)
        s->tile[0][d] = kc;
    s->pack[op->operands[b].tensor] = true;
    if (packed_a)
      s->pack[op->operands[a].tensor] = true;
  }
  /* the outermost loops feed the threads: every parallel dim ahead of the
   * reductions in the order, collapsed */
  for (int i = 0; i < op->ndims && op->dims[s->order[i]].kind == ITER_PARALLEL && s->order[i] != m; i++) {
    int d = s->order[i];
    if (s->unroll[d] > 1 && !s->tile[0][d])
      break; /* its outermost loop is a register tile loop, deeper in the nest */
    s->parallel[d] = true;
  }
}
