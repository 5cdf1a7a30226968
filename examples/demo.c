/* demo.c - calls kernels that lgen generated, and checks them against plain
 * reference loops.
 *
 * The network is a two-layer perceptron, Y = relu(X W1 + b1) W2 + b2,
 * computed twice:
 *   1. with the single kernel mlp() from mlp.tc;
 *   2. op by op, with broadcast_rows() and relu() from mlp.tc and matmul()
 *      from the op library specs/linalg.tc.
 * Both are compared with the reference loops at the end of this file; the
 * program prints the largest absolute error and OK, or MISMATCH and exits
 * with status 1.
 *
 * Things the generated code expects from its caller (lgen(1), KERNEL ABI):
 *   - tensors are dense row-major arrays, passed inputs first, then outputs;
 *   - then the size symbols as int64_t, in order of first appearance in the
 *     signature: matmul(A: f32(M, K), B: f32(K, N)) takes M, K, N, but
 *     broadcast_rows(bias: f32(N)) -> (Y: f32(B, N)) takes N, then B;
 *   - outputs are read-modify-write: matmul adds A B onto what C holds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "linalg.h"
#include "mlp.h"

enum { B = 64, I = 128, J = 96, O = 10 };

/* A fixed pseudo-random pattern in [-1, 1): the same on every machine. */
static uint32_t seed = 12345u;
static float next_value(void) {
  seed = seed * 1664525u + 1013904223u;
  return (float)(seed >> 8) / (float)(1u << 23) - 1.0f;
}

static void fill_pattern(float *x, size_t n, float scale) {
  for (size_t i = 0; i < n; i++)
    x[i] = scale * next_value();
}

static double max_abs_diff(const float *x, const double *ref, size_t n) {
  double worst = 0.0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)x[i] - ref[i]);
    if (!(d <= worst)) /* also catches NaN */
      worst = d;
  }
  return worst;
}

static void reference(const float *X, const float *W1, const float *b1, const float *W2, const float *b2,
                      double *H, double *Y) {
  for (int b = 0; b < B; b++)
    for (int j = 0; j < J; j++) {
      double acc = b1[j];
      for (int i = 0; i < I; i++)
        acc += (double)X[b * I + i] * W1[i * J + j];
      H[b * J + j] = acc > 0.0 ? acc : 0.0;
    }
  for (int b = 0; b < B; b++)
    for (int o = 0; o < O; o++) {
      double acc = b2[o];
      for (int j = 0; j < J; j++)
        acc += H[b * J + j] * W2[j * O + o];
      Y[b * O + o] = acc;
    }
}

int main(void) {
  static float X[B * I], W1[I * J], b1[J], W2[J * O], b2[O];
  static float H[B * J], Y[B * O];           /* path 1 */
  static float P1[B * J], A1[B * J], Y2[B * O]; /* path 2 */
  static double Href[B * J], Yref[B * O];
  const float zero = 0.0f;

  fill_pattern(X, B * I, 1.0f);
  fill_pattern(W1, I * J, 0.2f);
  fill_pattern(b1, J, 0.5f);
  fill_pattern(W2, J * O, 0.2f);
  fill_pattern(b2, O, 0.5f);

  /* 1. one kernel; it overwrites H and Y, so they need no initial value */
  mlp(X, W1, b1, W2, b2, &zero, H, Y, B, I, J, O);

  /* 2. op by op: start each layer's output at its bias, let matmul
   * accumulate onto it, then apply the ReLU */
  broadcast_rows(b1, P1, J, B); /* sizes N = J, B = B */
  matmul(X, W1, P1, B, I, J);   /* P1 += X W1 */
  relu(P1, &zero, A1, B, J);
  broadcast_rows(b2, Y2, O, B);
  matmul(A1, W2, Y2, B, J, O);  /* Y2 += A1 W2 */

  reference(X, W1, b1, W2, b2, Href, Yref);

  double err1 = max_abs_diff(H, Href, B * J), e = max_abs_diff(Y, Yref, B * O);
  if (!(e <= err1))
    err1 = e;
  double err2 = max_abs_diff(A1, Href, B * J);
  e = max_abs_diff(Y2, Yref, B * O);
  if (!(e <= err2))
    err2 = e;

#ifdef _OPENMP
  printf("built with OpenMP (_OPENMP = %d)\n", (int)_OPENMP);
#else
  printf("built without OpenMP\n");
#endif
  printf("mlp: X %dx%d, W1 %dx%d, W2 %dx%d; Y[0][0..2] = %.6f %.6f %.6f\n", B, I, I, J, J, O, (double)Y[0],
         (double)Y[1], (double)Y[2]);
  printf("mlp() from mlp.tc:                  max abs error %.3g\n", err1);
  printf("matmul (linalg.tc) + mlp.tc layers: max abs error %.3g\n", err2);

  /* float sums of ~100 terms of size ~0.1, against a double reference */
  const double tolerance = 1e-4;
  if (err1 <= tolerance && err2 <= tolerance) {
    printf("OK\n");
    return 0;
  }
  printf("MISMATCH (tolerance %g)\n", tolerance);
  return 1;
}
