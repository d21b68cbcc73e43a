"""`_merge_ids.merge_ids` (merging from given initial ids, with BPE-dropout) against pure-Python
twins: HF's merge loop with its dropout rule, fed the same random numbers."""
from __future__ import annotations

import heapq
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fastbpe._core import BPETable
from fastbpe._merge_ids import merge_ids
from reference_encode import bpe_merges

MASK = (1 << 64) - 1


def splitmix64(state: int) -> tuple[int, int]:
    """The kernel's generator: (new state, output)."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def hf_merge_with_dropout(ids, merges, dropout, seed):
    """HF's Word::merge_all: a heap of (rank, position); each pop is skipped with probability
    dropout and the skipped ones go back after the next merge; stale entries are dropped."""
    symbols = list(ids)
    nxt = list(range(1, len(ids) + 1))
    prv = list(range(-1, len(ids) - 1))
    alive = [True] * len(ids)
    heap = [(merges[(a, b)][0], i) for i, (a, b) in enumerate(zip(ids, ids[1:])) if (a, b) in merges]
    heapq.heapify(heap)
    cut = int(dropout * 2 ** 53) if dropout > 0 else 0
    state, skipped = seed, []
    while heap:
        top = heapq.heappop(heap)
        if cut:
            state, r = splitmix64(state)
            if (r >> 11) < cut:
                skipped.append(top)
                continue
        for s in skipped:
            heapq.heappush(heap, s)
        skipped = []
        rank, pos = top
        if not alive[pos] or nxt[pos] >= len(ids):
            continue
        right = nxt[pos]
        m = merges.get((symbols[pos], symbols[right]))
        if m is None or m[0] != rank:
            continue
        symbols[pos] = m[1]
        alive[right] = False
        nxt[pos] = nxt[right]
        if nxt[pos] < len(ids):
            prv[nxt[pos]] = pos
            m = merges.get((symbols[pos], symbols[nxt[pos]]))
            if m is not None:
                heapq.heappush(heap, (m[0], pos))
        if prv[pos] >= 0:
            m = merges.get((symbols[prv[pos]], symbols[pos]))
            if m is not None:
                heapq.heappush(heap, (m[0], prv[pos]))
    return [s for s, a in zip(symbols, alive) if a]


def toy_model(seed: int, n_merges: int = 40, n_chars: int = 6):
    """A char-level vocabulary (ids 0..n_chars-1 are characters) grown by random merges, with
    its (left, right, new) rows and the merges dict of the reference."""
    rng = random.Random(seed)
    tokens = [chr(ord("a") + i).encode() for i in range(n_chars)]
    index = {t: i for i, t in enumerate(tokens)}
    rows, merges = [], {}
    while len(rows) < n_merges:
        a, b = rng.randrange(len(tokens)), rng.randrange(len(tokens))
        t = tokens[a] + tokens[b]
        if (a, b) in merges or len(t) > 10:
            continue
        if t not in index:
            index[t] = len(tokens)
            tokens.append(t)
        merges[(a, b)] = (len(rows), index[t])
        rows.append((a, b, index[t]))
    table = BPETable.from_merges(np.array(rows), tokens, None, require_all_bytes=False)
    return table, merges


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 30), word=st.lists(st.integers(0, 5), max_size=80))
def test_merge_ids_is_the_merge_list_loop(seed, word):
    table, merges = toy_model(seed)
    ids, starts = merge_ids(table, word)
    assert ids == bpe_merges(word, merges)
    # starts: the first initial part of each token; the tokens' bytes tile the word's
    assert starts == sorted(starts) and (not word or starts[0] == 0)
    spans = list(zip(starts, starts[1:] + [len(word)]))
    assert [b"".join(table.token_bytes(w) for w in word[s:e]) for s, e in spans] == [table.token_bytes(i) for i in ids]


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 30), word=st.lists(st.integers(0, 5), max_size=60),
       dropout=st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]), rng_seed=st.integers(0, 2 ** 64 - 1))
def test_dropout_follows_hf_rule(seed, word, dropout, rng_seed):
    table, merges = toy_model(seed)
    ids, _ = merge_ids(table, word, dropout, rng_seed)
    assert ids == hf_merge_with_dropout(word, merges, dropout, rng_seed)
    if dropout == 1.0:
        assert ids == word
    assert merge_ids(table, word, dropout, rng_seed)[0] == ids  # same seed, same result


def test_byte_level_table_merges_like_encode_bytes():
    rng = random.Random(0)
    tokens = [bytes([b]) for b in range(256)] + [b"ab", b"abc", b"bc"]
    rows = np.array([(97, 98, 256), (256, 99, 257), (98, 99, 258)])
    full = BPETable.from_merges(rows, tokens)
    for _ in range(50):
        data = bytes(rng.choice(b"abcx") for _ in range(rng.randrange(1, 40)))
        assert merge_ids(full, list(data))[0] == full.encode_bytes(data)


def test_merge_ids_rejects_bad_input():
    table, _ = toy_model(1)
    with pytest.raises(ValueError, match="dropout"):
        merge_ids(table, [0, 1], 1.5)
    with pytest.raises(ValueError, match="outside"):
        merge_ids(table, [0, 10 ** 6])
    with pytest.raises(ValueError, match="outside"):
        merge_ids(table, [-1])
    assert merge_ids(table, []) == ([], [])


def test_from_merges_still_requires_all_bytes_by_default():
    with pytest.raises(ValueError, match="single-byte"):
        BPETable.from_merges(np.zeros((0, 3), dtype=np.int64), [b"a", b"b"])


def test_a_table_without_all_bytes_only_merges_ids():
    table, _ = toy_model(2)
    for call in (lambda: table.encode_bytes(b"ab"), lambda: table.encode_text("ab", 0),
                 lambda: table.encode_texts(["ab"], 0), lambda: table.encode_pieces(["ab"])):
        with pytest.raises(ValueError, match="merge_ids"):
            call()


def test_merge_ids_agrees_with_the_byte_path_heap_on_long_pieces():
    """The byte path's loop (sorted runs + pile, `_merge.merge_heap`) and merge_ids' plain heap
    loop are separate code: on long pieces of a real vocabulary they must agree."""
    import fastbpe

    table = fastbpe.get_encoding("cl100k_base")._table
    byte_id = [table.lookup_bytes(bytes([b])) for b in range(256)]
    rng = random.Random(1)
    for alphabet in [b"a", b"ab", b"ab ", b"0123456789", b"the quick brown fox"]:
        for n in [2, 17, 300, 4000]:
            data = bytes(rng.choice(alphabet) for _ in range(n))
            heap_ids = table.encode_bytes(data, path="heap")
            assert merge_ids(table, [byte_id[b] for b in data])[0] == heap_ids, (alphabet, n)
