/* opdsl.h - the OpDSL YAML front-end: `--- !LinalgOpConfig` documents, as
 * upstream Linalg's LinalgNamedStructuredOps.yaml (tc-format.md section 9).
 *
 * opdsl_parse reads a file with libyaml into OpdslOp configs: type-generic
 * (type variables T1, U, ...), attribute-generic (index attributes with
 * defaults, fn attributes that choose a scalar function) and, for
 * elementwise ops, rank-generic. opdsl_instantiate makes one IR Kernel of
 * a config under an OpdslBinding: concrete types, a rank, fn choices, and
 * optionally index-attribute values (graph calls bake them in). */
#ifndef LGEN_OPDSL_H
#define LGEN_OPDSL_H

#include "ir/ir.h"

typedef enum {
  OA_INPUT,
  OA_OUTPUT,
  OA_SCALAR,     /* an input of rank 0 */
  OA_INDEX_ATTR, /* integers bound to symbols of the maps (strides, dilations) */
  OA_UNARY_FN,
  OA_BINARY_FN,
  OA_TERNARY_FN,
  OA_TYPE_FN,
} OpdslArgKind;

/* affine_map<(d0, ...)[s0, ...] -> (e0, ...)>: dims as AE_DIM, symbols as
 * AE_SIZE leaves numbered by position (bound at instantiation). */
typedef struct {
  int ndims, nsyms, nresults;
  AffineExpr **results;
  Loc loc;
  Loc *result_locs;
} OpdslMap;

typedef struct {
  const char *name;
  Loc loc;
  OpdslArgKind kind;
  const char *type_var; /* tensors and scalars */
  Loc type_loc;
  OpdslMap *shape;      /* tensors */
  OpdslMap *attr_map;   /* index attributes: one bare symbol per element */
  int ndefaults;        /* index attributes: -1 when none are given */
  int64_t *defaults;
  const char *default_fn; /* fn attributes, or NULL */
  Loc fn_loc;
} OpdslArg;

typedef enum { OE_ARG, OE_CONST, OE_INDEX, OE_FN } OpdslExprKind;
typedef enum { FK_UNARY, FK_BINARY, FK_TERNARY, FK_TYPE } OpdslFnKind;

typedef struct OpdslExpr {
  OpdslExprKind kind;
  Loc loc;
  const char *arg;      /* OE_ARG */
  ElemType type;        /* OE_CONST */
  double fvalue;        /* OE_CONST of a float type */
  int64_t ivalue;       /* OE_CONST of an integer type */
  int dim;              /* OE_INDEX */
  OpdslFnKind fn_kind;  /* OE_FN */
  const char *fn_name;  /* OE_FN: a function, or NULL with attr_name */
  const char *attr_name;
  Loc fn_loc;           /* of fn_name or attr_name */
  const char *type_var; /* FK_TYPE */
  Loc type_loc;
  int nops;
  struct OpdslExpr **ops;
} OpdslExpr;

typedef struct {
  const char *arg;
  Loc loc;
  OpdslExpr *value;
} OpdslAssign;

typedef struct OpdslOp {
  const char *name;
  Loc loc;
  const char *doc;
  int nargs;
  OpdslArg *args;
  int nmaps;
  OpdslMap **maps; /* one per operand (tensor and scalar args, in order) */
  Loc maps_loc;
  int niters;
  IterKind *iters;
  Loc iters_loc;
  bool rank_polymorphic; /* no iterator types: elementwise at any rank */
  int nassigns;
  OpdslAssign *assigns;
} OpdslOp;

typedef struct {
  PtrVec ops; /* OpdslOp* */
} OpdslFile;

/* How to instantiate a config. Lookups go by name; `op` entries win over
 * global ones (op == NULL). */
typedef struct {
  const char *op;   /* NULL: every op */
  const char *key;  /* a type variable, a fn attribute, an index attribute or "rank" */
  const char *value;
  int64_t ints[LG_MAX_RANK]; /* index attributes: the values */
  int nints;
  Loc loc;
} OpdslChoice;

typedef struct {
  const char *name;          /* the kernel's name (NULL: the op's) */
  const OpdslChoice *choices;
  int nchoices;
  int rank;                  /* rank-polymorphic ops without a "rank" choice */
  /* graph calls: the operands' types and ranks (inputs and scalars in
   * order, then outputs; ranks < 0 or types < 0 unknown), and whether index
   * attributes are baked in as constants (their values from choices or
   * their defaults) rather than kernel parameters */
  const int *arg_types;
  const int *arg_ranks;
  int narg_info;
  bool bake_attrs;
  Loc loc;                   /* where the choices come from (a graph node) */
  const char *what;          /* how to name that place in messages ("node 'x': ") */
} OpdslBinding;

OpdslFile *opdsl_parse(const Source *src, Arena *arena, Diag *diag);
Kernel *opdsl_instantiate(const OpdslOp *op, const OpdslBinding *b, Arena *arena, Diag *diag);
/* Parses --opdsl's "[OP.]KEY=VALUE,..." into choices. */
OpdslChoice *opdsl_parse_choices(const char *text, int *count, Arena *arena, Diag *diag);
/* Every op of the file, instantiated with the command line's choices (type
 * variables default to f32, ranks to 1), added to the module. */
void opdsl_lower(const OpdslFile *file, Module *module, const OpdslChoice *choices, int nchoices, Arena *arena,
                 Diag *diag);
/* Warns about choices that no op of the files (OpdslFile*) can use. */
void opdsl_check_choices(const PtrVec *files, const OpdslChoice *choices, int nchoices, Diag *diag);
/* Whether a text looks like OpDSL YAML (a `!LinalgOpConfig` document). */
bool opdsl_sniff(const char *text, size_t len);

#endif
