/* text.c - reading the C text of the loop IR's nodes (loops_internal.h)
 * and of the C writer's statements (loops.h). The nodes hold expressions
 * as C text; the passes that rename or capture variables, and the C
 * writer's declarations of what a function uses, need its identifiers,
 * and this is the one place that says what one is. */
#include "loops/loops_internal.h"

#include <string.h>

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
    } else if (q[0] == '/' && q[1] == '*') {
      const char *end = strstr(q + 2, "*/");
      q = end ? end + 2 : q + strlen(q);
    } else if (q[0] == '/' && q[1] == '/') {
      q += strcspn(q, "\n");
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

void loops_map_text(LoopNode *n, const char *(*fn)(void *ctx, const char *text), void *ctx) {
  const char **texts[] = LOOPS_NODE_TEXTS(n);
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
    if (*texts[i])
      *texts[i] = fn(ctx, *texts[i]);
  for (int i = 0; i < n->nargs; i++)
    if (n->args[i])
      n->args[i] = fn(ctx, n->args[i]);
  for (int i = 0; i < n->ncoords; i++)
    n->coords[i] = fn(ctx, n->coords[i]);
  for (int i = 0; i < n->nparams; i++) {
    n->ptypes[i] = fn(ctx, n->ptypes[i]);
    n->pnames[i] = fn(ctx, n->pnames[i]);
  }
  for (LoopNode *c = n->body.first; c; c = c->next)
    loops_map_text(c, fn, ctx);
  for (LoopNode *c = n->els.first; c; c = c->next)
    loops_map_text(c, fn, ctx);
}

bool loops_text_mentions(const char *text, const char *name) {
  if (!text || !strstr(text, name))
    return false;
  size_t want = strlen(name), len;
  const char *p = text;
  for (const char *s; (s = loops_next_ident(text, &p, &len));)
    if (len == want && memcmp(s, name, len) == 0)
      return true;
  return false;
}

const char *loops_rename_text(Arena *arena, const char *text, const char *from, const char *to) {
  if (!loops_text_mentions(text, from))
    return text;
  StrBuf sb = {0};
  size_t want = strlen(from), len;
  const char *p = text, *done = text;
  for (const char *s; (s = loops_next_ident(text, &p, &len));) {
    if (len != want || memcmp(s, from, len) != 0)
      continue;
    sb_putn(&sb, done, (size_t)(s - done));
    sb_puts(&sb, to);
    done = p;
  }
  sb_puts(&sb, done);
  const char *r = arena_strdup(arena, sb_cstr(&sb));
  sb_free(&sb);
  return r;
}

typedef struct {
  Arena *arena;
  const char *from, *to;
} Rename;

static const char *rename_one(void *ctx, const char *text) {
  const Rename *r = ctx;
  return loops_rename_text(r->arena, text, r->from, r->to);
}

void loops_rename_node(Arena *arena, LoopNode *n, const char *from, const char *to) {
  Rename r = {arena, from, to};
  loops_map_text(n, rename_one, &r);
}
