/* c_access.c - the C spelling of the IR's pieces for the builders: affine
 * expressions and tensor elements in the current dims' names, the
 * statement list being built, and which identifiers a piece of code
 * mentions. Every builder (c_loops.c, c_ext.c, c_checks.c, c_graph.c)
 * stands on it; it calls none of them.
 *
 * Calls: c_runtime.c. */
#include "emit/c_internal.h"

#include <string.h>

LoopNode *put(Emitter *e, LoopNode *n) {
  loops_append(e->cur, n);
  return n;
}

LoopList *build_into(Emitter *e, LoopList *list) {
  LoopList *saved = e->cur;
  e->cur = list;
  return saved;
}


/* ---- affine expressions in C ---- */

/* What affine_print's callbacks spell an expression by. */
typedef struct {
  Emitter *e;
  const OpScope *at;
} AffineCx;

static const char *c_dim(void *ctx, int i) {
  const AffineCx *cx = ctx;
  if (!cx->at)
    diag_bug(cx->e->opt->diag, "an affine expression with dim %d outside an op", i);
  return cx->at->dim_names[i];
}
static const char *c_size(void *ctx, int i) { return ((AffineCx *)ctx)->e->kn.sizes[i]; }
static const char *c_attr(void *ctx, int i, int elem) {
  Emitter *e = ((AffineCx *)ctx)->e;
  const AttrParam *a = &e->k->attrs[i];
  if (a->ndims == 0 && !a->is_array)
    return e->kn.attrs[i];
  return arena_printf(e->arena, "%s[%d]", e->kn.attrs[i], elem);
}


static void note_divisions(Emitter *e, const AffineExpr *x) {
  if (!x)
    return;
  if (x->kind == AE_FLOORDIV)
    use_helper(e->helpers_used, "lgen_floordiv");
  else if (x->kind == AE_CEILDIV)
    use_helper(e->helpers_used, "lgen_ceildiv");
  else if (x->kind == AE_MOD)
    use_helper(e->helpers_used, "lgen_mod");
  note_divisions(e, x->lhs);
  note_divisions(e, x->rhs);
}

static void c_affine(Emitter *e, const OpScope *at, StrBuf *out, const AffineExpr *x) {
  AffineCx cx = {e, at};
  AffineNames names = {c_dim, c_size, c_attr, &cx, true};
  note_divisions(e, x);
  affine_print(out, x, &names);
}

const char *size_list(const Emitter *e, bool types) {
  StrBuf sb = {0};
  for (int i = 0; i < e->k->nsizes; i++)
    sb_printf(&sb, "%s%s%s", i ? ", " : "", types ? "int64_t " : "", e->kn.sizes[i]);
  const char *s = arena_strdup(e->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

const char *affine_str(Emitter *e, const OpScope *at, const AffineExpr *x) {
  StrBuf sb = {0};
  c_affine(e, at, &sb, x);
  const char *s = arena_strdup(e->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

void emitter_view(Emitter *e, const Kernel *k) {
  e->k = k;
  if (!k->view_tensor) {
    e->kn.tensors = e->kn.kernel_tensors;
    return;
  }
  const char **names = arena_alloc(e->arena, sizeof(char *) * (size_t)(k->ntensors + 1));
  for (int t = 0; t < k->ntensors; t++)
    names[t] = e->kn.kernel_tensors[k->view_tensor[t]];
  e->kn.tensors = names;
}

int emitter_kernel_tensor(const Emitter *e, int t) { return e->k->view_tensor ? e->k->view_tensor[t] : t; }

/* T[((i0) * S1 + i1) * S2 + i2]: row-major linearisation in Horner form. */
const char *access_str(Emitter *e, const OpScope *at, const OpPlace *place, const Operand *o) {
  const OpPlace plain = {0};
  if (!place)
    place = &plain;
  const TensorParam *t = &e->k->tensors[o->tensor];
  if (t->rank == 0)
    return arena_printf(e->arena, "%s[0]", e->kn.tensors[o->tensor]);
  if (place->stride_names) { /* --abi=view: T[(i0) * T_s0 + (i1) * T_s1] */
    StrBuf sb = {0};
    for (int i = 0; i < t->rank; i++) {
      if (o->map[i]->kind == AE_CONST && o->map[i]->value == 0)
        continue; /* a constant 0 index adds nothing */
      AffineKind kind = o->map[i]->kind;
      bool leaf = kind == AE_DIM || kind == AE_CONST || kind == AE_SIZE || kind == AE_ATTR;
      const char *stride = place->stride_names[o->tensor][i];
      if (strcmp(stride, "1") == 0) /* a unit innermost stride */
        sb_printf(&sb, leaf ? "%s%s" : "%s(%s)", sb.len ? " + " : "", affine_str(e, at, o->map[i]));
      else
        sb_printf(&sb, leaf ? "%s%s * %s" : "%s(%s) * %s", sb.len ? " + " : "", affine_str(e, at, o->map[i]), stride);
    }
    const char *s = arena_printf(e->arena, "%s[%s]", e->kn.tensors[o->tensor], sb.len ? sb_cstr(&sb) : "0");
    sb_free(&sb);
    return s;
  }
  AffineExpr *lin = o->map[0];
  for (int i = 1; i < t->rank; i++)
    lin = affine_binary(e->arena, AE_ADD, affine_binary(e->arena, AE_MUL, lin, t->shape[i]), o->map[i]);
  return arena_printf(e->arena, "%s[%s]", e->kn.tensors[o->tensor], affine_str(e, at, lin));
}

static int length_bit(size_t n) { return n < 63 ? (int)n : 63; }

void nameset_init(NameSet *set, const char *const *names, int n, Arena *arena) {
  set->map = (StrMap){0};
  set->hit = arena_alloc(arena, sizeof(bool) * (size_t)(n + 1));
  set->lengths = 0;
  for (int i = 0; i < n; i++)
    set->lengths |= (uint64_t)1 << length_bit(strlen(names[i]));
  for (int i = 0; i < n; i++)
    if (!strmap_has(&set->map, names[i]))
      strmap_put(&set->map, arena, names[i], (void *)(intptr_t)(i + 1));
}

/* One pass over the text: the identifiers loops_next_ident reads. */
void nameset_scan(NameSet *set, const char *text) {
  size_t n;
  const char *p = text;
  for (const char *s; (s = loops_next_ident(text, &p, &n));) {
    if (!(set->lengths >> length_bit(n) & 1))
      continue;
    void *v = strmap_get_n(&set->map, s, n);
    if (v)
      set->hit[(intptr_t)v - 1] = true;
  }
}

static void nameset_scan_text(void *set, const char *text) { nameset_scan(set, text); }

void nameset_scan_tree(NameSet *set, const LoopList *list) { loops_each_text(list, nameset_scan_text, set); }

bool nameset_seen(const NameSet *set, const char *name) {
  void *v = strmap_get(&set->map, name);
  return v && set->hit[(intptr_t)v - 1];
}

/* The text of a statement list: what declarations look at to find the
 * identifiers the code uses. */
const char *tree_text(Emitter *e, const LoopList *list) {
  StrBuf sb = {0};
  loops_print_c(&sb, list, 0);
  const char *s = arena_strdup(e->arena, sb_cstr(&sb));
  sb_free(&sb);
  return s;
}

void emit_procs(Emitter *e, StrBuf *out, LoopList *tree, const LoopVar *params, int nparams, const char *prefix) {
  LoopList procs = {0};
  loops_outline(e->arena, tree, params, nparams, prefix, &procs);
  for (LoopNode *p = procs.first, *next; p; p = next) {
    next = p->next;
    LoopList one = {p, p};
    p->next = NULL;
    loops_print_c(out, &one, 0);
    sb_putc(out, '\n');
  }
}
