#!/usr/bin/python3
"""The fuzzers' differential mode: every ONNX graph of the fuzz corpora that
lgen accepts is compiled and run, and its outputs compared with ONNX
Runtime's on the same seeded inputs.

The corpora (fuzz/corpus-struct, fuzz/corpus-graph, fuzz/corpus-onnx, or any
folders given) hold what the fuzzers kept: graphs mutated in their ops,
attributes, shapes, types and wiring, far from what the hand-written tests
build. For each ONNX model among them (binary protobuf, or protobuf's JSON
mapping that lgen also reads; lgen-graph/1 files have no outside oracle and
are left to the fuzzers' own oracles):

  1. lgen generates C (symbolic dims fixed with --dim NAME=3, inputs without
     dim names with --input-shape, every unnamed dim 3);
  2. ONNX Runtime (onnxruntime-node, tests/onnx-ops/ort_run.js) runs the
     model on seeded inputs of those shapes;
  3. where both accept it, lgen's C is compiled with gcc -O1
     -fsanitize=address,undefined (warnings on: -Wall -Wextra -Werror), run,
     and compared: floats within RTOL of the output's largest magnitude plus
     ATOL, NaNs in the same places, integers and booleans exactly.

A model whose float constants hold NaNs, infinities or magnitudes past
WILD is built and run the same way, but its float outputs are not compared
(status "wild", counted as passed; see wild_constants). The inputs' seed is
taken from the model's bytes, so a FAIL reproduces alone.

A model that either refuses is counted and skipped: lgen's refusals are the
fuzzers' business (one located error, checked there), ONNX Runtime refuses
many mutants that lgen accepts (lgen is lenient where ONNX leaves it
undefined, e.g. an attribute of an unknown name gets a warning). A disagreement,
a compile error or warning, a crash or a sanitizer report is a FAIL.
ONNX Runtime may also crash on a model it should refuse (a segfault on an
Einsum whose labels are not letters): that model alone is counted and
skipped ("ort-crashed", see run_ort), the others of the batch still run. A
model with a NUL byte in a dim or input name cannot have them passed on
lgen's command line and is skipped ("skipped").

Prints one line per FAIL, SKIPPED and ORT-CRASHED (and per PASS with
--verbose), then the counts and
"N passed, N failed"; exits 1 on a failure. --limit N takes every k-th input
so that N are tried (check-all's smoke run); --keep DIR keeps the work files.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import warnings

import numpy as np

sys.dont_write_bytecode = True
import onnx  # noqa: E402
from google.protobuf import json_format  # noqa: E402
from onnx import TensorProto as T  # noqa: E402

RTOL = 1e-4
ATOL = 1e-5
DIM = 3                # the value of every symbolic or unnamed dim
WILD = 1e6              # constants past this: floats not compared (wild_constants)
MAX_ELEMENTS = 1 << 20  # inputs and outputs larger than this are not run
CFLAGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1", "-g",
          "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]

NP_OF = {T.FLOAT: np.float32, T.DOUBLE: np.float64, T.FLOAT16: np.float16, T.INT8: np.int8, T.INT16: np.int16,
         T.INT32: np.int32, T.INT64: np.int64, T.BOOL: np.bool_, T.UINT8: np.uint8, T.UINT16: np.uint16,
         T.UINT32: np.uint32, T.UINT64: np.uint64}
ORT_TYPE = {np.float32: "float32", np.float64: "float64", np.float16: "float16", np.int8: "int8",
            np.int16: "int16", np.int32: "int32", np.int64: "int64", np.bool_: "bool", np.uint8: "uint8",
            np.uint16: "uint16", np.uint32: "uint32", np.uint64: "uint64"}
NP_OF_ORT = {v: k for k, v in ORT_TYPE.items()}


def load_harness(srcdir):
    """tests/onnx-ops/run_onnx_ops.py, for its C driver (c_main, c_call)."""
    import importlib.machinery
    import importlib.util
    path = os.path.join(srcdir, "tests", "onnx-ops", "run_onnx_ops.py")
    loader = importlib.machinery.SourceFileLoader("run_onnx_ops", path)
    mod = importlib.util.module_from_spec(importlib.util.spec_from_loader("run_onnx_ops", loader))
    loader.exec_module(mod)
    return mod


def sh(cmd, cwd=None, timeout=120, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, env=env)
        return p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return 124, "timed out: %s" % " ".join(cmd)


def read_model(path):
    """The ONNX model in path (binary or JSON), or None when it is not one
    python3-onnx reads (lgen-graph/1, or bytes protobuf refuses)."""
    with open(path, "rb") as f:
        data = f.read()
    stripped = data.lstrip()
    if stripped[:1] == b"{":
        if b"lgen-graph/1" in data[:4096] or b'"graph"' not in data:
            return None
        try:
            return json_format.Parse(data.decode("utf-8"), onnx.ModelProto(), ignore_unknown_fields=False)
        except Exception:
            return None
    try:
        m = onnx.ModelProto()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # protobuf's note on a truncated input
            m.ParseFromString(data)
        return m if m.HasField("graph") else None
    except Exception:
        return None


def graph_inputs(model):
    """The inputs the caller passes: graph inputs that no initializer names,
    as (name, elem type, [dim values or names or None])."""
    inits = {t.name for t in model.graph.initializer}
    out = []
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None:
            return None
        dims = []
        if tt.HasField("shape"):
            for d in tt.shape.dim:
                if d.HasField("dim_value") and d.dim_value > 0:
                    dims.append(int(d.dim_value))
                elif d.HasField("dim_param") and d.dim_param:
                    dims.append(d.dim_param)
                else:
                    dims.append(None)
        else:
            return None
        out.append((vi.name, tt.elem_type, dims))
    return out


def strip_unknown_attributes(model):
    """Drops, in the copy ONNX Runtime runs, the attributes that the
    operator's schema does not have: lgen warns and ignores them (issue 15),
    ONNX Runtime refuses the model, and the two would then never meet."""
    opset = {o.domain: o.version for o in model.opset_import}
    for node in model.graph.node:
        try:
            schema = onnx.defs.get_schema(node.op_type, opset.get(node.domain, opset.get("", 1)), node.domain)
        except Exception:
            continue
        keep = [a for a in node.attribute if a.name in schema.attributes]
        if len(keep) != len(node.attribute):
            del node.attribute[:]
            node.attribute.extend(keep)


def fix_input_shapes(model, shapes):
    """Gives the inputs of ONNX Runtime's copy the shapes they are fed: a
    dim_value of 0 is a length ONNX Runtime enforces, where lgen reads it as
    unknown and takes --input-shape."""
    for vi in model.graph.input:
        if vi.name in shapes:
            dims = vi.type.tensor_type.shape.dim
            for d, n in zip(dims, shapes[vi.name]):
                d.dim_value = n


def random_input(rng, dt, shape):
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(dt, np.integer):
        # small values: indices, axes and counts are often inputs of mutants
        return rng.integers(0 if np.issubdtype(dt, np.unsignedinteger) else -2, 3, shape).astype(dt)
    return rng.uniform(-2.0, 2.0, shape).astype(dt)


def compare(got, want, wild=False):
    if np.issubdtype(want.dtype, np.floating):
        if wild:
            return None
        w, g = want.astype(np.float64), got.astype(np.float64)
        if not np.array_equal(np.isnan(w), np.isnan(g)):
            return "NaNs differ (%d vs %d)" % (int(np.isnan(g).sum()), int(np.isnan(w).sum()))
        fin = np.isfinite(w)
        if not np.array_equal(np.isinf(w) & (w > 0), np.isinf(g) & (g > 0)) or \
           not np.array_equal(np.isinf(w) & (w < 0), np.isinf(g) & (g < 0)):
            return "infinities differ"
        scale = np.max(np.abs(w[fin]), initial=0.0)
        err = np.max(np.abs(g[fin] - w[fin]), initial=0.0)
        tol = ATOL + RTOL * scale
        return None if err <= tol else "max_abs_err %.3g (tolerance %.3g)" % (err, tol)
    if np.array_equal(got, want):
        return None
    return "%d of %d elements differ" % (int(np.sum(got != want)), want.size)


def content_seed(path):
    """The inputs' seed comes from the model's bytes, so that a FAIL
    reproduces when the file is run alone or from another folder."""
    with open(path, "rb") as f:
        return int(hashlib.sha1(f.read()).hexdigest()[:8], 16)


class Item:
    def __init__(self, path, work):
        self.path = path
        self.key = hashlib.sha1(path.encode()).hexdigest()[:12]
        self.work = os.path.join(work, self.key)
        self.status = None  # pass, wild, fail, not-onnx, lgen-refused, ort-refused, too-big
        self.why = ""
        self.wild = False  # constants with NaN, infinity or huge values


def wild_constants(model):
    """Whether a float constant (an initializer or a Constant node's value,
    in any subgraph) holds a NaN, an infinity or a magnitude past WILD. With
    such constants, where NaNs and infinities land is not defined by ONNX:
    MaxPool and Max may drop or keep a NaN (ONNX Runtime drops it, lgen and
    NumPy keep it), and a sum that overflows does so or not by its order.
    huge terms cancel or not by the order of a sum. Such models are still
    built and run under the sanitizers, and their integer and boolean
    outputs compared, but not their floats (status "wild")."""
    from onnx import numpy_helper

    def wild(t):
        if t.data_type not in (T.FLOAT, T.DOUBLE, T.FLOAT16):
            return False
        try:
            with np.errstate(all="ignore"):
                a = numpy_helper.to_array(t).astype(np.float64)
        except Exception:  # data lgen reads its own way; ORT decides
            return False
        return a.size > 0 and (not np.all(np.isfinite(a)) or np.max(np.abs(a)) > WILD)

    def graphs(g):
        yield g
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    yield from graphs(a.g)
                for sub in a.graphs:
                    yield from graphs(sub)

    for g in graphs(model.graph):
        if any(wild(t) for t in g.initializer):
            return True
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR and wild(a.t):
                    return True
    return False


def prepare(item, opts, rng_seed):
    """Reads the model, decides shapes, runs lgen; writes the ORT job's
    inputs. Returns the job or None (item.status says why)."""
    model = read_model(item.path)
    if model is None:
        item.status = "not-onnx"
        return None
    item.wild = wild_constants(model)
    ins = graph_inputs(model)
    if ins is None:
        item.status = "not-onnx"
        item.why = "an input that is not a tensor"
        return None
    os.makedirs(item.work, exist_ok=True)
    lgen_args, shapes = [], []
    for name, et, dims in ins:
        if et not in NP_OF:
            item.status = "too-big"
            item.why = "input element type %d" % et
            return None
        concrete = [DIM if not isinstance(d, int) else d for d in dims]
        for d in dims:
            if isinstance(d, str) and "--dim=%s=%d" % (d, DIM) not in lgen_args:
                lgen_args.append("--dim=%s=%d" % (d, DIM))
        if any(d is None for d in dims):
            lgen_args.append("--input-shape=%s=%s" % (name, ",".join(str(c) for c in concrete)))
        if int(np.prod(concrete, dtype=np.float64)) > MAX_ELEMENTS:
            item.status = "too-big"
            item.why = "input %s of %s elements" % (name, concrete)
            return None
        shapes.append(concrete)
    if any("\0" in a for a in lgen_args):
        # a dim or input name that no command line can carry (lgen reads
        # names with --dim and --input-shape only)
        item.status = "skipped"
        item.why = "a dim or input name holds a NUL byte"
        return None
    # lgen reads the corpus file itself, in whichever form it is
    src = os.path.join(item.work, "model" + (".json" if open(item.path, "rb").read(1) == b"{" else ".onnx"))
    shutil.copyfile(item.path, src)
    rc, out = sh([opts.lgen, src, "-o", os.path.join(item.work, "m.c"), "-H", os.path.join(item.work, "m.h"),
                  "--name=model"] + lgen_args, timeout=60)
    if rc != 0:
        if rc == 1 or rc == 2:
            item.status = "lgen-refused"
            item.why = out.strip().splitlines()[-1][:200] if out.strip() else ""
        else:
            item.status = "fail"
            item.why = "lgen exit %d: %s" % (rc, out.strip()[-400:])
        return None
    item.nout = len(model.graph.output)
    strip_unknown_attributes(model)
    fix_input_shapes(model, dict((name, shape) for (name, _, _), shape in zip(ins, shapes)))
    onnx_path = os.path.join(item.work, "ort.onnx")
    with open(onnx_path, "wb") as f:
        f.write(model.SerializeToString())
    rng = np.random.default_rng(rng_seed)
    job_inputs = []
    for k, ((name, et, _), shape) in enumerate(zip(ins, shapes)):
        a = random_input(rng, NP_OF[et], shape)
        fpath = os.path.join(item.work, "in_%d.bin" % k)
        a.tofile(fpath)
        job_inputs.append({"name": name, "type": ORT_TYPE[a.dtype.type], "shape": shape, "file": fpath,
                           "nbytes": a.nbytes})
    item.inputs = job_inputs
    stale = os.path.join(item.work, "ort.json")  # from an earlier run with --keep
    if os.path.exists(stale):
        os.remove(stale)
    return {"model": onnx_path, "inputs": job_inputs, "out": item.work}


def run_ort(ready, opts, work):
    """Runs ONNX Runtime's batch runner (tests/onnx-ops/ort_run.js) on the
    ready items. The runner writes each job's ort.json in turn; when ONNX
    Runtime takes the whole process down on one model (an abort in a
    kernel's checks, e.g. an Einsum whose labels are not letters), that
    model is the first without its ort.json: it is counted as refused
    (status "ort-crashed", printed) and the runner goes on from the next
    one. Returns None, or why the runner itself fails (it fails on the
    last job, or on three in a row)."""
    pending = list(ready)
    runs, stuck = 0, 0
    while pending:
        runs += 1
        path = os.path.join(work, "jobs-%d.json" % runs)
        with open(path, "w") as f:
            json.dump([j for _, j in pending], f)
        rc, log = sh(["node", os.path.join(opts.srcdir, "tests", "onnx-ops", "ort_run.js"), path],
                     timeout=1800, env=dict(os.environ, NODE_PATH=opts.node_path))
        done = 0
        while done < len(pending) and os.path.exists(os.path.join(pending[done][0].work, "ort.json")):
            done += 1
        if rc == 0:
            return None if done == len(pending) else "exit 0 with %d jobs unrun" % (len(pending) - done)
        if rc == 124 or done == len(pending):
            return "exit %d after %d of %d jobs: %s" % (rc, done, len(pending), log.strip()[-500:])
        stuck = stuck + 1 if done == 0 else 0
        if stuck == 3:  # three runs in a row that write nothing: the runner is broken
            return "exit %d on three models in a row: %s" % (rc, log.strip()[-500:])
        it = pending[done][0]
        it.status = "ort-crashed"
        # (the runner's log holds every earlier job's messages too: not quoted)
        it.why = "ONNX Runtime's runner %s on it" % ("died of signal %d" % -rc if rc < 0 else "exited %d" % rc)
        pending = pending[done + 1:]
    return None


def check(item, opts, harness):
    """Compiles, runs and compares one item both readers accepted."""
    with open(os.path.join(item.work, "ort.json")) as f:
        ref = json.load(f)
    if "error" in ref:
        item.status = "ort-refused"
        item.why = ref["error"][:200]
        return
    wants = []
    for i, o in enumerate(ref["outputs"]):
        dt = NP_OF_ORT.get(o["type"])
        if dt is None or int(np.prod(o["shape"], dtype=np.float64)) > MAX_ELEMENTS:
            item.status = "too-big"
            item.why = "output %d: %s %s" % (i, o["type"], o["shape"])
            return
        wants.append(np.fromfile(os.path.join(item.work, "ort_%d.bin" % i), dtype=dt).reshape(o["shape"]))
    if len(wants) != item.nout:
        item.status = "ort-refused"
        item.why = "ONNX Runtime gave %d outputs of %d" % (len(wants), item.nout)
        return
    with open(os.path.join(item.work, "main.c"), "w") as f:
        f.write(harness.c_main(len(item.inputs), item.nout) + harness.c_call(len(item.inputs), item.nout, 0))
    rc, out = sh([opts.cc] + CFLAGS + ["-I", item.work, os.path.join(item.work, "m.c"),
                                       os.path.join(item.work, "main.c"), "-o", os.path.join(item.work, "prog"),
                                       "-lm"], timeout=300)
    if rc != 0:
        item.status = "fail"
        item.why = "%s: %s" % (opts.cc, out.strip()[-600:])
        return
    cmd = [os.path.join(item.work, "prog"), item.work] + [str(i["nbytes"]) for i in item.inputs]
    cmd += [str(w.nbytes) for w in wants]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0", UBSAN_OPTIONS="print_stacktrace=1")
    rc, out = sh(cmd, timeout=120, env=env)
    if rc != 0:
        item.status = "fail"
        item.why = "run: exit %d: %s" % (rc, out.strip()[-600:])
        return
    for i, w in enumerate(wants):
        got = np.fromfile(os.path.join(item.work, "lgen_%d.bin" % i), dtype=w.dtype)
        if got.size != w.size:
            item.status = "fail"
            item.why = "output %d: %d elements, ONNX Runtime %d" % (i, got.size, w.size)
            return
        why = compare(got.reshape(w.shape), w, wild=item.wild)
        if why:
            item.status = "fail"
            item.why = "output %d %s: %s" % (i, list(w.shape), why)
            return
    item.status = "wild" if item.wild and any(np.issubdtype(w.dtype, np.floating) for w in wants) else "pass"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lgen", required=True)
    ap.add_argument("--srcdir", required=True)
    ap.add_argument("--node-path", required=True, help="NODE_PATH holding onnxruntime-node")
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--limit", type=int, default=0, help="try about this many inputs (every k-th)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", default="", help="keep the work files in this folder")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("corpora", nargs="*")
    args = ap.parse_args()
    corpora = args.corpora or [os.path.join(args.srcdir, "fuzz", d)
                               for d in ("corpus-struct", "corpus-graph", "corpus-onnx")]
    paths = sorted(os.path.join(d, f) for d in corpora for f in os.listdir(d)
                   if os.path.isfile(os.path.join(d, f)))
    if args.limit and len(paths) > args.limit:
        step = len(paths) / float(args.limit)
        paths = [paths[int(i * step)] for i in range(args.limit)]
    work = args.keep or tempfile.mkdtemp(prefix="lgen-fuzz-diff.")
    os.makedirs(work, exist_ok=True)
    harness = load_harness(args.srcdir)
    items = [Item(p, work) for p in paths]

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        jobs = list(pool.map(lambda it: prepare(it, args, content_seed(it.path)), items))
    ready = [(it, j) for it, j in zip(items, jobs) if j is not None]
    if ready:
        why = run_ort(ready, args, work)
        if why:
            print("FAIL: ONNX Runtime runner: %s" % why)
            print("0 passed, 1 failed")
            return 1
        ready = [(it, j) for it, j in ready if it.status != "ort-crashed"]
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            list(pool.map(lambda it: check(it[0], args, harness), ready))

    counts = {}
    for it in items:
        counts[it.status] = counts.get(it.status, 0) + 1
        if it.status in ("fail", "skipped", "ort-crashed") or (args.verbose and it.status == "pass"):
            print("%s %s: %s" % (it.status.upper(), os.path.relpath(it.path, args.srcdir), it.why), flush=True)
        elif args.verbose:
            print("%s %s: %s" % (it.status, os.path.relpath(it.path, args.srcdir), it.why))
    print("inputs %d: %s" % (len(items), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    npass, nfail = counts.get("pass", 0) + counts.get("wild", 0), counts.get("fail", 0)
    if not args.keep and nfail == 0:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
