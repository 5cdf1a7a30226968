/* build.c - the graph builder (see graph.h). STUB: being written. */
#include "graph/graph.h"
