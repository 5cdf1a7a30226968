#!/usr/bin/python3
"""Input-driven costs are bounded (issue 14, item 3).

Each case is an ONNX model (JSON mapping) whose sizes come from the file:
  * over --max-constant-bytes, a constant the model needs is one located
    error naming it, exit 1, no output, quickly and in bounded memory;
  * folding that would pass the budget leaves the node to run time, and the
    model still computes right (NumPy checks the result);
  * extreme integers that used to go through an undefined double -> int64
    cast (Trilu's k) give ONNX's answer (numpy.triu / tril).
Run by tests/hostile.test (and again under ASan/UBSan by make check-all)."""
import argparse, json, os, resource, subprocess, sys, time

import numpy as np
import onnx
from onnx import helper as h, TensorProto as T
from google.protobuf.json_format import MessageToJson

results = []


def check(ok, what, detail=""):
    results.append(ok)
    print(("PASS: " if ok else "FAIL: ") + what)
    if not ok and detail:
        for line in str(detail).splitlines()[:10]:
            print("      | " + line)


def save(path, nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, "limits", inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    with open(path, "w") as f:
        f.write(MessageToJson(m))


def lgen(args, *argv, limit_memory=True):
    """Runs lgen with at most 1.5 GB of address space (not under ASan, whose
    shadow memory needs far more), so an unbounded allocation fails here
    instead of taking the machine."""
    def bound():
        if limit_memory and "ASAN_OPTIONS" not in os.environ:
            resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))
    t = time.time()
    r = subprocess.run([args.lgen, *argv], capture_output=True, text=True, errors="replace", preexec_fn=bound,
                       timeout=120)
    return r, time.time() - t


def expect_error(args, label, path, want, *flags):
    out = path[:-5] + ".c"
    r, secs = lgen(args, path, "-o", out, *flags)
    first = r.stderr.splitlines()[0] if r.stderr else ""
    errors = sum("error:" in line for line in r.stderr.splitlines())
    ok = (r.returncode == 1 and want in first and first.startswith(path + ":")
          and errors == 1 and not os.path.exists(out))
    check(ok, f"{label}: one located error, exit 1, no output ({secs:.1f} s)",
          f"exit {r.returncode}, want '{want}'\n{r.stderr}")


def compile_and_run(args, work, cfile, harness):
    exe = os.path.join(work, "a.out")
    hc = os.path.join(work, "harness.c")
    with open(hc, "w") as f:
        f.write(harness)
    r = subprocess.run(["gcc", "-std=c99", "-O1", "-I", work, hc, cfile, "-lm", "-o", exe], capture_output=True,
                       text=True)
    if r.returncode:
        return None, r.stderr
    r = subprocess.run([exe], capture_output=True, text=True)
    return r.stdout, r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lgen", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    w = args.work
    yf = h.make_tensor_value_info("y", T.FLOAT, None)

    # OneHot depth 2^28: 2 GiB of positions (the 56 s, 6.3 GB case).
    p = os.path.join(w, "onehot28.json")
    save(p, [h.make_node("OneHot", ["i", "d", "v"], ["y"], name="hot")],
         [h.make_tensor_value_info("i", T.INT64, [3])], [yf],
         [h.make_tensor("d", T.INT64, [], [1 << 28]), h.make_tensor("v", T.FLOAT, [2], [0, 1])])
    expect_error(args, "OneHot depth 2^28", p, "node 'hot' (OneHot): the positions 0..depth-1 would be a constant")

    # An initializer over a small budget, and the same model under a larger one.
    p = os.path.join(w, "weights.json")
    wts = np.arange(600, dtype=np.float32)
    save(p, [h.make_node("Add", ["x", "w"], ["y"], name="add")], [h.make_tensor_value_info("x", T.FLOAT, [600])],
         [yf], [h.make_tensor("w", T.FLOAT, [600], wts)])
    expect_error(args, "a 2400-byte initializer with --max-constant-bytes=1K", p,
                 "'w' would be a constant of 2400 bytes", "--max-constant-bytes=1K")
    r, _ = lgen(args, p, "-o", os.path.join(w, "weights.c"), "--max-constant-bytes=4K")
    check(r.returncode == 0, "the same model under --max-constant-bytes=4K", r.stderr)
    r, _ = lgen(args, p, "-o", os.path.join(w, "bad.c"), "--max-constant-bytes=12Q")
    check(r.returncode == 2 and "--max-constant-bytes" in r.stderr, "a malformed byte count is a usage error",
          r.stderr)

    # An lgen-graph/1 attribute list is held for the whole run, 8 bytes an
    # element: at most 2^24 of them, and fewer under a --max-constant-bytes
    # that is smaller (1K: 128). The 2^24 itself takes a 32 MB file and 13 s.
    p = os.path.join(w, "attr_list.json")
    with open(p, "w") as f:
        json.dump({"format": "lgen-graph/1", "inputs": [{"name": "x", "type": "f32", "shape": [2, 3]}],
                   "outputs": ["y"], "nodes": [{"op": "transpose", "inputs": ["x"], "outputs": ["y"],
                                                "attrs": {"perm": list(range(129))}}]}, f)
    want = "error: attribute 'perm' has 129 elements, more than 128 (the lesser of 2^24 and --max-constant-bytes / 8)"
    expect_error(args, "a 129-element attribute with --max-constant-bytes=1K", p, want, "--max-constant-bytes=1K")
    r, _ = lgen(args, p, "-o", os.path.join(w, "attr_list.c"), "--max-constant-bytes=2K")
    check(r.returncode == 1 and "more than" not in r.stderr and "perm" in r.stderr,
          "the same attribute under --max-constant-bytes=2K gets past the limit (to transpose's own check)", r.stderr)

    # Folding beyond the budget: Expand of a constant to 4096 floats (16 KB)
    # under a 8 KB budget runs at run time instead, and computes the same.
    p = os.path.join(w, "fold.json")
    save(p, [h.make_node("Expand", ["c", "s"], ["e"]), h.make_node("Add", ["e", "x"], ["y"])],
         [h.make_tensor_value_info("x", T.FLOAT, [64, 64])], [yf],
         [h.make_tensor("c", T.FLOAT, [64], np.linspace(-1, 1, 64, dtype=np.float32)),
          h.make_tensor("s", T.INT64, [2], [64, 64])])
    for budget in ("8K", "1M"):
        out = os.path.join(w, f"fold{budget}.c")
        r, _ = lgen(args, p, "-o", out, "-H", os.path.join(w, "model.h"), "--name=model",
                    f"--max-constant-bytes={budget}")
        check(r.returncode == 0, f"Expand folded or not (budget {budget}) generates", r.stderr)
        if r.returncode:
            continue
        folded = "4096]" in open(out).read()
        check(folded == (budget == "1M"), f"budget {budget}: the 4096-element result is {'' if folded else 'not '}folded")
        stdout, err = compile_and_run(args, w, out, r"""
#include <stdio.h>
#include "model.h"
int main(void) {
  static float x[64 * 64], y[64 * 64];
  for (int i = 0; i < 64 * 64; i++) x[i] = (float)(i % 13) * 0.25f;
  if (model(x, y)) return 1;
  for (int i = 0; i < 64 * 64; i++) printf("%.9g\n", y[i]);
  return 0;
}
""")
        if stdout is None:
            check(False, f"budget {budget}: the C compiles", err)
            continue
        x = (np.arange(64 * 64) % 13).astype(np.float32) * 0.25
        want = (x.reshape(64, 64) + np.linspace(-1, 1, 64, dtype=np.float32)).ravel()
        got = np.array([float(v) for v in stdout.split()], dtype=np.float32)
        check(got.shape == want.shape and np.array_equal(got, want), f"budget {budget}: y = x + c exactly")

    # An AveragePool window of 2^40 taps over 5 inputs (the fuzzer's
    # kernel_shape of 2^31 took seconds): the per-position counts of the
    # average come in closed form, not by walking the window; lgen used to
    # run for hours here. The counts, 5 4 3 2 1 (count_include_pad 0), are
    # the divisors in the C.
    K = 1 << 40
    p = os.path.join(w, "pool.json")
    save(p, [h.make_node("AveragePool", ["x"], ["y"], kernel_shape=[1, K], pads=[0, 0, 0, K - 1], name="pool")],
         [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 1, 5])], [yf])
    out = os.path.join(w, "pool.c")
    try:
        r, secs = lgen(args, p, "-o", out, "--constants=values")
        text = open(out).read() if r.returncode == 0 else ""
        counts = "0x1.4p+2f, 0x1p+2f, 0x1.8p+1f, 0x1p+1f, 0x1p+0f" in text.replace("\n", " ")
        check(r.returncode == 0 and secs < 30 and counts,
              f"AveragePool over a 2^40 window generates in {secs:.1f} s with the counts 5 4 3 2 1", r.stderr)
    except subprocess.TimeoutExpired:
        check(False, "AveragePool over a 2^40 window generates within 120 s")

    # Trilu with k at the ends of int64 (a double cast used to decide them).
    for k, upper in (((1 << 63) - 1, 1), (-(1 << 63), 0), (-(1 << 63), 1), ((1 << 63) - 1, 0), (1 << 53, 1),
                     (-3, 1), (2, 0)):
        p = os.path.join(w, "trilu.json")
        save(p, [h.make_node("Trilu", ["x", "k"], ["y"], upper=upper)], [h.make_tensor_value_info("x", T.FLOAT, [3, 5])],
             [yf], [h.make_tensor("k", T.INT64, [], [k])], opset=14)
        out = os.path.join(w, "trilu.c")
        r, _ = lgen(args, p, "-o", out, "-H", os.path.join(w, "model.h"), "--name=model")
        if r.returncode:
            check(False, f"Trilu k={k} upper={upper} generates", r.stderr)
            continue
        stdout, err = compile_and_run(args, w, out, r"""
#include <stdio.h>
#include "model.h"
int main(void) {
  float x[15], y[15];
  for (int i = 0; i < 15; i++) x[i] = (float)i + 1.0f;
  if (model(x, y)) return 1;
  for (int i = 0; i < 15; i++) printf("%g\n", y[i]);
  return 0;
}
""")
        x = np.arange(1, 16, dtype=np.float32).reshape(3, 5)
        kk = max(min(k, 100), -100)  # numpy's triu takes any int; the clamp changes nothing at 3 x 5
        want = (np.triu(x, kk) if upper else np.tril(x, kk)).ravel()
        got = np.array([float(v) for v in (stdout or "").split()], dtype=np.float32)
        check(stdout is not None and np.array_equal(got, want), f"Trilu k={k} upper={upper} is numpy's",
              f"{err}\ngot {got}\nwant {want}")

    print(f"{results.count(True)} passed, {results.count(False)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
