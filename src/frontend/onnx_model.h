/* onnx_model.h - an ONNX model in memory, as the two readers deliver it to
 * the one importer.
 *
 *   onnx_read_json.c  protobuf's JSON mapping (a Jansson tree)
 *   onnx_read_pb.c    the binary protobuf (.onnx), through protobuf-c
 *   onnx_json.c       the importer: this model -> a Graph (graph/graph.h),
 *                     operator by operator (the onnx_*.inc files)
 *
 * The model is neutral: strings are NUL-terminated arena copies, numbers
 * are decoded (int64 from JSON strings, floats from "NaN"), bytes are raw
 * (STRING attributes and rawData undone from base64), and each field says
 * whether it was present, as proto2 does. What the importer decides
 * (element types, which data field counts, attribute types) it still
 * decides from these fields, so both forms give the same graph and the same
 * messages.
 *
 * Every element carries `path`: a JSON pointer in protobuf's JSON names
 * ("/graph/node/5/attribute/2"). The reader installs the graph's locator,
 * which finds it in the JSON text (json_locate.h) or in the protobuf bytes
 * (onnx_read_pb.c's, as a byte offset and field path), whichever the model
 * came from. */
#ifndef LGEN_ONNX_MODEL_H
#define LGEN_ONNX_MODEL_H

#include "graph/graph.h"

typedef struct OnnxGraph OnnxGraph;

typedef struct {
  const char *key, *value;
  const char *path;
} OnnxEntry; /* StringStringEntryProto */

/* TensorProto. The typed fields hold what the file holds; which of them is
 * the data depends on data_type, which the importer checks. */
typedef struct {
  const char *path;
  const char *name; /* "" when absent */
  bool has_data_type;
  int64_t data_type;
  int ndims;
  int64_t *dims;
  bool has_segment;
  int64_t data_location; /* 0 DEFAULT, 1 EXTERNAL */
  int nexternal;
  OnnxEntry *external;
  bool has_raw;
  const uint8_t *raw;
  size_t raw_len;
  bool has_float, has_double, has_int32, has_int64, has_uint64; /* the field is present */
  size_t nfloat, ndouble, nint32, nint64, nuint64;
  float *float_data;
  double *double_data;
  int64_t *int32_data; /* int32, and the small types and float16 bits it carries */
  int64_t *int64_data;
  uint64_t *uint64_data;
} OnnxTensor;

/* AttributeProto. `type` is the AttributeType's name ("INT", "FLOATS",
 * ...), or "" when the file leaves it out (old exporters). */
typedef struct {
  const char *path;
  const char *name;
  const char *type;
  bool has_f, has_i, has_s, has_t, has_g;
  bool has_floats, has_ints, has_strings, has_tensors, has_graphs; /* present, maybe empty */
  double f;
  int64_t i;
  const uint8_t *s; /* bytes; s_len of them (NUL-terminated too) */
  size_t s_len;
  OnnxTensor *t;
  OnnxGraph *g;
  int nfloats, nints, nstrings, ntensors, ngraphs;
  double *floats;
  int64_t *ints;
  const char **strings;
  OnnxTensor *tensors;
  OnnxGraph **graphs;
} OnnxAttr;

typedef struct {
  const char *path;
  const char *name;   /* "" when absent */
  const char *op_type; /* NULL when absent */
  const char *domain;  /* "" when absent */
  int ninputs, noutputs, nattrs;
  const char **inputs; /* "" for an omitted optional input */
  const char **outputs;
  OnnxAttr *attrs;
} OnnxNode;

typedef struct {
  const char *path;
  bool has_value;
  int64_t value;
  const char *param; /* NULL when absent */
} OnnxDim;

/* ValueInfoProto, with the tensor type flattened. */
typedef struct {
  const char *path;
  const char *name; /* "" when absent */
  bool has_tensor_type; /* type.tensorType */
  bool has_elem_type;
  int64_t elem_type;
  bool has_shape;
  int rank;
  OnnxDim *dims;
} OnnxValueInfo;

struct OnnxGraph {
  const char *path; /* "/graph", or an attribute's ".../g" */
  const char *name; /* "" when absent */
  int nnodes, ninitializers, ninputs, noutputs, nvalue_infos;
  OnnxNode *nodes;
  OnnxTensor *initializers;
  OnnxValueInfo *inputs, *outputs, *value_infos;
};

typedef struct {
  const char *path;
  const char *domain; /* "" when absent */
  bool has_version;
  int64_t version;
} OnnxOpset;

typedef struct {
  int nopsets;
  bool has_opset_list; /* the file has an opsetImport member (maybe empty) */
  OnnxOpset *opsets;
  OnnxGraph *graph; /* NULL when the file has none */
} OnnxModel;

/* The readers (graph_load_onnx, graph_load_onnx_pb in graph_load.h) make
 * the graph with their locator, read the model into the form above (a
 * located error, graph_error, for what does not fit the schema) and hand it
 * to the importer. */

/* The importer (onnx_json.c): the model onto g. `file` is the model's
 * name as given (the entry point's name may derive from it). */
void onnx_import(Graph *g, const OnnxModel *m, const char *file, const char *dir, PtrVec *file_deps);

#endif
