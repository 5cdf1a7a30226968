/* Winograd F(2x2, 3x3) output transform: Y = A^T M A for every tile's
 * 4x4 products M [4, 4, nb * th * tw, f], written as the 2x2 output tile at
 * (2 y, 2 x) of the NHWF result [nb, oh, ow, f] (cut at odd edges).
 *   A^T = [1 1 1 0; 0 1 -1 -1] */
static void lgen_winograd_output_@S@(const @T@ *restrict m, @T@ *restrict out,
                                     int64_t nb, int64_t oh, int64_t ow, int64_t f, int64_t th,
                                     int64_t tw)
{
  int64_t tiles = nb * th * tw;
  LGEN_OMP(omp for)
  for (int64_t p = 0; p < tiles; p++) {
    int64_t b = p / (th * tw), y0 = p / tw % th * 2, x0 = p % tw * 2;
    for (int64_t k = 0; k < f; k++) {
      @T@ s[4][4], t[2][4];
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
          s[i][j] = m[(int64_t)(i * 4 + j) * tiles * f + p * f + k];
      for (int j = 0; j < 4; j++) { /* A^T M */
        t[0][j] = s[0][j] + s[1][j] + s[2][j];
        t[1][j] = s[1][j] - s[2][j] - s[3][j];
      }
      for (int i = 0; i < 2; i++) { /* (A^T M) A */
        @T@ y[2] = {t[i][0] + t[i][1] + t[i][2], t[i][1] - t[i][2] - t[i][3]};
        for (int j = 0; j < 2; j++)
          if (y0 + i < oh && x0 + j < ow)
            out[((b * oh + y0 + i) * ow + x0 + j) * f + k] = y[j];
      }
    }
  }
}
