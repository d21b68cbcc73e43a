"""The command line: encode/decode round trip, train then load."""
import json

import pytest

import fastbpe
from fastbpe.cli import main


def test_train_then_encode_with_the_saved_model(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat. the dog sat on the log.\n" * 200, encoding="utf-8")
    out = tmp_path / "model.json"
    assert main(["train", str(corpus), "-v", "300", "-o", str(out), "--special", "<|eot|>"]) == 0
    enc = fastbpe.load_model(out).to_encoding()
    text = "the cat sat on the log"
    assert enc.decode(enc.encode(text)) == text
    # this tiny corpus runs out of pairs before 300 tokens; the special token comes right after
    assert 256 < enc.n_vocab <= 301
    assert enc.encode("<|eot|>", allowed_special="all") == [enc.n_vocab - 1]


def test_encode_decode_list(capsys):
    pytest.importorskip("fastbpe.registry")
    try:
        fastbpe.get_encoding("cl100k_base")
    except fastbpe.VocabNotFoundError as e:  # pragma: no cover - no data source at all
        pytest.skip(f"cl100k_base data not available: {e}")
    assert main(["encode", "hello world"]) == 0
    ids = json.loads(capsys.readouterr().out.splitlines()[0])
    assert ids == [15339, 1917]
    assert main(["decode", *map(str, ids)]) == 0
    assert capsys.readouterr().out == "hello world\n"
    assert main(["list"]) == 0
    assert "o200k_harmony" in capsys.readouterr().out


def test_train_bad_vocab_size_is_a_clear_error(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("abc", encoding="utf-8")
    assert main(["train", str(corpus), "-v", "10", "-o", str(tmp_path / "m.json")]) == 1
    assert capsys.readouterr().err.startswith("fastbpe: error: vocab_size=10 is too small")
