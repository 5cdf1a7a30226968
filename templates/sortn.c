/* sort of several operands of one shape (IREE's iree_linalg_ext.sort with
 * more than one operand: keys and the values that follow them) along the
 * middle axis of [outer, n, inner], stable: per row, the bottom-up merge
 * sort of templates/sort.c (insertion-sorted runs of 16, then merges that
 * take from the right run only when it is strictly first) on the rows'
 * element offsets, in two row buffers of the workspace (scratch: 2 n
 * offsets per row), ordered by before(ins, a, b): whether the element at
 * offset a goes strictly before the one at offset b (the emitter writes it:
 * the payload comparator, or operand 0 ascending or descending with NaN
 * last). Then each operand's row is gathered in that order into its output
 * (sizes: each operand's element size in bytes). @S@ is the offsets'
 * type. */
#include <string.h>

static void lgen_sortn_copy_@S@(void *out, const void *in, size_t size)
{
  switch (size) { /* constant sizes: one load and store each */
  case 1: memcpy(out, in, 1); break;
  case 2: memcpy(out, in, 2); break;
  case 4: memcpy(out, in, 4); break;
  default: memcpy(out, in, 8); break;
  }
}

static void lgen_sortn_@S@(const void *const *ins, void *const *outs, const size_t *sizes,
                           int nops, @T@ *restrict scratch,
                           int64_t outer, int64_t n, int64_t inner,
                           int (*before)(const void *const *, @T@, @T@), int64_t tile)
{
  const int64_t chunk = lgen_row_chunk(outer * inner, tile);
  (void)chunk; /* the pragma\'s alone: without OpenMP it vanishes */
  LGEN_OMP(omp for schedule(static, chunk))
  for (int64_t r = 0; r < outer * inner; r++) {
    int64_t o = r / inner, i = r % inner;
    @T@ *a = scratch + r * 2 * n, *b = a + n;
    for (int64_t j = 0; j < n; j++)
      a[j] = (o * n + j) * inner + i;
    for (int64_t lo = 0; lo < n; lo += 16) {
      int64_t hi = lo + 16 < n ? lo + 16 : n;
      for (int64_t j = lo + 1; j < hi; j++) {
        @T@ v = a[j];
        int64_t m = j;
        for (; m > lo && before(ins, v, a[m - 1]); m--)
          a[m] = a[m - 1];
        a[m] = v;
      }
    }
    for (int64_t width = 16; width < n; width *= 2) {
      for (int64_t lo = 0; lo < n; lo += 2 * width) {
        int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
        int64_t p = lo, q = mid, d = lo;
        while (p < mid && q < hi)
          b[d++] = before(ins, a[q], a[p]) ? a[q++] : a[p++];
        while (p < mid)
          b[d++] = a[p++];
        while (q < hi)
          b[d++] = a[q++];
      }
      @T@ *t = a;
      a = b;
      b = t;
    }
    for (int k = 0; k < nops; k++) {
      const size_t size = sizes[k];
      for (int64_t j = 0; j < n; j++)
        lgen_sortn_copy_@S@((char *)outs[k] + (size_t)((o * n + j) * inner + i) * size,
                            (const char *)ins[k] + (size_t)a[j] * size, size);
    }
  }
}
