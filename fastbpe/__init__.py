"""fastbpe: byte-level BPE tokenizers with Cython kernels.

`get_encoding("cl100k_base")` gives a drop-in replacement for tiktoken's `Encoding`
(same methods, same ids); `train(...)` trains new vocabularies.
"""
from typing import TYPE_CHECKING

__version__ = "0.1.0"

# Every public name loads on first use, so `import fastbpe` itself costs ~1 ms (HF tokenizers'
# import is ~10 ms, and a tokenizer.json load should not pay for tiktoken's Encoding, `regex`
# or numpy it does not use): name -> the submodule that defines it.
_LAZY = {
    "Encoding": "encoding",
    "dump_tiktoken_bpe": "load", "load_tiktoken_bpe": "load",
    "encoding_for_model": "model", "encoding_name_for_model": "model",
    "get_encoding": "registry", "list_encoding_names": "registry",
    "VocabNotFoundError": "vocab_sources",
    # training and the minbpe classes need numpy
    "BasicTokenizer": "minbpe", "GPT4Tokenizer": "minbpe", "RegexTokenizer": "minbpe",
    "load_model": "trainer", "save_model": "trainer", "train": "trainer",
    "train_files": "trainer", "train_from_counts": "trainer",
    "Tokenizer": "hf",
    "patch_transformers": "hf.transformers_patch", "unpatch_transformers": "hf.transformers_patch",
}

if TYPE_CHECKING:  # what type checkers and IDEs see: the same names, imported eagerly
    from .encoding import Encoding
    from .hf import Tokenizer
    from .hf.transformers_patch import patch_transformers, unpatch_transformers
    from .load import dump_tiktoken_bpe, load_tiktoken_bpe
    from .minbpe import BasicTokenizer, GPT4Tokenizer, RegexTokenizer
    from .model import encoding_for_model, encoding_name_for_model
    from .registry import get_encoding, list_encoding_names
    from .trainer import load_model, save_model, train, train_files, train_from_counts
    from .vocab_sources import VocabNotFoundError


def __getattr__(name: str):
    import importlib

    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    if name in _TIKTOKEN_SUBMODULES or name == "trainers":  # `import fastbpe as tiktoken; tiktoken.core.Encoding`
        return importlib.import_module(f".{name}", __name__)  # sets the attribute itself
    raise AttributeError(f"module 'fastbpe' has no attribute {name!r}")


# tiktoken's module names -> ours, for install_as_tiktoken()
TIKTOKEN_MODULES = {
    "tiktoken": "fastbpe",
    "tiktoken.core": "fastbpe.core",
    "tiktoken.load": "fastbpe.load",
    "tiktoken.model": "fastbpe.model",
    "tiktoken.registry": "fastbpe.registry",
    "tiktoken._educational": "fastbpe._educational",
}
# the submodules tiktoken's code reaches as attributes of the package, loaded on first use
_TIKTOKEN_SUBMODULES = {m.split(".", 1)[1] for m in TIKTOKEN_MODULES.values() if "." in m}


def install_as_tiktoken() -> None:
    """Make `import tiktoken` (and `tiktoken.load`, `tiktoken.core`, ...) give fastbpe's
    modules from now on, so code written for tiktoken runs unchanged.  Call it before that
    code imports tiktoken; a module that already holds the real tiktoken keeps it."""
    import importlib
    import sys

    for tiktoken_name, our_name in TIKTOKEN_MODULES.items():
        sys.modules[tiktoken_name] = importlib.import_module(our_name)


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | _TIKTOKEN_SUBMODULES | {"trainers"})

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
    "install_as_tiktoken",
    "list_encoding_names",
    "load_model",
    "patch_transformers",
    "load_tiktoken_bpe",
    "save_model",
    "train",
    "train_files",
    "train_from_counts",
    "unpatch_transformers",
]

