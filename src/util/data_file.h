/* data_file.h - reading the data files a model names (ONNX external data,
 * lgen-graph/1's constant "file"), under lgen's file policy (lgen(1),
 * SECURITY): a model file comes from a stranger, so it may name only
 * regular files inside its own folder (or a folder --allow-external
 * adds), and lgen reads only the bytes the tensor needs. */
#ifndef LGEN_DATA_FILE_H
#define LGEN_DATA_FILE_H

#include "util/util.h"

typedef struct {
  const char *model_dir;     /* the model's folder ("." for standard input) */
  const char *const *allow;  /* more folders a model may read from (--allow-external) */
  int nallow;
} DataFilePolicy;

/* `want` bytes at `offset` of the file `name` (as the model gives it,
 * relative to its folder). exact: the file must hold exactly offset + want
 * bytes (lgen-graph/1), else at least that many (ONNX). Returns the bytes
 * (want + 1 in the arena) and sets *path to the file's path as opened
 * (model_dir/name, for -MD), or returns NULL with *err a message naming
 * the path (the caller names the tensor and the place in the model), and
 * *io true when the cause is the system's (EIO and the like: lgen's exit 3)
 * rather than the model's.
 * Refused: an empty or absolute name, one whose '..' leads out of the
 * model's folder, one that leads out through a symbolic link, anything but
 * a regular file (a FIFO is never waited on), and a file too short. */
const uint8_t *data_file_read(Arena *arena, const DataFilePolicy *policy, const char *name, uint64_t offset,
                              uint64_t want, bool exact, const char **path, const char **err, bool *io);

#endif
