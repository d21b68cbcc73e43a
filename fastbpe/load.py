"""tiktoken's `tiktoken.load` module: read `.tiktoken` files and GPT-2's files from a path or URL.

Code written for tiktoken (e.g. Llama 3's tokenizer: `from tiktoken.load import
load_tiktoken_bpe`) runs unchanged on these.  Caching follows tiktoken's rules: downloads go
to `TIKTOKEN_CACHE_DIR` (else `DATA_GYM_CACHE_DIR`, else `<tmp>/data-gym-cache`; empty string:
no cache) under the sha1 of the URL; a cached file whose hash does not match `expected_hash`
is fetched again.  One difference on purpose: a local path is read directly, never copied
into the cache (tiktoken caches it by name, so a changed file could be read stale).
"""
from __future__ import annotations

import os

from .formats.atomic import atomic_write_bytes
from .formats.tiktoken_bpe import (
    check_hash as _check_hash,
    dump_tiktoken_bpe,
    maybe_gunzip,
    parse_gpt2_files,
    parse_tiktoken_bpe,
    sha256_hex,
)
from .vocab_sources import tiktoken_cache_dir, tiktoken_cache_path

__all__ = ["read_file", "read_file_cached", "check_hash", "load_tiktoken_bpe",
           "dump_tiktoken_bpe", "data_gym_to_mergeable_bpe_ranks"]


def _is_url(blobpath: str) -> bool:
    return "://" in blobpath


def read_file(blobpath: str | os.PathLike) -> bytes:
    """The bytes at a local path, an http(s) URL, or (with `blobfile` installed) any URL
    blobfile reads."""
    blobpath = os.fspath(blobpath)
    if not _is_url(blobpath):
        with open(blobpath, "rb") as f:
            return f.read()
    if blobpath.startswith(("http://", "https://")):
        import urllib.request

        with urllib.request.urlopen(blobpath, timeout=60) as response:
            return response.read()
    try:
        import blobfile
    except ImportError as e:
        raise ImportError(f"reading {blobpath} needs blobfile: pip install blobfile") from e
    return blobfile.read_bytes(blobpath)


def check_hash(data: bytes, expected_hash: str) -> bool:
    """Whether data's sha256 is expected_hash."""
    return sha256_hex(data) == expected_hash


def read_file_cached(blobpath: str | os.PathLike, expected_hash: str | None = None) -> bytes:
    """read_file, through tiktoken's download cache for URLs (see the module docstring).
    ValueError when the data does not have expected_hash."""
    blobpath = os.fspath(blobpath)
    if not _is_url(blobpath):
        data = read_file(blobpath)
        _check_hash(data, expected_hash, blobpath)
        return data
    cache_path = tiktoken_cache_path(blobpath)
    if cache_path is not None and os.path.exists(cache_path):
        with open(cache_path, "rb") as f:
            data = f.read()
        if expected_hash is None or check_hash(data, expected_hash):
            return data
    data = read_file(blobpath)
    if expected_hash is not None and not check_hash(data, expected_hash):
        raise ValueError(f"Hash mismatch for data downloaded from {blobpath} (expected "
                         f"{expected_hash}). This may indicate a corrupted download. Please try again.")
    if cache_path is not None:
        user_chose_cache = "TIKTOKEN_CACHE_DIR" in os.environ or "DATA_GYM_CACHE_DIR" in os.environ
        try:
            os.makedirs(tiktoken_cache_dir(), exist_ok=True)
            atomic_write_bytes(cache_path, data)
        except OSError:
            if user_chose_cache:  # as tiktoken: only the default cache may silently fail
                raise
    return data


def load_tiktoken_bpe(tiktoken_bpe_file: str | os.PathLike, expected_hash: str | None = None) -> dict[bytes, int]:
    """{token bytes: rank} from a `.tiktoken` file (path or URL; plain or gzip).  ValueError
    for a malformed file or a hash mismatch, OSError when it cannot be read."""
    source = os.fspath(tiktoken_bpe_file)
    data = maybe_gunzip(read_file_cached(source, expected_hash))
    return parse_tiktoken_bpe(data, source)


def data_gym_to_mergeable_bpe_ranks(
    vocab_bpe_file: str,
    encoder_json_file: str,
    vocab_bpe_hash: str | None = None,
    encoder_json_hash: str | None = None,
    clobber_one_byte_tokens: bool = False,
) -> dict[bytes, int]:
    """{token bytes: rank} from GPT-2's `vocab.bpe` and `encoder.json` (paths or URLs), checked
    against each other.  `clobber_one_byte_tokens` is accepted for tiktoken's signature: the
    single-byte ranks always come from encoder.json here, which is what it selects."""
    vocab_bpe = read_file_cached(vocab_bpe_file, vocab_bpe_hash)
    encoder_json = read_file_cached(encoder_json_file, encoder_json_hash)
    return parse_gpt2_files(encoder_json, vocab_bpe, os.fspath(vocab_bpe_file))
