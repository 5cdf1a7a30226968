/* oracle.h - the oracles every lgen fuzz harness applies to one
 * lgen_compile, parametrised by the source's name (fuzz_tc.c, fuzz_graph.c).
 *
 *   fuzz_check_compile(name, data, size): compiles the bytes as one source
 *   called `name` and abort()s, saying why, when
 *     - lgen_compile returns anything but 0 or 1 (3 is an internal error);
 *     - a diagnostic is not "NAME:L:C: error|warning: message", the source
 *       line L as diag.c shows it, and a caret under column C (one caret
 *       column per character, not per byte; lines as the
 *       .tc lexer counts them: CR, LF, CRLF and LFCR are one newline each);
 *     - on 1: not exactly one error, not last, or an output is set;
 *     - on 0: an error, an unset output, a second compilation that differs
 *       in any byte, or other options (--checks, a prefix, a header name,
 *       --schedule=none) that fail or change the IR or the diagnostics. */
#ifndef LGEN_FUZZ_ORACLE_H
#define LGEN_FUZZ_ORACLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lgen.h"

/* The constants a fuzzed model may make lgen hold (--max-constant-bytes):
 * 256 MiB instead of the default 2 GiB, so that a model at the limit (a
 * Trilu mask of 2^31 elements, a OneHot) meets the limit's located error
 * instead of libFuzzer's 2 GB RSS limit, which the default would pass. */
#define FUZZ_MAX_CONSTANT_BYTES (256LL << 20)

static void fuzz_fail(const char *what, const char *diagnostics) {
  fprintf(stderr, "fuzz oracle violated: %s\n", what);
  if (diagnostics)
    fprintf(stderr, "---- diagnostics ----\n%s---------------------\n", diagnostics);
  abort();
}

/* ---- the input's lines ---- */

typedef struct {
  const uint8_t *data;
  size_t *starts; /* byte offset where each line starts */
  size_t *lens;   /* its length without the newline */
  size_t nlines;
  size_t size; /* of the input */
} FuzzLines;

static void fuzz_lines_init(FuzzLines *l, const uint8_t *data, size_t size) {
  l->data = data;
  l->size = size;
  l->starts = malloc(sizeof(size_t) * (size + 1));
  l->lens = malloc(sizeof(size_t) * (size + 1));
  if (!l->starts || !l->lens)
    abort();
  l->nlines = 0;
  size_t start = 0;
  for (size_t i = 0; i < size; i++) {
    uint8_t c = data[i];
    if (c != '\n' && c != '\r')
      continue;
    l->starts[l->nlines] = start;
    l->lens[l->nlines++] = i - start;
    if (i + 1 < size && (data[i + 1] == '\n' || data[i + 1] == '\r') && data[i + 1] != c)
      i++;
    start = i + 1;
  }
  l->starts[l->nlines] = start;
  l->lens[l->nlines++] = size - start;
}

static void fuzz_lines_free(FuzzLines *l) {
  free(l->starts);
  free(l->lens);
}

/* ---- diagnostics ---- */

typedef struct {
  int errors, warnings;
  int last_is_error;
} FuzzDiagSummary;

static const char *fuzz_next_line(const char *p, const char **end) {
  const char *nl = strchr(p, '\n');
  *end = nl ? nl : p + strlen(p);
  return nl ? nl + 1 : NULL;
}

static long fuzz_parse_num(const char **p) {
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

static FuzzDiagSummary fuzz_check_diagnostics(const char *name, const char *diags, const FuzzLines *lines) {
  FuzzDiagSummary s = {0, 0, 0};
  size_t name_len = strlen(name);
  const char *p = diags;
  while (p && *p) {
    const char *end;
    const char *header = p;
    p = fuzz_next_line(p, &end);
    if (!p)
      fuzz_fail("a diagnostic does not end with a newline", diags);
    if (strncmp(header, name, name_len) != 0 || header[name_len] != ':')
      fuzz_fail("a diagnostic does not start with NAME:L:C:", diags);
    if (strncmp(header + name_len, ": byte ", 7) == 0) {
      /* a binary input (ONNX protobuf): "NAME: byte N (FIELD PATH): KIND: MSG", no source line */
      const char *q = header + name_len + 7;
      long offset = fuzz_parse_num(&q);
      if (offset < 0 || (size_t)offset > lines->size || strncmp(q, " (", 2) != 0)
        fuzz_fail("a diagnostic's byte offset is outside the input", diags);
      const char *err = strstr(q, "): error: "), *warn = strstr(q, "): warning: ");
      const char *kind = err && (!warn || err < warn) ? err : warn;
      if (!kind || kind >= end || (size_t)(end - kind) <= (kind == err ? 10u : 12u))
        fuzz_fail("a binary input's diagnostic is not 'NAME: byte N (PATH): KIND: MESSAGE'", diags);
      if (kind == err)
        s.errors++;
      else
        s.warnings++;
      s.last_is_error = kind == err;
      continue;
    }
    const char *q = header + name_len + 1;
    long line = fuzz_parse_num(&q);
    if (line < 0 || *q++ != ':')
      fuzz_fail("a diagnostic has no line number", diags);
    long col = fuzz_parse_num(&q);
    if (col < 0 || *q++ != ':' || *q++ != ' ')
      fuzz_fail("a diagnostic has no column number", diags);
    int is_error = 0;
    if (strncmp(q, "error: ", 7) == 0)
      is_error = 1;
    else if (strncmp(q, "warning: ", 9) != 0)
      fuzz_fail("a diagnostic is neither an error nor a warning", diags);
    if ((is_error ? 7 : 9) + q >= end)
      fuzz_fail("a diagnostic has no message", diags);
    if (line < 1 || (size_t)line > lines->nlines)
      fuzz_fail("a diagnostic's line is outside the input", diags);
    size_t len = lines->lens[line - 1];
    if (col < 1 || (size_t)col > len + 1)
      fuzz_fail("a diagnostic's column is outside its line", diags);
    const char *src = p;
    p = fuzz_next_line(p, &end);
    if (!p)
      fuzz_fail("a diagnostic has no source line", diags);
    const uint8_t *text = lines->data + lines->starts[line - 1];
    /* a line over 120 bytes is an excerpt: 100 bytes from 50 before the
     * column, whole UTF-8 characters, "..." where cut (diag.c) */
    size_t at = (size_t)col - 1, from = 0, to = len;
    if (len > 120) {
      from = at > 50 ? at - 50 : 0;
      while (from > 0 && from < at && (text[from] & 0xc0) == 0x80)
        from++;
      to = len - from > 100 ? from + 100 : len;
      while (to < len && to > at && (text[to] & 0xc0) == 0x80)
        to--;
    }
    size_t pre = from > 0 ? 3 : 0, post = to < len ? 3 : 0;
    if ((size_t)(end - src) != pre + (to - from) + post || (pre && strncmp(src, "...", 3) != 0) ||
        (post && strncmp(end - 3, "...", 3) != 0))
      fuzz_fail("a diagnostic's source line is not line L of the input", diags);
    for (size_t i = from; i < to; i++) {
      uint8_t c = text[i];
      uint8_t shown = (c == '\t' || (c >= 0x20 && c < 0x7f) || c >= 0x80) ? c : '?';
      if ((uint8_t)src[pre + i - from] != shown)
        fuzz_fail("a diagnostic's source line is not line L of the input", diags);
    }
    const char *caret = p;
    p = fuzz_next_line(p, &end);
    if (!p)
      fuzz_fail("a diagnostic has no caret line", diags);
    /* one caret column per character before C: none for a UTF-8
     * continuation byte (diag.c) */
    size_t shown_cols = pre;
    for (size_t i = from; i < at; i++)
      shown_cols += (text[i] & 0xc0) != 0x80;
    if ((size_t)(end - caret) != shown_cols + 1 || end[-1] != '^')
      fuzz_fail("a diagnostic's caret is not under column C", diags);
    for (size_t i = 0, k = from; i < shown_cols; i++) {
      if (i >= pre)
        while ((text[k] & 0xc0) == 0x80) /* the next character's first byte */
          k++;
      if (caret[i] != (i >= pre && text[k] == '\t' ? '\t' : ' '))
        fuzz_fail("a diagnostic's caret line is misaligned", diags);
      if (i >= pre)
        k++;
    }
    if (is_error)
      s.errors++;
    else
      s.warnings++;
    s.last_is_error = is_error;
  }
  return s;
}

static int fuzz_same(const char *a, const char *b) {
  if (!a || !b)
    return a == b;
  return strcmp(a, b) == 0;
}

static inline void fuzz_check_compile(const char *name, const uint8_t *data, size_t size) {
  lgen_source src = {name, (const char *)data, size};
  lgen_options opt = {0};
  opt.max_constant_bytes = FUZZ_MAX_CONSTANT_BYTES;
  lgen_output out;
  int status = lgen_compile(&src, 1, &opt, &out);
  if (!out.diagnostics)
    fuzz_fail("no diagnostics string", NULL);
  if (status == LGEN_INTERNAL_ERROR)
    fuzz_fail("internal error (status 3)", out.diagnostics);
  if (status != LGEN_OK && status != LGEN_INPUT_ERROR)
    fuzz_fail("unknown status", out.diagnostics);

  FuzzLines lines;
  fuzz_lines_init(&lines, data, size);
  FuzzDiagSummary s = fuzz_check_diagnostics(name, out.diagnostics, &lines);
  fuzz_lines_free(&lines);
  if (s.warnings != out.warnings)
    fuzz_fail("the warning count does not match the warnings shown", out.diagnostics);

  if (status == LGEN_INPUT_ERROR) {
    if (s.errors != 1 || out.errors != 1)
      fuzz_fail("a failed compilation must report exactly one error", out.diagnostics);
    if (!s.last_is_error)
      fuzz_fail("a diagnostic follows the error", out.diagnostics);
    if (out.c_source || out.header || out.ir || out.op_list || out.schedule)
      fuzz_fail("a failed compilation set an output", out.diagnostics);
    lgen_output_free(&out);
    return;
  }
  if (s.errors != 0 || out.errors != 0)
    fuzz_fail("a successful compilation reported an error", out.diagnostics);
  if (!out.c_source || !out.header || !out.ir || !out.op_list || !out.schedule)
    fuzz_fail("a successful compilation left an output unset", out.diagnostics);

  lgen_output again;
  if (lgen_compile(&src, 1, &opt, &again) != LGEN_OK)
    fuzz_fail("the second compilation failed", again.diagnostics);
  if (!fuzz_same(out.c_source, again.c_source))
    fuzz_fail("two compilations gave different C", out.diagnostics);
  if (!fuzz_same(out.header, again.header) || !fuzz_same(out.ir, again.ir) ||
      !fuzz_same(out.op_list, again.op_list) || !fuzz_same(out.schedule, again.schedule) ||
      !fuzz_same(out.diagnostics, again.diagnostics))
    fuzz_fail("two compilations gave different header, IR, op list, schedule or diagnostics", out.diagnostics);
  lgen_output_free(&again);

  lgen_options other = {0};
  other.max_constant_bytes = FUZZ_MAX_CONSTANT_BYTES;
  other.prefix = "pfx_";
  other.checks = 1;
  other.header_name = "fuzz_kernels.h";
  other.schedule = "none";
  lgen_output checked;
  if (lgen_compile(&src, 1, &other, &checked) != LGEN_OK)
    fuzz_fail("compiling with --checks --prefix --schedule=none failed where the defaults succeeded",
              checked.diagnostics);
  if (!fuzz_same(out.ir, checked.ir) || !fuzz_same(out.diagnostics, checked.diagnostics))
    fuzz_fail("options changed the IR or the diagnostics", checked.diagnostics);
  if (!strstr(checked.header, "#ifndef PFX_FUZZ_KERNELS_H"))
    fuzz_fail("the header guard does not follow the prefix and header name", NULL);
  lgen_output_free(&checked);
  lgen_output_free(&out);
}

#endif
