/* schedule.c - the plain schedule, legality checks, and YAML printing. */
#include "schedule/schedule.h"

#include <string.h>

#include "analysis/analysis.h"

/* Parallel dims outside in domain order, reductions inside: the order the
 * loops have always had, so `none` is the unscheduled reference. */
void schedule_none(const StructuredOp *op, Schedule *s) {
  memset(s, 0, sizeof *s);
  s->vector_dim = -1;
  int n = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int d = 0; d < op->ndims; d++)
      if ((op->dims[d].kind == ITER_PARALLEL) == (pass == 0))
        s->order[n++] = d;
  if (op->ndims > 0) {
    if (op->dims[s->order[0]].kind == ITER_PARALLEL)
      s->parallel[s->order[0]] = true;
    s->vector_dim = s->order[op->ndims - 1];
  }
}

bool float_sum_or_product(const StructuredOp *op) {
  int x;
  if (op->nyields != 1)
    return false;
  ElemType t = op->nodes[op->yields[0].value].type;
  Combiner c = match_reduction(op, 0, &x);
  return (c == COMBINE_ADD || c == COMBINE_MUL) && elem_type_is_float(t) && t != TY_F16;
}

static int operands_of(const StructuredOp *op, int tensor) {
  int n = 0;
  for (int o = 0; o < op->noperands; o++)
    n += op->operands[o].tensor == tensor;
  return n;
}

bool op_reads_only(const Kernel *k, const StructuredOp *op, int t) {
  const TensorParam *p = &k->tensors[t];
  if (!p->is_output)
    return true;
  if (p->storage == TS_PARAM) /* a def's output, even where a later comprehension only reads it */
    return false;
  for (int y = 0; y < op->nyields; y++)
    if (op->operands[op->yields[y].operand].tensor == t)
      return false;
  return true;
}

/* The operand of tensor t, if it is read through bare dims only. */
const Operand *packable_operand(const Kernel *k, const StructuredOp *op, int t) {
  if (operands_of(op, t) != 1)
    return NULL;
  for (int o = 0; o < op->noperands; o++) {
    const Operand *operand = &op->operands[o];
    if (operand->tensor != t)
      continue;
    /* a guarded read gives its pad value outside the tensor, which a packed copy cannot */
    if (operand->shape_only || operand->guarded || !op_reads_only(k, op, t) || k->tensors[t].rank == 0)
      return NULL;
    for (int i = 0; i < k->tensors[t].rank; i++)
      if (operand->map[i]->kind != AE_DIM)
        return NULL;
    return operand;
  }
  return NULL;
}

void schedule_verify(const Kernel *k, const StructuredOp *op, const Schedule *s, Loc where, Diag *diag) {
  bool seen[LG_MAX_DIMS] = {false};
  for (int i = 0; i < op->ndims; i++) {
    int d = s->order[i];
    if (d < 0 || d >= op->ndims || seen[d])
      diag_error(diag, where, "the loop order of '%s' must name each of its %d dims once", k->name, op->ndims);
    seen[d] = true;
  }
  int unrolled = 0;
  int64_t block = 1;
  for (int d = 0; d < op->ndims; d++) {
    const Dim *dim = &op->dims[d];
    for (int l = 0; l < s->nlevels; l++) {
      if (s->tile[l][d] < 0)
        diag_error(diag, where, "tile size of '%s' must be positive", dim->name);
      for (int m = l + 1; m < s->nlevels; m++)
        if (s->tile[l][d] && s->tile[m][d] && s->tile[m][d] > s->tile[l][d])
          diag_error(diag, where, "tile sizes of '%s' must not grow from one level to the next", dim->name);
    }
    if (s->unroll[d] < 0 || s->unroll[d] > 64)
      diag_error(diag, where, "unroll factor of '%s' in '%s' must be between 1 and 64, not %lld", dim->name, k->name,
                 (long long)s->unroll[d]);
    if (s->unroll[d] > 1) {
      if (dim->kind != ITER_PARALLEL)
        diag_error(diag, where, "'%s' is a reduction: only parallel dims can be unrolled and jammed", dim->name);
      unrolled++;
      block *= s->unroll[d];
      for (int l = 0; l < s->nlevels; l++)
        if (s->tile[l][d] && s->tile[l][d] % s->unroll[d] != 0)
          diag_error(diag, where, "tile sizes of '%s' must be multiples of its unroll factor %lld", dim->name,
                     (long long)s->unroll[d]);
    }
    if (s->parallel_reg[d] && (s->unroll[d] <= 1 || dim->kind != ITER_PARALLEL))
      diag_error(diag, where, "'%s.reg' names a register-tile loop: '%s' must be a parallel dim with an unroll factor",
                 dim->name, dim->name);
    if (s->parallel[d] && dim->kind == ITER_REDUCTION) {
      int x;
      if (!s->split_reduction)
        diag_error(diag, where,
                   "'%s' is a reduction: parallelising it needs 'split_reduction: true' (per-thread partials)",
                   dim->name);
      ElemType t = op->nodes[op->yields[0].value].type;
      if (match_reduction(op, 0, &x) == COMBINE_NONE || !elem_type_is_float(t) || t == TY_F16)
        diag_error(diag, where,
                   "'%s' cannot be split: the payload is not an f32/f64 sum, product, max or min "
                   "(integer partials would be combined with overflowing signed arithmetic)",
                   dim->name);
    }
  }
  if (unrolled > 3 || block > 1024)
    diag_error(diag, where, "the register block is too large (at most 3 dims and 1024 elements)");
  if (s->split_reduction && unrolled)
    diag_error(diag, where, "split_reduction cannot be combined with unroll");
  /* A split loop carries the per-thread partials of the accumulator: every
   * loop around it must be a loop of a parallel dim outside all tiles, and it
   * must come after them. */
  for (int d = 0; d < op->ndims; d++) {
    if (!s->parallel[d] || op->dims[d].kind != ITER_REDUCTION)
      continue;
    for (int i = 0; i < op->ndims; i++) {
      int p = s->order[i];
      if (op->dims[p].kind != ITER_PARALLEL)
        continue;
      bool p_tiled = false;
      for (int l = 0; l < s->nlevels; l++)
        p_tiled |= s->tile[l][p] > 0;
      if (p_tiled)
        diag_error(diag, where, "a split reduction ('%s') needs the parallel dims untiled ('%s' is tiled)",
                   op->dims[d].name, op->dims[p].name);
    }
    bool d_tiled = s->nlevels > 0 && s->tile[0][d] > 0;
    for (int i = 0, seen = 0; d_tiled && i < op->ndims; i++) {
      if (s->order[i] == d)
        seen = 1;
      else if (seen && op->dims[s->order[i]].kind == ITER_PARALLEL)
        diag_error(diag, where, "a split reduction ('%s') must come after the parallel dims in the order",
                   op->dims[d].name);
    }
  }
  if (s->library_call) {
    GemmShape g;
    bool blas = strcmp(s->library_call, "cblas_sgemm") == 0 || strcmp(s->library_call, "cblas_dgemm") == 0;
    if (!blas)
      diag_error(diag, where, "unknown library call '%s' (lgen knows cblas_sgemm and cblas_dgemm)", s->library_call);
    if (!match_gemm(k, op, &g) || (g.type == TY_F32) != (strcmp(s->library_call, "cblas_sgemm") == 0))
      diag_error(diag, where, "%s computes C[m][n] += A * B on %s matrices; this op is not of that form",
                 s->library_call, strcmp(s->library_call, "cblas_sgemm") == 0 ? "f32" : "f64");
  }
  if (s->vector_dim >= op->ndims)
    diag_error(diag, where, "the vector dim %d of '%s' is not one of its %d dims", s->vector_dim, k->name, op->ndims);
  if (s->partials < 0 || s->partials > 1024)
    diag_error(diag, where, "partials must be between 1 and 1024");
  if (s->partials > 1) {
    if (s->vector_dim < 0 || op->dims[s->vector_dim].kind != ITER_REDUCTION)
      diag_error(diag, where, "partials needs a reduction dim as the vector dim");
    if (!float_sum_or_product(op))
      diag_error(diag, where, "partials needs a payload that is an f32/f64 sum or product");
    if (unrolled || s->split_reduction)
      diag_error(diag, where, "partials cannot be combined with unroll or split_reduction");
  }
  for (int t = 0; t < k->ntensors && t < LG_MAX_TENSORS; t++)
    if (s->pack[t] && !packable_operand(k, op, t))
      diag_error(diag, where,
                 "'%s' cannot be packed: only inputs read once, through indices that are plain dims, can be",
                 k->tensors[t].name);
}

/* ---- YAML output, in the form schedule files are read ---- */

static void name_list(StrBuf *out, const StructuredOp *op, const int *dims, int n) {
  sb_putc(out, '[');
  for (int i = 0; i < n; i++)
    sb_printf(out, "%s%s", i ? ", " : "", op->dims[dims[i]].name);
  sb_putc(out, ']');
}

/* fold: [b] and collapse: [[m, n]], in the original op's dim names */
static void print_reshape(StrBuf *out, const StructuredOp *op, const Reshape *r, const char *indent) {
  int dims[LG_MAX_DIMS], n = 0;
  for (int d = 0; d < op->ndims; d++)
    if (r->fold[d])
      dims[n++] = d;
  if (n) {
    sb_printf(out, "%sfold: ", indent);
    name_list(out, op, dims, n);
    sb_putc(out, '\n');
  }
  bool any = false;
  for (int d = 0; d < op->ndims; d++) {
    if (r->next[d] < 0 || reshape_head(r, op->ndims, d) != d)
      continue;
    n = 0;
    for (int x = d; x >= 0; x = r->next[x])
      dims[n++] = x;
    sb_printf(out, any ? ", " : "%scollapse: [", indent);
    name_list(out, op, dims, n);
    any = true;
  }
  if (any)
    sb_puts(out, "]\n");
}

void schedule_yaml_name(StrBuf *out, const char *name) {
  bool plain = name[0] && name[0] != '-';
  for (const char *p = name; *p && plain; p++)
    plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
            *p == '.' || *p == '-' || *p == '/';
  if (plain) {
    sb_puts(out, name);
    return;
  }
  sb_putc(out, '"');
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    if (*p == '"' || *p == '\\')
      sb_printf(out, "\\%c", *p);
    else if (*p < 0x20 || *p >= 0x7f)
      sb_printf(out, "\\x%02x", *p);
    else
      sb_putc(out, (char)*p);
  sb_putc(out, '"');
}

void schedule_print_yaml(StrBuf *out, const Kernel *k, int op_index, const StructuredOp *original,
                         const OpPlan *plan) {
  const char *indent = "    ";
  if (op_index == 0) {
    schedule_yaml_name(out, k->name);
    sb_puts(out, ":\n");
  }
  sb_printf(out, "  - op: %d\n", op_index);
  if (plan->outline)
    sb_printf(out, "%s%s: %s\n", indent, plan->libcall ? "libcall" : "outline", plan->outline);
  print_reshape(out, original, &plan->reshape, indent);
  const StructuredOp *op = plan->view.op;
  const Schedule *s = &plan->s;
  k = plan->view.k;
  if (s->library_call) {
    sb_printf(out, "%slibrary_call: %s\n", indent, s->library_call);
    return;
  }
  bool any_tile = false;
  for (int d = 0; d < op->ndims; d++)
    for (int l = 0; l < s->nlevels; l++)
      any_tile |= s->tile[l][d] > 0;
  if (any_tile) {
    sb_printf(out, "%stile: {", indent);
    bool first = true;
    for (int i = 0; i < op->ndims; i++) {
      int d = s->order[i];
      bool has = false;
      for (int l = 0; l < s->nlevels; l++)
        has |= s->tile[l][d] > 0;
      if (!has)
        continue;
      sb_printf(out, "%s%s: [", first ? "" : ", ", op->dims[d].name);
      first = false;
      bool first_level = true;
      for (int l = 0; l < s->nlevels; l++)
        if (s->tile[l][d] > 0) {
          sb_printf(out, "%s%lld", first_level ? "" : ", ", (long long)s->tile[l][d]);
          first_level = false;
        }
      sb_putc(out, ']');
    }
    sb_puts(out, "}\n");
  }
  sb_printf(out, "%sorder: ", indent);
  name_list(out, op, s->order, op->ndims);
  sb_putc(out, '\n');
  int dims[LG_MAX_DIMS], n = 0;
  for (int i = 0; i < op->ndims; i++)
    if (s->unroll[s->order[i]] > 1)
      dims[n++] = s->order[i];
  if (n) {
    sb_printf(out, "%sunroll: {", indent);
    for (int i = 0; i < n; i++)
      sb_printf(out, "%s%s: %lld", i ? ", " : "", op->dims[dims[i]].name, (long long)s->unroll[dims[i]]);
    sb_puts(out, "}\n");
  }
  sb_printf(out, "%sparallel: [", indent);
  bool first_par = true;
  for (int i = 0; i < op->ndims; i++) {
    int d = s->order[i];
    if (s->parallel[d] || s->parallel_reg[d]) {
      sb_printf(out, "%s%s%s", first_par ? "" : ", ", op->dims[d].name, s->parallel_reg[d] ? ".reg" : "");
      first_par = false;
    }
  }
  sb_puts(out, "]\n");
  if (s->split_reduction)
    sb_printf(out, "%ssplit_reduction: true\n", indent);
  if (s->vector_dim >= 0)
    sb_printf(out, "%svector: %s\n", indent, op->dims[s->vector_dim].name);
  else if (op->ndims > 0)
    sb_printf(out, "%svector: none\n", indent);
  if (s->partials > 1)
    sb_printf(out, "%spartials: %lld\n", indent, (long long)s->partials);
  bool any_pack = false;
  for (int t = 0; t < k->ntensors && t < LG_MAX_TENSORS; t++)
    if (s->pack[t]) {
      if (any_pack)
        sb_puts(out, ", ");
      else
        sb_printf(out, "%spack: [", indent);
      schedule_yaml_name(out, k->tensors[t].name);
      any_pack = true;
    }
  if (any_pack)
    sb_puts(out, "]\n");
}
