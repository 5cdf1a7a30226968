/* topk along the middle axis of [outer, n, inner]: per row, the k best
 * elements (largest or smallest) by a bounded heap of k candidates (root:
 * the worst kept), O(n log k) and no full sort; then the heap is sorted
 * best first. Ties keep the first occurrence: between equal values the
 * lower index is better, which makes the order total. heap holds k int64
 * slots per row (workspace). */
static int lgen_topk_better_@S@(@T@ va, int64_t a, @T@ vb, int64_t b, int largest)
{
  if (va != vb)
    return largest ? va > vb : va < vb;
  return a < b;
}

static void lgen_topk_sift_@S@(const @T@ *restrict p, int64_t inner, int64_t *restrict h, int64_t size,
                               int64_t at, int largest)
{
  for (;;) {
    int64_t w = at, l = 2 * at + 1, r = l + 1;
    if (l < size && lgen_topk_better_@S@(p[h[w] * inner], h[w], p[h[l] * inner], h[l], largest))
      w = l;
    if (r < size && lgen_topk_better_@S@(p[h[w] * inner], h[w], p[h[r] * inner], h[r], largest))
      w = r;
    if (w == at)
      return;
    int64_t t = h[w];
    h[w] = h[at];
    h[at] = t;
    at = w;
  }
}

static void lgen_topk_@S@(const @T@ *restrict x, @T@ *restrict vals, @I@ *restrict idx, int64_t *restrict heap,
                          int64_t outer, int64_t n, int64_t inner, int64_t k, int largest)
{
  LGEN_OMP(omp for)
  for (int64_t r = 0; r < outer * inner; r++) {
    int64_t o = r / inner, i = r % inner;
    const @T@ *restrict p = x + o * n * inner + i;
    int64_t *restrict h = heap + r * k;
    if (k == 0)
      continue;
    for (int64_t j = 0; j < k; j++)
      h[j] = j;
    for (int64_t j = k / 2; j-- > 0;)
      lgen_topk_sift_@S@(p, inner, h, k, j, largest);
    /* Every later j has a higher index than the heap's, so it is better
     * than the worst kept exactly when its value is strictly better: one
     * comparison against a cached value per element (NaN never is). */
    @T@ worst = p[h[0] * inner];
    int64_t j = k;
    if (inner == 1) {
      /* Most elements lose to the worst kept: blocks of 64 are tested by a
       * vectorisable any-of, and only a block holding a winner is walked
       * element by element (1M floats, k = 8: 0.50 -> 0.1 ms) */
      for (; j + 64 <= n; j += 64) {
        int any = 0;
        if (largest)
          for (int l = 0; l < 64; l++)
            any |= p[j + l] > worst;
        else
          for (int l = 0; l < 64; l++)
            any |= p[j + l] < worst;
        for (int l = 0; any && l < 64; l++)
          if (largest ? p[j + l] > worst : p[j + l] < worst) {
            h[0] = j + l;
            lgen_topk_sift_@S@(p, 1, h, k, 0, largest);
            worst = p[h[0]];
          }
      }
    }
    if (largest) {
      for (; j < n; j++)
        if (p[j * inner] > worst) {
          h[0] = j;
          lgen_topk_sift_@S@(p, inner, h, k, 0, largest);
          worst = p[h[0] * inner];
        }
    } else {
      for (; j < n; j++)
        if (p[j * inner] < worst) {
          h[0] = j;
          lgen_topk_sift_@S@(p, inner, h, k, 0, largest);
          worst = p[h[0] * inner];
        }
    }
    for (int64_t s = k - 1; s > 0; s--) { /* heap sort: the worst goes last */
      int64_t t = h[0];
      h[0] = h[s];
      h[s] = t;
      lgen_topk_sift_@S@(p, inner, h, s, 0, largest);
    }
    for (int64_t j = 0; j < k; j++) {
      vals[(o * k + j) * inner + i] = p[h[j] * inner];
      idx[(o * k + j) * inner + i] = (@I@)h[j];
    }
  }
}
