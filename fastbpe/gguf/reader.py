"""Read the key/value metadata of a GGUF file, never its tensors.

A GGUF file is a header (magic, version, tensor count, key count), the key/value section, the
tensor infos and then the tensor data.  A tokenizer needs only the key/value section, which sits
at the front: the file is memory-mapped and only those pages are ever touched, so a many-GB model
opens as fast as a vocabulary-only file, with memory proportional to its vocabulary.

Every count and length is checked against the bytes left in the file before anything is
allocated: a truncated or corrupt file is a ValueError naming the file and the problem.
"""
from __future__ import annotations

import mmap
import os
import struct

import numpy as np

MAGIC = b"GGUF"

# value types of the GGUF spec: (struct code, size) of the fixed-size ones
_UINT8, _INT8, _UINT16, _INT16, _UINT32, _INT32, _FLOAT32, _BOOL, _STRING, _ARRAY, _UINT64, _INT64, _FLOAT64 = range(13)
_FIXED = {_UINT8: "B", _INT8: "b", _UINT16: "H", _INT16: "h", _UINT32: "I", _INT32: "i",
          _FLOAT32: "f", _BOOL: "?", _UINT64: "Q", _INT64: "q", _FLOAT64: "d"}
_MAX_KEYS = 1 << 20  # a real file has tens; a bigger count is corruption


def is_gguf(path: str | os.PathLike) -> bool:
    """True when the file starts with GGUF's magic bytes."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == MAGIC
    except (OSError, TypeError):
        return False


class _Cursor:
    """Bounds-checked little/big-endian reads over the mapped file (slices of an mmap are bytes)."""

    def __init__(self, buf, path: str, order: str):
        self.buf, self.path, self.order, self.pos, self.end = buf, path, order, 0, len(buf)

    def fail(self, what: str) -> ValueError:
        return ValueError(f"{self.path}: not a valid GGUF file: {what} (at byte {self.pos})")

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.end:
            raise self.fail(f"file ends inside {what} ({n} bytes needed, {self.end - self.pos} left)")

    def scalar(self, code: str, what: str):
        size = struct.calcsize(code)
        self.need(size, what)
        value = struct.unpack_from(self.order + code, self.buf, self.pos)[0]
        self.pos += size
        return value

    def string(self, what: str) -> str:
        n = self.scalar("Q", what + " length")
        self.need(n, what)
        raw = self.buf[self.pos:self.pos + n]
        self.pos += n
        return raw.decode("utf-8", "surrogateescape")

    def strings(self, count: int, what: str) -> list[str]:
        """count length-prefixed strings: one tight loop (a vocabulary has 10^5 of them)."""
        buf, pos, end = self.buf, self.pos, self.end
        length_at = struct.Struct(self.order + "Q").unpack_from
        raw = []
        append = raw.append
        for k in range(count):
            if pos + 8 > end:
                self.pos = pos
                raise self.fail(f"file ends inside {what}[{k}]")
            n = length_at(buf, pos)[0]
            pos += 8
            if n > end - pos:
                self.pos = pos
                raise self.fail(f"{what}[{k}] claims {n} bytes, only {end - pos} are left")
            append(buf[pos:pos + n])
            pos += n
        self.pos = pos
        # llama.cpp keeps token text as raw bytes; surrogateescape keeps invalid UTF-8 round-trippable
        return [b.decode("utf-8", "surrogateescape") for b in raw]

    def value(self, vtype: int, what: str):
        if vtype in _FIXED:
            return self.scalar(_FIXED[vtype], what)
        if vtype == _STRING:
            return self.string(what)
        if vtype == _ARRAY:
            etype = self.scalar("I", what + " element type")
            count = self.scalar("Q", what + " element count")
            return self.array(etype, count, what)
        raise self.fail(f"{what} has unknown value type {vtype}")

    def array(self, etype: int, count: int, what: str):
        if etype in _FIXED:
            code = _FIXED[etype]
            size = struct.calcsize(code)
            self.need(count * size, f"{what} ({count} elements)")
            dtype = np.dtype(code if code != "?" else "u1").newbyteorder(self.order)
            # a copy of the slice: nothing keeps pointing into the map once it is closed
            raw = self.buf[self.pos:self.pos + count * size]
            out = np.frombuffer(raw, dtype=dtype, count=count).astype(dtype.newbyteorder("="))
            self.pos += count * size
            return out.astype(bool) if code == "?" else out
        if etype == _STRING:
            # each string takes at least its 8-byte length: an absurd count fails here, before any list grows
            self.need(count * 8, f"{what} ({count} strings)")
            return self.strings(count, what)
        if etype == _ARRAY:
            self.need(count * 12, f"{what} ({count} arrays)")
            out = []
            for k in range(count):
                inner = self.scalar("I", f"{what}[{k}] element type")
                n = self.scalar("Q", f"{what}[{k}] element count")
                out.append(self.array(inner, n, f"{what}[{k}]"))
            return out
        raise self.fail(f"{what} has unknown element type {etype}")


def read_metadata(path: str | os.PathLike) -> dict:
    """The key/value metadata of a GGUF file ({key: value}; arrays of numbers as numpy arrays,
    arrays of strings as lists), plus "GGUF.version" and "GGUF.tensor_count"."""
    name = os.fspath(path)
    with open(name, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < 4 or f.read(4) != MAGIC:
            raise ValueError(f"{name}: not a GGUF file (no GGUF magic bytes at the start)")
        if size < 24:
            raise ValueError(f"{name}: not a valid GGUF file: truncated header ({size} bytes)")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return _parse(mm, name)


def _parse(buf, name: str) -> dict:
    version = struct.unpack_from("<I", buf, 4)[0]
    order = "<"
    if version & 0xFFFF == 0 and version != 0:
        # written on a big-endian machine: the version reads byte-swapped
        order, version = ">", struct.unpack_from(">I", buf, 4)[0]
    cur = _Cursor(buf, name, order)
    cur.pos = 8
    if version == 1:
        raise ValueError(f"{name}: GGUF version 1 is not supported (llama.cpp dropped it too); convert the file again")
    if version not in (2, 3):
        raise ValueError(f"{name}: unsupported GGUF version {version}")
    n_tensors = cur.scalar("Q", "tensor count")
    n_keys = cur.scalar("Q", "key count")
    if n_keys > _MAX_KEYS:
        raise cur.fail(f"absurd key count {n_keys}")
    meta = {"GGUF.version": version, "GGUF.tensor_count": n_tensors}
    for k in range(n_keys):
        key = cur.string(f"key {k}")
        vtype = cur.scalar("I", f"type of {key!r}")
        meta[key] = cur.value(vtype, repr(key))
    return meta
