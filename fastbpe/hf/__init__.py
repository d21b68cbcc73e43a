"""Hugging Face tokenizer.json models (BPE) with `tokenizers.Tokenizer`'s interface.

`Tokenizer.from_file("tokenizer.json")` gives HF's ids, tokens and offsets; `encode_ids` and
`encode_ids_batch` are the fast paths.  One module per pipeline stage."""
from .added_tokens import AddedToken
from .encoding import Encoding
from .tokenizer import Tokenizer
from ._nodes import UnsupportedError

__all__ = ["AddedToken", "Encoding", "Tokenizer", "UnsupportedError"]
