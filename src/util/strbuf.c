/* strbuf.c - append-only heap string used by the emitters and diagnostics. */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sb_reserve(StrBuf *sb, size_t extra) {
  if (sb->len + extra + 1 <= sb->cap)
    return;
  size_t cap = sb->cap ? sb->cap : 256;
  while (cap < sb->len + extra + 1)
    cap *= 2;
  sb->data = xrealloc(sb->data, cap);
  sb->cap = cap;
}

void sb_putn(StrBuf *sb, const char *s, size_t n) {
  sb_reserve(sb, n);
  memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = '\0';
}

void sb_insert(StrBuf *sb, size_t at, const char *s, size_t n) {
  if (n == 0)
    return;
  if (!sb->data) {
    sb_putn(sb, s, n);
    return;
  }
  sb_reserve(sb, n);
  memmove(sb->data + at + n, sb->data + at, sb->len - at + 1);
  memcpy(sb->data + at, s, n);
  sb->len += n;
}

void sb_puts(StrBuf *sb, const char *s) { sb_putn(sb, s, strlen(s)); }

void sb_putc(StrBuf *sb, char c) { sb_putn(sb, &c, 1); }

void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  /* into the room there is, once, when the text fits (it mostly does) */
  size_t room = sb->data ? sb->cap - sb->len : 0;
  int n = vsnprintf(room ? sb->data + sb->len : NULL, room, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    if (room)
      sb->data[sb->len] = '\0';
    return;
  }
  if ((size_t)n < room) {
    sb->len += (size_t)n;
    return;
  }
  sb_reserve(sb, (size_t)n);
  vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
  sb->len += (size_t)n;
}

void sb_printf(StrBuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(sb, fmt, ap);
  va_end(ap);
}

const char *sb_cstr(StrBuf *sb) { return sb->data ? sb->data : ""; }

void sb_free(StrBuf *sb) {
  free(sb->data);
  sb->data = NULL;
  sb->len = sb->cap = 0;
}

void sb_put_printable(StrBuf *sb, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p >= 0x20 && *p < 0x7f)
      sb_putc(sb, (char)*p);
    else
      sb_printf(sb, "\\x%02x", *p);
}
