"""minbpe code runs unchanged on fastbpe.minbpe: a test suite written from minbpe's public
behaviour (its README and test file's scenarios, not its code), importing `minbpe` and its
submodules through `sys.modules` aliases; plus regression tests for minbpe-class bugs."""
from __future__ import annotations

import copy
import importlib
import pickle
import sys

import pytest

import fastbpe.minbpe

ALIASES = {"minbpe": "fastbpe.minbpe", "minbpe.base": "fastbpe.minbpe.base",
           "minbpe.basic": "fastbpe.minbpe.basic", "minbpe.regex": "fastbpe.minbpe.regex",
           "minbpe.gpt4": "fastbpe.minbpe.gpt4"}

TEXT = ("The llama is a domesticated South American camelid. Llamas are social animals and "
        "live with others as a herd! Their wool is soft (and contains only a little lanolin). "
        "12345 llamas; 67 alpacas — ünïcödé, 日本語, emoji 😀🦙.\n\n") * 6
SPECIALS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}


@pytest.fixture(autouse=True)
def minbpe_alias(monkeypatch):
    for name, target in ALIASES.items():
        monkeypatch.setitem(sys.modules, name, importlib.import_module(target))


def test_alias_imports_like_minbpe():
    from minbpe import BasicTokenizer, GPT4Tokenizer, RegexTokenizer, Tokenizer  # noqa: F401
    from minbpe.base import get_stats, merge, render_token, replace_control_characters
    from minbpe.gpt4 import GPT4Tokenizer as G4
    from minbpe.regex import GPT4_SPLIT_PATTERN, RegexTokenizer as R  # noqa: F401

    assert issubclass(R, Tokenizer) and issubclass(G4, R)
    assert get_stats([1, 2, 3, 1, 2]) == {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    assert list(get_stats([1, 2, 1])) == [(1, 2), (2, 1)]  # first-occurrence order
    assert merge([1, 2, 3, 1, 2], (1, 2), 4) == [4, 3, 4]
    assert merge([1, 1, 1], (1, 1), 9) == [9, 1]
    assert replace_control_characters("a\nb\x00") == "a\\u000ab\\u0000"
    assert render_token(b"hi\n\xff") == "hi\\u000a\ufffd"


@pytest.mark.parametrize("name", ["BasicTokenizer", "RegexTokenizer"])
@pytest.mark.parametrize("text", ["", "?", "hello world!!!? (안녕하세요!) lol123 😉", TEXT])
def test_encode_decode_identity(name, text):
    import minbpe

    tok = getattr(minbpe, name)()
    tok.train(TEXT, 256 + 80)
    assert tok.decode(tok.encode(text)) == text


@pytest.mark.parametrize("name", ["BasicTokenizer", "RegexTokenizer"])
def test_wikipedia_example(name):
    """aaabdaaabac with 3 merges: aa -> Z, Za -> Y, Yb -> X gives XdXac."""
    import minbpe

    tok = getattr(minbpe, name)()
    tok.train("aaabdaaabac", 256 + 3)
    assert tok.encode("aaabdaaabac") == [258, 100, 258, 97, 99]
    assert tok.merges == {(97, 97): 256, (256, 97): 257, (257, 98): 258}
    assert tok.vocab[258] == b"aaab"


@pytest.mark.parametrize("specials", [{}, SPECIALS])
def test_save_load(tmp_path, specials):
    from minbpe import RegexTokenizer

    tok = RegexTokenizer()
    tok.train(TEXT, 256 + 64)
    tok.register_special_tokens(specials)
    text = TEXT + "<|endoftext|>" + TEXT[:50]
    ids = tok.encode(text, allowed_special="all")
    prefix = str(tmp_path / "tok")
    tok.save(prefix)
    assert (tmp_path / "tok.model").read_text().startswith("minbpe v1\n")
    assert "-> [" in (tmp_path / "tok.vocab").read_text(encoding="utf-8")
    back = RegexTokenizer()
    back.load(prefix + ".model")
    assert back.encode(text, allowed_special="all") == ids
    assert back.decode(ids) == text
    assert back.merges == tok.merges and back.special_tokens == specials


def test_gpt4_tokenizer_equals_tiktoken_cl100k():
    from conftest import require_encoding
    from minbpe import GPT4Tokenizer

    ref = require_encoding("cl100k_base")
    tok = GPT4Tokenizer()
    for text in ["hello world!!!? (안녕하세요!) lol123 😉", TEXT]:
        assert tok.encode(text) == ref.encode(text)
        assert tok.decode(tok.encode(text)) == text
    special = "<|endoftext|>Hello<|fim_prefix|> world<|endofprompt|>"
    assert tok.encode(special, allowed_special="all") == ref.encode(special, allowed_special="all")
    assert tok.merges[(tok.byte_shuffle[ord("h")], tok.byte_shuffle[ord("e")])] >= 256


# -- regressions (issue 7) ----------------------------------------------------------------

def _trained(text, n):
    from minbpe import RegexTokenizer

    tok = RegexTokenizer()
    tok.train(text, 256 + n)
    return tok


def test_no_stale_table_after_loads(tmp_path):
    """Item 2: the encode table was keyed by id(merges); a freed dict's address is reused."""
    from minbpe import RegexTokenizer

    for i, text in enumerate(["aaaa bbbb aaaa", "cdcdcd efefef", "ghghgh ijij"]):
        _trained(text * 20, 5).save(str(tmp_path / f"m{i}"))
    tok = RegexTokenizer()
    sample = "aaaa cdcdcd ghghgh"
    tok.load(str(tmp_path / "m0.model"))
    first = tok.encode(sample)
    for _ in range(20):
        tok.load(str(tmp_path / "m1.model"))
        tok.load(str(tmp_path / "m2.model"))
        fresh = RegexTokenizer()
        fresh.load(str(tmp_path / "m2.model"))
        assert tok.encode(sample) == fresh.encode(sample)
    assert tok.encode(sample) != first


def test_no_stale_table_after_editing_merges_in_place():
    tok = _trained("abababab cdcdcd", 3)
    before = tok.encode("abab")
    tok.merges.clear()
    tok.vocab = tok._build_vocab()
    assert tok.encode("abab") == list(b"abab")
    tok.merges[(97, 98)] = 256
    tok.vocab = tok._build_vocab()
    assert tok.encode("abab") == [256, 256]
    tok.merges = {}
    assert tok.encode("abab") == list(b"abab") != before


@pytest.mark.parametrize("cls_name", ["BasicTokenizer", "RegexTokenizer"])
@pytest.mark.parametrize("clone", [pickle.loads, copy.deepcopy, copy.copy],
                         ids=["pickle", "deepcopy", "copy"])
def test_pickle_and_copy_after_encode(cls_name, clone):
    """Item 10: pickling or deep-copying after the first encode failed (C table object)."""
    import minbpe

    tok = getattr(minbpe, cls_name)()
    tok.train(TEXT, 256 + 30)
    ids = tok.encode(TEXT)
    data = pickle.dumps(tok) if clone is pickle.loads else tok
    back = clone(data)
    assert back.encode(TEXT) == ids and back.decode(ids) == TEXT
    back.merges = {}
    assert tok.encode(TEXT) == ids  # the copy's changes do not reach the original


def _model_lines(tmp_path):
    tok = _trained(TEXT, 10)
    tok.register_special_tokens({"<|a|>": 1000, "<|b|>": 1001})
    tok.save(str(tmp_path / "good"))
    return (tmp_path / "good.model").read_text(encoding="utf-8").split("\n")


@pytest.mark.parametrize("damage", ["count too high", "count too low", "truncated mid-line",
                                    "bad merge line", "special id inside merges"])
def test_bad_model_file_raises(tmp_path, damage):
    """Item 9: a wrong special-token count or a truncated file loaded quietly."""
    from minbpe import RegexTokenizer

    lines = _model_lines(tmp_path)
    if damage == "count too high":
        lines[2] = "3"
    elif damage == "count too low":
        lines[2] = "1"
    elif damage == "bad merge line":
        lines[-3] = "12"
    elif damage == "special id inside merges":
        lines[3] = "<|a|> 260"
    text = "\n".join(lines)
    if damage == "truncated mid-line":
        text = text.rstrip("\n")[:-1]
    path = tmp_path / "bad.model"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError):
        RegexTokenizer().load(str(path))
    RegexTokenizer().load(str(tmp_path / "good.model"))  # the undamaged file loads
