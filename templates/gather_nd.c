/* gather_nd (ONNX GatherND): the indices are batch x tuples rows of m
 * coordinates; row p (in batch p / tuples) picks the slice of `slice`
 * elements at those coordinates of the batch's block of the data, whose
 * indexed dims are dims[0..m). A negative coordinate counts from the end;
 * a row with one still out of range gives zeros. */
static void lgen_gather_nd_@S@(const @T@ *restrict data, const @I@ *restrict idx,
                               @T@ *restrict out, int64_t batch, int64_t tuples, int m,
                               const int64_t *dims, int64_t slice)
{
  int64_t block = 1;
  for (int j = 0; j < m; j++)
    block *= dims[j];
  LGEN_OMP(omp for)
  for (int64_t p = 0; p < batch * tuples; p++) {
    int64_t off = 0;
    int bad = 0;
    for (int j = 0; j < m; j++) {
      int64_t x = (int64_t)idx[p * m + j];
      if (x < 0)
        x += dims[j];
      bad |= x < 0 || x >= dims[j];
      off = off * dims[j] + x;
    }
    @T@ *restrict dst = out + p * slice;
    if (bad) {
      for (int64_t i = 0; i < slice; i++)
        dst[i] = 0;
      continue;
    }
    const @T@ *restrict src = data + ((p / tuples) * block + off) * slice;
    for (int64_t i = 0; i < slice; i++)
      dst[i] = src[i];
  }
}
