#!/usr/bin/env python3
"""Generate ``fastbpe/_unicode_tables.h``: per-code-point flags for the C pre-tokenizer.

Usage (from the repository root)::

    python tools/gen_unicode_tables.py                  # writes fastbpe/_unicode_tables.h
    python tools/gen_unicode_tables.py --check          # exit 1 if the committed file is stale
    python tools/gen_unicode_tables.py --unicode regex  # pure-`regex` tables (not committed)

Every flag is computed by asking the installed ``regex`` package itself, code point by
code point (0..0x10FFFF, surrogates included).  The composite classes the split patterns
use (``[^\\s\\p{L}\\p{N}]``, ``[^\\r\\n\\p{L}\\p{N}]``, o200k's two letter-case classes) are
checked against ``regex`` too, so a change in how ``regex`` defines a property cannot slip
through silently.

tiktoken is the authority for ids, and its Rust regex can be on an older Unicode version
than ``regex`` (tiktoken 0.14: Unicode 16.0; regex 2026.5.9: Unicode 17.0).  So by default
(``--unicode tiktoken``, the committed header) the flags of the code points listed in
``tools/tiktoken_unicode_overrides.txt`` are replaced by the flags tiktoken's regex gives
them.  That file is data, made by ``python tools/compare_tiktoken_unicode.py --emit-ranges``
(which needs tiktoken); this generator only reads it, so it runs without tiktoken.  It
checks that ``regex`` still gives the listed code points the flags recorded there and that
its Unicode version is the recorded one, and stops otherwise: the list would be stale.
``--unicode regex`` ignores the file and gives tables equal to ``regex``'s classes.

Layout: a two-level table.  ``fb_stage1[cp >> 8]`` names a 256-entry block of
``fb_stage2``; blocks are deduplicated (most of the code space is a handful of
identical blocks).  One flag byte per code point:

    FB_L   \\p{L}                      FB_U   [\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]
    FB_N   \\p{N}                      FB_W   [\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]
    FB_S   \\s  (regex's, str patterns) FB_M   \\p{M}
    FB_LT  \\p{Lt}                     FB_LM  \\p{Lm}

From these all of Lu, Ll, Lt, Lm, Lo and M are recoverable (see the header comment).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import regex

NCP = 0x110000
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fastbpe", "_unicode_tables.h")
OVERRIDES = os.path.join(ROOT, "tools", "tiktoken_unicode_overrides.txt")

FLAGS = [  # (name, bit, regex class)
    ("FB_L", 0x01, r"\p{L}"),
    ("FB_N", 0x02, r"\p{N}"),
    ("FB_S", 0x04, r"\s"),
    ("FB_U", 0x08, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
    ("FB_W", 0x10, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
    ("FB_M", 0x20, r"\p{M}"),
    ("FB_LT", 0x40, r"\p{Lt}"),
    ("FB_LM", 0x80, r"\p{Lm}"),
]

# Letters of the English contractions ('s 't 're 've 'm 'll 'd) matched case-insensitively.
CONTRACTION_LETTERS = "sdmtlvre"

# Scripts first encoded in each Unicode version: the newest one `regex` knows gives its version.
VERSION_MARKERS = [
    ("13.0", ["Chorasmian", "Dives_Akuru", "Khitan_Small_Script", "Yezidi"]),
    ("14.0", ["Cypro_Minoan", "Old_Uyghur", "Tangsa", "Toto", "Vithkuqi"]),
    ("15.0", ["Kawi", "Nag_Mundari"]),
    ("16.0", ["Garay", "Gurung_Khema", "Kirat_Rai", "Ol_Onal", "Sunuwar", "Todhri", "Tulu_Tigalari"]),
    ("17.0", ["Beria_Erfe", "Sidetic", "Tai_Yo", "Tolong_Siki"]),
]


def all_code_points() -> str:
    return "".join(map(chr, range(NCP)))


def class_mask(cls: str, text: str) -> np.ndarray:
    """Boolean array: which code points `regex` matches with the character class `cls`."""
    mask = np.zeros(NCP, dtype=bool)
    for m in regex.finditer(f"(?:{cls})+", text):
        mask[m.start() : m.end()] = True
    return mask


def unicode_version() -> str:
    known = "unknown"
    for version, scripts in VERSION_MARKERS:
        for script in scripts:
            try:
                regex.compile(r"\p{Script=%s}" % script)
            except regex.error:
                continue
            known = version
            break
    return known


def compute_flags(text: str) -> np.ndarray:
    flags = np.zeros(NCP, dtype=np.uint8)
    masks = {}
    for name, bit, cls in FLAGS:
        masks[name] = m = class_mask(cls, text)
        flags[m] |= bit

    # Consistency checks against regex's own composite classes.
    cats = {c: class_mask(r"\p{%s}" % c, text) for c in ("Lu", "Ll", "Lt", "Lm", "Lo", "M")}
    union_l = cats["Lu"] | cats["Ll"] | cats["Lt"] | cats["Lm"] | cats["Lo"]
    assert (union_l == masks["FB_L"]).all(), r"\p{L} is not Lu|Ll|Lt|Lm|Lo"
    assert not (masks["FB_L"] & masks["FB_N"]).any()
    assert not (masks["FB_S"] & (masks["FB_L"] | masks["FB_N"] | masks["FB_M"])).any()
    other = ~(masks["FB_S"] | masks["FB_L"] | masks["FB_N"])
    assert (other == class_mask(r"[^\s\p{L}\p{N}]", text)).all()
    nl = np.zeros(NCP, dtype=bool)
    nl[[0x0A, 0x0D]] = True
    assert (~(nl | masks["FB_L"] | masks["FB_N"]) == class_mask(r"[^\r\n\p{L}\p{N}]", text)).all()
    assert nl[masks["FB_S"]].sum() == 2  # \r and \n are \s
    assert (~masks["FB_S"] == class_mask(r"\S", text)).all()

    # The header comment tells how to recover each category from the flags: check it.
    f = flags
    L, U, W, M, LT, LM = (f & 1) > 0, (f & 8) > 0, (f & 16) > 0, (f & 32) > 0, (f & 64) > 0, (f & 128) > 0
    assert (cats["Lu"] == (L & U & ~W & ~LT)).all()
    assert (cats["Lt"] == LT).all()
    assert (cats["Ll"] == (L & W & ~U)).all()
    assert (cats["Lm"] == LM).all()
    assert (cats["Lo"] == (L & U & W & ~LM)).all()
    assert (cats["M"] == M).all()
    assert (M <= (U & W & ~L)).all()
    check_invariants(flags)
    return flags


def check_invariants(flags: np.ndarray) -> None:
    """What the scanner relies on, for any table (regex's or with overrides applied)."""
    L, N, S, U, W, M, LT, LM = ((flags & bit) > 0 for _, bit, _ in FLAGS)
    assert not (L & N).any() and not (S & (L | N | M | U | W)).any()
    assert (M <= (U & W & ~L)).all()
    assert ((U | W) <= (L | M)).all() and (L <= (U | W)).all()
    assert (LT <= (L & U & ~W)).all() and (LM <= (L & U & W)).all()
    assert not (N & (U | W | M)).any()
    for c in "\r\n":
        assert flags[ord(c)] == 0x04  # \r and \n are \s, and nothing else


# ---------------------------------------------------------------------------------------
# tiktoken's Unicode version: tools/tiktoken_unicode_overrides.txt
# ---------------------------------------------------------------------------------------
#
# Format (written by tools/compare_tiktoken_unicode.py --emit-ranges, read here):
#   "# ..." comment lines; "key: value" metadata lines; and one line per range:
#   FIRST..LAST  REGEX_FLAGS  TIKTOKEN_FLAGS  # comment
#   (hex code points; flag bytes in hex as in FLAGS: the flags `regex` gives every code
#   point of the range, and the flags tiktoken's regex gives them).


def describe(f: int) -> str:
    """Short name of the class a flag byte stands for: Lu, Ll, Lt, Lm, Lo, M, N, S or Cn."""
    if f & 0x01:
        if f & 0x40:
            return "Lt"
        if f & 0x80:
            return "Lm"
        return {0x08: "Lu", 0x10: "Ll", 0x18: "Lo"}.get(f & 0x18, "L?")
    if f & 0x20:
        return "M"
    if f & 0x02:
        return "N"
    if f & 0x04:
        return "S"
    return "Cn" if f == 0 else "?%02X" % f


def diff_ranges(a: np.ndarray, b: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(first, last, a flags, b flags) for each run of code points where a != b, split
    wherever either flag byte changes."""
    out: list[list[int]] = []
    for cp in np.nonzero(a != b)[0].tolist():
        fa, fb = int(a[cp]), int(b[cp])
        if out and out[-1][1] == cp - 1 and out[-1][2] == fa and out[-1][3] == fb:
            out[-1][1] = cp
        else:
            out.append([cp, cp, fa, fb])
    return [tuple(r) for r in out]


def format_overrides(meta: dict[str, str], ranges, header: list[str]) -> str:
    lines = ["# " + h if h else "#" for h in header]
    lines.append("")
    lines += ["%s: %s" % kv for kv in meta.items()]
    lines.append("")
    for first, last, rf, tf in ranges:
        n = last - first + 1
        lines.append("%04X..%04X  %02X %02X  # %s -> %s, %d code point%s" % (
            first, last, rf, tf, describe(rf), describe(tf), n, "" if n == 1 else "s"))
    return "\n".join(lines) + "\n"


def read_overrides(path: str = OVERRIDES):
    """(metadata dict, [(first, last, regex flags, tiktoken flags)]) from the data file."""
    meta: dict[str, str] = {}
    ranges = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if ".." in line.split()[0]:
                span, rf, tf = line.split()
                first, last = (int(x, 16) for x in span.split(".."))
                assert 0 <= first <= last < NCP, "%s:%d: bad range" % (path, lineno)
                ranges.append((first, last, int(rf, 16), int(tf, 16)))
            else:
                key, _, value = line.partition(":")
                meta[key.strip()] = value.strip()
    return meta, ranges


class StaleOverrides(Exception):
    pass


def apply_overrides(flags: np.ndarray, path: str = OVERRIDES) -> tuple[np.ndarray, dict[str, str], int]:
    """flags with the data file's ranges set to tiktoken's flags; also the metadata and
    the number of code points changed.  Raises StaleOverrides if the file was made with a
    `regex` on another Unicode version or no longer describes what `regex` gives."""
    meta, ranges = read_overrides(path)
    uver = unicode_version()
    if meta.get("regex-unicode") != uver:
        raise StaleOverrides(
            "%s was made with regex on Unicode %s; the installed regex %s is on Unicode %s"
            % (path, meta.get("regex-unicode"), regex.__version__, uver))
    out = flags.copy()
    n = 0
    for first, last, rf, tf in ranges:
        got = set(flags[first : last + 1].tolist())
        if got != {rf}:
            raise StaleOverrides(
                "%s: regex gives U+%04X..U+%04X the flags %s, the file says %02X"
                % (path, first, last, ",".join("%02X" % g for g in sorted(got)), rf))
        out[first : last + 1] = tf
        n += last - first + 1
    check_invariants(out)
    return out, meta, n


def parse_folds(text: str) -> dict[int, str]:
    """'017F=s 212A=k' -> {0x17F: 's', 0x212A: 'k'}."""
    folds = {}
    for item in text.split():
        cp, letter = item.split("=")
        folds[int(cp, 16)] = letter
    return folds


def contraction_folds(text: str) -> dict[int, str]:
    """Non-ASCII code points that `regex` matches case-insensitively with a contraction letter."""
    folds = {}
    for letter in CONTRACTION_LETTERS:
        for m in regex.finditer("(?i:%s)" % letter, text):
            cp = ord(m.group())
            if cp >= 0x80:
                assert cp not in folds
                folds[cp] = letter
            else:
                assert m.group().lower() == letter
    return folds


def build_tables(flags: np.ndarray):
    blocks: list[bytes] = []
    index: dict[bytes, int] = {}
    stage1 = []
    for hi in range(NCP >> 8):
        blk = flags[hi << 8 : (hi + 1) << 8].tobytes()
        if blk not in index:
            index[blk] = len(blocks)
            blocks.append(blk)
        stage1.append(index[blk])
    return stage1, blocks


def c_array(values, per_line: int) -> str:
    lines = []
    for i in range(0, len(values), per_line):
        lines.append("    " + ",".join("%d" % v for v in values[i : i + per_line]) + ",")
    return "\n".join(lines)


def render(source: str = "tiktoken", overrides: str = OVERRIDES) -> str:
    text = all_code_points()
    flags = compute_flags(text)
    folds = contraction_folds(text)
    regex_uver = unicode_version()
    if source == "tiktoken":
        flags, meta, n_over = apply_overrides(flags, overrides)
        folds = parse_folds(meta.get("contraction-folds", ""))
        uver = meta["tiktoken-unicode"]
    else:
        assert source == "regex", source
        uver = regex_uver
    stage1, blocks = build_tables(flags)
    stage1_type = "uint8_t" if len(blocks) <= 256 else "uint16_t"
    counts = {name: int(((flags & bit) > 0).sum()) for name, bit, _ in FLAGS}

    out = []
    w = out.append
    w("/* fastbpe/_unicode_tables.h -- GENERATED by tools/gen_unicode_tables.py; do not edit.")
    w(" *")
    if source == "tiktoken":
        rel = os.path.relpath(overrides, ROOT).replace(os.sep, "/")
        w(" * Regenerate:  python tools/gen_unicode_tables.py")
        w(" * Unicode:     %s, as tiktoken %s (%s) splits." % (uver, meta["tiktoken-version"], meta["tiktoken-regex"]))
        w(" * Source:      the `regex` package %s (Unicode %s), queried for every code point" % (regex.__version__, regex_uver))
        w(" *              0..0x10FFFF, except the %d code points listed in" % n_over)
        w(" *              %s: those get the flags tiktoken's" % rel)
        w(" *              regex gives them (mostly unassigned before Unicode %s: no flag)." % regex_uver)
        w(" *              That list is made by python tools/compare_tiktoken_unicode.py --emit-ranges.")
        w(" *              `python tools/gen_unicode_tables.py --unicode regex` gives regex's tables.")
    else:
        w(" * Regenerate:  python tools/gen_unicode_tables.py --unicode regex")
        w(" *              (the committed tables are made without --unicode regex: see below)")
        w(" * Unicode:     %s, as the `regex` package %s." % (uver, regex.__version__))
        w(" * Source:      the `regex` package %s (Unicode %s), queried for every code point" % (regex.__version__, regex_uver))
        w(" *              0..0x10FFFF, so the flags equal regex's classes for str patterns.")
    w(" *")
    w(" * Two-level lookup: fb_stage2[fb_stage1[cp >> 8]][cp & 0xFF] is the flag byte of cp.")
    w(" * %d distinct 256-entry blocks; %d bytes in all." % (len(blocks), len(stage1) * (1 if stage1_type == "uint8_t" else 2) + 256 * len(blocks)))
    w(" *")
    w(" * Flag bits (code points per flag in parentheses):")
    for name, bit, cls in FLAGS:
        w(" *   %-6s 0x%02X  %-34s (%d)" % (name, bit, cls.replace("*/", "* /"), counts[name]))
    w(" * Categories are recovered as:  Lu = L&U&!W&!LT   Ll = L&W&!U   Lt = LT   Lm = LM")
    w(" *                               Lo = L&U&W&!LM    M = M (and M implies U&W&!L)")
    w(" *")
    w(" * Case-insensitive contraction letters ('s 't 're 've 'm 'll 'd, (?i:...), simple")
    w(" * case folding): ASCII letters of either case, plus the non-ASCII code points in")
    w(" * fb_contraction_letter() below.")
    if source == "regex":
        w(" *")
        w(" * tiktoken splits with Rust's regex crates, whose Unicode version can be older: the")
        w(" * committed tables follow tiktoken instead (docs/pretokenize.md).")
    w(" */")
    w("#ifndef FASTBPE_UNICODE_TABLES_H")
    w("#define FASTBPE_UNICODE_TABLES_H")
    w("")
    w("#include <stdint.h>")
    w("")
    w('#define FB_REGEX_VERSION "%s"' % regex.__version__)
    w('#define FB_REGEX_UNICODE_VERSION "%s"' % regex_uver)
    w('#define FB_UNICODE_VERSION "%s"' % uver)
    w('#define FB_UNICODE_SOURCE "%s"' % source)
    w("")
    for name, bit, cls in FLAGS:
        w("#define %-6s 0x%02X" % (name, bit))
    w("")
    w("static const %s fb_stage1[%d] = {" % (stage1_type, len(stage1)))
    w(c_array(stage1, 32))
    w("};")
    w("")
    w("static const uint8_t fb_stage2[%d][256] = {" % len(blocks))
    for blk in blocks:
        w("  {")
        w(c_array(list(blk), 32))
        w("  },")
    w("};")
    w("")
    w("/* Flag byte of code point cp (cp <= 0x10FFFF). */")
    w("static inline uint8_t fb_cp_flags(uint32_t cp) {")
    w("    return fb_stage2[fb_stage1[cp >> 8]][cp & 0xFF];")
    w("}")
    w("")
    w("/* Flag bytes of the 128 ASCII code points (the first half of block 0). */")
    w("#define fb_ascii_flags (fb_stage2[0])")
    w("")
    w("/* Lower-case ASCII contraction letter that cp matches case-insensitively, else 0. */")
    w("static inline int fb_contraction_letter(uint32_t cp) {")
    w("    if (cp < 0x80) {")
    w("        uint32_t c = cp | 0x20;")
    w("        switch (c) {")
    for letter in CONTRACTION_LETTERS:
        w("        case '%s':" % letter)
    w("            return (int)c;  /* cp is the letter in upper or lower case */")
    w("        }")
    w("        return 0;")
    w("    }")
    w("    switch (cp) {")
    for cp, letter in sorted(folds.items()):
        w("    case 0x%04X: return '%s';" % (cp, letter))
    w("    }")
    w("    return 0;")
    w("}")
    w("")
    w("#endif /* FASTBPE_UNICODE_TABLES_H */")
    w("")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only check that the file is up to date")
    ap.add_argument("--unicode", choices=("tiktoken", "regex"), default="tiktoken",
                    help="tiktoken (default, committed): regex's classes with tiktoken's Unicode "
                    "version applied from --overrides; regex: regex's classes as they are")
    ap.add_argument("--overrides", default=OVERRIDES, help="data file of --unicode tiktoken (default: %(default)s)")
    ap.add_argument("-o", "--output", default=OUT)
    args = ap.parse_args()
    try:
        text = render(args.unicode, args.overrides)
    except StaleOverrides as e:
        print("error: %s\nRerun python tools/compare_tiktoken_unicode.py --emit-ranges (needs tiktoken),"
              " or use --unicode regex." % e, file=sys.stderr)
        return 2
    if args.check:
        with open(args.output, encoding="utf-8") as f:
            same = f.read() == text
        print("%s is %s" % (args.output, "up to date" if same else "STALE"))
        return 0 if same else 1
    with open(args.output, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print("wrote %s" % args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
