/* types.c - element types (elem_types.def) and the scalar op table
 * (scalar_ops.def): every property of a type or an op is read from its
 * table here, so that a new type or op is one line in one table. */
#include "ir/ir.h"

#include <string.h>

typedef enum { K_FLOAT, K_BOOL, K_SIGNED, K_UNSIGNED } TypeKind;

typedef struct {
  const char *name;
  int bits;
  TypeKind kind;
  const char *c_name, *c_lowest, *c_highest;
  int onnx;
} TypeInfo;

#define X(e, name, bits, kind, c, lo, hi, onnx) {name, bits, K_##kind, c, lo, hi, onnx},
static const TypeInfo types[] = {
#include "ir/elem_types.def"
};
#undef X

static const TypeInfo *info(ElemType t) { return &types[t]; }

const char *elem_type_name(ElemType t) { return info(t)->name; }

bool elem_type_parse(const char *name, ElemType *out) {
  for (int i = 0; i < TY_COUNT; i++)
    if (strcmp(name, types[i].name) == 0) {
      *out = (ElemType)i;
      return true;
    }
  return false;
}

const char *elem_type_names(void) {
#define X(e, name, bits, kind, c, lo, hi, onnx) ", " name
  static const char all[] = "" /* the first ", " is skipped below */
#include "ir/elem_types.def"
      ;
#undef X
  return all + 2;
}

bool elem_type_is_float(ElemType t) { return info(t)->kind == K_FLOAT; }
bool elem_type_is_unsigned(ElemType t) { return info(t)->kind == K_UNSIGNED; }
int elem_type_bits(ElemType t) { return info(t)->bits; }
int elem_type_bytes(ElemType t) { return (info(t)->bits + 7) / 8; }
const char *elem_type_c_name(ElemType t) { return info(t)->c_name; }
const char *elem_type_c_lowest(ElemType t) { return info(t)->c_lowest; }
const char *elem_type_c_highest(ElemType t) { return info(t)->c_highest; }

bool elem_type_from_onnx(int64_t code, ElemType *out) {
  for (int i = 0; i < TY_COUNT; i++)
    if (code != 0 && code == types[i].onnx) {
      *out = (ElemType)i;
      return true;
    }
  return false;
}

int elem_type_onnx(ElemType t) { return info(t)->onnx; }

/* ---- integer values ---- */

/* bits as the int64_t of the same bits, without the implementation-defined
 * conversion of an out-of-range unsigned value */
static int64_t as_int64(uint64_t x) { return x <= (uint64_t)INT64_MAX ? (int64_t)x : -(int64_t)(~x) - 1; }

int64_t elem_int_wrap(ElemType t, uint64_t bits) {
  int n = info(t)->bits;
  if (info(t)->kind == K_BOOL)
    return bits != 0;
  if (n == 64)
    return as_int64(bits);
  uint64_t mask = ((uint64_t)1 << n) - 1;
  bits &= mask;
  if (info(t)->kind == K_SIGNED && bits >> (n - 1))
    return -(int64_t)(mask - bits) - 1;
  return (int64_t)bits;
}

int64_t elem_int_lowest(ElemType t) {
  if (info(t)->kind != K_SIGNED)
    return 0;
  return elem_int_wrap(t, (uint64_t)1 << (info(t)->bits - 1));
}

int64_t elem_int_highest(ElemType t) {
  switch (info(t)->kind) {
  case K_BOOL:
    return 1;
  case K_SIGNED:
    return elem_int_wrap(t, ((uint64_t)1 << (info(t)->bits - 1)) - 1);
  default:
    return elem_int_wrap(t, UINT64_MAX);
  }
}

bool elem_int_less(ElemType t, int64_t a, int64_t b) {
  if (info(t)->kind == K_UNSIGNED)
    return (uint64_t)a < (uint64_t)b;
  return a < b;
}

double elem_int_to_double(ElemType t, int64_t v) {
  return info(t)->kind == K_UNSIGNED ? (double)(uint64_t)v : (double)v;
}

int64_t elem_int_saturate(ElemType t, double v) {
  if (info(t)->kind == K_BOOL)
    return v != 0 && v == v;
  if (!(v == v))
    return 0;
  if (info(t)->kind == K_UNSIGNED) {
    double top = 18446744073709551616.0; /* 2^64 */
    if (info(t)->bits < 64)
      top = (double)((uint64_t)1 << info(t)->bits);
    if (v <= 0)
      return 0;
    if (v >= top)
      return elem_int_highest(t);
    return as_int64((uint64_t)v);
  }
  int64_t x = int64_of_double(v);
  int64_t lo = elem_int_lowest(t), hi = elem_int_highest(t);
  return x < lo ? lo : x > hi ? hi : x;
}

/* ---- scalar ops ---- */

#define X(e, s, n, c, r, u) {s, n, SOC_##c, SOR_##r, SOP_##u},
static const ScalarOpInfo scalar_ops[] = {
#include "ir/scalar_ops.def"
};
#undef X

const ScalarOpInfo *scalar_op_info(ScalarOp op) { return &scalar_ops[op]; }

bool scalar_op_is_libm(ScalarOp op) { return op >= SOP_SIN && op <= SOP_REMF; }

bool scalar_op_lookup(const char *spelling, ScalarOp *out) {
  for (int i = 0; i < SOP_COUNT; i++)
    if (strcmp(spelling, scalar_ops[i].spelling) == 0) {
      *out = (ScalarOp)i;
      return true;
    }
  return false;
}

/* sig >> shift (1 <= shift <= 53), rounded to nearest, ties to even. */
static uint64_t shift_round_even(uint64_t sig, int shift) {
  uint64_t q = sig >> shift, rem = sig & (((uint64_t)1 << shift) - 1), half = (uint64_t)1 << (shift - 1);
  if (rem > half || (rem == half && (q & 1)))
    q++;
  return q;
}

/* IEEE binary16 bits of x, rounded once from the double (so a value
 * computed in double reaches f16 with a single rounding, as the brief asks,
 * rather than through f32). The one conversion of the front-ends and the
 * folder (each had its own: onnx_json.c's went through float, so rounded
 * twice). */
uint16_t elem_f16_bits(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  uint16_t sign = (uint16_t)((b >> 48) & 0x8000);
  int exp = (int)((b >> 52) & 0x7ff);
  uint64_t mant = b & (((uint64_t)1 << 52) - 1);
  if (exp == 0x7ff)
    return (uint16_t)(sign | (mant ? 0x7e00 : 0x7c00));
  if (exp == 0) /* a double subnormal is far below half's smallest step */
    return sign;
  int e = exp - 1023;
  uint64_t sig = mant | (uint64_t)1 << 52, h;
  if (e > 15)
    return (uint16_t)(sign | 0x7c00);
  if (e < -14) {
    /* subnormal: a count of 2^-24 steps; 1024 steps is the smallest normal,
     * whose bits are exactly 0x400, so rounding up into it needs no care */
    int shift = 28 - e;
    if (shift > 53)
      return sign;
    h = shift_round_even(sig, shift);
  } else {
    /* 11 significant bits; a carry to 2048 bumps the exponent field */
    h = shift_round_even(sig, 42) + ((uint64_t)(e + 14) << 10);
  }
  if (h >= 0x7c00)
    h = 0x7c00;
  return (uint16_t)(sign | h);
}
