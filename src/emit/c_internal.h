/* c_internal.h - what the C writer's files share: the Emitter (one per
 * output file) and the helpers that spell IR pieces in C. */
#ifndef LGEN_C_INTERNAL_H
#define LGEN_C_INTERNAL_H

#include "emit/c_emit.h"
#include "schedule/schedule.h"

typedef struct {
  StrBuf *out;
  int indent;
  const Kernel *k;
  KernelNames kn;
  const EmitOptions *opt;
  Arena *arena;
  StrBuf *helpers;
  PtrVec *helper_names;
  bool needs_math;
  bool needs_fma;
  bool widens_f16, narrows_f16;
  bool uses_cblas;
  bool helpers_used[32]; /* runtime_helpers[] entries this file calls */
  /* model graphs */
  StrBuf *constants;     /* file-scope arrays (or extern declarations) of their constants */
  bool has_graphs;       /* G mallocs the workspace: <stdlib.h> */
  bool uses_align64;     /* LGEN_ALIGN64 on constant arrays */
  /* the op being emitted */
  const StructuredOp *op;
  const char **dim_names; /* C expression of each dim's current value */
  const Schedule *sched;
} Emitter;

/* One line of C at the current indentation. */
void line(Emitter *e, const char *fmt, ...) LG_PRINTF(2, 3);

const char *c_dim(void *ctx, int i);
void c_affine(Emitter *e, StrBuf *out, const AffineExpr *x);
const char *affine_str(Emitter *e, const AffineExpr *x);
/* T[...]: the element of operand o at the current dim values, row-major. */
const char *access_str(Emitter *e, const Operand *o);
/* Marks a runtime_helpers[] entry (and what it needs) as used by the file. */
void use_helper(bool *used, const char *name);

/* c_checks.c */
void emit_checks(Emitter *e);

/* c_loops.c */
void emit_op(Emitter *e, const StructuredOp *op, int index);

#endif
