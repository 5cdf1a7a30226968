/* fuzz_schedule.c - libFuzzer harness for schedule files (issue 14, item 8).
 *
 * The bytes are a YAML schedule ("fuzz-schedule.yaml") for a fixed module:
 * a matmul, a conv, a reduction with two comprehensions and an elementwise
 * op, the shapes the schedule reader and the legality checks see most. The
 * oracles of oracle.h, applied to the schedule: status 0 or 1 only; on 1
 * exactly one error, last, located inside the schedule file with its line
 * and caret; on 0 a second compilation gives the same bytes. Built by
 * scripts/fuzz.sh (FUZZ_HARNESSES=schedule) and, as fuzz/fuzz_schedule_replay,
 * by make check, which replays fuzz/corpus-schedule. */
#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char spec[] =
    "def matmul(A: f32(M, K), B: f32(K, N)) -> (C: f32(M, N)) { C(m, n) = std_addf<k>(std_mulf(A(m, k), B(k, n))); }\n"
    "def conv(I: f32(N, H, W, C), G: f32(KH, KW, C, F)) -> (O: f32(N, H - KH + 1, W - KW + 1, F)) {\n"
    "  O(n, h, w, f) = std_addf<kh, kw, c>(std_mulf(I(n, h + kh, w + kw, c), G(kh, kw, c, f)));\n}\n"
    "def rowsum(X: f32(R, S), Y: f32(R)) -> (Z: f32(R), T: f32(R, S)) {\n"
    "  Z(r) = std_addf<s>(X(r, s));\n  T(r, s) = std_mulf(X(r, s), Y(r));\n}\n"
    "def scale(A: f32(N), B: f32(N)) -> (C: f32(N)) { C(i) = std_mulf(A(i), B(i)); }\n";

static int compile(const uint8_t *data, size_t size, lgen_output *out) {
  lgen_source src = {"fuzz.tc", spec, sizeof spec - 1};
  lgen_source sched = {"fuzz-schedule.yaml", (const char *)data, size};
  lgen_options opt = {0};
  opt.schedule = "file";
  opt.schedule_file = &sched;
  return lgen_compile(&src, 1, &opt, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lgen_output out;
  int status = compile(data, size, &out);
  if (!out.diagnostics)
    fuzz_fail("no diagnostics string", NULL);
  if (status != LGEN_OK && status != LGEN_INPUT_ERROR)
    fuzz_fail("status other than 0 or 1", out.diagnostics);
  FuzzLines lines;
  fuzz_lines_init(&lines, data, size);
  FuzzDiagSummary s = fuzz_check_diagnostics("fuzz-schedule.yaml", out.diagnostics, &lines);
  fuzz_lines_free(&lines);
  if (status == LGEN_INPUT_ERROR) {
    if (s.errors != 1 || out.errors != 1 || !s.last_is_error)
      fuzz_fail("a failed compilation must report exactly one error, last", out.diagnostics);
    if (out.c_source || out.schedule)
      fuzz_fail("a failed compilation set an output", out.diagnostics);
  } else {
    lgen_output again;
    if (compile(data, size, &again) != LGEN_OK || !fuzz_same(out.c_source, again.c_source) ||
        !fuzz_same(out.schedule, again.schedule) || !fuzz_same(out.diagnostics, again.diagnostics))
      fuzz_fail("two compilations differ", out.diagnostics);
    lgen_output_free(&again);
  }
  lgen_output_free(&out);
  return 0;
}
