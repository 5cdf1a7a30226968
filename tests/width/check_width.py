#!/usr/bin/python3
"""check_width.py - generated C keeps to 100 columns (issue 16: code that
reads like careful hand-written C).

  check_width.py --templates DIR     every line of DIR/*.c, with each @KEY@
                                     placeholder replaced by the longest text
                                     src/emit/c_ext.c can put there
  check_width.py FILE...             every line of generated C files, and
                                     that their #includes are all at the top
                                     (before the first line of code)
  check_width.py --suffixes INPUT FILE...
                                     no identifier of the generated FILEs has
                                     a numbered suffix (k_2, t2_3) that is
                                     not in the input file INPUT's text: a
                                     name needs one only where a clash in
                                     scope forces it, and the examples have
                                     none
  check_width.py --braces FILE...    the closing brace of every braced for
                                     loop of the FILEs whose body is longer
                                     than LONG_LOOP lines names the loop's
                                     variable (`} /* i */`), and no shorter
                                     loop's does (src/loops/print_c.c
                                     LONG_LOOP_LINES; man/lgen.1, GENERATED
                                     CODE, promises the figure); the
                                     templates' hand-written code (from a
                                     `/* templates/X.c for T */` comment to
                                     two blank lines) is as it is

Prints each offending line (file:line: N columns) and exits 1 if any.
"""
import glob
import os
import re
import sys

LIMIT = 100
# The longest body a loop's closing brace leaves unlabelled: the man page's
# figure, as src/loops/print_c.c's LONG_LOOP_LINES.
LONG_LOOP = 24

# The longest expansion of each placeholder (src/emit/c_ext.c instantiate and
# src/ir/elem_types.def): suffixes "u64_i64", types "uint64_t"/"lgen_f16",
# extremes "(-1.0f / 0.0f)", the f32 math helpers "lgen_expneg_f32", ...
# An unknown placeholder counts as 32 columns, so a new one is not free.
LONGEST = {
    "S": "u64_i64", "T": "uint64_t", "I": "int64_t",
    "LOWEST": "(-1.0f / 0.0f)", "HIGHEST": "(1.0f / 0.0f)",
    "EXP": "lgen_exp_f32", "LOG": "lgen_log_f32", "EXPNEG": "lgen_expneg_f32",
    "TOF32": "LGEN_F16_TO_F32", "FROMF32": "LGEN_F32_TO_F16", "SINT": "uint16_t",
    "C": "double", "TOC": "LGEN_F16_TO_F32", "FROMC": "LGEN_F32_TO_F16",
    "CFMA": "LGEN_FMAF", "CEXP": "lgen_exp_f32", "CEXPNEG": "lgen_expneg_f32",
    "CTANH": "lgen_tanh_f32", "CSIMD": "/* libm's exp: no omp simd */",
    "ISNAN": "LGEN_NEVER_NAN", "ARITH": "uint64_t",
}


def expand(line):
    return re.sub(r"@([A-Z0-9]+)@", lambda m: LONGEST.get(m.group(1), "x" * 32), line)


def check(path, lines, transform):
    bad = 0
    for n, text in enumerate(lines, 1):
        width = len(transform(text.rstrip("\n")).expandtabs(8))
        if width > LIMIT:
            print("%s:%d: %d columns: %s" % (path, n, width, text.strip()[:80]))
            bad += 1
    return bad


def late_includes(path, lines):
    """#include lines after the first line of code (not a comment, a
    preprocessor line or blank)."""
    bad = 0
    code = None
    in_comment = False
    for n, text in enumerate(lines, 1):
        s = text.strip()
        if in_comment:
            in_comment = "*/" not in s
            continue
        if s.startswith("#include"):
            if code:
                print("%s:%d: #include after code (line %d): %s" % (path, n, code, s[:80]))
                bad += 1
            continue
        if not s or s.startswith("#") or s.startswith("//"):
            continue
        if s.startswith("/*"):
            in_comment = "*/" not in s[2:]
            continue
        if code is None:
            code = n
    return bad


def numbered(path, lines, source):
    bad = 0
    seen = set()
    for n, text in enumerate(lines, 1):
        code = re.sub(r'"(\\.|[^"\\])*"', '""', text)  # not in string literals (weights' bytes)
        for name in re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*_[0-9]+\b", code):
            if name not in source and name not in seen:
                seen.add(name)
                print("%s:%d: numbered suffix: %s" % (path, n, name))
                bad += 1
    return bad


FOR = re.compile(r"^( *)for \((?:[A-Za-z_]\w* +\**)+(\w+) = ")


def braces(path, lines):
    """For loops whose closing brace is labelled when it should not be, or
    not when it should. A loop's header ends where the parenthesis after
    `for` closes (it may span continuation lines); a braced body ends at the
    first line at the loop's indentation that starts with `}`. The body's
    lines are all lines in between, as the printer counts them."""
    bad = 0
    long_loops = 0
    template = False
    for i, text in enumerate(lines):
        if text.startswith("/* templates/"):
            template = True
        elif template and not text.strip() and i > 0 and not lines[i - 1].strip():
            template = False
        m = FOR.match(text)
        if not m or template:
            continue
        indent, var = m.group(1), m.group(2)
        depth, j, rest = 0, i, None
        while j < len(lines) and rest is None:
            line = lines[j] if j > i else lines[j][m.end(1):]
            for c, ch in enumerate(line):
                depth += 1 if ch == "(" else -1 if ch == ")" else 0
                if ch == ")" and depth == 0:
                    rest = line[c + 1:].rstrip("\n")
                    break
            else:
                j += 1
        if rest != " {":
            continue  # a body without braces (or not a loop lgen printed)
        k = j + 1
        while k < len(lines) and not (lines[k].startswith(indent + "}") and
                                      not lines[k][len(indent)].isspace()):
            k += 1
        if k == len(lines):
            print("%s:%d: for (%s) has no closing brace" % (path, i + 1, var))
            bad += 1
            continue
        body = k - j - 1
        close = lines[k].rstrip("\n")[len(indent):]
        want = "} /* %s */" % var if body > LONG_LOOP else "}"
        long_loops += body > LONG_LOOP
        if close != want:
            print("%s:%d: the loop over %s (line %d, %d lines of body) closes with %r, not %r" %
                  (path, k + 1, var, i + 1, body, close, want))
            bad += 1
    return bad, long_loops


def main(argv):
    bad = 0
    if len(argv) >= 3 and argv[1] == "--suffixes":
        with open(argv[2], errors="replace") as fh:
            source = fh.read()
        for f in argv[3:]:
            with open(f) as fh:
                bad += numbered(f, fh.readlines(), source)
        print("%d files, %d names with a numbered suffix" % (len(argv) - 3, bad))
        return 1 if bad else 0
    if len(argv) >= 2 and argv[1] == "--braces":
        labelled = 0
        for f in argv[2:]:
            with open(f) as fh:
                b, n = braces(f, fh.readlines())
            bad += b
            labelled += n
        print("%d files, %d loops longer than %d lines, %d closing braces wrong" %
              (len(argv) - 2, labelled, LONG_LOOP, bad))
        return 1 if bad else 0
    if len(argv) == 3 and argv[1] == "--templates":
        files = sorted(glob.glob(os.path.join(argv[2], "*.c")))
        if not files:
            print("no templates in %s" % argv[2])
            return 1
        for f in files:
            with open(f) as fh:
                bad += check(f, fh.readlines(), expand)
        print("%d templates, %d lines over %d columns (placeholders at their longest)" % (len(files), bad, LIMIT))
    else:
        for f in argv[1:]:
            with open(f) as fh:
                lines = fh.readlines()
            bad += check(f, lines, lambda s: s) + late_includes(f, lines)
        print("%d files, %d lines over %d columns or #includes after code" % (len(argv) - 1, bad, LIMIT))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
