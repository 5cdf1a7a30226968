/* uses.c - which ops read and write each tensor of a kernel, built in one
 * pass: passes over a model graph ask this of every tensor, and a scan of
 * every op per question made them quadratic in the graph's size. */
#include "ir/ir.h"

#include <string.h>

int kernel_tensor_named(const Kernel *k, const char *name) {
  for (int i = 0; i < k->ntensors; i++)
    if (strcmp(k->tensors[i].name, name) == 0)
      return i;
  return -1;
}

int kernel_size_named(const Kernel *k, const char *name) {
  for (int i = 0; i < k->nsizes; i++)
    if (strcmp(k->sizes[i].name, name) == 0)
      return i;
  return -1;
}

/* Calls f(ctx, op index, tensor, reads, writes) once per distinct tensor of
 * each op (an op touches only its operands', init's and epilogue's tensors). */
static void each_use(const Kernel *k, void (*f)(void *, int, int, bool, bool), void *ctx) {
  for (int i = 0; i < k->nops; i++) {
    const StructuredOp *op = &k->ops[i];
    for (int o = 0; o < op_all_operands(op); o++) {
      int t = op_operand_at(op, o)->tensor;
      bool dup = false;
      for (int p = 0; p < o && !dup; p++)
        dup = op_operand_at(op, p)->tensor == t;
      if (!dup)
        f(ctx, i, t, op_reads_tensor(op, t), op_writes_tensor(op, t));
    }
  }
}

static void count(void *ctx, int op, int t, bool r, bool w) {
  TensorUses *u = ctx;
  (void)op;
  u->read_start[t + 1] += r;
  u->write_start[t + 1] += w;
}

static void fill(void *ctx, int op, int t, bool r, bool w) {
  TensorUses *u = ctx;
  if (r)
    u->readers[u->nreaders[t]++ + u->read_start[t]] = op;
  if (w)
    u->writers[u->nwriters[t]++ + u->write_start[t]] = op;
}

void tensor_uses(TensorUses *u, const Kernel *k, Arena *arena) {
  size_t n = (size_t)k->ntensors + 1;
  memset(u, 0, sizeof *u);
  u->read_start = arena_alloc(arena, sizeof(int) * (n + 1));
  u->write_start = arena_alloc(arena, sizeof(int) * (n + 1));
  u->nreaders = arena_alloc(arena, sizeof(int) * n);
  u->nwriters = arena_alloc(arena, sizeof(int) * n);
  each_use(k, count, u);
  for (size_t t = 1; t < n; t++) {
    u->read_start[t] += u->read_start[t - 1];
    u->write_start[t] += u->write_start[t - 1];
  }
  u->readers = arena_alloc(arena, sizeof(int) * (size_t)(u->read_start[n - 1] + 1));
  u->writers = arena_alloc(arena, sizeof(int) * (size_t)(u->write_start[n - 1] + 1));
  each_use(k, fill, u);
}

void oplist_add(Arena *a, OpList *l, int op) {
  if (l->len && l->items[l->len - 1] == op)
    return;
  if (l->len == l->cap) {
    int cap = l->cap ? l->cap * 2 : 4;
    int *items = arena_alloc(a, sizeof(int) * (size_t)cap);
    if (l->len)
      memcpy(items, l->items, sizeof(int) * (size_t)l->len);
    l->items = items;
    l->cap = cap;
  }
  l->items[l->len++] = op;
}
