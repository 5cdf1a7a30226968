#!/usr/bin/python3
"""Writes the model graphs of the golden tests (tests/golden/*.json).

  python3 tests/golden/graphs.py        (from the source tree; needs python3-onnx)

The three example models of examples/models.py at tiny sizes (through
scripts/lgen-onnx2json), and small lgen-graph/1 graphs that each show one
fusion kind (the first line of each names it). They are inputs: write them
again only when the set changes, then `make regen-golden` and read the
diff."""
import base64
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True
here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(top, "examples"))
import models  # noqa: E402


def data(shape, seed, scale=0.5):
    r = np.random.default_rng(seed)
    return [round(float(v), 4) for v in (r.standard_normal(int(np.prod(shape))) * scale)]


def const(name, shape, seed):
    return {"name": name, "type": "f32", "shape": list(shape), "data": data(shape, seed)}


def graph(name, what, inputs, consts, nodes, outputs):
    """`what` is the fusion kind it shows (the golden test's comment)."""
    return {"format": "lgen-graph/1", "name": name,
            "inputs": [{"name": n, "type": "f32", "shape": s} for n, s in inputs],
            "constants": consts, "outputs": outputs,
            "nodes": [dict(zip(("name", "op", "inputs", "outputs"), n[:4]), **({"attrs": n[4]} if len(n) > 4 else {}))
                      for n in nodes]}


SMALL = [
    graph("g_inline", "pointwise chain inlined into its last op",
          [("x", ["N", 6]), ("y", ["N", 6])], [],
          [("sum", "add", ["x", "y"], ["s"]), ("act", "tanh", ["s"], ["t"]), ("scale", "mul", ["t", "x"], ["z"])],
          ["z"]),
    graph("g_epilogue", "matmul + bias + relu: the bias and relu at the store (epilogue), the zero fill as init",
          [("x", ["N", 8])], [const("w", [8, 6], 1), const("b", [6], 2)],
          [("fc", "matmul", ["x", "w"], ["h"]), ("bias", "add", ["h", "b"], ["hb"]), ("act", "relu", ["hb"], ["y"])],
          ["y"]),
    graph("g_layout", "a transpose read through its consumer's map (no copy)",
          [("x", [5, 7])], [const("b", [5], 3)],
          [("tr", "transpose", ["x"], ["xt"], {"perm": [1, 0]}), ("bias", "add", ["xt", "b"], ["y"])],
          ["y"]),
    graph("g_siblings", "mean and mean of squares share one pass (sibling reductions)",
          [("x", [4, 64])], [],
          [("mean", "reduce_mean", ["x"], ["m"], {"axes": [1]}), ("sq", "mul", ["x", "x"], ["x2"]),
           ("msq", "reduce_mean", ["x2"], ["m2"], {"axes": [1]})],
          ["m", "m2"]),
    graph("g_softmax", "softmax from primitives: one online softmax, the scale before it folded in",
          [("x", ["N", 32])], [const("c", [], 4)],
          [("scale", "mul", ["x", "c"], ["xs"]), ("max", "reduce_max", ["xs"], ["m"], {"axes": [1], "keepdims": 1}),
           ("sub", "sub", ["xs", "m"], ["d"]), ("exp", "exp", ["d"], ["e"]),
           ("sum", "reduce_sum", ["e"], ["s"], {"axes": [1], "keepdims": 1}), ("div", "div", ["e", "s"], ["y"])],
          ["y"]),
    graph("g_prologue", "relu of an input computed while the matmul packs it (prologue)",
          [("x", [64, 512]), ("w", [512, 512])], [],
          [("act", "relu", ["w"], ["r"]), ("fc", "matmul", ["x", "r"], ["y"])],
          ["y"]),
    graph("g_pad", "a padded convolution: one padded copy, no bounds tests in its loops",
          [("x", [1, 3, 10, 10])], [const("w", [4, 3, 3, 3], 6)],
          [("conv", "conv_2d_nchw_fchw", ["x", "w"], ["y"], {"padding": [[1, 1], [1, 1]]})],
          ["y"]),
    graph("g_diamond", "a diamond: tanh computed once for both outputs (one pass)",
          [("x", ["N", 5])], [const("one", [], 7), const("two", [], 8)],
          [("a", "tanh", ["x"], ["a"]), ("b", "add", ["a", "one"], ["b"]), ("c", "mul", ["a", "two"], ["c"])],
          ["b", "c"]),
    graph("g_stored", "an output read by the next op: stored once, used from registers",
          [("x", ["N", 5])], [const("two", [], 9)],
          [("a", "tanh", ["x"], ["y1"]), ("b", "mul", ["y1", "two"], ["y2"])],
          ["y1", "y2"]),
    graph("g_residual", "a residual stream read by a row mean, a centring and the next add: recomputed in "
          "its readers while that moves fewer bytes, stored once it would not (x2)",
          [("x0", ["N", 4])], [const("w0", [4, 4], 10), const("w1", [4, 4], 11), const("w2", [4, 4], 12)],
          [n for i in range(3) for n in (
              ("mean%d" % i, "reduce_mean", ["x%d" % i], ["m%d" % i], {"axes": [1], "keepdims": 1}),
              ("centre%d" % i, "sub", ["x%d" % i, "m%d" % i], ["c%d" % i]),
              ("fc%d" % i, "matmul", ["c%d" % i, "w%d" % i], ["h%d" % i]),
              ("add%d" % i, "add", ["x%d" % i, "h%d" % i], ["x%d" % (i + 1)]))],
          ["x3"]),
    graph("g_rows", "a LayerNorm by hand over rows too many for L2: one nest over the rows, each op's own "
          "loops inside it bound to the group's row (row fusion)",
          [("x", [331, 1031])], [const("eps", [1], 13)],
          [("mean", "reduce_mean", ["x"], ["m"], {"axes": [-1], "keepdims": 1}), ("centre", "sub", ["x", "m"], ["d"]),
           ("sq", "mul", ["d", "d"], ["d2"]), ("var", "reduce_mean", ["d2"], ["v"], {"axes": [-1], "keepdims": 1}),
           ("veps", "add", ["v", "eps"], ["ve"]), ("sd", "sqrt", ["ve"], ["s"]), ("inv", "reciprocal", ["s"], ["r"]),
           ("norm", "mul", ["d", "r"], ["y"])],
          ["y"]),
    graph("g_chunks", "a softmax row-fused with the ops before and after it, chunk by chunk: the tensors they "
          "share in per-thread chunk buffers, indexed through lgen_shift",
          [("x", [701, 131])], [const("b", [131], 14)],
          [("bias", "add", ["x", "b"], ["xb"]), ("sm", "softmax", ["xb"], ["y"], {"axis": 1}),
           ("act", "tanh", ["y"], ["z"])],
          ["z"]),
    graph("g_topk", "a non-structured op: its template's call",
          [("x", [3, 100])], [],
          [("top", "topk", ["x"], ["v", "i"], {"k": 4})],
          ["v", "i"]),
]


def tiny_examples(work):
    """The example models at tiny sizes, as ONNX JSON."""
    models.T_SEQ, models.T_D, models.T_HEADS, models.T_FF = 8, 16, 2, 32
    mlp_weights = models.mlp_weights

    def tiny_mlp_weights(r):
        return {"W1": models.dense(r, 16, (12, 16)), "b1": (r.standard_normal(12) * 0.1).astype(np.float32),
                "W2": models.dense(r, 12, (12, 8)), "b2": (r.standard_normal(8) * 0.1).astype(np.float32),
                "W3": models.dense(r, 8, (8, 4)), "b3": (r.standard_normal(4) * 0.1).astype(np.float32)}

    build_mlp = models.build_mlp

    def tiny_build_mlp(h, w):
        nodes, _, _ = build_mlp(h, w)
        return nodes, [("x", ["N", 16])], [("y", ["N", 4])]

    specs = dict(models.SPECS)
    specs["mlp"] = (tiny_mlp_weights, tiny_build_mlp) + tuple(specs["mlp"][2:])
    models.SPECS.update(specs)
    out = {}
    for name in ("mlp", "cnn", "transformer"):
        model = models.make_onnx(name)
        path = os.path.join(work, name + ".onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        text = subprocess.run([sys.executable, os.path.join(top, "scripts", "lgen-onnx2json"), path],
                              check=True, capture_output=True, text=True).stdout
        out["example_" + name] = text
    models.mlp_weights = mlp_weights
    return out


def main():
    for g in SMALL:
        with open(os.path.join(here, g["name"] + ".json"), "w") as f:
            json.dump(g, f, indent=1)
            f.write("\n")
    with tempfile.TemporaryDirectory() as work:
        for name, text in tiny_examples(work).items():
            with open(os.path.join(here, name + ".json"), "w") as f:
                f.write(text)


if __name__ == "__main__":
    main()
