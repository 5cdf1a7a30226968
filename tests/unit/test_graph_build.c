/* test_graph_build.c - the graph builder (src/graph/build/build.c, expand.c):
 * shape and type inference by ops.md, attribute normalisation, and located
 * errors for graphs that do not fit. */
#include <math.h>

#include "frontend/json_locate.h"
#include "graph/graph.h"
#include "unit.h"

/* A JSON text the error tests point into: /nodes/N is on line N + 2. */
static const char json_text[] = "{\"nodes\": [\n"
                                "  {\"op\": \"n0\"},\n"
                                "  {\"op\": \"n1\", \"attrs\": {\"axes\": [5]}},\n"
                                "  {\"op\": \"n2\"}\n"
                                "]}\n";

typedef struct {
  Unit *u;
  Graph *g;
} T;

static T t_new(void) {
  T t;
  t.u = unit_new(json_text);
  t.u->src.name = "g.json";
  t.g = graph_new(t.u->arena, &t.u->diag, json_locator_loc, json_locator_new(t.u->arena, &t.u->src), NULL);
  return t;
}

static const char *sym_name(void *ctx, int i) { return ((Graph *)ctx)->symbols.items[i]; }
static const char *no_name(void *ctx, int i) {
  (void)ctx, (void)i;
  return "?";
}

/* "[N, 3]" (caller frees) */
static char *shape_of(Graph *g, int v) {
  const GraphValue *x = GRAPH_VALUE(g, v);
  AffineNames names = {no_name, sym_name, NULL, g, false};
  StrBuf sb = {0};
  sb_putc(&sb, '[');
  for (int i = 0; i < x->rank; i++) {
    if (i)
      sb_puts(&sb, ", ");
    affine_print(&sb, x->shape[i], &names);
  }
  sb_putc(&sb, ']');
  char *s = strdup(sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

static void expect_shape(Graph *g, int v, const char *want) {
  char *s = shape_of(g, v);
  cr_assert_str_eq(s, want, "shape of '%s'", GRAPH_VALUE(g, v)->name);
  free(s);
}

static AffineExpr *sym(Graph *g, const char *name) {
  return affine_leaf(g->arena, AE_SIZE, graph_symbol(g, name), 0);
}

static AffineExpr *cst(Graph *g, int64_t v) { return graph_dim_const(g, v); }

/* An f32 input: dims are numbers, or symbols for negative numbers taken
 * from names ("N" for -1, "M" for -2). */
static int input(Graph *g, const char *name, int rank, const int64_t *dims) {
  static const char *const syms[] = {"N", "M", "K"};
  AffineExpr *shape[LG_MAX_RANK];
  for (int i = 0; i < rank; i++)
    shape[i] = dims[i] < 0 ? sym(g, syms[-dims[i] - 1]) : cst(g, dims[i]);
  return graph_add_input(g, name, TY_F32, rank, shape, NULL);
}

#define IN(g, name, ...)                                                                                          \
  input(g, name, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

static int node1(Graph *g, GraphOp op, int a, int nattrs, const GraphAttr *attrs, const char *path) {
  return graph_add_node(g, op, NULL, 1, &a, nattrs, attrs, NULL, path, NULL);
}

static int node2(Graph *g, GraphOp op, int a, int b, int nattrs, const GraphAttr *attrs, const char *path) {
  int in[2] = {a, b};
  return graph_add_node(g, op, NULL, 2, in, nattrs, attrs, NULL, path, NULL);
}

/* The diagnostic must be one error at line:col of g.json containing needle. */
static void expect_error(T *t, int line, int col, const char *needle) {
  const char *d = unit_diag(t->u);
  cr_assert_eq(t->u->diag.errors, 1, "expected one error, got:\n%s", d);
  char want[64];
  snprintf(want, sizeof want, "g.json:%d:%d: error: ", line, col);
  cr_assert_not_null(strstr(d, want), "expected an error at %d:%d, got:\n%s", line, col, d);
  cr_assert_not_null(strstr(d, needle), "error lacks \"%s\":\n%s", needle, d);
}

#define TRY(t) if (setjmp((t).u->on_error) == 0)
#define MUST_FAIL(t) cr_assert_fail("no error:\n%s", unit_diag((t).u))
#define OK_OR_FAIL(t) cr_assert_fail("unexpected error:\n%s", unit_diag((t).u))

Test(graph_build, op_table_and_lookup) {
  GraphOp op;
  cr_assert(graph_op_lookup("matmul", &op));
  cr_assert_eq(op, GOP_MATMUL);
  cr_assert_str_eq(graph_op_info(GOP_WHERE)->name, "where");
  cr_assert_eq(graph_op_info(GOP_CONV)->max_inputs, 3);
  cr_assert(!graph_op_lookup("nosuchop", &op));
}

Test(graph_build, names_and_symbols) {
  T t = t_new();
  TRY(t) {
    int x = IN(t.g, "x", -1, 3);
    cr_assert_eq(graph_find(t.g, "x"), x);
    cr_assert_eq(graph_find(t.g, "y"), -1);
    cr_assert_eq(graph_symbol(t.g, "N"), 0);
    cr_assert_eq(graph_symbol(t.g, "B"), 1);
    char name[16];
    for (int i = 0; i < 200; i++) { /* the index grows */
      snprintf(name, sizeof name, "v%d", i);
      IN(t.g, name, 2);
    }
    cr_assert_eq(graph_find(t.g, "v150"), x + 151);
    cr_assert_eq(t.g->inputs.len, 201);
    IN(t.g, "x", 1);
    MUST_FAIL(t);
  }
  cr_assert_not_null(strstr(unit_diag(t.u), "'x' is already defined"), "%s", unit_diag(t.u));
  unit_free(t.u);
}

Test(graph_build, given_names_take_over_generated_ones) {
  T t = t_new();
  TRY(t) {
    int x = IN(t.g, "x", 4);
    int y = node1(t.g, GOP_EXP, x, 0, NULL, NULL);
    const char *gen = GRAPH_VALUE(t.g, y)->name;
    cr_assert_eq(graph_find(t.g, gen), y);
    int z = IN(t.g, gen, 2); /* a file's later value with the same name */
    cr_assert_eq(graph_find(t.g, gen), z);
    cr_assert_str_neq(GRAPH_VALUE(t.g, y)->name, gen);
    cr_assert_eq(graph_find(t.g, GRAPH_VALUE(t.g, y)->name), y);
    IN(t.g, "x", 1); /* given names still clash */
    MUST_FAIL(t);
  }
  cr_assert_not_null(strstr(unit_diag(t.u), "'x' is already defined"), "%s", unit_diag(t.u));
  unit_free(t.u);
}

Test(graph_build, broadcasting_with_symbolic_dims) {
  T t = t_new();
  TRY(t) {
    int a = IN(t.g, "a", -1, 1, 5), b = IN(t.g, "b", 3, 1), c = IN(t.g, "c", 5);
    expect_shape(t.g, node2(t.g, GOP_ADD, a, b, 0, NULL, NULL), "[N, 3, 5]");
    expect_shape(t.g, node2(t.g, GOP_MUL, c, a, 0, NULL, NULL), "[N, 1, 5]");
    int n1 = IN(t.g, "n1", -1), eq = node2(t.g, GOP_LESS, n1, n1, 0, NULL, NULL);
    expect_shape(t.g, eq, "[N]");
    cr_assert_eq(GRAPH_VALUE(t.g, eq)->type, TY_I1);
    int w = IN(t.g, "w", 1, -1);
    expect_shape(t.g, node2(t.g, GOP_SUB, n1, w, 0, NULL, NULL), "[1, N]");
  }
  unit_free(t.u);
}

/* Dims lgen cannot prove equal (N and M, a floordiv chain against a
 * multiple of another) are assumed equal, once each, and checked at run
 * time (SizeAssume); two different numbers still cannot broadcast. */
Test(graph_build, broadcast_assumes_unproven_equal_dims) {
  T t = t_new();
  TRY(t) {
    int n1 = IN(t.g, "n1", -1), m = IN(t.g, "m", -2);
    expect_shape(t.g, node2(t.g, GOP_ADD, n1, m, 0, NULL, "/nodes/2"), "[N]");
    node2(t.g, GOP_MUL, m, n1, 0, NULL, "/nodes/3");
    cr_assert_eq(t.g->assumes.len, 1, "the same pair is assumed once");
    int k = IN(t.g, "k", 7);
    expect_shape(t.g, node2(t.g, GOP_SUB, n1, k, 0, NULL, "/nodes/4"), "[7]");
    cr_assert_eq(t.g->assumes.len, 2);
    const SizeAssume *a = t.g->assumes.items[0];
    cr_assert_not_null(strstr(a->what, "N and M"), "%s", a->what);
  }
  unit_free(t.u);
}

/* A grouped conv whose output channels F are symbolic: F must split into
 * the groups, which only the run can tell, so the graph assumes
 * F = (F floordiv group) * group and the entry point checks it (an odd F
 * for 2 groups read input channels past the last before). A static F that
 * does not split is an error now. */
Test(graph_build, grouped_conv_symbolic_channels_assumed) {
  T t = t_new();
  TRY(t) {
    int x = IN(t.g, "x", 1, 2, 5, 5), w = IN(t.g, "w", -1, 1, 3, 3);
    GraphAttr group = {.name = "group", .kind = GA_INT, .i = 2};
    expect_shape(t.g, node2(t.g, GOP_CONV, x, w, 1, &group, "/nodes/1"), "[1, N, 3, 3]");
    cr_assert_eq(t.g->assumes.len, 1);
    const SizeAssume *a = t.g->assumes.items[0];
    cr_assert_not_null(strstr(a->what, "a multiple of 'group': N and N floordiv 2 * 2"), "%s", a->what);
    int w3 = IN(t.g, "w3", 3, 1, 3, 3);
    node2(t.g, GOP_CONV, x, w3, 1, &group, "/nodes/2");
    MUST_FAIL(t);
  }
  expect_error(&t, 4, 3, "3 output channels do not split into 2 groups");
  unit_free(t.u);
}

Test(graph_build, broadcast_error_static) {
  T t = t_new();
  TRY(t) {
    node2(t.g, GOP_ADD, IN(t.g, "a", 2, 3), IN(t.g, "b", 4), 0, NULL, "/nodes/0");
    MUST_FAIL(t);
  }
  expect_error(&t, 2, 3, "node 0 (add): cannot broadcast [2, 3] and [4]");
  unit_free(t.u);
}

Test(graph_build, type_rules) {
  T t = t_new();
  TRY(t) {
    AffineExpr *d = cst(t.g, 4);
    int i = graph_add_input(t.g, "i", TY_I32, 1, &d, NULL);
    int f = IN(t.g, "f", 4);
    cr_assert_eq(GRAPH_VALUE(t.g, node1(t.g, GOP_RELU, i, 0, NULL, NULL))->type, TY_I32);
    GraphAttr to = {.name = "to", .kind = GA_STRING, .s = "f16"};
    cr_assert_eq(GRAPH_VALUE(t.g, node1(t.g, GOP_CAST, f, 1, &to, NULL))->type, TY_F16);
    node1(t.g, GOP_EXP, i, 0, NULL, "/nodes/1");
    MUST_FAIL(t);
  }
  expect_error(&t, 3, 3, "floating-point");
  unit_free(t.u);
}

Test(graph_build, defaults_are_filled_in) {
  T t = t_new();
  TRY(t) {
    int x = IN(t.g, "x", 4);
    int y = node1(t.g, GOP_SELU, x, 0, NULL, NULL);
    const GraphNode *n = GRAPH_NODE(t.g, GRAPH_VALUE(t.g, y)->producer);
    cr_assert_float_eq(graph_attr_float(t.g, n, "gamma", 0), 1.05070102214813232421875, 1e-15);
    GraphAttr alpha = {.name = "alpha", .kind = GA_INT, .i = 2};
    y = node1(t.g, GOP_ELU, x, 1, &alpha, NULL);
    n = GRAPH_NODE(t.g, GRAPH_VALUE(t.g, y)->producer);
    cr_assert_eq(graph_attr(t.g, n, "alpha")->kind, GA_FLOAT);
    cr_assert_float_eq(graph_attr(t.g, n, "alpha")->f, 2.0, 0);
    y = node1(t.g, GOP_GELU, x, 0, NULL, NULL);
    n = GRAPH_NODE(t.g, GRAPH_VALUE(t.g, y)->producer);
    cr_assert_str_eq(graph_attr_string(t.g, n, "approximate", NULL), "none");
  }
  else OK_OR_FAIL(t);
  unit_free(t.u);
}

Test(graph_build, matmul_promotion_and_batch_broadcast) {
  T t = t_new();
  TRY(t) {
    int a = IN(t.g, "a", 2, 1, 4, 5), b = IN(t.g, "b", 3, 5, 6), v = IN(t.g, "v", 5), w = IN(t.g, "w", 4);
    expect_shape(t.g, node2(t.g, GOP_MATMUL, a, b, 0, NULL, NULL), "[2, 3, 4, 6]");
    expect_shape(t.g, node2(t.g, GOP_MATMUL, a, v, 0, NULL, NULL), "[2, 1, 4]");
    expect_shape(t.g, node2(t.g, GOP_MATMUL, w, a, 0, NULL, NULL), "[2, 1, 5]");
    expect_shape(t.g, node2(t.g, GOP_MATMUL, v, v, 0, NULL, NULL), "[]");
    int x = IN(t.g, "x", -1, 784), m = IN(t.g, "m", 784, 10);
    expect_shape(t.g, node2(t.g, GOP_MATMUL, x, m, 0, NULL, NULL), "[N, 10]");
    expect_shape(t.g, node2(t.g, GOP_MATVEC, m, IN(t.g, "k10", 10), 0, NULL, NULL), "[784]");
    expect_shape(t.g, node2(t.g, GOP_DOT, v, v, 0, NULL, NULL), "[]");
    node2(t.g, GOP_MATMUL, m, x, 0, NULL, "/nodes/0");
    MUST_FAIL(t);
  }
  expect_error(&t, 2, 3, "inner dims of [784, 10] and [N, 784]");
  unit_free(t.u);
}

static const char *einsum_of(T *t, int out) {
  const GraphNode *n = GRAPH_NODE(t->g, GRAPH_VALUE(t->g, out)->producer);
  return graph_attr_string(t->g, n, "equation", NULL);
}

static int einsum(Graph *g, const char *eq, int nin, const int *in) {
  GraphAttr a = {.name = "equation", .kind = GA_STRING, .s = eq, .path = "/nodes/1/attrs"};
  return graph_add_node(g, GOP_EINSUM, NULL, nin, in, 1, &a, NULL, "/nodes/1", NULL);
}

Test(graph_build, einsum_normalisation) {
  T t = t_new();
  TRY(t) {
    int x = IN(t.g, "x", -1, 3, 3);
    int y = einsum(t.g, "...ii->...i", 1, &x);
    cr_assert_str_eq(einsum_of(&t, y), "aii->ai");
    expect_shape(t.g, y, "[N, 3]");
    int ab[2] = {IN(t.g, "a", 2, 3), IN(t.g, "b", 3, 4)};
    y = einsum(t.g, "ij,jk", 2, ab);
    cr_assert_str_eq(einsum_of(&t, y), "ij,jk->ik");
    expect_shape(t.g, y, "[2, 4]");
    int bc[2] = {IN(t.g, "p", 5, 1, 2, 3), IN(t.g, "q", 4, 3, 6)};
    y = einsum(t.g, "...ij,...jk", 2, bc);
    cr_assert_str_eq(einsum_of(&t, y), "abij,bjk->abik");
    expect_shape(t.g, y, "[5, 4, 2, 6]");
    y = einsum(t.g, "ba", 1, &ab[0]);
    cr_assert_str_eq(einsum_of(&t, y), "ba->ab");
    expect_shape(t.g, y, "[3, 2]");
    einsum(t.g, "ij,ij->i", 2, ab);
    MUST_FAIL(t);
  }
  expect_error(&t, 3, 25, "'i' is 2 in one place and 3 in another");
  unit_free(t.u);
}

static GraphAttr ints(const char *name, int n, int64_t *v) {
  return (GraphAttr){.name = name, .kind = GA_INTS, .n = n, .ints = v};
}

static GraphAttr pads(int n, int64_t *v) { return (GraphAttr){.name = "padding", .kind = GA_INTS2, .n = n, .ints = v}; }

Test(graph_build, conv_output_extents) {
  T t = t_new();
  TRY(t) {
    int x = IN(t.g, "x", -1, 3, 224, 224), w = IN(t.g, "w", 64, 3, 7, 7);
    int64_t s2[2] = {2, 2}, p3[4] = {3, 3, 3, 3};
    GraphAttr at[2] = {ints("strides", 2, s2), pads(2, p3)};
    int y = node2(t.g, GOP_CONV_2D_NCHW_FCHW, x, w, 2, at, NULL);
    expect_shape(t.g, y, "[N, 64, 112, 112]");
    const GraphNode *n = GRAPH_NODE(t.g, GRAPH_VALUE(t.g, y)->producer);
    cr_assert_eq(graph_attr(t.g, n, "dilations")->n, 2);
    /* symbolic spatial dims: floordiv expressions */
    int xs = IN(t.g, "xs", 1, -2, -2, 8), ws = IN(t.g, "ws", 3, 3, 8, 16);
    expect_shape(t.g, node2(t.g, GOP_CONV_2D_NHWC_HWCF, xs, ws, 0, NULL, NULL), "[1, M - 2, M - 2, 16]");
    expect_shape(t.g, node2(t.g, GOP_CONV_2D_NHWC_HWCF, xs, ws, 1, at, NULL),
                 "[1, (M - 3) floordiv 2 + 1, (M - 3) floordiv 2 + 1, 16]");
    /* ONNX conv with groups and bias */
    int xg = IN(t.g, "xg", 1, 8, 10), wg = IN(t.g, "wg", 4, 2, 3), bg = IN(t.g, "bg", 4);
    int in3[3] = {xg, wg, bg};
    GraphAttr grp = {.name = "group", .kind = GA_INT, .i = 4};
    expect_shape(t.g, graph_add_node(t.g, GOP_CONV, NULL, 3, in3, 1, &grp, NULL, NULL, NULL), "[1, 4, 8]");
    node2(t.g, GOP_CONV_2D_NCHW_FCHW, x, IN(t.g, "wbad", 64, 4, 7, 7), 0, NULL, "/nodes/0");
    MUST_FAIL(t);
  }
  expect_error(&t, 2, 3, "input channels do not match: 3 vs 4");
  unit_free(t.u);
}

Test(graph_build, pool_output_extents_with_ceil_mode) {
  T t = t_new();
  TRY(t) {
    int x = IN(t.g, "x", 1, 3, 32, 32);
    int64_t win[2] = {3, 3}, s2[2] = {2, 2}, one = 1;
    GraphAttr at[3] = {ints("window", 2, win), ints("strides", 2, s2),
                       {.name = "ceil_mode", .kind = GA_INT, .i = 1}};
    expect_shape(t.g, node1(t.g, GOP_POOLING_NCHW_MAX, x, 2, at, NULL), "[1, 3, 15, 15]");
    expect_shape(t.g, node1(t.g, GOP_POOLING_NCHW_MAX, x, 3, at, NULL), "[1, 3, 16, 16]");
    /* ceil_mode's last window would start in the right padding: dropped */
    int x5 = IN(t.g, "x5", 1, 1, 5);
    int64_t w2 = 2, p1[2] = {1, 1};
    GraphAttr a1[4] = {ints("window", 1, &w2), ints("strides", 1, &w2), pads(1, p1),
                       {.name = "ceil_mode", .kind = GA_INT, .i = 1}};
    expect_shape(t.g, node1(t.g, GOP_POOLING_NCHW_AVG, x5, 4, a1, NULL), "[1, 1, 3]");
    int y = node1(t.g, GOP_POOLING_NCHW_AVG, x5, 3, a1, NULL);
    expect_shape(t.g, y, "[1, 1, 3]");
    const GraphNode *n = GRAPH_NODE(t.g, GRAPH_VALUE(t.g, y)->producer);
    cr_assert_eq(graph_attr_int(t.g, n, "count_include_pad", -1), 0);
    /* symbolic, ceil_mode */
    int xs = IN(t.g, "xs", 1, 1, -1);
    expect_shape(t.g, node1(t.g, GOP_POOLING_NCHW_MAX, xs, 4, a1, NULL), "[1, 1, N floordiv 2 + 1]");
    int64_t w3 = 3;
    GraphAttr a2[4] = {ints("window", 1, &w3), ints("strides", 1, &w2), ints("dilations", 1, &one),
                       {.name = "ceil_mode", .kind = GA_INT, .i = 1}};
    expect_shape(t.g, node1(t.g, GOP_POOLING_NCHW_MAX, xs, 4, a2, NULL), "[1, 1, (N - 3) ceildiv 2 + 1]");
    int64_t w9 = 9;
    GraphAttr big = ints("window", 1, &w9);
    node1(t.g, GOP_POOLING_NCHW_MAX, x5, 1, &big, "/nodes/2");
    MUST_FAIL(t);
  }
  expect_error(&t, 4, 3, "larger than the padded input");
  unit_free(t.u);
}

/* ceil_mode against a brute-force count of window starts (ops.md's rule). */
Test(graph_build, ceil_mode_matches_the_rule) {
  T t = t_new();
  TRY(t) {
    int k = 0;
    for (int64_t in = 1; in <= 12; in++)
      for (int64_t win = 1; win <= 4; win++)
        for (int64_t st = 1; st <= 3; st++)
          for (int64_t lo = 0; lo < win; lo++)
            for (int64_t hi = 0; hi < win; hi++) {
              if (in + lo + hi < win)
                continue;
              char name[32];
              snprintf(name, sizeof name, "x%d", k++);
              int x = IN(t.g, name, 1, 1, in);
              int64_t pad[2] = {lo, hi};
              GraphAttr a[4] = {ints("window", 1, &win), ints("strides", 1, &st), pads(1, pad),
                                {.name = "ceil_mode", .kind = GA_INT, .i = 1}};
              int y = node1(t.g, GOP_POOLING_NCHW_MAX, x, 4, a, NULL);
              int64_t e = (in + lo + hi - win + st - 1) / st + 1;
              if ((e - 1) * st >= in + lo)
                e--;
              int64_t got;
              cr_assert(graph_dim_value(GRAPH_VALUE(t.g, y)->shape[2], &got));
              cr_assert_eq(got, e, "in %lld win %lld stride %lld pad %lld %lld", (long long)in, (long long)win,
                           (long long)st, (long long)lo, (long long)hi);
            }
  }
  else OK_OR_FAIL(t);
  unit_free(t.u);
}

Test(graph_build, reductions_axes_and_keepdims) {
  T t = t_new();
  TRY(t) {
    int x = IN(t.g, "x", -1, 3, 5);
    int64_t ax[2] = {-1, 0};
    GraphAttr a[2] = {ints("axes", 2, ax), {.name = "keepdims", .kind = GA_INT, .i = 0}};
    int y = node1(t.g, GOP_REDUCE_SUM, x, 2, a, NULL);
    expect_shape(t.g, y, "[3]");
    const GraphNode *n = GRAPH_NODE(t.g, GRAPH_VALUE(t.g, y)->producer);
    const GraphAttr *axes = graph_attr(t.g, n, "axes");
    cr_assert_eq(axes->n, 2);
    cr_assert_eq(axes->ints[0], 0);
    cr_assert_eq(axes->ints[1], 2);
    cr_assert_eq(ax[0], -1, "the caller's array is not touched");
    expect_shape(t.g, node1(t.g, GOP_REDUCE_MAX, x, 1, a, NULL), "[1, 3, 1]");
    y = node1(t.g, GOP_REDUCE_MEAN, x, 0, NULL, NULL);
    expect_shape(t.g, y, "[1, 1, 1]");
    n = GRAPH_NODE(t.g, GRAPH_VALUE(t.g, y)->producer);
    cr_assert_eq(graph_attr(t.g, n, "axes")->n, 3);
    cr_assert_eq(graph_attr_int(t.g, n, "keepdims", -1), 1);
    int64_t bad = 5;
    GraphAttr b = ints("axes", 1, &bad);
    b.path = "/nodes/1/attrs/axes";
    node1(t.g, GOP_REDUCE_SUM, x, 1, &b, "/nodes/1");
    MUST_FAIL(t);
  }
  expect_error(&t, 3, 34, "axis 5 is out of range for rank 3");
  unit_free(t.u);
}

Test(graph_build, duplicate_axes) {
  T t = t_new();
  TRY(t) {
    int64_t ax[2] = {1, -1};
    GraphAttr a = ints("axes", 2, ax);
    node1(t.g, GOP_REDUCE_SUM, IN(t.g, "x", 2, 3), 1, &a, "/nodes/0");
    MUST_FAIL(t);
  }
  expect_error(&t, 2, 3, "axis 1 appears twice");
  unit_free(t.u);
}

Test(graph_build, reshape_infers_minus_one_symbolically) {
  T t = t_new();
  TRY(t) {
    int x = IN(t.g, "x", -1, 1, 28, 28);
    int64_t sh[2] = {-1, 784};
    GraphAttr a = ints("shape", 2, sh);
    int y = node1(t.g, GOP_RESHAPE, x, 1, &a, NULL);
    expect_shape(t.g, y, "[N, 784]");
    const GraphNode *n = GRAPH_NODE(t.g, GRAPH_VALUE(t.g, y)->producer);
    cr_assert_null(graph_attr(t.g, n, "shape"));
    cr_assert_eq(n->ninputs, 1);
    /* and back, through a symbolic shape constant from `shape` */
    int s = node1(t.g, GOP_SHAPE, x, 0, NULL, NULL);
    cr_assert_eq(GRAPH_VALUE(t.g, s)->kind, GV_CONST);
    cr_assert_eq(GRAPH_VALUE(t.g, s)->count, 4);
    cr_assert_not_null(GRAPH_VALUE(t.g, s)->sym);
    expect_shape(t.g, node2(t.g, GOP_RESHAPE, y, s, 0, NULL, NULL), "[N, 1, 28, 28]");
    int64_t z[3] = {0, 0, -1};
    GraphAttr a0 = ints("shape", 3, z);
    expect_shape(t.g, node1(t.g, GOP_RESHAPE, x, 1, &a0, NULL), "[N, 1, 784]");
    /* 784 N elements in rows of 100: (196 N) floordiv 25 rows, the counts
     * assumed equal (N a multiple of 25) and checked at run time */
    int64_t inexact[2] = {-1, 100};
    GraphAttr ai = ints("shape", 2, inexact);
    expect_shape(t.g, node1(t.g, GOP_RESHAPE, x, 1, &ai, NULL), "[N * 196 floordiv 25, 100]");
    cr_assert_eq(t.g->assumes.len, 1);
    /* static and not a multiple: an error */
    int xs = IN(t.g, "xs", 3, 5);
    int64_t bad[2] = {-1, 4};
    GraphAttr ab = ints("shape", 2, bad);
    ab.path = "/nodes/1/attrs/axes";
    node1(t.g, GOP_RESHAPE, xs, 1, &ab, "/nodes/1");
    MUST_FAIL(t);
  }
  expect_error(&t, 3, 34, "cannot infer the -1");
  unit_free(t.u);
}

Test(graph_build, reshape_needs_a_constant_shape) {
  T t = t_new();
  TRY(t) {
    AffineExpr *two = cst(t.g, 2);
    int s = graph_add_input(t.g, "s", TY_I64, 1, &two, NULL);
    int in[2] = {IN(t.g, "x", 4), s};
    const char *out[1] = {"r"};
    graph_add_node(t.g, GOP_RESHAPE, NULL, 2, in, 0, NULL, out, "/nodes/0", NULL);
    MUST_FAIL(t);
  }
  expect_error(&t, 2, 3, "the shape of 'r' depends on run-time data (value 's')");
  unit_free(t.u);
}

Test(graph_build, layout_ops) {
  T t = t_new();
  TRY(t) {
    int x = IN(t.g, "x", -1, 3, 5);
    expect_shape(t.g, node1(t.g, GOP_TRANSPOSE, x, 0, NULL, NULL), "[5, 3, N]");
    int64_t perm[3] = {0, -1, 1};
    GraphAttr p = ints("perm", 3, perm);
    expect_shape(t.g, node1(t.g, GOP_TRANSPOSE, x, 1, &p, NULL), "[N, 5, 3]");
    int in2[2] = {x, x};
    GraphAttr ax = {.name = "axis", .kind = GA_INT, .i = -2};
    expect_shape(t.g, graph_add_node(t.g, GOP_CONCAT, NULL, 2, in2, 1, &ax, NULL, NULL, NULL), "[N, 6, 5]");
    ax.i = 0;
    expect_shape(t.g, graph_add_node(t.g, GOP_CONCAT, NULL, 2, in2, 1, &ax, NULL, NULL, NULL), "[N * 2, 3, 5]");
    int64_t pd[6] = {0, 0, 1, 2, 0, 0};
    GraphAttr pa = pads(3, pd);
    expect_shape(t.g, node1(t.g, GOP_PAD, x, 1, &pa, NULL), "[N, 6, 5]");
    int64_t b[3] = {2, 1, 5};
    GraphAttr ba = ints("shape", 3, b);
    expect_shape(t.g, node1(t.g, GOP_BROADCAST, IN(t.g, "c", 3, 1), 1, &ba, NULL), "[2, 3, 5]");
    int64_t st[2] = {1, 4}, sz[2] = {2, 2}, sd[2] = {1, -2};
    GraphAttr sa[3] = {ints("starts", 2, st), ints("sizes", 2, sz), ints("strides", 2, sd)};
    expect_shape(t.g, node1(t.g, GOP_SLICE, IN(t.g, "m", 4, 5), 3, sa, NULL), "[2, 2]");
    AffineExpr *d3 = cst(t.g, 3);
    int idx = graph_add_input(t.g, "idx", TY_I64, 1, &d3, NULL);
    ax.i = 1;
    expect_shape(t.g, graph_add_node(t.g, GOP_GATHER, NULL, 2, (int[]){x, idx}, 1, &ax, NULL, NULL, NULL),
                 "[N, 3, 5]");
  }
  else OK_OR_FAIL(t);
  unit_free(t.u);
}

Test(graph_build, softmax_expands_to_primitives) {
  T t = t_new();
  TRY(t) {
    int x = IN(t.g, "x", -1, 10);
    const char *out[1] = {"y"};
    int before = t.g->nodes.len;
    int y = graph_add_node(t.g, GOP_SOFTMAX, "sm", 1, &x, 0, NULL, out, NULL, "Softmax");
    cr_assert_str_eq(GRAPH_VALUE(t.g, y)->name, "y");
    expect_shape(t.g, y, "[N, 10]");
    static const GraphOp want[] = {GOP_REDUCE_MAX, GOP_SUB, GOP_EXP, GOP_REDUCE_SUM, GOP_DIV};
    cr_assert_eq(t.g->nodes.len - before, 5);
    for (int i = 0; i < 5; i++)
      cr_assert_eq(GRAPH_NODE(t.g, before + i)->op, want[i]);
    const GraphNode *mx = GRAPH_NODE(t.g, before);
    cr_assert_eq(graph_attr(t.g, mx, "axes")->ints[0], 1);
    cr_assert_eq(graph_attr_int(t.g, mx, "keepdims", 0), 1);
    int ls = graph_softmax(t.g, x, 0, true, NULL, NULL, NULL);
    expect_shape(t.g, ls, "[N, 10]");
    cr_assert_eq(GRAPH_NODE(t.g, t.g->nodes.len - 1)->op, GOP_SUB);
    cr_assert_eq(GRAPH_NODE(t.g, t.g->nodes.len - 2)->op, GOP_LOG);
  }
  else OK_OR_FAIL(t);
  unit_free(t.u);
}

Test(graph_build, constants_fold_and_shape_is_always_constant) {
  T t = t_new();
  TRY(t) {
    int64_t shp[1] = {3};
    float data[3] = {1, 2, 3};
    int c = graph_add_const(t.g, "c", TY_F32, 1, shp, data, NULL);
    cr_assert_float_eq(graph_const_f(GRAPH_VALUE(t.g, c), 2), 3.0, 0);
    int s = node1(t.g, GOP_SHAPE, IN(t.g, "x", 2, 7), 0, NULL, NULL);
    const GraphValue *sv = GRAPH_VALUE(t.g, s);
    cr_assert_eq(sv->kind, GV_CONST);
    cr_assert_null(sv->sym);
    cr_assert_eq(graph_const_i(sv, 1), 7);
    int nodes = t.g->nodes.len;
    int y = node2(t.g, GOP_ADD, c, c, 0, NULL, NULL);
    if (GRAPH_VALUE(t.g, y)->kind == GV_CONST) { /* fold.c evaluated it: no node remains */
      cr_assert_eq(t.g->nodes.len, nodes);
      cr_assert_float_eq(graph_const_f(GRAPH_VALUE(t.g, y), 2), 6.0, 0);
    }
  }
  else OK_OR_FAIL(t);
  unit_free(t.u);
}

Test(graph_build, arity_and_locations) {
  T t = t_new();
  TRY(t) {
    int x = IN(t.g, "x", 2);
    graph_add_node(t.g, GOP_ADD, "fc1", 1, &x, 0, NULL, NULL, "/nodes/2", "Add");
    MUST_FAIL(t);
  }
  expect_error(&t, 4, 3, "node 'fc1' (Add): takes 2 inputs, not 1");
  unit_free(t.u);
}

Test(graph_build, call_of_a_tc_def) {
  Unit *u = unit_lowered("def mm(A: f32(M, K), B: f32(K, N)) -> (C: f32(M, N)) {\n"
                         "  C(m, n) = std_addf<k>(std_mulf(A(m, k), B(k, n)));\n}");
  T t = t_new();
  TRY(t) {
    t.g->specs = &u->module;
    const Kernel *def = unit_kernel(u, 0);
    int a = IN(t.g, "a", -1, 8), b = IN(t.g, "b", 8, 16);
    int in[2] = {a, b};
    int c = graph_add_call(t.g, def, "mm1", 2, in, NULL, NULL);
    expect_shape(t.g, c, "[N, 16]");
    cr_assert_eq(GRAPH_NODE(t.g, GRAPH_VALUE(t.g, c)->producer)->def, def);
    in[1] = IN(t.g, "b9", 9, 16);
    graph_add_call(t.g, def, "mm2", 2, in, NULL, "/nodes/0");
    MUST_FAIL(t);
  }
  expect_error(&t, 2, 3, "needs dim 0 to be 8");
  unit_free(t.u);

  /* an input left out (-1, an empty name in lgen-graph): a def has no
   * optional inputs */
  t = t_new();
  TRY(t) {
    t.g->specs = &u->module;
    int in[2] = {IN(t.g, "a", 4, 8), -1};
    graph_add_call(t.g, unit_kernel(u, 0), "mm3", 2, in, NULL, "/nodes/1");
    MUST_FAIL(t);
  }
  expect_error(&t, 3, 3, "node 'mm3' (mm): input 1 is required");
  unit_free(t.u);
  unit_free(u);
}

Test(graph_build, locations_with_any_line_ends) {
  Unit *u = unit_new("{\"a\": 1,\r\"b\": [\r\n  2]}");
  Graph *g = graph_new(u->arena, &u->diag, json_locator_loc, json_locator_new(u->arena, &u->src), NULL);
  Loc l = graph_loc(g, "/b/0");
  cr_assert_eq(l.line, 3);
  cr_assert_eq(l.col, 3);
  l = graph_loc(g, NULL);
  cr_assert_eq(l.line, 1);
  cr_assert_eq(l.col, 1);
  cr_assert_eq(l.offset, 0);
  unit_free(u);
}

/* The builder's own checks of constants given through its API (the
 * front-ends check rank and extents first, so only a caller that skips
 * them reaches these): each names the constant and is located at its
 * path. */
Test(graph_build, const_rank_extent_and_scalar_count) {
  T t = t_new();
  int64_t dims[LG_MAX_RANK + 1];
  for (int d = 0; d <= LG_MAX_RANK; d++)
    dims[d] = 1;
  float one = 1;
  TRY(t) {
    graph_add_const(t.g, "w", TY_F32, LG_MAX_RANK + 1, dims, &one, "/nodes/0");
    MUST_FAIL(t);
  }
  char want[80];
  snprintf(want, sizeof want, "'w' has rank %d, out of range (at most %d dims)", LG_MAX_RANK + 1, LG_MAX_RANK);
  expect_error(&t, 2, 3, want);
  unit_free(t.u);

  t = t_new();
  int64_t neg[2] = {2, -3};
  TRY(t) {
    graph_add_const(t.g, "b", TY_F32, 2, neg, &one, "/nodes/1");
    MUST_FAIL(t);
  }
  expect_error(&t, 3, 3, "constant 'b' has a negative extent -3");
  unit_free(t.u);

  t = t_new();
  AffineExpr *two[2] = {cst(t.g, 4), cst(t.g, 5)};
  TRY(t) {
    graph_add_sym_const(t.g, "s", 2, two, true, "/nodes/2");
    MUST_FAIL(t);
  }
  expect_error(&t, 4, 3, "constant 's' is a scalar: it has one element, not 2");
  unit_free(t.u);
}

/* graph_add_call's own checks of its outputs (the front-ends refuse these
 * first: lgen-graph's "value 'y' is defined twice", the .tc grammar's
 * "expected a tensor name" for a def without outputs), located at the
 * node and naming it. */
Test(graph_build, call_outputs_checked) {
  Unit *u = unit_lowered("def two(A: f32(N)) -> (B: f32(N), C: f32(N)) {\n"
                         "  B(n) = A(n);\n  C(n) = A(n);\n}");
  T t = t_new();
  TRY(t) {
    t.g->specs = &u->module;
    int a = IN(t.g, "a", 4);
    const char *names[2] = {"y", "y"};
    graph_add_call(t.g, unit_kernel(u, 0), "split", 1, &a, names, "/nodes/1");
    MUST_FAIL(t);
  }
  expect_error(&t, 3, 3, "node 'split' (two): 'y' names two outputs");
  unit_free(t.u);

  /* the same def with every tensor an input: nothing to write */
  t = t_new();
  Kernel k = *unit_kernel(u, 0);
  TensorParam *tensors = calloc((size_t)k.ntensors, sizeof *tensors);
  cr_assert_not_null(tensors);
  for (int i = 0; i < k.ntensors; i++) {
    tensors[i] = k.tensors[i];
    tensors[i].is_output = false;
  }
  k.tensors = tensors;
  TRY(t) {
    t.g->specs = &u->module;
    int in[3] = {IN(t.g, "a", 4), IN(t.g, "b", 4), IN(t.g, "c", 4)};
    graph_add_call(t.g, &k, "sink", 3, in, NULL, "/nodes/2");
    MUST_FAIL(t);
  }
  expect_error(&t, 4, 3, "node 'sink' (two): 'two' has no outputs");
  free(tensors);
  unit_free(t.u);
  unit_free(u);
}

/* --input-value: each element read as the input's type, in range or
 * refused (a usage error naming the option, the element, the input and
 * its type); one value fills every element. The accepted ones are checked
 * element by element. */
Test(graph_build, input_values_by_type) {
  static const struct {
    ElemType type;
    const char *text;
    int64_t want_i[2];
    double want_f[2];
  } good[] = {
      {TY_U8, "0,255", {0, 255}, {0}},
      {TY_U16, "65535,7", {65535, 7}, {0}},
      {TY_U64, "18446744073709551615,1", {-1, 1}, {0}}, /* the bits of 2^64 - 1 */
      {TY_I8, "-128,127", {-128, 127}, {0}},
      {TY_I16, "-32768,5", {-32768, 5}, {0}},
      {TY_I32, "-2147483648,2147483647", {INT32_MIN, INT32_MAX}, {0}},
      {TY_I64, "-9223372036854775808,9", {INT64_MIN, 9}, {0}},
      {TY_I1, "1,0", {1, 0}, {0}},
      {TY_I8, "-3", {-3, -3}, {0}}, /* one value fills the input */
      {TY_F32, "1.5,-3.4e38", {0}, {1.5, (float)-3.4e38}},
      {TY_F32, "0.1,inf", {0}, {(float)0.1, INFINITY}},
      {TY_F64, "0.1,-1e300", {0}, {0.1, -1e300}},
  };
  for (size_t c = 0; c < sizeof good / sizeof *good; c++) {
    T t = t_new();
    char arg[80];
    snprintf(arg, sizeof arg, "x=%s", good[c].text);
    GraphDimOverride o = {.arg = arg, .name = "x", .text = good[c].text};
    GraphLoadOptions opts = {.dims = &o, .ndims = 1};
    graph_apply_options(t.g, &opts);
    int x = -1;
    TRY(t) { x = graph_add_input(t.g, "x", good[c].type, 1, (AffineExpr *[]){cst(t.g, 2)}, "/nodes/0"); }
    else OK_OR_FAIL(t);
    const GraphValue *v = GRAPH_VALUE(t.g, x);
    cr_assert_eq(v->kind, GV_CONST, "%s", good[c].text);
    cr_assert(o.used);
    for (int i = 0; i < 2; i++)
      if (good[c].type == TY_U64) /* graph_const_i saturates; the bits are the value */
        cr_assert_eq(((const uint64_t *)v->data)[i], (uint64_t)good[c].want_i[i], "%s: element %d", good[c].text, i);
      else if (elem_type_is_float(good[c].type))
        cr_assert(graph_const_f(v, i) == good[c].want_f[i], "%s: element %d is %.17g", good[c].text, i,
                  graph_const_f(v, i));
      else
        cr_assert_eq(graph_const_i(v, i), good[c].want_i[i], "%s: element %d is %lld", good[c].text, i,
                     (long long)graph_const_i(v, i));
    unit_free(t.u);
  }
  static const struct {
    ElemType type;
    const char *text, *bad;
  } bad[] = {
      {TY_U8, "1,256", "256"},
      {TY_U8, "-1,1", "-1"},
      {TY_U16, "65536,1", "65536"},
      {TY_U64, "18446744073709551616,1", "18446744073709551616"},
      {TY_U32, "1,2x", "2x"},
      {TY_I8, "-129,0", "-129"},
      {TY_I8, "0,128", "128"},
      {TY_I1, "2,0", "2"},
      {TY_I64, "9223372036854775808,0", "9223372036854775808"},
      {TY_I32, "1.5,2", "1.5"},
      {TY_F32, "3.5e38,1", "3.5e38"}, /* rounds to infinity */
      {TY_F64, "1e400,1", "1e400"},
      {TY_F64, "1,one", "one"},
      {TY_F32, "1,,2", ""},
      {TY_F32, "0.00000000000000000000000000000000000000000000000000000000000000000001,1",
       "0.00000000000000000000000000000000000000000000000000000000000000000001"}, /* 64 characters and more */
      {TY_F16, "1,2", "1"}, /* f16 values: not yet */
  };
  for (size_t c = 0; c < sizeof bad / sizeof *bad; c++) {
    T t = t_new();
    char arg[160], want[300];
    snprintf(arg, sizeof arg, "x=%s", bad[c].text);
    GraphDimOverride o = {.arg = arg, .name = "x", .text = bad[c].text};
    GraphLoadOptions opts = {.dims = &o, .ndims = 1};
    graph_apply_options(t.g, &opts);
    int64_t n = strcmp(bad[c].text, "1,,2") == 0 ? 3 : 2;
    TRY(t) {
      graph_add_input(t.g, "x", bad[c].type, 1, (AffineExpr *[]){cst(t.g, n)}, "/nodes/0");
      MUST_FAIL(t);
    }
    snprintf(want, sizeof want, "--input-value '%s': '%s' is not a value of input 'x' (%s)", arg, bad[c].bad,
             elem_type_name(bad[c].type));
    cr_assert_not_null(strstr(unit_diag(t.u), want), "want '%s' in:\n%s", want, unit_diag(t.u));
    unit_free(t.u);
  }
}

/* --input-shape and --dim as graph_input_shape applies them: a whole
 * shape for one input (its rank and its static dims must agree with the
 * model's; a 0 or symbolic dim takes the given extent), a --dim fixing a
 * symbol, symbols left alone otherwise. */
Test(graph_build, input_shape_and_dim_overrides) {
  GraphDimOverride o[3] = {
      {.arg = "x=2,3,5", .name = "x", .rank = 3, .values = {2, 3, 5}, .is_shape = true},
      {.arg = "N=7", .name = "N", .rank = 0, .values = {7}},
      {.arg = "v=1,2,3", .name = "v", .text = "1,2,3"},
  };
  GraphLoadOptions opts = {.dims = o, .ndims = 3};
  T t = t_new();
  graph_apply_options(t.g, &opts);
  TRY(t) {
    /* x: [B, 3, 0] in the model (B symbolic, 0 unknown) */
    AffineExpr **xs = graph_input_shape(t.g, "x", 3, (int64_t[]){0, 3, 0}, (const char *[]){"B", NULL, NULL});
    expect_shape(t.g, graph_add_input(t.g, "x", TY_F32, 3, xs, ""), "[2, 3, 5]");
    /* y: [N, M, 4]: N fixed by --dim, M left symbolic */
    AffineExpr **ys = graph_input_shape(t.g, "y", 3, (int64_t[]){0, 0, 4}, (const char *[]){"N", "M", NULL});
    expect_shape(t.g, graph_add_input(t.g, "y", TY_F32, 3, ys, ""), "[7, M, 4]");
  }
  else OK_OR_FAIL(t);
  cr_assert(o[0].used && o[1].used && !o[2].used);
  unit_free(t.u);

  /* the wrong rank, and a static dim the model gives otherwise */
  static const struct {
    int rank;
    int64_t dims[3];
    const char *want;
  } bad[] = {
      {2, {0, 3}, "--input-shape 'x=2,3,5': input 'x' has rank 2, not 3"},
      {3, {2, 4, 5}, "--input-shape 'x=2,3,5': dim 1 of input 'x' is 4 in the model, not 3"},
  };
  for (int c = 0; c < 2; c++) {
    t = t_new();
    o[0].used = false;
    graph_apply_options(t.g, &opts);
    TRY(t) {
      graph_input_shape(t.g, "x", bad[c].rank, bad[c].dims, (const char *[]){NULL, NULL, NULL});
      MUST_FAIL(t);
    }
    cr_assert_not_null(strstr(unit_diag(t.u), bad[c].want), "want '%s' in:\n%s", bad[c].want, unit_diag(t.u));
    unit_free(t.u);
  }
}

/* A call's result shapes are the def's shape expressions over the sizes
 * the inputs bind (N = 5 here): N * 2, N - 1, N + N. */
Test(graph_build, call_result_shape_expressions) {
  Unit *u = unit_lowered("def grow(A: f32(N)) -> (B: f32(2 * N), C: f32(N - 1), D: f32(N + N)) {\n"
                         "  B(i) = A(i floordiv 2);\n  C(i) = A(i + 1);\n  D(i) = A(i floordiv 2);\n}");
  T t = t_new();
  TRY(t) {
    t.g->specs = &u->module;
    int a = IN(t.g, "a", 5);
    const char *names[3] = {"b", "c", "d"};
    graph_add_call(t.g, unit_kernel(u, 0), "g", 1, &a, names, NULL);
    expect_shape(t.g, graph_find(t.g, "b"), "[10]");
    expect_shape(t.g, graph_find(t.g, "c"), "[4]");
    expect_shape(t.g, graph_find(t.g, "d"), "[10]");
    /* symbolic: the expressions, simplified as the builder does */
    int s = IN(t.g, "s", -1);
    const char *snames[3] = {"sb", "sc", "sd"};
    graph_add_call(t.g, unit_kernel(u, 0), "h", 1, &s, snames, NULL);
    expect_shape(t.g, graph_find(t.g, "sb"), "[N * 2]");
    expect_shape(t.g, graph_find(t.g, "sc"), "[N - 1]");
    expect_shape(t.g, graph_find(t.g, "sd"), "[N * 2]"); /* N + N, simplified */
  }
  else OK_OR_FAIL(t);
  unit_free(t.u);
  unit_free(u);
}

/* Dim arithmetic as the builder simplifies it (graph_dim_arith), and dim
 * equality through floordiv and mod (graph_dims_equal). */
static char *expr_text(Graph *g, const AffineExpr *e) {
  AffineNames names = {no_name, sym_name, NULL, g, false};
  StrBuf sb = {0};
  affine_print(&sb, e, &names);
  char *s = strdup(sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

static void expect_expr(Graph *g, const AffineExpr *e, const char *want) {
  char *s = expr_text(g, e);
  cr_assert_str_eq(s, want);
  free(s);
}

Test(graph_build, dim_arithmetic_and_equality) {
  T t = t_new();
  Graph *g = t.g;
  TRY(t) {
    AffineExpr *n = sym(g, "N");
    expect_expr(g, graph_dim_arith(g, AE_FLOORDIV, graph_dim_arith(g, AE_FLOORDIV, n, cst(g, 2)), cst(g, 3)),
                "N floordiv 6");
    expect_expr(g, graph_dim_arith(g, AE_CEILDIV, graph_dim_arith(g, AE_CEILDIV, n, cst(g, 2)), cst(g, 2)),
                "N ceildiv 4");
    /* ((N floordiv 2) - 1) floordiv 2 = (N - 2) floordiv 4 */
    AffineExpr *h = graph_dim_arith(g, AE_SUB, graph_dim_arith(g, AE_FLOORDIV, n, cst(g, 2)), cst(g, 1));
    expect_expr(g, graph_dim_arith(g, AE_FLOORDIV, h, cst(g, 2)), "(N - 2) floordiv 4");
    expect_expr(g, graph_dim_arith(g, AE_FLOORDIV, n, cst(g, 1)), "N");
    expect_expr(g, graph_dim_arith(g, AE_MOD, n, cst(g, 3)), "N mod 3");
    /* numbers: floor and ceiling division, and mod taking the divisor's sign */
    static const struct {
      AffineKind kind;
      int64_t a, b, want;
    } nums[] = {
        {AE_FLOORDIV, 7, 2, 3},  {AE_FLOORDIV, -7, 2, -4}, {AE_FLOORDIV, 7, -2, -4}, {AE_CEILDIV, 7, 2, 4},
        {AE_CEILDIV, -7, 2, -3}, {AE_CEILDIV, 8, 2, 4},    {AE_MOD, 7, 3, 1},        {AE_MOD, -7, 3, 2},
    };
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
      int64_t v;
      cr_assert(graph_dim_value(graph_dim_arith(g, nums[i].kind, cst(g, nums[i].a), cst(g, nums[i].b)), &v));
      cr_assert_eq(v, nums[i].want, "case %zu: %lld", i, (long long)v);
    }
    /* equal as expressions although built apart: (N + 1 - 1) floordiv 2 */
    AffineExpr *n11 = graph_dim_arith(g, AE_SUB, affine_binary(g->arena, AE_ADD, n, cst(g, 1)), cst(g, 1));
    AffineExpr *q1 = affine_binary(g->arena, AE_FLOORDIV, n11, cst(g, 2));
    AffineExpr *q2 = affine_binary(g->arena, AE_FLOORDIV, n, cst(g, 2));
    cr_assert(graph_dims_equal(g->arena, q1, q2));
    cr_assert(graph_dims_equal(g->arena, affine_binary(g->arena, AE_MOD, n11, cst(g, 2)),
                               affine_binary(g->arena, AE_MOD, n, cst(g, 2))));
    cr_assert(!graph_dims_equal(g->arena, q2, affine_binary(g->arena, AE_FLOORDIV, n, cst(g, 3))));
    cr_assert(!graph_dims_equal(g->arena, q2, affine_binary(g->arena, AE_MOD, n, cst(g, 2))));
    cr_assert(!graph_dims_equal(g->arena, q2, NULL));
  }
  else OK_OR_FAIL(t);
  unit_free(t.u);
}

/* graph_print (--dump=parse, --dump=graph): one line per input, used
 * constant, node and output; attributes of every kind; names as printable
 * ASCII with \xNN for other bytes; an omitted optional input as '-'. */
Test(graph_build, print_every_line_and_attribute_kind) {
  T t = t_new();
  TRY(t) {
    Graph *g = t.g;
    g->name = "tiny\n";
    int x = IN(g, "x\x01", -1, 3);
    int64_t shp[1] = {3}, four[4] = {1, 1, 2, 2};
    float data[3] = {1, 2, 3}, wdata[4] = {1, 0, 0, 1};
    int c = graph_add_const(g, "c", TY_F32, 1, shp, data, NULL);
    graph_add_const(g, "unused", TY_F32, 1, shp, data, NULL);
    const char *yname[1] = {"y"};
    int y = graph_add_node(g, GOP_ADD, "plus", 2, (int[]){x, c}, 0, NULL, yname, NULL, NULL);
    int z = graph_add_node(g, GOP_GELU, NULL, 1, &y, 1,
                           &(GraphAttr){.name = "approximate", .kind = GA_STRING, .s = "tanh"}, NULL, NULL, NULL);
    int w = graph_add_node(g, GOP_LEAKY_RELU, "", 1, &z, 1, &(GraphAttr){.name = "alpha", .kind = GA_FLOAT, .f = 0.5},
                           NULL, NULL, NULL);
    int64_t perm[2] = {1, 0};
    int tr = graph_add_node(g, GOP_TRANSPOSE, "t", 1, &w, 1, &(GraphAttr){.name = "perm", .kind = GA_INTS, .n = 2, .ints = perm},
                            NULL, NULL, NULL);
    int img = input(g, "img", 4, (int64_t[]){1, 1, 4, 4});
    int k = graph_add_const(g, "k", TY_F32, 4, four, wdata, NULL);
    int64_t pad[4] = {0, 1, 1, 0};
    int cv = graph_add_node(g, GOP_CONV, "conv", 3, (int[]){img, k, -1}, 1,
                            &(GraphAttr){.name = "padding", .kind = GA_INTS2, .n = 2, .ints = pad}, NULL, NULL, NULL);
    graph_add_output(g, tr, NULL);
    graph_add_output(g, cv, NULL);
    /* no op keeps a list of numbers (graph_json reads one; an op would
     * refuse it), so the printer's case is given one by hand */
    GraphNode *n = (GraphNode *)GRAPH_NODE(g, GRAPH_VALUE(g, w)->producer);
    double fl[2] = {0.25, -3};
    cr_assert_eq(n->nattrs, 1);
    GraphAttr two[2] = {n->attrs[0], {.name = "f\xc3\xa9", .kind = GA_FLOATS, .n = 2, .floats = fl}};
    n->attrs = two;
    n->nattrs = 2;
    StrBuf sb = {0};
    graph_print(&sb, g);
    cr_assert_str_eq(sb_cstr(&sb),
                     "graph tiny\\x0a (symbols: N)\n"
                     "  input x\\x01: f32(N, 3)\n"
                     "  input img: f32(1, 1, 4, 4)\n"
                     "  const c: f32(3)\n"
                     "  const k: f32(1, 1, 2, 2)\n"
                     "  node 'plus' add(x\\x01, c) -> y: f32(N, 3)\n"
                     "  node gelu(y) -> t0: f32(N, 3) {approximate = 'tanh'}\n"
                     "  node leaky_relu(t0) -> t1: f32(N, 3) {alpha = 0x1p-1, f\\xc3\\xa9 = [0x1p-2, -0x1.8p+1]}\n"
                     "  node 't' transpose(t1) -> t_out: f32(3, N) {perm = [1, 0]}\n"
                     "  node 'conv' conv(img, k, -) -> conv_out: f32(1, 1, 4, 4) {padding = [0, 1, 1, 0], "
                     "strides = [1, 1], dilations = [1, 1], group = 1}\n"
                     "  output t_out\n"
                     "  output conv_out\n");
    sb_free(&sb);
    /* a graph without symbols or a name, and a constant that folding left
     * unread */
    T u = t_new();
    TRY(u) {
      u.g->name = NULL;
      int64_t one[1] = {1};
      float v[1] = {2};
      int a = graph_add_const(u.g, "a", TY_F32, 1, one, v, NULL);
      int s = graph_add_node(u.g, GOP_ADD, NULL, 2, (int[]){a, a}, 0, NULL, NULL, NULL, NULL);
      cr_assert_eq(GRAPH_VALUE(u.g, s)->kind, GV_CONST);
      graph_add_output(u.g, s, NULL);
      graph_print(&sb, u.g);
      char want[128];
      snprintf(want, sizeof want, "graph \n  const %s: f32(1)\n  output %s\n", GRAPH_VALUE(u.g, s)->name,
               GRAPH_VALUE(u.g, s)->name);
      cr_assert_str_eq(sb_cstr(&sb), want);
      sb_free(&sb);
    }
    else OK_OR_FAIL(u);
    unit_free(u.u);
  }
  else OK_OR_FAIL(t);
  unit_free(t.u);
}
