/* c_loops.c - one StructuredOp under its Schedule, as a C loop nest.
 *
 * The nest is built in bands, each following the schedule's dim order:
 *   band 0     level-0 tile loops, and the only loop of every parallel dim
 *              that is neither tiled nor register-blocked
 *   levels 1+  deeper tile loops
 *   reg tiles  loops over register blocks (step = unroll factor)
 *   points     the remaining point loops (tiled dims, reductions)
 *   reg points the register block itself, constant extent, vector dim last
 * Partial tiles are exact: every tile loop computes its end with lgen_min.
 *
 * Outputs live in accumulators across the innermost run of reduction and
 * register-point loops: a scalar, or an array indexed by the register-point
 * loops, loaded before that run and stored after it. The order of each
 * output element's reduction iterations is always the domain's own, so
 * every schedule that does not split a reduction gives bit-identical
 * results. A register block is written once, as a function of the file
 * whose extents are parameters (an LN_PROC, see emit_region), and called
 * with constant extents for full blocks and the sub-blocks of partial ones
 * (compilers inline the calls, unroll them and keep the accumulators in
 * registers), and with run-time extents for the rest of the edges.
 *
 * Packed tensors are copied, at the innermost level-0 tile loop that moves
 * them, into buffers allocated once per parallel iteration (or once per
 * call outside parallel loops).
 *
 * Inside a model graph (e->scratch set) nothing is allocated: G_run never
 * allocates (contracts.md section 3). The buffers live in the workspace's
 * scratch area, after the planned intermediates: first the buffers one per
 * op call (outside parallel loops, or shared by a hoisted region), then
 * LG_SCRATCH_THREAD_SLOTS slots of the per-thread buffers. Slots exist only
 * where the schedule packs inside its parallel loop, and those parallel
 * regions ask for at most that many threads (num_threads), so the workspace
 * size is fixed at generation time whatever the run-time thread count; a
 * fixed reservation for every region would waste memory on ops that pack
 * once. A packed constant (e->prepack_constants) is packed here, at
 * generation time: its array holds every level-0 tile's packed block, in
 * the exact layout the copy loop would produce (zero padding included), one
 * after another, and the op points its buffer at the current tile's block. */
#include "emit/c_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int tensor;
  const Operand *operand;
  int point;    /* packed just before loop `point` opens */
  int alloc_at; /* buffer allocated just before loop `alloc_at` opens; -1: by the region */
  bool shared;  /* in a hoisted region: one buffer for all threads, packed together */
  bool prepacked;  /* a constant, packed at generation time (no buffer, no copy) */
  bool per_thread; /* in the scratch area: one buffer per thread slot */
  const char *bytes;  /* in the scratch area: its size, a multiple of 64 (C) */
  int64_t bytes_value; /* the same, -1 when symbolic */
  const char *offset; /* from the scratch start, or from the thread's slot */
  const char *buf, *raw;
  /* layout: outer parts of unrolled dims, other dims, inner parts */
  int nlayout;
  int layout_dim[LG_MAX_RANK * 2];
  int layout_part[LG_MAX_RANK * 2]; /* 0 whole, 1 outer, 2 inner */
  const char *layout_ext[LG_MAX_RANK * 2];
  const char *base[LG_MAX_DIMS]; /* per op dim, at the pack point */
  const char *ext[LG_MAX_DIMS];
} Pack;

typedef struct Nest {
  Emitter *e;
  const StructuredOp *op;
  const Schedule *s;
  Loop loops[LG_MAX_LOOPS];
  int nloops;
  int acc_start;    /* accumulators are loaded before loop acc_start; -1: none */
  int region;       /* full/partial register-block split before this loop; -1: none */
  int par_first;    /* the omp parallel loop group; -1: none */
  int par_count;
  bool hoisted;     /* one parallel region around the nest, `omp for` inside */
  int vector_loop;  /* gets omp simd; -1: none */
  const char *vector_clause; /* reduction clause of a vectorised reduction loop */
  bool split;       /* the parallel loop is a reduction split across threads */
  bool epilogue_at_store; /* the op's epilogue is applied to its accumulators
                             (else it runs as a loop nest of its own after) */
  bool init_at_load;      /* the op's init gives its accumulators their first
                             value (else it runs as a loop nest before) */
  Pack packs[LG_MAX_TENSORS];
  int npacks;
  /* scratch area (graphs): buffers once per call, then one slot per thread */
  const char *once_bytes, *slot_bytes;
  int64_t once_value, slot_value;
  bool thread_slots; /* some buffer is per thread: cap the region's threads */
  /* per dim, as loops open */
  const char *lo[LG_MAX_DIMS], *hi[LG_MAX_DIMS], *value[LG_MAX_DIMS];
  const char *reg_var[LG_MAX_DIMS], *reg_len[LG_MAX_DIMS], *point_var[LG_MAX_DIMS];
  const char **acc; /* per yield */
  /* While the register block's function is built (emit_region): dim d's
   * block has the extent block_len[d] and starts at point_off[d] (NULL: 0)
   * within the register tile, both its parameters. */
  const char *block_len[LG_MAX_DIMS];
  const char *point_off[LG_MAX_DIMS];
  struct Nest *next_spare; /* in Emitter.spare_nests */
} Nest;

/* A Nest is large (a Pack per tensor) and a graph builds one per op: one
 * per op in the arena made memory grow with ops x LG_MAX_TENSORS. Released
 * Nests are reused (the arena still owns them, so an error's longjmp out of
 * a nest leaks nothing). */
static Nest *nest_acquire(Emitter *e) {
  Nest *n = e->spare_nests;
  if (n)
    e->spare_nests = n->next_spare;
  else
    n = arena_alloc(e->arena, sizeof *n);
  /* all but the packs, which plan_packs clears one by one as it adds them:
   * clearing all LG_MAX_TENSORS of them per op was most of the memset
   * traffic of generating a 3,000-node graph */
  memset(n, 0, offsetof(Nest, packs));
  memset((char *)n + offsetof(Nest, packs) + sizeof n->packs, 0,
         sizeof *n - offsetof(Nest, packs) - sizeof n->packs);
  return n;
}

static void nest_release(Emitter *e, Nest *n) {
  n->next_spare = e->spare_nests;
  e->spare_nests = n;
}

/* ---- one iteration ---- */

static int *use_counts(const StructuredOp *op, Arena *arena) {
  int *uses = arena_alloc(arena, sizeof(int) * (size_t)(op->nnodes + 1));
  for (int i = 0; i < op->nnodes; i++)
    for (int a = 0; a < op->nodes[i].nargs; a++)
      uses[op->nodes[i].args[a]]++;
  for (int y = 0; y < op->nyields; y++)
    uses[op->yields[y].value]++;
  return uses;
}

/* "(a + b)" -> "a + b" when the parentheses enclose the whole expression
 * (a copy in the arena either way). */
static const char *strip_parens(Emitter *e, const char *s) {
  size_t n = strlen(s);
  if (n < 2 || s[0] != '(' || s[n - 1] != ')')
    return arena_strdup(e->arena, s);
  int depth = 0;
  for (size_t i = 0; i < n; i++) {
    depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
    if (depth == 0 && i < n - 1)
      return arena_strdup(e->arena, s);
  }
  return arena_strndup(e->arena, s + 1, n - 2);
}

/* Whether payload node i reads an array element: memory, or a register
 * block's accumulator array (not a scalar accumulator variable). */
static bool loads(const StructuredOp *op, const char **operand_values, int i) {
  return op->nodes[i].kind == PN_READ && strchr(operand_values[op->nodes[i].operand], '[');
}

/* The statements of one iteration: temporaries for shared subexpressions,
 * for loads used twice, and for a select's two values, then one assignment
 * per yield to `targets[y]`. A select's values are computed before it,
 * both: in `c ? a[i] : b[i]` the loads are conditional, which clang does
 * not vectorise (under `omp simd` it then fails with -Werror); every access
 * is in bounds at every point of the domain, so loading both is safe, and
 * it is what a vectorised select does anyway. */
static void emit_body(Emitter *e, const char **operand_values, const char **targets) {
  const StructuredOp *op = e->op;
  ExprCtx ctx = {.op = op, .operand_values = operand_values, .helpers = e->helpers,
                 .helper_names = e->helper_names, .arena = e->arena, .dim_names = e->dim_names,
                 .size_names = (const char *const *)e->kn.sizes};
  ctx.node_names = arena_alloc(e->arena, sizeof(char *) * (size_t)(op->nnodes + 1));
  int *uses = use_counts(op, e->arena);
  bool *branch = arena_alloc(e->arena, (size_t)op->nnodes + 1);
  for (int i = 0; i < op->nnodes; i++)
    if (op->nodes[i].kind == PN_OP && op->nodes[i].op == SOP_SELECT)
      for (int a = 1; a < 3; a++)
        branch[op->nodes[i].args[a]] = true;
  for (int i = 0; i < op->nnodes; i++) {
    bool shared = uses[i] >= 2 && (op->nodes[i].kind == PN_OP || loads(op, operand_values, i));
    bool value = branch[i] && (op->nodes[i].kind == PN_OP || loads(op, operand_values, i));
    if (!shared && !value)
      continue;
    StrBuf sb = {0};
    c_expr(&sb, &ctx, i);
    const char *name = names_claim(&e->kn.table, arena_printf(e->arena, "t%d", i));
    put(e, loops_let(e->arena, arena_printf(e->arena, "const %s", c_type_name(op->nodes[i].type)), name,
                     strip_parens(e, sb_cstr(&sb))));
    ctx.node_names[i] = name;
    sb_free(&sb);
  }
  const char **values = arena_alloc(e->arena, sizeof(char *) * (size_t)op->nyields);
  for (int y = 0; y < op->nyields; y++) {
    StrBuf sb = {0};
    c_expr(&sb, &ctx, op->yields[y].value);
    values[y] = arena_strdup(e->arena, sb_cstr(&sb));
    sb_free(&sb);
  }
  if (op->nyields == 1) {
    put(e, loops_store(e->arena, targets[0], strip_parens(e, values[0])));
  } else {
    /* every value is computed from the old outputs before any is stored */
    const char **tmp = arena_alloc(e->arena, sizeof(char *) * (size_t)op->nyields);
    for (int y = 0; y < op->nyields; y++) {
      tmp[y] = names_claim(&e->kn.table, arena_printf(e->arena, "y%d", y));
      put(e, loops_let(e->arena, arena_printf(e->arena, "const %s", c_type_name(op->nodes[op->yields[y].value].type)),
                       tmp[y], strip_parens(e, values[y])));
    }
    for (int y = 0; y < op->nyields; y++)
      put(e, loops_store(e->arena, targets[y], tmp[y]));
  }
  e->needs_math |= ctx.needs_math;
  e->needs_fma |= ctx.needs_fma;
  e->widens_f16 |= ctx.widens_f16;
  e->narrows_f16 |= ctx.narrows_f16;
}

/* ---- building the nest ---- */

static bool has_reduction(const StructuredOp *op) {
  for (int d = 0; d < op->ndims; d++)
    if (op->dims[d].kind == ITER_REDUCTION)
      return true;
  return false;
}

static bool map_has_division(const AffineExpr *x) {
  if (!x)
    return false;
  if (x->kind == AE_FLOORDIV || x->kind == AE_CEILDIV || x->kind == AE_MOD)
    return true;
  return map_has_division(x->lhs) || map_has_division(x->rhs);
}

/* `omp simd` forces vectorisation, and clang warns when it cannot comply, so
 * the pragma goes only on bodies compilers do vectorise without fast-math:
 * no libm calls, no f16 (software conversions without _Float16), no integer
 * division, no floordiv/ceildiv/mod in an index. */
static bool simd_friendly(const StructuredOp *op, const Kernel *k) {
  for (int i = 0; i < op->nnodes; i++) {
    const PayloadNode *n = &op->nodes[i];
    if (n->type == TY_F16)
      return false;
    /* f32 exp, log, tanh and erf are c_expr.c's vectorisable helpers; f64
     * ones (and sqrt, pow) call libm, which does not vectorise */
    bool libm_call = n->op == SOP_SQRT || n->op == SOP_POWF || scalar_op_is_libm(n->op) ||
                     (n->type == TY_F64 && (n->op == SOP_EXP || n->op == SOP_LOG || n->op == SOP_TANH || n->op == SOP_ERF));
    if (n->kind == PN_OP && (libm_call || n->op == SOP_DIVIS || n->op == SOP_DIVIU))
      return false;
  }
  for (int o = 0; o < op->noperands; o++)
    for (int i = 0; i < k->tensors[op->operands[o].tensor].rank; i++)
      if (!op->operands[o].shape_only && map_has_division(op->operands[o].map[i]))
        return false;
  return true;
}

/* clang 14 does not vectorise a worksharing loop that stores 8- or 64-bit
 * integers ("could not determine number of loop iterations": such stores
 * may alias the bound OpenMP keeps in memory; plain `omp simd` loops it
 * does), and then warns of the `simd` it was asked for. */
static bool stores_8_or_64_bit_ints(const StructuredOp *op, const Kernel *k) {
  for (int y = 0; y < op->nyields; y++) {
    ElemType t = k->tensors[op->operands[op->yields[y].operand].tensor].type;
    if (!elem_type_is_float(t) && (elem_type_bits(t) == 8 || elem_type_bits(t) == 64))
      return true;
  }
  return false;
}

/* Whether payload node `to` is among the nodes `from` is computed from. */
static bool op_node_reaches(const StructuredOp *op, int from, int to) {
  if (from == to)
    return true;
  const PayloadNode *x = &op->nodes[from];
  for (int i = 0; i < x->nargs; i++)
    if (op_node_reaches(op, x->args[i], to))
      return true;
  return false;
}

/* The OpenMP reduction clause for the accumulator of a reduction loop, or
 * NULL when the payload is no associative combine OpenMP can split. An op
 * with several yields (sibling reductions sharing one pass, graph/fuse/fuse.c)
 * gets one clause per accumulator, when every yield is such a combine and
 * none reads another's accumulator. */
static const char *reduction_clause(Nest *n, bool for_simd) {
  int x;
  const StructuredOp *op = n->op;
  const char *clauses = NULL;
  for (int y = 0; y < op->nyields; y++) {
    StructuredOp view = *op;
    view.nyields = 1;
    view.yields = &op->yields[y];
    Combiner c = match_reduction(&view, 0, &x);
    ElemType t = op->nodes[op->yields[y].value].type;
    /* OpenMP combines integer partials with plain signed arithmetic, which can
     * overflow where the payload's wrapping add does not: floats only */
    if (c == COMBINE_NONE || !elem_type_is_float(t) || t == TY_F16)
      return NULL;
    /* float max/min reductions need no-NaN semantics to vectorise */
    if (for_simd && (c == COMBINE_MAX || c == COMBINE_MIN) && elem_type_is_float(t))
      return NULL;
    for (int z = 0; z < op->nyields; z++)
      for (int i = 0; i < op->nnodes && z != y; i++)
        if (op->nodes[i].kind == PN_READ && op->nodes[i].operand == op->yields[z].operand &&
            op_node_reaches(op, op->yields[y].value, i))
          return NULL;
    static const char *const ops[] = {[COMBINE_ADD] = "+", [COMBINE_MUL] = "*", [COMBINE_MAX] = "max",
                                      [COMBINE_MIN] = "min"};
    const char *one = arena_printf(n->e->arena, "reduction(%s:%s)", ops[c], n->acc[y]);
    clauses = clauses ? arena_printf(n->e->arena, "%s %s", clauses, one) : one;
  }
  return clauses;
}

static void plan(Nest *n) {
  const StructuredOp *op = n->op;
  const Schedule *s = n->s;
  bool bound[LG_MAX_DIMS] = {false};
  for (int d = 0; d < op->ndims && n->e->bound_dims; d++)
    bound[d] = n->e->bound_dims[d] != NULL;
  n->nloops = schedule_loops(op, s, bound, n->loops);
  n->acc_start = -1;
  if (has_reduction(op)) {
    int i = n->nloops;
    while (i > 0 && (op->dims[n->loops[i - 1].dim].kind == ITER_REDUCTION || n->loops[i - 1].kind == LOOP_REG_POINT))
      i--;
    if (i < n->nloops)
      n->acc_start = i;
  }
  n->region = -1;
  for (int i = 0; i < n->nloops; i++)
    if (n->loops[i].kind == LOOP_REG_TILE) {
      for (int j = 0; j < n->nloops; j++)
        if (n->loops[j].kind == LOOP_REG_POINT) {
          n->region = n->acc_start >= 0 && n->acc_start < j ? n->acc_start : j;
          break;
        }
      break;
    }
  n->par_first = schedule_parallel_loop(op, s, n->loops, n->nloops, &n->par_count);
  if (n->par_first >= 0)
    n->split = op->dims[n->loops[n->par_first].dim].kind == ITER_REDUCTION;
  /* accumulators that hold a whole reduction run: its first and last
   * iterations are known there (no register tile of a reduction dim
   * outside them) */
  bool whole = n->acc_start >= 0 && !n->split;
  for (int i = 0; i < n->acc_start && whole; i++)
    whole = !(n->loops[i].kind == LOOP_REG_TILE && op->dims[n->loops[i].dim].kind == ITER_REDUCTION);
  n->epilogue_at_store = op->epilogue && whole;
  n->init_at_load = op->init && whole;
  n->vector_loop = -1;
  if (s->vector_dim >= 0 && n->nloops > 0 && n->loops[n->nloops - 1].dim == s->vector_dim &&
      simd_friendly(op, n->e->k)) {
    bool reduction = op->dims[s->vector_dim].kind == ITER_REDUCTION;
    if (!reduction || (n->acc_start >= 0 && n->region < 0 && !n->split))
      n->vector_loop = n->nloops - 1;
  }
}

/* ---- names ---- */

static const char *claim(Nest *n, const char *fmt, const char *name) {
  return names_claim(&n->e->kn.table, arena_printf(n->e->arena, fmt, name));
}

static const char *dim_name(Nest *n, int d) { return n->op->dims[d].name; }

/* The comment over a comprehension (a spec's, or a graph op's without
 * node names): what it writes and what fusion put into its nest
 * ("comprehension 1: H, with its init and epilogue"); a graph op's comment
 * names its nodes the same way (StructuredOp.origin). No line numbers: a
 * graph's ops have none from a binary ONNX file, and its binary and JSON
 * forms must give the same C. */
static const char *comprehension_comment(Emitter *e, const StructuredOp *op, int index) {
  StrBuf sb = {0};
  sb_printf(&sb, "comprehension %d: ", index + 1);
  for (int y = 0; y < op->nyields; y++)
    sb_printf(&sb, "%s%s", y ? ", " : "", e->k->tensors[op->operands[op->yields[y].operand].tensor].name);
  if (op->init || op->epilogue)
    sb_printf(&sb, ", with its %s", op->init && op->epilogue ? "init and epilogue" : op->init ? "init" : "epilogue");
  const char *text = c_comment_text(e->arena, sb.data ? sb.data : "");
  sb_free(&sb);
  return text;
}

/* ---- packing ---- */

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

static void plan_packs(Nest *n) {
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
    p->prepacked = n->e->prepack_constants && prepackable(n, p);
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

static void name_packs(Nest *n) {
  for (int i = 0; i < n->npacks; i++) {
    Pack *p = &n->packs[i];
    const char *tname = n->e->kn.tensors[p->tensor];
    p->buf = claim(n, "%s_pack", tname);
    if (!n->e->scratch)
      p->raw = claim(n, "%s_pack_mem", tname);
  }
}

/* Row-major linearisation in Horner form, ((c0 * e1 + c1) * e2 + c2): the
 * index of packed buffers and of the tensors they copy. */
static bool needs_parens(const char *x) {
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
    const char *extent = affine_str(e, n->op->dims[d].extent);
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
static void emit_pack_alloc(Nest *n, Pack *p) {
  Emitter *e = n->e;
  const char *type = c_type_name(e->k->tensors[p->tensor].type);
  if (p->prepacked)
    return;
  LoopNode *a = loops_node(e->arena, LN_ALLOC);
  a->type = type;
  a->name = p->buf;
  if (e->scratch) {
    a->alloc = ALLOC_SCRATCH;
    a->base = e->scratch;
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

static void emit_pack_free(Nest *n, const Pack *p) {
  if (!n->e->scratch && !p->prepacked)
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
static void add_bytes(Nest *n, const char **total, int64_t *total_value, const char *bytes, int64_t value) {
  if (*total_value >= 0 && value >= 0) {
    *total_value += value;
    *total = arena_printf(n->e->arena, "%lld", (long long)*total_value);
  } else {
    *total_value = -1;
    *total = strcmp(*total, "0") == 0 ? bytes : arena_printf(n->e->arena, "%s + %s", *total, bytes);
  }
}

/* Offsets of the buffers in the scratch area (see the top of the file). */
static void layout_scratch(Nest *n) {
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
  const char *array = packed_constant(e, p->tensor, data, count);
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
/* The prologue's value (schedule/prologue.c) at the element of its output
 * whose coordinates are coords: its payload as one C expression, with its
 * dim at output position i valued coords[i]. */
static const char *prologue_value(Nest *n, const char *const *coords) {
  Emitter *e = n->e;
  const StructuredOp *P = e->prologue;
  const Operand *out = &P->operands[P->yields[0].operand];
  const TensorParam *seen = &e->k->tensors[e->prologue_tensor]; /* the op's view: unit positions may be gone */
  /* the tensor's shape in the kernel (c_graph.c's with_prologue made the
   * view, whose base is the kernel) */
  const Kernel *base = e->k->view_base ? e->k->view_base : e->k;
  AffineExpr *const *shape = base->tensors[emitter_kernel_tensor(e, e->prologue_tensor)].shape;
  const char **names = arena_alloc(e->arena, sizeof(char *) * (size_t)(P->ndims + 1));
  for (int i = 0, j = 0; i < P->ndims; i++) {
    const AffineExpr *extent = shape[i];
    bool kept = j < seen->rank && affine_equal(seen->shape[j], extent);
    names[out->map[i]->index] = kept ? arena_printf(e->arena, "(%s)", coords[j++]) : "0";
  }
  const StructuredOp *saved_op = e->op;
  const char **saved_names = e->dim_names;
  e->op = P;
  e->dim_names = names;
  const char **values = arena_alloc(e->arena, sizeof(char *) * (size_t)(P->noperands + 1));
  for (int o = 0; o < P->noperands; o++)
    values[o] = P->operands[o].shape_only ? "" : access_str(e, &P->operands[o]);
  ExprCtx ctx = {.op = P, .operand_values = values, .helpers = e->helpers, .helper_names = e->helper_names,
                 .arena = e->arena, .dim_names = names, .size_names = (const char *const *)e->kn.sizes};
  ctx.node_names = arena_alloc(e->arena, sizeof(char *) * (size_t)(P->nnodes + 1));
  StrBuf sb = {0};
  c_expr(&sb, &ctx, P->yields[0].value);
  const char *v = arena_printf(e->arena, "(%s)", sb_cstr(&sb));
  sb_free(&sb);
  e->needs_math |= ctx.needs_math;
  e->needs_fma |= ctx.needs_fma;
  e->widens_f16 |= ctx.widens_f16;
  e->narrows_f16 |= ctx.narrows_f16;
  e->op = saved_op;
  e->dim_names = saved_names;
  return v;
}

static void emit_pack_copy(Nest *n, Pack *p) {
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
    extents[i] = affine_str(e, t->shape[i]);
  }
  const char *src = arena_printf(e->arena, "%s[%s]", tname, row_major(e->arena, coords, extents, t->rank));
  if (e->stride_names) { /* --abi=view (c_view.c): a view's element, through its strides */
    StrBuf sb = {0};
    for (int i = 0; i < t->rank; i++) {
      const char *stride = e->stride_names[o->tensor][i];
      sb_printf(&sb, strcmp(stride, "1") == 0 ? "%s%s" : "%s%s * %s", i ? " + " : "", coords[i], stride);
    }
    src = arena_printf(e->arena, "%s[%s]", tname, t->rank ? sb_cstr(&sb) : "0");
    sb_free(&sb);
  }
  if (e->prologue && e->prologue_tensor == o->tensor)
    src = prologue_value(n, coords);
  const char *dst = arena_printf(e->arena, "%s[%s]", p->buf, row_major(e->arena, vars, p->layout_ext, p->nlayout));
  if (in_range.len)
    put(e, loops_store(e->arena, dst, arena_printf(e->arena, "%s ? %s : (%s)0", sb_cstr(&in_range), src,
                                                   c_type_name(t->type))));
  else
    put(e, loops_store(e->arena, dst, src));
  e->cur = outside;
  names_release(&e->kn.table, mark);
  sb_free(&in_range);
}

/* The packed element the body reads at the current dim values. */
static const char *pack_read(Nest *n, const Pack *p) {
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

/* ---- loops ---- */

/* The extent of d's register-point loop: the block function's parameter. */
static const char *block_bound(Nest *n, int d) { return n->block_len[d] ? n->block_len[d] : n->reg_len[d]; }

/* Dim d's value at register point v: its tile start, the sub-block offset,
 * the point. */
static const char *point_value(Nest *n, int d, const char *v) {
  if (n->point_off[d])
    return arena_printf(n->e->arena, "(%s + %s + %s)", n->reg_var[d], n->point_off[d], v);
  return arena_printf(n->e->arena, "(%s + %s)", n->reg_var[d], v);
}

/* The lengths dim d's register blocks can have, as a set (bit l - 1 for
 * length l): those its static extent gives, or all up to its unroll factor
 * when the extent is symbolic. Each tile loop of d cuts every span of the
 * dim into spans of its step and one of the remainder, and the register
 * tile cuts the innermost spans into blocks likewise. Calls for lengths no
 * block has would only cost compile time (ResNet-50's 14-wide rows in
 * blocks of 3 never leave 1). */
static uint64_t block_lengths(const Nest *n, int d) {
  int64_t unroll = n->s->unroll[d];
  uint64_t all = unroll >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << unroll) - 1;
  const AffineExpr *extent = n->op->dims[d].extent;
  if (extent->kind != AE_CONST || extent->value <= 0 || (n->e->bound_dims && n->e->bound_dims[d]))
    return all;
  int64_t spans[1 << 6] = {extent->value};
  int nspans = 1;
  for (int j = 0; j < n->nloops; j++) {
    const Loop *l = &n->loops[j];
    if (l->dim != d || (l->kind != LOOP_TILE && l->kind != LOOP_REG_TILE) || l->step <= 0)
      continue;
    int64_t cut[1 << 6];
    int ncut = 0;
    for (int k = 0; k < nspans; k++) {
      int64_t pieces[2] = {spans[k] >= l->step ? l->step : 0, spans[k] % l->step};
      for (int q = 0; q < 2; q++) {
        bool seen = pieces[q] == 0;
        for (int m = 0; m < ncut && !seen; m++)
          seen = cut[m] == pieces[q];
        if (seen)
          continue;
        if (ncut == (int)(sizeof cut / sizeof *cut))
          return all;
        cut[ncut++] = pieces[q];
      }
    }
    memcpy(spans, cut, sizeof *cut * (size_t)ncut);
    nspans = ncut;
    if (l->kind == LOOP_REG_TILE)
      break;
  }
  uint64_t lengths = 0;
  for (int k = 0; k < nspans; k++) {
    if (spans[k] < 1 || spans[k] > unroll)
      return all;
    lengths |= (uint64_t)1 << (spans[k] - 1);
  }
  return lengths ? lengths : all;
}

static bool has_length(uint64_t lengths, int64_t l) { return l >= 1 && l <= 64 && (lengths >> (l - 1) & 1); }

/* The one length of a set that has one, else 0. */
static int64_t only_length(uint64_t lengths) {
  if (!lengths || (lengths & (lengths - 1)))
    return 0;
  int64_t l = 1;
  while (!(lengths & 1)) {
    lengths >>= 1;
    l++;
  }
  return l;
}

/* The num_threads argument that keeps a parallel region `at` within the
 * scratch area's thread slots, when it uses them (NULL: none). `at` gets
 * the thread_slots mark too: when loops_join_region moves it into a
 * graph's region, that region takes the cap. */
static const char *thread_cap(Nest *n, LoopNode *at) {
  if (!n->thread_slots)
    return NULL;
  at->thread_slots = true;
  use_helper(n->e->helpers_used, "lgen_thread_slots");
  return arena_printf(n->e->arena, "lgen_thread_slots(%d)", LG_SCRATCH_THREAD_SLOTS);
}

/* The OpenMP marks of loop i: the parallel group's first loop, and the
 * vector loop. */
static void mark_loop(Nest *n, int i, LoopNode *f) {
  bool vector = i == n->vector_loop;
  bool in_group = n->par_first >= 0 && i > n->par_first && i < n->par_first + n->par_count;
  if (in_group)
    return; /* collapsed into the group's pragma */
  if (i == n->par_first) {
    for (int j = i; j < i + n->par_count; j++)
      vector |= j == n->vector_loop;
    f->collapse = n->par_count;
    if (n->split) {
      f->reduction = reduction_clause(n, vector);
      if (!f->reduction)
        vector = false;
    }
    if (n->hoisted) { /* the nest's region is open around it */
      f->par = PAR_WORKSHARING;
    } else {
      f->par = PAR_REGION;
      f->threads = thread_cap(n, f);
    }
    f->simd = vector;
    if (vector && stores_8_or_64_bit_ints(n->op, n->e->k)) {
      f->simd_not_clang = true;
      use_helper(n->e->helpers_used, "LGEN_OMP_SIMD_NOT_CLANG");
    }
    return;
  }
  if (!vector)
    return;
  if (n->op->dims[n->loops[i].dim].kind == ITER_REDUCTION) {
    f->reduction = reduction_clause(n, true);
    f->simd = f->reduction != NULL;
    return;
  }
  f->simd = true;
}

/* Opens loop i: appends it and builds into its body; the declarations that
 * go inside it go to decls (put in after the headers of a collapsed
 * group). */
static void open_loop(Nest *n, int i, LoopList *decls) {
  Emitter *e = n->e;
  const Loop *l = &n->loops[i];
  int d = l->dim;
  const char *lo = n->lo[d], *hi = n->hi[d];
  LoopNode *f = NULL;
  switch (l->kind) {
  case LOOP_TILE: {
    const char *v = claim(n, "%s", arena_printf(e->arena, "%s_t%d", dim_name(n, d), l->level));
    const char *end = claim(n, "%s_end", v);
    f = loops_for(e->arena, v, lo, hi, l->step);
    use_helper(e->helpers_used, "lgen_min");
    loops_append(decls, loops_let(e->arena, "const int64_t", end,
                                  arena_printf(e->arena, "lgen_min(%s + %lld, %s)", v, (long long)l->step, hi)));
    n->lo[d] = v;
    n->hi[d] = end;
    break;
  }
  case LOOP_REG_TILE: {
    const char *v = claim(n, "%s_r", dim_name(n, d));
    f = loops_for(e->arena, v, lo, hi, l->step);
    n->reg_var[d] = v;
    int64_t only = only_length(block_lengths(n, d));
    if (only) { /* every block has this length (full, or the one partial block) */
      n->reg_len[d] = arena_printf(e->arena, "%lld", (long long)only);
      break;
    }
    const char *len = claim(n, "%s_len", dim_name(n, d));
    use_helper(e->helpers_used, "lgen_min");
    loops_append(decls, loops_let(e->arena, "const int64_t", len,
                                  arena_printf(e->arena, "lgen_min(%lld, %s - %s)", (long long)l->step, hi, v)));
    n->reg_len[d] = len;
    break;
  }
  case LOOP_POINT: {
    const char *v = claim(n, "%s", dim_name(n, d));
    f = loops_for(e->arena, v, lo, hi, 1);
    n->value[d] = v;
    break;
  }
  case LOOP_REG_POINT: {
    const char *v = n->point_var[d];
    f = loops_for(e->arena, v, "0", block_bound(n, d), 1);
    n->value[d] = point_value(n, d, v);
    break;
  }
  }
  mark_loop(n, i, f);
  put(e, f);
  e->cur = &f->body;
}

/* ---- bodies and accumulators ---- */

static const Pack *pack_of(const Nest *n, int tensor) {
  for (int i = 0; i < n->npacks; i++)
    if (n->packs[i].tensor == tensor)
      return &n->packs[i];
  return NULL;
}

static int yield_of(const StructuredOp *op, int operand) {
  for (int y = 0; y < op->nyields; y++)
    if (op->yields[y].operand == operand)
      return y;
  return -1;
}

/* "[m_i][n_i]" (index) or "[8][32]" (extents: a full block's) of the
 * accumulator array: the register-point loops inside the accumulator region. */
static const char *acc_subscript(Nest *n, bool extents) {
  StrBuf sb = {0};
  for (int i = n->acc_start; i < n->nloops; i++) {
    const Loop *l = &n->loops[i];
    if (l->kind != LOOP_REG_POINT)
      continue;
    if (extents)
      sb_printf(&sb, "[%lld]", (long long)n->s->unroll[l->dim]);
    else
      sb_printf(&sb, "[%s]", n->point_var[l->dim]);
  }
  const char *s = arena_strdup(n->e->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

/* The pad value of a guarded operand as a C constant of its tensor's type
 * (integers clamped to the type's range). */
static const char *pad_literal(Emitter *e, const Operand *o) {
  ElemType t = e->k->tensors[o->tensor].type;
  StrBuf sb = {0};
  if (t == TY_F16) {
    e->narrows_f16 = true;
    sb_puts(&sb, "LGEN_F32_TO_F16(");
    c_float_literal(&sb, o->pad_value, TY_F32);
    sb_putc(&sb, ')');
  } else if (elem_type_is_float(t)) {
    c_float_literal(&sb, o->pad_value, t);
  } else {
    c_int_literal(&sb, elem_int_saturate(t, o->pad_value), t);
  }
  const char *s = arena_strdup(e->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

/* Can index position `pos` of a guarded operand leave its tensor? Not when
 * it is a bare dim of the tensor's extent, a constant inside it, or an
 * index bounds.c proves inside for every size (a grouped conv's channel). */
static bool index_may_leave(Emitter *e, const Operand *o, int pos) {
  const AffineExpr *x = o->map[pos], *extent = e->k->tensors[o->tensor].shape[pos];
  if (x->kind == AE_DIM)
    return !affine_equal(e->op->dims[x->index].extent, extent);
  if (x->kind == AE_CONST)
    return !(extent->kind == AE_CONST && x->value >= 0 && x->value < extent->value);
  const char *why;
  return check_index_bounds(e->arena, e->k, e->op, (int)(o - e->op->operands), pos, &why) != BOUND_PROVEN;
}

/* (0 <= i0 && i0 < E0 && ... ? T[...] : pad): a guarded operand reads its
 * pad value wherever an index leaves the tensor (padded windows). */
static const char *guarded_access(Emitter *e, const Operand *o) {
  const TensorParam *t = &e->k->tensors[o->tensor];
  StrBuf cond = {0};
  for (int i = 0; i < t->rank; i++) {
    if (!index_may_leave(e, o, i))
      continue;
    const char *idx = affine_str(e, o->map[i]), *extent = affine_str(e, t->shape[i]);
    if (needs_parens(idx))
      idx = arena_printf(e->arena, "(%s)", idx);
    if (needs_parens(extent))
      extent = arena_printf(e->arena, "(%s)", extent);
    sb_printf(&cond, "%s0 <= %s && %s < %s", cond.len ? " && " : "", idx, idx, extent);
  }
  const char *s = cond.len ? arena_printf(e->arena, "(%s ? %s : %s)", sb_cstr(&cond), access_str(e, o), pad_literal(e, o))
                           : access_str(e, o);
  sb_free(&cond);
  return s;
}

static void emit_body_here(Nest *n, bool in_acc) {
  Emitter *e = n->e;
  const StructuredOp *op = n->op;
  e->dim_names = n->value;
  const char **values = arena_alloc(e->arena, sizeof(char *) * (size_t)op->noperands);
  const char **targets = arena_alloc(e->arena, sizeof(char *) * (size_t)op->nyields);
  for (int o = 0; o < op->noperands; o++) {
    int y = yield_of(op, o);
    const Pack *p = pack_of(n, op->operands[o].tensor);
    if (op->operands[o].shape_only)
      values[o] = "";
    else if (in_acc && y >= 0)
      values[o] = arena_printf(e->arena, "%s%s", n->acc[y], acc_subscript(n, false));
    else if (p)
      values[o] = pack_read(n, p);
    else if (op->operands[o].guarded)
      values[o] = guarded_access(e, &op->operands[o]);
    else
      values[o] = access_str(e, &op->operands[o]);
  }
  for (int y = 0; y < op->nyields; y++)
    targets[y] = values[op->yields[y].operand];
  emit_body(e, values, targets);
}

/* Loops over the register block only, for loading and storing
 * accumulators: appended, and built into from here on. */
static void block_loops(Nest *n) {
  for (int i = n->acc_start; i < n->nloops; i++) {
    const Loop *l = &n->loops[i];
    if (l->kind != LOOP_REG_POINT)
      continue;
    const char *v = n->point_var[l->dim];
    LoopNode *f = put(n->e, loops_for(n->e->arena, v, "0", block_bound(n, l->dim), 1));
    n->e->cur = &f->body;
    n->value[l->dim] = point_value(n, l->dim, v);
  }
}

/* `if (cond) { first } else { second }` at the current point, or one of
 * them alone: cond NULL gives only second; "" (always) only first. Builds
 * into the branch `first` says; NULL when it has no place. */
static LoopList *branch(Nest *n, const char *cond, bool first, LoopNode **node) {
  if (!cond)
    return first ? NULL : n->e->cur;
  if (!*cond)
    return first ? n->e->cur : NULL;
  if (first || !*node)
    *node = put(n->e, loops_if(n->e->arena, cond));
  return first ? &(*node)->body : &(*node)->els;
}

static void emit_from(Nest *n, int i, bool region_done, bool acc_done);

/* When the accumulators hold final values: every reduction dim with loops
 * outside the accumulator run is at its last iteration there (a tile that
 * ends at the extent, or the last point). "" when that is always so. */
static const char *final_condition(Nest *n) {
  Emitter *e = n->e;
  const StructuredOp *op = n->op;
  StrBuf sb = {0};
  for (int d = 0; d < op->ndims; d++) {
    if (op->dims[d].kind != ITER_REDUCTION)
      continue;
    int inner = -1;
    for (int i = 0; i < n->acc_start; i++)
      if (n->loops[i].dim == d)
        inner = i;
    if (inner < 0)
      continue;
    const char *extent = affine_str(e, op->dims[d].extent);
    if (needs_parens(extent))
      extent = arena_printf(e->arena, "(%s)", extent);
    if (n->loops[inner].kind == LOOP_POINT)
      sb_printf(&sb, "%s%s + 1 == %s", sb.len ? " && " : "", n->value[d], extent);
    else
      sb_printf(&sb, "%s%s == %s", sb.len ? " && " : "", n->hi[d], extent);
  }
  const char *s = arena_strdup(e->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

/* When the accumulators start a reduction run: every reduction dim with
 * loops outside the run is at its first iteration there. "" when always. */
static const char *first_condition(Nest *n) {
  const StructuredOp *op = n->op;
  StrBuf sb = {0};
  for (int d = 0; d < op->ndims; d++) {
    int inner = -1;
    for (int i = 0; i < n->acc_start; i++)
      if (op->dims[d].kind == ITER_REDUCTION && n->loops[i].dim == d)
        inner = i;
    if (inner >= 0)
      sb_printf(&sb, "%s%s == 0", sb.len ? " && " : "", n->loops[inner].kind == LOOP_POINT ? n->value[d] : n->lo[d]);
  }
  const char *s = arena_strdup(n->e->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

/* One output point through an attached op E (init or epilogue, dims[j] the
 * op's dim of E's dim j) at the op's current point: E's payload, with its
 * reads of the op's outputs giving their accumulators (`acc[y]` + index),
 * assigned to those accumulators (to_acc: an init) or stored through E's
 * own writes (an epilogue). E may have several yields when the op has
 * (sibling reductions, graph/fuse/fuse.c): each writes one of the op's outputs. */
static void emit_attached_point(Nest *n, const StructuredOp *E, const int *dims, const char *index, bool to_acc) {
  Emitter *e = n->e;
  const StructuredOp *op = n->op;
  const char **names = arena_alloc(e->arena, sizeof(char *) * (size_t)(E->ndims + 1));
  for (int j = 0; j < E->ndims; j++)
    names[j] = dims[j] < 0 ? "0" : n->value[dims[j]];
  /* the accumulator of the op's output tensor t, or NULL */
  const char **acc_of = arena_alloc(e->arena, sizeof(char *) * (size_t)(e->k->ntensors + 1));
  for (int y = 0; y < op->nyields; y++)
    acc_of[op->operands[op->yields[y].operand].tensor] = arena_printf(e->arena, "%s%s", n->acc[y], index);
  e->op = E;
  e->dim_names = names;
  const char **values = arena_alloc(e->arena, sizeof(char *) * (size_t)E->noperands);
  for (int o = 0; o < E->noperands; o++) {
    const Operand *x = &E->operands[o];
    values[o] = x->shape_only ? "" : acc_of[x->tensor] ? acc_of[x->tensor] : x->guarded ? guarded_access(e, x) : access_str(e, x);
  }
  const char **targets = arena_alloc(e->arena, sizeof(char *) * (size_t)E->nyields);
  for (int y = 0; y < E->nyields; y++) {
    const Operand *w = &E->operands[E->yields[y].operand];
    targets[y] = to_acc ? acc_of[w->tensor] : access_str(e, w);
  }
  emit_body(e, values, targets);
  e->op = op;
  e->dim_names = n->value;
}

/* Gives the accumulators their first values before their run (`block`:
 * over the register block's loops): the init's where the run starts the
 * reduction, else the output's stored partial results. */
static void emit_loads(Nest *n, const char *index, bool block) {
  Emitter *e = n->e;
  const StructuredOp *op = n->op;
  const char *cond = n->init_at_load ? first_condition(n) : NULL;
  const char *saved[LG_MAX_DIMS];
  memcpy(saved, n->value, sizeof saved);
  LoopList *outside = e->cur;
  LoopNode *node = NULL;
  for (int pass = 0; pass < 2; pass++) {
    bool init = pass == 0;
    LoopList *into = branch(n, cond, init, &node);
    if (!into)
      continue;
    e->cur = into;
    if (block)
      block_loops(n);
    e->dim_names = n->value;
    if (init)
      emit_attached_point(n, op->init, op->init_dims, index, true);
    else
      for (int y = 0; y < op->nyields; y++)
        put(e, loops_store(e->arena, arena_printf(e->arena, "%s%s", n->acc[y], index),
                           access_str(e, &op->operands[op->yields[y].operand])));
    memcpy(n->value, saved, sizeof saved);
    e->cur = outside;
  }
}

/* Stores the accumulators after their run (`block`: over the register
 * block's loops), through the epilogue where the values are final. */
static void emit_stores(Nest *n, const char *index, bool block) {
  Emitter *e = n->e;
  const StructuredOp *op = n->op;
  const char *cond = n->epilogue_at_store ? final_condition(n) : NULL;
  const char *saved[LG_MAX_DIMS];
  memcpy(saved, n->value, sizeof saved);
  LoopList *outside = e->cur;
  LoopNode *node = NULL;
  for (int pass = 0; pass < 2; pass++) {
    bool epilogue = pass == 0;
    LoopList *into = branch(n, cond, epilogue, &node);
    if (!into)
      continue;
    e->cur = into;
    if (block)
      block_loops(n);
    e->dim_names = n->value;
    if (epilogue)
      emit_attached_point(n, op->epilogue, op->epilogue_dims, index, false);
    for (int y = 0; y < op->nyields; y++) { /* outputs the epilogue does not write (sibling reductions) */
      const Operand *o = &op->operands[op->yields[y].operand];
      bool written = false;
      for (int z = 0; epilogue && z < op->epilogue->nyields; z++)
        written |= op->epilogue->operands[op->epilogue->yields[z].operand].tensor == o->tensor;
      if (!written)
        put(e, loops_store(e->arena, access_str(e, o), arena_printf(e->arena, "%s%s", n->acc[y], index)));
    }
    memcpy(n->value, saved, sizeof saved);
    e->cur = outside;
  }
}

/* A partial block fills and reads only its part of the accumulator
 * arrays, but gcc, vectorising, warns that the rest may be used
 * uninitialised: the block function zeroes them when its extents are not
 * the full block's (a test that calls with constant extents fold away, so
 * a full block pays nothing). */
static void zero_partial_acc(Nest *n) {
  Emitter *e = n->e;
  Arena *a = e->arena;
  StrBuf cond = {0};
  for (int i = n->acc_start; i < n->nloops; i++) {
    const Loop *l = &n->loops[i];
    if (l->kind == LOOP_REG_POINT && n->block_len[l->dim])
      sb_printf(&cond, "%s%s < %lld", cond.len ? " || " : "", n->block_len[l->dim], (long long)n->s->unroll[l->dim]);
  }
  if (!cond.len)
    return;
  LoopNode *node = put(e, loops_if(a, arena_strdup(a, sb_cstr(&cond))));
  sb_free(&cond);
  node->braces = BRACES_NONE;
  const StructuredOp *op = n->op;
  LoopList *into = &node->body;
  LoopNode *f = NULL;
  for (int i = n->acc_start; i < n->nloops; i++) {
    const Loop *l = &n->loops[i];
    if (l->kind != LOOP_REG_POINT)
      continue;
    f = loops_for(a, n->point_var[l->dim], "0", arena_printf(a, "%lld", (long long)n->s->unroll[l->dim]), 1);
    f->braces = BRACES_NONE;
    loops_append(into, f);
    into = &f->body;
  }
  if (f && op->nyields > 1) /* several statements */
    f->braces = BRACES;
  const char *index = acc_subscript(n, false);
  for (int y = 0; y < op->nyields; y++) {
    const char *type = c_type_name(e->k->tensors[op->operands[op->yields[y].operand].tensor].type);
    loops_append(into, loops_store(a, arena_printf(a, "%s%s", n->acc[y], index), arena_printf(a, "(%s)0", type)));
  }
}

static void emit_accumulated(Nest *n, int i) {
  Emitter *e = n->e;
  const StructuredOp *op = n->op;
  const char *dims = acc_subscript(n, true), *index = acc_subscript(n, false);
  e->dim_names = n->value;
  if (!*dims) {
    for (int y = 0; y < op->nyields; y++) {
      const Operand *o = &op->operands[op->yields[y].operand];
      put(e, loops_let(e->arena, c_type_name(e->k->tensors[o->tensor].type), n->acc[y],
                       n->init_at_load ? NULL : access_str(e, o)));
    }
    if (n->init_at_load)
      emit_loads(n, "", false);
    emit_from(n, i, true, true);
    emit_stores(n, "", false);
    return;
  }
  for (int y = 0; y < op->nyields; y++) {
    const Operand *o = &op->operands[op->yields[y].operand];
    put(e, loops_array(e->arena, c_type_name(e->k->tensors[o->tensor].type), n->acc[y], dims, false));
  }
  zero_partial_acc(n);
  const char *saved[LG_MAX_DIMS];
  memcpy(saved, n->value, sizeof saved);
  emit_loads(n, index, true);
  emit_from(n, i, true, true);
  memcpy(n->value, saved, sizeof saved);
  emit_stores(n, index, true);
}

/* The one blocked dim other than the vector dim among the register points
 * from loop i on, or -1 if there are none or several. */
static int single_row_dim(const Nest *n, int i) {
  int r = -1;
  for (int j = i; j < n->nloops; j++) {
    const Loop *l = &n->loops[j];
    if (l->kind != LOOP_REG_POINT || l->dim == n->s->vector_dim)
      continue;
    if (r >= 0)
      return -1;
    r = l->dim;
  }
  return r;
}

/* Block function parameters, per register-point dim of the block: its
 * extent, and (not the vector dim) its offset in the register tile. */
typedef struct {
  int dims[LG_MAX_DIMS], ndims;
  const char *len[LG_MAX_DIMS], *off[LG_MAX_DIMS]; /* per op dim: a call's arguments */
  uint64_t lengths[LG_MAX_DIMS];                   /* per op dim: block_lengths */
  bool v_off; /* the vector dim has an offset too (vector_cascade's sub-blocks) */
  LoopNode *proc;
} BlockArgs;

/* Calls the block function with args' extents and offsets. */
static void call_block(Nest *n, LoopNode *proc, const BlockArgs *args) {
  const char *list[2 * LG_MAX_DIMS];
  int count = 0;
  for (int k = 0; k < args->ndims; k++) {
    int d = args->dims[k];
    list[count++] = args->len[d];
    if (d != n->s->vector_dim || args->v_off)
      list[count++] = args->off[d] ? args->off[d] : "0";
  }
  put(n->e, loops_call_proc(n->e->arena, proc, count, list));
}

/* The lengths a partial vector block can have (block_lengths less the
 * full one) when the block has accumulators and a blocked vector dim, else
 * 0. With one such length the partial calls pass it as a constant; with
 * several, they run as sub-blocks of constant extent (vector_cascade) and
 * the block takes the vector dim's offset too. A call with a run-time
 * vector extent keeps the accumulators in memory, and the compiler does
 * not know how short the vector loop is (clang vectorises it 4 vectors at
 * a time, so a 9-wide block ran 9 scalar FMAs per step). */
static uint64_t partial_vector_lengths(const Nest *n, int i, const BlockArgs *args) {
  int v = n->s->vector_dim;
  if (!(n->acc_start >= 0 && n->acc_start <= i) || v < 0 || n->s->unroll[v] <= 1)
    return 0;
  for (int k = 0; k < args->ndims; k++)
    if (args->dims[k] == v)
      return args->lengths[v] & ~((uint64_t)1 << (n->s->unroll[v] - 1));
  return 0;
}

/* The calls for a partial vector block (the other dims' arguments in
 * `args`): one with its length when it has one, else sub-blocks of
 * constant extent, a power of two each (13 = 8 + 4 + 1). */
static void vector_cascade(Nest *n, int i, BlockArgs *args) {
  Emitter *e = n->e;
  Arena *a = e->arena;
  int v = n->s->vector_dim;
  uint64_t lengths = partial_vector_lengths(n, i, args);
  int64_t only = only_length(lengths);
  const char *len_before = args->len[v]; /* the caller's calls after this one keep theirs */
  if (only) {
    args->len[v] = arena_printf(a, "%lld", (long long)only);
    call_block(n, args->proc, args);
    args->len[v] = len_before;
    return;
  }
  int64_t u = n->s->unroll[v], left = 0;
  for (int64_t l = 1; l < u; l++)
    if (has_length(lengths, l))
      left |= l;
  LoopList *outside = e->cur;
  int64_t sub = 1;
  while (sub * 2 < u)
    sub *= 2;
  for (; sub >= 1; sub /= 2) {
    if (!(left & sub))
      continue;
    LoopNode *part = put(e, loops_if(a, arena_printf(a, "%s & %lld", n->reg_len[v], (long long)sub)));
    part->braces = BRACES_NONE;
    e->cur = &part->body;
    args->len[v] = arena_printf(a, "%lld", (long long)sub);
    args->off[v] = arena_printf(a, "%s & ~(int64_t)%lld", n->reg_len[v], (long long)(2 * sub - 1));
    call_block(n, args->proc, args);
    e->cur = outside;
  }
  args->len[v] = len_before;
  args->off[v] = NULL;
}

/* The calls for a partial register block (all but the vector dim's
 * arguments at their full-block values in `args`).
 * - With accumulators, one blocked dim r other than the vector dim, and a
 *   full vector block: fewer than MR rows remain, so they run as sub-blocks
 *   of constant extent, a power of two each (7 = 4 + 2 + 1), each a block
 *   whose accumulators stay in registers and whose independent rows hide
 *   the FMA latency. Rows one at a time would leave only the vector block's
 *   few accumulators per chain.
 * - With accumulators and a partial vector block, full rows call
 *   vector_cascade at their full extent (MR rows of 8 + 1 for a 9-wide
 *   block).
 * - Otherwise, with accumulators, the blocked dims other than the vector dim
 *   run one row at a time, so that a row's accumulators (constant-indexed)
 *   still fit in registers; bottom-edge rows usually still have a full
 *   vector block, which then has its constant extent, and a partial one
 *   goes to vector_cascade: every call with accumulators has constant
 *   extents.
 * - Without accumulators, one call with the run-time extents. */
static void partial_calls(Nest *n, int i, LoopNode *proc, BlockArgs *args) {
  Emitter *e = n->e;
  Arena *a = e->arena;
  int v = n->s->vector_dim, r = single_row_dim(n, i);
  bool with_acc = n->acc_start >= 0 && n->acc_start <= i;
  bool blocked_v = false;
  for (int k = 0; k < args->ndims; k++)
    blocked_v |= args->dims[k] == v;
  bool cascade = with_acc && r >= 0 && blocked_v && n->s->unroll[v] > 1 && n->s->unroll[r] > 1;
  /* whether the vector dim's block can be full, and partial (static extents) */
  uint64_t vlen = blocked_v ? args->lengths[v] : 0;
  bool v_full = blocked_v && has_length(vlen, n->s->unroll[v]);
  bool v_partial = blocked_v && (vlen & ~((uint64_t)1 << (n->s->unroll[v] - 1)));
  int64_t rows_left = 0; /* the row counts a partial block can have, or'ed */
  for (int64_t l = 1; cascade && l < n->s->unroll[r]; l++)
    if (has_length(args->lengths[r], l))
      rows_left |= l;
  cascade &= rows_left != 0;
  LoopList *outside = e->cur;
  if (cascade && v_full) {
    LoopNode *node = NULL;
    if (v_partial) {
      node = put(e, loops_if(a, arena_printf(a, "%s == %lld", n->reg_len[v], (long long)n->s->unroll[v])));
      e->cur = &node->body;
    }
    LoopList *full_v = e->cur;
    int64_t sub = 1;
    while (sub * 2 < n->s->unroll[r])
      sub *= 2;
    for (; sub >= 1; sub /= 2) {
      if (!(rows_left & sub))
        continue;
      int64_t only = only_length(args->lengths[r]); /* rows_left is it: no test */
      if (!only) {
        LoopNode *rows = put(e, loops_if(a, arena_printf(a, "%s & %lld", n->reg_len[r], (long long)sub)));
        rows->braces = BRACES_NONE;
        e->cur = &rows->body;
      }
      args->len[r] = arena_printf(a, "%lld", (long long)sub);
      args->off[r] = only ? arena_printf(a, "%lld", (long long)(only & ~(2 * sub - 1)))
                          : arena_printf(a, "%s & ~(int64_t)%lld", n->reg_len[r], (long long)(2 * sub - 1));
      call_block(n, proc, args);
      e->cur = full_v;
    }
    if (!node) { /* the vector block is always full */
      e->cur = outside;
      return;
    }
    e->cur = &node->els;
  }
  if (!with_acc) {
    for (int k = 0; k < args->ndims; k++)
      args->len[args->dims[k]] = n->reg_len[args->dims[k]];
    call_block(n, proc, args);
    e->cur = outside;
    return;
  }
  if (partial_vector_lengths(n, i, args)) { /* full rows, a partial vector block */
    StrBuf full = {0};
    bool rows = false, rows_full = true;
    for (int k = 0; k < args->ndims; k++) {
      int d = args->dims[k];
      int64_t u = n->s->unroll[d];
      if (d == v)
        continue;
      rows = true;
      rows_full &= has_length(args->lengths[d], u);
      if (args->lengths[d] & ~((uint64_t)1 << (u - 1)))
        sb_printf(&full, "%s%s == %lld", full.len ? " && " : "", n->reg_len[d], (long long)u);
      args->len[d] = arena_printf(a, "%lld", (long long)u);
      args->off[d] = NULL;
    }
    if (rows && rows_full) {
      LoopNode *node = NULL;
      if (full.len) {
        node = put(e, loops_if(a, arena_strdup(a, sb_cstr(&full))));
        e->cur = &node->body;
      }
      vector_cascade(n, i, args);
      e->cur = node ? &node->els : outside;
    }
    sb_free(&full);
    if (rows && rows_full && e->cur == outside)
      return;
  }
  bool opened = false;
  for (int k = 0; k < args->ndims; k++) {
    int d = args->dims[k];
    if (d == v)
      continue;
    LoopNode *f = put(e, loops_for(a, n->point_var[d], "0", n->reg_len[d], 1));
    e->cur = &f->body;
    args->len[d] = "1";
    args->off[d] = n->point_var[d];
    opened = true;
  }
  if (opened && v_full && !cascade) {
    LoopNode *node = NULL;
    if (v_partial) {
      node = put(e, loops_if(a, arena_printf(a, "%s == %lld", n->reg_len[v], (long long)n->s->unroll[v])));
      e->cur = &node->body;
    }
    args->len[v] = arena_printf(a, "%lld", (long long)n->s->unroll[v]);
    call_block(n, proc, args);
    if (!node) {
      e->cur = outside;
      return;
    }
    e->cur = &node->els;
  }
  if (partial_vector_lengths(n, i, args)) {
    vector_cascade(n, i, args);
    e->cur = outside;
    return;
  }
  if (blocked_v)
    args->len[v] = n->reg_len[v];
  call_block(n, proc, args);
  e->cur = outside;
}

/* The register block, from loop i (the full/partial split) in: written
 * once, as a function of the file (an LN_PROC: C has no nested functions,
 * so loops_outline moves it out and passes it what it reads) whose
 * extents and row offsets are parameters. A full block calls it with
 * constant extents, and a partial one with constant extents for each
 * sub-block it can (partial_calls) and run-time ones for the rest.
 * LGEN_BLOCK asks compilers to inline every call (gcc -O2 would not inline
 * a body this size called several times), so that a constant-extent call
 * is an unrolled block with its accumulators in registers. */
static void emit_region(Nest *n, int i) {
  Emitter *e = n->e;
  Arena *a = e->arena;
  BlockArgs args;
  memset(&args, 0, sizeof args);
  const char *types[2 * LG_MAX_DIMS], *names[2 * LG_MAX_DIMS];
  int nparams = 0;
  for (int j = i; j < n->nloops; j++)
    if (n->loops[j].kind == LOOP_REG_POINT) {
      args.dims[args.ndims] = n->loops[j].dim;
      args.lengths[n->loops[j].dim] = block_lengths(n, n->loops[j].dim);
      args.ndims++;
    }
  uint64_t vparts = partial_vector_lengths(n, i, &args);
  args.v_off = vparts && !only_length(vparts);
  for (int k = 0; k < args.ndims; k++) {
    int d = args.dims[k];
    n->block_len[d] = claim(n, "%s_n", dim_name(n, d));
    types[nparams] = "int64_t";
    names[nparams++] = n->block_len[d];
    if (d != n->s->vector_dim || args.v_off) {
      n->point_off[d] = claim(n, "%s_off", dim_name(n, d));
      types[nparams] = "int64_t";
      names[nparams++] = n->point_off[d];
    }
  }
  use_helper(e->helpers_used, "LGEN_BLOCK");
  LoopNode *proc = put(e, loops_proc(a, "LGEN_BLOCK void", nparams, types, names));
  args.proc = proc;
  proc->text = e->op->origin ? arena_printf(a, "a register block of %s", c_comment_text(a, e->op->origin))
                             : arena_printf(a, "a register block of %s", e->kn.function);
  LoopList *outside = e->cur;
  e->cur = &proc->body;
  emit_from(n, i, true, false);
  e->cur = outside;
  memset(n->block_len, 0, sizeof n->block_len);
  memset(n->point_off, 0, sizeof n->point_off);

  /* a full block, a partial one, or both, as the extents allow */
  StrBuf full = {0};
  bool can_full = true, can_partial = false;
  for (int k = 0; k < args.ndims; k++) {
    int d = args.dims[k];
    int64_t u = n->s->unroll[d];
    args.len[d] = arena_printf(a, "%lld", (long long)u);
    can_full &= has_length(args.lengths[d], u);
    if (args.lengths[d] & ~((uint64_t)1 << (u - 1))) { /* a dim always full needs no test */
      can_partial = true;
      sb_printf(&full, "%s%s == %lld", full.len ? " && " : "", n->reg_len[d], (long long)u);
    }
  }
  if (!can_partial) {
    call_block(n, proc, &args);
  } else if (!can_full) {
    partial_calls(n, i, proc, &args);
  } else {
    LoopNode *node = put(e, loops_if(a, arena_strdup(a, sb_cstr(&full))));
    node->note = "a full register block: constant extents";
    e->cur = &node->body;
    call_block(n, proc, &args);
    e->cur = &node->els;
    partial_calls(n, i, proc, &args);
  }
  sb_free(&full);
  e->cur = outside;
}

/* The vectorised innermost reduction loop i with s->partials partial results
 * (Halide's rfactor of that loop): the main loop runs in steps of P into P
 * independent partials, so the vector adds do not wait on each other, the
 * partials are combined into the accumulator in order, and the remainder runs
 * as a plain simd reduction. Only for loops that get a simd reduction clause
 * (f32/f64 sums and products). */
static bool partials_apply(Nest *n, int i) {
  return n->s->partials > 1 && i == n->vector_loop && n->loops[i].kind == LOOP_POINT &&
         n->op->dims[n->loops[i].dim].kind == ITER_REDUCTION && n->op->nyields == 1 && n->acc_start >= 0 &&
         !*acc_subscript(n, true) && reduction_clause(n, true);
}

static void emit_partials(Nest *n, int i) {
  Emitter *e = n->e;
  Arena *a = e->arena;
  const StructuredOp *op = n->op;
  int d = n->loops[i].dim, x;
  long long parts = (long long)n->s->partials;
  const char *type = c_type_name(e->k->tensors[op->operands[op->yields[0].operand].tensor].type);
  bool product = match_reduction(op, 0, &x) == COMBINE_MUL;
  const char *acc = n->acc[0], *saved_value = n->value[d];
  const char *part = claim(n, "%s_part", acc);
  const char *v = claim(n, "%s", dim_name(n, d));
  const char *vo = claim(n, "%s_o", dim_name(n, d));
  const char *j = claim(n, "%s_p", dim_name(n, d));
  const char *split = claim(n, "%s_split", dim_name(n, d));
  const char *lo = n->lo[d], *hi = n->hi[d];
  const char *part_j = arena_printf(a, "%s[%s]", part, j);
  put(e, loops_array(a, type, part, arena_printf(a, "[%lld]", parts), false));
  LoopNode *zero = put(e, loops_for(a, j, "0", arena_printf(a, "%lld", parts), 1));
  zero->braces = BRACES_NONE;
  loops_append(&zero->body, loops_store(a, part_j, arena_printf(a, "(%s)%d", type, product ? 1 : 0)));
  put(e, loops_let(a, "const int64_t", split,
                   strcmp(lo, "0") == 0 ? arena_printf(a, "%s / %lld * %lld", hi, parts, parts)
                                        : arena_printf(a, "%s + (%s - %s) / %lld * %lld", lo, hi, lo, parts, parts)));
  LoopNode *outer = put(e, loops_for(a, vo, lo, split, parts));
  LoopNode *inner = loops_for(a, j, "0", arena_printf(a, "%lld", parts), 1);
  inner->simd = true;
  loops_append(&outer->body, inner);
  LoopList *outside = e->cur;
  e->cur = &inner->body;
  n->acc[0] = part_j;
  n->value[d] = arena_printf(a, "(%s + %s)", vo, j);
  emit_body_here(n, true);
  n->acc[0] = acc;
  e->cur = outside;
  LoopNode *combine = put(e, loops_for(a, j, "0", arena_printf(a, "%lld", parts), 1));
  combine->braces = BRACES_NONE;
  loops_append(&combine->body, loops_store(a, acc, arena_printf(a, "%s %s %s", acc, product ? "*" : "+", part_j)));
  LoopNode *rest = loops_for(a, v, split, hi, 1);
  mark_loop(n, i, rest);
  put(e, rest);
  e->cur = &rest->body;
  n->value[d] = v;
  emit_body_here(n, true);
  e->cur = outside;
  n->value[d] = saved_value;
}

static void emit_from(Nest *n, int i, bool region_done, bool acc_done) {
  Emitter *e = n->e;
  for (int p = 0; p < n->npacks; p++)
    if (n->packs[p].alloc_at == i && !region_done && !acc_done)
      emit_pack_alloc(n, &n->packs[p]);
  for (int p = 0; p < n->npacks; p++)
    if (n->packs[p].point == i && !region_done && !acc_done)
      emit_pack_copy(n, &n->packs[p]);

  LoopList *outside = e->cur;
  if (i == n->region && !region_done) {
    emit_region(n, i);
  } else if (i == n->acc_start && !acc_done) {
    emit_accumulated(n, i);
  } else if (i == n->nloops) {
    emit_body_here(n, n->acc_start >= 0);
  } else if (partials_apply(n, i)) {
    emit_partials(n, i);
  } else {
    int count = i == n->par_first ? n->par_count : 1;
    const char *lo[LG_MAX_DIMS], *hi[LG_MAX_DIMS], *value[LG_MAX_DIMS];
    memcpy(lo, n->lo, sizeof lo);
    memcpy(hi, n->hi, sizeof hi);
    memcpy(value, n->value, sizeof value);
    LoopList decls = {0};
    for (int j = 0; j < count; j++)
      open_loop(n, i + j, &decls);
    loops_splice(e->cur, &decls);
    emit_from(n, i + count, false, false);
    e->cur = outside;
    memcpy(n->lo, lo, sizeof lo);
    memcpy(n->hi, hi, sizeof hi);
    memcpy(n->value, value, sizeof value);
  }

  for (int p = 0; p < n->npacks; p++)
    if (n->packs[p].alloc_at == i && !region_done && !acc_done)
      emit_pack_free(n, &n->packs[p]);
}

/* The whole op as one BLAS call (schedule's library_call): C += A * B. */
static void emit_library_call(Emitter *e, const StructuredOp *op) {
  GemmShape g;
  if (!match_gemm(e->k, op, &g))
    return; /* schedule_verify rejected it already */
  e->uses_cblas = true;
  const char *dims[3];
  for (int i = 0; i < 3; i++)
    dims[i] = affine_str(e, op->dims[i].extent);
  const char *M = dims[g.m], *N = dims[g.n], *K = dims[g.k];
  const char *one = g.type == TY_F32 ? "1.0f" : "1.0";
  Arena *a = e->arena;
  const char *args[] = {"CblasRowMajor",
                        g.trans_a ? "CblasTrans" : "CblasNoTrans",
                        g.trans_b ? "CblasTrans" : "CblasNoTrans",
                        arena_printf(a, "(int)%s", M),
                        arena_printf(a, "(int)%s", N),
                        arena_printf(a, "(int)%s", K),
                        one,
                        e->kn.tensors[op->operands[g.a].tensor],
                        arena_printf(a, "(int)%s", g.trans_a ? M : K),
                        e->kn.tensors[op->operands[g.b].tensor],
                        arena_printf(a, "(int)%s", g.trans_b ? K : N),
                        one,
                        e->kn.tensors[op->operands[g.c].tensor],
                        arena_printf(a, "(int)%s", N)};
  LoopNode *node = put(e, loops_if(a, arena_printf(a, "%s > 0 && %s > 0 && %s > 0", M, N, K)));
  node->braces = BRACES_NONE;
  loops_append(&node->body, loops_call(a, e->sched->library_call, 14, args));
}

static void emit_nest(Emitter *e, const StructuredOp *op, int index, bool attached, bool *at_store, bool *at_load);

/* An init or epilogue that the op's schedule keeps no accumulators for (a
 * parallel loop inside its reductions, a split reduction, a library call)
 * runs as an op of its own right before or after the op, under auto's
 * schedule for it. In a graph's parallel region it shares the op's threads
 * when the op used them, and runs on the op's one thread when the op runs
 * under `omp single`. */
static void emit_attached_nest(Emitter *e, const StructuredOp *op, const StructuredOp *E, int index, bool before,
                               bool worksharing, bool in_region) {
  Schedule s;
  schedule_auto(e->k, E, e->opt->target ? e->opt->target : target_default(), &s);
  bool threads = false;
  for (int d = 0; d < E->ndims; d++) {
    if (e->bound_dims || (in_region && !worksharing)) /* a row group's member (bound dims), or under single */
      s.parallel[d] = s.parallel_reg[d] = false;
    threads |= s.parallel[d] || s.parallel_reg[d];
  }
  memset(s.pack, 0, sizeof s.pack); /* its scratch is not in the op's reservation */
  const Schedule *saved = e->sched;
  e->sched = &s;
  put(e, loops_comment(e->arena, arena_printf(e->arena, "the %s of comprehension %d, %s it (its schedule keeps no "
                                                        "accumulators)", before ? "init" : "epilogue", index + 1,
                                                        before ? "before" : "after")));
  bool single = in_region && worksharing && !threads;
  LoopList nest = {0}, *outside = build_into(e, &nest);
  bool at_store, at_load;
  emit_nest(e, E, index, true, &at_store, &at_load);
  e->cur = outside;
  if (in_region)
    loops_join_region(e->arena, &nest);
  if (single)
    loops_splice(&put(e, loops_block(e->arena, REGION_SINGLE))->body, &nest);
  else
    loops_splice(e->cur, &nest);
  e->sched = saved;
  e->op = op;
}

void emit_op(Emitter *e, const StructuredOp *op, int index, bool in_region) {
  if (op->ext) { /* a template, not a loop nest: c_ext.c */
    emit_ext_op(e, op, index, false, in_region);
    return;
  }
  /* the init goes first when the nest cannot start from it, which is known
   * once the nest is built */
  LoopList nest = {0}, *outside = build_into(e, &nest);
  bool at_store, at_load;
  emit_nest(e, op, index, false, &at_store, &at_load);
  e->cur = outside;
  if (in_region)
    loops_join_region(e->arena, &nest);
  bool worksharing = loops_has_worksharing(&nest);
  if (op->init && !at_load)
    emit_attached_nest(e, op, op->init, index, true, worksharing, in_region);
  loops_splice(e->cur, &nest);
  if (op->epilogue && !at_store)
    emit_attached_nest(e, op, op->epilogue, index, false, worksharing, in_region);
}

bool op_splits_reduction(const StructuredOp *op, const Schedule *s) {
  if (op->ext || s->library_call)
    return false;
  Loop loops[LG_MAX_LOOPS];
  int count, n = schedule_loops(op, s, NULL, loops);
  int first = schedule_parallel_loop(op, s, loops, n, &count);
  return first >= 0 && op->dims[loops[first].dim].kind == ITER_REDUCTION;
}

/* The op's nest under e->sched; *at_store and *at_load get whether its
 * epilogue and init are applied in it (else they run as nests of their
 * own). `attached`: the nest of an init or epilogue. */
static void emit_nest(Emitter *e, const StructuredOp *op, int index, bool attached, bool *at_store, bool *at_load) {
  *at_store = *at_load = false;
  if (e->sched->library_call) {
    e->op = op;
    if (!attached && op->origin)
      put(e, loops_comment(e->arena, c_comment_text(e->arena, op->origin)));
    emit_library_call(e, op);
    return;
  }
  Nest *n = nest_acquire(e);
  n->e = e;
  n->op = op;
  n->s = e->sched;
  e->op = op;
  n->acc = arena_alloc(e->arena, sizeof(char *) * (size_t)(op->nyields + 1));
  for (int y = 0; y < op->nyields; y++)
    n->acc[y] = claim(n, "%s_acc", e->kn.tensors[op->operands[op->yields[y].operand].tensor]);
  plan(n);
  for (int i = 0; i < n->nloops; i++)
    if (n->loops[i].kind == LOOP_REG_POINT)
      n->point_var[n->loops[i].dim] = claim(n, "%s_i", dim_name(n, n->loops[i].dim));
  for (int d = 0; d < op->ndims; d++) {
    n->lo[d] = "0";
    n->hi[d] = affine_str(e, op->dims[d].extent);
    n->value[d] = e->bound_dims && e->bound_dims[d] ? e->bound_dims[d] : dim_name(n, d);
  }
  plan_packs(n);
  name_packs(n);
  *at_store = n->epilogue_at_store;
  *at_load = n->init_at_load;
  if (e->scratch)
    layout_scratch(n);
  if (!attached && op->origin) /* a graph's op: the nodes it computes */
    put(e, loops_comment(e->arena, c_comment_text(e->arena, op->origin)));
  else if (e->k->nops > 1 && !attached)
    put(e, loops_comment(e->arena, comprehension_comment(e, op, index)));
  if (!n->hoisted) {
    emit_from(n, 0, false, false);
    nest_release(e, n);
    return;
  }
  for (int i = 0; i < n->npacks; i++)
    if (n->packs[i].shared)
      emit_pack_alloc(n, &n->packs[i]);
  LoopNode *region = put(e, loops_block(e->arena, REGION_PARALLEL));
  region->threads = thread_cap(n, region);
  LoopList *outside = build_into(e, &region->body);
  for (int i = 0; i < n->npacks; i++)
    if (!n->packs[i].shared)
      emit_pack_alloc(n, &n->packs[i]);
  emit_from(n, 0, false, false);
  for (int i = 0; i < n->npacks; i++)
    if (!n->packs[i].shared)
      emit_pack_free(n, &n->packs[i]);
  e->cur = outside;
  for (int i = 0; i < n->npacks; i++)
    if (n->packs[i].shared)
      emit_pack_free(n, &n->packs[i]);
  nest_release(e, n);
}

const char *op_scratch_bytes(Emitter *e, const StructuredOp *op, int64_t *value) {
  *value = 0;
  if (op->ext || e->sched->library_call) /* an ext op's scratch is a workspace tensor of its own */
    return "0";
  Nest *n = nest_acquire(e);
  n->e = e;
  n->op = op;
  n->s = e->sched;
  const StructuredOp *saved = e->op;
  e->op = op;
  plan(n);
  plan_packs(n);
  layout_scratch(n);
  e->op = saved;
  const char *once = n->once_bytes;
  int64_t once_value = n->once_value;
  if (n->thread_slots) {
    const char *slots = n->slot_value >= 0
                            ? arena_printf(e->arena, "%lld", (long long)(n->slot_value * LG_SCRATCH_THREAD_SLOTS))
                            : arena_printf(e->arena, "%d * %s", LG_SCRATCH_THREAD_SLOTS, n->slot_bytes);
    add_bytes(n, &once, &once_value, slots, n->slot_value >= 0 ? n->slot_value * LG_SCRATCH_THREAD_SLOTS : -1);
  }
  *value = once_value;
  nest_release(e, n);
  return once;
}
