#!/usr/bin/python3
"""End-to-end numeric tests of the kernels lgen generates from specs/linalg.tc.

What it does
------------
1. Runs ``$LGEN $srcdir/specs/linalg.tc -o k.c -H k.h`` once.
2. Generates a C driver (``driver.c``) that, given an op name, a case
   directory and the kernel's integer arguments on argv, reads the input
   tensors and the initial output tensors from ``t<i>.bin`` (raw, native
   endian, dense row-major), calls the kernel, checks that it wrote nothing
   outside the output buffers and did not modify its inputs, and writes the
   outputs to ``r<i>.bin``.
3. Compiles kernel + driver once per compiler configuration (see CONFIGS),
   all with ``-std=c99 -pedantic -Wall -Wextra -Werror -ffp-contract=off``.
4. For every op, for several shapes (tiny, odd, prime, 0-d where the op has
   them, larger-than-a-tile) and, for convolutions and pooling, several
   stride/dilation values, runs every binary and compares the outputs with
   an independent NumPy oracle (einsum, or explicit sliding-window loops over
   the window offsets).  Nothing here is shared with lgen: the ABI is
   re-derived below from the op table, and the table is checked against the
   signatures in the spec file.

If lgen fails on the whole spec file, each def is retried on its own so the
report names the defs that break; likewise if a compile fails.

Tolerances
----------
* Integer ops, and float ops that only move or select values (copy,
  transpose, fill, max/min pooling): exact (bit-identical) equality.
* Float reductions: the oracle computes in float64 from the same float32
  inputs.  With R = the reduction length (number of terms summed into each
  output element; R = 0 counts as 1), an element passes iff

      |got - ref| <= tol * (1 + |ref|),    tol = 1e-4 * sqrt(max(1, R)).

  Inputs and initial outputs are uniform in [-1, 1] (each summed term has
  magnitude <= 1, partial sums are O(sqrt(R))).  The float32 rounding error
  of such a sum, in any association order (sequential, tiled, vectorised,
  split across threads), grows like u * sqrt(R) * O(sqrt(R)), u = 2^-24;
  only the pathological worst case u * R * max|partial sum| comes near the
  tolerance (the cases here have R <= 1000).  Measured with naive
  sequential loops, the largest err/tol is about 0.01.  A wrong index or a
  dropped term changes an element by O(0.1..1), well outside it.

Environment
-----------
LGEN        lgen binary (default: src/lgen, relative to the current directory,
            which ``make check`` makes the build directory).
srcdir      top source directory (default: two levels above this script).
LGEN_FLAGS  extra options passed to lgen (e.g. --schedule=none).
CC_GCC, CC_CLANG  compiler commands (default gcc, clang).
OMP_NUM_THREADS   threads for the OpenMP configurations (default 2).

Output: one ``PASS ...`` or ``FAIL ...`` line per (case, compiler config),
notes prefixed with ``#``, then ``<n> passed, <m> failed``.  Exit status 0 iff
nothing failed (77 if no compiler configuration could run at all).
Options: --op NAME (repeatable), --cc CONFIG (repeatable), --keep, --list,
--sanitize (adds a gcc -fsanitize=address,undefined configuration).
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

# ---------------------------------------------------------------------------
# Compiler configurations
# ---------------------------------------------------------------------------

COMMON_FLAGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror",
                "-ffp-contract=off"]

CONFIGS = [
    # (name, compiler key, flags)
    ("gcc-O2-omp", "gcc", ["-O2", "-fopenmp"]),
    ("gcc-O0", "gcc", ["-O0"]),
    ("clang-O2-omp", "clang", ["-O2", "-fopenmp"]),
    ("clang-O2", "clang", ["-O2"]),
]

# Opt-in (--sanitize): out-of-bounds reads, and UB such as signed overflow,
# that the guard zones cannot see.
SANITIZE_CONFIG = ("gcc-asan-ubsan", "gcc",
                   ["-O1", "-g", "-DGUARD=0", "-fsanitize=address,undefined",
                    "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"])

RUN_TIMEOUT = 120   # seconds per driver run
OMP_THREADS = "2"

# ---------------------------------------------------------------------------
# Element types
# ---------------------------------------------------------------------------

CTYPE = {"f32": "float", "f64": "double", "i8": "int8_t", "i16": "int16_t",
         "i32": "int32_t", "i64": "int64_t", "u8": "uint8_t",
         "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t"}
NPTYPE = {"f32": np.float32, "f64": np.float64, "i8": np.int8,
          "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
          "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}

# ---------------------------------------------------------------------------
# NumPy oracles.  Every oracle takes (inputs, initial outputs, attrs) as
# NumPy arrays in their declared shapes and returns the expected outputs in
# float64 (floats) or int64 (integers).
# ---------------------------------------------------------------------------


def f64(a):
    return np.asarray(a, dtype=np.float64)


def i64(a):
    return np.asarray(a, dtype=np.int64)


def windows(x, out_sp, k_sp, strides, dils):
    """Yield, for each window offset, the strided/dilated view of x.

    x has layout (A, B, *spatial); the view has layout (A, B, *out_sp) and
    holds x[a, b, o0*s0 + k0*d0, o1*s1 + k1*d1, ...] for the offset k."""
    nd = len(out_sp)
    for koff in np.ndindex(*k_sp):
        sl = [slice(None), slice(None)]
        for a in range(nd):
            start = koff[a] * dils[a]
            stop = start + (out_sp[a] - 1) * strides[a] + 1
            sl.append(slice(start, stop, strides[a]))
        v = x[tuple(sl)]
        assert v.shape[2:] == tuple(out_sp), (v.shape, out_sp)
        yield koff, v


def conv_canon(I, K, O0, strides, dils):
    """I: (N, C, *in), K: (F, C, *k), O0: (N, F, *out); O = O0 + conv."""
    out = f64(O0).copy()
    I, K = f64(I), f64(K)
    for koff, win in windows(I, O0.shape[2:], K.shape[2:], strides, dils):
        kk = K[(slice(None), slice(None)) + koff]           # (F, C)
        out += np.einsum("nc...,fc->nf...", win, kk)
    return out


def depthwise_canon(I, K, O0, strides, dils):
    """I: (N, C, *in), K: (C, *k), O0: (N, C, *out)."""
    out = f64(O0).copy()
    I, K = f64(I), f64(K)
    for koff, win in windows(I, O0.shape[2:], K.shape[1:], strides, dils):
        kk = K[(slice(None),) + koff]                        # (C,)
        out += win * kk.reshape((1, -1) + (1,) * (win.ndim - 2))
    return out


def pool_canon(I, O0, k_sp, strides, dils, mode):
    """I: (N, C, *in), O0: (N, C, *out)."""
    out = f64(O0).copy()
    for _, win in windows(f64(I), O0.shape[2:], k_sp, strides, dils):
        if mode == "sum":
            out += win
        elif mode == "max":
            out = np.maximum(out, win)
        else:
            out = np.minimum(out, win)
    return out


def chan_last_to_first(x):
    return np.moveaxis(x, -1, 1)


def chan_first_to_last(x):
    return np.moveaxis(x, 1, -1)


def o_copy(ins, outs, at):
    return [f64(ins[0])]


def o_transpose(ins, outs, at):
    return [f64(ins[0]).T]


def o_fill(ins, outs, at):
    return [np.full(outs[0].shape, f64(ins[0]).reshape(()))]


def einsum_oracle(spec, integer=False):
    def fn(ins, outs, at):
        cv = i64 if integer else f64
        return [cv(outs[0]) + np.einsum(spec, *[cv(x) for x in ins])]
    return fn


def unsigned_einsum_oracle(spec, ty):
    """out + sum of products modulo 2^bits: NumPy's uint64 arithmetic wraps
    modulo 2^64, which 2^bits divides; the result is returned in ty."""
    def fn(ins, outs, at):
        acc = np.einsum(spec, *[x.astype(np.uint64) for x in ins])
        return [(outs[0].astype(np.uint64) + acc).astype(NPTYPE[ty])]
    return fn


def o_conv_plain(ins, outs, at):
    I, K, O0 = ins[0], ins[1], outs[0]
    nd = I.ndim
    r = conv_canon(I[None, None], K[None, None], O0[None, None],
                   [1] * nd, [1] * nd)
    return [r[0, 0]]


def o_conv_cl(ins, outs, at):
    """Channels-last input (N, *in, C), filter (*k, C, F), output (N, *out, F)."""
    I, K, O0 = ins[0], ins[1], outs[0]
    nd = I.ndim - 2
    Kc = np.transpose(K, (nd + 1, nd) + tuple(range(nd)))     # (F, C, *k)
    r = conv_canon(chan_last_to_first(I), Kc, chan_last_to_first(O0),
                   at["strides"], at["dilations"])
    return [chan_first_to_last(r)]


def o_conv_cf(ins, outs, at):
    """Channels-first input (N, C, *in), filter (F, C, *k), output (N, F, *out)."""
    return [conv_canon(ins[0], ins[1], outs[0], at["strides"], at["dilations"])]


def o_depthwise(ins, outs, at):
    I, K, O0 = ins[0], ins[1], outs[0]
    Kc = np.moveaxis(K, -1, 0)                                 # (C, KH, KW)
    r = depthwise_canon(chan_last_to_first(I), Kc, chan_last_to_first(O0),
                        at["strides"], at["dilations"])
    return [chan_first_to_last(r)]


def pool_oracle(layout, mode):
    def fn(ins, outs, at):
        I, K, O0 = ins[0], ins[1], outs[0]
        if layout == "nhwc":
            r = pool_canon(chan_last_to_first(I), chan_last_to_first(O0),
                           K.shape, at["strides"], at["dilations"], mode)
            return [chan_first_to_last(r)]
        return [pool_canon(I, O0, K.shape, at["strides"], at["dilations"], mode)]
    return fn


# ---------------------------------------------------------------------------
# Op table.  Shapes are lists of size-symbol names, exactly as in the spec;
# the table is checked against the spec's signatures at start-up.
# ---------------------------------------------------------------------------


class Op:
    def __init__(self, name, ins, outs, oracle, red, cases, attrs=(),
                 exact=False, gen=None, identity=0.0):
        self.name = name
        self.ins = ins            # [(name, type, [syms])]
        self.outs = outs
        self.attrs = list(attrs)  # [(name, length)]
        self.oracle = oracle
        self.red = red            # sizes dict -> reduction length
        self.cases = cases        # [(sizes dict, attrs dict)]
        self.exact = exact        # exact comparison even for floats
        self.gen = gen or {}      # tensor name -> (low, high) for ints
        # A case whose attrs hold "_init": "identity" starts from outputs
        # filled with this value (what a caller does: 0 for a sum, -inf for
        # a max) instead of random data.
        self.identity = identity

    @property
    def tensors(self):
        return self.ins + self.outs

    @property
    def syms(self):
        """Size symbols in order of first appearance (the ABI order)."""
        seen = []
        for _, _, shape in self.tensors:
            for s in shape:
                if s not in seen:
                    seen.append(s)
        return seen


def T(name, ty, *shape):
    return (name, ty, list(shape))


def sz(names, values):
    return dict(zip(names.split(), values))


# --- case builders for windowed ops ----------------------------------------

SP_NAMES = {1: ["W"], 2: ["H", "W"], 3: ["D", "H", "W"]}


def window_case(nd, out, k, s, d, slack=0, **extra):
    """Sizes for a windowed op: O<x> = out, K<x> = k, I<x> just large enough
    (plus `slack` unused trailing elements per spatial axis)."""
    def per_axis(v):
        v = list(v) if isinstance(v, (list, tuple)) else [v] * 3
        return v[:nd] if len(v) >= nd else (v * nd)[:nd]
    out, k, s, d = per_axis(out), per_axis(k), per_axis(s), per_axis(d)
    sizes = dict(extra)
    for a, x in enumerate(SP_NAMES[nd]):
        sizes["O" + x] = out[a]
        sizes["K" + x] = k[a]
        sizes["I" + x] = (out[a] - 1) * s[a] + (k[a] - 1) * d[a] + 1 + slack
    return sizes, {"strides": s, "dilations": d}


# (out, k, strides, dilations, slack, N, C, F) per case: tiny, odd, prime,
# every stride and dilation in 1..3, per-axis mixtures, spare input.
WINDOW_CASES = [
    (1, 1, 1, 1, 0, 1, 1, 1),
    (7, 3, 1, 1, 0, 2, 3, 5),
    (5, 2, 2, 1, 0, 1, 7, 4),
    (4, 3, 1, 2, 0, 3, 2, 3),
    (3, 3, 3, 3, 0, 2, 5, 7),
    (6, 3, 2, 1, 2, 1, 3, 2),
    ([4, 3, 5], [2, 3, 2], [2, 3, 1], [3, 2, 2], 0, 2, 3, 4),
    ([3, 5, 2], [3, 2, 2], [3, 1, 2], [1, 3, 3], 1, 1, 13, 17),
    (13, 3, 1, 1, 0, 2, 16, 17),
]


def conv_cases(nd):
    cases = []
    for out, k, s, d, slack, n, c, f in WINDOW_CASES:
        if nd == 3 and out == 13:
            out, c, f = 6, 8, 9       # keep the 3-D "large" case small
        cases.append(window_case(nd, out, k, s, d, slack, N=n, C=c, F=f))
    # Larger than any plausible tile, so tile remainders and the OpenMP
    # split are exercised.
    if nd == 1:
        cases.append(window_case(1, 200, 5, 1, 1, 0, N=3, C=16, F=24))
    elif nd == 2:
        cases.append(window_case(2, [30, 28], 3, 1, 1, 0, N=2, C=16, F=32))
    else:
        cases.append(window_case(3, [6, 8, 10], 3, [1, 2, 1], 1, 0, N=1, C=8, F=8))
    return cases


def depthwise_cases():
    cases = []
    for out, k, s, d, slack, n, c, _ in WINDOW_CASES:
        cases.append(window_case(2, out, k, s, d, slack, N=n, C=c))
    cases.append(window_case(2, [30, 28], 3, 1, 1, 0, N=2, C=32))
    return cases


def pool_cases():
    cases = []
    for out, k, s, d, slack, n, c, _ in WINDOW_CASES:
        cases.append(window_case(2, out, k, s, d, slack, N=n, C=c))
    # non-overlapping 2x2 stride 2 (the common max-pool), a 1x1 window,
    # and a large one
    cases.append(window_case(2, [8, 5], 2, 2, 1, 0, N=2, C=3))
    cases.append(window_case(2, [5, 3], 1, 3, 1, 1, N=1, C=4))
    cases.append(window_case(2, [28, 27], 3, 2, 1, 0, N=2, C=32))
    return cases


def plain_conv_cases(nd):
    sp = SP_NAMES[nd]
    out = []
    for o, k, slack in [(1, 1, 0), (7, 3, 0), (13, 1, 0), (17, 7, 0),
                        (1, 5, 0), ([5, 3, 4], [2, 3, 1], 0), (6, 2, 3),
                        (100 if nd == 1 else 9, 13 if nd == 1 else 3, 0)]:
        o = o if isinstance(o, list) else [o] * 3
        k = k if isinstance(k, list) else [k] * 3
        if nd == 3:
            o = [min(v, 7) for v in o]
        sizes = {}
        for a, x in enumerate(sp):
            sizes["O" + x] = o[a]
            sizes["K" + x] = k[a]
            sizes["I" + x] = o[a] + k[a] - 1 + slack
        out.append((sizes, {}))
    return out


def prod(xs):
    r = 1
    for x in xs:
        r *= x
    return r


def window_red(nd, with_c):
    def fn(s):
        r = prod(s["K" + x] for x in SP_NAMES[nd])
        return r * s["C"] if with_c else r
    return fn


def build_ops():
    ops = []
    add = ops.append

    # --- data movement -----------------------------------------------------
    add(Op("copy", [T("I", "f32", "N")], [T("O", "f32", "N")], o_copy,
           lambda s: 0, [({"N": n}, {}) for n in (0, 1, 7, 13, 17, 30, 1000, 4099)],
           exact=True))
    add(Op("transpose", [T("I", "f32", "M", "N")], [T("O", "f32", "N", "M")],
           o_transpose, lambda s: 0,
           [(sz("M N", v), {}) for v in ((1, 1), (1, 7), (7, 1), (13, 17),
                                          (17, 13), (64, 64), (65, 33), (130, 97),
                                          (0, 5), (5, 0))],
           exact=True))
    add(Op("fill", [T("value", "f32")], [T("O", "f32", "N")], o_fill,
           lambda s: 0, [({"N": n}, {}) for n in (0, 1, 7, 17, 1024, 4097)],
           exact=True))

    # --- contractions ------------------------------------------------------
    add(Op("dot", [T("A", "f32", "M"), T("B", "f32", "M")], [T("C", "f32")],
           einsum_oracle("m,m->"), lambda s: s["M"],
           [({"M": m}, {}) for m in (0, 1, 7, 13, 17, 100, 1000)]))

    mm_shapes = ((1, 1, 1), (1, 7, 1), (7, 1, 13), (7, 13, 17), (17, 13, 7),
                 (13, 17, 1), (1, 17, 13), (64, 64, 64), (65, 129, 33),
                 (129, 257, 131), (3, 0, 5), (0, 5, 3), (4, 3, 0))
    add(Op("matmul", [T("A", "f32", "M", "K"), T("B", "f32", "K", "N")],
           [T("C", "f32", "M", "N")], einsum_oracle("mk,kn->mn"),
           lambda s: s["K"], [(sz("M K N", v), {}) for v in mm_shapes] +
           [(sz("M K N", (13, 17, 7)), {"_init": "identity"})]))
    add(Op("matmul_column_major",
           [T("A", "f32", "K", "M"), T("B", "f32", "N", "K")],
           [T("C", "f32", "N", "M")], einsum_oracle("km,nk->nm"),
           lambda s: s["K"], [(sz("M K N", v), {}) for v in mm_shapes]))

    imm_shapes = ((1, 1, 1), (7, 13, 17), (17, 7, 13), (13, 1, 7),
                  (65, 129, 33), (9, 300, 11), (128, 96, 160))
    add(Op("matmul_i8_i8_i32", [T("A", "i8", "M", "K"), T("B", "i8", "K", "N")],
           [T("C", "i32", "M", "N")], einsum_oracle("mk,kn->mn", True),
           lambda s: s["K"], [(sz("M K N", v), {}) for v in imm_shapes],
           gen={"A": (-128, 127), "B": (-128, 127)}))
    i16 = Op("matmul_i16_i16_i32",
             [T("A", "i16", "M", "K"), T("B", "i16", "K", "N")],
             [T("C", "i32", "M", "N")], einsum_oracle("mk,kn->mn", True),
             lambda s: s["K"], [(sz("M K N", v), {}) for v in imm_shapes],
             gen={"A": (-2048, 2047), "B": (-2048, 2047)})
    add(i16)
    # Full i16 range with K = 1: products up to 2^30 (i16 * i16 would wrap).
    add(Op("matmul_i16_i16_i32", i16.ins, i16.outs, i16.oracle, i16.red,
           [(sz("M K N", v), {"_range": "full"}) for v in ((13, 1, 7), (1, 1, 1))],
           gen={"A": (-32768, 32767), "B": (-32768, 32767)}))

    # unsigned: u8 operands zero-extended (the full range, so a sign
    # extension would be wrong), u32 and u64 products and sums wrapping
    # modulo 2^bits (the maxima occur in every case)
    add(Op("matmul_u8_u8_i32", [T("A", "u8", "M", "K"), T("B", "u8", "K", "N")],
           [T("C", "i32", "M", "N")], einsum_oracle("mk,kn->mn", True),
           lambda s: s["K"], [(sz("M K N", v), {}) for v in imm_shapes],
           gen={"A": (0, 255), "B": (0, 255)}))
    add(Op("matmul_u32", [T("A", "u32", "M", "K"), T("B", "u32", "K", "N")],
           [T("C", "u32", "M", "N")], unsigned_einsum_oracle("mk,kn->mn", "u32"),
           lambda s: s["K"], [(sz("M K N", v), {}) for v in imm_shapes],
           gen={"A": (0, 2**32 - 1), "B": (0, 2**32 - 1)}))
    add(Op("dot_u64", [T("A", "u64", "M"), T("B", "u64", "M")], [T("C", "u64")],
           unsigned_einsum_oracle("m,m->", "u64"), lambda s: s["M"],
           [({"M": m}, {}) for m in (1, 2, 7, 13, 100, 1001)],
           gen={"A": (0, 2**64 - 1), "B": (0, 2**64 - 1)}))

    mv_shapes = ((1, 1), (1, 13), (13, 1), (7, 17), (17, 7), (100, 129),
                 (257, 65))
    add(Op("matvec", [T("A", "f32", "M", "N"), T("y", "f32", "N")],
           [T("x", "f32", "M")], einsum_oracle("mn,n->m"), lambda s: s["N"],
           [(sz("M N", v), {}) for v in mv_shapes]))
    add(Op("vecmat", [T("y", "f32", "M"), T("A", "f32", "M", "N")],
           [T("x", "f32", "N")], einsum_oracle("m,mn->n"), lambda s: s["M"],
           [(sz("M N", v), {}) for v in mv_shapes]))
    add(Op("batch_matmul",
           [T("A", "f32", "Batch", "M", "K"), T("B", "f32", "Batch", "K", "N")],
           [T("C", "f32", "Batch", "M", "N")], einsum_oracle("bmk,bkn->bmn"),
           lambda s: s["K"],
           [(sz("Batch M K N", v), {}) for v in
            ((1, 1, 1, 1), (2, 7, 13, 17), (3, 17, 7, 13), (7, 1, 1, 1),
             (1, 13, 17, 7), (5, 33, 65, 17), (4, 67, 129, 65),
             (0, 3, 4, 5))]))

    # --- plain convolutions ------------------------------------------------
    add(Op("conv_1d", [T("I", "f32", "IW"), T("K", "f32", "KW")],
           [T("O", "f32", "OW")], o_conv_plain, window_red(1, False),
           plain_conv_cases(1)))
    add(Op("conv_2d", [T("I", "f32", "IH", "IW"), T("K", "f32", "KH", "KW")],
           [T("O", "f32", "OH", "OW")], o_conv_plain, window_red(2, False),
           plain_conv_cases(2)))
    add(Op("conv_3d",
           [T("I", "f32", "ID", "IH", "IW"), T("K", "f32", "KD", "KH", "KW")],
           [T("O", "f32", "OD", "OH", "OW")], o_conv_plain,
           window_red(3, False), plain_conv_cases(3)))

    # --- strided / dilated convolutions ------------------------------------
    def sd(n):
        return [("strides", n), ("dilations", n)]

    add(Op("conv_1d_nwc_wcf",
           [T("I", "f32", "N", "IW", "C"), T("K", "f32", "KW", "C", "F")],
           [T("O", "f32", "N", "OW", "F")], o_conv_cl, window_red(1, True),
           conv_cases(1), attrs=sd(1)))
    add(Op("conv_1d_ncw_fcw",
           [T("I", "f32", "N", "C", "IW"), T("K", "f32", "F", "C", "KW")],
           [T("O", "f32", "N", "F", "OW")], o_conv_cf, window_red(1, True),
           conv_cases(1), attrs=sd(1)))
    add(Op("conv_2d_nhwc_hwcf",
           [T("I", "f32", "N", "IH", "IW", "C"),
            T("K", "f32", "KH", "KW", "C", "F")],
           [T("O", "f32", "N", "OH", "OW", "F")], o_conv_cl,
           window_red(2, True), conv_cases(2), attrs=sd(2)))
    add(Op("conv_2d_nchw_fchw",
           [T("I", "f32", "N", "C", "IH", "IW"),
            T("K", "f32", "F", "C", "KH", "KW")],
           [T("O", "f32", "N", "F", "OH", "OW")], o_conv_cf,
           window_red(2, True), conv_cases(2), attrs=sd(2)))
    add(Op("conv_3d_ndhwc_dhwcf",
           [T("I", "f32", "N", "ID", "IH", "IW", "C"),
            T("K", "f32", "KD", "KH", "KW", "C", "F")],
           [T("O", "f32", "N", "OD", "OH", "OW", "F")], o_conv_cl,
           window_red(3, True), conv_cases(3), attrs=sd(3)))
    add(Op("conv_3d_ncdhw_fcdhw",
           [T("I", "f32", "N", "C", "ID", "IH", "IW"),
            T("K", "f32", "F", "C", "KD", "KH", "KW")],
           [T("O", "f32", "N", "F", "OD", "OH", "OW")], o_conv_cf,
           window_red(3, True), conv_cases(3), attrs=sd(3)))
    add(Op("depthwise_conv_2d_nhwc_hwc",
           [T("I", "f32", "N", "IH", "IW", "C"), T("K", "f32", "KH", "KW", "C")],
           [T("O", "f32", "N", "OH", "OW", "C")], o_depthwise,
           window_red(2, False), depthwise_cases(), attrs=sd(2)))

    # --- pooling -----------------------------------------------------------
    for layout, ishape, oshape in (
            ("nhwc", ("N", "IH", "IW", "C"), ("N", "OH", "OW", "C")),
            ("nchw", ("N", "C", "IH", "IW"), ("N", "C", "OH", "OW"))):
        for mode, ident in (("sum", 0.0), ("max", -np.inf), ("min", np.inf)):
            cases = pool_cases()
            # the usual call: output pre-filled with the identity
            for i in (1, 4, 6):
                sizes, at = cases[i]
                cases.append((sizes, dict(at, _init="identity")))
            add(Op("pooling_%s_%s" % (layout, mode),
                   [T("I", "f32", *ishape), T("K", "f32", "KH", "KW")],
                   [T("O", "f32", *oshape)], pool_oracle(layout, mode),
                   window_red(2, False), cases, attrs=sd(2),
                   exact=(mode != "sum"), identity=ident))
    # u8 max / min pooling: unsigned comparisons over the full range (a
    # signed one takes 200 for less than 100); identities 0 and 255
    for mode, ident in (("max", 0), ("min", 255)):
        cases = pool_cases()
        for i in (1, 4, 6):
            sizes, at = cases[i]
            cases.append((sizes, dict(at, _init="identity")))
        add(Op("pooling_nhwc_%s_unsigned" % mode,
               [T("I", "u8", "N", "IH", "IW", "C"), T("K", "u8", "KH", "KW")],
               [T("O", "u8", "N", "OH", "OW", "C")], pool_oracle("nhwc", mode),
               window_red(2, False), cases, attrs=sd(2), exact=True,
               identity=ident, gen={"I": (0, 255), "K": (0, 255)}))
    return ops


# ---------------------------------------------------------------------------
# Reading the spec: signatures (for the cross-check) and per-def chunks.
# ---------------------------------------------------------------------------

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|\S")


def strip_comments_and_docs(text):
    text = re.sub(r'""".*?"""', " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def parse_signatures(text):
    """Return {def name: (inputs, outputs, attrs)} with tensors as
    (name, type, [shape tokens joined per entry]) and attrs as (name, type)."""
    toks = TOKEN.findall(strip_comments_and_docs(text))
    sigs = {}
    i = 0

    def expect(t):
        nonlocal i
        if toks[i] != t:
            raise ValueError("expected %r near token %d (%r)" % (t, i, toks[i]))
        i += 1

    def tensor_list():
        nonlocal i
        res = []
        expect("(")
        while True:
            name = toks[i]; i += 1
            expect(":")
            ty = toks[i]; i += 1
            expect("(")
            shape, cur, depth = [], [], 0
            while not (toks[i] == ")" and depth == 0):
                t = toks[i]; i += 1
                if t == "(":
                    depth += 1
                elif t == ")":
                    depth -= 1
                if t == "," and depth == 0:
                    shape.append(" ".join(cur)); cur = []
                else:
                    cur.append(t)
            if cur:
                shape.append(" ".join(cur))
            expect(")")
            res.append((name, ty, shape))
            if toks[i] == ",":
                i += 1
                continue
            expect(")")
            return res

    while i < len(toks):
        if toks[i] != "def":
            i += 1
            continue
        i += 1
        name = toks[i]; i += 1
        ins = tensor_list()
        expect("-"); expect(">")
        outs = tensor_list()
        attrs = []
        if toks[i] == "attr":
            i += 1
            expect("(")
            while True:
                aname = toks[i]; i += 1
                expect(":")
                ty = []
                while toks[i] not in (",", ")"):
                    ty.append(toks[i]); i += 1
                attrs.append((aname, "".join(ty)))
                if toks[i] == ",":
                    i += 1
                    continue
                expect(")")
                break
        sigs[name] = (ins, outs, attrs)
    return sigs


def split_defs(text):
    """{def name: text of its ods_def ... chunk} for per-def retries."""
    starts = [m.start() for m in re.finditer(r"^\s*ods_def\b", text, re.M)]
    chunks = {}
    for a, b in zip(starts, starts[1:] + [len(text)]):
        chunk = text[a:b]
        m = re.search(r"\bdef\s+([A-Za-z_][A-Za-z0-9_]*)", chunk)
        if m:
            chunks[m.group(1)] = chunk
    return chunks


def check_table_against_spec(ops, sigs):
    """Return a list of problems (strings)."""
    problems = []
    table = {}
    for op in ops:
        table.setdefault(op.name, op)
    for name in sigs:
        if name not in table:
            problems.append("def %s in the spec has no numeric test" % name)
    for name, op in table.items():
        if name not in sigs:
            problems.append("op %s is tested but not defined in the spec" % name)
            continue
        ins, outs, attrs = sigs[name]
        want_ins = [(n, t, s) for n, t, s in op.ins]
        want_outs = [(n, t, s) for n, t, s in op.outs]
        if ins != want_ins or outs != want_outs:
            problems.append("signature of %s in the spec %s differs from the "
                            "test table %s" % (name, (ins, outs),
                                               (want_ins, want_outs)))
        want_attrs = [(n, "%dxi64" % k) for n, k in op.attrs]
        if attrs != want_attrs:
            problems.append("attributes of %s in the spec %s differ from the "
                            "test table %s" % (name, attrs, want_attrs))
    return problems


# ---------------------------------------------------------------------------
# C driver generation
# ---------------------------------------------------------------------------

DRIVER_PRELUDE = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every tensor lives between two guard zones filled with a byte that
   differs per tensor (so copying one guard into another is noticed); the
   kernel must not touch them, and must not modify its inputs. */
#ifndef GUARD
#define GUARD 64   /* -DGUARD=0 under ASan, so it sees overruns itself */
#endif
#define GUARD_BYTE(idx) ((unsigned char)(0xA5 + 16 * (idx)))

static const size_t guard = GUARD;

struct buf {
  unsigned char *base;
  unsigned char *copy;
  size_t n;
};

static void *data(struct buf *b) { return b->base + guard; }

static int load(const char *dir, int idx, struct buf *b) {
  char path[4096];
  FILE *f;
  long len;
  snprintf(path, sizeof path, "%s/t%d.bin", dir, idx);
  f = fopen(path, "rb");
  if (!f) { perror(path); return 1; }
  if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
      fseek(f, 0, SEEK_SET) != 0) {
    perror(path); fclose(f); return 1;
  }
  b->n = (size_t)len;
  b->base = malloc(b->n + 2 * guard);
  b->copy = malloc(b->n + 1);
  if (!b->base || !b->copy) { fprintf(stderr, "out of memory\n"); fclose(f); return 1; }
  memset(b->base, GUARD_BYTE(idx), b->n + 2 * guard);
  if (b->n && fread(b->base + guard, 1, b->n, f) != b->n) {
    perror(path); fclose(f); return 1;
  }
  fclose(f);
  memcpy(b->copy, b->base + guard, b->n);
  return 0;
}

static int guards_ok(const struct buf *b, int idx) {
  size_t i;
  for (i = 0; i < guard; i++) {
    if (b->base[i] != GUARD_BYTE(idx)) {
      fprintf(stderr, "kernel wrote %u bytes before tensor %d\n",
              (unsigned)(guard - i), idx);
      return 0;
    }
    if (b->base[guard + b->n + i] != GUARD_BYTE(idx)) {
      fprintf(stderr, "kernel wrote past the end of tensor %d\n", idx);
      return 0;
    }
  }
  return 1;
}

/* Check guards and inputs, write the outputs, free everything. */
static int finish(const char *dir, struct buf *b, int nin, int nout) {
  int i, rc = 0;
  for (i = 0; i < nin + nout; i++)
    if (!guards_ok(&b[i], i)) rc = 3;
  for (i = 0; i < nin; i++)
    if (memcmp(b[i].copy, b[i].base + guard, b[i].n) != 0) {
      fprintf(stderr, "kernel modified input tensor %d\n", i);
      rc = 3;
    }
  for (i = nin; i < nin + nout && rc == 0; i++) {
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/r%d.bin", dir, i - nin);
    f = fopen(path, "wb");
    if (!f || (b[i].n && fwrite(b[i].base + guard, 1, b[i].n, f) != b[i].n) ||
        fclose(f) != 0) {
      perror(path);
      rc = 1;
    }
  }
  for (i = 0; i < nin + nout; i++) { free(b[i].base); free(b[i].copy); }
  return rc;
}

static int load_all(const char *dir, struct buf *b, int n) {
  int i;
  for (i = 0; i < n; i++)
    if (load(dir, i, &b[i])) return 1;
  return 0;
}
"""

DRIVER_MAIN = r"""
int main(int argc, char **argv) {
  int64_t v[64];
  int nv, i;
  if (argc < 3 || argc - 3 > 64) {
    fprintf(stderr, "usage: %s OP DIR INT...\n", argv[0]);
    return 2;
  }
  nv = argc - 3;
  for (i = 0; i < nv; i++) {
    char *end;
    v[i] = (int64_t)strtoll(argv[i + 3], &end, 10);
    if (*end) { fprintf(stderr, "bad integer %s\n", argv[i + 3]); return 2; }
  }
@DISPATCH@
  fprintf(stderr, "unknown op %s\n", argv[1]);
  return 2;
}
"""


def driver_function(op):
    nt = len(op.tensors)
    nsym = len(op.syms)
    nattr = sum(n for _, n in op.attrs)
    lines = ["static int run_%s(const char *dir, const int64_t *v, int nv) {" % op.name,
             "  struct buf b[%d];" % nt]
    for ai, (aname, n) in enumerate(op.attrs):
        lines.append("  int64_t a%d[%d];" % (ai, n))
    lines.append("  if (nv != %d) { fprintf(stderr, \"%s: expected %d integers\\n\"); return 2; }"
                 % (nsym + nattr, op.name, nsym + nattr))
    k = nsym
    for ai, (aname, n) in enumerate(op.attrs):
        for j in range(n):
            lines.append("  a%d[%d] = v[%d];" % (ai, j, k))
            k += 1
    lines.append("  if (load_all(dir, b, %d)) return 1;" % nt)
    args = []
    for ti, (_, ty, _) in enumerate(op.tensors):
        const = "const " if ti < len(op.ins) else ""
        args.append("(%s%s *)data(&b[%d])" % (const, CTYPE[ty], ti))
    args += ["v[%d]" % j for j in range(nsym)]
    args += ["a%d" % ai for ai in range(len(op.attrs))]
    lines.append("  %s(%s);" % (op.name, ", ".join(args)))
    lines.append("  return finish(dir, b, %d, %d);" % (len(op.ins), len(op.outs)))
    lines.append("}")
    return "\n".join(lines)


def driver_source(header, ops):
    uniq = []
    for op in ops:
        if op.name not in [u.name for u in uniq]:
            uniq.append(op)
    parts = ["/* Generated by tests/numeric/run_numeric.py. */",
             # The header must be self-contained and include-guarded.
             '#include "%s"' % header, '#include "%s"' % header,
             DRIVER_PRELUDE]
    parts += [driver_function(op) for op in uniq]
    dispatch = "\n".join(
        '  if (strcmp(argv[1], "%s") == 0) return run_%s(argv[2], v, nv);'
        % (op.name, op.name) for op in uniq)
    parts.append(DRIVER_MAIN.replace("@DISPATCH@", dispatch))
    return "\n".join(parts)


# ---------------------------------------------------------------------------
# Build steps
# ---------------------------------------------------------------------------


def note(msg):
    for line in str(msg).rstrip("\n").split("\n"):
        print("# " + line)
    sys.stdout.flush()


def run(cmd, cwd=None, timeout=300, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout, env=env)
        return p.returncode, p.stdout.decode(errors="replace"), \
            p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return -999, "", "timed out after %ds" % timeout
    except OSError as e:
        return -998, "", str(e)


def head(text, n=25):
    lines = text.rstrip("\n").split("\n")
    if len(lines) > n:
        lines = lines[:n] + ["... (%d more lines)" % (len(lines) - n)]
    return "\n".join(lines)


def describe_rc(rc):
    if rc == -999:
        return "timeout"
    if rc == -998:
        return "could not execute"
    if rc < 0:
        return "killed by signal %d" % -rc
    return "exit %d" % rc


def run_lgen(lgen, flags, spec, outdir, stem):
    c = os.path.join(outdir, stem + ".c")
    h = os.path.join(outdir, stem + ".h")
    cmd = [lgen] + flags + [spec, "-o", c, "-H", h]
    rc, out, err = run(cmd)
    if rc != 0 or not os.path.isfile(c) or not os.path.isfile(h):
        return None, "lgen %s (%s)\n%s" % (describe_rc(rc), " ".join(
            shlex.quote(x) for x in cmd), head(err))
    return (c, h), None


def probe_config(cc, flags, workdir, name):
    """Can this configuration build and run an OpenMP-pragma'd C99 program?"""
    src = os.path.join(workdir, "probe_%s.c" % name)
    exe = os.path.join(workdir, "probe_%s" % name)
    with open(src, "w") as f:
        f.write("#include <stdio.h>\nint main(void) {\n  int i, s = 0;\n"
                "#ifdef _OPENMP\n#pragma omp parallel for reduction(+:s)\n#endif\n"
                "  for (i = 0; i < 100; i++) s += i;\n"
                "  printf(\"%d\\n\", s);\n  return s != 4950;\n}\n")
    rc, _, err = run([cc] + COMMON_FLAGS + flags + [src, "-o", exe, "-lm"])
    if rc != 0:
        return head(err, 5) or describe_rc(rc)
    rc, _, err = run([exe])
    if rc != 0:
        return "probe program failed: %s %s" % (describe_rc(rc), head(err, 5))
    return None


def compile_unit(cc, flags, kc, kh, ops, workdir, tag):
    drv = os.path.join(workdir, "driver_%s.c" % tag)
    exe = os.path.join(workdir, "driver_%s" % tag)
    with open(drv, "w") as f:
        f.write(driver_source(os.path.basename(kh), ops))
    cmd = [cc] + COMMON_FLAGS + flags + ["-I", os.path.dirname(kh), kc, drv,
                                         "-o", exe, "-lm"]
    rc, _, err = run(cmd)
    if rc != 0:
        return None, "compile failed (%s): %s\n%s" % (
            describe_rc(rc), " ".join(shlex.quote(x) for x in cmd), head(err))
    return exe, None


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------


def fmt_case(op, sizes, attrs):
    s = ",".join("%s=%d" % (k, sizes[k]) for k in op.syms)
    for name, _ in op.attrs:
        s += ";%s=[%s]" % (name, ",".join(str(x) for x in attrs[name]))
    for key in sorted(attrs):
        if key.startswith("_"):       # case tags (not kernel arguments)
            s += ";%s=%s" % (key[1:], attrs[key])
    return s or "scalar"


def make_data(op, sizes, attrs, rng):
    arrays = []
    for idx, (name, ty, shape) in enumerate(op.tensors):
        shp = tuple(sizes[s] for s in shape)
        dt = NPTYPE[ty]
        is_out = idx >= len(op.ins)
        if is_out and attrs.get("_init") == "identity":
            a = np.full(shp, op.identity, dtype=dt)
        elif ty.startswith("f"):
            a = rng.uniform(-1.0, 1.0, size=shp).astype(dt)
        elif ty.startswith("u") and is_out:
            a = rng.integers(0, np.iinfo(dt).max, size=shp, dtype=dt, endpoint=True)
        elif is_out:
            a = rng.integers(-1000000, 1000001, size=shp).astype(dt)
        else:
            lo, hi = op.gen.get(name, (-100, 100))
            if ty.startswith("u"):  # up to 2^64 - 1, beyond int64's integers
                a = rng.integers(lo, hi, size=shp, dtype=dt, endpoint=True)
            else:
                a = rng.integers(lo, hi + 1, size=shp).astype(dt)
            # make sure the extremes occur, so sign extension is exercised
            if a.size >= 2:
                flat = a.reshape(-1)
                flat[rng.integers(0, a.size)] = lo
                flat[rng.integers(0, a.size)] = hi
        arrays.append(a)
    return arrays


def float_tol(op, sizes):
    """See "Tolerances" in the module docstring."""
    return 1e-4 * np.sqrt(max(1, op.red(sizes)))


def compare(op, sizes, outs_expected, dtype_names, results):
    """Return (ok, message)."""
    worst = 0.0
    for exp, ty, got in zip(outs_expected, dtype_names, results):
        if got.shape != exp.shape:
            return False, "output has %d elements, expected %d" % (got.size, exp.size)
        if ty.startswith("u"):  # exactly, in the type (u64 exceeds int64)
            want = np.asarray(exp).astype(NPTYPE[ty])
            if not np.array_equal(got, want):
                bad = np.argwhere(got != want)[0]
                return False, "first_bad=%s got=%d want=%d (exact)" % (
                    tuple(int(x) for x in bad), int(got[tuple(bad)]), int(want[tuple(bad)]))
            continue
        if not ty.startswith("f"):
            if np.any(np.abs(exp) > np.iinfo(NPTYPE[ty]).max):
                return False, "test bug: expected value overflows %s" % ty
            diff = np.abs(got.astype(np.int64) - exp)
            err = int(diff.max()) if diff.size else 0
            worst = max(worst, err)
            if err != 0:
                bad = np.argwhere(diff != 0)[0]
                return False, "maxerr=%d first_bad=%s got=%d want=%d (exact)" % (
                    err, tuple(int(x) for x in bad), got[tuple(bad)], exp[tuple(bad)])
            continue
        g = got.astype(np.float64)
        if not np.all(np.isfinite(g)):
            bad = np.argwhere(~np.isfinite(g))[0]
            return False, "non-finite output at %s" % (tuple(int(x) for x in bad),)
        if op.exact:
            want = exp.astype(NPTYPE[ty])
            diff = np.abs(g - want.astype(np.float64))
            err = float(diff.max()) if diff.size else 0.0
            worst = max(worst, err)
            if not np.array_equal(got, want):
                bad = np.argwhere(got != want)[0]
                return False, "maxerr=%.3g first_bad=%s got=%r want=%r (exact)" % (
                    err, tuple(int(x) for x in bad), float(got[tuple(bad)]),
                    float(want[tuple(bad)]))
            continue
        tol = float_tol(op, sizes)
        diff = np.abs(g - exp)
        allowed = tol * (1.0 + np.abs(exp))
        err = float(diff.max()) if diff.size else 0.0
        worst = max(worst, err)
        if np.any(diff > allowed):
            bad = np.argwhere(diff > allowed)[0]
            return False, "maxerr=%.3g tol=%.3g first_bad=%s got=%r want=%r" % (
                err, tol, tuple(int(x) for x in bad), float(g[tuple(bad)]),
                float(exp[tuple(bad)]))
    if op.exact or all(not t.startswith("f") for t in dtype_names):
        return True, "maxerr=%g (exact)" % worst
    return True, "maxerr=%.3g tol=%.3g" % (worst, float_tol(op, sizes))


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--op", action="append", help="only this op (repeatable)")
    ap.add_argument("--cc", action="append", help="only this config (repeatable)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--sanitize", action="store_true",
                    help="add a gcc ASan+UBSan configuration")
    args = ap.parse_args()

    t0 = time.time()
    here = os.path.dirname(os.path.abspath(__file__))
    srcdir = os.environ.get("srcdir") or os.path.join(here, "..", "..")
    spec = os.path.abspath(os.path.join(srcdir, "specs", "linalg.tc"))
    lgen = os.path.abspath(os.environ.get("LGEN") or os.path.join("src", "lgen"))
    lgen_flags = shlex.split(os.environ.get("LGEN_FLAGS", ""))

    ops = build_ops()
    cases = [(op, sizes, attrs) for op in ops for sizes, attrs in op.cases
             if not args.op or op.name in args.op]
    if args.list:
        for op, sizes, attrs in cases:
            print("op=%s shape=%s" % (op.name, fmt_case(op, sizes, attrs)))
        print("# %d cases" % len(cases))
        return 0

    passed = failed = 0

    def fail(msg):
        nonlocal failed
        failed += 1
        print("FAIL " + msg)
        sys.stdout.flush()

    with open(spec) as f:
        spec_text = f.read()
    try:
        sigs = parse_signatures(spec_text)
        problems = check_table_against_spec(ops, sigs)
    except (ValueError, IndexError) as e:
        problems = ["cannot parse the signatures in %s: %s" % (spec, e)]
    for p in problems:
        fail("op=spec check=signature: " + p)

    if not (os.path.isfile(lgen) and os.access(lgen, os.X_OK)):
        fail("op=* lgen=%s: not found or not executable (set LGEN)" % lgen)
        print("%d passed, %d failed" % (passed, failed))
        return 1

    work = tempfile.mkdtemp(prefix="lgen-numeric-")
    note("work directory: %s" % work)
    note("lgen: %s %s" % (lgen, " ".join(lgen_flags)))

    # 1. lgen, once for the whole library; per def if that fails.
    op_names = []
    for op in ops:
        if op.name not in op_names:
            op_names.append(op.name)
    full, err = run_lgen(lgen, lgen_flags, spec, work, "k")
    per_def = {}       # name -> ((c, h) or None, error or None)
    chunks = split_defs(spec_text)

    def lgen_one(name):
        if name not in per_def:
            if name not in chunks:
                per_def[name] = (None, "no def %s in the spec" % name)
            else:
                d = os.path.join(work, "def_" + name)
                os.makedirs(d, exist_ok=True)
                p = os.path.join(d, name + ".tc")
                with open(p, "w") as f:
                    f.write(chunks[name])
                per_def[name] = run_lgen(lgen, lgen_flags, p, d, name)
                if per_def[name][1]:
                    note("lgen fails on def %s alone: %s" % (name, per_def[name][1]))
        return per_def[name]

    if err:
        note("lgen failed on the whole spec; retrying def by def\n" + err)
        for name in op_names:
            lgen_one(name)

    # 2. compile per configuration.
    exes = {}          # (config, op name) -> exe path, or ("error", msg)
    configs = []
    for cname, cckey, flags in CONFIGS + ([SANITIZE_CONFIG] if args.sanitize else []):
        if args.cc and cname not in args.cc:
            continue
        cc = os.environ.get("CC_" + cckey.upper(), cckey)
        if shutil.which(cc) is None:
            note("SKIP cc=%s: %s not found" % (cname, cc))
            continue
        why = probe_config(cc, flags, work, cname)
        if why:
            note("SKIP cc=%s: cannot build/run a test program with %s %s: %s"
                 % (cname, cc, " ".join(flags), why))
            continue
        configs.append(cname)
        wanted = [op for op in ops if not args.op or op.name in args.op]
        if full:
            exe, cerr = compile_unit(cc, flags, full[0], full[1], wanted, work, cname)
            if exe:
                for op in wanted:
                    exes[(cname, op.name)] = exe
                continue
            note("cc=%s: %s\nretrying def by def" % (cname, cerr))
        for name in op_names:
            if args.op and name not in args.op:
                continue
            unit, lerr = lgen_one(name)
            if lerr:
                exes[(cname, name)] = ("error", "lgen failed on this def")
                continue
            exe, cerr = compile_unit(cc, flags, unit[0], unit[1],
                                     [op for op in ops if op.name == name],
                                     os.path.dirname(unit[0]),
                                     "%s_%s" % (name, cname))
            if cerr:
                note("cc=%s def=%s: %s" % (cname, name, cerr))
                exes[(cname, name)] = ("error", "kernel does not compile")
            else:
                exes[(cname, name)] = exe
    if not configs:
        note("no compiler configuration is usable")
        print("%d passed, %d failed" % (passed, failed))
        return 1 if failed else 77

    # 3. run the cases.
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", OMP_THREADS)
    for ci, (op, sizes, attrs) in enumerate(cases):
        seed = zlib.crc32(("%s|%s" % (op.name, fmt_case(op, sizes, attrs))).encode())
        rng = np.random.default_rng(seed)
        arrays = make_data(op, sizes, attrs, rng)
        ins, outs0 = arrays[:len(op.ins)], arrays[len(op.ins):]
        expected = op.oracle(ins, outs0, attrs)
        cdir = os.path.join(work, "case%04d" % ci)
        os.makedirs(cdir)
        for i, a in enumerate(arrays):
            a.tofile(os.path.join(cdir, "t%d.bin" % i))
        argv = [str(sizes[s]) for s in op.syms]
        for name, _ in op.attrs:
            argv += [str(x) for x in attrs[name]]
        desc = "op=%s shape=%s" % (op.name, fmt_case(op, sizes, attrs))
        case_failed = False

        def rerun_note(exe):
            note("  rerun: %s" % " ".join(shlex.quote(x) for x in
                                          [exe, op.name, cdir] + argv))
        for cname in configs:
            exe = exes.get((cname, op.name))
            tag = "%s cc=%s" % (desc, cname)
            if isinstance(exe, tuple):
                fail("%s (%s)" % (tag, exe[1]))
                case_failed = True
                continue
            for i in range(len(op.outs)):
                rp = os.path.join(cdir, "r%d.bin" % i)
                if os.path.exists(rp):
                    os.unlink(rp)
            rc, out, err = run([exe, op.name, cdir] + argv, timeout=RUN_TIMEOUT,
                               env=env)
            if rc != 0:
                fail("%s (driver %s: %s)" % (tag, describe_rc(rc),
                                             head(err, 3).replace("\n", " | ")))
                case_failed = True
                rerun_note(exe)
                continue
            results = []
            for i, (_, ty, _) in enumerate(op.outs):
                r = np.fromfile(os.path.join(cdir, "r%d.bin" % i), dtype=NPTYPE[ty])
                if r.size == expected[i].size:
                    r = r.reshape(expected[i].shape)
                results.append(r)
            ok, msg = compare(op, sizes, expected, [t for _, t, _ in op.outs], results)
            if ok:
                passed += 1
                print("PASS %s %s" % (tag, msg))
            else:
                fail("%s %s" % (tag, msg))
                case_failed = True
                rerun_note(exe)
        sys.stdout.flush()
        if not case_failed and not args.keep:
            shutil.rmtree(cdir, ignore_errors=True)

    note("%d cases x %d compiler configs in %.1fs" % (len(cases), len(configs),
                                                      time.time() - t0))
    if failed == 0 and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        note("kept work directory %s" % work)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
