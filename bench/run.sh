#!/bin/sh
# shellcheck disable=SC2086  # CC, CFLAGS, BENCH_ARGS are word lists on purpose
# lgen benchmark: generate kernels with the built lgen (auto and none
# schedules), compile them with the harness, link OpenBLAS and oneDNN, run.
#
#   sh bench/run.sh SRCDIR BUILDDIR [bench options...]
#
# SRCDIR is the lgen source tree (specs/, bench/), BUILDDIR the build tree
# (src/lgen); the work happens in BUILDDIR/bench-build. Options after the two
# directories (and $BENCH_ARGS) go to the bench binary: --only=SUBSTR,...
# --threads=1,2 --min-time=SECONDS --list. Environment: CC (default gcc),
# BENCH_CFLAGS (default -O3 -march=native), BENCH_ARGS, BENCH_TARGET (lgen's
# --target; default: the one matching what $CC $BENCH_CFLAGS compiles for).
# Needs Debian libopenblas-dev and libdnnl-dev.
#
# Then bench/ext_bench.c: lgen's conv 3x3 by its direct, im2col and
# Winograd paths, topk k=8 over 1M floats against a full sort, and sort of
# 1M floats against qsort (make bench BENCH_ARGS=--only=conv3x3,topk8,sort_1m).
#
# Model graphs (bench/models/run_models.py: the example models and the
# real-model suite's networks, tests/models/suite.py, against ONNX Runtime
# via Node, at 1 and 2 threads and contended) run after the kernels when no
# --only is given; --only=models runs only them (make bench
# BENCH_ARGS=--only=models). The model options --models=NAME,...
# (examples, real, or names: --models=resnet18,bert_layer_s128), --rounds=,
# --runs=, --warmup=, --block-ms=, --no-contended, --nofuse and --list-models
# go to run_models.py alone and imply --only=models; --threads= goes to both.
# Then the generator's own cost (bench/scale.py): generation time and peak
# RSS for graphs of 1,000, 10,000 and 100,000 nodes, and the generated C's
# size and gcc -O2 time for the largest graph and for 100 MB of weights
# embedded and in a C file (--weights); --only=scale runs only that.
set -eu

srcdir=${1:?usage: run.sh SRCDIR BUILDDIR [bench options]}
builddir=${2:?usage: run.sh SRCDIR BUILDDIR [bench options]}
shift 2

lgen=$builddir/src/lgen
out=$builddir/bench-build
CC=${CC:-gcc}
CFLAGS=${BENCH_CFLAGS:--O3 -march=native}

if [ ! -x "$lgen" ]; then
  echo "bench: $lgen not built (run make first)" >&2
  exit 2
fi

# --only=models: the model benchmark alone; no --only: kernels, then models.
only_models=no
only_scale=no
any_only=no
model_args=
kernel_args=
for a in ${BENCH_ARGS:-} "$@"; do
  case $a in
    --only=models) only_models=yes ;;
    --only=scale) only_scale=yes ;;
    --only=*) any_only=yes; kernel_args="$kernel_args $a" ;;
    --models=* | --rounds=* | --runs=* | --warmup=* | --block-ms=* | --no-contended | --nofuse)
      only_models=yes; model_args="$model_args $a" ;;
    --list-models) only_models=yes; model_args="$model_args --list" ;;
    --threads=*) model_args="$model_args $a"; kernel_args="$kernel_args $a" ;;
    *) kernel_args="$kernel_args $a" ;;
  esac
done
run_scale() {
  echo "bench: the generator at scale (bench/scale.py)"
  /usr/bin/python3 "$srcdir/bench/scale.py" "$srcdir" "$builddir"
}
if [ "$only_scale" = yes ]; then
  run_scale
  exit $?
fi
run_models() {
  echo "bench: model graphs against ONNX Runtime"
  /usr/bin/python3 "$srcdir/bench/models/run_models.py" "$srcdir" "$builddir" $model_args
}
if [ "$only_models" = yes ]; then
  run_models
  exit $?
fi

# OpenBLAS's own cblas.h (Debian installs it under an alternatives-managed
# multiarch path; prefer the pthread variant's directory when present).
blas_inc=
for d in /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas; do
  if [ -f "$d/cblas.h" ]; then blas_inc="-I$d"; break; fi
done

# lgen's --target for the machine the C is compiled for (its predefined
# macros under $CFLAGS), or BENCH_TARGET: lgen's default model is
# x86-64-avx2 whatever the host, and an AVX-512 host gains from its own.
target=${BENCH_TARGET:-}
if [ -z "$target" ]; then
  macros=$($CC $CFLAGS -dM -E -x c /dev/null 2>/dev/null)
  case $macros in
    *"#define __AVX512F__ "*) target=x86-64-avx512 ;;
    *"#define __AVX2__ "*) target=x86-64-avx2 ;;
    *"#define __aarch64__ "*) target=aarch64-neon ;;
  esac
fi
tflag=${target:+--target=$target}

mkdir -p "$out"
echo "bench: generating kernels into $out${target:+ for --target=$target}"
specs1=$srcdir/specs/linalg.tc
specs2=$srcdir/bench/cases.tc
"$lgen" $tflag --schedule=auto --prefix=auto_ "$specs1" "$specs2" -o "$out/auto.c" -H "$out/auto.h"
"$lgen" --schedule=none --prefix=none_ "$specs1" "$specs2" -o "$out/none.c" -H "$out/none.h"
"$lgen" $tflag --schedule=auto --print-schedule "$specs1" "$specs2" -o /dev/null \
  > "$out/auto-schedule.yaml"
echo "bench: auto schedule decisions: $out/auto-schedule.yaml"

echo "bench: compiling with $CC $CFLAGS -fopenmp"
# The compiler's default dialect (gnu17 for gcc 12), not -std=c99: ISO modes
# turn off FMA contraction (-ffp-contract=off), which halves the peak of the
# generated contraction loops.
$CC $CFLAGS -fopenmp -c "$out/auto.c" -o "$out/auto.o"
$CC $CFLAGS -fopenmp -c "$out/none.c" -o "$out/none.o"
$CC $CFLAGS -fopenmp -Wall -Wextra -I"$out" $blas_inc \
  -c "$srcdir/bench/bench.c" -o "$out/bench.o"
if ! $CC -fopenmp "$out/bench.o" "$out/auto.o" "$out/none.o" -o "$out/bench" \
    -lopenblas -ldnnl -lm; then
  echo "bench: link failed: needs libopenblas-dev and libdnnl-dev" >&2
  exit 2
fi

# OpenBLAS 0.3.21 picks its Haswell (AVX2) kernels on AMD CPUs that have
# AVX-512 (Zen 4, Zen 5), and this machine's environment even sets
# OPENBLAS_CORETYPE=Haswell; its SkylakeX kernels run up to twice as fast
# there. The reference gets its best kernels (BENCH_OPENBLAS_CORETYPE
# overrides the choice).
if [ -n "${BENCH_OPENBLAS_CORETYPE:-}" ]; then
  OPENBLAS_CORETYPE=$BENCH_OPENBLAS_CORETYPE
  export OPENBLAS_CORETYPE
elif grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
  echo "bench: the CPU has AVX-512: OpenBLAS uses its SkylakeX kernels (OPENBLAS_CORETYPE was '${OPENBLAS_CORETYPE:-}')"
  OPENBLAS_CORETYPE=SkylakeX
  export OPENBLAS_CORETYPE
fi
echo "bench: running $out/bench$kernel_args"
status=0
"$out/bench" $kernel_args 2>"$out/bench.err" || status=$?
cat "$out/bench.err" >&2
# --only naming only ext_bench's cases is not an error
if [ "$status" -eq 2 ] && grep -q 'matches no case' "$out/bench.err"; then status=0; fi

# The conv algorithms (direct, im2col, Winograd) and topk / sort against a
# full sort and qsort: graphs in bench/ext/, timed by bench/ext_bench.c.
echo "bench: conv algorithms, topk and sort (bench/ext_bench.c)"
"$lgen" $tflag "$srcdir"/bench/ext/*.json -o "$out/ext.c" -H "$out/ext.h"
$CC $CFLAGS -fopenmp -c "$out/ext.c" -o "$out/ext.o"
$CC $CFLAGS -fopenmp -Wall -Wextra -I"$out" -c "$srcdir/bench/ext_bench.c" -o "$out/ext_bench.o"
$CC -fopenmp "$out/ext_bench.o" "$out/ext.o" -o "$out/ext_bench" -lm
"$out/ext_bench" $kernel_args >"$out/ext_bench.out" || status=1
cat "$out/ext_bench.out"
# ONNX Runtime on the single-op cases ext_bench ran (topk, softmax, attention)
/usr/bin/python3 "$srcdir/bench/ext/ort_ext.py" "$srcdir" "$builddir" "$out/ext_bench.out" $kernel_args ||
  status=1
if [ "$any_only" = no ]; then
  run_models || status=1
  run_scale || status=1
fi
exit $status
