"""Hugging Face tokenizer.json models and their tools."""
from .decode_stream import ByteDecodeStream, DecodeStream

__all__ = ["ByteDecodeStream", "DecodeStream"]
