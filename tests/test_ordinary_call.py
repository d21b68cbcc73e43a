"""The compiled encode_ordinary (_short_call.OrdinaryCall): an Encoding whose pattern the C
scanner knows answers `enc.encode_ordinary(text)` with one C call kept in its __dict__.  It must
give what the Python method gives for every input, follow the kernel when a front end swaps it,
leave a subclass's own encode_ordinary alone and keep no reference cycle (a table is tens of MB
and would otherwise wait for the cycle collector)."""
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
    enc = trained()
    assert "encode_ordinary" in enc.__dict__
    for text in TEXTS:
        assert enc.encode_ordinary(text) == Encoding.encode_ordinary(enc, text), text
    class Text(str):
        pass
    assert enc.encode_ordinary(Text("the cat")) == Encoding.encode_ordinary(enc, "the cat")
    with pytest.raises(TypeError):
        enc.encode_ordinary(b"bytes")
    with pytest.raises(TypeError):
        Encoding.encode_ordinary(enc, b"bytes")


def test_not_installed_where_the_c_scanner_does_not_run():
    enc = Encoding("toy", pat_str=r"\w+|\s+|[^\w\s]+", mergeable_ranks=BYTE_RANKS, special_tokens={})
    if enc.splitter.kind < 0:
        assert "encode_ordinary" not in enc.__dict__
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
