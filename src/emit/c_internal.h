/* c_internal.h - what the C writer's files share: the Emitter (one per
 * output file) and the helpers that spell IR pieces in C. */
#ifndef LGEN_C_INTERNAL_H
#define LGEN_C_INTERNAL_H

#include "emit/c_emit.h"
#include "loops/loops.h"
#include "schedule/schedule.h"

/* Where a graph's constants go (c_consts.c writes them; the file's writer,
 * c_emit.c, sets it up and puts the preludes they need at the top). */
typedef struct {
  StrBuf *defs;           /* file-scope arrays (or extern declarations) of the constants */
  bool weights_file;      /* pre-packed arrays are defined for the --weights file */
  WeightsLayout *collect; /* emit_weights_layout's pass: constants are laid out here */
  int graph;              /* the graph being emitted (WeightsEntry.graph) */
  bool align64;           /* LGEN_ALIGN64 on constant arrays: its prelude */
  bool byte_literals;     /* constants as string literals of their bytes: their prelude */
} ConstantsOut;

typedef struct Emitter {
  StrBuf *out;  /* file-level text: signatures, the graph's wrappers */
  LoopList *cur; /* function bodies: the statement list being built */
  StrBuf *dump;  /* --dump=loops (emit_c_file only), or NULL */
  const Kernel *k;
  KernelNames kn;
  const EmitOptions *opt;
  Arena *arena;
  StrBuf *helpers;
  PtrVec *helper_names;
  ExprNeeds needs;        /* of the expressions written (c_expr.c) */
  bool uses_bool;        /* a template's payload function casts to lgen_bool (c_ext.c) */
  bool helpers_used[32]; /* runtime_helpers[] entries this file calls */
  unsigned includes;     /* headers the file needs (INC_*) besides those its helpers and graphs need */
  ConstantsOut consts;   /* model graphs' constants */
  struct Nest *spare_nests; /* c_loops.c: Nests to reuse */
} Emitter;

/* The op whose code is being built and the C spelling of its dims'
 * current values: what a dim of an affine expression (an operand's index)
 * and a payload's index node mean. Not the file's state: whoever builds
 * the op's code owns it (c_loops.c's Nest, its epilogue's or prologue's
 * point, emit_checks) and passes it to what spells its pieces; code that
 * is no op's (a graph's run, a template's extents, the files) passes NULL,
 * and a dim there is an lgen bug. */
typedef struct {
  const StructuredOp *op;
  const char *const *dim_names;
} OpScope;

/* The emit files, bottom up. Each calls only files above it in this list,
 * so they depend one way, with no circle; each file's first comment says
 * which it calls, and tests/layers.test checks both on the object files:
 *   c_names.c            C identifiers
 *   c_expr.c             payload ops as C expressions
 *   c_runtime.c          the runtime helpers' table
 *   c_access.c           affine expressions, tensor elements, the tree being built
 *   c_consts.c           a graph's constants and pre-packed arrays
 *   c_checks.c           --checks
 *   c_ext.c              a template's call
 *   c_pack.c             an op's packed tensors' buffers (c_nest.h: shared with c_loops.c only)
 *   c_loops.c            an op under its schedule (templates through c_ext.c)
 *   c_view.c             --abi=view: descriptors, the dense-path test, the strided nest
 *   c_graph.c            a graph's run body
 *   c_emit.c             the files
 * The loop IR (src/loops/) is below them all and calls none of them. */

/* The standard headers a file includes, all at its top. */
enum {
  INC_STDDEF = 1,
  INC_STDIO = 2,
  INC_STDLIB = 4,
  INC_STRING = 8,
  INC_MATH = 16,
  INC_CBLAS = 32,
  INC_OMP = 64, /* under #if defined(_OPENMP) */
};

/* Where an op's code goes, as far as its nest must know, besides its
 * schedule (emit_op's s): the view ABI's strides (c_view.c) and a model
 * graph's memory (c_graph.c), which the builder carries out for this op
 * alone. They are not the file's state, so they are emit_op's argument
 * (kept on the nest, read by access_str) rather than Emitter fields. Zero:
 * an op alone, row-major. Fusion's decisions are passes on the op's tree
 * (src/loops/: loops_bind_dims for a row group's members, loops_fill_elements
 * for a prologue, loops_shift_arrays for chunk buffers). */
typedef struct {
  /* --abi=view's nests over strides (c_view.c): stride_names[t][d] is the
   * C local holding tensor t's stride along dim d, in elements (or "1"),
   * and access_str and pack copies spell an element as the sum of index
   * times stride. NULL: row-major. */
  const char *const *const *stride_names;
  /* Packing inside a model graph (c_pack.c): a graph's _run never
   * allocates, so the op's pack buffers live in the workspace's scratch
   * area, whose C pointer `scratch` is (NULL: heap buffers, a def's), and
   * its packed constants (TS_CONST operands) are laid out at generation
   * time (prepack_constants). */
  const char *scratch;
  bool prepack_constants;
} OpPlace;

/* ---- c_runtime.c ---- */
/* Marks a runtime helper (and what it needs) as used by the file. */
void use_helper(bool *used, const char *name);
/* The used helpers' definitions, in dependency order; whether any. */
bool runtime_helpers_print(StrBuf *out, const bool *used);
/* The headers the used helpers need (INC_*). */
unsigned runtime_helpers_includes(const bool *used);

/* ---- c_access.c ---- */
/* Appends a statement to the list being built; returns it. */
LoopNode *put(Emitter *e, LoopNode *n);
/* Builds into list (returns the list built into until now). */
LoopList *build_into(Emitter *e, LoopList *list);
/* An affine expression in C: its dims as `at` names them (NULL: it has
 * none), its sizes and attributes as the kernel's parameters. */
const char *affine_str(Emitter *e, const OpScope *at, const AffineExpr *x);
/* The kernel's size parameters as a list, "N, M" (a call's arguments) or,
 * with types, "int64_t N, int64_t M" (a declaration's); "" for none. */
const char *size_list(const Emitter *e, bool types);
/* T[...]: the element of operand o (of at->op) at the dim values `at`
 * names, row-major (as `place` says: through strides; NULL: plainly). A
 * softmax group's chunk buffers are the loop IR's business
 * (loops_shift_arrays, c_graph.c softmax_member). */
const char *access_str(Emitter *e, const OpScope *at, const OpPlace *place, const Operand *o);
/* Makes k (the kernel, or a view of one of its ops: transform/reshape.h,
 * which renumbers the op's tensors) the one that e->k and e->kn.tensors
 * mean; emitter_kernel_tensor maps a tensor of the view to the kernel's. */
void emitter_view(Emitter *e, const Kernel *k);
int emitter_kernel_tensor(const Emitter *e, int t);
/* A few names to look for in much text, in one pass over it however many
 * they are: nameset_seen says whether a text scanned (nameset_scan, any
 * number of times) mentions `name` (one of set's names), as
 * loops_text_mentions sees it. Uses no memory per identifier of the text. */
typedef struct {
  StrMap map; /* name -> its first index + 1 */
  bool *hit;
  uint64_t lengths; /* bit min(length, 63) of each name: most identifiers need no lookup */
} NameSet;
void nameset_init(NameSet *set, const char *const *names, int n, Arena *arena);
void nameset_scan(NameSet *set, const char *text);
/* the C text of a statement list, without printing it */
void nameset_scan_tree(NameSet *set, const LoopList *list);
bool nameset_seen(const NameSet *set, const char *name);
/* The functions of a function body `tree` (register blocks, c_loops.c
 * emit_region) move out of it (loops_outline), named prefix1, prefix2, ...,
 * and are printed to out, to go at file scope before the function; params
 * are the function's. */
void emit_procs(Emitter *e, StrBuf *out, LoopList *tree, const LoopVar *params, int nparams, const char *prefix);
/* The C text of a statement list (what loops_text_mentions reads). */
const char *tree_text(Emitter *e, const LoopList *list);

/* ---- c_consts.c ---- */
/* The tensor whose memory t is: itself unless an alias. */
int alias_root(const Kernel *k, int t);
/* The C symbol of constant t's array. */
const char *const_symbol(const Emitter *e, int t);
/* The graph's constants that `body` reads (every one for external_file,
 * the --weights file), as arrays. */
void graph_constants(Emitter *e, StrBuf *out, bool external_file, const char *body);
/* A pre-packed constant's array for op `op_index` of the graph (count
 * elements of the type of tensor t, at `data`), defined once; returns its
 * C symbol. */
const char *packed_constant(Emitter *e, int op_index, int t, const void *data, int64_t count);

/* ---- c_checks.c ---- */
void emit_checks(Emitter *e);
/* --abi=view: the descriptors' sizes against the extents; no output
 * with a stride 0 along a dim of extent > 1. */
void emit_view_checks(Emitter *e);

/* ---- c_ext.c ---- */
/* A non-structured op (op->ext) as its template's call; returns the call.
 * A softmax `grouped` with the ops before and after it runs chunk by chunk
 * in a loop of its own, where they join it; chunk_group: the group's head
 * plan when it keeps chunk buffers (schedule/rows.c), else NULL. */
LoopNode *emit_ext_op(Emitter *e, const StructuredOp *op, const Schedule *s, int index, bool grouped, bool in_region,
                      const OpPlan *chunk_group);

/* ---- c_loops.c ---- */
/* Whose threads an op's code runs on (emit_op). */
typedef enum {
  THREADS_OWN,    /* its parallel loops open regions of their own */
  /* a model graph's parallel region (G_run is one region: a fork/join per
   * op costs as much as a small op), whose threads share the op's parallel
   * loops as orphaned `omp for`s; its nest is built as it would run alone
   * and loops_join_region moves it in */
  THREADS_REGION,
  /* the calling thread's only: a row-fused group's member (schedule/rows.c)
   * runs on the thread of its row, its parallel loops and those of its
   * init and epilogue serial */
  THREADS_NONE,
} OpThreads;
/* The op under schedule s, into e->cur, on `threads`. Every loop that runs
 * over one of the op's dims a point at a time carries the dim's mark
 * (LoopNode.dim: loops_bind_dims binds a row-fused group's members).
 * `place`: NULL for an op alone. */
void emit_op(Emitter *e, const StructuredOp *op, const Schedule *s, int index, OpThreads threads,
             const OpPlace *place);
/* Whether op's parallel loop under s splits a reduction: its reduction
 * clause needs a parallel region of its own (no orphaned `omp for`). */
bool op_splits_reduction(const StructuredOp *op, const Schedule *s);
/* The scratch bytes op's pack buffers need under s (`place` as
 * emit_op will see it: its packing fields): a C size_t expression in the
 * kernel's sizes, and its value, or -1 when it depends on them. */
const char *op_scratch_bytes(Emitter *e, const StructuredOp *op, const Schedule *s, const OpPlace *place,
                             int64_t *value);

/* ---- c_view.c ---- */
/* The C type of a strided view of rank `rank` over elements of type t
 * ("lgen_memref_f32_2"). */
const char *view_type_name(Arena *arena, ElemType t, int rank);
/* The descriptor typedefs that the defs of m take under --abi=view (each
 * under its own include guard: the header and the C file both define
 * them). */
void view_typedefs(StrBuf *out, const Module *m, const EmitOptions *opt, Arena *arena);
/* The view entry point's body for e->k (kernel `index`): the dense kernel
 * `dense_fn` when every view is dense row-major, else the scheduled nest
 * over strides when every innermost stride is 1, else the plain nest over
 * strides. */
void view_body(Emitter *e, LoopList *tree, const char *dense_fn, int index);

/* ---- c_graph.c ---- */
/* G_run's statements for graph kernel `index` (workspace pointer ws). */
/* -DLGEN_PROFILE: the groups G_run times, in order (c_graph.c fills it,
 * c_emit.c writes the table): what graph nodes each carries, as C string
 * text (escaped). `state` names the graph's profile data in the C. */
typedef struct {
  const char *state;
  int n, cap;
  const char **ops;
} ProfileGroups;
/* G_run's body; `groups` (or NULL) gets the groups that the profile times,
 * and `outlines` the groups that are functions of their own (outline and
 * libcall: the functions below take it). */
void graph_run_body(Emitter *e, LoopList *body, int index, const BufferPlan *plan, const char *ws,
                    ProfileGroups *groups, PtrVec *outlines);
/* The scratch area's size: C statements that leave it in
 * lgen_scratch_bytes; *value gets it, or -1 when it is symbolic. */
const char *graph_scratch_bytes(Emitter *e, int index, int64_t *value);
/* Whether graph `index` runs in a parallel region (with an lgen_team
 * record at its workspace's end). */
bool graph_wants_region(const Emitter *e, int index);
/* The workspace's size when static, else -1. */
int64_t graph_workspace_static(Emitter *e, int index, const BufferPlan *plan);
/* Outline and libcall (the schedule file's keys): each group of graph
 * `index` that is a C function of its own, its doc comment and prototype
 * (restrict_kw: "restrict" or the header's macro). */
void graph_outline_prototypes(Emitter *e, StrBuf *out, int index, const char *restrict_kw);
/* After graph_run_body: the outlined groups' definitions, and the libcalls'
 * prototypes, which G_run calls (ws: the workspace parameter's name). */
void graph_outline_definitions(Emitter *e, const PtrVec *outlines, StrBuf *out, int index, const char *ws);
/* The outlined groups' code, as one C text (which constants it reads). */
const char *graph_outlines_text(Emitter *e, const PtrVec *outlines);
/* --dump=loops: the outlined groups' trees (G_run's shows their calls). */
void graph_outlines_dump(Emitter *e, const PtrVec *outlines);
/* loops_tidy_names on each outlined group's function (ws: the workspace's name). */
void graph_outlines_tidy(Emitter *e, const PtrVec *outlines, const char *ws);

#endif
