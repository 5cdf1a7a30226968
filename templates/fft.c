/* fft: discrete Fourier transforms of rows, computed in f64 whatever the
 * element type, by one of three methods chosen from the length n:
 *   - a power of two: iterative radix-2 Cooley-Tukey (bit-reversed order,
 *     then log2 n butterfly stages), O(n log n);
 *   - up to 64 otherwise: the plain DFT, O(n^2), with (j k) mod n exact;
 *   - longer: Bluestein's chirp z-transform, O(n log n): with
 *     w_j = e^{-i pi j^2 / n}, X_k = w_k sum_j (x_j w_j) conj(w_{k-j}), a
 *     circular convolution of length m (the power of two >= 2 n - 1) done
 *     by radix-2 transforms.
 * The inverse conjugates (e^{+i ...}) and scales by 1 / n, as numpy.fft.ifft
 * and ONNX DFT do. tab (18 n doubles, shared by the rows) holds the cos, sin
 * table of 2 pi k / m (m = n unless Bluestein), then Bluestein's chirp w
 * (j^2 mod 2 n kept exact) and the transform of conj(w) wrapped to length
 * m; it is filled once per call. buf gives each row 10 n doubles: the
 * signal's parts (n, n), then the plain DFT's result or Bluestein's
 * length-m sequence (m < 4 n). */
typedef struct {
  int64_t n, m;           /* m: the radix-2 length (n, or Bluestein's) */
  const double *tw;       /* m (cos, sin) pairs */
  const double *chirp;    /* Bluestein: n (cos, sin) of pi j^2 / n */
  const double *bhat;     /* Bluestein: the length-m transform of conj(w) */
} lgen_fft_plan_@S@;

/* In place, radix-2, length m (a power of two), table tw of m pairs. */
static void lgen_fft_radix2_@S@(double *restrict re, double *restrict im, int64_t m,
                                const double *restrict tw, int inverse)
{
  double sign = inverse ? 1.0 : -1.0; /* forward: e^{-i theta} */
  for (int64_t i = 1, j = 0; i < m; i++) { /* bit-reversal permutation */
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1)
      j ^= bit;
    j ^= bit;
    if (i < j) {
      double t = re[i];
      re[i] = re[j];
      re[j] = t;
      t = im[i];
      im[i] = im[j];
      im[j] = t;
    }
  }
  for (int64_t len = 2; len <= m; len <<= 1) {
    int64_t half = len / 2, step = m / len;
    for (int64_t b = 0; b < m; b += len)
      for (int64_t k = 0; k < half; k++) {
        double wr = tw[2 * k * step], wi = sign * tw[2 * k * step + 1];
        int64_t p = b + k, q = p + half;
        double xr = re[q] * wr - im[q] * wi, xi = re[q] * wi + im[q] * wr;
        re[q] = re[p] - xr;
        im[q] = im[p] - xi;
        re[p] += xr;
        im[p] += xi;
      }
  }
}

/* The plan for length n, its tables filled in tab by the threads together
 * (each loop's barrier orders the next). */
static lgen_fft_plan_@S@ lgen_fft_setup_@S@(double *restrict tab, int64_t n)
{
  lgen_fft_plan_@S@ p = {n, n, tab, 0, 0};
  int bluestein = n > 64 && (n & (n - 1)) != 0;
  if (bluestein)
    for (p.m = 1; p.m < 2 * n - 1; p.m <<= 1)
      ;
  int64_t m = p.m;
  LGEN_OMP(omp for)
  for (int64_t k = 0; k < m; k++) {
    double a = 6.283185307179586476925286766559 * (double)k / (double)m;
    tab[2 * k] = cos(a);
    tab[2 * k + 1] = sin(a);
  }
  if (!bluestein)
    return p;
  double *restrict chirp = tab + 2 * m, *restrict bhat = chirp + 2 * n;
  LGEN_OMP(omp for)
  for (int64_t j = 0; j < n; j++) {
    double a = 3.1415926535897932384626433832795 * (double)(j * j % (2 * n)) / (double)n;
    chirp[2 * j] = cos(a);
    chirp[2 * j + 1] = sin(a);
  }
  LGEN_OMP(omp single)
  { /* conj(w_j) = e^{+i pi j^2 / n} at j and m - j; its transform */
    double *restrict br = bhat, *restrict bi = bhat + m;
    for (int64_t j = 0; j < m; j++)
      br[j] = bi[j] = 0.0;
    for (int64_t j = 0; j < n; j++) {
      br[j] = chirp[2 * j];
      bi[j] = chirp[2 * j + 1];
      if (j > 0) {
        br[m - j] = br[j];
        bi[m - j] = bi[j];
      }
    }
    lgen_fft_radix2_@S@(br, bi, m, tab, 0);
  }
  p.chirp = chirp;
  p.bhat = bhat;
  return p;
}

/* re, im: one row of n points, transformed in place (s: the row's scratch). */
static void lgen_fft_core_@S@(double *restrict re, double *restrict im, double *restrict s,
                              const lgen_fft_plan_@S@ *pl, int inverse)
{
  int64_t n = pl->n, m = pl->m;
  const double *restrict tw = pl->tw;
  if (n <= 1)
    return;
  if ((n & (n - 1)) == 0) {
    lgen_fft_radix2_@S@(re, im, n, tw, inverse);
    return;
  }
  if (m == n) { /* plain DFT: x_j w^{jk}, (j k) mod n kept exact */
    double sign = inverse ? 1.0 : -1.0;
    double *restrict sr = s, *restrict si = s + n;
    for (int64_t k = 0; k < n; k++) {
      double ar = 0, ai = 0;
      for (int64_t j = 0, e = 0; j < n; j++) {
        double wr = tw[2 * e], wi = sign * tw[2 * e + 1];
        ar += re[j] * wr - im[j] * wi;
        ai += re[j] * wi + im[j] * wr;
        e += k;
        if (e >= n)
          e -= n;
      }
      sr[k] = ar;
      si[k] = ai;
    }
    for (int64_t k = 0; k < n; k++) {
      re[k] = sr[k];
      im[k] = si[k];
    }
    return;
  }
  /* Bluestein; the inverse is the forward transform of the conjugate, conjugated */
  double conj = inverse ? -1.0 : 1.0;
  double *restrict ar = s, *restrict ai = s + m;
  const double *restrict c = pl->chirp, *restrict bh = pl->bhat;
  for (int64_t j = 0; j < n; j++) { /* a_j = x_j w_j, w_j = cos - i sin */
    double xr = re[j], xi = conj * im[j];
    ar[j] = xr * c[2 * j] + xi * c[2 * j + 1];
    ai[j] = xi * c[2 * j] - xr * c[2 * j + 1];
  }
  for (int64_t j = n; j < m; j++)
    ar[j] = ai[j] = 0.0;
  lgen_fft_radix2_@S@(ar, ai, m, tw, 0);
  for (int64_t j = 0; j < m; j++) {
    double xr = ar[j] * bh[j] - ai[j] * bh[m + j], xi = ar[j] * bh[m + j] + ai[j] * bh[j];
    ar[j] = xr;
    ai[j] = xi;
  }
  lgen_fft_radix2_@S@(ar, ai, m, tw, 1);
  double scale = 1.0 / (double)m;
  for (int64_t k = 0; k < n; k++) { /* X_k = w_k (a * b)_k */
    double yr = ar[k] * scale, yi = ai[k] * scale;
    re[k] = yr * c[2 * k] + yi * c[2 * k + 1];
    im[k] = conj * (yi * c[2 * k] - yr * c[2 * k + 1]);
  }
}

/* Rows of points along the middle axis of [outer, n, inner]: point j of
 * row (o, i) is xr[((o * n + j) * inner + i) * cin] (xi likewise; NULL: a
 * real signal), and bin k of the result goes to yr (yi; NULL: keep the real
 * part only) at ((o * nout + k) * inner + i) * cout. The fft op has real and
 * imaginary parts apart (cin = cout = 1), ONNX DFT's layout interleaves them
 * (x, x + 1 with cin = 2). The row is zero-padded or cut to len points and
 * the first nout bins are kept (onesided: len / 2 + 1). hermitian: the n
 * points are a half spectrum, extended to len by X[len - j] = conj(X[j])
 * (numpy.fft.irfft, with the real part kept). */
static void lgen_fft_@S@(const @T@ *restrict xr, const @T@ *restrict xi,
                         @T@ *restrict yr, @T@ *restrict yi, double *restrict buf,
                         double *restrict tab, int64_t outer, int64_t n, int64_t inner, int64_t cin,
                         int64_t len, int64_t nout, int64_t cout, int inverse, int hermitian)
{
  double scale = inverse && len > 0 ? 1.0 / (double)len : 1.0;
  lgen_fft_plan_@S@ plan = lgen_fft_setup_@S@(tab, len);
  LGEN_OMP(omp for)
  for (int64_t r = 0; r < outer * inner; r++) {
    int64_t o = r / inner, i = r % inner, step = inner * cin;
    double *restrict re = buf + r * 10 * len, *restrict im = re + len;
    int64_t base = (o * n * inner + i) * cin;
    for (int64_t j = 0; j < len; j++) {
      int64_t at = j;
      double conj = 1.0;
      if (hermitian && j > len / 2) { /* X[len - j] conjugated */
        at = len - j;
        conj = -1.0;
      }
      re[j] = at < n ? (double)xr[base + at * step] : 0.0;
      im[j] = at < n && xi ? conj * (double)xi[base + at * step] : 0.0;
    }
    lgen_fft_core_@S@(re, im, im + len, &plan, inverse);
    int64_t ostep = inner * cout, obase = (o * nout * inner + i) * cout;
    for (int64_t k = 0; k < nout; k++) {
      yr[obase + k * ostep] = (@T@)(re[k] * scale);
      if (yi)
        yi[obase + k * ostep] = (@T@)(im[k] * scale);
    }
  }
}
