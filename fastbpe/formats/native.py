"""fastbpe's own model file: JSON with everything needed to rebuild a trained model.

::

    {"format": "fastbpe-bpe", "version": 1,
     "pattern": "...", "special_tokens": {"<|endoftext|>": 1000},
     "merges": [[left, right], ...],          # merge i makes id 256 + i; [-1, -1]: unused id
     "byte_order": [b0, b1, ..., b255]}       # optional: the byte of ids 0..255 (default 0..255)

``byte_order`` is there for vocabularies like GPT-2's, whose single bytes are not ids 0..255
in byte order.

Unlike ``.tiktoken`` (ranks only) it keeps the pattern and the special tokens, and unlike
ranks the merge list is exact for both merge semantics.
"""
from __future__ import annotations

import json
import os

from .atomic import atomic_write_text
from .text_files import parse_json, read_text

FORMAT = "fastbpe-bpe"
VERSION = 1


def format_native(pattern: str, special_tokens: dict, merges, byte_order: bytes | None = None) -> str:
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "pattern": pattern,
        "special_tokens": dict(special_tokens),
        "merges": [[int(a), int(b)] for a, b in merges],
    }
    if byte_order is not None:
        doc["byte_order"] = list(byte_order)
    return json.dumps(doc, ensure_ascii=False, indent=None) + "\n"


def write_native(path, pattern: str, special_tokens: dict, merges, byte_order: bytes | None = None) -> None:
    """Write atomically (OSError if the directory is not writable)."""
    atomic_write_text(path, format_native(pattern, special_tokens, merges, byte_order))


def read_native(path):
    """-> (pattern, special_tokens, merges [(l, r)], byte_order bytes or None); ValueError
    for a bad file."""
    path = os.fspath(path)
    doc = parse_json(read_text(path, "a fastbpe model"), path, "a fastbpe model")
    if isinstance(doc, dict) and "model" in doc and doc.get("format") is None:
        raise ValueError(f"{path}: a Hugging Face tokenizer.json, not a fastbpe model: load it "
                         "with fastbpe.Tokenizer.from_file")
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
        if m == [-1, -1]:  # an unused id (trainer.NO_MERGE)
            out.append((-1, -1))
            continue
        if (not isinstance(m, list) or len(m) != 2 or not all(type(x) is int for x in m)
                or not all(0 <= x < 256 + i for x in m)):
            raise ValueError(f"{path}: bad merge {i}: {m!r}")
        out.append((m[0], m[1]))
    for s, idx in specials.items():
        if type(idx) is not int or idx < 0:
            raise ValueError(f"{path}: bad id for special token {s!r}")
    byte_order = doc.get("byte_order")
    if byte_order is not None:
        if (not isinstance(byte_order, list) or sorted(byte_order) != list(range(256))
                or not all(type(b) is int for b in byte_order)):
            raise ValueError(f"{path}: byte_order must list each byte 0..255 once")
        byte_order = bytes(byte_order)
    return pattern, specials, out, byte_order
