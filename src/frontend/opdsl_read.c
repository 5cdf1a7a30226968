/* opdsl_read.c - OpDSL YAML (`--- !LinalgOpConfig` documents) into OpdslOp
 * configs, with libyaml. Every error points at the offending YAML node
 * (libyaml's marks, 1-based), or inside an affine map at the offending
 * character.
 *
 * Schemas accepted: the current one (LinalgOperandDefConfig with `kind`,
 * scalar_fn with `kind`), mid-2021's (`usage: InputOperand | OutputOperand
 * | IndexAttribute`, `attribute_map`) and the first one (`!<LinalgTensorDef>`
 * with `usage: input | output` and `shape`, `scalar_apply`, `symbolic_cast`).
 * Unknown keys are errors, as in upstream's reader. YAML aliases are
 * refused: an expression tree that shares nodes could be exponentially
 * large, and upstream's files never use them. */
#include "frontend/opdsl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

enum { MAX_EXPR_DEPTH = 256, MAX_LIST = 256 };

typedef struct {
  size_t chars, bytes;
  int line, col;
  char nl; /* the newline byte that ended the last line, while a CRLF or LFCR pair may go on */
} Cursor;

typedef struct {
  yaml_document_t doc;
  bool have_doc;
  const Source *src;
  Arena *arena;
  Diag *diag;
  unsigned char *seen; /* per node of the document: already read */
  size_t nnodes;
  Cursor cursor;
} Reader;

/* libyaml's marks count characters; lgen's locations are byte offsets, with
 * lines and columns counted as everywhere in lgen (CR, LF, CRLF and LFCR
 * end a line; a column counts bytes). A cursor walks forward from the last
 * position asked for: marks mostly grow, so reading a file stays linear. */

static bool utf8_lead(unsigned char c) { return (c & 0xC0) != 0x80; }

static void step(const Source *src, Cursor *c) {
  char ch = src->text[c->bytes++];
  if (ch == '\n' || ch == '\r') {
    c->chars++;
    if (c->nl && c->nl != ch) { /* the second byte of CRLF or LFCR */
      c->nl = 0;
      return;
    }
    c->line++;
    c->col = 1;
    c->nl = ch;
    return;
  }
  c->nl = 0;
  c->col++;
  if (utf8_lead((unsigned char)ch))
    c->chars++;
}

static void rewind_if(Cursor *c, bool behind) {
  if (behind)
    *c = (Cursor){0, 0, 1, 1, 0};
}

/* The location of byte offset `at`. */
static Loc walk_to_byte(const Source *src, Cursor *c, size_t at) {
  rewind_if(c, at < c->bytes);
  if (at > src->len)
    at = src->len;
  while (c->bytes < at)
    step(src, c);
  return (Loc){src, c->line, c->col, c->bytes, NULL};
}

/* Byte offset of character `index` (libyaml's mark.index). */
static size_t char_to_byte(const Source *src, Cursor *c, size_t index) {
  rewind_if(c, index < c->chars);
  while (c->chars < index && c->bytes < src->len) {
    step(src, c);
    while (c->bytes < src->len && !utf8_lead((unsigned char)src->text[c->bytes]))
      step(src, c);
  }
  return c->bytes;
}

static Loc mark_loc(const Source *src, Cursor *c, yaml_mark_t m) {
  return walk_to_byte(src, c, char_to_byte(src, c, m.index));
}

static Loc loc_of(Reader *r, const yaml_node_t *node) { return mark_loc(r->src, &r->cursor, node->start_mark); }

static void release(Reader *r) {
  if (r->have_doc)
    yaml_document_delete(&r->doc);
  r->have_doc = false;
}

/* Errors unwind (longjmp) through diag_error: free libyaml's document first. */
static void fail_at(Reader *r, Loc loc, const char *fmt, ...) LG_PRINTF(3, 4) LG_NORETURN;
static void fail_at(Reader *r, Loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  StrBuf sb = {0};
  sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  char *msg = arena_strdup(r->arena, sb_cstr(&sb));
  sb_free(&sb);
  release(r);
  diag_error(r->diag, loc, "%s", msg);
}

#define fail(r, node, ...) fail_at((r), loc_of((r), (node)), __VA_ARGS__)

static const char *kind_name(const yaml_node_t *n) {
  return n->type == YAML_SCALAR_NODE ? "a scalar" : n->type == YAML_SEQUENCE_NODE ? "a list" : "a mapping";
}

/* Every node is read once: a second visit is an alias. */
static yaml_node_t *take(Reader *r, yaml_node_t *n) {
  size_t i = (size_t)(n - r->doc.nodes.start);
  if (r->seen[i])
    fail(r, n, "YAML aliases are not supported in OpDSL documents");
  r->seen[i] = 1;
  return n;
}

static yaml_node_t *node_at(Reader *r, int id) { return take(r, yaml_document_get_node(&r->doc, id)); }

static const char *scalar(Reader *r, yaml_node_t *n, const char *what) {
  if (n->type != YAML_SCALAR_NODE)
    fail(r, n, "expected %s, found %s", what, kind_name(n));
  const char *s = arena_strndup(r->arena, (const char *)n->data.scalar.value, n->data.scalar.length);
  if (strlen(s) != n->data.scalar.length)
    fail(r, n, "%s contains a NUL character", what);
  /* names end up in messages and C comments: no line breaks or escapes */
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
      fail(r, n, "%s contains the control character \\x%02x", what, *p);
  return s;
}

/* A doc string: any text. */
static const char *doc_text(Reader *r, yaml_node_t *n) {
  if (n->type != YAML_SCALAR_NODE)
    fail(r, n, "expected the doc string, found %s", kind_name(n));
  const char *s = arena_strndup(r->arena, (const char *)n->data.scalar.value, n->data.scalar.length);
  if (strlen(s) != n->data.scalar.length)
    fail(r, n, "the doc string contains a NUL character");
  return s;
}

static int seq_len(Reader *r, yaml_node_t *n, const char *what) {
  if (n->type != YAML_SEQUENCE_NODE)
    fail(r, n, "expected %s (a list), found %s", what, kind_name(n));
  ptrdiff_t len = n->data.sequence.items.top - n->data.sequence.items.start;
  if (len > MAX_LIST)
    fail(r, n, "%s has more than %d items", what, MAX_LIST);
  return (int)len;
}

static yaml_node_t *seq_item(Reader *r, yaml_node_t *n, int i) { return node_at(r, n->data.sequence.items.start[i]); }

/* The mapping's value for key (NULL if absent); keys outside `allowed` (a
 * NULL-terminated list) are errors. Each key is looked up once. */
static void check_keys(Reader *r, yaml_node_t *map, const char *what, const char *const *allowed) {
  if (map->type != YAML_MAPPING_NODE)
    fail(r, map, "expected %s (a mapping), found %s", what, kind_name(map));
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node_at(r, p->key);
    const char *key = scalar(r, k, "a key");
    bool ok = false;
    for (int i = 0; allowed[i] && !ok; i++)
      ok = strcmp(allowed[i], key) == 0;
    if (!ok) {
      StrBuf known = {0};
      for (int i = 0; allowed[i]; i++)
        sb_printf(&known, "%s%s", i ? ", " : "", allowed[i]);
      char *list = arena_strdup(r->arena, sb_cstr(&known));
      sb_free(&known);
      fail(r, k, "unknown key '%s' in %s (expected %s)", key, what, list);
    }
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
      yaml_node_t *kq = yaml_document_get_node(&r->doc, q->key);
      if (kq->type == YAML_SCALAR_NODE && kq->data.scalar.length == k->data.scalar.length &&
          memcmp(kq->data.scalar.value, k->data.scalar.value, k->data.scalar.length) == 0)
        fail(r, k, "key '%s' appears twice in %s", key, what);
    }
  }
}

static yaml_node_t *member(Reader *r, yaml_node_t *map, const char *key) {
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
    if (k->type == YAML_SCALAR_NODE && strlen(key) == k->data.scalar.length &&
        memcmp(k->data.scalar.value, key, k->data.scalar.length) == 0)
      return node_at(r, p->value);
  }
  return NULL;
}

static yaml_node_t *required(Reader *r, yaml_node_t *map, const char *key, const char *what) {
  yaml_node_t *v = member(r, map, key);
  if (!v)
    fail(r, map, "%s has no '%s'", what, key);
  return v;
}

/* The tag of a node as written (`!LinalgOpConfig`, `!<LinalgTensorDef>` is
 * "LinalgTensorDef"), or NULL for untagged (default) nodes. */
static const char *tag_of(const yaml_node_t *n) {
  const char *t = (const char *)n->tag;
  if (!t || strncmp(t, "tag:yaml.org,2002:", 18) == 0)
    return NULL;
  return t[0] == '!' ? t + 1 : t;
}

static void expect_tag(Reader *r, yaml_node_t *n, const char *want, const char *alt) {
  const char *t = tag_of(n);
  if (t && strcmp(t, want) != 0 && !(alt && strcmp(t, alt) == 0))
    fail(r, n, "expected the tag !%s, found !%s", want, t);
}

static int64_t integer(Reader *r, yaml_node_t *n, const char *what, int64_t lo, int64_t hi) {
  const char *s = scalar(r, n, what);
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*s == '\0' || *end != '\0' || errno == ERANGE)
    fail(r, n, "expected %s (an integer), found '%s'", what, s);
  if (v < lo || v > hi)
    fail(r, n, "%s must be between %lld and %lld, not %lld", what, (long long)lo, (long long)hi, v);
  return v;
}

/* ---- locations inside a scalar ---- */

/* Where character `at` of scalar n's value is in the file: plain and quoted
 * scalars may be folded over several lines (a line break and the next
 * line's indentation become one space). */
static Loc char_loc(Reader *r, const yaml_node_t *n, size_t at) {
  const char *src = r->src->text;
  Loc start = loc_of(r, n);
  size_t p = start.offset, end = p + (size_t)(n->end_mark.index - n->start_mark.index) * 4;
  const char *v = (const char *)n->data.scalar.value;
  if (end > r->src->len)
    end = r->src->len;
  bool quoted = n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
  if (!(quoted || n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) || at > n->data.scalar.length)
    return start;
  if (quoted)
    p++;
  for (size_t i = 0; i < at && p < end; i++) {
    if (v[i] == ' ' && (src[p] == '\n' || src[p] == '\r')) {
      while (p < end && (src[p] == ' ' || src[p] == '\t' || src[p] == '\n' || src[p] == '\r'))
        p++;
      continue;
    }
    if (v[i] == '\'' && n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE && src[p] == '\'')
      p++;
    p++;
  }
  return walk_to_byte(r->src, &r->cursor, p);
}

/* ---- affine maps ---- */

typedef struct {
  Reader *r;
  yaml_node_t *node;
  const char *s;
  size_t pos;
  int ndims, nsyms;
  const char *dims[LG_MAX_DIMS];
  const char *syms[LG_MAX_DIMS * 4];
  int depth;
} MapParser;

static void map_fail(MapParser *m, size_t at, const char *fmt, const char *arg) LG_NORETURN;
static void map_fail(MapParser *m, size_t at, const char *fmt, const char *arg) {
  fail_at(m->r, char_loc(m->r, m->node, at), fmt, arg);
}

static void skip_ws(MapParser *m) {
  while (m->s[m->pos] == ' ' || m->s[m->pos] == '\t' || m->s[m->pos] == '\n' || m->s[m->pos] == '\r')
    m->pos++;
}

static bool accept(MapParser *m, const char *tok) {
  skip_ws(m);
  size_t n = strlen(tok);
  if (strncmp(m->s + m->pos, tok, n) != 0)
    return false;
  m->pos += n;
  return true;
}

static void expect(MapParser *m, const char *tok, const char *context) {
  if (!accept(m, tok))
    map_fail(m, m->pos, arena_printf(m->r->arena, "expected '%%s' %s in the affine map", context), tok);
}

static bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static const char *ident(MapParser *m) {
  skip_ws(m);
  size_t b = m->pos;
  if (!ident_char(m->s[b]) || (m->s[b] >= '0' && m->s[b] <= '9'))
    map_fail(m, b, "expected a name in the affine map%s", "");
  while (ident_char(m->s[m->pos]))
    m->pos++;
  if (m->pos - b > 64)
    map_fail(m, b, "a name longer than 64 characters in the affine map%s", "");
  return arena_strndup(m->r->arena, m->s + b, m->pos - b);
}

/* '(' names ')' ; fills names, returns the count */
static int name_list(MapParser *m, const char **names, int max, const char *open, const char *close,
                     const char *what) {
  expect(m, open, arena_printf(m->r->arena, "to open the %s list", what));
  int n = 0;
  if (accept(m, close))
    return 0;
  do {
    size_t at = (skip_ws(m), m->pos);
    if (n == max)
      map_fail(m, at, "more than %s names in the list", arena_printf(m->r->arena, "%d", max));
    names[n] = ident(m);
    for (int i = 0; i < n; i++)
      if (strcmp(names[i], names[n]) == 0)
        map_fail(m, at, "'%s' is declared twice in the affine map", names[n]);
    n++;
  } while (accept(m, ","));
  expect(m, close, arena_printf(m->r->arena, "to close the %s list", what));
  return n;
}

static AffineExpr *map_expr(MapParser *m);

static AffineExpr *map_unary(MapParser *m) {
  skip_ws(m);
  size_t at = m->pos;
  if (++m->depth > MAX_EXPR_DEPTH)
    map_fail(m, at, "affine expression nested more than %s levels deep", "256");
  AffineExpr *e;
  if (accept(m, "-")) {
    AffineExpr *x = map_unary(m);
    e = x->kind == AE_CONST && x->value != INT64_MIN ? affine_const(m->r->arena, -x->value)
                                                     : affine_binary(m->r->arena, AE_NEG, x, NULL);
  } else if (accept(m, "(")) {
    e = map_expr(m);
    expect(m, ")", "to close the parenthesis");
  } else if (m->s[at] >= '0' && m->s[at] <= '9') {
    int64_t v = 0;
    while (m->s[m->pos] >= '0' && m->s[m->pos] <= '9') {
      int d = m->s[m->pos++] - '0';
      if (v > (INT64_MAX - d) / 10)
        map_fail(m, at, "constant too large for an index%s", "");
      v = v * 10 + d;
    }
    e = affine_const(m->r->arena, v);
  } else {
    const char *name = ident(m);
    e = NULL;
    for (int i = 0; i < m->ndims && !e; i++)
      if (strcmp(m->dims[i], name) == 0)
        e = affine_leaf(m->r->arena, AE_DIM, i, 0);
    for (int i = 0; i < m->nsyms && !e; i++)
      if (strcmp(m->syms[i], name) == 0)
        e = affine_leaf(m->r->arena, AE_SIZE, i, 0);
    if (!e)
      map_fail(m, at, "'%s' is neither a dim nor a symbol of the affine map", name);
  }
  m->depth--;
  return e;
}

static AffineExpr *map_term(MapParser *m) {
  AffineExpr *lhs = map_unary(m);
  for (;;) {
    skip_ws(m);
    size_t at = m->pos;
    AffineKind kind;
    if (accept(m, "*"))
      kind = AE_MUL;
    else if (strncmp(m->s + at, "floordiv", 8) == 0 && !ident_char(m->s[at + 8]))
      kind = AE_FLOORDIV, m->pos += 8;
    else if (strncmp(m->s + at, "ceildiv", 7) == 0 && !ident_char(m->s[at + 7]))
      kind = AE_CEILDIV, m->pos += 7;
    else if (strncmp(m->s + at, "mod", 3) == 0 && !ident_char(m->s[at + 3]))
      kind = AE_MOD, m->pos += 3;
    else
      return lhs;
    AffineExpr *rhs = map_unary(m);
    if (kind == AE_MUL && affine_has_dims(lhs) && affine_has_dims(rhs))
      map_fail(m, at, "non-affine expression: one operand of '*' must be a constant or a symbol%s", "");
    if (kind != AE_MUL && affine_has_dims(rhs))
      map_fail(m, at, "non-affine expression: the right operand of floordiv, ceildiv and mod must be a constant or "
                      "a symbol%s", "");
    if (kind != AE_MUL && rhs->kind == AE_CONST && rhs->value <= 0)
      map_fail(m, at, "the divisor must be positive%s", "");
    lhs = affine_binary(m->r->arena, kind, lhs, rhs);
  }
}

static AffineExpr *map_expr(MapParser *m) {
  AffineExpr *lhs = map_term(m);
  for (;;) {
    if (accept(m, "+"))
      lhs = affine_binary(m->r->arena, AE_ADD, lhs, map_term(m));
    else if ((skip_ws(m), m->s[m->pos] == '-' && m->s[m->pos + 1] != '>') && accept(m, "-"))
      lhs = affine_binary(m->r->arena, AE_SUB, lhs, map_term(m));
    else
      return lhs;
  }
}

static OpdslMap *affine_map(Reader *r, yaml_node_t *n, const char *what) {
  MapParser m = {.r = r, .node = n, .s = scalar(r, n, what)};
  OpdslMap *map = arena_alloc(r->arena, sizeof *map);
  map->loc = loc_of(r, n);
  expect(&m, "affine_map", "to start the map (affine_map<...>)");
  expect(&m, "<", "after 'affine_map'");
  map->ndims = m.ndims = name_list(&m, m.dims, LG_MAX_DIMS, "(", ")", "dim");
  skip_ws(&m);
  if (m.s[m.pos] == '[')
    map->nsyms = m.nsyms = name_list(&m, m.syms, LG_MAX_DIMS * 4, "[", "]", "symbol");
  for (int i = 0; i < m.ndims; i++)
    for (int j = 0; j < m.nsyms; j++)
      if (strcmp(m.dims[i], m.syms[j]) == 0)
        map_fail(&m, 0, "'%s' is both a dim and a symbol of the affine map", m.dims[i]);
  expect(&m, "->", "after the dims and symbols");
  expect(&m, "(", "to open the results");
  AffineExpr *results[LG_MAX_RANK];
  Loc locs[LG_MAX_RANK];
  int nres = 0;
  if (!accept(&m, ")")) {
    do {
      skip_ws(&m);
      if (nres == LG_MAX_RANK)
        map_fail(&m, m.pos, "more than %s results (the rank limit)", "16");
      locs[nres] = char_loc(r, n, m.pos);
      results[nres++] = map_expr(&m);
    } while (accept(&m, ","));
    expect(&m, ")", "to close the results");
  }
  expect(&m, ">", "to end the map");
  skip_ws(&m);
  if (m.s[m.pos])
    map_fail(&m, m.pos, "unexpected text after the affine map%s", "");
  map->nresults = nres;
  map->results = arena_alloc(r->arena, sizeof(AffineExpr *) * (size_t)(nres + 1));
  map->result_locs = arena_alloc(r->arena, sizeof(Loc) * (size_t)(nres + 1));
  memcpy(map->results, results, sizeof(AffineExpr *) * (size_t)nres);
  memcpy(map->result_locs, locs, sizeof(Loc) * (size_t)nres);
  return map;
}

/* ---- metadata and args ---- */

static void read_metadata(Reader *r, yaml_node_t *n, OpdslOp *op) {
  static const char *const keys[] = {"name", "cpp_class_name", "cpp_op_name", "doc", "implements", "defines", NULL};
  expect_tag(r, n, "LinalgOpMetadata", NULL);
  check_keys(r, n, "the metadata", keys);
  yaml_node_t *name = required(r, n, "name", "the metadata");
  op->name = scalar(r, name, "the op's name");
  op->loc = loc_of(r, name);
  if (!*op->name)
    fail(r, name, "the op's name is empty");
  for (const char *p = op->name; *p; p++)
    if (!ident_char(*p) || (p == op->name && *p >= '0' && *p <= '9'))
      fail(r, name, "the op's name '%s' is not an identifier (letters, digits and '_')", op->name);
  yaml_node_t *v;
  if ((v = member(r, n, "cpp_class_name")))
    scalar(r, v, "the C++ class name");
  if ((v = member(r, n, "cpp_op_name")))
    scalar(r, v, "the C++ class name");
  if ((v = member(r, n, "doc")))
    op->doc = doc_text(r, v);
  static const char *const lists[] = {"implements", "defines"};
  for (int l = 0; l < 2; l++)
    if ((v = member(r, n, lists[l]))) {
      int len = seq_len(r, v, lists[l]);
      for (int i = 0; i < len; i++)
        scalar(r, seq_item(r, v, i), "a name");
    }
}

static OpdslArgKind arg_kind(Reader *r, yaml_node_t *n, bool usage, bool has_shape) {
  const char *k = scalar(r, n, usage ? "the operand's usage" : "the operand's kind");
  static const struct {
    const char *name;
    OpdslArgKind kind;
  } kinds[] = {
      {"input_tensor", OA_INPUT},         {"output_tensor", OA_OUTPUT},       {"scalar", OA_SCALAR},
      {"index_attr", OA_INDEX_ATTR},      {"unary_fn_attr", OA_UNARY_FN},     {"binary_fn_attr", OA_BINARY_FN},
      {"ternary_fn_attr", OA_TERNARY_FN}, {"type_fn_attr", OA_TYPE_FN},
      /* usage: (2021) */
      {"input", OA_INPUT},                {"output", OA_OUTPUT},              {"InputOperand", OA_INPUT},
      {"OutputOperand", OA_OUTPUT},       {"Input", OA_INPUT},                {"Output", OA_OUTPUT},
      {"IndexAttribute", OA_INDEX_ATTR},  {"IndexAttr", OA_INDEX_ATTR},
  };
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if ((i < 8) != usage && strcmp(kinds[i].name, k) == 0)
      return kinds[i].kind == OA_INPUT && usage && !has_shape ? OA_SCALAR : kinds[i].kind;
  fail(r, n, "unknown operand %s '%s' (expected %s)", usage ? "usage" : "kind", k,
       usage ? "input, output, InputOperand, OutputOperand or IndexAttribute"
             : "input_tensor, output_tensor, scalar, index_attr, unary_fn_attr, binary_fn_attr, ternary_fn_attr "
               "or type_fn_attr");
}

static void read_arg(Reader *r, yaml_node_t *n, OpdslArg *a) {
  static const char *const keys[] = {"name",     "kind",       "usage",          "type_var",       "shape_map",
                                     "shape",    "index_attr_map", "attribute_map", "default_indices",
                                     "default_fn", NULL};
  expect_tag(r, n, "LinalgOperandDefConfig", "LinalgTensorDef");
  check_keys(r, n, "an operand", keys);
  memset(a, 0, sizeof *a);
  yaml_node_t *name = required(r, n, "name", "an operand");
  a->name = scalar(r, name, "the operand's name");
  a->loc = loc_of(r, name);
  if (!*a->name)
    fail(r, name, "the operand's name is empty");
  yaml_node_t *kind = member(r, n, "kind"), *usage = member(r, n, "usage");
  yaml_node_t *shape = member(r, n, "shape_map"), *shape_old = member(r, n, "shape");
  if (shape && shape_old)
    fail(r, shape_old, "an operand has both 'shape_map' and 'shape'");
  shape = shape ? shape : shape_old;
  if (kind && usage)
    fail(r, usage, "an operand has both 'kind' and 'usage'");
  if (!kind && !usage)
    fail(r, n, "the operand '%s' has no 'kind'", a->name);
  a->kind = arg_kind(r, kind ? kind : usage, usage != NULL, shape != NULL);
  yaml_node_t *tv = member(r, n, "type_var");
  bool tensor = a->kind == OA_INPUT || a->kind == OA_OUTPUT || a->kind == OA_SCALAR;
  if (tv && !tensor)
    fail(r, tv, "'type_var' belongs to tensors and scalars, not to '%s'", a->name);
  if (tv) {
    a->type_var = scalar(r, tv, "a type variable");
    a->type_loc = loc_of(r, tv);
    if (!*a->type_var)
      fail(r, tv, "the type variable is empty");
  } else if (tensor) {
    a->type_var = a->name; /* the first schema had no type variables: one per operand */
    a->type_loc = a->loc;
  }
  if (shape && a->kind != OA_INPUT && a->kind != OA_OUTPUT)
    fail(r, shape, "only tensors have a shape, not '%s'", a->name);
  if ((a->kind == OA_INPUT || a->kind == OA_OUTPUT) && !shape)
    fail(r, n, "the tensor '%s' has no 'shape_map'", a->name);
  if (shape) {
    a->shape = affine_map(r, shape, "a shape map");
    if (a->shape->ndims)
      fail(r, shape, "a shape map has no dims, only symbols: affine_map<()[s0, ...] -> (...)>");
  }
  yaml_node_t *am = member(r, n, "index_attr_map"), *am_old = member(r, n, "attribute_map");
  if (am && am_old)
    fail(r, am_old, "an operand has both 'index_attr_map' and 'attribute_map'");
  am = am ? am : am_old;
  yaml_node_t *defaults = member(r, n, "default_indices");
  if ((am || defaults) && a->kind != OA_INDEX_ATTR)
    fail(r, am ? am : defaults, "only index attributes have '%s'", am ? "index_attr_map" : "default_indices");
  a->ndefaults = -1;
  if (a->kind == OA_INDEX_ATTR) {
    if (!am)
      fail(r, n, "the index attribute '%s' has no 'index_attr_map'", a->name);
    a->attr_map = affine_map(r, am, "an index attribute map");
    if (a->attr_map->ndims || a->attr_map->nresults == 0)
      fail(r, am, "an index attribute map has no dims and one symbol per element: affine_map<()[s0, ...] -> (s2)>");
    for (int i = 0; i < a->attr_map->nresults; i++)
      if (a->attr_map->results[i]->kind != AE_SIZE)
        fail_at(r, a->attr_map->result_locs[i], "each element of an index attribute is a bare symbol");
    if (defaults) {
      a->ndefaults = seq_len(r, defaults, "default_indices");
      if (a->ndefaults != a->attr_map->nresults)
        fail(r, defaults, "'%s' has %d elements but %d defaults", a->name, a->attr_map->nresults, a->ndefaults);
      a->defaults = arena_alloc(r->arena, sizeof(int64_t) * (size_t)(a->ndefaults + 1));
      for (int i = 0; i < a->ndefaults; i++)
        a->defaults[i] = integer(r, seq_item(r, defaults, i), "a default index", -(INT64_C(1) << 40), INT64_C(1) << 40);
    }
  }
  yaml_node_t *fn = member(r, n, "default_fn");
  bool is_fn = a->kind >= OA_UNARY_FN;
  if (fn && !is_fn)
    fail(r, fn, "only fn attributes have 'default_fn', not '%s'", a->name);
  if (fn) {
    a->default_fn = scalar(r, fn, "a function name");
    a->fn_loc = loc_of(r, fn);
  }
}

/* ---- expressions ---- */

static bool parse_const_type(const char *s, ElemType *t) {
  if (strcmp(s, "index") == 0) {
    *t = TY_I64;
    return true;
  }
  return elem_type_parse(s, t);
}

/* '42 : i64', '2.3283064E-10 : f64', '-1 : i32', 'true : i1' */
static void read_const(Reader *r, yaml_node_t *n, OpdslExpr *e) {
  const char *s = scalar(r, n, "a constant ('VALUE : TYPE')");
  const char *colon = strrchr(s, ':');
  if (!colon)
    fail(r, n, "a constant is written 'VALUE : TYPE', like '42 : i64', not '%s'", s);
  size_t vb = 0, ve = (size_t)(colon - s);
  while (s[vb] == ' ')
    vb++;
  while (ve > vb && s[ve - 1] == ' ')
    ve--;
  const char *tb = colon + 1;
  while (*tb == ' ')
    tb++;
  size_t tl = strlen(tb);
  while (tl && tb[tl - 1] == ' ')
    tl--;
  char *type = arena_strndup(r->arena, tb, tl), *value = arena_strndup(r->arena, s + vb, ve - vb);
  if (!parse_const_type(type, &e->type))
    fail_at(r, char_loc(r, n, (size_t)(tb - s)), "unsupported constant type '%s' (expected f16, f32, f64, i1, i8, "
            "i16, i32, i64, u8, u16, u32, u64 or index)", type);
  Loc vloc = char_loc(r, n, vb);
  if (elem_type_is_float(e->type)) {
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (!*value || *end || (value[0] == '0' && (value[1] == 'x' || value[1] == 'X')) || strchr(value, 'n') ||
        strchr(value, 'N'))
      fail_at(r, vloc, "expected a decimal number, found '%s'", value);
    if (isinf(v) || (errno == ERANGE && fabs(v) > 1))
      fail_at(r, vloc, "'%s' does not fit any floating-point type", value);
    e->fvalue = v;
    e->ivalue = (int64_t)0;
    return;
  }
  if (e->type == TY_I1 && (strcmp(value, "true") == 0 || strcmp(value, "false") == 0)) {
    e->ivalue = value[0] == 't';
    return;
  }
  char *end;
  errno = 0;
  long long v = strtoll(value, &end, 10);
  if (!*value || *end || errno == ERANGE)
    fail_at(r, vloc, "expected an integer that fits 64 bits, found '%s'", value);
  int bits = elem_type_bits(e->type);
  /* a literal of a uN type is its value (u64 up to INT64_MAX) */
  if (elem_type_is_unsigned(e->type) && (v < 0 || (bits < 64 && v >= (INT64_C(1) << bits))))
    fail_at(r, vloc, "'%s' does not fit %s", value, type);
  /* a literal of an iN type is read as a signed or unsigned N-bit number, as MLIR's parser does */
  if (bits < 64 && (v < -(INT64_C(1) << (bits - 1)) || v >= (INT64_C(1) << bits)))
    fail_at(r, vloc, "'%s' does not fit %s", value, type);
  if (bits < 64 && v >= (INT64_C(1) << (bits - 1)) && !elem_type_is_unsigned(e->type))
    v -= INT64_C(1) << bits; /* the bit pattern, as a signed value */
  if (e->type == TY_I1)
    v = v != 0;
  e->ivalue = v;
}

static OpdslExpr *read_expr(Reader *r, yaml_node_t *n, int depth);

static void read_operands(Reader *r, yaml_node_t *list, OpdslExpr *e, int depth) {
  e->nops = seq_len(r, list, "the operands");
  e->ops = arena_alloc(r->arena, sizeof(OpdslExpr *) * (size_t)(e->nops + 1));
  for (int i = 0; i < e->nops; i++)
    e->ops[i] = read_expr(r, seq_item(r, list, i), depth + 1);
}

static void read_fn(Reader *r, yaml_node_t *n, OpdslExpr *e, int depth, bool old) {
  static const char *const keys[] = {"kind", "fn_name", "attr_name", "type_var", "operands", NULL};
  check_keys(r, n, old ? "a scalar_apply" : "a scalar_fn", keys);
  e->kind = OE_FN;
  yaml_node_t *kind = member(r, n, "kind");
  if (!kind && !old)
    fail(r, n, "a scalar_fn has no 'kind' (unary, binary, ternary or type)");
  yaml_node_t *fn = member(r, n, "fn_name"), *attr = member(r, n, "attr_name"), *tv = member(r, n, "type_var");
  if (!fn == !attr)
    fail(r, n, "a scalar_fn names either a function ('fn_name') or a fn attribute ('attr_name')");
  if (fn)
    e->fn_name = scalar(r, fn, "a function name");
  else
    e->attr_name = scalar(r, attr, "a fn attribute name");
  e->fn_loc = loc_of(r, fn ? fn : attr);
  read_operands(r, required(r, n, "operands", "a scalar_fn"), e, depth);
  if (kind) {
    const char *k = scalar(r, kind, "a function kind");
    static const char *const kinds[] = {"unary", "binary", "ternary", "type"};
    int i = 0;
    while (i < 4 && strcmp(kinds[i], k) != 0)
      i++;
    if (i == 4)
      fail(r, kind, "unknown function kind '%s' (expected unary, binary, ternary or type)", k);
    e->fn_kind = (OpdslFnKind)i;
  } else { /* scalar_apply: the kind from the operand count */
    if (e->nops < 1 || e->nops > 3)
      fail(r, n, "a scalar_apply takes 1, 2 or 3 operands, not %d", e->nops);
    e->fn_kind = (OpdslFnKind)(e->nops - 1);
  }
  static const int arity[] = {1, 2, 3, 1};
  if (e->nops != arity[e->fn_kind])
    fail(r, n, "a %s function takes %d operand%s, not %d", scalar(r, kind, "a kind"), arity[e->fn_kind],
         arity[e->fn_kind] == 1 ? "" : "s", e->nops);
  if ((e->fn_kind == FK_TYPE) != (tv != NULL))
    fail(r, tv ? tv : n, "%s", tv ? "only type functions take a 'type_var'" : "a type function needs a 'type_var'");
  if (tv) {
    e->type_var = scalar(r, tv, "a type variable");
    e->type_loc = loc_of(r, tv);
  }
}

static OpdslExpr *read_expr(Reader *r, yaml_node_t *n, int depth) {
  static const char *const keys[] = {"scalar_arg",   "scalar_const",  "scalar_index", "scalar_fn",
                                     "scalar_apply", "symbolic_cast", NULL};
  if (depth > MAX_EXPR_DEPTH)
    fail(r, n, "expression nested more than %d levels deep", MAX_EXPR_DEPTH);
  expect_tag(r, n, "ScalarExpression", NULL);
  check_keys(r, n, "a scalar expression", keys);
  if (n->data.mapping.pairs.top - n->data.mapping.pairs.start != 1)
    fail(r, n, "a scalar expression has exactly one of scalar_arg, scalar_const, scalar_index and scalar_fn");
  OpdslExpr *e = arena_alloc(r->arena, sizeof *e);
  e->loc = loc_of(r, n);
  yaml_node_t *v;
  if ((v = member(r, n, "scalar_arg"))) {
    e->kind = OE_ARG;
    e->arg = scalar(r, v, "an operand name");
    e->loc = loc_of(r, v);
  } else if ((v = member(r, n, "scalar_const"))) {
    e->kind = OE_CONST;
    e->loc = loc_of(r, v);
    read_const(r, v, e);
  } else if ((v = member(r, n, "scalar_index"))) {
    e->kind = OE_INDEX;
    e->loc = loc_of(r, v);
    e->dim = (int)integer(r, v, "a dim number", 0, LG_MAX_DIMS - 1);
  } else if ((v = member(r, n, "scalar_fn"))) {
    read_fn(r, v, e, depth, false);
  } else if ((v = member(r, n, "scalar_apply"))) {
    read_fn(r, v, e, depth, true);
  } else {
    v = member(r, n, "symbolic_cast");
    static const char *const ckeys[] = {"type_var", "operands", NULL};
    check_keys(r, v, "a symbolic_cast", ckeys);
    e->kind = OE_FN;
    e->fn_kind = FK_TYPE;
    e->fn_name = "cast_signed";
    e->fn_loc = e->loc;
    yaml_node_t *tv = required(r, v, "type_var", "a symbolic_cast");
    e->type_var = scalar(r, tv, "a type variable");
    e->type_loc = loc_of(r, tv);
    read_operands(r, required(r, v, "operands", "a symbolic_cast"), e, depth);
    if (e->nops != 1)
      fail(r, v, "a symbolic_cast takes 1 operand, not %d", e->nops);
  }
  return e;
}

/* ---- the structured op ---- */

static void read_structured_op(Reader *r, yaml_node_t *n, OpdslOp *op) {
  static const char *const keys[] = {"args", "indexing_maps", "iterator_types", "assignments", NULL};
  expect_tag(r, n, "LinalgStructuredOpConfig", NULL);
  check_keys(r, n, "the structured op", keys);
  yaml_node_t *args = required(r, n, "args", "the structured op");
  op->nargs = seq_len(r, args, "args");
  if (op->nargs > 64)
    fail(r, args, "more than 64 operands");
  op->args = arena_alloc(r->arena, sizeof(OpdslArg) * (size_t)(op->nargs + 1));
  for (int i = 0; i < op->nargs; i++) {
    read_arg(r, seq_item(r, args, i), &op->args[i]);
    for (int j = 0; j < i; j++)
      if (strcmp(op->args[i].name, op->args[j].name) == 0)
        fail_at(r, op->args[i].loc, "the operand '%s' is declared twice", op->args[i].name);
  }
  yaml_node_t *im = required(r, n, "indexing_maps", "the structured op");
  static const char *const im_keys[] = {"static_indexing_maps", NULL};
  expect_tag(r, im, "LinalgIndexingMapsConfig", NULL);
  check_keys(r, im, "indexing_maps", im_keys);
  yaml_node_t *maps = required(r, im, "static_indexing_maps", "indexing_maps");
  op->maps_loc = loc_of(r, maps);
  op->nmaps = seq_len(r, maps, "static_indexing_maps");
  op->maps = arena_alloc(r->arena, sizeof(OpdslMap *) * (size_t)(op->nmaps + 1));
  for (int i = 0; i < op->nmaps; i++)
    op->maps[i] = affine_map(r, seq_item(r, maps, i), "an indexing map");
  yaml_node_t *iters = required(r, n, "iterator_types", "the structured op");
  op->iters_loc = loc_of(r, iters);
  op->niters = seq_len(r, iters, "iterator_types");
  if (op->niters > LG_MAX_DIMS)
    fail(r, iters, "more than %d iterator types (the dim limit)", LG_MAX_DIMS);
  op->iters = arena_alloc(r->arena, sizeof(IterKind) * (size_t)(op->niters + 1));
  for (int i = 0; i < op->niters; i++) {
    yaml_node_t *it = seq_item(r, iters, i);
    const char *s = scalar(r, it, "an iterator type");
    if (strcmp(s, "parallel") == 0)
      op->iters[i] = ITER_PARALLEL;
    else if (strcmp(s, "reduction") == 0)
      op->iters[i] = ITER_REDUCTION;
    else
      fail(r, it, "unknown iterator type '%s' (expected parallel or reduction)", s);
  }
  yaml_node_t *assigns = required(r, n, "assignments", "the structured op");
  op->nassigns = seq_len(r, assigns, "assignments");
  if (op->nassigns == 0)
    fail(r, assigns, "an op assigns at least one output");
  op->assigns = arena_alloc(r->arena, sizeof(OpdslAssign) * (size_t)(op->nassigns + 1));
  for (int i = 0; i < op->nassigns; i++) {
    yaml_node_t *a = seq_item(r, assigns, i);
    static const char *const a_keys[] = {"arg", "value", NULL};
    expect_tag(r, a, "ScalarAssign", NULL);
    check_keys(r, a, "an assignment", a_keys);
    yaml_node_t *arg = required(r, a, "arg", "an assignment");
    op->assigns[i].arg = scalar(r, arg, "an output name");
    op->assigns[i].loc = loc_of(r, arg);
    op->assigns[i].value = read_expr(r, required(r, a, "value", "an assignment"), 0);
  }
  /* rank-polymorphic (elementwise) ops: no iterator types, every map () -> () */
  op->rank_polymorphic = op->niters == 0;
  for (int i = 0; i < op->nmaps && op->rank_polymorphic; i++)
    op->rank_polymorphic = op->maps[i]->ndims == 0 && op->maps[i]->nresults == 0;
}

static OpdslOp *read_document(Reader *r, yaml_node_t *root) {
  static const char *const keys[] = {"metadata", "structured_op", NULL};
  take(r, root);
  if (root->type != YAML_MAPPING_NODE)
    fail(r, root, "an OpDSL document is a mapping (--- !LinalgOpConfig with metadata and structured_op), not %s",
         kind_name(root));
  expect_tag(r, root, "LinalgOpConfig", NULL);
  check_keys(r, root, "a LinalgOpConfig", keys);
  OpdslOp *op = arena_alloc(r->arena, sizeof *op);
  read_metadata(r, required(r, root, "metadata", "a LinalgOpConfig"), op);
  read_structured_op(r, required(r, root, "structured_op", "a LinalgOpConfig"), op);
  return op;
}

/* read_document, deleting the parser on an error's way out (it unwinds
 * past this frame to the compilation's entry). */
static OpdslOp *read_guarded(Reader *r, yaml_node_t *root, yaml_parser_t *parser) {
  Diag *diag = r->diag;
  jmp_buf *caller = diag->on_error, here;
  int status = setjmp(here);
  if (status == 0) {
    diag->on_error = &here;
    OpdslOp *op = read_document(r, root);
    diag->on_error = caller;
    return op;
  }
  diag->on_error = caller;
  yaml_parser_delete(parser);
  release(r);
  longjmp(*caller, status);
}

OpdslFile *opdsl_parse(const Source *src, Arena *arena, Diag *diag) {
  OpdslFile *file = arena_alloc(arena, sizeof *file);
  Reader r = {.src = src, .arena = arena, .diag = diag, .cursor = {0, 0, 1, 1, 0}};
  /* libyaml would decode UTF-16, whose characters lgen cannot locate in bytes */
  if (src->len >= 2 && (((unsigned char)src->text[0] == 0xFF && (unsigned char)src->text[1] == 0xFE) ||
                        ((unsigned char)src->text[0] == 0xFE && (unsigned char)src->text[1] == 0xFF)))
    diag_error(diag, (Loc){src, 1, 1, 0, NULL}, "OpDSL YAML must be UTF-8, not UTF-16");
  const char *nul = memchr(src->text, '\0', src->len);
  if (nul)
    diag_error(diag, walk_to_byte(src, &r.cursor, (size_t)(nul - src->text)), "a NUL byte in a YAML file");
  yaml_parser_t parser;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, (const unsigned char *)src->text, src->len);
  for (;;) {
    if (!yaml_parser_load(&parser, &r.doc)) {
      Loc loc = mark_loc(src, &r.cursor, parser.problem_mark);
      char *msg = arena_printf(arena, "%s%s%s", parser.problem ? parser.problem : "malformed YAML",
                               parser.context ? " " : "", parser.context ? parser.context : "");
      yaml_parser_delete(&parser);
      diag_error(diag, loc, "%s", msg);
    }
    r.have_doc = true;
    yaml_node_t *root = yaml_document_get_root_node(&r.doc);
    if (!root) {
      release(&r);
      break;
    }
    if (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0 && !tag_of(root)) {
      release(&r); /* an empty document ("---" alone) */
      continue;
    }
    r.nnodes = (size_t)(r.doc.nodes.top - r.doc.nodes.start);
    r.seen = arena_alloc(arena, r.nnodes + 1);
    OpdslOp *op = read_guarded(&r, root, &parser);
    release(&r);
    for (int i = 0; i < file->ops.len; i++)
      if (strcmp(((OpdslOp *)file->ops.items[i])->name, op->name) == 0) {
        yaml_parser_delete(&parser);
        diag_error(diag, op->loc, "op '%s' is defined twice in this file", op->name);
      }
    vec_push(arena, &file->ops, op);
  }
  yaml_parser_delete(&parser);
  return file;
}

bool opdsl_sniff(const char *text, size_t len) {
  const char *tag = "!LinalgOpConfig";
  size_t n = strlen(tag);
  for (size_t i = 0; i + n <= len && i < 65536; i++)
    if (memcmp(text + i, tag, n) == 0)
      return true;
  return false;
}
