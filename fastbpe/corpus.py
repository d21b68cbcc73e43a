"""Encode whole corpora for training: files (or an iterable of documents) -> one flat array of
token ids plus document offsets, on every core, in memory bounded by a buffer.

`Encoding.encode_files` and `Encoding.encode_documents` are thin wrappers over `encode_files`
and `encode_documents` here; `python -m fastbpe encode-files` is the command line.

What comes out
--------------
* Documents, in input order: each file is one document, or, with ``split_on="..."``, each file
  is cut into documents at every occurrence of that text (like ``text.split(split_on)``).
  Empty documents are dropped unless ``keep_empty=True``.
* Each document's ids are exactly ``encoding.encode_ordinary(document)`` (special-token text
  is ordinary text, as in tiktoken's `encode_ordinary_batch`), followed by the separator token
  (by default ``<|endoftext|>``; ``separator=None`` for none).  So the separator stands between
  any two documents, and the stream ends with one, as nanoGPT's ``prepare.py`` writes it.
* Bytes that are not UTF-8 are replaced by U+FFFD (``bytes.decode("utf-8", "replace")``), as
  tiktoken does with lone surrogates and tokie with bad bytes; a file never fails on them.
* ``offsets``: int64, ``n_documents + 1`` entries, ``offsets[0] == 0``; document ``i`` with its
  separator is ``ids[offsets[i]:offsets[i + 1]]``.

On-disk layout (``out="train.bin"``)
------------------------------------
``train.bin``          the ids: raw little-endian uint16 or uint32, no header (nanoGPT reads
                       it with ``np.memmap("train.bin", dtype=np.uint16, mode="r")``).
``train.bin.offsets``  the offsets: raw little-endian int64, ``n_documents + 1`` entries.
``train.bin.manifest.json``  what makes the two one unit: both names, their sizes, the id
                       type, a CRC-32 of the offsets and of the first and last 64 KiB of ids.

`load` reads the pair back and refuses it (ValueError) when the manifest is missing or does
not describe the files beside it; `save` writes arrays made elsewhere (a shard of a cluster
job) in the same layout.  All three files are written atomically as one set: temporaries
first, then the old manifest is removed, the ids and offsets renamed into place, and the new
manifest renamed last.  An interrupted run leaves the old set, or files without a manifest
that `load` refuses; never a pair that reads as the wrong ids.

``out`` may also be a device or FIFO (``/dev/null``, a pipe to another program): the ids are
streamed into it, nothing is written beside it, and the result is ``(None, offsets)``.

Memory
------
The text held at once (batches queued, being encoded, or waiting to be written, plus the
batch being filled) stays under ``buffer_bytes``, whatever the corpus size; the ids of those
batches take about as much again (4 bytes per token, a token is ~4 bytes of English).  A
document is encoded whole (cutting it could change its ids), so a single document larger than
a batch is held whole: whole-file documents cost the size of the largest file.  With
``out=None`` the result array itself is in memory (built once more by the final
concatenation); with ``out=path`` ids go to disk as they are made.

Speed
-----
The main thread reads, cuts documents, checks UTF-8 and writes; ``num_threads`` workers run
the GIL-free kernel (`BPETable.encode_documents`, one call per batch), so reading, encoding
and writing overlap.  A split pattern without the C scanner runs through `regex`, which holds
the GIL: that path encodes on one thread.
"""
from __future__ import annotations

import contextlib
import json
import os
import stat
import zlib
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Iterator

import numpy as np

from ._corpus import encode_documents as encode_block, find_separators
from .formats.atomic import atomic_file_set, is_special_file
from .progress import Progress, wants_progress
from .text import utf8_bytes
from .threads import available_cores, useful_threads

DEFAULT_BUFFER_BYTES = 64 << 20
# batches no larger than this, so that a corpus of a few of them still spreads over the cores
# and the last batch leaves no core idle for long; larger ones gain nothing per call
MAX_BATCH_BYTES = 2 << 20
# the least read from a file (one that has reached its size may still be growing)
_MIN_READ = 1 << 16
EOT = "<|endoftext|>"
OFFSETS_SUFFIX = ".offsets"
MANIFEST_SUFFIX = ".manifest.json"
_MANIFEST_FORMAT = "fastbpe-corpus"
# the ids are checked at load by a CRC of this many bytes at each end (cheap for any size)
_SAMPLE_BYTES = 1 << 16
DTYPES = {"uint16": np.dtype("<u2"), "uint32": np.dtype("<u4")}


def encode_files(encoding, paths, out=None, *, separator=EOT, split_on=None, keep_empty=False,
                 dtype=None, num_threads=None, buffer_bytes=DEFAULT_BUFFER_BYTES,
                 show_progress=None):
    """Encode the files at `paths` (a path or an iterable of paths); see the module docstring.

    Returns ``(ids, offsets)``: numpy arrays, or with `out` read-only memory maps of the
    written files (``(None, offsets)`` when `out` is a device or FIFO)."""
    paths = _check_paths(paths)
    sizes = [os.path.getsize(p) for p in paths]
    split = _check_split_on(split_on)
    settings = _Settings(encoding, separator, dtype, num_threads, buffer_bytes)
    batches = _file_batches(paths, split, settings.batch_bytes, keep_empty)
    progress = Progress("encode-files", total=sum(sizes), unit=" MB", scale=1e6,
                        enabled=wants_progress(show_progress))
    return _run(settings, batches, out, progress)


def encode_documents(encoding, documents, out=None, *, separator=EOT, keep_empty=False,
                     dtype=None, num_threads=None, buffer_bytes=DEFAULT_BUFFER_BYTES,
                     show_progress=None):
    """Encode an iterable of documents (str, or bytes read as UTF-8 with replacement), consumed
    lazily; same output as `encode_files`."""
    if isinstance(documents, (str, bytes, bytearray)):
        raise TypeError("expected an iterable of documents, got a single "
                        f"{type(documents).__name__}")
    settings = _Settings(encoding, separator, dtype, num_threads, buffer_bytes)
    progress = Progress("encode", total=None, unit=" MB", scale=1e6,
                        enabled=wants_progress(show_progress))
    batches = _batches(_utf8_documents(documents), keep_empty, settings.batch_bytes)
    return _run(settings, batches, out, progress)


def save(path, ids, offsets) -> None:
    """Write (ids, offsets) in the layout above, as one atomic set with its manifest: for
    corpora encoded elsewhere (e.g. one shard per worker).  ids must be uint16 or uint32;
    offsets start at 0, never decrease and end at len(ids)."""
    path = os.fspath(path)
    ids = np.asarray(ids)
    if ids.ndim != 1 or ids.dtype.name not in DTYPES:
        raise ValueError(f"ids must be a 1-d uint16 or uint32 array, not {ids.dtype} with shape {ids.shape}")
    offsets = np.asarray(offsets)
    if (offsets.ndim != 1 or offsets.dtype.kind not in "iu" or offsets.size == 0 or offsets[0] != 0
            or offsets[-1] != len(ids) or np.any(np.diff(offsets.astype(np.int64)) < 0)):
        raise ValueError("offsets must be integers from 0 to len(ids), never decreasing")
    dtype = DTYPES[ids.dtype.name]
    with _sink_to(path, dtype) as sink:
        sink.add(ids, offsets[1:].astype(np.int64, copy=False))


def load(path, *, mmap=True):
    """``(ids, offsets)`` of a corpus written with ``out=path``.  ValueError when its
    manifest is missing or does not describe the ids and offsets beside it (an interrupted
    write, or files copied from different runs)."""
    path = os.fspath(path)
    manifest = _read_manifest(path)
    dtype = DTYPES[manifest["dtype"]]
    offsets = np.fromfile(path + OFFSETS_SUFFIX, dtype="<i8")
    if zlib.crc32(offsets.data) != manifest["offsets_crc32"]:
        raise ValueError(f"{path + OFFSETS_SUFFIX} is not the offsets its manifest "
                         f"{path + MANIFEST_SUFFIX} describes (written by another run?)")
    if offsets.size == 0 or offsets[0] != 0 or np.any(np.diff(offsets) < 0):
        raise ValueError(f"{path + OFFSETS_SUFFIX} is not an offsets file")
    if int(offsets[-1]) * dtype.itemsize != manifest["ids_bytes"]:
        raise ValueError(f"{path + OFFSETS_SUFFIX} ends at {int(offsets[-1])} ids, but "
                         f"{path} holds {manifest['ids_bytes']} bytes of {dtype.name}")
    if manifest["ids_bytes"] == 0:
        return np.empty(0, dtype=dtype), offsets
    ids = np.memmap(path, dtype=dtype, mode="r") if mmap else np.fromfile(path, dtype=dtype)
    return ids, offsets


def _read_manifest(path: str) -> dict:
    """The manifest of the pair at `path`, checked against the files' sizes and the CRC
    of the ids' first and last bytes."""
    where = path + MANIFEST_SUFFIX
    try:
        with open(where, "rb") as f:
            manifest = json.loads(f.read(1 << 20))
    except FileNotFoundError:
        raise ValueError(f"{path}: no {os.path.basename(where)} beside it, so the ids and "
                         "offsets are not known to belong together (an interrupted write, or "
                         "not written by fastbpe): write them again with encode_files or "
                         "fastbpe.corpus.save") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{where}: not a corpus manifest ({e})") from None
    fields = {"format": str, "ids": str, "offsets": str, "dtype": str, "ids_bytes": int,
              "offsets_bytes": int, "offsets_crc32": int, "ids_sample_crc32": int}
    if (not isinstance(manifest, dict) or manifest.get("format") != _MANIFEST_FORMAT
            or any(type(manifest.get(k)) is not t for k, t in fields.items())
            or manifest["dtype"] not in DTYPES):
        raise ValueError(f"{where}: not a corpus manifest written by fastbpe")
    for key, name in (("ids", os.path.basename(path)),
                      ("offsets", os.path.basename(path) + OFFSETS_SUFFIX)):
        if manifest[key] != name:
            raise ValueError(f"{where} describes {manifest[key]!r}, not {name!r}")
    for file, key in ((path, "ids_bytes"), (path + OFFSETS_SUFFIX, "offsets_bytes")):
        size = os.path.getsize(file)
        if size != manifest[key]:
            raise ValueError(f"{file} holds {size} bytes, its manifest {where} says "
                             f"{manifest[key]}: the files do not belong together (an "
                             "interrupted write?)")
    with open(path, "rb") as f:
        if _ends_crc32(f, manifest["ids_bytes"]) != manifest["ids_sample_crc32"]:
            raise ValueError(f"{path} is not the ids its manifest {where} describes "
                             "(written by another run?)")
    return manifest


def _ends_crc32(f, size: int) -> int:
    """CRC-32 of the first and the last _SAMPLE_BYTES of an open file of `size` bytes."""
    head = f.read(min(size, _SAMPLE_BYTES))
    f.seek(max(0, size - _SAMPLE_BYTES))
    return zlib.crc32(f.read(_SAMPLE_BYTES), zlib.crc32(head))


# ----------------------------------------------------------------------------------------
# arguments


class _Settings:
    """The checked arguments shared by both entry points, and the batch size they imply."""

    def __init__(self, encoding, separator, dtype, num_threads, buffer_bytes):
        self.encoding = encoding
        self.separator = separator_id(encoding, separator)
        # a special token far above the other ids is not in the kernel's table (see
        # encoding._build_table): the kernel leaves it out and it is put in afterwards
        self.kernel_separator = self.separator if _in_table(encoding.kernel, self.separator) else -1
        self.dtype = choose_dtype(encoding, dtype)
        if num_threads is None:
            num_threads = available_cores()
        if type(num_threads) is not int or num_threads < 1:
            raise ValueError(f"num_threads must be a positive int, not {num_threads!r}")
        num_threads = useful_threads(num_threads)
        if type(buffer_bytes) is not int or buffer_bytes < 1:
            raise ValueError(f"buffer_bytes must be a positive int, not {buffer_bytes!r}")
        self.kind = encoding.splitter.kind
        # the regex path holds the GIL per match: more threads only contend (see Encoding)
        self.num_threads = num_threads if self.kind >= 0 else 1
        # text in memory at once: max_in_flight batches submitted + one being filled + the
        # reader's block; two batches per worker keep every worker busy while one is written
        self.max_in_flight = 2 * self.num_threads
        self.batch_bytes = max(1, min(buffer_bytes // (self.max_in_flight + 2), MAX_BATCH_BYTES))


def separator_id(encoding, separator) -> int:
    """The separator as a token id, -1 for none."""
    if separator is None:
        return -1
    if isinstance(separator, str):
        special_tokens = encoding.special_tokens
        if separator in special_tokens:
            return special_tokens[separator]
        try:
            return encoding.encode_single_token(separator)
        except KeyError:
            hint = " (pass separator=None for none)" if separator == EOT else ""
            raise ValueError(f"separator {separator!r} is not a token of {encoding.name}{hint}") from None
    if isinstance(separator, (bool, float)) or not hasattr(separator, "__index__"):
        raise TypeError(f"separator must be a token id, a token's text or None, not {separator!r}")
    token = int(separator)
    try:
        encoding.decode_single_token_bytes(token)
    except (KeyError, OverflowError):
        raise ValueError(f"separator {token} is not a token id of {encoding.name}") from None
    return token


def _in_table(table, token: int) -> bool:
    """Whether the kernel's table holds this id (-1, none, is not held)."""
    try:
        table.token_bytes(token)
    except KeyError:
        return False
    return True


def choose_dtype(encoding, dtype) -> np.dtype:
    """uint16 when every id fits (n_vocab <= 65536), else uint32; a uint16 that cannot hold
    every id is refused rather than silently wrapped."""
    if dtype is None:
        return DTYPES["uint16" if encoding.n_vocab <= 1 << 16 else "uint32"]
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = None
    if name not in DTYPES:
        raise ValueError(f"dtype must be uint16 or uint32 (or None to choose), not {dtype!r}")
    if name == "uint16" and encoding.n_vocab > 1 << 16:
        raise ValueError(f"{encoding.name} has {encoding.n_vocab} token ids, more than uint16 "
                         "holds (65536): use dtype=uint32")
    return DTYPES[name]


def _check_paths(paths) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    elif isinstance(paths, (bytes, bytearray)):
        raise TypeError("paths must be str or os.PathLike (or an iterable of them), not bytes")
    out = []
    for p in paths:
        if not isinstance(p, (str, os.PathLike)):
            raise TypeError(f"paths must be str or os.PathLike, not {type(p).__name__}")
        p = os.fspath(p)
        if os.path.isdir(p):
            raise IsADirectoryError(f"{p} is a directory, not a file")
        if not os.path.exists(p):
            raise FileNotFoundError(f"no such file: {p}")
        out.append(p)
    return out


def _check_split_on(split_on) -> bytes | None:
    if split_on is None:
        return None
    if not isinstance(split_on, str):
        raise TypeError(f"split_on must be str or None, not {type(split_on).__name__}")
    if not split_on:
        raise ValueError("split_on cannot be empty (None keeps each file whole)")
    # UTF-8 is self-synchronising: a match in the bytes is a match in the text
    return split_on.encode("utf-8")


# ----------------------------------------------------------------------------------------
# documents in


def _file_batches(paths: list[str], split: bytes | None, block_bytes: int, keep_empty: bool):
    """The batches of every file, in order.  Whole-file documents are grouped into batches;
    a split file is read in blocks, each block's complete documents one batch, located in
    place; only the unfinished document at the end of a block is carried over; the batches
    of small files are joined."""
    if split is None:
        yield from _batches(_whole_files(paths), keep_empty, block_bytes)
    else:
        yield from _merged(_split_files(paths, split, block_bytes, keep_empty), block_bytes)


def _split_files(paths: list[str], split: bytes, block_bytes: int, keep_empty: bool):
    """Each file's batches: read in blocks, each block's complete documents one batch.
    Linear whatever the input: the carried-over document grows in place (amortised), a
    file that grows while it is read is read on in blocks, and a FIFO or stdin is read as
    a stream (no seek, no size)."""
    for path in paths:
        with open(path, "rb") as f:
            regular = stat.S_ISREG(os.fstat(f.fileno()).st_mode)
            carry = bytearray()
            while True:
                # the carried-over document and what is read make one batch of block_bytes; a
                # document longer than that doubles what is read (linear, however long it is)
                want = block_bytes - len(carry) if len(carry) < block_bytes else len(carry)
                if regular:  # a small file: no large buffer; a growing one: still blocks
                    left = os.fstat(f.fileno()).st_size - f.tell()
                    want = min(want, max(left, _MIN_READ))
                chunk = f.read(want)
                if not chunk:
                    break
                searched = max(0, len(carry) - len(split) + 1)  # the carry held no separator
                carry += chunk
                hits = find_separators(carry, split, searched)
                if not len(hits):
                    continue
                buf = carry
                starts = np.empty(len(hits), dtype=np.int64)
                starts[0] = 0
                starts[1:] = hits[:-1] + len(split)
                done = int(hits[-1]) + len(split)
                carry = buf[done:]
                yield _in_place(buf, starts, hits, keep_empty, done)
            if carry or keep_empty:
                yield _pack([bytes(carry)])


def _merged(batches, batch_bytes: int):
    """Runs of small batches (the documents of small files) joined into batches of up to
    batch_bytes, so that many small files cost one kernel call per batch, not one per file."""
    group, size = [], 0
    for batch in batches:
        if group and size + batch[3] > batch_bytes:
            yield _joined(group)
            group, size = [], 0
        group.append(batch)
        size += batch[3]
    if group:
        yield _joined(group)


def _joined(group: list):
    if len(group) == 1:
        return group[0]
    parts, starts, ends, base = [], [], [], 0
    for data, batch_starts, batch_ends, size in group:
        parts.append(memoryview(data)[:size])  # its documents end by `size`
        starts.append(batch_starts + base)
        ends.append(batch_ends + base)
        base += size
    return b"".join(parts), np.concatenate(starts), np.concatenate(ends), base


def _whole_files(paths: list[str]) -> Iterator[bytes]:
    for path in paths:
        with open(path, "rb") as f:
            yield f.read()


def _in_place(data: bytearray, starts: np.ndarray, ends: np.ndarray, keep_empty: bool, size: int):
    """The batch of the documents data[starts[i]:ends[i]], which end at byte `size`."""
    if not keep_empty:
        nonempty = ends > starts
        starts, ends = starts[nonempty], ends[nonempty]
    return data, starts, ends, size


def _utf8_documents(documents: Iterable) -> Iterator[bytes]:
    for doc in documents:
        if isinstance(doc, str):
            yield utf8_bytes(doc)   # lone surrogates: tiktoken's replacement
        elif isinstance(doc, (bytes, bytearray, memoryview)):
            yield bytes(doc)
        else:
            raise TypeError(f"documents must be str or bytes, not {type(doc).__name__}")


def _batches(documents: Iterator[bytes], keep_empty: bool, batch_bytes: int):
    """Group documents into batches of at most batch_bytes of text (a larger document is a
    batch of its own)."""
    docs: list[bytes] = []
    size = 0
    for doc in documents:
        if not doc and not keep_empty:
            continue
        if docs and size + len(doc) > batch_bytes:
            yield _pack(docs)
            docs, size = [], 0
        docs.append(doc)
        size += len(doc)
    if docs:
        yield _pack(docs)


def _pack(docs: list[bytes]):
    """A batch of documents laid end to end: (data, int64 starts, int64 ends, input bytes)."""
    data = b"".join(docs)
    ends = np.cumsum([len(d) for d in docs], dtype=np.int64)
    return data, ends - [len(d) for d in docs], ends, len(data)


def _replace_bad_utf8(data, starts: np.ndarray, ends: np.ndarray):
    """The batch with each document decoded with errors="replace" and encoded again: the same
    text as decoding the whole file so, since a separator is valid UTF-8 and no invalid
    sequence runs into it."""
    docs = [bytes(data[s:e]).decode("utf-8", "replace").encode("utf-8")
            for s, e in zip(starts.tolist(), ends.tolist())]
    data, starts, ends, _ = _pack(docs)
    return data, starts, ends


# ----------------------------------------------------------------------------------------
# the pipeline


def _encode_batch(settings: _Settings, data: bytes, starts: np.ndarray, ends: np.ndarray):
    """(uint32 ids, int64 stops) of one batch; runs on a worker thread."""
    enc = settings.encoding
    if settings.kind >= 0:
        sep = settings.kernel_separator
        done = encode_block(enc.kernel, data, starts, ends, settings.kind, sep)
        if done is None:  # not valid UTF-8 (checked in the kernel, off the GIL)
            data, starts, ends = _replace_bad_utf8(data, starts, ends)
            done = encode_block(enc.kernel, data, starts, ends, settings.kind, sep)
        if sep != settings.separator:
            ids, stops = done
            ids = np.insert(ids, stops, np.uint32(settings.separator))
            done = ids, stops + np.arange(1, len(stops) + 1)
        return done
    parts, stops, total = [], np.empty(len(starts), dtype=np.int64), 0
    for i, (start, end) in enumerate(zip(starts.tolist(), ends.tolist())):
        ids = enc.encode_to_numpy(bytes(data[start:end]).decode("utf-8", "replace"), disallowed_special=())
        parts.append(ids)
        total += len(ids)
        if settings.separator >= 0:
            parts.append(np.array([settings.separator], dtype=np.uint32))
            total += 1
        stops[i] = total
    return (np.concatenate(parts) if parts else np.empty(0, dtype=np.uint32)), stops


class _Pipeline:
    """Submits batches to the workers, at most max_in_flight at once, and hands finished ones
    to the sink in input order.  Counts the text it holds (peak_text_bytes) so tests can check
    the bound without timing anything."""

    def __init__(self, settings: _Settings, sink, progress: Progress):
        self.settings = settings
        self.sink = sink
        self.progress = progress
        self.pending: deque = deque()
        self.text_bytes = 0
        self.peak_text_bytes = 0
        self.raw_done = 0

    def run(self, batches) -> None:
        with ThreadPoolExecutor(self.settings.num_threads, thread_name_prefix="fastbpe-corpus") as pool:
            try:
                for data, starts, ends, raw_size in batches:
                    # count the batch from the moment it exists (it is being filled until now)
                    self.text_bytes += len(data)
                    self.peak_text_bytes = max(self.peak_text_bytes, self.text_bytes)
                    while len(self.pending) >= self.settings.max_in_flight:
                        self._write_oldest()
                    future = pool.submit(_encode_batch, self.settings, data, starts, ends)
                    self.pending.append((future, len(data), raw_size))
                    while self.pending and self.pending[0][0].done():
                        self._write_oldest()
                while self.pending:
                    self._write_oldest()
            except BaseException:
                for future, _, _ in self.pending:
                    future.cancel()
                raise

    def _write_oldest(self) -> None:
        future, n_text, raw_size = self.pending.popleft()
        ids, ends = future.result()
        self.sink.add(ids, ends)
        self.text_bytes -= n_text
        self.raw_done += raw_size
        self.progress.update(self.raw_done)


class _ArraySink:
    """Collects ids and offsets in memory."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.ids: list[np.ndarray] = []
        self.ends: list[np.ndarray] = [np.zeros(1, dtype=np.int64)]
        self.n_ids = 0

    def add(self, ids, ends) -> None:
        self.ids.append(ids.astype(self.dtype, copy=False))
        self.ends.append(ends + self.n_ids)
        self.n_ids += len(ids)

    def result(self):
        ids = np.concatenate(self.ids) if self.ids else np.empty(0, dtype=self.dtype)
        self.ids.clear()
        return ids, np.concatenate(self.ends)


class _FileSink:
    """Streams ids and offsets to two open files, noting what the manifest records."""

    def __init__(self, dtype, ids_file, offsets_file):
        self.dtype = dtype
        self.ids_file = ids_file
        self.offsets_file = offsets_file
        self.n_ids = 0
        self.ids_bytes = 0
        self.offsets_bytes = 0
        self.offsets_crc32 = 0
        self.head = bytearray()  # the ids' first and last _SAMPLE_BYTES
        self.tail = b""
        self._write_offsets(np.zeros(1, dtype="<i8"))

    def add(self, ids, ends) -> None:
        data = memoryview(np.ascontiguousarray(ids.astype(self.dtype, copy=False))).cast("B")
        self.ids_file.write(data)
        self.ids_bytes += len(data)
        if len(self.head) < _SAMPLE_BYTES:
            self.head += data[:_SAMPLE_BYTES - len(self.head)]
        self.tail = (self.tail + bytes(data[-_SAMPLE_BYTES:]))[-_SAMPLE_BYTES:]
        self._write_offsets((ends + self.n_ids).astype("<i8", copy=False))
        self.n_ids += len(ids)

    def _write_offsets(self, offsets: np.ndarray) -> None:
        data = memoryview(np.ascontiguousarray(offsets)).cast("B")
        self.offsets_file.write(data)
        self.offsets_bytes += len(data)
        self.offsets_crc32 = zlib.crc32(data, self.offsets_crc32)

    def manifest(self, path: str) -> bytes:
        return json.dumps({
            "format": _MANIFEST_FORMAT, "version": 1,
            "ids": os.path.basename(path), "offsets": os.path.basename(path) + OFFSETS_SUFFIX,
            "dtype": self.dtype.name, "n_tokens": self.n_ids,
            "n_documents": self.offsets_bytes // 8 - 1,
            "ids_bytes": self.ids_bytes, "offsets_bytes": self.offsets_bytes,
            "offsets_crc32": self.offsets_crc32,
            "ids_sample_crc32": zlib.crc32(self.tail, zlib.crc32(self.head)),
        }, indent=1).encode("utf-8") + b"\n"


class _StreamSink:
    """Streams ids into a device or FIFO; the offsets stay in memory (8 bytes a document)."""

    def __init__(self, dtype, ids_file):
        self.dtype = dtype
        self.ids_file = ids_file
        self.n_ids = 0
        self.ends: list[np.ndarray] = [np.zeros(1, dtype=np.int64)]

    def add(self, ids, ends) -> None:
        self.ids_file.write(np.ascontiguousarray(ids.astype(self.dtype, copy=False)).data)
        self.ends.append(ends + self.n_ids)
        self.n_ids += len(ids)


@contextlib.contextmanager
def _sink_to(path: str, dtype):
    """The sink that writes to `path`: the ids, offsets and manifest as one atomic set (see
    the module docstring), or for a device or FIFO the ids streamed into it."""
    if is_special_file(path):
        with atomic_file_set([path]) as (ids_file,):
            yield _StreamSink(dtype, ids_file)
        return
    with atomic_file_set([path, path + OFFSETS_SUFFIX, path + MANIFEST_SUFFIX]) as files:
        ids_file, offsets_file, manifest_file = files
        sink = _FileSink(dtype, ids_file, offsets_file)
        yield sink
        manifest_file.write(sink.manifest(path))


def _run(settings: _Settings, batches, out, progress: Progress):
    with progress:
        if out is None:
            sink = _ArraySink(settings.dtype)
            _Pipeline(settings, sink, progress).run(batches)
            return sink.result()
        out = os.fspath(out)
        with _sink_to(out, settings.dtype) as sink:
            _Pipeline(settings, sink, progress).run(batches)
    if isinstance(sink, _StreamSink):
        return None, np.concatenate(sink.ends)
    return load(out)
