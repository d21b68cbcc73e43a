"""Issue 28 "follow HF's semantics in general": HF's UnicodeScripts pre-tokenizer and
BertNormalizer, each against HF tokenizers live, through the Python stage (the reference) and
through its kernel form (the scanner levels; the normalizer program): every code point in
context, then generated text.  The tables they read are asked of tokenizers by
tools/gen_hf_scripts.py and tools/gen_hf_bert.py; these tests fail when a new tokenizers reads a
character otherwise (then rerun the tools)."""
from __future__ import annotations

import functools
import json

import pytest
from hypothesis import given, settings, strategies as st

from tokenizers import Tokenizer as HFTokenizer, normalizers as hf_normalizers, pre_tokenizers as hf_pre_tokenizers

from fastbpe import _pretokenize
from fastbpe._normalize import Program
from fastbpe.formats.bytelevel import BYTE_TO_CHAR
from fastbpe.hf import normalizers, pre_tokenizers
from fastbpe.hf.normalizers import program_of
from fastbpe.pretokenize import chain_kind

EVERY = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
# characters of many scripts, Any (" ", unassigned U+0378), marks, kana, CJK, controls
ALPHABET = "ab Zé\u0301жЖΩא ب1٣.,!-京い゙ーア\u30fc한\u0378\u200b\x00\x85\ufffd\t\n\u00a0\u3000\U00020000\ue000İß"
MIXED = st.text(st.one_of(st.sampled_from(ALPHABET), st.characters(blacklist_categories=("Cs",))), max_size=30)


def _scripts_kind() -> int:
    kind, why = chain_kind(pre_tokenizers.UnicodeScripts().lower(False))
    assert kind >= 0, why
    return kind


def _kernel_pieces(text: str) -> list:
    return _pretokenize.split(text, _scripts_kind())


@pytest.mark.parametrize("context", ["a", "\u4eac", ""])
def test_unicode_scripts_every_code_point(context):
    """Every code point after `context` (Latin, Han: which characters are Any; "": all code points
    in a row, where each script's runs end), HF's pieces from the kernel's levels, and HF's pieces
    and offsets from the Python stage."""
    text = "".join(context + chr(c) for c in EVERY)
    want = hf_pre_tokenizers.UnicodeScripts().pre_tokenize_str(text)
    assert _kernel_pieces(text) == [piece for piece, _ in want]
    if not context:
        assert pre_tokenizers.UnicodeScripts().pre_tokenize_str(text) == want


@settings(max_examples=300, deadline=None)
@given(text=MIXED)
def test_unicode_scripts_generated(text):
    want = hf_pre_tokenizers.UnicodeScripts().pre_tokenize_str(text)
    assert pre_tokenizers.UnicodeScripts().pre_tokenize_str(text) == want
    assert _kernel_pieces(text) == [piece for piece, _ in want]


BERT_SETTINGS = [(clean, chinese, strip, lower) for clean in (True, False) for chinese in (True, False)
                 for strip in (None, True, False) for lower in (True, False)]


def _bert(settings_):
    clean, chinese, strip, lower = settings_
    return (hf_normalizers.BertNormalizer(clean_text=clean, handle_chinese_chars=chinese, strip_accents=strip,
                                          lowercase=lower),
            normalizers.BertNormalizer(clean, chinese, strip, lower))


def _hf_aligned(settings_, text: str) -> tuple:
    """HF's normalized text and each character's span in text: a tokenizer whose tokens are
    single bytes (ByteLevel without its regex, no merges) gives every byte of a normalized
    character that character's span, as its offsets."""
    clean, chinese, strip, lower = settings_
    tok = _byte_tokenizer(json.dumps({"type": "BertNormalizer", "clean_text": clean, "handle_chinese_chars": chinese,
                                      "strip_accents": strip, "lowercase": lower}))
    normalized = tok.normalizer.normalize_str(text)
    offsets = tok.encode(text, add_special_tokens=False).offsets
    spans, k = [], 0
    for c in normalized:
        spans.append(offsets[k])
        k += len(c.encode("utf-8"))
    assert k == len(offsets)
    return normalized, spans


@functools.lru_cache(maxsize=None)
def _byte_tokenizer(normalizer: str) -> HFTokenizer:
    return HFTokenizer.from_str(json.dumps({
        "version": "1.0", "added_tokens": [], "normalizer": json.loads(normalizer),
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {"type": "BPE", "vocab": {c: i for i, c in enumerate(BYTE_TO_CHAR[b] for b in range(256))},
                  "merges": []}}))


def _kernel_aligned(settings_, text: str) -> tuple:
    program = program_of(_bert(settings_)[1])
    if program is None:    # a program that changes nothing
        return text, [(i, i + 1) for i in range(len(text))]
    out, starts, ends = program.normalize_aligned(text)
    return out, [(i, i + 1) for i in range(len(out))] if starts is None else list(zip(starts, ends))


@pytest.mark.parametrize("settings_", [(True, True, None, True), (True, False, None, True), (False, True, False, False)])
def test_bert_normalizer_every_code_point(settings_):
    """Every step on every code point: the Python stage (the pipeline's reference) and the
    normalizer program (handle_chinese_chars: a PadClass op) give HF's text."""
    ref, ours = _bert(settings_)
    text = "".join(map(chr, EVERY))
    want = ref.normalize_str(text)
    assert ours.normalize_str(text) == want
    assert program_of(ours).normalize(text) == want


@pytest.mark.parametrize("settings_", BERT_SETTINGS)
@settings(max_examples=40, deadline=None)
@given(text=MIXED)
def test_bert_normalizer_generated(settings_, text):
    """HF's text from the Python stage, HF's text and alignment from the normalizer program."""
    ref, ours = _bert(settings_)
    want = ref.normalize_str(text)
    assert ours.normalize_str(text) == want
    assert _kernel_aligned(settings_, text) == _hf_aligned(settings_, text)


@pytest.mark.parametrize("settings_", [(True, True, None, True), (False, True, False, False)])
def test_bert_normalizer_chinese_aligned(settings_):
    """CJK ideographs of every range HF pads (each range's ends), beside kana, Hangul, marks and
    text a step removes: the kernel's alignment is HF's; an ASCII text is left as it is."""
    edges = "".join(chr(c) for first, last in normalizers.CHINESE for c in (first - 1, first, last, last + 1))
    for text in (edges, "a\u4eac\u0301b \u4eac\u4eac\x00\u4e00x い한", "\u3000\u4eac\t", "\ufffd\u4eac", "京"):
        assert _kernel_aligned(settings_, text) == _hf_aligned(settings_, text)
    program = program_of(_bert((False, True, False, False))[1])
    text = "plain ascii text"
    assert program.normalize(text) is text and program.normalize_aligned(text) == (text, None, None)
    with pytest.raises(ValueError, match="pad_class"):
        Program([("pad_class", 0, 0, b"", b"", " ")])
