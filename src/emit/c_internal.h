/* c_internal.h - what the C writer's files share: the Emitter (one per
 * output file) and the helpers that spell IR pieces in C. */
#ifndef LGEN_C_INTERNAL_H
#define LGEN_C_INTERNAL_H

#include "emit/c_emit.h"
#include "schedule/schedule.h"

typedef struct Emitter {
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
  /* packing inside model graphs (c_loops.c): a graph's _run never
   * allocates, so its ops' pack buffers live in the workspace's scratch area
   * and packed constants are laid out at generation time */
  const char *scratch;    /* C pointer to the scratch area; NULL: heap buffers */
  bool prepack_constants; /* packed TS_CONST operands read pre-packed arrays */
  bool weights_file;      /* pre-packed arrays are defined for the --weights file */
  int op_index;           /* the graph op being emitted (names pre-packed arrays) */
  /* A graph's G_run is one OpenMP parallel region (a fork/join per op
   * costs as much as a small op): with graph_region set, an op's parallel
   * loops are orphaned worksharing loops (`omp for`) of that region. emit_op
   * reports what it did: op_worksharing (an `omp for` was emitted; the
   * threads meet at its barrier), op_not_orphanable (a reduction clause,
   * which needs a region of its own: the op runs under `omp single`),
   * region_thread_cap (per-thread scratch slots cap the team). */
  bool graph_region;
  bool op_worksharing;
  bool op_not_orphanable;
  bool region_thread_cap;
  bool epilogue_at_store; /* emit_op applied the op's epilogue in its stores */
  bool init_at_load;      /* ... and its init in its accumulators' first value */
  /* A member of a row-fused group (schedule/rows.c): the group's loops give
   * the values of these dims of the op (NULL entries: its own loops), and
   * the op opens no threads of its own. */
  const char **bound_dims;
  bool in_row_group;
  /* A softmax row-fused with the ops just before and after it
   * (schedule/rows.c): emits the one before (after = false) or after it
   * inside the softmax's loop over chunks of rows (c_ext.c), for rows
   * lgen_u0 .. lgen_u1 - 1 (NULL: none). */
  void (*softmax_rows)(struct Emitter *e, void *ctx, bool after);
  void *softmax_rows_ctx;
  /* ... and its chunk buffers: the group's first op's plan lists them
   * (NULL: none); access_str subtracts lgen_shift from their element
   * indices, taking row lgen_u0 of such a tensor to the start of the
   * running thread's chunk buffer (c_ext.c call_softmax defines it). */
  const OpPlan *chunk_group;
  /* A prologue (schedule/prologue.c): the op's pack of this tensor computes
   * it with this pointwise op's payload (NULL: none). */
  const StructuredOp *prologue;
  int prologue_tensor;
  AffineExpr *const *prologue_shape; /* the tensor's shape in the kernel (the op's view may fold it) */
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

/* c_ext.c: a non-structured op (op->ext) as its template's call */
void emit_ext_op(Emitter *e, const StructuredOp *op, int index);

/* c_loops.c */
void emit_op(Emitter *e, const StructuredOp *op, int index);
/* The scratch bytes op's pack buffers need under e->sched (with e->scratch
 * and e->prepack_constants as emit_op will see them): a C size_t expression
 * in the kernel's sizes, and its value, or -1 when it depends on them. */
const char *op_scratch_bytes(Emitter *e, const StructuredOp *op, int64_t *value);

/* c_emit.c: a pre-packed constant's array (count elements of the type of
 * tensor t, at `data`), defined once; returns its C symbol. */
const char *packed_constant(Emitter *e, int t, const void *data, int64_t count);

#endif
