# tests/lib.sh -- helpers shared by the shell tests (tests/*.test).
#
# Source it from a test after setting top_srcdir:
#
#   : "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
#   . "$top_srcdir/tests/lib.sh"
#
# It provides:
#   LGEN            the lgen binary (default: $top_srcdir/src/lgen)
#   TMP             a private scratch folder, removed on exit
#   pass/fail MSG   count and print one sub-check ("PASS: MSG" / "FAIL: MSG")
#   note MSG        print an indented detail line under a failure
#   check MSG CMD.. run CMD; pass if it succeeds, fail otherwise
#   run CMD..       run CMD with stdout/stderr in $TMP/run.out, $TMP/run.err,
#                   exit status in $rc (never aborts the test)
#   finish          print "N passed, N failed" and exit 0 (1 if any failed)
#   skip_all MSG    print MSG and exit 77 (automake's "skipped")
#   have_cmd NAME   true if NAME is on PATH
#   second_cc       true where clang compiles the generated C as a second
#                   compiler: in the sanitized build (LGEN_SANITIZED=yes),
#                   make check-all's second run of the suite, which shares
#                   the compilers with the plain run so that each runs once
#
# Tests never write into $top_srcdir (except golden.test under REGEN=1).

if [ -z "${top_srcdir:-}" ]; then
  echo "lib.sh: top_srcdir is not set" >&2
  exit 99
fi
case $top_srcdir in
  /*) ;;
  *) top_srcdir=$(cd "$top_srcdir" && pwd) ;;
esac
: "${LGEN:=$top_srcdir/src/lgen}"
case $LGEN in
  /*) ;;
  *) LGEN=$(cd "$(dirname "$LGEN")" && pwd)/$(basename "$LGEN") ;;
esac
export LGEN top_srcdir
LC_ALL=C
export LC_ALL

if [ ! -x "$LGEN" ]; then
  echo "lib.sh: lgen binary '$LGEN' is missing or not executable" >&2
  exit 99
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/lgen-test.XXXXXX") || {
  echo "lib.sh: mktemp -d failed" >&2
  exit 99
}
# shellcheck disable=SC2154
trap 'st=$?; rm -rf "$TMP"; exit $st' EXIT
trap 'exit 130' HUP INT TERM

npass=0
nfail=0

pass() {
  npass=$((npass + 1))
  printf 'PASS: %s\n' "$*"
}

fail() {
  nfail=$((nfail + 1))
  printf 'FAIL: %s\n' "$*"
}

note() {
  printf '      %s\n' "$*"
}

# note_file FILE [MAXLINES]: show the start of FILE under a failure.
note_file() {
  if [ -s "$1" ]; then
    sed -n "1,${2:-8}p" "$1" | sed 's/^/      | /'
  fi
}

check() {
  _msg=$1
  shift
  if "$@"; then
    pass "$_msg"
  else
    fail "$_msg"
  fi
}

run() {
  "$@" >"$TMP/run.out" 2>"$TMP/run.err"
  rc=$?
  return 0
}

have_cmd() {
  command -v "$1" >/dev/null 2>&1
}

second_cc() {
  [ "${LGEN_SANITIZED:-}" = yes ] && have_cmd clang
}

skip_all() {
  printf 'SKIP: %s\n' "$*"
  exit 77
}

finish() {
  printf '%d passed, %d failed\n' "$npass" "$nfail"
  if [ "$nfail" -eq 0 ]; then
    exit 0
  fi
  exit 1
}

# want_source LINEFILE LINE COL: what lgen's diagnostics show under the
# message for LINE:COL of LINEFILE (diag.c): the source line, non-printable
# bytes as '?', in $TMP/want.src, and the caret line in $TMP/want.caret. A
# line over 120 bytes is an excerpt: the 100 bytes from 50 before the
# column, whole UTF-8 characters, with "..." where it is cut.
want_source() {
  sed -n "${2}p" "$1" | tr -d '\r\n' >"$TMP/want.line"
  LC_ALL=C awk -v col="$3" -v src="$TMP/want.src0" -v car="$TMP/want.caret" '
    function cont(c) { return c >= "\200" && c <= "\277" }
    { line = line $0 }
    END {
      n = length(line); at = col - 1; from = 0; to = n
      if (n > 120) {
        from = at > 50 ? at - 50 : 0
        while (from > 0 && from < at && cont(substr(line, from + 1, 1))) from++
        to = n - from > 100 ? from + 100 : n
        while (to < n && to > at && cont(substr(line, to + 1, 1))) to--
      }
      pre = from > 0 ? "..." : ""
      printf "%s%s%s\n", pre, substr(line, from + 1, to - from), (to < n ? "..." : "") > src
      caret = from > 0 ? "   " : ""
      for (i = from + 1; i <= at; i++)  # one column per character: none for a UTF-8 continuation byte
        if (!cont(substr(line, i, 1))) caret = caret (substr(line, i, 1) == "\t" ? "\t" : " ")
      print caret "^" > car
    }' "$TMP/want.line"
  tr -c '\t\n -~' '?' <"$TMP/want.src0" >"$TMP/want.src"
}
