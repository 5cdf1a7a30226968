/* poly.c - arithmetic on Poly; see poly.h. */
#include "analysis/poly.h"

#include <string.h>

uint32_t poly_var(PolyVarKind kind, int index, int elem) {
  return ((uint32_t)kind << 28) | ((uint32_t)index << 16) | (uint32_t)elem;
}
PolyVarKind poly_var_kind(uint32_t var) { return (PolyVarKind)(var >> 28); }
int poly_var_index(uint32_t var) { return (int)((var >> 16) & 0xfff); }
int poly_var_elem(uint32_t var) { return (int)(var & 0xffff); }

static Poly *poly_new(Arena *a, int cap) {
  Poly *p = arena_alloc(a, sizeof *p);
  p->terms = arena_alloc(a, sizeof(Term) * (size_t)(cap ? cap : 1));
  return p;
}

static int term_cmp(const Term *x, const Term *y) {
  if (x->degree != y->degree)
    return x->degree < y->degree ? -1 : 1;
  for (int i = 0; i < x->degree; i++)
    if (x->vars[i] != y->vars[i])
      return x->vars[i] < y->vars[i] ? -1 : 1;
  return 0;
}

/* Adds term t (scaled) into p, combining like terms. Fails on overflow. */
static bool accumulate(Poly *p, const Term *t) {
  for (int i = 0; i < p->nterms; i++)
    if (term_cmp(&p->terms[i], t) == 0)
      return !__builtin_add_overflow(p->terms[i].coef, t->coef, &p->terms[i].coef);
  p->terms[p->nterms++] = *t;
  return true;
}

static Poly *normalize(Poly *p) {
  int n = 0;
  for (int i = 0; i < p->nterms; i++)
    if (p->terms[i].coef != 0)
      p->terms[n++] = p->terms[i];
  p->nterms = n;
  /* insertion sort: deterministic printing */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && term_cmp(&p->terms[j - 1], &p->terms[j]) > 0; j--) {
      Term tmp = p->terms[j];
      p->terms[j] = p->terms[j - 1];
      p->terms[j - 1] = tmp;
    }
  return p;
}

Poly *poly_const(Arena *a, int64_t c) {
  Poly *p = poly_new(a, 1);
  p->terms[0] = (Term){.coef = c};
  p->nterms = 1;
  return normalize(p);
}

Poly *poly_of_var(Arena *a, uint32_t var) {
  Poly *p = poly_new(a, 1);
  p->terms[0] = (Term){.coef = 1, .degree = 1, .vars = {var}};
  p->nterms = 1;
  return p;
}

Poly *poly_add(Arena *a, const Poly *x, const Poly *y, int64_t y_scale) {
  if (!x || !y)
    return NULL;
  Poly *p = poly_new(a, x->nterms + y->nterms);
  for (int i = 0; i < x->nterms; i++)
    if (!accumulate(p, &x->terms[i]))
      return NULL;
  for (int i = 0; i < y->nterms; i++) {
    Term t = y->terms[i];
    if (__builtin_mul_overflow(t.coef, y_scale, &t.coef) || !accumulate(p, &t))
      return NULL;
  }
  return normalize(p);
}

Poly *poly_mul(Arena *a, const Poly *x, const Poly *y) {
  if (!x || !y)
    return NULL;
  Poly *p = poly_new(a, x->nterms * y->nterms);
  for (int i = 0; i < x->nterms; i++)
    for (int j = 0; j < y->nterms; j++) {
      const Term *u = &x->terms[i], *v = &y->terms[j];
      if (u->degree + v->degree > POLY_MAX_DEGREE)
        return NULL;
      Term t = {.degree = u->degree + v->degree};
      if (__builtin_mul_overflow(u->coef, v->coef, &t.coef))
        return NULL;
      /* merge two sorted variable lists */
      int k = 0, m = 0, n = 0;
      while (m < u->degree || n < v->degree)
        t.vars[k++] = (n == v->degree || (m < u->degree && u->vars[m] <= v->vars[n])) ? u->vars[m++] : v->vars[n++];
      if (!accumulate(p, &t))
        return NULL;
    }
  return normalize(p);
}

Poly *poly_from_affine(Arena *a, const AffineExpr *e) {
  switch (e->kind) {
  case AE_CONST:
    return poly_const(a, e->value);
  case AE_DIM:
    return poly_of_var(a, poly_var(PV_DIM, e->index, 0));
  case AE_SIZE:
    return poly_of_var(a, poly_var(PV_SIZE, e->index, 0));
  case AE_ATTR:
    if (e->elem > 0xffff)
      return NULL;
    return poly_of_var(a, poly_var(PV_ATTR, e->index, e->elem));
  case AE_NEG:
    return poly_add(a, poly_const(a, 0), poly_from_affine(a, e->lhs), -1);
  case AE_ADD:
    return poly_add(a, poly_from_affine(a, e->lhs), poly_from_affine(a, e->rhs), 1);
  case AE_SUB:
    return poly_add(a, poly_from_affine(a, e->lhs), poly_from_affine(a, e->rhs), -1);
  case AE_MUL:
    return poly_mul(a, poly_from_affine(a, e->lhs), poly_from_affine(a, e->rhs));
  default:
    return NULL;
  }
}

Poly *poly_subst(Arena *a, const Poly *p, uint32_t var, const Poly *value) {
  if (!p || !value)
    return NULL;
  Poly *out = poly_const(a, 0);
  for (int i = 0; i < p->nterms; i++) {
    Term rest = {.coef = p->terms[i].coef};
    int power = 0;
    for (int j = 0; j < p->terms[i].degree; j++) {
      if (p->terms[i].vars[j] == var)
        power++;
      else
        rest.vars[rest.degree++] = p->terms[i].vars[j];
    }
    Poly *term = poly_new(a, 1);
    term->terms[0] = rest;
    term->nterms = 1;
    for (int k = 0; k < power; k++)
      term = poly_mul(a, term, value);
    out = poly_add(a, out, term, 1);
    if (!out)
      return NULL;
  }
  return out;
}

Poly *poly_coefficient(Arena *a, const Poly *p, uint32_t var) {
  if (!p)
    return NULL;
  Poly *out = poly_new(a, p->nterms);
  for (int i = 0; i < p->nterms; i++) {
    const Term *t = &p->terms[i];
    Term rest = {.coef = t->coef};
    bool has = false;
    for (int j = 0; j < t->degree; j++) {
      if (t->vars[j] == var && !has)
        has = true;
      else
        rest.vars[rest.degree++] = t->vars[j];
    }
    if (has && !accumulate(out, &rest))
      return NULL;
  }
  return normalize(out);
}

bool poly_is_zero(const Poly *p) { return p && p->nterms == 0; }

bool poly_uses(const Poly *p, uint32_t var) {
  for (int i = 0; i < p->nterms; i++)
    for (int j = 0; j < p->terms[i].degree; j++)
      if (p->terms[i].vars[j] == var)
        return true;
  return false;
}

void poly_print(StrBuf *out, const Poly *p, const char *(*name)(void *ctx, uint32_t var), void *ctx) {
  if (p->nterms == 0) {
    sb_putc(out, '0');
    return;
  }
  /* a positive constant reads best first ("1 - KW"), a negative one last ("W - KW - 1") */
  bool first = true;
  bool const_first = p->terms[0].degree == 0 && p->terms[0].coef > 0;
  for (int pass = 0; pass < 3; pass++)
    for (int i = 0; i < p->nterms; i++) {
      const Term *t = &p->terms[i];
      int want = t->degree != 0 ? 1 : const_first ? 0 : 2;
      if (want != pass)
        continue;
      int64_t c = t->coef;
      if (first)
        sb_puts(out, c < 0 ? "-" : "");
      else
        sb_puts(out, c < 0 ? " - " : " + ");
      uint64_t mag = c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c;
      if (mag != 1 || t->degree == 0)
        sb_printf(out, "%llu%s", (unsigned long long)mag, t->degree ? "*" : "");
      for (int j = 0; j < t->degree; j++)
        sb_printf(out, "%s%s", j ? "*" : "", name(ctx, t->vars[j]));
      first = false;
    }
}
