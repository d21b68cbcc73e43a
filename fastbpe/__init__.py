"""fastbpe: byte-level BPE tokenizers with Cython kernels.

`get_encoding("cl100k_base")` gives a drop-in replacement for tiktoken's `Encoding`
(same methods, same ids); `train(...)` trains new vocabularies.
"""
from .encoding import Encoding
from .formats.tiktoken_bpe import dump_tiktoken_bpe, load_tiktoken_bpe
from .model import encoding_for_model, encoding_name_for_model
from .registry import get_encoding, list_encoding_names
from .vocab_sources import VocabNotFoundError

__version__ = "0.1.0"

# Training and the minbpe classes load on first use (they need numpy, which encoding does not).
_LAZY = {
    "BasicTokenizer": "minbpe", "GPT4Tokenizer": "minbpe", "RegexTokenizer": "minbpe",
    "load_model": "trainer", "save_model": "trainer", "train": "trainer",
    "train_files": "trainer", "train_from_counts": "trainer",
    "Tokenizer": "hf",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fastbpe' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

__all__ = [
    "BasicTokenizer",
    "Encoding",
    "GPT4Tokenizer",
    "RegexTokenizer",
    "Tokenizer",
    "VocabNotFoundError",
    "dump_tiktoken_bpe",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
    "load_model",
    "load_tiktoken_bpe",
    "save_model",
    "train",
    "train_files",
    "train_from_counts",
]

