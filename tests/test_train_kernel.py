"""The training kernels against the pure-Python reference (tests/reference.py)."""
from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference as R
from conftest_train import as_triples, corpus_text, kernel_arrays
from fastbpe import _count, _train
from fastbpe.patterns import GPT2_PATTERN, GPT4_PATTERN

FAST = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

# small alphabets make ties, overlaps ("aaaa") and repeated pairs likely
small_text = st.text(alphabet=st.sampled_from("ab c\n" + "é"), max_size=60)
any_text = st.text(max_size=40)
piece_counts = st.dictionaries(st.binary(min_size=1, max_size=8).map(lambda b: bytes(x % 4 + 97 for x in b)),
                               st.integers(1, 5), max_size=12)


def kernel(counts, n, tie, **kw):
    trainer = _train.PieceTrainer(*kernel_arrays(counts), tie=tie)
    return as_triples(*trainer.train(n, **kw))


@FAST
@given(piece_counts, st.integers(0, 40))
def test_pair_tie_matches_reference(counts, n):
    assert kernel(counts, n, _train.TIE_PAIR) == R.train_counts(counts, n, tie="pair")


@FAST
@given(piece_counts, st.integers(0, 40))
def test_first_tie_matches_reference(counts, n):
    assert kernel(counts, n, _train.TIE_FIRST) == R.train_counts(counts, n, tie="first")


@FAST
@given(piece_counts, st.integers(0, 30), st.integers(0, 4), st.integers(2, 5))
def test_min_frequency_and_max_length(counts, n, minf, maxlen):
    got = kernel(counts, n, _train.TIE_PAIR, min_frequency=minf, max_token_length=maxlen)
    assert got == R.train_counts(counts, n, tie="pair", min_frequency=minf,
                                 max_token_length=maxlen)


@FAST
@given(st.lists(small_text | any_text, max_size=6), st.integers(0, 60))
def test_regex_texts_first_tie_equals_minbpe(texts, n):
    # over unique pieces in order of first appearance == minbpe over every chunk
    chunks = [p.encode("utf-8", "surrogatepass") for t in texts
              for p in __import__("regex").findall(GPT4_PATTERN, t)]
    counts = {}
    for c in chunks:
        counts[c] = counts.get(c, 0) + 1
    assert kernel(counts, n, _train.TIE_FIRST) == R.train_minbpe(chunks, n)


@FAST
@given(small_text | any_text, st.integers(0, 80))
def test_sequence_trainer_equals_minbpe_basic(text, n):
    data = text.encode("utf-8", "surrogatepass")
    trainer = _train.SequenceTrainer(np.frombuffer(data, dtype=np.uint8))
    assert as_triples(*trainer.train(n)) == R.train_minbpe([data], n)


def test_overlapping_pairs():
    for s in [b"aaaa", b"aaa", b"aaaaa", b"abababab", b"aaabdaaabac"]:
        trainer = _train.SequenceTrainer(np.frombuffer(s, dtype=np.uint8))
        assert as_triples(*trainer.train(10)) == R.train_minbpe([s], 10)
        for tie, name in ((_train.TIE_PAIR, "pair"), (_train.TIE_FIRST, "first")):
            assert kernel({s: 3, b"xa": 1}, 10, tie) == R.train_counts({s: 3, b"xa": 1}, 10, tie=name)


@pytest.mark.parametrize("name", ["taylorswift", "code"])
@pytest.mark.parametrize("pattern", [GPT4_PATTERN, GPT2_PATTERN])
def test_real_text_both_ties(name, pattern):
    text = corpus_text(name, 60_000)
    counts = R.count_pieces([text], pattern)
    for n in (1, 17, 120):
        for tie, rule in ((_train.TIE_PAIR, "pair"), (_train.TIE_FIRST, "first")):
            assert kernel(counts, n, tie) == R.train_counts(counts, n, tie=rule), (n, rule)


def test_real_text_basic():
    data = corpus_text("taylorswift", 20_000).encode()
    trainer = _train.SequenceTrainer(np.frombuffer(data, dtype=np.uint8))
    assert as_triples(*trainer.train(60)) == R.train_minbpe([data], 60)


def test_stops_when_nothing_left():
    assert kernel({b"ab": 1}, 10, _train.TIE_PAIR) == [(97, 98, 1)]
    assert kernel({b"a": 5}, 10, _train.TIE_PAIR) == []
    trainer = _train.SequenceTrainer(np.frombuffer(b"", dtype=np.uint8))
    assert trainer.train(5)[0].shape == (0, 2)


def test_trainer_is_single_use():
    trainer = _train.PieceTrainer(*kernel_arrays({b"ab": 1}))
    trainer.train(1)
    with pytest.raises(RuntimeError):
        trainer.train(1)


def test_bad_kernel_input():
    tokens, offsets, counts = kernel_arrays({b"ab": 1})
    with pytest.raises(ValueError):
        _train.PieceTrainer(tokens, offsets[:-1], counts)
    with pytest.raises(ValueError):
        _train.PieceTrainer(tokens + 300, offsets, counts)
    with pytest.raises(ValueError):
        _train.PieceTrainer(tokens, offsets, -counts)


def test_ctrl_c_stops_training_promptly():
    # many merges available; the first progress poll sends SIGINT -> KeyboardInterrupt.  The
    # signal goes to this (the main) thread with Python's own handler in place, so other
    # threads left by earlier tests (thread pools, Dask) cannot take it.
    text = bytes(range(256)) * 40 + b"".join(bytes([i, j]) for i in range(50) for j in range(50))
    calls = []

    def progress(done):
        calls.append(done)
        if done > 0:  # the first poll after the start
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    trainer = _train.SequenceTrainer(np.frombuffer(text, dtype=np.uint8))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            trainer.train(5000, progress=progress)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert max(calls) < 5000


def test_piece_counter_merge_by_addition():
    a, b = _count.PieceCounter(), _count.PieceCounter()
    a.add_pieces(["x", "yy", "x"])
    b.add_pieces(["yy", "zzz", "é"])
    both = _count.PieceCounter()
    both.update(a)
    both.add_exported(*b.export())
    assert both.to_dict() == {b"x": 2, b"yy": 2, b"zzz": 1, "é".encode(): 1}
    assert both.total == 6 and len(both) == 4
    with pytest.raises(ValueError):
        both.add_exported(b"ab", np.array([5]), np.array([1]))
