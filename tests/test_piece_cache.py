"""The per-thread piece cache that lives across calls (_core.PieceCache): it never changes ids.

Most tests use small made-up vocabularies (no data files) with the cl100k scanner, checked
against the pure-Python reference; the last ones use the real encodings when present."""
import random
import string
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import regex

from fastbpe import _core, _pretokenize, patterns
from fastbpe._core import BPETable
from fastbpe._piece_cache import PieceCache
from fastbpe._testing import thread_piece_cache
from reference_encode import encode_piece_tiktoken
from test_kernel import table_for, toy_ranks

KIND = _pretokenize.pattern_kind(patterns.CL100K_PATTERN)
SPLIT = regex.compile(patterns.CL100K_PATTERN)
CACHE_TABLES_PER_THREAD = 4   # as in _core.pyx


def reference(text: str, ranks) -> list[int]:
    return [i for piece in SPLIT.findall(text) for i in encode_piece_tiktoken(piece.encode(), ranks)]


def words(rng: random.Random, n: int, alphabet: str = "abc") -> list[str]:
    return [" " + "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 9))) for _ in range(n)]


@pytest.fixture(scope="module")
def toy():
    ranks = toy_ranks(3, n_merges=120)
    return table_for(ranks), ranks


def test_cache_remembers_pieces_across_calls(toy):
    table, ranks = toy
    text = " abca abc cab"
    assert table.encode_text(text, KIND) == reference(text, ranks)
    cache = thread_piece_cache(table)
    assert cache is thread_piece_cache(table)   # the same cache on every call of this thread
    assert cache.ids_of(b" abca") == encode_piece_tiktoken(b" abca", ranks)
    assert cache.ids_of(b" never seen") is None
    assert table.encode_text(text, KIND) == reference(text, ranks)   # now from the cache


def colliding_pieces(ranks, n_wanted: int = 3) -> list[bytes]:
    """Distinct short pieces that map to the same cache entry."""
    rng = random.Random(7)
    by_slot: dict[tuple, list[bytes]] = {}
    while True:
        piece = (" " + "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randrange(2, 12)))).encode()
        n_ids = len(encode_piece_tiktoken(piece, ranks))
        if n_ids > 6:   # not cached at all
            continue
        same = by_slot.setdefault(PieceCache.slot_of(piece, n_ids), [])
        if piece not in same:
            same.append(piece)
            if len(same) == n_wanted:
                return same


def test_colliding_pieces_evict_and_never_mix(toy):
    table, ranks = toy
    a, b, c = colliding_pieces(ranks)
    cache = thread_piece_cache(table)
    table.encode_text(a.decode(), KIND)
    assert cache.ids_of(a) == encode_piece_tiktoken(a, ranks)
    table.encode_text(b.decode(), KIND)
    assert cache.ids_of(a) is None     # b took its entry
    assert cache.ids_of(b) == encode_piece_tiktoken(b, ranks)
    text = (a + b + c + a + a + c + b).decode() * 50
    assert table.encode_text(text, KIND) == reference(text, ranks)
    assert table.encode_texts([a.decode(), c.decode(), a.decode()], KIND) == [
        reference(a.decode(), ranks), reference(c.decode(), ranks), reference(a.decode(), ranks)]


@pytest.mark.parametrize("stored,probe", [(b"hello", b"hellp"), (b"x" * 20, b"x" * 19 + b"y"),
                                          (b"abcdefgh" + b"z" * 16, b"abcdefgh" + b"z" * 15 + b"Z"),
                                          (b"w" * 300, b"v" + b"w" * 299)])
def test_equal_64_bit_hashes_still_compare_the_bytes(stored, probe):
    """Issue 29 item 13: two pieces whose 64-bit hashes are equal (forced by the _testing hook:
    no such pair is known) miss each other's long entry and spill slot, because the bytes
    (first word, then the rest) are compared after the hash; the same piece hits."""
    from fastbpe._testing import piece_cache_hits_on_one_hash

    long_ok = True if len(stored) <= 24 else None   # longer pieces have no long entry
    assert piece_cache_hits_on_one_hash(stored, stored) == (long_ok, True)
    assert piece_cache_hits_on_one_hash(stored, probe) == (long_ok and False, False)


def test_eviction_under_more_pieces_than_entries():
    """Far more distinct pieces than the cache holds, then the first ones again."""
    ranks = toy_ranks(4, n_merges=400, alphabet=b"abcdefgh ")
    table = table_for(ranks)
    rng = random.Random(11)
    ws = list(dict.fromkeys(words(rng, 40_000, "abcdefgh")))
    first, rest = "".join(ws[:2000]), "".join(ws)
    cache = thread_piece_cache(table)
    assert table.encode_text(first, KIND) == reference(first, ranks)
    assert table.encode_text(rest, KIND) == reference(rest, ranks)
    evicted = [w for w in ws[:2000] if cache.ids_of(w.encode()) is None]
    assert len(evicted) > 100     # the later pieces took their entries
    assert table.encode_text(first, KIND) == reference(first, ranks)
    assert all(cache.ids_of(w.encode()) in (None, encode_piece_tiktoken(w.encode(), ranks)) for w in ws)


def test_cache_grows_with_use_and_keeps_its_pieces():
    """Short calls keep the small cache; a call with a long text grows its packed
    entries, and the pieces held so far move over."""
    ranks = toy_ranks(5, n_merges=300, alphabet=b"abcdef ")
    table = table_for(ranks)
    rng = random.Random(3)
    first = "".join(words(rng, 200, "abcdef"))
    cache = thread_piece_cache(table)
    small = cache.packed_entries
    assert table.encode_text(first, KIND) == reference(first, ranks)
    held = {p: cache.ids_of(p.encode()) for p in SPLIT.findall(first)}
    held = {p: ids for p, ids in held.items() if ids is not None and len(ids) <= 3}   # packed
    assert held and cache.packed_entries == small
    big = "".join(words(rng, 60_000, "ghijkl"))          # over 256k characters, none of those pieces
    assert table.encode_texts([big], KIND) == [reference(big, ranks)]
    assert cache.packed_entries == 4 * small
    # the next call grew it; entries that no piece of the big text overwrote are still there
    assert sum(cache.ids_of(p.encode()) == ids for p, ids in held.items()) > len(held) // 2
    assert all(cache.ids_of(p.encode()) in (None, ids) for p, ids in held.items())
    assert table.encode_text(first, KIND) == reference(first, ranks)


def test_short_pieces_of_many_ids_are_found_through_their_packed_entry():
    """A piece of up to 15 bytes and 4-6 ids lives in the long entries, and its packed
    entry only says so: found again from there, and re-merged (right) after another piece
    took its long entry."""
    ranks = toy_ranks(4, n_merges=40, alphabet=b"abcd")
    table = table_for(ranks)
    rng = random.Random(9)
    by_slot: dict[int, list[bytes]] = {}
    while True:
        piece = (" " + "".join(rng.choice("abcd") for _ in range(rng.randrange(5, 14)))).encode()
        n_ids = len(encode_piece_tiktoken(piece, ranks))
        if 4 <= n_ids <= 6:
            same = by_slot.setdefault(PieceCache.slot_of(piece, n_ids)[1], [])
            # the same long entry, different packed ones (a keeps its packed entry)
            if piece not in same and all(PieceCache.slot_of(piece, 1) != PieceCache.slot_of(o, 1) for o in same):
                same.append(piece)
                if len(same) == 2:
                    break
    a, b = same
    cache = thread_piece_cache(table)
    for text in (a, a, b, a, a + b + a):
        assert table.encode_text(text.decode(), KIND) == reference(text.decode(), ranks)
    assert cache.ids_of(a) == encode_piece_tiktoken(a, ranks)


def test_long_and_many_id_pieces_are_kept_in_the_spill_cache(toy):
    """Pieces of over 24 bytes or 6 ids (which the fixed entries cannot keep) are kept in
    the spill cache and found there on the next call; over SPILL_MAX_PIECE bytes, never."""
    table, ranks = toy
    many_ids = " éééé"   # 9 bytes, 9 ids
    ascii_many_ids = next(p for p in (" " + "ab" * k for k in range(2, 12))
                          if len(encode_piece_tiktoken(p.encode(), ranks)) > 6 and len(p) <= 24)
    texts = [" " + "cab" * 20, "é" * 30, many_ids, " " + "abc" * 400, ascii_many_ids]
    cache = thread_piece_cache(table)
    for _ in range(2):
        for text in texts:
            assert table.encode_text(text, KIND) == reference(text, ranks)
    for text in texts[:3]:
        piece = SPLIT.findall(text)[0].encode()
        assert PieceCache.slot_of(piece, len(encode_piece_tiktoken(piece, ranks)))[0] == "spill"
        assert cache.ids_of(piece) == encode_piece_tiktoken(piece, ranks)
    assert cache.ids_of((" " + "abc" * 400).encode()) is None   # over SPILL_MAX_PIECE bytes
    # a short ASCII piece of many ids is not looked for there, nor kept: nearly all such
    # pieces are non-ASCII, and English merges would pay a probe each for nothing
    assert cache.ids_of(ascii_many_ids.encode()) is None
    assert cache.spilled >= 3


def test_spill_cache_evicts_and_empties_when_full():
    """Long pieces sharing a spill slot evict each other; more long pieces than its pool
    holds (4 MiB) empty it and start again.  Ids never change."""
    ranks = toy_ranks(6, n_merges=200, alphabet=b"abcdefgh ")
    table = table_for(ranks)
    rng = random.Random(13)
    pieces = [" " + "".join(rng.choice("abcdefgh") for _ in range(rng.randrange(900, 1000)))
              for _ in range(4000)]
    want = {p: table.encode_bytes(p.encode(), path="heap") for p in pieces}   # no cache
    cache = thread_piece_cache(table)
    by_slot: dict[int, list[str]] = {}
    for p in pieces:
        by_slot.setdefault(PieceCache.slot_of(p.encode(), 7)[1], []).append(p)
    a, b = next(same for same in by_slot.values() if len(same) >= 2)[:2]
    for p in (a, b):
        assert table.encode_text(p, KIND) == want[p]
    assert cache.ids_of(b.encode()) == want[b] and cache.ids_of(a.encode()) is None   # b took a's slot
    assert table.encode_text(a, KIND) == want[a]
    ids = table.encode_texts(pieces, KIND)    # over 8 MB of pieces and ids: the pool empties
    assert ids == [want[p] for p in pieces]
    kept = [p for p in pieces if cache.ids_of(p.encode()) is not None]
    assert 0 < len(kept) < len(pieces) // 2 and pieces[-1] in kept
    assert all(cache.ids_of(p.encode()) == want[p] for p in kept)
    assert table.encode_texts(pieces[:50], KIND) == [want[p] for p in pieces[:50]]


def test_many_tables_in_one_thread():
    """Tables with different ids for the same pieces, used in turn: each gets its own ids,
    and the thread keeps caches for at most CACHE_TABLES_PER_THREAD of them."""
    tables = [(table_for(r), r) for r in (toy_ranks(seed, n_merges=80) for seed in range(7))]
    rng = random.Random(5)
    texts = ["".join(words(rng, 200)) for _ in range(3)]
    want = [[reference(t, r) for t in texts] for _, r in tables]
    for _ in range(3):
        for k, (table, _) in enumerate(tables):
            for j, t in enumerate(texts):
                assert table.encode_text(t, KIND) == want[k][j]
        assert len(_core._thread_state.caches) <= CACHE_TABLES_PER_THREAD


def test_a_new_table_never_sees_a_dead_tables_cache():
    """Caches are keyed by a serial, not by id(): a table made where a dead one was gets
    its own ids."""
    text = " abc cab bca aab"
    for seed in range(6):
        ranks = toy_ranks(seed, n_merges=60)
        table = table_for(ranks)
        assert table.encode_text(text, KIND) == reference(text, ranks)
        del table


def test_threads_with_several_tables_at_once():
    tables = [(table_for(r), r) for r in (toy_ranks(seed, n_merges=100) for seed in (21, 22, 23))]
    rng = random.Random(9)
    texts = ["".join(words(rng, rng.randrange(1, 400), "abc")) for _ in range(24)]
    want = {(k, j): reference(t, r) for k, (_, r) in enumerate(tables) for j, t in enumerate(texts)}
    errors = []

    def work(seed: int) -> int:
        order = random.Random(seed)
        done = 0
        for _ in range(60):
            k, j = order.randrange(len(tables)), order.randrange(len(texts))
            got = tables[k][0].encode_text(texts[j], KIND)
            if got != want[k, j]:
                errors.append((threading.get_ident(), k, j))
            done += 1
        return done

    with ThreadPoolExecutor(8) as pool:
        assert sum(pool.map(work, range(16))) == 16 * 60
    assert not errors


# ---------------------------------------------------------------- real encodings


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "r50k_base"])
def test_batch_threads_and_cache_with_real_vocabularies(name):
    from conftest import encoding_pair

    fb, tt = encoding_pair(name)
    rng = random.Random(1)
    docs = ["".join(rng.choice(["the", " of", " and", "é", "漢字", " 123", "\n", "  ", "'s", "x" * 30, "ab"])
                    for _ in range(rng.randrange(0, 300))) for _ in range(200)]
    want = [tt.encode_ordinary(d) for d in docs]
    assert fb.encode_ordinary_batch(docs, num_threads=4) == want
    assert fb.encode_ordinary_batch(docs[::-1], num_threads=2) == want[::-1]
    assert [fb.encode_ordinary(d) for d in docs] == want


N = 1 << 20
WORST_CASES = {
    "one repeated character": "a" * N,
    "letters without spaces": (string.ascii_lowercase * (N // 26 + 1))[:N],
    "spaces": " " * N,
    "digits": (string.digits * (N // 10 + 1))[:N],
}


@pytest.mark.parametrize("case", list(WORST_CASES))
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "r50k_base"])
def test_worst_case_inputs_give_tiktokens_ids(name, case):
    """1 MiB inputs that make one huge piece (or a million tiny ones): exact ids."""
    from conftest import encoding_pair

    fb, tt = encoding_pair(name)
    text = WORST_CASES[case]
    try:
        want = tt.encode_ordinary(text)
    except BaseException as e:  # tiktoken's regex overflows its stack on some of these
        if type(e).__name__ != "PanicException":
            raise
        want = [i for piece in regex.findall(tt._pat_str, text) for i in tt._encode_single_piece(piece)]
    assert fb.encode_ordinary(text) == want


def test_long_pieces_with_ranks_out_of_merge_order():
    """A vocabulary whose longer tokens may rank below their parts (allowed in a .tiktoken
    file): merges then make pairs that rank below the one just merged, which the long-piece
    path (sorted run + heap) must still take first."""
    for seed in range(6):
        ranks = toy_ranks(seed, n_merges=150)
        rng = random.Random(seed)
        multi = [t for t in ranks if len(t) > 1]
        shuffled = rng.sample(range(256, 256 + len(multi)), len(multi))
        ranks = {**{t: r for t, r in ranks.items() if len(t) == 1}, **dict(zip(multi, shuffled))}
        table = table_for(ranks)
        for n in (49, 120, 400):
            piece = bytes(rng.choice(b"abc ") for _ in range(n))
            want = encode_piece_tiktoken(piece, ranks)
            assert table.encode_bytes(piece, path="heap") == want
            assert table.encode_bytes(piece, path="scan") == want


def test_output_buffer_kept_across_long_and_short_calls(toy):
    # encode_text keeps its output buffer with the thread's cache (up to _core's KEPT_IDS
    # ids): texts long and short, above and below that size, in any order, give their own ids
    table, ranks = toy
    rng = random.Random(7)
    texts = ["".join(words(rng, n)) for n in (3, 40_000, 5, 70_000, 300_000, 2, 40_000, 1)]
    for text in texts + texts[::-1]:
        assert table.encode_text(text, KIND) == reference(text, ranks)


def test_a_call_made_while_the_list_is_built_gets_its_own_buffer(toy):
    # a finalizer run by the collector inside encode_text (when its list is made) encodes in
    # the same thread: it must not share the buffer the outer call is reading its ids from
    import gc
    table, ranks = toy
    inner = " abc cab" * 50
    outer = "".join(words(random.Random(3), 20_000))
    seen = []

    class Cycle:
        def __init__(self):
            self.me = self

        def __del__(self):
            seen.append(table.encode_text(inner, KIND))

    old = gc.get_threshold()
    try:
        gc.set_threshold(1)
        for _ in range(30):
            Cycle()
            assert table.encode_text(outer, KIND) == reference(outer, ranks)
    finally:
        gc.set_threshold(*old)
        gc.collect()
    assert seen and all(ids == reference(inner, ranks) for ids in seen)
