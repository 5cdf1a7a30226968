/* fuzz_opdsl.c - libFuzzer harness for the OpDSL YAML reader: bytes ->
 * lgen_compile of one source named "fuzz.yaml", with the oracles of
 * oracle.h (no crash, no internal error; on bad input exactly one error,
 * located inside the input with its source line and caret; on good input a
 * deterministic second compilation and the same IR under other options).
 *
 * Built by scripts/fuzz.sh (clang -fsanitize=fuzzer; corpus
 * fuzz/corpus-opdsl, dictionary fuzz/opdsl.dict) and by make check as
 * fuzz/fuzz_opdsl_replay (with fuzz/replay_main.c), which fuzz/replay.test
 * runs over the corpus, specs/linalg.yaml, tests/opdsl/bad and the shared
 * OpDSL samples. */
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_check_compile("fuzz.yaml", data, size);
  return 0;
}
