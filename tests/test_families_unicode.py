"""The Unicode version policy (docs/unicode.md): which table each path reads, on code points the
references disagree on (assigned in Unicode 16.0 or 17.0).  A letter joins "ab" and "cd" into one
piece; a change of any table or reference shows here."""
from __future__ import annotations

import pytest

import regex

from fastbpe import patterns
from fastbpe.gguf.pretokenizers import Splitter as GGUFSplitter, pre_tokenizer
from fastbpe.pretokenize import Splitter

U16 = [0x1C89, 0x1E5D0]              # letters since Unicode 16.0
U17 = [0x323B0, 0x11DB0, 0x16EA0]    # letters since Unicode 17.0
OLD = [0x31350, 0x4E00]              # letters before both


def _joined(pieces: list) -> bool:
    return len([p for p in pieces if p]) == 1


def _text(c: int) -> str:
    return "ab" + chr(c) + "cd"


@pytest.mark.parametrize("pattern", [patterns.CL100K_PATTERN, patterns.QWEN2_PATTERN, patterns.LLAMA3_PATTERN, patterns.GPT2_PATTERN])
def test_builtin_scanner_follows_tiktoken_unicode_16(pattern):
    split = Splitter(pattern)
    assert split.engine == "scanner"
    assert all(_joined(split.findall(_text(c))) for c in U16 + OLD)
    assert not any(_joined(split.findall(_text(c))) for c in U17)


def test_regex_dialect_programs_follow_the_regex_package():
    pattern = r"\p{L}+|[^\p{L}]+"
    split = Splitter(pattern)
    assert split.engine == "program"
    for c in U16 + U17 + OLD:
        assert split.findall(_text(c)) == regex.findall(pattern, _text(c))
    assert regex.match(r"\p{L}", chr(U17[0]))   # regex is on Unicode 17.0 (the doc says so)


@pytest.mark.parametrize("pattern", [patterns.LLAMA3_PATTERN, r"\p{L}+|[^\p{L}]+", r"[^\s\p{L}\p{N}]+|\p{L}+"])
def test_tokenizer_json_splits_follow_hf(pattern):
    """A built-in kind and a program with Oniguruma's classes: HF's pieces on every probe."""
    from tokenizers import Regex, pre_tokenizers as hp

    from fastbpe.hf import pre_tokenizers as fp
    ours = fp.from_json({"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False})
    assert ours.engine in ("scanner", "program")
    ref = hp.Split(Regex(pattern), "isolated")
    for c in U16 + U17 + OLD:
        assert ours.pre_tokenize_str(_text(c)) == ref.pre_tokenize_str(_text(c)), hex(c)


def test_gguf_builtin_kinds_read_unicode_16_letters():
    """llama.cpp's own tables give U+1C89 no category (docs/unicode.md: a known difference)."""
    split = GGUFSplitter(pre_tokenizer("llama-bpe", "probe.gguf"))
    assert _joined(split.split(_text(0x1C89)))
    assert not _joined(split.split(_text(0x323B0)))
