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
import weakref

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


def test_a_batch_makes_its_lists_before_it_fills_them(enc):
    """A collector pass that a batch's own allocations start finds the batch's lists empty (it
    walks no id of them): every list is made before any is filled.  They stay ordinary tracked
    lists (a cycle made through one later is still freed)."""
    texts = [TEXT[i % 500:i % 500 + 120] for i in range(2_000)]   # more lists than a young pass waits for
    want = [_reference_ids(enc, t) for t in texts]
    young_ids = []

    def watch(phase, info):
        if phase == "start" and info["generation"] == 0:
            young_ids.append(sum(len(o) for o in gc.get_objects(0) if type(o) is list and o and type(o[0]) is int))

    gc.collect()
    gc.callbacks.append(watch)
    try:
        got = enc.encode_ordinary_batch(texts, num_threads=1)
    finally:
        gc.callbacks.remove(watch)
    assert got == want
    assert young_ids and max(young_ids) == 0
    assert all(gc.is_tracked(ids) for ids in got)
    box = _Box()
    box.ids = got[7]
    box.ids.append(box)
    freed = weakref.ref(box)
    del box, got
    gc.collect()
    assert freed() is None


class _Box:
    ids = None


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


def _ranks_of(n):
    """n tokens: the 256 bytes, then pairs and triples of bytes (each a merge of a token and a byte)."""
    ranks = {bytes([i]): i for i in range(256)}
    for a in range(256):
        for b in range(256):
            ranks[bytes([a, b])] = len(ranks)
    for a in range(256):
        for b in range(256):
            for c in range(256):
                if len(ranks) >= n:
                    return dict(list(ranks.items())[:n])
                ranks[bytes([a, b, c])] = len(ranks)
    return ranks


def _table(ranks, special_bytes):
    from fastbpe._core import BPETable
    tokens = [None] * len(ranks)
    for t, r in ranks.items():
        tokens[r] = t
    return BPETable.from_ranks(tokens, special_bytes)


def test_a_sparse_far_id_keeps_no_huge_block(enc):
    """A table with an added token at a far id (3,000,000 after ~300 tokens) must not make a
    block of millions of ints that outlives it: the block (or tuple) holds about what the
    table's own tokens need, and the far id's int is made per call.  (fastbpe.Encoding keeps
    far special ids out of its table; the table itself must not rely on that.)"""
    enc.encode("x")
    before = _id_output.id_ints_made()
    far = 3_000_000
    t = _table(_toy_ranks(), {far: b"<|far|>", 1000: b"<|end|>"})
    assert t.decode_bytes([far, 1000]) == b"<|far|><|end|>"
    assert _id_output.id_ints_made() <= max(before, 1 << 18), _id_output.id_ints_made()


def test_the_block_grows_geometrically(enc):
    """A vocabulary just past the block doubles it (a process loading ever larger vocabularies
    keeps blocks totalling < 2x the last), not rounds it up by 4096 a time."""
    enc.encode("x")
    before = _id_output.id_ints_made()
    if before == 0 or 2 * before > 1 << 22:
        pytest.skip("no immortal block in this build (or it is at its cap)")
    n_tok = (before - 65536) // 2 + 300   # past the table's own-token bound (see id_ints)
    _table(_ranks_of(n_tok), {before + 10: b"<|past|>"})
    assert _id_output.id_ints_made() == 2 * before


def _check_tuple_lists(e, block_ids):
    """Lists from a table's tuple: equal to the block's, one object per id (the tuple's),
    and not the block's objects."""
    ids = e.encode(TEXT + "<|end|>", allowed_special="all")
    assert ids == block_ids and ids[-1] == 1000
    seen = {}
    for x in ids:
        assert seen.setdefault(x, x) is x   # the tuple's int each time (not made afresh)
    return ids


def test_a_table_made_with_the_block_off_keeps_a_tuple(enc):
    """The fallback's loop (src[ids[i]] + a reference per id): a table built with the block off."""
    block_ids = enc.encode(TEXT + "<|end|>", allowed_special="all")
    on = _id_output.use_id_ints(False)
    try:
        e = fastbpe.Encoding("toy2", pat_str=fastbpe.patterns.GPT4_PATTERN, mergeable_ranks=_toy_ranks(),
                             special_tokens={"<|end|>": 1000})
        ids = _check_tuple_lists(e, block_ids)
    finally:
        _id_output.use_id_ints(on)
    if on:
        assert not any(x is y for x, y in zip(ids, block_ids) if 256 < x < 1000)   # (1000: the test's constant)


def test_env_turns_the_block_off_at_the_first_check(tmp_path):
    """FASTBPE_ID_INTS=0: the first reserve's check fails (as on a build the block does not fit),
    no block is kept, and every table's lists come from its tuple."""
    import os
    import subprocess
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import fastbpe, test_id_ints as t\n"
        "from fastbpe import _id_output\n"
        "e = fastbpe.Encoding('toy', pat_str=fastbpe.patterns.GPT4_PATTERN, mergeable_ranks=t._toy_ranks(),"
        " special_tokens={'<|end|>': 1000})\n"
        "assert _id_output.id_ints_made() == 0, _id_output.id_ints_made()\n"
        "ids = t._check_tuple_lists(e, e.encode(t.TEXT + '<|end|>', allowed_special='all'))\n"
        "print(len(ids), sum(ids))\n")
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, FASTBPE_ID_INTS="0")
    run = subprocess.run([sys.executable, "-c", code, here], capture_output=True, text=True, env=env,
                         cwd=os.path.dirname(here), timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    with_block = enc_ids = fastbpe.Encoding("toy", pat_str=fastbpe.patterns.GPT4_PATTERN,
                                            mergeable_ranks=_toy_ranks(),
                                            special_tokens={"<|end|>": 1000}).encode(TEXT + "<|end|>",
                                                                                    allowed_special="all")
    assert run.stdout.split() == [str(len(enc_ids)), str(sum(with_block))]
