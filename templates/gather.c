/* gather (ONNX Gather): out[o, j, i] = data[o, idx[j], i] over a data of
 * [outer, n, inner] and count indices; a negative index counts from the
 * end, one still outside [0, n) gives zeros. */
static void lgen_gather_@S@(const @T@ *restrict data, const @I@ *restrict idx,
                            @T@ *restrict out, int64_t outer, int64_t n, int64_t inner,
                            int64_t count, int64_t tile)
{
  const int64_t chunk = lgen_row_chunk(outer * count, tile);
  (void)chunk; /* the pragma\'s alone: without OpenMP it vanishes */
  LGEN_OMP(omp for schedule(static, chunk))
  for (int64_t r = 0; r < outer * count; r++) {
    int64_t o = r / count, x = (int64_t)idx[r % count];
    @T@ *restrict dst = out + r * inner;
    if (x < 0)
      x += n;
    if (x < 0 || x >= n) {
      for (int64_t i = 0; i < inner; i++)
        dst[i] = 0;
      continue;
    }
    const @T@ *restrict src = data + (o * n + x) * inner;
    for (int64_t i = 0; i < inner; i++)
      dst[i] = src[i];
  }
}
