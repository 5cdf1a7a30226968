/* tc_lex.c - tokenizer for the .tc format (tc-format.md section 3).
 *
 * Quirks kept from upstream: '-' is an identifier character after the first
 * one (so `w-kw` is one name; tc_sema.c warns about it), integers are
 * unsigned decimal, `->` is two tokens, and comments are `//` only.
 * Deliberate difference: a NUL byte is an error here, not whitespace. */
#include "frontend/tc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_IDENT = 255 };

static const char *const keywords[] = {
    "def", "ods_def", "floordiv", "ceildiv", "mod", "attr", "implements_interface",
};

void lexer_init(Lexer *lx, const Source *src, Arena *arena, Diag *diag) {
  lx->src = src;
  lx->pos = 0;
  lx->line = 1;
  lx->col = 1;
  lx->arena = arena;
  lx->diag = diag;
}

static Loc here(const Lexer *lx) {
  return (Loc){.src = lx->src, .line = lx->line, .col = lx->col, .offset = lx->pos};
}

static int peek(const Lexer *lx, size_t ahead) {
  size_t p = lx->pos + ahead;
  return p < lx->src->len ? (unsigned char)lx->src->text[p] : -1;
}

/* Advances one byte; CR, LF, CRLF and LFCR each count as one newline. */
static void advance(Lexer *lx) {
  int c = peek(lx, 0);
  lx->pos++;
  if (c == '\n' || c == '\r') {
    int next = peek(lx, 0);
    if ((next == '\n' || next == '\r') && next != c)
      lx->pos++;
    lx->line++;
    lx->col = 1;
  } else {
    lx->col++;
  }
}

static bool is_ident_start(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_ident_char(int c) { return is_ident_start(c) || is_digit(c) || c == '-'; }

static void skip_space_and_comments(Lexer *lx) {
  for (;;) {
    int c = peek(lx, 0);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      advance(lx);
    } else if (c == '/' && peek(lx, 1) == '/') {
      while (peek(lx, 0) != -1 && peek(lx, 0) != '\n' && peek(lx, 0) != '\r')
        advance(lx);
    } else {
      return;
    }
  }
}

static Token lex_doc(Lexer *lx, Loc start) {
  for (int i = 0; i < 3; i++)
    advance(lx);
  size_t begin = lx->pos;
  for (;;) {
    if (peek(lx, 0) == -1)
      diag_error(lx->diag, start, "unterminated doc string: expected '\"\"\"' to end it");
    if (peek(lx, 0) == '"' && peek(lx, 1) == '"' && peek(lx, 2) == '"')
      break;
    if (peek(lx, 0) == 0)
      diag_error(lx->diag, here(lx), "NUL byte inside a doc string");
    advance(lx);
  }
  Token t = {.kind = TK_DOC, .loc = start};
  t.text = arena_strndup(lx->arena, lx->src->text + begin, lx->pos - begin);
  for (int i = 0; i < 3; i++)
    advance(lx);
  return t;
}

Token lexer_next(Lexer *lx) {
  skip_space_and_comments(lx);
  Loc start = here(lx);
  int c = peek(lx, 0);
  if (c == -1)
    return (Token){.kind = TK_EOF, .text = "end of file", .loc = start};

  if (is_ident_start(c)) {
    size_t begin = lx->pos;
    while (is_ident_char(peek(lx, 0)))
      advance(lx);
    size_t len = lx->pos - begin;
    if (len > MAX_IDENT)
      diag_error(lx->diag, start, "identifier longer than %d bytes", MAX_IDENT);
    Token t = {.kind = TK_IDENT, .loc = start};
    t.text = arena_strndup(lx->arena, lx->src->text + begin, len);
    for (size_t i = 0; i < sizeof keywords / sizeof *keywords; i++)
      if (strcmp(t.text, keywords[i]) == 0)
        t.kind = TK_KEYWORD;
    return t;
  }

  if (is_digit(c)) {
    /* a float literal (payloads only): digits '.' digits? exponent?, or digits exponent */
    size_t n = 0;
    while (is_digit(peek(lx, n)))
      n++;
    size_t m = n;
    bool is_float = false;
    if (peek(lx, m) == '.') {
      is_float = true;
      m++;
      while (is_digit(peek(lx, m)))
        m++;
    }
    if ((peek(lx, m) == 'e' || peek(lx, m) == 'E') &&
        (is_digit(peek(lx, m + 1)) || ((peek(lx, m + 1) == '+' || peek(lx, m + 1) == '-') && is_digit(peek(lx, m + 2))))) {
      is_float = true;
      m += 2;
      while (is_digit(peek(lx, m)))
        m++;
    }
    if (is_float) {
      if (m > 64)
        diag_error(lx->diag, start, "number literal longer than 64 characters");
      Token t = {.kind = TK_FLOAT, .loc = start};
      t.text = arena_strndup(lx->arena, lx->src->text + lx->pos, m);
      t.fvalue = strtod(t.text, NULL);
      if (isinf(t.fvalue))
        diag_error(lx->diag, start, "'%s' is too large for any floating-point type", t.text);
      for (size_t i = 0; i < m; i++)
        advance(lx);
      return t;
    }
    int64_t v = 0;
    size_t begin = lx->pos;
    while (is_digit(peek(lx, 0))) {
      int d = peek(lx, 0) - '0';
      if (v > (INT64_MAX - d) / 10)
        diag_error(lx->diag, start, "integer literal too large (the limit is %lld)", (long long)INT64_MAX);
      v = v * 10 + d;
      advance(lx);
    }
    Token t = {.kind = TK_INT, .value = v, .loc = start};
    t.text = arena_strndup(lx->arena, lx->src->text + begin, lx->pos - begin);
    return t;
  }

  if (c == '"') {
    if (peek(lx, 1) == '"' && peek(lx, 2) == '"')
      return lex_doc(lx, start);
    diag_error(lx->diag, start, "unexpected '\"': doc strings are written \"\"\"...\"\"\"");
  }

  if (strchr(":,={}()[]<>+-;*?", c) && c != 0) {
    advance(lx);
    Token t = {.kind = TK_PUNCT, .loc = start};
    t.text = arena_strndup(lx->arena, lx->src->text + start.offset, 1);
    return t;
  }

  if (c == '/')
    diag_error(lx->diag, start, "unexpected character '/': comments start with '//'");
  if (c >= 0x21 && c < 0x7f)
    diag_error(lx->diag, start, "unexpected character '%c'", c);
  diag_error(lx->diag, start, "unexpected byte 0x%02x", (unsigned)c);
}
