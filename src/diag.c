/* diag.c - formats diagnostics gcc-style, with the source line and a caret. */
#include "diag.h"

#include <stdlib.h>

/* The location of a byte offset, counting lines as the .tc lexer does (CR,
 * LF, CRLF and LFCR are each one newline; a column counts bytes). */
Loc diag_loc_at(const Source *src, size_t offset) {
  const char *t = src->text;
  if (offset > src->len)
    offset = src->len;
  int line = 1;
  size_t start = 0;
  for (size_t i = 0; i < offset; i++) {
    if (t[i] != '\n' && t[i] != '\r')
      continue;
    if (i + 1 < src->len && (t[i + 1] == '\n' || t[i + 1] == '\r') && t[i + 1] != t[i]) {
      if (i + 1 == offset) { /* inside a two-byte newline: point at its first byte */
        offset = i;
        break;
      }
      i++;
    }
    line++;
    start = i + 1;
  }
  return (Loc){.src = src, .line = line, .col = (int)(offset - start + 1), .offset = offset};
}

/* A line longer than this is shown as an excerpt around the column: the
 * EXCERPT_WIDTH bytes from EXCERPT_BEFORE before it, with "..." where it
 * is cut (a model in JSON is often one line of megabytes). */
enum { MAX_SHOWN_LINE = 120, EXCERPT_BEFORE = 50, EXCERPT_WIDTH = 100 };

static bool utf8_continuation(const Source *src, size_t i) {
  return i < src->len && ((unsigned char)src->text[i] & 0xc0) == 0x80;
}

static void print_source_line(StrBuf *out, Loc loc) {
  const Source *src = loc.src;
  if (!src || loc.offset > src->len)
    return;
  size_t start = loc.offset;
  while (start > 0 && src->text[start - 1] != '\n' && src->text[start - 1] != '\r')
    start--;
  size_t end = loc.offset;
  while (end < src->len && src->text[end] != '\n' && src->text[end] != '\r')
    end++;
  size_t from = start, to = end;
  if (end - start > MAX_SHOWN_LINE) {
    from = loc.offset - start > EXCERPT_BEFORE ? loc.offset - EXCERPT_BEFORE : start;
    while (from > start && from < loc.offset && utf8_continuation(src, from)) /* whole characters */
      from++;
    to = end - from > EXCERPT_WIDTH ? from + EXCERPT_WIDTH : end;
    while (to < end && to > loc.offset && utf8_continuation(src, to))
      to--;
  }
  const char *pre = from > start ? "..." : "";
  sb_puts(out, pre);
  /* Non-printable bytes would garble the terminal: show them as '?'. */
  for (size_t i = from; i < to; i++) {
    unsigned char c = (unsigned char)src->text[i];
    sb_putc(out, (c == '\t' || (c >= 0x20 && c < 0x7f) || c >= 0x80) ? (char)c : '?');
  }
  sb_puts(out, to < end ? "...\n" : "\n");
  /* Keep tabs in the caret line so the caret lines up under any tab width;
   * one space per character, not per byte, so that it lines up after
   * multi-byte UTF-8 too (each of a terminal's columns shows a character) */
  for (size_t i = 0; pre[i]; i++)
    sb_putc(out, ' ');
  for (size_t i = from; i < loc.offset; i++)
    if (!utf8_continuation(src, i))
      sb_putc(out, src->text[i] == '\t' ? '\t' : ' ');
  sb_puts(out, "^\n");
}

/* Messages quote names from the input: control characters in them (an
 * escape sequence, a carriage return, a newline: a diagnostic is one line)
 * are shown as \xNN instead of acting on the terminal. */
static void put_message(StrBuf *out, const char *fmt, va_list ap) {
  StrBuf msg = {0};
  sb_vprintf(&msg, fmt, ap);
  for (const unsigned char *p = (const unsigned char *)sb_cstr(&msg); *p; p++)
    if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
      sb_printf(out, "\\x%02x", *p);
    else
      sb_putc(out, (char)*p);
  sb_free(&msg);
}

void diag_where(StrBuf *out, Loc loc) {
  if (!loc.src)
    sb_puts(out, "?");
  else if (loc.field)
    sb_printf(out, "%s: byte %zu", loc.src->name, loc.offset);
  else
    sb_printf(out, "%s:%d", loc.src->name, loc.line);
}

static void report(Diag *diag, Loc loc, const char *kind, const char *fmt, va_list ap) {
  if (loc.src && loc.field) {
    sb_printf(&diag->out, "%s: byte %zu (", loc.src->name, loc.offset);
    sb_put_printable(&diag->out, loc.field);
    sb_printf(&diag->out, "): %s: ", kind);
    put_message(&diag->out, fmt, ap);
    sb_putc(&diag->out, '\n');
    return;
  }
  if (loc.src)
    sb_printf(&diag->out, "%s:%d:%d: %s: ", loc.src->name, loc.line, loc.col, kind);
  else
    sb_printf(&diag->out, "lgen: %s: ", kind);
  put_message(&diag->out, fmt, ap);
  sb_putc(&diag->out, '\n');
  print_source_line(&diag->out, loc);
}

void diag_error(Diag *diag, Loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(diag, loc, "error", fmt, ap);
  va_end(ap);
  diag->errors++;
  longjmp(*diag->on_error, DIAG_UNWIND_INPUT);
}

void diag_warning(Diag *diag, Loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(diag, loc, "warning", fmt, ap);
  va_end(ap);
  diag->warnings++;
}

/* An error with no place in a source ("lgen: error: MESSAGE"), counted;
 * the caller then unwinds. */
static void put_unlocated(Diag *diag, const char *prefix, const char *fmt, va_list ap) {
  sb_puts(&diag->out, prefix);
  put_message(&diag->out, fmt, ap);
  sb_putc(&diag->out, '\n');
  diag->errors++;
}

void diag_usage_error(Diag *diag, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_unlocated(diag, "lgen: error: ", fmt, ap);
  va_end(ap);
  longjmp(*diag->on_error, DIAG_UNWIND_USAGE);
}

void diag_bug(Diag *diag, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_unlocated(diag, "lgen: internal error (lgen bug): ", fmt, ap);
  va_end(ap);
  longjmp(*diag->on_error, DIAG_UNWIND_BUG);
}

void diag_io_error(Diag *diag, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  put_unlocated(diag, "lgen: error: ", fmt, ap);
  va_end(ap);
  longjmp(*diag->on_error, DIAG_UNWIND_IO);
}
