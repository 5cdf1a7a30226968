/* yaml.c - schedule files (libyaml), and applying them to ops.
 *
 *   matmul:                      # an op (def) name
 *     fold: [b]                  # drop dims of constant extent 1 (before the rest)
 *     collapse: [[i, j]]         # merge contiguous dims; the merged dim is named i
 *     tile: {n: [512], k: [384], m: [128]}   # sizes per level, outermost first
 *     order: [n, k, m]           # dims, outermost first (others follow)
 *     unroll: {m: 8, n: 32}      # register block (unroll-and-jam)
 *     parallel: [n]              # OpenMP parallel loops (n.reg: n's register tiles)
 *     vector: n                  # omp simd dim, or none
 *     partials: 64               # a vector reduction dim's partial results
 *     pack: [A, B]               # tensors packed into local buffers
 *     split_reduction: false     # allow parallel reduction dims
 *     library_call: cblas_sgemm  # the op as one library call
 *   mlp:                         # a def with several comprehensions:
 *     - op: 0                    #   a list, one entry per comprehension
 *       parallel: [i]
 *     - fuse: {h: keep}          # a model graph: intermediates to keep or inline
 *     - algorithm: {y: winograd} # a model graph: a conv's algorithm (direct, im2col, winograd, winograd6)
 *     - op: 2
 *       outline: fc2_block       # a model graph: the group op 2 heads as the C function fc2_block
 *     - op: 3
 *       libcall: vendor_fc3      # ... or as a call of the user's function vendor_fc3
 *
 * Every error points at the offending node: file:line:col. */
#include "schedule/schedule.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct {
  yaml_document_t doc;
  const Source *src;
  Arena *arena;
  Diag *diag;
} YamlReader;

/* A libyaml mark as a byte offset of the text. libyaml counts lines its own
 * way (NEL, LS and PS break lines too) and columns in characters, and puts
 * a mark at the end of a last line without a newline on the line after it:
 * the offset is found from its line and column, then diag_loc_at counts
 * lines and columns as every other lgen diagnostic does. */
static size_t mark_offset(const Source *src, yaml_mark_t m) {
  const unsigned char *t = (const unsigned char *)src->text;
  size_t n = src->len, i = n >= 3 && t[0] == 0xef && t[1] == 0xbb && t[2] == 0xbf ? 3 : 0;
  for (size_t line = 0; line < m.line && i < n; i++) {
    size_t brk = t[i] == '\r' ? (i + 1 < n && t[i + 1] == '\n' ? 2 : 1)
                 : t[i] == '\n' ? 1
                 : i + 1 < n && t[i] == 0xc2 && t[i + 1] == 0x85 ? 2
                 : i + 2 < n && t[i] == 0xe2 && t[i + 1] == 0x80 && (t[i + 2] == 0xa8 || t[i + 2] == 0xa9) ? 3
                 : 0;
    if (brk) {
      line++;
      i += brk - 1;
    }
  }
  for (size_t col = 0; col < m.column && i < n && t[i] != '\n' && t[i] != '\r'; col++)
    for (i++; i < n && (t[i] & 0xc0) == 0x80; i++) /* the rest of a UTF-8 character */
      ;
  return i;
}

static Loc loc_of(YamlReader *r, const yaml_node_t *node) { return diag_loc_at(r->src, mark_offset(r->src, node->start_mark)); }

/* Errors unwind (longjmp) through diag_error: free libyaml's document first. */
static void fail(YamlReader *r, const yaml_node_t *node, const char *fmt, const char *arg) LG_NORETURN;
static void fail(YamlReader *r, const yaml_node_t *node, const char *fmt, const char *arg) {
  Loc loc = loc_of(r, node);
  char *msg = arena_printf(r->arena, fmt, arg);
  yaml_document_delete(&r->doc);
  diag_error(r->diag, loc, "%s", msg);
}

static const char *scalar(YamlReader *r, yaml_node_t *node, const char *what) {
  if (node->type != YAML_SCALAR_NODE)
    fail(r, node, "expected %s", what);
  return arena_strndup(r->arena, (const char *)node->data.scalar.value, node->data.scalar.length);
}

static int64_t integer(YamlReader *r, yaml_node_t *node) {
  const char *s = scalar(r, node, "an integer");
  char *end;
  long long v = strtoll(s, &end, 10);
  if (*s == '\0' || *end != '\0')
    fail(r, node, "expected an integer, found '%s'", s);
  if (v <= 0 || v > (1LL << 40))
    fail(r, node, "'%s' must be a positive size", s);
  return v;
}

/* A name that reaches the C as it is: [A-Za-z_][A-Za-z0-9_]* (reserved
 * words and clashes are checked where the generated names are known:
 * emit/c_names.c). */
static bool c_identifier(const char *s) {
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
      return false;
  return true;
}

static ScheduleEntry *new_entry(YamlReader *r, const char *key, yaml_node_t *node, int n) {
  ScheduleEntry *e = arena_alloc(r->arena, sizeof *e);
  e->key = key;
  e->loc = loc_of(r, node);
  e->nitems = n;
  e->names = arena_alloc(r->arena, sizeof(char *) * (size_t)(n + 1));
  e->locs = arena_alloc(r->arena, sizeof(Loc) * (size_t)(n + 1));
  e->nvalues = arena_alloc(r->arena, sizeof(int) * (size_t)(n + 1));
  e->values = arena_alloc(r->arena, sizeof(int64_t) * (size_t)(n + 1) * LG_MAX_LEVELS);
  return e;
}

static ScheduleEntry *name_list(YamlReader *r, const char *key, yaml_node_t *node) {
  if (node->type != YAML_SEQUENCE_NODE)
    fail(r, node, "'%s' takes a list of names, like [m, n]", key);
  int n = (int)(node->data.sequence.items.top - node->data.sequence.items.start);
  ScheduleEntry *e = new_entry(r, key, node, n);
  for (int i = 0; i < n; i++) {
    yaml_node_t *item = yaml_document_get_node(&r->doc, node->data.sequence.items.start[i]);
    e->names[i] = scalar(r, item, "a name");
    e->locs[i] = loc_of(r, item);
  }
  return e;
}

/* [[a, b], [c, d, e]]: names flattened, values[] holds each one's group */
static ScheduleEntry *group_list(YamlReader *r, const char *key, yaml_node_t *node) {
  if (node->type != YAML_SEQUENCE_NODE)
    fail(r, node, "'%s' takes a list of dim lists, like [[m, n]]", key);
  int ngroups = (int)(node->data.sequence.items.top - node->data.sequence.items.start), n = 0;
  for (int g = 0; g < ngroups; g++) {
    yaml_node_t *group = yaml_document_get_node(&r->doc, node->data.sequence.items.start[g]);
    if (group->type != YAML_SEQUENCE_NODE || group->data.sequence.items.top - group->data.sequence.items.start < 2)
      fail(r, group, "each group of '%s' is a list of two or more dims, like [m, n]", key);
    n += (int)(group->data.sequence.items.top - group->data.sequence.items.start);
  }
  ScheduleEntry *e = new_entry(r, key, node, n);
  n = 0;
  for (int g = 0; g < ngroups; g++) {
    yaml_node_t *group = yaml_document_get_node(&r->doc, node->data.sequence.items.start[g]);
    for (yaml_node_item_t *it = group->data.sequence.items.start; it < group->data.sequence.items.top; it++) {
      yaml_node_t *item = yaml_document_get_node(&r->doc, *it);
      e->names[n] = scalar(r, item, "a dim name");
      e->locs[n] = loc_of(r, item);
      e->values[n * LG_MAX_LEVELS] = g;
      n++;
    }
  }
  return e;
}

/* {name: choice}: values[] hold each choice's index in `choices`. `what`
 * names the keys, `listed` the choices in messages, `like` an example. */
static ScheduleEntry *choice_map(YamlReader *r, const char *key, yaml_node_t *node, const char *what,
                                 const char *one, const char *const *choices, int nchoices, const char *listed,
                                 const char *like) {
  if (node->type != YAML_MAPPING_NODE)
    fail(r, node, "%s", arena_printf(r->arena, "'%s' maps %s to %s, like %s", key, what, listed, like));
  int n = (int)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
  ScheduleEntry *e = new_entry(r, key, node, n);
  for (int i = 0; i < n; i++) {
    yaml_node_pair_t *pair = &node->data.mapping.pairs.start[i];
    yaml_node_t *name = yaml_document_get_node(&r->doc, pair->key);
    yaml_node_t *value = yaml_document_get_node(&r->doc, pair->value);
    e->names[i] = scalar(r, name, one);
    e->locs[i] = loc_of(r, name);
    const char *v = scalar(r, value, listed);
    int c = 0;
    while (c < nchoices && strcmp(v, choices[c]) != 0)
      c++;
    if (c == nchoices)
      fail(r, value, "%s", arena_printf(r->arena, "expected %s, found '%s'", listed, v));
    e->values[i * LG_MAX_LEVELS] = c;
  }
  return e;
}

/* {tensor: inline | keep}: a model graph's fusion overrides (values[] 1: inline) */
static const char *const fuse_choices[] = {"keep", "inline"};

static ScheduleEntry *fuse_map(YamlReader *r, const char *key, yaml_node_t *node) {
  return choice_map(r, key, node, "intermediates", "an intermediate's name", fuse_choices, 2, "inline or keep",
                    "{h: keep}");
}

/* {conv output: direct | im2col | winograd | winograd6}: a model graph's conv
 * algorithms (values[] index into conv_algorithms) */
static const char *const conv_algorithms[] = {"direct", "im2col", "winograd", "winograd6"};

static ScheduleEntry *algorithm_map(YamlReader *r, const char *key, yaml_node_t *node) {
  return choice_map(r, key, node, "conv outputs", "a conv's output name", conv_algorithms, 4,
                    "direct, im2col, winograd or winograd6", "{y: winograd}");
}

const char *schedule_conv_algorithm(int64_t code) { return conv_algorithms[code]; }

/* {dim: size} or {dim: [size, size, ...]} */
static ScheduleEntry *size_map(YamlReader *r, const char *key, yaml_node_t *node, bool levels) {
  if (node->type != YAML_MAPPING_NODE)
    fail(r, node, "'%s' takes a mapping from dims to sizes, like {m: 8}", key);
  int n = (int)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
  ScheduleEntry *e = new_entry(r, key, node, n);
  for (int i = 0; i < n; i++) {
    yaml_node_pair_t *pair = &node->data.mapping.pairs.start[i];
    yaml_node_t *k = yaml_document_get_node(&r->doc, pair->key);
    yaml_node_t *v = yaml_document_get_node(&r->doc, pair->value);
    e->names[i] = scalar(r, k, "a dim name");
    e->locs[i] = loc_of(r, k);
    if (v->type == YAML_SEQUENCE_NODE && levels) {
      int nv = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
      if (nv < 1 || nv > LG_MAX_LEVELS)
        fail(r, v, "between 1 and 3 tile levels, please (%s)", e->names[i]);
      for (int j = 0; j < nv; j++)
        e->values[i * LG_MAX_LEVELS + j] = integer(r, yaml_document_get_node(&r->doc, v->data.sequence.items.start[j]));
      e->nvalues[i] = nv;
    } else {
      e->values[i * LG_MAX_LEVELS] = integer(r, v);
      e->nvalues[i] = 1;
    }
  }
  return e;
}

static ScheduleSpec *read_spec(YamlReader *r, const char *kernel, int op, yaml_node_t *node, Loc loc) {
  if (node->type != YAML_MAPPING_NODE)
    fail(r, node, "expected the decisions for '%s' as a mapping (tile:, order:, ...)", kernel);
  ScheduleSpec *spec = arena_alloc(r->arena, sizeof *spec);
  spec->kernel = kernel;
  spec->op = op;
  spec->loc = loc;
  for (yaml_node_pair_t *pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
    yaml_node_t *k = yaml_document_get_node(&r->doc, pair->key);
    yaml_node_t *v = yaml_document_get_node(&r->doc, pair->value);
    const char *key = scalar(r, k, "a key");
    ScheduleEntry *e;
    if (strcmp(key, "op") == 0) {
      const char *s = scalar(r, v, "an op number");
      char *end;
      long n = strtol(s, &end, 10);
      if (*s == '\0' || *end || n < 0 || n > 1000)
        fail(r, v, "expected a comprehension number, found '%s'", s);
      spec->op = (int)n;
      continue;
    } else if (strcmp(key, "tile") == 0) {
      e = size_map(r, key, v, true);
    } else if (strcmp(key, "unroll") == 0) {
      e = size_map(r, key, v, false);
    } else if (strcmp(key, "partials") == 0) {
      e = new_entry(r, key, v, 1);
      e->values[0] = integer(r, v);
      e->scalar = scalar(r, v, "a number"); /* errors point at the value */
    } else if (strcmp(key, "collapse") == 0) {
      e = group_list(r, key, v);
    } else if (strcmp(key, "fuse") == 0) {
      e = fuse_map(r, key, v);
    } else if (strcmp(key, "layout") == 0) {
      e = new_entry(r, key, v, 0);
      e->scalar = scalar(r, v, "channels_last or given");
      if (strcmp(e->scalar, "channels_last") != 0 && strcmp(e->scalar, "given") != 0)
        fail(r, v, "expected channels_last or given, found '%s'", e->scalar);
    } else if (strcmp(key, "algorithm") == 0) {
      e = algorithm_map(r, key, v);
    } else if (strcmp(key, "order") == 0 || strcmp(key, "parallel") == 0 || strcmp(key, "pack") == 0 ||
               strcmp(key, "fold") == 0) {
      e = name_list(r, key, v);
    } else if (strcmp(key, "outline") == 0 || strcmp(key, "libcall") == 0) {
      e = new_entry(r, key, v, 0);
      e->scalar = scalar(r, v, "a C function name");
      if (!c_identifier(e->scalar))
        fail(r, v, "'%s' is not a C identifier (letters, digits and _, not starting with a digit)", e->scalar);
      for (int i = 0; i < spec->entries.len; i++) {
        const char *other = ((const ScheduleEntry *)spec->entries.items[i])->key;
        if (strcmp(other, "outline") == 0 || strcmp(other, "libcall") == 0)
          fail(r, k, "one outline or libcall per op (this one has '%s' already)", other);
      }
    } else if (strcmp(key, "vector") == 0 || strcmp(key, "library_call") == 0 ||
               strcmp(key, "split_reduction") == 0) {
      e = new_entry(r, key, v, 0);
      e->scalar = scalar(r, v, "a single value");
    } else {
      fail(r, k, "unknown schedule key '%s' (expected fold, collapse, tile, order, unroll, parallel, vector, "
                 "partials, pack, split_reduction, library_call, op, or fuse, layout, algorithm, outline and libcall for a "
                 "model graph)", key);
    }
    if (!e->scalar) /* a scalar's errors point at its value, set by new_entry */
      e->loc = loc_of(r, k);
    vec_push(r->arena, &spec->entries, e);
  }
  return spec;
}

ScheduleFile *schedule_file_parse(const Source *src, Arena *arena, Diag *diag) {
  YamlReader r = {.src = src, .arena = arena, .diag = diag};
  ScheduleFile *file = arena_alloc(arena, sizeof *file);
  yaml_parser_t parser;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, (const unsigned char *)src->text, src->len);
  if (!yaml_parser_load(&parser, &r.doc)) {
    Loc loc = diag_loc_at(src, mark_offset(src, parser.problem_mark));
    char *msg = arena_printf(arena, "%s", parser.problem ? parser.problem : "malformed YAML");
    yaml_parser_delete(&parser);
    diag_error(diag, loc, "%s", msg);
  }
  yaml_parser_delete(&parser);
  yaml_node_t *root = yaml_document_get_root_node(&r.doc);
  if (!root) { /* an empty file: no decisions */
    yaml_document_delete(&r.doc);
    return file;
  }
  if (root->type != YAML_MAPPING_NODE)
    fail(&r, root, "a schedule file maps op names to decisions%s", "");
  for (yaml_node_pair_t *pair = root->data.mapping.pairs.start; pair < root->data.mapping.pairs.top; pair++) {
    yaml_node_t *k = yaml_document_get_node(&r.doc, pair->key);
    yaml_node_t *v = yaml_document_get_node(&r.doc, pair->value);
    const char *kernel = scalar(&r, k, "an op name");
    if (v->type == YAML_SEQUENCE_NODE) {
      int n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
      for (int i = 0; i < n; i++) {
        yaml_node_t *item = yaml_document_get_node(&r.doc, v->data.sequence.items.start[i]);
        vec_push(arena, &file->specs, read_spec(&r, kernel, i, item, loc_of(&r, item)));
      }
    } else {
      vec_push(arena, &file->specs, read_spec(&r, kernel, 0, v, loc_of(&r, k)));
    }
  }
  yaml_document_delete(&r.doc);
  return file;
}

/* ---- applying a spec to an op ---- */

static int dim_index(const StructuredOp *op, const char *name, Loc loc, Diag *diag) {
  for (int d = 0; d < op->ndims; d++)
    if (strcmp(op->dims[d].name, name) == 0)
      return d;
  StrBuf known = {0};
  for (int d = 0; d < op->ndims; d++)
    sb_printf(&known, "%s%s", d ? ", " : "", op->dims[d].name);
  char msg[512];
  snprintf(msg, sizeof msg, "unknown dim '%s' (the op's dims are: %s)", name, sb_cstr(&known));
  sb_free(&known);
  diag_error(diag, loc, "%s", msg);
}

/* fold and collapse, named in the op's own dims: folds first, since a chain
 * may step over a folded position */
static void resolve_reshape(const ScheduleSpec *spec, const Kernel *k, const StructuredOp *op, Reshape *r,
                            Arena *arena, Diag *diag) {
  reshape_identity(r);
  for (int i = 0; i < spec->entries.len; i++) {
    const ScheduleEntry *e = spec->entries.items[i];
    for (int j = 0; strcmp(e->key, "fold") == 0 && j < e->nitems; j++) {
      int d = dim_index(op, e->names[j], e->locs[j], diag);
      const char *problem = reshape_fold_problem(op, d);
      if (problem)
        diag_error(diag, e->locs[j], "'%s' cannot be folded: %s", e->names[j], problem);
      r->fold[d] = true;
    }
  }
  bool merged[LG_MAX_DIMS] = {false};
  for (int i = 0; i < spec->entries.len; i++) {
    const ScheduleEntry *e = spec->entries.items[i];
    for (int j = 0; strcmp(e->key, "collapse") == 0 && j < e->nitems; j++) {
      int b = dim_index(op, e->names[j], e->locs[j], diag);
      if (merged[b])
        diag_error(diag, e->locs[j], "'%s' is already in a collapsed group", e->names[j]);
      merged[b] = true;
      if (j == 0 || e->values[j * LG_MAX_LEVELS] != e->values[(j - 1) * LG_MAX_LEVELS])
        continue;
      int a = dim_index(op, e->names[j - 1], e->locs[j - 1], diag);
      const char *problem = reshape_collapse_problem(k, op, r, a, b, arena);
      if (problem)
        diag_error(diag, e->locs[j], "cannot collapse '%s' into '%s': %s", e->names[j], e->names[j - 1], problem);
      r->next[a] = b;
    }
  }
}

/* A dim of the reshaped view, named by the schedule; a dim that the fold or
 * collapse entries removed gets said so. */
static int view_dim(const OpPlan *plan, const StructuredOp *original, const char *name, Loc loc, Diag *diag) {
  const Reshape *r = &plan->reshape;
  for (int d = 0; d < original->ndims; d++) {
    if (strcmp(original->dims[d].name, name) != 0)
      continue;
    if (r->fold[d])
      diag_error(diag, loc, "'%s' is folded away: the schedule can no longer name it", name);
    int head = reshape_head(r, original->ndims, d);
    if (head != d)
      diag_error(diag, loc, "'%s' is collapsed into '%s': name the merged dim '%s'", name,
                 original->dims[head].name, original->dims[head].name);
  }
  return dim_index(plan->view.op, name, loc, diag);
}

void schedule_resolve(const ScheduleSpec *spec, const Kernel *k, const StructuredOp *original, OpPlan *plan,
                      Arena *arena, Diag *diag) {
  resolve_reshape(spec, k, original, &plan->reshape, arena, diag);
  plan->view = reshape_apply(k, original, &plan->reshape, arena);
  k = plan->view.k;
  const StructuredOp *op = plan->view.op;
  Schedule *s = &plan->s;
  /* decisions start from the plain schedule; what the file says replaces it */
  schedule_none(op, s);
  for (int i = 0; i < spec->entries.len; i++) {
    const ScheduleEntry *e = spec->entries.items[i];
    if (strcmp(e->key, "tile") == 0) {
      for (int j = 0; j < e->nitems; j++) {
        int d = view_dim(plan, original, e->names[j], e->locs[j], diag);
        for (int l = 0; l < e->nvalues[j]; l++)
          s->tile[l][d] = e->values[j * LG_MAX_LEVELS + l];
        if (e->nvalues[j] > s->nlevels)
          s->nlevels = e->nvalues[j];
      }
    } else if (strcmp(e->key, "unroll") == 0) {
      for (int j = 0; j < e->nitems; j++) {
        int d = view_dim(plan, original, e->names[j], e->locs[j], diag);
        if (op->dims[d].kind != ITER_PARALLEL)
          diag_error(diag, e->locs[j], "'%s' is a reduction: only parallel dims can be unrolled and jammed",
                     e->names[j]);
        if (e->values[j * LG_MAX_LEVELS] > 64)
          diag_error(diag, e->locs[j], "unroll factor of '%s' must be at most 64", e->names[j]);
        s->unroll[d] = e->values[j * LG_MAX_LEVELS];
      }
    } else if (strcmp(e->key, "order") == 0) {
      bool listed[LG_MAX_DIMS] = {false};
      int n = 0, order[LG_MAX_DIMS];
      for (int j = 0; j < e->nitems; j++) {
        int d = view_dim(plan, original, e->names[j], e->locs[j], diag);
        if (listed[d])
          diag_error(diag, e->locs[j], "'%s' appears twice in the order", e->names[j]);
        listed[d] = true;
        order[n++] = d;
      }
      for (int j = 0; j < op->ndims; j++) /* unlisted dims keep their relative order, innermost */
        if (!listed[s->order[j]])
          order[n++] = s->order[j];
      memcpy(s->order, order, sizeof(int) * (size_t)op->ndims);
    } else if (strcmp(e->key, "parallel") == 0) {
      memset(s->parallel, 0, sizeof s->parallel);
      memset(s->parallel_reg, 0, sizeof s->parallel_reg);
      for (int j = 0; j < e->nitems; j++) {
        const char *name = e->names[j];
        size_t len = strlen(name);
        bool reg = len > 4 && strcmp(name + len - 4, ".reg") == 0;
        char base[256];
        snprintf(base, sizeof base, "%.*s", (int)(reg ? len - 4 : len), name);
        int d = view_dim(plan, original, base, e->locs[j], diag);
        if (reg)
          s->parallel_reg[d] = true;
        else
          s->parallel[d] = true;
      }
    } else if (strcmp(e->key, "pack") == 0) {
      for (int j = 0; j < e->nitems; j++) {
        int t = -1;
        for (int x = 0; x < k->ntensors; x++)
          if (strcmp(k->tensors[x].name, e->names[j]) == 0)
            t = x;
        if (t < 0 || t >= LG_MAX_TENSORS)
          diag_error(diag, e->locs[j], "unknown tensor '%s'", e->names[j]);
        if (!packable_operand(k, op, t))
          diag_error(diag, e->locs[j],
                     "'%s' cannot be packed: only inputs read once, through indices that are plain dims, can be",
                     e->names[j]);
        s->pack[t] = true;
      }
    } else if (strcmp(e->key, "vector") == 0) {
      s->vector_dim = strcmp(e->scalar, "none") == 0 ? -1 : view_dim(plan, original, e->scalar, e->loc, diag);
    } else if (strcmp(e->key, "partials") == 0) {
      if (e->values[0] > 1024)
        diag_error(diag, e->loc, "partials must be between 1 and 1024");
      s->partials = e->values[0];
    } else if (strcmp(e->key, "split_reduction") == 0) {
      if (strcmp(e->scalar, "true") != 0 && strcmp(e->scalar, "false") != 0)
        diag_error(diag, e->loc, "split_reduction is true or false, not '%s'", e->scalar);
      s->split_reduction = strcmp(e->scalar, "true") == 0;
    } else if (strcmp(e->key, "library_call") == 0) {
      s->library_call = e->scalar;
    }
  }
  for (int d = 0; d < op->ndims; d++)
    if (s->parallel[d] && op->dims[d].kind == ITER_REDUCTION && !s->split_reduction)
      diag_error(diag, spec->loc,
                 "'%s' is a reduction: parallelising it needs 'split_reduction: true' (per-thread partials)",
                 op->dims[d].name);
}
