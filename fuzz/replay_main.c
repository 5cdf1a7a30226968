/* replay_main.c - runs the fuzz harness over saved inputs, without libFuzzer.
 *
 *   fuzz_replay PATH...
 *
 * Every regular file under each PATH (a file or a directory, walked
 * recursively, entries in name order) goes through LLVMFuzzerTestOneInput
 * once. An oracle violation aborts, and the name of the input is printed;
 * with FUZZ_REPLAY_VERBOSE set every name is printed before its replay (to
 * find the input behind a sanitizer report). An input that takes longer
 * than FUZZ_REPLAY_TIMEOUT seconds (default 20) fails the replay: lgen hangs. Prints "fuzz_replay: N inputs replayed" and exits 0, or
 * exits 1 if a PATH cannot be read. */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char current[4096];
static size_t ninputs;
static int verbose;
/* catches a hang, not a slow input: specs/linalg.yaml (70 ops, generated
 * three times by the oracles) took over 20 s on a loaded 2-core machine */
static unsigned input_timeout = 60;

/* a hang: lgen must finish every input quickly */
static void on_alarm(int sig) {
  static const char msg[] = "fuzz_replay: timeout: lgen did not finish ";
  ssize_t r = write(2, msg, sizeof msg - 1);
  r = write(2, current, strlen(current));
  r = write(2, "\n", 1);
  (void)r;
  (void)sig;
  _exit(1);
}

/* an oracle's abort(): say which input did it */
static void on_signal(int sig) {
  static const char msg[] = "fuzz_replay: died while replaying ";
  ssize_t r = write(2, msg, sizeof msg - 1);
  r = write(2, current, strlen(current));
  r = write(2, "\n", 1);
  (void)r;
  signal(sig, SIG_DFL);
  raise(sig);
}

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  if (!buf)
    abort();
  size_t n;
  while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
    len += n;
    if (len == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      if (!buf)
        abort();
    }
  }
  int err = ferror(f);
  fclose(f);
  if (err) {
    fprintf(stderr, "%s: read error\n", path);
    free(buf);
    return 1;
  }
  snprintf(current, sizeof current, "%s", path);
  if (verbose)
    fprintf(stderr, "fuzz_replay: %s\n", path);
  alarm(input_timeout);
  LLVMFuzzerTestOneInput(buf, len);
  alarm(0);
  current[0] = '\0';
  ninputs++;
  free(buf);
  return 0;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int replay_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    perror(path);
    return 1;
  }
  if (!S_ISDIR(st.st_mode))
    return S_ISREG(st.st_mode) ? replay_file(path) : 0;
  DIR *dir = opendir(path);
  if (!dir) {
    perror(path);
    return 1;
  }
  char **names = NULL;
  size_t count = 0, cap = 0;
  struct dirent *ent;
  while ((ent = readdir(dir))) {
    if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
      continue;
    if (count == cap) {
      cap = cap ? cap * 2 : 64;
      names = realloc(names, cap * sizeof *names);
      if (!names)
        abort();
    }
    names[count] = malloc(strlen(path) + strlen(ent->d_name) + 2);
    if (!names[count])
      abort();
    sprintf(names[count], "%s/%s", path, ent->d_name);
    count++;
  }
  closedir(dir);
  if (count)
    qsort(names, count, sizeof *names, cmp_names);
  int status = 0;
  for (size_t i = 0; i < count; i++) {
    status |= replay_path(names[i]);
    free(names[i]);
  }
  free(names);
  return status;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PATH...\n", argv[0]);
    return 1;
  }
  /* SIGABRT only: the sanitizers keep their own handlers for the rest */
  signal(SIGABRT, on_signal);
  signal(SIGALRM, on_alarm);
  verbose = getenv("FUZZ_REPLAY_VERBOSE") != NULL;
  const char *t = getenv("FUZZ_REPLAY_TIMEOUT");
  if (t && atoi(t) > 0)
    input_timeout = (unsigned)atoi(t);
  int status = 0;
  for (int i = 1; i < argc; i++)
    status |= replay_path(argv[i]);
  printf("fuzz_replay: %zu inputs replayed\n", ninputs);
  return status;
}
