/* tc_classic_parse.c - lexer and recursive-descent parser for classic
 * Tensor Comprehensions (tc-format.md section 10; TC's tc/lang/parser.h).
 *
 *   file      ::= def*
 *   def       ::= 'def' id '(' param (',' param)* ')' '->' '(' out (',' out)* ')' '{' stmt* '}'
 *   param     ::= type ('(' size (',' size)* ')')? id     -- no shape: a scalar
 *   out       ::= id | type '(' size (',' size)* ')' id
 *   size      ::= id | int
 *   stmt      ::= id ('(' (id (',' id)*)? ')')? assign expr ('where' clause (',' clause)*)?
 *   assign    ::= '=' | '+=' | '*=' | '+=!' | '*=!' | ('min' | 'max') ('=' | '=!')
 *   clause    ::= id 'in' expr ':' expr | 'exists' expr
 *   expr      ::= C's ?: || && == != < > <= >= + - * / % and unary - + !, over
 *                 literals, names and name(expr, ...)
 *
 * Statements have no separator: one ends where its expression cannot go on.
 * Comments run from '#' to the end of the line. Whether `name(...)` is a
 * tensor read, a cast or a builtin is for tc_classic.c to decide. */
#include "frontend/tc_classic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_IDENT = 255, MAX_NESTING = 256, MAX_LIST = 64 };

typedef enum { CT_EOF, CT_IDENT, CT_INT, CT_FLOAT, CT_PUNCT } CTokKind;

typedef struct {
  CTokKind kind;
  const char *text;
  int64_t ivalue;
  double fvalue;
  Loc loc;
} CTok;

typedef struct {
  const Source *src;
  size_t pos;
  int line, col;
  CTok tok; /* one token of lookahead */
  Arena *arena;
  Diag *diag;
  int depth;
} P;

/* ---- lexer ---- */

static Loc here(const P *p) { return (Loc){.src = p->src, .line = p->line, .col = p->col, .offset = p->pos}; }

static int peek(const P *p, size_t ahead) {
  size_t i = p->pos + ahead;
  return i < p->src->len ? (unsigned char)p->src->text[i] : -1;
}

/* One byte; CR, LF, CRLF and LFCR each count as one newline. */
static void advance(P *p) {
  int c = peek(p, 0);
  p->pos++;
  if (c == '\n' || c == '\r') {
    int next = peek(p, 0);
    if ((next == '\n' || next == '\r') && next != c)
      p->pos++;
    p->line++;
    p->col = 1;
  } else {
    p->col++;
  }
}

static bool is_ident_start(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }

static void skip_space(P *p) {
  for (;;) {
    int c = peek(p, 0);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      advance(p);
    } else if (c == '#') {
      while (peek(p, 0) != -1 && peek(p, 0) != '\n' && peek(p, 0) != '\r')
        advance(p);
    } else {
      return;
    }
  }
}

/* Longest first: "+=!" before "+=" before "+". */
static const char *const puncts[] = {"+=!", "*=!", "->", "==", "!=", "<=", ">=", "&&", "||", "+=", "*=", "=!",
                                     "(",   ")",   ",",  "{",  "}",  ":",  "?",  "+",  "-",  "*",  "/",  "%",
                                     "<",   ">",   "=",  "!"};

static void lex(P *p) {
  skip_space(p);
  Loc start = here(p);
  int c = peek(p, 0);
  if (c == -1) {
    p->tok = (CTok){.kind = CT_EOF, .text = "end of file", .loc = start};
    return;
  }
  if (is_ident_start(c)) {
    size_t n = 0;
    while (is_ident_start(peek(p, n)) || is_digit(peek(p, n)))
      n++;
    if (n > MAX_IDENT)
      diag_error(p->diag, start, "identifier longer than %d bytes", MAX_IDENT);
    p->tok = (CTok){.kind = CT_IDENT, .loc = start, .text = arena_strndup(p->arena, p->src->text + p->pos, n)};
    for (size_t i = 0; i < n; i++)
      advance(p);
    return;
  }
  /* T.1 after a name is TC's dimension selection, not the literal .1 */
  int prev = p->pos > 0 ? (unsigned char)p->src->text[p->pos - 1] : -1;
  if (c == '.' && (is_ident_start(prev) || is_digit(prev) || prev == ')'))
    diag_error(p->diag, start, "unexpected '.': TC's dimension selection (T.1) is not supported; use a size name");
  if (is_digit(c) || (c == '.' && is_digit(peek(p, 1)))) {
    size_t n = 0;
    bool is_float = false;
    while (is_digit(peek(p, n)))
      n++;
    if (peek(p, n) == '.') {
      is_float = true;
      n++;
      while (is_digit(peek(p, n)))
        n++;
    }
    if ((peek(p, n) == 'e' || peek(p, n) == 'E') &&
        (is_digit(peek(p, n + 1)) || ((peek(p, n + 1) == '+' || peek(p, n + 1) == '-') && is_digit(peek(p, n + 2))))) {
      is_float = true;
      n += 2;
      while (is_digit(peek(p, n)))
        n++;
    }
    if (is_float && peek(p, n) == 'f') /* 1.5f, C's float suffix */
      n++;
    if (n > 64)
      diag_error(p->diag, start, "number literal longer than 64 characters");
    CTok t = {.kind = is_float ? CT_FLOAT : CT_INT, .loc = start,
              .text = arena_strndup(p->arena, p->src->text + p->pos, n)};
    if (is_float) {
      t.fvalue = strtod(t.text, NULL);
      if (isinf(t.fvalue))
        diag_error(p->diag, start, "'%s' is too large for any floating-point type", t.text);
    } else {
      for (size_t i = 0; i < n; i++) {
        int d = t.text[i] - '0';
        if (t.ivalue > (INT64_MAX - d) / 10)
          diag_error(p->diag, start, "integer literal too large (the limit is %lld)", (long long)INT64_MAX);
        t.ivalue = t.ivalue * 10 + d;
      }
    }
    for (size_t i = 0; i < n; i++)
      advance(p);
    p->tok = t;
    return;
  }
  for (size_t i = 0; i < sizeof puncts / sizeof *puncts; i++) {
    size_t n = strlen(puncts[i]);
    size_t j = 0;
    while (j < n && peek(p, j) == (unsigned char)puncts[i][j])
      j++;
    if (j == n) {
      p->tok = (CTok){.kind = CT_PUNCT, .loc = start, .text = puncts[i]};
      for (size_t k = 0; k < n; k++)
        advance(p);
      return;
    }
  }
  if (c == '.')
    diag_error(p->diag, start, "unexpected '.': TC's dimension selection (T.1) is not supported; use a size name");
  if (c >= 0x21 && c < 0x7f)
    diag_error(p->diag, start, "unexpected character '%c'", c);
  diag_error(p->diag, start, "unexpected byte 0x%02x", (unsigned)c);
}

/* ---- parser helpers ---- */

static bool is_punct(const P *p, const char *s) { return p->tok.kind == CT_PUNCT && strcmp(p->tok.text, s) == 0; }
static bool is_word(const P *p, const char *s) { return p->tok.kind == CT_IDENT && strcmp(p->tok.text, s) == 0; }

static void expect(P *p, const char *s, const char *context) {
  if (!is_punct(p, s))
    diag_error(p->diag, p->tok.loc, "expected '%s' %s, found '%s'", s, context, p->tok.text);
  lex(p);
}

static CTok expect_ident(P *p, const char *what) {
  if (p->tok.kind != CT_IDENT)
    diag_error(p->diag, p->tok.loc, "expected %s, found '%s'", what, p->tok.text);
  CTok t = p->tok;
  lex(p);
  return t;
}

static void enter(P *p) {
  if (++p->depth > MAX_NESTING)
    diag_error(p->diag, p->tok.loc, "expression nested more than %d deep", MAX_NESTING);
}

static CExpr *node(P *p, CExprKind kind, Loc loc, const char *name, int nargs) {
  CExpr *e = arena_alloc(p->arena, sizeof *e);
  e->kind = kind;
  e->loc = loc;
  e->name = name;
  e->nargs = nargs;
  e->args = arena_alloc(p->arena, sizeof(CExpr *) * (size_t)(nargs ? nargs : 1));
  return e;
}

/* ---- expressions ---- */

static CExpr *parse_expr(P *p);

static CExpr *parse_primary(P *p) {
  CTok t = p->tok;
  if (t.kind == CT_INT || t.kind == CT_FLOAT) {
    lex(p);
    CExpr *e = node(p, CE_NUM, t.loc, NULL, 0);
    e->is_float = t.kind == CT_FLOAT;
    e->ivalue = t.ivalue;
    e->fvalue = e->is_float ? t.fvalue : (double)t.ivalue;
    e->text = t.text;
    return e;
  }
  if (is_punct(p, "(")) {
    lex(p);
    CExpr *e = parse_expr(p);
    expect(p, ")", "to close the parenthesis");
    return e;
  }
  if (t.kind != CT_IDENT)
    diag_error(p->diag, t.loc, "expected an expression, found '%s'", t.text);
  lex(p);
  if (!is_punct(p, "("))
    return node(p, CE_NAME, t.loc, t.text, 0);
  lex(p);
  CExpr *args[MAX_LIST];
  int n = 0;
  if (!is_punct(p, ")"))
    for (;;) {
      if (n == MAX_LIST)
        diag_error(p->diag, p->tok.loc, "more than %d arguments", MAX_LIST);
      args[n++] = parse_expr(p);
      if (!is_punct(p, ","))
        break;
      lex(p);
    }
  expect(p, ")", "after the arguments");
  CExpr *e = node(p, CE_APPLY, t.loc, t.text, n);
  memcpy(e->args, args, sizeof(CExpr *) * (size_t)n);
  return e;
}

static CExpr *parse_unary(P *p) {
  if (is_punct(p, "-") || is_punct(p, "+") || is_punct(p, "!")) {
    CTok t = p->tok;
    lex(p);
    enter(p);
    CExpr *e = node(p, CE_UNARY, t.loc, t.text, 1);
    e->args[0] = parse_unary(p);
    p->depth--;
    return e;
  }
  return parse_primary(p);
}

/* Binary levels, loosest first (C's precedence). */
static const char *const levels[][4] = {
    {"||"}, {"&&"}, {"==", "!="}, {"<", ">", "<=", ">="}, {"+", "-"}, {"*", "/", "%"},
};
enum { NLEVELS = sizeof levels / sizeof *levels };

static CExpr *parse_level(P *p, int level) {
  if (level == NLEVELS)
    return parse_unary(p);
  enter(p);
  CExpr *lhs = parse_level(p, level + 1);
  for (;;) {
    const char *op = NULL;
    for (int i = 0; i < 4 && levels[level][i]; i++)
      if (is_punct(p, levels[level][i]))
        op = levels[level][i];
    if (!op)
      break;
    Loc loc = p->tok.loc;
    lex(p);
    CExpr *e = node(p, CE_BINARY, loc, op, 2);
    e->args[0] = lhs;
    e->args[1] = parse_level(p, level + 1);
    lhs = e;
  }
  p->depth--;
  return lhs;
}

static CExpr *parse_expr(P *p) {
  enter(p);
  CExpr *cond = parse_level(p, 0);
  if (is_punct(p, "?")) {
    Loc loc = p->tok.loc;
    lex(p);
    CExpr *e = node(p, CE_TERNARY, loc, "?:", 3);
    e->args[0] = cond;
    e->args[1] = parse_expr(p);
    expect(p, ":", "between the two values of '?'");
    e->args[2] = parse_expr(p);
    cond = e;
  }
  p->depth--;
  return cond;
}

/* ---- defs ---- */

static void parse_shape(P *p, CParam *x) {
  expect(p, "(", "to start the shape");
  CExpr *dims[LG_MAX_RANK];
  x->has_shape = true;
  if (!is_punct(p, ")"))
    for (;;) {
      if (x->rank == LG_MAX_RANK)
        diag_error(p->diag, p->tok.loc, "more than %d dimensions", LG_MAX_RANK);
      CTok t = p->tok;
      if (t.kind != CT_IDENT && t.kind != CT_INT)
        diag_error(p->diag, t.loc, "expected a size name or an integer, found '%s'", t.text);
      lex(p);
      CExpr *e = node(p, t.kind == CT_INT ? CE_NUM : CE_NAME, t.loc, t.kind == CT_IDENT ? t.text : NULL, 0);
      e->ivalue = t.ivalue;
      e->text = t.text;
      dims[x->rank++] = e;
      if (!is_punct(p, ","))
        break;
      lex(p);
    }
  expect(p, ")", "to end the shape");
  x->shape = arena_alloc(p->arena, sizeof(CExpr *) * (size_t)(x->rank ? x->rank : 1));
  memcpy(x->shape, dims, sizeof(CExpr *) * (size_t)x->rank);
}

static CParam *parse_params(P *p, bool outputs, int *count) {
  CParam items[MAX_LIST];
  int n = 0;
  for (;;) {
    if (n == MAX_LIST)
      diag_error(p->diag, p->tok.loc, "more than %d parameters", MAX_LIST);
    CParam *x = &items[n++];
    memset(x, 0, sizeof *x);
    CTok first = expect_ident(p, outputs ? "an output name" : "a parameter type");
    if (outputs && (is_punct(p, ",") || is_punct(p, ")"))) {
      x->name = first.text;
      x->loc = first.loc;
    } else {
      x->type = first.text;
      x->type_loc = first.loc;
      if (is_punct(p, "("))
        parse_shape(p, x);
      else if (outputs)
        diag_error(p->diag, p->tok.loc, "an output is a name, or a type with a shape and a name");
      CTok name = expect_ident(p, "a parameter name after its type");
      x->name = name.text;
      x->loc = name.loc;
    }
    if (!is_punct(p, ","))
      break;
    lex(p);
  }
  CParam *out = arena_alloc(p->arena, sizeof(CParam) * (size_t)n);
  memcpy(out, items, sizeof(CParam) * (size_t)n);
  *count = n;
  return out;
}

static void parse_where(P *p, CStmt *s) {
  CRange items[MAX_LIST];
  int n = 0;
  do {
    lex(p); /* 'where' or ',' */
    if (is_word(p, "exists"))
      diag_error(p->diag, p->tok.loc, "'where exists' is not supported: lgen infers ranges from the accesses alone");
    CTok dim = expect_ident(p, "an index name in the where clause");
    if (is_punct(p, "="))
      diag_error(p->diag, p->tok.loc, "'where %s = ...' (a let) is not supported", dim.text);
    if (!is_word(p, "in"))
      diag_error(p->diag, p->tok.loc, "expected 'in' after '%s' (where %s in LO:HI), found '%s'", dim.text, dim.text,
                 p->tok.text);
    lex(p);
    if (n == MAX_LIST)
      diag_error(p->diag, dim.loc, "more than %d ranges", MAX_LIST);
    CRange *r = &items[n++];
    r->dim = dim.text;
    r->loc = dim.loc;
    r->lo = parse_level(p, 0);
    expect(p, ":", "between the bounds of the range (LO:HI)");
    r->hi = parse_level(p, 0);
  } while (is_punct(p, ","));
  s->nranges = n;
  s->ranges = arena_alloc(p->arena, sizeof(CRange) * (size_t)n);
  memcpy(s->ranges, items, sizeof(CRange) * (size_t)n);
}

static void parse_stmt(P *p, CStmt *s) {
  CTok lhs = expect_ident(p, "a statement (an output name)");
  s->loc = lhs.loc;
  s->lhs = lhs.text;
  s->nidx = -1;
  if (is_punct(p, "(")) {
    lex(p);
    const char *idx[LG_MAX_RANK];
    Loc locs[LG_MAX_RANK];
    s->nidx = 0;
    if (!is_punct(p, ")"))
      for (;;) {
        if (s->nidx == LG_MAX_RANK)
          diag_error(p->diag, p->tok.loc, "more than %d indices", LG_MAX_RANK);
        if (p->tok.kind != CT_IDENT)
          diag_error(p->diag, p->tok.loc, "an output is indexed by index names only, found '%s'", p->tok.text);
        locs[s->nidx] = p->tok.loc;
        idx[s->nidx++] = p->tok.text;
        lex(p);
        if (!is_punct(p, ","))
          break;
        lex(p);
      }
    expect(p, ")", "after the output's indices");
    s->idx = arena_alloc(p->arena, sizeof(char *) * (size_t)(s->nidx ? s->nidx : 1));
    s->idx_loc = arena_alloc(p->arena, sizeof(Loc) * (size_t)(s->nidx ? s->nidx : 1));
    memcpy(s->idx, idx, sizeof(char *) * (size_t)s->nidx);
    memcpy(s->idx_loc, locs, sizeof(Loc) * (size_t)s->nidx);
  }
  s->op_loc = p->tok.loc;
  if (is_word(p, "min") || is_word(p, "max")) {
    s->op = strcmp(p->tok.text, "min") == 0 ? "min=" : "max=";
    lex(p);
    if (!is_punct(p, "=") && !is_punct(p, "=!"))
      diag_error(p->diag, p->tok.loc, "expected '=' or '=!' after '%.3s', found '%s'", s->op, p->tok.text);
    s->bang = is_punct(p, "=!");
  } else if (is_punct(p, "=") || is_punct(p, "+=") || is_punct(p, "*=")) {
    s->op = p->tok.text;
  } else if (is_punct(p, "+=!") || is_punct(p, "*=!")) {
    s->op = p->tok.text[0] == '+' ? "+=" : "*=";
    s->bang = true;
  } else {
    diag_error(p->diag, p->tok.loc, "expected an assignment (=, +=, *=, min=, max=, or +=!, *=!, min=!, max=!), found '%s'",
               p->tok.text);
  }
  lex(p);
  s->rhs = parse_expr(p);
  if (is_word(p, "where"))
    parse_where(p, s);
}

static CDef *parse_def(P *p) {
  if (!is_word(p, "def"))
    diag_error(p->diag, p->tok.loc, "expected 'def', found '%s'", p->tok.text);
  lex(p);
  CDef *d = arena_alloc(p->arena, sizeof *d);
  CTok name = expect_ident(p, "the def's name");
  d->name = name.text;
  d->loc = name.loc;
  expect(p, "(", "to start the parameters");
  d->ins = parse_params(p, false, &d->nins);
  expect(p, ")", "to end the parameters");
  expect(p, "->", "before the outputs");
  if (!is_punct(p, "("))
    diag_error(p->diag, p->tok.loc, "expected '(' before the outputs, found '%s' (write -> (A) even for one output)",
               p->tok.text);
  lex(p);
  d->outs = parse_params(p, true, &d->nouts);
  expect(p, ")", "to end the outputs");
  expect(p, "{", "to start the body");
  PtrVec stmts = {0};
  while (!is_punct(p, "}")) {
    if (p->tok.kind == CT_EOF)
      diag_error(p->diag, p->tok.loc, "expected '}' to end def '%s', found end of file", d->name);
    CStmt *s = arena_alloc(p->arena, sizeof *s);
    parse_stmt(p, s);
    vec_push(p->arena, &stmts, s);
  }
  lex(p);
  if (stmts.len == 0)
    diag_error(p->diag, d->loc, "def '%s' has no statements", d->name);
  d->nstmts = stmts.len;
  d->stmts = arena_alloc(p->arena, sizeof(CStmt) * (size_t)stmts.len);
  for (int i = 0; i < stmts.len; i++)
    d->stmts[i] = *(CStmt *)stmts.items[i];
  return d;
}

CFile *tc_classic_parse(const Source *src, Arena *arena, Diag *diag) {
  P p = {.src = src, .line = 1, .col = 1, .arena = arena, .diag = diag};
  CFile *f = arena_alloc(arena, sizeof *f);
  lex(&p);
  while (p.tok.kind != CT_EOF)
    vec_push(arena, &f->defs, parse_def(&p));
  return f;
}

/* A light scan, not the lexer: it must not fail on either format. */
bool tc_classic_sniff(const char *text, size_t len) {
  size_t i = 0;
  /* the next token's start, skipping blanks and both formats' comments */
#define SKIP()                                                                                                         \
  for (;;) {                                                                                                           \
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))                    \
      i++;                                                                                                             \
    if (i < len && (text[i] == '#' || (text[i] == '/' && i + 1 < len && text[i + 1] == '/'))) {                      \
      while (i < len && text[i] != '\n' && text[i] != '\r')                                                          \
        i++;                                                                                                           \
      continue;                                                                                                        \
    }                                                                                                                  \
    break;                                                                                                             \
  }
#define WORD() (i < len && is_ident_start((unsigned char)text[i]))
#define SKIPWORD()                                                                                                     \
  while (i < len && (is_ident_start((unsigned char)text[i]) || is_digit((unsigned char)text[i])))                    \
    i++;
  SKIP();
  if (len - i < 4 || strncmp(text + i, "def", 3) != 0 || WORD() == false)
    return false;
  i += 3;
  if (i < len && (is_ident_start((unsigned char)text[i]) || is_digit((unsigned char)text[i])))
    return false;
  SKIP();
  if (!WORD())
    return false;
  SKIPWORD();
  SKIP();
  if (i >= len || text[i] != '(')
    return false;
  i++;
  SKIP();
  if (!WORD())
    return false;
  SKIPWORD();
  SKIP();
  return i < len && (text[i] == '(' || is_ident_start((unsigned char)text[i]));
#undef SKIP
#undef WORD
#undef SKIPWORD
}
