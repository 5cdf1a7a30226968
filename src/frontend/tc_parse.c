/* tc_parse.c - recursive-descent parser from tokens to the syntax tree.
 *
 * Grammar (tc-format.md section 4, plus two extensions: a bare `def` without
 * `ods_def<...>:`, and the attr block and doc string in either order):
 *
 *   file          ::= (('ods_def' '<' id '>' implements? ':')? tc-def)*
 *   implements    ::= 'implements_interface' '<' id (',' id)* '>'
 *   tc-def        ::= 'def' id '(' tensor-defs ')' '-' '>' '(' tensor-defs ')'
 *                     (attr-block | doc-string)* '{' comprehension+ '}'
 *   tensor-def    ::= id ':' id '(' (affine (',' affine)*)? ')'
 *   attr-block    ::= 'attr' '(' attr-def (',' attr-def)* ')'
 *   attr-def      ::= id '?'? ':' (int 'x')* id ('[' ']')?
 *   comprehension ::= use (',' use)* '=' expr (',' expr)* ';'
 *   use           ::= tensor-id '(' (affine (',' affine)*)? ')'
 *   expr          ::= use | op-id ('<' id (',' id)* '>')? '(' (expr (',' expr)*)? ')'
 *                   | '-'? (int | float)          -- a literal (lgen extension)
 *                   | 'index' '(' id ')'          -- a loop index's value (extension)
 *                   | cast-id '(' expr ')'        -- cast_T, cast_unsigned_T (extension)
 *   affine        ::= term (('+' | '-') term)*
 *   term          ::= unary (('*' | 'floordiv' | 'ceildiv' | 'mod') unary)*
 *   unary         ::= '-' unary | int | id ('[' int (',' int)* ']')? | '(' affine ')'
 *
 * Whether `f(...)` is a tensor use or an op call is decided by whether `f`
 * names a tensor of the def being parsed. */
#include "frontend/tc.h"

#include <string.h>

enum { MAX_NESTING = 256, MAX_LIST = 64 };

typedef struct {
  Lexer lx;
  Token tok; /* one token of lookahead */
  Arena *arena;
  Diag *diag;
  AstDef *def; /* being parsed: its tensors decide use vs call */
  int depth;
} Parser;

static void next(Parser *p) { p->tok = lexer_next(&p->lx); }

static bool is_punct(const Parser *p, char c) {
  return p->tok.kind == TK_PUNCT && p->tok.text[0] == c;
}

static bool is_keyword(const Parser *p, const char *kw) {
  return p->tok.kind == TK_KEYWORD && strcmp(p->tok.text, kw) == 0;
}

static const char *describe(const Token *t) {
  switch (t->kind) {
  case TK_EOF:
    return "end of file";
  case TK_DOC:
    return "a doc string";
  default:
    return t->text;
  }
}

static void expect_punct(Parser *p, char c, const char *context) {
  if (!is_punct(p, c))
    diag_error(p->diag, p->tok.loc, "expected '%c' %s, found '%s'", c, context, describe(&p->tok));
  next(p);
}

static Token expect_ident(Parser *p, const char *what) {
  if (p->tok.kind != TK_IDENT) {
    if (p->tok.kind == TK_KEYWORD)
      diag_error(p->diag, p->tok.loc, "expected %s, found keyword '%s' (keywords cannot be names)", what,
                 p->tok.text);
    diag_error(p->diag, p->tok.loc, "expected %s, found '%s'", what, describe(&p->tok));
  }
  Token t = p->tok;
  next(p);
  return t;
}

static void enter(Parser *p) {
  if (++p->depth > MAX_NESTING)
    diag_error(p->diag, p->tok.loc, "expression nested more than %d levels deep", MAX_NESTING);
}

static void leave(Parser *p) { p->depth--; }

static AstIndex *new_index(Parser *p, AstIndexKind kind, Loc loc) {
  AstIndex *e = arena_alloc(p->arena, sizeof *e);
  e->kind = kind;
  e->loc = loc;
  return e;
}

static AstIndex *parse_affine(Parser *p);

static AstIndex *parse_unary(Parser *p) {
  Loc loc = p->tok.loc;
  AstIndex *e;
  if (is_punct(p, '-')) {
    enter(p);
    next(p);
    e = new_index(p, AX_NEG, loc);
    e->lhs = parse_unary(p);
    leave(p);
  } else if (p->tok.kind == TK_INT) {
    e = new_index(p, AX_INT, loc);
    e->value = p->tok.value;
    next(p);
  } else if (p->tok.kind == TK_IDENT) {
    e = new_index(p, AX_NAME, loc);
    e->name = p->tok.text;
    next(p);
    if (is_punct(p, '[')) {
      next(p);
      e->kind = AX_INDEXED;
      int64_t subs[MAX_LIST];
      do {
        if (p->tok.kind != TK_INT)
          diag_error(p->diag, p->tok.loc, "expected an integer attribute index, found '%s'", describe(&p->tok));
        if (e->nsubs == MAX_LIST)
          diag_error(p->diag, p->tok.loc, "too many attribute indices");
        subs[e->nsubs++] = p->tok.value;
        next(p);
      } while (is_punct(p, ',') && (next(p), true));
      expect_punct(p, ']', "to close the attribute index");
      e->subs = arena_alloc(p->arena, sizeof(int64_t) * (size_t)e->nsubs);
      memcpy(e->subs, subs, sizeof(int64_t) * (size_t)e->nsubs);
    }
  } else if (is_punct(p, '(')) {
    enter(p);
    next(p);
    if (is_punct(p, ')'))
      diag_error(p->diag, p->tok.loc, "no expression inside parentheses");
    e = parse_affine(p);
    expect_punct(p, ')', "to close the parenthesis");
    leave(p);
  } else {
    diag_error(p->diag, loc, "expected an affine expression, found '%s'", describe(&p->tok));
  }
  return e;
}

static AstIndex *parse_term(Parser *p) {
  AstIndex *lhs = parse_unary(p);
  for (;;) {
    AstIndexKind kind;
    if (is_punct(p, '*'))
      kind = AX_MUL;
    else if (is_keyword(p, "floordiv"))
      kind = AX_FLOORDIV;
    else if (is_keyword(p, "ceildiv"))
      kind = AX_CEILDIV;
    else if (is_keyword(p, "mod"))
      kind = AX_MOD;
    else
      return lhs;
    AstIndex *e = new_index(p, kind, p->tok.loc);
    next(p);
    e->lhs = lhs;
    e->rhs = parse_unary(p);
    lhs = e;
  }
}

static AstIndex *parse_affine(Parser *p) {
  AstIndex *lhs = parse_term(p);
  while (is_punct(p, '+') || is_punct(p, '-')) {
    AstIndex *e = new_index(p, is_punct(p, '+') ? AX_ADD : AX_SUB, p->tok.loc);
    next(p);
    e->lhs = lhs;
    e->rhs = parse_term(p);
    lhs = e;
  }
  return lhs;
}

/* '(' (affine (',' affine)*)? ')' ; returns the count, fills *out. */
static int parse_index_list(Parser *p, AstIndex ***out, const char *what) {
  expect_punct(p, '(', what);
  AstIndex *items[LG_MAX_RANK];
  int n = 0;
  if (!is_punct(p, ')')) {
    do {
      if (n == LG_MAX_RANK)
        diag_error(p->diag, p->tok.loc, "more than %d indices (the rank limit)", LG_MAX_RANK);
      items[n++] = parse_affine(p);
    } while (is_punct(p, ',') && (next(p), true));
  }
  expect_punct(p, ')', "to close the index list");
  *out = arena_alloc(p->arena, sizeof(AstIndex *) * (size_t)(n ? n : 1));
  memcpy(*out, items, sizeof(AstIndex *) * (size_t)n);
  return n;
}

static void parse_tensor_def(Parser *p, AstTensorDef *t) {
  Token name = expect_ident(p, "a tensor name");
  t->name = name.text;
  t->loc = name.loc;
  expect_punct(p, ':', "after the tensor name");
  Token type = expect_ident(p, "an element type");
  t->type = type.text;
  t->type_loc = type.loc;
  t->rank = parse_index_list(p, &t->shape, "to start the shape");
}

static int parse_tensor_defs(Parser *p, AstTensorDef **out, const char *what) {
  expect_punct(p, '(', what);
  AstTensorDef items[MAX_LIST];
  int n = 0;
  do {
    if (n == MAX_LIST)
      diag_error(p->diag, p->tok.loc, "more than %d tensors", MAX_LIST);
    parse_tensor_def(p, &items[n++]);
  } while (is_punct(p, ',') && (next(p), true));
  expect_punct(p, ')', "to close the tensor list");
  *out = arena_alloc(p->arena, sizeof(AstTensorDef) * (size_t)n);
  memcpy(*out, items, sizeof(AstTensorDef) * (size_t)n);
  return n;
}

/* attr-def type: (int 'x')* id ('[' ']')? . `2xi64` lexes as INT 2 then the
 * identifier "xi64", and `5x6xi32` as INT 5 then "x6xi32": the dimension
 * list is recovered from the identifier's text. */
static void parse_attr_type(Parser *p, AstAttrDef *a) {
  a->type_loc = p->tok.loc;
  if (p->tok.kind == TK_INT) {
    a->dims[a->ndims++] = p->tok.value;
    next(p);
    if (p->tok.kind != TK_IDENT || p->tok.text[0] != 'x')
      diag_error(p->diag, p->tok.loc, "expected 'x' in the attribute's dimension list");
    const char *s = p->tok.text + 1;
    while (*s >= '0' && *s <= '9') {
      int64_t v = 0;
      while (*s >= '0' && *s <= '9') {
        if (v > (INT64_MAX - 9) / 10)
          diag_error(p->diag, p->tok.loc, "attribute dimension too large");
        v = v * 10 + (*s++ - '0');
      }
      if (*s != 'x')
        diag_error(p->diag, p->tok.loc, "expected 'x' in the attribute's dimension list");
      s++;
      if (a->ndims == LG_MAX_RANK)
        diag_error(p->diag, p->tok.loc, "more than %d attribute dimensions", LG_MAX_RANK);
      a->dims[a->ndims++] = v;
    }
    a->type = arena_strdup(p->arena, s);
    next(p);
  } else {
    a->type = expect_ident(p, "an attribute type").text;
  }
  if (is_punct(p, '[')) {
    next(p);
    expect_punct(p, ']', "in the array attribute type 'T[]'");
    if (a->ndims)
      diag_error(p->diag, a->type_loc, "unsupported vector array attribute");
    a->is_array = true;
  }
}

static void parse_attr_block(Parser *p, AstDef *d) {
  next(p); /* attr */
  expect_punct(p, '(', "after 'attr'");
  AstAttrDef items[MAX_LIST];
  int n = 0;
  do {
    if (n == MAX_LIST)
      diag_error(p->diag, p->tok.loc, "more than %d attributes", MAX_LIST);
    AstAttrDef *a = &items[n++];
    memset(a, 0, sizeof *a);
    Token name = expect_ident(p, "an attribute name");
    a->name = name.text;
    a->loc = name.loc;
    if (is_punct(p, '?')) {
      a->optional = true;
      next(p);
    }
    expect_punct(p, ':', "after the attribute name");
    parse_attr_type(p, a);
  } while (is_punct(p, ',') && (next(p), true));
  expect_punct(p, ')', "to close the attr block");
  d->attrs = arena_alloc(p->arena, sizeof(AstAttrDef) * (size_t)n);
  memcpy(d->attrs, items, sizeof(AstAttrDef) * (size_t)n);
  d->nattrs = n;
}

static bool names_tensor(const AstDef *d, const char *name) {
  for (int i = 0; i < d->nins; i++)
    if (strcmp(d->ins[i].name, name) == 0)
      return true;
  for (int i = 0; i < d->nouts; i++)
    if (strcmp(d->outs[i].name, name) == 0)
      return true;
  return false;
}

static void parse_use(Parser *p, AstTensorUse *u, Token name) {
  u->name = name.text;
  u->loc = name.loc;
  u->nidx = parse_index_list(p, &u->idx, "after the tensor name");
}

static void parse_reduction_list(Parser *p, AstExpr *e) {
  next(p); /* '<' */
  const char *red[LG_MAX_DIMS];
  Loc red_loc[LG_MAX_DIMS];
  if (!is_punct(p, '>')) {
    do {
      if (e->nred == LG_MAX_DIMS)
        diag_error(p->diag, p->tok.loc, "more than %d reduction dims", LG_MAX_DIMS);
      red_loc[e->nred] = p->tok.loc;
      red[e->nred] = expect_ident(p, "a reduction dim name").text;
      e->nred++;
    } while (is_punct(p, ',') && (next(p), true));
  }
  expect_punct(p, '>', "to close the reduction list");
  e->red = arena_alloc(p->arena, sizeof(char *) * (size_t)(e->nred ? e->nred : 1));
  e->red_loc = arena_alloc(p->arena, sizeof(Loc) * (size_t)(e->nred ? e->nred : 1));
  memcpy(e->red, red, sizeof(char *) * (size_t)e->nred);
  memcpy(e->red_loc, red_loc, sizeof(Loc) * (size_t)e->nred);
}

bool tc_cast_name(const char *name, ElemType *type, bool *is_unsigned) {
  const char *t = NULL;
  if (strncmp(name, "cast_unsigned_", 14) == 0)
    t = name + 14, *is_unsigned = true;
  else if (strncmp(name, "cast_", 5) == 0)
    t = name + 5, *is_unsigned = false;
  return t && elem_type_parse(t, type);
}

static AstExpr *parse_literal(Parser *p, AstExpr *e) {
  bool negative = is_punct(p, '-');
  if (negative)
    next(p);
  if (p->tok.kind != TK_INT && p->tok.kind != TK_FLOAT)
    diag_error(p->diag, p->tok.loc, "expected a number after '-', found '%s'", describe(&p->tok));
  e->is_literal = true;
  e->is_float = p->tok.kind == TK_FLOAT;
  e->fvalue = negative ? -(e->is_float ? p->tok.fvalue : (double)p->tok.value)
                       : (e->is_float ? p->tok.fvalue : (double)p->tok.value);
  e->ivalue = negative ? -p->tok.value : p->tok.value;
  e->text = arena_printf(p->arena, "%s%s", negative ? "-" : "", p->tok.text);
  next(p);
  return e;
}

static AstExpr *parse_expr(Parser *p) {
  AstExpr *e = arena_alloc(p->arena, sizeof *e);
  e->loc = p->tok.loc;
  if (p->tok.kind == TK_INT || p->tok.kind == TK_FLOAT || is_punct(p, '-'))
    return parse_literal(p, e);
  Token name = expect_ident(p, "a tensor, an operation or a number");
  e->loc = name.loc;
  if (strcmp(name.text, "index") == 0 && !names_tensor(p->def, name.text)) {
    expect_punct(p, '(', "after 'index'");
    Token dim = expect_ident(p, "a dim name");
    expect_punct(p, ')', "to close 'index('");
    e->is_index = true;
    e->text = dim.text;
    e->loc = dim.loc;
    return e;
  }
  if (names_tensor(p->def, name.text)) {
    if (is_punct(p, '<'))
      diag_error(p->diag, p->tok.loc, "a tensor use takes no reduction list; '%s' is a tensor", name.text);
    parse_use(p, &e->use, name);
    return e;
  }
  ScalarOp known;
  ElemType cast_type;
  bool cast_unsigned;
  if (!scalar_op_lookup(name.text, &known) && !tc_cast_name(name.text, &cast_type, &cast_unsigned))
    diag_error(p->diag, name.loc, "unknown operation '%s' (and '%s' has no tensor of that name)", name.text,
               p->def->name);
  if (++p->depth > MAX_NESTING) /* each nested call is a level */
    diag_error(p->diag, name.loc, "expression nested more than %d levels deep", MAX_NESTING);
  e->is_call = true;
  e->callee = name.text;
  if (is_punct(p, '<'))
    parse_reduction_list(p, e);
  expect_punct(p, '(', "to start the operation's arguments");
  /* Arguments go to the arena, not the C stack: nesting is deep-limited,
   * and every frame of this recursion should stay small. */
  PtrVec args = {0};
  if (!is_punct(p, ')')) {
    do {
      if (args.len == MAX_LIST)
        diag_error(p->diag, p->tok.loc, "too many arguments");
      vec_push(p->arena, &args, parse_expr(p));
    } while (is_punct(p, ',') && (next(p), true));
  }
  expect_punct(p, ')', "to close the argument list");
  e->nargs = args.len;
  e->args = (AstExpr **)args.items;
  leave(p);
  return e;
}

static void parse_comprehension(Parser *p, AstComprehension *c) {
  c->loc = p->tok.loc;
  AstTensorUse lhs[MAX_LIST];
  do {
    if (c->nlhs == MAX_LIST)
      diag_error(p->diag, p->tok.loc, "too many outputs");
    Token name = expect_ident(p, "an output tensor");
    if (!names_tensor(p->def, name.text))
      diag_error(p->diag, name.loc, "'%s' is not a tensor of '%s'", name.text, p->def->name);
    parse_use(p, &lhs[c->nlhs++], name);
  } while (is_punct(p, ',') && (next(p), true));
  expect_punct(p, '=', "after the written tensors");
  AstExpr *rhs[MAX_LIST];
  do {
    if (c->nrhs == MAX_LIST)
      diag_error(p->diag, p->tok.loc, "too many expressions");
    rhs[c->nrhs++] = parse_expr(p);
  } while (is_punct(p, ',') && (next(p), true));
  expect_punct(p, ';', "to end the comprehension");
  c->lhs = arena_alloc(p->arena, sizeof(AstTensorUse) * (size_t)c->nlhs);
  memcpy(c->lhs, lhs, sizeof(AstTensorUse) * (size_t)c->nlhs);
  c->rhs = arena_alloc(p->arena, sizeof(AstExpr *) * (size_t)c->nrhs);
  memcpy(c->rhs, rhs, sizeof(AstExpr *) * (size_t)c->nrhs);
}

static void skip_ods_header(Parser *p) {
  next(p); /* ods_def */
  expect_punct(p, '<', "after 'ods_def'");
  expect_ident(p, "the op's C++ class name");
  expect_punct(p, '>', "after the class name");
  if (is_keyword(p, "implements_interface")) {
    next(p);
    expect_punct(p, '<', "after 'implements_interface'");
    do
      expect_ident(p, "an interface name");
    while (is_punct(p, ',') && (next(p), true));
    expect_punct(p, '>', "to close the interface list");
  }
  expect_punct(p, ':', "after 'ods_def<...>'");
}

static AstDef *parse_def(Parser *p) {
  if (is_keyword(p, "ods_def"))
    skip_ods_header(p);
  if (!is_keyword(p, "def"))
    diag_error(p->diag, p->tok.loc, "expected 'def' or 'ods_def' to define an op, found '%s'", describe(&p->tok));
  next(p);
  AstDef *d = arena_alloc(p->arena, sizeof *d);
  p->def = d;
  Token name = expect_ident(p, "the op name");
  d->name = name.text;
  d->loc = name.loc;
  d->nins = parse_tensor_defs(p, &d->ins, "to start the input list");
  expect_punct(p, '-', "('->') after the inputs");
  expect_punct(p, '>', "('->') after the inputs");
  d->nouts = parse_tensor_defs(p, &d->outs, "to start the output list");
  for (;;) {
    if (is_keyword(p, "attr") && !d->attrs) {
      parse_attr_block(p, d);
    } else if (p->tok.kind == TK_DOC && !d->doc) {
      d->doc = p->tok.text;
      next(p);
    } else {
      break;
    }
  }
  expect_punct(p, '{', "to start the op body");
  AstComprehension comps[MAX_LIST];
  do {
    if (p->tok.kind == TK_EOF)
      diag_error(p->diag, p->tok.loc, "expected '}' to end the body of '%s', found end of file", d->name);
    if (d->ncomps == MAX_LIST)
      diag_error(p->diag, p->tok.loc, "more than %d comprehensions in one op", MAX_LIST);
    memset(&comps[d->ncomps], 0, sizeof comps[0]);
    parse_comprehension(p, &comps[d->ncomps++]);
  } while (!is_punct(p, '}'));
  next(p);
  d->comps = arena_alloc(p->arena, sizeof(AstComprehension) * (size_t)d->ncomps);
  memcpy(d->comps, comps, sizeof(AstComprehension) * (size_t)d->ncomps);
  return d;
}

AstFile *tc_parse(const Source *src, Arena *arena, Diag *diag) {
  Parser p = {.arena = arena, .diag = diag};
  lexer_init(&p.lx, src, arena, diag);
  next(&p);
  AstFile *file = arena_alloc(arena, sizeof *file);
  while (p.tok.kind != TK_EOF)
    vec_push(arena, &file->defs, parse_def(&p));
  return file;
}
