/* loops.h - the loop IR: a small tree of C-like statements between the
 * schedules and the C text, after Halide's lowered Stmt and TVM's TIR.
 *
 * The C writer's builders (emit/c_loops.c for an op under its schedule,
 * emit/c_ext.c for a template's call, emit/c_graph.c for a graph's run
 * body) build a tree per op; passes edit it; loops_print_c writes it as C
 * and loops_print_dump as compact text (--dump=loops). Neither printer
 * knows schedules, graphs or op names: everything they print is in the
 * nodes. Expressions are C text (their spelling is the builders' business,
 * through emit/c_expr.c); statements are nodes.
 *
 * Nodes live in the compilation's arena and are never freed one by one.
 * A list of statements is a LoopList; a node belongs to one list. */
#ifndef LGEN_LOOPS_H
#define LGEN_LOOPS_H

#include "util/util.h"

typedef struct LoopNode LoopNode;

typedef struct {
  LoopNode *first, *last;
} LoopList;

typedef enum {
  LN_BLOCK,   /* { body }: a scope; with `region`, an OpenMP construct around it */
  LN_FOR,     /* for (int64_t var = lo; var < hi; var += step) body, with its marks */
  LN_IF,      /* if (cond) body else els (els may be empty) */
  LN_LET,     /* type name = value;  (value NULL: a declaration only) */
  LN_ARRAY,   /* type name[extents] = {0};  a stack array (accumulators) */
  LN_ALLOC,   /* a buffer: on the heap (a later LN_CALL frees it), or a workspace slot */
  LN_STORE,   /* target = value; */
  LN_CALL,    /* fn(args); */
  LN_BARRIER, /* the threads of the enclosing parallel region meet */
  LN_COMMENT, /* a comment line */
  LN_PROC,    /* a function of the file, defined where it stands until loops_outline moves it out */
} LoopNodeKind;

/* OpenMP around an LN_BLOCK. */
typedef enum {
  REGION_NONE,     /* a plain scope */
  REGION_PARALLEL, /* omp parallel: every thread runs the body */
  REGION_SINGLE,   /* omp single: one thread of the enclosing region runs it */
} RegionKind;

/* How an LN_FOR's iterations are shared among threads. */
typedef enum {
  PAR_NONE,
  PAR_REGION,      /* omp parallel for: a region of its own */
  PAR_WORKSHARING, /* omp for: shared among the enclosing region's threads */
} ParKind;

/* What an accumulator's node is (LoopNode.acc). */
typedef enum { ACC_NONE, ACC_LOAD, ACC_STORE } AccKind;

/* Where an LN_ALLOC's bytes come from. */
typedef enum {
  ALLOC_HEAP,       /* lgen_alloc; the builder frees `raw` */
  ALLOC_SCRATCH,    /* at an offset of a model graph's scratch area */
  ALLOC_PER_THREAD, /* ... in the running thread's slot of it */
} AllocKind;

struct LoopNode {
  LoopNodeKind kind;
  LoopNode *next;
  const char *note;  /* a comment at the end of the node's first line, or NULL */
  const char *guard; /* a macro: the node is printed between `#ifdef guard` and `#endif` (NULL: none) */
  /* The node's threads use their slots of a model graph's scratch area
   * (per-thread pack buffers, a template's per-thread scratch, softmax
   * chunk buffers): the parallel region they run in must keep its team
   * within the slots (loops_cap_threads). A region of the node's own
   * carries its cap in `threads` already. */
  bool thread_slots;
  /* LN_BLOCK, LN_FOR, LN_IF (then) */
  LoopList body;
  /* LN_FOR, LN_IF: BRACES_NONE prints a one-statement body without braces
   * on the next line, BRACES_INLINE on the same line */
  enum { BRACES, BRACES_NONE, BRACES_INLINE } braces;
  /* LN_BLOCK */
  RegionKind region;
  const char *threads; /* num_threads(...) argument of a region or a PAR_REGION loop; NULL: the default */
  /* LN_FOR */
  const char *var, *lo, *hi;
  int64_t step;
  const char *step_expr; /* a step that is not a constant (NULL: step) */
  const char *next_value; /* the increment `var = next` instead of a step (a claimed chunk) */
  ParKind par;           /* LN_CALL: PAR_WORKSHARING, the callee's loops are orphaned `omp for`s */
  int collapse;          /* loops of a parallel group (>1: collapse(n)) */
  bool simd;
  bool simd_not_clang;   /* simd, except under clang (LGEN_OMP_SIMD_NOT_CLANG: c_runtime.c says why) */
  const char *reduction; /* OpenMP reduction clauses, or NULL */
  const char *schedule;  /* OpenMP schedule clause, or NULL */
  /* 1 + the dim of the builder's op that the loop runs over, one point at
   * a time, so that loops_bind_dims may bind it to one value (0: none) */
  int dim;
  /* 1 + the reduction dim of the builder's op that the loop runs over
   * (0: none), and the C condition under which it runs that dim's last
   * iteration (NULL: not known, a register tile's), for loops_init_at_load
   * and loops_epilogue_at_store */
  int reduce;
  const char *last;
  /* LN_IF */
  const char *cond;
  LoopList els;
  /* LN_LET, LN_ARRAY, LN_ALLOC */
  const char *type; /* "const int64_t", "float *restrict", the element type of an array or buffer */
  const char *name;
  const char *value;   /* LN_LET's initial value; LN_STORE's value */
  const char *extents; /* LN_ARRAY: "[8][32]" */
  bool zeroed;         /* LN_ARRAY: = {0} */
  /* LN_ALLOC */
  AllocKind alloc;
  const char *raw;    /* ALLOC_HEAP: the pointer to free */
  const char *bytes;  /* ALLOC_HEAP: its size in bytes (C) */
  const char *base;   /* ALLOC_SCRATCH, ALLOC_PER_THREAD: the scratch area's pointer */
  const char *offset; /* ... the buffer's offset in it, or in the thread's slot */
  const char *slot;   /* ALLOC_PER_THREAD: the slot's bytes */
  const char *thread; /* ALLOC_PER_THREAD: the running thread's number (C) */
  /* LN_STORE */
  const char *target;
  /* ... a copy's store (a pack copy's) that reads an element of the array
   * `source`: `element` is that read's text in `value`, coords[0..ncoords)
   * its coordinates, one C expression per position, so that
   * loops_fill_elements may put what computes the element in its place
   * (NULL: no such read) */
  const char *source, *element;
  const char **coords;
  int ncoords;
  /* A node of an accumulator's load (ACC_LOAD: the stores, or the
   * initialised declarations, that give the accumulators the output's
   * values before a reduction run) or of its store (ACC_STORE: those that
   * store them to the output after it): the consecutive nodes of one list
   * with the same `site` (the builder's, for its callbacks) are one load
   * or store, which loops_init_at_load / loops_epilogue_at_store rewrite. */
  AccKind acc;
  const void *site;
  /* LN_CALL */
  const char *fn;
  int nargs;
  const char **args;
  LoopNode *callee; /* an LN_PROC of the tree, whose name is fn's (fn NULL) */
  /* LN_PROC: `type name(ptypes[0] pnames[0], ...) { body }`; its reads of
   * the enclosing function's variables become parameters (loops_outline) */
  const char **ptypes, **pnames;
  int nparams;
  /* ... after loops_outline: the last ncaptures parameters are captures;
   * kept[i] tells whether the builder's parameter i (of nexplicit) stayed */
  int ncaptures, nexplicit;
  const bool *kept;
  /* LN_COMMENT: text (printed as a comment; the builder makes it safe) */
  const char *text;
};

/* ---- building (loops.c) ---- */
void loops_append(LoopList *list, LoopNode *n);
void loops_prepend(LoopList *list, LoopNode *n);
/* Moves every node of `from` to the end of `to`. */
void loops_splice(LoopList *to, LoopList *from);
/* Inserts n right after / before `at` (a node of list). */
void loops_insert_after(LoopList *list, LoopNode *at, LoopNode *n);
void loops_insert_before(LoopList *list, LoopNode *at, LoopNode *n);
bool loops_empty(const LoopList *list);

LoopNode *loops_node(Arena *arena, LoopNodeKind kind);
LoopNode *loops_block(Arena *arena, RegionKind region);
LoopNode *loops_for(Arena *arena, const char *var, const char *lo, const char *hi, int64_t step);
LoopNode *loops_if(Arena *arena, const char *cond);
LoopNode *loops_let(Arena *arena, const char *type, const char *name, const char *value);
LoopNode *loops_array(Arena *arena, const char *type, const char *name, const char *extents, bool zeroed);
LoopNode *loops_store(Arena *arena, const char *target, const char *value);
LoopNode *loops_call(Arena *arena, const char *fn, int nargs, const char *const *args);
LoopNode *loops_barrier(Arena *arena);
LoopNode *loops_comment(Arena *arena, const char *text);
/* A function `type name(params)` (name NULL: loops_outline names it), and
 * a call of it. */
LoopNode *loops_proc(Arena *arena, const char *type, int nparams, const char *const *ptypes,
                     const char *const *pnames);
LoopNode *loops_call_proc(Arena *arena, LoopNode *proc, int nargs, const char *const *args);

/* ---- outlining (outline.c) ---- */
/* A variable in scope: `type name` (a parameter of the function). */
typedef struct {
  const char *type, *name;
} LoopVar;
/* Moves every LN_PROC of `tree`, the body of a function whose parameters
 * are params[0..nparams), to the end of `procs`, naming them prefix1,
 * prefix2, ... Each gets, as further parameters, the variables of the
 * function it reads (in the order they were declared), which its calls
 * pass; a parameter it does not read is dropped, with its calls' argument.
 * Its calls must follow it, in its list or deeper. */
void loops_outline(Arena *arena, LoopList *tree, const LoopVar *params, int nparams, const char *prefix,
                   LoopList *procs);

/* ---- names (tidy.c) ---- */
/* The name a local called `name` wanted before a clash gave it a numbered
 * suffix (k for k_2), or NULL (none, or one no local may have). */
typedef const char *(*LoopPlainName)(void *ctx, const char *name);
/* The pass that gives a suffixed local of a function's tree (its
 * parameters params[0..nparams)) its plain name wherever no name in scope
 * clashes with it and nothing in its scope mentions the plain name. */
void loops_tidy_names(Arena *arena, LoopList *tree, const LoopVar *params, int nparams, LoopPlainName plain,
                      void *ctx);

/* ---- chunk buffers (chunk.c) ---- */
/* The chunk-buffer pass: every element A[i] of the tree's C text, A one of
 * arrays[0..narrays), becomes A[i - shift]. The arrays are a softmax row
 * group's chunk buffers, which hold only the running chunk's rows, and
 * the tree a member op's nest built as if they held every row; `shift` is
 * the chunk's first element. */
void loops_shift_arrays(Arena *arena, LoopList *tree, const char *const *arrays, int narrays, const char *shift);

/* ---- binding dims (bind.c) ---- */
/* The bind pass: each loop of the tree marked with dim d (LoopNode.dim =
 * d + 1, d < nvalues) whose values[d] is not NULL runs for that value
 * only: the loop goes, its body takes its place, and its variable becomes
 * values[d] (a C identifier or constant) in the body's text. A row-fused
 * group's member (schedule/rows.c) is built as it would run alone, over
 * every row, and bound to the row of the group's loops. */
void loops_bind_dims(Arena *arena, LoopList *tree, const char *const *values, int nvalues);

/* ---- filling elements (fill.c) ---- */
/* The fill pass: in each store of the tree that reads an element of the
 * array `source` (LoopNode.source), that read becomes fill(ctx, coords,
 * ncoords), the element's value computed in place, and the mark goes. A
 * prologue (schedule/prologue.c) is a pointwise op whose result is never
 * stored: its consumer's pack copy, built as if it read the result,
 * computes each element as it copies it. */
typedef const char *(*LoopFill)(void *ctx, const char *const *coords, int ncoords);
void loops_fill_elements(Arena *arena, LoopList *tree, const char *source, LoopFill fill, void *ctx);

/* ---- inits and epilogues at the accumulators (acc.c) ---- */
/* Builds, into `into`, what replaces or precedes an accumulator load or
 * store of the builder's `site`: the init's values given to the
 * accumulators, or the epilogue applied to them and stored. */
typedef void (*LoopAttach)(void *ctx, const void *site, LoopList *into);
/* The init pass: when the tree knows where every reduction run of its
 * accumulators starts (each ACC_LOAD is inside loops over reduction dims
 * whose first iterations are known, and no reduction loop is shared
 * among threads), each load becomes `if (first) init; else load;` (the
 * init alone when every run is whole), the init built by init(ctx, site,
 * ...); a load by declarations keeps them, uninitialised. Returns whether
 * it did: if not, the tree is unchanged and the init must run before it
 * as a nest of its own. An op whose reduction starts from its init (a
 * convolution's bias) is built loading its output, as if the init had
 * run. */
bool loops_init_at_load(Arena *arena, LoopList *tree, LoopAttach init, void *ctx);
/* The epilogue pass: the same for each ACC_STORE and the runs' last
 * iterations (LoopNode.last): `if (last) epilogue; else store;`. If it
 * returns false, the epilogue must run after the tree as a nest of its
 * own. */
bool loops_epilogue_at_store(Arena *arena, LoopList *tree, LoopAttach epilogue, void *ctx);

/* ---- queries (loops.c) ---- */
/* Calls fn(ctx, text) for every piece of C text of the tree (expressions,
 * names, types, arguments; not comments), depth first. What the C printer
 * adds around them is no identifier of the program's. */
void loops_each_text(const LoopList *list, void (*fn)(void *, const char *), void *ctx);
/* Whether a loop of the tree (or a callee's) is shared among an enclosing
 * region's threads (an `omp for`), outside nested regions. */
bool loops_has_worksharing(const LoopList *list);
/* Whether a node of the tree has the thread_slots mark, outside nested
 * parallel regions (they keep their own teams within the slots). */
bool loops_uses_thread_slots(const LoopList *list);
/* The pass that caps a parallel region's team (an LN_BLOCK of
 * REGION_PARALLEL, a model graph's run) at the scratch area's thread slots
 * when its body uses them: threads becomes `cap`. Returns whether it did. */
bool loops_cap_threads(LoopNode *region, const char *cap);
/* The pass that moves a tree built to run alone (an op's, opening parallel
 * regions of its own) into an enclosing parallel region, a model graph's
 * run, whose threads then share its work: a parallel loop (PAR_REGION)
 * becomes an `omp for` of the enclosing region, and a parallel block
 * (REGION_PARALLEL) a scope every thread runs, followed by the barrier
 * that closing its own region gave. Their num_threads caps go: the
 * builder marked such nodes thread_slots, and loops_cap_threads caps the
 * enclosing region by the marks. */
void loops_join_region(Arena *arena, LoopList *list);
/* A fresh C identifier based on `base` (the builder's name table). */
typedef const char *(*LoopNamer)(void *ctx, const char *base);
/* What loops_claim used: counters (the int64_t array's length, 0: none,
 * then the array is not needed) and whether a nest was claimed. The
 * caller defines the runtime helpers the claimed code calls: lgen_claim,
 * lgen_finish and lgen_wait when counters > 0, and lgen_min when nests. */
typedef struct {
  int counters;
  bool nests;
} LoopClaims;
/* The claim pass (claim.c), on the ops of a model graph's one parallel
 * region (`list`, built for barriers: loops_join_region): each worksharing
 * nest becomes a loop over chunks the threads claim from a counter of the
 * array `array`, and each `omp single` a block the first thread to claim
 * it runs; a wait for all the chunks replaces the barrier. Loops inside
 * loops, with a reduction or simd on the collapsed nest keep their `omp
 * for`. Names the pass declares come from fresh(ctx, base). */
LoopClaims loops_claim(Arena *arena, LoopList *list, const char *array, LoopNamer fresh, void *ctx);
/* The first LN_FOR of the tree (depth first) with a PAR_REGION or
 * PAR_WORKSHARING mark, or NULL. */
LoopNode *loops_find_parallel(LoopList *list);

/* ---- identifiers (text.c) ---- */
/* The next identifier of the C text `text` at or after *p: its start, with
 * its length in *len and *p just past it; NULL (with *p at the end) when
 * there is none. Skipped: string and character literals (a --checks
 * message), comments ("pack l1 into l1_pack" is no use of l1), numbers
 * (with their letters: 1.0f, 0x1p-3), and member names (after `.` or
 * `->`, spaces aside), which name nothing of the enclosing scope. The
 * passes rename and find captures by it, and the C writer finds what a
 * function's statements use by it, so all agree on what an identifier
 * of the text is. */
const char *loops_next_ident(const char *text, const char **p, size_t *len);
/* Whether `name` is an identifier of the C text `text` (NULL: none), as
 * loops_next_ident reads identifiers. */
bool loops_text_mentions(const char *text, const char *name);

/* ---- printing ---- */
/* The width generated C keeps to where a line can break. */
enum { LOOPS_WIDTH = 100 };
/* One C line `text`, `columns` in, broken where it must be (after a comma
 * or a binary operator, the shallowest such place that fits, outside
 * literals and comments) into continuation lines `cont` columns in
 * (print_c.c). */
void loops_put_line(StrBuf *out, int columns, int cont, const char *text);
/* The tree as C at `indent` levels of two spaces (print_c.c). */
void loops_print_c(StrBuf *out, const LoopList *list, int indent);
/* The tree as compact text for --dump=loops (print_dump.c). */
void loops_print_dump(StrBuf *out, const LoopList *list, int indent);

#endif
