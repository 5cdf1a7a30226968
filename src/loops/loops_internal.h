/* loops_internal.h - what the loop IR's passes share and its users do not
 * need (loops.h is the public face). */
#ifndef LGEN_LOOPS_INTERNAL_H
#define LGEN_LOOPS_INTERNAL_H

#include "loops/loops.h"

/* `text` with every identifier `from` (as loops_next_ident reads them)
 * replaced by `to` (text itself when it has none; text.c). */
const char *loops_rename_text(Arena *arena, const char *text, const char *from, const char *to);

/* The C text fields of a node n, as an initialiser of an array of their
 * addresses (args, coords, ptypes and pnames aside): what loops_each_text visits
 * and loops_map_text rewrites. A new text field goes here. */
#define LOOPS_NODE_TEXTS(n)                                                                                      \
  {&(n)->threads, &(n)->var,  &(n)->lo,     &(n)->hi,   &(n)->step_expr, &(n)->next_value, &(n)->reduction,    \
   &(n)->cond,    &(n)->type, &(n)->name,   &(n)->value, &(n)->extents,  &(n)->raw,        &(n)->bytes,        \
   &(n)->base,    &(n)->offset, &(n)->slot, &(n)->thread, &(n)->target,  &(n)->fn,         &(n)->schedule,     \
   &(n)->source,  &(n)->element}

/* Replaces every C text of node n and of the nodes in its bodies (not
 * comments) by fn(ctx, text), depth first (text.c). */
void loops_map_text(LoopNode *n, const char *(*fn)(void *ctx, const char *text), void *ctx);

/* Renames the identifier `from` to `to` in every C text of node n and of
 * the nodes in its bodies: loops_map_text with loops_rename_text (text.c). */
void loops_rename_node(Arena *arena, LoopNode *n, const char *from, const char *to);

#endif
