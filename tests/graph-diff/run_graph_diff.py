#!/usr/bin/python3
"""Differential test of generated model graphs (tests/graph-diff.test).

Every graph -- the examples (examples/models.py: mlp, cnn, transformer, as
ONNX JSON; needs python3-onnx) and small seeded random lgen-graph/1 graphs
(elementwise chains with broadcasting, matmul + bias + relu, reductions,
transposes and reshapes, softmax) -- is generated with lgen three ways
(default --fuse=auto, --fuse=none, --schedule=none, and the default again
compiled with -fsanitize=address,undefined), compiled with gcc -fopenmp, and
run at OMP_NUM_THREADS=1 and 2 on the same random input. All eight results
must agree with each other and with the graph's NumPy reference
within 1e-4 relative (|a - b| <= 1e-4 * max(1, |ref|)).

Prints PASS/FAIL per graph and variant, then "N passed, N failed".
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

# Never write __pycache__ into the source tree (lgen-onnx2json, examples/models.py).
sys.dont_write_bytecode = True

TOL = 1e-4
VARIANTS = [("auto", []), ("fuse-none", ["--fuse=none"]), ("schedule-none", ["--schedule=none"]),
            ("auto-asan", [])]
# the generated C of this variant runs under AddressSanitizer and UBSan
SANITIZED = {"auto-asan": ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g"]}
THREADS = (1, 2)


def load_models_module(srcdir):
    sys.path.insert(0, os.path.join(srcdir, "examples"))
    import models  # noqa: E402
    return models


# ---------------------------------------------------------------------------
# Random lgen-graph/1 graphs with NumPy references

class G:
    """A graph under construction: JSON document plus NumPy evaluation."""

    def __init__(self, name, rng):
        self.name, self.r = name, rng
        self.inputs, self.consts, self.nodes, self.outputs = [], [], [], []
        self.env = {}
        self.dims = []  # [(symbol, value)]
        self.n = 0
        self.schedule = None  # a schedule file for one more variant ("model:" names the graph)

    def input(self, shape, sym=None):
        name = "x%d" % len(self.inputs)
        concrete = [dict(self.dims)[d] if isinstance(d, str) else d for d in shape]
        self.inputs.append({"name": name, "type": "f32", "shape": list(shape)})
        self.env[name] = self.r.standard_normal(concrete).astype(np.float32)
        return name

    def sym(self, name, value):
        self.dims.append((name, value))
        return name

    def const(self, shape, scale=1.0):
        name = "c%d" % len(self.consts)
        a = (self.r.standard_normal(shape) * scale).astype(np.float32)
        self.consts.append({"name": name, "type": "f32", "shape": list(shape),
                            "data": [float(v) for v in a.ravel()]})
        self.env[name] = a
        return name

    def op(self, op, inputs, fn, **attrs):
        self.n += 1
        out = "t%d" % self.n
        node = {"op": op, "inputs": list(inputs), "outputs": [out]}
        if attrs:
            node["attrs"] = attrs
        self.nodes.append(node)
        self.env[out] = fn(*[self.env[i].astype(np.float64) for i in inputs])
        return out

    def output(self, v):
        self.outputs.append(v)

    def doc(self):
        return {"format": "lgen-graph/1", "name": self.name, "inputs": self.inputs,
                "outputs": self.outputs, "constants": self.consts, "nodes": self.nodes}

    def io(self):
        d = dict(self.dims)
        ins = [([d[x] if isinstance(x, str) else x for x in i["shape"]], np.float32) for i in self.inputs]
        outs = [(list(self.env[o].shape), np.float32) for o in self.outputs]
        return ins, outs

    def input_arrays(self):
        return [self.env[i["name"]] for i in self.inputs]

    def refs(self):
        return [self.env[o] for o in self.outputs]


UNARY = {
    "neg": np.negative, "abs": np.abs, "tanh": np.tanh, "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "exp": lambda x: np.exp(np.clip(x, -5, 5)),
}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def g_elementwise(seed):
    g = G("ew%d" % seed, np.random.default_rng(seed))
    a = g.input([4, 1, 8])
    b = g.input([3, 8])
    v = g.op("add", [a, b], np.add)               # [4, 3, 8] by broadcasting
    for _ in range(6):
        k = g.r.integers(3)
        if k == 0:
            name = sorted(UNARY)[g.r.integers(len(UNARY))]
            if name == "exp":  # keep it finite: exp of tanh
                v = g.op("tanh", [v], np.tanh)
            v = g.op(name, [v], UNARY[name])
        else:
            name = sorted(BINARY)[g.r.integers(len(BINARY))]
            shape = [[8], [3, 1], [4, 1, 1], [1, 3, 8]][g.r.integers(4)]
            c = g.const(shape)
            v = g.op(name, [v, c] if k == 1 else [c, v], BINARY[name])
    g.output(v)
    return g


def g_matmul_bias_relu(seed):
    g = G("mbr%d" % seed, np.random.default_rng(seed))
    n = g.sym("N", 5)
    x = g.input([n, 32])
    w = g.const([32, 48], 0.2)
    b = g.const([48])
    h = g.op("matmul", [x, w], lambda p, q: p @ q)
    h = g.op("add", [h, b], np.add)
    g.output(g.op("relu", [h], UNARY["relu"]))
    return g


def g_reductions(seed):
    g = G("red%d" % seed, np.random.default_rng(seed))
    x = g.input([6, 5, 7])
    s = g.op("reduce_sum", [x], lambda t: t.sum(axis=1), axes=[1], keepdims=0)
    m = g.op("reduce_max", [x], lambda t: t.max(axis=(0, 2), keepdims=True), axes=[0, 2], keepdims=1)
    mean = g.op("reduce_mean", [x], lambda t: t.mean(axis=-1, keepdims=True), axes=[-1], keepdims=1)
    d = g.op("sub", [x, m], np.subtract)
    e = g.op("mul", [d, mean], np.multiply)
    g.output(s)
    g.output(g.op("reduce_min", [e], lambda t: t.min(axis=0), axes=[0], keepdims=0))
    return g


def g_layout(seed):
    g = G("lay%d" % seed, np.random.default_rng(seed))
    x = g.input([2, 3, 4])
    t = g.op("transpose", [x], lambda a: a.transpose(2, 0, 1), perm=[2, 0, 1])     # [4, 2, 3]
    r = g.op("reshape", [t], lambda a: a.reshape(4, 6), shape=[4, 6])
    c = g.const([4, 6])
    s = g.op("mul", [r, c], np.multiply)
    r2 = g.op("reshape", [s], lambda a: a.reshape(2, 2, 6), shape=[2, -1, 6])
    g.output(g.op("transpose", [r2], lambda a: a.transpose(1, 2, 0), perm=[1, 2, 0]))
    return g


def g_softmax(seed):
    g = G("sm%d" % seed, np.random.default_rng(seed))
    x = g.input([4, 5, 6])
    a = g.op("softmax", [x], lambda t: softmax(t, -1), axis=-1)
    b = g.op("softmax", [x], lambda t: softmax(t, 1), axis=1)
    g.output(g.op("add", [a, b], np.add))
    return g


def conv_nchw(x, w, b=None, group=1):
    """No padding, stride 1; w is [F, C/group, KH, KW]."""
    win = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=(2, 3))  # [N, C, OH, OW, KH, KW]
    cg, fg = w.shape[1], w.shape[0] // group
    y = np.concatenate([np.einsum("ncijkl,fckl->nfij", win[:, g * cg:(g + 1) * cg], w[g * fg:(g + 1) * fg])
                        for g in range(group)], axis=1)
    return y if b is None else y + b.reshape(1, -1, 1, 1)


def conv_nhwc(x, w):
    """No padding, stride 1; x [N, H, W, C], w [KH, KW, C, F]."""
    win = np.lib.stride_tricks.sliding_window_view(x, w.shape[:2], axis=(1, 2))  # [N, OH, OW, C, KH, KW]
    return np.einsum("nijckl,klcf->nijf", win, w)


def g_fold_scale_shift(seed):
    """Per-channel scale and shift after convs and a matmul, which lgen folds
    into their weights (src/graph/passes/fold_bn.c)."""
    g = G("fold%d" % seed, np.random.default_rng(seed))
    x = g.input([2, 4, 6, 6])
    c = g.op("conv", [x, g.const([6, 2, 3, 3], 0.3), g.const([6])],
             lambda a, w, b: conv_nchw(a, w, b, group=2), group=2)
    c = g.op("mul", [c, g.const([6, 1, 1])], np.multiply)
    c = g.op("add", [g.const([1, 6, 1, 1]), c], np.add)
    g.output(g.op("relu", [c], UNARY["relu"]))
    xh = g.input([1, 5, 5, 3])
    h = g.op("conv_2d_nhwc_hwcf", [xh, g.const([2, 2, 3, 4], 0.3)], conv_nhwc)
    h = g.op("mul", [h, g.const([4])], np.multiply)
    h = g.op("sub", [h, g.const([4])], np.subtract)
    g.output(g.op("tanh", [h], np.tanh))
    xm = g.input([3, 8])
    m = g.op("matmul", [xm, g.const([8, 5], 0.3)], lambda p, q: p @ q)
    m = g.op("add", [m, g.const([5])], np.add)
    m = g.op("mul", [m, g.const([1, 5])], np.multiply)
    m = g.op("add", [m, g.const([5])], np.add)
    g.output(m)
    return g


def g_epilogues(seed):
    """Pointwise ops after reductions, which fusion applies in the reduction's
    stores (src/graph/fuse/fuse.c, epilogues): prime sizes, a residual read, a
    reduction that auto splits across threads (its epilogue runs as a loop
    nest of its own), and a conv with bias."""
    g = G("epi%d" % seed, np.random.default_rng(seed))
    n = g.sym("N", 7)
    x = g.input([n, 37])
    h = g.op("matmul", [x, g.const([37, 53], 0.2)], lambda p, q: p @ q)
    h = g.op("add", [h, g.const([53])], np.add)
    h = g.op("tanh", [h], np.tanh)
    r = g.op("mul", [x, g.const([37])], np.multiply)       # defined after the first matmul
    m = g.op("matmul", [h, g.const([53, 37], 0.2)], lambda p, q: p @ q)
    m = g.op("add", [m, r], np.add)                        # a residual read in the epilogue
    g.output(g.op("sigmoid", [m], UNARY["sigmoid"]))
    g.output(h)                                            # also a graph output
    v = g.input([1, 60013])
    s = g.op("reduce_sum", [v], lambda t: t.sum(axis=1, keepdims=True), axes=[1], keepdims=1)
    g.output(g.op("mul", [s, g.const([1])], np.multiply))
    xc = g.input([1, 3, 9, 11])
    c = g.op("conv", [xc, g.const([5, 3, 3, 3], 0.3), g.const([5])], lambda a, w, b: conv_nchw(a, w, b))
    c = g.op("relu", [c], UNARY["relu"])
    g.output(g.op("add", [c, g.const([1, 5, 7, 9])], np.add))
    # a LayerNorm by hand: reduce_mean divides its sum in place (an in-place
    # epilogue read by two later ops), and the variance's chain composes
    xl = g.input([5, 13])
    mu = g.op("reduce_mean", [xl], lambda t: t.mean(axis=-1, keepdims=True), axes=[-1], keepdims=1)
    d = g.op("sub", [xl, mu], np.subtract)
    var = g.op("reduce_mean", [g.op("mul", [d, d], np.multiply)], lambda t: t.mean(axis=-1, keepdims=True),
               axes=[-1], keepdims=1)
    inv = g.op("reciprocal", [g.op("sqrt", [g.op("add", [var, g.const([1])], np.add)], np.sqrt)], np.reciprocal)
    g.output(g.op("mul", [g.op("mul", [d, inv], np.multiply), mu], np.multiply))
    # schedules that keep no accumulators across the reduction (the epilogue
    # runs as its own nest after the op), or tile it (applied at the last tile)
    # (the op numbers are those after fusion: --print-schedule)
    g.schedule = """model:
  - op: 0
    tile: {m: [4]}
    order: [k, m, n]
    parallel: [m]
  - op: 1
    tile: {k: [16]}
    order: [m, k, n]
    parallel: [m]
    vector: n
  - op: 2
    order: [d0, r1]
    parallel: [r1]
    split_reduction: true
"""
    return g


def g_prologues(seed):
    """Elementwise and layout producers of a matmul's operand, which its pack
    copy computes (src/schedule/prologue.c): an affine and tanh on the rows
    of a symbolic batch, a transpose, and a producer read through a folded
    unit dim."""
    g = G("pro%d" % seed, np.random.default_rng(seed))
    n = g.sym("N", 11)
    x = g.input([n, 29])
    a = g.op("tanh", [g.op("add", [g.op("mul", [x, g.const([29])], np.multiply), g.const([29])], np.add)], np.tanh)
    g.output(g.op("matmul", [a, g.const([29, 17], 0.3)], lambda p, q: p @ q))
    xt = g.input([23, 13])
    t = g.op("transpose", [xt], lambda v: v.T, perm=[1, 0])                  # [13, 23]
    g.output(g.op("matmul", [g.op("neg", [t], np.negative), g.const([23, 31], 0.3)], lambda p, q: p @ q))
    x3 = g.input([1, 37, 19])
    s = g.op("relu", [g.op("sub", [x3, g.const([19])], np.subtract)], UNARY["relu"])
    g.output(g.op("matmul", [s, g.const([19, 41], 0.3)], lambda p, q: p @ q))
    return g


def g_rows(seed):
    """A LayerNorm and a softmax by hand over rows too many for L2 (1 MiB on
    the default target), which row fusion runs row by row
    (src/schedule/rows.c); a symbolic batch of them too."""
    g = G("rows%d" % seed, np.random.default_rng(seed))
    x = g.input([331, 1031])
    mu = g.op("reduce_mean", [x], lambda t: t.mean(axis=-1, keepdims=True), axes=[-1], keepdims=1)
    d = g.op("sub", [x, mu], np.subtract)
    var = g.op("reduce_mean", [g.op("mul", [d, d], np.multiply)], lambda t: t.mean(axis=-1, keepdims=True),
               axes=[-1], keepdims=1)
    eps = g.op("abs", [g.const([1])], np.abs)
    inv = g.op("reciprocal", [g.op("sqrt", [g.op("add", [var, eps], np.add)], np.sqrt)], np.reciprocal)
    g.output(g.op("mul", [d, inv], np.multiply))
    n = g.sym("B", 3)
    y = g.input([n, 97, 1033])
    m = g.op("reduce_max", [y], lambda t: t.max(axis=-1, keepdims=True), axes=[-1], keepdims=1)
    e = g.op("exp", [g.op("sub", [y, m], np.subtract)], np.exp)
    s = g.op("reduce_sum", [e], lambda t: t.sum(axis=-1, keepdims=True), axes=[-1], keepdims=1)
    g.output(g.op("div", [e, s], np.divide))
    return g


def g_siblings(seed):
    """Sibling reductions over one input, which fusion merges into one pass
    (src/graph/fuse/fuse.c, sibling reductions): sums, means and a sum of
    squares (merged), a max and a min (merged), a sum beside a max (kept
    apart), keepdims 0 and 1, prime extents, a symbolic batch, a sibling
    that is also a graph output read by a later op, a reduction across rows
    (not merged) and a row reduction of a 3-D input. The schedule-file
    variant keeps one apart (`fuse: {t: keep}`)."""
    g = G("sib%d" % seed, np.random.default_rng(seed))
    n = g.sym("B", 5)
    x = g.input([n, 37])
    s = g.op("reduce_sum", [x], lambda t: t.sum(axis=1), axes=[1], keepdims=0)
    mx = g.op("reduce_max", [x], lambda t: t.max(axis=-1, keepdims=True), axes=[-1], keepdims=1)
    mn = g.op("reduce_min", [x], lambda t: t.min(axis=1), axes=[1], keepdims=0)
    mu = g.op("reduce_mean", [x], lambda t: t.mean(axis=1, keepdims=True), axes=[1], keepdims=1)
    sq = g.op("reduce_sum", [g.op("mul", [x, x], np.multiply)], lambda t: t.sum(axis=1, keepdims=True),
              axes=[1], keepdims=1)
    var = g.op("sub", [g.op("mul", [sq, g.const([1])], np.multiply), g.op("mul", [mu, mu], np.multiply)],
               np.subtract)
    g.output(s)                                            # a graph output also read below
    g.output(g.op("add", [s, g.const([1])], np.add))
    g.output(mx)
    g.output(mn)
    g.output(var)
    y = g.input([7, 13, 31])
    g.output(g.op("reduce_sum", [y], lambda t: t.sum(axis=2), axes=[2], keepdims=0))
    g.output(g.op("reduce_mean", [g.op("abs", [y], np.abs)], lambda t: t.mean(axis=-1, keepdims=True),
                  axes=[-1], keepdims=1))
    g.output(g.op("reduce_max", [y], lambda t: t.max(axis=(1, 2)), axes=[1, 2], keepdims=0))
    g.output(g.op("reduce_min", [y], lambda t: t.min(axis=(1, 2), keepdims=True), axes=[1, 2], keepdims=1))
    z = g.input([29, 11])                                  # across rows: kept apart
    g.output(g.op("reduce_sum", [z], lambda t: t.sum(axis=0), axes=[0], keepdims=0))
    g.output(g.op("reduce_max", [z], lambda t: t.max(axis=0), axes=[0], keepdims=0))
    g.schedule = "model:\n  - fuse: {%s: keep}\n" % mu
    return g


def conv_ref(x, w, b=None, stride=1, pad=0, group=1):
    """NCHW conv with symmetric zero padding and a stride; w is [F, C/group, KH, KW]."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    y = conv_nchw(x, w, b, group)
    return y[:, :, ::stride, ::stride]


def maxpool_ref(x, k, stride, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    win = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))
    return win.max(axis=(4, 5))[:, :, ::stride, ::stride]


def g_convnet(seed):
    """The conv shapes of mobile and residual CNNs, channels-first as ONNX
    exports them, at odd sizes: a dense 3x3 conv, depthwise 3x3 and 5x5
    (each at stride 1 and 2), squeeze-excite (global mean, two 1x1 convs, sigmoid
    gate, multiply), a pointwise conv after the depthwise one, a grouped
    3x3 conv, max pooling and a strided 1x1 conv on a residual branch. Their
    automatic schedules (vectorised along the output width, or the channels
    with channels-last activations) must give NumPy's and --schedule=none's
    answers."""
    g = G("convnet%d" % seed, np.random.default_rng(seed))
    x = g.input([1, 6, 19, 19])

    def conv(v, f, c, k, stride=1, pad=0, group=1, bias=True, scale=0.3):
        ins = [v, g.const([f, c // group, k, k], scale)] + ([g.const([f], 0.3)] if bias else [])
        attrs = {"padding": [[pad, pad], [pad, pad]], "strides": [stride, stride]}
        if group > 1:
            attrs["group"] = group
        return g.op("conv", ins, lambda a, w, b=None: conv_ref(a, w, b, stride, pad, group), **attrs)

    h = g.op("relu", [conv(x, 20, 6, 3, pad=1)], UNARY["relu"])                  # 20 x 19 x 19
    d = conv(h, 20, 20, 3, pad=1, group=20)                                       # depthwise 3x3
    d = g.op("relu", [d], UNARY["relu"])
    d = conv(d, 20, 20, 5, stride=2, pad=2, group=20)                             # depthwise 5x5 /2: 10 x 10
    s = g.op("reduce_mean", [d], lambda t: t.mean(axis=(2, 3), keepdims=True), axes=[2, 3], keepdims=1)
    s = g.op("relu", [conv(s, 5, 20, 1)], UNARY["relu"])
    s = g.op("sigmoid", [conv(s, 20, 5, 1)], UNARY["sigmoid"])
    d = g.op("mul", [d, s], np.multiply)                                          # the gate
    p = conv(d, 24, 20, 1, bias=False)                                            # pointwise
    q = g.op("relu", [conv(p, 24, 24, 3, pad=1, group=4)], UNARY["relu"])         # grouped 3x3
    m = g.op("pooling_nchw_max", [q], lambda t: maxpool_ref(t, 3, 2, 1), window=[3, 3], strides=[2, 2],
             padding=[[1, 1], [1, 1]])                                            # 24 x 5 x 5
    r = conv(p, 24, 24, 1, stride=2)                                              # strided 1x1
    m = g.op("add", [m, r], np.add)
    e = conv(p, 24, 24, 5, pad=2, group=24)                                       # depthwise 5x5 /1
    e = conv(e, 24, 24, 3, stride=2, pad=1, group=24, bias=False)                 # depthwise 3x3 /2: 5 x 5
    m = g.op("add", [m, e], np.add)
    g.output(m)
    g.output(g.op("reduce_mean", [m], lambda t: t.mean(axis=(2, 3), keepdims=True), axes=[2, 3], keepdims=1))
    return g


def g_fire(seed):
    """SqueezeNet's fire module and DenseNet's concatenation at odd sizes:
    a 1 x 1 squeeze conv with bias and ReLU (its pixels collapse into one
    GEMM dim with the bias as init and the ReLU as epilogue), 1 x 1 and 3 x 3
    expand convs, each ReLU'd into its channel slice of a concat (the second
    slice's store is offset by the first's channels: y[..., c + 10]), then
    a dense block's step: that concat concatenated again with a 1 x 1 conv
    of it, and a 1 x 1 conv without bias on the result; a 3 x 3 conv of 40
    to 32 channels, its input channels in more than one tile."""
    g = G("fire%d" % seed, np.random.default_rng(seed))
    x = g.input([1, 7, 11, 13])

    def conv(v, f, c, k, pad=0, bias=True):
        ins = [v, g.const([f, c, k, k], 0.3)] + ([g.const([f], 0.3)] if bias else [])
        return g.op("conv", ins, lambda a, w, b=None: conv_ref(a, w, b, 1, pad),
                    padding=[[pad, pad], [pad, pad]], strides=[1, 1])

    s = g.op("relu", [conv(x, 5, 7, 1)], UNARY["relu"])                           # squeeze: 5 x 11 x 13
    e1 = g.op("relu", [conv(s, 10, 5, 1)], UNARY["relu"])
    e3 = g.op("relu", [conv(s, 9, 5, 3, pad=1)], UNARY["relu"])
    cat = g.op("concat", [e1, e3], lambda a, b: np.concatenate([a, b], axis=1), axis=1)  # 19 channels
    d = conv(cat, 3, 19, 1, bias=False)
    cat2 = g.op("concat", [cat, d], lambda a, b: np.concatenate([a, b], axis=1), axis=1)  # 22 channels
    g.output(conv(cat2, 6, 22, 1))
    # DenseNet's 3 x 3 conv: 32 output channels over more input channels
    # than one channel tile of its direct schedule (24 on avx512, 16 here)
    t = g.op("relu", [conv(cat2, 40, 22, 1)], UNARY["relu"])
    u = g.op("relu", [conv(t, 32, 40, 3, pad=1)], UNARY["relu"])   # channels-last: a direct conv
    g.output(conv(u, 3, 32, 1))
    return g


def g_conv_views(seed):
    """Conv outputs read through reshapes that keep channels and spatial
    positions apart (src/graph/fuse/layout.c: channel_split): the conv
    output and the view go channels-last together."""
    g = G("views%d" % seed, np.random.default_rng(seed))
    x = g.input([1, 6, 13, 13])
    c = g.op("conv", [x, g.const([10, 6, 3, 3], 0.3), g.const([10], 0.3)],
             lambda a, w, b: conv_ref(a, w, b, 1, 1), padding=[[1, 1], [1, 1]], strides=[1, 1])
    c = g.op("relu", [c], UNARY["relu"])
    r = g.op("reshape", [c], lambda a: a.reshape(1, 2, 5, 169), shape=[1, 2, 5, 169])  # channels split, HW merged
    g.output(g.op("transpose", [r], lambda a: a.transpose(0, 3, 1, 2), perm=[0, 3, 1, 2]))
    p = g.input([1, 3, 16, 16])                                                      # a patch embedding
    e = g.op("conv", [p, g.const([8, 3, 4, 4], 0.3), g.const([8], 0.3)],
             lambda a, w, b: conv_ref(a, w, b, 4, 0), padding=[[0, 0], [0, 0]], strides=[4, 4])
    t = g.op("reshape", [e], lambda a: a.reshape(1, 8, 16), shape=[1, 8, 16])
    g.output(g.op("transpose", [t], lambda a: a.transpose(0, 2, 1), perm=[0, 2, 1]))
    return g


def g_chunks(seed):
    """A softmax over rows too many for L2 row-fused with the op that
    computes its input and the op that reads its result (src/schedule/rows.c
    softmax_rows): both intermediates live in per-thread chunk buffers of
    up to 16 rows, which the members index through lgen_shift
    (src/loops/chunk.c); and one whose result is also a graph output, kept
    whole."""
    g = G("chunks%d" % seed, np.random.default_rng(seed))
    x = g.input([701, 131])
    xb = g.op("add", [x, g.const([131])], np.add)
    y = g.op("softmax", [xb], lambda t: softmax(t, -1), axis=1)
    g.output(g.op("tanh", [y], np.tanh))
    z = g.input([3, 257, 67])
    zs = g.op("softmax", [z], lambda t: softmax(t, -1), axis=2)
    g.output(zs)
    g.output(g.op("exp", [zs], np.exp))
    return g


RANDOM_GRAPHS = [g_elementwise, g_elementwise, g_matmul_bias_relu, g_reductions, g_layout, g_softmax,
                 g_fold_scale_shift, g_epilogues, g_prologues, g_rows, g_siblings, g_convnet, g_fire,
                 g_conv_views, g_chunks]


# ---------------------------------------------------------------------------
# One graph: generate the variants, compile, run, compare

class Case:
    def __init__(self, name, json_path, shim_io, dims, inputs, refs, schedule=None):
        self.name, self.json_path, self.dims = name, json_path, dims
        self.ins, self.outs = shim_io
        self.inputs, self.refs = inputs, refs
        self.schedule = schedule  # path of a schedule file: one more variant
        self.channels_first = None  # path of a `layout: given` file, for graphs with window ops


def run(cmd, cwd, env=None, timeout=300):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                           timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return -1, "timed out after %d s" % timeout


def build_variant(case, vname, vargs, opts, models, work):
    """Generates and compiles one variant; returns (program path, None) or (None, error)."""
    d = os.path.join(work, case.name, vname)
    os.makedirs(d, exist_ok=True)
    cname = "model"
    rc, out = run([opts.lgen, case.json_path, "-o", "model.c", "-H", "model.h", "--name=" + cname] + vargs, d)
    if rc != 0:
        return None, "lgen %s exit %d: %s" % (" ".join(vargs) or "(default)", rc, out.strip().splitlines()[0]
                                               if out.strip() else "")
    with open(os.path.join(d, "shim.c"), "w") as f:
        f.write(models.shim_from_io(cname, case.ins, case.outs, case.dims))
    rc, out = run([opts.cc, "-std=c99", "-O2", "-fopenmp"] + SANITIZED.get(vname, []) +
                  ["-I.", "-o", "prog", os.path.join(opts.srcdir, "examples", "run_model.c"), "model.c", "shim.c",
                   "-lm"], d)
    if rc != 0:
        return None, "gcc: %s" % "\n".join(out.strip().splitlines()[:3])
    for i, x in enumerate(case.inputs):
        x.astype("<f4").tofile(os.path.join(d, "in_%d.bin" % i))
    return os.path.join(d, "prog"), None


def run_variant(case, prog, threads):
    d = os.path.dirname(prog)
    # libgomp's thread pool outlives main: not a leak of the generated code
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), ASAN_OPTIONS="detect_leaks=0:abort_on_error=1")
    rc, out = run([prog], d, env=env)
    if rc != 0:
        return None, "run exit %d: %s" % (rc, out.strip()[:200])
    res = []
    for i, (shape, dt) in enumerate(case.outs):
        res.append(np.fromfile(os.path.join(d, "out_%d.bin" % i), dtype=np.dtype(dt).newbyteorder("<"))
                   .reshape(shape).astype(np.float64))
    return res, None


def worst(a_list, b_list, refs):
    w = 0.0
    for a, b, r in zip(a_list, b_list, refs):
        if a.shape != b.shape:
            return float("inf")
        if np.isnan(a).any() or np.isnan(b).any():
            return float("inf")
        w = max(w, float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(r)))) if a.size else 0.0)
    return w


def test_case(case, opts, models, work):
    """Lines of PASS/FAIL for one graph."""
    lines = []
    results = {}
    variants = VARIANTS + ([("schedule-file", ["--schedule=" + case.schedule])] if case.schedule else [])
    if case.channels_first:  # window ops: the activations kept channels-first (src/graph/fuse/layout.c)
        variants.append(("channels-first", ["--schedule=" + case.channels_first]))
    for vname, vargs in variants:
        prog, err = build_variant(case, vname, vargs, opts, models, work)
        if err:
            lines.append(("FAIL", "%s %s: %s" % (case.name, vname, err)))
            continue
        for t in THREADS:
            res, err = run_variant(case, prog, t)
            if err:
                lines.append(("FAIL", "%s %s threads=%d: %s" % (case.name, vname, t, err)))
                continue
            results[(vname, t)] = res
            e = worst(res, case.refs, case.refs)
            ok = e <= TOL
            lines.append(("PASS" if ok else "FAIL",
                          "%s %s threads=%d vs NumPy: max rel error %.3g" % (case.name, vname, t, e)))
    keys = sorted(results)
    if len(keys) > 1:
        base = keys[0]
        e = max(worst(results[k], results[base], case.refs) for k in keys[1:])
        lines.append(("PASS" if e <= TOL else "FAIL",
                      "%s: %d variants agree with each other (max rel difference %.3g)" % (case.name, len(keys), e)))
    return lines


def example_cases(models, conv, work, names):
    cases = []
    for name in names:
        model = models.make_onnx(name)
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, name + ".json")
        with open(path, "w") as f:
            f.write(conv.model_to_json(model))
        dims = {"N": 3}
        ins, outs, order = models.io_shapes(model, dims)
        xs = models.random_inputs(model, dims, 11)
        refs = models.SPECS[name][2](models.weights_of(model), *xs)
        cases.append(Case(name, path, ([(s, dt) for _, s, dt in ins], [(s, dt) for _, s, dt in outs]),
                          [(k, dims[k]) for k in order], xs, refs))
    return cases


def random_cases(work):
    cases = []
    for seed, fn in enumerate(RANDOM_GRAPHS):
        g = fn(seed)
        d = os.path.join(work, g.name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, g.name + ".json")
        with open(path, "w") as f:
            json.dump(g.doc(), f)
        schedule = None
        if g.schedule:
            schedule = os.path.join(d, "schedule.yaml")
            with open(schedule, "w") as f:
                f.write(g.schedule)
        cases.append(Case(g.name, path, g.io(), g.dims, g.input_arrays(), g.refs(), schedule))
    return cases


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lgen", default=os.environ.get("LGEN", "lgen"))
    ap.add_argument("--srcdir", default=os.path.dirname(os.path.dirname(here)))
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="graphs whose name contains one of these (comma-separated)")
    ap.add_argument("--work", help="work folder (kept); default: a temporary one")
    opts = ap.parse_args()
    opts.lgen = os.path.abspath(opts.lgen)
    work = opts.work or tempfile.mkdtemp(prefix="lgen-graph-diff-")
    os.makedirs(work, exist_ok=True)

    models = load_models_module(opts.srcdir)
    cases = random_cases(work)
    try:
        import importlib.machinery
        import importlib.util
        path = os.path.join(opts.srcdir, "scripts", "lgen-onnx2json")
        loader = importlib.machinery.SourceFileLoader("lgen_onnx2json", path)
        conv = importlib.util.module_from_spec(importlib.util.spec_from_loader("lgen_onnx2json", loader))
        loader.exec_module(conv)
        import onnx  # noqa: F401
        cases = example_cases(models, conv, work, models.MODELS) + cases
    except ImportError as e:
        print("NOTE: no python3-onnx (%s): the example models are not tested" % e)
    layout_file = os.path.join(work, "channels-first.yaml")
    with open(layout_file, "w") as f:
        f.write("model:\n  - layout: given\n")
    for case in cases:
        with open(case.json_path) as f:
            text = f.read()
        if '"conv' in text or '"Conv"' in text or 'pool' in text.lower():
            case.channels_first = layout_file
    if opts.only:
        subs = opts.only.split(",")
        cases = [c for c in cases if any(s in c.name for s in subs)]

    npass = nfail = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futs = [pool.submit(test_case, c, opts, models, work) for c in cases]
        for f in futs:
            for status, msg in f.result():
                print("%s: %s" % (status, msg), flush=True)
                if status == "PASS":
                    npass += 1
                else:
                    nfail += 1
    print("%d passed, %d failed" % (npass, nfail))
    if not opts.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
