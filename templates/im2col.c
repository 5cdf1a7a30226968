/* im2col: an NHWC image [nb, h, w, c] as the matrix [nb, oh * ow, kh * kw * c]
 * whose row (y, x) holds the window of output point (y, x), in (kh, kw, c)
 * order: a conv is then this matrix times the HWCF filter seen as
 * [kh * kw * c, f]. An NCHW image (nchw 1: [nb, c, h, w]) gives the columns
 * in (c, kh, kw) order, FCHW's. Points in the padding are zeros. The result
 * is the tile of msz rows from m0 and ksz columns from k0 of that matrix,
 * [nb, msz, ksz]. A whole NHWC row is kw runs of c contiguous elements;
 * other tiles go element by element. */
static void lgen_im2col_@S@(const @T@ *restrict x, @T@ *restrict col, int64_t nb,
                            int64_t h, int64_t w, int64_t c, int64_t oh, int64_t ow, int64_t kh,
                            int64_t kw, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph,
                            int64_t pw, int nchw, int64_t m0, int64_t msz, int64_t k0, int64_t ksz)
{
  int whole = !nchw && k0 == 0 && ksz == kh * kw * c;
  (void)oh;
  LGEN_OMP(omp for)
  for (int64_t r = 0; r < nb * msz; r++) {
    int64_t b = r / msz, m = m0 + r % msz, oy = m / ow, ox = m % ow;
    @T@ *restrict q = col + r * ksz;
    if (!whole) {
      for (int64_t t = 0; t < ksz; t++) {
        int64_t k = k0 + t, i, j, ch;
        if (nchw)
          ch = k / (kh * kw), i = k / kw % kh, j = k % kw;
        else
          ch = k % c, i = k / c / kw, j = k / c % kw;
        int64_t iy = oy * sh + i * dh - ph, ix = ox * sw + j * dw - pw;
        if (iy < 0 || iy >= h || ix < 0 || ix >= w)
          q[t] = (@T@)0;
        else
          q[t] = x[nchw ? ((b * c + ch) * h + iy) * w + ix : ((b * h + iy) * w + ix) * c + ch];
      }
      continue;
    }
    for (int64_t i = 0; i < kh; i++) {
      int64_t iy = oy * sh + i * dh - ph;
      for (int64_t j = 0; j < kw; j++, q += c) {
        int64_t ix = ox * sw + j * dw - pw;
        if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
          for (int64_t k = 0; k < c; k++)
            q[k] = (@T@)0;
          continue;
        }
        const @T@ *restrict p = x + ((b * h + iy) * w + ix) * c;
        for (int64_t k = 0; k < c; k++)
          q[k] = p[k];
      }
    }
  }
}
