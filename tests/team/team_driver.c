/* team_driver.c - the run-time choice of a model run's thread count
 * (lgen_team, src/emit/c_runtime.c) against a fake clock. Included into
 * the generated C of a graph (tests/team.test builds it with
 * -DGRAPH_C=\"file.c\"), so it tests the code that users compile.
 *
 *   team_driver           scenarios on lgen_team_pick/done directly
 *   team_driver record    runs G_run and checks the record in the workspace
 *
 * Prints one line per check; exits 1 if any fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double fake_now;
#define LGEN_TEAM_CLOCK() fake_now
#include GRAPH_C
#ifdef _OPENMP
#include <omp.h>
#endif

static int failures;

static void expect(int ok, const char *what) {
  printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  failures += !ok;
}

/* n runs where a run at one thread takes `one` seconds and at the full
 * team `all` (a run numbered `spike_at` takes `spike` times longer);
 * returns how many ran at the full team, and each run's size in sizes[] */
static int simulate(lgen_team *t, int n, double one, double all, int spike_at, double spike, int *sizes) {
  int full_runs = 0;
  for (int r = 0; r < n; r++) {
    double start;
    int threads = lgen_team_pick(t, 0, &start);
    fake_now += (threads > 1 ? all : one) * (r == spike_at ? spike : 1);
    lgen_team_done(t, threads, start);
    full_runs += threads > 1;
    if (sizes)
      sizes[r] = threads;
  }
  return full_runs;
}

static int scenarios(void) {
  lgen_team t;
#ifndef _OPENMP
  memset(&t, 0xa5, sizeof t);
  expect(simulate(&t, 10, 5.0, 1.0, -1, 1, NULL) == 0, "without OpenMP every run takes one thread");
  return failures;
#else
  int sizes[400], n;
  omp_set_num_threads(2);
#ifdef LGEN_FIXED_TEAM
  memset(&t, 0, sizeof t);
  expect(simulate(&t, 100, 1.0, 5.0, -1, 1, NULL) == 100, "LGEN_FIXED_TEAM: every run at the full team");
  return failures;
#endif
  /* garbage in the record: the first runs take the full team */
  for (int fill = 0; fill < 3; fill++) {
    memset(&t, fill == 0 ? 0 : fill == 1 ? 0xff : 0xa5, sizeof t);
    simulate(&t, 2, 1.0, 0.5, -1, 1, sizes);
    char what[96];
    snprintf(what, sizeof what, "a record filled with 0x%02x starts at the full team", fill == 0 ? 0 : fill == 1 ? 0xff : 0xa5);
    expect(sizes[0] == 2 && sizes[1] == 2, what);
  }
  /* two threads faster: nearly every run takes them */
  memset(&t, 0, sizeof t);
  n = simulate(&t, 400, 1.0, 0.55, -1, 1, NULL);
  printf("  full team faster: %d of 400 runs at the full team\n", n);
  expect(n >= 380, "the full team is faster: at least 95% of runs take it");
  /* one thread faster (a busy core): after the first try, nearly every run takes one */
  memset(&t, 0, sizeof t);
  n = simulate(&t, 400, 1.0, 5.0, -1, 1, sizes);
  printf("  one thread faster: %d of 400 runs at the full team\n", n);
  expect(n <= 20, "one thread is faster: at most 5% of runs take the full team");
  expect(sizes[2] == 2 && sizes[3] == 1 && sizes[4] == 1,
         "one thread is tried at the fourth run (after two timed at the full team) and kept");
  /* a cold first run (page faults, caches) five times slower at the full
   * team does not send the next runs to one thread */
  memset(&t, 0, sizeof t);
  n = simulate(&t, 13, 1.0, 0.55, 0, 5, NULL);
  printf("  a cold first run: %d of 13 runs at the full team\n", n);
  expect(n >= 11, "a cold first run does not make one thread look faster");
  /* a slow second run too (still cold, or an interrupt): the full team's
   * estimate is not that run, and the next runs stay at the full team */
  memset(&t, 0, sizeof t);
  n = simulate(&t, 1, 1.0, 0.55, 0, 5, NULL);
  n += simulate(&t, 12, 1.0, 0.55, 0, 2, NULL);
  printf("  two slow early runs: %d of 13 runs at the full team\n", n);
  expect(n >= 11, "two slow early runs do not make one thread look faster");
  /* one slow run (an interrupt) does not change the choice */
  memset(&t, 0, sizeof t);
  simulate(&t, 200, 1.0, 0.55, -1, 1, NULL);
  n = simulate(&t, 20, 1.0, 0.55, 5, 100, sizes);
  expect(n >= 19, "a single run 100 times slower does not move the runs to one thread");
  /* the machine gets busy, then quiet again: the choice follows within the
   * longest gap between tries (64 runs) and three runs */
  memset(&t, 0, sizeof t);
  simulate(&t, 300, 1.0, 0.55, -1, 1, NULL);
  simulate(&t, 80, 1.0, 5.0, -1, 1, NULL);
  n = simulate(&t, 100, 1.0, 5.0, -1, 1, NULL);
  printf("  after the machine got busy: %d of the next 100 runs at the full team\n", n);
  expect(n <= 8, "a busy machine: within 80 runs the runs take one thread");
  simulate(&t, 140, 1.0, 0.55, -1, 1, NULL);
  n = simulate(&t, 100, 1.0, 0.55, -1, 1, NULL);
  printf("  quiet again: %d of the next 100 runs at the full team\n", n);
  expect(n >= 90, "quiet again: within 140 runs the runs take the full team");
  /* a cap (the scratch's thread slots) below the threads OpenMP offers */
  omp_set_num_threads(8);
  memset(&t, 0, sizeof t);
  {
    double start;
    expect(lgen_team_pick(&t, 3, &start) == 3, "the full team is at most the cap");
  }
  omp_set_num_threads(1);
  memset(&t, 0, sizeof t);
  expect(simulate(&t, 10, 5.0, 1.0, -1, 1, NULL) == 0, "one thread offered: every run takes one");
  return failures;
#endif
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "record") == 0) {
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    /* G_run keeps its record in the workspace's last bytes: RUN_GRAPH (from
     * tests/team.test) runs the graph; the record counts the runs */
    size_t bytes = WORKSPACE_SIZE_CALL;
    unsigned char *raw = malloc(bytes + 64), *ws;
    if (!raw)
      return 2;
    ws = raw + (64 - (uintptr_t)raw % 64); /* 64-byte aligned, as G_run wants */
    memset(ws, 0xa5, bytes);
    const lgen_team *t = (const lgen_team *)(ws + bytes - 128);
    for (int r = 0; r < 7; r++) {
      fake_now += 1;
      RUN_GRAPH;
    }
#ifdef _OPENMP
    printf("  record: runs=%lld\n", (long long)t->runs);
    expect(t->runs == 7, "G_run counts its runs in the workspace's last 128 bytes");
#else
    (void)t;
    expect(1, "without OpenMP G_run runs");
#endif
    free(raw);
    return failures != 0;
  }
  return scenarios() != 0;
}
