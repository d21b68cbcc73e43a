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

from .atomic import atomic_write_many, atomic_write_text
from .text_files import read_text

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


def write_model_and_vocab(file_prefix: str, pattern: str, special_tokens: dict, merges: dict,
                          vocab: dict) -> None:
    """Write ``file_prefix.model`` and ``file_prefix.vocab`` as one save: an error while
    writing either changes neither (see `atomic_write_many`)."""
    atomic_write_many({
        file_prefix + ".model": format_model(pattern, special_tokens, list(merges)).encode("utf-8"),
        file_prefix + ".vocab": format_vocab(vocab, merges).encode("utf-8"),
    })


def read_model(path):
    """Read a ``.model`` file -> (pattern, special_tokens {str: id}, merges [(l, r)]).
    ValueError for a file that is not a minbpe model."""
    path = os.fspath(path)
    text = read_text(path, "a minbpe model")
    lines = text.split("\n")
    if not lines or lines[0].strip() != MAGIC:
        raise ValueError(f"{path}: not a minbpe model (first line must be {MAGIC!r})")
    # every line minbpe writes ends with a newline: a file that does not is cut short
    if not text.endswith("\n") or len(lines) < 4:
        raise ValueError(f"{path}: truncated minbpe model (it does not end with a complete line)")
    lines.pop()  # the empty string after the final newline
    try:
        num_special = int(lines[2].strip())
    except ValueError:
        raise ValueError(f"{path}: line 3 must be the number of special tokens, "
                         f"got {lines[2]!r}") from None
    if num_special < 0 or 3 + num_special > len(lines):
        raise ValueError(f"{path}: says {num_special} special tokens but has only "
                         f"{len(lines) - 3} lines after the header")
    pattern = lines[1].strip()
    special_tokens = {}
    for lineno, line in enumerate(lines[3:3 + num_special], start=4):
        fields = line.strip().split()
        if len(fields) != 2 or not _is_int(fields[1]) or _is_int(fields[0]):
            raise ValueError(f"{path}: line {lineno} should be a special token and its id, "
                             f"got {line!r} (is the special-token count right?)")
        special_tokens[fields[0]] = int(fields[1])
    merges = []
    for lineno, line in enumerate(lines[3 + num_special:], start=4 + num_special):
        fields = line.split()
        if len(fields) != 2 or not (_is_int(fields[0]) and _is_int(fields[1])):
            raise ValueError(f"{path}: line {lineno} should be a merge (two ids), got {line!r} "
                             "(is the special-token count right?)")
        merges.append((int(fields[0]), int(fields[1])))
    for i, (a, b) in enumerate(merges):
        if not (0 <= a < 256 + i and 0 <= b < 256 + i):
            raise ValueError(f"{path}: merge {i} ({a} {b}) uses an id that does not exist yet")
    for special, idx in special_tokens.items():
        if 0 <= idx < 256 + len(merges):
            raise ValueError(f"{path}: special token {special!r} has id {idx}, which a byte or "
                             "merge already uses")
    return pattern, special_tokens, merges


def _is_int(field: str) -> bool:
    return field.lstrip("-").isdigit()


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
