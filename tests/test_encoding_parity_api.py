"""fastbpe must give tiktoken's ids byte for byte through every API besides encode itself:
special tokens, batches and numpy, decoding, str subclasses, lone surrogates, custom
encodings and the batch threads (test_encoding_parity.py has the texts and vocabularies).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import datasources as ds
from conftest import require_encoding
from encoding_parity_cases import HYPO, SAMPLES, TRICKY_TEXT, UNICODE_TEXT, _check_text


# ------------------------------------------------------------------ special tokens


def _special_sample(tt):
    """Special tokens to embed in text: all of them, or a sample for o200k_harmony's ~1100."""
    specials = sorted(tt.special_tokens_set)
    if len(specials) > 20:
        specials = [s for s in specials if "reserved" not in s] + specials[::97]
    return specials


def _text_with(specials):
    parts = ["Hello "]
    for i, s in enumerate(specials):
        parts += [s, [" world", "\n", "x", "  ", "123"][i % 5]]
    return "".join(parts) + s + s + "<|" + s + "|>" + s[:-1] + " end"


def _raises_same(fb_call, tt_call):
    with pytest.raises(ValueError) as want:
        tt_call()
    with pytest.raises(ValueError) as got:
        fb_call()
    assert str(got.value) == str(want.value)


def test_specials_allowed_all(pair):
    fb, tt = pair
    text = _text_with(_special_sample(tt))
    want = tt.encode(text, allowed_special="all")
    assert fb.encode(text, allowed_special="all") == want
    assert fb.encode(text, allowed_special=tt.special_tokens_set) == want
    assert fb.encode(text, allowed_special=frozenset(tt.special_tokens_set)) == want
    assert fb.encode(text, allowed_special="all", disallowed_special=()) == want
    assert any(tt.is_special_token(t) for t in want)


def test_specials_allowed_subset(pair):
    fb, tt = pair
    specials = _special_sample(tt)
    text = _text_with(specials)
    for allowed in ({specials[0]}, set(specials[::2])):
        want = tt.encode(text, allowed_special=allowed, disallowed_special=())
        assert fb.encode(text, allowed_special=allowed, disallowed_special=()) == want
        if set(specials) - allowed:
            _raises_same(lambda: fb.encode(text, allowed_special=allowed),
                         lambda: tt.encode(text, allowed_special=allowed))
        else:
            assert fb.encode(text, allowed_special=allowed) == tt.encode(text, allowed_special=allowed)


def test_specials_as_text(pair):
    fb, tt = pair
    text = _text_with(_special_sample(tt))
    want = tt.encode(text, disallowed_special=())
    assert fb.encode(text, disallowed_special=()) == want
    assert fb.encode(text, disallowed_special=set()) == want
    assert fb.encode_ordinary(text) == want
    assert fb.encode_ordinary(text) == tt.encode_ordinary(text)
    assert not any(tt.is_special_token(t) for t in want)


def test_specials_disallowed_all_raises_with_tiktoken_message(pair):
    fb, tt = pair
    for s in _special_sample(tt)[:5]:
        for text in (s, f"abc {s} def", f"{s}{s}", "x" * 1000 + s):
            _raises_same(lambda: fb.encode(text), lambda: tt.encode(text))
            _raises_same(lambda: fb.encode(text, disallowed_special="all"),
                         lambda: tt.encode(text, disallowed_special="all"))
            _raises_same(lambda: fb.encode_to_numpy(text), lambda: tt.encode_to_numpy(text))
            _raises_same(lambda: fb.encode_batch(["ok", text]), lambda: tt.encode_batch(["ok", text]))


def test_specials_disallowed_subset(pair):
    fb, tt = pair
    specials = _special_sample(tt)
    if len(specials) < 2:
        pytest.skip(f"{tt.name} has a single special token")
    banned, other = specials[0], specials[1]
    ok_text = f"a {other} b"
    assert fb.encode(ok_text, disallowed_special={banned}) == tt.encode(ok_text, disallowed_special={banned})
    bad_text = f"a {other} b {banned}"
    _raises_same(lambda: fb.encode(bad_text, disallowed_special={banned}),
                 lambda: tt.encode(bad_text, disallowed_special={banned}))
    # allowed wins over disallowed="all"; the other one is still encoded as text when not disallowed
    assert fb.encode(bad_text, allowed_special={banned}, disallowed_special=()) == tt.encode(
        bad_text, allowed_special={banned}, disallowed_special=())


def test_near_special_text_is_ordinary(pair):
    fb, tt = pair
    for text in ["<|endoftext", "endoftext|>", "<|endoftext|", "<| endoftext|>", "<|ENDOFTEXT|>",
                 "<|endoftext|>"[::-1], "<<||>>", "<|reserved_999999|>"]:
        assert fb.encode(text) == tt.encode(text), text


def test_specials_in_batch_and_numpy(pair):
    fb, tt = pair
    specials = _special_sample(tt)
    texts = [_text_with(specials), "plain", "", specials[0]]
    for kw in ({"allowed_special": "all"}, {"disallowed_special": ()},
               {"allowed_special": {specials[0]}, "disallowed_special": ()}):
        assert fb.encode_batch(texts, **kw) == tt.encode_batch(texts, **kw)
        for t in texts:
            arr = fb.encode_to_numpy(t, **kw)
            assert isinstance(arr, np.ndarray) and arr.dtype == np.uint32
            assert arr.tolist() == tt.encode(t, **kw)
    assert fb.encode_ordinary_batch(texts) == tt.encode_ordinary_batch(texts)


# ------------------------------------------------------------------ batch and numpy


def _docs(corpus_fn):
    if ds.corpus_available("multilingual"):
        lines = corpus_fn("multilingual").splitlines(keepends=True)
        return lines[::25] + [""] + SAMPLES
    return SAMPLES * 20


@pytest.mark.parametrize("num_threads", [1, 2, 8])
def test_batch_equals_single(pair, corpus, num_threads):
    fb, tt = pair
    docs = _docs(corpus)
    want = [tt.encode_ordinary(d) for d in docs]
    assert fb.encode_ordinary_batch(docs, num_threads=num_threads) == want
    assert fb.encode_batch(docs, num_threads=num_threads) == want
    assert fb.decode_batch(want, num_threads=num_threads) == docs
    assert fb.decode_bytes_batch(want, num_threads=num_threads) == [d.encode() for d in docs]


def test_batch_empty_and_default_threads(pair):
    fb, tt = pair
    assert fb.encode_batch([]) == []
    assert fb.encode_ordinary_batch([]) == []
    assert fb.decode_batch([]) == []
    assert fb.encode_batch(["", "", "a"]) == tt.encode_batch(["", "", "a"])
    assert fb.decode_batch([[], []]) == ["", ""]


def test_batch_accepts_iterables(bpe_pair):
    fb, tt = bpe_pair
    texts = ["a b", "", "ünï 😀", "x" * 100]
    assert fb.encode_batch(iter(texts)) == tt.encode_batch(iter(texts))
    assert fb.encode_ordinary_batch(tuple(texts)) == tt.encode_ordinary_batch(tuple(texts))
    assert fb.encode_ordinary_batch(t for t in texts) == tt.encode_ordinary_batch(t for t in texts)
    ids = tt.encode_ordinary_batch(texts)
    assert fb.decode_batch(iter(ids)) == tt.decode_batch(iter(ids))
    assert fb.decode_bytes_batch(tuple(ids)) == tt.decode_bytes_batch(tuple(ids))
    assert fb.decode_batch(np.array([[1, 2], [3, 4]])) == tt.decode_batch(np.array([[1, 2], [3, 4]]))


def test_concurrent_use_of_a_fresh_encoding(corpus):
    """Many threads hit a just-built encoding at once (lazily built state must be safe)."""
    import concurrent.futures

    import fastbpe

    tt = require_encoding("cl100k_base")
    spec = dict(ds.reference_spec("cl100k_base"), name="cl100k_fresh")
    fb = fastbpe.Encoding(**spec)
    texts = list(SAMPLES) + ([corpus("multilingual", 300_000)] if ds.corpus_available("multilingual") else [])

    def work(i):
        t = texts[i % len(texts)]
        ids = fb.encode(t, disallowed_special=())
        return ids, fb.decode(ids), fb.encode_to_numpy(t, disallowed_special=()).tolist()

    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        results = list(ex.map(work, range(4 * len(texts))))
    for i, (ids, back, arr) in enumerate(results):
        t = texts[i % len(texts)]
        assert ids == arr == tt.encode(t, disallowed_special=())
        assert back == t


def test_encode_to_numpy_equals_encode(bpe_pair, corpus):
    fb, tt = bpe_pair
    text = corpus("multilingual", 500_000) if ds.corpus_available("multilingual") else "".join(SAMPLES)
    arr = fb.encode_to_numpy(text)
    assert isinstance(arr, np.ndarray)
    assert arr.dtype == np.uint32 and arr.ndim == 1
    assert arr.tolist() == tt.encode(text)
    empty = fb.encode_to_numpy("")
    assert empty.dtype == np.uint32 and empty.shape == (0,)


# ------------------------------------------------------------------ decoding


@settings(max_examples=80, **HYPO)
@given(text=TRICKY_TEXT | UNICODE_TEXT)
def test_decode_roundtrip(bpe_pair, text):
    fb, tt = bpe_pair
    ids = fb.encode(text, disallowed_special=())
    assert fb.decode(ids) == text
    assert fb.decode_bytes(ids) == text.encode()
    assert fb.decode_tokens_bytes(ids) == tt.decode_tokens_bytes(ids)
    assert fb.decode_with_offsets(ids) == tt.decode_with_offsets(ids)


@settings(max_examples=100, **HYPO)
@given(data=st.data())
def test_decode_random_ids(bpe_pair, data):
    """Arbitrary id sequences (usually invalid UTF-8): bytes, every errors= mode, offsets."""
    fb, tt = bpe_pair
    n_ranks = len(tt._mergeable_ranks)  # ranks are 0..n-1 in all OpenAI vocabs
    ids = data.draw(st.lists(st.integers(0, n_ranks - 1) | st.sampled_from([tt.eot_token]), max_size=40))
    assert fb.decode_bytes(ids) == tt.decode_bytes(ids)
    for errors in ("replace", "ignore", "backslashreplace", "surrogateescape"):
        assert fb.decode(ids, errors=errors) == tt.decode(ids, errors=errors)
    assert fb.decode_tokens_bytes(ids) == tt.decode_tokens_bytes(ids)
    try:
        want = tt.decode_with_offsets(ids)
    except UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError):
            fb.decode_with_offsets(ids)
        with pytest.raises(UnicodeDecodeError):
            fb.decode(ids, errors="strict")
    else:
        assert fb.decode_with_offsets(ids) == want


def test_decode_accepts_sequences(bpe_pair):
    fb, tt = bpe_pair
    ids = tt.encode("hello world, sequences of ids")
    want = tt.decode(ids)
    assert fb.decode(ids) == want
    assert fb.decode(tuple(ids)) == want
    assert fb.decode(np.array(ids, dtype=np.uint32)) == want
    assert fb.decode(np.array(ids, dtype=np.int64)) == want
    assert fb.decode(fb.encode_to_numpy("hello world, sequences of ids")) == want
    assert fb.decode([]) == ""
    assert fb.decode_bytes([]) == b""


def test_decode_with_offsets_corpus(bpe_pair, corpus):
    fb, tt = bpe_pair
    text = corpus("multilingual", 200_000)
    ids = tt.encode_ordinary(text)
    assert fb.decode_with_offsets(ids) == tt.decode_with_offsets(ids)


def test_decode_specials(pair):
    fb, tt = pair
    specials = [s for s in _special_sample(tt) if tt._special_tokens[s] != 200018]
    text = _text_with(specials)
    ids = tt.encode(text, allowed_special="all")
    assert fb.decode(ids) == tt.decode(ids) == text
    assert fb.decode_bytes(ids) == tt.decode_bytes(ids)
    assert fb.decode_with_offsets(ids) == tt.decode_with_offsets(ids)


class _MyStr(str):
    pass


def _str_subclass_values():
    import enum

    class Color(str, enum.Enum):
        RED = "red colour <|endoftext|>"

    return [_MyStr("hello world"), np.str_("héllo wörld 😀 — 日本語"), Color.RED,
            _MyStr("x" * 70_000 + " long enough for the piece cache")]


@pytest.mark.parametrize("i", range(4))
def test_str_subclasses(bpe_pair, i):
    """tiktoken accepts any str (numpy.str_ from arrays/pandas, str enums, user subclasses)."""
    fb, tt = bpe_pair
    text = _str_subclass_values()[i]
    assert fb.encode(text, disallowed_special=()) == tt.encode(text, disallowed_special=())
    assert fb.encode(text, allowed_special="all") == tt.encode(text, allowed_special="all")
    assert fb.encode_ordinary(text) == tt.encode_ordinary(text)
    assert fb.encode_to_numpy(text, disallowed_special=()).tolist() == tt.encode(text, disallowed_special=())
    assert fb.encode_ordinary_batch([text, "x"]) == tt.encode_ordinary_batch([text, "x"])
    assert fb.encode_batch([text], disallowed_special=()) == tt.encode_batch([text], disallowed_special=())


def test_str_subclass_single_token(bpe_pair):
    fb, tt = bpe_pair
    for text in (_MyStr("hello"), np.str_("hello")):
        assert fb.encode_single_token(text) == tt.encode_single_token(text)


# ------------------------------------------------------------------ lone surrogates

SURROGATE_TEXTS = [
    "\ud800",
    "a\ud800b",
    "\udfff",
    "x\udc00y\ud800z",
    "\ud83d\ude00",  # a surrogate *pair* as two code units: tiktoken joins it into the emoji
    "hi \ud83d\ude00 there \ud83d",
    "\ud800" * 100,
    "<|endoftext|>\ud800",
]


@pytest.mark.parametrize("text", SURROGATE_TEXTS, ids=[ascii(t) for t in SURROGATE_TEXTS])
def test_lone_surrogates(pair, text):
    fb, tt = pair
    want = tt.encode(text, allowed_special="all")
    assert fb.encode(text, allowed_special="all") == want
    assert fb.encode_ordinary(text) == tt.encode_ordinary(text)
    assert fb.encode_batch([text, "ok"], allowed_special="all") == tt.encode_batch([text, "ok"], allowed_special="all")
    assert fb.encode_ordinary_batch([text]) == tt.encode_ordinary_batch([text])
    # tiktoken 0.14's encode_to_numpy forgets the surrogate fix-up and raises UnicodeEncodeError;
    # fastbpe promises "never a crash", so it must agree with encode instead.
    assert fb.encode_to_numpy(text, allowed_special="all").tolist() == want


@settings(max_examples=60, **HYPO)
@given(text=st.text(st.characters(exclude_categories=("Cn",)) | st.characters(categories=("Cs",)), max_size=60))
def test_hypothesis_with_surrogates(bpe_pair, text):
    fb, tt = bpe_pair
    assert fb.encode_ordinary(text) == tt.encode_ordinary(text)
    assert fb.encode(text, disallowed_special=()) == tt.encode(text, disallowed_special=())


# ------------------------------------------------------------------ custom encodings


def _custom(name, pat_str, base="cl100k_base", extra_specials=None):
    import fastbpe
    import tiktoken

    spec = ds.reference_spec(base) if ds.missing_reason(base) is None else None
    if spec is None:
        require_encoding(base)  # skips with the reason
    specials = {**spec["special_tokens"], **(extra_specials or {})}
    kw = dict(pat_str=pat_str, mergeable_ranks=spec["mergeable_ranks"], special_tokens=specials)
    return fastbpe.Encoding(name, **kw), tiktoken.Encoding(name, **kw)


CUSTOM_PATTERNS = {
    # whitespace split: not one of the known patterns, so the generic `regex` path is used
    "ws": r"\S+|\s+",
    # minbpe's GPT-4 pattern (non-possessive form)
    "gpt4_minbpe": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+""",
    # Llama-3's pattern
    "llama3": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    # a single-digit, ASCII-only pattern
    "ascii": r"""[A-Za-z]+|[0-9]|[^A-Za-z0-9\s]+|\s+""",
}


@pytest.mark.parametrize("pat_name", list(CUSTOM_PATTERNS))
def test_custom_pattern_parity(pat_name, corpus):
    fb, tt = _custom(f"custom_{pat_name}", CUSTOM_PATTERNS[pat_name])
    texts = list(SAMPLES)
    if ds.corpus_available("multilingual"):
        texts += [corpus("multilingual", 300_000), corpus("code", 300_000)]
    for text in texts:
        _check_text(fb, tt, text, f"custom pattern {pat_name}")


@settings(max_examples=60, **HYPO)
@given(text=TRICKY_TEXT)
def test_custom_pattern_hypothesis(text):
    fb, tt = _custom("custom_llama3", CUSTOM_PATTERNS["llama3"])
    _check_text(fb, tt, text, "custom llama3 pattern")


def test_constructor_equals_registry(enc_name):
    """fastbpe.Encoding(**spec) (the constructor path) behaves like get_encoding(name)."""
    import fastbpe

    tt = require_encoding(enc_name)
    fb = fastbpe.Encoding(**ds.reference_spec(enc_name))
    text = "".join(SAMPLES) + _text_with(_special_sample(tt))
    assert fb.encode(text, allowed_special="all") == tt.encode(text, allowed_special="all")
    assert fb.encode_ordinary(text) == tt.encode_ordinary(text)
    assert fb.n_vocab == tt.n_vocab and fb.max_token_value == tt.max_token_value


def test_extra_special_tokens():
    im = {"<|im_start|>": 100264, "<|im_end|>": 100265}
    fb, tt = _custom("cl100k_im", CUSTOM_PATTERNS["gpt4_minbpe"], extra_specials=im)
    text = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<|endoftext|>"
    assert fb.encode(text, allowed_special="all") == tt.encode(text, allowed_special="all")
    assert fb.encode(text, allowed_special={"<|im_start|>", "<|im_end|>"}, disallowed_special=()) == tt.encode(
        text, allowed_special={"<|im_start|>", "<|im_end|>"}, disallowed_special=())
    _raises_same(lambda: fb.encode(text, allowed_special={"<|im_start|>"}),
                 lambda: tt.encode(text, allowed_special={"<|im_start|>"}))
    assert fb.n_vocab == tt.n_vocab
    assert fb.special_tokens_set == tt.special_tokens_set


def test_pair_fixture_covers_registry_names():
    """The names tested here are exactly the ones the brief lists (guards against typos)."""
    import tiktoken_ext.openai_public as op

    assert set(ds.ALL_ENCODINGS) == set(op.ENCODING_CONSTRUCTORS)


@pytest.mark.parametrize("num_threads", [1, 2])
def test_batch_mixed_documents(pair, num_threads):
    """The batch kernel encodes a thread's whole share in one call (shared piece cache across
    documents once they total 64 kB): mix ASCII, non-ASCII, empty, lone surrogates, str
    subclasses and repeated long documents, and compare with tiktoken one by one."""
    fb, tt = pair
    base = ["Hello world, the cat sat. " * 50, "Ünïcödé ｔｅｘｔ 漢字 😀 " * 40, "", "x",
            "surrogate \ud800 here", "pair \ud83d\ude00 ok", "   \n\n\t  ", "1234567890" * 30]
    docs = base * 60 + [np.str_("numpy str subclass")]
    want = [tt.encode_ordinary(d) for d in docs]
    assert fb.encode_ordinary_batch(docs, num_threads=num_threads) == want
    assert fb.encode_batch(docs, num_threads=num_threads) == want


def test_batches_run_on_kept_threads():
    """encode_ordinary_batch / encode_batch on k threads reuse the process's kept pool, so each
    thread's piece cache stays warm from one batch to the next (a new thread per call started
    cold every time, and 2 threads ran slower than 1); the ids equal one-by-one encoding."""
    import threading

    from fastbpe import threads
    from helpers import toy_encoding

    enc = toy_encoding()
    docs = [f"doc {i} " + "hello world, " * (i % 7 + 20) for i in range(40)]   # not a small batch
    assert threads.batch_threads(docs, 2) == 2
    want = [enc.encode_ordinary(d) for d in docs]
    seen = []   # the Thread objects themselves (an ident can be reused once a thread ends)
    real = enc._encode_ordinary_many

    def spy(texts):
        seen.append(threading.current_thread())
        return real(texts)

    enc._encode_ordinary_many = spy
    for _ in range(3):
        assert enc.encode_ordinary_batch(docs, num_threads=2) == want
        assert enc.encode_batch(docs, num_threads=2) == want
    # the same threads each time: the caller, which takes chunks too, and one kept pool thread
    assert len(set(seen)) <= 2 and len(set(seen) - {threading.current_thread()}) <= 1
    assert threads.kept_pool(2) is threads.kept_pool(2)


def test_small_batches_run_on_the_calling_thread(monkeypatch):
    """threads.batch_threads: a list of str under SMALL_BATCH_CHARS characters in all runs on one
    thread (what the pool costs is more than its work), anything else keeps the count; and the
    kept pool's map runs every chunk once, in order, with the caller taking chunks too, raising
    the first failing chunk's error after every thread stopped."""
    import threading

    from fastbpe import threads
    from helpers import toy_encoding

    monkeypatch.setattr(threads, "SMALL_BATCH_CHARS", 8192)   # the library's (conftest sets 0)
    small, big = ["a" * 100] * 8, ["a" * 2000] * 8
    assert threads.batch_threads(small, 4) == 1 and threads.batch_threads(big, 4) == 4
    assert threads.batch_threads(small + [3], 4) == 4 and threads.batch_threads(tuple(small), 4) == 4
    assert threads.batch_threads(small, None) is None and threads.batch_threads([], 2) == 1
    seen = []

    def chunk(part):
        seen.append(threading.get_ident())
        bad = [x for x in part if x < 0]
        if bad:
            raise ValueError(f"bad {bad[0]}")
        return [x * 2 for x in part]

    items = list(range(40))
    assert threads.parallel_map(chunk, items, 2, keep_threads=True) == [x * 2 for x in items]
    assert len(seen) == 4   # four chunks, each run once
    with pytest.raises(ValueError, match="bad -1"):   # chunks 1, 2 and 3 fail: chunk 1's error
        threads.parallel_map(chunk, [0, 1, 2, -1, 4, 5, 6, 7, -2, -3, 10, 11], 2, keep_threads=True)
    enc = toy_encoding()
    texts = ["hello world " * k for k in range(1, 40)]
    assert enc.encode_ordinary_batch(texts[:3], num_threads=4) == [enc.encode_ordinary(t) for t in texts[:3]]
    assert enc.encode_ordinary_batch(texts * 20, num_threads=2) == [enc.encode_ordinary(t) for t in texts * 20]


def test_kept_pool_takes_no_chunk_after_one_failed():
    """After a chunk fails (an error, or Ctrl-C landing in the caller's chunk), no thread starts
    another chunk: the error is raised when the chunks in hand finish, not after the whole batch
    (review's finding on 5647d4a: chunks 4, 8 and 12 of 16 started after chunk 0 failed)."""
    import threading
    import time

    from fastbpe import threads
    started, lock, failed = [], threading.Lock(), threading.Event()

    def fn_chunk(chunk):
        with lock:
            started.append((chunk[0], failed.is_set()))
        if chunk[0] == 0:
            failed.set()
            raise ValueError("chunk 0")
        time.sleep(0.05)
        return chunk

    with pytest.raises(ValueError, match="chunk 0"):
        threads.parallel_map(fn_chunk, list(range(16)), 2, keep_threads=True)   # 4 chunks of 4
    assert len([first for first, seen_failure in started if seen_failure]) <= 1, started
