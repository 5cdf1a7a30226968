/* json_locate.c - JSON pointer to byte offset, the JSON front-ends' graph
 * locator, and base64 (see json_locate.h).
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
#include "frontend/json_locate.h"

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

/* The value of each byte as a base64 digit, -1 if it is none: a table
 * rather than range tests, whose branches mispredict on random weights. */
static const signed char base64_digit[256] = {
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 62, -1, -1, -1, 63,
    52, 53, 54, 55, 56, 57, 58, 59, 60, 61, -1, -1, -1, -1, -1, -1,
    -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
    15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, -1, -1, -1, -1, -1,
    -1, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
    41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
};

static int base64_value(unsigned char c) { return base64_digit[c]; }

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
  size_t o = 0, i = 0;
  /* whole groups of four characters (three bytes) first: this runs over
   * every byte of a model's weights */
  for (; n - i >= 4; i += 4) {
    int a = base64_value((unsigned char)s[i]), b = base64_value((unsigned char)s[i + 1]);
    int c = base64_value((unsigned char)s[i + 2]), d = base64_value((unsigned char)s[i + 3]);
    if ((a | b | c | d) < 0)
      return false;
    uint32_t x = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
    buf[o] = (uint8_t)(x >> 16);
    buf[o + 1] = (uint8_t)(x >> 8);
    buf[o + 2] = (uint8_t)x;
    o += 3;
  }
  /* then the last two or three characters: one or two bytes (the bits
   * left over past them are ignored) */
  uint32_t acc = 0;
  for (size_t k = i; k < n; k++) {
    int v = base64_value((unsigned char)s[k]);
    if (v < 0)
      return false;
    acc |= (uint32_t)v << (18 - 6 * (k - i));
  }
  for (size_t k = 0; k + 1 < n - i; k++)
    buf[o++] = (uint8_t)(acc >> (16 - 8 * k));
  *out = buf;
  *out_len = o;
  return true;
}

/* ---- JsonIndex: every pointer's offset from one pass ----
 *
 * A graph's locator runs for every input, output, constant and node when a
 * graph is lowered, and json_locate rescans the text each time, which is
 * quadratic in practice on big models. The index walks the text once and
 * records the offset of every value a pointer reaches, keyed by its
 * canonical pointer (keys decoded, then '~' spelled ~0 and '/' ~1; indices
 * in plain decimal). Elements past the first few of an array are recorded
 * only when they are containers: big arrays of numbers are weights, and an
 * error about one element of them is rare enough to pay for a scan.
 *
 * Any pointer the index lacks goes to json_locate, so the index only has to
 * be right about what it records: the walk mirrors json_locate's rules (the
 * same skip_string, the same scalar runs, brackets of either kind close),
 * records a value only where json_locate would stop for that pointer, and
 * simply stops recording on anything it does not expect. Members that
 * json_locate can never reach are left out with their subtrees: a later
 * duplicate of a key (the first one wins), a key with a bad escape or one
 * that decodes to a NUL byte (no C-string pointer names it). */

enum {
  INDEX_SMALL_ARRAY = 64,  /* elements of any kind recorded per array */
  LINE_BLOCK = 1024        /* bytes per line checkpoint */
};

typedef struct {
  const char *pointer;
  size_t offset;
} IndexSlot;

/* Line and column of the block starts: an offset's line is then one block
 * scan away, and the table stays a small fraction of the text however many
 * lines it has (a pretty-printed data array has one per number). */
typedef struct {
  int line;          /* 1-based line at the block's first byte */
  size_t line_start; /* offset where that line starts */
  size_t scan_from;  /* where a scan resumes: past a newline straddling the block start */
} LineCheckpoint;

struct JsonIndex {
  const char *text;
  size_t len;
  IndexSlot *slots;
  size_t cap, count; /* cap: a power of two */
  LineCheckpoint *lines;
  size_t fallbacks;
};

static uint32_t pointer_hash(const char *s, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static size_t index_slot_of(const JsonIndex *ix, const char *pointer, size_t n) {
  size_t mask = ix->cap - 1;
  size_t i = pointer_hash(pointer, n) & mask;
  while (ix->slots[i].pointer && (strncmp(ix->slots[i].pointer, pointer, n) != 0 || ix->slots[i].pointer[n]))
    i = (i + 1) & mask;
  return i;
}

static void index_grow_slots(Arena *arena, JsonIndex *ix) {
  IndexSlot *old = ix->slots;
  size_t oldcap = ix->cap;
  ix->cap = oldcap ? oldcap * 2 : 256;
  ix->slots = arena_alloc(arena, sizeof *ix->slots * ix->cap);
  for (size_t i = 0; i < oldcap; i++)
    if (old[i].pointer)
      ix->slots[index_slot_of(ix, old[i].pointer, strlen(old[i].pointer))] = old[i];
}

/* Records the pointer (sb) at offset; false if it is already there. */
static bool index_record(Arena *arena, JsonIndex *ix, const StrBuf *sb, size_t offset) {
  if ((ix->count + 1) * 2 > ix->cap)
    index_grow_slots(arena, ix);
  const char *p = sb->len ? sb->data : "";
  size_t s = index_slot_of(ix, p, sb->len);
  if (ix->slots[s].pointer)
    return false;
  ix->slots[s].pointer = arena_strndup(arena, p, sb->len);
  ix->slots[s].offset = offset;
  ix->count++;
  return true;
}

/* Appends "/" and the key s[start..end) (quotes included) as a pointer
 * token; false if no pointer can reach the key. */
static bool append_key_token(StrBuf *sb, const char *s, size_t start, size_t end) {
  sb_putc(sb, '/');
  if (end - start < 2 || s[end - 1] != '"')
    return false;
  KeyReader r = {s, start + 1, end - 1, {0}, 0, 0};
  for (;;) {
    int c = key_next(&r);
    if (c == -1)
      return true;
    if (c == -2 || c == 0)
      return false;
    if (c == '~')
      sb_puts(sb, "~0");
    else if (c == '/')
      sb_puts(sb, "~1");
    else
      sb_putc(sb, (char)c);
  }
}

static void truncate_to(StrBuf *sb, size_t len) {
  sb->len = len;
  if (sb->data)
    sb->data[len] = '\0';
}

/* One open container of the walk. */
typedef struct {
  bool is_object;
  bool recording;   /* values inside it get entries */
  size_t path_len;  /* its pointer's length in the path buffer */
  size_t nelems;    /* arrays: elements seen */
} IndexFrame;

typedef struct {
  Arena *arena;
  JsonIndex *ix;
  StrBuf path;
  IndexFrame *frames;
  size_t depth, cap;
  bool opened; /* the last value opened a container: its contents come next */
} IndexWalk;

static void push_frame(IndexWalk *w, bool is_object, bool recording) {
  if (w->depth == w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 32;
    IndexFrame *frames = arena_alloc(w->arena, sizeof *frames * cap);
    if (w->depth)
      memcpy(frames, w->frames, sizeof *frames * w->depth);
    w->frames = frames;
    w->cap = cap;
  }
  IndexFrame f = {is_object, recording, w->path.len, 0};
  w->frames[w->depth++] = f;
  w->opened = true;
}

/* The value at pos, whose pointer is in w->path; recording says whether it
 * gets an entry. Containers are opened (a frame); anything else is skipped.
 * The offset just after what was consumed, or len to stop the walk. */
static size_t index_value(IndexWalk *w, size_t pos, bool recording) {
  const char *s = w->ix->text;
  size_t len = w->ix->len;
  if (pos >= len || s[pos] == '}' || s[pos] == ']')
    return len;
  if (recording && !index_record(w->arena, w->ix, &w->path, pos))
    recording = false; /* a duplicate key: json_locate stops at the first */
  if (s[pos] == '{' || s[pos] == '[') {
    push_frame(w, s[pos] == '{', recording);
    return pos + 1;
  }
  if (s[pos] == '"')
    return skip_string(s, len, pos);
  size_t end = skip_value(s, len, pos);
  return end == pos ? len : end;
}

/* Inside an object, at a key: records its value. */
static size_t index_member(IndexWalk *w, size_t pos) {
  const char *s = w->ix->text;
  size_t len = w->ix->len;
  IndexFrame *f = &w->frames[w->depth - 1];
  if (pos >= len || s[pos] != '"')
    return len;
  size_t key = pos;
  pos = skip_string(s, len, pos);
  truncate_to(&w->path, f->path_len);
  bool recording = f->recording && append_key_token(&w->path, s, key, pos);
  pos = skip_space(s, len, pos);
  if (pos >= len || s[pos] != ':')
    return len;
  return index_value(w, skip_space(s, len, pos + 1), recording);
}

/* Inside an array, at an element. */
static size_t index_element(IndexWalk *w, size_t pos) {
  IndexFrame *f = &w->frames[w->depth - 1];
  size_t i = f->nelems++;
  const char *s = w->ix->text;
  bool container = pos < w->ix->len && (s[pos] == '{' || s[pos] == '[');
  bool recording = f->recording && (i < INDEX_SMALL_ARRAY || container);
  truncate_to(&w->path, f->path_len);
  if (recording)
    sb_printf(&w->path, "/%zu", i);
  return index_value(w, pos, recording);
}

/* After a value, in the innermost container: ',' goes on with the next
 * member or element, a closing bracket closes containers. */
static size_t index_after_value(IndexWalk *w, size_t pos) {
  const char *s = w->ix->text;
  size_t len = w->ix->len;
  for (;;) {
    pos = skip_space(s, len, pos);
    if (pos >= len || w->depth == 0)
      return len;
    if (s[pos] == ',') {
      pos = skip_space(s, len, pos + 1);
      return w->frames[w->depth - 1].is_object ? index_member(w, pos) : index_element(w, pos);
    }
    if (s[pos] != '}' && s[pos] != ']')
      return len;
    w->depth--;
    pos++;
  }
}

/* Just inside a container that was opened: its first member or element,
 * or its end. */
static size_t index_first(IndexWalk *w, size_t pos) {
  const char *s = w->ix->text;
  size_t len = w->ix->len;
  pos = skip_space(s, len, pos);
  if (pos < len && (s[pos] == '}' || s[pos] == ']')) {
    w->depth--; /* empty */
    return index_after_value(w, pos + 1);
  }
  return w->frames[w->depth - 1].is_object ? index_member(w, pos) : index_element(w, pos);
}

static void index_values(Arena *arena, JsonIndex *ix) {
  size_t pos = skip_space(ix->text, ix->len, 0);
  if (pos >= ix->len || (ix->text[pos] != '{' && ix->text[pos] != '['))
    return; /* a scalar root: the pointer "" is json_locate's fast case */
  IndexWalk w = {arena, ix, {0}, NULL, 0, 0, false};
  push_frame(&w, ix->text[pos] == '{', true);
  pos++;
  /* Every step consumes at least one byte or returns len. */
  while (pos < ix->len) {
    bool opened = w.opened;
    w.opened = false;
    pos = opened ? index_first(&w, pos) : index_after_value(&w, pos);
  }
  sb_free(&w.path);
}

/* Line ends as the .tc lexer and diag.c count them: \n, \r, \r\n and \n\r
 * are one newline each. i is at '\n' or '\r'; returns where the next line
 * starts. */
static size_t newline_end(const char *t, size_t len, size_t i) {
  if (i + 1 < len && (t[i + 1] == '\n' || t[i + 1] == '\r') && t[i + 1] != t[i])
    return i + 2;
  return i + 1;
}

static bool is_newline(char c) { return c == '\n' || c == '\r'; }

static void index_lines(Arena *arena, JsonIndex *ix) {
  size_t nblocks = ix->len / LINE_BLOCK + 1;
  ix->lines = arena_alloc(arena, sizeof *ix->lines * nblocks);
  int line = 1;
  size_t line_start = 0, i = 0;
  for (size_t b = 0; b < nblocks; b++) {
    /* scan on to the block's start (a two-byte newline may straddle it) */
    while (i < b * LINE_BLOCK) {
      if (is_newline(ix->text[i])) {
        i = newline_end(ix->text, ix->len, i);
        line++;
        line_start = i;
      } else {
        i++;
      }
    }
    ix->lines[b].line = line;
    ix->lines[b].line_start = line_start;
    ix->lines[b].scan_from = i;
  }
}

JsonIndex *json_index_new(Arena *arena, const char *text, size_t len) {
  JsonIndex *ix = arena_alloc(arena, sizeof *ix);
  ix->text = text ? text : "";
  ix->len = text ? len : 0;
  index_grow_slots(arena, ix);
  index_values(arena, ix);
  index_lines(arena, ix);
  return ix;
}

size_t json_index_locate(JsonIndex *ix, const char *pointer) {
  if (pointer && pointer[0] == '/') {
    size_t s = index_slot_of(ix, pointer, strlen(pointer));
    if (ix->slots[s].pointer)
      return ix->slots[s].offset;
    ix->fallbacks++;
  }
  return json_locate(ix->text, ix->len, pointer);
}

void json_index_line_col(const JsonIndex *ix, size_t *offset, int *line, int *col) {
  size_t off = *offset > ix->len ? ix->len : *offset;
  const char *t = ix->text;
  size_t b = off / LINE_BLOCK;
  if (ix->lines[b].scan_from > off) /* the second byte of a newline straddling the block start */
    off = b-- * LINE_BLOCK - 1;
  const LineCheckpoint *cp = &ix->lines[b];
  int ln = cp->line;
  size_t line_start = cp->line_start;
  for (size_t i = cp->scan_from; i < off;) {
    if (!is_newline(t[i])) {
      i++;
      continue;
    }
    size_t next = newline_end(t, ix->len, i);
    if (next > off) { /* off is inside this two-byte newline: its first byte */
      off = i;
      break;
    }
    i = next;
    ln++;
    line_start = i;
  }
  *offset = off;
  *line = ln;
  *col = (int)(off - line_start) + 1;
}

size_t json_index_fallbacks(const JsonIndex *ix) { return ix->fallbacks; }

/* ---- the locator ---- */

struct JsonLocator {
  Arena *arena;
  const Source *src;
  JsonIndex *ix; /* built on the first lookup */
};

JsonLocator *json_locator_new(Arena *arena, const Source *src) {
  JsonLocator *l = arena_alloc(arena, sizeof *l);
  l->arena = arena;
  l->src = src;
  return l;
}

Loc json_locator_loc(void *locator, const char *pointer) {
  JsonLocator *l = locator;
  if (!l->ix)
    l->ix = json_index_new(l->arena, l->src->text, l->src->len);
  Loc loc = {.src = l->src};
  size_t off = pointer && *pointer ? json_index_locate(l->ix, pointer) : 0;
  if (off > l->src->len)
    off = l->src->len;
  json_index_line_col(l->ix, &off, &loc.line, &loc.col);
  loc.offset = off;
  return loc;
}

const JsonIndex *json_locator_index(const JsonLocator *l) { return l->ix; }
