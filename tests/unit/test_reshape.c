/* test_reshape.c - unit-extent dim folding and contiguous-dim collapsing
 * (src/transform/reshape.c): which rewrites are legal, and what the view
 * (reshaped tensors and maps) looks like. That the rewritten loops compute
 * the same values is tests/schedules.test's job. */
#include "transform/reshape.h"
#include "unit.h"

static int dim_named(const StructuredOp *op, const char *name) {
  for (int d = 0; d < op->ndims; d++)
    if (strcmp(op->dims[d].name, name) == 0)
      return d;
  cr_assert_fail("no dim %s", name);
  return -1;
}

static int tensor_named(const Kernel *k, const char *name) {
  for (int t = 0; t < k->ntensors; t++)
    if (strcmp(k->tensors[t].name, name) == 0)
      return t;
  cr_assert_fail("no tensor %s", name);
  return -1;
}

/* The affine expression as text, dims and sizes by name. */
static const char *dim_name_cb(void *ctx, int i) { return ((const StructuredOp *)ctx)->dims[i].name; }
static const char *size_name_cb(void *ctx, int i) {
  (void)ctx;
  static const char *const names[] = {"S0", "S1", "S2", "S3", "S4", "S5", "S6", "S7"};
  return i < 8 ? names[i] : "S?";
}

static char *text_of(const StructuredOp *op, const AffineExpr *e) {
  StrBuf sb = {0};
  AffineNames names = {dim_name_cb, size_name_cb, NULL, (void *)op, false};
  affine_print(&sb, e, &names);
  char *s = strdup(sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

/* The map of the (only) operand of tensor `name` in the view, as "i, j". */
static void expect_map(OpView v, const char *name, const char *want) {
  int t = tensor_named(v.k, name);
  for (int o = 0; o < v.op->noperands; o++) {
    if (v.op->operands[o].tensor != t)
      continue;
    StrBuf sb = {0};
    for (int p = 0; p < v.k->tensors[t].rank; p++) {
      char *s = text_of(v.op, v.op->operands[o].map[p]);
      sb_printf(&sb, "%s%s", p ? ", " : "", s);
      free(s);
    }
    cr_assert_str_eq(sb_cstr(&sb), want, "map of %s", name);
    sb_free(&sb);
    return;
  }
  cr_assert_fail("no operand of %s", name);
}

static OpView auto_view(Unit *u, Reshape *r) {
  const Kernel *k = unit_kernel(u, 0);
  reshape_auto(k, &k->ops[0], r, u->arena);
  OpView v = reshape_apply(k, &k->ops[0], r, u->arena);
  if (setjmp(u->on_error) == 0) /* the view must verify like any op */
    ir_verify_op(&u->diag, v.k, v.op);
  cr_assert_eq(u->diag.errors, 0, "%s", unit_diag(u));
  return v;
}

Test(reshape, folds_unit_dims_and_drops_unit_positions) {
  Unit *u = unit_lowered("def g(A: f32(M, 1, K), W: f32(1, K, N)) -> (C: f32(1, M, N)) {\n"
                         "  C(u, m, n) = std_addf<v, k>(std_mulf(A(m, v, k), W(v, k, n)));\n}");
  const StructuredOp *op = &unit_kernel(u, 0)->ops[0];
  Reshape r;
  OpView v = auto_view(u, &r);
  cr_assert(r.fold[dim_named(op, "u")] && r.fold[dim_named(op, "v")]);
  cr_assert(!r.fold[dim_named(op, "m")] && !r.fold[dim_named(op, "k")]);
  cr_assert_eq(v.op->ndims, 3);
  cr_assert_eq(v.k->tensors[tensor_named(v.k, "A")].rank, 2);
  cr_assert_eq(v.k->tensors[tensor_named(v.k, "C")].rank, 2);
  expect_map(v, "A", "m, k");
  expect_map(v, "W", "k, n");
  /* the original kernel is untouched: the ABI still has the rank-3 tensors */
  cr_assert_eq(unit_kernel(u, 0)->tensors[0].rank, 3);
  cr_assert_eq(op->ndims, 5);
  unit_free(u);
}

Test(reshape, collapses_a_whole_elementwise_domain) {
  Unit *u = unit_lowered("def e(A: f32(N, H, W, C), B: f32(N, H, W, C)) -> (O: f32(N, H, W, C)) {\n"
                         "  O(n, h, w, c) = std_addf(A(n, h, w, c), B(n, h, w, c));\n}");
  Reshape r;
  OpView v = auto_view(u, &r);
  cr_assert_eq(v.op->ndims, 1);
  cr_assert_str_eq(v.op->dims[0].name, "n", "a merged dim keeps its first dim's name");
  char *extent = text_of(v.op, v.op->dims[0].extent);
  cr_assert_str_eq(extent, "S0 * S1 * S2 * S3");
  free(extent);
  for (int t = 0; t < 3; t++)
    cr_assert_eq(v.k->tensors[t].rank, 1);
  expect_map(v, "O", "n");
  unit_free(u);
}

Test(reshape, collapses_across_a_dropped_unit_position) {
  Unit *u = unit_lowered("def s(A: f32(M, 1, N)) -> (O: f32(M, N)) {\n"
                         "  O(m, n) = std_mulf(A(m, 0, n), A(m, 0, n));\n}");
  Reshape r;
  OpView v = auto_view(u, &r);
  cr_assert_eq(v.op->ndims, 1);
  cr_assert_eq(v.k->tensors[tensor_named(v.k, "A")].rank, 1, "both reads of A agree, so A's view is flat");
  unit_free(u);
}

Test(reshape, keeps_what_is_not_contiguous_everywhere) {
  static const struct {
    const char *spec, *a, *b, *why;
  } cases[] = {
      /* a broadcast operand reads only the inner dim */
      {"def b(A: f32(M, N), B: f32(N)) -> (O: f32(M, N)) { O(m, n) = std_addf(A(m, n), B(n)); }", "m", "n",
       "'B' is not indexed by 'm' and then 'n'"},
      /* a transpose reads them in the other order */
      {"def t(I: f32(M, N)) -> (O: f32(N, M)) { O(n, m) = I(m, n); }", "n", "m", "'I' is not indexed"},
      /* a parallel dim and a reduction dim */
      {"def r(A: f32(M, K)) -> (O: f32(M)) { O(m) = std_addf<k>(A(m, k)); }", "m", "k", "iterator kind"},
      /* the inner extent is not the tensor's: a window */
      {"def w(I: f32(M, P), K: f32(Q)) -> (O: f32(M, Q)) { O(m, q) = std_addf<p>(std_mulf(I(m, p), K(q))); }",
       "m", "q", "'I' is not indexed"},
      /* two reads of one tensor disagree */
      {"def d(A: f32(M, N)) -> (O: f32(M, N)) { O(m, n) = std_addf(A(m, n), A(0, n)); }", "m", "n",
       "'A' is not indexed"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    Unit *u = unit_lowered(cases[i].spec);
    const Kernel *k = unit_kernel(u, 0);
    const StructuredOp *op = &k->ops[0];
    Reshape r;
    reshape_identity(&r);
    const char *why = reshape_collapse_problem(k, op, &r, dim_named(op, cases[i].a), dim_named(op, cases[i].b),
                                               u->arena);
    cr_assert_not_null(why, "case %zu: merging %s and %s must be refused", i, cases[i].a, cases[i].b);
    cr_assert_not_null(strstr(why, cases[i].why), "case %zu: '%s' lacks '%s'", i, why, cases[i].why);
    reshape_auto(k, op, &r, u->arena);
    cr_assert_eq(r.next[dim_named(op, cases[i].a)], -1, "case %zu: auto must not merge them", i);
    unit_free(u);
  }
}

Test(reshape, auto_merges_batch_rows_of_a_contraction) {
  Unit *u = unit_lowered("def d(A: f32(B, M, K), W: f32(K, N)) -> (C: f32(B, M, N)) {\n"
                         "  C(b, m, n) = std_addf<k>(std_mulf(A(b, m, k), W(k, n)));\n}");
  const StructuredOp *op = &unit_kernel(u, 0)->ops[0];
  Reshape r;
  OpView v = auto_view(u, &r);
  cr_assert_eq(r.next[dim_named(op, "b")], dim_named(op, "m"));
  cr_assert_eq(r.next[dim_named(op, "n")], -1);
  cr_assert_eq(v.op->ndims, 3);
  expect_map(v, "A", "b, k");
  expect_map(v, "C", "b, n");
  expect_map(v, "W", "k, n");
  unit_free(u);
}

Test(reshape, only_constant_unit_extents_fold) {
  Unit *u = unit_lowered("def f(A: f32(M, 1)) -> (O: f32(M, 1)) { O(m, j) = A(m, j); }");
  const StructuredOp *op = &unit_kernel(u, 0)->ops[0];
  cr_assert_null(reshape_fold_problem(op, dim_named(op, "j")));
  cr_assert_not_null(reshape_fold_problem(op, dim_named(op, "m")));
  unit_free(u);
}
