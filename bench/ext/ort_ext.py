#!/usr/bin/python3
"""ONNX Runtime against lgen's single-op cases of ext_bench (bench/run.sh).

    ort_ext.py SRCDIR BUILDDIR EXT_BENCH_OUTPUT [--threads=1,2] [--only=...]

Cases (those ext_bench ran, as its "bench case=NAME threads=T ..." lines say):
  topk8_1m        TopK, k = 8 over 1M floats (opset 13)
  softmax_4096    Softmax over the rows of 4096 x 4096 (opset 13)
  attention_N     opset-23 Attention, Q, K, V of [1, 8, N, 64] (batch * heads
                  8, head dim 64), no mask, the default scale; N = 1024,
                  2048, 4096

ONNX Runtime runs here through its Node binding (bench/models/ort_bench.js,
onnxruntime-node as set up by bench/models/run_models.py), whose per-run
cost of copying inputs and outputs between JavaScript and the session is as
large as a 64 MB softmax itself (an Identity model of that size takes as
long). So each case is timed as two models with the same inputs and
outputs, the op once and R times (a chain of R softmaxes or attentions, each
reading the previous result; R TopKs of the same input), and ORT's time per
op is (t_R - t_1) / (R - 1): the binding's cost cancels. Both get graph
optimisations 'all' and the thread count under test. Prints per case and
thread count ORT's per-op median ms, the single-op run, lgen's median ms
from ext_bench's lines and ort / lgen (> 1: lgen is faster), ORT's time
being the smaller of the per-op estimate and the single run. A build of
ONNX Runtime that cannot run a case (opset-23 Attention) is reported and
the case skipped.
"""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True


def topk(helper, TensorProto, copies):
    n = 1 << 20
    nodes = [helper.make_node("TopK", ["x", "k"], ["v%d" % i, "i%d" % i], axis=-1, largest=1, sorted=1)
             for i in range(copies)]
    outs = []
    for i in range(copies):
        outs += [helper.make_tensor_value_info("v%d" % i, TensorProto.FLOAT, [8]),
                 helper.make_tensor_value_info("i%d" % i, TensorProto.INT64, [8])]
    g = helper.make_graph(nodes, "topk8_1m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])], outs,
                          [helper.make_tensor("k", TensorProto.INT64, [1], [8])])
    return g, [("x", [n])]


def softmax(helper, TensorProto, copies):
    shape = [4096, 4096]
    names = ["x"] + ["y%d" % i for i in range(copies)]
    nodes = [helper.make_node("Softmax", [names[i]], [names[i + 1]], axis=-1) for i in range(copies)]
    g = helper.make_graph(nodes, "softmax_4096", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info(names[-1], TensorProto.FLOAT, shape)])
    return g, [("x", shape)]


def attention(n):
    def build(helper, TensorProto, copies):
        shape = [1, 8, n, 64]
        names = ["Q"] + ["y%d" % i for i in range(copies)]
        nodes = [helper.make_node("Attention", [names[i], "K", "V"], [names[i + 1]]) for i in range(copies)]
        ins = [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape) for x in ("Q", "K", "V")]
        out = [helper.make_tensor_value_info(names[-1], TensorProto.FLOAT, shape)]
        return helper.make_graph(nodes, "attention_%d" % n, ins, out), [(x, shape) for x in "QKV"]
    return build


# name: (model builder, opset, ir_version, R, warm-up runs, timed runs)
CASES = [("topk8_1m", topk, 13, 8, 5, 3, 15), ("softmax_4096", softmax, 13, 8, 5, 3, 15)] + \
    [("attention_%d" % n, attention(n), 23, 10, 3, 2, 7) for n in (1024, 2048, 4096)]


def main():
    src, build, ext_out = sys.argv[1:4]
    threads = [1, 2]
    only = None
    for a in sys.argv[4:]:
        if a.startswith("--threads="):
            threads = [int(t) for t in a[10:].split(",") if t]
        elif a.startswith("--only="):
            only = [s for s in a[7:].split(",") if s]
    lgen = {}  # (case, threads): lgen's ms (the first *_ms field of its line)
    with open(ext_out) as f:
        for line in f:
            m = re.match(r"bench case=(\w+) threads=(\d+) \w+_ms=([\d.]+)", line)
            if m:
                lgen[(m.group(1), int(m.group(2)))] = float(m.group(3))
    cases = [c for c in CASES if any(key[0] == c[0] for key in lgen) and (not only or any(s in c[0] for s in only))]
    if not cases:
        return 0
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
    for case, make, opset, ir, repeat, warmup, runs in cases:
        paths = []
        for copies in (1, repeat):
            g, inputs = make(helper, TensorProto, copies)
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
            m.ir_version = ir
            path = os.path.join(out, "%s_x%d.onnx" % (case, copies))
            onnx.save(m, path)
            with open(path + ".inputs.json", "w") as f:
                f.write("[%s]" % ", ".join('{"name": "%s", "shape": %s}' % (name, shape) for name, shape in inputs))
            paths.append(path)
        for t in threads:
            ms = []
            for path in paths:
                p = subprocess.run(["node", os.path.join(src, "bench", "models", "ort_bench.js"), path,
                                    "--threads=%d" % t, "--warmup=%d" % warmup, "--runs=%d" % runs],
                                   env=dict(os.environ, NODE_PATH=node_path), stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
                text = p.stdout.decode("utf-8", "replace")
                m = re.search(r"median_ms=([\d.]+)", text)
                if p.returncode != 0 or not m:
                    print("bench: ONNX Runtime does not run %s, skipped: %s" % (case, text.strip()[:300]))
                    break
                ms.append(float(m.group(1)))
            if len(ms) != 2:
                break
            per_op = (ms[1] - ms[0]) / (repeat - 1)
            # the single run includes the binding's cost, so it bounds the
            # op's time from above; where the chain's estimate comes out
            # larger still (attention at 2 threads), the ratio takes the
            # smaller of the two: ORT's best figure
            best = min(per_op, ms[0])
            mine = lgen.get((case, t))
            ratio = "%.2f" % (best / mine) if mine else "-"
            print("bench case=%s_ort threads=%d ort_per_op_ms=%.3f ort_single_run_ms=%.3f lgen_ms=%s "
                  "ort_over_lgen=%s" % (case, t, per_op, ms[0], "%.3f" % mine if mine else "-", ratio))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
