"""Training front end: texts -> piece counts -> merge kernel -> Encoding.

The two steps are separate on purpose:

1. *Counting* splits each text with the pattern and counts unique pieces
   (:class:`fastbpe._train.PieceCounter`).  Memory grows with the number of unique
   pieces, not with the corpus, so a generator over a huge file works.  Counts merge by
   addition, so this step can run elsewhere (``count_pieces`` on shards, then
   ``train_from_counts`` on the summed mapping).
2. *Merging* runs :class:`fastbpe._train.PieceTrainer` over the unique pieces without
   the GIL.

Ids: 0..255 are the raw bytes, then one id per merge in order, then the special tokens.
``vocab_size`` counts all three.  Ties between pairs with equal counts go to the
smallest (left id, right id), as in HF tokenizers, rustbpe and bpeasy, so on the same
documents and pattern the vocabulary equals rustbpe's.

Each text is split on its own (pieces never cross texts), as rustbpe does.
"""
from __future__ import annotations

import bisect
import collections
import multiprocessing
import os
import queue
import sys
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import regex

from . import _train
from .patterns import GPT4_PATTERN
from .pretokenize import scanner_kind, whole_matches
from .progress import Progress, wants_progress
from .text import fix_surrogates
from .threads import available_cores

__all__ = [
    "BPEModel",
    "train",
    "train_files",
    "train_from_counts",
    "train_model",
    "count_pieces",
    "count_files",
    "save_model",
    "load_model",
    "as_model",
]

# Text is handed to the counter in batches of about this many characters.
_BATCH_CHARS = 1 << 22
_INT32_MAX = 2**31 - 1
# a merges row for an id that no merge makes (a gap in a vocabulary's ranks)
NO_MERGE = -1
_INT64_MAX = 2**63 - 1
# Files are read in blocks of about this many characters.
_FILE_BLOCK_CHARS = 1 << 22


# ---------------------------------------------------------------------------------------
# the result of training
# ---------------------------------------------------------------------------------------

@dataclass
class BPEModel:
    """A trained byte-level BPE: merges in order (merge i makes id 256 + i), the split
    pattern and the special tokens (str -> id).  ``merge_counts`` holds how often each
    pair occurred when it was merged (empty when loaded from a file without them).
    ``byte_order`` gives the byte of ids 0..255 when they are not in byte order (GPT-2 and
    the OpenAI vocabularies); None means id b is byte b.  ``source`` (set by
    :func:`load_model`) lets a pickle carry the file path instead of the merges."""

    merges: np.ndarray  # rows of (left id, right id); NO_MERGE rows are unused ids
    pattern: str = GPT4_PATTERN
    special_tokens: dict = field(default_factory=dict)
    merge_counts: np.ndarray | None = None
    byte_order: bytes | None = None
    source: tuple | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        self.merges = np.ascontiguousarray(np.asarray(self.merges, dtype=np.int32).reshape(-1, 2))
        if self.byte_order is not None:
            self.byte_order = bytes(self.byte_order)
            if sorted(self.byte_order) != list(range(256)):
                raise ValueError("byte_order must hold each byte 0..255 once")
            if self.byte_order == bytes(range(256)):
                self.byte_order = None

    def __getstate__(self):
        # loaded from a file that is still as it was: pickle where to load it from (small,
        # for shipping to worker processes), else everything
        if self.source is not None and _file_stamp(self.source[0]) == self.source[3]:
            return {"source": self.source}
        state = dict(self.__dict__)
        state["source"] = None
        return state

    def __setstate__(self, state):
        if set(state) == {"source"}:
            path, fmt, pattern, stamp = state["source"]
            if _file_stamp(path) != stamp:
                raise ValueError(f"cannot unpickle the model loaded from {path!r}: the file "
                                 "has changed or is gone since it was pickled")
            state = load_model(path, fmt, pattern=pattern).__dict__
        self.__dict__.update(state)

    @property
    def n_merges(self) -> int:
        return int(self.merges.shape[0])

    @property
    def n_vocab(self) -> int:
        ids = [256 + self.n_merges - 1, *self.special_tokens.values()]
        return max(ids) + 1

    def token_bytes(self) -> list:
        """The bytes of every non-special id, in id order (None for an unused id)."""
        vocab = [bytes([b]) for b in (self.byte_order or range(256))]
        for left, right in self.merges.tolist():
            vocab.append(None if left == NO_MERGE else vocab[left] + vocab[right])
        return vocab

    def tokenizer_json_document(self) -> dict:
        """This model as a Hugging Face tokenizer.json document.  fastbpe encodes it through
        its Encoding (rank semantics), so it is exported by ranks."""
        from .formats.hf_json import document_from_ranks

        return document_from_ranks(self.pattern, self.mergeable_ranks(), self.special_tokens)

    def mergeable_ranks(self) -> dict:
        """token bytes -> id, as tiktoken wants.  If two merges made the same bytes (rare,
        possible in BPE), the first id keeps them."""
        ranks = {}
        for i, b in enumerate(self.token_bytes()):
            if b is not None:
                ranks.setdefault(b, i)
        return ranks

    def to_encoding(self, name: str = "fastbpe-trained"):
        """A tiktoken-style `fastbpe.Encoding`.  Note: it encodes with tiktoken's rank
        semantics, as rustbpe's exported vocabularies do."""
        from .encoding import Encoding

        enc = Encoding(name, pat_str=self.pattern, mergeable_ranks=self.mergeable_ranks(),
                      special_tokens=dict(self.special_tokens))
        enc.bpe_model = self  # lets the savers write the exact merges
        return enc


# ---------------------------------------------------------------------------------------
# argument checks
# ---------------------------------------------------------------------------------------

def _check_special_tokens(special_tokens) -> list:
    if special_tokens is None:
        return []
    if isinstance(special_tokens, (str, bytes)):
        raise TypeError("special_tokens must be an iterable of str, not a single string")
    out = []
    for s in special_tokens:
        if not isinstance(s, str):
            raise TypeError(f"special tokens must be str, got {type(s).__name__}")
        if not s:
            raise ValueError("a special token cannot be empty")
        if s in out:
            raise ValueError(f"duplicate special token {s!r}")
        out.append(s)
    return out


def _check_args(vocab_size, special_tokens, min_frequency, max_token_length):
    specials = _check_special_tokens(special_tokens)
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, (int, np.integer)):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    if vocab_size < 256 + len(specials):
        raise ValueError(
            f"vocab_size={vocab_size} is too small: it must be at least 256 (the byte "
            f"tokens) + {len(specials)} special token(s) = {256 + len(specials)}")
    if min_frequency is None:
        min_frequency = 0
    if not isinstance(min_frequency, (int, np.integer)) or min_frequency < 0:
        raise ValueError("min_frequency must be a non-negative int")
    if max_token_length is not None and (
            isinstance(max_token_length, bool)
            or not isinstance(max_token_length, (int, np.integer))
            or not 1 <= max_token_length <= _INT32_MAX):
        raise ValueError(f"max_token_length must be an int in 1..{_INT32_MAX} or None "
                         "(the kernel stores it in 32 bits)")
    return int(vocab_size), specials, int(min_frequency), int(max_token_length or 0)


def _compile(pattern):
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
    into lists of about ``batch_chars`` characters."""
    batch, size = [], 0
    for i, text in enumerate(texts):
        if not isinstance(text, str) and not (utf8_ok and type(text) is bytes):
            raise TypeError(f"texts must contain str, item {i} is {type(text).__name__}")
        batch.append(text)
        size += len(text)
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
    return num_threads


def _scanner(pattern: str):
    """The C pre-tokenizer for ``pattern`` when it knows the pattern, else None."""
    kind = scanner_kind(pattern)
    return _train.Scanner(kind) if kind >= 0 else None


def _utf8(text: str) -> bytes:
    if type(text) is bytes:  # a block from the file reader
        return text
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return fix_surrogates(text).encode("utf-8")


def _fork_is_safe() -> bool:
    # fork copies only the calling thread: safe when there is no other thread (whose
    # locks a child could inherit held), and it needs no `if __name__ == "__main__"`
    # guard in the user's script, unlike spawn
    return (sys.platform.startswith("linux") and threading.active_count() == 1
            and "fork" in multiprocessing.get_all_start_methods())


def _count_batch_regex(pattern: str, texts: list):
    """Worker process: count one batch with ``regex``; returns PieceCounter.export()."""
    counter = _train.PieceCounter()
    compiled = _compile(pattern)
    for text in texts:
        _count_text(counter, compiled, text)
    return counter.export()


def _count_regex(texts, pattern, counter, workers, bar):
    """``regex`` holds the GIL, so threads would not help: after the first batch (small
    inputs stay in this process), batches go to ``workers`` forked processes when that
    is safe, at most two per worker in flight.  Results are added in submission order,
    which keeps the order of first appearance."""
    compiled = _compile(pattern)
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


def _count_stream(texts, pattern, counter, num_threads, bar, utf8_ok=False):
    """Count an iterable of str in batches.  With the C scanner, batches are counted
    without the GIL by ``num_threads`` threads, each into its own counter (merged by
    addition at the end; at most two batches per thread in flight, so memory stays
    bounded).  Otherwise see ``_count_regex``."""
    workers = _resolve_workers(num_threads)
    scanner = _scanner(pattern)
    seen = 0
    if scanner is None:
        return _count_regex(texts, pattern, counter, workers, bar)
    if workers == 1:
        for batch, size in _batches(texts, _BATCH_CHARS, utf8_ok):
            _train.count_utf8(counter, scanner, [_utf8(t) for t in batch])
            seen += size
            bar.update(seen)
        return counter
    free = queue.SimpleQueue()
    free.put(counter)
    for _ in range(workers - 1):
        free.put(_train.PieceCounter())

    def work(data):
        c = free.get()
        try:
            _train.count_utf8(c, scanner, data)
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
                 show_progress=None, num_threads=None) -> "_train.PieceCounter":
    """Split every text with ``pattern`` and count the pieces.  ``texts`` is consumed as
    a stream.  Returns a :class:`fastbpe._train.PieceCounter` (``.to_dict()`` gives
    {piece bytes: count}); pass ``counter`` to keep adding to an existing one.
    ``num_threads`` caps the parallel workers (default: all cores)."""
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be an iterable of str (wrap a single text in a list)")
    counter = _train.PieceCounter() if counter is None else counter
    with Progress("counting", unit=" MB", scale=1e6,
                  enabled=wants_progress(show_progress)) as bar:
        return _count_stream(texts, pattern, counter, num_threads, bar)


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


def _read_blocks(path, pattern: str = GPT4_PATTERN, block_chars=_FILE_BLOCK_CHARS):
    """A text file in blocks that count like the whole file with ``pattern``: UTF-8
    bytes when the C scanner knows the pattern (it counts bytes), else str."""
    scanner = _scanner(pattern)
    chunks = _file_chunks(path, block_chars)
    if scanner is not None:
        def last_end(buf, limit):
            return _train.last_piece_end(scanner, buf, limit)

        return _cut_at_pieces((c.encode("utf-8") for c in chunks), b"", last_end,
                              _SCANNER_MARGIN, block_chars)
    compiled = _compile(pattern)

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
    counter = _train.PieceCounter() if counter is None else counter
    total = sum(os.path.getsize(p) for p in paths)
    blocks = (block for p in paths for block in _read_blocks(p, pattern, _FILE_BLOCK_CHARS))
    with Progress("counting", total=total, unit=" MB", scale=1e6,
                  enabled=wants_progress(show_progress)) as bar:
        return _count_stream(blocks, pattern, counter, num_threads, bar, utf8_ok=True)


# ---------------------------------------------------------------------------------------
# step 2: merging
# ---------------------------------------------------------------------------------------

def _counts_to_counter(counts) -> "_train.PieceCounter":
    if isinstance(counts, _train.PieceCounter):
        return counts
    if not isinstance(counts, Mapping):
        raise TypeError("counts must be a mapping of piece (str or bytes) -> count")
    counter = _train.PieceCounter()
    pair_total = 0  # the sum of all pair counts bounds every count the merge kernel keeps
    for piece, c in counts.items():
        if isinstance(piece, str):
            piece = fix_surrogates(piece).encode("utf-8") if not piece.isascii() else piece.encode()
        elif not isinstance(piece, (bytes, bytearray, memoryview)):
            raise TypeError(f"pieces must be str or bytes, got {type(piece).__name__}")
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)):
            raise TypeError(f"counts must be ints, got {type(c).__name__}")
        if c < 0:
            raise ValueError("counts must be non-negative")
        pair_total += int(c) * max(len(piece), 1)
        if pair_total > _INT64_MAX:
            raise ValueError("counts too large: the pair counts would overflow 64 bits")
        counter.add_bytes(bytes(piece), int(c))
    return counter


def _merge(counter, num_merges, min_frequency, max_token_length, tie, show_progress):
    if counter.total == 0:
        raise ValueError("the corpus is empty: no pieces to train on")
    tokens, offsets, counts = counter.to_arrays()
    trainer = _train.PieceTrainer(tokens, offsets, counts, tie=tie)
    with Progress("merges", total=num_merges, enabled=wants_progress(show_progress)) as bar:
        return trainer.train(num_merges, min_frequency=min_frequency,
                             max_token_length=max_token_length, progress=bar.update)


def train_model(counts, vocab_size, *, pattern=GPT4_PATTERN, special_tokens=None,
                min_frequency=0, max_token_length=None, show_progress=None,
                tie=_train.TIE_PAIR) -> BPEModel:
    """Run the merge kernel on piece counts (a PieceCounter or a mapping) -> BPEModel."""
    vocab_size, specials, min_frequency, max_len = _check_args(
        vocab_size, special_tokens, min_frequency, max_token_length)
    counter = _counts_to_counter(counts)
    num_merges = vocab_size - 256 - len(specials)
    pairs, merge_counts = _merge(counter, num_merges, min_frequency, max_len, tie,
                                 show_progress)
    first_special = 256 + len(pairs)
    return BPEModel(merges=pairs, pattern=pattern,
                    special_tokens={s: first_special + i for i, s in enumerate(specials)},
                    merge_counts=merge_counts)


def train_from_counts(counts, vocab_size, *, pattern=GPT4_PATTERN, special_tokens=None,
                      min_frequency=0, max_token_length=None, show_progress=None,
                      name="fastbpe-trained"):
    """Train from piece counts: a mapping {piece (str or bytes): count}, e.g. summed from
    ``count_pieces(...).to_dict()`` run on many shards.  ``pattern`` is only recorded in
    the Encoding (the pieces are already split).  Returns an Encoding."""
    return train_model(counts, vocab_size, pattern=pattern, special_tokens=special_tokens,
                       min_frequency=min_frequency, max_token_length=max_token_length,
                       show_progress=show_progress).to_encoding(name)


def train(texts: Iterable[str], vocab_size: int, *, pattern: str = GPT4_PATTERN,
          special_tokens=None, min_frequency: int = 0, max_token_length=None,
          show_progress=None, num_threads=None, name: str = "fastbpe-trained"):
    """Train a byte-level BPE on an iterable of str (consumed as a stream).

    ``vocab_size`` counts the 256 byte tokens, the merges and the special tokens.
    Training stops early if no pair occurs at least ``max(min_frequency, 1)`` times.
    ``max_token_length`` caps the byte length of merged tokens.  ``show_progress=None``
    draws a progress bar only on an interactive terminal.  Returns an Encoding; its
    ``bpe_model`` attribute (when settable) holds the :class:`BPEModel` with the merges.
    """
    _check_args(vocab_size, special_tokens, min_frequency, max_token_length)
    counter = count_pieces(texts, pattern, show_progress=show_progress,
                           num_threads=num_threads)
    return train_model(counter, vocab_size, pattern=pattern, special_tokens=special_tokens,
                       min_frequency=min_frequency, max_token_length=max_token_length,
                       show_progress=show_progress).to_encoding(name)


def train_files(paths, vocab_size: int, *, pattern: str = GPT4_PATTERN, special_tokens=None,
                min_frequency: int = 0, max_token_length=None, show_progress=None,
                num_threads=None, name: str = "fastbpe-trained"):
    """Like :func:`train`, reading UTF-8 text files (read in blocks; memory stays bounded)."""
    _check_args(vocab_size, special_tokens, min_frequency, max_token_length)
    counter = count_files(paths, pattern, show_progress=show_progress, num_threads=num_threads)
    return train_model(counter, vocab_size, pattern=pattern, special_tokens=special_tokens,
                       min_frequency=min_frequency, max_token_length=max_token_length,
                       show_progress=show_progress).to_encoding(name)


# ---------------------------------------------------------------------------------------
# saving and loading trained models
# ---------------------------------------------------------------------------------------

_FORMATS = ("native", "tiktoken", "minbpe", "huggingface")


def _format_for(path, format):
    if format is not None:
        if format not in _FORMATS:
            raise ValueError(f"unknown format {format!r}; use one of {_FORMATS}")
        return format
    p = os.fspath(path)
    if os.path.basename(p) == "tokenizer.json":
        return "huggingface"
    if p.endswith(".tiktoken"):
        return "tiktoken"
    if p.endswith(".model"):
        return "minbpe"
    return "native"


def as_model(obj) -> BPEModel:
    """A BPEModel from a BPEModel or an Encoding (trained here: exact merges; otherwise the
    merges are recovered from the ranks, as minbpe's GPT4Tokenizer does)."""
    if isinstance(obj, BPEModel):
        return obj
    model = getattr(obj, "bpe_model", None)
    if isinstance(model, BPEModel):
        return model
    ranks = getattr(obj, "_mergeable_ranks", None)
    if ranks is None:
        raise TypeError(f"cannot save {type(obj).__name__}: not a BPEModel or Encoding")
    return _model_from_ranks(ranks, obj._pat_str, dict(obj._special_tokens))


def _model_from_ranks(ranks: dict, pattern: str, special_tokens: dict) -> BPEModel:
    """The BPEModel that gives exactly these ranks as ids.  The single bytes must be ranks
    0..255 (in any order: GPT-2's are permuted, kept as ``byte_order``), else ValueError.
    An unused rank (p50k's 50256, its special token's id) becomes a ``NO_MERGE`` row."""
    from .formats.minbpe_files import recover_merges

    byte_order = bytearray(256)
    for b in range(256):
        rank = ranks.get(bytes([b]))
        if rank is None or rank >= 256:
            raise ValueError(f"byte {b} must be one of ranks 0..255 to be saved as merges")
        byte_order[rank] = b
    merged_ranks = sorted(r for t, r in ranks.items() if len(t) > 1)
    merges = np.full((merged_ranks[-1] - 255 if merged_ranks else 0, 2), NO_MERGE, dtype=np.int32)
    for rank, pair in zip(merged_ranks, recover_merges(ranks)):
        merges[rank - 256] = pair
    return BPEModel(merges=merges, pattern=pattern,
                    special_tokens=special_tokens, byte_order=bytes(byte_order))


def _file_stamp(path) -> tuple | None:
    """(size, mtime in ns) of a file, None if it is gone: a cheap 'has it changed' check."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


def save_model(model, path, format=None) -> None:
    """Save a trained model (BPEModel or Encoding), atomically.  ``format``: "native"
    (JSON: pattern, special tokens, merges; the default), "tiktoken" (ranks only; the
    default for ``*.tiktoken``) or "minbpe" (``.model`` + ``.vocab`` next to it; the
    default for ``*.model``) or "huggingface" (a ``tokenizer.json`` for HF tokenizers; the
    default for a file named ``tokenizer.json``; minbpe tokenizers too)."""
    from .formats import minbpe_files, native
    from .formats.tiktoken_bpe import dump_tiktoken_bpe

    fmt = _format_for(path, format)
    path = os.fspath(path)
    if fmt == "huggingface":
        from .formats.hf_json import write_tokenizer_json

        return write_tokenizer_json(path, model)
    model = as_model(model)
    merges = [tuple(m) for m in model.merges.tolist()]
    if fmt == "native":
        native.write_native(path, model.pattern, model.special_tokens, merges, model.byte_order)
    elif fmt == "tiktoken":
        dump_tiktoken_bpe(model.mergeable_ranks(), path)
    else:
        if model.byte_order is not None or (model.merges == NO_MERGE).any():
            raise ValueError("minbpe's .model format cannot store a byte order other than "
                             "0..255 (as GPT-2's) or unused ids: save as native JSON or "
                             ".tiktoken instead")
        minbpe_files.write_model(path, model.pattern, model.special_tokens, merges)
        vocab = dict(enumerate(model.token_bytes()))
        for s, idx in model.special_tokens.items():
            vocab[idx] = s.encode("utf-8")
        prefix = path[:-len(".model")] if path.endswith(".model") else path
        minbpe_files.write_vocab(prefix + ".vocab", vocab,
                                 {m: 256 + i for i, m in enumerate(merges)})


def load_model(path, format=None, *, pattern=None) -> BPEModel:
    """Load a model saved by :func:`save_model` (or by minbpe, or any byte-level
    ``.tiktoken`` file).  ``pattern`` sets the split pattern for ``.tiktoken`` files,
    which do not store one (default: the GPT-4 pattern)."""
    from .formats import minbpe_files, native
    from .formats.tiktoken_bpe import load_tiktoken_bpe

    fmt = _format_for(path, format)
    if fmt == "huggingface":
        raise ValueError(f"{os.fspath(path)}: load a tokenizer.json with fastbpe.Tokenizer.from_file")
    stamp = _file_stamp(path)
    byte_order = None
    if fmt == "native":
        pat, specials, merges, byte_order = native.read_native(path)
    elif fmt == "minbpe":
        pat, specials, merges = minbpe_files.read_model(path)
    else:
        model = _model_from_ranks(load_tiktoken_bpe(path), GPT4_PATTERN, {})
        pat, specials, merges, byte_order = model.pattern, {}, model.merges, model.byte_order
    model = BPEModel(merges=np.asarray(merges, dtype=np.int32).reshape(-1, 2),
                     pattern=pat if pattern is None else pattern, special_tokens=specials,
                     byte_order=byte_order)
    model.source = (os.path.abspath(os.fspath(path)), fmt, pattern, stamp)
    return model
