r"""Byte-range shards of text files, cut where no piece can span the cut.

A shard is ``(path, start, end)`` in bytes.  Its text runs from the first *cut point* at
or after ``start`` to the first cut point at or after ``end`` (0 and the file size count
as cut points), so the shards of a file tile it exactly, whatever the byte ranges: every
worker finds the same cut points on its own, reading only its range and a little past it.

A cut point is the position just after a single ``\n`` or ``\r`` that stands between
two letters or digits (``[\p{L}\p{N}]``), as in ``"end\nStart"``.  For every known
split pattern (``patterns.BY_NAME``: GPT-2/r50k, cl100k/GPT-4, o200k, Llama 3) the
newline there is a piece of its own (no whitespace run for ``\s+(?!\S)`` to share with
the next piece, no punctuation for ``[^\s\p{L}\p{N}]+[\r\n]*`` to take it), so pieces
never span a cut point and counting or encoding shard by shard gives what the whole file
gives.  A newline after a space, a punctuation mark or a ``\r`` (CRLF) is *not* a cut
point: with ``\s+(?!\S)`` the end of a text changes how a whitespace run splits.  Other
patterns have no proven cut points: ``plan_shards(..., cuttable=False)`` makes one shard
per file for them.

A cut always follows an ASCII byte, so it never splits a UTF-8 sequence and each shard
decodes (invalid bytes -> U+FFFD, which is no letter) to exactly its slice of the decoded
file.  A file without cut points (one long line) is one shard, read whole.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

import regex

__all__ = ["Shard", "plan_shards", "read_shard", "shard_blocks", "shard_bytes"]

# A decoded UTF-8 character needs at most this many bytes.
_MAX_CHAR_BYTES = 4
# Shards are read, decoded and handed on in blocks of about this many bytes.
_BLOCK_BYTES = 1 << 22
_NEWLINE = re.compile(rb"[\r\n]")
_WORD_CHAR = regex.compile(r"[\p{L}\p{N}]")


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
    """buf[c - 1] is \\r or \\n: is c a cut point?  Looks at the characters on both sides
    (UTF-8 resynchronises at a lead byte, so 4 bytes decode them as the whole file does)."""
    after = buf[c:c + _MAX_CHAR_BYTES].decode("utf-8", "replace")[:1]
    before = buf[max(c - 1 - _MAX_CHAR_BYTES, 0):c - 1].decode("utf-8", "replace")[-1:]
    return (bool(after) and bool(before) and _WORD_CHAR.match(after) is not None
            and _WORD_CHAR.match(before) is not None)


def _last_cut(buf: bytes, lo: int, hi: int) -> int:
    """The last cut point c with lo <= c <= hi in ``buf`` (bytes up to hi + 4 must be
    present or be the end of the file), or -1.  Linear: each newline is looked at once
    and each byte scanned at most twice."""
    start = max(lo - 1, 0)
    last_n, last_r = buf.rfind(b"\n", start, hi), buf.rfind(b"\r", start, hi)
    while True:
        i = max(last_n, last_r)
        if i < 0:
            return -1
        if _is_cut(buf, i + 1):
            return i + 1
        # only the finder that returned i must look further back
        if i == last_n:
            last_n = buf.rfind(b"\n", start, i)
        else:
            last_r = buf.rfind(b"\r", start, i)


def _first_cut(f, pos: int, size: int) -> int:
    """The first cut point >= pos in the open binary file ``f`` of ``size`` bytes."""
    if pos <= 0:
        return 0
    step = 1 << 16
    # a window starting 4 bytes before the newline that may stand just before pos
    at = max(pos - 1 - _MAX_CHAR_BYTES, 0)
    while at < size:
        f.seek(at)
        buf = f.read(step + 2 * _MAX_CHAR_BYTES)
        for m in _NEWLINE.finditer(buf, 0, min(step + _MAX_CHAR_BYTES, len(buf))):
            if at + m.end() >= pos and _is_cut(buf, m.end()):
                return at + m.end()
        at += step
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
            # the carry had no cut up to len(carry) - 4 (it was searched before)
            cut = _last_cut(buf, max(len(carry) - _MAX_CHAR_BYTES, 1),
                            len(buf) - _MAX_CHAR_BYTES)
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
