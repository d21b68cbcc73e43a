"""The encode kernel against the reference, on small made-up vocabularies (no data files)."""
import random
import sys

import pytest
from hypothesis import given, settings, strategies as st

from fastbpe._core import BPETable
from reference_encode import bpe_merges, bpe_ranks, encode_piece_tiktoken


def toy_ranks(seed: int, n_merges: int = 60, alphabet: bytes = b"abc ") -> dict[bytes, int]:
    """A byte-level vocabulary grown by random merges of existing tokens (like real BPE)."""
    rng = random.Random(seed)
    ranks = {bytes([b]): b for b in range(256)}
    pool = [bytes([c]) for c in alphabet]
    while len(ranks) < 256 + n_merges:
        t = rng.choice(pool) + rng.choice(pool)
        if t not in ranks and len(t) <= 12:
            ranks[t] = len(ranks)
            pool.append(t)
    return ranks


def table_for(ranks):
    tokens = [None] * (max(ranks.values()) + 1)
    for t, r in ranks.items():
        tokens[r] = t
    return BPETable.from_ranks(tokens)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 50), text=st.binary(max_size=200).map(lambda b: bytes(c % 4 for c in b)))
def test_both_merge_paths_equal_reference(seed, text):
    ranks = toy_ranks(seed, alphabet=bytes(range(4)))
    table = table_for(ranks)
    expected = bpe_ranks(text, ranks) if text else []
    assert table.encode_bytes(text, path="scan") == expected
    assert table.encode_bytes(text, path="heap") == expected
    assert table.encode_bytes(text) == (encode_piece_tiktoken(text, ranks) if text else [])


_CHARS = ["\u00e9", "\u0436", "\u4e2d", "\u6587", "\u00e8", " ", "a"]   # 2- and 3-byte characters


@settings(max_examples=1500, deadline=None)
@given(seed=st.integers(0, 1000), n_merges=st.sampled_from([20, 60, 200]),
       picks=st.lists(st.integers(0, len(_CHARS) - 1), max_size=60), cut=st.integers(0, 3))
def test_merges_from_characters_equal_reference(seed, n_merges, picks, cut):
    """A merge may start from a 2- or 3-byte character's token instead of its bytes where no
    neighbour can merge with the character first (_vocab.build_char_tokens).  Toy
    vocabularies grown at random from these characters' bytes have merges across character
    edges at every rank; both merge paths must still equal the byte-by-byte reference,
    also on text cut inside a character."""
    rng = random.Random(seed)
    ranks = {bytes([b]): b for b in range(256)}
    pool = [bytes([c]) for c in sorted(set("".join(_CHARS).encode()))]
    steps = [c.encode()[:k] for c in _CHARS for k in (2, 3) if len(c.encode()) >= k]
    steps += [c.encode()[1:] for c in _CHARS if len(c.encode()) == 3]
    while len(ranks) < 256 + n_merges:
        # characters' own merges and merges across their edges, interleaved at random ranks
        t = rng.choice(steps) if rng.random() < 0.3 else rng.choice(pool) + rng.choice(pool)
        if t not in ranks and len(t) <= 9:
            ranks[t] = len(ranks)
            pool.append(t)
    table = table_for(ranks)
    text = "".join(_CHARS[k] for k in picks).encode()
    text = text[cut:] if cut < len(text) else text
    expected = bpe_ranks(text, ranks) if text else []
    assert table.encode_bytes(text, path="scan") == expected
    assert table.encode_bytes(text, path="heap") == expected


def test_scan_and_heap_merge_equal_ranks_leftmost_first():
    """Ranks given to from_merges may repeat (SentencePiece scores): equal ranks merge
    leftmost first on both paths, whatever the merged ids."""
    vocab = [bytes([b]) for b in range(256)] + [b"ab", b"bc", b"abc"]
    merges = [(97, 98, 256), (98, 99, 257), (256, 99, 258)]
    table = BPETable.from_merges(merges, vocab, ranks=[5, 5, 1])
    for path in ("scan", "heap"):
        assert table.encode_bytes(b"abc", path=path) == [258], path   # "ab" first (leftmost)
        assert table.encode_bytes(b"bcab", path=path) == [257, 256], path


@pytest.mark.parametrize("n_merges", [1, 7, 5000, 40_000])
def test_every_pair_is_found_and_absent_pairs_are_not(n_merges):
    """The pair table's filter (a Bloom filter in front of the slots) never hides a pair,
    and pairs that do not merge are absent, at sizes from one word of filter to many."""
    from fastbpe._testing import pair_of
    rng = random.Random(n_merges)
    tokens = [bytes([b]) for b in range(256)]
    merges, ranks, pairs = [], [], set()
    while len(merges) < n_merges:
        left, right = rng.randrange(len(tokens)), rng.randrange(len(tokens))
        if (left, right) not in pairs:
            pairs.add((left, right))
            merges.append((left, right, len(tokens)))
            ranks.append(rng.randrange(1 << 20))
            tokens.append(b"<%d>" % len(tokens))   # distinct bytes; only the ids matter here
    table = BPETable.from_merges(merges, tokens, ranks=ranks)
    for (left, right, new_id), rank in zip(merges, ranks):
        assert pair_of(table, left, right) == (rank, new_id)
    absent = 0
    for _ in range(20_000):
        left, right = rng.randrange(len(tokens)), rng.randrange(len(tokens))
        if (left, right) not in pairs:
            assert pair_of(table, left, right) is None
            absent += 1
    assert absent > 10_000


def test_long_runs_are_not_quadratic_and_exact():
    ranks = toy_ranks(1)
    table = table_for(ranks)
    for text in (b"a" * 200_000, b"ab " * 70_000, b"abc" * 70_000):
        assert table.decode_bytes(table.encode_bytes(text)) == text
    small = b"abca abcc ba" * 20
    assert table.encode_bytes(small, path="heap") == bpe_ranks(small, ranks)


def test_sort_pile_sorts_piles_made_out_of_position_order():
    """Issue 29 item 13: merge_heap sorts a pile of candidates by rank alone when the positions
    of each rank were made in ascending order, and falls back to a full sort when not.  No
    piece found by random search (tiktoken and merge-list tables, long periodic pieces) takes
    the fallback, but a merge's two new pairs of one rank (tiktoken: two splits of a token
    share its rank) are made right one first; the hook reaches both paths."""
    from fastbpe._testing import sort_pile_keys

    def stored(made):   # a pile keeps the last made first
        return list(reversed(made))

    key = lambda rank, pos: rank << 32 | pos   # noqa: E731
    ascending = [key(5, p) for p in range(0, 200, 2)] + [key(3, p) for p in range(1, 200, 2)]
    assert sort_pile_keys(stored(ascending)) == sorted(ascending)
    # one merge made (5, 1001) and then (5, 999): its right pair, then its left pair
    out_of_order = ascending[:50] + [key(5, 1001), key(5, 999)] + ascending[50:]
    assert sort_pile_keys(stored(out_of_order)) == sorted(out_of_order)
    rng = random.Random(13)
    for _ in range(50):
        keys = [key(rng.randrange(4), rng.randrange(1 << 20)) for _ in range(rng.randrange(64, 400))]
        assert sort_pile_keys(keys) == sorted(keys)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 20), data=st.lists(st.integers(0, 3), max_size=120))
def test_merge_list_semantics(seed, data):
    rng = random.Random(seed)
    merges = []
    vocab = [bytes([b]) for b in range(256)]
    for i in range(40):
        left, right = rng.randrange(len(vocab)) % 4 if i < 5 else rng.randrange(len(vocab)), rng.choice([0, 1, 2, 3, len(vocab) - 1])
        merges.append((left, right, len(vocab)))
        vocab.append(vocab[left] + vocab[right])
    table = BPETable.from_merges(merges, vocab)
    table_map = {}
    for rank, (l, r, new) in enumerate(merges):
        table_map.setdefault((l, r), (rank, new))
    text = bytes(data)
    expected = bpe_merges(list(text), table_map) if text else []
    assert table.encode_bytes(text, path="scan") == expected
    assert table.encode_bytes(text, path="heap") == expected


def test_bad_vocabularies_raise():
    ranks = {bytes([b]): b for b in range(256)}
    tokens = [bytes([b]) for b in range(256)]
    with pytest.raises(ValueError, match="single-byte"):
        BPETable.from_ranks(tokens[:200])
    with pytest.raises(ValueError, match="same bytes"):
        BPETable.from_ranks(tokens + [b"a"])
    with pytest.raises(ValueError, match="outside"):
        BPETable.from_merges([(0, 999, 256)], tokens + [b"xx"])
    table = BPETable.from_ranks(tokens, {300: b"<|x|>"})
    assert table.decode_bytes([97, 300]) == b"a<|x|>"
    with pytest.raises(KeyError):
        table.decode_bytes([299])
    with pytest.raises(OverflowError):
        table.decode_bytes([-1])
    with pytest.raises(TypeError):
        table.decode_bytes(["a"])
    assert ranks  # ranks unused otherwise


# -- str -> UTF-8 without the GIL (_utf8.pxd, _ascii_runs.h) ------------------------------

# one non-ASCII character of each storage width: Latin-1, UCS-2 (two and three UTF-8 bytes),
# UCS-4 (astral)
_WIDE = ["é", "\xa0", "ü", "—", "語", "\uffff", "😀", "\U0010ffff"]


@pytest.mark.parametrize("wide", _WIDE)
def test_utf8_of_ascii_runs_around_blocks(wide):
    """ASCII runs of every length around the 4-, 8- and 16-unit blocks, with the non-ASCII
    character before, between and after them: the converter's output is str.encode's."""
    from fastbpe._testing import utf8_of

    for run in range(0, 40):
        body = "".join(chr(0x20 + (i * 7) % 95) for i in range(run))
        for text in (body + wide, wide + body, body + wide + body, wide + body + wide + wide,
                     body + "\x7f" + wide + body[: run // 2]):
            assert utf8_of(text) == text.encode("utf-8"), (run, text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(st.characters(max_codepoint=0x7F), max_size=40),
                          st.sampled_from(_WIDE)), max_size=30))
def test_utf8_of_matches_str_encode(parts):
    from fastbpe._testing import utf8_of

    text = "".join(parts)
    assert utf8_of(text) == text.encode("utf-8")


@pytest.mark.parametrize("at", [0, 3, 15, 16, 17, 40])
@pytest.mark.parametrize("filler", ["a", "ü", "😀"])
def test_utf8_of_lone_surrogate_raises_like_str_encode(at, filler):
    from fastbpe._testing import utf8_of

    text = filler * at + "\ud800" + "b" * 20
    with pytest.raises(UnicodeEncodeError) as ours:
        utf8_of(text)
    with pytest.raises(UnicodeEncodeError) as theirs:
        text.encode("utf-8")
    assert (ours.value.start, ours.value.end) == (theirs.value.start, theirs.value.end)


# the edges of each UTF-8 length and of the surrogates, in each storage width (the second
# character only widens the str), between lone ASCII units and runs of them
_EDGES = ["\x80", "\xff", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff", "\U00010000"]


@pytest.mark.parametrize("widen", ["", "\u0100", "\U0001f600"])
@pytest.mark.parametrize("edge", _EDGES)
def test_utf8_of_edges_between_lone_ascii_units(edge, widen):
    from fastbpe._testing import utf8_of

    for text in (edge + widen, f"{edge} {edge}x{widen}y z", f"a{edge}{edge} b{widen}  " * 5 + "end",
                 f"{widen}{edge}" + " w" * 20 + edge):
        assert utf8_of(text) == text.encode("utf-8"), ascii(text)
    if widen:   # a lone surrogate after a lone ASCII unit in a non-ASCII run
        text = f"{widen}{edge} \udfff" + "b" * 5
        with pytest.raises(UnicodeEncodeError) as ours:
            utf8_of(text)
        assert ours.value.start == text.index("\udfff")


def _make_python_keep_utf8(text: str) -> None:
    """What a binding's PyUnicode_AsUTF8AndSize does: CPython makes the str's UTF-8 and keeps it."""
    import ctypes

    ask = ctypes.pythonapi.PyUnicode_AsUTF8AndSize
    ask.restype = ctypes.c_void_p
    ask.argtypes = [ctypes.py_object, ctypes.c_void_p]
    assert ask(text, None)


# CPython (with the GIL) keeps a str's UTF-8 in a field of the str that the kernels read
_KEEPS_UTF8 = sys.implementation.name == "cpython" and getattr(sys, "_is_gil_enabled", lambda: True)()


@pytest.mark.skipif(not _KEEPS_UTF8, reason="not CPython with the GIL: the kernels always convert")
@pytest.mark.parametrize("wide", _WIDE)
def test_utf8_kept_by_python_is_read_in_place(wide):
    """Once a binding has asked CPython for a non-ASCII str's UTF-8, the kernels read that
    copy instead of converting (issue 31): same bytes, same ids as a str that has none."""
    from fastbpe import _pretokenize, patterns
    from fastbpe._testing import utf8_kept_by_python, utf8_of

    text = ("naïve " + wide + " text, " * 3 + wide * 5 + " end") * 40
    fresh = "".join(list(text))   # an equal str CPython has kept no UTF-8 for
    _make_python_keep_utf8(text)
    assert utf8_kept_by_python(text) and not utf8_kept_by_python(fresh)
    assert not utf8_kept_by_python("ascii only")
    assert utf8_of(text) == utf8_of(fresh) == text.encode("utf-8")
    table = table_for(toy_ranks(7, n_merges=80, alphabet="aéx ".encode()))
    kind = _pretokenize.pattern_kind(patterns.CL100K_PATTERN)
    want = table.encode_text(fresh, kind)
    assert table.encode_text(text, kind) == want
    assert table.encode_texts([text, fresh, text[:50]], kind) == [want, want, table.encode_text(fresh[:50], kind)]
    # a str with a lone surrogate never has one: the error is the same as before
    bad = wide + "\ud800"
    assert not utf8_kept_by_python(bad)
    with pytest.raises(UnicodeEncodeError):
        utf8_of(bad)


def test_encode_texts_with_pieces_gives_the_scanners_piece_ends():
    """The ids of encode_texts and the piece ends of the scanner, in one call; bad input
    raises as encode_texts does."""
    import array

    from fastbpe import _pretokenize, patterns

    table = table_for(toy_ranks(5, n_merges=80))
    kind = _pretokenize.pattern_kind(patterns.LLAMA3_PATTERN)
    texts = ["", "abc cab", " a  b\n\nc 123 'll", "é日😀 abca" * 30, "x" * 2000]
    got = table.encode_texts(texts, kind, True)
    for text, (ids, ends), want_ids in zip(texts, got, table.encode_texts(texts, kind)):
        assert isinstance(ends, array.array) and ends.typecode == "I"   # no numpy on the Encodings path
        assert ids == want_ids
        assert ends.tolist() == _pretokenize.piece_boundaries(text.encode(), kind).tolist()
    with pytest.raises(TypeError):
        table.encode_texts(["ok", b"bytes"], kind, True)
    with pytest.raises(UnicodeEncodeError):
        table.encode_texts(["ok", "bad \ud800"], kind, True)
    with pytest.raises(ValueError):
        table.encode_texts(["ok"], -1, True)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 20), data=st.lists(st.integers(0, 3), max_size=80), max_len=st.sampled_from([2, 4, 64]))
def test_learning_whole_tokens_up_front_changes_no_id(seed, data, max_len):
    """learn_whole_tokens finds at load which tokens merge back into themselves (HF files):
    the ids are those of finding it at each token's first meeting, and of the reference."""
    rng = random.Random(seed)
    merges, vocab = [], [bytes([b]) for b in range(256)]
    for i in range(40):   # as test_merge_list_semantics: some tokens do not merge back into themselves
        left, right = rng.randrange(len(vocab)) % 4 if i < 5 else rng.randrange(len(vocab)), rng.choice([0, 1, 2, 3, len(vocab) - 1])
        merges.append((left, right, len(vocab)))
        vocab.append(vocab[left] + vocab[right])
    learned, lazy = BPETable.from_merges(merges, vocab), BPETable.from_merges(merges, vocab)
    assert learned.learn_whole_tokens(max_len) >= 0 and learned.learn_whole_tokens(max_len) == 0   # settled once
    table_map = {}
    for rank, (l, r, new) in enumerate(merges):
        table_map.setdefault((l, r), (rank, new))
    text = bytes(data)
    expected = bpe_merges(list(text), table_map) if text else []
    assert learned.encode_bytes(text) == lazy.encode_bytes(text) == expected
    for token in vocab[256:]:   # a whole token as a piece: the learned state is used
        if len(token) <= max_len:
            assert learned.encode_bytes(token) == lazy.encode_bytes(token) == bpe_merges(list(token), table_map)
