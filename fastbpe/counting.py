"""Step 1 of training: split texts with the pattern and count the unique pieces
(:class:`fastbpe._count.PieceCounter`).  Memory grows with the number of unique pieces,
not with the corpus, so a generator over a huge file works.  Counts merge by addition, so
this step can run elsewhere (``count_pieces`` on shards, then
``trainer.train_from_counts`` on the summed mapping).  Each text is split on its own
(pieces never cross texts), as rustbpe does."""
from __future__ import annotations

import bisect
import collections
import multiprocessing
import os
import queue
import sys
import threading
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import regex

from . import _count
from .patterns import GPT4_PATTERN
from .pretokenize import scanner_kind, whole_matches
from .progress import Progress, wants_progress
from .text import fix_surrogates, utf8_bytes
from .threads import available_cores, useful_threads

__all__ = ["count_pieces", "count_files", "read_blocks", "compile_pattern", "scanner_for"]

# Text is handed to the counter in batches of about this many characters.
_BATCH_CHARS = 1 << 22

# Files are read in blocks of about this many characters.
_FILE_BLOCK_CHARS = 1 << 22


def compile_pattern(pattern):
    if not isinstance(pattern, str):
        raise TypeError("pattern must be a str")
    try:
        return regex.compile(pattern)
    except regex.error as e:
        raise ValueError(f"invalid split pattern: {e}") from e


# ---------------------------------------------------------------------------------------
# step 1: counting
# ---------------------------------------------------------------------------------------

def _count_text(counter, compiled, text: str) -> None:
    pieces = whole_matches(compiled)(text)
    done = counter.add_pieces(pieces)
    if done < len(pieces):  # a lone surrogate: count the rest with it replaced
        counter.add_pieces([fix_surrogates(p) for p in pieces[done:]])


def _batches(texts, batch_chars, utf8_ok=False):
    """Group an iterable of str (and UTF-8 bytes if ``utf8_ok``: the file reader's blocks)
    into lists of about ``batch_chars`` characters, each with its size: characters, or
    with ``utf8_ok`` bytes of UTF-8 (what the progress of files counts)."""
    batch, size = [], 0
    for i, text in enumerate(texts):
        if not isinstance(text, str) and not (utf8_ok and type(text) is bytes):
            raise TypeError(f"texts must contain str, item {i} is {type(text).__name__}")
        batch.append(text)
        size += len(text.encode("utf-8", "surrogatepass")) if utf8_ok and type(text) is str else len(text)
        if size >= batch_chars:
            yield batch, size
            batch, size = [], 0
    if batch:
        yield batch, size


def _resolve_workers(num_threads) -> int:
    if num_threads is None:
        return available_cores()
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
        raise ValueError("num_threads must be a positive int or None")
    return useful_threads(num_threads)


def scanner_for(pattern: str):
    """The C pre-tokenizer for ``pattern`` when it knows the pattern, else None."""
    kind = scanner_kind(pattern)
    return _count.Scanner(kind) if kind >= 0 else None


def _utf8(text) -> bytes:
    """A text's UTF-8; a block from the file reader is bytes already."""
    return text if type(text) is bytes else utf8_bytes(text)


def _fork_is_safe() -> bool:
    # fork copies only the calling thread: safe when there is no other thread (whose
    # locks a child could inherit held), and it needs no `if __name__ == "__main__"`
    # guard in the user's script, unlike spawn
    return (sys.platform.startswith("linux") and threading.active_count() == 1
            and "fork" in multiprocessing.get_all_start_methods())


def _count_batch_regex(pattern: str, texts: list):
    """Worker process: count one batch with ``regex``; returns PieceCounter.export()."""
    counter = _count.PieceCounter()
    compiled = compile_pattern(pattern)
    for text in texts:
        _count_text(counter, compiled, text)
    return counter.export()


def _count_regex(texts, pattern, counter, workers, bar):
    """``regex`` holds the GIL, so threads would not help: after the first batch (small
    inputs stay in this process), batches go to ``workers`` forked processes when that
    is safe, at most two per worker in flight.  Results are added in submission order,
    which keeps the order of first appearance."""
    compiled = compile_pattern(pattern)
    batches = _batches(texts, _BATCH_CHARS)
    seen = 0
    for batch, size in batches:
        for text in batch:
            _count_text(counter, compiled, text)
        seen += size
        bar.update(seen)
        if workers > 1 and _fork_is_safe():
            break
    else:
        return counter
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
        pending = collections.deque()

        def collect_one():
            nonlocal seen
            future, n = pending.popleft()
            counter.add_exported(*future.result())
            seen += n
            bar.update(seen)

        for batch, size in batches:
            pending.append((pool.submit(_count_batch_regex, pattern, batch), size))
            while len(pending) >= 2 * workers:
                collect_one()
        while pending:
            collect_one()
    return counter


def _count_stream(texts, pattern, counter, num_threads, bar, utf8_ok=False, kind=None):
    """Count an iterable of str in batches.  With the C scanner, batches are counted
    without the GIL by ``num_threads`` threads, each into its own counter (merged by
    addition at the end; at most two batches per thread in flight, so memory stays
    bounded).  Otherwise see ``_count_regex``."""
    workers = _resolve_workers(num_threads)
    scanner = scanner_for(pattern) if kind is None else _count.Scanner(kind)
    seen = 0
    if scanner is None:
        return _count_regex(texts, pattern, counter, workers, bar)
    if workers == 1:
        for batch, size in _batches(texts, _BATCH_CHARS, utf8_ok):
            _count.count_utf8(counter, scanner, [_utf8(t) for t in batch])
            seen += size
            bar.update(seen)
        return counter
    free = queue.SimpleQueue()
    free.put(counter)
    for _ in range(workers - 1):
        free.put(_count.PieceCounter())

    def work(data):
        c = free.get()
        try:
            _count.count_utf8(c, scanner, data)
        finally:
            free.put(c)

    with ThreadPoolExecutor(workers) as pool:
        pending = collections.deque()
        for batch, size in _batches(texts, _BATCH_CHARS // workers, utf8_ok):
            pending.append((pool.submit(work, [_utf8(t) for t in batch]), size))
            while len(pending) >= 2 * workers:
                future, n = pending.popleft()
                future.result()
                seen += n
                bar.update(seen)
        while pending:
            future, n = pending.popleft()
            future.result()
            seen += n
            bar.update(seen)
    others = []
    while not free.empty():
        c = free.get()
        if c is not counter:
            others.append(c)
    for c in others:
        counter.update(c)
    return counter


def count_pieces(texts: Iterable[str], pattern: str = GPT4_PATTERN, *, counter=None,
                 show_progress=None, num_threads=None, kind: int | None = None) -> "_count.PieceCounter":
    """Split every text with ``pattern`` and count the pieces.  ``texts`` is consumed as
    a stream.  Returns a :class:`fastbpe._count.PieceCounter` (``.to_dict()`` gives
    {piece bytes: count}); pass ``counter`` to keep adding to an existing one.
    ``num_threads`` caps the parallel workers (default: all cores).  ``kind``: a C scanner
    kind to split with (a scanner program an HF Split compiled), instead of the pattern's."""
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be an iterable of str (wrap a single text in a list)")
    counter = _count.PieceCounter() if counter is None else counter
    # texts are counted in characters (their UTF-8 size is not known without encoding)
    with Progress("counting", unit=" M chars", scale=1e6,
                  enabled=wants_progress(show_progress)) as bar:
        return _count_stream(texts, pattern, counter, num_threads, bar, kind=kind)


# Pieces ending this close to a block's end may still change with the text after it: the
# known patterns look at most 3 characters ahead ("'ll"), a custom pattern is assumed to
# look at most _REGEX_MARGIN characters ahead.
_SCANNER_MARGIN = 64  # bytes
_REGEX_MARGIN = 4096  # characters


def _file_chunks(path, block_chars):
    """A UTF-8 text file in chunks of ``block_chars`` characters (invalid bytes: U+FFFD)."""
    with open(path, "r", encoding="utf-8", errors="replace", newline="") as f:
        while True:
            chunk = f.read(block_chars)
            if not chunk:
                return
            yield chunk


def _cut_at_pieces(chunks, empty, last_piece_end, margin, block_size):
    """Join chunks into blocks that end where a piece of the whole text ends, so counting
    the blocks one by one counts the same pieces as the whole text.

    Each block is split from its start (a true piece boundary: the previous cut) and cut
    after the last piece that ends ``margin`` or more before the buffer's end; the rest is
    carried.  Where no piece ends in time (one huge piece), the buffer is scanned again
    only after it has doubled, so the total work stays linear in the file; memory is a
    few blocks or the longest piece, which the counter must hold anyway."""
    parts, size, need = [], 0, block_size
    for chunk in chunks:
        parts.append(chunk)
        size += len(chunk)
        if size < need:
            continue
        buf = empty.join(parts)
        cut = last_piece_end(buf, size - margin)
        if cut <= 0:
            parts, need = [buf], 2 * size
            continue
        yield buf[:cut]
        rest = buf[cut:]
        parts, size, need = [rest], len(rest), block_size
    if size:
        yield empty.join(parts)


def read_blocks(path, pattern: str = GPT4_PATTERN, block_chars=_FILE_BLOCK_CHARS):
    """A text file in blocks that count like the whole file with ``pattern``: UTF-8
    bytes when the C scanner knows the pattern (it counts bytes), else str."""
    scanner = scanner_for(pattern)
    chunks = _file_chunks(path, block_chars)
    if scanner is not None:
        def last_end(buf, limit):
            return _count.last_piece_end(scanner, buf, limit)

        return _cut_at_pieces((c.encode("utf-8") for c in chunks), b"", last_end,
                              _SCANNER_MARGIN, block_chars)
    compiled = compile_pattern(pattern)

    def last_end_regex(buf, limit):
        # a custom pattern can look anywhere ahead: try the last piece ends before
        # `limit` until one is checked: from a piece end _REGEX_MARGIN earlier, the
        # text cut there splits into the same pieces (regex's endpos acts as the end)
        ends = [0]
        for m in compiled.finditer(buf):
            if m.end() > limit:
                break
            ends.append(m.end())
        for j in range(len(ends) - 1, max(0, len(ends) - 9), -1):
            i = max(0, bisect.bisect_right(ends, ends[j] - _REGEX_MARGIN) - 1)
            if [m.end() for m in compiled.finditer(buf, ends[i], ends[j])] == ends[i + 1:j + 1]:
                return ends[j]
        return 0

    return _cut_at_pieces(chunks, "", last_end_regex, _REGEX_MARGIN, block_chars)


def count_files(paths, pattern: str = GPT4_PATTERN, *, counter=None, show_progress=None,
                num_threads=None):
    """Count the pieces of text files (UTF-8; invalid bytes become U+FFFD)."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    for p in paths:
        if not os.path.isfile(p):
            raise FileNotFoundError(f"no such file: {p!r}")
    counter = _count.PieceCounter() if counter is None else counter
    total = sum(os.path.getsize(p) for p in paths)
    blocks = (block for p in paths for block in read_blocks(p, pattern, _FILE_BLOCK_CHARS))
    with Progress("counting", total=total, unit=" MB", scale=1e6,
                  enabled=wants_progress(show_progress)) as bar:
        return _count_stream(blocks, pattern, counter, num_threads, bar, utf8_ok=True)
