#!/usr/bin/python3
"""Unsigned element types (u8, u16, u32, u64) in model graphs, against NumPy
(tests/unsigned.test).

Each group is one lgen-graph/1 graph whose nodes take unsigned tensors:
elementwise arithmetic (+ - * wrap modulo 2^bits, / and comparisons on the
unsigned values), clip, where, reductions (sums and products wrap), pools,
matmul, casts between unsigned, signed and float types, the uint8 image
normalisation (u8 -> cast f32 -> (x - mean) * (1 / std)), the
non-structured ops (argmax/argmin, topk, sort, scan, gather,
gather_elements, scatter_elements), constant folding of the same, and an
ONNX model (protobuf's JSON mapping) with UINT8, UINT16 and UINT64 inputs
and initializers (image preprocessing Cast, Div, Greater, Max, BitShift,
ArgMax/Less/Sub above 2^63), generated with and without --schedule=none. Data
covers the whole range of each type: 0, 1, the maximum and its neighbours
(2^63 and above for u64, where a signed reading goes wrong), on odd, prime,
tiny and empty shapes.

Each graph is generated three ways (default, --fuse=none,
--schedule=none) and compiled with gcc and clang, -std=c99 -pedantic -Wall
-Wextra -Wsign-compare -Werror, with and without -fopenmp (run at 1 and 2
threads). Every output must equal NumPy's exactly (NumPy's unsigned arrays
wrap the same way); the float outputs of the image normalisation within
1e-6 relative (lgen may contract x * s + t into one fma).

Float to unsigned conversion is not NumPy's (C leaves it undefined out of
range; NumPy on x86 wraps through int64): lgen saturates (NaN and x <= 0 ->
0, x >= 2^bits -> the maximum), and the reference here does exactly that,
by hand.
"""
import base64
import os
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ext-ops"))
import run_ext_ops as X  # noqa: E402  (Graph, harness, test_group, main_for)

UTYPES = ("u8", "u16", "u32", "u64")
NP = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}


class Graph(X.Graph):
    def const(self, a):
        """A constant, its bytes in base64 (JSON integers stop at 2^63 - 1)."""
        name = "c%d" % len(self.constants)
        a = np.ascontiguousarray(a)
        self.constants.append({"name": name, "type": X.tname(a), "shape": list(a.shape),
                               "base64": base64.b64encode(a.astype(a.dtype.newbyteorder("<")).tobytes()).decode()})
        return name


def urand(r, shape, t):
    """Values over the whole range of t, with 0, 1 and the top few forced in."""
    info = np.iinfo(NP[t])
    a = r.integers(0, int(info.max), size=shape, dtype=NP[t], endpoint=True)
    flat = a.reshape(-1)
    special = [0, 1, int(info.max), int(info.max) - 1, int(info.max) // 2, int(info.max) // 2 + 1]
    for i, v in enumerate(special[:flat.size]):
        flat[r.integers(0, flat.size)] = v
    return a


def small(r, shape, t, lo=0, hi=6):
    return r.integers(lo, hi, size=shape).astype(NP[t])


def sat(x, t):
    """lgen's float -> unsigned conversion: truncate, NaN and x <= 0 -> 0, x >= 2^bits -> the maximum."""
    bits = np.iinfo(NP[t]).bits
    out = []
    for v in np.asarray(x, dtype=np.float64).ravel():
        if not (v > 0):
            out.append(0)
        elif v >= 2.0 ** bits:
            out.append(2 ** bits - 1)
        else:
            out.append(int(v))
    return np.array(out, dtype=NP[t]).reshape(np.shape(x))


def udiv(a, b):
    return (a // np.where(b == 0, 1, b)).astype(a.dtype)


# ---------------------------------------------------------------------------
# The groups

def g_elementwise(r):
    """+ - * / max min, comparisons, where, clip, neg, abs, relu, broadcasting."""
    g = Graph("u_elementwise")
    for t in UTYPES:
        for shape, bshape in (((3, 37), (37,)), ((1,), (1,)), ((2, 5, 7), (5, 1)), ((1, 4), (4,))):
            a, b = urand(r, shape, t), urand(r, bshape, t)
            b = np.where(b == 0, NP[t](3), b)  # division by zero is undefined in C
            xa, xb = g.input(a), g.input(b)
            g.output(g.node("add", [xa, xb]), a + b)
            g.output(g.node("sub", [xa, xb]), a - b)
            g.output(g.node("mul", [xa, xb]), a * b)
            g.output(g.node("div", [xa, xb]), udiv(a, b))
            g.output(g.node("max", [xa, xb]), np.maximum(a, b))
            g.output(g.node("min", [xa, xb]), np.minimum(a, b))
            lt = g.node("less", [xa, xb])
            g.output(lt, a < b)
            g.output(g.node("greater", [xa, xb]), a > b)
            e = np.where(r.integers(0, 2, size=a.shape) == 1, a, a + NP[t](1))
            g.output(g.node("equal", [xa, g.input(e)]), a == e)
            g.output(g.node("where", [lt, xa, xb]), np.where(a < b, a, b))
            g.output(g.node("neg", [xa]), (np.zeros_like(a) - a).astype(a.dtype))
            g.output(g.node("abs", [xa]), a)
            g.output(g.node("relu", [xa]), a)
            top = int(np.iinfo(NP[t]).max)
            g.output(g.node("clip", [xa], min=-5, max=200), np.clip(a, 0, 200).astype(a.dtype))
            # a bound is a double: u64 bounds round to 53 bits
            g.output(g.node("clip", [xa], min=top // 3), np.maximum(a, NP[t](int(float(top // 3)))))
            # a constant operand at the type's maximum: x + max wraps to x - 1
            c = g.const(np.array([top], dtype=NP[t]))
            g.output(g.node("add", [xa, c]), a + NP[t](top))
            g.output(g.node("greater", [xa, c]), np.zeros(a.shape, dtype=bool))
    return g


def g_bitwise(r):
    """& | ^ ~ on unsigned, signed and i1 values; << and >> on unsigned ones,
    shift amounts from 0 past the width (which give 0, as NumPy's)."""
    g = Graph("u_bitwise")
    for t in UTYPES + ("i8", "i32", "i64"):
        npt = NP.get(t) or X.NP_TYPES[t]
        info = np.iinfo(npt)
        a = r.integers(int(info.min), int(info.max), size=(3, 11), dtype=npt, endpoint=True)
        b = r.integers(int(info.min), int(info.max), size=(11,), dtype=npt, endpoint=True)
        xa, xb = g.input(a), g.input(b)
        g.output(g.node("bitwise_and", [xa, xb]), a & b)
        g.output(g.node("bitwise_or", [xa, xb]), a | b)
        g.output(g.node("bitwise_xor", [xa, xb]), a ^ b)
        g.output(g.node("bitwise_not", [xa]), ~a)
        if t in UTYPES:
            bits = info.bits
            sh = np.arange(bits + 3, dtype=npt)  # 0 .. bits + 2
            sh[-1] = info.max  # a huge amount
            v = urand(r, (2, bits + 3), t)
            xv, xs = g.input(v), g.input(sh)
            g.output(g.node("shift_left", [xv, xs]), np.where(sh >= bits, npt(0), np.left_shift(v, sh)))
            g.output(g.node("shift_right", [xv, xs]), np.where(sh >= bits, npt(0), np.right_shift(v, sh)))
    p, q = r.integers(0, 2, size=(9,)).astype(bool), r.integers(0, 2, size=(9,)).astype(bool)
    xp, xq = g.input(p), g.input(q)
    g.output(g.node("bitwise_and", [xp, xq]), p & q)
    g.output(g.node("bitwise_or", [xp, xq]), p | q)
    g.output(g.node("bitwise_xor", [xp, xq]), p ^ q)
    g.output(g.node("bitwise_not", [xp]), ~p)
    return g


def g_casts(r):
    """Between unsigned, signed, float and bool types, both ways."""
    g = Graph("u_casts")
    for t in UTYPES:
        a = urand(r, (41,), t)
        xa = g.input(a)
        for to, npt in (("f32", np.float32), ("f64", np.float64), ("i8", np.int8), ("i16", np.int16),
                        ("i32", np.int32), ("i64", np.int64), ("i1", np.bool_)):
            g.output(g.node("cast", [xa], to=to), a.astype(npt))
        for to in UTYPES:
            g.output(g.node("cast", [xa], to=to), a.astype(NP[to]))
        # f16 for the types it holds exactly (and rounds the rest as NumPy does)
        if t in ("u8", "u16"):
            with np.errstate(over="ignore"):  # u16 from 65520 on: inf
                g.output(g.node("cast", [xa], to="f16"), a.astype(np.float16))
    # signed to unsigned wraps modulo 2^bits
    s = np.array([-1, -128, 127, 0, 5, -2**31, 2**31 - 1, -2**63, 2**63 - 1], dtype=np.int64)
    xs = g.input(s)
    for to in UTYPES:
        g.output(g.node("cast", [xs], to=to), s.astype(NP[to]))
    s8 = np.array([-1, -128, 127, 0], dtype=np.int8)
    xs8 = g.input(s8)
    for to in UTYPES:
        g.output(g.node("cast", [xs8], to=to), s8.astype(NP[to]))
    # float to unsigned saturates; in range it truncates toward zero
    for ft, npt in (("f32", np.float32), ("f64", np.float64), ("f16", np.float16)):
        with np.errstate(over="ignore"):
            f = np.array([0.0, -0.0, 0.99, 1.5, 254.5, 255.0, 255.5, 256.0, 65535.9, 65536.0, 4294967295.0,
                          4294967296.0, 2.0**63, 2.0**64, 1e30, -0.5, -1.0, -300.0, np.inf, -np.inf, np.nan, 3e9,
                          1.8446744073709550e19], dtype=np.float64).astype(npt)
        xf = g.input(f)
        for to in UTYPES:
            g.output(g.node("cast", [xf], to=to), sat(f, to))
    return g


def g_reductions(r):
    """Sums and products wrap; max and min over the unsigned values; pools; matmul."""
    g = Graph("u_reductions")
    for t in UTYPES:
        for shape in ((3, 17), (1, 1), (5, 1, 13), (2, 2)):
            a = urand(r, shape, t)
            xa = g.input(a)
            with np.errstate(over="ignore"):
                g.output(g.node("reduce_sum", [xa], axes=[len(shape) - 1], keepdims=0),
                         np.sum(a, axis=-1, dtype=NP[t]))
                g.output(g.node("reduce_sum", [xa]), np.sum(a, dtype=NP[t]).reshape((1,) * len(shape)))
                g.output(g.node("reduce_prod", [xa], axes=[0]), np.prod(a, axis=0, dtype=NP[t], keepdims=True))
            if a.size:
                g.output(g.node("reduce_max", [xa], axes=[0], keepdims=0), np.max(a, axis=0))
                g.output(g.node("reduce_min", [xa], axes=[len(shape) - 1]), np.min(a, axis=-1, keepdims=True))
                n = shape[-1]
                g.output(g.node("reduce_mean", [xa], axes=[len(shape) - 1], keepdims=0),
                         (np.sum(a, axis=-1, dtype=NP[t]) // NP[t](n)).astype(NP[t]))
        # matmul: products and sums modulo 2^bits
        for m, k, n in ((1, 1, 1), (7, 13, 5), (3, 64, 17)):
            a, b = urand(r, (m, k), t), urand(r, (k, n), t)
            ref = np.zeros((m, n), dtype=NP[t])
            with np.errstate(over="ignore"):
                for kk in range(k):
                    ref = ref + np.outer(a[:, kk], b[kk, :]).astype(NP[t])
            g.output(g.node("matmul", [g.input(a), g.input(b)]), ref)
    # max / min pooling (NCHW), with padding: the pad is 0 for max and the
    # type's maximum for min, so padding never wins
    for t in ("u8", "u16", "u64"):
        x = urand(r, (2, 3, 7, 9), t)
        xi = g.input(x)
        for op, f in (("pooling_nchw_max", np.max), ("pooling_nchw_min", np.min)):
            y = g.node(op, [xi], window=[3, 2], strides=[2, 2], padding=[[1, 1], [0, 1]])
            want = np.zeros((2, 3, 4, 5), dtype=NP[t])
            for i in range(4):
                for j in range(5):
                    h0, w0 = i * 2 - 1, j * 2
                    win = x[:, :, max(h0, 0):min(h0 + 3, 7), max(w0, 0):min(w0 + 2, 9)]
                    want[:, :, i, j] = f(win, axis=(2, 3))
            g.output(y, want)
        y = g.node("pooling_nchw_sum", [xi], window=[2, 3], strides=[1, 3])
        want = np.zeros((2, 3, 6, 3), dtype=NP[t])
        with np.errstate(over="ignore"):
            for i in range(6):
                for j in range(3):
                    want[:, :, i, j] = np.sum(x[:, :, i:i + 2, 3 * j:3 * j + 3], axis=(2, 3), dtype=NP[t])
        g.output(y, want)
    return g


def g_image(r):
    """A uint8 image to float: cast, subtract the channel mean, scale by 1 / std
    (the usual first layer of a vision model), and back to u8."""
    g = Graph("u_image")
    x = urand(r, (2, 3, 17, 23), "u8")
    mean = np.array([0.485, 0.456, 0.406], dtype=np.float32).reshape(3, 1, 1) * 255
    inv = (1 / (np.array([0.229, 0.224, 0.225], dtype=np.float32) * 255)).reshape(3, 1, 1).astype(np.float32)
    xi = g.input(x)
    f = g.node("cast", [xi], to="f32")
    y = g.node("mul", [g.node("sub", [f, g.const(mean)]), g.const(inv)])
    g.output(y, (x.astype(np.float32) - mean) * inv, exact=False)
    scaled = g.node("div", [f, g.const(np.array(255, dtype=np.float32))])
    g.output(scaled, x.astype(np.float32) / np.float32(255))
    # and back: the float image to u8 saturates (values below 0 and above 255)
    back = g.node("cast", [g.node("mul", [g.node("sub", [f, g.const(np.array(64, dtype=np.float32))]),
                                          g.const(np.array(1.5, dtype=np.float32))])], to="u8")
    g.output(back, sat((x.astype(np.float32) - 64) * np.float32(1.5), "u8"))
    return g


def ref_topk_u(x, k, axis, largest):
    key = ~x if largest else x  # ~x reverses the order exactly, even above 2^53
    order = np.argsort(key, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx


def g_ext(r):
    """argmax/argmin, topk, sort, scan, gather, gather_elements, scatter_elements."""
    g = Graph("u_ext")
    for t in UTYPES:
        top = int(np.iinfo(NP[t]).max)
        x = urand(r, (4, 13), t)
        x[1, :] = x[1, 0]  # a row of ties
        x[2, 3] = x[2, 9] = top
        xi = g.input(x)
        for is_min in (False, True):
            for last in (0, 1):
                y = g.node("argmin" if is_min else "argmax", [xi], axis=1, keepdims=0, select_last_index=last)
                g.output(y, X.ref_arg(x, 1, is_min, 0, last).astype(np.int64))
        for k, largest in ((3, 1), (13, 0), (1, 1)):
            v, i = g.node("topk", [xi], nout=2, k=k, axis=1, largest=largest, index_type="i64")
            rv, ri = ref_topk_u(x, k, 1, largest)
            g.output(v, rv)
            g.output(i, ri.astype(np.int64))
        for desc in (0, 1):
            s = np.sort(x, axis=0, kind="stable")
            g.output(g.node("sort", [xi], axis=0, descending=desc), np.flip(s, 0) if desc else s)
        for comb in ("add", "mul", "max", "min"):
            for inclusive in (1, 0):
                y = g.node("scan", [xi], axis=1, combiner=comb, inclusive=inclusive)
                with np.errstate(over="ignore"):
                    g.output(y, X.ref_scan(x, 1, comb, inclusive, 0))
        idx = r.integers(-13, 13, size=(5,)).astype(np.int64)
        g.output(g.node("gather", [xi, g.input(idx)], axis=1), np.take(x, idx, axis=1))
        ie = r.integers(-4, 4, size=(3, 13)).astype(np.int64)
        g.output(g.node("gather_elements", [xi, g.input(ie)], axis=0),
                 np.take_along_axis(x, np.where(ie < 0, ie + 4, ie), axis=0))
        upd = urand(r, (3, 13), t)
        for comb in ("replace", "add", "mul", "max", "min"):
            y = g.node("scatter_elements", [xi, g.input(ie), g.input(upd)], axis=0, combiner=comb)
            with np.errstate(over="ignore"):
                g.output(y, X.ref_scatter_elements(x, ie, upd, 0, comb))
    return g


def g_folded(r):
    """The same arithmetic on constants, folded by lgen at generation time."""
    g = Graph("u_folded")
    x = g.input(np.array([1], dtype=np.uint8))  # the graph needs an input
    g.output(g.node("copy", [x]), np.array([1], dtype=np.uint8))
    for t in UTYPES:
        a, b = urand(r, (9,), t), urand(r, (9,), t)
        b = np.where(b == 0, NP[t](7), b)
        ca, cb = g.const(a), g.const(b)
        g.output(g.node("add", [ca, cb]), a + b)
        g.output(g.node("mul", [ca, cb]), a * b)
        g.output(g.node("sub", [ca, cb]), a - b)
        g.output(g.node("div", [ca, cb]), udiv(a, b))
        g.output(g.node("max", [ca, cb]), np.maximum(a, b))
        g.output(g.node("less", [ca, cb]), a < b)
        g.output(g.node("cast", [ca], to="f64"), a.astype(np.float64))
        with np.errstate(over="ignore"):
            g.output(g.node("reduce_sum", [ca], keepdims=0), np.array(np.sum(a, dtype=NP[t])))
        g.output(g.node("reduce_max", [ca], keepdims=0), np.array(np.max(a)))
        f = np.array([-1.0, 3.7, 1e30, np.nan], dtype=np.float32)
        g.output(g.node("cast", [g.const(f)], to=t), sat(f, t))
    return g


ONNX_CODES = {"f32": 1, "u8": 2, "u16": 4, "i64": 7, "i1": 9, "u64": 13}


class OnnxGraph(Graph):
    """The same, written as an ONNX model (protobuf's JSON mapping): node()
    takes ONNX operator names and attributes; constants are initializers."""

    def __init__(self, name):
        Graph.__init__(self, name)
        self.inits = []

    def const(self, a):
        name = "c%d" % len(self.inits)
        a = np.ascontiguousarray(a)
        t = X.tname(a)
        init = {"name": name, "dims": [str(d) for d in a.shape], "dataType": ONNX_CODES[t]}
        if t in ("u8", "u16"):  # small unsigned types travel in int32Data
            init["int32Data"] = [int(v) for v in a.ravel()]
        else:
            init["rawData"] = base64.b64encode(a.astype(a.dtype.newbyteorder("<")).tobytes()).decode()
        self.inits.append(init)
        return name

    def node(self, op, ins, nout=1, **attrs):
        outs = [self.fresh() for _ in range(nout)]
        at = []
        for k, v in attrs.items():
            if isinstance(v, str):
                at.append({"name": k, "type": "STRING", "s": base64.b64encode(v.encode()).decode()})
            elif isinstance(v, list):
                at.append({"name": k, "type": "INTS", "ints": [str(x) for x in v]})
            else:
                at.append({"name": k, "type": "INT", "i": str(v)})
        n = {"opType": op, "input": ins, "output": outs}
        if at:
            n["attribute"] = at
        self.nodes.append(n)
        return outs if nout > 1 else outs[0]

    def doc(self):
        def vi(i):
            return {"name": i["name"], "type": {"tensorType": {"elemType": ONNX_CODES[i["type"]], "shape": {
                "dim": [{"dimValue": str(d)} for d in i["shape"]]}}}}
        return {"irVersion": "8", "opsetImport": [{"domain": "", "version": "18"}],
                "graph": {"name": self.name, "input": [vi(i) for i in self.inputs], "initializer": self.inits,
                          "node": self.nodes, "output": [{"name": o} for o in self.outputs]}}

    def variants(self, base):
        return [("auto", []), ("schedule-none", ["--schedule=none"])]


def g_onnx(r):
    """An ONNX model with UINT8 (and UINT16, UINT64) inputs and initializers:
    image preprocessing (Cast to float, - mean, * 1/std, Cast back to UINT8
    saturating), Div, Greater, Max, Add (wraps), BitShift; UINT64 from 2^63
    on through ArgMax, Less and Sub; odd and prime shapes."""
    g = OnnxGraph("u_onnx")
    x = urand(r, (2, 3, 5, 7), "u8")
    xi = g.input(x)
    mean = (np.array([0.485, 0.456, 0.406], dtype=np.float32) * 255).reshape(3, 1, 1)
    inv = (1 / (np.array([0.229, 0.224, 0.225], dtype=np.float32) * 255)).reshape(3, 1, 1).astype(np.float32)
    xf = g.node("Cast", [xi], to=1)
    g.output(g.node("Mul", [g.node("Sub", [xf, g.const(mean)]), g.const(inv)]), (x.astype(np.float32) - mean) * inv,
             exact=False)
    big = g.node("Mul", [xf, g.const(np.array(1.5, dtype=np.float32))])
    g.output(g.node("Cast", [big], to=2), sat(x.astype(np.float32) * np.float32(1.5), "u8"))
    d = np.array([1, 2, 3, 5, 7, 255, 200], dtype=np.uint8)
    q = g.node("Div", [xi, g.const(d)])
    g.output(q, x // d)
    g.output(g.node("Greater", [xi, g.const(np.array(128, dtype=np.uint8))]), x > 128)
    g.output(g.node("Max", [xi, q]), np.maximum(x, x // d))
    g.output(g.node("Add", [xi, xi]), x + x)
    sh = np.array([0, 1, 2, 3, 7, 8, 1], dtype=np.uint8)
    g.output(g.node("BitShift", [xi, g.const(sh)], direction="RIGHT"), np.where(sh >= 8, 0, x >> sh).astype(np.uint8))
    w = urand(r, (11,), "u16")
    wi = g.input(w)
    g.output(g.node("Mul", [wi, wi]), w * w)
    g.output(g.node("Cast", [wi], to=1), w.astype(np.float32))
    z = urand(r, (13,), "u64")
    z[5] = np.uint64(2 ** 64 - 1)
    zi = g.input(z)
    half = np.array([2 ** 63], dtype=np.uint64)
    g.output(g.node("ArgMax", [zi], axis=0, keepdims=0), np.array(np.argmax(z), dtype=np.int64))
    g.output(g.node("Less", [zi, g.const(half)]), z < half)
    g.output(g.node("Sub", [g.const(half), zi]), half - z)
    return g


GROUPS = [g_elementwise, g_bitwise, g_casts, g_reductions, g_image, g_ext, g_folded, g_onnx]


class Opts:
    pass


def main():
    for k, v in NP.items():
        X.NP_TYPES[k] = v
        X.C_TYPES[k] = "%s_t" % np.dtype(v).name
    return X.main_for(GROUPS, "lgen-unsigned-", 15)


if __name__ == "__main__":
    sys.exit(main())
