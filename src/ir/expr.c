/* expr.c - payload expressions written as text in a model graph's
 * attributes (scan's combiner): calls of the scalar ops of scalar_ops.def
 * (the .tc payload language's spellings: std_addf(acc, x), std_select(...))
 * over named scalars and numeric literals, into PayloadNodes that
 * emit/c_expr.c turns into C. Every name is one of the caller's, of its
 * one element type; a literal takes that type. The graph builder parses
 * to check (its message goes to the attribute), the emitter again to emit.
 *
 *   expr := NUMBER | NAME | OP '(' expr { ',' expr } ')' */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef struct {
  const char *text, *p;
  ElemType type;
  const char *const *names;
  int nnames;
  PayloadNode *nodes;
  int count, cap;
  Arena *arena;
  const char *error; /* the first one */
} Parser;

static int fail(Parser *ps, const char *at, const char *msg) {
  if (!ps->error)
    ps->error = arena_printf(ps->arena, "%s (at character %d)", msg, (int)(at - ps->text) + 1);
  return -1;
}

static void skip_space(Parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n')
    ps->p++;
}

static int add(Parser *ps, PayloadNode n) {
  if (ps->count == ps->cap) {
    int cap = ps->cap ? 2 * ps->cap : 8;
    PayloadNode *nodes = arena_alloc(ps->arena, sizeof *nodes * (size_t)cap);
    if (ps->count)
      memcpy(nodes, ps->nodes, sizeof *nodes * (size_t)ps->count);
    ps->nodes = nodes;
    ps->cap = cap;
  }
  ps->nodes[ps->count] = n;
  return ps->count++;
}

/* The type of op applied to args (the rules of tc_sema.c's check_types), or
 * -1 with an error. */
static int result_type(Parser *ps, const char *at, ScalarOp op, const int *args, int nargs) {
  const ScalarOpInfo *info = scalar_op_info(op);
  const char *name = info->spelling;
  if (info->result == SOR_CHOSEN || info->operands == SOC_ANY)
    return fail(ps, at, arena_printf(ps->arena, "%s is not available in a payload expression", name));
  if (nargs != info->arity)
    return fail(ps, at, arena_printf(ps->arena, "%s takes %d operand%s, not %d", name, info->arity,
                                     info->arity == 1 ? "" : "s", nargs));
  int first = 0;
  if (info->operands == SOC_SELECT) {
    if (ps->nodes[args[0]].type != TY_I1)
      return fail(ps, at, arena_printf(ps->arena, "%s: the condition must be i1 (a comparison), not %s", name,
                                       elem_type_name(ps->nodes[args[0]].type)));
    first = 1;
  }
  ElemType t = ps->nodes[args[first]].type;
  for (int i = first + 1; i < nargs; i++)
    if (ps->nodes[args[i]].type != t)
      return fail(ps, at, arena_printf(ps->arena, "%s: operands of different types (%s and %s)", name,
                                       elem_type_name(t), elem_type_name(ps->nodes[args[i]].type)));
  if (info->operands == SOC_FLOAT && !elem_type_is_float(t))
    return fail(ps, at, arena_printf(ps->arena, "%s takes floating-point operands, not %s", name, elem_type_name(t)));
  if ((info->operands == SOC_INT || info->operands == SOC_SINT) && elem_type_is_float(t))
    return fail(ps, at, arena_printf(ps->arena, "%s takes integer operands, not %s", name, elem_type_name(t)));
  if (info->operands == SOC_SINT && elem_type_is_unsigned(t))
    return fail(ps, at, arena_printf(ps->arena, "%s reads its operands as signed, and %s is unsigned; use %s", name,
                                     elem_type_name(t), scalar_op_info(info->unsigned_form)->spelling));
  switch (info->result) {
  case SOR_SAME:
    return (int)t;
  case SOR_BOOL:
    return TY_I1;
  default: /* conversions: the payload has one type */
    return fail(ps, at, arena_printf(ps->arena, "%s changes the type, which a payload expression cannot", name));
  }
}

static int parse_expr(Parser *ps, int depth) {
  skip_space(ps);
  const char *at = ps->p;
  if (depth > 64)
    return fail(ps, at, "the expression nests too deeply");
  if (isdigit((unsigned char)*at) || ((*at == '-' || *at == '.') && (isdigit((unsigned char)at[1]) || at[1] == '.'))) {
    char *end;
    double f = strtod(at, &end);
    bool is_float = false;
    for (const char *q = at; q < end; q++)
      is_float |= *q == '.' || *q == 'e' || *q == 'E';
    if (end == at)
      return fail(ps, at, "a malformed number");
    ps->p = end;
    PayloadNode n = {.kind = PN_CONST, .type = ps->type};
    if (elem_type_is_float(ps->type)) {
      n.fvalue = f;
    } else {
      if (is_float)
        return fail(ps, at, arena_printf(ps->arena, "%.*s is not an integer, but the payload's type is %s",
                                         (int)(end - at), at, elem_type_name(ps->type)));
      errno = 0;
      n.ivalue = strtoll(at, NULL, 10);
      if (errno || elem_int_wrap(ps->type, (uint64_t)n.ivalue) != n.ivalue)
        return fail(ps, at, arena_printf(ps->arena, "%.*s does not fit %s", (int)(end - at), at,
                                         elem_type_name(ps->type)));
    }
    return add(ps, n);
  }
  if (!isalpha((unsigned char)*at) && *at != '_')
    return fail(ps, at, *at ? "expected a name, a number or an op's call" : "the expression ends early");
  while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
    ps->p++;
  const char *name = arena_strndup(ps->arena, at, (size_t)(ps->p - at));
  skip_space(ps);
  if (*ps->p != '(') {
    for (int i = 0; i < ps->nnames; i++)
      if (strcmp(ps->names[i], name) == 0)
        return add(ps, (PayloadNode){.kind = PN_READ, .type = ps->type, .operand = i});
    StrBuf sb = {0};
    for (int i = 0; i < ps->nnames; i++)
      sb_printf(&sb, "%s%s", i ? ", " : "", ps->names[i]);
    const char *msg = arena_printf(ps->arena, "unknown name '%s' (the scalars are %s)", name, sb_cstr(&sb));
    sb_free(&sb);
    return fail(ps, at, msg);
  }
  ScalarOp op;
  if (!scalar_op_lookup(name, &op))
    return fail(ps, at, arena_printf(ps->arena, "unknown operation '%s'", name));
  ps->p++;
  int args[LG_MAX_ARGS], nargs = 0;
  for (;;) {
    if (nargs == LG_MAX_ARGS)
      return fail(ps, ps->p, "too many operands");
    int a = parse_expr(ps, depth + 1);
    if (a < 0)
      return -1;
    args[nargs++] = a;
    skip_space(ps);
    if (*ps->p == ',') {
      ps->p++;
      continue;
    }
    if (*ps->p != ')')
      return fail(ps, ps->p, "expected ',' or ')'");
    ps->p++;
    break;
  }
  int t = result_type(ps, at, op, args, nargs);
  if (t < 0)
    return -1;
  PayloadNode n = {.kind = PN_OP, .type = (ElemType)t, .op = op, .nargs = nargs};
  memcpy(n.args, args, sizeof args[0] * (size_t)nargs);
  return add(ps, n);
}

const char *payload_expr_parse(Arena *arena, const char *text, ElemType type, const char *const *names, int nnames,
                               ElemType want, PayloadNode **nodes, int *count) {
  Parser ps = {.text = text, .p = text, .type = type, .names = names, .nnames = nnames, .arena = arena};
  int root = parse_expr(&ps, 0);
  skip_space(&ps);
  if (root >= 0 && *ps.p)
    fail(&ps, ps.p, "text after the expression");
  if (!ps.error && ps.nodes[root].type != want)
    fail(&ps, text, arena_printf(arena, "the expression is %s; it must be %s", elem_type_name(ps.nodes[root].type),
                                 elem_type_name(want)));
  if (ps.error)
    return ps.error;
  *nodes = ps.nodes;
  *count = ps.count; /* the root is last */
  return NULL;
}
