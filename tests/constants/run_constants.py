#!/usr/bin/python3
"""Embedded constants written as string literals of their bytes, against
NumPy (tests/constants.test).

lgen writes a constant of 256 bytes or more as one string literal of its
little-endian bytes (--constants=bytes, the default) and smaller ones, or
all with --constants=values, as lists of values. An escaping mistake in the
literal (a quote, a backslash, a '?' that starts a trigraph, an octal escape
that swallows the digit after it, a NUL) changes the weights silently, so
every constant here holds every byte value, those sequences and random
bytes, in every element type but i1, at sizes on both sides of the
threshold (1, 63, 64, 65, 257 and 1031 elements). Each node adds a zero
input to a constant; the output must equal NumPy's x + c exactly (NaN equal
to NaN), generated with the default, --constants=values and
--schedule=none, compiled with gcc -Werror (-std=c99 -pedantic -Wall
-Wextra) with and without -fopenmp.
"""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "ext-ops"), os.path.join(HERE, "..", "unsigned")]
import run_ext_ops as X  # noqa: E402  (main_for)
import run_unsigned as U  # noqa: E402  (Graph: constants as base64)

TYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i16": np.int16,
         "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
SIZES = (1, 63, 64, 65, 257, 1031)
# byte runs that a wrong escape would corrupt: quotes, backslashes, trigraphs
# (??= ??/ ??'), an octal escape before a digit (\0 then '1', \177 then '7'),
# NULs, the byte after an escape at a 32-byte line break
TRICKY = (b'"\\"\\\\??=??/??\'??-?' + b"\x001\x0077\x7f7\xff0\n1\r\t\x00\x00" + b"0123456789" * 3 + b"\x01" * 31 + b"7")


class Graph(U.Graph):  # constants in base64: JSON cannot hold NaN or u64 above 2^63
    def variants(self, base):
        return [("bytes", []), ("values", ["--constants=values"]), ("schedule-none", ["--schedule=none"])]


def tricky_bytes(r, n):
    """n bytes: every byte value, the tricky runs, then random bytes."""
    b = bytes(range(256)) + TRICKY
    b += r.integers(0, 256, size=max(0, n - len(b)), dtype=np.uint8).tobytes()
    return b[:n] if n <= len(b) else b


def g_constants(r):
    g = Graph("constants_bytes")
    for t, np_t in TYPES.items():
        size = np.dtype(np_t).itemsize
        for n in SIZES:
            start = int(r.integers(0, 256))  # each constant starts elsewhere in the byte cycle
            raw = tricky_bytes(r, n * size + start)[start:start + n * size]
            c = np.frombuffer(raw, dtype=np.dtype(np_t).newbyteorder("<")).astype(np_t).reshape(n)
            x = np.zeros(n, dtype=np_t)
            with np.errstate(all="ignore"):
                ref = x + c
            g.output(g.node("add", [g.input(x), g.const(c)]), ref)
    return g


def main():
    for k, v in TYPES.items():
        X.NP_TYPES[k] = v
        X.C_TYPES.setdefault(k, "%s_t" % np.dtype(v).name)
    return X.main_for([g_constants], "lgen-constants-", 21)


if __name__ == "__main__":
    sys.exit(main())
