/* onnx_json.c - ONNX models in protobuf's JSON mapping to a Graph (see graph/graph.h). STUB: being written. */
#include "graph/graph.h"
