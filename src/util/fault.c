/* fault.c - the counter behind fault_inject() (fault.h); empty unless
 * configured with --enable-fault-injection. */
#include "util/fault.h"

#ifdef LGEN_FAULT_INJECTION
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static long fault_at = -1; /* LGEN_FAULT_AT, read once; 0: never */
static long fault_seen;

static void report_count(void) { fprintf(stderr, "lgen: fault points passed: %ld\n", fault_seen); }

bool fault_inject(void) {
  if (fault_at < 0) {
    const char *at = getenv("LGEN_FAULT_AT");
    fault_at = at ? strtol(at, NULL, 10) : 0;
    const char *count = getenv("LGEN_FAULT_COUNT");
    if (count && *count == '1')
      atexit(report_count);
  }
  if (++fault_seen != fault_at)
    return false;
  errno = EIO;
  return true;
}

bool fault_fired(void) { return fault_at > 0 && fault_seen >= fault_at; }
#else
typedef int lgen_fault_injection_is_off; /* ISO C wants a translation unit to declare something */
#endif
