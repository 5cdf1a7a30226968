/* graph_load.h - the model front-ends: a file's bytes to a Graph
 * (graph/graph.h).
 *
 *   graph_json.c      lgen-graph/1 (JSON), and the sniffing of JSON models
 *   onnx_read_json.c  ONNX in protobuf's JSON mapping  } both through
 *   onnx_read_pb.c    ONNX as binary protobuf (.onnx)  } onnx_json.c
 *
 * Each installs its locator in the graph it makes (GraphLocate), so the
 * stages after it locate diagnostics without knowing the file's form. */
#ifndef LGEN_GRAPH_LOAD_H
#define LGEN_GRAPH_LOAD_H

#include "graph/graph.h"

/* True if the text looks like a model graph (a JSON object); which kind is
 * told apart by content: a "format" member says lgen-graph/1, a "graph"
 * member with "node" says ONNX. */
bool graph_json_sniff(const char *text, size_t len);
/* Parses src (either JSON form) into a Graph. `dir` is the folder of the
 * file, for constants given as files; file_deps collects the paths read
 * (for -MD). */
Graph *graph_load_json(const Source *src, const char *dir, const Module *specs, PtrVec *file_deps,
                       const GraphLoadOptions *opts, Arena *arena, Diag *diag);
Graph *graph_load_lgen(const Source *src, void *json_root, const char *dir, const Module *specs,
                       PtrVec *file_deps, const GraphLoadOptions *opts, Arena *arena, Diag *diag);
Graph *graph_load_onnx(const Source *src, void *json_root, const char *dir, const Module *specs,
                       PtrVec *file_deps, const GraphLoadOptions *opts, Arena *arena, Diag *diag);
/* A binary ONNX model (onnx_read_pb.c); onnx_pb_sniff tells it from text by
 * content. */
Graph *graph_load_onnx_pb(const Source *src, const char *dir, const Module *specs, PtrVec *file_deps,
                          const GraphLoadOptions *opts, Arena *arena, Diag *diag);
bool onnx_pb_sniff(const char *bytes, size_t len);

#endif
