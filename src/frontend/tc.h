/* tc.h - the .tc (mlir-linalg-ods-gen) front-end: tokens, syntax tree, and
 * the three stages tc_lex.c -> tc_parse.c -> tc_sema.c that turn a file into
 * IR kernels. The syntax tree keeps names as written; tc_sema.c resolves
 * them (attributes, dims, size symbols) and decides the accumulator dialect. */
#ifndef LGEN_TC_H
#define LGEN_TC_H

#include "ir/ir.h"

/* ---- tc_lex.c ---- */
typedef enum {
  TK_EOF,
  TK_IDENT,   /* [A-Za-z_][A-Za-z0-9_-]* */
  TK_INT,     /* [0-9]+ */
  TK_FLOAT,   /* [0-9]+ '.' [0-9]* exponent? | [0-9]+ exponent (payload literals) */
  TK_DOC,     /* """...""" ; text is the contents */
  TK_PUNCT,   /* one of : , = { } ( ) [ ] < > + - ; * ? */
  TK_KEYWORD, /* def ods_def floordiv ceildiv mod attr implements_interface */
} TokenKind;

typedef struct {
  TokenKind kind;
  const char *text; /* arena copy (identifier, keyword, punct, doc contents) */
  int64_t value;    /* TK_INT */
  double fvalue;    /* TK_FLOAT */
  Loc loc;
} Token;

typedef struct {
  const Source *src;
  size_t pos;
  int line;
  int col;
  Arena *arena;
  Diag *diag;
} Lexer;

void lexer_init(Lexer *lx, const Source *src, Arena *arena, Diag *diag);
Token lexer_next(Lexer *lx);

/* ---- syntax tree (tc_parse.c) ---- */
typedef enum {
  AX_INT, AX_NAME, AX_INDEXED, /* name[i, j] */
  AX_NEG, AX_ADD, AX_SUB, AX_MUL, AX_FLOORDIV, AX_CEILDIV, AX_MOD,
} AstIndexKind;

typedef struct AstIndex {
  AstIndexKind kind;
  Loc loc;
  int64_t value;        /* AX_INT */
  const char *name;     /* AX_NAME, AX_INDEXED */
  int nsubs;            /* AX_INDEXED */
  int64_t *subs;
  struct AstIndex *lhs, *rhs;
} AstIndex;

typedef struct {
  const char *name;
  Loc loc;
  const char *type;
  Loc type_loc;
  int rank;
  AstIndex **shape;
} AstTensorDef;

typedef struct {
  const char *name;
  Loc loc;
  bool optional;
  int ndims;
  int64_t dims[LG_MAX_RANK];
  const char *type;
  Loc type_loc;
  bool is_array;
} AstAttrDef;

typedef struct {
  const char *name;
  Loc loc;
  int nidx;
  AstIndex **idx;
} AstTensorUse;

typedef struct AstExpr {
  bool is_call;
  /* payload extensions: a numeric literal (its type comes from the
   * operands beside it), or index(dim), the loop index's value */
  bool is_literal, is_float, is_index;
  double fvalue;
  int64_t ivalue;
  const char *text;     /* the literal as written, or index's dim */
  Loc loc;
  AstTensorUse use;     /* !is_call */
  const char *callee;   /* is_call */
  int nred;
  const char **red;     /* reduction list <k, l> */
  Loc *red_loc;
  int nargs;
  struct AstExpr **args;
} AstExpr;

typedef struct {
  Loc loc;
  int nlhs;
  AstTensorUse *lhs;
  int nrhs;
  AstExpr **rhs;
} AstComprehension;

typedef struct {
  const char *name;
  Loc loc;
  const char *doc;
  int nins, nouts, nattrs, ncomps;
  AstTensorDef *ins, *outs;
  AstAttrDef *attrs;
  AstComprehension *comps;
} AstDef;

typedef struct {
  PtrVec defs; /* AstDef* */
} AstFile;

/* cast_T(x) and cast_unsigned_T(x) in payloads: true for such a name,
 * with the target type and signedness (tc_parse.c). */
bool tc_cast_name(const char *name, ElemType *type, bool *is_unsigned);

/* ---- tc_parse.c ---- */
AstFile *tc_parse(const Source *src, Arena *arena, Diag *diag);

/* ---- tc_sema.c ---- */
void tc_lower(const AstFile *file, Module *module, Arena *arena, Diag *diag);

#endif
