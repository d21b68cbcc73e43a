"""Hugging Face tokenizer.json models (BPE) with `tokenizers.Tokenizer`'s interface.

`Tokenizer.from_file("tokenizer.json")` gives HF's ids, tokens and offsets; `encode_ids` and
`encode_ids_batch` are the fast paths; `DecodeStream` decodes generated ids as they come.
One module per pipeline stage."""
from .added_tokens import AddedToken
from .encoding import Encoding
from .tokenizer import Tokenizer
from ._nodes import UnsupportedError

__all__ = ["AddedToken", "ByteDecodeStream", "DecodeStream", "Encoding", "Tokenizer", "UnsupportedError"]


def __getattr__(name: str):
    """DecodeStream and ByteDecodeStream, imported on first use (a file's load never streams)."""
    if name in ("ByteDecodeStream", "DecodeStream"):
        from . import decode_stream
        return getattr(decode_stream, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
