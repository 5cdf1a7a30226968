#!/usr/bin/python3
"""Schedule invariance: every legal schedule of an op computes what
--schedule=none computes, bit for bit (reliability anchors, section B2).

What it does
------------
For every def in specs/linalg.tc and tests/schedules/reshape.tc (ops whose
domains --schedule=auto folds or collapses):

1. Reads the def's structured-op IR (``lgen --emit=ir``): its tensors, size
   symbols, attributes, and per comprehension the dims with their iterator
   kinds, the operand maps and the in-bounds requirements.  Everything below
   is derived from the IR, nothing from the op's name.
2. Draws a seeded set of random LEGAL schedules (YAML files): tile sizes
   1, 2, 3, primes, sizes larger than the extent, 1-3 tile levels with
   inner <= outer, random (full and partial) permutations in ``order``,
   ``unroll`` of 0-2 parallel dims (factors 1-8, tile sizes multiples of the
   factor), ``pack`` of inputs read through plain dims, ``parallel`` on 0-2
   parallel dims (or ``d.reg``, an unrolled dim's register tiles, if this
   lgen supports it), ``vector`` on some dim (or none), and, where the
   payload is an f32/f64 sum/max/min combine, ``split_reduction: true`` with
   ``parallel: [a reduction dim]``.  The first few of each op's schedules
   force a feature (all tiles 1, pack everything, split, two unrolled dims,
   huge tiles, two levels, two collapsed parallel dims).  Where auto folds
   unit dims or collapses contiguous dims (read from its --print-schedule),
   RESHAPE_VARIANTS more schedules take those fold/collapse entries and draw
   the rest at random over the reshaped dims (no packing).  Plus
   --schedule=none (variant 0, the reference) and --schedule=auto for each
   --target.
3. Runs lgen once per variant on the def alone (``--prefix=vN_``), and
   checks that --print-schedule does not change the C and that the printed
   schedule, fed back as a schedule file, gives the same C and header.
4. Writes one C driver per op that calls every variant.  Per compiler
   configuration (CONFIGS: gcc and clang -O2 with -fopenmp; gcc -O2
   -march=native and clang -O1 without it; gcc -O0 -fopenmp with
   -fsanitize=address,undefined; the last two, SANITIZED_RUN, only where
   lgen itself is built with the sanitizers, LGEN_SANITIZED=yes, and there
   only they; SCHEDULES_CC=all, or a comma-separated list of names, picks
   others) each variant is compiled on its own with
   ``-std=c99 -pedantic -Wall -Wextra -Werror -ffp-contract=off`` (any
   warning fails the variant) and linked with the driver: one driver per
   (op, configuration).
5. Runs the driver on five shapes (all dims 1; tiny; odd primes; larger
   than the tile sizes, so partial tiles and partial register blocks occur;
   one with an empty dim) with random strides/dilations, at
   OMP_NUM_THREADS = 1, 2, 3 (2, 3 under the sanitizers).  The reference is
   variant 0 (none) run at one thread; every variant, none included, must
   give BIT-IDENTICAL outputs.  A crash or sanitizer report is blamed on the
   variant that was running (leaks: on the kernels in the allocation stack),
   and the driver reruns without it.

Exact mode: float inputs are small integers (|x| <= 3, initial outputs
|y| <= 8) stored in floats, so every partial sum of every reduction order is
an integer below 2^24 and exact in f32: a reordered, vectorised, fused
(fmaf) or split-across-threads reduction must still be bit-identical (R2,
exact mode).  Max/min (select) payloads are order-independent anyway.  No
input is -0.0 or NaN.  Integer ops use full-range i8 and +-2047 i16
operands (no i32 overflow), and full-range unsigned ones (whose sums and
products wrap modulo 2^bits in any order).  The driver also checks that no kernel writes
outside its output buffers (guard zones; under ASan the buffers are
exact-size instead) or modifies its inputs; the none results of all
configurations must agree (R4, R5); and a canary (none with one output bit
flipped) must be caught, so a harness that cannot fail is noticed.

6. Checks invalid schedules (ERROR_CASES): each must give
   ``FILE:LINE:COL: error: ...`` at the expected location on the first line
   of stderr, then the source line and a caret, exactly one error, exit
   status 1, nothing on stdout, no output file (and an existing output file
   left untouched), nothing left behind.

Output: one ``PASS``/``FAIL``/``XFAIL``/``XPASS`` line per case, details as
``#`` lines below a failure, then ``N passed, N failed``.  A case is one of:
``lgen`` (op, schedule: generation and the print-schedule round trip),
``run`` (op, schedule, compiler config: compiled cleanly and bit-identical
on every shape and thread count), ``configs`` (op: the none results agree
across configurations), ``harness`` (op: the canary was caught everywhere),
``error`` (one invalid schedule).  Known lgen bugs are listed in BUGS and
the XFAIL tables; a listed case that fails with that bug's signature is an
XFAIL, not a failure.  Exit status 0 iff nothing failed; a compiler
configuration that cannot build and run a test program is skipped with a
note, none at all is a failure.

Reproducing: ``--op NAME --keep`` keeps the work directory (vN.yaml, vN.c,
case*/, build-*/driver); ``--list`` prints every schedule and shape;
failure details include a rerun command for the driver
(``driver VARIANTS REFDIR CASEDIR...``).

Environment: LGEN (lgen binary, default src/lgen), top_srcdir (or srcdir;
default two levels above this script), CC_GCC / CC_CLANG (compilers),
SCHEDULES_SEED, SCHEDULES_PER_OP, SCHEDULES_JOBS (parallel jobs; default the
CPU count).  Options: --op NAME, --cc CONFIG (repeatable), --seed N,
--per-op N, --jobs N, --keep, --list, --no-errors, --errors-only,
--print-xfail (XFAIL table entries for failures that match a known bug).
"""

import argparse
import concurrent.futures
import itertools
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------

DEFAULT_SEED = 20240611
DEFAULT_PER_OP = 8             # random schedules per op (plus none and autos): the
                               # 7 that force a feature (FORCED) and 1 drawn freely
AUTO_TARGETS = ["x86-64-avx512", "x86-64-avx2", "aarch64-neon"]

COMMON_FLAGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror",
                "-ffp-contract=off"]

# (name, compiler key, flags, thread counts to run at (None: no OpenMP)).
# gcc-O2-native takes lgen's FMA path (fmaf where the target has FMA) and
# its AVX-512 pragma on machines that have them.  clang without OpenMP is
# -O1 and the sanitizer build -O0, to keep compile times down (clang's
# warnings do not depend on -O; the sanitizers see more without optimisation).
CONFIGS = [
    ("gcc-O2-omp", "gcc", ["-O2", "-fopenmp"], [1, 2, 3]),
    ("gcc-O2-native", "gcc", ["-O2", "-march=native"], None),
    ("clang-O2-omp", "clang", ["-O2", "-fopenmp"], [1, 2, 3]),
    ("clang-O1", "clang", ["-O1"], None),
    ("gcc-asan-ubsan-omp", "gcc",
     ["-O0", "-g", "-fopenmp", "-DGUARD=0", "-fsanitize=address,undefined",
      "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"], [2, 3]),
]

# The configurations the sanitized build's run takes (see main).
SANITIZED_RUN = ["gcc-O2-native", "gcc-asan-ubsan-omp"]

TILE_SIZES = [1, 2, 3, 4, 5, 7, 8, 13, 16, 32, 64, 1000]
LARGE_BUDGET = 120000          # iterations of the largest shape's domain
PRIME_BUDGET = 30000
RUN_TIMEOUT = 300

# Known lgen bugs, found by this test.  Each has a signature: a regular
# expression the failure's details must match for the failure to count as
# that bug (a listed case that fails some other way is a FAIL).  The XFAIL
# lists below name the cases each bug breaks with the default seed and
# schedule count (with others they are not applied); a listed case that
# fails with the bug's signature is reported as XFAIL (not a failure), one
# that passes as XPASS (a failure: remove it from the list).
BUGS = {
    "split-acc": (
        "split_reduction where the parallel reduction loop is a tile loop that "
        "encloses the accumulator (the loops of parallel dims): the emitter writes "
        "'omp parallel for reduction(+:x_acc)' but x_acc is declared inside that "
        "loop (and the outputs would be updated in place by every thread), so "
        "-fopenmp builds do not compile. Repro: specs/linalg.tc with "
        "matvec: {order: [n], tile: {n: [4]}, parallel: [n], split_reduction: true}; "
        "gcc -fopenmp: 'x_acc' undeclared",
        r"undeclared.*_acc|_acc.*undeclared"),
    "pack-empty-index": (
        "a packed tensor is read as 'T_pack[]' (no index) and never packed: "
        "(a) rank-0 tensors: fill: {pack: [value]} gives 'value_pack[] = value[];'; "
        "(b) tensors whose pack point falls between collapsed parallel loops: "
        "matmul: {parallel: [m, n], pack: [A]} gives 'A_pack[] * B[k * N + n]'",
        r"_pack\[\]"),
    "unused-lgen-min": (
        "'static inline lgen_min' is emitted but unused (clang -Wall: "
        "-Wunused-function) when a tensor is packed and nothing is tiled. Repro: "
        "'def copy(I: f32(N)) -> (O: f32(N)) { O(n) = I(n); }' alone with "
        "copy: {pack: [I]}, clang -std=c99 -Wall -Werror",
        r"unused function 'lgen_min'"),
    "maybe-uninitialized": (
        "gcc -O2 -fopenmp -Wall: 'x_acc[0]' may be used uninitialized in the "
        "partial register block (run-time extent loops over a fixed-size "
        "accumulator array under omp simd). Repro: specs/linalg.tc with "
        "matvec: {unroll: {m: 2}, parallel: [m], vector: m}",
        r"may be used uninitialized"),
    "collapse-simd": (
        "parallel on two adjacent dims emits 'omp parallel for collapse(2)' "
        "with 'omp simd' between the two loops, which then are not perfectly "
        "nested (gcc: 'not enough perfectly nested loops', clang: 'expected 2 "
        "for loops'). Repro: transpose: {parallel: [m, n]}",
        r"perfectly nested|expected 2 for loops"),
    "scalar-value-loc": (
        "errors in the value of a scalar key (vector: q, split_reduction: maybe) "
        "point at the key, not at the offending value as yaml.c promises",
        r"error at 2:3, want 2:"),
}

# (op, variant) -> {config or "*": bug}: run and lgen cases.  Generated
# with --print-xfail, then checked by hand against the bug descriptions.
OMP = ("gcc-O2-omp", "clang-O2-omp", "gcc-asan-ubsan-omp")
GCC_OMP = ("gcc-O2-omp",)
CLANG = ("clang-O1", "clang-O2-omp")
ALL = ("gcc-O2-omp", "gcc-O2-native", "clang-O2-omp", "clang-O1", "gcc-asan-ubsan-omp")
XFAIL_RUN = {
}
XFAIL_LGEN = {
}
# invalid-schedule case name -> bug
XFAIL_ERRORS = {
}

CTYPE = {"f32": "float", "f64": "double", "i8": "int8_t", "i16": "int16_t",
         "i32": "int32_t", "i64": "int64_t", "u8": "uint8_t", "u16": "uint16_t",
         "u32": "uint32_t", "u64": "uint64_t"}
NPTYPE = {"f32": np.float32, "f64": np.float64, "i8": np.int8,
          "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
          "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
# unsigned: the full range (products and sums wrap, exactly in any order)
INT_RANGE = {"i8": (-128, 127), "i16": (-2047, 2047), "i32": (-1000, 1000),
             "i64": (-1000, 1000), "u8": (0, 255), "u16": (0, 65535),
             "u32": (0, 2**32 - 1), "u64": (0, 2**64 - 1)}

# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------

print_lock = threading.Lock()
TIMES = []   # (config, build seconds, run seconds) per (op, config)


def note(msg):
    with print_lock:
        for line in str(msg).rstrip("\n").split("\n"):
            print("# " + line)
        sys.stdout.flush()


def run(cmd, cwd=None, timeout=120, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout, env=env)
        return p.returncode, p.stdout.decode(errors="replace"), \
            p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        return -999, out, "timed out after %ds" % timeout
    except OSError as e:
        return -998, "", str(e)


def describe_rc(rc):
    if rc == -999:
        return "timeout"
    if rc == -998:
        return "could not execute"
    if rc < 0:
        return "killed by signal %d" % -rc
    return "exit %d" % rc


def head(text, n=12):
    lines = text.rstrip("\n").split("\n")
    if len(lines) > n:
        lines = lines[:n] + ["... (%d more lines)" % (len(lines) - n)]
    return "\n".join(lines)


def quote(cmd):
    return " ".join(shlex.quote(x) for x in cmd)


def prod(xs):
    r = 1
    for x in xs:
        r *= x
    return r


# ---------------------------------------------------------------------------
# The spec: per-def chunks
# ---------------------------------------------------------------------------


def split_defs(text):
    """[(def name, text of its ods_def ... chunk)] in file order."""
    starts = [m.start() for m in re.finditer(r"^\s*ods_def\b", text, re.M)]
    chunks = []
    for a, b in zip(starts, starts[1:] + [len(text)]):
        chunk = text[a:b]
        m = re.search(r"\bdef\s+([A-Za-z_][A-Za-z0-9_]*)", chunk)
        if m:
            chunks.append((m.group(1), chunk))
    return chunks


# ---------------------------------------------------------------------------
# The IR (lgen --emit=ir)
# ---------------------------------------------------------------------------


class Tensor:
    def __init__(self, name, ty, syms, is_out):
        self.name, self.ty, self.syms, self.is_out = name, ty, syms, is_out


class Comp:
    """One comprehension (op #i)."""

    def __init__(self, index):
        self.index = index
        self.dims = []        # [(name, kind, extent symbol)]
        self.operands = []    # [(tensor name, [index exprs], shape_only)]
        self.requires = []    # [(expr, symbol)]
        self.insts = {}       # %n -> instruction name
        self.yields = []      # (operand index, %n) per yield
        self.combine = None   # "sum", "select", or None

    @property
    def dim_names(self):
        return [d[0] for d in self.dims]

    def kind(self, dim):
        return [d[1] for d in self.dims if d[0] == dim][0]

    @property
    def parallel_dims(self):
        return [d[0] for d in self.dims if d[1] == "parallel"]

    @property
    def reduction_dims(self):
        return [d[0] for d in self.dims if d[1] == "reduction"]


class Kernel:
    def __init__(self, name):
        self.name = name
        self.tensors = []
        self.sizes = []
        self.attrs = []       # [(name, length)]
        self.comps = []
        self.chunk = None

    @property
    def ins(self):
        return [t for t in self.tensors if not t.is_out]

    @property
    def outs(self):
        return [t for t in self.tensors if t.is_out]

    def tensor(self, name):
        return [t for t in self.tensors if t.name == name][0]

    def packable(self, comp):
        """Inputs that lgen can pack in this comprehension: read through one
        operand whose indices are all plain dims (not shape-only)."""
        res = []
        for t in self.ins:
            uses = [o for o in comp.operands if o[0] == t.name]
            if len(uses) != 1 or uses[0][2] or not uses[0][1]:
                continue                        # rank-0 tensors cannot be packed
            if all(e in comp.dim_names for e in uses[0][1]):
                res.append(t.name)
        return res


def split_top(s, sep=","):
    """Split at top-level separators (outside brackets)."""
    parts, cur, depth = [], [], 0
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def parse_ir(text):
    kernels = []
    k = comp = None
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        m = re.match(r"kernel @(\w+)$", line)
        if m:
            k = Kernel(m.group(1))
            kernels.append(k)
            comp = None
            continue
        if k is None:
            continue
        m = re.match(r"(in|out)\s+(\w+): (\w+)\[(.*)\]$", line)
        if m and comp is None:
            syms = [s for s in split_top(m.group(4))]
            k.tensors.append(Tensor(m.group(2), m.group(3), syms, m.group(1) == "out"))
            continue
        m = re.match(r"sizes \((.*)\)$", line)
        if m and comp is None:
            k.sizes = split_top(m.group(1))
            continue
        m = re.match(r"attr (\w+): i64\[(\d+)\]$", line)
        if m and comp is None:
            k.attrs.append((m.group(1), int(m.group(2))))
            continue
        m = re.match(r"attr (\w+): (.*)$", line)
        if m and comp is None:
            raise ValueError("kernel %s: unsupported attribute %s" % (k.name, line))
        m = re.match(r"op #(\d+)$", line)
        if m:
            comp = Comp(int(m.group(1)))
            k.comps.append(comp)
            continue
        if comp is None:
            continue
        m = re.match(r"domain \((.*)\)$", line)
        if m:
            for d in split_top(m.group(1)):
                dm = re.match(r"(\w+): (parallel|reduction) < (\w+)$", d)
                if not dm:
                    raise ValueError("kernel %s: cannot read dim '%s'" % (k.name, d))
                comp.dims.append((dm.group(1), dm.group(2), dm.group(3)))
            continue
        m = re.match(r"operand \$\d+ = (\w+)\[(.*)\]( shape-only)?$", line)
        if m:
            comp.operands.append((m.group(1), split_top(m.group(2)), bool(m.group(3))))
            continue
        m = re.match(r"%(\d+) = (\w+)", line)
        if m:
            comp.insts[int(m.group(1))] = m.group(2)
            continue
        m = re.match(r"yield \$(\d+) = %(\d+)$", line)
        if m:
            comp.yields.append((int(m.group(1)), int(m.group(2))))
            continue
        m = re.match(r"require 0 <= (.*) < (\w+)\s+\(.*\)$", line)
        if m:
            comp.requires.append((m.group(1), m.group(2)))
            continue
    # split_reduction is legal for f32/f64 sum, max and min payloads (lgen
    # does not split integer reductions: their partials could overflow)
    for k in kernels:
        for c in k.comps:
            if c.reduction_dims and len(c.yields) == 1:
                operand, value = c.yields[0]
                inst = c.insts.get(value, "")
                floating = k.tensor(c.operands[operand][0]).ty.startswith("f")
                if inst == "std_addf" and floating:
                    c.combine = "sum"
                elif inst == "std_select" and floating:
                    c.combine = "select"
    return kernels


# ---------------------------------------------------------------------------
# Random legal schedules
# ---------------------------------------------------------------------------


class Variant:
    def __init__(self, name, mode, yaml=None, desc=""):
        self.name = name      # "none", "auto-x86-64-avx2", "r3", ...
        self.mode = mode      # "none", "auto", "file"
        self.target = None
        self.yaml = yaml      # text of the schedule file
        self.desc = desc


def flow_list(xs):
    return "[" + ", ".join(str(x) for x in xs) + "]"


def random_comp_schedule(k, comp, rng, forced):
    """One comprehension's decisions as [(key, YAML flow value)]."""
    dims = comp.dim_names
    par = comp.parallel_dims
    red = comp.reduction_dims
    entries = []

    if forced == "collapse" and len(par) >= 2:
        # two untiled parallel dims outermost, both parallel (collapse(2)),
        # the inner one vectorised; the other dims tiled at random
        pair = rng.sample(par, 2)
        rest = [d for d in dims if d not in pair]
        rng.shuffle(rest)
        tiles = {d: [rng.choice(TILE_SIZES)] for d in rest if rng.random() < 0.5}
        if tiles:
            entries.append(("tile", "{" + ", ".join(
                "%s: %s" % (d, flow_list(tiles[d])) for d in rest if d in tiles) + "}"))
        entries.append(("order", flow_list(pair + rest)))
        entries.append(("parallel", flow_list(pair)))
        entries.append(("vector", pair[1]))
        chosen = [t for t in k.packable(comp) if rng.random() < 0.5]
        if chosen:
            entries.append(("pack", flow_list(chosen)))
        return entries
    if forced == "collapse":
        forced = None

    split = False
    if comp.combine and red and (forced == "split" or
                                 (forced is None and rng.random() < 0.25)):
        split = True

    # unroll: 0-2 parallel dims, factors 1..8 (not with split_reduction)
    unroll = {}
    if par and not split:
        if forced in ("unroll2", "pack"):
            n = min(2, len(par))
        elif forced in ("ones", "huge"):
            n = 0
        else:
            n = rng.choice([0, 1, 1, 2])
        for d in rng.sample(par, min(n, len(par))):
            unroll[d] = rng.choice([1, 2, 3, 4, 5, 7, 8]) if forced != "unroll2" \
                else rng.choice([2, 3, 4, 8])

    # tiles: each dim tiled or not, 1..3 levels, inner <= outer, multiples
    # of the dim's unroll factor
    nlevels = rng.choice([1, 1, 2, 2, 3]) if forced != "levels" else 2
    tiles = {}
    for d in dims:
        if forced == "ones":
            tiles[d] = [1] * nlevels if rng.random() < 0.5 else [1]
            continue
        if forced == "huge":
            tiles[d] = [1000]
            continue
        if rng.random() < (0.35 if forced is None else 0.15):
            continue
        nl = rng.randint(1, nlevels)
        f = unroll.get(d, 1)
        if f > 1:
            mults = sorted(rng.choice([1, 1, 2, 3, 5, 7, 16]) for _ in range(nl))
            sizes = [f * m for m in reversed(mults)]
        else:
            sizes = sorted((rng.choice(TILE_SIZES) for _ in range(nl)), reverse=True)
        tiles[d] = sizes
    if split:
        # a split loop carries per-thread partials: the parallel dims around it
        # must stay untiled, and it must come after them in the order
        for d in par:
            tiles.pop(d, None)
    if tiles:
        entries.append(("tile", "{" + ", ".join(
            "%s: %s" % (d, flow_list(tiles[d])) for d in dims if d in tiles) + "}"))

    # order: a random permutation, sometimes only its first few dims
    perm = dims[:]
    rng.shuffle(perm)
    if split:
        perm = [d for d in perm if d in par] + [d for d in perm if d not in par]
    r = rng.random()
    if split:
        entries.append(("order", flow_list(perm)))
    elif r < 0.15:
        pass                                    # no order: none's order
    elif r < 0.35 and len(perm) > 1:
        entries.append(("order", flow_list(perm[:rng.randint(1, len(perm) - 1)])))
    else:
        entries.append(("order", flow_list(perm)))

    if unroll:
        entries.append(("unroll", "{" + ", ".join(
            "%s: %d" % (d, f) for d, f in unroll.items()) + "}"))

    # parallel (d.reg: the register-tile loop of an unrolled dim d)
    blocked = sorted(d for d, f in unroll.items() if f > 1)
    reg_draw = rng.random()
    reg_dim = rng.choice(blocked) if blocked else None
    if split:
        entries.append(("parallel", flow_list([rng.choice(red)])))
        entries.append(("split_reduction", "true"))
    else:
        r = rng.random()
        if r < 0.1:
            pass                                # none's default
        else:
            n = rng.choice([0, 1, 1, 2]) if forced != "unroll2" else 2
            chosen = rng.sample(par, min(n, len(par)))
            if reg_dim and reg_draw < 0.4 and FEATURES.get("reg"):
                chosen = [reg_dim + ".reg"]
            entries.append(("parallel", flow_list(chosen)))
        if rng.random() < 0.15:
            entries.append(("split_reduction", "false"))

    # vector; a vectorised sum over a reduction dim may keep partial sums
    r = rng.random()
    if r < 0.15:
        entries.append(("vector", "none"))
    elif r < 0.85:
        vdim = rng.choice(dims)
        entries.append(("vector", vdim))
        if comp.kind(vdim) == "reduction" and comp.combine == "sum" and not split and not unroll \
                and rng.random() < 0.5:
            entries.append(("partials", rng.choice([2, 3, 4, 16, 64])))

    # pack
    packable = k.packable(comp)
    if packable:
        if forced == "pack":
            chosen = packable
        else:
            chosen = [t for t in packable if rng.random() < 0.5]
        if chosen:
            entries.append(("pack", flow_list(chosen)))

    rng.shuffle(entries)                        # key order must not matter
    return entries


FORCED = ["ones", "pack", "split", "unroll2", "huge", "levels", "collapse"]

# Optional schedule features this lgen supports (probed in main)
FEATURES = {"reg": False, "cblas": None}   # cblas: the link flag
FEATURE_PROBES = {
    # parallel: [d.reg], the register-tile loop of d
    "reg": ("matmul", "matmul:\n  tile: {n: [16]}\n  unroll: {n: 8}\n  parallel: [n.reg]\n"),
}


def gemm_routine(k, comp):
    """cblas_sgemm/cblas_dgemm if lgen can make this comprehension one CBLAS
    call: C += A * B over rank-2 f32/f64 tensors indexed by plain dims, one
    reduction dim."""
    if len(comp.dims) != 3 or len(comp.reduction_dims) != 1 or len(comp.operands) != 3:
        return None
    if sorted(set(comp.insts.values())) != ["read", "std_addf", "std_mulf"]:
        return None
    types = set(k.tensor(o[0]).ty for o in comp.operands)
    if types not in ({"f32"}, {"f64"}):
        return None
    for name, idx, shape_only in comp.operands:
        if shape_only or len(idx) != 2 or len(set(idx)) != 2 or \
                not all(e in comp.dim_names for e in idx):
            return None
    return "cblas_sgemm" if types == {"f32"} else "cblas_dgemm"


def view_comp(comp, fold, groups):
    """The comprehension as a schedule sees it after fold/collapse: folded
    dims gone, each group one dim named by its first.  Operands are left out,
    so nothing is packed (which reads stay plain dims is lgen's business)."""
    v = Comp(comp.index)
    merged = {d for g in groups for d in g[1:]}
    v.dims = [d for d in comp.dims if d[0] not in fold and d[0] not in merged]
    v.combine = comp.combine
    return v


def read_reshapes(printed):
    """{(kernel, op): (fold dims, collapse groups)} from --print-schedule."""
    out, kernel, op = {}, None, 0
    for line in printed.split("\n"):
        m = re.match(r"^(\w+):$", line)
        if m:
            kernel, op = m.group(1), 0
            continue
        m = re.match(r"^\s+- op: (\d+)$", line)
        if m:
            op = int(m.group(1))
            continue
        m = re.match(r"^\s+(fold|collapse): (.*)$", line)
        if m and kernel:
            fold, groups = out.get((kernel, op), ([], []))
            if m.group(1) == "fold":
                fold = re.findall(r"\w+", m.group(2))
            else:
                groups = [re.findall(r"\w+", g) for g in re.findall(r"\[([^\[\]]*)\]", m.group(2))]
            out[(kernel, op)] = (fold, groups)
    return out


RESHAPE_VARIANTS = ["ones", "unroll2", "split", None]


def make_variants(k, seed, per_op, reshapes=None):
    vs = [Variant("none", "none")]
    for t in AUTO_TARGETS:
        v = Variant("auto" if t == AUTO_TARGETS[0] else "auto-" + t, "auto")
        v.target = t
        vs.append(v)
    gemm = FEATURES.get("cblas") and len(k.comps) == 1 and gemm_routine(k, k.comps[0])
    if gemm:
        vs.append(Variant("lib-" + gemm, "file", "# %s as one library call\n%s:\n"
                          "  library_call: %s\n" % (k.name, k.name, gemm)))
    rng = random.Random("%s:%s" % (seed, k.name))
    fmt_rng = random.Random("%s:%s:format" % (seed, k.name))   # spelling only
    for i in range(per_op):
        forced = FORCED[i] if i < len(FORCED) else None
        lines = ["# %s, random schedule r%d (seed %s%s)" % (
            k.name, i, seed, ", " + forced if forced else ""), "%s:" % k.name]
        multi = len(k.comps) > 1
        for comp in k.comps:
            entries = random_comp_schedule(k, comp, rng, forced)
            if multi:
                lines.append("  - op: %d" % comp.index)
                ind = "    "
            else:
                ind = "  "
            for key, val in entries:
                if key == "tile":   # a single size may be written without brackets
                    val = re.sub(r"(\w+): \[(\d+)\]", lambda m: "%s: %s" % (
                        m.group(1), m.group(2)) if fmt_rng.random() < 0.3 else m.group(0), val)
                lines.append("%s%s: %s" % (ind, key, val))
            if multi and not entries:
                lines.append("    parallel: []")
        if not multi and len(lines) == 2:
            lines.append("  parallel: []")
        vs.append(Variant("r%d" % i, "file", "\n".join(lines) + "\n",
                          forced or ""))
    reshapes = reshapes or {}
    if any((k.name, c.index) in reshapes for c in k.comps):
        for i, forced in enumerate(RESHAPE_VARIANTS):
            lines = ["# %s, auto's fold/collapse with random schedule s%d (seed %s%s)" % (
                k.name, i, seed, ", " + forced if forced else ""), "%s:" % k.name]
            for comp in k.comps:
                fold, groups = reshapes.get((k.name, comp.index), ([], []))
                entries = random_comp_schedule(k, view_comp(comp, fold, groups), rng, forced)
                if fold:
                    entries.insert(rng.randint(0, len(entries)), ("fold", flow_list(fold)))
                if groups:
                    entries.insert(rng.randint(0, len(entries)),
                                   ("collapse", flow_list(flow_list(g) for g in groups)))
                lines.append("  - op: %d" % comp.index)
                lines += ["    %s: %s" % (key, val) for key, val in entries] or ["    parallel: []"]
            vs.append(Variant("s%d" % i, "file", "\n".join(lines) + "\n", "reshape " + (forced or "")))
    return vs


# ---------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------


def eval_index(expr, env):
    return eval(expr, {"__builtins__": {}}, env)   # e.g. "oh * strides[0] + kh"


def complete_sizes(k, dimval, attrs, slack):
    """Size symbols from the dim extents: a dim's extent symbol is its
    value; a symbol an index expression must stay below is the expression's
    maximum over the domain + 1 (+ slack)."""
    sizes = {s: int(s) for t in k.tensors for s in t.syms if s.isdigit()}   # constant extents
    for comp in k.comps:
        for name, _, sym in comp.dims:
            if sym in sizes and sizes[sym] != dimval[(comp.index, name)]:
                raise ValueError("dims sharing %s got different extents" % sym)
            sizes[sym] = dimval[(comp.index, name)]
    need = {}
    for comp in k.comps:
        ext = {name: dimval[(comp.index, name)] for name in comp.dim_names}
        empty = any(v == 0 for v in ext.values())
        for expr, sym in comp.requires:
            if sym in sizes:
                continue
            if empty:
                need.setdefault(sym, 0)
                continue
            used = [d for d in comp.dim_names if re.search(r"\b%s\b" % d, expr)]
            best = 0
            for corner in itertools.product(*[(0, ext[d] - 1) for d in used]):
                env = dict(attrs)
                env.update({d: 0 for d in comp.dim_names})
                env.update(dict(zip(used, corner)))
                best = max(best, eval_index(expr, env) + 1)
            need[sym] = max(need.get(sym, 0), best)
    for sym, v in need.items():
        sizes[sym] = v + slack
    for sym in k.sizes:
        if sym not in sizes:
            raise ValueError("cannot size symbol %s" % sym)
    return sizes


def shrink(vals, budget, keep_min=1):
    """Shrink the largest values until the product fits the budget."""
    vals = dict(vals)
    while prod(vals.values()) > budget:
        key = max(vals, key=lambda x: vals[x])
        if vals[key] <= keep_min:
            break
        vals[key] = max(keep_min, (vals[key] * 2) // 3 | 1)
    return vals


def make_shapes(k, seed):
    """[(label, sizes dict, attrs dict)]"""
    rng = random.Random("%s:shapes:%s" % (seed, k.name))
    alldims = [(c.index, d, kind) for c in k.comps for d, kind, _ in c.dims]
    classes = [
        ("ones", lambda kind: 1, None, 0),
        ("tiny", lambda kind: rng.choice([1, 2, 3]), None, 1),
        ("primes", lambda kind: rng.choice([5, 7, 11, 13]), PRIME_BUDGET, 0),
        ("large", lambda kind: rng.choice([37, 41, 67, 100] if kind == "parallel"
                                          else [17, 19, 23, 33]), LARGE_BUDGET, 2),
        ("empty", lambda kind: rng.choice([2, 3, 5]), None, 0),
    ]
    shapes = []
    for label, pick, budget, slack in classes:
        dimval = {(ci, d): pick(kind) for ci, d, kind in alldims}
        fixed = {(c.index, d): int(sym) for c in k.comps for d, _, sym in c.dims if sym.isdigit()}
        if label == "tiny" and dimval and max(dimval.values()) == 1:
            dimval[rng.choice(sorted(dimval))] = 2      # not the same as "ones"
        if label == "empty":
            if not dimval:
                continue
            free = sorted(set(dimval) - set(fixed))
            if not free:
                continue
            dimval[rng.choice(free)] = 0
        if budget:
            dimval = shrink(dimval, budget, keep_min=2 if label == "large" else 1)
        dimval.update(fixed)
        # dims sharing an extent symbol must agree: the first one wins
        for comp in k.comps:
            for name, _, sym in comp.dims:
                for c2 in k.comps:
                    for n2, _, s2 in c2.dims:
                        if s2 == sym:
                            dimval[(c2.index, n2)] = dimval[(comp.index, name)]
        attrs = {a: [rng.randint(1, 3) if label != "ones" else rng.choice([1, 2])
                     for _ in range(n)] for a, n in k.attrs}
        sizes = complete_sizes(k, dimval, attrs, slack)
        shapes.append((label, sizes, attrs))
    return shapes


def fmt_shape(k, sizes, attrs):
    s = ",".join("%s=%d" % (x, sizes[x]) for x in k.sizes)
    for a, _ in k.attrs:
        s += ";%s=[%s]" % (a, ",".join(str(x) for x in attrs[a]))
    return s or "scalar"


def make_data(k, sizes, rng):
    arrays = []
    for t in k.tensors:
        shp = tuple(sizes[s] for s in t.syms)
        if t.ty.startswith("f"):
            lo, hi = (-8, 8) if t.is_out else (-3, 3)
            a = rng.integers(lo, hi + 1, size=shp).astype(NPTYPE[t.ty])
        elif t.is_out:
            a = rng.integers(-100000, 100001, size=shp).astype(NPTYPE[t.ty])
        else:
            lo, hi = INT_RANGE[t.ty]
            if t.ty.startswith("u"):  # up to 2^64 - 1, beyond int64's integers
                a = rng.integers(lo, hi, size=shp, dtype=NPTYPE[t.ty], endpoint=True)
            else:
                a = rng.integers(lo, hi + 1, size=shp).astype(NPTYPE[t.ty])
        arrays.append(a)
    return arrays


def exactness_ok(k, sizes):
    """Every partial sum stays an integer below 2^24 (see Exact mode)."""
    for c in k.comps:
        r = prod(sizes[s] for _, kind, s in c.dims if kind == "reduction")
        if 9 * r + 8 >= 2 ** 24:
            return False
    return True


# ---------------------------------------------------------------------------
# The C driver
# ---------------------------------------------------------------------------

DRIVER_PRELUDE = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Guard zones around every tensor (a byte per tensor); -DGUARD=0 under
   ASan, which then sees exact-size buffers. */
#ifndef GUARD
#define GUARD 64
#endif
#define GUARD_BYTE(idx) ((unsigned char)(0xA5 + 16 * (idx)))
static const size_t guard = GUARD;

typedef void (*call_fn)(void **t, const int64_t *s, const int64_t *const *a);

struct buf {
  unsigned char *base; /* GUARD bytes, n bytes of data, GUARD bytes */
  unsigned char *init; /* the data as loaded */
  size_t n;
};

static void *xmalloc(size_t n) {
  void *p = malloc(n); /* exact size: ASan sees even zero-size overruns */
  if (!p) p = malloc(1);
  if (!p) { fprintf(stderr, "out of memory\n"); exit(2); }
  return p;
}

static int load(const char *dir, int idx, struct buf *b) {
  char path[4096];
  FILE *f;
  long len;
  snprintf(path, sizeof path, "%s/t%d.bin", dir, idx);
  f = fopen(path, "rb");
  if (!f) { perror(path); return 1; }
  if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    perror(path); fclose(f); return 1;
  }
  b->n = (size_t)len;
  b->base = xmalloc(b->n + 2 * guard);
  b->init = xmalloc(b->n);
  if (b->n && fread(b->init, 1, b->n, f) != b->n) { perror(path); fclose(f); return 1; }
  fclose(f);
  return 0;
}

static void reset(struct buf *b, int idx) {
  memset(b->base, GUARD_BYTE(idx), guard);
  memset(b->base + guard + b->n, GUARD_BYTE(idx), guard);
  if (b->n) memcpy(b->base + guard, b->init, b->n);
}

/* "" if the guards and inputs are intact, else what is wrong. */
static const char *check(struct buf *b, int nt, int nin, char *msg, size_t len) {
  int i;
  size_t j;
  for (i = 0; i < nt; i++)
    for (j = 0; j < guard; j++) {
      if (b[i].base[j] != GUARD_BYTE(i)) {
        snprintf(msg, len, "wrote %u bytes before tensor %d", (unsigned)(guard - j), i);
        return msg;
      }
      if (b[i].base[guard + b[i].n + j] != GUARD_BYTE(i)) {
        snprintf(msg, len, "wrote past the end of tensor %d", i);
        return msg;
      }
    }
  for (i = 0; i < nin; i++)
    if (b[i].n && memcmp(b[i].init, b[i].base + guard, b[i].n) != 0) {
      snprintf(msg, len, "modified input tensor %d", i);
      return msg;
    }
  return "";
}

static void print_elem(char *out, size_t len, int kind, int size, const unsigned char *p) {
  if (kind == 0 && size == 4) { float x; memcpy(&x, p, 4); snprintf(out, len, "%.9g", (double)x); }
  else if (kind == 0) { double x; memcpy(&x, p, 8); snprintf(out, len, "%.17g", x); }
  else if (size == 1) { int8_t x; memcpy(&x, p, 1); snprintf(out, len, "%d", (int)x); }
  else if (size == 2) { int16_t x; memcpy(&x, p, 2); snprintf(out, len, "%d", (int)x); }
  else if (size == 4) { int32_t x; memcpy(&x, p, 4); snprintf(out, len, "%ld", (long)x); }
  else { int64_t x; memcpy(&x, p, 8); snprintf(out, len, "%lld", (long long)x); }
}

static void set_threads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

static int max_threads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}
"""

DRIVER_MAIN = r"""
static int read_ints(const char *dir, int64_t *v, int n) {
  char path[4096];
  FILE *f;
  int i;
  snprintf(path, sizeof path, "%s/ints", dir);
  f = fopen(path, "r");
  if (!f) { perror(path); return 1; }
  for (i = 0; i < n; i++) {
    long long x;
    if (fscanf(f, "%lld", &x) != 1) { fprintf(stderr, "%s: expected %d integers\n", path, n); fclose(f); return 1; }
    v[i] = (int64_t)x;
  }
  fclose(f);
  return 0;
}

/* driver VARIANTS REFDIR CASEDIR...
   VARIANTS: comma-separated variant indices to run (NV: the canary).  For every case: the
   reference (variant 0 at one thread) is written to REFDIR/<case>.ref
   (REFDIR "-": not written), then every listed variant runs at the
   OMP_NUM_THREADS setting and is compared with it byte for byte. */
int main(int argc, char **argv) {
  int want[NV + 1];
  int c, i, v, threads;
  char *list, *tok;
  memset(want, 0, sizeof want);
  if (argc < 3) { fprintf(stderr, "usage: %s VARIANTS REFDIR CASEDIR...\n", argv[0]); return 2; }
  list = argv[1];
  for (tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
    v = atoi(tok);
    if (v < 0 || v > NV) { fprintf(stderr, "bad variant %s\n", tok); return 2; }
    want[v] = 1;
  }
  if (!calls[0]) { fprintf(stderr, "the reference variant is not linked\n"); return 2; }
  threads = max_threads();
  for (c = 3; c < argc; c++) {
    const char *dir = argv[c];
    const char *cname = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    struct buf b[NT];
    void *t[NT];
    unsigned char *ref[NT];
    int64_t ints[NINTS + 1];
    const int64_t *attrs[NATTRS + 1];
    char msg[512];
    if (read_ints(dir, ints, NINTS)) return 2;
    for (i = 0; i < NATTRS; i++) attrs[i] = ints + attr_offset[i];
    for (i = 0; i < NT; i++) {
      if (load(dir, i, &b[i])) return 2;
      t[i] = b[i].base + guard;
    }
    /* the reference */
    for (i = 0; i < NT; i++) reset(&b[i], i);
    printf("@ %s ref\n", cname);
    fflush(stdout);
    set_threads(1);
    calls[0](t, ints, attrs);
    set_threads(threads);
    if (*check(b, NT, NIN, msg, sizeof msg)) {
      printf("R %s ref FAIL %s\n", cname, msg);
      return 1;
    }
    for (i = NIN; i < NT; i++) {
      ref[i] = xmalloc(b[i].n);
      if (b[i].n) memcpy(ref[i], b[i].base + guard, b[i].n);
    }
    if (strcmp(argv[2], "-") != 0) {
      char path[4096];
      FILE *f;
      snprintf(path, sizeof path, "%s/%s.ref", argv[2], cname);
      f = fopen(path, "wb");
      if (!f) { perror(path); return 2; }
      for (i = NIN; i < NT; i++)
        if (b[i].n && fwrite(ref[i], 1, b[i].n, f) != b[i].n) { perror(path); return 2; }
      if (fclose(f) != 0) { perror(path); return 2; }
    }
    for (v = 0; v <= NV; v++) {
      const char *bad;
      if (!want[v]) continue;
      if (v < NV && !calls[v]) { printf("R %s %d FAIL not linked\n", cname, v); continue; }
      for (i = 0; i < NT; i++) reset(&b[i], i);
      printf("@ %s %d\n", cname, v);
      fflush(stdout);
      if (v < NV) {
        calls[v](t, ints, attrs);
      } else {
        /* the canary: none, then one bit of the last output element
           flipped; the comparison must notice */
        calls[0](t, ints, attrs);
        for (i = NT - 1; i >= NIN; i--)
          if (b[i].n) {
            b[i].base[guard + b[i].n - (size_t)elem_size[i]] ^= 1;
            break;
          }
      }
      bad = check(b, NT, NIN, msg, sizeof msg);
      if (*bad) { printf("R %s %d FAIL %s\n", cname, v, bad); continue; }
      for (i = NIN; i < NT; i++) {
        size_t n = b[i].n / (size_t)elem_size[i], e, first = 0, nbad = 0;
        const unsigned char *got = b[i].base + guard;
        for (e = 0; e < n; e++)
          if (memcmp(got + e * elem_size[i], ref[i] + e * elem_size[i], (size_t)elem_size[i]) != 0) {
            if (!nbad) first = e;
            nbad++;
          }
        if (nbad) {
          char g[64], w[64];
          print_elem(g, sizeof g, elem_kind[i], elem_size[i], got + first * elem_size[i]);
          print_elem(w, sizeof w, elem_kind[i], elem_size[i], ref[i] + first * elem_size[i]);
          snprintf(msg, sizeof msg, "%s: %lu of %lu elements differ, first at flat index %lu: got %s, want %s",
                   tensor_name[i], (unsigned long)nbad, (unsigned long)n, (unsigned long)first, g, w);
          break;
        }
      }
      printf("R %s %d %s%s\n", cname, v, i < NT ? "FAIL " : "OK", i < NT ? msg : "");
    }
    for (i = 0; i < NT; i++) {
      free(b[i].base);
      free(b[i].init);
      if (i >= NIN) free(ref[i]);
    }
  }
  return 0;
}
"""


def driver_source(k, variants):
    nt = len(k.tensors)
    lines = ["/* Generated by tests/schedules/run_schedules.py: every schedule "
             "variant of %s. */" % k.name, DRIVER_PRELUDE]
    for vi in range(len(variants)):
        lines.append("#ifdef HAVE_V%d\n#include \"v%d.h\"\n#endif" % (vi, vi))
    lines.append("#define NV %d" % len(variants))
    lines.append("#define NT %d" % nt)
    lines.append("#define NIN %d" % len(k.ins))
    nattr_vals = sum(n for _, n in k.attrs)
    lines.append("#define NINTS %d" % (len(k.sizes) + nattr_vals))
    lines.append("#define NATTRS %d" % len(k.attrs))
    offs, o = [], len(k.sizes)
    for _, n in k.attrs:
        offs.append(o)
        o += n
    lines.append("static const int attr_offset[NATTRS + 1] = {%s};" %
                 ", ".join(str(x) for x in offs + [0]))
    lines.append("static const int elem_size[NT] = {%s};" % ", ".join(
        str(np.dtype(NPTYPE[t.ty]).itemsize) for t in k.tensors))
    lines.append("static const int elem_kind[NT] = {%s};" % ", ".join(
        "0" if t.ty.startswith("f") else "1" for t in k.tensors))
    lines.append("static const char *const tensor_name[NT] = {%s};" % ", ".join(
        '"%s"' % t.name for t in k.tensors))
    for vi in range(len(variants)):
        args = []
        for ti, t in enumerate(k.tensors):
            args.append("(%s%s *)t[%d]" % ("" if t.is_out else "const ", CTYPE[t.ty], ti))
        args += ["s[%d]" % i for i in range(len(k.sizes))]
        args += ["a[%d]" % i for i in range(len(k.attrs))]
        lines.append("#ifdef HAVE_V%d" % vi)
        lines.append("static void call_v%d(void **t, const int64_t *s, const int64_t *const *a) {" % vi)
        lines.append("  (void)t; (void)s; (void)a;")
        lines.append("  v%d_%s(%s);" % (vi, k.name, ", ".join(args)))
        lines.append("}")
        lines.append("#endif")
    lines.append("static const call_fn calls[NV] = {")
    for vi in range(len(variants)):
        lines.append("#ifdef HAVE_V%d\n  call_v%d,\n#else\n  0,\n#endif" % (vi, vi))
    lines.append("};")
    lines.append(DRIVER_MAIN)
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Per-op work
# ---------------------------------------------------------------------------


class Results:
    def __init__(self):
        self.lock = threading.Lock()
        self.passed = self.failed = self.xfail = self.xpass = 0
        self.failures = []    # (kind, key, config, detail) for --print-xfail
        self.apply_xfail = True

    def report(self, ok, what, detail="", bug=None, sink=None, key=None):
        """One case line (details, if any, as notes below it).  `bug`: the
        known bug this case is listed under.  Lines go to `sink` (a list) if
        given, else to stdout."""
        if not self.apply_xfail:
            bug = None
        word = "PASS" if ok else "FAIL"
        if bug:
            desc, sig = BUGS[bug]
            if ok:
                word = "XPASS"
                detail = "listed as failing with lgen bug %s; remove it from the XFAIL list" % bug
            elif re.search(sig, detail):
                word = "XFAIL"
            else:
                detail += "\n(listed under lgen bug %s, but this is a different failure)" % bug
        with self.lock:
            if word == "PASS":
                self.passed += 1
            elif word == "XFAIL":
                self.xfail += 1
            else:
                self.failed += 1
                if word == "FAIL" and key:
                    self.failures.append(key + (detail,))
        lines = ["%s %s" % (word, what)]
        if word == "XFAIL":
            lines.append("#   known lgen bug %s" % bug)
        elif detail:
            lines += ["#   " + x for x in head(detail, 40).split("\n")]
        if sink is not None:
            sink.extend(lines)
        else:
            with print_lock:
                print("\n".join(lines))
                sys.stdout.flush()


def xfail_for(table, op, variant, config="*"):
    e = table.get((op, variant))
    if not e:
        return None
    return e.get(config) or e.get("*")


class OpWork:
    def __init__(self, k, variants, shapes, workdir):
        self.k = k
        self.variants = variants
        self.shapes = shapes
        self.dir = workdir
        self.generated = {}   # variant index -> True if its .c/.h exist
        self.case_dirs = []
        self.nonempty = {}    # case -> some output has elements
        self.lines = []       # report lines, printed in op order


def lgen_cmd(lgen, w, vi, v, out_c=None, out_h=None, extra=()):
    cmd = [lgen, os.path.join(w.dir, "op.tc"), "--prefix=v%d_" % vi]
    if v.mode == "none":
        cmd.append("--schedule=none")
    elif v.mode == "auto":
        cmd += ["--schedule=auto", "--target=" + v.target]
    else:
        cmd.append("--schedule=" + os.path.join(w.dir, "v%d.yaml" % vi))
    cmd += list(extra)
    if out_c:
        cmd += ["-o", out_c]
    if out_h:
        cmd += ["-H", out_h]
    return cmd


def same_files(pairs):
    for a, b in pairs:
        with open(a, "rb") as f1, open(b, "rb") as f2:
            if f1.read() != f2.read():
                return False
    return True


NO_EFFECT_WARNING = re.compile(r"^\S+:\d+:\d+: warning: (parallel|vector) '\w+(\.reg)?' has no effect: ")


def without_no_effect_warnings(err):
    """stderr less the warnings (each with its source line and caret) about
    `parallel:` and `vector:` names the nest cannot honour: random schedules
    legitimately ask for parallel loops that are not adjacent, or a vector
    dim whose loop is not innermost; anything else on stderr still fails the
    variant."""
    lines = err.split("\n")
    kept, i = [], 0
    while i < len(lines):
        if NO_EFFECT_WARNING.match(lines[i]):
            i += 3
            continue
        kept.append(lines[i])
        i += 1
    return "\n".join(kept)


def prepare_op(lgen, w, res, seed):
    """lgen every variant; the print-schedule round trip; the case data."""
    k = w.k
    for vi, v in enumerate(w.variants):
        what = "op=%s sched=%s lgen" % (k.name, v.name)
        if v.yaml:
            with open(os.path.join(w.dir, "v%d.yaml" % vi), "w") as f:
                f.write(v.yaml)
        c = os.path.join(w.dir, "v%d.c" % vi)
        h = os.path.join(w.dir, "v%d.h" % vi)
        cmd = lgen_cmd(lgen, w, vi, v, c, h)
        rc, out, err = run(cmd)
        err = without_no_effect_warnings(err)
        if rc != 0 or not os.path.isfile(c) or not os.path.isfile(h) or err.strip():
            res.report(False, what, "lgen %s on a legal schedule: %s\n%s%s" % (
                describe_rc(rc), quote(cmd), head(err),
                "\nschedule:\n" + v.yaml if v.yaml else ""),
                xfail_for(XFAIL_LGEN, k.name, v.name), w.lines, ("lgen", k.name, v.name, "*"))
            continue
        w.generated[vi] = True
        # --print-schedule, fed back as a schedule file, must give the same C
        # (and header); same basenames, so the #include lines agree
        pdir, rdir = os.path.join(w.dir, "printed"), os.path.join(w.dir, "roundtrip")
        for x in (pdir, rdir):
            os.makedirs(x, exist_ok=True)
        pc, ph = os.path.join(pdir, "v%d.c" % vi), os.path.join(pdir, "v%d.h" % vi)
        pcmd = lgen_cmd(lgen, w, vi, v, pc, ph, extra=["--print-schedule"])
        rc, printed, err = run(pcmd)
        problem = None
        if rc != 0:
            problem = "--print-schedule: lgen %s: %s\n%s" % (describe_rc(rc), quote(pcmd), head(err))
        elif not same_files([(pc, c), (ph, h)]):
            problem = "the C differs with --print-schedule: %s" % quote(pcmd)
        if problem is None:
            py = os.path.join(pdir, "v%d.yaml" % vi)
            with open(py, "w") as f:
                f.write(printed)
            rc_, rh = os.path.join(rdir, "v%d.c" % vi), os.path.join(rdir, "v%d.h" % vi)
            rcmd = [lgen, os.path.join(w.dir, "op.tc"), "--prefix=v%d_" % vi,
                    "--schedule=" + py, "-o", rc_, "-H", rh]
            if v.target:
                rcmd.append("--target=" + v.target)
            rc, _, err = run(rcmd)
            if rc != 0:
                problem = "the printed schedule is rejected: %s\n%s\nprinted:\n%s" % (
                    quote(rcmd), head(err), printed)
            elif not same_files([(rc_, c), (rh, h)]):
                problem = ("the printed schedule gives different C: %s vs %s\n"
                           "printed:\n%s" % (quote(rcmd), quote(cmd), printed))
        if problem and v.yaml:
            problem += "\nschedule:\n" + v.yaml
        res.report(problem is None, what, problem or "",
                   xfail_for(XFAIL_LGEN, k.name, v.name), w.lines, ("lgen", k.name, v.name, "*"))
    # the data, shared by every configuration
    for si, (label, sizes, attrs) in enumerate(w.shapes):
        cdir = os.path.join(w.dir, "case%d_%s" % (si, label))
        os.makedirs(cdir)
        rng = np.random.default_rng([seed & 0xffffffff, si, sum(map(ord, k.name))])
        for i, a in enumerate(make_data(k, sizes, rng)):
            a.tofile(os.path.join(cdir, "t%d.bin" % i))
        ints = [sizes[s] for s in k.sizes]
        for a, _ in k.attrs:
            ints += attrs[a]
        with open(os.path.join(cdir, "ints"), "w") as f:
            f.write(" ".join(str(x) for x in ints) + "\n")
        w.case_dirs.append(cdir)
        w.nonempty[os.path.basename(cdir)] = any(
            prod(sizes[x] for x in t.syms) > 0 for t in k.outs)
    with open(os.path.join(w.dir, "driver.c"), "w") as f:
        f.write(driver_source(k, w.variants))


def build_and_run(w, config, cc, res):
    """Compile every variant and the driver with one configuration, run the
    driver at each thread count.  Returns {variant: [problem strings],
    "canary": [problems]}; reports nothing itself."""
    cname, _, flags, threads = config
    bdir = os.path.join(w.dir, "build-" + cname)
    os.makedirs(bdir, exist_ok=True)
    problems = {vi: [] for vi in range(len(w.variants))}
    t_start = time.time()
    objs, have = [], []
    for vi in range(len(w.variants)):
        if vi not in w.generated:
            problems[vi].append("not generated")
            continue
        o = os.path.join(bdir, "v%d.o" % vi)
        cmd = [cc] + COMMON_FLAGS + flags + ["-c", os.path.join(w.dir, "v%d.c" % vi), "-o", o]
        rc, out, err = run(cmd, timeout=300)
        if rc != 0 or err.strip():
            problems[vi].append("compile %s: %s\n%s" % (describe_rc(rc), quote(cmd), head(err, 15)))
            continue
        objs.append(o)
        have.append(vi)
    if 0 not in have:
        for vi in problems:
            if not problems[vi]:
                problems[vi].append("the reference (none) did not build")
        return problems
    drv_o = os.path.join(bdir, "driver.o")
    cmd = [cc] + COMMON_FLAGS + flags + ["-I", w.dir] + ["-DHAVE_V%d" % vi for vi in have] + \
        ["-c", os.path.join(w.dir, "driver.c"), "-o", drv_o]
    rc, _, err = run(cmd, timeout=300)
    if rc != 0 or err.strip():
        # a header problem: find out which one
        for vi in have:
            one = [cc] + COMMON_FLAGS + flags + ["-I", w.dir, "-DHAVE_V0", "-DHAVE_V%d" % vi,
                                                 "-c", os.path.join(w.dir, "driver.c"),
                                                 "-o", os.path.join(bdir, "hdr.o")]
            rc1, _, err1 = run(one, timeout=300)
            if rc1 != 0 or err1.strip():
                problems[vi].append("driver (header v%d.h) compile %s: %s\n%s" % (
                    vi, describe_rc(rc1), quote(one), head(err1, 15)))
        bad = [vi for vi in have if problems[vi]]
        if 0 in bad or not bad:
            for vi in problems:
                if not problems[vi]:
                    problems[vi].append("driver compile %s: %s\n%s" % (describe_rc(rc), quote(cmd), head(err, 15)))
            return problems
        have = [vi for vi in have if vi not in bad]
        objs = [os.path.join(bdir, "v%d.o" % vi) for vi in have]
        cmd = cmd[:1] + [x for x in cmd[1:] if not (x.startswith("-DHAVE_V") and int(x[8:]) in bad)]
        rc, _, err = run(cmd, timeout=300)
        if rc != 0:
            for vi in problems:
                if not problems[vi]:
                    problems[vi].append("driver compile %s" % describe_rc(rc))
            return problems
    exe = os.path.join(bdir, "driver")
    libs = [FEATURES["cblas"]] if any(v.name.startswith("lib-") for v in w.variants) else []
    cmd = [cc] + flags + objs + [drv_o, "-o", exe, "-lm"] + libs
    rc, _, err = run(cmd, timeout=300)
    if rc != 0:
        for vi in problems:
            if not problems[vi]:
                problems[vi].append("link %s: %s\n%s" % (describe_rc(rc), quote(cmd), head(err)))
        return problems
    refdir = os.path.join(bdir, "ref")
    os.makedirs(refdir, exist_ok=True)
    t_built = time.time()
    canary = len(w.variants)     # the driver's self-check (see DRIVER_MAIN)
    canary_seen = {}
    for ti, nthreads in enumerate(threads or [None]):
        env = dict(os.environ)
        tag = ""
        if nthreads:
            env["OMP_NUM_THREADS"] = str(nthreads)
            env["OMP_WAIT_POLICY"] = "passive"   # 3 threads on 2 cores
            tag = " threads=%d" % nthreads
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
        env["OPENBLAS_NUM_THREADS"] = "1"
        pending = [vi for vi in have if not problems[vi]] + ([canary] if ti == 0 else [])
        first = True
        for _attempt in range(len(pending) + 1):
            if not pending:
                break
            cmd = [exe, ",".join(str(vi) for vi in pending),
                   refdir if first else "-"] + w.case_dirs
            rc, out, err = run(cmd, timeout=RUN_TIMEOUT, env=env)
            first = False
            done = {}
            last = None
            for line in out.split("\n"):
                p = line.split(" ", 3)
                if p[0] == "@" and len(p) >= 3:
                    last = (p[1], p[2])
                elif p[0] == "R" and len(p) >= 4:
                    case, v, verdict = p[1], p[2], p[3]
                    if v == "ref":
                        problems[0].append("reference at one thread: %s [%s]" % (verdict, case))
                    elif int(v) == canary:
                        canary_seen[case] = verdict
                    elif verdict != "OK":
                        done.setdefault(int(v), []).append("%s%s: %s" % (case, tag, verdict[5:]))
            for vi, msgs in done.items():
                problems[vi].append(msgs[0] + ("" if len(msgs) == 1 else
                                               " (and %d more shapes)" % (len(msgs) - 1)))
                problems[vi].append("rerun: OMP_NUM_THREADS=%s %s %d - %s" % (
                    nthreads or 1, exe, vi, os.path.join(w.dir, msgs[0].split(" ")[0].split(":")[0])))
            if rc == 0:
                break
            # a crash or a sanitizer report: blame the variant that was running
            if last is None or last[1] == "ref":
                culprit = 0
            else:
                culprit = int(last[1])
            if culprit == canary:
                culprit = 0
            if "LeakSanitizer" in err:
                # reported at exit: blame the kernels in the allocation stacks
                leakers = sorted(set(int(x) for x in re.findall(r" in v(\d+)_", err)))
                for vi in leakers or [0]:
                    if vi in problems:
                        problems[vi].append("%s: memory leak\n%s" % (tag.strip() or "run", head(err, 25)))
                break
            case = last[0] if last else "?"
            problems[culprit].append("%s%s: driver %s while running it%s\n%s\nrerun: %s" % (
                case, tag, describe_rc(rc), " (as the one-thread reference)"
                if last and last[1] == "ref" else "", head(err, 25),
                "OMP_NUM_THREADS=%s %s %d - %s" % (nthreads or 1, exe, culprit,
                                                   os.path.join(w.dir, case))))
            if culprit == 0:
                for vi in pending:
                    if vi != canary and not problems[vi]:
                        problems[vi].append("not run: the reference crashed")
                break
            pending = [vi for vi in pending if vi != culprit and
                       (vi == canary or not problems[vi])]
    problems["canary"] = []
    TIMES.append((cname, t_built - t_start, time.time() - t_built))
    if problems[0] and not canary_seen:
        return problems
    for cdir in w.case_dirs:
        case = os.path.basename(cdir)
        want_fail = w.nonempty[case]
        got = canary_seen.get(case)
        if got is None or got.startswith("FAIL") != want_fail:
            problems["canary"].append(
                "self-check: a flipped output bit in case %s was %s" % (
                    case, "not run" if got is None else
                    "not noticed" if want_fail else "reported for an empty output"))
    return problems


def compare_refs(w, configs):
    """The none results of every configuration must agree."""
    first = None
    for cname in configs:
        refdir = os.path.join(w.dir, "build-" + cname, "ref")
        if not os.path.isdir(refdir):
            continue
        for cdir in w.case_dirs:
            p = os.path.join(refdir, os.path.basename(cdir) + ".ref")
            if not os.path.exists(p):
                continue
            with open(p, "rb") as f:
                data = f.read()
            key = os.path.basename(cdir)
            if first is None:
                first = {}
            if key not in first:
                first[key] = (cname, data)
            elif first[key][1] != data:
                return "case %s: none's output with %s differs from %s" % (
                    key, cname, first[key][0])
    return None


# ---------------------------------------------------------------------------
# Invalid schedules
# ---------------------------------------------------------------------------

# (name, schedule text, line, col, message substring).  All against the
# whole specs/linalg.tc.
ERROR_CASES = [
    ("tile-zero", "matmul:\n  tile: {m: [0]}\n", 2, 14, "must be a positive size"),
    ("tile-negative", "matmul:\n  tile: {m: [-4]}\n", 2, 14, "must be a positive size"),
    ("tile-zero-inner-level", "matmul:\n  tile: {n: [8], m: [16, 0]}\n", 2, 26,
     "must be a positive size"),
    ("tile-not-integer", "matmul:\n  tile: {m: [x]}\n", 2, 14, "expected an integer"),
    ("tile-four-levels", "matmul:\n  tile: {m: [8, 4, 2, 1]}\n", 2, 13, "tile levels"),
    ("tile-grows", "matmul:\n  tile: {m: [4, 8]}\n", 1, 1, "must not grow"),
    ("tile-unknown-dim", "matmul:\n  tile: {m: [4], q: [8]}\n", 2, 18, "unknown dim 'q'"),
    ("order-unknown-dim", "matvec:\n  order: [m, k]\n", 2, 14, "unknown dim 'k'"),
    ("unroll-unknown-dim", "matmul:\n  unroll: {x: 4}\n", 2, 12, "unknown dim 'x'"),
    ("parallel-unknown-dim", "conv_2d:\n  parallel: [oh, h]\n", 2, 18, "unknown dim 'h'"),
    ("pack-unknown-tensor", "matmul:\n  pack: [A, Z]\n", 2, 13, "unknown tensor 'Z'"),
    ("pack-output", "matmul:\n  pack: [C]\n", 2, 10, "cannot be packed"),
    ("pack-compound-index", "conv_1d_nwc_wcf:\n  pack: [K, I]\n", 2, 13, "cannot be packed"),
    ("pack-shape-only", "pooling_nhwc_max:\n  pack: [K]\n", 2, 10, "cannot be packed"),
    ("parallel-reduction", "matmul:\n  parallel: [m, k]\n", 1, 1, "split_reduction: true"),
    ("parallel-reduction-split-false",
     "dot:\n  parallel: [m]\n  split_reduction: false\n", 1, 1, "split_reduction: true"),
    ("split-with-unroll",
     "matmul:\n  unroll: {m: 2}\n  parallel: [k]\n  split_reduction: true\n", 1, 1,
     "cannot be combined with unroll"),
    ("split-integer-sum", "matmul_i8_i8_i32:\n  parallel: [k]\n  split_reduction: true\n",
     1, 1, "cannot be split"),
    ("parallel-reg-not-unrolled", "matmul:\n  parallel: [n.reg]\n", 1, 1,
     "names a register-tile loop", "reg"),
    ("parallel-reg-reduction", "matmul:\n  parallel: [k.reg]\n", 1, 1,
     "names a register-tile loop", "reg"),
    ("parallel-reg-unknown-dim", "matmul:\n  parallel: [q.reg]\n", 2, 14, "unknown dim", "reg"),
    ("split-not-boolean", "dot:\n  split_reduction: maybe\n", 2, 20, "true or false"),
    ("unroll-reduction", "matmul:\n  unroll: {n: 4, k: 2}\n", 2, 18, "'k' is a reduction"),
    ("collapse-not-contiguous", "matmul:\n  collapse: [[m, n]]\n", 2, 18, "cannot collapse 'n' into 'm'"),
    ("collapse-two-kinds", "matmul:\n  collapse: [[n, k]]\n", 2, 18, "one iterator kind"),
    ("collapse-flat-list", "matmul:\n  collapse: [m, n]\n", 2, 14, "two or more dims"),
    ("collapse-dim-twice", "add_4d:\n  collapse: [[n, h], [h, w]]\n", 2, 23, "already in a collapsed group"),
    ("collapse-unknown-dim", "matmul:\n  collapse: [[m, q]]\n", 2, 18, "unknown dim 'q'"),
    ("collapsed-dim-named", "add_4d:\n  collapse: [[n, h]]\n  tile: {h: [4]}\n", 3, 10,
     "collapsed into 'n'"),
    ("fold-not-unit", "matmul:\n  fold: [m]\n", 2, 10, "cannot be folded"),
    ("partials-parallel-vector", "matmul:\n  vector: n\n  partials: 4\n", 1, 1, "reduction dim as the vector dim"),
    ("partials-max", "pooling_nhwc_max:\n  vector: kw\n  partials: 4\n", 1, 1, "sum or product"),
    ("partials-zero", "matvec:\n  partials: 0\n", 2, 13, "must be a positive size"),
    ("partials-with-unroll", "matmul:\n  unroll: {m: 2}\n  vector: k\n  partials: 4\n", 1, 1,
     "cannot be combined with unroll"),
    ("folded-dim-named", "unit_gemm:\n  fold: [u]\n  parallel: [u]\n", 3, 14, "folded away"),
    ("unroll-too-large", "matmul:\n  unroll: {m: 65}\n", 2, 12, "at most 64"),
    ("unroll-not-dividing-tile", "matmul:\n  tile: {m: [12]}\n  unroll: {m: 8}\n", 1, 1,
     "multiples of its unroll factor"),
    ("unroll-zero", "matmul:\n  unroll: {m: 0}\n", 2, 15, "must be a positive size"),
    ("order-duplicate", "matmul:\n  order: [m, n, m]\n", 2, 17, "appears twice"),
    ("unknown-key", "matmul:\n  tile: {m: [4]}\n  tiles: {n: [4]}\n", 3, 3,
     "unknown schedule key 'tiles'"),
    ("malformed-yaml-unclosed", "matmul:\n  tile: {m: [4]\n  order: [m]\n", 3, 3,
     "did not find expected ',' or '}'"),
    ("malformed-yaml-indent", "matmul:\n  tile: {m: [4]}\n    order: [m]\n", 3, 5,
     "did not find expected key"),
    ("malformed-yaml-tab", "matmul:\n\ttile: {m: [4]}\n", 2, 1, ""),
    ("unknown-def", "copy:\n  parallel: [n]\nmatmull:\n  tile: {m: [4]}\n", 3, 1,
     "no op named 'matmull'"),
    ("op-index-out-of-range", "matmul:\n  - op: 0\n    tile: {m: [4]}\n  - op: 1\n"
     "    tile: {m: [4]}\n", 4, 5, "no op 1"),
    ("not-a-mapping-root", "- matmul\n", 1, 1, "maps op names to decisions"),
    ("decisions-not-a-mapping", "matmul: 4\n", 1, 9, "expected the decisions"),
    ("comprehension-not-a-mapping", "matmul: [4]\n", 1, 10, "expected the decisions"),
    ("order-not-a-list", "matmul:\n  order: m\n", 2, 10, "takes a list of names"),
    ("tile-not-a-mapping", "matmul:\n  tile: [4]\n", 2, 9, "takes a mapping"),
    ("vector-unknown-dim", "matmul:\n  vector: q\n", 2, 11, "unknown dim 'q'"),
    ("later-def-error", "copy:\n  tile: {n: [8]}\ntranspose:\n  order: [n, m]\n"
     "matmul:\n  pack: [A]\n  tile: {k: [0]}\n", 7, 14, "must be a positive size"),
    # what each key takes (src/schedule/yaml.c), checked as the file is read
    ("vector-not-a-scalar", "matmul:\n  vector: [n]\n", 2, 11, "expected a single value"),
    ("partials-empty", "matvec:\n  partials: ''\n", 2, 13, "expected an integer, found ''"),
    ("partials-too-large", "matvec:\n  partials: 2000\n", 2, 13, "partials must be between 1 and 1024"),
    ("tile-too-large", "matmul:\n  tile: {m: [2000000000000]}\n", 2, 14,
     "'2000000000000' must be a positive size"),
    ("tile-no-levels", "matmul:\n  tile: {m: []}\n", 2, 13, "between 1 and 3 tile levels, please (m)"),
    ("tile-dim-not-a-name", "matmul:\n  tile: {[m]: 4}\n", 2, 10, "expected a dim name"),
    ("unroll-levels", "matmul:\n  unroll: {m: [2]}\n", 2, 15, "expected an integer"),
    ("order-item-not-a-name", "matmul:\n  order: [[m]]\n", 2, 11, "expected a name"),
    ("parallel-long-unknown-dim", "matmul:\n  parallel: [mnop]\n", 2, 14,
     "unknown dim 'mnop' (the op's dims are: m, n, k)"),
    ("collapse-not-a-list", "matmul:\n  collapse: m\n", 2, 13,
     "'collapse' takes a list of dim lists, like [[m, n]]"),
    ("collapse-one-dim", "matmul:\n  collapse: [[m]]\n", 2, 14,
     "each group of 'collapse' is a list of two or more dims, like [m, n]"),
    ("collapse-item-not-a-name", "matmul:\n  collapse: [[m, [n]]]\n", 2, 18, "expected a dim name"),
    ("fuse-not-a-mapping", "matmul:\n  fuse: h\n", 2, 9,
     "'fuse' maps intermediates to inline or keep, like {h: keep}"),
    ("fuse-bad-choice", "matmul:\n  fuse: {h: maybe}\n", 2, 13, "expected inline or keep, found 'maybe'"),
    ("fuse-name-not-a-scalar", "matmul:\n  fuse: {[h]: keep}\n", 2, 10, "expected an intermediate's name"),
    ("fuse-choice-not-a-scalar", "matmul:\n  fuse: {h: [keep]}\n", 2, 13, "expected inline or keep"),
    ("algorithm-not-a-mapping", "matmul:\n  algorithm: [y]\n", 2, 14,
     "'algorithm' maps conv outputs to direct, im2col, winograd or winograd6, like {y: winograd}"),
    ("algorithm-bad-choice", "matmul:\n  algorithm: {y: fft}\n", 2, 18,
     "expected direct, im2col, winograd or winograd6, found 'fft'"),
    ("layout-bad", "matmul:\n  layout: nchw\n", 2, 11, "expected channels_last or given, found 'nchw'"),
    ("layout-not-a-scalar", "matmul:\n  layout: [given]\n", 2, 11, "expected channels_last or given"),
    ("op-not-a-number", "matmul:\n  - op: x\n", 2, 9, "expected a comprehension number, found 'x'"),
    ("op-negative", "matmul:\n  - op: -1\n", 2, 9, "expected a comprehension number, found '-1'"),
    ("op-too-large", "matmul:\n  - op: 1001\n", 2, 9, "expected a comprehension number, found '1001'"),
    ("op-empty", "matmul:\n  - op: ''\n", 2, 9, "expected a comprehension number, found ''"),
    ("libcall-then-outline", "matmul:\n  libcall: f\n  outline: g\n", 3, 3,
     "one outline or libcall per op (this one has 'libcall' already)"),
    # C identifiers that start with a capital or _, or hold digits, pass the
    # reader; then outline is for graphs only
    ("outline-capital-on-a-def", "matmul:\n  outline: Fast\n", 2, 12,
     "outline applies to a model graph's ops; 'matmul' is a def of a spec"),
    ("outline-underscore-on-a-def", "matmul:\n  outline: _f9\n", 2, 12, "outline applies to a model graph's ops"),
    ("libcall-mixed-on-a-def", "matmul:\n  libcall: aZ9_\n", 2, 12, "libcall applies to a model graph's ops"),
    ("key-not-a-scalar", "matmul:\n  ? [a]\n  : 1\n", 2, 5, "expected a key"),
    ("op-name-not-a-scalar", "[matmul]: {}\n", 1, 1, "expected an op name"),
    # locations after other line breaks and multi-byte characters: lines as
    # lgen counts them (LF, CR, CRLF; libyaml's NEL, LS and PS break no line
    # there), columns in bytes (src/schedule/yaml.c's mark_offset)
    ("crlf", "matmul:\r\n  tile: {m: [4]}\r\n  order: [m, q]\r\n", 3, 14, "unknown dim 'q'"),
    ("cr", "matmul:\r  tile: {m: [4]}\r  order: [m, q]\r", 3, 14, "unknown dim 'q'"),
    ("bom", "\ufeffmatmul:\n  tile: {m: [0]}\n", 2, 14, "must be a positive size"),
    ("bom-first-line", "\ufeffmatmul: 4\n", 1, 12, "expected the decisions"),
    ("nel", "matmul:\x85  tile: {m: [0]}\n", 1, 23, "must be a positive size"),
    ("line-separator", "matmul:\u2028  tile: {m: [0]}\n", 1, 24, "must be a positive size"),
    ("paragraph-separator", "matmul:\u2029  tile: {m: [0]}\n", 1, 24, "must be a positive size"),
    ("multibyte-before", "matmul:\n  tile: {\"\u00e9\u00e9\": [4], m: [0]}\n", 2, 27, "must be a positive size"),
    ("multibyte-key", "matmul:\n  tile: {m: [4]}\n  \u00e9t\u00e9: [m]\n", 3, 3,
     "unknown schedule key '\u00e9t\u00e9'"),
    ("no-final-newline", "matmul:\n  tile: {m: [0]}", 2, 14, "must be a positive size"),
    # checks of the whole decision set (src/schedule/schedule.c), at the op's name
    ("library-call-unknown", "matmul:\n  library_call: cblas_foo\n", 1, 1,
     "unknown library call 'cblas_foo' (lgen knows cblas_sgemm and cblas_dgemm)"),
    ("library-call-not-a-gemm", "copy:\n  library_call: cblas_sgemm\n", 1, 1,
     "cblas_sgemm computes C[m][n] += A * B on f32 matrices; this op is not of that form"),
    ("split-with-tiled-parallel", "matmul:\n  parallel: [k]\n  split_reduction: true\n  tile: {m: [4]}\n", 1, 1,
     "a split reduction ('k') needs the parallel dims untiled ('m' is tiled)"),
    ("register-block-too-large", "matmul:\n  unroll: {m: 64, n: 64}\n", 1, 1,
     "the register block is too large (at most 3 dims and 1024 elements)"),
]

# Schedule files that must be read as another one is: the same C.
# (name, schedule text, the other text, or None for no --schedule)
SAME_CASES = [
    ("empty-file-is-auto", "", None),
    ("comment-only-is-auto", "# no decisions\n", None),
    ("crlf", "matmul:\r\n  tile: {m: [4]}\r\n  vector: none\r\n", "matmul:\n  tile: {m: [4]}\n  vector: none\n"),
    ("cr", "matmul:\r  tile: {m: [4]}\r", "matmul:\n  tile: {m: [4]}\n"),
    ("bom", "\ufeffmatmul:\n  tile: {m: [4]}\n", "matmul:\n  tile: {m: [4]}\n"),
    ("order-unlisted-dims-follow", "matmul:\n  order: [n]\n", "matmul:\n  order: [n, m, k]\n"),
    ("op-0-entry", "matmul:\n  - op: 0\n    tile: {m: [4]}\n", "matmul:\n  tile: {m: [4]}\n"),
    ("collapse-groups-in-any-order", "add_4d:\n  collapse: [[n, h], [w, c]]\n",
     "add_4d:\n  collapse: [[w, c], [n, h]]\n"),
    ("layout-and-algorithm-leave-a-def", "matmul:\n  layout: given\n  algorithm: {y: im2col}\n", None),
]

# Locations are pinned where lgen reports them today.  Checks that
# schedule_verify and the split_reduction check make after reading all of an
# op's decisions point at the op's name (1:1), by design (schedule.h).


def check_error_case(lgen, spec, workdir, case, res):
    name, text, line, col, sub = case[:5]
    if len(case) > 5 and not FEATURES.get(case[5]):
        note("SKIP error=%s: lgen does not support %s" % (name, case[5]))
        return
    d = os.path.join(workdir, "err-" + name)
    os.makedirs(d)
    ypath = os.path.join(d, "sched.yaml")
    with open(ypath, "wb") as f:
        f.write(text.encode("utf-8"))
    out_c, out_h = os.path.join(d, "out.c"), os.path.join(d, "out.h")
    problems = []
    for sentinel in (False, True):
        if sentinel:
            for p in (out_c, out_h):
                with open(p, "w") as f:
                    f.write("sentinel\n")
        cmd = [lgen, spec, "--schedule=" + ypath, "-o", out_c, "-H", out_h]
        rc, out, err = run(cmd, timeout=10)
        if rc != 1:
            problems.append("exit status %s, want 1" % describe_rc(rc))
        if out:
            problems.append("stdout is not empty: %r" % out[:200])
        lines = err.split("\n")
        m = re.match(r"^(.*):(\d+):(\d+): error: (.+)$", lines[0])
        if not m:
            problems.append("stderr does not start with FILE:LINE:COL: error: ...: %r" % err[:300])
        else:
            if m.group(1) != ypath:
                problems.append("error names %s, not the schedule file" % m.group(1))
            if (int(m.group(2)), int(m.group(3))) != (line, col):
                problems.append("error at %s:%s, want %d:%d: %s" % (
                    m.group(2), m.group(3), line, col, lines[0]))
            if sub not in m.group(4):
                problems.append("message %r lacks %r" % (m.group(4), sub))
            # lines as lgen counts them (LF, CR, CRLF, LFCR), columns in bytes
            src_lines = re.split(rb"\r\n|\n\r|\r|\n", text.encode("utf-8"))
            l = int(m.group(2))
            if l - 1 < len(src_lines) and len(lines) >= 3:
                want_src = src_lines[l - 1].decode("utf-8", errors="replace")
                if lines[1] != want_src:
                    problems.append("second stderr line %r is not source line %d %r" % (
                        lines[1], l, want_src))
                c = int(m.group(3))
                # one space (or tab) a character before the column (none
                # for a UTF-8 continuation byte), as diag.c (and
                # tests/lib.sh's want_source) has it
                before = src_lines[l - 1][:c - 1]
                want_caret = "".join("\t" if b == 9 else " " for b in before if b & 0xC0 != 0x80) + "^"
                if lines[2].rstrip() != want_caret:
                    problems.append("caret line %r, want %r" % (lines[2], want_caret))
        if err.count("error:") != 1:
            problems.append("%d 'error:' in stderr, want 1" % err.count("error:"))
        if sentinel:
            for p in (out_c, out_h):
                with open(p) as f:
                    if f.read() != "sentinel\n":
                        problems.append("%s was modified" % os.path.basename(p))
        else:
            for p in (out_c, out_h):
                if os.path.exists(p):
                    problems.append("%s was written" % os.path.basename(p))
        extra = set(os.listdir(d)) - {"sched.yaml", "out.c", "out.h"}
        if extra:
            problems.append("left files behind: %s" % ", ".join(sorted(extra)))
        if problems:
            problems.append("command: %s" % quote(cmd))
            break
    res.report(not problems, "error=%s" % name,
               "\n".join(problems) + ("\nschedule:\n" + text if problems else ""),
               XFAIL_ERRORS.get(name), key=("error", name, "", ""))


def check_same_case(lgen, spec, workdir, case, res):
    """A schedule file read as another one (or as no --schedule): exit 0,
    nothing on stderr, the same C."""
    name, text, other = case
    d = os.path.join(workdir, "same-" + name)
    os.makedirs(d)
    outs, problems = [], []
    for i, t in enumerate((text, other)):
        cmd = [lgen, spec, "-o", os.path.join(d, "out%d.c" % i)]
        if t is not None:
            ypath = os.path.join(d, "sched%d.yaml" % i)
            with open(ypath, "wb") as f:
                f.write(t.encode("utf-8"))
            cmd.append("--schedule=" + ypath)
        rc, out, err = run(cmd, timeout=30)
        if rc != 0 or err:
            problems.append("%s: %s\n%s" % (quote(cmd), describe_rc(rc), head(err)))
            break
        with open(cmd[3], "rb") as f:
            outs.append(f.read())
    if not problems and outs[0] != outs[1]:
        problems.append("the C differs from that of %s" % ("no --schedule" if other is None else repr(other)))
    res.report(not problems, "same=%s" % name, "\n".join(problems), None, key=("same", name, "", ""))


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def probe_cblas(lgen, matmul_chunk, workdir):
    """The link flag with which gcc builds and runs lgen's cblas_sgemm call
    of a 2x3x2 matmul, or None."""
    if not matmul_chunk:
        return None
    d = tempfile.mkdtemp(prefix="probe-cblas-", dir=workdir)
    with open(os.path.join(d, "m.tc"), "w") as f:
        f.write(matmul_chunk)
    with open(os.path.join(d, "m.yaml"), "w") as f:
        f.write("matmul:\n  library_call: cblas_sgemm\n")
    rc, _, _ = run([lgen, os.path.join(d, "m.tc"), "--schedule=" + os.path.join(d, "m.yaml"),
                    "-o", os.path.join(d, "m.c")])
    if rc != 0:
        return None
    with open(os.path.join(d, "main.c"), "w") as f:
        f.write("#include <stdint.h>\n"
                "void matmul(const float *A, const float *B, float *C, int64_t M, int64_t K, int64_t N);\n"
                "int main(void) {\n  float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {1, 0, 0, 1, 1, 1}, C[4] = {0};\n"
                "  matmul(A, B, C, 2, 3, 2);\n"
                "  return !(C[0] == 4 && C[1] == 5 && C[2] == 10 && C[3] == 11);\n}\n")
    for lib in ("-lopenblas", "-lcblas", "-lblas"):
        exe = os.path.join(d, "m" + lib)
        rc, _, _ = run(["gcc"] + COMMON_FLAGS + ["-O1", os.path.join(d, "m.c"),
                                                 os.path.join(d, "main.c"), "-o", exe, lib])
        if rc == 0 and run([exe], env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))[0] == 0:
            return lib
    return None


def probe(cc, flags, workdir, name):
    src = os.path.join(workdir, "probe_%s.c" % name)
    exe = os.path.join(workdir, "probe_%s" % name)
    with open(src, "w") as f:
        f.write("#include <stdio.h>\n#ifdef _OPENMP\n#include <omp.h>\n#endif\n"
                "int main(void) {\n  int i, s = 0;\n"
                "#ifdef _OPENMP\n  omp_set_num_threads(2);\n"
                "#pragma omp parallel for reduction(+:s)\n#endif\n"
                "  for (i = 0; i < 100; i++) s += i;\n"
                "  printf(\"%d\\n\", s);\n  return s != 4950;\n}\n")
    rc, _, err = run([cc] + COMMON_FLAGS + flags + [src, "-o", exe])
    if rc != 0:
        return head(err, 5) or describe_rc(rc)
    rc, _, err = run([exe])
    if rc != 0:
        return "probe program failed: %s %s" % (describe_rc(rc), head(err, 5))
    return None


def print_xfail(failures):
    """Suggested XFAIL_RUN / XFAIL_LGEN tables: each failure matched against
    the bug signatures (failures matching none are left out)."""
    tables = {"run": {}, "lgen": {}}
    unknown = 0
    for kind, op, variant, config, detail in failures:
        if kind not in tables:
            continue
        bugs = [b for b, (_, sig) in sorted(BUGS.items()) if re.search(sig, detail)]
        if not bugs:
            unknown += 1
            continue
        tables[kind].setdefault((op, variant), {})[config] = bugs[0]
    for kind, name in (("run", "XFAIL_RUN"), ("lgen", "XFAIL_LGEN")):
        print("%s = {" % name)
        for (op, variant), per in sorted(tables[kind].items()):
            if len(set(per.values())) == 1 and kind == "lgen":
                per = {"*": list(per.values())[0]}
            print("    (%r, %r): {%s}," % (op, variant, ", ".join(
                "%r: %r" % (c, b) for c, b in sorted(per.items()))))
        print("}")
    print("# %d failures match no known bug" % unknown)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--op", action="append", help="only this op (repeatable)")
    ap.add_argument("--cc", action="append", help="only this config (repeatable)")
    ap.add_argument("--seed", type=int,
                    default=int(os.environ.get("SCHEDULES_SEED", DEFAULT_SEED)))
    ap.add_argument("--per-op", type=int,
                    default=int(os.environ.get("SCHEDULES_PER_OP", DEFAULT_PER_OP)))
    ap.add_argument("--jobs", type=int,
                    default=int(os.environ.get("SCHEDULES_JOBS", os.cpu_count() or 2)))
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--list", action="store_true", help="print schedules and shapes, stop")
    ap.add_argument("--no-errors", action="store_true", help="skip the invalid schedules")
    ap.add_argument("--errors-only", action="store_true", help="only the invalid schedules")
    ap.add_argument("--print-xfail", action="store_true",
                    help="print XFAIL_RUN/XFAIL_LGEN entries for the failures that match a known bug")
    args = ap.parse_args()

    t0 = time.time()
    here = os.path.dirname(os.path.abspath(__file__))
    srcdir = os.environ.get("top_srcdir") or os.environ.get("srcdir") or \
        os.path.join(here, "..", "..")
    spec_files = [os.path.join(srcdir, "specs", "linalg.tc"),
                  os.path.join(srcdir, "tests", "schedules", "reshape.tc")]
    lgen = os.path.abspath(os.environ.get("LGEN") or os.path.join("src", "lgen"))
    res = Results()

    if not (os.path.isfile(lgen) and os.access(lgen, os.X_OK)):
        res.report(False, "setup lgen=%s" % lgen, "not found or not executable (set LGEN)")
        print("%d passed, %d failed" % (res.passed, res.failed))
        return 1

    work = tempfile.mkdtemp(prefix="lgen-schedules-")
    note("work directory: %s" % work)
    note("lgen: %s; seed %d, %d random schedules per op" % (lgen, args.seed, args.per_op))

    spec_text = ""
    for path in spec_files:
        with open(path) as f:
            spec_text += f.read() + "\n"
    spec = os.path.join(work, "all.tc")
    with open(spec, "w") as f:
        f.write(spec_text)
    chunks = split_defs(spec_text)
    if args.op:
        unknown = [o for o in args.op if o not in [n for n, _ in chunks]]
        if unknown:
            note("no such op: %s" % ", ".join(unknown))
            return 2
        chunks = [(n, c) for n, c in chunks if n in args.op]

    for feat, (opname, text) in sorted(FEATURE_PROBES.items()):
        pdir = tempfile.mkdtemp(prefix="probe-", dir=work)
        with open(os.path.join(pdir, "p.yaml"), "w") as f:
            f.write(text)
        rc, _, _ = run([lgen, spec, "--schedule=" + os.path.join(pdir, "p.yaml"),
                        "-o", os.path.join(pdir, "p.c")])
        FEATURES[feat] = rc == 0
        note("schedule feature %s: %s" % (feat, "supported" if rc == 0 else "not supported, not tested"))
    FEATURES["cblas"] = probe_cblas(lgen, dict(split_defs(spec_text)).get("matmul"), work)
    note("library_call: %s" % ("linked with " + FEATURES["cblas"] if FEATURES["cblas"]
                               else "no CBLAS to link with (or no library_call), not tested"))

    works = []
    if not args.errors_only:
        rc, ir, err = run([lgen, spec, "--schedule=none", "--emit=ir", "-o", "-"])
        if rc != 0:
            res.report(False, "setup ir", "lgen --emit=ir %s\n%s" % (describe_rc(rc), head(err)))
            kernels = {}
        else:
            kernels = {k.name: k for k in parse_ir(ir)}
        rc, printed, err = run([lgen, spec, "--print-schedule", "-o", os.path.join(work, "auto.c")])
        if rc != 0:
            res.report(False, "setup print-schedule", "lgen --print-schedule %s\n%s" % (describe_rc(rc), head(err)))
        reshapes = read_reshapes(printed) if rc == 0 else {}
        note("auto reshapes %d ops: %s" % (len(reshapes), ", ".join(sorted("%s#%d" % key for key in reshapes))))
        for name, chunk in chunks:
            k = kernels.get(name)
            if k is None:
                res.report(False, "op=%s setup" % name, "not in lgen's IR")
                continue
            k.chunk = chunk
            try:
                shapes = make_shapes(k, args.seed)
            except (ValueError, SyntaxError, NameError, TypeError, KeyError) as e:
                res.report(False, "op=%s setup" % name, "cannot derive shapes: %s" % e)
                continue
            for label, sizes, _ in shapes:
                if not exactness_ok(k, sizes):
                    res.report(False, "op=%s setup" % name,
                               "test bug: shape %s is too large for exact mode" % label)
            unsupported = [t.ty for t in k.tensors if t.ty not in CTYPE]
            if unsupported:
                res.report(False, "op=%s setup" % name, "test does not support %s" % unsupported)
                continue
            variants = make_variants(k, args.seed, args.per_op, reshapes)
            d = os.path.join(work, name)
            os.makedirs(d)
            with open(os.path.join(d, "op.tc"), "w") as f:
                f.write(chunk)
            works.append(OpWork(k, variants, shapes, d))

    if args.list:
        for w in works:
            print("== %s" % w.k.name)
            for label, sizes, attrs in w.shapes:
                print("shape %s: %s" % (label, fmt_shape(w.k, sizes, attrs)))
            for v in w.variants:
                print("-- %s %s" % (v.name, v.desc))
                if v.yaml:
                    print(v.yaml.rstrip())
        shutil.rmtree(work, ignore_errors=True)
        return 0

    # invalid schedules
    if not args.no_errors:
        for case in ERROR_CASES:
            check_error_case(lgen, spec, work, case, res)
        for case in SAME_CASES:
            check_same_case(lgen, spec, work, case, res)

    # compiler configurations
    configs = []
    wanted = args.cc or [c for c in os.environ.get("SCHEDULES_CC", "").split(",") if c]
    if wanted == ["all"]:
        wanted = [c[0] for c in CONFIGS]
    if not wanted:
        # make check-all runs the suite twice: plainly, then with lgen built
        # with the sanitizers (LGEN_SANITIZED=yes). The configurations are
        # shared out between the two runs, so that each stays within its
        # time and together they run every one once.
        sanitized = os.environ.get("LGEN_SANITIZED") == "yes"
        wanted = [c[0] for c in CONFIGS if (c[0] in SANITIZED_RUN) == sanitized]
    if works:
        for config in CONFIGS:
            cname, cckey, flags, _ = config
            if cname not in wanted:
                continue
            cc = os.environ.get("CC_" + cckey.upper(), cckey)
            if shutil.which(cc) is None:
                note("SKIP cc=%s: %s not found" % (cname, cc))
                continue
            why = probe(cc, flags, work, cname)
            if why:
                note("SKIP cc=%s: cannot build and run a test program: %s" % (cname, why))
                continue
            configs.append((config, cc))
        if not configs:
            note("no compiler configuration is usable")
            print("%d passed, %d failed" % (res.passed, res.failed))
            shutil.rmtree(work, ignore_errors=True)
            return 1
        note("configs: %s" % ", ".join(c[0][0] for c in configs))

    res.apply_xfail = args.seed == DEFAULT_SEED and args.per_op == DEFAULT_PER_OP
    if not res.apply_xfail:
        note("not the default seed and schedule count: the XFAIL lists do not apply")

    # lgen per op, then one build-and-run job per (op, configuration), the
    # sanitizer (slowest) configuration first; results printed in op order
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        preps = {w.k.name: pool.submit(prepare_op, lgen, w, res, args.seed) for w in works}

        def job(w, config, cc):
            preps[w.k.name].result()
            return build_and_run(w, config, cc, res)
        jobs = {}
        for ci in sorted(range(len(configs)), key=lambda i: "asan" not in configs[i][0][0]):
            for w in works:
                config, cc = configs[ci]
                jobs[(w.k.name, config[0])] = pool.submit(job, w, config, cc)
        for w in works:
            preps[w.k.name].result()
            with print_lock:
                if w.lines:
                    print("\n".join(w.lines))
                sys.stdout.flush()
            for config, _ in configs:
                problems = jobs[(w.k.name, config[0])].result()
                for vi, v in enumerate(w.variants):
                    what = "op=%s sched=%s cc=%s run" % (w.k.name, v.name, config[0])
                    detail = "\n".join(problems[vi])
                    if problems[vi] and v.yaml:
                        detail += "\nschedule (%s):\n%s" % (
                            os.path.join(w.dir, "v%d.yaml" % vi), v.yaml.rstrip())
                    if problems[vi]:
                        detail += "\nshapes: " + "; ".join(
                            "%s %s" % (l, fmt_shape(w.k, s, a)) for l, s, a in w.shapes)
                    res.report(not problems[vi], what, detail,
                               xfail_for(XFAIL_RUN, w.k.name, v.name, config[0]),
                               key=("run", w.k.name, v.name, config[0]))
            why = compare_refs(w, [c[0][0] for c in configs])
            res.report(why is None, "op=%s configs" % w.k.name, why or "")
            selfcheck = ["cc=%s: %s" % (config[0], m) for config, _ in configs
                         for m in jobs[(w.k.name, config[0])].result().get("canary", [])]
            res.report(not selfcheck, "op=%s harness" % w.k.name, "\n".join(selfcheck))

    if args.print_xfail:
        print_xfail(res.failures)
    for cname in [c[0][0] for c in configs]:
        b = sum(x[1] for x in TIMES if x[0] == cname)
        r = sum(x[2] for x in TIMES if x[0] == cname)
        note("cc=%s: %.0fs building, %.0fs running (wall, summed over ops)" % (cname, b, r))
    nsched = sum(len(w.variants) for w in works)
    note("%d ops, %d schedules, %d shapes each, %d configs, %d invalid schedules; %.1fs" % (
        len(works), nsched, len(works[0].shapes) if works else 0, len(configs),
        0 if args.no_errors else len(ERROR_CASES), time.time() - t0))
    if res.xfail:
        note("%d known lgen bugs (XFAIL)" % res.xfail)
    if res.failed == 0 and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        note("kept work directory %s" % work)
    print("%d passed, %d failed" % (res.passed, res.failed))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
