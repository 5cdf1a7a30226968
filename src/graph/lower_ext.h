/* lower_ext.h - lowering of non-structured graph ops (lower_ext.c) into
 * ExtOp kernel steps, and the small part of lower.c's state it uses. Kept
 * apart from lower.c so that each op's lowering lives in one place and
 * lower.c only dispatches. */
#ifndef LGEN_GRAPH_LOWER_EXT_H
#define LGEN_GRAPH_LOWER_EXT_H

#include "graph/graph.h"

typedef struct Lower Lower;

/* lower.c */
const Graph *lower_graph(const Lower *L);
const GraphNode *lower_node_of(const Lower *L);
Arena *lower_arena(const Lower *L);
Loc lower_loc(const Lower *L);
int lower_read(Lower *L, int i);  /* the kernel tensor the node reads as input i */
int lower_write(Lower *L, int i); /* the kernel tensor the node writes as output i */
const TensorParam *lower_tensor(Lower *L, int t);
/* A workspace tensor only the current op uses (an ext op's scratch). */
int lower_scratch(Lower *L, const char *name, ElemType type, int rank, AffineExpr **shape);
void lower_push(Lower *L, StructuredOp *op);

/* lower_ext.c: the current node (class EXT, or a gather) as one ExtOp. */
void lower_ext(Lower *L);

#endif
