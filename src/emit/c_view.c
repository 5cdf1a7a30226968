/* c_view.c - --abi=view, the kernel ABI's extension point for
 * non-contiguous operands (contracts.md section 2): each tensor of a def
 * is passed as a strided view, a descriptor laid out as MLIR's
 * StridedMemRefType<T, R> (base, data, offset, sizes[R], strides[R], in
 * elements), so that a sub-view, a transposed view, a reversed view or a
 * broadcast (stride 0) input costs no copy.
 *
 * The entry point keeps the scheduled kernel's speed where it can: when
 * every view is dense row-major (the usual case) it calls the dense kernel,
 * which c_emit.c keeps as a static function; when every innermost stride
 * is 1 (blocks of bigger arrays) it runs the scheduled nest with the outer
 * strides in the addresses; otherwise the op's plain nest
 * (--schedule=none's, whose outer parallel loop stays) with every element
 * addressed through the strides: tiling, packing and register blocks
 * assume unit innermost strides.
 *
 * Calls: c_names.c, c_expr.c, c_access.c, c_checks.c, c_loops.c. */
#include "emit/c_internal.h"

#include <stdio.h>
#include <string.h>

const char *view_type_name(Arena *arena, ElemType t, int rank) {
  return arena_printf(arena, "lgen_memref_%s_%d", elem_type_name(t), rank);
}

void view_typedefs(StrBuf *out, const Module *m, const EmitOptions *opt, Arena *arena) {
  if (!opt->abi_view)
    return;
  /* (type, rank) pairs in order of first appearance: deterministic */
  int seen_type[64], seen_rank[64], nseen = 0;
  for (int i = 0; i < m->kernels.len; i++) {
    if (opt->buffer_plans && opt->buffer_plans[i])
      continue; /* a model graph keeps the dense ABI */
    const Kernel *k = m->kernels.items[i];
    for (int t = 0; t < k->ntensors; t++) {
      const TensorParam *tp = &k->tensors[t];
      bool have = false;
      for (int s = 0; s < nseen && !have; s++)
        have = seen_type[s] == (int)tp->type && seen_rank[s] == tp->rank;
      if (have || nseen == 64)
        continue;
      seen_type[nseen] = (int)tp->type;
      seen_rank[nseen++] = tp->rank;
      const char *name = view_type_name(arena, tp->type, tp->rank);
      const char *c = c_type_name(tp->type);
      char guard[64];
      snprintf(guard, sizeof guard, "LGEN_MEMREF_%s_%d_DEFINED", elem_type_name(tp->type), tp->rank);
      for (char *p = guard; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
      sb_printf(out, "#ifndef %s\n#define %s\n", guard, guard);
      if (tp->rank == 0) {
        sb_printf(out, "/* a %s scalar in memory: data[offset] (base: the allocation, unused) */\n", c);
        sb_printf(out, "typedef struct {\n  %s *base;\n  %s *data;\n  int64_t offset;\n} %s;\n", c, c, name);
      } else {
        sb_printf(out, "/* a strided view of rank %d over %s: element (i0, ...) is\n"
                       " * data[offset + i0 * strides[0] + ...], strides in elements (negative or 0\n"
                       " * allowed on inputs); base is the allocation (unused); MLIR's memref layout */\n",
                  tp->rank, c);
        sb_printf(out,
                  "typedef struct {\n  %s *base;\n  %s *data;\n  int64_t offset;\n  int64_t sizes[%d];\n"
                  "  int64_t strides[%d];\n} %s;\n",
                  c, c, tp->rank, tp->rank, name);
      }
      sb_puts(out, "#endif\n");
    }
  }
  if (nseen)
    sb_putc(out, '\n');
}

/* The test that every view is dense row-major: each stride is the product
 * of the extents after it (any stride will do along an extent of 1). */
static const char *dense_test(Emitter *e) {
  const Kernel *k = e->k;
  StrBuf cond = {0};
  for (int t = 0; t < k->ntensors; t++) {
    const TensorParam *tp = &k->tensors[t];
    const char *tn = e->kn.kernel_tensors[t];
    AffineExpr *inner = NULL; /* the product of the extents after d; NULL: 1 */
    for (int d = tp->rank - 1; d >= 0; d--) {
      AffineExpr *ext = tp->shape[d];
      const char *want = inner ? affine_str(e, NULL, inner) : "1";
      if (ext->kind == AE_CONST && ext->value == 1)
        ; /* no test */
      else if (ext->kind == AE_CONST)
        sb_printf(&cond, "%s%s->strides[%d] == %s", cond.len ? " && " : "", tn, d, want);
      else
        sb_printf(&cond, "%s(%s->strides[%d] == %s || %s == 1)", cond.len ? " && " : "", tn, d, want,
                  affine_str(e, NULL, ext));
      inner = inner ? affine_binary(e->arena, AE_MUL, ext, inner) : ext;
    }
  }
  const char *s = arena_strdup(e->arena, cond.len ? sb_cstr(&cond) : "1");
  sb_free(&cond);
  return s;
}

/* The dense kernel's call: the views' first elements, then the sizes and
 * attributes as they came. */
static LoopNode *dense_call(Emitter *e, const char *dense_fn) {
  const Kernel *k = e->k;
  int n = k->ntensors + k->nsizes + 2 * k->nattrs, nargs = 0;
  const char **args = arena_alloc(e->arena, sizeof(char *) * (size_t)(n + 1));
  for (int t = 0; t < k->ntensors; t++)
    args[nargs++] = arena_printf(e->arena, "%s->data + %s->offset", e->kn.kernel_tensors[t], e->kn.kernel_tensors[t]);
  for (int i = 0; i < k->nsizes; i++)
    args[nargs++] = e->kn.sizes[i];
  for (int i = 0; i < k->nattrs; i++) {
    args[nargs++] = e->kn.attrs[i];
    if (k->attrs[i].is_array)
      args[nargs++] = e->kn.attr_counts[i];
  }
  return loops_call(e->arena, dense_fn, nargs, args);
}

/* Whether kernel `index`'s scheduled nests can run on views whose
 * innermost strides are 1 (a block of a bigger row-major array, the
 * usual sub-view): each op is a loop nest under its own dims (no reshape:
 * folded or merged dims assume dense extents), with no library call
 * (whose leading dimensions are the extents), and no prologue or row group
 * (graphs only). At least one tensor of rank 2 or more, or it is the dense
 * test again. */
static bool unit_inner_ok(Emitter *e, int index) {
  const Kernel *k = e->k;
  bool rank2 = false;
  for (int t = 0; t < k->ntensors; t++)
    rank2 |= k->tensors[t].rank >= 2;
  for (int i = 0; i < k->nops && rank2; i++) {
    const OpPlan *p = &e->opt->plans[index][i];
    if (k->ops[i].ext || p->s.library_call || !reshape_is_identity(&p->reshape, k->ops[i].ndims) ||
        p->has_prologue || p->is_prologue || p->group_size != 0)
      return false;
  }
  return rank2;
}

/* The test that every innermost stride is 1 (any along an extent of 1). */
static const char *unit_inner_test(Emitter *e) {
  const Kernel *k = e->k;
  StrBuf cond = {0};
  for (int t = 0; t < k->ntensors; t++) {
    const TensorParam *tp = &k->tensors[t];
    if (tp->rank == 0)
      continue;
    AffineExpr *ext = tp->shape[tp->rank - 1];
    const char *tn = e->kn.kernel_tensors[t];
    if (ext->kind == AE_CONST && ext->value == 1)
      continue;
    if (ext->kind == AE_CONST)
      sb_printf(&cond, "%s%s->strides[%d] == 1", cond.len ? " && " : "", tn, tp->rank - 1);
    else
      sb_printf(&cond, "%s(%s->strides[%d] == 1 || %s == 1)", cond.len ? " && " : "", tn, tp->rank - 1,
                affine_str(e, NULL, ext));
  }
  const char *s = arena_strdup(e->arena, cond.len ? sb_cstr(&cond) : "1");
  sb_free(&cond);
  return s;
}

/* Every op's nest over the views' strides, into list: under its schedule
 * (`scheduled`: the views' innermost strides are 1, and stay literal 1s
 * so that the vector loops stay unit-stride), or the plain nest of
 * --schedule=none. */
static void nest_over_views(Emitter *e, LoopList *list, int index, bool scheduled) {
  const Kernel *k = e->k;
  Arena *a = e->arena;
  const char **data = arena_alloc(a, sizeof(char *) * (size_t)(k->ntensors + 1));
  const char ***strides = arena_alloc(a, sizeof(char **) * (size_t)(k->ntensors + 1));
  int mark_locals = names_mark(&e->kn.table);
  for (int t = 0; t < k->ntensors; t++) {
    const char *tn = e->kn.kernel_tensors[t];
    int rank = k->tensors[t].rank;
    data[t] = names_claim(&e->kn.table, arena_printf(a, "%s_data", tn));
    strides[t] = arena_alloc(a, sizeof(char *) * (size_t)(rank + 1));
    for (int d = 0; d < rank; d++)
      strides[t][d] = scheduled && d == rank - 1 ? "1" : names_claim(&e->kn.table, arena_printf(a, "%s_s%d", tn, d));
  }
  LoopList nest = {0}, *outside = build_into(e, &nest);
  if (e->opt->checks && !scheduled)
    emit_checks(e);
  for (int i = 0; i < k->nops; i++) {
    const OpPlan *plan = &e->opt->plans[index][i];
    Schedule none;
    schedule_none(&k->ops[i], &none);
    int mark = names_mark(&e->kn.table);
    e->cur = k->nops > 1 ? &put(e, loops_block(a, REGION_NONE))->body : &nest;
    /* the scheduled nest indexes the op's view of the tensors (reshape.h
     * renumbers them) */
    emitter_view(e, scheduled ? plan->view.k : k);
    int nt = e->k->ntensors;
    const char **vdata = arena_alloc(a, sizeof(char *) * (size_t)(nt + 1));
    const char ***vstrides = arena_alloc(a, sizeof(char **) * (size_t)(nt + 1));
    for (int t = 0; t < nt; t++) {
      vdata[t] = data[emitter_kernel_tensor(e, t)];
      vstrides[t] = strides[emitter_kernel_tensor(e, t)];
    }
    e->kn.tensors = vdata;
    const OpPlace place = {.stride_names = (const char *const *const *)vstrides};
    emit_op(e, scheduled ? plan->view.op : &k->ops[i], scheduled ? &plan->s : &none, i, THREADS_OWN, &place);
    emitter_view(e, k);
    e->cur = &nest;
    names_release(&e->kn.table, mark);
  }
  e->cur = list;
  /* only the locals the nest reads: an index that is always 0 reads no
   * stride, and -Wunused-variable would say so */
  const char *text = tree_text(e, &nest);
  put(e, loops_comment(a, scheduled ? "views with unit innermost strides: the scheduled nest over the strides"
                                    : "strided views: the plain loop nest, each element at its offset plus index "
                                      "times stride"));
  for (int t = 0; t < k->ntensors; t++) {
    const TensorParam *tp = &k->tensors[t];
    const char *tn = e->kn.kernel_tensors[t];
    if (loops_text_mentions(text, data[t]))
      put(e, loops_let(a, arena_printf(a, "%s%s *restrict", tp->is_output ? "" : "const ", c_type_name(tp->type)),
                       data[t], arena_printf(a, "%s->data + %s->offset", tn, tn)));
    for (int d = 0; d < tp->rank; d++)
      if (strcmp(strides[t][d], "1") != 0 && loops_text_mentions(text, strides[t][d]))
        put(e, loops_let(a, "const int64_t", strides[t][d], arena_printf(a, "%s->strides[%d]", tn, d)));
  }
  loops_splice(list, &nest);
  names_release(&e->kn.table, mark_locals);
  e->cur = outside;
}

void view_body(Emitter *e, LoopList *tree, const char *dense_fn, int index) {
  LoopList *outside = build_into(e, tree);
  if (e->opt->checks)
    emit_view_checks(e);
  put(e, loops_comment(e->arena, "dense row-major views run the scheduled kernel"));
  LoopNode *dense = put(e, loops_if(e->arena, dense_test(e)));
  loops_append(&dense->body, dense_call(e, dense_fn));
  LoopList *strided = &dense->els;
  if (unit_inner_ok(e, index)) {
    LoopNode *unit = loops_if(e->arena, unit_inner_test(e));
    loops_append(&dense->els, unit);
    nest_over_views(e, &unit->body, index, true);
    strided = &unit->els;
  }
  nest_over_views(e, strided, index, false);
  e->cur = outside;
}
