"""The tokenizers that load a Hugging Face tokenizer.json, built one way for compare_hf.py and
bench_hf.py.

`build(lib, path)` gives an `HFPeer` with `single(text) -> ids` (one document) and
`batch(docs, k) -> [ids]` (the library's batch API), every result a list of int ids, all
without added special tokens (no BOS), or raises `peers.Unavailable` with the reason.

    fastbpe        fastbpe.Tokenizer.from_file(path): encode_ids / encode_ids_batch(num_threads=k)
    HF tokenizers  tokenizers.Tokenizer.from_file(path): encode(...).ids / encode_batch_fast
    fastokens      fastokens.Tokenizer.from_file(path): encode(...).ids / encode_batch
    tokie          tokie.Tokenizer.from_json(path): encode(...).ids / encode_batch
    kitoken        kitoken.Kitoken.from_tokenizers_file(path): encode / encode_all

The Rust libraries size their thread pools when they start, so compare_hf.py runs each library
in a child process pinned to k cores (sched_setaffinity) with RAYON_NUM_THREADS=k.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import datasources as ds
from peers import Unavailable

LIBS = ["HF tokenizers", "fastbpe", "fastokens", "tokie", "kitoken"]
BASELINE = "HF tokenizers"

# label -> tokenizer.json in the shared data (the Llama-3.1-based model is DeepSeek's distill)
MODELS = {
    "llama3": ds.VOCAB_DIR / "hf" / "deepseek-r1-distill-llama-8b" / "tokenizer.json",
    "qwen2.5": ds.VOCAB_DIR / "hf" / "qwen2.5" / "tokenizer.json",
}


@dataclass
class HFPeer:
    lib: str
    single: Callable[[str], list]
    batch: Callable[[list, int], list]


def _import(module: str, lib: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise Unavailable(f"{lib} not importable ({e}); pip install '.[bench]'") from None


def _fastbpe(path: str) -> HFPeer:
    fastbpe = _import("fastbpe", "fastbpe")
    if not hasattr(fastbpe, "Tokenizer"):
        raise Unavailable("fastbpe.Tokenizer (tokenizer.json loading, issue 8) is not in this build")
    tok = fastbpe.Tokenizer.from_file(path)
    return HFPeer("fastbpe", lambda t: tok.encode_ids(t, add_special_tokens=False),
                  lambda docs, k: tok.encode_ids_batch(docs, add_special_tokens=False, num_threads=k))


def _hf(path: str) -> HFPeer:
    tokenizers = _import("tokenizers", "HF tokenizers")
    tok = tokenizers.Tokenizer.from_file(path)
    tok.no_truncation()
    return HFPeer("HF tokenizers", lambda t: tok.encode(t, add_special_tokens=False).ids,
                  lambda docs, k: [e.ids for e in tok.encode_batch_fast(docs, add_special_tokens=False)])


def _fastokens(path: str) -> HFPeer:
    tok = _import("fastokens", "fastokens").Tokenizer.from_file(path)
    return HFPeer("fastokens", lambda t: tok.encode(t, add_special_tokens=False).ids,
                  lambda docs, k: [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)])


def _tokie(path: str) -> HFPeer:
    tok = _import("tokie", "tokie").Tokenizer.from_json(path)
    return HFPeer("tokie", lambda t: tok.encode(t, add_special_tokens=False).ids,
                  lambda docs, k: [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)])


def _kitoken(path: str) -> HFPeer:
    tok = _import("kitoken", "kitoken").Kitoken.from_tokenizers_file(path)
    return HFPeer("kitoken", tok.encode, lambda docs, k: tok.encode_all(docs))


_BUILDERS = {"fastbpe": _fastbpe, "HF tokenizers": _hf, "fastokens": _fastokens, "tokie": _tokie,
             "kitoken": _kitoken}


@functools.lru_cache(maxsize=None)
def build(lib: str, model: str) -> HFPeer:
    """The HFPeer for `lib` on model label `model` (cached); raises Unavailable with a reason."""
    path = Path(MODELS[model])
    if not path.is_file():
        raise Unavailable(f"{path} not found (shared data absent)")
    try:
        return _BUILDERS[lib](str(path))
    except Unavailable:
        raise
    except Exception as e:  # a peer that cannot load the file: say so
        raise Unavailable(f"{lib} cannot load {path.name} of {model}: {type(e).__name__}: {e}") from None


def versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {}
    for pkg in ("tokenizers", "fastokens", "tokie", "kitoken"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = "absent"
    return out


def slices(text: str, n: int, size: int) -> list[str]:
    """n distinct slices of about `size` UTF-8 bytes, spread evenly over `text` and cut at line
    breaks (fewer when the text is short)."""
    data = text.encode("utf-8")
    out = []
    step = max(size, len(data) // n)
    for i in range(n):
        start = i * step
        if start >= len(data):
            break
        chunk = data[start:start + size].decode("utf-8", "ignore")
        first = chunk.find("\n") + 1 if i else 0
        last = chunk.rfind("\n") + 1 or len(chunk)
        if last > first:
            out.append(chunk[first:last])
    return out
