/* analysis.h - facts derived from the structured-op IR alone.
 *
 * domain.c  chooses each dim's extent from the operands that index it with
 *           the bare dim, records which other operands must agree, and
 *           checks statically that every index stays inside its tensor
 *           (bounds.c does the arithmetic). What it cannot prove becomes a
 *           Precondition, checked at run time under --checks.
 * reduce.c  recognises payloads that combine an output with an associative
 *           operator (sum, product, max, min), for OpenMP reduction clauses.
 * flops.c   counts an op's floating-point operations per domain point. */
#ifndef LGEN_ANALYSIS_H
#define LGEN_ANALYSIS_H

#include "ir/ir.h"

void infer_domain(Diag *diag, Arena *arena, const Kernel *k, StructuredOp *op);

/* ---- bounds.c ---- */
typedef enum { BOUND_PROVEN, BOUND_CALLER, BOUND_UNKNOWN, BOUND_NEVER } BoundVerdict;
/* Can operand `operand`'s index at `pos` leave [0, extent)? BOUND_CALLER: it
 * stays inside when the caller picks sizes that only this relation involves
 * (an input larger than the window it is read through). BOUND_NEVER: out of
 * bounds for every size. *why gets a short explanation for UNKNOWN and NEVER. */
BoundVerdict check_index_bounds(Arena *arena, const Kernel *k, const StructuredOp *op, int operand, int pos,
                                const char **why);

/* ---- reduce.c ---- */
typedef enum { COMBINE_NONE, COMBINE_ADD, COMBINE_MUL, COMBINE_MAX, COMBINE_MIN } Combiner;
/* If yield `y` computes `out = combine(out, X)` with X independent of the
 * output's current value, returns the combiner and sets *x to X's node. */
Combiner match_reduction(const StructuredOp *op, int y, int *x);

/* A plain GEMM, C[m][n] += A * B with A and B possibly transposed: what a
 * BLAS library call can compute (f32 or f64). */
typedef struct {
  int m, n, k;       /* dims */
  int a, b, c;       /* operands */
  bool trans_a;      /* A is stored [k][m] */
  bool trans_b;      /* B is stored [n][k] */
  ElemType type;
} GemmShape;

bool match_gemm(const Kernel *k, const StructuredOp *op, GemmShape *g);

/* ---- flops.c ---- */
/* The float payload ops of one point of op's domain (its init and epilogue
 * not included: they have domains of their own); 0 for an ext op. */
int64_t op_flops_per_point(const StructuredOp *op);

#endif
