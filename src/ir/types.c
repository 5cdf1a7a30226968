/* types.c - element types and the scalar op table lookups. */
#include "ir/ir.h"

#include <string.h>

static const char *const type_names[] = {"f16", "f32", "f64", "i1", "i8", "i16", "i32", "i64"};

const char *elem_type_name(ElemType t) { return type_names[t]; }

bool elem_type_parse(const char *name, ElemType *out) {
  for (int i = 0; i < (int)(sizeof type_names / sizeof *type_names); i++)
    if (strcmp(name, type_names[i]) == 0) {
      *out = (ElemType)i;
      return true;
    }
  return false;
}

bool elem_type_is_float(ElemType t) { return t == TY_F16 || t == TY_F32 || t == TY_F64; }

int elem_type_bits(ElemType t) {
  static const int bits[] = {16, 32, 64, 1, 8, 16, 32, 64};
  return bits[t];
}

#define X(e, s, n, c, r) {s, n},
static const ScalarOpInfo scalar_ops[] = {
#include "ir/scalar_ops.def"
};
#undef X

const ScalarOpInfo *scalar_op_info(ScalarOp op) { return &scalar_ops[op]; }

bool scalar_op_lookup(const char *spelling, ScalarOp *out) {
  for (int i = 0; i < SOP_COUNT; i++)
    if (strcmp(spelling, scalar_ops[i].spelling) == 0) {
      *out = (ScalarOp)i;
      return true;
    }
  return false;
}
