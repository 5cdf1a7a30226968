/* test_tc_classic.c - classic Tensor Comprehensions (src/frontend/
 * tc_classic_parse.c, tc_classic.c): telling the format apart, and the IR
 * a few statements become (--emit=ir's text). */
#include "frontend/tc_classic.h"
#include "unit.h"

static void stage_classic(Unit *u) {
  CFile *f = tc_classic_parse(&u->src, u->arena, &u->diag);
  tc_classic_lower(f, &u->module, u->arena, &u->diag);
}

static int unit_lower_classic(Unit *u) { return unit_run(u, stage_classic); }

static bool sniff(const char *text) { return tc_classic_sniff(text, strlen(text)); }

Test(tc_classic, sniff_tells_the_formats_apart) {
  cr_assert(sniff("def f(float(M, K) A) -> (C) { C(m) +=! A(m, k) }"));
  cr_assert(sniff("# comment\n  def f(float eps, float(N) A) -> (C) {}"));
  cr_assert(sniff("// comment\ndef f(uint8 (N) A)"));
  cr_assert(!sniff("def f(A: f32(M, K)) -> (C: f32(M)) { C(m) = std_addf<k>(A(m, k)); }"));
  cr_assert(!sniff("ods_def<MatmulOp>:\ndef matmul(A: f32(M, K))"));
  cr_assert(!sniff("define f(float(M) A)"));
  cr_assert(!sniff("def f("));
  cr_assert(!sniff(""));
  cr_assert(!sniff("--- !LinalgOpConfig\n"));
}

static char *ir_of(const char *text) {
  lgen_output out = {0};
  int status = unit_compile(text, NULL, &out);
  cr_assert_eq(status, 0, "compiling failed:\n%s\n%s", text, out.diagnostics ? out.diagnostics : "");
  char *ir = strdup(out.ir);
  lgen_output_free(&out);
  return ir;
}

Test(tc_classic, reduction_with_bang_starts_from_the_identity) {
  char *ir = ir_of("def m(float(N, K) A) -> (C) {\n  C(n) max=! A(n, r_k)\n}\n");
  cr_assert(strstr(ir, "out C: f32[N]"), "%s", ir);
  cr_assert(strstr(ir, "domain (n: parallel < N, r_k: reduction < K)"), "%s", ir);
  cr_assert(strstr(ir, "= constant -inf : f32"), "%s", ir);
  cr_assert(strstr(ir, "std_maxf"), "%s", ir);
  free(ir);
}

Test(tc_classic, plain_combine_reads_the_output_without_a_fill) {
  char *ir = ir_of("def m(float(N) A) -> (C) {\n  C(n) += A(n)\n}\n");
  cr_assert(!strstr(ir, "constant"), "%s", ir);
  cr_assert(strstr(ir, "read $0"), "%s", ir);
  free(ir);
}

Test(tc_classic, sizes_and_indices_are_i64_values_and_types_promote) {
  char *ir = ir_of("def m(float(N) A) -> (C) {\n  C(n) = A(n) / N + n\n}\n");
  cr_assert(strstr(ir, "= size N : i64"), "%s", ir);
  cr_assert(strstr(ir, "= index n : i64"), "%s", ir);
  cr_assert(strstr(ir, "lgen_cast_signed"), "%s", ir);
  cr_assert(strstr(ir, "std_divf"), "%s", ir);
  free(ir);
}

Test(tc_classic, output_shape_and_type_come_from_the_first_write) {
  char *ir = ir_of("def m(int32(N, K) A) -> (C, D) {\n  C(n, k) = A(n, k) > 0\n  D(k) +=! int64(C(r_n, k))\n}\n");
  cr_assert(strstr(ir, "out C: i1[N, K]"), "%s", ir);
  cr_assert(strstr(ir, "out D: i64[K]"), "%s", ir);
  free(ir);
}

Test(tc_classic, errors_are_located) {
  unit_expect_error(unit_lower_classic, "def f(float(E, D) L, int32(B, X) I) -> (O) {\n  O(i, j) +=! L(I(i, k), j)\n}\n",
                    2, 17, "data-dependent indexing is not supported");
  unit_expect_error(unit_lower_classic, "def f(float(N, K) A) -> (C) {\n  C(n) = A(n, k)\n}\n", 2, 15,
                    "'k' does not index 'C'");
  unit_expect_error(unit_lower_classic, "def f(float(N) A) -> (C) {\n  C(n) = A(n) where n in 1:N\n}\n", 2, 26,
                    "lgen supports ranges that start at 0");
}
