#!/usr/bin/python3
"""ONNX Runtime's TopK (k = 8 over 1M floats) against lgen's topk (bench/run.sh).

    ort_topk.py SRCDIR BUILDDIR EXT_BENCH_OUTPUT [--threads=1,2]

Writes the one-node model (opset 13, K a constant, largest, sorted) into
BUILDDIR/bench-build, times it with bench/models/ort_bench.js (onnxruntime-
node, installed by bench/models/run_models.py's setup; its times include
the Node binding's per-run overhead) and prints, per thread count, ORT's
median ms next to lgen's topk ms from ext_bench's "bench case=topk8_1m"
lines, with the ratio ort / lgen (> 1: lgen is faster).
"""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True


def main():
    src, build, ext_out = sys.argv[1:4]
    threads = [1, 2]
    for a in sys.argv[4:]:
        if a.startswith("--threads="):
            threads = [int(t) for t in a[10:].split(",") if t]
    sys.path.insert(0, os.path.join(src, "bench", "models"))
    try:
        import onnx
        from onnx import TensorProto, helper
        import run_models
    except ImportError as e:
        print("bench: topk against ONNX Runtime skipped: %s" % e)
        return 0
    out = os.path.join(os.path.abspath(build), "bench-build")
    n = 1 << 20
    graph = helper.make_graph(
        [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1, largest=1, sorted=1)], "topk8_1m",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, [8]),
         helper.make_tensor_value_info("i", TensorProto.INT64, [8])],
        [helper.make_tensor("k", TensorProto.INT64, [1], [8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = os.path.join(out, "topk8_1m.onnx")
    onnx.save(model, path)
    with open(path + ".inputs.json", "w") as f:
        f.write('[{"name": "x", "shape": [%d]}]' % n)
    node_path, why = run_models.setup_ort(out)
    if not node_path:
        print("bench: topk against ONNX Runtime skipped: %s" % why)
        return 0
    lgen = {}
    with open(ext_out) as f:
        for line in f:
            m = re.match(r"bench case=topk8_1m threads=(\d+) topk_ms=([\d.]+)", line)
            if m:
                lgen[int(m.group(1))] = float(m.group(2))
    for t in threads:
        p = subprocess.run(["node", os.path.join(src, "bench", "models", "ort_bench.js"), path, "--threads=%d" % t,
                            "--warmup=5", "--runs=50"], env=dict(os.environ, NODE_PATH=node_path),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        text = p.stdout.decode("utf-8", "replace")
        m = re.search(r"median_ms=([\d.]+)", text)
        if p.returncode != 0 or not m:
            print("bench: ONNX Runtime TopK failed: %s" % text.strip()[:300])
            return 1
        ort = float(m.group(1))
        ratio = ("%.2f" % (ort / lgen[t])) if t in lgen else "-"
        print("bench case=topk8_1m_ort threads=%d ort_ms=%.3f lgen_topk_ms=%s ort_over_lgen=%s"
              % (t, ort, "%.3f" % lgen[t] if t in lgen else "-", ratio))
    return 0


if __name__ == "__main__":
    sys.exit(main())
