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
gcc -std=c99 -pedantic -Wall -Wextra -Werror -O1 with and without -fopenmp,
and run (OMP_NUM_THREADS=1 and 2 with OpenMP).

The reference is NumPy in float64 on the same float32 inputs, materialising
the scores (the definition in ops.md); never lgen's code. Tolerance: every
element within 2e-5 * max(1, |reference|) (the template computes in float:
exp to 1 ulp, sums of up to a few hundred terms); infinities (the running
max of a fully masked row) and zeros (its output) must be exact. Group
attn_f64 runs f64 tensors (computed in double) within 1e-12. Prints
PASS/FAIL per graph and variant, then "N passed, N failed".
"""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ext-ops"))
import run_ext_ops as X  # noqa: E402  (Graph, harness, test_group, main_for)


class Graph(X.Graph):
    """Outputs are f32, compared within 2e-5 * max(1, |reference|)."""
    rtol = 2e-5

    def output(self, name, ref):
        super().output(name, np.asarray(ref, dtype=np.float32), exact=False)


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


def add_attention(g, r, qs, ks, vs, mask=None, lens=None, online=False, modes=(), f64=False, **attrs):
    q, k, v = (r.standard_normal(s) if f64 else rnd(r, *s) for s in (qs, ks, vs))
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
    # -inf over whole key tiles (128 keys) first: rows whose leading tiles
    # have no key left (left padding), one tile exactly, all but the last key
    m = rnd(r, lq, 300)
    m[0, :200] = m[1, :128] = m[2, 128:256] = -np.inf
    m[3, :299] = -np.inf
    add_attention(g, r, (2, 3, lq, 8), (2, 3, 300, 8), (2, 3, 300, 4), mask=m)
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


class Graph64(X.Graph):
    """f64 attention computes in double (libm's exp): outputs within 1e-12 *
    max(1, |reference|)."""
    rtol = 1e-12

    def output(self, name, ref):
        super().output(name, np.asarray(ref, dtype=np.float64), exact=False)


def g_f64(r):
    """attention on f64 tensors, computed in double: partial tiles both ways,
    causal with Lq != Lk, an f64 mask with a fully masked row, grouped heads
    with softcap, kv_lens, online_attention's max and sum, the scores."""
    g = Graph64("attn_f64")

    def add(qs, ks, vs, **attrs):
        add_attention(g, r, qs, ks, vs, f64=True, **attrs)

    add((1, 1), (1, 1), (1, 1))
    add((2, 3, 37, 8), (2, 3, 131, 8), (2, 3, 131, 5))
    add((1, 2, 130, 64), (1, 2, 257, 64), (1, 2, 257, 33), causal=1)
    add((2, 2, 9, 8), (2, 2, 5, 8), (2, 2, 5, 8), causal=1, causal_offset=-4)
    m = r.standard_normal((4, 6))
    m[1, :] = -np.inf
    add((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), mask=m)
    add((2, 6, 7, 8), (2, 2, 9, 8), (2, 2, 9, 5), softcap=1.5, scale=0.7)
    add((3, 2, 4, 8), (3, 2, 9, 8), (3, 2, 9, 8), lens=np.array([3, 0, 9], dtype=np.int64), causal=1, causal_lens=1)
    add((2, 3, 5, 8), (2, 3, 140, 8), (2, 3, 140, 6), online=True)
    add((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), mask=r.random((4, 6)) < 0.5, modes=(0, 1, 2, 3))
    return g


def add_mapped(g, r, qs, ks, vs, kt, vt, mask=None, lens=None, online=False, modes=(), f64=False, qt=0, ot=0,
               **attrs):
    """attention with k and/or v stored transposed ([..., D, Lk], [..., Dv,
    Lk]) and read through k_map / v_map, q stored [..., D, Lq] (q_map) and the
    output [..., Dv, Lq] (o_map); the reference gets and gives them untransposed."""
    q, k, v = (r.standard_normal(sh) if f64 else rnd(r, *sh) for sh in (qs, ks, vs))
    n = len(qs)
    swap = list(range(n - 2)) + [n - 1, n - 2]

    def t(a, yes):
        return np.ascontiguousarray(np.swapaxes(a, -1, -2)) if yes else a
    ins = [g.input(t(q, qt)), g.input(np.ascontiguousarray(np.swapaxes(k, -1, -2)) if kt else k),
           g.input(np.ascontiguousarray(np.swapaxes(v, -1, -2)) if vt else v)]
    if mask is not None:
        ins.append(g.input(mask))
    if lens is not None:
        ins.append(g.input(lens))
    o, mx, sm, sc = ref_attention(q, k, v, mask, lens, **attrs)
    maps = {}
    if kt:
        maps["k_map"] = swap
    if vt:
        maps["v_map"] = swap
    elif kt and n > 2:
        maps["v_map"] = list(range(n))  # the identity, spelt out
    if qt:
        maps["q_map"] = swap
    omap = {"o_map": swap} if ot else {}
    if online:
        out, m, s_ = g.node("online_attention", ins, nout=3, **attrs, **maps, **omap)
        g.output(out, t(o, ot))
        g.output(m, mx)
        g.output(s_, sm)
    else:
        g.output(g.node("attention", ins, **attrs, **maps, **omap), t(o, ot))
    for mode in modes:
        g.output(g.node("attention_scores", ins, qk_mode=mode, **attrs, **maps), sc[mode])


def g_maps(r):
    """k_map / v_map (IREE's attention indexing maps): k stored [..., D, Lk],
    v stored [..., Dv, Lk], or both, read through the map: partial tiles both
    ways (Lk 131, 257), rank 2, 3 and 5, grouped heads, causal, a mask,
    kv_lens, online_attention's max and sum, the four score modes; and a
    graph whose K^T is a matmul's result fed straight in."""
    g = Graph("attn_maps")
    for kt, vt in ((1, 0), (0, 1), (1, 1)):
        add_mapped(g, r, (1, 1), (1, 1), (1, 1), kt, vt)
        add_mapped(g, r, (2, 3, 37, 8), (2, 3, 131, 8), (2, 3, 131, 5), kt, vt)
        add_mapped(g, r, (3, 5, 3), (3, 257, 3), (3, 257, 7), kt, vt)
        add_mapped(g, r, (2, 1, 3, 4, 9), (2, 1, 3, 11, 9), (2, 1, 3, 11, 2), kt, vt)
        add_mapped(g, r, (2, 6, 7, 8), (2, 2, 9, 8), (2, 2, 9, 5), kt, vt, causal=1)
        add_mapped(g, r, (1, 2, 130, 16), (1, 2, 140, 16), (1, 2, 140, 13), kt, vt, causal=1, causal_offset=10)
        add_mapped(g, r, (2, 3, 5, 8), (2, 3, 140, 8), (2, 3, 140, 4), kt, vt, mask=rnd(r, 5, 100))
        add_mapped(g, r, (3, 2, 4, 8), (3, 2, 9, 8), (3, 2, 9, 8), kt, vt, lens=np.array([3, 0, 9], dtype=np.int64))
        add_mapped(g, r, (2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6), kt, vt, online=True)
        add_mapped(g, r, (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), kt, vt, mask=r.random((4, 6)) < 0.5,
                   modes=(0, 1, 2, 3))
    # K^T [D, L] and V^T [Dv, L] as matmuls' results: wk^T x^T, wv^T x^T
    x = rnd(r, 33, 16)
    wq, wk, wv = (rnd(r, 16, 16) * 0.3 for _ in range(3))
    xi, xti = g.input(x), g.input(np.ascontiguousarray(x.T))
    q = g.node("matmul", [xi, g.input(wq)])
    kT = g.node("matmul", [g.input(np.ascontiguousarray(wk.T)), xti])
    vT = g.node("matmul", [g.input(np.ascontiguousarray(wv.T)), xti])
    x64 = x.astype(np.float64)
    g.output(g.node("attention", [q, kT, vT], causal=1, k_map=[1, 0], v_map=[1, 0]),
             ref_attention(x64 @ wq, x64 @ wk, x64 @ wv, causal=1)[0])
    return g


def g_maps_f64(r):
    g = Graph64("attn_maps_f64")
    add_mapped(g, r, (2, 3, 37, 8), (2, 3, 131, 8), (2, 3, 131, 5), 1, 1, f64=True)
    add_mapped(g, r, (2, 6, 7, 8), (2, 2, 9, 8), (2, 2, 9, 5), 1, 0, f64=True, causal=1, softcap=1.5)
    add_mapped(g, r, (2, 3, 5, 8), (2, 3, 140, 8), (2, 3, 140, 6), 0, 1, f64=True, online=True)
    return g


def g_maps_qo(r):
    """q_map / o_map (IREE's attention indexing maps of q and the output): q
    stored [..., D, Lq], the output written [..., Dv, Lq], alone, together and
    with k_map / v_map: a partial query tile (Lq 131), rank 2, 3 and 5,
    grouped heads, causal, a mask, kv_lens, online_attention, the scores."""
    g = Graph("attn_maps_qo")
    for qt, ot, kt, vt in ((1, 0, 0, 0), (0, 1, 0, 0), (1, 1, 0, 0), (1, 1, 1, 1), (1, 0, 1, 0), (0, 1, 0, 1)):
        add_mapped(g, r, (1, 1), (1, 1), (1, 1), kt, vt, qt=qt, ot=ot)
        add_mapped(g, r, (2, 3, 131, 8), (2, 3, 37, 8), (2, 3, 37, 5), kt, vt, qt=qt, ot=ot)
        add_mapped(g, r, (3, 5, 3), (3, 7, 3), (3, 7, 7), kt, vt, qt=qt, ot=ot)
        add_mapped(g, r, (2, 1, 3, 4, 9), (2, 1, 3, 11, 9), (2, 1, 3, 11, 2), kt, vt, qt=qt, ot=ot)
        add_mapped(g, r, (2, 6, 7, 8), (2, 2, 9, 8), (2, 2, 9, 5), kt, vt, qt=qt, ot=ot, causal=1)
        add_mapped(g, r, (2, 3, 5, 8), (2, 3, 13, 8), (2, 3, 13, 4), kt, vt, qt=qt, ot=ot, mask=rnd(r, 5, 13))
        add_mapped(g, r, (3, 2, 4, 8), (3, 2, 9, 8), (3, 2, 9, 8), kt, vt, qt=qt, ot=ot,
                   lens=np.array([3, 0, 9], dtype=np.int64))
        add_mapped(g, r, (2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6), kt, vt, qt=qt, ot=ot, online=True)
        add_mapped(g, r, (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), kt, vt, qt=qt, ot=ot, modes=(0, 3))
    return g


GROUPS = [g_shapes, g_causal, g_mask, g_gqa_softcap, g_lens, g_online_scores, g_mixed, g_f64, g_maps, g_maps_f64,
          g_maps_qo]


def main():
    return X.main_for(GROUPS, "lgen-attn-", 23)


if __name__ == "__main__":
    sys.exit(main())
