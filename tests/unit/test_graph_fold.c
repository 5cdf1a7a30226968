/* test_graph_fold.c - constant folding (src/graph/build/fold.c) through the
 * builder: tiny graphs whose nodes have constant inputs, and what the
 * folded constants hold (elements, symbolic expressions), or that a node
 * which must not fold stays a node. */
#include <math.h>

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
  t->g = graph_new(t->arena, &t->diag, &t->src, NULL);
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
