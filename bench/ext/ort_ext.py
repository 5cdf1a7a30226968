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
cost of copying inputs and outputs between JavaScript and the session is
larger than a 64 MB softmax itself. So each case runs as a chain of R ops
(R softmaxes or attentions, each reading the previous result; R TopKs of
the same input) under ORT's profiler, and ORT's time per op is the median
kernel time of the chain's inner nodes: the first and the last, which read
the input the binding has just written and write an output ORT has just
allocated, are left out (they run up to 30 % slower: page faults), as
lgen's side also runs on resident buffers. Graph optimisations 'all' and
the thread count under test. Prints per case and thread count ORT's
per-op ms, its first and last node's ms, lgen's median ms from ext_bench's
lines and ort / lgen (> 1: lgen is faster).

Softmax is memory-bound, and in a plain chain ORT writes each softmax over
its input, whose buffer is dead after it (its allocation planner reuses
it): the output's cache lines are then already being read, where a write
to a buffer of its own first reads each line from memory. Measured here,
4096 x 4096: 4.8 ms against 5.7 at 1 thread, 3.0 against 4.0 at 2. lgen's
kernel writes y beside x, so the softmax chain keeps every intermediate
alive (a final Sum reads them all, and is left out of the median like the
first node) and ORT writes each to a buffer of its own, as lgen does; the
in-place chain's time is printed too (ort_in_place_ms), for reference. A build of ONNX Runtime that
cannot run a case (opset-23 Attention) is reported and the case skipped.
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


def softmax_chain(keep_alive):
    def build(helper, TensorProto, copies):
        shape = [4096, 4096]
        names = ["x"] + ["y%d" % i for i in range(copies)]
        nodes = [helper.make_node("Softmax", [names[i]], [names[i + 1]], axis=-1) for i in range(copies)]
        out = names[-1]
        if keep_alive:  # every softmax writes a buffer of its own
            nodes.append(helper.make_node("Sum", names[1:], ["total"]))
            out = "total"
        g = helper.make_graph(nodes, "softmax_4096", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, shape)])
        return g, [("x", shape)]
    return build


def attention(n):
    def build(helper, TensorProto, copies):
        shape = [1, 8, n, 64]
        names = ["Q"] + ["y%d" % i for i in range(copies)]
        nodes = [helper.make_node("Attention", [names[i], "K", "V"], [names[i + 1]]) for i in range(copies)]
        ins = [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape) for x in ("Q", "K", "V")]
        out = [helper.make_tensor_value_info(names[-1], TensorProto.FLOAT, shape)]
        return helper.make_graph(nodes, "attention_%d" % n, ins, out), [(x, shape) for x in "QKV"]
    return build


# name: (model builder, opset, ir_version, R >= 3, warm-up runs, timed runs,
# nodes after the chain, a builder for a reference chain printed beside it)
CASES = [("topk8_1m", topk, 13, 8, 5, 3, 15, 0, None),
         ("softmax_4096", softmax_chain(True), 13, 8, 5, 3, 15, 1, ("in_place", softmax_chain(False), 0))] + \
    [("attention_%d" % n, attention(n), 23, 10, 3, 2, 7, 0, None) for n in (1024, 2048, 4096)]


def per_op_ms(node_path, src, out, case, make, opset, ir, repeat, warmup, runs, extra, threads, tag):
    """ORT's median kernel time over the chain's inner nodes, its first and
    last node's times; None and ORT's message when it cannot run the case."""
    from onnx import TensorProto, helper
    import onnx
    g, inputs = make(helper, TensorProto, repeat)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir
    path = os.path.join(out, "%s%s_x%d.onnx" % (case, tag, repeat))
    onnx.save(m, path)
    with open(path + ".inputs.json", "w") as f:
        f.write("[%s]" % ", ".join('{"name": "%s", "shape": %s}' % (name, shape) for name, shape in inputs))
    p = subprocess.run(["node", os.path.join(src, "bench", "models", "ort_bench.js"), path, "--threads=%d" % threads,
                        "--warmup=%d" % warmup, "--runs=%d" % runs, "--profile=" + os.path.join(out, "ort_profiles")],
                       env=dict(os.environ, NODE_PATH=node_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = p.stdout.decode("utf-8", "replace")
    m = re.search(r"node_median_ms=([\d.,]+)", text)
    nodes = [float(x) for x in m.group(1).split(",") if x] if m else []
    if p.returncode != 0 or len(nodes) != repeat + extra:
        return None, text.strip()[:300]
    nodes = nodes[:repeat]
    inner = sorted(nodes[1:-1])
    mid = len(inner) // 2
    return (inner[mid] if len(inner) % 2 else 0.5 * (inner[mid - 1] + inner[mid]), nodes[0], nodes[-1]), ""


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
        import onnx  # noqa: F401 (per_op_ms builds the models with it)
        import run_models
    except ImportError as e:
        print("bench: single ops against ONNX Runtime skipped: %s" % e)
        return 0
    out = os.path.join(os.path.abspath(build), "bench-build")
    node_path, why = run_models.setup_ort(out)
    if not node_path:
        print("bench: single ops against ONNX Runtime skipped: %s" % why)
        return 0
    for case, make, opset, ir, repeat, warmup, runs, extra, reference in cases:
        for t in threads:
            got, why = per_op_ms(node_path, src, out, case, make, opset, ir, repeat, warmup, runs, extra, t, "")
            if not got:
                print("bench: ONNX Runtime does not run %s, skipped: %s" % (case, why))
                break
            per_op, first, last = got
            ref = ""
            if reference:
                tag, ref_make, ref_extra = reference
                ref_got, _ = per_op_ms(node_path, src, out, case, ref_make, opset, ir, repeat, warmup, runs,
                                       ref_extra, t, "_" + tag)
                ref = " ort_%s_ms=%s" % (tag, "%.3f" % ref_got[0] if ref_got else "-")
            mine = lgen.get((case, t))
            ratio = "%.2f" % (per_op / mine) if mine else "-"
            print("bench case=%s_ort threads=%d ort_per_op_ms=%.3f ort_first_last_ms=%.3f,%.3f lgen_ms=%s "
                  "ort_over_lgen=%s%s" % (case, t, per_op, first, last, "%.3f" % mine if mine else "-", ratio, ref))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
