#!/usr/bin/python3
"""Example model graphs for lgen: build them as ONNX, check lgen's C against NumPy.

  models.py onnx MODEL -o OUT.onnx         build the model with onnx.helper
  models.py graph mlp -o OUT.json          the MLP as lgen-graph/1 JSON (base64 constants)
  models.py shim MODEL.onnx NAME -o OUT.c [--dims N=8]
                                           C glue between a generic driver and the
                                           generated NAME(...) (sizes baked in)
  models.py check MODEL MODEL.onnx PROGRAM [--dims N=8] [--seed S] [--workdir DIR]
                                           random input -> in_<i>.bin, run PROGRAM,
                                           compare out_<i>.bin with the NumPy
                                           reference; prints max abs error, OK/FAIL
  models.py list                           the model names

MODEL is mlp, cnn or transformer. Weights are random with a fixed seed; the
NumPy references below are written from the models' definitions, not run
through ONNX or any runtime. Needs Debian's python3-onnx and python3-numpy.
"""
import argparse
import base64
import json
import math
import os
import subprocess
import sys

import numpy as np

MODELS = ("mlp", "cnn", "transformer")
OPSET = 17  # LayerNormalization is opset 17
ATOL = 1e-4
RTOL = 1e-3


def rng(seed=1234):
    return np.random.default_rng(seed)


def dense(r, fan_in, shape):
    """He-style random weights, so activations stay O(1) through the layers."""
    return (r.standard_normal(shape) * math.sqrt(2.0 / fan_in)).astype(np.float32)


# ---------------------------------------------------------------------------
# The models, as (nodes, initializers, inputs, outputs) with onnx.helper

def mlp_weights(r):
    return {
        "W1": dense(r, 784, (256, 784)),  # Gemm transB=1: PyTorch's Linear layout
        "b1": (r.standard_normal(256) * 0.1).astype(np.float32),
        "W2": dense(r, 256, (256, 128)),
        "b2": (r.standard_normal(128) * 0.1).astype(np.float32),
        "W3": dense(r, 128, (128, 10)),
        "b3": (r.standard_normal(10) * 0.1).astype(np.float32),
    }


def build_mlp(h, w):
    nodes = [
        h.make_node("Gemm", ["x", "W1", "b1"], ["h1"], name="fc1", transB=1),
        h.make_node("Relu", ["h1"], ["a1"], name="relu1"),
        h.make_node("Gemm", ["a1", "W2", "b2"], ["h2"], name="fc2"),
        h.make_node("Relu", ["h2"], ["a2"], name="relu2"),
        h.make_node("Gemm", ["a2", "W3", "b3"], ["z"], name="fc3"),
        h.make_node("Softmax", ["z"], ["y"], name="softmax", axis=-1),
    ]
    return nodes, [("x", ["N", 784])], [("y", ["N", 10])]


def ref_mlp(w, x):
    x = x.astype(np.float64)
    a1 = np.maximum(x @ w["W1"].T + w["b1"], 0)
    a2 = np.maximum(a1 @ w["W2"] + w["b2"], 0)
    z = a2 @ w["W3"] + w["b3"]
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return [e / e.sum(axis=-1, keepdims=True)]


CNN_C = 16


def bn_weights(r, c, prefix):
    return {
        prefix + "_scale": (1 + 0.1 * r.standard_normal(c)).astype(np.float32),
        prefix + "_bias": (0.1 * r.standard_normal(c)).astype(np.float32),
        prefix + "_mean": (0.1 * r.standard_normal(c)).astype(np.float32),
        prefix + "_var": (1 + 0.2 * r.random(c)).astype(np.float32),
    }


def cnn_weights(r):
    w = {"conv0_W": dense(r, 3 * 9, (CNN_C, 3, 3, 3)), "conv0_B": np.zeros(CNN_C, np.float32),
         "conv1_W": dense(r, CNN_C * 9, (CNN_C, CNN_C, 3, 3)),
         "conv2_W": dense(r, CNN_C * 9, (CNN_C, CNN_C, 3, 3)),
         "fc_W": dense(r, CNN_C, (10, CNN_C)), "fc_b": (0.1 * r.standard_normal(10)).astype(np.float32)}
    for k in ("bn0", "bn1", "bn2"):
        w.update(bn_weights(r, CNN_C, k))
    return w


def build_cnn(h, w):
    def bn(x, y, k):
        return h.make_node("BatchNormalization", [x, k + "_scale", k + "_bias", k + "_mean", k + "_var"], [y],
                           name=k, epsilon=1e-5)
    pads = [1, 1, 1, 1]
    nodes = [
        h.make_node("Conv", ["x", "conv0_W", "conv0_B"], ["c0"], name="conv0", kernel_shape=[3, 3], pads=pads),
        bn("c0", "n0", "bn0"),
        h.make_node("Relu", ["n0"], ["r0"], name="relu0"),
        # residual block
        h.make_node("Conv", ["r0", "conv1_W"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=pads),
        bn("c1", "n1", "bn1"),
        h.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        h.make_node("Conv", ["r1", "conv2_W"], ["c2"], name="conv2", kernel_shape=[3, 3], pads=pads),
        bn("c2", "n2", "bn2"),
        h.make_node("Add", ["n2", "r0"], ["s"], name="residual"),
        h.make_node("Relu", ["s"], ["r2"], name="relu2"),
        h.make_node("GlobalAveragePool", ["r2"], ["p"], name="gap"),
        h.make_node("Flatten", ["p"], ["f"], name="flatten", axis=1),
        h.make_node("Gemm", ["f", "fc_W", "fc_b"], ["y"], name="fc", transB=1),
    ]
    return nodes, [("x", [1, 3, 32, 32])], [("y", [1, 10])]


def ref_conv3x3(x, wt, b=None):
    """NCHW, padding 1, stride 1, as a sum over the 9 shifted windows."""
    n, c, hh, ww = x.shape
    xp = np.zeros((n, c, hh + 2, ww + 2))
    xp[:, :, 1:-1, 1:-1] = x
    out = np.zeros((n, wt.shape[0], hh, ww))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + hh, j:j + ww], wt[:, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    return out


def ref_bn(x, w, k):
    s = (w[k + "_scale"] / np.sqrt(w[k + "_var"].astype(np.float64) + 1e-5))[None, :, None, None]
    return (x - w[k + "_mean"][None, :, None, None]) * s + w[k + "_bias"][None, :, None, None]


def ref_cnn(w, x):
    x = x.astype(np.float64)
    r0 = np.maximum(ref_bn(ref_conv3x3(x, w["conv0_W"], w["conv0_B"]), w, "bn0"), 0)
    r1 = np.maximum(ref_bn(ref_conv3x3(r0, w["conv1_W"]), w, "bn1"), 0)
    r2 = np.maximum(ref_bn(ref_conv3x3(r1, w["conv2_W"]), w, "bn2") + r0, 0)
    f = r2.mean(axis=(2, 3))
    return [f @ w["fc_W"].T + w["fc_b"]]


T_SEQ, T_D, T_HEADS, T_FF = 64, 128, 4, 512


def transformer_weights(r):
    d = T_D
    w = {}
    for k in ("ln1", "ln2"):
        w[k + "_g"] = (1 + 0.1 * r.standard_normal(d)).astype(np.float32)
        w[k + "_b"] = (0.1 * r.standard_normal(d)).astype(np.float32)
    for k in ("Wq", "Wk", "Wv", "Wo"):
        w[k] = dense(r, d, (d, d)) * np.float32(0.7)
    w["bo"] = (0.1 * r.standard_normal(d)).astype(np.float32)
    w["W1"] = dense(r, d, (d, T_FF))
    w["b1"] = (0.1 * r.standard_normal(T_FF)).astype(np.float32)
    w["W2"] = dense(r, T_FF, (T_FF, d)) * np.float32(0.5)
    w["b2"] = (0.1 * r.standard_normal(d)).astype(np.float32)
    dh = d // T_HEADS
    w["heads_shape"] = np.array([1, T_SEQ, T_HEADS, dh], np.int64)
    w["model_shape"] = np.array([1, T_SEQ, d], np.int64)
    w["sqrt_dh"] = np.array(math.sqrt(dh), np.float32)
    w["sqrt2"] = np.array(math.sqrt(2.0), np.float32)
    w["one"] = np.array(1.0, np.float32)
    w["half"] = np.array(0.5, np.float32)
    return w


def build_transformer(h, w):
    n = h.make_node
    nodes = [
        n("LayerNormalization", ["x", "ln1_g", "ln1_b"], ["l1"], name="ln1", axis=-1, epsilon=1e-5),
        n("MatMul", ["l1", "Wq"], ["q"], name="q_proj"),
        n("MatMul", ["l1", "Wk"], ["k"], name="k_proj"),
        n("MatMul", ["l1", "Wv"], ["v"], name="v_proj"),
        n("Reshape", ["q", "heads_shape"], ["q4"]),
        n("Reshape", ["k", "heads_shape"], ["k4"]),
        n("Reshape", ["v", "heads_shape"], ["v4"]),
        n("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),   # [1, H, S, dh]
        n("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),   # [1, H, dh, S]
        n("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        n("MatMul", ["qh", "kt"], ["scores"], name="qk"),
        n("Div", ["scores", "sqrt_dh"], ["scaled"]),
        n("Softmax", ["scaled"], ["attn"], axis=-1),
        n("MatMul", ["attn", "vh"], ["ctx"], name="av"),
        n("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        n("Reshape", ["ctx_t", "model_shape"], ["ctx2"]),
        n("MatMul", ["ctx2", "Wo"], ["o"], name="o_proj"),
        n("Add", ["o", "bo"], ["ob"]),
        n("Add", ["x", "ob"], ["res1"], name="residual1"),
        n("LayerNormalization", ["res1", "ln2_g", "ln2_b"], ["l2"], name="ln2", axis=-1, epsilon=1e-5),
        n("MatMul", ["l2", "W1"], ["f1"], name="ffn1"),
        n("Add", ["f1", "b1"], ["f1b"]),
        # GELU written out: x * 0.5 * (1 + erf(x / sqrt 2))
        n("Div", ["f1b", "sqrt2"], ["g0"]),
        n("Erf", ["g0"], ["g1"]),
        n("Add", ["g1", "one"], ["g2"]),
        n("Mul", ["f1b", "half"], ["g3"]),
        n("Mul", ["g3", "g2"], ["gelu"]),
        n("MatMul", ["gelu", "W2"], ["f2"], name="ffn2"),
        n("Add", ["f2", "b2"], ["f2b"]),
        n("Add", ["res1", "f2b"], ["y"], name="residual2"),
    ]
    return nodes, [("x", [1, T_SEQ, T_D])], [("y", [1, T_SEQ, T_D])]


def ref_layernorm(x, g, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def ref_transformer(w, x):
    from math import erf
    x = x[0].astype(np.float64)  # [S, D]
    dh = T_D // T_HEADS
    l1 = ref_layernorm(x, w["ln1_g"], w["ln1_b"])
    q, k, v = l1 @ w["Wq"], l1 @ w["Wk"], l1 @ w["Wv"]
    ctx = np.zeros_like(q)
    for hd in range(T_HEADS):
        cols = slice(hd * dh, (hd + 1) * dh)
        s = q[:, cols] @ k[:, cols].T / math.sqrt(dh)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        ctx[:, cols] = (e / e.sum(axis=-1, keepdims=True)) @ v[:, cols]
    res1 = x + ctx @ w["Wo"] + w["bo"]
    f1 = ref_layernorm(res1, w["ln2_g"], w["ln2_b"]) @ w["W1"] + w["b1"]
    gelu = f1 * 0.5 * (1 + np.vectorize(erf)(f1 / math.sqrt(2)))
    return [(res1 + gelu @ w["W2"] + w["b2"])[None]]


SPECS = {
    "mlp": (mlp_weights, build_mlp, ref_mlp),
    "cnn": (cnn_weights, build_cnn, ref_cnn),
    "transformer": (transformer_weights, build_transformer, ref_transformer),
}


def make_onnx(name):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    weights_fn, build_fn, _ = SPECS[name]
    w = weights_fn(rng())
    nodes, ins, outs = build_fn(helper, w)
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in ins],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outs],
        initializer=[numpy_helper.from_array(v, k) for k, v in sorted(w.items())])
    model = helper.make_model(graph, producer_name="lgen-examples",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8  # what onnx 1.12 writes for opset 17
    return model


def weights_of(model):
    from onnx import numpy_helper
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


# ---------------------------------------------------------------------------
# lgen-graph/1 form of the MLP

def mlp_graph_json():
    w = mlp_weights(rng())

    def const(name):
        a = np.ascontiguousarray(w[name].astype("<f4"))
        return {"name": name, "type": "f32", "shape": list(a.shape),
                "base64": base64.b64encode(a.tobytes()).decode("ascii")}
    doc = {
        "format": "lgen-graph/1",
        "name": "mlp",
        "inputs": [{"name": "x", "type": "f32", "shape": ["N", 784]}],
        "outputs": ["y"],
        "constants": [const(k) for k in ("W1", "b1", "W2", "b2", "W3", "b3")],
        "nodes": [
            {"name": "fc1_t", "op": "transpose", "inputs": ["W1"], "outputs": ["W1t"], "attrs": {"perm": [1, 0]}},
            {"name": "fc1", "op": "matmul", "inputs": ["x", "W1t"], "outputs": ["h1"]},
            {"op": "add", "inputs": ["h1", "b1"], "outputs": ["h1b"]},
            {"op": "relu", "inputs": ["h1b"], "outputs": ["a1"]},
            {"name": "fc2", "op": "matmul", "inputs": ["a1", "W2"], "outputs": ["h2"]},
            {"op": "add", "inputs": ["h2", "b2"], "outputs": ["h2b"]},
            {"op": "relu", "inputs": ["h2b"], "outputs": ["a2"]},
            {"name": "fc3", "op": "matmul", "inputs": ["a2", "W3"], "outputs": ["z"]},
            {"op": "add", "inputs": ["z", "b3"], "outputs": ["zb"]},
            {"op": "softmax", "inputs": ["zb"], "outputs": ["y"], "attrs": {"axis": -1}},
        ],
    }
    return json.dumps(doc, indent=1) + "\n"


# ---------------------------------------------------------------------------
# C glue: the generic drivers (run_model.c, bench/models/time_model.c) call
# lgen_model_call / lgen_model_run, which this writes for one model.

def io_shapes(model, dims):
    """[(name, shape, numpy dtype)] of inputs and outputs (constants excluded),
    symbolic dims replaced by their values; the symbols in ABI order."""
    from onnx import mapping
    consts = {t.name for t in model.graph.initializer}
    order = []

    def shape_of(vi, record):
        out = []
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param:
                if d.dim_param not in dims:
                    raise SystemExit("models.py: give a value for dim '%s' (--dims %s=...)" % (d.dim_param, d.dim_param))
                if record and d.dim_param not in order:
                    order.append(d.dim_param)
                out.append(dims[d.dim_param])
            else:
                out.append(d.dim_value)
        return out

    def dtype_of(vi):
        return np.dtype(mapping.TENSOR_TYPE_TO_NP_TYPE[vi.type.tensor_type.elem_type])
    ins = [(vi.name, shape_of(vi, True), dtype_of(vi)) for vi in model.graph.input if vi.name not in consts]
    outs = [(vi.name, shape_of(vi, False), dtype_of(vi)) for vi in model.graph.output]
    return ins, outs, order


def shim_c(model, name, dims):
    ins, outs, order = io_shapes(model, dims)
    return shim_from_io(name, [(s, dt) for _, s, dt in ins], [(s, dt) for _, s, dt in outs],
                        [(d, dims[d]) for d in order])


def shim_from_io(name, ins, outs, dims):
    """ins/outs: [(shape, numpy dtype)] with the dims' values in; dims: the
    symbolic dims [(name, value)] in ABI order."""
    def nbytes(s, dt):
        return int(np.prod(s, dtype=np.int64)) * np.dtype(dt).itemsize
    dimargs = ["(int64_t)%d" % v for _, v in dims]
    tens_in = ["in[%d]" % i for i in range(len(ins))]
    tens_out = ["out[%d]" % i for i in range(len(outs))]
    c = ["/* Generated by examples/models.py: glue between a generic driver and",
         " * the generated %s(...), with the symbolic dims fixed: %s. */" % (
             name, ", ".join("%s=%d" % d for d in dims) or "none"),
         "#include <stddef.h>", "#include <stdint.h>", '#include "%s.h"' % name, "",
         'const char *const lgen_model_name = "%s";' % name,
         "const int lgen_model_ninputs = %d;" % len(ins),
         "const int lgen_model_noutputs = %d;" % len(outs),
         "const size_t lgen_model_input_bytes[] = {%s};" % ", ".join("%d" % nbytes(s, dt) for s, dt in ins),
         "const size_t lgen_model_output_bytes[] = {%s};" % ", ".join("%d" % nbytes(s, dt) for s, dt in outs),
         "",
         "size_t lgen_model_workspace_size(void) { return %s_workspace_size(%s); }" % (
             name, ", ".join(dimargs)),
         "",
         "void lgen_model_run(void *const *in, void *const *out, void *workspace)",
         "{",
         "  %s_run(%s);" % (name, ", ".join(tens_in + tens_out + dimargs + ["workspace"])),
         "}",
         "",
         "int lgen_model_call(void *const *in, void *const *out)",
         "{",
         "  return %s(%s);" % (name, ", ".join(tens_in + tens_out + dimargs)),
         "}", ""]
    return "\n".join(c)


# ---------------------------------------------------------------------------
# check: run a compiled driver on random input and compare with NumPy

def random_inputs(model, dims, seed):
    r = rng(seed)
    ins, _, _ = io_shapes(model, dims)
    return [r.standard_normal(s).astype(dt) for _, s, dt in ins]


def compare(got, ref):
    err = np.abs(got.astype(np.float64) - ref)
    ok = bool(np.all(err <= ATOL + RTOL * np.abs(ref))) and not np.isnan(got).any()
    return float(err.max()) if err.size else 0.0, ok


def check(name, onnx_path, program, dims, seed, label=None, quiet=False, workdir="."):
    import onnx
    model = onnx.load(onnx_path)
    xs = random_inputs(model, dims, seed)
    for i, x in enumerate(xs):
        x.astype(x.dtype.newbyteorder("<")).tofile(os.path.join(workdir, "in_%d.bin" % i))
    p = subprocess.run([os.path.abspath(program)], cwd=workdir, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if p.returncode != 0:
        print("%s: FAIL (%s exited %d)\n%s" % (label or name, program, p.returncode,
                                              p.stdout.decode(errors="replace")))
        return False
    refs = SPECS[name][2](weights_of(model), *xs)
    _, outs, _ = io_shapes(model, dims)
    all_ok, worst = True, 0.0
    for i, ((oname, shape, dt), ref) in enumerate(zip(outs, refs)):
        got = np.fromfile(os.path.join(workdir, "out_%d.bin" % i), dtype=dt.newbyteorder("<")).reshape(shape)
        err, ok = compare(got, ref)
        worst = max(worst, err)
        all_ok = all_ok and ok
    if not quiet:
        print("%s: max abs error %.3g vs NumPy: %s" % (label or name, worst, "OK" if all_ok else "FAIL"))
    return all_ok


def parse_dims(items):
    dims = {}
    for it in items or []:
        for part in it.split(","):
            k, _, v = part.partition("=")
            dims[k] = int(v)
    return dims


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("onnx")
    p.add_argument("model", choices=MODELS)
    p.add_argument("-o", required=True)
    p = sub.add_parser("graph")
    p.add_argument("model", choices=["mlp"])
    p.add_argument("-o", required=True)
    p = sub.add_parser("shim")
    p.add_argument("onnx")
    p.add_argument("name")
    p.add_argument("-o", required=True)
    p.add_argument("--dims", action="append")
    p = sub.add_parser("check")
    p.add_argument("model", choices=MODELS)
    p.add_argument("onnx")
    p.add_argument("program")
    p.add_argument("--dims", action="append")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--label")
    p.add_argument("--workdir", help="where in_/out_<i>.bin go (default: PROGRAM.io/)")
    sub.add_parser("list")
    a = ap.parse_args(argv)
    if a.cmd == "list":
        print("\n".join(MODELS))
    elif a.cmd == "onnx":
        with open(a.o, "wb") as f:
            f.write(make_onnx(a.model).SerializeToString())
    elif a.cmd == "graph":
        with open(a.o, "w") as f:
            f.write(mlp_graph_json())
    elif a.cmd == "shim":
        import onnx
        text = shim_c(onnx.load(a.onnx), a.name, parse_dims(a.dims))
        with open(a.o, "w") as f:
            f.write(text)
    elif a.cmd == "check":
        workdir = a.workdir or a.program + ".io"
        os.makedirs(workdir, exist_ok=True)
        ok = check(a.model, a.onnx, a.program, parse_dims(a.dims), a.seed, a.label, workdir=workdir)
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
