"""The compiled encode_ordinary and encode (_short_call's functions, fastbpe.Encoding's methods,
reading the encoding's `_compiled` OrdinaryCall): an Encoding whose pattern the C scanner knows
answers a short call with one C call.  They must give what the Python ways give for every
input, follow the kernel when a front end swaps it, leave a subclass's own methods alone and
keep no reference cycle (a table is tens of MB and would otherwise wait for the cycle collector)."""
from __future__ import annotations

import gc
import pickle
import weakref

import pytest

import fastbpe
from fastbpe import patterns
from fastbpe.encoding import Encoding
from helpers import BYTE_RANKS

TEXTS = ["", "hello world", "Hello, world! 123 4567", "naïve café — “quotes”", "日本語のテキスト",
         "a\ud800b", "  \n\n  spaces\t", "<|endoftext|> stays text", "x" * 5000]


def trained() -> Encoding:
    return fastbpe.train(["the cat sat on the mat", "the dog sat on the log"] * 50, vocab_size=300,
                         pattern=patterns.GPT4_PATTERN)


def test_compiled_call_is_installed_and_equals_the_python_method():
    from fastbpe._short_call import OrdinaryCall

    enc = trained()
    assert type(enc._compiled) is OrdinaryCall
    for text in TEXTS:
        assert enc.encode_ordinary(text) == enc._encode_ordinary(text, False), text
    class Text(str):
        pass
    assert enc.encode_ordinary(Text("the cat")) == enc._encode_ordinary("the cat", False)
    with pytest.raises(TypeError):
        enc.encode_ordinary(b"bytes")
    with pytest.raises(TypeError):
        enc._encode_ordinary(b"bytes", False)


def test_not_installed_where_the_c_scanner_does_not_run():
    enc = Encoding("toy", pat_str=r"\w+|\s+|[^\w\s]+", mergeable_ranks=BYTE_RANKS, special_tokens={})
    if enc.splitter.kind < 0:
        assert enc._compiled is None
    assert enc.encode_ordinary("ab c") == [97, 98, 32, 99]


def test_a_subclass_override_wins():
    class Mine(Encoding):
        def encode_ordinary(self, text):
            return ["mine"]
    enc = Mine("m", pat_str=patterns.GPT4_PATTERN, mergeable_ranks=BYTE_RANKS, special_tokens={})
    assert enc.encode_ordinary("ab") == ["mine"]


def test_swapping_the_kernel_recompiles_the_call():
    enc = Encoding("b", pat_str=patterns.GPT4_PATTERN, mergeable_ranks=BYTE_RANKS, special_tokens={})
    other = trained()
    enc.kernel = other.kernel
    assert enc.encode_ordinary("the cat sat") == other.encode_ordinary("the cat sat")


def test_no_reference_cycle_and_pickles():
    enc = trained()
    ref = weakref.ref(enc)
    copy = pickle.loads(pickle.dumps(enc))
    assert copy.encode_ordinary("the mat") == enc.encode_ordinary("the mat")
    assert copy.encode_ordinary(b"x".decode() + "\udcff") == Encoding.encode_ordinary(copy, "x\udcff")
    gc.disable()
    try:
        del enc
        assert ref() is None   # freed by reference counting alone
    finally:
        gc.enable()


def test_compiled_encode_equals_the_python_method():
    """`encode` is compiled too: a str holding no special token's first character,
    with the default rules (or nothing allowed and nothing checked), is one kernel call; every
    other call (special-token text, other rules, dropout, other types, lone surrogates) goes
    to the Python method, with its results and its errors."""
    enc = Encoding("s", pat_str=patterns.GPT4_PATTERN, mergeable_ranks=trained()._mergeable_ranks,
                   special_tokens={"<|end|>": 300, "[SEP]": 301})
    assert enc._compiled is not None
    rules = [{}, {"allowed_special": "all"}, {"allowed_special": {"<|end|>"}}, {"disallowed_special": ()},
             {"disallowed_special": None}, {"disallowed_special": []}, {"disallowed_special": {"[SEP]"}},
             {"allowed_special": set(), "disallowed_special": "all"}, {"dropout": 0.0}, {"dropout": 0.5, "seed": 1}]
    for text in TEXTS + ["the <|end|> cat", "a [SEP] b", "a < b [ c", "<|end|>", "[SEP", "caf\u00e9 <|end|>",
                         "\u65e5\u672c[SEP]", "\u00e9 < \U0001F600 [", "\U0001F600<|end|>"]:
        for kwargs in rules:
            try:
                want = enc._encode(text, kwargs.get("allowed_special", frozenset()),
                                   kwargs.get("disallowed_special", "all"), kwargs.get("dropout"), kwargs.get("seed"))
            except ValueError as e:
                with pytest.raises(ValueError, match=str(e)[:20]):
                    enc.encode(text, **kwargs)
                continue
            assert enc.encode(text, **kwargs) == want, (text, kwargs)
    # a special token whose first character is not ASCII (the check reads every str kind)
    wide = Encoding("w", pat_str=patterns.GPT4_PATTERN, mergeable_ranks=trained()._mergeable_ranks,
                    special_tokens={"\u00abend\u00bb": 300, "\U0001F600!": 301})
    for text in ["plain", "caf\u00e9", "x \u00abend\u00bb y", "\u00ab alone", "\U0001F600", "\U0001F600!", "a\ud800b"]:
        for kwargs in rules[:8]:
            try:
                want = wide._encode(text, kwargs.get("allowed_special", frozenset()),
                                    kwargs.get("disallowed_special", "all"), None, None)
            except ValueError as e:
                with pytest.raises(ValueError, match=str(e)[:20]):
                    wide.encode(text, **kwargs)
                continue
            assert wide.encode(text, **kwargs) == want, (text, kwargs)
    with pytest.raises(TypeError):
        enc.encode(b"bytes")
    with pytest.raises(TypeError):
        enc.encode("x", "positional rules")
    with pytest.raises(ValueError):
        enc.encode("a [SEP] b", allowed_special={"not special"})

    class Mine(Encoding):
        def encode(self, text, **kwargs):
            return ["mine"]
    mine = Mine("m", pat_str=patterns.GPT4_PATTERN, mergeable_ranks=BYTE_RANKS, special_tokens={})
    assert mine.encode("ab") == ["mine"] and mine.encode_ordinary("ab") == [97, 98]
    encode = pickle.loads(pickle.dumps(enc)).encode   # a bound method keeps its encoding
    assert encode("the cat <|end|>", allowed_special="all")[-1] == 300
    assert encode("a\ud800b") == enc._encode("a\ud800b", frozenset(), "all", None, None)
