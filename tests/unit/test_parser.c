/* test_parser.c - the .tc parser (src/frontend/tc_parse.c). */
#include "unit.h"

static Unit *parsed(const char *text) {
  Unit *u = unit_new(text);
  int status = unit_parse(u);
  cr_assert_eq(status, UNIT_OK, "parsing failed for:\n%s\n%s", text, unit_diag(u));
  return u;
}

static void expect_parse_error(const char *text, int line, int col, const char *needle) {
  unit_expect_error(unit_parse, text, line, col, needle);
}

/* ---- syntax trees as s-expressions ---- */

static void index_sexpr(StrBuf *sb, const AstIndex *e) {
  static const char *const ops[] = {[AX_ADD] = "+",          [AX_SUB] = "-",         [AX_MUL] = "*",
                                    [AX_FLOORDIV] = "floordiv", [AX_CEILDIV] = "ceildiv", [AX_MOD] = "mod"};
  switch (e->kind) {
  case AX_INT:
    sb_printf(sb, "%lld", (long long)e->value);
    return;
  case AX_NAME:
    sb_puts(sb, e->name);
    return;
  case AX_INDEXED:
    sb_printf(sb, "%s[", e->name);
    for (int i = 0; i < e->nsubs; i++)
      sb_printf(sb, "%s%lld", i ? " " : "", (long long)e->subs[i]);
    sb_putc(sb, ']');
    return;
  case AX_NEG:
    sb_puts(sb, "(neg ");
    index_sexpr(sb, e->lhs);
    sb_putc(sb, ')');
    return;
  default:
    sb_printf(sb, "(%s ", ops[e->kind]);
    index_sexpr(sb, e->lhs);
    sb_putc(sb, ' ');
    index_sexpr(sb, e->rhs);
    sb_putc(sb, ')');
  }
}

static void use_sexpr(StrBuf *sb, const AstTensorUse *u) {
  sb_printf(sb, "%s(", u->name);
  for (int i = 0; i < u->nidx; i++) {
    if (i)
      sb_puts(sb, ", ");
    index_sexpr(sb, u->idx[i]);
  }
  sb_putc(sb, ')');
}

static void expr_sexpr(StrBuf *sb, const AstExpr *e) {
  if (!e->is_call) {
    use_sexpr(sb, &e->use);
    return;
  }
  sb_printf(sb, "call %s", e->callee);
  if (e->nred) {
    sb_putc(sb, '<');
    for (int i = 0; i < e->nred; i++)
      sb_printf(sb, "%s%s", i ? " " : "", e->red[i]);
    sb_putc(sb, '>');
  }
  sb_putc(sb, '[');
  for (int i = 0; i < e->nargs; i++) {
    if (i)
      sb_puts(sb, "; ");
    expr_sexpr(sb, e->args[i]);
  }
  sb_putc(sb, ']');
}

/* The s-expression of the single index of `A(...)` in `def f(A: f32(1)) -> (O: f32()) { O() = A(INDEX); }`. */
static char *index_of(const char *index) {
  char text[512];
  snprintf(text, sizeof text, "def f(A: f32(1)) -> (O: f32()) attr(s: 3xi64) { O() = A(%s); }", index);
  Unit *u = parsed(text);
  const AstDef *d = unit_def(u, 0);
  const AstExpr *rhs = d->comps[0].rhs[0];
  cr_assert_not(rhs->is_call);
  cr_assert_eq(rhs->use.nidx, 1);
  StrBuf sb = {0};
  index_sexpr(&sb, rhs->use.idx[0]);
  char *s = strdup(sb_cstr(&sb));
  sb_free(&sb);
  unit_free(u);
  return s;
}

static void assert_index(const char *index, const char *want) {
  char *got = index_of(index);
  cr_assert_str_eq(got, want, "%s parsed as %s, want %s", index, got, want);
  free(got);
}

static char *comp_sexpr(const AstComprehension *c) {
  StrBuf sb = {0};
  for (int i = 0; i < c->nlhs; i++) {
    if (i)
      sb_puts(&sb, ", ");
    use_sexpr(&sb, &c->lhs[i]);
  }
  sb_puts(&sb, " = ");
  for (int i = 0; i < c->nrhs; i++) {
    if (i)
      sb_puts(&sb, ", ");
    expr_sexpr(&sb, c->rhs[i]);
  }
  char *s = strdup(sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

/* ---- definitions ---- */

static const char *const matmul_ods =
    "// a comment before\n"
    "ods_def<MatmulOp>\n"
    "implements_interface<LinalgContractionOpInterface, OtherInterface> :\n"
    "def matmul(A: f32(M, K), B: f32(K, N)) -> (C: f32(M, N)) {\n"
    "  C(m, n) = std_addf<k>(C(m, n), std_mulf(A(m, k), B(k, n)));\n"
    "}\n";

Test(parser, ods_def_with_implements_interface) {
  Unit *u = parsed(matmul_ods);
  cr_assert_eq(u->file->defs.len, 1);
  const AstDef *d = unit_def(u, 0);
  cr_assert_str_eq(d->name, "matmul");
  cr_assert_eq(d->loc.line, 4);
  cr_assert_eq(d->loc.col, 5);
  cr_assert_null(d->doc);
  cr_assert_eq(d->nattrs, 0);
  cr_assert_eq(d->nins, 2);
  cr_assert_eq(d->nouts, 1);
  cr_assert_str_eq(d->ins[0].name, "A");
  cr_assert_str_eq(d->ins[0].type, "f32");
  cr_assert_eq(d->ins[0].rank, 2);
  cr_assert_eq(d->ins[0].shape[0]->kind, AX_NAME);
  cr_assert_str_eq(d->ins[0].shape[0]->name, "M");
  cr_assert_str_eq(d->ins[0].shape[1]->name, "K");
  cr_assert_str_eq(d->ins[1].name, "B");
  cr_assert_eq(d->ins[1].loc.col, 26);
  cr_assert_eq(d->ins[1].type_loc.col, 29);
  cr_assert_str_eq(d->outs[0].name, "C");
  cr_assert_eq(d->outs[0].rank, 2);
  cr_assert_eq(d->ncomps, 1);
  char *s = comp_sexpr(&d->comps[0]);
  cr_assert_str_eq(s, "C(m, n) = call std_addf<k>[C(m, n); call std_mulf[A(m, k); B(k, n)]]");
  free(s);
  cr_assert_eq(d->comps[0].loc.line, 5);
  cr_assert_eq(d->comps[0].loc.col, 3);
  unit_free(u);
}

Test(parser, ods_def_without_interface_and_bare_defs_mix) {
  Unit *u = parsed("ods_def<CopyOp>:\ndef copy(I: f32(N)) -> (O: f32(N)) { O(n) = I(n); }\n"
                   "def fill(v: f32()) -> (O: f32(N)) { O(n) = v(); }\n");
  cr_assert_eq(u->file->defs.len, 2);
  cr_assert_str_eq(unit_def(u, 0)->name, "copy");
  const AstDef *fill = unit_def(u, 1);
  cr_assert_str_eq(fill->name, "fill");
  cr_assert_eq(fill->loc.line, 3);
  cr_assert_eq(fill->ins[0].rank, 0);
  char *s = comp_sexpr(&fill->comps[0]);
  cr_assert_str_eq(s, "O(n) = v()");
  free(s);
  unit_free(u);
}

Test(parser, empty_file_has_no_defs) {
  Unit *u = parsed("  // nothing here\n\n");
  cr_assert_eq(u->file->defs.len, 0);
  unit_free(u);
}

Test(parser, bare_def_with_several_comprehensions) {
  Unit *u = parsed("def two(A: f32(N)) -> (B: f32(N), C: f32(N)) {\n  B(i) = A(i);\n  C(j) = B(j);\n}");
  const AstDef *d = unit_def(u, 0);
  cr_assert_eq(d->ncomps, 2);
  cr_assert_eq(d->nouts, 2);
  char *s0 = comp_sexpr(&d->comps[0]), *s1 = comp_sexpr(&d->comps[1]);
  cr_assert_str_eq(s0, "B(i) = A(i)");
  cr_assert_str_eq(s1, "C(j) = B(j)");
  free(s0);
  free(s1);
  cr_assert_eq(d->comps[1].loc.line, 3);
  unit_free(u);
}

Test(parser, attr_block_types) {
  Unit *u = parsed("def conv(I: f32(N)) -> (O: f32(N))\n"
                   "  attr(strides: 2xi64, pads?: 5x6xi32, scale: f32, weights: f32[], dil?: i64, big: 1x2x3xi32)\n"
                   "{ O(n) = I(n); }");
  const AstDef *d = unit_def(u, 0);
  cr_assert_eq(d->nattrs, 6);
  const AstAttrDef *a = d->attrs;
  cr_assert_str_eq(a[0].name, "strides");
  cr_assert_not(a[0].optional);
  cr_assert_eq(a[0].ndims, 1);
  cr_assert_eq(a[0].dims[0], 2);
  cr_assert_str_eq(a[0].type, "i64");
  cr_assert_not(a[0].is_array);
  cr_assert_eq(a[0].loc.line, 2);
  cr_assert_eq(a[0].loc.col, 8);
  cr_assert_eq(a[0].type_loc.col, 17);

  cr_assert_str_eq(a[1].name, "pads");
  cr_assert(a[1].optional);
  cr_assert_eq(a[1].ndims, 2);
  cr_assert_eq(a[1].dims[0], 5);
  cr_assert_eq(a[1].dims[1], 6);
  cr_assert_str_eq(a[1].type, "i32");

  cr_assert_str_eq(a[2].type, "f32");
  cr_assert_eq(a[2].ndims, 0);
  cr_assert_not(a[2].is_array);

  cr_assert_str_eq(a[3].name, "weights");
  cr_assert_str_eq(a[3].type, "f32");
  cr_assert(a[3].is_array);
  cr_assert_eq(a[3].ndims, 0);

  cr_assert(a[4].optional);
  cr_assert_str_eq(a[4].type, "i64");

  cr_assert_eq(a[5].ndims, 3);
  cr_assert_eq(a[5].dims[2], 3);
  cr_assert_str_eq(a[5].type, "i32");
  unit_free(u);
}

Test(parser, attr_block_errors) {
  expect_parse_error("def f(A: f32(N)) -> (O: f32(N)) attr(s: 2yi64) { O(n) = A(n); }", 1, 42,
                     "expected 'x' in the attribute's dimension list");
  expect_parse_error("def f(A: f32(N)) -> (O: f32(N)) attr(s: 2x3) { O(n) = A(n); }", 1, 42,
                     "expected 'x' in the attribute's dimension list");
  expect_parse_error("def f(A: f32(N)) -> (O: f32(N)) attr(s: 2xi64[]) { O(n) = A(n); }", 1, 41,
                     "unsupported vector array attribute");
  expect_parse_error("def f(A: f32(N)) -> (O: f32(N)) attr(s: f32[) { O(n) = A(n); }", 1, 45,
                     "in the array attribute type 'T[]'");
  expect_parse_error("def f(A: f32(N)) -> (O: f32(N)) attr(s f32) { O(n) = A(n); }", 1, 40,
                     "expected ':' after the attribute name");
  expect_parse_error("def f(A: f32(N)) -> (O: f32(N)) attr() { O(n) = A(n); }", 1, 38, "expected an attribute name");
  expect_parse_error("def f(A: f32(N)) -> (O: f32(N)) attr(s: 99999999999999999999xi64) { O(n) = A(n); }", 1,
                     41, "integer literal too large");
  expect_parse_error("def f(A: f32(N)) -> (O: f32(N)) attr(s: 2x99999999999999999999xi64) { O(n) = A(n); }", 1,
                     42, "attribute dimension too large");
}

Test(parser, doc_string_before_or_after_attr) {
  Unit *u = parsed("def f(A: f32(N)) -> (O: f32(N))\n\"\"\"The doc.\n\nMore.\"\"\"\nattr(s: i64)\n{ O(n) = A(n); }\n"
                   "def g(A: f32(N)) -> (O: f32(N)) attr(s: i64) \"\"\" g doc \"\"\" { O(n) = A(n); }");
  cr_assert_str_eq(unit_def(u, 0)->doc, "The doc.\n\nMore.");
  cr_assert_eq(unit_def(u, 0)->nattrs, 1);
  cr_assert_str_eq(unit_def(u, 1)->doc, " g doc ");
  cr_assert_eq(unit_def(u, 1)->nattrs, 1);
  unit_free(u);
}

Test(parser, second_doc_string_or_attr_block_is_an_error) {
  expect_parse_error("def f(A: f32(N)) -> (O: f32(N)) \"\"\"a\"\"\" \"\"\"b\"\"\" { O(n) = A(n); }", 1, 41,
                     "expected '{' to start the op body, found 'a doc string'");
  expect_parse_error("def f(A: f32(N)) -> (O: f32(N)) attr(s: i64) attr(t: i64) { O(n) = A(n); }", 1, 46,
                     "expected '{' to start the op body, found 'attr'");
}

/* ---- affine expressions ---- */

Test(parser, affine_subtraction_is_left_associative) {
  assert_index("a - b - c", "(- (- a b) c)");
  assert_index("a - b + c", "(+ (- a b) c)");
  assert_index("a + b - c", "(- (+ a b) c)");
  assert_index("a - (b - c)", "(- a (- b c))");
}

Test(parser, affine_unary_minus_binds_tighter_than_multiplication) {
  assert_index("-a * 2", "(* (neg a) 2)");
  assert_index("- -a", "(neg (neg a))");
  assert_index("a - -b", "(- a (neg b))");
  assert_index("-(a + b)", "(neg (+ a b))");
  assert_index("2 * -a", "(* 2 (neg a))");
}

Test(parser, affine_multiplicative_precedence) {
  assert_index("a + b * c", "(+ a (* b c))");
  assert_index("a * b + c", "(+ (* a b) c)");
  assert_index("(a + b) * c", "(* (+ a b) c)");
  assert_index("a floordiv 2", "(floordiv a 2)");
  assert_index("a + b floordiv 2", "(+ a (floordiv b 2))");
  assert_index("a floordiv 2 * 3", "(* (floordiv a 2) 3)");
  assert_index("a * 3 floordiv 2", "(floordiv (* a 3) 2)");
  assert_index("a mod 4 + 1", "(+ (mod a 4) 1)");
  assert_index("a ceildiv b mod c", "(mod (ceildiv a b) c)");
  assert_index("((((a))))", "a");
}

Test(parser, affine_leaves) {
  assert_index("0", "0");
  assert_index("9223372036854775807", "9223372036854775807");
  assert_index("s[1]", "s[1]");
  assert_index("s[0, 2, 1] * w", "(* s[0 2 1] w)");
  assert_index("w-kw", "w-kw"); /* one name: '-' is an identifier character */
  assert_index("w -kw", "(- w kw)");
}

Test(parser, affine_binary_node_location_is_the_operator) {
  Unit *u = parsed("def f(A: f32(1)) -> (O: f32()) { O() = A(ab + c floordiv 2); }");
  const AstIndex *e = unit_def(u, 0)->comps[0].rhs[0]->use.idx[0];
  cr_assert_eq(e->kind, AX_ADD);
  cr_assert_eq(e->loc.col, 45);
  cr_assert_eq(e->lhs->loc.col, 42);
  cr_assert_eq(e->rhs->kind, AX_FLOORDIV);
  cr_assert_eq(e->rhs->loc.col, 49);
  cr_assert_eq(e->rhs->rhs->loc.col, 58);
  unit_free(u);
}

Test(parser, affine_errors) {
  expect_parse_error("def f(A: f32(1)) -> (O: f32()) { O() = A(()); }", 1, 43, "no expression inside parentheses");
  expect_parse_error("def f(A: f32(1)) -> (O: f32()) { O() = A(a +); }", 1, 45, "expected an affine expression");
  expect_parse_error("def f(A: f32(1)) -> (O: f32()) { O() = A(s[k]); }", 1, 44, "expected an integer attribute index");
  expect_parse_error("def f(A: f32(1)) -> (O: f32()) { O() = A(s[1); }", 1, 45,
                     "expected ']' to close the attribute index");
  expect_parse_error("def f(A: f32(1)) -> (O: f32()) { O() = A((a + b; }", 1, 48,
                     "expected ')' to close the parenthesis");
  expect_parse_error("def f(A: f32(1)) -> (O: f32()) { O() = A(a floordiv); }", 1, 52, "expected an affine expression");
  expect_parse_error("def f(A: f32(1)) -> (O: f32()) { O() = A(mod); }", 1, 42, "found 'mod'");
}

Test(parser, nesting_limit) {
  char text[2048];
  int n = snprintf(text, sizeof text, "def f(A: f32(1)) -> (O: f32()) { O() = A(");
  for (int i = 0; i < 300; i++)
    text[n++] = '(';
  strcpy(text + n, "a");
  Unit *u = unit_new(text);
  cr_assert_eq(unit_parse(u), UNIT_ERROR);
  cr_assert_not_null(strstr(unit_diag(u), "nested more than 256 levels deep"), "%s", unit_diag(u));
  unit_free(u);
  /* 100 levels are fine */
  n = snprintf(text, sizeof text, "def f(A: f32(1)) -> (O: f32()) { O() = A(");
  for (int i = 0; i < 100; i++)
    text[n++] = '(';
  text[n++] = 'a';
  for (int i = 0; i < 100; i++)
    text[n++] = ')';
  strcpy(text + n, "); }");
  u = parsed(text);
  unit_free(u);
}

Test(parser, rank_limit) {
  /* 16 indices are the limit; the 17th is an error at its position */
  const char *ok = "def f(A: f32(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)) -> (O: f32()) { O() = A(0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0); }";
  Unit *u = parsed(ok);
  cr_assert_eq(unit_def(u, 0)->ins[0].rank, 16);
  unit_free(u);
  expect_parse_error("def f(A: f32(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)) -> (O: f32()) { O() = A(); }", 1, 46,
                     "more than 16 indices");
}

/* ---- comprehensions and expressions ---- */

Test(parser, reduction_lists) {
  Unit *u = parsed("def f(A: f32(M, K, L)) -> (C: f32(M)) {\n"
                   "  C(m) = std_addf<k, l>(C(m), A(m, k, l));\n}");
  const AstExpr *e = unit_def(u, 0)->comps[0].rhs[0];
  cr_assert(e->is_call);
  cr_assert_str_eq(e->callee, "std_addf");
  cr_assert_eq(e->nred, 2);
  cr_assert_str_eq(e->red[0], "k");
  cr_assert_str_eq(e->red[1], "l");
  cr_assert_eq(e->red_loc[0].line, 2);
  cr_assert_eq(e->red_loc[0].col, 19);
  cr_assert_eq(e->red_loc[1].col, 22);
  cr_assert_eq(e->nargs, 2);
  unit_free(u);
}

Test(parser, empty_reduction_list_and_nested_calls) {
  Unit *u = parsed("def f(A: f32(M)) -> (C: f32(M)) { C(m) = std_exp<>(std_maxf(A(m), std_sqrt(A(m)))); }");
  const AstExpr *e = unit_def(u, 0)->comps[0].rhs[0];
  cr_assert(e->is_call);
  cr_assert_eq(e->nred, 0);
  char *s = comp_sexpr(&unit_def(u, 0)->comps[0]);
  cr_assert_str_eq(s, "C(m) = call std_exp[call std_maxf[A(m); call std_sqrt[A(m)]]]");
  free(s);
  unit_free(u);
}

Test(parser, reduction_list_errors) {
  expect_parse_error("def f(A: f32(M)) -> (C: f32()) { C() = std_addf<k,>(C(), A(k)); }", 1, 51,
                     "expected a reduction dim name");
  expect_parse_error("def f(A: f32(M)) -> (C: f32()) { C() = std_addf<k(C(), A(k)); }", 1, 50,
                     "expected '>' to close the reduction list");
  expect_parse_error("def f(A: f32(M)) -> (C: f32()) { C() = A<k>(k); }", 1, 41,
                     "a tensor use takes no reduction list; 'A' is a tensor");
}

Test(parser, multi_output_comprehension) {
  Unit *u = parsed("def f(A: f32(M), B: f32(M)) -> (C: f32(M), D: f32(M)) {\n"
                   "  C(m), D(m) = std_addf(A(m), B(m)), std_mulf(A(m), B(m));\n}");
  const AstComprehension *c = &unit_def(u, 0)->comps[0];
  cr_assert_eq(c->nlhs, 2);
  cr_assert_eq(c->nrhs, 2);
  char *s = comp_sexpr(c);
  cr_assert_str_eq(s, "C(m), D(m) = call std_addf[A(m); B(m)], call std_mulf[A(m); B(m)]");
  free(s);
  cr_assert_eq(c->lhs[1].loc.col, 9);
  cr_assert_eq(c->rhs[1]->loc.col, 38);
  unit_free(u);
}

Test(parser, tensor_use_versus_op_call) {
  /* a name is a tensor use exactly when the def declares a tensor of that name */
  Unit *u = parsed("def f(std_exp: f32(M)) -> (C: f32(M)) { C(m) = std_log(std_exp(m)); }\n"
                   "def g(A: f32(M)) -> (C: f32(M)) { C(m) = std_exp(A(m)); }\n");
  const AstExpr *f = unit_def(u, 0)->comps[0].rhs[0];
  cr_assert(f->is_call);
  cr_assert_eq(f->nargs, 1);
  cr_assert_not(f->args[0]->is_call, "std_exp names a tensor of f");
  cr_assert_str_eq(f->args[0]->use.name, "std_exp");
  cr_assert_eq(f->args[0]->use.nidx, 1);
  const AstExpr *g = unit_def(u, 1)->comps[0].rhs[0];
  cr_assert(g->is_call, "std_exp is not a tensor of g");
  cr_assert_str_eq(g->callee, "std_exp");
  unit_free(u);
  /* a name that is neither a tensor nor a known operation is an error at the name */
  expect_parse_error("def h(A: f32(M)) -> (C: f32(M)) { C(m) = frobnicate(A(m)); }", 1, 42,
                     "unknown operation 'frobnicate'");
  expect_parse_error("def h(A: f32(M)) -> (C: f32(M)) { C(m) = std_addf(A(m), zork()); }", 1, 57,
                     "unknown operation 'zork'");
}

Test(parser, output_tensor_can_be_read) {
  Unit *u = parsed("def f(A: f32(M)) -> (C: f32(M)) { C(m) = std_addf(C(m), A(m)); }");
  const AstExpr *e = unit_def(u, 0)->comps[0].rhs[0];
  cr_assert_not(e->args[0]->is_call);
  cr_assert_str_eq(e->args[0]->use.name, "C");
  unit_free(u);
}

/* ---- error locations ---- */

Test(parser, header_error_locations) {
  expect_parse_error("matmul", 1, 1, "expected 'def' or 'ods_def' to define an op, found 'matmul'");
  expect_parse_error("ods_def<X>\ndef f", 2, 1, "expected ':' after 'ods_def<...>', found 'def'");
  expect_parse_error("ods_def<X> implements_interface<> : def", 1, 33, "expected an interface name");
  expect_parse_error("ods_def<X> implements_interface<I, J : def", 1, 38,
                     "expected '>' to close the interface list");
  expect_parse_error("ods_def X", 1, 9, "expected '<' after 'ods_def'");
  expect_parse_error("def def(A: f32(N))", 1, 5, "keywords cannot be names");
  expect_parse_error("def f(A: f32(N)) (B: f32(N))", 1, 18, "expected '-' ('->') after the inputs");
  expect_parse_error("def f(A: f32(N)) - (B: f32(N))", 1, 20, "expected '>' ('->') after the inputs");
  expect_parse_error("def f(A f32(N))", 1, 9, "expected ':' after the tensor name");
  expect_parse_error("def f(A: (N))", 1, 10, "expected an element type");
  expect_parse_error("def f(A: f32 N)", 1, 14, "expected '(' to start the shape");
  expect_parse_error("def f(A: f32(N), ) -> ()", 1, 18, "expected a tensor name");
  expect_parse_error("def f(A: f32(N)) -> ()", 1, 22, "expected a tensor name");
  /* after ')' the '-' of '->' is punctuation, so no space is needed */
  expect_parse_error("def f(A: f32(N))->(B: f32(N))", 1, 30, "expected '{' to start the op body, found 'end of file'");
}

Test(parser, body_error_locations) {
  expect_parse_error("def f(A: f32(N)) -> (B: f32(N)) {}", 1, 34, "expected an output tensor, found '}'");
  expect_parse_error("def f(A: f32(N)) -> (B: f32(N)) {\n  B(n) = A(n)\n}", 3, 1,
                     "expected ';' to end the comprehension, found '}'");
  expect_parse_error("def f(A: f32(N)) -> (B: f32(N)) {\n  X(n) = A(n);\n}", 2, 3, "'X' is not a tensor of 'f'");
  expect_parse_error("def f(A: f32(N)) -> (B: f32(N)) { B(n) A(n); }", 1, 40, "expected '=' after the written tensors");
  expect_parse_error("def f(A: f32(N)) -> (B: f32(N)) { B(n) = ; }", 1, 42,
                     "expected a tensor, an operation or a number, found ';'");
  expect_parse_error("def f(A: f32(N)) -> (B: f32(N)) { B(n) = std_exp A(n); }", 1, 50,
                     "expected '(' to start the operation's arguments");
  expect_parse_error("def f(A: f32(N)) -> (B: f32(N)) { B(n) = std_exp(A(n); }", 1, 54,
                     "expected ')' to close the argument list");
  expect_parse_error("def f(A: f32(N)) -> (B: f32(N)) { B(n) = A(n);", 1, 47,
                     "expected '}' to end the body of 'f', found end of file");
  expect_parse_error("def f(A: f32(N)) -> (B: f32(N)) {\r\n  B(n) = A(n) + 1;\r\n}", 2, 15,
                     "expected ';' to end the comprehension, found '+'");
}

Test(parser, error_diagnostic_has_source_line_and_caret) {
  Unit *u = unit_new("def f(A: f32(N)) -> (B: f32(N)) {\n  B(n) = A(n)\n  B(n) = A(n);\n}");
  cr_assert_eq(unit_parse(u), UNIT_ERROR);
  cr_assert_str_eq(unit_diag(u), "t.tc:3:3: error: expected ';' to end the comprehension, found 'B'\n"
                                 "  B(n) = A(n);\n"
                                 "  ^\n");
  unit_free(u);
}

Test(parser, list_limits) {
  /* 64 tensors are accepted, the 65th is an error */
  char text[4096];
  int n = snprintf(text, sizeof text, "def f(");
  for (int i = 0; i < 64; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "%sT%d: f32()", i ? ", " : "", i);
  snprintf(text + n, sizeof text - (size_t)n, ") -> (O: f32()) { O() = T0(); }");
  Unit *u = parsed(text);
  cr_assert_eq(unit_def(u, 0)->nins, 64);
  unit_free(u);
  n = snprintf(text, sizeof text, "def f(");
  for (int i = 0; i < 65; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "%sT%d: f32()", i ? ", " : "", i);
  u = unit_new(text);
  cr_assert_eq(unit_parse(u), UNIT_ERROR);
  cr_assert_not_null(strstr(unit_diag(u), "more than 64 tensors"), "%s", unit_diag(u));
  unit_free(u);
}
