/* time_model.c - time one lgen-generated model graph (bench/models).
 *
 *   time_model [--threads=T] [--warmup=W] [--runs=R] [--inputs=DIR]
 *
 * Calls the model through the glue that examples/models.py writes per model
 * (lgen_model_run with a workspace of lgen_model_workspace_size() bytes,
 * allocated once, 64-byte aligned, as contracts.md section 3 asks), on
 * random float inputs (or DIR/in_<i>.bin, raw, for inputs that must hold
 * something particular: token ids, a sample rate): W untimed warm-up runs,
 * then R timed ones. Prints
 *   lgen runs=R median_ms=... min_ms=... workspace_bytes=B times_ms=t,t,...
 * The median over several alternating blocks is taken by run_models.py. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

extern const int lgen_model_ninputs, lgen_model_noutputs;
extern const size_t lgen_model_input_bytes[], lgen_model_output_bytes[];
size_t lgen_model_workspace_size(void);
void lgen_model_run(void *const *in, void *const *out, void *workspace);

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static void *aligned(size_t bytes)
{
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? (bytes + 63) / 64 * 64 : 64) != 0) {
    fprintf(stderr, "time_model: out of memory (%zu bytes)\n", bytes);
    exit(2);
  }
  return p;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
  int threads = 1, warmup = 3, runs = 10;
  const char *dir = NULL;
  for (int i = 1; i < argc; i++) {
    if (sscanf(argv[i], "--threads=%d", &threads) == 1 || sscanf(argv[i], "--warmup=%d", &warmup) == 1 ||
        sscanf(argv[i], "--runs=%d", &runs) == 1)
      continue;
    if (strncmp(argv[i], "--inputs=", 9) == 0) {
      dir = argv[i] + 9;
      continue;
    }
    fprintf(stderr, "usage: time_model [--threads=T] [--warmup=W] [--runs=R] [--inputs=DIR]\n");
    return 2;
  }
  if (runs < 1 || lgen_model_ninputs > 16 || lgen_model_noutputs > 16)
    return 2;
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  void *in[16], *out[16];
  uint32_t s = 12345u;
  for (int i = 0; i < lgen_model_ninputs; i++) {
    float *p = aligned(lgen_model_input_bytes[i]);
    if (dir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/in_%d.bin", dir, i);
      FILE *f = fopen(path, "rb");
      if (!f || fread(p, 1, lgen_model_input_bytes[i], f) != lgen_model_input_bytes[i]) {
        fprintf(stderr, "time_model: cannot read %zu bytes from %s\n", lgen_model_input_bytes[i], path);
        return 2;
      }
      fclose(f);
      in[i] = p;
      continue;
    }
    for (size_t k = 0; k < lgen_model_input_bytes[i] / sizeof(float); k++) {
      s = s * 1664525u + 1013904223u;
      p[k] = (float)(s >> 8) * (2.0f / 16777216.0f) - 1.0f;
    }
    in[i] = p;
  }
  for (int i = 0; i < lgen_model_noutputs; i++)
    out[i] = aligned(lgen_model_output_bytes[i]);
  size_t ws_bytes = lgen_model_workspace_size();
  void *ws = aligned(ws_bytes);
  memset(ws, 0, ws_bytes);
  for (int r = 0; r < warmup; r++)
    lgen_model_run(in, out, ws);
  double *t = malloc(sizeof *t * (size_t)runs);
  if (!t)
    return 2;
  for (int r = 0; r < runs; r++) {
    double t0 = now_ms();
    lgen_model_run(in, out, ws);
    t[r] = now_ms() - t0;
  }
  printf("lgen runs=%d", runs);
  double *sorted = malloc(sizeof *sorted * (size_t)runs);
  if (!sorted)
    return 2;
  memcpy(sorted, t, sizeof *t * (size_t)runs);
  qsort(sorted, (size_t)runs, sizeof *sorted, cmp_double);
  double med = runs % 2 ? sorted[runs / 2] : 0.5 * (sorted[runs / 2 - 1] + sorted[runs / 2]);
  printf(" median_ms=%.4f min_ms=%.4f workspace_bytes=%zu times_ms=", med, sorted[0], ws_bytes);
  for (int r = 0; r < runs; r++)
    printf("%s%.4f", r ? "," : "", t[r]);
  printf("\n");
  return 0;
}
