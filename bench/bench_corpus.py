"""Corpus encoding (training data) under pytest-benchmark: fastbpe `encode_files` vs tokie's
`encode_files` vs tiktoken `encode_ordinary_batch` + numpy, r50k_base, both cores.

Run: python -m pytest bench/bench_corpus.py --benchmark-only
Smoke: FASTBPE_BENCH_MB=0.05 python -m pytest bench/bench_corpus.py --benchmark-disable
Input: 8 files of English (8 x FASTBPE_BENCH_MB MB in all), each cut into documents at blank
lines.  Each peer's ids and offsets are first checked equal to tiktoken's, document by
document.  `python bench/corpus_table.py` gives the 250 MB comparison with peak memory.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import BENCH_MB, peer, text_of

ENCODING = "r50k_base"
SPLIT = "\n\n"
THREADS = 2


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    text = text_of("english", int(8 * BENCH_MB * (1 << 20)))
    size = -(-len(text) // 8)
    root = tmp_path_factory.mktemp("corpus")
    paths = []
    for i in range(8):
        path = root / f"{i}.txt"
        path.write_text(text[i * size:(i + 1) * size], encoding="utf-8")
        paths.append(str(path))
    return paths


@pytest.fixture(scope="module")
def want(files):
    """(ids, offsets) from tiktoken, one document at a time."""
    enc = peer("tiktoken", ENCODING).obj
    ids, offsets = [], [0]
    for path in files:
        with open(path, encoding="utf-8") as f:
            for doc in f.read().split(SPLIT):
                if doc:
                    ids += enc.encode_ordinary(doc)
                    offsets.append(len(ids))
    return ids, offsets


def check(result, want):
    ids, offsets = result
    assert np.asarray(ids).tolist() == want[0]
    assert np.asarray(offsets).tolist() == want[1]


def test_fastbpe_encode_files(benchmark, files, want):
    enc = peer("fastbpe", ENCODING).obj
    benchmark.group = "encode_files r50k_base"

    def run():
        return enc.encode_files(files, split_on=SPLIT, separator=None, num_threads=THREADS,
                                show_progress=False)

    check(run(), want)
    benchmark(run)


def test_tokie_encode_files(benchmark, files, want, monkeypatch):
    tokie = pytest.importorskip("tokie")
    import datasources as ds

    if not ds.HF_GPT2_JSON.is_file():
        pytest.skip(f"{ds.HF_GPT2_JSON} not found")
    monkeypatch.setenv("RAYON_NUM_THREADS", str(THREADS))  # read when its pool first starts
    tk = tokie.Tokenizer.from_json(str(ds.HF_GPT2_JSON))
    tk.no_truncation()
    benchmark.group = "encode_files r50k_base"

    def run():
        return tk.encode_files(files, separator=SPLIT.encode())

    check(run(), want)
    benchmark(run)


def test_tiktoken_batch_plus_numpy(benchmark, files, want):
    enc = peer("tiktoken", ENCODING).obj
    benchmark.group = "encode_files r50k_base"

    def run():
        docs = []
        for path in files:
            with open(path, encoding="utf-8", errors="replace") as f:
                docs += [d for d in f.read().split(SPLIT) if d]
        lists = enc.encode_ordinary_batch(docs, num_threads=THREADS)
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum([len(x) for x in lists], out=offsets[1:])
        return np.concatenate([np.array(x, dtype=np.uint32) for x in lists]), offsets

    check(run(), want)
    benchmark(run)
