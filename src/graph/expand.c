/* expand.c - composite graph ops written from primitives (see graph.h). STUB: being written. */
#include "graph/graph.h"
