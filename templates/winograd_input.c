/* Winograd input transform: V = B^T d B for every n x n tile d of the
 * zero-padded NHWC input [nb, h, w, c], n = m + 2 for output tiles of m x m
 * (m 2 or 6); tiles start every m rows and columns (th x tw of them per
 * image, p = (b * th + y) * tw + x) and V is [n, n, nb * th * tw, c], so that
 * each of the n * n points is one matmul.
 * F(2x2, 3x3): B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
 * F(6x6, 3x3): row k of B^T (k < 7) holds the coefficients, lowest power
 * first, of the product of (x - q) over the finite points q but the k-th
 * (row 0 negated, see winograd_filter.c), row 7 those of the product over
 * all seven.
 * Channels go in blocks of 32: the tile's rows of a block are copied (or
 * zeroed in the padding) into a local array, so that the arithmetic runs
 * over contiguous channels and vectorizes. */
static void lgen_winograd_input_@S@(const @T@ *restrict x, @T@ *restrict v,
                                    int64_t nb, int64_t h, int64_t w, int64_t c, int64_t th,
                                    int64_t tw, int64_t ph, int64_t pw, int m)
{
  static const double b6[8][8] = {
    {1, 0, -21. / 4, 0, 21. / 4, 0, -1, 0}, {0, 1, 1, -17. / 4, -17. / 4, 1, 1, 0},
    {0, -1, 1, 17. / 4, -17. / 4, -1, 1, 0}, {0, .5, .25, -5. / 2, -5. / 4, 2, 1, 0},
    {0, -.5, .25, 5. / 2, -5. / 4, -2, 1, 0}, {0, 2, 4, -5. / 2, -5, .5, 1, 0},
    {0, -2, 4, 5. / 2, -5, -.5, 1, 0}, {0, -1, 0, 21. / 4, 0, -21. / 4, 0, 1}};
  int64_t tiles = nb * th * tw;
  int n = m + 2;
  LGEN_OMP(omp for)
  for (int64_t p = 0; p < tiles; p++) {
    int64_t b = p / (th * tw), y0 = p / tw % th * m - ph, x0 = p % tw * m - pw;
    for (int64_t k0 = 0; k0 < c; k0 += 32) {
      int64_t kn = c - k0 < 32 ? c - k0 : 32;
      @T@ d[8][8][32], t[8][8][32];
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
          int64_t iy = y0 + i, ix = x0 + j;
          int outside = iy < 0 || iy >= h || ix < 0 || ix >= w;
          const @T@ *restrict s = outside ? 0 : x + ((b * h + iy) * w + ix) * c + k0;
          for (int64_t k = 0; k < kn; k++)
            d[i][j][k] = s ? s[k] : (@T@)0;
        }
      if (m == 6) {
        for (int i = 0; i < 8; i++) /* B^T d */
          for (int j = 0; j < 8; j++)
            for (int64_t k = 0; k < kn; k++) {
              @T@ acc = (@T@)0;
              for (int a = 0; a < 8; a++)
                acc += (@T@)b6[i][a] * d[a][j][k];
              t[i][j][k] = acc;
            }
        for (int i = 0; i < 8; i++) /* (B^T d) B */
          for (int j = 0; j < 8; j++) {
            @T@ *restrict q = v + (int64_t)(i * 8 + j) * tiles * c + p * c + k0;
            for (int64_t k = 0; k < kn; k++) {
              @T@ acc = (@T@)0;
              for (int a = 0; a < 8; a++)
                acc += t[i][a][k] * (@T@)b6[j][a];
              q[k] = acc;
            }
          }
        continue;
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
