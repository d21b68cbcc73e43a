"""BPE's two steps on a list of ids in plain Python, written to be read (minbpe's helpers;
tiktoken's `_educational` merges with them too).  The fast paths are the kernels."""
from __future__ import annotations

__all__ = ["get_stats", "merge"]


def get_stats(ids, counts=None):
    """{(a, b): how many times the pair occurs in ids}, in order of first occurrence;
    adds to `counts` when given."""
    counts = {} if counts is None else counts
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge(ids, pair, idx):
    """ids with every non-overlapping occurrence of pair (left to right) replaced by idx."""
    out = []
    i = 0
    n = len(ids)
    while i < n:
        if i < n - 1 and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out
