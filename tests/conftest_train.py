"""Shared helpers for the training tests (imported, not a pytest plugin)."""
from __future__ import annotations

import lzma
import os

import numpy as np
import pytest

CORPUS = os.environ.get("FASTBPE_CORPUS", "/work/shared/data/corpus")


def corpus_text(name: str, limit: int | None = None) -> str:
    """A text from the shared corpus; skips the test when it is not there."""
    path = os.path.join(CORPUS, name + ".txt.xz")
    if not os.path.exists(path):
        pytest.skip(f"corpus file {path} not available (set FASTBPE_CORPUS)")
    with lzma.open(path, "rt", encoding="utf-8") as f:
        return f.read(limit) if limit else f.read()


def kernel_arrays(piece_counts: dict):
    """PieceTrainer inputs from {bytes: count} (all pieces, in dict order)."""
    pieces = list(piece_counts)
    offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(p) for p in pieces])
    tokens = np.frombuffer(b"".join(pieces), dtype=np.uint8).astype(np.int32)
    counts = np.array([piece_counts[p] for p in pieces], dtype=np.int64)
    return tokens, offsets, counts


def as_triples(pairs, counts):
    return [(int(a), int(b), int(c)) for (a, b), c in zip(pairs.tolist(), counts.tolist())]
