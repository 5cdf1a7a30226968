#!/bin/sh
# fuzz-diff.sh SRCDIR BUILDDIR [CORPUS...] - the fuzzers' differential mode
# (fuzz/diff.py): every ONNX model of the fuzz corpora that lgen accepts is
# compiled (gcc, ASan+UBSan, -Werror), run and compared with ONNX Runtime.
# Without corpora it takes fuzz/corpus-struct, corpus-graph and corpus-onnx;
# name a campaign's output folder to check what a campaign found.
# FUZZ_DIFF_ARGS go to diff.py (--limit N, --keep DIR, --verbose).
# ONNX Runtime (onnxruntime-node) is installed once under BUILDDIR/tests/ort-cache
# (tests/onnx-ops/ort-install.sh); without it, or without python3-onnx,
# NumPy or node, this says why and exits 0.
set -u
src=${1:?usage: fuzz-diff.sh SRCDIR BUILDDIR [CORPUS...]}
build=${2:?usage: fuzz-diff.sh SRCDIR BUILDDIR [CORPUS...]}
shift 2
if ! /usr/bin/python3 -c 'import onnx, numpy' >/dev/null 2>&1; then
  echo "fuzz-diff: skipped: /usr/bin/python3 cannot import onnx and numpy"
  exit 0
fi
if ! node_path=$(sh "$src/tests/onnx-ops/ort-install.sh" "$build/tests/ort-cache" 2>"$build/fuzz-diff.err"); then
  echo "fuzz-diff: skipped: ONNX Runtime is not available: $(cat "$build/fuzz-diff.err")"
  exit 0
fi
# shellcheck disable=SC2086
NODE_PATH=$node_path PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$src/fuzz/diff.py" --lgen "$build/src/lgen" \
  --srcdir "$src" --node-path "$node_path" ${FUZZ_DIFF_ARGS:-} "$@"
