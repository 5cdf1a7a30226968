#!/bin/sh
# ort-install.sh DIR - make ONNX Runtime's CPU build for Node (onnxruntime-node,
# from the npm registry) loadable from DIR/node_modules, installing it there
# the first time (--ignore-scripts: the package ships its binaries, no
# download step). Prints DIR/node_modules (a NODE_PATH) on success; on
# failure prints why on stderr and exits 1, so callers can skip with that
# reason. The tests cache DIR under the build tree (tests/ort-cache).
set -u
dir=${1:?usage: ort-install.sh DIR}
command -v node >/dev/null 2>&1 || { echo "node is not installed" >&2; exit 1; }
mods=$dir/node_modules
if [ ! -d "$mods/onnxruntime-node" ]; then
  command -v npm >/dev/null 2>&1 || { echo "npm is not installed" >&2; exit 1; }
  mkdir -p "$dir" || exit 1
  if ! (cd "$dir" && npm install --no-audit --no-fund --ignore-scripts onnxruntime-node >npm.log 2>&1); then
    echo "npm install onnxruntime-node failed: $(tail -n 1 "$dir/npm.log")" >&2
    exit 1
  fi
fi
if ! NODE_PATH=$mods node -e "require('onnxruntime-node')" >/dev/null 2>"$dir/load.err"; then
  echo "onnxruntime-node does not load: $(head -c 300 "$dir/load.err")" >&2
  exit 1
fi
echo "$mods"
