"""Benchmarks (pytest-benchmark): `python -m pytest bench/ --benchmark-only`.

The files are named `bench_*.py` so the normal test run (testpaths = tests) never collects
them; the hook below collects them when `bench/` is passed explicitly.
"""
from __future__ import annotations

import functools
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

import datasources as ds  # noqa: E402

if ds.VOCAB_DIR.is_dir():
    os.environ.setdefault("FASTBPE_DATA_DIR", str(ds.VOCAB_DIR))


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".py" and file_path.name.startswith("bench_"):
        return pytest.Module.from_parent(parent, path=file_path)
    return None


@functools.lru_cache(maxsize=None)
def encoder(lib: str, name: str):
    """An encoding object for `lib` in {"fastbpe", "tiktoken"}; skips when the vocab is missing."""
    reason = ds.missing_reason(name)
    if reason is not None:
        pytest.skip(reason)
    if lib == "fastbpe":
        import fastbpe

        return fastbpe.get_encoding(name)
    return ds.reference_encoding(name)


@functools.lru_cache(maxsize=None)
def hf_gpt2():
    """HF tokenizers' GPT-2 byte-level BPE (its pre-tokenizer is r50k's pattern)."""
    if not ds.HF_GPT2_JSON.is_file():
        pytest.skip(f"{ds.HF_GPT2_JSON} not found")
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(ds.HF_GPT2_JSON))
    tok.no_truncation()  # this copy of tokenizer.json sets truncation to 50 tokens
    return tok


def text_of(kind: str, n_bytes: int = 1 << 20) -> str:
    """~n_bytes of English, code or multilingual text (the shared corpora, else a built-in sample)."""
    name = {"english": "large_en", "code": "code", "multilingual": "multilingual"}[kind]
    if ds.corpus_available(name):
        return ds.load_corpus(name, n_bytes)
    if kind == "english" and ds.corpus_available("tinyshakespeare"):
        return ds.load_corpus("tinyshakespeare", n_bytes)
    pytest.skip(f"corpus {name} not available")


def documents(text: str, size: int = 2000) -> list[str]:
    """Cut text into documents of about `size` characters at line breaks."""
    docs, start = [], 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        docs.append(text[start:end])
        start = end
    return docs
