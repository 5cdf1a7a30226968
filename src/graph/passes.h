/* passes.h - the graph-level passes over a lowered graph Kernel, after
 * graph_lower and before scheduling:
 *
 *   fuse.c  producer-consumer fusion decided from maps, iterator kinds and
 *           payloads (never op names): an op whose result feeds one
 *           consumer elementwise is inlined into that consumer's payload,
 *           layout ops become indexing maps of their readers, and a
 *           pointwise op after a reduction becomes its epilogue; sibling
 *           reductions over one input share one pass (one op, several
 *           yields); the intermediates that disappear leave the kernel
 *   plan.c  buffer planning: every TS_WORKSPACE tensor gets a byte offset
 *           in one workspace, 64-byte aligned, from liveness over the op
 *           sequence (the best of two greedy strategies, compared with the
 *           max-live lower bound)
 *
 * Each pass records what it decided, for --print-schedule. */
#ifndef LGEN_GRAPH_PASSES_H
#define LGEN_GRAPH_PASSES_H

#include "ir/ir.h"

/* ---- fuse.c ---- */
/* A schedule file's word on one intermediate (`fuse: {t: keep}` under the
 * graph's name): keep it materialised, or inline it wherever legal even
 * when auto would not (it recomputes). */
typedef struct {
  const char *tensor;
  bool inline_it;
  Loc loc;
} FuseOverride;

typedef struct {
  bool enabled; /* false: --fuse=none */
  int noverrides;
  const FuseOverride *overrides;
} FuseOptions;

typedef struct {
  PtrVec decisions; /* const char*: one line each, for --print-schedule */
} FuseReport;

void fuse_kernel(Kernel *k, const FuseOptions *opt, FuseReport *report, Arena *arena, Diag *diag);

/* ---- layout.c ---- */
/* Stores the activations around channels-first window ops (convs, pools)
 * channels-last, recording each choice. */
void choose_layouts(Kernel *k, PtrVec *decisions, Arena *arena);

/* ---- plan.c ---- */
typedef struct {
  int tensor;          /* a TS_WORKSPACE tensor of the kernel */
  AffineExpr *offset;  /* bytes from the workspace start, a multiple of 64 */
  AffineExpr *bytes;   /* its size */
  int first_op, last_op; /* live range: the ops that write first and read last */
  int slot;            /* the shared region it lives in */
  int in_place_of;     /* the tensor whose bytes it takes over, written in place (-1: none) */
} BufferPlacement;

typedef struct {
  int nbuffers;
  BufferPlacement *buffers;
  AffineExpr *total;    /* workspace bytes, in the kernel's size symbols */
  int64_t total_static; /* -1 when it depends on symbols */
  int64_t lower_bound;  /* max over ops of the bytes live at once (-1 with symbols) */
  int64_t sum_bytes;    /* all intermediates without reuse (-1 with symbols) */
  const char *strategy; /* which greedy strategy won */
} BufferPlan;

/* When some ops run interleaved (row fusion: schedule/rows.c) or inside
 * another (a prologue: schedule/prologue.c), op i runs from spans[i].first
 * to spans[i].last (NULL: each op at its own step). */
typedef struct {
  int first, last;
  int unmaterialized; /* a tensor the op does not touch after all (a prologue's result; -1: none) */
} OpSpan;

/* bytes[t] >= 0 (bytes may be NULL) replaces tensor t's own size: a
 * softmax group's chunk buffers (schedule/rows.c) need less. */
BufferPlan *plan_buffers(const Kernel *k, const OpSpan *spans, const int64_t *bytes, Arena *arena);
/* The plan of a graph kernel whose ops run as their plans say (schedule.h):
 * a row-fused group's ops live across the group, a prologue's result never
 * exists, a softmax group's chunk buffers take less than their tensors. */
struct OpPlan;
BufferPlan *plan_graph_buffers(const Kernel *k, const struct OpPlan *plans, Arena *arena);
/* The plan as YAML comments and keys for --print-schedule. */
void plan_print_yaml(StrBuf *out, const Kernel *k, const BufferPlan *plan);

#endif
