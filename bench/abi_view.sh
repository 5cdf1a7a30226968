#!/bin/sh
# bench/abi_view.sh LGEN [N] - a matmul N x N x N (default 512) through the
# dense ABI and through --abi=view: with dense row-major views (the entry
# point's test sends them to the same scheduled kernel), with A and B blocks
# of arrays one column wider (innermost stride 1: the scheduled nest over
# strides) and, for scale, with a transposed B (the plain nest over
# strides). One binary, the calls interleaved, 1 thread; prints the median
# of 11 runs of each and the ratios to the dense ABI. Not part of make check.
set -e
LGEN=${1:?usage: bench/abi_view.sh LGEN [N]}
N=${2:-512}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/abi-view-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$LGEN" --prefix=d_ "$here/../tests/abi-view/views.tc" -o "$dir/d.c" -H "$dir/d.h"
"$LGEN" --prefix=v_ --abi=view "$here/../tests/abi-view/views.tc" -o "$dir/v.c" -H "$dir/v.h"
cat >"$dir/main.c" <<'C'
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "d.h"
#include "v.h"
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
int main(int argc, char **argv) {
  int64_t n = atoll(argv[1]);
  enum { R = 11 };
  float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n), *c = malloc(sizeof(float) * n * n);
  for (int64_t i = 0; i < n * n; i++)
    a[i] = (float)(i % 7) / 7, b[i] = (float)(i % 5) / 5, c[i] = 0;
  lgen_memref_f32_2 A = {a, a, 0, {n, n}, {n, 1}}, B = {b, b, 0, {n, n}, {n, 1}}, C = {c, c, 0, {n, n}, {n, 1}};
  lgen_memref_f32_2 BT = {b, b, 0, {n, n}, {1, n}};
  /* blocks of arrays one column wider: innermost stride 1, not dense */
  float *a1 = malloc(sizeof(float) * n * (n + 1)), *b1 = malloc(sizeof(float) * n * (n + 1));
  for (int64_t i = 0; i < n * (n + 1); i++)
    a1[i] = (float)(i % 7) / 7, b1[i] = (float)(i % 5) / 5;
  lgen_memref_f32_2 A1 = {a1, a1, 1, {n, n}, {n + 1, 1}}, B1 = {b1, b1, 1, {n, n}, {n + 1, 1}};
  double td[R], tv[R], ts[R], tb[R];
  for (int r = 0; r < R; r++) {
    double t0 = now();
    d_matmul(a, b, c, n, n, n);
    double t1 = now();
    v_matmul(&A, &B, &C, n, n, n);
    double t2 = now();
    v_matmul(&A, &BT, &C, n, n, n);
    double t3 = now();
    v_matmul(&A1, &B1, &C, n, n, n);
    double t4 = now();
    td[r] = t1 - t0, tv[r] = t2 - t1, ts[r] = t3 - t2, tb[r] = t4 - t3;
  }
  qsort(td, R, sizeof *td, cmp), qsort(tv, R, sizeof *tv, cmp), qsort(ts, R, sizeof *ts, cmp);
  qsort(tb, R, sizeof *tb, cmp);
  printf("matmul %lld^3, median of %d: dense ABI %.3f ms, view (dense strides) %.3f ms, ratio %.3f; "
         "view (A, B blocks of wider arrays: scheduled nest over strides) %.3f ms, ratio %.3f; "
         "view (B transposed, strided nest) %.3f ms\n",
         (long long)n, R, 1e3 * td[R / 2], 1e3 * tv[R / 2], tv[R / 2] / td[R / 2], 1e3 * tb[R / 2],
         tb[R / 2] / td[R / 2], 1e3 * ts[R / 2]);
  free(a), free(b), free(c), free(a1), free(b1);
  return 0;
}
C
${CC:-gcc} -std=c99 -O3 -march=native -fopenmp -I"$dir" "$dir/main.c" "$dir/d.c" "$dir/v.c" -o "$dir/bench" -lm
OMP_NUM_THREADS=1 "$dir/bench" "$N"
