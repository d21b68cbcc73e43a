"""fastbpe must give tiktoken's ids byte for byte, for every named encoding and every API.

The reference is tiktoken itself (see conftest.py / datasources.py); a failure message names
the first diverging token and shrinks the input to a short reproducer.
"""
from __future__ import annotations

import random
import string
import sys
import unicodedata
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import encoding_pair
from encoding_parity_cases import ASCII_TEXT, HYPO, SAMPLES, TRICKY_TEXT, UNICODE_TEXT, _check_text
from helpers import assert_same_ids


# ------------------------------------------------------------------ attributes and vocab


def test_attributes_equal(pair):
    fb, tt = pair
    assert fb.name == tt.name
    assert fb.n_vocab == tt.n_vocab
    assert fb.max_token_value == tt.max_token_value
    assert fb.eot_token == tt.eot_token
    assert fb.special_tokens_set == tt.special_tokens_set
    assert fb._special_tokens == tt._special_tokens
    assert fb._pat_str == tt._pat_str
    assert fb._mergeable_ranks == tt._mergeable_ranks
    assert repr(fb) == repr(tt)


def test_is_special_token(pair):
    fb, tt = pair
    for tok in sorted(set(tt._special_tokens.values())) + [0, 1, 255, 256, tt.max_token_value]:
        assert fb.is_special_token(tok) == tt.is_special_token(tok), tok


def test_token_byte_values_equal(pair):
    fb, tt = pair
    assert fb.token_byte_values() == tt.token_byte_values()


def test_single_token_roundtrip_every_id(pair):
    fb, tt = pair
    skip = {200018} if tt.name == "o200k_harmony" else set()  # two names in tiktoken, see module doc
    for token_bytes, rank in tt._mergeable_ranks.items():
        assert fb.decode_single_token_bytes(rank) == token_bytes
        assert fb.encode_single_token(token_bytes) == rank
    for text, tok in tt._special_tokens.items():
        assert fb.encode_single_token(text) == tt.encode_single_token(text)
        if tok not in skip:
            assert fb.decode_single_token_bytes(tok) == tt.decode_single_token_bytes(tok)


def test_encode_single_token_str_and_bytes(pair):
    fb, tt = pair
    for s in ["hello", " world", "\n", "<|endoftext|>", "!", " the"]:
        try:
            want = tt.encode_single_token(s)
        except KeyError:
            with pytest.raises(KeyError):
                fb.encode_single_token(s)
            continue
        assert fb.encode_single_token(s) == want
        assert fb.encode_single_token(s.encode()) == want


# ------------------------------------------------------------------ texts


@pytest.mark.parametrize("i", range(len(SAMPLES)))
def test_samples(pair, i):
    fb, tt = pair
    text = SAMPLES[i]
    _check_text(fb, tt, text, f"{tt.name} sample {i}")
    assert fb.encode(text) == tt.encode(text)
    assert fb.decode(fb.encode(text)) == text


CORPUS_SLICES = {
    "taylorswift": None,
    "tinyshakespeare": None,
    "multilingual": None,
    "code": None,
    "large_en": 4 << 20,  # 4 MB prefix of the 250 MB file
}


@pytest.mark.parametrize("corpus_name", list(CORPUS_SLICES))
def test_corpus_parity(bpe_pair, corpus, corpus_name):
    fb, tt = bpe_pair
    text = corpus(corpus_name, CORPUS_SLICES[corpus_name])
    _check_text(fb, tt, text, f"{tt.name} on {corpus_name}")


@pytest.mark.parametrize("corpus_name", ["taylorswift", "multilingual"])
def test_corpus_parity_special_variants(pair, corpus, corpus_name):
    """gpt2 / p50k_edit / o200k_harmony too (same BPE as a sibling, more special tokens)."""
    fb, tt = pair
    text = corpus(corpus_name, 400_000)
    assert_same_ids(fb.encode(text, allowed_special="all"), tt.encode(text, allowed_special="all"),
                    tt=tt, text=text, encode_fb=fb.encode_ordinary, encode_tt=tt.encode_ordinary,
                    label=f"{tt.name} encode(all) on {corpus_name}")


def test_corpus_lines_individually(bpe_pair, corpus):
    """Each line as its own document: exercises starts/ends of text (\\s++$ etc.)."""
    fb, tt = bpe_pair
    lines = corpus("multilingual").splitlines(keepends=True)[::40]
    lines += corpus("code", 1 << 20).splitlines(keepends=True)[::20]
    for line in lines:
        if fb.encode_ordinary(line) != tt.encode_ordinary(line):
            _check_text(fb, tt, line, f"{tt.name} line")


@settings(max_examples=150, **HYPO)
@given(text=TRICKY_TEXT)
def test_hypothesis_tricky(bpe_pair, text):
    fb, tt = bpe_pair
    _check_text(fb, tt, text, tt.name)


@settings(max_examples=100, **HYPO)
@given(text=UNICODE_TEXT)
def test_hypothesis_unicode(bpe_pair, text):
    fb, tt = bpe_pair
    _check_text(fb, tt, text, tt.name)


@settings(max_examples=60, **HYPO)
@given(text=ASCII_TEXT)
def test_hypothesis_ascii(bpe_pair, text):
    fb, tt = bpe_pair
    _check_text(fb, tt, text, tt.name)


@settings(max_examples=60, **HYPO)
@given(data=st.data())
def test_hypothesis_long_pieces(bpe_pair, data):
    """Single long pieces (no spaces) cross the small-piece/heap threshold of the merge
    kernel; a small alphabet makes many equal-rank ties."""
    fb, tt = bpe_pair
    alphabet = data.draw(st.sampled_from(["ab", "abc", "etaoin", "aA", "абв", "日本語", "éè", "xyz0"]))
    text = data.draw(st.text(st.sampled_from(alphabet), min_size=30, max_size=600))
    _check_text(fb, tt, text, tt.name)


@settings(max_examples=150, **HYPO)
@given(piece=st.binary(min_size=1, max_size=200) | st.binary(min_size=1, max_size=8).map(lambda b: b * 40))
def test_hypothesis_single_piece_bytes(bpe_pair, piece):
    """The merge kernel alone on arbitrary bytes (also invalid UTF-8), via the private
    `_encode_single_piece` both libraries have (not on b"": tiktoken panics there)."""
    fb, tt = bpe_pair
    assert fb._encode_single_piece(piece) == tt._encode_single_piece(piece), piece


@settings(max_examples=40, **HYPO)
@given(parts=st.lists(TRICKY_TEXT | st.sampled_from(["<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>",
                                                     "<|im_start|>", " ", "\n", "  \n "]), max_size=12))
def test_hypothesis_specials_interleaved(pair, parts):
    """Allowed specials cut the text into segments: each segment ends like a text end
    (\\s++$), exactly as tiktoken does."""
    fb, tt = pair
    text = "".join(parts)
    assert fb.encode(text, allowed_special="all") == tt.encode(text, allowed_special="all")
    assert fb.encode(text, disallowed_special=()) == tt.encode(text, disallowed_special=())


# Each code point in a dozen contexts: letters of both cases, digits, punctuation, space,
# the contraction, doubled, before an upper+lower pair (o200k's case classes), a newline.
PROBE = "a{0}b {0}1 1{0}2 !{0}! A{0}B {0}{0}'s x{0}y Ab{0}X {0}Ab\n{0}".format


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_every_python_assigned_code_point(name):
    """Every code point Python's unicodedata knows as assigned (not Cn/Cs; ~282k), each in a
    dozen contexts (letters of both cases, digits, punctuation, space, contraction, newline)."""
    fb, tt = encoding_pair(name)
    cps = [cp for cp in range(0x110000) if unicodedata.category(chr(cp)) not in ("Cn", "Cs")]
    if fb._splitter.kind < 0:  # FASTBPE_FORCE_REGEX: regex's Unicode version (U+0295)
        cps = sorted(set(cps) - set(_tiktoken_unicode_overrides()))
    docs = ["".join(PROBE(chr(cp)) for cp in cps[i:i + 64]) for i in range(0, len(cps), 64)]
    got = fb.encode_ordinary_batch(docs, num_threads=2)
    want = tt.encode_ordinary_batch(docs, num_threads=2)
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            bad = [cp for cp in cps[i * 64:(i + 1) * 64]
                   if fb.encode_ordinary(PROBE(chr(cp))) != tt.encode_ordinary(PROBE(chr(cp)))]
            raise AssertionError(f"{name}: split differs for " + ", ".join(f"U+{cp:04X}" for cp in bad))


def _tiktoken_unicode_overrides() -> list[int]:
    """Code points on which fastbpe's tables take tiktoken's Unicode properties rather than
    the regex package's (tools/tiktoken_unicode_overrides.txt)."""
    tools = Path(__file__).resolve().parents[1] / "tools"
    if not (tools / "tiktoken_unicode_overrides.txt").exists():
        pytest.skip("not running from a source tree")
    sys.path.insert(0, str(tools))
    import gen_unicode_tables

    _, ranges = gen_unicode_tables.read_overrides()
    return [cp for first, last, _, _ in ranges for cp in range(first, last + 1)]


def _newer_than_python_unicode() -> list[int]:
    """Code points the regex package knows as assigned but Python's unicodedata does not."""
    assigned = regex.compile(r"[^\p{Cn}\p{Cs}]")
    return [cp for cp in range(0x110000)
            if unicodedata.category(chr(cp)) == "Cn" and assigned.match(chr(cp))]


def test_unicode_version_differences_follow_tiktoken(bpe_pair):
    """Issue 3: where the pinned regex package (Unicode 17.0) and tiktoken (Rust regex-syntax,
    Unicode 16.0) disagree on a character, tiktoken wins for the ids.  fastbpe's default
    path (the C scanner, whose tables follow tiktoken's Unicode version) gives tiktoken's ids
    on every such code point, and on every code point newer than Python's Unicode, in
    context.  (Was a strict xfail on "\u088f's" while the tables followed regex.)"""
    fb, tt = bpe_pair
    if fb._splitter.kind < 0:
        pytest.skip("FASTBPE_FORCE_REGEX is set: the regex fallback follows regex's Unicode version")
    for text in ["\u088f's", "\u0295Ab", "\U000323b0\U00033479 \U00016ff4\U00016ff5 a\u1acf b\U00011de0"]:
        assert fb.encode_ordinary(text) == tt.encode_ordinary(text), text
    cps = sorted(set(_tiktoken_unicode_overrides()) | set(_newer_than_python_unicode()))
    assert len(cps) > 4600
    docs = ["".join(PROBE(chr(cp)) for cp in cps[i:i + 64]) for i in range(0, len(cps), 64)]
    got = fb.encode_ordinary_batch(docs, num_threads=2)
    want = tt.encode_ordinary_batch(docs, num_threads=2)
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            bad = [cp for cp in cps[i * 64:(i + 1) * 64]
                   if fb.encode_ordinary(PROBE(chr(cp))) != tt.encode_ordinary(PROBE(chr(cp)))]
            raise AssertionError(f"{tt.name}: split differs for " + ", ".join(f"U+{cp:04X}" for cp in bad))


@pytest.mark.parametrize("how", ["FASTBPE_FORCE_REGEX=1", "custom pattern"])
def test_regex_fallback_follows_the_regex_package_unicode(how, monkeypatch):
    """Documented limitation: patterns the C scanner does not know, and FASTBPE_FORCE_REGEX=1,
    split with the regex package, or with a scanner program whose classes are regex's, i.e. on
    *its* Unicode version: on the characters where it and tiktoken disagree, those ids follow
    regex.findall, not tiktoken."""
    import fastbpe
    from fastbpe import _pretokenize as pt
    from fastbpe.registry import ENCODING_CONSTRUCTORS

    fb, tt = encoding_pair("cl100k_base")
    kwargs = ENCODING_CONSTRUCTORS["cl100k_base"]()
    if how == "custom pattern":
        kwargs["pat_str"] = "(?:)" + kwargs["pat_str"]  # same splits, but not a known pattern
    else:
        monkeypatch.setenv("FASTBPE_FORCE_REGEX", "1")
    slow = fastbpe.Encoding(**kwargs)
    assert slow._splitter.engine == ("program" if how == "custom pattern" else "regex")
    text = "\u088f's x\U000323b0y 1\U00016ff4"
    by_regex = [i for piece in regex.findall(kwargs["pat_str"], text) for i in tt._encode_single_piece(piece)]
    assert slow.encode_ordinary(text) == by_regex
    if fb._splitter.kind >= 0:  # the default path follows tiktoken
        assert fb.encode_ordinary(text) == tt.encode_ordinary(text)
    if pt.REGEX_UNICODE_VERSION != pt.UNICODE_VERSION:  # regex 17.0 vs tiktoken 16.0
        assert by_regex != tt.encode_ordinary(text)


# ------------------------------------------------------------------ long repeats

_rng = random.Random(1234)
MB = 1 << 20
LONG_INPUTS = {
    "1MB of 'a'": lambda: "a" * MB,
    "1MB letters no spaces": lambda: "".join(_rng.choice(string.ascii_letters) for _ in range(MB)),
    "1MB lowercase no spaces": lambda: "".join(_rng.choice("etaoinshrdlu") for _ in range(MB)),
    "100k spaces": lambda: " " * 100_000,
    "100k spaces then word": lambda: " " * 100_000 + "word",
    "word then 100k spaces": lambda: "word" + " " * 100_000,
    "100k digits 9": lambda: "9" * 100_000,
    "digit cycle": lambda: "0123456789" * 20_000,
    "100k newlines": lambda: "\n" * 100_000,
    "100k CRLF": lambda: "\r\n" * 50_000,
    "mixed whitespace": lambda: "".join(_rng.choice(" \t\n\r\x0b\x0c\xa0\u3000") for _ in range(200_000)),
    "spaces and newlines": lambda: (" " * 7 + "\n" + "\t" * 3) * 20_000,
    "punctuation run": lambda: "!@#$%^&*()" * 50_000,
    "200k hangul": lambda: "한" * 200_000,
    "200k CJK": lambda: "的" * 200_000,
    "combining marks": lambda: "a" + "\u0301" * 100_000,
    "emoji run": lambda: "😀" * 100_000,
}


@pytest.mark.parametrize("case", list(LONG_INPUTS))
def test_long_repeats(bpe_pair, case):
    fb, tt = bpe_pair
    text = LONG_INPUTS[case]()
    got, want = fb.encode_ordinary(text), tt.encode_ordinary(text)
    if got != want:  # shrinking a 1 MB input is slow; report the divergence point only
        assert_same_ids(got, want, tt=tt, text=text, label=f"{tt.name} {case}")
    assert fb.decode(got) == text
