/* print_dump.c - a loop tree as compact text, for --dump=loops: one line
 * per node, marks in brackets, expressions as the C they will be.
 *
 *   for i_t0 = 0 .. I step 384 [omp for] {
 *     let i_t0_end: const int64_t = lgen_min(i_t0 + 384, I)
 *     alloc W_pack: float at lgen_scratch + 0
 *     if b_len == 8 && j_len == 32 {
 *       array H_acc: float[8][32]
 *       H_acc[b_i][j_i] = LGEN_FMAF(...)
 *     }
 *     call lgen_topk_f32_i64(x, v, i, 1, 100, 1, 3, 1, LGEN_MAX_THREADS())
 *     barrier
 *     proc (b_n: int64_t, b_off: int64_t) { ... }     a function the calls below call
 *     call proc(6, 0)
 */
#include "loops/loops.h"

static void indent(StrBuf *out, int level) {
  for (int i = 0; i < level; i++)
    sb_puts(out, "  ");
}

static void marks(StrBuf *out, const LoopNode *n) {
  const char *sep = " [";
  if (n->par != PAR_NONE) {
    sb_printf(out, "%s%s", sep, n->par == PAR_REGION ? "omp parallel for" : "omp for");
    sep = ", ";
  }
  if (n->threads) {
    sb_printf(out, "%sthreads %s", sep, n->threads);
    sep = ", ";
  }
  if (n->collapse > 1) {
    sb_printf(out, "%scollapse %d", sep, n->collapse);
    sep = ", ";
  }
  if (n->simd) {
    sb_printf(out, "%ssimd", sep);
    sep = ", ";
  }
  if (n->reduction) {
    sb_printf(out, "%s%s", sep, n->reduction);
    sep = ", ";
  }
  if (n->schedule) {
    sb_printf(out, "%s%s", sep, n->schedule);
    sep = ", ";
  }
  if (sep[0] == ',')
    sb_putc(out, ']');
}

static void print_list(StrBuf *out, const LoopList *list, int level);

static void nested(StrBuf *out, const LoopList *body, int level) {
  sb_puts(out, " {\n");
  print_list(out, body, level + 1);
  indent(out, level);
  sb_puts(out, "}\n");
}

static void print_node(StrBuf *out, const LoopNode *n, int level) {
  indent(out, level);
  if (n->guard)
    sb_printf(out, "ifdef %s: ", n->guard);
  switch (n->kind) {
  case LN_BLOCK:
    if (n->region == REGION_PARALLEL)
      sb_puts(out, "parallel");
    else if (n->region == REGION_SINGLE)
      sb_puts(out, "single");
    else
      sb_puts(out, "block");
    if (n->threads)
      sb_printf(out, " [threads %s]", n->threads);
    nested(out, &n->body, level);
    return;
  case LN_FOR:
    sb_printf(out, "for %s = %s .. %s", n->var, n->lo, n->hi);
    if (n->next_value)
      sb_printf(out, " next %s", n->next_value);
    else if (n->step_expr)
      sb_printf(out, " step %s", n->step_expr);
    else if (n->step != 1)
      sb_printf(out, " step %lld", (long long)n->step);
    marks(out, n);
    nested(out, &n->body, level);
    return;
  case LN_IF:
    sb_printf(out, "if %s", n->cond);
    if (loops_empty(&n->els)) {
      nested(out, &n->body, level);
      return;
    }
    sb_puts(out, " {\n");
    print_list(out, &n->body, level + 1);
    indent(out, level);
    sb_puts(out, "} else {\n");
    print_list(out, &n->els, level + 1);
    indent(out, level);
    sb_puts(out, "}\n");
    return;
  case LN_LET:
    sb_printf(out, "let %s: %s%s%s\n", n->name, n->type, n->value ? " = " : "", n->value ? n->value : "");
    return;
  case LN_ARRAY:
    sb_printf(out, "array %s: %s%s%s\n", n->name, n->type, n->extents, n->zeroed ? " = 0" : "");
    return;
  case LN_ALLOC:
    if (n->alloc == ALLOC_HEAP)
      sb_printf(out, "alloc %s: %s, %s bytes on the heap (%s)\n", n->name, n->type, n->bytes, n->raw);
    else if (n->alloc == ALLOC_SCRATCH)
      sb_printf(out, "alloc %s: %s at %s + %s\n", n->name, n->type, n->base, n->offset);
    else
      sb_printf(out, "alloc %s: %s at %s + %s + %s * %s (per thread)\n", n->name, n->type, n->base, n->offset,
                n->thread, n->slot);
    return;
  case LN_STORE:
    sb_printf(out, "%s = %s\n", n->target, n->value);
    return;
  case LN_CALL:
    sb_printf(out, "call %s(", n->callee ? (n->callee->name ? n->callee->name : "proc") : n->fn);
    for (int i = 0; i < n->nargs; i++)
      sb_printf(out, "%s%s", i ? ", " : "", n->args[i]);
    sb_puts(out, n->par == PAR_WORKSHARING ? ") [omp for inside]\n" : ")\n");
    return;
  case LN_BARRIER:
    sb_puts(out, "barrier\n");
    return;
  case LN_COMMENT:
    sb_printf(out, "// %s\n", n->text);
    return;
  case LN_PROC:
    sb_printf(out, "proc %s(", n->name ? n->name : "");
    for (int i = 0; i < n->nparams; i++)
      sb_printf(out, "%s%s: %s", i ? ", " : "", n->pnames[i], n->ptypes[i]);
    sb_putc(out, ')');
    nested(out, &n->body, level);
    return;
  }
}

static void print_list(StrBuf *out, const LoopList *list, int level) {
  for (const LoopNode *n = list->first; n; n = n->next)
    print_node(out, n, level);
}

void loops_print_dump(StrBuf *out, const LoopList *list, int level) { print_list(out, list, level); }
