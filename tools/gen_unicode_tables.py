#!/usr/bin/env python3
"""Generate ``fastbpe/_unicode_tables.h``: per-code-point flags for the C pre-tokenizer.

Usage (from the repository root)::

    python tools/gen_unicode_tables.py            # writes fastbpe/_unicode_tables.h
    python tools/gen_unicode_tables.py --check    # exit 1 if the committed file is stale

Every flag is computed by asking the installed ``regex`` package itself, code point by
code point (0..0x10FFFF, surrogates included), so the scanner agrees with
``regex.findall`` by construction.  The composite classes the split patterns use
(``[^\\s\\p{L}\\p{N}]``, ``[^\\r\\n\\p{L}\\p{N}]``, o200k's two letter-case classes) are
checked against ``regex`` too, so a change in how ``regex`` defines a property
cannot slip through silently.

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
    return flags


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


def render() -> str:
    text = all_code_points()
    flags = compute_flags(text)
    folds = contraction_folds(text)
    stage1, blocks = build_tables(flags)
    stage1_type = "uint8_t" if len(blocks) <= 256 else "uint16_t"
    uver = unicode_version()
    counts = {name: int(((flags & bit) > 0).sum()) for name, bit, _ in FLAGS}

    out = []
    w = out.append
    w("/* fastbpe/_unicode_tables.h -- GENERATED by tools/gen_unicode_tables.py; do not edit.")
    w(" *")
    w(" * Regenerate:  python tools/gen_unicode_tables.py")
    w(" * Source:      the `regex` package %s (Unicode %s), queried for every code point" % (regex.__version__, uver))
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
    w(" * Case-insensitive contraction letters ('s 't 're 've 'm 'll 'd, regex's (?i:...), simple")
    w(" * case folding): ASCII letters of either case, plus the non-ASCII code points in")
    w(" * fb_contraction_letter() below.")
    w(" *")
    w(" * tiktoken 0.14 splits with Rust's regex-syntax 0.8.11, on Unicode 16.0: it disagrees with")
    w(" * these tables on the L/N/M code points new in Unicode 17.0 (docs/pretokenize.md lists them;")
    w(" * tools/compare_tiktoken_unicode.py recomputes the list).")
    w(" */")
    w("#ifndef FASTBPE_UNICODE_TABLES_H")
    w("#define FASTBPE_UNICODE_TABLES_H")
    w("")
    w("#include <stdint.h>")
    w("")
    w('#define FB_REGEX_VERSION "%s"' % regex.__version__)
    w('#define FB_UNICODE_VERSION "%s"' % uver)
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
    ap.add_argument("-o", "--output", default=OUT)
    args = ap.parse_args()
    text = render()
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
