"""fastbpe.train (fastbpe/trainer.py) & co.: rustbpe parity, streaming, files, counts, formats, bad input."""
from __future__ import annotations

import os
import stat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastbpe
import reference as R
from conftest_train import corpus_text
from fastbpe.patterns import GPT2_PATTERN, GPT4_PATTERN

from fastbpe import counting
from fastbpe import trainer as T


def documents(text: str) -> list:
    return [d for d in text.split("\n\n") if d]


def rustbpe_ranks(docs, vocab_size, pattern=GPT4_PATTERN):
    rustbpe = pytest.importorskip("rustbpe", reason="rustbpe is not installed")
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter(docs), vocab_size, pattern=pattern)
    return {bytes(k): v for k, v in dict(tok.get_mergeable_ranks()).items()}


# -- parity with rustbpe (ties by ascending pair) -------------------------------------------

@pytest.mark.parametrize("name,vocab", [("taylorswift", 300), ("taylorswift", 2000),
                                        ("tinyshakespeare", 5000), ("code", 3000)])
def test_vocab_equals_rustbpe(name, vocab):
    docs = documents(corpus_text(name, 400_000))
    expected = rustbpe_ranks(docs, vocab)
    model = T.train_model(T.count_pieces(docs), vocab)
    assert model.mergeable_ranks() == expected


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab c.\n1é"), max_size=50), max_size=8),
       st.integers(256, 320))
def test_vocab_equals_rustbpe_random(docs, vocab):
    docs = [d for d in docs if d]
    expected = rustbpe_ranks(docs, vocab)
    if not docs or not any(len(p.encode()) > 1 for d in docs
                           for p in __import__("regex").findall(GPT4_PATTERN, d)):
        return  # nothing to merge; we raise on an empty corpus, rustbpe returns bytes
    model = T.train_model(T.count_pieces(docs), vocab)
    assert model.mergeable_ranks() == expected


def test_train_matches_reference_with_options():
    text = corpus_text("taylorswift", 50_000)
    counts = R.count_pieces([text], GPT2_PATTERN)
    model = T.train_model(T.count_pieces([text], GPT2_PATTERN), 256 + 80, min_frequency=3,
                          max_token_length=4)
    ref = R.train_counts(counts, 80, tie="pair", min_frequency=3, max_token_length=4)
    assert [tuple(m) for m in model.merges.tolist()] == [m[:2] for m in ref]


# -- the public API ------------------------------------------------------------------------

def test_train_returns_encoding_with_specials():
    text = corpus_text("taylorswift")
    enc = fastbpe.train([text], 1000, special_tokens=["<|endoftext|>", "<|pad|>"])
    assert enc.n_vocab == 1000
    assert enc._special_tokens == {"<|endoftext|>": 998, "<|pad|>": 999}
    sample = text[:3000] + "<|endoftext|>"
    ids = enc.encode(sample, allowed_special="all")
    assert ids[-1] == 998 and enc.decode(ids) == sample
    assert enc.decode(enc.encode_ordinary(text)) == text


def test_generator_input_and_bounded_counter():
    line = "the quick brown fox jumps over the lazy dog 12345\n"
    counter = T.count_pieces((line for _ in range(20_000)))
    assert len(counter) == len(set(__import__("regex").findall(GPT4_PATTERN, line)))
    assert counter.total == 20_000 * len(__import__("regex").findall(GPT4_PATTERN, line))


def test_threads_give_the_same_counts():
    text = corpus_text("tinyshakespeare")
    docs = documents(text)
    one = T.count_pieces(docs, num_threads=1).to_dict()
    two = T.count_pieces(docs, num_threads=2).to_dict()
    assert one == two == R.count_pieces(docs, GPT4_PATTERN)


def test_train_files_equals_train(tmp_path, monkeypatch):
    text = corpus_text("tinyshakespeare", 300_000)
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(text[:150_000], encoding="utf-8")
    b.write_text(text[150_000:], encoding="utf-8")
    monkeypatch.setattr(counting, "_FILE_BLOCK_CHARS", 10_000)  # many blocks, cut at safe points
    from_files = T.count_files([a, b]).to_dict()
    assert from_files == R.count_pieces([text[:150_000], text[150_000:]], GPT4_PATTERN)
    enc = fastbpe.train_files([a, b], 600)
    enc2 = fastbpe.train([text[:150_000], text[150_000:]], 600)
    assert enc._mergeable_ranks == enc2._mergeable_ranks


def test_train_from_counts_merges_shards():
    text = corpus_text("taylorswift")
    docs = documents(text)
    shards = [T.count_pieces(docs[i::3]).to_dict() for i in range(3)]
    total = {}
    for shard in shards:
        for piece, c in shard.items():
            total[piece] = total.get(piece, 0) + c
    enc = fastbpe.train_from_counts(total, 700)
    assert enc._mergeable_ranks == fastbpe.train(docs, 700)._mergeable_ranks
    # str keys work too
    enc_str = fastbpe.train_from_counts({k.decode(): v for k, v in total.items()}, 700)
    assert enc_str._mergeable_ranks == enc._mergeable_ranks


# -- save / load ---------------------------------------------------------------------------

@pytest.mark.parametrize("fmt,name", [("native", "m.json"), ("tiktoken", "m.tiktoken"),
                                      ("minbpe", "m.model")])
def test_round_trip_every_format(tmp_path, fmt, name):
    text = corpus_text("taylorswift")
    enc = fastbpe.train([text], 800, special_tokens=["<|endoftext|>"])
    path = tmp_path / name
    T.save_model(enc, path)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    model = T.load_model(path)
    assert model.mergeable_ranks() == enc._mergeable_ranks
    if fmt != "tiktoken":  # .tiktoken keeps ranks only
        assert model.special_tokens == enc._special_tokens
        assert model.pattern == GPT4_PATTERN
        assert (model.merges == enc.bpe_model.merges).all()
    enc2 = model.to_encoding()
    assert enc2.decode(enc2.encode(text)) == text
    assert enc2.encode(text) == enc.encode(text)


def test_minbpe_file_is_byte_identical(tmp_path):
    text = corpus_text("taylorswift", 30_000)
    model = T.train_model(T.count_pieces([text]), 300, special_tokens=["<|endoftext|>"])
    T.save_model(model, tmp_path / "ours.model")
    merges = {tuple(m): 256 + i for i, m in enumerate(model.merges.tolist())}
    vocab = dict(enumerate(model.token_bytes()))
    vocab[300 - 1] = b"<|endoftext|>"
    R.minbpe_save(str(tmp_path / "theirs"), GPT4_PATTERN, model.special_tokens, merges, vocab)
    for ext in (".model", ".vocab"):
        assert (tmp_path / ("ours" + ext)).read_bytes() == (tmp_path / ("theirs" + ext)).read_bytes()


def test_unwritable_path(tmp_path):
    enc = fastbpe.train(["hello hello world"], 260)
    with pytest.raises(OSError):
        T.save_model(enc, tmp_path / "missing-dir" / "m.json")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("running as a user that can write anywhere (root)")
        with pytest.raises(OSError):
            T.save_model(enc, ro / "m.tiktoken")
    finally:
        ro.chmod(stat.S_IRWXU)


def test_bad_model_files(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{}")
    with pytest.raises(ValueError):
        T.load_model(p)
    p = tmp_path / "x.model"
    p.write_text("not minbpe\n")
    with pytest.raises(ValueError):
        T.load_model(p)


# -- bad input -----------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,exc", [
    (dict(vocab_size=255), ValueError),
    (dict(vocab_size=257, special_tokens=["<a>", "<b>"]), ValueError),
    (dict(vocab_size="300"), TypeError),
    (dict(vocab_size=300, special_tokens=[1]), TypeError),
    (dict(vocab_size=300, special_tokens="<a>"), TypeError),
    (dict(vocab_size=300, special_tokens=["<a>", "<a>"]), ValueError),
    (dict(vocab_size=300, min_frequency=-1), ValueError),
    (dict(vocab_size=300, max_token_length=0), ValueError),
    (dict(vocab_size=300, pattern="(unclosed"), ValueError),
    (dict(vocab_size=300, num_threads=0), ValueError),
])
def test_bad_arguments(kwargs, exc):
    with pytest.raises(exc):
        fastbpe.train(["some text here"], **kwargs)


def test_bad_texts():
    with pytest.raises(TypeError):
        fastbpe.train(["ok", b"bytes"], 300)
    with pytest.raises(TypeError):
        fastbpe.train("a single string", 300)
    with pytest.raises(ValueError, match="empty"):
        fastbpe.train([], 300)
    with pytest.raises(ValueError, match="empty"):
        fastbpe.train(["", ""], 300)
    with pytest.raises(TypeError):
        fastbpe.train_from_counts({"ab": "3"}, 300)
    with pytest.raises(ValueError):
        fastbpe.train_from_counts({"ab": -1}, 300)
    with pytest.raises(FileNotFoundError):
        fastbpe.train_files(["/nonexistent/file.txt"], 300)


@pytest.mark.parametrize("pattern", [GPT4_PATTERN, GPT4_PATTERN + "|x"])  # scanner, regex
def test_lone_surrogates_are_replaced(pattern):
    text = "abc \ud800 abc abc \udfff"
    clean = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    got = T.count_pieces([text], pattern).to_dict()
    assert got == R.count_pieces([clean], pattern)
    assert fastbpe.train([text], 260).n_vocab >= 256


def test_progress_bar_only_when_asked():
    import io

    from fastbpe.progress import Progress, wants_progress

    assert wants_progress(True) and not wants_progress(False)
    out = io.StringIO()
    with Progress("merges", total=10, stream=out) as bar:
        bar.update(10)
    assert "merges" in out.getvalue() and "10/10" in out.getvalue()
    out = io.StringIO()
    with Progress("merges", total=10, stream=out, enabled=False) as bar:
        bar.update(5)
    assert out.getvalue() == ""


def test_show_progress_draws_on_stderr(capsys):
    fastbpe.train(["hello hello world " * 50], 270, show_progress=True)
    err = capsys.readouterr().err
    assert "counting" in err and "merges" in err


def test_regex_path_in_worker_processes(monkeypatch):
    # a pattern the C scanner does not know; small batches so several go to workers
    text = corpus_text("tinyshakespeare", 400_000)
    docs = documents(text)
    monkeypatch.setattr(counting, "_BATCH_CHARS", 50_000)
    pattern = GPT4_PATTERN + "|x"
    one = T.count_pieces(docs, pattern, num_threads=1)
    two = T.count_pieces(docs, pattern, num_threads=2)
    assert list(two.items()) == list(one.items())  # same counts, same first-appearance order
    assert one.to_dict() == R.count_pieces(docs, pattern)
