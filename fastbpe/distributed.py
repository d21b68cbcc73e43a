"""Training and encoding on a Dask cluster (``pip install fastbpe[dask]``).

Counting pieces is the part of training that grows with the corpus, and counts merge by
addition, so it spreads over a cluster: files are cut into byte-range shards
(:mod:`fastbpe.shards`), each worker reads and counts its shards itself (no text passes
through the client), and the counts are summed in a tree, 8 at a time.  The merge loop then
runs on the client over the unique pieces, as :func:`fastbpe.trainer.train_from_counts`.

Every function uses the current ``dask.distributed`` client (``client=`` to pass one);
when there is none, it starts a local cluster for the call and closes it afterwards.
Tasks are pure, so when a worker dies Dask reruns its tasks elsewhere; if it cannot (a
task keeps killing its worker), the call raises: a result is never partial.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os

import numpy as np

from . import _count
from . import trainer
from .patterns import BY_NAME, GPT4_PATTERN
from .formats.atomic import atomic_write_text
from .shards import plan_shards, shard_blocks, shard_bytes

__all__ = ["count_pieces_dask", "train_dask", "encode_files_dask", "load_encoded", "shards_of"]

# Default shard size: big enough that per-task overhead (~1 ms) is noise, small enough
# that a worker holds a few shards' counts and a failure reruns little.
DEFAULT_BLOCKSIZE = 1 << 26
# How many partial counts are added together in one task of the reduction tree.
_SPLIT_EVERY = 8


def _import_dask():
    try:
        import dask.bag
        import distributed
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("fastbpe.distributed needs Dask: pip install 'fastbpe[dask]'") from e
    return dask.bag, distributed


@contextlib.contextmanager
def _client(client):
    """The given client, the current one, or a local cluster for the duration."""
    _, distributed = _import_dask()
    if client is not None:
        if not isinstance(client, distributed.Client):
            raise TypeError(f"client must be a dask.distributed.Client, got {type(client).__name__}")
        yield client
        return
    try:
        current = distributed.get_client()
    except ValueError:  # no client in this process
        current = None
    if current is not None:
        yield current
        return
    with distributed.LocalCluster(processes=True) as cluster, distributed.Client(cluster) as c:
        yield c


# ---------------------------------------------------------------------------------------
# counts as (arena, lengths, counts): PieceCounter.export()'s picklable form
# ---------------------------------------------------------------------------------------

def _prune(exported, min_frequency):
    """Drop the pieces counted fewer than ``min_frequency`` times."""
    arena, lengths, counts = exported
    keep = counts >= min_frequency
    if keep.all():
        return exported
    byte_keep = np.repeat(keep, lengths)
    kept = np.frombuffer(arena, dtype=np.uint8)[byte_keep].tobytes()
    return kept, np.ascontiguousarray(lengths[keep]), np.ascontiguousarray(counts[keep])


def _add_counts(parts):
    """Sum exported counts (the aggregate step of the reduction tree)."""
    parts = list(parts)
    if len(parts) == 1:
        return parts[0]
    counter = _count.PieceCounter()
    for p in parts:
        counter.add_exported(*p)
    return counter.export()


def _count_shards(shards, pattern, min_frequency):
    """Worker: count the pieces of some shards (files read here).  One thread: Dask
    runs one task per worker thread already."""
    counter = _count.PieceCounter()
    for shard in shards:
        trainer.count_pieces(shard_blocks(shard), pattern, counter=counter,
                             show_progress=False, num_threads=1)
    return _shard_result(counter, min_frequency)


def _count_texts(texts, pattern, min_frequency):
    """Worker: count the pieces of one partition of a Bag of str."""
    counter = trainer.count_pieces(texts, pattern, show_progress=False, num_threads=1)
    return _shard_result(counter, min_frequency)


def _shard_result(counter, min_frequency):
    exported = counter.export()
    return exported if min_frequency is None else _prune(exported, min_frequency)


def _file_size(path: str) -> int:
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path!r}")
    return os.path.getsize(path)


# ---------------------------------------------------------------------------------------
# argument checks
# ---------------------------------------------------------------------------------------

def _check_paths(paths) -> list:
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    try:
        paths = [os.fsdecode(os.fspath(p)) for p in paths]
    except TypeError as e:
        raise TypeError("paths must be a path or an iterable of paths (str or os.PathLike)") from e
    if not paths:
        raise ValueError("no paths given")
    return paths


def _check_blocksize(blocksize) -> int:
    if isinstance(blocksize, bool) or not isinstance(blocksize, (int, np.integer)) or blocksize < 1:
        raise ValueError(f"blocksize must be a positive int (bytes), got {blocksize!r}")
    return int(blocksize)


def _check_min_frequency(min_frequency):
    if min_frequency is None:
        return None
    if (isinstance(min_frequency, bool) or not isinstance(min_frequency, (int, np.integer))
            or min_frequency < 1):
        raise ValueError(f"min_frequency must be None or a positive int, got {min_frequency!r}")
    return int(min_frequency)


def shards_of(paths, blocksize: int = DEFAULT_BLOCKSIZE, *, pattern: str = GPT4_PATTERN,
              client=None) -> list:
    """The shards ``count_pieces_dask`` and ``encode_files_dask`` cut ``paths`` into (the
    file sizes are read on the workers).  Files are cut inside only for the known split
    patterns, whose safe cut points are proven (see :mod:`fastbpe.shards`); for another
    pattern each file is one shard."""
    paths = _check_paths(paths)
    blocksize = _check_blocksize(blocksize)
    cuttable = pattern in BY_NAME.values()
    with _client(client) as c:
        sizes = c.gather(c.map(_file_size, paths, pure=False))
    return [s for p, size in zip(paths, sizes) for s in plan_shards(p, size, blocksize, cuttable)]


# ---------------------------------------------------------------------------------------
# counting and training
# ---------------------------------------------------------------------------------------

def count_pieces_dask(paths_or_bag, pattern: str = GPT4_PATTERN, *,
                      blocksize: int = DEFAULT_BLOCKSIZE, min_frequency=None,
                      client=None) -> "_count.PieceCounter":
    """Count the pieces of text files (or of a ``dask.bag.Bag`` of str) on a Dask cluster.

    ``paths_or_bag``: a path or a list of paths to UTF-8 text files readable by the
    workers (invalid bytes become U+FFFD, as in ``train_files``), cut into shards of about
    ``blocksize`` bytes; or a Bag of str, one task per partition (each str is split on
    its own, as in ``count_pieces``).

    ``min_frequency``: None (the default) counts exactly, the same as ``count_files`` on one
    machine.  An int k prunes per shard: after a shard (or a Bag partition) is counted,
    the pieces seen fewer than k times *in that shard* are dropped, before any addition.
    The result is then, for every piece, the sum of its counts over the shards where it
    was seen at least k times; it depends on the sharding, and it is never larger than the
    exact count.  Pruning only shrinks what travels and is summed.

    Returns a :class:`fastbpe._count.PieceCounter` for ``train_from_counts``.
    """
    bag_mod, _ = _import_dask()
    trainer.compile_pattern(pattern)  # a bad pattern fails here, not on every worker
    min_frequency = _check_min_frequency(min_frequency)
    with _client(client) as c:
        if isinstance(paths_or_bag, bag_mod.Bag):
            bag = paths_or_bag
            per_partition = _count_texts
        else:
            shards = shards_of(paths_or_bag, blocksize, pattern=pattern, client=c)
            bag = bag_mod.from_sequence(shards, npartitions=len(shards))
            per_partition = _count_shards
        total = bag.reduction(functools.partial(per_partition, pattern=pattern,
                                                min_frequency=min_frequency),
                              _add_counts, split_every=_SPLIT_EVERY)
        exported = c.compute(total).result()
    counter = _count.PieceCounter()
    counter.add_exported(*exported)
    return counter


def train_dask(paths, vocab_size: int, *, pattern: str = GPT4_PATTERN, special_tokens=None,
               min_frequency: int = 0, max_token_length=None, shard_min_frequency=None,
               blocksize: int = DEFAULT_BLOCKSIZE, client=None, show_progress=None,
               name: str = "fastbpe-trained"):
    """:func:`fastbpe.train_files` with the counting on a Dask cluster: the same
    vocabulary for the same files and options.  ``min_frequency``, ``max_token_length``,
    ``special_tokens`` and ``name`` mean what they mean there; ``shard_min_frequency`` is
    ``count_pieces_dask``'s per-shard pruning (None: exact counts).  Returns an Encoding."""
    trainer.check_train_args(vocab_size, special_tokens, min_frequency, max_token_length)
    counter = count_pieces_dask(paths, pattern, blocksize=blocksize,
                                min_frequency=shard_min_frequency, client=client)
    return trainer.train_model(counter, vocab_size, pattern=pattern,
                               special_tokens=special_tokens, min_frequency=min_frequency,
                               max_token_length=max_token_length,
                               show_progress=show_progress).to_encoding(name)


# ---------------------------------------------------------------------------------------
# encoding
# ---------------------------------------------------------------------------------------

MANIFEST = "manifest.json"
_MANIFEST_FORMAT = "fastbpe-encoded-shards"


def _encode_shard(shard, index, ends_document, encoding, out_dir, dtype, separator):
    """Worker: encode one shard with ``corpus.encode_documents`` (its .bin + offsets
    writer, atomic), the shard's bytes as one document, with the separator after it only
    if the shard ends its file (then even when the shard itself is empty: the file's text
    may all be in earlier shards); return its manifest row."""
    from . import corpus

    name = f"shard-{index:05d}.bin"
    ids, _ = corpus.encode_documents(
        encoding, [shard_bytes(shard)], os.path.join(out_dir, name),
        separator=separator if ends_document else None, keep_empty=ends_document,
        dtype=dtype, num_threads=1, show_progress=False)
    return {"bin": name, "offsets": name + corpus.OFFSETS_SUFFIX, "path": shard.path,
            "start": shard.start, "end": shard.end, "n_tokens": int(ids.shape[0]),
            "ends_document": bool(ends_document)}


def encode_files_dask(paths, encoding, out_dir, *, dtype=None, separator="<|endoftext|>",
                      blocksize: int = DEFAULT_BLOCKSIZE, client=None) -> dict:
    """Encode text files on a Dask cluster into ``out_dir``: per shard a ``.bin`` of raw
    little-endian ids and its ``.bin.offsets``, written by ``Encoding.encode_files``' own
    writer (:mod:`fastbpe.corpus`; the shard's text is one document there), plus
    ``manifest.json`` (written atomically, last: it exists only when every shard is
    written; it lists the shards in order with their files, byte ranges and id counts).

    Each file is one document: its ids are ``encoding.encode_ordinary(text)`` (text
    decoded as UTF-8, bad bytes -> U+FFFD) followed by the ``separator`` token (None for
    none); empty files add nothing.  A file may span several shards (cut where no piece
    can span), so the shards' ids laid end to end in manifest order are exactly the
    local encode; :func:`load_encoded` does that.  ``dtype``: "uint16", "uint32" or None
    (uint16 when the vocabulary fits).  The encoding is sent once per worker (registry
    encodings pickle by name).  Returns the manifest."""
    from . import corpus
    from .encoding import Encoding

    if not isinstance(encoding, Encoding):
        raise TypeError(f"encoding must be a fastbpe.Encoding, got {type(encoding).__name__}")
    dt = corpus.choose_dtype(encoding, dtype)
    sep_id = corpus.separator_id(encoding, separator)
    sep_id = None if sep_id < 0 else sep_id
    out_dir = os.path.abspath(os.fspath(out_dir))
    os.makedirs(out_dir, exist_ok=True)
    with _client(client) as c:
        shards = shards_of(paths, blocksize, pattern=encoding.splitter.pat_str, client=c)
        last = {s.path: i for i, s in enumerate(shards)}
        ends = [last[s.path] == i and s.end > 0 for i, s in enumerate(shards)]
        [enc] = c.scatter([encoding], broadcast=True)
        futures = c.map(_encode_shard, shards, range(len(shards)), ends, encoding=enc,
                        out_dir=out_dir, dtype=dt, separator=sep_id, pure=False)
        rows = c.gather(futures)
    manifest = {"format": _MANIFEST_FORMAT, "version": 1, "encoding": encoding.name,
                "dtype": dt.name, "separator": separator,
                "n_tokens": sum(r["n_tokens"] for r in rows), "shards": rows}
    atomic_write_text(os.path.join(out_dir, MANIFEST), json.dumps(manifest, indent=1))
    return manifest


def load_encoded(out_dir, *, mmap: bool = True):
    """(ids, document offsets) of what :func:`encode_files_dask` wrote: the shards laid
    end to end, as one local encode of the files would give (with a separator, document
    i is ``ids[offsets[i]:offsets[i + 1]]``).  Shard ids are memory-mapped unless
    ``mmap=False``; the result is one array (a copy).  ValueError for a manifest that is
    malformed or names a file outside ``out_dir``."""
    from . import corpus

    out_dir = os.fspath(out_dir)
    path = os.path.join(out_dir, MANIFEST)
    manifest = _read_manifest(path)
    parts, ends, n = [], [0], 0
    for i, row in enumerate(manifest["shards"]):
        where = f"{path}: shards[{i}]"
        if (not isinstance(row, dict) or type(row.get("n_tokens")) is not int
                or row["n_tokens"] < 0 or type(row.get("ends_document")) is not bool):
            raise ValueError(f"{where} is not a shard row (bin, n_tokens, ends_document)")
        file = os.path.join(out_dir, _inside_folder(row.get("bin"), where))
        ids, _ = corpus.load(file, mmap=mmap)
        if ids.shape[0] != row["n_tokens"]:
            raise ValueError(f"{file} holds {ids.shape[0]} ids, the manifest says {row['n_tokens']}")
        parts.append(ids)
        n += row["n_tokens"]
        if row["ends_document"]:
            ends.append(n)
    dtype = corpus.DTYPES[manifest["dtype"]]
    ids = np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)
    return ids, np.array(ends, dtype=np.int64)


def _read_manifest(path: str) -> dict:
    """encode_files_dask's manifest.json, its top-level fields checked."""
    from . import corpus

    try:
        with open(path, "rb") as f:
            manifest = json.loads(f.read())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a manifest written by encode_files_dask ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != _MANIFEST_FORMAT:
        raise ValueError(f"{path} is not a manifest written by encode_files_dask")
    if manifest.get("version") != 1:
        raise ValueError(f"{path}: unsupported manifest version {manifest.get('version')!r}")
    if manifest.get("dtype") not in corpus.DTYPES:
        raise ValueError(f"{path}: dtype must be uint16 or uint32, not {manifest.get('dtype')!r}")
    if not isinstance(manifest.get("shards"), list):
        raise ValueError(f"{path}: \"shards\" must be a list")
    return manifest


def _inside_folder(name, where: str) -> str:
    """A shard's file name from the manifest: a plain name in the manifest's folder (no
    folder part, absolute path or ..), so a manifest cannot make us read elsewhere."""
    if (not isinstance(name, str) or not name or name in (".", "..") or "\0" in name
            or os.path.basename(name) != name or (os.altsep and os.altsep in name)):
        raise ValueError(f"{where}: bin must be a file name in the manifest's folder, not {name!r}")
    return name
