/* test_json_index.c - JsonIndex (json_locate.c), the one-pass index behind
 * the JSON front-ends' graph locator: it must give json_locate's answer for
 * every pointer (it only caches it), take lines and columns as graph_loc
 * always did, and spare a lowered graph any rescan of its text. */
#include "frontend/graph_load.h"
#include "frontend/json_locate.h"
#include "graph/graph.h"
#include "unit.h"

/* ---- same answers as json_locate ---- */

/* Every answer of the index for text, checked against json_locate. */
static void expect_same(const char *text, size_t len, const char *const *pointers, int n) {
  Arena *a = arena_new();
  JsonIndex *ix = json_index_new(a, text, len);
  for (int i = 0; i < n; i++) {
    size_t want = json_locate(text, len, pointers[i]);
    size_t got = json_index_locate(ix, pointers[i]);
    cr_assert_eq(got, want, "pointer '%s': index %zu, json_locate %zu", pointers[i] ? pointers[i] : "(null)", got,
                 want);
  }
  arena_free(a);
}

static const char DOC[] =
    "{\"a\": 1, \"b\": {\"c\": [10, 20, {\"d\": \"x\"}], \"e\": true}, \"f\": [[1], [2, 3]],\n"
    " \"a/b\": {\"m~n\": [null]}, \"\\u00e9\": 3, \"x\\\"y\": 4, \"\\ud83d\\ude00\": 5, \"\": {\"\": 6}, \"\\/\": 7,\n"
    " \"dup\": {\"x\": 1}, \"dup\": {\"y\": 2}, \"bad\\u00\": {\"z\": 1}, \"nul\\u0000\": {\"z\": 2},\n"
    " \"e1\": [], \"e2\": {}, \"s\": \"[{\\\"]}\", \"g\": [ {\"h\" : [ 1 , {\"i\":-2e5} ] } ] }";

static const char *const POINTERS[] = {
    NULL, "", "x", "/", "//", "/a", "/a/0", "/b", "/b/c", "/b/c/0", "/b/c/1", "/b/c/2", "/b/c/2/d", "/b/c/3",
    "/b/c/02", "/b/c/-", "/b/e", "/f/0/0", "/f/1/1", "/f/2", "/a~1b", "/a~1b/m~0n", "/a~1b/m~0n/0", "/a/b",
    "/\xc3\xa9", "/x\"y", "/\xf0\x9f\x98\x80", "/~1", "/dup", "/dup/x", "/dup/y", "/bad\\u00", "/bad\\u00/z",
    "/nul", "/nul/z", "/e1", "/e1/0", "/e2", "/e2/k", "/s", "/g/0/h/1/i", "/g/0/h/0", "/~", "/a~2b", "/nope/1",
};
enum { NPOINTERS = (int)(sizeof POINTERS / sizeof *POINTERS) };

Test(json_index, same_answers_as_json_locate) {
  expect_same(DOC, strlen(DOC), POINTERS, NPOINTERS);
}

Test(json_index, first_duplicate_wins) {
  const char *t = "{\"a\": {\"x\": 1}, \"a\": {\"y\": 2}}";
  Arena *a = arena_new();
  JsonIndex *ix = json_index_new(a, t, strlen(t));
  cr_assert_eq(json_index_locate(ix, "/a"), 6);
  /* y is only in the second "a", which json_locate never enters */
  cr_assert_eq(json_index_locate(ix, "/a/y"), 6);
  arena_free(a);
}

/* Long arrays of numbers are weights: only their first elements are kept,
 * the rest cost a scan; containers are kept however far they are. */
Test(json_index, long_scalar_arrays_fall_back) {
  StrBuf sb = {0};
  sb_puts(&sb, "{\"data\": [");
  for (int i = 0; i < 1000; i++)
    sb_printf(&sb, "%s%d", i ? ", " : "", i);
  sb_puts(&sb, "], \"nodes\": [");
  for (int i = 0; i < 200; i++)
    sb_printf(&sb, "%s{\"op\": \"n%d\"}", i ? ", " : "", i);
  sb_puts(&sb, "]}");
  Arena *a = arena_new();
  JsonIndex *ix = json_index_new(a, sb.data, sb.len);
  const char *const kept[] = {"/data", "/data/0", "/data/63", "/nodes/199", "/nodes/150/op", "/nodes"};
  for (int i = 0; i < 6; i++)
    cr_assert_eq(json_index_locate(ix, kept[i]), json_locate(sb.data, sb.len, kept[i]), "%s", kept[i]);
  cr_assert_eq(json_index_fallbacks(ix), 0);
  cr_assert_eq(json_index_locate(ix, "/data/999"), json_locate(sb.data, sb.len, "/data/999"));
  cr_assert_eq(json_index_fallbacks(ix), 1);
  arena_free(a);
  sb_free(&sb);
}

/* The index is built from untrusted text too (graph_loc runs on whatever
 * Jansson accepted, and json_locate is fuzzed): mutated and truncated
 * documents must still give json_locate's answers. */
Test(json_index, mutated_text_gives_the_same_answers) {
  static const char structural[] = "{}[]\",:\\ \r\n0a";
  size_t n = strlen(DOC);
  char *buf = malloc(n + 1);
  uint32_t rng = 12345;
  for (int round = 0; round < 3000; round++) {
    memcpy(buf, DOC, n + 1);
    for (int k = 0; k < 1 + round % 3; k++) {
      rng = rng * 1103515245u + 12345u;
      size_t at = (rng >> 8) % n;
      rng = rng * 1103515245u + 12345u;
      buf[at] = structural[(rng >> 8) % (sizeof structural - 1)];
    }
    size_t len = round % 5 == 0 ? (size_t)(rng >> 4) % n : n;
    expect_same(buf, len, POINTERS, NPOINTERS);
  }
  free(buf);
  expect_same(NULL, 0, POINTERS, NPOINTERS);
  expect_same("", 0, POINTERS, NPOINTERS);
  expect_same("   ", 3, POINTERS, NPOINTERS);
}

/* ---- lines and columns ---- */

/* The .tc lexer's rule, counted naively: \n, \r, \r\n and \n\r are one
 * newline each; an offset inside a two-byte newline is its first byte. */
static void naive_line_col(const char *t, size_t len, size_t *off, int *line, int *col) {
  size_t start = 0;
  *line = 1;
  for (size_t i = 0; i < *off; i++) {
    if (t[i] != '\n' && t[i] != '\r')
      continue;
    bool pair = i + 1 < len && (t[i + 1] == '\n' || t[i + 1] == '\r') && t[i + 1] != t[i];
    if (pair && i + 1 == *off) { /* *off is the pair's second byte */
      *off = i;
      break;
    }
    if (pair)
      i++;
    ++*line;
    start = i + 1;
  }
  *col = (int)(*off - start) + 1;
}

Test(json_index, lines_and_columns_across_blocks) {
  size_t len = 5000;
  char *t = malloc(len + 1);
  uint32_t rng = 7;
  for (size_t i = 0; i < len; i++) {
    rng = rng * 1103515245u + 12345u;
    unsigned r = (rng >> 8) % 16;
    t[i] = r == 0 ? '\n' : r == 1 ? '\r' : 'x';
  }
  t[1023] = '\r'; /* a \r\n split by a block boundary */
  t[1024] = '\n';
  t[2047] = '\n'; /* and a \n\r */
  t[2048] = '\r';
  t[len] = '\0';
  Arena *a = arena_new();
  JsonIndex *ix = json_index_new(a, t, len);
  for (size_t off = 0; off <= len + 2; off++) {
    int line, col, want_line, want_col;
    size_t got_off = off, want_off = off > len ? len : off;
    json_index_line_col(ix, &got_off, &line, &col);
    naive_line_col(t, len, &want_off, &want_line, &want_col);
    cr_assert_eq(line, want_line, "offset %zu", off);
    cr_assert_eq(col, want_col, "offset %zu", off);
    cr_assert_eq(got_off, want_off, "offset %zu", off);
  }
  arena_free(a);
  free(t);
}

/* ---- graph_loc on a loaded graph ---- */

static int load_and_lower(Unit *u, Graph **g) {
  int status = setjmp(u->on_error);
  if (status == 0) {
    PtrVec deps = {0};
    *g = graph_load_json(&u->src, ".", NULL, &deps, NULL, u->arena, &u->diag);
    graph_lower(*g, NULL, u->arena, &u->diag);
    return UNIT_OK;
  }
  return status;
}

/* Lowering locates every tensor and op: all of it comes from the index,
 * without one rescan of the text (the cost that made big models slow). */
Test(json_index, lowering_never_rescans) {
  StrBuf sb = {0};
  sb_puts(&sb, "{\"format\": \"lgen-graph/1\", \"name\": \"mlp\",\n"
               " \"inputs\": [{\"name\": \"x\", \"type\": \"f32\", \"shape\": [\"N\", 100]}],\n"
               " \"outputs\": [\"y\"],\n \"constants\": [\n"
               "  {\"name\": \"w\", \"type\": \"f32\", \"shape\": [100, 4], \"data\": [");
  for (int i = 0; i < 400; i++)
    sb_printf(&sb, "%s%d.5", i ? ",\n" : "", i % 7);
  sb_puts(&sb, "]},\n  {\"name\": \"b\", \"type\": \"f32\", \"shape\": [4], \"data\": [1, 2, 3, 4]}],\n"
               " \"nodes\": [\n"
               "  {\"name\": \"fc\", \"op\": \"matmul\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"h\"]},\n"
               "  {\"op\": \"add\", \"inputs\": [\"h\", \"b\"], \"outputs\": [\"a\"]},\n"
               "  {\"op\": \"relu\", \"inputs\": [\"a\"], \"outputs\": [\"y\"]}]}\n");
  Unit *u = unit_newn(sb.data, sb.len);
  u->src.name = "t.json";
  Graph *g = NULL;
  int status = load_and_lower(u, &g);
  cr_assert_eq(status, UNIT_OK, "%s", unit_diag(u));
  cr_assert_eq(g->locate, json_locator_loc);
  const JsonIndex *ix = json_locator_index(g->locate_data);
  cr_assert_not_null(ix, "lowering located nothing");
  cr_assert_eq(json_index_fallbacks(ix), 0);
  Loc l = graph_loc(g, "/nodes/1");
  cr_assert_eq(l.line, 408);
  cr_assert_eq(l.col, 3);
  unit_free(u);
  sb_free(&sb);
}
