"""A slow, obviously correct BPE encoder: the spec the encode kernel is tested against.

tiktoken semantics: repeatedly merge the adjacent pair of parts whose concatenated bytes is a
token of the lowest rank (leftmost on ties), until no adjacent pair is a token."""
from __future__ import annotations


def bpe_ranks(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
    parts = [piece[i:i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        best = None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            break
        i = best[1]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    return [ranks[p] for p in parts]


def encode_piece_tiktoken(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
    """tiktoken's rule for one piece: a piece that is itself a token is that token (even if
    merging its bytes would not reach it); otherwise BPE."""
    if piece in ranks:
        return [ranks[piece]]
    return bpe_ranks(piece, ranks)


def bpe_merges(ids: list[int], merges: dict[tuple[int, int], tuple[int, int]]) -> list[int]:
    """Merge-list semantics: merges maps (left, right) -> (rank, new id)."""
    ids = list(ids)
    while len(ids) > 1:
        best = None
        for i in range(len(ids) - 1):
            m = merges.get((ids[i], ids[i + 1]))
            if m is not None and (best is None or m[0] < best[0][0]):
                best = (m, i)
        if best is None:
            break
        (_, new_id), i = best
        ids[i:i + 2] = [new_id]
    return ids


def with_gaps(rx, text: str) -> list[str]:
    """The scanner's cut (llama.cpp's unicode_regex_split): a compiled `regex` pattern's
    non-empty matches and the text between them, in order."""
    out, pos = [], 0
    for m in rx.finditer(text):
        if m.start() > pos:
            out.append(text[pos:m.start()])
        if m.end() > m.start():
            out.append(m.group())
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return out
