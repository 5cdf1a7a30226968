/* Winograd F(2x2, 3x3) filter transform: U = G g G^T per (c, f), for the
 * HWCF filter g [3, 3, c, f]; U is [4, 4, c, f].
 *   G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1] */
static void lgen_winograd_filter_@S@(const @T@ *restrict g, @T@ *restrict u,
                                     int64_t c, int64_t f)
{
  int64_t cf = c * f;
  LGEN_OMP(omp for)
  for (int64_t e = 0; e < cf; e++) {
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
