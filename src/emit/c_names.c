/* c_names.c - C identifiers for the names of specs and graphs.
 *
 * A .tc name may contain '-'; an ONNX name anything ("input.1",
 * "onnx::Add_1", "/l1/MatMul_output_0", "1x"); any may be a C or C++
 * keyword, or collide with a name the generated code uses (libm and libc
 * functions, lgen_ helpers, the graph's own functions, locals). Every name
 * is claimed from a per-kernel table: each character that cannot be in an
 * identifier becomes '_', a leading digit gets a 'v' before it, and a
 * reserved or already-claimed name gets a numeric suffix.
 *
 * Calls: none of the other emit files (c_internal.h). */
#include "emit/c_emit.h"

#include <string.h>

static const char *const reserved[] = {
    /* C99 */
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
    "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "_Bool",
    "_Complex", "_Imaginary",
    /* C++, for the header */
    "bool", "true", "false", "class", "new", "delete", "this", "template", "typename", "namespace", "operator",
    "private", "public", "protected", "virtual", "try", "catch", "throw", "friend", "mutable", "explicit",
    "export", "using", "and", "or", "not", "xor", "asm", "typeid", "nullptr", "constexpr", "decltype",
    "noexcept", "static_assert", "thread_local", "alignas", "alignof", "char16_t", "char32_t", "wchar_t",
    /* names the generated code itself uses */
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t",
    "expf", "exp", "logf", "log", "tanhf", "tanh", "sqrtf", "sqrt", "abort", "fprintf", "stderr", "main",
    "NULL", "errno", "malloc", "calloc", "realloc", "free", "memcpy", "memset", "uintptr_t", "intptr_t",
    "ptrdiff_t", "omp_get_max_threads", "omp_get_thread_num", "omp_get_num_threads", "omp_set_num_threads",
};

/* Functions of the headers the generated C includes (<math.h>, <stdlib.h>,
 * <string.h>, <stdio.h>): an op so named would redeclare them (OpDSL's
 * `div` and `powf`). <math.h>'s come with 'f' and 'l' variants. */
static const char *const libm[] = {
    "acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh", "atanh", "cosh", "sinh", "tanh", "exp",
    "exp2", "expm1", "frexp", "ilogb", "ldexp", "log", "log10", "log1p", "log2", "logb", "modf", "scalbn",
    "scalbln", "cbrt", "fabs", "hypot", "pow", "sqrt", "erf", "erfc", "lgamma", "tgamma", "ceil", "floor",
    "nearbyint", "rint", "lrint", "llrint", "round", "lround", "llround", "trunc", "fmod", "remainder", "remquo",
    "copysign", "nan", "nextafter", "nexttoward", "fdim", "fmax", "fmin", "fma",
};
static const char *const libc[] = {
    "abs", "labs", "llabs", "div", "ldiv", "lldiv", "exit", "atexit", "atoi", "atol", "atoll", "atof", "strtol",
    "strtoll", "strtoul", "strtoull", "strtod", "strtof", "rand", "srand", "qsort", "bsearch", "getenv", "system",
    "aligned_alloc", "memmove", "memcmp", "memchr", "strlen", "strcmp", "strncmp", "strcpy", "strncpy", "strcat",
    "strchr", "strrchr", "strstr", "printf", "sprintf", "snprintf", "puts", "fputs", "fputc", "putchar", "fopen",
    "fclose", "fwrite", "fread", "remove", "rename",
};

/* name with every character that cannot be in a C identifier replaced by
 * '_', and a 'v' before a leading digit (or for an empty name). */
static char *identifier(Arena *arena, const char *name) {
  char *clean = arena_printf(arena, "%s%s", name[0] >= '0' && name[0] <= '9' ? "v" : "", name[0] ? name : "v");
  for (char *p = clean; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
      *p = '_';
  return clean;
}

/* Macros of standard headers a user may include before the generated header
 * (<complex.h> defines I): a parameter so named would be rewritten. */
static const char *const std_macros[] = {
    "I", "complex", "imaginary", "_Complex_I", "_Imaginary_I", "assert", "EOF", "INFINITY", "NAN", "HUGE_VAL",
    "HUGE_VALF", "offsetof", "static_assert", "noreturn", "alignas", "alignof", "BUFSIZ", "CHAR_BIT", "INT_MAX",
    "INT_MIN", "SIZE_MAX", "FLT_MAX", "DBL_MAX", "stdin", "stdout", "M_PI",
};

void names_init(NameTable *t, Arena *arena) {
  memset(t, 0, sizeof *t);
  t->arena = arena;
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
    strmap_put(&t->reserved, arena, reserved[i], (void *)reserved[i]);
  /* the library's functions join the reserved names, libm's with their
   * 'f' and 'l' variants */
  for (size_t i = 0; i < sizeof libc / sizeof *libc; i++)
    strmap_put(&t->reserved, arena, libc[i], (void *)libc[i]);
  for (size_t i = 0; i < sizeof libm / sizeof *libm; i++) {
    strmap_put(&t->reserved, arena, libm[i], (void *)libm[i]);
    for (const char *v = "fl"; *v; v++) {
      const char *name = arena_printf(arena, "%s%c", libm[i], *v);
      strmap_put(&t->reserved, arena, name, (void *)name);
    }
  }
  for (size_t i = 0; i < sizeof std_macros / sizeof *std_macros; i++)
    strmap_put(&t->macros, arena, std_macros[i], (void *)std_macros[i]);
}

void names_take(NameTable *t, const char *name) {
  intptr_t n = (intptr_t)strmap_get(&t->taken, name);
  strmap_put(&t->taken, t->arena, name, (void *)(n + 1));
  vec_push(t->arena, &t->claimed, (void *)name);
}

/* A hash lookup: a graph's kernel claims a name per tensor and per loop of
 * every op, 10^5 and more. */
static bool is_taken(const NameTable *t, const char *name) {
  if (strmap_has(&t->reserved, name))
    return true;
  if (strncmp(name, "lgen_", 5) == 0 || strncmp(name, "LGEN_", 5) == 0 || strncmp(name, "__", 2) == 0)
    return true;
  return strmap_get(&t->taken, name) != NULL;
}

const char *names_claim(NameTable *t, const char *base) {
  char *clean = identifier(t->arena, base);
  if (strmap_has(&t->macros, clean))
    clean = arena_printf(t->arena, "%s_", clean); /* I -> I_ */
  /* prefixes reserved for lgen and the implementation: no suffix frees them */
  if (strncmp(clean, "lgen_", 5) == 0 || strncmp(clean, "LGEN_", 5) == 0 || strncmp(clean, "__", 2) == 0)
    clean = arena_printf(t->arena, "v%s", clean);
  const char *name = clean;
  /* "_" + "_2" would be "__2", reserved again: after a trailing '_' the
   * suffix is the bare number */
  const char *suffix = clean[0] && clean[strlen(clean) - 1] == '_' ? "%s%d" : "%s_%d";
  if (is_taken(t, name)) {
    /* The lowest free suffix, as if trying 2, 3, ... in turn: a name once
     * taken stays taken, so the suffixes below the one the last claim of
     * this base found are still taken (each op's loops claim i, j, ...
     * again: without this, the n-th claim tried n suffixes). */
    int *next = strmap_get(&t->next_suffix, clean);
    if (!next) {
      next = arena_alloc(t->arena, sizeof *next);
      *next = 2;
      strmap_put(&t->next_suffix, t->arena, clean, next);
    }
    do
      name = arena_printf(t->arena, suffix, clean, (*next)++);
    while (is_taken(t, name));
    if (t->locals)
      strmap_put(&t->plain, t->arena, name, clean);
  }
  names_take(t, name);
  return name;
}

const char *names_plain(void *ctx, const char *name) {
  const NameTable *t = ctx;
  const char *plain = strmap_get(&t->plain, name);
  if (!plain || strmap_has(&t->reserved, plain) || strmap_has(&t->macros, plain) ||
      strncmp(plain, "lgen_", 5) == 0 || strncmp(plain, "LGEN_", 5) == 0 || strncmp(plain, "__", 2) == 0)
    return NULL;
  return plain;
}

int names_mark(const NameTable *t) { return t->claimed.len; }

void names_release(NameTable *t, int mark) {
  if (mark < 0 || mark >= t->claimed.len)
    return;
  while (t->claimed.len > mark) {
    const char *name = t->claimed.items[--t->claimed.len];
    intptr_t n = (intptr_t)strmap_get(&t->taken, name);
    strmap_put(&t->taken, t->arena, name, (void *)(n > 0 ? n - 1 : 0));
  }
  /* freed names may lie below a base's remembered next suffix: forget them
   * all (a scope's own names are few, so claims in the next one are cheap) */
  memset(&t->next_suffix, 0, sizeof t->next_suffix);
}

static const char *function_name(const Kernel *k, const char *prefix, Arena *arena) {
  return identifier(arena, arena_printf(arena, "%s%s", prefix, k->name));
}

void check_function_names(const Module *m, const char *prefix, Arena *arena, Diag *diag) {
  NameTable table;
  names_init(&table, arena);
  for (int i = 0; i < m->kernels.len; i++) {
    const Kernel *k = m->kernels.items[i];
    const char *name = function_name(k, prefix, arena);
    if (is_taken(&table, name)) {
      for (int j = 0; j < i; j++) {
        const Kernel *other = m->kernels.items[j];
        if (strcmp(function_name(other, prefix, arena), name) == 0) {
          StrBuf where = {0};
          diag_where(&where, other->loc);
          const char *at = arena_strdup(arena, sb_cstr(&where));
          sb_free(&where);
          diag_error(diag, k->loc, "op '%s' and op '%s' (%s) would both be the C function '%s'", k->name,
                     other->name, at, name);
        }
      }
      diag_error(diag, k->loc, "op name '%s' cannot be a C function name (it is reserved in C, C++ or the "
                 "generated code); rename the op or use --prefix", name);
    }
    names_take(&table, name);
  }
}

/* The schedule file's outline and libcall names are the user's C
 * functions: each a name of its own, not a keyword, a library function, a
 * generated function or a prefix the generated code uses. */
void check_outline_names(const Module *m, OpPlan **plans, const char *prefix, bool blob, Arena *arena, Diag *diag) {
  NameTable table;
  names_init(&table, arena);
  static const char *const suffixes[] = {"", "_run", "_workspace_size", "_profile", "_profile_reset",
                                         "_WORKSPACE_SIZE", "_WEIGHTS_SIZE"};
  for (int i = 0; i < m->kernels.len; i++)
    for (size_t s = 0; s < sizeof suffixes / sizeof *suffixes; s++)
      names_take(&table, arena_printf(arena, "%s%s", function_name(m->kernels.items[i], prefix, arena), suffixes[s]));
  const char *own = arena_printf(arena, "%slgen", prefix);
  for (int i = 0; i < m->kernels.len; i++) {
    const Kernel *k = m->kernels.items[i];
    for (int j = 0; j < k->nops; j++) {
      const OpPlan *plan = &plans[i][j];
      const char *name = plan->outline, *key = plan->libcall ? "libcall" : "outline";
      if (!name)
        continue;
      if (blob)
        diag_error(diag, plan->outline_loc, "%s does not work with a weights blob (--weights=FILE.bin) yet: use "
                   "--weights=FILE.c or embedded constants", key);
      if (strmap_has(&table.macros, name) || (name[0] == '_' && name[1] >= 'A' && name[1] <= 'Z'))
        diag_error(diag, plan->outline_loc, "%s name '%s' is reserved (a standard macro or the C "
                   "implementation's)", key, name);
      if (strncmp(name, "lgen", 4) == 0 || strncmp(name, "LGEN", 4) == 0 || strncmp(name, own, strlen(own)) == 0)
        diag_error(diag, plan->outline_loc, "%s name '%s' begins with lgen: such names are the generated code's",
                   key, name);
      for (int i2 = 0; i2 <= i; i2++) {
        const Kernel *k2 = m->kernels.items[i2];
        for (int j2 = 0; j2 < (i2 < i ? k2->nops : j); j2++)
          if (plans[i2][j2].outline && strcmp(plans[i2][j2].outline, name) == 0)
            diag_error(diag, plan->outline_loc, "'%s' is already the %s of op %d of '%s'", name,
                       plans[i2][j2].libcall ? "libcall" : "outline", j2, k2->name);
      }
      if (is_taken(&table, name))
        diag_error(diag, plan->outline_loc, "%s name '%s' is reserved in C or C++, or a name of the generated "
                   "code (a graph's functions, the library functions it calls)", key, name);
    }
  }
}

void kernel_names_init(KernelNames *kn, const Kernel *k, const char *prefix, Arena *arena) {
  kernel_names_init_outlines(kn, k, prefix, NULL, arena);
}

void kernel_names_init_outlines(KernelNames *kn, const Kernel *k, const char *prefix, const OpPlan *plans,
                                Arena *arena) {
  names_init(&kn->table, arena);
  kn->function = function_name(k, prefix, arena);
  kn->tensors = arena_alloc(arena, sizeof(char *) * (size_t)(k->ntensors + 1));
  kn->sizes = arena_alloc(arena, sizeof(char *) * (size_t)(k->nsizes + 1));
  kn->attrs = arena_alloc(arena, sizeof(char *) * (size_t)(k->nattrs + 1));
  kn->attr_counts = arena_alloc(arena, sizeof(char *) * (size_t)(k->nattrs + 1));
  /* the function's own names (a graph's G, G_run, G_workspace_size) must
   * not be shadowed by a parameter */
  const char *own[3] = {kn->function, arena_printf(arena, "%s_run", kn->function),
                        arena_printf(arena, "%s_workspace_size", kn->function)};
  for (int i = 0; i < 3; i++) { /* reserved too: loops_tidy_names gives no local these */
    names_take(&kn->table, own[i]);
    strmap_put(&kn->table.reserved, arena, own[i], (void *)own[i]);
  }
  for (int j = 0; plans && j < k->nops; j++) /* G_run calls them: no local may hide one */
    if (plans[j].outline) {
      names_take(&kn->table, plans[j].outline);
      strmap_put(&kn->table.reserved, arena, plans[j].outline, (void *)plans[j].outline);
    }
  for (int i = 0; i < k->ntensors; i++)
    kn->tensors[i] = names_claim(&kn->table, k->tensors[i].name);
  kn->kernel_tensors = kn->tensors;
  for (int i = 0; i < k->nsizes; i++)
    kn->sizes[i] = names_claim(&kn->table, k->sizes[i].name);
  for (int i = 0; i < k->nattrs; i++) {
    kn->attrs[i] = names_claim(&kn->table, k->attrs[i].name);
    if (k->attrs[i].is_array)
      kn->attr_counts[i] = names_claim(&kn->table, arena_printf(arena, "%s_count", k->attrs[i].name));
  }
  kn->table.locals = true;
}

/* ---- text from the input inside comments and string literals ----
 *
 * Names, doc strings and file names come from files that strangers write.
 * Each reaches the generated C only through these two functions, so that
 * none can end a comment or a string and become code. */

static bool printable(unsigned char c) { return c >= 0x20 && c < 0x7f; }

/* In a block comment: printable ASCII; other bytes and every '\' as the text
 * \xNN (so no backslash can splice a line); '*' '/', '/' '*' and '?' '?'
 * get a space between them, so that the comment can neither end nor nest
 * (directly, or through a C99 trigraph such as ??/ for '\'). No newline
 * survives, so a '//' cannot start a comment of its own either. */
const char *c_comment_text(Arena *arena, const char *s) {
  const unsigned char *q = (const unsigned char *)s; /* most text needs nothing: copied at once */
  while (*q && printable(*q) && *q != '\\' && !((q[0] == '*' && q[1] == '/') || (q[0] == '/' && q[1] == '*') ||
                                                (q[0] == '?' && q[1] == '?')))
    q++;
  if (!*q)
    return arena_strdup(arena, s);
  StrBuf sb = {0};
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (!printable(*p) || *p == '\\') {
      sb_printf(&sb, "\\x%02x", *p);
      continue;
    }
    sb_putc(&sb, (char)*p);
    if ((p[0] == '*' && p[1] == '/') || (p[0] == '/' && p[1] == '*') || (p[0] == '?' && p[1] == '?'))
      sb_putc(&sb, ' ');
  }
  const char *r = arena_strdup(arena, sb_cstr(&sb));
  sb_free(&sb);
  return r;
}

/* Inside "...": '"' and '\' escaped, other bytes outside printable ASCII as
 * three-digit octal escapes (a hex escape would swallow following hex
 * digits), and '?' after '?' as \? so that no trigraph forms. */
const char *c_string_text(Arena *arena, const char *s) {
  StrBuf sb = {0};
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      sb_putc(&sb, '\\');
    if (!printable(*p))
      sb_printf(&sb, "\\%03o", *p);
    else if (*p == '?' && p > (const unsigned char *)s && p[-1] == '?')
      sb_puts(&sb, "\\?");
    else
      sb_putc(&sb, (char)*p);
  }
  const char *r = arena_strdup(arena, sb_cstr(&sb));
  sb_free(&sb);
  return r;
}
