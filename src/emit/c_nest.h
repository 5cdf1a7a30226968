/* c_nest.h - what c_loops.c (an op's nest) and c_pack.c (its packed
 * buffers) share: the Nest being built and its Packs. Private to those
 * two files; the rest of the C writer sees emit_op (c_internal.h). */
#ifndef LGEN_C_NEST_H
#define LGEN_C_NEST_H

#include "emit/c_internal.h"

typedef struct {
  int tensor;
  const Operand *operand;
  int point;    /* packed just before loop `point` opens */
  int alloc_at; /* buffer allocated just before loop `alloc_at` opens; -1: by the region */
  bool shared;  /* in a hoisted region: one buffer for all threads, packed together */
  bool prepacked;  /* a constant, packed at generation time (no buffer, no copy) */
  bool per_thread; /* in the scratch area: one buffer per thread slot */
  const char *bytes;  /* in the scratch area: its size, a multiple of 64 (C) */
  int64_t bytes_value; /* the same, -1 when symbolic */
  const char *offset; /* from the scratch start, or from the thread's slot */
  const char *buf, *raw;
  /* layout: outer parts of unrolled dims, other dims, inner parts */
  int nlayout;
  int layout_dim[LG_MAX_RANK * 2];
  int layout_part[LG_MAX_RANK * 2]; /* 0 whole, 1 outer, 2 inner */
  const char *layout_ext[LG_MAX_RANK * 2];
  const char *base[LG_MAX_DIMS]; /* per op dim, at the pack point */
  const char *ext[LG_MAX_DIMS];
} Pack;

typedef struct Nest {
  Emitter *e;
  const StructuredOp *op;
  int index; /* the op's in its kernel (emit_op's): names its pre-packed arrays */
  const Schedule *s;
  Loop loops[LG_MAX_LOOPS];
  int nloops;
  int acc_start;    /* accumulators are loaded before loop acc_start; -1: none */
  int region;       /* full/partial register-block split before this loop; -1: none */
  int par_first;    /* the omp parallel loop group; -1: none */
  int par_count;
  bool hoisted;     /* one parallel region around the nest, `omp for` inside */
  int vector_loop;  /* gets omp simd; -1: none */
  const char *vector_clause; /* reduction clause of a vectorised reduction loop */
  bool split;       /* the parallel loop is a reduction split across threads */
  Pack packs[LG_MAX_TENSORS];
  int npacks;
  /* scratch area (graphs): buffers once per call, then one slot per thread */
  const char *once_bytes, *slot_bytes;
  int64_t once_value, slot_value;
  bool thread_slots; /* some buffer is per thread: cap the region's threads */
  /* per dim, as loops open */
  const char *lo[LG_MAX_DIMS], *hi[LG_MAX_DIMS], *value[LG_MAX_DIMS];
  const char *reg_var[LG_MAX_DIMS], *reg_len[LG_MAX_DIMS], *point_var[LG_MAX_DIMS];
  /* per dim: a number that lo[d] (lo_align) and reg_var[d] (reg_align) are
   * known multiples of; 0 for lo[d] = 0 (a multiple of every number) */
  int64_t lo_align[LG_MAX_DIMS], reg_align[LG_MAX_DIMS];
  const char **acc; /* per yield */
  /* While the register block's function is built (emit_region): dim d's
   * block has the extent block_len[d] and starts at point_off[d] (NULL: 0)
   * within the register tile, both its parameters. */
  const char *block_len[LG_MAX_DIMS];
  const char *point_off[LG_MAX_DIMS];
  OpPlace place;         /* emit_op's (zero: none) */
  /* an init's or epilogue's nest (emit_attached_nest): its dim d is the
   * op's dim dim_of[d] (-1: none), which its loops' dim marks name; NULL:
   * the op's own nest */
  const int *dim_of;
  struct Nest *next_spare; /* in Emitter.spare_nests */
} Nest;

/* ---- names (c_loops.c and c_pack.c) ---- */

/* A fresh C name from the kernel's table, fmt applied to name. */
static inline const char *claim(Nest *n, const char *fmt, const char *name) {
  return names_claim(&n->e->kn.table, arena_printf(n->e->arena, fmt, name));
}

static inline const char *dim_name(Nest *n, int d) { return n->op->dims[d].name; }

/* ---- c_pack.c: packed tensors ---- */

/* Which tensors the schedule packs, where each is copied and allocated,
 * and whether the parallel region is hoisted over the nest (n->hoisted). */
void plan_packs(Nest *n);
/* The buffers' C names. */
void name_packs(Nest *n);
/* Inside a model graph: the buffers' offsets in the scratch area. */
void layout_scratch(Nest *n);
/* Adds a buffer of `bytes` (C) / `value` (-1: symbolic) to a running total. */
void add_bytes(Nest *n, const char **total, int64_t *total_value, const char *bytes, int64_t value);
/* A buffer's allocation (heap or scratch; nothing when pre-packed), and
 * its release (heap only), into e->cur. */
void emit_pack_alloc(Nest *n, Pack *p);
void emit_pack_free(Nest *n, const Pack *p);
/* Copies the tensor's region for the current level-0 tiles into the
 * buffer (or points it at the pre-packed block), into e->cur. */
void emit_pack_copy(Nest *n, Pack *p);
/* The packed element the body reads at the current dim values. */
const char *pack_read(Nest *n, const Pack *p);
/* Whether a C expression must be parenthesised as an operand of `*`. */
bool needs_parens(const char *x);

#endif
