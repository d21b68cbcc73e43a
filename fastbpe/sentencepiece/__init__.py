"""SentencePiece `.model` files (BPE) with the `sentencepiece` package's interface."""
from .processor import SentencePieceProcessor

__all__ = ["SentencePieceProcessor"]
