"""Streaming decode (fastbpe.hf.DecodeStream / ByteDecodeStream): the same chunks as
tokenizers.decoders.DecodeStream, and as the slow reference twins, on byte-level and
byte_fallback tokenizers; never a broken character."""
from __future__ import annotations

import copy
import functools
import random

import pytest

import datasources as ds
from conftest import encoding_pair
from fastbpe.hf import ByteDecodeStream, DecodeStream
from reference_decode_stream import ReferenceByteDecodeStream, ReferenceDecodeStream

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is the reference for DecodeStream")
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers  # noqa: E402

TEXT = ("Hello, streaming world! It's 2024 — naïve café. 日本語のテキスト、中文。한국어! "
        "Привет 👍🏽👨‍👩‍👧 emoji\u200bzero width\n\n    def f(x):\n        return x ** 2\n")
TRAIN = [TEXT.replace("👍🏽👨‍👩‍👧", "").replace("日本語", "") * 3,
         "the quick brown fox jumps over the lazy dog " * 20,
         "streams of tokens arrive one at a time " * 20]


def chunks(ids, rng):
    """ids cut into runs of 1-4, with some single ints."""
    i, out = 0, []
    while i < len(ids):
        k = rng.choice([1, 1, 1, 2, 3, 4])
        out.append(ids[i] if k == 1 else ids[i:i + k])
        i += k
    return out


def run(stream, tokenizer, steps):
    return [stream.step(tokenizer, s) for s in steps]


def assert_stream_parity(tok, ids, *, tokenizer=None, skip=False, prefill=0, seed=0):
    """Ours (on `tokenizer`, default `tok`) gives HF's chunks (on `tok`) step by step, and the
    reference twin's; the chunks join to the text."""
    tokenizer = tok if tokenizer is None else tokenizer
    for steps in ([*ids[prefill:]], chunks(ids[prefill:], random.Random(seed))):
        context = ids[:prefill] or None
        want = run(decoders.DecodeStream(context, skip), tok, steps)
        got = run(DecodeStream(context, skip_special_tokens=skip), tokenizer, steps)
        assert got == want
        assert run(ReferenceDecodeStream(context, skip), tok, steps) == want
        assert not any(c is not None and c.endswith("\ufffd") for c in got)
    if not prefill:
        assert "".join(c for c in got if c) == tok.decode(ids, skip_special_tokens=skip)


# ------------------------------------------------------------------ tokenizers built here


@pytest.fixture(scope="module")
def byte_level_tok():
    """A ByteLevel BPE trained by tokenizers itself (GPT-2 style), with a special token."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(TRAIN, trainer)
    return tok


@pytest.fixture(scope="module")
def byte_fallback_tok():
    """A Llama-2 style model: Metaspace, byte_fallback to <0xXX> tokens, and its decoder chain
    (Replace, ByteFallback, Fuse, Strip)."""
    tok = tokenizers.Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    specials = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    tok.train_from_iterator(TRAIN, trainers.BpeTrainer(vocab_size=600, special_tokens=specials, show_progress=False))
    return tok


@pytest.mark.parametrize("skip", [False, True])
def test_byte_level_parity(byte_level_tok, skip):
    ids = byte_level_tok.encode("<|endoftext|>" + TEXT + "<|endoftext|>" + TEXT[:40]).ids
    assert_stream_parity(byte_level_tok, ids, skip=skip)
    assert_stream_parity(byte_level_tok, ids, skip=skip, prefill=9, seed=1)


@pytest.mark.parametrize("skip", [False, True])
def test_byte_fallback_parity(byte_fallback_tok, skip):
    ids = byte_fallback_tok.encode("<s>" + TEXT + "</s>").ids
    assert any(byte_fallback_tok.id_to_token(i).startswith("<0x") for i in ids)
    assert_stream_parity(byte_fallback_tok, ids, skip=skip)
    assert_stream_parity(byte_fallback_tok, ids, skip=skip, prefill=5, seed=2)


def test_never_a_broken_character(byte_level_tok):
    """An emoji made of several byte tokens comes out whole, on the step that completes it."""
    ids = byte_level_tok.encode("👨‍👩‍👧").ids
    assert len(ids) > 4
    out = run(DecodeStream(), byte_level_tok, ids)
    assert out[0] is None and "".join(c for c in out if c) == "👨‍👩‍👧"


def test_copy_forks_the_stream(byte_level_tok):
    ids = byte_level_tok.encode(TEXT).ids
    a = DecodeStream()
    run(a, byte_level_tok, ids[:10])
    b = copy.copy(a)
    assert run(a, byte_level_tok, ids[10:]) == run(b, byte_level_tok, ids[10:])


def test_bad_ids():
    stream = DecodeStream()
    with pytest.raises(TypeError):
        stream.step(None, "12")
    with pytest.raises(TypeError):
        stream.step(None, [1, 2.0])
    with pytest.raises(TypeError):
        stream.step(None, None)
    with pytest.raises(ValueError):
        stream.step(None, -1)
    with pytest.raises(TypeError):
        DecodeStream(ids=["a"])
    import fastbpe

    enc = fastbpe.Encoding("bytes", pat_str=r"\S+|\s+", mergeable_ranks={bytes([b]): b for b in range(256)},
                           special_tokens={})
    with pytest.raises(TypeError, match="ByteDecodeStream"):
        DecodeStream().step(enc, 65)
    with pytest.raises(KeyError):
        ByteDecodeStream().step(enc, 300)


# ------------------------------------------------------------------ shared tokenizer.json files


HF_FILES = ["qwen2.5", "deepseek-r1-distill-llama-8b", "gpt2"]


def shared_file(model):
    path = ds.VOCAB_DIR / "hf" / model / "tokenizer.json"
    if not path.exists():
        pytest.skip(f"{path} not found (shared data absent)")
    return path


@functools.lru_cache(maxsize=None)
def shared_tok(model):
    tok = tokenizers.Tokenizer.from_file(str(shared_file(model)))
    tok.no_truncation()  # GPT-2's file truncates to 50 tokens
    return tok


@pytest.mark.parametrize("model", HF_FILES)
def test_shared_files_parity(model):
    tok = shared_tok(model)
    text = TEXT + (ds.load_corpus("multilingual", 3000) if ds.corpus_available("multilingual") else "")
    ids = tok.encode(text).ids
    for skip in (False, True):
        assert_stream_parity(tok, ids, skip=skip)
    assert_stream_parity(tok, ids, prefill=7, seed=3)


def fastbpe_tokenizer_class():
    try:
        from fastbpe.hf import Tokenizer
    except ImportError:
        pytest.skip("fastbpe.hf.Tokenizer is not in this tree (branch hf)")
    return Tokenizer


@pytest.mark.parametrize("which", ["byte_level", "byte_fallback", *HF_FILES])
def test_fastbpe_tokenizer_parity(which, request):
    """Our stream on fastbpe's own Tokenizer gives HF's chunks on HF's."""
    Tokenizer = fastbpe_tokenizer_class()
    if which in HF_FILES:
        tok, ours = shared_tok(which), Tokenizer.from_file(str(shared_file(which)))
    else:
        tok = request.getfixturevalue(which + "_tok")
        ours = Tokenizer.from_str(tok.to_str())
    ids = tok.encode(TEXT).ids
    for skip in (False, True):
        assert_stream_parity(tok, ids, tokenizer=ours, skip=skip)


# ------------------------------------------------------------------ tiktoken-style Encoding


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_byte_stream_matches_reference(name):
    enc, _ = encoding_pair(name)
    text = "<|endoftext|>" + TEXT + "<|endoftext|>"
    ids = enc.encode(text, allowed_special="all")
    rng = random.Random(4)
    for skip in (False, True):
        for steps in (ids, chunks(ids, rng)):
            got = run(ByteDecodeStream(skip_special_tokens=skip), enc, steps)
            assert got == run(ReferenceByteDecodeStream(skip), enc, steps)
            assert "".join(c for c in got if c) == (text.replace("<|endoftext|>", "") if skip else text)
            assert not any(c is not None and "\ufffd" in c for c in got)


def test_byte_stream_invalid_bytes(tmp_path):
    """Bytes that can never form a character come out as U+FFFD, as Encoding.decode does;
    an unfinished character is held back."""
    import fastbpe

    ranks = {bytes([b]): b for b in range(256)}
    enc = fastbpe.Encoding("bytes", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={"<e>": 256})
    data = "a€b".encode() + b"\xff" + "😀".encode() + b"\xe2\x82"
    steps = list(data) + [256]
    got = run(ByteDecodeStream(), enc, steps)
    assert got == run(ReferenceByteDecodeStream(), enc, steps)
    assert "".join(c for c in got if c) == "a€b\ufffd😀\ufffd<e>"
    s = ByteDecodeStream()
    assert s.step(enc, list(b"x\xe2\x82")) == "x"
    t = copy.copy(s)
    assert s.step(enc, 0xAC) == "€" and t.step(enc, 0xAC) == "€"
