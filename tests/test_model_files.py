"""Saving and loading model files: what a format cannot hold is kept beside it (not
dropped), a name that says no format is refused, and a file that is not a model (binary,
deeply nested JSON, an absurd id) is a ValueError naming it."""
from __future__ import annotations

import base64
import json
import dataclasses
import os
import random

import pytest

from conftest import encoding_pair

import fastbpe
from fastbpe import trainer
from fastbpe.encoding import Encoding
from fastbpe.ubpe import UBPE, UBPEClassic

CORPUS = ["hello world, hello there; the world is wide and the sea is deep"] * 20
PATTERN = r" ?\w+| ?[^\w\s]+|\s+"


@pytest.fixture(scope="module")
def enc():
    return fastbpe.train(CORPUS, 300, pattern=PATTERN, special_tokens=["<|endoftext|>", "<|pad|>"])


# --- item 3: .tiktoken keeps the pattern and special tokens beside it ----------------------

def test_tiktoken_save_keeps_pattern_and_special_tokens(enc, tmp_path):
    path = tmp_path / "m.tiktoken"
    fastbpe.save_model(enc, path)
    assert sorted(os.listdir(tmp_path)) == ["m.tiktoken", "m.tiktoken.meta.json"]
    model = fastbpe.load_model(path)
    assert model.pattern == PATTERN
    assert model.special_tokens == enc._special_tokens
    back = model.to_encoding()
    text = "hello wide<|pad|> sea<|endoftext|>"
    assert back.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    # the ranks file itself is what tiktoken reads: ranks only
    tiktoken_load = pytest.importorskip("tiktoken.load")
    assert tiktoken_load.load_tiktoken_bpe(str(path)) == enc._mergeable_ranks


def test_tiktoken_without_side_file_is_ranks_with_the_default_pattern(enc, tmp_path):
    path = tmp_path / "m.tiktoken"
    fastbpe.save_model(enc, path)
    os.unlink(tmp_path / "m.tiktoken.meta.json")
    model = fastbpe.load_model(path)
    assert model.special_tokens == {} and model.pattern == fastbpe.trainer.GPT4_PATTERN
    assert fastbpe.load_model(path, pattern=PATTERN).pattern == PATTERN


def test_a_bad_side_file_is_a_value_error(enc, tmp_path):
    path = tmp_path / "m.tiktoken"
    fastbpe.save_model(enc, path)
    side = tmp_path / "m.tiktoken.meta.json"
    for bad in ("{", "[]", json.dumps({"format": "fastbpe-tiktoken-meta", "pattern": 1,
                                       "special_tokens": {}}),
                json.dumps({"format": "fastbpe-tiktoken-meta", "pattern": "x",
                            "special_tokens": {"<|x|>": -1}})):
        side.write_text(bad)
        with pytest.raises(ValueError, match="m.tiktoken.meta.json"):
            fastbpe.load_model(path)


# --- new user: a name that says no format ----------------------------------------------------

@pytest.mark.parametrize("name", ["x.txt", "model", "x.JSON.bak"])
def test_save_model_refuses_a_name_without_a_format(enc, tmp_path, name):
    with pytest.raises(ValueError, match="format"):
        fastbpe.save_model(enc, tmp_path / name)
    assert os.listdir(tmp_path) == []
    fastbpe.save_model(enc, tmp_path / name, format="native")  # said explicitly: fine
    assert fastbpe.load_model(tmp_path / name).special_tokens == enc._special_tokens


# --- items 24 and 16: not a model ------------------------------------------------------------

@pytest.mark.parametrize("name", ["m.json", "m.model", "m.tiktoken"])
def test_a_binary_file_is_a_value_error_naming_it(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"\xff\xfe\x00\x89PNG garbage \x80\x81")
    with pytest.raises(ValueError, match=name):
        fastbpe.load_model(path)


def test_deeply_nested_model_json_is_a_value_error(tmp_path):
    for name, text in [("deep.json", "[" * 200_000),
                       ("deep2.json", '{"format": "fastbpe-bpe", "version": 1, "pattern": '
                        + "[" * 200_000 + "]" * 200_000 + "}")]:
        (tmp_path / name).write_text(text)
        with pytest.raises(ValueError, match=name):
            fastbpe.load_model(tmp_path / name)


def test_a_tokenizer_json_given_to_load_model_says_what_to_use(enc, tmp_path):
    fastbpe.save_model(enc, tmp_path / "tokenizer.json")
    os.rename(tmp_path / "tokenizer.json", tmp_path / "hf.json")
    with pytest.raises(ValueError, match="Tokenizer.from_file"):
        fastbpe.load_model(tmp_path / "hf.json")


# --- item 13 (and 16 for UBPE dumps): untrusted UBPE JSON ------------------------------------

@pytest.fixture(scope="module", params=[UBPE, UBPEClassic])
def ubpe_dump(request):
    docs = ["the cat sat on the mat", "the dog sat on the log", "cats and dogs"] * 5
    model = request.param(alphabet=sorted(set("".join(docs))), n_tokens=40)
    model.fit(docs, quiet=True)
    return request.param, json.loads(model.dumps())


@pytest.mark.parametrize("where", ["key", "sequence", "weight", "negative"])
def test_ubpe_loads_refuses_absurd_ids(ubpe_dump, where):
    cls, dump = ubpe_dump
    dump = json.loads(json.dumps(dump))
    token = next(iter(dump["mapper"]))
    if where == "key":
        dump["mapper"][str(10**9)] = dump["mapper"].pop(token)
        dump["weights"][str(10**9)] = dump["weights"].pop(token)
    elif where == "sequence":
        dump["mapper"][token] = [0, 10**9]
    elif where == "weight":
        dump["weights"][str(10**9)] = 1.0
    else:
        dump["mapper"][token] = [0, -5]
    with pytest.raises(ValueError, match="out of range"):
        cls.loads(json.dumps(dump), str)


def test_ubpe_loads_refuses_deep_nesting(ubpe_dump):
    cls, _ = ubpe_dump
    with pytest.raises(ValueError, match="UBPE"):
        cls.loads('{"n_tokens": 3, "alphabet": ' + "[" * 200_000 + "]" * 200_000 + "}", str)


def test_parsed_tiktoken_tokens_are_not_walked_by_the_garbage_collector():
    """The tokens of a loaded .tiktoken file: a tuple the collector does not track (200k
    tokens walked by a collection after every load cost ms of the caller's time), still
    indexed by rank and turned into tiktoken's dict on demand."""
    import gc

    from fastbpe._formats import untracked
    from fastbpe.formats.tiktoken_bpe import TokensByRank, parse_tiktoken_tokens
    data = b"".join(base64.b64encode(bytes([b])) + b" %d\n" % b for b in range(256))
    tokens = parse_tiktoken_tokens(data)
    assert isinstance(tokens, TokensByRank) and not gc.is_tracked(tokens)
    assert tokens[65] == b"A" and tokens.to_dict()[b"A"] == 65
    with pytest.raises(TypeError):
        untracked([1, 2])
    # an Encoding built from a {bytes: rank} dict keeps its tokens the same way
    from fastbpe.formats.tiktoken_bpe import tokens_of_ranks
    by_rank = tokens_of_ranks({bytes([b]): b for b in range(256)})
    assert type(by_rank) is tuple and not gc.is_tracked(by_rank) and by_rank[65] == b"A"


# -- save/load keeps the ids of vocabularies whose bytes are not ids 0..255 --

# the same ranks under other names share one recovery of the merges (it is the slow part)
BASE_OF = {"gpt2": "r50k_base", "p50k_edit": "p50k_base", "o200k_harmony": "o200k_base"}
_RECOVERED: dict = {}
SAMPLE = "Hello, w\u00f6rld! 12345 \u4f60\u597d  \n\tfoo_bar() {x: 1} <|endoftext|>"


def _recovered_model(name):
    base = BASE_OF.get(name, name)
    if base not in _RECOVERED:
        _RECOVERED[base] = trainer.as_model(encoding_pair(base)[0])
    enc = encoding_pair(name)[0]
    return enc, dataclasses.replace(_RECOVERED[base], special_tokens=dict(enc._special_tokens),
                                    pattern=enc._pat_str)


def test_save_load_native_keeps_ids_of_named_encodings(enc_name, tmp_path):
    enc, model = _recovered_model(enc_name)
    assert model.byte_order is not None  # the OpenAI vocabularies all permute the bytes
    fastbpe.save_model(model, tmp_path / "m.json")
    back = fastbpe.load_model(tmp_path / "m.json")
    assert back.mergeable_ranks() == enc._mergeable_ranks
    assert back.special_tokens == enc._special_tokens and back.pattern == enc._pat_str
    assert back.to_encoding().encode(SAMPLE, allowed_special="all") == \
        enc.encode(SAMPLE, allowed_special="all")


@pytest.mark.parametrize("name", ["r50k_base", "p50k_base"])  # p50k has an unused rank
def test_save_load_tiktoken_keeps_ids(name, tmp_path):
    enc = encoding_pair(name)[0]
    fastbpe.save_model(enc, tmp_path / "m.tiktoken")
    back = fastbpe.load_model(tmp_path / "m.tiktoken", pattern=enc._pat_str)
    assert back.mergeable_ranks() == enc._mergeable_ranks
    assert back.to_encoding().encode_ordinary(SAMPLE) == enc.encode_ordinary(SAMPLE)


def test_minbpe_format_refuses_permuted_bytes(tmp_path):
    with pytest.raises(ValueError, match="byte order"):
        fastbpe.save_model(_recovered_model("r50k_base")[1], tmp_path / "m.model")
    assert not os.listdir(tmp_path)


def _permuted_byte_encoding():
    """A small vocabulary with GPT-2-like permuted single bytes and a few merges."""
    rng = random.Random(7)
    order = list(range(256))
    rng.shuffle(order)
    ranks = {bytes([b]): i for i, b in enumerate(order)}
    for token in [b"he", b"ll", b"hell", b"hello", b" w", b"or", b" wor", b"ld", b" world"]:
        ranks[token] = len(ranks)
    return Encoding("perm", pat_str=r" ?\w+| ?[^\w\s]+|\s+", mergeable_ranks=ranks,
                    special_tokens={"<|endoftext|>": len(ranks)})


@pytest.mark.parametrize("suffix", [".json", ".tiktoken"])
def test_save_load_random_byte_permutation(suffix, tmp_path):
    enc = _permuted_byte_encoding()
    fastbpe.save_model(enc, tmp_path / f"m{suffix}")
    back = fastbpe.load_model(tmp_path / f"m{suffix}", pattern=enc._pat_str).to_encoding()
    for text in ["hello world", "hello, hello world!", "\x00\xff bytes \u00e9"]:
        assert back.encode_ordinary(text) == enc.encode_ordinary(text)


def test_trained_model_round_trips_through_every_format(tmp_path):
    enc = fastbpe.train(["hello world, hello there; the world is wide " * 20], 300,
                        special_tokens=["<|endoftext|>"])
    text = "hello wide world"
    for name in ["m.json", "m.tiktoken", "m.model"]:
        fastbpe.save_model(enc, tmp_path / name)
        back = fastbpe.load_model(tmp_path / name).to_encoding()
        assert back.encode_ordinary(text) == enc.encode_ordinary(text), name
