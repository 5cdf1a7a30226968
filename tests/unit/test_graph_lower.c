/* test_graph_lower.c - lowering model graphs to structured ops
 * (src/graph/lower/lower.c): graphs built through the builder, lowered, verified,
 * and their kernels' structure checked (tensor order and storage, aliases,
 * output copies, fills before reductions, broadcast maps, guarded operands,
 * tables of averaging counts). That the kernels compute the right numbers
 * is the end-to-end tests' job. */
#include <math.h>

#include "frontend/json_locate.h"
#include "graph/graph.h"
#include "graph/passes.h"
#include "unit.h"

typedef struct {
  Arena *arena;
  jmp_buf on_error;
  Diag diag;
  Source src;
  Graph *g;
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
  t->g->name = "g";
  return t;
}

static void g_free(G *t) {
  sb_free(&t->diag.out);
  arena_free(t->arena);
  free(t);
}

/* Arms the error jump in the test function itself: an error fails the test. */
#define GUARD(t)                                                                                                    \
  do {                                                                                                              \
    if (setjmp((t)->on_error))                                                                                      \
      cr_assert_fail("error:\n%s", sb_cstr(&(t)->diag.out));                                                        \
  } while (0)

static AffineExpr **shape_of(G *t, int rank, const int64_t *dims) {
  AffineExpr **s = arena_alloc(t->arena, sizeof(AffineExpr *) * (size_t)(rank + 1));
  for (int i = 0; i < rank; i++)
    s[i] = affine_const(t->arena, dims[i]);
  return s;
}

static int input(G *t, const char *name, int rank, const int64_t *dims) {
  return graph_add_input(t->g, name, TY_F32, rank, shape_of(t, rank, dims), "");
}

static int cf32(G *t, const char *name, int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= dims[i];
  float *data = arena_alloc(t->arena, sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++)
    data[i] = (float)i;
  return graph_add_const(t->g, name, TY_F32, rank, dims, data, "");
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
  return (GraphAttr){.name = name, .kind = GA_INTS, .n = n, .ints = v};
}

static GraphAttr pads_attr(int n, int64_t *v) {
  return (GraphAttr){.name = "padding", .kind = GA_INTS2, .n = n, .ints = v};
}

static Kernel *lower(G *t) {
  Kernel *k = graph_lower(t->g, NULL, t->arena, &t->diag);
  ir_verify_kernel(&t->diag, k);
  for (int i = 0; i < k->nops; i++)
    ir_verify_op(&t->diag, k, &k->ops[i]);
  return k;
}

static int tensor_named(const Kernel *k, const char *name) {
  for (int i = 0; i < k->ntensors; i++)
    if (strcmp(k->tensors[i].name, name) == 0)
      return i;
  cr_assert_fail("no tensor %s", name);
  return -1;
}

static const char *dim_name_cb(void *ctx, int i) { return ((const StructuredOp *)ctx)->dims[i].name; }
static const char *size_name_cb(void *ctx, int i) {
  (void)ctx;
  (void)i;
  return "S";
}

/* The map of operand o as "i, j + 1". */
static char *map_text(const Kernel *k, const StructuredOp *op, int o) {
  StrBuf sb = {0};
  AffineNames names = {dim_name_cb, size_name_cb, NULL, (void *)op, false};
  const Operand *x = &op->operands[o];
  for (int p = 0; p < k->tensors[x->tensor].rank; p++) {
    if (p)
      sb_puts(&sb, ", ");
    affine_print(&sb, x->map[p], &names);
  }
  char *s = strdup(sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

/* The (first) operand of tensor t in op, or -1. */
static int operand_of(const StructuredOp *op, int t) {
  for (int o = 0; o < op->noperands; o++)
    if (op->operands[o].tensor == t)
      return o;
  return -1;
}

static void expect_map(const Kernel *k, const StructuredOp *op, const char *tensor, const char *want) {
  int o = operand_of(op, tensor_named(k, tensor));
  cr_assert_geq(o, 0, "no operand of %s", tensor);
  char *got = map_text(k, op, o);
  cr_assert_str_eq(got, want, "map of %s", tensor);
  free(got);
}

/* A fill: parallel dims only, one constant yielded into tensor t. */
static void expect_fill(const Kernel *k, const StructuredOp *op, int t, double value) {
  cr_assert_eq(op->nyields, 1);
  cr_assert_eq(op->operands[op->yields[0].operand].tensor, t);
  const PayloadNode *n = &op->nodes[op->yields[0].value];
  cr_assert_eq(n->kind, PN_CONST);
  cr_assert(n->fvalue == value, "fill value %g, want %g", n->fvalue, value);
  for (int d = 0; d < op->ndims; d++)
    cr_assert_eq(op->dims[d].kind, ITER_PARALLEL);
  (void)k;
}

Test(graph_lower, mlp_tensors_and_ops) {
  G *t = g_new();
  GUARD(t);
  int x = input(t, "x", 2, (int64_t[]){8, 3});
  int w = cf32(t, "w", 2, (int64_t[]){3, 4});
  int b = cf32(t, "b", 1, (int64_t[]){4});
  int unused = cf32(t, "unused", 1, (int64_t[]){2});
  (void)unused;
  int h = node2(t, GOP_MATMUL, x, w);
  int hb = node2(t, GOP_ADD, h, b);
  int y = node1(t, GOP_RELU, hb);
  node1(t, GOP_EXP, hb); /* dead: nothing reads it */
  graph_add_output(t->g, y, "");
  Kernel *k = lower(t);
  cr_assert_str_eq(k->name, "g");
  /* inputs, outputs, constants read, intermediates */
  cr_assert_eq(k->ntensors, 6);
  cr_assert_eq(k->tensors[0].storage, TS_PARAM);
  cr_assert(!k->tensors[0].is_output);
  cr_assert_eq(k->tensors[1].storage, TS_PARAM);
  cr_assert(k->tensors[1].is_output);
  cr_assert_eq(k->tensors[2].storage, TS_CONST);
  cr_assert_str_eq(k->tensors[2].name, "w");
  cr_assert_not_null(k->tensors[2].data);
  cr_assert_str_eq(k->tensors[3].name, "b");
  cr_assert_eq(k->tensors[4].storage, TS_WORKSPACE);
  cr_assert(k->tensors[4].is_output);
  cr_assert_eq(k->tensors[5].storage, TS_WORKSPACE);
  /* fill, matmul, add, relu: the dead exp is dropped */
  cr_assert_eq(k->nops, 4);
  expect_fill(k, &k->ops[0], 4, 0);
  const StructuredOp *mm = &k->ops[1];
  cr_assert_eq(mm->ndims, 3);
  cr_assert_eq(mm->dims[2].kind, ITER_REDUCTION);
  int xx;
  cr_assert_eq(match_reduction(mm, 0, &xx), COMBINE_ADD);
  GemmShape gs;
  cr_assert(match_gemm(k, mm, &gs));
  expect_map(k, mm, "x", "m, k");
  expect_map(k, mm, "w", "k, n");
  expect_map(k, &k->ops[2], "b", "d1");
  /* relu writes the output parameter directly */
  cr_assert_eq(k->ops[3].operands[k->ops[3].yields[0].operand].tensor, 1);
  g_free(t);
}

Test(graph_lower, broadcast_maps) {
  G *t = g_new();
  GUARD(t);
  int a = input(t, "a", 3, (int64_t[]){2, 1, 4});
  int b = input(t, "b", 2, (int64_t[]){3, 1});
  graph_add_output(t->g, node2(t, GOP_SUB, a, b), "");
  Kernel *k = lower(t);
  cr_assert_eq(k->nops, 1);
  expect_map(k, &k->ops[0], "a", "d0, 0, d2");
  expect_map(k, &k->ops[0], "b", "d1, 0");
  g_free(t);
}

Test(graph_lower, reshape_is_an_alias) {
  G *t = g_new();
  GUARD(t);
  int x = input(t, "x", 2, (int64_t[]){2, 6});
  GraphAttr shape = ints_attr("shape", 3, (int64_t[]){3, 2, 2});
  int r = node(t, GOP_RESHAPE, 1, &x, 1, &shape);
  GraphAttr shape2 = ints_attr("shape", 1, (int64_t[]){12});
  int r2 = node(t, GOP_RESHAPE, 1, &r, 1, &shape2);
  graph_add_output(t->g, node1(t, GOP_EXP, r2), "");
  Kernel *k = lower(t);
  cr_assert_eq(k->nops, 1);
  int a = tensor_named(k, GRAPH_VALUE(t->g, r2)->name);
  cr_assert_eq(k->tensors[a].storage, TS_ALIAS);
  cr_assert_eq(k->tensors[a].alias_of, 0, "chains resolve to the root tensor");
  cr_assert(!k->tensors[a].is_output);
  cr_assert_eq(k->ops[0].operands[1].tensor, a);
  g_free(t);
}

Test(graph_lower, outputs_that_need_copies) {
  G *t = g_new();
  GUARD(t);
  int x = input(t, "x", 2, (int64_t[]){2, 6});
  int c = cf32(t, "c", 1, (int64_t[]){3});
  int e = node1(t, GOP_EXP, x);
  GraphAttr shape = ints_attr("shape", 2, (int64_t[]){3, 4});
  int r = node(t, GOP_RESHAPE, 1, &e, 1, &shape);
  int s = node2(t, GOP_ADD, e, e);
  graph_add_output(t->g, x, "");
  graph_add_output(t->g, c, "");
  graph_add_output(t->g, e, "");
  graph_add_output(t->g, r, "");
  graph_add_output(t->g, s, "");
  Kernel *k = lower(t);
  /* x | x c e r s (parameters) | c (constant) */
  cr_assert_eq(k->ntensors, 7);
  cr_assert_eq(k->tensors[6].storage, TS_CONST);
  /* exp into e's parameter; the reshape copies into r's; add reads e's parameter */
  cr_assert_eq(k->nops, 5);
  cr_assert_eq(k->ops[0].operands[0].tensor, 3);
  const StructuredOp *rc = &k->ops[1];
  cr_assert_eq(rc->operands[rc->yields[0].operand].tensor, 4);
  char *m = map_text(k, rc, 1);
  cr_assert_str_eq(m, "(d0 * 4 + d1) floordiv 6, (d0 * 4 + d1) mod 6");
  free(m);
  cr_assert_eq(k->ops[2].operands[1].tensor, 3);
  /* then the copies of the input and the constant */
  cr_assert_eq(k->ops[3].operands[0].tensor, 1);
  cr_assert_eq(k->ops[3].operands[1].tensor, 0);
  cr_assert_eq(k->ops[4].operands[0].tensor, 2);
  cr_assert_eq(k->ops[4].operands[1].tensor, 6);
  g_free(t);
}

Test(graph_lower, padded_conv_reads_are_guarded) {
  G *t = g_new();
  GUARD(t);
  int x = input(t, "x", 4, (int64_t[]){1, 4, 5, 5});
  int w = cf32(t, "w", 4, (int64_t[]){6, 2, 3, 3});
  int bias = cf32(t, "bias", 1, (int64_t[]){6});
  GraphAttr attrs[] = {pads_attr(2, (int64_t[]){1, 1, 0, 2}), ints_attr("strides", 2, (int64_t[]){2, 1}),
                       {.name = "group", .kind = GA_INT, .i = 2}};
  int in[3] = {x, w, bias};
  graph_add_output(t->g, node(t, GOP_CONV, 3, in, 3, attrs), "");
  Kernel *k = lower(t);
  cr_assert_eq(k->nops, 3);
  /* the bias is the initial value */
  expect_map(k, &k->ops[0], "bias", "d1");
  /* the input is copied once into a padded buffer: a guarded read of x
   * (out-of-bounds positions read 0), covering exactly what the windows
   * touch: (3 - 1) * 2 + 3 rows and (5 - 1) + 3 columns */
  const StructuredOp *pad = &k->ops[1];
  int o = operand_of(pad, 0);
  cr_assert(pad->operands[o].guarded);
  cr_assert(pad->operands[o].pad_value == 0);
  int xp = pad->operands[pad->yields[0].operand].tensor;
  cr_assert_eq(k->tensors[xp].storage, TS_WORKSPACE);
  int64_t want_shape[4] = {1, 4, 7, 7};
  for (int i = 0; i < 4; i++)
    cr_assert(k->tensors[xp].shape[i]->kind == AE_CONST && k->tensors[xp].shape[i]->value == want_shape[i],
              "padded extent %d", i);
  /* the conv reads the padded copy, unguarded */
  const StructuredOp *cv = &k->ops[2];
  cr_assert_eq(operand_of(cv, 0), -1);
  cr_assert(!cv->operands[operand_of(cv, xp)].guarded);
  expect_map(k, cv, k->tensors[xp].name, "n, f floordiv 3 * 2 + c, o0 * 2 + k0, o1 + k1");
  expect_map(k, cv, "w", "f, c, k0, k1");
  cr_assert(!cv->operands[operand_of(cv, tensor_named(k, "w"))].guarded);
  g_free(t);
}

Test(graph_lower, pools) {
  G *t = g_new();
  GUARD(t);
  int x = input(t, "x", 4, (int64_t[]){1, 2, 5, 5});
  GraphAttr attrs[] = {ints_attr("window", 2, (int64_t[]){3, 3}), ints_attr("strides", 2, (int64_t[]){2, 2}),
                       pads_attr(2, (int64_t[]){1, 1, 1, 1})};
  int mx = node(t, GOP_POOLING_NCHW_MAX, 1, &x, 3, attrs);
  int av = node(t, GOP_POOLING_NCHW_AVG, 1, &x, 3, attrs);
  graph_add_output(t->g, mx, "");
  graph_add_output(t->g, av, "");
  Kernel *k = lower(t);
  /* max: fill -inf, pad with -inf, reduce; avg: fill 0, pad with 0, sum,
   * divide by the count table */
  cr_assert_eq(k->nops, 7);
  expect_fill(k, &k->ops[0], 1, -INFINITY);
  const StructuredOp *pad = &k->ops[1];
  int o = operand_of(pad, 0);
  cr_assert(pad->operands[o].guarded);
  cr_assert(isinf(pad->operands[o].pad_value) && pad->operands[o].pad_value < 0);
  int xp = pad->operands[pad->yields[0].operand].tensor;
  const StructuredOp *p = &k->ops[2];
  cr_assert(!p->operands[operand_of(p, xp)].guarded);
  int xx;
  cr_assert_eq(match_reduction(p, 0, &xx), COMBINE_MAX);
  expect_fill(k, &k->ops[3], 2, 0);
  cr_assert(k->ops[4].operands[operand_of(&k->ops[4], 0)].pad_value == 0);
  cr_assert_eq(match_reduction(&k->ops[5], 0, &xx), COMBINE_ADD);
  int counts = -1;
  for (int i = 0; i < k->ops[6].noperands; i++)
    if (k->tensors[k->ops[6].operands[i].tensor].storage == TS_CONST)
      counts = k->ops[6].operands[i].tensor;
  cr_assert_geq(counts, 0, "the division reads a count table");
  cr_assert_eq(k->tensors[counts].storage, TS_CONST);
  cr_assert_eq(k->tensors[counts].rank, 2);
  /* 3x3 windows at stride 2 over 5 with padding 1: 2, 3, 2 per dim */
  const float *c = k->tensors[counts].data;
  float want[9] = {4, 6, 4, 6, 9, 6, 4, 6, 4};
  for (int i = 0; i < 9; i++)
    cr_assert(c[i] == want[i], "count %d: %g", i, c[i]);
  g_free(t);
}

Test(graph_lower, reduce_mean_and_keepdims) {
  G *t = g_new();
  GUARD(t);
  int x = input(t, "x", 3, (int64_t[]){2, 3, 4});
  GraphAttr attrs[] = {ints_attr("axes", 1, (int64_t[]){1}), {.name = "keepdims", .kind = GA_INT, .i = 1}};
  graph_add_output(t->g, node(t, GOP_REDUCE_MEAN, 1, &x, 2, attrs), "");
  Kernel *k = lower(t);
  cr_assert_eq(k->nops, 3);
  const StructuredOp *r = &k->ops[1];
  cr_assert_eq(r->dims[1].kind, ITER_REDUCTION);
  char *m = map_text(k, r, 0);
  cr_assert_str_eq(m, "d0, 0, d2");
  free(m);
  const StructuredOp *scale = &k->ops[2];
  const PayloadNode *n = &scale->nodes[scale->yields[0].value];
  cr_assert_eq(n->op, SOP_DIVF);
  cr_assert(scale->nodes[n->args[1]].fvalue == 3);
  g_free(t);
}

Test(graph_lower, einsum_diagonal_and_layout) {
  G *t = g_new();
  GUARD(t);
  int x = input(t, "x", 2, (int64_t[]){3, 3});
  GraphAttr eq = {.name = "equation", .kind = GA_STRING, .s = "ii->i"};
  graph_add_output(t->g, node(t, GOP_EINSUM, 1, &x, 1, &eq), "");
  GraphAttr pad[] = {pads_attr(2, (int64_t[]){1, 0, 0, 2}), {.name = "value", .kind = GA_FLOAT, .f = 2.5}};
  graph_add_output(t->g, node(t, GOP_PAD, 1, &x, 2, pad), "");
  int in2[2] = {x, x};
  GraphAttr axis = {.name = "axis", .kind = GA_INT, .i = 1};
  graph_add_output(t->g, node(t, GOP_CONCAT, 2, in2, 1, &axis), "");
  Kernel *k = lower(t);
  expect_map(k, &k->ops[0], "x", "i, i");
  const StructuredOp *p = &k->ops[1];
  cr_assert(p->operands[1].guarded);
  cr_assert(p->operands[1].pad_value == 2.5);
  expect_map(k, p, "x", "d0 - 1, d1");
  cr_assert_eq(k->nops, 4);
  char *m = map_text(k, &k->ops[3], 0);
  cr_assert_str_eq(m, "d0, d1 + 3");
  free(m);
  g_free(t);
}

Test(graph_lower, gather_at_run_time_is_an_ext_op) {
  G *t = g_new();
  int x = input(t, "x", 2, (int64_t[]){3, 3});
  int idx = graph_add_input(t->g, "i", TY_I64, 1, shape_of(t, 1, (int64_t[]){2}), "");
  int in[2] = {x, idx};
  int y = graph_add_node(t->g, GOP_GATHER, "", 2, in, 0, NULL, NULL, "", NULL);
  graph_add_output(t->g, y, "");
  Kernel *k = lower(t);
  cr_assert_eq(k->nops, 1);
  const StructuredOp *op = &k->ops[0];
  cr_assert_not_null(op->ext);
  cr_assert_str_eq(op->ext->kind, "gather");
  cr_assert_str_eq(op->ext->tmpl, "gather");
  cr_assert_eq(op->ext->ninputs, 2);
  cr_assert_eq(op->ext->noutputs, 1);
  cr_assert_eq(op->ext->nscratch, 0);
  cr_assert_eq(op->ndims, 0);
  cr_assert_eq(op->noperands, 3); /* the operands are the ext op's tensors, in order */
  for (int o = 0; o < 3; o++)
    cr_assert_eq(op->operands[o].tensor, op->ext->tensors[o]);
  cr_assert_str_eq(k->tensors[op->ext->tensors[0]].name, "x");
  cr_assert_str_eq(k->tensors[op->ext->tensors[1]].name, "i");
  cr_assert_eq(ext_attr_int(op->ext, "axis", -1), 0);
  cr_assert(op_reads_tensor(op, op->ext->tensors[1]));
  cr_assert(op_writes_tensor(op, op->ext->tensors[2]));
  cr_assert(!op_writes_tensor(op, op->ext->tensors[0]));
  g_free(t);
}

/* Sibling reductions (src/graph/fuse/fuse.c): a row sum and a row sum of squares
 * of one input become one op with two yields that reads it through one
 * operand, their inits merged; a row max beside them stays a pass of its own
 * (no simd form); --fuse=none and a `keep` entry keep them apart. */
static int fused_ops(bool enabled, bool keep, int *nyields, int *x_reads, bool *reported) {
  G *t = g_new();
  if (setjmp(t->on_error))
    cr_assert_fail("error:\n%s", sb_cstr(&t->diag.out));
  int x = input(t, "x", 2, (int64_t[]){5, 37});
  GraphAttr attrs[] = {ints_attr("axes", 1, (int64_t[]){1}), {.name = "keepdims", .kind = GA_INT, .i = 0}};
  int sq = node2(t, GOP_MUL, x, x);
  int s = node(t, GOP_REDUCE_SUM, 1, &x, 2, attrs);
  graph_add_output(t->g, s, "");
  graph_add_output(t->g, node(t, GOP_REDUCE_MAX, 1, &x, 2, attrs), "");
  graph_add_output(t->g, node(t, GOP_REDUCE_SUM, 1, &sq, 2, attrs), "");
  Kernel *k = lower(t);
  FuseOverride o = {.tensor = GRAPH_VALUE(t->g, s)->name, .inline_it = false};
  FuseOptions opt = {.enabled = enabled, .noverrides = keep ? 1 : 0, .overrides = &o};
  FuseReport report = {0};
  fuse_kernel(k, &opt, &report, t->arena, &t->diag);
  int xt = tensor_named(k, "x");
  *nyields = 0;
  *x_reads = 0;
  for (int i = 0; i < k->nops; i++)
    if (k->ops[i].nyields > *nyields) {
      *nyields = k->ops[i].nyields;
      *x_reads = 0;
      for (int j = 0; j < k->ops[i].noperands; j++)
        *x_reads += k->ops[i].operands[j].tensor == xt;
    }
  *reported = false;
  for (int i = 0; i < report.decisions.len; i++)
    *reported |= strstr((const char *)report.decisions.items[i], "share one pass over 'x'") != NULL;
  int n = k->nops;
  g_free(t);
  return n;
}

Test(graph_lower, sibling_reductions_share_one_pass) {
  int nyields, x_reads;
  bool reported;
  cr_assert_eq(fused_ops(true, false, &nyields, &x_reads, &reported), 2); /* sum + sum of squares, max */
  cr_assert_eq(nyields, 2);
  cr_assert_eq(x_reads, 1);
  cr_assert(reported);
  cr_assert_gt(fused_ops(false, false, &nyields, &x_reads, &reported), 3);
  cr_assert_eq(nyields, 1);
  cr_assert(!reported);
  cr_assert_eq(fused_ops(true, true, &nyields, &x_reads, &reported), 3); /* `keep` on the first sum */
  cr_assert_eq(nyields, 1);
  cr_assert(!reported);
}

/* ---- lowering's backstops: checks of what the builder guarantees (an
 * einsum equation that fits its operands, a call that binds every tensor
 * of its def). A graph built cleanly is spoiled after the builder, as a
 * builder bug would leave it; the error names the node. ---- */

/* The einsum node of a fresh graph x[2,3], w[3,4] -> "ij,jk->ik". */
static GraphNode *einsum_node(G *t) {
  int in[2] = {input(t, "x", 2, (int64_t[]){2, 3}), input(t, "w", 2, (int64_t[]){3, 4})};
  GraphAttr eq = {.name = "equation", .kind = GA_STRING, .s = "ij,jk->ik"};
  int y = graph_add_node(t->g, GOP_EINSUM, "mix", 2, in, 1, &eq, NULL, "", NULL);
  graph_add_output(t->g, y, "");
  return GRAPH_NODE(t->g, GRAPH_VALUE(t->g, y)->producer);
}

static void expect_lower_error(G *t, const char *want) {
  if (setjmp(t->on_error) == 0) {
    graph_lower(t->g, NULL, t->arena, &t->diag);
    cr_assert_fail("no error");
  }
  cr_assert_not_null(strstr(sb_cstr(&t->diag.out), want), "want '%s' in:\n%s", want, sb_cstr(&t->diag.out));
}

Test(graph_lower, einsum_equation_backstops) {
  static const struct {
    const char *eq, *want;
  } cases[] = {
      {"ij,jk->ii", "node 'mix' (einsum): einsum output term does not match the result (a letter repeated, or a wrong count)"},
      {"i,jk->ik", "node 'mix' (einsum): einsum term shorter than its input's rank"},
      {"ij,jk,kl->ik", "node 'mix' (einsum): einsum equation has more terms than inputs"},
      {"ijk,jk->ik", "node 'mix' (einsum): einsum term longer than its input's rank"},
      {"ij,j->ik", "node 'mix' (einsum): einsum equation does not match its inputs"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    G *t = g_new();
    GraphNode *n = NULL;
    if (setjmp(t->on_error) == 0)
      n = einsum_node(t);
    cr_assert_not_null(n, "%s", sb_cstr(&t->diag.out));
    for (int a = 0; a < n->nattrs; a++)
      if (strcmp(n->attrs[a].name, "equation") == 0)
        n->attrs[a].s = cases[c].eq;
    expect_lower_error(t, cases[c].want);
    g_free(t);
  }
}

Test(graph_lower, call_binding_backstops) {
  Unit *u = unit_lowered("def two(A: f32(N), B: f32(N)) -> (C: f32(N), D: f32(N)) {\n"
                         "  C(n) = std_addf(A(n), B(n));\n  D(n) = std_mulf(A(n), B(n));\n}");
  for (int spoil = 0; spoil < 2; spoil++) {
    G *t = g_new();
    t->g->specs = &u->module;
    GraphNode *n = NULL;
    if (setjmp(t->on_error) == 0) {
      int in[2] = {input(t, "a", 1, (int64_t[]){5}), input(t, "b", 1, (int64_t[]){5})};
      int y = graph_add_call(t->g, unit_kernel(u, 0), "both", 2, in, NULL, "");
      graph_add_output(t->g, y, "");
      n = GRAPH_NODE(t->g, GRAPH_VALUE(t->g, y)->producer);
    }
    cr_assert_not_null(n, "%s", sb_cstr(&t->diag.out));
    if (spoil == 0)
      n->ninputs = 1;
    else
      n->noutputs = 1; /* its first output still runs */
    expect_lower_error(t, spoil == 0 ? "node 'both' (two): the def has more inputs than the node"
                                     : "node 'both' (two): the def has more outputs than the node");
    g_free(t);
  }
  unit_free(u);
}

/* Element types the builder checks (ops.md: exp of floats, bitwise ops of
 * integers, ...), spoiled after it: lowering refuses the op at the node. */
Test(graph_lower, element_type_backstops) {
  static const struct {
    GraphOp op;
    int nin;
    ElemType built, spoiled;
    const char *want;
  } cases[] = {
      {GOP_EXP, 1, TY_F32, TY_I32, "node 'op' (exp): this op takes floating-point inputs"},
      {GOP_BITWISE_NOT, 1, TY_I32, TY_F32, "node 'op' (bitwise_not): this op cannot be lowered yet"},
      {GOP_BITWISE_AND, 2, TY_I32, TY_F32, "node 'op' (bitwise_and): this op takes integer inputs"},
      {GOP_POW, 2, TY_F32, TY_I32, "node 'op' (pow): this op takes floating-point inputs"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    G *t = g_new();
    int in[2] = {-1, -1};
    if (setjmp(t->on_error) == 0) {
      for (int i = 0; i < cases[c].nin; i++)
        in[i] = graph_add_input(t->g, i ? "b" : "a", cases[c].built, 1, shape_of(t, 1, (int64_t[]){3}), "");
      graph_add_output(t->g, graph_add_node(t->g, cases[c].op, "op", cases[c].nin, in, 0, NULL, NULL, "", NULL), "");
    }
    cr_assert(in[0] >= 0, "%s", sb_cstr(&t->diag.out));
    for (int i = 0; i < cases[c].nin; i++)
      GRAPH_VALUE(t->g, in[i])->type = cases[c].spoiled;
    expect_lower_error(t, cases[c].want);
    g_free(t);
  }
}

/* A def size that none of the call's tensors has (the builder binds every
 * size at graph_add_call; a def with one more, unused, is how a bug
 * between the two would look). */
Test(graph_lower, call_size_backstop) {
  Unit *u = unit_lowered("def two(A: f32(N), B: f32(N)) -> (C: f32(N), D: f32(N)) {\n"
                         "  C(n) = std_addf(A(n), B(n));\n  D(n) = std_mulf(A(n), B(n));\n}");
  G *t = g_new();
  t->g->specs = &u->module;
  GraphNode *n = NULL;
  if (setjmp(t->on_error) == 0) {
    int in[2] = {input(t, "a", 1, (int64_t[]){5}), input(t, "b", 1, (int64_t[]){5})};
    int y = graph_add_call(t->g, unit_kernel(u, 0), "both", 2, in, NULL, "");
    graph_add_output(t->g, y, "");
    n = GRAPH_NODE(t->g, GRAPH_VALUE(t->g, y)->producer);
  }
  cr_assert_not_null(n, "%s", sb_cstr(&t->diag.out));
  Kernel def = *n->def;
  SizeSym *sizes = calloc((size_t)def.nsizes + 1, sizeof *sizes);
  cr_assert_not_null(sizes);
  for (int s = 0; s < def.nsizes; s++)
    sizes[s] = def.sizes[s];
  sizes[def.nsizes] = sizes[0];
  sizes[def.nsizes].name = "Z";
  def.sizes = sizes;
  def.nsizes++;
  n->def = &def;
  expect_lower_error(t, "node 'both' (two): cannot bind size 'Z' of 'two' from the shapes of its tensors");
  free(sizes);
  g_free(t);
  unit_free(u);
}
