"""llama.cpp GGUF files: their tokenizer, read from the metadata only (tensors are never read).

`GGUFTokenizer.from_file(path)` (also `fastbpe.Tokenizer.from_gguf`) gives llama.cpp's ids for
`gpt2` (byte-level BPE, every regex pre-tokenizer llama.cpp knows) and `llama` (SentencePiece
BPE with byte fallback) vocabularies.  See docs/gguf.md."""
from .reader import is_gguf, read_metadata
from .tokenizer import GGUFTokenizer

__all__ = ["GGUFTokenizer", "is_gguf", "read_metadata"]
