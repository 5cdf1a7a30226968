/* unit.h - shared helpers for the Criterion unit tests.
 *
 * A Unit is one compilation of a string through lgen's internal stages
 * (lexer, parser, lowering, verifier, emitter), driven directly rather than
 * through lgen_compile, so a test can look at the tokens, the syntax tree or
 * the IR in between. Its Diag unwinds to a jmp_buf that unit_run sets up:
 *
 *   Unit *u = unit_new("def f(A: f32(N)) -> (B: f32(N)) { B(n) = A(n); }");
 *   cr_assert_eq(unit_lower(u), UNIT_OK, "%s", unit_diag(u));
 *   const Kernel *k = unit_kernel(u, 0);
 *   ...
 *   unit_free(u);
 *
 * Every stage function returns UNIT_OK (0), UNIT_ERROR (1: diag_error, a user
 * error) or UNIT_BUG (2: diag_bug, an internal error), which are the values
 * diag.c passes to longjmp. All state the stages change lives in the
 * heap-allocated Unit, so it is well defined after the longjmp. */
#ifndef LGEN_UNIT_H
#define LGEN_UNIT_H

#include <criterion/criterion.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/poly.h"
#include "diag.h"
#include "emit/c_emit.h"
#include "frontend/tc.h"
#include "ir/ir.h"
#include "lgen.h"

#if defined(__GNUC__)
#define UNIT_UNUSED __attribute__((unused))
#else
#define UNIT_UNUSED
#endif

enum { UNIT_OK = 0, UNIT_ERROR = 1, UNIT_BUG = 2, UNIT_MAX_TOKENS = 256 };

typedef struct Unit {
  Arena *arena;
  jmp_buf on_error;
  Diag diag;
  Source src;
  /* filled by the stages */
  Token tokens[UNIT_MAX_TOKENS];
  int ntokens;
  AstFile *file;
  Module module;
  StrBuf c, h;
} Unit;

/* A unit over `len` bytes of `text` (which may contain NUL bytes), shown in
 * diagnostics as "t.tc". */
static UNIT_UNUSED Unit *unit_newn(const char *text, size_t len) {
  Unit *u = calloc(1, sizeof *u);
  cr_assert_not_null(u);
  u->arena = arena_new();
  u->diag.on_error = &u->on_error;
  u->src.name = "t.tc";
  u->src.text = arena_strndup(u->arena, text, len);
  u->src.len = len;
  return u;
}

static UNIT_UNUSED Unit *unit_new(const char *text) { return unit_newn(text, strlen(text)); }

static UNIT_UNUSED void unit_free(Unit *u) {
  if (!u)
    return;
  sb_free(&u->diag.out);
  sb_free(&u->c);
  sb_free(&u->h);
  arena_free(u->arena);
  free(u);
}

/* Everything printed to the unit's Diag so far. */
static UNIT_UNUSED const char *unit_diag(Unit *u) { return sb_cstr(&u->diag.out); }

/* Runs fn(u) with the unit's jmp_buf armed; returns how it ended. */
static UNIT_UNUSED int unit_run(Unit *u, void (*fn)(Unit *)) {
  int status = setjmp(u->on_error);
  if (status == 0) {
    fn(u);
    return UNIT_OK;
  }
  return status;
}

static void unit_stage_lex(Unit *u) {
  Lexer lx;
  lexer_init(&lx, &u->src, u->arena, &u->diag);
  for (;;) {
    cr_assert_lt(u->ntokens, UNIT_MAX_TOKENS, "too many tokens for the test buffer");
    Token t = lexer_next(&lx);
    u->tokens[u->ntokens++] = t;
    if (t.kind == TK_EOF)
      return;
  }
}

static void unit_stage_parse(Unit *u) { u->file = tc_parse(&u->src, u->arena, &u->diag); }

static void unit_stage_lower(Unit *u) {
  u->file = tc_parse(&u->src, u->arena, &u->diag);
  tc_lower(u->file, &u->module, u->arena, &u->diag);
}

static void unit_stage_verify(Unit *u) {
  for (int i = 0; i < u->module.kernels.len; i++)
    ir_verify_kernel(&u->diag, u->module.kernels.items[i]);
}

/* Tokens up to and including TK_EOF go to u->tokens. */
static UNIT_UNUSED int unit_lex(Unit *u) { return unit_run(u, unit_stage_lex); }
/* The syntax tree goes to u->file. */
static UNIT_UNUSED int unit_parse(Unit *u) { return unit_run(u, unit_stage_parse); }
/* Parse and lower: the kernels go to u->module. */
static UNIT_UNUSED int unit_lower(Unit *u) { return unit_run(u, unit_stage_lower); }
/* Verify the kernels in u->module (possibly corrupted by the test). */
static UNIT_UNUSED int unit_verify(Unit *u) { return unit_run(u, unit_stage_verify); }

static UNIT_UNUSED const AstDef *unit_def(Unit *u, int i) {
  cr_assert_not_null(u->file);
  cr_assert_lt(i, u->file->defs.len, "no def #%d", i);
  return u->file->defs.items[i];
}

static UNIT_UNUSED Kernel *unit_kernel(Unit *u, int i) {
  cr_assert_lt(i, u->module.kernels.len, "no kernel #%d", i);
  return u->module.kernels.items[i];
}

/* Lowers `text` and asserts that it succeeded. */
static UNIT_UNUSED Unit *unit_lowered(const char *text) {
  Unit *u = unit_new(text);
  int status = unit_lower(u);
  cr_assert_eq(status, UNIT_OK, "lowering failed (%d):\n%s", status, unit_diag(u));
  return u;
}

/* Runs `text` through a stage that must fail with a user error, and asserts
 * that the one error is at line:col and its message contains `needle`. */
static UNIT_UNUSED void unit_expect_error(int (*stage)(Unit *), const char *text, int line, int col,
                                          const char *needle) {
  Unit *u = unit_new(text);
  int status = stage(u);
  const char *d = unit_diag(u);
  cr_assert_eq(status, UNIT_ERROR, "expected a user error for:\n%s\ngot status %d:\n%s", text, status, d);
  cr_assert_eq(u->diag.errors, 1, "expected exactly one error, got %d:\n%s", u->diag.errors, d);
  char want[64];
  snprintf(want, sizeof want, "t.tc:%d:%d: error: ", line, col);
  const char *at = strstr(d, want);
  cr_assert_not_null(at, "expected an error at %d:%d for:\n%s\ngot:\n%s", line, col, text, d);
  const char *eol = strchr(at, '\n');
  cr_assert_not_null(eol);
  char *header = strndup(at, (size_t)(eol - at));
  cr_assert_not_null(strstr(header, needle), "error message lacks \"%s\": %s", needle, header);
  free(header);
  unit_free(u);
}

/* ---- affine expressions with fixed leaf names (d0.., S0.., a0[elem]) ---- */

static UNIT_UNUSED const char *unit_dim_name(void *ctx, int i) {
  static const char *const names[] = {"i", "j", "k", "l"};
  (void)ctx;
  return i < 4 ? names[i] : "d?";
}

static UNIT_UNUSED const char *unit_size_name(void *ctx, int i) {
  static const char *const names[] = {"M", "N", "K", "L"};
  (void)ctx;
  return i < 4 ? names[i] : "S?";
}

static UNIT_UNUSED const char *unit_attr_name(void *ctx, int i, int elem) {
  static char buf[4][32];
  static int next;
  (void)ctx;
  char *b = buf[next++ % 4];
  snprintf(b, sizeof buf[0], "a%d[%d]", i, elem);
  return b;
}

/* Prints an affine expression into a fresh string (caller frees). */
static UNIT_UNUSED char *unit_affine_str(const AffineExpr *e, bool c_syntax) {
  AffineNames names = {unit_dim_name, unit_size_name, unit_attr_name, NULL, c_syntax};
  StrBuf sb = {0};
  affine_print(&sb, e, &names);
  char *s = strdup(sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

/* ---- the public API ---- */

/* lgen_compile of one source named "t.tc" with the given options (NULL for
 * defaults); the caller frees *out with lgen_output_free. */
static UNIT_UNUSED int unit_compile(const char *text, const lgen_options *opt, lgen_output *out) {
  lgen_options none = {0};
  lgen_source src = {"t.tc", text, strlen(text)};
  return lgen_compile(&src, 1, opt ? opt : &none, out);
}

/* Number of non-overlapping occurrences of needle in hay. */
static UNIT_UNUSED int unit_count(const char *hay, const char *needle) {
  int n = 0;
  size_t len = strlen(needle);
  for (const char *p = hay; (p = strstr(p, needle)); p += len)
    n++;
  return n;
}

/* The line of `text` that contains `needle` (caller frees), or NULL. */
static UNIT_UNUSED char *unit_line_with(const char *text, const char *needle) {
  const char *at = strstr(text, needle);
  if (!at)
    return NULL;
  const char *start = at;
  while (start > text && start[-1] != '\n')
    start--;
  const char *end = strchr(at, '\n');
  return strndup(start, end ? (size_t)(end - start) : strlen(start));
}

/* The line after the first line of `text` containing `needle` (caller frees). */
static UNIT_UNUSED char *unit_line_after(const char *text, const char *needle) {
  const char *at = strstr(text, needle);
  if (!at)
    return NULL;
  const char *nl = strchr(at, '\n');
  if (!nl)
    return NULL;
  const char *end = strchr(nl + 1, '\n');
  return strndup(nl + 1, end ? (size_t)(end - nl - 1) : strlen(nl + 1));
}

#endif
