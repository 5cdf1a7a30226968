/* The indices of ONNX MaxPool (its second output) for 1-D and 2-D NCHW
 * pools: for each output position, the flat index in x of the window's
 * maximum, ((n C + c) H + h) W + w, or ((n C + c) W + w) H + h when
 * colmajor (storage_order 1). Positions in the padding never win; between
 * equal values the first in window order (rows, then columns) wins, as
 * NumPy's argmax over the window. A window with no position inside the
 * image, or only NaN, gives -1. x: [nc, h, w]; idx: [nc, oh, ow]. */
static void lgen_maxpool_index_@S@(const @T@ *restrict x, @I@ *restrict idx,
                                   int64_t nc, int64_t h, int64_t w, int64_t oh, int64_t ow,
                                   int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t dh,
                                   int64_t dw, int64_t ph, int64_t pw, int colmajor)
{
  LGEN_OMP(omp for)
  for (int64_t p = 0; p < nc * oh; p++) {
    int64_t q = p / oh, i = p % oh;
    for (int64_t j = 0; j < ow; j++) {
      @T@ best = @LOWEST@;
      int64_t at = -1;
      for (int64_t a = 0; a < kh; a++) {
        int64_t r = i * sh - ph + a * dh;
        if (r < 0 || r >= h)
          continue;
        for (int64_t b = 0; b < kw; b++) {
          int64_t c = j * sw - pw + b * dw;
          if (c < 0 || c >= w)
            continue;
          @T@ v = x[(q * h + r) * w + c];
          if (v > best || (at < 0 && v == best)) {
            best = v;
            at = colmajor ? (q * w + c) * h + r : (q * h + r) * w + c;
          }
        }
      }
      idx[p * ow + j] = (@I@)at;
    }
  }
}
