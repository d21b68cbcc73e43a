"""Split and Replace patterns matched as HF matches them (Oniguruma): empty matches, `^`/`$` as
line anchors, onig's `\\w`/`\\s`, every Split behavior; both for patterns the C scanner knows
(kept on the scanner) and for the others (run on Oniguruma).  HF's `tokenizers` is the oracle;
every tokenizer.json is built here."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hf_reference import assert_same_as_hf

pytest.importorskip("onigurumacffi", reason="Split/Replace regexes are matched with Oniguruma (pip install onigurumacffi)")

from tokenizers import Tokenizer as HFTokenizer  # noqa: E402

from fastbpe.hf import Tokenizer  # noqa: E402
from fastbpe.patterns import QWEN2_PATTERN  # noqa: E402

TEXTS = ["a\nab\n\nb", "x½²³¼¾y\u200dz w", "a\u0085b\x1cc\u3000d  e", "axxbxx", "ab cd\n  ef!!", "",
         " \n", "Don't STOP 123 4567 😀😀 and\r\nso", "ǅ ß İ ﬃ \u0301e"]

PATTERNS = [r"^a", r"b$", r"^", r"$", r"\w+", r"\W", r"\s", r"x*", r"(?=b)|a", r"\b", r".", r"\d+",
            r"[[:alpha:]]+", r"(?i)AB", r"\h+", r"\p{N}"]
BEHAVIORS = ["Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"]


def _char_level(pre_tokenizer=None, normalizer=None, decoder=None) -> str:
    chars = sorted(set("".join(TEXTS)) | set("abxyz!?-_"))
    return json.dumps({"version": "1.0", "added_tokens": [], "normalizer": normalizer,
                       "pre_tokenizer": pre_tokenizer, "decoder": decoder,
                       "model": {"type": "BPE", "vocab": {c: i for i, c in enumerate(chars)}, "merges": [],
                                 "unk_token": None}})


def _assert_same(spec: str, texts=TEXTS) -> None:
    ref, ours = HFTokenizer.from_str(spec), Tokenizer.from_str(spec)
    for text in texts:
        assert_same_as_hf(ref, ours, text)


@pytest.mark.parametrize("behavior", BEHAVIORS)
@pytest.mark.parametrize("pattern", PATTERNS)
def test_split_regex_as_oniguruma(pattern, behavior):
    for invert in (False, True):
        split = {"type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior, "invert": invert}
        _assert_same(_char_level(split))


@pytest.mark.parametrize("literal", ["x", "\n", "ab", "+", ""])
def test_split_string(literal):
    for behavior in BEHAVIORS:
        split = {"type": "Split", "pattern": {"String": literal}, "behavior": behavior, "invert": False}
        _assert_same(_char_level(split))


@pytest.mark.parametrize("pattern", [r"\s+", r"x*", r"^", r"b$", r"\w", r"(?=b)", r""])
def test_replace_normalizer_and_decoder(pattern):
    replace = {"type": "Replace", "pattern": {"Regex": pattern}, "content": "-"}
    _assert_same(_char_level(normalizer=replace, decoder=replace))
    longer = {"type": "Replace", "pattern": {"Regex": pattern}, "content": "?!"}
    _assert_same(_char_level(normalizer=longer, decoder=longer))


def _byte_level(split_pattern: str, pair_merges: bool = False, behavior: str = "Isolated",
                invert: bool = False) -> str:
    """GPT-2-style byte-level BPE over a Split regex: bytes as tokens, and with pair_merges
    every pair of `_PAIR_CHARS` too, so that the ids show where pieces end."""
    from fastbpe.formats.bytelevel import BYTE_TO_CHAR

    vocab = {BYTE_TO_CHAR[b]: b for b in range(256)}
    merges = []
    if pair_merges:
        chars = ["".join(BYTE_TO_CHAR[b] for b in c.encode()) for c in _PAIR_CHARS]
        merges = [[a, b] for a in chars for b in chars]
        for a, b in merges:
            vocab[a + b] = len(vocab)
    return json.dumps({"version": "1.0", "added_tokens": [], "normalizer": None,
                       "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                           {"type": "Split", "pattern": {"Regex": split_pattern}, "behavior": behavior,
                            "invert": invert},
                           {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                            "use_regex": False}]},
                       "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
                       "model": {"type": "BPE", "vocab": vocab, "merges": merges}})


@pytest.mark.parametrize("pattern", [
    QWEN2_PATTERN,                       # the scanner knows it
    r"\w+|[^\w\s]+|\s+",                      # Oniguruma: onig's \w holds ½²
    r"^\s*\S+|\S+$|.",                        # Oniguruma: line anchors
])
def test_byte_level_split_fast_paths(pattern):
    spec = _byte_level(pattern)
    ref, ours = HFTokenizer.from_str(spec), Tokenizer.from_str(spec)
    for text in TEXTS:
        want = ref.encode(text)
        assert ours.encode(text).ids == want.ids, text
        assert ours.encode(text).offsets == want.offsets, text
        assert ours.encode_ids(text) == want.ids, text
        assert ours.encode_batch([text, text])[1].ids == want.ids, text


_PAIR_CHARS = "abcdx \n1"


def test_split_empty_match_cuts_byte_level_pieces():
    """Issue 29 item 7: Split(r'\\s*', Isolated) matches empty between a and b, which cuts
    there (Oniguruma steps one character past an empty match): HF gives a, b, ' ', c, d."""
    spec = _byte_level(r"\s*", pair_merges=True)
    ref, ours = HFTokenizer.from_str(spec), Tokenizer.from_str(spec)
    want = ref.encode("ab cd").ids
    assert want == [97, 98, 32, 99, 100]
    assert ours.encode("ab cd").ids == want and ours.encode_ids("ab cd") == want
    assert ours.encode_batch(["ab cd"])[0].ids == want and ours.encode_ids_batch(["ab cd"]) == [want]


_ONIG_ATOMS = [r"\s", r"\S", "a", "b", "x", " ", r"\w", r"\d", r"\p{L}", ".", r"[ab]", r"\n"]
_ONIG_ZERO = ["^", "$", r"\b", r"(?=b)", r"(?!a)", r"(?<=a)", r"\A", r"\z"]


@st.composite
def _onig_patterns(draw):
    branches = []
    for _ in range(draw(st.integers(1, 3))):
        parts = []
        for _ in range(draw(st.integers(1, 3))):
            if draw(st.integers(0, 4)) == 0:
                parts.append(draw(st.sampled_from(_ONIG_ZERO)))
            else:
                parts.append(draw(st.sampled_from(_ONIG_ATOMS)) + draw(st.sampled_from(["", "*", "?", "+", "{0,2}"])))
        branches.append("".join(parts))
    return "|".join(branches)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=_onig_patterns(), behavior=st.sampled_from(BEHAVIORS), invert=st.booleans(),
       texts=st.lists(st.text(alphabet=_PAIR_CHARS + "yé½", max_size=10), min_size=1, max_size=3))
def test_split_patterns_that_match_empty_as_hf(pattern, behavior, invert, texts):
    """Generated Split patterns (many match empty) over a byte-level BPE whose pair merges make
    piece ends visible: encode, encode_ids and batches give HF's ids and offsets."""
    spec = _byte_level(pattern, pair_merges=True, behavior=behavior, invert=invert)
    ref, ours = HFTokenizer.from_str(spec), Tokenizer.from_str(spec)
    for text in texts:
        want = ref.encode(text)
        got = ours.encode(text)
        assert (got.ids, got.offsets) == (want.ids, want.offsets), (pattern, text)
        assert ours.encode_ids(text) == want.ids, (pattern, text)
    assert ours.encode_ids_batch(texts) == [e.ids for e in ref.encode_batch(texts)]


def test_without_onigurumacffi_the_error_says_what_to_install(monkeypatch):
    import fastbpe.hf.oniguruma as onig

    monkeypatch.setattr(onig, "onigurumacffi", None)
    split = {"type": "Split", "pattern": {"Regex": r"\w+"}, "behavior": "Isolated", "invert": False}
    with pytest.raises(ImportError, match="pip install onigurumacffi"):
        Tokenizer.from_str(_char_level(split))
    # a pattern the C scanner knows does not need it
    Tokenizer.from_str(_byte_level(QWEN2_PATTERN)).encode("ok")
