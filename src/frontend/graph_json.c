/* graph_json.c - model graphs in JSON: lgen-graph/1 to a Graph (see
 * graph/graph.h and shared/design/graph-format.md).
 *
 * graph_load_json parses the text with Jansson and hands the tree to the
 * loader of its kind: lgen-graph/1 here, ONNX in onnx_json.c. Jansson knows
 * positions only for syntax errors; every later diagnostic names a JSON
 * pointer ("/nodes/3/inputs/1") that the graph's locator (json_locate.h,
 * installed with the graph) finds in the text again.
 *
 * The lgen-graph/1 loader reads inputs and constants first, then the nodes,
 * whose order in the file is free: they are sorted by what they read
 * (Kahn's algorithm, ties broken by file order, so the same file always
 * gives the same graph) and handed to the builder (graph/build/build.c) in that
 * order. The builder owns types, shapes and attribute checks; this file owns
 * the JSON: the structure of the document, names and the dependency order,
 * and the bytes of constants. */
#include "frontend/opdsl.h"
#include "frontend/graph_load.h"
#include "frontend/json_locate.h"
#include "util/fault.h"
#include "util/data_file.h"

#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

enum {
  MAX_JSON_NESTING = 256, /* reliability-anchors B6 */
  MAX_ATTR_ELEMS = 1 << 24,
};
#define MAX_ELEMENTS (INT64_C(1) << 62)

/* ---- locations ---- */


static Loc loc_of_pointer(const Source *src, const char *pointer) {
  return diag_loc_at(src, json_locate(src->text, src->len, pointer));
}

/* ---- syntax: what Jansson reports, placed where lgen places errors ---- */

/* Jansson counts lines by LF only and columns in characters, and its
 * line:column is the last character it read. */
static size_t offset_of_jansson_pos(const Source *src, int line, int column) {
  size_t pos = 0;
  for (int l = 1; l < line && pos < src->len; pos++)
    if (src->text[pos] == '\n')
      l++;
  for (int c = 1; c < column && pos < src->len; c++) {
    pos++;
    while (pos < src->len && ((unsigned char)src->text[pos] & 0xC0) == 0x80)
      pos++;
  }
  return pos;
}

/* Jansson's line:column is the end of the offending token; when its message
 * quotes the token ("... near 'abc'"), point at the token's start instead. */
static size_t token_start(const Source *src, const char *msg, size_t last) {
  const char *near = NULL;
  for (const char *p = strstr(msg, " near '"); p; p = strstr(p + 1, " near '"))
    near = p;
  size_t mlen = strlen(msg);
  if (!near || mlen < 2 || msg[mlen - 1] != '\'' || last >= src->len)
    return last;
  const char *tok = near + 7;
  size_t n = (size_t)(msg + mlen - 1 - tok);
  size_t end = last + 1;
  while (end < src->len && ((unsigned char)src->text[end] & 0xC0) == 0x80)
    end++;
  if (n == 0 || n > end || memcmp(src->text + end - n, tok, n) != 0)
    return last;
  return end - n;
}

LG_NORETURN static void syntax_error(const Source *src, Diag *diag, const json_error_t *err) {
  size_t offset;
  if (strncmp(err->text, "unable to decode byte", 21) == 0)
    offset = (size_t)err->position; /* the byte itself, which has no column */
  else
    offset = token_start(src, err->text, offset_of_jansson_pos(src, err->line, err->column));
  /* a diagnostic is one line: quoted tokens may hold control characters */
  char msg[JSON_ERROR_TEXT_LENGTH];
  size_t i = 0;
  for (; err->text[i] && i + 1 < sizeof msg; i++) {
    unsigned char c = (unsigned char)err->text[i];
    msg[i] = (char)(c < 0x20 || c == 0x7f ? '?' : c);
  }
  msg[i] = '\0';
  /* JSON has no literal for these; the format spells them as strings */
  bool non_finite = strstr(msg, "invalid token near 'NaN'") || strstr(msg, "invalid token near 'Infinity'") ||
                    strstr(msg, "invalid token near '-Infinity'") || strstr(msg, "invalid token near 'Inf");
  diag_error(diag, diag_loc_at(src, offset), "invalid JSON: %s%s", msg,
             non_finite ? " (write \"NaN\", \"Infinity\" or \"-Infinity\" as strings)" : "");
}

/* Jansson nests on the C stack up to depth 2048; lgen's limit is lower and
 * is checked here, without recursion, before Jansson sees the text. */
static void check_nesting(const Source *src, Diag *diag) {
  const char *t = src->text;
  int depth = 0;
  for (size_t i = 0; i < src->len; i++) {
    char c = t[i];
    if (c == '"') {
      for (i++; i < src->len && t[i] != '"'; i++)
        if (t[i] == '\\')
          i++;
    } else if (c == '[' || c == '{') {
      if (++depth > MAX_JSON_NESTING)
        diag_error(diag, diag_loc_at(src, i), "JSON nested more than %d levels deep", MAX_JSON_NESTING);
    } else if (c == ']' || c == '}') {
      depth--;
    }
  }
}

/* ---- the entry points ---- */

bool graph_json_sniff(const char *text, size_t len) {
  size_t i = 0;
  while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
    i++;
  return i < len && text[i] == '{';
}

static Graph *load_by_kind(const Source *src, json_t *root, const char *dir, const Module *specs, PtrVec *file_deps,
                           const GraphLoadOptions *opts,
                           Arena *arena, Diag *diag) {
  if (!json_is_object(root))
    diag_error(diag, loc_of_pointer(src, ""), "a model graph is a JSON object, not an array");
  json_t *format = json_object_get(root, "format");
  if (format) {
    if (!json_is_string(format) || strcmp(json_string_value(format), "lgen-graph/1") != 0)
      diag_error(diag, loc_of_pointer(src, "/format"), "unknown graph format (expected \"lgen-graph/1\")");
    return graph_load_lgen(src, root, dir, specs, file_deps, opts, arena, diag);
  }
  if (json_is_object(json_object_get(root, "graph")))
    return graph_load_onnx(src, root, dir, specs, file_deps, opts, arena, diag);
  diag_error(diag, loc_of_pointer(src, ""),
             "not a model graph: expected \"format\": \"lgen-graph/1\", or an ONNX model with a \"graph\" object");
}

Graph *graph_load_json(const Source *src, const char *dir, const Module *specs, PtrVec *file_deps,
                       const GraphLoadOptions *opts, Arena *arena,
                       Diag *diag) {
  check_nesting(src, diag);
#ifdef LGEN_FAULT_INJECTION
  json_set_alloc_funcs(fault_malloc, free); /* Jansson's allocations are fault points too */
#endif
  json_error_t err;
  json_t *root = json_loadb(src->text, src->len, JSON_REJECT_DUPLICATES, &err);
  /* Out of memory is not a syntax error: the allocators' exit. (Under
   * fault injection a failed allocation inside Jansson is also one when
   * Jansson reports it as something else, or not at all.) */
  if ((!root && json_error_code(&err) == json_error_out_of_memory) || fault_fired()) {
    json_decref(root);
    out_of_memory();
  }
  if (!root)
    syntax_error(src, diag, &err);
  /* Errors unwind by longjmp; catch them on the way to free the tree, so
   * that a bad graph leaks nothing. */
  jmp_buf *caller = diag->on_error;
  jmp_buf here;
  diag->on_error = &here;
  int status = setjmp(here);
  if (status != 0) {
    diag->on_error = caller;
    json_decref(root);
    longjmp(*caller, status);
  }
  Graph *g = load_by_kind(src, root, dir, specs, file_deps, opts, arena, diag);
  diag->on_error = caller;
  json_decref(root);
  return g;
}

/* ---- lgen-graph/1 ---- */

typedef struct {
  Graph *g;
  Arena *arena;
  const char *dir;
  PtrVec *file_deps;
} Loader;

/* JSON pointers, escaped as RFC 6901 says ('~' is ~0, '/' is ~1). */
static const char *ptr_index(Loader *L, const char *base, size_t i) {
  return arena_printf(L->arena, "%s/%zu", base, i);
}

static const char *ptr_key(Loader *L, const char *base, const char *key) {
  StrBuf sb = {0};
  sb_puts(&sb, base);
  sb_putc(&sb, '/');
  for (const char *p = key; *p; p++) {
    if (*p == '~')
      sb_puts(&sb, "~0");
    else if (*p == '/')
      sb_puts(&sb, "~1");
    else
      sb_putc(&sb, *p);
  }
  char *s = arena_strdup(L->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

static const char *json_kind_name(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT:
    return "an object";
  case JSON_ARRAY:
    return "a list";
  case JSON_STRING:
    return "a string";
  case JSON_INTEGER:
  case JSON_REAL:
    return "a number";
  case JSON_TRUE:
  case JSON_FALSE:
    return "a boolean";
  case JSON_NULL:
    return "null";
  }
  return "a value";
}

/* A string from the file as a message may quote it: a diagnostic is one
 * line, so control characters are shown as escapes. */
static const char *shown(Loader *L, const char *s) {
  StrBuf sb = {0};
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '\n')
      sb_puts(&sb, "\\n");
    else if (*p == '\t')
      sb_puts(&sb, "\\t");
    else if (*p < 0x20 || *p == 0x7f)
      sb_printf(&sb, "\\x%02x", *p);
    else
      sb_putc(&sb, (char)*p);
  }
  const char *out = arena_strdup(L->arena, sb_cstr(&sb));
  sb_free(&sb);
  return out;
}

/* Names (of values, nodes, attributes, ops) travel into other messages and
 * into C comments: they must not hold control characters. */
static void check_name_chars(Loader *L, const char *s, const char *path, const char *what) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p == 0x7f)
      graph_error(L->g, path, "%s contains a control character: '%s'", what, shown(L, s));
}

static void expect_kind(Loader *L, const json_t *v, json_type type, const char *path, const char *what) {
  if (json_typeof(v) != type)
    graph_error(L->g, path, "%s must be %s, not %s", what,
                type == JSON_OBJECT ? "an object" : type == JSON_ARRAY ? "a list" : "a string", json_kind_name(v));
}

/* Every member of obj must be one of `allowed` (a NULL-terminated list):
 * a misspelt key would otherwise be silently ignored. */
static void check_members(Loader *L, json_t *obj, const char *path, const char *what, const char *const *allowed) {
  const char *key;
  json_t *value;
  json_object_foreach(obj, key, value) {
    bool known = false;
    for (const char *const *a = allowed; *a && !known; a++)
      known = strcmp(*a, key) == 0;
    if (known)
      continue;
    StrBuf sb = {0};
    for (const char *const *a = allowed; *a; a++)
      sb_printf(&sb, "%s%s", a == allowed ? "" : ", ", *a);
    const char *list = arena_strdup(L->arena, sb_cstr(&sb));
    sb_free(&sb);
    graph_error(L->g, ptr_key(L, path, key), "unknown member \"%s\" in %s (expected %s)", shown(L, key), what,
                list);
  }
}

/* obj[key], or NULL when absent; a located error when required. */
static json_t *member(Loader *L, json_t *obj, const char *path, const char *key, const char *what, bool required) {
  json_t *v = json_object_get(obj, key);
  if (!v && required)
    graph_error(L->g, path, "%s has no \"%s\"", what, key);
  return v;
}

static const char *string_member(Loader *L, json_t *obj, const char *path, const char *key, const char *what) {
  json_t *v = member(L, obj, path, key, what, true);
  const char *vpath = ptr_key(L, path, key);
  expect_kind(L, v, JSON_STRING, vpath, arena_printf(L->arena, "\"%s\" of %s", key, what));
  if (json_string_length(v) == 0)
    graph_error(L->g, vpath, "\"%s\" of %s is empty", key, what);
  check_name_chars(L, json_string_value(v), vpath, arena_printf(L->arena, "\"%s\" of %s", key, what));
  return arena_strndup(L->arena, json_string_value(v), json_string_length(v));
}

static ElemType parse_type(Loader *L, json_t *v, const char *path) {
  ElemType t;
  if (!json_is_string(v) || !elem_type_parse(json_string_value(v), &t))
    graph_error(L->g, path, "unknown element type%s%s%s (expected one of %s)", json_is_string(v) ? " '" : "",
                json_is_string(v) ? shown(L, json_string_value(v)) : "", json_is_string(v) ? "'" : "",
                elem_type_names());
  return t;
}

static bool is_identifier(const char *s) {
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
    return false;
  for (s++; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
      return false;
  return true;
}

/* A static dim: a JSON integer >= 1. */
static int64_t parse_static_dim(Loader *L, json_t *d, const char *path, bool symbols_allowed) {
  if (!json_is_integer(d))
    graph_error(L->g, path, "a dim must be a positive integer%s, not %s", symbols_allowed ? " or a symbol name" : "",
                json_kind_name(d));
  json_int_t v = json_integer_value(d);
  if (v < 1)
    graph_error(L->g, path, "a dim must be at least 1, not %lld", (long long)v);
  return (int64_t)v;
}

static json_t *shape_list(Loader *L, json_t *obj, const char *path, const char *what) {
  json_t *shape = member(L, obj, path, "shape", what, true);
  const char *spath = ptr_key(L, path, "shape");
  expect_kind(L, shape, JSON_ARRAY, spath, "a shape");
  if (json_array_size(shape) > LG_MAX_RANK)
    graph_error(L->g, ptr_index(L, spath, LG_MAX_RANK), "rank above %d (the rank limit)", LG_MAX_RANK);
  return shape;
}

/* The symbol a dim names; symbols are C identifiers (size parameters). */
static const char *symbol_name(Loader *L, json_t *d, const char *path) {
  const char *name = json_string_value(d);
  if (!is_identifier(name))
    graph_error(L->g, path, "symbolic dim '%s' is not an identifier", shown(L, name));
  return arena_strdup(L->arena, name);
}

/* An input's shape: integers and symbol names (--dim and --input-shape
 * applied by the builder). */
static AffineExpr **parse_symbolic_shape(Loader *L, json_t *obj, const char *path, const char *what,
                                         const char *name, int *rank) {
  json_t *shape = shape_list(L, obj, path, what);
  const char *spath = ptr_key(L, path, "shape");
  *rank = (int)json_array_size(shape);
  int64_t *values = arena_alloc(L->arena, sizeof *values * (size_t)(*rank + 1));
  const char **syms = arena_alloc(L->arena, sizeof *syms * (size_t)(*rank + 1));
  for (int i = 0; i < *rank; i++) {
    json_t *d = json_array_get(shape, (size_t)i);
    const char *dpath = ptr_index(L, spath, (size_t)i);
    if (json_is_string(d))
      syms[i] = symbol_name(L, d, dpath);
    else
      values[i] = parse_static_dim(L, d, dpath, true);
  }
  return graph_input_shape(L->g, name, *rank, values, syms);
}

/* A constant's shape: integers only; *count gets the element count. */
static int64_t *parse_static_shape(Loader *L, json_t *obj, const char *path, const char *what, int *rank,
                                   int64_t *count) {
  json_t *shape = shape_list(L, obj, path, what);
  const char *spath = ptr_key(L, path, "shape");
  *rank = (int)json_array_size(shape);
  int64_t *dims = arena_alloc(L->arena, sizeof *dims * (size_t)(*rank ? *rank : 1));
  *count = 1;
  for (int i = 0; i < *rank; i++) {
    const char *dpath = ptr_index(L, spath, (size_t)i);
    json_t *d = json_array_get(shape, (size_t)i);
    if (json_is_string(d))
      graph_error(L->g, dpath, "a constant's shape is static: symbolic dim '%s' is not allowed here",
                  shown(L, json_string_value(d)));
    dims[i] = parse_static_dim(L, d, dpath, false);
    if (dims[i] > MAX_ELEMENTS / *count)
      graph_error(L->g, dpath, "more than 2^62 elements");
    *count *= dims[i];
  }
  return dims;
}

static void load_inputs(Loader *L, json_t *root) {
  json_t *inputs = json_object_get(root, "inputs");
  if (!inputs)
    return;
  expect_kind(L, inputs, JSON_ARRAY, "/inputs", "\"inputs\"");
  static const char *const allowed[] = {"name", "type", "shape", NULL};
  size_t i;
  json_t *in;
  json_array_foreach(inputs, i, in) {
    const char *path = ptr_index(L, "/inputs", i);
    expect_kind(L, in, JSON_OBJECT, path, "an input");
    check_members(L, in, path, "an input", allowed);
    const char *name = string_member(L, in, path, "name", "an input");
    ElemType t = parse_type(L, member(L, in, path, "type", "an input", true), ptr_key(L, path, "type"));
    int rank;
    AffineExpr **shape = parse_symbolic_shape(L, in, path, "an input", name, &rank);
    graph_add_input(L->g, name, t, rank, shape, path);
  }
}

/* ---- constant data ---- */

static void put_le(uint8_t *p, uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; i++)
    p[i] = (uint8_t)(bits >> (8 * i));
}

typedef struct {
  bool is_int;
  json_int_t i;
  double f;
} Number;

/* One element of "data": a JSON number, a boolean (i1), or one of the
 * strings JSON has no literal for. */
static Number parse_number(Loader *L, json_t *v, ElemType t, const char *path) {
  Number n = {false, 0, 0.0};
  if (json_is_integer(v)) {
    n.is_int = true;
    n.i = json_integer_value(v);
    n.f = (double)n.i;
  } else if (json_is_real(v)) {
    n.f = json_real_value(v);
  } else if (json_is_boolean(v) && t == TY_I1) {
    n.is_int = true;
    n.i = json_is_true(v);
  } else if (json_is_string(v) && elem_type_is_float(t)) {
    const char *s = json_string_value(v);
    if (strcmp(s, "NaN") == 0)
      n.f = NAN;
    else if (strcmp(s, "Infinity") == 0)
      n.f = INFINITY;
    else if (strcmp(s, "-Infinity") == 0)
      n.f = -INFINITY;
    else
      graph_error(L->g, path, "expected a number, \"NaN\", \"Infinity\" or \"-Infinity\", not \"%s\"", shown(L, s));
  } else {
    graph_error(L->g, path, "expected %s, not %s", elem_type_is_float(t) ? "a number" : "an integer",
                json_kind_name(v));
  }
  return n;
}

static void store_float(Loader *L, uint8_t *p, ElemType t, double d, const char *path) {
  if (t == TY_F64) {
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    put_le(p, bits, 8);
    return;
  }
  /* Out-of-range conversions are undefined in C and almost surely a
   * mistake in the file: reject what would round to infinity. */
  double limit = t == TY_F32 ? 0x1.ffffffp127 : 65520.0;
  if (isfinite(d) && fabs(d) >= limit)
    graph_error(L->g, path, "%g is out of range for %s", d, elem_type_name(t));
  if (t == TY_F32) {
    float f = (float)d;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    put_le(p, bits, 4);
  } else {
    put_le(p, elem_f16_bits(d), 2);
  }
}

static void store_int(Loader *L, uint8_t *p, ElemType t, Number n, const char *path) {
  if (!n.is_int)
    graph_error(L->g, path, "%s elements are integers, not %g", elem_type_name(t), n.f);
  /* JSON integers stop at INT64_MAX: a u64 beyond it travels in base64 */
  int64_t lo = elem_int_lowest(t), hi = t == TY_U64 ? INT64_MAX : elem_int_highest(t);
  if (n.i < lo || n.i > hi)
    graph_error(L->g, path, "%lld is out of range for %s", (long long)n.i, elem_type_name(t));
  put_le(p, (uint64_t)n.i, graph_elem_bytes(t));
}

/* "data": a list of count numbers, row-major (a bare number for one). */
static uint8_t *constant_from_list(Loader *L, json_t *data, ElemType t, int64_t count, const char *path) {
  size_t n = json_is_array(data) ? json_array_size(data) : 1;
  if (!json_is_array(data) && (json_is_object(data) || json_is_null(data)))
    graph_error(L->g, path, "\"data\" must be a list of numbers, not %s", json_kind_name(data));
  if ((int64_t)n != count)
    graph_error(L->g, path, "\"data\" has %zu element%s; the shape needs %lld", n, n == 1 ? "" : "s",
                (long long)count);
  int size = graph_elem_bytes(t);
  uint8_t *bytes = arena_alloc(L->arena, (size_t)count * (size_t)size + 1);
  for (size_t i = 0; i < n; i++) {
    json_t *v = json_is_array(data) ? json_array_get(data, i) : data;
    const char *epath = json_is_array(data) ? ptr_index(L, path, i) : path;
    Number num = parse_number(L, v, t, epath);
    if (elem_type_is_float(t))
      store_float(L, bytes + i * (size_t)size, t, num.f, epath);
    else
      store_int(L, bytes + i * (size_t)size, t, num, epath);
  }
  return bytes;
}

static void check_byte_count(Loader *L, const char *path, const char *what, uint64_t got, ElemType t,
                             int64_t count) {
  uint64_t want = (uint64_t)count * (uint64_t)graph_elem_bytes(t);
  if (got != want)
    graph_error(L->g, path, "%s has %llu bytes; %lld %s elements need %llu", what, (unsigned long long)got,
                (long long)count, elem_type_name(t), (unsigned long long)want);
}

static uint8_t *constant_from_base64(Loader *L, json_t *data, ElemType t, int64_t count, const char *path) {
  expect_kind(L, data, JSON_STRING, path, "\"base64\"");
  uint8_t *bytes;
  size_t n;
  if (!base64_decode(json_string_value(data), json_string_length(data), L->arena, &bytes, &n))
    graph_error(L->g, path, "\"base64\" is not valid base64 (RFC 4648, standard alphabet, no whitespace)");
  check_byte_count(L, path, "the decoded \"base64\"", n, t, count);
  return bytes;
}

/* "file": raw little-endian bytes, relative to the graph's folder, under
 * the file policy of util/data_file.h: a regular file inside the folder,
 * of exactly the right size. */
static uint8_t *constant_from_file(Loader *L, const char *name, json_t *data, ElemType t, int64_t count,
                                   const char *path) {
  expect_kind(L, data, JSON_STRING, path, "\"file\"");
  const char *rel = json_string_value(data);
  if (!*rel)
    graph_error(L->g, path, "\"file\" is empty");
  check_name_chars(L, rel, path, "constant file");
  int64_t want = graph_const_check(L->g, t, count, path, arena_printf(L->arena, "constant '%s'", name));
  const GraphLoadOptions *lo = L->g->load;
  DataFilePolicy policy = {L->dir, lo ? lo->allow_external : NULL, lo ? lo->nallow_external : 0};
  const char *file, *err;
  bool io;
  const uint8_t *bytes = data_file_read(L->arena, &policy, rel, 0, (uint64_t)want, true, &file, &err, &io);
  if (!bytes && io)
    diag_io_error(L->g->diag, "constant '%s': \"file\": %s", shown(L, name), err);
  if (!bytes)
    graph_error(L->g, path, "constant '%s': \"file\": %s", shown(L, name), err);
  if (L->file_deps)
    vec_push(L->arena, L->file_deps, (void *)file);
  return (uint8_t *)bytes;
}

static void load_constants(Loader *L, json_t *root) {
  json_t *constants = json_object_get(root, "constants");
  if (!constants)
    return;
  expect_kind(L, constants, JSON_ARRAY, "/constants", "\"constants\"");
  static const char *const allowed[] = {"name", "type", "shape", "data", "base64", "file", NULL};
  size_t i;
  json_t *c;
  json_array_foreach(constants, i, c) {
    const char *path = ptr_index(L, "/constants", i);
    expect_kind(L, c, JSON_OBJECT, path, "a constant");
    check_members(L, c, path, "a constant", allowed);
    const char *name = string_member(L, c, path, "name", "a constant");
    ElemType t = parse_type(L, member(L, c, path, "type", "a constant", true), ptr_key(L, path, "type"));
    int rank;
    int64_t count;
    int64_t *shape = parse_static_shape(L, c, path, "a constant", &rank, &count);
    json_t *data = json_object_get(c, "data");
    json_t *b64 = json_object_get(c, "base64");
    json_t *file = json_object_get(c, "file");
    if ((data != NULL) + (b64 != NULL) + (file != NULL) != 1)
      graph_error(L->g, path, "a constant needs exactly one of \"data\", \"base64\" and \"file\"");
    const uint8_t *bytes = data  ? constant_from_list(L, data, t, count, ptr_key(L, path, "data"))
                           : b64 ? constant_from_base64(L, b64, t, count, ptr_key(L, path, "base64"))
                                 : constant_from_file(L, name, file, t, count, ptr_key(L, path, "file"));
    graph_add_const(L->g, name, t, rank, shape, bytes, path);
  }
}

/* ---- names: a small hash map from strings to ints ---- */

typedef struct {
  const char **keys;
  int *vals;
  size_t cap, len;
} NameMap;

static uint64_t hash_name(const char *s) {
  uint64_t h = 1469598103934665603u; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

static size_t map_slot(const NameMap *m, const char *key) {
  size_t i = (size_t)hash_name(key) & (m->cap - 1);
  while (m->keys[i] && strcmp(m->keys[i], key) != 0)
    i = (i + 1) & (m->cap - 1);
  return i;
}

static int map_get(const NameMap *m, const char *key) {
  if (!m->cap)
    return -1;
  size_t i = map_slot(m, key);
  return m->keys[i] ? m->vals[i] : -1;
}

static void map_put(Arena *arena, NameMap *m, const char *key, int val) {
  if (2 * (m->len + 1) > m->cap) {
    NameMap bigger = {NULL, NULL, m->cap ? 2 * m->cap : 64, 0};
    bigger.keys = arena_alloc(arena, sizeof *bigger.keys * bigger.cap);
    bigger.vals = arena_alloc(arena, sizeof *bigger.vals * bigger.cap);
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i])
        map_put(arena, &bigger, m->keys[i], m->vals[i]);
    *m = bigger;
  }
  size_t i = map_slot(m, key);
  if (!m->keys[i])
    m->len++;
  m->keys[i] = key;
  m->vals[i] = val;
}

/* ---- nodes ---- */

typedef struct {
  const char *name; /* "" when the file gives none */
  const char *path;
  GraphOp op;
  const Kernel *def; /* a call of a .tc def */
  int ninputs;
  const char **inputs;   /* NULL: an omitted optional input ("") */
  int *producers;        /* per input: the node that produces it, or -1 */
  int noutputs;
  const char **outputs;
  int nattrs;
  GraphAttr *attrs;
} NodeSpec;

static const char *node_label(const NodeSpec *n, int index, Arena *arena) {
  return *n->name ? arena_printf(arena, "'%s'", n->name) : arena_printf(arena, "%d", index);
}

static const Kernel *find_def(const Module *specs, const char *name) {
  if (!specs)
    return NULL;
  for (int i = 0; i < specs->kernels.len; i++) {
    const Kernel *k = specs->kernels.items[i];
    if (strcmp(k->name, name) == 0)
      return k;
  }
  return NULL;
}

static int def_outputs(const Kernel *k) {
  int n = 0;
  for (int i = 0; i < k->ntensors; i++)
    n += k->tensors[i].is_output;
  return n;
}

/* A node's op: a graph op, else a def of the specs; "def:NAME" is always
 * the def (OpDSL's add, copy, conv_2d_nhwc_hwcf, ... are graph ops too). */
static void parse_op(Loader *L, json_t *node, const char *path, NodeSpec *n) {
  const char *op = string_member(L, node, path, "op", "a node");
  bool def_only = strncmp(op, "def:", 4) == 0;
  if (def_only)
    op += 4;
  if (!def_only && graph_op_lookup(op, &n->op) && n->op != GOP_CALL)
    return;
  n->def = find_def(L->g->specs, op);
  if (!n->def)
    graph_error(L->g, ptr_key(L, path, "op"), "unknown op '%s'%s", op,
                L->g->specs && L->g->specs->kernels.len ? " (neither a graph op nor a def of the .tc specs)" : "");
  n->op = GOP_CALL;
}

/* A list of value names; "" is an omitted optional input (allow_empty). */
static const char **parse_names(Loader *L, json_t *list, const char *path, const char *what, bool allow_empty,
                                int *count) {
  expect_kind(L, list, JSON_ARRAY, path, what);
  if (json_array_size(list) > 1024)
    graph_error(L->g, ptr_index(L, path, 1024), "%s: more than 1024 names", what);
  *count = (int)json_array_size(list);
  const char **names = arena_alloc(L->arena, sizeof *names * (size_t)(*count ? *count : 1));
  for (int i = 0; i < *count; i++) {
    json_t *v = json_array_get(list, (size_t)i);
    const char *vpath = ptr_index(L, path, (size_t)i);
    if (!json_is_string(v))
      graph_error(L->g, vpath, "a value name must be a string, not %s", json_kind_name(v));
    if (json_string_length(v) == 0 && !allow_empty)
      graph_error(L->g, vpath, "a value name must not be empty");
    check_name_chars(L, json_string_value(v), vpath, "value name");
    names[i] = json_string_length(v) ? arena_strdup(L->arena, json_string_value(v)) : NULL;
  }
  return names;
}

/* An attribute's kind follows from its JSON: integer, real, string, a list
 * of integers, of numbers, or of [lo, hi] integer pairs (padding). */
static GraphAttr parse_attr(Loader *L, const char *name, json_t *v, const char *path) {
  GraphAttr a = {0};
  check_name_chars(L, name, path, "attribute name");
  a.name = arena_strdup(L->arena, name);
  a.path = path;
  if (json_is_integer(v) || json_is_boolean(v)) {
    a.kind = GA_INT;
    a.i = json_is_integer(v) ? (int64_t)json_integer_value(v) : json_is_true(v);
    return a;
  }
  if (json_is_real(v)) {
    a.kind = GA_FLOAT;
    a.f = json_real_value(v);
    return a;
  }
  if (json_is_string(v)) {
    a.kind = GA_STRING;
    check_name_chars(L, json_string_value(v), path, "string attribute");
    a.s = arena_strdup(L->arena, json_string_value(v));
    return a;
  }
  if (!json_is_array(v))
    graph_error(L->g, path, "attribute '%s' must be a number, a string or a list, not %s", name,
                json_kind_name(v));
  size_t n = json_array_size(v);
  /* A list is held as 8 bytes (or 16, a pair) an element for the whole run,
   * so --max-constant-bytes bounds it too: also the flag that lets a test
   * reach this error without a 2^24-element file. */
  int64_t max_elems = L->g->max_const_bytes / 8 < MAX_ATTR_ELEMS ? L->g->max_const_bytes / 8 : MAX_ATTR_ELEMS;
  if ((int64_t)n > max_elems)
    graph_error(L->g, path,
                "attribute '%s' has %zu elements, more than %lld (the lesser of 2^24 and --max-constant-bytes / 8)",
                name, n, (long long)max_elems);
  a.n = (int)n;
  bool ints = true, numbers = true, pairs = n > 0;
  for (size_t i = 0; i < n; i++) {
    json_t *e = json_array_get(v, i);
    ints = ints && json_is_integer(e);
    numbers = numbers && json_is_number(e);
    pairs = pairs && json_is_array(e) && json_array_size(e) == 2 && json_is_integer(json_array_get(e, 0)) &&
            json_is_integer(json_array_get(e, 1));
  }
  if (ints || pairs) {
    a.kind = ints ? GA_INTS : GA_INTS2;
    a.ints = arena_alloc(L->arena, sizeof *a.ints * (pairs ? 2 * n : n + 1));
    for (size_t i = 0; i < n; i++) {
      json_t *e = json_array_get(v, i);
      if (ints) {
        a.ints[i] = (int64_t)json_integer_value(e);
      } else {
        a.ints[2 * i] = (int64_t)json_integer_value(json_array_get(e, 0));
        a.ints[2 * i + 1] = (int64_t)json_integer_value(json_array_get(e, 1));
      }
    }
  } else if (numbers) {
    a.kind = GA_FLOATS;
    a.floats = arena_alloc(L->arena, sizeof *a.floats * n);
    for (size_t i = 0; i < n; i++)
      a.floats[i] = json_number_value(json_array_get(v, i));
  } else {
    graph_error(L->g, path, "attribute '%s' must be a list of integers, of numbers or of [lo, hi] pairs", name);
  }
  return a;
}

static void parse_attrs(Loader *L, json_t *node, const char *path, NodeSpec *n) {
  json_t *attrs = json_object_get(node, "attrs");
  if (!attrs)
    return;
  const char *apath = ptr_key(L, path, "attrs");
  expect_kind(L, attrs, JSON_OBJECT, apath, "\"attrs\"");
  n->attrs = arena_alloc(L->arena, sizeof *n->attrs * (json_object_size(attrs) + 1));
  const char *key;
  json_t *v;
  json_object_foreach(attrs, key, v) {
    n->attrs[n->nattrs++] = parse_attr(L, key, v, ptr_key(L, apath, key));
  }
}

static NodeSpec parse_node(Loader *L, json_t *node, size_t i) {
  NodeSpec n = {0};
  n.path = ptr_index(L, "/nodes", i);
  static const char *const allowed[] = {"name", "op", "inputs", "outputs", "attrs", NULL};
  expect_kind(L, node, JSON_OBJECT, n.path, "a node");
  check_members(L, node, n.path, "a node", allowed);
  n.name = json_object_get(node, "name") ? string_member(L, node, n.path, "name", "a node") : "";
  parse_op(L, node, n.path, &n);
  json_t *inputs = json_object_get(node, "inputs");
  if (inputs)
    n.inputs = parse_names(L, inputs, ptr_key(L, n.path, "inputs"), "\"inputs\"", true, &n.ninputs);
  json_t *outputs = member(L, node, n.path, "outputs", "a node", true);
  const char *opath = ptr_key(L, n.path, "outputs");
  n.outputs = parse_names(L, outputs, opath, "\"outputs\"", false, &n.noutputs);
  int want = n.def ? def_outputs(n.def) : graph_op_info(n.op)->outputs;
  /* an EXT op's count is the table's at most: build.c checks it against
   * the outputs the node has (scan's accumulator is optional) */
  bool ext = !n.def && graph_op_info(n.op)->cls == GC_EXT;
  if (ext ? n.noutputs < 1 || n.noutputs > want : n.noutputs != want)
    graph_error(L->g, opath, "%s '%s' has %d output%s, not %d", n.def ? "def" : "op",
                n.def ? n.def->name : graph_op_info(n.op)->name, want, want == 1 ? "" : "s", n.noutputs);
  parse_attrs(L, node, n.path, &n);
  return n;
}

/* Every value is defined once: as an input, a constant, or one node's
 * output; the second definition in file order is the error. */
static void register_outputs(Loader *L, NodeSpec *nodes, int count, NameMap *producer) {
  NameMap node_names = {0};
  for (int i = 0; i < count; i++) {
    NodeSpec *n = &nodes[i];
    if (*n->name) {
      int prev = map_get(&node_names, n->name);
      if (prev >= 0)
        graph_error(L->g, ptr_key(L, n->path, "name"), "duplicate node name '%s' (node %d has it too)", n->name,
                    prev);
      map_put(L->arena, &node_names, n->name, i);
    }
    for (int k = 0; k < n->noutputs; k++) {
      const char *name = n->outputs[k];
      const char *opath = ptr_index(L, ptr_key(L, n->path, "outputs"), (size_t)k);
      int v = graph_find(L->g, name);
      if (v >= 0)
        graph_error(L->g, opath, "value '%s' is defined twice (it is also %s)", name,
                    GRAPH_VALUE(L->g, v)->kind == GV_INPUT ? "an input" : "a constant");
      int prev = map_get(producer, name);
      if (prev >= 0)
        graph_error(L->g, opath, "value '%s' is defined twice (node %s produces it too)", name,
                    node_label(&nodes[prev], prev, L->arena));
      map_put(L->arena, producer, name, i);
    }
  }
}

static void resolve_inputs(Loader *L, NodeSpec *nodes, int count, const NameMap *producer) {
  for (int i = 0; i < count; i++) {
    NodeSpec *n = &nodes[i];
    n->producers = arena_alloc(L->arena, sizeof *n->producers * (size_t)(n->ninputs + 1));
    for (int k = 0; k < n->ninputs; k++) {
      n->producers[k] = -1;
      const char *name = n->inputs[k];
      if (!name || graph_find(L->g, name) >= 0)
        continue;
      n->producers[k] = map_get(producer, name);
      if (n->producers[k] < 0)
        graph_error(L->g, ptr_index(L, ptr_key(L, n->path, "inputs"), (size_t)k), "undefined value '%s'", name);
    }
  }
}

/* ---- dependency order ---- */

/* A binary min-heap of node indices: the ready node first in the file
 * goes first. */
typedef struct {
  int *items;
  int len;
} Heap;

static void heap_push(Heap *h, int x) {
  int i = h->len++;
  while (i > 0 && h->items[(i - 1) / 2] > x) {
    h->items[i] = h->items[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->items[i] = x;
}

static int heap_pop(Heap *h) {
  int top = h->items[0];
  int x = h->items[--h->len];
  int i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= h->len)
      break;
    if (c + 1 < h->len && h->items[c + 1] < h->items[c])
      c++;
    if (h->items[c] >= x)
      break;
    h->items[i] = h->items[c];
    i = c;
  }
  if (h->len > 0)
    h->items[i] = x;
  return top;
}

LG_NORETURN static void report_cycle(Loader *L, NodeSpec *nodes, int count, const bool *done) {
  /* Every node left has a predecessor that is left too; walking back
   * through them count times is sure to end on a cycle. */
  int at = 0;
  while (done[at])
    at++;
  for (int step = 0; step < count; step++) {
    for (int k = 0; k < nodes[at].ninputs; k++) {
      int p = nodes[at].producers[k];
      if (p >= 0 && !done[p]) {
        at = p;
        break;
      }
    }
  }
  /* Report at the cycle's node that comes first in the file, listing the
   * cycle in dependency order from there. */
  int first = at;
  int walk = at;
  int *pred = arena_alloc(L->arena, sizeof *pred * (size_t)count);
  do {
    int next = -1;
    for (int k = 0; k < nodes[walk].ninputs && next < 0; k++) {
      int p = nodes[walk].producers[k];
      if (p >= 0 && !done[p])
        next = p;
    }
    pred[walk] = next;
    walk = next;
    if (walk < first)
      first = walk;
  } while (walk != at);
  /* pred[] runs against the data flow; print along it, reversed */
  int len = 0;
  for (int w = first; len == 0 || w != first; w = pred[w])
    len++;
  int *order = arena_alloc(L->arena, sizeof *order * (size_t)len);
  order[0] = first;
  int w = pred[first];
  for (int i = len - 1; i >= 1; i--, w = pred[w])
    order[i] = w;
  StrBuf sb = {0};
  for (int i = 0; i < len; i++)
    sb_printf(&sb, "node %s -> ", node_label(&nodes[order[i]], order[i], L->arena));
  sb_printf(&sb, "node %s", node_label(&nodes[first], first, L->arena));
  const char *cycle = arena_strdup(L->arena, sb_cstr(&sb));
  sb_free(&sb);
  graph_error(L->g, nodes[first].path, "dependency cycle: %s", cycle);
}

/* Kahn's algorithm; ties go to file order. */
static int *dependency_order(Loader *L, NodeSpec *nodes, int count) {
  size_t n = (size_t)(count ? count : 1);
  int *missing = arena_alloc(L->arena, sizeof *missing * n); /* inputs not yet produced */
  int *nsucc = arena_alloc(L->arena, sizeof *nsucc * (n + 1));
  for (int i = 0; i < count; i++)
    for (int k = 0; k < nodes[i].ninputs; k++)
      if (nodes[i].producers[k] >= 0) {
        missing[i]++;
        nsucc[nodes[i].producers[k]]++;
      }
  /* successor lists, packed: succ[first[i] .. first[i + 1]) */
  int *first = arena_alloc(L->arena, sizeof *first * (n + 1));
  for (int i = 0; i < count; i++)
    first[i + 1] = first[i] + nsucc[i];
  int *succ = arena_alloc(L->arena, sizeof *succ * (size_t)(first[count] + 1));
  int *fill = arena_alloc(L->arena, sizeof *fill * n);
  for (int i = 0; i < count; i++)
    for (int k = 0; k < nodes[i].ninputs; k++) {
      int p = nodes[i].producers[k];
      if (p >= 0)
        succ[first[p] + fill[p]++] = i;
    }
  Heap ready = {arena_alloc(L->arena, sizeof(int) * n), 0};
  for (int i = 0; i < count; i++)
    if (missing[i] == 0)
      heap_push(&ready, i);
  int *order = arena_alloc(L->arena, sizeof *order * n);
  bool *done = arena_alloc(L->arena, sizeof *done * n);
  int norder = 0;
  while (ready.len > 0) {
    int i = heap_pop(&ready);
    order[norder++] = i;
    done[i] = true;
    for (int s = first[i]; s < first[i + 1]; s++)
      if (--missing[succ[s]] == 0)
        heap_push(&ready, succ[s]);
  }
  if (norder < count)
    report_cycle(L, nodes, count, done);
  return order;
}

/* An OpDSL def called by a node: instantiated for the node's inputs (their
 * types bind the type variables, the first tensor input's rank an
 * elementwise op's rank), with the node's attributes as the choices: a type
 * variable ("U": "i32"), a fn attribute ("cast": "cast_unsigned") or an
 * index attribute ("strides": [2, 2]; the default when absent), baked in. */
static const Kernel *opdsl_instance(Loader *L, const NodeSpec *n, const int *inputs, int index) {
  const Kernel *def = n->def;
  int *types = arena_alloc(L->arena, sizeof(int) * (size_t)(def->ntensors + 1));
  int *ranks = arena_alloc(L->arena, sizeof(int) * (size_t)(def->ntensors + 1));
  for (int t = 0; t < def->ntensors; t++) {
    types[t] = ranks[t] = -1;
    if (t < n->ninputs && inputs[t] >= 0 && !def->tensors[t].is_output) {
      const GraphValue *v = GRAPH_VALUE(L->g, inputs[t]);
      types[t] = (int)v->type;
      ranks[t] = v->rank;
    }
  }
  OpdslChoice *choices = arena_alloc(L->arena, sizeof *choices * (size_t)(n->nattrs + 1));
  for (int a = 0; a < n->nattrs; a++) {
    const GraphAttr *g = &n->attrs[a];
    OpdslChoice *c = &choices[a];
    c->key = g->name;
    if (g->kind == GA_STRING) {
      c->value = g->s;
    } else if (g->kind == GA_INT || g->kind == GA_INTS) {
      c->nints = g->kind == GA_INT ? 1 : g->n;
      if (c->nints > LG_MAX_RANK)
        graph_error(L->g, g->path, "attribute '%s' has more than %d integers", g->name, LG_MAX_RANK);
      for (int i = 0; i < c->nints; i++)
        c->ints[i] = g->kind == GA_INT ? g->i : g->ints[i];
      c->value = arena_printf(L->arena, "%lld", (long long)c->ints[0]);
    } else {
      graph_error(L->g, g->path, "attribute '%s' of a call of the OpDSL def '%s' must be a string or integers",
                  g->name, def->name);
    }
    c->loc = graph_loc(L->g, g->path ? g->path : n->path);
  }
  OpdslBinding b = {.name = def->name, .choices = choices, .nchoices = n->nattrs, .rank = 1, .arg_types = types,
                    .arg_ranks = ranks, .narg_info = def->ntensors, .bake_attrs = true,
                    .loc = graph_loc(L->g, n->path), .what = node_label(n, index, L->arena)};
  b.what = arena_printf(L->arena, "node %s calls ", b.what);
  return opdsl_instantiate(def->opdsl, &b, L->arena, L->g->diag);
}

static void add_node(Loader *L, const NodeSpec *n, int index) {
  int *inputs = arena_alloc(L->arena, sizeof *inputs * (size_t)(n->ninputs + 1));
  for (int k = 0; k < n->ninputs; k++)
    inputs[k] = n->inputs[k] ? graph_find(L->g, n->inputs[k]) : -1;
  const char *name = *n->name ? n->name : NULL;
  if (n->def && n->def->opdsl)
    graph_add_call(L->g, opdsl_instance(L, n, inputs, index), name, n->ninputs, inputs, n->outputs, n->path);
  else if (n->def)
    graph_add_call(L->g, n->def, name, n->ninputs, inputs, n->outputs, n->path);
  else
    graph_add_node_listed(L->g, n->op, name, n->ninputs, inputs, n->nattrs, n->attrs, n->outputs, n->noutputs,
                          n->path);
}

static void load_nodes(Loader *L, json_t *root) {
  json_t *list = json_object_get(root, "nodes");
  if (!list)
    return;
  expect_kind(L, list, JSON_ARRAY, "/nodes", "\"nodes\"");
  if (json_array_size(list) > 100000)
    graph_error(L->g, ptr_index(L, "/nodes", 100000), "more than 100000 nodes");
  int count = (int)json_array_size(list);
  NodeSpec *nodes = arena_alloc(L->arena, sizeof *nodes * (size_t)(count ? count : 1));
  for (int i = 0; i < count; i++)
    nodes[i] = parse_node(L, json_array_get(list, (size_t)i), (size_t)i);
  NameMap producer = {0};
  register_outputs(L, nodes, count, &producer);
  resolve_inputs(L, nodes, count, &producer);
  int *order = dependency_order(L, nodes, count);
  for (int i = 0; i < count; i++)
    add_node(L, &nodes[order[i]], order[i]);
}

/* ---- outputs ---- */

static const char *size_name(void *ctx, int index) {
  const Graph *g = ctx;
  return index < g->symbols.len ? g->symbols.items[index] : "?";
}

static const char *shape_str(Loader *L, int rank, AffineExpr **shape) {
  AffineNames names = {NULL, size_name, NULL, L->g, false};
  StrBuf sb = {0};
  sb_putc(&sb, '[');
  for (int i = 0; i < rank; i++) {
    if (i)
      sb_puts(&sb, ", ");
    affine_print(&sb, shape[i], &names);
  }
  sb_putc(&sb, ']');
  const char *s = arena_strdup(L->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

static int find_symbol(const Graph *g, const char *name) {
  for (int i = 0; i < g->symbols.len; i++)
    if (strcmp(g->symbols.items[i], name) == 0)
      return i;
  return -1;
}

/* An output may state its shape and type; they must be what the graph
 * computes. A symbol there must be one the inputs introduced. */
static void check_output_decl(Loader *L, json_t *decl, const char *path, const GraphValue *v) {
  json_t *type = json_object_get(decl, "type");
  if (type) {
    const char *tpath = ptr_key(L, path, "type");
    ElemType t = parse_type(L, type, tpath);
    if (t != v->type)
      graph_error(L->g, tpath, "output '%s' is %s, not %s", v->name, elem_type_name(v->type), elem_type_name(t));
  }
  if (!json_object_get(decl, "shape"))
    return;
  json_t *shape = shape_list(L, decl, path, "an output");
  const char *spath = ptr_key(L, path, "shape");
  int rank = (int)json_array_size(shape);
  AffineExpr **dims = arena_alloc(L->arena, sizeof *dims * (size_t)(rank ? rank : 1));
  for (int i = 0; i < rank; i++) {
    json_t *d = json_array_get(shape, (size_t)i);
    const char *dpath = ptr_index(L, spath, (size_t)i);
    if (json_is_string(d)) {
      int s = find_symbol(L->g, symbol_name(L, d, dpath));
      if (s < 0)
        graph_error(L->g, dpath, "symbolic dim '%s' is not a dim of any input", shown(L, json_string_value(d)));
      dims[i] = affine_leaf(L->arena, AE_SIZE, s, 0);
    } else {
      dims[i] = affine_const(L->arena, parse_static_dim(L, d, dpath, true));
    }
  }
  bool same = rank == v->rank;
  for (int i = 0; i < rank && same; i++)
    same = graph_dims_equal(L->arena, dims[i], v->shape[i]);
  if (!same)
    graph_error(L->g, spath, "output '%s' has shape %s, not %s", v->name, shape_str(L, v->rank, v->shape),
                shape_str(L, rank, dims));
}

static void load_outputs(Loader *L, json_t *root) {
  json_t *outputs = member(L, root, "", "outputs", "a graph", true);
  expect_kind(L, outputs, JSON_ARRAY, "/outputs", "\"outputs\"");
  if (json_array_size(outputs) == 0)
    graph_error(L->g, "/outputs", "a graph needs at least one output");
  static const char *const allowed[] = {"name", "type", "shape", NULL};
  size_t i;
  json_t *out;
  json_array_foreach(outputs, i, out) {
    const char *path = ptr_index(L, "/outputs", i);
    const char *name;
    if (json_is_object(out)) {
      check_members(L, out, path, "an output", allowed);
      name = string_member(L, out, path, "name", "an output");
    } else if (json_is_string(out)) {
      name = json_string_value(out);
      check_name_chars(L, name, path, "output");
    } else {
      graph_error(L->g, path, "an output is a value name or an object with \"name\", not %s",
                  json_kind_name(out));
    }
    int v = graph_find(L->g, name);
    if (v < 0)
      graph_error(L->g, path, "output '%s' is never produced", name);
    if (GRAPH_VALUE(L->g, v)->is_output)
      graph_error(L->g, path, "output '%s' is listed twice", name);
    if (json_is_object(out))
      check_output_decl(L, out, path, GRAPH_VALUE(L->g, v));
    graph_add_output(L->g, v, path);
  }
}

/* The graph's name: "name", else the file's base name without extension. */
static const char *graph_name(Loader *L, json_t *root, const Source *src) {
  if (json_object_get(root, "name")) {
    L->g->name_path = "/name";
    return string_member(L, root, "", "name", "a graph");
  }
  const char *base = strrchr(src->name, '/');
  base = base ? base + 1 : src->name;
  size_t n = strcspn(base, ".");
  return n ? arena_strndup(L->arena, base, n) : "graph";
}

Graph *graph_load_lgen(const Source *src, void *json_root, const char *dir, const Module *specs, PtrVec *file_deps,
                       const GraphLoadOptions *opts, Arena *arena, Diag *diag) {
  json_t *root = json_root;
  Loader L = {graph_new(arena, diag, json_locator_loc, json_locator_new(arena, src), specs), arena, dir, file_deps};
  graph_apply_options(L.g, opts);
  static const char *const allowed[] = {"format", "name", "inputs", "outputs", "constants", "nodes", NULL};
  check_members(&L, root, "", "a graph", allowed);
  L.g->name = graph_name(&L, root, src);
  load_inputs(&L, root);
  load_constants(&L, root);
  load_nodes(&L, root);
  load_outputs(&L, root);
  return L.g;
}
