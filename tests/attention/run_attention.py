#!/usr/bin/python3
"""attention, online_attention and attention_scores against NumPy (tests/attention.test).

Each group is one lgen-graph/1 graph of independent nodes over shapes with
tiny, odd and prime extents (Lq = 1, Lk = 1, D = 1, key lengths that are not
a multiple of the template's 128-key tile, query lengths over its 128-row
tile, Dv not a multiple of 32), causal masks with Lq != Lk and explicit
diagonal offsets (also negative: rows with every key masked), float and bool
masks broadcast from rank 1 to 4 and shorter than the keys (mask_pad),
grouped heads, softcap, kv_lens (with the causal diagonal from them),
online_attention's running max and sum, attention_scores' four modes, and a
graph mixing attention with matmuls and elementwise ops. Every graph is
generated three ways (default, --fuse=none, --schedule=none), compiled with
gcc -std=c99 -pedantic -Wall -Wextra -Werror -O2 with and without -fopenmp,
and run (OMP_NUM_THREADS=1 and 2 with OpenMP).

The reference is NumPy in float64 on the same float32 inputs, materialising
the scores (the definition in ops.md); never lgen's code. Tolerance: every
element within 2e-5 * max(1, |reference|) (the template computes in float:
exp to 1 ulp, sums of up to a few hundred terms); infinities (the running
max of a fully masked row) and zeros (its output) must be exact. Prints
PASS/FAIL per graph and variant, then "N passed, N failed".
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True

NP_TYPES = {"f32": np.float32, "i64": np.int64, "i32": np.int32, "i1": np.bool_}
C_TYPES = {"f32": "float", "i64": "int64_t", "i32": "int32_t", "i1": "_Bool"}
VARIANTS = [("auto", []), ("fuse-none", ["--fuse=none"]), ("schedule-none", ["--schedule=none"])]
TOL = 2e-5


def tname(a):
    for k, v in NP_TYPES.items():
        if a.dtype == v:
            return k
    raise ValueError(a.dtype)


class Graph:
    def __init__(self, name):
        self.name = name
        self.inputs, self.nodes, self.outputs, self.arrays, self.refs = [], [], [], [], []
        self.n = 0

    def input(self, a):
        name = "x%d" % len(self.inputs)
        self.inputs.append({"name": name, "type": tname(a), "shape": list(a.shape)})
        self.arrays.append(np.ascontiguousarray(a))
        return name

    def node(self, op, ins, nout=1, **attrs):
        outs = []
        for _ in range(nout):
            self.n += 1
            outs.append("v%d" % self.n)
        self.nodes.append({"op": op, "inputs": ins, "outputs": outs, "attrs": attrs})
        return outs if nout > 1 else outs[0]

    def output(self, name, ref):
        self.outputs.append(name)
        self.refs.append(np.asarray(ref, dtype=np.float32))

    def doc(self):
        return {"format": "lgen-graph/1", "name": self.name, "inputs": self.inputs, "outputs": self.outputs,
                "nodes": self.nodes}


# ---------------------------------------------------------------------------
# The reference: ops.md's definition, scores materialised, float64

def ref_attention(q, k, v, mask=None, lens=None, scale=None, causal=0, causal_offset=0, causal_lens=0,
                  softcap=0.0, mask_pad=0):
    """(o, max, sum, scores by qk_mode 0..3) for q [..., H, Lq, D] etc."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    r = q.ndim
    lq, d = q.shape[-2:]
    lk = k.shape[-2]
    if scale is None:
        scale = 1.0 / np.sqrt(d)
    if r >= 3 and q.shape[-3] != k.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        k = np.repeat(k, rep, axis=-3)
        v = np.repeat(v, rep, axis=-3)
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    raw = s.copy()
    bias = np.zeros(s.shape)
    if mask is not None:
        m = mask
        if m.shape[-1] < lk and (m.shape[-1] > 1 or mask_pad):
            pad = [(0, 0)] * (m.ndim - 1) + [(0, lk - m.shape[-1])]
            m = np.pad(m, pad, constant_values=(False if m.dtype == np.bool_ else -np.inf))
        m = np.where(m, 0.0, -np.inf) if m.dtype == np.bool_ else m.astype(np.float64)
        bias = bias + m
    i = np.arange(lq)[:, None]
    j = np.arange(lk)[None, :]
    lead = (1,) * (r - 2)
    if causal:
        if causal_lens:
            off = (lens.astype(np.int64) - lq).reshape((-1,) + (1,) * (r - 1))
        else:
            off = causal_offset
        bias = bias + np.where(j <= i + off, 0.0, -np.inf)
    if lens is not None:
        bias = bias + np.where(j < lens.astype(np.int64).reshape((-1,) + (1,) * (r - 1)), 0.0, -np.inf)
    s = s + bias
    mx = s.max(axis=-1)
    full = np.isneginf(mx)
    e = np.exp(s - np.where(full, 0, mx)[..., None])
    ssum = e.sum(axis=-1)
    p = np.where(ssum[..., None] > 0, e / np.where(ssum > 0, ssum, 1)[..., None], 0.0)
    o = np.matmul(p, v)
    del lead
    return o, mx, ssum, {0: raw, 1: raw, 2: s, 3: p}


def rnd(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def add_attention(g, r, qs, ks, vs, mask=None, lens=None, online=False, modes=(), **attrs):
    q, k, v = rnd(r, *qs), rnd(r, *ks), rnd(r, *vs)
    ins = [g.input(q), g.input(k), g.input(v)]
    if mask is not None:
        ins.append(g.input(mask))
    if lens is not None:
        ins.append(g.input(lens))
    o, mx, sm, sc = ref_attention(q, k, v, mask, lens, **attrs)
    if online:
        out, m, s = g.node("online_attention", ins, nout=3, **attrs)
        g.output(out, o)
        g.output(m, mx)
        g.output(s, sm)
    else:
        g.output(g.node("attention", ins, **attrs), o)
    for mode in modes:
        g.output(g.node("attention_scores", ins, qk_mode=mode, **attrs), sc[mode])


def g_shapes(r):
    g = Graph("attn_shapes")
    for qs, ks, vs in [((1, 1), (1, 1), (1, 1)),                     # rank 2, everything 1
                       ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1)),
                       ((2, 3, 37, 8), (2, 3, 70, 8), (2, 3, 70, 5)),
                       ((1, 2, 129, 64), (1, 2, 131, 64), (1, 2, 131, 64)),  # over one tile both ways
                       ((3, 5, 3), (3, 257, 3), (3, 257, 7)),          # rank 3, Lk over two key tiles
                       ((1, 1, 200, 16), (1, 1, 17, 16), (1, 1, 17, 33)),
                       ((2, 2, 1, 13), (2, 2, 300, 13), (2, 2, 300, 40)),   # decode: Lq = 1
                       ((2, 1, 3, 4, 9), (2, 1, 3, 11, 9), (2, 1, 3, 11, 2))]:  # rank 5
        add_attention(g, r, qs, ks, vs)
    add_attention(g, r, (2, 4, 6), (2, 7, 6), (2, 7, 6), scale=0.3)
    return g


def g_causal(r):
    g = Graph("attn_causal")
    for lq, lk, off in [(4, 6, None), (6, 4, None), (5, 9, 4), (9, 5, -4), (130, 300, 170), (300, 130, 0),
                        (7, 7, -3), (1, 131, 130)]:
        attrs = {"causal": 1}
        if off is not None:
            attrs["causal_offset"] = off
        add_attention(g, r, (2, 2, lq, 8), (2, 2, lk, 8), (2, 2, lk, 8), **attrs)
    return g


def g_mask(r):
    g = Graph("attn_mask")
    lq, lk = 5, 140
    add_attention(g, r, (2, 3, lq, 8), (2, 3, lk, 8), (2, 3, lk, 4), mask=rnd(r, lq, lk))
    add_attention(g, r, (2, 3, lq, 8), (2, 3, lk, 8), (2, 3, lk, 4), mask=rnd(r, 2, 3, lq, lk))
    add_attention(g, r, (2, 3, lq, 8), (2, 3, lk, 8), (2, 3, lk, 4), mask=rnd(r, 2, 1, lq, lk))
    add_attention(g, r, (2, 3, lq, 8), (2, 3, lk, 8), (2, 3, lk, 4), mask=rnd(r, 3, 1, lk))
    add_attention(g, r, (2, 3, lq, 8), (2, 3, lk, 8), (2, 3, lk, 4), mask=rnd(r, lk))
    add_attention(g, r, (2, 3, lq, 8), (2, 3, lk, 8), (2, 3, lk, 4), mask=rnd(r, lq, 1))
    bm = r.random((2, 1, lq, lk)) < 0.6
    bm[0, 0, 2, :] = False  # a row with every key masked
    add_attention(g, r, (2, 3, lq, 8), (2, 3, lk, 8), (2, 3, lk, 4), mask=bm)
    add_attention(g, r, (2, 3, lq, 8), (2, 3, lk, 8), (2, 3, lk, 4), mask=r.random((lq, lk)) < 0.5, causal=1,
                  causal_offset=lk - lq)
    # shorter than the keys: the rest are masked
    add_attention(g, r, (2, 3, lq, 8), (2, 3, lk, 8), (2, 3, lk, 4), mask=rnd(r, lq, 100))
    add_attention(g, r, (1, 2, lq, 8), (1, 2, 9, 8), (1, 2, 9, 4), mask=r.random((1, 2, lq, 6)) < 0.8)
    add_attention(g, r, (1, 2, lq, 8), (1, 2, 9, 8), (1, 2, 9, 4), mask=rnd(r, lq, 1), mask_pad=1)
    return g


def g_gqa_softcap(r):
    g = Graph("attn_gqa_softcap")
    add_attention(g, r, (2, 6, 7, 8), (2, 2, 9, 8), (2, 2, 9, 5))
    add_attention(g, r, (2, 6, 7, 8), (2, 2, 9, 8), (2, 2, 9, 5), causal=1)
    add_attention(g, r, (1, 8, 133, 16), (1, 1, 150, 16), (1, 1, 150, 16), causal=1, causal_offset=17)
    add_attention(g, r, (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), softcap=2.0)
    m = rnd(r, 4, 6)
    m[1, :3] = -np.inf
    add_attention(g, r, (2, 6, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), mask=m, softcap=0.5, scale=0.9)
    return g


def g_lens(r):
    g = Graph("attn_lens")
    lens = np.array([3, 0, 9], dtype=np.int64)  # batch 1: every key masked
    add_attention(g, r, (3, 2, 4, 8), (3, 2, 9, 8), (3, 2, 9, 8), lens=lens)
    add_attention(g, r, (3, 2, 4, 8), (3, 2, 9, 8), (3, 2, 9, 8), lens=lens, causal=1, causal_lens=1)
    add_attention(g, r, (3, 4, 1, 8), (3, 2, 9, 8), (3, 2, 9, 8), lens=np.array([9, 1, 5], dtype=np.int32),
                  causal=1, causal_lens=1)
    add_attention(g, r, (3, 2, 4, 8), (3, 2, 200, 8), (3, 2, 200, 8), mask=r.random((3, 1, 4, 200)) < 0.7,
                  lens=np.array([150, 200, 7], dtype=np.int64), causal=1, causal_lens=1)
    return g


def g_online_scores(r):
    g = Graph("attn_online_scores")
    add_attention(g, r, (2, 3, 5, 8), (2, 3, 140, 8), (2, 3, 140, 6), online=True)
    add_attention(g, r, (2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6), online=True, causal=1, causal_offset=-2)
    add_attention(g, r, (1, 2, 1, 1), (1, 2, 1, 1), (1, 2, 1, 1), online=True)
    add_attention(g, r, (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), mask=rnd(r, 4, 6), softcap=1.5,
                  modes=(0, 1, 2, 3))
    add_attention(g, r, (2, 6, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), mask=r.random((4, 6)) < 0.5, causal=1,
                  modes=(2, 3))
    return g


def g_mixed(r):
    """x -> (matmul wq, wk, wv) -> attention -> matmul wo -> relu, and exp of a scaled q."""
    g = Graph("attn_mixed")
    x = rnd(r, 2, 33, 16)
    wq, wk, wv, wo = (rnd(r, 16, 16) * 0.3 for _ in range(4))
    xi = g.input(x)
    q = g.node("matmul", [xi, g.input(wq)])
    k = g.node("matmul", [xi, g.input(wk)])
    v = g.node("matmul", [xi, g.input(wv)])
    a = g.node("attention", [q, k, v], causal=1)
    y = g.node("relu", [g.node("matmul", [a, g.input(wo)])])
    x64 = x.astype(np.float64)
    o = ref_attention(x64 @ wq, x64 @ wk, x64 @ wv, causal=1)[0]
    g.output(y, np.maximum(o @ wo, 0))
    t = g.node("attention", [g.node("exp", [q]), k, g.node("neg", [v])], scale=0.1)
    g.output(g.node("add", [t, t]), 2 * ref_attention(np.exp(x64 @ wq), x64 @ wk, -(x64 @ wv), scale=0.1)[0])
    return g


GROUPS = [g_shapes, g_causal, g_mask, g_gqa_softcap, g_lens, g_online_scores, g_mixed]


# ---------------------------------------------------------------------------
# Generate, compile, run, compare

def harness(g, hname):
    lines = ["#include <stdio.h>", "#include <stdlib.h>", "#include <stdint.h>", '#include "%s"' % hname, "",
             "static void *load(const char *path, size_t n)", "{", "  void *p = malloc(n ? n : 1);",
             "  FILE *f = fopen(path, \"rb\");",
             "  if (!p || !f || fread(p, 1, n, f) != n) { fprintf(stderr, \"cannot read %s\\n\", path); exit(2); }",
             "  fclose(f);", "  return p;", "}", "", "static void save(const char *path, const void *p, size_t n)", "{",
             "  FILE *f = fopen(path, \"wb\");",
             "  if (!f || fwrite(p, 1, n, f) != n || fclose(f)) { fprintf(stderr, \"cannot write %s\\n\", path); exit(2); }",
             "}", "", "int main(void)", "{"]
    args = []
    for i, a in enumerate(g.arrays):
        lines.append("  %s *in%d = load(\"in_%d.bin\", %d);" % (C_TYPES[tname(a)], i, i, a.nbytes))
        args.append("in%d" % i)
    for i, ref in enumerate(g.refs):
        lines.append("  float *out%d = malloc(%d);" % (i, max(ref.nbytes, 1)))
        args.append("out%d" % i)
    lines.append("  if (%s(%s) != 0) return 3;" % (g.name, ", ".join(args)))
    for i, ref in enumerate(g.refs):
        lines.append("  save(\"out_%d.bin\", out%d, %d);" % (i, i, ref.nbytes))
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def run(cmd, cwd, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=300)
        return p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return -1, "timed out"


def compare(g, d):
    for i, ref in enumerate(g.refs):
        got = np.fromfile(os.path.join(d, "out_%d.bin" % i), dtype=np.float32)
        if got.size != ref.size:
            return "output %d: %d elements, want %d" % (i, got.size, ref.size)
        got = got.reshape(ref.shape).astype(np.float64)
        want = ref.astype(np.float64)
        with np.errstate(invalid="ignore"):
            close = (got == want) | (np.abs(got - want) <= TOL * np.maximum(1, np.abs(want)))
        if not np.all(close):
            bad = np.argwhere(~close)[:3].tolist()
            return "output %d (node %s): differs from NumPy at %s; got %s, want %s" % (
                i, g.outputs[i], bad, [got[tuple(b)] for b in bad], [want[tuple(b)] for b in bad])
    return None


def test_group(g, opts, work):
    results = []
    base = os.path.join(work, g.name)
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, g.name + ".json"), "w") as f:
        json.dump(g.doc(), f, indent=1)
    for i, a in enumerate(g.arrays):
        a.tofile(os.path.join(base, "in_%d.bin" % i))
    for vname, vargs in VARIANTS:
        d = os.path.join(base, vname)
        os.makedirs(d, exist_ok=True)
        rc, out = run([opts.lgen, os.path.join(base, g.name + ".json"), "-o", "g.c", "-H", "g.h"] + vargs, d)
        if rc != 0:
            results.append((False, "%s %s: lgen exit %d: %s" % (g.name, vname, rc, out.strip()[:400])))
            continue
        with open(os.path.join(d, "main.c"), "w") as f:
            f.write(harness(g, "g.h"))
        for i in range(len(g.arrays)):
            dst = os.path.join(d, "in_%d.bin" % i)
            if not os.path.exists(dst):
                os.symlink(os.path.join(base, "in_%d.bin" % i), dst)
        for omp in (False, True):
            tag = "%s %s%s" % (g.name, vname, " -fopenmp" if omp else "")
            cmd = [opts.cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2"] + \
                (["-fopenmp"] if omp else []) + ["-o", "prog", "g.c", "main.c", "-lm"]
            rc, out = run(cmd, d)
            if rc != 0:
                results.append((False, "%s: %s failed:\n%s" % (tag, opts.cc, out.strip()[:1500])))
                continue
            for threads in ((1, 2) if omp else (1,)):
                env = dict(os.environ, OMP_NUM_THREADS=str(threads))
                rc, out = run(["./prog"], d, env)
                what = "%s threads=%d" % (tag, threads)
                if rc != 0:
                    results.append((False, "%s: exit %d: %s" % (what, rc, out.strip()[:300])))
                    continue
                err = compare(g, d)
                results.append((err is None, "%s%s" % (what, ": " + err if err else "")))
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lgen", required=True)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--work")
    ap.add_argument("--only", default="")
    opts = ap.parse_args()
    work = opts.work or tempfile.mkdtemp(prefix="lgen-attn-")
    r = np.random.default_rng(23)
    npass = nfail = 0
    for make in GROUPS:
        g = make(r)
        if opts.only and opts.only not in g.name:
            continue
        for ok, msg in test_group(g, opts, work):
            print("%s: %s" % ("PASS" if ok else "FAIL", msg))
            npass += ok
            nfail += not ok
        print("# %s: %d nodes, %d outputs" % (g.name, len(g.nodes), len(g.outputs)))
        sys.stdout.flush()
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
