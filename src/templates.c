/* templates.c - finding and reading the templates of non-structured ops
 * (templates/README). The emitter gets their text; the paths go to -MD
 * depfiles, so that make regenerates a kernel when its template changes.
 *
 * Where: $LGEN_TEMPLATE_DIR when set (tests point it at the source tree);
 * else the installed $(pkgdatadir)/templates when the file is there; else
 * the templates/ of the source tree lgen was configured in (an uninstalled
 * lgen, make check and make distcheck). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit/c_emit.h"
#include "util/fault.h"

#ifndef LGEN_TEMPLATE_DIR
#define LGEN_TEMPLATE_DIR "/usr/local/share/lgen/templates"
#endif
#ifndef LGEN_SOURCE_TEMPLATE_DIR
#define LGEN_SOURCE_TEMPLATE_DIR "templates"
#endif

/* The whole file, or NULL when there is none; a file that is there but
 * cannot be read is an I/O error. */
static char *read_text(const char *path, Arena *arena, Diag *diag) {
  FILE *f = fault_inject() ? NULL : fopen(path, "rb");
  if (!f && errno == ENOENT)
    return NULL;
  if (!f)
    diag_io_error(diag, "cannot read the template file '%s': %s", path, strerror(errno));
  StrBuf sb = {0};
  char buf[4096];
  size_t n;
  bool bad = false;
  while (!(bad = fault_inject()) && (n = fread(buf, 1, sizeof buf, f)) > 0)
    sb_putn(&sb, buf, n);
  bad = bad || ferror(f) != 0;
  fclose(f);
  if (bad) {
    sb_free(&sb);
    diag_io_error(diag, "cannot read the template file '%s': %s", path, strerror(EIO));
  }
  char *text = arena_strdup(arena, sb_cstr(&sb));
  sb_free(&sb);
  return text;
}

static bool have(const TemplateSet *set, const char *name) {
  for (int i = 0; i < set->count; i++)
    if (strcmp(set->files[i].name, name) == 0)
      return true;
  return false;
}

static void load_one(TemplateSet *set, int cap, const char *name, PtrVec *deps, Arena *arena, Diag *diag) {
  const char *env = getenv("LGEN_TEMPLATE_DIR");
  const char *dirs[3];
  int ndirs = 0;
  if (env && *env)
    dirs[ndirs++] = env;
  else {
    dirs[ndirs++] = LGEN_TEMPLATE_DIR;
    dirs[ndirs++] = LGEN_SOURCE_TEMPLATE_DIR;
  }
  for (int i = 0; i < ndirs; i++) {
    const char *path = arena_printf(arena, "%s/%s.c", dirs[i], name);
    char *text = read_text(path, arena, diag);
    if (!text)
      continue;
    if (set->count >= cap)
      diag_bug(diag, "template table overflow");
    set->files[set->count++] = (TemplateFile){.name = name, .path = path, .text = text};
    if (deps)
      vec_push(arena, deps, (void *)path);
    return;
  }
  diag_error(diag, (Loc){0}, "cannot read the template '%s.c' (looked in %s%s%s); set LGEN_TEMPLATE_DIR to lgen's "
             "templates folder", name, dirs[0], ndirs > 1 ? " and " : "", ndirs > 1 ? dirs[1] : "");
}

void templates_load(TemplateSet *set, const Module *m, PtrVec *deps, Arena *arena, Diag *diag) {
  int cap = 0;
  for (int i = 0; i < m->kernels.len; i++) {
    const Kernel *k = m->kernels.items[i];
    for (int j = 0; j < k->nops; j++)
      cap += k->ops[j].ext != NULL;
  }
  set->count = 0;
  set->files = arena_alloc(arena, sizeof *set->files * (size_t)(cap + 1));
  for (int i = 0; i < m->kernels.len; i++) {
    const Kernel *k = m->kernels.items[i];
    for (int j = 0; j < k->nops; j++)
      if (k->ops[j].ext && !have(set, k->ops[j].ext->tmpl))
        load_one(set, cap, k->ops[j].ext->tmpl, deps, arena, diag);
  }
}
