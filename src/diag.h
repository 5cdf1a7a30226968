/* diag.h - source files, locations and the one diagnostic function.
 *
 * A user error prints "FILE:LINE:COL: error: MESSAGE", the source line and a
 * caret, then unwinds to the compilation's entry point (longjmp): the first
 * error stops the compilation, so there is exactly one error per failed run.
 * Warnings print the same way and compilation goes on. Lines and columns are
 * 1-based; a column counts bytes (a tab is one column). */
#ifndef LGEN_DIAG_H
#define LGEN_DIAG_H

#include <setjmp.h>

#include "util/util.h"

typedef struct {
  const char *name; /* as given on the command line ("<stdin>" for -) */
  const char *text; /* NUL-terminated copy; may contain NUL bytes before len */
  size_t len;
} Source;

typedef struct {
  const Source *src; /* NULL: not about a position in a file */
  int line;
  int col;
  size_t offset; /* byte offset of the position, for the caret line */
  /* Non-NULL for a place in a binary file (an ONNX protobuf): the field
   * path that leads to it ("graph.node[5] 'Conv_3', attribute 'pads'"),
   * printed with the byte offset instead of a line, column and caret. */
  const char *field;
} Loc;

typedef struct {
  StrBuf out;       /* everything printed so far */
  int errors;
  int warnings;
  jmp_buf *on_error; /* where diag_error unwinds to */
} Diag;

/* "FILE:LINE" or "FILE: byte N" (a binary file): where a Loc is, for a
 * message that points at a second place. */
void diag_where(StrBuf *out, Loc loc);

/* The location of byte `offset` of src, counting lines as the .tc lexer
 * does (CR, LF, CRLF and LFCR are each one newline; a column counts bytes);
 * an offset past the end is the end. */
Loc diag_loc_at(const Source *src, size_t offset);

void diag_error(Diag *diag, Loc loc, const char *fmt, ...) LG_PRINTF(3, 4) LG_NORETURN;
void diag_warning(Diag *diag, Loc loc, const char *fmt, ...) LG_PRINTF(3, 4);
/* How an error unwinds: the value diag_error and friends longjmp to
 * diag->on_error with, which lgen_compile turns into its status. */
enum { DIAG_UNWIND_INPUT = 1, DIAG_UNWIND_BUG = 2, DIAG_UNWIND_IO = 3, DIAG_UNWIND_USAGE = 4 };
/* A command-line option that does not fit the input (--dim naming no
 * symbolic dim, ...): "lgen: error: MESSAGE", and the compilation stops
 * with the usage status (lgen exits 2). */
void diag_usage_error(Diag *diag, const char *fmt, ...) LG_PRINTF(2, 3) LG_NORETURN;
/* An internal inconsistency: reported as "lgen bug", never as a user error. */
void diag_bug(Diag *diag, const char *fmt, ...) LG_PRINTF(2, 3) LG_NORETURN;
/* A file lgen needs (a template, a constant's data) exists but cannot be
 * read: "lgen: error: MESSAGE", and the run fails as an I/O error (exit
 * status 3), not as a bad input. */
void diag_io_error(Diag *diag, const char *fmt, ...) LG_PRINTF(2, 3) LG_NORETURN;

#endif
