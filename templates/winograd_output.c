/* Winograd output transform: Y = A^T M A for every tile's n x n products M
 * [n, n, nb * th * tw, f] (n = m + 2), written as the m x m output tile at
 * (m y, m x) of the NHWF result [nb, oh, ow, f] (cut at the edges).
 * F(2x2, 3x3): A^T = [1 1 1 0; 0 1 -1 -1].
 * F(6x6, 3x3): row i of A^T is p^i over the finite points p (0, 1, -1, 2,
 * -2, 1/2, -1/2), then 0 but for the last row's 1 (the point at
 * infinity).
 * Channels go in blocks of 32, as in winograd_input.c, so that the
 * arithmetic runs over contiguous channels and vectorizes. */
static void lgen_winograd_output_@S@(const @T@ *restrict mm, @T@ *restrict out,
                                     int64_t nb, int64_t oh, int64_t ow, int64_t f, int64_t th,
                                     int64_t tw, int m)
{
  static const double a6[6][8] = {
    {1, 1, 1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, .5, -.5, 0}, {0, 1, 1, 4, 4, .25, .25, 0},
    {0, 1, -1, 8, -8, 1. / 8, -1. / 8, 0}, {0, 1, 1, 16, 16, 1. / 16, 1. / 16, 0},
    {0, 1, -1, 32, -32, 1. / 32, -1. / 32, 1}};
  int64_t tiles = nb * th * tw;
  int n = m + 2;
  LGEN_OMP(omp for)
  for (int64_t p = 0; p < tiles; p++) {
    int64_t b = p / (th * tw), y0 = p / tw % th * m, x0 = p % tw * m;
    for (int64_t k0 = 0; k0 < f; k0 += 32) {
      int64_t kn = f - k0 < 32 ? f - k0 : 32;
      @T@ s[8][8][32], t[6][8][32];
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
          const @T@ *restrict q = mm + (int64_t)(i * n + j) * tiles * f + p * f + k0;
          for (int64_t k = 0; k < kn; k++)
            s[i][j][k] = q[k];
        }
      if (m == 6) {
        for (int i = 0; i < 6; i++) /* A^T M */
          for (int j = 0; j < 8; j++)
            for (int64_t k = 0; k < kn; k++) {
              @T@ acc = (@T@)0;
              for (int a = 0; a < 8; a++)
                acc += (@T@)a6[i][a] * s[a][j][k];
              t[i][j][k] = acc;
            }
        for (int i = 0; i < 6 && y0 + i < oh; i++) /* (A^T M) A */
          for (int j = 0; j < 6 && x0 + j < ow; j++) {
            @T@ *restrict q = out + ((b * oh + y0 + i) * ow + x0 + j) * f + k0;
            for (int64_t k = 0; k < kn; k++) {
              @T@ acc = (@T@)0;
              for (int a = 0; a < 8; a++)
                acc += t[i][a][k] * (@T@)a6[j][a];
              q[k] = acc;
            }
          }
        continue;
      }
      for (int j = 0; j < 4; j++) /* A^T M */
        for (int64_t k = 0; k < kn; k++) {
          t[0][j][k] = s[0][j][k] + s[1][j][k] + s[2][j][k];
          t[1][j][k] = s[1][j][k] - s[2][j][k] - s[3][j][k];
        }
      for (int i = 0; i < 2 && y0 + i < oh; i++) { /* (A^T M) A */
        @T@ *restrict q = out + ((b * oh + y0 + i) * ow + x0) * f + k0;
        for (int64_t k = 0; k < kn; k++)
          q[k] = t[i][0][k] + t[i][1][k] + t[i][2][k];
        if (x0 + 1 < ow)
          for (int64_t k = 0; k < kn; k++)
            q[f + k] = t[i][1][k] - t[i][2][k] - t[i][3][k];
      }
    }
  }
}
