#!/usr/bin/python3
"""Names from a model or spec never become code (issue 14, item 1).

Hostile strings are put in every place an input can name something: the
graph's name, inputs, outputs, constants, nodes, intermediates and symbolic
dims (lgen-graph/1 and ONNX JSON), a .tc doc string, and the input file's own
name. For each input lgen must succeed, and then:
  * the C file, header and --weights file compile with gcc and clang,
    -std=c99 -pedantic -Wall -Wextra -Werror, with and without -fopenmp
    (--checks on, so names reach the run-time check messages too);
  * after preprocessing (comments gone), no injected identifier is left
    outside string literals, and no injected macro is defined;
  * --print-schedule is YAML whose keys are only the kernels' names, and it
    reads back through --schedule;
  * --dump of every stage, --emit=ir and --list-ops print every name
    escaped, so that no name forges a line;
  * the model still computes right (the injected graph is y = relu(x) + c).
Run by tests/hostile.test; exits 0 when every check passes."""
import argparse, base64, json, os, re, struct, subprocess, sys

PAYLOADS = [
    "x*/ int lgen_pwned_a(void){return 42;} /*",
    "y\n#define lgen_pwned_b 1\nint lgen_pwned_c;\n",
    "z*??/\n/ int lgen_pwned_d; /*",          # a trigraph splice forming */
    "w\\\n*/ int lgen_pwned_e; /*",           # a backslash splice
    "v// lgen_pwned_f\nint lgen_pwned_g;",
    "u\"); int lgen_pwned_h; (\"",            # out of a string literal
    "t\x1b[31m\r\x85\u2028 int lgen_pwned_i; # : key",
    "s: {lgen_pwned_j: 1}\n lgen_pwned_k: [",  # YAML structure
]

# An injected identifier as a token of its own (sanitised C names contain
# it as a part: xx___int_lgen_pwned_a_void__...).
TOKEN = r"(?<![A-Za-z0-9_])lgen_pwned_[a-z](?![A-Za-z0-9_])"

results = []


def check(ok, what, detail=""):
    results.append(ok)
    print(("PASS: " if ok else "FAIL: ") + what)
    if not ok and detail:
        for line in str(detail).splitlines()[:12]:
            print("      | " + line)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", **kw)


def strip_literals(text):
    """Preprocessed C without its string and character literals."""
    return re.sub(r'"(\\.|[^"\\\n])*"|\'(\\.|[^\'\\\n])*\'', '""', text)


def lgraph(names):
    """y = relu(x) + c over a symbolic dim, every name hostile."""
    g, x, c, h, y, n, dim = names
    return {
        "format": "lgen-graph/1", "name": g,
        "inputs": [{"name": x, "type": "f32", "shape": [dim, 5]}],
        "outputs": [y],
        "constants": [{"name": c, "type": "f32", "shape": [5],
                       "data": [0.5, -1.0, 2.0, 0.0, 1.5]}],
        "nodes": [{"name": n, "op": "relu", "inputs": [x], "outputs": [h]},
                  {"name": n + "2", "op": "add", "inputs": [h, c], "outputs": [y]}],
    }


def onnx_model(names):
    g, x, c, h, y, n, dim = names
    raw = base64.b64encode(struct.pack("<5f", 0.5, -1.0, 2.0, 0.0, 1.5)).decode()
    vi = lambda name, dims: {"name": name, "type": {"tensorType": {"elemType": 1, "shape": {"dim": dims}}}}
    return {
        "irVersion": "8", "opsetImport": [{"version": "17"}], "docString": g,
        "graph": {
            "name": g, "docString": g,
            "node": [{"name": n, "opType": "Relu", "input": [x], "output": [h], "docString": g},
                     {"name": n + "2", "opType": "Add", "input": [h, c], "output": [y]}],
            "initializer": [{"name": c, "dims": ["5"], "dataType": 1, "rawData": raw}],
            "input": [vi(x, [{"dimParam": dim}, {"dimValue": "5"}])],
            "output": [vi(y, [{"dimParam": dim}, {"dimValue": "5"}])],
        },
    }


HARNESS = r"""
#include <stdio.h>
#include <math.h>
#include "model.h"
int main(void) {
  float x[3 * 5], y[3 * 5];
  const float c[5] = {0.5f, -1.0f, 2.0f, 0.0f, 1.5f};
  for (int i = 0; i < 15; i++) x[i] = (float)(i % 7) - 3.0f;
  if (ENTRY(x, y, 3) != 0) return 2;
  for (int i = 0; i < 15; i++) {
    float want = (x[i] > 0 ? x[i] : 0.0f) + c[i % 5];
    if (fabsf(y[i] - want) > 0.0f) { printf("y[%d] = %g, want %g\n", i, y[i], want); return 1; }
  }
  return 0;
}
"""


def case(args, label, path, entry_name):
    work = os.path.dirname(path)
    out_c, out_h, out_w = (os.path.join(work, f) for f in ("model.c", "model.h", "weights.c"))
    r = run([args.lgen, path, "-o", out_c, "-H", out_h, "--weights=" + out_w, "--checks",
             "--name=model", "--print-schedule"])
    check(r.returncode == 0, f"{label}: lgen accepts the names", r.stderr)
    if r.returncode != 0:
        return
    sched = r.stdout
    # The schedule: YAML, keys only the graph's name (as lgen printed it).
    try:
        import yaml
        doc = yaml.safe_load(sched)
        keys = list(doc.keys()) if isinstance(doc, dict) else []
        bad = [k for k in keys if "lgen_pwned" in str(k) and k != entry_name]
        check(isinstance(doc, dict) and not bad and "lgen_pwned" not in yaml.safe_dump(
            {k: v for k, v in doc.items() if k != entry_name}),
            f"{label}: --print-schedule adds no key", sched)
    except yaml.YAMLError as e:
        check(False, f"{label}: --print-schedule is YAML", f"{e}\n{sched}")
    for line in sched.splitlines():
        if any(ord(ch) < 0x20 or ord(ch) >= 0x7f for ch in line if ch != "\t"):
            check(False, f"{label}: --print-schedule is printable", repr(line))
            break
    sfile = os.path.join(work, "s.yaml")
    with open(sfile, "w") as f:
        f.write(sched)
    r2 = run([args.lgen, path, "--schedule=" + sfile, "-o", os.path.join(work, "again.c"), "--name=model"])
    check(r2.returncode == 0, f"{label}: the printed schedule reads back", r2.stderr)

    # The dumps of every stage, --emit=ir and --list-ops: printable lines,
    # and no text after a newline in a name starts a line of its own.
    stages = "parse,graph,lower,fuse,schedule,plan,loops"
    views = [("--dump=" + stages, run([args.lgen, path, "--dump=" + stages, "-o", os.path.join(work, "d.c")]), "err"),
             ("--emit=ir", run([args.lgen, path, "--emit=ir", "-o", os.path.join(work, "m.ir")]), "m.ir"),
             ("--list-ops", run([args.lgen, path, "--list-ops"]), "out")]
    forged = [ln.strip() for p in PAYLOADS for ln in p.split("\n")[1:] if ln.strip()]
    for what, r, where in views:
        text = r.stderr if where == "err" else r.stdout if where == "out" else open(os.path.join(work, where)).read()
        lines = text.splitlines()
        bad = [ln for ln in lines if any(ord(ch) < 0x20 or ord(ch) >= 0x7f for ch in ln if ch != "\t")
               or any(ln.lstrip().startswith(f) for f in forged)]
        check(r.returncode == 0 and len(lines) > 1 - (what == "--list-ops") and not bad,
              f"{label}: {what} shows every name on its own line, escaped", f"exit {r.returncode}\n" + "\n".join(
                  repr(ln) for ln in bad[:5]))

    harness = os.path.join(work, "harness.c")
    with open(harness, "w") as f:
        f.write(HARNESS.replace("ENTRY", "model"))
    for cc in ("gcc", "clang"):
        for omp in ([], ["-fopenmp"]):
            flags = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror"] + omp
            exe = os.path.join(work, "a.out")
            r = run([cc, *flags, "-O1", "-I", work, harness, out_c, out_w, "-lm", "-o", exe])
            ok = r.returncode == 0
            check(ok, f"{label}: {cc} {' '.join(omp) or '(no OpenMP)'} builds it warning-free", r.stderr)
            if ok and cc == "gcc" and not omp:
                rr = run([exe])
                check(rr.returncode == 0, f"{label}: the model computes relu(x) + c", rr.stdout + rr.stderr)
    for f in (out_c, out_h, out_w):
        pre = run(["gcc", "-std=c99", "-E", "-P", "-I", work, f])
        macros = run(["gcc", "-std=c99", "-E", "-dM", "-I", work, f])
        code = strip_literals(pre.stdout)
        hits = sorted(set(re.findall(TOKEN, code)))
        defs = [m for m in macros.stdout.splitlines() if "lgen_pwned" in m]
        check(pre.returncode == 0 and not hits and not defs,
              f"{label}: {os.path.basename(f)} holds no injected code",
              f"identifiers outside comments and strings: {hits}\nmacros: {defs}\n{pre.stderr}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lgen", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    for i, p in enumerate(PAYLOADS):
        names = [f"g{p}", f"x{p}", f"c{p}", f"h{p}", f"y{p}", f"n{p}", f"N{p}"]
        # lgen-graph/1 rejects control characters in names, and symbolic
        # dims that are not identifiers (graph-bad.test): the rest stays.
        q = re.sub(r"[\x00-\x1f\x7f]", " ", p)
        lg = [f"g{q}", f"x{q}", f"c{q}", f"h{q}", f"y{q}", f"n{q}", "N"]
        for kind, doc in (("lgen-graph", lgraph(lg)), ("onnx", onnx_model(names))):
            work = os.path.join(args.work, f"{kind}{i}")
            os.makedirs(work, exist_ok=True)
            path = os.path.join(work, "m.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            case(args, f"{kind} payload {i}", path, "model")
    # A .tc doc string, and hostile characters in the input's file name.
    work = os.path.join(args.work, "tc")
    os.makedirs(work, exist_ok=True)
    doc = "\\n".join(PAYLOADS).replace('"', "'")
    fname = os.path.join(work, "spec*??\\ \nint lgen_pwned_z;.tc")
    with open(fname, "w") as f:
        f.write(f'def scale(A: f32(N), B: f32(N)) -> (C: f32(N))\n"""{PAYLOADS[0]} {PAYLOADS[2]}"""\n'
                "{ C(i) = std_mulf(A(i), B(i)); }\n")
    out_c, out_h = os.path.join(work, "k.c"), os.path.join(work, "k.h")
    r = run([args.lgen, fname, "-o", out_c, "-H", out_h, "--checks"])
    check(r.returncode == 0, "tc: lgen accepts the doc string and file name", r.stderr)
    if r.returncode == 0:
        for cc in ("gcc", "clang"):
            rr = run([cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-c", "-I", work, out_c,
                      "-o", os.path.join(work, "k.o")])
            check(rr.returncode == 0, f"tc: {cc} builds it warning-free", rr.stderr)
        for f in (out_c, out_h):
            pre = run(["gcc", "-std=c99", "-E", "-P", "-I", work, f])
            hits = sorted(set(re.findall(TOKEN, strip_literals(pre.stdout))))
            check(pre.returncode == 0 and not hits, f"tc: {os.path.basename(f)} holds no injected code",
                  f"{hits}\n{pre.stderr}")
    # An error message that quotes a hostile name: no raw control character.
    bad = lgraph([f"g{PAYLOADS[6]}", f"x{PAYLOADS[6]}", "c", "h", "y", "n", "N"])
    bad["nodes"][1]["inputs"] = [bad["inputs"][0]["name"], "missing\x1b[2J"]
    path = os.path.join(args.work, "bad.json")
    with open(path, "w") as f:
        json.dump(bad, f)
    r = subprocess.run([args.lgen, path, "-o", os.path.join(args.work, "bad.c")], capture_output=True)
    raw = r.stderr
    check(r.returncode == 1 and b"\x1b" not in raw and b"\r" not in raw,
          "an error quoting a hostile name prints no control character", raw.decode("latin-1"))
    check(not os.path.exists(os.path.join(args.work, "bad.c")), "and writes no output")
    print(f"{results.count(True)} passed, {results.count(False)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
