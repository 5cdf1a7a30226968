/* fuzz_tc.c - libFuzzer harness: bytes -> lgen_compile, with oracles.
 *
 * The bytes are one .tc source named "fuzz.tc". Every violation of an
 * oracle prints what went wrong and calls abort():
 *   - lgen_compile returns 0 or 1, never 3 (an internal error);
 *   - on 1 the diagnostics hold exactly one error, the last diagnostic
 *     (warnings may come before it); it reads "fuzz.tc:L:C: error: ..." with L:C inside
 *     the input, and its source line and caret show that position; the
 *     error count is 1 and only the diagnostics are set;
 *   - on 0 there is no error, the outputs are set, a second compilation
 *     gives byte-identical outputs (C, header, IR, op list, diagnostics),
 *     and compiling with other options (--checks, a prefix, a header name,
 *     --schedule=none) also succeeds with the same IR and diagnostics.
 * Warnings must be well formed too ("fuzz.tc:L:C: warning: ..." inside the
 * input), and their count must match the warning count.
 *
 * The oracles live in oracle.h, shared with fuzz_graph.c.
 *
 * Built three ways: by scripts/fuzz.sh with clang -fsanitize=fuzzer, by
 * make check as fuzz/fuzz_replay (with fuzz/replay_main.c), and under ASan
 * by make check-all. Build with -DLGEN_FUZZ_SKIP_KNOWN to skip inputs that
 * trigger already-reported lgen bugs (for long campaigns only). */
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef LGEN_FUZZ_SKIP_KNOWN
/* Inputs that reach lgen bugs already reported (see fuzz/corpus/crash-*):
 * a name that becomes "lgen_...", "LGEN_..." or "__..." in C loops forever
 * in names_claim. */
static int known_bug(const uint8_t *data, size_t size) {
  for (size_t i = 0; i + 1 < size; i++) {
    if ((data[i] == '_' || data[i] == '-') && (data[i + 1] == '_' || data[i + 1] == '-'))
      return 1;
    if (i + 4 < size && (memcmp(data + i, "lgen", 4) == 0 || memcmp(data + i, "LGEN", 4) == 0))
      return 1;
  }
  return 0;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
#ifdef LGEN_FUZZ_SKIP_KNOWN
  if (known_bug(data, size))
    return 0;
#endif
  fuzz_check_compile("fuzz.tc", data, size);
  return 0;
}
