/* ulp.c - accuracy of the generated C's lgen_exp_f32, lgen_log_f32,
 * lgen_tanh_f32, lgen_erf_f32 and lgen_expneg_f32 (softmax's exp of x <= 0,
 * whose contract is exp(x), or 0 where that is below 2^-126) (c_expr.c) against libm's double functions
 * rounded to float, over every STRIDE-th float bit pattern (1: all 2^32) plus
 * the special values. Built by tests/vmath.test with -DVMATH_C="gen.c", the
 * C lgen generated for a graph that uses all four.
 *
 *   ulp STRIDE   prints each function's largest error; exits 1 when one
 *                exceeds its bound (the numbers man/lgen.1 states) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include VMATH_C

typedef struct {
  const char *name;
  float (*approx)(float);
  double (*exact)(double);
  int64_t bound_ulp;
  int nonpositive; /* defined for x <= 0 (and NaN) only */
} Function;

static double expneg(double x) {
  double e = exp(x);
  return e < 0x1p-126 ? 0.0 : e;
}

static const Function functions[] = {
    {"exp", lgen_exp_f32, exp, 2, 0},
    {"log", lgen_log_f32, log, 2, 0},
    {"tanh", lgen_tanh_f32, tanh, 2, 0},
    {"erf", lgen_erf_f32, erf, 2, 0},
    {"expneg", lgen_expneg_f32, expneg, 2, 1},
};

/* floats as integers ordered like the values: the ulp distance is a difference */
static int64_t ordered(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (u & 0x80000000u) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}

/* ulps between f(x) and the exact value rounded to float; NaN must match NaN */
static int64_t error_at(const Function *f, float x) {
  float got = f->approx(x), want = (float)f->exact((double)x);
  if (isnan(got) || isnan(want))
    return isnan(got) && isnan(want) ? 0 : INT32_MAX;
  return llabs(ordered(got) - ordered(want));
}

static int check(const Function *f, uint32_t stride) {
  static const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 0x1p-149f, -0x1p-149f, 0x1p-126f, 0x1.fffffep+127f,
                                   -0x1.fffffep+127f, 88.72f, 88.73f, -87.3f, -103.9f, -104.0f, 0.625f, 0.875f, 4.0f};
  int64_t worst = 0;
  float worst_x = 0.0f;
  for (size_t i = 0; i < sizeof specials / sizeof *specials + 3; i++) {
    size_t n = sizeof specials / sizeof *specials;
    float x = i < n ? specials[i] : i == n ? HUGE_VALF : i == n + 1 ? -HUGE_VALF : (float)NAN;
    if (f->nonpositive && x > 0)
      continue;
    int64_t e = error_at(f, x);
    if (e > worst)
      worst = e, worst_x = x;
  }
  for (uint64_t u = 0; u <= 0xffffffffu; u += stride) {
    uint32_t bits = (uint32_t)u;
    float x;
    memcpy(&x, &bits, sizeof x);
    if (f->nonpositive && x > 0)
      continue;
    int64_t e = error_at(f, x);
    if (e > worst)
      worst = e, worst_x = x;
  }
  printf("%s: max %lld ulp (bound %lld) at %a: %a, libm %a\n", f->name, (long long)worst, (long long)f->bound_ulp,
         worst_x, f->approx(worst_x), (float)f->exact(worst_x));
  return worst <= f->bound_ulp;
}

int main(int argc, char **argv) {
  uint32_t stride = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1;
  int ok = 1;
  for (size_t i = 0; i < sizeof functions / sizeof *functions; i++)
    ok &= check(&functions[i], stride ? stride : 1);
  return ok ? 0 : 1;
}
