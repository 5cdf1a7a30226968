/* tc_classic.h - classic Tensor Comprehensions input (Facebook's TC
 * language, tc-format.md section 10): `def f(float(M,K) A, float(K,N) B) ->
 * (C) { C(m,n) +=! A(m,k) * B(k,n) }`. Two stages: tc_classic_parse.c turns
 * the text into the syntax tree below; tc_classic.c lowers it to the same
 * structured-op IR as tc_sema.c (one StructuredOp per statement, plus one
 * that fills the output with the reduction's identity for `op=!`). */
#ifndef LGEN_TC_CLASSIC_H
#define LGEN_TC_CLASSIC_H

#include "ir/ir.h"

typedef enum {
  CE_NUM,     /* a literal: ivalue or fvalue */
  CE_NAME,    /* an index, a size, a scalar or a 0-d tensor */
  CE_APPLY,   /* name(args): a tensor read, a cast or a builtin */
  CE_UNARY,   /* op args[0]: - + ! */
  CE_BINARY,  /* args[0] op args[1] */
  CE_TERNARY, /* args[0] ? args[1] : args[2] */
} CExprKind;

typedef struct CExpr {
  CExprKind kind;
  Loc loc;             /* the operator's for unary/binary/ternary */
  const char *name;    /* CE_NAME, CE_APPLY; the operator's spelling otherwise */
  bool is_float;       /* CE_NUM */
  int64_t ivalue;
  double fvalue;
  const char *text;    /* CE_NUM as written */
  int nargs;
  struct CExpr **args;
} CExpr;

typedef struct {
  const char *type;    /* NULL: an untyped output */
  Loc type_loc;
  bool has_shape;      /* float(M, N) X; false: a scalar (float eps) */
  int rank;
  CExpr **shape;       /* names and integer literals */
  const char *name;
  Loc loc;
} CParam;

typedef struct {
  const char *dim;
  Loc loc;
  CExpr *lo, *hi;      /* dim in lo:hi, half-open */
} CRange;

typedef struct {
  Loc loc;
  const char *lhs;
  int nidx;            /* -1: written without parentheses (a 0-d output) */
  const char **idx;
  Loc *idx_loc;
  const char *op;      /* "=", "+=", "*=", "min=", "max=" */
  bool bang;           /* op=! : start from the reduction's identity */
  Loc op_loc;
  CExpr *rhs;
  int nranges;
  CRange *ranges;
} CStmt;

typedef struct {
  const char *name;
  Loc loc;
  int nins, nouts, nstmts;
  CParam *ins, *outs;
  CStmt *stmts;
} CDef;

typedef struct {
  PtrVec defs; /* CDef* */
} CFile;

/* True when the text reads as classic TC: the first parameter of the first
 * `def NAME(` is a type followed by a shape or a name (`float(` or `float
 * eps`), where the mlir-linalg-ods-gen form has `NAME :`. */
bool tc_classic_sniff(const char *text, size_t len);

/* ---- tc_classic_parse.c ---- */
CFile *tc_classic_parse(const Source *src, Arena *arena, Diag *diag);

/* ---- tc_classic.c ---- */
void tc_classic_lower(const CFile *file, Module *module, Arena *arena, Diag *diag);

#endif
