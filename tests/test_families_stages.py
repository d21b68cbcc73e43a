"""Issue 28 "follow HF's semantics in general": HF's UnicodeScripts pre-tokenizer and
BertNormalizer, each against HF tokenizers live, through the Python stage (the reference) and
through its kernel form (the scanner levels; the normalizer program): every code point in
context, then generated text.  The tables they read are asked of tokenizers by
tools/gen_hf_scripts.py and tools/gen_hf_bert.py; these tests fail when a new tokenizers reads a
character otherwise (then rerun the tools)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from tokenizers import normalizers as hf_normalizers, pre_tokenizers as hf_pre_tokenizers

from fastbpe import _pretokenize
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


@pytest.mark.parametrize("settings_", [(True, True, None, True), (True, False, None, True)])
def test_bert_normalizer_every_code_point(settings_):
    """Every step on every code point: the Python stage with handle_chinese_chars (the
    pipeline's), the normalizer program without it (every other step lowers)."""
    ref, ours = _bert(settings_)
    text = "".join(map(chr, EVERY))
    want = ref.normalize_str(text)
    if settings_[1]:
        assert ours.normalize_str(text) == want
    else:
        assert program_of(ours).normalize(text) == want


@pytest.mark.parametrize("settings_", BERT_SETTINGS)
@settings(max_examples=40, deadline=None)
@given(text=MIXED)
def test_bert_normalizer_generated(settings_, text):
    ref, ours = _bert(settings_)
    want = ref.normalize_str(text)
    assert ours.normalize_str(text) == want
    if not settings_[1]:
        program = program_of(ours)    # None: a program that changes nothing
        assert (program.normalize(text) if program else text) == want


def test_bert_normalizer_kernel_reason():
    _, ours = _bert((True, True, None, True))
    with pytest.raises(ValueError, match="handle_chinese_chars"):
        program_of(ours)
