/* graph_json.c - lgen-graph/1 JSON to a Graph (see graph/graph.h). STUB: being written. */
#include "graph/graph.h"
