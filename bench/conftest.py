"""Benchmarks (pytest-benchmark): `python -m pytest bench/ --benchmark-only`.

Smoke run: `FASTBPE_BENCH_MB=0.05 python -m pytest bench/ --benchmark-disable`.

The files are named `bench_*.py` so the normal test run (testpaths = tests) never collects
them; the hook below collects them when `bench/` is passed explicitly.
"""
from __future__ import annotations

import functools
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import datasources as ds  # noqa: E402
import peers  # noqa: E402  (sets FASTBPE_DATA_DIR to shared/data/vocab when present)

# Input size scale: FASTBPE_BENCH_MB=0.05 for a smoke run (default 1: 1 MB single documents,
# 2 MB batches).
BENCH_MB = float(os.environ.get("FASTBPE_BENCH_MB", "1"))


def pytest_collect_file(file_path, parent):
    # a file named on the command line is collected by pytest itself: don't collect it twice
    if (file_path.suffix == ".py" and file_path.name.startswith("bench_")
            and not parent.session.isinitpath(file_path)):
        return pytest.Module.from_parent(parent, path=file_path)
    return None


def peer(lib: str, name: str) -> peers.Peer:
    """The benchmark adapter for `lib` (see bench/peers.py: fastbpe, fastbpe-regex, tiktoken,
    bpe-openai, tokendagger); skips with the reason when it cannot run `name` here."""
    try:
        return peers.build(lib, name)
    except peers.Unavailable as e:
        pytest.skip(f"{lib}: {e}")


def encoder(lib: str, name: str):
    """The library's own encoding object for `lib` and encoding `name`."""
    return peer(lib, name).obj


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


