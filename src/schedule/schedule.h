/* schedule.h - per-op scheduling decisions, and where they come from.
 *
 * A Schedule says how to run one StructuredOp's iteration domain; the C
 * emitter (emit/c_loops.c) applies it. Every decision is phrased in terms of
 * the op's dims, iterator types and operands, never its name:
 *
 *   tile[l][d]     level-l tile size of dim d (0: not tiled at that level);
 *                  tile loops of level 0 are outermost, partial tiles exact
 *   order          the dims, outermost first; every band of loops (each tile
 *                  level, the register tiles, the points) follows it
 *   unroll[d]      register blocking: dim d's innermost loop has this constant
 *                  extent and is unrolled and jammed inside the reduction
 *                  loops, its outputs held in a local accumulator array
 *   parallel[d]    the outermost loop of d is an OpenMP parallel loop (adjacent
 *                  ones collapse); a reduction dim needs split_reduction.
 *                  parallel_reg[d] ("d.reg" in YAML) picks d's register-tile
 *                  loop instead: fine-grained work for small sizes. A parallel
 *                  loop below other loops runs in one parallel region opened
 *                  at the top of the nest (the outer loops run in every
 *                  thread, packing is shared out, buffers are per thread)
 *   vector_dim     the dim whose innermost loop gets `omp simd` (-1: none)
 *   partials       when the vector dim is a reduction: its loop keeps this
 *                  many partial results, combined after it (0, 1: one)
 *   pack[t]        tensor t is copied, per level-0 tile, into a contiguous
 *                  local buffer in an IREE-style data-tiled layout: the outer
 *                  tiles of its register-blocked dims, then its other dims,
 *                  then the register-blocked dims' inner tiles, zero-padded
 *   library_call   the whole op is one call (e.g. cblas_sgemm)
 *
 * Sources: schedule_none (plain loops), schedule_auto (from the op's
 * structure and a Target), and YAML files (yaml.c), all checked by
 * schedule_verify and printable back as YAML. */
#ifndef LGEN_SCHEDULE_H
#define LGEN_SCHEDULE_H

#include "ir/ir.h"
#include "transform/reshape.h"

enum { LG_MAX_LEVELS = 3, LG_MAX_TENSORS = 128 };

typedef struct {
  int nlevels;
  int64_t tile[LG_MAX_LEVELS][LG_MAX_DIMS];
  int order[LG_MAX_DIMS]; /* a permutation of the op's dims */
  int64_t unroll[LG_MAX_DIMS];
  bool parallel[LG_MAX_DIMS];
  bool parallel_reg[LG_MAX_DIMS]; /* the register-tile loop of d instead ("d.reg") */
  bool split_reduction;
  int vector_dim;
  int64_t partials;
  bool pack[LG_MAX_TENSORS];
  const char *library_call;
  /* A template whose loop over rows takes a schedule (ExtOp.rows_loop):
   * whether that loop is shared out among threads, and how many rows a
   * thread takes at a time (0: an equal share each). */
  bool rows_parallel;
  int64_t rows_tile;
} Schedule;

/* The most rows templates/softmax.c's lgen_softmax_chunk gives one chunk
 * (the emitted code clamps it there, as a softmax group's chunk buffers
 * hold that many rows). */
enum { LG_SOFTMAX_CHUNK_ROWS = 16 };

/* Everything decided for one op: how its domain is reshaped before tiling
 * (fold and collapse, in the op's own dims), the view that results, and the
 * schedule, whose dims are the view's. */
typedef struct OpPlan {
  Reshape reshape;
  OpView view;
  Schedule s;
  /* Row fusion (rows.c): the first op of a group has group_size > 1 (its
   * op count) and group_rows (how many of its leading dims, in the original
   * op, are the group's rows); the other members have group_size -1. */
  int group_size;
  int group_rows;
  bool group_threads; /* the group's row loop is shared out among threads */
  /* A softmax's group (its first op): intermediates that live only inside
   * the group's chunks of rows are kept per thread, one chunk each
   * (LG_SCRATCH_THREAD_SLOTS slots of LG_SOFTMAX_CHUNK_ROWS rows), instead
   * of whole; chunk_local_bytes is the buffer's size. */
  int nchunk_local;
  int chunk_local[2];
  int64_t chunk_local_bytes[2];
  bool from_file; /* the schedule file's: row fusion leaves it as it is */
  /* Prologues (prologue.c): with has_prologue, this op's pack of tensor
   * prologue_tensor computes it with op prologue_op's payload; with
   * is_prologue, this op runs there (in op prologue_of) instead of on its
   * own. Both false in a zeroed plan. */
  bool has_prologue, is_prologue;
  int prologue_op, prologue_tensor;
  int prologue_of;
  /* The schedule file's `outline: NAME` or `libcall: NAME` on this op: the
   * group it heads (the op with what is fused into it, or a row-fused
   * group) becomes the extern C function NAME, generated (outline) or the
   * user's (libcall), which G_run calls (emit/c_graph.c). NULL: inline. */
  const char *outline;
  bool libcall;
  Loc outline_loc; /* the name in the schedule file */
} OpPlan;

/* A machine model: what --schedule=auto tunes for (--target=NAME). */
typedef struct {
  const char *name;
  int vector_bytes;   /* widest vector register */
  int vector_regs;    /* architectural vector registers */
  int64_t l1_bytes;
  int64_t l2_bytes;
  int64_t l3_bytes;
  int threads;        /* cores the outer parallel loops should feed */
} Target;

const Target *target_lookup(const char *name); /* NULL if unknown */
const Target *target_default(void);
/* The names of targets[], "x86-64-avx512, x86-64-avx2, ...", into buf
 * (cut at size - 1 bytes). */
void target_names(char *buf, size_t size);

/* Where decisions for a module come from. */
typedef enum { SCHED_NONE, SCHED_AUTO, SCHED_FILE } ScheduleMode;

/* Schedules keyed by kernel name and comprehension index, as read from YAML. */
typedef struct {
  const char *kernel;
  int op;
  Loc loc;
  /* raw decisions by name, resolved against the op by schedule_resolve */
  PtrVec entries; /* ScheduleEntry* */
} ScheduleSpec;

typedef struct {
  const char *key; /* fold, collapse, tile, order, unroll, parallel, vector, pack, library_call, split_reduction */
  Loc loc;
  int nitems;
  const char **names;    /* dim or tensor names */
  Loc *locs;
  int64_t *values;       /* per name (tile: level sizes flattened with nvalues per name; collapse: group number) */
  int *nvalues;
  const char *scalar;    /* vector, library_call, split_reduction */
} ScheduleEntry;

typedef struct {
  PtrVec specs; /* ScheduleSpec* */
} ScheduleFile;

/* ---- file_keys.c: what a schedule file says, stage by stage ---- */
/* One name of a key's entries for a kernel, or the entry's scalar. */
typedef struct {
  const char *name;   /* fuse, algorithm: the tensor; NULL for a scalar key */
  int64_t value;      /* fuse: 1 inline, 0 keep; algorithm: its code */
  const char *scalar; /* layout */
  Loc loc;
} ScheduleItem;

/* Every item of `key` in the file's entries for kernel `kernel`, in file
 * order (the graph-level keys fuse, layout and algorithm); their count. */
int schedule_file_items(const ScheduleFile *file, const char *kernel, const char *key, ScheduleItem **items,
                        Arena *arena);

/* The loops of an op's nest under a schedule, outermost first: band 0
 * (level-0 tiles, and the points of untiled parallel dims) in `order`,
 * deeper tile levels, register tiles, the remaining points, and the
 * register points (the vector dim's last). The C emitter builds its nest
 * from them, and schedule files are checked against them. */
typedef enum { LOOP_TILE, LOOP_REG_TILE, LOOP_POINT, LOOP_REG_POINT } LoopKind;

typedef struct {
  int dim;
  LoopKind kind;
  int level;    /* LOOP_TILE */
  int64_t step; /* tile size, unroll factor, or 1 */
  bool band0;   /* in band 0 */
  bool first;   /* the dim's outermost loop */
} Loop;

enum { LG_MAX_LOOPS = LG_MAX_DIMS * (LG_MAX_LEVELS + 3) };

/* Fills loops (LG_MAX_LOOPS) and returns their number. */
int schedule_loops(const StructuredOp *op, const Schedule *s, Loop *loops);
/* The OpenMP loop of the nest, or -1: the outermost loop of a parallel dim
 * (or d's register tile for parallel_reg[d]); *count gets the number of
 * loops collapsed with it (adjacent band-0 outermost loops of other
 * parallel dims; 1 when the first is a split reduction). */
int schedule_parallel_loop(const StructuredOp *op, const Schedule *s, const Loop *loops, int nloops, int *count);
/* A located warning for each `parallel:` name of a schedule file entry
 * that the nest cannot honour (not in the collapsed group of parallel
 * loops), and for a `vector:` dim whose loop is not the innermost. */
void schedule_warn_ineffective(const ScheduleSpec *spec, const StructuredOp *op, const Schedule *s, Diag *diag);


void schedule_none(const StructuredOp *op, Schedule *s);
/* An `algorithm:` entry's value: "direct", "im2col" or "winograd". */
const char *schedule_conv_algorithm(int64_t code);
/* Points of op's domain when every extent is a constant (-1 if not), and
 * whether auto gives work of that many points threads (auto.c). */
int64_t schedule_static_points(const StructuredOp *op);
bool schedule_worth_threads(int64_t points);
void schedule_auto(const Kernel *k, const StructuredOp *op, const Target *t, Schedule *s);
/* Reads a schedule file; errors are located diagnostics. */
ScheduleFile *schedule_file_parse(const Source *src, Arena *arena, Diag *diag);
/* The spec's decisions for this op on top of `none`; a located error for
 * unknown dims or tensors, bad sizes, or illegal choices. */
void schedule_resolve(const ScheduleSpec *spec, const Kernel *k, const StructuredOp *op, OpPlan *plan, Arena *arena,
                      Diag *diag);
/* ---- templates.c: schedules of non-structured ops (templates) ---- */
/* auto's: a template with a loop over rows shares it out among threads. */
void schedule_template_auto(const StructuredOp *op, Schedule *s);
/* A schedule file's entry for template op `index` of k: `parallel: [rows]`
 * (or `[]`) and `tile: {rows: N}`, for templates with a loop over rows;
 * anything else is a located error. Starts from the plain schedule. */
void schedule_template_resolve(const ScheduleSpec *spec, const Kernel *k, int index, Schedule *s, Diag *diag);
/* Its entry in --print-schedule's YAML (a comment for templates with no
 * schedule). */
void schedule_template_print_yaml(StrBuf *out, const Kernel *k, int index, const OpPlan *plan, bool as_list);
/* Keys of a schedule file entry that are not the op's own schedule (fuse,
 * layout, algorithm, outline, libcall: file_keys.c reads them). */
bool schedule_key_not_op(const char *key);
/* Legality; `where` locates the error (the spec entry, or the op). */
void schedule_verify(const Kernel *k, const StructuredOp *op, const Schedule *s, Loc where, Diag *diag);
/* Whether the op's (single) output combines by an f32/f64 sum or product:
 * what split_reduction by auto and partials need (OpenMP's max/min combine
 * need not match the payload's handling of NaN; integer partials could
 * overflow where the payload wraps). */
bool float_sum_or_product(const StructuredOp *op);
/* Whether tensor t is an input of the op: not written by it. A model graph's
 * intermediates are inputs of the ops that read them; a .tc def's output
 * parameters count as outputs even in a comprehension that only reads them. */
bool op_reads_only(const Kernel *k, const StructuredOp *op, int t);
/* The operand through which tensor t is packed; NULL if it cannot be. */
const Operand *packable_operand(const Kernel *k, const StructuredOp *op, int t);
/* Prologues of a model graph's kernel (prologue.c): elementwise producers
 * computed by their consumer's pack copy; records each decision. */
void plan_prologues(const Kernel *k, OpPlan *plans, PtrVec *decisions, Arena *arena);
/* Row fusion of a model graph's kernel (rows.c): sets the plans' groups
 * and records each decision. An op writing a tensor named in `keep` (the
 * schedule file's `fuse: {t: keep}`) ends its group. */
void plan_row_groups(const Kernel *k, OpPlan *plans, const Target *target, const char *const *keep, int nkeep,
                     Arena *arena, PtrVec *decisions);
/* The C values of a group member's view dims: row_values[q] for the
 * group's row q (its dim q in the original op), NULL for its own dims. */
void row_group_bindings(const OpPlan *plan, const StructuredOp *op, int rows, const char *const *row_values,
                        const char **bound);
/* The plan as a schedule file entry: fold and collapse in the op's dims, the
 * rest in the view's. */
/* A name from the input (a graph's, a tensor's) as a YAML scalar: plain when
 * it is made of letters, digits and _ . - /, else double-quoted with every
 * other byte escaped, so that no name can end the line, start a comment or
 * become a key of the printed schedule. */
void schedule_yaml_name(StrBuf *out, const char *name);
void schedule_print_yaml(StrBuf *out, const Kernel *k, int op_index, const StructuredOp *op, const OpPlan *plan);
/* The file's per-op decisions on top of plans[kernel][op] (each checked:
 * a located error for an op that does not exist or is a template). */
void schedule_file_apply(const ScheduleFile *file, const Module *m, OpPlan **plans, Arena *arena, Diag *diag);
/* After row fusion: a located error for each outline or libcall on an op
 * that heads no group of a model graph (graph[i]: kernel i is one), a row
 * group's member or an op computed in another's pack copy. */
void schedule_check_outlines(const Module *m, OpPlan **plans, const bool *graph, Diag *diag);

#endif
