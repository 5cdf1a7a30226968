/* ir.h - the structured-op IR, in the spirit of linalg.generic.
 *
 * A Module holds Kernels (one per `def`, one C function each). A Kernel has
 * parameters (tensors, size symbols, attributes) and a sequence of
 * StructuredOps, one per comprehension, run in order. A StructuredOp is
 *   - an iteration domain: Dims, each parallel or reduction, with an extent
 *     (an affine expression in size symbols);
 *   - Operands: accesses of a tensor parameter through an affine indexing map
 *     (one AffineExpr per tensor dimension, in dims/sizes/attributes);
 *   - a payload: a DAG of scalar ops over the operands' elements, and one
 *     Yield per written output.
 * Every later stage (analysis, schedules, C emission) works from these
 * properties alone; nothing here knows a named op or the .tc syntax. */
#ifndef LGEN_IR_H
#define LGEN_IR_H

#include "diag.h"

enum { LG_MAX_RANK = 16, LG_MAX_DIMS = 32, LG_MAX_ARGS = 3 };
/* Per-thread buffers of generated code (pack buffers, a template's scratch,
 * a softmax group's chunk buffers) exist for at most this many threads;
 * the parallel regions that use them ask for no more. */
enum { LG_SCRATCH_THREAD_SLOTS = 16 };
/* a model graph's run-time record of its thread counts (the generated
 * lgen_team, 88 bytes), at its workspace's end */
enum { LG_TEAM_BYTES = 128 };

#define X(e, name, bits, kind, c, lo, hi, onnx) TY_##e,
typedef enum {
#include "ir/elem_types.def"
  TY_COUNT
} ElemType;
#undef X

/* ---- types.c: the element types' properties, from elem_types.def ---- */
const char *elem_type_name(ElemType t);    /* "f32" */
bool elem_type_parse(const char *name, ElemType *out);
/* The accepted spellings, for messages: "f16, f32, ..., u64". */
const char *elem_type_names(void);
bool elem_type_is_float(ElemType t);
bool elem_type_is_unsigned(ElemType t); /* u8..u64 (not i1) */
int elem_type_bits(ElemType t);
int elem_type_bytes(ElemType t);        /* in memory: i1 takes a byte */
const char *elem_type_c_name(ElemType t); /* "float", "uint8_t", "lgen_f16", ... */
const char *elem_type_c_lowest(ElemType t);
const char *elem_type_c_highest(ElemType t);
/* ONNX TensorProto.DataType codes (false: lgen has no such type). */
bool elem_type_from_onnx(int64_t code, ElemType *out);
int elem_type_onnx(ElemType t);

/* Integer values of any integer type travel as int64_t: the value for
 * signed types and i1, the value's bits for unsigned ones (so a u64 from
 * 2^63 on reads negative; compare, divide and convert through these). */
int64_t elem_int_wrap(ElemType t, uint64_t bits); /* what C gives bits converted to t */
int64_t elem_int_lowest(ElemType t);
int64_t elem_int_highest(ElemType t);
bool elem_int_less(ElemType t, int64_t a, int64_t b);
double elem_int_to_double(ElemType t, int64_t v);
/* v converted to t, saturated to t's range (NaN: 0); exact for integral
 * values in range. */
int64_t elem_int_saturate(ElemType t, double v);
/* The IEEE binary16 bits of x, rounded to nearest even once from the
 * double; beyond f16's range an infinity, NaN a quiet NaN (0x7e00), both
 * with x's sign. */
uint16_t elem_f16_bits(double x);

/* ---- affine.c ---- */
typedef enum {
  AE_CONST,    /* value */
  AE_DIM,      /* index: a Dim of the op */
  AE_SIZE,     /* index: a size symbol of the kernel */
  AE_ATTR,     /* index: an attribute; elem: flat element (0 for scalars) */
  AE_NEG,      /* -lhs */
  AE_ADD,      /* lhs + rhs */
  AE_SUB,      /* lhs - rhs */
  AE_MUL,      /* lhs * rhs; one side has no dims */
  AE_FLOORDIV, /* rhs has no dims */
  AE_CEILDIV,
  AE_MOD,
} AffineKind;

typedef struct AffineExpr {
  AffineKind kind;
  int64_t value;
  int index;
  int elem;
  struct AffineExpr *lhs, *rhs;
} AffineExpr;

AffineExpr *affine_const(Arena *a, int64_t v);
AffineExpr *affine_leaf(Arena *a, AffineKind kind, int index, int elem);
AffineExpr *affine_binary(Arena *a, AffineKind kind, AffineExpr *lhs, AffineExpr *rhs);
/* e with every dim i replaced by dim_values[i] (a copy; e is unchanged). */
AffineExpr *affine_subst_dims(Arena *a, const AffineExpr *e, AffineExpr *const *dim_values);
bool affine_has_dims(const AffineExpr *e);
bool affine_uses_dim(const AffineExpr *e, int dim);
bool affine_is_dim(const AffineExpr *e, int dim); /* exactly the bare dim */
bool affine_equal(const AffineExpr *a, const AffineExpr *b);
int affine_max_dim(const AffineExpr *e); /* -1 if no dims */

/* How to spell leaves when printing an affine expression. */
typedef struct {
  const char *(*dim)(void *ctx, int index);
  const char *(*size)(void *ctx, int index);
  const char *(*attr)(void *ctx, int index, int elem);
  void *ctx;
  bool c_syntax; /* floordiv etc. as lgen_floordiv(a, b) calls */
} AffineNames;

void affine_print(StrBuf *out, const AffineExpr *e, const AffineNames *names);

/* ---- kernel parameters ---- */

/* Where a tensor's elements live. Kernels from .tc specs have parameters
 * only; a model graph's kernel also has constants (weights, embedded in the
 * C file), intermediates in the caller's workspace (at offsets the buffer
 * plan chooses), and aliases: a row-major reshape of another tensor is the
 * same memory seen with another shape, so it costs no copy. */
typedef enum { TS_PARAM, TS_CONST, TS_WORKSPACE, TS_ALIAS } TensorStorage;

typedef struct {
  const char *name;
  ElemType type;
  int rank;
  AffineExpr **shape; /* rank extents, in size symbols only */
  bool is_output;     /* written by the kernel (parameters and workspace tensors) */
  TensorStorage storage;
  int alias_of;       /* TS_ALIAS: the tensor whose memory this is */
  const void *data;   /* TS_CONST: little-endian element bytes, row-major */
  Loc loc;
} TensorParam;

typedef struct {
  const char *name;
  Loc loc;
} SizeSym;

typedef struct {
  const char *name;
  ElemType type;
  int ndims;          /* 0: scalar */
  int64_t dims[LG_MAX_RANK];
  int64_t count;      /* elements; 1 for a scalar, -1 for an unsized array */
  bool is_array;      /* T[]: pointer + element count */
  bool optional;
  Loc loc;
} AttrParam;

/* ---- the structured op ---- */
typedef enum { ITER_PARALLEL, ITER_REDUCTION } IterKind;

typedef struct {
  const char *name;
  IterKind kind;
  AffineExpr *extent;   /* in size symbols */
  int extent_operand;   /* operand whose dim gives the extent */
  int extent_pos;
  Loc loc;              /* first use */
} Dim;

typedef struct {
  int tensor;           /* index into Kernel.tensors */
  AffineExpr **map;     /* one per tensor dimension */
  bool shape_only;      /* only gives loop bounds; never read */
  bool guarded;         /* an index may leave the tensor: such reads give pad_value
                           (model graphs' padded convs and pools); inputs only */
  double pad_value;
  Loc loc;              /* the tensor use */
  Loc *index_locs;      /* each index expression; NULL for shape-only operands */
} Operand;

#define X(e, s, n, c, r, u) SOP_##e,
typedef enum {
#include "ir/scalar_ops.def"
  SOP_COUNT
} ScalarOp;
#undef X

/* scalar_ops.def's columns */
typedef enum { SOC_FLOAT, SOC_INT, SOC_SINT, SOC_NUM, SOC_SELECT, SOC_ANY } ScalarOperandClass;
typedef enum { SOR_SAME, SOR_BOOL, SOR_I32, SOR_WIDER, SOR_NARROWER, SOR_CHOSEN } ScalarResultRule;

typedef struct {
  const char *spelling;
  int arity;
  ScalarOperandClass operands;
  ScalarResultRule result;
  ScalarOp unsigned_form;
} ScalarOpInfo;

const ScalarOpInfo *scalar_op_info(ScalarOp op);
/* The trigonometric and hyperbolic functions and roundeven: plain libm
 * calls in every type (no vectorisable helper: no `omp simd` on them, and
 * not worth recomputing in a fused reader). */
bool scalar_op_is_libm(ScalarOp op);
bool scalar_op_lookup(const char *spelling, ScalarOp *out);

/* PN_INDEX: the current value of loop index `dim` (linalg.index), an i64;
 * what reshapes and fusion do with an op that reads one: ir/ext.c.
 * PN_SIZE: the value of the kernel's size symbol `size`, an i64 (classic
 * Tensor Comprehensions use sizes as values: `mean(n) / K`). */
typedef enum { PN_READ, PN_OP, PN_CONST, PN_INDEX, PN_SIZE } PayloadKind;

typedef struct {
  PayloadKind kind;
  ElemType type;
  double fvalue;        /* PN_CONST of a float type */
  int64_t ivalue;       /* PN_CONST of an integer type (i1: 0 or 1) */
  int operand;          /* PN_READ */
  int dim;              /* PN_INDEX */
  int size;             /* PN_SIZE: index into Kernel.sizes */
  ScalarOp op;          /* PN_OP */
  int nargs;
  int args[LG_MAX_ARGS]; /* earlier node indices */
  Loc loc;
} PayloadNode;

/* expr.c: a payload expression written as text (a model graph attribute:
 * scan's combiner), calls of scalar_ops.def's ops over the scalars `names`
 * (PN_READ operand i: names[i]) and literals, all of element type `type`;
 * its value must be of type `want`. NULL and the nodes (the root last), or
 * the error's message. */
const char *payload_expr_parse(Arena *arena, const char *text, ElemType type, const char *const *names, int nnames,
                               ElemType want, PayloadNode **nodes, int *count);
/* The same with names of several types, names[i] of types[i] (a
 * multi-operand sort's comparator): a literal takes the type of the call's
 * first operand that is not a literal (of types[0] if none is). */
const char *payload_expr_parse_typed(Arena *arena, const char *text, const ElemType *types, const char *const *names,
                                     int nnames, ElemType want, PayloadNode **nodes, int *count);

typedef struct {
  int operand;          /* an output operand */
  int value;            /* payload node */
} Yield;

/* A relation between sizes that the spec implies and the caller must keep;
 * checked at run time under --checks. */
typedef enum {
  PRE_EQUAL,     /* extent of dim `dim` from its source equals operand/pos's extent */
  PRE_IN_BOUNDS, /* operand/pos's index stays inside the tensor's extent */
} PreKind;

typedef struct {
  PreKind kind;
  int dim;
  int operand;
  int pos;
  Loc loc;
} Precondition;

/* A non-structured op (iree_linalg_ext / ByteIR linalg-ext: gather,
 * scatter, sort, topk, scan, argmax, ...): a kernel step that no affine loop
 * nest with a scalar payload describes. It names a hand-written template
 * (templates/KIND.c) that the emitter instantiates per element type, and
 * the tensors it touches: inputs, then outputs, then scratch (workspace
 * tensors only this op uses: sort's merge buffers). Its StructuredOp has no
 * dims, payload or yields; its operands are exactly `tensors`, in that
 * order, each with an all-zero map, so that passes that only ask which
 * tensors an op touches (the buffer plan's liveness, pointer declarations)
 * need no special case. Passes that look at payloads or maps must skip it:
 * op_reads_tensor / op_writes_tensor below answer for both kinds. */
enum { LG_EXT_MAX_TENSORS = 12, LG_EXT_MAX_ATTRS = 24 }; /* rnn: 7 inputs, 3 outputs, 1 scratch; 22 attributes */
/* a sort's operands (graph_ops.def): as many inputs and outputs, and its scratch */
enum { LG_SORT_MAX_OPERANDS = 4 };
/* graph/ext_ops.def's last column */
enum { LG_TEMPLATE_FIXED = 0, LG_TEMPLATE_ROWS = 1 };

typedef struct {
  const char *name;
  char kind;        /* 'i', 'f', 's' or 'l' (a list of integers) */
  int64_t i;        /* integer attributes (and booleans) */
  double f;         /* float attributes */
  const char *s;    /* string attributes; NULL otherwise */
  int n;            /* lists: the count of ints */
  const int64_t *ints;
} ExtAttr;

typedef struct {
  const char *kind;    /* the op: "gather", "argmax", "topk", ... */
  const char *tmpl;    /* its template: templates/TMPL.c ("arg" for argmax and argmin) */
  bool rows_loop;      /* the template has one loop over rows that a schedule shares out or tiles */
  int ninputs, noutputs, nscratch;
  int tensors[LG_EXT_MAX_TENSORS]; /* Kernel.tensors indices: inputs, outputs, scratch */
  int nattrs;
  ExtAttr attrs[LG_EXT_MAX_ATTRS];
} ExtOp;

/* An attribute's integer (float, string) value, or dflt when absent. */
int64_t ext_attr_int(const ExtOp *x, const char *name, int64_t dflt);
double ext_attr_float(const ExtOp *x, const char *name, double dflt);
const char *ext_attr_string(const ExtOp *x, const char *name, const char *dflt);
/* A list attribute: its ints and count (NULL, 0 when absent). */
const int64_t *ext_attr_ints(const ExtOp *x, const char *name, int *count);

typedef struct StructuredOp {
  const ExtOp *ext;  /* non-NULL: a non-structured op (see ExtOp); nothing below but operands and loc */
  int ndims;
  Dim *dims;
  int noperands;
  Operand *operands;
  int nnodes;
  PayloadNode *nodes;
  int nyields;
  Yield *yields;
  int npre;
  Precondition *pre;
  Loc loc;
  /* An epilogue (graph/fuse/fuse.c): a pointwise op applied to each point of
   * this op's one output once its reductions are complete, before the value
   * is stored; bias, activation and residual adds of a contraction. Its dims
   * are all parallel, its dim j is this op's dim epilogue_dims[j] (-1: a
   * dim of extent 1 where the op writes index 0), and it
   * reads and writes this op's output tensor at the same point: run as an op
   * of its own right after this one, it computes the same thing. NULL: none. */
  const struct StructuredOp *epilogue;
  const int *epilogue_dims;
  /* An init (graph/fuse/fuse.c), the epilogue's counterpart before the
   * reductions: a pointwise op that gives each output point its initial
   * value (the reduction's identity, or a conv's bias), so the op starts its
   * accumulators from it instead of loading the output. It writes this op's
   * output at the same point and does not read it; run as an op of its own
   * right before this one, it computes the same thing. NULL: none. */
  const struct StructuredOp *init;
  const int *init_dims;
  /* The graph nodes the op computes, for the C's comment ("fc1: MatMul +
   * act: Relu (epilogue)"); NULL for a spec's comprehension. */
  const char *origin;
} StructuredOp;

/* Every operand of an op, then its init's and its epilogue's: what
 * liveness and the C declarations of an op's tensors must see. */
static inline int op_all_operands(const StructuredOp *op) {
  return op->noperands + (op->init ? op->init->noperands : 0) + (op->epilogue ? op->epilogue->noperands : 0);
}
static inline const Operand *op_operand_at(const StructuredOp *op, int i) {
  if (i < op->noperands)
    return &op->operands[i];
  i -= op->noperands;
  if (op->init && i < op->init->noperands)
    return &op->init->operands[i];
  return &op->epilogue->operands[i - (op->init ? op->init->noperands : 0)];
}

/* Two sizes the kernel assumes equal (a model graph's broadcast or concat
 * of dims lgen could not prove equal), or with at_least, a >= b (a
 * resized length that must not be 1): its entry point returns -1 when
 * that is false, and --checks reports it. `what` says where (text from
 * the input, escaped by the emitter). */
typedef struct {
  const AffineExpr *a, *b;
  const char *what;
  bool at_least;
} SizeAssume;

typedef struct Kernel {
  const char *name;      /* C function name without prefix */
  const char *doc;       /* doc string or NULL */
  int ntensors;
  TensorParam *tensors;
  int nsizes;
  SizeSym *sizes;
  int nattrs;
  AttrParam *attrs;
  int nops;
  StructuredOp *ops;
  int nassumes;
  SizeAssume *assumes;
  Loc loc;
  /* An OpDSL def (frontend/opdsl.h): the generic config this kernel is one
   * instance of; a graph call instantiates it again for its operands. */
  const struct OpdslOp *opdsl;
  /* A view of one op (transform/reshape.h): only the tensors that op
   * touches, renumbered, and the kernel they belong to (NULL: not a view);
   * view_tensor[i] is its tensor i's index there. */
  const struct Kernel *view_base;
  const int *view_tensor;
} Kernel;

typedef struct {
  PtrVec kernels; /* Kernel* */
} Module;

/* ---- ext.c: which tensors a step touches, for either kind ---- */
/* Reads t: a payload read, or an ext op's input or scratch. */
bool op_reads_tensor(const StructuredOp *op, int t);
/* Writes t: a yield, or an ext op's output or scratch. */
bool op_writes_tensor(const StructuredOp *op, int t);
/* Its payload reads the value of loop index d (PN_INDEX); d < 0: of any. */
bool op_reads_index(const StructuredOp *op, int d);

/* ---- uses.c: a kernel's tensors and sizes by name (-1: none; the front-ends
 * look names up while they build a kernel), and the readers and writers of
 * every tensor ---- */
int kernel_tensor_named(const Kernel *k, const char *name);
int kernel_size_named(const Kernel *k, const char *name);

typedef struct {
  /* tensor t's readers are readers[read_start[t] .. + nreaders[t]), in op
   * order (op_reads_tensor); writers likewise (op_writes_tensor) */
  int *read_start, *readers, *nreaders;
  int *write_start, *writers, *nwriters;
} TensorUses;

void tensor_uses(TensorUses *u, const Kernel *k, Arena *arena);

/* Op indices in an arena (fusion's and row grouping's per-tensor lists). */
typedef struct {
  int *items;
  int len, cap;
} OpList;

/* Appends op unless it is already the last item. */
void oplist_add(Arena *a, OpList *l, int op);

/* ---- print.c: the stable text form of --emit=ir ---- */
void ir_print_module(StrBuf *out, const Module *m);
void ir_print_kernel(StrBuf *out, const Kernel *k);
/* name(A: f32(M, K), ...) -> (C: f32(M, N)) as in the spec, on one line */
void ir_print_signature(StrBuf *out, const Kernel *k);

/* ---- verify.c: structural invariants; a failure is an lgen bug ---- */
void ir_verify_kernel(Diag *diag, const Kernel *k);
/* One op against a kernel's tensors (a reshaped view's, too). */
void ir_verify_op(Diag *diag, const Kernel *k, const StructuredOp *op);

#endif
