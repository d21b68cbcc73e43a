"""The tokenizers the benchmarks compare, built one way for compare.py and the pytest benchmarks.

`build(lib, encoding_name)` gives a `Peer` with two timed entry points, `single(text)` (one
document, `encode_ordinary`) and `batch(docs, k)` (the library's own batch API on k threads), or
raises `Unavailable` with the reason (library not importable, encoding not supported).

    fastbpe        fastbpe.get_encoding(name): the C scanner splits known patterns
    fastbpe-regex  the same encoding with the `regex` package doing the splitting
                   (Splitter(pat, force_regex=True)), i.e. the path custom patterns take
    tiktoken       tiktoken.Encoding(**tiktoken_ext.openai_public constructor), no download
    bpe-openai     bpe_openai.get_encoding(name) (Rust crate bpe-openai; cl100k/o200k only)
    tokendagger    tokendagger.Encoding(name, pat_str=..., mergeable_ranks=..., special_tokens=...)
                   built from tiktoken's own arguments (C++ with PCRE2)
    fastokens      fastokens.Tokenizer.from_tiktoken(path, encoding=name) (Rust, PCRE2 JIT; r50k_base
                   from its pattern and special tokens); `encode_ordinary(text).ids`.  No batch
                   entry: its batch runs on its own thread pool, whose size is not set per call

HF `tokenizers` is not here: it runs in a child process (see compare.py) because its thread
pool size is fixed when the process starts.
"""
from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
for p in (str(ROOT / "tests"), str(ROOT)):
    if p not in sys.path:
        sys.path.insert(0, p)

import datasources as ds  # noqa: E402

if ds.VOCAB_DIR.is_dir():
    os.environ.setdefault("FASTBPE_DATA_DIR", str(ds.VOCAB_DIR))

LIBS = ["fastbpe", "fastbpe-regex", "tiktoken", "bpe-openai", "tokendagger", "fastokens"]

# bpe-openai's Python wrapper refuses, in encode_ordinary, a text of >= 1,000,000 characters
# ("Input too long to encode safely") and a result of > 200,000 tokens (its default
# chunk_limit).  For one large document we then time its Rust backend directly.
BPE_OPENAI_FALLBACK_NOTE = (
    "bpe-openai's `encode_ordinary` refuses texts of ≥ 1,000,000 characters or > 200,000 "
    "tokens; where it refused, the one-document time is its Rust backend's "
    "`enc._backend.encode(text)` (the call the wrapper makes)")


class Unavailable(Exception):
    """This library cannot run this encoding here; str(e) says why."""


@dataclass
class Peer:
    lib: str
    encoding: str
    obj: object  # the library's own encoding object
    encode_ordinary: Callable[[str], list]
    batch: Optional[Callable[[list, int], list]]  # None: no batch API with a thread count
    # when encode_ordinary refuses an input (raises one of refusals): a callable that does not
    refuse_fallback: Optional[Callable[[str], list]] = None
    refusals: tuple = ()

    def single(self, text: str) -> tuple[Callable[[], list], list, bool]:
        """(a no-argument callable encoding `text`, its ids, whether it is the fallback).

        Calls the encoder once (that call doubles as the warm-up and the id check)."""
        try:
            return (lambda: self.encode_ordinary(text)), self.encode_ordinary(text), False
        except self.refusals:
            if self.refuse_fallback is None:
                raise
            fb = self.refuse_fallback
            return (lambda: fb(text)), fb(text), True


def _fastbpe(name: str) -> Peer:
    import fastbpe

    enc = fastbpe.get_encoding(name)
    if enc._splitter.kind < 0:
        raise Unavailable(f"no C scanner for {name}'s pattern (or FASTBPE_FORCE_REGEX is set)")
    return Peer("fastbpe", name, enc, enc.encode_ordinary,
                lambda docs, k: enc.encode_ordinary_batch(docs, num_threads=k))


def _fastbpe_regex(name: str) -> Peer:
    import fastbpe
    from fastbpe.pretokenize import Splitter

    spec = ds.reference_spec(name)
    enc = fastbpe.Encoding(spec["name"], pat_str=spec["pat_str"],
                           mergeable_ranks=spec["mergeable_ranks"],
                           special_tokens=spec["special_tokens"],
                           explicit_n_vocab=spec.get("explicit_n_vocab"))
    enc._splitter = Splitter(spec["pat_str"], force_regex=True)
    assert enc._splitter.kind < 0
    return Peer("fastbpe-regex", name, enc, enc.encode_ordinary,
                lambda docs, k: enc.encode_ordinary_batch(docs, num_threads=k))


def _tiktoken(name: str) -> Peer:
    enc = ds.reference_encoding(name)
    return Peer("tiktoken", name, enc, enc.encode_ordinary,
                lambda docs, k: enc.encode_ordinary_batch(docs, num_threads=k))


def _bpe_openai(name: str) -> Peer:
    try:
        import bpe_openai
        from bpe_openai import _bindings
        from bpe_openai.errors import TokenizerError
    except ImportError as e:
        raise Unavailable(f"not importable ({e}); pip install bpe-openai") from None
    supported = _bindings.supported_encodings()
    if name not in supported:
        # get_encoding would fall back to tiktoken_ext and download the file: never do that
        raise Unavailable(f"no {name} in its Rust backend (it has {', '.join(supported)})")
    enc = bpe_openai.get_encoding(name)
    backend = enc._backend
    return Peer("bpe-openai", name, enc, enc.encode_ordinary,
                lambda docs, k: enc.encode_ordinary_batch(docs, num_threads=k),
                refuse_fallback=lambda text: list(backend.encode(text)),
                refusals=(ValueError, TokenizerError))


def _tokendagger(name: str) -> Peer:
    try:
        import tokendagger
    except ImportError as e:
        raise Unavailable(f"not importable ({e}); it needs `apt-get install "
                          "libpcre2-dev` before `pip install tokendagger`") from None
    spec = ds.reference_spec(name)
    enc = tokendagger.Encoding(spec["name"], pat_str=spec["pat_str"],
                               mergeable_ranks=spec["mergeable_ranks"],
                               special_tokens=spec["special_tokens"])
    # no encode_ordinary_batch: its batch API is encode_batch (a thread pool over encode,
    # which by default neither allows nor checks special tokens)
    return Peer("tokendagger", name, enc, enc.encode_ordinary,
                lambda docs, k: enc.encode_batch(docs, num_threads=k))


def _fastokens(name: str) -> Peer:
    try:
        import fastokens
    except ImportError as e:
        raise Unavailable(f"not importable ({e}); pip install fastokens") from None
    file_name = f"{name}.tiktoken"
    path = next((p for p in ds.candidate_paths(file_name) if p.is_file() and p.suffix != ".gz"), None)
    if path is None:
        raise Unavailable(f"no plain {file_name} here (it reads the file itself)")
    if name in ("cl100k_base", "o200k_base"):
        tok = fastokens.Tokenizer.from_tiktoken(str(path), encoding=name)
    else:  # no preset: its pattern and special tokens from tiktoken's arguments
        spec = ds.reference_spec(name)
        tok = fastokens.Tokenizer.from_tiktoken(str(path), pattern=spec["pat_str"],
                                                special_tokens=spec["special_tokens"])
    return Peer("fastokens", name, tok, lambda text: tok.encode_ordinary(text).ids, None)


_BUILDERS = {
    "fastbpe": _fastbpe,
    "fastbpe-regex": _fastbpe_regex,
    "tiktoken": _tiktoken,
    "bpe-openai": _bpe_openai,
    "tokendagger": _tokendagger,
    "fastokens": _fastokens,
}


@functools.lru_cache(maxsize=None)
def build(lib: str, name: str) -> Peer:
    """The Peer for `lib` and encoding `name` (cached); raises Unavailable with a reason."""
    reason = ds.missing_reason(name)
    if reason is not None:
        raise Unavailable(reason)
    return _BUILDERS[lib](name)


def versions() -> dict[str, str]:
    """Installed versions of everything the benchmarks touch ("absent" when not installed)."""
    import importlib.metadata as md

    out = {}
    for pkg in ("fastbpe", "tiktoken", "bpe-openai", "tokendagger", "fastokens", "tokenizers", "regex",
                "numpy", "pytest-benchmark"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = "absent"
    try:
        import fastbpe

        out["fastbpe"] = fastbpe.__version__
    except ImportError:
        pass
    return out


def documents(text: str, size: int = 4000) -> list[str]:
    """Cut text into documents of about `size` characters at line breaks (the batch inputs of
    compare.py and the pytest benchmarks)."""
    docs, start = [], 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        docs.append(text[start:end])
        start = end
    return docs
