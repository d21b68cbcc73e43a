"""The cases of bench/peers.py under pytest-benchmark, grouped per row (`benchmark.group` is the
row name), so `--benchmark-save` / `--benchmark-compare` compare runs row by row:

    python -m pytest bench/ --benchmark-only --benchmark-save=before
    python -m pytest bench/ --benchmark-only --benchmark-compare

Rows: "encode <vocab> <corpus>" (one document), "short <vocab>" (distinct 100-character strings,
FASTBPE_BENCH_SHORT calls a round), "batch <vocab> <corpus> <k> thr" (2 kB documents).  As in
peers.py, FASTBPE_BENCH_MB (default 1: the corpora must hold three disjoint sets, below) MB of
each corpus is cut in 4 parts: part 0 warms up, each of the 3 rounds encodes the next part once
(the first time the library sees it: encode rows and 1- and 2-thread batches use disjoint sets); after timing,
every library gets its own str objects (CPython caches a str's UTF-8 once a binding asks), and
every round's ids are checked against tiktoken / HF tokenizers and an inexact peer is an xfail
("inexact").  All in
one process pinned to one core (two for the 2-thread batches); peers whose thread pool is sized at
start-up are skipped at 2 threads (peers.py runs them in their own processes), as are the
loading, transformers, training and corpus sections, which need fresh processes.
A missing peer or data file is a skip with the reason.
"""
from __future__ import annotations

import functools
import os

import pytest

import common as c

MB = float(os.environ.get("FASTBPE_BENCH_MB", "1"))
SHORT_N = int(os.environ.get("FASTBPE_BENCH_SHORT", "1000"))
SHORT_VOCABS = ["cl100k_base", "Qwen2.5 tokenizer.json"]
BATCH_VOCABS = ["cl100k_base", "Qwen2.5 tokenizer.json"]
CALL_THREADS = {"fastbpe", "tiktoken", "quicktok-v1"}  # take the thread count per call


# One process runs every case, and caches outlive calls: the encode rows and the 1- and 2-thread
# batches each get their own disjoint set of parts (slot), so no library times a text it has seen.
SLOTS = {"encode": 0, 1: 1, 2: 2}


@functools.lru_cache(maxsize=None)
def corpus_parts(label: str, slot="encode") -> list[str]:
    try:
        return c.parts(c.CORPORA[label], MB, slot=SLOTS[slot], slots=len(SLOTS))
    except c.Unavailable as e:
        pytest.skip(str(e))


@functools.lru_cache(maxsize=None)
def short_sets() -> list[list[str]]:
    try:
        strings = c.short_strings(SHORT_N * 4)
    except c.Unavailable as e:
        pytest.skip(str(e))
    return [strings[i * SHORT_N:(i + 1) * SHORT_N] for i in range(4)]


def _get(factory, lib: str, vocab: str):
    try:
        return factory(lib, vocab)
    except c.Unavailable as e:
        pytest.skip(f"{lib}: {e}")


@functools.lru_cache(maxsize=None)
def reference(kind: str, vocab: str, key: str) -> list:
    """The reference library's ids for the inputs of one row (computed once, untimed)."""
    ref = c.REFERENCE[c.VOCABS[vocab][0]]
    if kind == "encode":
        fn = _get(c.encoder, ref, vocab)
        return [c.digest(fn(t)) for t in corpus_parts(key, "encode")[1:]]
    if kind == "short":
        fn = _get(c.short_encoder, ref, vocab)
        return [c.digest_many([fn(s) for s in strings]) for strings in short_sets()[1:]]
    fn = _get(c.batcher, ref, vocab)
    label, k = key
    return [c.digest_many(fn(c.documents(t), 1)) for t in corpus_parts(label, k)[1:]]


@pytest.fixture
def cores(request):
    """Pin this process to the first k cores for the test (k = the test's `threads`, or 1)."""
    k = getattr(request, "param", 1)
    old = os.sched_getaffinity(0)
    got = c.pin(k)
    if len(got) < k:
        os.sched_setaffinity(0, old)
        pytest.skip(f"{k} cores needed, {len(got)} usable")
    yield k
    os.sched_setaffinity(0, old)


def run_rounds(benchmark, fn, inputs: list, digest) -> list:
    """inputs[0] warms up; each of the others is one timed round; the digests of their results."""
    fn(inputs[0])
    results, it = [], iter(inputs[1:])

    def target(x):
        results.append(fn(x))

    benchmark.pedantic(target, setup=lambda: ((next(it),), {}), rounds=len(inputs) - 1,
                       iterations=1, warmup_rounds=0)
    return [digest(r) for r in results]


def check(got: list, want: list, what: str) -> None:
    # --benchmark-disable runs one round only: compare the rounds that ran
    assert got, f"{what}: nothing ran"
    if got != want[:len(got)]:
        pytest.xfail(f"inexact: {what}: ids differ from the reference")


@pytest.mark.parametrize("lib", c.ENCODE_LIBS)
@pytest.mark.parametrize("label", list(c.CORPORA))
@pytest.mark.parametrize("vocab", list(c.VOCABS))
def test_encode(benchmark, cores, vocab, label, lib):
    benchmark.group = f"encode {vocab} {label}"
    fn = _get(c.encoder, lib, vocab)
    texts = c.fresh_strs(corpus_parts(label, "encode"))  # no other library has read their UTF-8
    benchmark.extra_info["bytes_per_round"] = sum(len(t.encode()) for t in texts[1:]) / (len(texts) - 1)
    got = run_rounds(benchmark, fn, texts, c.digest)
    check(got, reference("encode", vocab, label), f"{lib} on {vocab} {label}")


@pytest.mark.parametrize("lib", c.ENCODE_LIBS)
@pytest.mark.parametrize("vocab", SHORT_VOCABS)
def test_short(benchmark, cores, vocab, lib):
    benchmark.group = f"short {vocab}"
    fn = _get(c.short_encoder, lib, vocab)
    benchmark.extra_info["calls_per_round"] = SHORT_N
    sets = [c.fresh_strs(strings) for strings in short_sets()]  # no other library has read their UTF-8
    got = run_rounds(benchmark, lambda strings: [fn(s) for s in strings], sets, c.digest_many)
    check(got, reference("short", vocab, ""), f"{lib} on {vocab}")


@pytest.mark.parametrize("cores", [1, 2], indirect=True)
@pytest.mark.parametrize("lib", [lib for lib in c.ENCODE_LIBS if lib != "rs-bpe"])
@pytest.mark.parametrize("label", list(c.CORPORA))
@pytest.mark.parametrize("vocab", BATCH_VOCABS)
def test_batch(benchmark, cores, vocab, label, lib):
    benchmark.group = f"batch {vocab} {label} {cores} thr"
    if cores > 1 and lib not in CALL_THREADS:
        pytest.skip(f"{lib} sizes its thread pool at start-up: `python bench/peers.py --sections batch`")
    fn = _get(c.batcher, lib, vocab)
    batches = [c.documents(t) for t in corpus_parts(label, cores)]
    got = run_rounds(benchmark, lambda docs: fn(docs, cores), batches, c.digest_many)
    check(got, reference("batch", vocab, (label, cores)), f"{lib} on {vocab} {label}")
