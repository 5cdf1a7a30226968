#!/usr/bin/python3
"""ONNX Runtime against lgen's single-op cases of ext_bench (bench/run.sh).

    ort_ext.py SRCDIR BUILDDIR EXT_BENCH_OUTPUT [--threads=1,2] [--only=...]

Cases: topk8_1m (TopK, k = 8 over 1M floats, opset 13) and softmax_4096
(Softmax over the rows of 4096 x 4096, opset 13).

ONNX Runtime runs here through its Node binding (onnxruntime-node, set up
by bench/models/run_models.py), whose per-run cost of copying the inputs
and outputs between JavaScript and the session is as large as a 64 MB
softmax itself (an Identity model of that size takes as long). So each
case is timed as two models, one with the op once and one with it R times
(a chain of R softmaxes; R TopKs of the same input), with the same inputs
and outputs, and ORT's time per op is (t_R - t_1) / (R - 1): the binding's
cost cancels. Both models get graph optimisations 'all' and the thread
count under test. Prints, per case and thread count, ORT's per-op median
ms, the raw single-op time, lgen's median ms from ext_bench's lines, and
ort / lgen (> 1: lgen is faster).
"""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
REPEAT = 5


def model(helper, TensorProto, case, copies):
    if case == "topk8_1m":
        n = 1 << 20
        nodes = [helper.make_node("TopK", ["x", "k"], ["v%d" % i, "i%d" % i], axis=-1, largest=1, sorted=1)
                 for i in range(copies)]
        outs = []
        for i in range(copies):
            outs += [helper.make_tensor_value_info("v%d" % i, TensorProto.FLOAT, [8]),
                     helper.make_tensor_value_info("i%d" % i, TensorProto.INT64, [8])]
        g = helper.make_graph(nodes, case, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])], outs,
                              [helper.make_tensor("k", TensorProto.INT64, [1], [8])])
        return g, [n]
    rows = cols = 4096
    names = ["x"] + ["y%d" % i for i in range(copies)]
    nodes = [helper.make_node("Softmax", [names[i]], [names[i + 1]], axis=-1) for i in range(copies)]
    g = helper.make_graph(nodes, case, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, cols])],
                          [helper.make_tensor_value_info(names[-1], TensorProto.FLOAT, [rows, cols])])
    return g, [rows, cols]


def main():
    src, build, ext_out = sys.argv[1:4]
    threads = [1, 2]
    only = None
    for a in sys.argv[4:]:
        if a.startswith("--threads="):
            threads = [int(t) for t in a[10:].split(",") if t]
        elif a.startswith("--only="):
            only = [s for s in a[7:].split(",") if s]
    sys.path.insert(0, os.path.join(src, "bench", "models"))
    try:
        import onnx
        from onnx import TensorProto, helper
        import run_models
    except ImportError as e:
        print("bench: single ops against ONNX Runtime skipped: %s" % e)
        return 0
    out = os.path.join(os.path.abspath(build), "bench-build")
    node_path, why = run_models.setup_ort(out)
    if not node_path:
        print("bench: single ops against ONNX Runtime skipped: %s" % why)
        return 0
    lgen = {}
    with open(ext_out) as f:
        for line in f:
            m = re.match(r"bench case=(\w+) threads=(\d+) (?:topk_ms|softmax_ms)=([\d.]+)", line)
            if m:
                lgen[(m.group(1), int(m.group(2)))] = float(m.group(3))
    status = 0
    for case in ("topk8_1m", "softmax_4096"):
        if only and not any(s in case for s in only):
            continue
        paths = []
        for copies in (1, REPEAT):
            g, shape = model(helper, TensorProto, case, copies)
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
            m.ir_version = 8
            path = os.path.join(out, "%s_x%d.onnx" % (case, copies))
            onnx.save(m, path)
            with open(path + ".inputs.json", "w") as f:
                f.write('[{"name": "x", "shape": %s}]' % shape)
            paths.append(path)
        for t in threads:
            ms = []
            for path in paths:
                p = subprocess.run(["node", os.path.join(src, "bench", "models", "ort_bench.js"), path,
                                    "--threads=%d" % t, "--warmup=3", "--runs=15"],
                                   env=dict(os.environ, NODE_PATH=node_path), stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
                text = p.stdout.decode("utf-8", "replace")
                m = re.search(r"median_ms=([\d.]+)", text)
                if p.returncode != 0 or not m:
                    print("bench: ONNX Runtime %s failed: %s" % (case, text.strip()[:300]))
                    status = 1
                    break
                ms.append(float(m.group(1)))
            if len(ms) != 2:
                continue
            per_op = (ms[1] - ms[0]) / (REPEAT - 1)
            mine = lgen.get((case, t))
            ratio = "%.2f" % (per_op / mine) if mine else "-"
            print("bench case=%s_ort threads=%d ort_per_op_ms=%.3f ort_single_run_ms=%.3f lgen_ms=%s "
                  "ort_over_lgen=%s" % (case, t, per_op, ms[0], "%.3f" % mine if mine else "-", ratio))
    return status


if __name__ == "__main__":
    sys.exit(main())
