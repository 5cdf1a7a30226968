#!/usr/bin/python3
"""The generator's own cost at scale (make bench; issue 14 items 4 and 5).

  bench/scale.py SRCDIR BUILDDIR [--quick] [--generation-only]

1. Generation time and peak RSS for graphs of 1,000, 10,000 and 100,000
   nodes (scripts/gen-graph: a relu chain, a mixed elementwise chain, and
   transformer-like layers up to 10,000 nodes), with --fuse=auto and
   --fuse=none. Time is wall clock and CPU (user + system) of the lgen
   process; on a loaded machine the CPU time is the one to compare.
2. For the largest model: the generated C's size and the time gcc -O2 takes
   to compile it (the transformer of 10,000 nodes), and for a model of 100
   MB of weights (scripts/bigweights-check's MLP) and the torchvision
   ResNet-50 export: generation and cc -O2 of the C with the weights
   embedded as byte literals (the default) and as lists of values, with
   --weights=FILE.c and with --weights=FILE.bin.

One line per measurement ("bench scale ..." / "bench cc ..."), then tables.
--quick stops at 10,000 nodes and 10 MB of weights, without ResNet-50.
--generation-only stops after the first table (no compiler runs, no weights).
Each line gives the machine's load (1-minute average) as the run started:
wall time on a loaded machine says little, peak RSS and CPU time more.
"""
import os
import resource
import subprocess
import sys
import tempfile
import time


def measure(args, **kw):
    """(wall s, cpu s, peak RSS MB, exit status) of one child process."""
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        sys.stderr.write(err.decode(errors="replace")[:2000])
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, rc


def main():
    srcdir, builddir = sys.argv[1], sys.argv[2]
    quick = "--quick" in sys.argv[3:]
    generation_only = "--generation-only" in sys.argv[3:]
    lgen = os.path.join(builddir, "src", "lgen")
    gen = os.path.join(srcdir, "scripts", "gen-graph")
    work = os.path.join(builddir, "bench-build", "scale")
    os.makedirs(work, exist_ok=True)
    sizes = [1000, 10000] + ([] if quick else [100000])
    rows = []
    status = 0
    for kind in ("relu", "mixed", "transformer"):
        for n in sizes:
            if kind == "transformer" and n > 10000:
                continue
            model = os.path.join(work, "%s-%d.json" % (kind, n))
            if not os.path.exists(model):
                subprocess.check_call([sys.executable, gen, kind, str(n), "-o", model])
            for fuse in ("auto", "none"):
                out = os.path.join(work, "%s-%d-%s" % (kind, n, fuse))
                load = os.getloadavg()[0]
                wall, cpu, rss, rc = measure([lgen, "--fuse=" + fuse, model, "-o", out + ".c", "-H", out + ".h"])
                status |= rc != 0
                size = os.path.getsize(out + ".c") if rc == 0 else -1
                print("bench scale graph=%s nodes=%d fuse=%s secs=%.2f cpu=%.2f rss_mb=%.0f c_mb=%.1f load=%.1f%s"
                      % (kind, n, fuse, wall, cpu, rss, size / 1e6, load, "" if rc == 0 else " FAILED"))
                sys.stdout.flush()
                rows.append((kind, n, fuse, wall, cpu, rss, size, load))
    print("\nbench: generation time and peak memory (wall / CPU seconds, MB; the load as each run started)")
    print("%-12s %8s %6s %8s %8s %8s %8s %6s" % ("graph", "nodes", "fuse", "wall", "cpu", "rss", "C MB", "load"))
    for kind, n, fuse, wall, cpu, rss, size, load in rows:
        print("%-12s %8d %6s %8.2f %8.2f %8.0f %8.1f %6.1f" % (kind, n, fuse, wall, cpu, rss, size / 1e6, load))
    if generation_only:
        return status

    # the C of the largest graph, compiled
    cc = os.environ.get("CC", "gcc")
    largest = os.path.join(work, "transformer-10000-auto")
    if os.path.exists(largest + ".c"):
        wall, cpu, rss, rc = measure([cc, "-O2", "-c", largest + ".c", "-o", largest + ".o"])
        status |= rc != 0
        print("bench cc model=transformer-10000 c_mb=%.1f cc='%s -O2' secs=%.2f cpu=%.2f rss_mb=%.0f"
              % (os.path.getsize(largest + ".c") / 1e6, cc, wall, cpu, rss))

    # models of big weights, each generated with its constants embedded (as
    # byte literals, the default, and as lists of values), in a C file of
    # their own and in a binary blob, then compiled with cc -O2
    mb = 10 if quick else 100
    wdir = os.path.join(work, "bigweights")
    model = os.path.join(wdir, "file", "model.json")
    if not os.path.exists(model):
        subprocess.check_call([sys.executable, os.path.join(srcdir, "scripts", "bigweights-check"), "--mb", str(mb),
                               "--lgen", lgen, "--dir", wdir, "--forms", "file"], stdout=subprocess.DEVNULL)
    status |= weights_table("mlp%dmb" % mb, model, wdir, lgen, cc)
    if not quick:  # the torchvision ResNet-50 export (needs python3-torch and python3-torchvision)
        rdir = os.path.join(work, "resnet50")
        os.makedirs(rdir, exist_ok=True)
        onnx = os.path.join(rdir, "resnet50.onnx")
        p = subprocess.run(["/usr/bin/python3", os.path.join(srcdir, "tests", "models", "export.py"), rdir, "resnet50"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode == 0 and os.path.exists(onnx):
            status |= weights_table("resnet50", onnx, rdir, lgen, cc)
        else:
            print("bench weights model=resnet50 skipped: the export failed (%s)"
                  % p.stdout.decode(errors="replace").strip().splitlines()[-1:])
    return status


def weights_table(name, model, wdir, lgen, cc):
    """Generation and cc -O2 time and memory of one model, its constants in
    each form; prints a table and one "bench weights ..." line per form."""
    status = 0
    print("\nbench: %s: generation, then %s -O2 -c of the C file (the weights file or blob not compiled)"
          % (name, cc))
    print("%-16s %8s %8s %8s %8s %8s %8s" % ("constants", "gen s", "gen MB", "C MB", "cc s", "cc cpu", "cc MB"))
    for mode, extra in (("embedded-bytes", []), ("embedded-values", ["--constants=values"]),
                        ("FILE.c", ["--weights=" + os.path.join(wdir, "w.c")]),
                        ("FILE.bin", ["--weights=" + os.path.join(wdir, "w.bin")])):
        c = os.path.join(wdir, "m-%s.c" % mode.replace(".", ""))
        gwall, gcpu, grss, rc = measure([lgen, model, "-o", c, "-H", os.path.join(wdir, "m.h")] + extra)
        if rc != 0:
            print("bench weights model=%s mode=%s FAILED" % (name, mode))
            status = 1
            continue
        cwall, ccpu, crss, rc = measure([cc, "-O2", "-c", c, "-o", c + ".o", "-I", wdir])
        status |= rc != 0
        print("%-16s %8.2f %8.0f %8.1f %8.2f %8.2f %8.0f" % (mode, gwall, grss, os.path.getsize(c) / 1e6, cwall,
                                                              ccpu, crss))
        print("bench weights model=%s mode=%s gen_secs=%.2f gen_rss_mb=%.0f c_mb=%.1f cc_secs=%.2f cc_cpu=%.2f "
              "cc_rss_mb=%.0f" % (name, mode, gwall, grss, os.path.getsize(c) / 1e6, cwall, ccpu, crss))
        sys.stdout.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
