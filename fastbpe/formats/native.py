"""fastbpe's own model file: JSON with everything needed to rebuild a trained model.

::

    {"format": "fastbpe-bpe", "version": 1,
     "pattern": "...", "special_tokens": {"<|endoftext|>": 1000},
     "merges": [[left, right], ...]}          # merge i makes id 256 + i

Unlike ``.tiktoken`` (ranks only) it keeps the pattern and the special tokens, and unlike
ranks the merge list is exact for both merge semantics.
"""
from __future__ import annotations

import json
import os

from .atomic import atomic_write_text

FORMAT = "fastbpe-bpe"
VERSION = 1


def format_native(pattern: str, special_tokens: dict, merges) -> str:
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "pattern": pattern,
        "special_tokens": dict(special_tokens),
        "merges": [[int(a), int(b)] for a, b in merges],
    }
    return json.dumps(doc, ensure_ascii=False, indent=None) + "\n"


def write_native(path, pattern: str, special_tokens: dict, merges) -> None:
    """Write atomically (OSError if the directory is not writable)."""
    atomic_write_text(path, format_native(pattern, special_tokens, merges))


def read_native(path):
    """-> (pattern, special_tokens, merges [(l, r)]); ValueError for a bad file."""
    path = os.fspath(path)
    with open(path, "r", encoding="utf-8") as f:
        try:
            doc = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not a fastbpe model: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{path}: not a fastbpe model (no \"format\": \"{FORMAT}\")")
    if doc.get("version") != VERSION:
        raise ValueError(f"{path}: unsupported fastbpe model version {doc.get('version')!r}")
    pattern = doc.get("pattern")
    specials = doc.get("special_tokens", {})
    merges = doc.get("merges")
    if not isinstance(pattern, str) or not isinstance(specials, dict) or not isinstance(merges, list):
        raise ValueError(f"{path}: malformed fastbpe model")
    out = []
    for i, m in enumerate(merges):
        if (not isinstance(m, list) or len(m) != 2 or not all(type(x) is int for x in m)
                or not all(0 <= x < 256 + i for x in m)):
            raise ValueError(f"{path}: bad merge {i}: {m!r}")
        out.append((m[0], m[1]))
    for s, idx in specials.items():
        if type(idx) is not int or idx < 0:
            raise ValueError(f"{path}: bad id for special token {s!r}")
    return pattern, specials, out
