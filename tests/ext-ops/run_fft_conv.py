#!/usr/bin/python3
"""fft, dft, im2col, the Winograd transforms, the conv paths through them,
and diag folded into matmul, against NumPy (tests/fft-conv.test).

Each group is one lgen-graph/1 graph, generated with lgen four ways
(default, --fuse=none, --schedule=none, and a schedule file that picks the
conv algorithms where the group has one), compiled with gcc -std=c99
-pedantic -Wall -Wextra -Werror with and without -fopenmp, and run (1 and 2
OpenMP threads). References are NumPy (np.fft, a float64 direct conv by
einsum over the windows, explicit G g G^T products), never lgen's code.

Tolerances (|got - ref| <= tol * scale, per output):
  fft/dft   scale = max |ref| over the output (1 when 0): 2e-6 for f32
            (lgen computes in f64 and rounds once; NumPy's f32 input is
            exact), 1e-12 for f64.
  im2col, the transforms on small integers, diag folds: exact.
  conv      scale = max over outputs of sum |x| |w| over the window (the
            largest magnitude a rounding error can scale): direct and
            im2col 1e-6 (f32 sums of <= 600 terms), Winograd 2e-6 (its
            measured worst case is below 1e-6 of that scale, lgen(1)).
Prints PASS/FAIL per graph and variant, then "N passed, N failed".
"""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_ext_ops as X  # noqa: E402  (Graph, harness, run)


class Graph(X.Graph):
    def __init__(self, name, schedule=None):
        super().__init__(name)
        self.tols = []       # per output: None (exact) or (tol, scale)
        self.schedule = schedule  # YAML text of a schedule file variant, or None

    def output(self, name, ref, tol=None, scale=None):
        ref = np.asarray(ref)
        super().output(name, ref, exact=tol is None)
        if scale is None and tol is not None:
            scale = float(np.max(np.abs(ref))) if ref.size else 1.0
        self.tols.append(None if tol is None else (tol, max(scale or 0.0, 1e-30)))

    def variants(self, base):
        """With a schedule file: the file, with fusion on and off."""
        if not self.schedule:
            return X.LGEN_VARIANTS
        with open(os.path.join(base, "schedule.yaml"), "w") as f:
            f.write(self.schedule)
        sched = "--schedule=" + os.path.join(base, "schedule.yaml")
        return [("file", [sched]), ("file-fuse-none", [sched, "--fuse=none"])]

    def compare(self, d):
        """Each output within its tolerance times its scale (the largest |ref|)."""
        for i, ref in enumerate(self.refs):
            got = np.fromfile(os.path.join(d, "out_%d.bin" % i), dtype=ref.dtype).reshape(ref.shape)
            if self.tols[i] is None:
                ok = np.array_equal(got, ref)
                worst = "exact"
            else:
                tol, scale = self.tols[i]
                err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
                worst = float(err.max()) / scale if err.size else 0.0
                ok = worst <= tol
            if not ok:
                return "output %d (%s): error %s exceeds the tolerance %s; got %s, want %s" % (
                    i, self.outputs[i], worst, self.tols[i], np.array2string(got.ravel()[:6]),
                    np.array2string(ref.ravel()[:6]))
        return None


def fft_tol(t):
    return 2e-6 if t == "f32" else 1e-12


def g_fft(r):
    g = Graph("fft")
    # powers of two (radix-2), <= 64 otherwise (plain DFT), longer (Bluestein: 65, 97, 1000, 4099 prime)
    shapes = [(1,), (2,), (8,), (3, 16), (2, 5), (7,), (1, 1), (4, 12), (2, 3, 64), (1, 97), (2, 1000), (1, 1024),
              (3, 6), (3, 63), (2, 65), (1, 4099), (2, 2, 127)]
    for t in ("f32", "f64"):
        for shape in shapes:
            a = r.standard_normal(shape).astype(X.NP_TYPES[t])
            b = r.standard_normal(shape).astype(X.NP_TYPES[t])
            z = a.astype(np.float64) + 1j * b.astype(np.float64)
            for inverse in (0, 1):
                ref = np.fft.ifft(z, axis=-1) if inverse else np.fft.fft(z, axis=-1)
                yr, yi = g.node("fft", [g.input(a), g.input(b)], nout=2, inverse=inverse)
                scale = float(np.max(np.abs(ref)))
                g.output(yr, ref.real.astype(a.dtype), fft_tol(t), scale)
                g.output(yi, ref.imag.astype(a.dtype), fft_tol(t), scale)
    # a symbolic row count
    a = r.standard_normal((5, 12)).astype(np.float32)
    b = np.zeros((5, 12), np.float32)
    yr, yi = g.node("fft", [g.input(a, ["R", 12]), g.input(b, ["R", 12])], nout=2)
    ref = np.fft.fft(a.astype(np.float64), axis=-1)
    g.output(yr, ref.real.astype(np.float32), 2e-6, float(np.max(np.abs(ref))))
    g.output(yi, ref.imag.astype(np.float32), 2e-6, float(np.max(np.abs(ref))))
    return g


def ref_dft(x, axis, inverse, onesided, length):
    z = x[..., 0].astype(np.float64)
    if x.shape[-1] == 2:
        z = z + 1j * x[..., 1].astype(np.float64)
    n = z.shape[axis]
    if inverse and onesided:
        y = np.fft.irfft(z, n=length if length else 2 * (n - 1), axis=axis)
        return y[..., None]
    L = length or n
    y = np.fft.ifft(z, n=L, axis=axis) if inverse else np.fft.fft(z, n=L, axis=axis)
    if onesided:
        y = np.take(y, np.arange(L // 2 + 1), axis=axis)
    return np.stack([y.real, y.imag], axis=-1)


def g_dft(r):
    g = Graph("dft")
    cases = [((1, 10, 10, 1), 1, 0, 0, 0), ((1, 10, 10, 1), 2, 0, 0, 0), ((2, 7, 2), 1, 0, 1, 0),
             ((3, 8, 2), 1, 1, 0, 0), ((2, 6, 3, 2), 1, 1, 1, 0), ((2, 6, 3, 2), 1, 1, 1, 9),
             ((4, 5, 2), 1, 0, 0, 8), ((4, 9, 1), 1, 0, 1, 4), ((1, 1, 2), 1, 0, 0, 0), ((2, 13, 3, 1), 1, 0, 1, 0),
             ((16, 3, 2), 0, 1, 0, 0), ((2, 11, 2), -2, 1, 0, 16), ((2, 150, 2), 1, 0, 0, 0),
             ((2, 90, 3, 1), 1, 0, 1, 100), ((1, 51, 2), 1, 1, 1, 100), ((1, 77, 2), 1, 1, 0, 0)]
    for t in ("f32", "f64"):
        for shape, axis, inverse, onesided, length in cases:
            x = r.standard_normal(shape).astype(X.NP_TYPES[t])
            attrs = dict(axis=axis, inverse=inverse, onesided=onesided)
            if length:
                attrs["length"] = length
            ref = ref_dft(x, axis % len(shape), inverse, onesided, length)
            g.output(g.node("dft", [g.input(x)], **attrs), ref.astype(x.dtype), fft_tol(t))
    return g


def ref_im2col(x, k, s, d, p):
    n, h, w, c = x.shape
    xp = np.zeros((n, h + p[0] + p[1], w + p[2] + p[3], c), x.dtype)
    xp[:, p[0]:p[0] + h, p[2]:p[2] + w, :] = x
    oh = (h + p[0] + p[1] - (k[0] - 1) * d[0] - 1) // s[0] + 1
    ow = (w + p[2] + p[3] - (k[1] - 1) * d[1] - 1) // s[1] + 1
    out = np.zeros((n, oh, ow, k[0], k[1], c), x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            out[:, :, :, i, j, :] = xp[:, i * d[0]:i * d[0] + (oh - 1) * s[0] + 1:s[0],
                                       j * d[1]:j * d[1] + (ow - 1) * s[1] + 1:s[1], :]
    return out.reshape(n, oh * ow, k[0] * k[1] * c)


def ref_conv(x, w, s, d, p):
    """float64 direct conv (NHWC, HWCF) and the magnitude scale sum |x||w|."""
    k = w.shape[:2]
    col = ref_im2col(x.astype(np.float64), k, s, d, p)
    acol = ref_im2col(np.abs(x.astype(np.float64)), k, s, d, p)
    wm = w.astype(np.float64).reshape(-1, w.shape[3])
    n, oh, ow = x.shape[0], None, None
    y = col @ wm
    mag = acol @ np.abs(wm)
    h, ww = x.shape[1], x.shape[2]
    oh = (h + p[0] + p[1] - (k[0] - 1) * d[0] - 1) // s[0] + 1
    ow = (ww + p[2] + p[3] - (k[1] - 1) * d[1] - 1) // s[1] + 1
    return y.reshape(n, oh, ow, -1), float(mag.max()) if mag.size else 1.0


def ref_im2col_nchw(x, k, s, d, p):
    """NCHW [N, C, H, W]: the windows by hand-written loops, columns (c, kh, kw)."""
    n, c, h, w = x.shape
    oh = (h + p[0] + p[1] - (k[0] - 1) * d[0] - 1) // s[0] + 1
    ow = (w + p[2] + p[3] - (k[1] - 1) * d[1] - 1) // s[1] + 1
    out = np.zeros((n, oh * ow, c * k[0] * k[1]), x.dtype)
    for oy in range(oh):
        for ox in range(ow):
            for ch in range(c):
                for i in range(k[0]):
                    for j in range(k[1]):
                        iy, ix = oy * s[0] + i * d[0] - p[0], ox * s[1] + j * d[1] - p[2]
                        if 0 <= iy < h and 0 <= ix < w:
                            out[:, oy * ow + ox, (ch * k[0] + i) * k[1] + j] = x[:, ch, iy, ix]
    return out


IM2COL_CASES = [((1, 5, 5, 1), (3, 3), (1, 1), (1, 1), (0, 0, 0, 0)),
                ((2, 7, 6, 3), (3, 2), (2, 1), (1, 1), (1, 1, 0, 2)),
                ((1, 9, 8, 2), (3, 3), (1, 2), (2, 1), (2, 0, 1, 1)),
                ((1, 1, 1, 4), (1, 1), (1, 1), (1, 1), (0, 0, 0, 0)),
                ((3, 4, 4, 5), (2, 2), (3, 3), (1, 1), (0, 1, 1, 0))]


def g_im2col(r):
    g = Graph("im2col")
    for t in ("f32", "i32"):
        for shape, k, s, d, p in IM2COL_CASES:
            x = X.rng_array(r, shape, t)
            g.output(g.node("im2col", [g.input(x)], kernel=list(k), strides=list(s), dilations=list(d),
                            padding=[[p[0], p[1]], [p[2], p[3]]]), ref_im2col(x, k, s, d, p))
    return g


def g_im2col_operands(r):
    """IREE's operands: the NCHW form (batch_pos [0], m_pos [2, 3], k_pos
    [1]) and tiles of the matrix (m_offset, k_offset with m_size, k_size),
    against the whole matrix's slice; the attributes spelt out as NHWC's too."""
    g = Graph("im2col_operands")
    nhwc = dict(batch_pos=[0], m_pos=[1, 2], k_pos=[3])
    nchw = dict(batch_pos=[0], m_pos=[2, 3], k_pos=[1])
    for t in ("f32", "i32"):
        for ci, (shape, k, s, d, p) in enumerate(IM2COL_CASES):
            x = X.rng_array(r, shape, t)
            xc = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
            attrs = dict(kernel=list(k), strides=list(s), dilations=list(d), padding=[[p[0], p[1]], [p[2], p[3]]])
            full = ref_im2col(x, k, s, d, p)
            fullc = ref_im2col_nchw(xc, k, s, d, p)
            xi, xci = g.input(x), g.input(xc)
            g.output(g.node("im2col", [xci], **attrs, **nchw), fullc)
            g.output(g.node("im2col", [xi], **attrs, **nhwc), full)
            m, kk = full.shape[1], full.shape[2]
            # tiles: an odd one inside, the last row or column alone, m_offset
            # given as a list of one (IREE's flat form), the default sizes
            tiles = [(m // 3, max(1, m // 2), kk // 4, max(1, (kk + 1) // 2)), (m - 1, 1, kk - 1, 1),
                     (1 % m, None, 2 % kk, None), (0, m, 0, kk)]
            for m0, ms, k0, ks in tiles:
                ta = dict(m_offset=[m0] if ci == 1 else m0, k_offset=k0)
                if ms is not None:
                    ta.update(m_size=ms, k_size=ks)
                me, ke = (m0 + ms, k0 + ks) if ms is not None else (m, kk)
                g.output(g.node("im2col", [xi], **attrs, **ta), full[:, m0:me, k0:ke])
                g.output(g.node("im2col", [xci], **attrs, **nchw, **ta), fullc[:, m0:me, k0:ke])
    return g


G = np.array([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]])
BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64)
AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64)


def g_winograd_transforms(r):
    """Each transform alone on small integers (the f64 results are exact)."""
    g = Graph("winograd_transforms")
    for c, f in ((1, 1), (3, 5), (4, 2)):
        w = X.rng_array(r, (3, 3, c, f), "f64")
        g.output(g.node("winograd_filter_transform", [g.input(w)]), np.einsum("ai,ijcf,bj->abcf", G, w, G))
    for shape, p in (((1, 4, 4, 1), (0, 0, 0, 0)), ((2, 5, 7, 3), (1, 1, 1, 1)), ((1, 6, 3, 2), (0, 1, 2, 0))):
        x = X.rng_array(r, shape, "f64")
        n, h, w_, c = shape
        xp = np.zeros((n, h + p[0] + p[1] + 1, w_ + p[2] + p[3] + 1, c))  # +1: room for the last odd tile
        xp[:, p[0]:p[0] + h, p[2]:p[2] + w_, :] = x
        oh, ow = h + p[0] + p[1] - 2, w_ + p[2] + p[3] - 2
        th, tw = (oh + 1) // 2, (ow + 1) // 2
        v = np.zeros((4, 4, n * th * tw, c))
        for b in range(n):
            for i in range(th):
                for j in range(tw):
                    d = xp[b, 2 * i:2 * i + 4, 2 * j:2 * j + 4, :]
                    v[:, :, (b * th + i) * tw + j, :] = np.einsum("ai,ijc,bj->abc", BT, d, BT)
        g.output(g.node("winograd_input_transform", [g.input(x)], padding=[[p[0], p[1]], [p[2], p[3]]]), v)
    for n, oh, ow, f in ((1, 2, 2, 1), (2, 5, 3, 4), (1, 1, 1, 3)):
        th, tw = (oh + 1) // 2, (ow + 1) // 2
        m = X.rng_array(r, (4, 4, n * th * tw, f), "f64")
        y = np.zeros((n, 2 * th, 2 * tw, f))
        for b in range(n):
            for i in range(th):
                for j in range(tw):
                    y[b, 2 * i:2 * i + 2, 2 * j:2 * j + 2, :] = np.einsum(
                        "ai,ijf,bj->abf", AT, m[:, :, (b * th + i) * tw + j, :], AT)
        g.output(g.node("winograd_output_transform", [g.input(m)], shape=[n, oh, ow]), y[:, :oh, :ow, :])
    return g


CONV_CASES = [  # input NHWC, filter KH KW C F, strides, dilations, padding [t, b, l, r]
    ((1, 8, 8, 4), (3, 3, 4, 5), (1, 1), (1, 1), (1, 1, 1, 1)),
    ((2, 7, 9, 3), (3, 3, 3, 2), (1, 1), (1, 1), (0, 0, 0, 0)),
    ((1, 3, 3, 1), (3, 3, 1, 1), (1, 1), (1, 1), (0, 0, 0, 0)),
    ((1, 11, 6, 16), (3, 3, 16, 7), (1, 1), (1, 1), (1, 0, 2, 1)),
    ((3, 5, 5, 2), (3, 3, 2, 3), (1, 1), (1, 1), (1, 1, 1, 1)),
    ((1, 16, 16, 64), (3, 3, 64, 32), (1, 1), (1, 1), (0, 0, 0, 0)),
]
IM2COL_ONLY = [((1, 9, 7, 3), (3, 2, 3, 4), (2, 1), (1, 2), (1, 1, 0, 1)),
               ((2, 5, 5, 1), (1, 1, 1, 6), (1, 1), (1, 1), (0, 0, 0, 0))]


def conv_group(r, name, algo_by_attr):
    """algo_by_attr: the paths named by the node attribute; else by the schedule file."""
    yaml = [name + ":", "  - algorithm:"] if not algo_by_attr else None
    g = Graph(name)
    for t in ("f32", "f64"):
        for shape, wshape, s, d, p in CONV_CASES + IM2COL_ONLY:
            x = r.uniform(-1, 1, shape).astype(X.NP_TYPES[t])
            w = r.uniform(-1, 1, wshape).astype(X.NP_TYPES[t])
            ref, mag = ref_conv(x, w, s, d, p)
            xi, wi = g.input(x), g.input(w)
            winograd_ok = wshape[:2] == (3, 3) and s == (1, 1) and d == (1, 1)
            for algo in ("direct", "im2col", "winograd", "winograd6"):
                if algo.startswith("winograd") and not winograd_ok:
                    continue
                attrs = dict(strides=list(s), dilations=list(d), padding=[[p[0], p[1]], [p[2], p[3]]])
                if algo_by_attr:
                    attrs["algorithm"] = algo
                y = g.node("conv_2d_nhwc_hwcf", [xi, wi], **attrs)
                if not algo_by_attr:
                    yaml.append("      %s: %s" % (y, algo))
                tol = {"f32": 1e-6, "f64": 1e-13}[t] * (2 if algo == "winograd" else 1)
                if algo == "winograd6":
                    tol = WINOGRAD6_TOL[t]
                g.output(y, ref.astype(x.dtype), tol, mag)
    if yaml:
        g.schedule = "\n".join(yaml) + "\n"
    return g


def g_conv_attr(r):
    return conv_group(r, "conv_paths", True)


def g_conv_file(r):
    return conv_group(r, "conv_paths_file", False)


def g_conv_mixed(r):
    """Conv paths inside a graph: relu(conv + bias) read by another conv."""
    g = Graph("conv_mixed")
    x = r.uniform(-1, 1, (2, 10, 9, 8)).astype(np.float32)
    w1 = r.uniform(-1, 1, (3, 3, 8, 16)).astype(np.float32)
    w2 = r.uniform(-1, 1, (3, 3, 16, 4)).astype(np.float32)
    bias = r.uniform(-1, 1, (16,)).astype(np.float32)
    xi, w1i, w2i, bi = g.input(x), g.input(w1), g.input(w2), g.input(bias)
    pad = [[1, 1], [1, 1]]
    y1, _ = ref_conv(x, w1, (1, 1), (1, 1), (1, 1, 1, 1))
    h = np.maximum(y1 + bias, 0)
    y2, mag = ref_conv(h, w2, (1, 1), (1, 1), (1, 1, 1, 1))
    for a1, a2 in (("winograd", "im2col"), ("im2col", "winograd"), ("winograd", "winograd"),
                   ("winograd6", "winograd6")):
        c1 = g.node("conv_2d_nhwc_hwcf", [xi, w1i], padding=pad, algorithm=a1)
        hv = g.node("relu", [g.node("add", [c1, bi])])
        g.output(g.node("conv_2d_nhwc_hwcf", [hv, w2i], padding=pad, algorithm=a2), y2.astype(np.float32), 1e-5, mag)
    return g


def g_diag_fold(r):
    g = Graph("diag_fold")
    for n, m in ((1, 1), (4, 6), (7, 3), (5, 1)):
        v = X.rng_array(r, (n,), "f32")
        b = X.rng_array(r, (n, m), "f32")
        a = X.rng_array(r, (m, n), "f32")
        vi = g.input(v)
        d = g.node("diag", [vi])
        g.output(g.node("matmul", [d, g.input(b)]), np.diag(v) @ b)
        g.output(g.node("matmul", [g.input(a), d]), a @ np.diag(v))
        bv = X.rng_array(r, (n,), "f32")
        g.output(g.node("matmul", [d, g.input(bv)]), np.diag(v) @ bv)
        g.output(g.node("matmul", [g.input(bv), d]), bv @ np.diag(v))
        bb = X.rng_array(r, (2, n, m), "f32")
        g.output(g.node("relu", [g.node("matmul", [d, g.input(bb)])]), np.maximum(np.diag(v) @ bb, 0))
        g.output(d, np.diag(v))  # the diag itself is still an output
    vi = g.input(X.rng_array(r, (3,), "f64"))
    g.output(g.node("matmul", [g.node("diag", [vi]), g.node("diag", [vi])]),
             np.diag(g.arrays[-1]) @ np.diag(g.arrays[-1]))
    return g


def toom_cook(points, m, r):
    """Lavin and Gray's construction of F(m, r) from n - 1 = m + r - 2 finite
    points and infinity: A^T (m x n), G (n x r), B^T (n x n). Row 0 of G and
    B^T negated, as Lavin (and IREE) write them (G[0] = [1, 0, 0])."""
    n = m + r - 1
    p = np.array(points, np.float64)
    at, g, bt = np.zeros((m, n)), np.zeros((n, r)), np.zeros((n, n))
    for j in range(n - 1):
        others = [p[q] for q in range(n - 1) if q != j]
        at[:, j] = p[j] ** np.arange(m)
        g[j] = p[j] ** np.arange(r) / np.prod([p[j] - q for q in others])
        bt[j, :n - 1] = np.polynomial.polynomial.polyfromroots(others)
    at[m - 1, n - 1] = g[n - 1, r - 1] = 1
    bt[n - 1] = np.polynomial.polynomial.polyfromroots(p)
    g[0], bt[0] = -g[0], -bt[0]
    return at, g, bt


AT6, G6, BT6 = toom_cook([0, 1, -1, 2, -2, 0.5, -0.5], 6, 3)
# F(6x6, 3x3)'s error against a float64 direct conv, relative to the largest
# sum |x||w| over a window (ref_conv's scale), measured in f32 over uniform
# inputs and filters in [-1, 1] (16x16 and 28x28 images, padding 1, C = 1,
# 4, 16, 64, 256, F = 8, three seeds): at most 5.4e-6 (relative to the
# largest output, 1.7e-5), against 1.6e-7 for F(2x2, 3x3) and 2.0e-7 for the
# direct conv. Its transforms' coefficients (up to 32 and 21/4, down to
# 1/90) cost about 5 bits. The test allows 1e-5 in f32, 1e-13 in f64.
WINOGRAD6_TOL = {"f32": 1e-5, "f64": 1e-13}


def g_winograd6(r):
    """F(6x6, 3x3) (output_tile_size 6, 8x8 input tiles at stride 6): each
    transform alone (f64, against Lavin's matrices derived above, not typed
    in), then filter, input, matmul and output transforms against the
    float64 direct conv, on tiny, odd and prime shapes."""
    g = Graph("winograd6")
    for c, f in ((1, 1), (3, 5), (2, 7)):
        w = r.uniform(-1, 1, (3, 3, c, f))
        ref = np.einsum("ai,ijcf,bj->abcf", G6, w, G6)
        g.output(g.node("winograd_filter_transform", [g.input(w)], output_tile_size=6), ref, 1e-14)
    # a constant filter's transform is folded at generation time (fold.c),
    # F(6x6) and F(2x2), in f64 and f32
    g2 = np.array([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]])
    for c, f, t in ((3, 5, np.float64), (2, 7, np.float32), (16, 3, np.float32)):
        w = r.uniform(-1, 1, (3, 3, c, f)).astype(t)
        for m, gm in ((6, G6), (2, g2)):
            ref = np.einsum("ai,ijcf,bj->abcf", gm, w.astype(np.float64), gm)
            g.output(g.node("winograd_filter_transform", [g.const(w)], output_tile_size=m), ref.astype(t),
                     1e-14 if t == np.float64 else 1e-7)
    for shape, p in (((1, 8, 8, 1), (0, 0, 0, 0)), ((2, 5, 7, 3), (1, 1, 1, 1)), ((1, 13, 3, 2), (0, 1, 2, 0)),
                     ((1, 3, 3, 37), (1, 1, 1, 1))):
        x = r.uniform(-1, 1, shape)
        n, h, w_, c = shape
        oh, ow = h + p[0] + p[1] - 2, w_ + p[2] + p[3] - 2
        th, tw = -(-oh // 6), -(-ow // 6)
        xp = np.zeros((n, 6 * th + 2, 6 * tw + 2, c))
        xp[:, p[0]:p[0] + h, p[2]:p[2] + w_, :] = x
        v = np.zeros((8, 8, n * th * tw, c))
        for b in range(n):
            for i in range(th):
                for j in range(tw):
                    d = xp[b, 6 * i:6 * i + 8, 6 * j:6 * j + 8, :]
                    v[:, :, (b * th + i) * tw + j, :] = np.einsum("ai,ijc,bj->abc", BT6, d, BT6)
        g.output(g.node("winograd_input_transform", [g.input(x)], padding=[[p[0], p[1]], [p[2], p[3]]],
                        output_tile_size=6), v, 1e-14)
    for n, oh, ow, f in ((1, 6, 6, 1), (2, 7, 13, 3), (1, 1, 1, 2)):
        th, tw = -(-oh // 6), -(-ow // 6)
        m = r.uniform(-1, 1, (8, 8, n * th * tw, f))
        y = np.zeros((n, 6 * th, 6 * tw, f))
        for b in range(n):
            for i in range(th):
                for j in range(tw):
                    y[b, 6 * i:6 * i + 6, 6 * j:6 * j + 6, :] = np.einsum(
                        "ai,ijf,bj->abf", AT6, m[:, :, (b * th + i) * tw + j, :], AT6)
        g.output(g.node("winograd_output_transform", [g.input(m)], shape=[n, oh, ow], output_tile_size=6),
                 y[:, :oh, :ow, :], 1e-14)
    cases = [c[:2] + (c[4],) for c in CONV_CASES] + [((1, 13, 11, 5), (3, 3, 5, 3), (1, 1, 1, 1)),
                                                     ((2, 4, 17, 2), (3, 3, 2, 1), (0, 2, 1, 0))]
    for t in ("f32", "f64"):
        for shape, wshape, p in cases:
            x = r.uniform(-1, 1, shape).astype(X.NP_TYPES[t])
            w = r.uniform(-1, 1, wshape).astype(X.NP_TYPES[t])
            ref, mag = ref_conv(x, w, (1, 1), (1, 1), p)
            u = g.node("winograd_filter_transform", [g.input(w)], output_tile_size=6)
            v = g.node("winograd_input_transform", [g.input(x)], padding=[[p[0], p[1]], [p[2], p[3]]],
                       output_tile_size=6)
            y = g.node("winograd_output_transform", [g.node("matmul", [v, u])], shape=list(ref.shape[:3]),
                       output_tile_size=6)
            g.output(y, ref.astype(x.dtype), WINOGRAD6_TOL[t], mag)
    return g


GROUPS = [g_fft, g_dft, g_im2col, g_winograd_transforms, g_conv_attr, g_conv_file, g_conv_mixed, g_diag_fold,
          g_im2col_operands, g_winograd6]


def onnx_dft_length(opts, work):
    """ONNX DFT with a dft_length input (opset 17: axis an attribute; 20: an
    input), which the shared node tests lack: lgen-onnx2json, lgen, gcc,
    against np.fft.fft. Skipped (no result) without python3-onnx."""
    try:
        import onnx
        from onnx import TensorProto, helper
    except ImportError:
        return []
    results = []
    x = np.random.default_rng(3).standard_normal((2, 9, 3, 2)).astype(np.float32)
    z = x[..., 0].astype(np.float64) + 1j * x[..., 1]
    for opset, length, onesided in ((17, 12, 1), (20, 12, 1), (20, 5, 0)):
        d = os.path.join(work, "onnx_dft_%d_%d" % (opset, length))
        os.makedirs(d, exist_ok=True)
        ref = np.fft.fft(z, n=length, axis=1)
        if onesided:
            ref = ref[:, :length // 2 + 1]
        ins = ["x", "len"] + (["ax"] if opset >= 20 else [])
        node = helper.make_node("DFT", ins, ["y"], onesided=onesided, **({} if opset >= 20 else {"axis": 1}))
        inits = [helper.make_tensor("len", TensorProto.INT64, [], [length])]
        if opset >= 20:
            inits.append(helper.make_tensor("ax", TensorProto.INT64, [], [1]))
        g = helper.make_graph([node], "d", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(ref.shape) + [2])], inits)
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), os.path.join(d, "d.onnx"))
        tag = "onnx DFT opset %d dft_length %d onesided %d" % (opset, length, onesided)
        rc, out = X.run([sys.executable, opts.onnx2json, "d.onnx", "-o", "d.json"], d)
        if rc == 0:
            rc, out = X.run([opts.lgen, "d.json", "-o", "g.c", "-H", "g.h"], d)
        if rc != 0:
            results.append((False, "%s: %s" % (tag, out.strip()[:300])))
            continue
        g = Graph("d")
        g.input(x)
        g.output("y", np.stack([ref.real, ref.imag], -1).astype(np.float32), fft_tol("f32"))
        with open(os.path.join(d, "main.c"), "w") as f:
            f.write(X.harness(g, "g.h"))
        x.tofile(os.path.join(d, "in_0.bin"))
        rc, out = X.run([opts.cc, "-std=c99", "-O1", "-o", "prog", "g.c", "main.c", "-lm"], d)
        if rc == 0:
            rc, out = X.run(["./prog"], d)
        err = g.compare(d) if rc == 0 else "exit %d: %s" % (rc, out.strip()[:300])
        results.append((err is None, "%s%s" % (tag, ": " + err if err else "")))
    return results


def main():
    def add_args(ap):
        ap.add_argument("--onnx2json", help="scripts/lgen-onnx2json: also ONNX DFT with dft_length")

    def extra(opts, work):
        if opts.onnx2json and (not opts.only or "onnx" in opts.only):
            return onnx_dft_length(opts, work)
        return []
    return X.main_for(GROUPS, "lgen-fft-", 11, add_args, extra)


if __name__ == "__main__":
    sys.exit(main())
