#!/usr/bin/python3
"""The binary ONNX reader (src/frontend/onnx_read_pb.c), the file policy of
model data files (src/util/data_file.c), and --dim / --input-shape.

Groups (each check prints PASS/FAIL NAME; the last line is the totals):

  same      models written with onnx.helper (every attribute type, typed and
            raw initializers, float16/bool/int8 data, symbolic and unnamed
            dims, an If with subgraphs): `lgen m.onnx` and `lgen m.json` (the
            same model through protobuf's JSON mapping) give the same C byte
            for byte (the first line names the file), or the same error;
            standard input and --input-format=onnx read it too
  badpb     truncated models (every prefix of a small one), wrong wire
            types, huge lengths, groups, garbage, deep nesting: exit 1, one
            error line 'FILE: byte N (FIELD PATH): error: ...', no output
  files     external data (binary and JSON ONNX) and lgen-graph/1's "file":
            inside the folder it works and -MD lists it; '../', an absolute
            path, a symlink out, a FIFO (under timeout: a hang fails), a file
            shorter than the tensor, /dev/zero (named, linked, or in an
            allowed folder), a 2^31 x 3 tensor in a 24-byte file are errors
            naming the path and the tensor; --allow-external widens the
            folder
  dims      --dim and --input-shape fix dims before inference (the entry
            point loses the size parameter, shapes fold), on both ONNX forms
            and lgen-graph/1; bad uses exit 2 with the option in the message
  values    --input-value makes an input a constant: an If on a scalar
            sample-rate input folds (a branch that cannot build for the
            shapes is never built); the entry point loses the input; the
            program, compiled with gcc -Werror, gives the hand-computed
            answer of the branch the value selects; bad values exit 2
"""
import argparse
import json
import os
import re
import shutil
import stat
import subprocess
import sys

import numpy as np
import onnx
from google.protobuf import json_format
from onnx import TensorProto, helper, numpy_helper

RESULTS = [0, 0]


def check(name, ok, detail=""):
    RESULTS[0 if ok else 1] += 1
    print("%s: %s%s" % ("PASS" if ok else "FAIL", name, "" if ok or not detail else "\n    " + detail.replace("\n", "\n    ")))


def lgen(opts, args, cwd, stdin=None, timeout=20):
    try:
        p = subprocess.run([opts.lgen] + args, cwd=cwd, input=stdin, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "timeout", b"", ""


def save_both(model, folder, stem):
    onnx.save(model, os.path.join(folder, stem + ".onnx"))
    with open(os.path.join(folder, stem + ".json"), "w") as f:
        f.write(json_format.MessageToJson(model))


def body(c_path):
    with open(c_path) as f:
        text = f.read()
    return text.split("\n", 1)[1]


def first_error(err):
    for line in err.splitlines():
        m = re.search(r"\berror:\s*(.*)", line)
        if m:
            return m.group(1)
    return None


def opset(model_opset):
    return [helper.make_opsetid("", model_opset)]


# ---------------------------------------------------------------------------
# same: binary == JSON

def models():
    """(stem, ModelProto) pairs exercising what the reader converts."""
    out = []
    f32 = TensorProto.FLOAT
    # attributes of every common type, raw and typed initializers
    x = helper.make_tensor_value_info("x", f32, [1, 3, 8, 8])
    w = numpy_helper.from_array(np.random.RandomState(1).randn(4, 3, 3, 3).astype(np.float32), "w")
    b = helper.make_tensor("b", f32, [4], [0.5, -1.25, 3.0, 1e-3])  # float_data
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1], name="conv_1"),
        helper.make_node("LeakyRelu", ["c"], ["r"], alpha=0.1),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2], auto_pad="NOTSET"),
        helper.make_node("Constant", [], ["k"], value=helper.make_tensor("kv", f32, [1], [0.3])),
        helper.make_node("Mul", ["p", "k"], ["y"]),
    ]
    y = helper.make_tensor_value_info("y", f32, None)
    out.append(("conv", helper.make_model(helper.make_graph(nodes, "conv_model", [x], [y], [w, b]),
                                          opset_imports=opset(13))))
    # symbolic, unnamed and named dims; int64 and int32 typed data; f16 and bool
    x = helper.make_tensor_value_info("x", f32, ["N", None, 4])
    shp = helper.make_tensor("shp", TensorProto.INT64, [2], [0, -1])
    h = helper.make_tensor("h", TensorProto.FLOAT16, [4], np.array([1, 2, 3, 0.5], np.float16).view(np.uint16).tolist())
    m = helper.make_tensor("m", TensorProto.BOOL, [4], [1, 0, 1, 1])
    i8 = helper.make_tensor("i8", TensorProto.INT8, [4], [-3, 5, 127, -128])
    nodes = [
        helper.make_node("Cast", ["h"], ["hf"], to=f32),
        helper.make_node("Add", ["x", "hf"], ["a"]),
        helper.make_node("Cast", ["i8"], ["i8f"], to=f32),
        helper.make_node("Where", ["m", "a", "i8f"], ["wh"]),
        helper.make_node("Reshape", ["wh", "shp"], ["y"]),
        helper.make_node("ReduceSum", ["y"], ["s"], axes=[1], keepdims=0),
    ]
    ys = helper.make_tensor_value_info("s", f32, None)
    out.append(("dims", helper.make_model(helper.make_graph(nodes, "main_graph", [x], [ys], [shp, h, m, i8]),
                                          opset_imports=opset(12))))
    # float lists, strings, ints; Gemm with alpha/beta; Transpose perm; Softmax axis
    x = helper.make_tensor_value_info("x", f32, [2, 5])
    wg = numpy_helper.from_array(np.arange(15, dtype=np.float32).reshape(3, 5) / 7, "wg")
    nodes = [
        helper.make_node("Gemm", ["x", "wg"], ["g"], alpha=0.7, beta=1.3, transB=1),
        helper.make_node("Transpose", ["g"], ["t"], perm=[1, 0]),
        helper.make_node("Softmax", ["t"], ["sm"], axis=0),
        helper.make_node("Gelu", ["sm"], ["y"], approximate="tanh"),
    ] if False else [
        helper.make_node("Gemm", ["x", "wg"], ["g"], alpha=0.7, beta=1.3, transB=1),
        helper.make_node("Transpose", ["g"], ["t"], perm=[1, 0]),
        helper.make_node("Softmax", ["t"], ["y"], axis=0),
    ]
    out.append(("gemm", helper.make_model(helper.make_graph(nodes, "torch-jit-export", [x],
                                                            [helper.make_tensor_value_info("y", f32, None)], [wg]),
                                          opset_imports=opset(13))))
    # an If with two subgraphs (an operator lgen lacks: the same error both ways)
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["o1"])], "then", [],
                               [helper.make_tensor_value_info("o1", f32, [2])])
    else_g = helper.make_graph([helper.make_node("NoSuchOp", ["x"], ["o2"])], "else", [],
                               [helper.make_tensor_value_info("o2", f32, [2])])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g, name="the_if")]
    out.append(("if", helper.make_model(helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                     helper.make_tensor_value_info("x", f32, [2])],
        [helper.make_tensor_value_info("y", f32, [2])]), opset_imports=opset(13))))
    # a misspelt attribute: a warning
    x = helper.make_tensor_value_info("x", f32, [4])
    out.append(("warn", helper.make_model(helper.make_graph(
        [helper.make_node("LeakyRelu", ["x"], ["y"], alpah=0.3)], "g", [x],
        [helper.make_tensor_value_info("y", f32, [4])]), opset_imports=opset(13))))
    # an unknown element type: the same located error
    x = helper.make_tensor_value_info("x", TensorProto.COMPLEX64, [2])
    out.append(("complex", helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g", [x], [helper.make_tensor_value_info("y", f32, [2])]),
        opset_imports=opset(13))))
    return out


def group_same(opts, work):
    d = os.path.join(work, "same")
    os.makedirs(d)
    for stem, model in models():
        save_both(model, d, stem)
        rb, _, eb = lgen(opts, [stem + ".onnx", "-o", stem + ".pb.c", "-H", stem + ".h"], d)
        rj, _, ej = lgen(opts, [stem + ".json", "-o", stem + ".js.c", "-H", stem + ".h"], d)
        if rb == 0 and rj == 0:
            same = body(os.path.join(d, stem + ".pb.c")) == body(os.path.join(d, stem + ".js.c"))
            check("same %s: binary and JSON give the same C" % stem, same)
        else:
            check("same %s: binary and JSON give the same error" % stem,
                  rb == rj == 1 and first_error(eb) == first_error(ej) and first_error(eb),
                  "binary: exit %s %s\nJSON: exit %s %s" % (rb, eb.strip(), rj, ej.strip()))
        if stem == "conv":
            with open(os.path.join(d, "conv.onnx"), "rb") as f:
                data = f.read()
            rs, cs, es = lgen(opts, ["-", "-o", "-"], d, stdin=data)
            lgen(opts, ["conv.onnx", "-o", "conv.noh.c"], d)
            check("same conv: standard input is told apart by content", rs == 0 and cs.decode().split("\n", 1)[1]
                  == body(os.path.join(d, "conv.noh.c")), es)
            shutil.copy(os.path.join(d, "conv.onnx"), os.path.join(d, "conv.bin"))
            rf, _, ef = lgen(opts, ["--input-format=onnx", "conv.bin", "-o", "conv.bin.c"], d)
            check("same conv: --input-format=onnx reads a file of another name", rf == 0, ef)
        if stem == "warn":
            check("same warn: an attribute LeakyRelu lacks is a warning with a suggestion, both forms",
                  rb == 0 and rj == 0 and "ONNX LeakyRelu has no attribute 'alpah' (did you mean 'alpha'?)" in eb
                  and "ONNX LeakyRelu has no attribute 'alpah'" in ej and "warning:" in eb, eb + ej)
            check("same conv: standard attributes give no warning", "warning" not in open(os.path.join(d, "conv.err")).read())
        if stem == "conv":
            with open(os.path.join(d, "conv.err"), "w") as f:
                f.write(eb + ej)
        if stem == "if":
            check("same if: the unsupported operator inside the If's branch is named",
                  rb == 1 and "NoSuchOp" in eb and "If" in eb, eb)


# ---------------------------------------------------------------------------
# badpb: malformed protobuf

LOC_RE = re.compile(r"^(\S+): byte (\d+) \((.*)\): error: (.+)$")


def expect_located_error(opts, d, fname, name, want_re=None):
    out = os.path.join(d, "out.c")
    if os.path.exists(out):
        os.unlink(out)
    rc, so, err = lgen(opts, [fname, "-o", "out.c"], d, timeout=10)
    lines = [l for l in err.splitlines() if l.strip()]
    errors = [l for l in lines if "error:" in l]
    m = LOC_RE.match(lines[0]) if lines else None
    ok = (rc == 1 and m is not None and len(errors) == 1 and not os.path.exists(out) and not so
          and int(m.group(2)) <= os.path.getsize(os.path.join(d, fname)))
    if ok and want_re:
        ok = re.search(want_re, lines[0]) is not None
    check(name, ok, "exit %s, stderr: %s" % (rc, err.strip()[:600]))
    return lines[0] if lines else ""


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def group_badpb(opts, work):
    d = os.path.join(work, "badpb")
    os.makedirs(d)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    w = numpy_helper.from_array(np.array([1, 2], np.float32), "w")
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add_1")], "g", [x],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [w]), opset_imports=opset(13))
    data = model.SerializeToString()
    with open(os.path.join(d, "good.onnx"), "wb") as f:
        f.write(data)
    rc, _, err = lgen(opts, ["good.onnx", "-o", "good.c"], d)
    check("badpb: the intact model generates", rc == 0, err)
    # every prefix that cuts a field: one located error (a cut between two
    # fields is a valid shorter message, caught by the importer instead)
    bad = 0
    for n in range(1, len(data)):
        with open(os.path.join(d, "t.onnx"), "wb") as f:
            f.write(data[:n])
        out = os.path.join(d, "out.c")
        rc, so, err = lgen(opts, ["t.onnx", "-o", "out.c"], d, timeout=10)
        errors = [l for l in err.splitlines() if "error:" in l]
        if not (rc == 1 and len(errors) == 1 and LOC_RE.match(err.splitlines()[0]) and not os.path.exists(out)):
            bad += 1
            if bad < 4:
                print("    prefix %d: exit %s: %s" % (n, rc, err.strip()[:300]))
    check("badpb: all %d truncations of a %d-byte model give one located error, exit 1, no output"
          % (len(data) - 1, len(data)), bad == 0)
    cases = [
        ("hugelen", varint(8) + varint(7) + varint(7 << 3 | 2) + varint(2 ** 32 - 1), r"length 4294967295 runs past"),
        ("hugelen64", varint(7 << 3 | 2) + varint(2 ** 63), r"runs past"),
        ("wrongwt", varint(7 << 3 | 0) + varint(1), r"field 'graph' has wire type 0"),
        ("wrongwt_nested", field(7, varint(1 << 3 | 0) + varint(5)), r"\(graph.node\): error: field 'node'"),
        ("group", varint(3 << 3 | 3), r"group"),
        ("wiretype7", varint(9 << 3 | 7), r"invalid wire type 7"),
        ("longvarint", varint(1 << 3 | 0) + b"\xff" * 11, r"longer than 64 bits"),
        ("fieldzero", varint(0) + varint(1), r"field number 0"),
        ("packed_odd", field(7, field(5, field(4, b"\x01\x02\x03"))), r"float_data.*not a multiple of 4"),
        ("garbage", bytes(range(255, 0, -3)) * 4, None),
        # a tag padded to 6 bytes (field 1, ir_version): valid protobuf that
        # the walker passes, but protobuf-c reads tags of 5 bytes at most
        ("padded_tag", b"\x88\x80\x80\x80\x80\x00" + varint(8),
         r"^\S+: byte 0 \(model\): error: protobuf-c cannot decode this ModelProto$"),
    ]
    # a node whose attribute's ints run past its end: the path names both
    attr = field(1, b"pads") + field(8, b"\x01\x02\xff")  # ints packed: ends inside a varint
    node = field(4, b"Conv") + field(3, b"Conv_3") + field(5, attr)
    cases.append(("attr_path", field(7, field(1, node)), r"graph.node\[0\] 'Conv_3', attribute 'pads', ints"))
    deep = b""
    for _ in range(60):
        deep = field(1, field(5, field(6, deep)))
    cases.append(("deep", field(7, deep), r"nested more than"))
    for name, blob, want in cases:
        with open(os.path.join(d, name + ".onnx"), "wb") as f:
            f.write(blob)
        expect_located_error(opts, d, name + ".onnx", "badpb %s" % name, want)
    # an error in a node of a graph over 16 KB: the locator indexes the
    # graph's nodes once (its cache) and finds the 251st
    big = numpy_helper.from_array(np.arange(5000, dtype=np.float32), "big")
    nodes = [helper.make_node("Relu", ["x" if i == 0 else "t%d" % i], ["t%d" % (i + 1)], name="n%d" % i)
             for i in range(300)]
    nodes[250].op_type = "NoSuchOp"
    chain = helper.make_model(helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("t300", TensorProto.FLOAT, [2])], [big]), opset_imports=opset(13))
    with open(os.path.join(d, "bignode.onnx"), "wb") as f:
        f.write(chain.SerializeToString())
    expect_located_error(opts, d, "bignode.onnx", "badpb bignode: a node of a large graph is located by its path",
                         r"^\S+: byte \d+ \(graph\.node\[250\] 'n250'[^)]*\): error: .*NoSuchOp")
    # an initializer of 2^41 elements (and no data): refused by its dims
    big = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 20, 1 << 21])
    huge = helper.make_model(helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "g", [x],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [big]), opset_imports=opset(13))
    with open(os.path.join(d, "hugeinit.onnx"), "wb") as f:
        f.write(huge.SerializeToString())
    expect_located_error(opts, d, "hugeinit.onnx", "badpb hugeinit: an initializer of 2^41 elements",
                         r"\(graph\.initializer\[0\] 'w', dims\[1\]\): error: initializer 'w' would have more "
                         r"than 2\^40 elements$")
    # a bad value in a valid message: located by the importer at its field
    model.graph.initializer[0].raw_data = b"\x00" * 7
    with open(os.path.join(d, "rawlen.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    expect_located_error(opts, d, "rawlen.onnx", "badpb rawlen: the importer's error has the field path",
                         r"graph.initializer\[0\] 'w', raw_data\): error: initializer 'w': rawData has 7 bytes")


# ---------------------------------------------------------------------------
# files: external data and "file" under the file policy

def external_model(location, offset=None, length=None, n=4):
    t = TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.append(n)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])
    return helper.make_model(helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "ext", [x],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])], [t]), opset_imports=opset(13))


def graph_model(file_name, n=4):
    return {"format": "lgen-graph/1", "name": "g",
            "inputs": [{"name": "x", "type": "f32", "shape": [n]}], "outputs": ["y"],
            "constants": [{"name": "w", "type": "f32", "shape": [n], "file": file_name}],
            "nodes": [{"op": "add", "inputs": ["x", "w"], "outputs": ["y"]}]}


def group_files(opts, work):
    root = os.path.join(work, "files")
    d = os.path.join(root, "model")
    os.makedirs(os.path.join(d, "sub"))
    outside = os.path.join(root, "secret.bin")
    with open(outside, "wb") as f:
        f.write(np.arange(4, dtype=np.float32).tobytes())
    with open(os.path.join(d, "w.bin"), "wb") as f:
        f.write(b"\x00" * 8 + np.array([1, 2, 3, 4], np.float32).tobytes())
    with open(os.path.join(d, "sub", "w4.bin"), "wb") as f:
        f.write(np.array([1, 2, 3, 4], np.float32).tobytes())
    with open(os.path.join(d, "short.bin"), "wb") as f:
        f.write(b"\x00" * 10)
    os.symlink(outside, os.path.join(d, "link_out.bin"))
    os.symlink(os.path.join(d, "sub", "w4.bin"), os.path.join(d, "link_in.bin"))
    os.mkfifo(os.path.join(d, "fifo.bin"))
    os.symlink("/dev/zero", os.path.join(d, "zero.bin"))

    def forms(location, offset=None, n=4):
        """(label, file name, depends-on) for binary ONNX, JSON ONNX, lgen-graph/1."""
        out = []
        m = external_model(location, offset, n=n)
        onnx.save(m, os.path.join(d, "e.onnx"))
        with open(os.path.join(d, "e.json"), "w") as f:
            f.write(json_format.MessageToJson(m))
        with open(os.path.join(d, "g.json"), "w") as f:
            json.dump(graph_model(location, n), f)
        return [("binary ONNX", "e.onnx"), ("JSON ONNX", "e.json"), ("lgen-graph", "g.json")]

    def run_form(fname, extra=()):
        for p in ("out.c", "out.d"):
            if os.path.exists(os.path.join(d, p)):
                os.unlink(os.path.join(d, p))
        return lgen(opts, [fname, "-o", "out.c", "-MD"] + list(extra), d, timeout=10)

    # good: inside the folder (ONNX with an offset, the graph's file exactly 16 bytes)
    for label, fname in forms("w.bin", offset=8)[:2] + forms("sub/w4.bin")[2:]:
        rc, _, err = run_form(fname)
        deps = open(os.path.join(d, "out.d")).read() if rc == 0 else ""
        check("files %s: data inside the folder is read and -MD lists it" % label,
              rc == 0 and ("w.bin" in deps or "w4.bin" in deps), err + deps)
    # an external data offset that is not a number: one error at it
    for label, fname in forms("w.bin", offset="8x")[:2]:
        rc, so, err = run_form(fname)
        errs = [l for l in err.splitlines() if "error:" in l]
        check("files %s: an offset of '8x' is refused" % label,
              rc == 1 and len(errs) == 1 and
              errs[0].endswith("error: initializer 'w': external data offset '8x' is not a 64-bit integer")
              and not os.path.exists(os.path.join(d, "out.c")), "exit %s: %s" % (rc, err.strip()[:500]))
    for label, fname in forms("sub/../link_in.bin"):
        rc, _, err = run_form(fname)
        check("files %s: a symlink that stays inside is read" % label, rc == 0, err)
    bad = [("../secret.bin", "'..'"), (outside, "absolute"), ("link_out.bin", "leads out"),
           ("sub/../../secret.bin", "'..'"), ("../../../../../../etc/passwd", "'..'"),
           ("/etc/passwd", "absolute"), ("fifo.bin", "not a regular file"),
           ("short.bin", "bytes"), ("missing.bin", "No such file"), ("sub", "not a regular file"),
           ("/dev/zero", "absolute"), ("zero.bin", "leads out")]
    # (location, what the first error line says, extra options, elements)
    cases = [(location, why, [], 4) for location, why in bad] + [
        # inside an allowed folder, a device is still not a regular file
        ("/dev/zero", "not a regular file", ["--allow-external=/dev"], 4),
        # a tensor of 2^31 x 3 floats named in a 24-byte file: refused at
        # once, before anything of that size is allocated or read
        ("w.bin", "bytes", [], 3 << 31)]
    for location, why, extra, n in cases:
        for label, fname in forms(location, n=n):
            rc, so, err = run_form(fname, extra)
            first = err.splitlines()[0] if err.strip() else ""
            ok = (rc == 1 and len([l for l in err.splitlines() if "error:" in l]) == 1 and why in first
                  and "'w'" in first and not os.path.exists(os.path.join(d, "out.c")))
            check("files %s: %s is refused (%s), naming the path and the tensor" % (label, location, why), ok,
                  "exit %s: %s" % (rc, err.strip()[:500]))
    # --allow-external widens the folder
    for label, fname in forms(outside):
        rc, _, err = run_form(fname, ["--allow-external=" + root])
        check("files %s: --allow-external admits an absolute path inside it" % label, rc == 0, err)
    for label, fname in forms("../secret.bin"):
        rc, _, err = run_form(fname, ["--allow-external", root])
        check("files %s: --allow-external admits '..' into it" % label, rc == 0, err)
    rc, _, err = run_form("e.onnx", ["--allow-external=/nonexistent-folder"])
    check("files: --allow-external of a missing folder is a usage error", rc == 2, err)


# ---------------------------------------------------------------------------
# dims: --dim and --input-shape

def group_dims(opts, work):
    d = os.path.join(work, "dims")
    os.makedirs(d)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, None])
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Shape", ["r"], ["s"]),
         helper.make_node("Cast", ["s"], ["y"], to=TensorProto.FLOAT)], "main_graph", [x],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]), opset_imports=opset(13))
    save_both(model, d, "m")
    graph = {"format": "lgen-graph/1", "name": "gm", "inputs": [{"name": "x", "type": "f32", "shape": ["batch", 3, "W"]}],
             "outputs": ["y"], "nodes": [{"op": "relu", "inputs": ["x"], "outputs": ["y"]}]}
    with open(os.path.join(d, "g.json"), "w") as f:
        json.dump(graph, f)
    for fname in ("m.onnx", "m.json", "g.json"):
        other = "x_dim2" if fname != "g.json" else "W"
        rc, _, err = lgen(opts, [fname, "-o", "a.c", "--dim", "batch=2", "--dim=%s=5" % other], d)
        text = open(os.path.join(d, "a.c")).read() if rc == 0 else ""
        run = re.search(r"void \w+_run\(([^)]*)\)", text)
        check("dims %s: --dim fixes both dims: no size parameter is left" % fname,
              rc == 0 and run and "int64_t" not in run.group(1), err + (run.group(1) if run else ""))
        if fname != "g.json":
            check("dims %s: Shape folds to the fixed dims" % fname, "0x1p+1f" in text or "2.0f" in text
                  or re.search(r"\b2, 3, 5\b", text) is not None or "0x1.4p+2f" in text, text[-800:])
        rc, _, err = lgen(opts, [fname, "-o", "b.c", "--input-shape", "x=2,3,5"], d)
        text = open(os.path.join(d, "b.c")).read() if rc == 0 else ""
        run = re.search(r"void \w+_run\(([^)]*)\)", text)
        check("dims %s: --input-shape fixes the whole shape" % fname,
              rc == 0 and run and "int64_t" not in run.group(1), err)
        for args, want in ((["--dim", "nosuch=3"], "no model graph has a symbolic dim named 'nosuch'"),
                           (["--dim", "batch=0"], "positive"), (["--dim", "batch=-2"], "positive"),
                           (["--dim", "batch"], "NAME=VALUE"),
                           (["--input-shape", "x=2,3"], "rank 3, not 2"),
                           (["--input-shape", "x=2,4,5"], "dim 1 of input 'x' is 3"),
                           (["--input-shape", "nosuch=1"], "no model graph has an input named 'nosuch'")):
            if os.path.exists(os.path.join(d, "c.c")):
                os.unlink(os.path.join(d, "c.c"))
            rc, _, err = lgen(opts, [fname, "-o", "c.c"] + args, d)
            check("dims %s: %s is a command-line error (exit 2)" % (fname, " ".join(args)),
                  rc == 2 and want in err and err.startswith("lgen: error: ") and not os.path.exists(
                      os.path.join(d, "c.c")), "exit %s: %s" % (rc, err.strip()))


# values: --input-value

VALUES_DRIVER = r"""
#include <stdio.h>
#include "m.h"
int main(void) {
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6];
  if (m(x, y) != 0)
    return 2;
  for (int i = 0; i < 6; i++)
    printf("%g\n", y[i]);
  return 0;
}
"""


def group_values(opts, work):
    d = os.path.join(work, "values")
    os.makedirs(d)
    # If (sr == 16000) then y = x * 2 else y = reshape(x, [2, 3, 1, 1, 1]) summed back: the else branch
    # needs a rank-5 reshape of 6 elements, fine; a Reshape to [4, -1] in it fails for 6 elements,
    # as silero's other-rate branch fails for its input: only a folded If builds
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
                               [numpy_helper.from_array(np.array(2, np.float32), "two")])
    else_g = helper.make_graph([helper.make_node("Reshape", ["x", "shp"], ["r"]),
                                helper.make_node("Add", ["r", "hundred"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
                               [numpy_helper.from_array(np.array([4, -1], np.int64), "shp"),
                                numpy_helper.from_array(np.array(100, np.float32), "hundred")])
    graph = helper.make_graph(
        [helper.make_node("Equal", ["sr", "rate"], ["c"]),
         helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)], "main_graph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6]),
         helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(16000, np.int64), "rate")])
    save_both(helper.make_model(graph, opset_imports=opset(13)), d, "m")
    with open(os.path.join(d, "drv.c"), "w") as f:
        f.write(VALUES_DRIVER)
    rc, _, err = lgen(opts, ["m.onnx", "-o", "m.c", "-H", "m.h", "--name=m"], d)
    check("values: without --input-value the other branch does not build (exit 1)",
          rc == 1 and "Reshape" in err, "exit %s: %s" % (rc, err.strip()))
    for fname in ("m.onnx", "m.json"):
        rc, _, err = lgen(opts, [fname, "-o", "m.c", "-H", "m.h", "--name=m", "--input-value=sr=16000"], d)
        run = re.search(r"void m_run\(([^)]*)\)", open(os.path.join(d, "m.h")).read()) if rc == 0 else None
        check("values %s: sr=16000 folds the If; the entry point has no 'sr'" % fname,
              rc == 0 and run and "sr" not in run.group(1) and "x" in run.group(1),
              err + (run.group(1) if run else ""))
        if rc != 0:
            continue
        p = subprocess.run(["gcc", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1", "-I", d,
                            os.path.join(d, "m.c"), os.path.join(d, "drv.c"), "-o", os.path.join(d, "drv"), "-lm"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = subprocess.run([os.path.join(d, "drv")], stdout=subprocess.PIPE).stdout.decode() if \
            p.returncode == 0 else p.stdout.decode()
        check("values %s: the program computes x * 2 (the then branch)" % fname,
              out.split() == ["2", "4", "6", "8", "10", "12"], out)
    for args, want in ((["--input-value=sr=1.5"], "'1.5' is not a value of input 'sr' (i64)"),
                       (["--input-value=sr=1,2"], "input 'sr' has 1 element(s), not 2"),
                       (["--input-value=sr=99999999999999999999"], "is not a value of input 'sr'"),
                       (["--input-value=sr="], "is not NAME=V0,V1,..."),
                       (["--input-value=sr=16000", "--input-value=x=1e300"],  # beyond f32: no undefined cast
                        "'1e300' is not a value of input 'x' (f32)"),
                       (["--input-value=sr=16000", "--input-value=nosuch=1"],
                        "no model graph has an input named 'nosuch'")):
        if os.path.exists(os.path.join(d, "c.c")):
            os.unlink(os.path.join(d, "c.c"))
        rc, _, err = lgen(opts, ["m.onnx", "-o", "c.c"] + args, d)
        check("values: %s is a command-line error (exit 2)" % " ".join(args),
              rc == 2 and want in err and err.startswith("lgen: error: ") and not os.path.exists(
                  os.path.join(d, "c.c")), "exit %s: %s" % (rc, err.strip()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lgen", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", default="")
    opts = ap.parse_args()
    opts.lgen = os.path.abspath(opts.lgen)
    groups = {"same": group_same, "badpb": group_badpb, "files": group_files, "dims": group_dims,
              "values": group_values}
    for name, fn in groups.items():
        if opts.only and name not in opts.only.split(","):
            continue
        try:
            fn(opts, opts.work)
        except Exception as e:  # a harness problem fails the group, visibly
            check("%s: harness: %s: %s" % (name, type(e).__name__, e), False)
    print("%d passed, %d failed" % tuple(RESULTS))
    return 1 if RESULTS[1] else 0


if __name__ == "__main__":
    sys.exit(main())
