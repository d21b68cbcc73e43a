"""Encode throughput on Hugging Face tokenizer.json models (Llama-3-based, Qwen2.5): fastbpe vs HF
tokenizers, fastokens, tokie and kitoken, under pytest-benchmark.

Run: python -m pytest bench/bench_hf.py --benchmark-only [--benchmark-group-by=group]
Smoke: FASTBPE_BENCH_MB=0.05 python -m pytest bench/bench_hf.py --benchmark-disable
Each benchmark first compares the library's ids with HF tokenizers' on its input (also the
warm-up): fastbpe must be exact; another library that is not gets `extra_info["exact"] = False`
and a warning.  Batch rows run in this process, so the Rust libraries use their default thread
pools; `python bench/compare_hf.py` pins each library to k cores and prints one table.
"""
from __future__ import annotations

import warnings

import pytest
from conftest import BENCH_MB, text_of

import hf_peers
from peers import Unavailable, documents

KINDS = ["english", "code", "multilingual"]
SLICE_BYTES = int(BENCH_MB * 500_000)  # 0.5 MB by default


def hf_peer(lib: str, model: str) -> hf_peers.HFPeer:
    try:
        return hf_peers.build(lib, model)
    except Unavailable as e:
        pytest.skip(f"{lib}: {e}")


def check(benchmark, lib, ids, want):
    exact = ids == want
    benchmark.extra_info["exact"] = exact
    if lib == "fastbpe":
        assert exact, "fastbpe's ids differ from HF tokenizers'"
    elif not exact:
        warnings.warn(f"{lib}: ids differ from HF tokenizers' ({benchmark.group})")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("model", list(hf_peers.MODELS))
@pytest.mark.parametrize("lib", hf_peers.LIBS)
def test_hf_single_document(benchmark, lib, model, kind):
    p, ref = hf_peer(lib, model), hf_peer(hf_peers.BASELINE, model)
    text = text_of(kind, SLICE_BYTES)
    benchmark.group = f"tokenizer.json {model} {kind} 1 doc"
    benchmark.extra_info["bytes"] = len(text.encode())
    check(benchmark, lib, p.single(text), ref.single(text))
    benchmark(p.single, text)


@pytest.mark.parametrize("model", list(hf_peers.MODELS))
@pytest.mark.parametrize("lib", hf_peers.LIBS)
def test_hf_batch(benchmark, lib, model):
    """~4 kB documents; fastbpe on 2 threads, the others on their default pools."""
    p, ref = hf_peer(lib, model), hf_peer(hf_peers.BASELINE, model)
    docs = documents(text_of("english", 2 * SLICE_BYTES), 4000)
    benchmark.group = f"tokenizer.json {model} batch"
    check(benchmark, lib, p.batch(docs, 2), ref.batch(docs, 2))
    benchmark(p.batch, docs, 2)
