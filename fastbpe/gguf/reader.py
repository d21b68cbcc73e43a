"""Read the key/value metadata of a GGUF file, never its tensors.

A GGUF file is a header (magic, version, tensor count, key count), the key/value section, the
tensor infos and then the tensor data.  A tokenizer needs only the key/value section, which sits
at the front: the file is memory-mapped and only those pages are ever touched, so a many-GB model
opens as fast as a vocabulary-only file, with memory proportional to its vocabulary.

Every count and length is checked against the bytes left in the file before anything is
allocated: a truncated or corrupt file is a ValueError naming the file and the problem.  As in
llama.cpp's gguf reader, an array of arrays, an empty key and a key given twice are refused (so
nothing nests: the reader never recurses; only keys it reads are checked for repeats, as
remembering every skipped key would cost memory per key).  Given `keys`, only those keys are turned into Python
values, and each only if its type is one llama.cpp accepts for it; every other key is skipped by
its byte length without making an object, so a file of millions of unused values opens in time
proportional to its size and memory proportional to what the tokenizer reads.
"""
from __future__ import annotations

import mmap
import os
import struct

import numpy as np

from .._gguf_strings import read_strings

MAGIC = b"GGUF"

# value types of the GGUF spec: (struct code, size) of the fixed-size ones
_UINT8, _INT8, _UINT16, _INT16, _UINT32, _INT32, _FLOAT32, _BOOL, _STRING, _ARRAY, _UINT64, _INT64, _FLOAT64 = range(13)
_FIXED = {_UINT8: "B", _INT8: "b", _UINT16: "H", _INT16: "h", _UINT32: "I", _INT32: "i",
          _FLOAT32: "f", _BOOL: "?", _UINT64: "Q", _INT64: "q", _FLOAT64: "d"}
_MAX_KEYS = 1 << 20  # a real file has tens; a bigger count is corruption
TYPE_NAMES = {_UINT8: "uint8", _INT8: "int8", _UINT16: "uint16", _INT16: "int16", _UINT32: "uint32", _INT32: "int32",
              _FLOAT32: "float32", _BOOL: "bool", _STRING: "string", _ARRAY: "array", _UINT64: "uint64",
              _INT64: "int64", _FLOAT64: "float64"}
# the GGUF types of a value: a type name, or "array[element type]"
UINT32, INT32, FLOAT32, BOOL, STRING = "uint32", "int32", "float32", "bool", "string"
ARRAY_OF_STRING, ARRAY_OF_INT32, ARRAY_OF_FLOAT32 = "array[string]", "array[int32]", "array[float32]"


def type_name(vtype: int, etype: int | None = None) -> str:
    name = TYPE_NAMES.get(vtype, f"type {vtype}")
    return f"{name}[{TYPE_NAMES.get(etype, f'type {etype}')}]" if vtype == _ARRAY else name


class Metadata(dict):
    """{key: value} as read_metadata returns it, with `types`: {key: the value's GGUF type name}."""

    types: dict


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

    def strings(self, count: int, what: str, make: bool = True) -> list[str] | None:
        """count length-prefixed strings, read in C (`_gguf_strings`: a vocabulary has 10^5 of
        them, Gemma-4's merges 5 * 10^5); make=False steps over them, each length checked."""
        out, pos, bad, claimed = read_strings(self.buf, self.pos, count, self.order == ">", make)
        self.pos = pos
        if bad >= 0:
            if claimed < 0:
                raise self.fail(f"file ends inside {what}[{bad}]")
            raise self.fail(f"{what}[{bad}] claims {claimed} bytes, only {self.end - pos} are left")
        return out

    def value(self, vtype: int, etype: int | None, count: int, what: str):
        if vtype in _FIXED:
            return self.scalar(_FIXED[vtype], what)
        if vtype == _STRING:
            return self.string(what)
        return self.array(etype, count, what)

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
            raise self.fail(f"{what} is an array of arrays (llama.cpp's gguf reader refuses them too)")
        raise self.fail(f"{what} has unknown element type {etype}")

    def skip(self, vtype: int, etype: int | None, count: int, what: str) -> None:
        """Step over a value without making it: a scalar or a string by its size, an array of
        numbers by count * size, an array of strings one length at a time (each checked)."""
        if vtype == _STRING:
            n = self.scalar("Q", what + " length")
            self.need(n, what)
            self.pos += n
        elif vtype in _FIXED:
            self.need(struct.calcsize(_FIXED[vtype]), what)
            self.pos += struct.calcsize(_FIXED[vtype])
        elif etype in _FIXED:
            size = count * struct.calcsize(_FIXED[etype])
            self.need(size, f"{what} ({count} elements)")
            self.pos += size
        elif etype == _STRING:
            self.need(count * 8, f"{what} ({count} strings)")
            self.strings(count, what, make=False)
        elif etype == _ARRAY:
            raise self.fail(f"{what} is an array of arrays (llama.cpp's gguf reader refuses them too)")
        else:
            raise self.fail(f"{what} has unknown element type {etype}")


def read_metadata(path: str | os.PathLike, keys: dict | None = None) -> Metadata:
    """The key/value metadata of a GGUF file ({key: value}; arrays of numbers as numpy arrays,
    arrays of strings as lists), plus "GGUF.version" and "GGUF.tensor_count"; `.types` holds
    each value's GGUF type name.

    keys: {key: the type names accepted for it, or None for any}: only those keys are read (a
    value of another type is a ValueError naming the file and the key), the rest are skipped
    over without being made into objects.  None reads every key."""
    name = os.fspath(path)
    with open(name, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < 4 or f.read(4) != MAGIC:
            raise ValueError(f"{name}: not a GGUF file (no GGUF magic bytes at the start)")
        if size < 24:
            raise ValueError(f"{name}: not a valid GGUF file: truncated header ({size} bytes)")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return _parse(mm, name, keys)


def _parse(buf, name: str, keys: dict | None) -> Metadata:
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
    meta = Metadata({"GGUF.version": version, "GGUF.tensor_count": n_tensors})
    meta.types = {}
    for k in range(n_keys):
        key = cur.string(f"key {k}")
        if not key:
            raise cur.fail(f"key {k} is empty")
        vtype = cur.scalar("I", f"type of {key!r}")
        etype, count = None, 1
        if vtype == _ARRAY:
            etype = cur.scalar("I", f"{key!r} element type")
            count = cur.scalar("Q", f"{key!r} element count")
            if etype == _ARRAY:
                raise cur.fail(f"{key!r} is an array of arrays (llama.cpp's gguf reader refuses them too)")
        elif vtype not in _FIXED and vtype != _STRING:
            raise cur.fail(f"{key!r} has unknown value type {vtype}")
        if keys is not None and key not in keys:
            cur.skip(vtype, etype, count, repr(key))
            continue
        if key in meta.types:
            raise cur.fail(f"key {key!r} is given twice")
        tname = type_name(vtype, etype)
        if keys is not None and keys[key] is not None and tname not in keys[key]:
            raise ValueError(f"{name}: {key} has GGUF type {tname}, but llama.cpp reads it only as "
                             + " or ".join(sorted(keys[key])))
        meta[key] = cur.value(vtype, etype, count, repr(key))
        meta.types[key] = tname
    return meta
