/* softmax (is_log = 0) or log-softmax (is_log = 1) of scale * x along the middle
 * axis of [outer, n, inner], with ByteIR's statistics: per row the max m,
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
 * f32), whatever the row length. Rows with the axis innermost vectorise
 * along the row; otherwise LGEN_SOFTMAX_LANES neighbouring columns are
 * processed together, one vector lane each. */
#include <string.h>
#ifndef LGEN_SOFTMAX_LANES
#define LGEN_SOFTMAX_LANES 16
#define LGEN_SOFTMAX_BLOCKS 64
#endif

/* Rows per block: at least 512 (or 64 for a strided panel), and few
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
  return i ^ (-(@SINT@)(i < 0) & ~((@SINT@)1 << (8 * sizeof i - 1)));
}

static @T@ lgen_softmax_unkey_@S@(@SINT@ i)
{
  @T@ f;
  i ^= -(@SINT@)(i < 0) & ~((@SINT@)1 << (8 * sizeof i - 1));
  memcpy(&f, &i, sizeof f);
  return f;
}

/* The max of m and scale * x[0, n). */
static @T@ lgen_softmax_max_@S@(const @T@ *restrict x, int64_t n, @T@ scale, @T@ m)
{
  @SINT@ k = lgen_softmax_key_@S@(m);
  for (int64_t j = 0; j < n; j++) {
    @SINT@ v = lgen_softmax_key_@S@(scale * x[j]);
    k = v > k ? v : k;
  }
  return lgen_softmax_unkey_@S@(k);
}

/* One contiguous row of n values. */
static void lgen_softmax_row_@S@(const @T@ *restrict x, @T@ *restrict y, @T@ *m_io, @T@ *s_io, int64_t n,
                                 @T@ scale, int is_log)
{
  enum { L = LGEN_SOFTMAX_LANES };
  const int64_t B = lgen_softmax_block_@S@(n, 512);
  @T@ block_max[LGEN_SOFTMAX_BLOCKS];
  @T@ m = *m_io, s = *s_io;
  int nb = 0;
  for (int64_t j0 = 0; j0 < n; j0 += B, nb++) {
    /* [j0, full) in whole vectors of L, then the tail; each loop has its
     * own counter, which gcc needs to vectorise it */
    const int64_t j1 = j0 + B < n ? j0 + B : n, full = j0 + (j1 - j0) / L * L;
    @T@ lane[L];
    @T@ bm = lgen_softmax_max_@S@(x + j0, j1 - j0, scale, m);
    /* the running sum moves to the new max; with nothing summed yet (s ==
     * 0, also when m is still -inf) it stays 0 */
    s = s == 0 ? s : s * @EXP@(m - bm);
    m = bm;
    for (int l = 0; l < L; l++)
      lane[l] = 0;
    if (is_log) {
      for (int64_t j = j0; j < full; j += L)
        for (int l = 0; l < L; l++)
          lane[l] += @EXP@(scale * x[j + l] - bm);
      for (int64_t j = full; j < j1; j++)
        lane[0] += @EXP@(scale * x[j] - bm);
    } else {
      for (int64_t j = j0; j < full; j += L)
        for (int l = 0; l < L; l++) {
          @T@ e = @EXP@(scale * x[j + l] - bm);
          y[j + l] = e;
          lane[l] += e;
        }
      for (int64_t j = full; j < j1; j++) {
        y[j] = @EXP@(scale * x[j] - bm);
        lane[0] += y[j];
      }
    }
    for (int l = 0; l < L; l++)
      s += lane[l];
    block_max[nb] = bm;
  }
  if (is_log) {
    @T@ shift = m + @LOG@(s);
    for (int64_t j = 0; j < n; j++)
      y[j] = scale * x[j] - shift;
  } else {
    nb = 0;
    for (int64_t j0 = 0; j0 < n; j0 += B, nb++) {
      int64_t j1 = j0 + B < n ? j0 + B : n;
      @T@ f = @EXP@(block_max[nb] - m) / s;
      for (int64_t j = j0; j < j1; j++)
        y[j] *= f;
    }
  }
  *m_io = m;
  *s_io = s;
}

/* w <= LANES columns of a row whose elements lie `inner` apart. */
static void lgen_softmax_cols_@S@(const @T@ *restrict x, @T@ *restrict y, @T@ *m_io, @T@ *s_io, int64_t n,
                                  int64_t inner, int w, @T@ scale, int is_log)
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
    @T@ bm[L], sum[L];
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
      s[l] = s[l] == 0 ? s[l] : s[l] * @EXP@(m[l] - bm[l]);
      m[l] = bm[l];
    }
    for (int64_t j = j0; j < j1; j++)
      for (int l = 0; l < w; l++) {
        @T@ e = @EXP@(scale * x[j * inner + l] - bm[l]);
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
        y[j * inner + l] = scale * x[j * inner + l] - shift[l];
  } else {
    nb = 0;
    for (int64_t j0 = 0; j0 < n; j0 += B, nb++) {
      int64_t j1 = j0 + B < n ? j0 + B : n;
      @T@ f[L];
      for (int l = 0; l < w; l++)
        f[l] = @EXP@(block_max[nb][l] - m[l]) / s[l];
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

/* ymax, ysum, yscale: [outer, inner] */
static void lgen_softmax_@S@(const @T@ *restrict x, @T@ *restrict y, @T@ *restrict ymax, @T@ *restrict ysum,
                             @T@ *restrict yscale, const @T@ *restrict max_init, const @T@ *restrict sum_init,
                             int64_t outer, int64_t n, int64_t inner, @T@ scale, int is_log)
{
  enum { L = LGEN_SOFTMAX_LANES };
  int64_t panels = (inner + L - 1) / L;
  LGEN_OMP(omp for schedule(static))
  for (int64_t r = 0; r < outer * panels; r++) {
    int64_t o = r / panels, c0 = r % panels * L;
    int w = inner - c0 < L ? (int)(inner - c0) : L;
    @T@ m[L], s[L], m0[L], s0[L];
    for (int l = 0; l < w; l++) {
      m0[l] = m[l] = max_init ? max_init[o * inner + c0 + l] : @LOWEST@;
      s0[l] = s[l] = sum_init ? sum_init[o * inner + c0 + l] : 0;
    }
    const @T@ *xr = x + o * n * inner + c0;
    @T@ *yr = y + o * n * inner + c0;
    if (inner == 1)
      lgen_softmax_row_@S@(xr, yr, m, s, n, scale, is_log);
    else
      lgen_softmax_cols_@S@(xr, yr, m, s, n, inner, w, scale, is_log);
    for (int l = 0; l < w; l++) {
      int64_t at = o * inner + c0 + l;
      ymax[at] = m[l];
      ysum[at] = s[l];
      yscale[at] = s0[l] == 0 ? 0 : s0[l] * @EXP@(m0[l] - m[l]) / s[l];
    }
  }
}
