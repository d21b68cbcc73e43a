"""Encode throughput: fastbpe (C scanner and `regex` splitting) vs tiktoken, bpe-openai,
tokendagger, and HF tokenizers for GPT-2 / r50k_base.

Run: python -m pytest bench/bench_encode.py --benchmark-only [--benchmark-group-by=group]
Smoke: FASTBPE_BENCH_MB=0.05 python -m pytest bench/bench_encode.py --benchmark-disable
Each benchmark first checks that the library gives the same ids as tiktoken on its input (the
check is also the warm-up); a library that cannot run an encoding here is skipped with the
reason (see bench/peers.py).  `python bench/compare.py` gives the same comparison as one table.
"""
from __future__ import annotations

import pytest
from conftest import BENCH_MB, hf_gpt2, peer, text_of
from peers import documents

from peers import BPE_OPENAI_FALLBACK_NOTE, LIBS

ENCODINGS = ["cl100k_base", "o200k_base", "r50k_base"]
KINDS = ["english", "code", "multilingual"]
SINGLE_BYTES = int(BENCH_MB * (1 << 20))
BATCH_BYTES = int(2 * BENCH_MB * (1 << 20))


def _reference(enc_name):
    return peer("tiktoken", enc_name)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("enc_name", ENCODINGS)
@pytest.mark.parametrize("lib", LIBS)
def test_single_document(benchmark, lib, enc_name, kind):
    text = text_of(kind, SINGLE_BYTES)
    p = peer(lib, enc_name)
    benchmark.group = f"single doc {enc_name} {kind}"
    benchmark.extra_info["bytes"] = len(text.encode())
    fn, ids, fallback = p.single(text)
    assert ids == _reference(enc_name).encode_ordinary(text)
    if fallback:
        benchmark.extra_info["note"] = BPE_OPENAI_FALLBACK_NOTE
    benchmark(fn)


@pytest.mark.parametrize("enc_name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("lib", LIBS)
def test_many_small_documents(benchmark, lib, enc_name):
    """10k short texts, one encode() call each (each library's own `encode` and its default
    special-token handling): the per-call overhead."""
    docs = documents(text_of("english", SINGLE_BYTES), 100)[:10_000]
    if lib == "fastokens":
        pytest.skip("fastokens' encode returns an Encoding object (HF style), not a list of ids")
    enc = peer(lib, enc_name).obj
    benchmark.group = f"10k small docs {enc_name}"

    def run():
        return [enc.encode(d) for d in docs]

    assert run() == [_reference(enc_name).obj.encode(d) for d in docs]
    benchmark(run)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("enc_name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("lib", LIBS)
def test_batch(benchmark, lib, enc_name, threads):
    """The library's batch API on ~4 kB documents (tokendagger: encode_batch)."""
    docs = documents(text_of("english", BATCH_BYTES), 4000)
    p = peer(lib, enc_name)
    if p.batch is None:
        pytest.skip(f"{lib} has no batch API with a thread count")
    benchmark.group = f"batch {enc_name} threads={threads}"
    assert p.batch(docs, threads) == _reference(enc_name).batch(docs, 1)
    benchmark(p.batch, docs, threads)


@pytest.mark.parametrize("kind", KINDS)
def test_hf_gpt2_single_document(benchmark, kind):
    """HF tokenizers with GPT-2's tokenizer.json: same ids as r50k_base (compare with the
    r50k_base rows of test_single_document)."""
    text = text_of(kind, SINGLE_BYTES)
    tok = hf_gpt2()
    benchmark.group = f"single doc r50k_base {kind}"
    assert tok.encode(text, add_special_tokens=False).ids == _reference("r50k_base").encode_ordinary(text)
    benchmark(tok.encode, text, add_special_tokens=False)


def test_hf_gpt2_batch(benchmark):
    """HF's batch uses its own rayon pool (RAYON_NUM_THREADS; default all cores)."""
    docs = documents(text_of("english", BATCH_BYTES), 4000)
    tok = hf_gpt2()
    benchmark.group = "batch r50k_base (HF, rayon default threads)"
    out = tok.encode_batch_fast(docs, add_special_tokens=False)
    assert [e.ids for e in out] == _reference("r50k_base").batch(docs, 1)
    benchmark(tok.encode_batch_fast, docs, add_special_tokens=False)
