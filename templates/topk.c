/* topk along the middle axis of [outer, n, inner]: per row, the k best
 * elements (largest or smallest) by a bounded heap of k candidates (root:
 * the worst kept), O(n log k) and no full sort; then the heap is sorted
 * best first. Ties keep the first occurrence: between equal values the
 * lower index is better, which makes the order total. heap holds k int64
 * slots per row, and at least 16 * k (workspace). A few long rows are cut
 * into segments, each segment's heap built by a thread of its own and the
 * row's heaps merged (topk of 1M floats, k = 8, at 2 threads). The
 * output indices are the positions along the axis or, with `given` (an
 * indices input shaped like x, IREE's optional input indices), given's
 * elements at those positions. */
static int lgen_topk_better_@S@(@T@ va, int64_t a, @T@ vb, int64_t b, int largest,
                                int (*before)(@T@, @T@))
{
  if (before) /* a payload comparator: its order, then the lower index */
    return before(va, vb) || (!before(vb, va) && a < b);
  /* NaN is worse than any number (then by index, as NumPy's stable sort) */
  int na = @ISNAN@(va), nb = @ISNAN@(vb);
  if (na || nb)
    return na == nb ? a < b : nb;
  if (va != vb)
    return largest ? va > vb : va < vb;
  return a < b;
}

/* Whether a later element v beats the worst kept value w (lgen_topk_better
 * with v's higher index): strictly better, or a number against a NaN. */
static int lgen_topk_beats_@S@(@T@ v, @T@ w, int largest,
                               int (*before)(@T@, @T@))
{
  if (before)
    return before(v, w);
  return @ISNAN@(w) ? !@ISNAN@(v) : largest ? v > w : v < w;
}

static void lgen_topk_sift_@S@(const @T@ *restrict p, int64_t inner, int64_t *restrict h,
                               int64_t size, int64_t at, int largest,
                               int (*before)(@T@, @T@))
{
  for (;;) {
    int64_t w = at, l = 2 * at + 1, r = l + 1;
    if (l < size &&
        lgen_topk_better_@S@(p[h[w] * inner], h[w], p[h[l] * inner], h[l], largest, before))
      w = l;
    if (r < size &&
        lgen_topk_better_@S@(p[h[w] * inner], h[w], p[h[r] * inner], h[r], largest, before))
      w = r;
    if (w == at)
      return;
    int64_t t = h[w];
    h[w] = h[at];
    h[at] = t;
    at = w;
  }
}

/* Heap h (root: the worst kept) of the k best of p[lo, hi) (hi - lo >= k). */
static void lgen_topk_segment_@S@(const @T@ *restrict p, int64_t inner,
                                  int64_t *restrict h, int64_t lo, int64_t hi, int64_t k,
                                  int largest, int (*before)(@T@, @T@))
{
  for (int64_t j = 0; j < k; j++)
    h[j] = lo + j;
  for (int64_t j = k / 2; j-- > 0;)
    lgen_topk_sift_@S@(p, inner, h, k, j, largest, before);
  if (before) { /* a comparator: a later element beats the worst kept when strictly before it */
    for (int64_t j = lo + k; j < hi; j++)
      if (before(p[j * inner], p[h[0] * inner])) {
        h[0] = j;
        lgen_topk_sift_@S@(p, inner, h, k, 0, largest, before);
      }
    return;
  }
  /* Every later j has a higher index than the heap's, so it is better
   * than the worst kept exactly when its value is strictly better: one
   * comparison against a cached value per element (NaN never is). A NaN
   * kept is the worst, beaten by any number (lgen_topk_beats): only the
   * first k elements can put one there, and once the worst is a number
   * it stays one, so the loops below need no NaN test. */
  @T@ worst = p[h[0] * inner];
  int64_t j = lo + k;
  for (; j < hi && @ISNAN@(worst); j++)
    if (lgen_topk_beats_@S@(p[j * inner], worst, largest, before)) {
      h[0] = j;
      lgen_topk_sift_@S@(p, inner, h, k, 0, largest, before);
      worst = p[h[0] * inner];
    }
  if (inner == 1) {
    /* Most elements lose to the worst kept: blocks of 64 are tested by a
     * vectorisable any-of, and only a block holding a winner is walked
     * element by element (1M floats, k = 8: 0.50 -> 0.1 ms) */
    for (; j + 64 <= hi; j += 64) {
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
          lgen_topk_sift_@S@(p, 1, h, k, 0, largest, before);
          worst = p[h[0]];
        }
    }
  }
  if (largest) {
    for (; j < hi; j++)
      if (p[j * inner] > worst) {
        h[0] = j;
        lgen_topk_sift_@S@(p, inner, h, k, 0, largest, before);
        worst = p[h[0] * inner];
      }
  } else {
    for (; j < hi; j++)
      if (p[j * inner] < worst) {
        h[0] = j;
        lgen_topk_sift_@S@(p, inner, h, k, 0, largest, before);
        worst = p[h[0] * inner];
      }
  }
}

/* How many segments each row is cut into: with fewer rows than threads
 * (at most 16), long rows (at least 65536 elements a segment, and k) are
 * cut so that the threads share a row (a segment costs k ln(length / k)
 * heap insertions of its own: at 1 thread, 16 segments of 1M floats were
 * 1.7x slower than one); heap holds up to 16 heaps of k where there are
 * fewer rows (lower_ext.c sizes it so). */
static int64_t lgen_topk_parts_@S@(int64_t rows, int64_t n, int64_t k, int threads)
{
  int64_t team = threads < 16 ? threads : 16;
  int64_t parts = rows > 0 && rows < team ? team / rows : 1;
  if (parts > n / 65536)
    parts = n / 65536;
  while (parts > 1 && n - (parts - 1) * ((n + parts - 1) / parts) < k)
    parts--;
  return parts < 1 ? 1 : parts;
}

static void lgen_topk_@S@(const @T@ *restrict x, const @I@ *restrict given,
                          @T@ *restrict vals, @I@ *restrict idx, int64_t *restrict heap,
                          int64_t outer, int64_t n, int64_t inner, int64_t k, int largest,
                          int (*before)(@T@, @T@),
                          int threads, int64_t tile)
{
  if (k == 0)
    return;
  int64_t rows = outer * inner, parts = lgen_topk_parts_@S@(rows, n, k, threads);
  int64_t len = (n + parts - 1) / parts;
  /* a tile of rows is a tile of their segments */
  const int64_t segment_chunk = lgen_row_chunk(rows * parts, tile > 0 ? tile * parts : tile);
  const int64_t row_chunk = lgen_row_chunk(rows, tile);
  (void)segment_chunk, (void)row_chunk; /* the pragmas' alone: without OpenMP they vanish */
  /* each segment's k best ... */
  LGEN_OMP(omp for schedule(static, segment_chunk))
  for (int64_t w = 0; w < rows * parts; w++) {
    int64_t r = w / parts, o = r / inner, i = r % inner, lo = w % parts * len;
    int64_t hi = lo + len < n ? lo + len : n;
    lgen_topk_segment_@S@(x + o * n * inner + i, inner, heap + w * k, lo, hi, k, largest,
                          before);
  }
  /* ... then per row the k best of its segments' heaps (value, then the
   * lower index), sorted best first */
  LGEN_OMP(omp for schedule(static, row_chunk))
  for (int64_t r = 0; r < rows; r++) {
    int64_t o = r / inner, i = r % inner;
    const @T@ *restrict p = x + o * n * inner + i;
    int64_t *restrict h = heap + r * parts * k;
    for (int64_t c = k; c < parts * k; c++)
      if (lgen_topk_better_@S@(p[h[c] * inner], h[c], p[h[0] * inner], h[0], largest, before)) {
        h[0] = h[c];
        lgen_topk_sift_@S@(p, inner, h, k, 0, largest, before);
      }
    for (int64_t s = k - 1; s > 0; s--) { /* heap sort: the worst goes last */
      int64_t t = h[0];
      h[0] = h[s];
      h[s] = t;
      lgen_topk_sift_@S@(p, inner, h, s, 0, largest, before);
    }
    for (int64_t j = 0; j < k; j++) {
      vals[(o * k + j) * inner + i] = p[h[j] * inner];
      idx[(o * k + j) * inner + i] = given ? given[(o * n + h[j]) * inner + i] : (@I@)h[j];
    }
  }
}
