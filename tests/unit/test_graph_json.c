/* test_graph_json.c - the JSON side of model graphs: json_locate (JSON
 * pointer to byte offset), base64_decode, and the lgen-graph/1 loader
 * (src/frontend/graph_json.c): dependency order, attribute kinds, constant
 * bytes, files, and where its errors point. What the builder infers from a
 * graph is tested with the builder. */
#include <math.h>
#include <unistd.h>

#include "frontend/graph_load.h"
#include "frontend/json_locate.h"
#include "graph/graph.h"
#include "unit.h"

/* ---- json_locate ---- */

static size_t locate(const char *text, const char *pointer) { return json_locate(text, strlen(text), pointer); }

/* The offset of the first occurrence of `needle` in `text`. */
static size_t at(const char *text, const char *needle) {
  const char *p = strstr(text, needle);
  cr_assert_not_null(p, "'%s' not in the test text", needle);
  return (size_t)(p - text);
}

static const char DOC[] = "{\"a\": 1, \"b\": {\"c\": [10, 20, {\"d\": \"x\"}], \"e\": true}, \"f\": [[1], [2, 3]]}";

Test(json_locate, root_and_members) {
  cr_assert_eq(locate(DOC, ""), 0);
  cr_assert_eq(locate(DOC, "/a"), at(DOC, "1,"));
  cr_assert_eq(locate(DOC, "/b"), at(DOC, "{\"c\""));
  cr_assert_eq(locate(DOC, "/b/e"), at(DOC, "true"));
  cr_assert_eq(locate("  \n\t{\"a\": 5}", ""), 4);
  cr_assert_eq(locate("  \n\t{\"a\": 5}", "/a"), 10);
}

Test(json_locate, arrays_and_nesting) {
  cr_assert_eq(locate(DOC, "/b/c/0"), at(DOC, "10"));
  cr_assert_eq(locate(DOC, "/b/c/1"), at(DOC, "20"));
  cr_assert_eq(locate(DOC, "/b/c/2/d"), at(DOC, "\"x\""));
  cr_assert_eq(locate(DOC, "/f/1/1"), at(DOC, "3]"));
  cr_assert_eq(locate(DOC, "/f/1"), at(DOC, "[2, 3]"));
}

Test(json_locate, missing_tail_gives_deepest_prefix) {
  cr_assert_eq(locate(DOC, "/b/c/7"), at(DOC, "[10"));
  cr_assert_eq(locate(DOC, "/b/zz/0"), at(DOC, "{\"c\""));
  cr_assert_eq(locate(DOC, "/a/x"), at(DOC, "1,"));      /* a scalar has no members */
  cr_assert_eq(locate(DOC, "/b/c/-"), at(DOC, "[10"));   /* not an index */
  cr_assert_eq(locate(DOC, "/b/c/d"), at(DOC, "[10"));
  cr_assert_eq(locate(DOC, "/nope"), 0);
  cr_assert_eq(locate(DOC, "no-slash"), 0);
  cr_assert_eq(locate("[1, 2]", "/99999999999999999999999"), 0);
}

Test(json_locate, escapes_in_keys_and_pointers) {
  const char *t = "{\"a/b\": 1, \"m~n\": 2, \"\\u00e9\": 3, \"x\\\"y\": 4, \"\\ud83d\\ude00\": 5, \"\": 6, \"\\/\": 7}";
  cr_assert_eq(locate(t, "/a~1b"), at(t, "1,"));
  cr_assert_eq(locate(t, "/m~0n"), at(t, "2,"));
  cr_assert_eq(locate(t, "/\xc3\xa9"), at(t, "3,"));
  cr_assert_eq(locate(t, "/x\"y"), at(t, "4,"));
  cr_assert_eq(locate(t, "/\xf0\x9f\x98\x80"), at(t, "5,"));
  cr_assert_eq(locate(t, "/"), at(t, "6,"));
  cr_assert_eq(locate(t, "/~1"), at(t, "7}"));
  cr_assert_eq(locate(t, "/a/b"), 0); /* "a" is not a member: '/' splits */
}

Test(json_locate, strings_hide_brackets) {
  const char *t = "{\"s\": \"]}[{\\\"\", \"t\": [\"[\", {\"u\": \"}\"}, 9]}";
  cr_assert_eq(locate(t, "/t"), at(t, "[\"[\""));
  cr_assert_eq(locate(t, "/t/2"), at(t, "9]"));
}

Test(json_locate, garbage_never_crashes) {
  cr_assert_eq(locate("", "/a"), 0);
  cr_assert_eq(locate("   ", ""), 0);
  cr_assert_eq(locate("hello", "/a"), 0);
  cr_assert_eq(locate("}}}", "/a"), 0);
  cr_assert_eq(locate("{\"a\"", "/a"), 0);
  cr_assert_eq(locate("{\"a\": ", "/a"), 0);
  cr_assert_leq(locate("[,,,]", "/2"), 5);
  cr_assert_eq(locate("{\"a\" 1, \"b\": 2}", "/b"), 0);
  cr_assert_eq(json_locate(NULL, 0, "/a"), 0);
  /* every prefix of a document, every pointer: in bounds */
  static const char *const pointers[] = {"", "/a", "/b/c/2/d", "/f/1/1", "/b/e", "/zz"};
  for (size_t n = 0; n <= sizeof DOC - 1; n++)
    for (size_t p = 0; p < sizeof pointers / sizeof *pointers; p++)
      cr_assert_leq(json_locate(DOC, n, pointers[p]), n);
  /* pseudo-random bytes drawn from JSON's alphabet */
  static const char alphabet[] = "{}[]\",:\\ 0a/~u\n";
  char buf[64];
  uint32_t seed = 12345;
  for (int round = 0; round < 20000; round++) {
    size_t len = (size_t)(round % 64);
    for (size_t i = 0; i < len; i++) {
      seed = seed * 1103515245u + 12345u;
      buf[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
    }
    cr_assert_leq(json_locate(buf, len, "/a/0/~1/u"), len);
  }
}

/* ---- base64 ---- */

static bool b64(Arena *arena, const char *s, const char *want, size_t want_len) {
  uint8_t *out = NULL;
  size_t n = 99;
  if (!base64_decode(s, strlen(s), arena, &out, &n))
    return false;
  cr_assert_eq(n, want_len, "'%s' decodes to %zu bytes", s, n);
  cr_assert_eq(memcmp(out, want, n), 0, "'%s' decodes wrongly", s);
  return true;
}

Test(base64, decodes_with_and_without_padding) {
  Arena *a = arena_new();
  cr_assert(b64(a, "", "", 0));
  cr_assert(b64(a, "QQ==", "A", 1));
  cr_assert(b64(a, "QQ", "A", 1));
  cr_assert(b64(a, "QUI=", "AB", 2));
  cr_assert(b64(a, "QUI", "AB", 2));
  cr_assert(b64(a, "QUJD", "ABC", 3));
  cr_assert(b64(a, "AACAPw==", "\x00\x00\x80\x3f", 4));
  cr_assert(b64(a, "+/+/", "\xfb\xff\xbf", 3));
  arena_free(a);
}

Test(base64, rejects_bad_input) {
  Arena *a = arena_new();
  static const char *const bad[] = {"Q", "QQ=", "Q===", "QU*D", "QU JD", "=QQQ", "QQ==QQ==", "QUJDR", "QQ\n=="};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    cr_assert_not(b64(a, bad[i], "", 0), "'%s' was accepted", bad[i]);
  arena_free(a);
}

/* ---- the loader ---- */

typedef struct {
  Unit *u;
  Graph *g;
  PtrVec deps;
  int status;
} Load;

static int run_load(Unit *u, const char *dir, Graph **g, PtrVec *deps) {
  int status = setjmp(u->on_error);
  if (status == 0) {
    *g = graph_load_json(&u->src, dir, NULL, deps, NULL, u->arena, &u->diag);
    return UNIT_OK;
  }
  return status;
}

static Load load_in(const char *text, const char *dir) {
  Load l = {unit_new(text), NULL, {0}, 0};
  l.u->src.name = "t.json";
  l.status = run_load(l.u, dir, &l.g, &l.deps);
  return l;
}

static Load load_ok(const char *text) {
  Load l = load_in(text, ".");
  cr_assert_eq(l.status, UNIT_OK, "loading failed (%d):\n%s", l.status, unit_diag(l.u));
  return l;
}

static void expect_load_error(const char *text, int line, int col, const char *needle) {
  Load l = load_in(text, ".");
  const char *d = unit_diag(l.u);
  cr_assert_eq(l.status, UNIT_ERROR, "expected an error for:\n%s\ngot status %d:\n%s", text, l.status, d);
  cr_assert_eq(l.u->diag.errors, 1, "expected one error:\n%s", d);
  char want[64];
  snprintf(want, sizeof want, "t.json:%d:%d: error: ", line, col);
  cr_assert_eq(strncmp(d, want, strlen(want)), 0, "expected an error at %d:%d, got:\n%s", line, col, d);
  char *header = unit_line_with(d, want);
  cr_assert_not_null(strstr(header, needle), "error lacks \"%s\": %s", needle, header);
  free(header);
  unit_free(l.u);
}

#define HEAD "{\"format\": \"lgen-graph/1\", \"name\": \"t\",\n"
#define X23 "\"inputs\": [{\"name\": \"x\", \"type\": \"f32\", \"shape\": [2, 3]}],\n"

Test(loader, sorts_nodes_by_dependency_then_file_order) {
  Load l = load_ok(HEAD X23 "\"outputs\": [\"e\", \"r2\"],\n"
                            "\"nodes\": [\n"
                            "{\"name\": \"n0\", \"op\": \"exp\", \"inputs\": [\"s\"], \"outputs\": [\"e\"]},\n"
                            "{\"name\": \"n1\", \"op\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"r\"]},\n"
                            "{\"name\": \"n2\", \"op\": \"add\", \"inputs\": [\"r\", \"r\"], \"outputs\": [\"s\"]},\n"
                            "{\"name\": \"n3\", \"op\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"r2\"]}\n"
                            "]}\n");
  static const char *const order[] = {"n1", "n2", "n0", "n3"};
  cr_assert_eq(l.g->nodes.len, 4);
  for (int i = 0; i < 4; i++)
    cr_assert_str_eq(GRAPH_NODE(l.g, i)->name, order[i], "node %d is %s", i, GRAPH_NODE(l.g, i)->name);
  cr_assert_str_eq(l.g->name, "t");
  cr_assert_eq(l.g->outputs.len, 2);
  cr_assert_str_eq(GRAPH_VALUE(l.g, l.g->outputs.items[0])->name, "e");
  unit_free(l.u);
}

/* The producer map grows (64 slots, then 128, ...) while it holds names: a
 * chain of 100 nodes listed last to first still sorts into one order. */
Test(loader, a_long_chain_listed_backwards) {
  StrBuf sb = {0};
  sb_puts(&sb, HEAD X23 "\"outputs\": [\"v99\"],\n\"nodes\": [\n");
  for (int i = 99; i >= 0; i--) {
    char in[16];
    snprintf(in, sizeof in, i ? "v%d" : "x", i - 1);
    sb_printf(&sb, "{\"name\": \"n%d\", \"op\": \"relu\", \"inputs\": [\"%s\"], \"outputs\": [\"v%d\"]}%s\n", i, in, i,
              i ? "," : "");
  }
  sb_puts(&sb, "]}\n");
  Load l = load_ok(sb_cstr(&sb));
  sb_free(&sb);
  cr_assert_eq(l.g->nodes.len, 100);
  for (int i = 0; i < 100; i++) {
    char want[16];
    snprintf(want, sizeof want, "n%d", i);
    cr_assert_str_eq(GRAPH_NODE(l.g, i)->name, want, "node %d is %s", i, GRAPH_NODE(l.g, i)->name);
  }
  unit_free(l.u);
}

Test(loader, symbolic_dims_become_symbols) {
  Load l = load_ok(HEAD "\"inputs\": [{\"name\": \"x\", \"type\": \"f32\", \"shape\": [\"N\", 4, \"M\"]}],\n"
                        "\"outputs\": [{\"name\": \"y\", \"type\": \"f32\", \"shape\": [\"N\", 4, \"M\"]}],\n"
                        "\"nodes\": [{\"op\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}]}\n");
  cr_assert_eq(l.g->symbols.len, 2);
  cr_assert_str_eq(l.g->symbols.items[0], "N");
  cr_assert_str_eq(l.g->symbols.items[1], "M");
  const GraphValue *x = GRAPH_VALUE(l.g, graph_find(l.g, "x"));
  cr_assert_eq(x->rank, 3);
  cr_assert_eq(x->shape[0]->kind, AE_SIZE);
  cr_assert_eq(x->shape[0]->index, 0);
  cr_assert_eq(x->shape[1]->kind, AE_CONST);
  cr_assert_eq(x->shape[1]->value, 4);
  cr_assert_eq(x->shape[2]->index, 1);
  cr_assert_str_eq(x->path, "/inputs/0");
  unit_free(l.u);
}

Test(loader, attribute_kinds_and_paths) {
  Load l = load_ok(HEAD X23 "\"outputs\": [\"y\"],\n"
                            "\"nodes\": [{\"op\": \"pad\", \"inputs\": [\"x\"], \"outputs\": [\"y\"],\n"
                            "  \"attrs\": {\"padding\": [[1, 0], [0, 2]], \"value\": 0.5}}]}\n");
  const GraphNode *n = GRAPH_NODE(l.g, 0);
  const GraphAttr *pad = graph_attr(l.g, n, "padding");
  cr_assert_not_null(pad);
  cr_assert_eq(pad->kind, GA_INTS2);
  cr_assert_eq(pad->n, 2);
  cr_assert_eq(pad->ints[0], 1);
  cr_assert_eq(pad->ints[3], 2);
  cr_assert_str_eq(pad->path, "/nodes/0/attrs/padding");
  const GraphAttr *value = graph_attr(l.g, n, "value");
  cr_assert_eq(value->kind, GA_FLOAT);
  cr_assert_float_eq(value->f, 0.5, 0);
  const GraphValue *y = GRAPH_VALUE(l.g, graph_find(l.g, "y"));
  int64_t d0 = 0, d1 = 0;
  cr_assert(graph_dim_value(y->shape[0], &d0) && graph_dim_value(y->shape[1], &d1));
  cr_assert_eq(d0, 3);
  cr_assert_eq(d1, 5);
  unit_free(l.u);
}

static const GraphValue *const_named(const Load *l, const char *name) {
  int v = graph_find(l->g, name);
  cr_assert_geq(v, 0, "no value %s", name);
  const GraphValue *c = GRAPH_VALUE(l->g, v);
  cr_assert_eq(c->kind, GV_CONST);
  return c;
}

static unsigned le16(const GraphValue *v, int i) {
  const uint8_t *p = (const uint8_t *)v->data + 2 * i;
  return (unsigned)(p[0] | p[1] << 8);
}

Test(loader, constant_data_in_every_spelling) {
  Load l = load_ok(HEAD X23 "\"outputs\": [\"x\"],\n\"constants\": [\n"
                            "{\"name\": \"f\", \"type\": \"f32\", \"shape\": [5],"
                            " \"data\": [1, -2.5, \"NaN\", \"Infinity\", \"-Infinity\"]},\n"
                            "{\"name\": \"h\", \"type\": \"f16\", \"shape\": [2, 2], \"data\": [1, 65504, 6e-8, -2]},\n"
                            "{\"name\": \"r\", \"type\": \"f16\", \"shape\": [9],"
                            " \"data\": [2047.9, 0.99999, 2049, 2051, 65519, \"-Infinity\", -3.0517e-5, \"NaN\", 0.375]},\n"
                            "{\"name\": \"b\", \"type\": \"i1\", \"shape\": [3], \"data\": [true, false, 1]},\n"
                            "{\"name\": \"i\", \"type\": \"i64\", \"shape\": [], \"data\": -9223372036854775808},\n"
                            "{\"name\": \"e\", \"type\": \"f32\", \"shape\": [2], \"base64\": \"AACAPwAAAEA=\"}\n"
                            "]}\n");
  const GraphValue *f = const_named(&l, "f");
  cr_assert_float_eq(graph_const_f(f, 0), 1.0, 0);
  cr_assert_float_eq(graph_const_f(f, 1), -2.5, 0);
  cr_assert(isnan(graph_const_f(f, 2)));
  cr_assert(isinf(graph_const_f(f, 3)) && graph_const_f(f, 3) > 0);
  cr_assert(isinf(graph_const_f(f, 4)) && graph_const_f(f, 4) < 0);
  const GraphValue *h = const_named(&l, "h");
  cr_assert_eq(le16(h, 0), 0x3C00);
  cr_assert_eq(le16(h, 1), 0x7BFF);
  cr_assert_eq(le16(h, 2), 0x0001); /* the smallest subnormal */
  cr_assert_eq(le16(h, 3), 0xC000);
  /* rounded to nearest even, as NumPy's float16 rounds them: into the next
   * binade (2047.9, 0.99999), ties to even (2049, 2051), the last value
   * that rounds to the largest finite one (65520 is refused), an infinity,
   * a subnormal, NaN */
  const GraphValue *r = const_named(&l, "r");
  static const unsigned want16[9] = {0x6800, 0x3C00, 0x6800, 0x6802, 0x7BFF, 0xFC00, 0x8200, 0x7E00, 0x3600};
  for (int i = 0; i < 9; i++)
    cr_assert_eq(le16(r, i), want16[i], "element %d: %#x, not %#x", i, le16(r, i), want16[i]);
  /* and read back as the builder folds them: normal, subnormal, above and
   * below 1, infinite, NaN; as integers, saturated */
  static const double back[9] = {2048, 1, 2048, 2052, 65504, -INFINITY, -0x200p-24, 0, 0.375};
  for (int i = 0; i < 9; i++)
    if (i != 7)
      cr_assert_eq(graph_const_f(r, i), back[i], "element %d reads %a, not %a", i, graph_const_f(r, i), back[i]);
  cr_assert(isnan(graph_const_f(r, 7)));
  cr_assert_eq(graph_const_f(h, 2), 0x1p-24);
  cr_assert_eq(graph_const_f(h, 3), -2.0);
  cr_assert_eq(graph_const_i(r, 3), 2052);
  cr_assert_eq(graph_const_i(r, 5), INT64_MIN);
  cr_assert_eq(graph_const_i(r, 8), 0);
  const GraphValue *b = const_named(&l, "b");
  cr_assert_eq(((const uint8_t *)b->data)[0], 1);
  cr_assert_eq(((const uint8_t *)b->data)[1], 0);
  cr_assert_eq(((const uint8_t *)b->data)[2], 1);
  cr_assert_eq(graph_const_i(const_named(&l, "i"), 0), INT64_MIN);
  cr_assert_float_eq(graph_const_f(const_named(&l, "e"), 1), 2.0, 0);
  unit_free(l.u);
}

Test(loader, constant_files_are_relative_and_recorded) {
  char dir[] = "/tmp/lgen-unit-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char *path = malloc(sizeof dir + 8);
  cr_assert_not_null(path);
  snprintf(path, sizeof dir + 8, "%s/w.bin", dir);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  static const uint8_t bytes[] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40};
  fwrite(bytes, 1, sizeof bytes, f);
  fclose(f);
  Load l = load_in(HEAD X23 "\"outputs\": [\"w\"],\n\"constants\": [\n"
                            "{\"name\": \"w\", \"type\": \"f32\", \"shape\": [2], \"file\": \"w.bin\"}]}\n",
                   dir);
  cr_assert_eq(l.status, UNIT_OK, "%s", unit_diag(l.u));
  cr_assert_float_eq(graph_const_f(const_named(&l, "w"), 1), 2.0, 0);
  cr_assert_eq(l.deps.len, 1);
  cr_assert_str_eq(l.deps.items[0], path);
  unit_free(l.u);
  l = load_in(HEAD X23 "\"outputs\": [\"w\"],\n\"constants\": [\n"
                       "{\"name\": \"w\", \"type\": \"f32\", \"shape\": [3], \"file\": \"w.bin\"}]}\n",
              dir);
  cr_assert_eq(l.status, UNIT_ERROR);
  cr_assert_not_null(strstr(unit_diag(l.u), "has 8 bytes, but the tensor needs 12"), "%s", unit_diag(l.u));
  unit_free(l.u);
  unlink(path);
  rmdir(dir);
  free(path);
}

Test(loader, errors_point_at_the_offending_value) {
  expect_load_error("{\"format\": \"lgen-graph/1\",\n  \"nodes\": [1 2]}", 2, 15, "invalid JSON: ']' expected");
  expect_load_error("{\"format\": \"onnx\"}", 1, 12, "unknown graph format");
  expect_load_error("{\"a\": 1}", 1, 1, "not a model graph");
  expect_load_error(HEAD X23 "\"outputs\": [\"y\"],\n\"nodes\": [{\"op\": \"nope\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}]}",
                    4, 18, "unknown op 'nope'");
  expect_load_error(HEAD X23 "\"outputs\": [\"y\"],\n\"nodes\": [{\"op\": \"relu\", \"inputs\": [\"q\"], \"outputs\": [\"y\"]}]}",
                    4, 37, "undefined value 'q'");
  expect_load_error(HEAD X23 "\"outputs\": [\"z\"],\n\"nodes\": [{\"op\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}]}",
                    3, 13, "output 'z' is never produced");
  expect_load_error(HEAD X23 "\"outputs\": [\"y\"],\n\"nodes\": [\n"
                             "{\"op\": \"relu\", \"inputs\": [\"z\"], \"outputs\": [\"y\"]},\n"
                             "{\"op\": \"relu\", \"inputs\": [\"y\"], \"outputs\": [\"z\"]}]}",
                    5, 1, "dependency cycle: node 0 -> node 1 -> node 0");
  expect_load_error(HEAD X23 "\"outputs\": [\"y\"],\n\"constants\": [{\"name\": \"c\", \"type\": \"f32\", \"shape\": [2],"
                             " \"data\": [1]}]}",
                    4, 66, "\"data\" has 1 element; the shape needs 2");
  expect_load_error(HEAD X23 "\"outputs\": [\"y\"],\n\"nodes\": [{\"op\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"],"
                             " \"attrs\": {\"a/b\": null}}]}",
                    4, 78, "attribute 'a/b' must be");
}
