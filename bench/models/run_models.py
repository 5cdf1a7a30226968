#!/usr/bin/python3
"""Model benchmark: lgen's generated C against ONNX Runtime (bench/run.sh --only=models).

  run_models.py SRCDIR BUILDDIR [--models=mlp,cnn,transformer] [--threads=1,2]
                [--rounds=5] [--runs=10] [--warmup=3] [--batch=64]

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

Prints one "bench model=..." line per model and thread count: ort_ms,
lgen_ms, ort_ms/lgen_ms, lgen_nofuse_ms, and the workspace bytes against
the sum of all intermediates (from the buffer plan in --print-schedule,
parsed tolerantly), then a table.
"""
import argparse
import json
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
        rc, log = sh(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", out,
                      "onnxruntime-node"], check=False)
        if rc != 0:
            return None, "npm install onnxruntime-node failed: %s" % log.strip().splitlines()[-1:]
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

def prepare_model(name, models, conv, src, lgen, cc, cflags, out, batch):
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
    for variant, extra in (("lgen", []), ("nofuse", ["--fuse=none"])):
        vd = os.path.join(d, variant)
        os.makedirs(vd, exist_ok=True)
        sh([lgen, json_path, "-o", os.path.join(vd, "model.c"), "-H", os.path.join(vd, "model.h"),
            "--name=model"] + extra)
        prog = os.path.join(vd, "time_model")
        sh([cc] + cflags + ["-fopenmp", "-I" + vd, "-o", prog, os.path.join(src, "bench", "models", "time_model.c"),
                            os.path.join(vd, "model.c"), os.path.join(d, "shim.c"), "-lm"])
        progs[variant] = prog
    rc, sched = sh([lgen, json_path, "--print-schedule", "-o", "/dev/null", "--name=model"], check=False)
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


def time_block(kind, prog_or_model, threads, opts, node_path, dims):
    if kind == "ort":
        cmd = ["node", os.path.join(opts.src, "bench", "models", "ort_bench.js"), prog_or_model,
               "--threads=%d" % threads, "--warmup=%d" % opts.warmup, "--runs=%d" % opts.runs,
               "--dims=" + ",".join("%s=%d" % kv for kv in dims.items()),
               "--profile=" + os.path.join(os.path.dirname(prog_or_model), "ort_profiles")]
        env = dict(os.environ, NODE_PATH=node_path)
    else:
        cmd = [prog_or_model, "--threads=%d" % threads, "--warmup=%d" % opts.warmup, "--runs=%d" % opts.runs]
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    rc, text = sh(cmd, env=env, check=False)
    if rc != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), rc, text.strip()[:300]))
    return parse_times(text)


def fmt(x, f="%.3f"):
    return "-" if x is None else f % x


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src")
    ap.add_argument("build")
    ap.add_argument("--models", default="mlp,cnn,transformer")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64, help="the MLP's batch N")
    opts, unknown = ap.parse_known_args()
    opts.src = os.path.abspath(opts.src)
    lgen = os.path.join(os.path.abspath(opts.build), "src", "lgen")
    out = os.path.join(os.path.abspath(opts.build), "bench-build", "models")
    os.makedirs(out, exist_ok=True)
    cc = os.environ.get("CC", "gcc")
    cflags = os.environ.get("BENCH_CFLAGS", "-O3 -march=native").split()

    sys.path.insert(0, os.path.join(opts.src, "examples"))
    try:
        import models
        import importlib.machinery
        import importlib.util
        loader = importlib.machinery.SourceFileLoader(
            "lgen_onnx2json", os.path.join(opts.src, "scripts", "lgen-onnx2json"))
        conv = importlib.util.module_from_spec(importlib.util.spec_from_loader("lgen_onnx2json", loader))
        loader.exec_module(conv)
    except ImportError as e:
        print("bench-models: skipped: needs /usr/bin/python3 with python3-onnx and NumPy (%s)" % e)
        return 0

    node_path, why = setup_ort(os.path.join(os.path.abspath(opts.build), "bench-build"))
    if why:
        print("bench-models: ONNX Runtime skipped: %s (lgen is timed alone)" % why)

    threads = [int(t) for t in opts.threads.split(",") if t]
    rows, status = [], 0
    for name in [m for m in opts.models.split(",") if m]:
        try:
            onnx_path, progs, plan, dims = prepare_model(name, models, conv, opts.src, lgen, cc, cflags, out,
                                                         opts.batch)
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
    print()
    print("%-12s %3s %10s %10s %9s %12s %12s %14s" % ("model", "thr", "ort_ms", "lgen_ms", "ort/lgen",
                                                    "nofuse_ms", "workspace_B", "intermed_B"))
    for r in rows:
        print("%-12s %3d %10s %10s %9s %12s %12s %14s" % (r[0], r[1], fmt(r[2]), fmt(r[3]), fmt(r[4], "%.2f"),
                                                         fmt(r[5]), fmt(r[6], "%d"), fmt(r[7], "%d")))
    print("bench-models: files in %s (schedule.yaml per model)" % out)
    return status


if __name__ == "__main__":
    sys.exit(main())
