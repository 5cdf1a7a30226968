/* scatter_elements (ONNX ScatterElements): out = original, then for every
 * coordinate c of the indices (shape ishape), out[c with c[axis] = idx[c]]
 * = combine(that, upd[c]) (combiners as scatter's). A negative index counts
 * from the end; one still out of range is skipped. The parallel loop is
 * over lines along the axis: different lines differ off the axis, so they
 * never share a target, and each line runs in order. */
static void lgen_scatter_elements_combine_@S@(int combiner, @T@ *restrict d, @T@ v)
{
  switch (combiner) {
  case 0: *d = v; break;
  case 1: *d = (@T@)((@ARITH@)*d + (@ARITH@)v); break;
  case 2: *d = (@T@)((@ARITH@)*d * (@ARITH@)v); break;
  case 3: *d = *d > v ? *d : v; break;
  default: *d = *d < v ? *d : v; break;
  }
}

static void lgen_scatter_elements_@S@(const @T@ *restrict orig,
                                      const @I@ *restrict idx, const @T@ *restrict upd,
                                      @T@ *restrict out, int rank, const int64_t *ishape,
                                      const int64_t *dshape, int axis, int combiner)
{
  int64_t total = 1, lines = 1, istride = 1, dstride = 1;
  for (int d = 0; d < rank; d++) {
    total *= dshape[d];
    if (d != axis)
      lines *= ishape[d];
  }
  for (int d = rank - 1; d > axis; d--) {
    istride *= ishape[d];
    dstride *= dshape[d];
  }
  LGEN_OMP(omp for)
  for (int64_t f = 0; f < total; f++)
    out[f] = orig[f];
  LGEN_OMP(omp for)
  for (int64_t l = 0; l < lines; l++) {
    int64_t rem = l, ioff = 0, doff = 0, is = 1, ds = 1;
    for (int d = rank - 1; d >= 0; d--) {
      if (d != axis) {
        int64_t c = rem % ishape[d];
        rem /= ishape[d];
        ioff += c * is;
        doff += c * ds;
      }
      is *= ishape[d];
      ds *= dshape[d];
    }
    for (int64_t j = 0; j < ishape[axis]; j++) {
      int64_t x = (int64_t)idx[ioff + j * istride];
      if (x < 0)
        x += dshape[axis];
      if (x >= 0 && x < dshape[axis])
        lgen_scatter_elements_combine_@S@(combiner, &out[doff + x * dstride],
                                          upd[ioff + j * istride]);
    }
  }
}
