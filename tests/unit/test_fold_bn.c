/* test_fold_bn.c - folding per-channel scale and shift into conv / matmul
 * weights (src/graph/passes/fold_bn.c): tiny graphs built through the builder,
 * the pass run on them, then the graph's structure (which nodes remain,
 * what they read and write) and the folded constants' elements checked
 * against the same arithmetic done here; and the chains that must not fold
 * left alone. The generated code's numbers are checked end to end by
 * examples/ (make -C examples cnn) and tests/graph-diff.test. */
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
  PtrVec notes;
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

#define GUARD(t)                                                                                                    \
  do {                                                                                                              \
    if (setjmp((t)->on_error))                                                                                      \
      cr_assert_fail("builder error:\n%s", sb_cstr(&(t)->diag.out));                                                \
  } while (0)

static const char *cname(G *t) { return arena_printf(t->arena, "k%d", t->nconst++); }

static int cf32(G *t, int rank, const int64_t *shape, const float *data) {
  return graph_add_const(t->g, cname(t), TY_F32, rank, shape, data, "");
}

static int input(G *t, const char *name, int rank, const int64_t *shape) {
  AffineExpr *dims[LG_MAX_RANK];
  for (int i = 0; i < rank; i++)
    dims[i] = graph_dim_const(t->g, shape[i]);
  return graph_add_input(t->g, name, TY_F32, rank, dims, "");
}

static int node(G *t, GraphOp op, const char *name, int nin, const int *in, const char *out) {
  const char *outs[1] = {out};
  return graph_add_node(t->g, op, name, nin, in, 0, NULL, outs, "", NULL);
}

static int node2(G *t, GraphOp op, const char *name, int a, int b, const char *out) {
  int in[2] = {a, b};
  return node(t, op, name, 2, in, out);
}

static GraphValue *value(G *t, int v) { return GRAPH_VALUE(t->g, v); }

static GraphNode *nth(G *t, int i) {
  cr_assert_lt(i, t->g->nodes.len);
  return GRAPH_NODE(t->g, i);
}

static void run_pass(G *t) { graph_fold_scale_shift(t->g, &t->notes); }

static void expect_ops(G *t, int n, const GraphOp *ops) {
  cr_assert_eq(t->g->nodes.len, n, "%d nodes, want %d", t->g->nodes.len, n);
  for (int i = 0; i < n; i++) {
    cr_assert_eq(nth(t, i)->op, ops[i], "node %d is %s", i, graph_op_info(nth(t, i)->op)->name);
    for (int j = 0; j < nth(t, i)->noutputs; j++)
      cr_assert_eq(value(t, nth(t, i)->outputs[j])->producer, i, "node %d's output names another producer", i);
  }
}

/* Element i of an f32 constant, exactly as stored. */
static float elem(G *t, int v, int64_t i) {
  const GraphValue *c = value(t, v);
  cr_assert_eq(c->kind, GV_CONST);
  cr_assert_eq(c->type, TY_F32);
  return (float)graph_const_f(c, i);
}

/* ---- the BatchNormalization chain after an ONNX conv ---- */

static const float conv_w[6] = {1.0f, -2.0f, 0.5f, 3.0f, 0.25f, -1.0f}; /* [3, 2, 1, 1] */
static const float conv_b[3] = {0.1f, 0.2f, -0.3f};
static const float bn_s[3] = {2.0f, -0.5f, 1.5f};
static const float bn_t[3] = {1.0f, 0.25f, -2.0f};

Test(fold_bn, conv_mul_add_relu) {
  G *t = g_new();
  GUARD(t);
  int64_t xs[4] = {1, 2, 4, 4}, ws[4] = {3, 2, 1, 1}, bs[1] = {3}, cs[3] = {3, 1, 1};
  int x = input(t, "x", 4, xs);
  int in[3] = {x, cf32(t, 4, ws, conv_w), cf32(t, 1, bs, conv_b)};
  int c = node(t, GOP_CONV, "conv0", 3, in, "c0");
  int m = node2(t, GOP_MUL, "bn0", c, cf32(t, 3, cs, bn_s), NULL);
  int a = node2(t, GOP_ADD, "bn0", m, cf32(t, 3, cs, bn_t), "n0");
  int r = node(t, GOP_RELU, "relu0", 1, &a, "y");
  graph_add_output(t->g, r, "");
  run_pass(t);

  expect_ops(t, 2, (const GraphOp[]){GOP_CONV, GOP_RELU});
  GraphNode *conv = nth(t, 0), *relu = nth(t, 1);
  cr_assert_eq(conv->outputs[0], a, "the conv writes the add's value");
  cr_assert_str_eq(value(t, conv->outputs[0])->name, "n0");
  cr_assert_eq(relu->inputs[0], a);
  cr_assert_eq(conv->ninputs, 3);
  for (int64_t i = 0; i < 6; i++)
    cr_assert_eq(elem(t, conv->inputs[1], i), (float)((double)conv_w[i] * bn_s[i / 2]), "W'[%lld]", (long long)i);
  for (int64_t m2 = 0; m2 < 3; m2++)
    cr_assert_eq(elem(t, conv->inputs[2], m2), (float)((double)conv_b[m2] * bn_s[m2] + bn_t[m2]), "B'[%lld]",
                 (long long)m2);
  /* the originals are untouched: another node may read them */
  cr_assert_eq(elem(t, in[1], 1), -2.0f);
  cr_assert_eq(t->notes.len, 1);
  cr_assert(strstr(t->notes.items[0], "conv0") && strstr(t->notes.items[0], "mul bn0"), "%s",
            (const char *)t->notes.items[0]);
  cr_assert_not_null(graph_lower(t->g, "g", t->arena, &t->diag));
  g_free(t);
}

/* Without a bias input the folded shift becomes one; [1, C, 1, 1] and
 * scalar constants are per-channel too; mul may read the constant first. */
Test(fold_bn, conv_without_bias_gets_one) {
  G *t = g_new();
  GUARD(t);
  int64_t xs[4] = {2, 2, 3, 3}, ws[4] = {3, 2, 1, 1}, cs[4] = {1, 3, 1, 1};
  int x = input(t, "x", 4, xs);
  int in[2] = {x, cf32(t, 4, ws, conv_w)};
  int c = node(t, GOP_CONV, "conv", 2, in, NULL);
  int m = node2(t, GOP_MUL, "scale", cf32(t, 4, cs, bn_s), c, NULL);
  float two = 2.0f;
  int m2 = node2(t, GOP_MUL, "twice", m, cf32(t, 0, NULL, &two), NULL);
  int a = node2(t, GOP_SUB, "shift", m2, cf32(t, 4, cs, bn_t), "y");
  graph_add_output(t->g, a, "");
  run_pass(t);

  expect_ops(t, 1, (const GraphOp[]){GOP_CONV});
  GraphNode *conv = nth(t, 0);
  cr_assert_eq(conv->outputs[0], a);
  cr_assert(value(t, a)->is_output);
  cr_assert_eq(conv->ninputs, 3);
  for (int64_t i = 0; i < 6; i++)
    cr_assert_eq(elem(t, conv->inputs[1], i), (float)((double)conv_w[i] * bn_s[i / 2] * 2.0));
  for (int64_t k = 0; k < 3; k++)
    cr_assert_eq(elem(t, conv->inputs[2], k), -bn_t[k]);
  g_free(t);
}

/* Scale only: the conv keeps having no bias. */
Test(fold_bn, scale_only_keeps_no_bias) {
  G *t = g_new();
  GUARD(t);
  int64_t xs[4] = {1, 2, 3, 3}, ws[4] = {3, 2, 1, 1}, cs[3] = {3, 1, 1};
  int x = input(t, "x", 4, xs);
  int in[2] = {x, cf32(t, 4, ws, conv_w)};
  int c = node(t, GOP_CONV, "conv", 2, in, NULL);
  int m = node2(t, GOP_MUL, "scale", c, cf32(t, 3, cs, bn_s), "y");
  graph_add_output(t->g, m, "");
  run_pass(t);
  expect_ops(t, 1, (const GraphOp[]){GOP_CONV});
  cr_assert_eq(nth(t, 0)->ninputs, 2);
  g_free(t);
}

/* Gemm: matmul, add of the bias row, then BN's mul and add along the last
 * axis; matmul has no bias input, so one add of b * s + t stays. */
Test(fold_bn, matmul_bias_then_scale_shift) {
  G *t = g_new();
  GUARD(t);
  int64_t xs[2] = {4, 2}, ws[2] = {2, 3}, row[2] = {1, 3}, vec[1] = {3};
  int x = input(t, "x", 2, xs);
  int mm = node2(t, GOP_MATMUL, "fc", x, cf32(t, 2, ws, conv_w), NULL);
  int b = node2(t, GOP_ADD, "fc_bias", mm, cf32(t, 1, vec, conv_b), NULL);
  int m = node2(t, GOP_MUL, "bn", b, cf32(t, 2, row, bn_s), NULL);
  int a = node2(t, GOP_ADD, "bn", m, cf32(t, 1, vec, bn_t), "z");
  int r = node(t, GOP_TANH, "act", 1, &a, "y");
  graph_add_output(t->g, r, "");
  run_pass(t);

  expect_ops(t, 3, (const GraphOp[]){GOP_MATMUL, GOP_ADD, GOP_TANH});
  GraphNode *fc = nth(t, 0), *add = nth(t, 1);
  cr_assert_eq(add->inputs[0], fc->outputs[0]);
  cr_assert_eq(add->outputs[0], a);
  cr_assert_eq(nth(t, 2)->inputs[0], a);
  for (int64_t i = 0; i < 6; i++) /* columns scale: W[k][n] * s[n] */
    cr_assert_eq(elem(t, fc->inputs[1], i), (float)((double)conv_w[i] * bn_s[i % 3]));
  const GraphValue *bias = value(t, add->inputs[1]);
  cr_assert_eq(bias->rank, 1);
  for (int64_t k = 0; k < 3; k++)
    cr_assert_eq(elem(t, add->inputs[1], k), (float)((double)conv_b[k] * bn_s[k] + bn_t[k]));
  cr_assert_not_null(graph_lower(t->g, "g", t->arena, &t->diag));
  g_free(t);
}

/* Gemm with alpha and a full C: alpha folds, the [M, N] add stays as it is. */
Test(fold_bn, matmul_alpha_then_full_add) {
  G *t = g_new();
  GUARD(t);
  int64_t xs[2] = {2, 2}, ws[2] = {2, 3}, full[2] = {2, 3};
  int x = input(t, "x", 2, xs);
  int mm = node2(t, GOP_MATMUL, "fc", x, cf32(t, 2, ws, conv_w), NULL);
  float alpha = 0.5f;
  int m = node2(t, GOP_MUL, "alpha", mm, cf32(t, 0, NULL, &alpha), NULL);
  int cfull = cf32(t, 2, full, conv_w);
  int a = node2(t, GOP_ADD, "c", m, cfull, "y");
  graph_add_output(t->g, a, "");
  run_pass(t);
  expect_ops(t, 2, (const GraphOp[]){GOP_MATMUL, GOP_ADD});
  cr_assert_eq(nth(t, 1)->inputs[1], cfull);
  cr_assert_eq(nth(t, 1)->inputs[0], nth(t, 0)->outputs[0]);
  cr_assert_eq(elem(t, nth(t, 0)->inputs[1], 1), -1.0f);
  g_free(t);
}

/* A lone bias add after matmul is already what folding would leave. */
Test(fold_bn, matmul_bias_alone_unchanged) {
  G *t = g_new();
  GUARD(t);
  int64_t xs[2] = {4, 2}, ws[2] = {2, 3}, vec[1] = {3};
  int x = input(t, "x", 2, xs);
  int w = cf32(t, 2, ws, conv_w);
  int mm = node2(t, GOP_MATMUL, "fc", x, w, NULL);
  int a = node2(t, GOP_ADD, "bias", mm, cf32(t, 1, vec, conv_b), "y");
  graph_add_output(t->g, a, "");
  run_pass(t);
  expect_ops(t, 2, (const GraphOp[]){GOP_MATMUL, GOP_ADD});
  cr_assert_eq(nth(t, 0)->inputs[1], w);
  cr_assert_eq(t->notes.len, 0);
  g_free(t);
}

/* nhwc: the channel axis is the last one of output and filter. */
Test(fold_bn, nhwc_conv_scales_last_axis) {
  G *t = g_new();
  GUARD(t);
  int64_t xs[4] = {1, 3, 3, 2}, ws[4] = {1, 1, 2, 3}, vec[1] = {3};
  int x = input(t, "x", 4, xs);
  int c = node2(t, GOP_CONV_2D_NHWC_HWCF, "conv", x, cf32(t, 4, ws, conv_w), NULL);
  int m = node2(t, GOP_MUL, "s", c, cf32(t, 1, vec, bn_s), NULL);
  int a = node2(t, GOP_ADD, "t", m, cf32(t, 1, vec, bn_t), "y");
  graph_add_output(t->g, a, "");
  run_pass(t);
  expect_ops(t, 2, (const GraphOp[]){GOP_CONV_2D_NHWC_HWCF, GOP_ADD});
  for (int64_t i = 0; i < 6; i++)
    cr_assert_eq(elem(t, nth(t, 0)->inputs[1], i), (float)((double)conv_w[i] * bn_s[i % 3]));
  for (int64_t k = 0; k < 3; k++)
    cr_assert_eq(elem(t, nth(t, 1)->inputs[1], k), bn_t[k]);
  g_free(t);
}

/* ---- chains that must stay ---- */

/* A [C] constant after an nchw conv broadcasts along the last (spatial)
 * axis, not the channels. */
Test(fold_bn, wrong_axis_stays) {
  G *t = g_new();
  GUARD(t);
  int64_t xs[4] = {1, 2, 3, 3}, ws[4] = {3, 2, 1, 1}, vec[1] = {3};
  int x = input(t, "x", 4, xs);
  int in[2] = {x, cf32(t, 4, ws, conv_w)};
  int c = node(t, GOP_CONV, "conv", 2, in, NULL);
  int m = node2(t, GOP_MUL, "s", c, cf32(t, 1, vec, bn_s), "y");
  graph_add_output(t->g, m, "");
  run_pass(t);
  expect_ops(t, 2, (const GraphOp[]){GOP_CONV, GOP_MUL});
  g_free(t);
}

/* The conv's output is read twice (or is a graph output): the scaled value
 * and the unscaled one are both needed. */
Test(fold_bn, shared_output_stays) {
  G *t = g_new();
  GUARD(t);
  int64_t xs[4] = {1, 2, 3, 3}, ws[4] = {3, 2, 1, 1}, cs[3] = {3, 1, 1};
  int x = input(t, "x", 4, xs);
  int in[2] = {x, cf32(t, 4, ws, conv_w)};
  int c = node(t, GOP_CONV, "conv", 2, in, "c");
  int m = node2(t, GOP_MUL, "s", c, cf32(t, 3, cs, bn_s), "y");
  graph_add_output(t->g, m, "");
  graph_add_output(t->g, c, "");
  run_pass(t);
  expect_ops(t, 2, (const GraphOp[]){GOP_CONV, GOP_MUL});
  g_free(t);
}

/* Run-time weights, or a run-time scale, cannot fold. */
Test(fold_bn, runtime_operands_stay) {
  G *t = g_new();
  GUARD(t);
  int64_t xs[2] = {4, 2}, ws[2] = {2, 3}, vec[1] = {3};
  int x = input(t, "x", 2, xs), w = input(t, "w", 2, ws), s = input(t, "s", 1, vec);
  int mm = node2(t, GOP_MATMUL, "fc", x, w, NULL);
  int m = node2(t, GOP_MUL, "s", mm, cf32(t, 1, vec, bn_s), NULL);
  int mm2 = node2(t, GOP_MATMUL, "fc2", m, cf32(t, 2, (int64_t[]){3, 3}, (const float[]){1, 0, 0, 0, 1, 0, 0, 0, 1}),
                  NULL);
  int m2 = node2(t, GOP_MUL, "s2", mm2, s, "y");
  graph_add_output(t->g, m2, "");
  run_pass(t);
  expect_ops(t, 4, (const GraphOp[]){GOP_MATMUL, GOP_MUL, GOP_MATMUL, GOP_MUL});
  g_free(t);
}

/* Division by a constant holding 0 would make infinities out of finite
 * weights; it stays a division. */
Test(fold_bn, division_by_zero_stays) {
  G *t = g_new();
  GUARD(t);
  int64_t xs[2] = {4, 2}, ws[2] = {2, 3}, vec[1] = {3};
  int x = input(t, "x", 2, xs);
  int mm = node2(t, GOP_MATMUL, "fc", x, cf32(t, 2, ws, conv_w), NULL);
  int d = node2(t, GOP_DIV, "d", mm, cf32(t, 1, vec, (const float[]){1, 0, 2}), "y");
  graph_add_output(t->g, d, "");
  run_pass(t);
  expect_ops(t, 2, (const GraphOp[]){GOP_MATMUL, GOP_DIV});
  g_free(t);
}

/* ---- through lgen_compile: the --print-schedule note, also with --fuse=none ---- */

static const char bn_graph[] =
    "{\"format\": \"lgen-graph/1\", \"name\": \"g\",\n"
    " \"inputs\": [{\"name\": \"x\", \"type\": \"f32\", \"shape\": [1, 2, 3, 3]}], \"outputs\": [\"y\"],\n"
    " \"constants\": [\n"
    "  {\"name\": \"w\", \"type\": \"f32\", \"shape\": [3, 2, 1, 1], \"data\": [1, 2, 3, 4, 5, 6]},\n"
    "  {\"name\": \"s\", \"type\": \"f32\", \"shape\": [3, 1, 1], \"data\": [2, 3, 4]},\n"
    "  {\"name\": \"t\", \"type\": \"f32\", \"shape\": [3, 1, 1], \"data\": [1, 1, 1]}],\n"
    " \"nodes\": [\n"
    "  {\"name\": \"conv\", \"op\": \"conv_2d_nchw_fchw\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"c\"]},\n"
    "  {\"name\": \"bn\", \"op\": \"mul\", \"inputs\": [\"c\", \"s\"], \"outputs\": [\"m\"]},\n"
    "  {\"op\": \"add\", \"inputs\": [\"m\", \"t\"], \"outputs\": [\"n\"]},\n"
    "  {\"op\": \"relu\", \"inputs\": [\"n\"], \"outputs\": [\"y\"]}]}\n";

static void compile_note(const char *fuse) {
  lgen_options opt = {0};
  opt.fuse = fuse;
  opt.constant_values = 1; /* the folded weights as values to look for (a packed filter is 256 bytes and more) */
  lgen_source src = {"t.json", bn_graph, sizeof bn_graph - 1};
  lgen_output out;
  int rc = lgen_compile(&src, 1, &opt, &out);
  cr_assert_eq(rc, LGEN_OK, "%s", out.diagnostics);
  cr_assert_not_null(strstr(out.schedule, "# folded in g:\n#   conv (conv_2d_nchw_fchw): folded mul bn"), "%s",
                     out.schedule);
  /* the weights hold w * s: 2, 4, 9, 12, 20, 24 as they are, or in the
   * blocked direct conv's packed layout (one input channel's output
   * channels in a row: 2, 9, 20 and 4, 12, 24) */
  bool plain = strstr(out.c_source, "0x1p+1f, 0x1p+2f, 0x1.2p+3f, 0x1.8p+3f, 0x1.4p+4f, 0x1.8p+4f") != NULL;
  bool packed = strstr(out.c_source, "0x1p+1f, 0x1.2p+3f, 0x1.4p+4f,") && strstr(out.c_source, "0x1p+2f, 0x1.8p+3f, 0x1.8p+4f,");
  cr_assert(plain || packed, "%s", out.c_source);
  lgen_output_free(&out);
}

Test(fold_bn, print_schedule_note) { compile_note(NULL); }

Test(fold_bn, still_folds_with_fuse_none) { compile_note("none"); }

/* ---- lgen_compile's own option checks (the CLI refuses these names
 * before they get here; a library caller passes them as it likes) ---- */

static void compile_bad_option(const char *abi, const char *target, const char *want) {
  lgen_options opt = {0};
  opt.abi = abi;
  opt.target = target;
  lgen_source src = {"t.json", bn_graph, sizeof bn_graph - 1};
  lgen_output out;
  int rc = lgen_compile(&src, 1, &opt, &out);
  cr_assert_eq(rc, LGEN_INPUT_ERROR, "%s", out.diagnostics);
  cr_assert_eq(out.errors, 1, "%s", out.diagnostics);
  cr_assert_not_null(strstr(out.diagnostics, want), "want '%s' in:\n%s", want, out.diagnostics);
  cr_assert_null(out.c_source);
  lgen_output_free(&out);
}

Test(fold_bn, library_unknown_abi) {
  compile_bad_option("strided", NULL, "error: unknown ABI 'strided' (known: dense, view)");
}

Test(fold_bn, library_unknown_target) {
  char known[256], want[320];
  lgen_target_names(known, sizeof known);
  snprintf(want, sizeof want, "error: unknown target 'pdp-11' (known: %s)", known);
  compile_bad_option(NULL, "pdp-11", want);
}
