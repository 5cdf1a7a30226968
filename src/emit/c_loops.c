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
 * Packed tensors (the schedule's pack) are copied into buffers of their
 * own: c_pack.c.
 *
 * Calls: c_names.c, c_expr.c, c_runtime.c, c_access.c, c_ext.c, c_pack.c. */
#include "emit/c_nest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The length of the identifier `text` begins with (0: none). */
static size_t ident_len(const char *text) {
  size_t n = 0;
  while (ident_char(text[n]))
    n++;
  return text[0] >= '0' && text[0] <= '9' ? 0 : n;
}

/* Whether `text` has the identifier name[0..len) as a token of its own. */
static bool mentions(const char *text, const char *name, size_t len) {
  for (const char *p = text; *p; p++)
    if (strncmp(p, name, len) == 0 && !ident_char(p[len]) && (p == text || !ident_char(p[-1])))
      return true;
  return false;
}

/* Whether the yields can be stored one after another with no temporaries:
 * no value reads what an earlier store wrote. Only by the text, so
 * cautious: a value after a store must not name the stored variable, and
 * when some target is memory (an element, not a scalar local) no value may
 * read memory ('[', or '*' which might be a dereference), since two names
 * of buffers may be one buffer (in place). */
static bool stores_in_order(const char **targets, const char **values, int n) {
  bool memory = false;
  for (int y = 0; y < n; y++) {
    size_t len = ident_len(targets[y]);
    if (!len)
      return false;
    memory |= targets[y][len] != '\0';
    for (int later = y + 1; later < n; later++)
      if (mentions(values[later], targets[y], len))
        return false;
  }
  for (int y = 0; memory && y < n; y++)
    if (strpbrk(values[y], "[*"))
      return false;
  return true;
}

/* The statements of one iteration: temporaries for shared subexpressions,
 * for loads used twice, and for a select's two values, then one assignment
 * per yield to `targets[y]`. A select's values are computed before it,
 * both: in `c ? a[i] : b[i]` the loads are conditional, which clang does
 * not vectorise (under `omp simd` it then fails with -Werror); every access
 * is in bounds at every point of the domain, so loading both is safe, and
 * it is what a vectorised select does anyway. */
static void emit_body(Emitter *e, const OpScope *at, const char **operand_values, const char **targets) {
  const StructuredOp *op = at->op;
  ExprCtx ctx = {.op = op, .operand_values = operand_values, .helpers = e->helpers,
                 .helper_names = e->helper_names, .arena = e->arena, .dim_names = at->dim_names,
                 .size_names = (const char *const *)e->kn.sizes, .needs = &e->needs};
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
  if (op->nyields == 1 || stores_in_order(targets, values, op->nyields)) {
    for (int y = 0; y < op->nyields; y++)
      put(e, loops_store(e->arena, targets[y], strip_parens(e, values[y])));
  } else {
    /* every value is computed from the old outputs before any is stored */
    const char **tmp = arena_alloc(e->arena, sizeof(char *) * (size_t)op->nyields);
    for (int y = 0; y < op->nyields; y++) {
      size_t n = ident_len(targets[y]); /* named after what it becomes: S_new for S[i] */
      tmp[y] = names_claim(&e->kn.table, n ? arena_printf(e->arena, "%.*s_new", (int)n, targets[y])
                                           : arena_printf(e->arena, "y%d", y));
      put(e, loops_let(e->arena, arena_printf(e->arena, "const %s", c_type_name(op->nodes[op->yields[y].value].type)),
                       tmp[y], strip_parens(e, values[y])));
    }
    for (int y = 0; y < op->nyields; y++)
      put(e, loops_store(e->arena, targets[y], tmp[y]));
  }
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
static bool simd_friendly_but_divisions(const StructuredOp *op, const Kernel *k);

/* Whether every division in the op's maps is a floordiv(v, q) of the vector
 * dim v that block_divisions makes constant over the register block: v's
 * extent, tiles and register tiles multiples of its unroll U, and U
 * dividing q. The vector loop is then free of divisions. gcc needs its
 * `omp simd` there: without it, it unrolled the 8-wide loop of a grouped
 * conv's block before vectorising, and kept the block's 16 accumulators in
 * memory behind shuffles. */
static bool divisions_blocked(const Nest *n) {
  const StructuredOp *op = n->op;
  int v = n->s->vector_dim;
  int64_t u = v >= 0 ? n->s->unroll[v] : 0;
  const AffineExpr *ext = v >= 0 ? op->dims[v].extent : NULL;
  if (u <= 1 || !ext || ext->kind != AE_CONST || ext->value % u != 0)
    return false;
  for (int i = 0; i < n->nloops; i++)
    if (n->loops[i].dim == v && (n->loops[i].kind == LOOP_POINT || n->loops[i].step % u != 0) &&
        n->loops[i].kind != LOOP_REG_POINT)
      return false;
  for (int o = 0; o < op->noperands; o++) {
    const Operand *x = &op->operands[o];
    for (int i = 0; !x->shape_only && i < n->e->k->tensors[x->tensor].rank; i++) {
      /* each division: floordiv(v, q), q a multiple of u */
      const AffineExpr *stack[64];
      int top = 0;
      stack[top++] = x->map[i];
      while (top > 0) {
        const AffineExpr *e = stack[--top];
        if (!e)
          continue;
        if (e->kind == AE_FLOORDIV && affine_is_dim(e->lhs, v) && e->rhs->kind == AE_CONST && e->rhs->value > 0 &&
            e->rhs->value % u == 0)
          continue;
        if (e->kind == AE_FLOORDIV || e->kind == AE_CEILDIV || e->kind == AE_MOD || top + 2 > 64)
          return false;
        stack[top++] = e->lhs;
        stack[top++] = e->rhs;
      }
    }
  }
  return true;
}

static bool simd_friendly(const StructuredOp *op, const Kernel *k) {
  if (!simd_friendly_but_divisions(op, k))
    return false;
  for (int o = 0; o < op->noperands; o++)
    for (int i = 0; i < k->tensors[op->operands[o].tensor].rank; i++)
      if (!op->operands[o].shape_only && map_has_division(op->operands[o].map[i]))
        return false;
  return true;
}

static bool simd_friendly_but_divisions(const StructuredOp *op, const Kernel *k) {
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
  (void)k;
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
  n->nloops = schedule_loops(op, s, n->loops);
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
  n->vector_loop = -1;
  if (s->vector_dim >= 0 && n->nloops > 0 && n->loops[n->nloops - 1].dim == s->vector_dim &&
      (simd_friendly(op, n->e->k) || (simd_friendly_but_divisions(op, n->e->k) && divisions_blocked(n)))) {
    bool reduction = op->dims[s->vector_dim].kind == ITER_REDUCTION;
    if (!reduction || (n->acc_start >= 0 && n->region < 0 && !n->split))
      n->vector_loop = n->nloops - 1;
  }
}

/* ---- names ---- */

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
  if (extent->kind != AE_CONST || extent->value <= 0)
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

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a < 0 ? -a : a;
}

/* The marks of a loop f over dim d for the init and epilogue passes
 * (loops_init_at_load, loops_epilogue_at_store): the reduction dim it runs
 * over, and when it runs the dim's last iteration: a tile that ends at
 * the extent, the last point (not known for a register tile). Called
 * once d's lo, hi and value are f's. */
static void mark_reduction(Nest *n, const Loop *l, LoopNode *f) {
  const StructuredOp *op = n->op;
  int d = l->dim;
  if (op->dims[d].kind != ITER_REDUCTION || l->kind == LOOP_REG_POINT)
    return;
  f->reduce = d + 1;
  if (l->kind == LOOP_REG_TILE)
    return;
  Emitter *e = n->e;
  const char *extent = affine_str(e, NULL, op->dims[d].extent);
  if (needs_parens(extent))
    extent = arena_printf(e->arena, "(%s)", extent);
  f->last = l->kind == LOOP_POINT ? arena_printf(e->arena, "%s + 1 == %s", n->value[d], extent)
                                  : arena_printf(e->arena, "%s == %s", n->hi[d], extent);
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
    n->lo_align[d] = gcd64(n->lo_align[d], l->step);
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
    n->reg_align[d] = gcd64(n->lo_align[d], l->step);
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
    int dim = n->dim_of ? n->dim_of[d] : d;
    f->dim = dim >= 0 ? dim + 1 : 0;
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
  mark_reduction(n, l, f);
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
    e->needs.narrows_f16 = true;
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
static bool index_may_leave(Emitter *e, const StructuredOp *op, const Operand *o, int pos) {
  const AffineExpr *x = o->map[pos], *extent = e->k->tensors[o->tensor].shape[pos];
  if (x->kind == AE_DIM)
    return !affine_equal(op->dims[x->index].extent, extent);
  if (x->kind == AE_CONST)
    return !(extent->kind == AE_CONST && x->value >= 0 && x->value < extent->value);
  const char *why;
  return check_index_bounds(e->arena, e->k, op, (int)(o - op->operands), pos, &why) != BOUND_PROVEN;
}

/* (0 <= i0 && i0 < E0 && ... ? T[...] : pad): a guarded operand reads its
 * pad value wherever an index leaves the tensor (padded windows). */
static const char *guarded_access(Emitter *e, const OpScope *at, const OpPlace *place, const Operand *o) {
  const TensorParam *t = &e->k->tensors[o->tensor];
  StrBuf cond = {0};
  for (int i = 0; i < t->rank; i++) {
    if (!index_may_leave(e, at->op, o, i))
      continue;
    const char *idx = affine_str(e, at, o->map[i]), *extent = affine_str(e, NULL, t->shape[i]);
    if (needs_parens(idx))
      idx = arena_printf(e->arena, "(%s)", idx);
    if (needs_parens(extent))
      extent = arena_printf(e->arena, "(%s)", extent);
    sb_printf(&cond, "%s0 <= %s && %s < %s", cond.len ? " && " : "", idx, idx, extent);
  }
  const char *elem = access_str(e, at, place, o);
  const char *s = cond.len ? arena_printf(e->arena, "(%s ? %s : %s)", sb_cstr(&cond), elem, pad_literal(e, o)) : elem;
  sb_free(&cond);
  return s;
}

/* Whether floordiv(d, q) is constant over dim d's register block: its
 * points are reg_var + [0, U) (no offset), reg_var a multiple of U, and U
 * divides q. Then floordiv(d, q) = reg_var / q (reg_var >= 0). */
static bool block_divides(const Nest *n, int d, int64_t q) {
  int64_t u = n->s->unroll[d];
  return n->reg_var[d] && !n->point_off[d] && u > 1 && q > 0 && q % u == 0 && n->reg_align[d] % u == 0;
}

/* x with each floordiv(d, q) that block_divides replaced by the dim
 * ndims + d (named reg_var / q by the caller); x itself when there is none.
 * A grouped convolution reads its input channel floordiv(f, F / G) * C + c:
 * with the output channel f as the vector dim, that index varied along the
 * vector and became a gather (RegNet-Y's groups of 8: 3 GFLOP/s); constant
 * over the block, it is a broadcast. */
static AffineExpr *block_divisions(Nest *n, const AffineExpr *x, int64_t *divisor) {
  if (!x || !affine_has_dims(x))
    return (AffineExpr *)x;
  if (x->kind == AE_FLOORDIV && x->lhs->kind == AE_DIM && x->rhs->kind == AE_CONST &&
      block_divides(n, x->lhs->index, x->rhs->value) &&
      (divisor[x->lhs->index] == 0 || divisor[x->lhs->index] == x->rhs->value)) {
    divisor[x->lhs->index] = x->rhs->value;
    return affine_leaf(n->e->arena, AE_DIM, n->op->ndims + x->lhs->index, 0);
  }
  AffineExpr *lhs = block_divisions(n, x->lhs, divisor), *rhs = block_divisions(n, x->rhs, divisor);
  if (lhs == x->lhs && rhs == x->rhs)
    return (AffineExpr *)x;
  AffineExpr *c = arena_alloc(n->e->arena, sizeof *c);
  *c = *x;
  c->lhs = lhs;
  c->rhs = rhs;
  return c;
}

/* The element operand o reads, through block_divisions where it applies. */
static const char *block_access(Nest *n, const Operand *o) {
  Emitter *e = n->e;
  const StructuredOp *op = n->op;
  int rank = e->k->tensors[o->tensor].rank;
  int64_t divisor[LG_MAX_DIMS] = {0};
  AffineExpr **map = arena_alloc(e->arena, sizeof(AffineExpr *) * (size_t)(rank + 1));
  bool changed = false;
  for (int i = 0; i < rank; i++) {
    map[i] = block_divisions(n, o->map[i], divisor);
    changed |= map[i] != o->map[i];
  }
  const OpScope at = {op, n->value};
  if (!changed)
    return access_str(e, &at, &n->place, o);
  const char **names = arena_alloc(e->arena, sizeof(char *) * (size_t)(2 * op->ndims + 1));
  for (int d = 0; d < op->ndims; d++) {
    names[d] = n->value[d];
    names[op->ndims + d] = divisor[d] ? arena_printf(e->arena, "%s / %lld", n->reg_var[d], (long long)divisor[d]) : "";
  }
  Operand copy = *o;
  copy.map = map;
  const OpScope divided = {op, names};
  return access_str(e, &divided, &n->place, &copy);
}

static void emit_body_here(Nest *n, bool in_acc) {
  Emitter *e = n->e;
  const StructuredOp *op = n->op;
  const OpScope at = {op, n->value};
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
      values[o] = guarded_access(e, &at, &n->place, &op->operands[o]);
    else if (y < 0)
      values[o] = block_access(n, &op->operands[o]);
    else
      values[o] = access_str(e, &at, &n->place, &op->operands[o]);
  }
  for (int y = 0; y < op->nyields; y++)
    targets[y] = values[op->yields[y].operand];
  emit_body(e, &at, values, targets);
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

static void emit_from(Nest *n, int i, bool region_done, bool acc_done);

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
  const OpScope at = {E, names}; /* E's point, in the op's dim values */
  const char **values = arena_alloc(e->arena, sizeof(char *) * (size_t)E->noperands);
  for (int o = 0; o < E->noperands; o++) {
    const Operand *x = &E->operands[o];
    values[o] = x->shape_only       ? ""
                : acc_of[x->tensor] ? acc_of[x->tensor]
                : x->guarded        ? guarded_access(e, &at, &n->place, x)
                                    : access_str(e, &at, &n->place, x);
  }
  const char **targets = arena_alloc(e->arena, sizeof(char *) * (size_t)E->nyields);
  for (int y = 0; y < E->nyields; y++) {
    const Operand *w = &E->operands[E->yields[y].operand];
    targets[y] = to_acc ? acc_of[w->tensor] : access_str(e, &at, &n->place, w);
  }
  emit_body(e, &at, values, targets);
}

/* What an accumulator load or store leaves for the init and epilogue
 * passes to build the init or epilogue in its place (LoopNode.site): the
 * nest's state there. */
typedef struct {
  const char *index; /* the accumulators' subscript */
  bool block;        /* over the register block's loops */
  const char *value[LG_MAX_DIMS], *reg_var[LG_MAX_DIMS], *reg_len[LG_MAX_DIMS];
  const char *block_len[LG_MAX_DIMS], *point_off[LG_MAX_DIMS];
} AccSite;

/* Swaps the nest's state with the site's. */
static void swap_site(Nest *n, AccSite *site) {
  const char **mine[] = {n->value, n->reg_var, n->reg_len, n->block_len, n->point_off};
  const char **its[] = {site->value, site->reg_var, site->reg_len, site->block_len, site->point_off};
  for (size_t i = 0; i < sizeof mine / sizeof *mine; i++)
    for (int d = 0; d < LG_MAX_DIMS; d++) {
      const char *t = mine[i][d];
      mine[i][d] = its[i][d];
      its[i][d] = t;
    }
}

/* Marks the nodes of e->cur after `before` (NULL: all) as one
 * accumulator load or store at the current point. */
static void mark_site(Nest *n, LoopNode *before, AccKind kind, const char *index, bool block) {
  AccSite *site = arena_alloc(n->e->arena, sizeof *site);
  site->index = index;
  site->block = block;
  memcpy(site->value, n->value, sizeof site->value);
  memcpy(site->reg_var, n->reg_var, sizeof site->reg_var);
  memcpy(site->reg_len, n->reg_len, sizeof site->reg_len);
  memcpy(site->block_len, n->block_len, sizeof site->block_len);
  memcpy(site->point_off, n->point_off, sizeof site->point_off);
  for (LoopNode *x = before ? before->next : n->e->cur->first; x; x = x->next) {
    x->acc = kind;
    x->site = site;
  }
}

/* Builds the init or the epilogue at a site (the passes' LoopAttach). */
static void attach_at(Nest *n, const void *at, LoopList *into, bool init) {
  Emitter *e = n->e;
  const StructuredOp *op = n->op;
  AccSite *site = (AccSite *)at;
  swap_site(n, site);
  LoopList *outside = e->cur;
  e->cur = into;
  if (site->block)
    block_loops(n);
  if (init) {
    emit_attached_point(n, op->init, op->init_dims, site->index, true);
  } else {
    emit_attached_point(n, op->epilogue, op->epilogue_dims, site->index, false);
    const OpScope at_point = {op, n->value};
    for (int y = 0; y < op->nyields; y++) { /* outputs the epilogue does not write (sibling reductions) */
      const Operand *o = &op->operands[op->yields[y].operand];
      bool written = false;
      for (int z = 0; z < op->epilogue->nyields; z++)
        written |= op->epilogue->operands[op->epilogue->yields[z].operand].tensor == o->tensor;
      if (!written)
        put(e, loops_store(e->arena, access_str(e, &at_point, &n->place, o),
                           arena_printf(e->arena, "%s%s", n->acc[y], site->index)));
    }
  }
  e->cur = outside;
  swap_site(n, site);
}

static void init_at(void *ctx, const void *site, LoopList *into) { attach_at(ctx, site, into, true); }
static void epilogue_at(void *ctx, const void *site, LoopList *into) { attach_at(ctx, site, into, false); }

/* Gives the accumulators the output's values before their run (`block`:
 * over the register block's loops); the init pass may put the init in
 * their place. */
static void emit_loads(Nest *n, const char *index, bool block) {
  Emitter *e = n->e;
  const StructuredOp *op = n->op;
  const char *saved[LG_MAX_DIMS];
  memcpy(saved, n->value, sizeof saved);
  LoopList *outside = e->cur;
  LoopNode *before = outside->last;
  if (block)
    block_loops(n);
  const OpScope at = {op, n->value};
  for (int y = 0; y < op->nyields; y++)
    put(e, loops_store(e->arena, arena_printf(e->arena, "%s%s", n->acc[y], index),
                       access_str(e, &at, &n->place, &op->operands[op->yields[y].operand])));
  memcpy(n->value, saved, sizeof saved);
  e->cur = outside;
  mark_site(n, before, ACC_LOAD, index, block);
}

/* Stores the accumulators after their run (`block`: over the register
 * block's loops); the epilogue pass may apply the epilogue to them. */
static void emit_stores(Nest *n, const char *index, bool block) {
  Emitter *e = n->e;
  const StructuredOp *op = n->op;
  const char *saved[LG_MAX_DIMS];
  memcpy(saved, n->value, sizeof saved);
  LoopList *outside = e->cur;
  LoopNode *before = outside->last;
  if (block)
    block_loops(n);
  const OpScope at = {op, n->value};
  for (int y = 0; y < op->nyields; y++)
    put(e, loops_store(e->arena, access_str(e, &at, &n->place, &op->operands[op->yields[y].operand]),
                       arena_printf(e->arena, "%s%s", n->acc[y], index)));
  memcpy(n->value, saved, sizeof saved);
  e->cur = outside;
  mark_site(n, before, ACC_STORE, index, block);
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
  const OpScope at = {op, n->value};
  if (!*dims) { /* scalars, declared with their loaded values */
    LoopNode *before = e->cur->last;
    for (int y = 0; y < op->nyields; y++) {
      const Operand *o = &op->operands[op->yields[y].operand];
      put(e, loops_let(e->arena, c_type_name(e->k->tensors[o->tensor].type), n->acc[y],
                       access_str(e, &at, &n->place, o)));
    }
    mark_site(n, before, ACC_LOAD, "", false);
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
  proc->text = n->op->origin ? arena_printf(a, "a register block of %s", c_comment_text(a, n->op->origin))
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
    int64_t lo_align[LG_MAX_DIMS];
    memcpy(lo_align, n->lo_align, sizeof lo_align);
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
    memcpy(n->lo_align, lo_align, sizeof lo_align);
    memcpy(n->hi, hi, sizeof hi);
    memcpy(n->value, value, sizeof value);
  }

  for (int p = 0; p < n->npacks; p++)
    if (n->packs[p].alloc_at == i && !region_done && !acc_done)
      emit_pack_free(n, &n->packs[p]);
}

/* The whole op as one BLAS call (schedule's library_call): C += A * B. */
static void emit_library_call(Emitter *e, const StructuredOp *op, const char *function) {
  GemmShape g;
  if (!match_gemm(e->k, op, &g))
    return; /* schedule_verify rejected it already */
  e->includes |= INC_CBLAS;
  const char *dims[3];
  for (int i = 0; i < 3; i++)
    dims[i] = affine_str(e, NULL, op->dims[i].extent);
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
  loops_append(&node->body, loops_call(a, function, 14, args));
}

static void emit_nest(Emitter *e, const StructuredOp *op, const Schedule *s, int index, const int *attached,
                      const OpPlace *place, bool *at_store, bool *at_load);

/* An init or epilogue that the op's schedule keeps no accumulators for (a
 * parallel loop inside its reductions, a split reduction, a library call)
 * runs as an op of its own right before or after the op, under auto's
 * schedule for it; its dim j is the op's dim dims[j]. In a graph's
 * parallel region it shares the op's threads when the op used them, and
 * runs on the op's one thread when the op runs under `omp single`. */
static void emit_attached_nest(Emitter *e, const StructuredOp *E, const int *dims, int index, bool before,
                               bool worksharing, OpThreads on, const OpPlace *place) {
  Schedule s;
  schedule_auto(e->k, E, e->opt->target ? e->opt->target : target_default(), &s);
  bool in_region = on == THREADS_REGION, threads = false;
  for (int d = 0; d < E->ndims; d++) {
    if (on == THREADS_NONE || (in_region && !worksharing)) /* a row group's member, or under single */
      s.parallel[d] = s.parallel_reg[d] = false;
    threads |= s.parallel[d] || s.parallel_reg[d];
  }
  memset(s.pack, 0, sizeof s.pack); /* its scratch is not in the op's reservation */
  put(e, loops_comment(e->arena, arena_printf(e->arena, "the %s of comprehension %d, %s it (its schedule keeps no "
                                                        "accumulators)", before ? "init" : "epilogue", index + 1,
                                                        before ? "before" : "after")));
  bool single = in_region && worksharing && !threads;
  LoopList nest = {0}, *outside = build_into(e, &nest);
  bool at_store, at_load;
  emit_nest(e, E, &s, index, dims, place, &at_store, &at_load);
  e->cur = outside;
  if (in_region)
    loops_join_region(e->arena, &nest);
  if (single)
    loops_splice(&put(e, loops_block(e->arena, REGION_SINGLE))->body, &nest);
  else
    loops_splice(e->cur, &nest);
}

void emit_op(Emitter *e, const StructuredOp *op, const Schedule *s, int index, OpThreads threads,
             const OpPlace *place) {
  const OpPlace alone = {0};
  if (!place)
    place = &alone;
  bool in_region = threads == THREADS_REGION;
  if (op->ext) { /* a template, not a loop nest: c_ext.c */
    emit_ext_op(e, op, s, index, false, in_region, NULL);
    return;
  }
  Schedule serial;
  if (threads == THREADS_NONE) {
    serial = *s;
    for (int d = 0; d < LG_MAX_DIMS; d++)
      serial.parallel[d] = serial.parallel_reg[d] = false;
    s = &serial;
  }
  /* the init goes first when the nest cannot start from it, which is known
   * once the nest is built */
  LoopList nest = {0}, *outside = build_into(e, &nest);
  bool at_store, at_load;
  emit_nest(e, op, s, index, NULL, place, &at_store, &at_load);
  e->cur = outside;
  if (in_region)
    loops_join_region(e->arena, &nest);
  bool worksharing = loops_has_worksharing(&nest);
  if (op->init && !at_load)
    emit_attached_nest(e, op->init, op->init_dims, index, true, worksharing, threads, place);
  loops_splice(e->cur, &nest);
  if (op->epilogue && !at_store)
    emit_attached_nest(e, op->epilogue, op->epilogue_dims, index, false, worksharing, threads, place);
}

bool op_splits_reduction(const StructuredOp *op, const Schedule *s) {
  if (op->ext || s->library_call)
    return false;
  Loop loops[LG_MAX_LOOPS];
  int count, n = schedule_loops(op, s, loops);
  int first = schedule_parallel_loop(op, s, loops, n, &count);
  return first >= 0 && op->dims[loops[first].dim].kind == ITER_REDUCTION;
}

/* The nest inside a parallel region of its own, around the loops that
 * share its work (n->hoisted), with the packed buffers one per thread or
 * shared. */
static void emit_hoisted(Nest *n) {
  Emitter *e = n->e;
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
}

/* The op's nest under s; *at_store and *at_load get whether its
 * epilogue and init are applied in it (else they run as nests of their
 * own). `attached`: the nest of an init or epilogue, whose dim j is the
 * op's dim attached[j] (NULL: the op's own nest). */
static void emit_nest(Emitter *e, const StructuredOp *op, const Schedule *s, int index, const int *attached,
                      const OpPlace *place, bool *at_store, bool *at_load) {
  *at_store = *at_load = false;
  if (s->library_call) {
    if (!attached && op->origin)
      put(e, loops_comment(e->arena, c_comment_text(e->arena, op->origin)));
    emit_library_call(e, op, s->library_call);
    return;
  }
  LoopList *tree = e->cur;
  Nest *n = nest_acquire(e);
  n->e = e;
  n->op = op;
  n->index = index;
  n->s = s;
  n->place = *place;
  n->dim_of = attached;
  n->acc = arena_alloc(e->arena, sizeof(char *) * (size_t)(op->nyields + 1));
  for (int y = 0; y < op->nyields; y++)
    n->acc[y] = claim(n, "%s_acc", e->kn.tensors[op->operands[op->yields[y].operand].tensor]);
  plan(n);
  for (int i = 0; i < n->nloops; i++)
    if (n->loops[i].kind == LOOP_REG_POINT)
      n->point_var[n->loops[i].dim] = claim(n, "%s_i", dim_name(n, n->loops[i].dim));
  for (int d = 0; d < op->ndims; d++) {
    n->lo[d] = "0";
    n->hi[d] = affine_str(e, NULL, op->dims[d].extent);
    n->value[d] = dim_name(n, d);
  }
  plan_packs(n);
  name_packs(n);
  if (place->scratch)
    layout_scratch(n);
  if (!attached && op->origin) /* a graph's op: the nodes it computes */
    put(e, loops_comment(e->arena, c_comment_text(e->arena, op->origin)));
  else if (e->k->nops > 1 && !attached)
    put(e, loops_comment(e->arena, comprehension_comment(e, op, index)));
  if (!n->hoisted)
    emit_from(n, 0, false, false);
  else
    emit_hoisted(n);
  /* the nest is built plainly, loading and storing its output; these
   * passes put the init and epilogue at its accumulators where they can */
  *at_load = op->init && loops_init_at_load(e->arena, tree, init_at, n);
  *at_store = op->epilogue && loops_epilogue_at_store(e->arena, tree, epilogue_at, n);
  nest_release(e, n);
}

const char *op_scratch_bytes(Emitter *e, const StructuredOp *op, const Schedule *s, const OpPlace *place,
                             int64_t *value) {
  *value = 0;
  if (op->ext || s->library_call) /* an ext op's scratch is a workspace tensor of its own */
    return "0";
  Nest *n = nest_acquire(e);
  n->e = e;
  n->op = op;
  n->s = s;
  n->place = *place;
  plan(n);
  plan_packs(n);
  layout_scratch(n);
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
