#!/usr/bin/python3
"""--abi=view against NumPy and the dense ABI (tests/abi-view.test).

tests/abi-view/views.tc's defs are generated three ways: --abi=view under
--schedule=none and under auto (compiled with -fopenmp, run at 2 threads),
and the dense ABI under none. Each def runs on NumPy views of several
shapes (tiny, odd, prime): dense, dense at an offset (a block of rows of a
bigger array), a block of a bigger array (innermost stride 1: the
scheduled nest over strides), transposed, sliced with steps, reversed (negative strides)
and, for inputs, broadcast (stride 0). A view maps onto lgen's descriptor
as it is: data is the start of the array the view is into, offset and
strides are NumPy's, in elements. The oracle is NumPy in float64 (exact
for i32). Tolerance for float results: |got - want| <= 1e-5 * (1 + |want|),
against NumPy and against the dense ABI. Elements of an output's array
outside its view must be untouched.
"""
import argparse
import ctypes
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CTYPE = {np.float32: ctypes.c_float, np.float64: ctypes.c_double, np.int32: ctypes.c_int32}
RTOL = 1e-5

_memref_types = {}


def memref_type(dtype, rank):
    key = (dtype, rank)
    if key not in _memref_types:
        ptr = ctypes.POINTER(CTYPE[dtype])
        fields = [("base", ptr), ("data", ptr), ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        _memref_types[key] = type("memref_%s_%d" % (np.dtype(dtype).name, rank), (ctypes.Structure,),
                                  {"_fields_": fields})
    return _memref_types[key]


def descriptor(view, buf):
    """lgen's descriptor of `view`, a view into the contiguous 1-D array buf."""
    item = view.itemsize
    t = memref_type(view.dtype.type, view.ndim)
    d = t()
    start = buf.ctypes.data_as(ctypes.POINTER(CTYPE[view.dtype.type]))
    d.base = start
    d.data = start
    delta = view.__array_interface__["data"][0] - buf.ctypes.data
    assert delta % item == 0
    d.offset = delta // item
    for i in range(view.ndim):
        d.sizes[i] = view.shape[i]
        assert view.strides[i] % item == 0
        d.strides[i] = view.strides[i] // item
    return d


def make_view(rng, shape, kind, dtype, is_output):
    """(view, buf): a view of `shape` of the given kind into buf, filled
    with random values (the output's whole buffer too: a sentinel)."""
    shape = tuple(shape)
    rank = len(shape)

    def filled(n):
        if dtype == np.int32:
            return rng.integers(-1000, 1000, size=n).astype(dtype)
        return rng.uniform(-1, 1, size=n).astype(dtype)

    if kind == "dense" or rank == 0:
        buf = filled(int(np.prod(shape)) if rank else 1)
        return buf.reshape(shape), buf
    if kind == "offset":  # rows 2.. of a taller dense array: dense strides, offset > 0
        big = (shape[0] + 3,) + shape[1:]
        buf = filled(int(np.prod(big)))
        return buf.reshape(big)[2:2 + shape[0]], buf
    if kind == "block":  # a block inside a bigger array: innermost stride 1, outer strides larger
        big = tuple(s + 3 + 2 * i for i, s in enumerate(shape))
        buf = filled(int(np.prod(big)))
        return buf.reshape(big)[tuple(slice(1 + i, 1 + i + s) for i, s in enumerate(shape))], buf
    if kind == "transposed":
        buf = filled(int(np.prod(shape)))
        return buf.reshape(shape[::-1]).transpose(), buf
    if kind == "sliced":  # every other element of a wider array, from 1
        big = tuple(2 * s + 3 for s in shape)
        buf = filled(int(np.prod(big)))
        return buf.reshape(big)[tuple(slice(1, 1 + 2 * s, 2) for s in shape)], buf
    if kind == "reversed":
        buf = filled(int(np.prod(shape)))
        return buf.reshape(shape)[(slice(None, None, -1),) * rank], buf
    if kind == "flipped":  # the first dim reversed: a negative outer stride, innermost stride 1
        buf = filled(int(np.prod(shape)))
        return buf.reshape(shape)[::-1], buf
    if kind == "broadcast":  # the first dim (or the only one) has stride 0
        assert not is_output
        small = (1,) + shape[1:]
        buf = filled(int(np.prod(small)))
        return np.broadcast_to(buf.reshape(small), shape), buf
    raise ValueError(kind)


# Each case: def, element type, the C size and attribute arguments, the
# tensors' shapes (inputs then output), NumPy's answer from the inputs and
# the output's initial value.
def cases():
    for (m, k, n) in [(1, 1, 1), (2, 3, 5), (7, 13, 11), (17, 1, 3), (31, 37, 29)]:
        yield ("matmul", np.float32, [m, k, n], [], [(m, k), (k, n), (m, n)],
               lambda a, b, c: c + a.astype(np.float64) @ b)
    for (m, n) in [(1, 1), (3, 5), (13, 7), (64, 33)]:
        yield ("addb", np.float32, [m, n], [], [(m, n), (n,), (m, n)], lambda x, y, z: x.astype(np.float64) + y)
    for (ow, kw, s) in [(1, 1, 1), (5, 3, 2), (23, 7, 1), (11, 4, 3)]:
        iw = (ow - 1) * s + kw
        yield ("conv1d", np.float32, [iw, kw, ow], [s], [(iw,), (kw,), (ow,)],
               lambda i, w, o, s=s, ow=ow, kw=kw: o + np.array(
                   [np.dot(i[q * s:q * s + kw].astype(np.float64), w) for q in range(ow)]))
    for m in [1, 2, 19, 101]:
        yield ("dot", np.float64, [m], [], [(m,), (m,), ()], lambda a, b, c: c + np.dot(a, b))
    for (m, n) in [(1, 1), (2, 7), (13, 5)]:
        yield ("transpose_i32", np.int32, [m, n], [], [(m, n), (n, m)], lambda x, y: x.T.copy())
    for (b, m, k, n) in [(1, 1, 1, 1), (3, 5, 2, 7), (2, 11, 13, 3)]:
        yield ("bmm", np.float32, [b, m, k, n], [], [(b, m, k), (b, k, n), (b, m, n)],
               lambda a, x, c: c + np.matmul(a.astype(np.float64), x))


# (input kinds, output kind): every kind on the inputs and on the output
COMBOS = [("dense", "dense"), ("offset", "offset"), ("block", "block"), ("block", "dense"), ("dense", "block"),
          ("flipped", "flipped"),
          ("transposed", "block"), ("transposed", "dense"), ("dense", "transposed"),
          ("sliced", "sliced"), ("reversed", "reversed"), ("broadcast", "dense"), ("broadcast", "sliced"),
          ("transposed", "reversed")]


def build(lgen, work, name, flags, openmp):
    c = os.path.join(work, name + ".c")
    so = os.path.join(work, name + ".so")
    subprocess.run([lgen] + flags + [os.path.join(HERE, "views.tc"), "-o", c], check=True)
    subprocess.run(["gcc", "-std=c99", "-O2", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror"] +
                   (["-fopenmp"] if openmp else []) + [c, "-o", so, "-lm"], check=True)
    return ctypes.CDLL(so)


def close(got, want, dtype):
    if dtype == np.int32:
        return np.array_equal(got, want)
    return bool(np.all(np.abs(got.astype(np.float64) - want) <= RTOL * (1 + np.abs(want))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lgen", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    libs = {
        "view-none": build(args.lgen, args.work, "view_none", ["--abi=view", "--schedule=none"], False),
        "view-auto": build(args.lgen, args.work, "view_auto", ["--abi=view", "--schedule=auto"], True),
        "view-checks": build(args.lgen, args.work, "view_checks", ["--abi=view", "--checks"], False),
    }
    dense = build(args.lgen, args.work, "dense_none", ["--schedule=none"], False)
    rng = np.random.default_rng(18)
    npass = nfail = 0
    for (name, dtype, sizes, attrs, shapes, oracle) in cases():
        for (kin, kout) in COMBOS:
            inputs = [make_view(rng, s, kin if s else "dense", dtype, False) for s in shapes[:-1]]
            base_out = make_view(rng, shapes[-1], kout if shapes[-1] else "dense", dtype, True)
            want = oracle(*[np.array(v) for v, _ in inputs], np.array(base_out[0]))
            # the dense ABI on contiguous copies
            dense_args = [np.ascontiguousarray(v) for v, _ in inputs] + [np.ascontiguousarray(base_out[0]).copy()]
            cargs = [a.ctypes.data_as(ctypes.c_void_p) for a in dense_args]
            cargs += [ctypes.c_int64(s) for s in sizes] + [(ctypes.c_int64 * 1)(a) for a in attrs]
            getattr(dense, name)(*cargs)
            dense_out = dense_args[-1]
            for label, lib in libs.items():
                # the output: the same view, into a fresh copy of its buffer
                out_buf = base_out[1].copy()
                delta = (base_out[0].__array_interface__["data"][0] - base_out[1].ctypes.data) // out_buf.itemsize
                out_view = np.lib.stride_tricks.as_strided(out_buf[delta:], shape=base_out[0].shape,
                                                           strides=base_out[0].strides)
                descs = [descriptor(v, b) for v, b in inputs] + [descriptor(out_view, out_buf)]
                cargs = [ctypes.byref(d) for d in descs]
                cargs += [ctypes.c_int64(s) for s in sizes] + [(ctypes.c_int64 * 1)(a) for a in attrs]
                untouched = out_buf.copy()
                getattr(lib, name)(*cargs)
                got = np.array(out_view)
                mask = np.ones(out_buf.shape, dtype=bool)
                mask[covered(out_view, out_buf)] = False
                what = "%s %s sizes=%s in=%s out=%s" % (label, name, sizes, kin, kout)
                ok = close(got, want, dtype) and close(got, dense_out.astype(np.float64), dtype) \
                    and np.array_equal(out_buf[mask], untouched[mask])
                if ok:
                    npass += 1
                else:
                    nfail += 1
                    err = np.max(np.abs(got.astype(np.float64) - want)) if got.size else 0
                    print("FAIL: %s: max |got - numpy| %g, |got - dense| %g, outside the view %s" %
                          (what, err, np.max(np.abs(got - dense_out)) if got.size else 0,
                           "untouched" if np.array_equal(out_buf[mask], untouched[mask]) else "WRITTEN"))
    print("abi-view: %d passed, %d failed (3 builds x %d cases)" % (npass, nfail, (npass + nfail) // 3))
    return 1 if nfail else 0


def covered(view, buf):
    """Indices into buf of the elements of view."""
    if view.ndim == 0:
        start = (view.__array_interface__["data"][0] - buf.ctypes.data) // buf.itemsize
        return np.array([start])
    start = (view.__array_interface__["data"][0] - buf.ctypes.data) // buf.itemsize
    idx = np.full(view.shape, start, dtype=np.int64)
    for d in range(view.ndim):
        shape = [1] * view.ndim
        shape[d] = view.shape[d]
        idx = idx + (np.arange(view.shape[d]) * (view.strides[d] // buf.itemsize)).reshape(shape)
    return idx.ravel()


if __name__ == "__main__":
    sys.exit(main())
