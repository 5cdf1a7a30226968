/* graph.h - model graphs: a DAG of tensor ops with value semantics.
 *
 * The model front-ends (frontend/graph_load.h: lgen-graph/1, and ONNX as
 * JSON or binary protobuf) build a Graph through the builder below, one node
 * at a time in dependency order. The builder owns the semantics every
 * front-end shares:
 *
 *   build.c   values, nodes, name lookup, attribute access, type and shape
 *             inference (NumPy broadcasting, symbolic dims), diagnostics
 *             located by path through the front-end's locator (GraphLocate)
 *   fold.c    constant folding at generation time: a node whose inputs are
 *             all constants becomes a constant (i64 constants may hold
 *             symbolic values, so Shape -> Gather -> Concat -> Reshape chains
 *             fold even with symbolic dims)
 *   expand.c  composite ops written from primitives (softmax, log-softmax)
 *
 * lower.c then turns a Graph into one Kernel of structured ops (the IR the
 * .tc path uses), and plan.c places its intermediates in one workspace.
 *
 * Shapes are AffineExprs in the graph's symbolic dims (AE_CONST, AE_SIZE
 * with index = symbol number, and + - * floordiv ceildiv of those), so a
 * graph's symbols become the kernel's size parameters unchanged. */
#ifndef LGEN_GRAPH_H
#define LGEN_GRAPH_H

#include "ir/ir.h"

#define X(e, name, nin_min, nin_max, nout, cls) GOP_##e,
typedef enum {
#include "graph/graph_ops.def"
  GOP_COUNT
} GraphOp;
#undef X

typedef enum {
  GC_UNARY,
  GC_BINARY,
  GC_TERNARY,
  GC_CONTRACT,
  GC_CONV,
  GC_POOL,
  GC_REDUCE,
  GC_LAYOUT,
  GC_SOURCE,
  GC_SHAPE,
  GC_COMPOSITE,
  GC_CALL,
  GC_EXT,
} GraphOpClass;

typedef struct {
  const char *name;
  int min_inputs, max_inputs;
  int outputs;
  GraphOpClass cls;
} GraphOpInfo;

const GraphOpInfo *graph_op_info(GraphOp op);
bool graph_op_lookup(const char *name, GraphOp *out);

/* ---- attributes ---- */
typedef enum { GA_INT, GA_FLOAT, GA_INTS, GA_FLOATS, GA_STRING, GA_INTS2 } GraphAttrKind;

typedef struct {
  const char *name;
  GraphAttrKind kind;
  int64_t i;       /* GA_INT */
  double f;        /* GA_FLOAT */
  const char *s;   /* GA_STRING */
  int n;           /* GA_INTS, GA_FLOATS: element count; GA_INTS2: pairs */
  int64_t *ints;   /* GA_INTS; GA_INTS2: 2n values, [lo0, hi0, lo1, hi1, ...] */
  double *floats;  /* GA_FLOATS */
  const char *path; /* where the attribute is (a path, see GraphLocate); may be NULL */
} GraphAttr;

/* ---- values and nodes ---- */
typedef enum { GV_INPUT, GV_CONST, GV_NODE } GraphValueKind;

typedef struct {
  const char *name;
  ElemType type;
  int rank;
  AffineExpr **shape;  /* rank extents, in symbols only */
  GraphValueKind kind;
  int producer;        /* GV_NODE: index of the node */
  /* GV_CONST: the elements. Shapes of constants are static; count is their
   * product. data holds little-endian element bytes, row-major (i1 one byte
   * each), or is NULL when sym is set: an i64 constant whose elements
   * depend on symbolic dims, one expression per element. */
  int64_t count;
  const void *data;
  AffineExpr **sym;
  bool is_output;
  const char *path;    /* where it is defined (a path, see GraphLocate) */
} GraphValue;

typedef struct {
  const char *name;    /* "" when the file gives none */
  GraphOp op;
  int ninputs;
  int *inputs;         /* value indices; -1: an omitted optional input */
  int noutputs;
  int *outputs;
  int nattrs;
  GraphAttr *attrs;
  const char *path;    /* where the node is (a path, see GraphLocate: /graph/node/12) */
  const char *origin;  /* the operator it came from (ONNX opType, or the op name) */
  const Kernel *def;   /* GOP_CALL: the def of a .tc spec it runs */
  int listed_outputs;  /* the outputs its lgen-graph/1 node lists (an EXT op's trailing outputs may be
                        * optional: scan's accumulator); 0: the op decides */
} GraphNode;

typedef struct {
  int *items;
  int len, cap;
} IntVec;

void intvec_push(Arena *arena, IntVec *v, int x);

typedef struct NameIndex NameIndex;

/* Where an element of the model file is. Every element of a graph names its
 * place by a path that only the front-end that made the graph interprets:
 * all three readers use JSON pointers in the file's own field names
 * ("/nodes/3/inputs/1", "/graph/node/5/attribute/2", for binary ONNX the
 * fields of protobuf's JSON mapping). The front-end installs a locator with
 * the graph (graph_new) that turns a path into a Loc: line:col in JSON text
 * (frontend/json_locate.h), a byte offset and field path in protobuf bytes;
 * a path that does not resolve goes to its deepest existing prefix. The
 * builder and everything after it only pass paths along (the builder
 * appends "/outputs" to a node's path, and numbers a node without a name by
 * its path's last index in messages), so no stage past the front-ends reads
 * the model's text. A locator must cost little per call after its
 * first: lowering locates every value of a big model. */
typedef Loc (*GraphLocate)(void *locate_data, const char *path);

/* --dim NAME=VALUE (rank 0: values[0] for the symbolic dim NAME),
 * --input-shape NAME=D0,D1,... (the shape of input NAME) or --input-value
 * NAME=V0,V1,... (input NAME is a constant of the values in `text`, read
 * for its type when it is declared). `used` is set by each graph that
 * applies it; one that no graph used is a usage error. */
typedef struct {
  const char *arg; /* as given, for messages */
  const char *name;
  int rank;
  int64_t values[LG_MAX_RANK];
  bool is_shape;
  const char *text; /* --input-value: the values as given; NULL otherwise */
  bool used;
} GraphDimOverride;

/* What the command line decides about loading one model: the bounds on
 * what a model file may make lgen do (man page, SECURITY). */
typedef struct {
  /* The most bytes of constants lgen holds for the model at once: those it
   * reads, those importers build (OneHot's positions, Trilu's mask, ...)
   * and those folding computes. Beyond it a constant the model needs is a
   * located error, and folding leaves the node to run time. 0: the default. */
  int64_t max_constant_bytes;
  /* Folders besides the model's own from which it may read data files
   * (--allow-external; util/data_file.h has the policy). */
  const char *const *allow_external;
  int nallow_external;
  /* --dim and --input-shape, applied as inputs are declared (before any
   * shape is inferred, so everything downstream folds) */
  GraphDimOverride *dims;
  int ndims;
} GraphLoadOptions;

#define GRAPH_DEFAULT_MAX_CONSTANT_BYTES (INT64_C(1) << 31)

typedef struct {
  Arena *arena;
  Diag *diag;
  const char *name;    /* the graph's name (the C entry points derive from it) */
  const char *name_path; /* where the file gives it (NULL: it does not) */
  PtrVec symbols;      /* const char*: symbolic dims, in order of first appearance */
  PtrVec values;       /* GraphValue* */
  PtrVec nodes;        /* GraphNode*, in dependency order */
  IntVec inputs;       /* values that are run-time inputs, in declaration order */
  IntVec outputs;      /* values that are outputs, in declaration order */
  const Module *specs; /* defs a node may call by name (may be NULL) */
  NameIndex *index;    /* value lookup by name */
  int temp_counter;    /* for generated value names */
  GraphLocate locate;  /* the front-end's (NULL: paths locate nowhere, a {0} Loc) */
  void *locate_data;
  const GraphNode *at; /* the node being built: shape arithmetic's errors name it */
  PtrVec assumes;      /* SizeAssume*: dims taken as equal, checked at run time */
  /* While a node of an lgen-graph/1 file is built: the attribute names the
   * builder asks it for (graph_attr), so that a name it never asks for is
   * reported as unknown, with the nearest of them as a suggestion. */
  const GraphNode *attr_node;
  PtrVec *attr_asked;
  int64_t const_bytes;     /* of every constant so far (graph_add_const, folding) */
  int64_t max_const_bytes; /* GraphLoadOptions.max_constant_bytes */
  const GraphLoadOptions *load; /* as graph_apply_options got them (NULL: the defaults) */
} Graph;

#define GRAPH_VALUE(g, v) ((GraphValue *)(g)->values.items[(v)])
#define GRAPH_NODE(g, n) ((GraphNode *)(g)->nodes.items[(n)])

/* ---- build.c ---- */
Graph *graph_new(Arena *arena, Diag *diag, GraphLocate locate, void *locate_data, const Module *specs);
void graph_apply_options(Graph *g, const GraphLoadOptions *opts); /* NULL: the defaults */

/* Diagnostics at a path, located by the graph's locator: "FILE:LINE:COL:
 * error: MESSAGE" with the caret under the value the path names (or the
 * nearest enclosing value that exists), as every other lgen error, or
 * "byte N (FIELD PATH): error: MESSAGE" for a binary model. */
Loc graph_loc(const Graph *g, const char *path);
void graph_error(const Graph *g, const char *path, const char *fmt, ...) LG_PRINTF(3, 4) LG_NORETURN;
void graph_warning(const Graph *g, const char *path, const char *fmt, ...) LG_PRINTF(3, 4);
/* "node 'fc1' (MatMul): " or "node 3 (MatMul): ": the prefix of errors about a node. */
const char *graph_node_desc(const Graph *g, const GraphNode *n);

int graph_symbol(Graph *g, const char *name);     /* its index; added if new */
int graph_find(const Graph *g, const char *name); /* a value index, or -1 */

/* The shape of input `input` as the model declares it, dim d static
 * values[d] where syms[d] is NULL, else the symbolic dim syms[d]; with the
 * command line's --input-shape for the input and --dim for its symbols
 * applied (a usage error when they do not fit: a rank or a static extent
 * that differs; a static 0 is ONNX's "unknown" and may be given). */
AffineExpr **graph_input_shape(Graph *g, const char *input, int rank, const int64_t *values,
                               const char *const *syms);

/* Each add_* checks that the name is new (else a located error) and returns
 * the value's index. */
int graph_add_input(Graph *g, const char *name, ElemType t, int rank, AffineExpr **shape, const char *path);

/* The graph assumes dim a >= b where lgen cannot prove it (a symbolic
 * length that some semantics need above 1); the entry point checks it at
 * run time (SizeAssume). `what` names the node and says why. */
void graph_assume_at_least(Graph *g, const AffineExpr *a, const AffineExpr *b, const char *what);
/* data: count * element-size bytes, copied into the arena; counted against
 * the constant budget (a located error at path beyond it). */
int graph_add_const(Graph *g, const char *name, ElemType t, int rank, const int64_t *shape, const void *data,
                    const char *path);
/* An i64 constant of rank 0 or 1 whose elements are expressions in the symbols. */
int graph_add_sym_const(Graph *g, const char *name, int64_t count, AffineExpr **elems, bool scalar,
                        const char *path);

/* Adds a node of `op` reading `inputs` (-1 for an omitted optional input).
 * Checks arity and attributes, infers the output types and shapes (a
 * located error when they do not fit), and folds the node into constants
 * when every input is one and fold.c can evaluate it. Composite ops expand
 * into primitives here. Outputs get the names in out_names (NULL, or NULL
 * entries: fresh names). Returns the index of the first output value; the
 * others follow it consecutively. `origin` names the source operator for
 * messages (NULL: the op's own name); `path` is the node's (GraphLocate). */
int graph_add_node(Graph *g, GraphOp op, const char *node_name, int ninputs, const int *inputs, int nattrs,
                   const GraphAttr *attrs, const char **out_names, const char *path, const char *origin);
/* The same for a node that lists `listed` outputs, all named (lgen-graph/1):
 * an EXT op with optional trailing outputs (scan's accumulator) has as many;
 * any other count than the op's is a located error at PATH/outputs. */
int graph_add_node_listed(Graph *g, GraphOp op, const char *node_name, int ninputs, const int *inputs, int nattrs,
                          const GraphAttr *attrs, const char **out_names, int listed, const char *path);
/* A call of a .tc def: its tensor inputs bound in order, size symbols from
 * the input shapes. */
int graph_add_call(Graph *g, const Kernel *def, const char *node_name, int ninputs, const int *inputs,
                   const char **out_names, const char *path);
void graph_add_output(Graph *g, int value, const char *path);

/* Attribute access: NULL / the default when absent; a located error when
 * present with the wrong kind. */
const GraphAttr *graph_attr(const Graph *g, const GraphNode *n, const char *name);
int64_t graph_attr_int(const Graph *g, const GraphNode *n, const char *name, int64_t dflt);
double graph_attr_float(const Graph *g, const GraphNode *n, const char *name, double dflt);
const char *graph_attr_string(const Graph *g, const GraphNode *n, const char *name, const char *dflt);

/* Shapes */
/* For an error about dims that must be static: "; the symbolic dim 'N'
 * can be fixed with --dim N=VALUE" naming the symbols in dims[0..n) (""
 * when there are none), so that the user learns which dim blocks and how
 * to fix it. */
const char *graph_dims_hint(const Graph *g, int n, AffineExpr *const *dims);
/* The same hint for a value computed at run time from symbolic dims (a
 * Shape's values through an op that folding cannot follow exactly: a
 * float Cast, a Mod of a dim, ...): the symbols it depends on; "" when
 * it depends on none. */
const char *graph_runtime_dims_hint(const Graph *g, int value);
/* "; it is computed from symbolic dims through ops that ...; the symbolic
 * dim 'S' can be fixed with --dim S=VALUE", or "": for errors about a
 * value that must be known when generating code. */
const char *graph_runtime_dims_why(const Graph *g, int value);
/* The closest of names[0..count) to name when it looks like a misspelling
 * of it (edit distance at most 2, or a third of its length); else NULL. */
const char *graph_suggest(const char *name, const char *const *names, int count);
AffineExpr *graph_dim_const(Graph *g, int64_t v);
bool graph_dim_value(const AffineExpr *d, int64_t *v);          /* true if constant */
bool graph_dims_equal(Arena *arena, const AffineExpr *a, const AffineExpr *b); /* as polynomials */
/* a + b, a - b, a * b, a floordiv / ceildiv / mod b, simplified as shape
 * inference simplifies its own dims (constants folded, overflow an error
 * naming the node being built, nested divisions by constants merged). */
AffineExpr *graph_dim_arith(Graph *g, AffineKind kind, AffineExpr *a, AffineExpr *b);
/* Total element count as an expression. */
AffineExpr *graph_numel(Graph *g, const GraphValue *v);
/* A dim as text ("H floordiv 16 + 1"), for messages. */
const char *graph_dim_str(const Graph *g, const AffineExpr *d);
/* Element size in bytes (i1: 1; f16: 2). */
int graph_elem_bytes(ElemType t);
/* Zeroed room for the data of a constant of `count` elements that an
 * importer builds (it then goes to graph_add_const): checked against the
 * constant budget before anything is allocated, so that a size read from
 * the model (OneHot's depth, ...) gives a located error at path, naming
 * `what`, instead of exhausting memory. */
void *graph_const_buffer(Graph *g, ElemType t, int64_t count, const char *path, const char *what);
/* The same check alone (before reading a constant's data): its bytes. */
int64_t graph_const_check(Graph *g, ElemType t, int64_t count, const char *path, const char *what);
/* Whether `bytes` more of constants fit in the budget (folding asks). */
bool graph_const_fits(const Graph *g, int64_t bytes);
/* Element i of a constant as double / int64 (any element type; values
 * beyond int64's range saturate: floats, and u64 from 2^63 on). */
double graph_const_f(const GraphValue *v, int64_t i);
int64_t graph_const_i(const GraphValue *v, int64_t i);

/* One output's inferred type and shape. */
typedef struct {
  ElemType type;
  int rank;
  AffineExpr *shape[LG_MAX_RANK];
} GraphShape;

/* ---- build_ext.c ---- */
/* Checks the attributes and inputs of a node of class EXT (a located error
 * when they do not fit), normalises its attributes in place (axes
 * non-negative, defaults filled in) and infers its outputs; returns their
 * count. */
int graph_ext_infer(Graph *g, GraphNode *n, GraphShape *outs);
/* rnn's activation names (build_ext.c), NULL-terminated; an activation's
 * index is its code in templates/rnn.c */
extern const char *const graph_rnn_activations[];

/* ---- fold.c ---- */
/* Evaluates node n (all inputs constant) into constants; false if the op or
 * its types are not foldable (the node then runs at run time). */
bool graph_fold_node(Graph *g, GraphNode *n);

/* ---- fold_bn.c ---- */
/* Folds per-channel scale and shift (mul, div, add, sub by a constant that
 * varies only along the output-channel axis: inference BatchNormalization,
 * Gemm's alpha and bias) into the constant weights and bias of the conv or
 * matmul that feeds it, when each value of the chain has no other reader.
 * The chain's nodes leave the graph (an op without a bias input keeps one
 * add of the folded bias). One line per fold goes to `notes` (const char*),
 * for --print-schedule. */
void graph_fold_scale_shift(Graph *g, PtrVec *notes);
/* share_input.c: matmuls reading one activation with constant [K, N_i]
 * weights become one matmul over the concatenated weights, each result a
 * slice of it; one note per group. */
void graph_share_inputs(Graph *g, PtrVec *notes);

/* ---- conv_algo.c ---- */
/* A schedule file's algorithm for the conv writing `tensor`. */
typedef struct {
  const char *tensor;
  const char *algorithm; /* direct, im2col, winograd or winograd6 */
  Loc loc;
} ConvAlgoChoice;
/* Each 2-D conv (conv_2d_nhwc_hwcf, or conv with one group) runs by its
 * algorithm (the file's choice, the node's `algorithm` attribute, or with
 * auto_winograd Winograd F(2x2, 3x3) where it pays): direct leaves it;
 * im2col and winograd replace it by their ops (lgen(1), SCHEDULES). One
 * note per conv with a choice. A choice that names no conv or does not
 * apply is a located error. */
void graph_conv_algorithms(Graph *g, const ConvAlgoChoice *choices, int nchoices, bool auto_winograd,
                           PtrVec *notes);
/* Rewriting helpers: the nodes appended from index `first` on take the
 * place of the node at `at`, which leaves the graph; the last appended node
 * writes value y instead of its own (so readers of y are unchanged). */
void graph_write_result(Graph *g, int y);
void graph_replace_node(Graph *g, int at, int first);

/* ---- fold_diag.c ---- */
/* matmul(diag(v), b) becomes v[:, None] * b (a row scaling) and
 * matmul(a, diag(v)) becomes a * v (a column scaling): the n x n diagonal
 * matrix is never materialised for that reader. One note per fold. */
void graph_fold_diag(Graph *g, PtrVec *notes);

/* ---- widen_f16.c ---- */
/* Contractions, convs and sum/mean/prod reductions of f16 values run in
 * f32 between casts (their accumulators in f32, the result rounded once).
 * One note per node. */
void graph_widen_f16(Graph *g, PtrVec *notes);

/* ---- softmax_pattern.c ---- */
/* Softmax and log-softmax written from primitives (reduce_max, sub, exp,
 * reduce_sum, div or log and sub, over one axis) become one online_softmax
 * node; a scaling by one constant just before it becomes its `scale`. One
 * note per softmax found. */
void graph_recognize_softmax(Graph *g, PtrVec *notes);

/* ---- expand.c ---- */
/* softmax(x) along axis = exp(x - max) / sum(exp(x - max)), from reduce_max,
 * sub, exp, reduce_sum and div; log = true: (x - max) - log(sum). Returns the
 * value index of the result, named `out_name` (NULL: fresh). */
int graph_softmax(Graph *g, int x, int64_t axis, bool log, const char *out_name, const char *path,
                  const char *origin);

/* ---- print.c ---- */
/* The graph as text, one line per input, constant, node and output
 * (--dump=parse, --dump=graph). */
void graph_print(StrBuf *out, const Graph *g);

/* ---- lower.c ---- */
/* The whole graph as one Kernel: tensors are the inputs (TS_PARAM), the
 * outputs (TS_PARAM, is_output), constants (TS_CONST), intermediates
 * (TS_WORKSPACE) and aliases (TS_ALIAS, for reshapes of contiguous data);
 * sizes are the graph's symbols; ops run in order. The kernel's name is the
 * graph's (C-safe, --name overrides it). */
Kernel *graph_lower(const Graph *g, const char *name, Arena *arena, Diag *diag);

#endif
