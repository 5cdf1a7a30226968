/* print.c - the stable text form of the IR (--emit=ir), diffed by golden tests. */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const Kernel *k;
  const StructuredOp *op;
  StrBuf scratch;
  StrBuf shown[3];
  int next;
  bool raw; /* names as they are: a one-line signature, escaped whole by its callers */
} Names;

/* A name from the model or spec as printable ASCII (\xNN for the other
 * bytes), so that no name can forge a line of --dump or --emit=ir: the
 * name itself when it is plain, else an escaped copy that stays valid
 * until three more are shown (no call here prints more than two). */
static const char *shown(Names *n, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (!n->raw && *p >= 0x20 && *p < 0x7f)
    p++;
  if (!*p)
    return s;
  StrBuf *b = &n->shown[n->next++ % 3];
  b->len = 0;
  sb_put_printable(b, s);
  return sb_cstr(b);
}

static void names_free(Names *n) {
  sb_free(&n->scratch);
  for (int i = 0; i < 3; i++)
    sb_free(&n->shown[i]);
}

static const char *dim_name(void *ctx, int i) {
  Names *n = ctx;
  return n->op ? shown(n, n->op->dims[i].name) : "?";
}

static const char *size_name(void *ctx, int i) { return shown(ctx, ((Names *)ctx)->k->sizes[i].name); }

static const char *attr_name(void *ctx, int i, int elem) {
  Names *n = ctx;
  const AttrParam *a = &n->k->attrs[i];
  if (a->ndims == 0 && !a->is_array)
    return shown(n, a->name);
  n->scratch.len = 0;
  sb_printf(&n->scratch, "%s[%d]", shown(n, a->name), elem);
  return sb_cstr(&n->scratch);
}

static void print_affine(StrBuf *out, const AffineExpr *e, Names *n) {
  AffineNames names = {dim_name, size_name, attr_name, n, false};
  affine_print(out, e, &names);
}

/* Parameters are `in` or `out`; a model graph's other tensors say where
 * they live: `const` (embedded), `ws` (the workspace), `alias` (another
 * tensor's memory, named after the shape). */
static void print_tensor(StrBuf *out, const Kernel *k, const TensorParam *t, Names *n) {
  static const char *const storage[] = {"", "const", "ws ", "alias"};
  const char *kind = t->storage == TS_PARAM ? (t->is_output ? "out" : "in ") : storage[t->storage];
  sb_printf(out, "  %s %s: %s[", kind, shown(n, t->name), elem_type_name(t->type));
  for (int i = 0; i < t->rank; i++) {
    if (i)
      sb_puts(out, ", ");
    print_affine(out, t->shape[i], n);
  }
  sb_puts(out, "]");
  if (t->storage == TS_ALIAS)
    sb_printf(out, " of %s", shown(n, k->tensors[t->alias_of].name));
  sb_puts(out, "\n");
}

/* used[t]: some op reads or writes tensor t, directly or through an alias
 * (a heap array of k->ntensors flags). */
static bool *tensors_used(const Kernel *k) {
  bool *used = xmalloc((size_t)k->ntensors + 1);
  memset(used, 0, (size_t)k->ntensors + 1);
  for (int i = 0; i < k->nops; i++)
    for (int o = 0; o < op_all_operands(&k->ops[i]); o++) {
      int u = op_operand_at(&k->ops[i], o)->tensor;
      for (int hops = 0; !used[u] && hops <= k->ntensors; hops++) {
        used[u] = true;
        if (k->tensors[u].storage != TS_ALIAS)
          break;
        u = k->tensors[u].alias_of;
      }
    }
  return used;
}

static void print_operand(StrBuf *out, const Kernel *k, const StructuredOp *op, int o, const char *indent, Names *n) {
  const Operand *operand = &op->operands[o];
  const TensorParam *t = &k->tensors[operand->tensor];
  sb_printf(out, "%soperand $%d = %s[", indent, o, shown(n, t->name));
  for (int i = 0; i < t->rank; i++) {
    if (i)
      sb_puts(out, ", ");
    print_affine(out, operand->map[i], n);
  }
  sb_printf(out, "]%s\n", operand->shape_only ? " shape-only" : "");
}

static void print_pre(StrBuf *out, const Kernel *k, const StructuredOp *op, const Precondition *p, const char *indent,
                      Names *n) {
  const Operand *o = &op->operands[p->operand];
  const TensorParam *t = &k->tensors[o->tensor];
  if (p->kind == PRE_EQUAL) {
    sb_printf(out, "%srequire %s.shape[%d] == ", indent, shown(n, t->name), p->pos);
    print_affine(out, op->dims[p->dim].extent, n);
    sb_printf(out, "  (both give the extent of %s)\n", shown(n, op->dims[p->dim].name));
  } else {
    sb_printf(out, "%srequire 0 <= ", indent);
    print_affine(out, o->map[p->pos], n);
    sb_puts(out, " < ");
    print_affine(out, t->shape[p->pos], n);
    sb_printf(out, "  (%s index %d)\n", shown(n, t->name), p->pos);
  }
}

/* op #i ext KIND (ins) -> (outs) scratch (...) {attrs} */
static void print_ext(StrBuf *out, const Kernel *k, int index, const ExtOp *x, Names *names) {
  sb_printf(out, "  op #%d\n    ext %s (", index, x->kind);
  int n = x->ninputs + x->noutputs + x->nscratch;
  for (int i = 0; i < n; i++) {
    if (i == x->ninputs)
      sb_puts(out, ") -> (");
    else if (i == x->ninputs + x->noutputs)
      sb_puts(out, ") scratch (");
    else if (i)
      sb_puts(out, ", ");
    sb_printf(out, "$%d %s", i, shown(names, k->tensors[x->tensors[i]].name));
  }
  sb_puts(out, ")");
  for (int i = 0; i < x->nattrs; i++) {
    const ExtAttr *a = &x->attrs[i];
    sb_printf(out, "%s%s = ", i ? ", " : " {", shown(names, a->name));
    if (a->kind == 's')
      sb_printf(out, "\"%s\"", shown(names, a->s));
    else if (a->kind == 'l') {
      sb_putc(out, '[');
      for (int j = 0; j < a->n; j++)
        sb_printf(out, "%s%lld", j ? ", " : "", (long long)a->ints[j]);
      sb_putc(out, ']');
    }
    else if (a->kind == 'f')
      sb_printf(out, "%.17g", a->f);
    else
      sb_printf(out, "%lld", (long long)a->i);
  }
  sb_puts(out, x->nattrs ? "}\n" : "\n");
}

/* The domain, operands, payload and yields; `indent` before each line. */
static void print_body(StrBuf *out, const Kernel *k, const StructuredOp *op, const char *indent, Names *n) {
  n->op = op;
  sb_printf(out, "%sdomain (", indent);
  for (int d = 0; d < op->ndims; d++) {
    const Dim *dim = &op->dims[d];
    sb_printf(out, "%s%s: %s < ", d ? ", " : "", shown(n, dim->name),
              dim->kind == ITER_PARALLEL ? "parallel" : "reduction");
    print_affine(out, dim->extent, n);
  }
  sb_puts(out, ")\n");
  for (int o = 0; o < op->noperands; o++)
    print_operand(out, k, op, o, indent, n);
  for (int i = 0; i < op->nnodes; i++) {
    const PayloadNode *p = &op->nodes[i];
    if (p->kind == PN_READ) {
      sb_printf(out, "%s%%%d = read $%d : %s\n", indent, i, p->operand, elem_type_name(p->type));
      continue;
    }
    if (p->kind == PN_CONST) {
      if (elem_type_is_float(p->type))
        sb_printf(out, "%s%%%d = constant %.17g : %s\n", indent, i, p->fvalue, elem_type_name(p->type));
      else
        sb_printf(out, "%s%%%d = constant %lld : %s\n", indent, i, (long long)p->ivalue, elem_type_name(p->type));
      continue;
    }
    if (p->kind == PN_INDEX) {
      sb_printf(out, "%s%%%d = index %s : i64\n", indent, i, shown(n, op->dims[p->dim].name));
      continue;
    }
    if (p->kind == PN_SIZE) {
      sb_printf(out, "%s%%%d = size %s : i64\n", indent, i, shown(n, k->sizes[p->size].name));
      continue;
    }
    sb_printf(out, "%s%%%d = %s", indent, i, scalar_op_info(p->op)->spelling);
    for (int a = 0; a < p->nargs; a++)
      sb_printf(out, "%s %%%d", a ? "," : "", p->args[a]);
    sb_printf(out, " : %s\n", elem_type_name(p->type));
  }
  for (int y = 0; y < op->nyields; y++)
    sb_printf(out, "%syield $%d = %%%d\n", indent, op->yields[y].operand, op->yields[y].value);
  for (int i = 0; i < op->npre; i++)
    print_pre(out, k, op, &op->pre[i], indent, n);
}

static void print_op(StrBuf *out, const Kernel *k, int index, Names *n) {
  const StructuredOp *op = &k->ops[index];
  if (op->ext) {
    print_ext(out, k, index, op->ext, n);
    return;
  }
  sb_printf(out, "  op #%d\n", index);
  print_body(out, k, op, "    ", n);
  const StructuredOp *attached[2] = {op->init, op->epilogue};
  const int *dims[2] = {op->init_dims, op->epilogue_dims};
  static const char *const title[2] = {"init, for the accumulators", "epilogue, at the final store"};
  for (int a = 0; a < 2; a++) {
    if (!attached[a])
      continue;
    sb_printf(out, "    %s (", title[a]);
    for (int d = 0; d < attached[a]->ndims; d++)
      sb_printf(out, "%s%s = %s", d ? ", " : "", shown(n, attached[a]->dims[d].name),
                dims[a][d] < 0 ? "0" : shown(n, op->dims[dims[a][d]].name));
    sb_puts(out, ")\n");
    print_body(out, k, attached[a], "      ", n);
  }
}

void ir_print_kernel(StrBuf *out, const Kernel *k) {
  Names n = {.k = k};
  sb_printf(out, "kernel @%s\n", shown(&n, k->name));
  bool *used = tensors_used(k);
  for (int t = 0; t < k->ntensors; t++)
    if (k->tensors[t].storage == TS_PARAM || used[t]) /* fusion leaves dead intermediates */
      print_tensor(out, k, &k->tensors[t], &n);
  free(used);
  sb_puts(out, "  sizes (");
  for (int s = 0; s < k->nsizes; s++)
    sb_printf(out, "%s%s", s ? ", " : "", shown(&n, k->sizes[s].name));
  sb_puts(out, ")\n");
  for (int a = 0; a < k->nattrs; a++) {
    const AttrParam *p = &k->attrs[a];
    sb_printf(out, "  attr %s%s: %s", shown(&n, p->name), p->optional ? "?" : "", elem_type_name(p->type));
    if (p->is_array)
      sb_puts(out, "[]");
    for (int i = 0; i < p->ndims; i++)
      sb_printf(out, "%s%lld", i ? "x" : "[", (long long)p->dims[i]);
    sb_puts(out, p->ndims ? "]\n" : "\n");
  }
  for (int i = 0; i < k->nops; i++)
    print_op(out, k, i, &n);
  names_free(&n);
}

void ir_print_signature(StrBuf *out, const Kernel *k) {
  Names n = {.k = k, .raw = true};
  sb_printf(out, "%s(", k->name);
  /* the C signature's tensors: parameters (a graph's constants and
   * intermediates are not), inputs before outputs */
  bool first = true, in_outputs = false;
  for (int i = 0; i < k->ntensors; i++) {
    const TensorParam *t = &k->tensors[i];
    if (t->storage != TS_PARAM)
      continue;
    if (t->is_output && !in_outputs)
      sb_puts(out, ") -> (");
    else if (!first)
      sb_puts(out, ", ");
    in_outputs |= t->is_output;
    first = false;
    sb_printf(out, "%s: %s(", t->name, elem_type_name(t->type));
    for (int j = 0; j < t->rank; j++) {
      if (j)
        sb_puts(out, ", ");
      print_affine(out, t->shape[j], &n);
    }
    sb_putc(out, ')');
  }
  sb_putc(out, ')');
  names_free(&n);
}

void ir_print_module(StrBuf *out, const Module *m) {
  for (int i = 0; i < m->kernels.len; i++) {
    if (i)
      sb_putc(out, '\n');
    ir_print_kernel(out, m->kernels.items[i]);
  }
}
