"""Split and Replace patterns matched as HF matches them (Oniguruma): empty matches, `^`/`$` as
line anchors, onig's `\\w`/`\\s`, every Split behavior; both for patterns the C scanner knows
(kept on the scanner) and for the others (run on Oniguruma).  HF's `tokenizers` is the oracle;
every tokenizer.json is built here."""
from __future__ import annotations

import json

import pytest

from hf_reference import FIELDS

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
        want, got = ref.encode(text), ours.encode(text)
        for field in FIELDS:
            assert getattr(got, field) == getattr(want, field), (field, text)
        assert ours.decode(want.ids) == ref.decode(want.ids), text


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


def _byte_level(split_pattern: str) -> str:
    """GPT-2-style byte-level BPE over a Split regex: bytes as the only tokens (no merges)."""
    from fastbpe.formats.bytelevel import BYTE_TO_CHAR

    vocab = {BYTE_TO_CHAR[b]: b for b in range(256)}
    return json.dumps({"version": "1.0", "added_tokens": [], "normalizer": None,
                       "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                           {"type": "Split", "pattern": {"Regex": split_pattern}, "behavior": "Isolated",
                            "invert": False},
                           {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                            "use_regex": False}]},
                       "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
                       "model": {"type": "BPE", "vocab": vocab, "merges": []}})


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


def test_without_onigurumacffi_the_error_says_what_to_install(monkeypatch):
    import fastbpe.hf.oniguruma as onig

    monkeypatch.setattr(onig, "onigurumacffi", None)
    split = {"type": "Split", "pattern": {"Regex": r"\w+"}, "behavior": "Isolated", "invert": False}
    with pytest.raises(ImportError, match="pip install onigurumacffi"):
        Tokenizer.from_str(_char_level(split))
    # a pattern the C scanner knows does not need it
    Tokenizer.from_str(_byte_level(QWEN2_PATTERN)).encode("ok")
