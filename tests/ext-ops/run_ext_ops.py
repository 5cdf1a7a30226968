#!/usr/bin/python3
"""Non-structured graph ops against NumPy (tests/ext-ops.test).

Each group is one lgen-graph/1 graph of many independent nodes of one op
(gather, gather_elements, gather_nd, argmax/argmin, topk, sort, scan,
scatter, scatter_elements, diag, reverse) over shapes with odd, prime,
tiny, length-1 and empty axes, ties, k equal to the axis length and
duplicate scatter indices, plus graphs that mix them with structured ops
(gather -> matmul -> relu -> topk, ...). Every graph is generated with lgen
three ways (default, --fuse=none, --schedule=none), the groups of the
templates with a loop over rows (gather, argmax/argmin, topk, sort, scan)
also with schedule files that share those rows out 3 at a time or run them
on one thread (OpenMP builds only), compiled with gcc
-std=c99 -pedantic -Wall -Wextra -Werror with and without -fopenmp, and run
(at OMP_NUM_THREADS=1 and 2 with OpenMP). Every output must equal the
NumPy reference: exactly for data movement, indices and comparisons, within
1e-5 relative for float arithmetic (scan add/mul, the mixed graphs).

The references are NumPy (np.take, np.take_along_axis, np.argsort with
kind="stable", np.cumsum, ...) or plain Python loops (gather_nd, scatter),
never lgen's code path. Prints PASS/FAIL per graph and variant, then
"N passed, N failed".
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True

NP_TYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i16": np.int16, "i32": np.int32,
            "i64": np.int64, "i1": np.bool_}
C_TYPES = {"f16": "lgen_f16", "f32": "float", "f64": "double", "i8": "int8_t", "i16": "int16_t", "i32": "int32_t",
           "i64": "int64_t", "i1": "_Bool"}
LGEN_VARIANTS = [("auto", []), ("fuse-none", ["--fuse=none"]), ("schedule-none", ["--schedule=none"])]
# Schedules of the templates' loops over rows (schedule/templates.c), for the
# groups of the templates that have one: the file --print-schedule writes,
# with every template's `parallel: [rows]` replaced (the structured ops keep
# auto's decisions). ROWS_SCHEDULE marks the lgen argument test_group turns
# into such a file.
ROWS_SCHEDULE = "@rows-schedule:"
# (OpenMP builds only: without it the rows' pragmas vanish.)
ROWS_VARIANTS = [("rows-tile3", [ROWS_SCHEDULE + "parallel: [rows]\n    tile: {rows: 3}"]),
                 ("rows-one-thread", [ROWS_SCHEDULE + "parallel: []"])]
ROWS_GROUPS = ("gather", "argmaxmin", "topk", "sort", "scan", "mixed", "sort_multi", "scan_init")


def tname(a):
    for k, v in NP_TYPES.items():
        if a.dtype == v:
            return k
    raise ValueError(a.dtype)


class Graph:
    """A graph of nodes whose inputs are given arrays; outputs carry references.
    Outputs that are not exact compare within rtol * max(1, |reference|);
    subclasses (run_fft_conv.py, run_attention.py) change rtol, compare()
    or variants()."""

    rtol = 1e-5
    thread_counts = (1, 2)  # OMP_NUM_THREADS values the -fopenmp build runs at

    def __init__(self, name):
        self.name = name
        self.inputs, self.nodes, self.outputs = [], [], []
        self.arrays, self.refs, self.exact = [], [], []
        self.n = 0
        self.syms = []  # [(name, value)] in order of first appearance
        self.constants = []

    def input(self, a, shape=None):
        """shape: the declared shape, with symbol names for some dims (default: a's)."""
        name = "x%d" % len(self.inputs)
        shape = list(shape or a.shape)
        for d, v in zip(shape, a.shape):
            if isinstance(d, str) and d not in [s for s, _ in self.syms]:
                self.syms.append((d, v))
        self.inputs.append({"name": name, "type": tname(a), "shape": shape})
        self.arrays.append(np.ascontiguousarray(a))
        return name

    def const(self, a):
        """A constant of the graph (its data inline)."""
        name = "c%d" % len(self.constants)
        a = np.asarray(a)
        self.constants.append({"name": name, "type": tname(a), "shape": list(a.shape),
                               "data": a.ravel().tolist()})
        return name

    def fresh(self):
        self.n += 1
        return "v%d" % self.n

    def node(self, op, ins, nout=1, **attrs):
        outs = [self.fresh() for _ in range(nout)]
        self.nodes.append({"op": op, "inputs": ins, "outputs": outs, "attrs": attrs})
        return outs if nout > 1 else outs[0]

    def output(self, name, ref, exact=True):
        self.outputs.append(name)
        self.refs.append(np.asarray(ref))
        self.exact.append(exact)

    def doc(self):
        doc = {"format": "lgen-graph/1", "name": self.name, "inputs": self.inputs, "outputs": self.outputs,
               "nodes": self.nodes}
        if self.constants:
            doc["constants"] = self.constants
        return doc

    def variants(self, base):
        """[(name, lgen arguments)] to generate the graph with (base: its folder)."""
        return LGEN_VARIANTS + (ROWS_VARIANTS if self.name in ROWS_GROUPS else [])

    def compare(self, d):
        """None if every output in folder d matches its reference, else a message."""
        for i, ref in enumerate(self.refs):
            got = np.fromfile(os.path.join(d, "out_%d.bin" % i), dtype=ref.dtype)
            if got.size != ref.size:
                return "output %d: %d elements, want %d" % (i, got.size, ref.size)
            got = got.reshape(ref.shape)
            if self.exact[i] == "bits":  # equal and the same sign, -0.0 apart from +0.0
                close = ((got == ref) & (np.signbit(got) == np.signbit(ref))) | (np.isnan(got) & np.isnan(ref))
            elif self.exact[i] or not np.issubdtype(ref.dtype, np.floating):
                close = (got == ref) | (np.isnan(got) & np.isnan(ref)) if ref.dtype.kind == "f" else got == ref
            else:
                g64, r64 = got.astype(np.float64), ref.astype(np.float64)
                with np.errstate(invalid="ignore"):  # inf - inf
                    close = (g64 == r64) | (np.abs(g64 - r64) <= self.rtol * np.maximum(1, np.abs(r64))) | \
                        (np.isnan(g64) & np.isnan(r64))
            if not np.all(close):
                bad = np.argwhere(~close)[:3].tolist()
                return "output %s (node %s): differs from NumPy at %s; got %s, want %s" % (
                    i, self.outputs[i], bad, [got[tuple(b)] for b in bad], [ref[tuple(b)] for b in bad])
        return None


def rng_array(r, shape, t, lo=-9, hi=10):
    """Small integers (as floats for float types), so that ties happen and sums are exact."""
    return r.integers(lo, hi, size=shape).astype(NP_TYPES[t])


# ---------------------------------------------------------------------------
# References

def ref_gather_nd(data, idx, b):
    idx = idx.astype(np.int64)
    m = idx.shape[-1]
    bshape = data.shape[:b]
    out_shape = idx.shape[:-1] + data.shape[b + m:]
    out = np.zeros(out_shape, dtype=data.dtype)
    for pos in np.ndindex(*idx.shape[:-1]):
        coords = list(pos[:b])
        for j in range(m):
            x = int(idx[pos + (j,)])
            if x < 0:
                x += data.shape[b + j]
            coords.append(x)
        out[pos] = data[tuple(coords)]
    del bshape
    return out


def ref_scatter(orig, idx, upd, dmap, comb):
    out = orig.copy()
    idx = idx.astype(np.int64)
    m = idx.shape[-1]
    rest = [d for d in range(orig.ndim) if d not in dmap]
    nb = idx.ndim - 1
    for pos in np.ndindex(*idx.shape[:-1]):
        target = [None] * orig.ndim
        for j in range(m):
            x = int(idx[pos + (j,)])
            if x < 0:
                x += orig.shape[dmap[j]]
            target[dmap[j]] = x
        for s in np.ndindex(*[orig.shape[d] for d in rest]):
            t = list(target)
            for d, c in zip(rest, s):
                t[d] = c
            t = tuple(t)
            v = upd[pos + s]
            out[t] = combine(comb, out[t], v)
    del nb
    return out


def combine(comb, a, b):
    if comb == "replace":
        return b
    if comb == "add":
        return a + b
    if comb == "mul":
        return a * b
    if comb == "max":
        return max(a, b)
    return min(a, b)


def ref_scatter_elements(orig, idx, upd, axis, comb):
    out = orig.copy()
    for pos in np.ndindex(*idx.shape):
        x = int(idx[pos])
        if x < 0:
            x += orig.shape[axis]
        t = list(pos)
        t[axis] = x
        t = tuple(t)
        out[t] = combine(comb, out[t], upd[pos])
    return out


def ref_topk(x, k, axis, largest):
    key = -x.astype(np.float64) if largest else x.astype(np.float64)
    order = np.argsort(key, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx


def ref_scan(x, axis, comb, inclusive, reverse):
    if reverse:
        x = np.flip(x, axis)
    f = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[comb]
    acc = f.accumulate(x, axis=axis, dtype=x.dtype) if x.size else x.copy()
    if not inclusive:
        if np.issubdtype(x.dtype, np.floating):
            ident = {"add": 0, "mul": 1, "max": -np.inf, "min": np.inf}[comb]
        else:
            info = np.iinfo(x.dtype)
            ident = {"add": 0, "mul": 1, "max": info.min, "min": info.max}[comb]
        shifted = np.full_like(x, ident)
        sl_dst = [slice(None)] * x.ndim
        sl_src = [slice(None)] * x.ndim
        sl_dst[axis] = slice(1, None)
        sl_src[axis] = slice(0, -1)
        if x.shape[axis] > 0:
            shifted[tuple(sl_dst)] = acc[tuple(sl_src)]
        acc = shifted
    if reverse:
        acc = np.flip(acc, axis)
    return acc


def scan_identity(dtype, comb):
    if np.issubdtype(dtype, np.floating):
        return {"add": 0, "mul": 1, "max": -np.inf, "min": np.inf}[comb]
    info = np.iinfo(dtype)
    return {"add": 0, "mul": 1, "max": info.min, "min": info.max}[comb]


def ref_scan_last(x, y, axis, comb, reverse):
    """IREE's accumulator: per row, the scan's last value written (y at the
    axis' end, or its start when reverse); the identity for an empty axis."""
    shape = x.shape[:axis] + x.shape[axis + 1:]
    if x.shape[axis] == 0:
        return np.full(shape, scan_identity(x.dtype, comb), dtype=x.dtype)
    return np.take(y, 0 if reverse else x.shape[axis] - 1, axis=axis)


def ref_scan_payload(x, axis, f, reverse):
    """An inclusive scan by a Python loop: out[0] = x[0], out[j] = f(out[j-1], x[j])."""
    y = np.moveaxis(np.flip(x, axis) if reverse else x, axis, -1).copy()
    for pos in np.ndindex(*y.shape[:-1]):
        for j in range(1, y.shape[-1]):
            y[pos + (j,)] = f(y[pos + (j - 1,)], y[pos + (j,)])
    y = np.moveaxis(y, -1, axis)
    return np.flip(y, axis) if reverse else y


# payload combiners of scan (over acc and x) and what they compute, per type
SCAN_PAYLOADS = [
    ("f32", "std_maxf(acc, std_absf(x))", lambda a, b: max(a, abs(b))),
    ("f32", "std_addf(std_mulf(acc, 0.5), x)", lambda a, b: np.float32(a * np.float32(0.5)) + b),
    ("f64", "std_subf(x, acc)", lambda a, b: b - a),
    ("i32", "std_select(std_cmpi_sgt(acc, x), std_subi(acc, x), std_addi(std_muli(x, 2), -1))",
     lambda a, b: a - b if a > b else b * 2 - 1),
    ("i32", "std_xori(acc, x)", lambda a, b: a ^ b),
    ("i64", "std_maxsi(acc, std_muli(x, x))", lambda a, b: max(a, b * b)),
]


# sort comparators and the key NumPy's stable argsort sorts by for the same order
SORT_PAYLOADS = [
    ("f32", "std_cmpf_ogt(lhs, rhs)", lambda x: -x.astype(np.float64)),  # descending
    ("f32", "std_cmpf_olt(std_absf(lhs), std_absf(rhs))", lambda x: np.abs(x)),  # by magnitude; ties stay
    ("i32", "std_cmpi_slt(std_muli(lhs, lhs), std_muli(rhs, rhs))", lambda x: x.astype(np.int64) ** 2),
    ("f64", "std_cmpf_olt(std_subf(0.0, lhs), std_subf(0.0, rhs))", lambda x: -x),
    # an i1 op (its C casts to lgen_bool, which the file then defines)
    ("i32", "std_andi(std_cmpi_slt(lhs, rhs), std_cmpi_slt(lhs, 100))", lambda x: x),
]


def ref_arg(x, axis, is_min, keep, last):
    f = np.argmin if is_min else np.argmax
    if last:
        n = x.shape[axis]
        r = n - 1 - f(np.flip(x, axis), axis=axis)
    else:
        r = f(x, axis=axis)
    if keep:
        r = np.expand_dims(r, axis)
    return r


# ---------------------------------------------------------------------------
# The groups

def g_gather(r):
    g = Graph("gather")
    for shape, axis, ishape, it in [((5, 7), 0, (3,), "i64"), ((5, 7), 1, (2, 4), "i32"), ((1, 13), 1, (13,), "i64"),
                                    ((3, 1, 4), 1, (2,), "i32"), ((6,), 0, (), "i64"), ((2, 3, 5), -1, (7,), "i64")]:
        for t in ("f32", "i32"):
            x = rng_array(r, shape, t)
            n = shape[axis]
            idx = r.integers(-n, n, size=ishape).astype(NP_TYPES[it]) if n else np.zeros(ishape, NP_TYPES[it])
            y = g.node("gather", [g.input(x), g.input(idx)], axis=axis)
            g.output(y, np.take(x, idx.astype(np.int64), axis=axis))
    return g


def g_gather_elements(r):
    g = Graph("gather_elements")
    for dshape, ishape, axis, it in [((3, 4), (3, 4), 0, "i64"), ((3, 4), (2, 4), 1, "i32"), ((5,), (9,), 0, "i64"),
                                     ((2, 3, 7), (2, 3, 2), 2, "i32"), ((1, 1), (1, 1), 0, "i64")]:
        x = rng_array(r, dshape, "f32")
        n = dshape[axis]
        idx = r.integers(-n, n, size=ishape).astype(NP_TYPES[it])
        y = g.node("gather_elements", [g.input(x), g.input(idx)], axis=axis)
        # the off-axis coordinates are the indices' own: the data cut to their extents
        cut = x[tuple(slice(0, e) if d != axis else slice(None) for d, e in enumerate(ishape))]
        ref = np.take_along_axis(cut, np.where(idx < 0, idx + n, idx).astype(np.int64), axis=axis)
        g.output(y, ref)
    return g


def g_gather_nd(r):
    g = Graph("gather_nd")
    for dshape, ishape, b, it in [((4, 5), (3, 2), 0, "i64"), ((4, 5), (3, 1), 0, "i32"), ((2, 3, 4), (2, 1), 0, "i64"),
                                  ((2, 3, 4), (2, 5, 2), 1, "i64"), ((2, 3, 4), (2, 1), 1, "i32"),
                                  ((3, 2, 5), (3, 4, 1), 1, "i64")]:
        x = rng_array(r, dshape, "f32")
        m = ishape[-1]
        idx = np.zeros(ishape, dtype=NP_TYPES[it])
        for j in range(m):
            n = dshape[b + j]
            idx[..., j] = r.integers(-n, n, size=ishape[:-1])
        y = g.node("gather_nd", [g.input(x), g.input(idx)], batch_dims=b)
        g.output(y, ref_gather_nd(x, idx, b))
    return g


def g_arg(r):
    g = Graph("argmaxmin")
    for shape in [(3, 4), (1, 7), (5,), (2, 1, 6), (4, 13)]:
        for t in ("f32", "i32"):
            x = rng_array(r, shape, t, -3, 3)  # many ties
            for axis in range(len(shape)):
                if shape[axis] == 0:
                    continue
                for is_min in (False, True):
                    for keep in (0, 1):
                        for last in (0, 1):
                            if (keep + last + axis) % 2 and t == "i32" and shape != (5,):
                                continue
                            y = g.node("argmin" if is_min else "argmax", [g.input(x)], axis=axis - len(shape) * (
                                axis % 2), keepdims=keep, select_last_index=last,
                                index_type="i32" if last else "i64")
                            ref = ref_arg(x, axis, is_min, keep, last)
                            g.output(y, ref.astype(np.int32 if last else np.int64))
    return g


def g_topk(r):
    g = Graph("topk")
    g.thread_counts = (1, 2, 5)  # 5: rows cut into up to 4 segments (more threads than cores is fine)
    for shape, axis, k in [((10,), 0, 3), ((10,), 0, 10), ((3, 17), 1, 1), ((3, 17), 1, 17), ((3, 17), 0, 2),
                           ((4, 5, 6), 1, 5), ((2, 1), 1, 1), ((5,), 0, 0), ((2, 64), 1, 8),
                           ((1, 101), -1, 7), ((3, 1000), 1, 5), ((1, 4099), 1, 64), ((2, 300, 2), 1, 9)]:
        for t in ("f32", "i64"):
            x = rng_array(r, shape, t, -4, 4)  # ties
            for largest in (1, 0):
                it = "i32" if largest else "i64"
                v, i = g.node("topk", [g.input(x)], nout=2, k=k, axis=axis, largest=largest, index_type=it)
                rv, ri = ref_topk(x, k, axis, largest)
                g.output(v, rv)
                g.output(i, ri.astype(NP_TYPES[it]))
    # IREE's optional input indices (shaped like the values, i32 or i64):
    # the output indices are their elements at the chosen positions;
    # arbitrary values (negative, repeated), some computed by a node
    for shape, axis, k, it in [((7,), 0, 3, "i32"), ((3, 17), 1, 17, "i64"), ((4, 5, 3), 1, 2, "i32"),
                               ((2, 1), 1, 1, "i64"), ((5, 3), 0, 0, "i32"), ((1, 4099), 1, 13, "i64"),
                               ((1, 140001), 1, 9, "i32")]:  # the last: 2 segments at 5 threads
        x = rng_array(r, shape, "f32", -4, 4)
        given = r.integers(-50, 50, size=shape).astype(NP_TYPES[it])
        for largest in (1, 0):
            if largest:  # computed: the sum of two inputs
                half = (given // 2).astype(NP_TYPES[it])
                gi = g.node("add", [g.input(half), g.input((given - half).astype(NP_TYPES[it]))])
            else:
                gi = g.input(given)
            attrs = {"index_type": it} if it == "i32" else {}
            v, i = g.node("topk", [g.input(x), gi], nout=2, k=k, axis=axis, largest=largest, **attrs)
            rv, ri = ref_topk(x, k, axis, largest)
            g.output(v, rv)
            g.output(i, np.take_along_axis(given, ri, axis=axis))
    # payload comparators (lhs strictly before rhs), ties by position: the
    # first k of NumPy's stable argsort by the same key; the long rows are
    # cut into segments at 5 threads
    for t, text, key in [("f32", "std_cmpf_olt(std_absf(lhs), std_absf(rhs))", lambda x: np.abs(x)),
                         ("i32", "std_cmpi_sgt(lhs, rhs)", lambda x: -x.astype(np.int64)),
                         ("f64", "std_cmpf_ogt(std_mulf(lhs, lhs), std_mulf(rhs, rhs))", lambda x: -x * x)]:
        for shape, axis, k in [((10,), 0, 3), ((3, 17), 1, 17), ((3, 17), 0, 2), ((4, 5, 6), 1, 5), ((2, 1), 1, 1),
                               ((1, 4099), 1, 64), ((1, 140001), 1, 9)]:
            x = rng_array(r, shape, t, -4, 4)
            v, i = g.node("topk", [g.input(x)], nout=2, k=k, axis=axis, comparator=text, index_type="i64")
            order = np.take(np.argsort(key(x), axis=axis, kind="stable"), np.arange(k), axis=axis)
            g.output(v, np.take_along_axis(x, order, axis=axis))
            g.output(i, order.astype(np.int64))
    # few long rows are cut into segments whose heaps are merged: one row
    # of 300007 (4 segments, the last shorter), two of 200000 (3 each), k
    # up to 1000 and k that only allows fewer segments; ties everywhere
    for shape, k in [((300007,), 5), ((300007,), 1000), ((2, 200000), 8), ((1, 131072), 65000)]:
        x = rng_array(r, shape, "f32", -40, 40)
        for largest in (1, 0):
            v, i = g.node("topk", [g.input(x)], nout=2, k=k, axis=-1, largest=largest, index_type="i64")
            rv, ri = ref_topk(x, k, len(shape) - 1, largest)
            g.output(v, rv)
            g.output(i, ri.astype(np.int64))
    return g


def g_sort(r):
    g = Graph("sort")
    for shape, axis in [((10,), 0), ((3, 17), 1), ((3, 17), 0), ((4, 5, 6), 1), ((1,), 0), ((2, 100), 1),
                        ((37, 2), 0)]:
        for t in ("f32", "i32", "f64"):
            x = rng_array(r, shape, t, -5, 5)
            for desc in (0, 1):
                y = g.node("sort", [g.input(x)], axis=axis, descending=desc)
                s = np.sort(x, axis=axis, kind="stable")
                g.output(y, np.flip(s, axis) if desc else s)
    # payload comparators (whether lhs goes strictly before rhs): a stable
    # sort by the key NumPy's stable argsort sorts by
    for t, text, key in SORT_PAYLOADS:
        for shape, axis in [((10,), 0), ((3, 17), 1), ((37, 2), 0), ((4, 5, 6), 1), ((1,), 0), ((2, 100), 1)]:
            x = rng_array(r, shape, t, -5, 5)
            y = g.node("sort", [g.input(x)], axis=axis, comparator=text)
            order = np.argsort(key(x), axis=axis, kind="stable")
            g.output(y, np.take_along_axis(x, order, axis=axis))
    return g


def sort_order(key, axis, desc):
    """NumPy's stable argsort by key (NaN last, ties in input order), descending by its negation."""
    k = key.astype(np.float64) if key.dtype.kind == "f" else key.astype(np.int64)
    return np.argsort(-k if desc else k, axis=axis, kind="stable")


# multi-operand sort comparators (over lhsK, rhsK of operand K) and their
# order as np.lexsort keys (the last key is the primary one; lexsort is stable)
SORTN_PAYLOADS = [
    # keys ascending, ties by the values descending
    ("std_ori(std_cmpf_olt(lhs0, rhs0), std_andi(std_cmpf_oeq(lhs0, rhs0), std_cmpi_sgt(lhs1, rhs1)))",
     lambda ops: (-ops[1].astype(np.int64), ops[0])),
    # by operand 1 alone (the keys follow it)
    ("std_cmpi_slt(lhs1, rhs1)", lambda ops: (ops[1],)),
    # negative values (i32 operand 1: the literals take its type) first, then by the keys descending
    ("std_ori(std_andi(std_cmpi_slt(lhs1, 0), std_cmpi_sgt(rhs1, -1)), "
     "std_andi(std_cmpi_eq(std_cmpi_slt(lhs1, 0), std_cmpi_slt(rhs1, 0)), std_cmpf_ogt(lhs, rhs)))",
     lambda ops: (-ops[0].astype(np.float64), ops[1] >= 0)),
]


def g_sort_multi(r):
    """IREE's sort of several operands: they move together in the order of
    the keys (operand 0: ascending or descending, NaN last, stable) or of a
    comparator reading any operand's pair."""
    g = Graph("sort_multi")
    shapes = [((10,), 0), ((3, 17), 1), ((3, 17), 0), ((4, 5, 6), 1), ((1,), 0), ((2, 100), 1), ((37, 2), 0),
              ((1, 1, 1), 2)]
    for shape, axis in shapes:
        for kt, vts in (("f32", ("i64",)), ("i32", ("f64", "i32")), ("f64", ("i32", "f32", "i64"))):
            keys = rng_array(r, shape, kt, -4, 4)
            if kt != "i32" and keys.size > 3:  # NaN goes last either way
                keys.flat[r.choice(keys.size, size=keys.size // 5 + 1, replace=False)] = np.nan
            vals = [r.permutation(keys.size).reshape(shape).astype(NP_TYPES[vt]) for vt in vts]
            ins = [g.input(keys)] + [g.input(v) for v in vals]
            for desc in (0, 1):
                outs = g.node("sort", ins, nout=len(ins), axis=axis, descending=desc)
                order = sort_order(keys, axis, desc)
                for o, a in zip(outs, [keys] + vals):
                    g.output(o, np.take_along_axis(a, order, axis=axis))
    for text, lex in SORTN_PAYLOADS:
        for shape, axis in shapes:
            keys = rng_array(r, shape, "f32", -3, 3)
            vals = rng_array(r, shape, "i32", -3, 3)  # ties in both
            tags = r.permutation(keys.size).reshape(shape).astype(np.int64)  # shows the ties' order
            outs = g.node("sort", [g.input(keys), g.input(vals), g.input(tags)], nout=3, axis=axis, comparator=text)
            k = [np.moveaxis(a, axis, -1) for a in lex([keys, vals])]
            order = np.moveaxis(np.lexsort(k, axis=-1), -1, axis)
            for o, a in zip(outs, (keys, vals, tags)):
                g.output(o, np.take_along_axis(a, order, axis=axis))
    # symbolic dims (N = 7 at run time), sorted along N and along the static axis
    keys = rng_array(r, (7, 5), "f64", -3, 3)
    vals = r.permutation(35).reshape(7, 5).astype(np.int64)
    ki, vi = g.input(keys, ["N", 5]), g.input(vals, ["N", 5])
    for axis in (0, 1):
        order = sort_order(keys, axis, 1)
        for o, a in zip(g.node("sort", [ki, vi], nout=2, axis=axis, descending=1), (keys, vals)):
            g.output(o, np.take_along_axis(a, order, axis=axis))
    # an empty axis (topk with k = 0)
    e, ei = g.node("topk", [g.input(rng_array(r, (3, 6), "f32"))], nout=2, k=0, axis=1)
    for o, z in zip(g.node("sort", [e, ei], nout=2, axis=1, comparator=SORTN_PAYLOADS[1][0]),
                    (np.zeros((3, 0), np.float32), np.zeros((3, 0), np.int32))):
        g.output(o, z)
    return g


def ref_scan_init(x, init, axis, f, inclusive, reverse):
    """A scan from IREE's accumulator input, by a Python loop: every row starts
    from init; inclusive out[j] = f(... f(init, x[0]) ..., x[j]), exclusive
    out[0] = init, out[j] = f(out[j-1], x[j-1]); and the last value written."""
    xm = np.moveaxis(np.flip(x, axis) if reverse else x, axis, -1)
    y = np.empty_like(xm)
    last = np.empty(xm.shape[:-1], dtype=x.dtype)
    for pos in np.ndindex(*xm.shape[:-1]):
        acc = init[pos]
        for j in range(xm.shape[-1]):
            if inclusive:
                acc = f(acc, xm[pos + (j,)])
                y[pos + (j,)] = acc
            else:
                y[pos + (j,)] = acc
                acc = f(acc, xm[pos + (j,)])
        last[pos] = y[pos + (xm.shape[-1] - 1,)] if xm.shape[-1] else init[pos]
    y = np.moveaxis(y, -1, axis)
    return (np.flip(y, axis) if reverse else y), last


SCAN_NAMED = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "max": max, "min": min}


def g_scan_init(r):
    """IREE's scan accumulator input: the initial value of each row, for
    inclusive and exclusive scans, named and payload combiners."""
    g = Graph("scan_init")
    shapes = [((10,), 0), ((3, 7), 1), ((3, 7), 0), ((2, 3, 5), 1), ((1,), 0), ((5, 1), 1), ((13, 2), 0)]
    cases = [(t, c, SCAN_NAMED[c]) for t in ("f32", "i32") for c in ("add", "max")] + \
        [("i32", "mul", SCAN_NAMED["mul"])] + [(t, text, f) for t, text, f in SCAN_PAYLOADS]
    for shape, axis in shapes:
        for t, comb, f in cases:
            with np.errstate(over="ignore"):
                x = rng_array(r, shape, t, -3, 4) if comb != "mul" else rng_array(r, shape, t, -2, 3)
                init = rng_array(r, shape[:axis] + shape[axis + 1:], t, -5, 6)
                xi, ii = g.input(x), g.input(init)
                for inclusive, reverse in ((1, 0), (0, 0), (0, 1), (1, 1)):
                    y, acc = g.node("scan", [xi, ii], nout=2, axis=axis, combiner=comb, inclusive=inclusive,
                                    reverse=reverse)
                    ry, rlast = ref_scan_init(x, init, axis, f, inclusive, reverse)
                    g.output(y, ry, exact=False)
                    g.output(acc, rlast, exact=False)
    # one output, and an empty axis (the output accumulator is the initial value)
    x = rng_array(r, (4, 6), "f32", -3, 4)
    init = rng_array(r, (4,), "f32", -5, 6)
    y = g.node("scan", [g.input(x), g.input(init)], axis=1, combiner="std_subf(x, acc)", inclusive=0)
    g.output(y, ref_scan_init(x, init, 1, lambda a, b: b - a, 0, 0)[0], exact=False)
    e, _ = g.node("topk", [g.input(rng_array(r, (3, 4), "f32"))], nout=2, k=0, axis=1)  # (3, 0)
    ey, eacc = g.node("scan", [e, g.input(init[:3].copy())], nout=2, axis=1, combiner="std_maxf(acc, x)", inclusive=0)
    g.output(ey, np.zeros((3, 0), np.float32))
    g.output(eacc, init[:3])
    return g


def g_scan(r):
    g = Graph("scan")
    for shape, axis in [((10,), 0), ((3, 7), 1), ((3, 7), 0), ((2, 3, 5), 1), ((1,), 0), ((4, 1), 1)]:
        for t in ("f32", "i32", "f64"):
            for comb in ("add", "mul", "max", "min"):
                x = rng_array(r, shape, t, -3, 4) if comb != "mul" else rng_array(r, shape, t, -2, 3)
                for inclusive in (1, 0):
                    for reverse in (0, 1):
                        if (inclusive + reverse) % 2 and comb in ("max", "min") and t == "f64":
                            continue
                        y = g.node("scan", [g.input(x)], axis=axis, combiner=comb, inclusive=inclusive,
                                   reverse=reverse)
                        g.output(y, ref_scan(x, axis, comb, inclusive, reverse), exact=False)
    # IREE's accumulator output (a second output: the last value written per
    # row, x's shape without the axis), including rank-0 ones (g_empty: an empty axis)
    for shape, axis in [((10,), 0), ((3, 7), 1), ((3, 7), 0), ((2, 3, 5), 1), ((1,), 0), ((5, 1), 1)]:
        for t in ("f32", "i32"):
            for comb, inclusive, reverse in [("add", 1, 0), ("add", 0, 1), ("mul", 0, 0), ("max", 1, 1),
                                             ("min", 0, 0), ("max", 0, 1)]:
                x = rng_array(r, shape, t, -3, 4) if comb != "mul" else rng_array(r, shape, t, -2, 3)
                y, acc = g.node("scan", [g.input(x)], nout=2, axis=axis, combiner=comb, inclusive=inclusive,
                                reverse=reverse)
                ry = ref_scan(x, axis, comb, inclusive, reverse)
                g.output(y, ry, exact=False)
                g.output(acc, ref_scan_last(x, ry, axis, comb, reverse), exact=False)
    # payload combiners (inclusive), some with the accumulator output
    for shape, axis in [((10,), 0), ((3, 7), 1), ((3, 7), 0), ((2, 3, 5), 1), ((1,), 0), ((5, 1), 1)]:
        for t, text, f in SCAN_PAYLOADS:
            x = rng_array(r, shape, t, -3, 4)
            for reverse in (0, 1):
                ry = ref_scan_payload(x, axis, f, reverse)
                if reverse:
                    y, acc = g.node("scan", [g.input(x)], nout=2, axis=axis, combiner=text, reverse=1)
                    g.output(acc, ref_scan_last(x, ry, axis, "add", 1), exact=False)
                else:
                    y = g.node("scan", [g.input(x)], axis=axis, combiner=text)
                g.output(y, ry, exact=False)
    return g


def g_nan_zero(r):
    """NaN and signed zeros, as the man page and src/graph/ops.md state them:
    softplus never overflows; argmax/argmin never return a NaN's index (a row of only NaN: 0), topk
    ranks NaN below every number (NaN kept come last, by index: NumPy's
    stable argsort), sort puts NaN last either way, an inclusive scan's
    first element is x's own (a -0.0 stays -0.0). Each once went wrong
    with a NaN first (or among the first k), or a leading -0.0."""
    g = Graph("nan_zero")
    nan = np.nan
    x = np.array([[nan, 1, 2, 2, nan, -1], [3, nan, 3, -2, -2, 0], [nan, nan, nan, nan, nan, nan],
                  [-0.0, 0.0, nan, -5, 7, 7]], dtype=np.float32)
    xi = g.input(x)
    for is_min in (False, True):
        for last in (0, 1):
            y = g.node("argmin" if is_min else "argmax", [xi], axis=1, keepdims=0, select_last_index=last)
            want = []
            for row in x:
                v = np.where(np.isnan(row), np.inf if is_min else -np.inf, row)
                cand = np.flatnonzero(v == (v.min() if is_min else v.max())) if not np.all(np.isnan(row)) else [0]
                want.append(cand[-1] if last else cand[0])
            g.output(y, np.array(want, dtype=np.int64))
    xl = (r.standard_normal((3, 5000)) * 3).astype(np.float32)
    xl[0, :40] = nan  # NaN over the first k and the first 64-element block
    xl[1, ::7] = nan
    xl[2, :] = nan
    xl[2, 4000] = 1.0
    for xs, ks in ((x, (1, 3, 6)), (xl, (8, 100, 5000))):
        xsi = g.input(xs)
        for k in ks:
            for largest in (1, 0):
                v, i = g.node("topk", [xsi], nout=2, k=k, axis=1, largest=largest, index_type="i64")
                rv, ri = ref_topk(xs, k, 1, largest)
                g.output(v, rv)
                g.output(i, ri.astype(np.int64))
    xs = np.array([3, nan, 1, 2, nan, 0, -1, 5, 4, -0.0, 0.0, nan] * 3, dtype=np.float32)
    for xv in (xs, x):
        xvi = g.input(xv)
        for desc in (0, 1):
            y = g.node("sort", [xvi], axis=-1, descending=desc)
            g.output(y, -np.sort(-xv, axis=-1, kind="stable") if desc else np.sort(xv, axis=-1, kind="stable"),
                     exact="bits")
    # i64 bounds at INT64_MAX / INT64_MIN (a double 2^63 once cast to INT64_MIN)
    big = np.array([5, -7, 2**62, -2**62], dtype=np.int64)
    g.output(g.node("clip", [g.input(big)], min=0, max=9223372036854775807), np.clip(big, 0, None))
    g.output(g.node("clip", [g.input(big)], min=-9223372036854775808, max=3), np.clip(big, None, 3))
    # softplus at values where exp(x) overflows (f32 from 89, f16 from 11.1)
    s = np.array([88, 88.8, 89, 100, 1000, 1e30, -1000, 0, -20], dtype=np.float32)
    g.output(g.node("softplus", [g.input(s)]), np.logaddexp(0, s.astype(np.float64)).astype(np.float32), exact=False)
    z = np.array([[-0.0, 1, 2], [-0.0, -0.0, 4], [0.0, -0.0, 1]], dtype=np.float32)
    zi = g.input(z)
    for comb in ("add", "mul"):  # max and min of -0.0 and +0.0: either (NumPy's too)
        for reverse in (0, 1):
            y = g.node("scan", [zi], axis=1, combiner=comb, inclusive=1, reverse=reverse)
            g.output(y, ref_scan(z, 1, comb, 1, reverse), exact="bits")
    return g


def g_scatter(r):
    g = Graph("scatter")
    cases = [((8,), (4, 1), [0]), ((4, 5), (3, 1), [0]), ((4, 5), (3, 1), [1]), ((4, 5), (6, 2), [0, 1]),
             ((4, 5), (6, 2), [1, 0]), ((2, 3, 4), (2, 2, 2), [0, 2]), ((5, 1), (7, 1), [0])]
    for oshape, ishape, dmap in cases:
        for t in ("f32", "i32"):
            for comb in ("replace", "add", "mul", "max", "min"):
                orig = rng_array(r, oshape, t, -4, 5)
                m = ishape[-1]
                idx = np.zeros(ishape, dtype=np.int64)
                for j in range(m):
                    n = oshape[dmap[j]]
                    idx[..., j] = r.integers(-n, n, size=ishape[:-1])  # repeats: duplicates
                ushape = ishape[:-1] + tuple(oshape[d] for d in range(len(oshape)) if d not in dmap)
                upd = rng_array(r, ushape, t, -4, 5)
                it = "i32" if comb in ("add", "max") else "i64"
                y = g.node("scatter", [g.input(orig), g.input(idx.astype(NP_TYPES[it])), g.input(upd)],
                           dimension_map=dmap, combiner=comb)
                g.output(y, ref_scatter(orig, idx, upd, dmap, comb), exact=False)
    return g


def g_scatter_elements(r):
    g = Graph("scatter_elements")
    for oshape, ishape, axis in [((3, 4), (2, 4), 0), ((3, 4), (3, 6), 1), ((9,), (12,), 0), ((2, 3, 4), (2, 2, 5), 2),
                                 ((1, 1), (1, 1), 1)]:
        for comb in ("replace", "add", "mul", "max", "min"):
            orig = rng_array(r, oshape, "f32")
            n = oshape[axis]
            idx = r.integers(-n, n, size=ishape).astype(np.int64)
            upd = rng_array(r, ishape, "f32")
            y = g.node("scatter_elements", [g.input(orig), g.input(idx), g.input(upd)], axis=axis, combiner=comb)
            g.output(y, ref_scatter_elements(orig, idx, upd, axis, comb), exact=False)
    return g


def g_diag_reverse(r):
    g = Graph("diag_reverse")
    for n in (1, 2, 7):
        for t in ("f32", "i64"):
            x = rng_array(r, (n,), t)
            g.output(g.node("diag", [g.input(x)]), np.diag(x))
    for shape, dims in [((3, 5), [0]), ((3, 5), [1]), ((2, 3, 4), [0, 2]), ((1, 7), [-1])]:
        x = rng_array(r, shape, "f32")
        g.output(g.node("reverse", [g.input(x)], dims=dims), np.flip(x, tuple(dims)))
    return g


def g_empty(r):
    """Empty axes: lgen-graph/1 dims are at least 1, but a symbolic dim may be 0 at run time (N = 0 here), and
    topk with k = 0 makes an empty axis inside the graph."""
    g = Graph("empty")
    x = rng_array(r, (0, 5), "f32")
    xi = g.input(x, ["N", 5])
    g.output(g.node("sort", [xi], axis=0), np.sort(x, axis=0))
    g.output(g.node("sort", [xi], axis=1, descending=1), x.copy())
    g.output(g.node("scan", [xi], axis=0), x.copy())
    g.output(g.node("scan", [xi], axis=1, combiner="mul", inclusive=0), x.copy())
    v, i = g.node("topk", [xi], nout=2, k=2, axis=1)
    g.output(v, np.zeros((0, 2), np.float32))
    g.output(i, np.zeros((0, 2), np.int32))
    g.output(g.node("argmax", [xi], axis=1), np.zeros((0, 1), np.int64))
    g.output(g.node("reverse", [xi], dims=[0]), x.copy())
    ids = np.zeros((0,), np.int64)
    g.output(g.node("gather", [g.input(rng_array(r, (4, 3), "f32")), g.input(ids, ["N"])], axis=0),
             np.zeros((0, 3), np.float32))
    orig = rng_array(r, (4, 3), "f32")
    g.output(g.node("scatter", [g.input(orig), g.input(np.zeros((0, 1), np.int64), ["N", 1]),
                                g.input(np.zeros((0, 3), np.float32), ["N", 3])], combiner="add"), orig)
    y = rng_array(r, (3, 6), "f32")
    e, ei = g.node("topk", [g.input(y)], nout=2, k=0, axis=1)  # (3, 0)
    g.output(g.node("sort", [e], axis=1), np.zeros((3, 0), np.float32))
    g.output(g.node("scan", [e], axis=0, combiner="max"), np.zeros((3, 0), np.float32))
    ey, eacc = g.node("scan", [e], nout=2, axis=1, combiner="min", inclusive=0)  # accumulator: the identity
    g.output(ey, np.zeros((3, 0), np.float32))
    g.output(eacc, np.full((3,), np.inf, np.float32))
    g.output(g.node("gather", [g.input(rng_array(r, (5,), "f32")), ei], axis=0), np.zeros((3, 0), np.float32))
    one = rng_array(r, (1, 1), "f32")
    oi = g.input(one)
    g.output(g.node("argmin", [oi], axis=0, keepdims=0), np.zeros((1,), np.int64))
    ov, oix = g.node("topk", [oi], nout=2, k=1, axis=0, largest=0)
    g.output(ov, one)
    g.output(oix, np.zeros((1, 1), np.int32))
    return g


def ref_pack(x, pos, tiles, perm, pad):
    r = x.ndim
    tile_of = {d: t for d, t in zip(pos, tiles)}
    outer = [-(-x.shape[d] // tile_of[d]) if d in tile_of else x.shape[d] for d in range(r)]
    out = np.empty([outer[d] for d in perm] + list(tiles), dtype=x.dtype)
    for o in np.ndindex(*out.shape):
        src = [0] * r
        for j, d in enumerate(perm):
            src[d] = o[j]
        for k, d in enumerate(pos):
            src[d] = src[d] * tiles[k] + o[r + k]
        inside = all(src[d] < x.shape[d] for d in range(r))
        out[o] = x[tuple(src)] if inside else pad
    return out


def g_pack(r):
    """pack with partial tiles and padding, outer_dims_perm, and the round trip through unpack."""
    g = Graph("pack")
    for shape, pos, tiles, perm in [((5, 7), [1, 0], [4, 2], [1, 0]), ((8, 6), [0, 1], [4, 3], None),
                                    ((3, 10), [1], [3], [1, 0]), ((1, 1), [0], [1], None),
                                    ((2, 9, 4), [1], [4], [2, 0, 1]), ((6, 4), [1, 0], [4, 6], [0, 1]),
                                    ((13,), [0], [5], None)]:
        x = rng_array(r, shape, "f32")
        attrs = {"inner_dims_pos": pos, "inner_tiles": tiles, "padding_value": -7.5}
        if perm is not None:
            attrs["outer_dims_perm"] = perm
        xi = g.input(x)
        pk = g.node("pack", [xi], **attrs)
        g.output(pk, ref_pack(x, pos, tiles, perm or list(range(len(shape))), -7.5))
        un = {k: v for k, v in attrs.items() if k != "padding_value"}
        g.output(g.node("unpack", [pk], shape=list(shape), **un), x)
    # fusion: a producer into a pack (tiles divide), an unpack into its consumer
    a = rng_array(r, (8, 12), "f32")
    pk = g.node("pack", [g.node("relu", [g.input(a)])], inner_dims_pos=[0, 1], inner_tiles=[4, 4])
    g.output(g.node("neg", [g.node("unpack", [pk], inner_dims_pos=[0, 1], inner_tiles=[4, 4])]), -np.maximum(a, 0))
    return g


def ref_online_softmax(x, axis, scale=1.0, log=False, m0=None, s0=None, post=1.0):
    """ByteIR's softmax in float64: y, max, sum, rescale factor (all keepdims along axis)."""
    v = scale * x.astype(np.float64)
    shape = list(x.shape)
    shape[axis] = 1
    m0 = np.full(shape, -np.inf) if m0 is None else m0.astype(np.float64)
    s0 = np.zeros(shape) if s0 is None else s0.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        m = np.maximum(m0, np.max(v, axis=axis, keepdims=True, initial=-np.inf))
        carried = np.where(s0 == 0, 0.0, s0 * np.exp(m0 - m))
        s = carried + np.sum(np.exp(v - m), axis=axis, keepdims=True)
        y = (v - m - np.log(s) if log else np.exp(v - m) / s) * post
        c = np.where(s0 == 0, 0.0, carried / s)
    return [a.astype(x.dtype) for a in (y, m, s, c)]


def g_softmax(r):
    """online_softmax over contiguous rows (one block, several, 63), strided
    columns (panels of 16 lanes and a partial one), length-1 and empty axes,
    masked (-inf) and large entries, runs of -inf over whole blocks, log,
    scale, initial max and sum, f64;
    128 contiguous rows and more run in chunks (a row's second pass overlaps
    the next row's first): 131 x 37 (chunks of 2, the last of 1), 1000 x 5
    (chunks of 15, the last of 10), 130 x 1100 (three blocks a row)."""
    g = Graph("softmax")
    cases = [((7,), 0), ((1,), 0), ((3, 5, 7), 0), ((3, 5, 7), 1), ((3, 5, 7), 2), ((2, 1000), 1),
             ((1, 40000), 1), ((5, 300, 3), 1), ((2, 130, 17), 1), ((3, 0, 2), 1), ((4, 1), 1), ((97, 13), 0),
             ((131, 37), 1), ((1000, 5), 1), ((130, 1100), 1)]
    for shape, axis in cases:
        for t in ("f32", "f64"):
            x = (r.standard_normal(shape) * 6).astype(NP_TYPES[t])
            if x.size > 4:
                flat = x.reshape(-1)
                flat[r.integers(0, x.size, size=3)] = -np.inf  # masked entries, never a whole row
                flat[r.integers(0, x.size)] = 300  # exp would overflow without the max
            for log, scale, post in ((0, 1.0, 1.0), (1, 1.0, 1.0), (0, 0.125, 3.0), (1, -2.0, -0.5)):
                if t == "f64" and (log, scale) != (0, 0.125):
                    continue
                decl = ["N" if d == 0 else d for d in shape]  # an empty axis: a symbolic dim, 0 at run time
                outs = g.node("online_softmax", [g.input(x, decl)], nout=4, axis=axis, log=log, scale=scale,
                              out_scale=post)
                for o, ref in zip(outs, ref_online_softmax(x, axis, scale, log, post=post)):
                    g.output(o, ref, exact=False)
    # runs of -inf longer than a block (a padding or causal mask): leading,
    # trailing, in the middle, every other block, all but one element, and
    # a whole row (NaN, as NumPy); contiguous rows (blocks of 256 and more)
    # and strided columns (blocks of 64), softmax and log-softmax. Each
    # element's exp was once taken against a block max of -inf: NaN rows.
    x = (r.standard_normal((7, 3000)) * 4).astype(np.float32)
    x[0, :1700] = x[1, 1200:] = x[2, 500:2600] = -np.inf
    x[3, :] = -np.inf
    x[4, np.arange(3000) % 600 < 300] = -np.inf
    x[5, :] = -np.inf
    x[5, 2999] = 1.5
    xi = g.input(x)
    g.output(g.node("softmax", [xi], axis=1), np_softmax(x, 1), exact=False)
    g.output(g.node("log_softmax", [xi], axis=1), np_softmax(x, 1, True), exact=False)
    xt = np.ascontiguousarray(x.T[:, :5])  # [3000, 5]: columns 0..4 of the rows above
    xti = g.input(xt)
    g.output(g.node("softmax", [xti], axis=0), np_softmax(xt, 0), exact=False)
    g.output(g.node("log_softmax", [xti], axis=0), np_softmax(xt, 0, True), exact=False)
    # continuing from earlier statistics (ByteIR's max_init / sum_init)
    x = (r.standard_normal((6, 50)) * 3).astype(np.float32)
    m0 = (r.standard_normal((6, 1)) * 3).astype(np.float32)
    s0 = r.uniform(0.5, 4, size=(6, 1)).astype(np.float32)
    s0[2, 0] = 0
    outs = g.node("online_softmax", [g.input(x), g.input(m0), g.input(s0)], nout=4, axis=1)
    for o, ref in zip(outs, ref_online_softmax(x, 1, m0=m0, s0=s0)):
        g.output(o, ref, exact=False)
    return g


def np_softmax(x, axis, log=False):
    v = x.astype(np.float64)
    t = v - np.max(v, axis=axis, keepdims=True)
    s = np.sum(np.exp(t), axis=axis, keepdims=True)
    return (t - np.log(s) if log else np.exp(t) / s).astype(x.dtype)


def g_softmax_pattern(r):
    """softmax from primitives (lgen's softmax/log_softmax and hand-written
    chains), with a constant scaling before and elementwise ops after; with
    fusion on these run as online_softmax, with --fuse=none as primitives."""
    g = Graph("softmax_pattern")
    for shape, axis in [((4, 9), 1), ((4, 9), 0), ((2, 3, 130), -1), ((1,), 0), ((5, 1), 1), ((3, 600), 1)]:
        x = (r.standard_normal(shape) * 4).astype(np.float32)
        xi = g.input(x)
        g.output(g.node("softmax", [xi], axis=axis), np_softmax(x, axis), exact=False)
        g.output(g.node("log_softmax", [xi], axis=axis), np_softmax(x, axis, True), exact=False)
        ax = axis % x.ndim
        c = np.array(0.5, dtype=np.float32)
        scaled = g.node("div", [xi, g.input(c)])
        mx = g.node("reduce_max", [scaled], axes=[ax], keepdims=1)
        e = g.node("exp", [g.node("sub", [scaled, mx])])
        sm = g.node("div", [e, g.node("reduce_sum", [e], axes=[ax], keepdims=1)])
        g.output(g.node("mul", [sm, sm]), (np_softmax(x / 0.5, axis).astype(np.float64) ** 2).astype(np.float32),
                 exact=False)
    # a constant scaling after it, its result's only use (a graph output is a use)
    x = (r.standard_normal((5, 33)) * 4).astype(np.float32)
    xi = g.input(x)
    four = g.const(np.array([4.0], dtype=np.float32))
    g.output(g.node("div", [g.node("softmax", [xi], axis=1), four]), np_softmax(x, 1) / np.float32(4), exact=False)
    g.output(g.node("mul", [four, g.node("log_softmax", [xi], axis=0)]), np_softmax(x, 0, True) * 4, exact=False)
    kept = g.node("softmax", [xi], axis=0)
    g.output(kept, np_softmax(x, 0), exact=False)
    g.output(g.node("mul", [kept, four]), np_softmax(x, 0) * 4, exact=False)
    x = (r.standard_normal((3, 8)) * 4).astype(np.float32)
    xi = g.input(x)
    mx = g.node("reduce_max", [xi], axes=[1], keepdims=1)
    t = g.node("sub", [xi, mx])
    e = g.node("exp", [t])
    s = g.node("reduce_sum", [e], axes=[1], keepdims=1)
    g.output(g.node("div", [e, s]), np_softmax(x, 1), exact=False)
    g.output(s, np.sum(np.exp(x.astype(np.float64) - x.max(1, keepdims=True)), 1, keepdims=True).astype(np.float32),
             exact=False)
    return g


def g_softmax_rows(r):
    """a softmax and the op after it, larger than L2: with fusion on, the op
    runs inside the softmax's loop over chunks of rows (schedule/rows.c):
    elementwise with a full-shape and a broadcast operand, rows of two dims
    (3 x 67) and 1031 rows (prime), one reading x as well, a row reduction,
    log-softmax; a transpose after it (not row-local) stays apart; the op
    before it on its rows too. Over 256 rows, the intermediates that only
    the group touches live in per-thread chunk buffers (16 slots): run at
    20 threads too, where the region must cap itself at 16."""
    g = Graph("softmax_rows")
    g.thread_counts = (1, 2, 20)
    x = (r.standard_normal((1031, 1000)) * 4).astype(np.float32)
    m = r.uniform(0, 2, size=x.shape).astype(np.float32)
    b = r.standard_normal(1000).astype(np.float32)
    xi, mi, bi = g.input(x), g.input(m), g.input(b)
    sm = np_softmax(x, 1).astype(np.float64)
    g.output(g.node("add", [g.node("mul", [g.node("softmax", [xi], axis=1), mi]), bi]),
             (sm * m + b).astype(np.float32), exact=False)
    g.output(g.node("reduce_sum", [g.node("mul", [g.node("softmax", [xi], axis=1), mi])], axes=[1], keepdims=1),
             np.sum(sm * m, axis=1, keepdims=True).astype(np.float32), exact=False)
    g.output(g.node("add", [g.node("log_softmax", [xi], axis=1), bi]),
             (np_softmax(x, 1, True).astype(np.float64) + b).astype(np.float32), exact=False)
    g.output(g.node("transpose", [g.node("softmax", [xi], axis=1)], perm=[1, 0]), np_softmax(x, 1).T, exact=False)
    x3 = (r.standard_normal((3, 67, 2053)) * 4).astype(np.float32)
    x3i = g.input(x3)
    g.output(g.node("mul", [g.node("softmax", [x3i], axis=2), x3i]),
             (np_softmax(x3, 2).astype(np.float64) * x3).astype(np.float32), exact=False)
    # the op before it too: softmax(x * m + b) (then a bias after it), and
    # t = x * m read by the softmax and by the op after it, which then stays
    # apart (t is written chunk by chunk)
    xm = x.astype(np.float64) * m
    s1 = np_softmax(xm + b, 1).astype(np.float64)
    g.output(g.node("softmax", [g.node("add", [g.node("mul", [xi, mi]), bi])], axis=1), s1.astype(np.float32),
             exact=False)
    g.output(g.node("add", [g.node("softmax", [g.node("add", [g.node("mul", [xi, mi]), bi])], axis=1), bi]),
             (s1 + b).astype(np.float32), exact=False)
    t = g.node("mul", [xi, mi])
    g.output(g.node("mul", [g.node("softmax", [t], axis=1), t]), (np_softmax(xm, 1) * xm).astype(np.float32),
             exact=False)
    return g


class GraphF16(Graph):
    """f16 outputs within 2 ulps of the float64 reference rounded to f16
    (one ulp: 2^(e - 10) for a value in [2^e, 2^(e + 1)); 2^-24 below
    f16's normal range); 8 ulps under --fuse=none (see compare)."""

    atol_of_max = 0.0  # also accept |error| <= this * max |reference| of the output

    def compare(self, d):
        # --fuse=none runs a softmax as f16 primitives, which round x - max,
        # each exp and log(sum) to f16 (measured: 5 ulps, and a log-softmax
        # near 0 cancels): there, as ONNX compares its expanded f16 cases,
        # also 4 ulps of the output's largest magnitude
        primitives = "fuse-none" in d
        ulps = 8 if primitives else 2
        for i, ref in enumerate(self.refs):
            got = np.fromfile(os.path.join(d, "out_%d.bin" % i), dtype=np.float16)
            if got.size != ref.size:
                return "output %d: %d elements, want %d" % (i, got.size, ref.size)
            g64, r64 = got.reshape(ref.shape).astype(np.float64), ref.astype(np.float64)
            with np.errstate(divide="ignore"):
                ulp = np.maximum(2.0 ** -24, 2.0 ** (np.floor(np.log2(np.abs(r64))) - 10))
            big = float(np.max(np.abs(r64))) if r64.size else 0.0
            atol = self.atol_of_max * big
            if primitives and big > 0:
                atol = max(atol, 4 * 2.0 ** (np.floor(np.log2(big)) - 10))
            close = (np.abs(g64 - r64) <= np.maximum(ulps * ulp, atol)) | (g64 == r64)
            if not np.all(close):
                bad = np.argwhere(~close)[:3].tolist()
                return "output %s (node %s): differs from NumPy at %s; got %s, want %s" % (
                    i, self.outputs[i], bad, [g64[tuple(b)] for b in bad], [r64[tuple(b)] for b in bad])
        return None


def g_softmax_f16(r):
    """f16 softmax and log-softmax from primitives: with fusion on they run
    in f32 between two casts (both row-fused), with --fuse=none as f16
    primitives (whose sum accumulates in f32); either way within 2 f16 ulps
    of NumPy's float64 result rounded to f16: contiguous and strided axes, 130 rows (chunked), a
    length-1 axis, a scaling folded in."""
    g = GraphF16("softmax_f16")
    for shape, axis in [((4, 9), 1), ((3, 5, 7), 1), ((130, 300), 1), ((6, 1), 1), ((2, 1000), -1)]:
        x = (r.standard_normal(shape) * 2).astype(np.float16)
        xi = g.input(x)
        g.output(g.node("softmax", [xi], axis=axis), np_softmax(x.astype(np.float64), axis).astype(np.float16))
        g.output(g.node("log_softmax", [xi], axis=axis),
                 np_softmax(x.astype(np.float64), axis, True).astype(np.float16))
    # over 256 rows: the f32 copies of x and y live in per-thread chunk buffers
    x = (r.standard_normal((523, 1100)) * 2).astype(np.float16)
    g.output(g.node("softmax", [g.input(x)], axis=1), np_softmax(x.astype(np.float64), 1).astype(np.float16))
    # a constant scaling in f16 rounds x * c to f16 before the softmax (it
    # is not folded into the softmax's scale, computed in f32): logits of
    # 30 to 50, where that rounding moves an exp by percents
    x = (r.uniform(10, 17, size=(8, 64))).astype(np.float16)
    t = (x.astype(np.float64) * 3).astype(np.float16)
    g.output(g.node("softmax", [g.node("mul", [g.input(x), g.const(np.array([3], dtype=np.float16))])], axis=1),
             np_softmax(t.astype(np.float64), 1).astype(np.float16))
    x = (r.standard_normal((5, 40)) * 2).astype(np.float16)
    half = g.const(np.array([0.5], dtype=np.float16))
    g.output(g.node("softmax", [g.node("mul", [g.input(x), half])], axis=1),
             np_softmax(x.astype(np.float64) * 0.5, 1).astype(np.float16))
    return g


class GraphF16Sums(GraphF16):
    """Sums of f16 values accumulated in f32: within 2 ulps of the float64
    result rounded to f16, or 2^-10 of the output's largest magnitude (one
    f16 ulp of it: f32 rounding over a thousand terms, where a result
    cancels to near 0); accumulated in f16 they were off by percents."""
    atol_of_max = 2.0 ** -10


def g_f16_sums(r):
    """f16 contractions and reductions over long axes: matmul (K = 1000,
    also with a constant operand), batch_matmul, reduce_sum and reduce_mean
    over 1000 and 2053 values, reduce_prod, a conv; max stays f16."""
    g = GraphF16Sums("f16_sums")

    def h(*shape):
        return r.standard_normal(shape).astype(np.float16)

    def f64(a):
        return a.astype(np.float64)

    a, b, w = h(37, 1000), h(1000, 33), h(1000, 5)
    ai = g.input(a)
    g.output(g.node("matmul", [ai, g.input(b)]), (f64(a) @ f64(b)).astype(np.float16))
    g.output(g.node("matmul", [ai, g.const(w)]), (f64(a) @ f64(w)).astype(np.float16))
    p, q = h(3, 5, 700), h(3, 700, 6)
    g.output(g.node("batch_matmul", [g.input(p), g.input(q)]), np.matmul(f64(p), f64(q)).astype(np.float16))
    x = (r.uniform(0.5, 1.5, size=(7, 1000))).astype(np.float16)
    xi = g.input(x)
    g.output(g.node("reduce_sum", [xi], axes=[1], keepdims=1), f64(x).sum(1, keepdims=True).astype(np.float16))
    g.output(g.node("reduce_mean", [xi], axes=[1], keepdims=1), f64(x).mean(1, keepdims=True).astype(np.float16))
    g.output(g.node("reduce_max", [xi], axes=[1], keepdims=1), x.max(1, keepdims=True))
    z = h(2053, 3)
    g.output(g.node("reduce_sum", [g.input(z)], axes=[0], keepdims=0), f64(z).sum(0).astype(np.float16))
    u = r.uniform(0.9, 1.1, size=(4, 60)).astype(np.float16)
    g.output(g.node("reduce_prod", [g.input(u)], axes=[1], keepdims=1), f64(u).prod(1, keepdims=True).astype(np.float16))
    img, ker = h(1, 9, 8, 40), h(3, 3, 40, 7)
    ref = np.zeros((1, 7, 6, 7))
    for i in range(7):
        for j in range(6):
            ref[0, i, j] = np.einsum("hwc,hwcf->f", f64(img[0, i:i + 3, j:j + 3]), f64(ker))
    g.output(g.node("conv_2d_nhwc_hwcf", [g.input(img), g.input(ker)]), ref.astype(np.float16))
    # sum and average pooling over 64 x 64 windows (4096 values; in f16 the
    # averages were 0.9 % off)
    v = r.uniform(0.5, 1.5, size=(1, 64, 64, 3)).astype(np.float16)
    vi = g.input(v)
    for op, f in (("pooling_nhwc_sum", np.sum), ("pooling_nhwc_avg", np.mean)):
        g.output(g.node(op, [vi], window=[64, 64], strides=[1, 1], dilations=[1, 1]),
                 f(f64(v), axis=(1, 2), keepdims=True).astype(np.float16))
    vt = np.ascontiguousarray(v.transpose(0, 3, 1, 2))
    g.output(g.node("pooling_nchw_avg", [g.input(vt)], window=[64, 64], strides=[1, 1], dilations=[1, 1]),
             np.mean(f64(vt), axis=(2, 3), keepdims=True).astype(np.float16))
    return g


def ref_maxpool_index(x, k, st, dl, pad, colmajor):
    """ONNX MaxPool's Indices by loops: the first maximum in window order."""
    n, c, h, w = x.shape
    oh = (h + pad[0] + pad[1] - (k[0] - 1) * dl[0] - 1) // st[0] + 1
    ow = (w + pad[2] + pad[3] - (k[1] - 1) * dl[1] - 1) // st[1] + 1
    out = np.full((n, c, oh, ow), -1, dtype=np.int64)
    for a in range(n):
        for b in range(c):
            for i in range(oh):
                for j in range(ow):
                    best = None
                    for u in range(k[0]):
                        rr = i * st[0] - pad[0] + u * dl[0]
                        for v in range(k[1]):
                            cc = j * st[1] - pad[2] + v * dl[1]
                            if 0 <= rr < h and 0 <= cc < w and (best is None or x[a, b, rr, cc] > best):
                                best = x[a, b, rr, cc]
                                out[a, b, i, j] = ((a * c + b) * w + cc) * h + rr if colmajor else \
                                    ((a * c + b) * h + rr) * w + cc
    return out


def g_maxpool_index(r):
    """max_pool_index (ONNX MaxPool's Indices) beside its pool: ties (small
    integers), padding, strides, dilations, storage_order 1, a 1-D pool."""
    g = Graph("maxpool_index")
    for shape, k, st, dl, pad, colmajor in [((1, 1, 4, 4), (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), 0),
                                            ((2, 3, 7, 5), (3, 2), (1, 2), (1, 1), (1, 1, 0, 1), 0),
                                            ((1, 2, 9, 9), (3, 3), (2, 2), (2, 1), (2, 2, 1, 1), 1),
                                            ((1, 1, 1, 13), (1, 4), (1, 3), (1, 1), (0, 0, 2, 2), 0)]:
        for t in ("f32", "i32"):
            x = rng_array(r, shape, t, -3, 3)
            attrs = dict(window=list(k), strides=list(st), dilations=list(dl),
                         padding=[[pad[0], pad[1]], [pad[2], pad[3]]])
            xi = g.input(x)
            y = g.node("pooling_nchw_max", [xi], **attrs)
            g.output(g.node("max_pool_index", [xi, y], storage_order=colmajor, **attrs),
                     ref_maxpool_index(x, k, st, dl, pad, colmajor))
    x = rng_array(r, (2, 3, 11), "f32", -3, 3)  # 1-D: [N, C, W]
    xi = g.input(x)
    attrs = dict(window=[3], strides=[2], dilations=[1], padding=[[1, 1]])
    y = g.node("pooling_nchw_max", [xi], **attrs)
    ref = ref_maxpool_index(x[:, :, None, :], (1, 3), (1, 2), (1, 1), (0, 0, 1, 1), 0)[:, :, 0, :]
    g.output(g.node("max_pool_index", [xi, y], **attrs), ref)
    return g


def g_mixed(r):
    """gather -> matmul -> relu -> topk; cumsum of a transposed product; scatter into a sum; sort of a gather."""
    g = Graph("mixed")
    table = rng_array(r, (11, 6), "f32")
    ids = r.integers(-11, 11, size=(5,)).astype(np.int64)
    w = rng_array(r, (6, 9), "f32")
    emb = g.node("gather", [g.input(table), g.input(ids)], axis=0)
    h = g.node("relu", [g.node("matmul", [emb, g.input(w)])])
    v, i = g.node("topk", [h], nout=2, k=3, axis=1)
    href = np.maximum(np.take(table, ids, axis=0) @ w, 0)
    rv, ri = ref_topk(href, 3, 1, True)
    g.output(v, rv, exact=False)
    g.output(i, ri.astype(np.int32))
    a = rng_array(r, (4, 7), "f32")
    b = rng_array(r, (4, 7), "f32")
    s = g.node("scan", [g.node("transpose", [g.node("add", [g.input(a), g.input(b)])], perm=[1, 0])], axis=1)
    g.output(g.node("mul", [s, s]), np.cumsum((a + b).T, axis=1) ** 2, exact=False)
    orig = rng_array(r, (6, 3), "f32")
    idx = np.array([[1], [4], [1], [-1]], dtype=np.int64)
    upd = rng_array(r, (4, 3), "f32")
    sc = g.node("scatter", [g.node("exp", [g.input(orig)]), g.input(idx), g.node("neg", [g.input(upd)])],
                combiner="add")
    g.output(g.node("relu", [sc]), np.maximum(ref_scatter(np.exp(orig), idx, -upd, [0], "add"), 0), exact=False)
    x = rng_array(r, (3, 8), "f32")
    gi = np.array([[2, 0, 2, 1]], dtype=np.int32)
    ge = g.node("gather", [g.input(x), g.input(gi)], axis=0)
    srt = g.node("sort", [g.node("mul", [ge, ge])], axis=-1, descending=1)
    gref = np.take(x, gi.astype(np.int64), axis=0) ** 2
    g.output(g.node("sub", [srt, srt]), np.zeros_like(gref))
    g.output(srt, -np.sort(-gref, axis=-1))
    am = g.node("argmax", [g.node("neg", [srt])], axis=2, keepdims=0)
    g.output(am, np.argmax(np.sort(-gref, axis=-1), axis=2))
    return g


GROUPS = [g_gather, g_gather_elements, g_gather_nd, g_arg, g_topk, g_sort, g_scan, g_scatter, g_scatter_elements,
          g_diag_reverse, g_empty, g_pack, g_mixed, g_softmax, g_softmax_pattern, g_softmax_rows,
          g_softmax_f16, g_f16_sums, g_maxpool_index, g_nan_zero, g_sort_multi, g_scan_init]


# ---------------------------------------------------------------------------
# Generate, compile, run, compare

def harness(g, hname):
    """A C main: reads in_i.bin, calls NAME(inputs..., outputs...), writes out_i.bin."""
    lines = ["#include <stdio.h>", "#include <stdlib.h>", "#include <stdint.h>", '#include "%s"' % hname, "",
             "static void *load(const char *path, size_t n)", "{",
             "  void *p = malloc(n ? n : 1);", "  FILE *f = fopen(path, \"rb\");",
             "  if (!p || !f || fread(p, 1, n, f) != n) { fprintf(stderr, \"cannot read %s\\n\", path); exit(2); }",
             "  fclose(f);", "  return p;", "}", "",
             "static void save(const char *path, const void *p, size_t n)", "{",
             "  FILE *f = fopen(path, \"wb\");",
             "  if (!f || fwrite(p, 1, n, f) != n || fclose(f)) { fprintf(stderr, \"cannot write %s\\n\", path); exit(2); }",
             "}", "", "int main(void)", "{"]
    args = []
    for i, a in enumerate(g.arrays):
        ct = C_TYPES[tname(a)]
        lines.append("  %s *in%d = load(\"in_%d.bin\", %d);" % (ct, i, i, a.nbytes))
        args.append("in%d" % i)
    for i, ref in enumerate(g.refs):
        ct = C_TYPES[tname(ref)]
        lines.append("  %s *out%d = malloc(%d);" % (ct, i, max(ref.nbytes, 1)))
        args.append("out%d" % i)
    args += ["%d" % v for _, v in g.syms]
    lines.append("  if (%s(%s) != 0) return 3;" % (g.name, ", ".join(args)))
    for i, ref in enumerate(g.refs):
        lines.append("  save(\"out_%d.bin\", out%d, %d);" % (i, i, ref.nbytes))
    for i in range(len(g.arrays)):
        lines.append("  free(in%d);" % i)
    for i in range(len(g.refs)):
        lines.append("  free(out%d);" % i)
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def run(cmd, cwd, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=300)
        return p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return -1, "timed out"


def rows_schedule(opts, graph, d, decision):
    """lgen's --print-schedule of graph with each template's loop over rows
    given `decision`, written to d/rows.yaml: the lgen arguments that read
    it, or a message when there is no such template or lgen fails."""
    rc, out = run([opts.lgen, graph, "--print-schedule"], d)
    if rc != 0:
        return "lgen --print-schedule exit %d: %s" % (rc, out.strip()[:300])
    lines, n = out.split("\n"), 0
    for i in range(1, len(lines)):
        if "its loop over rows" in lines[i - 1] and lines[i] == "    parallel: [rows]":
            lines[i] = "    " + decision
            n += 1
    if n == 0:
        return "--print-schedule shows no template with a loop over rows"
    with open(os.path.join(d, "rows.yaml"), "w") as f:
        f.write("\n".join(lines))
    return ["--schedule=rows.yaml"]


def test_group(g, opts, work):
    results = []
    base = os.path.join(work, g.name)
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, g.name + ".json"), "w") as f:
        json.dump(g.doc(), f, indent=1)
    for i, a in enumerate(g.arrays):
        a.tofile(os.path.join(base, "in_%d.bin" % i))
    for vname, vargs in g.variants(base):
        d = os.path.join(base, vname)
        os.makedirs(d, exist_ok=True)
        if vargs and vargs[0].startswith(ROWS_SCHEDULE):
            vargs = rows_schedule(opts, os.path.join(base, g.name + ".json"), d, vargs[0][len(ROWS_SCHEDULE):])
            if isinstance(vargs, str):
                results.append((False, "%s %s: %s" % (g.name, vname, vargs)))
                continue
        rc, out = run([opts.lgen, os.path.join(base, g.name + ".json"), "-o", "g.c", "-H", "g.h"] + vargs, d)
        if rc != 0:
            results.append((False, "%s %s: lgen exit %d: %s" % (g.name, vname, rc, out.strip()[:300])))
            continue
        with open(os.path.join(d, "main.c"), "w") as f:
            f.write(harness(g, "g.h"))
        for i in range(len(g.arrays)):
            dst = os.path.join(d, "in_%d.bin" % i)
            if not os.path.exists(dst):
                os.symlink(os.path.join(base, "in_%d.bin" % i), dst)
        for omp in (True,) if vname.startswith("rows-") else (False, True):
            tag = "%s %s%s" % (g.name, vname, " -fopenmp" if omp else "")
            cmd = [opts.cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1"] + \
                (["-fopenmp"] if omp else []) + ["-o", "prog", "g.c", "main.c", "-lm"]
            rc, out = run(cmd, d)
            if rc != 0:
                results.append((False, "%s: %s failed:\n%s" % (tag, opts.cc, out.strip()[:1500])))
                continue
            for threads in (g.thread_counts if omp else (1,)):
                env = dict(os.environ, OMP_NUM_THREADS=str(threads))
                rc, out = run(["./prog"], d, env)
                what = "%s threads=%d" % (tag, threads)
                if rc != 0:
                    results.append((False, "%s: exit %d: %s" % (what, rc, out.strip()[:300])))
                    continue
                err = g.compare(d)
                results.append((err is None, "%s%s" % (what, ": " + err if err else "")))
    return results


def main_for(groups, prefix, seed, add_args=None, extra=None):
    """The runners' main: options, every group (all three lgen variants, with
    and without OpenMP, 1 and 2 threads), then extra(opts, work) -> results;
    prints PASS/FAIL lines and the totals; the exit status."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--lgen", required=True)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--work")
    ap.add_argument("--only", default="", help="groups whose name contains one of these (comma-separated)")
    if add_args:
        add_args(ap)
    opts = ap.parse_args()
    work = opts.work or tempfile.mkdtemp(prefix=prefix)
    r = np.random.default_rng(seed)
    counts = [0, 0]

    def report(results):
        for ok, msg in results:
            print("%s: %s" % ("PASS" if ok else "FAIL", msg))
            counts[0 if ok else 1] += 1
        sys.stdout.flush()

    only = [o for o in opts.only.split(",") if o]
    for make in groups:
        g = make(r)
        if only and not any(o in g.name for o in only):
            continue
        report(test_group(g, opts, work))
        print("# %s: %d nodes, %d outputs" % (g.name, len(g.nodes), len(g.outputs)))
    if extra:
        report(extra(opts, work))
    print("%d passed, %d failed" % tuple(counts))
    return 1 if counts[1] else 0


def main():
    return main_for(GROUPS, "lgen-ext-", 8)


if __name__ == "__main__":
    sys.exit(main())
