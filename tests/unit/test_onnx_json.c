/* test_onnx_json.c - the ONNX JSON loader (src/frontend/onnx_json.c): which
 * graph ops an ONNX model becomes, at which opset, with which shapes and
 * folded constants, and the located errors for what it cannot read. Models
 * are written with ' for " to keep them readable. */
#include <jansson.h>
#include <math.h>

#include "frontend/graph_load.h"
#include "graph/graph.h"
#include "unit.h"

typedef struct {
  Arena *arena;
  jmp_buf on_error;
  Diag diag;
  Source src;
  json_t *root;
  Graph *g;
} Onnx;

static void free_onnx(Onnx *o) {
  json_decref(o->root);
  sb_free(&o->diag.out);
  arena_free(o->arena);
  free(o);
}

/* Loads the model; status as unit_run's (UNIT_OK, UNIT_ERROR, UNIT_BUG). */
static int load(Onnx **out, const char *quoted) {
  Onnx *o = calloc(1, sizeof *o);
  cr_assert_not_null(o);
  o->arena = arena_new();
  o->diag.on_error = &o->on_error;
  char *text = arena_strdup(o->arena, quoted);
  for (char *p = text; *p; p++)
    if (*p == '\'')
      *p = '"';
  o->src.name = "m.json";
  o->src.text = text;
  o->src.len = strlen(text);
  json_error_t err;
  o->root = json_loads(text, 0, &err);
  cr_assert_not_null(o->root, "bad test JSON: %s at %d:%d\n%s", err.text, err.line, err.column, text);
  *out = o;
  int status = setjmp(o->on_error);
  if (status == 0)
    o->g = graph_load_onnx(&o->src, o->root, ".", NULL, NULL, NULL, o->arena, &o->diag);
  return status;
}

static Onnx *loaded(const char *quoted) {
  Onnx *o;
  int status = load(&o, quoted);
  cr_assert_eq(status, UNIT_OK, "load failed (%d):\n%s", status, sb_cstr(&o->diag.out));
  return o;
}

/* Asserts one error whose first line contains `needle` at line:col. */
static void expect_error(const char *quoted, int line, int col, const char *needle) {
  Onnx *o;
  int status = load(&o, quoted);
  const char *d = sb_cstr(&o->diag.out);
  cr_assert_eq(status, UNIT_ERROR, "expected an error, got %d:\n%s", status, d);
  cr_assert_eq(o->diag.errors, 1, "%s", d);
  char want[64];
  snprintf(want, sizeof want, "m.json:%d:%d: error: ", line, col);
  cr_assert_not_null(strstr(d, want), "expected an error at %d:%d, got:\n%s", line, col, d);
  const char *eol = strchr(d, '\n');
  char *first = strndup(d, eol ? (size_t)(eol - d) : strlen(d));
  cr_assert_not_null(strstr(first, needle), "error lacks \"%s\": %s", needle, first);
  free(first);
  free_onnx(o);
}

/* Symbol names for printing shapes. */
static const char *sym_name(void *ctx, int i) { return ((Graph *)ctx)->symbols.items[i]; }

/* "f32[2,N,3]" */
static char *value_str(Graph *g, int v) {
  const GraphValue *x = GRAPH_VALUE(g, v);
  StrBuf sb = {0};
  AffineNames names = {NULL, sym_name, NULL, g, false};
  sb_printf(&sb, "%s[", elem_type_name(x->type));
  for (int i = 0; i < x->rank; i++) {
    if (i)
      sb_putc(&sb, ',');
    affine_print(&sb, x->shape[i], &names);
  }
  sb_putc(&sb, ']');
  char *s = strdup(sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

static void expect_value(Graph *g, const char *name, const char *want) {
  int v = graph_find(g, name);
  cr_assert_geq(v, 0, "no value '%s'", name);
  char *s = value_str(g, v);
  cr_assert_str_eq(s, want, "value '%s'", name);
  free(s);
}

/* The ops of the graph's nodes, space-separated. */
static char *ops_str(Graph *g) {
  StrBuf sb = {0};
  for (int i = 0; i < g->nodes.len; i++)
    sb_printf(&sb, "%s%s", i ? " " : "", graph_op_info(GRAPH_NODE(g, i)->op)->name);
  char *s = strdup(sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

static void expect_ops(Graph *g, const char *want) {
  char *s = ops_str(g);
  cr_assert_str_eq(s, want);
  free(s);
}

static const GraphNode *producer(Graph *g, const char *name) {
  int v = graph_find(g, name);
  cr_assert_geq(v, 0, "no value '%s'", name);
  const GraphValue *x = GRAPH_VALUE(g, v);
  cr_assert_eq(x->kind, GV_NODE, "'%s' is not computed by a node", name);
  return GRAPH_NODE(g, x->producer);
}

static const GraphAttr *attr_of(const GraphNode *n, const char *name) {
  for (int i = 0; i < n->nattrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0)
      return &n->attrs[i];
  cr_assert_fail("no attribute '%s'", name);
  return NULL;
}

static void expect_ints(const GraphNode *n, const char *name, int count, const int64_t *want) {
  const GraphAttr *a = attr_of(n, name);
  int len = a->kind == GA_INTS2 ? 2 * a->n : a->n;
  cr_assert_eq(len, count, "attribute '%s' has %d values", name, len);
  for (int i = 0; i < count; i++)
    cr_assert_eq(a->ints[i], want[i], "attribute '%s'[%d] = %lld, want %lld", name, i, (long long)a->ints[i],
                 (long long)want[i]);
}

/* ---- model text ---- */

#define MODEL(opset, inputs, inits, nodes, outputs)                                                             \
  "{'irVersion': '8', 'opsetImport': [{'domain': '', 'version': '" opset "'}],\n"                              \
  " 'graph': {'name': 'g',\n"                                                                                   \
  "  'input': [" inputs "],\n"                                                                                  \
  "  'initializer': [" inits "],\n"                                                                             \
  "  'node': [" nodes "],\n"                                                                                    \
  "  'output': [" outputs "]}}"

#define F32_IN(name, dims) "{'name': '" name "', 'type': {'tensorType': {'elemType': 1, 'shape': {'dim': [" dims "]}}}}"
#define D(v) "{'dimValue': '" #v "'}"
#define P(name) "{'dimParam': '" name "'}"
#define OUT(name) "{'name': '" name "'}"

/* ---- inputs, initializers, outputs ---- */

Test(onnx_json, inputs_symbols_and_initializers) {
  Onnx *o = loaded(MODEL("13",
                         F32_IN("x", P("N") ",{}," D(2)) ","
                         F32_IN("w", D(2)),
                         /* w = [1, 2] as f32, little-endian */
                         "{'name': 'w', 'dims': ['2'], 'dataType': 1, 'rawData': 'AACAPwAAAEA='}",
                         "{'opType': 'Mul', 'input': ['x', 'w'], 'output': ['y'], 'name': 'm'}", OUT("y")));
  Graph *g = o->g;
  cr_assert_str_eq(g->name, "g");
  cr_assert_eq(g->inputs.len, 1, "the initializer listed as an input is not a run-time input");
  cr_assert_eq(g->symbols.len, 2);
  cr_assert_str_eq(g->symbols.items[0], "N");
  cr_assert_str_eq(g->symbols.items[1], "x_dim1");
  expect_value(g, "y", "f32[N,x_dim1,2]");
  const GraphValue *w = GRAPH_VALUE(g, graph_find(g, "w"));
  cr_assert_eq(w->kind, GV_CONST);
  cr_assert_float_eq(graph_const_f(w, 1), 2.0, 1e-9);
  cr_assert_eq(g->outputs.len, 1);
  free_onnx(o);
}

Test(onnx_json, typed_initializer_fields) {
  Onnx *o = loaded(MODEL("13", F32_IN("x", D(3)),
                         "{'name': 'a', 'dims': ['3'], 'dataType': 1, 'floatData': [1.5, 'NaN', '-Infinity']},"
                         "{'name': 'b', 'dims': ['2'], 'dataType': 7, 'int64Data': ['-5', '9000000000']},"
                         "{'name': 'c', 'dims': ['2'], 'dataType': 10, 'int32Data': [15360, 49152]},"
                         "{'name': 'd', 'dims': ['3'], 'dataType': 11, 'doubleData': ['Infinity', '-0.125', 2.5e-300]},"
                         "{'name': 'u', 'dims': ['2'], 'dataType': 13, 'uint64Data': [7, '18446744073709551615']}",
                         "{'opType': 'Add', 'input': ['x', 'a'], 'output': ['y']}", OUT("y")));
  Graph *g = o->g;
  const GraphValue *a = GRAPH_VALUE(g, graph_find(g, "a")), *b = GRAPH_VALUE(g, graph_find(g, "b")),
                   *c = GRAPH_VALUE(g, graph_find(g, "c"));
  cr_assert_float_eq(graph_const_f(a, 0), 1.5, 1e-9);
  cr_assert(isnan(graph_const_f(a, 1)));
  cr_assert(isinf(graph_const_f(a, 2)) && graph_const_f(a, 2) < 0);
  cr_assert_eq(graph_const_i(b, 0), -5);
  cr_assert_eq(graph_const_i(b, 1), 9000000000LL);
  cr_assert_eq(c->type, TY_F16);
  cr_assert_float_eq(graph_const_f(c, 0), 1.0, 1e-9);
  cr_assert_float_eq(graph_const_f(c, 1), -2.0, 1e-9);
  /* doubles: the strings JSON has no literal for, and numbers as strings */
  const GraphValue *d = GRAPH_VALUE(g, graph_find(g, "d")), *u = GRAPH_VALUE(g, graph_find(g, "u"));
  cr_assert_eq(d->type, TY_F64);
  cr_assert(isinf(graph_const_f(d, 0)) && graph_const_f(d, 0) > 0);
  cr_assert_eq(graph_const_f(d, 1), -0.125);
  cr_assert_eq(graph_const_f(d, 2), 2.5e-300);
  /* uint64Data: a JSON number or a string of digits; read as an int64, the
   * largest saturates */
  cr_assert_eq(graph_const_i(u, 0), 7);
  cr_assert_eq(graph_const_i(u, 1), INT64_MAX);
  free_onnx(o);
}

Test(onnx_json, bad_numbers_and_bytes_in_initializers) {
  expect_error(MODEL("13", F32_IN("x", D(3)), "{'name': 'a', 'dims': ['1'], 'dataType': 11, 'doubleData': [true]}",
                     "{'opType': 'Relu', 'input': ['x'], 'output': ['y']}", OUT("y")),
               4, 79, "expected a number");
  expect_error(MODEL("13", F32_IN("x", D(3)), "{'name': 'a', 'dims': ['1'], 'dataType': 11, 'doubleData': ['1e']}",
                     "{'opType': 'Relu', 'input': ['x'], 'output': ['y']}", OUT("y")),
               4, 79, "'1e' is not a number");
  expect_error(MODEL("13", F32_IN("x", D(3)), "{'name': 'a', 'dims': ['1'], 'dataType': 1, 'rawData': 'AB$='}",
                     "{'opType': 'Relu', 'input': ['x'], 'output': ['y']}", OUT("y")),
               4, 74, "initializer 'a': rawData is not valid base64");
}

Test(onnx_json, declared_output_shape_is_checked) {
  expect_error(MODEL("13", F32_IN("x", D(2) "," D(3)), "",
                     "{'opType': 'Relu', 'input': ['x'], 'output': ['y']}",
                     "{'name': 'y', 'type': {'tensorType': {'elemType': 1, 'shape': {'dim': [" D(2) "," D(4)
                     "]}}}}"),
               6, 116, "declared with extent 4 in dim 1, but the graph computes 3");
}

/* ---- errors ---- */

Test(onnx_json, unsupported_operators_all_in_one_error) {
  expect_error(MODEL("13", F32_IN("x", D(2)), "",
                     "{'opType': 'Relu', 'input': ['x'], 'output': ['a']},"
                     "{'opType': 'Foo', 'input': ['a'], 'output': ['b'], 'name': 'n1'},"
                     "{'opType': 'Bar', 'input': ['b'], 'output': ['c'], 'name': 'n7'},"
                     "{'opType': 'Bar', 'input': ['c'], 'output': ['d']},"
                     "{'opType': 'Gelu', 'domain': 'com.microsoft', 'input': ['d'], 'output': ['e']}",
                     OUT("e")),
               5, 64,
               "unsupported ONNX operators: Foo (node 'n1'), Bar (nodes 'n7', 3), com.microsoft.Gelu (node 4)");
}

Test(onnx_json, undefined_value) {
  expect_error(MODEL("13", F32_IN("x", D(2)), "", "{'opType': 'Add', 'input': ['x', 'z'], 'output': ['y']}",
                     OUT("y")),
               5, 45, "node 0 (Add): undefined value 'z'");
}

Test(onnx_json, unsupported_initializer_type_is_rejected_by_name) {
  expect_error(MODEL("13", F32_IN("x", D(2)), "{'name': 'bf', 'dims': ['1'], 'dataType': 16, 'rawData': 'AQI='}",
                     "{'opType': 'Relu', 'input': ['x'], 'output': ['y']}", OUT("y")),
               4, 61, "initializer 'bf' has ONNX element type 16 (bfloat16)");
}

/* UINT8 (2), UINT16 (4), UINT32 (12), UINT64 (13) are u8..u64: raw bytes,
 * or int32Data (u8, u16) and uint64Data (u32, u64) */
Test(onnx_json, unsigned_initializers) {
  Onnx *o = loaded(MODEL("13", F32_IN("x", D(2)),
                         "{'name': 'a', 'dims': ['2'], 'dataType': 2, 'rawData': '/wI='},"
                         "{'name': 'b', 'dims': ['2'], 'dataType': 4, 'int32Data': [65535, 7]},"
                         "{'name': 'c', 'dims': ['1'], 'dataType': 12, 'uint64Data': ['4294967295']},"
                         "{'name': 'e', 'dims': ['1'], 'dataType': 13, 'uint64Data': ['18446744073709551614']},"
                         "{'name': 'd', 'dims': ['1'], 'dataType': 13, 'rawData': '//////////8='}",
                         "{'opType': 'Relu', 'input': ['x'], 'output': ['y']}", OUT("y")));
  Graph *g = o->g;
  const GraphValue *a = GRAPH_VALUE(g, graph_find(g, "a")), *b = GRAPH_VALUE(g, graph_find(g, "b")),
                   *c = GRAPH_VALUE(g, graph_find(g, "c")), *d = GRAPH_VALUE(g, graph_find(g, "d"));
  cr_assert_eq(a->type, TY_U8);
  cr_assert_eq(b->type, TY_U16);
  cr_assert_eq(c->type, TY_U32);
  cr_assert_eq(d->type, TY_U64);
  cr_assert_eq(graph_const_i(a, 0), 255);
  cr_assert_eq(graph_const_i(a, 1), 2);
  cr_assert_eq(graph_const_i(b, 0), 65535);
  cr_assert_eq(graph_const_i(c, 0), 4294967295LL);
  cr_assert_eq(((const uint8_t *)d->data)[7], 0xff);
  cr_assert_float_eq(graph_const_f(d, 0), 18446744073709551615.0, 1e3);
  const GraphValue *e = GRAPH_VALUE(g, graph_find(g, "e"));
  cr_assert_eq(e->type, TY_U64);
  cr_assert_eq(((const uint8_t *)e->data)[0], 0xfe);
  cr_assert_eq(((const uint8_t *)e->data)[7], 0xff);
  free_onnx(o);
}

Test(onnx_json, shape_input_must_be_constant) {
  expect_error(MODEL("13",
                     F32_IN("x", D(6)) ",{'name': 's', 'type': {'tensorType': {'elemType': 7, 'shape': {'dim': ["
                                       D(2) "]}}}}",
                     "", "{'opType': 'Reshape', 'input': ['x', 's'], 'output': ['y'], 'name': 'r'}", OUT("y")),
               5, 49, "node 'r' (Reshape): the shape input ('s') must be a constant");
}

Test(onnx_json, unsupported_second_output_is_rejected) {
  expect_error(MODEL("13", F32_IN("x", D(1) "," D(1) "," D(4)), "",
                     "{'opType': 'Relu', 'input': ['x'], 'output': ['y', 'extra']}",
                     OUT("y")),
               5, 63, "output 1 ('extra') is not supported");
}

/* Hardmax before opset 13 takes x as 2-D at the axis (as Softmax): a
 * reshape to [2, 12], the argmax compared with 0..11, and back */
Test(onnx_json, hardmax_before_13_is_two_dimensional) {
  Onnx *o = loaded(MODEL("11", F32_IN("x", D(2) "," D(3) "," D(4)), "",
                         "{'opType': 'Hardmax', 'input': ['x'], 'output': ['y'], "
                         "'attribute': [{'name': 'axis', 'i': '1', 'type': 'INT'}]}",
                         OUT("y")));
  expect_value(o->g, "y", "f32[2,3,4]");
  bool flat = false;
  for (int i = 0; i < o->g->nodes.len; i++) {
    const GraphNode *gn = GRAPH_NODE(o->g, i);
    if (gn->op == GOP_ARGMAX)
      flat = GRAPH_VALUE(o->g, gn->inputs[0])->rank == 2;
  }
  cr_assert(flat, "the argmax runs on the 2-D view");
  free_onnx(o);
}

/* LayerNormalization of f16 x: its statistics in stash_type (f32 by
 * default at opset 17), so Mean is f32; y is f16 again */
Test(onnx_json, layernorm_f16_stashes_in_f32) {
  Onnx *o = loaded(MODEL("17", "{'name': 'x', 'type': {'tensorType': {'elemType': 10, 'shape': {'dim': [" D(3) "," D(8)
                               "]}}}},{'name': 's', 'type': {'tensorType': {'elemType': 10, 'shape': {'dim': [" D(8) "]}}}}",
                         "", "{'opType': 'LayerNormalization', 'input': ['x', 's'], 'output': ['y', 'm']}",
                         OUT("y") "," OUT("m")));
  expect_value(o->g, "y", "f16[3,8]");
  expect_value(o->g, "m", "f32[3,1]");
  free_onnx(o);
}

/* Dropout at inference: the identity, and a mask of true of x's shape,
 * also symbolic (a broadcast of true to x's shape) */
Test(onnx_json, dropout_mask_all_true) {
  Onnx *o = loaded(MODEL("13", F32_IN("x", P("N") "," D(1) "," D(4)), "",
                         "{'opType': 'Dropout', 'input': ['x'], 'output': ['y', 'mask']}", OUT("y") "," OUT("mask")));
  expect_value(o->g, "y", "f32[N,1,4]");
  expect_value(o->g, "mask", "i1[N,1,4]");
  free_onnx(o);
}

Test(onnx_json, wrong_attribute_type) {
  expect_error(MODEL("13", F32_IN("x", D(2) "," D(2)), "",
                     "{'opType': 'Transpose', 'input': ['x'], 'output': ['y'],"
                     " 'attribute': [{'name': 'perm', 'i': '1', 'type': 'INT'}]}",
                     OUT("y")),
               5, 83, "attribute 'perm' must be of type INTS, not INT");
}

/* ---- operators ---- */

Test(onnx_json, gemm_folds_scaled_bias) {
  /* C = [1, 2, 3] (initializer): beta * C folds into one constant */
  Onnx *o = loaded(MODEL("13", F32_IN("a", D(3) "," D(2)) "," F32_IN("b", D(3) "," D(3)),
                         "{'name': 'c', 'dims': ['3'], 'dataType': 1, 'floatData': [1, 2, 3]}",
                         "{'opType': 'Gemm', 'input': ['a', 'b', 'c'], 'output': ['y'],"
                         " 'attribute': [{'name': 'transA', 'i': '1', 'type': 'INT'},"
                         "               {'name': 'beta', 'f': 0.5, 'type': 'FLOAT'}]}",
                         OUT("y")));
  expect_ops(o->g, "transpose matmul add");
  const GraphNode *add = producer(o->g, "y");
  const GraphValue *bias = GRAPH_VALUE(o->g, add->inputs[1]);
  cr_assert_eq(bias->kind, GV_CONST);
  cr_assert_float_eq(graph_const_f(bias, 2), 1.5, 1e-9);
  expect_value(o->g, "y", "f32[2,3]");
  free_onnx(o);
}

Test(onnx_json, batchnorm_is_one_mul_and_add) {
  Onnx *o = loaded(MODEL("15", F32_IN("x", P("N") "," D(2) "," D(4) "," D(4)),
                         "{'name': 's', 'dims': ['2'], 'dataType': 1, 'floatData': [2, 4]},"
                         "{'name': 'b', 'dims': ['2'], 'dataType': 1, 'floatData': [1, 1]},"
                         "{'name': 'm', 'dims': ['2'], 'dataType': 1, 'floatData': [0, 1]},"
                         "{'name': 'v', 'dims': ['2'], 'dataType': 1, 'floatData': [4, 16]}",
                         "{'opType': 'BatchNormalization', 'input': ['x', 's', 'b', 'm', 'v'], 'output': ['y'],"
                         " 'attribute': [{'name': 'epsilon', 'f': 0, 'type': 'FLOAT'}]}",
                         OUT("y")));
  expect_ops(o->g, "mul add");
  const GraphNode *mul = GRAPH_NODE(o->g, 0), *add = GRAPH_NODE(o->g, 1);
  const GraphValue *s = GRAPH_VALUE(o->g, mul->inputs[1]), *t = GRAPH_VALUE(o->g, add->inputs[1]);
  /* s = scale / sqrt(var) = [1, 1]; t = B - mean * s = [1, 0], as [2, 1, 1] */
  char *shape = value_str(o->g, mul->inputs[1]);
  cr_assert_str_eq(shape, "f32[2,1,1]");
  free(shape);
  cr_assert_float_eq(graph_const_f(s, 1), 1.0, 1e-9);
  cr_assert_float_eq(graph_const_f(t, 0), 1.0, 1e-9);
  cr_assert_float_eq(graph_const_f(t, 1), 0.0, 1e-9);
  expect_value(o->g, "y", "f32[N,2,4,4]");
  free_onnx(o);
}

Test(onnx_json, reduce_axes_attribute_and_input) {
  /* opset 13: axes is an attribute of ReduceMean, an input of ReduceSum */
  Onnx *o = loaded(MODEL("13", F32_IN("x", D(2) "," D(3) "," D(4)), "",
                         "{'opType': 'ReduceMean', 'input': ['x'], 'output': ['a'],"
                         " 'attribute': [{'name': 'axes', 'ints': ['-1'], 'type': 'INTS'}]},"
                         "{'opType': 'Constant', 'output': ['ax'],"
                         " 'attribute': [{'name': 'value_ints', 'ints': ['0', '2'], 'type': 'INTS'}]},"
                         "{'opType': 'ReduceSum', 'input': ['x', 'ax'], 'output': ['b'],"
                         " 'attribute': [{'name': 'keepdims', 'i': '0', 'type': 'INT'}]},"
                         "{'opType': 'ReduceL2', 'input': ['x'], 'output': ['c']},"
                         "{'opType': 'ReduceSum', 'input': ['x'], 'output': ['d'],"
                         " 'attribute': [{'name': 'noop_with_empty_axes', 'i': '1', 'type': 'INT'}]}",
                         OUT("a") "," OUT("b") "," OUT("c") "," OUT("d")));
  expect_value(o->g, "a", "f32[2,3,1]");
  expect_value(o->g, "b", "f32[3]");
  expect_value(o->g, "c", "f32[1,1,1]");
  expect_value(o->g, "d", "f32[2,3,4]");
  expect_ops(o->g, "reduce_mean reduce_sum mul reduce_sum sqrt copy");
  free_onnx(o);
}

Test(onnx_json, reduce_axes_input_at_opset_18) {
  Onnx *o = loaded(MODEL("18", F32_IN("x", D(2) "," D(3)), "{'name': 'ax', 'dims': ['1'], 'dataType': 7, 'int64Data': ['1']}",
                         "{'opType': 'ReduceMax', 'input': ['x', 'ax'], 'output': ['y']}", OUT("y")));
  expect_value(o->g, "y", "f32[2,1]");
  free_onnx(o);
}

Test(onnx_json, unsqueeze_squeeze_both_opsets) {
  Onnx *o = loaded(MODEL("11", F32_IN("x", P("N") "," D(3)), "",
                         "{'opType': 'Unsqueeze', 'input': ['x'], 'output': ['u'],"
                         " 'attribute': [{'name': 'axes', 'ints': ['0', '-1'], 'type': 'INTS'}]},"
                         "{'opType': 'Squeeze', 'input': ['u'], 'output': ['y'],"
                         " 'attribute': [{'name': 'axes', 'ints': ['0'], 'type': 'INTS'}]}",
                         OUT("y")));
  expect_value(o->g, "u", "f32[1,N,3,1]");
  expect_value(o->g, "y", "f32[N,3,1]");
  free_onnx(o);
  o = loaded(MODEL("13", F32_IN("x", P("N") "," D(3)),
                   "{'name': 'ax', 'dims': ['2'], 'dataType': 7, 'int64Data': ['0', '-1']}",
                   "{'opType': 'Unsqueeze', 'input': ['x', 'ax'], 'output': ['u']},"
                   "{'opType': 'Squeeze', 'input': ['u'], 'output': ['y']}",
                   OUT("y")));
  expect_value(o->g, "u", "f32[1,N,3,1]");
  expect_value(o->g, "y", "f32[N,3]");
  free_onnx(o);
}

Test(onnx_json, flatten_symbolic) {
  Onnx *o = loaded(MODEL("13", F32_IN("x", P("N") "," D(2) "," D(3)), "",
                         "{'opType': 'Flatten', 'input': ['x'], 'output': ['y']}", OUT("y")));
  expect_value(o->g, "y", "f32[N,6]");
  free_onnx(o);
}

Test(onnx_json, slice_clamps_and_walks_backwards) {
  Onnx *o = loaded(MODEL("13", F32_IN("x", D(4) "," D(10)),
                         "{'name': 'st', 'dims': ['2'], 'dataType': 7, 'int64Data': ['-1', '1']},"
                         "{'name': 'en', 'dims': ['2'], 'dataType': 7, 'int64Data': ['-9223372036854775807', '1000']},"
                         "{'name': 'ax', 'dims': ['2'], 'dataType': 7, 'int64Data': ['1', '0']},"
                         "{'name': 'sp', 'dims': ['2'], 'dataType': 7, 'int64Data': ['-3', '2']}",
                         "{'opType': 'Slice', 'input': ['x', 'st', 'en', 'ax', 'sp'], 'output': ['y']}", OUT("y")));
  /* axis 1: 9, 6, 3, 0; axis 0: 1, 3 */
  expect_value(o->g, "y", "f32[2,4]");
  const GraphNode *n = producer(o->g, "y");
  expect_ints(n, "starts", 2, (int64_t[]){1, 9});
  expect_ints(n, "sizes", 2, (int64_t[]){2, 4});
  expect_ints(n, "strides", 2, (int64_t[]){2, -3});
  free_onnx(o);
}

Test(onnx_json, softmax_before_13_is_two_dimensional) {
  Onnx *o = loaded(MODEL("11", F32_IN("x", D(2) "," D(3) "," D(4)), "",
                         "{'opType': 'Softmax', 'input': ['x'], 'output': ['y']}", OUT("y")));
  expect_ops(o->g, "reshape reduce_max sub exp reduce_sum div reshape");
  expect_value(o->g, "y", "f32[2,3,4]");
  const GraphNode *rm = GRAPH_NODE(o->g, 1);
  char *s = value_str(o->g, rm->inputs[0]);
  cr_assert_str_eq(s, "f32[2,12]");
  free(s);
  free_onnx(o);
  o = loaded(MODEL("13", F32_IN("x", D(2) "," D(3) "," D(4)), "",
                   "{'opType': 'LogSoftmax', 'input': ['x'], 'output': ['y'],"
                   " 'attribute': [{'name': 'axis', 'i': '1', 'type': 'INT'}]}",
                   OUT("y")));
  expect_ops(o->g, "reduce_max sub exp reduce_sum log sub");
  expect_ints(GRAPH_NODE(o->g, 0), "axes", 1, (int64_t[]){1});
  free_onnx(o);
}

Test(onnx_json, conv_same_upper_padding) {
  /* SAME_UPPER ('U0FNRV9VUFBFUg==' in base64), stride 2 on 5: out 3, total pad 2 */
  Onnx *o = loaded(MODEL("11", F32_IN("x", D(1) "," D(1) "," D(5) "," D(6)) "," F32_IN("w", D(4) "," D(1) "," D(3) "," D(3)),
                         "",
                         "{'opType': 'Conv', 'input': ['x', 'w'], 'output': ['y'],"
                         " 'attribute': [{'name': 'auto_pad', 's': 'U0FNRV9VUFBFUg==', 'type': 'STRING'},"
                         "               {'name': 'strides', 'ints': ['2', '2'], 'type': 'INTS'}]}",
                         OUT("y")));
  expect_value(o->g, "y", "f32[1,4,3,3]");
  /* dim 1: in 6, out 3: (3-1)*2 + 3 - 6 = 1: lo 0, hi 1 */
  expect_ints(producer(o->g, "y"), "padding", 4, (int64_t[]){1, 1, 0, 1});
  free_onnx(o);
}

Test(onnx_json, averagepool_attributes) {
  Onnx *o = loaded(MODEL("19", F32_IN("x", D(1) "," D(3) "," D(7)), "",
                         "{'opType': 'AveragePool', 'input': ['x'], 'output': ['y'],"
                         " 'attribute': [{'name': 'kernel_shape', 'ints': ['3'], 'type': 'INTS'},"
                         "               {'name': 'pads', 'ints': ['1', '2'], 'type': 'INTS'},"
                         "               {'name': 'count_include_pad', 'i': '1', 'type': 'INT'},"
                         "               {'name': 'strides', 'ints': ['2'], 'type': 'INTS'}]}",
                         OUT("y")));
  const GraphNode *n = producer(o->g, "y");
  cr_assert_eq(n->op, GOP_POOLING_NCHW_AVG);
  expect_ints(n, "padding", 2, (int64_t[]){1, 2});
  cr_assert_eq(attr_of(n, "count_include_pad")->i, 1);
  expect_value(o->g, "y", "f32[1,3,4]");
  free_onnx(o);
}

Test(onnx_json, pad_split_tile_concat) {
  Onnx *o = loaded(MODEL("13", F32_IN("x", D(2) "," D(6)),
                         "{'name': 'p', 'dims': ['4'], 'dataType': 7, 'int64Data': ['0', '1', '1', '2']},"
                         "{'name': 'v', 'dims': [], 'dataType': 1, 'floatData': [7]},"
                         "{'name': 'sp', 'dims': ['2'], 'dataType': 7, 'int64Data': ['2', '4']},"
                         "{'name': 'r', 'dims': ['2'], 'dataType': 7, 'int64Data': ['2', '1']}",
                         "{'opType': 'Pad', 'input': ['x', 'p', 'v'], 'output': ['a']},"
                         "{'opType': 'Split', 'input': ['x', 'sp'], 'output': ['s0', 's1'],"
                         " 'attribute': [{'name': 'axis', 'i': '1', 'type': 'INT'}]},"
                         "{'opType': 'Tile', 'input': ['s0', 'r'], 'output': ['t']},"
                         "{'opType': 'Concat', 'input': ['s1', 's0'], 'output': ['c'],"
                         " 'attribute': [{'name': 'axis', 'i': '-1', 'type': 'INT'}]}",
                         OUT("a") "," OUT("t") "," OUT("c")));
  expect_value(o->g, "a", "f32[3,9]");
  const GraphNode *pad = producer(o->g, "a");
  expect_ints(pad, "padding", 4, (int64_t[]){0, 1, 1, 2});
  cr_assert_float_eq(attr_of(pad, "value")->f, 7.0, 1e-9);
  expect_value(o->g, "s0", "f32[2,2]");
  expect_value(o->g, "s1", "f32[2,4]");
  expect_ints(producer(o->g, "s1"), "starts", 2, (int64_t[]){0, 2});
  expect_value(o->g, "t", "f32[4,2]");
  expect_value(o->g, "c", "f32[2,6]");
  free_onnx(o);
}

Test(onnx_json, shape_gather_constant_of_shape_fold) {
  Onnx *o = loaded(MODEL("13", F32_IN("x", P("N") "," D(3)),
                         "{'name': 'i', 'dims': ['1'], 'dataType': 7, 'int64Data': ['1']}",
                         "{'opType': 'Shape', 'input': ['x'], 'output': ['s']},"
                         "{'opType': 'Gather', 'input': ['s', 'i'], 'output': ['d']},"
                         "{'opType': 'ConstantOfShape', 'input': ['d'], 'output': ['z'],"
                         " 'attribute': [{'name': 'value', 'type': 'TENSOR',"
                         "                't': {'dims': ['1'], 'dataType': 7, 'int64Data': ['5']}}]},"
                         "{'opType': 'ConstantOfShape', 'input': ['s'], 'output': ['w']}",
                         OUT("z") "," OUT("w")));
  expect_value(o->g, "s", "i64[2]");
  cr_assert_eq(GRAPH_VALUE(o->g, graph_find(o->g, "d"))->kind, GV_CONST);
  expect_value(o->g, "z", "i64[3]");
  expect_value(o->g, "w", "f32[N,3]");
  free_onnx(o);
}

Test(onnx_json, elementwise_family) {
  Onnx *o = loaded(MODEL("13", F32_IN("x", D(4)) "," F32_IN("y", D(4)), "",
                         "{'opType': 'LeakyRelu', 'input': ['x'], 'output': ['a'],"
                         " 'attribute': [{'name': 'alpha', 'f': 0.2, 'type': 'FLOAT'}]},"
                         "{'opType': 'Sum', 'input': ['x', 'y', 'a'], 'output': ['b']},"
                         "{'opType': 'Mean', 'input': ['x', 'y'], 'output': ['c']},"
                         "{'opType': 'Less', 'input': ['x', 'y'], 'output': ['l']},"
                         "{'opType': 'Where', 'input': ['l', 'x', 'y'], 'output': ['w']},"
                         "{'opType': 'Cast', 'input': ['w'], 'output': ['k'],"
                         " 'attribute': [{'name': 'to', 'i': '6', 'type': 'INT'}]},"
                         "{'opType': 'Clip', 'input': ['x', '', 'c'], 'output': ['m']},"
                         "{'opType': 'Identity', 'input': ['m'], 'output': ['id']}",
                         OUT("b") "," OUT("k") "," OUT("id")));
  expect_ops(o->g, "leaky_relu add add add div less where cast min copy");
  cr_assert_float_eq(attr_of(producer(o->g, "a"), "alpha")->f, 0.2f, 1e-7);
  expect_value(o->g, "k", "i32[4]");
  expect_value(o->g, "l", "i1[4]");
  free_onnx(o);
}
