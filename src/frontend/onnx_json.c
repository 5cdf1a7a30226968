/* onnx_json.c - the ONNX importer: a model as onnx_model.h holds it (read
 * from protobuf's JSON mapping by onnx_read_json.c, or from the binary
 * protobuf by onnx_read_pb.c) to a Graph (see graph/graph.h). The file keeps
 * its old name; it no longer sees JSON.
 *
 * Every ONNX operator is written as graph ops through the builder's API
 * (graph_add_node and friends), one ONNX node at a time in file order;
 * composite operators (Gemm, BatchNormalization, LayerNormalization, ...)
 * become short chains of primitives whose last node carries the ONNX
 * output's name, so later nodes find it by name.
 *
 * The operator semantics are those of the opset the model imports for the
 * default domain: where ONNX moved an attribute to an input (Reduce* axes,
 * Squeeze/Unsqueeze axes, Slice, Pad, Clip, Split) both forms are read, and
 * inputs that steer shapes must be constants once the builder has folded
 * what it can. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx_model.h"
#include "util/data_file.h"

/* Opsets before 7 differ from today's operators mostly in the attributes
 * they took (Add's broadcast, Reshape's shape): each importer checks the
 * forms it reads, so old models whose operators did not change load. */
enum { ONNX_MAX_LIST = 4096, ONNX_MIN_OPSET = 1 };
/* The newest opset whose operators lgen knows: a newer one may have changed
 * any of them, so it is refused rather than read with older semantics. */
enum { ONNX_MAX_OPSET = 25 };

typedef struct OnnxOp OnnxOp;

/* One attribute of an ONNX node (onnx_model.h). */
typedef OnnxAttr OAttr;

/* One ONNX node with its inputs resolved to graph values. */
typedef struct {
  int index;           /* position in graph.node */
  const char *path;    /* /graph/node/N */
  const char *name;    /* "" when the node has none */
  const char *op_type;
  int ninputs;
  int *inputs;         /* value indices; -1: omitted optional input */
  int noutputs;
  const char **outputs; /* NULL: omitted optional output */
  int nattrs;
  const OAttr *attrs;
  const OnnxOp *entry;
  const OnnxNode *src; /* as the file has it */
} ONode;

/* The names of a subgraph being inlined (If's branch, a Loop body's
 * iteration: onnx_control.inc): its values get fresh graph names, and its
 * nodes see the outer scopes' names. */
typedef struct OnnxScope {
  struct OnnxScope *up;
  const char *prefix;  /* of the fresh names */
  int count, cap;
  const char **from, **to;
} OnnxScope;

/* The state of one load. */
typedef struct {
  Graph *g;
  Arena *arena;
  const char *file; /* the model file's name, for the default entry name */
  const char *dir;
  PtrVec *file_deps;
  int64_t opset;       /* of the default domain */
  int temps;           /* for generated value names */
  OnnxScope *scope;    /* NULL: the main graph */
} Onnx;

typedef void (*OnnxImport)(Onnx *cx, ONode *n);

struct OnnxOp {
  const char *op_type;
  OnnxImport import;
  GraphOp gop;         /* for the generic importers */
  int min_in, max_in;
  int max_out;         /* outputs beyond this must be omitted */
  /* Every input is required: the list is ONNX's variadic kind (Concat, Max,
   * Min, Sum, Mean), so an empty name there, even a last one, is an error
   * rather than an omitted optional input ("" marks one elsewhere). */
  bool every_input;
};

/* A TensorProto decoded into little-endian element bytes. */
typedef struct {
  ElemType type;
  int rank;
  int64_t *dims;
  int64_t count;
  const uint8_t *data;
} OTensor;

/* ------------------------------------------------------------------ */
/* Small helpers: paths, messages                                      */

static const char *path_join(Onnx *cx, const char *base, const char *key) {
  return arena_printf(cx->arena, "%s/%s", base, key);
}

static const char *path_index(Onnx *cx, const char *base, const char *key, size_t i) {
  return arena_printf(cx->arena, "%s/%s/%zu", base, key, i);
}

/* "node 'fc1' (Gemm): " or "node 3 (Gemm): ", the prefix of node errors. */
static const char *node_desc(Onnx *cx, const ONode *n) {
  if (n->name[0])
    return arena_printf(cx->arena, "node '%s' (%s): ", n->name, n->op_type);
  return arena_printf(cx->arena, "node %d (%s): ", n->index, n->op_type);
}

static const char *input_path(Onnx *cx, const ONode *n, int k) {
  return path_index(cx, n->path, "input", (size_t)k);
}

/* A member that must be an array (absent: an empty array). */
static const char *fresh_name(Onnx *cx) {
  for (;;) {
    const char *name = arena_printf(cx->arena, "onnx_t%d", ++cx->temps);
    if (graph_find(cx->g, name) < 0)
      return name;
  }
}

static GraphValue *value(Onnx *cx, int v) { return GRAPH_VALUE(cx->g, v); }

/* The graph's name for a value named `name` where the node being read is
 * (an inlined subgraph's values are renamed). */
static const char *scoped_name(const Onnx *cx, const char *name) {
  for (const OnnxScope *s = cx->scope; s; s = s->up)
    for (int i = s->count - 1; i >= 0; i--)
      if (strcmp(s->from[i], name) == 0)
        return s->to[i];
  return name;
}

/* A value `name` defined in the current subgraph: its fresh graph name. */
static const char *scope_define(Onnx *cx, const char *name) {
  OnnxScope *s = cx->scope;
  if (!s)
    return name;
  if (s->count == s->cap) {
    int cap = s->cap ? 2 * s->cap : 16;
    const char **from = arena_alloc(cx->arena, (size_t)cap * sizeof *from);
    const char **to = arena_alloc(cx->arena, (size_t)cap * sizeof *to);
    if (s->count) {
      memcpy(from, s->from, (size_t)s->count * sizeof *from);
      memcpy(to, s->to, (size_t)s->count * sizeof *to);
    }
    s->from = from, s->to = to, s->cap = cap;
  }
  const char *fresh = arena_printf(cx->arena, "%s/%s", s->prefix, name);
  for (int k = 2; graph_find(cx->g, fresh) >= 0; k++)
    fresh = arena_printf(cx->arena, "%s/%s_%d", s->prefix, name, k);
  s->from[s->count] = name, s->to[s->count++] = fresh;
  return fresh;
}

/* ------------------------------------------------------------------ */
/* Element types and element bytes                                     */

/* ONNX TensorProto.DataType codes lgen has a type for (elem_types.def). */
static bool onnx_type(int64_t code, ElemType *out) { return elem_type_from_onnx(code, out); }

static const char *onnx_type_name(int64_t code) {
  static const char *const names[] = {"undefined", "float", "uint8", "int8", "uint16", "int16", "int32",
                                      "int64", "string", "bool", "float16", "double", "uint32", "uint64",
                                      "complex64", "complex128", "bfloat16"};
  if (code >= 0 && code < (int64_t)(sizeof names / sizeof names[0]))
    return names[code];
  return "unknown";
}

static ElemType onnx_type_at(Onnx *cx, int64_t code, const char *path, const char *what) {
  ElemType t;
  if (!onnx_type(code, &t))
    graph_error(cx->g, path,
                "%s has ONNX element type %lld (%s), which lgen does not support (supported: float, "
                "double, float16, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool)",
                what, (long long)code, onnx_type_name(code));
  return t;
}

static int elem_bytes(ElemType t) { return elem_type_bytes(t); }

static void store_le(uint8_t *p, int bytes, uint64_t bits) {
  for (int b = 0; b < bytes; b++)
    p[b] = (uint8_t)(bits >> (8 * b));
}

/* Element i of a buffer of type t, from a double (floats) or the integer
 * it holds (integers; i1 as 0/1). */
static void store_double(uint8_t *buf, ElemType t, int64_t i, double v) {
  uint8_t *p = buf + i * elem_bytes(t);
  switch (t) {
  case TY_F32: {
    float f = (float)v;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    store_le(p, 4, bits);
    break;
  }
  case TY_F64: {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    store_le(p, 8, bits);
    break;
  }
  case TY_F16: store_le(p, 2, elem_f16_bits(v)); break;
  case TY_I1: p[0] = v != 0; break;
  default: store_le(p, elem_bytes(t), (uint64_t)elem_int_saturate(t, v)); break;
  }
}

static void store_int(uint8_t *buf, ElemType t, int64_t i, int64_t v) {
  if (elem_type_is_float(t)) {
    store_double(buf, t, i, (double)v);
    return;
  }
  if (t == TY_I1)
    v = v != 0;
  store_le(buf + i * elem_bytes(t), elem_bytes(t), (uint64_t)v);
}

/* ------------------------------------------------------------------ */
/* TensorProto                                                         */

static int64_t tensor_dims(Onnx *cx, const OnnxTensor *t, const char *path, const char *what, OTensor *out) {
  size_t rank = (size_t)t->ndims;
  if (rank > LG_MAX_RANK)
    graph_error(cx->g, path_join(cx, path, "dims"), "rank %zu exceeds lgen's limit of %d", rank, LG_MAX_RANK);
  out->rank = (int)rank;
  out->dims = arena_alloc(cx->arena, (rank + 1) * sizeof *out->dims);
  int64_t count = 1;
  for (size_t i = 0; i < rank; i++) {
    const char *p = path_index(cx, path, "dims", i);
    int64_t d = t->dims[i];
    if (d < 0)
      graph_error(cx->g, p, "negative dimension %lld", (long long)d);
    if (d > 0 && count > ((int64_t)1 << 40) / d)
      graph_error(cx->g, p, "%s would have more than 2^40 elements", what);
    out->dims[i] = d;
    count *= d;
  }
  return count;
}

/* offset and length of external data: decimal strings. */
static int64_t external_int(Onnx *cx, const OnnxEntry *e, const char *path, const char *what) {
  char *end;
  errno = 0;
  long long x = strtoll(e->value, &end, 10);
  if (end == e->value || *end || errno == ERANGE)
    graph_error(cx->g, path, "%s: external data %s '%s' is not a 64-bit integer", what, e->key, e->value);
  return (int64_t)x;
}

/* Raw bytes from a file next to the model (ONNX external data), under
 * the file policy of util/data_file.h. */
static const uint8_t *external_data(Onnx *cx, const OnnxTensor *t, const char *path, const char *what,
                                    size_t want) {
  const char *location = NULL;
  int64_t offset = 0, length = -1;
  for (int i = 0; i < t->nexternal; i++) {
    const OnnxEntry *e = &t->external[i];
    const char *vp = path_join(cx, e->path, "value");
    if (strcmp(e->key, "location") == 0)
      location = e->value;
    else if (strcmp(e->key, "offset") == 0)
      offset = external_int(cx, e, vp, what);
    else if (strcmp(e->key, "length") == 0)
      length = external_int(cx, e, vp, what);
    if (offset < 0)
      graph_error(cx->g, vp, "%s: negative external data offset %lld", what, (long long)offset);
  }
  if (!location)
    graph_error(cx->g, path, "%s: external data without a 'location'", what);
  if (length >= 0 && (size_t)length != want)
    graph_error(cx->g, path, "%s: external data length %lld, but the tensor needs %zu bytes", what,
                (long long)length, want);
  const GraphLoadOptions *lo = cx->g->load;
  DataFilePolicy policy = {cx->dir, lo ? lo->allow_external : NULL, lo ? lo->nallow_external : 0};
  const char *file, *err;
  bool io;
  const uint8_t *buf = data_file_read(cx->arena, &policy, location, (uint64_t)offset, want, false, &file, &err, &io);
  if (!buf && io)
    diag_io_error(cx->g->diag, "%s: external data: %s", what, err);
  if (!buf)
    graph_error(cx->g, path, "%s: external data: %s", what, err);
  if (cx->file_deps)
    vec_push(cx->arena, cx->file_deps, (void *)file);
  return buf;
}

/* The typed-array field that holds elements of type t when rawData is
 * absent (float16, bool and the small integers travel in int32Data). */
static const char *typed_field(ElemType t) {
  switch (t) {
  case TY_F32: return "floatData";
  case TY_F64: return "doubleData";
  case TY_I64: return "int64Data";
  case TY_U32:
  case TY_U64: return "uint64Data";
  default: return "int32Data";
  }
}

static const uint8_t *typed_data(Onnx *cx, const OnnxTensor *t, const char *path, ElemType type, int64_t count) {
  const char *field = typed_field(type);
  bool u64 = type == TY_U32 || type == TY_U64;
  bool present = type == TY_F32 ? t->has_float : type == TY_F64 ? t->has_double : type == TY_I64 ? t->has_int64
                 : u64                                                                   ? t->has_uint64
                                                                                         : t->has_int32;
  size_t len = type == TY_F32 ? t->nfloat : type == TY_F64 ? t->ndouble : type == TY_I64 ? t->nint64
               : u64                                                                     ? t->nuint64
                                                                                         : t->nint32;
  const char *fpath = path_join(cx, path, field);
  if ((int64_t)len != count) {
    if (!present && count > 0)
      graph_error(cx->g, path, "the tensor has no data (no rawData and no %s)", field);
    graph_error(cx->g, fpath, "%zu elements, but the shape holds %lld", len, (long long)count);
  }
  uint8_t *buf = arena_alloc(cx->arena, (size_t)count * (size_t)elem_bytes(type) + 1);
  for (int64_t i = 0; i < count; i++) {
    if (type == TY_F32)
      store_double(buf, type, i, t->float_data[i]);
    else if (type == TY_F64)
      store_double(buf, type, i, t->double_data[i]);
    else if (type == TY_F16) /* int32Data holds the binary16 bits */
      store_le(buf + 2 * i, 2, (uint64_t)t->int32_data[i]);
    else if (type == TY_I64)
      store_int(buf, type, i, t->int64_data[i]);
    else if (u64) /* the value's bits (store_le keeps the low 4 bytes of a u32) */
      store_le(buf + (size_t)elem_bytes(type) * (size_t)i, elem_bytes(type), t->uint64_data[i]);
    else
      store_int(buf, type, i, t->int32_data[i]);
  }
  return buf;
}

/* Decodes a TensorProto; `what` names it in messages. */
static OTensor decode_tensor(Onnx *cx, const OnnxTensor *t, const char *path, const char *what) {
  OTensor out = {0};
  if (!t->has_data_type)
    graph_error(cx->g, path, "%s has no 'dataType'", what);
  out.type = onnx_type_at(cx, t->data_type, path_join(cx, path, "dataType"), what);
  out.count = tensor_dims(cx, t, path, what, &out);
  if (t->has_segment)
    graph_error(cx->g, path_join(cx, path, "segment"), "%s: segmented tensors are not supported", what);
  size_t want = (size_t)graph_const_check(cx->g, out.type, out.count, path, what);
  if (t->data_location == 1) {
    out.data = external_data(cx, t, path, what, want);
  } else if (t->data_location != 0) {
    graph_error(cx->g, path_join(cx, path, "dataLocation"), "%s: unknown data location %lld", what,
                (long long)t->data_location);
  } else if (t->has_raw) {
    const char *rpath = path_join(cx, path, "rawData");
    if (t->raw_len != want)
      graph_error(cx->g, rpath, "%s: rawData has %zu bytes, but %lld elements of %s need %zu", what, t->raw_len,
                  (long long)out.count, elem_type_name(out.type), want);
    out.data = t->raw;
  } else {
    out.data = typed_data(cx, t, path, out.type, out.count);
  }
  return out;
}

static int add_tensor_const(Onnx *cx, const char *name, const OTensor *t, const char *path) {
  return graph_add_const(cx->g, name, t->type, t->rank, t->dims, t->data, path);
}

/* ------------------------------------------------------------------ */
/* Attributes                                                          */

static const OAttr *find_attr(const ONode *n, const char *name) {
  for (int i = 0; i < n->nattrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0)
      return &n->attrs[i];
  return NULL;
}

/* The attribute, checked to be of ONNX type `type`; NULL when absent. */
static const OAttr *typed_attr(Onnx *cx, const ONode *n, const char *name, const char *type) {
  const OAttr *a = find_attr(n, name);
  if (a && strcmp(a->type, type) != 0)
    graph_error(cx->g, a->path, "%sattribute '%s' must be of type %s, not %s", node_desc(cx, n), name, type,
                a->type);
  return a;
}

/* A value member the attribute must have (i, t, g, ...). */
static void attr_member(Onnx *cx, const ONode *n, const OAttr *a, const char *key, bool present) {
  if (!present)
    graph_error(cx->g, a->path, "%sattribute '%s' has no '%s' value", node_desc(cx, n), a->name, key);
}

static bool has_attr(const ONode *n, const char *name) { return find_attr(n, name) != NULL; }

static int64_t attr_int(Onnx *cx, const ONode *n, const char *name, int64_t dflt) {
  const OAttr *a = typed_attr(cx, n, name, "INT");
  if (!a)
    return dflt;
  attr_member(cx, n, a, "i", a->has_i);
  return a->i;
}

static double attr_float(Onnx *cx, const ONode *n, const char *name, double dflt) {
  const OAttr *a = typed_attr(cx, n, name, "FLOAT");
  if (!a)
    return dflt;
  return a->has_f ? a->f : 0.0; /* proto3 leaves out 0 */
}

/* A STRING attribute: protobuf bytes, which may not hold a NUL byte (every
 * string attribute lgen reads is a name from a fixed list or an Einsum
 * equation of letters; cut at the NUL, "ij\0->ji" would read as "ij"). */
static const char *attr_string(Onnx *cx, const ONode *n, const char *name, const char *dflt) {
  const OAttr *a = typed_attr(cx, n, name, "STRING");
  if (!a)
    return dflt;
  if (!a->has_s)
    return "";
  const uint8_t *nul = a->s_len ? memchr(a->s, 0, a->s_len) : NULL;
  if (nul)
    graph_error(cx->g, a->path, "%sattribute '%s' holds a NUL byte (at byte %zu of %zu)", node_desc(cx, n), name,
                (size_t)(nul - a->s), a->s_len);
  return arena_strndup(cx->arena, (const char *)a->s, a->s_len);
}

/* A list attribute's length, bounded; NULL when the attribute is absent. */
static const OAttr *list_attr(Onnx *cx, const ONode *n, const char *name, const char *type, size_t *len) {
  *len = 0;
  const OAttr *a = typed_attr(cx, n, name, type);
  if (!a)
    return NULL;
  *len = (size_t)(strcmp(type, "INTS") == 0 ? a->nints : a->nfloats);
  if (*len > ONNX_MAX_LIST)
    graph_error(cx->g, a->path, "%sattribute '%s' is too long", node_desc(cx, n), name);
  return a;
}

/* An INTS attribute; NULL (count 0) when absent. */
static int64_t *attr_ints(Onnx *cx, const ONode *n, const char *name, int *count) {
  size_t len;
  const OAttr *a = list_attr(cx, n, name, "INTS", &len);
  *count = (int)len;
  if (!a)
    return NULL;
  int64_t *v = arena_alloc(cx->arena, (len + 1) * sizeof *v);
  if (len)
    memcpy(v, a->ints, len * sizeof *v);
  return v;
}

static double *attr_floats(Onnx *cx, const ONode *n, const char *name, int *count) {
  size_t len;
  const OAttr *a = list_attr(cx, n, name, "FLOATS", &len);
  *count = (int)len;
  if (!a)
    return NULL;
  double *v = arena_alloc(cx->arena, (len + 1) * sizeof *v);
  if (len)
    memcpy(v, a->floats, len * sizeof *v);
  return v;
}

/* GraphAttr constructors. */
static GraphAttr gattr_int(const char *name, int64_t v) {
  GraphAttr a = {0};
  a.name = name, a.kind = GA_INT, a.i = v;
  return a;
}

static GraphAttr gattr_float(const char *name, double v) {
  GraphAttr a = {0};
  a.name = name, a.kind = GA_FLOAT, a.f = v;
  return a;
}

static GraphAttr gattr_string(const char *name, const char *s) {
  GraphAttr a = {0};
  a.name = name, a.kind = GA_STRING, a.s = s;
  return a;
}

static GraphAttr gattr_ints(Onnx *cx, const char *name, int count, const int64_t *v) {
  GraphAttr a = {0};
  a.name = name, a.kind = GA_INTS, a.n = count;
  a.ints = arena_alloc(cx->arena, ((size_t)count + 1) * sizeof *a.ints);
  if (count)
    memcpy(a.ints, v, (size_t)count * sizeof *v);
  return a;
}

/* Padding as GA_INTS2 from [lo0, hi0, lo1, hi1, ...]. */
static GraphAttr gattr_pads(Onnx *cx, int pairs, const int64_t *lohi) {
  GraphAttr a = gattr_ints(cx, "padding", 2 * pairs, lohi);
  a.kind = GA_INTS2;
  a.n = pairs;
  return a;
}

/* ------------------------------------------------------------------ */
/* Building graph nodes                                                */

static int input(const ONode *n, int k) { return k < n->ninputs ? n->inputs[k] : -1; }

/* The output name of the node (NULL: a fresh name). */
static const char *out0(const ONode *n) { return n->noutputs > 0 ? n->outputs[0] : NULL; }

static int emit(Onnx *cx, const ONode *n, GraphOp op, int nin, const int *ins, int nattrs, const GraphAttr *attrs,
                const char *out) {
  const char *names[1] = {out};
  return graph_add_node(cx->g, op, n->name, nin, ins, nattrs, attrs, out ? names : NULL, n->path, n->op_type);
}

static int emit1(Onnx *cx, const ONode *n, GraphOp op, int x, const char *out) {
  return emit(cx, n, op, 1, &x, 0, NULL, out);
}

static int emit2(Onnx *cx, const ONode *n, GraphOp op, int a, int b, const char *out) {
  int ins[2] = {a, b};
  return emit(cx, n, op, 2, ins, 0, NULL, out);
}

/* A rank-0 constant of type t. */
static int scalar_const(Onnx *cx, const ONode *n, ElemType t, double v) {
  uint8_t buf[8];
  store_double(buf, t, 0, v);
  return graph_add_const(cx->g, fresh_name(cx), t, 0, NULL, buf, n->path);
}

/* x converted to type t (x itself when it already has it). */
static int as_type(Onnx *cx, const ONode *n, int x, ElemType t) {
  if (value(cx, x)->type == t)
    return x;
  GraphAttr to = gattr_string("to", elem_type_name(t));
  return emit(cx, n, GOP_CAST, 1, &x, 1, &to, NULL);
}

static AffineExpr *dim_mul(Onnx *cx, AffineExpr *a, AffineExpr *b) {
  int64_t x, y;
  if (graph_dim_value(a, &x) && graph_dim_value(b, &y))
    return graph_dim_const(cx->g, x * y);
  if (graph_dim_value(a, &x) && x == 1)
    return b;
  if (graph_dim_value(b, &y) && y == 1)
    return a;
  return affine_binary(cx->arena, AE_MUL, a, b);
}

/* The product of dims [from, to) of a value's shape. */
static AffineExpr *dims_product(Onnx *cx, const GraphValue *v, int from, int to) {
  AffineExpr *p = graph_dim_const(cx->g, 1);
  for (int i = from; i < to; i++)
    p = dim_mul(cx, p, v->shape[i]);
  return p;
}

/* A 1-D i64 constant holding a shape, symbolic where the dims are. */
static int shape_const(Onnx *cx, const ONode *n, int rank, AffineExpr **dims) {
  int64_t *ints = arena_alloc(cx->arena, ((size_t)rank + 1) * sizeof *ints);
  bool all_static = true;
  for (int i = 0; i < rank; i++)
    all_static &= graph_dim_value(dims[i], &ints[i]);
  if (!all_static)
    return graph_add_sym_const(cx->g, fresh_name(cx), rank, dims, false, n->path);
  uint8_t *buf = arena_alloc(cx->arena, (size_t)rank * 8 + 1);
  for (int i = 0; i < rank; i++)
    store_int(buf, TY_I64, i, ints[i]);
  int64_t len = rank;
  return graph_add_const(cx->g, fresh_name(cx), TY_I64, 1, &len, buf, n->path);
}

/* A tensor of type t and shape dims whose every element is its index along
 * `axis` times step (an iota): `step` everywhere, summed exclusively along
 * the axis at run time (a scan), for static and symbolic dims alike. Not a
 * constant of the indices: the folder would fold what is computed from
 * them, and a mask of [rows] against [rows, 1] indices would become a
 * [rows, cols] constant again. */
static int index_values(Onnx *cx, const ONode *n, ElemType t, int rank, AffineExpr **dims, int axis, int64_t step) {
  int ins[2] = {scalar_const(cx, n, t, (double)step), shape_const(cx, n, rank, dims)};
  int steps = emit(cx, n, GOP_BROADCAST, 2, ins, 0, NULL, NULL);
  GraphAttr a[4] = {gattr_int("axis", axis), gattr_int("inclusive", 0), gattr_int("reverse", 0),
                    gattr_string("combiner", "add")};
  return emit(cx, n, GOP_SCAN, 1, &steps, 4, a, NULL);
}

/* x reshaped to `dims` (a row-major reshape moves no data). */
static int reshape_to(Onnx *cx, const ONode *n, int x, int rank, AffineExpr **dims, const char *out) {
  int ins[2] = {x, shape_const(cx, n, rank, dims)};
  return emit(cx, n, GOP_RESHAPE, 2, ins, 0, NULL, out);
}

/* v (rank 1, one entry per channel) reshaped to [C, 1, ..., 1] so that it
 * broadcasts over axis 1 of a tensor of rank `rank`. */
static int per_channel(Onnx *cx, const ONode *n, int v, int rank) {
  const GraphValue *gv = value(cx, v);
  if (rank <= 2 || gv->rank != 1)
    return v;
  AffineExpr **dims = arena_alloc(cx->arena, (size_t)rank * sizeof *dims);
  dims[0] = gv->shape[0];
  for (int i = 1; i < rank - 1; i++)
    dims[i] = graph_dim_const(cx->g, 1);
  return reshape_to(cx, n, v, rank - 1, dims, NULL);
}

static int64_t normalize_axis(Onnx *cx, const ONode *n, int64_t axis, int rank, const char *path) {
  if (axis < -rank || axis >= rank)
    graph_error(cx->g, path, "%saxis %lld is out of range for rank %d", node_desc(cx, n), (long long)axis, rank);
  return axis < 0 ? axis + rank : axis;
}

static const char *attr_path(Onnx *cx, const ONode *n, const char *name) {
  const OAttr *a = find_attr(n, name);
  (void)cx;
  return a ? a->path : n->path;
}

/* ------------------------------------------------------------------ */
/* Inputs that must be constants                                       */

static void require_input(Onnx *cx, const ONode *n, int k, const char *what) {
  if (input(n, k) < 0)
    graph_error(cx->g, n->path, "%sthe input '%s' (input %d) is required", node_desc(cx, n), what, k);
}

static const GraphValue *const_input(Onnx *cx, const ONode *n, int k, const char *what) {
  require_input(cx, n, k, what);
  const GraphValue *v = value(cx, n->inputs[k]);
  if (v->kind != GV_CONST)
    graph_error(cx->g, input_path(cx, n, k),
                "%sthe %s input ('%s') must be a constant when generating code, but it is computed at run time%s",
                node_desc(cx, n), what, v->name, graph_runtime_dims_why(cx->g, n->inputs[k]));
  return v;
}

/* Element i of a constant as an integer; symbolic elements must be known. */
static int64_t const_elem_int(Onnx *cx, const ONode *n, int k, const GraphValue *v, int64_t i, const char *what) {
  if (!v->sym)
    return graph_const_i(v, i);
  int64_t x;
  if (!graph_dim_value(v->sym[i], &x))
    graph_error(cx->g, input_path(cx, n, k), "%sthe input '%s' ('%s') depends on symbolic dims; it must be a number%s",
                node_desc(cx, n), what, v->name, graph_dims_hint(cx->g, 1, &v->sym[i]));
  return x;
}

/* A constant integer input as a list (any rank, row-major). */
static int64_t *const_ints(Onnx *cx, const ONode *n, int k, const char *what, int *count) {
  const GraphValue *v = const_input(cx, n, k, what);
  if (elem_type_is_float(v->type) || v->type == TY_I1)
    graph_error(cx->g, input_path(cx, n, k), "%sthe input '%s' ('%s') must be an integer tensor, not %s",
                node_desc(cx, n), what, v->name, elem_type_name(v->type));
  if (v->count > ONNX_MAX_LIST)
    graph_error(cx->g, input_path(cx, n, k), "%sthe input '%s' is too long", node_desc(cx, n), what);
  int64_t *out = arena_alloc(cx->arena, ((size_t)v->count + 1) * sizeof *out);
  for (int64_t i = 0; i < v->count; i++)
    out[i] = const_elem_int(cx, n, k, v, i, what);
  *count = (int)v->count;
  return out;
}

static double const_scalar(Onnx *cx, const ONode *n, int k, const char *what) {
  const GraphValue *v = const_input(cx, n, k, what);
  if (v->count != 1)
    graph_error(cx->g, input_path(cx, n, k), "%sthe input '%s' ('%s') must hold one element, not %lld",
                node_desc(cx, n), what, v->name, (long long)v->count);
  if (v->sym)
    return (double)const_elem_int(cx, n, k, v, 0, what);
  return graph_const_f(v, 0);
}

/* A constant scalar input as an integer: integer types exactly (beyond
 * 2^53 too); a float must be finite and within int64's range, and is
 * truncated toward zero as ONNX Runtime casts it. A plain cast of such a
 * double is undefined in C: depth 1e300 must be an error, not a number. */
static int64_t const_int_scalar(Onnx *cx, const ONode *n, int k, const char *what) {
  const GraphValue *v = const_input(cx, n, k, what);
  if (v->count != 1)
    graph_error(cx->g, input_path(cx, n, k), "%sthe input '%s' ('%s') must hold one element, not %lld",
                node_desc(cx, n), what, v->name, (long long)v->count);
  if (!elem_type_is_float(v->type))
    return const_elem_int(cx, n, k, v, 0, what);
  double d = graph_const_f(v, 0);
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
    graph_error(cx->g, input_path(cx, n, k), "%sthe input '%s' ('%s') is %g, not an integer within 64 bits",
                node_desc(cx, n), what, v->name, d);
  return (int64_t)d;
}

/* A list that is an attribute before opset `since` and an optional input
 * (number k) from it on. Returns false when it is absent. */
static bool ints_attr_or_input(Onnx *cx, const ONode *n, const char *name, int64_t since, int k, int64_t **out,
                               int *count) {
  *out = NULL, *count = 0;
  if (cx->opset < since) {
    *out = attr_ints(cx, n, name, count);
    return *out != NULL;
  }
  if (input(n, k) < 0)
    return false;
  *out = const_ints(cx, n, k, name, count);
  return true;
}

/* ------------------------------------------------------------------ */
/* Importers: elementwise                                              */

/* One graph op; the float attributes alpha, beta, gamma pass through (the
 * graph ops' defaults are ONNX's). */
static void import_unary(Onnx *cx, ONode *n) {
  static const char *const names[] = {"alpha", "beta", "gamma"};
  GraphAttr attrs[3];
  int na = 0;
  for (int i = 0; i < 3; i++)
    if (has_attr(n, names[i]))
      attrs[na++] = gattr_float(names[i], attr_float(cx, n, names[i], 0));
  emit(cx, n, n->entry->gop, 1, n->inputs, na, attrs, out0(n));
}

static void import_binary(Onnx *cx, ONode *n) {
  /* before opset 7, broadcasting was asked for and aligned at an axis */
  if (cx->opset < 7 && attr_int(cx, n, "broadcast", 0) != 0)
    graph_error(cx->g, attr_path(cx, n, "broadcast"), "%sthe opset < 7 'broadcast' attribute is not supported",
                node_desc(cx, n));
  emit(cx, n, n->entry->gop, n->ninputs, n->inputs, 0, NULL, out0(n));
}

/* BitShift: direction LEFT or RIGHT (unsigned types; build.c checks). */
static void import_bitshift(Onnx *cx, ONode *n) {
  const char *d = attr_string(cx, n, "direction", "");
  if (strcmp(d, "LEFT") != 0 && strcmp(d, "RIGHT") != 0)
    graph_error(cx->g, has_attr(n, "direction") ? attr_path(cx, n, "direction") : n->path,
                "%sBitShift needs direction \"LEFT\" or \"RIGHT\"", node_desc(cx, n));
  emit(cx, n, d[0] == 'L' ? GOP_SHIFT_LEFT : GOP_SHIFT_RIGHT, 2, n->inputs, 0, NULL, out0(n));
}

/* LessOrEqual, GreaterOrEqual: the strict comparison or equality (a NaN
 * compares false, as in C). */
static void import_or_equal(Onnx *cx, ONode *n) {
  GraphOp strict = strcmp(n->op_type, "LessOrEqual") == 0 ? GOP_LESS : GOP_GREATER;
  int ins[3] = {emit(cx, n, strict, 2, n->inputs, 0, NULL, NULL), scalar_const(cx, n, TY_I1, 1),
                emit(cx, n, GOP_EQUAL, 2, n->inputs, 0, NULL, NULL)};
  emit(cx, n, GOP_WHERE, 3, ins, 0, NULL, out0(n));
}

/* Pow's exponent may have another type than its base (opset 12+); the
 * result has the base's type. An integer base is raised in double and
 * converted back, as the ONNX reference (NumPy) does: exact while the
 * result fits in 53 bits. */
static void import_pow(Onnx *cx, ONode *n) {
  int base = n->inputs[0];
  ElemType t = value(cx, base)->type;
  if (elem_type_is_float(t)) {
    emit2(cx, n, GOP_POW, base, as_type(cx, n, n->inputs[1], t), out0(n));
    return;
  }
  int p = emit2(cx, n, GOP_POW, as_type(cx, n, base, TY_F64), as_type(cx, n, n->inputs[1], TY_F64), NULL);
  GraphAttr to = gattr_string("to", elem_type_name(t));
  emit(cx, n, GOP_CAST, 1, &p, 1, &to, out0(n));
}

static void import_copy(Onnx *cx, ONode *n) { emit1(cx, n, GOP_COPY, n->inputs[0], out0(n)); }

/* Dropout at inference is the identity and its mask all true; so is
 * training mode with a ratio of 0 (a constant). Training mode with another
 * ratio draws random numbers, which lgen does not. */
static void import_dropout(Onnx *cx, ONode *n) {
  if (input(n, 2) >= 0 && const_scalar(cx, n, 2, "training_mode") != 0 &&
      (input(n, 1) < 0 || const_scalar(cx, n, 1, "ratio") != 0))
    graph_error(cx->g, input_path(cx, n, 2), "%straining mode is not supported (but with a ratio of 0)",
                node_desc(cx, n));
  import_copy(cx, n);
  if (n->noutputs > 1 && n->outputs[1] && n->outputs[1][0]) { /* the mask: x's shape, all true */
    int ins[2] = {scalar_const(cx, n, TY_I1, 1), emit(cx, n, GOP_SHAPE, 1, n->inputs, 0, NULL, NULL)};
    emit(cx, n, GOP_BROADCAST, 2, ins, 0, NULL, n->outputs[1]);
  }
}

/* Max, Min, Sum, Mean: a chain of binary ops over the inputs. */
static void import_variadic(Onnx *cx, ONode *n) {
  bool mean = strcmp(n->op_type, "Mean") == 0;
  GraphOp op = mean ? GOP_ADD : n->entry->gop;
  if (n->ninputs == 1) {
    import_copy(cx, n);
    return;
  }
  int acc = n->inputs[0];
  for (int i = 1; i < n->ninputs; i++) {
    bool last = i == n->ninputs - 1 && !mean;
    acc = emit2(cx, n, op, acc, n->inputs[i], last ? out0(n) : NULL);
  }
  if (mean)
    emit2(cx, n, GOP_DIV, acc, scalar_const(cx, n, value(cx, acc)->type, n->ninputs), out0(n));
}

static void import_cast(Onnx *cx, ONode *n) {
  const OAttr *a = typed_attr(cx, n, "to", "INT");
  if (!a)
    graph_error(cx->g, n->path, "%sthe attribute 'to' is required", node_desc(cx, n));
  ElemType t = onnx_type_at(cx, attr_int(cx, n, "to", 0), a->path, "the target type of Cast");
  GraphAttr to = gattr_string("to", elem_type_name(t));
  emit(cx, n, GOP_CAST, 1, n->inputs, 1, &to, out0(n));
}

/* CastLike: a cast to the second input's type. */
static void import_cast_like(Onnx *cx, ONode *n) {
  GraphAttr to = gattr_string("to", elem_type_name(value(cx, n->inputs[1])->type));
  emit(cx, n, GOP_CAST, 1, n->inputs, 1, &to, out0(n));
}

/* Not, And, Or on i1 as selects: not x = x ? 0 : 1, a and b = a ? b : 0,
 * a or b = a ? 1 : b. */
static void import_logic(Onnx *cx, ONode *n) {
  int a = n->inputs[0];
  if (value(cx, a)->type != TY_I1)
    graph_error(cx->g, input_path(cx, n, 0), "%sthe input '%s' must be bool, not %s", node_desc(cx, n),
                value(cx, a)->name, elem_type_name(value(cx, a)->type));
  int ins[3] = {a, -1, -1};
  if (strcmp(n->op_type, "Not") == 0)
    ins[1] = scalar_const(cx, n, TY_I1, 0), ins[2] = scalar_const(cx, n, TY_I1, 1);
  else if (strcmp(n->op_type, "And") == 0)
    ins[1] = n->inputs[1], ins[2] = scalar_const(cx, n, TY_I1, 0);
  else
    ins[1] = scalar_const(cx, n, TY_I1, 1), ins[2] = n->inputs[1];
  emit(cx, n, GOP_WHERE, 3, ins, 0, NULL, out0(n));
}

/* Clip: bounds are attributes before opset 11, optional inputs after. */
static void import_clip(Onnx *cx, ONode *n) {
  GraphAttr attrs[2];
  int na = 0;
  if (cx->opset < 11) {
    if (has_attr(n, "min"))
      attrs[na++] = gattr_float("min", attr_float(cx, n, "min", 0));
    if (has_attr(n, "max"))
      attrs[na++] = gattr_float("max", attr_float(cx, n, "max", 0));
    emit(cx, n, GOP_CLIP, 1, n->inputs, na, attrs, out0(n));
    return;
  }
  /* constant bounds become clip's attributes; computed ones max and min */
  static const char *const names[2] = {"min", "max"};
  int x = n->inputs[0], computed[2] = {-1, -1};
  for (int k = 1; k <= 2; k++) {
    int b = input(n, k);
    if (b >= 0 && value(cx, b)->kind == GV_CONST)
      attrs[na++] = gattr_float(names[k - 1], const_scalar(cx, n, k, names[k - 1]));
    else
      computed[k - 1] = b;
  }
  bool more = computed[0] >= 0 || computed[1] >= 0;
  if (na > 0 || !more)
    x = emit(cx, n, GOP_CLIP, 1, &x, na, attrs, more ? NULL : out0(n));
  if (computed[0] >= 0)
    x = emit2(cx, n, GOP_MAX, x, computed[0], computed[1] >= 0 ? NULL : out0(n));
  if (computed[1] >= 0)
    emit2(cx, n, GOP_MIN, x, computed[1], out0(n));
}

/* Softmax and LogSoftmax. Before opset 13 the input is seen as 2-D,
 * [prod(dims before axis), prod(the rest)], and normalised along its rows. */
static void import_softmax(Onnx *cx, ONode *n) {
  bool log = strcmp(n->op_type, "LogSoftmax") == 0;
  int x = n->inputs[0];
  const GraphValue *xv = value(cx, x);
  int rank = xv->rank;
  int64_t axis = attr_int(cx, n, "axis", cx->opset < 13 ? 1 : -1);
  if (rank == 0)
    graph_error(cx->g, input_path(cx, n, 0), "%sthe input must have rank 1 or more", node_desc(cx, n));
  axis = normalize_axis(cx, n, axis, rank, attr_path(cx, n, "axis"));
  if (cx->opset >= 13 || axis == rank - 1) {
    graph_softmax(cx->g, x, axis, log, out0(n), n->path, n->op_type);
    return;
  }
  AffineExpr *dims2[2] = {dims_product(cx, xv, 0, (int)axis), dims_product(cx, xv, (int)axis, rank)};
  AffineExpr **orig = xv->shape;
  int x2 = reshape_to(cx, n, x, 2, dims2, NULL);
  int y2 = graph_softmax(cx->g, x2, 1, log, NULL, n->path, n->op_type);
  reshape_to(cx, n, y2, rank, orig, out0(n));
}

/* ------------------------------------------------------------------ */
/* Importers: linear algebra and NN                                    */

static void import_einsum(Onnx *cx, ONode *n) {
  const char *eq = attr_string(cx, n, "equation", NULL);
  if (!eq)
    graph_error(cx->g, n->path, "%sthe attribute 'equation' is required", node_desc(cx, n));
  GraphAttr a = gattr_string("equation", eq);
  emit(cx, n, GOP_EINSUM, n->ninputs, n->inputs, 1, &a, out0(n));
}

static int transpose_2d(Onnx *cx, const ONode *n, int x) {
  int64_t perm[2] = {1, 0};
  GraphAttr a = gattr_ints(cx, "perm", 2, perm);
  return emit(cx, n, GOP_TRANSPOSE, 1, &x, 1, &a, NULL);
}

/* Gemm: alpha * A' B' + beta * C, skipping the multiplications by 1. */
static void import_gemm(Onnx *cx, ONode *n) {
  int a = n->inputs[0], b = n->inputs[1], c = input(n, 2);
  double alpha = attr_float(cx, n, "alpha", 1.0), beta = attr_float(cx, n, "beta", 1.0);
  if (attr_int(cx, n, "transA", 0))
    a = transpose_2d(cx, n, a);
  if (attr_int(cx, n, "transB", 0))
    b = transpose_2d(cx, n, b);
  bool with_c = c >= 0 && beta != 0.0;
  bool scaled = alpha != 1.0;
  int y = emit2(cx, n, GOP_MATMUL, a, b, scaled || with_c ? NULL : out0(n));
  ElemType t = value(cx, y)->type;
  if (scaled)
    y = emit2(cx, n, GOP_MUL, y, scalar_const(cx, n, t, alpha), with_c ? NULL : out0(n));
  if (!with_c)
    return;
  if (beta != 1.0)
    c = emit2(cx, n, GOP_MUL, c, scalar_const(cx, n, value(cx, c)->type, beta), NULL);
  emit2(cx, n, GOP_ADD, y, c, out0(n));
}

/* Spatial attributes of Conv and the pools: strides and dilations (default
 * 1 each) and the explicit padding that pads / auto_pad give. */
typedef struct {
  int r;               /* spatial dims */
  int64_t *kernel;     /* r window extents */
  int64_t *strides;
  int64_t *dilations;
  int64_t *padding;    /* 2r: [lo0, hi0, lo1, hi1, ...] */
} Spatial;

static int64_t *spatial_ints(Onnx *cx, const ONode *n, const char *name, int r) {
  int count;
  int64_t *v = attr_ints(cx, n, name, &count);
  if (!v) {
    v = arena_alloc(cx->arena, (size_t)r * sizeof *v);
    for (int i = 0; i < r; i++)
      v[i] = 1;
    return v;
  }
  if (count != r)
    graph_error(cx->g, attr_path(cx, n, name), "%s'%s' has %d values, but the input has %d spatial dims",
                node_desc(cx, n), name, count, r);
  for (int i = 0; i < r; i++)
    if (v[i] < 1)
      graph_error(cx->g, attr_path(cx, n, name), "%s'%s' values must be positive", node_desc(cx, n), name);
  return v;
}

static int64_t static_dim(Onnx *cx, const ONode *n, int x, int d, const char *why) {
  int64_t e;
  if (!graph_dim_value(value(cx, x)->shape[d], &e))
    graph_error(cx->g, input_path(cx, n, 0), "%sdim %d of '%s' is symbolic, but %s needs it static%s",
                node_desc(cx, n), d, value(cx, x)->name, why, graph_dims_hint(cx->g, 1, &value(cx, x)->shape[d]));
  return e;
}

static void spatial_padding(Onnx *cx, const ONode *n, int x, Spatial *s) {
  const char *auto_pad = attr_string(cx, n, "auto_pad", "NOTSET");
  s->padding = arena_alloc(cx->arena, (size_t)(2 * s->r + 1) * sizeof *s->padding);
  if (strcmp(auto_pad, "NOTSET") == 0 || auto_pad[0] == 0) {
    int count;
    int64_t *pads = attr_ints(cx, n, "pads", &count);
    if (pads && count != 2 * s->r)
      graph_error(cx->g, attr_path(cx, n, "pads"), "%s'pads' has %d values, but %d spatial dims need %d",
                  node_desc(cx, n), count, s->r, 2 * s->r);
    for (int i = 0; pads && i < s->r; i++) {
      if (pads[i] < 0 || pads[i + s->r] < 0)
        graph_error(cx->g, attr_path(cx, n, "pads"), "%snegative pads are not supported", node_desc(cx, n));
      s->padding[2 * i] = pads[i];
      s->padding[2 * i + 1] = pads[i + s->r];
    }
    return;
  }
  if (strcmp(auto_pad, "VALID") == 0)
    return;
  bool upper = strcmp(auto_pad, "SAME_UPPER") == 0;
  if (!upper && strcmp(auto_pad, "SAME_LOWER") != 0)
    graph_error(cx->g, attr_path(cx, n, "auto_pad"), "%sunknown auto_pad '%s'", node_desc(cx, n), auto_pad);
  /* SAME: the output extent is ceil(in / stride); the padding that makes it
   * so is split evenly, the odd element at the end (UPPER) or start (LOWER). */
  for (int i = 0; i < s->r; i++) {
    int64_t in = static_dim(cx, n, x, 2 + i, "auto_pad");
    int64_t out = (in + s->strides[i] - 1) / s->strides[i];
    int64_t total = (out - 1) * s->strides[i] + (s->kernel[i] - 1) * s->dilations[i] + 1 - in;
    if (total < 0)
      total = 0;
    int64_t small = total / 2, large = total - small;
    s->padding[2 * i] = upper ? small : large;
    s->padding[2 * i + 1] = upper ? large : small;
  }
}

static int spatial_rank(Onnx *cx, const ONode *n, int x) {
  int rank = value(cx, x)->rank;
  if (rank < 3)
    graph_error(cx->g, input_path(cx, n, 0), "%sthe input must have rank 3 or more (N, C, spatial...), not %d",
                node_desc(cx, n), rank);
  return rank - 2;
}

static void import_conv(Onnx *cx, ONode *n) {
  int x = n->inputs[0], w = n->inputs[1];
  Spatial s = {0};
  s.r = spatial_rank(cx, n, x);
  const GraphValue *wv = value(cx, w);
  if (wv->rank != s.r + 2)
    graph_error(cx->g, input_path(cx, n, 1), "%sthe filter has rank %d; the input's rank %d needs %d",
                node_desc(cx, n), wv->rank, s.r + 2, s.r + 2);
  int count;
  int64_t *ks = attr_ints(cx, n, "kernel_shape", &count);
  if (ks && count != s.r)
    graph_error(cx->g, attr_path(cx, n, "kernel_shape"), "%s'kernel_shape' has %d values, but %d spatial dims",
                node_desc(cx, n), count, s.r);
  s.kernel = arena_alloc(cx->arena, (size_t)s.r * sizeof *s.kernel);
  for (int i = 0; i < s.r; i++) {
    int64_t k;
    bool known = graph_dim_value(wv->shape[2 + i], &k);
    if (ks && known && ks[i] != k)
      graph_error(cx->g, attr_path(cx, n, "kernel_shape"), "%skernel_shape[%d] = %lld, but the filter's extent is %lld",
                  node_desc(cx, n), i, (long long)ks[i], (long long)k);
    s.kernel[i] = known ? k : ks ? ks[i] : -1;
  }
  s.strides = spatial_ints(cx, n, "strides", s.r);
  s.dilations = spatial_ints(cx, n, "dilations", s.r);
  const char *auto_pad = attr_string(cx, n, "auto_pad", "NOTSET");
  if (strncmp(auto_pad, "SAME", 4) == 0)
    for (int i = 0; i < s.r; i++)
      if (s.kernel[i] < 0)
        graph_error(cx->g, input_path(cx, n, 1), "%sauto_pad needs static filter extents", node_desc(cx, n));
  spatial_padding(cx, n, x, &s);
  GraphAttr attrs[4] = {gattr_ints(cx, "strides", s.r, s.strides), gattr_ints(cx, "dilations", s.r, s.dilations),
                        gattr_pads(cx, s.r, s.padding), gattr_int("group", attr_int(cx, n, "group", 1))};
  int nin = input(n, 2) >= 0 ? 3 : 2;
  emit(cx, n, GOP_CONV, nin, n->inputs, 4, attrs, out0(n));
}

/* MaxPool and AveragePool over the NCHW-style layout with r spatial dims. */
static void import_pool(Onnx *cx, ONode *n) {
  bool max = strcmp(n->op_type, "MaxPool") == 0;
  int x = n->inputs[0];
  Spatial s = {0};
  s.r = spatial_rank(cx, n, x);
  int count;
  s.kernel = attr_ints(cx, n, "kernel_shape", &count);
  if (!s.kernel)
    graph_error(cx->g, n->path, "%sthe attribute 'kernel_shape' is required", node_desc(cx, n));
  if (count != s.r)
    graph_error(cx->g, attr_path(cx, n, "kernel_shape"), "%s'kernel_shape' has %d values, but %d spatial dims",
                node_desc(cx, n), count, s.r);
  s.strides = spatial_ints(cx, n, "strides", s.r);
  s.dilations = spatial_ints(cx, n, "dilations", s.r);
  spatial_padding(cx, n, x, &s);
  GraphAttr attrs[6] = {gattr_ints(cx, "window", s.r, s.kernel), gattr_ints(cx, "strides", s.r, s.strides),
                        gattr_ints(cx, "dilations", s.r, s.dilations), gattr_pads(cx, s.r, s.padding),
                        gattr_int("ceil_mode", attr_int(cx, n, "ceil_mode", 0)),
                        gattr_int("count_include_pad", attr_int(cx, n, "count_include_pad", 0))};
  int y = emit(cx, n, max ? GOP_POOLING_NCHW_MAX : GOP_POOLING_NCHW_AVG, 1, &x, max ? 5 : 6, attrs, out0(n));
  if (max && n->noutputs > 1 && n->outputs[1]) { /* Indices: the flat position of each maximum */
    int ins[2] = {x, y};
    GraphAttr ia[5] = {attrs[0], attrs[1], attrs[2], attrs[3],
                       gattr_int("storage_order", attr_int(cx, n, "storage_order", 0))};
    emit(cx, n, GOP_MAX_POOL_INDEX, 2, ins, 5, ia, n->outputs[1]);
  }
}

static int64_t *axes_range(Onnx *cx, int from, int to) {
  int64_t *axes = arena_alloc(cx->arena, (size_t)(to - from + 1) * sizeof *axes);
  for (int i = from; i < to; i++)
    axes[i - from] = i;
  return axes;
}

static int reduce(Onnx *cx, const ONode *n, GraphOp op, int x, int naxes, const int64_t *axes, bool keepdims,
                  const char *out) {
  GraphAttr attrs[2] = {gattr_int("keepdims", keepdims), gattr_ints(cx, "axes", naxes, axes)};
  return emit(cx, n, op, 1, &x, naxes > 0 ? 2 : 1, attrs, out);
}

static void import_global_pool(Onnx *cx, ONode *n) {
  int x = n->inputs[0];
  int r = spatial_rank(cx, n, x);
  GraphOp op = strcmp(n->op_type, "GlobalMaxPool") == 0 ? GOP_REDUCE_MAX : GOP_REDUCE_MEAN;
  reduce(cx, n, op, x, r, axes_range(cx, 2, r + 2), true, out0(n));
}

/* (x - mean) / sqrt(var + eps) over the axes; the mean and 1 / sqrt(var +
 * eps) (keepdims) are named mean_out and inv_std_out when those are not
 * NULL (LayerNormalization's optional outputs). */
static int normalize_over(Onnx *cx, const ONode *n, int x, int naxes, const int64_t *axes, double eps,
                          const char *mean_out, const char *inv_std_out) {
  ElemType t = value(cx, x)->type;
  int mean = reduce(cx, n, GOP_REDUCE_MEAN, x, naxes, axes, true, mean_out);
  int d = emit2(cx, n, GOP_SUB, x, mean, NULL);
  int var = reduce(cx, n, GOP_REDUCE_MEAN, emit2(cx, n, GOP_MUL, d, d, NULL), naxes, axes, true, NULL);
  int sd = emit1(cx, n, GOP_SQRT, emit2(cx, n, GOP_ADD, var, scalar_const(cx, n, t, eps), NULL), NULL);
  if (inv_std_out)
    emit2(cx, n, GOP_DIV, scalar_const(cx, n, t, 1.0), sd, inv_std_out);
  return emit2(cx, n, GOP_DIV, d, sd, NULL);
}

/* y * scale + bias, the last op named after the node's output. */
static void scale_and_shift(Onnx *cx, const ONode *n, int y, int scale, int bias) {
  if (scale >= 0)
    y = emit2(cx, n, GOP_MUL, y, scale, bias >= 0 ? NULL : out0(n));
  if (bias >= 0)
    y = emit2(cx, n, GOP_ADD, y, bias, out0(n));
  if (scale < 0 && bias < 0)
    emit1(cx, n, GOP_COPY, y, out0(n));
}

/* Inference: y = x * s + t, s = scale / sqrt(var + eps), t = B - mean * s,
 * per channel (axis 1). s and t come from constants in the usual model, so
 * the builder folds them. */
static void import_batchnorm(Onnx *cx, ONode *n) {
  if (attr_int(cx, n, "training_mode", 0) != 0)
    graph_error(cx->g, attr_path(cx, n, "training_mode"), "%straining mode is not supported", node_desc(cx, n));
  int x = n->inputs[0];
  const GraphValue *xv = value(cx, x);
  if (xv->rank < 2)
    graph_error(cx->g, input_path(cx, n, 0), "%sthe input must have rank 2 or more (N, C, ...)", node_desc(cx, n));
  ElemType t = xv->type;
  int rank = xv->rank;
  int scale = as_type(cx, n, n->inputs[1], t), bias = as_type(cx, n, n->inputs[2], t);
  int mean = as_type(cx, n, n->inputs[3], t), var = as_type(cx, n, n->inputs[4], t);
  double eps = attr_float(cx, n, "epsilon", 1e-5);
  int sd = emit1(cx, n, GOP_SQRT, emit2(cx, n, GOP_ADD, var, scalar_const(cx, n, t, eps), NULL), NULL);
  int s = emit2(cx, n, GOP_DIV, scale, sd, NULL);
  int shift = emit2(cx, n, GOP_SUB, bias, emit2(cx, n, GOP_MUL, mean, s, NULL), NULL);
  s = per_channel(cx, n, s, rank);
  shift = per_channel(cx, n, shift, rank);
  emit2(cx, n, GOP_ADD, emit2(cx, n, GOP_MUL, x, s, NULL), shift, out0(n));
}

/* In type `wide` (not x's type t): y * scale + bias (either may be absent,
 * -1), rounded to t once, as the node's output. */
static void scale_and_shift_wide(Onnx *cx, const ONode *n, int y, int scale, int bias, ElemType wide, ElemType t) {
  if (scale >= 0)
    y = emit2(cx, n, GOP_MUL, y, as_type(cx, n, scale, wide), NULL);
  if (bias >= 0)
    y = emit2(cx, n, GOP_ADD, y, as_type(cx, n, bias, wide), NULL);
  GraphAttr to = gattr_string("to", elem_type_name(t));
  emit(cx, n, GOP_CAST, 1, &y, 1, &to, out0(n));
}

/* LayerNormalization: the statistics (Mean and InvStdDev) and the
 * normalised x in stash_type (1, f32, by default: an f16 x then no longer
 * overflows in its squares from |x - mean| of 256 on); where that is wider
 * than x, the scale and bias too, rounded to x's type once (ONNX's
 * function body rounds the normalised x first; ONNX Runtime does not). */
static void import_layernorm(Onnx *cx, ONode *n) {
  int x = n->inputs[0];
  int rank = value(cx, x)->rank;
  ElemType t = value(cx, x)->type;
  int64_t axis = normalize_axis(cx, n, attr_int(cx, n, "axis", -1), rank, attr_path(cx, n, "axis"));
  double eps = attr_float(cx, n, "epsilon", 1e-5);
  ElemType stash = has_attr(n, "stash_type") || cx->opset >= 17
                       ? onnx_type_at(cx, attr_int(cx, n, "stash_type", 1), attr_path(cx, n, "stash_type"),
                                      "the stash_type of LayerNormalization")
                       : t;
  /* outputs Mean and InvStdDev (optional) are the statistics over the
   * normalised axes, kept as dims of 1 */
  int y = normalize_over(cx, n, as_type(cx, n, x, stash), rank - (int)axis, axes_range(cx, (int)axis, rank), eps,
                         n->noutputs > 1 ? n->outputs[1] : NULL, n->noutputs > 2 ? n->outputs[2] : NULL);
  if (stash == TY_F32 && t == TY_F16)
    scale_and_shift_wide(cx, n, y, n->inputs[1], input(n, 2), stash, t);
  else
    scale_and_shift(cx, n, as_type(cx, n, y, t), n->inputs[1], input(n, 2));
}

/* InstanceNormalization: for f16 x in f32 (as ONNX Runtime computes it),
 * rounded to f16 once. */
static void import_instancenorm(Onnx *cx, ONode *n) {
  int x = n->inputs[0];
  int r = spatial_rank(cx, n, x);
  ElemType t = value(cx, x)->type;
  double eps = attr_float(cx, n, "epsilon", 1e-5);
  int y = normalize_over(cx, n, as_type(cx, n, x, t == TY_F16 ? TY_F32 : t), r, axes_range(cx, 2, r + 2), eps, NULL,
                         NULL);
  int rank = r + 2, scale = per_channel(cx, n, n->inputs[1], rank), bias = per_channel(cx, n, n->inputs[2], rank);
  if (t == TY_F16)
    scale_and_shift_wide(cx, n, y, scale, bias, TY_F32, t);
  else
    scale_and_shift(cx, n, y, scale, bias);
}

/* ------------------------------------------------------------------ */
/* Importers: reductions                                               */

/* ReduceX: axes is an attribute before opset 18 (ReduceSum: 13) and an
 * optional input after; then an absent or empty list with
 * noop_with_empty_axes = 1 is the identity. */
static void import_reduce(Onnx *cx, ONode *n) {
  bool sum = strcmp(n->op_type, "ReduceSum") == 0;
  bool l2 = strcmp(n->op_type, "ReduceL2") == 0;
  bool square = l2 || strcmp(n->op_type, "ReduceSumSquare") == 0;
  int64_t since = sum ? 13 : 18;
  int64_t *axes;
  int naxes;
  ints_attr_or_input(cx, n, "axes", since, 1, &axes, &naxes);
  bool keepdims = attr_int(cx, n, "keepdims", 1) != 0;
  int x = n->inputs[0];
  if (naxes == 0 && cx->opset >= since && attr_int(cx, n, "noop_with_empty_axes", 0)) {
    emit1(cx, n, GOP_COPY, x, out0(n));
    return;
  }
  if (square)
    x = emit2(cx, n, GOP_MUL, x, x, NULL);
  int y = reduce(cx, n, n->entry->gop, x, naxes, axes, keepdims, l2 ? NULL : out0(n));
  if (l2)
    emit1(cx, n, GOP_SQRT, y, out0(n));
}

/* ReduceL1 (sum of |x|), ReduceLogSum (log of the sum) and
 * ReduceLogSumExp, as m + log(sum(exp(x - m))) with m the max over the
 * axes (exp cannot overflow); an infinite max (a row of -inf, or +inf in
 * it) shifts by 0 instead, which gives log(sum(exp(x))) there: -inf and
 * +inf, not NaN. The axes are an attribute before opset 18. */
static void import_reduce_log(Onnx *cx, ONode *n) {
  bool l1 = strcmp(n->op_type, "ReduceL1") == 0, lse = strcmp(n->op_type, "ReduceLogSumExp") == 0;
  int64_t *axes;
  int naxes;
  ints_attr_or_input(cx, n, "axes", 18, 1, &axes, &naxes);
  bool keepdims = attr_int(cx, n, "keepdims", 1) != 0;
  int x = n->inputs[0];
  ElemType t = value(cx, x)->type;
  if (naxes == 0 && cx->opset >= 18 && attr_int(cx, n, "noop_with_empty_axes", 0)) {
    emit1(cx, n, GOP_COPY, x, out0(n));
    return;
  }
  if (l1) {
    reduce(cx, n, GOP_REDUCE_SUM, emit1(cx, n, GOP_ABS, x, NULL), naxes, axes, keepdims, out0(n));
    return;
  }
  if (!lse) {
    emit1(cx, n, GOP_LOG, reduce(cx, n, GOP_REDUCE_SUM, x, naxes, axes, keepdims, NULL), out0(n));
    return;
  }
  int m = reduce(cx, n, GOP_REDUCE_MAX, x, naxes, axes, true, NULL);
  int inf = emit2(cx, n, GOP_EQUAL, emit1(cx, n, GOP_ABS, m, NULL), scalar_const(cx, n, t, INFINITY), NULL);
  int shift_in[3] = {inf, scalar_const(cx, n, t, 0), m};
  int shift = emit(cx, n, GOP_WHERE, 3, shift_in, 0, NULL, NULL);
  int e = emit1(cx, n, GOP_EXP, emit2(cx, n, GOP_SUB, x, shift, NULL), NULL);
  int l = emit1(cx, n, GOP_LOG, reduce(cx, n, GOP_REDUCE_SUM, e, naxes, axes, keepdims, NULL), NULL);
  if (!keepdims) /* the shift without the reduced dims: a max over dims of 1 */
    shift = reduce(cx, n, GOP_REDUCE_MAX, shift, naxes, axes, false, NULL);
  emit2(cx, n, GOP_ADD, l, shift, out0(n));
}

/* ------------------------------------------------------------------ */
/* Importers: layout                                                   */

static void import_transpose(Onnx *cx, ONode *n) {
  int count;
  int64_t *perm = attr_ints(cx, n, "perm", &count);
  GraphAttr a = gattr_ints(cx, "perm", count, perm);
  emit(cx, n, GOP_TRANSPOSE, 1, n->inputs, perm ? 1 : 0, &a, out0(n));
}

static void import_reshape(Onnx *cx, ONode *n) {
  if (cx->opset < 5)
    graph_error(cx->g, n->path, "%sReshape before opset 5 is not supported", node_desc(cx, n));
  const_input(cx, n, 1, "shape");
  GraphAttr a = gattr_int("allowzero", attr_int(cx, n, "allowzero", 0));
  emit(cx, n, GOP_RESHAPE, 2, n->inputs, 1, &a, out0(n));
}

static void import_flatten(Onnx *cx, ONode *n) {
  int x = n->inputs[0];
  const GraphValue *xv = value(cx, x);
  int64_t axis = attr_int(cx, n, "axis", 1);
  if (axis < -xv->rank || axis > xv->rank)
    graph_error(cx->g, attr_path(cx, n, "axis"), "%saxis %lld is out of range for rank %d", node_desc(cx, n),
                (long long)axis, xv->rank);
  if (axis < 0)
    axis += xv->rank;
  AffineExpr *dims[2] = {dims_product(cx, xv, 0, (int)axis), dims_product(cx, xv, (int)axis, xv->rank)};
  reshape_to(cx, n, x, 2, dims, out0(n));
}

static void import_squeeze(Onnx *cx, ONode *n) {
  int x = n->inputs[0];
  const GraphValue *xv = value(cx, x);
  int64_t *axes;
  int naxes;
  bool given = ints_attr_or_input(cx, n, "axes", 13, 1, &axes, &naxes);
  bool *drop = arena_alloc(cx->arena, (size_t)xv->rank + 1);
  const char *where = cx->opset < 13 ? attr_path(cx, n, "axes") : input_path(cx, n, 1);
  for (int i = 0; i < naxes; i++) {
    int64_t a = normalize_axis(cx, n, axes[i], xv->rank, where);
    int64_t e;
    if (!graph_dim_value(xv->shape[a], &e) || e != 1)
      graph_error(cx->g, where, "%sdim %lld of '%s' is not 1 and cannot be squeezed", node_desc(cx, n),
                  (long long)a, xv->name);
    drop[a] = true;
  }
  if (!given || naxes == 0) /* every dim known to be 1 */
    for (int i = 0; i < xv->rank; i++) {
      int64_t e;
      drop[i] = graph_dim_value(xv->shape[i], &e) && e == 1;
    }
  AffineExpr **dims = arena_alloc(cx->arena, (size_t)xv->rank * sizeof *dims + 1);
  int rank = 0;
  for (int i = 0; i < xv->rank; i++)
    if (!drop[i])
      dims[rank++] = xv->shape[i];
  reshape_to(cx, n, x, rank, dims, out0(n));
}

static void import_unsqueeze(Onnx *cx, ONode *n) {
  int x = n->inputs[0];
  const GraphValue *xv = value(cx, x);
  int64_t *axes;
  int naxes;
  if (!ints_attr_or_input(cx, n, "axes", 13, 1, &axes, &naxes))
    graph_error(cx->g, n->path, "%s'axes' is required", node_desc(cx, n));
  const char *where = cx->opset < 13 ? attr_path(cx, n, "axes") : input_path(cx, n, 1);
  int rank = xv->rank + naxes;
  if (rank > LG_MAX_RANK)
    graph_error(cx->g, where, "%sthe result's rank %d exceeds lgen's limit of %d", node_desc(cx, n), rank,
                LG_MAX_RANK);
  bool inserted[LG_MAX_RANK] = {false};
  for (int i = 0; i < naxes; i++) {
    int64_t a = normalize_axis(cx, n, axes[i], rank, where);
    if (inserted[a])
      graph_error(cx->g, where, "%saxis %lld is given twice", node_desc(cx, n), (long long)a);
    inserted[a] = true;
  }
  AffineExpr **dims = arena_alloc(cx->arena, (size_t)rank * sizeof *dims + 1);
  for (int i = 0, next = 0; i < rank; i++)
    dims[i] = inserted[i] ? graph_dim_const(cx->g, 1) : xv->shape[next++];
  reshape_to(cx, n, x, rank, dims, out0(n));
}

static void import_expand(Onnx *cx, ONode *n) {
  const_input(cx, n, 1, "shape");
  emit(cx, n, GOP_BROADCAST, 2, n->inputs, 0, NULL, out0(n));
}

static void import_concat(Onnx *cx, ONode *n) {
  if (!has_attr(n, "axis"))
    graph_error(cx->g, n->path, "%sthe attribute 'axis' is required", node_desc(cx, n));
  GraphAttr a = gattr_int("axis", attr_int(cx, n, "axis", 0));
  emit(cx, n, GOP_CONCAT, n->ninputs, n->inputs, 1, &a, out0(n));
}

static void import_tile(Onnx *cx, ONode *n) {
  int count;
  int64_t *repeats = const_ints(cx, n, 1, "repeats", &count);
  if (count != value(cx, n->inputs[0])->rank)
    graph_error(cx->g, input_path(cx, n, 1), "%s%d repeats for an input of rank %d", node_desc(cx, n), count,
                value(cx, n->inputs[0])->rank);
  for (int i = 0; i < count; i++)
    if (repeats[i] < 0)
      graph_error(cx->g, input_path(cx, n, 1), "%snegative repeats", node_desc(cx, n));
  GraphAttr a = gattr_ints(cx, "repeats", count, repeats);
  emit(cx, n, GOP_TILE, 1, n->inputs, 1, &a, out0(n));
}

static void import_gather(Onnx *cx, ONode *n) {
  GraphAttr a = gattr_int("axis", attr_int(cx, n, "axis", 0));
  emit(cx, n, GOP_GATHER, 2, n->inputs, 1, &a, out0(n));
}

/* A slice of x: dims not listed in sliced[] are taken whole. The graph op's
 * `sizes` are numbers, so every dim's extent must be static. */
static int emit_slice(Onnx *cx, const ONode *n, int x, const int64_t *starts, const int64_t *sizes,
                      const int64_t *strides, const bool *sliced, const char *out) {
  const GraphValue *xv = value(cx, x);
  int r = xv->rank;
  int64_t *st = arena_alloc(cx->arena, (size_t)(3 * r + 1) * sizeof *st), *sz = st + r, *sd = st + 2 * r;
  for (int i = 0; i < r; i++) {
    if (sliced[i]) {
      st[i] = starts[i], sz[i] = sizes[i], sd[i] = strides[i];
      continue;
    }
    st[i] = 0, sd[i] = 1, sz[i] = -1; /* the whole dim, static or symbolic */
  }
  GraphAttr attrs[3] = {gattr_ints(cx, "starts", r, st), gattr_ints(cx, "sizes", r, sz),
                        gattr_ints(cx, "strides", r, sd)};
  return emit(cx, n, GOP_SLICE, 1, &x, 3, attrs, out);
}

/* Slice's ends when they are a constant that depends on symbolic dims (the
 * Shape -> Gather -> Unsqueeze plumbing of a PyTorch export): their
 * expressions, else NULL (ends that are numbers). */
static AffineExpr **symbolic_ends(Onnx *cx, const ONode *n, int *count) {
  const GraphValue *v = input(n, 2) >= 0 ? value(cx, n->inputs[2]) : NULL;
  if (!v || v->kind != GV_CONST || !v->sym || v->rank > 1 || v->count > LG_MAX_RANK)
    return NULL;
  bool symbolic = false;
  for (int64_t i = 0; i < v->count; i++)
    symbolic |= !graph_dim_value(v->sym[i], NULL);
  if (!symbolic)
    return NULL;
  *count = (int)v->count;
  return v->sym;
}

/* ONNX Slice: starts/ends clamped per dim as the operator spec says,
 * negative steps walk backwards; an end that depends on symbolic dims is
 * taken as it is (symbolic_ends). */
static void import_slice(Onnx *cx, ONode *n) {
  int x = n->inputs[0];
  const GraphValue *xv = value(cx, x);
  int r = xv->rank;
  int64_t *starts, *ends, *axes = NULL, *steps = NULL;
  int ns, ne, na = 0, nst = 0;
  const char *where;
  AffineExpr **end_exprs = NULL, *sym_size[LG_MAX_RANK] = {0};
  bool any_sym = false;
  if (cx->opset < 10) {
    starts = attr_ints(cx, n, "starts", &ns);
    ends = attr_ints(cx, n, "ends", &ne);
    axes = attr_ints(cx, n, "axes", &na);
    if (!starts || !ends)
      graph_error(cx->g, n->path, "%s'starts' and 'ends' are required", node_desc(cx, n));
    where = attr_path(cx, n, "starts");
  } else {
    starts = const_ints(cx, n, 1, "starts", &ns);
    end_exprs = symbolic_ends(cx, n, &ne);
    ends = end_exprs ? NULL : const_ints(cx, n, 2, "ends", &ne);
    if (input(n, 3) >= 0)
      axes = const_ints(cx, n, 3, "axes", &na);
    if (input(n, 4) >= 0)
      steps = const_ints(cx, n, 4, "steps", &nst);
    where = input_path(cx, n, 1);
  }
  if (ne != ns || (axes && na != ns) || (steps && nst != ns))
    graph_error(cx->g, where, "%sstarts, ends, axes and steps must have the same length", node_desc(cx, n));
  int64_t *st = arena_alloc(cx->arena, (size_t)(3 * r + 1) * sizeof *st), *sz = st + r, *sd = st + 2 * r;
  bool *sliced = arena_alloc(cx->arena, (size_t)r + 1);
  for (int i = 0; i < ns; i++) {
    int64_t a = normalize_axis(cx, n, axes ? axes[i] : i, r, where);
    if (sliced[a])
      graph_error(cx->g, where, "%saxis %lld is sliced twice", node_desc(cx, n), (long long)a);
    sliced[a] = true;
    int64_t step = steps ? steps[i] : 1;
    if (step == 0)
      graph_error(cx->g, where, "%sa step of 0", node_desc(cx, n));
    int64_t s = starts[i], e, d;
    if (end_exprs && !graph_dim_value(end_exprs[i], &e)) {
      /* an end that depends on symbolic dims (a position table cut to the
       * sequence length): from a start at the front by a positive step up
       * to it, taken to be inside the dim (not clamped: lowering guards the
       * reads, so that a longer run reads zeros, not past the tensor) */
      if (step < 0 || s < 0 || s > ((int64_t)1 << 40))
        graph_error(cx->g, input_path(cx, n, 2),
                    "%sthe end of axis %lld is symbolic (%s); Slice supports it with a start from the front and a "
                    "positive step (fix the dim with --dim)",
                    node_desc(cx, n), (long long)a, graph_dim_str(cx->g, end_exprs[i]));
      /* graph_dim_arith folds as it builds: a start of 0 gives N, not N - 0 */
      AffineExpr *len = graph_dim_arith(cx->g, AE_SUB, end_exprs[i], graph_dim_const(cx->g, s));
      sym_size[a] = graph_dim_arith(cx->g, AE_CEILDIV, len, graph_dim_const(cx->g, step));
      st[a] = s, sz[a] = 0, sd[a] = step, any_sym = true;
      continue;
    }
    if (end_exprs)
      graph_dim_value(end_exprs[i], &e);
    else
      e = ends[i];
    if (!graph_dim_value(xv->shape[a], &d)) {
      /* a symbolic extent: a start from the front and an end at the extent
       * (INT64_MAX, as exporters write "to the end") or counted from it */
      bool to_end = e >= ((int64_t)1 << 62) || (e < 0 && e >= -((int64_t)1 << 40));
      if (step < 0 || s < 0 || s > ((int64_t)1 << 40) || !to_end)
        graph_error(cx->g, where,
                    "%sdim %lld of '%s' is symbolic (%s); Slice supports a start from the front, an end at or "
                    "before its end, and a positive step there (fix the dim with --dim)",
                    node_desc(cx, n), (long long)a, xv->name, graph_dim_str(cx->g, xv->shape[a]));
      st[a] = s, sz[a] = -1 - (e < 0 ? -e : 0), sd[a] = step;
      continue;
    }

    if (s < 0)
      s += d;
    if (e < 0)
      e += d;
    int64_t size;
    if (step > 0) {
      s = s < 0 ? 0 : s > d ? d : s;
      e = e < 0 ? 0 : e > d ? d : e;
      size = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
      e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
      size = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    st[a] = size > 0 ? s : 0, sz[a] = size, sd[a] = step;
  }
  if (!any_sym) {
    emit_slice(cx, n, x, st, sz, sd, sliced, out0(n));
    return;
  }
  /* symbolic sizes go to the slice as its 2nd input (src/graph/ops.md) */
  AffineExpr *sizes[LG_MAX_RANK];
  for (int i = 0; i < r; i++)
    sizes[i] = sym_size[i] ? sym_size[i] : graph_dim_const(cx->g, sliced[i] ? sz[i] : -1);
  for (int i = 0; i < r; i++)
    if (!sliced[i])
      st[i] = 0, sd[i] = 1, sz[i] = -1;
  GraphAttr attrs[3] = {gattr_ints(cx, "starts", r, st), gattr_ints(cx, "sizes", r, sz),
                        gattr_ints(cx, "strides", r, sd)};
  int ins[2] = {x, shape_const(cx, n, r, sizes)};
  emit(cx, n, GOP_SLICE, 2, ins, 3, attrs, out0(n));
}

/* Split along `axis` into pieces given by `split` (attribute before opset
 * 13, input after), else into equal parts (the last one smaller, opset 18). */
static void import_split(Onnx *cx, ONode *n) {
  int x = n->inputs[0];
  const GraphValue *xv = value(cx, x);
  int r = xv->rank;
  int64_t axis = normalize_axis(cx, n, attr_int(cx, n, "axis", 0), r, attr_path(cx, n, "axis"));
  int64_t d = static_dim(cx, n, x, (int)axis, "Split");
  int64_t *split;
  int count;
  int parts = n->noutputs;
  const char *where = cx->opset < 13 ? attr_path(cx, n, "split") : input_path(cx, n, 1);
  if (ints_attr_or_input(cx, n, "split", 13, 1, &split, &count)) {
    if (count != parts)
      graph_error(cx->g, where, "%s%d split sizes for %d outputs", node_desc(cx, n), count, parts);
    int64_t total = 0;
    for (int i = 0; i < count; i++) {
      if (split[i] < 0)
        graph_error(cx->g, where, "%snegative split size", node_desc(cx, n));
      total += split[i];
    }
    if (total != d)
      graph_error(cx->g, where, "%sthe split sizes add up to %lld, but the axis has extent %lld", node_desc(cx, n),
                  (long long)total, (long long)d);
  } else {
    if (has_attr(n, "num_outputs") && attr_int(cx, n, "num_outputs", 0) != parts)
      graph_error(cx->g, attr_path(cx, n, "num_outputs"), "%snum_outputs does not match the %d outputs",
                  node_desc(cx, n), parts);
    int64_t chunk = (d + parts - 1) / parts;
    if (cx->opset < 18 && d % parts)
      graph_error(cx->g, n->path, "%sextent %lld does not split evenly into %d parts", node_desc(cx, n),
                  (long long)d, parts);
    split = arena_alloc(cx->arena, (size_t)parts * sizeof *split);
    for (int i = 0, left = (int)d; i < parts; i++) {
      split[i] = chunk < left ? chunk : left;
      left -= (int)split[i];
    }
  }
  int64_t *st = arena_alloc(cx->arena, (size_t)(3 * r + 1) * sizeof *st), *sz = st + r, *sd = st + 2 * r;
  bool *sliced = arena_alloc(cx->arena, (size_t)r + 1);
  sliced[axis] = true;
  sd[axis] = 1;
  int64_t offset = 0;
  for (int i = 0; i < parts; i++) {
    st[axis] = split[i] ? offset : 0, sz[axis] = split[i];
    if (n->outputs[i])
      emit_slice(cx, n, x, st, sz, sd, sliced, n->outputs[i]);
    offset += split[i];
  }
}

/* Pad: pads [x1_begin, x2_begin, ..., x1_end, ...] as an attribute before
 * opset 11, as an input after (with the optional axes it applies to from
 * opset 18); modes constant, reflect, edge and wrap (opset 19). */
static void import_pad(Onnx *cx, ONode *n) {
  const char *mode = attr_string(cx, n, "mode", "constant");
  if (strcmp(mode, "constant") != 0 && strcmp(mode, "reflect") != 0 && strcmp(mode, "edge") != 0 &&
      strcmp(mode, "wrap") != 0)
    graph_error(cx->g, attr_path(cx, n, "mode"), "%spad mode '%s' is not supported (constant, reflect, edge, wrap)",
                node_desc(cx, n), mode);
  int x = n->inputs[0];
  int r = value(cx, x)->rank;
  int64_t *pads, *axes = NULL;
  int np, na = r;
  double fill = 0;
  const char *where;
  if (cx->opset < 11) {
    pads = attr_ints(cx, n, "pads", &np);
    fill = attr_float(cx, n, "value", 0);
    where = attr_path(cx, n, "pads");
    if (!pads)
      graph_error(cx->g, n->path, "%sthe attribute 'pads' is required", node_desc(cx, n));
  } else {
    pads = const_ints(cx, n, 1, "pads", &np);
    if (input(n, 2) >= 0)
      fill = const_scalar(cx, n, 2, "constant_value");
    if (input(n, 3) >= 0)
      axes = const_ints(cx, n, 3, "axes", &na);
    where = input_path(cx, n, 1);
  }
  if (np != 2 * na)
    graph_error(cx->g, where, "%s%d pads for %d axes (need 2 per axis)", node_desc(cx, n), np, na);
  int64_t *lohi = arena_alloc(cx->arena, (size_t)(2 * r + 1) * sizeof *lohi);
  for (int i = 0; i < na; i++) {
    int64_t a = axes ? normalize_axis(cx, n, axes[i], r, input_path(cx, n, 3)) : i;
    if (pads[i] < 0 || pads[i + na] < 0)
      graph_error(cx->g, where, "%snegative pads (cropping) are not supported", node_desc(cx, n));
    lohi[2 * a] = pads[i];
    lohi[2 * a + 1] = pads[i + na];
  }
  GraphAttr attrs[3] = {gattr_pads(cx, r, lohi), gattr_float("value", fill), gattr_string("mode", mode)};
  emit(cx, n, GOP_PAD, 1, &x, 3, attrs, out0(n));
}

/* ------------------------------------------------------------------ */
/* Importers: constants and shapes                                     */

static OTensor attr_tensor(Onnx *cx, const ONode *n, const OAttr *a) {
  attr_member(cx, n, a, "t", a->has_t);
  return decode_tensor(cx, a->t, path_join(cx, a->path, "t"),
                       arena_printf(cx->arena, "attribute '%s'", a->name));
}

static OTensor scalar_tensor(Onnx *cx, ElemType t, int rank, int64_t count) {
  OTensor out = {0};
  out.type = t, out.rank = rank, out.count = count;
  out.dims = arena_alloc(cx->arena, sizeof *out.dims);
  out.dims[0] = count;
  out.data = arena_alloc(cx->arena, (size_t)(count > 0 ? count : 1) * (size_t)elem_bytes(t));
  return out;
}

static void import_constant(Onnx *cx, ONode *n) {
  if (n->nattrs != 1)
    graph_error(cx->g, n->path, "%sexactly one of value, value_float(s), value_int(s) must be given",
                node_desc(cx, n));
  const OAttr *a = &n->attrs[0];
  OTensor t;
  int count;
  if (strcmp(a->name, "value") == 0) {
    t = attr_tensor(cx, n, typed_attr(cx, n, "value", "TENSOR"));
  } else if (strcmp(a->name, "value_float") == 0) {
    t = scalar_tensor(cx, TY_F32, 0, 1);
    store_double((uint8_t *)t.data, TY_F32, 0, attr_float(cx, n, "value_float", 0));
  } else if (strcmp(a->name, "value_int") == 0) {
    t = scalar_tensor(cx, TY_I64, 0, 1);
    store_int((uint8_t *)t.data, TY_I64, 0, attr_int(cx, n, "value_int", 0));
  } else if (strcmp(a->name, "value_floats") == 0) {
    double *v = attr_floats(cx, n, "value_floats", &count);
    t = scalar_tensor(cx, TY_F32, 1, count);
    for (int i = 0; i < count; i++)
      store_double((uint8_t *)t.data, TY_F32, i, v[i]);
  } else if (strcmp(a->name, "value_ints") == 0) {
    int64_t *v = attr_ints(cx, n, "value_ints", &count);
    t = scalar_tensor(cx, TY_I64, 1, count);
    for (int i = 0; i < count; i++)
      store_int((uint8_t *)t.data, TY_I64, i, v[i]);
  } else {
    graph_error(cx->g, a->path, "%sconstants given as '%s' are not supported", node_desc(cx, n), a->name);
  }
  add_tensor_const(cx, out0(n) ? out0(n) : fresh_name(cx), &t, n->path);
}

static void import_shape(Onnx *cx, ONode *n) {
  GraphAttr attrs[2];
  int na = 0;
  if (has_attr(n, "start"))
    attrs[na++] = gattr_int("start", attr_int(cx, n, "start", 0));
  if (has_attr(n, "end"))
    attrs[na++] = gattr_int("end", attr_int(cx, n, "end", 0));
  emit(cx, n, GOP_SHAPE, 1, n->inputs, na, attrs, out0(n));
}

/* Size: the input's element count, an i64 scalar known at generation time
 * (an expression in the symbolic dims when there are some). */
static void import_size(Onnx *cx, ONode *n) {
  AffineExpr **count = arena_alloc(cx->arena, sizeof *count);
  count[0] = graph_numel(cx->g, value(cx, n->inputs[0]));
  graph_add_sym_const(cx->g, out0(n), 1, count, true, n->path);
}

/* A tensor of the shape the input gives, every element `value` (a one-element
 * tensor; default float 0). A static shape is a fill; a symbolic one
 * broadcasts the scalar. */
static void import_constant_of_shape(Onnx *cx, ONode *n) {
  ElemType t = TY_F32;
  double v = 0;
  const OAttr *a = typed_attr(cx, n, "value", "TENSOR");
  if (a) {
    OTensor vt = attr_tensor(cx, n, a);
    if (vt.count != 1)
      graph_error(cx->g, a->path, "%s'value' must hold one element", node_desc(cx, n));
    GraphValue tmp = {0};
    tmp.type = vt.type, tmp.count = 1, tmp.data = vt.data;
    t = vt.type;
    v = graph_const_f(&tmp, 0);
  }
  const GraphValue *shape = const_input(cx, n, 0, "shape");
  if (shape->rank > 1 || elem_type_is_float(shape->type))
    graph_error(cx->g, input_path(cx, n, 0), "%sthe shape must be a 1-D integer tensor", node_desc(cx, n));
  if (shape->sym) {
    int ins[2] = {scalar_const(cx, n, t, v), n->inputs[0]};
    emit(cx, n, GOP_BROADCAST, 2, ins, 0, NULL, out0(n));
    return;
  }
  int count;
  int64_t *dims = const_ints(cx, n, 0, "shape", &count);
  for (int i = 0; i < count; i++)
    if (dims[i] < 0)
      graph_error(cx->g, input_path(cx, n, 0), "%snegative dimension in the shape", node_desc(cx, n));
  GraphAttr attrs[3] = {gattr_float("value", v), gattr_ints(cx, "shape", count, dims),
                        gattr_string("type", elem_type_name(t))};
  emit(cx, n, GOP_FILL, 0, NULL, 3, attrs, out0(n));
}

#include "frontend/onnx_ext.inc" /* ArgMax, TopK, CumSum, Scatter*, Gather*: non-structured ops */
#include "frontend/onnx_attention.inc" /* Attention (opsets 23, 24) */
#include "frontend/onnx_compose.inc"   /* Xor, PRelu, Trilu, ...: from elementwise ops and constants */
#include "frontend/onnx_math.inc"      /* Sin ... Atanh, Sign, Round, IsNaN */
#include "frontend/onnx_resize.inc"    /* Resize, Upsample */
#include "frontend/onnx_convtranspose.inc" /* ConvTranspose: sub-pixel convolution */
#include "frontend/onnx_rnn.inc"       /* RNN, GRU, LSTM: unrolled */
/* If and Loop inline their subgraphs' nodes, read as the model's are */
static void import_node(Onnx *cx, const OnnxNode *node, int index);
static void read_initializers(Onnx *cx, const OnnxGraph *og);
#include "frontend/onnx_control.inc"   /* If, Loop: inlined, unrolled */

/* ------------------------------------------------------------------ */
/* The operator table                                                  */

#define MANY 64
/* op_type, importer, graph op, min and max inputs, max outputs, every input required */
static const OnnxOp onnx_ops[] = {
    /* elementwise */
    {"Abs", import_unary, GOP_ABS, 1, 1, 1, false},
    {"Neg", import_unary, GOP_NEG, 1, 1, 1, false},
    {"Sqrt", import_unary, GOP_SQRT, 1, 1, 1, false},
    {"Reciprocal", import_unary, GOP_RECIPROCAL, 1, 1, 1, false},
    {"Exp", import_unary, GOP_EXP, 1, 1, 1, false},
    {"Log", import_unary, GOP_LOG, 1, 1, 1, false},
    {"Erf", import_unary, GOP_ERF, 1, 1, 1, false},
    {"Tanh", import_unary, GOP_TANH, 1, 1, 1, false},
    {"Sigmoid", import_unary, GOP_SIGMOID, 1, 1, 1, false},
    {"Relu", import_unary, GOP_RELU, 1, 1, 1, false},
    {"LeakyRelu", import_unary, GOP_LEAKY_RELU, 1, 1, 1, false},
    {"Elu", import_unary, GOP_ELU, 1, 1, 1, false},
    {"Selu", import_unary, GOP_SELU, 1, 1, 1, false},
    {"Celu", import_unary, GOP_CELU, 1, 1, 1, false},
    {"HardSigmoid", import_unary, GOP_HARD_SIGMOID, 1, 1, 1, false},
    {"HardSwish", import_unary, GOP_HARD_SWISH, 1, 1, 1, false},
    {"Softplus", import_unary, GOP_SOFTPLUS, 1, 1, 1, false},
    {"Floor", import_unary, GOP_FLOOR, 1, 1, 1, false},
    {"Ceil", import_unary, GOP_CEIL, 1, 1, 1, false},
    {"Clip", import_clip, GOP_CLIP, 1, 3, 1, false},
    {"Cast", import_cast, GOP_CAST, 1, 1, 1, false},
    {"CastLike", import_cast_like, GOP_CAST, 2, 2, 1, false},
    {"Identity", import_copy, GOP_COPY, 1, 1, 1, false},
    {"Not", import_logic, GOP_WHERE, 1, 1, 1, false},
    {"And", import_logic, GOP_WHERE, 2, 2, 1, false},
    {"Or", import_logic, GOP_WHERE, 2, 2, 1, false},
    {"Dropout", import_dropout, GOP_COPY, 1, 3, 2, false},
    {"Add", import_binary, GOP_ADD, 2, 2, 1, false},
    {"Sub", import_binary, GOP_SUB, 2, 2, 1, false},
    {"Mul", import_binary, GOP_MUL, 2, 2, 1, false},
    {"Div", import_binary, GOP_DIV, 2, 2, 1, false},
    {"Pow", import_pow, GOP_POW, 2, 2, 1, false},
    {"Equal", import_binary, GOP_EQUAL, 2, 2, 1, false},
    {"Less", import_binary, GOP_LESS, 2, 2, 1, false},
    {"LessOrEqual", import_or_equal, GOP_LESS, 2, 2, 1, false},
    {"GreaterOrEqual", import_or_equal, GOP_GREATER, 2, 2, 1, false},
    {"Greater", import_binary, GOP_GREATER, 2, 2, 1, false},
    {"Where", import_binary, GOP_WHERE, 3, 3, 1, false},
    {"BitwiseAnd", import_binary, GOP_BITWISE_AND, 2, 2, 1, false},
    {"BitwiseOr", import_binary, GOP_BITWISE_OR, 2, 2, 1, false},
    {"BitwiseXor", import_binary, GOP_BITWISE_XOR, 2, 2, 1, false},
    {"BitwiseNot", import_unary, GOP_BITWISE_NOT, 1, 1, 1, false},
    {"BitShift", import_bitshift, GOP_SHIFT_LEFT, 2, 2, 1, false},
    {"Max", import_variadic, GOP_MAX, 1, MANY, 1, true},
    {"Min", import_variadic, GOP_MIN, 1, MANY, 1, true},
    {"Sum", import_variadic, GOP_ADD, 1, MANY, 1, true},
    {"Mean", import_variadic, GOP_ADD, 1, MANY, 1, true},
    {"Softmax", import_softmax, GOP_SOFTMAX, 1, 1, 1, false},
    {"LogSoftmax", import_softmax, GOP_LOG_SOFTMAX, 1, 1, 1, false},
    /* linear algebra and NN */
    {"MatMul", import_binary, GOP_MATMUL, 2, 2, 1, false},
    {"Gemm", import_gemm, GOP_MATMUL, 2, 3, 1, false},
    {"Einsum", import_einsum, GOP_EINSUM, 1, 8, 1, false},
    {"Conv", import_conv, GOP_CONV, 2, 3, 1, false},
    {"MaxPool", import_pool, GOP_POOLING_NCHW_MAX, 1, 1, 2, false},
    {"AveragePool", import_pool, GOP_POOLING_NCHW_AVG, 1, 1, 1, false},
    {"GlobalAveragePool", import_global_pool, GOP_REDUCE_MEAN, 1, 1, 1, false},
    {"GlobalMaxPool", import_global_pool, GOP_REDUCE_MAX, 1, 1, 1, false},
    {"BatchNormalization", import_batchnorm, GOP_ADD, 5, 5, 1, false},
    {"LayerNormalization", import_layernorm, GOP_ADD, 2, 3, 3, false},
    {"InstanceNormalization", import_instancenorm, GOP_ADD, 3, 3, 1, false},
    /* reductions */
    {"ReduceSum", import_reduce, GOP_REDUCE_SUM, 1, 2, 1, false},
    {"ReduceMean", import_reduce, GOP_REDUCE_MEAN, 1, 2, 1, false},
    {"ReduceMax", import_reduce, GOP_REDUCE_MAX, 1, 2, 1, false},
    {"ReduceMin", import_reduce, GOP_REDUCE_MIN, 1, 2, 1, false},
    {"ReduceProd", import_reduce, GOP_REDUCE_PROD, 1, 2, 1, false},
    {"ReduceL2", import_reduce, GOP_REDUCE_SUM, 1, 2, 1, false},
    {"ReduceSumSquare", import_reduce, GOP_REDUCE_SUM, 1, 2, 1, false},
    {"ReduceL1", import_reduce_log, GOP_REDUCE_SUM, 1, 2, 1, false},
    {"ReduceLogSum", import_reduce_log, GOP_REDUCE_SUM, 1, 2, 1, false},
    {"ReduceLogSumExp", import_reduce_log, GOP_REDUCE_SUM, 1, 2, 1, false},
    /* layout */
    {"Transpose", import_transpose, GOP_TRANSPOSE, 1, 1, 1, false},
    {"Reshape", import_reshape, GOP_RESHAPE, 2, 2, 1, false},
    {"Flatten", import_flatten, GOP_RESHAPE, 1, 1, 1, false},
    {"Squeeze", import_squeeze, GOP_RESHAPE, 1, 2, 1, false},
    {"Unsqueeze", import_unsqueeze, GOP_RESHAPE, 1, 2, 1, false},
    {"Expand", import_expand, GOP_BROADCAST, 2, 2, 1, false},
    {"Concat", import_concat, GOP_CONCAT, 1, MANY, 1, true},
    {"Slice", import_slice, GOP_SLICE, 1, 5, 1, false},
    {"Split", import_split, GOP_SLICE, 1, 2, MANY, false},
    {"Pad", import_pad, GOP_PAD, 1, 4, 1, false},
    {"Tile", import_tile, GOP_TILE, 2, 2, 1, false},
    {"Gather", import_gather, GOP_GATHER, 2, 2, 1, false},
    ONNX_EXT_OPS
    ONNX_ATTENTION_OPS
    ONNX_COMPOSED_OPS
    ONNX_MATH_OPS
    ONNX_RESIZE_OPS
    ONNX_CONVTRANSPOSE_OPS
    ONNX_RNN_OPS
    ONNX_CONTROL_OPS
    /* constants and shapes */
    {"Constant", import_constant, GOP_FILL, 0, 0, 1, false},
    {"Shape", import_shape, GOP_SHAPE, 1, 1, 1, false},
    {"Size", import_size, GOP_SHAPE, 1, 1, 1, false},
    {"ConstantOfShape", import_constant_of_shape, GOP_FILL, 1, 1, 1, false},
};

static const OnnxOp *lookup_op(const char *op_type) {
  for (size_t i = 0; i < sizeof onnx_ops / sizeof onnx_ops[0]; i++)
    if (strcmp(onnx_ops[i].op_type, op_type) == 0)
      return &onnx_ops[i];
  return NULL;
}

static bool default_domain(const char *domain) {
  return !domain || domain[0] == 0 || strcmp(domain, "ai.onnx") == 0;
}

/* ------------------------------------------------------------------ */
/* The model                                                           */

static void read_opset(Onnx *cx, const OnnxModel *m) {
  cx->opset = -1;
  for (int i = 0; i < m->nopsets; i++) {
    const OnnxOpset *o = &m->opsets[i];
    if (!default_domain(o->domain))
      continue;
    cx->opset = o->has_version ? o->version : 1;
    if (cx->opset < ONNX_MIN_OPSET || cx->opset > ONNX_MAX_OPSET)
      graph_error(cx->g, path_join(cx, o->path, "version"), "ONNX opset %lld is %s (lgen reads opsets %d to %d)",
                  (long long)cx->opset, cx->opset < ONNX_MIN_OPSET ? "too old" : "newer than lgen knows",
                  ONNX_MIN_OPSET, ONNX_MAX_OPSET);
  }
}

/* After check_operators, so that a model of other domains' operators only
 * (training ops) hears which operators those are. */
static void require_default_opset(Onnx *cx, const OnnxModel *m) {
  if (cx->opset < 0)
    graph_error(cx->g, m->has_opset_list ? "/opsetImport" : "", "the model imports no opset of the default ONNX domain");
}

static void read_initializers(Onnx *cx, const OnnxGraph *og) {
  for (int i = 0; i < og->ninitializers; i++) {
    const OnnxTensor *t = &og->initializers[i];
    if (!t->name[0])
      graph_error(cx->g, t->path, "an initializer without a name");
    OTensor ot = decode_tensor(cx, t, t->path, arena_printf(cx->arena, "initializer '%s'", t->name));
    add_tensor_const(cx, scope_define(cx, t->name), &ot, t->path); /* a subgraph's: renamed */
  }
}


/* A graph input's type: element type and shape (dimValue: a number;
 * dimParam: a symbolic dim; neither: a symbol named after input and dim). */
static void read_input(Onnx *cx, const OnnxValueInfo *in) {
  const char *p = in->path, *name = in->name;
  if (!in->has_tensor_type)
    graph_error(cx->g, path_join(cx, p, "type"), "input '%s' is not a tensor (no type.tensorType)", name);
  const char *tp = path_join(cx, p, "type/tensorType");
  if (!in->has_elem_type)
    graph_error(cx->g, tp, "input '%s' has no elemType", name);
  const char *ep = path_join(cx, tp, "elemType");
  ElemType type = onnx_type_at(cx, in->elem_type, ep, arena_printf(cx->arena, "input '%s'", name));
  if (!in->has_shape)
    graph_error(cx->g, tp, "input '%s' has no shape (lgen needs every input's rank)", name);
  const char *sp = path_join(cx, tp, "shape");
  size_t rank = (size_t)in->rank;
  if (rank > LG_MAX_RANK)
    graph_error(cx->g, sp, "input '%s' has rank %zu; lgen's limit is %d", name, rank, LG_MAX_RANK);
  int64_t *values = arena_alloc(cx->arena, (rank + 1) * sizeof *values);
  const char **syms = arena_alloc(cx->arena, (rank + 1) * sizeof *syms);
  for (size_t d = 0; d < rank; d++) {
    const OnnxDim *dim = &in->dims[d];
    if (dim->has_value) {
      values[d] = dim->value;
      if (values[d] < 0)
        graph_error(cx->g, path_join(cx, dim->path, "dimValue"), "negative dimension %lld", (long long)values[d]);
    } else {
      syms[d] = dim->param && dim->param[0] ? dim->param : arena_printf(cx->arena, "%s_dim%zu", name, d);
    }
  }
  AffineExpr **shp = graph_input_shape(cx->g, name, (int)rank, values, syms);
  graph_add_input(cx->g, name, type, (int)rank, shp, p);
}

static void read_inputs(Onnx *cx, const OnnxGraph *og) {
  for (int i = 0; i < og->ninputs; i++) {
    const OnnxValueInfo *in = &og->inputs[i];
    if (!in->name[0])
      graph_error(cx->g, in->path, "an input without a name");
    int v = graph_find(cx->g, in->name);
    if (v >= 0 && value(cx, v)->kind == GV_CONST)
      continue; /* an initializer listed as an input: a constant, not a parameter */
    read_input(cx, in);
  }
}

/* The declared type of an output, checked where it is static. */
static void check_output(Onnx *cx, const OnnxValueInfo *out, const GraphValue *v) {
  if (!out->has_tensor_type)
    return;
  const char *tp = path_join(cx, out->path, "type/tensorType");
  ElemType t;
  if (out->has_elem_type && onnx_type(out->elem_type, &t) && t != v->type)
    graph_error(cx->g, path_join(cx, tp, "elemType"), "output '%s' is declared %s, but the graph computes %s",
                v->name, elem_type_name(t), elem_type_name(v->type));
  if (!out->has_shape)
    return;
  size_t rank = (size_t)out->rank;
  const char *sp = path_join(cx, tp, "shape");
  if ((int)rank != v->rank)
    graph_error(cx->g, sp, "output '%s' is declared with rank %zu, but the graph computes rank %d", v->name, rank,
                v->rank);
  for (size_t d = 0; d < rank; d++) {
    const OnnxDim *dim = &out->dims[d];
    int64_t got;
    if (!dim->has_value)
      continue;
    const char *dp = path_join(cx, dim->path, "dimValue");
    if (graph_dim_value(v->shape[d], &got) && got != dim->value)
      graph_error(cx->g, dp, "output '%s' is declared with extent %lld in dim %zu, but the graph computes %lld",
                  v->name, (long long)dim->value, d, (long long)got);
  }
}

static void read_outputs(Onnx *cx, const OnnxGraph *og) {
  if (og->noutputs == 0)
    graph_error(cx->g, og->path, "the graph has no outputs");
  for (int i = 0; i < og->noutputs; i++) {
    const OnnxValueInfo *out = &og->outputs[i];
    int v = graph_find(cx->g, out->name);
    if (v < 0)
      graph_error(cx->g, path_join(cx, out->path, "name"), "output '%s' is not computed by any node", out->name);
    check_output(cx, out, value(cx, v));
    graph_add_output(cx->g, v, out->path);
  }
}

/* ------------------------------------------------------------------ */
/* Nodes                                                               */

static const char *node_op_type(Onnx *cx, const OnnxNode *node) {
  if (!node->op_type || !node->op_type[0])
    graph_error(cx->g, node->path, "a node without an opType");
  return node->op_type;
}

/* The operators of a graph and of the graphs its nodes' attributes hold
 * (If's branches, Loop's body), in file order, each with its node. */
typedef struct {
  const OnnxNode *node;
  int index;      /* in its graph */
  const char *in; /* NULL, or the subgraph it is in: "If 'cond' else_branch" */
} NodeRef;

static void collect_nodes(Onnx *cx, const OnnxGraph *og, const char *in, PtrVec *out) {
  for (int i = 0; i < og->nnodes; i++) {
    NodeRef *r = arena_alloc(cx->arena, sizeof *r);
    r->node = &og->nodes[i];
    r->index = i;
    r->in = in;
    vec_push(cx->arena, out, r);
    for (int k = 0; k < r->node->nattrs; k++) {
      const OnnxAttr *a = &r->node->attrs[k];
      if (!a->has_g && !a->ngraphs)
        continue;
      const char *op = r->node->op_type ? r->node->op_type : "?";
      const char *sub = r->node->name[0] ? arena_printf(cx->arena, "%s '%s' %s", op, r->node->name, a->name)
                                         : arena_printf(cx->arena, "%s %d %s", op, i, a->name);
      if (a->has_g)
        collect_nodes(cx, a->g, sub, out);
      for (int j = 0; j < a->ngraphs; j++)
        collect_nodes(cx, a->graphs[j], sub, out);
    }
  }
}

/* Every operator the loader cannot read, in one message, before anything
 * is built: a model that needs several is reported once, completely, the
 * nodes of subgraphs (If, Loop, Scan bodies) included. */
static void check_operators(Onnx *cx, const OnnxGraph *og) {
  PtrVec all = {0};
  collect_nodes(cx, og, NULL, &all);
  size_t count = (size_t)all.len;
  const char **keys = arena_alloc(cx->arena, (count + 1) * sizeof *keys);
  bool *done = arena_alloc(cx->arena, count + 1);
  const char *first = NULL;
  for (size_t i = 0; i < count; i++) {
    const OnnxNode *node = ((NodeRef *)all.items[i])->node;
    const char *op = node_op_type(cx, node);
    if (!default_domain(node->domain))
      keys[i] = arena_printf(cx->arena, "%s.%s", node->domain, op);
    else if (!lookup_op(op))
      keys[i] = op;
    else
      done[i] = true;
    if (!done[i] && !first)
      first = node->path;
  }
  if (!first)
    return;
  StrBuf sb = {0};
  sb_puts(&sb, "unsupported ONNX operators: ");
  bool any = false;
  for (size_t i = 0; i < count; i++) {
    if (done[i])
      continue;
    size_t uses = 0;
    for (size_t j = i; j < count; j++)
      uses += !done[j] && strcmp(keys[j], keys[i]) == 0;
    sb_printf(&sb, "%s%s (node%s ", any ? ", " : "", keys[i], uses > 1 ? "s" : "");
    any = true;
    bool more = false;
    for (size_t j = i; j < count; j++) {
      if (done[j] || strcmp(keys[j], keys[i]) != 0)
        continue;
      const NodeRef *r = all.items[j];
      if (r->node->name[0])
        sb_printf(&sb, "%s'%s'", more ? ", " : "", r->node->name);
      else
        sb_printf(&sb, "%s%d", more ? ", " : "", r->index);
      if (r->in)
        sb_printf(&sb, " in %s", r->in);
      more = true;
      done[j] = true;
    }
    sb_putc(&sb, ')');
  }
  const char *msg = arena_strdup(cx->arena, sb_cstr(&sb));
  sb_free(&sb);
  graph_error(cx->g, first, "%s", msg);
}

/* The attribute's type; old exporters leave it out, so it is inferred
 * from the value present. */
static const char *attr_type(const OnnxAttr *a) {
  if (a->type[0])
    return a->type;
  return a->has_ints ? "INTS"
         : a->has_floats ? "FLOATS"
         : a->has_i ? "INT"
         : a->has_f ? "FLOAT"
         : a->has_s ? "STRING"
         : a->has_t ? "TENSOR"
         : a->has_g ? "GRAPH"
                    : "UNDEFINED";
}

static void read_node_attrs(Onnx *cx, const OnnxNode *node, ONode *n) {
  n->nattrs = node->nattrs;
  OAttr *attrs = arena_alloc(cx->arena, ((size_t)n->nattrs + 1) * sizeof *attrs);
  for (int i = 0; i < n->nattrs; i++) {
    OAttr *a = &attrs[i];
    *a = node->attrs[i];
    if (!a->name[0])
      graph_error(cx->g, a->path, "%san attribute without a name", node_desc(cx, n));
    a->type = attr_type(a);
    for (int j = 0; j < i; j++)
      if (strcmp(attrs[j].name, a->name) == 0)
        graph_error(cx->g, a->path, "%sattribute '%s' is given twice", node_desc(cx, n), a->name);
  }
  n->attrs = attrs;
}

/* Inputs by name ("" is an omitted optional input), outputs by name. */
static void read_node_io(Onnx *cx, const OnnxNode *node, ONode *n) {
  n->ninputs = node->ninputs;
  n->inputs = arena_alloc(cx->arena, ((size_t)n->ninputs + 1) * sizeof *n->inputs);
  for (int k = 0; k < n->ninputs; k++) {
    const char *name = node->inputs[k];
    n->inputs[k] = name[0] ? graph_find(cx->g, scoped_name(cx, name)) : -1;
    if (name[0] && n->inputs[k] < 0)
      graph_error(cx->g, input_path(cx, n, k), "%sundefined value '%s'", node_desc(cx, n), name);
    if (!name[0] && n->entry->every_input)
      graph_error(cx->g, input_path(cx, n, k), "%sinputs may not be omitted", node_desc(cx, n));
  }
  /* trailing omitted inputs are as good as absent */
  while (n->ninputs > 0 && n->inputs[n->ninputs - 1] < 0)
    n->ninputs--;
  n->noutputs = node->noutputs;
  n->outputs = arena_alloc(cx->arena, ((size_t)n->noutputs + 1) * sizeof *n->outputs);
  for (int k = 0; k < n->noutputs; k++) {
    const char *p = path_index(cx, n->path, "output", (size_t)k);
    const char *name = node->outputs[k];
    n->outputs[k] = name[0] ? scope_define(cx, name) : NULL;
    if (name[0] && k >= n->entry->max_out)
      graph_error(cx->g, p, "%soutput %d ('%s') is not supported; only the first %d output%s can be computed",
                  node_desc(cx, n), k, name, n->entry->max_out, n->entry->max_out > 1 ? "s" : "");
  }
}

static void check_arity(Onnx *cx, const ONode *n) {
  const OnnxOp *e = n->entry;
  if (n->ninputs > e->max_in)
    graph_error(cx->g, input_path(cx, n, e->max_in), "%stakes at most %d input%s, not %d", node_desc(cx, n),
                e->max_in, e->max_in == 1 ? "" : "s", n->ninputs);
  for (int k = 0; k < e->min_in; k++)
    if (input(n, k) < 0)
      graph_error(cx->g, k < n->ninputs ? input_path(cx, n, k) : n->path, "%sinput %d is required",
                  node_desc(cx, n), k);
  if (n->noutputs < 1)
    graph_error(cx->g, n->path, "%sa node without outputs", node_desc(cx, n));
}

/* The attributes each standard operator has (onnx_attrs.def). */
static const struct {
  const char *op_type, *names;
} onnx_attr_lists[] = {
#define A(op, names) {op, names},
#include "frontend/onnx_attrs.def"
#undef A
};

/* An attribute the operator does not have: a warning (ONNX Runtime
 * rejects such a model; lgen ignores the attribute), with the nearest name
 * the operator has when it looks misspelt. */
static void check_attr_names(Onnx *cx, const ONode *n) {
  const char *names = NULL;
  for (size_t i = 0; i < sizeof onnx_attr_lists / sizeof onnx_attr_lists[0] && !names; i++)
    if (strcmp(onnx_attr_lists[i].op_type, n->op_type) == 0)
      names = onnx_attr_lists[i].names;
  if (!names)
    return;
  const char *list[64];
  int count = 0;
  for (const char *p = names; *p && count < 64;) {
    size_t len = strcspn(p, " ");
    list[count++] = arena_strndup(cx->arena, p, len);
    p += len + (p[len] == ' ');
  }
  for (int a = 0; a < n->nattrs; a++) {
    bool known = false;
    for (int i = 0; i < count && !known; i++)
      known = strcmp(list[i], n->attrs[a].name) == 0;
    if (known)
      continue;
    const char *near = graph_suggest(n->attrs[a].name, list, count);
    graph_warning(cx->g, n->attrs[a].path, "%sONNX %s has no attribute '%s'%s%s%s; it is ignored", node_desc(cx, n),
                  n->op_type, n->attrs[a].name, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
  }
}

static void import_node(Onnx *cx, const OnnxNode *node, int index) {
  ONode n = {0};
  n.index = index;
  n.src = node;
  n.path = node->path;
  n.op_type = node_op_type(cx, node);
  n.name = node->name;
  n.entry = lookup_op(n.op_type);
  read_node_attrs(cx, node, &n);
  check_attr_names(cx, &n);
  read_node_io(cx, node, &n);
  check_arity(cx, &n);
  n.entry->import(cx, &n);
}

/* Graph names that exporters give every model (PyTorch, paddle2onnx,
 * tf2onnx, ...): compared ignoring case, any character but a letter or a
 * digit standing for any other. Such a name tells two models apart no
 * better than none (lgen(1), MODEL GRAPHS). */
static const char *const generic_graph_names[] = {
    "main_graph", "torch-jit-export", "torch_jit", "Model from PaddlePaddle.", "tf2onnx",
    "model",      "graph",            "main",      "test_graph",
};

static char name_key(char c) {
  if (c >= 'A' && c <= 'Z')
    return (char)(c - 'A' + 'a');
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '_';
}

static bool generic_graph_name(const char *name) {
  if (!name[0])
    return true;
  for (size_t i = 0; i < sizeof generic_graph_names / sizeof generic_graph_names[0]; i++) {
    const char *a = name, *b = generic_graph_names[i];
    while (*a && *b && name_key(*a) == name_key(*b))
      a++, b++;
    if (!*a && !*b)
      return true;
  }
  return false;
}

/* The entry point's default name: the graph's, or when that is generic the
 * file's name without its folder and last extension ("model" for standard
 * input). NULL path: the name is not in the file. */
static const char *entry_name(Onnx *cx, const OnnxGraph *og, const char **path) {
  *path = og->name[0] ? path_join(cx, og->path, "name") : NULL;
  if (!generic_graph_name(og->name))
    return og->name;
  const char *file = cx->file;
  const char *slash = strrchr(file, '/');
  const char *base = slash ? slash + 1 : file;
  const char *dot = strrchr(base, '.');
  size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  if (len == 0 || base[0] == '<') /* <stdin> */
    return og->name[0] ? og->name : "model";
  *path = NULL;
  return arena_strndup(cx->arena, base, len);
}

void onnx_import(Graph *g, const OnnxModel *m, const char *file, const char *dir, PtrVec *file_deps) {
  Onnx cx = {0};
  cx.g = g;
  cx.file = file;
  cx.arena = g->arena;
  cx.dir = dir;
  cx.file_deps = file_deps;
  const OnnxGraph *og = m->graph;
  if (!og)
    graph_error(cx.g, "", "an ONNX model needs a 'graph' object");
  cx.g->name = entry_name(&cx, og, &cx.g->name_path);
  read_opset(&cx, m);
  check_operators(&cx, og);
  require_default_opset(&cx, m);
  read_initializers(&cx, og);
  read_inputs(&cx, og);
  for (int i = 0; i < og->nnodes; i++)
    import_node(&cx, &og->nodes[i], i);
  read_outputs(&cx, og);
}
