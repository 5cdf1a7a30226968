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
 *   cmpi_ugt/ult          > and < on the bits read as unsigned (u8..u64: their
 *                         values)
 *   sexti32 / zexti32     sign / zero extension (an i1 true becomes -1 / 1)
 *   fpext / fptrunc       C conversion to the next wider / narrower float
 *   maxf / minf           a > b ? a : b and a < b ? a : b
 *   exp log tanh erf      f32 and f16 (in float): lgen's own vectorisable
 *                         lgen_exp_f32 ... (below; 1 ulp); f64: libm
 *   sqrt floor ceil absf  libm, in float for f16 and f32, double for f64;
 *                         powf(a, b) is libm's pow
 *   negf                  -a
 *   cmpf_oeq / cmpi_eq    ==
 *   maxsi / minsi         signed a > b ? a : b and a < b ? a : b
 *   maxui / minui         the same on the bits read as unsigned
 *   andi / ori / xori     & | ^ (i1: logical), noti ~ (i1: !)
 *   shli / shrui          << and logical >> on the bits; a shift by the width
 *                         or more (or by a negative amount) gives 0, not C's
 *                         undefined behaviour
 *   lgen_cast             C conversion to the node's type (graphs' Cast), but
 *                         float to integer saturates (NaN gives 0): C leaves
 *                         out-of-range conversions undefined; to u8..u64 it
 *                         saturates to [0, 2^bits - 1]
 *   lgen_cast_signed/unsigned  OpDSL's cast_signed and cast_unsigned: the
 *                         integer operand read as signed (i1 true is -1) or
 *                         unsigned; float to integer saturates to the target's
 *                         range (u8..u64), or for iN to the signed or unsigned
 *                         N-bit range (NaN gives 0); integer to i1 keeps the
 *                         low bit
 *   maximumf / minimumf   NaN if either operand is NaN (arith.maximumf), else
 *                         the larger / smaller (signed zeros compare equal)
 *   roundf                libm's round (halves away from zero)
 *   index                 the loop index's current value, as int64_t
 *   constants             exact literals of the node's type
 * Ops whose C spelling would repeat an operand, or needs casts, become small
 * static inline helpers (lgen_add_i32, lgen_max_f32, ...) emitted once.
 *
 * Calls: none of the other emit files (c_internal.h). */
#include "emit/c_emit.h"
#include "loops/loops.h"

#include <math.h>
#include <string.h>

#include "util/hexfloat.h"

const char *c_type_name(ElemType t) { return elem_type_c_name(t); }

void c_float_literal(StrBuf *out, double value, ElemType t) {
  if (isnan(value)) {
    sb_puts(out, t == TY_F64 ? "(0.0 / 0.0)" : "(0.0f / 0.0f)");
    return;
  }
  if (isinf(value)) {
    sb_printf(out, "(%s1.0%s / 0.0%s)", value < 0 ? "-" : "", t == TY_F64 ? "" : "f", t == TY_F64 ? "" : "f");
    return;
  }
  /* %a is exact: no decimal rounding between the spec and the binary
   * (written without printf: a model's weights are millions of these). */
  sb_put_hexfloat(out, value);
  if (t != TY_F64)
    sb_putc(out, 'f');
}

void c_int_literal(StrBuf *out, int64_t v, ElemType t) {
  if (t == TY_I1)
    sb_puts(out, v ? "((lgen_bool)1)" : "((lgen_bool)0)");
  else if (t == TY_I64 && v == INT64_MIN)
    sb_puts(out, "INT64_MIN");
  else if (t == TY_I64)
    sb_printf(out, "INT64_C(%lld)", (long long)v);
  else if (elem_type_is_unsigned(t)) { /* v holds the value's bits (its low bits for u8..u32) */
    int bits = elem_type_bits(t);
    uint64_t u = bits < 64 ? (uint64_t)v & ((UINT64_C(1) << bits) - 1) : (uint64_t)v;
    if (bits >= 32)
      sb_printf(out, "UINT%d_C(%llu)", bits, (unsigned long long)u);
    else
      sb_printf(out, "((%s)%llu)", c_type_name(t), (unsigned long long)u);
  }
  else if (v < 0)
    sb_printf(out, "((%s)(%lld))", c_type_name(t), (long long)v);
  else
    sb_printf(out, "((%s)%lld)", c_type_name(t), (long long)v);
}

static const char *unsigned_of(ElemType t) {
  return elem_type_bits(t) == 64 ? "uint64_t" : "uint32_t";
}

/* The unsigned type as wide as integer type t (i1: _Bool). */
static const char *same_width_unsigned(ElemType t) {
  switch (elem_type_bits(t)) {
  case 1:
    return "_Bool";
  case 8:
    return "uint8_t";
  case 16:
    return "uint16_t";
  case 32:
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

/* Emits (once) `static inline T name(T a, T b) { return BODY; }` (on three
 * lines where one is too long) and returns name. */
static const char *binary_helper(ExprCtx *ctx, const char *stem, ElemType t, const char *body) {
  const char *name = arena_printf(ctx->arena, "lgen_%s_%s", stem, elem_type_name(t));
  if (helper_seen(ctx, name))
    return name;
  const char *head = arena_printf(ctx->arena, "static inline %s %s(%s a, %s b) {", c_type_name(t), name,
                                  c_type_name(t), c_type_name(t));
  if (strlen(head) + strlen(body) + 12 <= LOOPS_WIDTH)
    sb_printf(ctx->helpers, "%s return %s; }\n", head, body);
  else
    sb_printf(ctx->helpers, "%s\n  return %s;\n}\n", head, body);
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
    ctx->needs->widens_f16 = true;
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

/* ---- vectorisable elementary functions ----
 * libm's expf, erff, tanhf and logf are calls gcc cannot vectorise, and they
 * dominate softmax, GELU, sigmoid and tanh loops. These helpers use only
 * arithmetic, fma, conversions and bit copies through memcpy, without branches
 * or tables, so they inline and vectorise inside `omp simd` loops.
 * Accuracy, measured over every float against libm's double functions rounded
 * to float (tests/vmath.test; VMATH_FULL=1 for all 2^32 inputs), with and
 * without FMA: exp, log, tanh, erf at most 1 ulp; specials as C99 Annex F
 * (NaN propagates, exp(-inf) = 0, overflow to inf, subnormal results, log(0)
 * = -inf, log(x < 0) = NaN, tanh and erf odd with signed zeros kept). */

static const char vmath_prelude[] =
    "/* f32 exp, log, tanh and erf that vectorise: branch-free, table-free, only\n"
    " * + - * / fma, conversions and bit copies. Largest error over every float,\n"
    " * against libm's double functions rounded to float, with and without FMA:\n"
    " * 1 ulp each (tests/vmath.test). Define LGEN_LIBM_MATH to call libm's\n"
    " * expf, logf, tanhf and erff instead. */\n"
    "#ifndef LGEN_LIBM_MATH\n"
    "static inline uint32_t lgen_bits_f32(float x) {\n"
    "  uint32_t u;\n"
    "  memcpy(&u, &x, sizeof u);\n"
    "  return u;\n"
    "}\n"
    "static inline float lgen_f32_of_bits(uint32_t u) {\n"
    "  float x;\n"
    "  memcpy(&x, &u, sizeof x);\n"
    "  return x;\n"
    "}\n"
    "/* c ? a : b by a bit mask: with a select, gcc moves the operations only one\n"
    " * arm needs into a branch, or specialises the code after it for a constant\n"
    " * arm, and a branch holding a float operation (which may trap) does not\n"
    " * vectorise */\n"
    "static inline float lgen_pick_f32(int c, float a, float b) {\n"
    "  uint32_t m = 0u - (uint32_t)c;\n"
    "  return lgen_f32_of_bits((lgen_bits_f32(a) & m) | (lgen_bits_f32(b) & ~m));\n"
    "}\n"
    "#endif\n";

/* exp(r) - 1 for |r| <= ln2/2: q = r + r^2 P(r), P of degree 4, a
 * relative-error minimax fit (Lawson's weighted least squares over
 * Chebyshev nodes, coefficients rounded to float); its own error is 3.7e-9,
 * a sixteenth of an ulp, so the result stays within 1 ulp (all floats
 * checked). Cephes' polynomial, used before, has one more term than this
 * range needs: a multiply-add per exp, about 3 % of a softmax's time.
 * lgen_exp_f32 and lgen_expneg_f32 share it. */
#define VMATH_EXPM1_POLYNOMIAL                                                                                        \
  "  p = LGEN_FMAF(0x1.6bd9p-10f, r, 0x1.1239b2p-7f);\n"                                                             \
  "  p = LGEN_FMAF(p, r, 0x1.555682p-5f);\n"                                                                         \
  "  p = LGEN_FMAF(p, r, 0x1.555492p-3f);\n"                                                                         \
  "  p = LGEN_FMAF(p, r, 0x1.fffffep-2f);\n"                                                                         \
  "  p = LGEN_FMAF(p, r * r, r);\n"

static const char vmath_exp[] =
    "static inline float lgen_exp_f32(float x) {\n"
    "#ifdef LGEN_LIBM_MATH\n"
    "  return expf(x);\n"
    "#else\n"
    "  /* exp(x) = 2^n exp(r), x = n ln2 + r, |r| <= ln2/2 (Cody-Waite), exp(r)\n"
    "   * by a polynomial. The clamp keeps n in [-160, 129] (the result\n"
    "   * still overflows to inf and underflows to 0) and keeps NaN: comparisons\n"
    "   * with NaN are false. */\n"
    "  float xc = lgen_pick_f32(x > 0x1.64p+6f, 0x1.64p+6f, x);\n"
    "  float t, n, r, p;\n"
    "  uint32_t k;\n"
    "  int32_t n1, n2;\n"
    "  xc = lgen_pick_f32(xc < -0x1.bcp+6f, -0x1.bcp+6f, xc);\n"
    "  t = LGEN_FMAF(xc, 0x1.715476p+0f, 0x1.8p+23f); /* n in the low bits */\n"
    "  n = t - 0x1.8p+23f;\n"
    "  r = LGEN_FMAF(n, -0x1.62e4p-1f, xc);\n"
    "  r = LGEN_FMAF(n, -0x1.7f7d1cp-20f, r);\n"
    VMATH_EXPM1_POLYNOMIAL
    "  p += 1.0f;\n"
    "  /* n read from t's low bits; 2^n as two normal factors, as 2^n alone\n"
    "   * under- or overflows; the last product rounds subnormals once */\n"
    "  k = lgen_bits_f32(t) - 0x4b400000u;\n"
    "  n1 = (int32_t)k / 2;\n"
    "  n2 = (int32_t)k - n1;\n"
    "  return p * lgen_f32_of_bits((uint32_t)(n1 + 127) << 23) *\n"
    "         lgen_f32_of_bits((uint32_t)(n2 + 127) << 23);\n"
    "#endif\n"
    "}\n";

/* exp of a shifted score, x <= 0 (softmax's exp(x - max)): the reduction
 * and polynomial of lgen_exp_f32, but 2^n is made from its exponent bits
 * directly, as n is in [-126, 0] where the result is not below 2^-126
 * (below that, -inf included, it returns 0). A third fewer
 * instructions than lgen_exp_f32, which must also handle x > 0 and the
 * subnormal results. */
static const char vmath_expneg[] =
    "static inline float lgen_expneg_f32(float x) {\n"
    "#ifdef LGEN_LIBM_MATH\n"
    "  return expf(x);\n"
    "#else\n"
    "  /* below ln(2^-126) the select returns 0, whatever the arithmetic gave\n"
    "   * (no clamp needed); NaN fails the comparison and propagates */\n"
    "  int under = x < -0x1.5d589ep+6f;\n"
    "  float t = LGEN_FMAF(x, 0x1.715476p+0f, 0x1.8p+23f);\n"
    "  float n = t - 0x1.8p+23f;\n"
    "  float r = LGEN_FMAF(n, -0x1.62e4p-1f, x);\n"
    "  float p, s;\n"
    "  r = LGEN_FMAF(n, -0x1.7f7d1cp-20f, r);\n"
    VMATH_EXPM1_POLYNOMIAL
    "  /* 2^n (1 + p) as one multiply-add */\n"
    "  s = lgen_f32_of_bits((lgen_bits_f32(t) - 0x4b400000u + 127u) << 23);\n"
    "  return lgen_pick_f32(under, 0.0f, LGEN_FMAF(p, s, s));\n"
    "#endif\n"
    "}\n";

static const char vmath_log[] =
    "static inline float lgen_log_f32(float x) {\n"
    "#ifdef LGEN_LIBM_MATH\n"
    "  return logf(x);\n"
    "#else\n"
    "  /* x = 2^k m, m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact);\n"
    "   * log(m) = 2 atanh(s), s = f / (2 + f), as FreeBSD's logf.\n"
    "   * Subnormals are scaled by 2^23 first. */\n"
    "  int sub = x < 0x1p-126f;\n"
    "  uint32_t ix = lgen_bits_f32(lgen_pick_f32(sub, x * 0x1p+23f, x)) + (0x3f800000u - 0x3f3504f3u);\n"
    "  float k = (float)((int32_t)(ix >> 23) - 127 - (sub ? 23 : 0));\n"
    "  float f = lgen_f32_of_bits((ix & 0x007fffffu) + 0x3f3504f3u) - 1.0f;\n"
    "  float s = f / (2.0f + f);\n"
    "  float z = s * s, w = z * z;\n"
    "  float r = LGEN_FMAF(w, LGEN_FMAF(w, 0x1.f13c4cp-3f, 0x1.999c26p-2f),\n"
    "                      z * LGEN_FMAF(w, 0x1.23d3dcp-2f, 0x1.555554p-1f));\n"
    "  float hfsq = 0.5f * f * f;\n"
    "  float y = LGEN_FMAF(k, 0x1.62e3p-1f, LGEN_FMAF(s, hfsq + r, k * 0x1.2fefa2p-17f) - hfsq + f);\n"
    "  /* log(+inf) = +inf, log(NaN) = NaN, log(0) = -inf, log(x < 0) = NaN */\n"
    "  y = lgen_pick_f32(!(x <= 0x1.fffffep+127f), x, y);\n"
    "  y = lgen_pick_f32(x == 0.0f, -HUGE_VALF, y);\n"
    "  return lgen_pick_f32(x < 0.0f, lgen_f32_of_bits(0x7fc00000u), y);\n"
    "#endif\n"
    "}\n";

static const char vmath_tanh[] =
    "static inline float lgen_tanh_f32(float x) {\n"
    "#ifdef LGEN_LIBM_MATH\n"
    "  return tanhf(x);\n"
    "#else\n"
    "  /* odd: work on |x|, put the sign back last (keeps tanh(-0) = -0).\n"
    "   * |x| < 0.625: x + x^3 P(x^2) (Cephes); else 1 - 2 / (exp(2|x|) + 1) */\n"
    "  uint32_t sign = lgen_bits_f32(x) & 0x80000000u;\n"
    "  float a = lgen_f32_of_bits(lgen_bits_f32(x) ^ sign);\n"
    "  float z = a * a;\n"
    "  float p = LGEN_FMAF(-0x1.75e1d4p-8f, z, 0x1.52269cp-6f);\n"
    "  float small, big;\n"
    "  p = LGEN_FMAF(p, z, -0x1.b83c5ap-5f);\n"
    "  p = LGEN_FMAF(p, z, 0x1.110726p-3f);\n"
    "  p = LGEN_FMAF(p, z, -0x1.555532p-2f);\n"
    "  small = LGEN_FMAF(p * z, a, a);\n"
    "  big = 1.0f - 2.0f / (lgen_exp_f32(2.0f * a) + 1.0f);\n"
    "  return lgen_f32_of_bits(lgen_bits_f32(lgen_pick_f32(a < 0.625f, small, big)) | sign);\n"
    "#endif\n"
    "}\n";

static const char vmath_erf[] =
    "static inline float lgen_erf_f32(float x) {\n"
    "#ifdef LGEN_LIBM_MATH\n"
    "  return erff(x);\n"
    "#else\n"
    "  /* odd: work on |x| (clamped to 4, where erf rounds to 1), sign back last.\n"
    "   * |x| < 0.875: x + x Q(x^2); else 1 - exp(-x^2) G(|x|), with G ~\n"
    "   * erfc(x) exp(x^2): both minimax fits (weighted by erf's ulp) */\n"
    "  uint32_t sign = lgen_bits_f32(x) & 0x80000000u;\n"
    "  float a = lgen_f32_of_bits(lgen_bits_f32(x) ^ sign);\n"
    "  float z, q, t, g, small, big;\n"
    "  a = lgen_pick_f32(a > 4.0f, 4.0f, a);\n"
    "  z = a * a;\n"
    "  q = LGEN_FMAF(-0x1.453aaap-11f, z, 0x1.49c9fep-8f);\n"
    "  q = LGEN_FMAF(q, z, -0x1.b6f38ap-6f);\n"
    "  q = LGEN_FMAF(q, z, 0x1.ce211ep-4f);\n"
    "  q = LGEN_FMAF(q, z, -0x1.81270cp-2f);\n"
    "  q = LGEN_FMAF(q, z, 0x1.06eba6p-3f);\n"
    "  small = LGEN_FMAF(a, q, a);\n"
    "  t = a - 2.4375f;\n"
    "  g = LGEN_FMAF(0x1.3124fap-13f, t, 0x1.7fbec2p-12f);\n"
    "  g = LGEN_FMAF(g, t, 0x1.a6a5f2p-11f);\n"
    "  g = LGEN_FMAF(g, t, -0x1.477eb8p-11f);\n"
    "  g = LGEN_FMAF(g, t, 0x1.443ed0p-9f);\n"
    "  g = LGEN_FMAF(g, t, -0x1.230060p-7f);\n"
    "  g = LGEN_FMAF(g, t, 0x1.b14094p-6f);\n"
    "  g = LGEN_FMAF(g, t, -0x1.3da998p-4f);\n"
    "  g = LGEN_FMAF(g, t, 0x1.b974ccp-3f);\n"
    "  big = LGEN_FMAF(-lgen_exp_f32(-z), g, 1.0f);\n"
    "  return lgen_f32_of_bits(lgen_bits_f32(lgen_pick_f32(a < 0.875f, small, big)) | sign);\n"
    "#endif\n"
    "}\n";

/* Emits (once) the helper for f32 `fn` with the helpers it calls, or
 * returns NULL when lgen has none (libm is called). */
static const char *vmath_helper(ExprCtx *ctx, const char *fn) {
  static const struct {
    const char *fn, *code;
    bool calls_exp;
  } table[] = {{"exp", vmath_exp, false}, {"log", vmath_log, false}, {"tanh", vmath_tanh, true},
               {"erf", vmath_erf, true}, {"expneg", vmath_expneg, false}};
  for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
    if (strcmp(table[i].fn, fn) != 0)
      continue;
    const char *name = arena_printf(ctx->arena, "lgen_%s_f32", fn);
    ctx->needs->fma = true; /* the helpers use LGEN_FMAF */
    ctx->needs->bits = true; /* and memcpy: <string.h> at the top of the file */
    if (!helper_seen(ctx, "lgen_bits_f32"))
      sb_printf(ctx->helpers, "%s\n", vmath_prelude);
    if (table[i].calls_exp && !helper_seen(ctx, "lgen_exp_f32"))
      sb_printf(ctx->helpers, "%s\n", vmath_exp);
    if (!helper_seen(ctx, name))
      sb_printf(ctx->helpers, "%s\n", table[i].code);
    return name;
  }
  return NULL;
}

/* For templates (emit/c_ext.c): the function that computes `fn` (exp, log,
 * tanh, erf) on values of type t, its helpers emitted once: lgen's
 * vectorisable f32 helper, or libm's for f64. */
const char *c_math_function(ExprCtx *ctx, const char *fn, ElemType t) {
  ctx->needs->math = true;
  const char *helper = t == TY_F32 ? vmath_helper(ctx, fn) : NULL;
  if (helper)
    return helper;
  if (strcmp(fn, "expneg") == 0) /* exp of x <= 0: libm's exp */
    fn = "exp";
  return t == TY_F64 ? fn : arena_printf(ctx->arena, "%sf", fn);
}

static void math_call(StrBuf *out, ExprCtx *ctx, const char *fn, const PayloadNode *n) {
  ctx->needs->math = true; /* libm, also for the helpers under LGEN_LIBM_MATH */
  ElemType t = n->type;
  const char *helper = t == TY_F64 ? NULL : vmath_helper(ctx, fn);
  if (helper) {
    sb_printf(out, "%s(", helper);
    arg(out, ctx, n, 0);
    sb_putc(out, ')');
  } else if (t == TY_F64) {
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

/* a > b or a < b on integer bits read as unsigned: u8..u64 (and i1)
 * compare as they are, signed types through the unsigned type as wide */
static void unsigned_compare(StrBuf *out, ExprCtx *ctx, const char *cmp, const PayloadNode *n, ElemType in) {
  if (elem_type_is_unsigned(in) || in == TY_I1) {
    infix(out, ctx, cmp, n);
    return;
  }
  const char *u = same_width_unsigned(in);
  sb_printf(out, "((%s)", u);
  arg(out, ctx, n, 0);
  sb_printf(out, " %s (%s)", cmp, u);
  arg(out, ctx, n, 1);
  sb_putc(out, ')');
}

/* Float to unsigned, saturating (C's conversion is undefined outside
 * (-1, 2^bits)): NaN and x <= 0 give 0, x >= 2^bits the maximum. Where the
 * maximum is a value of the float type (u8, u16; u32 from double) it is a
 * clamp then a conversion, which vectorises (max, min, convert, pack);
 * otherwise the conversion happens only inside the range. f16 arrives
 * widened to float. */
static const char *float_to_unsigned_helper(ExprCtx *ctx, ElemType from, ElemType to) {
  bool dbl = from == TY_F64;
  const char *ft = dbl ? "double" : "float", *sfx = dbl ? "" : "f";
  const char *name = arena_printf(ctx->arena, "lgen_%s_of_%s", elem_type_name(to), dbl ? "f64" : "f32");
  if (helper_seen(ctx, name))
    return name;
  int bits = elem_type_bits(to);
  const char *ut = c_type_name(to), *body;
  if (bits < (dbl ? 53 : 24)) {
    unsigned long long max = ((unsigned long long)1 << bits) - 1;
    body = arena_printf(ctx->arena, "(%s)(x > 0.0%s ? (x < %llu.0%s ? x : %llu.0%s) : 0.0%s)", ut, sfx, max, sfx,
                        max, sfx, sfx);
  } else {
    body = arena_printf(ctx->arena, "x > 0.0%s ? (x < 0x1p%d%s ? (%s)x : %s) : 0u", sfx, bits, sfx, ut,
                        elem_type_c_highest(to));
  }
  sb_printf(ctx->helpers, "static inline %s %s(%s x) { return %s; }\n", ut, name, ft, body);
  return name;
}

/* ---- conversions ---- */

/* 2^e as an exact C literal of a floating type (e <= 64). */
static const char *pow2_literal(ExprCtx *ctx, int e, bool negative, ElemType ft) {
  StrBuf sb = {0};
  if (negative)
    sb_putc(&sb, '-');
  c_float_literal(&sb, ldexp(1.0, e), ft);
  const char *s = arena_strdup(ctx->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

/* Float to integer without undefined behaviour: C leaves the conversion of
 * a value outside the target's range undefined (x86 gives INT_MIN, ARM
 * saturates). lgen saturates, as Rust, Java and WebAssembly's trunc_sat do:
 * NaN gives 0; signed targets clamp to [MIN, MAX], unsigned ones to
 * [0, 2^N - 1] (then stored as the signed type's bit pattern); i1 clamps to
 * its signed (-1 is true) or unsigned (1 is true) range. The comparisons
 * use powers of two, exact in every float type. */
static const char *float_to_int_helper(ExprCtx *ctx, ElemType from, ElemType to, bool is_unsigned) {
  ElemType ft = from == TY_F64 ? TY_F64 : TY_F32; /* f16 arrives widened */
  const char *name = arena_printf(ctx->arena, "lgen_fpto%si_%s_%s", is_unsigned ? "u" : "s", elem_type_name(to),
                                  elem_type_name(ft));
  if (helper_seen(ctx, name))
    return name;
  const char *ty = c_type_name(to), *fty = c_type_name(ft);
  int bits = elem_type_bits(to);
  const char *body;
  if (to == TY_I1 && is_unsigned)
    body = arena_printf(ctx->arena, "x >= %s", pow2_literal(ctx, 0, false, ft));
  else if (to == TY_I1)
    body = arena_printf(ctx->arena, "x <= %s", pow2_literal(ctx, 0, true, ft));
  else if (is_unsigned)
    body = arena_printf(ctx->arena, "x != x || x <= %s ? 0 : x >= %s ? (%s)UINT%d_MAX : (%s)(uint%d_t)x",
                        pow2_literal(ctx, 0, true, ft), pow2_literal(ctx, bits, false, ft), ty, bits, ty, bits);
  else
    body = arena_printf(ctx->arena, "x != x ? 0 : x >= %s ? %s : x <= %s ? %s : (%s)x",
                        pow2_literal(ctx, bits - 1, false, ft), elem_type_c_highest(to),
                        pow2_literal(ctx, bits - 1, true, ft), elem_type_c_lowest(to), ty);
  sb_printf(ctx->helpers, "static inline %s %s(%s x) { return (%s)(%s); }\n", ty, name, fty, ty, body);
  return name;
}

/* The conversion of operand 0 of n to n's type: how (signed or unsigned)
 * an integer operand is read; `c_style`: plain C conversion of integers
 * (lgen_cast: i1 is 0 or 1, any nonzero integer becomes true). */
static void convert(StrBuf *out, ExprCtx *ctx, const PayloadNode *n, bool is_unsigned, bool c_style) {
  ElemType from = ctx->op->nodes[n->args[0]].type, to = n->type;
  bool ffrom = elem_type_is_float(from), fto = elem_type_is_float(to);
  if (from == to) {
    arg(out, ctx, n, 0);
    return;
  }
  if (ffrom && !fto) {
    /* u8..u64 saturate to their own range, whichever cast */
    const char *helper = elem_type_is_unsigned(to) ? float_to_unsigned_helper(ctx, from, to)
                                                   : float_to_int_helper(ctx, from, to, is_unsigned);
    sb_printf(out, "%s(", helper);
    arg(out, ctx, n, 0);
    sb_putc(out, ')');
    return;
  }
  /* the C type the result is converted through ("float" for f16: c_expr rounds it) */
  const char *target = to == TY_F16 ? "float" : c_type_name(to);
  if (ffrom) { /* float to float */
    sb_printf(out, "(%s)", target);
    arg(out, ctx, n, 0);
    return;
  }
  if (to == TY_I1 && !c_style) { /* the low bit (arith.trunci) */
    sb_puts(out, "(lgen_bool)(");
    arg(out, ctx, n, 0);
    sb_puts(out, " & 1)");
    return;
  }
  if (from == TY_I1 && !is_unsigned && !c_style) { /* sign extension: true is -1 */
    sb_printf(out, "(%s)-(int)", target);
    arg(out, ctx, n, 0);
    return;
  }
  if (is_unsigned && from != TY_I1) {
    sb_printf(out, "(%s)(%s)", target, same_width_unsigned(from));
    arg(out, ctx, n, 0);
    return;
  }
  sb_printf(out, "(%s)", target);
  arg(out, ctx, n, 0);
}

/* A payload constant, exactly, in its node's type. */
static void c_constant(StrBuf *out, ExprCtx *ctx, const PayloadNode *n) {
  switch (n->type) {
  case TY_F16:
    ctx->needs->narrows_f16 = true;
    sb_puts(out, "LGEN_F32_TO_F16(");
    c_float_literal(out, n->fvalue, TY_F32);
    sb_putc(out, ')');
    return;
  case TY_F32:
  case TY_F64:
    c_float_literal(out, n->fvalue, n->type);
    return;
  default:
    c_int_literal(out, n->ivalue, n->type);
    return;
  }
}

void c_expr(StrBuf *out, ExprCtx *ctx, int index) {
  const PayloadNode *n = &ctx->op->nodes[index];
  /* an f16 result of float arithmetic is rounded back from float */
  bool narrow = n->kind == PN_OP && n->type == TY_F16 && !ctx->node_names[index] && n->op != SOP_SELECT &&
                n->op != SOP_MAXF && n->op != SOP_MINF && n->op != SOP_MAXIMUMF && n->op != SOP_MINIMUMF;
  if (narrow) {
    ctx->needs->narrows_f16 = true;
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
  if (n->kind == PN_INDEX) {
    sb_printf(out, "((int64_t)(%s))", ctx->dim_names[n->dim]);
    return;
  }
  if (n->kind == PN_SIZE) {
    sb_printf(out, "((int64_t)(%s))", ctx->size_names[n->size]);
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
      ctx->needs->fma = true;
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
    const char *u = same_width_unsigned(in);
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
  case SOP_CMPI_UGT:
  case SOP_CMPI_ULT:
    unsigned_compare(out, ctx, n->op == SOP_CMPI_UGT ? ">" : "<", n, in);
    return;
  case SOP_ANDI:
  case SOP_ORI:
  case SOP_XORI: {
    const char *op = n->op == SOP_ANDI ? "&" : n->op == SOP_ORI ? "|" : "^";
    sb_printf(out, "(%s)", c_type_name(in)); /* int promotion undone */
    infix(out, ctx, op, n);
    return;
  }
  case SOP_NOTI:
    sb_printf(out, "(%s)%s", c_type_name(in), in == TY_I1 ? "!" : "~");
    arg(out, ctx, n, 0);
    return;
  case SOP_SHLI:
  case SOP_SHRUI: {
    /* through the unsigned type as wide, at least unsigned int (u8 << 7
     * stays clear of int's sign bit) */
    const char *u = same_width_unsigned(in), *w = unsigned_of(in);
    const char *body = arena_printf(ctx->arena, "(%s)b < %d ? (%s)((%s)(%s)a %s (%s)b) : 0", u, elem_type_bits(in),
                                    c_type_name(in), w, u, n->op == SOP_SHLI ? "<<" : ">>", u);
    call2(out, ctx, binary_helper(ctx, n->op == SOP_SHLI ? "shl" : "shr", in, body), n);
    return;
  }
  case SOP_ZEXTI32:
    if (!elem_type_is_unsigned(in) && in != TY_I1)
      sb_printf(out, "(int32_t)(%s)", same_width_unsigned(in));
    else
      sb_puts(out, "(int32_t)");
    arg(out, ctx, n, 0);
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
    ctx->needs->widens_f16 |= in == TY_F16;
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
    ctx->needs->math = true;
    call2(out, ctx, n->type == TY_F64 ? "pow" : "powf", n);
    return;
  case SOP_REMF:
    ctx->needs->math = true;
    call2(out, ctx, n->type == TY_F64 ? "fmod" : "fmodf", n);
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
  case SOP_MAXUI:
  case SOP_MINUI: {
    const char *cmp = n->op == SOP_MAXUI ? ">" : "<";
    const char *body = arena_printf(ctx->arena, "a %s b ? a : b", cmp);
    if (!elem_type_is_unsigned(in) && in != TY_I1) {
      const char *u = same_width_unsigned(in);
      body = arena_printf(ctx->arena, "(%s)a %s (%s)b ? a : b", u, cmp, u);
    }
    call2(out, ctx, binary_helper(ctx, n->op == SOP_MAXUI ? "maxui" : "minui", in, body), n);
    return;
  }
  case SOP_CAST:
    if (n->type == TY_I1) { /* nonzero is true, as C's conversion to _Bool */
      sb_puts(out, "(lgen_bool)");
      arg(out, ctx, n, 0);
      return;
    }
    convert(out, ctx, n, false, true);
    return;
  case SOP_CAST_SIGNED:
  case SOP_CAST_UNSIGNED:
    convert(out, ctx, n, n->op == SOP_CAST_UNSIGNED, false);
    return;
  case SOP_MAXIMUMF:
  case SOP_MINIMUMF: {
    const char *cmp = n->op == SOP_MAXIMUMF ? ">" : "<";
    ctx->needs->widens_f16 |= in == TY_F16;
    const char *body =
        in == TY_F16 ? arena_printf(ctx->arena, "LGEN_F16_TO_F32(a) %s LGEN_F16_TO_F32(b) || LGEN_F16_TO_F32(a) != LGEN_F16_TO_F32(a) ? a : b", cmp)
                     : arena_printf(ctx->arena, "a %s b || a != a ? a : b", cmp);
    sb_printf(out, "%s(", binary_helper(ctx, n->op == SOP_MAXIMUMF ? "maximum" : "minimum", in, body));
    c_expr(out, ctx, n->args[0]);
    sb_puts(out, ", ");
    c_expr(out, ctx, n->args[1]);
    sb_putc(out, ')');
    return;
  }
  case SOP_ROUNDF:
    math_call(out, ctx, "round", n);
    return;
  case SOP_SIN:
    math_call(out, ctx, "sin", n);
    return;
  case SOP_COS:
    math_call(out, ctx, "cos", n);
    return;
  case SOP_TAN:
    math_call(out, ctx, "tan", n);
    return;
  case SOP_ASIN:
    math_call(out, ctx, "asin", n);
    return;
  case SOP_ACOS:
    math_call(out, ctx, "acos", n);
    return;
  case SOP_ATAN:
    math_call(out, ctx, "atan", n);
    return;
  case SOP_SINH:
    math_call(out, ctx, "sinh", n);
    return;
  case SOP_COSH:
    math_call(out, ctx, "cosh", n);
    return;
  case SOP_ASINH:
    math_call(out, ctx, "asinh", n);
    return;
  case SOP_ACOSH:
    math_call(out, ctx, "acosh", n);
    return;
  case SOP_ATANH:
    math_call(out, ctx, "atanh", n);
    return;
  case SOP_ROUNDEVENF: /* halves to even: rint in the default rounding mode */
    math_call(out, ctx, "rint", n);
    return;
  case SOP_COUNT:
    break;
  }
}
