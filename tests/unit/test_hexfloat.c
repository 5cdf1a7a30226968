/* test_hexfloat.c - sb_put_hexfloat (src/util/hexfloat.c) spells constants
 * exactly as printf("%a") did in glibc, so generated C stays byte for byte
 * what it was. */
#include <float.h>
#include <math.h>

#include "unit.h"
#include "util/hexfloat.h"

static void expect_hex(double v, const char *want) {
  StrBuf sb = {0};
  sb_put_hexfloat(&sb, v);
  cr_assert_str_eq(sb_cstr(&sb), want);
  sb_free(&sb);
}

Test(hexfloat, spellings) {
  expect_hex(0.0, "0x0p+0");
  expect_hex(-0.0, "-0x0p+0");
  expect_hex(1.0, "0x1p+0");
  expect_hex(-3.0, "-0x1.8p+1");
  expect_hex(0.1, "0x1.999999999999ap-4");
  expect_hex(0.1f, "0x1.99999ap-4");
  expect_hex(DBL_MAX, "0x1.fffffffffffffp+1023");
  expect_hex(DBL_MIN, "0x1p-1022");
  expect_hex(4.9406564584124654e-324, "0x0.0000000000001p-1022");
  expect_hex(FLT_MIN / 2, "0x1p-127");
  expect_hex(1024.0, "0x1p+10");
  expect_hex(INFINITY, "inf");
  expect_hex(-INFINITY, "-inf");
}

#ifdef __GLIBC__
/* Random bit patterns of doubles and floats against the C library. */
Test(hexfloat, same_as_glibc_printf) {
  uint64_t x = 88172645463325252u;
  StrBuf sb = {0};
  for (int i = 0; i < 200000; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    double v;
    if (i % 2) {
      uint32_t b = (uint32_t)x;
      float f;
      memcpy(&f, &b, sizeof f);
      v = f;
    } else {
      uint64_t b = i % 6 == 0 ? x & 0x800FFFFFFFF00000u : x; /* subnormals, short digits */
      memcpy(&v, &b, sizeof v);
    }
    if (isnan(v))
      continue;
    char want[64];
    snprintf(want, sizeof want, "%a", v);
    sb.len = 0;
    sb_put_hexfloat(&sb, v);
    cr_assert_str_eq(sb_cstr(&sb), want);
  }
  sb_free(&sb);
}
#endif
