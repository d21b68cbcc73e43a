"""Text helpers every front end needs: lone surrogates, and the UTF-8 of a str."""
from __future__ import annotations


def fix_surrogates(text: str) -> str:
    """text with each lone surrogate replaced by U+FFFD, as tiktoken does before encoding
    (a lone surrogate has no UTF-8)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def utf8_bytes(text: str) -> bytes:
    """The UTF-8 of text, lone surrogates replaced by U+FFFD (see fix_surrogates)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return fix_surrogates(text).encode("utf-8")
