#!/usr/bin/python3
"""Sweeps injected failures over whole generations (issue 14, item 6).

lgen built with --enable-fault-injection fails the N-th allocation or file
operation when LGEN_FAULT_AT=N (src/util/fault.h). For each example input
this counts the points a clean run passes (LGEN_FAULT_COUNT=1), then, for N
over them (all, or an even sample of at most --max-runs per input), runs
lgen with -o, -H and -MD into an empty folder and checks:
  * exit status 3 (an I/O or internal failure; never a crash, never an
    input error, never success);
  * exactly one line of standard error, an "lgen: error:" one;
  * nothing left in the folder (no output, no temporary);
  * under LeakSanitizer (the ASan build of make check-all), no leak: a
    leak report changes the exit status.
Also: writing to /dev/full, and into a folder without write permission."""
import argparse, os, re, shutil, subprocess, sys

results = []


def check(ok, what, detail=""):
    results.append(ok)
    if not ok or args.verbose:
        print(("PASS: " if ok else "FAIL: ") + what)
        if not ok and detail:
            for line in str(detail).splitlines()[:8]:
                print("      | " + line[:300])


def run(argv, env_extra, cwd):
    env = dict(os.environ, **env_extra)
    return subprocess.run(argv, capture_output=True, text=True, errors="replace", env=env, cwd=cwd, timeout=120)


def sweep(label, inputs, work):
    out = os.path.join(work, "out")
    argv = [args.lgen, *inputs, "-o", "x.c", "-H", "x.h", "-MD"]
    os.makedirs(out, exist_ok=True)
    r = run(argv, {"LGEN_FAULT_COUNT": "1"}, out)
    m = re.search(r"fault points passed: (\d+)", r.stderr)
    if r.returncode != 0 or not m:
        check(False, f"{label}: a clean run counts its fault points", r.stderr)
        return 0
    total = int(m.group(1))
    step = max(1, -(-total // args.max_runs))
    points = list(range(1, total + 1, step))
    if points[-1] != total:
        points.append(total)
    bad = 0
    for n in points:
        shutil.rmtree(out)
        os.makedirs(out)
        r = run(argv, {"LGEN_FAULT_AT": str(n)}, out)
        lines = r.stderr.splitlines()
        left = os.listdir(out)
        ok = (r.returncode == 3 and len(lines) == 1 and lines[0].startswith("lgen: error:") and not left)
        if not ok:
            bad += 1
            if bad <= 5:
                check(False, f"{label}: failure at point {n} of {total}",
                      f"exit {r.returncode}, files left {left}\n{r.stderr}")
    check(bad == 0, f"{label}: {len(points)} of {total} points fail cleanly ({bad} did not)")
    # one past the last point: nothing fails, and every output is there
    shutil.rmtree(out)
    os.makedirs(out)
    r = run(argv, {"LGEN_FAULT_AT": str(total + 1)}, out)
    check(r.returncode == 0 and sorted(os.listdir(out)) == ["x.c", "x.d", "x.h"],
          f"{label}: point {total + 1} is past the run, which succeeds", r.stderr)
    return len(points)


def main():
    global args
    ap = argparse.ArgumentParser()
    ap.add_argument("--lgen", required=True)
    ap.add_argument("--srcdir", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--max-runs", type=int, default=400, help="points per input (0: every one)")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    if args.max_runs <= 0:
        args.max_runs = 1 << 30
    src = args.srcdir
    cases = [("examples/mlp.tc", [os.path.join(src, "examples", "mlp.tc")])]
    models = os.path.join(args.work, "models")
    os.makedirs(models, exist_ok=True)
    py = "/usr/bin/python3"
    for m in ("mlp", "cnn", "transformer"):
        onnx_path = os.path.join(models, m + ".onnx")
        json_path = os.path.join(models, m + ".json")
        r1 = subprocess.run([py, os.path.join(src, "examples", "models.py"), "onnx", m, "-o", onnx_path],
                            capture_output=True, text=True)
        with open(json_path, "w") as f:
            r2 = subprocess.run([py, os.path.join(src, "scripts", "lgen-onnx2json"), onnx_path], stdout=f,
                                stderr=subprocess.PIPE, text=True)
        if r1.returncode or r2.returncode:
            check(False, f"examples/models.py {m}: the model builds", r1.stderr + r2.stderr)
            continue
        cases.append((f"example model {m} (ONNX)", [json_path]))
    g = os.path.join(models, "mlp-graph.json")
    r = subprocess.run([py, os.path.join(src, "examples", "models.py"), "graph", "mlp", "-o", g],
                       capture_output=True, text=True)
    if r.returncode == 0:
        cases.append(("example model mlp (lgen-graph/1)", [g]))
    runs = 0
    for i, (label, inputs) in enumerate(cases):
        runs += sweep(label, inputs, os.path.join(args.work, f"case{i}"))

    # Output that cannot be written: a full device, a read-only folder.
    mlp = os.path.join(src, "examples", "mlp.tc")
    r = run([args.lgen, mlp, "-o", "/dev/full"], {}, args.work)
    check(r.returncode == 3 and len(r.stderr.splitlines()) == 1 and "/dev/full" in r.stderr,
          "-o /dev/full: exit 3, one message", r.stderr)
    ro = os.path.join(args.work, "readonly")
    os.makedirs(ro)
    os.chmod(ro, 0o555)
    r = run([args.lgen, mlp, "-o", os.path.join(ro, "x.c"), "-H", os.path.join(ro, "x.h")], {}, args.work)
    if os.geteuid() == 0:  # root writes anyway; check that nothing half-written stays either way
        check(r.returncode in (0, 3), "a read-only folder (as root: writable)", r.stderr)
    else:
        check(r.returncode == 3 and len(r.stderr.splitlines()) == 1 and not os.listdir(ro),
              "a read-only output folder: exit 3, one message, nothing left", r.stderr)
    os.chmod(ro, 0o755)
    print(f"{runs} injected failures over {len(cases)} inputs")
    print(f"{results.count(True)} passed, {results.count(False)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
