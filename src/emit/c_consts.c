/* c_consts.c - a model graph's constants as C arrays: exact initializers
 * (hex floats, f16 bits or values, the most negative integers as
 * expressions), 64-byte aligned, static in the kernels' file or extern
 * beside a --weights file, and the pre-packed arrays c_loops.c lays out at
 * generation time.
 *
 * Calls: c_expr.c, c_access.c. */
#include "emit/c_internal.h"

#include <math.h>
#include <string.h>

/* The tensor whose memory t is: itself unless an alias. */
int alias_root(const Kernel *k, int t) {
  for (int hops = 0; k->tensors[t].storage == TS_ALIAS && hops <= k->ntensors; hops++)
    t = k->tensors[t].alias_of;
  return t;
}

/* The array of constant t. A tensor's C name never starts with lgen_
 * (c_names.c renames such names), so no local shadows it; the prefix keeps
 * two models' weights apart when they are extern. */
const char *const_symbol(const Emitter *e, int t) {
  const char *prefix = e->opt->prefix;
  return arena_printf(e->arena, "%slgen_%s_%s", prefix, e->kn.function + strlen(prefix), e->kn.tensors[t]);
}

/* Element count of a constant; its shape is static (-1 if it is not). */
static int64_t const_count(const TensorParam *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) {
    if (t->shape[i]->kind != AE_CONST)
      return -1;
    n *= t->shape[i]->value;
  }
  return n;
}

static uint64_t load_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

/* The value of IEEE binary16 bits, exactly (every one is a double). */
static double f16_value(unsigned bits) {
  unsigned exp = (bits >> 10) & 0x1fu, man = bits & 0x3ffu;
  double v;
  if (exp == 0x1f) {
    v = man ? NAN : INFINITY;
  } else {
    v = exp ? (double)(man | 0x400u) : (double)man;
    int e2 = exp ? (int)exp - 25 : -24; /* value = v * 2^e2 */
    for (; e2 < 0; e2++)
      v *= 0.5;
    for (; e2 > 0; e2--)
      v *= 2.0;
  }
  return (bits & 0x8000u) ? -v : v;
}

/* Non-finite values as <math.h>'s constant expressions (a division by zero
 * is not one); finite ones exactly, in hex. */
static void float_initializer(StrBuf *out, double v, ElemType t, bool *needs_math) {
  if (isnan(v) || isinf(v)) {
    sb_printf(out, "%s%s", signbit(v) ? "-" : "", isnan(v) ? "NAN" : "INFINITY");
    *needs_math = true;
    return;
  }
  c_float_literal(out, v, t);
}

/* One element of a constant. f16: the value cast to lgen_f16 where it is
 * _Float16 (native_f16), else the IEEE bits that lgen_f16 holds. */
static void element_initializer(StrBuf *out, ElemType t, const unsigned char *p, bool native_f16,
                                bool *needs_math) {
  int bits = elem_type_bits(t);
  uint64_t u = load_le(p, bits < 8 ? 1 : bits / 8);
  switch (t) {
  case TY_F16:
    if (native_f16) {
      sb_puts(out, "(lgen_f16)");
      float_initializer(out, f16_value((unsigned)u), TY_F32, needs_math);
    } else {
      sb_printf(out, "0x%04x", (unsigned)u);
    }
    return;
  case TY_F32: {
    uint32_t b = (uint32_t)u;
    float f;
    memcpy(&f, &b, sizeof f);
    float_initializer(out, f, TY_F32, needs_math);
    return;
  }
  case TY_F64: {
    double d;
    memcpy(&d, &u, sizeof d);
    float_initializer(out, d, TY_F64, needs_math);
    return;
  }
  case TY_I1:
    sb_puts(out, u ? "1" : "0");
    return;
  case TY_U64: /* above INT64_MAX, a decimal literal without a suffix is not a C99 integer constant */
    sb_printf(out, u > (uint64_t)INT64_MAX ? "UINT64_C(%llu)" : "%llu", (unsigned long long)u);
    return;
  case TY_U8:
  case TY_U16:
  case TY_U32: /* a long where int is 32 bits: converted to the element type */
    sb_printf(out, "%llu", (unsigned long long)u);
    return;
  default: {
    /* sign-extend; the most negative value is written as an expression
     * because its magnitude is not a literal of the type */
    uint64_t sign = (uint64_t)1 << (bits - 1);
    int64_t v = (u & sign) ? -(int64_t)((~u & (sign - 1)) + 1) : (int64_t)u;
    if (u == sign && bits == 64)
      sb_puts(out, "(-INT64_C(9223372036854775807) - 1)");
    else if (u == sign)
      sb_printf(out, "(%lld - 1)", (long long)(v + 1));
    else if (t == TY_I64)
      sb_printf(out, "INT64_C(%lld)", (long long)v);
    else
      sb_printf(out, "%lld", (long long)v);
    return;
  }
  }
}

static void constant_body(StrBuf *out, const TensorParam *tp, int64_t n, bool native_f16, bool *needs_math) {
  int bytes = (elem_type_bits(tp->type) + 7) / 8;
  const unsigned char *data = tp->data;
  sb_puts(out, " = {");
  if (n == 0 || !data)
    sb_puts(out, "0");
  /* as many values a line as fit in 100 columns (LOOPS_WIDTH) */
  StrBuf one = {0};
  size_t line = 0; /* where the current line starts in out */
  for (int64_t i = 0; data && i < n; i++) {
    one.len = 0;
    element_initializer(&one, tp->type, data + i * bytes, native_f16, needs_math);
    sb_putc(&one, ',');
    if (i == 0 || out->len - line + 1 + one.len > LOOPS_WIDTH) {
      sb_puts(out, "\n  ");
      line = out->len - 2;
    } else {
      sb_putc(out, ' ');
    }
    sb_putn(out, one.data, one.len);
  }
  sb_free(&one);
  sb_puts(out, "\n};\n");
}

/* A constant as one string literal of its little-endian bytes, in a union
 * with its element array: gcc and clang read such a literal about ten times
 * faster than the same bytes as a list of hex floats and in a fifth of the
 * memory (10 MB of floats: 1.2 s and 150 MB against 13 s and 720 MB at -O2),
 * which is what makes a ResNet-50's embedded weights buildable. Reading the
 * other member of a union is defined in C99 (6.5.2.3, footnote 82). Small
 * constants keep their values, which a reviewer can read. */
enum { BYTES_FORM_MIN = 256 }; /* bytes of a constant written as a literal */

static bool bytes_form(const Emitter *e, const TensorParam *tp, int64_t n) {
  return !e->opt->constant_values && tp->data && tp->type != TY_I1 &&
         n * elem_type_bytes(tp->type) >= BYTES_FORM_MIN;
}

/* Whether byte c stands for itself in a string literal: printable ASCII
 * but the quote, the backslash and '?' (which starts trigraphs). */
static bool literal_char(int c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?'; }

/* Byte c's escape in a string literal: printable ASCII as itself, except
 * the quote, the backslash and '?' (trigraphs); the rest in octal, as short
 * as the next character allows (an octal escape takes up to three digits).
 * By hand, not printf: a model has 10^8 bytes. */
static void literal_byte(StrBuf *out, unsigned char c, int next) {
  if (literal_char(c)) {
    sb_putc(out, (char)c);
    return;
  }
  bool digit_next = next >= '0' && next <= '7'; /* printed as itself: it would extend the escape */
  char esc[4] = {'\\'};
  size_t n = 1;
  if (digit_next || c >= 64)
    esc[n++] = (char)('0' + (c >> 6));
  if (digit_next || c >= 8)
    esc[n++] = (char)('0' + ((c >> 3) & 7));
  esc[n++] = (char)('0' + (c & 7));
  sb_putn(out, esc, n);
}

/* The union of a constant's bytes and its elements (`bytes[B + 1]`: room
 * for the literal's NUL, which compilers warn of leaving out, gcc's
 * -Wunterminated-string-initialization), and its object's name:
 * "lgenbytes_" begins no other symbol of the file (see packed_constant). */
static const char *bytes_union(StrBuf *out, Emitter *e, const TensorParam *tp, const char *symbol, int64_t n) {
  const char *prefix = e->opt->prefix;
  sb_printf(out, "const union {\n  unsigned char bytes[%lld];\n  %s v[%lld];\n}",
            (long long)(n * elem_type_bytes(tp->type)) + 1, c_type_name(tp->type), (long long)n);
  return arena_printf(e->arena, "%slgenbytes_%s", prefix, symbol + strlen(prefix));
}

/* `static const union { unsigned char bytes[B]; T v[n]; } lgenbytes_SYMBOL` and a
 * pointer `SYMBOL` to its elements, which the code reads as it would the
 * array. The bytes are little-endian: the file refuses a big-endian target
 * (c_emit.c), for which --constants=values writes the values instead. In
 * the --weights=FILE.c file (external) the union is defined without
 * `static` and without the pointer, which the kernels' file declares
 * (constant_bytes_declaration). */
static void constant_bytes_definition(StrBuf *out, Emitter *e, const TensorParam *tp, const char *symbol,
                                      int64_t n, bool external) {
  int64_t bytes = n * elem_type_bytes(tp->type);
  const unsigned char *p = tp->data;
  if (!external)
    sb_puts(out, "static ");
  const char *object = bytes_union(out, e, tp, symbol, n);
  sb_printf(out, " %s LGEN_ALIGN64 = {", object);
  size_t line = 0; /* where the current line of the literal starts in out */
  for (int64_t i = 0; i < bytes; i++) {
    if (i == 0 || out->len - line > 92) { /* lines of at most 100 columns: one byte's escape is 4 */
      sb_puts(out, i ? "\"\n" : "\n");
      line = out->len;
      sb_puts(out, "  \"");
    }
    /* an escaped next byte puts no digit after this byte's escape */
    int next = i + 1 < bytes && literal_char(p[i + 1]) ? p[i + 1] : -1;
    literal_byte(out, p[i], next);
  }
  sb_puts(out, "\"\n};\n");
  if (!external)
    sb_printf(out, "static const %s *const %s = %s.v;\n", c_type_name(tp->type), symbol, object);
  e->consts.byte_literals = true;
}

/* The kernels' file's side of a constant in bytes form that the
 * --weights=FILE.c file defines: the union declared extern, and the
 * pointer to its elements. */
static void constant_bytes_declaration(StrBuf *out, Emitter *e, const TensorParam *tp, const char *symbol,
                                       int64_t n) {
  sb_puts(out, "extern ");
  const char *object = bytes_union(out, e, tp, symbol, n);
  sb_printf(out, " %s;\nstatic const %s *const %s = %s.v;\n", object, c_type_name(tp->type), symbol, object);
}

/* Constant tp gets the next 64-byte aligned place in the blob. */
static void blob_place(Emitter *e, const TensorParam *tp, const char *symbol) {
  WeightsLayout *l = e->consts.collect;
  int64_t n = const_count(tp);
  if (n < 0)
    diag_bug(e->opt->diag, "constant %s has a symbolic shape", tp->name);
  int64_t bytes = n * ((elem_type_bits(tp->type) + 7) / 8);
  int64_t offset = (l->size + 63) / 64 * 64;
  if (bytes > INT64_MAX - offset)
    diag_bug(e->opt->diag, "the weights blob's size overflows at %s", tp->name);
  if (l->n == l->cap) { /* doubling: a graph may have 10^5 constants */
    l->cap = l->cap ? l->cap * 2 : 64;
    WeightsEntry *more = arena_alloc(e->arena, sizeof *more * (size_t)l->cap);
    if (l->n)
      memcpy(more, l->entries, sizeof *more * (size_t)l->n);
    l->entries = more;
  }
  l->entries[l->n++] = (WeightsEntry){e->consts.graph, symbol, tp->name, tp->type, n, offset, tp->data};
  l->size = offset + bytes;
}

/* The definition of constant t: static in the kernels' file, external in
 * the --weights file. C99 has no empty arrays: a constant without elements
 * gets one unused zero. */
static void constant_definition_of(StrBuf *out, Emitter *e, const TensorParam *tp, const char *symbol,
                                   bool external) {
  int64_t n = const_count(tp);
  const char *decl = arena_printf(e->arena, "%sconst %s %s[%lld] LGEN_ALIGN64", external ? "" : "static ",
                                  c_type_name(tp->type), symbol, (long long)(n > 0 ? n : 1));
  if (n < 0) /* graphs fold shapes of constants to numbers */
    diag_bug(e->opt->diag, "constant %s has a symbolic shape", tp->name);
  e->consts.align64 = true;
  if (bytes_form(e, tp, n)) {
    constant_bytes_definition(out, e, tp, symbol, n, external);
  } else if (tp->type == TY_F16) {
    sb_printf(out, "#if defined(__FLT16_MANT_DIG__) && !defined(__cplusplus)\n%s", decl);
    constant_body(out, tp, n, true, &e->needs.math);
    sb_printf(out, "#else\n%s", decl);
    constant_body(out, tp, n, false, &e->needs.math);
    sb_puts(out, "#endif\n");
  } else {
    sb_puts(out, decl);
    constant_body(out, tp, n, false, &e->needs.math);
  }
}

/* A constant's array where it is defined (this file, or the --weights
 * file), else an extern declaration of it. */
static void constant_array(StrBuf *out, Emitter *e, const TensorParam *tp, const char *symbol, bool external_file) {
  if (e->consts.collect) { /* the blob's layout pass: no C, a place in the blob */
    blob_place(e, tp, symbol);
    return;
  }
  if (e->opt->blob) /* G_run points the symbol into the blob (c_emit.c) */
    return;
  if (external_file || !e->opt->separate_weights)
    constant_definition_of(out, e, tp, symbol, external_file);
  else if (bytes_form(e, tp, const_count(tp)))
    constant_bytes_declaration(out, e, tp, symbol, const_count(tp));
  else
    sb_printf(out, "extern const %s %s[%lld];\n", c_type_name(tp->type), symbol,
              (long long)(const_count(tp) > 0 ? const_count(tp) : 1));
}

/* The graph's constants. One that the run body (`body`) does not read,
 * because every reader reads it pre-packed, is left out of the file (an
 * unused static array or pointer draws a warning, also beside a --weights
 * file) and of the blob (it would double a CNN's blob); a --weights=FILE.c
 * file keeps them all, so that it defines every constant. */
void graph_constants(Emitter *e, StrBuf *out, bool external_file, const char *body) {
  bool only_read = e->consts.collect || !external_file;
  /* the constants' symbols, looked for in one pass over the body */
  const char **symbols = arena_alloc(e->arena, sizeof(char *) * (size_t)(e->k->ntensors + 1));
  int n = 0;
  for (int t = 0; t < e->k->ntensors; t++)
    if (e->k->tensors[t].storage == TS_CONST)
      symbols[n++] = const_symbol(e, t);
  NameSet used;
  if (only_read) {
    nameset_init(&used, symbols, n, e->arena);
    nameset_scan(&used, body);
  }
  n = 0;
  for (int t = 0; t < e->k->ntensors; t++) {
    const TensorParam *tp = &e->k->tensors[t];
    if (tp->storage != TS_CONST)
      continue;
    const char *symbol = symbols[n++];
    if (!only_read || nameset_seen(&used, symbol))
      constant_array(out, e, tp, symbol, external_file);
  }
}

/* Pre-packed constants (c_loops.c) are named after the op and the tensor;
 * "lgenpk" cannot begin another symbol of the file. */
const char *packed_constant(Emitter *e, int op_index, int t, const void *data, int64_t count) {
  const char *prefix = e->opt->prefix;
  const char *symbol = arena_printf(e->arena, "%slgenpk%d_%s_%s", prefix, op_index,
                                    e->kn.function + strlen(prefix), e->kn.tensors[t]);
  TensorParam *tp = arena_alloc(e->arena, sizeof *tp);
  tp->type = e->k->tensors[t].type;
  tp->name = symbol;
  tp->storage = TS_CONST;
  tp->rank = 1;
  tp->shape = arena_alloc(e->arena, sizeof *tp->shape);
  tp->shape[0] = affine_const(e->arena, count);
  tp->data = data;
  constant_array(e->consts.defs, e, tp, symbol, e->consts.weights_file);
  return symbol;
}
