/* lower.c - a Graph as one Kernel of structured ops (see graph.h). STUB: being written. */
#include "graph/graph.h"
