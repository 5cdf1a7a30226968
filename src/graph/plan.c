/* plan.c - buffer planning (see passes.h). STUB: being written. */
#include "graph/passes.h"
