/* c_expr.c - payload ops as C expressions.
 *
 * The C meaning of each scalar op (documented in man/lgen.1):
 *   float + - * /         plain C arithmetic in the operands' type; a * b + c
 *                         is one fused multiply-add (LGEN_FMAF) when the
 *                         compiler targets FMA hardware (__FMA__), unless
 *                         LGEN_NO_FMA is defined
 *   integer add/sub/mul   wrap around modulo 2^bits (computed in unsigned
 *                         arithmetic, so never undefined behaviour)
 *   divis                 C's truncating '/'; b == 0, or INT_MIN / -1, is
 *                         undefined, as in MLIR
 *   diviu                 '/' on the unsigned bit patterns; b == 0 undefined
 *   select(c, a, b)       c ? a : b
 *   cmpf_ogt/olt          ordered > and < (false when either is NaN)
 *   cmpi_sgt/slt          signed > and <
 *   sexti32               sign extension (an i1 true becomes -1)
 *   fpext / fptrunc       C conversion to the next wider / narrower float
 *   maxf / minf           a > b ? a : b and a < b ? a : b
 *   exp log tanh sqrt     libm, in float for f16 and f32, double for f64
 *   erf floor ceil absf   likewise; powf(a, b) is libm's pow
 *   negf                  -a
 *   cmpf_oeq / cmpi_eq    ==
 *   maxsi / minsi         signed a > b ? a : b and a < b ? a : b
 *   lgen_cast             C conversion to the node's type (graphs' Cast);
 *                         float to integer out of range is undefined, as in ONNX
 *   constants             exact literals of the node's type
 * Ops whose C spelling would repeat an operand, or needs casts, become small
 * static inline helpers (lgen_add_i32, lgen_max_f32, ...) emitted once. */
#include "emit/c_emit.h"

#include <math.h>
#include <string.h>

const char *c_type_name(ElemType t) {
  static const char *const names[] = {"lgen_f16", "float", "double", "lgen_bool",
                                      "int8_t",   "int16_t", "int32_t", "int64_t"};
  return names[t];
}

void c_float_literal(StrBuf *out, double value, ElemType t) {
  if (isnan(value)) {
    sb_puts(out, t == TY_F64 ? "(0.0 / 0.0)" : "(0.0f / 0.0f)");
    return;
  }
  if (isinf(value)) {
    sb_printf(out, "(%s1.0%s / 0.0%s)", value < 0 ? "-" : "", t == TY_F64 ? "" : "f", t == TY_F64 ? "" : "f");
    return;
  }
  /* %a is exact: no decimal rounding between the spec and the binary. */
  sb_printf(out, "%a%s", value, t == TY_F64 ? "" : "f");
}

static const char *unsigned_of(ElemType t) {
  return elem_type_bits(t) == 64 ? "uint64_t" : "uint32_t";
}

static const char *same_width_unsigned(ElemType t) {
  switch (t) {
  case TY_I8:
    return "uint8_t";
  case TY_I16:
    return "uint16_t";
  case TY_I32:
    return "uint32_t";
  default:
    return "uint64_t";
  }
}

static bool helper_seen(ExprCtx *ctx, const char *name) {
  for (int i = 0; i < ctx->helper_names->len; i++)
    if (strcmp(ctx->helper_names->items[i], name) == 0)
      return true;
  vec_push(ctx->arena, ctx->helper_names, (void *)name);
  return false;
}

/* Emits (once) `static inline T name(T a, T b) { return BODY; }` and returns name. */
static const char *binary_helper(ExprCtx *ctx, const char *stem, ElemType t, const char *body) {
  const char *name = arena_printf(ctx->arena, "lgen_%s_%s", stem, elem_type_name(t));
  if (!helper_seen(ctx, name))
    sb_printf(ctx->helpers, "static inline %s %s(%s a, %s b) { return %s; }\n", c_type_name(t), name,
              c_type_name(t), c_type_name(t), body);
  return name;
}

static const char *wrap_helper(ExprCtx *ctx, const char *stem, char op, ElemType t) {
  const char *body;
  if (t == TY_I1)
    body = op == '*' ? "(_Bool)(a & b)" : "(_Bool)(a ^ b)";
  else
    body = arena_printf(ctx->arena, "(%s)((%s)a %c (%s)b)", c_type_name(t), unsigned_of(t), op, unsigned_of(t));
  return binary_helper(ctx, stem, t, body);
}

/* f16 values are computed in float: every f16 operand is widened, and an
 * f16 result rounded back once. float has 24 >= 2*11+2 bits, so + - * / and
 * sqrt stay correctly rounded in f16. */
static void arg(StrBuf *out, ExprCtx *ctx, const PayloadNode *n, int i) {
  bool widen = ctx->op->nodes[n->args[i]].type == TY_F16 && n->op != SOP_SELECT;
  if (widen) {
    ctx->widens_f16 = true;
    sb_puts(out, "LGEN_F16_TO_F32(");
  }
  c_expr(out, ctx, n->args[i]);
  if (widen)
    sb_putc(out, ')');
}

static void call2(StrBuf *out, ExprCtx *ctx, const char *fn, const PayloadNode *n) {
  sb_printf(out, "%s(", fn);
  arg(out, ctx, n, 0);
  sb_puts(out, ", ");
  arg(out, ctx, n, 1);
  sb_putc(out, ')');
}

static void infix(StrBuf *out, ExprCtx *ctx, const char *op, const PayloadNode *n) {
  sb_putc(out, '(');
  arg(out, ctx, n, 0);
  sb_printf(out, " %s ", op);
  arg(out, ctx, n, 1);
  sb_putc(out, ')');
}

static void math_call(StrBuf *out, ExprCtx *ctx, const char *fn, const PayloadNode *n) {
  ctx->needs_math = true;
  ElemType t = n->type;
  if (t == TY_F64) {
    sb_printf(out, "%s(", fn);
    arg(out, ctx, n, 0);
    sb_putc(out, ')');
  } else {
    sb_printf(out, "%sf(", fn);
    arg(out, ctx, n, 0);
    sb_putc(out, ')');
  }
}

static void cast(StrBuf *out, ExprCtx *ctx, const char *type, const PayloadNode *n) {
  sb_printf(out, "(%s)", type);
  arg(out, ctx, n, 0);
}

static void c_expr_node(StrBuf *out, ExprCtx *ctx, const PayloadNode *n, int index);

/* A payload constant, exactly, in its node's type. */
static void c_constant(StrBuf *out, ExprCtx *ctx, const PayloadNode *n) {
  switch (n->type) {
  case TY_F16:
    ctx->narrows_f16 = true;
    sb_puts(out, "LGEN_F32_TO_F16(");
    c_float_literal(out, n->fvalue, TY_F32);
    sb_putc(out, ')');
    return;
  case TY_F32:
  case TY_F64:
    c_float_literal(out, n->fvalue, n->type);
    return;
  case TY_I1:
    sb_puts(out, n->ivalue ? "((lgen_bool)1)" : "((lgen_bool)0)");
    return;
  case TY_I64:
    if (n->ivalue == INT64_MIN)
      sb_puts(out, "INT64_MIN");
    else
      sb_printf(out, "INT64_C(%lld)", (long long)n->ivalue);
    return;
  default:
    if (n->ivalue < 0)
      sb_printf(out, "((%s)(%lld))", c_type_name(n->type), (long long)n->ivalue);
    else
      sb_printf(out, "((%s)%lld)", c_type_name(n->type), (long long)n->ivalue);
    return;
  }
}

void c_expr(StrBuf *out, ExprCtx *ctx, int index) {
  const PayloadNode *n = &ctx->op->nodes[index];
  /* an f16 result of float arithmetic is rounded back from float */
  bool narrow = n->kind == PN_OP && n->type == TY_F16 && !ctx->node_names[index] && n->op != SOP_SELECT &&
                n->op != SOP_MAXF && n->op != SOP_MINF;
  if (narrow) {
    ctx->narrows_f16 = true;
    sb_puts(out, "LGEN_F32_TO_F16(");
  }
  c_expr_node(out, ctx, n, index);
  if (narrow)
    sb_putc(out, ')');
}

static void c_expr_node(StrBuf *out, ExprCtx *ctx, const PayloadNode *n, int index) {
  if (ctx->node_names[index]) {
    sb_puts(out, ctx->node_names[index]);
    return;
  }
  if (n->kind == PN_READ) {
    sb_puts(out, ctx->operand_values[n->operand]);
    return;
  }
  if (n->kind == PN_CONST) {
    c_constant(out, ctx, n);
    return;
  }
  ElemType in = ctx->op->nodes[n->args[0]].type;
  switch (n->op) {
  case SOP_ADDF: {
    /* a * b + c: one fused multiply-add where the target has FMA (as gcc's
     * GNU modes contract it anyway; -std=c99 alone would not) */
    for (int i = 0; i < 2 && (n->type == TY_F32 || n->type == TY_F64); i++) {
      const PayloadNode *m = &ctx->op->nodes[n->args[i]];
      if (m->kind != PN_OP || m->op != SOP_MULF || ctx->node_names[n->args[i]])
        continue;
      ctx->needs_fma = true;
      sb_printf(out, "%s(", n->type == TY_F32 ? "LGEN_FMAF" : "LGEN_FMA");
      c_expr(out, ctx, m->args[0]);
      sb_puts(out, ", ");
      c_expr(out, ctx, m->args[1]);
      sb_puts(out, ", ");
      arg(out, ctx, n, 1 - i);
      sb_putc(out, ')');
      return;
    }
    infix(out, ctx, "+", n);
    return;
  }
  case SOP_SUBF:
    infix(out, ctx, "-", n);
    return;
  case SOP_MULF:
    infix(out, ctx, "*", n);
    return;
  case SOP_DIVF:
    infix(out, ctx, "/", n);
    return;
  case SOP_ADDI:
    call2(out, ctx, wrap_helper(ctx, "add", '+', in), n);
    return;
  case SOP_SUBI:
    call2(out, ctx, wrap_helper(ctx, "sub", '-', in), n);
    return;
  case SOP_MULI:
    call2(out, ctx, wrap_helper(ctx, "mul", '*', in), n);
    return;
  case SOP_DIVIS:
    call2(out, ctx, binary_helper(ctx, "divs", in, arena_printf(ctx->arena, "(%s)(a / b)", c_type_name(in))), n);
    return;
  case SOP_DIVIU: {
    const char *u = in == TY_I1 ? "_Bool" : same_width_unsigned(in);
    call2(out, ctx,
          binary_helper(ctx, "divu", in, arena_printf(ctx->arena, "(%s)((%s)a / (%s)b)", c_type_name(in), u, u)), n);
    return;
  }
  case SOP_SELECT:
    sb_putc(out, '(');
    arg(out, ctx, n, 0);
    sb_puts(out, " ? ");
    arg(out, ctx, n, 1);
    sb_puts(out, " : ");
    arg(out, ctx, n, 2);
    sb_putc(out, ')');
    return;
  case SOP_CMPF_OGT:
  case SOP_CMPI_SGT:
    infix(out, ctx, ">", n);
    return;
  case SOP_CMPF_OLT:
  case SOP_CMPI_SLT:
    infix(out, ctx, "<", n);
    return;
  case SOP_SEXTI32:
    if (in == TY_I1) {
      sb_puts(out, "(int32_t)-(int32_t)");
      arg(out, ctx, n, 0);
    } else {
      cast(out, ctx, "int32_t", n);
    }
    return;
  case SOP_FPEXT:
    if (in == TY_F16) {
      arg(out, ctx, n, 0); /* widened by arg() */
      return;
    }
    cast(out, ctx, c_type_name(n->type), n);
    return;
  case SOP_FPTRUNC:
    if (n->type == TY_F16) {
      sb_puts(out, "(float)"); /* c_expr rounds the float to f16 */
      arg(out, ctx, n, 0);
      return;
    }
    cast(out, ctx, c_type_name(n->type), n);
    return;
  case SOP_MAXF:
  case SOP_MINF: {
    const char *cmp = n->op == SOP_MAXF ? ">" : "<";
    ctx->widens_f16 |= in == TY_F16;
    const char *body = in == TY_F16 ? arena_printf(ctx->arena, "LGEN_F16_TO_F32(a) %s LGEN_F16_TO_F32(b) ? a : b", cmp)
                                    : arena_printf(ctx->arena, "a %s b ? a : b", cmp);
    /* operands are passed unwidened: the helper compares and returns one */
    sb_printf(out, "%s(", binary_helper(ctx, n->op == SOP_MAXF ? "max" : "min", in, body));
    c_expr(out, ctx, n->args[0]);
    sb_puts(out, ", ");
    c_expr(out, ctx, n->args[1]);
    sb_putc(out, ')');
    return;
  }
  case SOP_EXP:
    math_call(out, ctx, "exp", n);
    return;
  case SOP_LOG:
    math_call(out, ctx, "log", n);
    return;
  case SOP_TANH:
    math_call(out, ctx, "tanh", n);
    return;
  case SOP_SQRT:
    math_call(out, ctx, "sqrt", n);
    return;
  case SOP_NEGF:
    sb_puts(out, "(-");
    arg(out, ctx, n, 0);
    sb_putc(out, ')');
    return;
  case SOP_ABSF:
    math_call(out, ctx, "fabs", n);
    return;
  case SOP_FLOORF:
    math_call(out, ctx, "floor", n);
    return;
  case SOP_CEILF:
    math_call(out, ctx, "ceil", n);
    return;
  case SOP_ERF:
    math_call(out, ctx, "erf", n);
    return;
  case SOP_POWF:
    ctx->needs_math = true;
    call2(out, ctx, n->type == TY_F64 ? "pow" : "powf", n);
    return;
  case SOP_CMPF_OEQ:
  case SOP_CMPI_EQ:
    infix(out, ctx, "==", n);
    return;
  case SOP_MAXSI:
  case SOP_MINSI: {
    const char *body = n->op == SOP_MAXSI ? "a > b ? a : b" : "a < b ? a : b";
    call2(out, ctx, binary_helper(ctx, n->op == SOP_MAXSI ? "maxsi" : "minsi", in, body), n);
    return;
  }
  case SOP_CAST:
    if (n->type == TY_F16) {
      sb_puts(out, "(float)"); /* c_expr rounds the float to f16 */
      arg(out, ctx, n, 0);
      return;
    }
    if (n->type == TY_I1) { /* nonzero is true, as C's conversion to _Bool */
      sb_puts(out, "(lgen_bool)");
      arg(out, ctx, n, 0);
      return;
    }
    cast(out, ctx, c_type_name(n->type), n);
    return;
  case SOP_COUNT:
    break;
  }
}
