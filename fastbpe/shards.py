r"""Byte-range shards of text files, cut where no piece can span the cut.

A shard is ``(path, start, end)`` in bytes.  Its text runs from the first *cut point* at
or after ``start`` to the first cut point at or after ``end`` (0 and the file size count
as cut points), so the shards of a file tile it exactly, whatever the byte ranges: every
worker finds the same cut points on its own, reading only its range and a little past it.

A cut point is the position of an ASCII whitespace character (space, tab, ``\r``, ``\n``)
that follows a letter or digit (``[\p{L}\p{N}]``): the cut in ``"word| next"``.  For every
known split pattern (``patterns.BY_NAME``: GPT-2/r50k, cl100k/GPT-4, o200k, Llama 3):

* every piece holding that letter or digit ends with it (letter runs, digit groups and
  contractions never take whitespace), and none of them depends on what follows
  (the only lookahead, ``\s+(?!\S)``, is in the whitespace alternatives);
* the patterns have no lookbehind, so how the text from the cut on splits does not
  depend on what precedes the cut.

So the pieces of the two sides are exactly the pieces of the whole, and counting or
encoding shard by shard gives what the whole file gives (tests check it for every known
pattern on adversarial text).  Other patterns have no proven cut points: with
``plan_shards(..., cuttable=False)`` each file is one shard.  Ordinary text has a cut
point after nearly every word, so shards and the blocks they are read in stay close to
their nominal size even for a file that is one long line.

A cut always comes before an ASCII byte, so it never splits a UTF-8 sequence and each
shard decodes (invalid bytes -> U+FFFD, which is no letter) to exactly its slice of the
decoded file.  A file without cut points is one shard, read whole.
"""
from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass

import regex

__all__ = ["Shard", "plan_shards", "read_shard", "shard_blocks", "shard_bytes"]

# A decoded UTF-8 character needs at most this many bytes.
_MAX_CHAR_BYTES = 4
# Shards are read, decoded and handed on in blocks of about this many bytes.
_BLOCK_BYTES = 1 << 22
# Cut candidates: ASCII whitespace, which every engine's \s (regex, re, the C scanner) has.
_SPACE = re.compile(rb"[ \t\r\n]")
_WORD_CHAR = regex.compile(r"[\p{L}\p{N}]")
_WORD_CATEGORIES = ("Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No")


@dataclass(frozen=True)
class Shard:
    """Bytes [start, end) of ``path``, widened to cut points (see the module docstring)."""

    path: str
    start: int
    end: int


def plan_shards(path: str, size: int, blocksize: int, cuttable: bool = True) -> list:
    """Shards of about ``blocksize`` bytes covering a file of ``size`` bytes; one shard
    for the whole file when it is empty (every file is accounted for) or when the split
    pattern has no known cut points (``cuttable=False``)."""
    if size == 0 or not cuttable:
        return [Shard(path, 0, size)]
    return [Shard(path, s, min(s + blocksize, size)) for s in range(0, size, blocksize)]


def _is_cut(buf: bytes, c: int) -> bool:
    """buf[c] is ASCII whitespace: is c a cut point?  The character before it decides (4
    bytes decode it as the whole file does: UTF-8 resynchronises at a lead byte).  It must
    be a letter or digit for ``regex`` and for Python's older Unicode tables alike, so a
    character whose category differs between Unicode versions is never trusted."""
    before = buf[max(c - _MAX_CHAR_BYTES, 0):c].decode("utf-8", "replace")[-1:]
    return (bool(before) and _WORD_CHAR.match(before) is not None
            and unicodedata.category(before) in _WORD_CATEGORIES)


def _last_cut(buf: bytes, lo: int, hi: int) -> int:
    """The last cut point c with lo <= c <= hi (hi < len(buf)), or -1.  Scans backwards
    in windows, so each byte is looked at once."""
    end = hi + 1
    while end > lo:
        start = max(lo, end - 4096)
        for m in reversed(list(_SPACE.finditer(buf, start, end))):
            if m.start() > 0 and _is_cut(buf, m.start()):
                return m.start()
        end = start
    return -1


def _first_cut(f, pos: int, size: int) -> int:
    """The first cut point >= pos in the open binary file ``f`` of ``size`` bytes."""
    if pos <= 0:
        return 0
    step = 1 << 16
    at = max(pos - _MAX_CHAR_BYTES, 0)  # the window holds the character before pos
    while at < size:
        f.seek(at)
        buf = f.read(step)
        # candidates before index 4 were seen by the previous window (it overlaps by 4)
        lo = max(pos - at, 1 if at == 0 else _MAX_CHAR_BYTES)
        for m in _SPACE.finditer(buf, lo):
            if _is_cut(buf, m.start()):
                return at + m.start()
        if at + len(buf) >= size:
            break
        at += len(buf) - _MAX_CHAR_BYTES
        step = min(step * 2, 1 << 24)
    return size


def shard_bounds(f, shard: Shard) -> tuple:
    """(first, last) byte of the shard's text in the open binary file ``f``."""
    size = os.fstat(f.fileno()).st_size
    return _first_cut(f, shard.start, size), _first_cut(f, shard.end, size)


def shard_blocks(shard: Shard, block_bytes: int = _BLOCK_BYTES):
    """Yield the shard's text in blocks of about ``block_bytes``, each cut at a cut point
    (a block grows past ``block_bytes`` only while it has no cut point)."""
    with open(shard.path, "rb") as f:
        first, last = shard_bounds(f, shard)
        f.seek(first)
        pos, carry = first, b""
        while pos < last:
            chunk = f.read(min(block_bytes, last - pos))
            if not chunk:
                raise OSError(f"{shard.path!r} shrank while it was being read")
            pos += len(chunk)
            buf = carry + chunk
            if pos == last:
                carry = buf
                break
            # the carry holds no cut point (it was searched before)
            cut = _last_cut(buf, max(len(carry), 1), len(buf) - 1)
            if cut <= 0:
                carry = buf
                continue
            yield buf[:cut].decode("utf-8", "replace")
            carry = buf[cut:]
    if carry:
        yield carry.decode("utf-8", "replace")


def shard_bytes(shard: Shard) -> bytes:
    """The shard's raw bytes (its text before decoding), read whole."""
    with open(shard.path, "rb") as f:
        first, last = shard_bounds(f, shard)
        f.seek(first)
        data = f.read(last - first)
    if len(data) != last - first:
        raise OSError(f"{shard.path!r} shrank while it was being read")
    return data


def read_shard(shard: Shard) -> str:
    """The shard's whole text (for small shards and tests; ``shard_blocks`` streams)."""
    return "".join(shard_blocks(shard))
