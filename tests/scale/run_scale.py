#!/usr/bin/python3
"""Generation cost grows about linearly with the graph (issue 14 item 4).

Each case generates a graph of n nodes and of 8 n nodes (scripts/gen-graph)
and compares lgen's CPU time (user + system, from wait4: not wall time, which
a loaded machine inflates) and peak RSS. Linear growth gives ratios of about
8 (measured 8.4 to 10 for time, 7 to 8.3 for memory); quadratic would give
64. The limits are generous, for a noisy shared machine: time below 20x,
memory below 12x. The small graph's time is the best of three runs (noise
weighs most on short runs). Before the fix a chain of 2,500 relus with
--fuse=none took over a minute and the 8x one did not finish: each run has
a time limit, and exceeding it fails the case.

  run_scale.py LGEN GEN_GRAPH WORKDIR
"""
import os
import subprocess
import sys

TIME_RATIO = 20.0
RSS_RATIO = 12.0
LIMIT_S = 60  # CPU seconds per run: today's build needs about 4 for the largest case

CASES = [  # (kind, --fuse, small n; the big graph has 8 n nodes)
    ("relu", "none", 2500),
    ("add-const", "auto", 2500),
    ("mixed", "auto", 2500),
    ("mixed", "none", 2500),
    ("transformer", "auto", 1250),
    ("transformer", "none", 1250),
]


def run(lgen, fuse, model, out):
    """CPU seconds and peak RSS (KB) of one generation; None if it fails or
    runs over LIMIT_S."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_CPU, (LIMIT_S, LIMIT_S + 5))

    p = subprocess.Popen([lgen, "--fuse=" + fuse, model, "-o", out + ".c", "-H", out + ".h"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limit)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.stdout.write("  lgen exited with %d: %s\n" % (p.returncode, err.decode(errors="replace")[:300]))
        return None
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def main():
    lgen, gen, work = sys.argv[1:4]
    failed = 0
    for kind, fuse, n in CASES:
        res = {}
        for size, tries in ((n, 3), (8 * n, 1)):
            model = os.path.join(work, "%s-%d.json" % (kind, size))
            if not os.path.exists(model):
                subprocess.check_call([sys.executable, gen, kind, str(size), "-o", model])
            runs = []
            for _ in range(tries):
                runs.append(run(lgen, fuse, model, os.path.join(work, "out")))
                if runs[-1] is None:
                    break
            res[size] = None if None in runs else (min(r[0] for r in runs), min(r[1] for r in runs))
            if res[size] is None:
                break
        name = "%s --fuse=%s, %d -> %d nodes" % (kind, fuse, n, 8 * n)
        if res.get(n) is None or res.get(8 * n) is None:
            print("FAIL: %s: a run failed or took over %d CPU seconds" % (name, LIMIT_S))
            failed += 1
            continue
        t = res[8 * n][0] / max(res[n][0], 0.01)
        m = res[8 * n][1] / max(res[n][1], 1)
        ok = t < TIME_RATIO and m < RSS_RATIO
        print("%s: %s: cpu %.2f s -> %.2f s (x%.1f, limit %g), rss %d -> %d MB (x%.1f, limit %g)"
              % ("PASS" if ok else "FAIL", name, res[n][0], res[8 * n][0], t, TIME_RATIO,
                 res[n][1] // 1024, res[8 * n][1] // 1024, m, RSS_RATIO))
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
