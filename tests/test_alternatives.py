"""BPE-dropout (`encode(..., dropout=p, seed=s)`) and `encode_shortest` on Encoding and the
minbpe classes: exact at p=0, bytes at p=1, reproducible, round trips, fewest tokens."""
from __future__ import annotations

import random

import pytest
import regex

import fastbpe
from fastbpe.minbpe import BasicTokenizer, RegexTokenizer
from fastbpe.patterns import GPT4_PATTERN
from helpers import make_docs

TEXTS = [
    "",
    "hello world",
    "The quick brown fox jumps over the lazy dog, again and again!!!",
    "  spaces\tand\nnewlines\n\n  and 12345 numbers 3.14159",
    "unicode: \u00e9t\u00e9 \u65e5\u672c\u8a9e \U0001F600 \u0645\u0631\u062d\u0628\u0627",
    "lone surrogate \ud800 here",
]


@pytest.fixture(scope="module")
def trained_text():
    return "\n".join(make_docs(7, 400, words_per_doc=40))


@pytest.fixture(scope="module")
def small_encoding(trained_text):
    """A tiktoken-style Encoding from ranks trained here (no vocabulary files needed)."""
    tok = RegexTokenizer()
    tok.train(trained_text, 600)
    ranks = {tok.vocab[i]: i for i in range(len(tok.vocab))}
    return fastbpe.Encoding("small", pat_str=GPT4_PATTERN, mergeable_ranks=ranks,
                            special_tokens={"<|end|>": 600})


@pytest.fixture(scope="module", params=["small", "cl100k_base"])
def enc(request, small_encoding):
    if request.param == "small":
        return small_encoding
    from conftest import require_encoding

    require_encoding("cl100k_base")
    return fastbpe.get_encoding("cl100k_base")


def _byte_ids(enc, text: str) -> list:
    data = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode()   # as tiktoken
    return [enc.encode_single_token(bytes([b])) for b in data]


# ------------------------------------------------------------------ BPE-dropout

def test_dropout_zero_is_exact(enc, trained_text):
    for text in TEXTS + [trained_text[:3000]]:
        exact = enc.encode(text)
        assert enc.encode(text, dropout=0) == exact
        assert enc.encode(text, dropout=0.0, seed=3) == exact
        assert enc.encode(text, dropout=None) == exact


def test_dropout_one_gives_bytes(enc):
    for text in TEXTS:
        assert enc.encode(text, dropout=1.0, seed=0) == _byte_ids(enc, text)


def test_dropout_round_trips_and_is_reproducible(enc, trained_text):
    text = trained_text[:4000]
    exact = enc.encode(text)
    seen = set()
    for seed in range(6):
        ids = enc.encode(text, dropout=0.3, seed=seed)
        assert ids == enc.encode(text, dropout=0.3, seed=seed)
        assert enc.decode(ids) == text
        assert len(ids) > len(exact)           # 30% of merges skipped: more tokens
        seen.add(tuple(ids))
    assert len(seen) == 6                      # the seed matters
    for text in TEXTS:
        assert enc.decode(enc.encode(text, dropout=0.5, seed=1)) == enc.decode(enc.encode(text))


def test_dropout_length_grows_with_p(enc, trained_text):
    text = trained_text[:4000]
    lengths = [len(enc.encode(text, dropout=p, seed=9)) for p in (0.0, 0.1, 0.4, 0.8, 1.0)]
    assert lengths == sorted(lengths) and lengths[0] < lengths[-1]


def test_dropout_keeps_allowed_specials(small_encoding):
    text = "hello <|end|> world"
    ids = small_encoding.encode(text, allowed_special="all", dropout=0.5, seed=2)
    assert 600 in ids and small_encoding.decode(ids) == text
    with pytest.raises(ValueError):
        small_encoding.encode(text, dropout=0.5, seed=2)       # disallowed special, as encode


@pytest.mark.parametrize("bad, error", [(-0.1, ValueError), (1.5, ValueError), ("0.1", TypeError),
                                        (True, TypeError)])
def test_dropout_bad_values(small_encoding, bad, error):
    with pytest.raises(error):
        small_encoding.encode("hello", dropout=bad)


def test_bad_seed(small_encoding):
    with pytest.raises(TypeError):
        small_encoding.encode("hello", dropout=0.1, seed="1")
    with pytest.raises(ValueError):
        small_encoding.encode("hello", dropout=0.1, seed=-1)


@pytest.mark.parametrize("cls", [BasicTokenizer, RegexTokenizer])
def test_minbpe_dropout(cls, trained_text):
    tok = cls()
    tok.train(trained_text[:20000], 400)
    for text in TEXTS[:5]:
        assert tok.encode(text, dropout=0) == tok.encode(text)
        assert tok.encode(text, dropout=1.0) == list(text.encode())
        ids = tok.encode(text, dropout=0.4, seed=5)
        assert ids == tok.encode(text, dropout=0.4, seed=5) and tok.decode(ids) == text
    if cls is RegexTokenizer:
        tok.register_special_tokens({"<|x|>": 1000})
        ids = tok.encode("a <|x|> b", allowed_special="all", dropout=1.0)
        assert ids == list(b"a ") + [1000] + list(b" b")


# ------------------------------------------------------------------ shortest

def _fewest(ranks: dict, piece: bytes) -> list:
    """Python twin: fewest tokens; at each position the longest first token among the optimal."""
    n = len(piece)
    best = [0] * (n + 1)
    first = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        best[i] = None
        for k in range(n - i, 0, -1):
            if piece[i:i + k] in ranks and best[i + k] is not None and (best[i] is None or best[i + k] + 1 < best[i]):
                best[i], first[i] = best[i + k] + 1, k
    out, i = [], 0
    while i < n:
        out.append(ranks[piece[i:i + first[i]]])
        i += first[i]
    return out


def test_shortest_matches_twin_and_round_trips(small_encoding, trained_text):
    ranks = small_encoding._mergeable_ranks
    rng = random.Random(4)
    texts = TEXTS[:5] + [trained_text[s:s + rng.randint(1, 200)] for s in rng.sample(range(len(trained_text) - 300), 30)]
    for text in texts:
        ids = small_encoding.encode_shortest(text)
        assert small_encoding.decode(ids) == text
        assert len(ids) <= len(small_encoding.encode(text))
        pieces = regex.findall(GPT4_PATTERN, text)
        assert ids == [t for p in pieces for t in _fewest(ranks, p.encode())]


def test_shortest_never_longer_than_bpe(enc, trained_text):
    for text in TEXTS + [trained_text[:5000]]:
        ids = enc.encode_shortest(text)
        assert len(ids) <= len(enc.encode(text))
        assert enc.decode(ids) == enc.decode(enc.encode(text))
    with pytest.raises(ValueError):
        enc.encode_shortest("<|endoftext|>" if enc.name != "small" else "<|end|>")


def test_gpt4_tokenizer_dropout():
    from conftest import require_encoding
    from fastbpe.minbpe import GPT4Tokenizer

    require_encoding("cl100k_base")
    tok = GPT4Tokenizer()
    text = TEXTS[2]
    assert tok.encode(text, dropout=0) == tok.encode(text)
    assert tok.encode_ordinary(text, dropout=1.0) == list(tok._enc.encode(text, dropout=1.0))
    ids = tok.encode(text, dropout=0.5, seed=1)
    assert ids == tok.encode(text, dropout=0.5, seed=1) and tok.decode(ids) == text
