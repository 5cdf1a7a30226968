/* onnx_read_pb.c - a binary ONNX model (a serialized ModelProto) to the
 * neutral model of onnx_model.h, through protobuf-c.
 *
 * protobuf-c's unpack says only "failed", with no place, and trusts what it
 * reads (it has no nesting limit). So the bytes are walked first against the
 * same descriptors that protoc-c generated from onnx.proto: every tag, wire
 * type, varint and length is checked, the nesting is bounded, and the first
 * problem is one error at its byte offset with the field path that leads to
 * it ("graph.node[5] 'Conv_3', attribute 'pads'"). Only bytes that passed go
 * to protobuf_c_message_unpack, which allocates from the compilation's
 * arena (an error unwinds by longjmp and leaks nothing).
 *
 * The model's elements get the JSON pointers the JSON mapping would give
 * them, so the importer's messages are the same for both forms; the Graph's
 * locator (pb_locate) finds such a pointer in the bytes again, on demand,
 * as a byte offset and a field path. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/graph_load.h"
#include "frontend/onnx_model.h"

/* protoc-c writes oneofs as anonymous unions, a C11 feature. */
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wpedantic"
#pragma clang diagnostic ignored "-Wc11-extensions"
#elif defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#endif
#include "frontend/onnx.pb-c.h"
#if defined(__clang__)
#pragma clang diagnostic pop
#elif defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

enum {
  /* Messages inside messages: a model, its graph, a node, an attribute, a
   * subgraph, ... An If inside a Loop inside an If is about 12 deep. */
  PB_MAX_DEPTH = 100,
  PB_MAX_NAME = 48, /* of a name quoted in a field path */
  PB_PATH_ENDS = 6, /* a deeper field path shows this many messages at each end */
  PB_MAX_FIELDS = 64, /* fields per message type that get element counts */
};

/* ------------------------------------------------------------------ */
/* Varints and field paths                                             */

/* A varint at *pos, before end: 0 ok, 1 truncated, 2 longer than 64 bits. */
static int get_varint(const uint8_t *d, size_t end, size_t *pos, uint64_t *out) {
  uint64_t v = 0;
  for (int i = 0; i < 10; i++) {
    if (*pos >= end)
      return 1;
    uint8_t b = d[(*pos)++];
    if (i == 9 && b > 1)
      return 2;
    v |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *out = v;
      return 0;
    }
  }
  return 2;
}

/* One message on the way from the model to a place in the bytes. */
typedef struct {
  const ProtobufCMessageDescriptor *desc;
  size_t start, end; /* the message's bytes */
  const ProtobufCFieldDescriptor *field; /* the field that holds it (NULL: the model) */
  size_t index; /* which element, for a repeated field */
} Frame;

/* The string of the message's last `name` field (tolerantly: NULL at the
 * first malformed byte), for field paths. */
static const char *element_name(Arena *arena, const uint8_t *d, const Frame *f) {
  const ProtobufCFieldDescriptor *nf = protobuf_c_message_descriptor_get_field_by_name(f->desc, "name");
  if (!nf || nf->type != PROTOBUF_C_TYPE_STRING)
    return NULL;
  size_t pos = f->start, at = 0, len = 0;
  bool found = false;
  while (pos < f->end) {
    uint64_t tag, v;
    if (get_varint(d, f->end, &pos, &tag))
      break;
    switch (tag & 7) {
    case 0:
      if (get_varint(d, f->end, &pos, &v))
        return NULL;
      break;
    case 1: pos += 8; break;
    case 5: pos += 4; break;
    case 2:
      if (get_varint(d, f->end, &pos, &v) || v > f->end - pos)
        return NULL;
      if ((tag >> 3) == nf->id)
        at = pos, len = (size_t)v, found = true;
      pos += (size_t)v;
      break;
    default: return NULL;
    }
  }
  if (!found)
    return NULL;
  StrBuf sb = {0};
  for (size_t i = 0; i < len && i < PB_MAX_NAME; i++) {
    uint8_t c = d[at + i];
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'')
      sb_putc(&sb, (char)c);
    else
      sb_printf(&sb, "\\x%02x", c);
  }
  if (len > PB_MAX_NAME)
    sb_puts(&sb, "...");
  const char *s = arena_strdup(arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

/* "graph.node[5] 'Conv_3', attribute 'pads', ints": the frames below the
 * model, then `tail` (a field of the last one; NULL: none). */
static const char *field_path(Arena *arena, const uint8_t *d, const Frame *frames, int n, const char *tail) {
  StrBuf sb = {0};
  bool named = false, gap = false;
  for (int i = 1; i < n; i++) {
    const Frame *f = &frames[i];
    if (n > 2 * PB_PATH_ENDS + 2 && i == PB_PATH_ENDS + 1) { /* deep: the ends only */
      sb_printf(&sb, "%s(%d more) ", named ? ", " : " ", n - 1 - 2 * PB_PATH_ENDS);
      i = n - 1 - PB_PATH_ENDS;
      named = false, gap = true;
      continue;
    }
    sb_puts(&sb, gap ? "" : named ? ", " : i > 1 ? "." : "");
    gap = false;
    sb_puts(&sb, f->field->name);
    const char *name = f->field->label == PROTOBUF_C_LABEL_REPEATED ? element_name(arena, d, f) : NULL;
    bool attribute = strcmp(f->field->name, "attribute") == 0;
    if (f->field->label == PROTOBUF_C_LABEL_REPEATED && !(attribute && name))
      sb_printf(&sb, "[%zu]", f->index);
    if (name)
      sb_printf(&sb, " '%s'", name);
    named = name != NULL;
  }
  if (tail)
    sb_printf(&sb, "%s%s", named ? ", " : n > 1 ? "." : "", tail);
  const char *s = arena_strdup(arena, sb.len ? sb_cstr(&sb) : "model");
  sb_free(&sb);
  return s;
}

static Loc byte_loc(const Source *src, size_t offset, const char *field) {
  Loc loc = {0};
  loc.src = src;
  loc.offset = offset;
  loc.field = field;
  return loc;
}

/* ------------------------------------------------------------------ */
/* The wire-format check                                               */

typedef struct {
  const Source *src;
  const uint8_t *d;
  Diag *diag;
  Arena *arena;
  Frame frames[PB_MAX_DEPTH + 1];
  int depth; /* frames in use */
} Walker;

static void wire_error(Walker *w, size_t offset, const char *tail, const char *fmt, ...) LG_PRINTF(4, 5) LG_NORETURN;

static void wire_error(Walker *w, size_t offset, const char *tail, const char *fmt, ...) {
  StrBuf sb = {0};
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  const char *msg = arena_strdup(w->arena, sb_cstr(&sb));
  sb_free(&sb);
  Loc loc = byte_loc(w->src, offset, field_path(w->arena, w->d, w->frames, w->depth, tail));
  diag_error(w->diag, loc, "%s", msg);
}

static int wire_type_of(ProtobufCType t) {
  switch (t) {
  case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE: return 1;
  case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_FLOAT: return 5;
  case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_BYTES: case PROTOBUF_C_TYPE_MESSAGE: return 2;
  default: return 0;
  }
}

static const char *wire_type_name(int wt) {
  static const char *const names[] = {"0 (varint)", "1 (64-bit)", "2 (length-delimited)", "3 (group start)",
                                      "4 (group end)", "5 (32-bit)", "6 (invalid)", "7 (invalid)"};
  return names[wt & 7];
}

/* A packed repeated number field's payload: whole elements only. */
static void check_packed(Walker *w, const ProtobufCFieldDescriptor *fd, size_t at, size_t end) {
  int wt = wire_type_of(fd->type);
  if (wt != 0) {
    size_t size = wt == 1 ? 8 : 4;
    if ((end - at) % size)
      wire_error(w, at, fd->name, "packed '%s' has %zu bytes, not a multiple of %zu", fd->name, end - at, size);
    return;
  }
  for (size_t pos = at; pos < end;) {
    size_t el = pos;
    uint64_t v;
    int r = get_varint(w->d, end, &pos, &v);
    if (r)
      wire_error(w, el, fd->name, "packed '%s' %s", fd->name,
                 r == 1 ? "ends inside a varint" : "has a varint longer than 64 bits");
  }
}

static void walk(Walker *w) {
  const Frame *f = &w->frames[w->depth - 1];
  const ProtobufCMessageDescriptor *desc = f->desc;
  size_t counts[PB_MAX_FIELDS] = {0};
  size_t pos = f->start, end = f->end;
  while (pos < end) {
    size_t tag_at = pos;
    uint64_t tag, v;
    int r = get_varint(w->d, end, &pos, &tag);
    if (r == 1)
      wire_error(w, tag_at, NULL, "truncated: a field tag runs past the end of the %s", w->depth > 1 ? "message" : "file");
    if (r == 2)
      wire_error(w, tag_at, NULL, "a field tag longer than 64 bits (not protobuf)");
    uint64_t number = tag >> 3;
    int wt = (int)(tag & 7);
    if (number == 0 || number > 536870911u)
      wire_error(w, tag_at, NULL, "field number %llu is invalid (not protobuf)", (unsigned long long)number);
    const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(desc, (unsigned)number);
    const char *tail = fd ? fd->name : arena_printf(w->arena, "field %llu", (unsigned long long)number);
    size_t index = 0;
    if (fd && (size_t)(fd - desc->fields) < PB_MAX_FIELDS)
      index = counts[fd - desc->fields]++;
    if (wt == 3 || wt == 4)
      wire_error(w, tag_at, tail, "wire type %s: protobuf groups are not used by ONNX", wire_type_name(wt));
    if (wt > 5)
      wire_error(w, tag_at, tail, "invalid wire type %d (not protobuf)", wt);
    if (fd) {
      int want = wire_type_of(fd->type);
      bool packed = wt == 2 && want != 2 && fd->label == PROTOBUF_C_LABEL_REPEATED;
      if (wt != want && !packed)
        wire_error(w, tag_at, tail, "field '%s' has wire type %s, but its type needs %s", fd->name,
                   wire_type_name(wt), wire_type_name(want));
    }
    switch (wt) {
    case 0:
      r = get_varint(w->d, end, &pos, &v);
      if (r == 1)
        wire_error(w, tag_at, tail, "truncated: a varint runs past the end of the %s",
                   w->depth > 1 ? "message" : "file");
      if (r == 2)
        wire_error(w, tag_at, tail, "a varint longer than 64 bits (not protobuf)");
      break;
    case 1:
    case 5: {
      size_t size = wt == 1 ? 8 : 4;
      if (end - pos < size)
        wire_error(w, tag_at, tail, "truncated: %zu bytes left for a %zu-byte value", end - pos, size);
      pos += size;
      break;
    }
    case 2: {
      size_t len_at = pos;
      r = get_varint(w->d, end, &pos, &v);
      if (r)
        wire_error(w, len_at, tail, "truncated: a length runs past the end of the %s", w->depth > 1 ? "message" : "file");
      if (v > end - pos)
        wire_error(w, tag_at, tail, "length %llu runs past the end of the %s (%zu bytes left)", (unsigned long long)v,
                   w->depth > 1 ? "enclosing message" : "file", end - pos);
      size_t at = pos, stop = pos + (size_t)v;
      if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE) {
        if (w->depth > PB_MAX_DEPTH)
          wire_error(w, tag_at, tail, "messages nested more than %d deep", PB_MAX_DEPTH);
        w->frames[w->depth++] = (Frame){fd->descriptor, at, stop, fd, index};
        walk(w);
        w->depth--;
      } else if (fd && wire_type_of(fd->type) != 2) {
        check_packed(w, fd, at, stop);
      }
      pos = stop;
      break;
    }
    }
  }
}

/* ------------------------------------------------------------------ */
/* protobuf-c's messages to the neutral model                          */

typedef struct {
  Arena *arena;
} Conv;

static void *pb_alloc(void *data, size_t size) { return arena_alloc(data, size); }
static void pb_free(void *data, void *p) { (void)data, (void)p; }

static const char *str(const char *s) { return s ? s : ""; }

static const char *at(Conv *c, const char *base, const char *key) {
  return arena_printf(c->arena, "%s/%s", base, key);
}

static const char *at_index(Conv *c, const char *base, const char *key, size_t i) {
  return arena_printf(c->arena, "%s/%s/%zu", base, key, i);
}

static OnnxGraph *conv_graph(Conv *c, const Onnx__GraphProto *pg, const char *path);

static void conv_tensor(Conv *c, const Onnx__TensorProto *pt, const char *path, OnnxTensor *t) {
  memset(t, 0, sizeof *t);
  t->path = path;
  t->name = str(pt->name);
  t->has_data_type = pt->has_data_type;
  t->data_type = pt->data_type;
  t->ndims = (int)pt->n_dims;
  t->dims = pt->dims;
  t->has_segment = pt->segment != NULL;
  t->data_location = pt->has_data_location ? (int64_t)pt->data_location : 0;
  t->nexternal = (int)pt->n_external_data;
  t->external = arena_alloc(c->arena, (pt->n_external_data + 1) * sizeof *t->external);
  for (size_t i = 0; i < pt->n_external_data; i++) {
    OnnxEntry *e = &t->external[i];
    e->path = at_index(c, path, "externalData", i);
    e->key = str(pt->external_data[i]->key);
    e->value = str(pt->external_data[i]->value);
  }
  t->has_raw = pt->has_raw_data;
  t->raw = pt->raw_data.data;
  t->raw_len = pt->raw_data.len;
  t->has_float = pt->n_float_data > 0, t->nfloat = pt->n_float_data, t->float_data = pt->float_data;
  t->has_double = pt->n_double_data > 0, t->ndouble = pt->n_double_data, t->double_data = pt->double_data;
  t->has_int64 = pt->n_int64_data > 0, t->nint64 = pt->n_int64_data, t->int64_data = pt->int64_data;
  t->has_uint64 = pt->n_uint64_data > 0, t->nuint64 = pt->n_uint64_data, t->uint64_data = pt->uint64_data;
  t->has_int32 = pt->n_int32_data > 0, t->nint32 = pt->n_int32_data;
  t->int32_data = arena_alloc(c->arena, (pt->n_int32_data + 1) * sizeof *t->int32_data);
  for (size_t i = 0; i < pt->n_int32_data; i++)
    t->int32_data[i] = pt->int32_data[i];
}

static void conv_attr(Conv *c, const Onnx__AttributeProto *pa, const char *path, OnnxAttr *a) {
  static const char *const types[] = {"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS",
                                      "INTS", "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR",
                                      "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
  a->path = path;
  a->name = str(pa->name);
  a->type = "";
  if (pa->has_type)
    a->type = pa->type >= 0 && pa->type < 15 ? types[pa->type] : arena_printf(c->arena, "%d", (int)pa->type);
  a->has_f = pa->has_f, a->f = pa->f;
  a->has_i = pa->has_i, a->i = pa->i;
  a->has_s = pa->has_s;
  a->s_len = pa->s.len;
  uint8_t *s = arena_alloc(c->arena, pa->s.len + 1);
  if (pa->s.len)
    memcpy(s, pa->s.data, pa->s.len);
  a->s = s;
  if (pa->t) {
    a->has_t = true;
    a->t = arena_alloc(c->arena, sizeof *a->t);
    conv_tensor(c, pa->t, at(c, path, "t"), a->t);
  }
  if (pa->g) {
    a->has_g = true;
    a->g = conv_graph(c, pa->g, at(c, path, "g"));
  }
  a->has_floats = pa->n_floats > 0, a->nfloats = (int)pa->n_floats;
  a->floats = arena_alloc(c->arena, (pa->n_floats + 1) * sizeof *a->floats);
  for (size_t i = 0; i < pa->n_floats; i++)
    a->floats[i] = pa->floats[i];
  a->has_ints = pa->n_ints > 0, a->nints = (int)pa->n_ints, a->ints = pa->ints;
  a->has_strings = pa->n_strings > 0, a->nstrings = (int)pa->n_strings;
  a->strings = arena_alloc(c->arena, (pa->n_strings + 1) * sizeof *a->strings);
  for (size_t i = 0; i < pa->n_strings; i++)
    a->strings[i] = arena_strndup(c->arena, (const char *)pa->strings[i].data, pa->strings[i].len);
  a->has_tensors = pa->n_tensors > 0, a->ntensors = (int)pa->n_tensors;
  a->tensors = arena_alloc(c->arena, (pa->n_tensors + 1) * sizeof *a->tensors);
  for (size_t i = 0; i < pa->n_tensors; i++)
    conv_tensor(c, pa->tensors[i], at_index(c, path, "tensors", i), &a->tensors[i]);
  a->has_graphs = pa->n_graphs > 0, a->ngraphs = (int)pa->n_graphs;
  a->graphs = arena_alloc(c->arena, (pa->n_graphs + 1) * sizeof *a->graphs);
  for (size_t i = 0; i < pa->n_graphs; i++)
    a->graphs[i] = conv_graph(c, pa->graphs[i], at_index(c, path, "graphs", i));
}

static const char **conv_names(Conv *c, char **names, size_t n) {
  const char **out = arena_alloc(c->arena, (n + 1) * sizeof *out);
  for (size_t i = 0; i < n; i++)
    out[i] = str(names[i]);
  return out;
}

static void conv_node(Conv *c, const Onnx__NodeProto *pn, const char *path, OnnxNode *n) {
  n->path = path;
  n->name = str(pn->name);
  n->op_type = pn->op_type;
  n->domain = str(pn->domain);
  n->ninputs = (int)pn->n_input, n->inputs = conv_names(c, pn->input, pn->n_input);
  n->noutputs = (int)pn->n_output, n->outputs = conv_names(c, pn->output, pn->n_output);
  n->nattrs = (int)pn->n_attribute;
  n->attrs = arena_alloc(c->arena, (pn->n_attribute + 1) * sizeof *n->attrs);
  for (size_t i = 0; i < pn->n_attribute; i++)
    conv_attr(c, pn->attribute[i], at_index(c, path, "attribute", i), &n->attrs[i]);
}

static void conv_value_info(Conv *c, const Onnx__ValueInfoProto *pv, const char *path, OnnxValueInfo *v) {
  v->path = path;
  v->name = str(pv->name);
  if (!pv->type || pv->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !pv->type->tensor_type)
    return;
  const Onnx__TypeProto__Tensor *tt = pv->type->tensor_type;
  v->has_tensor_type = true;
  v->has_elem_type = tt->has_elem_type, v->elem_type = tt->elem_type;
  if (!tt->shape)
    return;
  v->has_shape = true;
  const char *sp = at(c, path, "type/tensorType/shape");
  v->rank = (int)tt->shape->n_dim;
  v->dims = arena_alloc(c->arena, (tt->shape->n_dim + 1) * sizeof *v->dims);
  for (size_t d = 0; d < tt->shape->n_dim; d++) {
    const Onnx__TensorShapeProto__Dimension *pd = tt->shape->dim[d];
    OnnxDim *od = &v->dims[d];
    od->path = at_index(c, sp, "dim", d);
    if (pd->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      od->has_value = true, od->value = pd->dim_value;
    else if (pd->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
      od->param = str(pd->dim_param);
  }
}

static OnnxValueInfo *conv_value_infos(Conv *c, Onnx__ValueInfoProto **l, size_t n, const char *path, const char *key) {
  OnnxValueInfo *v = arena_alloc(c->arena, (n + 1) * sizeof *v);
  for (size_t i = 0; i < n; i++)
    conv_value_info(c, l[i], at_index(c, path, key, i), &v[i]);
  return v;
}

static OnnxGraph *conv_graph(Conv *c, const Onnx__GraphProto *pg, const char *path) {
  OnnxGraph *g = arena_alloc(c->arena, sizeof *g);
  g->path = path;
  g->name = str(pg->name);
  g->nnodes = (int)pg->n_node;
  g->nodes = arena_alloc(c->arena, (pg->n_node + 1) * sizeof *g->nodes);
  for (size_t i = 0; i < pg->n_node; i++)
    conv_node(c, pg->node[i], at_index(c, path, "node", i), &g->nodes[i]);
  g->ninitializers = (int)pg->n_initializer;
  g->initializers = arena_alloc(c->arena, (pg->n_initializer + 1) * sizeof *g->initializers);
  for (size_t i = 0; i < pg->n_initializer; i++)
    conv_tensor(c, pg->initializer[i], at_index(c, path, "initializer", i), &g->initializers[i]);
  g->ninputs = (int)pg->n_input, g->inputs = conv_value_infos(c, pg->input, pg->n_input, path, "input");
  g->noutputs = (int)pg->n_output, g->outputs = conv_value_infos(c, pg->output, pg->n_output, path, "output");
  g->nvalue_infos = (int)pg->n_value_info;
  g->value_infos = conv_value_infos(c, pg->value_info, pg->n_value_info, path, "valueInfo");
  return g;
}

static OnnxModel *conv_model(Conv *c, const Onnx__ModelProto *pm) {
  OnnxModel *m = arena_alloc(c->arena, sizeof *m);
  m->has_opset_list = pm->n_opset_import > 0;
  m->nopsets = (int)pm->n_opset_import;
  m->opsets = arena_alloc(c->arena, (pm->n_opset_import + 1) * sizeof *m->opsets);
  for (size_t i = 0; i < pm->n_opset_import; i++) {
    OnnxOpset *o = &m->opsets[i];
    o->path = at_index(c, "", "opsetImport", i);
    o->domain = str(pm->opset_import[i]->domain);
    o->has_version = pm->opset_import[i]->has_version;
    o->version = pm->opset_import[i]->version;
  }
  if (pm->graph)
    m->graph = conv_graph(c, pm->graph, "/graph");
  return m;
}

/* ------------------------------------------------------------------ */
/* The locator: a JSON pointer of the model to a byte offset           */

/* Where the elements of one big repeated message field are (a graph's
 * nodes): found once, so that locating every node is not quadratic. */
typedef struct {
  size_t msg_start;
  uint32_t field;
  size_t count;
  size_t *tags, *starts, *ends;
} Occurrences;

enum { PB_CACHE = 16, PB_CACHE_MIN_BYTES = 16384 };

typedef struct {
  const Source *src;
  const uint8_t *d;
  Arena *arena;
  Occurrences cache[PB_CACHE];
  int ncache;
} PbIndex;

/* Element k of field fd in message f (k = SIZE_MAX: the last one):
 * *tag the offset of its tag (of the element, inside a packed run), and
 * the payload of a length-delimited one. The bytes passed walk(). */
static bool find_element(const PbIndex *ix, const Frame *f, const ProtobufCFieldDescriptor *fd, size_t k,
                         size_t *tag, size_t *start, size_t *end) {
  const uint8_t *d = ix->d;
  size_t pos = f->start, seen = 0;
  bool found = false;
  int want = wire_type_of(fd->type);
  while (pos < f->end) {
    size_t tag_at = pos;
    uint64_t t, v;
    get_varint(d, f->end, &pos, &t);
    int wt = (int)(t & 7);
    bool mine = (t >> 3) == fd->id;
    size_t from = pos;
    if (wt == 0) {
      get_varint(d, f->end, &pos, &v);
    } else if (wt == 1 || wt == 5) {
      pos += wt == 1 ? 8 : 4;
    } else {
      get_varint(d, f->end, &pos, &v);
      from = pos;
      pos += (size_t)v;
    }
    if (!mine)
      continue;
    if (wt == 2 && want != 2) { /* packed: its elements */
      for (size_t p = from; p < pos; seen++) {
        size_t el = p;
        if (want == 0)
          get_varint(d, pos, &p, &v);
        else
          p += want == 1 ? 8 : 4;
        if (seen == k || k == SIZE_MAX)
          *tag = el, *start = el, *end = p, found = true;
        if (seen == k)
          return true;
      }
      continue;
    }
    if (seen == k || k == SIZE_MAX)
      *tag = tag_at, *start = from, *end = pos, found = true;
    if (seen++ == k)
      return true;
  }
  return found;
}

static const Occurrences *cached(PbIndex *ix, const Frame *f, const ProtobufCFieldDescriptor *fd) {
  for (int i = 0; i < ix->ncache; i++)
    if (ix->cache[i].msg_start == f->start && ix->cache[i].field == fd->id)
      return &ix->cache[i];
  if (ix->ncache == PB_CACHE || f->end - f->start < PB_CACHE_MIN_BYTES || fd->type != PROTOBUF_C_TYPE_MESSAGE)
    return NULL;
  Occurrences *o = &ix->cache[ix->ncache++];
  o->msg_start = f->start, o->field = fd->id;
  size_t n = 0, pos = f->start;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      o->tags = arena_alloc(ix->arena, (n + 1) * sizeof *o->tags);
      o->starts = arena_alloc(ix->arena, (n + 1) * sizeof *o->starts);
      o->ends = arena_alloc(ix->arena, (n + 1) * sizeof *o->ends);
      o->count = n, n = 0, pos = f->start;
    }
    while (pos < f->end) {
      size_t tag_at = pos;
      uint64_t t, v = 0;
      get_varint(ix->d, f->end, &pos, &t);
      int wt = (int)(t & 7);
      if (wt == 0)
        get_varint(ix->d, f->end, &pos, &v);
      else if (wt == 1 || wt == 5)
        pos += wt == 1 ? 8 : 4;
      else
        get_varint(ix->d, f->end, &pos, &v);
      if (wt == 2 && (t >> 3) == fd->id) {
        if (pass == 1)
          o->tags[n] = tag_at, o->starts[n] = pos, o->ends[n] = pos + (size_t)v;
        n++;
      }
      if (wt == 2)
        pos += (size_t)v;
    }
  }
  return o;
}

static bool is_index(const char *s, size_t len, size_t *out) {
  if (len == 0 || len > 18)
    return false;
  size_t v = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    v = v * 10 + (size_t)(s[i] - '0');
  }
  *out = v;
  return true;
}

/* protobuf's JSON name of a field back to its .proto name: "rawData" ->
 * "raw_data", "int32Data" -> "int32_data". */
static const char *proto_name(Arena *arena, const char *s, size_t len) {
  StrBuf sb = {0};
  for (size_t i = 0; i < len; i++) {
    if (s[i] >= 'A' && s[i] <= 'Z') {
      sb_putc(&sb, '_');
      sb_putc(&sb, (char)(s[i] - 'A' + 'a'));
    } else {
      sb_putc(&sb, s[i]);
    }
  }
  const char *out = arena_strdup(arena, sb_cstr(&sb));
  sb_free(&sb);
  return out;
}

/* The deepest element a pointer reaches: its offset and field path. */
static Loc pb_locate(void *data, const char *path) {
  PbIndex *ix = data;
  Frame frames[PB_MAX_DEPTH + 1];
  int n = 1;
  frames[0] = (Frame){&onnx__model_proto__descriptor, 0, ix->src->len, NULL, 0};
  size_t offset = 0;
  const char *tail = NULL;
  const char *p = path ? path : "";
  while (*p == '/' && n <= PB_MAX_DEPTH) {
    const char *seg = p + 1;
    size_t len = strcspn(seg, "/");
    p = seg + len;
    Frame *f = &frames[n - 1];
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field_by_name(f->desc, proto_name(ix->arena, seg, len));
    if (!fd)
      break;
    size_t k = SIZE_MAX, tag, start, end;
    bool repeated = fd->label == PROTOBUF_C_LABEL_REPEATED;
    if (repeated && *p == '/' && is_index(p + 1, strcspn(p + 1, "/"), &k))
      p += 1 + strcspn(p + 1, "/");
    const Occurrences *o = repeated && k != SIZE_MAX ? cached(ix, f, fd) : NULL;
    bool found;
    if (o) {
      found = k < o->count;
      if (found)
        tag = o->tags[k], start = o->starts[k], end = o->ends[k];
    } else {
      found = find_element(ix, f, fd, k, &tag, &start, &end);
    }
    if (!found)
      break;
    offset = tag;
    if (fd->type != PROTOBUF_C_TYPE_MESSAGE) {
      tail = k != SIZE_MAX && repeated ? arena_printf(ix->arena, "%s[%zu]", fd->name, k) : fd->name;
      break;
    }
    frames[n++] = (Frame){fd->descriptor, start, end, fd, k == SIZE_MAX ? 0 : k};
  }
  return byte_loc(ix->src, offset, field_path(ix->arena, ix->d, frames, n, tail));
}

/* ------------------------------------------------------------------ */
/* Entry points                                                        */

bool onnx_pb_sniff(const char *bytes, size_t len) {
  /* Text (a .tc spec, JSON) has no control bytes but whitespace; every
   * exporter writes a ModelProto's ir_version (field 1, a varint: 0x08)
   * first, and any protobuf is full of small tags and lengths. */
  for (size_t i = 0; i < len && i < 64; i++) {
    unsigned char c = (unsigned char)bytes[i];
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v')
      return true;
  }
  return len > 0 && (unsigned char)bytes[0] == 0x08;
}

Graph *graph_load_onnx_pb(const Source *src, const char *dir, const Module *specs, PtrVec *file_deps,
                          const GraphLoadOptions *opts, Arena *arena, Diag *diag) {
  PbIndex *ix = arena_alloc(arena, sizeof *ix);
  ix->src = src, ix->d = (const uint8_t *)src->text, ix->arena = arena;
  Graph *g = graph_new(arena, diag, pb_locate, ix, specs);
  graph_apply_options(g, opts);

  Walker *w = arena_alloc(arena, sizeof *w);
  w->src = src, w->d = ix->d, w->diag = diag, w->arena = arena;
  w->frames[0] = (Frame){&onnx__model_proto__descriptor, 0, src->len, NULL, 0};
  w->depth = 1;
  walk(w);

  ProtobufCAllocator alloc = {pb_alloc, pb_free, arena};
  Onnx__ModelProto *pm = onnx__model_proto__unpack(&alloc, src->len, ix->d);
  if (!pm) /* walk() passed it: protobuf-c disagrees about something */
    diag_error(diag, byte_loc(src, 0, "model"), "protobuf-c cannot decode this ModelProto");
  Conv c = {arena};
  const OnnxModel *m = conv_model(&c, pm);
  onnx_import(g, m, src->name, dir, file_deps);
  return g;
}
