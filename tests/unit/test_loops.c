/* test_loops.c - loop-IR passes on hand-built trees (no schedule, no
 * graph): what loops_claim turns a parallel region's ops into. The oracle
 * is the printed C, written out here by hand. */
#include <criterion/criterion.h>
#include <string.h>

#include "loops/loops.h"

/* The namer of the pass: every base name is free here. */
static const char *same_name(void *ctx, const char *base) {
  (void)ctx;
  return base;
}

/* The tree as C, without its white space: the printer breaks lines where
 * it likes, and the checks below are about the code. */
static const char *print(Arena *a, const LoopList *list) {
  StrBuf sb = {0};
  loops_print_c(&sb, list, 0);
  char *text = arena_strdup(a, sb_cstr(&sb));
  sb_free(&sb);
  char *to = text;
  for (const char *from = text; *from; from++)
    if (*from != ' ' && *from != '\n')
      *to++ = *from;
  *to = 0;
  return text;
}

/* Whether the C `c` (as print gives it) holds `code`, white space aside. */
static bool has(Arena *a, const char *c, const char *code) {
  char *want = arena_strdup(a, code), *to = want;
  for (const char *from = code; *from; from++)
    if (*from != ' ')
      *to++ = *from;
  *to = 0;
  return strstr(c, want) != NULL;
}

static LoopNode *store(Arena *a, const char *target) { return loops_store(a, target, "0"); }

/* An `omp for` collapse(2) over an odd 2 .. 7 by 2 and a 0 .. 5: one
 * counter pair, the nest's iterations numbered row-major. */
Test(loops_claim, collapsed_nest_becomes_claimed_chunks) {
  Arena *a = arena_new();
  LoopList ops = {0};
  LoopNode *i = loops_for(a, "i", "2", "7", 2);
  i->par = PAR_WORKSHARING;
  i->collapse = 2;
  LoopNode *j = loops_for(a, "j", "0", "5", 1);
  loops_append(&i->body, j);
  loops_append(&j->body, store(a, "y[i * 5 + j]"));
  loops_append(&ops, i);
  LoopClaims used = loops_claim(a, &ops, "claims", same_name, NULL);
  cr_assert_eq(used.counters, 2);
  cr_assert(used.nests);
  const char *c = print(a, &ops);
  cr_assert(has(a, c, "const int64_t claim_total = (((7) - (2) + 1) / 2) * (5);"), "%s", c);
  cr_assert(has(a, c, "const int64_t claim_chunk = (claim_total + 31) / 32;"), "%s", c);
  cr_assert(has(a, c, "claim_first = lgen_claim(&claims[0], claim_chunk)"), "%s", c);
  cr_assert(has(a, c, "const int64_t i = 2 + (claim_it / ((5))) * 2;"), "%s", c);
  cr_assert(has(a, c, "const int64_t j = (claim_it) % (5);"), "%s", c);
  cr_assert(has(a, c, "lgen_finish(&claims[1], lgen_min(claim_first + claim_chunk, claim_total) - claim_first);"),
            "%s", c);
  cr_assert(has(a, c, "lgen_wait(&claims[1], claim_total);"), "%s", c);
  cr_assert(!has(a, c, "omp for"), "%s", c);
  arena_free(a);
}

/* A single becomes "the first thread to claim it runs it"; a loop with a
 * reduction clause, and a worksharing loop inside another loop, keep
 * their `omp for`. */
Test(loops_claim, singles_claimed_reductions_and_inner_loops_kept) {
  Arena *a = arena_new();
  LoopList ops = {0};
  LoopNode *red = loops_for(a, "k", "0", "3", 1);
  red->par = PAR_WORKSHARING;
  red->reduction = "reduction(+:s)";
  loops_append(&red->body, store(a, "t[k]"));
  loops_append(&ops, red);
  LoopNode *single = loops_block(a, REGION_SINGLE);
  loops_append(&single->body, store(a, "u[0]"));
  loops_append(&ops, single);
  LoopNode *outer = loops_for(a, "b", "0", "2", 1);
  LoopNode *inner = loops_for(a, "m", "0", "11", 1);
  inner->par = PAR_WORKSHARING;
  loops_append(&inner->body, store(a, "v[b * 11 + m]"));
  loops_append(&outer->body, inner);
  loops_append(&ops, outer);
  LoopClaims used = loops_claim(a, &ops, "claims", same_name, NULL);
  cr_assert_eq(used.counters, 2);
  cr_assert(!used.nests);
  const char *c = print(a, &ops);
  cr_assert(has(a, c, "if (lgen_claim(&claims[0], 1) == 0)"), "%s", c);
  cr_assert(has(a, c, "lgen_finish(&claims[1], 1);"), "%s", c);
  cr_assert(has(a, c, "lgen_wait(&claims[1], 1);"), "%s", c);
  cr_assert(!has(a, c, "omp single"), "%s", c);
  cr_assert(has(a, c, "LGEN_OMP(omp for reduction(+:s)) for (int64_t k = 0;"), "%s", c);
  cr_assert(has(a, c, "LGEN_OMP(omp for) for (int64_t m = 0;"), "%s", c);
  arena_free(a);
}
