"""Multiprocessing needs pickling: UBPE, UBPEClassic, PieceCounter and fastbpe.Tokenizer
pickle and deep-copy by value (compactly: the model's own data, not its kernel tables) and
behave as the original afterwards."""
from __future__ import annotations

import copy
import os
import pickle

import numpy as np
import pytest

from conftest import encoding_pair

import fastbpe
from fastbpe import trainer
from fastbpe.ubpe import UBPE, UBPEClassic

DOCS = ["the cat sat on the mat", "the dog sat on the log", "cats and dogs and logs"] * 5


def copies(obj):
    return [pickle.loads(pickle.dumps(obj)), copy.deepcopy(obj), copy.copy(obj)]


@pytest.mark.parametrize("cls", [UBPE, UBPEClassic])
def test_ubpe_models_pickle_by_value(cls):
    model = cls(alphabet=sorted(set("".join(DOCS))), n_tokens=40)
    unfitted = pickle.loads(pickle.dumps(model))
    with pytest.raises(ValueError, match="not fitted"):
        unfitted.encode("the cat")
    model.fit(DOCS, quiet=True)
    unfitted.fit(DOCS, quiet=True)
    assert len(pickle.dumps(model)) < 2 * len(model.dumps())
    for other in copies(model) + [unfitted]:
        assert type(other) is cls
        assert other.dumps() == model.dumps()
        for doc in DOCS[:3] + ["dogs sat on cats"]:
            assert other.encode(doc) == model.encode(doc)
            assert other.decode(model.encode(doc)[0][0]) == doc


def test_piece_counter_pickles_by_value():
    counter = trainer.count_pieces(DOCS, show_progress=False)
    assert len(pickle.dumps(counter)) < 1000
    for other in copies(counter):
        assert len(other) == len(counter) and other.total == counter.total
        got, want = other.export(), counter.export()
        assert got[0] == want[0] and got[1].tolist() == want[1].tolist()
        assert got[2].tolist() == want[2].tolist()
        # an independent counter: adding to the copy leaves the original as it was
        other.add_exported(*want)
        assert other.total == 2 * counter.total
    assert (trainer.train_from_counts(copy.deepcopy(counter), 270)._mergeable_ranks
            == trainer.train_from_counts(counter, 270)._mergeable_ranks)


def test_tokenizer_pickles_by_value(tmp_path):
    """fastbpe.Tokenizer pickles as its tokenizer.json (as HF's does), with the tokens,
    truncation and padding set since it was loaded."""
    enc = fastbpe.train([" ".join(DOCS)], 280, special_tokens=["<|endoftext|>"])
    fastbpe.save_model(enc, tmp_path / "tokenizer.json")
    tok = fastbpe.Tokenizer.from_file(tmp_path / "tokenizer.json")
    tok.add_tokens(["sat on"])
    tok.enable_truncation(6)
    text = "the cat sat on the mat<|endoftext|> and dogs"
    assert len(pickle.dumps(tok)) < 2 * len(tok.to_str()) + 200
    for other in copies(tok)[:2]:
        assert type(other) is fastbpe.Tokenizer
        got, want = other.encode(text), tok.encode(text)
        assert got.ids == want.ids and got.offsets == want.offsets
        assert other.truncation == tok.truncation and other.to_str() == tok.to_str()
        assert other.decode(want.ids) == tok.decode(want.ids)


# -- Encodings: trained ones keep bpe_model, loaded ones pickle by path, registered ones by name --

def test_pickled_trained_encoding_keeps_bpe_model():
    enc = fastbpe.train(["hello world, hello there " * 10], 270, special_tokens=["<|eot|>"])
    back = pickle.loads(pickle.dumps(enc))
    assert isinstance(back.bpe_model, trainer.BPEModel)
    assert np.array_equal(back.bpe_model.merges, enc.bpe_model.merges)
    assert back.encode("hello there<|eot|>", allowed_special="all") == \
        enc.encode("hello there<|eot|>", allowed_special="all")
    assert copy.deepcopy(enc).bpe_model.n_merges == enc.bpe_model.n_merges


def test_encoding_loaded_from_file_pickles_by_path(tmp_path):
    enc = fastbpe.train(["hello world, hello there " * 10], 300)
    path = tmp_path / "m.json"
    fastbpe.save_model(enc, path)
    loaded = fastbpe.load_model(path).to_encoding("mine")
    data = pickle.dumps(loaded)
    assert len(data) < 400 + len(str(path))
    back = pickle.loads(data)
    assert back.name == "mine" and back.encode("hello there") == enc.encode("hello there")
    os.utime(path, ns=(1, 1))  # the file changed: unpickling says so instead of loading it
    with pytest.raises(ValueError, match="changed"):
        pickle.loads(data)
    assert len(pickle.dumps(loaded)) > len(data)  # and pickling now carries the merges


def test_registry_encoding_pickles_by_name():
    enc, _ = encoding_pair("cl100k_base")
    assert len(pickle.dumps(enc)) < 200
    assert pickle.loads(pickle.dumps(enc)) is not None
