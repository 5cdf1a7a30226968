/* build_ext.c - shape inference for the non-structured graph ops (class EXT
 * in graph_ops.def: gather_elements, gather_nd, argmax, argmin, topk, sort,
 * scan, scatter, scatter_elements, diag, pack, unpack, fft, dft, im2col,
 * the Winograd transforms, attention and rnn). The meaning of each is in ops.md.
 *
 * Like build.c's rules, each checks its inputs and attributes (one located
 * error at the offending attribute, or at the node), fills in defaults and
 * normalises axes in place, so that lower_ext.c reads plain values. */
#include <math.h>
#include <string.h>

#include "graph/graph.h"

typedef struct {
  Graph *g;
  GraphNode *n;
  const char *desc;
  GraphShape *outs;
} Ext;

static const GraphValue *in(const Ext *x, int i) { return GRAPH_VALUE(x->g, x->n->inputs[i]); }

static const char *attr_path(const Ext *x, const char *name) {
  const GraphAttr *a = graph_attr(x->g, x->n, name);
  return a && a->path ? a->path : x->n->path;
}

/* Sets (or replaces) an attribute of the node. */
static void put(Ext *x, GraphAttr a) {
  GraphNode *n = x->n;
  for (int i = 0; i < n->nattrs; i++)
    if (strcmp(n->attrs[i].name, a.name) == 0) {
      a.path = n->attrs[i].path;
      n->attrs[i] = a;
      return;
    }
  GraphAttr *attrs = arena_alloc(x->g->arena, sizeof *attrs * (size_t)(n->nattrs + 1));
  if (n->nattrs)
    memcpy(attrs, n->attrs, sizeof *attrs * (size_t)n->nattrs);
  attrs[n->nattrs++] = a;
  n->attrs = attrs;
}

static int64_t get_int(Ext *x, const char *name, int64_t dflt) {
  int64_t v = graph_attr_int(x->g, x->n, name, dflt);
  put(x, (GraphAttr){.name = name, .kind = GA_INT, .i = v});
  return v;
}

static bool get_bool(Ext *x, const char *name, bool dflt) {
  int64_t v = get_int(x, name, dflt);
  if (v != 0 && v != 1)
    graph_error(x->g, attr_path(x, name), "%s'%s' must be 0 or 1, not %lld", x->desc, name, (long long)v);
  return v != 0;
}

/* An axis attribute in [-rank, rank), stored non-negative. */
static int get_axis(Ext *x, const char *name, int64_t dflt, int rank) {
  int64_t v = graph_attr_int(x->g, x->n, name, dflt);
  if (v < -rank || v >= rank)
    graph_error(x->g, attr_path(x, name), "%saxis %lld is out of range for rank %d", x->desc, (long long)v, rank);
  if (v < 0)
    v += rank;
  put(x, (GraphAttr){.name = name, .kind = GA_INT, .i = v});
  return (int)v;
}

/* A string attribute that must be one of `allowed` (NULL-terminated). */
static const char *get_choice(Ext *x, const char *name, const char *dflt, const char *const *allowed) {
  const char *s = graph_attr_string(x->g, x->n, name, dflt);
  for (int i = 0; allowed[i]; i++)
    if (strcmp(s, allowed[i]) == 0) {
      put(x, (GraphAttr){.name = name, .kind = GA_STRING, .s = allowed[i]});
      return allowed[i];
    }
  StrBuf sb = {0};
  for (int i = 0; allowed[i]; i++)
    sb_printf(&sb, "%s%s", i ? ", " : "", allowed[i]);
  const char *list = arena_strdup(x->g->arena, sb_cstr(&sb));
  sb_free(&sb);
  graph_error(x->g, attr_path(x, name), "%s'%s' must be one of %s, not '%s'", x->desc, name, list, s);
}

/* The index_type attribute: i32 only where every index of axis `axis` of
 * input 0 fits (a static length up to 2^31; a symbolic one is the
 * caller's to keep there). */
static ElemType get_index_type(Ext *x, const char *dflt, int axis) {
  static const char *const types[] = {"i32", "i64", NULL};
  const char *s = get_choice(x, "index_type", dflt, types);
  int64_t len;
  if (strcmp(s, "i32") != 0)
    return TY_I64;
  if (graph_dim_value(in(x, 0)->shape[axis], &len) && len - 1 > INT32_MAX)
    graph_error(x->g, attr_path(x, "index_type"), "%sindices up to %lld do not fit index_type i32", x->desc,
                (long long)(len - 1));
  return TY_I32;
}

static void want_indices(const Ext *x, int i) {
  const GraphValue *v = in(x, i);
  if (v->type != TY_I32 && v->type != TY_I64)
    graph_error(x->g, x->n->path, "%sthe indices '%s' must be i32 or i64, not %s", x->desc, v->name,
                elem_type_name(v->type));
}

/* Comparisons and arithmetic on f16 storage would be wrong where the
 * compiler has no _Float16, and i1 has no order worth sorting by. */
static void want_ordered(const Ext *x, int i) {
  const GraphValue *v = in(x, i);
  if (v->type == TY_F16 || v->type == TY_I1)
    graph_error(x->g, x->n->path, "%s'%s' has element type %s; this op takes f32, f64, i8..i64 or u8..u64", x->desc, v->name,
                elem_type_name(v->type));
}

static void want_rank_at_least(const Ext *x, int i, int rank) {
  const GraphValue *v = in(x, i);
  if (v->rank < rank)
    graph_error(x->g, x->n->path, "%sinput %d ('%s') must have rank %d or more, not %d", x->desc, i, v->name, rank,
                v->rank);
}

static bool static_dim(const AffineExpr *d, int64_t *v) { return graph_dim_value(d, v); }

/* Dims that must agree: equal as polynomials (or both static and equal). */
static void want_same_dim(const Ext *x, const AffineExpr *a, const AffineExpr *b, const char *what) {
  if (!graph_dims_equal(x->g->arena, a, b))
    graph_error(x->g, x->n->path, "%s%s do not match", x->desc, what);
}

static void set_out(Ext *x, int i, ElemType t, int rank, AffineExpr *const *shape) {
  if (rank > LG_MAX_RANK)
    graph_error(x->g, x->n->path, "%sthe result has rank %d (at most %d)", x->desc, rank, LG_MAX_RANK);
  x->outs[i].type = t;
  x->outs[i].rank = rank;
  for (int d = 0; d < rank; d++)
    x->outs[i].shape[d] = shape[d];
}

/* ---- the ops ---- */

/* Indices that address data element-wise off the axis (gather_elements,
 * scatter_elements): each of their dims but the axis at most the data's
 * (the same dim, when symbolic); `data_is` names the data in errors. */
static void want_indices_within(Ext *x, const GraphValue *ix, const GraphValue *data, int axis,
                                const char *data_is) {
  for (int d = 0; d < data->rank; d++) {
    int64_t a, b;
    if (d == axis)
      continue;
    if (static_dim(ix->shape[d], &a) && static_dim(data->shape[d], &b)) {
      if (a > b)
        graph_error(x->g, x->n->path, "%sthe indices' dim %d (%lld) exceeds the %s's (%lld)", x->desc, d,
                    (long long)a, data_is, (long long)b);
    } else {
      const char *what = arena_printf(x->g->arena, "the indices' and the %s's dims off the axis", data_is);
      want_same_dim(x, ix->shape[d], data->shape[d], what);
    }
  }
}

static int infer_gather_elements(Ext *x) {
  const GraphValue *data = in(x, 0), *ix = in(x, 1);
  want_indices(x, 1);
  want_rank_at_least(x, 0, 1);
  if (ix->rank != data->rank)
    graph_error(x->g, x->n->path, "%sthe indices '%s' must have the data's rank %d, not %d", x->desc, ix->name,
                data->rank, ix->rank);
  want_indices_within(x, ix, data, get_axis(x, "axis", 0, data->rank), "data");
  set_out(x, 0, data->type, ix->rank, ix->shape);
  return 1;
}

static int infer_gather_nd(Ext *x) {
  const GraphValue *data = in(x, 0), *ix = in(x, 1);
  want_indices(x, 1);
  want_rank_at_least(x, 0, 1);
  want_rank_at_least(x, 1, 1);
  int64_t b = get_int(x, "batch_dims", 0);
  if (b < 0 || b >= ix->rank || b >= data->rank)
    graph_error(x->g, attr_path(x, "batch_dims"), "%sbatch_dims %lld must be in [0, %d)", x->desc, (long long)b,
                ix->rank < data->rank ? ix->rank : data->rank);
  int64_t m;
  if (!static_dim(ix->shape[ix->rank - 1], &m))
    graph_error(x->g, x->n->path, "%sthe last dim of the indices '%s' must be a number", x->desc, ix->name);
  if (m < 1 || m > data->rank - b)
    graph_error(x->g, x->n->path, "%sthe indices' last dim (%lld) must be in [1, %lld] (the data's rank %d less "
                "batch_dims)", x->desc, (long long)m, (long long)(data->rank - b), data->rank);
  for (int d = 0; d < b; d++)
    want_same_dim(x, ix->shape[d], data->shape[d], "the batch dims of the indices and the data");
  AffineExpr *shape[2 * LG_MAX_RANK];
  int r = 0;
  for (int d = 0; d < ix->rank - 1; d++)
    shape[r++] = ix->shape[d];
  for (int d = (int)(b + m); d < data->rank; d++)
    shape[r++] = data->shape[d];
  set_out(x, 0, data->type, r, shape);
  return 1;
}

static int infer_arg(Ext *x) {
  const GraphValue *v = in(x, 0);
  want_ordered(x, 0);
  want_rank_at_least(x, 0, 1);
  int axis = get_axis(x, "axis", 0, v->rank);
  bool keep = get_bool(x, "keepdims", true);
  get_bool(x, "select_last_index", false);
  ElemType it = get_index_type(x, "i64", axis);
  int64_t len;
  if (static_dim(v->shape[axis], &len) && len == 0)
    graph_error(x->g, x->n->path, "%sthe axis %d of '%s' is empty: there is no extremum", x->desc, axis, v->name);
  AffineExpr *shape[LG_MAX_RANK];
  int r = 0;
  for (int d = 0; d < v->rank; d++)
    if (d != axis)
      shape[r++] = v->shape[d];
    else if (keep)
      shape[r++] = graph_dim_const(x->g, 1);
  set_out(x, 0, it, r, shape);
  return 1;
}

/* sort's and topk's optional comparator (IREE's comparator region): a
 * payload expression over lhs and rhs of input 0's type, true when lhs goes
 * strictly before rhs (ir/expr.c); a sort of several operands also names
 * operand k's pair lhsK and rhsK, of its type (lhs and rhs are operand
 * 0's). The attribute `flag` (descending = 1, largest = 0: flag_is_set)
 * then says nothing and is an error. */
static void get_comparator(Ext *x, const char *flag, bool flag_is_set, int noperands) {
  if (!graph_attr(x->g, x->n, "comparator"))
    return;
  const char *names[2 + 2 * LG_SORT_MAX_OPERANDS] = {"lhs", "rhs"};
  ElemType types[2 + 2 * LG_SORT_MAX_OPERANDS] = {in(x, 0)->type, in(x, 0)->type};
  int nnames = 2;
  for (int k = 0; noperands > 1 && k < noperands; k++) {
    names[nnames] = arena_printf(x->g->arena, "lhs%d", k);
    types[nnames++] = in(x, k)->type;
    names[nnames] = arena_printf(x->g->arena, "rhs%d", k);
    types[nnames++] = in(x, k)->type;
  }
  const char *text = graph_attr_string(x->g, x->n, "comparator", "");
  PayloadNode *nodes;
  int count;
  const char *err = payload_expr_parse_typed(x->g->arena, text, types, names, nnames, TY_I1, &nodes, &count);
  if (err)
    graph_error(x->g, attr_path(x, "comparator"), "%sthe comparator '%s': %s", x->desc, text, err);
  if (flag_is_set)
    graph_error(x->g, attr_path(x, flag), "%s'%s' and a comparator: the comparator alone says the order", x->desc,
                flag);
}

static int infer_topk(Ext *x) {
  const GraphValue *v = in(x, 0);
  want_ordered(x, 0);
  want_rank_at_least(x, 0, 1);
  if (!graph_attr(x->g, x->n, "k"))
    graph_error(x->g, x->n->path, "%sattribute 'k' is missing", x->desc);
  int64_t k = get_int(x, "k", 0);
  int axis = get_axis(x, "axis", -1, v->rank);
  bool largest = get_bool(x, "largest", true);
  get_comparator(x, "largest", !largest, 1);
  get_bool(x, "sorted", true);
  ElemType it;
  if (x->n->ninputs == 2) { /* IREE's input indices: the output indices are theirs, of their type */
    const GraphValue *ix = in(x, 1);
    want_indices(x, 1);
    if (ix->rank != v->rank)
      graph_error(x->g, x->n->path, "%sthe indices '%s' must have the rank %d of '%s', not %d", x->desc, ix->name,
                  v->rank, v->name, ix->rank);
    for (int d = 0; d < v->rank; d++)
      want_same_dim(x, ix->shape[d], v->shape[d], "the shapes of the values and the indices input");
    it = ix->type;
    if (graph_attr(x->g, x->n, "index_type")) {
      static const char *const types[] = {"i32", "i64", NULL};
      const char *s = get_choice(x, "index_type", "i32", types);
      if (strcmp(s, elem_type_name(it)) != 0)
        graph_error(x->g, attr_path(x, "index_type"), "%sindex_type %s differs from the type %s of the indices "
                    "input '%s', whose elements the output indices are", x->desc, s, elem_type_name(it), ix->name);
    }
    put(x, (GraphAttr){.name = "index_type", .kind = GA_STRING, .s = elem_type_name(it)});
  } else {
    it = get_index_type(x, "i32", axis);
  }
  int64_t len;
  if (k < 0)
    graph_error(x->g, attr_path(x, "k"), "%sk must not be negative (%lld)", x->desc, (long long)k);
  if (!static_dim(v->shape[axis], &len))
    graph_error(x->g, x->n->path, "%sthe axis %d of '%s' must have a static length (k is checked against it)%s",
                x->desc, axis, v->name, graph_dims_hint(x->g, 1, &v->shape[axis]));
  if (k > len)
    graph_error(x->g, attr_path(x, "k"), "%sk = %lld exceeds the length %lld of axis %d", x->desc, (long long)k,
                (long long)len, axis);
  AffineExpr *shape[LG_MAX_RANK];
  for (int d = 0; d < v->rank; d++)
    shape[d] = d == axis ? graph_dim_const(x->g, k) : v->shape[d];
  set_out(x, 0, v->type, v->rank, shape);
  set_out(x, 1, it, v->rank, shape);
  return 2;
}

/* sort: IREE's operands (several, of one shape, sorted together: the
 * first is the key unless a comparator says otherwise), an output each. */
static int infer_sort(Ext *x) {
  const GraphValue *v = in(x, 0);
  int nops = x->n->ninputs;
  for (int k = 0; k < nops; k++) {
    const GraphValue *o = in(x, k);
    want_ordered(x, k);
    if (o->rank != v->rank)
      graph_error(x->g, x->n->path, "%soperand %d ('%s') must have the rank %d of '%s', not %d", x->desc, k,
                  o->name, v->rank, v->name, o->rank);
    for (int d = 0; d < v->rank; d++)
      want_same_dim(x, o->shape[d], v->shape[d], "the shapes of the sorted operands");
  }
  want_rank_at_least(x, 0, 1);
  get_axis(x, "axis", -1, v->rank);
  get_comparator(x, "descending", get_bool(x, "descending", false), nops);
  for (int k = 0; k < nops; k++)
    set_out(x, k, in(x, k)->type, v->rank, v->shape);
  return nops;
}

static const char *const combiners[] = {"add", "mul", "max", "min", NULL};
static const char *const scatter_combiners[] = {"replace", "add", "mul", "max", "min", NULL};

/* scan: x [, init] -> y [, accumulator]. IREE's accumulator operand: as an
 * input (its initial value, x's shape without the axis) every row's
 * combination starts from it; as a second output it gets each row's last
 * value written. */
static int infer_scan(Ext *x) {
  const GraphValue *v = in(x, 0);
  want_ordered(x, 0);
  want_rank_at_least(x, 0, 1);
  int axis = get_axis(x, "axis", 0, v->rank);
  bool inclusive = get_bool(x, "inclusive", true), has_init = x->n->ninputs == 2;
  get_bool(x, "reverse", false);
  AffineExpr *shape[LG_MAX_RANK]; /* x's without the axis: the accumulator's */
  int r = 0;
  for (int d = 0; d < v->rank; d++)
    if (d != axis)
      shape[r++] = v->shape[d];
  if (has_init) {
    const GraphValue *init = in(x, 1);
    if (init->type != v->type)
      graph_error(x->g, x->n->path, "%sthe accumulator input '%s' is %s, not %s as '%s'", x->desc, init->name,
                  elem_type_name(init->type), elem_type_name(v->type), v->name);
    if (init->rank != r)
      graph_error(x->g, x->n->path, "%sthe accumulator input '%s' must have rank %d (the shape of '%s' without axis "
                  "%d), not %d", x->desc, init->name, r, v->name, axis, init->rank);
    for (int d = 0; d < r; d++)
      want_same_dim(x, init->shape[d], shape[d], "the accumulator input's dims and x's off the axis");
  }
  const char *comb = graph_attr_string(x->g, x->n, "combiner", "add");
  if (strchr(comb, '(')) { /* a payload expression over acc and x (ir/expr.c) */
    static const char *const names[] = {"acc", "x"};
    PayloadNode *nodes;
    int count;
    const char *err = payload_expr_parse(x->g->arena, comb, v->type, names, 2, v->type, &nodes, &count);
    if (err)
      graph_error(x->g, attr_path(x, "combiner"), "%sthe combiner '%s': %s", x->desc, comb, err);
    if (!inclusive && !has_init)
      graph_error(x->g, attr_path(x, "inclusive"), "%san exclusive scan needs its combiner's identity, which a "
                  "payload combiner does not give: it must be inclusive, or have an accumulator input (the "
                  "initial value)", x->desc);
  } else {
    get_choice(x, "combiner", "add", combiners);
  }
  set_out(x, 0, v->type, v->rank, v->shape);
  if (x->n->listed_outputs != 2)
    return 1;
  set_out(x, 1, v->type, r, shape); /* the last value the scan wrote in each row */
  return 2;
}

static void want_same_type(const Ext *x, int i, int j) {
  if (in(x, i)->type != in(x, j)->type)
    graph_error(x->g, x->n->path, "%s'%s' is %s but '%s' is %s", x->desc, in(x, i)->name,
                elem_type_name(in(x, i)->type), in(x, j)->name, elem_type_name(in(x, j)->type));
}

static void scatter_common(Ext *x) {
  want_indices(x, 1);
  want_same_type(x, 0, 2);
  want_rank_at_least(x, 0, 1);
  const char *c = get_choice(x, "combiner", "replace", scatter_combiners);
  if (strcmp(c, "replace") != 0)
    want_ordered(x, 0);
}

static int infer_scatter(Ext *x) {
  const GraphValue *orig = in(x, 0), *ix = in(x, 1), *upd = in(x, 2);
  scatter_common(x);
  get_bool(x, "unique_indices", false);
  want_rank_at_least(x, 1, 1);
  int64_t m;
  if (!static_dim(ix->shape[ix->rank - 1], &m))
    graph_error(x->g, x->n->path, "%sthe last dim of the indices '%s' must be a number", x->desc, ix->name);
  if (m < 1 || m > orig->rank)
    graph_error(x->g, x->n->path, "%sthe indices' last dim (%lld) must be in [1, %d] (the original's rank)", x->desc,
                (long long)m, orig->rank);
  const GraphAttr *dm = graph_attr(x->g, x->n, "dimension_map");
  int64_t map[LG_MAX_RANK];
  bool mapped[LG_MAX_RANK] = {false};
  if (dm && dm->kind != GA_INTS && dm->kind != GA_INT)
    graph_error(x->g, attr_path(x, "dimension_map"), "%s'dimension_map' must be a list of ints", x->desc);
  int count = dm ? (dm->kind == GA_INT ? 1 : dm->n) : (int)m;
  if (count != m)
    graph_error(x->g, attr_path(x, "dimension_map"), "%s'dimension_map' has %d entries; the indices' last dim is "
                "%lld", x->desc, count, (long long)m);
  for (int j = 0; j < count; j++) {
    int64_t d = dm ? (dm->kind == GA_INT ? dm->i : dm->ints[j]) : j;
    if (d < 0 || d >= orig->rank || mapped[d])
      graph_error(x->g, attr_path(x, "dimension_map"), "%s'dimension_map' entry %lld is out of range or repeated",
                  x->desc, (long long)d);
    mapped[d] = true;
    map[j] = d;
  }
  GraphAttr a = {.name = "dimension_map", .kind = GA_INTS, .n = count};
  a.ints = arena_alloc(x->g->arena, sizeof *a.ints * (size_t)count);
  memcpy(a.ints, map, sizeof *a.ints * (size_t)count);
  put(x, a);
  /* updates: the indices' batch dims, then the original's unmapped dims */
  AffineExpr *want[2 * LG_MAX_RANK];
  int r = 0;
  for (int d = 0; d < ix->rank - 1; d++)
    want[r++] = ix->shape[d];
  for (int d = 0; d < orig->rank; d++)
    if (!mapped[d])
      want[r++] = orig->shape[d];
  if (upd->rank != r)
    graph_error(x->g, x->n->path, "%sthe updates '%s' must have rank %d (the indices' batch dims, then the "
                "original's dims that dimension_map leaves out), not %d", x->desc, upd->name, r, upd->rank);
  for (int d = 0; d < r; d++)
    want_same_dim(x, upd->shape[d], want[d], "the updates' shape and the indices' batch dims and slice dims");
  set_out(x, 0, orig->type, orig->rank, orig->shape);
  return 1;
}

static int infer_scatter_elements(Ext *x) {
  const GraphValue *orig = in(x, 0), *ix = in(x, 1), *upd = in(x, 2);
  scatter_common(x);
  int axis = get_axis(x, "axis", 0, orig->rank);
  if (ix->rank != orig->rank || upd->rank != orig->rank)
    graph_error(x->g, x->n->path, "%sthe indices and the updates must have the original's rank %d", x->desc,
                orig->rank);
  for (int d = 0; d < orig->rank; d++)
    want_same_dim(x, ix->shape[d], upd->shape[d], "the shapes of the indices and the updates");
  want_indices_within(x, ix, orig, axis, "original"); /* an update lands at its own position off the axis */
  set_out(x, 0, orig->type, orig->rank, orig->shape);
  return 1;
}

static int infer_diag(Ext *x) {
  const GraphValue *v = in(x, 0);
  if (v->rank != 1)
    graph_error(x->g, x->n->path, "%sinput '%s' must be a vector (rank 1), not rank %d", x->desc, v->name, v->rank);
  AffineExpr *shape[2] = {v->shape[0], v->shape[0]};
  set_out(x, 0, v->type, 2, shape);
  return 1;
}

/* An integer list attribute (a lone int is a list of one); NULL when absent
 * and not required. */
static GraphAttr *get_ints(Ext *x, const char *name, bool required) {
  GraphAttr *a = (GraphAttr *)graph_attr(x->g, x->n, name);
  if (!a) {
    if (required)
      graph_error(x->g, x->n->path, "%sattribute '%s' is missing", x->desc, name);
    return NULL;
  }
  if (a->kind == GA_INT) {
    int64_t *one = arena_alloc(x->g->arena, sizeof *one);
    *one = a->i;
    a->kind = GA_INTS;
    a->ints = one;
    a->n = 1;
  }
  if (a->kind != GA_INTS)
    graph_error(x->g, attr_path(x, name), "%s'%s' must be a list of ints", x->desc, name);
  return a;
}

/* pack / unpack's tiling, checked against the unpacked rank r: tile_of[d]
 * is d's tile (0: not tiled); perm[j] the unpacked dim of outer position j. */
typedef struct {
  int ntiles;
  int64_t tile_of[LG_MAX_RANK];
  int perm[LG_MAX_RANK];
} Tiling;

static Tiling get_tiling(Ext *x, int r) {
  Tiling t = {0};
  GraphAttr *pos = get_ints(x, "inner_dims_pos", true), *tiles = get_ints(x, "inner_tiles", true);
  GraphAttr *perm = get_ints(x, "outer_dims_perm", false);
  if (tiles->n != pos->n)
    graph_error(x->g, attr_path(x, "inner_tiles"), "%s%d inner_tiles for %d inner_dims_pos", x->desc, tiles->n,
                pos->n);
  if (r + pos->n > LG_MAX_RANK)
    graph_error(x->g, x->n->path, "%sthe packed rank %d exceeds %d", x->desc, r + pos->n, LG_MAX_RANK);
  for (int k = 0; k < pos->n; k++) {
    int64_t d = pos->ints[k];
    if (d < -r || d >= r)
      graph_error(x->g, attr_path(x, "inner_dims_pos"), "%sinner_dims_pos %lld is out of range for rank %d", x->desc,
                  (long long)d, r);
    if (d < 0)
      pos->ints[k] = d += r;
    if (t.tile_of[d])
      graph_error(x->g, attr_path(x, "inner_dims_pos"), "%sdim %lld is tiled twice", x->desc, (long long)d);
    if (tiles->ints[k] < 1)
      graph_error(x->g, attr_path(x, "inner_tiles"), "%sinner_tiles must be positive (%lld)", x->desc,
                  (long long)tiles->ints[k]);
    t.tile_of[d] = tiles->ints[k];
  }
  t.ntiles = pos->n;
  bool seen[LG_MAX_RANK] = {false};
  if (perm && perm->n != r)
    graph_error(x->g, attr_path(x, "outer_dims_perm"), "%souter_dims_perm needs %d entries, not %d", x->desc, r,
                perm->n);
  for (int j = 0; j < r; j++) {
    int64_t d = perm ? perm->ints[j] : j;
    if (d < 0 || d >= r || seen[d])
      graph_error(x->g, attr_path(x, "outer_dims_perm"), "%souter_dims_perm is not a permutation of 0..%d", x->desc,
                  r - 1);
    seen[d] = true;
    t.perm[j] = (int)d;
  }
  if (!perm) {
    int64_t id[LG_MAX_RANK];
    for (int j = 0; j < r; j++)
      id[j] = j;
    GraphAttr a = {.name = "outer_dims_perm", .kind = GA_INTS, .n = r};
    a.ints = arena_alloc(x->g->arena, sizeof *a.ints * (size_t)(r + 1));
    memcpy(a.ints, id, sizeof *a.ints * (size_t)r);
    put(x, a);
  }
  return t;
}

/* pack: outer dims (ceil(extent / tile) for tiled dims) in outer_dims_perm
 * order, then the tiles in inner_dims_pos order. A tile that does not divide
 * its dim (or may not: a symbolic dim) needs padding_value. */
static int infer_pack(Ext *x) {
  const GraphValue *v = in(x, 0);
  want_rank_at_least(x, 0, 1);
  Tiling t = get_tiling(x, v->rank);
  const GraphAttr *pos = graph_attr(x->g, x->n, "inner_dims_pos");
  bool padded = false;
  AffineExpr *shape[LG_MAX_RANK];
  for (int j = 0; j < v->rank; j++) {
    int d = t.perm[j];
    int64_t e;
    if (!t.tile_of[d]) {
      shape[j] = v->shape[d];
    } else if (static_dim(v->shape[d], &e)) {
      shape[j] = graph_dim_const(x->g, (e + t.tile_of[d] - 1) / t.tile_of[d]);
      padded |= e % t.tile_of[d] != 0;
    } else {
      shape[j] = affine_binary(x->g->arena, AE_CEILDIV, v->shape[d], graph_dim_const(x->g, t.tile_of[d]));
      padded = true;
    }
  }
  for (int k = 0; k < t.ntiles; k++)
    shape[v->rank + k] = graph_dim_const(x->g, t.tile_of[pos->ints[k]]);
  if (padded && !graph_attr(x->g, x->n, "padding_value"))
    graph_error(x->g, x->n->path, "%sa tile does not divide its dim (or may not: a symbolic dim); give "
                "padding_value", x->desc);
  put(x, (GraphAttr){.name = "padding_value", .kind = GA_FLOAT, .f = graph_attr_float(x->g, x->n, "padding_value", 0)});
  put(x, (GraphAttr){.name = "padded", .kind = GA_INT, .i = padded});
  set_out(x, 0, v->type, v->rank + t.ntiles, shape);
  return 1;
}

/* unpack: the inverse; the unpacked extents are outer * tile unless
 * `shape` (static) cuts the padding off. */
static int infer_unpack(Ext *x) {
  const GraphValue *v = in(x, 0);
  GraphAttr *pos = get_ints(x, "inner_dims_pos", true);
  int r = v->rank - pos->n;
  if (r < 1)
    graph_error(x->g, x->n->path, "%sinput '%s' of rank %d cannot hold %d tiled dims and an outer dim", x->desc,
                v->name, v->rank, pos->n);
  Tiling t = get_tiling(x, r);
  for (int k = 0; k < t.ntiles; k++) {
    int64_t e;
    if (!static_dim(v->shape[r + k], &e) || e != t.tile_of[pos->ints[k]])
      graph_error(x->g, x->n->path, "%sinput dim %d of '%s' must be the tile %lld", x->desc, r + k, v->name,
                  (long long)t.tile_of[pos->ints[k]]);
  }
  GraphAttr *want = get_ints(x, "shape", false);
  if (want && want->n != r)
    graph_error(x->g, attr_path(x, "shape"), "%s'shape' needs %d entries, not %d", x->desc, r, want->n);
  AffineExpr *shape[LG_MAX_RANK];
  for (int j = 0; j < r; j++) {
    int d = t.perm[j];
    AffineExpr *full = t.tile_of[d] ? affine_binary(x->g->arena, AE_MUL, v->shape[j], graph_dim_const(x->g, t.tile_of[d]))
                                    : v->shape[j];
    int64_t outer = 0, f;
    if (static_dim(v->shape[j], &outer))
      full = graph_dim_const(x->g, t.tile_of[d] ? outer * t.tile_of[d] : outer);
    shape[d] = full;
    if (!want)
      continue;
    int64_t e = want->ints[d];
    if (!static_dim(full, &f) || e < 1 || e > f || (t.tile_of[d] && e <= f - t.tile_of[d]) || (!t.tile_of[d] && e != f))
      graph_error(x->g, attr_path(x, "shape"), "%sshape[%d] = %lld does not fit the packed dims", x->desc, d,
                  (long long)e);
    shape[d] = graph_dim_const(x->g, e);
  }
  set_out(x, 0, v->type, r, shape);
  return 1;
}

/* ---- fft, dft, im2col, Winograd ---- */

static void want_float(const Ext *x, int i) {
  const GraphValue *v = in(x, i);
  if (v->type != TY_F32 && v->type != TY_F64)
    graph_error(x->g, x->n->path, "%s'%s' has element type %s; this op takes f32 or f64", x->desc, v->name,
                elem_type_name(v->type));
}

static int64_t want_static(const Ext *x, const AffineExpr *d, const char *what) {
  int64_t v;
  if (!static_dim(d, &v))
    graph_error(x->g, x->n->path, "%s%s must be a number, not a symbolic dim%s", x->desc, what,
                graph_dims_hint(x->g, 1, (AffineExpr *const *)&d));
  return v;
}

/* fft: real and imaginary parts, same shape, transformed along the last dim. */
static int infer_fft(Ext *x) {
  const GraphValue *re = in(x, 0), *im = in(x, 1);
  want_float(x, 0);
  want_same_type(x, 0, 1);
  want_rank_at_least(x, 0, 1);
  if (re->rank != im->rank)
    graph_error(x->g, x->n->path, "%sthe real part has rank %d but the imaginary part rank %d", x->desc, re->rank,
                im->rank);
  for (int d = 0; d < re->rank; d++)
    want_same_dim(x, re->shape[d], im->shape[d], "the shapes of the real and the imaginary part");
  get_bool(x, "inverse", false);
  set_out(x, 0, re->type, re->rank, re->shape);
  set_out(x, 1, re->type, re->rank, re->shape);
  return 2;
}

/* dft: ONNX DFT's layout, [..., n, ..., c] with c = 1 (real) or 2 (complex)
 * last; the axis gets `length` points (onesided: length / 2 + 1 of them;
 * inverse onesided: a real signal of `length` points from a half spectrum). */
static int infer_dft(Ext *x) {
  const GraphValue *v = in(x, 0);
  want_float(x, 0);
  want_rank_at_least(x, 0, 2);
  int64_t c = want_static(x, v->shape[v->rank - 1], "the last dim (1: real, 2: complex)");
  if (c != 1 && c != 2)
    graph_error(x->g, x->n->path, "%sthe last dim of '%s' must be 1 (real) or 2 (complex), not %lld", x->desc,
                v->name, (long long)c);
  int axis = get_axis(x, "axis", -2, v->rank);
  if (axis == v->rank - 1)
    graph_error(x->g, attr_path(x, "axis"), "%sthe axis must not be the last dim (it holds the real and "
                "imaginary parts)", x->desc);
  bool inverse = get_bool(x, "inverse", false), onesided = get_bool(x, "onesided", false);
  int64_t n = want_static(x, v->shape[axis], "the transformed axis");
  int64_t dflt = inverse && onesided ? 2 * (n - 1) : n;
  int64_t len = get_int(x, "length", dflt);
  if (len < 1)
    graph_error(x->g, attr_path(x, "length"), "%sthe DFT length must be positive (%lld)", x->desc, (long long)len);
  if (inverse && onesided && c != 2)
    graph_error(x->g, x->n->path, "%san inverse onesided DFT takes a complex half spectrum (last dim 2)", x->desc);
  AffineExpr *shape[LG_MAX_RANK];
  for (int d = 0; d < v->rank; d++)
    shape[d] = v->shape[d];
  shape[axis] = graph_dim_const(x->g, onesided && !inverse ? len / 2 + 1 : len);
  shape[v->rank - 1] = graph_dim_const(x->g, inverse && onesided ? 1 : 2);
  set_out(x, 0, v->type, v->rank, shape);
  return 1;
}

/* A list of `count` positive ints, `dflt` each when absent. */
static const int64_t *get_pair(Ext *x, const char *name, int64_t dflt, bool required) {
  GraphAttr *a = get_ints(x, name, required);
  if (!a) {
    int64_t *v = arena_alloc(x->g->arena, sizeof *v * 2);
    v[0] = v[1] = dflt;
    put(x, (GraphAttr){.name = name, .kind = GA_INTS, .n = 2, .ints = v});
    return v;
  }
  if (a->n != 2)
    graph_error(x->g, attr_path(x, name), "%s'%s' needs 2 values (height, width), not %d", x->desc, name, a->n);
  for (int i = 0; i < 2; i++)
    if (a->ints[i] < 1)
      graph_error(x->g, attr_path(x, name), "%s'%s' must be positive (%lld)", x->desc, name, (long long)a->ints[i]);
  return a->ints;
}

/* padding: [[top, bottom], [left, right]] (or flat); stored as 4 ints. */
static const int64_t *get_padding(Ext *x) {
  GraphAttr *a = (GraphAttr *)graph_attr(x->g, x->n, "padding");
  int64_t *p = arena_alloc(x->g->arena, sizeof *p * 4);
  if (a) {
    int count = a->kind == GA_INTS2 ? 2 * a->n : a->kind == GA_INTS ? a->n : -1;
    if (count != 4)
      graph_error(x->g, attr_path(x, "padding"), "%s'padding' needs [[top, bottom], [left, right]]", x->desc);
    for (int i = 0; i < 4; i++) {
      p[i] = a->ints[i];
      if (p[i] < 0)
        graph_error(x->g, attr_path(x, "padding"), "%spadding must not be negative (%lld)", x->desc,
                    (long long)p[i]);
    }
  }
  put(x, (GraphAttr){.name = "padding", .kind = GA_INTS, .n = 4, .ints = p});
  return p;
}

static void want_rank(const Ext *x, int i, int rank) {
  const GraphValue *v = in(x, i);
  if (v->rank != rank)
    graph_error(x->g, x->n->path, "%sinput %d ('%s') must have rank %d, not %d", x->desc, i, v->name, rank, v->rank);
}

/* Output extent of a padded, strided, dilated window; must be >= 0. */
static int64_t out_extent(const Ext *x, int64_t in, int64_t lo, int64_t hi, int64_t k, int64_t s, int64_t d) {
  int64_t span = (k - 1) * d + 1, e = in + lo + hi - span;
  if (e < 0)
    graph_error(x->g, x->n->path, "%sthe window (%lld) is larger than the padded input (%lld)", x->desc,
                (long long)span, (long long)(in + lo + hi));
  return e / s + 1;
}

/* IREE's batch_pos, m_pos and k_pos: which input dims are the batch, the
 * image (rows, columns) and the channels. Two layouts: NHWC ([0], [1, 2],
 * [3], the default) and NCHW ([0], [2, 3], [1]); stored as "nchw" (0 or 1).
 * Any other assignment is an error at the first attribute that differs. */
static bool get_im2col_layout(Ext *x) {
  static const char *const names[3] = {"batch_pos", "m_pos", "k_pos"};
  static const int64_t nhwc[3][2] = {{0}, {1, 2}, {3}}, nchw[3][2] = {{0}, {2, 3}, {1}};
  static const int counts[3] = {1, 2, 1};
  GraphAttr *a[3];
  bool is_nhwc = true, is_nchw = true, given = false;
  for (int i = 0; i < 3; i++) {
    a[i] = get_ints(x, names[i], false);
    given |= a[i] != NULL;
  }
  if (!given) {
    put(x, (GraphAttr){.name = "nchw", .kind = GA_INT, .i = 0});
    return false;
  }
  for (int i = 0; i < 3; i++) {
    const int64_t *v = a[i] ? a[i]->ints : nhwc[i];
    int n = a[i] ? a[i]->n : counts[i];
    bool h = n == counts[i], c = n == counts[i];
    for (int j = 0; j < n && (h || c); j++) {
      h &= v[j] == nhwc[i][j];
      c &= v[j] == nchw[i][j];
    }
    if (!a[i]) /* an absent list takes the other lists' layout */
      continue;
    if ((is_nhwc && h) || (is_nchw && c)) {
      is_nhwc &= h;
      is_nchw &= c;
      continue;
    }
    graph_error(x->g, attr_path(x, names[i]), "%sbatch_pos, m_pos and k_pos must be NHWC's ([0], [1, 2], [3]) or "
                "NCHW's ([0], [2, 3], [1]); '%s' fits neither with the others", x->desc, names[i]);
  }
  bool nchw_layout = !is_nhwc;
  for (int i = 0; i < 3; i++) { /* store all three, filled in */
    GraphAttr s = {.name = names[i], .kind = GA_INTS, .n = counts[i]};
    s.ints = arena_alloc(x->g->arena, sizeof *s.ints * 2);
    memcpy(s.ints, nchw_layout ? nchw[i] : nhwc[i], sizeof *s.ints * 2);
    put(x, s);
  }
  put(x, (GraphAttr){.name = "nchw", .kind = GA_INT, .i = nchw_layout});
  return nchw_layout;
}

/* An offset or size of the im2col matrix's tile: one int (a list of one,
 * IREE's flat form), in [lo, hi]; `dflt` when absent. */
static int64_t get_tile_int(Ext *x, const char *name, int64_t dflt, int64_t lo, int64_t hi, const char *what) {
  GraphAttr *a = get_ints(x, name, false);
  int64_t v = dflt;
  if (a) {
    if (a->n != 1)
      graph_error(x->g, attr_path(x, name), "%s'%s' needs one value (a flat offset or size into the matrix), not %d", x->desc,
                  name, a->n);
    v = a->ints[0];
  }
  if (v < lo || v > hi)
    graph_error(x->g, attr_path(x, name), "%s'%s' = %lld is outside [%lld, %lld] (the %s)", x->desc, name,
                (long long)v, (long long)lo, (long long)hi, what);
  put(x, (GraphAttr){.name = name, .kind = GA_INT, .i = v});
  return v;
}

/* im2col: NHWC [N, H, W, C] -> [N, OH * OW, KH * KW * C], column order
 * (kh, kw, c) to match an HWCF filter reshaped to [KH * KW * C, F]; NCHW
 * [N, C, H, W] (batch_pos [0], m_pos [2, 3], k_pos [1]) -> [N, OH * OW,
 * C * KH * KW], column order (c, kh, kw) to match FCHW as [F, C * KH * KW].
 * m_offset, k_offset, m_size and k_size cut a tile of that matrix (IREE's
 * offsets; its output's shape gives the sizes, here the attributes,
 * defaulting to the rest of the matrix). */
static int infer_im2col(Ext *x) {
  const GraphValue *v = in(x, 0);
  want_rank(x, 0, 4);
  want_ordered(x, 0);
  const int64_t *k = get_pair(x, "kernel", 1, true), *s = get_pair(x, "strides", 1, false);
  const int64_t *d = get_pair(x, "dilations", 1, false), *p = get_padding(x);
  bool nchw = get_im2col_layout(x);
  int hd = nchw ? 2 : 1, cd = nchw ? 1 : 3;
  int64_t h = want_static(x, v->shape[hd], "the height"), w = want_static(x, v->shape[hd + 1], "the width");
  int64_t c = want_static(x, v->shape[cd], "the channels");
  int64_t oh = out_extent(x, h, p[0], p[1], k[0], s[0], d[0]), ow = out_extent(x, w, p[2], p[3], k[1], s[1], d[1]);
  int64_t mt = oh * ow, kt = k[0] * k[1] * c;
  int64_t m0 = get_tile_int(x, "m_offset", 0, 0, mt - 1, "output points");
  int64_t k0 = get_tile_int(x, "k_offset", 0, 0, kt - 1, "columns");
  int64_t ms = get_tile_int(x, "m_size", mt - m0, 1, mt - m0, "rows left after m_offset");
  int64_t ks = get_tile_int(x, "k_size", kt - k0, 1, kt - k0, "columns left after k_offset");
  AffineExpr *shape[3] = {v->shape[0], graph_dim_const(x->g, ms), graph_dim_const(x->g, ks)};
  set_out(x, 0, v->type, 3, shape);
  return 1;
}

/* Winograd F(m x m, 3x3), m the output_tile_size (IREE's name): 2 (the
 * default: 4x4 input tiles at stride 2) or 6 (IREE's: 8x8 input tiles at
 * stride 6); any other is an error at the attribute. */
static int64_t get_output_tile(Ext *x) {
  int64_t m = get_int(x, "output_tile_size", 2);
  if (m != 2 && m != 6)
    graph_error(x->g, attr_path(x, "output_tile_size"), "%s'output_tile_size' must be 2 (F(2x2, 3x3)) or 6 "
                "(F(6x6, 3x3)), not %lld", x->desc, (long long)m);
  return m;
}

static int infer_winograd_filter(Ext *x) {
  const GraphValue *v = in(x, 0);
  want_float(x, 0);
  want_rank(x, 0, 4);
  int64_t n = get_output_tile(x) + 2;
  if (want_static(x, v->shape[0], "the filter height") != 3 || want_static(x, v->shape[1], "the filter width") != 3)
    graph_error(x->g, x->n->path, "%sthe filter '%s' must be HWCF with a 3x3 window", x->desc, v->name);
  AffineExpr *shape[4] = {graph_dim_const(x->g, n), graph_dim_const(x->g, n), v->shape[2], v->shape[3]};
  set_out(x, 0, v->type, 4, shape);
  return 1;
}

static int infer_winograd_input(Ext *x) {
  const GraphValue *v = in(x, 0);
  want_float(x, 0);
  want_rank(x, 0, 4);
  int64_t m = get_output_tile(x);
  const int64_t *p = get_padding(x);
  int64_t h = want_static(x, v->shape[1], "the height"), w = want_static(x, v->shape[2], "the width");
  int64_t oh = out_extent(x, h, p[0], p[1], 3, 1, 1), ow = out_extent(x, w, p[2], p[3], 3, 1, 1);
  /* the batch may be symbolic: the tiles are then N * TH * TW */
  AffineExpr *tiles = graph_dim_arith(x->g, AE_MUL, v->shape[0], graph_dim_const(x->g, ((oh + m - 1) / m) *
                                                                                    ((ow + m - 1) / m)));
  AffineExpr *shape[4] = {graph_dim_const(x->g, m + 2), graph_dim_const(x->g, m + 2), tiles, v->shape[3]};
  set_out(x, 0, v->type, 4, shape);
  return 1;
}

/* The output's [N, OH, OW] are given (`shape`): the tiles alone do not tell
 * an extent from the others that round up to the same tile count. With a
 * symbolic batch `shape` is [OH, OW], and N is the tile count over TH * TW. */
static int infer_winograd_output(Ext *x) {
  const GraphValue *v = in(x, 0);
  want_float(x, 0);
  want_rank(x, 0, 4);
  int64_t m = get_output_tile(x);
  GraphAttr *a = get_ints(x, "shape", true);
  if (a->n != 3 && a->n != 2)
    graph_error(x->g, attr_path(x, "shape"), "%s'shape' needs [N, OH, OW] or [OH, OW], not %d values", x->desc,
                a->n);
  for (int i = 0; i < a->n; i++)
    if (a->ints[i] < 1)
      graph_error(x->g, attr_path(x, "shape"), "%s'shape' must be positive (%lld)", x->desc, (long long)a->ints[i]);
  const int64_t *hw = a->ints + a->n - 2;
  AffineExpr *per_image = graph_dim_const(x->g, ((hw[0] + m - 1) / m) * ((hw[1] + m - 1) / m));
  AffineExpr *batch = a->n == 3 ? graph_dim_const(x->g, a->ints[0])
                                : graph_dim_arith(x->g, AE_FLOORDIV, v->shape[2], per_image);
  if (want_static(x, v->shape[0], "dim 0") != m + 2 || want_static(x, v->shape[1], "dim 1") != m + 2 ||
      !graph_dims_equal(x->g->arena, v->shape[2], graph_dim_arith(x->g, AE_MUL, batch, per_image)))
    graph_error(x->g, x->n->path, "%sinput '%s' must be [%lld, %lld, %s, F] for an output of [%s, %lld, %lld, F]",
                x->desc, v->name, (long long)(m + 2), (long long)(m + 2),
                graph_dim_str(x->g, graph_dim_arith(x->g, AE_MUL, batch, per_image)), graph_dim_str(x->g, batch),
                (long long)hw[0], (long long)hw[1]);
  AffineExpr *shape[4] = {batch, graph_dim_const(x->g, hw[0]), graph_dim_const(x->g, hw[1]), v->shape[3]};
  set_out(x, 0, v->type, 4, shape);
  return 1;
}

/* online_softmax (attributes axis, log, scale, out_scale): y like x; the
 * max, sum and scale keep x's shape with the
 * axis as 1 (so do max_init and sum_init when given). */
static int infer_online_softmax(Ext *x) {
  const GraphValue *v = in(x, 0);
  want_rank_at_least(x, 0, 1);
  if (v->type != TY_F32 && v->type != TY_F64)
    graph_error(x->g, x->n->path, "%s'%s' must be f32 or f64, not %s", x->desc, v->name, elem_type_name(v->type));
  int axis = get_axis(x, "axis", -1, v->rank);
  get_bool(x, "log", false);
  put(x, (GraphAttr){.name = "scale", .kind = GA_FLOAT, .f = graph_attr_float(x->g, x->n, "scale", 1.0)});
  put(x, (GraphAttr){.name = "out_scale", .kind = GA_FLOAT, .f = graph_attr_float(x->g, x->n, "out_scale", 1.0)});
  AffineExpr *shape[LG_MAX_RANK];
  for (int d = 0; d < v->rank; d++)
    shape[d] = d == axis ? graph_dim_const(x->g, 1) : v->shape[d];
  for (int i = 1; i < x->n->ninputs; i++) {
    const GraphValue *s = in(x, i);
    want_same_type(x, 0, i);
    if (s->rank != v->rank)
      graph_error(x->g, x->n->path, "%s'%s' must have rank %d like '%s' (its axis of length 1)", x->desc, s->name,
                  v->rank, v->name);
    for (int d = 0; d < v->rank; d++)
      if (!graph_dims_equal(x->g->arena, s->shape[d], shape[d]))
        graph_error(x->g, x->n->path, "%s%s '%s' must be shaped like '%s' with axis %d as 1 (its dim %d differs)",
                    x->desc, i == 1 ? "max_init" : "sum_init", s->name, v->name, axis, d);
  }
  set_out(x, 0, v->type, v->rank, v->shape);
  for (int i = 1; i < 4; i++)
    set_out(x, i, v->type, v->rank, shape);
  return 4;
}

/* ---- attention ---- */

/* attention, online_attention, attention_scores: q [..., H, Lq, D], k [...,
 * Hkv, Lk, D], v [..., Hkv, Lk, Dv] with the same leading dims and H a
 * multiple of Hkv; then an optional mask (of q's type, or i1) that
 * broadcasts to [..., H, Lq, Lk] (its last dim may be shorter than Lk: the
 * missing keys are masked; with mask_pad also a last dim of 1), and optional
 * kv_lens (i32/i64 [B], B the first dim of q, rank 4 or more). The mask and
 * kv_lens are told apart by their types. */
/* k_map, v_map: the indexing map of k or v (IREE's attention
 * indexing_maps, for one operand) as the list of the logical dims its stored
 * dims hold, logical k being [..., Hkv, Lk, D] and v [..., Hkv, Lk, Dv]:
 * the identity (the default) or the last two swapped, the operand stored
 * transposed ([..., D, Lk]: IREE's K map (b, k1, k2); [..., Dv, Lk]: V's
 * (b, n, k2)), which the template reads through the map. Stored, filled in,
 * with k_transposed / v_transposed (0 or 1). */
static bool get_attention_map(Ext *x, const char *name, const char *flag, int r) {
  GraphAttr *a = get_ints(x, name, false);
  bool swapped = false;
  if (a) {
    if (a->n != r)
      graph_error(x->g, attr_path(x, name), "%s'%s' needs %d entries (one per dim of the operand), not %d", x->desc,
                  name, r, a->n);
    bool ok = r >= 2;
    for (int d = 0; d < r - 2 && ok; d++)
      ok = a->ints[d] == d;
    swapped = ok && a->ints[r - 2] == r - 1 && a->ints[r - 1] == r - 2;
    if (!ok || (!swapped && (a->ints[r - 2] != r - 2 || a->ints[r - 1] != r - 1)))
      graph_error(x->g, attr_path(x, name), "%s'%s' must be the identity or swap the last two dims (the operand "
                  "stored transposed); other maps are not supported", x->desc, name);
  }
  put(x, (GraphAttr){.name = flag, .kind = GA_INT, .i = swapped});
  return swapped;
}

static int infer_attention(Ext *x) {
  const GraphNode *n = x->n;
  const GraphValue *q = in(x, 0), *k = in(x, 1), *v = in(x, 2);
  if (q->type != TY_F32 && q->type != TY_F16 && q->type != TY_F64)
    graph_error(x->g, n->path, "%s'%s' has element type %s; attention takes f16, f32 or f64", x->desc, q->name,
                elem_type_name(q->type));
  want_same_type(x, 0, 1);
  want_same_type(x, 0, 2);
  want_rank_at_least(x, 0, 2);
  int r = q->rank;
  if (k->rank != r || v->rank != r)
    graph_error(x->g, n->path, "%sq, k and v must have the same rank (%d, %d, %d)", x->desc, q->rank, k->rank,
                v->rank);
  /* k and v's logical shapes, [..., Hkv, Lk, D] and [..., Hkv, Lk, Dv],
   * through their maps */
  AffineExpr *ksh[LG_MAX_RANK], *vsh[LG_MAX_RANK], *qsh[LG_MAX_RANK];
  bool kt = get_attention_map(x, "k_map", "k_transposed", r), vt = get_attention_map(x, "v_map", "v_transposed", r);
  bool qt = get_attention_map(x, "q_map", "q_transposed", r); /* q stored [..., H, D, Lq] */
  for (int d = 0; d < r; d++) {
    ksh[d] = k->shape[kt && d >= r - 2 ? 2 * r - 3 - d : d];
    vsh[d] = v->shape[vt && d >= r - 2 ? 2 * r - 3 - d : d];
    qsh[d] = q->shape[qt && d >= r - 2 ? 2 * r - 3 - d : d];
  }

  for (int d = 0; d < r - 3; d++) {
    want_same_dim(x, qsh[d], ksh[d], "the leading dims of q and k");
    want_same_dim(x, qsh[d], vsh[d], "the leading dims of q and v");
  }
  want_same_dim(x, qsh[r - 1], ksh[r - 1], "the head dims (last) of q and k");
  want_same_dim(x, ksh[r - 2], vsh[r - 2], "the key lengths of k and v");
  if (r >= 3) {
    want_same_dim(x, ksh[r - 3], vsh[r - 3], "the head counts of k and v");
    int64_t hq, hk;
    if (static_dim(qsh[r - 3], &hq) && static_dim(ksh[r - 3], &hk)) {
      if (hk < 1 || hq % hk != 0)
        graph_error(x->g, n->path, "%sq's %lld heads are not a multiple of k's %lld (grouped heads)", x->desc,
                    (long long)hq, (long long)hk);
    } else {
      want_same_dim(x, qsh[r - 3], ksh[r - 3], "the head counts of q and k (symbolic: equal)");
    }
  }
  int mask = -1, lens = -1;
  for (int i = 3; i < n->ninputs; i++) {
    const GraphValue *m = in(x, i);
    if ((m->type == TY_I32 || m->type == TY_I64) && lens < 0 && i == n->ninputs - 1)
      lens = i;
    else if ((m->type == q->type || m->type == TY_I1) && mask < 0 && i == 3)
      mask = i;
    else
      graph_error(x->g, n->path, "%sinput %d ('%s', %s) must be the mask (%s or i1) or kv_lens (i32 or i64, last)",
                  x->desc, i, m->name, elem_type_name(m->type), elem_type_name(q->type));
  }
  get_bool(x, "mask_pad", false);
  if (mask >= 0) {
    const GraphValue *m = in(x, mask);
    if (m->rank > r)
      graph_error(x->g, n->path, "%sthe mask '%s' has rank %d, more than q's %d", x->desc, m->name, m->rank, r);
    for (int d = 0; d < m->rank; d++) {
      int qd = r - m->rank + d;
      int64_t e, want;
      if (d == m->rank - 1) { /* keys: 1, Lk or fewer */
        if (static_dim(m->shape[d], &e) && static_dim(ksh[r - 2], &want) && (e < 1 || e > want))
          graph_error(x->g, n->path, "%sthe mask's last dim (%lld) must be in [1, %lld] (the keys)", x->desc,
                      (long long)e, (long long)want);
        continue;
      }
      if (static_dim(m->shape[d], &e) && e == 1)
        continue;
      want_same_dim(x, m->shape[d], qsh[qd], "the mask's dims and q's (it must broadcast to the scores)");
    }
    /* the leading dims before the heads: all broadcast, or all q's */
    bool some = false, all = true;
    for (int d = 0; d + 3 < r; d++) {
      int md = d - (r - m->rank);
      int64_t e;
      bool full = md >= 0 && !(static_dim(m->shape[md], &e) && e == 1);
      some |= full;
      all &= full;
    }
    if (some && !all)
      graph_error(x->g, n->path, "%sthe mask must broadcast over all of q's batch dims or none", x->desc);
  }
  if (lens >= 0) {
    const GraphValue *m = in(x, lens);
    if (r < 4 || m->rank != 1)
      graph_error(x->g, n->path, "%skv_lens '%s' must be a vector over q's first dim (q of rank 4 or more)", x->desc,
                  m->name);
    want_same_dim(x, m->shape[0], qsh[0], "kv_lens' length and q's first dim");
  }
  int64_t dh;
  if (!graph_attr(x->g, n, "scale") && !static_dim(qsh[r - 1], &dh))
    graph_error(x->g, n->path, "%sthe head dim is symbolic: give 'scale' (the default is 1/sqrt(head dim))", x->desc);
  static_dim(qsh[r - 1], &dh);
  put(x, (GraphAttr){.name = "scale", .kind = GA_FLOAT,
                     .f = graph_attr_float(x->g, n, "scale", dh > 0 ? 1.0 / sqrt((double)dh) : 1.0)});
  double cap = graph_attr_float(x->g, n, "softcap", 0);
  if (!(cap >= 0))
    graph_error(x->g, attr_path(x, "softcap"), "%s'softcap' must be 0 (off) or positive", x->desc);
  put(x, (GraphAttr){.name = "softcap", .kind = GA_FLOAT, .f = cap});
  get_bool(x, "causal", false);
  get_int(x, "causal_offset", 0);
  if (get_bool(x, "causal_lens", false) && lens < 0)
    graph_error(x->g, attr_path(x, "causal_lens"), "%s'causal_lens' needs the kv_lens input", x->desc);
  put(x, (GraphAttr){.name = "mask_input", .kind = GA_INT, .i = mask});
  put(x, (GraphAttr){.name = "lens_input", .kind = GA_INT, .i = lens});
  AffineExpr *shape[LG_MAX_RANK];
  for (int d = 0; d < r - 1; d++)
    shape[d] = qsh[d];
  if (n->op == GOP_ATTENTION_SCORES) {
    int64_t mode = get_int(x, "qk_mode", 0);
    if (mode < 0 || mode > 3)
      graph_error(x->g, attr_path(x, "qk_mode"), "%s'qk_mode' must be 0..3, not %lld", x->desc, (long long)mode);
    shape[r - 1] = ksh[r - 2];
    set_out(x, 0, q->type, r, shape);
    return 1;
  }
  shape[r - 1] = vsh[r - 1];
  AffineExpr *oshape[LG_MAX_RANK]; /* the output through o_map: [..., H, Dv, Lq] when swapped */
  bool ot = get_attention_map(x, "o_map", "o_transposed", r);
  for (int d = 0; d < r; d++)
    oshape[d] = shape[ot && d >= r - 2 ? 2 * r - 3 - d : d];
  set_out(x, 0, q->type, r, oshape);
  if (n->op != GOP_ONLINE_ATTENTION)
    return 1;
  set_out(x, 1, q->type, r - 1, shape);
  set_out(x, 2, q->type, r - 1, shape);
  return 3;
}

/* ---- rnn ---- */

/* rnn: one direction of ONNX's RNN, GRU or LSTM (templates/rnn.c). xw
 * [seq, batch, G*H] and rt [H, G*H] (G = 1, 3, 4 gates), then the inputs
 * the with_* flags name, in this order: rb [H] (GRU), h0 and c0 [batch, H],
 * p [3H] (LSTM), lens [batch] (i32 or i64). The activations are names of
 * the table below (ONNX's, in snake case), each with alpha and beta (ONNX's
 * defaults, stored). Outputs y [seq, batch, H], yh [batch, H] and, for
 * lstm, yc [batch, H]. */
static const char *const rnn_kinds[] = {"rnn", "gru", "lstm", NULL};
/* the order is templates/rnn.c's codes */
const char *const graph_rnn_activations[] = {"sigmoid",     "tanh",         "relu", "affine",   "leaky_relu",
                                             "thresholded_relu", "scaled_tanh", "hard_sigmoid", "elu", "softsign",
                                             "softplus",    NULL};

static int infer_rnn(Ext *x) {
  const GraphNode *n = x->n;
  const char *kind = get_choice(x, "kind", "lstm", rnn_kinds);
  int G = kind[0] == 'r' ? 1 : kind[0] == 'g' ? 3 : 4;
  const GraphValue *v = in(x, 0), *rt = in(x, 1);
  want_float(x, 0);
  want_rank(x, 0, 3);
  want_same_type(x, 0, 1);
  want_rank(x, 1, 2);
  int64_t H = want_static(x, rt->shape[0], "the hidden size (dim 0 of R transposed)");
  AffineExpr *gh = graph_dim_const(x->g, G * H), *hd = graph_dim_const(x->g, H), *batch = v->shape[1];
  want_same_dim(x, rt->shape[1], gh, "R's columns and gates * hidden size");
  want_same_dim(x, v->shape[2], gh, "the last dim of the projected input and gates * hidden size");
  /* the optional inputs, in order, with their shapes */
  static const char *const flags[] = {"with_rb", "with_h0", "with_c0", "with_p", "with_lens"};
  AffineExpr *p3 = graph_dim_const(x->g, 3 * H);
  AffineExpr *const want[5][2] = {{hd, NULL}, {batch, hd}, {batch, hd}, {p3, NULL}, {batch, NULL}};
  int count = 2;
  for (int i = 0; i < 5; i++)
    count += get_bool(x, flags[i], false);
  if (count != n->ninputs)
    graph_error(x->g, n->path, "%sthe with_* attributes give %d inputs, not %d", x->desc, count, n->ninputs);
  for (int i = 0, at = 2; i < 5; i++) {
    if (!graph_attr_int(x->g, n, flags[i], 0))
      continue;
    if (i == 4)
      want_indices(x, at);
    else
      want_same_type(x, 0, at);
    want_rank(x, at, want[i][1] ? 2 : 1);
    for (int d = 0; d < 2 && want[i][d]; d++)
      want_same_dim(x, in(x, at)->shape[d], want[i][d], "the optional inputs' shapes and the with_* flags' order");
    at++;
  }
  static const char *const acts[3] = {"act_f", "act_g", "act_h"}, *const alphas[3] = {"alpha_f", "alpha_g", "alpha_h"},
                           *const betas[3] = {"beta_f", "beta_g", "beta_h"};
  for (int k = 0; k < 3; k++) {
    const char *f = get_choice(x, acts[k], k == 0 && G > 1 ? "sigmoid" : "tanh", graph_rnn_activations);
    bool leaky = strcmp(f, "leaky_relu") == 0, hard = strcmp(f, "hard_sigmoid") == 0;
    double alpha = leaky ? 0.01 : hard ? 0.2 : 1.0, beta = hard ? 0.5 : strcmp(f, "affine") == 0 ? 0.0 : 1.0;
    put(x, (GraphAttr){.name = alphas[k], .kind = GA_FLOAT, .f = graph_attr_float(x->g, n, alphas[k], alpha)});
    put(x, (GraphAttr){.name = betas[k], .kind = GA_FLOAT, .f = graph_attr_float(x->g, n, betas[k], beta)});
  }
  put(x, (GraphAttr){.name = "clip", .kind = GA_FLOAT, .f = graph_attr_float(x->g, n, "clip", 0)});
  get_bool(x, "reverse", false);
  get_bool(x, "input_forget", false);
  get_bool(x, "linear_before_reset", false);
  AffineExpr *ys[3] = {v->shape[0], batch, hd};
  set_out(x, 0, v->type, 3, ys);
  set_out(x, 1, v->type, 2, ys + 1);
  if (G != 4)
    return 2;
  set_out(x, 2, v->type, 2, ys + 1);
  return 3;
}

/* max_pool_index (ONNX MaxPool's Indices): inputs x [N, C, W] or [N, C, H,
 * W] and the max pool's result y, whose shape the i64 indices take; the
 * window, strides, dilations and padding (ints, one per spatial dim; the
 * padding as begin/end pairs) are the pool's. */
static int infer_max_pool_index(Ext *x) {
  const GraphValue *v = in(x, 0), *y = in(x, 1);
  want_ordered(x, 0);
  if (v->rank != 3 && v->rank != 4)
    graph_error(x->g, x->n->path, "%sindices are computed for 1-D and 2-D pools only, not rank %d", x->desc, v->rank);
  if (y->rank != v->rank)
    graph_error(x->g, x->n->path, "%s'%s' must have the rank of '%s'", x->desc, y->name, v->name);
  int r = v->rank - 2;
  static const char *const lists[] = {"window", "strides", "dilations"};
  for (int i = 0; i < 3; i++) {
    const GraphAttr *a = graph_attr(x->g, x->n, lists[i]);
    if (!a || a->kind != GA_INTS || a->n != r)
      graph_error(x->g, x->n->path, "%s'%s' must list %d values", x->desc, lists[i], r);
  }
  const GraphAttr *p = graph_attr(x->g, x->n, "padding");
  if (!p || p->kind != GA_INTS2 || p->n != r)
    graph_error(x->g, x->n->path, "%s'padding' must hold %d begin/end pairs", x->desc, r);
  get_bool(x, "storage_order", false);
  set_out(x, 0, TY_I64, y->rank, y->shape);
  return 1;
}

int graph_ext_infer(Graph *g, GraphNode *n, GraphShape *outs) {
  Ext x = {.g = g, .n = n, .desc = graph_node_desc(g, n), .outs = outs};
  switch (n->op) {
  case GOP_GATHER_ELEMENTS: return infer_gather_elements(&x);
  case GOP_GATHER_ND: return infer_gather_nd(&x);
  case GOP_ARGMAX:
  case GOP_ARGMIN: return infer_arg(&x);
  case GOP_TOPK: return infer_topk(&x);
  case GOP_SORT: return infer_sort(&x);
  case GOP_SCAN: return infer_scan(&x);
  case GOP_SCATTER: return infer_scatter(&x);
  case GOP_SCATTER_ELEMENTS: return infer_scatter_elements(&x);
  case GOP_DIAG: return infer_diag(&x);
  case GOP_MAX_POOL_INDEX: return infer_max_pool_index(&x);
  case GOP_ONLINE_SOFTMAX: return infer_online_softmax(&x);
  case GOP_PACK: return infer_pack(&x);
  case GOP_UNPACK: return infer_unpack(&x);
  case GOP_FFT: return infer_fft(&x);
  case GOP_DFT: return infer_dft(&x);
  case GOP_IM2COL: return infer_im2col(&x);
  case GOP_WINOGRAD_FILTER_TRANSFORM: return infer_winograd_filter(&x);
  case GOP_WINOGRAD_INPUT_TRANSFORM: return infer_winograd_input(&x);
  case GOP_WINOGRAD_OUTPUT_TRANSFORM: return infer_winograd_output(&x);
  case GOP_ATTENTION:
  case GOP_ONLINE_ATTENTION:
  case GOP_ATTENTION_SCORES: return infer_attention(&x);
  case GOP_RNN: return infer_rnn(&x);
  default: diag_bug(g->diag, "no shape rule for graph op %s", graph_op_info(n->op)->name);
  }
}
