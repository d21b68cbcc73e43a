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
Here: the Python API, the short strings and the edge cases; the tables in
test_pretokenize_tables.py, fuzzing and the corpora in test_pretokenize_fuzz.py, the shared
machinery in pretokenize_cases.py.
"""
from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys

import numpy as np
import pytest
import regex

from fastbpe import _pretokenize as pt
from fastbpe import _testing as testing
from fastbpe import patterns as P

from pretokenize_cases import (ALL_CHARS, CLASSIFIERS, COMPILED, DIGITS, KIND, MARKS, NAMES,
                               NOT_WHITESPACE_IN_REGEX, ROOT, SCAN_PATHS, SMALL_ALPHABET, TINY_ALPHABET, WHITESPACE,
                               assert_piece_end_everywhere, assert_same, for_regex, scan_path)


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
        if b == 0x20:
            out.add("blank")
        if b == 0x27:
            out.add("quote")
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
# Exhaustive short strings and hand-picked cases
# ---------------------------------------------------------------------------------------


def assert_split_on_every_path(texts):
    """Every pattern's split of each text, on every scan path, equals the regex's (the first
    text that differs goes to assert_same, which reports it)."""
    for name in NAMES:
        rx, kind = COMPILED[name], KIND[name]
        for path in SCAN_PATHS:
            with scan_path(path):
                bad = [text for text in texts if pt.split(text, kind) != rx.findall(for_regex(text))]
            for text in bad[:1]:
                assert_same(text, [name])


def test_exhaustive_up_to_3_chars():
    texts = ["".join(t) for k in (1, 2, 3) for t in itertools.product(SMALL_ALPHABET, repeat=k)]
    assert_split_on_every_path(texts)


# U+2010..U+2027 (dashes, curly quotes, the ellipsis: [\p{P}]) end runs of letters, digits and
# whitespace on the block scanner and start pieces there without the per-character matchers
# (_pretokenize.punct_2010); every pair of them and their neighbours (U+200F is \p{Cf}, U+2028 \s),
# between ASCII words, spaces, capitals and newlines; inside ASCII prose, as the block scanner
# takes mostly non-ASCII windows per character.
PUNCT_2010_ALPHABET = " \t\na'Z1!\u00e9\u0301\u200f\u2010\u2019\u201c\u2027\u2028"


def test_punct_2010_in_context():
    prose = "The quick brown fox jumps over the lazy dog, twice: "
    contexts = [("", ""), ("word", "word"), (" ", "\n"), ("Ab", "s "), ("\n", "A"), ("1", " 2")]
    texts = [prose * 2 + p + a + b + q + prose for a in PUNCT_2010_ALPHABET for b in PUNCT_2010_ALPHABET
             for p, q in contexts]
    assert_split_on_every_path(texts)


def test_exhaustive_4_chars():
    texts = ["".join(t) for t in itertools.product(TINY_ALPHABET, repeat=4)]
    assert_split_on_every_path(texts)


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
