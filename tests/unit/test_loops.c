/* test_loops.c - loop-IR passes on hand-built trees (no schedule, no
 * graph): what loops_claim turns a parallel region's ops into, and what
 * the other passes do to small trees. The oracle is the printed C,
 * written out here by hand. */
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

/* ---- loops_tidy_names ---- */

/* The namer's answer: a name ending in _N wanted what comes before it. */
static const char *strip_suffix(void *ctx, const char *name) {
  Arena *a = ctx;
  const char *u = strrchr(name, '_');
  if (!u || !u[1] || strspn(u + 1, "0123456789") != strlen(u + 1))
    return NULL;
  return arena_strndup(a, name, (size_t)(u - name));
}

/* Two sibling loops k_2 and k_3 that nothing else in scope names: both k. */
Test(loops_tidy, sibling_loops_get_the_plain_name) {
  Arena *a = arena_new();
  LoopList f = {0};
  for (int i = 2; i <= 3; i++) {
    const char *k = arena_printf(a, "k_%d", i);
    LoopNode *loop = loops_for(a, k, "0", "N", 1);
    loops_append(&loop->body, loops_let(a, "const float", arena_printf(a, "t2_%d", i), arena_printf(a, "x[%s]", k)));
    loops_append(&loop->body, loops_store(a, arena_printf(a, "y[%s]", k), arena_printf(a, "t2_%d * t2_%d", i, i)));
    loops_append(&f, loop);
  }
  LoopVar params[3] = {{"int64_t", "N"}, {"const float *", "x"}, {"float *", "y"}};
  loops_tidy_names(a, &f, params, 3, strip_suffix, a);
  const char *c = print(a, &f);
  cr_assert(has(a, c, "for (int64_t k = 0; k < N; ++k) { const float t2 = x[k]; y[k] = t2 * t2; }"), "%s", c);
  cr_assert(!strstr(c, "k_2") && !strstr(c, "k_3") && !strstr(c, "t2_"), "%s", c);
  arena_free(a);
}

/* The suffix stays where the plain name is a parameter, an enclosing
 * declaration, or an identifier of the new name's scope (another meaning
 * there); it does not count inside a string literal or as a member. */
Test(loops_tidy, suffix_kept_where_a_clash_forces_it) {
  Arena *a = arena_new();
  LoopList f = {0};
  LoopNode *outer = loops_for(a, "i", "0", "N", 1); /* i encloses i_2 */
  LoopNode *inner = loops_for(a, "i_2", "0", "4", 1);
  loops_append(&inner->body, loops_store(a, "y[i + i_2]", "0"));
  loops_append(&outer->body, inner);
  loops_append(&f, outer);
  LoopNode *n2 = loops_for(a, "N_2", "0", "3", 1); /* N is a parameter */
  loops_append(&n2->body, loops_store(a, "y[N_2]", "1"));
  loops_append(&f, n2);
  loops_append(&f, loops_let(a, "const float", "s_2", "x[0]")); /* s named later in its scope */
  const char *args[2] = {"\"s\"", "s_2"};
  loops_append(&f, loops_call(a, "report", 2, args));
  loops_append(&f, loops_store(a, "y[0]", "s + s_2"));
  loops_append(&f, loops_let(a, "const float", "v_2", "x[1]")); /* v only in a literal and as a member */
  const char *args2[3] = {"\"v\"", "p.v", "v_2"};
  loops_append(&f, loops_call(a, "report", 3, args2));
  LoopVar params[3] = {{"int64_t", "N"}, {"const float *", "x"}, {"float *", "y"}};
  loops_tidy_names(a, &f, params, 3, strip_suffix, a);
  const char *c = print(a, &f);
  cr_assert(has(a, c, "for (int64_t i_2 = 0; i_2 < 4; ++i_2) { y[i + i_2] = 0; }"), "%s", c);
  cr_assert(has(a, c, "for (int64_t N_2 = 0; N_2 < 3; ++N_2)"), "%s", c);
  cr_assert(has(a, c, "const float s_2 = x[0]; report(\"s\", s_2); y[0] = s + s_2;"), "%s", c);
  cr_assert(has(a, c, "const float v = x[1]; report(\"v\", p.v, v);"), "%s", c);
  arena_free(a);
}

/* The closing brace of a loop whose body is longer than 24 lines (the man
 * page's figure, GENERATED CODE) names the loop; one of 24 lines does not.
 * The printer's own text, spaces kept. */
static const char *loop_of(Arena *a, int lines) {
  LoopList list = {0};
  LoopNode *f = loops_for(a, "i", "0", "n", 1);
  for (int k = 0; k < lines; k++)
    loops_append(&f->body, store(a, arena_printf(a, "y[%d]", k)));
  loops_append(&list, f);
  StrBuf sb = {0};
  loops_print_c(&sb, &list, 0);
  const char *text = arena_strdup(a, sb_cstr(&sb));
  sb_free(&sb);
  return text;
}

Test(loops_print, long_loops_closing_brace_labelled_past_24_lines) {
  Arena *a = arena_new();
  const char *short_loop = loop_of(a, 24), *long_loop = loop_of(a, 25);
  cr_assert(strstr(short_loop, "  y[23] = 0;\n}\n"), "%s", short_loop);
  cr_assert(!strstr(short_loop, "/* i */"), "%s", short_loop);
  cr_assert(strstr(long_loop, "  y[24] = 0;\n} /* i */\n"), "%s", long_loop);
  arena_free(a);
}

/* The chunk-buffer pass moves the elements of the arrays named, and only
 * theirs: not another array's (yb), a member (s.y), a string's text or a
 * mere mention of the pointer. The subscript may hold brackets itself. */
Test(loops_chunk, elements_of_named_arrays_shifted) {
  Arena *a = arena_new();
  LoopList list = {0};
  LoopNode *f = loops_for(a, "i", "0", "n", 1);
  loops_append(&f->body, loops_store(a, "y[i * 7 + j]", "x[k[i]] + yb[i] + s.y[i] + p->y[0]"));
  const char *args[] = {"\"y[i]\"", "y", "y [i]"};
  loops_append(&f->body, loops_call(a, "g", 3, args));
  loops_append(&list, f);
  const char *const arrays[] = {"x", "y"};
  loops_shift_arrays(a, &list, arrays, 2, "lgen_shift");
  StrBuf sb = {0};
  loops_print_c(&sb, &list, 0);
  const char *c = arena_strdup(a, sb_cstr(&sb));
  sb_free(&sb);
  cr_assert(strstr(c, "y[i * 7 + j - lgen_shift] = x[k[i] - lgen_shift] + yb[i] + s.y[i] + p->y[0];"), "%s", c);
  cr_assert(strstr(c, "g(\"y[i]\", y, y [i]);"), "%s", c);
  arena_free(a);
}

/* The bind pass: a row-fused group's member built over every row, its loops
 * over dims 0 and 1 (marked) bound to the group's r and to 0. The loops go,
 * their bodies stand where they stood, in order, and their variables
 * become the values; an unmarked loop (k), a loop of an unbound dim (j,
 * dim 2), a member named like a variable (s.i) and a string stay. */
Test(loops_bind, marked_loops_of_bound_dims_replaced_by_their_bodies) {
  Arena *a = arena_new();
  LoopList list = {0};
  loops_append(&list, loops_comment(a, "member"));
  LoopNode *i = loops_for(a, "i", "0", "n", 1), *u = loops_for(a, "u", "0", "1", 1);
  LoopNode *j = loops_for(a, "j", "0", "m", 1), *k = loops_for(a, "k", "0", "3", 1);
  i->dim = 1;
  u->dim = 2;
  j->dim = 3;
  loops_append(&list, i);
  loops_append(&i->body, loops_let(a, "const int64_t", "o", "i * m"));
  loops_append(&i->body, u);
  loops_append(&u->body, j);
  loops_append(&j->body, loops_store(a, "y[o + u * m + j]", "x[i] + s.i"));
  const char *args[] = {"\"i\"", "i"};
  loops_append(&u->body, loops_call(a, "g", 2, args));
  loops_append(&list, k);
  loops_append(&k->body, loops_store(a, "z[k]", "i"));
  LoopNode *empty = loops_for(a, "e", "0", "n", 1);
  empty->dim = 1;
  loops_append(&list, empty);
  const char *const values[] = {"r", "0", NULL};
  loops_bind_dims(a, &list, values, 3);
  const char *c = print(a, &list);
  cr_assert_str_eq(c,
                   "/*member*/constint64_to=r*m;for(int64_tj=0;j<m;++j){y[o+0*m+j]=x[r]+s.i;}g(\"i\",r);"
                   "for(int64_tk=0;k<3;++k){z[k]=i;}",
                   "%s", c);
  cr_assert(list.last == k, "the list's last node is the last one left");
  arena_free(a);
}

/* The fill pass's value: a made-up payload of the coordinates. */
static const char *tanh_of(void *ctx, const char *const *coords, int ncoords) {
  Arena *a = ctx;
  cr_assert_eq(ncoords, 2);
  return arena_printf(a, "tanhf(x[(%s) * 5 + (%s)])", coords[0], coords[1]);
}

/* The fill pass: a pack copy's stores reading the array named (h, once
 * guarded by a range test) get the fill's value in the read's place, and
 * lose their marks; a store reading another array (w) keeps its read. */
Test(loops_fill, marked_reads_of_the_array_computed_in_place) {
  Arena *a = arena_new();
  LoopList list = {0};
  const char *coords[] = {"i_p", "(k0 + k_p)"};
  LoopNode *f = loops_for(a, "i_p", "0", "4", 1);
  LoopNode *plain = loops_store(a, "h_pack[i_p]", "h[(i_p) * 5 + (k0 + k_p)]");
  LoopNode *guarded = loops_store(a, "h_pack[i_p + 4]", "i_p < n ? h[(i_p) * 5 + (k0 + k_p)] : (float)0");
  LoopNode *other = loops_store(a, "w_pack[i_p]", "w[(i_p) * 5 + (k0 + k_p)]");
  LoopNode *stores[] = {plain, guarded, other};
  for (int s = 0; s < 3; s++) {
    stores[s]->source = s < 2 ? "h" : "w";
    stores[s]->element = s < 2 ? "h[(i_p) * 5 + (k0 + k_p)]" : "w[(i_p) * 5 + (k0 + k_p)]";
    stores[s]->coords = coords;
    stores[s]->ncoords = 2;
    loops_append(&f->body, stores[s]);
  }
  loops_append(&list, f);
  loops_fill_elements(a, &list, "h", tanh_of, a);
  cr_assert_str_eq(plain->value, "tanhf(x[(i_p) * 5 + ((k0 + k_p))])");
  cr_assert_str_eq(guarded->value, "i_p < n ? tanhf(x[(i_p) * 5 + ((k0 + k_p))]) : (float)0");
  cr_assert_str_eq(other->value, "w[(i_p) * 5 + (k0 + k_p)]");
  cr_assert(!plain->source && !plain->element && !plain->coords && plain->ncoords == 0);
  cr_assert_str_eq(other->source, "w");
  arena_free(a);
}

/* The init and epilogue passes' builder: the site is the text to store
 * (here a string; the C writer's is its nest's state at the site). */
static void attach_text(void *ctx, const void *site, LoopList *into) {
  loops_append(into, loops_store(ctx, "acc", site));
}

/* A reduction over i (parallel) and k, k tiled by 4 and run by points
 * inside: the accumulator loaded before the points and stored after. */
static LoopNode *reduction_nest(Arena *a, LoopNode **tile) {
  LoopNode *i = loops_for(a, "i", "0", "n", 1);
  LoopNode *t = loops_for(a, "k_t", "0", "K", 4);
  t->reduce = 1;
  t->last = "k_t_end == K";
  LoopNode *load = loops_let(a, "float", "acc", "y[i]");
  load->acc = ACC_LOAD;
  load->site = "b[i]";
  LoopNode *k = loops_for(a, "k", "k_t", "k_t_end", 1);
  k->reduce = 1;
  k->last = "k + 1 == K";
  loops_append(&k->body, loops_store(a, "acc", "acc + x[i * K + k]"));
  LoopNode *store = loops_store(a, "y[i]", "acc");
  store->acc = ACC_STORE;
  store->site = "acc > 0 ? acc : 0";
  LoopNode *store_site = loops_store(a, "z[i]", "acc");
  store_site->acc = ACC_STORE; /* a second output of the same store */
  store_site->site = store->site;
  loops_append(&t->body, load);
  loops_append(&t->body, k);
  loops_append(&t->body, store);
  loops_append(&t->body, store_site);
  loops_append(&i->body, t);
  *tile = t;
  return i;
}

/* The loads of a run that starts at the first tile take the init, the
 * stores of one that ends at the last the epilogue (the site's stores,
 * two here, one branch); the declaration loses its value. */
Test(loops_acc, init_at_first_load_epilogue_at_last_store) {
  Arena *a = arena_new();
  LoopList list = {0};
  LoopNode *tile;
  loops_append(&list, reduction_nest(a, &tile));
  cr_assert(loops_init_at_load(a, &list, attach_text, a));
  cr_assert(loops_epilogue_at_store(a, &list, attach_text, a));
  const char *c = print(a, &list);
  cr_assert(has(a, c, "float acc; if (k_t == 0) { acc = b[i]; } else { acc = y[i]; }"), "%s", c);
  cr_assert(has(a, c, "if (k_t_end == K) { acc = acc > 0 ? acc : 0; } else { y[i] = acc; z[i] = acc; }"), "%s",
            c);
  cr_assert(tile->body.last->kind == LN_IF, "the list's last node is the branch");
  arena_free(a);
}

/* Without loops of the reduction around them, every run is whole: the
 * init and the epilogue alone. Two reduction dims: one term each, from
 * its innermost loop, in the dims' order. */
Test(loops_acc, whole_runs_and_two_dims) {
  Arena *a = arena_new();
  LoopList list = {0};
  LoopNode *load = loops_let(a, "float", "acc", "y[i]");
  load->acc = ACC_LOAD;
  load->site = "b[i]";
  LoopNode *store = loops_store(a, "y[i]", "acc");
  store->acc = ACC_STORE;
  store->site = "relu(acc)";
  loops_append(&list, load);
  loops_append(&list, store);
  cr_assert(loops_init_at_load(a, &list, attach_text, a));
  cr_assert(loops_epilogue_at_store(a, &list, attach_text, a));
  cr_assert_str_eq(print(a, &list), "floatacc;acc=b[i];acc=relu(acc);");

  LoopList two = {0};
  LoopNode *c_t = loops_for(a, "c_t", "0", "C", 8), *c = loops_for(a, "c", "c_t", "c_t_end", 1);
  c_t->reduce = c->reduce = 2;
  c_t->last = "c_t_end == C";
  c->last = "c + 1 == C";
  LoopNode *r = loops_for(a, "r", "0", "3", 1);
  r->reduce = 1;
  r->last = "r + 1 == 3";
  load = loops_store(a, "acc", "y[i]");
  load->acc = ACC_LOAD;
  load->site = "0";
  loops_append(&c_t->body, c);
  loops_append(&c->body, r);
  loops_append(&r->body, load);
  loops_append(&two, c_t);
  cr_assert(loops_init_at_load(a, &two, attach_text, a));
  const char *text = print(a, &two);
  cr_assert(has(a, text, "if (r == 0 && c == 0) { acc = 0; } else { acc = y[i]; }"), "%s", text);
  arena_free(a);
}

/* The passes decline, leaving the tree as it was, when a reduction loop
 * is shared among threads (a split reduction) or a run's end is not
 * known (a register tile around it), and when there is no site. */
Test(loops_acc, declines_split_and_unknown_runs) {
  Arena *a = arena_new();
  LoopNode *tile;
  LoopList split = {0};
  loops_append(&split, reduction_nest(a, &tile));
  tile->body.first->next->par = PAR_REGION; /* the points, inside the run */
  const char *before = print(a, &split);
  cr_assert(!loops_init_at_load(a, &split, attach_text, a));
  cr_assert(!loops_epilogue_at_store(a, &split, attach_text, a));
  cr_assert_str_eq(print(a, &split), before);

  LoopList reg = {0};
  loops_append(&reg, reduction_nest(a, &tile));
  tile->last = NULL;
  before = print(a, &reg);
  cr_assert(!loops_init_at_load(a, &reg, attach_text, a));
  cr_assert(!loops_epilogue_at_store(a, &reg, attach_text, a));
  cr_assert_str_eq(print(a, &reg), before);

  LoopList none = {0};
  loops_append(&none, loops_store(a, "y[0]", "1"));
  cr_assert(!loops_init_at_load(a, &none, attach_text, a));
  arena_free(a);
}

/* The one identifier scanner (the passes' and the C writer's): literals,
 * comments, numbers and member names are no identifiers of the scope. */
Test(loops_text, identifiers_outside_literals_comments_and_members) {
  cr_assert(loops_text_mentions("y = x + 1.0f;", "x"));
  cr_assert(loops_text_mentions("f(a, x)", "x"));
  cr_assert(!loops_text_mentions("/* pack x into x_pack */ y = 0;", "x"));
  cr_assert(!loops_text_mentions("y = 0; // x\n", "x"));
  cr_assert(loops_text_mentions("// a\nx = 0;", "x"));
  cr_assert(!loops_text_mentions("lgen_check(\"x out of range\", 'x');", "x"));
  cr_assert(!loops_text_mentions("s.x + p->x + q -> x", "x"));
  cr_assert(loops_text_mentions("x->data", "x"));
  cr_assert(!loops_text_mentions("0x1p+0f + 1.5e3", "p"));
  cr_assert(!loops_text_mentions("xs + x_pack", "x"));
  cr_assert(!loops_text_mentions(NULL, "x"));
}
