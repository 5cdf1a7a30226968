#!/bin/sh
# coverage.sh SRC_DIR BUILD_DIR - what `make coverage` runs (issue 14, item 7):
#   1. a build from a clean dist tree with gcc --coverage -O0, in
#      BUILD_DIR/_coverage, and `make check` there (COVERAGE_TESTS=... runs
#      only some tests, COVERAGE_TESTS=quick those of bad input and the
#      front-ends);
#   2. gcovr's line and branch coverage of src/, in all and per stage
#      (front-ends, graph builder, schedule reader, ...), as text, and as
#      HTML in BUILD_DIR/_coverage/html/index.html;
#   3. scripts/diag-coverage.py: every diagnostic call site in src/ (an
#      error or warning a user can see) must have run in some test;
#   4. _coverage/diagnostics-ran.txt, the sites that ran, which
#      scripts/check-diagnostics (tests/diagnostics.test) reads from scripts/.
# Exits non-zero when a test fails or a diagnostic never ran.
set -u
src=$1
build=$2
SHARED_DIR=${SHARED_DIR:-$(cd "$src/.." && pwd)/shared}
export SHARED_DIR
cov=$build/_coverage
rm -rf "$cov"
mkdir -p "$cov"
make -C "$build" distdir distdir="$cov/src" >/dev/null || exit 1
mkdir -p "$cov/build"
(cd "$cov/build" && ../src/configure -q CC=gcc CFLAGS="-O0 -g --coverage" LDFLAGS="--coverage") || exit 1
make -C "$cov/build" -j2 >/dev/null || exit 1
st=0
# COVERAGE_TESTS=quick: the tests of bad input and of the front-ends (about
# 20 minutes on a loaded 2-core machine instead of the whole suite's hour);
# what the figures in the commit log of 2026-11-26 were measured with.
if [ "${COVERAGE_TESTS:-}" = quick ]; then
  COVERAGE_TESTS="tests/cli.test tests/bad.test tests/mutations.test fuzz/replay.test tests/graph-bad.test
    tests/hostile.test tests/opdsl-bad.test tests/tc-classic-bad.test tests/onnx-ops-bad.test tests/onnx-binary.test
    tests/golden.test tests/schedules.test tests/onnx-conformance.test tests/opdsl.test tests/diagnostics.test
    tests/unit/test_lexer tests/unit/test_parser tests/unit/test_graph_build tests/unit/test_graph_json
    tests/unit/test_onnx_json tests/unit/test_tc_classic tests/unit/test_graph_fold tests/unit/test_json_index"
fi
if [ -n "${COVERAGE_TESTS:-}" ]; then
  ONNX_GENERATED=1 make -C "$cov/build" check TESTS="$(echo $COVERAGE_TESTS)" || st=1
else
  ONNX_GENERATED=1 make -C "$cov/build" check || st=1
fi
# gcov's notes name the dist tree's sources; report them by their paths in src/.
cd "$cov/build" || exit 1
gcovr_args="-r $cov/src --object-directory $cov/build --exclude-unreachable-branches --exclude-throw-branches
  --filter $cov/src/src/"
mkdir -p "$cov/html"
# shellcheck disable=SC2086
gcovr $gcovr_args --json "$cov/coverage.json" --html-details "$cov/html/index.html" --txt "$cov/summary.txt" \
  --branches >/dev/null 2>"$cov/gcovr.err" || { cat "$cov/gcovr.err"; exit 1; }
python3 "$src/scripts/diag-coverage.py" --json "$cov/coverage.json" --src "$cov/src" || st=1
# the diagnostic call sites that ran, for scripts/check-diagnostics (make
# check's fast approximation of the list above): copy the file into
# scripts/ after a full run
python3 "$src/scripts/check-diagnostics" --src "$src" --gcov "$cov/coverage.json" \
  --write-ran "$cov/diagnostics-ran.txt" || st=1
exit $st
