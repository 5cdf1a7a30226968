/* c_emit.h - the C writer: the one place that owns C names, types, literals,
 * indentation and pragmas. It turns IR kernels into a C99 source file and a
 * header under the kernel ABI of contracts.md section 2.
 *
 *   c_names.c  C identifiers: sanitised, never a keyword, never colliding
 *   c_expr.c   payload ops as C expressions, with their exact C semantics
 *   c_emit.c   files, functions, loop nests, OpenMP pragmas, --checks */
#ifndef LGEN_C_EMIT_H
#define LGEN_C_EMIT_H

#include "analysis/analysis.h"
#include "graph/passes.h"
#include "schedule/schedule.h"

/* The templates of non-structured ops (templates/NAME.c), read before
 * emission by templates_load (src/templates.c), so that the emitter does no
 * I/O. */
typedef struct {
  const char *name; /* "topk" */
  const char *path; /* where it was read (for -MD) */
  const char *text;
} TemplateFile;

typedef struct {
  int count;
  TemplateFile *files;
} TemplateSet;

/* Reads the template of every ExtOp in m, once each, from $LGEN_TEMPLATE_DIR
 * when set, else the installed folder, else the source tree's templates/;
 * appends the paths read to deps (const char*). A missing template is an
 * error. */
void templates_load(TemplateSet *set, const Module *m, PtrVec *deps, Arena *arena, Diag *diag);

typedef struct {
  const char *prefix;      /* on every exported symbol; "" for none */
  bool checks;             /* emit the run-time size checks */
  const char *header_name; /* #include "header_name" from the .c; NULL for none */
  const char *guard;       /* include guard macro of the header */
  const char *input_name;  /* for the "generated from" line */
  OpPlan **plans;          /* [kernel][op]: what each loop nest follows */
  const Target *target;
  /* [kernel]: the buffer plan of a model graph's kernel, NULL for a def
   * from a spec (the array itself may be NULL: no graphs). A graph kernel
   * G becomes G_workspace_size, G_run and G (contracts.md section 3). */
  BufferPlan **buffer_plans;
  bool separate_weights; /* graph constants go to emit_c_weights's file, extern here */
  /* With separate_weights: the constants are a binary blob (--weights=FILE.bin)
   * laid out by emit_weights_layout, which G_run takes as a parameter. */
  const struct WeightsLayout *blob;
  /* Embedded constants as lists of their values, never as string literals
   * of their little-endian bytes (--constants=values: big-endian targets). */
  bool constant_values;
  const TemplateSet *templates; /* for ExtOps; may be NULL when there are none */
  Diag *diag;                   /* internal errors (diag_bug) */
  StrBuf *dump_loops;           /* --dump=loops: each function's loop tree, or NULL */
  /* --abi=view: a def's function takes each tensor as a strided view
   * (c_view.c); the dense kernel stays, static, for views that are dense.
   * Model graphs keep the dense ABI. */
  bool abi_view;
} EmitOptions;

/* ---- the weights blob (--weights=FILE.bin) ----
 * Every constant of every graph (the pre-packed ones included), each at an
 * offset that is a multiple of 64, little-endian, as its C array would hold
 * it; the gaps are zero. The same blob serves every graph of the file. */
typedef struct {
  int graph;          /* the kernel's index in the module */
  const char *symbol; /* the name the run body reads it by */
  const char *name;   /* the graph's tensor (a pre-packed constant: its symbol) */
  ElemType type;
  int64_t count;      /* elements */
  int64_t offset;     /* bytes from the blob's start */
  const void *data;
} WeightsEntry;

typedef struct WeightsLayout {
  WeightsEntry *entries;
  int n, cap;
  int64_t size; /* bytes */
} WeightsLayout;

/* The layout: every graph's run body is built (and dropped) for the
 * pre-packed constants it defines. opt->blob must be NULL here. */
const WeightsLayout *emit_weights_layout(const Module *m, const EmitOptions *opt, Arena *arena);
/* The blob's bytes. */
void emit_weights_blob(StrBuf *out, const WeightsLayout *layout);

void emit_c_file(StrBuf *out, const Module *m, const EmitOptions *opt, Arena *arena);
void emit_c_header(StrBuf *out, const Module *m, const EmitOptions *opt, Arena *arena);
/* The graph kernels' constants as their own translation unit (--weights). */
void emit_c_weights(StrBuf *out, const Module *m, const EmitOptions *opt, Arena *arena);

/* ---- c_names.c ---- */
typedef struct {
  Arena *arena;
  StrMap taken;       /* name -> (intptr_t) how many times it is taken now (0: free) */
  PtrVec claimed;     /* char*: the names taken, in order (names_mark/names_release) */
  StrMap next_suffix; /* base -> (int *) the lowest suffix not yet known taken */
  StrMap reserved, macros; /* c_names.c's lists, for lookups */
  StrMap plain;       /* a local given a numbered suffix -> the name it wanted (names_plain) */
  bool locals;        /* claims from now on are locals (a kernel's own names are claimed) */
} NameTable;

void names_init(NameTable *t, Arena *arena);
/* A C identifier based on `base`, unique in the table, now taken. */
const char *names_claim(NameTable *t, const char *base);
/* name (an identifier) taken as it is. */
void names_take(NameTable *t, const char *name);
/* Names are scoped: names_release frees every name claimed since
 * names_mark, once the C scope that declared them has closed, so that a
 * sibling scope can take them again (no numbered suffix where no name
 * in scope clashes). */
int names_mark(const NameTable *t);
void names_release(NameTable *t, int mark);
/* The name a local claimed as `name` wanted before a clash gave it a
 * numbered suffix (k for k_2), when that name can be a local at all (not
 * reserved, not one of the function's own): for loops_tidy_names, which
 * gives it back where nothing in scope clashes. NULL otherwise. ctx: the
 * NameTable. */
const char *names_plain(void *ctx, const char *name);

/* Names of one kernel's parameters and locals in C. */
typedef struct {
  const char *function;
  const char **tensors;        /* of the kernel or op view being emitted (emitter_view) */
  const char **kernel_tensors; /* of the kernel: view_tensor[] indexes these */
  const char **sizes;
  const char **attrs;
  const char **attr_counts; /* T[] attributes: the element-count parameter */
  NameTable table;
} KernelNames;

void kernel_names_init(KernelNames *kn, const Kernel *k, const char *prefix, Arena *arena);
/* A graph's names, with its ops' outline and libcall functions (plans:
 * its OpPlans) taken first: no parameter or local hides one. */
void kernel_names_init_outlines(KernelNames *kn, const Kernel *k, const char *prefix, const OpPlan *plans,
                                Arena *arena);
/* Text from the input (names, doc strings, file names) made safe inside a
 * C block comment, or inside a string literal's quotes. */
const char *c_comment_text(Arena *arena, const char *s);
const char *c_string_text(Arena *arena, const char *s);
/* Every op becomes a distinct, legal C function name, or a located error. */
void check_function_names(const Module *m, const char *prefix, Arena *arena, Diag *diag);
/* Every outline and libcall name of the plans is free for a C function,
 * or a located error; blob: the constants are a --weights=FILE.bin blob. */
void check_outline_names(const Module *m, OpPlan **plans, const char *prefix, bool blob, Arena *arena, Diag *diag);

/* ---- c_expr.c ---- */
const char *c_type_name(ElemType t);
/* Exact C spelling of a float constant (hex), for type t. */
void c_float_literal(StrBuf *out, double value, ElemType t);
/* An integer constant of type t, exactly (v as elem_int_wrap gives it). */
void c_int_literal(StrBuf *out, int64_t v, ElemType t);

/* What the expressions written so far need of the file (its preludes and
 * headers): one per output file, which every ExprCtx writing into the file
 * points at. */
typedef struct {
  bool math;        /* libm: <math.h> */
  bool fma;         /* LGEN_FMAF (and <math.h>) */
  bool widens_f16;  /* LGEN_F16_TO_F32 */
  bool narrows_f16; /* LGEN_F32_TO_F16 */
  bool bits;        /* the f32 math helpers' bit copies (memcpy: <string.h>) */
} ExprNeeds;

typedef struct {
  const StructuredOp *op;
  const char **operand_values; /* C expression that reads each operand */
  const char **node_names;     /* set for nodes hoisted into temporaries */
  const char *const *dim_names; /* C expression of each dim's current value (PN_INDEX) */
  const char *const *size_names; /* C name of each size symbol (PN_SIZE) */
  StrBuf *helpers;             /* static inline helper definitions, deduplicated */
  PtrVec *helper_names;
  Arena *arena;
  ExprNeeds *needs; /* the file's */
} ExprCtx;

/* The C function computing fn (exp, log, tanh, erf) for type t; emits
 * lgen's vectorisable f32 helper once (templates call it). */
const char *c_math_function(ExprCtx *ctx, const char *fn, ElemType t);
/* The C expression for payload node `n`. */
void c_expr(StrBuf *out, ExprCtx *ctx, int n);

#endif
