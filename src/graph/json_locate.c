/* json_locate.c - JSON pointer to byte offset, and base64 (see graph.h).
 *
 * Jansson keeps no positions for parsed values (akheron/jansson#272), so a
 * diagnostic about a graph names the offending value by its JSON pointer
 * (RFC 6901) and this scanner finds it again in the raw text. It re-reads
 * only what it must: the members and elements on the pointer's path, and it
 * skips everything else by counting brackets, without building anything.
 *
 * The text has already been accepted by Jansson when a front-end reports an
 * error, but the scanner does not rely on that: it is fuzzed on arbitrary
 * bytes. Every loop consumes at least one byte per iteration, there is no
 * recursion (nesting is a counter), and on anything unexpected the walk
 * stops and answers the deepest value it has reached so far. */
#include "graph/graph.h"

#include <string.h>

/* ---- lexical helpers ---- */

static bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static size_t skip_space(const char *s, size_t len, size_t pos) {
  while (pos < len && is_json_space(s[pos]))
    pos++;
  return pos;
}

/* s[pos] is '"': the offset just after the closing quote (len if none). */
static size_t skip_string(const char *s, size_t len, size_t pos) {
  pos++;
  while (pos < len) {
    if (s[pos] == '\\')
      pos += 2;
    else if (s[pos] == '"')
      return pos + 1;
    else
      pos++;
  }
  return len;
}

static bool ends_scalar(char c) {
  return is_json_space(c) || c == ',' || c == ':' || c == '{' || c == '}' || c == '[' || c == ']' || c == '"';
}

/* The offset just after the value that starts at pos. Containers are skipped
 * by counting brackets (of either kind: the text is trusted to be balanced,
 * and if it is not, the answer is merely imprecise). A scalar is a run of
 * bytes up to a structural character; it may be empty on malformed input,
 * which the callers detect because they then see no ',' to go on with. */
static size_t skip_value(const char *s, size_t len, size_t pos) {
  if (pos >= len)
    return len;
  if (s[pos] == '"')
    return skip_string(s, len, pos);
  if (s[pos] == '{' || s[pos] == '[') {
    size_t depth = 0;
    while (pos < len) {
      char c = s[pos];
      if (c == '"') {
        pos = skip_string(s, len, pos);
        continue;
      }
      pos++;
      if (c == '{' || c == '[') {
        depth++;
      } else if (c == '}' || c == ']') {
        if (--depth == 0)
          return pos;
      }
    }
    return len;
  }
  while (pos < len && !ends_scalar(s[pos]))
    pos++;
  return pos;
}

static bool starts_value(char c) {
  return c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' ||
         c == 'n';
}

/* ---- decoded byte streams: a member's key and a pointer's token ----
 *
 * Keys may spell characters as escapes ("\u00e9", "\/") and pointer tokens
 * as ~0 and ~1, so both sides are compared as the bytes they decode to, one
 * byte at a time, without a buffer for the whole string. */

typedef struct {
  const char *s;
  size_t pos, end;   /* raw bytes still to decode: s[pos..end) */
  uint8_t pending[4]; /* the rest of a multi-byte UTF-8 sequence from \uXXXX */
  int npending, next_pending;
} KeyReader;

static int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Four hex digits at s[pos..pos+4), or -1. */
static long read_hex4(const char *s, size_t end, size_t pos) {
  if (pos > end || end - pos < 4)
    return -1;
  long v = 0;
  for (int i = 0; i < 4; i++) {
    int d = hex_digit(s[pos + (size_t)i]);
    if (d < 0)
      return -1;
    v = v * 16 + d;
  }
  return v;
}

static int utf8_encode(unsigned long cp, uint8_t out[4]) {
  if (cp < 0x80) {
    out[0] = (uint8_t)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (uint8_t)(0xC0 | (cp >> 6));
    out[1] = (uint8_t)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (uint8_t)(0xE0 | (cp >> 12));
    out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (uint8_t)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (uint8_t)(0xF0 | (cp >> 18));
  out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (uint8_t)(0x80 | (cp & 0x3F));
  return 4;
}

/* Decodes "\uXXXX" (and a following low surrogate) at r->pos into pending
 * bytes; false on a malformed escape. */
static bool decode_unicode_escape(KeyReader *r) {
  long cp = read_hex4(r->s, r->end, r->pos + 2);
  if (cp < 0)
    return false;
  r->pos += 6;
  if (cp >= 0xD800 && cp <= 0xDBFF && r->end - r->pos >= 6 && r->s[r->pos] == '\\' && r->s[r->pos + 1] == 'u') {
    long lo = read_hex4(r->s, r->end, r->pos + 2);
    if (lo >= 0xDC00 && lo <= 0xDFFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      r->pos += 6;
    }
  }
  r->npending = utf8_encode((unsigned long)cp, r->pending);
  r->next_pending = 0;
  return true;
}

/* The next decoded byte of the key, -1 at its end, -2 on a bad escape. */
static int key_next(KeyReader *r) {
  if (r->next_pending < r->npending)
    return r->pending[r->next_pending++];
  if (r->pos >= r->end)
    return -1;
  char c = r->s[r->pos];
  if (c != '\\') {
    r->pos++;
    return (unsigned char)c;
  }
  if (r->end - r->pos < 2)
    return -2;
  char e = r->s[r->pos + 1];
  static const char escapes[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
  for (const char *p = escapes; *p; p += 2) {
    if (*p == e) {
      r->pos += 2;
      return (unsigned char)p[1];
    }
  }
  if (e == 'u' && decode_unicode_escape(r))
    return key_next(r);
  return -2;
}

/* The next decoded byte of a pointer token ("~0" is '~', "~1" is '/'), -1
 * at its end. */
static int token_next(const char *tok, size_t toklen, size_t *pos) {
  if (*pos >= toklen)
    return -1;
  char c = tok[*pos];
  if (c == '~' && *pos + 1 < toklen && (tok[*pos + 1] == '0' || tok[*pos + 1] == '1')) {
    *pos += 2;
    return tok[*pos - 1] == '0' ? '~' : '/';
  }
  (*pos)++;
  return (unsigned char)c;
}

/* Does the JSON string s[start..end) (quotes included) decode to the token? */
static bool key_equals(const char *s, size_t start, size_t end, const char *tok, size_t toklen) {
  if (end - start < 2 || s[end - 1] != '"')
    return false; /* unterminated */
  KeyReader r = {s, start + 1, end - 1, {0}, 0, 0};
  size_t tpos = 0;
  for (;;) {
    int a = key_next(&r);
    int b = token_next(tok, toklen, &tpos);
    if (a == -2 || a != b)
      return false;
    if (a == -1)
      return true;
  }
}

/* ---- one step of the walk ---- */

enum { NOT_FOUND = -1 };

/* s[pos] is '{': the offset of the value of the member named by the token. */
static long long find_member(const char *s, size_t len, size_t pos, const char *tok, size_t toklen) {
  pos++;
  for (;;) {
    pos = skip_space(s, len, pos);
    if (pos >= len || s[pos] != '"')
      return NOT_FOUND;
    size_t key = pos;
    pos = skip_string(s, len, pos);
    bool match = key_equals(s, key, pos, tok, toklen);
    pos = skip_space(s, len, pos);
    if (pos >= len || s[pos] != ':')
      return NOT_FOUND;
    pos = skip_space(s, len, pos + 1);
    if (pos >= len)
      return NOT_FOUND;
    if (match)
      return (long long)pos;
    pos = skip_space(s, len, skip_value(s, len, pos));
    if (pos >= len || s[pos] != ',')
      return NOT_FOUND;
    pos++;
  }
}

/* The token as an array index: decimal digits only; false otherwise. */
static bool parse_index(const char *tok, size_t toklen, size_t *out) {
  if (toklen == 0)
    return false;
  size_t v = 0;
  for (size_t i = 0; i < toklen; i++) {
    if (tok[i] < '0' || tok[i] > '9' || v > (SIZE_MAX - 9) / 10)
      return false;
    v = v * 10 + (size_t)(tok[i] - '0');
  }
  *out = v;
  return true;
}

/* s[pos] is '[': the offset of element `index`. */
static long long find_element(const char *s, size_t len, size_t pos, size_t index) {
  pos++;
  for (size_t i = 0;; i++) {
    pos = skip_space(s, len, pos);
    if (pos >= len || s[pos] == ']')
      return NOT_FOUND;
    if (i == index)
      return (long long)pos;
    pos = skip_space(s, len, skip_value(s, len, pos));
    if (pos >= len || s[pos] != ',')
      return NOT_FOUND;
    pos++;
  }
}

size_t json_locate(const char *text, size_t len, const char *pointer) {
  if (!text)
    return 0;
  size_t pos = skip_space(text, len, 0);
  if (pos >= len || !starts_value(text[pos]))
    return 0;
  if (!pointer || pointer[0] != '/')
    return pos;
  const char *tok = pointer + 1;
  for (;;) {
    size_t toklen = strcspn(tok, "/");
    long long next = NOT_FOUND;
    size_t index;
    if (text[pos] == '{')
      next = find_member(text, len, pos, tok, toklen);
    else if (text[pos] == '[' && parse_index(tok, toklen, &index))
      next = find_element(text, len, pos, index);
    if (next == NOT_FOUND)
      return pos;
    pos = (size_t)next;
    if (tok[toklen] != '/')
      return pos;
    tok += toklen + 1;
  }
}

/* ---- base64 (RFC 4648, standard alphabet) ---- */

static int base64_value(unsigned char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

bool base64_decode(const char *s, size_t n, Arena *arena, uint8_t **out, size_t *out_len) {
  /* Padding is optional, but when it is there it must complete the last
   * group of four; one leftover character cannot encode a byte. */
  size_t pad = 0;
  while (n > 0 && s[n - 1] == '=' && pad < 2) {
    n--;
    pad++;
  }
  if ((pad && (n + pad) % 4 != 0) || n % 4 == 1)
    return false;
  size_t bytes = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
  uint8_t *buf = arena_alloc(arena, bytes ? bytes : 1);
  size_t o = 0;
  uint32_t acc = 0;
  int nbits = 0;
  for (size_t i = 0; i < n; i++) {
    int v = base64_value((unsigned char)s[i]);
    if (v < 0)
      return false;
    acc = (acc << 6) | (uint32_t)v;
    nbits += 6;
    if (nbits >= 8) {
      nbits -= 8;
      buf[o++] = (uint8_t)(acc >> nbits);
      acc &= (1u << nbits) - 1;
    }
  }
  *out = buf;
  *out_len = o;
  return true;
}
