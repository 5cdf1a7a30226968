/* test_lexer.c - the .tc tokenizer (src/frontend/tc_lex.c). */
#include "unit.h"

/* Lexes text, which must succeed; returns the unit (caller frees). */
static Unit *lexed(const char *text) {
  Unit *u = unit_new(text);
  int status = unit_lex(u);
  cr_assert_eq(status, UNIT_OK, "lexing failed:\n%s", unit_diag(u));
  return u;
}

static void assert_token(const Unit *u, int i, TokenKind kind, const char *text, int line, int col) {
  cr_assert_lt(i, u->ntokens, "only %d tokens", u->ntokens);
  const Token *t = &u->tokens[i];
  cr_assert_eq(t->kind, kind, "token %d ('%s'): kind %d, want %d", i, t->text, (int)t->kind, (int)kind);
  if (text)
    cr_assert_str_eq(t->text, text, "token %d", i);
  cr_assert_eq(t->loc.line, line, "token %d ('%s'): line %d, want %d", i, t->text, t->loc.line, line);
  cr_assert_eq(t->loc.col, col, "token %d ('%s'): col %d, want %d", i, t->text, t->loc.col, col);
  cr_assert_eq(t->loc.src, &u->src);
}

static void expect_lex_error(const char *text, int line, int col, const char *needle) {
  unit_expect_error(unit_lex, text, line, col, needle);
}

Test(lexer, def_header_tokens) {
  Unit *u = lexed("def f(A: f32(N)) -> (B: f32(N))");
  static const struct {
    TokenKind kind;
    const char *text;
    int col;
  } want[] = {
      {TK_KEYWORD, "def", 1}, {TK_IDENT, "f", 5},  {TK_PUNCT, "(", 6},  {TK_IDENT, "A", 7},
      {TK_PUNCT, ":", 8},     {TK_IDENT, "f32", 10}, {TK_PUNCT, "(", 13}, {TK_IDENT, "N", 14},
      {TK_PUNCT, ")", 15},    {TK_PUNCT, ")", 16}, {TK_PUNCT, "-", 18}, {TK_PUNCT, ">", 19},
      {TK_PUNCT, "(", 21},    {TK_IDENT, "B", 22}, {TK_PUNCT, ":", 23}, {TK_IDENT, "f32", 25},
      {TK_PUNCT, "(", 28},    {TK_IDENT, "N", 29}, {TK_PUNCT, ")", 30}, {TK_PUNCT, ")", 31},
  };
  int n = (int)(sizeof want / sizeof *want);
  cr_assert_eq(u->ntokens, n + 1, "got %d tokens", u->ntokens);
  for (int i = 0; i < n; i++)
    assert_token(u, i, want[i].kind, want[i].text, 1, want[i].col);
  assert_token(u, n, TK_EOF, NULL, 1, 32);
  cr_assert_eq(u->tokens[n].loc.offset, 31);
  unit_free(u);
}

Test(lexer, every_punctuation_character) {
  const char *punct = ":,={}()[]<>+-;*?";
  Unit *u = lexed(":,={}()[]<>+-;*?");
  cr_assert_eq(u->ntokens, (int)strlen(punct) + 1);
  for (int i = 0; punct[i]; i++) {
    char s[2] = {punct[i], 0};
    assert_token(u, i, TK_PUNCT, s, 1, i + 1);
    cr_assert_eq(u->tokens[i].loc.offset, (size_t)i);
  }
  unit_free(u);
}

Test(lexer, keywords) {
  static const char *const kw[] = {"def", "ods_def", "floordiv", "ceildiv", "mod", "attr", "implements_interface"};
  for (size_t i = 0; i < sizeof kw / sizeof *kw; i++) {
    Unit *u = lexed(kw[i]);
    assert_token(u, 0, TK_KEYWORD, kw[i], 1, 1);
    assert_token(u, 1, TK_EOF, NULL, 1, (int)strlen(kw[i]) + 1);
    unit_free(u);
  }
}

Test(lexer, near_keywords_are_identifiers) {
  /* prefixes, extensions, case variants and hyphenations of keywords */
  Unit *u = lexed("define de Def mods attr_ ods-def floordiv2 _def");
  const char *want[] = {"define", "de", "Def", "mods", "attr_", "ods-def", "floordiv2", "_def"};
  cr_assert_eq(u->ntokens, 9);
  for (int i = 0; i < 8; i++) {
    cr_assert_eq(u->tokens[i].kind, TK_IDENT, "'%s' lexed as kind %d", want[i], (int)u->tokens[i].kind);
    cr_assert_str_eq(u->tokens[i].text, want[i]);
  }
  unit_free(u);
}

Test(lexer, hyphen_is_an_identifier_character_after_the_first) {
  Unit *u = lexed("w-kw w - kw -a b- x_1-2");
  assert_token(u, 0, TK_IDENT, "w-kw", 1, 1);
  assert_token(u, 1, TK_IDENT, "w", 1, 6);
  assert_token(u, 2, TK_PUNCT, "-", 1, 8);
  assert_token(u, 3, TK_IDENT, "kw", 1, 10);
  assert_token(u, 4, TK_PUNCT, "-", 1, 13);
  assert_token(u, 5, TK_IDENT, "a", 1, 14);
  assert_token(u, 6, TK_IDENT, "b-", 1, 16);
  assert_token(u, 7, TK_IDENT, "x_1-2", 1, 19);
  assert_token(u, 8, TK_EOF, NULL, 1, 24);
  unit_free(u);
}

Test(lexer, arrow_after_identifier_swallows_the_hyphen) {
  /* upstream quirk kept on purpose: `A->` is the identifier "A-" then '>' */
  Unit *u = lexed("A->B");
  assert_token(u, 0, TK_IDENT, "A-", 1, 1);
  assert_token(u, 1, TK_PUNCT, ">", 1, 3);
  assert_token(u, 2, TK_IDENT, "B", 1, 4);
  unit_free(u);
}

Test(lexer, integers) {
  Unit *u = lexed("0 42 007 9223372036854775807 12ab");
  assert_token(u, 0, TK_INT, "0", 1, 1);
  cr_assert_eq(u->tokens[0].value, 0);
  assert_token(u, 1, TK_INT, "42", 1, 3);
  cr_assert_eq(u->tokens[1].value, 42);
  assert_token(u, 2, TK_INT, "007", 1, 6);
  cr_assert_eq(u->tokens[2].value, 7);
  assert_token(u, 3, TK_INT, "9223372036854775807", 1, 10);
  cr_assert_eq(u->tokens[3].value, INT64_MAX);
  /* a number ends where the digits end */
  assert_token(u, 4, TK_INT, "12", 1, 30);
  cr_assert_eq(u->tokens[4].value, 12);
  assert_token(u, 5, TK_IDENT, "ab", 1, 32);
  unit_free(u);
}

Test(lexer, integer_overflow_is_an_error_at_the_literal) {
  expect_lex_error("x 9223372036854775808", 1, 3, "integer literal too large");
  expect_lex_error("(\n  99999999999999999999999)", 2, 3, "integer literal too large");
  /* the limit itself is fine, one more digit is not */
  expect_lex_error("92233720368547758070", 1, 1, "the limit is 9223372036854775807");
}

Test(lexer, lf_cr_and_crlf_each_count_one_line) {
  Unit *u = lexed("a\nb\rc\r\nd\n\re\n\nf\r\rg");
  assert_token(u, 0, TK_IDENT, "a", 1, 1);
  assert_token(u, 1, TK_IDENT, "b", 2, 1);
  assert_token(u, 2, TK_IDENT, "c", 3, 1);
  assert_token(u, 3, TK_IDENT, "d", 4, 1); /* CRLF is one newline */
  assert_token(u, 4, TK_IDENT, "e", 5, 1); /* so is LFCR */
  assert_token(u, 5, TK_IDENT, "f", 7, 1); /* LF LF is two */
  assert_token(u, 6, TK_IDENT, "g", 9, 1); /* CR CR is two */
  cr_assert_eq(u->tokens[6].loc.offset, 16);
  unit_free(u);
}

Test(lexer, crlf_crlf_is_two_lines) {
  Unit *u = lexed("a\r\n\r\nb\n\r\n\rc");
  assert_token(u, 1, TK_IDENT, "b", 3, 1);
  assert_token(u, 2, TK_IDENT, "c", 5, 1);
  unit_free(u);
}

Test(lexer, columns_count_bytes_and_tabs_are_one_column) {
  Unit *u = lexed("  ab\tcd\n\t\tx  y");
  assert_token(u, 0, TK_IDENT, "ab", 1, 3);
  assert_token(u, 1, TK_IDENT, "cd", 1, 6);
  assert_token(u, 2, TK_IDENT, "x", 2, 3);
  assert_token(u, 3, TK_IDENT, "y", 2, 6);
  cr_assert_eq(u->tokens[3].loc.offset, 13);
  assert_token(u, 4, TK_EOF, NULL, 2, 7);
  unit_free(u);
}

Test(lexer, eof_after_trailing_newline_is_on_the_next_line) {
  Unit *u = lexed("x\r\n");
  assert_token(u, 1, TK_EOF, "end of file", 2, 1);
  cr_assert_eq(u->tokens[1].loc.offset, 3);
  unit_free(u);
  u = lexed("");
  cr_assert_eq(u->ntokens, 1);
  assert_token(u, 0, TK_EOF, NULL, 1, 1);
  unit_free(u);
}

Test(lexer, doc_string) {
  Unit *u = lexed("x \"\"\"Hello \"quoted\" \"\" text\nsecond line\"\"\" y");
  assert_token(u, 0, TK_IDENT, "x", 1, 1);
  assert_token(u, 1, TK_DOC, "Hello \"quoted\" \"\" text\nsecond line", 1, 3);
  /* lines inside the doc string are counted */
  assert_token(u, 2, TK_IDENT, "y", 2, 16);
  unit_free(u);
}

Test(lexer, empty_doc_string) {
  Unit *u = lexed("\"\"\"\"\"\"z");
  assert_token(u, 0, TK_DOC, "", 1, 1);
  assert_token(u, 1, TK_IDENT, "z", 1, 7);
  unit_free(u);
}

Test(lexer, doc_string_errors) {
  expect_lex_error("a\n  \"\"\"never closed\n\"\"", 2, 3, "unterminated doc string");
  expect_lex_error("a \"b\"", 1, 3, "doc strings are written");
  expect_lex_error("\"\"x", 1, 1, "unexpected '\"'");
  const char nul_doc[] = "\"\"\"ab\0cd\"\"\"";
  Unit *u = unit_newn(nul_doc, sizeof nul_doc - 1);
  cr_assert_eq(unit_lex(u), UNIT_ERROR);
  cr_assert_not_null(strstr(unit_diag(u), "t.tc:1:6: error: NUL byte inside a doc string"), "%s", unit_diag(u));
  unit_free(u);
}

Test(lexer, comments) {
  Unit *u = lexed("// leading\na // trailing ( ) @ \"\nb//x\r\nc // to the end");
  cr_assert_eq(u->ntokens, 4);
  assert_token(u, 0, TK_IDENT, "a", 2, 1);
  assert_token(u, 1, TK_IDENT, "b", 3, 1);
  assert_token(u, 2, TK_IDENT, "c", 4, 1);
  assert_token(u, 3, TK_EOF, NULL, 4, 16);
  unit_free(u);
  /* a comment ended by a bare CR */
  u = lexed("// c\rq");
  assert_token(u, 0, TK_IDENT, "q", 2, 1);
  unit_free(u);
}

Test(lexer, single_slash_is_an_error) {
  expect_lex_error("a / b", 1, 3, "comments start with '//'");
  expect_lex_error("a\n/* block */", 2, 1, "unexpected character '/'");
}

Test(lexer, unexpected_characters) {
  expect_lex_error("a @ b", 1, 3, "unexpected character '@'");
  expect_lex_error("x.y", 1, 2, "unexpected character '.'");
  expect_lex_error("\n\n   #", 3, 4, "unexpected character '#'");
  expect_lex_error("a\x01", 1, 2, "unexpected byte 0x01");
  expect_lex_error("\xff", 1, 1, "unexpected byte 0xff");
  expect_lex_error("ab\x7f", 1, 3, "unexpected byte 0x7f");
  /* NUL is an error, not whitespace or the end of the input */
  const char nul[] = "ab\0cd";
  Unit *u = unit_newn(nul, sizeof nul - 1);
  cr_assert_eq(unit_lex(u), UNIT_ERROR);
  cr_assert_not_null(strstr(unit_diag(u), "t.tc:1:3: error: unexpected byte 0x00"), "%s", unit_diag(u));
  unit_free(u);
}

Test(lexer, error_shows_source_line_and_caret) {
  Unit *u = unit_new("first\n\tab @ cd\nthird");
  cr_assert_eq(unit_lex(u), UNIT_ERROR);
  cr_assert_str_eq(unit_diag(u), "t.tc:2:5: error: unexpected character '@'\n"
                                 "\tab @ cd\n"
                                 "\t   ^\n");
  unit_free(u);
}

Test(lexer, caret_line_for_crlf_source) {
  Unit *u = unit_new("a\r\n  $\r\n");
  cr_assert_eq(unit_lex(u), UNIT_ERROR);
  cr_assert_str_eq(unit_diag(u), "t.tc:2:3: error: unexpected character '$'\n  $\n  ^\n");
  unit_free(u);
}

Test(lexer, identifier_length_limit) {
  char ok[256 + 1], bad[257 + 2];
  memset(ok, 'a', 255);
  ok[255] = '\0';
  Unit *u = lexed(ok);
  cr_assert_eq(strlen(u->tokens[0].text), 255);
  unit_free(u);
  bad[0] = ' ';
  memset(bad + 1, 'b', 256);
  bad[257] = '\0';
  expect_lex_error(bad, 1, 2, "identifier longer than 255 bytes");
}

/* payload literals: a point or an exponent makes a float; 2xi64's digits
 * before an identifier stay an integer */
Test(lexer, float_literals) {
  Unit *u = lexed("1.5 2e3 3.E-1 7 4. 2xi64 5e");
  assert_token(u, 0, TK_FLOAT, "1.5", 1, 1);
  assert_token(u, 1, TK_FLOAT, "2e3", 1, 5);
  assert_token(u, 2, TK_FLOAT, "3.E-1", 1, 9);
  assert_token(u, 3, TK_INT, "7", 1, 15);
  assert_token(u, 4, TK_FLOAT, "4.", 1, 17);
  assert_token(u, 5, TK_INT, "2", 1, 20);
  assert_token(u, 6, TK_IDENT, "xi64", 1, 21);
  assert_token(u, 7, TK_INT, "5", 1, 26);
  assert_token(u, 8, TK_IDENT, "e", 1, 27);
  cr_assert_float_eq(u->tokens[2].fvalue, 0.3, 1e-15);
  unit_free(u);
  expect_lex_error("x 1e999", 1, 3, "too large for any floating-point type");
}
