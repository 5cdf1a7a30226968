/* test_graph_fold.c - constant folding (src/graph/build/fold.c) through the
 * builder: tiny graphs whose nodes have constant inputs, and what the
 * folded constants hold (elements, symbolic expressions), or that a node
 * which must not fold stays a node. */
#include <math.h>

#include "frontend/json_locate.h"
#include "graph/graph.h"
#include "unit.h"

typedef struct {
  Arena *arena;
  jmp_buf on_error;
  Diag diag;
  Source src;
  Graph *g;
  int nconst;
} G;

static G *g_new(void) {
  G *t = calloc(1, sizeof *t);
  cr_assert_not_null(t);
  t->arena = arena_new();
  t->diag.on_error = &t->on_error;
  t->src.name = "t.json";
  t->src.text = "{}";
  t->src.len = 2;
  t->g = graph_new(t->arena, &t->diag, json_locator_loc, json_locator_new(t->arena, &t->src), NULL);
  return t;
}

static void g_free(G *t) {
  sb_free(&t->diag.out);
  arena_free(t->arena);
  free(t);
}

/* Arms the error jump in the test function itself: a builder error fails
 * the test with its message. */
#define GUARD(t)                                                                                                    \
  do {                                                                                                              \
    if (setjmp((t)->on_error))                                                                                      \
      cr_assert_fail("builder error:\n%s", sb_cstr(&(t)->diag.out));                                                \
  } while (0)

/* Constants need names: k0, k1, ... */
static const char *cname(G *t) { return arena_printf(t->arena, "k%d", t->nconst++); }

static int cf32(G *t, int rank, const int64_t *shape, const float *data) {
  return graph_add_const(t->g, cname(t), TY_F32, rank, shape, data, "");
}

static int ci64(G *t, int rank, const int64_t *shape, const int64_t *data) {
  return graph_add_const(t->g, cname(t), TY_I64, rank, shape, data, "");
}

static int node(G *t, GraphOp op, int nin, const int *in, int nattrs, const GraphAttr *attrs) {
  return graph_add_node(t->g, op, "", nin, in, nattrs, attrs, NULL, "", NULL);
}

static int node1(G *t, GraphOp op, int x) { return node(t, op, 1, &x, 0, NULL); }

static int node2(G *t, GraphOp op, int a, int b) {
  int in[2] = {a, b};
  return node(t, op, 2, in, 0, NULL);
}

static GraphAttr ints_attr(const char *name, int n, int64_t *v) {
  GraphAttr a = {0};
  a.name = name;
  a.kind = GA_INTS;
  a.n = n;
  a.ints = v;
  return a;
}

static GraphAttr int_attr(const char *name, int64_t v) {
  GraphAttr a = {0};
  a.name = name;
  a.kind = GA_INT;
  a.i = v;
  return a;
}

static GraphAttr float_attr(const char *name, double v) {
  GraphAttr a = {0};
  a.name = name;
  a.kind = GA_FLOAT;
  a.f = v;
  return a;
}

static GraphAttr string_attr(const char *name, const char *s) {
  GraphAttr a = {0};
  a.name = name;
  a.kind = GA_STRING;
  a.s = s;
  return a;
}

static GraphValue *val(G *t, int v) { return GRAPH_VALUE(t->g, v); }

static void expect_folded(G *t, int v, int rank, const int64_t *shape) {
  GraphValue *x = val(t, v);
  cr_assert_eq(x->kind, GV_CONST, "value %s was not folded", x->name);
  cr_assert_eq(x->rank, rank);
  int64_t count = 1;
  for (int d = 0; d < rank; d++) {
    int64_t e;
    cr_assert(graph_dim_value(x->shape[d], &e) && e == shape[d], "dim %d", d);
    count *= e;
  }
  cr_assert_eq(x->count, count);
}

static void expect_f(G *t, int v, int n, const double *want) {
  for (int i = 0; i < n; i++) {
    double got = graph_const_f(val(t, v), i);
    cr_assert(got == want[i] || (isnan(got) && isnan(want[i])), "element %d: got %.17g, want %.17g", i, got,
              want[i]);
  }
}

static void expect_i(G *t, int v, int n, const int64_t *want) {
  cr_assert_null(val(t, v)->sym, "expected plain data");
  for (int i = 0; i < n; i++)
    cr_assert_eq(graph_const_i(val(t, v), i), want[i], "element %d: got %lld, want %lld", i,
                 (long long)graph_const_i(val(t, v), i), (long long)want[i]);
}

static const char *sym_name(void *ctx, int i) { return ((Graph *)ctx)->symbols.items[i]; }

/* Element i of a constant as text ("N * 12"), symbolic or not. */
static const char *elem_text(G *t, int v, int64_t i) {
  GraphValue *x = val(t, v);
  if (!x->sym)
    return arena_printf(t->arena, "%lld", (long long)graph_const_i(x, i));
  AffineNames names = {NULL, sym_name, NULL, t->g, false};
  StrBuf sb = {0};
  affine_print(&sb, x->sym[i], &names);
  const char *s = arena_strdup(t->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

/* An input x: f32 [N, 3, 4] with N symbolic. */
static int sym_input(G *t) {
  AffineExpr *shape[3] = {affine_leaf(t->arena, AE_SIZE, graph_symbol(t->g, "N"), 0), graph_dim_const(t->g, 3),
                          graph_dim_const(t->g, 4)};
  return graph_add_input(t->g, "x", TY_F32, 3, shape, "");
}

/* ---- the exporters' shape chain ---- */

Test(fold, shape_gather_unsqueeze_concat_reshape) {
  G *t = g_new();
  GUARD(t);
  int x = sym_input(t);
  int shape = node1(t, GOP_SHAPE, x);
  int64_t zero = 0, one = 1, two = 2, minus1 = -1, s1[1] = {1};
  int n = node2(t, GOP_GATHER, shape, ci64(t, 0, NULL, &zero));
  expect_folded(t, n, 0, NULL);
  cr_assert_str_eq(elem_text(t, n, 0), "N");
  /* Unsqueeze as a reshape to [1] */
  GraphAttr to1 = ints_attr("shape", 1, s1);
  int un = node(t, GOP_RESHAPE, 1, &n, 1, &to1);
  expect_folded(t, un, 1, s1);
  int cat_in[2] = {un, ci64(t, 1, s1, &minus1)};
  GraphAttr axis0 = int_attr("axis", 0);
  int cat = node(t, GOP_CONCAT, 2, cat_in, 1, &axis0);
  int64_t s2[1] = {2};
  expect_folded(t, cat, 1, s2);
  cr_assert_str_eq(elem_text(t, cat, 0), "N");
  cr_assert_str_eq(elem_text(t, cat, 1), "-1");
  /* the static dims multiply to plain data; with N it stays symbolic */
  int d1 = node2(t, GOP_GATHER, shape, ci64(t, 0, NULL, &one));
  int d2 = node2(t, GOP_GATHER, shape, ci64(t, 0, NULL, &two));
  int inner = node2(t, GOP_MUL, d1, d2);
  expect_i(t, inner, 1, (int64_t[]){12});
  int all = node2(t, GOP_MUL, n, inner);
  cr_assert_str_eq(elem_text(t, all, 0), "N * 12");
  int64_t four = 4;
  int quarter = node2(t, GOP_DIV, all, ci64(t, 0, NULL, &four));
  cr_assert_str_eq(elem_text(t, quarter, 0), "N * 3");
  int half = node2(t, GOP_DIV, n, ci64(t, 0, NULL, &two));
  cr_assert_str_eq(elem_text(t, half, 0), "N floordiv 2");
  /* N - 1 may be negative: C's truncation is not a floordiv there */
  int nm1 = node2(t, GOP_SUB, n, ci64(t, 0, NULL, &one));
  cr_assert_str_eq(elem_text(t, nm1, 0), "N - 1");
  int q = node2(t, GOP_DIV, nm1, ci64(t, 0, NULL, &two));
  cr_assert_eq(val(t, q)->kind, GV_NODE);
  /* the reshape target that the chain built gives the reshape its shape */
  int r = node2(t, GOP_RESHAPE, x, cat);
  GraphValue *rv = val(t, r);
  cr_assert_eq(rv->kind, GV_NODE);
  cr_assert_eq(rv->rank, 2);
  int64_t e;
  cr_assert(graph_dim_value(rv->shape[1], &e) && e == 12);
  /* a cast keeps symbolic elements; reduce_prod of the shape is the count */
  GraphAttr to_i64 = string_attr("to", "i64");
  int c = node(t, GOP_CAST, 1, &shape, 1, &to_i64);
  cr_assert_str_eq(elem_text(t, c, 0), "N");
  GraphAttr keep0 = int_attr("keepdims", 0);
  int numel = node(t, GOP_REDUCE_PROD, 1, &shape, 1, &keep0);
  cr_assert_str_eq(elem_text(t, numel, 0), "N * 3 * 4");
  g_free(t);
}

Test(fold, sym_slice_and_equal_where) {
  G *t = g_new();
  GUARD(t);
  int x = sym_input(t);
  int shape = node1(t, GOP_SHAPE, x);
  int64_t st[1] = {2}, sz[1] = {3}, sd[1] = {-1};
  GraphAttr sl[3] = {ints_attr("starts", 1, st), ints_attr("sizes", 1, sz), ints_attr("strides", 1, sd)};
  int rev = node(t, GOP_SLICE, 1, &shape, 3, sl);
  cr_assert_str_eq(elem_text(t, rev, 0), "4");
  cr_assert_str_eq(elem_text(t, rev, 1), "3");
  cr_assert_str_eq(elem_text(t, rev, 2), "N");
  /* equal against constants: known where both sides are numbers */
  int64_t three[3] = {3, 3, 3}, s3[1] = {3};
  int k3 = ci64(t, 1, s3, three);
  int eq = node2(t, GOP_EQUAL, shape, shape);
  expect_i(t, eq, 3, (int64_t[]){1, 1, 1});
  int eq3 = node2(t, GOP_EQUAL, shape, k3);
  cr_assert_eq(val(t, eq3)->kind, GV_NODE, "N == 3 is unknown");
  /* where with a constant condition picks symbolic elements */
  uint8_t cond[3] = {1, 0, 1};
  int c = graph_add_const(t->g, cname(t), TY_I1, 1, s3, cond, "");
  int w_in[3] = {c, shape, k3};
  int w = node(t, GOP_WHERE, 3, w_in, 0, NULL);
  cr_assert_str_eq(elem_text(t, w, 0), "N");
  cr_assert_str_eq(elem_text(t, w, 1), "3");
  cr_assert_str_eq(elem_text(t, w, 2), "4");
  g_free(t);
}

/* ---- elementwise ---- */

Test(fold, broadcasting_add) {
  G *t = g_new();
  GUARD(t);
  int64_t sa[2] = {2, 1}, sb[1] = {3}, so[2] = {2, 3};
  int a = cf32(t, 2, sa, (float[]){10, 20});
  int b = cf32(t, 1, sb, (float[]){1, 2, 3});
  int s = node2(t, GOP_ADD, a, b);
  expect_folded(t, s, 2, so);
  expect_f(t, s, 6, (double[]){11, 12, 13, 21, 22, 23});
  /* f32 results are rounded once from double: 0.1f + 0.2f */
  int64_t s1[1] = {1};
  int p = node2(t, GOP_ADD, cf32(t, 1, s1, (float[]){0.1f}), cf32(t, 1, s1, (float[]){0.2f}));
  expect_f(t, p, 1, (double[]){(float)((double)0.1f + (double)0.2f)});
  g_free(t);
}

Test(fold, unary_math_and_attrs) {
  G *t = g_new();
  GUARD(t);
  int64_t s4[1] = {4};
  int x = cf32(t, 1, s4, (float[]){-2, -0.5f, 0, 3});
  expect_f(t, node1(t, GOP_RELU, x), 4, (double[]){0, 0, 0, 3});
  expect_f(t, node1(t, GOP_ABS, x), 4, (double[]){2, 0.5, 0, 3});
  expect_f(t, node1(t, GOP_EXP, x), 4,
           (double[]){(float)exp(-2), (float)exp(-0.5), 1, (float)exp(3)});
  GraphAttr alpha = float_attr("alpha", 0.5);
  int lr = node(t, GOP_LEAKY_RELU, 1, &x, 1, &alpha);
  expect_f(t, lr, 4, (double[]){-1, -0.25, 0, 3});
  GraphAttr clip[2] = {float_attr("min", -1), float_attr("max", 1)};
  expect_f(t, node(t, GOP_CLIP, 1, &x, 2, clip), 4, (double[]){-1, -0.5, 0, 1});
  GraphAttr to = string_attr("to", "i32");
  int xi = node(t, GOP_CAST, 1, &x, 1, &to);
  cr_assert_eq(val(t, xi)->type, TY_I32);
  expect_i(t, xi, 4, (int64_t[]){-2, 0, 0, 3});
  g_free(t);
}

/* Raw f16 bits after casting doubles to f16: round to nearest even, once. */
Test(fold, f16_rounding) {
  G *t = g_new();
  GUARD(t);
  double in[] = {1.0 / 3,           65504,         65519,         65520,          1 + ldexp(1, -11),
                 1 + 3 * ldexp(1, -11), ldexp(1, -25), 3 * ldexp(1, -26), ldexp(1, -24), -0.0,
                 ldexp(1023, -24) + ldexp(1, -25), 1e-30, -INFINITY, 1e300};
  uint16_t want[] = {0x3555, 0x7bff, 0x7bff, 0x7c00, 0x3c00, 0x3c02, 0x0000,
                     0x0001, 0x0001, 0x8000, 0x0400, 0x0000, 0xfc00, 0x7c00};
  int64_t n[1] = {(int64_t)(sizeof in / sizeof *in)};
  int x = graph_add_const(t->g, cname(t), TY_F64, 1, n, in, "");
  GraphAttr to = string_attr("to", "f16");
  int h = node(t, GOP_CAST, 1, &x, 1, &to);
  expect_folded(t, h, 1, n);
  const uint8_t *bytes = val(t, h)->data;
  for (int i = 0; i < n[0]; i++) {
    unsigned got = bytes[2 * i] | bytes[2 * i + 1] << 8;
    cr_assert_eq(got, want[i], "element %d (%g): got 0x%04x, want 0x%04x", i, in[i], got, want[i]);
  }
  /* NaN stays NaN; and f16 arithmetic rounds the double result once */
  double nan_in = NAN;
  int64_t one[1] = {1};
  int xn = graph_add_const(t->g, cname(t), TY_F64, 1, one, &nan_in, "");
  int hn = node(t, GOP_CAST, 1, &xn, 1, &to);
  expect_f(t, hn, 1, (double[]){NAN});
  uint16_t a = 0x3c00, b = 0x1000; /* 1 + 2^-11: halfway to the next f16, ties to even */
  int ha = graph_add_const(t->g, cname(t), TY_F16, 1, one, &a, "");
  int hb = graph_add_const(t->g, cname(t), TY_F16, 1, one, &b, "");
  int sum = node2(t, GOP_ADD, ha, hb);
  expect_f(t, sum, 1, (double[]){1.0});
  g_free(t);
}

/* elem_f16_bits (src/ir/types.c), the one double -> f16 conversion of the
 * readers and the folder, against NumPy: want[i] is
 * np.array([x], np.float64).astype(np.float16).view(np.uint16) (NumPy 1.24,
 * one rounding to nearest even). 1 + 2^-11 + 2^-40 is above the tie: a
 * conversion through float (onnx_json.c's own, before) lost the 2^-40 and
 * gave the even 0x3c00. */
Test(fold, f16_bits_against_numpy) {
  static const struct {
    double x;
    unsigned want;
  } cases[] = {
      {NAN, 0x7e00},
      {-NAN, 0xfe00},
      {INFINITY, 0x7c00},
      {-INFINITY, 0xfc00},
      {65504, 0x7bff},
      {65519.99, 0x7bff},
      {65520, 0x7c00},
      {-65520, 0xfc00},
      {1e300, 0x7c00},
      {0x1p-24, 0x0001},
      {0x1p-25, 0x0000},
      {3 * 0x1p-26, 0x0001},
      {0x1p-14 - 0x1p-25, 0x0400},
      {0x1p-14 - 0x1p-24, 0x03ff},
      {1.0 / 3, 0x3555},
      {-1.0 / 3, 0xb555},
      {0.1, 0x2e66},
      {1 + 0x1p-11, 0x3c00},
      {1 + 3 * 0x1p-11, 0x3c02},
      {1 + 0x1p-11 + 0x1p-40, 0x3c01},
      {2049, 0x6800},
      {2051, 0x6802},
      {1e-8, 0x0000},
      {5e-324, 0x0000},
      {-0.0, 0x8000},
      {0.0, 0x0000},
      {-2.5, 0xc100},
      {0x1p15, 0x7800},
      {0x1p-15 + 0x1p-30, 0x0200},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    unsigned got = elem_f16_bits(cases[i].x);
    cr_assert_eq(got, cases[i].want, "case %zu (%a): got 0x%04x, want 0x%04x", i, cases[i].x, got, cases[i].want);
  }
}

Test(fold, integer_wrap_and_division) {
  G *t = g_new();
  GUARD(t);
  int64_t s3[1] = {3}, s1[1] = {1};
  int8_t a8[3] = {100, -128, 127}, b8[3] = {100, -1, 1};
  int a = graph_add_const(t->g, cname(t), TY_I8, 1, s3, a8, "");
  int b = graph_add_const(t->g, cname(t), TY_I8, 1, s3, b8, "");
  expect_i(t, node2(t, GOP_ADD, a, b), 3, (int64_t[]){-56, 127, -128});
  expect_i(t, node2(t, GOP_MUL, a, b), 3, (int64_t[]){16, -128, 127});
  expect_i(t, node1(t, GOP_NEG, a), 3, (int64_t[]){-100, -128, -127});
  /* -128 / -1 is undefined in C: left to run time */
  cr_assert_eq(val(t, node2(t, GOP_DIV, a, b))->kind, GV_NODE);
  int32_t a32[1] = {INT32_MAX}, b32[1] = {2};
  int x = graph_add_const(t->g, cname(t), TY_I32, 1, s1, a32, "");
  int y = graph_add_const(t->g, cname(t), TY_I32, 1, s1, b32, "");
  expect_i(t, node2(t, GOP_MUL, x, y), 1, (int64_t[]){-2});
  int64_t n[2] = {-7, 7}, d[2] = {2, -2}, s2[1] = {2}, z[2] = {0, 1};
  expect_i(t, node2(t, GOP_DIV, ci64(t, 1, s2, n), ci64(t, 1, s2, d)), 2, (int64_t[]){-3, -3});
  cr_assert_eq(val(t, node2(t, GOP_DIV, ci64(t, 1, s2, n), ci64(t, 1, s2, z)))->kind, GV_NODE);
  /* casts wrap into narrower integers; floats truncate; out of range stays */
  int64_t big[2] = {300, -129};
  GraphAttr to8 = string_attr("to", "i8");
  int wide = ci64(t, 1, s2, big);
  expect_i(t, node(t, GOP_CAST, 1, &wide, 1, &to8), 2, (int64_t[]){44, 127});
  int f = cf32(t, 1, s2, (float[]){-2.7f, 1e10f});
  GraphAttr to32 = string_attr("to", "i32");
  cr_assert_eq(val(t, node(t, GOP_CAST, 1, &f, 1, &to32))->kind, GV_NODE);
  GraphAttr to1 = string_attr("to", "i1");
  expect_i(t, node(t, GOP_CAST, 1, &f, 1, &to1), 2, (int64_t[]){1, 1});
  g_free(t);
}

/* Unsigned types: + - * wrap modulo 2^bits, / and comparisons read the
 * unsigned values (a signed reading gets every one of these wrong), casts
 * from floats saturate as the generated code does. */
Test(fold, unsigned_types) {
  G *t = g_new();
  GUARD(t);
  int64_t s3[1] = {3}, s2[1] = {2};
  uint8_t a8[3] = {200, 255, 3}, b8[3] = {100, 2, 250};
  int a = graph_add_const(t->g, cname(t), TY_U8, 1, s3, a8, "");
  int b = graph_add_const(t->g, cname(t), TY_U8, 1, s3, b8, "");
  expect_i(t, node2(t, GOP_ADD, a, b), 3, (int64_t[]){44, 1, 253});
  expect_i(t, node2(t, GOP_SUB, a, b), 3, (int64_t[]){100, 253, 9});
  expect_i(t, node2(t, GOP_MUL, a, b), 3, (int64_t[]){32, 254, 238});
  expect_i(t, node2(t, GOP_DIV, a, b), 3, (int64_t[]){2, 127, 0});
  expect_i(t, node2(t, GOP_MAX, a, b), 3, (int64_t[]){200, 255, 250});
  expect_i(t, node2(t, GOP_MIN, a, b), 3, (int64_t[]){100, 2, 3});
  expect_i(t, node2(t, GOP_GREATER, a, b), 3, (int64_t[]){1, 1, 0});
  expect_i(t, node2(t, GOP_LESS, a, b), 3, (int64_t[]){0, 0, 1});
  expect_i(t, node1(t, GOP_NEG, a), 3, (int64_t[]){56, 1, 253});
  expect_i(t, node1(t, GOP_ABS, a), 3, (int64_t[]){200, 255, 3});
  expect_i(t, node1(t, GOP_RELU, a), 3, (int64_t[]){200, 255, 3});
  int64_t ax0[1] = {0};
  GraphAttr axes[1] = {ints_attr("axes", 1, ax0)};
  expect_i(t, node(t, GOP_REDUCE_MAX, 1, &a, 1, axes), 1, (int64_t[]){255});
  expect_i(t, node(t, GOP_REDUCE_MIN, 1, &b, 1, axes), 1, (int64_t[]){2});
  expect_i(t, node(t, GOP_REDUCE_SUM, 1, &a, 1, axes), 1, (int64_t[]){202}); /* 458 mod 256 */
  expect_i(t, node(t, GOP_REDUCE_MEAN, 1, &b, 1, axes), 1, (int64_t[]){32}); /* (352 mod 256) / 3 */
  GraphAttr clip[2] = {float_attr("min", -5), float_attr("max", 100)};
  expect_i(t, node(t, GOP_CLIP, 1, &a, 2, clip), 3, (int64_t[]){100, 100, 3});
  /* u64 beyond int64: the bits travel in int64, values compare unsigned */
  uint64_t a64[2] = {UINT64_MAX, (uint64_t)1 << 63}, b64[2] = {2, 3};
  int x = graph_add_const(t->g, cname(t), TY_U64, 1, s2, a64, "");
  int y = graph_add_const(t->g, cname(t), TY_U64, 1, s2, b64, "");
  int q = node2(t, GOP_DIV, x, y);
  cr_assert_eq(val(t, q)->kind, GV_CONST);
  cr_assert_eq(((const uint64_t *)val(t, q)->data)[0], UINT64_MAX / 2);
  cr_assert_eq(((const uint64_t *)val(t, q)->data)[1], ((uint64_t)1 << 63) / 3);
  expect_i(t, node2(t, GOP_GREATER, x, y), 2, (int64_t[]){1, 1});
  GraphAttr tof[1] = {string_attr("to", "f64")};
  expect_f(t, node(t, GOP_CAST, 1, &x, 1, tof), 2, (double[]){18446744073709551615.0, 9223372036854775808.0});
  /* float -> unsigned saturates: NaN and negatives 0, too large the maximum */
  int f = cf32(t, 1, s3, (float[]){-3.5f, 300.7f, NAN});
  GraphAttr tou8[1] = {string_attr("to", "u8")};
  expect_i(t, node(t, GOP_CAST, 1, &f, 1, tou8), 3, (int64_t[]){0, 255, 0});
  int g = cf32(t, 1, s2, (float[]){254.9f, 1e30f});
  GraphAttr tou64[1] = {string_attr("to", "u64")};
  int c64 = node(t, GOP_CAST, 1, &g, 1, tou64);
  cr_assert_eq(((const uint64_t *)val(t, c64)->data)[0], 254);
  cr_assert_eq(((const uint64_t *)val(t, c64)->data)[1], UINT64_MAX);
  /* integer casts wrap, as C's conversion to unsigned */
  int64_t neg[2] = {-1, 65537};
  int wide = ci64(t, 1, s2, neg);
  GraphAttr tou16[1] = {string_attr("to", "u16")};
  expect_i(t, node(t, GOP_CAST, 1, &wide, 1, tou16), 2, (int64_t[]){65535, 1});
  g_free(t);
}

Test(fold, compare_where_minmax) {
  G *t = g_new();
  GUARD(t);
  int64_t s3[1] = {3};
  int a = cf32(t, 1, s3, (float[]){1, 5, 3});
  int b = cf32(t, 1, s3, (float[]){2, 5, 0});
  int lt = node2(t, GOP_LESS, a, b);
  cr_assert_eq(val(t, lt)->type, TY_I1);
  expect_i(t, lt, 3, (int64_t[]){1, 0, 0});
  expect_i(t, node2(t, GOP_EQUAL, a, b), 3, (int64_t[]){0, 1, 0});
  expect_i(t, node2(t, GOP_GREATER, a, b), 3, (int64_t[]){0, 0, 1});
  int in[3] = {lt, a, b};
  expect_f(t, node(t, GOP_WHERE, 3, in, 0, NULL), 3, (double[]){1, 5, 0});
  expect_f(t, node2(t, GOP_MAX, a, b), 3, (double[]){2, 5, 3});
  expect_f(t, node2(t, GOP_MIN, a, b), 3, (double[]){1, 5, 0});
  expect_f(t, node2(t, GOP_POW, a, b), 3, (double[]){1, 3125, 1});
  g_free(t);
}

/* ---- reductions ---- */

Test(fold, reductions_keepdims) {
  G *t = g_new();
  GUARD(t);
  int64_t s23[2] = {2, 3}, s21[2] = {2, 1}, s2[1] = {2}, s13[2] = {1, 3}, s11[2] = {1, 1};
  int x = cf32(t, 2, s23, (float[]){1, 2, 3, 4, 5, 6});
  int64_t ax1[1] = {1}, ax0[1] = {0};
  GraphAttr keep[2] = {ints_attr("axes", 1, ax1), int_attr("keepdims", 1)};
  int s = node(t, GOP_REDUCE_SUM, 1, &x, 2, keep);
  expect_folded(t, s, 2, s21);
  expect_f(t, s, 2, (double[]){6, 15});
  GraphAttr drop[2] = {ints_attr("axes", 1, ax1), int_attr("keepdims", 0)};
  int m = node(t, GOP_REDUCE_MEAN, 1, &x, 2, drop);
  expect_folded(t, m, 1, s2);
  expect_f(t, m, 2, (double[]){2, 5});
  GraphAttr cols[1] = {ints_attr("axes", 1, ax0)};
  int mx = node(t, GOP_REDUCE_MAX, 1, &x, 1, cols);
  expect_folded(t, mx, 2, s13);
  expect_f(t, mx, 3, (double[]){4, 5, 6});
  int all = node1(t, GOP_REDUCE_PROD, x);
  expect_folded(t, all, 2, s11);
  expect_f(t, all, 1, (double[]){720});
  int mn = node1(t, GOP_REDUCE_MIN, x);
  expect_f(t, mn, 1, (double[]){1});
  int64_t iv[6] = {1, 2, 3, 4, 5, 7};
  int xi = ci64(t, 2, s23, iv);
  int im = node(t, GOP_REDUCE_MEAN, 1, &xi, 2, drop);
  expect_i(t, im, 2, (int64_t[]){2, 5});
  g_free(t);
}

/* ---- data movement ---- */

Test(fold, slices_with_negative_strides) {
  G *t = g_new();
  GUARD(t);
  int64_t s10[1] = {10}, s4[1] = {4};
  float v[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  int x = cf32(t, 1, s10, v);
  int64_t st[1] = {8}, sz[1] = {4}, sd[1] = {-2};
  GraphAttr a[3] = {ints_attr("starts", 1, st), ints_attr("sizes", 1, sz), ints_attr("strides", 1, sd)};
  int y = node(t, GOP_SLICE, 1, &x, 3, a);
  expect_folded(t, y, 1, s4);
  expect_f(t, y, 4, (double[]){8, 6, 4, 2});
  /* 2-D: rows reversed, every second column */
  int64_t s34[2] = {3, 4}, s32[2] = {3, 2};
  float m[12] = {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23};
  int x2 = cf32(t, 2, s34, m);
  int64_t st2[2] = {2, 1}, sz2[2] = {3, 2}, sd2[2] = {-1, 2};
  GraphAttr a2[3] = {ints_attr("starts", 2, st2), ints_attr("sizes", 2, sz2), ints_attr("strides", 2, sd2)};
  int y2 = node(t, GOP_SLICE, 1, &x2, 3, a2);
  expect_folded(t, y2, 2, s32);
  expect_f(t, y2, 6, (double[]){21, 23, 11, 13, 1, 3});
  g_free(t);
}

Test(fold, layout_ops) {
  G *t = g_new();
  GUARD(t);
  int64_t s23[2] = {2, 3}, s32[2] = {3, 2};
  int x = cf32(t, 2, s23, (float[]){1, 2, 3, 4, 5, 6});
  int tr = node1(t, GOP_TRANSPOSE, x);
  expect_folded(t, tr, 2, s32);
  expect_f(t, tr, 6, (double[]){1, 4, 2, 5, 3, 6});
  int64_t rep[2] = {2, 1}, s43[2] = {4, 3};
  GraphAttr ta = ints_attr("repeats", 2, rep);
  int ti = node(t, GOP_TILE, 1, &x, 1, &ta);
  expect_folded(t, ti, 2, s43);
  expect_f(t, ti, 12, (double[]){1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
  int64_t dims[1] = {1};
  GraphAttr ra = ints_attr("dims", 1, dims);
  expect_f(t, node(t, GOP_REVERSE, 1, &x, 1, &ra), 6, (double[]){3, 2, 1, 6, 5, 4});
  int64_t pads[4] = {0, 1, 1, 0}, s34[2] = {3, 4};
  GraphAttr pa[2] = {{.name = "padding", .kind = GA_INTS2, .n = 2, .ints = pads}, float_attr("value", -1)};
  int p = node(t, GOP_PAD, 1, &x, 2, pa);
  expect_folded(t, p, 2, s34);
  expect_f(t, p, 12, (double[]){-1, 1, 2, 3, -1, 4, 5, 6, -1, -1, -1, -1});
  int64_t target[2] = {2, 2}, s2[1] = {2}, s22[2] = {2, 2};
  int col = cf32(t, 2, (int64_t[]){2, 1}, (float[]){7, 8});
  int bc = node2(t, GOP_BROADCAST, col, ci64(t, 1, s2, target));
  expect_folded(t, bc, 2, s22);
  expect_f(t, bc, 4, (double[]){7, 7, 8, 8});
  /* gather along axis 1 with a negative index */
  int64_t idx[2] = {-1, 0};
  GraphAttr ax1 = int_attr("axis", 1);
  int gin[2] = {x, ci64(t, 1, s2, idx)};
  int ga = node(t, GOP_GATHER, 2, gin, 1, &ax1);
  expect_folded(t, ga, 2, s22);
  expect_f(t, ga, 4, (double[]){3, 1, 6, 4});
  int64_t shp[2] = {2, 2};
  GraphAttr fa[3] = {float_attr("value", 7.5), ints_attr("shape", 2, shp), string_attr("type", "i32")};
  int fl = node(t, GOP_FILL, 0, NULL, 3, fa);
  expect_folded(t, fl, 2, s22);
  expect_i(t, fl, 4, (int64_t[]){7, 7, 7, 7});
  g_free(t);
}

/* ---- contractions ---- */

Test(fold, matmul_forms_and_einsum) {
  G *t = g_new();
  GUARD(t);
  int64_t s23[2] = {2, 3}, s3[1] = {3}, s32[2] = {3, 2}, s2[1] = {2}, s22[2] = {2, 2};
  int a = cf32(t, 2, s23, (float[]){1, 2, 3, 4, 5, 6});
  int v = cf32(t, 1, s3, (float[]){1, 0, -1});
  int b = cf32(t, 2, s32, (float[]){1, 0, 0, 1, 1, 1});
  int mv = node2(t, GOP_MATMUL, a, v);
  expect_folded(t, mv, 1, s2);
  expect_f(t, mv, 2, (double[]){-2, -2});
  int mm = node2(t, GOP_MATMUL, a, b);
  expect_folded(t, mm, 2, s22);
  expect_f(t, mm, 4, (double[]){4, 5, 10, 11});
  expect_f(t, node2(t, GOP_DOT, v, v), 1, (double[]){2});
  expect_f(t, node2(t, GOP_MATVEC, a, v), 2, (double[]){-2, -2});
  /* batch dims broadcast: [2,1,2,3] x [3,2] -> [2,1,2,2] */
  int64_t s2123[4] = {2, 1, 2, 3}, s2122[4] = {2, 1, 2, 2};
  int ab = cf32(t, 4, s2123, (float[]){1, 2, 3, 4, 5, 6, 0, 0, 0, 1, 1, 1});
  int bm = node2(t, GOP_MATMUL, ab, b);
  expect_folded(t, bm, 4, s2122);
  expect_f(t, bm, 8, (double[]){4, 5, 10, 11, 0, 0, 2, 2});
  /* einsum: a diagonal and a sum over an unlisted letter */
  int sq = cf32(t, 2, s22, (float[]){1, 2, 3, 4});
  GraphAttr diag = string_attr("equation", "ii->i");
  expect_f(t, node(t, GOP_EINSUM, 1, &sq, 1, &diag), 2, (double[]){1, 4});
  GraphAttr rows = string_attr("equation", "ij->i");
  expect_f(t, node(t, GOP_EINSUM, 1, &sq, 1, &rows), 2, (double[]){3, 7});
  g_free(t);
}

/* A result whose shape depends on a symbol cannot be a constant. */
Test(fold, symbolic_output_shape_is_not_folded) {
  G *t = g_new();
  GUARD(t);
  int x = sym_input(t);
  int shape = node1(t, GOP_SHAPE, x);
  int64_t zero = 0, s1[1] = {1};
  int n = node2(t, GOP_GATHER, shape, ci64(t, 1, s1, &zero)); /* [N] */
  int one = cf32(t, 1, s1, (float[]){1});
  int bc = node2(t, GOP_BROADCAST, one, n);
  cr_assert_eq(val(t, bc)->kind, GV_NODE);
  g_free(t);
}

/* A constant gather index out of range is the model's error, located at
 * the node. */
Test(fold, gather_index_out_of_range) {
  G *t = g_new();
  int64_t s3[1] = {3}, bad = 3;
  int x = cf32(t, 1, s3, (float[]){1, 2, 3});
  int ix = ci64(t, 0, NULL, &bad);
  if (setjmp(t->on_error) == 0) {
    node2(t, GOP_GATHER, x, ix);
    cr_assert_fail("expected an error");
  }
  cr_assert_not_null(strstr(sb_cstr(&t->diag.out), "index 3 is out of range for axis 0 of extent 3"), "%s",
                     sb_cstr(&t->diag.out));
  g_free(t);
}

/* ---- more of ops.md's table, against NumPy ----
 * The expected values below are NumPy 1.24's (float64 math on the f32
 * inputs, rounded to f32; math.erf for erf and gelu; np.mod, np.fmod,
 * np.pad, np.repeat, np.matmul, np.einsum), computed once and written out
 * with 9 significant digits, which round-trip an f32. A fold may differ
 * from them by libm's last bit at most, so they are compared within an
 * f32 ulp. */

static void expect_f32_near(G *t, int v, int n, const double *want) {
  cr_assert_eq(val(t, v)->kind, GV_CONST, "value %s was not folded", val(t, v)->name);
  cr_assert_eq(val(t, v)->type, TY_F32);
  for (int i = 0; i < n; i++) {
    double got = graph_const_f(val(t, v), i), w = (float)want[i];
    cr_assert(fabs(got - w) <= fabs(w) * ldexp(1, -23), "element %d: got %.9g, want %.9g", i, got, w);
  }
}

static void expect_not_folded(G *t, int v) {
  cr_assert_eq(val(t, v)->kind, GV_NODE, "value %s was folded, but must run at run time", val(t, v)->name);
}

Test(fold, unary_float_ops_vs_numpy) {
  G *t = g_new();
  GUARD(t);
  int64_t s5[1] = {5};
  int x = cf32(t, 1, s5, (float[]){-1.5f, -0.5f, 0.25f, 0.75f, 2});
  int u = cf32(t, 1, s5, (float[]){-0.75f, -0.5f, 0, 0.25f, 0.5f});
  int pos = cf32(t, 1, s5, (float[]){0.25f, 0.5f, 1, 2.5f, 7});
  int ge1 = cf32(t, 1, s5, (float[]){1, 1.25f, 2, 3.5f, 10});
  struct {
    GraphOp op;
    int in, nattrs;
    GraphAttr attrs[2];
    double want[5];
  } cases[] = {
      {GOP_NEG, x, 0, {{0}}, {1.5, 0.5, -0.25, -0.75, -2}},
      {GOP_LOG, pos, 0, {{0}}, {-1.38629436, -0.693147182, 0, 0.91629076, 1.9459101}},
      {GOP_RSQRT, pos, 0, {{0}}, {2, 1.41421354, 1, 0.632455528, 0.377964467}},
      {GOP_RECIPROCAL, x, 0, {{0}}, {-0.666666687, -2, 4, 1.33333337, 0.5}},
      {GOP_TANH, x, 0, {{0}}, {-0.905148268, -0.462117165, 0.244918659, 0.635148942, 0.964027584}},
      {GOP_SIGMOID, x, 0, {{0}}, {0.182425529, 0.377540678, 0.562176526, 0.679178715, 0.880797088}},
      {GOP_GELU, x, 0, {{0}}, {-0.100210801, -0.154268771, 0.149676576, 0.580029488, 1.95449972}},
      {GOP_GELU, x, 1, {string_attr("approximate", "tanh")}, {-0.100428425, -0.154285997, 0.149675354, 0.579960585, 1.95459771}},
      {GOP_ERF, x, 0, {{0}}, {-0.966105163, -0.520499885, 0.276326388, 0.711155653, 0.995322287}},
      {GOP_FLOOR, x, 0, {{0}}, {-2, -1, 0, 0, 2}},
      {GOP_CEIL, x, 0, {{0}}, {-1, -0.0, 1, 1, 2}},
      {GOP_ELU, x, 0, {{0}}, {-0.776869833, -0.393469334, 0.25, 0.75, 2}},
      {GOP_ELU, x, 1, {float_attr("alpha", 0.5)}, {-0.388434917, -0.196734667, 0.25, 0.75, 2}},
      {GOP_SELU, x, 0, {{0}}, {-1.36581433, -0.691758215, 0.262675256, 0.788025737, 2.10140204}},
      {GOP_CELU, x, 1, {float_attr("alpha", 2)}, {-1.05526686, -0.442398429, 0.25, 0.75, 2}},
      {GOP_HARD_SIGMOID, x, 0, {{0}}, {0.200000003, 0.400000006, 0.550000012, 0.649999976, 0.899999976}},
      {GOP_HARD_SIGMOID, x, 2, {float_attr("alpha", 0.5), float_attr("beta", 0.25)}, {0, 0, 0.375, 0.625, 1}},
      {GOP_HARD_SWISH, x, 0, {{0}}, {-0.375, -0.208333328, 0.135416672, 0.46875, 1.66666663}},
      {GOP_SOFTPLUS, x, 0, {{0}}, {0.201413274, 0.474076986, 0.825939417, 1.13687098, 2.12692809}},
      {GOP_COPY, x, 0, {{0}}, {-1.5, -0.5, 0.25, 0.75, 2}},
      {GOP_SIN, x, 0, {{0}}, {-0.997494996, -0.47942555, 0.247403964, 0.681638777, 0.909297407}},
      {GOP_COS, x, 0, {{0}}, {0.070737198, 0.87758255, 0.968912423, 0.731688857, -0.416146845}},
      {GOP_TAN, x, 0, {{0}}, {-14.1014204, -0.546302497, 0.255341917, 0.931596458, -2.18503976}},
      {GOP_ASIN, u, 0, {{0}}, {-0.848062098, -0.52359879, 0, 0.252680242, 0.52359879}},
      {GOP_ACOS, u, 0, {{0}}, {2.41885829, 2.09439516, 1.57079637, 1.31811607, 1.04719758}},
      {GOP_ATAN, x, 0, {{0}}, {-0.982793748, -0.463647604, 0.244978666, 0.643501103, 1.10714877}},
      {GOP_SINH, x, 0, {{0}}, {-2.12927938, -0.521095276, 0.252612323, 0.822316706, 3.62686038}},
      {GOP_COSH, x, 0, {{0}}, {2.3524096, 1.12762594, 1.03141308, 1.29468334, 3.76219559}},
      {GOP_ASINH, x, 0, {{0}}, {-1.19476318, -0.481211811, 0.24746646, 0.693147182, 1.44363546}},
      {GOP_ACOSH, ge1, 0, {{0}}, {0, 0.693147182, 1.31695795, 1.92484725, 2.99322295}},
      {GOP_ATANH, u, 0, {{0}}, {-0.972955048, -0.549306154, 0, 0.255412817, 0.549306154}},
      {GOP_SQRT, pos, 0, {{0}}, {0.5, 0.707106769, 1, 1.58113885, 2.64575124}},
      /* clip with one bound only */
      {GOP_CLIP, x, 1, {float_attr("min", 0)}, {0, 0, 0.25, 0.75, 2}},
      {GOP_CLIP, x, 1, {float_attr("max", 0.5)}, {-1.5, -0.5, 0.25, 0.5, 0.5}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    int y = node(t, cases[c].op, 1, &cases[c].in, cases[c].nattrs, cases[c].attrs);
    expect_f32_near(t, y, 5, cases[c].want);
  }
  /* round is half to even (np.round); sign keeps the zero's sign, NaN stays */
  int64_t s7[1] = {7}, s4[1] = {4};
  int r = cf32(t, 1, s7, (float[]){-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.7f});
  expect_f(t, node1(t, GOP_ROUND, r), 7, (double[]){-2, -2, -0.0, 0, 2, 2, 4});
  int sg = cf32(t, 1, s4, (float[]){-3, -0.0f, 2, NAN});
  int sgn = node1(t, GOP_SIGN, sg);
  expect_f(t, sgn, 4, (double[]){-1, 0, 1, NAN});
  cr_assert(signbit(graph_const_f(val(t, sgn), 1)), "sign(-0) is -0");
  g_free(t);
}

Test(fold, remainders_vs_numpy) {
  G *t = g_new();
  GUARD(t);
  int64_t s5[1] = {5}, s2[1] = {2};
  int a = cf32(t, 1, s5, (float[]){7.5f, -7.5f, 7.5f, -7.5f, 6});
  int b = cf32(t, 1, s5, (float[]){2, 2, -2, -2, 3});
  expect_f(t, node2(t, GOP_MOD, a, b), 5, (double[]){1.5, 0.5, -0.5, -1.5, 0});  /* np.mod */
  expect_f(t, node2(t, GOP_FMOD, a, b), 5, (double[]){1.5, -1.5, 1.5, -1.5, 0}); /* np.fmod */
  expect_f(t, node2(t, GOP_SUB, a, b), 5, (double[]){5.5, -9.5, 9.5, -5.5, 3});
  expect_f(t, node2(t, GOP_DIV, a, b), 5, (double[]){3.75, -3.75, -3.75, 3.75, 2});
  int32_t ai[5] = {7, -7, 7, -7, 6}, bi[5] = {3, 3, -3, -3, 3};
  int x = graph_add_const(t->g, cname(t), TY_I32, 1, s5, ai, "");
  int y = graph_add_const(t->g, cname(t), TY_I32, 1, s5, bi, "");
  expect_i(t, node2(t, GOP_MOD, x, y), 5, (int64_t[]){1, 2, -2, -1, 0});
  expect_i(t, node2(t, GOP_FMOD, x, y), 5, (int64_t[]){1, -1, 1, -1, 0});
  /* unsigned: the bits' values (200 % 7 = 4, 255 % 16 = 15) */
  uint8_t ua[2] = {200, 255}, ub[2] = {7, 16};
  int p = graph_add_const(t->g, cname(t), TY_U8, 1, s2, ua, "");
  int q = graph_add_const(t->g, cname(t), TY_U8, 1, s2, ub, "");
  expect_i(t, node2(t, GOP_MOD, p, q), 2, (int64_t[]){4, 15});
  expect_i(t, node2(t, GOP_FMOD, p, q), 2, (int64_t[]){4, 15});
  /* undefined in C, so left to run time: a zero divisor, INT32_MIN % -1 */
  int32_t zmin[2] = {5, INT32_MIN}, zd[2] = {1, -1}, z0[2] = {5, 5}, z1[2] = {1, 0};
  int m1 = graph_add_const(t->g, cname(t), TY_I32, 1, s2, zmin, "");
  int d1 = graph_add_const(t->g, cname(t), TY_I32, 1, s2, zd, "");
  expect_not_folded(t, node2(t, GOP_MOD, m1, d1));
  expect_not_folded(t, node2(t, GOP_FMOD, m1, d1));
  int m0 = graph_add_const(t->g, cname(t), TY_I32, 1, s2, z0, "");
  int d0 = graph_add_const(t->g, cname(t), TY_I32, 1, s2, z1, "");
  expect_not_folded(t, node2(t, GOP_MOD, m0, d0));
  /* ... but INT32_MIN / -1 only for the type's own lowest value: an i64
   * holding INT32_MIN divides fine */
  int64_t wide[1] = {INT32_MIN}, m1w[1] = {-1}, s1[1] = {1};
  expect_i(t, node2(t, GOP_MOD, ci64(t, 1, s1, wide), ci64(t, 1, s1, m1w)), 1, (int64_t[]){0});
  g_free(t);
}

/* Integer-only ops (ops.md: & | ^ ~ on the bits, shifts on unsigned types,
 * a shift by the width or more gives 0), sign, abs and relu of integers,
 * and integer clip bounds. Expected values: NumPy's bitwise_*, invert,
 * left_shift, right_shift, sign, abs on the same dtypes (the out-of-width
 * shifts are ops.md's, not C's or NumPy's). */
Test(fold, integer_bit_ops_sign_clip) {
  G *t = g_new();
  GUARD(t);
  int64_t s4[1] = {4}, s3[1] = {3};
  int32_t ai[4] = {12, -7, 0, INT32_MIN}, bi[4] = {10, 3, -1, -1};
  int a = graph_add_const(t->g, cname(t), TY_I32, 1, s4, ai, "");
  int b = graph_add_const(t->g, cname(t), TY_I32, 1, s4, bi, "");
  expect_i(t, node2(t, GOP_BITWISE_AND, a, b), 4, (int64_t[]){8, 1, 0, INT32_MIN});
  expect_i(t, node2(t, GOP_BITWISE_OR, a, b), 4, (int64_t[]){14, -5, -1, -1});
  expect_i(t, node2(t, GOP_BITWISE_XOR, a, b), 4, (int64_t[]){6, -6, -1, INT32_MAX});
  expect_i(t, node1(t, GOP_BITWISE_NOT, a), 4, (int64_t[]){-13, 6, -1, INT32_MAX});
  expect_i(t, node1(t, GOP_SIGN, a), 4, (int64_t[]){1, -1, 0, -1});
  expect_i(t, node1(t, GOP_ABS, a), 4, (int64_t[]){12, 7, 0, INT32_MIN}); /* np.abs wraps too */
  expect_i(t, node1(t, GOP_RELU, a), 4, (int64_t[]){12, 0, 0, 0});
  uint8_t bits[3] = {1, 0, 1};
  int c = graph_add_const(t->g, cname(t), TY_I1, 1, s3, bits, "");
  expect_i(t, node1(t, GOP_BITWISE_NOT, c), 3, (int64_t[]){0, 1, 0});
  expect_i(t, node1(t, GOP_SIGN, c), 3, (int64_t[]){1, 0, 1});
  uint64_t top[1] = {(uint64_t)1 << 63};
  int64_t s1[1] = {1};
  expect_i(t, node1(t, GOP_SIGN, graph_add_const(t->g, cname(t), TY_U64, 1, s1, top, "")), 1, (int64_t[]){1});
  uint8_t ux[4] = {0x81, 0x81, 0xff, 3}, us[4] = {1, 7, 8, 200};
  int x = graph_add_const(t->g, cname(t), TY_U8, 1, s4, ux, "");
  int s = graph_add_const(t->g, cname(t), TY_U8, 1, s4, us, "");
  expect_i(t, node2(t, GOP_SHIFT_LEFT, x, s), 4, (int64_t[]){0x02, 0x80, 0, 0});
  expect_i(t, node2(t, GOP_SHIFT_RIGHT, x, s), 4, (int64_t[]){0x40, 1, 0, 0});
  expect_i(t, node1(t, GOP_SIGN, x), 4, (int64_t[]){1, 1, 1, 1});
  /* clip: one bound at a time; a bound that is not an integer is left to
   * run time (it has no one obvious meaning for integers) */
  GraphAttr lo = float_attr("min", -1), hi = float_attr("max", 5), half = float_attr("max", 2.5),
            huge = float_attr("min", 1e30);
  expect_i(t, node(t, GOP_CLIP, 1, &a, 1, &lo), 4, (int64_t[]){12, -1, 0, -1});
  expect_i(t, node(t, GOP_CLIP, 1, &a, 1, &hi), 4, (int64_t[]){5, -7, 0, INT32_MIN});
  expect_not_folded(t, node(t, GOP_CLIP, 1, &a, 1, &half));
  expect_not_folded(t, node(t, GOP_CLIP, 1, &a, 1, &huge));
  g_free(t);
}

/* Conversions through the f16 and unsigned paths: half infinities and
 * NaN read back, unsigned and signed integers to every float type, a
 * double subnormal to f16 (0 with its sign). */
Test(fold, casts_through_f16_and_unsigned) {
  G *t = g_new();
  GUARD(t);
  int64_t s3[1] = {3}, s2[1] = {2};
  uint16_t h[3] = {0x7c00, 0xfc00, 0x7e00};
  int hx = graph_add_const(t->g, cname(t), TY_F16, 1, s3, h, "");
  GraphAttr tof32 = string_attr("to", "f32"), tof64 = string_attr("to", "f64"), tof16 = string_attr("to", "f16");
  expect_f(t, node(t, GOP_CAST, 1, &hx, 1, &tof32), 3, (double[]){INFINITY, -INFINITY, NAN});
  uint64_t big[2] = {UINT64_MAX, 3};
  int u = graph_add_const(t->g, cname(t), TY_U64, 1, s2, big, "");
  expect_f(t, node(t, GOP_CAST, 1, &u, 1, &tof32), 2, (double[]){18446744073709551616.0, 3});
  int i = ci64(t, 1, s2, (int64_t[]){-3, 2049});
  expect_f(t, node(t, GOP_CAST, 1, &i, 1, &tof64), 2, (double[]){-3, 2049});
  int ih = node(t, GOP_CAST, 1, &i, 1, &tof16); /* 2049 rounds to even: 2048 */
  expect_f(t, ih, 2, (double[]){-3, 2048});
  uint8_t u8[2] = {255, 7};
  int ub = graph_add_const(t->g, cname(t), TY_U8, 1, s2, u8, "");
  expect_f(t, node(t, GOP_CAST, 1, &ub, 1, &tof16), 2, (double[]){255, 7});
  double tiny[2] = {-1e-320, 1e-320};
  int d = graph_add_const(t->g, cname(t), TY_F64, 1, s2, tiny, "");
  int dh = node(t, GOP_CAST, 1, &d, 1, &tof16);
  const uint8_t *bytes = val(t, dh)->data;
  cr_assert_eq(bytes[0] | bytes[1] << 8, 0x8000);
  cr_assert_eq(bytes[2] | bytes[3] << 8, 0x0000);
  /* NaN or infinity to a signed integer is undefined in C: run time's */
  GraphAttr toi16 = string_attr("to", "i16");
  int inf = cf32(t, 1, s2, (float[]){1, INFINITY});
  expect_not_folded(t, node(t, GOP_CAST, 1, &inf, 1, &toi16));
  /* a fill of f32 and of u8 (saturating, as a cast from float) */
  int64_t shp[1] = {2};
  GraphAttr ff[3] = {float_attr("value", -2.5), ints_attr("shape", 1, shp), string_attr("type", "f32")};
  expect_f(t, node(t, GOP_FILL, 0, NULL, 3, ff), 2, (double[]){-2.5, -2.5});
  GraphAttr fu[3] = {float_attr("value", -2.5), ints_attr("shape", 1, shp), string_attr("type", "u8")};
  expect_i(t, node(t, GOP_FILL, 0, NULL, 3, fu), 2, (int64_t[]){0, 0});
  g_free(t);
}

/* The symbolic arithmetic's simplifications, on N (extent, so >= 0) from
 * the shape of x: each result is the exact integer for every N, written
 * as short as the rules allow; the ones that have no exact expression
 * stay nodes. */
Test(fold, symbolic_simplifications) {
  G *t = g_new();
  GUARD(t);
  int x = sym_input(t);
  int shape = node1(t, GOP_SHAPE, x);
  int64_t zero = 0, one = 1, two = 2, three = 3, six = 6, m1 = -1, m2 = -2;
  int n = node2(t, GOP_GATHER, shape, ci64(t, 0, NULL, &zero));
  int k0 = ci64(t, 0, NULL, &zero), k1 = ci64(t, 0, NULL, &one), k2 = ci64(t, 0, NULL, &two),
      k3 = ci64(t, 0, NULL, &three), k6 = ci64(t, 0, NULL, &six), km1 = ci64(t, 0, NULL, &m1),
      km2 = ci64(t, 0, NULL, &m2);
  int neg = node1(t, GOP_NEG, n);
  cr_assert_str_eq(elem_text(t, neg, 0), "-N");
  cr_assert_str_eq(elem_text(t, node1(t, GOP_NEG, neg), 0), "N");
  cr_assert_str_eq(elem_text(t, node2(t, GOP_ADD, n, k0), 0), "N");
  cr_assert_str_eq(elem_text(t, node2(t, GOP_ADD, k0, n), 0), "N");
  cr_assert_str_eq(elem_text(t, node2(t, GOP_ADD, n, km2), 0), "N - 2");
  cr_assert_str_eq(elem_text(t, node2(t, GOP_ADD, n, k3), 0), "N + 3");
  cr_assert_str_eq(elem_text(t, node2(t, GOP_SUB, n, k0), 0), "N");
  expect_i(t, node2(t, GOP_SUB, n, n), 1, (int64_t[]){0});
  cr_assert_str_eq(elem_text(t, node2(t, GOP_SUB, k0, n), 0), "-N");
  expect_i(t, node2(t, GOP_MUL, n, k0), 1, (int64_t[]){0});
  cr_assert_str_eq(elem_text(t, node2(t, GOP_MUL, k1, n), 0), "N");
  cr_assert_str_eq(elem_text(t, node2(t, GOP_MUL, n, k1), 0), "N");
  cr_assert_str_eq(elem_text(t, node2(t, GOP_DIV, n, k1), 0), "N");
  /* (N floordiv 2) / 3 = N floordiv 6; (6 N) / 3 = 2 N; (N 6) / 2 = N 3 */
  int half = node2(t, GOP_DIV, n, k2);
  cr_assert_str_eq(elem_text(t, node2(t, GOP_DIV, half, k3), 0), "N floordiv 6");
  cr_assert_str_eq(elem_text(t, node2(t, GOP_DIV, node2(t, GOP_MUL, k6, n), k3), 0), "2 * N");
  cr_assert_str_eq(elem_text(t, node2(t, GOP_DIV, node2(t, GOP_MUL, n, k6), k2), 0), "N * 3");
  /* a negative divisor, or a dividend that may be negative, has none */
  expect_not_folded(t, node2(t, GOP_DIV, n, km1));
  expect_not_folded(t, node2(t, GOP_DIV, neg, k2));
  /* remainders of a non-negative N: mod for both; fmod of -N has none */
  cr_assert_str_eq(elem_text(t, node2(t, GOP_MOD, n, k3), 0), "N mod 3");
  cr_assert_str_eq(elem_text(t, node2(t, GOP_FMOD, n, k3), 0), "N mod 3");
  cr_assert_str_eq(elem_text(t, node2(t, GOP_MOD, neg, k3), 0), "-N mod 3");
  expect_not_folded(t, node2(t, GOP_FMOD, neg, k3));
  expect_not_folded(t, node2(t, GOP_MOD, n, km2));
  expect_not_folded(t, node2(t, GOP_MOD, k3, n));
  /* max, min of equal expressions; abs, relu of a non-negative one */
  cr_assert_str_eq(elem_text(t, node2(t, GOP_MAX, n, n), 0), "N");
  cr_assert_str_eq(elem_text(t, node2(t, GOP_MIN, n, n), 0), "N");
  expect_not_folded(t, node2(t, GOP_MAX, n, k3));
  cr_assert_str_eq(elem_text(t, node1(t, GOP_ABS, n), 0), "N");
  cr_assert_str_eq(elem_text(t, node1(t, GOP_RELU, half), 0), "N floordiv 2");
  expect_not_folded(t, node1(t, GOP_RELU, neg));
  cr_assert_str_eq(elem_text(t, node1(t, GOP_COPY, n), 0), "N");
  expect_not_folded(t, node1(t, GOP_BITWISE_NOT, n));
  /* casts: to i32 it stays symbolic, to a float or i1 it has no value yet */
  GraphAttr toi32 = string_attr("to", "i32"), tof = string_attr("to", "f32"), tob = string_attr("to", "i1");
  int n32 = node(t, GOP_CAST, 1, &n, 1, &toi32);
  cr_assert_eq(val(t, n32)->type, TY_I32);
  cr_assert_str_eq(elem_text(t, n32, 0), "N");
  expect_not_folded(t, node(t, GOP_CAST, 1, &n, 1, &tof));
  expect_not_folded(t, node(t, GOP_CAST, 1, &n, 1, &tob));
  /* an i32 result that is all numbers is plain data, wrapped to 32 bits */
  int64_t s3[1] = {3};
  int dims = node(t, GOP_CAST, 1, &shape, 1, &toi32);
  int64_t big = (int64_t)1 << 33;
  int sum = node2(t, GOP_ADD, dims, node(t, GOP_CAST, 1, (int[]){ci64(t, 0, NULL, &big)}, 1, &toi32));
  cr_assert_str_eq(elem_text(t, sum, 0), "N");
  cr_assert_str_eq(elem_text(t, sum, 2), "4");
  /* where needs a known condition */
  uint8_t cond[3] = {1, 0, 1};
  int c = graph_add_const(t->g, cname(t), TY_I1, 1, s3, cond, "");
  int eq = node2(t, GOP_EQUAL, shape, ci64(t, 1, s3, (int64_t[]){3, 3, 4}));
  expect_not_folded(t, node(t, GOP_WHERE, 3, (int[]){eq, shape, shape}, 0, NULL));
  cr_assert_str_eq(elem_text(t, node(t, GOP_WHERE, 3, (int[]){c, shape, k0}, 0, NULL), 0), "N");
  /* symbolic reductions: max and min of an unknown have none; the mean of
   * the shape divides exactly where it can ((3 N + 9 + 12) / 3, unsimplified) */
  GraphAttr keep0 = int_attr("keepdims", 0);
  expect_not_folded(t, node(t, GOP_REDUCE_MAX, 1, &shape, 1, &keep0));
  expect_not_folded(t, node(t, GOP_REDUCE_MIN, 1, &shape, 1, &keep0));
  int sixes = node2(t, GOP_MUL, shape, ci64(t, 1, s3, (int64_t[]){3, 3, 3}));
  cr_assert_str_eq(elem_text(t, node(t, GOP_REDUCE_MEAN, 1, &sixes, 1, &keep0), 0), "(N * 3 + 9 + 12) floordiv 3");
  /* a pad of symbolic elements: an integral pad value is a number, a
   * fractional one has no i64 element */
  int64_t pads[2] = {1, 0};
  GraphAttr pa[2] = {{.name = "padding", .kind = GA_INTS2, .n = 1, .ints = pads}, float_attr("value", 7)};
  int padded = node(t, GOP_PAD, 1, &shape, 2, pa);
  cr_assert_str_eq(elem_text(t, padded, 0), "7");
  cr_assert_str_eq(elem_text(t, padded, 1), "N");
  pa[1] = float_attr("value", 0.5);
  expect_not_folded(t, node(t, GOP_PAD, 1, &shape, 2, pa));
  g_free(t);
}

/* Division of a symbolic dim by a constant folds only where C's truncating
 * division equals a floordiv: a dividend provably >= 0 (sums and products
 * of such, remainders by a positive constant, floordivs of such) and a
 * positive divisor; (x floordiv p) / d merges only when p d fits int64. */
Test(fold, symbolic_division_needs_a_nonnegative_dividend) {
  G *t = g_new();
  GUARD(t);
  int x = sym_input(t);
  int shape = node1(t, GOP_SHAPE, x);
  int64_t zero = 0, two = 2, three = 3, big = (int64_t)1 << 62, lowest = INT64_MIN;
  int n = node2(t, GOP_GATHER, shape, ci64(t, 0, NULL, &zero));
  int k0 = ci64(t, 0, NULL, &zero), k2 = ci64(t, 0, NULL, &two), k3 = ci64(t, 0, NULL, &three),
      kbig = ci64(t, 0, NULL, &big), kmin = ci64(t, 0, NULL, &lowest);
  int neg = node1(t, GOP_NEG, n);
  /* sums, products and remainders of non-negative terms */
  cr_assert_str_eq(elem_text(t, node2(t, GOP_DIV, node2(t, GOP_ADD, n, k3), k2), 0), "(N + 3) floordiv 2");
  cr_assert_str_eq(elem_text(t, node2(t, GOP_DIV, node2(t, GOP_MOD, n, k3), k2), 0), "N mod 3 floordiv 2");
  int half = node2(t, GOP_DIV, n, k2);
  cr_assert_str_eq(elem_text(t, node2(t, GOP_DIV, node2(t, GOP_MUL, half, k3), k2), 0),
                   "N floordiv 2 * 3 floordiv 2");
  /* 3 N / 2: 2 does not divide 3, so a floordiv */
  cr_assert_str_eq(elem_text(t, node2(t, GOP_DIV, node2(t, GOP_MUL, k3, n), k2), 0), "3 * N floordiv 2");
  /* (N floordiv 2) / 2^62: 2 * 2^62 overflows, so the floordivs stay apart */
  cr_assert_str_eq(elem_text(t, node2(t, GOP_DIV, half, kbig), 0), "N floordiv 2 floordiv 4611686018427387904");
  /* not provably >= 0: 3 - N, -N + 3, N - 2; and a divisor of 0 */
  expect_not_folded(t, node2(t, GOP_DIV, node2(t, GOP_SUB, k3, n), k2));
  expect_not_folded(t, node2(t, GOP_DIV, node2(t, GOP_ADD, neg, k3), k2));
  expect_not_folded(t, node2(t, GOP_DIV, node2(t, GOP_ADD, n, node1(t, GOP_NEG, k2)), k2));
  expect_not_folded(t, node2(t, GOP_DIV, n, k0));
  /* 0 * N is 0; N + INT64_MIN has no N - 2^63 form */
  expect_i(t, node2(t, GOP_MUL, k0, n), 1, (int64_t[]){0});
  cr_assert_str_eq(elem_text(t, node2(t, GOP_ADD, n, kmin), 0), "N + (-9223372036854775808)");
  g_free(t);
}

/* Float to signed integer casts fold C's truncation where it is defined;
 * NaN and values outside the type (C's undefined conversions) are left to
 * run time. Symbolic elements fold only into i64 or i32 (ops.md); and a
 * symbolic index cannot pick an element now. */
Test(fold, casts_and_indices_left_to_run_time) {
  G *t = g_new();
  GUARD(t);
  int64_t one[1] = {1}, two[1] = {2};
  GraphAttr toi32 = string_attr("to", "i32"), toi16 = string_attr("to", "i16");
  int ok = node(t, GOP_CAST, 1, (int[]){cf32(t, 1, two, (float[]){2.7f, -2.7f})}, 1, &toi32);
  expect_folded(t, ok, 1, two);
  expect_i(t, ok, 2, (int64_t[]){2, -2});
  expect_not_folded(t, node(t, GOP_CAST, 1, (int[]){cf32(t, 1, one, (float[]){NAN})}, 1, &toi32));
  expect_not_folded(t, node(t, GOP_CAST, 1, (int[]){cf32(t, 1, one, (float[]){3e9f})}, 1, &toi32));
  expect_not_folded(t, node(t, GOP_CAST, 1, (int[]){cf32(t, 1, one, (float[]){-3e9f})}, 1, &toi32));
  /* -2^31 itself is in range */
  int lowest = node(t, GOP_CAST, 1, (int[]){cf32(t, 1, one, (float[]){-2147483648.0f})}, 1, &toi32);
  expect_i(t, lowest, 1, (int64_t[]){INT32_MIN});
  int x = sym_input(t);
  int shape = node1(t, GOP_SHAPE, x);
  expect_not_folded(t, node(t, GOP_CAST, 1, &shape, 1, &toi16));
  /* gather with the shape [N, 3, 4] as indices into a constant */
  int64_t five[1] = {5};
  int table = ci64(t, 1, five, (int64_t[]){10, 11, 12, 13, 14});
  expect_not_folded(t, node2(t, GOP_GATHER, table, shape));
  g_free(t);
}

/* Pad's reflect, edge and wrap modes (np.pad's), repeat (np.repeat on
 * each dim), transpose with a perm, gather of 2-D indices along axis 0
 * (np.take), concat of three. */
Test(fold, layout_modes_vs_numpy) {
  G *t = g_new();
  GUARD(t);
  int64_t s23[2] = {2, 3}, s47[2] = {4, 7}, s69[2] = {4, 9};
  int x = cf32(t, 2, s23, (float[]){1, 2, 3, 4, 5, 6});
  int64_t pads[4] = {1, 1, 2, 2};
  static const struct {
    const char *mode;
    double want[28];
  } modes[] = {
      {"reflect", {6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1}},
      {"edge", {1, 1, 1, 2, 3, 3, 3, 1, 1, 1, 2, 3, 3, 3, 4, 4, 4, 5, 6, 6, 6, 4, 4, 4, 5, 6, 6, 6}},
      {"wrap", {5, 6, 4, 5, 6, 4, 5, 2, 3, 1, 2, 3, 1, 2, 5, 6, 4, 5, 6, 4, 5, 2, 3, 1, 2, 3, 1, 2}},
  };
  for (int m = 0; m < 3; m++) {
    GraphAttr pa[2] = {{.name = "padding", .kind = GA_INTS2, .n = 2, .ints = pads}, string_attr("mode", modes[m].mode)};
    int p = node(t, GOP_PAD, 1, &x, 2, pa);
    expect_folded(t, p, 2, s47);
    expect_f(t, p, 28, modes[m].want);
  }
  int64_t rep[2] = {2, 3};
  GraphAttr ra = ints_attr("repeats", 2, rep);
  int r = node(t, GOP_REPEAT, 1, &x, 1, &ra);
  expect_folded(t, r, 2, s69);
  expect_f(t, r, 36, (double[]){1, 1, 1, 2, 2, 2, 3, 3, 3, 1, 1, 1, 2, 2, 2, 3, 3, 3,
                                4, 4, 4, 5, 5, 5, 6, 6, 6, 4, 4, 4, 5, 5, 5, 6, 6, 6});
  int64_t s234[3] = {2, 3, 4}, s342[3] = {3, 4, 2}, perm[3] = {1, 2, 0};
  float v24[24];
  for (int i = 0; i < 24; i++)
    v24[i] = (float)i;
  int y = cf32(t, 3, s234, v24);
  GraphAttr pe = ints_attr("perm", 3, perm);
  int tr = node(t, GOP_TRANSPOSE, 1, &y, 1, &pe);
  expect_folded(t, tr, 3, s342);
  expect_f(t, tr, 10, (double[]){0, 12, 1, 13, 2, 14, 3, 15, 4, 16});
  int64_t s33[2] = {3, 3}, s22[2] = {2, 2}, s223[3] = {2, 2, 3};
  int d = cf32(t, 2, s33, (float[]){10, 11, 12, 20, 21, 22, 30, 31, 32});
  int ga = node2(t, GOP_GATHER, d, ci64(t, 2, s22, (int64_t[]){2, 0, 1, -1}));
  expect_folded(t, ga, 3, s223);
  expect_f(t, ga, 12, (double[]){30, 31, 32, 10, 11, 12, 20, 21, 22, 30, 31, 32});
  int64_t s13[2] = {1, 3}, s53[2] = {5, 3};
  GraphAttr ax0 = int_attr("axis", 0);
  int cat = node(t, GOP_CONCAT, 3, (int[]){x, cf32(t, 2, s13, (float[]){7, 8, 9}), x}, 1, &ax0);
  expect_folded(t, cat, 2, s53);
  expect_f(t, cat, 15, (double[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6});
  g_free(t);
}

/* Reductions over an empty dim (np.sum over axis 0 of shape (0, 3) gives
 * zeros, np.prod ones, np.max -inf in lgen's initialisation), integer
 * products, a reduction over all dims with an empty axes list. */
Test(fold, reductions_more) {
  G *t = g_new();
  GUARD(t);
  int64_t s03[2] = {0, 3}, s3[1] = {3}, s23[2] = {2, 3}, s30[2] = {3, 0};
  int e = cf32(t, 2, s03, NULL);
  int64_t ax0[1] = {0}, ax1[1] = {1};
  GraphAttr keep0[2] = {ints_attr("axes", 1, ax0), int_attr("keepdims", 0)};
  int es = node(t, GOP_REDUCE_SUM, 1, &e, 2, keep0);
  expect_folded(t, es, 1, s3);
  expect_f(t, es, 3, (double[]){0, 0, 0});
  expect_f(t, node(t, GOP_REDUCE_PROD, 1, &e, 2, keep0), 3, (double[]){1, 1, 1});
  /* a kept dim of 0: nothing to reduce into */
  int e30 = cf32(t, 2, s30, NULL);
  GraphAttr keep1[2] = {ints_attr("axes", 1, ax0), int_attr("keepdims", 0)};
  int em = node(t, GOP_REDUCE_MEAN, 1, &e30, 2, keep1);
  expect_folded(t, em, 1, (int64_t[]){0});
  int xi = ci64(t, 2, s23, (int64_t[]){1, -2, 3, 4, 5, -6});
  GraphAttr rows[2] = {ints_attr("axes", 1, ax1), int_attr("keepdims", 0)};
  expect_i(t, node(t, GOP_REDUCE_PROD, 1, &xi, 2, rows), 2, (int64_t[]){-6, -120});
  expect_i(t, node(t, GOP_REDUCE_MAX, 1, &xi, 2, rows), 2, (int64_t[]){3, 5});
  expect_i(t, node(t, GOP_REDUCE_MIN, 1, &xi, 2, rows), 2, (int64_t[]){-2, -6});
  GraphAttr all[2] = {ints_attr("axes", 0, NULL), int_attr("keepdims", 0)};
  int x = cf32(t, 2, s23, (float[]){1, 2, 3, 4, 5, 6});
  expect_f(t, node(t, GOP_REDUCE_SUM, 1, &x, 2, all), 1, (double[]){21});
  g_free(t);
}

/* vecmat, batch_matmul, a 1-D times 2-D matmul, einsum of two operands
 * (np.matmul, np.einsum), and an i32 matmul that wraps like C's int32
 * arithmetic (np.matmul of int64, cast to int32). */
Test(fold, contractions_more) {
  G *t = g_new();
  GUARD(t);
  int64_t s2[1] = {2}, s3[1] = {3}, s23[2] = {2, 3}, s22[2] = {2, 2}, s223[3] = {2, 2, 3}, s231[3] = {2, 3, 1},
          s221[3] = {2, 2, 1};
  int v = cf32(t, 1, s2, (float[]){1, -1});
  int m = cf32(t, 2, s23, (float[]){0, 1, 2, 3, 4, 5});
  int vm = node2(t, GOP_VECMAT, v, m);
  expect_folded(t, vm, 1, s3);
  expect_f(t, vm, 3, (double[]){-3, -3, -3});
  int mm1 = node2(t, GOP_MATMUL, v, m);
  expect_folded(t, mm1, 1, s3);
  expect_f(t, mm1, 3, (double[]){-3, -3, -3});
  int a = cf32(t, 3, s223, (float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  int b = cf32(t, 3, s231, (float[]){-2, -1, 0, 1, 2, 3});
  int bm = node2(t, GOP_BATCH_MATMUL, a, b);
  expect_folded(t, bm, 3, s221);
  expect_f(t, bm, 4, (double[]){-1, -10, 44, 62});
  GraphAttr eq = string_attr("equation", "ij,kj->ik");
  int es = node(t, GOP_EINSUM, 2, (int[]){m, m}, 1, &eq);
  expect_folded(t, es, 2, s22);
  expect_f(t, es, 4, (double[]){5, 14, 14, 50});
  int32_t ai[4] = {70000, 2, 3, 4}, bi[4] = {70000, 1, 1, 1};
  int p = graph_add_const(t->g, cname(t), TY_I32, 2, s22, ai, "");
  int q = graph_add_const(t->g, cname(t), TY_I32, 2, s22, bi, "");
  expect_i(t, node2(t, GOP_MATMUL, p, q), 4, (int64_t[]){605032706, 70002, 210004, 7});
  g_free(t);
}

/* What folding leaves to run time on purpose (fold.c's limits): a
 * broadcast that expands a few values past 2^16 elements, a result over
 * the constant budget (--max-constant-bytes), a contraction of more than
 * 2^27 multiply-adds, and a gather whose index is a symbolic dim. */
Test(fold, limits_leave_nodes) {
  G *t = g_new();
  GUARD(t);
  int64_t s1[1] = {1}, s2[1] = {2};
  int one = cf32(t, 1, s1, (float[]){1});
  int64_t to_small[2] = {16, 4096}, to_big[2] = {16, 4097};
  expect_folded(t, node2(t, GOP_BROADCAST, one, ci64(t, 1, s2, to_small)), 2, to_small); /* 2^16: folds */
  expect_not_folded(t, node2(t, GOP_BROADCAST, one, ci64(t, 1, s2, to_big)));
  int64_t s600[2] = {600, 600};
  float *big = calloc(600 * 600, sizeof *big);
  cr_assert_not_null(big);
  int m = cf32(t, 2, s600, big);
  free(big);
  expect_not_folded(t, node2(t, GOP_MATMUL, m, m)); /* 600^3 > 2^27 */
  int x = sym_input(t);
  int shape = node1(t, GOP_SHAPE, x);
  int64_t zero = 0;
  int n = node2(t, GOP_GATHER, shape, ci64(t, 0, NULL, &zero));
  int64_t s3[1] = {3};
  expect_not_folded(t, node2(t, GOP_GATHER, cf32(t, 1, s3, (float[]){1, 2, 3}), n));
  t->g->max_const_bytes = t->g->const_bytes + 64; /* room for 8 elements of 8 bytes */
  int64_t s9[1] = {9};
  int a9 = cf32(t, 1, s9, (float[]){1, 2, 3, 4, 5, 6, 7, 8, 9}); /* 36 bytes: fits */
  expect_not_folded(t, node1(t, GOP_NEG, a9));                 /* 9 x 8 more: does not */
  g_free(t);
}
