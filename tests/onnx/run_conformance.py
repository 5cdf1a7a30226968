#!/usr/bin/python3
"""ONNX conformance: run ONNX backend node tests through lgen.

For every case folder (model.onnx, test_data_set_0/input_<i>.pb and
output_<i>.pb), this runner

  1. converts the model to JSON with lgen-onnx2json's own code (imported, so
     the whole run is one Python process),
  2. writes the inputs as raw little-endian .bin files and a small C main that
     reads them, calls the generated entry point `model(...)` (contracts.md
     section 3: inputs, outputs, then the symbolic dims, valued from the test
     data) and writes the outputs,
  3. runs `$LGEN model.onnx -o m.c -H m.h --name=model` on the binary model
     (the case's own file, or the model with frozen inputs re-serialized),
     compiles with gcc and runs the program (JOBS cases at a time); the same
     on model.json (the JSON reader) must give the same C byte for byte, or
     the same error message (locations aside), else the case FAILs,
  4. compares every output with the expected one by ONNX's rule
     |got - expected| <= atol + rtol * |expected| (rtol 1e-3, atol 1e-7;
     integers and bools exactly; NaN matches NaN).

lgen exiting 1 with a message that the operator (or some feature) is not
supported makes the case a SKIP with that message as its reason; any other
failure is a FAIL. One line per case (PASS/FAIL/SKIP name (reason)), then the
totals and the SKIP reasons grouped. Exit status 1 if any case failed.

With --generate, the node tests that python3-onnx (1.12) can generate itself
are produced into the work folder first and run too (their names get the
prefix "gen/").
"""
import argparse
import collections
import concurrent.futures
import importlib.machinery
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

# Never write __pycache__ into the source tree (lgen-onnx2json, examples/models.py).
sys.dont_write_bytecode = True

RTOL = 1e-3
ATOL = 1e-7
# DFT's expected outputs come from a float32 reference: a bin that is 0 in
# exact arithmetic holds its rounding noise, about eps32 * sqrt(n) times the
# largest bin (1.9e-7 in test_dft_inverse). lgen computes in f64, so for DFT
# cases the absolute tolerance is that noise bound: 1e-5 * max |expected|.
DFT_ATOL_REL = 1e-5
# An _expanded case with float16 outputs runs its function body in float16:
# each of its ops (matmul, add, softmax's steps, ...) rounds to f16, while
# the expected outputs are the operator's result computed in float (the
# Attention fp16 cases: test_attention_4d_fp16's expected output is its
# float32 result rounded once, and ONNX's reference formula run in NumPy
# float16 misses it by one ulp too). rtol 1e-3 is about one f16 ulp, so for
# these outputs the absolute tolerance is F16_EXPANDED_ULPS ulps of float16
# at the largest |expected| (lgen's largest error there: 3 such ulps).
F16_EXPANDED_ULPS = 4
SKIP_RE = re.compile(r"unsupported|not supported|does not support", re.I)
# lgen needs some operands (Reshape's shape, Reduce*'s axes, ...) at
# generation time; the node tests pass them as graph inputs. Such an input is
# frozen to its test data (what lgen-onnx2json --freeze does) and the case
# retried.
NEEDS_CONST_RE = re.compile(r"\('([^']+)'\) must be a constant")
TIMEOUT_LGEN = 120
TIMEOUT_CC = 180
TIMEOUT_RUN = 120


def load_onnx2json(srcdir):
    """The shipped converter (scripts/lgen-onnx2json) as a module."""
    path = os.path.join(srcdir, "scripts", "lgen-onnx2json")
    loader = importlib.machinery.SourceFileLoader("lgen_onnx2json", path)
    spec = importlib.util.spec_from_loader("lgen_onnx2json", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------------------
# Generating the node tests of python3-onnx itself

def generate_onnx_cases(outdir):
    """Runs onnx's own generators (onnx 1.12: `backend-test-tools
    generate-data`) into outdir; returns the case folders. NumPy 1.24 removed
    the aliases (np.float, ...) that 1.12's generators use: put them back
    first (reliability-anchors.md, Part C)."""
    import warnings
    for name, val in (("float", float), ("int", int), ("bool", bool), ("object", object),
                      ("complex", complex), ("str", str)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            setattr(np, name, val)
    from onnx.backend.test import cmd_tools
    saved = sys.argv
    sys.argv = ["backend-test-tools", "generate-data", "-o", outdir]
    try:
        with open(os.devnull, "w") as devnull:
            old_out = sys.stdout
            sys.stdout = devnull
            try:
                cmd_tools.main()
            finally:
                sys.stdout = old_out
    finally:
        sys.argv = saved
    node = os.path.join(outdir, "node")
    return sorted(os.path.join(node, d) for d in os.listdir(node)
                  if os.path.isfile(os.path.join(node, d, "model.onnx")))


def list_cases(root):
    return sorted(os.path.join(root, d) for d in os.listdir(root)
                  if os.path.isfile(os.path.join(root, d, "model.onnx")))


# ---------------------------------------------------------------------------
# Preparing one case: JSON, .bin inputs, C main

class Case:
    def __init__(self, name, src):
        self.name = name
        self.src = src
        self.work = None
        self.expected = []   # numpy arrays
        self.status = None   # PASS / FAIL / SKIP
        self.reason = ""
        self.frozen = []     # inputs made constants (their test data)
        self.conv = None


def read_pb(onnx, numpy_helper, path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def write_bin(arr, path):
    arr = np.ascontiguousarray(arr)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    arr.tofile(path)


C_MAIN_HEAD = r"""/* Generated by tests/onnx/run_conformance.py: runs the model on the
 * test data (in_<i>.bin) and writes out_<i>.bin. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "m.h"

static void *load(const char *path, size_t n)
{
  unsigned char *p = malloc(n ? n : 1);
  FILE *f = fopen(path, "rb");
  if (!p || !f || fread(p, 1, n, f) != n) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(3);
  }
  fclose(f);
  return p;
}

/* Outputs start as a byte pattern, not zeros, so an output the model does not
 * write (or accumulates into) shows up as a mismatch. */
static void *output(size_t n)
{
  unsigned char *p = malloc(n ? n : 1);
  if (!p) exit(3);
  memset(p, 0x5a, n);
  return p;
}

static void save(const char *path, const void *p, size_t n)
{
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(3);
  }
}

int main(void)
{
"""


def c_main(inputs, outputs, dims):
    """inputs/outputs: lists of byte counts; dims: the symbolic dims' values."""
    lines = [C_MAIN_HEAD]
    for i, n in enumerate(inputs):
        lines.append('  void *in%d = load("in_%d.bin", %d);\n' % (i, i, n))
    for i, n in enumerate(outputs):
        lines.append("  void *out%d = output(%d);\n" % (i, n))
    args = ["in%d" % i for i in range(len(inputs))] + ["out%d" % i for i in range(len(outputs))]
    args += ["(int64_t)%d" % d for d in dims]
    lines.append("  int rc = model(%s);\n" % ", ".join(args))
    lines.append('  if (rc != 0) {\n    fprintf(stderr, "model() returned %d\\n", rc);\n    return 2;\n  }\n')
    for i, n in enumerate(outputs):
        lines.append('  save("out_%d.bin", out%d, %d);\n' % (i, i, n))
    lines.append("  return 0;\n}\n")
    return "".join(lines)


def symbolic_dims(value_infos, arrays):
    """The symbolic dims (dimParam), in order of first appearance in the
    inputs' shapes, valued from the test data. Raises ValueError on data that
    contradicts the declared shapes."""
    order, values = [], {}
    for vi, arr in zip(value_infos, arrays):
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            continue
        if len(tt.shape.dim) != arr.ndim:
            raise ValueError("input '%s' declares rank %d, the test data has %d"
                             % (vi.name, len(tt.shape.dim), arr.ndim))
        for j, d in enumerate(tt.shape.dim):
            if d.HasField("dim_param") and d.dim_param:
                if d.dim_param not in values:
                    order.append(d.dim_param)
                    values[d.dim_param] = arr.shape[j]
                elif values[d.dim_param] != arr.shape[j]:
                    raise ValueError("dim '%s' is %d and %d in the test data"
                                     % (d.dim_param, values[d.dim_param], arr.shape[j]))
    return [values[n] for n in order]


class HarnessSkip(Exception):
    """A case whose data this harness cannot pass to C (not a dense numeric tensor)."""


# ONNX element types with a C representation here: f32 u8 i8 u16 i16 i32 i64
# bool f16 f64 u32 u64 (no strings, bfloat16 or complex).
DENSE_TYPES = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13}


def check_dense(value_infos, what):
    import onnx
    for vi in value_infos:
        if not vi.type.HasField("tensor_type"):
            raise HarnessSkip("%s '%s' is a %s, not a tensor" % (what, vi.name, vi.type.WhichOneof("value")))
        et = vi.type.tensor_type.elem_type
        if et not in DENSE_TYPES:
            raise HarnessSkip("%s '%s' has element type %s" % (what, vi.name, onnx.TensorProto.DataType.Name(et)))


def graph_inputs_behind(case, name):
    """The graph inputs (not yet frozen) that value `name` is computed from:
    itself if it is one; lgen may name an intermediate that must be a
    constant (Range's count computed from its inputs)."""
    model = case.conv.load_model(os.path.join(case.src, "model.onnx"))
    inputs = [vi.name for vi in model.graph.input]
    producer = {o: n for n in model.graph.node for o in n.output}
    found, seen, todo = [], set(), [name]
    while todo:
        v = todo.pop()
        if v in seen or not v:
            continue
        seen.add(v)
        if v in inputs:
            if v not in case.frozen:
                found.append(v)
        elif v in producer:
            todo.extend(producer[v].input)
    return sorted(found, key=inputs.index)


def prepare(case, conv, workroot):
    """Writes model.json, in_<i>.bin and main.c into the case's work folder."""
    import onnx
    from onnx import numpy_helper
    case.work = os.path.join(workroot, case.name.replace("/", "__"))
    os.makedirs(case.work, exist_ok=True)
    case.conv = conv
    model = conv.load_model(os.path.join(case.src, "model.onnx"))
    data = os.path.join(case.src, "test_data_set_0")
    # Test data files are numbered by position in the original graph.input.
    original = [vi.name for vi in model.graph.input]
    for name in case.frozen:
        conv.freeze_input(model, name, os.path.join(data, "input_%d.pb" % original.index(name)))
    with open(os.path.join(case.work, "model.json"), "w") as f:
        f.write(conv.model_to_json(model))
    if case.frozen:
        with open(os.path.join(case.work, "model.onnx"), "wb") as f:
            f.write(model.SerializeToString())
    else:
        shutil.copyfile(os.path.join(case.src, "model.onnx"), os.path.join(case.work, "model.onnx"))
    graph = model.graph
    constants = {t.name for t in graph.initializer}
    check_dense([vi for vi in graph.input if vi.name not in constants], "input")
    check_dense(graph.output, "output")
    run_inputs, arrays = [], []
    for vi in graph.input:
        if vi.name in constants:
            continue
        arr = read_pb(onnx, numpy_helper, os.path.join(data, "input_%d.pb" % original.index(vi.name)))
        write_bin(arr, os.path.join(case.work, "in_%d.bin" % len(arrays)))
        run_inputs.append(vi)
        arrays.append(arr)
    case.expected = [read_pb(onnx, numpy_helper, os.path.join(data, "output_%d.pb" % i))
                     for i in range(len(graph.output))]
    dims = symbolic_dims(run_inputs, arrays)
    with open(os.path.join(case.work, "main.c"), "w") as f:
        f.write(c_main([a.nbytes for a in arrays], [e.nbytes for e in case.expected], dims))


# ---------------------------------------------------------------------------
# Running one case

def first_error(text):
    """The message of the first 'error:' line (without FILE:LINE:COL), or the first line."""
    for line in text.splitlines():
        m = re.search(r"\berror:\s*(.*)", line)
        if m:
            return m.group(1).strip()
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[0].strip() if lines else "(no message)"


def run(cmd, cwd, timeout, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, env=env)
        return p.returncode, p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout


def compare(got, exp, atol=ATOL):
    """None if got matches exp by ONNX's rule, else a description."""
    if got.shape != exp.shape:
        return "shape %s, expected %s" % (got.shape, exp.shape)
    if exp.size == 0:
        return None
    if exp.dtype.kind in "fc":
        g = got.astype(np.float64)
        e = exp.astype(np.float64)
        with np.errstate(invalid="ignore"):
            ok = (np.abs(g - e) <= atol + RTOL * np.abs(e)) | (g == e) | (np.isnan(g) & np.isnan(e))
    else:
        ok = got == exp
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    idx = tuple(int(x) for x in bad[0])
    with np.errstate(invalid="ignore"):
        err = np.abs(got.astype(np.float64) - exp.astype(np.float64))
    return "%d of %d elements differ; at %s got %r, expected %r; max abs error %.3g" % (
        len(bad), exp.size, list(idx), got[idx].item(), exp[idx].item(), float(np.nanmax(err)))


def execute(case, opts):
    """lgen, gcc, run, compare: sets case.status and case.reason."""
    w = case.work
    while True:
        rc, out = run([opts.lgen, "model.onnx", "-o", "m.c", "-H", "m.h", "--name=model"] + opts.lgen_args,
                      w, TIMEOUT_LGEN)
        rcj, outj = run([opts.lgen, "model.json", "-o", "mj.c", "-H", "m.h", "--name=model"] + opts.lgen_args, w, TIMEOUT_LGEN)
        if rc != rcj or (rc != 0 and first_error(out) != first_error(outj)):
            return "FAIL", "the binary and JSON readers disagree: exit %s (%s) vs exit %s (%s)" % (
                rc, first_error(out) if rc else "", rcj, first_error(outj) if rcj else "")
        if rc == 0:
            with open(os.path.join(w, "m.c")) as f1, open(os.path.join(w, "mj.c")) as f2:
                if f1.read().split("\n", 1)[1] != f2.read().split("\n", 1)[1]:
                    return "FAIL", "the binary and JSON readers give different C (m.c, mj.c)"
        m = NEEDS_CONST_RE.search(first_error(out)) if rc == 1 else None
        want = graph_inputs_behind(case, m.group(1)) if m else []
        if not want or len(case.frozen) + len(want) > 8:
            break
        case.frozen.extend(want)
        prepare(case, case.conv, os.path.dirname(w))
    if rc != 0:
        msg = first_error(out)
        if rc == 1 and SKIP_RE.search(msg):
            return "SKIP", msg
        return "FAIL", "lgen exit %s: %s" % ("timeout" if rc is None else rc, msg)
    cc = [opts.cc, "-O1", "-std=c99", "-w", "-I.", "-o", "main", "main.c", "m.c", "-lm"]
    if opts.openmp:
        cc.insert(1, "-fopenmp")
    rc, out = run(cc, w, TIMEOUT_CC)
    if rc != 0:
        return "FAIL", "gcc: %s" % first_error(out)
    env = dict(os.environ, OMP_NUM_THREADS=str(opts.threads))
    rc, out = run(["./main"], w, TIMEOUT_RUN, env)
    if rc != 0:
        return "FAIL", "run: exit %s: %s" % ("timeout" if rc is None else rc, first_error(out))
    for i, exp in enumerate(case.expected):
        got = np.fromfile(os.path.join(w, "out_%d.bin" % i), dtype=exp.dtype.newbyteorder("<"))
        if got.size != exp.size:
            return "FAIL", "output %d: %d elements, expected %d" % (i, got.size, exp.size)
        atol = ATOL
        if "dft" in case.name and exp.size and exp.dtype.kind == "f":
            atol = max(ATOL, DFT_ATOL_REL * float(np.max(np.abs(exp))))
        if case.name.endswith("_expanded") and exp.size and exp.dtype == np.float16:
            big = float(np.max(np.abs(exp.astype(np.float64))))
            atol = max(ATOL, F16_EXPANDED_ULPS * 2.0 ** (np.floor(np.log2(big)) - 10) if big > 0 else 0)
        why = compare(got.reshape(exp.shape), exp, atol)
        if why:
            return "FAIL", "output %d: %s" % (i, why)
    return "PASS", ""


def run_case(case, opts):
    try:
        case.status, case.reason = execute(case, opts)
        if case.frozen and not case.reason:
            case.reason = "froze %s" % ", ".join(case.frozen)
    except Exception as e:  # a harness problem is that case's failure, not the run's
        case.status, case.reason = "FAIL", "harness: %s: %s" % (type(e).__name__, e)
    if case.status == "PASS" and not opts.keep:
        shutil.rmtree(case.work, ignore_errors=True)
    return case


# ---------------------------------------------------------------------------

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lgen", default=os.environ.get("LGEN", "lgen"))
    ap.add_argument("--srcdir", default=os.path.dirname(os.path.dirname(here)),
                    help="lgen's source tree (for scripts/lgen-onnx2json)")
    ap.add_argument("--cases", action="append", default=[], metavar="DIR",
                    help="a folder of test_* case folders (repeatable)")
    ap.add_argument("--generate", action="store_true",
                    help="also generate and run python3-onnx's own node tests")
    ap.add_argument("--generated-only", action="store_true",
                    help="only python3-onnx's own node tests, not those under --cases")
    ap.add_argument("--only", default="", help="run only cases whose name contains one of these (comma-separated)")
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS for the runs")
    ap.add_argument("--cc", default=os.environ.get("CC_FOR_TESTS", "gcc"))
    ap.add_argument("--no-openmp", dest="openmp", action="store_false")
    ap.add_argument("--lgen-arg", dest="lgen_args", action="append", default=[],
                    help="an extra lgen option, e.g. --lgen-arg=--schedule=none (repeatable)")
    ap.add_argument("--work", help="work folder (default: a temporary one, removed at the end)")
    ap.add_argument("--keep", action="store_true", help="keep the work folders of passing cases too")
    opts = ap.parse_args()
    opts.lgen = os.path.abspath(opts.lgen) if os.sep in opts.lgen else shutil.which(opts.lgen) or opts.lgen

    conv = load_onnx2json(opts.srcdir)
    workroot = opts.work or tempfile.mkdtemp(prefix="lgen-onnx-")
    os.makedirs(workroot, exist_ok=True)

    cases = []
    for root in [] if opts.generated_only else opts.cases:
        cases += [Case(os.path.basename(d), d) for d in list_cases(root)]
    if opts.generate or opts.generated_only:
        gen = os.path.join(workroot, "generated")
        try:
            cases += [Case("gen/" + os.path.basename(d), d) for d in generate_onnx_cases(gen)]
        except Exception as e:
            print("NOTE: python3-onnx could not generate its node tests: %s: %s" % (type(e).__name__, e))
    if opts.only:
        subs = [s for s in opts.only.split(",") if s]
        cases = [c for c in cases if any(s in c.name for s in subs)]
    if not cases:
        print("no cases found")
        return 1

    # Preparation (Python) runs here, one case after the other; lgen, gcc and
    # the program run in the pool meanwhile.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futures = []
        for c in cases:
            try:
                prepare(c, conv, workroot)
            except HarnessSkip as e:
                c.status, c.reason = "SKIP", "harness: %s" % e
                futures.append(None)
                continue
            except Exception as e:
                c.status, c.reason = "FAIL", "prepare: %s: %s" % (type(e).__name__, e)
                futures.append(None)
                continue
            futures.append(pool.submit(run_case, c, opts))
        for c, fut in zip(cases, futures):
            if fut is not None:
                fut.result()
            line = "%s %s" % (c.status, c.name)
            if c.reason:
                line += " (%s)" % c.reason
            print(line, flush=True)

    counts = collections.Counter(c.status for c in cases)
    # Grouped without node numbers: "Mod (node 35)" and "Mod (node 41)" are one reason.
    reasons = collections.Counter(re.sub(r"\s*\(nodes? [\d, ]+\)", "", c.reason)
                                  for c in cases if c.status == "SKIP")
    if reasons:
        print("SKIP reasons:")
        for r, n in sorted(reasons.items(), key=lambda x: (-x[1], x[0])):
            print("  %4d  %s" % (n, r))
    print("%d passed, %d failed, %d skipped (of %d cases)"
          % (counts["PASS"], counts["FAIL"], counts["SKIP"], len(cases)))
    if not opts.work:
        if counts["FAIL"] == 0 or not opts.keep:
            shutil.rmtree(workroot, ignore_errors=True)
    elif counts["FAIL"]:
        print("failing cases' files are in %s" % workroot)
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
