/* text.c - reading the C text of the loop IR's nodes (loops_internal.h).
 * The nodes hold expressions as C text; the passes that rename or capture
 * variables need its identifiers, and this is the one place that says what
 * one is. */
#include "loops/loops_internal.h"

static bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

const char *loops_next_ident(const char *text, const char **p, size_t *len) {
  const char *q = *p;
  while (*q) {
    if (*q == '"' || *q == '\'') {
      char quote = *q++;
      while (*q && *q != quote)
        q += q[0] == '\\' && q[1] ? 2 : 1;
      if (*q)
        q++;
    } else if (*q >= '0' && *q <= '9') {
      while (ident_char(*q) || *q == '.')
        q++;
    } else if (ident_start(*q)) {
      const char *s = q;
      while (ident_char(*q))
        q++;
      const char *b = s; /* the character before, spaces skipped */
      while (b > text && b[-1] == ' ')
        b--;
      bool member = b > text && (b[-1] == '.' || (b[-1] == '>' && b - 1 > text && b[-2] == '-'));
      if (!member) {
        *p = q;
        *len = (size_t)(q - s);
        return s;
      }
    } else {
      q++;
    }
  }
  *p = q;
  return NULL;
}
