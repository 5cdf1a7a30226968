/* print_c.c - a loop tree as C: the one place that owns indentation,
 * braces and the spelling of OpenMP pragmas. It prints what the nodes say
 * and nothing else. */
#include <string.h>

#include "loops/loops.h"

static void indent(StrBuf *out, int level) {
  for (int i = 0; i < level; i++)
    sb_puts(out, "  ");
}

static void end_line(StrBuf *out, const LoopNode *n) {
  if (n->note)
    sb_printf(out, " /* %s */", n->note);
  sb_putc(out, '\n');
}

/* "T name": pointer types end in '*' and take the name without a space. */
static void declarator(StrBuf *out, const char *type, const char *name) {
  size_t n = strlen(type);
  sb_printf(out, "%s%s%s", type, n && type[n - 1] == '*' ? "" : " ", name);
}

/* The pragma of a loop: omp [parallel] for [num_threads] [simd]
 * [collapse] [reduction] [schedule], through LGEN_OMP_SIMD when it asks
 * for simd (OpenMP 4), else LGEN_OMP. */
static void loop_pragma(StrBuf *out, const LoopNode *n, int level) {
  if (n->par == PAR_NONE && !n->simd)
    return;
  indent(out, level);
  sb_printf(out, "%s(omp", n->simd ? "LGEN_OMP_SIMD" : "LGEN_OMP");
  if (n->par != PAR_NONE)
    sb_puts(out, n->par == PAR_REGION ? " parallel for" : " for");
  if (n->par == PAR_REGION && n->threads)
    sb_printf(out, " num_threads(%s)", n->threads);
  if (n->simd)
    sb_puts(out, " simd");
  if (n->collapse > 1)
    sb_printf(out, " collapse(%d)", n->collapse);
  if (n->reduction)
    sb_printf(out, " %s", n->reduction);
  if (n->schedule)
    sb_printf(out, " %s", n->schedule);
  sb_puts(out, ")\n");
}

static void print_node(StrBuf *out, const LoopNode *n, int level);

static void print_list(StrBuf *out, const LoopList *list, int level) {
  for (const LoopNode *n = list->first; n; n = n->next)
    print_node(out, n, level);
}

/* The body of a for or an if after its header (which ends without a
 * newline). */
static void print_body(StrBuf *out, const LoopNode *n, int level) {
  if (n->braces == BRACES_INLINE) {
    sb_putc(out, ' ');
    StrBuf one = {0};
    print_list(&one, &n->body, 0);
    sb_puts(out, sb_cstr(&one)); /* one statement: its line, newline included */
    sb_free(&one);
    return;
  }
  if (n->braces == BRACES_NONE) {
    sb_putc(out, '\n');
    print_list(out, &n->body, level + 1);
    return;
  }
  sb_puts(out, " {");
  end_line(out, n);
  print_list(out, &n->body, level + 1);
  indent(out, level);
  sb_puts(out, "}\n");
}

static void print_node(StrBuf *out, const LoopNode *n, int level) {
  switch (n->kind) {
  case LN_BLOCK:
    if (n->region != REGION_NONE) {
      indent(out, level);
      if (n->region == REGION_SINGLE)
        sb_puts(out, "LGEN_OMP(omp single)\n");
      else if (n->threads)
        sb_printf(out, "LGEN_OMP(omp parallel num_threads(%s))\n", n->threads);
      else
        sb_puts(out, "LGEN_OMP(omp parallel)\n");
    }
    indent(out, level);
    sb_putc(out, '{');
    end_line(out, n);
    print_list(out, &n->body, level + 1);
    indent(out, level);
    sb_puts(out, "}\n");
    return;
  case LN_FOR:
    loop_pragma(out, n, level);
    indent(out, level);
    sb_printf(out, "for (int64_t %s = %s; %s < %s; ", n->var, n->lo, n->var, n->hi);
    if (n->step_expr)
      sb_printf(out, "%s += %s)", n->var, n->step_expr);
    else if (n->step == 1)
      sb_printf(out, "++%s)", n->var);
    else
      sb_printf(out, "%s += %lld)", n->var, (long long)n->step);
    print_body(out, n, level);
    return;
  case LN_IF:
    indent(out, level);
    sb_printf(out, "if (%s)", n->cond);
    if (loops_empty(&n->els) || n->braces != BRACES) {
      print_body(out, n, level);
      return;
    }
    sb_puts(out, " {");
    end_line(out, n);
    print_list(out, &n->body, level + 1);
    indent(out, level);
    sb_puts(out, "} else {\n");
    print_list(out, &n->els, level + 1);
    indent(out, level);
    sb_puts(out, "}\n");
    return;
  case LN_LET:
    indent(out, level);
    declarator(out, n->type, n->name);
    if (n->value)
      sb_printf(out, " = %s", n->value);
    sb_putc(out, ';');
    end_line(out, n);
    return;
  case LN_ARRAY:
    indent(out, level);
    sb_printf(out, "%s %s%s%s;", n->type, n->name, n->extents, n->zeroed ? " = {0}" : "");
    end_line(out, n);
    return;
  case LN_ALLOC:
    indent(out, level);
    if (n->alloc == ALLOC_HEAP) {
      sb_printf(out, "void *%s;\n", n->raw);
      indent(out, level);
      sb_printf(out, "%s *%s = (%s *)lgen_alloc(%s, &%s);", n->type, n->name, n->type, n->bytes, n->raw);
    } else if (n->alloc == ALLOC_SCRATCH) {
      sb_printf(out, "%s *restrict %s = (%s *)(%s + %s);", n->type, n->name, n->type, n->base, n->offset);
    } else {
      sb_printf(out, "%s *restrict %s = (%s *)(%s + %s + (size_t)%s * %s);", n->type, n->name, n->type, n->base,
                n->offset, n->thread, n->slot);
    }
    end_line(out, n);
    return;
  case LN_STORE:
    indent(out, level);
    sb_printf(out, "%s = %s;", n->target, n->value);
    end_line(out, n);
    return;
  case LN_CALL:
    indent(out, level);
    sb_printf(out, "%s(", n->fn);
    for (int i = 0; i < n->nargs; i++)
      sb_printf(out, "%s%s", i ? ", " : "", n->args[i]);
    sb_puts(out, ");");
    end_line(out, n);
    return;
  case LN_BARRIER:
    indent(out, level);
    sb_puts(out, "LGEN_OMP(omp barrier)\n");
    return;
  case LN_COMMENT:
    indent(out, level);
    sb_printf(out, "/* %s */\n", n->text);
    return;
  }
}

void loops_print_c(StrBuf *out, const LoopList *list, int level) { print_list(out, list, level); }
