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
  ElemType type;               /* a literal's, until a call's other operands say otherwise */
  const ElemType *name_types;  /* each name's */
  const char *const *names;
  int nnames;
  PayloadNode *nodes;
  const char **literal_at;     /* per node: a literal's text, else NULL */
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
    const char **at = arena_alloc(ps->arena, sizeof *at * (size_t)cap);
    if (ps->count)
      memcpy(at, ps->literal_at, sizeof *at * (size_t)ps->count);
    ps->nodes = nodes;
    ps->literal_at = at;
    ps->cap = cap;
  }
  ps->nodes[ps->count] = n;
  ps->literal_at[ps->count] = NULL;
  return ps->count++;
}

/* The literal at `at` as a node of type t: its length, or -1 with the
 * message in *msg. */
static int literal(Parser *ps, const char *at, ElemType t, PayloadNode *out, const char **msg) {
  char *end;
  double f = strtod(at, &end);
  bool is_float = false;
  for (const char *q = at; q < end; q++)
    is_float |= *q == '.' || *q == 'e' || *q == 'E';
  *msg = NULL;
  if (end == at)
    *msg = "a malformed number";
  PayloadNode n = {.kind = PN_CONST, .type = t};
  if (*msg || elem_type_is_float(t)) {
    n.fvalue = f;
  } else if (is_float) {
    *msg = arena_printf(ps->arena, "%.*s is not an integer, but the payload's type is %s", (int)(end - at), at,
                        elem_type_name(t));
  } else {
    errno = 0;
    n.ivalue = strtoll(at, NULL, 10);
    if (errno || elem_int_wrap(t, (uint64_t)n.ivalue) != n.ivalue)
      *msg = arena_printf(ps->arena, "%.*s does not fit %s", (int)(end - at), at, elem_type_name(t));
  }
  *out = n;
  return *msg ? -1 : (int)(end - at);
}

/* Whether the names are of more than one type. */
static bool mixed_types(const Parser *ps) {
  for (int i = 1; i < ps->nnames; i++)
    if (ps->name_types[i] != ps->name_types[0])
      return true;
  return false;
}

/* With names of several types, a literal among a call's operands takes
 * the type of the first operand that is not one (the payload's first
 * type if none is). */
static int type_literals(Parser *ps, const int *args, int nargs, int first) {
  int typed = -1;
  for (int i = first; i < nargs && typed < 0; i++)
    if (!ps->literal_at[args[i]])
      typed = args[i];
  if (typed < 0)
    return 0;
  for (int i = first; i < nargs; i++) {
    const char *at = ps->literal_at[args[i]], *msg;
    if (at && ps->nodes[args[i]].type != ps->nodes[typed].type &&
        literal(ps, at, ps->nodes[typed].type, &ps->nodes[args[i]], &msg) < 0)
      return fail(ps, at, msg);
  }
  return 0;
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
  if (type_literals(ps, args, nargs, first) < 0)
    return -1;
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
    PayloadNode n;
    const char *msg;
    int len = literal(ps, at, ps->type, &n, &msg);
    /* among names of several types, the call's other operands may give it
     * another (type_literals): f64 or i64 until then */
    if (len < 0 && mixed_types(ps) && strcmp(msg, "a malformed number") != 0)
      len = literal(ps, at, elem_type_is_float(ps->type) ? TY_I64 : TY_F64, &n, &msg);
    if (len < 0)
      return fail(ps, at, msg);
    ps->p = at + len;
    int i = add(ps, n);
    ps->literal_at[i] = at;
    return i;
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
        return add(ps, (PayloadNode){.kind = PN_READ, .type = ps->name_types[i], .operand = i});
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
  ElemType *types = arena_alloc(arena, sizeof *types * (size_t)(nnames + 1));
  for (int i = 0; i < nnames; i++)
    types[i] = type;
  return payload_expr_parse_typed(arena, text, types, names, nnames, want, nodes, count);
}

const char *payload_expr_parse_typed(Arena *arena, const char *text, const ElemType *types, const char *const *names,
                                     int nnames, ElemType want, PayloadNode **nodes, int *count) {
  Parser ps = {.text = text, .p = text, .type = types[0], .name_types = types, .names = names, .nnames = nnames,
               .arena = arena};
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
