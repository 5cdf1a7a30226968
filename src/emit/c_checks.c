/* c_checks.c - --checks: at entry, a kernel verifies that the sizes it was
 * given satisfy the relations its spec implies (the IR's Preconditions):
 * equal extents where two operands bind one dim, and every index inside
 * its tensor, computed by interval arithmetic over the actual sizes. A
 * violation calls LGEN_CHECK_FAILED(message).
 *
 * Calls: c_names.c, c_runtime.c, c_access.c. */
#include "emit/c_internal.h"

/* ---- --checks ---- */

/* if (cond) LGEN_CHECK_FAILED("msg"); */
static void check_failed(Emitter *e, const char *cond, const char *msg) {
  LoopNode *node = put(e, loops_if(e->arena, cond));
  node->braces = BRACES_INLINE;
  const char *arg = arena_printf(e->arena, "\"%s\"", c_string_text(e->arena, msg));
  loops_append(&node->body, loops_call(e->arena, "LGEN_CHECK_FAILED", 1, &arg));
}

static void range_expr(Emitter *e, const OpScope *at, StrBuf *out, const AffineExpr *x) {
  switch (x->kind) {
  case AE_DIM:
    use_helper(e->helpers_used, "lgen_range");
    sb_printf(out, "lgen_range_of(0, %s - 1)", affine_str(e, NULL, at->op->dims[x->index].extent));
    return;
  case AE_CONST:
  case AE_SIZE:
  case AE_ATTR: {
    const char *v = affine_str(e, NULL, x);
    use_helper(e->helpers_used, "lgen_range");
    sb_printf(out, "lgen_range_of(%s, %s)", v, v);
    return;
  }
  case AE_NEG:
    use_helper(e->helpers_used, "lgen_range_neg");
    sb_puts(out, "lgen_range_neg(");
    range_expr(e, at, out, x->lhs);
    sb_putc(out, ')');
    return;
  default: {
    static const char *const fn[] = {[AE_ADD] = "add", [AE_SUB] = "sub", [AE_MUL] = "mul",
                                     [AE_FLOORDIV] = "floordiv", [AE_CEILDIV] = "ceildiv", [AE_MOD] = "mod"};
    use_helper(e->helpers_used, arena_printf(e->arena, "lgen_range_%s", fn[x->kind]));
    sb_printf(out, "lgen_range_%s(", fn[x->kind]);
    range_expr(e, at, out, x->lhs);
    sb_puts(out, ", ");
    range_expr(e, at, out, x->rhs);
    sb_putc(out, ')');
  }
  }
}

/* An array attribute (T[]) indexed past its element count would be read out
 * of bounds by the kernel and by the range checks below. */
static void check_array_attrs(Emitter *e, const AffineExpr *x, bool *checked) {
  if (!x)
    return;
  if (x->kind == AE_ATTR && e->k->attrs[x->index].is_array && !checked[x->index * 64 + (x->elem & 63)]) {
    const AttrParam *a = &e->k->attrs[x->index];
    checked[x->index * 64 + (x->elem & 63)] = true;
    const char *msg = arena_printf(e->arena, "%s: attribute %s has fewer than %d elements", e->kn.function, a->name,
                                   x->elem + 1);
    check_failed(e, arena_printf(e->arena, "%s <= %d", e->kn.attr_counts[x->index], x->elem), msg);
  }
  check_array_attrs(e, x->lhs, checked);
  check_array_attrs(e, x->rhs, checked);
}

void emit_checks(Emitter *e) {
  const Kernel *k = e->k;
  use_helper(e->helpers_used, "LGEN_CHECK_FAILED");
  for (int s = 0; s < k->nsizes; s++)
    check_failed(e, arena_printf(e->arena, "%s < 0", e->kn.sizes[s]),
                 arena_printf(e->arena, "%s: size %s must not be negative", e->kn.function, k->sizes[s].name));
  for (int i = 0; i < k->nassumes; i++) { /* dims a model graph took as equal (or as at least another) */
    const SizeAssume *x = &k->assumes[i];
    check_failed(e,
                 arena_printf(e->arena, "%s %s %s", affine_str(e, NULL, x->a), x->at_least ? "<" : "!=",
                              affine_str(e, NULL, x->b)),
                 arena_printf(e->arena, "%s: %s: %s", e->kn.function,
                              x->at_least ? "this dim must be at least the other" : "these dims must be equal", x->what));
  }
  bool *checked = arena_alloc(e->arena, sizeof(bool) * 64 * (size_t)(k->nattrs + 1));
  for (int i = 0; i < k->nops; i++)
    for (int o = 0; o < k->ops[i].noperands; o++)
      for (int r = 0; r < k->tensors[k->ops[i].operands[o].tensor].rank; r++)
        check_array_attrs(e, k->ops[i].operands[o].map[r], checked);
  for (int i = 0; i < k->nops; i++) {
    const StructuredOp *op = &k->ops[i];
    /* indices are spelled in the dims' own names (the messages') */
    const char **names = arena_alloc(e->arena, sizeof(char *) * (size_t)(op->ndims + 1));
    for (int d = 0; d < op->ndims; d++)
      names[d] = op->dims[d].name;
    const OpScope at = {op, names};
    StrBuf nonempty = {0};
    for (int d = 0; d < op->ndims; d++)
      sb_printf(&nonempty, "%s%s > 0", d ? " && " : "", affine_str(e, NULL, op->dims[d].extent));
    for (int p = 0; p < op->npre; p++) {
      const Precondition *pre = &op->pre[p];
      const Operand *o = &op->operands[pre->operand];
      const TensorParam *t = &k->tensors[o->tensor];
      const char *extent = affine_str(e, NULL, t->shape[pre->pos]);
      if (pre->kind == PRE_EQUAL) {
        const Dim *dim = &op->dims[pre->dim];
        const char *want = affine_str(e, NULL, dim->extent);
        const char *msg = arena_printf(e->arena, "%s: %s dimension %d (%s) must equal %s, the extent of %s",
                                       e->kn.function, t->name, pre->pos, extent, want, dim->name);
        check_failed(e, arena_printf(e->arena, "%s != %s", extent, want), msg);
        continue;
      }
      StrBuf range = {0};
      range_expr(e, &at, &range, o->map[pre->pos]);
      const char *index = affine_str(e, &at, o->map[pre->pos]);
      const char *msg = arena_printf(e->arena, "%s: index %s of %s leaves [0, %s) for these sizes", e->kn.function,
                                     index, t->name, extent);
      LoopNode *node = put(e, loops_if(e->arena, op->ndims ? arena_strdup(e->arena, sb_cstr(&nonempty)) : "1"));
      LoopList *outside = build_into(e, &node->body);
      put(e, loops_let(e->arena, "const lgen_range", "r", arena_strdup(e->arena, sb_cstr(&range))));
      check_failed(e, arena_printf(e->arena, "r.lo < 0 || r.hi >= %s", extent), msg);
      e->cur = outside;
      sb_free(&range);
    }
    sb_free(&nonempty);
  }
}


/* --abi=view: each descriptor's sizes are the tensor's extents (the kernel
 * takes its extents from the size parameters, as the dense ABI does, and
 * would read past a smaller view), and no output element is two of its
 * elements: a stride 0 along an output dim of extent > 1 would make the
 * iterations that write it race, and a reduction would combine into
 * whichever write came last. */
void emit_view_checks(Emitter *e) {
  const Kernel *k = e->k;
  use_helper(e->helpers_used, "LGEN_CHECK_FAILED");
  for (int t = 0; t < k->ntensors; t++) {
    const TensorParam *tp = &k->tensors[t];
    const char *tn = e->kn.kernel_tensors[t];
    for (int d = 0; d < tp->rank; d++) {
      const char *extent = affine_str(e, NULL, tp->shape[d]);
      check_failed(e, arena_printf(e->arena, "%s->sizes[%d] != %s", tn, d, extent),
                   arena_printf(e->arena, "%s: the view of %s has sizes[%d] other than its extent", e->kn.function,
                                tp->name, d));
      if (tp->is_output)
        check_failed(e, arena_printf(e->arena, "%s->strides[%d] == 0 && %s > 1", tn, d, extent),
                     arena_printf(e->arena, "%s: output %s has stride 0 along dim %d", e->kn.function, tp->name, d));
    }
  }
}
