/* hexfloat.h - exact hexadecimal floating-point literals without printf.
 *
 * A model's constants are written to C as hex floats, one per element: 25
 * million of them for 100 MB of f32 weights, where printf("%a") (parsing the
 * format, twice, in sb_printf) was the generator's hottest spot. */
#ifndef LGEN_HEXFLOAT_H
#define LGEN_HEXFLOAT_H

#include "util/util.h"

/* Appends v as printf("%a", v) does in glibc, byte for byte: "0x1.8p+1",
 * "-0x0p+0", subnormals as "0x0.0000000000001p-1022", trailing zero digits
 * dropped; "inf" / "nan" (with their sign) for the rest. Being lgen's own,
 * the spelling no longer depends on the C library lgen runs on. */
void sb_put_hexfloat(StrBuf *sb, double v);

#endif
