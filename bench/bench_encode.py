"""Encode throughput: fastbpe vs tiktoken (and HF tokenizers for GPT-2 / r50k_base).

Run: python -m pytest bench/ --benchmark-only [--benchmark-group-by=param:kind]
Each benchmark first checks that the library gives the same ids as tiktoken on its input.
"""
from __future__ import annotations

import pytest
from conftest import documents, encoder, hf_gpt2, text_of

LIBS = ["fastbpe", "tiktoken"]
ENCODINGS = ["cl100k_base", "o200k_base", "r50k_base"]
KINDS = ["english", "code", "multilingual"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("enc_name", ENCODINGS)
@pytest.mark.parametrize("lib", LIBS)
def test_single_document(benchmark, lib, enc_name, kind):
    text = text_of(kind, 1 << 20)
    enc = encoder(lib, enc_name)
    benchmark.group = f"single 1MB doc {enc_name} {kind}"
    benchmark.extra_info["bytes"] = len(text.encode())
    ids = benchmark(enc.encode_ordinary, text)
    assert ids == encoder("tiktoken", enc_name).encode_ordinary(text)


@pytest.mark.parametrize("enc_name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("lib", LIBS)
def test_many_small_documents(benchmark, lib, enc_name):
    """10k short texts, one encode() call each: the per-call overhead."""
    docs = documents(text_of("english", 1 << 20), 100)[:10_000]
    enc = encoder(lib, enc_name)
    benchmark.group = f"10k small docs {enc_name}"

    def run():
        return [enc.encode(d) for d in docs]

    assert benchmark(run) == [encoder("tiktoken", enc_name).encode(d) for d in docs]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("enc_name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("lib", LIBS)
def test_batch(benchmark, lib, enc_name, threads):
    docs = documents(text_of("english", 2 << 20), 4000)
    enc = encoder(lib, enc_name)
    benchmark.group = f"batch 2MB {enc_name} threads={threads}"
    out = benchmark(enc.encode_ordinary_batch, docs, num_threads=threads)
    assert out == encoder("tiktoken", enc_name).encode_ordinary_batch(docs, num_threads=threads)


@pytest.mark.parametrize("kind", KINDS)
def test_hf_gpt2_single_document(benchmark, kind):
    """HF tokenizers with GPT-2's tokenizer.json: same ids as r50k_base (compare with the
    r50k_base rows of test_single_document)."""
    text = text_of(kind, 1 << 20)
    tok = hf_gpt2()
    benchmark.group = f"single 1MB doc r50k_base {kind}"
    enc = benchmark(tok.encode, text, add_special_tokens=False)
    assert enc.ids == encoder("tiktoken", "r50k_base").encode_ordinary(text)


def test_hf_gpt2_batch(benchmark):
    """HF's batch uses its own rayon pool (RAYON_NUM_THREADS; default all cores)."""
    docs = documents(text_of("english", 2 << 20), 4000)
    tok = hf_gpt2()
    benchmark.group = "batch 2MB r50k_base (HF, rayon default threads)"
    out = benchmark(tok.encode_batch_fast, docs, add_special_tokens=False)
    assert [e.ids for e in out] == encoder("tiktoken", "r50k_base").encode_ordinary_batch(docs)
