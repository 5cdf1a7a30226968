/* data_file.c - see data_file.h. The order of the checks matters: the
 * name is judged as text first (absolute, '..'), then where it really
 * leads (realpath, through every symbolic link, must stay inside an
 * allowed folder), then what it is (opened non-blocking and fstat'ed: a
 * FIFO or a device is refused without reading or waiting), then its size
 * against the bytes needed, and only then are those bytes read. */
#define _XOPEN_SOURCE 700 /* realpath, pread */
#include "util/data_file.h"
#include "util/fault.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The name with "." and empty segments dropped and "a/.." folded; NULL
 * when a ".." climbs above the start. */
static char *normalize(Arena *arena, const char *name) {
  size_t n = strlen(name);
  char *out = arena_alloc(arena, n + 1);
  size_t len = 0;
  int depth = 0;
  for (const char *p = name; *p;) {
    const char *seg = p;
    size_t sl = strcspn(seg, "/");
    p = seg + sl;
    while (*p == '/')
      p++;
    if (sl == 0 || (sl == 1 && seg[0] == '.'))
      continue;
    if (sl == 2 && seg[0] == '.' && seg[1] == '.') {
      if (depth == 0)
        return NULL;
      depth--;
      while (len > 0 && out[len - 1] != '/')
        len--;
      if (len > 0)
        len--; /* the slash */
      continue;
    }
    if (len > 0)
      out[len++] = '/';
    memcpy(out + len, seg, sl);
    len += sl;
    depth++;
  }
  out[len] = '\0';
  return out;
}

/* Whether `path` (resolved) is `dir` (resolved) or below it. */
static bool inside(const char *path, const char *dir) {
  size_t n = strlen(dir);
  if (n == 1 && dir[0] == '/')
    return true;
  return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static const char *resolved(Arena *arena, const char *path) {
  char *r = realpath(path, NULL);
  if (!r)
    return NULL;
  const char *copy = arena_strdup(arena, r);
  free(r);
  return copy;
}

const uint8_t *data_file_read(Arena *arena, const DataFilePolicy *policy, const char *name, uint64_t offset,
                              uint64_t want, bool exact, const char **path, const char **err, bool *io) {
  *path = NULL;
  *err = NULL;
  *io = false;
  if (!name[0]) {
    *err = "the file name is empty";
    return NULL;
  }
  const char *dir = policy->model_dir && policy->model_dir[0] ? policy->model_dir : ".";
  const char *file;
  if (name[0] == '/') {
    if (policy->nallow == 0) {
      *err = arena_printf(arena, "'%s' is an absolute path; a model may name only files inside its own folder "
                                 "(--allow-external=DIR allows another folder)", name);
      return NULL;
    }
    file = arena_strdup(arena, name); /* the caller records it; name may be freed with its JSON */
  } else {
    const char *norm = normalize(arena, name);
    if (!norm && policy->nallow == 0) {
      *err = arena_printf(arena, "'%s' leads out of the model's folder ('..'); a model may name only files "
                                 "inside it (--allow-external=DIR allows another folder)", name);
      return NULL;
    }
    if (norm && !norm[0]) {
      *err = arena_printf(arena, "'%s' names the model's folder, not a file", name);
      return NULL;
    }
    bool here = strcmp(dir, ".") == 0;
    size_t dl = strlen(dir);
    file = here && norm ? norm : arena_printf(arena, "%s%s%s", dir, dir[dl - 1] == '/' ? "" : "/", norm ? norm : name);
  }
  *path = file;
  const char *real = resolved(arena, file);
  if (!real) {
    *err = arena_printf(arena, "cannot open '%s': %s", file, strerror(errno));
    return NULL;
  }
  const char *real_dir = resolved(arena, dir);
  bool ok = real_dir && inside(real, real_dir);
  for (int i = 0; !ok && i < policy->nallow; i++) {
    const char *allowed = resolved(arena, policy->allow[i]);
    ok = allowed && inside(real, allowed);
  }
  if (!ok) {
    *err = arena_printf(arena, "'%s' leads out of the model's folder (it is '%s'); a model may name only files "
                               "inside it (--allow-external=DIR allows another folder)", file, real);
    return NULL;
  }
  /* O_NONBLOCK: opening a FIFO with no writer returns at once (and is then
   * refused as not regular); O_NOFOLLOW: the resolved name is no link. */
  int fd = fault_inject() ? (errno = EIO, -1) : open(real, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    *io = errno == EIO || errno == ENOMEM || errno == EMFILE || errno == ENFILE;
    *err = arena_printf(arena, "cannot open '%s': %s", file, strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    *err = arena_printf(arena, "'%s' is not a regular file", file);
    return NULL;
  }
  uint64_t size = (uint64_t)st.st_size;
  if (offset > size || want > size - offset || (exact && offset + want != size)) {
    close(fd);
    if (exact)
      *err = arena_printf(arena, "'%s' has %llu bytes, but the tensor needs %llu", file, (unsigned long long)size,
                          (unsigned long long)want);
    else
      *err = arena_printf(arena, "'%s' has %llu bytes, fewer than offset %llu + the %llu bytes the tensor needs",
                          file, (unsigned long long)size, (unsigned long long)offset, (unsigned long long)want);
    return NULL;
  }
  if (want > SIZE_MAX - 1 || offset > (uint64_t)INT64_MAX) {
    close(fd);
    *err = arena_printf(arena, "'%s': the tensor is too large to read", file);
    return NULL;
  }
  uint8_t *buf = arena_alloc(arena, (size_t)want + 1);
  size_t got = 0;
  while (got < want) {
    ssize_t r = fault_inject() ? (errno = EIO, -1) : pread(fd, buf + got, (size_t)want - got, (off_t)(offset + got));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      const char *why = r < 0 ? strerror(errno) : "it shrank while being read";
      *io = r < 0;
      close(fd);
      *err = arena_printf(arena, "error reading '%s': %s", file, why);
      return NULL;
    }
    got += (size_t)r;
  }
  close(fd);
  return buf;
}
