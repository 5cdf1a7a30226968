#!/usr/bin/python3
"""diag-coverage.py --json COVERAGE.json --src DIST_TREE

Reads gcovr's JSON coverage of lgen (scripts/coverage.sh) and prints:
  * line and branch coverage per stage (front-ends, graph builder, schedule
    reader, ...) and in all;
  * every diagnostic call site that no test ran: a call of diag_error,
    diag_warning, diag_io_error, graph_error, graph_warning or a front-end's
    own error helper whose first line has an execution count of 0.
Exit status 1 when some diagnostic never ran."""
import argparse, json, re, sys

# The stages the issue names, by path prefix under src/.
STAGES = [
    ("front-ends", ("src/frontend/",)),
    ("graph builder", ("src/graph/build/",)),
    ("schedule reader", ("src/schedule/yaml.c",)),
    ("graph passes, lowering, fusion and plan", ("src/graph/",)),
    ("loop IR", ("src/loops/",)),
    ("schedules", ("src/schedule/",)),
    ("emitter", ("src/emit/",)),
    ("other", ("src/",)),
]

# A diagnostic: the call that reports something a user reads.
DIAG = re.compile(r"\b(diag_error|diag_warning|diag_io_error|graph_error|graph_warning|syntax_error|"
                  r"report_cycle|wrong_kind|node_error|einsum_error|refuse|fail|usage_error)\s*\(")


def stage_of(path):
    for name, prefixes in STAGES:
        if any(path.startswith(p) for p in prefixes):
            return name
    return "other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    ap.add_argument("--src", required=True)
    a = ap.parse_args()
    data = json.load(open(a.json))
    totals = {}
    per_file = {}
    missed = []
    ndiag = 0
    for f in data["files"]:
        path = f["file"]
        if path.startswith(a.src.rstrip("/") + "/"):
            path = path[len(a.src.rstrip("/")) + 1:]
        st = totals.setdefault(stage_of(path), [0, 0, 0, 0])
        fst = per_file.setdefault(path, [0, 0, 0, 0])
        counts = {}
        for ln in f["lines"]:
            if ln.get("gcovr/noncode"):
                continue
            counts[ln["line_number"]] = ln["count"]
            for x in (st, fst):
                x[0] += 1
                x[1] += ln["count"] > 0
                for b in ln.get("branches", []):
                    x[2] += 1
                    x[3] += b["count"] > 0
        try:
            text = open(f"{a.src}/{path}", errors="replace").read().splitlines()
        except OSError:
            continue
        for i, line in enumerate(text, 1):
            s = line.strip()
            if s.startswith(("/*", "*", "//", "#", "static", "void ", "LG_NORETURN")) or not DIAG.search(s):
                continue
            if s.endswith(";") is False and "(" in s and s.rstrip().endswith("{"):
                continue  # a definition, not a call
            ndiag += 1
            if counts.get(i, 1) == 0:
                missed.append(f"{path}:{i}: {s[:110]}")
    print(f"{'stage':28} {'lines':>16} {'branches':>16}")
    all_ = [0, 0, 0, 0]
    for name, _ in STAGES:
        if name not in totals:
            continue
        l, lc, b, bc = totals[name]
        for k in range(4):
            all_[k] += totals[name][k]
        print(f"{name:28} {lc:6}/{l:<6} {100 * lc / max(l, 1):5.1f}% {bc:6}/{b:<6} {100 * bc / max(b, 1):5.1f}%")
    l, lc, b, bc = all_
    print(f"{'all of src/':28} {lc:6}/{l:<6} {100 * lc / max(l, 1):5.1f}% {bc:6}/{b:<6} {100 * bc / max(b, 1):5.1f}%")
    # the files of the stages issue 14 asks >= 90% branch coverage of
    print(f"\n{'file (front-ends, graph builder, schedule reader)':52} {'lines':>16} {'branches':>16}")
    for path in sorted(per_file):
        if stage_of(path) not in ("front-ends", "graph builder", "schedule reader"):
            continue
        l, lc, b, bc = per_file[path]
        print(f"{path:52} {lc:6}/{l:<6} {100 * lc / max(l, 1):5.1f}% {bc:6}/{b:<6} {100 * bc / max(b, 1):5.1f}%")
    print(f"\n{ndiag - len(missed)} of {ndiag} diagnostic call sites ran in a test")
    for m in missed:
        print("  never ran: " + m)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
