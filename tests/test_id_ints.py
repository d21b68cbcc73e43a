"""The ints a list of ids is made of (_id_output): on CPython one process-wide block of
immortal int objects, each a byte-for-byte copy of the int CPython makes (but for the
reference count), placed at a fixed address per id; the lists must behave as lists of
ordinary ints everywhere, and the tuple path (other builds, or the block turned off) must
give equal lists."""
from __future__ import annotations

import gc
import json
import pickle
import platform
import sys

import pytest

import fastbpe
from fastbpe import _id_output

TEXT = "Hello world! The quick brown fox, 12345 times.\n\tdef f(x): return x ** 2  # ok\n" * 20


@pytest.fixture(scope="module")
def enc():
    return fastbpe.Encoding("toy", pat_str=fastbpe.patterns.GPT4_PATTERN,
                            mergeable_ranks=_toy_ranks(), special_tokens={"<|end|>": 1000})


def _toy_ranks():
    ranks = {bytes([i]): i for i in range(256)}
    for word in (b" the", b"th", b"he", b" t", b"qu", b"ick", b" fox", b"ll", b"llo", b"He", b"Hello"):
        for k in range(2, len(word) + 1):
            ranks.setdefault(word[:k], len(ranks))
    return ranks


def _reference_ids(enc, text):
    """The same ids as ordinary ints (the tuple / fresh-int path)."""
    was = _id_output.use_id_ints(False)
    try:
        return enc.encode(text, allowed_special="all")
    finally:
        _id_output.use_id_ints(was)


def test_the_block_is_used_on_cpython(enc):
    enc.encode("x")
    if platform.python_implementation() != "CPython" or getattr(sys, "_is_gil_enabled", lambda: True)() is False:
        pytest.skip("the block is CPython's (with the GIL) only")
    assert _id_output.id_ints_made() >= enc.n_vocab


def test_ids_are_ordinary_ints(enc):
    ids = enc.encode(TEXT + "<|end|>", allowed_special="all")
    ref = _reference_ids(enc, TEXT + "<|end|>")
    assert ids == ref and ids[-1] == 1000
    for x, y in zip(ids, ref):
        assert type(x) is int and x == y and hash(x) == hash(y) and str(x) == str(y)
        assert x + 1 == y + 1 and -x == -y and x.bit_length() == y.bit_length() and bool(x) == bool(y)
        assert x.to_bytes(4, "little") == y.to_bytes(4, "little") and int(str(x)) == x
    assert json.loads(json.dumps(ids)) == ref
    assert pickle.loads(pickle.dumps(ids)) == ref
    assert sorted(set(ids)) == sorted(set(ref))
    assert {x: 1 for x in ids}.keys() == {y: 1 for y in ref}.keys()


def test_zero_is_a_normalized_zero():
    ranks = {bytes([i]): i for i in range(256)}
    e = fastbpe.Encoding("bytes", pat_str=fastbpe.patterns.GPT4_PATTERN, mergeable_ranks=ranks, special_tokens={})
    ids = e.encode("\x00\x01 ")
    assert ids == [0, 1, 32] and ids[0] == 0 and not ids[0] and ids[0] + 0 == 0 and repr(ids[0]) == "0"
    assert hash(ids[0]) == 0 and ids[0].bit_length() == 0 and sys.getsizeof(ids[0]) == sys.getsizeof(0)


def test_one_id_one_object_across_calls(enc):
    if _id_output.id_ints_made() == 0:
        pytest.skip("no immortal block in this build")
    a = enc.encode(" the the")
    b = enc.encode(" the")
    assert len(a) == 2 and a[0] is a[1] is b[0]


def test_lists_freed_many_times_leave_the_ints_valid(enc):
    """A list of ids takes no reference (immortal ints): freeing millions of items must not
    bring an int near zero references or change it."""
    ids = enc.encode(TEXT)
    keep = list(ids)
    for _ in range(300):
        x = enc.encode(TEXT)
        del x
    gc.collect()
    assert enc.encode(TEXT) == keep
    assert all(sys.getrefcount(v) > 1_000 for v in keep[:50])
    assert [int(v) for v in keep] == _reference_ids(enc, TEXT)


def test_batches_and_numpy(enc):
    np = pytest.importorskip("numpy")
    texts = [TEXT[i:i + 97] for i in range(0, 800, 97)]
    got = enc.encode_ordinary_batch(texts, num_threads=2)
    assert got == [_reference_ids(enc, t) for t in texts]
    assert [list(np.array(g)) for g in got] == got


def test_the_tuple_path_gives_the_same_lists(enc):
    """With the block off, a table made while it was on (no tuple) makes every int afresh."""
    on = _id_output.use_id_ints(False)
    try:
        off = [enc.encode(TEXT[:i]) for i in range(0, 400, 37)]
    finally:
        _id_output.use_id_ints(on)
    assert off == [enc.encode(TEXT[:i]) for i in range(0, 400, 37)]


def test_piece_ends_are_a_uint32_array(enc):
    """encode_texts(..., with_pieces=True) gives each text's piece ends as an array('I') made
    in C (_id_output.idbuf_to_array): the ends of the pattern's pieces in UTF-8 bytes."""
    from array import array

    import regex

    texts = [TEXT[:300], "", "é€ x 12", "a"]
    got = enc.kernel.encode_texts(texts, enc.splitter.kind, True)
    for text, (ids, ends) in zip(texts, got):
        assert type(ends) is array and ends.typecode == "I"
        want, at = [], 0
        for piece in regex.findall(fastbpe.patterns.GPT4_PATTERN, text):
            at += len(piece.encode())
            want.append(at)
        assert list(ends) == want and ids == enc.encode_ordinary(text)
