"""GPT-2's byte <-> printable character map, used by ByteLevel pre-tokenizers and decoders."""
from __future__ import annotations

# HF's ByteLevel pre-tokenizer regex (GPT-2's pattern as `tokenizers` writes it).
BYTELEVEL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def _bytes_to_chars() -> list[str]:
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    chars = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


BYTE_TO_CHAR: list[str] = _bytes_to_chars()
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in enumerate(BYTE_TO_CHAR)}
# str.translate table: byte-level chars -> the latin-1 char of their byte
_TO_LATIN1 = {ord(c): b for b, c in enumerate(BYTE_TO_CHAR)}


# strict: a character below U+0100 that is not in the alphabet (a raw " " beside "Ġ") becomes one
# latin-1 cannot encode, so the token is refused as HF's ByteLevel never produces it
_TO_LATIN1_STRICT = {**{c: "\uffff" for c in range(0x100)}, **_TO_LATIN1}


def token_bytes(token: str, strict: bool = False) -> bytes | None:
    """The bytes a byte-level token stands for; None if it has a character outside the map
    (strict: also a character below U+0100 outside the alphabet, read as its own byte otherwise)."""
    try:
        return token.translate(_TO_LATIN1_STRICT if strict else _TO_LATIN1).encode("latin-1")
    except UnicodeEncodeError:
        return None
