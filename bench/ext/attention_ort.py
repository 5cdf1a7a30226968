#!/usr/bin/python3
"""ONNX Runtime's opset-23 Attention against lgen's fused attention (bench/run.sh).

    attention_ort.py SRCDIR BUILDDIR EXT_BENCH_OUTPUT [--threads=1,2] [--only=...]

Cases attention_1024/2048/4096 of ext_bench: Q, K, V of [1, 8, seq, 64]
(batch * heads 8, head dim 64), no mask, the default scale. ONNX Runtime
runs through its Node binding (bench/models/ort_bench.js); as in
ort_ext.py, each case is two models, Attention once and a chain of R
Attentions (Y_i = Attention(Y_{i-1}, K, V), the same inputs and one output
of the same size), and ORT's time per op is (t_R - t_1) / (R - 1), so the
binding's copies cancel. Prints per case and thread count ORT's per-op
median ms, lgen's fused_ms from ext_bench's lines, and ort / lgen (> 1:
lgen is faster). A build of ONNX Runtime without the opset-23 operator is
reported and skipped, not an error.
"""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
REPEAT = 3


def model(helper, TensorProto, n, copies):
    names = ["Q"] + ["y%d" % i for i in range(copies)]
    nodes = [helper.make_node("Attention", [names[i], "K", "V"], [names[i + 1]]) for i in range(copies)]
    shape = [1, 8, n, 64]
    ins = [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape) for x in ("Q", "K", "V")]
    out = [helper.make_tensor_value_info(names[-1], TensorProto.FLOAT, shape)]
    return helper.make_graph(nodes, "attention_%d" % n, ins, out)


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
        print("bench: attention against ONNX Runtime skipped: %s" % e)
        return 0
    out = os.path.join(os.path.abspath(build), "bench-build")
    node_path, why = run_models.setup_ort(out)
    if not node_path:
        print("bench: attention against ONNX Runtime skipped: %s" % why)
        return 0
    lgen = {}
    with open(ext_out) as f:
        for line in f:
            m = re.match(r"bench case=(attention_\d+) threads=(\d+) fused_ms=([\d.]+)", line)
            if m:
                lgen[(m.group(1), int(m.group(2)))] = float(m.group(3))
    for n in (1024, 2048, 4096):
        case = "attention_%d" % n
        if only and not any(s in case for s in only):
            continue
        paths = []
        for copies in (1, REPEAT):
            m = helper.make_model(model(helper, TensorProto, n, copies), opset_imports=[helper.make_opsetid("", 23)])
            m.ir_version = 10
            path = os.path.join(out, "%s_x%d.onnx" % (case, copies))
            onnx.save(m, path)
            with open(path + ".inputs.json", "w") as f:
                f.write("[%s]" % ", ".join('{"name": "%s", "shape": [1, 8, %d, 64]}' % (x, n) for x in "QKV"))
            paths.append(path)
        for t in threads:
            ms = []
            for path in paths:
                p = subprocess.run(["node", os.path.join(src, "bench", "models", "ort_bench.js"), path,
                                    "--threads=%d" % t, "--warmup=2", "--runs=7"],
                                   env=dict(os.environ, NODE_PATH=node_path), stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
                text = p.stdout.decode("utf-8", "replace")
                m = re.search(r"median_ms=([\d.]+)", text)
                if p.returncode != 0 or not m:
                    print("bench: ONNX Runtime does not run %s (opset-23 Attention), skipped: %s"
                          % (case, text.strip()[:300]))
                    return 0
                ms.append(float(m.group(1)))
            per_op = (ms[1] - ms[0]) / (REPEAT - 1)
            mine = lgen.get((case, t))
            ratio = "%.2f" % (per_op / mine) if mine else "-"
            print("bench case=%s_ort threads=%d ort_per_op_ms=%.3f ort_single_run_ms=%.3f lgen_ms=%s "
                  "ort_over_lgen=%s" % (case, t, per_op, ms[0], "%.3f" % mine if mine else "-", ratio))
    return 0


if __name__ == "__main__":
    sys.exit(main())
