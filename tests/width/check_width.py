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

Prints each offending line (file:line: N columns) and exits 1 if any.
"""
import glob
import os
import re
import sys

LIMIT = 100

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
