/* Winograd F(2x2, 3x3) input transform: V = B^T d B for every 4x4 tile d
 * of the zero-padded NHWC input [nb, h, w, c]; tiles start every 2 rows and
 * columns (th x tw of them per image, p = (b * th + y) * tw + x) and V is
 * [4, 4, nb * th * tw, c], so that each of the 16 points is one matmul.
 *   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
 * Channels go in blocks of 32: the tile's 16 rows of a block are copied (or
 * zeroed in the padding) into a local array, so that the arithmetic runs
 * over contiguous channels and vectorizes. */
static void lgen_winograd_input_@S@(const @T@ *restrict x, @T@ *restrict v,
                                    int64_t nb, int64_t h, int64_t w, int64_t c, int64_t th,
                                    int64_t tw, int64_t ph, int64_t pw)
{
  int64_t tiles = nb * th * tw;
  LGEN_OMP(omp for)
  for (int64_t p = 0; p < tiles; p++) {
    int64_t b = p / (th * tw), y0 = p / tw % th * 2 - ph, x0 = p % tw * 2 - pw;
    for (int64_t k0 = 0; k0 < c; k0 += 32) {
      int64_t kn = c - k0 < 32 ? c - k0 : 32;
      @T@ d[4][4][32], t[4][4][32];
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
          int64_t iy = y0 + i, ix = x0 + j;
          int outside = iy < 0 || iy >= h || ix < 0 || ix >= w;
          const @T@ *restrict s = outside ? 0 : x + ((b * h + iy) * w + ix) * c + k0;
          for (int64_t k = 0; k < kn; k++)
            d[i][j][k] = s ? s[k] : (@T@)0;
        }
      for (int j = 0; j < 4; j++) /* B^T d */
        for (int64_t k = 0; k < kn; k++) {
          t[0][j][k] = d[0][j][k] - d[2][j][k];
          t[1][j][k] = d[1][j][k] + d[2][j][k];
          t[2][j][k] = d[2][j][k] - d[1][j][k];
          t[3][j][k] = d[1][j][k] - d[3][j][k];
        }
      for (int i = 0; i < 4; i++) { /* (B^T d) B */
        @T@ *restrict q = v + (int64_t)(i * 4) * tiles * c + p * c + k0;
        for (int64_t k = 0; k < kn; k++) {
          q[0 * tiles * c + k] = t[i][0][k] - t[i][2][k];
          q[1 * tiles * c + k] = t[i][1][k] + t[i][2][k];
          q[2 * tiles * c + k] = t[i][2][k] - t[i][1][k];
          q[3 * tiles * c + k] = t[i][1][k] - t[i][3][k];
        }
      }
    }
  }
}
