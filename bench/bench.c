/* lgen benchmark harness (make bench; built and run by bench/run.sh).
 *
 * Times lgen-generated kernels (--schedule=auto as auto_*, --schedule=none as
 * none_*) against reference libraries (OpenBLAS, oneDNN) and, for the
 * bandwidth-bound cases, against the STREAM triad bandwidth measured in the
 * same run.  For each case and thread count, each variant runs once untimed
 * (the lgen results are checked against the reference result), then enough
 * timed repetitions for >= min_time seconds (at least MIN_REPS; a variant
 * slower than SLOW_RUN seconds per run gets CAP_REPS in all), and the median
 * is reported.  lgen auto and the references (for bandwidth cases: a STREAM
 * triad) are timed in ROUNDS alternating blocks rather than one after the
 * other, so that a slow phase of a shared, noisy machine slows them alike
 * and their ratio stays meaningful; none joins them unless it is slow or
 * timed on a slice (then it is timed in its own block).  Outputs are reset from a pristine copy before every run (lgen
 * kernels accumulate into their outputs); the reset is not timed.  The none
 * variant of a big GEMM would take minutes per run: it is timed and checked
 * on the first rows of M only (see none_slice).
 *
 * Options:
 *   --only=SUBSTR[,SUBSTR...]  run only the cases whose name contains one
 *   --threads=1,2              thread counts (default 1,2)
 *   --min-time=SECONDS         minimum timed seconds per variant (default 0.2)
 *   --list                     list the case names and stop
 * Output: "bench case=..." lines as each case finishes, then a table.
 * Exit status: 0 all lgen results correct, 1 some wrong, 2 usage/setup.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The generated headers first: OpenBLAS's cblas.h pulls in <complex.h>,
 * whose macro I would clash with parameter names such as I in the
 * prototypes. */
#include "auto.h"
#include "none.h"

#include <cblas.h>
#include <dnnl.h>
#ifdef I
#undef I
#endif

#define MIN_REPS 5
#define CAP_REPS 3
#define SLOW_RUN 1.0   /* seconds: a variant slower than this per run gets CAP_REPS */
#define MAX_REPS 100000
#define ROUNDS 5       /* alternating blocks of auto and reference runs */

static double min_time = 0.2;

/* ------------------------------------------------------------------------ */
/* Utilities                                                                */

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}

static void *xalloc(size_t bytes)
{
  void *p = NULL;
  if (bytes == 0)
    bytes = 64;
  if (posix_memalign(&p, 64, (bytes + 63) / 64 * 64) != 0) {
    fprintf(stderr, "bench: out of memory (%zu bytes)\n", bytes);
    exit(2);
  }
  return p;
}

#define RNG_SEED 0x9E3779B97F4A7C15ull
static uint64_t rng_state = RNG_SEED;

static float frand(void) /* uniform in [-1, 1) */
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (float)((double)(rng_state >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

static float *rand_f32(size_t n)
{
  float *p = xalloc(n * sizeof *p);
  for (size_t i = 0; i < n; ++i)
    p[i] = frand();
  return p;
}

static double *rand_f64(size_t n)
{
  double *p = xalloc(n * sizeof *p);
  for (size_t i = 0; i < n; ++i)
    p[i] = (double)frand();
  return p;
}

static float *fill_f32(size_t n, float v)
{
  float *p = xalloc(n * sizeof *p);
  for (size_t i = 0; i < n; ++i)
    p[i] = v;
  return p;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void set_threads(int t)
{
  omp_set_num_threads(t);
  openblas_set_num_threads(t);
}

/* ------------------------------------------------------------------------ */
/* oneDNN helpers                                                           */

static dnnl_engine_t eng;
static dnnl_stream_t strm;

#define DNNL_CHECK(call)                                                        \
  do {                                                                          \
    dnnl_status_t s_ = (call);                                                  \
    if (s_ != dnnl_success) {                                                   \
      fprintf(stderr, "bench: oneDNN error %d at %s:%d: %s\n", (int)s_,         \
              __FILE__, __LINE__, #call);                                       \
      exit(2);                                                                  \
    }                                                                           \
  } while (0)

typedef struct {
  dnnl_primitive_t prim;
  dnnl_memory_t mem[3];
  int arg[3];
  int nargs;
  char impl[64];
} dnnl_op;

/* Creates the primitive for desc and its memories over the user buffers
 * ptrs[i] (plain layouts mds[i]).  If pack_arg >= 0, that argument's layout
 * was left to oneDNN (format any): its user data are reordered once, here,
 * into a library-allocated buffer of the layout the primitive chose, as an
 * inference deployment would pre-pack weights.  Nothing of this is timed. */
static void dnnl_op_init(dnnl_op *op, const_dnnl_op_desc_t desc, const dnnl_memory_desc_t *mds[],
                         void *ptrs[], const int args[], int nargs, int pack_arg,
                         dnnl_query_t pack_query)
{
  dnnl_primitive_desc_t pd;
  const char *impl = NULL;
  memset(op, 0, sizeof *op);
  DNNL_CHECK(dnnl_primitive_desc_create(&pd, desc, NULL, eng, NULL));
  DNNL_CHECK(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
  snprintf(op->impl, sizeof op->impl, "%s", impl ? impl : "?");
  for (int i = 0; i < nargs; ++i) {
    op->arg[i] = args[i];
    if (i != pack_arg) {
      DNNL_CHECK(dnnl_memory_create(&op->mem[i], mds[i], eng, ptrs[i]));
      continue;
    }
    const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, pack_query, 0);
    if (dnnl_memory_desc_equal(want, mds[i])) {
      DNNL_CHECK(dnnl_memory_create(&op->mem[i], mds[i], eng, ptrs[i]));
      continue;
    }
    dnnl_memory_t user;
    dnnl_primitive_desc_t rpd;
    dnnl_primitive_t reorder;
    DNNL_CHECK(dnnl_memory_create(&user, mds[i], eng, ptrs[i]));
    DNNL_CHECK(dnnl_memory_create(&op->mem[i], want, eng, DNNL_MEMORY_ALLOCATE));
    DNNL_CHECK(dnnl_reorder_primitive_desc_create(&rpd, mds[i], eng, want, eng, NULL));
    DNNL_CHECK(dnnl_primitive_create(&reorder, rpd));
    dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, op->mem[i]}};
    DNNL_CHECK(dnnl_primitive_execute(reorder, strm, 2, ra));
    DNNL_CHECK(dnnl_stream_wait(strm));
    dnnl_primitive_destroy(reorder);
    dnnl_primitive_desc_destroy(rpd);
    dnnl_memory_destroy(user);
  }
  DNNL_CHECK(dnnl_primitive_create(&op->prim, pd));
  DNNL_CHECK(dnnl_primitive_desc_destroy(pd));
  op->nargs = nargs;
}

static void dnnl_op_run(dnnl_op *op)
{
  dnnl_exec_arg_t a[3];
  for (int i = 0; i < op->nargs; ++i) {
    a[i].arg = op->arg[i];
    a[i].memory = op->mem[i];
  }
  DNNL_CHECK(dnnl_primitive_execute(op->prim, strm, op->nargs, a));
  DNNL_CHECK(dnnl_stream_wait(strm));
}

static void dnnl_op_free(dnnl_op *op)
{
  if (!op->prim)
    return;
  for (int i = 0; i < op->nargs; ++i)
    dnnl_memory_destroy(op->mem[i]);
  dnnl_primitive_destroy(op->prim);
  op->prim = NULL;
}

/* Forward convolution, src NHWC, dst NHWC, no padding.  Weights: HWIO
 * (groups == 1) or HWC depthwise (groups == C: hwigo with i = o = 1); with
 * any_weights the primitive picks its weights layout and the HWIO/HWC data
 * are reordered into it once (untimed). */
static void dnnl_conv_init(dnnl_op *op, int any_weights, int depthwise, int64_t n, int64_t ih,
                           int64_t iw, int64_t c, int64_t kh, int64_t kw, int64_t f, int64_t oh,
                           int64_t ow, int64_t sh, int64_t sw, float *in, float *wt, float *out)
{
  dnnl_memory_desc_t src, w, w_any, dst;
  dnnl_convolution_desc_t cd;
  dnnl_dims_t sd = {n, c, ih, iw}, dd = {n, f, oh, ow};
  dnnl_dims_t strides = {sh, sw}, pad = {0, 0};
  DNNL_CHECK(dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32, dnnl_nhwc));
  DNNL_CHECK(dnnl_memory_desc_init_by_tag(&dst, 4, dd, dnnl_f32, dnnl_nhwc));
  if (depthwise) {
    dnnl_dims_t wd = {c, 1, 1, kh, kw};
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&w, 5, wd, dnnl_f32, dnnl_hwigo));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&w_any, 5, wd, dnnl_f32, dnnl_format_tag_any));
  } else {
    dnnl_dims_t wd = {f, c, kh, kw};
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&w, 4, wd, dnnl_f32, dnnl_hwio));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&w_any, 4, wd, dnnl_f32, dnnl_format_tag_any));
  }
  DNNL_CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                                &src, any_weights ? &w_any : &w, NULL, &dst,
                                                strides, pad, pad));
  const dnnl_memory_desc_t *mds[3] = {&src, &w, &dst};
  void *ptrs[3] = {in, wt, out};
  int args[3] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
  dnnl_op_init(op, &cd, mds, ptrs, args, 3, any_weights ? 1 : -1, dnnl_query_weights_md);
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                    */

enum { V_AUTO, V_NONE, V_REF, V_REF2, NV };
static const char *const vname[NV] = {"auto", "none", "ref", "ref2"};

typedef struct bcase bcase;
struct bcase {
  const char *name;
  const char *ref_name;  /* "openblas", "onednn", "triad" */
  const char *ref2_name; /* optional second reference, reported alongside */
  const char *note;      /* shown under the table */
  int bandwidth;         /* 1: report GB/s; the ref rate is the triad bandwidth */
  int f64;               /* output element type */
  double work;           /* flops (or comparisons) per run; bytes if bandwidth */
  double tol;            /* max_rel_err allowed for the lgen variants */
  void (*setup)(bcase *);
  /* run[V_REF] computes the reference result; for bandwidth cases it is an
   * untimed oracle.  run[V_REF2] may be NULL. */
  void (*run[NV])(bcase *);
  void (*teardown)(bcase *);
  const char *(*impl)(bcase *, int v); /* oneDNN implementation name, or NULL */
  /* Optional: make run[V_NONE] compute only the first `rows` of the output's
   * `nrows` leading rows (returns nrows); see none_slice(). */
  int64_t (*none_rows)(bcase *, int64_t rows);
  /* set by setup */
  void *out, *pristine;
  size_t out_n;
  void *st; /* case state */
};

static double triad_gbs[3]; /* by thread count */

/* -- GEMM family ---------------------------------------------------------- */

typedef struct {
  int64_t b, m, n, k;
  int64_t m_none; /* rows of C that the none variant computes */
  void *A, *B;
  dnnl_op op;
} gemm_st;

static gemm_st g_gemm;

static void gemm_setup_dims(bcase *c, int64_t b, int64_t m, int64_t n, int64_t k)
{
  gemm_st *s = &g_gemm;
  memset(s, 0, sizeof *s);
  s->b = b, s->m = m, s->n = n, s->k = k;
  s->m_none = m;
  c->st = s;
  c->out_n = (size_t)(b * m * n);
  c->work = 2.0 * (double)b * (double)m * (double)n * (double)k;
  if (c->f64) {
    s->A = rand_f64((size_t)(b * m * k));
    s->B = rand_f64((size_t)(b * k * n));
    c->out = xalloc(c->out_n * sizeof(double));
    c->pristine = xalloc(c->out_n * sizeof(double));
    for (size_t i = 0; i < c->out_n; ++i)
      ((double *)c->pristine)[i] = 0.0;
  } else {
    s->A = rand_f32((size_t)(b * m * k));
    s->B = rand_f32((size_t)(b * k * n));
    c->out = xalloc(c->out_n * sizeof(float));
    c->pristine = fill_f32(c->out_n, 0.0f);
  }
}

static void gemm_teardown(bcase *c)
{
  gemm_st *s = c->st;
  dnnl_op_free(&s->op);
  free(s->A);
  free(s->B);
}

static void sgemm256_setup(bcase *c) { gemm_setup_dims(c, 1, 256, 256, 256); }
static void sgemm512_setup(bcase *c) { gemm_setup_dims(c, 1, 512, 512, 512); }
static void sgemm1024_setup(bcase *c) { gemm_setup_dims(c, 1, 1024, 1024, 1024); }
static void sgemm2048_setup(bcase *c) { gemm_setup_dims(c, 1, 2048, 2048, 2048); }
static void skinny_setup(bcase *c) { gemm_setup_dims(c, 1, 64, 4096, 1024); }
static void dgemm_setup(bcase *c) { gemm_setup_dims(c, 1, 1024, 1024, 1024); }

static void sgemm_auto(bcase *c)
{
  gemm_st *s = c->st;
  auto_matmul(s->A, s->B, c->out, s->m, s->k, s->n);
}
static void sgemm_none(bcase *c)
{
  gemm_st *s = c->st;
  none_matmul(s->A, s->B, c->out, s->m_none, s->k, s->n);
}
static void sgemm_ref(bcase *c)
{
  gemm_st *s = c->st;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->m, (int)s->n, (int)s->k, 1.0f,
              s->A, (int)s->k, s->B, (int)s->n, 1.0f, c->out, (int)s->n);
}
static void dgemm_auto(bcase *c)
{
  gemm_st *s = c->st;
  auto_dgemm(s->A, s->B, c->out, s->m, s->k, s->n);
}
static void dgemm_none(bcase *c)
{
  gemm_st *s = c->st;
  none_dgemm(s->A, s->B, c->out, s->m_none, s->k, s->n);
}
static void dgemm_ref(bcase *c)
{
  gemm_st *s = c->st;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->m, (int)s->n, (int)s->k, 1.0,
              s->A, (int)s->k, s->B, (int)s->n, 1.0, c->out, (int)s->n);
}

/* Row-major A and C: the first rows of C need only the first rows of A, so
 * the none kernel can run on a slice of M with the same K and N. */
static int64_t gemm_none_rows(bcase *c, int64_t rows)
{
  gemm_st *s = c->st;
  s->m_none = rows;
  return s->m;
}

static void bmm_setup(bcase *c)
{
  gemm_setup_dims(c, 32, 128, 128, 128);
  gemm_st *s = c->st;
  dnnl_memory_desc_t a, b, d;
  dnnl_matmul_desc_t md;
  dnnl_dims_t ad = {s->b, s->m, s->k}, bd = {s->b, s->k, s->n}, dd = {s->b, s->m, s->n};
  DNNL_CHECK(dnnl_memory_desc_init_by_tag(&a, 3, ad, dnnl_f32, dnnl_abc));
  DNNL_CHECK(dnnl_memory_desc_init_by_tag(&b, 3, bd, dnnl_f32, dnnl_abc));
  DNNL_CHECK(dnnl_memory_desc_init_by_tag(&d, 3, dd, dnnl_f32, dnnl_abc));
  DNNL_CHECK(dnnl_matmul_desc_init(&md, &a, &b, NULL, &d));
  const dnnl_memory_desc_t *mds[3] = {&a, &b, &d};
  void *ptrs[3] = {s->A, s->B, c->out};
  int args[3] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
  dnnl_op_init(&s->op, &md, mds, ptrs, args, 3, -1, dnnl_query_undef);
}
static void bmm_auto(bcase *c)
{
  gemm_st *s = c->st;
  auto_batch_matmul(s->A, s->B, c->out, s->b, s->m, s->k, s->n);
}
static void bmm_none(bcase *c)
{
  gemm_st *s = c->st;
  none_batch_matmul(s->A, s->B, c->out, s->b, s->m, s->k, s->n);
}
static void bmm_ref(bcase *c) { dnnl_op_run(&((gemm_st *)c->st)->op); }
static const char *bmm_impl(bcase *c, int v)
{
  return v == V_REF ? ((gemm_st *)c->st)->op.impl : NULL;
}

/* -- Convolutions and pooling --------------------------------------------- */

typedef struct {
  int64_t n, ih, iw, c, kh, kw, f, oh, ow;
  int64_t strides[2], dilations[2];
  float *in, *wt;
  dnnl_op op, op2; /* ref: weights layout chosen by oneDNN; ref2: plain */
} conv_st;

static conv_st g_conv;

static void conv_common(bcase *c, int64_t ih, int64_t iw, int64_t ch, int64_t kh, int64_t kw,
                        int64_t f, int64_t stride, size_t wt_n, float init)
{
  conv_st *s = &g_conv;
  memset(s, 0, sizeof *s);
  c->st = s;
  s->n = 1, s->ih = ih, s->iw = iw, s->c = ch, s->kh = kh, s->kw = kw, s->f = f;
  s->strides[0] = s->strides[1] = stride;
  s->dilations[0] = s->dilations[1] = 1;
  s->oh = (ih - kh) / stride + 1;
  s->ow = (iw - kw) / stride + 1;
  s->in = rand_f32((size_t)(s->n * ih * iw * ch));
  s->wt = rand_f32(wt_n);
  c->out_n = (size_t)(s->n * s->oh * s->ow * f);
  c->out = xalloc(c->out_n * sizeof(float));
  c->pristine = fill_f32(c->out_n, init);
}

static void conv_teardown(bcase *c)
{
  conv_st *s = c->st;
  dnnl_op_free(&s->op);
  dnnl_op_free(&s->op2);
  free(s->in);
  free(s->wt);
}

static void conv_setup_sz(bcase *c, int64_t hw, int64_t ch, int64_t f)
{
  /* valid 3x3 convolution: input (hw+2)^2, output hw^2 */
  conv_common(c, hw + 2, hw + 2, ch, 3, 3, f, 1, (size_t)(3 * 3 * ch * f), 0.0f);
  conv_st *s = c->st;
  c->work = 2.0 * (double)(s->n * s->oh * s->ow * s->f * s->kh * s->kw * s->c);
  dnnl_conv_init(&s->op, 1, 0, s->n, s->ih, s->iw, s->c, s->kh, s->kw, s->f, s->oh, s->ow, 1, 1,
                 s->in, s->wt, c->out);
  dnnl_conv_init(&s->op2, 0, 0, s->n, s->ih, s->iw, s->c, s->kh, s->kw, s->f, s->oh, s->ow, 1, 1,
                 s->in, s->wt, c->out);
}
static void conv56_setup(bcase *c) { conv_setup_sz(c, 56, 64, 64); }
static void conv28_setup(bcase *c) { conv_setup_sz(c, 28, 128, 128); }
static void conv_auto(bcase *c)
{
  conv_st *s = c->st;
  auto_conv_2d_nhwc_hwcf(s->in, s->wt, c->out, s->n, s->ih, s->iw, s->c, s->kh, s->kw, s->f,
                         s->oh, s->ow, s->strides, s->dilations);
}
static void conv_none(bcase *c)
{
  conv_st *s = c->st;
  none_conv_2d_nhwc_hwcf(s->in, s->wt, c->out, s->n, s->ih, s->iw, s->c, s->kh, s->kw, s->f,
                         s->oh, s->ow, s->strides, s->dilations);
}
static void dnnl_conv_ref(bcase *c) { dnnl_op_run(&((conv_st *)c->st)->op); }
static void dnnl_conv_ref2(bcase *c) { dnnl_op_run(&((conv_st *)c->st)->op2); }
static const char *conv_impl(bcase *c, int v)
{
  conv_st *s = c->st;
  return v == V_REF ? s->op.impl : v == V_REF2 ? s->op2.impl : NULL;
}

static void dw_setup(bcase *c)
{
  conv_common(c, 58, 58, 64, 3, 3, 64, 1, (size_t)(3 * 3 * 64), 0.0f);
  conv_st *s = c->st;
  c->work = 2.0 * (double)(s->n * s->oh * s->ow * s->c * s->kh * s->kw);
  dnnl_conv_init(&s->op, 1, 1, s->n, s->ih, s->iw, s->c, s->kh, s->kw, s->c, s->oh, s->ow, 1, 1,
                 s->in, s->wt, c->out);
  dnnl_conv_init(&s->op2, 0, 1, s->n, s->ih, s->iw, s->c, s->kh, s->kw, s->c, s->oh, s->ow, 1, 1,
                 s->in, s->wt, c->out);
}
static void dw_auto(bcase *c)
{
  conv_st *s = c->st;
  auto_depthwise_conv_2d_nhwc_hwc(s->in, s->wt, c->out, s->n, s->ih, s->iw, s->c, s->kh, s->kw,
                                  s->oh, s->ow, s->strides, s->dilations);
}
static void dw_none(bcase *c)
{
  conv_st *s = c->st;
  none_depthwise_conv_2d_nhwc_hwc(s->in, s->wt, c->out, s->n, s->ih, s->iw, s->c, s->kh, s->kw,
                                  s->oh, s->ow, s->strides, s->dilations);
}

static void pool_setup(bcase *c)
{
  /* lgen's K is a shape-only window operand (never read): s->wt has 3x3. */
  conv_common(c, 113, 113, 64, 3, 3, 64, 2, 3 * 3, -INFINITY);
  conv_st *s = c->st;
  c->work = (double)(s->n * s->oh * s->ow * s->c * s->kh * s->kw);
  dnnl_memory_desc_t src, dst;
  dnnl_pooling_desc_t pd;
  dnnl_dims_t sd = {s->n, s->c, s->ih, s->iw}, dd = {s->n, s->c, s->oh, s->ow};
  dnnl_dims_t strides = {s->strides[0], s->strides[1]}, kernel = {s->kh, s->kw}, pad = {0, 0};
  DNNL_CHECK(dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32, dnnl_nhwc));
  DNNL_CHECK(dnnl_memory_desc_init_by_tag(&dst, 4, dd, dnnl_f32, dnnl_nhwc));
  DNNL_CHECK(dnnl_pooling_forward_desc_init(&pd, dnnl_forward_inference, dnnl_pooling_max, &src,
                                            &dst, strides, kernel, pad, pad));
  const dnnl_memory_desc_t *mds[2] = {&src, &dst};
  void *ptrs[2] = {s->in, c->out};
  int args[2] = {DNNL_ARG_SRC, DNNL_ARG_DST};
  dnnl_op_init(&s->op, &pd, mds, ptrs, args, 2, -1, dnnl_query_undef);
}
static void pool_auto(bcase *c)
{
  conv_st *s = c->st;
  auto_pooling_nhwc_max(s->in, s->wt, c->out, s->n, s->ih, s->iw, s->c, s->kh, s->kw, s->oh,
                        s->ow, s->strides, s->dilations);
}
static void pool_none(bcase *c)
{
  conv_st *s = c->st;
  none_pooling_nhwc_max(s->in, s->wt, c->out, s->n, s->ih, s->iw, s->c, s->kh, s->kw, s->oh,
                        s->ow, s->strides, s->dilations);
}

/* -- Bandwidth cases ------------------------------------------------------ */

#define RS_R 4096L
#define RS_C 4096L
#define EW_N (16L << 20)

typedef struct {
  float *x, *b, a, zero;
} bw_st;

static bw_st g_bw;

static void rowsum_setup(bcase *c)
{
  bw_st *s = &g_bw;
  memset(s, 0, sizeof *s);
  c->st = s;
  s->x = rand_f32((size_t)(RS_R * RS_C));
  c->out_n = RS_R;
  c->out = xalloc(RS_R * sizeof(float));
  c->pristine = rand_f32(RS_R); /* accumulates onto a non-zero initial value */
  /* bytes that must move: X once, Y read and written */
  c->work = 4.0 * RS_R * RS_C + 2.0 * 4.0 * RS_R;
}
static void rowsum_auto(bcase *c) { auto_row_sum(((bw_st *)c->st)->x, c->out, RS_R, RS_C); }
static void rowsum_none(bcase *c) { none_row_sum(((bw_st *)c->st)->x, c->out, RS_R, RS_C); }
static void rowsum_oracle(bcase *c)
{
  const float *x = ((bw_st *)c->st)->x;
  float *y = c->out;
  for (long r = 0; r < RS_R; ++r) {
    double acc = y[r];
    for (long j = 0; j < RS_C; ++j)
      acc += x[r * RS_C + j];
    y[r] = (float)acc;
  }
}

static void axpb_setup(bcase *c)
{
  bw_st *s = &g_bw;
  memset(s, 0, sizeof *s);
  c->st = s;
  s->x = rand_f32((size_t)EW_N);
  s->b = rand_f32((size_t)EW_N);
  s->a = 1.5f;
  s->zero = 0.0f;
  c->out_n = EW_N;
  c->out = xalloc(EW_N * sizeof(float));
  c->pristine = fill_f32(EW_N, 7.0f); /* overwritten: a purely parallel op */
  /* bytes that must move: x, b read, y written (STREAM counting) */
  c->work = 3.0 * 4.0 * EW_N;
}
static void axpb_auto(bcase *c)
{
  bw_st *s = c->st;
  auto_axpb_relu(&s->a, s->x, s->b, &s->zero, c->out, EW_N);
}
static void axpb_none(bcase *c)
{
  bw_st *s = c->st;
  none_axpb_relu(&s->a, s->x, s->b, &s->zero, c->out, EW_N);
}
static void axpb_oracle(bcase *c)
{
  bw_st *s = c->st;
  float *y = c->out;
  for (long i = 0; i < EW_N; ++i) {
    float v = s->a * s->x[i] + s->b[i];
    y[i] = v > s->zero ? v : s->zero;
  }
}

static void bw_teardown(bcase *c)
{
  bw_st *s = c->st;
  free(s->x);
  free(s->b);
}

/* -- The case table ------------------------------------------------------- */

#define SGEMM(nm, tag)                                                          \
  {.name = nm, .ref_name = "openblas", .tol = 1e-3, .setup = tag##_setup,       \
   .run = {sgemm_auto, sgemm_none, sgemm_ref, NULL}, .teardown = gemm_teardown, \
   .none_rows = gemm_none_rows}

#define CONV_NOTE                                                               \
  "oneDNN f32 forward conv, nhwc src/dst, valid, stride 1, primitive created "  \
  "once. ref: weights in the layout oneDNN picks (format any), reordered once " \
  "from HWIO outside the timing; ref2 (onednn_hwio): weights used as HWIO"

static bcase cases[] = {
    SGEMM("sgemm_256", sgemm256),
    SGEMM("sgemm_512", sgemm512),
    SGEMM("sgemm_1024", sgemm1024),
    SGEMM("sgemm_2048", sgemm2048),
    {.name = "dgemm_1024", .ref_name = "openblas", .f64 = 1, .tol = 1e-10, .setup = dgemm_setup,
     .run = {dgemm_auto, dgemm_none, dgemm_ref, NULL}, .teardown = gemm_teardown,
     .none_rows = gemm_none_rows},
    SGEMM("sgemm_64x4096x1024", skinny),
    {.name = "batch_matmul_32x128x128x128", .ref_name = "onednn",
     .note = "oneDNN matmul primitive, 3-D batched, plain abc layouts", .tol = 1e-3,
     .setup = bmm_setup, .run = {bmm_auto, bmm_none, bmm_ref, NULL}, .teardown = gemm_teardown,
     .impl = bmm_impl},
    {.name = "conv2d_nhwc_hwcf_58x58x64_3x3x64", .ref_name = "onednn", .ref2_name = "onednn_hwio",
     .note = CONV_NOTE, .tol = 1e-3, .setup = conv56_setup,
     .run = {conv_auto, conv_none, dnnl_conv_ref, dnnl_conv_ref2}, .teardown = conv_teardown,
     .impl = conv_impl},
    {.name = "conv2d_nhwc_hwcf_30x30x128_3x3x128", .ref_name = "onednn",
     .ref2_name = "onednn_hwio", .note = CONV_NOTE, .tol = 1e-3, .setup = conv28_setup,
     .run = {conv_auto, conv_none, dnnl_conv_ref, dnnl_conv_ref2}, .teardown = conv_teardown,
     .impl = conv_impl},
    {.name = "depthwise_nhwc_hwc_58x58x64_3x3", .ref_name = "onednn", .ref2_name = "onednn_hwigo",
     .note = "oneDNN f32 forward conv with groups=C (depthwise), nhwc, valid, stride 1. ref: "
             "weights layout picked by oneDNN, reordered once untimed; ref2 (onednn_hwigo): "
             "weights used as hwigo (= HWC, i=o=1)",
     .tol = 1e-4, .setup = dw_setup, .run = {dw_auto, dw_none, dnnl_conv_ref, dnnl_conv_ref2},
     .teardown = conv_teardown, .impl = conv_impl},
    {.name = "maxpool_nhwc_113x113x64_3x3s2", .ref_name = "onednn",
     .note = "oneDNN pooling_max forward_inference, nhwc, no padding; GFLOP/s counts one "
             "comparison per window element",
     .tol = 0.0, .setup = pool_setup, .run = {pool_auto, pool_none, dnnl_conv_ref, NULL},
     .teardown = conv_teardown, .impl = conv_impl},
    {.name = "row_sum_4096x4096", .ref_name = "triad", .bandwidth = 1,
     .note = "GB/s of the bytes that must move (X once, Y in and out); ref = STREAM triad GB/s, "
             "timed alongside; checked against a double-accumulated C loop",
     .tol = 1e-3, .setup = rowsum_setup, .run = {rowsum_auto, rowsum_none, rowsum_oracle, NULL},
     .teardown = bw_teardown},
    {.name = "axpb_relu_16M", .ref_name = "triad", .bandwidth = 1,
     .note = "GB/s counting x, b read and y written (STREAM convention); ref = STREAM triad "
             "GB/s, timed alongside; checked against a plain C loop",
     .tol = 1e-6, .setup = axpb_setup, .run = {axpb_auto, axpb_none, axpb_oracle, NULL},
     .teardown = bw_teardown},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* ------------------------------------------------------------------------ */
/* Measurement                                                              */

static void reset_out(bcase *c)
{
  memcpy(c->out, c->pristine, c->out_n * (c->f64 ? sizeof(double) : sizeof(float)));
}

/* max over elements of |got - ref| / max(|ref|, 1e-2 * max|ref|): a relative
 * error that stays meaningful for results near zero.  A NaN/inf mismatch is
 * infinite. */
static double max_rel_err(const bcase *c, const void *ref, size_t n)
{
  double refmax = 0.0, err = 0.0;
  for (size_t i = 0; i < n; ++i) {
    double r = c->f64 ? ((const double *)ref)[i] : ((const float *)ref)[i];
    if (isfinite(r) && fabs(r) > refmax)
      refmax = fabs(r);
  }
  double floor_ = refmax > 0 ? 1e-2 * refmax : 1e-30;
  for (size_t i = 0; i < n; ++i) {
    double r = c->f64 ? ((const double *)ref)[i] : ((const float *)ref)[i];
    double g = c->f64 ? ((const double *)c->out)[i] : ((const float *)c->out)[i];
    double e;
    if (g == r || (isnan(g) && isnan(r)))
      e = 0.0;
    else if (!isfinite(g) || !isfinite(r))
      e = INFINITY;
    else
      e = fabs(g - r) / fmax(fabs(r), floor_);
    if (!(e <= err))
      err = e;
  }
  return err;
}

typedef struct {
  double median;
  int reps, capped;
} timing;

static double median_of(double *t, int n)
{
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Timed repetitions after a warm-up run that took t_first seconds.  A slow
 * variant (t_first > SLOW_RUN) gets CAP_REPS samples in all, the warm-up
 * counting as the first. */
static timing time_variant(bcase *c, void (*fn)(bcase *), double t_first)
{
  timing tm = {0, 0, 0};
  int reps, i = 0;
  if (t_first > SLOW_RUN) {
    reps = CAP_REPS;
    tm.capped = 1;
  } else {
    double r = ceil(min_time / fmax(t_first, 1e-7));
    reps = r < MIN_REPS ? MIN_REPS : r > MAX_REPS ? MAX_REPS : (int)r;
  }
  double *t = xalloc((size_t)reps * sizeof *t);
  if (tm.capped)
    t[i++] = t_first;
  for (; i < reps; ++i) {
    reset_out(c);
    double t0 = now();
    fn(c);
    t[i] = now() - t0;
  }
  tm.median = median_of(t, reps);
  tm.reps = reps;
  free(t);
  return tm;
}

/* The none variant of a big GEMM runs for minutes (its plain m-n-k loops
 * stride through B).  Time a probe of NONE_PROBE_ROWS rows of C; if all of M
 * would take more than NONE_FULL_MAX seconds, run none on only as many
 * leading rows as fit in about NONE_SLICE_TARGET seconds (at least the
 * probe's).  Returns the rows chosen; *nrows_out gets M. */
#define NONE_FULL_MAX 1.5
#define NONE_SLICE_TARGET 0.3
#define NONE_PROBE_ROWS 4

static int64_t none_slice(bcase *c, int64_t *nrows_out)
{
  int64_t nrows = c->none_rows(c, NONE_PROBE_ROWS), rows = nrows;
  *nrows_out = nrows;
  if (nrows > NONE_PROBE_ROWS) {
    reset_out(c);
    double t0 = now();
    c->run[V_NONE](c);
    double tp = now() - t0;
    if (tp * (double)nrows / NONE_PROBE_ROWS > NONE_FULL_MAX) {
      rows = (int64_t)(NONE_SLICE_TARGET / tp * NONE_PROBE_ROWS) / 4 * 4;
      rows = rows < NONE_PROBE_ROWS ? NONE_PROBE_ROWS : rows > nrows ? nrows : rows;
    }
  }
  c->none_rows(c, rows);
  return rows;
}

/* STREAM triad, a[i] = b[i] + s * c[i], 3 arrays of 16M floats. */
#define TRIAD_N (16L << 20)
static float *ta, *tb, *tc;

static void triad_kernel(float s)
{
  float *restrict a = ta;
  const float *restrict b = tb, *restrict c = tc;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < TRIAD_N; ++i)
    a[i] = b[i] + s * c[i];
}

static void run_triad(bcase *c)
{
  (void)c;
  triad_kernel(3.0f);
}
#define TRIAD_BYTES (3.0 * 4.0 * (double)TRIAD_N)

static double measure_triad(int threads, int *reps_out)
{
  set_threads(threads);
  triad_kernel(3.0f); /* warm-up */
  double t0 = now();
  triad_kernel(3.0f);
  double t1 = now() - t0;
  int reps = (int)ceil(min_time / t1);
  if (reps < 10)
    reps = 10;
  double *t = xalloc((size_t)reps * sizeof *t);
  for (int i = 0; i < reps; ++i) {
    t0 = now();
    triad_kernel(3.0f);
    t[i] = now() - t0;
  }
  double med = median_of(t, reps);
  free(t);
  *reps_out = reps;
  return TRIAD_BYTES / med / 1e9;
}

/* Times fns[0..n-1] (first runs took tfirst[i]) in ROUNDS alternating
 * blocks, each fn getting as many repetitions in all as time_variant would
 * give it.  library[i]: fns[i] leaves worker threads spinning (OpenBLAS);
 * with threads > 1 the next block waits for them to stop. */
static void time_interleaved(bcase *c, void (*const *fns)(bcase *), const double *tfirst, const int *library,
                             int n, int threads, timing *out)
{
  double *samples[NV + 1];
  int reps[NV + 1], taken[NV + 1];
  for (int i = 0; i < n; ++i) {
    double r = ceil(min_time / fmax(tfirst[i], 1e-7));
    reps[i] = r < MIN_REPS ? MIN_REPS : r > MAX_REPS ? MAX_REPS : (int)r;
    samples[i] = xalloc((size_t)reps[i] * sizeof(double));
    taken[i] = 0;
  }
  for (int round = 0; round < ROUNDS; ++round) {
    for (int i = 0; i < n; ++i) {
      int stop = (int)((long)reps[i] * (round + 1) / ROUNDS);
      for (; taken[i] < stop; ++taken[i]) {
        reset_out(c);
        double t0 = now();
        fns[i](c);
        samples[i][taken[i]] = now() - t0;
      }
      if (library[i] && threads > 1)
        sleep_ms(100);
    }
  }
  for (int i = 0; i < n; ++i) {
    out[i].median = median_of(samples[i], reps[i]);
    out[i].reps = reps[i];
    out[i].capped = 0;
    free(samples[i]);
  }
}

/* ------------------------------------------------------------------------ */
/* Reporting                                                                */

typedef struct {
  const bcase *c;
  int threads;
  double rate[NV]; /* GFLOP/s or GB/s; rate[V_REF] = triad for bandwidth cases */
  double ms[NV];
  int reps[NV], capped[NV];
  double err; /* max over the lgen variants */
  int ok;
  int64_t none_rows, none_nrows; /* none ran on rows of nrows output rows */
  double ref2_err;                /* ref2 against ref */
} result;

static result results[64];
static int nresults;

static void loadavg(char *buf, size_t n)
{
  FILE *f = fopen("/proc/loadavg", "r");
  buf[0] = '\0';
  if (f) {
    if (fgets(buf, (int)n, f))
      buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
  }
}

static void print_table(void)
{
  printf("\n%-35s %3s %9s %9s %9s %-12s %8s %8s %9s %-12s %9s  %s\n", "case", "thr", "auto",
         "none", "ref", "ref_is", "auto/ref", "auto/no", "ref2", "ref2_is", "max_rel_err",
         "status");
  for (int i = 0; i < nresults; ++i) {
    const result *r = &results[i];
    char none_s[32], ref2_s[32];
    snprintf(none_s, sizeof none_s, "%.2f%s%s", r->rate[V_NONE], r->capped[V_NONE] ? "*" : "",
             r->none_rows < r->none_nrows ? "~" : "");
    if (r->c->run[V_REF2])
      snprintf(ref2_s, sizeof ref2_s, "%.2f", r->rate[V_REF2]);
    else
      snprintf(ref2_s, sizeof ref2_s, "-");
    printf("%-35s %3d %9.2f %9s %9.2f %-12s %8.3f %8.2f %9s %-12s %9.2e  %s%s\n", r->c->name,
           r->threads, r->rate[V_AUTO], none_s, r->rate[V_REF], r->c->ref_name,
           r->rate[V_AUTO] / r->rate[V_REF], r->rate[V_AUTO] / r->rate[V_NONE], ref2_s,
           r->c->ref2_name ? r->c->ref2_name : "-", r->err, r->ok ? "ok" : "WRONG",
           r->c->bandwidth ? " [GB/s]" : "");
  }
  printf("\nRates: GFLOP/s, or GB/s where marked [GB/s] (then ref = STREAM triad timed alongside the "
         "case; at the start of the run it gave");
  for (int t = 1; t <= 2; ++t)
    if (triad_gbs[t] > 0)
      printf(" %dT %.2f", t, triad_gbs[t]);
  printf(" GB/s).\nTimes: median of >= %d timed reps and >= %.2f s per variant, auto, the "
         "references and (when not sliced) none in %d alternating blocks; * = slow variant (one run > %.1f s) capped at %d "
         "runs, the checked warm-up run counting as one, timed one variant after the other.\n",
         MIN_REPS, min_time, ROUNDS, SLOW_RUN, CAP_REPS);
  printf("~ = none timed (and checked) on a slice of the first rows of M (a run on all M "
         "would take > %.1f s; rows in the bench line): same K, N and loop nest, so the same "
         "GFLOP/s.\n",
         NONE_FULL_MAX);
  printf("max_rel_err: max |lgen - ref| / max(|ref|, 1e-2 max|ref|) over auto and none.\n");
  printf("References:\n  openblas: cblas_sgemm/cblas_dgemm, row-major, beta=1\n");
  const char *seen[NCASES];
  int nseen = 0;
  for (int i = 0; i < nresults; ++i) {
    const bcase *c = results[i].c;
    int dup = 0;
    if (!c->note)
      continue;
    for (int j = 0; j < nseen; ++j)
      dup |= seen[j] == c->note;
    if (dup)
      continue;
    seen[nseen++] = c->note;
    printf("  %s: %s\n", c->name, c->note);
  }
}

/* ------------------------------------------------------------------------ */

static int selected(const char *name, const char *only)
{
  if (!only)
    return 1;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", only);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
    if (strstr(name, tok))
      return 1;
  return 0;
}

int main(int argc, char **argv)
{
  const char *only = NULL;
  int threads[2] = {1, 2}, nthreads = 2;
  for (int i = 1; i < argc; ++i) {
    if (!strncmp(argv[i], "--only=", 7)) {
      only = argv[i] + 7;
    } else if (!strncmp(argv[i], "--threads=", 10)) {
      char *p = argv[i] + 10;
      nthreads = 0;
      while (*p) {
        long t = strtol(p, &p, 10);
        if (t < 1 || t > 2 || nthreads == 2 || (*p && *p != ',')) {
          fprintf(stderr, "bench: --threads takes 1 and/or 2, e.g. --threads=1,2\n");
          return 2;
        }
        threads[nthreads++] = (int)t;
        if (*p == ',')
          ++p;
      }
      if (nthreads == 0) {
        fprintf(stderr, "bench: --threads takes 1 and/or 2, e.g. --threads=1,2\n");
        return 2;
      }
    } else if (!strncmp(argv[i], "--min-time=", 11)) {
      min_time = atof(argv[i] + 11);
    } else if (!strcmp(argv[i], "--list")) {
      for (int k = 0; k < NCASES; ++k)
        printf("%s\n", cases[k].name);
      return 0;
    } else {
      fprintf(stderr, "usage: bench [--only=SUBSTR,...] [--threads=1,2] [--min-time=S] [--list]\n");
      return 2;
    }
  }

  char la[128];
  const dnnl_version_t *dv = dnnl_version();
  loadavg(la, sizeof la);
  printf("lgen bench: threads");
  for (int t = 0; t < nthreads; ++t)
    printf(" %d", threads[t]);
  printf("; %s; oneDNN %d.%d.%d (%s runtime); loadavg at start: %s\n", openblas_get_config(),
         dv->major, dv->minor, dv->patch, dv->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other",
         la);
  fflush(stdout);

  DNNL_CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
  DNNL_CHECK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));

  /* STREAM triad first: the bandwidth cases are judged against it. */
  ta = fill_f32(TRIAD_N, 0.0f);
  tb = rand_f32(TRIAD_N);
  tc = rand_f32(TRIAD_N);
  for (int ti = 0; ti < nthreads; ++ti) {
    int t = threads[ti], reps;
    triad_gbs[t] = measure_triad(t, &reps);
    printf("bench case=stream_triad threads=%d gbs=%.3f reps=%d\n", t, triad_gbs[t], reps);
    fflush(stdout);
  }
  /* ta, tb, tc stay: bandwidth cases time the triad again, interleaved */

  int failures = 0, ran = 0;
  for (int ci = 0; ci < NCASES; ++ci) {
    bcase *c = &cases[ci];
    if (!selected(c->name, only))
      continue;
    ++ran;
    for (int ti = 0; ti < nthreads; ++ti) {
      int t = threads[ti];
      /* Set up per thread count: oneDNN fixes a primitive's thread count when
       * the primitive is created, so primitives made under 1 thread would run
       * on 1 thread in the 2-thread rows too. The inputs are the same each
       * time (the generator restarts from its seed). */
      set_threads(t);
      rng_state = RNG_SEED;
      c->setup(c);
      size_t esz = c->f64 ? sizeof(double) : sizeof(float);
      void *refout = xalloc(c->out_n * esz);
      reset_out(c);
      c->run[V_REF](c);
      memcpy(refout, c->out, c->out_n * esz);

      result *r = &results[nresults++];
      memset(r, 0, sizeof *r);
      r->c = c;
      r->threads = t;
      r->ok = 1;
      set_threads(t);
      /* Warm-up runs (the lgen results are checked against the reference).
       * none is timed right away, in its own block; auto and the references
       * after, in alternating blocks (time_interleaved). */
      double tfirst[NV] = {0};
      int none_interleaved = 0;
      for (int v = 0; v < NV; ++v) {
        if (!c->run[v] || (v == V_REF && c->bandwidth))
          continue;
        size_t check_n = c->out_n;
        double work = c->work;
        int64_t nrows = 0, rows = 0;
        if (v == V_NONE && c->none_rows) {
          rows = none_slice(c, &nrows);
          check_n = c->out_n / (size_t)nrows * (size_t)rows;
          work = c->work * (double)rows / (double)nrows;
          r->none_rows = rows;
          r->none_nrows = nrows;
        }
        reset_out(c);
        double t0 = now();
        c->run[v](c);
        tfirst[v] = now() - t0;
        if (v == V_REF2) /* a harness sanity check: both references agree */
          r->ref2_err = max_rel_err(c, refout, check_n);
        if (v == V_AUTO || v == V_NONE) {
          double e = max_rel_err(c, refout, check_n);
          if (!(e <= r->err))
            r->err = e;
          if (!(e <= c->tol)) {
            r->ok = 0;
            fprintf(stderr,
                    "bench: FAIL case=%s threads=%d variant=lgen_%s max_rel_err=%.3e (tolerance "
                    "%.1e): the lgen result disagrees with the reference\n",
                    c->name, t, vname[v], e, c->tol);
          }
        }
        int none_apart = rows < nrows || tfirst[v] > SLOW_RUN; /* sliced or slow */
        if (v == V_NONE && none_apart) {
          timing tm = time_variant(c, c->run[v], tfirst[v]);
          r->ms[v] = 1e3 * tm.median;
          r->reps[v] = tm.reps;
          r->capped[v] = tm.capped;
          r->rate[v] = work / tm.median / 1e9;
        }
        if (v == V_NONE)
          none_interleaved = !none_apart;
        if (rows)
          c->none_rows(c, nrows);
        if (v >= V_REF)
          sleep_ms(100); /* let library worker threads stop spinning */
      }
      void (*fns[NV + 1])(bcase *);
      double tf[NV + 1];
      int library[NV + 1], which[NV + 1], n = 0, slow = 0;
      for (int v = 0; v < NV; ++v) {
        if ((v == V_NONE && !none_interleaved) || !c->run[v] || (v == V_REF && c->bandwidth))
          continue;
        fns[n] = c->run[v];
        tf[n] = tfirst[v];
        library[n] = v >= V_REF;
        which[n++] = v;
        slow |= tfirst[v] > SLOW_RUN && v != V_NONE;
      }
      if (c->bandwidth) { /* the triad is the reference: timed alongside */
        run_triad(c);
        double t0 = now();
        run_triad(c);
        tf[n] = now() - t0;
        fns[n] = run_triad;
        library[n] = 0;
        which[n++] = V_REF;
      }
      timing tms[NV + 1];
      if (slow) {
        for (int i = 0; i < n; ++i) {
          tms[i] = time_variant(c, fns[i], tf[i]);
          if (library[i])
            sleep_ms(100);
        }
      } else {
        time_interleaved(c, fns, tf, library, n, t, tms);
      }
      for (int i = 0; i < n; ++i) {
        int v = which[i];
        r->ms[v] = 1e3 * tms[i].median;
        r->reps[v] = tms[i].reps;
        r->capped[v] = tms[i].capped;
        r->rate[v] = (c->bandwidth && v == V_REF ? TRIAD_BYTES : c->work) / tms[i].median / 1e9;
      }
      if (!r->ok)
        ++failures;

      const char *u = c->bandwidth ? "gbs" : "gflops";
      printf("bench case=%s threads=%d auto_%s=%.3f none_%s=%.3f ref=%s ref_%s=%.3f "
             "auto_over_ref=%.4f auto_over_none=%.3f max_rel_err=%.3e status=%s",
             c->name, t, u, r->rate[V_AUTO], u, r->rate[V_NONE], c->ref_name, u, r->rate[V_REF],
             r->rate[V_AUTO] / r->rate[V_REF], r->rate[V_AUTO] / r->rate[V_NONE], r->err,
             r->ok ? "ok" : "WRONG");
      if (c->run[V_REF2])
        printf(" ref2=%s ref2_%s=%.3f ref2_err=%.3e", c->ref2_name, u, r->rate[V_REF2],
               r->ref2_err);
      printf(" auto_ms=%.4f none_ms=%.4f", r->ms[V_AUTO], r->ms[V_NONE]);
      if (!c->bandwidth)
        printf(" ref_ms=%.4f", r->ms[V_REF]);
      printf(" auto_reps=%d none_reps=%d%s", r->reps[V_AUTO], r->reps[V_NONE],
             r->capped[V_NONE] ? "(capped)" : "");
      if (r->none_rows && r->none_rows < r->none_nrows)
        printf(" none_rows=%lld/%lld", (long long)r->none_rows, (long long)r->none_nrows);
      if (!c->bandwidth)
        printf(" ref_reps=%d", r->reps[V_REF]);
      if (c->impl) {
        for (int v = V_REF; v < NV; ++v) {
          const char *im = c->run[v] ? c->impl(c, v) : NULL;
          if (im)
            printf(" %s_impl=%s", vname[v], im);
        }
      }
      printf("\n");
      fflush(stdout);
      free(refout);
      c->teardown(c);
      free(c->out);
      free(c->pristine);
    }
  }
  if (!ran) {
    fprintf(stderr, "bench: --only=%s matches no case (see --list)\n", only ? only : "");
    return 2;
  }

  print_table();
  loadavg(la, sizeof la);
  printf("loadavg at end: %s\n", la);
  if (failures)
    printf("\nbench: FAILED: %d case/thread combination(s) gave WRONG results (FAIL lines on "
           "stderr)\n",
           failures);
  else
    printf("\nbench: all lgen results match the references\n");
  dnnl_stream_destroy(strm);
  dnnl_engine_destroy(eng);
  return failures ? 1 : 0;
}
