/* fuse.c - producer-consumer fusion (see passes.h). STUB: being written. */
#include "graph/passes.h"
