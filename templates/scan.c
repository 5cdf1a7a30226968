/* scan along the middle axis of [outer, n, inner]: a running add, mul, max
 * or min (combiner 0..3) or body(acc, x) (a payload combiner, which has no
 * identity: inclusive only, unless there is `init`), inclusive (element j
 * has the combination of 0..j) or exclusive (of 0..j-1: the identity
 * first), from the end when reverse. The combination is sequential along
 * the axis, as NumPy's cumsum. With `init` (IREE's accumulator input, one
 * element per row), each row's combination starts from it: inclusive,
 * element j has init op x[0] op ... op x[j]; exclusive, element 0 is init.
 * With `last` (IREE's accumulator output, one element per row), each row's
 * last value written (its first when reverse; the start for an empty row)
 * is stored there too. */
static @T@ lgen_scan_combine_@S@(int combiner, @T@ (*body)(@T@, @T@),
                                  @T@ a, @T@ b)
{
  if (body)
    return body(a, b);
  switch (combiner) {
  case 0: return (@T@)((@ARITH@)a + (@ARITH@)b);
  case 1: return (@T@)((@ARITH@)a * (@ARITH@)b);
  case 2: return a > b ? a : b;
  default: return a < b ? a : b;
  }
}

static void lgen_scan_@S@(const @T@ *restrict x, const @T@ *restrict init,
                          @T@ *restrict out,
                          @T@ *restrict last, int64_t outer, int64_t n, int64_t inner,
                          int combiner, @T@ (*body)(@T@, @T@),
                          int inclusive, int reverse, int64_t tile)
{
  const @T@ identity = combiner == 0   ? (@T@)0
                      : combiner == 1 ? (@T@)1
                      : combiner == 2 ? @LOWEST@
                                      : @HIGHEST@;
  const int64_t chunk = lgen_row_chunk(outer * inner, tile);
  (void)chunk; /* the pragma\'s alone: without OpenMP it vanishes */
  LGEN_OMP(omp for schedule(static, chunk))
  for (int64_t r = 0; r < outer * inner; r++) {
    int64_t base = (r / inner) * n * inner + r % inner;
    @T@ acc = init ? init[r] : identity, written = acc;
    for (int64_t t = 0; t < n; t++) {
      int64_t at = base + (reverse ? n - 1 - t : t) * inner;
      @T@ v = x[at];
      if (inclusive) { /* element 0 is x's own (0 + -0.0 would be +0.0) */
        acc = t == 0 && !init ? v : lgen_scan_combine_@S@(combiner, body, acc, v);
        out[at] = written = acc;
      } else {
        out[at] = written = acc;
        acc = lgen_scan_combine_@S@(combiner, body, acc, v);
      }
    }
    if (last)
      last[r] = written;
  }
}
