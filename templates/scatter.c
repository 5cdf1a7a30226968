/* scatter (iree_linalg_ext.scatter; ONNX ScatterND): out = original, then
 * for each of the count index rows p (m coordinates each, for the original's
 * dims dmap[0..m)) and each element s of its update slice (over the
 * original's other dims, in order), out[target] = combine(out[target],
 * upd[p][s]) with combiner 0 replace, 1 add, 2 mul, 3 max, 4 min. A negative
 * coordinate counts from the end; a row still out of range is skipped.
 * Every update lands exactly once, in row order: the parallel loop is over
 * s, and two elements of different s never share a target (they differ in
 * the unmapped dims), so each target sees its rows in order whatever the
 * indices repeat. */
static void lgen_scatter_combine_@S@(int combiner, @T@ *restrict d, @T@ v)
{
  switch (combiner) {
  case 0: *d = v; break;
  case 1: *d = (@T@)((@ARITH@)*d + (@ARITH@)v); break;
  case 2: *d = (@T@)((@ARITH@)*d * (@ARITH@)v); break;
  case 3: *d = *d > v ? *d : v; break;
  default: *d = *d < v ? *d : v; break;
  }
}

static void lgen_scatter_@S@(const @T@ *restrict orig, const @I@ *restrict idx,
                             const @T@ *restrict upd, @T@ *restrict out, int rank,
                             const int64_t *dims, int m, const int64_t *dmap, int64_t count,
                             int combiner)
{
  int64_t total = 1, slice = 1, strides[16];
  int mapped[16];
  for (int d = rank - 1; d >= 0; d--) {
    strides[d] = total;
    total *= dims[d];
    mapped[d] = 0;
  }
  for (int j = 0; j < m; j++)
    mapped[dmap[j]] = 1;
  for (int d = 0; d < rank; d++)
    if (!mapped[d])
      slice *= dims[d];
  LGEN_OMP(omp for)
  for (int64_t f = 0; f < total; f++)
    out[f] = orig[f];
  LGEN_OMP(omp for)
  for (int64_t s = 0; s < slice; s++) {
    int64_t rem = s, off = 0;
    for (int d = rank - 1; d >= 0; d--)
      if (!mapped[d]) {
        off += (rem % dims[d]) * strides[d];
        rem /= dims[d];
      }
    for (int64_t p = 0; p < count; p++) {
      int64_t target = off;
      int bad = 0;
      for (int j = 0; j < m; j++) {
        int64_t x = (int64_t)idx[p * m + j], n = dims[dmap[j]];
        if (x < 0)
          x += n;
        bad |= x < 0 || x >= n;
        target += x * strides[dmap[j]];
      }
      if (!bad)
        lgen_scatter_combine_@S@(combiner, &out[target], upd[p * slice + s]);
    }
  }
}
