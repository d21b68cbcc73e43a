"""What the pre-tokenizer tests share: the patterns and their scanner kinds, regex as the reference
(with stand-ins for the code points whose Unicode properties differ between regex and tiktoken),
every scan path, and characters of every class the patterns distinguish (a plain module)."""
from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import regex

from fastbpe import _pretokenize as pt
from fastbpe import _testing as testing
from fastbpe import patterns as P

ROOT = Path(__file__).resolve().parent.parent

PATTERNS = P.BY_NAME
COMPILED = {name: regex.compile(pat) for name, pat in PATTERNS.items()}
KIND = {name: pt.pattern_kind(pat) for name, pat in PATTERNS.items()}
NAMES = list(PATTERNS)

FUZZ = float(os.environ.get("FASTBPE_FUZZ", "1"))


def n_examples(base: int) -> int:
    return max(1, int(base * FUZZ))


# Code points where the tables follow tiktoken's Unicode version rather than regex's: the
# scanner cuts text with them as tiktoken does, so regex.findall(text) is not the reference
# there.  The comparisons with regex map them: regex gets the text with each such character
# replaced by a stand-in that regex classes as tiktoken classes the original (same flag
# byte, e.g. an unassigned code point for a character new in Unicode 17.0), and the pieces
# are compared by their character offsets.  test_overrides_follow_tiktoken_ids checks
# tiktoken's own ids on them.
sys.path.insert(0, str(ROOT / "tools"))
import gen_unicode_tables as GEN  # noqa: E402

OVERRIDE_META, OVERRIDE_RANGES = GEN.read_overrides() if pt.UNICODE_SOURCE == "tiktoken" else ({}, [])
REGEX_DIFFERS = [cp for first, last, _, _ in OVERRIDE_RANGES for cp in range(first, last + 1)]
_REGEX_DIFFERS_RE = (
    regex.compile("[%s]" % "".join("\\U%08X-\\U%08X" % (f, l) for f, l, _, _ in OVERRIDE_RANGES))
    if OVERRIDE_RANGES else None
)


def _stand_ins() -> dict[str, str]:
    flags = testing.code_point_flags()
    ok = np.ones(len(flags), dtype=bool)
    ok[REGEX_DIFFERS] = False
    ok[[ord(c) for c in "\r\nsdmtlvreSDMTLVRE\u017f\u212a"]] = False
    ok[0xD800:0xE000] = False
    ok[:0x80] = False  # readable failure messages
    first = {}
    for f, _, _, t in OVERRIDE_RANGES:
        if t not in first:
            first[t] = chr(int(np.nonzero(ok & (flags == t))[0][0]))
    return {chr(cp): first[t] for f, l, _, t in OVERRIDE_RANGES for cp in range(f, l + 1)}


STAND_IN = _stand_ins()


def for_regex(text: str) -> str:
    """text as regex must see it to cut it as the scanner (and tiktoken) do."""
    if _REGEX_DIFFERS_RE is None or not _REGEX_DIFFERS_RE.search(text):
        return text
    return _REGEX_DIFFERS_RE.sub(lambda m: STAND_IN[m.group()], text)


def regex_pieces(name: str, text: str) -> list[str]:
    mapped = for_regex(text)
    pieces = COMPILED[name].findall(mapped)
    if mapped is text:
        return pieces
    out, pos = [], 0
    for p in pieces:
        out.append(text[pos : pos + len(p)])
        pos += len(p)
    return out


# Every scan path must cut identically: the block scanner with each classifier this build
# and CPU have (AVX2, SSE2, the portable SWAR one), with and without the 64-byte ASCII
# blocks of the cl100k family ("/pieces": one piece at a time), and the per-character
# matchers.
CLASSIFIERS = list(dict.fromkeys(pt.use_scanner(name) for name in ("char", "swar", "sse2", "avx2")))
pt.use_scanner("auto")
SCAN_PATHS = CLASSIFIERS + [name + "/pieces" for name in CLASSIFIERS if name != "char"]


@contextlib.contextmanager
def scan_path(name: str):
    """Cut with scan path `name` inside the block (then back to the default)."""
    classifier, _, pieces = name.partition("/")
    assert pt.use_scanner(classifier) == classifier
    pt.use_ascii_blocks(not pieces)
    try:
        yield
    finally:
        pt.use_scanner("auto")
        pt.use_ascii_blocks(True)


def split_every_path(text: str, kind: int) -> dict[str, list[str]]:
    out = {}
    for path in SCAN_PATHS:
        with scan_path(path):
            out[path] = pt.split(text, kind)
    return out


def assert_same(text: str, names=NAMES) -> None:
    for name in names:
        want = regex_pieces(name, text)
        for path, got in split_every_path(text, KIND[name]).items():
            if got != want:
                i = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
                pytest.fail(
                    "%s (%s scan): pieces differ at #%d for %r\n  regex:   %r\n  scanner: %r"
                    % (name, path, i, text if len(text) < 200 else text[:200] + "...", want[max(0, i - 2) : i + 3], got[max(0, i - 2) : i + 3])
                )


def assert_piece_end_everywhere(text: str, names=NAMES) -> None:
    """The piece found at every character boundary (piece_end_at, a scan started there)
    equals regex's match there (pos argument), on every scan path."""
    data = text.encode("utf-8", "surrogatepass")
    offsets = [0]
    for ch in text:
        offsets.append(offsets[-1] + len(ch.encode("utf-8", "surrogatepass")))
    mapped = for_regex(text)
    for name in names:
        rx = COMPILED[name]
        want = []
        for ci in range(len(text)):
            m = rx.match(mapped, ci)
            assert m is not None
            want.append(offsets[m.end()])
        for path in SCAN_PATHS:
            with scan_path(path):
                got = [testing.piece_end_at(data, KIND[name], bi) for bi in offsets[:-1]]
            if got != want:
                ci = next(i for i, (a, b) in enumerate(zip(want, got)) if a != b)
                pytest.fail("%s (%s scan) at character %d of %r: regex ends at byte %d, scanner at %d"
                            % (name, path, ci, text, want[ci], got[ci]))


# ---------------------------------------------------------------------------------------
# Characters of every class the patterns distinguish
# ---------------------------------------------------------------------------------------

WHITESPACE = (
    " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
NOT_WHITESPACE_IN_REGEX = "\x1c\x1d\x1e\x1f\u200b\u180e\ufeff"  # str.isspace() differs for \x1c-\x1f
CONTRACTION_LETTERS = "sStTmMdDlLvVrReE\u017f\u212akK"  # U+017F LONG S folds to s; KELVIN to k
LETTERS = "aZ\u00e9\u00c9\u01c5\u02b0\u4e2d\u0e01\u05d0\u0628\u03a3\u03c3\u1e9e\u00df\u0130\u0131"
#        Ll Lu Ll  Lu  Lt  Lm   Lo   Lo(Thai) Lo(Hebrew) Lo(Arabic) Lu Ll  Lu  Ll  Lu  Ll
MARKS = "\u0301\u0903\u20dd\u0e31\u093f"  # Mn Mc Me Mn(Thai) Mc
DIGITS = "09\u0663\u0967\u2167\u216b\u00b2\u00bd\u2460\U0001d7ce\u3007\U00010107"
#        Nd Nd Nd(Arabic-Indic) Nd(Devanagari) Nl(Roman) Nl No(superscript) No(fraction) No Nd(math) Nl No
PUNCT = "'!/.,-_\"#()[]{}<>@\u2019\u00a7\u2014\u3002\U0001f600\U0001f44d\u200d\ufe0f\ufffd\U0010ffff\ue000"
# New in Unicode 17.0 (regex), unassigned for tiktoken (16.0); U+0295 is Lo in 17.0, Ll in
# 16.0.  regex sees stand-ins for them (for_regex).
NEW_IN_UNICODE_17 = "\U000323b0\U00011de0\U00016ea0\U0001e6c0\u088f\u1acf\U00016ff4\ua7f1\u0295"

ALL_CHARS = "".join(
    dict.fromkeys(WHITESPACE + NOT_WHITESPACE_IN_REGEX + CONTRACTION_LETTERS + LETTERS + MARKS + DIGITS + PUNCT + NEW_IN_UNICODE_17)
)

# One (or two) characters per class, for exhaustive enumeration.
SMALL_ALPHABET = " \t\n\r\xa0\x1cas\u017fLlA\u01c5\u02b0\u4e2d\u0301\u20dd1\u2167\u00bd'!/\U0001f600\u0295\u088f"
TINY_ALPHABET = " \n\rasLA\u4e2d\u0301'1!/"


def probe(c: str) -> str:  # as tools/compare_tiktoken_unicode.py: letters of both cases, digits, ...
    return "a{0}b {0}1 1{0}2 !{0}! A{0}B {0}{0}'s x{0}y Ab{0}X {0}Ab\n{0}".format(c)
