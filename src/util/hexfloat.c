/* hexfloat.c - see hexfloat.h. */
#include "util/hexfloat.h"

#include <string.h>

/* Decimal digits of e (no sign) at the end of buf[0..24); returns where
 * they start. */
static char *decimal_digits(char *end, unsigned e) {
  char *p = end;
  do {
    *--p = (char)('0' + e % 10);
    e /= 10;
  } while (e);
  return p;
}

void sb_put_hexfloat(StrBuf *sb, double v) {
  static const char hex[] = "0123456789abcdef";
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  uint64_t mant = bits & ((UINT64_C(1) << 52) - 1);
  unsigned biased = (unsigned)(bits >> 52) & 0x7FF;
  char buf[40];
  char *p = buf;
  if (bits >> 63)
    *p++ = '-';
  if (biased == 0x7FF) {
    memcpy(p, mant ? "nan" : "inf", 3);
    sb_putn(sb, buf, (size_t)(p - buf) + 3);
    return;
  }
  /* 0x1.<digits>p<exp> for normal numbers, 0x0.<digits>p-1022 for zero
   * and subnormals (and zero has no digits: 0x0p+0) */
  bool normal = biased != 0;
  int exp = mant == 0 && !normal ? 0 : normal ? (int)biased - 1023 : -1022;
  memcpy(p, normal ? "0x1" : "0x0", 3);
  p += 3;
  if (mant) {
    *p++ = '.';
    for (int shift = 48; shift >= 0 && (mant & ((UINT64_C(1) << (shift + 4)) - 1)); shift -= 4)
      *p++ = hex[(mant >> shift) & 0xF];
  }
  *p++ = 'p';
  *p++ = exp < 0 ? '-' : '+';
  char digits[8];
  char *d = decimal_digits(digits + sizeof digits, (unsigned)(exp < 0 ? -exp : exp));
  size_t nd = (size_t)(digits + sizeof digits - d);
  memcpy(p, d, nd);
  p += nd;
  sb_putn(sb, buf, (size_t)(p - buf));
}
