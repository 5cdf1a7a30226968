/* poly.h - small multivariate integer polynomials, for proving index bounds.
 * Variables are dims, size symbols and attribute elements (see poly_var).
 * Every operation can fail (degree too high, coefficient overflow); a failed
 * result is NULL and callers treat it as "cannot prove". */
#ifndef LGEN_POLY_H
#define LGEN_POLY_H

#include "ir/ir.h"

enum { POLY_MAX_DEGREE = 4 };

typedef enum { PV_DIM = 1, PV_SIZE = 2, PV_ATTR = 3 } PolyVarKind;

typedef struct {
  int64_t coef;
  int degree;
  uint32_t vars[POLY_MAX_DEGREE]; /* sorted */
} Term;

typedef struct {
  int nterms;
  Term *terms;
} Poly;

uint32_t poly_var(PolyVarKind kind, int index, int elem);
PolyVarKind poly_var_kind(uint32_t var);
int poly_var_index(uint32_t var);
int poly_var_elem(uint32_t var);

Poly *poly_const(Arena *a, int64_t c);
Poly *poly_of_var(Arena *a, uint32_t var);
Poly *poly_from_affine(Arena *a, const AffineExpr *e); /* NULL for floordiv/ceildiv/mod */
Poly *poly_add(Arena *a, const Poly *x, const Poly *y, int64_t y_scale);
Poly *poly_mul(Arena *a, const Poly *x, const Poly *y);
Poly *poly_subst(Arena *a, const Poly *p, uint32_t var, const Poly *value);
/* The coefficient of var in p, where p is of degree <= 1 in var. */
Poly *poly_coefficient(Arena *a, const Poly *p, uint32_t var);
bool poly_is_zero(const Poly *p);
bool poly_uses(const Poly *p, uint32_t var);

void poly_print(StrBuf *out, const Poly *p, const char *(*name)(void *ctx, uint32_t var), void *ctx);

#endif
