"""Other segmentations of the same pieces: BPE-dropout and the shortest encoding.

- BPE-dropout (subword regularisation, Provilkov et al. 2020; HF `tokenizers`' `dropout`): each
  piece starts from its bytes and every candidate merge is skipped with probability `dropout`
  (the merge loop is `_merge_ids.merge_ids`, shared with the HF front end).  The whole-piece shortcut
  is not taken, so `dropout=1` gives single bytes; `dropout=0` or `None` is the exact encoding.
  A `seed` makes the draws reproducible (piece i uses the i-th 64-bit draw of
  `random.Random(seed)`); `seed=None` draws fresh randomness.
- Shortest encoding (`_segment.shortest_ids`): each piece cut into the fewest vocabulary tokens;
  among those, the longest first token at each step (see `_segment.pyx`).

Both decode to the input text, since every piece is covered by tokens of its own bytes.
"""
from __future__ import annotations

import os
import random

from ._merge_ids import merge_ids
from ._segment import byte_ids, shortest_ids
from .special_tokens import special_token_regex
from .text import fix_surrogates


def encode_with(enc, text: str, allowed: frozenset, pieces_to_ids) -> list:
    """Encode `text` with an `Encoding`'s pattern and allowed special tokens, each ordinary
    segment's byte pieces through `pieces_to_ids(table, pieces)`."""
    out: list = []
    start = 0
    table, splitter = enc.kernel, enc.splitter
    if allowed:
        special_tokens = enc.special_tokens
        for match in special_token_regex(allowed).finditer(text):
            out += pieces_to_ids(table, _byte_pieces(splitter, text[start:match.start()]))
            out.append(special_tokens[match.group()])
            start = match.end()
    out += pieces_to_ids(table, _byte_pieces(splitter, text[start:]))
    return out


def _byte_pieces(splitter, text: str) -> list:
    """UTF-8 of each piece; lone surrogates are replaced as `Encoding.encode` does."""
    try:
        return [p.encode("utf-8") for p in splitter.findall(text)]
    except UnicodeEncodeError:
        return [p.encode("utf-8") for p in splitter.findall(fix_surrogates(text))]


def dropout_fn(dropout: float, seed):
    """`pieces_to_ids` for BPE-dropout (one generator across all segments of a call)."""
    draws = random.Random(seed if seed is not None else os.urandom(16))
    return lambda table, pieces: dropout_ids(table, pieces, float(dropout), draws)


def check_dropout(dropout, seed) -> float:
    """`dropout` as a float in [0, 1]; TypeError/ValueError for anything else (seed too)."""
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)):
        raise TypeError(f"dropout must be a number between 0 and 1, not {type(dropout).__name__}")
    if not 0.0 <= dropout <= 1.0:
        raise ValueError(f"dropout must be between 0 and 1, got {dropout}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TypeError(f"seed must be an int or None, not {type(seed).__name__}")
    if seed is not None and seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    return float(dropout)


def dropout_ids(table, pieces: list, dropout: float, draws: random.Random) -> list:
    """BPE-dropout ids of byte-string pieces with `table` (a `_core.BPETable`); `draws` gives
    each piece's 64-bit seed."""
    byte_ids = _byte_ids(table)
    out: list = []
    for piece in pieces:
        if not piece:
            continue
        ids, _ = merge_ids(table, [byte_ids[b] for b in piece], dropout, draws.getrandbits(64))
        out.extend(ids)
    return out


def shortest(table, pieces: list) -> list:
    """Fewest-token ids of byte-string pieces with `table`."""
    return shortest_ids(table, pieces)


def _byte_ids(table) -> list:
    ids = byte_ids(table)
    if min(ids) < 0:
        missing = next(b for b in range(256) if ids[b] < 0)
        raise ValueError(f"this vocabulary has no token for the byte {missing:#04x}")
    return ids
