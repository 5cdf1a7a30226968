/* fault.h - failure injection for tests, as SQLite's test builds have it.
 *
 * In a build configured with --enable-fault-injection, every fallible
 * operation lgen performs itself (an allocation, opening, reading, writing
 * or closing a file, a rename) first asks fault_inject(); with the
 * environment variable LGEN_FAULT_AT=N the N-th such question answers yes,
 * and the operation fails as the system would (NULL, EIO). A test sweeps N
 * over a whole run and checks each failure path: exit status 3, one
 * message, no output file, no leak. LGEN_FAULT_COUNT=1 prints at exit how
 * many points a run passed, which bounds the sweep.
 *
 * The counter is process-global state, which lgen otherwise avoids; it
 * exists only in that build. In every other build fault_inject() is a
 * constant false that compiles away. */
#ifndef LGEN_FAULT_H
#define LGEN_FAULT_H

#include <stdbool.h>

#ifdef LGEN_FAULT_INJECTION
#include <stddef.h>
bool fault_inject(void);
void *fault_malloc(size_t size); /* malloc, or NULL when the point fails (for libraries' hooks) */
/* Whether the point has failed: a library that misreports its allocation
 * failures (Jansson's lexer calls some "invalid token") is told apart. */
bool fault_fired(void);
#else
static inline bool fault_inject(void) { return false; }
static inline bool fault_fired(void) { return false; }
#endif

#endif
