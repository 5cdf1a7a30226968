/* bounds.c - static proof that an index stays inside its tensor.
 *
 * For index P (a polynomial of degree 1 in the dims) and extent S, the index
 * stays in [0, S) over the whole domain iff min P >= 0 and S - 1 - max P >= 0,
 * where max P sets each dim to 0 or extent-1 by the sign of its coefficient.
 * A polynomial is proven non-negative when, after writing every size symbol
 * that is itself a dim's extent as 1 + t (the domain is non-empty whenever an
 * access happens), all its coefficients are >= 0; other size symbols and
 * attribute values are assumed >= 0. */
#include "analysis/analysis.h"
#include "analysis/poly.h"

typedef struct {
  Arena *arena;
  const Kernel *k;
  const StructuredOp *op;
} BoundsCtx;

static Poly *extent_poly(BoundsCtx *c, int dim) { return poly_from_affine(c->arena, c->op->dims[dim].extent); }

static bool is_extent_symbol(const BoundsCtx *c, int size) {
  for (int d = 0; d < c->op->ndims; d++) {
    const AffineExpr *e = c->op->dims[d].extent;
    if (e->kind == AE_SIZE && e->index == size)
      return true;
  }
  return false;
}

static bool proven_nonneg(BoundsCtx *c, const Poly *p) {
  if (!p)
    return false;
  for (int s = 0; s < c->k->nsizes; s++)
    if (is_extent_symbol(c, s)) {
      uint32_t v = poly_var(PV_SIZE, s, 0);
      p = poly_subst(c->arena, p, v, poly_add(c->arena, poly_const(c->arena, 1), poly_of_var(c->arena, v), 1));
      if (!p)
        return false;
    }
  for (int i = 0; i < p->nterms; i++)
    if (p->terms[i].coef < 0)
      return false;
  return true;
}

/* Substitutes each dim by the end of its range that makes p largest
 * (want_max) or smallest. NULL when a coefficient's sign is unknown. */
static Poly *extreme(BoundsCtx *c, const Poly *p, bool want_max) {
  for (int d = 0; d < c->op->ndims && p; d++) {
    uint32_t v = poly_var(PV_DIM, d, 0);
    if (!poly_uses(p, v))
      continue;
    Poly *coef = poly_coefficient(c->arena, p, v);
    bool up;
    if (proven_nonneg(c, coef))
      up = want_max;
    else if (proven_nonneg(c, poly_add(c->arena, poly_const(c->arena, 0), coef, -1)))
      up = !want_max;
    else
      return NULL;
    Poly *at = up ? poly_add(c->arena, extent_poly(c, d), poly_const(c->arena, 1), -1) : poly_const(c->arena, 0);
    p = poly_subst(c->arena, p, v, at);
  }
  return (Poly *)p;
}

static const char *var_name(void *ctx, uint32_t var) {
  BoundsCtx *c = ctx;
  int i = poly_var_index(var);
  switch (poly_var_kind(var)) {
  case PV_DIM:
    return c->op->dims[i].name;
  case PV_SIZE:
    return c->k->sizes[i].name;
  default:
    if (c->k->attrs[i].ndims == 0 && !c->k->attrs[i].is_array)
      return c->k->attrs[i].name;
    return arena_printf(c->arena, "%s[%d]", c->k->attrs[i].name, poly_var_elem(var));
  }
}

/* A requirement the caller can meet by choosing a size that no dim's extent
 * uses, e.g. an input's IH >= (OH - 1) * stride + (KH - 1) * dilation + 1. */
static bool involves_free_size(BoundsCtx *c, const Poly *q) {
  for (int s = 0; s < c->k->nsizes; s++)
    if (!is_extent_symbol(c, s) && poly_uses(q, poly_var(PV_SIZE, s, 0)))
      return true;
  return false;
}

static const char *explain(BoundsCtx *c, const Poly *q) {
  StrBuf sb = {0};
  sb_puts(&sb, "it needs ");
  poly_print(&sb, q, var_name, c);
  sb_puts(&sb, " >= 0");
  const char *s = arena_strdup(c->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

BoundVerdict check_index_bounds(Arena *arena, const Kernel *k, const StructuredOp *op, int operand, int pos,
                                const char **why) {
  BoundsCtx c = {arena, k, op};
  const Operand *o = &op->operands[operand];
  Poly *p = poly_from_affine(arena, o->map[pos]);
  Poly *extent = poly_from_affine(arena, k->tensors[o->tensor].shape[pos]);
  *why = "lgen cannot analyse floordiv, ceildiv or mod here";
  if (!p || !extent)
    return BOUND_UNKNOWN;
  for (int d = 0; d < op->ndims; d++)
    if (poly_uses(p, poly_var(PV_DIM, d, 0)) && !extent_poly(&c, d))
      return BOUND_UNKNOWN; /* a floordiv, ceildiv or mod in the dim's extent */
  Poly *hi = extreme(&c, p, true), *lo = extreme(&c, p, false);
  *why = "the sign of a dim's coefficient is unknown";
  if (!hi || !lo)
    return BOUND_UNKNOWN;
  Poly *room_above = poly_add(arena, poly_add(arena, extent, poly_const(arena, 1), -1), hi, -1);
  Poly *room_below = lo;
  *why = "the bound overflows";
  if (!room_above)
    return BOUND_UNKNOWN;
  bool above = proven_nonneg(&c, room_above), below = proven_nonneg(&c, room_below);
  if (above && below)
    return BOUND_PROVEN;
  const Poly *failing = above ? room_below : room_above;
  if (involves_free_size(&c, failing))
    return BOUND_CALLER;
  *why = explain(&c, failing);
  /* a negative constant: out of bounds whatever the sizes */
  if (failing->nterms == 1 && failing->terms[0].degree == 0)
    return BOUND_NEVER;
  return BOUND_UNKNOWN;
}
