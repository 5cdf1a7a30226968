#!/usr/bin/python3
"""lgen's OpDSL library: the named ops of upstream Linalg's
LinalgNamedStructuredOps.yaml (as generated from OpDSL's core_named_ops.py),
written here from their definitions (layouts, windows, casts) and printed as
OpDSL YAML: `python3 tests/opdsl/linalg_ops.py > specs/linalg.yaml`.

Each op is described by its operands' shapes in named sizes, its domain, its
operands' indices in dims and attribute symbols, and its payload; symbols
are numbered in order of first appearance, as OpDSL numbers them. The
numeric test (run_opdsl.py) reads the YAML, not this file: its oracles are
written from the op names (layouts) alone.
"""

import re
import sys

# ---------------------------------------------------------------- payloads


def arg(name):
    return ("arg", name)


def const(text):
    return ("const", text)


def index(d):
    return ("index", d)


def fn(kind, name, *ops, type_var=None, attr=False):
    return ("fn", kind, name, attr, type_var, list(ops))


def binary(name, a, b):
    return fn("binary", name, a, b)


def cast(tv, x, name="cast_signed", attr=False):
    return fn("type", name, x, type_var=tv, attr=attr)


def add(a, b):
    return binary("add", a, b)


def mul(a, b):
    return binary("mul", a, b)


def sub(a, b):
    return binary("sub", a, b)


# ---------------------------------------------------------------- ops


class Op:
    def __init__(self, name, doc, args, dims, maps, assigns, implements=(), defines=(), poly=False):
        self.name = name
        self.doc = doc
        self.args = args          # dicts: name, kind, type_var, shape [exprs] / syms, defaults, default_fn
        self.dims = dims          # [(dim name, "parallel"|"reduction")]
        self.maps = maps          # operand name -> [index exprs]
        self.assigns = assigns    # [(output, payload)]
        self.implements = list(implements)
        self.defines = list(defines)
        self.poly = poly


def tensor(name, tv, shape, out=False):
    return {"name": name, "kind": "output_tensor" if out else "input_tensor", "type_var": tv, "shape": shape}


def scalar(name, tv):
    return {"name": name, "kind": "scalar", "type_var": tv}


def index_attr(name, syms, defaults):
    return {"name": name, "kind": "index_attr", "syms": syms, "defaults": defaults}


def fn_attr(name, kind, default):
    return {"name": name, "kind": kind + "_fn_attr", "default_fn": default}


TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def symbols_of(op):
    """Symbol names in order of first appearance: the operands' shapes, then
    the index attributes."""
    order = []
    for a in op.args:
        for e in a.get("shape", []):
            for t in TOKEN.findall(e):
                if t not in order:
                    order.append(t)
    for a in op.args:
        for t in a.get("syms", []):
            if t not in order:
                order.append(t)
    return order


def rename(expr, table):
    return TOKEN.sub(lambda m: table[m.group(0)], expr)


def affine(dims, syms, results):
    d = "(" + ", ".join(dims) + ")"
    s = "[" + ", ".join(syms) + "]" if syms else ""
    return "affine_map<%s%s -> (%s)>" % (d, s, ", ".join(results))


def yaml_expr(e, indent):
    pad = " " * indent
    kind = e[0]
    if kind == "arg":
        return [pad + "scalar_arg: " + e[1]]
    if kind == "const":
        return [pad + "scalar_const: '" + e[1] + "'"]
    if kind == "index":
        return [pad + "scalar_index: %d" % e[1]]
    _, fkind, name, attr, tv, ops = e
    lines = [pad + "scalar_fn:", pad + "  kind: " + fkind,
             pad + ("  attr_name: " if attr else "  fn_name: ") + name]
    if tv:
        lines.append(pad + "  type_var: " + tv)
    lines.append(pad + "  operands:")
    for o in ops:
        lines.append(pad + "  - !ScalarExpression")
        lines += yaml_expr(o, indent + 4)
    return lines


def yaml_op(op):
    syms = symbols_of(op)
    stab = {s: "s%d" % i for i, s in enumerate(syms)}
    snames = [stab[s] for s in syms]
    dtab = {d: "d%d" % i for i, (d, _) in enumerate(op.dims)}
    dnames = [dtab[d] for d, _ in op.dims]
    both = dict(stab)
    both.update(dtab)
    cls = "".join(w.capitalize() for w in op.name.split("_")) + "Op"
    out = ["--- !LinalgOpConfig", "metadata: !LinalgOpMetadata", "  name: " + op.name,
           "  cpp_class_name: " + cls, "  doc: |-"]
    out += ["    " + l if l else "" for l in op.doc.split("\n")]
    if op.implements:
        out.append("  implements:")
        out += ["  - " + i for i in op.implements]
    if op.defines:
        out.append("  defines:")
        out += ["  - " + i for i in op.defines]
    out += ["structured_op: !LinalgStructuredOpConfig", "  args:"]
    for a in op.args:
        out += ["  - !LinalgOperandDefConfig", "    name: " + a["name"], "    kind: " + a["kind"]]
        if "type_var" in a:
            out.append("    type_var: " + a["type_var"])
        if "shape" in a:
            res = [] if op.poly else [rename(e, stab) for e in a["shape"]]
            out.append("    shape_map: " + affine([], [] if op.poly else snames, res).replace("<()", "<()", 1))
        if "syms" in a:
            out.append("    index_attr_map: " + affine([], snames, [stab[s] for s in a["syms"]]))
            out.append("    default_indices:")
            out += ["    - %d" % v for v in a["defaults"]]
        if "default_fn" in a:
            out.append("    default_fn: " + a["default_fn"])
    out += ["  indexing_maps: !LinalgIndexingMapsConfig", "    static_indexing_maps:"]
    for a in op.args:
        if a["kind"] not in ("input_tensor", "output_tensor", "scalar"):
            continue
        if op.poly:
            out.append("    - affine_map<() -> ()>")
        else:
            res = [rename(e, both) for e in op.maps.get(a["name"], [])]
            out.append("    - " + affine(dnames, snames, res))
    if op.dims:
        out.append("  iterator_types:")
        out += ["  - " + k for _, k in op.dims]
    else:
        out.append("  iterator_types: []")
    out.append("  assignments:")
    for o, v in op.assigns:
        out += ["  - !ScalarAssign", "    arg: " + o, "    value: !ScalarExpression"]
        out += yaml_expr(v, 6)
    return "\n".join(out)


# ---------------------------------------------------------------- the library

OPS = []

ELEMENTWISE_DOC = "\n\nOperands have one shape (rank-polymorphic); broadcasts and casts are explicit ops."


def elementwise():
    OPS.append(Op("copy", "Copies the input into the output elementwise, cast to the output's type.",
                  [tensor("I", "T1", []), tensor("O", "U", [], out=True), fn_attr("cast", "type", "cast_signed")],
                  [], {}, [("O", cast("U", arg("I"), "cast", attr=True))], defines=["hasCanonicalizer"], poly=True))
    for name, f, what in [("add", "add", "Adds"), ("sub", "sub", "Subtracts"), ("mul", "mul", "Multiplies"),
                          ("div", "div", "Divides"), ("div_unsigned", "div_unsigned", "Divides (unsigned)"),
                          ("max", "max_signed", "Takes the (signed) maximum of"),
                          ("min", "min_signed", "Takes the (signed) minimum of"),
                          ("powf", "powf", "Raises (powf)")]:
        OPS.append(Op(name, what + " two tensors elementwise." + ELEMENTWISE_DOC,
                      [tensor("lhs", "T1", []), tensor("rhs", "T1", []), tensor("O", "T1", [], out=True)],
                      [], {}, [("O", binary(f, arg("lhs"), arg("rhs")))], poly=True))
    OPS.append(Op("select", "Chooses lhs where cond is true, else rhs, elementwise." + ELEMENTWISE_DOC,
                  [tensor("cond", "U", []), tensor("lhs", "T1", []), tensor("rhs", "T1", []),
                   tensor("O", "T1", [], out=True)],
                  [], {}, [("O", fn("ternary", "select", arg("cond"), arg("lhs"), arg("rhs")))], poly=True))


def contraction(name, doc, shapes, dims, maps, zero_points=False, out="C", tv=("T1", "T2", "U")):
    """shapes: [(name, [sizes])] inputs then the output; maps: name -> indices."""
    (a, ash), (b, bsh), (c, csh) = shapes
    args = [tensor(a, tv[0], ash), tensor(b, tv[1], bsh)]
    if zero_points:
        args += [scalar(a + "Zp", "I32"), scalar(b + "Zp", "I32")]
    args.append(tensor(c, tv[2], csh, out=True))
    if zero_points:
        prod = mul(sub(cast(tv[2], arg(a)), cast(tv[2], arg(a + "Zp"))),
                   sub(cast(tv[2], arg(b)), cast(tv[2], arg(b + "Zp"))))
        maps = dict(maps)
        maps[a + "Zp"] = []
        maps[b + "Zp"] = []
    else:
        prod = mul(cast(tv[2], arg(a)), cast(tv[2], arg(b)))
    OPS.append(Op(name, doc + "\n\nThe operands of the multiply are cast to the output's type first.", args, dims,
                  maps, [(c, add(arg(c), prod))], implements=["LinalgContractionOpInterface"]))


P, R = "parallel", "reduction"


def contractions():
    contraction("quantized_matmul", "Matrix multiplication with zero points: C += (A - AZp) (B - BZp).",
                [("A", ["M", "K"]), ("B", ["K", "N"]), ("C", ["M", "N"])],
                [("m", P), ("n", P), ("k", R)], {"A": ["m", "k"], "B": ["k", "n"], "C": ["m", "n"]}, True)
    contraction("mmt4d", "Matrix times transposed matrix on 4-D tiled operands: lhs (M, K, M0, K0), rhs (N, K, "
                "N0, K0).", [("lhs", ["M", "K", "M0", "K0"]), ("rhs", ["N", "K", "N0", "K0"]),
                             ("accum", ["M", "N", "M0", "N0"])],
                [("m", P), ("n", P), ("k", R), ("m0", P), ("n0", P), ("k0", R)],
                {"lhs": ["m", "k", "m0", "k0"], "rhs": ["n", "k", "n0", "k0"], "accum": ["m", "n", "m0", "n0"]},
                tv=("LhsType", "RhsType", "AccumType"))
    contraction("batch_mmt4d", "Batched mmt4d on 5-D operands.",
                [("lhs", ["B", "M", "K", "M0", "K0"]), ("rhs", ["B", "N", "K", "N0", "K0"]),
                 ("accum", ["B", "M", "N", "M0", "N0"])],
                [("b", P), ("m", P), ("n", P), ("k", R), ("m0", P), ("n0", P), ("k0", R)],
                {"lhs": ["b", "m", "k", "m0", "k0"], "rhs": ["b", "n", "k", "n0", "k0"],
                 "accum": ["b", "m", "n", "m0", "n0"]}, tv=("LhsType", "RhsType", "AccumType"))
    contraction("quantized_batch_matmul", "Batched matrix multiplication with zero points.",
                [("A", ["B", "M", "K"]), ("B", ["B", "K", "N"]), ("C", ["B", "M", "N"])],
                [("b", P), ("m", P), ("n", P), ("k", R)],
                {"A": ["b", "m", "k"], "B": ["b", "k", "n"], "C": ["b", "m", "n"]}, True)
    contraction("matvec", "Matrix-vector product: x += A y.",
                [("A", ["M", "N"]), ("y", ["N"]), ("x", ["M"])], [("m", P), ("n", R)],
                {"A": ["m", "n"], "y": ["n"], "x": ["m"]})
    contraction("vecmat", "Vector-matrix product: x += y A.",
                [("y", ["M"]), ("A", ["M", "N"]), ("x", ["N"])], [("n", P), ("m", R)],
                {"y": ["m"], "A": ["m", "n"], "x": ["n"]})
    contraction("batch_matvec", "Batched matrix-vector product.",
                [("A", ["B", "M", "K"]), ("B", ["B", "K"]), ("C", ["B", "M"])], [("b", P), ("m", P), ("k", R)],
                {"A": ["b", "m", "k"], "B": ["b", "k"], "C": ["b", "m"]})
    contraction("batch_vecmat", "Batched vector-matrix product.",
                [("A", ["B", "K"]), ("B", ["B", "K", "N"]), ("C", ["B", "N"])], [("b", P), ("n", P), ("k", R)],
                {"A": ["b", "k"], "B": ["b", "k", "n"], "C": ["b", "n"]})
    contraction("dot", "Dot product of two vectors into a 0-d output.",
                [("A", ["M"]), ("B", ["M"]), ("C", [])], [("m", R)], {"A": ["m"], "B": ["m"], "C": []})


SPATIAL = {1: "w", 2: "hw", 3: "dhw"}


def window_names(nd):
    return [c for c in SPATIAL[nd]]


def plain_conv(nd):
    sp = window_names(nd)
    I = ["O%s + K%s" % (x.upper(), x.upper()) for x in sp]
    K = ["K%s" % x.upper() for x in sp]
    O = ["O%s" % x.upper() for x in sp]
    dims = [("o" + x, P) for x in sp] + [("k" + x, R) for x in sp]
    maps = {"I": ["o%s + k%s" % (x, x) for x in sp], "K": ["k" + x for x in sp], "O": ["o" + x for x in sp]}
    OPS.append(Op("conv_%dd" % nd, "%d-D convolution without channels: O += sum over the window of I K." % nd,
                  [tensor("I", "T1", I), tensor("K", "T2", K), tensor("O", "U", O, out=True)], dims, maps,
                  [("O", add(arg("O"), mul(cast("U", arg("I")), cast("U", arg("K")))))],
                  implements=["LinalgConvolutionOpInterface"]))


def window_attrs(sp):
    return [index_attr("strides", ["S" + x.upper() for x in sp], [1] * len(sp)),
            index_attr("dilations", ["D" + x.upper() for x in sp], [1] * len(sp))]


def in_extent(x):
    X = x.upper()
    return "O%s * S%s + K%s * D%s" % (X, X, X, X)


def in_index(x):
    X = x.upper()
    return "o%s * S%s + k%s * D%s" % (x, X, x, X)


def layout_op(name, doc, in_layout, k_layout, out_layout, size_of, dims, payload_of, q=False, kernel_read=True):
    """A windowed op from layout strings: spatial letters (w, h, d) map to
    the window's extents; other letters to sizes via size_of."""
    sp = [c for c in in_layout if c in "dhw"]
    def shape(layout, role):
        r = []
        for c in layout:
            if c in "dhw":
                r.append({"I": in_extent(c), "K": "K" + c.upper(), "O": "O" + c.upper()}[role])
            else:
                r.append(size_of[c])
        return r
    def idx(layout, role):
        r = []
        for c in layout:
            if c in "dhw":
                r.append({"I": in_index(c), "K": "k" + c, "O": "o" + c}[role])
            else:
                r.append(c)
        return r
    args = [tensor("I", "T1", shape(in_layout, "I")), tensor("K", "T2", shape(k_layout, "K"))]
    maps = {"I": idx(in_layout, "I"), "K": idx(k_layout, "K"), "O": idx(out_layout, "O")}
    if q:
        args += [scalar("IZp", "I32"), scalar("KZp", "I32")]
        maps["IZp"] = []
        maps["KZp"] = []
    args.append(tensor("O", "U", shape(out_layout, "O"), out=True))
    args += window_attrs(sp)
    OPS.append(Op(name, doc, args, dims, maps, [("O", payload_of(q))], implements=["LinalgConvolutionOpInterface"]))


def conv_payload(q):
    if q:
        return add(arg("O"), mul(sub(cast("U", arg("I")), cast("U", arg("IZp"))),
                                 sub(cast("U", arg("K")), cast("U", arg("KZp")))))
    return add(arg("O"), mul(cast("U", arg("I")), cast("U", arg("K"))))


def conv(in_layout, k_layout, q=False):
    sp = [c for c in in_layout if c in "dhw"]
    nd = len(sp)
    out_layout = in_layout.replace("c", "f")
    if "g" in in_layout:
        out_layout = in_layout.replace("c", "f")
    name = "conv_%dd_%s_%s%s" % (nd, in_layout, k_layout, "_q" if q else "")
    size_of = {"n": "N", "c": "C", "f": "F", "g": "G"}
    par = [c for c in out_layout if c not in "dhw"]
    dims = [(c if c not in "dhw" else "o" + c, P) for c in out_layout]
    dims += [("k" + c, R) for c in sp] + [("c", R)]
    doc = "%d-D convolution%s, input %s, filter %s, output %s%s." % (
        nd, " with groups" if "g" in in_layout else "", in_layout.upper(), k_layout.upper(), out_layout.upper(),
        ", with zero points: (I - IZp) (K - KZp)" if q else "")
    layout_op(name, doc + "\n\nOperands are cast to the output's type before the multiply.",
              in_layout, k_layout, out_layout, size_of, dims, conv_payload, q)
    del par


def depthwise(in_layout, k_layout, q=False):
    sp = [c for c in in_layout if c in "dhw"]
    nd = len(sp)
    multiplier = "m" in k_layout
    out_layout = in_layout + "m" if multiplier else in_layout
    name = "depthwise_conv_%dd_%s_%s%s" % (nd, in_layout, k_layout, "_q" if q else "")
    size_of = {"n": "N", "c": "IC", "m": "CM"}
    dims = [(c if c not in "dhw" else "o" + c, P) for c in out_layout] + [("k" + c, R) for c in sp]
    doc = "%d-D depthwise convolution, input %s, filter %s, output %s%s." % (
        nd, in_layout.upper(), k_layout.upper(), out_layout.upper(),
        ", with zero points" if q else "")
    layout_op(name, doc, in_layout, k_layout, out_layout, size_of, dims, conv_payload, q)


def pooling(layout, mode, unsigned=False):
    sp = [c for c in layout if c in "dhw"]
    name = "pooling_%s_%s%s" % (layout, mode, "_unsigned" if unsigned else "")
    size_of = {"n": "N", "c": "C"}
    dims = [(c if c not in "dhw" else "o" + c, P) for c in layout] + [("k" + c, R) for c in sp]
    fname = {"sum": "add", "max": "max_signed", "min": "min_signed"}[mode]
    if unsigned:
        fname = fname.replace("signed", "unsigned")
    cname = "cast_unsigned" if unsigned else "cast_signed"
    def payload(q):
        return binary(fname, arg("O"), cast("U", arg("I"), cname))
    doc = "%s pooling%s, input and output %s; K only gives the window's extents." % (
        mode.capitalize(), " (unsigned)" if unsigned else "", layout.upper())
    layout_op(name, doc, layout, "".join(sp), layout, size_of, dims, payload)


def fills():
    OPS.append(Op("fill", "Fills the output with a scalar (rank-polymorphic).",
                  [scalar("value", "T"), tensor("O", "T", [], out=True)], [], {},
                  [("O", arg("value"))], implements=["LinalgFillOpInterface"], defines=["hasCanonicalizer"],
                  poly=True))
    i32 = lambda x: cast("I32", x)
    f64 = lambda x: cast("F64", x)
    mult, incr = const("1103515245 : i64"), const("12345 : i64")
    inner = add(mul(add(i32(index(0)), arg("seed")), i32(mult)), i32(incr))
    outer = add(mul(add(i32(index(1)), inner), i32(mult)), i32(incr))
    scale = mul(sub(arg("max"), arg("min")), f64(const("2.3283063999999999E-10 : f64")))
    value = add(mul(add(f64(const("2147483647 : i64")), f64(outer)), scale), arg("min"))
    OPS.append(Op("fill_rng_2d", "Fills a 2-D output with pseudo-random numbers in [min, max): one linear "
                  "congruential step per index, seeded with seed.",
                  [scalar("min", "F64"), scalar("max", "F64"), scalar("seed", "I32"),
                   tensor("O", "T", ["M", "N"], out=True)],
                  [("m", P), ("n", P)], {"min": [], "max": [], "seed": [], "O": ["m", "n"]},
                  [("O", cast("T", value))]))


def build():
    elementwise()
    contractions()
    for nd in (1, 2, 3):
        plain_conv(nd)
    conv("nwc", "wcf")
    conv("ncw", "fcw")
    conv("nhwc", "hwcf")
    conv("nhwc", "fhwc")
    conv("nhwc", "hwcf", q=True)
    conv("nhwc", "fhwc", q=True)
    conv("nchw", "fchw", q=True)
    conv("nchw", "fchw")
    conv("ngchw", "fgchw")
    conv("ngchw", "gfchw")
    conv("nhwgc", "gfhwc")
    conv("nhwgc", "gfhwc", q=True)
    conv("ngchw", "gfchw", q=True)
    conv("ndhwc", "dhwcf")
    conv("ndhwc", "dhwcf", q=True)
    conv("ncdhw", "fcdhw")
    depthwise("nwc", "wc")
    depthwise("ncw", "cw")
    depthwise("nwc", "wcm")
    depthwise("nchw", "chw")
    depthwise("nhwc", "hwc")
    depthwise("nhwc", "hwc", q=True)
    depthwise("nhwc", "hwcm")
    depthwise("nhwc", "hwcm", q=True)
    depthwise("ndhwc", "dhwc")
    depthwise("ncdhw", "cdhw")
    depthwise("ndhwc", "dhwcm")
    for layout in ("nhwc", "nchw", "nwc", "ncw", "ndhwc"):
        for mode in ("sum", "max", "min"):
            pooling(layout, mode)
            if mode != "sum" and layout in ("nhwc", "nwc"):
                pooling(layout, mode, unsigned=True)
    fills()
    return OPS


def main():
    ops = build()
    sys.stdout.write("# lgen's OpDSL library: the named ops of upstream Linalg's LinalgNamedStructuredOps.yaml,\n"
                     "# in the same format. Generated by tests/opdsl/linalg_ops.py; do not edit.\n")
    for op in ops:
        sys.stdout.write(yaml_op(op) + "\n")


if __name__ == "__main__":
    main()
