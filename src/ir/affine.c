/* affine.c - affine index expressions: construction, queries, printing. */
#include "ir/ir.h"

AffineExpr *affine_const(Arena *a, int64_t v) {
  AffineExpr *e = arena_alloc(a, sizeof *e);
  e->kind = AE_CONST;
  e->value = v;
  return e;
}

AffineExpr *affine_leaf(Arena *a, AffineKind kind, int index, int elem) {
  AffineExpr *e = arena_alloc(a, sizeof *e);
  e->kind = kind;
  e->index = index;
  e->elem = elem;
  return e;
}

AffineExpr *affine_binary(Arena *a, AffineKind kind, AffineExpr *lhs, AffineExpr *rhs) {
  AffineExpr *e = arena_alloc(a, sizeof *e);
  e->kind = kind;
  e->lhs = lhs;
  e->rhs = rhs;
  return e;
}

AffineExpr *affine_subst_dims(Arena *a, const AffineExpr *e, AffineExpr *const *dim_values) {
  if (e->kind == AE_DIM)
    return dim_values[e->index];
  if (!affine_has_dims(e))
    return (AffineExpr *)e; /* expressions are never edited in place: sharing is safe */
  AffineExpr *c = arena_alloc(a, sizeof *c);
  *c = *e;
  c->lhs = e->lhs ? affine_subst_dims(a, e->lhs, dim_values) : NULL;
  c->rhs = e->rhs ? affine_subst_dims(a, e->rhs, dim_values) : NULL;
  return c;
}

bool affine_uses_dim(const AffineExpr *e, int dim) {
  if (!e)
    return false;
  if (e->kind == AE_DIM)
    return e->index == dim;
  return affine_uses_dim(e->lhs, dim) || affine_uses_dim(e->rhs, dim);
}

int affine_max_dim(const AffineExpr *e) {
  if (!e)
    return -1;
  if (e->kind == AE_DIM)
    return e->index;
  int l = affine_max_dim(e->lhs), r = affine_max_dim(e->rhs);
  return l > r ? l : r;
}

bool affine_has_dims(const AffineExpr *e) { return affine_max_dim(e) >= 0; }

bool affine_is_dim(const AffineExpr *e, int dim) { return e->kind == AE_DIM && e->index == dim; }

bool affine_equal(const AffineExpr *a, const AffineExpr *b) {
  if (!a || !b)
    return a == b;
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case AE_CONST:
    return a->value == b->value;
  case AE_DIM:
  case AE_SIZE:
    return a->index == b->index;
  case AE_ATTR:
    return a->index == b->index && a->elem == b->elem;
  default:
    return affine_equal(a->lhs, b->lhs) && affine_equal(a->rhs, b->rhs);
  }
}

/* Precedence: 1 for + -, 2 for * floordiv ceildiv mod, 3 for unary minus and leaves. */
static int precedence(const AffineExpr *e) {
  switch (e->kind) {
  case AE_ADD:
  case AE_SUB:
    return 1;
  case AE_MUL:
  case AE_FLOORDIV:
  case AE_CEILDIV:
  case AE_MOD:
    return 2;
  case AE_CONST:
    return e->value < 0 ? 1 : 3;
  default:
    return 3;
  }
}

static void print_operand(StrBuf *out, const AffineExpr *e, const AffineNames *n, int min_prec) {
  bool paren = precedence(e) < min_prec;
  if (paren)
    sb_putc(out, '(');
  affine_print(out, e, n);
  if (paren)
    sb_putc(out, ')');
}

void affine_print(StrBuf *out, const AffineExpr *e, const AffineNames *n) {
  static const char *const div_words[] = {"floordiv", "ceildiv", "mod"};
  static const char *const div_calls[] = {"lgen_floordiv", "lgen_ceildiv", "lgen_mod"};
  switch (e->kind) {
  case AE_CONST:
    sb_printf(out, "%lld", (long long)e->value);
    return;
  case AE_DIM:
    sb_puts(out, n->dim(n->ctx, e->index));
    return;
  case AE_SIZE:
    sb_puts(out, n->size(n->ctx, e->index));
    return;
  case AE_ATTR:
    sb_puts(out, n->attr(n->ctx, e->index, e->elem));
    return;
  case AE_NEG:
    /* "- -i" must not print as "--i", which C reads as a decrement */
    sb_putc(out, '-');
    print_operand(out, e->lhs, n, e->lhs->kind == AE_NEG || (e->lhs->kind == AE_CONST && e->lhs->value < 0) ? 4 : 3);
    return;
  case AE_ADD:
  case AE_SUB:
    print_operand(out, e->lhs, n, 1);
    sb_puts(out, e->kind == AE_ADD ? " + " : " - ");
    print_operand(out, e->rhs, n, 2);
    return;
  case AE_MUL:
    print_operand(out, e->lhs, n, 2);
    sb_puts(out, " * ");
    print_operand(out, e->rhs, n, 3);
    return;
  case AE_FLOORDIV:
  case AE_CEILDIV:
  case AE_MOD: {
    int k = e->kind - AE_FLOORDIV;
    if (n->c_syntax) {
      sb_printf(out, "%s(", div_calls[k]);
      affine_print(out, e->lhs, n);
      sb_puts(out, ", ");
      affine_print(out, e->rhs, n);
      sb_putc(out, ')');
    } else {
      print_operand(out, e->lhs, n, 2);
      sb_printf(out, " %s ", div_words[k]);
      print_operand(out, e->rhs, n, 3);
    }
    return;
  }
  }
}
