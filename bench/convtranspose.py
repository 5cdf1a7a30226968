#!/usr/bin/python3
"""ConvTranspose against a convolution of the same FLOPs (issue 15).

lgen runs ConvTranspose as one ordinary convolution over the stride's phases
(src/frontend/onnx_convtranspose.inc). This times, in one process, each
ConvTranspose next to a Conv doing the same multiply-adds on the same input:

  k2s2   ConvTranspose C -> M, 2x2, stride 2 (PaddleOCR's detector head,
         U-Net decoders) vs a 1x1 Conv C -> 4M;
  k4s2   ConvTranspose C -> M, 4x4, stride 2, pads 1 (DCGAN-style
         upsampling) vs a 4x4 Conv C -> M, stride 1, pads [1, 2];
  k3s1   ConvTranspose C -> M, 3x3, stride 1, pads 1 vs a 3x3 Conv, pads 1.

Both models of a pair are generated with the default schedule, compiled
into one program with -O3 -march=native (and -fopenmp with --threads > 1),
and run in alternating blocks; the line per pair gives both medians and
their ratio (ConvTranspose / Conv; 1.0 is "as fast as a conv of the same
FLOPs").

  python3 bench/convtranspose.py --lgen src/lgen [--size 56] [--channels 64]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True
import onnx  # noqa: E402
from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

MAIN = r"""#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "a.h"
#include "b.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec * 1e-6; }
static int cmp(const void *p, const void *q) { double a = *(const double *)p, b = *(const double *)q; return (a > b) - (a < b); }
int main(void) {
  size_t nx = %(NX)d, na = %(NA)d, nb = %(NB)d;
  float *x = malloc(nx * sizeof *x), *ya = malloc(na * sizeof *ya), *yb = malloc(nb * sizeof *yb);
  void *wa = NULL, *wb = NULL;
  if (posix_memalign(&wa, 64, a_WORKSPACE_SIZE + 64) || posix_memalign(&wb, 64, b_WORKSPACE_SIZE + 64)) return 1;
  for (size_t i = 0; i < nx; i++) x[i] = (float)((i * 2654435761u) %% 1000) / 1000.0f - 0.5f;
  enum { BLOCKS = %(BLOCKS)d, REPS = %(REPS)d };
  double ta[BLOCKS], tb[BLOCKS];
  a_run(x, ya, wa); b_run(x, yb, wb);
  for (int k = 0; k < BLOCKS; k++) {
    double t0 = now();
    for (int r = 0; r < REPS; r++) a_run(x, ya, wa);
    double t1 = now();
    for (int r = 0; r < REPS; r++) b_run(x, yb, wb);
    double t2 = now();
    ta[k] = (t1 - t0) / REPS, tb[k] = (t2 - t1) / REPS;
  }
  qsort(ta, BLOCKS, sizeof *ta, cmp); qsort(tb, BLOCKS, sizeof *tb, cmp);
  printf("%%.4f %%.4f\n", ta[BLOCKS / 2], tb[BLOCKS / 2]);
  return 0;
}
"""


def model(path, node, x_shape, inits):
    g = h.make_graph([node], os.path.basename(path), [h.make_tensor_value_info("x", T.FLOAT, x_shape)],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    onnx.save(m, path)


def w(name, shape, seed):
    return nh.from_array((np.random.default_rng(seed).standard_normal(shape) * 0.1).astype(np.float32), name)


def pairs(C, M, S):
    x = [1, C, S, S]
    return [
        ("k2s2", h.make_node("ConvTranspose", ["x", "w"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
         [w("w", [C, M, 2, 2], 1)], [1, M, 2 * S, 2 * S],
         h.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[1, 1]), [w("w", [4 * M, C, 1, 1], 2)], [1, 4 * M, S, S], x),
        ("k4s2", h.make_node("ConvTranspose", ["x", "w"], ["y"], kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1]),
         [w("w", [C, M, 4, 4], 3)], [1, M, 2 * S, 2 * S],
         h.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[4, 4], pads=[1, 1, 2, 2]), [w("w", [M, C, 4, 4], 4)],
         [1, M, S, S], x),
        ("k3s1", h.make_node("ConvTranspose", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         [w("w", [C, M, 3, 3], 5)], [1, M, S, S],
         h.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]), [w("w", [M, C, 3, 3], 6)],
         [1, M, S, S], x),
    ]


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode:
        sys.exit("%s failed:\n%s" % (" ".join(cmd), p.stdout.decode()[-2000:]))
    return p.stdout.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lgen", required=True)
    ap.add_argument("--srcdir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--size", type=int, default=56)
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--blocks", type=int, default=9)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cc", default="gcc")
    args = ap.parse_args()
    args.lgen = os.path.abspath(args.lgen)
    loader_path = os.path.join(args.srcdir, "scripts", "lgen-onnx2json")
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("onnx2json", loader_path)
    spec = importlib.util.spec_from_loader("onnx2json", loader)
    o2j = importlib.util.module_from_spec(spec)
    loader.exec_module(o2j)
    C = M = args.channels
    S = args.size
    work = tempfile.mkdtemp(prefix="lgen-convt-bench.")
    print("ConvTranspose vs Conv of the same FLOPs: C = M = %d, input %dx%d, %s -O3 -march=native, 1 thread" %
          (C, S, S, args.cc))
    for name, tnode, tinit, tout, cnode, cinit, cout, xs in pairs(C, M, S):
        d = os.path.join(work, name)
        os.makedirs(d)
        for tag, node, inits in (("a", tnode, tinit), ("b", cnode, cinit)):
            model(os.path.join(d, tag + ".onnx"), node, xs, inits)
            with open(os.path.join(d, tag + ".json"), "w") as f:
                f.write(o2j.model_to_json(onnx.load(os.path.join(d, tag + ".onnx"))))
            run([args.lgen, tag + ".json", "-o", tag + ".c", "-H", tag + ".h", "--name=" + tag], d)
        with open(os.path.join(d, "main.c"), "w") as f:
            f.write(MAIN % {"NX": int(np.prod(xs)), "NA": int(np.prod(tout)), "NB": int(np.prod(cout)),
                            "BLOCKS": args.blocks, "REPS": args.reps})
        run([args.cc, "-std=c99", "-O3", "-march=native", "a.c", "b.c", "main.c", "-o", "bench", "-lm"], d)
        ta, tb = map(float, run(["./bench"], d).split())
        flops = 2.0 * C * M * S * S * {"k2s2": 4, "k4s2": 16, "k3s1": 9}[name]
        print("%-5s convtranspose %.3f ms  conv %.3f ms  ratio %.2f  (%.1f GFLOP/s vs %.1f)" %
              (name, ta, tb, ta / tb, flops / ta / 1e6, flops / tb / 1e6), flush=True)


if __name__ == "__main__":
    main()
