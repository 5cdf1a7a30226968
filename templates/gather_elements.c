/* gather_elements (ONNX GatherElements): out[c] = data[c with c[axis] =
 * idx[c]] for every coordinate c of the indices (shape ishape, rank dims);
 * the data has shape dshape. A negative index counts from the end, one
 * still outside the axis gives zero. */
static void lgen_gather_elements_@S@(const @T@ *restrict data, const @I@ *restrict idx,
                                     @T@ *restrict out, int rank, const int64_t *ishape,
                                     const int64_t *dshape, int axis)
{
  int64_t total = 1;
  for (int d = 0; d < rank; d++)
    total *= ishape[d];
  LGEN_OMP(omp for)
  for (int64_t f = 0; f < total; f++) {
    int64_t rem = f, off = 0, stride = 1;
    int bad = 0;
    for (int d = rank - 1; d >= 0; d--) {
      int64_t c = rem % ishape[d];
      rem /= ishape[d];
      if (d == axis) {
        c = (int64_t)idx[f];
        if (c < 0)
          c += dshape[d];
        bad |= c < 0 || c >= dshape[d];
      }
      off += c * stride;
      stride *= dshape[d];
    }
    out[f] = bad ? 0 : data[off];
  }
}
