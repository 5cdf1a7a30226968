/* Winograd filter transform: U = G g G^T per (c, f), for the HWCF filter
 * g [3, 3, c, f]; U is [n, n, c, f] with n = m + 2 for output tiles of
 * m x m (m 2 or 6).
 * F(2x2, 3x3): G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
 * F(6x6, 3x3): Lavin and Gray's points 0, 1, -1, 2, -2, 1/2, -1/2 and
 * infinity; row k of G is (1, p, p^2) / prod over the other finite points
 * q of (p - q), with row 0 (p = 0) negated to (1, 0, 0) and B^T's row 0
 * with it (their products are what counts). */
static void lgen_winograd_filter_@S@(const @T@ *restrict g, @T@ *restrict u,
                                     int64_t c, int64_t f, int m)
{
  static const double g6[8][3] = {
    {1, 0, 0}, {-2. / 9, -2. / 9, -2. / 9}, {-2. / 9, 2. / 9, -2. / 9},
    {1. / 90, 1. / 45, 2. / 45}, {1. / 90, -1. / 45, 2. / 45},
    {32. / 45, 16. / 45, 8. / 45}, {32. / 45, -16. / 45, 8. / 45}, {0, 0, 1}};
  int64_t cf = c * f;
  LGEN_OMP(omp for)
  for (int64_t e = 0; e < cf; e++) {
    if (m == 6) {
      @T@ t[8][3];
      for (int a = 0; a < 8; a++) /* G g */
        for (int j = 0; j < 3; j++) {
          @T@ acc = (@T@)0;
          for (int i = 0; i < 3; i++)
            acc += (@T@)g6[a][i] * g[(i * 3 + j) * cf + e];
          t[a][j] = acc;
        }
      for (int a = 0; a < 8; a++) /* (G g) G^T */
        for (int b = 0; b < 8; b++) {
          @T@ acc = (@T@)0;
          for (int j = 0; j < 3; j++)
            acc += t[a][j] * (@T@)g6[b][j];
          u[(a * 8 + b) * cf + e] = acc;
        }
      continue;
    }
    @T@ t[4][3];
    for (int j = 0; j < 3; j++) { /* G g: columns j */
      @T@ g0 = g[(0 * 3 + j) * cf + e], g1 = g[(1 * 3 + j) * cf + e];
      @T@ g2 = g[(2 * 3 + j) * cf + e];
      t[0][j] = g0;
      t[1][j] = (@T@)0.5 * (g0 + g1 + g2);
      t[2][j] = (@T@)0.5 * (g0 - g1 + g2);
      t[3][j] = g2;
    }
    for (int a = 0; a < 4; a++) { /* (G g) G^T */
      u[(a * 4 + 0) * cf + e] = t[a][0];
      u[(a * 4 + 1) * cf + e] = (@T@)0.5 * (t[a][0] + t[a][1] + t[a][2]);
      u[(a * 4 + 2) * cf + e] = (@T@)0.5 * (t[a][0] - t[a][1] + t[a][2]);
      u[(a * 4 + 3) * cf + e] = t[a][2];
    }
  }
}
