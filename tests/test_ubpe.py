"""fastbpe.ubpe without the reference: training against the Python twin, round trips, top-n
ordering, JSON round trips, bad input.  (Parity with ubpe-native: test_ubpe_parity.py.)"""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from fastbpe._ubpe_train import fit_pairs
from fastbpe.ubpe import UBPE, UBPEClassic, SplitMode
from helpers import make_docs
from reference_ubpe import fit_merges

def alphabet_of(docs) -> list:
    return sorted(set("".join(docs)))


@pytest.fixture(scope="module")
def docs():
    return make_docs(1, 120)


@pytest.fixture(scope="module", params=[UBPE, UBPEClassic], ids=["UBPE", "UBPEClassic"])
def fitted(request, docs):
    model = request.param(alphabet=alphabet_of(docs), n_tokens=150)
    model.fit(docs, n_candidates=20, quiet=True)
    return model


# ------------------------------------------------------------------ training kernel vs twin

@pytest.mark.parametrize("seed", range(6))
def test_fit_kernel_equals_python_twin(seed):
    rng = random.Random(seed)
    n_sym = rng.randint(2, 6)
    docs = [[[rng.randrange(n_sym) if rng.random() < 0.6 else 0 for _ in range(rng.randint(0, 30))]
             for _ in range(rng.randint(1, 3))] for _ in range(rng.randint(1, 25))]
    n_tokens, n_candidates = n_sym + rng.randint(1, 40), rng.choice([1, 2, 5, 50])
    parts = [p for d in docs for p in d]
    seq = np.array([x for p in parts for x in p], dtype=np.int32)
    part_start = np.cumsum([0] + [len(p) for p in parts]).astype(np.int64)
    part_doc = np.array([i for i, d in enumerate(docs) for _ in d], dtype=np.int64)
    rows = fit_pairs(seq, part_start, part_doc, n_sym, n_tokens, n_candidates)
    assert [tuple(r) for r in rows.tolist()] == fit_merges(docs, n_sym, n_tokens, n_candidates)


@pytest.mark.parametrize("seed", range(40))
def test_fit_incremental_counts_equal_a_recount(seed):
    """After every step the kept pair statistics equal a count from scratch (verify=True raises
    otherwise); small alphabets make runs like `a a a` and neighbouring replacements common."""
    rng = random.Random(1000 + seed)
    n_sym = rng.randint(1, 5)
    docs = [[[rng.randrange(n_sym) for _ in range(rng.randint(0, 40))]
             for _ in range(rng.randint(1, 4))] for _ in range(rng.randint(1, 12))]
    parts = [p for d in docs for p in d]
    seq = np.array([x for p in parts for x in p], dtype=np.int32)
    part_start = np.cumsum([0] + [len(p) for p in parts]).astype(np.int64)
    part_doc = np.array([i for i, d in enumerate(docs) for _ in d], dtype=np.int64)
    n_tokens, n_candidates = n_sym + rng.randint(1, 60), rng.choice([1, 3, 50])
    rows = fit_pairs(seq, part_start, part_doc, n_sym, n_tokens, n_candidates, verify=True)
    assert [tuple(r) for r in rows.tolist()] == fit_merges(docs, n_sym, n_tokens, n_candidates)


def test_fit_stores_idf_weights_and_sequences(docs):
    model = UBPE(alphabet=alphabet_of(docs), n_tokens=80)
    model.fit(docs, quiet=True, rearrange_tokens=False)
    parts = [[[model.alphabet[c] for c in d]] for d in docs]
    rows = fit_merges(parts, len(model.alphabet), 80, 50)
    assert list(model.tokens_weights) == [r[2] for r in rows]
    for left, right, new_id, n_docs in rows:
        assert model.tokens_weights[new_id] == pytest.approx(np.log((1 + len(docs)) / (1 + n_docs)))
        seq = model.tokens_mapper["backward"][new_id]
        assert model.decode([new_id]) == model.decode([left]) + model.decode([right])
        assert all(t < len(model.alphabet) for t in seq)


def test_rearranged_ids_follow_weights_and_trim(docs, fitted):
    weights = [fitted.tokens_weights[t] for t in sorted(fitted.tokens_weights)]
    assert weights == sorted(weights, reverse=True)
    assert fitted.n_tokens <= 150
    assert min(fitted.tokens_weights) == len(fitted.alphabet)


# ------------------------------------------------------------------ encoding properties

def test_round_trip(docs, fitted):
    for doc in docs[:40] + ["", "the", "a", "theeee thethe"]:
        ids, weight = fitted.encode(doc)[0]
        assert fitted.decode(ids) == doc if ids else doc == ""
        assert weight >= 0.0


def test_top_n_sorted_distinct_and_decoding(docs):
    model = UBPE(alphabet=alphabet_of(docs), n_tokens=150)
    model.fit(docs, quiet=True)
    for doc in docs[:25]:
        for top_n in (2, 5):
            found = model.encode(doc, top_n=top_n)
            assert 1 <= len(found) <= top_n
            keys = [(w, -len(ids)) for ids, w in found]
            assert keys == sorted(keys, reverse=True)            # top-1 weight >= the others
            assert len({tuple(ids) for ids, _ in found}) == len(found)
            assert all(model.decode(ids) == doc for ids, _ in found)


def test_top_n_is_never_exponential():
    model = UBPE(alphabet=["a", "b"], n_tokens=40)
    model.fit(["ab" * 50, "a" * 64, "ba" * 30], quiet=True)
    doc = "a" * 600 + "b" * 600                  # 2^1200 segmentations (the DAG is walked once)
    found = model.encode(doc, top_n=8)
    assert len(found) == 8 and all(model.decode(ids) == doc for ids, _ in found)


def test_sequences_of_hashable_symbols():
    alphabet = [("x", 1), ("y", 2), ("z", 3)]
    rng = random.Random(5)
    corpus = [[rng.choice(alphabet[:2]) if rng.random() < 0.8 else alphabet[2] for _ in range(40)]
              for _ in range(20)]
    for cls in (UBPE, UBPEClassic):
        model = cls(alphabet=alphabet, n_tokens=20, break_tokens=[alphabet[2]])
        model.fit(corpus, quiet=True)
        for doc in corpus[:5]:
            assert model.decode(model.encode(doc)[0][0]) == doc


def test_split_options_keep_separators(docs):
    alphabet = alphabet_of(docs)
    model = UBPE(alphabet=alphabet, n_tokens=120, known_words=["the", "and"], break_tokens=[" "],
                 stop_tokens=[".", ","], regex_str=r"\w+|[^\w]")
    model.fit(docs, quiet=True)
    the = model.known_words["the"]
    for doc in docs[:20]:
        ids, _ = model.encode(doc)[0]
        assert model.decode(ids) == doc
        assert (the in ids) == (" the " in f" {doc} ".replace(".", " ").replace(",", " ")
                                or "the" in doc)
    no_split = model.encode("the cat", split_mode=SplitMode.NONE)[0][0]
    assert model.known_words["the"] not in no_split


def test_dumps_loads_round_trip(fitted, docs):
    again = type(fitted).loads(fitted.dumps(), token_type=str)
    assert again.dumps() == fitted.dumps()
    for doc in docs[:20]:
        assert again.encode(doc) == fitted.encode(doc)


def test_int_alphabet_dumps_loads_default_token_type():
    corpus = [[0, 1, 2, 0, 1, 2, 0, 1], [1, 2, 1, 2, 0, 0]]
    model = UBPEClassic(alphabet=[0, 1, 2], n_tokens=8)
    model.fit(corpus, quiet=True)
    again = UBPEClassic.loads(model.dumps())
    assert again.encode([0, 1, 2, 0, 1]) == model.encode([0, 1, 2, 0, 1])


def test_rearrange_tokens_trims():
    docs = make_docs(3, 60)
    model = UBPE(alphabet=alphabet_of(docs), n_tokens=200)
    model.fit(docs, quiet=True)
    model.rearrange_tokens(n_tokens=len(model.alphabet) + 10)
    assert len(model.tokens_weights) == 10 and model.n_tokens == len(model.alphabet) + 10
    assert all(model.decode(model.encode(d)[0][0]) == d for d in docs[:10])


# ------------------------------------------------------------------ bad input

def test_constructor_errors():
    with pytest.raises(TypeError):
        UBPE()
    with pytest.raises(TypeError):
        UBPE(alphabet="abc")
    with pytest.raises(ValueError):
        UBPE(alphabet=[])
    with pytest.raises(TypeError):
        UBPE(alphabet=["a", 1])
    with pytest.raises(ValueError):
        UBPE(alphabet={"a": 0, "b": 2})
    with pytest.raises(TypeError):
        UBPE(alphabet=[1, 2], known_words=[[1, 2]])
    with pytest.raises(ValueError):
        UBPE(alphabet=["a", "b"], known_words={"ab": 5})


def test_use_errors(docs):
    model = UBPE(alphabet=alphabet_of(docs), n_tokens=100)
    with pytest.raises(ValueError, match="not fitted"):
        model.encode("the")
    with pytest.raises(ValueError):
        model.fit(docs, n_candidates=0)
    with pytest.raises(TypeError):
        model.fit("a single string")
    with pytest.raises(TypeError):
        model.fit([3.5])
    with pytest.raises(ValueError, match="not in the alphabet"):
        model.fit(["the Zebra"])
    model.fit(docs, quiet=True)
    with pytest.raises(ValueError, match="fitted only once"):
        model.fit(docs, quiet=True)
    with pytest.raises(ValueError, match="not in the alphabet"):
        model.encode("the \u20ac")
    with pytest.raises(ValueError):
        model.encode("the", top_n=0)
    with pytest.raises(ValueError):
        model.encode(("t", "h"))
    with pytest.raises(ValueError, match="Unknown token"):
        model.decode([10 ** 6])
    with pytest.raises(ValueError):
        UBPE.loads("{}")
    with pytest.raises(ValueError):
        UBPE.loads("not json")
    with pytest.raises(ValueError):
        UBPEClassic.loads(json.dumps({"n_tokens": 4, "alphabet": {"0": 0}, "mapper": {"1": [0, 0, 0]},
                                      "weights": {"1": 0.5}}))


def test_documents_that_split_into_nothing():
    """The reference raises on these (an empty part); here they count as documents without pairs."""
    docs = ["and", "", "the cat and the hat", "and"]
    for cls in (UBPE, UBPEClassic):
        model = cls(alphabet=alphabet_of(docs), n_tokens=30, known_words=["and"])
        model.fit(docs, quiet=True)
        assert model.decode(model.encode("the hat and")[0][0]) == "the hat and"
        assert model.encode("")[0] == ([], 0.0)


@pytest.mark.parametrize("seq, starts, docs, message", [
    ([0, 5], [0, 2], [0], "outside"),
    ([0, 1], [0, 3], [0], "offsets"),
    ([0, 1, 0, 1], [0, 2, 4], [1, 0], "consecutive"),
])
def test_fit_kernel_rejects_bad_arrays(seq, starts, docs, message):
    with pytest.raises(ValueError, match=message):
        fit_pairs(np.array(seq, np.int32), np.array(starts, np.int64), np.array(docs, np.int64), 3, 10, 5)


def test_classic_decode_expands_shared_parts_and_rejects_cycles():
    shared = {"n_tokens": 5, "alphabet": {"a": 0, "b": 1}, "weights": {"2": 1.0, "3": 0.5, "4": 0.2},
              "mapper": {"2": [0, 1], "3": [2, 2], "4": [3, 2]}}
    model = UBPEClassic.loads(json.dumps(shared), token_type=str)
    assert model.decode([4, 0]) == "abababa"
    cyclic = dict(shared, mapper={"2": [0, 3], "3": [2, 1], "4": [0, 1]})
    model = UBPEClassic.loads(json.dumps(cyclic), token_type=str)
    assert model.decode([4]) == "ab"
    with pytest.raises(ValueError, match="through itself"):
        model.decode([2])


def test_empty_parts_in_a_document(docs):
    """A regex that matches empty strings gives empty parts; top_n > 1 must carry them through."""
    model = UBPE(alphabet=alphabet_of(docs), n_tokens=100, regex_str=r"[a-z]*|[^a-z]")
    model.fit(docs, quiet=True)
    for doc in docs[:10]:
        found = model.encode(doc, top_n=3)
        assert all(model.decode(ids) == doc for ids, _ in found)
        assert [w for _, w in found] == sorted((w for _, w in found), reverse=True)


def test_scratch_reused_across_calls_of_any_size(docs):
    """The kernel keeps one scratch between calls; top_n and word lengths vary call to call."""
    model = UBPE(alphabet=alphabet_of(docs), n_tokens=120)
    model.fit(docs, quiet=True)
    fresh = UBPE.loads(model.dumps(), token_type=str)
    calls = [("the" * 40, 9), ("of" * 500, 1), ("to", 7), ("and" * 200, 2), ("is it", 1)] * 3
    for doc, top_n in calls:
        assert model.encode(doc, top_n=top_n) == fresh.encode(doc, top_n=top_n)
        fresh = UBPE.loads(model.dumps(), token_type=str)


# ------------------------------------------------------------------ the word regex without `re`

def _findall_arrays(text: str, table):
    import re
    from fastbpe._ubpe_text import WORD_REGEX, map_str_parts
    return map_str_parts(re.compile(WORD_REGEX).findall(text), table)


def test_word_split_equals_re_on_every_code_point():
    from fastbpe._ubpe_text import split_words_map
    table = np.arange(0x110000, dtype=np.int32)
    rng = random.Random(7)
    points = list(range(0x110000))
    rng.shuffle(points)
    for k in range(0, len(points), 4096):
        text = "".join(chr(c) + rng.choice([" ", "", "", "a", "  ", "\n", ".", "_", " \u00a0"])
                       for c in points[k:k + 4096])
        ids, offsets = split_words_map(text, table)
        want_ids, want_offsets = _findall_arrays(text, table)
        assert np.array_equal(ids, want_ids) and np.array_equal(offsets, want_offsets)


def test_word_split_equals_re_on_adversarial_strings():
    from fastbpe._ubpe_text import split_words_map, split_words_map_docs
    table = np.arange(0x110000, dtype=np.int32)
    pieces = [" ", "  ", "a", "_", "1", ".", "!?", "\n", "\t", "\u00a0", "é", "\u3000", "²", "-",
              "\x1c", "\u2028", "\ud800", "\u0301", "\U0001d7d8"]
    rng = random.Random(8)
    texts = ["", " ", "  ", " a", " .", "a ", ". ", " \n"] + [
        "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14))) for _ in range(5000)]
    for text in texts:
        ids, offsets = split_words_map(text, table)
        want_ids, want_offsets = _findall_arrays(text, table)
        assert np.array_equal(ids, want_ids) and np.array_equal(offsets, want_offsets), repr(text)
    ids, offsets, counts = split_words_map_docs(texts, table)
    assert counts.tolist() == [len(_findall_arrays(t, table)[1]) - 1 for t in texts]
    want = [_findall_arrays(t, table) for t in texts]
    assert np.array_equal(ids, np.concatenate([w[0] for w in want]))
    assert np.array_equal(np.diff(offsets), np.concatenate([np.diff(w[1]) for w in want]))


def test_word_split_fast_path_equals_the_re_path(docs):
    """A model with the word regex gives what the same model with `re` splitting gives."""
    from fastbpe._ubpe_text import WORD_REGEX
    fast = UBPE(alphabet=alphabet_of(docs), n_tokens=150, regex_str=WORD_REGEX)
    slow = UBPE(alphabet=alphabet_of(docs), n_tokens=150, regex_str=WORD_REGEX)
    slow.split_pipeline.words_only = False
    assert fast.split_pipeline.words_only
    fast.fit(docs, n_candidates=20, quiet=True)
    slow.fit(docs, n_candidates=20, quiet=True)
    assert fast.dumps() == slow.dumps()
    for doc in docs[:30] + ["", " ", "the  , of"]:
        for top_n in (1, 3):
            assert fast.encode(doc, top_n=top_n) == slow.encode(doc, top_n=top_n)
    with pytest.raises(ValueError, match="not in the alphabet"):
        fast.encode("the \u2603")
    with pytest.raises(ValueError, match="not in the alphabet"):
        UBPE(alphabet=alphabet_of(docs), regex_str=WORD_REGEX).fit(["the \u2603"], quiet=True)


def test_word_cache_gives_what_a_cold_model_gives(docs):
    """Encodings come from a per-model cache of words: warm, cold, and after the cache was
    emptied (more distinct words than it keeps) they are the same, for each top_n."""
    def model():
        m = UBPE(alphabet=alphabet_of(docs), n_tokens=150, regex_str=r" ?\w+| ?[^\w\s]+|\s+")
        m.fit(docs, n_candidates=20, quiet=True)
        return m
    warm = model()
    sample = docs[:25] + ["the the the", " of  of", "a", "the " + "that" * 80 + " of"]   # 320: no GIL
    first = [[warm.encode(d, top_n=n) for n in (1, 2, 5)] for d in sample]
    assert [[warm.encode(d, top_n=n) for n in (1, 2, 5)] for d in sample] == first
    rng = random.Random(3)
    letters = sorted(set("".join(docs)) - {" "})
    noise = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 6))) for _ in range(40000)]
    for k in range(0, len(noise), 400):          # ~40000 distinct words: the cache empties itself
        warm.encode(" ".join(noise[k:k + 400]))
    cold = model()
    assert [[cold.encode(d, top_n=n) for n in (1, 2, 5)] for d in sample] == first
    assert [[warm.encode(d, top_n=n) for n in (1, 2, 5)] for d in sample] == first
    for words in (noise[:50], noise[-50:]):
        doc = " ".join(words)
        assert warm.encode(doc, top_n=3) == cold.encode(doc, top_n=3)
