/* fold.c - constant folding at generation time (see graph.h). STUB: being written. */
#include "graph/graph.h"
