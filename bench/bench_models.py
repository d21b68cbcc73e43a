"""The models section of bench/peers.py under pytest-benchmark: `encode_batch` on each shared
tokenizer.json family file (the shared data's vocab/hf/<family>/tokenizer.json, found, not
listed), one benchmark group per file ("models <family>"), so `--benchmark-compare` lines them up:

    python -m pytest bench/bench_models.py --benchmark-only
    python -m pytest bench/ --benchmark-only -k "models and deepseek"

Columns as in peers.py (`common.MODEL_LIBS`): fastbpe `encode_batch` with `.ids` read, fastbpe
`encode_ids_batch`, HF tokenizers and fastokens `encode_batch`; no special tokens, truncation off,
one thread (one core).  Input: FASTBPE_BENCH_MB (default 1) MB of English from 20 MB into
large_en (text no other benchmark here reads), 4 parts cut into ~2 kB documents: part 0 warms
up, each of the 3 rounds encodes the next part once, as fresh documents; after timing the ids
are checked against HF tokenizers' and an inexact library is an xfail.  Without the shared data
every case skips, saying so; a library that cannot load a file skips with its reason.
"""
from __future__ import annotations

import functools
import os

import pytest

import common as c
from bench_peers import check, cores, run_rounds  # noqa: F401  (cores: the pinning fixture, used by name)

MB = float(os.environ.get("FASTBPE_BENCH_MB", "1"))
START_MB = 20.0  # past the encode rows' window (16 MB) and the short strings (17-19 MB)
FILES = c.model_files()
FAMILIES = sorted(FILES) or [pytest.param("none", marks=pytest.mark.skip(
    reason=f"no tokenizer.json under {c.HF_DIR} (shared data absent; FASTBPE_SHARED points to it)"))]


@functools.lru_cache(maxsize=None)
def english_parts() -> tuple[str, ...]:
    try:
        return tuple(c.parts("large_en", MB, start_mb=START_MB))
    except c.Unavailable as e:
        pytest.skip(str(e))


def batches() -> list[list[str]]:
    """The parts as documents: new str objects on every call (no library meets another's)."""
    return [c.documents(t) for t in english_parts()]


@functools.lru_cache(maxsize=None)
def reference(family: str) -> list[str]:
    """HF tokenizers' ids of each timed round (its own tokenizer object, untimed)."""
    try:
        fn, _ = c.model_batcher("HF tokenizers", FILES[family])
    except c.Unavailable as e:
        pytest.skip(f"reference: {e}")
    return [c.digest_many(fn(docs)) for docs in batches()[1:]]


@pytest.mark.parametrize("lib", c.MODEL_LIBS)
@pytest.mark.parametrize("family", FAMILIES)
def test_models(benchmark, cores, family, lib):  # noqa: F811  (cores: the fixture)
    benchmark.group = f"models {family}"
    try:
        fn, engine = c.model_batcher(lib, FILES[family])
    except c.Unavailable as e:
        pytest.skip(str(e))
    if engine is not None:
        benchmark.extra_info["engine"] = engine
    docs = batches()
    benchmark.extra_info["bytes_per_round"] = sum(len(d.encode()) for b in docs[1:] for d in b) / (len(docs) - 1)
    got = run_rounds(benchmark, fn, docs, c.digest_many)
    check(got, reference(family), f"{lib} on {family}")
