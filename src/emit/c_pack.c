/* c_pack.c - an op's packed tensors (the schedule's pack), for c_loops.c.
 *
 * Packed tensors are copied, at the innermost level-0 tile loop that moves
 * them, into buffers allocated once per parallel iteration (or once per
 * call outside parallel loops).
 *
 * Inside a model graph (OpPlace.scratch set) nothing is allocated: G_run never
 * allocates (contracts.md section 3). The buffers live in the workspace's
 * scratch area, after the planned intermediates: first the buffers one per
 * op call (outside parallel loops, or shared by a hoisted region), then
 * LG_SCRATCH_THREAD_SLOTS slots of the per-thread buffers. Slots exist only
 * where the schedule packs inside its parallel loop, and those parallel
 * regions ask for at most that many threads (num_threads), so the workspace
 * size is fixed at generation time whatever the run-time thread count; a
 * fixed reservation for every region would waste memory on ops that pack
 * once. A packed constant (OpPlace.prepack_constants) is packed here, at
 * generation time: its array holds every level-0 tile's packed block, in
 * the exact layout the copy loop would produce (zero padding included), one
 * after another, and the op points its buffer at the current tile's block.
 *
 * Calls: c_names.c, c_expr.c, c_runtime.c, c_access.c, c_consts.c. */
#include "emit/c_nest.h"

#include <stdlib.h>
#include <string.h>

static bool tensor_uses_dim(Nest *n, const Operand *o, int d) {
  for (int i = 0; i < n->e->k->tensors[o->tensor].rank; i++)
    if (o->map[i]->index == d)
      return true;
  return false;
}

/* The value of an expression without symbols; false if it has some. */
static bool static_value(const AffineExpr *x, int64_t *v) {
  int64_t a, b;
  switch (x->kind) {
  case AE_CONST:
    *v = x->value;
    return true;
  case AE_NEG:
    if (!static_value(x->lhs, &a))
      return false;
    *v = -a;
    return true;
  case AE_ADD:
  case AE_SUB:
  case AE_MUL:
    if (!static_value(x->lhs, &a) || !static_value(x->rhs, &b))
      return false;
    *v = x->kind == AE_ADD ? a + b : x->kind == AE_SUB ? a - b : a * b;
    return true;
  default:
    return false;
  }
}

/* The constant whose elements tensor t (of the view kernel) reads, through
 * aliases (row-major reshapes of the same bytes); NULL if t is none. */
static const TensorParam *constant_of(const Kernel *k, int t) {
  for (int hops = 0; k->tensors[t].storage == TS_ALIAS && hops <= k->ntensors; hops++)
    t = k->tensors[t].alias_of;
  const TensorParam *tp = &k->tensors[t];
  return tp->storage == TS_CONST && tp->data ? tp : NULL;
}

/* A constant operand whose extents (the op's, and the tensor's) are all
 * static can be packed at generation time. */
static bool prepackable(Nest *n, const Pack *p) {
  const TensorParam *tp = &n->e->k->tensors[p->tensor];
  if (!p->operand || !constant_of(n->e->k, p->tensor))
    return false;
  for (int i = 0; i < tp->rank; i++) {
    int64_t v;
    for (int j = 0; j < i; j++)
      if (p->operand->map[j]->index == p->operand->map[i]->index)
        return false; /* blocks are per dim */
    if (!static_value(tp->shape[i], &v) || !static_value(n->op->dims[p->operand->map[i]->index].extent, &v))
      return false;
  }
  return true;
}

void plan_packs(Nest *n) {
  const Kernel *k = n->e->k;
  for (int t = 0; t < k->ntensors && t < LG_MAX_TENSORS; t++) {
    if (!n->s->pack[t])
      continue;
    Pack *p = &n->packs[n->npacks++];
    memset(p, 0, sizeof *p);
    p->tensor = t;
    p->operand = packable_operand(k, n->op, t);
    p->point = 0;
    for (int i = 0; i < n->nloops; i++)
      if (n->loops[i].band0 && tensor_uses_dim(n, p->operand, n->loops[i].dim))
        p->point = i + 1;
    p->alloc_at = (n->par_first >= 0 && p->point > n->par_first) ? n->par_first + n->par_count : 0;
    p->prepacked = n->place.prepack_constants && prepackable(n, p);
  }
  for (int i = 0; i < n->npacks; i++) {
    Pack *p = &n->packs[i];
    /* nothing can stand between the headers of collapsed loops */
    if (n->par_first >= 0 && p->point > n->par_first && p->point < n->par_first + n->par_count)
      p->point = p->alloc_at = n->par_first + n->par_count;
    /* a copy loop inside a simd loop would break the simd promise */
    if (n->vector_loop >= 0 && p->point > n->vector_loop)
      n->vector_loop = -1;
  }
  /* Hoist the parallel region to the top of the nest when the parallel loop
   * is not outermost, or when per-thread buffers would otherwise be
   * allocated on every iteration of the parallel loop. */
  bool private_packs = false;
  for (int i = 0; i < n->npacks; i++)
    private_packs |= n->packs[i].point > n->par_first && !n->packs[i].prepacked;
  n->hoisted = n->par_first >= 0 && !n->split && (n->par_first > 0 || private_packs);
  if (n->hoisted)
    for (int i = 0; i < n->npacks; i++) {
      n->packs[i].alloc_at = -1;
      n->packs[i].shared = n->packs[i].point <= n->par_first;
    }
}

void name_packs(Nest *n) {
  for (int i = 0; i < n->npacks; i++) {
    Pack *p = &n->packs[i];
    const char *tname = n->e->kn.tensors[p->tensor];
    p->buf = claim(n, "%s_pack", tname);
    if (!n->place.scratch)
      p->raw = claim(n, "%s_pack_mem", tname);
  }
}

bool needs_parens(const char *x) {
  size_t len = strlen(x);
  if (strspn(x, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == len)
    return false;
  if (x[0] != '(' || x[len - 1] != ')')
    return true;
  int depth = 0; /* "(a + b)" is wrapped already; "(a) * (b)" is not */
  for (size_t i = 0; i < len; i++) {
    depth += x[i] == '(' ? 1 : x[i] == ')' ? -1 : 0;
    if (depth == 0 && i < len - 1)
      return true;
  }
  return false;
}

/* Row-major linearisation in Horner form, ((c0 * e1 + c1) * e2 + c2): the
 * index of packed buffers and of the tensors they copy. */
static const char *row_major(Arena *a, const char *const *coords, const char *const *extents, int n) {
  const char *idx = n ? coords[0] : "0";
  for (int i = 1; i < n; i++) {
    bool simple = !needs_parens(idx);
    idx = arena_printf(a, simple ? "%s * %s + %s" : "(%s) * %s + %s", idx, extents[i], coords[i]);
  }
  return idx;
}

/* Which part of the layout each operand dim contributes, outer to inner. */
static void pack_layout(Nest *n, Pack *p) {
  const Operand *o = p->operand;
  p->nlayout = 0;
  for (int pass = 0; pass < 3; pass++)
    for (int i = 0; i < n->op->ndims; i++) {
      int d = pass == 2 ? -1 : n->s->order[i];
      if (pass == 2) { /* inner parts in register-point order */
        int seen = 0;
        for (int l = 0; l < n->nloops; l++)
          if (n->loops[l].kind == LOOP_REG_POINT && seen++ == i)
            d = n->loops[l].dim;
        if (d < 0)
          continue;
      }
      if (!tensor_uses_dim(n, o, d))
        continue;
      bool unrolled = n->s->unroll[d] > 1;
      if ((pass == 1) == unrolled)
        continue;
      p->layout_dim[p->nlayout] = d;
      p->layout_part[p->nlayout] = pass == 0 ? 1 : pass == 1 ? 0 : 2;
      p->nlayout++;
    }
}

static const char *sizeof_elem(Nest *n, int t) {
  return arena_printf(n->e->arena, "sizeof(%s)", c_type_name(n->e->k->tensors[t].type));
}

static int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

/* Buffer size: the largest region any pack point sees, padded to whole
 * register blocks; `value` gets it in bytes, or -1 when it is symbolic. */
static const char *pack_size(Nest *n, const Pack *p, int64_t *value) {
  Emitter *e = n->e;
  StrBuf size = {0};
  sb_printf(&size, "%s", sizeof_elem(n, p->tensor));
  *value = (elem_type_bits(e->k->tensors[p->tensor].type) + 7) / 8;
  const Operand *o = p->operand;
  for (int i = 0; i < e->k->tensors[o->tensor].rank; i++) {
    int d = o->map[i]->index;
    const char *extent = affine_str(e, NULL, n->op->dims[d].extent);
    const char *span = extent;
    int64_t v = -1;
    bool known = static_value(n->op->dims[d].extent, &v);
    bool band0_point = false;
    for (int l = 0; l < p->point; l++)
      if (n->loops[l].dim == d && n->loops[l].kind == LOOP_POINT)
        band0_point = true;
    if (band0_point) {
      span = "1";
      v = 1;
      known = true;
    } else if (n->s->nlevels > 0 && n->s->tile[0][d] > 0) {
      use_helper(e->helpers_used, "lgen_min");
      span = arena_printf(e->arena, "lgen_min(%lld, %s)", (long long)n->s->tile[0][d], extent);
      v = known && v < n->s->tile[0][d] ? v : n->s->tile[0][d];
    }
    int64_t u = n->s->unroll[d];
    if (u > 1) {
      span = arena_printf(e->arena, "(%s + %lld) / %lld * %lld", span, (long long)(u - 1), (long long)u, (long long)u);
      v = round_up(v, u);
    }
    sb_printf(&size, " * (size_t)(%s)", span);
    *value = known && *value >= 0 ? *value * v : -1;
  }
  const char *str = arena_strdup(e->arena, sb_cstr(&size));
  sb_free(&size);
  return str;
}

/* In the scratch area: once-per-call buffers at their offsets, per-thread
 * ones in the slot of the thread (its number is below the slot count: the
 * region asked for no more threads). */
void emit_pack_alloc(Nest *n, Pack *p) {
  Emitter *e = n->e;
  const char *type = c_type_name(e->k->tensors[p->tensor].type);
  if (p->prepacked)
    return;
  LoopNode *a = loops_node(e->arena, LN_ALLOC);
  a->type = type;
  a->name = p->buf;
  if (n->place.scratch) {
    a->alloc = ALLOC_SCRATCH;
    a->base = n->place.scratch;
    a->offset = p->offset;
    if (p->per_thread) {
      use_helper(e->helpers_used, "lgen_thread_slots");
      a->alloc = ALLOC_PER_THREAD;
      a->thread = "LGEN_THREAD_NUM()";
      a->slot = n->slot_bytes;
    }
    put(e, a);
    return;
  }
  int64_t value;
  a->alloc = ALLOC_HEAP;
  a->bytes = pack_size(n, p, &value);
  a->raw = p->raw;
  use_helper(e->helpers_used, "lgen_alloc");
  put(e, a);
}

void emit_pack_free(Nest *n, const Pack *p) {
  if (!n->place.scratch && !p->prepacked)
    put(n->e, loops_call(n->e->arena, "free", 1, &p->raw));
}

/* A decimal number's value (offsets of static layouts are numbers). */
static bool static_value_str(const char *s, int64_t *v) {
  char *end;
  long long x = strtoll(s, &end, 10);
  *v = x;
  return *s && !*end;
}

/* Adds a buffer of `bytes` (C) / `value` (-1: symbolic) to a running total. */
void add_bytes(Nest *n, const char **total, int64_t *total_value, const char *bytes, int64_t value) {
  if (*total_value >= 0 && value >= 0) {
    *total_value += value;
    *total = arena_printf(n->e->arena, "%lld", (long long)*total_value);
  } else {
    *total_value = -1;
    *total = strcmp(*total, "0") == 0 ? bytes : arena_printf(n->e->arena, "%s + %s", *total, bytes);
  }
}

/* Offsets of the buffers in the scratch area (see the top of the file). */
void layout_scratch(Nest *n) {
  Emitter *e = n->e;
  n->once_bytes = n->slot_bytes = "0";
  n->once_value = n->slot_value = 0;
  for (int i = 0; i < n->npacks; i++) {
    Pack *p = &n->packs[i];
    if (p->prepacked)
      continue;
    p->per_thread = n->hoisted ? !p->shared : n->par_first >= 0 && p->alloc_at > n->par_first;
    int64_t v;
    const char *size = pack_size(n, p, &v);
    p->bytes_value = v >= 0 ? round_up(v, 64) : -1;
    p->bytes = v >= 0 ? arena_printf(e->arena, "%lld", (long long)p->bytes_value)
                      : arena_printf(e->arena, "(%s + 63) / 64 * 64", size);
    const char **total = p->per_thread ? &n->slot_bytes : &n->once_bytes;
    int64_t *total_value = p->per_thread ? &n->slot_value : &n->once_value;
    p->offset = *total_value >= 0 ? *total : arena_printf(e->arena, "(%s)", *total);
    add_bytes(n, total, total_value, p->bytes, p->bytes_value);
    n->thread_slots |= p->per_thread;
  }
  if (n->slot_value < 0)
    n->slot_bytes = arena_printf(e->arena, "(%s)", n->slot_bytes);
  /* the thread slots follow the once-per-call buffers */
  for (int i = 0; i < n->npacks; i++) {
    Pack *p = &n->packs[i];
    if (p->prepacked || !p->per_thread)
      continue;
    int64_t at;
    if (n->once_value >= 0 && static_value_str(p->offset, &at))
      p->offset = arena_printf(e->arena, "%lld", (long long)(n->once_value + at));
    else
      p->offset = arena_printf(e->arena, "%s%s + %s", n->once_value >= 0 ? "" : "(",
                               n->once_value >= 0 ? n->once_bytes : arena_printf(e->arena, "%s)", n->once_bytes),
                               p->offset);
  }
}

/* ---- pre-packed constants ---- */

/* How the pack point sees an operand dim: whole, one level-0 tile at a
 * time, or one point of a band-0 point loop. */
typedef enum { PD_WHOLE, PD_TILED, PD_POINT } PrepackKind;

typedef struct {
  PrepackKind kind;
  int64_t extent; /* the op dim's */
  int64_t tile;   /* PD_TILED */
  int64_t count;  /* blocks along the dim */
  int64_t full;   /* padded span of a full block */
  int64_t total;  /* padded spans of all blocks, added up */
} PrepackDim;

static int64_t padded(const Nest *n, int d, int64_t span) {
  return n->s->unroll[d] > 1 ? round_up(span, n->s->unroll[d]) : span;
}

/* The block extent along dim d of block b. */
static int64_t block_extent(const PrepackDim *pd, int64_t b) {
  if (pd->kind == PD_POINT)
    return 1;
  if (pd->kind == PD_WHOLE)
    return pd->extent;
  return pd->extent - b * pd->tile < pd->tile ? pd->extent - b * pd->tile : pd->tile;
}

static void prepack_dims(Nest *n, const Pack *p, PrepackDim *pds) {
  const TensorParam *tp = &n->e->k->tensors[p->tensor];
  for (int i = 0; i < tp->rank; i++) {
    int d = p->operand->map[i]->index;
    PrepackDim *pd = &pds[i];
    static_value(n->op->dims[d].extent, &pd->extent);
    pd->kind = PD_WHOLE;
    for (int l = 0; l < p->point; l++)
      if (n->loops[l].dim == d && n->loops[l].kind == LOOP_POINT)
        pd->kind = PD_POINT;
    if (n->s->nlevels > 0 && n->s->tile[0][d] > 0) {
      pd->kind = PD_TILED;
      pd->tile = n->s->tile[0][d];
    }
    pd->count = pd->kind == PD_POINT ? pd->extent : pd->kind == PD_TILED ? (pd->extent + pd->tile - 1) / pd->tile : 1;
    pd->full = padded(n, d, block_extent(pd, 0));
    pd->total = 0;
    for (int64_t b = 0; b < pd->count; b++)
      pd->total += padded(n, d, block_extent(pd, b));
  }
}

/* Every block, in row-major block order, each in the pack layout (the copy
 * loop of emit_pack_copy, run here). Returns the element count. */
static int64_t prepack_data(Nest *n, const Pack *p, const PrepackDim *pds, unsigned char **out) {
  const TensorParam *tp = &n->e->k->tensors[p->tensor];
  const unsigned char *src = constant_of(n->e->k, p->tensor)->data;
  int rank = tp->rank;
  int64_t esz = (elem_type_bits(tp->type) + 7) / 8, total = 1, shape[LG_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    total *= pds[i].total;
    static_value(tp->shape[i], &shape[i]);
  }
  unsigned char *data = arena_alloc(n->e->arena, (size_t)(total * esz + 1)); /* zeroed: the padding */
  int64_t block[LG_MAX_RANK] = {0}, at = 0;
  for (bool more = total > 0; more;) {
    int64_t base[LG_MAX_DIMS] = {0}, ext[LG_MAX_DIMS] = {0}, lext[LG_MAX_RANK * 2], var[LG_MAX_RANK * 2] = {0};
    for (int i = 0; i < rank; i++) {
      int d = p->operand->map[i]->index;
      base[d] = pds[i].kind == PD_POINT ? block[i] : pds[i].kind == PD_TILED ? block[i] * pds[i].tile : 0;
      ext[d] = block_extent(&pds[i], block[i]);
    }
    int64_t count = 1;
    for (int l = 0; l < p->nlayout; l++) {
      int d = p->layout_dim[l];
      int64_t u = n->s->unroll[d];
      lext[l] = p->layout_part[l] == 0 ? ext[d] : p->layout_part[l] == 1 ? (ext[d] + u - 1) / u : u;
      count *= lext[l];
    }
    for (int64_t e = 0; e < count; e++, at++) {
      int64_t local[LG_MAX_DIMS] = {0};
      bool inside = true;
      for (int l = 0; l < p->nlayout; l++) {
        int d = p->layout_dim[l];
        local[d] = p->layout_part[l] == 1 ? local[d] + var[l] * n->s->unroll[d] : local[d] + var[l];
      }
      for (int l = 0; l < p->nlayout; l++)
        inside &= local[p->layout_dim[l]] < ext[p->layout_dim[l]];
      int64_t from = 0;
      for (int i = 0; i < rank; i++) {
        int d = p->operand->map[i]->index;
        from = from * shape[i] + base[d] + local[d];
      }
      if (inside)
        memcpy(data + at * esz, src + from * esz, (size_t)esz);
      for (int l = p->nlayout - 1; l >= 0 && ++var[l] == lext[l]; l--)
        var[l] = 0;
    }
    int i = rank - 1;
    for (; i >= 0 && ++block[i] == pds[i].count; i--)
      block[i] = 0;
    more = i >= 0;
  }
  *out = data;
  return total;
}

/* The buffer of a pre-packed constant: its array at the current tiles'
 * block. Blocks before this one along dim i are full, so its offset is
 * sum_i (spans of the current block along dims < i) * (block index along
 * i) * (full span along i) * (whole array's spans along dims > i). */
static void emit_prepacked_pointer(Nest *n, const Pack *p) {
  Emitter *e = n->e;
  const TensorParam *tp = &e->k->tensors[p->tensor];
  PrepackDim pds[LG_MAX_RANK];
  prepack_dims(n, p, pds);
  unsigned char *data;
  int64_t count = prepack_data(n, p, pds, &data);
  const char *array = packed_constant(e, n->index, p->tensor, data, count);
  StrBuf offset = {0};
  const char *spans_before = "";
  for (int i = 0; i < tp->rank; i++) {
    int d = p->operand->map[i]->index;
    int64_t u = n->s->unroll[d], after = 1;
    for (int l = i + 1; l < tp->rank; l++)
      after *= pds[l].total;
    const char *index = NULL;
    if (pds[i].kind == PD_POINT)
      index = p->base[d];
    else if (pds[i].kind == PD_TILED)
      index = pds[i].full == pds[i].tile ? p->base[d]
                                          : arena_printf(e->arena, "(%s / %lld * %lld)", p->base[d],
                                                         (long long)pds[i].tile, (long long)pds[i].full);
    if (index && pds[i].count > 1) {
      sb_printf(&offset, "%s%s%s", offset.len ? " + " : "", spans_before, index);
      if (after > 1)
        sb_printf(&offset, " * %lld", (long long)after);
    }
    const char *span = pds[i].kind == PD_POINT ? NULL
                       : pds[i].kind == PD_WHOLE ? arena_printf(e->arena, "%lld", (long long)pds[i].full)
                       : u > 1 ? arena_printf(e->arena, "(%s + %lld) / %lld * %lld", p->ext[d], (long long)(u - 1),
                                              (long long)u, (long long)u)
                               : p->ext[d];
    if (span && needs_parens(span))
      span = arena_printf(e->arena, "(%s)", span);
    if (span)
      spans_before = arena_printf(e->arena, "%s%s * ", spans_before, span);
  }
  const char *type = arena_printf(e->arena, "const %s *restrict", c_type_name(tp->type));
  put(e, loops_let(e->arena, type, p->buf,
                   offset.len ? arena_printf(e->arena, "%s + (%s)", array, sb_cstr(&offset)) : array));
  sb_free(&offset);
}

/* Copies the tensor's region for the current level-0 tiles into the buffer. */
void emit_pack_copy(Nest *n, Pack *p) {
  Emitter *e = n->e;
  const Operand *o = p->operand;
  const TensorParam *t = &e->k->tensors[o->tensor];
  const char *tname = e->kn.tensors[o->tensor];
  if (p->prepacked) /* no tensor name here: the tensor itself is not read */
    put(e, loops_comment(e->arena, arena_printf(e->arena, "%s: packed at generation time", p->buf)));
  else
    put(e, loops_comment(e->arena, arena_printf(e->arena, "pack %s into %s", c_comment_text(e->arena, t->name),
                                                p->buf)));
  for (int i = 0; i < t->rank; i++) {
    int d = o->map[i]->index;
    bool band0_point = false;
    for (int l = 0; l < p->point; l++)
      if (n->loops[l].dim == d && n->loops[l].kind == LOOP_POINT)
        band0_point = true;
    if (band0_point) {
      p->base[d] = n->value[d];
      p->ext[d] = "1";
    } else if (p->prepacked) { /* no variables: reads may need none of them */
      p->base[d] = n->lo[d];
      bool from0 = strcmp(n->lo[d], "0") == 0;
      p->ext[d] = from0 ? n->hi[d] : arena_printf(e->arena, "(%s - %s)", n->hi[d], n->lo[d]);
      if (needs_parens(p->ext[d]))
        p->ext[d] = arena_printf(e->arena, "(%s)", p->ext[d]);
    } else {
      p->base[d] = n->lo[d];
      p->ext[d] = claim(n, "%s_extent", arena_printf(e->arena, "%s_%s", tname, dim_name(n, d)));
      put(e, loops_let(e->arena, "const int64_t", p->ext[d],
                       strcmp(n->lo[d], "0") ? arena_printf(e->arena, "%s - %s", n->hi[d], n->lo[d]) : n->hi[d]));
    }
  }
  pack_layout(n, p);
  if (p->prepacked) {
    for (int i = 0; i < p->nlayout; i++) {
      int d = p->layout_dim[i];
      long long u = (long long)n->s->unroll[d];
      p->layout_ext[i] = p->layout_part[i] == 0   ? p->ext[d]
                         : p->layout_part[i] == 1 ? arena_printf(e->arena, "((%s + %lld) / %lld)", p->ext[d], u - 1, u)
                                                  : arena_printf(e->arena, "%lld", u);
    }
    emit_prepacked_pointer(n, p);
    return;
  }
  const char *vars[LG_MAX_RANK * 2];
  LoopList *outside = e->cur;
  int mark = names_mark(&e->kn.table); /* the copy loops' names end with them */
  for (int i = 0; i < p->nlayout; i++) {
    int d = p->layout_dim[i];
    int64_t u = n->s->unroll[d];
    switch (p->layout_part[i]) {
    case 0:
      p->layout_ext[i] = p->ext[d];
      break;
    case 1:
      p->layout_ext[i] = arena_printf(e->arena, "((%s + %lld) / %lld)", p->ext[d], (long long)(u - 1), (long long)u);
      break;
    default:
      p->layout_ext[i] = arena_printf(e->arena, "%lld", (long long)u);
    }
    vars[i] = claim(n, "%s_p", arena_printf(e->arena, "%s%s", dim_name(n, d),
                                             p->layout_part[i] == 1 ? "_o" : p->layout_part[i] == 2 ? "_i" : ""));
    LoopNode *f = put(e, loops_for(e->arena, vars[i], "0", p->layout_ext[i], 1));
    if (i == 0 && p->shared) /* every thread of the region gets here: share the copy out */
      f->par = PAR_WORKSHARING;
    e->cur = &f->body;
  }
  /* local coordinate of each dim, and whether it is inside the region */
  StrBuf in_range = {0};
  const char *local[LG_MAX_DIMS] = {0};
  for (int i = 0; i < p->nlayout; i++) {
    int d = p->layout_dim[i];
    if (p->layout_part[i] == 0)
      local[d] = vars[i];
  }
  for (int i = 0; i < p->nlayout; i++) {
    int d = p->layout_dim[i];
    if (p->layout_part[i] != 1)
      continue;
    const char *inner = NULL;
    for (int j = 0; j < p->nlayout; j++)
      if (p->layout_dim[j] == d && p->layout_part[j] == 2)
        inner = vars[j];
    local[d] = claim(n, "%s_l", dim_name(n, d));
    put(e, loops_let(e->arena, "const int64_t", local[d],
                     arena_printf(e->arena, "%s * %lld + %s", vars[i], (long long)n->s->unroll[d], inner)));
    sb_printf(&in_range, "%s%s < %s", in_range.len ? " && " : "", local[d], p->ext[d]);
  }
  /* the tensor's element at base + local, row-major */
  const char *coords[LG_MAX_RANK], *extents[LG_MAX_RANK];
  for (int i = 0; i < t->rank; i++) {
    int d = o->map[i]->index;
    coords[i] = strcmp(p->base[d], "0") == 0 ? local[d] : arena_printf(e->arena, "(%s + %s)", p->base[d], local[d]);
    extents[i] = affine_str(e, NULL, t->shape[i]);
  }
  const char *src = arena_printf(e->arena, "%s[%s]", tname, row_major(e->arena, coords, extents, t->rank));
  if (n->place.stride_names) { /* --abi=view (c_view.c): a view's element, through its strides */
    StrBuf sb = {0};
    for (int i = 0; i < t->rank; i++) {
      const char *stride = n->place.stride_names[o->tensor][i];
      sb_printf(&sb, strcmp(stride, "1") == 0 ? "%s%s" : "%s%s * %s", i ? " + " : "", coords[i], stride);
    }
    src = arena_printf(e->arena, "%s[%s]", tname, t->rank ? sb_cstr(&sb) : "0");
    sb_free(&sb);
  }
  const char *dst = arena_printf(e->arena, "%s[%s]", p->buf, row_major(e->arena, vars, p->layout_ext, p->nlayout));
  LoopNode *store = put(e, loops_store(e->arena, dst,
                                       in_range.len ? arena_printf(e->arena, "%s ? %s : (%s)0", sb_cstr(&in_range),
                                                                   src, c_type_name(t->type))
                                                    : src));
  /* the element read, for a pass that computes it here instead (a
   * prologue: c_graph.c, loops_fill_elements) */
  store->source = tname;
  store->element = src;
  store->coords = arena_alloc(e->arena, sizeof(char *) * (size_t)(t->rank + 1));
  memcpy(store->coords, coords, sizeof(char *) * (size_t)t->rank);
  store->ncoords = t->rank;
  e->cur = outside;
  names_release(&e->kn.table, mark);
  sb_free(&in_range);
}

/* The packed element the body reads at the current dim values. */
const char *pack_read(Nest *n, const Pack *p) {
  Emitter *e = n->e;
  const char *coords[LG_MAX_RANK * 2];
  for (int i = 0; i < p->nlayout; i++) {
    int d = p->layout_dim[i];
    const char *coord;
    bool base0 = strcmp(p->base[d], "0") == 0;
    switch (p->layout_part[i]) {
    case 1:
      coord = arena_printf(e->arena, "(%s%s%s) / %lld", n->reg_var[d], base0 ? "" : " - ", base0 ? "" : p->base[d],
                           (long long)n->s->unroll[d]);
      break;
    case 2:
      coord = n->point_off[d] ? arena_printf(e->arena, "(%s + %s)", n->point_off[d], n->point_var[d]) : n->point_var[d];
      break;
    default:
      coord = base0 ? n->value[d] : arena_printf(e->arena, "%s - %s", n->value[d], p->base[d]);
    }
    coords[i] = coord;
  }
  return arena_printf(e->arena, "%s[%s]", p->buf, row_major(e->arena, coords, p->layout_ext, p->nlayout));
}

