/* fuzz_struct.c - libFuzzer harness for model graphs that mutates their
 * structure, not their bytes (issue 14, item 8).
 *
 * Byte mutations of JSON mostly break its syntax or its names, so they
 * rarely get past the front-end. This harness's custom mutator parses the
 * input (an lgen-graph/1 or ONNX JSON graph), makes one to three structural
 * changes - an op replaced by another of the vocabulary, an attribute added,
 * dropped or given a value of another kind or size, an input rewired to
 * another tensor, a shape's dim changed (0, 1, primes, huge, negative, a
 * symbol), a node duplicated, removed or moved, a type changed - and writes
 * the JSON back, so that the inputs reach shape inference, folding,
 * lowering, fusion, the schedules and the emitter. Inputs that do not parse
 * are mutated as bytes.
 *
 * The oracles are fuzz_graph.c's (oracle.h); what this finds is replayed
 * from fuzz/corpus-graph like everything fuzz_graph finds. Built only by
 * scripts/fuzz.sh (FUZZ_HARNESSES=struct). */
#include <jansson.h>

#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_check_compile("no-such-dir.lgen-fuzz/fuzz.json", data, size);
  return 0;
}

/* ---- vocabularies ---- */

#define X(e, name, nin_min, nin_max, nout, cls) name,
static const char *const lgen_ops[] = {
#include "graph/graph_ops.def"
};
#undef X

static const char *const onnx_ops[] = {
    "Abs", "Add", "And", "ArgMax", "ArgMin", "AveragePool", "BatchNormalization", "Cast", "Ceil", "Clip",
    "Concat", "Constant", "ConstantOfShape", "Conv", "ConvTranspose", "Cos", "CumSum", "DepthToSpace", "Div",
    "Dropout", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand", "Flatten", "Floor", "GRU", "Gather",
    "GatherElements", "GatherND", "Gelu", "Gemm", "GlobalAveragePool", "GlobalMaxPool", "Greater", "HardSigmoid",
    "HardSwish", "Hardmax", "Identity", "If", "InstanceNormalization", "IsInf", "IsNaN", "LSTM", "LayerNormalization",
    "LeakyRelu", "Less", "Log", "LogSoftmax", "Loop", "MatMul", "Max", "MaxPool", "Mean", "Min", "Mod", "Mul", "Neg",
    "Not", "OneHot", "Or", "PRelu", "Pad", "Pow", "RNN", "Range", "Reciprocal", "ReduceL2", "ReduceMax",
    "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "Relu", "Reshape", "Resize", "ScatterElements",
    "ScatterND", "Selu", "Shape", "Sigmoid", "Sign", "Sin", "Size", "Slice", "Softmax", "Softplus", "Split",
    "Sqrt", "Squeeze", "Sub", "Sum", "Tanh", "Tile", "TopK", "Transpose", "Trilu", "Unsqueeze", "Upsample",
    "Where", "Xor", "DFT", "Attention", "Sort", "OneHot", "ReverseSequence", "EyeLike", "SpaceToDepth"};

static const char *const attr_names[] = {
    "axis", "axes", "keepdims", "perm", "shape", "starts", "sizes", "strides", "padding", "dilations", "window",
    "k", "largest", "descending", "inclusive", "combiner", "to", "value", "scale", "causal", "inner_dims_pos",
    "inner_tiles", "outer_dims_perm", "alpha", "beta", "epsilon", "dimension_map", "kernel_shape", "pads",
    "group", "auto_pad", "ceil_mode", "transA", "transB", "mode", "direction", "hidden_size", "equation",
    "exclusive", "reverse", "upper", "split", "blocksize", "select_last_index", "index_type", "dtype"};

static const char *const strings[] = {"add", "max", "min", "mul", "replace", "f32", "f16", "i64", "i1",
                                      "NOTSET", "SAME_UPPER", "VALID", "constant", "reflect", "edge",
                                      "forward", "bidirectional", "ij,jk->ik", "", "lgen_x", "N"};

static const char *const types[] = {"f16", "f32", "f64", "i8", "i16", "i32", "i64", "i1"};

/* ---- a tiny deterministic random source (libFuzzer gives the seed) ---- */

static unsigned next(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (*s >> 8) & 0xffffff;
}

static size_t pick(unsigned *s, size_t n) { return n ? next(s) % n : 0; }

#define PICK(s, arr) ((arr)[pick(s, sizeof(arr) / sizeof((arr)[0]))])

static json_int_t interesting_int(unsigned *s) {
  static const json_int_t v[] = {0, 1, 2, 3, -1, -2, 4, 7, 13, 16, 31, 64, 1000, 65536, 2147483647, -2147483648LL,
                                 ((json_int_t)1 << 40), ((json_int_t)1 << 62), -((json_int_t)1 << 62)};
  return v[pick(s, sizeof v / sizeof v[0])];
}

static json_t *random_value(unsigned *s) {
  switch (pick(s, 6)) {
  case 0:
    return json_integer(interesting_int(s));
  case 1:
    return json_real((double)interesting_int(s) / 3.0);
  case 2:
    return json_string(PICK(s, strings));
  case 3: {
    json_t *a = json_array();
    for (size_t i = 0, n = pick(s, 5); i < n; i++)
      json_array_append_new(a, json_integer(interesting_int(s) % 5));
    return a;
  }
  case 4: {
    json_t *a = json_array();
    for (size_t i = 0, n = pick(s, 3); i < n; i++)
      json_array_append_new(a, json_pack("[II]", (json_int_t)pick(s, 3), (json_int_t)pick(s, 3)));
    return a;
  }
  default:
    return json_true();
  }
}

/* Names of the tensors the graph mentions, to rewire inputs to. */
static void collect_names(json_t *nodes, const char *out_key, json_t *into) {
  size_t i;
  json_t *n;
  json_array_foreach(nodes, i, n) {
    json_t *outs = json_object_get(n, out_key);
    size_t j;
    json_t *o;
    json_array_foreach(outs, j, o) if (json_is_string(o)) json_array_append(into, o);
  }
}

/* ---- lgen-graph/1 ---- */

static void mutate_lgen(json_t *root, unsigned *s) {
  json_t *nodes = json_object_get(root, "nodes");
  json_t *inputs = json_object_get(root, "inputs");
  size_t nn = json_array_size(nodes);
  json_t *node = nn ? json_array_get(nodes, pick(s, nn)) : NULL;
  switch (pick(s, 9)) {
  case 0:
    if (node)
      json_object_set_new(node, "op", json_string(PICK(s, lgen_ops)));
    break;
  case 1:
    if (node) {
      json_t *attrs = json_object_get(node, "attrs");
      if (!json_is_object(attrs)) {
        attrs = json_object();
        json_object_set_new(node, "attrs", attrs);
      }
      json_object_set_new(attrs, PICK(s, attr_names), random_value(s));
    }
    break;
  case 2:
    if (node) {
      json_t *names = json_array();
      collect_names(nodes, "outputs", names);
      size_t k;
      json_t *in;
      json_array_foreach(inputs, k, in) json_array_append(names, json_object_get(in, "name"));
      json_t *ins = json_object_get(node, "inputs");
      if (json_array_size(names) && json_array_size(ins))
        json_array_set(ins, pick(s, json_array_size(ins)), json_array_get(names, pick(s, json_array_size(names))));
      else if (json_array_size(names) && json_is_array(ins))
        json_array_append(ins, json_array_get(names, 0));
      json_decref(names);
    }
    break;
  case 3: {
    json_t *in = json_array_get(inputs, pick(s, json_array_size(inputs)));
    json_t *shape = json_object_get(in, "shape");
    if (json_array_size(shape))
      json_array_set_new(shape, pick(s, json_array_size(shape)),
                         pick(s, 4) ? json_integer(interesting_int(s)) : json_string("N"));
    else if (json_is_array(shape))
      json_array_append_new(shape, json_integer(1 + (json_int_t)pick(s, 7)));
    break;
  }
  case 4:
    if (node) {
      json_t *copy = json_deep_copy(node);
      json_t *outs = json_object_get(copy, "outputs");
      if (json_array_size(outs))
        json_array_set_new(outs, 0, json_sprintf("t%u", next(s) % 1000));
      json_array_insert_new(nodes, pick(s, nn + 1), copy);
    }
    break;
  case 5:
    if (nn > 1)
      json_array_remove(nodes, pick(s, nn));
    break;
  case 6:
    if (nn > 1) {
      size_t a = pick(s, nn), b = pick(s, nn);
      json_t *x = json_incref(json_array_get(nodes, a));
      json_array_set(nodes, a, json_array_get(nodes, b));
      json_array_set_new(nodes, b, x);
    }
    break;
  case 7: {
    json_t *in = json_array_get(inputs, pick(s, json_array_size(inputs)));
    if (in)
      json_object_set_new(in, "type", json_string(PICK(s, types)));
    break;
  }
  default:
    if (node) {
      json_t *attrs = json_object_get(node, "attrs");
      const char *key;
      json_t *v;
      void *tmp;
      json_object_foreach_safe(attrs, tmp, key, v) if (pick(s, 2)) json_object_del(attrs, key);
    }
    break;
  }
}

/* ---- ONNX JSON ---- */

static void onnx_attr(json_t *node, unsigned *s) {
  json_t *attrs = json_object_get(node, "attribute");
  if (!json_is_array(attrs)) {
    attrs = json_array();
    json_object_set_new(node, "attribute", attrs);
  }
  if (json_array_size(attrs) && pick(s, 3) == 0) {
    json_array_remove(attrs, pick(s, json_array_size(attrs)));
    return;
  }
  json_t *a = json_object();
  json_object_set_new(a, "name", json_string(PICK(s, attr_names)));
  switch (pick(s, 4)) {
  case 0:
    json_object_set_new(a, "type", json_string("INT"));
    json_object_set_new(a, "i", json_sprintf("%lld", (long long)interesting_int(s)));
    break;
  case 1:
    json_object_set_new(a, "type", json_string("FLOAT"));
    json_object_set_new(a, "f", json_real((double)interesting_int(s) / 7.0));
    break;
  case 2: {
    json_t *ints = json_array();
    for (size_t i = 0, n = pick(s, 6); i < n; i++)
      json_array_append_new(ints, json_sprintf("%lld", (long long)(interesting_int(s) % 6)));
    json_object_set_new(a, "type", json_string("INTS"));
    json_object_set_new(a, "ints", ints);
    break;
  }
  default:
    json_object_set_new(a, "type", json_string("STRING"));
    json_object_set_new(a, "s", json_string("Y29uc3RhbnQ=")); /* base64 "constant" */
    break;
  }
  json_array_append_new(attrs, a);
}

static void mutate_onnx(json_t *root, unsigned *s) {
  json_t *graph = json_object_get(root, "graph");
  json_t *nodes = json_object_get(graph, "node");
  json_t *inputs = json_object_get(graph, "input");
  size_t nn = json_array_size(nodes);
  json_t *node = nn ? json_array_get(nodes, pick(s, nn)) : NULL;
  switch (pick(s, 8)) {
  case 0:
    if (node)
      json_object_set_new(node, "opType", json_string(PICK(s, onnx_ops)));
    break;
  case 1:
    if (node)
      onnx_attr(node, s);
    break;
  case 2:
    if (node) {
      json_t *names = json_array();
      collect_names(nodes, "output", names);
      size_t k;
      json_t *in;
      json_array_foreach(inputs, k, in) json_array_append(names, json_object_get(in, "name"));
      json_t *ins = json_object_get(node, "input");
      if (json_array_size(names) && json_is_array(ins)) {
        json_t *nm = json_array_get(names, pick(s, json_array_size(names)));
        if (json_array_size(ins) && pick(s, 3))
          json_array_set(ins, pick(s, json_array_size(ins)), nm);
        else
          json_array_append_new(ins, pick(s, 4) ? json_incref(nm) : json_string("")); /* both owned */
      }
      json_decref(names);
    }
    break;
  case 3: {
    json_t *in = json_array_get(inputs, pick(s, json_array_size(inputs)));
    json_t *dims = json_object_get(json_object_get(json_object_get(json_object_get(in, "type"), "tensorType"),
                                                   "shape"),
                                   "dim");
    if (json_array_size(dims)) {
      json_t *d = json_object();
      if (pick(s, 4))
        json_object_set_new(d, "dimValue", json_sprintf("%lld", (long long)interesting_int(s)));
      else
        json_object_set_new(d, "dimParam", json_string(pick(s, 2) ? "N" : "batch"));
      json_array_set_new(dims, pick(s, json_array_size(dims)), d);
    }
    break;
  }
  case 4:
    if (node) {
      json_t *copy = json_deep_copy(node);
      json_t *outs = json_object_get(copy, "output");
      if (json_array_size(outs))
        json_array_set_new(outs, 0, json_sprintf("t%u", next(s) % 1000));
      json_array_insert_new(nodes, pick(s, nn + 1), copy);
    }
    break;
  case 5:
    if (nn > 1)
      json_array_remove(nodes, pick(s, nn));
    break;
  case 6: {
    json_t *opsets = json_object_get(root, "opsetImport");
    json_t *o = json_array_get(opsets, 0);
    if (o)
      json_object_set_new(o, "version", json_sprintf("%u", 1 + (unsigned)pick(s, 26)));
    break;
  }
  default: {
    json_t *inits = json_object_get(graph, "initializer");
    json_t *t = json_array_get(inits, pick(s, json_array_size(inits)));
    if (!t)
      break;
    json_t *dims = json_object_get(t, "dims");
    if (pick(s, 2) && json_array_size(dims))
      json_array_set_new(dims, pick(s, json_array_size(dims)),
                         json_sprintf("%lld", (long long)(interesting_int(s) % 9)));
    else
      json_object_set_new(t, "dataType", json_integer(1 + (json_int_t)pick(s, 16)));
    break;
  }
  }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  json_t *root = json_loadb((const char *)data, size, 0, NULL);
  if (!json_is_object(root)) {
    json_decref(root);
    return LLVMFuzzerMutate(data, size, max_size);
  }
  unsigned s = seed | 1;
  for (size_t k = 0, n = 1 + pick(&s, 3); k < n; k++) {
    if (json_object_get(root, "graph"))
      mutate_onnx(root, &s);
    else
      mutate_lgen(root, &s);
  }
  char *text = json_dumps(root, JSON_COMPACT);
  json_decref(root);
  size_t len = text ? strlen(text) : 0;
  if (!text || len > max_size) {
    free(text);
    return LLVMFuzzerMutate(data, size, max_size);
  }
  memcpy(data, text, len);
  free(text);
  return len;
}
