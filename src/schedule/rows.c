/* rows.c - row fusion: consecutive ops of a model graph that share their
 * leading parallel dims run in one loop nest over those dims (the rows),
 * each op's own loops inside it.
 *
 * A softmax written from primitives is a row max, a row sum of exponentials
 * and a division; a LayerNorm is a row mean, a row variance and a scale.
 * Run one after another over the whole tensor, each pass reads every row
 * from memory again. Run row by row, the later passes read a row the first
 * one just brought into cache, and the graph's parallel region has one
 * barrier for the group instead of one per op.
 *
 * Legal when each row's work depends only on the same row: every tensor
 * that one member writes and another touches is indexed by each row dim
 * bare, at the same position, in every access of the group, and by no
 * other row index (then row r's elements and row r''s are disjoint, and
 * within a row the ops keep their order). The decision uses maps, iterator
 * kinds and the ops' schedules only: a member's row dims must be plain
 * loops of its schedule (not tiled, register-blocked, vectorised or
 * collapsed with other dims), and it must not pack, split a reduction or
 * call a library. Unit row dims (a batch of one) need no loop. */
#include "schedule/schedule.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

static bool is_unit(const AffineExpr *e) { return e->kind == AE_CONST && e->value == 1; }

/* Op dims of e's dims, through an attached op's dim map (NULL: the op's). */
static unsigned long long dims_used(const AffineExpr *e, const int *dim_map) {
  if (!e)
    return 0;
  unsigned long long m = dims_used(e->lhs, dim_map) | dims_used(e->rhs, dim_map);
  if (e->kind == AE_DIM) {
    int d = dim_map ? dim_map[e->index] : e->index;
    if (d >= 0)
      m |= 1ull << d;
  }
  return m;
}

static int bare_dim(const AffineExpr *e, const int *dim_map) {
  if (e->kind != AE_DIM)
    return -1;
  return dim_map ? dim_map[e->index] : e->index;
}

/* Every access of tensor root t by the op (and its init and epilogue)
 * indexes each row dim in `rows` bare at pos[q] and uses no row dim
 * elsewhere. pos[q] = -1 on entry: set by the first access seen. */
static bool row_local(const Kernel *k, const StructuredOp *op, int t, unsigned long long rows, int *pos) {
  const StructuredOp *parts[3] = {op, op->init, op->epilogue};
  const int *maps[3] = {NULL, op->init_dims, op->epilogue_dims};
  for (int p = 0; p < 3; p++) {
    if (!parts[p])
      continue;
    for (int o = 0; o < parts[p]->noperands; o++) {
      const Operand *x = &parts[p]->operands[o];
      if (x->tensor != t || x->shape_only)
        continue;
      unsigned long long seen = 0;
      for (int i = 0; i < k->tensors[t].rank; i++) {
        unsigned long long used = dims_used(x->map[i], maps[p]) & rows;
        if (!used)
          continue;
        int q = bare_dim(x->map[i], maps[p]);
        if (q < 0 || (used & ~(1ull << q)) || (seen & (1ull << q)) || (pos[q] >= 0 && pos[q] != i))
          return false;
        pos[q] = i;
        seen |= 1ull << q;
      }
      if (seen != rows)
        return false;
    }
  }
  return true;
}

static int root(const Kernel *k, int t) {
  while (k->tensors[t].storage == TS_ALIAS)
    t = k->tensors[t].alias_of;
  return t;
}

static bool touches(const StructuredOp *op, int t, bool write) {
  const StructuredOp *parts[3] = {op, op->init, op->epilogue};
  for (int p = 0; p < 3; p++) {
    if (!parts[p])
      continue;
    for (int o = 0; o < parts[p]->noperands && !write; o++)
      if (parts[p]->operands[o].tensor == t && !parts[p]->operands[o].shape_only)
        return true;
    for (int y = 0; y < parts[p]->nyields; y++)
      if (parts[p]->operands[parts[p]->yields[y].operand].tensor == t)
        return true;
  }
  return false;
}

/* The tensors op touches, at most LG_MAX_TENSORS; their count. */
static int touched(const Kernel *k, const StructuredOp *op, int *list) {
  int n = 0;
  for (int i = 0; i < op_all_operands(op) && n < LG_MAX_TENSORS; i++) {
    int t = op_operand_at(op, i)->tensor;
    bool dup = false;
    for (int j = 0; j < n; j++)
      dup |= list[j] == t;
    if (!dup && touches(op, t, false))
      list[n++] = t;
  }
  (void)k;
  return n;
}

/* Which ops touch (touched) and write (touches(.., true)) each root
 * tensor, in op order, and which tensors have aliases: the questions the
 * grouping asks of every op, answered without a scan of every op. */
typedef struct {
  OpList *touch, *write; /* per root */
  bool *aliased;         /* per tensor: another tensor's memory is its */
} RowIndex;

static void row_index(RowIndex *x, const Kernel *k, Arena *arena) {
  x->touch = arena_alloc(arena, sizeof(OpList) * (size_t)(k->ntensors + 1));
  x->write = arena_alloc(arena, sizeof(OpList) * (size_t)(k->ntensors + 1));
  x->aliased = arena_alloc(arena, (size_t)k->ntensors + 1);
  for (int t = 0; t < k->ntensors; t++)
    if (root(k, t) != t)
      x->aliased[root(k, t)] = true;
  int list[LG_MAX_TENSORS];
  for (int j = 0; j < k->nops; j++) {
    const StructuredOp *op = &k->ops[j];
    int n = op->ext ? 0 : touched(k, op, list);
    for (int i = 0; op->ext && i < op->ext->ninputs + op->ext->noutputs + op->ext->nscratch; i++)
      list[n++] = op->ext->tensors[i];
    for (int i = 0; i < n; i++) {
      oplist_add(arena, &x->touch[root(k, list[i])], j);
      if (!op->ext && touches(op, list[i], true))
        oplist_add(arena, &x->write[root(k, list[i])], j);
    }
  }
}

/* Whether ops a and b (a before b) can share row loops over `rows`. */
static bool rows_independent(const Kernel *k, const StructuredOp *a, const StructuredOp *b, unsigned long long rows) {
  int la[LG_MAX_TENSORS], lb[LG_MAX_TENSORS];
  int na = touched(k, a, la), nb = touched(k, b, lb);
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++) {
      int t = la[i], u = lb[j];
      if (root(k, t) != root(k, u) || !(touches(a, t, true) || touches(b, u, true)))
        continue;
      if (t != u) /* the same memory under two names: not compared here */
        return false;
      int pos[LG_MAX_DIMS];
      for (int q = 0; q < LG_MAX_DIMS; q++)
        pos[q] = -1;
      if (!row_local(k, a, t, rows, pos) || !row_local(k, b, t, rows, pos))
        return false;
    }
  return true;
}

/* The view dim of original dim d under r (-1: folded; -2: merged with
 * another dim). */
static int view_dim_of(const Reshape *r, int ndims, int d) {
  if (r->fold[d])
    return -1;
  if (r->next[d] >= 0 || reshape_head(r, ndims, d) != d)
    return -2;
  int v = 0;
  for (int e = 0; e < d; e++)
    if (!r->fold[e] && reshape_head(r, ndims, e) == e)
      v++;
  return v;
}

/* How many leading dims of op i can be row dims of a group whose rows have
 * these extents (at most `want`): parallel, the same extent, plain loops of
 * the op's plan. */
static int row_dims_of(const Kernel *k, const OpPlan *plan, const StructuredOp *op, AffineExpr *const *extents,
                       int want) {
  const Schedule *s = &plan->s;
  if (s->library_call || s->split_reduction || plan->is_prologue || plan->has_prologue)
    return 0;
  for (int t = 0; t < k->ntensors && t < LG_MAX_TENSORS; t++)
    if (s->pack[t])
      return 0;
  /* bound to the group's rows, an op runs its own loops only: a float max
   * or min reduced along its innermost loop runs scalar there (its simd
   * form needs no-NaN semantics), where on its own auto vectorises it across
   * rows; such an op stays out */
  int x;
  if (s->vector_dim >= 0 && plan->view.op->dims[s->vector_dim].kind == ITER_REDUCTION)
    for (int y = 0; y < plan->view.op->nyields; y++) { /* each of sibling reductions' yields (graph/fuse/fuse.c) */
      StructuredOp one = *plan->view.op;
      one.nyields = 1;
      one.yields = &plan->view.op->yields[y];
      Combiner c = match_reduction(&one, 0, &x);
      if (c == COMBINE_MAX || c == COMBINE_MIN)
        return 0;
    }
  int n = 0;
  for (; n < want && n < op->ndims; n++) {
    const Dim *d = &op->dims[n];
    if (d->kind != ITER_PARALLEL || (extents && !affine_equal(d->extent, extents[n])))
      break;
    int v = view_dim_of(&plan->reshape, op->ndims, n);
    if (v == -2)
      break;
    if (v >= 0) {
      bool plain = s->unroll[v] <= 1 && s->vector_dim != v;
      for (int l = 0; l < s->nlevels; l++)
        plain &= s->tile[l][v] == 0;
      if (!plain)
        break;
    }
  }
  return n;
}

static unsigned long long row_mask(AffineExpr *const *extents, int n) {
  unsigned long long m = 0;
  for (int q = 0; q < n; q++)
    if (!is_unit(extents[q]))
      m |= 1ull << q;
  return m;
}

/* Rows are the group's parallel work: a group of few rows would feed
 * fewer threads than its members' own loops do. And the point is that a
 * later pass finds a row in cache: when everything the group touches fits
 * in L2 anyway, each member's own loops (vectorised across rows where they
 * reduce a short row) are faster (measured: the transformer's 256 rows of
 * 64 ran a third slower row by row). */
enum { MIN_ROWS = 16 };

/* The bytes the ops first..last touch, when static (-1 otherwise). */
static int compare_ints(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return x < y ? -1 : x > y;
}

static int64_t group_bytes(const Kernel *k, int first, int last) {
  int64_t total = 0;
  int n = 0;
  for (int i = first; i <= last; i++)
    n += op_all_operands(&k->ops[i]);
  int *seen = xmalloc(sizeof(int) * (size_t)(n + 1)), nseen = 0; /* the tensors counted, sorted */
  for (int i = first; i <= last; i++)
    for (int o = 0; o < op_all_operands(&k->ops[i]) && total >= 0; o++) {
      int t = op_operand_at(&k->ops[i], o)->tensor;
      if (nseen && bsearch(&t, seen, (size_t)nseen, sizeof(int), compare_ints))
        continue;
      int at = nseen++;
      for (; at > 0 && seen[at - 1] > t; at--)
        seen[at] = seen[at - 1];
      seen[at] = t;
      int64_t bytes = elem_type_bits(k->tensors[t].type) / 8;
      for (int p = 0; p < k->tensors[t].rank && bytes >= 0; p++)
        bytes = k->tensors[t].shape[p]->kind == AE_CONST ? bytes * k->tensors[t].shape[p]->value : -1;
      total = bytes < 0 ? -1 : total + bytes;
    }
  free(seen);
  return total;
}

static bool few_rows(AffineExpr *const *extents, int n) {
  int64_t rows = 1;
  for (int q = 0; q < n; q++) {
    if (extents[q]->kind != AE_CONST)
      return false; /* symbolic: a batch, assumed large */
    rows *= extents[q]->value;
    if (rows >= MIN_ROWS)
      return false;
  }
  return true;
}

/* Whether the group's rows may be too few at run time while its members
 * on their own would share out more: every row extent that is not 1 is a
 * size symbol (a batch is most often 1), and some member's own plan runs
 * other dims in parallel too (a padded copy's image rows, a pool's patch
 * rows). Grouped, such a member runs its other dims on the thread that owns
 * the row: at a batch of 1, ResNet-18's max pool and its padded copy ran on
 * one of two threads. */
static bool rows_may_starve(const OpPlan *cand, const Kernel *k, int first, int last, AffineExpr *const *extents,
                            int rows) {
  for (int q = 0; q < rows; q++)
    if (extents[q]->kind == AE_CONST && extents[q]->value != 1)
      return false;
  for (int m = first; m <= last; m++) {
    const OpPlan *p = &cand[m];
    if (p->from_file)
      continue;
    for (int v = 0; v < p->view.op->ndims && v < LG_MAX_DIMS; v++) {
      if (!p->s.parallel[v] && !p->s.parallel_reg[v])
        continue;
      bool row = false;
      for (int q = 0; q < rows && !row; q++)
        row = view_dim_of(&p->reshape, k->ops[m].ndims, q) == v;
      if (!row)
        return true;
    }
  }
  return false;
}

/* Whether op writes a tensor named in the keep overrides. */
static bool writes_kept(const Kernel *k, const StructuredOp *op, const char *const *keep, int nkeep) {
  for (int o = 0; nkeep && o < op_all_operands(op); o++) { /* an op writes only its operands' tensors */
    int t = op_operand_at(op, o)->tensor;
    if (touches(op, t, true))
      for (int i = 0; i < nkeep; i++)
        if (strcmp(keep[i], k->tensors[t].name) == 0)
          return true;
  }
  return false;
}

static const char *output_name(const Kernel *k, const StructuredOp *op) {
  return op->nyields ? k->tensors[op->operands[op->yields[0].operand].tensor].name : "?";
}

/* An automatic plan whose reshape merges leading parallel dims (auto
 * collapses every legal chain) is planned again, as a group member, with
 * those dims kept apart so that they can be rows. */
static OpPlan member_plan(const Kernel *k, const OpPlan *plan, const StructuredOp *op, const Target *t, Arena *arena) {
  OpPlan p = *plan;
  if (plan->from_file)
    return p;
  bool changed = false;
  for (int d = 0; d < op->ndims && op->dims[d].kind == ITER_PARALLEL; d++)
    if (p.reshape.next[d] >= 0) {
      p.reshape.next[d] = -1;
      changed = true;
    }
  if (!changed)
    return p;
  p.view = reshape_apply(k, op, &p.reshape, arena);
  schedule_auto(p.view.k, p.view.op, t, &p.s);
  return p;
}

/* Whether tensor t (through aliases) is one of the ExtOp's tensors; sets
 * *input when it is one of the op's inputs. */
static bool ext_touches(const Kernel *k, const ExtOp *x, int t, bool *input) {
  for (int i = 0; i < x->ninputs + x->noutputs + x->nscratch; i++)
    if (root(k, x->tensors[i]) == root(k, t)) {
      *input = i < x->ninputs;
      return true;
    }
  return false;
}

/* Whether op e (planned as *cand) can run on the rows of a softmax's
 * chunks: its leading dims are the softmax's rows (parallel, the same
 * extents, plain loops of its plan) and it touches tensor t at each row
 * bare at t's own position: before the softmax it writes t (the softmax's
 * x) and nothing else, after it it reads t (the softmax's y) and does not
 * write it. Any other tensor of the softmax it may only read, and only its
 * inputs. */
static bool softmax_member(const Kernel *k, const OpPlan *plans, int e, const ExtOp *x, int t, bool before,
                           const Target *target, Arena *arena, OpPlan *cand) {
  const TensorParam *in = &k->tensors[x->tensors[0]];
  const StructuredOp *E = &k->ops[e];
  int rows = in->rank - 1;
  if (E->ext || op_reads_index(E, -1) || (before && (E->nyields != 1 || E->operands[E->yields[0].operand].tensor != t || E->init ||
                            E->epilogue)))
    return false;
  *cand = member_plan(k, &plans[e], E, target, arena);
  if (row_dims_of(k, cand, E, in->shape, rows) != rows)
    return false;
  unsigned long long mask = row_mask(in->shape, rows);
  int pos[LG_MAX_DIMS];
  for (int q = 0; q < LG_MAX_DIMS; q++)
    pos[q] = -1;
  if (!mask || !touches(E, t, false) || touches(E, t, true) != before || !row_local(k, E, t, mask, pos))
    return false;
  for (int q = 0; q < rows; q++)
    if ((mask >> q & 1) && pos[q] != q)
      return false;
  int list[LG_MAX_TENSORS];
  for (int j = 0, n = touched(k, E, list); j < n; j++) {
    bool input = false;
    if (list[j] != t && ext_touches(k, x, list[j], &input) && (!input || touches(E, list[j], true)))
      return false;
  }
  return true;
}

/* The bytes of tensor t kept per thread, a chunk of rows each, when t can
 * be (-1 otherwise): t is an intermediate of its own (no alias shares its
 * memory) that only the group's ops first..last touch, of static shape
 * [rows..., n], and the chunk buffers are smaller than t. Each chunk's rows
 * are then written and read inside that chunk only, by the thread that
 * runs it, so a thread's buffer can take the next chunk's rows: t never
 * goes to memory whole, which saves writing it (a full pass over memory
 * for a tensor beyond the caches). */
static int64_t chunk_local_bytes(const Kernel *k, const RowIndex *x, int t, int first, int last) {
  const TensorParam *tp = &k->tensors[t];
  if (tp->storage != TS_WORKSPACE || x->aliased[t])
    return -1;
  for (int i = 0; i < x->touch[t].len; i++) { /* t is a root: no alias */
    int j = x->touch[t].items[i];
    if (j < first || j > last)
      return -1;
  }
  int64_t whole = elem_type_bits(tp->type) / 8;
  for (int p = 0; p < tp->rank; p++) {
    if (tp->shape[p]->kind != AE_CONST)
      return -1;
    whole *= tp->shape[p]->value;
  }
  int64_t n = tp->shape[tp->rank - 1]->value;
  int64_t local = (int64_t)LG_SCRATCH_THREAD_SLOTS * LG_SOFTMAX_CHUNK_ROWS * n * (elem_type_bits(tp->type) / 8);
  return local < whole ? local : -1;
}

/* A softmax (the ExtOp online_softmax along its innermost axis) with the
 * op just before it that computes its input x and the op just after it
 * that reads its result y, either or both, row by row (softmax_member):
 * they run inside the softmax's loop over chunks of rows (up to 16 rows,
 * c_ext.c), the op before on a chunk's rows just before the softmax reads
 * them, the op after just after it wrote them, so neither x nor y makes an
 * extra pass over memory. The softmax is op i; returns the group's first
 * op, or -1 when there is no group. */
static int softmax_rows(const Kernel *k, const RowIndex *rx, OpPlan *plans, int i, const Target *target,
                        const char *const *keep, int nkeep, Arena *arena, PtrVec *decisions) {
  const ExtOp *x = k->ops[i].ext;
  if (!x || strcmp(x->tmpl, "softmax") != 0)
    return -1;
  const TensorParam *in = &k->tensors[x->tensors[0]];
  int rows = in->rank - 1, xt = x->tensors[0], y = x->tensors[x->ninputs];
  if (rows < 1 || rows > LG_MAX_DIMS || ext_attr_int(x, "axis", -1) != rows || few_rows(in->shape, rows))
    return -1;
  OpPlan before, after;
  bool has_before = i > 0 && plans[i - 1].group_size == 0 && !writes_kept(k, &k->ops[i - 1], keep, nkeep) &&
                    softmax_member(k, plans, i - 1, x, xt, true, target, arena, &before);
  bool has_after = i + 1 < k->nops && !writes_kept(k, &k->ops[i], keep, nkeep) &&
                   softmax_member(k, plans, i + 1, x, y, false, target, arena, &after) &&
                   !(has_before && touches(&k->ops[i + 1], xt, false)); /* x is written chunk by chunk */
  int first = has_before ? i - 1 : i, last = has_after ? i + 1 : i;
  int64_t bytes = group_bytes(k, first, last);
  if (first == last || (bytes >= 0 && bytes <= target->l2_bytes))
    return -1;
  if (has_before)
    plans[i - 1] = before;
  if (has_after)
    plans[i + 1] = after;
  for (int m = first; m <= last; m++) {
    plans[m].group_size = m == first ? last - first + 1 : -1;
    plans[m].group_rows = rows;
    plans[m].group_threads = true;
  }
  OpPlan *head = &plans[first];
  int candidates[2] = {has_before ? xt : -1, has_after ? y : -1};
  for (int c = 0; c < 2; c++) {
    int64_t bytes = candidates[c] >= 0 ? chunk_local_bytes(k, rx, candidates[c], first, last) : -1;
    if (bytes >= 0) {
      head->chunk_local[head->nchunk_local] = candidates[c];
      head->chunk_local_bytes[head->nchunk_local++] = bytes;
    }
  }
  const StructuredOp *E = &k->ops[has_before ? i - 1 : i + 1];
  StrBuf sb = {0};
  sb_printf(&sb, "rows: ops %d to %d run chunk by chunk over the softmax's rows (", first, last);
  for (int q = 0; q < rows; q++)
    sb_printf(&sb, "%s%s", q ? ", " : "", E->dims[q].name);
  sb_printf(&sb, "): '%s'", k->tensors[has_before ? xt : y].name);
  if (has_before)
    sb_printf(&sb, ", '%s'", k->tensors[y].name);
  if (has_after)
    sb_printf(&sb, ", '%s'", output_name(k, &k->ops[i + 1]));
  for (int c = 0; c < head->nchunk_local; c++)
    sb_printf(&sb, "%s'%s'", c ? " and " : "; ", k->tensors[head->chunk_local[c]].name);
  if (head->nchunk_local)
    sb_printf(&sb, " kept per thread, %d rows each", LG_SOFTMAX_CHUNK_ROWS);
  vec_push(arena, decisions, arena_strdup(arena, sb_cstr(&sb)));
  sb_free(&sb);
  return first;
}

/* Whether op j can join ops i..j-1 over these rows: independent of each
 * that shares memory with it (a pair that shares none is: only the ops
 * that touch a root j writes, or write one it touches, are asked). */
static bool joins_rows(const Kernel *k, const RowIndex *x, int i, int j, unsigned long long rows) {
  int list[LG_MAX_TENSORS];
  const StructuredOp *b = &k->ops[j];
  int n = touched(k, b, list);
  for (int a = 0; a < n; a++) {
    int r = root(k, list[a]);
    bool b_writes = false;
    for (int c = 0; c < n && !b_writes; c++)
      b_writes = root(k, list[c]) == r && touches(b, list[c], true);
    const OpList *l = b_writes ? &x->touch[r] : &x->write[r];
    for (int m = 0; m < l->len; m++)
      if (l->items[m] >= i && l->items[m] < j && !rows_independent(k, &k->ops[l->items[m]], b, rows))
        return false;
  }
  return true;
}

/* A group has at most this many ops: a group that turns out too small
 * (few rows, all in L2) is tried again from its next op, and its length
 * bounds that work (a chain of 10^5 elementwise ops is one candidate). */
enum { MAX_GROUP_OPS = 64 };

void plan_row_groups(const Kernel *k, OpPlan *plans, const Target *target, const char *const *keep, int nkeep,
                     Arena *arena, PtrVec *decisions) {
  for (int i = 0; i < k->nops; i++)
    plans[i].group_size = plans[i].nchunk_local = 0;
  RowIndex rx;
  row_index(&rx, k, arena);
  OpPlan *cand = arena_alloc(arena, sizeof(OpPlan) * (size_t)(k->nops + 1));
  bool *cand_done = arena_alloc(arena, (size_t)k->nops + 1); /* cand[j] is member_plan's (plans[j] is unchanged) */
  int i = 0;
  while (i < k->nops) {
    const StructuredOp *first = &k->ops[i];
    if (plans[i].group_size > 1) { /* a softmax's group, planned from the op before it */
      i += plans[i].group_size;
      continue;
    }
    if (first->ext) {
      int f = softmax_rows(k, &rx, plans, i, target, keep, nkeep, arena, decisions);
      i = f >= 0 ? f + plans[f].group_size : i + 1;
      continue;
    }
    if (i + 1 < k->nops && k->ops[i + 1].ext &&
        softmax_rows(k, &rx, plans, i + 1, target, keep, nkeep, arena, decisions) == i) {
      i += plans[i].group_size;
      continue;
    }
    AffineExpr *extents[LG_MAX_DIMS];
    for (int d = 0; d < first->ndims && d < LG_MAX_DIMS; d++)
      extents[d] = first->dims[d].extent;
    if (!cand_done[i])
      cand[i] = member_plan(k, &plans[i], first, target, arena);
    cand_done[i] = true;
    int rows = row_dims_of(k, &cand[i], first, NULL, first->ndims < LG_MAX_DIMS ? first->ndims : LG_MAX_DIMS);
    int j = i + 1;
    while (j < k->nops && j - i < MAX_GROUP_OPS && rows > 0 && !writes_kept(k, &k->ops[j - 1], keep, nkeep)) {
      if (!cand_done[j])
        cand[j] = member_plan(k, &plans[j], &k->ops[j], target, arena);
      cand_done[j] = true;
      int r = row_dims_of(k, &cand[j], &k->ops[j], extents, rows);
      if (!row_mask(extents, r))
        break;
      if (!joins_rows(k, &rx, i, j, row_mask(extents, r)))
        break;
      rows = r;
      j++;
    }
    int64_t bytes = j - i < 2 ? 0 : group_bytes(k, i, j - 1);
    if (j - i < 2 || !row_mask(extents, rows) || few_rows(extents, rows) ||
        (bytes >= 0 && bytes <= target->l2_bytes) || rows_may_starve(cand, k, i, j - 1, extents, rows)) {
      i++;
      continue;
    }
    /* the members' rows beyond the group's are their own loops again: each
     * was checked with no more rows than the group ends with */
    /* threads when a member would have had them, or the group's work
     * together is worth them (auto's threshold) */
    bool threads = false;
    int64_t points = 0;
    for (int m = i; m < j; m++) {
      int64_t p = schedule_static_points(&k->ops[m]);
      points = p < 0 || points < 0 ? -1 : points + p;
      for (int d = 0; d < LG_MAX_DIMS && !cand[m].from_file; d++)
        threads |= cand[m].s.parallel[d] || cand[m].s.parallel_reg[d];
    }
    threads |= !plans[i].from_file && schedule_worth_threads(points);
    for (int m = i; m < j; m++) {
      plans[m] = cand[m];
      plans[m].group_size = m == i ? j - i : -1;
      plans[m].group_rows = rows;
      plans[m].group_threads = threads;
    }
    StrBuf sb = {0};
    sb_printf(&sb, "rows: ops %d to %d run in one loop nest over their rows (", i, j - 1);
    for (int q = 0; q < rows; q++)
      sb_printf(&sb, "%s%s", q ? ", " : "", first->dims[q].name);
    sb_printf(&sb, "): '%s'", output_name(k, first));
    for (int m = i + 1; m < j; m++)
      sb_printf(&sb, ", '%s'", output_name(k, &k->ops[m]));
    vec_push(arena, decisions, arena_strdup(arena, sb_cstr(&sb)));
    sb_free(&sb);
    i = j;
  }
}

void row_group_bindings(const OpPlan *plan, const StructuredOp *op, int rows, const char *const *row_values,
                        const char **bound) {
  for (int v = 0; v < plan->view.op->ndims; v++)
    bound[v] = NULL;
  for (int q = 0; q < rows; q++) {
    int v = view_dim_of(&plan->reshape, op->ndims, q);
    if (v >= 0)
      bound[v] = row_values[q];
  }
}
