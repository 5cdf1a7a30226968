/* test_verify.c - the IR verifier (src/ir/verify.c): it accepts what the
 * front-end produces and reports hand-corrupted IR as an lgen bug
 * (diag_bug: longjmp with status 2, "internal error (lgen bug)"). */
#include "unit.h"

static const char *const matmul = "def matmul(A: f32(M, K), B: f32(K, N)) -> (C: f32(M, N)) {\n"
                                   "  C(m, n) = std_addf<k>(C(m, n), std_mulf(A(m, k), B(k, n)));\n}";

/* Operand, node and yield layout of the lowered matmul, checked here so the
 * corruptions below hit what they mean to hit:
 *   operands $0 = C[m, n], $1 = A[m, k], $2 = B[k, n]
 *   %0 = read $0, %1 = read $1, %2 = read $2, %3 = mulf %1, %2, %4 = addf %0, %3
 *   yield $0 = %4 */
static Unit *lowered_matmul(void) {
  Unit *u = unit_lowered(matmul);
  StructuredOp *op = &unit_kernel(u, 0)->ops[0];
  cr_assert_eq(op->ndims, 3);
  cr_assert_eq(op->noperands, 3);
  cr_assert_eq(op->nnodes, 5);
  cr_assert_eq(op->nyields, 1);
  cr_assert_eq(op->operands[1].tensor, 0, "$1 reads A");
  cr_assert_eq(op->nodes[3].kind, PN_OP);
  cr_assert_eq(op->nodes[3].op, SOP_MULF);
  cr_assert_eq(op->nodes[4].op, SOP_ADDF);
  cr_assert_eq(op->yields[0].operand, 0);
  cr_assert_eq(op->yields[0].value, 4);
  cr_assert_eq(unit_verify(u), UNIT_OK, "the uncorrupted kernel verifies:\n%s", unit_diag(u));
  return u;
}

static void expect_bug(Unit *u, const char *needle) {
  int errors = u->diag.errors;
  int status = unit_verify(u);
  const char *d = unit_diag(u);
  cr_assert_eq(status, UNIT_BUG, "expected diag_bug (status 2), got %d:\n%s", status, d);
  cr_assert_eq(u->diag.errors, errors + 1, "a bug counts as an error");
  cr_assert_not_null(strstr(d, "lgen: internal error (lgen bug): "), "%s", d);
  cr_assert_not_null(strstr(d, needle), "expected \"%s\" in:\n%s", needle, d);
  cr_assert_null(strstr(d, ": error: "), "a bug is not reported as a user error:\n%s", d);
  unit_free(u);
}

static StructuredOp *op0(Unit *u) { return &unit_kernel(u, 0)->ops[0]; }

Test(verify, accepts_lowered_kernels) {
  static const char *const specs[] = {
      "def matmul(A: f32(M, K), B: f32(K, N)) -> (C: f32(M, N)) {\n"
      "  C(m, n) = std_addf<k>(std_mulf(A(m, k), B(k, n)));\n}",
      "def conv(I: f32(N, IH, IW, C), K: f32(KH, KW, C, F)) -> (O: f32(N, OH, OW, F))\n"
      "  attr(strides: 2xi64, dilations: 2xi64) {\n"
      "  O(n, oh, ow, f) = std_addf<kh, kw, c>(O(n, oh, ow, f),\n"
      "    std_mulf(I(n, oh * strides[0] + kh * dilations[0], ow * strides[1] + kw * dilations[1], c),\n"
      "             K(kh, kw, c, f)));\n}",
      "def pool(I: f32(N, IH, IW, C), K: f32(KH, KW)) -> (O: f32(N, OH, OW, C)) attr(s: 2xi64) {\n"
      "  O(n, oh, ow, c) = std_maxf<kh, kw>(O(n, oh, ow, c), I(n, oh * s[0] + kh, ow * s[1] + kw, c));\n}",
      "def two(X: f16(N), Y: f16(N)) -> (S: f16(N), D: f32(N), P: f32(M, N)) {\n"
      "  S(i), D(i) = std_addf(X(i), Y(i)), std_fpext(std_subf(X(i), Y(i)));\n"
      "  P(m, n) = std_mulf(D(n), D(n));\n}",
      "def sel(P: i1(N), A: i8(N), B: i8(N)) -> (C: i32(N)) {\n"
      "  C(i) = std_sexti32(std_select(P(i), A(i), B(i)));\n}",
      "def d(I: f32(N)) -> (O: f32(N), Z: f64()) attr(s: i64) {\n"
      "  O(i) = I(i floordiv 2 + i mod s);\n  Z() = std_addf<i>(Z(), std_fpext(O(i)));\n}",
  };
  for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
    Unit *u = unit_lowered(specs[i]);
    int status = unit_verify(u);
    cr_assert_eq(status, UNIT_OK, "spec %zu does not verify:\n%s", i, unit_diag(u));
    cr_assert_eq(u->diag.errors, 0);
    cr_assert_null(strstr(unit_diag(u), "lgen bug"));
    unit_free(u);
  }
}

Test(verify, accepts_shape_only_operand) {
  Unit *u = unit_lowered("def pool(I: f32(N, IH, IW, C), K: f32(KH, KW)) -> (O: f32(N, OH, OW, C)) {\n"
                         "  O(n, oh, ow, c) = std_addf<kh, kw>(O(n, oh, ow, c), I(n, oh + kh, ow + kw, c));\n}");
  const StructuredOp *op = op0(u);
  int shape_only = -1;
  for (int o = 0; o < op->noperands; o++)
    if (op->operands[o].shape_only)
      shape_only = o;
  cr_assert_geq(shape_only, 0, "K is a shape-only operand");
  cr_assert_eq(unit_verify(u), UNIT_OK, "%s", unit_diag(u));
  /* ...which no payload node may read */
  op0(u)->nodes[1].operand = shape_only;
  expect_bug(u, "node 1 reads an invalid operand");
}

Test(verify, dim_out_of_range_in_an_index) {
  Unit *u = lowered_matmul();
  op0(u)->operands[1].map[1] = affine_leaf(u->arena, AE_DIM, 3, 0);
  expect_bug(u, "matmul: affine expression uses dim 3 outside the domain");
}

Test(verify, negative_dim_deep_in_an_index) {
  Unit *u = lowered_matmul();
  AffineExpr *bad = affine_leaf(u->arena, AE_DIM, -1, 0);
  op0(u)->operands[2].map[0] = affine_binary(
      u->arena, AE_ADD, affine_leaf(u->arena, AE_DIM, 2, 0),
      affine_binary(u->arena, AE_MUL, affine_const(u->arena, 2), affine_binary(u->arena, AE_NEG, bad, NULL)));
  expect_bug(u, "uses dim -1 outside the domain");
}

Test(verify, dim_in_a_shape_or_extent) {
  Unit *u = lowered_matmul();
  unit_kernel(u, 0)->tensors[0].shape[1] = affine_leaf(u->arena, AE_DIM, 0, 0);
  expect_bug(u, "shape of A uses a dim");
  u = lowered_matmul();
  op0(u)->dims[2].extent = affine_binary(u->arena, AE_ADD, op0(u)->dims[2].extent, affine_leaf(u->arena, AE_DIM, 0, 0));
  expect_bug(u, "dim k has no extent in sizes");
  u = lowered_matmul();
  op0(u)->dims[0].extent = NULL;
  expect_bug(u, "dim m has no extent in sizes");
}

Test(verify, unknown_size_and_attribute) {
  Unit *u = lowered_matmul();
  cr_assert_eq(unit_kernel(u, 0)->nsizes, 3);
  op0(u)->dims[1].extent = affine_leaf(u->arena, AE_SIZE, 3, 0);
  expect_bug(u, "unknown size symbol 3");
  u = lowered_matmul();
  op0(u)->operands[0].map[0] = affine_binary(u->arena, AE_ADD, affine_leaf(u->arena, AE_DIM, 0, 0),
                                             affine_leaf(u->arena, AE_ATTR, 0, 0));
  expect_bug(u, "unknown attribute 0");
}

Test(verify, non_affine_index) {
  Unit *u = lowered_matmul();
  op0(u)->operands[1].map[0] =
      affine_binary(u->arena, AE_MUL, affine_leaf(u->arena, AE_DIM, 0, 0), affine_leaf(u->arena, AE_DIM, 2, 0));
  expect_bug(u, "product of two dims");
  u = lowered_matmul();
  op0(u)->operands[1].map[0] =
      affine_binary(u->arena, AE_MOD, affine_leaf(u->arena, AE_DIM, 0, 0), affine_leaf(u->arena, AE_DIM, 2, 0));
  expect_bug(u, "division by a dim");
}

Test(verify, operand_names_no_tensor) {
  Unit *u = lowered_matmul();
  op0(u)->operands[2].tensor = 3;
  expect_bug(u, "operand 2 names no tensor");
}

Test(verify, payload_uses_a_later_node) {
  Unit *u = lowered_matmul();
  op0(u)->nodes[3].args[1] = 4; /* mulf %1, %4 where %4 comes after %3 */
  expect_bug(u, "node 3 uses a later node");
  u = lowered_matmul();
  op0(u)->nodes[4].args[0] = 4; /* a node that uses itself */
  expect_bug(u, "node 4 uses a later node");
  u = lowered_matmul();
  op0(u)->nodes[3].args[0] = -1;
  expect_bug(u, "node 3 uses a later node");
}

Test(verify, payload_arity) {
  Unit *u = lowered_matmul();
  op0(u)->nodes[3].nargs = 1;
  expect_bug(u, "node 3 has 1 operands");
  u = lowered_matmul();
  op0(u)->nodes[4].op = SOP_EXP; /* unary, given two operands */
  expect_bug(u, "node 4 has 2 operands");
}

Test(verify, read_of_a_missing_operand) {
  Unit *u = lowered_matmul();
  op0(u)->nodes[2].operand = 3;
  expect_bug(u, "node 2 reads an invalid operand");
}

Test(verify, yield_to_an_input) {
  Unit *u = lowered_matmul();
  op0(u)->yields[0].operand = 1; /* $1 reads A, an input */
  expect_bug(u, "yield 0 does not write an output");
  u = lowered_matmul();
  op0(u)->yields[0].operand = 7;
  expect_bug(u, "yield 0 does not write an output");
}

Test(verify, yield_without_value) {
  Unit *u = lowered_matmul();
  op0(u)->yields[0].value = 5;
  expect_bug(u, "yield 0 has no value");
}

Test(verify, wrong_types) {
  Unit *u = lowered_matmul();
  op0(u)->nodes[1].type = TY_F64; /* a read of f32 A */
  expect_bug(u, "node 1 has the wrong type");
  u = lowered_matmul();
  op0(u)->nodes[4].type = TY_I32; /* the value yielded to f32 C */
  expect_bug(u, "yield 0 has the wrong type");
  u = lowered_matmul();
  unit_kernel(u, 0)->tensors[2].type = TY_F16; /* C itself: its reads no longer match */
  expect_bug(u, "node 0 has the wrong type");
}

Test(verify, later_kernel_and_later_op_are_checked) {
  Unit *u = unit_lowered("def a(X: f32(N)) -> (Y: f32(N)) { Y(i) = X(i); }\n"
                         "def b(X: f32(N)) -> (Y: f32(N), Z: f32(N)) { Y(i) = X(i); Z(j) = Y(j); }");
  cr_assert_eq(unit_verify(u), UNIT_OK, "%s", unit_diag(u));
  Kernel *b = unit_kernel(u, 1);
  cr_assert_eq(b->nops, 2);
  /* Z(j) = Y(j): $0 = Z[j], $1 = Y[j]; point $1 at the input X and yield to it */
  b->ops[1].operands[1].tensor = 0;
  b->ops[1].yields[0].operand = 1;
  expect_bug(u, "b: yield 0 does not write an output");
}
