/* print_c.c - a loop tree as C: the one place that owns indentation,
 * braces, line breaks and the spelling of OpenMP pragmas. It prints what
 * the nodes say and nothing else. Lines stay within LOOPS_WIDTH columns
 * where a statement can break (loops_put_line), and the closing brace of a
 * long loop names it. */
#include <string.h>

#include "loops/loops.h"

/* A loop whose body takes more lines than this names itself at its end
 * (the man page's figure, GENERATED CODE; tests/width.test and
 * tests/unit/test_loops.c check it). */
enum { LONG_LOOP_LINES = 24 };

/* `n` spaces, put in at once (an indentation per line of a big graph's C). */
static void spaces(StrBuf *out, int n) {
  static const char blanks[] = "                                                                ";
  for (; n > 0; n -= (int)sizeof blanks - 1)
    sb_putn(out, blanks, n < (int)sizeof blanks - 1 ? (size_t)n : sizeof blanks - 1);
}

static void indent(StrBuf *out, int level) { spaces(out, 2 * level); }

/* A block comment at `columns`, its words wrapped into " * " lines where it
 * would pass LOOPS_WIDTH (a word longer than a line stays whole). The text
 * is safe inside a comment already (the builders made it so). */
static void put_comment(StrBuf *out, int columns, const char *text) {
  size_t len = strlen(text);
  if (columns + (int)len + 6 <= LOOPS_WIDTH) {
    spaces(out, columns);
    sb_printf(out, "/* %s */\n", text);
    return;
  }
  const char *p = text;
  for (bool first = true; *p; first = false) {
    spaces(out, columns);
    sb_puts(out, first ? "/* " : " * ");
    int room = LOOPS_WIDTH - columns - 3; /* after the "/\* " or " * " */
    size_t rest = strlen(p);
    if ((int)rest + 3 <= room) { /* the rest and the " *\/" */
      sb_puts(out, p);
      sb_puts(out, " */\n");
      return;
    }
    const char *cut = NULL; /* the last space that keeps the line within room */
    for (const char *q = p; *q && q - p <= room; q++)
      if (*q == ' ')
        cut = q;
    if (!cut) /* a word longer than a line: whole */
      cut = strchr(p, ' ') ? strchr(p, ' ') : p + rest;
    sb_putn(out, p, (size_t)(cut - p));
    for (p = cut; *p == ' '; p++)
      ;
    sb_puts(out, *p ? "\n" : " */\n");
  }
}

/* Where `text` may break and at what cost: after the space of ", ",
 * " = ", " ? ", " : ", " && ", " || " and the arithmetic operators, and
 * after an opening parenthesis; the deeper in parentheses and brackets, the
 * dearer. Not inside character literals or comments; inside a string
 * literal (a message) only after a space, dearest, where the line closes
 * the literal and the next opens another (quoted[i]: C joins adjacent
 * literals). Returns the count; at[i] is where line i + 1 would start. */
enum { MAX_BREAKS = 512, LINE_COST = 20 };

static int breaks(const char *text, size_t *at, int *cost, bool *quoted) {
  int n = 0, depth = 0;
  for (size_t i = 0; text[i] && n < MAX_BREAKS; i++) {
    const char *p = text + i;
    char c = *p;
    if (c == '"' || c == '\'') {
      for (i++; text[i] && text[i] != c; i++) {
        if (c == '"' && text[i] == ' ' && text[i + 1] && text[i + 1] != '"' && text[i - 1] != '"' && i >= 8 &&
            n < MAX_BREAKS) {
          at[n] = i + 1;
          quoted[n] = true;
          cost[n++] = 10 * depth + 60; /* only where nothing else fits */
        }
        i += text[i] == '\\' && text[i + 1];
      }
      if (!text[i])
        break;
      continue;
    }
    if (c == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      if (!end)
        break;
      i = (size_t)(end - text) + 1;
      continue;
    }
    int k = -1;
    size_t after = 0;
    if (c == ',' && p[1] == ' ') {
      k = 0, after = i + 1;
    } else if (c == '(' && p[1] && p[1] != ')' && i > 0 &&
               (text[i - 1] == '_' || ((text[i - 1] | 32) >= 'a' && (text[i - 1] | 32) <= 'z'))) {
      k = 4, after = i + 1;
    } else if (c == ' ' && (p[1] == '=' || p[1] == '?' || p[1] == ':') && p[2] == ' ') {
      k = 2, after = i + 2;
    } else if (c == ' ' && ((p[1] == '&' && p[2] == '&') || (p[1] == '|' && p[2] == '|')) && p[3] == ' ') {
      k = 3, after = i + 3;
    } else if (c == ' ' && p[1] && strchr("+-*/", p[1]) && p[2] == ' ') {
      k = 6, after = i + 2;
    }
    if (k >= 0 && after >= 8) {
      at[n] = after;
      quoted[n] = false;
      cost[n++] = 10 * depth + k;
    }
    depth += c == '(' || c == '[' || c == '{' ? 1 : c == ')' || c == ']' || c == '}' ? -1 : 0;
  }
  return n;
}

/* The length of text[from, to) without its leading spaces (with a quote
 * before and after where the line reopens or closes a string literal). */
static size_t segment(const char *text, size_t from, size_t to, bool open, bool close) {
  while (!open && from < to && text[from] == ' ')
    from++;
  return to - from + open + close;
}

void loops_put_line(StrBuf *out, int columns, int cont, const char *text) {
  size_t len = strlen(text);
  if (columns + (int)len <= LOOPS_WIDTH || len > 4000) {
    spaces(out, columns);
    sb_putn(out, text, len);
    sb_putc(out, '\n');
    return;
  }
  /* the cheapest breaking (Knuth and Plass in small): best[j] is the least
   * cost of lines ending at break j, from[j] the break before it; a line
   * over the width costs much, so it happens only when nothing else fits */
  size_t at[MAX_BREAKS + 2];
  int cost[MAX_BREAKS + 2], best[MAX_BREAKS + 2], from[MAX_BREAKS + 2];
  bool quoted[MAX_BREAKS + 2];
  int n = breaks(text, at + 1, cost + 1, quoted + 1);
  at[0] = 0, cost[0] = 0, quoted[0] = false;
  at[n + 1] = len, cost[n + 1] = 0, quoted[n + 1] = false;
  best[0] = 0;
  for (int j = 1; j <= n + 1; j++) {
    best[j] = -1;
    for (int i = 0; i < j; i++) {
      int width = (i == 0 ? columns : cont) + (int)segment(text, at[i], at[j], quoted[i], quoted[j]);
      int over = width > LOOPS_WIDTH ? width - LOOPS_WIDTH : 0;
      int slack = j <= n && !over ? LOOPS_WIDTH - width : 0; /* a short line before a break is ragged */
      int c = best[i] + cost[j] + (j <= n ? LINE_COST : 0) + 1000 * over + slack * slack / 100;
      if (best[j] < 0 || c < best[j]) {
        best[j] = c;
        from[j] = i;
      }
    }
  }
  int chosen[MAX_BREAKS + 2], m = 0;
  for (int j = n + 1; j > 0; j = from[j])
    chosen[m++] = j;
  size_t start = 0;
  bool open = false; /* the line reopens a string literal */
  for (int k = m - 1; k >= 0; k--) {
    size_t end = at[chosen[k]];
    bool close = quoted[chosen[k]];
    int col = start == 0 ? columns : cont;
    while (!open && start < end && text[start] == ' ' && start > 0)
      start++;
    spaces(out, col);
    if (open)
      sb_putc(out, '"');
    size_t stop = end;
    while (!close && stop > start && text[stop - 1] == ' ')
      stop--;
    sb_putn(out, text + start, stop - start);
    sb_puts(out, close ? "\"\n" : "\n");
    start = end;
    open = close;
  }
}

/* One statement line at `level`, with the node's note, broken where it
 * must be (continuation lines four columns in). */
static void put_stmt(StrBuf *out, int level, StrBuf *line, const LoopNode *n) {
  if (n && n->note) {
    sb_puts(line, " /* ");
    sb_puts(line, n->note);
    sb_puts(line, " */");
  }
  loops_put_line(out, 2 * level, 2 * level + 4, sb_cstr(line));
  sb_free(line);
}

static void end_line(StrBuf *out, const LoopNode *n) {
  if (n->note)
    sb_printf(out, " /* %s */", n->note);
  sb_putc(out, '\n');
}

/* "T name": pointer types end in '*' and take the name without a space.
 * (Statements are put in piece by piece, not through a printf: a big
 * graph has millions, most of them an expression's text.) */
static void declarator(StrBuf *out, const char *type, const char *name) {
  size_t n = strlen(type);
  sb_putn(out, type, n);
  if (!(n && type[n - 1] == '*'))
    sb_putc(out, ' ');
  sb_puts(out, name);
}

/* The pragma of a loop: omp [parallel] for [num_threads] [simd]
 * [collapse] [reduction] [schedule], through LGEN_OMP_SIMD when it asks
 * for simd (OpenMP 4), else LGEN_OMP. */
static void pragma_directive(StrBuf *out, const LoopNode *n, bool simd) {
  sb_puts(out, "omp");
  if (n->par != PAR_NONE)
    sb_puts(out, n->par == PAR_REGION ? " parallel for" : " for");
  if (n->par == PAR_REGION && n->threads)
    sb_printf(out, " num_threads(%s)", n->threads);
  if (simd)
    sb_puts(out, " simd");
  if (n->collapse > 1)
    sb_printf(out, " collapse(%d)", n->collapse);
  if (n->reduction)
    sb_printf(out, " %s", n->reduction);
  if (n->schedule)
    sb_printf(out, " %s", n->schedule);
}

static void loop_pragma(StrBuf *out, const LoopNode *n, int level) {
  if (n->par == PAR_NONE && !n->simd)
    return;
  indent(out, level);
  if (n->simd && n->simd_not_clang && n->par != PAR_NONE) { /* the simd form, or the plain one under clang */
    sb_puts(out, "LGEN_OMP_SIMD_NOT_CLANG(");
    pragma_directive(out, n, true);
    sb_puts(out, ", ");
    pragma_directive(out, n, false);
    sb_puts(out, ")\n");
    return;
  }
  sb_printf(out, "%s(", n->simd ? "LGEN_OMP_SIMD" : "LGEN_OMP");
  pragma_directive(out, n, n->simd);
  sb_puts(out, ")\n");
}

static void print_node(StrBuf *out, const LoopNode *n, int level);

/* A proc's name; before loops_outline names it (the text that declarations
 * read, c_access.c tree_text), a stand-in. */
static const char *proc_name(const LoopNode *proc) { return proc->name ? proc->name : "lgen_proc"; }

/* Returns the number of lines printed, or LONG_LOOP_LINES + 1 if more:
 * all close_brace asks (counting them all at every level of a deep nest
 * read a big graph's text once per level). */
static int print_list(StrBuf *out, const LoopList *list, int level) {
  size_t start = out->len;
  for (const LoopNode *n = list->first; n; n = n->next)
    print_node(out, n, level);
  int lines = 0;
  for (size_t i = start; i < out->len && lines <= LONG_LOOP_LINES; i++)
    lines += out->data[i] == '\n';
  return lines;
}

/* The closing brace of a body of `lines` lines: a long loop's names the
 * loop (label: its variable). */
static void close_brace(StrBuf *out, int level, int lines, const char *label) {
  indent(out, level);
  if (label && lines > LONG_LOOP_LINES)
    sb_printf(out, "} /* %s */\n", label);
  else
    sb_puts(out, "}\n");
}

/* A for or an if: its header (in `head`, without the brace) and body. */
static void print_with_body(StrBuf *out, const LoopNode *n, int level, StrBuf *head, const char *label) {
  if (n->braces == BRACES_INLINE) {
    StrBuf one = {0};
    print_list(&one, &n->body, 0); /* one statement: its line, newline included */
    const char *nl = one.len ? memchr(one.data, '\n', one.len) : NULL;
    if (!nl || nl == one.data + one.len - 1) { /* one line: after the head */
      sb_printf(head, " %.*s", (int)(one.len ? one.len - 1 : 0), sb_cstr(&one));
      sb_free(&one);
      put_stmt(out, level, head, NULL);
      return;
    }
    sb_free(&one); /* too long for a line of its own: below the head, as BRACES_NONE */
  }
  if (n->braces == BRACES_NONE || n->braces == BRACES_INLINE) {
    put_stmt(out, level, head, NULL);
    print_list(out, &n->body, level + 1);
    return;
  }
  sb_puts(head, " {");
  put_stmt(out, level, head, n);
  close_brace(out, level, print_list(out, &n->body, level + 1), label);
}

static void print_node_unguarded(StrBuf *out, const LoopNode *n, int level);

/* A guarded node is compiled only where its macro is defined (-DLGEN_PROFILE):
 * without it the C is what it was without the node. */
static void print_node(StrBuf *out, const LoopNode *n, int level) {
  if (!n->guard) {
    print_node_unguarded(out, n, level);
    return;
  }
  sb_printf(out, "#ifdef %s\n", n->guard);
  print_node_unguarded(out, n, level);
  sb_puts(out, "#endif\n");
}

static void print_node_unguarded(StrBuf *out, const LoopNode *n, int level) {
  StrBuf line = {0};
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
    sb_printf(&line, "for (int64_t %s = %s; %s < %s; ", n->var, n->lo, n->var, n->hi);
    if (n->next_value)
      sb_printf(&line, "%s = %s)", n->var, n->next_value);
    else if (n->step_expr)
      sb_printf(&line, "%s += %s)", n->var, n->step_expr);
    else if (n->step == 1)
      sb_printf(&line, "++%s)", n->var);
    else
      sb_printf(&line, "%s += %lld)", n->var, (long long)n->step);
    print_with_body(out, n, level, &line, n->var);
    return;
  case LN_IF:
    sb_printf(&line, "if (%s)", n->cond);
    if (loops_empty(&n->els) || n->braces != BRACES) {
      print_with_body(out, n, level, &line, NULL);
      return;
    }
    sb_puts(&line, " {");
    put_stmt(out, level, &line, n);
    print_list(out, &n->body, level + 1);
    indent(out, level);
    sb_puts(out, "} else {\n");
    print_list(out, &n->els, level + 1);
    indent(out, level);
    sb_puts(out, "}\n");
    return;
  case LN_LET:
    declarator(&line, n->type, n->name);
    if (n->value) {
      sb_puts(&line, " = ");
      sb_puts(&line, n->value);
    }
    sb_putc(&line, ';');
    put_stmt(out, level, &line, n);
    return;
  case LN_ARRAY:
    sb_printf(&line, "%s %s%s%s;", n->type, n->name, n->extents, n->zeroed ? " = {0}" : "");
    put_stmt(out, level, &line, n);
    return;
  case LN_ALLOC:
    if (n->alloc == ALLOC_HEAP) {
      indent(out, level);
      sb_printf(out, "void *%s;\n", n->raw);
      sb_printf(&line, "%s *%s = (%s *)lgen_alloc(%s, &%s);", n->type, n->name, n->type, n->bytes, n->raw);
    } else if (n->alloc == ALLOC_SCRATCH) {
      sb_printf(&line, "%s *restrict %s = (%s *)(%s + %s);", n->type, n->name, n->type, n->base, n->offset);
    } else {
      sb_printf(&line, "%s *restrict %s = (%s *)(%s + %s + (size_t)%s * %s);", n->type, n->name, n->type, n->base,
                n->offset, n->thread, n->slot);
    }
    put_stmt(out, level, &line, n);
    return;
  case LN_STORE:
    sb_puts(&line, n->target);
    sb_puts(&line, " = ");
    sb_puts(&line, n->value);
    sb_putc(&line, ';');
    put_stmt(out, level, &line, n);
    return;
  case LN_CALL:
    sb_printf(&line, "%s(", n->callee ? proc_name(n->callee) : n->fn);
    for (int i = 0; i < n->nargs; i++)
      sb_printf(&line, "%s%s", i ? ", " : "", n->args[i]);
    sb_puts(&line, ");");
    put_stmt(out, level, &line, n);
    return;
  case LN_BARRIER:
    indent(out, level);
    sb_puts(out, "LGEN_OMP(omp barrier)\n");
    return;
  case LN_COMMENT:
    put_comment(out, 2 * level, n->text);
    return;
  case LN_PROC:
    if (n->text)
      put_comment(out, 2 * level, n->text);
    sb_printf(&line, "%s %s(", n->type, proc_name(n));
    for (int i = 0; i < n->nparams; i++) {
      sb_puts(&line, i ? ", " : "");
      declarator(&line, n->ptypes[i], n->pnames[i]);
    }
    sb_printf(&line, "%s)", n->nparams ? "" : "void");
    put_stmt(out, level, &line, NULL);
    indent(out, level);
    sb_puts(out, "{\n");
    print_list(out, &n->body, level + 1);
    indent(out, level);
    sb_puts(out, "}\n");
    return;
  }
}

void loops_print_c(StrBuf *out, const LoopList *list, int level) { (void)print_list(out, list, level); }
