/* lgen.h - the lgen library: Einstein-notation op specs in, C99 kernels out.
 *
 *   lgen_source src = {"matmul.tc", text, strlen(text)};
 *   lgen_options opt = {0};
 *   lgen_output out;
 *   int status = lgen_compile(&src, 1, &opt, &out);
 *   if (status == 0) fputs(out.c_source, f); else fputs(out.diagnostics, stderr);
 *   lgen_output_free(&out);
 *
 * The library keeps no global state and never exits the process; every
 * compilation owns its memory and frees it in lgen_output_free. */
#ifndef LGEN_H
#define LGEN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LGEN_VERSION "0.1.0"

typedef struct {
  const char *name; /* shown in diagnostics, e.g. the path given by the user */
  const char *text;
  size_t len;
} lgen_source;

typedef struct {
  const char *prefix;      /* prepended to every exported symbol; NULL for none */
  int checks;              /* non-zero: kernels verify their sizes at entry */
  const char *header_name; /* the .c includes this header; NULL for none */
  const char *guard;       /* header include guard; NULL derives one from header_name */
  const char *schedule;    /* "none", "auto" (NULL means auto), or "file": schedule_file below */
  const lgen_source *schedule_file; /* a YAML schedule, with schedule = "file" */
  const char *target;      /* machine model for auto; NULL: the default (x86-64-avx2) */
  /* model graphs (.json sources) */
  const char *input_format; /* for sources named none of *.tc, *.yaml, *.json and *.onnx
                               (standard input): "tc", "yaml", "json", "onnx" (binary ONNX),
                               or NULL to tell them apart by content */
  const char *name;         /* the graphs' C entry point G (NULL: from the graph's name) */
  const char *fuse;         /* "auto" (NULL means auto) or "none" */
  int separate_weights;     /* non-zero: constants go to lgen_output.weights, not c_source */
  long long max_constant_bytes; /* bytes of constants a model may make lgen hold; 0: 2 GiB */
  const char *opdsl;        /* OpDSL YAML defs: "[OP.]KEY=VALUE,..." choosing type variables
                               (U=i32), fn attributes (cast=cast_unsigned) and the rank of
                               elementwise ops (rank=2); NULL: f32 and rank 1 */
  const char *const *allow_external; /* folders besides a model's own that its data files may be in */
  size_t nallow_external;
  /* Model graphs' symbolic dims fixed before shape inference: dims[i] is
   * "NAME=VALUE" (a symbolic dim), input_shapes[i] "NAME=D0,D1,..." (an
   * input's whole shape). A name the models lack is LGEN_USAGE_ERROR. */
  const char *const *dims;
  size_t ndims;
  const char *const *input_shapes;
  size_t ninput_shapes;
  /* input_values[i] "NAME=V0,V1,...": graph input NAME becomes a constant
   * of these values (one value fills it) and leaves the entry point. */
  const char *const *input_values;
  size_t ninput_values;
  const char *dump;         /* stages to print the program after, comma-separated ("fuse,loops";
                               NULL: none); see lgen_dump_stage_known */
  int no_ir;                /* non-zero: lgen_output.ir is left empty (its text takes time on big graphs) */
  int weights_blob;         /* with separate_weights: lgen_output.weights is a binary blob that
                               G_run takes (--weights=FILE.bin), not a C file */
  int constant_values;      /* non-zero: embedded constants are lists of values, never string
                               literals of their little-endian bytes (--constants=values) */
  const char *abi;          /* a def's kernel ABI: "dense" (NULL means dense) or "view" (each
                               tensor a strided memref descriptor; model graphs stay dense) */
  const char *conv_algorithm; /* a graph conv's algorithm where neither a schedule file nor its
                                 `algorithm` attribute sets one: "auto" (NULL means auto:
                                 Winograd F(2x2, 3x3) where it pays) or "direct" */
} lgen_options;

typedef struct {
  char *c_source;    /* the kernels */
  char *header;      /* their prototypes */
  char *ir;          /* the structured-op IR, as --emit=ir prints it */
  char *op_list;     /* one line per op, as --list-ops prints it */
  char *schedule;    /* the decisions taken, as YAML that a schedule file accepts */
  char *weights;     /* with separate_weights: the graphs' constants, a C file of their own
                        (or with weights_blob, the blob: weights_size bytes, NULs inside) */
  char *depends;     /* files read besides the sources (constants' data files), one per line */
  char *diagnostics; /* errors and warnings, gcc style, with source lines and carets */
  char *dump;        /* with options.dump: the program after each stage asked for (set on failure too) */
  int errors;
  int warnings;
  size_t weights_size; /* bytes of weights */
} lgen_output;

enum { LGEN_OK = 0, LGEN_INPUT_ERROR = 1, LGEN_USAGE_ERROR = 2, LGEN_INTERNAL_ERROR = 3 };

/* Returns LGEN_OK, LGEN_INPUT_ERROR (diagnostics say why), LGEN_USAGE_ERROR
 * (an option does not fit the input: dims or input shapes it names), or
 * LGEN_INTERNAL_ERROR (an lgen bug, or a file it needs that cannot be read;
 * also described in diagnostics). On
 * failure only `diagnostics` and `dump` are set. */
int lgen_compile(const lgen_source *sources, size_t nsources, const lgen_options *options, lgen_output *out);
void lgen_output_free(lgen_output *out);

/* Non-zero if NAME is a machine model lgen_options.target accepts. */
int lgen_target_known(const char *name);
/* The machine models' names, "x86-64-avx512, x86-64-avx2, ...", into buf
 * (at most size - 1 bytes and a NUL). */
void lgen_target_names(char *buf, size_t size);
/* Non-zero if NAME is a stage lgen_options.dump accepts: parse, graph,
 * lower, fuse, schedule, plan, loops. */
int lgen_dump_stage_known(const char *name);

#ifdef __cplusplus
}
#endif

#endif
