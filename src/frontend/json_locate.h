/* json_locate.h - where a JSON pointer is in JSON text, for the JSON
 * front-ends (graph_json.c, onnx_read_json.c), and base64.
 *
 * A graph names the place of each of its elements by a path that only the
 * front-end that made it interprets (graph.h, GraphLocate). For the JSON
 * forms that path is a JSON pointer, and json_locator_loc is the locator
 * they install: it finds the pointer in the text again, so nothing past the
 * front-ends scans JSON. */
#ifndef LGEN_JSON_LOCATE_H
#define LGEN_JSON_LOCATE_H

#include "diag.h"

/* Byte offset in the JSON text of the value a JSON pointer (RFC 6901,
 * "/graph/node/3/input/0") names; the deepest existing prefix when the whole
 * pointer does not resolve; 0 if text is not JSON. */
size_t json_locate(const char *text, size_t len, const char *pointer);

/* The same answers from one pass over the text, for many lookups (a big
 * model's lowering locates every value): the offsets of every value a
 * pointer reaches (but the elements of long arrays of scalars, i.e.
 * weights) in a hash table, and line checkpoints. Pointers it lacks go to
 * json_locate; fallbacks counts those scans. */
typedef struct JsonIndex JsonIndex;
JsonIndex *json_index_new(Arena *arena, const char *text, size_t len);
size_t json_index_locate(JsonIndex *ix, const char *pointer);
/* Line and column of *offset, lines counted as the .tc lexer does (\n, \r,
 * \r\n and \n\r are one newline each); an offset inside a two-byte newline
 * moves to its first byte. */
void json_index_line_col(const JsonIndex *ix, size_t *offset, int *line, int *col);
size_t json_index_fallbacks(const JsonIndex *ix);

/* A graph's locator for a model read from JSON text src: json_locator_loc
 * (a GraphLocate) gives "FILE:LINE:COL" with the caret under the value the
 * pointer names, or under the nearest enclosing value that exists (the
 * whole text for "" or NULL). Its JsonIndex is built on the first lookup,
 * so a graph that locates nothing pays nothing. */
typedef struct JsonLocator JsonLocator;
JsonLocator *json_locator_new(Arena *arena, const Source *src);
Loc json_locator_loc(void *locator, const char *pointer);
/* The index, once a lookup has built it (NULL before). */
const JsonIndex *json_locator_index(const JsonLocator *l);

/* Standard base64 (RFC 4648, padding optional, no whitespace inside):
 * false on a bad character or length. The bytes go to the arena. */
bool base64_decode(const char *s, size_t n, Arena *arena, uint8_t **out, size_t *out_len);

#endif
