#!/usr/bin/python3
"""Differential tests of lgen's ONNX operators against ONNX Runtime.

Every case is a small ONNX graph built here with onnx.helper from the
operators of issue 15 (Resize, ConvTranspose, the recurrent operators, If,
Loop, the Pad modes, Split, Slice, the math functions, ...), many with
symbolic dims, each run on several shapes (odd, prime, tiny ones) with seeded
random inputs. For each case:

  1. ONNX Runtime (onnxruntime-node, through ort_run.js) computes the
     reference outputs for every shape;
  2. lgen generates C three ways: the default schedule and fusion, with
     --fuse=none, and with --schedule=none;
  3. the three are compiled with -std=c99 -pedantic -Wall -Wextra -Werror,
     together covering gcc and clang, with and without -fopenmp (and the
     default build once more with clang -fopenmp, compile only), run on every
     shape, and compared with ONNX Runtime: floats within RTOL of the
     output's largest magnitude (plus ATOL), integers and booleans exactly.

Prints one line per case and shape, then "N passed, N failed"; exit 1 on a
failure. --only SUBSTR,... selects cases; --list names them; --pending runs
the cases of what lgen does not do yet (PENDING) instead.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True
import onnx  # noqa: E402
from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

RTOL = 1e-4
ATOL = 1e-5
CFLAGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2"]
# the builds, each also run: (lgen flags, compiler, OpenMP)
BUILDS = [([], "gcc", True), (["--fuse=none"], "clang", False), (["--schedule=none"], "gcc", False)]

NP_OF = {T.FLOAT: np.float32, T.DOUBLE: np.float64, T.FLOAT16: np.float16, T.INT8: np.int8, T.INT16: np.int16,
         T.INT32: np.int32, T.INT64: np.int64, T.BOOL: np.bool_, T.UINT8: np.uint8}
ORT_TYPE = {np.float32: "float32", np.float64: "float64", np.float16: "float16", np.int8: "int8",
            np.int16: "int16", np.int32: "int32", np.int64: "int64", np.bool_: "bool", np.uint8: "uint8"}

CASES = []


class Case:
    """A model and the shapes to run it on. inputs: [(name, ONNX type,
    shape with dim names, (lo, hi) value range)]; dims: a list of
    {dim name: value} (one run each)."""

    def __init__(self, name, nodes, inputs, outputs, inits=(), opset=17, dims=({},), ranges=None,
                 rtol=RTOL, ref_nodes=None):
        self.name, self.nodes, self.inputs, self.outputs = name, nodes, inputs, outputs
        self.inits, self.opset, self.dims, self.rtol = list(inits), opset, list(dims), rtol
        self.ranges = ranges or {}
        # ref_nodes: the same computation in a form ONNX Runtime runs (it
        # has no layout = 1 recurrent operators): its model is the reference
        self.ref_nodes = ref_nodes

    def model(self, ref=False):
        ins = [h.make_tensor_value_info(n, t, s) for n, t, s in self.inputs]
        outs = [h.make_tensor_value_info(n, T.UNDEFINED, None) for n in self.outputs]
        g = h.make_graph(self.ref_nodes if ref and self.ref_nodes else self.nodes, self.name, ins, outs, self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", self.opset)])
        m.ir_version = 8
        # the outputs' types, which ONNX Runtime wants: from ONNX's shape inference
        inferred = onnx.shape_inference.infer_shapes(m)
        types = {vi.name: vi.type.tensor_type.elem_type
                 for vi in list(inferred.graph.value_info) + list(inferred.graph.output)
                 if vi.type.tensor_type.elem_type}
        for o in m.graph.output:
            o.type.tensor_type.elem_type = types.get(o.name, T.FLOAT)
        return m


def add(*a, **k):
    CASES.append(Case(*a, **k))


def const(name, arr):
    return nh.from_array(np.asarray(arr), name)


def i64(name, vals):
    return const(name, np.array(vals, dtype=np.int64))


def f32(name, vals):
    return const(name, np.array(vals, dtype=np.float32))


def f64(name, vals):
    return const(name, np.array(vals, dtype=np.float64))


def weights(name, shape, seed, scale=0.5):
    return const(name, (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32))


# ---------------------------------------------------------------------------
# The cases

def math_cases():
    unit = ["Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asinh", "Round", "Sign"]
    nodes = [h.make_node(o, ["x"], ["y_" + o.lower()]) for o in unit]
    nodes += [h.make_node("Asin", ["u"], ["y_asin"]), h.make_node("Acos", ["u"], ["y_acos"]),
              h.make_node("Atanh", ["u"], ["y_atanh"]), h.make_node("Acosh", ["g"], ["y_acosh"]),
              h.make_node("Sign", ["i"], ["y_isign"]), h.make_node("IsNaN", ["l"], ["y_isnan"]),
              h.make_node("Not", ["b"], ["y_not"]), h.make_node("And", ["b", "c"], ["y_and"]),
              h.make_node("Or", ["b", "c"], ["y_or"])]
    outs = ["y_" + o.lower() for o in unit] + ["y_asin", "y_acos", "y_atanh", "y_acosh", "y_isign", "y_isnan", "y_not", "y_and", "y_or"]
    ins = [("x", T.FLOAT, ["N", 3]), ("u", T.FLOAT, ["N", 3]), ("g", T.FLOAT, ["N", 3]), ("i", T.INT32, ["N", 3]),
           ("l", T.FLOAT, ["N", 3]), ("b", T.BOOL, ["N", 3]), ("c", T.BOOL, [1, 3])]
    add("math", nodes, ins, outs, opset=13, dims=[{"N": 1}, {"N": 7}, {"N": 64}],
        ranges={"u": (-0.95, 0.95), "g": (1.05, 4.0), "i": (-50, 50), "x": (-3, 3)})
    # f64 (libm's double functions) and Sign of u8 (0 or 1)
    add("math_f64", [h.make_node(o, ["x"], ["y_" + o.lower()]) for o in ["Sin", "Cos", "Round", "Sign"]]
        + [h.make_node("Sign", ["v"], ["y_usign"])],
        [("x", T.DOUBLE, ["N", 2]), ("v", T.UINT8, ["N", 2])], ["y_sin", "y_cos", "y_round", "y_sign", "y_usign"],
        opset=13, dims=[{"N": 1}, {"N": 5}], ranges={"x": (-4, 4), "v": (0, 3)})
    add("round_halves", [h.make_node("Round", ["x"], ["y"])], [("x", T.FLOAT, [9])], ["y"],
        ranges={"x": "halves"})
    add("prelu_channel", [h.make_node("PRelu", ["x", "s"], ["y"])], [("x", T.FLOAT, ["N", 5, "H", 3])], ["y"],
        inits=[weights("s", [5, 1, 1], 1)], dims=[{"N": 2, "H": 7}, {"N": 1, "H": 1}])
    add("prelu_f64", [h.make_node("PRelu", ["x", "s"], ["y"])], [("x", T.DOUBLE, [2, 4])], ["y"],
        inits=[const("s", np.array([0.1, -0.2, 0.3, 2.0]))])


def pad_cases():
    for mode in ("reflect", "edge", "wrap"):
        add("pad_" + mode, [h.make_node("Pad", ["x", "p"], ["y"], mode=mode)], [("x", T.FLOAT, ["N", 5, 4])], ["y"],
            inits=[i64("p", [0, 2, 3, 0, 4, 1])], opset=19, dims=[{"N": 1}, {"N": 3}])
        add("pad_%s_axes" % mode, [h.make_node("Pad", ["x", "p", "", "a"], ["y"], mode=mode)],
            [("x", T.FLOAT, [2, 3, 7])], ["y"], inits=[i64("p", [1, 6, 2, 0]), i64("a", [-2, 2])], opset=19)
    # on a symbolic dim: reflect needs L > pad, wrap L >= pad, checked at
    # run time (-1); edge takes any L
    for mode, short in (("reflect", {"L": 3, "_fails": 1}), ("wrap", {"L": 2, "_refused": 1})):
        add("pad_%s_symbolic" % mode, [h.make_node("Pad", ["x", "p"], ["y"], mode=mode)], [("x", T.FLOAT, [2, "L"])],
            ["y"], inits=[i64("p", [0, 3, 1, 2])], opset=19, dims=[{"L": 4}, {"L": 5}, {"L": 11}, short])
    add("pad_edge_symbolic", [h.make_node("Pad", ["x", "p"], ["y"], mode="edge")], [("x", T.FLOAT, ["L", "M"])],
        ["y"], inits=[i64("p", [2, 0, 1, 3])], opset=19, dims=[{"L": 1, "M": 1}, {"L": 3, "M": 7}])
    add("pad_reflect_1d_opset11", [h.make_node("Pad", ["x", "p"], ["y"], mode="reflect")], [("x", T.FLOAT, [1, 13])],
        ["y"], inits=[i64("p", [0, 12, 0, 5])], opset=11)
    add("pad_edge_opset2", [h.make_node("Pad", ["x"], ["y"], mode="edge", pads=[1, 0, 2, 3])],
        [("x", T.FLOAT, [2, 3])], ["y"], opset=9)


def slice_split_cases():
    d = [{"N": 1}, {"N": 5}, {"N": 17}]
    add("slice_axis0_of_symbolic", [h.make_node("Slice", ["x", "s", "e", "a"], ["y"])], [("x", T.FLOAT, [3, "N", 4])],
        ["y"], inits=[i64("s", [1]), i64("e", [3]), i64("a", [0])], dims=d)
    add("slice_symbolic_to_end", [h.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])],
        [("x", T.FLOAT, [3, "N", 4])], ["y"],
        inits=[i64("s", [1, 0]), i64("e", [9223372036854775807, -1]), i64("a", [1, 2]), i64("st", [2, 1])],
        dims=[{"N": 2}, {"N": 5}, {"N": 8}])
    # a PyTorch transformer's position table cut to the sequence length S
    # (Shape -> Gather -> Unsqueeze -> Slice's ends), added to x [S, 4]; and
    # the same from 1 by 2 (ceildiv), along axis 1 of a [2, 23, 3] table
    pos = [h.make_node("Shape", ["x"], ["shp"]), h.make_node("Gather", ["shp", "zero"], ["len"], axis=0),
           h.make_node("Unsqueeze", ["len", "ax0"], ["end"])]
    add("slice_symbolic_end", pos + [h.make_node("Slice", ["table", "s", "end", "ax0"], ["cut"]),
                                     h.make_node("Add", ["x", "cut"], ["y"])],
        [("x", T.FLOAT, ["S", 4])], ["y"],
        inits=[weights("table", [19, 4], 7), i64("s", [0]), const("zero", np.array(0, np.int64)), i64("ax0", [0])],
        dims=[{"S": 1}, {"S": 7}, {"S": 19}])
    pos2 = [h.make_node("Shape", ["x"], ["shp"]), h.make_node("Gather", ["shp", "zero"], ["len"], axis=0),
            h.make_node("Add", ["len", "len"], ["len2"]), h.make_node("Unsqueeze", ["len2", "ax0"], ["end"])]
    add("slice_symbolic_end_step2", pos2 + [h.make_node("Slice", ["table", "s", "end", "ax1", "st"], ["y"])],
        [("x", T.FLOAT, ["S"])], ["y"],
        inits=[weights("table", [2, 23, 3], 8), i64("s", [1]), const("zero", np.array(0, np.int64)), i64("ax0", [0]), i64("ax1", [1]),
               i64("st", [2])],
        dims=[{"S": 1}, {"S": 6}, {"S": 11}])
    add("split_of_symbolic", [h.make_node("Split", ["x", "sp"], ["p", "q"], axis=0)], [("x", T.FLOAT, [3, "N", 4])],
        ["p", "q"], inits=[i64("sp", [1, 2])], dims=d)
    add("split_equal_opset11", [h.make_node("Split", ["x"], ["p", "q", "r"], axis=2)], [("x", T.FLOAT, ["N", 2, 6])],
        ["p", "q", "r"], opset=11, dims=d)
    add("split_attr_opset11", [h.make_node("Split", ["x"], ["p", "q"], axis=-1, split=[2, 4])],
        [("x", T.FLOAT, ["N", 6])], ["p", "q"], opset=11, dims=d)
    add("split_uneven_opset18", [h.make_node("Split", ["x"], ["p", "q", "r"], axis=1, num_outputs=3)],
        [("x", T.FLOAT, ["N", 7])], ["p", "q", "r"], opset=18, dims=d)


def symbolic_cases():
    d = [{"N": 1, "H": 1, "W": 1}, {"N": 2, "H": 7, "W": 5}, {"N": 3, "H": 16, "W": 13}]
    add("gap_symbolic", [h.make_node("GlobalAveragePool", ["x"], ["y"])], [("x", T.FLOAT, ["N", 3, "H", "W"])], ["y"],
        dims=d)
    add("reduce_mean_symbolic", [h.make_node("ReduceMean", ["x"], ["y"], axes=[0, 2], keepdims=0)],
        [("x", T.FLOAT, ["N", 3, "H", "W"])], ["y"], opset=13, dims=d)
    add("reduce_mean_symbolic_i32", [h.make_node("ReduceMean", ["x"], ["y"], axes=[1, 2], keepdims=1)],
        [("x", T.INT32, ["N", "H", 5])], ["y"], opset=13, dims=[{"N": 2, "H": 1}, {"N": 1, "H": 7}, {"N": 3, "H": 11}],
        ranges={"x": (-1000, 1000)})
    add("shape_as_data", [h.make_node("Shape", ["x"], ["s"]), h.make_node("Cast", ["s"], ["sf"], to=T.FLOAT),
                          h.make_node("ReduceProd", ["sf"], ["p"], keepdims=0),
                          h.make_node("Div", ["x", "p"], ["y"])],
        [("x", T.FLOAT, ["N", "H", 4])], ["y"], opset=13, dims=[{"N": 1, "H": 3}, {"N": 5, "H": 2}])


def dim_data_cases():
    # a dim's value used as data where it does not fold to a number
    # (torch.onnx's x.shape[1] // 2, arange(x.shape[1]), 1 / sqrt(d), ...)
    shp = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "one"], ["n"], axis=0),
           h.make_node("Gather", ["s", "zero"], ["b"], axis=0)]
    c = [i64("one", 1), i64("zero", 0), i64("two", 2), i64("ax0", [0])]
    # Reshape [B, S, 8] -> [B, S // 2, 16]: the element counts are equal when
    # S is even, checked at run time (odd S: ONNX Runtime refuses, -1)
    add("dim_reshape_half", shp + [h.make_node("Div", ["n", "two"], ["h"]), h.make_node("Unsqueeze", ["h", "ax0"], ["hu"]),
                                   h.make_node("Unsqueeze", ["b", "ax0"], ["bu"]),
                                   h.make_node("Concat", ["bu", "hu", "sixteen"], ["shape"], axis=0),
                                   h.make_node("Reshape", ["x", "shape"], ["r"]), h.make_node("Neg", ["r"], ["y"])],
        [("x", T.FLOAT, ["B", "S", 8])], ["y"], inits=c + [i64("sixteen", [16])], opset=13,
        dims=[{"B": 1, "S": 2}, {"B": 3, "S": 14}, {"B": 2, "S": 22}, {"B": 1, "S": 7, "_fails": 1}])
    add("dim_reshape_minus1", [h.make_node("Reshape", ["x", "shape"], ["r"]), h.make_node("Relu", ["r"], ["y"])],
        [("x", T.FLOAT, ["B", "S", 6])], ["y"], inits=[i64("shape", [0, -1, 4])], opset=13,
        dims=[{"B": 1, "S": 2}, {"B": 2, "S": 10}, {"B": 3, "S": 6}, {"B": 1, "S": 3, "_fails": 1}])
    # attention's 1 / sqrt(d) from a symbolic dim, and the dims as outputs
    add("dim_float_scale", shp + [h.make_node("Cast", ["n"], ["nf"], to=T.FLOAT), h.make_node("Sqrt", ["nf"], ["q"]),
                                  h.make_node("Div", ["x", "q"], ["y"])],
        [("x", T.FLOAT, ["B", "S"])], ["y"], inits=c, opset=13, dims=[{"B": 1, "S": 1}, {"B": 2, "S": 7}, {"B": 3, "S": 13}])
    add("dim_int_outputs", shp + [h.make_node("Mul", ["n", "b"], ["nb"]), h.make_node("Div", ["n", "two"], ["h"]),
                                  h.make_node("Sub", ["h", "five"], ["h5"]), h.make_node("Cast", ["n"], ["n32"], to=T.INT32),
                                  h.make_node("Range", ["one", "n", "two"], ["odd"])],
        [("x", T.FLOAT, ["B", "S"])], ["nb", "h5", "n32", "odd"], inits=c + [i64("five", 5)], opset=13,
        dims=[{"B": 1, "S": 1}, {"B": 2, "S": 7}, {"B": 5, "S": 12}])


def mod_cases():
    for t, name in ((T.INT32, "i32"), (T.INT64, "i64"), (T.INT8, "i8")):
        add("mod_runtime_" + name, [h.make_node("Mod", ["x", "j"], ["m"]), h.make_node("Mod", ["x", "j"], ["f"], fmod=1),
                                    h.make_node("Mod", ["x", "k"], ["mk"])],
            [("x", t, ["N", 3]), ("j", t, ["N", 3]), ("k", t, [3])], ["m", "f", "mk"], opset=13,
            dims=[{"N": 1}, {"N": 7}, {"N": 13}], ranges={"x": (-40, 40), "j": (-9, 9), "k": (-5, -1)})
    for t, name in ((T.FLOAT, "f32"), (T.DOUBLE, "f64")):
        add("fmod_runtime_" + name, [h.make_node("Mod", ["x", "y"], ["f"], fmod=1)],
            [("x", t, ["N", 5]), ("y", t, [5])], ["f"], opset=13, dims=[{"N": 1}, {"N": 3}, {"N": 11}],
            ranges={"x": (-10, 10), "y": (0.5, 3)})
    add("mod_runtime_u8", [h.make_node("Mod", ["x", "j"], ["m"]), h.make_node("Mod", ["x", "j"], ["f"], fmod=1)],
        [("x", T.UINT8, ["N"]), ("j", T.UINT8, ["N"])], ["m", "f"], opset=13, dims=[{"N": 1}, {"N": 17}],
        ranges={"x": (0, 255), "j": (1, 200)})
    # a dim mod a constant: S mod 3 folds symbolically (computed at run time),
    # S mod -4 (the divisor's sign) runs as a mod of the dim's value
    shp = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "zero"], ["n"], axis=0)]
    add("mod_of_dim", shp + [h.make_node("Mod", ["n", "three"], ["m3"]), h.make_node("Mod", ["n", "mfour"], ["m4"])],
        [("x", T.FLOAT, ["S"])], ["m3", "m4"], inits=[i64("zero", 0), i64("three", 3), i64("mfour", -4)], opset=13,
        dims=[{"S": 1}, {"S": 5}, {"S": 12}])


def resize_cases():
    sym = [{"N": 1, "H": 1, "W": 2}, {"N": 2, "H": 5, "W": 7}, {"N": 1, "H": 12, "W": 9}]
    # PaddleOCR's detector: nearest, asymmetric, floor, scales 2 on symbolic H, W (opset 11)
    add("resize_det_nearest_x2", [h.make_node("Resize", ["x", "roi", "sc"], ["y"], mode="nearest",
                                              coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
        [("x", T.FLOAT, ["N", 3, "H", "W"])], ["y"], inits=[f32("roi", []), f32("sc", [1, 1, 2, 2])], opset=11,
        dims=sym)
    add("resize_nearest_x4_symbolic_default", [h.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest")],
        [("x", T.FLOAT, ["N", 2, "H", "W"])], ["y"], inits=[f32("sc", [1, 1, 4, 3])], opset=13, dims=sym)
    add("resize_linear_x2_half_pixel_symbolic", [h.make_node("Resize", ["x", "", "sc"], ["y"], mode="linear")],
        [("x", T.FLOAT, ["N", 3, "H", "W"])], ["y"], inits=[f32("sc", [1, 1, 2, 2])], opset=13, dims=sym)
    add("resize_linear_half_symbolic", [h.make_node("Resize", ["x", "", "sc"], ["y"], mode="linear",
                                                    coordinate_transformation_mode="pytorch_half_pixel")],
        [("x", T.FLOAT, ["N", 1, "H", 8])], ["y"], inits=[f32("sc", [1, 1, 0.5, 0.5])], opset=13,
        dims=[{"N": 1, "H": 4}, {"N": 2, "H": 9}])
    # An output of length 1 along a symbolic dim (H = 2 or 3 at scale 0.5)
    # reads source coordinate -0.5 in pytorch_half_pixel, which the
    # symbolic (polyphase) form cannot: the entry point refuses such dims
    # (-1; ONNX Runtime computes them), H = 4 and 5 compute; the static
    # path (H fixed by --dim) handles length 1.
    add("resize_linear_half_symbolic_len1", [h.make_node("Resize", ["x", "", "sc"], ["y"], mode="linear",
                                                         coordinate_transformation_mode="pytorch_half_pixel")],
        [("x", T.FLOAT, ["N", 1, "H", 8])], ["y"], inits=[f32("sc", [1, 1, 0.5, 0.5])], opset=13,
        dims=[{"N": 1, "H": 2, "_refused": 1}, {"N": 1, "H": 3, "_refused": 1}, {"N": 1, "H": 4}, {"N": 2, "H": 5}])
    add("resize_cubic_x2_symbolic", [h.make_node("Resize", ["x", "", "sc"], ["y"], mode="cubic",
                                                 coordinate_transformation_mode="asymmetric", cubic_coeff_a=-0.5)],
        [("x", T.FLOAT, [1, 2, "H", 5])], ["y"], inits=[f32("sc", [1, 1, 2, 3])], opset=13,
        dims=[{"H": 1}, {"H": 6}, {"H": 11}])
    ctms = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]
    for ctm in ctms:
        for nm in ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]:
            add("resize_nearest_%s_%s" % (ctm, nm),
                [h.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="nearest",
                             coordinate_transformation_mode=ctm, nearest_mode=nm)],
                [("x", T.FLOAT, [1, 2, 5, 7])], ["y"], inits=[i64("sz", [1, 2, 8, 3])], opset=13)
        for mode in ["linear", "cubic"]:
            add("resize_%s_%s_sizes" % (mode, ctm),
                [h.make_node("Resize", ["x", "", "", "sz"], ["y"], mode=mode, coordinate_transformation_mode=ctm)],
                [("x", T.FLOAT, [2, 1, 6, 7])], ["y"], inits=[i64("sz", [2, 1, 11, 3])], opset=13)
            add("resize_%s_%s_scales" % (mode, ctm),
                [h.make_node("Resize", ["x", "", "sc"], ["y"], mode=mode, coordinate_transformation_mode=ctm)],
                [("x", T.FLOAT, [1, 2, 4, 9])], ["y"], inits=[f32("sc", [1, 1, 1.7, 0.6])], opset=13)
    add("resize_cubic_exclude_outside", [h.make_node("Resize", ["x", "", "sc"], ["y"], mode="cubic",
                                                     exclude_outside=1, cubic_coeff_a=-0.5)],
        [("x", T.FLOAT, [1, 1, 5, 6])], ["y"], inits=[f32("sc", [1, 1, 0.8, 2.5])], opset=13)
    add("resize_tf_crop_and_resize", [h.make_node("Resize", ["x", "roi", "", "sz"], ["y"], mode="linear",
                                                  coordinate_transformation_mode="tf_crop_and_resize",
                                                  extrapolation_value=10.0)],
        [("x", T.FLOAT, [1, 1, 4, 5])], ["y"],
        inits=[f32("roi", [0, 0, 0.4, -0.3, 1, 1, 1.2, 0.7]), i64("sz", [1, 1, 6, 4])], opset=13)
    add("resize_tf_crop_nearest", [h.make_node("Resize", ["x", "roi", "", "sz"], ["y"], mode="nearest",
                                               coordinate_transformation_mode="tf_crop_and_resize")],
        [("x", T.FLOAT, [1, 1, 4, 5])], ["y"],
        inits=[f32("roi", [0, 0, 0.2, 0, 1, 1, 0.9, 1]), i64("sz", [1, 1, 5, 5])], opset=13)
    for mode in ["linear", "cubic"]:
        add("resize_antialias_" + mode, [h.make_node("Resize", ["x", "", "sc"], ["y"], mode=mode, antialias=1)],
            [("x", T.FLOAT, [1, 2, 16, 13])], ["y"], inits=[f32("sc", [1, 1, 0.4, 0.6])], opset=18)
    add("resize_axes_keep_not_larger", [h.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear",
                                                    axes=[3, 2], keep_aspect_ratio_policy="not_larger")],
        [("x", T.FLOAT, [1, 1, 6, 4])], ["y"], inits=[i64("sz", [7, 7])], opset=18)
    add("resize_keep_not_smaller", [h.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="nearest",
                                                axes=[2, 3], keep_aspect_ratio_policy="not_smaller")],
        [("x", T.FLOAT, [1, 1, 6, 4])], ["y"], inits=[i64("sz", [7, 7])], opset=18)
    add("resize_half_pixel_symmetric", [h.make_node("Resize", ["x", "", "sc"], ["y"], mode="linear",
                                                    coordinate_transformation_mode="half_pixel_symmetric")],
        [("x", T.FLOAT, [1, 1, 5, 4])], ["y"], inits=[f32("sc", [1, 1, 2.3, 0.7])], opset=19)
    add("resize_nearest_int", [h.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest")],
        [("x", T.INT32, [1, 3, 4])], ["y"], inits=[f32("sc", [1, 1.5, 2.5])], opset=13)
    add("resize_opset10", [h.make_node("Resize", ["x", "sc"], ["y"], mode="nearest")],
        [("x", T.FLOAT, [1, 1, 3, 4])], ["y"], inits=[f32("sc", [1, 1, 2, 0.5])], opset=10)
    add("resize_opset10_linear", [h.make_node("Resize", ["x", "sc"], ["y"], mode="linear")],
        [("x", T.FLOAT, [1, 1, 3, 4])], ["y"], inits=[f32("sc", [1, 1, 2, 3])], opset=10)
    add("upsample_opset9", [h.make_node("Upsample", ["x", "sc"], ["y"], mode="nearest")],
        [("x", T.FLOAT, [1, 2, 3, 3])], ["y"], inits=[f32("sc", [1, 1, 2, 3])], opset=9)
    add("upsample_opset9_linear", [h.make_node("Upsample", ["x", "sc"], ["y"], mode="linear")],
        [("x", T.FLOAT, [1, 2, 3, 3])], ["y"], inits=[f32("sc", [1, 1, 2, 2])], opset=9)
    add("upsample_opset7", [h.make_node("Upsample", ["x"], ["y"], mode="nearest", scales=[1.0, 1.0, 3.0, 2.0])],
        [("x", T.FLOAT, [1, 2, 3, 3])], ["y"], opset=7)


def convtranspose_cases():
    sym = [{"N": 1, "H": 1, "W": 3}, {"N": 2, "H": 5, "W": 7}]
    # PaddleOCR's detector head: 2x2 kernel, stride 2, symbolic H, W
    add("convt_k2s2_symbolic", [h.make_node("ConvTranspose", ["x", "w", "b"], ["y"], kernel_shape=[2, 2],
                                            strides=[2, 2])],
        [("x", T.FLOAT, ["N", 4, "H", "W"])], ["y"], inits=[weights("w", [4, 3, 2, 2], 2), weights("b", [3], 3)],
        opset=11, dims=sym)
    add("convt_k4s2p1_symbolic", [h.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1])],
        [("x", T.FLOAT, ["N", 3, "H", "W"])], ["y"], inits=[weights("w", [3, 5, 4, 4], 4)], opset=11, dims=sym)
    add("convt_k3s1_dilated", [h.make_node("ConvTranspose", ["x", "w", "b"], ["y"], dilations=[2, 3], pads=[1, 0, 2, 1])],
        [("x", T.FLOAT, [1, 2, 6, 5])], ["y"], inits=[weights("w", [2, 3, 3, 3], 5), weights("b", [3], 6)], opset=13)
    add("convt_k3s3_dilated2", [h.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3, 2], dilations=[2, 2])],
        [("x", T.FLOAT, [2, 2, 4, 3])], ["y"], inits=[weights("w", [2, 2, 3, 3], 7)], opset=13)
    add("convt_group_outpad", [h.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[3, 2], group=2,
                                           output_padding=[2, 1], pads=[0, 1, 1, 0])],
        [("x", T.FLOAT, [1, 4, 3, 4])], ["y"], inits=[weights("w", [4, 3, 3, 2], 8), weights("b", [6], 9)], opset=13)
    add("convt_output_shape", [h.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3, 2], output_shape=[10, 8])],
        [("x", T.FLOAT, [1, 1, 3, 3])], ["y"], inits=[weights("w", [1, 2, 3, 3], 10)], opset=13)
    for ap in ["SAME_UPPER", "SAME_LOWER", "VALID"]:
        add("convt_autopad_" + ap.lower(), [h.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], auto_pad=ap)],
            [("x", T.FLOAT, [1, 1, 3, 4])], ["y"], inits=[weights("w", [1, 2, 3, 3], 11)], opset=13)
    add("convt_1d", [h.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3], pads=[1, 2])],
        [("x", T.FLOAT, ["N", 2, 7])], ["y"], inits=[weights("w", [2, 4, 5], 12)], opset=13, dims=[{"N": 1}, {"N": 3}])
    add("convt_3d", [h.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 1, 2])],
        [("x", T.FLOAT, [1, 2, 3, 2, 3])], ["y"], inits=[weights("w", [2, 2, 2, 3, 3], 13)], opset=13)
    add("convt_runtime_weights", [h.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2])],
        [("x", T.FLOAT, [1, 2, 3, 3]), ("w", T.FLOAT, [2, 2, 3, 3])], ["y"], opset=13)


def grouped_conv_cases():
    # grouped convolutions whose groups are narrower than the register block
    # (RegNet-Y's groups of 8): auto.c narrows the block to the group (or a
    # divisor of it) and c_loops.c reads the group's input channel once per
    # block (block_divisions). Odd spatial extents give partial blocks. The
    # Relu after it keeps the conv's output an intermediate, stored
    # channels-last (graph outputs keep ONNX's layout), so that the output
    # channel is the vector dim.
    def conv(name, c, f, g, x_shape, seed, dims=({},), **attrs):
        add(name, [h.make_node("Conv", ["x", "w", "b"], ["u"], group=g, **attrs), h.make_node("Relu", ["u"], ["y"])],
            [("x", T.FLOAT, x_shape)], ["y"],
            inits=[weights("w", [f, c // g, 3, 3], seed), weights("b", [f], seed + 1)], opset=13, dims=dims)
    conv("conv_group8", 32, 32, 4, [1, 32, 9, 11], 41, pads=[1, 1, 1, 1])
    conv("conv_group8_stride2", 24, 24, 3, [2, 24, 10, 13], 43, strides=[2, 2], pads=[1, 1, 1, 1])
    conv("conv_group4", 24, 24, 6, [1, 24, 5, 7], 45, pads=[0, 1, 1, 0])  # half an AVX2 vector
    conv("conv_group12", 24, 24, 2, [1, 24, 6, 6], 47, pads=[1, 1, 1, 1])  # blocks of gcd(16, 12) = 4
    conv("conv_group_widen", 16, 32, 2, [1, 16, 5, 9], 49, pads=[1, 1, 1, 1])  # 8 in, 16 out per group
    conv("conv_group3", 9, 9, 3, [1, 9, 4, 5], 51)  # groups of 3: the old block


def winograd_conv_cases():
    # 3x3 stride-1 convs with 16 channels or more in and out, which
    # --conv-algorithm=auto (the default) computes by Winograd F(2x2, 3x3)
    # through transposes (conv_algo.c): a constant filter (its transform
    # folded at generation time) or an input one (transformed at run time),
    # the bias, odd and prime extents (partial 2x2 tiles), asymmetric pads,
    # a batch of 2, a symbolic batch (the tile count N * TH * TW known only
    # at run time) and a residual block whose activations are stored
    # channels-last. tests/fft-conv.test checks that the choice is made.
    def conv(name, c, f, x_shape, seed, bias=True, dims=({},), **attrs):
        ins = ["x", "w", "b"] if bias else ["x", "w"]
        inits = [weights("w", [f, c, 3, 3], seed, 0.2)] + ([weights("b", [f], seed + 1)] if bias else [])
        add(name, [h.make_node("Conv", ins, ["u"], **attrs), h.make_node("Relu", ["u"], ["y"])],
            [("x", T.FLOAT, x_shape)], ["y"], inits=inits, opset=13, dims=dims)
    conv("conv_winograd_bias", 16, 16, [1, 16, 7, 9], 61, pads=[1, 1, 1, 1])
    conv("conv_winograd_asym", 17, 33, [2, 17, 13, 11], 63, bias=False, pads=[0, 1, 2, 1])
    conv("conv_winograd_nopad", 19, 16, [1, 19, 5, 3], 65)
    conv("conv_winograd_symbolic_batch", 16, 17, ["N", 16, 7, 5], 71, pads=[1, 1, 1, 1],
         dims=[{"N": 1}, {"N": 3}, {"N": 2}])
    add("conv_winograd_filter_input", [h.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
        [("x", T.FLOAT, [1, 16, 6, 5]), ("w", T.FLOAT, [16, 16, 3, 3])], ["y"], opset=13)
    add("conv_winograd_residual",
        [h.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), h.make_node("Relu", ["c1"], ["r1"]),
         h.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]), h.make_node("Add", ["c2", "x"], ["s"]),
         h.make_node("Relu", ["s"], ["y"])],
        [("x", T.FLOAT, [1, 16, 11, 11])], ["y"],
        inits=[weights("w1", [16, 16, 3, 3], 67, 0.2), weights("b1", [16], 68), weights("w2", [16, 16, 3, 3], 69, 0.2),
               weights("b2", [16], 70)], opset=13)


def rnn_cases():
    H, I = 5, 3
    for kind, G in (("RNN", 1), ("GRU", 3), ("LSTM", 4)):
        for direction in ("forward", "reverse", "bidirectional"):
            D = 2 if direction == "bidirectional" else 1
            outs = ["y", "yh"] + (["yc"] if kind == "LSTM" else [])
            inits = [weights("W", [D, G * H, I], 20), weights("R", [D, G * H, H], 21), weights("B", [D, 2 * G * H], 22)]
            ins = ["x", "W", "R", "B"]
            extra = {}
            if kind == "GRU":
                extra["linear_before_reset"] = 1 if direction != "reverse" else 0
            add("%s_%s" % (kind.lower(), direction),
                [h.make_node(kind, ins, outs, hidden_size=H, direction=direction, **extra)],
                [("x", T.FLOAT, [7, "B", I])], outs, inits=inits, opset=14, dims=[{"B": 1}, {"B": 3}])
            if direction == "bidirectional":  # one step: written out, not the loop over time
                add("%s_%s_one_step" % (kind.lower(), direction),
                    [h.make_node(kind, ins, outs, hidden_size=H, direction=direction, **extra)],
                    [("x", T.FLOAT, [1, "B", I])], outs, inits=inits, opset=14, dims=[{"B": 1}, {"B": 3}])
    # everything at once: sequence_lens, initial states, peepholes, clip,
    # activations with alpha/beta, layout 1, input_forget
    D = 2
    add("lstm_all_attributes",
        [h.make_node("LSTM", ["x", "W", "R", "B", "lens", "h0", "c0", "P"], ["y", "yh", "yc"], hidden_size=H,
                     direction="bidirectional", clip=1.5, input_forget=1,
                     activations=["HardSigmoid", "ScaledTanh", "LeakyRelu", "Sigmoid", "Tanh", "Affine"],
                     activation_alpha=[0.3, 0.9, 0.05, 1.2], activation_beta=[0.4, 1.1, 0.3])],
        [("x", T.FLOAT, [6, 2, I]), ("lens", T.INT32, [2]), ("h0", T.FLOAT, [D, 2, H]), ("c0", T.FLOAT, [D, 2, H])],
        ["y", "yh", "yc"], inits=[weights("W", [D, 4 * H, I], 23), weights("R", [D, 4 * H, H], 24),
                                  weights("B", [D, 8 * H], 25), weights("P", [D, 3 * H], 26)],
        opset=14, ranges={"lens": (1, 6)})
    add("lstm_all_attributes_one_step",
        [h.make_node("LSTM", ["x", "W", "R", "B", "lens", "h0", "c0", "P"], ["y", "yh", "yc"], hidden_size=H,
                     direction="bidirectional", clip=1.5, input_forget=1,
                     activations=["HardSigmoid", "ScaledTanh", "LeakyRelu", "Sigmoid", "Tanh", "Affine"],
                     activation_alpha=[0.3, 0.9, 0.05, 1.2], activation_beta=[0.4, 1.1, 0.3])],
        [("x", T.FLOAT, [1, 3, I]), ("lens", T.INT32, [3]), ("h0", T.FLOAT, [D, 3, H]), ("c0", T.FLOAT, [D, 3, H])],
        ["y", "yh", "yc"], inits=[weights("W", [D, 4 * H, I], 23), weights("R", [D, 4 * H, H], 24),
                                  weights("B", [D, 8 * H], 25), weights("P", [D, 3 * H], 26)],
        opset=14, ranges={"lens": (0, 1)})
    add("gru_lens_reverse", [h.make_node("GRU", ["x", "W", "R", "B", "lens", "h0"], ["y", "yh"], hidden_size=H,
                                         direction="reverse", activations=["Relu", "Softsign"], clip=2.0)],
        [("x", T.FLOAT, [5, 3, I]), ("lens", T.INT32, [3]), ("h0", T.FLOAT, [1, 3, H])], ["y", "yh"],
        inits=[weights("W", [1, 3 * H, I], 27), weights("R", [1, 3 * H, H], 28), weights("B", [1, 6 * H], 29)],
        opset=14, ranges={"lens": (1, 5)})
    add("rnn_yh_only_no_bias", [h.make_node("RNN", ["x", "W", "R"], ["", "yh"], hidden_size=H,
                                            activations=["ThresholdedRelu"], activation_alpha=[0.2])],
        [("x", T.FLOAT, [4, 2, I])], ["yh"], inits=[weights("W", [1, H, I], 30), weights("R", [1, H, H], 31)],
        opset=14)
    # lengths of 0 (ONNX Runtime: Y_h and Y_c are 0, not the initial state)
    add("lstm_lens_zero", [h.make_node("LSTM", ["x", "W", "R", "B", "lens", "h0", "c0"], ["y", "yh", "yc"],
                                       hidden_size=3, direction="bidirectional")],
        [("x", T.FLOAT, [3, 4, I]), ("lens", T.INT32, [4]), ("h0", T.FLOAT, [2, 4, 3]), ("c0", T.FLOAT, [2, 4, 3])],
        ["y", "yh", "yc"], inits=[weights("W", [2, 12, I], 35), weights("R", [2, 12, 3], 36),
                                  weights("B", [2, 24], 37)], opset=14, ranges={"lens": (0, 1)})
    add("lstm_seq20", [h.make_node("LSTM", ["x", "W", "R", "B"], ["y", "yh", "yc"], hidden_size=H)],
        [("x", T.FLOAT, [20, 2, I])], ["y", "yh", "yc"],
        inits=[weights("W", [1, 4 * H, I], 32, 0.3), weights("R", [1, 4 * H, H], 33, 0.3), weights("B", [1, 8 * H], 34)],
        opset=14)


def layout0(node):
    """A layout = 1 recurrent node as ONNX defines it: its layout = 0 form
    between Transposes ([batch, seq] <-> [seq, batch], [batch, dirs] <->
    [dirs, batch]), for ONNX Runtime, which has no layout = 1."""
    ins, outs, nodes = list(node.input), list(node.output), []
    for k in (0, 5, 6):
        if k < len(ins) and ins[k]:
            nodes.append(h.make_node("Transpose", [ins[k]], [ins[k] + "_l0"], perm=[1, 0, 2]))
            ins[k] += "_l0"
    inner = [o + "_l0" if o else "" for o in outs]
    attrs = {a.name: h.get_attribute_value(a) for a in node.attribute if a.name != "layout"}
    attrs = {k: [x.decode() for x in v] if k == "activations" else v for k, v in attrs.items()}
    nodes.append(h.make_node(node.op_type, ins, inner, **attrs))
    for k, o in enumerate(outs):
        if o:
            nodes.append(h.make_node("Transpose", [inner[k]], [o], perm=[2, 0, 1, 3] if k == 0 else [1, 0, 2]))
    return nodes


def add_layout1(name, node, *a, **k):
    add(name, [node], *a, ref_nodes=layout0(node), **k)


def rnn_symbolic_cases():
    """The recurrent operators over a symbolic sequence length S (a C loop
    over time, templates/rnn.c), run at S = 1, 2, 7, 13."""
    H, I = 5, 3
    S = [{"S": 1}, {"S": 2}, {"S": 7}, {"S": 13}]
    for kind, G in (("RNN", 1), ("GRU", 3), ("LSTM", 4)):
        for direction in ("forward", "reverse", "bidirectional"):
            D = 2 if direction == "bidirectional" else 1
            outs = ["y", "yh"] + (["yc"] if kind == "LSTM" else [])
            inits = [weights("W", [D, G * H, I], 40), weights("R", [D, G * H, H], 41), weights("B", [D, 2 * G * H], 42)]
            extra = {}
            if kind == "GRU":
                extra["linear_before_reset"] = 1 if direction != "reverse" else 0
            add("%s_sym_%s" % (kind.lower(), direction),
                [h.make_node(kind, ["x", "W", "R", "B"], outs, hidden_size=H, direction=direction, **extra)],
                [("x", T.FLOAT, ["S", 3, I])], outs, inits=inits, opset=14, dims=S)
    # everything at once, with a symbolic batch too: layout 1, sequence_lens
    # (0 to S), initial states, peepholes, clip, input_forget, activations
    # with alpha/beta
    D = 2
    SB = [{"S": 1, "B": 2}, {"S": 2, "B": 3}, {"S": 7, "B": 1}, {"S": 13, "B": 5}]
    add_layout1("lstm_sym_all_attributes",
        h.make_node("LSTM", ["x", "W", "R", "B", "lens", "h0", "c0", "P"], ["y", "yh", "yc"], hidden_size=H,
                     direction="bidirectional", clip=1.5, input_forget=1, layout=1,
                     activations=["HardSigmoid", "ScaledTanh", "LeakyRelu", "Sigmoid", "Tanh", "Affine"],
                     activation_alpha=[0.3, 0.9, 0.05, 1.2], activation_beta=[0.4, 1.1, 0.3]),
        [("x", T.FLOAT, ["B", "S", I]), ("lens", T.INT32, ["B"]), ("h0", T.FLOAT, ["B", D, H]),
         ("c0", T.FLOAT, ["B", D, H])],
        ["y", "yh", "yc"], inits=[weights("W", [D, 4 * H, I], 43), weights("R", [D, 4 * H, H], 44),
                                  weights("B", [D, 8 * H], 45), weights("P", [D, 3 * H], 46)],
        opset=14, dims=SB, ranges={"lens": lambda d: (0, d["S"])})
    add("lstm_sym_peepholes_reverse",
        [h.make_node("LSTM", ["x", "W", "R", "", "lens", "", "c0", "P"], ["", "yh", "yc"], hidden_size=1,
                     direction="reverse", activations=["Sigmoid", "Softsign", "Relu"])],
        [("x", T.FLOAT, ["S", 2, I]), ("lens", T.INT32, [2]), ("c0", T.FLOAT, [1, 2, 1])], ["yh", "yc"],
        inits=[weights("W", [1, 4, I], 47), weights("R", [1, 4, 1], 48), weights("P", [1, 3], 49)],
        opset=14, dims=S, ranges={"lens": lambda d: (1, d["S"])})
    add("gru_sym_lens_reverse",
        [h.make_node("GRU", ["x", "W", "R", "B", "lens", "h0"], ["y", "yh"], hidden_size=H, direction="reverse",
                     activations=["Relu", "Softsign"], clip=2.0, linear_before_reset=1)],
        [("x", T.FLOAT, ["S", 3, I]), ("lens", T.INT32, [3]), ("h0", T.FLOAT, [1, 3, H])], ["y", "yh"],
        inits=[weights("W", [1, 3 * H, I], 50), weights("R", [1, 3 * H, H], 51, 0.25), weights("B", [1, 6 * H], 52)],
        opset=14, dims=S, ranges={"lens": lambda d: (0, d["S"])})
    add_layout1("gru_sym_bidirectional_all",
        h.make_node("GRU", ["x", "W", "R", "B", "lens", "h0"], ["y", "yh"], hidden_size=H, direction="bidirectional",
                     activations=["HardSigmoid", "Elu", "Sigmoid", "ThresholdedRelu"], activation_alpha=[0.25, 0.7, 0.1],
                     activation_beta=[0.45], clip=1.0, layout=1, linear_before_reset=0),
        [("x", T.FLOAT, ["B", "S", I]), ("lens", T.INT32, ["B"]), ("h0", T.FLOAT, ["B", 2, H])], ["y", "yh"],
        inits=[weights("W", [2, 3 * H, I], 53), weights("R", [2, 3 * H, H], 54), weights("B", [2, 6 * H], 55)],
        opset=14, dims=SB, ranges={"lens": lambda d: (0, d["S"])})
    add_layout1("rnn_sym_bidirectional_all",
        h.make_node("RNN", ["x", "W", "R", "B", "lens", "h0"], ["y", "yh"], hidden_size=H, direction="bidirectional",
                     activations=["Softplus", "ScaledTanh"], activation_alpha=[0.8], activation_beta=[1.3],
                     clip=1.2, layout=1),
        [("x", T.FLOAT, ["B", "S", I]), ("lens", T.INT32, ["B"]), ("h0", T.FLOAT, ["B", 2, H])], ["y", "yh"],
        inits=[weights("W", [2, H, I], 56), weights("R", [2, H, H], 57), weights("B", [2, 2 * H], 58)],
        opset=14, dims=SB, ranges={"lens": lambda d: (0, d["S"])})
    add("rnn_sym_yh_only_no_bias",
        [h.make_node("RNN", ["x", "W", "R"], ["", "yh"], hidden_size=1, activations=["ThresholdedRelu"],
                     activation_alpha=[0.2])],
        [("x", T.FLOAT, ["S", 1, I])], ["yh"], inits=[weights("W", [1, 1, I], 59), weights("R", [1, 1, 1], 60)],
        opset=14, dims=S)
    # a static length past what lgen unrolls (4096) runs as the loop too
    add("gru_sym_long_static", [h.make_node("GRU", ["x", "W", "R", "B"], ["y", "yh"], hidden_size=3)],
        [("x", T.FLOAT, [4099, 2, 2])], ["y", "yh"],
        inits=[weights("W", [1, 9, 2], 64), weights("R", [1, 9, 3], 65), weights("B", [1, 18], 66)], opset=14)
    add("rnn_sym_relu_affine",
        [h.make_node("RNN", ["x", "W", "R", "B"], ["y", "yh"], hidden_size=3, direction="bidirectional",
                     activations=["Relu", "Affine"], activation_alpha=[0.7], activation_beta=[-0.2])],
        [("x", T.FLOAT, ["S", 2, 2])], ["y", "yh"],
        inits=[weights("W", [2, 3, 2], 61), weights("R", [2, 3, 3], 62), weights("B", [2, 6], 63)],
        opset=14, dims=S)


def control_cases():
    then_g = h.make_graph([h.make_node("Mul", ["x", "two"], ["t"])], "then", [], [h.make_tensor_value_info("t", T.FLOAT, None)],
                          [f32("two", [2.0])])
    else_g = h.make_graph([h.make_node("Sub", ["x", "one"], ["e"]), h.make_node("Neg", ["e"], ["e2"])], "else", [],
                          [h.make_tensor_value_info("e2", T.FLOAT, None)], [f32("one", [1.0])])
    # a condition that folds (from a shape), and one computed at run time
    add("if_folded_from_shape", [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "i1"], ["d"]),
                                 h.make_node("Equal", ["d", "four"], ["c"]),
                                 h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
        [("x", T.FLOAT, [2, 4])], ["y"], inits=[i64("i1", 1), i64("four", 4)], opset=13)
    add("if_folded_else", [h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
        [("x", T.FLOAT, ["N", 3])], ["y"], inits=[const("c", np.array(False))], opset=13, dims=[{"N": 2}])
    add("if_runtime", [h.make_node("ReduceSum", ["x"], ["r"], keepdims=0), h.make_node("Greater", ["r", "zero"], ["c"]),
                       h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
        [("x", T.FLOAT, [2, 3])], ["y"], inits=[f32("zero", 0.0)], opset=13, dims=[{}, {}])
    # Loop: trip count 5, a carried sum and a scan output; the body reads an outer value
    body = h.make_graph([h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT), h.make_node("Mul", ["x", "fi"], ["xi"]),
                         h.make_node("Add", ["acc", "xi"], ["acc2"]), h.make_node("Identity", ["cin"], ["cout"]),
                         h.make_node("Sin", ["acc2"], ["sc"])], "body",
                        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cin", T.BOOL, []),
                         h.make_tensor_value_info("acc", T.FLOAT, None)],
                        [h.make_tensor_value_info("cout", T.BOOL, []), h.make_tensor_value_info("acc2", T.FLOAT, None),
                         h.make_tensor_value_info("sc", T.FLOAT, None)])
    add("loop_static", [h.make_node("Loop", ["M", "", "a0"], ["acc", "scan"], body=body)],
        [("x", T.FLOAT, ["N", 3]), ("a0", T.FLOAT, ["N", 3])], ["acc", "scan"], inits=[i64("M", 5)], opset=13,
        dims=[{"N": 1}, {"N": 4}])
    # Loop stopped by its condition: i < 3 computed from the iteration number
    body2 = h.make_graph([h.make_node("Add", ["acc", "x"], ["acc2"]), h.make_node("Less", ["i", "three"], ["cout"])],
                         "body2", [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cin", T.BOOL, []),
                                   h.make_tensor_value_info("acc", T.FLOAT, None)],
                         [h.make_tensor_value_info("cout", T.BOOL, []), h.make_tensor_value_info("acc2", T.FLOAT, None)],
                         [i64("three", 3)])
    # 70 iterations: the scan output concatenates more than one concat op takes
    body3 = h.make_graph([h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT), h.make_node("Add", ["x", "fi"], ["s"]),
                          h.make_node("Identity", ["cin"], ["cout"])], "body3",
                         [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cin", T.BOOL, [])],
                         [h.make_tensor_value_info("cout", T.BOOL, []), h.make_tensor_value_info("s", T.FLOAT, None)])
    add("loop_70_scan", [h.make_node("Loop", ["M", ""], ["scan"], body=body3)], [("x", T.FLOAT, [2])], ["scan"],
        inits=[i64("M", 70)], opset=13)
    add("loop_cond_stops", [h.make_node("Loop", ["", "c0", "a0"], ["acc"], body=body2)],
        [("x", T.FLOAT, [2, 2]), ("a0", T.FLOAT, [2, 2])], ["acc"], inits=[const("c0", np.array(True))], opset=13)


def range_cases():
    add("range_to_symbolic_dim", [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "one"], ["n"]),
                                  h.make_node("Range", ["zero", "n", "step"], ["r"]),
                                  h.make_node("Cast", ["r"], ["rf"], to=T.FLOAT), h.make_node("Add", ["x", "rf"], ["y"]),
                                  h.make_node("Range", ["n", "lim", "three"], ["r2"])],
        [("x", T.FLOAT, [2, "N"])], ["y", "r2"],
        inits=[i64("one", 1), i64("zero", 0), i64("step", 1), i64("lim", 40), i64("three", 3)], opset=13,
        dims=[{"N": 1}, {"N": 7}, {"N": 31}, {"N": 43, "_refused": 1}])
    # a float Range over a dim: torch.arange(x.shape[1], dtype=torch.float32)
    # (rotary embeddings) casts the dim to float first
    for t, name, const in ((T.FLOAT, "f32", f32), (T.DOUBLE, "f64", f64)):
        add("range_float_symbolic_" + name,
            [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "one"], ["n"]),
             h.make_node("Cast", ["n"], ["nf"], to=t), h.make_node("Range", ["start", "nf", "step"], ["r"]),
             h.make_node("Range", ["nf", "zero", "back"], ["down"]),
             h.make_node("Cast", ["x"], ["xt"], to=t), h.make_node("Mul", ["xt", "r"], ["y"])],
            [("x", T.FLOAT, [2, "N"])], ["y", "down"],
            inits=[i64("one", 1), const("start", 0.0), const("step", 1.0), const("zero", 0.0), const("back", -3.0)],
            opset=13, dims=[{"N": 1}, {"N": 7}, {"N": 30}])
    # Trilu over symbolic dims: a causal mask over a symbolic sequence (the
    # mask is computed from index vectors, not held as a constant)
    add("trilu_symbolic", [h.make_node("Trilu", ["x", "one"], ["u"]), h.make_node("Trilu", ["x", "m2"], ["l"], upper=0),
                           h.make_node("Trilu", ["w"], ["wu"])],
        [("x", T.FLOAT, [2, "S", "S"]), ("w", T.INT32, ["N", 7])], ["u", "l", "wu"],
        inits=[i64("one", 1), i64("m2", -2)], opset=14,
        dims=[{"S": 1, "N": 1}, {"S": 5, "N": 3}, {"S": 13, "N": 11}], ranges={"w": (-50, 50)})
    add("range_constant", [h.make_node("Range", ["a", "b", "c"], ["r"])], [("x", T.FLOAT, [1])], ["r"],
        inits=[f32("a", 1.5), f32("b", -3.0), f32("c", -0.7)], opset=13)


def assume_cases():
    # PaddleOCR's detector: an FPN adds x downsampled 16x to x downsampled 32x
    # and upsampled 2x: (H - 1) floordiv 16 + 1 vs ((H - 1) floordiv 32 + 1) * 2,
    # equal when H is a multiple of 32; checked at run time (the entry point
    # returns -1 otherwise, where ONNX Runtime refuses the shapes)
    pool = lambda i, o: h.make_node("MaxPool", [i], [o], kernel_shape=[1, 1], strides=[2, 2])
    nodes = [pool("x", "a1"), pool("a1", "a2"), pool("a2", "a3"), pool("a3", "a4"), pool("a4", "b5"),
             h.make_node("Resize", ["b5", "", "sc"], ["b6"], mode="nearest"), h.make_node("Add", ["a4", "b6"], ["y"])]
    add("fpn_add_assumed_equal", nodes, [("x", T.FLOAT, [1, 2, "H", "W"])], ["y"], inits=[f32("sc", [1, 1, 2, 2])],
        opset=13, dims=[{"H": 64, "W": 32}, {"H": 96, "W": 160}, {"H": 48, "W": 64, "_fails": 1}])
    add("concat_assumed_equal", [h.make_node("Concat", ["a", "b"], ["y"], axis=0)],
        [("a", T.FLOAT, [2, "N"]), ("b", T.FLOAT, [3, "M"])], ["y"], opset=13,
        dims=[{"N": 4, "M": 4}, {"N": 1, "M": 1}, {"N": 4, "M": 5, "_fails": 1}])


# Cases of what is not in lgen yet (issue 15 item 3's symbolic dims as data
# and unproven equal dims, the math functions): run with --pending, where
# they are expected to fail until it is.
PENDING = {# align_corners with scales whose resized length scale * d is not
           # whole: ONNX's reference (and its node tests, which lgen follows)
           # divides by scale * d - 1, ONNX Runtime by the integer length - 1
           "resize_linear_align_corners_scales",
           "resize_cubic_align_corners_scales"}


def all_cases():
    assume_cases()
    range_cases()
    math_cases()
    convtranspose_cases()
    grouped_conv_cases()
    winograd_conv_cases()
    rnn_cases()
    rnn_symbolic_cases()
    control_cases()
    resize_cases()
    pad_cases()
    slice_split_cases()
    symbolic_cases()
    dim_data_cases()
    mod_cases()
    return CASES


# ---------------------------------------------------------------------------
# Running

C_MAIN = r"""#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "m.h"
static void *load(const char *p, size_t n) {
  unsigned char *b = malloc(n ? n : 1);
  FILE *f = fopen(p, "rb");
  if (!b || !f || fread(b, 1, n, f) != n) { fprintf(stderr, "cannot read %s\n", p); exit(3); }
  fclose(f);
  return b;
}
static void save(const char *p, const void *b, size_t n) {
  FILE *f = fopen(p, "wb");
  if (!f || fwrite(b, 1, n, f) != n || fclose(f)) { fprintf(stderr, "cannot write %s\n", p); exit(3); }
}
int main(int argc, char **argv) {
  /* argv: the run folder, then the byte counts of the inputs and outputs,
   * then the symbolic dims */
  char path[4096];
  int k = 2;
  (void)argc;
"""


def c_main(nin, nout):
    s = [C_MAIN]
    for i in range(nin):
        s.append('  snprintf(path, sizeof path, "%%s/in_%d.bin", argv[1]);\n' % i)
        s.append("  void *in%d = load(path, (size_t)atoll(argv[k++]));\n" % i)
    for i in range(nout):
        s.append("  size_t n%d = (size_t)atoll(argv[k++]);\n  void *out%d = calloc(n%d ? n%d : 1, 1);\n" % (i, i, i, i))
    s.append("  int64_t dims[16];\n  for (int d = 0; k < argc && d < 16; d++) dims[d] = atoll(argv[k++]);\n  (void)dims;\n")
    return "".join(s)


def c_call(nin, nout, ndims):
    args = ["in%d" % i for i in range(nin)] + ["out%d" % i for i in range(nout)]
    args += ["dims[%d]" % d for d in range(ndims)]
    s = ["  if (model(%s) != 0) { fprintf(stderr, \"model() failed\\n\"); return 2; }\n" % ", ".join(args)]
    for i in range(nout):
        s.append('  snprintf(path, sizeof path, "%%s/lgen_%d.bin", argv[1]);\n  save(path, out%d, n%d);\n' % (i, i, i))
    s.append("  return 0;\n}\n")
    return "".join(s)


def dim_order(case):
    order = []
    for _, _, shape in case.inputs:
        for d in shape:
            if isinstance(d, str) and d not in order:
                order.append(d)
    return order


def label_of(case, dims):
    return "%s %s" % (case.name, ",".join("%s=%d" % (k, v) for k, v in dims.items() if not k.startswith("_")) or "-")


def random_input(rng, name, onnx_type, shape, rng_spec):
    dt = NP_OF[onnx_type]
    if rng_spec == "halves":
        return (np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.0, 2.4999], dtype=dt)[:int(np.prod(shape))]
                .reshape(shape))
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(dt, np.integer):
        lo, hi = rng_spec or (-20, 20)
        a = rng.integers(lo, hi + 1, shape).astype(dt)
        if name in ("j", "divisor"):
            a[a == 0] = 3
        return a
    lo, hi = rng_spec or (-2.0, 2.0)
    a = rng.uniform(lo, hi, shape).astype(dt)
    if name == "l" and a.size:  # NaNs for IsNaN
        a.flat[::3] = np.nan
    return a


def sh(cmd, cwd=None, timeout=300, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, env=env)
        return p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return 124, "timed out: %s" % " ".join(cmd)


def compare(case, got, want, dtype):
    if got.shape != want.shape and got.size == want.size:
        got = got.reshape(want.shape)
    if np.issubdtype(want.dtype, np.floating):
        w = want.astype(np.float64)
        g = got.astype(np.float64)
        nan_ok = np.array_equal(np.isnan(w), np.isnan(g))
        fin = ~np.isnan(w)
        scale = np.max(np.abs(w[fin]), initial=0.0)
        tol = ATOL + case.rtol * scale
        err = np.max(np.abs(g[fin] - w[fin]), initial=0.0)
        return nan_ok and err <= tol, "max_abs_err %.3g (tolerance %.3g)%s" % (err, tol, "" if nan_ok else ", NaNs differ")
    ok = np.array_equal(got, want)
    return ok, "exact" if ok else "%d of %d elements differ" % (int(np.sum(got != want)), want.size)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lgen", required=True)
    ap.add_argument("--srcdir", required=True)
    ap.add_argument("--node-path", required=True, help="NODE_PATH holding onnxruntime-node")
    ap.add_argument("--only", default="")
    ap.add_argument("--work", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--pending", action="store_true", help="only the cases of PENDING")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    cases = [c for c in all_cases() if (c.name in PENDING) == args.pending]
    if args.only:
        subs = args.only.split(",")
        cases = [c for c in cases if any(s in c.name for s in subs)]
    if args.list:
        print("\n".join(c.name for c in cases))
        return 0
    work = args.work or tempfile.mkdtemp(prefix="lgen-onnx-ops.")
    sys.path.insert(0, os.path.join(args.srcdir, "tests", "onnx"))
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("onnx2json", os.path.join(args.srcdir, "scripts", "lgen-onnx2json"))
    spec = importlib.util.spec_from_loader("onnx2json", loader)
    o2j = importlib.util.module_from_spec(spec)
    loader.exec_module(o2j)
    have_clang = shutil.which("clang") is not None

    # 1. inputs and the ONNX Runtime jobs
    jobs, runs = [], []
    for ci, case in enumerate(cases):
        cdir = os.path.join(work, case.name)
        os.makedirs(cdir, exist_ok=True)
        onnx.save(case.model(), os.path.join(cdir, "model.onnx"))
        ort_model = os.path.join(cdir, "model.onnx")
        if case.ref_nodes:
            ort_model = os.path.join(cdir, "reference.onnx")
            onnx.save(case.model(ref=True), ort_model)
        for di, dims in enumerate(case.dims):
            rdir = os.path.join(cdir, "run%d" % di)
            os.makedirs(rdir, exist_ok=True)
            rng = np.random.default_rng(1000 * ci + di)
            inputs = []
            for k, (name, t, shape) in enumerate(case.inputs):
                concrete = [dims[d] if isinstance(d, str) else d for d in shape]  # noqa: E501
                spec = case.ranges.get(name)
                a = random_input(rng, name, t, concrete, spec(dims) if callable(spec) else spec)
                a.tofile(os.path.join(rdir, "in_%d.bin" % k))
                inputs.append({"name": name, "type": ORT_TYPE[a.dtype.type], "shape": concrete,
                               "file": os.path.join(rdir, "in_%d.bin" % k), "nbytes": a.nbytes})
            jobs.append({"model": ort_model, "inputs": inputs, "out": rdir})
            runs.append((case, cdir, rdir, dims, inputs))
    with open(os.path.join(work, "jobs.json"), "w") as f:
        json.dump(jobs, f)
    rc, log = sh(["node", os.path.join(args.srcdir, "tests", "onnx-ops", "ort_run.js"),
                  os.path.join(work, "jobs.json")], timeout=900, env=dict(os.environ, NODE_PATH=args.node_path))
    if rc != 0:
        print("FAIL: ONNX Runtime runner: %s" % log.strip()[-500:])
        return 1

    # 2. lgen, compile, run, compare (JOBS cases at a time)
    def run_case(case):
        lines = []
        npass = nfail = 0
        cdir = os.path.join(work, case.name)
        model = onnx.load(os.path.join(cdir, "model.onnx"))
        js = o2j.model_to_json(model) if hasattr(o2j, "model_to_json") else None
        jpath = os.path.join(cdir, "model.json")
        if js is None:
            rc, out = sh([sys.executable, os.path.join(args.srcdir, "scripts", "lgen-onnx2json"),
                          os.path.join(cdir, "model.onnx")])
            if rc != 0:
                lines.append("FAIL %s: lgen-onnx2json: %s" % (case.name, out.strip()[-300:]))
                nfail += 1
                return npass, nfail, lines
            js = out
        with open(jpath, "w") as f:
            f.write(js)
        my_runs = [r for r in runs if r[0] is case]
        order = dim_order(case)
        nout = len(case.outputs)
        built = []
        for bi, (flags, cc, omp) in enumerate(BUILDS):
            if cc == "clang" and not have_clang:
                cc = "gcc"
            bdir = os.path.join(cdir, "b%d" % bi)
            os.makedirs(bdir, exist_ok=True)
            rc, out = sh([args.lgen, jpath, "-o", os.path.join(bdir, "m.c"), "-H", os.path.join(bdir, "m.h"),
                          "--name=model"] + flags)
            if rc != 0:
                lines.append("FAIL %s [lgen %s]: %s" % (case.name, " ".join(flags), out.strip()[-600:]))
                nfail += 1
                built = None
                break
            with open(os.path.join(bdir, "main.c"), "w") as f:
                f.write(c_main(len(case.inputs), nout) + c_call(len(case.inputs), nout, len(order)))
            cmd = [cc] + CFLAGS + (["-fopenmp"] if omp else []) + ["-I", bdir, os.path.join(bdir, "m.c"),
                                                                  os.path.join(bdir, "main.c"), "-o",
                                                                  os.path.join(bdir, "prog"), "-lm"]
            rc, out = sh(cmd)
            if rc != 0:
                lines.append("FAIL %s [%s%s %s]: %s" % (case.name, cc, " -fopenmp" if omp else "", " ".join(flags),
                                                 out.strip()[-800:]))
                nfail += 1
                built = None
                break
            if bi == 0 and have_clang:  # the fourth combination: clang -fopenmp, compile only
                rc, out = sh(["clang"] + CFLAGS + ["-fopenmp", "-c", os.path.join(bdir, "m.c"), "-o",
                                                    os.path.join(bdir, "m_clang.o")])
                if rc != 0:
                    lines.append("FAIL %s [clang -fopenmp]: %s" % (case.name, out.strip()[-800:]))
                    nfail += 1
                    built = None
                    break
            built.append((flags, bdir))
        if built is None:
            return npass, nfail, lines
        for (_, _, rdir, dims, inputs) in my_runs:
            with open(os.path.join(rdir, "ort.json")) as f:
                ref = json.load(f)
            label = label_of(case, dims)
            if dims.get("_fails") or dims.get("_refused"):
                # dims the graph assumed equal differ: ONNX Runtime refuses them,
                # the generated entry point must return -1 (the harness exits 2);
                # _refused: dims lgen's form cannot compute (a length it assumed
                # at least 2), which ONNX Runtime accepts
                outs = [4] * len(case.outputs)
                bad = []
                for flags, bdir in built:
                    cmd = [os.path.join(bdir, "prog"), rdir] + [str(i["nbytes"]) for i in inputs]
                    cmd += [str(o) for o in outs] + [str(dims[d]) for d in order]
                    rc, out = sh(cmd, timeout=120)
                    if rc != 2 or "model() failed" not in out:
                        bad.append("[%s] exit %d, not the entry point's -1" % (" ".join(flags) or "default", rc))
                if dims.get("_fails") and "error" not in ref:
                    bad.append("ONNX Runtime accepted these dims")
                if dims.get("_refused") and "error" in ref:
                    bad.append("ONNX Runtime refused these dims: %s" % ref["error"][:80])
                # with --checks the report names the dims
                cdir_chk = os.path.join(cdir, "bchk")
                os.makedirs(cdir_chk, exist_ok=True)
                rc, out = sh([args.lgen, jpath, "-o", os.path.join(cdir_chk, "m.c"), "-H", os.path.join(cdir_chk, "m.h"),
                              "--name=model", "--checks"])
                if rc == 0:
                    with open(os.path.join(cdir_chk, "main.c"), "w") as f:
                        f.write(c_main(len(case.inputs), nout) + c_call(len(case.inputs), nout, len(order)))
                    rc, out = sh(["gcc"] + CFLAGS + ["-I", cdir_chk, os.path.join(cdir_chk, "m.c"),
                                                     os.path.join(cdir_chk, "main.c"), "-o",
                                                     os.path.join(cdir_chk, "prog"), "-lm"])
                if rc == 0:
                    cmd = [os.path.join(cdir_chk, "prog"), rdir] + [str(i["nbytes"]) for i in inputs]
                    rc, out = sh(cmd + [str(o) for o in outs] + [str(dims[d]) for d in order], timeout=120)
                    # _fails: equal dims, or a dim too short for what ONNX Runtime refuses too
                    wants = ["must be at least"] if dims.get("_refused") else ["these dims must be equal",
                                                                               "must be at least"]
                    if rc == 0 or not any(w in out for w in wants):
                        bad.append("[--checks] exit %d, no report naming the dims: %s" % (rc, out.strip()[-200:]))
                else:
                    bad.append("[--checks] %s" % out.strip()[-300:])
                if bad:
                    nfail += 1
                    lines.append("FAIL %s: %s" % (label, "; ".join(bad)))
                else:
                    npass += 1
                    lines.append("PASS %s (%s: model() returns -1; ONNX Runtime: %s)" % (
                        label, "refused dims" if dims.get("_refused") else "unequal dims",
                        ref.get("error", "computes them")[:80]))
                continue
            if "error" in ref:
                lines.append("FAIL %s: ONNX Runtime: %s" % (label, ref["error"]))
                nfail += 1
                continue
            wants = []
            for i, o in enumerate(ref["outputs"]):
                dt = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "int8": np.int8,
                      "int16": np.int16, "int32": np.int32, "int64": np.int64, "bool": np.bool_,
                      "uint8": np.uint8}[o["type"]]
                wants.append(np.fromfile(os.path.join(rdir, "ort_%d.bin" % i), dtype=dt).reshape(o["shape"]))
            ok_all, notes = True, []
            for flags, bdir in built:
                cmd = [os.path.join(bdir, "prog"), rdir] + [str(i["nbytes"]) for i in inputs]
                cmd += [str(w.nbytes) for w in wants] + [str(dims[d]) for d in order]
                rc, out = sh(cmd, timeout=120)
                if rc != 0:
                    ok_all = False
                    notes.append("[%s] exit %d: %s" % (" ".join(flags) or "default", rc, out.strip()[-200:]))
                    continue
                for i, w in enumerate(wants):
                    got = np.fromfile(os.path.join(rdir, "lgen_%d.bin" % i), dtype=w.dtype).reshape(w.shape)
                    ok, why = compare(case, got, w, w.dtype)
                    if not ok:
                        ok_all = False
                        notes.append("[%s] output %d: %s" % (" ".join(flags) or "default", i, why))
                    elif not flags:
                        notes.append("out%d %s" % (i, why))
            if ok_all:
                npass += 1
                lines.append("PASS %s (%s)" % (label, "; ".join(notes)[:200]))
            else:
                nfail += 1
                lines.append("FAIL %s: %s" % (label, "; ".join(notes)[:1500]))
        return npass, nfail, lines

    import concurrent.futures
    npass = nfail = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for p_, f_, lines in pool.map(run_case, cases):
            npass += p_
            nfail += f_
            for line in lines:
                print(line, flush=True)
    if not args.work and nfail == 0:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
