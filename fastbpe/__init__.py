"""fastbpe: byte-level BPE tokenizers with Cython kernels.

`get_encoding("cl100k_base")` gives a drop-in replacement for tiktoken's `Encoding`
(same methods, same ids); `train(...)` trains new vocabularies.
"""
from .encoding import Encoding
from .minbpe import BasicTokenizer, GPT4Tokenizer, RegexTokenizer
from .formats.tiktoken_bpe import dump_tiktoken_bpe, load_tiktoken_bpe
from .model import encoding_for_model, encoding_name_for_model
from .registry import get_encoding, list_encoding_names
from .trainer import train, train_files, train_from_counts
from .vocab_sources import VocabNotFoundError

__version__ = "0.1.0"

__all__ = [
    "BasicTokenizer",
    "Encoding",
    "GPT4Tokenizer",
    "RegexTokenizer",
    "VocabNotFoundError",
    "dump_tiktoken_bpe",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
    "load_tiktoken_bpe",
    "train",
    "train_files",
    "train_from_counts",
]

