/* fuzz_graph.c - libFuzzer harness: bytes -> lgen_compile as a JSON model
 * graph (lgen-graph/1 or ONNX JSON), with the oracles of oracle.h: status 0
 * or 1 only, exactly one well-placed error on bad input, byte-identical
 * outputs on a second compilation, and options that change the C but never
 * the IR.
 *
 * The source is named as if it lived in a folder that does not exist, so a
 * constant's relative "file" can never reach the files around the fuzzer
 * (its logs and corpus change between two compilations and would look like
 * nondeterminism); absolute paths still go through the file checks.
 *
 * Built like fuzz_tc.c: by scripts/fuzz.sh with clang -fsanitize=fuzzer, by
 * make check as fuzz/fuzz_graph_replay (with fuzz/replay_main.c), and under
 * ASan by make check-all. */
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_check_compile("no-such-dir.lgen-fuzz/fuzz.json", data, size);
  return 0;
}
