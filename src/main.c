/* main.c - the lgen command line (contracts.md section 1): options, reading
 * inputs, and writing outputs atomically. Everything else is the library. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "lgen.h"
#include "util/fault.h"
#include "util/util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_IO = 3 };
enum { MAX_INPUTS = 256, MAX_TARGETS = 64 };
#define MAX_INPUT_BYTES (1024L * 1024 * 1024) /* model graphs carry their weights */

typedef enum { EMIT_C, EMIT_IR } EmitKind;

typedef struct {
  const char *inputs[MAX_INPUTS];
  int ninputs;
  const char *output;     /* NULL or "-": stdout */
  const char *header;
  const char *depfile;
  bool make_deps;
  const char *targets[MAX_TARGETS];
  int ntargets;
  EmitKind emit;
  bool list_ops;
  bool print_schedule;
  const char *schedule_path; /* --schedule=FILE */
  const char *weights;       /* --weights=FILE.c */
  const char *allow_external[MAX_TARGETS]; /* --allow-external=DIR, repeatable */
  const char *dims[MAX_INPUTS];             /* --dim NAME=VALUE, repeatable */
  const char *input_shapes[MAX_INPUTS];     /* --input-shape NAME=D0,D1,..., repeatable */
  const char *input_values[MAX_INPUTS];     /* --input-value NAME=V0,V1,..., repeatable */
  lgen_options lib;
} Options;

static const char usage_text[] =
    "Usage: lgen [OPTIONS] INPUT... [-o OUT.c] [-H OUT.h]\n"
    "Generate C99 kernels from Einstein-notation op specs (.tc, OpDSL .yaml) and model graphs\n"
    "(.json: lgen-graph/1 or ONNX in protobuf's JSON mapping; .onnx: binary ONNX).\n"
    "\n"
    "  -o FILE               write the C source to FILE ('-' or none: standard output)\n"
    "  -H, --header FILE     also write a header with the prototypes\n"
    "  --emit=c|ir           what -o receives: C source (default) or the structured-op IR\n"
    "  --list-ops            list the ops the inputs define, one per line, and stop\n"
    "  --checks              kernels verify at entry that their sizes fit the spec\n"
    "  --prefix=PREFIX       prepend PREFIX to every exported symbol\n"
    "  --abi=dense|view      dense (default): tensors are row-major arrays; view: each\n"
    "                        tensor of a def is a strided memref descriptor (lgen(1))\n"
    "  --schedule=none|auto|FILE.yaml\n"
    "                        none: plain loops; auto (default): tiling, packing, register\n"
    "                        blocking and threads chosen from each op's structure; FILE:\n"
    "                        decisions per op in YAML (see lgen(1), SCHEDULES)\n"
    "  --target=NAME         machine model for auto, one of: %s\n"
    "                        (the first is the default), or native: the one that\n"
    "                        fits this machine\n"
    "  --print-schedule      print the decisions taken, as a schedule file, on standard\n"
    "                        output (the C then goes only to -o)\n"
    "  --input-format=tc|tc-classic|yaml|json|onnx\n"
    "                        format of '-' and of files not named .tc, .yaml, .json or\n"
    "                        .onnx (default: told by content); tc-classic: Tensor\n"
    "                        Comprehensions, also told by content in .tc files\n"
    "  --opdsl=[OP.]KEY=VALUE,...\n"
    "                        OpDSL YAML defs: type variables (U=i32), fn attributes\n"
    "                        (cast=cast_unsigned), elementwise rank (rank=2); repeatable\n"
    "  --name=NAME           a model graph's C entry point (default: from its name)\n"
    "  --weights=FILE.c      write graph constants to FILE.c instead of the C source\n"
    "  --weights=FILE.bin    ... or as a binary blob that G_run takes as a parameter\n"
    "  --constants=bytes|values\n"
    "                        large embedded constants as string literals of their\n"
    "                        little-endian bytes (bytes, the default: compiles fast) or as\n"
    "                        lists of values (any byte order)\n"
    "  --fuse=auto|none      fuse a graph's elementwise producers into consumers (auto)\n"
    "  --conv-algorithm=auto|direct\n"
    "                        a graph's 3x3 stride-1 convs by Winograd F(2x2, 3x3) where\n"
    "                        it pays (auto), or each by its own loop nest (direct)\n"
    "  --dim NAME=VALUE      fix the symbolic dim NAME of the model graphs (repeatable)\n"
    "  --input-shape NAME=D0,D1,...\n"
    "                        give graph input NAME this shape (repeatable)\n"
    "  --input-value NAME=V0,V1,...\n"
    "                        make graph input NAME a constant of these values (one\n"
    "                        value fills it); it leaves the entry point (repeatable)\n"
    "  --allow-external=DIR  a model's data files may also be in DIR (repeatable; by\n"
    "                        default only inside the model's own folder)\n"
    "  --max-constant-bytes=N[K|M|G]\n"
    "                        the most bytes of constants a model may make lgen hold (2G)\n"
    "  --dump=STAGE[,STAGE...]\n"
    "                        print the program after each stage on standard error:\n"
    "                        parse, graph, lower, fuse, schedule, plan, loops\n"
    "  -MD                   write a make dependency file (OUT.d, or -MF's)\n"
    "  -MF FILE              the dependency file's name (implies -MD)\n"
    "  -MT TARGET            the dependency rule's target (repeatable)\n"
    "  -h, --help            show this help and exit\n"
    "  --version             show the version and exit\n"
    "\n"
    "Exit status: 0 success, 1 bad input, 2 bad command line, 3 I/O or internal error.\n"
    "See lgen(1) for the format, the kernel ABI and examples.\n";

static void usage_error(const char *fmt, const char *arg) {
  fputs("lgen: error: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\nTry 'lgen --help' for more information.\n", stderr);
  exit(EXIT_USAGE);
}

/* "4096", "64K", "512M", "2G" (powers of 1024); -1 if malformed or beyond
 * 2^62. */
static long long byte_count(const char *s) {
  long long v = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (v > ((1LL << 62) - (*p - '0')) / 10)
      return -1;
    v = v * 10 + (*p - '0');
  }
  int shift = 0;
  if (*p == 'K' || *p == 'k')
    shift = 10, p++;
  else if (*p == 'M' || *p == 'm')
    shift = 20, p++;
  else if (*p == 'G' || *p == 'g')
    shift = 30, p++;
  if (p == s || *p || v > (1LL << 62) >> shift)
    return -1;
  return v << shift;
}

/* The value of an option given as "-o FILE", "-oFILE", "--opt=FILE" or
 * "--opt FILE". `attached` is what followed the option in the same argument:
 * NULL or "" for a short option means the value is the next argument; for a
 * long option "--opt=" (attached == "") means an empty value, an error. */
static const char *option_value(int argc, char **argv, int *i, const char *attached) {
  if (attached && *attached)
    return attached;
  if (attached && argv[*i][0] == '-' && argv[*i][1] == '-')
    usage_error("option '%s' needs a value after '='", argv[*i]);
  if (*i + 1 >= argc || argv[*i + 1][0] == '\0')
    usage_error("option '%s' needs a value", argv[*i]);
  return argv[++*i];
}

static bool long_option(const char *arg, const char *name, const char **value) {
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0)
    return false;
  if (arg[n] == '=') {
    *value = arg + n + 1;
    return true;
  }
  if (arg[n] == '\0') {
    *value = NULL;
    return true;
  }
  return false;
}

static void add_input(Options *o, const char *path) {
  if (o->ninputs == MAX_INPUTS)
    usage_error("more than %s inputs", "256");
  o->inputs[o->ninputs++] = path;
}

/* Repeated --opdsl options add up (the process exits soon: never freed). */
static const char *concat_choices(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char *s = malloc(n);
  if (!s) {
    fputs("lgen: error: out of memory\n", stderr);
    exit(3);
  }
  snprintf(s, n, "%s,%s", a, b);
  return s;
}

static bool is_identifier(const char *s) {
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || (p != s && *p >= '0' && *p <= '9')))
      return false;
  return *s != '\0';
}

/* --target=native: the model that fits the machine lgen runs on. Only the
 * CLI looks at the host, and only when asked: the library's output depends
 * on its options alone. */
static const char *host_target(void) {
#if defined(__aarch64__)
  return "aarch64-neon";
#elif (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") ? "x86-64-avx512" : "x86-64-avx2";
#else
  return "x86-64-avx2";
#endif
}

static void parse_args(int argc, char **argv, Options *o) {
  bool options_done = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (options_done || a[0] != '-' || strcmp(a, "-") == 0) {
      add_input(o, a);
    } else if (strcmp(a, "--") == 0) {
      options_done = true;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      char known[256];
      lgen_target_names(known, sizeof known);
      printf(usage_text, known);
      exit(0);
    } else if (strcmp(a, "--version") == 0) {
      printf("lgen %s\n", LGEN_VERSION);
      exit(0);
    } else if (strncmp(a, "-o", 2) == 0) {
      o->output = option_value(argc, argv, &i, a + 2);
    } else if (strcmp(a, "-MD") == 0) {
      o->make_deps = true;
    } else if (strncmp(a, "-MF", 3) == 0) {
      o->depfile = option_value(argc, argv, &i, a + 3);
      o->make_deps = true;
    } else if (strncmp(a, "-MT", 3) == 0) {
      if (o->ntargets == MAX_TARGETS)
        usage_error("too many %s targets", "-MT");
      o->targets[o->ntargets++] = option_value(argc, argv, &i, a + 3);
    } else if (strncmp(a, "-H", 2) == 0) {
      o->header = option_value(argc, argv, &i, a + 2);
    } else if (long_option(a, "--header", &v)) {
      o->header = option_value(argc, argv, &i, v);
    } else if (long_option(a, "--emit", &v)) {
      v = option_value(argc, argv, &i, v);
      if (strcmp(v, "c") == 0)
        o->emit = EMIT_C;
      else if (strcmp(v, "ir") == 0)
        o->emit = EMIT_IR;
      else
        usage_error("unknown --emit kind '%s' (expected c or ir)", v);
    } else if (strcmp(a, "--list-ops") == 0) {
      o->list_ops = true;
    } else if (strcmp(a, "--checks") == 0) {
      o->lib.checks = 1;
    } else if (long_option(a, "--abi", &v)) {
      v = option_value(argc, argv, &i, v);
      if (strcmp(v, "dense") != 0 && strcmp(v, "view") != 0)
        usage_error("unknown --abi '%s' (expected dense or view)", v);
      o->lib.abi = v;
    } else if (long_option(a, "--prefix", &v)) {
      o->lib.prefix = option_value(argc, argv, &i, v);
      for (const char *p = o->lib.prefix; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || (p != o->lib.prefix && *p >= '0' && *p <= '9')))
          usage_error("--prefix '%s' is not the start of a C identifier", o->lib.prefix);
    } else if (long_option(a, "--schedule", &v)) {
      v = option_value(argc, argv, &i, v);
      if (strcmp(v, "none") == 0 || strcmp(v, "auto") == 0) {
        o->lib.schedule = v;
      } else {
        o->lib.schedule = "file";
        o->schedule_path = v;
      }
    } else if (long_option(a, "--target", &v)) {
      o->lib.target = option_value(argc, argv, &i, v);
    } else if (strcmp(a, "--print-schedule") == 0) {
      o->print_schedule = true;
    } else if (long_option(a, "--input-format", &v)) {
      v = option_value(argc, argv, &i, v);
      if (strcmp(v, "tc") != 0 && strcmp(v, "tc-classic") != 0 && strcmp(v, "json") != 0 && strcmp(v, "yaml") != 0 &&
          strcmp(v, "onnx") != 0)
        usage_error("unknown --input-format '%s' (expected tc, tc-classic, yaml, json or onnx)", v);
      o->lib.input_format = v;
    } else if (long_option(a, "--opdsl", &v)) {
      v = option_value(argc, argv, &i, v);
      if (!strchr(v, '='))
        usage_error("--opdsl '%s' is not [OP.]KEY=VALUE,... (like U=i32 or rank=2)", v);
      o->lib.opdsl = o->lib.opdsl ? concat_choices(o->lib.opdsl, v) : v;
    } else if (long_option(a, "--name", &v)) {
      o->lib.name = option_value(argc, argv, &i, v);
      if (!is_identifier(o->lib.name))
        usage_error("--name '%s' is not a C identifier", o->lib.name);
    } else if (long_option(a, "--weights", &v)) {
      o->weights = option_value(argc, argv, &i, v);
      o->lib.separate_weights = 1;
      size_t n = strlen(o->weights); /* FILE.bin: a binary blob that G_run takes (lgen(1)) */
      o->lib.weights_blob = n > 4 && strcmp(o->weights + n - 4, ".bin") == 0;
    } else if (long_option(a, "--constants", &v)) {
      v = option_value(argc, argv, &i, v);
      if (strcmp(v, "bytes") != 0 && strcmp(v, "values") != 0)
        usage_error("--constants '%s' is not bytes or values", v);
      o->lib.constant_values = strcmp(v, "values") == 0;
    } else if (long_option(a, "--max-constant-bytes", &v)) {
      v = option_value(argc, argv, &i, v);
      o->lib.max_constant_bytes = byte_count(v);
      if (o->lib.max_constant_bytes <= 0)
        usage_error("--max-constant-bytes '%s' is not a positive byte count (N, NK, NM or NG)", v);
    } else if (long_option(a, "--allow-external", &v)) {
      v = option_value(argc, argv, &i, v);
      struct stat st;
      if (stat(v, &st) != 0 || !S_ISDIR(st.st_mode))
        usage_error("--allow-external '%s' is not a folder", v);
      if (o->lib.nallow_external == MAX_TARGETS)
        usage_error("too many %s folders", "--allow-external");
      o->allow_external[o->lib.nallow_external++] = v;
      o->lib.allow_external = o->allow_external;
    } else if (long_option(a, "--dim", &v)) {
      if (o->lib.ndims == MAX_INPUTS)
        usage_error("more than %s --dim options", "256");
      o->dims[o->lib.ndims++] = option_value(argc, argv, &i, v);
      o->lib.dims = o->dims;
    } else if (long_option(a, "--input-shape", &v)) {
      if (o->lib.ninput_shapes == MAX_INPUTS)
        usage_error("more than %s --input-shape options", "256");
      o->input_shapes[o->lib.ninput_shapes++] = option_value(argc, argv, &i, v);
      o->lib.input_shapes = o->input_shapes;
    } else if (long_option(a, "--input-value", &v)) {
      if (o->lib.ninput_values == MAX_INPUTS)
        usage_error("more than %s --input-value options", "256");
      o->input_values[o->lib.ninput_values++] = option_value(argc, argv, &i, v);
      o->lib.input_values = o->input_values;
    } else if (long_option(a, "--dump", &v)) {
      v = option_value(argc, argv, &i, v);
      for (const char *p = v; *p || p == v;) {
        size_t len = strcspn(p, ",");
        char stage[32];
        snprintf(stage, sizeof stage, "%.*s", (int)(len < sizeof stage ? len : sizeof stage - 1), p);
        if (len >= sizeof stage || !lgen_dump_stage_known(stage))
          usage_error("unknown --dump stage in '%s' (known: parse, graph, lower, fuse, schedule, plan, loops)", v);
        p += len + (p[len] == ',');
        if (!p[0] && p[-1] == ',')
          usage_error("empty --dump stage in '%s'", v);
      }
      o->lib.dump = v;
    } else if (long_option(a, "--fuse", &v)) {
      v = option_value(argc, argv, &i, v);
      if (strcmp(v, "auto") != 0 && strcmp(v, "none") != 0)
        usage_error("unknown --fuse mode '%s' (expected auto or none)", v);
      o->lib.fuse = v;
    } else if (long_option(a, "--conv-algorithm", &v)) {
      v = option_value(argc, argv, &i, v);
      if (strcmp(v, "auto") != 0 && strcmp(v, "direct") != 0)
        usage_error("unknown --conv-algorithm '%s' (expected auto or direct)", v);
      o->lib.conv_algorithm = v;
    } else {
      usage_error("unknown option '%s'", a);
    }
  }
  if (o->ninputs == 0)
    usage_error("%s", "no input files");
  bool to_stdout = !o->output || strcmp(o->output, "-") == 0;
  if (o->weights && strcmp(o->weights, "-") == 0)
    usage_error("--weights needs a file name, not '%s'", o->weights);
  const char *outputs[4] = {to_stdout ? NULL : o->output, o->header, o->depfile, o->weights};
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < o->ninputs && outputs[i]; j++)
      if (strcmp(outputs[i], o->inputs[j]) == 0)
        usage_error("'%s' is both an input and an output", outputs[i]);
  for (int i = 0; i < 4; i++)
    for (int j = i + 1; j < 4; j++)
      if (outputs[i] && outputs[j] && strcmp(outputs[i], outputs[j]) == 0)
        usage_error("'%s' is named for two outputs", outputs[i]);
  if (o->lib.target && strcmp(o->lib.target, "native") == 0)
    o->lib.target = host_target();
  if (o->lib.target && !lgen_target_known(o->lib.target)) {
    char known[256], fmt[300];
    lgen_target_names(known, sizeof known);
    snprintf(fmt, sizeof fmt, "unknown --target '%%s' (known: %s, native)", known);
    usage_error(fmt, o->lib.target);
  }
  if (o->make_deps && to_stdout && (!o->depfile || o->ntargets == 0))
    usage_error("%s with the output on standard output needs -MF FILE and -MT TARGET", "-MD");
}

/* ---- the command line's own fallible operations ----
 * Each is a fault-injection point (util/fault.h), and each failure prints
 * its one message where it happens. */

static void *cli_malloc(size_t n) {
  void *p = fault_inject() ? NULL : malloc(n);
  if (!p)
    fputs("lgen: error: out of memory\n", stderr);
  return p;
}

static char *cli_strdup(const char *s) {
  char *p = cli_malloc(strlen(s) + 1);
  return p ? strcpy(p, s) : NULL;
}

static FILE *cli_fopen(const char *path, const char *mode) { return fault_inject() ? NULL : fopen(path, mode); }

static size_t cli_fread(void *buf, size_t n, FILE *f, bool *failed) {
  if (fault_inject()) {
    *failed = true;
    return 0;
  }
  size_t got = fread(buf, 1, n, f);
  *failed = got == 0 && ferror(f);
  return got;
}

/* ---- reading ---- */

static char *read_stream(FILE *f, const char *name, size_t *len) {
  size_t cap = 4096, n = 0;
  char *buf = cli_malloc(cap);
  if (!buf)
    return NULL;
  for (;;) {
    if (n == cap) {
      if (cap >= (size_t)MAX_INPUT_BYTES) {
        fprintf(stderr, "lgen: error: %s: larger than the %ld MiB input limit\n", name, MAX_INPUT_BYTES >> 20);
        free(buf);
        return NULL;
      }
      char *grown = fault_inject() ? NULL : realloc(buf, cap * 2);
      if (!grown) {
        fputs("lgen: error: out of memory\n", stderr);
        free(buf);
        return NULL;
      }
      buf = grown;
      cap *= 2;
    }
    bool failed;
    size_t got = cli_fread(buf + n, cap - n, f, &failed);
    n += got;
    if (failed) {
      fprintf(stderr, "lgen: error: %s: %s\n", name, strerror(errno ? errno : EIO));
      free(buf);
      return NULL;
    }
    if (got == 0)
      break;
  }
  if (ferror(f)) {
    fprintf(stderr, "lgen: error: %s: %s\n", name, strerror(errno ? errno : EIO));
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

static char *read_input(const char *path, size_t *len) {
  if (strcmp(path, "-") == 0)
    return read_stream(stdin, "<stdin>", len);
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    fprintf(stderr, "lgen: error: %s: is a directory\n", path);
    return NULL;
  }
  FILE *f = cli_fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "lgen: error: %s: %s\n", path, strerror(errno));
    return NULL;
  }
  char *text = read_stream(f, path, len);
  fclose(f);
  return text;
}

/* ---- writing ----
 * A regular file (or a new one) is written to a temporary file in the same
 * folder and renamed over the target once everything succeeded, so a failed
 * run leaves no partial output and an existing file untouched. A symlink is
 * written through (its target is replaced, not the link). Anything else - a
 * device such as /dev/null or /dev/full, a FIFO - is written in place. */

typedef struct {
  const char *path; /* what rename() replaces; NULL when written in place */
  char *tmp;
  bool existed;     /* path was there before (a failed run keeps it, replaced or not) */
} PendingFile;

/* text's n bytes (a weights blob holds NULs). */
static bool write_all(FILE *f, const char *text, size_t n) {
  bool ok = !fault_inject() && fwrite(text, 1, n, f) == n;
  return !fault_inject() && fflush(f) == 0 && ok;
}

static bool close_ok(FILE *f) { return fclose(f) == 0 && !fault_inject(); }

/* The file a path names, through symlinks; a dangling link's target (which
 * the write will create) is found with readlink. *out is NULL for path
 * itself; false when memory ran out (the message is printed). */
static bool resolve_output(const char *path, char **out) {
  *out = realpath(path, NULL);
  if (*out)
    return true;
  struct stat st;
  char link[4096];
  if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
    return true;
  ssize_t n = readlink(path, link, sizeof link - 1);
  if (n <= 0)
    return true;
  link[n] = '\0';
  const char *slash = strrchr(path, '/');
  if (link[0] == '/' || !slash)
    *out = cli_strdup(link);
  else if ((*out = cli_malloc((size_t)(slash - path) + 2 + (size_t)n)))
    sprintf(*out, "%.*s/%s", (int)(slash - path), path, link);
  return *out != NULL;
}

static bool write_pending(PendingFile *pf, const char *path, const char *text, size_t size) {
  pf->path = NULL;
  pf->tmp = NULL;
  char *resolved; /* NULL for a plain file that does not exist yet */
  if (!resolve_output(path, &resolved))
    return false;
  const char *target = resolved ? resolved : path;
  struct stat st;
  if (stat(target, &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) {
      fprintf(stderr, "lgen: error: %s: is a directory\n", path);
      free(resolved);
      return false;
    }
    errno = 0;
    FILE *f = cli_fopen(target, "wb");
    bool ok = f && write_all(f, text, size);
    ok = (f && close_ok(f)) && ok;
    if (!ok)
      fprintf(stderr, "lgen: error: %s: %s\n", path, strerror(errno ? errno : EIO));
    free(resolved);
    return ok;
  }
  pf->path = resolved ? resolved : cli_strdup(path);
  pf->tmp = pf->path ? cli_malloc(strlen(pf->path) + 16) : NULL;
  if (!pf->path || !pf->tmp)
    return false;
  sprintf(pf->tmp, "%s.lgen-XXXXXX", pf->path);
  pf->existed = access(pf->path, F_OK) == 0;
  int fd = fault_inject() ? -1 : mkstemp(pf->tmp);
  if (fd < 0) {
    fprintf(stderr, "lgen: error: %s: %s\n", path, strerror(errno));
    free(pf->tmp);
    pf->tmp = NULL;
    return false;
  }
  errno = 0;
  FILE *f = fault_inject() ? NULL : fdopen(fd, "wb");
  bool ok = f && write_all(f, text, size);
  ok = (f && close_ok(f)) && ok;
  if (!f)
    close(fd);
  if (!ok) {
    fprintf(stderr, "lgen: error: %s: %s\n", path, strerror(errno ? errno : EIO));
    return false;
  }
  /* mkstemp creates 0600; generated sources are ordinary files */
  mode_t mask = umask(0);
  umask(mask);
  chmod(pf->tmp, 0666 & ~mask);
  return true;
}

static void discard(PendingFile *files, int n) {
  for (int i = 0; i < n; i++) {
    if (files[i].tmp)
      unlink(files[i].tmp);
    free(files[i].tmp);
    free((char *)files[i].path);
    files[i].tmp = NULL;
    files[i].path = NULL;
  }
}

/* Make escapes: a space or '#' gets a backslash, '$' is doubled. */
static void put_make_path(StrBuf *sb, const char *path) {
  for (const char *p = path; *p; p++) {
    if (*p == ' ' || *p == '#')
      sb_putc(sb, '\\');
    else if (*p == '$')
      sb_putc(sb, '$');
    sb_putc(sb, *p);
  }
}

static char *depfile_text(const Options *o, const char *c_path, const char *extra_deps) {
  StrBuf sb = {0};
  if (o->ntargets) {
    for (int i = 0; i < o->ntargets; i++) {
      sb_puts(&sb, i ? " " : "");
      put_make_path(&sb, o->targets[i]);
    }
  } else {
    put_make_path(&sb, c_path);
    if (o->header) {
      sb_putc(&sb, ' ');
      put_make_path(&sb, o->header);
    }
    if (o->weights) {
      sb_putc(&sb, ' ');
      put_make_path(&sb, o->weights);
    }
  }
  /* every file read: the inputs, a schedule file, and the files graphs'
   * constants came from (extra_deps, one per line) */
  int nextra = 0;
  for (const char *p = extra_deps; *p; p++)
    nextra += *p == '\n';
  const char **deps = cli_malloc(sizeof *deps * (size_t)(o->ninputs + 2 + nextra));
  char *extra = deps ? cli_strdup(extra_deps) : NULL;
  if (!deps || !extra) {
    free(deps);
    free(extra);
    sb_free(&sb);
    return NULL;
  }
  int ndeps = 0;
  for (int i = 0; i < o->ninputs; i++)
    if (strcmp(o->inputs[i], "-") != 0)
      deps[ndeps++] = o->inputs[i];
  if (o->schedule_path && strcmp(o->schedule_path, "-") != 0)
    deps[ndeps++] = o->schedule_path;
  for (char *p = extra, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
    *nl = '\0';
    deps[ndeps++] = p;
  }
  sb_putc(&sb, ':');
  for (int i = 0; i < ndeps; i++) {
    sb_putc(&sb, ' ');
    put_make_path(&sb, deps[i]);
  }
  sb_putc(&sb, '\n');
  /* a phony rule per file, so deleting one does not break make (gcc -MP) */
  for (int i = 0; i < ndeps; i++) {
    sb_putc(&sb, '\n');
    put_make_path(&sb, deps[i]);
    sb_puts(&sb, ":\n");
  }
  char *text = cli_strdup(sb_cstr(&sb));
  sb_free(&sb);
  free(deps);
  free(extra);
  return text;
}

static char *default_depfile(const char *c_path) {
  size_t n = strlen(c_path);
  char *d = cli_malloc(n + 3);
  if (!d)
    return NULL;
  strcpy(d, c_path);
  char *dot = strrchr(d, '.');
  char *slash = strrchr(d, '/');
  if (dot && (!slash || dot > slash))
    strcpy(dot, ".d");
  else
    strcat(d, ".d");
  return d;
}

int main(int argc, char **argv) {
  static Options o;
  parse_args(argc, argv, &o);

  lgen_source sources[MAX_INPUTS];
  char *texts[MAX_INPUTS] = {0};
  int status = 0;
  for (int i = 0; i < o.ninputs && status == 0; i++) {
    size_t len = 0;
    texts[i] = read_input(o.inputs[i], &len);
    if (!texts[i])
      status = EXIT_IO;
    sources[i] = (lgen_source){strcmp(o.inputs[i], "-") == 0 ? "<stdin>" : o.inputs[i], texts[i], len};
  }
  if (status) {
    for (int i = 0; i < o.ninputs; i++)
      free(texts[i]);
    return status;
  }
  char *schedule_text = NULL;
  lgen_source schedule_src;
  if (o.schedule_path) {
    size_t len = 0;
    schedule_text = read_input(o.schedule_path, &len);
    if (!schedule_text) {
      for (int i = 0; i < o.ninputs; i++)
        free(texts[i]);
      return EXIT_IO;
    }
    schedule_src = (lgen_source){strcmp(o.schedule_path, "-") == 0 ? "<stdin>" : o.schedule_path, schedule_text, len};
    o.lib.schedule_file = &schedule_src;
  }
  if (o.header) {
    const char *slash = strrchr(o.header, '/');
    o.lib.header_name = slash ? slash + 1 : o.header;
  }
  o.lib.no_ir = o.emit != EMIT_IR;
  lgen_output out;
  int rc = lgen_compile(sources, (size_t)o.ninputs, &o.lib, &out);
  for (int i = 0; i < o.ninputs; i++)
    free(texts[i]);
  free(schedule_text);
  if (out.dump)
    fputs(out.dump, stderr);
  fputs(out.diagnostics, stderr);
  if (rc != LGEN_OK) {
    lgen_output_free(&out);
    return rc == LGEN_INPUT_ERROR ? EXIT_INPUT : rc == LGEN_USAGE_ERROR ? EXIT_USAGE : EXIT_IO;
  }
  if (o.list_ops) {
    fputs(out.op_list, stdout);
    lgen_output_free(&out);
    return fflush(stdout) == 0 ? 0 : EXIT_IO;
  }

  const char *main_text = o.emit == EMIT_IR ? out.ir : out.c_source;
  bool to_stdout = !o.output || strcmp(o.output, "-") == 0;
  if (o.print_schedule) {
    /* the schedule owns standard output; the C goes only where -o says */
    if (fputs(out.schedule, stdout) < 0 || fflush(stdout) != 0) {
      lgen_output_free(&out);
      return EXIT_IO;
    }
    if (to_stdout) {
      lgen_output_free(&out);
      return 0;
    }
  }
  /* Everything is computed before the first file is created: a failure
   * (allocation too) after that point must not leave one behind. */
  bool ok = true;
  char *dep_path = NULL, *dep_text = NULL;
  if (o.make_deps) {
    dep_path = o.depfile ? cli_strdup(o.depfile) : default_depfile(o.output);
    dep_text = dep_path ? depfile_text(&o, to_stdout ? "-" : o.output, out.depends ? out.depends : "") : NULL;
    ok = dep_text != NULL;
  }
  PendingFile files[4] = {{0}};
  int nfiles = 0;
  if (ok && !to_stdout)
    ok = write_pending(&files[nfiles++], o.output, main_text, strlen(main_text));
  if (ok && o.header)
    ok = write_pending(&files[nfiles++], o.header, out.header, strlen(out.header));
  if (ok && o.weights)
    ok = write_pending(&files[nfiles++], o.weights, out.weights ? out.weights : "",
                       out.weights ? out.weights_size : 0);
  if (ok && o.make_deps)
    ok = write_pending(&files[nfiles++], dep_path, dep_text, strlen(dep_text));
  if (ok && to_stdout)
    ok = !fault_inject() && fputs(main_text, stdout) >= 0 && fflush(stdout) == 0;
  int renamed = 0;
  for (; ok && renamed < nfiles; renamed++) {
    if (!files[renamed].tmp)
      continue; /* written in place */
    if (fault_inject() || rename(files[renamed].tmp, files[renamed].path) != 0) {
      fprintf(stderr, "lgen: error: %s: %s\n", files[renamed].path, strerror(errno));
      ok = false;
      break;
    }
    free(files[renamed].tmp);
    files[renamed].tmp = NULL;
  }
  /* A rename failed after others succeeded: the outputs this run created
   * go again (one it replaced stays replaced, whole). */
  for (int i = 0; !ok && i < renamed; i++)
    if (files[i].path && !files[i].existed)
      unlink(files[i].path);
  discard(files, nfiles);
  free(dep_path);
  free(dep_text);
  lgen_output_free(&out);
  return ok ? 0 : EXIT_IO;
}
