/* weights-blob.test's driver: runs the MLP example built three ways on the
 * same inputs and prints the largest difference from the embedded build.
 *   embedded: emb_mlp(x, y, N)            constants in the C file
 *   read:     blob_mlp(x, y, N, weights)  the blob read from a file
 *   linked:   blob_mlp(x, y, N, start)    the blob linked in by objcopy
 * Usage: driver BLOB N  (prints "maxdiff D maxabs A") */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "emb.h"
#include "blob.h"

extern const unsigned char _binary_w_bin_start[], _binary_w_bin_end[];

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  int64_t n = atoll(argv[2]);
  FILE *f = fopen(argv[1], "rb");
  if (!f)
    return 2;
  void *raw = malloc(blob_mlp_WEIGHTS_SIZE + 64);
  unsigned char *w = (unsigned char *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
  size_t got = fread(w, 1, blob_mlp_WEIGHTS_SIZE + 1, f);
  fclose(f);
  if (got != blob_mlp_WEIGHTS_SIZE) {
    printf("blob has %zu bytes, the header says %d\n", got, blob_mlp_WEIGHTS_SIZE);
    return 1;
  }
  if ((size_t)(_binary_w_bin_end - _binary_w_bin_start) != got || ((uintptr_t)_binary_w_bin_start & 63)) {
    printf("the linked blob differs in size or is not 64-byte aligned\n");
    return 1;
  }
  float *x = malloc(sizeof(float) * (size_t)(n * 16 + 1));
  float *y0 = malloc(sizeof(float) * (size_t)(n * 4 + 1));
  float *y1 = malloc(sizeof(float) * (size_t)(n * 4 + 1));
  float *y2 = malloc(sizeof(float) * (size_t)(n * 4 + 1));
  srand(7);
  for (int64_t i = 0; i < n * 16; i++)
    x[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
  if (emb_mlp(x, y0, n) || blob_mlp(x, y1, n, w) || blob_mlp(x, y2, n, _binary_w_bin_start))
    return 1;
  double diff = 0, mag = 0;
  for (int64_t i = 0; i < n * 4; i++) {
    mag = fmax(mag, fabs(y0[i]));
    diff = fmax(diff, fmax(fabs(y1[i] - y0[i]), fabs(y2[i] - y0[i])));
    if (y1[i] != y1[i] || y2[i] != y2[i])
      diff = INFINITY;
  }
  printf("maxdiff %g maxabs %g\n", diff, mag);
  free(raw);
  free(x);
  free(y0);
  free(y1);
  free(y2);
  return 0;
}
