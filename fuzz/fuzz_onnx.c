/* fuzz_onnx.c - libFuzzer harness: bytes -> lgen_compile as a binary ONNX
 * model (the protobuf reader, src/frontend/onnx_read_pb.c, then the ONNX
 * importer), with the oracles of oracle.h: status 0 or 1 only, exactly one
 * error on bad input, located as "NAME: byte N (FIELD PATH)" with N inside
 * the input, byte-identical outputs on a second compilation, options that
 * change the C but never the IR.
 *
 * The source is named as if it lived in a folder that does not exist, so
 * external data can never reach the files around the fuzzer. The seed
 * corpus (fuzz/corpus-onnx) is small real models: ONNX node tests and
 * models written with onnx.helper.
 *
 * Built by scripts/fuzz.sh with clang -fsanitize=fuzzer, by make check as
 * fuzz/fuzz_onnx_replay (with fuzz/replay_main.c), and under ASan by make
 * check-all. */
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_check_compile("no-such-dir.lgen-fuzz/fuzz.onnx", data, size);
  return 0;
}
