/* argmax / argmin along the middle axis of [outer, n, inner] (n > 0): the
 * first extremum, or the last with select_last. NaN is never one: while
 * the best so far is NaN (only at j = 0), any number replaces it; a row of
 * only NaN gives 0. */
static void lgen_arg_@S@(const @T@ *restrict x, @I@ *restrict out, int64_t outer,
                         int64_t n, int64_t inner, int is_min, int select_last, int64_t tile)
{
  const int64_t chunk = lgen_row_chunk(outer * inner, tile);
  (void)chunk; /* the pragma\'s alone: without OpenMP it vanishes */
  LGEN_OMP(omp for schedule(static, chunk))
  for (int64_t r = 0; r < outer * inner; r++) {
    const @T@ *restrict p = x + (r / inner) * n * inner + r % inner;
    int64_t best = 0;
    @T@ bv = n > 0 ? p[0] : 0;
    for (int64_t j = 1; j < n; j++) {
      @T@ v = p[j * inner];
      int better = @ISNAN@(bv)  ? !@ISNAN@(v)
                   : is_min     ? (select_last ? v <= bv : v < bv)
                                : (select_last ? v >= bv : v > bv);
      if (better) {
        best = j;
        bv = v;
      }
    }
    out[r] = (@I@)best;
  }
}
