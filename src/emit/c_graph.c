/* c_graph.c - a model graph's run body (contracts.md section 3): each op's
 * tree in a block that first points its intermediates, aliases and
 * constants at their memory; row-fused groups in one nest over their rows;
 * a softmax group in the softmax's chunk loop; one OpenMP parallel region
 * around it all when some op shares its loops, with `omp single` for the
 * ops that cannot; and the scratch area's size.
 *
 * Calls: c_names.c, c_expr.c, c_runtime.c, c_access.c, c_consts.c, c_checks.c,
 *   c_ext.c, c_loops.c. */
#include "emit/c_internal.h"

#include <stdlib.h>
#include <string.h>

/* Where a run body's tensors live: the graph's buffer plan in the
 * workspace (its C pointer ws), with the plan's buffers by tensor, built
 * once per run body (a graph has a tensor per node: no scan per lookup).
 * While an outlined group's code is built (outline and libcall, below),
 * params[t] marks the kernel tensors that are its function's parameters:
 * no pointer is declared for them (NULL: G_run's own code). */
typedef struct {
  const BufferPlan *plan;
  const char *ws;
  int *buffer_of; /* tensor t's first buffer in plan (-1: none), for t < nbuffer_of */
  int nbuffer_of;
  const bool *params;
} RunMemory;

static RunMemory run_memory(Emitter *e, const BufferPlan *plan, const char *ws) {
  int n = 0;
  for (int i = 0; i < plan->nbuffers; i++)
    n = plan->buffers[i].tensor >= n ? plan->buffers[i].tensor + 1 : n;
  int *of = arena_alloc(e->arena, sizeof(int) * (size_t)(n + 1));
  for (int t = 0; t < n; t++)
    of[t] = -1;
  for (int i = plan->nbuffers - 1; i >= 0; i--) /* the first buffer of a tensor, as a scan finds */
    of[plan->buffers[i].tensor] = i;
  return (RunMemory){plan, ws, of, n, NULL};
}

/* Where tensor `root` (not an alias) lives, as a C pointer expression. */
static const char *root_address(Emitter *e, const RunMemory *mem, int root) {
  const TensorParam *tp = &e->k->tensors[root];
  if (tp->storage == TS_CONST)
    return const_symbol(e, root);
  if (tp->storage != TS_WORKSPACE)
    return e->kn.tensors[root];
  int i = root < mem->nbuffer_of ? mem->buffer_of[root] : -1;
  if (i >= 0) {
    const AffineExpr *off = mem->plan->buffers[i].offset;
    if (off->kind == AE_CONST && off->value == 0)
      return mem->ws;
    return arena_printf(e->arena, "((char *)%s + %s)", mem->ws, affine_str(e, NULL, off));
  }
  diag_bug(e->opt->diag, "intermediate %s has no place in the buffer plan", tp->name);
}

/* Packing in graph ops: buffers in the scratch area, constants pre-packed
 * (OpPlace's packing fields, which every op of a graph gets). */
static const char *const scratch_name = "lgen_scratch";
static OpPlace graph_place(void) { return (OpPlace){.scratch = scratch_name, .prepack_constants = true}; }

static int compare_tensor_ids(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return x < y ? -1 : x > y;
}

/* Pointers for the tensors that the ops' code (`code`) uses and that are
 * not parameters, put in before the code. A pointer is restrict unless
 * another tensor of the ops shares its memory (an alias and its root).
 * `prologue` (or NULL): the op (of e->k) that the one op's pack copy
 * computes, whose tensors the code reads too. */
static void declare_ops_tensors(Emitter *e, const RunMemory *mem, const StructuredOp *const *list, int n,
                                const StructuredOp *prologue, LoopList *code) {
  const Kernel *k = e->k;
  /* the ops' tensors that the code uses, in tensor order (a graph has a
   * tensor per node: only these are looked at, never all of them) */
  int cap = 1;
  for (int i = 0; i < n; i++)
    cap += op_all_operands(list[i]);
  cap += prologue ? prologue->noperands : 0;
  int *cand = arena_alloc(e->arena, sizeof(int) * (size_t)cap), ncand = 0;
  for (int i = 0; i < n; i++)
    for (int o = 0; o < op_all_operands(list[i]); o++)
      cand[ncand++] = op_operand_at(list[i], o)->tensor;
  for (int o = 0; prologue && o < prologue->noperands; o++) /* what its pack copy computes from */
    cand[ncand++] = prologue->operands[o].tensor;
  qsort(cand, (size_t)ncand, sizeof(int), compare_tensor_ids);
  /* one pass over the code, not one per candidate */
  const char **names = arena_alloc(e->arena, sizeof(char *) * (size_t)(ncand + 1));
  for (int i = 0; i < ncand; i++)
    names[i] = e->kn.tensors[cand[i]];
  names[ncand] = scratch_name;
  NameSet mentioned;
  nameset_init(&mentioned, names, ncand + 1, e->arena);
  nameset_scan_tree(&mentioned, code);
  int nused = 0;
  for (int i = 0; i < ncand; i++)
    if ((nused == 0 || cand[nused - 1] != cand[i]) && nameset_seen(&mentioned, e->kn.tensors[cand[i]]))
      cand[nused++] = cand[i];
  LoopList decls = {0};
  for (int i = 0; i < nused; i++) {
    int t = cand[i];
    const TensorParam *tp = &k->tensors[t];
    if (tp->storage == TS_PARAM || (mem->params && mem->params[t]))
      continue; /* a parameter of G_run, or of the outlined group's function */
    int root = alias_root(k, t);
    bool shared = false;
    for (int j = 0; j < nused; j++)
      shared |= j != i && alias_root(k, cand[j]) == root;
    const TensorParam *rp = &k->tensors[root];
    bool read_only = rp->storage == TS_CONST || (rp->storage == TS_PARAM && !rp->is_output);
    const char *cq = read_only ? "const " : "";
    const char *type = c_type_name(tp->type);
    const char *addr = root_address(e, mem, root);
    bool same_type = rp->storage != TS_WORKSPACE && rp->type == tp->type;
    const char *ptr = arena_printf(e->arena, "%s%s *%s", cq, type, shared ? "" : "restrict");
    loops_append(&decls, loops_let(e->arena, ptr, e->kn.tensors[t],
                                   same_type ? addr : arena_printf(e->arena, "(%s%s *)%s", cq, type, addr)));
  }
  if (nameset_seen(&mentioned, scratch_name)) {
    const AffineExpr *end = mem->plan->total;
    if (end->kind == AE_CONST && end->value == 0)
      loops_append(&decls, loops_let(e->arena, "char *restrict", scratch_name,
                                     arena_printf(e->arena, "(char *)%s", mem->ws)));
    else /* the plan's total is a multiple of 64: so is the scratch area */
      loops_append(&decls, loops_let(e->arena, "char *restrict", scratch_name,
                                     arena_printf(e->arena, "(char *)%s + %s", mem->ws, affine_str(e, NULL, end))));
  }
  loops_splice(&decls, code);
  *code = decls;
}

/* The scratch area's size: the largest need of any op (c_loops.c); `value`
 * gets it, or -1 when it depends on the sizes (then the C text is a
 * statement list that leaves it in lgen_scratch_bytes). */
const char *graph_scratch_bytes(Emitter *e, int index, int64_t *value) {
  const Kernel *k = e->k;
  StrBuf steps = {0};
  int64_t most = 0;
  bool symbolic = false;
  for (int i = 0; i < k->nops; i++) {
    const OpPlan *op_plan = &e->opt->plans[index][i];
    int64_t v;
    emitter_view(e, op_plan->view.k);
    const OpPlace place = graph_place();
    const char *bytes = op_scratch_bytes(e, op_plan->view.op, &op_plan->s, &place, &v);
    emitter_view(e, k);
    if (v >= 0) {
      most = v > most ? v : most;
      continue;
    }
    symbolic = true;
    /* lines of at most LOOPS_WIDTH columns, as the loop printer breaks them */
    loops_put_line(&steps, 2, 6, arena_printf(e->arena, "if ((size_t)(%s) > lgen_scratch_bytes)", bytes));
    loops_put_line(&steps, 4, 8, arena_printf(e->arena, "lgen_scratch_bytes = (size_t)(%s);", bytes));
  }
  /* after the largest need, the run's thread-count record (lgen_team) */
  int64_t team = graph_wants_region(e, index) ? LG_TEAM_BYTES : 0;
  const char *text = arena_printf(e->arena, "  size_t lgen_scratch_bytes = %lld;\n%s%s", (long long)most,
                                  sb_cstr(&steps),
                                  team ? arena_printf(e->arena, "  lgen_scratch_bytes += %lld;\n",
                                                                  (long long)team)
                                                   : "");
  sb_free(&steps);
  *value = symbolic ? -1 : most + team;
  return text;
}

/* The whole workspace's size when static (-1 otherwise): the buffer plan's
 * intermediates, then the scratch area. */
int64_t graph_workspace_static(Emitter *e, int index, const BufferPlan *plan) {
  int64_t scratch;
  graph_scratch_bytes(e, index, &scratch);
  return plan->total_static >= 0 && scratch >= 0 ? plan->total_static + scratch : -1;
}

/* A prologue (schedule/prologue.c): the pointwise op P whose result, the
 * op's tensor t, the op's pack copy computes (both in the numbering of
 * the op's view, with_prologue's). */
typedef struct {
  Emitter *e;
  const StructuredOp *P;
  int t;
} Prologue;

/* The op's view extended with the tensors of P, the producer its pack copy
 * computes (schedule/prologue.c: P's tensors are the kernel's, the view
 * holds only the op's own); *pro gets P and t in the view's numbering. */
static const Kernel *with_prologue(Emitter *e, const Kernel *view, const StructuredOp *P, int t, Prologue *pro) {
  const Kernel *k = view->view_base ? view->view_base : view;
  int n = view->ntensors;
  Kernel *vk = arena_alloc(e->arena, sizeof *vk);
  *vk = *view;
  vk->tensors = arena_alloc(e->arena, sizeof(TensorParam) * (size_t)(n + P->noperands + 2));
  memcpy(vk->tensors, view->tensors, sizeof(TensorParam) * (size_t)n);
  int *ids = arena_alloc(e->arena, sizeof(int) * (size_t)(n + P->noperands + 2));
  for (int u = 0; u < n; u++)
    ids[u] = view->view_tensor ? view->view_tensor[u] : u;
  StructuredOp *p = arena_alloc(e->arena, sizeof *p);
  *p = *P;
  p->operands = arena_alloc(e->arena, sizeof(Operand) * (size_t)(P->noperands + 1));
  memcpy(p->operands, P->operands, sizeof(Operand) * (size_t)P->noperands);
  int local_t = -1;
  for (int o = 0; o <= P->noperands; o++) {
    int g = o < P->noperands ? P->operands[o].tensor : t, at = -1;
    for (int u = 0; u < n && at < 0; u++)
      at = ids[u] == g ? u : -1;
    if (at < 0) {
      at = n++;
      ids[at] = g;
      vk->tensors[at] = k->tensors[g];
      if (vk->tensors[at].storage == TS_ALIAS) /* only read through: its root is not needed here */
        vk->tensors[at].storage = TS_WORKSPACE;
    }
    if (o < P->noperands)
      p->operands[o].tensor = at;
    else
      local_t = at;
  }
  vk->ntensors = n;
  vk->view_base = k;
  vk->view_tensor = ids;
  *pro = (Prologue){e, p, local_t};
  return vk;
}

/* The fill pass's value (loops_fill_elements) for a prologue: P's
 * payload as one C expression at the element of its result whose
 * coordinates (in the op's view of the tensor) are coords, its dim at
 * output position i valued coords[i]. */
static const char *prologue_value(void *ctx, const char *const *coords, int ncoords) {
  const Prologue *pro = ctx;
  Emitter *e = pro->e;
  const StructuredOp *P = pro->P;
  const Operand *out = &P->operands[P->yields[0].operand];
  const TensorParam *seen = &e->k->tensors[pro->t]; /* the op's view: unit positions may be gone */
  /* the tensor's shape in the kernel (with_prologue made the view, whose
   * base is the kernel) */
  const Kernel *base = e->k->view_base ? e->k->view_base : e->k;
  AffineExpr *const *shape = base->tensors[emitter_kernel_tensor(e, pro->t)].shape;
  const char **names = arena_alloc(e->arena, sizeof(char *) * (size_t)(P->ndims + 1));
  for (int i = 0, j = 0; i < P->ndims; i++) {
    const AffineExpr *extent = shape[i];
    bool kept = j < seen->rank && j < ncoords && affine_equal(seen->shape[j], extent);
    names[out->map[i]->index] = kept ? arena_printf(e->arena, "(%s)", coords[j++]) : "0";
  }
  const OpScope at = {P, names};
  const char **values = arena_alloc(e->arena, sizeof(char *) * (size_t)(P->noperands + 1));
  for (int o = 0; o < P->noperands; o++)
    values[o] = P->operands[o].shape_only ? "" : access_str(e, &at, NULL, &P->operands[o]);
  ExprCtx cx = {.op = P, .operand_values = values, .helpers = e->helpers, .helper_names = e->helper_names,
                .arena = e->arena, .dim_names = names, .size_names = (const char *const *)e->kn.sizes,
                .needs = &e->needs};
  cx.node_names = arena_alloc(e->arena, sizeof(char *) * (size_t)(P->nnodes + 1));
  StrBuf sb = {0};
  c_expr(&sb, &cx, P->yields[0].value);
  const char *v = arena_printf(e->arena, "(%s)", sb_cstr(&sb));
  sb_free(&sb);
  return v;
}

/* One op of G_run, into `code`. In the graph's parallel region
 * (`region`), the op's loops join it (emit_op: loops_join_region), an op
 * with no worksharing loop runs under `omp single` (whose barrier orders
 * it before the next op), and an op whose parallel loop cannot be orphaned
 * (a split reduction: its reduction clause needs a region of its own) is
 * built as it would be alone, under `omp single` (its own region is then
 * nested and inactive: it runs on one thread). Returns whether the op
 * needs `omp single`. */
static bool emit_graph_op(Emitter *e, LoopList *code, const Kernel *k, const OpPlan *op_plan, int i, bool region) {
  e->cur = code;
  OpPlace place = graph_place();
  Prologue pro = {0};
  emitter_view(e, op_plan->has_prologue ? with_prologue(e, op_plan->view.k, &k->ops[op_plan->prologue_op],
                                                        op_plan->prologue_tensor, &pro)
                                        : op_plan->view.k);
  bool own = region && op_splits_reduction(op_plan->view.op, &op_plan->s);
  emit_op(e, op_plan->view.op, &op_plan->s, i, region && !own ? THREADS_REGION : THREADS_OWN, &place);
  if (pro.P) /* the pack copy of the prologue's result computes it */
    loops_fill_elements(e->arena, code, e->kn.tensors[pro.t], prologue_value, &pro);
  emitter_view(e, k);
  return region && (own || !loops_has_worksharing(code));
}

/* Whether some op of the graph has a parallel loop that can be orphaned (no
 * reduction clause, no library call): then G_run opens one region for all. */
bool graph_wants_region(const Emitter *e, int index) {
  const OpPlan *plans = e->opt->plans[index];
  for (int i = 0; i < e->k->nops; i++) {
    const Schedule *s = &plans[i].s;
    if (plans[i].libcall) { /* the user's code: its group's ops are not built */
      i += plans[i].group_size > 1 ? plans[i].group_size - 1 : 0;
      continue;
    }
    if (s->split_reduction || s->library_call)
      continue;
    for (int d = 0; d < LG_MAX_DIMS; d++)
      if (s->parallel[d] || s->parallel_reg[d])
        return true;
  }
  return false;
}

/* Member m of a row-fused group, its row dims bound to `values` (C
 * expressions of the group's rows), with no threads of its own: its code
 * is built as it would run alone over every row, and the bind pass
 * (loops_bind_dims) takes its loops over the row dims away. */
static void emit_row_member(Emitter *e, int index, int m, int rows, const char *const *values) {
  const Kernel *k = e->k;
  const OpPlan *member = &e->opt->plans[index][m];
  const char **bound = arena_alloc(e->arena, sizeof(char *) * (size_t)(member->view.op->ndims + 1));
  row_group_bindings(member, &k->ops[m], rows, values, bound);
  emitter_view(e, member->view.k);
  OpPlace place = graph_place();
  LoopList code = {0}, *outside = build_into(e, &code);
  emit_op(e, member->view.op, &member->s, m, THREADS_NONE, &place);
  e->cur = outside;
  loops_bind_dims(e->arena, &code, bound, member->view.op->ndims);
  loops_splice(e->cur, &code);
  emitter_view(e, k);
}

/* The op before or after a softmax, row-fused with it (schedule/rows.c):
 * its block for each row of the chunk, lgen_u0 .. lgen_u1 - 1, its row
 * dims bound to that row's coordinates (the softmax's outer dims,
 * row-major). Its nest is built as if the group's chunk buffers (the
 * head's chunk_local, or none) held every row; loops_shift_arrays then
 * moves its elements of them by lgen_shift, row lgen_u0's first element,
 * to the running thread's chunk buffer (c_ext.c call_softmax defines it). */
static LoopNode *softmax_member(Emitter *e, int index, int member, const OpPlan *head) {
  const Kernel *k = e->k;
  const StructuredOp *op = &k->ops[member];
  int rows = e->opt->plans[index][member].group_rows;
  LoopNode *f = loops_for(e->arena, "lgen_r", "lgen_u0", "lgen_u1", 1);
  LoopList *outside = build_into(e, &f->body);
  int mark = names_mark(&e->kn.table);
  const char *values[LG_MAX_DIMS];
  const char *rest = "lgen_r";
  for (int q = rows - 1; q >= 0; q--) { /* the innermost row dim varies fastest */
    const AffineExpr *x = op->dims[q].extent;
    if (x->kind == AE_CONST && x->value == 1) {
      values[q] = "0";
      continue;
    }
    values[q] = names_claim(&e->kn.table, op->dims[q].name);
    const char *n = affine_str(e, NULL, x);
    put(e, loops_let(e->arena, "const int64_t", values[q],
                     q == 0 ? rest : arena_printf(e->arena, "%s %% (%s)", rest, n)));
    rest = arena_printf(e->arena, "%s / (%s)", rest, n);
  }
  emit_row_member(e, index, member, rows, values);
  const char *chunked[LG_MAX_TENSORS];
  for (int c = 0; c < head->nchunk_local; c++)
    chunked[c] = e->kn.kernel_tensors[head->chunk_local[c]];
  loops_shift_arrays(e->arena, &f->body, chunked, head->nchunk_local, "lgen_shift");
  names_release(&e->kn.table, mark);
  e->cur = outside;
  return f;
}

/* A softmax and the ops just before and after it, row-fused: the
 * softmax's chunk loop (c_ext.c), with the op before put in just before
 * its call and the op after just after it. */
static void emit_softmax_group(Emitter *e, LoopList *ops, int index, int first, const RunMemory *mem,
                               bool region) {
  const Kernel *k = e->k;
  int size = e->opt->plans[index][first].group_size, sm = k->ops[first].ext ? first : first + 1;
  int before = sm > first ? first : -1, after = sm < first + size - 1 ? sm + 1 : -1;
  LoopList code = {0};
  e->cur = &code;
  put(e, loops_comment(e->arena, arena_printf(e->arena, "comprehensions %d to %d, chunk by chunk: %s%s%s", first + 1,
                                              first + size,
                                              before >= 0 ? "the op before the softmax on a chunk's rows, " : "",
                                              "the softmax's rows",
                                              after >= 0 ? ", then the op after it on them" : "")));
  const OpPlan *head = &e->opt->plans[index][first];
  const OpPlan *chunk_group = head->nchunk_local ? head : NULL;
  LoopNode *call = emit_ext_op(e, &k->ops[sm], &e->opt->plans[index][sm].s, sm, true, region, chunk_group);
  LoopNode *chunks = loops_find_parallel(&code);
  if (before >= 0)
    loops_insert_before(&chunks->body, call, softmax_member(e, index, before, head));
  if (after >= 0)
    loops_insert_after(&chunks->body, call, softmax_member(e, index, after, head));
  const StructuredOp *members[3];
  for (int m = 0; m < size; m++)
    members[m] = &k->ops[first + m];
  declare_ops_tensors(e, mem, members, size, NULL, &code);
  LoopNode *block = loops_block(e->arena, REGION_NONE);
  block->body = code;
  loops_append(ops, block);
}

/* A row-fused group (schedule/rows.c), ops first .. first + size - 1, into
 * `ops`: one loop nest over the rows (a worksharing loop when a member
 * would have used threads; else, in the graph's region, under `omp
 * single`), each member's block inside it with its row dims bound to the
 * rows and no threads of its own. A group around a softmax is
 * emit_softmax_group's. */
static void emit_graph_group(Emitter *e, LoopList *ops, int index, int first, const RunMemory *mem, bool region) {
  const Kernel *k = e->k;
  if (k->ops[first].ext || k->ops[first + 1].ext) {
    emit_softmax_group(e, ops, index, first, mem, region);
    return;
  }
  const OpPlan *head = &e->opt->plans[index][first];
  const StructuredOp *op0 = &k->ops[first];
  int size = head->group_size, rows = head->group_rows;
  bool threads = head->group_threads;
  const char *values[LG_MAX_DIMS];
  int loops = 0;
  LoopNode *block = loops_block(e->arena, region && !threads ? REGION_SINGLE : REGION_NONE);
  loops_append(ops, block);
  e->cur = &block->body;
  for (int q = 0; q < rows; q++) {
    const AffineExpr *x = op0->dims[q].extent;
    values[q] = x->kind == AE_CONST && x->value == 1 ? "0" : names_claim(&e->kn.table, op0->dims[q].name);
    loops += values[q][0] != '0';
  }
  put(e, loops_comment(e->arena, arena_printf(e->arena, "comprehensions %d to %d, row by row", first + 1,
                                              first + size)));
  bool first_loop = true;
  for (int q = 0; q < rows; q++)
    if (values[q][0] != '0') {
      LoopNode *f = put(e, loops_for(e->arena, values[q], "0", affine_str(e, NULL, op0->dims[q].extent), 1));
      if (threads && first_loop) {
        f->par = region ? PAR_WORKSHARING : PAR_REGION;
        f->collapse = loops;
      }
      first_loop = false;
      e->cur = &f->body;
    }
  LoopList *rows_body = e->cur;
  for (int m = first; m < first + size; m++) {
    LoopList code = {0};
    e->cur = &code;
    int mark = names_mark(&e->kn.table);
    emit_row_member(e, index, m, rows, values);
    declare_ops_tensors(e, mem, (const StructuredOp *const[]){&k->ops[m]}, 1, NULL, &code);
    LoopNode *member = loops_block(e->arena, REGION_NONE);
    member->body = code;
    loops_append(rows_body, member);
    names_release(&e->kn.table, mark);
  }
}

/* The claim pass's names (loops_claim): from the kernel's table. */
static const char *claim_name(void *ctx, const char *base) {
  Emitter *e = ctx;
  return names_claim(&e->kn.table, base);
}

/* ---- -DLGEN_PROFILE: G_run times each group (an op, with its fused
 * init, epilogue and pack prologue, or a row-fused group). Every op of the
 * graph's region ends where all threads have met (a barrier, or a wait
 * for all claimed chunks), so thread 0's clock between two groups' ends is
 * the group's time. The nodes are guarded: without the macro the C is
 * what it was. */

static const char *const profile_guard = "LGEN_PROFILE";

/* The C of `terms` plus the constant `constant`, as a double. */
static const char *flops_sum(Emitter *e, double constant, StrBuf *terms) {
  if (!terms->len)
    return arena_printf(e->arena, "%.17g", constant);
  if (constant == 0) /* terms start with " + " */
    return arena_strdup(e->arena, sb_cstr(terms) + 3);
  return arena_printf(e->arena, "%.17g%s", constant, sb_cstr(terms));
}

/* op's floating-point operations (analysis/flops.c) over its domain: into
 * *constant where the extents are numbers, else a term " + c * (double)(X)
 * * ..." of `terms`, computed at run time from the sizes. */
static void add_op_flops(Emitter *e, const StructuredOp *op, double *constant, StrBuf *terms) {
  if (!op)
    return;
  int64_t per_point = op_flops_per_point(op);
  if (per_point) {
    double c = (double)per_point;
    StrBuf sym = {0};
    for (int d = 0; d < op->ndims; d++) {
      const AffineExpr *x = op->dims[d].extent;
      if (x->kind == AE_CONST)
        c *= (double)x->value;
      else
        sb_printf(&sym, " * (double)(%s)", affine_str(e, NULL, x));
    }
    if (sym.len)
      sb_printf(terms, " + %.17g%s", c, sb_cstr(&sym));
    else
      *constant += c;
    sb_free(&sym);
  }
  add_op_flops(e, op->init, constant, terms);
  add_op_flops(e, op->epilogue, constant, terms);
}

/* What group `g` of ops first .. first + size - 1 (and the prologue its
 * pack copy computes) carries: their graph nodes, as C string text (long
 * lists cut: a string literal must stay under C99's 4095 characters). */
static const char *group_ops_text(Emitter *e, int first, int size, const StructuredOp *prologue) {
  const Kernel *k = e->k;
  StrBuf sb = {0};
  for (int i = first; i < first + size; i++) {
    const StructuredOp *op = &k->ops[i];
    if (i > first)
      sb_puts(&sb, "; ");
    if (op->origin)
      sb_puts(&sb, op->origin);
    else
      sb_printf(&sb, "comprehension %d", i + 1);
    if (!op->ext && op->nyields) /* a conv's padded copy and the conv itself differ here */
      sb_printf(&sb, " -> %s", k->tensors[op->operands[op->yields[0].operand].tensor].name);
  }
  if (prologue)
    sb_printf(&sb, "; %s (in the pack copy)", prologue->origin ? prologue->origin : "a pointwise op");
  enum { MOST = 400 };
  if (sb.len > MOST) {
    sb.data[MOST - 3] = '\0';
    sb.len = MOST - 3;
    sb_puts(&sb, "...");
  }
  const char *text = c_string_text(e->arena, sb_cstr(&sb));
  sb_free(&sb);
  return text;
}

/* Group g's lap, right after its code in `ops`: its time and FLOPs. */
static void profile_lap(Emitter *e, LoopList *ops, ProfileGroups *groups, int index, int first, int size) {
  const Kernel *k = e->k;
  const OpPlan *plan = &e->opt->plans[index][first];
  const StructuredOp *prologue = size == 1 && plan->has_prologue ? &k->ops[plan->prologue_op] : NULL;
  double constant = 0;
  StrBuf terms = {0};
  for (int i = first; i < first + size; i++)
    add_op_flops(e, &k->ops[i], &constant, &terms);
  add_op_flops(e, prologue, &constant, &terms);
  const char *args[3] = {arena_printf(e->arena, "&%s", groups->state), arena_printf(e->arena, "%d", groups->n),
                         flops_sum(e, constant, &terms)};
  sb_free(&terms);
  LoopNode *lap = loops_call(e->arena, "lgen_profile_lap", 3, args);
  lap->guard = profile_guard;
  loops_append(ops, lap);
  if (groups->n == groups->cap) { /* doubling: a graph may have 10^5 groups */
    groups->cap = groups->cap ? 2 * groups->cap : 16;
    const char **grown = arena_alloc(e->arena, sizeof(char *) * (size_t)groups->cap);
    for (int i = 0; i < groups->n; i++)
      grown[i] = groups->ops[i];
    groups->ops = grown;
  }
  groups->ops[groups->n++] = group_ops_text(e, first, size, prologue);
}

/* ---- outline and libcall: a group as a C function of its own ----
 *
 * The schedule file's `outline: NAME` makes the group an op heads (the op
 * with its fused init, epilogue and pack prologue, or a row-fused group)
 * the extern function
 *
 *   void NAME(const T *restrict in..., T *restrict out..., int64_t N...,
 *             void *restrict workspace);
 *
 * and G_run calls it where the group's code was; `libcall: NAME` calls
 * the user's function of that ABI instead and generates nothing. The
 * tensors are the group's own that live outside it (graph inputs and
 * outputs, constants, intermediates another group reads or writes), in
 * order of first use by the group's ops: those the group only reads, then
 * those it writes. Then the graph's symbolic dims, then G_run's workspace
 * (where the group's own intermediates and packing buffers are). An
 * outlined group runs as it would in G_run: every thread of G_run's region
 * calls it when its loops are shared out (orphaned `omp for`s), else one
 * does. A libcall is called between G_run's parallel regions (which end
 * before it and start again after it), by the calling thread alone. */
typedef struct {
  const char *name;
  bool libcall;
  int first, size; /* the group's ops (its head's prologue aside) */
  int n, ninputs;  /* tensors: inputs first */
  int *tensors;    /* kernel tensor ids */
  bool *restricted;
  bool *param;     /* param[t]: tensor t is a parameter */
  LoopList body;   /* an outline's code */
} Outline;

static int group_ops_count(const OpPlan *p) { return p->group_size > 1 ? p->group_size : 1; }

/* The group's ops: its members and the producers their pack copies compute. */
static bool *group_members(Emitter *e, int index, int first) {
  const OpPlan *plans = e->opt->plans[index];
  bool *member = arena_alloc(e->arena, (size_t)e->k->nops + 1);
  for (int m = first; m < first + group_ops_count(&plans[first]); m++) {
    member[m] = true;
    if (plans[m].has_prologue)
      member[plans[m].prologue_op] = true;
  }
  return member;
}

static bool writes_tensor(const StructuredOp *op, int t) {
  return op_writes_tensor(op, t) || (op->init && op_writes_tensor(op->init, t)) ||
         (op->epilogue && op_writes_tensor(op->epilogue, t));
}

static Outline *outline_of(Emitter *e, int index, int first) {
  const Kernel *k = e->k;
  const OpPlan *head = &e->opt->plans[index][first];
  Outline *o = arena_alloc(e->arena, sizeof *o);
  o->name = head->outline;
  o->libcall = head->libcall;
  o->first = first;
  o->size = group_ops_count(head);
  bool *member = group_members(e, index, first);
  int nt = k->ntensors;
  bool *outside = arena_alloc(e->arena, (size_t)nt + 1), *written = arena_alloc(e->arena, (size_t)nt + 1);
  bool *seen = arena_alloc(e->arena, (size_t)nt + 1);
  int cap = 1, n = 0;
  for (int j = 0; j < k->nops; j++) {
    const StructuredOp *op = &k->ops[j];
    if (member[j])
      cap += op_all_operands(op);
    for (int i = 0; !member[j] && i < op_all_operands(op); i++) /* as the buffer plan sees them */
      if (!op_operand_at(op, i)->shape_only)
        outside[alias_root(k, op_operand_at(op, i)->tensor)] = true;
  }
  int *used = arena_alloc(e->arena, sizeof(int) * (size_t)cap);
  for (int j = 0; j < k->nops; j++)
    for (int i = 0; member[j] && i < op_all_operands(&k->ops[j]); i++) {
      int t = op_operand_at(&k->ops[j], i)->tensor;
      if (op_operand_at(&k->ops[j], i)->shape_only)
        continue; /* its shape, not its memory */
      if (writes_tensor(&k->ops[j], t))
        written[alias_root(k, t)] = true;
      if (!seen[t])
        used[n++] = t;
      seen[t] = true;
    }
  o->tensors = arena_alloc(e->arena, sizeof(int) * (size_t)(n + 1));
  o->restricted = arena_alloc(e->arena, (size_t)n + 1);
  o->param = arena_alloc(e->arena, (size_t)nt + 1);
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < n; i++) {
      int root = alias_root(k, used[i]);
      const TensorParam *rp = &k->tensors[root];
      if (rp->storage == TS_WORKSPACE && !outside[root])
        continue; /* the group's own: in the workspace, or (a prologue's result) nowhere */
      bool read_only = rp->storage == TS_CONST || (rp->storage == TS_PARAM && !rp->is_output) || !written[root];
      if (read_only == (pass == 0)) {
        o->param[used[i]] = true;
        o->tensors[o->n++] = used[i];
      }
    }
    if (pass == 0)
      o->ninputs = o->n;
  }
  for (int i = 0; i < o->n; i++) {
    o->restricted[i] = true;
    for (int j = 0; j < o->n; j++)
      if (j != i && alias_root(k, o->tensors[j]) == alias_root(k, o->tensors[i]))
        o->restricted[i] = false;
  }
  return o;
}

/* NAME(...) with its parameters' types (restrict_kw) or, types false, as
 * the arguments G_run passes. */
static const char *outline_params_text(Emitter *e, const Outline *o, const char *restrict_kw, bool types,
                                       const char *ws) {
  const Kernel *k = e->k;
  StrBuf sb = {0};
  sb_printf(&sb, "%s%s(", types ? "void " : "", o->name);
  for (int i = 0; i < o->n; i++) {
    int t = o->tensors[i];
    if (types)
      sb_printf(&sb, "%s%s%s *%s%s%s", i ? ", " : "", i < o->ninputs ? "const " : "", c_type_name(k->tensors[t].type),
                o->restricted[i] ? restrict_kw : "", o->restricted[i] ? " " : "", e->kn.tensors[t]);
    else
      sb_printf(&sb, "%s%s", i ? ", " : "", e->kn.tensors[t]);
  }
  if (k->nsizes)
    sb_printf(&sb, "%s%s", o->n ? ", " : "", size_list(e, types));
  if (types)
    sb_printf(&sb, "%svoid *%s %s)", o->n || k->nsizes ? ", " : "", restrict_kw, ws);
  else
    sb_printf(&sb, "%s%s)", o->n || k->nsizes ? ", " : "", ws);
  const char *text = arena_strdup(e->arena, sb_cstr(&sb));
  sb_free(&sb);
  return text;
}

static void put_declaration(StrBuf *out, const char *text) {
  const char *paren = strchr(text, '(');
  loops_put_line(out, 0, paren ? (int)(paren - text) + 1 : 4, text);
}

/* Comment text (sanitised) as lines of at most 100 columns, the first
 * starting with `first` (the comment's opening, or a star), the others
 * with `rest`. */
static void put_comment_words(Emitter *e, StrBuf *out, const char *first, const char *rest, const char *text) {
  const char *s = c_comment_text(e->arena, text);
  enum { WIDTH = 92 };
  for (const char *lead = first; *s; lead = rest) {
    size_t n = strlen(s), len = n;
    if (n > WIDTH) {
      for (len = WIDTH; len > 0 && s[len] != ' '; len--)
        ;
      if (len == 0)
        for (len = WIDTH; len < n && s[len] != ' '; len++)
          ;
    }
    sb_printf(out, "%s%.*s\n", lead, (int)len, s);
    s += len;
    while (*s == ' ')
      s++;
  }
}

static void outline_doc(Emitter *e, StrBuf *out, int index, const Outline *o) {
  const Kernel *k = e->k;
  const OpPlan *head = &e->opt->plans[index][o->first];
  StrBuf sb = {0};
  sb_printf(&sb, "%s: op %d of graph %s as a function (schedule file: %s), which %s_run calls", o->name, o->first,
            k->name, o->libcall ? "libcall" : "outline", e->kn.function);
  if (o->libcall)
    sb_puts(&sb, " between its parallel regions, on the calling thread alone: the user's function (lgen generates no "
                 "code for it), free to use threads of its own.");
  else
    sb_puts(&sb, " (from every thread of its parallel region when the group's loops are shared out).");
  sb_puts(&sb, " Graph nodes: ");
  const StructuredOp *prologue = o->size == 1 && head->has_prologue ? &k->ops[head->prologue_op] : NULL;
  for (int i = o->first; i < o->first + o->size; i++) {
    const StructuredOp *op = &k->ops[i];
    sb_printf(&sb, "%s%s", i > o->first ? "; " : "", op->origin ? op->origin : "a comprehension");
    if (!op->ext && op->nyields)
      sb_printf(&sb, " -> %s", k->tensors[op->operands[op->yields[0].operand].tensor].name);
  }
  if (prologue)
    sb_printf(&sb, "; %s (in the pack copy)", prologue->origin ? prologue->origin : "a pointwise op");
  sb_puts(&sb, ". Its tensors are dense and row-major:");
  put_comment_words(e, out, "/* ", " * ", sb_cstr(&sb));
  for (int i = 0; i < o->n; i++) {
    int t = o->tensors[i];
    const TensorParam *tp = &k->tensors[t];
    const TensorParam *rp = &k->tensors[alias_root(k, t)];
    sb_free(&sb);
    sb_printf(&sb, "%s: %s(", e->kn.tensors[t], elem_type_name(tp->type));
    for (int d = 0; d < tp->rank; d++)
      sb_printf(&sb, "%s%s", d ? ", " : "", affine_str(e, NULL, tp->shape[d]));
    sb_printf(&sb, "), %s %s", i < o->ninputs ? "read:" : "written:",
              rp->storage == TS_CONST   ? "a constant"
              : rp->storage == TS_PARAM ? (rp->is_output ? "a graph output" : "a graph input")
                                        : "an intermediate");
    put_comment_words(e, out, " *   ", " *     ", sb_cstr(&sb));
  }
  sb_free(&sb);
  sb_printf(&sb, "then the graph's symbolic dims, and %s_run's workspace (the group's own intermediates and "
                 "packing buffers%s).",
            e->kn.function, o->libcall ? ": a libcall may ignore it, and must not write it" : "");
  put_comment_words(e, out, " * ", " * ", sb_cstr(&sb));
  sb_free(&sb);
  sb_puts(out, " */\n");
}

void graph_outline_prototypes(Emitter *e, StrBuf *out, int index, const char *restrict_kw) {
  const OpPlan *plans = e->opt->plans[index];
  for (int i = 0; i < e->k->nops; i++)
    if (plans[i].outline) {
      const Outline *o = outline_of(e, index, i);
      outline_doc(e, out, index, o);
      put_declaration(out, arena_printf(e->arena, "%s;", outline_params_text(e, o, restrict_kw, true, "workspace")));
    }
}

/* An outlined group's function's parameters: its tensors, the sizes and
 * the workspace `ws`. */
static LoopVar *outline_params(Emitter *e, const Outline *o, const char *ws, int *count) {
  const Kernel *k = e->k;
  LoopVar *params = arena_alloc(e->arena, sizeof *params * (size_t)(o->n + k->nsizes + 1));
  int nparams = 0;
  for (int j = 0; j < o->n; j++)
    params[nparams++] = (LoopVar){arena_printf(e->arena, "%s%s *%s", j < o->ninputs ? "const " : "",
                                               c_type_name(k->tensors[o->tensors[j]].type),
                                               o->restricted[j] ? "restrict" : ""),
                                  e->kn.tensors[o->tensors[j]]};
  for (int j = 0; j < k->nsizes; j++)
    params[nparams++] = (LoopVar){"int64_t", e->kn.sizes[j]};
  params[nparams++] = (LoopVar){"void *restrict", ws};
  *count = nparams;
  return params;
}

void graph_outlines_tidy(Emitter *e, const PtrVec *outlines, const char *ws) {
  for (int i = 0; i < outlines->len; i++) {
    Outline *o = outlines->items[i];
    if (o->libcall)
      continue;
    int nparams;
    const LoopVar *params = outline_params(e, o, ws, &nparams);
    loops_tidy_names(e->arena, &o->body, params, nparams, names_plain, &e->kn.table);
  }
}

void graph_outline_definitions(Emitter *e, const PtrVec *outlines, StrBuf *out, int index, const char *ws) {
  const Kernel *k = e->k;
  for (int i = 0; i < outlines->len; i++) {
    Outline *o = outlines->items[i];
    if (!o->libcall) { /* its register blocks' functions, before it */
      int nparams;
      const LoopVar *params = outline_params(e, o, ws, &nparams);
      emit_procs(e, out, &o->body, params, nparams, arena_printf(e->arena, "lgen_%s_block", o->name));
    }
    outline_doc(e, out, index, o);
    const char *decl = outline_params_text(e, o, "restrict", true, ws);
    if (o->libcall) {
      put_declaration(out, arena_printf(e->arena, "%s;\n", decl));
      continue;
    }
    put_declaration(out, decl);
    sb_puts(out, "{\n");
    StrBuf body = {0};
    loops_print_c(&body, &o->body, 1);
    const char *text = sb_cstr(&body);
    for (int j = 0; j < o->n; j++)
      if (!loops_text_mentions(text, e->kn.tensors[o->tensors[j]]))
        sb_printf(out, "  (void)%s;\n", e->kn.tensors[o->tensors[j]]);
    for (int j = 0; j < k->nsizes; j++)
      if (!loops_text_mentions(text, e->kn.sizes[j]))
        sb_printf(out, "  (void)%s;\n", e->kn.sizes[j]);
    if (!loops_text_mentions(text, ws))
      sb_printf(out, "  (void)%s;\n", ws);
    sb_puts(out, text);
    sb_puts(out, "}\n\n");
    sb_free(&body);
  }
}

void graph_outlines_dump(Emitter *e, const PtrVec *outlines) {
  for (int i = 0; e->dump && i < outlines->len; i++) {
    const Outline *o = outlines->items[i];
    if (o->libcall)
      continue;
    sb_puts(e->dump, "## after loops: ");
    sb_put_printable(e->dump, e->k->name);
    sb_printf(e->dump, ", outlined group %s\n", o->name);
    loops_print_dump(e->dump, &o->body, 0);
  }
}

const char *graph_outlines_text(Emitter *e, const PtrVec *outlines) {
  const char *text = "";
  for (int i = 0; i < outlines->len; i++)
    text = arena_printf(e->arena, "%s%s", text, tree_text(e, &((const Outline *)outlines->items[i])->body));
  return text;
}

/* Before a group's code is built: the group as a function (NULL: inline
 * code), added to `outlines`. Its parameters get no pointer declarations
 * inside: the group's code is built with a RunMemory whose params are the
 * function's. */
static Outline *outline_begin(Emitter *e, PtrVec *outlines, int index, int first) {
  if (!e->opt->plans[index][first].outline)
    return NULL;
  Outline *o = outline_of(e, index, first);
  vec_push(e->arena, outlines, o);
  return o;
}

/* After: the group's code (`code`, empty for a libcall) goes into the
 * function, and `code` becomes G_run's call, with the pointers it passes. */
static void outline_end(Emitter *e, Outline *o, LoopList *code, int index, const RunMemory *mem) {
  const Kernel *k = e->k;
  if (!o->libcall)
    o->body = *code;
  int nargs = o->n + k->nsizes + 1;
  const char **args = arena_alloc(e->arena, sizeof(char *) * (size_t)nargs);
  for (int i = 0; i < o->n; i++)
    args[i] = e->kn.tensors[o->tensors[i]];
  for (int i = 0; i < k->nsizes; i++)
    args[o->n + i] = e->kn.sizes[i];
  args[nargs - 1] = mem->ws;
  LoopList call = {0};
  LoopNode *c = loops_call(e->arena, o->name, nargs, args);
  if (!o->libcall && loops_has_worksharing(&o->body))
    c->par = PAR_WORKSHARING;
  c->thread_slots = !o->libcall && loops_uses_thread_slots(&o->body); /* G_run's region caps for the body */
  loops_append(&call, c);
  bool *member = group_members(e, index, o->first);
  const StructuredOp **ops = arena_alloc(e->arena, sizeof(StructuredOp *) * (size_t)(k->nops + 1));
  int n = 0;
  for (int j = 0; j < k->nops; j++)
    if (member[j])
      ops[n++] = &k->ops[j];
  declare_ops_tensors(e, mem, ops, n, NULL, &call);
  *code = call;
}

/* `ops` as the body of G_run's parallel region, into e->cur, with the
 * run's team (lgen_team_pick, which caps it at the scratch area's thread
 * slots when the ops use them). */
static void parallel_region(Emitter *e, LoopList *ops, const char *threads) {
  LoopNode *par = put(e, loops_block(e->arena, REGION_PARALLEL));
  par->threads = threads;
  par->body = *ops;
}

/* `ops` in parallel regions that end before each libcall's block and start
 * again after it: the user's function is called where only the calling
 * thread runs, free to use threads of its own (under `omp single` the
 * region's other threads would spin beside them). A stretch with only
 * profile calls (guarded) gets no region. */
static void split_regions(Emitter *e, LoopList *ops, const PtrVec *libcalls, const char *threads) {
  LoopList stretch = {0};
  bool work = false;
  for (LoopNode *n = ops->first, *next;; n = next) {
    bool libcall = false;
    for (int i = 0; n && i < libcalls->len && !libcall; i++)
      libcall = libcalls->items[i] == n;
    if (!n || libcall) {
      if (work)
        parallel_region(e, &stretch, threads);
      else
        loops_splice(e->cur, &stretch);
      memset(&stretch, 0, sizeof stretch);
      work = false;
    }
    if (!n)
      break;
    next = n->next;
    n->next = NULL;
    if (libcall) {
      put(e, n);
      continue;
    }
    work |= !n->guard;
    loops_append(&stretch, n);
  }
}

void graph_run_body(Emitter *e, LoopList *body, int index, const BufferPlan *plan, const char *ws,
                    ProfileGroups *groups, PtrVec *outlines) {
  const Kernel *k = e->k;
  e->cur = body;
  if (e->opt->checks)
    emit_checks(e);
  ProfileGroups none = {"lgen_profile_data", 0, 0, NULL};
  if (!groups)
    groups = &none;
  bool region = graph_wants_region(e, index);
  const RunMemory mem = run_memory(e, plan, ws);
  memset(outlines, 0, sizeof *outlines);
  PtrVec libcalls = {0}; /* their blocks in `ops` */
  LoopList ops = {0};
  /* in the region: a run's fork is the run's, not its first group's */
  const char *state = arena_printf(e->arena, "&%s", groups->state);
  LoopNode *start = loops_call(e->arena, "lgen_profile_start", 1, &state);
  start->guard = profile_guard;
  loops_append(&ops, start);
  for (int i = 0; i < k->nops; i++) {
    const OpPlan *op_plan = &e->opt->plans[index][i];
    if (op_plan->is_prologue) /* its consumer's pack copy computes it */
      continue;
    int mark = names_mark(&e->kn.table); /* each op's names are its block's */
    Outline *outline = outline_begin(e, outlines, index, i);
    RunMemory group_mem = mem; /* an outlined group's: its function's parameters */
    group_mem.params = outline ? outline->param : NULL;
    if (op_plan->group_size > 1) {
      LoopList group = {0};
      if (outline && outline->libcall) {
        loops_append(&group, loops_block(e->arena, REGION_NONE));
        vec_push(e->arena, &libcalls, group.first);
      } else
        emit_graph_group(e, &group, index, i, &group_mem, region);
      if (outline)
        outline_end(e, outline, &group.first->body, index, &mem);
      loops_splice(&ops, &group);
      names_release(&e->kn.table, mark);
      profile_lap(e, &ops, groups, index, i, op_plan->group_size);
      i += op_plan->group_size - 1;
      continue;
    }
    LoopList code = {0};
    bool single = false; /* a libcall runs between parallel regions */
    if (!outline || !outline->libcall) {
      single = emit_graph_op(e, &code, k, op_plan, i, region);
      declare_ops_tensors(e, &group_mem, (const StructuredOp *const[]){&k->ops[i]}, 1,
                          op_plan->has_prologue ? &k->ops[op_plan->prologue_op] : NULL, &code);
    }
    if (outline)
      outline_end(e, outline, &code, index, &mem);
    LoopNode *block = loops_block(e->arena, single ? REGION_SINGLE : REGION_NONE);
    block->body = code;
    loops_append(&ops, block);
    if (outline && outline->libcall)
      vec_push(e->arena, &libcalls, block);
    names_release(&e->kn.table, mark);
    profile_lap(e, &ops, groups, index, i, 1);
  }
  e->cur = body;
  if (region) {
    put(e, loops_comment(e->arena, libcalls.len ? "parallel regions for the ops, ended around each libcall (the calling "
                                                  "thread runs it)"
                                                : "one parallel region for the whole graph: the ops share its threads"));
    /* the ops' barriers become waits for claimed work (loops/claim.c) */
    const char *array = names_claim(&e->kn.table, "claims");
    LoopClaims claims = loops_claim(e->arena, &ops, array, claim_name, e);
    if (claims.counters) {
      use_helper(e->helpers_used, "lgen_claim");
      put(e, loops_array(e->arena, "int64_t", array, arena_printf(e->arena, "[%d]", claims.counters), true));
    }
    if (claims.nests)
      use_helper(e->helpers_used, "lgen_min");
    /* the team: all threads (at most the scratch's slots), or one when
     * that has been running faster (lgen_team, the workspace's last bytes) */
    use_helper(e->helpers_used, "lgen_team");
    const char *team = names_claim(&e->kn.table, "team"), *start = names_claim(&e->kn.table, "team_start");
    const char *threads = names_claim(&e->kn.table, "team_threads");
    put(e, loops_let(e->arena, "lgen_team *const", team,
                     arena_printf(e->arena, "%s ? (lgen_team *)((char *)%s + %s_workspace_size(%s) - %d) : NULL", ws,
                                  ws, e->kn.function, size_list(e, false), LG_TEAM_BYTES)));
    put(e, loops_let(e->arena, "double", start, NULL));
    bool capped = loops_uses_thread_slots(&ops); /* per-thread slots exist for that many threads */
    if (capped)
      use_helper(e->helpers_used, "lgen_thread_slots");
    put(e, loops_let(e->arena, "const int", threads,
                     capped ? arena_printf(e->arena, "lgen_team_pick(%s, lgen_thread_slots(%d), &%s)", team,
                                           LG_SCRATCH_THREAD_SLOTS, start)
                            : arena_printf(e->arena, "lgen_team_pick(%s, 0, &%s)", team, start)));
    if (libcalls.len)
      split_regions(e, &ops, &libcalls, threads);
    else
      parallel_region(e, &ops, threads);
    put(e, loops_call(e->arena, "lgen_team_done", 3, (const char *const[]){team, threads, start}));
  } else {
    loops_splice(body, &ops);
  }
  e->cur = NULL;
}
