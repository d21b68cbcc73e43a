"""A slow, obviously-correct reference for BPE training and merges-semantics encoding.

This is the spec the Cython kernels in ``fastbpe/_train.pyx`` are tested against.  It is
written for clarity, in the style of minbpe: every function is short and recounts
everything from scratch, so there is no incremental state that could go wrong.

Two tie rules exist for choosing the next merge among pairs with the same count:

* ``"pair"`` -- the smallest pair (left id, then right id).  HF tokenizers, rustbpe and
  bpeasy do this; it is fastbpe's default.
* ``"first"`` -- the pair whose first occurrence in the current sequence comes first.
  This is what minbpe's ``max(stats, key=stats.get)`` over an insertion-ordered dict
  gives, because ``stats`` is rebuilt every step by scanning the sequence in order.
"""
from __future__ import annotations

from collections import Counter

import regex


def get_stats(ids, counts=None, weight=1):
    """Add the count of every adjacent pair in ``ids`` to ``counts`` (insertion-ordered)."""
    counts = {} if counts is None else counts
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + weight
    return counts


def merge(ids, pair, idx):
    """Replace every occurrence of ``pair`` in ``ids`` by ``idx``, greedily left to right."""
    out = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def train_minbpe(chunks, num_merges):
    """minbpe's algorithm: ``chunks`` is the ordered list of pieces (bytes), one per
    occurrence.  Returns ``[(left, right, count), ...]``.  Ties: first occurrence."""
    ids = [list(c) for c in chunks]
    merges = []
    for i in range(num_merges):
        stats = {}
        for chunk_ids in ids:
            get_stats(chunk_ids, stats)
        if not stats:
            break  # every chunk is a single token; minbpe would crash here
        pair = max(stats, key=stats.get)
        idx = 256 + i
        ids = [merge(chunk_ids, pair, idx) for chunk_ids in ids]
        merges.append((pair[0], pair[1], stats[pair]))
    return merges


def train_counts(piece_counts, num_merges, *, tie="pair", min_frequency=0,
                 max_token_length=None):
    """Train over unique pieces with their counts.  ``piece_counts`` maps bytes -> count;
    for ``tie="first"`` its iteration order must be the order of first appearance.
    Returns ``[(left, right, count), ...]``."""
    pieces = [(list(p), c) for p, c in piece_counts.items() if c > 0]
    token_len = [1] * 256
    merges = []
    while len(merges) < num_merges:
        stats = {}
        for ids, c in pieces:
            get_stats(ids, stats, c)
        if max_token_length is not None:
            stats = {p: c for p, c in stats.items()
                     if token_len[p[0]] + token_len[p[1]] <= max_token_length}
        if not stats:
            break
        if tie == "pair":
            # max count; among equals the smallest pair
            pair = min(stats, key=lambda p: (-stats[p], p))
        elif tie == "first":
            pair = max(stats, key=stats.get)  # the first maximal one in insertion order
        else:
            raise ValueError(tie)
        count = stats[pair]
        if count < max(min_frequency, 1):
            break
        idx = 256 + len(merges)
        pieces = [(merge(ids, pair, idx), c) for ids, c in pieces]
        token_len.append(token_len[pair[0]] + token_len[pair[1]])
        merges.append((pair[0], pair[1], count))
    return merges


def count_pieces(texts, pattern):
    """Split every text with ``pattern`` and count the UTF-8 pieces (first-appearance order)."""
    counts = Counter()
    compiled = regex.compile(pattern)
    for text in texts:
        counts.update(p.encode("utf-8") for p in compiled.findall(text))
    return dict(counts)


def token_bytes(merges):
    """The bytes of every id: 0..255, then one per merge."""
    vocab = [bytes([i]) for i in range(256)]
    for left, right, *_ in merges:
        vocab.append(vocab[left] + vocab[right])
    return vocab


def encode_merges(data, merges):
    """minbpe's encode of one piece: apply the lowest-index listed merge until none applies."""
    ranks = {(m[0], m[1]): 256 + i for i, m in enumerate(merges)}
    ids = list(data)
    while len(ids) >= 2:
        stats = get_stats(ids)
        pair = min(stats, key=lambda p: ranks.get(p, float("inf")))
        if pair not in ranks:
            break
        ids = merge(ids, pair, ranks[pair])
    return ids


# --- minbpe's save(), as minbpe writes it (to check our files byte for byte) -------------

def render_token(t: bytes) -> str:
    import unicodedata

    s = t.decode("utf-8", errors="replace")
    return "".join(ch if unicodedata.category(ch)[0] != "C" else f"\\u{ord(ch):04x}" for ch in s)


def minbpe_save(file_prefix, pattern, special_tokens, merges, vocab):
    """minbpe's Tokenizer.save: ``merges`` is {(l, r): id}, ``vocab`` {id: bytes}."""
    with open(file_prefix + ".model", "w", encoding="utf-8") as f:
        f.write("minbpe v1\n")
        f.write(f"{pattern}\n")
        f.write(f"{len(special_tokens)}\n")
        for special, idx in special_tokens.items():
            f.write(f"{special} {idx}\n")
        for idx1, idx2 in merges:
            f.write(f"{idx1} {idx2}\n")
    inverted_merges = {idx: pair for pair, idx in merges.items()}
    with open(file_prefix + ".vocab", "w", encoding="utf-8") as f:
        for idx, token in vocab.items():
            s = render_token(token)
            if idx in inverted_merges:
                idx0, idx1 = inverted_merges[idx]
                f.write(f"[{render_token(vocab[idx0])}][{render_token(vocab[idx1])}] -> [{s}] {idx}\n")
            else:
                f.write(f"[{s}] {idx}\n")
