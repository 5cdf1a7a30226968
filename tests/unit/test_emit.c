/* test_emit.c - the C writer (src/emit/): float literals, C names, OpenMP
 * pragmas, determinism and options, through lgen_compile where possible. */
#include <float.h>
#include <math.h>

#include "unit.h"

/* ---- c_float_literal ---- */

static char *float_literal(double v, ElemType t) {
  StrBuf sb = {0};
  c_float_literal(&sb, v, t);
  char *s = strdup(sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

/* A C hexadecimal floating constant: [-]0x<hex>[.<hex>]p[+-]<dec>, then the
 * suffix. Exact by construction: no decimal rounding. */
static bool is_hex_float(const char *s, const char *suffix) {
  const char *p = s;
  if (*p == '-')
    p++;
  if (strncmp(p, "0x", 2) != 0)
    return false;
  p += 2;
  if (!strchr("0123456789abcdef", *p) || !*p)
    return false;
  while (*p && strchr("0123456789abcdef.", *p))
    p++;
  if (*p++ != 'p')
    return false;
  if (*p == '+' || *p == '-')
    p++;
  if (*p < '0' || *p > '9')
    return false;
  while (*p >= '0' && *p <= '9')
    p++;
  return strcmp(p, suffix) == 0;
}

static void assert_f64_round_trip(double v) {
  char *s = float_literal(v, TY_F64);
  cr_assert(is_hex_float(s, ""), "%.17g printed as \"%s\", not a hex double constant", v, s);
  char *end;
  double back = strtod(s, &end);
  cr_assert_eq(*end, '\0', "strtod stopped early in \"%s\"", s);
  cr_assert_eq(memcmp(&back, &v, sizeof v), 0, "%.17g printed as \"%s\" reads back as %.17g", v, s, back);
  free(s);
}

static void assert_f32_round_trip(float v) {
  char *s = float_literal(v, TY_F32);
  cr_assert(is_hex_float(s, "f"), "%.9g printed as \"%s\", not a hex float constant", (double)v, s);
  s[strlen(s) - 1] = '\0'; /* strtof does not take the suffix */
  char *end;
  float back = strtof(s, &end);
  cr_assert_eq(*end, '\0');
  cr_assert_eq(memcmp(&back, &v, sizeof v), 0, "%.9g printed as \"%s\" reads back as %.9g", (double)v, s,
               (double)back);
  free(s);
}

Test(float_literal, f64_values_round_trip_exactly) {
  static const double values[] = {
      0.0, 1.0, -1.5, 0.1, 1.0 / 3.0, 1e-38, 1e300, -2.5e-300, 123456789.125, DBL_MAX, -DBL_MAX, DBL_MIN,
      4.9406564584124654e-324, /* the smallest denormal */
      2.2250738585072009e-308, /* the largest denormal */
      1e-310,
  };
  for (size_t i = 0; i < sizeof values / sizeof *values; i++)
    assert_f64_round_trip(values[i]);
}

Test(float_literal, f64_negative_zero_keeps_its_sign) {
  char *s = float_literal(-0.0, TY_F64);
  cr_assert_eq(s[0], '-', "-0.0 printed as \"%s\"", s);
  double back = strtod(s, NULL);
  cr_assert_eq(back, 0.0);
  cr_assert(signbit(back), "\"%s\" reads back as +0", s);
  free(s);
  assert_f64_round_trip(-0.0);
}

Test(float_literal, f32_values_round_trip_exactly) {
  static const float values[] = {
      0.0f, 1.0f, -1.5f, 0.1f, 1e-38f, 3.4028235e38f, FLT_MIN, -0.0f,
      1.4e-45f,        /* the smallest f32 denormal */
      1.1754942e-38f,  /* the largest f32 denormal */
      16777217.0f,
  };
  for (size_t i = 0; i < sizeof values / sizeof *values; i++)
    assert_f32_round_trip(values[i]);
}

Test(float_literal, one_tenth_is_not_rounded_through_decimal) {
  char *s = float_literal(0.1, TY_F64);
  cr_assert_str_eq(s, "0x1.999999999999ap-4");
  free(s);
  s = float_literal((float)0.1, TY_F32);
  cr_assert_str_eq(s, "0x1.99999ap-4f");
  free(s);
}

/* inf and nan have no literal: they are spelled as constant divisions. */
static double eval_division(const char *s, const char *suffix) {
  /* "(" num suffix " / " num suffix ")" */
  cr_assert_eq(s[0], '(', "\"%s\"", s);
  char *end;
  volatile double num = strtod(s + 1, &end);
  cr_assert_eq(strncmp(end, suffix, strlen(suffix)), 0, "\"%s\"", s);
  end += strlen(suffix);
  cr_assert_eq(strncmp(end, " / ", 3), 0, "\"%s\"", s);
  volatile double den = strtod(end + 3, &end);
  cr_assert_eq(strncmp(end, suffix, strlen(suffix)), 0, "\"%s\"", s);
  end += strlen(suffix);
  cr_assert_str_eq(end, ")", "\"%s\"", s);
  return num / den;
}

Test(float_literal, infinities_and_nan) {
  const struct {
    double v;
    ElemType t;
    const char *suffix;
  } cases[] = {{INFINITY, TY_F64, ""}, {-INFINITY, TY_F64, ""}, {INFINITY, TY_F32, "f"}, {-INFINITY, TY_F32, "f"},
               {NAN, TY_F64, ""},      {NAN, TY_F32, "f"},       {-NAN, TY_F64, ""}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *s = float_literal(cases[i].v, cases[i].t);
    double got = eval_division(s, cases[i].suffix);
    if (isnan(cases[i].v)) {
      cr_assert(isnan(got), "\"%s\" is not a NaN", s);
    } else {
      cr_assert(isinf(got), "\"%s\" is not infinite", s);
      cr_assert_eq(signbit(got), signbit(cases[i].v), "\"%s\" has the wrong sign", s);
    }
    free(s);
  }
  char *s = float_literal(INFINITY, TY_F64);
  cr_assert_str_eq(s, "(1.0 / 0.0)");
  free(s);
  s = float_literal(-INFINITY, TY_F32);
  cr_assert_str_eq(s, "(-1.0f / 0.0f)");
  free(s);
}

/* ---- names_claim ---- */

static Arena *NA;
static NameTable names;

static void names_setup(void) {
  NA = arena_new();
  names_init(&names, NA);
}
static void names_teardown(void) { arena_free(NA); }

TestSuite(names, .init = names_setup, .fini = names_teardown);

Test(names, plain_names_are_kept) {
  cr_assert_str_eq(names_claim(&names, "A"), "A");
  cr_assert_str_eq(names_claim(&names, "matmul_out"), "matmul_out");
  cr_assert_str_eq(names_claim(&names, "_x9"), "_x9");
}

Test(names, c_and_cpp_keywords_are_avoided) {
  static const char *const kw[] = {"int", "for", "return", "double", "restrict", "inline", "_Bool",
                                   "class", "new", "bool", "template", "and"};
  for (size_t i = 0; i < sizeof kw / sizeof *kw; i++) {
    const char *n = names_claim(&names, kw[i]);
    cr_assert_str_neq(n, kw[i], "keyword %s claimed as is", kw[i]);
    char want[64];
    snprintf(want, sizeof want, "%s_2", kw[i]);
    cr_assert_str_eq(n, want);
  }
}

Test(names, names_of_the_generated_code_are_avoided) {
  cr_assert_str_eq(names_claim(&names, "expf"), "expf_2");
  cr_assert_str_eq(names_claim(&names, "int64_t"), "int64_t_2");
  cr_assert_str_eq(names_claim(&names, "NULL"), "NULL_2");
  cr_assert_str_eq(names_claim(&names, "size_t"), "size_t_2");
}

Test(names, hyphens_become_underscores) {
  cr_assert_str_eq(names_claim(&names, "w-kw"), "w_kw");
  cr_assert_str_eq(names_claim(&names, "a-b-c"), "a_b_c");
  /* w-kw and w_kw would be the same C name */
  cr_assert_str_eq(names_claim(&names, "w_kw"), "w_kw_2");
}

Test(names, collisions_get_numeric_suffixes) {
  cr_assert_str_eq(names_claim(&names, "x"), "x");
  cr_assert_str_eq(names_claim(&names, "x"), "x_2");
  cr_assert_str_eq(names_claim(&names, "x"), "x_3");
  /* a suffix may itself collide with a later claim */
  cr_assert_str_eq(names_claim(&names, "x_2"), "x_2_2");
  cr_assert_str_eq(names_claim(&names, "int"), "int_2");
  cr_assert_str_eq(names_claim(&names, "int_2"), "int_2_2");
  /* every claimed name is distinct */
  cr_assert_eq(names.claimed.len, 6);
  for (int i = 0; i < names.claimed.len; i++)
    for (int j = 0; j < i; j++)
      cr_assert_str_neq(names.claimed.items[i], names.claimed.items[j]);
}

/* Regression (was a bug): is_taken() rejects every name starting with "lgen_", "LGEN_" or
 * "__", and a numeric suffix keeps that prefix, so names_claim loops forever:
 * `def f(__: f32(N)) -> (O: f32(N)) { O(i) = __(i); }` hangs lgen. */
Test(names, reserved_prefixes_get_a_usable_name, .timeout = 5) {
  static const char *const bad[] = {"lgen_x", "LGEN_Y", "__z", "_-w"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    const char *n = names_claim(&names, bad[i]);
    cr_assert(strncmp(n, "lgen_", 5) != 0 && strncmp(n, "LGEN_", 5) != 0 && strncmp(n, "__", 2) != 0,
              "%s claimed as %s", bad[i], n);
  }
}

/* ---- whole files through lgen_compile ---- */

static const char *const matmul = "def matmul(A: f32(M, K), B: f32(K, N)) -> (C: f32(M, N)) {\n"
                                  "  C(m, n) = std_addf<k>(C(m, n), std_mulf(A(m, k), B(k, n)));\n}\n";
static const char *const dot = "def dot(A: f32(M), B: f32(M)) -> (C: f32()) {\n"
                               "  C() = std_addf<m>(C(), std_mulf(A(m), B(m)));\n}\n";

static char *compile_ok(const char *text, const lgen_options *opt) {
  lgen_output out;
  int status = unit_compile(text, opt, &out);
  cr_assert_eq(status, LGEN_OK, "lgen_compile failed (%d):\n%s", status, out.diagnostics);
  cr_assert_not_null(out.c_source);
  char *c = strdup(out.c_source);
  lgen_output_free(&out);
  return c;
}

static lgen_options plain_schedule(void) {
  lgen_options opt = {0};
  opt.schedule = "none";
  return opt;
}

/* Strips leading blanks. */
static const char *trim(const char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  return s;
}

Test(emit, matmul_outer_loop_is_parallel_and_reduction_is_simd) {
  lgen_options opt = plain_schedule();
  char *c = compile_ok(matmul, &opt);
  cr_assert_eq(unit_count(c, "LGEN_OMP(omp parallel for)"), 1, "%s", c);
  char *after = unit_line_after(c, "LGEN_OMP(omp parallel for)");
  cr_assert_not_null(after);
  cr_assert_str_eq(trim(after), "for (int64_t m = 0; m < M; ++m) {", "the parallel loop is \"%s\"", after);
  free(after);
  /* the first loop of the function is the parallel one */
  char *first_for = unit_line_with(strstr(c, "void matmul("), "for (");
  cr_assert_str_eq(trim(first_for), "for (int64_t m = 0; m < M; ++m) {");
  free(first_for);
  /* the reduction over k is a simd loop with a reduction clause */
  char *simd = unit_line_with(c, "reduction(+:");
  cr_assert_not_null(simd, "no reduction clause:\n%s", c);
  cr_assert_not_null(strstr(simd, "LGEN_OMP_SIMD(omp simd reduction(+:"), "%s", simd);
  cr_assert_null(strstr(simd, "parallel"), "the reduction loop is not a parallel loop: %s", simd);
  char *red_loop = unit_line_after(c, "reduction(+:");
  cr_assert_str_eq(trim(red_loop), "for (int64_t k = 0; k < K; ++k) {");
  free(red_loop);
  free(simd);
  free(c);
}

Test(emit, dot_product_reduction_is_never_parallel) {
  lgen_options opt = plain_schedule();
  char *c = compile_ok(dot, &opt);
  cr_assert_null(strstr(c, "omp parallel for"), "a reduction loop got a parallel pragma:\n%s", c);
  cr_assert_not_null(strstr(c, "LGEN_OMP_SIMD(omp simd reduction(+:C_acc))"), "%s", c);
  free(c);
}

Test(emit, parallel_pragmas_on_reductions_always_carry_a_reduction_clause) {
  /* under the default (automatic) schedule too: a parallel loop over a
   * reduction dim without a reduction clause would be a data race */
  static const char *const specs[] = {
      "def dot(A: f32(M), B: f32(M)) -> (C: f32()) { C() = std_addf<m>(C(), std_mulf(A(m), B(m))); }",
      "def s(A: f32(M)) -> (C: f32()) { C() = std_subf<m>(C(), A(m)); }",
      "def p(A: i32(M)) -> (C: i32()) { C() = std_muli<m>(C(), A(m)); }",
      "def t(A: f64(M)) -> (C: f64()) { C() = std_addf<m>(C(), std_mulf(C(), A(m))); }",
  };
  for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
    char *c = compile_ok(specs[i], NULL);
    for (const char *p = c; (p = strstr(p, "omp parallel")); p++) {
      const char *eol = strchr(p, '\n');
      char *pragma = strndup(p, (size_t)(eol - p));
      cr_assert_not_null(strstr(pragma, "reduction("), "spec %zu: a parallel loop over the only (reduction) dim "
                                                       "has no reduction clause: %s\n%s", i, pragma, c);
      free(pragma);
    }
    free(c);
  }
}

Test(emit, non_associative_reduction_gets_no_reduction_clause) {
  lgen_options opt = plain_schedule();
  /* C = C - A(m): subtraction is not a reduction operator */
  char *c = compile_ok("def s(A: f32(M)) -> (C: f32()) { C() = std_subf<m>(C(), A(m)); }", &opt);
  cr_assert_null(strstr(c, "reduction("), "%s", c);
  cr_assert_null(strstr(c, "omp parallel"), "%s", c);
  free(c);
}

Test(emit, output_is_deterministic) {
  const char *text = "def conv(I: f32(N, IH, IW, C), K: f32(KH, KW, C, F)) -> (O: f32(N, OH, OW, F))\n"
                     "  attr(strides: 2xi64, dilations: 2xi64) {\n"
                     "  O(n, oh, ow, f) = std_addf<kh, kw, c>(O(n, oh, ow, f),\n"
                     "    std_mulf(I(n, oh * strides[0] + kh * dilations[0], ow * strides[1] + kw * dilations[1], c),\n"
                     "             K(kh, kw, c, f)));\n}\n"
                     "def mx(I: f16(M, N)) -> (O: f16(M)) { O(m) = std_maxf<n>(O(m), std_exp(I(m, n))); }\n";
  lgen_options opts[3] = {{0}, {0}, {0}};
  opts[1].schedule = "none";
  opts[2].checks = 1;
  opts[2].prefix = "p_";
  for (int o = 0; o < 3; o++) {
    lgen_output a, b;
    cr_assert_eq(unit_compile(text, &opts[o], &a), LGEN_OK, "%s", a.diagnostics);
    cr_assert_eq(unit_compile(text, &opts[o], &b), LGEN_OK);
    cr_assert_str_eq(a.c_source, b.c_source, "options %d: two compilations gave different C", o);
    cr_assert_str_eq(a.header, b.header);
    cr_assert_str_eq(a.ir, b.ir);
    cr_assert_str_eq(a.op_list, b.op_list);
    cr_assert_str_eq(a.diagnostics, b.diagnostics);
    lgen_output_free(&a);
    lgen_output_free(&b);
  }
}

Test(emit, prefix_option) {
  lgen_options opt = {0};
  opt.prefix = "mylib_";
  opt.header_name = "kernels.h";
  lgen_output out;
  cr_assert_eq(unit_compile(matmul, &opt, &out), LGEN_OK, "%s", out.diagnostics);
  cr_assert_not_null(strstr(out.c_source, "void mylib_matmul("), "%s", out.c_source);
  cr_assert_null(strstr(out.c_source, "void matmul("), "%s", out.c_source);
  cr_assert_not_null(strstr(out.header, "void mylib_matmul("), "%s", out.header);
  cr_assert_not_null(strstr(out.c_source, "#include \"kernels.h\""), "%s", out.c_source);
  cr_assert_not_null(strstr(out.header, "#ifndef MYLIB_KERNELS_H\n#define MYLIB_KERNELS_H\n"), "%s", out.header);
  /* the IR and op list keep the op's own name */
  cr_assert_not_null(strstr(out.ir, "kernel @matmul"), "%s", out.ir);
  cr_assert_null(strstr(out.ir, "mylib_"));
  cr_assert_null(strstr(out.op_list, "mylib_"));
  lgen_output_free(&out);
  /* without a prefix, the function is the op name */
  lgen_output plain;
  cr_assert_eq(unit_compile(matmul, NULL, &plain), LGEN_OK);
  cr_assert_not_null(strstr(plain.c_source, "void matmul("));
  cr_assert_null(strstr(plain.c_source, "mylib_"));
  lgen_output_free(&plain);
}

Test(emit, parameters_named_like_keywords_are_renamed) {
  lgen_options opt = plain_schedule();
  char *c = compile_ok("def f(int: f32(N), for: f32(N)) -> (return: f32(N)) attr(static: i64) {\n"
                       "  return(do) = std_addf(int(do), for(do));\n}",
                       &opt);
  /* the signature wraps at 100 columns, its second line under the first parameter */
  cr_assert_not_null(strstr(c, "void f(const float *restrict int_2, const float *restrict for_2, "
                               "float *restrict return_2,\n       int64_t N, int64_t static_2)"),
                     "%s", c);
  cr_assert_not_null(strstr(c, "return_2[do_2] = int_2[do_2] + for_2[do_2];"), "%s", c);
  free(c);
}

Test(emit, failed_compilation_sets_only_diagnostics) {
  lgen_output out;
  int status = unit_compile("def f(A: f32(M)) -> (C: f32(M)) { C(m) = std_foo(A(m)); }", NULL, &out);
  cr_assert_eq(status, LGEN_INPUT_ERROR);
  cr_assert_null(out.c_source);
  cr_assert_null(out.header);
  cr_assert_null(out.ir);
  cr_assert_eq(out.errors, 1);
  cr_assert_not_null(strstr(out.diagnostics, "t.tc:1:42: error: unknown operation 'std_foo'"), "%s",
                     out.diagnostics);
  lgen_output_free(&out);
  cr_assert_null(out.diagnostics, "lgen_output_free clears the struct");
}

/* Regression (was a bug): with --checks, a tensor used only for its shape is named only
 * inside a check's message string; emit_kernel's mentions_identifier() sees
 * the name in the string and omits `(void)K;`, so -Wunused-parameter fires
 * (`gcc -Wall -Wextra -Werror` rejects the file). */
Test(emit, shape_only_tensor_is_voided_under_checks) {
  lgen_options opt = plain_schedule();
  opt.checks = 1;
  char *c = compile_ok("def pool(I: f32(N, W), K: f32(KW)) -> (O: f32(N)) {\n"
                       "  O(n) = std_addf<kw>(O(n), I(n, kw));\n}\n",
                       &opt);
  cr_assert_not_null(strstr(c, "LGEN_CHECK_FAILED(\"pool: K dimension 0"), "the check names K:\n%s", c);
  cr_assert_not_null(strstr(c, "(void)K;"), "K is never read but not voided:\n%s", c);
  free(c);
}

/* Regression (was a bug): without _Float16 (clang 14 on x86-64 C), every file with an f16
 * tensor defines both static inline conversions lgen_f16_to_f32 and
 * lgen_f32_to_f16, used or not: `clang -Wall -Werror` rejects an f16 copy
 * ("unused function"). */
Test(emit, f16_conversions_only_when_used) {
  char *c = compile_ok("def c(X: f16(N)) -> (Y: f16(N)) { Y(i) = X(i); }", NULL);
  const char *body = strstr(c, "void c(");
  cr_assert_not_null(body);
  if (strstr(c, "lgen_f16_to_f32(uint16_t"))
    cr_assert_not_null(strstr(body, "LGEN_F16_TO_F32("), "lgen_f16_to_f32 is defined but unused:\n%s", c);
  if (strstr(c, "lgen_f32_to_f16(float"))
    cr_assert_not_null(strstr(body, "LGEN_F32_TO_F16("), "lgen_f32_to_f16 is defined but unused:\n%s", c);
  free(c);
}

/* ---- schedule_verify: its backstops behind the schedule file's reader
 * (which refuses an unknown dim, a repeated order entry or an unroll out
 * of range at the YAML entry first), each naming the op ---- */

static void verify_fails(void (*spoil)(Schedule *), const char *want) {
  Unit *u = unit_new("def mm(A: f32(M, K), B: f32(K, N)) -> (C: f32(M, N)) {\n"
                     "  C(m, n) = std_addf<k>(std_mulf(A(m, k), B(k, n)));\n}");
  cr_assert_eq(unit_lower(u), UNIT_OK, "%s", unit_diag(u));
  const Kernel *k = unit_kernel(u, 0);
  Schedule s;
  schedule_none(&k->ops[0], &s);
  if (setjmp(u->on_error) == 0) {
    schedule_verify(k, &k->ops[0], &s, (Loc){0}, &u->diag);
    spoil(&s);
    schedule_verify(k, &k->ops[0], &s, (Loc){0}, &u->diag);
    cr_assert_fail("no error");
  }
  cr_assert_not_null(strstr(unit_diag(u), want), "want '%s' in:\n%s", want, unit_diag(u));
  unit_free(u);
}

static void repeat_order(Schedule *s) { s->order[1] = s->order[0]; }
static void big_unroll(Schedule *s) { s->unroll[2] = 65; }
static void bad_vector_dim(Schedule *s) { s->vector_dim = 3; }
static void negative_tile(Schedule *s) {
  s->nlevels = 1;
  s->tile[0][0] = -4;
}

Test(schedule_verify, loop_order_repeats_a_dim) {
  verify_fails(repeat_order, "error: the loop order of 'mm' must name each of its 3 dims once");
}
Test(schedule_verify, unroll_out_of_range) {
  verify_fails(big_unroll, "error: unroll factor of 'k' in 'mm' must be between 1 and 64, not 65");
}
Test(schedule_verify, negative_tile) {
  verify_fails(negative_tile, "error: tile size of 'm' must be positive");
}
Test(schedule_verify, vector_dim_out_of_range) {
  verify_fails(bad_vector_dim, "error: the vector dim 3 of 'mm' is not one of its 3 dims");
}
