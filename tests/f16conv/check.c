/* check.c - the generated C's f16 conversions (LGEN_F16_TO_F32 and
 * LGEN_F32_TO_F16, c_emit.c) against an exact reference that shares nothing
 * with them: every one of the 65536 f16 bit patterns widened, and every
 * STRIDE-th float bit pattern (1: all 2^32) plus the values around each f16
 * and each halfway point narrowed. Built by tests/f16conv.test with
 * -DGEN_C="gen.c", the C lgen generated for a graph of two casts
 * (f16conv_run: h f16 -> w f32, x f32 -> n f16).
 *
 *   check STRIDE   prints the number of mismatches; exits 1 if any */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include GEN_C

/* The value of f16 bits b, from the format's definition. */
static double f16_value(uint16_t b) {
  int sign = b >> 15, exp = (b >> 10) & 0x1f, man = b & 0x3ff;
  double v;
  if (exp == 0x1f)
    v = man ? NAN : INFINITY;
  else if (exp == 0)
    v = ldexp(man, -24);
  else
    v = ldexp(1024 + man, exp - 25);
  return sign ? -v : v;
}

/* The f16 nearest to x (ties to the even bits), by search over the finite
 * positive f16 values in order: an infinity beyond 65520 (the halfway point
 * to 2^16), a quiet NaN for a NaN. */
static uint16_t nearest_f16(double x) {
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs(x);
  if (isnan(x))
    return sign | 0x7e00;
  if (a >= 65520.0)
    return sign | 0x7c00;
  uint16_t lo = 0, hi = 0x7bff; /* the largest f16 <= a */
  while (lo < hi) {
    uint16_t mid = (uint16_t)((lo + hi + 1) / 2);
    if (f16_value(mid) <= a)
      lo = mid;
    else
      hi = (uint16_t)(mid - 1);
  }
  if (lo < 0x7bff) {
    double below = a - f16_value(lo), above = f16_value((uint16_t)(lo + 1)) - a; /* exact in double */
    if (above < below || (above == below && (lo & 1)))
      lo++;
  }
  return sign | lo;
}

static uint16_t bits16(lgen_f16 h) {
  uint16_t b;
  memcpy(&b, &h, sizeof b);
  return b;
}

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

#define CHUNK 65536

int main(int argc, char **argv) {
  uint64_t stride = argc > 1 ? strtoull(argv[1], NULL, 10) : 4099, bad = 0, checked = 0;
  static lgen_f16 h[65536], n[CHUNK];
  static float w[65536], x[CHUNK];
  /* widen: every f16 */
  for (uint32_t b = 0; b < 65536; b++) {
    uint16_t u = (uint16_t)b;
    memcpy(&h[b], &u, sizeof u);
  }
  f16conv_run(h, x, w, n, 65536, 0, NULL);
  for (uint32_t b = 0; b < 65536; b++) {
    double want = f16_value((uint16_t)b);
    int ok = isnan(want) ? isnan(w[b]) : (double)w[b] == want && !signbit(w[b]) == !signbit(want);
    if (!ok && bad++ < 10)
      printf("widen %04x: got %a, want %a\n", (unsigned)b, w[b], want);
  }
  checked += 65536;
  /* narrow: the sample, then around every positive and negative f16 value
   * and halfway point (the float just below, at and just above each) */
  uint64_t next = 0;
  int phase = 0;
  uint32_t around = 0;
  for (;;) {
    int m = 0;
    while (m < CHUNK && phase < 2) {
      if (phase == 0) {
        x[m++] = from_bits((uint32_t)next);
        next += stride;
        if (next > 0xffffffffu)
          phase = 1;
      } else {
        uint16_t b = (uint16_t)(around >> 1);
        double v = f16_value(b), v2 = (b & 0x7fff) < 0x7c00 ? f16_value((uint16_t)(b + 1)) : v;
        float c = (float)(around & 1 ? (v + v2) / 2 : v); /* halfway points are floats */
        if (m + 3 > CHUNK)
          break;
        x[m++] = nextafterf(c, -INFINITY), x[m++] = c, x[m++] = nextafterf(c, INFINITY);
        if (++around == 2 * 65536)
          phase = 2;
      }
    }
    if (m == 0)
      break;
    f16conv_run(h, x, w, n, 0, m, NULL);
    for (int i = 0; i < m; i++) {
      uint16_t got = bits16(n[i]), want = nearest_f16((double)x[i]);
      int ok = isnan(x[i]) ? (got & 0x7c00) == 0x7c00 && (got & 0x3ff) != 0 : got == want;
      if (!ok && bad++ < 10)
        printf("narrow %a: got %04x, want %04x\n", x[i], got, want);
    }
    checked += (uint64_t)m;
  }
  printf("%llu conversions checked, %llu wrong\n", (unsigned long long)checked, (unsigned long long)bad);
  return bad != 0;
}
