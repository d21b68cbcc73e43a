"""minbpe's ``.model`` and ``.vocab`` files, byte for byte.

``.model`` (what ``load`` reads)::

    minbpe v1
    <split pattern, empty for BasicTokenizer>
    <number of special tokens>
    <special> <id>          one line per special token
    <left> <right>          one line per merge, in order; merge i makes id 256 + i

``.vocab`` is for people: one line per token, ``[text] id`` or
``[left text][right text] -> [text] id``, where text is the token decoded as UTF-8 with
replacement and control characters escaped as ``\\uXXXX``.
"""
from __future__ import annotations

import os
import unicodedata

from .atomic import atomic_write_text

MAGIC = "minbpe v1"


def replace_control_characters(s: str) -> str:
    """Escape control characters (Unicode category C*) so tokens print on one line."""
    return "".join(ch if unicodedata.category(ch)[0] != "C" else f"\\u{ord(ch):04x}" for ch in s)


def render_token(t: bytes) -> str:
    return replace_control_characters(t.decode("utf-8", errors="replace"))


def format_model(pattern: str, special_tokens: dict, merges) -> str:
    """The text of a ``.model`` file; ``merges`` is an ordered iterable of (left, right)."""
    lines = [MAGIC, pattern, str(len(special_tokens))]
    lines += [f"{special} {idx}" for special, idx in special_tokens.items()]
    lines += [f"{a} {b}" for a, b in merges]
    return "\n".join(lines) + "\n"


def format_vocab(vocab: dict, merges: dict) -> str:
    """The text of a ``.vocab`` file.  ``vocab``: id -> bytes, in the order minbpe keeps
    it; ``merges``: (left, right) -> id."""
    inverted = {idx: pair for pair, idx in merges.items()}
    out = []
    for idx, token in vocab.items():
        s = render_token(token)
        if idx in inverted:
            i0, i1 = inverted[idx]
            out.append(f"[{render_token(vocab[i0])}][{render_token(vocab[i1])}] -> [{s}] {idx}\n")
        else:
            out.append(f"[{s}] {idx}\n")
    return "".join(out)


def write_model(path, pattern: str, special_tokens: dict, merges) -> None:
    """Write a ``.model`` file atomically (OSError if the directory is not writable)."""
    atomic_write_text(path, format_model(pattern, special_tokens, merges))


def write_vocab(path, vocab: dict, merges: dict) -> None:
    atomic_write_text(path, format_vocab(vocab, merges))


def read_model(path):
    """Read a ``.model`` file -> (pattern, special_tokens {str: id}, merges [(l, r)]).
    ValueError for a file that is not a minbpe model."""
    path = os.fspath(path)
    with open(path, "r", encoding="utf-8") as f:
        lines = f.read().split("\n")
    if not lines or lines[0].strip() != MAGIC:
        raise ValueError(f"{path}: not a minbpe model (first line must be {MAGIC!r})")
    try:
        pattern = lines[1].strip()
        num_special = int(lines[2].strip())
        special_tokens = {}
        for line in lines[3:3 + num_special]:
            special, idx = line.strip().split()
            special_tokens[special] = int(idx)
        merges = []
        for line in lines[3 + num_special:]:
            if line.strip():
                a, b = map(int, line.split())
                merges.append((a, b))
    except (IndexError, ValueError) as e:
        raise ValueError(f"{path}: malformed minbpe model: {e}") from None
    for i, (a, b) in enumerate(merges):
        if not (0 <= a < 256 + i and 0 <= b < 256 + i):
            raise ValueError(f"{path}: merge {i} ({a} {b}) uses an id that does not exist yet")
    return pattern, special_tokens, merges


def recover_merges(ranks: dict) -> list:
    """Merges from tiktoken-style ranks, as minbpe's GPT4Tokenizer does: the merge that made
    a token is the last step of BPE on its bytes using only lower ranks.  Returns
    [(left id, right id)] in rank order for ranks 256.. (ranks must be 0..n-1 with the
    single bytes first -- true for trained models)."""
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) == 1:
            continue
        parts = [bytes([b]) for b in token]
        while len(parts) > 2:
            best, best_rank = None, None
            for i in range(len(parts) - 1):
                r = ranks.get(parts[i] + parts[i + 1])
                if r is not None and r < rank and (best_rank is None or r < best_rank):
                    best, best_rank = i, r
            if best is None:
                break
            parts[best:best + 2] = [parts[best] + parts[best + 1]]
        if len(parts) != 2:
            raise ValueError(f"token {token!r} (rank {rank}) is not a merge of two lower tokens")
        merges.append((ranks[parts[0]], ranks[parts[1]]))
    return merges
