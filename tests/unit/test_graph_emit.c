/* test_graph_emit.c - the back half of model graphs without the front half:
 * a graph kernel built by hand (a .tc def whose tensors are then turned into
 * a constant, workspace intermediates and an alias, as graph_lower makes
 * them), planned (src/graph/fuse/plan.c) and emitted (src/emit/c_emit.c), and the
 * generated C compiled with gcc and clang (with and without -fopenmp,
 * -Werror) and run against the same arithmetic done here. */
#include "graph/passes.h"
#include "unit.h"

static const float weights[4] = {0.5f, -1.25f, 3.0f, 0.1f};

/* X, W (becomes a constant) -> Y; T1..T3 become intermediates, and op 3
 * reads T2 through A, a rank-1 alias of it. */
static const char graph_text[] = "def g(X: f32(%s, 4), W: f32(4)) -> (Y: f32(%s, 4), T1: f32(%s, 4), T2: f32(%s, 4),"
                                 " T3: f32(%s, 4)) {\n"
                                 "  T1(n, c) = std_mulf(X(n, c), W(c));\n"
                                 "  T2(n, c) = std_addf(T1(n, c), W(c));\n"
                                 "  T3(n, c) = std_mulf(T2(n, c), T2(n, c));\n"
                                 "  Y(n, c) = std_addf(T3(n, c), X(n, c));\n}\n";

static int tensor_index(const Kernel *k, const char *name) {
  for (int t = 0; t < k->ntensors; t++)
    if (strcmp(k->tensors[t].name, name) == 0)
      return t;
  cr_assert_fail("no tensor %s", name);
  return -1;
}

/* The def with `rows` as the first extent of every tensor ("N" or "3"),
 * reshaped into a graph kernel. */
static Kernel *hand_built_graph(Unit **unit, const char *rows) {
  char text[1024];
  snprintf(text, sizeof text, graph_text, rows, rows, rows, rows, rows);
  Unit *u = *unit = unit_lowered(text);
  Kernel *k = unit_kernel(u, 0);
  Arena *a = u->arena;
  int w = tensor_index(k, "W"), t2 = tensor_index(k, "T2");
  k->tensors[w].storage = TS_CONST;
  void *data = arena_alloc(a, sizeof weights);
  memcpy(data, weights, sizeof weights); /* little-endian hosts only, like the CI */
  k->tensors[w].data = data;
  k->tensors[tensor_index(k, "T1")].storage = TS_WORKSPACE;
  k->tensors[t2].storage = TS_WORKSPACE;
  k->tensors[tensor_index(k, "T3")].storage = TS_WORKSPACE;
  /* A: T2 seen as rank 1 */
  TensorParam *tensors = arena_alloc(a, sizeof *tensors * (size_t)(k->ntensors + 1));
  memcpy(tensors, k->tensors, sizeof *tensors * (size_t)k->ntensors);
  TensorParam *alias = &tensors[k->ntensors];
  *alias = tensors[t2];
  alias->name = "A";
  alias->rank = 1;
  alias->shape = arena_alloc(a, sizeof *alias->shape);
  alias->shape[0] = affine_binary(a, AE_MUL, tensors[t2].shape[0], affine_const(a, 4));
  alias->storage = TS_ALIAS;
  alias->alias_of = t2;
  alias->is_output = false;
  int ai = k->ntensors;
  k->tensors = tensors;
  k->ntensors++;
  StructuredOp *op = &k->ops[2];
  for (int o = 0; o < op->noperands; o++) {
    Operand *opd = &op->operands[o];
    if (opd->tensor != t2)
      continue;
    AffineExpr **map = arena_alloc(a, sizeof *map);
    map[0] = affine_binary(a, AE_ADD, affine_binary(a, AE_MUL, opd->map[0], affine_const(a, 4)), opd->map[1]);
    opd->tensor = ai;
    opd->map = map;
  }
  return k;
}

typedef struct {
  Unit *u;
  BufferPlan *plan;
  StrBuf c, h, w;
} Emitted;

static void emit_stage(Unit *u, Kernel *k, const char *schedule, bool separate, Emitted *out) {
  OpPlan **plans = arena_alloc(u->arena, sizeof *plans);
  plans[0] = arena_alloc(u->arena, sizeof(OpPlan) * (size_t)k->nops);
  for (int i = 0; i < k->nops; i++) {
    OpPlan *p = &plans[0][i];
    reshape_identity(&p->reshape);
    if (strcmp(schedule, "auto") == 0)
      reshape_auto(k, &k->ops[i], &p->reshape, u->arena);
    p->view = reshape_apply(k, &k->ops[i], &p->reshape, u->arena);
    if (strcmp(schedule, "auto") == 0)
      schedule_auto(p->view.k, p->view.op, target_default(), &p->s);
    else
      schedule_none(p->view.op, &p->s);
    memset(p->s.pack, 0, sizeof p->s.pack);
  }
  out->plan = plan_buffers(k, NULL, NULL, u->arena);
  BufferPlan **bp = arena_alloc(u->arena, sizeof *bp);
  bp[0] = out->plan;
  EmitOptions eo = {.prefix = "",
                    .header_name = "g.h",
                    .guard = "G_H",
                    .input_name = "hand-built",
                    .plans = plans,
                    .target = target_default(),
                    .buffer_plans = bp,
                    .separate_weights = separate};
  emit_c_file(&out->c, &u->module, &eo, u->arena);
  emit_c_header(&out->h, &u->module, &eo, u->arena);
  if (separate)
    emit_c_weights(&out->w, &u->module, &eo, u->arena);
}

static void write_file(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

static const char harness[] =
    "#include \"g.h\"\n#include <stdio.h>\n#include <stdlib.h>\n#include <stdint.h>\n"
    "int main(void) {\n"
    "  enum { ROWS = 3 };\n"
    "  static const float w[4] = {0.5f, -1.25f, 3.0f, 0.1f};\n"
    "  float x[ROWS * 4], y[ROWS * 4], y2[ROWS * 4];\n"
    "  int i;\n"
    "  void *raw;\n"
    "  for (i = 0; i < ROWS * 4; i++)\n    x[i] = (float)(i % 7) - 2.5f;\n"
    "  if (g(x, y ROWS_ARG) != 0)\n    return 2;\n"
    "  raw = malloc(g_workspace_size(WS_ARG) + 64);\n"
    "  g_run(x, y2 ROWS_ARG, (void *)(((uintptr_t)raw + 63) & ~(uintptr_t)63));\n"
    "  free(raw);\n"
    "  for (i = 0; i < ROWS * 4; i++) {\n"
    "    float t1 = x[i] * w[i % 4], t2 = t1 + w[i % 4], t3 = t2 * t2, want = t3 + x[i];\n"
    "    if (y[i] != want || y2[i] != want) {\n"
    "      printf(\"element %d: %a and %a, want %a\\n\", i, (double)y[i], (double)y2[i], (double)want);\n"
    "      return 1;\n    }\n  }\n"
    "  printf(\"ok\\n\");\n  return 0;\n}\n";

static bool have(const char *compiler) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", compiler);
  return system(cmd) == 0;
}

/* Compiles the emitted files with every compiler and OpenMP setting and runs them. */
static void build_and_run(const Emitted *e, bool symbolic) {
  char dir[] = "/tmp/lgen-graph-emit-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  write_file(dir, "g.c", sb_cstr((StrBuf *)&e->c));
  write_file(dir, "g.h", sb_cstr((StrBuf *)&e->h));
  write_file(dir, "w.c", e->w.len ? sb_cstr((StrBuf *)&e->w) : "typedef int lgen_empty;\n");
  write_file(dir, "main.c", harness);
  static const char *const compilers[] = {"gcc", "clang"};
  static const char *const modes[] = {"", "-fopenmp"};
  int built = 0;
  for (int c = 0; c < 2; c++) {
    if (!have(compilers[c]))
      continue;
    for (int m = 0; m < 2; m++) {
      char cmd[2048];
      snprintf(cmd, sizeof cmd,
               "cd %s && %s -std=c99 -pedantic -Wall -Wextra -Werror -ffp-contract=off %s "
               "-DROWS_ARG='%s' -DWS_ARG='%s' g.c w.c main.c -o run -lm > log 2>&1 && ./run >> log 2>&1",
               dir, compilers[c], modes[m], symbolic ? ", ROWS" : "", symbolic ? "ROWS" : "");
      int rc = system(cmd);
      char log[512];
      snprintf(log, sizeof log, "cat %s/log", dir);
      if (rc != 0) {
        system(log);
        cr_assert_fail("%s %s failed; files in %s:\n%s", compilers[c], modes[m], dir, sb_cstr((StrBuf *)&e->c));
      }
      built++;
    }
  }
  cr_assert_gt(built, 0, "no C compiler");
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  system(cmd);
}

static void free_emitted(Emitted *e) {
  sb_free(&e->c);
  sb_free(&e->h);
  sb_free(&e->w);
  unit_free(e->u);
}

static const BufferPlacement *placement(const Kernel *k, const BufferPlan *p, const char *name) {
  int t = tensor_index(k, name);
  for (int i = 0; i < p->nbuffers; i++)
    if (p->buffers[i].tensor == t)
      return &p->buffers[i];
  cr_assert_fail("%s is not planned", name);
  return NULL;
}

Test(graph_plan, static_sizes_reuse_dead_buffers) {
  Unit *u;
  Kernel *k = hand_built_graph(&u, "3");
  BufferPlan *p = plan_buffers(k, NULL, NULL, u->arena);
  cr_assert_eq(p->nbuffers, 3, "T1, T2, T3; not the alias, the constant or the parameters");
  const BufferPlacement *t1 = placement(k, p, "T1"), *t2 = placement(k, p, "T2"), *t3 = placement(k, p, "T3");
  cr_assert_eq(t1->first_op, 0);
  cr_assert_eq(t1->last_op, 1);
  cr_assert_eq(t2->first_op, 1);
  cr_assert_eq(t2->last_op, 2, "read through its alias by op 2");
  cr_assert_eq(t3->first_op, 2);
  cr_assert_eq(t3->last_op, 3);
  cr_assert_eq(p->total_static, 128, "48 bytes each, 64 aligned, two live at once");
  cr_assert_eq(p->lower_bound, 128);
  cr_assert_eq(p->sum_bytes, 192);
  /* op 1 reads T1 for the last time where it writes T2: in place; T3 is
   * written while T2 is still read (through its alias), so apart */
  cr_assert(affine_equal(t1->offset, t2->offset), "T2 is written over T1");
  cr_assert_eq(t2->in_place_of, tensor_index(k, "T1"));
  cr_assert_eq(t1->in_place_of, -1);
  cr_assert_eq(t3->in_place_of, -1, "T2 is read through an alias: never in place");
  cr_assert(!affine_equal(t3->offset, t2->offset));
  StrBuf y = {0};
  plan_print_yaml(&y, k, p);
  cr_assert_not_null(strstr(sb_cstr(&y), "{tensor: T3, offset: "), "%s", sb_cstr(&y));
  const char *s = sb_cstr(&y);
  for (const char *line = s; *line; line = strchr(line, '\n') + 1)
    cr_assert_eq(*line, '#', "a schedule file read back must see only comments:\n%s", s);
  sb_free(&y);
  unit_free(u);
}

Test(graph_plan, symbolic_sizes_share_slots) {
  Unit *u;
  Kernel *k = hand_built_graph(&u, "N");
  BufferPlan *p = plan_buffers(k, NULL, NULL, u->arena);
  cr_assert_eq(p->total_static, -1);
  cr_assert_eq(p->lower_bound, -1);
  cr_assert_eq(p->sum_bytes, -1);
  const BufferPlacement *t1 = placement(k, p, "T1"), *t2 = placement(k, p, "T2"), *t3 = placement(k, p, "T3");
  cr_assert_eq(t1->slot, t2->slot, "T2 is written over T1");
  cr_assert_neq(t2->slot, t3->slot);
  cr_assert(affine_equal(t1->offset, t2->offset));
  unit_free(u);
}

static void check_graph(const char *rows, const char *schedule, bool separate) {
  Emitted e = {0};
  Kernel *k = hand_built_graph(&e.u, rows);
  emit_stage(e.u, k, schedule, separate, &e);
  const char *c = sb_cstr(&e.c);
  const char *consts = separate ? sb_cstr(&e.w) : c;
  cr_assert_not_null(strstr(consts, "0x1.99999ap-4f"), "0.1f exactly, in hex:\n%s", consts);
  cr_assert_not_null(strstr(sb_cstr(&e.h), "int g("), "%s", sb_cstr(&e.h));
  /* the plan's 128 bytes, and the run's thread-count record (lgen_team,
   * 128 bytes) when the run has a parallel region */
  bool team = strstr(c, "lgen_team_pick(") != NULL;
  if (rows[0] != 'N')
    cr_assert_not_null(strstr(sb_cstr(&e.h), team ? "#define g_WORKSPACE_SIZE 256" : "#define g_WORKSPACE_SIZE 128"),
                       "%s", sb_cstr(&e.h));
  if (separate) {
    cr_assert_not_null(strstr(c, "extern const float lgen_g_W[4];"), "%s", c);
    cr_assert_not_null(strstr(sb_cstr(&e.w), "const float lgen_g_W[4] LGEN_ALIGN64 = {"), "%s", sb_cstr(&e.w));
  }
  if (getenv("LGEN_DUMP"))
    printf("%s\n----\n%s\n----\n%s\n", sb_cstr(&e.c), sb_cstr(&e.h), sb_cstr(&e.w));
  build_and_run(&e, rows[0] == 'N');
  free_emitted(&e);
}

Test(graph_emit, static_none) { check_graph("3", "none", false); }
Test(graph_emit, static_auto) { check_graph("3", "auto", false); }
Test(graph_emit, symbolic_auto) { check_graph("N", "auto", false); }
Test(graph_emit, symbolic_none_separate_weights) { check_graph("N", "none", true); }

/* The generated file does not depend on anything but the inputs. */
Test(graph_emit, deterministic) {
  Emitted a = {0}, b = {0};
  Kernel *ka = hand_built_graph(&a.u, "N");
  Kernel *kb = hand_built_graph(&b.u, "N");
  emit_stage(a.u, ka, "auto", false, &a);
  emit_stage(b.u, kb, "auto", false, &b);
  cr_assert_str_eq(sb_cstr(&a.c), sb_cstr(&b.c));
  free_emitted(&a);
  free_emitted(&b);
}
