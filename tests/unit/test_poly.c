/* test_poly.c - integer polynomials (src/analysis/poly.c) and the index
 * bounds proofs built on them (src/analysis/bounds.c). */
#include "unit.h"

static Arena *A;

static void setup(void) { A = arena_new(); }
static void teardown(void) { arena_free(A); }

TestSuite(poly, .init = setup, .fini = teardown);
TestSuite(bounds);

/* variables: dims i j k, sizes M N K, attribute a[elem] */
#define VI poly_var(PV_DIM, 0, 0)
#define VJ poly_var(PV_DIM, 1, 0)
#define VK poly_var(PV_DIM, 2, 0)
#define VM poly_var(PV_SIZE, 0, 0)
#define VN poly_var(PV_SIZE, 1, 0)
#define VKS poly_var(PV_SIZE, 2, 0)

static const char *var_name(void *ctx, uint32_t v) {
  static char buf[8][32];
  static int next;
  static const char *const dims[] = {"i", "j", "k"}, *const sizes[] = {"M", "N", "K"};
  (void)ctx;
  int idx = poly_var_index(v);
  switch (poly_var_kind(v)) {
  case PV_DIM:
    return idx < 3 ? dims[idx] : "d?";
  case PV_SIZE:
    return idx < 3 ? sizes[idx] : "S?";
  default: {
    char *b = buf[next++ % 8];
    snprintf(b, sizeof buf[0], "a%d[%d]", idx, poly_var_elem(v));
    return b;
  }
  }
}

static char *str(const Poly *p) {
  cr_assert_not_null(p, "unexpected NULL polynomial");
  StrBuf sb = {0};
  poly_print(&sb, p, var_name, NULL);
  char *s = strdup(sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

static void assert_poly(const Poly *p, const char *want) {
  char *s = str(p);
  cr_assert_str_eq(s, want, "got \"%s\", want \"%s\"", s, want);
  free(s);
}

static Poly *K_(int64_t c) { return poly_const(A, c); }
static Poly *V(uint32_t v) { return poly_of_var(A, v); }
static Poly *add(const Poly *x, const Poly *y) { return poly_add(A, x, y, 1); }
static Poly *sub(const Poly *x, const Poly *y) { return poly_add(A, x, y, -1); }
static Poly *mul(const Poly *x, const Poly *y) { return poly_mul(A, x, y); }

/* ---- variables and constants ---- */

Test(poly, variable_encoding_round_trips) {
  uint32_t v = poly_var(PV_ATTR, 77, 1234);
  cr_assert_eq(poly_var_kind(v), PV_ATTR);
  cr_assert_eq(poly_var_index(v), 77);
  cr_assert_eq(poly_var_elem(v), 1234);
  cr_assert_eq(poly_var_kind(VM), PV_SIZE);
  cr_assert_eq(poly_var_index(VN), 1);
  cr_assert_neq(poly_var(PV_DIM, 3, 0), poly_var(PV_SIZE, 3, 0));
  cr_assert_neq(poly_var(PV_ATTR, 1, 0), poly_var(PV_ATTR, 1, 1));
  /* dims sort before sizes, sizes before attributes */
  cr_assert_lt(poly_var(PV_DIM, 4095, 0), poly_var(PV_SIZE, 0, 0));
  cr_assert_lt(poly_var(PV_SIZE, 4095, 0), poly_var(PV_ATTR, 0, 0));
}

Test(poly, constants) {
  Poly *z = K_(0);
  cr_assert(poly_is_zero(z));
  cr_assert_eq(z->nterms, 0, "zero has no terms after normalization");
  assert_poly(z, "0");
  Poly *c = K_(5);
  cr_assert_not(poly_is_zero(c));
  cr_assert_eq(c->nterms, 1);
  cr_assert_eq(c->terms[0].degree, 0);
  cr_assert_eq(c->terms[0].coef, 5);
  assert_poly(c, "5");
  assert_poly(K_(-5), "-5");
  assert_poly(K_(INT64_MIN), "-9223372036854775808");
  cr_assert_not(poly_is_zero(NULL), "NULL (a failed result) is not zero");
}

/* ---- arithmetic ---- */

Test(poly, add_combines_like_terms_and_cancels) {
  Poly *p = add(add(V(VI), V(VM)), add(V(VI), K_(3)));
  cr_assert_eq(p->nterms, 3);
  assert_poly(p, "3 + 2*i + M");
  Poly *z = sub(p, p);
  cr_assert(poly_is_zero(z));
  assert_poly(sub(V(VI), add(V(VI), K_(1))), "-1");
  assert_poly(poly_add(A, V(VJ), V(VM), -4), "j - 4*M");
  assert_poly(poly_add(A, V(VJ), V(VJ), 0), "j");
}

Test(poly, mul_distributes) {
  /* (i + 1)(i - 1) = i^2 - 1: the cross terms cancel */
  Poly *p = mul(add(V(VI), K_(1)), sub(V(VI), K_(1)));
  cr_assert_eq(p->nterms, 2);
  cr_assert_eq(p->terms[0].degree, 0);
  cr_assert_eq(p->terms[0].coef, -1);
  cr_assert_eq(p->terms[1].degree, 2);
  cr_assert_eq(p->terms[1].vars[0], VI);
  cr_assert_eq(p->terms[1].vars[1], VI);
  cr_assert_eq(p->terms[1].coef, 1);
  assert_poly(p, "i*i - 1");
  /* (2M - j)(3 + N) */
  assert_poly(mul(sub(mul(K_(2), V(VM)), V(VJ)), add(K_(3), V(VN))), "-3*j + 6*M - j*N + 2*M*N");
  cr_assert(poly_is_zero(mul(V(VI), K_(0))));
}

Test(poly, mul_is_commutative_after_normalization) {
  Poly *x = add(mul(V(VK), V(VM)), sub(V(VI), K_(7)));
  Poly *y = sub(mul(V(VN), V(VJ)), mul(K_(2), V(VM)));
  char *xy = str(mul(x, y)), *yx = str(mul(y, x));
  cr_assert_str_eq(xy, yx);
  free(xy);
  free(yx);
  /* variables inside a term are sorted */
  Poly *p = mul(V(VM), V(VI));
  cr_assert_eq(p->terms[0].vars[0], VI);
  cr_assert_eq(p->terms[0].vars[1], VM);
}

Test(poly, normalization_sorts_terms_by_degree_then_variables) {
  Poly *p = add(add(mul(V(VN), V(VM)), V(VM)), add(V(VI), K_(-2)));
  cr_assert_eq(p->nterms, 4);
  cr_assert_eq(p->terms[0].degree, 0);
  cr_assert_eq(p->terms[1].vars[0], VI);
  cr_assert_eq(p->terms[2].vars[0], VM);
  cr_assert_eq(p->terms[3].degree, 2);
  for (int t = 0; t < p->nterms; t++)
    cr_assert_neq(p->terms[t].coef, 0);
}

Test(poly, degree_limit_gives_null) {
  Poly *i2 = mul(V(VI), V(VI));
  Poly *i4 = mul(i2, i2);
  cr_assert_not_null(i4, "degree 4 is allowed");
  cr_assert_eq(i4->terms[0].degree, POLY_MAX_DEGREE);
  cr_assert_null(mul(i4, V(VJ)), "degree 5 is over the limit");
  cr_assert_null(mul(i4, add(V(VJ), K_(1))), "one term over the limit fails the product");
}

Test(poly, overflow_gives_null) {
  cr_assert_null(add(K_(INT64_MAX), K_(1)));
  cr_assert_null(sub(K_(INT64_MIN), K_(1)));
  cr_assert_null(poly_add(A, K_(0), K_(INT64_MIN), -1), "scaling INT64_MIN by -1 overflows");
  cr_assert_null(mul(K_(INT64_MAX / 2 + 1), K_(2)));
  cr_assert_null(mul(poly_add(A, K_(0), V(VI), INT64_MAX), add(V(VJ), V(VJ))));
  /* like terms that overflow only when combined */
  Poly *big = poly_add(A, K_(0), V(VI), INT64_MAX);
  cr_assert_not_null(big);
  cr_assert_null(add(big, V(VI)));
  /* just inside the range */
  Poly *edge = add(K_(INT64_MAX - 1), K_(1));
  cr_assert_not_null(edge);
  assert_poly(edge, "9223372036854775807");
}

Test(poly, null_propagates) {
  Poly *x = V(VI);
  cr_assert_null(poly_add(A, NULL, x, 1));
  cr_assert_null(poly_add(A, x, NULL, 1));
  cr_assert_null(poly_mul(A, NULL, x));
  cr_assert_null(poly_mul(A, x, NULL));
  cr_assert_null(poly_subst(A, NULL, VI, x));
  cr_assert_null(poly_subst(A, x, VI, NULL));
  cr_assert_null(poly_coefficient(A, NULL, VI));
}

Test(poly, subst) {
  /* p = 3*i*M + i + 2, i := j + 1  ->  3*j*M + 3*M + j + 3 */
  Poly *p = add(add(mul(K_(3), mul(V(VI), V(VM))), V(VI)), K_(2));
  Poly *q = poly_subst(A, p, VI, add(V(VJ), K_(1)));
  assert_poly(q, "3 + j + 3*M + 3*j*M");
  cr_assert_not(poly_uses(q, VI));
  cr_assert(poly_uses(q, VJ));
  /* a variable that does not occur: unchanged */
  assert_poly(poly_subst(A, p, VK, K_(100)), "2 + i + 3*i*M");
  /* squares: i*i with i := M - 1 */
  assert_poly(poly_subst(A, mul(V(VI), V(VI)), VI, sub(V(VM), K_(1))), "1 - 2*M + M*M");
  /* substituting zero */
  assert_poly(poly_subst(A, p, VI, K_(0)), "2");
  /* a substitution that overflows fails */
  cr_assert_null(poly_subst(A, poly_add(A, K_(0), V(VI), INT64_MAX), VI, K_(2)));
}

Test(poly, coefficient) {
  /* p = 3*i*M + i + 2*j + 5 */
  Poly *p = add(add(mul(K_(3), mul(V(VI), V(VM))), V(VI)), add(mul(K_(2), V(VJ)), K_(5)));
  assert_poly(poly_coefficient(A, p, VI), "1 + 3*M");
  assert_poly(poly_coefficient(A, p, VJ), "2");
  assert_poly(poly_coefficient(A, p, VM), "3*i");
  cr_assert(poly_is_zero(poly_coefficient(A, p, VK)));
}

Test(poly, from_affine) {
  AffineExpr *i = affine_leaf(A, AE_DIM, 0, 0), *m = affine_leaf(A, AE_SIZE, 0, 0);
  AffineExpr *two = affine_const(A, 2);
  /* 2 * (i + M) - i = i + 2*M */
  AffineExpr *e = affine_binary(A, AE_SUB, affine_binary(A, AE_MUL, two, affine_binary(A, AE_ADD, i, m)), i);
  assert_poly(poly_from_affine(A, e), "i + 2*M");
  assert_poly(poly_from_affine(A, affine_binary(A, AE_NEG, m, NULL)), "-M");
  assert_poly(poly_from_affine(A, affine_leaf(A, AE_ATTR, 1, 3)), "a1[3]");
  cr_assert_null(poly_from_affine(A, affine_binary(A, AE_FLOORDIV, i, two)));
  cr_assert_null(poly_from_affine(A, affine_binary(A, AE_CEILDIV, i, two)));
  cr_assert_null(poly_from_affine(A, affine_binary(A, AE_ADD, i, affine_binary(A, AE_MOD, i, two))),
                 "a mod anywhere makes the whole expression unanalysable");
  cr_assert_null(poly_from_affine(A, affine_leaf(A, AE_ATTR, 1, 0x10000)), "element index beyond the encoding");
}

Test(poly, printing) {
  /* a positive constant first, a negative one last */
  assert_poly(sub(K_(1), V(VKS)), "1 - K");
  assert_poly(sub(sub(V(VM), V(VKS)), K_(1)), "M - K - 1");
  assert_poly(poly_add(A, K_(0), V(VI), -1), "-i");
  assert_poly(poly_add(A, V(VM), V(VI), -3), "-3*i + M");
  assert_poly(mul(K_(2), mul(V(VI), V(VM))), "2*i*M");
  assert_poly(poly_add(A, K_(0), V(VJ), INT64_MIN + 1), "-9223372036854775807*j");
  assert_poly(add(V(poly_var(PV_ATTR, 0, 1)), K_(4)), "4 + a0[1]");
}

/* ---- bounds verdicts, from .tc input ---- */

typedef struct {
  BoundVerdict verdict;
  const char *why;
} Verdict;

/* The verdict for index `pos` of the operand that reads tensor `tensor` in
 * the first op of the first kernel of `text`. *diag gets the diagnostics. */
static Verdict verdict_of(const char *text, const char *tensor, int pos, char **diag) {
  Unit *u = unit_lowered(text);
  const Kernel *k = unit_kernel(u, 0);
  const StructuredOp *op = &k->ops[0];
  int found = -1;
  for (int o = 0; o < op->noperands; o++)
    if (strcmp(k->tensors[op->operands[o].tensor].name, tensor) == 0 && !op->operands[o].shape_only)
      found = o;
  cr_assert_geq(found, 0, "no operand reads %s", tensor);
  Verdict v;
  const char *why = NULL;
  v.verdict = check_index_bounds(u->arena, k, op, found, pos, &why);
  cr_assert_not_null(why);
  static char whybuf[256];
  snprintf(whybuf, sizeof whybuf, "%s", why);
  v.why = whybuf;
  if (diag)
    *diag = strdup(unit_diag(u));
  unit_free(u);
  return v;
}

Test(bounds, matmul_indices_are_proven) {
  const char *mm = "def matmul(A: f32(M, K), B: f32(K, N)) -> (C: f32(M, N)) {\n"
                   "  C(m, n) = std_addf<k>(C(m, n), std_mulf(A(m, k), B(k, n)));\n}";
  const char *tensors[] = {"A", "B", "C"};
  for (int t = 0; t < 3; t++)
    for (int pos = 0; pos < 2; pos++) {
      char *diag;
      Verdict v = verdict_of(mm, tensors[t], pos, &diag);
      cr_assert_eq(v.verdict, BOUND_PROVEN, "%s index %d: verdict %d (%s)", tensors[t], pos, v.verdict, v.why);
      cr_assert_str_eq(diag, "", "matmul lowers without diagnostics");
      free(diag);
    }
}

Test(bounds, offset_index_into_a_larger_tensor_is_proven) {
  const char *text = "def shift(I: f32(N + 2)) -> (O: f32(N)) { O(i) = I(i + 2); }";
  cr_assert_eq(verdict_of(text, "I", 0, NULL).verdict, BOUND_PROVEN);
}

Test(bounds, one_past_the_end_is_never_in_bounds) {
  /* i + 3 in a tensor of N + 2: out of bounds at i = N - 1 whatever N is */
  Unit *u = unit_lowered("def shift(I: f32(N + 2)) -> (O: f32(N)) { O(i) = I(i + 2); }");
  Kernel *k = unit_kernel(u, 0);
  StructuredOp *op = &k->ops[0];
  cr_assert_eq(op->noperands, 2);
  cr_assert_eq(op->operands[1].tensor, 0, "$1 reads I");
  op->operands[1].map[0] =
      affine_binary(u->arena, AE_ADD, affine_leaf(u->arena, AE_DIM, 0, 0), affine_const(u->arena, 3));
  const char *why = NULL;
  cr_assert_eq(check_index_bounds(u->arena, k, op, 1, 0, &why), BOUND_NEVER);
  cr_assert_str_eq(why, "it needs -1 >= 0");
  /* ...and the front-end rejects it */
  unit_free(u);
  unit_expect_error(unit_lower, "def shift(I: f32(N + 2)) -> (O: f32(N)) { O(i) = I(i + 3); }", 1, 52,
                    "this index leaves dimension 0 of 'I' whenever the domain is not empty: it needs -1 >= 0");
}

Test(bounds, conv_with_free_input_size_is_the_callers_job) {
  char *diag;
  const char *conv = "def conv_1d(I: f32(IW), K: f32(KW)) -> (O: f32(OW)) {\n"
                     "  O(ow) = std_addf<kw>(O(ow), std_mulf(I(ow + kw), K(kw)));\n}";
  Verdict v = verdict_of(conv, "I", 0, &diag);
  cr_assert_eq(v.verdict, BOUND_CALLER, "verdict %d (%s)", v.verdict, v.why);
  cr_assert_null(strstr(diag, "warning"), "a caller-side requirement is not warned about:\n%s", diag);
  free(diag);
  cr_assert_eq(verdict_of(conv, "K", 0, NULL).verdict, BOUND_PROVEN);
  cr_assert_eq(verdict_of(conv, "O", 0, NULL).verdict, BOUND_PROVEN);
  /* strided and dilated, with attributes */
  const char *strided = "def conv_1d_s(I: f32(IW), K: f32(KW)) -> (O: f32(OW)) attr(s: 2xi64) {\n"
                        "  O(ow) = std_addf<kw>(O(ow), std_mulf(I(ow * s[0] + kw * s[1]), K(kw)));\n}";
  cr_assert_eq(verdict_of(strided, "I", 0, NULL).verdict, BOUND_CALLER);
}

Test(bounds, upstream_conv_1d_same_size_input_is_unknown) {
  /* upstream's conv_1d: the input has the output's extent W, read at w + kw */
  char *diag;
  const char *conv = "ods_def<ConvWOp>:\n"
                     "def conv_1d(I: f32(W), K: f32(KW)) -> (O: f32(W)) {\n"
                     "  O(w) = std_addf<kw>(O(w), std_mulf(I(w + kw), K(kw)));\n}";
  Verdict v = verdict_of(conv, "I", 0, &diag);
  cr_assert_eq(v.verdict, BOUND_UNKNOWN, "verdict %d", v.verdict);
  cr_assert_str_eq(v.why, "it needs 1 - KW >= 0");
  cr_assert_not_null(strstr(diag, "t.tc:3:40: warning: cannot prove that this index stays inside dimension 0 of 'I' "
                                  "for all sizes: it needs 1 - KW >= 0"),
                     "%s", diag);
  free(diag);
}

Test(bounds, negative_offsets) {
  /* by an attribute: unknown (it needs -s >= 0, i.e. s == 0) */
  Verdict v = verdict_of("def f(I: f32(N)) -> (O: f32(N)) attr(s: i64) { O(i) = I(i - s); }", "I", 0, NULL);
  cr_assert_eq(v.verdict, BOUND_UNKNOWN);
  cr_assert_str_eq(v.why, "it needs -s >= 0");
  /* by a constant: always out of bounds */
  unit_expect_error(unit_lower, "def f(I: f32(N)) -> (O: f32(N)) { O(i) = I(i - 1); }", 1, 44,
                    "whenever the domain is not empty: it needs -1 >= 0");
}

Test(bounds, sum_of_two_dims_is_unknown) {
  char *diag;
  Verdict v = verdict_of("def f(I: f32(N), J: f32(M)) -> (O: f32(N, M)) { O(i, j) = std_addf(I(i + j), J(j)); }",
                         "I", 0, &diag);
  cr_assert_eq(v.verdict, BOUND_UNKNOWN);
  cr_assert_str_eq(v.why, "it needs 1 - M >= 0");
  cr_assert_not_null(strstr(diag, "warning: cannot prove"), "%s", diag);
  free(diag);
}

Test(bounds, division_and_unknown_signs) {
  Verdict v = verdict_of("def f(I: f32(N)) -> (O: f32(N)) { O(i) = I(i floordiv 2); }", "I", 0, NULL);
  cr_assert_eq(v.verdict, BOUND_UNKNOWN);
  cr_assert_not_null(strstr(v.why, "floordiv"), "%s", v.why);
  v = verdict_of("def f(I: f32(N)) -> (O: f32(N)) attr(s: i64) { O(i) = I(i * s - i); }", "I", 0, NULL);
  cr_assert_eq(v.verdict, BOUND_UNKNOWN);
  cr_assert_str_eq(v.why, "the sign of a dim's coefficient is unknown");
}

Test(bounds, reversed_index_is_proven) {
  /* N - 1 - i stays in [0, N) */
  Verdict v = verdict_of("def rev(I: f32(N)) -> (O: f32(N)) { O(i) = I(N - 1 - i); }", "I", 0, NULL);
  cr_assert_eq(v.verdict, BOUND_PROVEN, "verdict %d (%s)", v.verdict, v.why);
  /* N - i is N at i = 0 */
  unit_expect_error(unit_lower, "def rev(I: f32(N)) -> (O: f32(N)) { O(i) = I(N - i); }", 1, 46,
                    "this index leaves dimension 0 of 'I'");
}
