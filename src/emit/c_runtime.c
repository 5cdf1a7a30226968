/* c_runtime.c - the runtime helpers generated code may call (lgen_min,
 * lgen_alloc, the range arithmetic of --checks, ...): one table, and each
 * file gets only those it uses (clang warns about unused static
 * functions).
 *
 * Calls: none of the other emit files (c_internal.h). */
#include "emit/c_internal.h"

#include <stdio.h>
#include <string.h>

/* Run-time helpers the generated code may call, in dependency order. Only
 * those a file uses are emitted: clang warns about unused static functions. */
typedef struct {
  const char *name;
  const char *deps; /* space-separated names of earlier entries */
  const char *code;
  unsigned includes; /* the headers it needs (INC_*), included at the top of the file */
} RuntimeHelper;

static const RuntimeHelper runtime_helpers[] = {
    {"lgen_floordiv", "",
     "/* affine floordiv, ceildiv and mod round toward minus infinity, unlike C's / and % */\n"
     "static inline int64_t lgen_floordiv(int64_t a, int64_t b) {\n"
     "  int64_t q = a / b;\n  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n", 0},
    {"lgen_ceildiv", "lgen_floordiv",
     "static inline int64_t lgen_ceildiv(int64_t a, int64_t b) { return -lgen_floordiv(-a, b); }\n", 0},
    {"lgen_mod", "lgen_floordiv",
     "static inline int64_t lgen_mod(int64_t a, int64_t b) { return a - lgen_floordiv(a, b) * b; }\n", 0},
    {"lgen_min", "", "static inline int64_t lgen_min(int64_t a, int64_t b) { return a < b ? a : b; }\n", 0},
    {"lgen_alloc", "",
     "/* packed operands live in 64-byte aligned heap buffers; when malloc\n"
     " * fails, LGEN_ALLOC_FAILED() runs (define it first to handle that) */\n"
     "#ifndef LGEN_ALLOC_FAILED\n#define LGEN_ALLOC_FAILED() abort()\n#endif\n"
     "static inline void *lgen_alloc(size_t bytes, void **raw) {\n"
     "  *raw = malloc(bytes + 64);\n"
     "  if (!*raw)\n    LGEN_ALLOC_FAILED();\n"
     "  return (void *)(((uintptr_t)*raw + 63) & ~(uintptr_t)63);\n}\n",
     INC_STDLIB},
    {"lgen_thread_slots", "",
     "/* a model graph's per-thread packed buffers live in thread slots of its\n"
     " * workspace: the parallel regions that use them ask for at most that many\n"
     " * threads, and thread i packs into slot i */\n"
     "#if defined(_OPENMP)\n"
     "static inline int lgen_thread_slots(int slots) {\n"
     "  int threads = omp_get_max_threads();\n  return threads < slots ? threads : slots;\n}\n"
     "#define LGEN_THREAD_NUM() omp_get_thread_num()\n#else\n#define lgen_thread_slots(slots) 1\n"
     "#define LGEN_THREAD_NUM() 0\n#endif\n",
     INC_OMP},
    {"lgen_claim", "",
     "/* a model graph's region shares an op's iterations out in chunks that the\n"
     " * threads claim as they come (lgen_claim), and waits until all are done\n"
     " * (lgen_wait) where a barrier would wait until every thread arrives: a\n"
     " * thread that the system has descheduled (another process holds its\n"
     " * core) does not stop the others at every op; it finds the work taken\n"
     " * when it runs again */\n"
     "static inline int64_t lgen_claim(int64_t *next, int64_t chunk) {\n"
     "  int64_t first;\n  LGEN_OMP(omp atomic capture)\n  {\n    first = *next;\n    *next += chunk;\n  }\n"
     "  return first;\n}\n"
     "static inline void lgen_finish(int64_t *done, int64_t count) {\n"
     "  LGEN_OMP(omp flush)\n  LGEN_OMP(omp atomic)\n  *done += count;\n}\n"
     "/* a wait that has spun for a while gives the core away: the thread it\n"
     " * waits for may be queued behind it (sched_yield is POSIX's <sched.h>,\n"
     " * which -std=c99 hides) */\n"
     "#if defined(_OPENMP) && (defined(__unix__) || defined(__APPLE__))\n"
     "int sched_yield(void);\n#define LGEN_YIELD() ((void)sched_yield())\n#else\n"
     "#define LGEN_YIELD() ((void)0)\n#endif\n"
     "static inline void lgen_wait(int64_t *done, int64_t total) {\n"
     "  for (int spins = 0;; spins += spins < 4096) {\n    int64_t seen;\n"
     "    LGEN_OMP(omp atomic read)\n    seen = *done;\n"
     "    if (seen >= total)\n      break;\n    if (spins == 4096)\n      LGEN_YIELD();\n  }\n"
     "  LGEN_OMP(omp flush)\n}\n",
     0},
    {"lgen_team", "",
     "/* the threads a model run asks for. Each run but the first (cold) is\n"
     " * timed; the median of the last three runs at one thread and at the full\n"
     " * team picks the size, and the other size is tried again now and then\n"
     " * (after 4 runs, doubling to 64 while it keeps losing). When another\n"
     " * process holds a core, a thread the system deschedules holds up the\n"
     " * others at each op, and one thread runs faster: the next runs take one.\n"
     " * The record is the workspace's\n"
     " * last bytes, kept by the caller between runs; any contents are valid (a\n"
     " * record that does not check starts again at the full team; with a NULL\n"
     " * workspace, which a graph without intermediates may be given, there is\n"
     " * none and the full team runs). Define\n"
     " * LGEN_FIXED_TEAM to always run the full team, LGEN_TEAM_CLOCK() for\n"
     " * another clock (seconds, a double). */\n"
     "typedef struct {\n  double seconds[2][3]; /* [one thread, full team][newest first]; 0: none */\n"
     "  int64_t runs, next_try, gap, trying, check;\n} lgen_team;\n"
     "#if defined(_OPENMP) && !defined(LGEN_FIXED_TEAM)\n"
     "#ifndef LGEN_TEAM_CLOCK\n#define LGEN_TEAM_CLOCK() omp_get_wtime()\n#endif\n"
     "/* a sum over the record's counts (unsigned: any contents are valid) */\n"
     "static inline int64_t lgen_team_check(const lgen_team *t) {\n"
     "  uint64_t sum = (((uint64_t)t->runs * 31 + (uint64_t)t->next_try) * 31 + (uint64_t)t->gap) * 31;\n"
     "  return (int64_t)((sum + (uint64_t)t->trying) & 0x7fffffffffffffff) ^ 0x6c67656e;\n}\n"
     "/* a size's median time (of two, the shorter: one slow early run must not\n"
     " * decide); 0 with none */\n"
     "static inline double lgen_team_estimate(const double *s) {\n"
     "  double a = s[0], b = s[1], c = s[2];\n"
     "  if (!(a > 0))\n    return 0;\n  if (!(b > 0))\n    return a;\n  if (!(c > 0))\n    return a < b ? a : b;\n"
     "  return a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);\n}\n"
     "/* 1 if one thread ran faster, 0 if the full team did or either is unknown */\n"
     "static inline int lgen_team_one_wins(const lgen_team *t) {\n"
     "  double one = lgen_team_estimate(t->seconds[0]), all = lgen_team_estimate(t->seconds[1]);\n"
     "  return one > 0 && all > 0 && one < all;\n}\n"
     "static inline int lgen_team_pick(lgen_team *t, int cap, double *start) {\n"
     "  int full = omp_get_max_threads();\n"
     "  if (cap > 0 && cap < full)\n    full = cap;\n  *start = LGEN_TEAM_CLOCK();\n"
     "  if (full < 2 || !t)\n    return full;\n"
     "  if (t->check != lgen_team_check(t) || t->runs < 0 || t->gap < 4 || t->gap > 64) {\n"
     "    memset(t, 0, sizeof *t);\n    t->gap = 4;\n    t->next_try = 3; /* after two timed full-team runs */\n  }\n"
     "  t->trying = t->runs >= t->next_try; /* the size that is not winning */\n"
     "  t->check = lgen_team_check(t);\n"
     "  return lgen_team_one_wins(t) != (t->trying != 0) ? 1 : full;\n}\n"
     "static inline void lgen_team_done(lgen_team *t, int threads, double start) {\n"
     "  double *s;\n"
     "  if (!t || t->check != lgen_team_check(t))\n    return; /* no record, or a team of one left alone by pick */\n"
     "  if (t->runs++ == 0) { /* cold (page faults, caches): it would make the full team look slow */\n"
     "    t->check = lgen_team_check(t);\n    return;\n  }\n"
     "  s = t->seconds[threads > 1];\n"
     "  s[2] = s[1];\n  s[1] = s[0];\n  s[0] = LGEN_TEAM_CLOCK() - start;\n"
     "  if (t->trying) { /* the size tried now wins: try the other soon; or less often */\n"
     "    t->gap = lgen_team_one_wins(t) == (threads == 1) ? 4 : t->gap < 64 ? 2 * t->gap : 64;\n"
     "    t->next_try = t->runs + t->gap;\n    t->trying = 0;\n  }\n"
     "  t->check = lgen_team_check(t);\n}\n"
     "#elif defined(_OPENMP)\n"
     "static inline int lgen_team_pick(lgen_team *t, int cap, double *start) {\n"
     "  int full = omp_get_max_threads();\n  (void)t;\n  *start = 0;\n"
     "  return cap > 0 && cap < full ? cap : full;\n}\n"
     "#define lgen_team_done(t, threads, start) ((void)(t), (void)(threads), (void)(start))\n"
     "#else\n#define lgen_team_pick(t, cap, start) ((void)(t), (void)(cap), *(start) = 0, 1)\n"
     "#define lgen_team_done(t, threads, start) ((void)(t), (void)(threads), (void)(start))\n#endif\n",
     INC_OMP | INC_STRING},
    {"LGEN_ISNAN", "", "/* NaN, the one value unequal to itself (templates' @ISNAN@ on floats) */\n"
                       "#define LGEN_ISNAN(v) ((v) != (v))\n", 0},
    {"LGEN_NEVER_NAN", "", "/* templates' @ISNAN@ on integers */\n#define LGEN_NEVER_NAN(v) 0\n", 0},
    {"LGEN_OMP_SIMD_NOT_CLANG", "",
     "/* a worksharing loop that stores 8- or 64-bit integers: clang (14) cannot\n"
     " * vectorise it (those stores may alias the loop's bound, which OpenMP keeps\n"
     " * in memory) and warns of a `simd` it cannot honour, so it gets the plain\n"
     " * directive; other compilers the simd one */\n"
     "#ifndef LGEN_OMP_SIMD_NOT_CLANG\n#if defined(__clang__)\n"
     "#define LGEN_OMP_SIMD_NOT_CLANG(simd, plain) LGEN_OMP(plain)\n#else\n"
     "#define LGEN_OMP_SIMD_NOT_CLANG(simd, plain) LGEN_OMP_SIMD(simd)\n#endif\n#endif\n", 0},
    {"LGEN_BLOCK", "",
     "/* a register block is one function (see where it is called): the calls\n"
     " * with constant extents must be inlined to become unrolled blocks with\n"
     " * their accumulators in registers, whatever the compiler's size limits */\n"
     "#ifndef LGEN_BLOCK\n#if defined(__GNUC__)\n"
     "#define LGEN_BLOCK static inline __attribute__((always_inline))\n#else\n"
     "#define LGEN_BLOCK static inline\n#endif\n#endif\n", 0},
    {"lgen_row_chunk", "",
     "/* a template's loop over rows takes them tile at a time (tile > 0), in an\n"
     " * equal share per thread of the team (0), or all on one thread (< 0: its\n"
     " * schedule does not share them out); the loop's OpenMP chunk */\n"
     "static inline int64_t lgen_row_chunk(int64_t rows, int64_t tile) {\n"
     "  int64_t team = 1, chunk;\n"
     "#if defined(_OPENMP)\n  team = omp_get_num_threads();\n#endif\n"
     "  chunk = tile > 0 ? tile : tile < 0 ? rows : (rows + team - 1) / team;\n"
     "  return chunk > 0 ? chunk : 1;\n}\n",
     INC_OMP},
    {"LGEN_MAX_THREADS", "",
     "/* the threads a parallel region would have (1 without OpenMP) */\n"
     "#if defined(_OPENMP)\n#define LGEN_MAX_THREADS() omp_get_max_threads()\n"
     "#else\n#define LGEN_MAX_THREADS() 1\n#endif\n",
     INC_OMP},
    {"LGEN_CHECK_FAILED", "",
     "/* --checks: a size violation calls LGEN_CHECK_FAILED(message); define it\n"
     " * before this point to handle violations yourself. */\n"
     "#ifndef LGEN_CHECK_FAILED\n"
     "#define LGEN_CHECK_FAILED(msg) (fprintf(stderr, \"%s\\n\", (msg)), abort())\n#endif\n",
     INC_STDIO | INC_STDLIB},
    {"lgen_range", "",
     "/* the values an index expression takes over the iteration domain */\n"
     "typedef struct { int64_t lo, hi; } lgen_range;\n"
     "static inline lgen_range lgen_range_of(int64_t lo, int64_t hi) {\n"
     "  lgen_range r;\n  r.lo = lo;\n  r.hi = hi;\n  return r;\n}\n", 0},
    {"lgen_range_neg", "lgen_range",
     "static inline lgen_range lgen_range_neg(lgen_range a) { return lgen_range_of(-a.hi, -a.lo); }\n", 0},
    {"lgen_range_add", "lgen_range",
     "static inline lgen_range lgen_range_add(lgen_range a, lgen_range b) {\n"
     "  return lgen_range_of(a.lo + b.lo, a.hi + b.hi);\n}\n", 0},
    {"lgen_range_sub", "lgen_range",
     "static inline lgen_range lgen_range_sub(lgen_range a, lgen_range b) {\n"
     "  return lgen_range_of(a.lo - b.hi, a.hi - b.lo);\n}\n", 0},
    {"lgen_range_mul", "lgen_range",
     "static inline lgen_range lgen_range_mul(lgen_range a, lgen_range b) {\n"
     "  int64_t p[4], lo, hi;\n  int i;\n"
     "  p[0] = a.lo * b.lo;\n  p[1] = a.lo * b.hi;\n  p[2] = a.hi * b.lo;\n  p[3] = a.hi * b.hi;\n"
     "  lo = hi = p[0];\n"
     "  for (i = 1; i < 4; i++) {\n    lo = p[i] < lo ? p[i] : lo;\n    hi = p[i] > hi ? p[i] : hi;\n  }\n"
     "  return lgen_range_of(lo, hi);\n}\n", 0},
    {"lgen_range_floordiv", "lgen_range lgen_floordiv",
     "/* divisors are single values (never dims); a divisor <= 0 fails the check */\n"
     "static inline lgen_range lgen_range_floordiv(lgen_range a, lgen_range b) {\n"
     "  if (b.lo <= 0)\n    return lgen_range_of(-1, INT64_MAX);\n"
     "  return lgen_range_of(lgen_floordiv(a.lo, b.lo), lgen_floordiv(a.hi, b.lo));\n}\n", 0},
    {"lgen_range_ceildiv", "lgen_range lgen_ceildiv",
     "static inline lgen_range lgen_range_ceildiv(lgen_range a, lgen_range b) {\n"
     "  if (b.lo <= 0)\n    return lgen_range_of(-1, INT64_MAX);\n"
     "  return lgen_range_of(lgen_ceildiv(a.lo, b.lo), lgen_ceildiv(a.hi, b.lo));\n}\n", 0},
    {"lgen_range_mod", "lgen_range",
     "static inline lgen_range lgen_range_mod(lgen_range a, lgen_range b) {\n"
     "  if (b.lo <= 0)\n    return lgen_range_of(-1, INT64_MAX);\n"
     "  if (a.lo >= 0 && a.hi < b.lo)\n    return a;\n"
     "  return lgen_range_of(0, b.lo - 1);\n}\n", 0},
};

enum { NUM_RUNTIME_HELPERS = sizeof runtime_helpers / sizeof *runtime_helpers };

void use_helper(bool *used, const char *name) {
  for (int i = 0; i < NUM_RUNTIME_HELPERS; i++) {
    if (strcmp(runtime_helpers[i].name, name) != 0 || used[i])
      continue;
    used[i] = true;
    char deps[128];
    snprintf(deps, sizeof deps, "%s", runtime_helpers[i].deps);
    for (char *save = NULL, *d = strtok_r(deps, " ", &save); d; d = strtok_r(NULL, " ", &save))
      use_helper(used, d);
  }
}

bool runtime_helpers_print(StrBuf *out, const bool *used) {
  bool any = false;
  for (int i = 0; i < NUM_RUNTIME_HELPERS; i++)
    if (used[i]) {
      sb_puts(out, runtime_helpers[i].code);
      any = true;
    }
  return any;
}

unsigned runtime_helpers_includes(const bool *used) {
  unsigned inc = 0;
  for (int i = 0; i < NUM_RUNTIME_HELPERS; i++)
    if (used[i])
      inc |= runtime_helpers[i].includes;
  return inc;
}
