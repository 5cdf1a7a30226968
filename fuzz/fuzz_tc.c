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
 * Built three ways: by scripts/fuzz.sh with clang -fsanitize=fuzzer, by
 * make check as fuzz/fuzz_replay (with fuzz/replay_main.c), and under ASan
 * by make check-all. Build with -DLGEN_FUZZ_SKIP_KNOWN to skip inputs that
 * trigger already-reported lgen bugs (for long campaigns only). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lgen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const NAME = "fuzz.tc";

static void fail(const char *what, const char *diagnostics) {
  fprintf(stderr, "fuzz_tc: oracle violated: %s\n", what);
  if (diagnostics)
    fprintf(stderr, "---- diagnostics ----\n%s---------------------\n", diagnostics);
  abort();
}

/* ---- the input's lines, counted as the lexer counts them ---- */

typedef struct {
  const uint8_t *data;
  size_t size;
  size_t *starts; /* byte offset where each line starts */
  size_t *lens;   /* its length without the newline */
  size_t nlines;
} Lines;

static void lines_init(Lines *l, const uint8_t *data, size_t size) {
  l->data = data;
  l->size = size;
  l->starts = malloc(sizeof(size_t) * (size + 1));
  l->lens = malloc(sizeof(size_t) * (size + 1));
  if (!l->starts || !l->lens)
    abort();
  l->nlines = 0;
  size_t start = 0;
  size_t i = 0;
  while (i < size) {
    uint8_t c = data[i];
    if (c == '\n' || c == '\r') {
      l->starts[l->nlines] = start;
      l->lens[l->nlines++] = i - start;
      /* CR, LF, CRLF and LFCR are each one newline */
      if (i + 1 < size && (data[i + 1] == '\n' || data[i + 1] == '\r') && data[i + 1] != c)
        i++;
      start = i + 1;
    }
    i++;
  }
  l->starts[l->nlines] = start;
  l->lens[l->nlines++] = size - start;
}

static void lines_free(Lines *l) {
  free(l->starts);
  free(l->lens);
}

/* ---- diagnostics ---- */

typedef struct {
  int errors;
  int warnings;
  int last_is_error; /* 1 if the last diagnostic is an error */
} DiagSummary;

static const char *next_line(const char *p, const char **end) {
  const char *nl = strchr(p, '\n');
  *end = nl ? nl : p + strlen(p);
  return nl ? nl + 1 : NULL;
}

/* Parses a non-negative decimal at *p; -1 if none or too large. */
static long parse_num(const char **p) {
  long v = 0;
  if (**p < '0' || **p > '9')
    return -1;
  while (**p >= '0' && **p <= '9') {
    if (v > 100000000)
      return -1;
    v = v * 10 + (**p - '0');
    (*p)++;
  }
  return v;
}

/* Checks every diagnostic: "fuzz.tc:L:C: KIND: message", the source line
 * (non-printable bytes shown as '?') and a caret under column C. */
static DiagSummary check_diagnostics(const char *diags, const Lines *lines) {
  DiagSummary s = {0, 0, 0};
  const char *p = diags;
  size_t name_len = strlen(NAME);
  while (p && *p) {
    const char *end;
    const char *header = p;
    p = next_line(p, &end);
    if (!p)
      fail("a diagnostic does not end with a newline", diags);
    if (strncmp(header, NAME, name_len) != 0 || header[name_len] != ':')
      fail("a diagnostic does not start with fuzz.tc:L:C:", diags);
    const char *q = header + name_len + 1;
    long line = parse_num(&q);
    if (line < 0 || *q++ != ':')
      fail("a diagnostic has no line number", diags);
    long col = parse_num(&q);
    if (col < 0 || *q++ != ':' || *q++ != ' ')
      fail("a diagnostic has no column number", diags);
    int is_error;
    if (strncmp(q, "error: ", 7) == 0)
      is_error = 1;
    else if (strncmp(q, "warning: ", 9) == 0)
      is_error = 0;
    else
      fail("a diagnostic is neither an error nor a warning", diags);
    if ((is_error ? 7 : 9) + q >= end)
      fail("a diagnostic has no message", diags);
    if (line < 1 || (size_t)line > lines->nlines)
      fail("a diagnostic's line is outside the input", diags);
    size_t len = lines->lens[line - 1];
    if (col < 1 || (size_t)col > len + 1)
      fail("a diagnostic's column is outside its line", diags);
    /* the source line, as diag.c shows it */
    const char *src = p;
    p = next_line(p, &end);
    if (!p)
      fail("a diagnostic has no source line", diags);
    const uint8_t *text = lines->data + lines->starts[line - 1];
    if ((size_t)(end - src) != len)
      fail("a diagnostic's source line is not line L of the input", diags);
    for (size_t i = 0; i < len; i++) {
      uint8_t c = text[i];
      uint8_t shown = (c == '\t' || (c >= 0x20 && c < 0x7f) || c >= 0x80) ? c : '?';
      if ((uint8_t)src[i] != shown)
        fail("a diagnostic's source line is not line L of the input", diags);
    }
    /* the caret line: one blank (tab or space) per byte before column C */
    const char *caret = p;
    p = next_line(p, &end);
    if (!p)
      fail("a diagnostic has no caret line", diags);
    if ((size_t)(end - caret) != (size_t)col || caret[col - 1] != '^')
      fail("a diagnostic's caret is not under column C", diags);
    for (long i = 0; i < col - 1; i++)
      if (caret[i] != (text[i] == '\t' ? '\t' : ' '))
        fail("a diagnostic's caret line is misaligned", diags);
    if (is_error)
      s.errors++;
    else
      s.warnings++;
    s.last_is_error = is_error;
  }
  return s;
}

static int same(const char *a, const char *b) {
  if (!a || !b)
    return a == b;
  return strcmp(a, b) == 0;
}

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
  lgen_source src = {NAME, (const char *)data, size};
  lgen_options opt = {0};
  lgen_output out;
  int status = lgen_compile(&src, 1, &opt, &out);
  if (!out.diagnostics)
    fail("no diagnostics string", NULL);
  if (status == LGEN_INTERNAL_ERROR)
    fail("internal error (status 3)", out.diagnostics);
  if (status != LGEN_OK && status != LGEN_INPUT_ERROR)
    fail("unknown status", out.diagnostics);

  Lines lines;
  lines_init(&lines, data, size);
  DiagSummary s = check_diagnostics(out.diagnostics, &lines);
  lines_free(&lines);
  if (s.warnings != out.warnings)
    fail("the warning count does not match the warnings shown", out.diagnostics);

  if (status == LGEN_INPUT_ERROR) {
    if (s.errors != 1 || out.errors != 1)
      fail("a failed compilation must report exactly one error", out.diagnostics);
    /* the first error stops the compilation: nothing comes after it */
    if (!s.last_is_error)
      fail("a diagnostic follows the error", out.diagnostics);
    if (out.c_source || out.header || out.ir || out.op_list || out.schedule)
      fail("a failed compilation set an output", out.diagnostics);
    lgen_output_free(&out);
    return 0;
  }

  if (s.errors != 0 || out.errors != 0)
    fail("a successful compilation reported an error", out.diagnostics);
  if (!out.c_source || !out.header || !out.ir || !out.op_list || !out.schedule)
    fail("a successful compilation left an output unset", out.diagnostics);

  /* determinism: the same input gives the same bytes */
  lgen_output again;
  if (lgen_compile(&src, 1, &opt, &again) != LGEN_OK)
    fail("the second compilation failed", again.diagnostics);
  if (!same(out.c_source, again.c_source))
    fail("two compilations gave different C", out.diagnostics);
  if (!same(out.header, again.header) || !same(out.ir, again.ir) || !same(out.op_list, again.op_list) ||
      !same(out.schedule, again.schedule) || !same(out.diagnostics, again.diagnostics))
    fail("two compilations gave different header, IR, op list, schedule or diagnostics", out.diagnostics);
  lgen_output_free(&again);

  /* a prefix, --checks and the plain schedule change the C, never whether
   * a valid input stays valid, nor its IR */
  lgen_options other = {0};
  other.prefix = "pfx_";
  other.checks = 1;
  other.header_name = "fuzz_kernels.h";
  other.schedule = "none";
  lgen_output checked;
  if (lgen_compile(&src, 1, &other, &checked) != LGEN_OK)
    fail("compiling with --checks --prefix --schedule=none failed where the defaults succeeded",
         checked.diagnostics);
  if (!same(out.ir, checked.ir) || !same(out.diagnostics, checked.diagnostics))
    fail("options changed the IR or the diagnostics", checked.diagnostics);
  if (!strstr(checked.header, "#ifndef PFX_FUZZ_KERNELS_H"))
    fail("the header guard does not follow the prefix and header name", NULL);
  lgen_output_free(&checked);
  lgen_output_free(&out);
  return 0;
}
