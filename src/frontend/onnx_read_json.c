/* onnx_read_json.c - an ONNX model in protobuf's JSON mapping to the
 * neutral model of onnx_model.h.
 *
 * The input is a ModelProto as google.protobuf.json_format.MessageToJson
 * writes it: camelCase keys, int64 values as JSON strings, bytes (rawData,
 * STRING attributes) in base64, enums by name, element types by number.
 * This file owns the JSON: which members are arrays, strings and numbers,
 * and their decoding; what the values mean is the importer's (onnx_json.c).
 * Paths are the JSON pointers of the members, and the graph's locator
 * (json_locate.h, installed by graph_load_onnx) finds them in the text
 * again. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/graph_load.h"
#include "frontend/json_locate.h"
#include "frontend/onnx_model.h"

typedef struct {
  Graph *g;
  Arena *arena;
} Reader;

static OnnxGraph *read_graph(Reader *r, json_t *graph, const char *path);

static const char *path_join(Reader *r, const char *base, const char *key) {
  return arena_printf(r->arena, "%s/%s", base, key);
}

static const char *path_index(Reader *r, const char *base, const char *key, size_t i) {
  return arena_printf(r->arena, "%s/%s/%zu", base, key, i);
}

/* A member that must be an array (absent: an empty array). */
static json_t *json_list(Reader *r, json_t *obj, const char *key, const char *path) {
  json_t *a = json_object_get(obj, key);
  if (a && !json_is_array(a))
    graph_error(r->g, path_join(r, path, key), "'%s' must be a JSON array", key);
  return a;
}

static size_t list_len(json_t *a) { return a ? json_array_size(a) : 0; }

static const char *json_str(Reader *r, json_t *obj, const char *key, const char *path, const char *dflt) {
  json_t *v = json_object_get(obj, key);
  if (!v)
    return dflt;
  if (!json_is_string(v))
    graph_error(r->g, path_join(r, path, key), "'%s' must be a string", key);
  /* a copy: the JSON tree is freed once the graph is built */
  return arena_strdup(r->arena, json_string_value(v));
}

/* An int64 as protobuf's JSON writes it: a string of digits (or, leniently,
 * a JSON integer). */
static int64_t json_int64(Reader *r, json_t *v, const char *path) {
  if (json_is_integer(v))
    return (int64_t)json_integer_value(v);
  const char *s = json_string_value(v);
  if (!s)
    graph_error(r->g, path, "expected an integer (a JSON string of digits)");
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (end == s || *end || errno == ERANGE)
    graph_error(r->g, path, "'%s' is not a 64-bit integer", s);
  return (int64_t)x;
}

static uint64_t json_uint64(Reader *r, json_t *v, const char *path) {
  if (json_is_integer(v) && json_integer_value(v) >= 0)
    return (uint64_t)json_integer_value(v);
  const char *s = json_string_value(v);
  if (!s)
    graph_error(r->g, path, "expected an unsigned integer (a JSON string of digits)");
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (end == s || *end || errno == ERANGE || s[0] == '-')
    graph_error(r->g, path, "'%s' is not a 64-bit unsigned integer", s);
  return (uint64_t)x;
}

/* A float or double field: a number, or "NaN", "Infinity", "-Infinity". */
static double json_double(Reader *r, json_t *v, const char *path) {
  if (json_is_number(v))
    return json_number_value(v);
  const char *s = json_string_value(v);
  if (!s)
    graph_error(r->g, path, "expected a number");
  if (strcmp(s, "NaN") == 0)
    return NAN;
  if (strcmp(s, "Infinity") == 0)
    return INFINITY;
  if (strcmp(s, "-Infinity") == 0)
    return -INFINITY;
  char *end;
  double d = strtod(s, &end);
  if (end == s || *end)
    graph_error(r->g, path, "'%s' is not a number", s);
  return d;
}

/* An enum field: its name, or (leniently) its number. */
static int64_t json_enum(Reader *r, json_t *v, const char *path, const char *const *names, int count) {
  if (json_is_string(v))
    for (int i = 0; i < count; i++)
      if (names[i] && strcmp(json_string_value(v), names[i]) == 0)
        return i;
  if (json_is_integer(v))
    return (int64_t)json_integer_value(v);
  if (json_is_string(v))
    graph_error(r->g, path, "unknown value '%s'", json_string_value(v));
  graph_error(r->g, path, "expected an enum name");
}

/* base64 bytes, NUL-terminated. */
static const uint8_t *json_bytes(Reader *r, json_t *v, const char *path, size_t *len, const char *what) {
  const char *text = json_string_value(v);
  uint8_t *bytes;
  if (!text || !base64_decode(text, strlen(text), r->arena, &bytes, len))
    graph_error(r->g, path, "%s is not valid base64", what);
  uint8_t *copy = arena_alloc(r->arena, *len + 1);
  if (*len)
    memcpy(copy, bytes, *len);
  return copy;
}

/* ------------------------------------------------------------------ */
/* TensorProto                                                         */

static void read_tensor(Reader *r, json_t *t, const char *path, const char *what, OnnxTensor *out) {
  memset(out, 0, sizeof *out);
  out->path = path;
  if (!json_is_object(t))
    graph_error(r->g, path, "%s must be a JSON object (a TensorProto)", what);
  out->name = json_str(r, t, "name", path, "");
  json_t *dt = json_object_get(t, "dataType");
  if (dt) {
    out->has_data_type = true;
    out->data_type = json_int64(r, dt, path_join(r, path, "dataType"));
  }
  json_t *dims = json_list(r, t, "dims", path);
  out->ndims = (int)list_len(dims);
  out->dims = arena_alloc(r->arena, ((size_t)out->ndims + 1) * sizeof *out->dims);
  for (int i = 0; i < out->ndims; i++)
    out->dims[i] = json_int64(r, json_array_get(dims, (size_t)i), path_index(r, path, "dims", (size_t)i));
  out->has_segment = json_object_get(t, "segment") != NULL;
  json_t *loc = json_object_get(t, "dataLocation");
  if (loc) {
    static const char *const names[] = {"DEFAULT", "EXTERNAL"};
    out->data_location = json_enum(r, loc, path_join(r, path, "dataLocation"), names, 2);
  }
  json_t *entries = json_list(r, t, "externalData", path);
  out->nexternal = (int)list_len(entries);
  out->external = arena_alloc(r->arena, ((size_t)out->nexternal + 1) * sizeof *out->external);
  for (int i = 0; i < out->nexternal; i++) {
    json_t *e = json_array_get(entries, (size_t)i);
    OnnxEntry *oe = &out->external[i];
    oe->path = path_index(r, path, "externalData", (size_t)i);
    oe->key = json_str(r, e, "key", oe->path, "");
    json_t *val = json_object_get(e, "value");
    if (!json_is_string(val))
      graph_error(r->g, oe->path, "external data entry '%s' has no string value", oe->key);
    oe->value = arena_strdup(r->arena, json_string_value(val));
  }
  json_t *raw = json_object_get(t, "rawData");
  if (raw) {
    out->has_raw = true;
    out->raw = json_bytes(r, raw, path_join(r, path, "rawData"), &out->raw_len,
                          arena_printf(r->arena, "%s: rawData", what));
  }
  json_t *a;
  if ((a = json_list(r, t, "floatData", path))) {
    out->has_float = true;
    out->nfloat = json_array_size(a);
    out->float_data = arena_alloc(r->arena, (out->nfloat + 1) * sizeof *out->float_data);
    for (size_t i = 0; i < out->nfloat; i++)
      out->float_data[i] = (float)json_double(r, json_array_get(a, i), path_index(r, path, "floatData", i));
  }
  if ((a = json_list(r, t, "doubleData", path))) {
    out->has_double = true;
    out->ndouble = json_array_size(a);
    out->double_data = arena_alloc(r->arena, (out->ndouble + 1) * sizeof *out->double_data);
    for (size_t i = 0; i < out->ndouble; i++)
      out->double_data[i] = json_double(r, json_array_get(a, i), path_index(r, path, "doubleData", i));
  }
  if ((a = json_list(r, t, "int32Data", path))) {
    out->has_int32 = true;
    out->nint32 = json_array_size(a);
    out->int32_data = arena_alloc(r->arena, (out->nint32 + 1) * sizeof *out->int32_data);
    for (size_t i = 0; i < out->nint32; i++)
      out->int32_data[i] = json_int64(r, json_array_get(a, i), path_index(r, path, "int32Data", i));
  }
  if ((a = json_list(r, t, "int64Data", path))) {
    out->has_int64 = true;
    out->nint64 = json_array_size(a);
    out->int64_data = arena_alloc(r->arena, (out->nint64 + 1) * sizeof *out->int64_data);
    for (size_t i = 0; i < out->nint64; i++)
      out->int64_data[i] = json_int64(r, json_array_get(a, i), path_index(r, path, "int64Data", i));
  }
  if ((a = json_list(r, t, "uint64Data", path))) {
    out->has_uint64 = true;
    out->nuint64 = json_array_size(a);
    out->uint64_data = arena_alloc(r->arena, (out->nuint64 + 1) * sizeof *out->uint64_data);
    for (size_t i = 0; i < out->nuint64; i++)
      out->uint64_data[i] = json_uint64(r, json_array_get(a, i), path_index(r, path, "uint64Data", i));
  }
}

/* ------------------------------------------------------------------ */
/* AttributeProto and NodeProto                                        */

/* "node 'fc1' (Gemm): " or "node 3 (Gemm): ", as the importer says it. */
static const char *node_desc(Reader *r, const OnnxNode *n, size_t index) {
  if (n->name[0])
    return arena_printf(r->arena, "node '%s' (%s): ", n->name, n->op_type ? n->op_type : "?");
  return arena_printf(r->arena, "node %zu (%s): ", index, n->op_type ? n->op_type : "?");
}

static void read_attr(Reader *r, json_t *j, const char *path, const char *desc, OnnxAttr *a) {
  static const char *const types[] = {"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS",
                                      "INTS", "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR",
                                      "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
  a->path = path;
  if (!json_is_object(j))
    graph_error(r->g, path, "an attribute must be a JSON object");
  a->name = json_str(r, j, "name", path, "");
  json_t *type = json_object_get(j, "type");
  a->type = "";
  if (type) {
    int64_t code = json_enum(r, type, path_join(r, path, "type"), types, 15);
    a->type = code >= 0 && code < 15 ? types[code] : arena_printf(r->arena, "%lld", (long long)code);
  }
  json_t *v;
  if ((v = json_object_get(j, "f"))) {
    a->has_f = true;
    /* a float field: the JSON's shortest decimal is that float, not the
     * double nearest the decimal (0.1 would be another number) */
    a->f = (float)json_double(r, v, path_join(r, path, "f"));
  }
  if ((v = json_object_get(j, "i"))) {
    a->has_i = true;
    a->i = json_int64(r, v, path_join(r, path, "i"));
  }
  if ((v = json_object_get(j, "s"))) {
    a->has_s = true;
    a->s = json_bytes(r, v, path_join(r, path, "s"), &a->s_len,
                      arena_printf(r->arena, "%sattribute '%s'", desc, a->name));
  }
  const char *what = arena_printf(r->arena, "attribute '%s'", a->name);
  if ((v = json_object_get(j, "t"))) {
    a->has_t = true;
    a->t = arena_alloc(r->arena, sizeof *a->t);
    read_tensor(r, v, path_join(r, path, "t"), what, a->t);
  }
  if ((v = json_object_get(j, "g"))) {
    a->has_g = true;
    a->g = read_graph(r, v, path_join(r, path, "g"));
  }
  json_t *l;
  if ((l = json_list(r, j, "floats", path))) {
    a->has_floats = true;
    a->nfloats = (int)json_array_size(l);
    a->floats = arena_alloc(r->arena, ((size_t)a->nfloats + 1) * sizeof *a->floats);
    for (int i = 0; i < a->nfloats; i++)
      a->floats[i] = (float)json_double(r, json_array_get(l, (size_t)i), path_index(r, path, "floats", (size_t)i));
  }
  if ((l = json_list(r, j, "ints", path))) {
    a->has_ints = true;
    a->nints = (int)json_array_size(l);
    a->ints = arena_alloc(r->arena, ((size_t)a->nints + 1) * sizeof *a->ints);
    for (int i = 0; i < a->nints; i++)
      a->ints[i] = json_int64(r, json_array_get(l, (size_t)i), path_index(r, path, "ints", (size_t)i));
  }
  if ((l = json_list(r, j, "strings", path))) {
    a->has_strings = true;
    a->nstrings = (int)json_array_size(l);
    a->strings = arena_alloc(r->arena, ((size_t)a->nstrings + 1) * sizeof *a->strings);
    for (int i = 0; i < a->nstrings; i++) {
      size_t len;
      const char *p = path_index(r, path, "strings", (size_t)i);
      a->strings[i] = (const char *)json_bytes(r, json_array_get(l, (size_t)i), p, &len, what);
    }
  }
  if ((l = json_list(r, j, "tensors", path))) {
    a->has_tensors = true;
    a->ntensors = (int)json_array_size(l);
    a->tensors = arena_alloc(r->arena, ((size_t)a->ntensors + 1) * sizeof *a->tensors);
    for (int i = 0; i < a->ntensors; i++)
      read_tensor(r, json_array_get(l, (size_t)i), path_index(r, path, "tensors", (size_t)i), what, &a->tensors[i]);
  }
  if ((l = json_list(r, j, "graphs", path))) {
    a->has_graphs = true;
    a->ngraphs = (int)json_array_size(l);
    a->graphs = arena_alloc(r->arena, ((size_t)a->ngraphs + 1) * sizeof *a->graphs);
    for (int i = 0; i < a->ngraphs; i++)
      a->graphs[i] = read_graph(r, json_array_get(l, (size_t)i), path_index(r, path, "graphs", (size_t)i));
  }
}

static const char **read_names(Reader *r, json_t *node, const char *key, const char *path, const char *what,
                               int *count) {
  json_t *l = json_list(r, node, key, path);
  *count = (int)list_len(l);
  const char **names = arena_alloc(r->arena, ((size_t)*count + 1) * sizeof *names);
  for (int k = 0; k < *count; k++) {
    const char *name = json_string_value(json_array_get(l, (size_t)k));
    if (!name)
      graph_error(r->g, path_index(r, path, key, (size_t)k), "%s must be a string", what);
    names[k] = arena_strdup(r->arena, name);
  }
  return names;
}

static void read_node(Reader *r, json_t *j, const char *path, size_t index, OnnxNode *n) {
  n->path = path;
  if (!json_is_object(j))
    graph_error(r->g, path, "a node must be a JSON object");
  n->op_type = json_str(r, j, "opType", path, NULL);
  n->name = json_str(r, j, "name", path, "");
  n->domain = json_str(r, j, "domain", path, "");
  n->inputs = read_names(r, j, "input", path, "an input name", &n->ninputs);
  n->outputs = read_names(r, j, "output", path, "an output name", &n->noutputs);
  json_t *list = json_list(r, j, "attribute", path);
  n->nattrs = (int)list_len(list);
  n->attrs = arena_alloc(r->arena, ((size_t)n->nattrs + 1) * sizeof *n->attrs);
  const char *desc = node_desc(r, n, index);
  for (int i = 0; i < n->nattrs; i++)
    read_attr(r, json_array_get(list, (size_t)i), path_index(r, path, "attribute", (size_t)i), desc, &n->attrs[i]);
}

/* ------------------------------------------------------------------ */
/* ValueInfoProto and GraphProto                                       */

static void read_value_info(Reader *r, json_t *j, const char *path, OnnxValueInfo *v) {
  v->path = path;
  if (!json_is_object(j))
    graph_error(r->g, path, "a value info must be a JSON object");
  v->name = json_str(r, j, "name", path, "");
  json_t *tt = json_object_get(json_object_get(j, "type"), "tensorType");
  if (!tt)
    return;
  v->has_tensor_type = true;
  const char *tp = path_join(r, path, "type/tensorType");
  json_t *et = json_object_get(tt, "elemType");
  if (et) {
    v->has_elem_type = true;
    v->elem_type = json_int64(r, et, path_join(r, tp, "elemType"));
  }
  json_t *shape = json_object_get(tt, "shape");
  if (!shape)
    return;
  v->has_shape = true;
  const char *sp = path_join(r, tp, "shape");
  json_t *dims = json_list(r, shape, "dim", sp);
  v->rank = (int)list_len(dims);
  v->dims = arena_alloc(r->arena, ((size_t)v->rank + 1) * sizeof *v->dims);
  for (int d = 0; d < v->rank; d++) {
    json_t *dim = json_array_get(dims, (size_t)d);
    OnnxDim *od = &v->dims[d];
    od->path = path_index(r, sp, "dim", (size_t)d);
    json_t *dv = json_object_get(dim, "dimValue");
    if (dv) {
      od->has_value = true;
      od->value = json_int64(r, dv, path_join(r, od->path, "dimValue"));
    }
    od->param = json_str(r, dim, "dimParam", od->path, NULL);
  }
}

static OnnxValueInfo *read_value_infos(Reader *r, json_t *graph, const char *path, const char *key, int *count) {
  json_t *l = json_list(r, graph, key, path);
  *count = (int)list_len(l);
  OnnxValueInfo *v = arena_alloc(r->arena, ((size_t)*count + 1) * sizeof *v);
  for (int i = 0; i < *count; i++)
    read_value_info(r, json_array_get(l, (size_t)i), path_index(r, path, key, (size_t)i), &v[i]);
  return v;
}

static OnnxGraph *read_graph(Reader *r, json_t *j, const char *path) {
  OnnxGraph *g = arena_alloc(r->arena, sizeof *g);
  g->path = path;
  if (!json_is_object(j))
    graph_error(r->g, path, "a graph must be a JSON object");
  g->name = json_str(r, j, "name", path, "");
  json_t *l = json_list(r, j, "node", path);
  g->nnodes = (int)list_len(l);
  g->nodes = arena_alloc(r->arena, ((size_t)g->nnodes + 1) * sizeof *g->nodes);
  for (int i = 0; i < g->nnodes; i++)
    read_node(r, json_array_get(l, (size_t)i), path_index(r, path, "node", (size_t)i), (size_t)i, &g->nodes[i]);
  l = json_list(r, j, "initializer", path);
  g->ninitializers = (int)list_len(l);
  g->initializers = arena_alloc(r->arena, ((size_t)g->ninitializers + 1) * sizeof *g->initializers);
  for (int i = 0; i < g->ninitializers; i++) {
    json_t *t = json_array_get(l, (size_t)i);
    const char *p = path_index(r, path, "initializer", (size_t)i);
    const char *name = json_is_object(t) ? json_str(r, t, "name", p, "") : "";
    read_tensor(r, t, p, arena_printf(r->arena, "initializer '%s'", name), &g->initializers[i]);
  }
  g->inputs = read_value_infos(r, j, path, "input", &g->ninputs);
  g->outputs = read_value_infos(r, j, path, "output", &g->noutputs);
  g->value_infos = read_value_infos(r, j, path, "valueInfo", &g->nvalue_infos);
  return g;
}

static OnnxModel *onnx_read_json(Graph *g, void *json_root) {
  json_t *root = json_root;
  Reader r = {g, g->arena};
  OnnxModel *m = arena_alloc(r.arena, sizeof *m);
  json_t *list = json_list(&r, root, "opsetImport", "");
  m->has_opset_list = list != NULL;
  m->nopsets = (int)list_len(list);
  m->opsets = arena_alloc(r.arena, ((size_t)m->nopsets + 1) * sizeof *m->opsets);
  for (int i = 0; i < m->nopsets; i++) {
    json_t *e = json_array_get(list, (size_t)i);
    OnnxOpset *o = &m->opsets[i];
    o->path = path_index(&r, "", "opsetImport", (size_t)i);
    o->domain = json_str(&r, e, "domain", o->path, "");
    json_t *v = json_object_get(e, "version");
    if (v) {
      o->has_version = true;
      o->version = json_int64(&r, v, path_join(&r, o->path, "version"));
    }
  }
  json_t *graph = json_object_get(root, "graph");
  if (graph)
    m->graph = read_graph(&r, graph, "/graph");
  return m;
}

Graph *graph_load_onnx(const Source *src, void *json_root, const char *dir, const Module *specs, PtrVec *file_deps,
                       const GraphLoadOptions *opts, Arena *arena, Diag *diag) {
  Graph *g = graph_new(arena, diag, json_locator_loc, json_locator_new(arena, src), specs);
  graph_apply_options(g, opts);
  const OnnxModel *m = onnx_read_json(g, json_root);
  onnx_import(g, m, src->name, dir, file_deps);
  return g;
}
