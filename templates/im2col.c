/* im2col: an NHWC image [nb, h, w, c] as the matrix [nb, oh * ow, kh * kw * c]
 * whose row (y, x) holds the window of output point (y, x), in (kh, kw, c)
 * order: a conv is then this matrix times the HWCF filter seen as
 * [kh * kw * c, f]. Points in the padding are zeros. Each window row is
 * kw runs of c contiguous elements. */
static void lgen_im2col_@S@(const @T@ *restrict x, @T@ *restrict col, int64_t nb,
                            int64_t h, int64_t w, int64_t c, int64_t oh, int64_t ow, int64_t kh,
                            int64_t kw, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph,
                            int64_t pw)
{
  LGEN_OMP(omp for)
  for (int64_t r = 0; r < nb * oh * ow; r++) {
    int64_t b = r / (oh * ow), oy = r / ow % oh, ox = r % ow;
    @T@ *restrict q = col + r * kh * kw * c;
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
