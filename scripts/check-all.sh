#!/bin/sh
# check-all.sh SRC_DIR BUILD_DIR - everything CI runs, in order:
#   1. make check in the build tree, with the ONNX node tests python3-onnx
#      generates (ONNX_GENERATED=1, about a minute more)
#   2. the real-model suite (make check-models --ci: npm and torch models
#      against ONNX Runtime; its passes and failures count, expected failures
#      and skips are printed but do not)
#   3. make check again, built from a clean dist tree with ASan + UBSan and
#      fault injection (tests/faults.test sweeps failures only there)
#   4. a libFuzzer smoke run of the .tc parser (FUZZ_SECONDS, default 60)
#   5. the ONNX operators of issue 15 against ONNX Runtime (make
#      check-onnx-ops: onnxruntime-node from npm, cached in the build tree;
#      skipped, and says why, when npm or the package cannot be had)
#   6. make distcheck: the tarball builds out of tree, installs, uninstalls
#      and cleans; its make check runs only DISTCHECK_TESTS (a quick subset:
#      the whole suite already ran twice above, the second time from a dist
#      tree built out of tree, so a file missing from the tarball fails there)
# Each stage prints its wall time, so a CI log shows where the time goes,
# and a closing "N passed, N failed" line that counts every test of every stage.
set -u
src=$1
build=$2
SHARED_DIR=${SHARED_DIR:-$(cd "$src/.." && pwd)/shared}
export SHARED_DIR
passed=0
failed=0
# The suite runs two tests at a time (CHECK_JOBS): a test is one process at
# a time, and the machine CI runs on has 2 cores; at -j1 the last CI run
# took 3608 s.
jobs=${CHECK_JOBS:-2}

# Adds the counts of an automake test-suite.log to the totals.
count_log() {
  log=$1
  if [ ! -f "$log" ]; then
    echo "check-all: $log is missing: counting the stage as one failure"
    failed=$((failed + 1))
    return
  fi
  p=$(sed -n 's/^# PASS: *//p' "$log" | head -1)
  f=$(sed -n 's/^# FAIL: *//p' "$log" | head -1)
  e=$(sed -n 's/^# ERROR: *//p' "$log" | head -1)
  x=$(sed -n 's/^# XPASS: *//p' "$log" | head -1)
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0} + ${e:-0} + ${x:-0}))
}

stage_start=
stage() {
  stage_end
  echo
  echo "=== check-all: $1 ==="
  stage_start=$(date +%s)
}
stage_end() {
  if [ -n "$stage_start" ]; then
    echo "check-all: stage took $(($(date +%s) - stage_start)) s"
  fi
}

one() { # one pass/fail for a whole stage
  if [ "$1" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}

stage "make check"
ONNX_GENERATED=1 make -C "$build" -j"$jobs" check
count_log "$build/test-suite.log"

# CI runs the subset of suite.py marked ci (CHECK_MODELS_ARGS, default
# --ci: about 5 min on 2 cores from nothing, installing torch, node and
# onnxruntime-node itself); make check-models alone runs every model.
stage "real models (make check-models CHECK_MODELS_ARGS=${CHECK_MODELS_ARGS---ci})"
rm -f "$build/models-check/summary.txt"
make -C "$build" check-models CHECK_MODELS_ARGS="${CHECK_MODELS_ARGS---ci}"
rc=$?
if [ -f "$build/models-check/summary.txt" ]; then
  p=$(sed -n 's/.*passed=\([0-9]*\).*/\1/p' "$build/models-check/summary.txt")
  f=$(sed -n 's/.*failed=\([0-9]*\).*/\1/p' "$build/models-check/summary.txt")
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  # a runner that failed without counting a failure still fails the stage
  if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then failed=$((failed + 1)); fi
else
  echo "check-all: check-models wrote no summary: counting the stage as one failure"
  failed=$((failed + 1))
fi

stage "make check under ASan and UBSan, with fault injection"
asan=$build/_asan
rm -rf "$asan"
mkdir -p "$asan"
if make -C "$build" distdir distdir="$asan/src" >/dev/null &&
  mkdir -p "$asan/build" &&
  (cd "$asan/build" && ../src/configure -q --enable-asan --enable-fault-injection CC="${ASAN_CC:-gcc}") &&
  make -C "$asan/build" -j2 >/dev/null; then
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    make -C "$asan/build" -j"$jobs" check
  count_log "$asan/build/test-suite.log"
else
  echo "check-all: the ASan build failed"
  failed=$((failed + 1))
fi

stage "fuzz smoke (${FUZZ_SECONDS:-60} s)"
if command -v clang >/dev/null 2>&1; then
  sh "$src/scripts/fuzz.sh" "$src" "$build/_fuzz" "${FUZZ_SECONDS:-60}"
  one $?
else
  echo "check-all: clang is missing, no fuzzing (install clang and libclang-rt-14-dev)"
  failed=$((failed + 1))
fi

stage "ONNX operators against ONNX Runtime (make check-onnx-ops)"
make -C "$build" check-onnx-ops
one $?

stage "make distcheck"
make -C "$build" -j"$jobs" distcheck \
  TESTS="${DISTCHECK_TESTS:-tests/cli.test tests/golden.test tests/bad.test fuzz/replay.test tests/unit/test_parser}" \
  >"$build/distcheck.log" 2>&1
rc=$?
tail -5 "$build/distcheck.log"
one $rc
stage_end

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
