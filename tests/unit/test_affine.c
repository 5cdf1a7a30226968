/* test_affine.c - affine index expressions (src/ir/affine.c).
 *
 * Leaves print through unit.h's names: dims i j k l, sizes M N K L,
 * attributes a<index>[<elem>]. */
#include "unit.h"

static Arena *A;

static void setup(void) { A = arena_new(); }
static void teardown(void) { arena_free(A); }

TestSuite(affine, .init = setup, .fini = teardown);

static AffineExpr *C(int64_t v) { return affine_const(A, v); }
static AffineExpr *D(int i) { return affine_leaf(A, AE_DIM, i, 0); }
static AffineExpr *S(int i) { return affine_leaf(A, AE_SIZE, i, 0); }
static AffineExpr *AT(int i, int elem) { return affine_leaf(A, AE_ATTR, i, elem); }
static AffineExpr *NEG(AffineExpr *x) { return affine_binary(A, AE_NEG, x, NULL); }
static AffineExpr *ADD(AffineExpr *x, AffineExpr *y) { return affine_binary(A, AE_ADD, x, y); }
static AffineExpr *SUB(AffineExpr *x, AffineExpr *y) { return affine_binary(A, AE_SUB, x, y); }
static AffineExpr *MUL(AffineExpr *x, AffineExpr *y) { return affine_binary(A, AE_MUL, x, y); }
static AffineExpr *FDIV(AffineExpr *x, AffineExpr *y) { return affine_binary(A, AE_FLOORDIV, x, y); }
static AffineExpr *CDIV(AffineExpr *x, AffineExpr *y) { return affine_binary(A, AE_CEILDIV, x, y); }
static AffineExpr *MOD(AffineExpr *x, AffineExpr *y) { return affine_binary(A, AE_MOD, x, y); }

static void assert_prints(const AffineExpr *e, const char *plain, const char *c) {
  char *p = unit_affine_str(e, false), *q = unit_affine_str(e, true);
  cr_assert_str_eq(p, plain, "plain: got \"%s\", want \"%s\"", p, plain);
  cr_assert_str_eq(q, c, "C syntax: got \"%s\", want \"%s\"", q, c);
  free(p);
  free(q);
}

Test(affine, construction) {
  AffineExpr *c = C(-7);
  cr_assert_eq(c->kind, AE_CONST);
  cr_assert_eq(c->value, -7);
  cr_assert_null(c->lhs);
  cr_assert_null(c->rhs);
  AffineExpr *a = AT(3, 5);
  cr_assert_eq(a->kind, AE_ATTR);
  cr_assert_eq(a->index, 3);
  cr_assert_eq(a->elem, 5);
  AffineExpr *s = S(2);
  cr_assert_eq(s->kind, AE_SIZE);
  cr_assert_eq(s->index, 2);
  AffineExpr *sum = ADD(D(1), s);
  cr_assert_eq(sum->kind, AE_ADD);
  cr_assert_eq(sum->lhs->kind, AE_DIM);
  cr_assert_eq(sum->lhs->index, 1);
  cr_assert_eq(sum->rhs, s);
  AffineExpr *n = NEG(sum);
  cr_assert_eq(n->kind, AE_NEG);
  cr_assert_eq(n->lhs, sum);
  cr_assert_null(n->rhs);
}

Test(affine, dim_queries) {
  AffineExpr *e = ADD(MUL(C(2), D(3)), FDIV(D(1), S(0)));
  cr_assert(affine_has_dims(e));
  cr_assert(affine_uses_dim(e, 3));
  cr_assert(affine_uses_dim(e, 1));
  cr_assert_not(affine_uses_dim(e, 0));
  cr_assert_not(affine_uses_dim(e, 2));
  cr_assert_eq(affine_max_dim(e), 3);
  cr_assert_not(affine_is_dim(e, 3));
  cr_assert(affine_is_dim(D(4), 4));
  cr_assert_not(affine_is_dim(D(4), 3));
  cr_assert_not(affine_is_dim(S(4), 4), "a size symbol is not a dim");
  /* no dims: sizes, attributes and constants only */
  AffineExpr *f = SUB(MUL(S(1), AT(0, 2)), NEG(C(1)));
  cr_assert_not(affine_has_dims(f));
  cr_assert_eq(affine_max_dim(f), -1);
  cr_assert_not(affine_uses_dim(f, 0));
  cr_assert_eq(affine_max_dim(NEG(D(0))), 0);
}

Test(affine, equality_is_structural) {
  cr_assert(affine_equal(ADD(D(0), S(1)), ADD(D(0), S(1))));
  cr_assert(affine_equal(NEG(MOD(D(2), C(4))), NEG(MOD(D(2), C(4)))));
  cr_assert(affine_equal(AT(1, 3), AT(1, 3)));
  cr_assert(affine_equal(NULL, NULL));
  /* different leaves */
  cr_assert_not(affine_equal(C(1), C(2)));
  cr_assert_not(affine_equal(D(0), D(1)));
  cr_assert_not(affine_equal(D(0), S(0)), "dim 0 and size 0 are different leaves");
  cr_assert_not(affine_equal(AT(1, 3), AT(1, 4)));
  cr_assert_not(affine_equal(AT(1, 3), AT(2, 3)));
  cr_assert_not(affine_equal(C(0), D(0)));
  /* different operators and operand order: structural, not algebraic */
  cr_assert_not(affine_equal(ADD(D(0), S(1)), SUB(D(0), S(1))));
  cr_assert_not(affine_equal(ADD(D(0), S(1)), ADD(S(1), D(0))));
  cr_assert_not(affine_equal(FDIV(D(0), C(2)), CDIV(D(0), C(2))));
  cr_assert_not(affine_equal(ADD(D(0), D(1)), ADD(D(0), D(2))));
  cr_assert_not(affine_equal(D(0), NULL));
  cr_assert_not(affine_equal(NULL, D(0)));
}

Test(affine, print_leaves) {
  assert_prints(C(42), "42", "42");
  assert_prints(C(-3), "-3", "-3");
  assert_prints(D(0), "i", "i");
  assert_prints(S(1), "N", "N");
  assert_prints(AT(2, 7), "a2[7]", "a2[7]");
}

Test(affine, print_sums_left_associative) {
  assert_prints(SUB(SUB(D(0), D(1)), D(2)), "i - j - k", "i - j - k");
  assert_prints(SUB(D(0), SUB(D(1), D(2))), "i - (j - k)", "i - (j - k)");
  assert_prints(SUB(D(0), ADD(D(1), D(2))), "i - (j + k)", "i - (j + k)");
  assert_prints(ADD(ADD(D(0), D(1)), D(2)), "i + j + k", "i + j + k");
  /* the printer parenthesises any right operand of the same precedence */
  assert_prints(ADD(D(0), ADD(D(1), D(2))), "i + (j + k)", "i + (j + k)");
}

Test(affine, print_products_and_precedence) {
  assert_prints(MUL(ADD(D(0), S(0)), C(2)), "(i + M) * 2", "(i + M) * 2");
  assert_prints(ADD(MUL(D(0), C(2)), D(1)), "i * 2 + j", "i * 2 + j");
  assert_prints(ADD(D(1), MUL(D(0), C(2))), "j + i * 2", "j + i * 2");
  assert_prints(MUL(MUL(C(2), D(0)), S(1)), "2 * i * N", "2 * i * N");
  assert_prints(MUL(C(2), MUL(D(0), S(1))), "2 * (i * N)", "2 * (i * N)");
  assert_prints(MUL(ADD(D(0), S(0)), SUB(D(1), C(1))), "(i + M) * (j - 1)", "(i + M) * (j - 1)");
}

Test(affine, print_negation) {
  assert_prints(NEG(D(0)), "-i", "-i");
  assert_prints(NEG(ADD(D(0), D(1))), "-(i + j)", "-(i + j)");
  assert_prints(NEG(MUL(D(0), C(2))), "-(i * 2)", "-(i * 2)");
  assert_prints(MUL(NEG(D(0)), C(2)), "-i * 2", "-i * 2");
  assert_prints(SUB(D(0), NEG(D(1))), "i - -j", "i - -j");
  /* a negative constant is parenthesised wherever it is an operand */
  assert_prints(SUB(D(0), C(-1)), "i - (-1)", "i - (-1)");
  assert_prints(MUL(C(-2), D(0)), "(-2) * i", "(-2) * i");
  assert_prints(NEG(C(-5)), "-(-5)", "-(-5)");
}

Test(affine, print_divisions) {
  assert_prints(FDIV(D(0), C(2)), "i floordiv 2", "lgen_floordiv(i, 2)");
  assert_prints(CDIV(ADD(D(0), D(1)), S(0)), "(i + j) ceildiv M", "lgen_ceildiv(i + j, M)");
  assert_prints(MOD(D(0), AT(0, 1)), "i mod a0[1]", "lgen_mod(i, a0[1])");
  assert_prints(ADD(FDIV(D(0), C(2)), C(1)), "i floordiv 2 + 1", "lgen_floordiv(i, 2) + 1");
  assert_prints(MUL(FDIV(D(0), C(2)), C(3)), "i floordiv 2 * 3", "lgen_floordiv(i, 2) * 3");
  /* a right operand of the same precedence keeps its parentheses */
  assert_prints(FDIV(D(0), MUL(C(2), S(0))), "i floordiv (2 * M)", "lgen_floordiv(i, 2 * M)");
  assert_prints(MUL(C(3), MOD(D(0), C(4))), "3 * (i mod 4)", "3 * (lgen_mod(i, 4))");
  assert_prints(MOD(FDIV(D(0), C(2)), C(4)), "i floordiv 2 mod 4", "lgen_mod(lgen_floordiv(i, 2), 4)");
  assert_prints(NEG(MOD(D(0), C(4))), "-(i mod 4)", "-(lgen_mod(i, 4))");
}

/* The printed C must mean what the tree means: parse it back with the .tc
 * parser (whose precedence is the same as C's for + - * and unary -) and
 * compare the lowered trees. */
Test(affine, printed_form_parses_back_to_the_same_tree) {
  AffineExpr *cases[] = {
      SUB(SUB(D(0), D(1)), D(2)),
      SUB(D(0), SUB(D(1), D(2))),
      MUL(ADD(D(0), S(0)), C(2)),
      MUL(NEG(D(0)), C(2)),
      NEG(MUL(D(0), C(2))),
      SUB(D(0), NEG(D(1))),
      ADD(D(0), MUL(S(1), SUB(D(1), C(1)))),
      FDIV(ADD(D(0), D(1)), C(3)),
      MOD(FDIV(D(0), C(2)), S(0)),
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    char *plain = unit_affine_str(cases[c], false);
    char text[512];
    snprintf(text, sizeof text, "def f(X: f32(M, N, K)) -> (O: f32(M, N, K)) { O(i, j, k) = X(i, j, k); "
                                "O(i, j, k) = X(i, j, %s); }", plain);
    Unit *u = unit_lowered(text);
    const StructuredOp *op = &unit_kernel(u, 0)->ops[1];
    /* operand 1 is X(i, j, <expr>); the dims i, j, k are 0, 1, 2 as in cases[] */
    cr_assert_eq(op->noperands, 2);
    const AffineExpr *back = op->operands[1].map[2];
    char *again = unit_affine_str(back, false);
    cr_assert(affine_equal(back, cases[c]), "\"%s\" parsed back as \"%s\"", plain, again);
    free(again);
    free(plain);
    unit_free(u);
  }
}

/* Regression (was a bug): a double negation prints as "--i", which C reads as a
 * pre-decrement: `O(i) = A(- -i)` becomes `O[i] = A[--i];` and the loop never
 * ends. */
Test(affine, double_negation_is_not_a_decrement) {
  char *c = unit_affine_str(NEG(NEG(D(0))), true);
  cr_assert_null(strstr(c, "--"), "C syntax \"%s\" contains a decrement", c);
  free(c);
  c = unit_affine_str(NEG(NEG(C(5))), true);
  cr_assert_null(strstr(c, "--"), "C syntax \"%s\" contains a decrement", c);
  free(c);
}
