/* json_locate.c - JSON pointer to byte offset (see graph.h). STUB: being written. */
#include "graph/graph.h"
