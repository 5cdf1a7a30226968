#!/bin/sh
# fuzz.sh - coverage-guided fuzzing of lgen_compile with libFuzzer.
#
#   scripts/fuzz.sh SRC_DIR BUILD_DIR SECONDS
#
# Four harnesses, each built from its fuzz/*.c and every src/**/*.c except
# src/main.c, compiled directly by clang with libFuzzer, ASan and UBSan (not
# the gcc-built liblgen.a), with the protobuf-c code of onnx.proto (the
# build tree's, or generated here with protoc-c from ONNX_PROTO, default
# libonnx-dev's /usr/include/onnx/onnx.proto):
#   fuzz_tc     .tc specs; corpus fuzz/corpus, dictionary fuzz/tc.dict
#   fuzz_graph  JSON model graphs; corpus fuzz/corpus-graph, fuzz/json.dict
#   fuzz_opdsl  OpDSL YAML; corpus fuzz/corpus-opdsl, fuzz/opdsl.dict
#   fuzz_onnx   binary ONNX models; corpus fuzz/corpus-onnx, fuzz/onnx.dict
#   fuzz_struct JSON model graphs mutated as graphs (ops, attributes, shapes,
#               wiring), not bytes; seeds fuzz/corpus-graph and
#               (a campaign, FUZZ_MERGE=1: also fuzz/corpus-struct)
#   fuzz_schedule  schedule files for a fixed spec; fuzz/corpus-schedule,
#               fuzz/yaml.dict
# SECONDS is shared out between them (the first gets what does not divide). Each
# fuzzes on a copy of its corpus (BUILD_DIR/corpus, BUILD_DIR/corpus-graph,
# kept between runs).
# Environment: CLANG (default clang), FUZZ_FLAGS (extra libFuzzer flags),
# FUZZ_MERGE=1 (a campaign: after a clean run, the inputs that add coverage
# are merged into the tree's corpus folder, to be committed),
# FUZZ_CFLAGS (extra compiler flags, e.g. -DLGEN_FUZZ_SKIP_KNOWN), FUZZ_LIBS
# (extra libraries; libyaml and Jansson are found with pkg-config when src/
# uses them), FUZZ_HARNESSES (default "tc graph opdsl onnx struct schedule": which to run).
#
# Prints one summary line per harness with the executions run. On a crash,
# timeout or oracle violation the input is left in BUILD_DIR/artifacts/
# (crash-*, timeout-*, oom-*, leak-*), a minimized copy next to it
# (minimized-*), and the script exits 1. Exit 2: bad usage or build failure.
set -u

if [ $# -ne 3 ]; then
  echo "usage: $0 SRC_DIR BUILD_DIR SECONDS" >&2
  exit 2
fi
src=$1
build=$2
duration=$3
case $duration in
'' | *[!0-9]*)
  echo "fuzz.sh: SECONDS must be a number, not '$duration'" >&2
  exit 2
  ;;
esac
clang=${CLANG:-clang}
# the harnesses find the templates (attention, topk, ...) through this, not
# through the folder they run in: a campaign started from elsewhere read
# every template op as "cannot read the template", an oracle violation
LGEN_TEMPLATE_DIR=${LGEN_TEMPLATE_DIR:-$(cd "$src" && pwd)/templates}
export LGEN_TEMPLATE_DIR

mkdir -p "$build/corpus" "$build/artifacts" || exit 2
build=$(cd "$build" && pwd)
src=$(cd "$src" && pwd)

# ---- build ----
sources=$(find "$src/src" -name '*.c' ! -path "$src/src/main.c" | LC_ALL=C sort)
if [ -z "$sources" ]; then
  echo "fuzz.sh: no sources under $src/src" >&2
  exit 2
fi
# the libraries liblgen uses (configure.ac's PKG_CHECK_MODULES), plus libm
pkg_cflags= pkg_libs=
if grep -rqs '#include <yaml.h>' "$src/src"; then
  pkg_cflags=$(pkg-config --cflags yaml-0.1 2>/dev/null)
  pkg_libs=$(pkg-config --libs yaml-0.1 2>/dev/null || echo -lyaml)
fi
if grep -rqs '#include <jansson.h>' "$src/src"; then
  pkg_cflags="$pkg_cflags $(pkg-config --cflags jansson 2>/dev/null)"
  pkg_libs="$pkg_libs $(pkg-config --libs jansson 2>/dev/null || echo -ljansson)"
fi
# the binary ONNX reader's message code: generated in place by an in-tree
# build (then among $sources), else generated here
gen_dir=
if grep -rqs 'frontend/onnx.pb-c.h' "$src/src" && [ ! -f "$src/src/frontend/onnx.pb-c.c" ]; then
  proto=${ONNX_PROTO:-/usr/include/onnx/onnx.proto}
  gen_dir=$build/gen
  mkdir -p "$gen_dir/frontend" || exit 2
  if ! protoc-c --proto_path="$(dirname "$proto")" --c_out="$gen_dir/frontend" "$(basename "$proto")"; then
    echo "fuzz.sh: protoc-c could not generate the code of $proto" >&2
    exit 2
  fi
  sources="$sources $gen_dir/frontend/onnx.pb-c.c"
fi
if grep -rqs 'frontend/onnx.pb-c.h' "$src/src"; then
  pkg_cflags="$pkg_cflags ${gen_dir:+-I$gen_dir} $(pkg-config --cflags libprotobuf-c 2>/dev/null)"
  pkg_libs="$pkg_libs $(pkg-config --libs libprotobuf-c 2>/dev/null || echo -lprotobuf-c)"
fi
harnesses=${FUZZ_HARNESSES:-tc graph opdsl onnx struct schedule}
# lgen's sources are compiled once (instrumented for coverage, not linked
# with libFuzzer's main), two at a time; each harness then only links.
objdir=$build/obj
rm -rf "$objdir"
mkdir -p "$objdir" || exit 2
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
# shellcheck disable=SC2086
if ! printf '%s\n' $sources | xargs -P 2 -I{} sh -c '
  o="$0/$(echo "${1#$2/}" | tr / _ | sed "s/\.c\$/.o/")"
  exec "$3" -g -O1 -fsanitize=fuzzer-no-link $4 -std=c99 -Wno-c11-extensions -D_POSIX_C_SOURCE=200809L -I"$2/include" -I"$2/src" \
    $5 $6 -c "$1" -o "$o"' "$objdir" {} "$src" "$clang" "$san" "$pkg_cflags" "${FUZZ_CFLAGS:-}"; then
  echo "fuzz.sh: compiling lgen's sources failed" >&2
  exit 2
fi
for h in $harnesses; do
  # shellcheck disable=SC2086 # word splitting of the flag lists is intended
  if ! "$clang" -g -O1 -fsanitize=fuzzer $san -std=c99 -Wno-c11-extensions -D_POSIX_C_SOURCE=200809L -I"$src/include" -I"$src/src" \
    $pkg_cflags ${FUZZ_CFLAGS:-} "$src/fuzz/fuzz_$h.c" "$objdir"/*.o -o "$build/fuzz_$h.new" $pkg_libs \
    ${FUZZ_LIBS:-} -lm; then
    echo "fuzz.sh: building fuzz_$h failed" >&2
    exit 2
  fi
  mv "$build/fuzz_$h.new" "$build/fuzz_$h"
done

# ---- fuzz ----
# run_harness NAME CORPUS_SRC CORPUS DICT SECONDS: fuzz, summarise, and
# minimize what it found; returns 0 when nothing was found.
run_harness() {
  name=$1 corpus_src=$2 corpus=$3 dict=$4 seconds=$5
  bin=$build/$name
  mkdir -p "$corpus" || return 1
  cp "$corpus_src"/* "$corpus/" 2>/dev/null
  log=$build/$name.log
  ls "$build/artifacts" | LC_ALL=C sort >"$build/artifacts.before"
  # shellcheck disable=SC2086
  "$bin" -dict="$dict" -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
    -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$build/artifacts/" \
    ${FUZZ_FLAGS:-} "$corpus" >"$log" 2>&1
  status=$?

  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  if [ -z "$execs" ]; then
    # a crash skips the final stats: take the last progress line's count
    execs=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
  fi
  ncorpus=$(ls "$corpus" | wc -l)
  new_artifacts=$(ls "$build/artifacts" | LC_ALL=C sort | LC_ALL=C comm -13 "$build/artifacts.before" - |
    grep -v '^minimized-')
  rm -f "$build/artifacts.before"

  if [ "$status" -eq 0 ] && [ -z "$new_artifacts" ]; then
    echo "fuzz: $name: ${seconds}s, ${execs:-0} executions, corpus of $ncorpus inputs, no crashes (log: $log)"
    if [ "${FUZZ_MERGE:-0}" = 1 ]; then
      # a campaign: what reached new coverage joins the tree's seed corpus
      before=$(ls "$corpus_src" | wc -l)
      "$bin" -merge=1 -timeout=5 -rss_limit_mb=2048 -max_len=4096 "$corpus_src" "$corpus" >"$build/$name.merge.log" 2>&1
      echo "fuzz: $name: merged into $corpus_src: $before -> $(ls "$corpus_src" | wc -l) inputs"
    fi
    return 0
  fi

  echo "fuzz: $name: ${seconds}s, ${execs:-0} executions, corpus of $ncorpus inputs, FAILED (status $status, log: $log)"
  grep -E '^(==[0-9]+==ERROR|fuzz_tc: oracle violated|fuzz oracle violated|SUMMARY|ALARM)' "$log" | head -n 5
  for a in $new_artifacts; do
    crash=$build/artifacts/$a
    echo "fuzz: input left in $crash"
    case $a in
    crash-* | timeout-* | leak-*)
      # bounded: minimizing a hang costs a timeout per attempt
      limit=
      command -v timeout >/dev/null 2>&1 && limit="timeout 300"
      # shellcheck disable=SC2086
      $limit "$bin" -minimize_crash=1 -max_total_time=120 -timeout=2 -rss_limit_mb=2048 -max_len=4096 \
        -exact_artifact_path="$build/artifacts/minimized-$a" ${FUZZ_FLAGS:-} "$crash" >"$build/minimize-$a.log" 2>&1
      if [ -f "$build/artifacts/minimized-$a" ]; then
        echo "fuzz: minimized to $build/artifacts/minimized-$a ($(wc -c <"$build/artifacts/minimized-$a") bytes)"
      fi
      ;;
    esac
  done
  return 1
}

# SECONDS shared out; libFuzzer reads max_total_time=0 as "forever", so
# every harness gets at least one second.
nharness=$(echo $harnesses | wc -w)
share=$((duration / nharness))
[ "$share" -ge 1 ] || share=1
first_share=$((duration - share * (nharness - 1)))
[ "$first_share" -ge 1 ] || first_share=1
result=0
seconds=$first_share
for h in $harnesses; do
  case $h in
  tc) run_harness fuzz_tc "$src/fuzz/corpus" "$build/corpus" "$src/fuzz/tc.dict" "$seconds" || result=1 ;;
  graph) run_harness fuzz_graph "$src/fuzz/corpus-graph" "$build/corpus-graph" "$src/fuzz/json.dict" "$seconds" ||
    result=1 ;;
  opdsl) run_harness fuzz_opdsl "$src/fuzz/corpus-opdsl" "$build/corpus-opdsl" "$src/fuzz/opdsl.dict" "$seconds" ||
    result=1 ;;
  onnx) run_harness fuzz_onnx "$src/fuzz/corpus-onnx" "$build/corpus-onnx" "$src/fuzz/onnx.dict" "$seconds" ||
    result=1 ;;
  struct)
    # a campaign (FUZZ_MERGE=1) starts from the graph seeds and what earlier
    # campaigns kept, fuzz/corpus-struct, and merges into it; the smoke run
    # of check-all only from the graph seeds (its seconds would go on
    # replaying ~700 inputs). make check does not replay corpus-struct.
    seeds=$src/fuzz/corpus-graph
    if [ "${FUZZ_MERGE:-0}" = 1 ]; then
      mkdir -p "$build/corpus-struct" && cp "$src/fuzz/corpus-graph"/* "$build/corpus-struct/" 2>/dev/null
      seeds=$src/fuzz/corpus-struct
    fi
    run_harness fuzz_struct "$seeds" "$build/corpus-struct" "$src/fuzz/json.dict" "$seconds" || result=1 ;;
  schedule) run_harness fuzz_schedule "$src/fuzz/corpus-schedule" "$build/corpus-schedule" "$src/fuzz/yaml.dict" \
    "$seconds" || result=1 ;;
  *)
    echo "fuzz.sh: unknown harness '$h' in FUZZ_HARNESSES" >&2
    exit 2
    ;;
  esac
  seconds=$share
done
exit $result
