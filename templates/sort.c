/* sort along the middle axis of [outer, n, inner], ascending or
 * descending, stable: per row, a bottom-up merge sort (insertion-sorted
 * runs of 16, then merges that take from the right run only when it is
 * strictly first) in two row buffers of the workspace (scratch: 2 n
 * elements per row). NaN sorts last either way, in input order. With
 * `before` (a payload comparator: whether lhs goes strictly before rhs),
 * its order instead, NaN and all. */
static int lgen_sort_first_@S@(@T@ v, @T@ u, int descending,
                               int (*before)(@T@, @T@))
{
  if (before)
    return before(v, u);
  if (@ISNAN@(u) || @ISNAN@(v)) /* v strictly before u: a number before a NaN */
    return @ISNAN@(u) && !@ISNAN@(v);
  return descending ? v > u : v < u;
}

static void lgen_sort_@S@(const @T@ *restrict x, @T@ *restrict out,
                          @T@ *restrict scratch, int64_t outer, int64_t n, int64_t inner,
                          int descending, int (*before)(@T@, @T@), int64_t tile)
{
  const int64_t chunk = lgen_row_chunk(outer * inner, tile);
  (void)chunk; /* the pragma\'s alone: without OpenMP it vanishes */
  LGEN_OMP(omp for schedule(static, chunk))
  for (int64_t r = 0; r < outer * inner; r++) {
    int64_t o = r / inner, i = r % inner;
    @T@ *a = scratch + r * 2 * n, *b = a + n;
    for (int64_t j = 0; j < n; j++)
      a[j] = x[(o * n + j) * inner + i];
    for (int64_t lo = 0; lo < n; lo += 16) {
      int64_t hi = lo + 16 < n ? lo + 16 : n;
      for (int64_t j = lo + 1; j < hi; j++) {
        @T@ v = a[j];
        int64_t m = j;
        for (; m > lo && lgen_sort_first_@S@(v, a[m - 1], descending, before); m--)
          a[m] = a[m - 1];
        a[m] = v;
      }
    }
    for (int64_t width = 16; width < n; width *= 2) {
      for (int64_t lo = 0; lo < n; lo += 2 * width) {
        int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
        int64_t p = lo, q = mid, d = lo;
        while (p < mid && q < hi)
          b[d++] = lgen_sort_first_@S@(a[q], a[p], descending, before) ? a[q++] : a[p++];
        while (p < mid)
          b[d++] = a[p++];
        while (q < hi)
          b[d++] = a[q++];
      }
      @T@ *t = a;
      a = b;
      b = t;
    }
    for (int64_t j = 0; j < n; j++)
      out[(o * n + j) * inner + i] = a[j];
  }
}
