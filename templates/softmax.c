/* post times the softmax (is_log = 0) or log-softmax (is_log = 1) of scale * x
 * along the middle axis of [outer, n, inner], with ByteIR's statistics: per
 * row the max m,
 * the sum s of exp(v - m), and the factor s0 exp(m0 - m) / s by which
 * outputs computed earlier against the initial max m0 and sum s0 are
 * rescaled (max_init and sum_init may be NULL: -inf and 0).
 *
 * Each row is cut into at most LGEN_SOFTMAX_BLOCKS blocks. Pass 1 reads
 * each block (its max, then exp(v - running max) summed and, for softmax,
 * stored into y) and updates the running max and sum by the online
 * normalizer recurrence (s = s exp(m_old - m_new) + block sum). Pass 2
 * rescales each stored block by exp(m_block - m) / s. A row that fits in
 * cache is read from memory once and written once; a longer one costs a
 * second pass over y. One exp per element (lgen's vectorisable exp for
 * f32, exact to 1 ulp down to results of 2^-126, below which it gives 0),
 * whatever the row length. Rows with the axis innermost vectorise
 * along the row; otherwise LGEN_SOFTMAX_LANES neighbouring columns are
 * processed together, one vector lane each. */
#include <string.h>
/* Tunables, each overridable with -D: vector lanes, the most blocks per
 * row, how far ahead loads run, the least elements per block. */
#ifndef LGEN_SOFTMAX_LANES
#define LGEN_SOFTMAX_LANES 16
#endif
#ifndef LGEN_SOFTMAX_BLOCKS
#define LGEN_SOFTMAX_BLOCKS 64
#endif
/* Rows longer than cache arrive from memory: the loads of x run this many
 * elements ahead of their use (and y's lines are fetched for writing), as
 * the hardware's prefetch does not run far enough ahead of a loop this
 * busy (4096 x 4096 at 1 thread: 7.2 -> 4.9 ms). A hint only; compilers
 * without __builtin_prefetch drop it. */
#ifndef LGEN_SOFTMAX_AHEAD
#define LGEN_SOFTMAX_AHEAD 1024
#endif
/* Contiguous rows are cut into blocks of at least this many elements.
 * With the previous row's second pass interleaved block by block, smaller
 * blocks spread it more evenly over the loads (4096 x 4096, 4 runs each:
 * 256 and 128 against 512 about 5 % faster at 1 thread and 8 % at 2; 64
 * slower) */
#ifndef LGEN_SOFTMAX_MIN_BLOCK
#define LGEN_SOFTMAX_MIN_BLOCK 256
#endif
#ifndef LGEN_SOFTMAX_PREFETCH
#if defined(__GNUC__) || defined(__clang__)
#define LGEN_SOFTMAX_PREFETCH(p, w) __builtin_prefetch((p), (w))
#else
#define LGEN_SOFTMAX_PREFETCH(p, w) ((void)0)
#endif
#endif

/* Elements per block: at least `least`, and few
 * enough blocks that their maxima fit a small array. */
static int64_t lgen_softmax_block_@S@(int64_t n, int64_t least)
{
  int64_t b = (n + LGEN_SOFTMAX_BLOCKS - 1) / LGEN_SOFTMAX_BLOCKS;
  b = (b + 15) / 16 * 16;
  return b < least ? least : b;
}

/* A float's bits as a signed integer that orders like the float (for
 * non-NaN values): integer max reductions vectorise without fast-math
 * flags, float ones do not. NaN with the sign bit clear orders above
 * +inf, so a row holding one gets NaN as its max and all-NaN outputs, as
 * the reference softmax gives. */
static @SINT@ lgen_softmax_key_@S@(@T@ f)
{
  @SINT@ i;
  memcpy(&i, &f, sizeof i);
  return i ^ (-(@SINT@)(i < 0) & (@SINT@)((1ull << (8 * sizeof i - 1)) - 1));
}

static @T@ lgen_softmax_unkey_@S@(@SINT@ i)
{
  @T@ f;
  i ^= -(@SINT@)(i < 0) & (@SINT@)((1ull << (8 * sizeof i - 1)) - 1);
  memcpy(&f, &i, sizeof f);
  return f;
}

/* The max of m and scale * x[0, n). */
static @T@ lgen_softmax_max_@S@(const @T@ *restrict x, int64_t n, @T@ scale,
                                @T@ m)
{
  @SINT@ k = lgen_softmax_key_@S@(m);
  for (int64_t j = 0; j < n; j++) {
    @SINT@ v = lgen_softmax_key_@S@(scale * x[j]);
    k = v > k ? v : k;
  }
  return lgen_softmax_unkey_@S@(k);
}

/* y[0, n) in blocks of B: block b times f[b] (softmax's second pass). */
static void lgen_softmax_rescale_@S@(@T@ *restrict y, int64_t n, int64_t B,
                                     const @T@ *f)
{
  for (int64_t j0 = 0, b = 0; j0 < n; j0 += B, b++) {
    int64_t j1 = j0 + B < n ? j0 + B : n;
    for (int64_t j = j0; j < j1; j++)
      y[j] *= f[b];
  }
}

/* One contiguous row of n values. Block b's exps are computed in the loop
 * that reads block b + 1 for its max, so that the next block's loads from
 * memory overlap this block's arithmetic (software pipelining: with the
 * max in a loop of its own, the core waited for memory, then memory for
 * the core).
 *
 * Softmax's second pass (each block times its factor) is left to the
 * caller: the row's factors go to f_out, and the caller passes the row
 * back as `prev` with the next row, whose block b rescales prev's block b
 * after computing its own. The second pass, a pass over cache with no
 * loads from memory to wait for, then runs while the next row's loads are
 * in flight (4096 x 4096 at 1 thread: 1.36 -> 1.3 x the copy floor).
 * Log-softmax finishes its row itself (prev is NULL then). */
static void lgen_softmax_row_@S@(const @T@ *restrict x, @T@ *restrict y,
                                 @T@ *m_io, @T@ *s_io, int64_t n, @T@ scale,
                                 @T@ post, int is_log, const @T@ *xend,
                                 @T@ *restrict prev, const @T@ *prev_f, @T@ *f_out)
{
  enum { L = LGEN_SOFTMAX_LANES };
  const int64_t B = lgen_softmax_block_@S@(n, LGEN_SOFTMAX_MIN_BLOCK);
  @T@ block_max[LGEN_SOFTMAX_BLOCKS];
  @T@ m = *m_io, s = *s_io;
  int nb = 0;
  @T@ next = lgen_softmax_max_@S@(x, n < B ? n : B, scale, @LOWEST@);
  for (int64_t j0 = 0; j0 < n; j0 += B, nb++) {
    /* this block [j0, j1): whole vectors up to full, then a tail; the
     * next block (len2 <= len values) has its whole vectors, up to both,
     * read in the same loop */
    const int64_t j1 = j0 + B < n ? j0 + B : n, len = j1 - j0, full = len / L * L;
    const int64_t len2 = j1 + B < n ? B : n - j1, both = len2 / L * L;
    const @T@ *restrict xb = x + j0, *restrict xn = x + j1;
    @T@ *restrict yb = y + j0;
    @T@ bm = next > m ? next : m;
    /* the exps' reference: the block's max, or 0 while every element so
     * far is -inf (their exps are then 0, not exp(-inf - -inf) = NaN;
     * the block's factor, exp(-inf - m), keeps them 0) */
    @T@ ref = bm == @LOWEST@ ? 0 : bm;
    /* vmax: the next block's maximum per lane, as a float select, which gcc
     * vectorises here as an element-wise max (a NaN is skipped by it, but
     * still makes the row's sum and so every output NaN) */
    @T@ lane[L], vmax[L];
    /* the running sum moves to the new max; with nothing summed yet (s ==
     * 0, also when m is still -inf) it stays 0 */
    s = s == 0 ? s : s * @EXPNEG@(m - bm);
    m = bm;
    for (int l = 0; l < L; l++) {
      lane[l] = 0;
      vmax[l] = @LOWEST@;
    }
    if (is_log) {
      for (int64_t j = 0; j < both; j += L) {
        if (xn + j + LGEN_SOFTMAX_AHEAD < xend)
          LGEN_SOFTMAX_PREFETCH(xn + j + LGEN_SOFTMAX_AHEAD, 0);
        for (int l = 0; l < L; l++) {
          @T@ v = scale * xn[j + l];
          lane[l] += @EXPNEG@(scale * xb[j + l] - ref);
          vmax[l] = v > vmax[l] ? v : vmax[l];
        }
      }
      for (int64_t j = both; j < full; j += L) {
        if (xb + j + LGEN_SOFTMAX_AHEAD < xend) /* the next row's start */
          LGEN_SOFTMAX_PREFETCH(xb + j + LGEN_SOFTMAX_AHEAD, 0);
        for (int l = 0; l < L; l++)
          lane[l] += @EXPNEG@(scale * xb[j + l] - ref);
      }
      for (int64_t j = full; j < len; j++)
        lane[0] += @EXPNEG@(scale * xb[j] - ref);
    } else {
      for (int64_t j = 0; j < both; j += L) {
        if (xn + j + LGEN_SOFTMAX_AHEAD < xend) {
          LGEN_SOFTMAX_PREFETCH(xn + j + LGEN_SOFTMAX_AHEAD, 0);
          LGEN_SOFTMAX_PREFETCH(yb + j + LGEN_SOFTMAX_AHEAD, 1);
        }
        for (int l = 0; l < L; l++) {
          @T@ v = scale * xn[j + l];
          @T@ e = @EXPNEG@(scale * xb[j + l] - ref);
          yb[j + l] = e;
          lane[l] += e;
          vmax[l] = v > vmax[l] ? v : vmax[l];
        }
      }
      for (int64_t j = both; j < full; j += L) {
        if (xb + j + LGEN_SOFTMAX_AHEAD < xend) { /* the next row's start; y is laid out like x */
          LGEN_SOFTMAX_PREFETCH(xb + j + LGEN_SOFTMAX_AHEAD, 0);
          LGEN_SOFTMAX_PREFETCH(yb + j + LGEN_SOFTMAX_AHEAD, 1);
        }
        for (int l = 0; l < L; l++) {
          @T@ e = @EXPNEG@(scale * xb[j + l] - ref);
          yb[j + l] = e;
          lane[l] += e;
        }
      }
      for (int64_t j = full; j < len; j++) {
        yb[j] = @EXPNEG@(scale * xb[j] - ref);
        lane[0] += yb[j];
      }
    }
    if (prev)
      for (int64_t j = j0; j < j1; j++)
        prev[j] *= prev_f[nb];
    for (int l = 1; l < L; l++)
      vmax[0] = vmax[l] > vmax[0] ? vmax[l] : vmax[0];
    next = lgen_softmax_max_@S@(xn + both, len2 > both ? len2 - both : 0, scale, vmax[0]);
    for (int l = 0; l < L; l++)
      s += lane[l];
    block_max[nb] = bm;
  }
  if (is_log) {
    @T@ shift = m + @LOG@(s);
    for (int64_t j = 0; j < n; j++)
      y[j] = (scale * x[j] - shift) * post;
  } else {
    for (int b = 0; b < nb; b++)
      f_out[b] = @EXPNEG@(block_max[b] - m) / s * post;
  }
  *m_io = m;
  *s_io = s;
}

/* w <= LANES columns of a row whose elements lie `inner` apart. */
static void lgen_softmax_cols_@S@(const @T@ *restrict x, @T@ *restrict y,
                                  @T@ *m_io, @T@ *s_io, int64_t n, int64_t inner, int w,
                                  @T@ scale, @T@ post, int is_log)
{
  enum { L = LGEN_SOFTMAX_LANES };
  const int64_t B = lgen_softmax_block_@S@(n, 64);
  @T@ block_max[LGEN_SOFTMAX_BLOCKS][L];
  @T@ m[L], s[L];
  int nb = 0;
  for (int l = 0; l < L; l++) {
    m[l] = l < w ? m_io[l] : 0;
    s[l] = l < w ? s_io[l] : 0;
  }
  for (int64_t j0 = 0; j0 < n; j0 += B, nb++) {
    int64_t j1 = j0 + B < n ? j0 + B : n;
    @T@ bm[L], ref[L], sum[L];
    for (int l = 0; l < L; l++) {
      bm[l] = m[l];
      sum[l] = 0;
    }
    for (int64_t j = j0; j < j1; j++)
      for (int l = 0; l < w; l++) {
        @T@ v = scale * x[j * inner + l];
        bm[l] = v > bm[l] ? v : bm[l];
      }
    for (int l = 0; l < w; l++) {
      s[l] = s[l] == 0 ? s[l] : s[l] * @EXPNEG@(m[l] - bm[l]);
      m[l] = bm[l];
      ref[l] = bm[l] == @LOWEST@ ? 0 : bm[l]; /* as in lgen_softmax_row */
    }
    for (int64_t j = j0; j < j1; j++)
      for (int l = 0; l < w; l++) {
        @T@ e = @EXPNEG@(scale * x[j * inner + l] - ref[l]);
        if (!is_log)
          y[j * inner + l] = e;
        sum[l] += e;
      }
    for (int l = 0; l < L; l++) {
      s[l] += sum[l];
      block_max[nb][l] = bm[l];
    }
  }
  if (is_log) {
    @T@ shift[L];
    for (int l = 0; l < w; l++)
      shift[l] = m[l] + @LOG@(s[l]);
    for (int64_t j = 0; j < n; j++)
      for (int l = 0; l < w; l++)
        y[j * inner + l] = (scale * x[j * inner + l] - shift[l]) * post;
  } else {
    nb = 0;
    for (int64_t j0 = 0; j0 < n; j0 += B, nb++) {
      int64_t j1 = j0 + B < n ? j0 + B : n;
      @T@ f[L];
      for (int l = 0; l < w; l++)
        f[l] = @EXPNEG@(block_max[nb][l] - m[l]) / s[l] * post;
      for (int64_t j = j0; j < j1; j++)
        for (int l = 0; l < w; l++)
          y[j * inner + l] *= f[l];
    }
  }
  for (int l = 0; l < w; l++) {
    m_io[l] = m[l];
    s_io[l] = s[l];
  }
}

/* How many units (rows, or panels of LANES strided columns) make a chunk
 * for lgen_softmax: contiguous rows run in chunks of up to 16, each row's
 * second pass overlapping the next row's first (lgen_softmax_row); the
 * chunks, at least 64 of them where there are rows enough, are what the
 * threads share. */
static int64_t lgen_softmax_units_@S@(int64_t outer, int64_t inner)
{
  return outer * ((inner + LGEN_SOFTMAX_LANES - 1) / LGEN_SOFTMAX_LANES);
}

static int64_t lgen_softmax_chunk_@S@(int64_t outer, int64_t inner, int is_log)
{
  int64_t units = lgen_softmax_units_@S@(outer, inner);
  int64_t chunk = inner == 1 && !is_log ? units / 64 : 1;
  return chunk < 1 ? 1 : chunk > 16 ? 16 : chunk;
}

/* Units [u0, u1) of [outer, n, inner] (see lgen_softmax_chunk), one chunk.
 * ymax, ysum, yscale: [outer, inner]. The emitted code shares the chunks
 * out among threads itself (an orphaned `omp for` over them), so that an
 * elementwise op after the softmax can run on a chunk's rows while they
 * are in cache (row fusion, man page). */
static void lgen_softmax_@S@(const @T@ *restrict x, @T@ *restrict y,
                             @T@ *restrict ymax, @T@ *restrict ysum,
                             @T@ *restrict yscale, const @T@ *restrict max_init,
                             const @T@ *restrict sum_init, int64_t outer, int64_t n,
                             int64_t inner, @T@ scale, @T@ post, int is_log, int64_t u0,
                             int64_t u1)
{
  enum { L = LGEN_SOFTMAX_LANES };
  int64_t panels = (inner + L - 1) / L;
  @T@ factors[2][LGEN_SOFTMAX_BLOCKS];
  @T@ *pending = 0;
  for (int64_t r = u0; r < u1; r++) {
    int64_t o = r / panels, c0 = r % panels * L;
    int w = inner - c0 < L ? (int)(inner - c0) : L;
    @T@ m[L], s[L], m0[L], s0[L];
    for (int l = 0; l < w; l++) {
      m0[l] = m[l] = max_init ? max_init[o * inner + c0 + l] : @LOWEST@;
      s0[l] = s[l] = sum_init ? sum_init[o * inner + c0 + l] : 0;
    }
    const @T@ *xr = x + o * n * inner + c0;
    @T@ *yr = y + o * n * inner + c0;
    if (inner == 1 && !is_log) {
      lgen_softmax_row_@S@(xr, yr, m, s, n, scale, post, 0, x + outer * n, pending,
                           pending ? factors[(r + 1) % 2] : 0, factors[r % 2]);
      pending = yr;
    } else if (inner == 1)
      lgen_softmax_row_@S@(xr, yr, m, s, n, scale, post, 1, x + outer * n, 0, 0, 0);
    else
      lgen_softmax_cols_@S@(xr, yr, m, s, n, inner, w, scale, post, is_log);
    for (int l = 0; l < w; l++) {
      int64_t at = o * inner + c0 + l;
      ymax[at] = m[l];
      ysum[at] = s[l];
      yscale[at] = s0[l] == 0 ? 0 : s0[l] * @EXPNEG@(m0[l] - m[l]) / s[l];
    }
  }
  if (pending) /* the chunk's last row */
    lgen_softmax_rescale_@S@(pending, n, lgen_softmax_block_@S@(n, LGEN_SOFTMAX_MIN_BLOCK),
                             factors[(u1 - 1) % 2]);
}
