"""Helpers for the tokenizer.json tests: tokenizers built with the `tokenizers` package itself
(trained on a small text written here, so nothing is downloaded), and one comparison of
fastbpe's `Tokenizer` with HF's on every Encoding field and on decode."""
from __future__ import annotations

import pytest

tokenizers = pytest.importorskip("tokenizers", reason="the tokenizers package is the reference (pip install '.[test]')")

from tokenizers import Tokenizer as HFTokenizer  # noqa: E402
from tokenizers import models, pre_tokenizers, trainers  # noqa: E402

from fastbpe.hf import Tokenizer  # noqa: E402

TRAIN_TEXT = """\
Byte pair encoding starts from single characters and merges the most frequent pair, again and again.
The quick brown fox jumps over the lazy dog; the lazy dog sleeps.  Numbers: 12345, 2024-11-23, 3.14159.
Ünïcödé text: café, naïve, façade, Straße, İstanbul, ﬁne ﬀ ½ ² ℌ.  日本語のテキスト、中文文本，한국어 텍스트.
Emoji 😀🎉 and symbols ©®™ → ← ∑ √.  Code: def f(x): return x ** 2  # square
    for (int i = 0; i < n; ++i) { total += a[i]; }
I'm sure you've seen it; they'll say we're done and he'd agree.  DON'T SHOUT, It's FINE.
""" * 3

SAMPLES = [
    "Hello world! It's 12345 ok  \n\n  x",
    "héllo wörld 日本語 🎉 hi",
    "  leading and trailing  ",
    "",
    " ",
    "Ünïcödé ﬁne café ½ ² İstanbul ﬀ 😀 Straße",
    "a\tb\r\nc  d\u00a0e\u3000f",
    "don't you've I'M they'LL",
    "x" * 60,
    "▁weird ▁ chars ▁▁",
    "<s> in text </s> and <unk>",
    "1234567890 3.14 1,000,000",
    "ΟΔΟΣ ΟΔΟΣ. İSTANBUL ǅ ß ﬃ",  # lowercasing: final sigma, growing characters
    "e\u0301 ae\u0301\u0301b a\u0301\u0327b \u1e0b\u0323 \u1100\u1161\u11a8 \u1100 \u1161",  # (de)composition
]

FIELDS = ("ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask", "word_ids")


def build(model_kwargs=None, normalizer=None, pre_tokenizer=None, post_processor=None, decoder=None,
          vocab_size=400, byte_level_alphabet=False, special_tokens=("<unk>", "<s>", "</s>")) -> HFTokenizer:
    """A BPE tokenizer trained by `tokenizers`' BpeTrainer on TRAIN_TEXT, with these stages."""
    kwargs = dict(model_kwargs or {})
    tok = HFTokenizer(models.BPE(**kwargs))
    if normalizer is not None:
        tok.normalizer = normalizer
    if pre_tokenizer is not None:
        tok.pre_tokenizer = pre_tokenizer
    affixes = {k: kwargs[k] for k in ("continuing_subword_prefix", "end_of_word_suffix") if k in kwargs}
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=list(special_tokens), show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet() if byte_level_alphabet else [], **affixes)
    tok.train_from_iterator([TRAIN_TEXT], trainer)
    if post_processor is not None:
        tok.post_processor = post_processor
    if decoder is not None:
        tok.decoder = decoder
    return tok


def assert_same_as_hf(ref: HFTokenizer, ours: Tokenizer, text: str, pair: str | None = None) -> None:
    """The one comparison of fastbpe's Tokenizer with HF's on one input: every Encoding
    field (FIELDS), the ids-only path (single inputs) and decode, with and without special
    tokens.  Every tokenizer.json test compares through this."""
    for add in (True, False):
        want = ref.encode(text, pair, add_special_tokens=add)
        got = ours.encode(text, pair, add_special_tokens=add)
        for field in FIELDS:
            assert getattr(got, field) == getattr(want, field), (field, text, pair, add)
        if pair is None:
            assert ours.encode_ids(text, add_special_tokens=add) == want.ids, (text, add)
        for skip in (True, False):
            assert ours.decode(want.ids, skip_special_tokens=skip) == \
                ref.decode(want.ids, skip_special_tokens=skip), (text, pair, add, skip)


def assert_same(ref: HFTokenizer, samples=SAMPLES, pair: bool = False, ours: Tokenizer | None = None) -> Tokenizer:
    """fastbpe's Tokenizer (from ref's JSON) is ref on every sample (assert_same_as_hf; with
    pair, each sample with its reverse as the second sequence)."""
    ours = ours or Tokenizer.from_str(ref.to_str())
    for text in samples:
        assert_same_as_hf(ref, ours, text, text[::-1] if pair else None)
    return ours
