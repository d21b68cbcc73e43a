"""Streaming decode for LLM output: feed ids as they are generated, get back only the newly
completed text, never half a UTF-8 character.

`DecodeStream` is Hugging Face tokenizers' `tokenizers.decoders.DecodeStream` (same arguments,
same chunks, same algorithm) for any tokenizer with `decode(ids, skip_special_tokens=...)`:
`fastbpe.Tokenizer` or `tokenizers.Tokenizer`.  It decodes a short window of ids each step
-- the ids of the text already returned plus the new ones -- and returns the part past the
previous text, so decoders that look at their neighbours (ByteFallback, Metaspace's leading
space, Strip) give the same text as decoding everything at once.  Text that ends in U+FFFD
(an incomplete character, e.g. the first of the byte tokens of an emoji) is held back.

`ByteDecodeStream` is the same contract for a tiktoken-style `fastbpe.Encoding`, whose tokens
are bytes: an incremental UTF-8 decoder keeps back only an incomplete trailing sequence, and
bytes that can never form a character come out as U+FFFD (as `Encoding.decode` does).
"""
from __future__ import annotations

import codecs
from collections.abc import Sequence


def _ids_of(id_or_ids) -> list[int]:
    """One id or a sequence of ids as a list (TypeError / ValueError for anything else)."""
    if isinstance(id_or_ids, int) and not isinstance(id_or_ids, bool):
        ids = [id_or_ids]
    elif isinstance(id_or_ids, Sequence) and not isinstance(id_or_ids, (str, bytes, bytearray)):
        ids = list(id_or_ids)
        for i in ids:
            if not isinstance(i, int) or isinstance(i, bool):
                raise TypeError(f"token ids must be int, got {type(i).__name__}")
    else:
        raise TypeError(f"step() takes a token id or a list of ids, not {type(id_or_ids).__name__}")
    for i in ids:
        if not 0 <= i < 1 << 32:
            raise ValueError(f"token id {i} is out of range (0 <= id < 2**32)")
    return ids


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class DecodeStream:
    """Incremental decoding as `tokenizers.decoders.DecodeStream(ids=None, skip_special_tokens=False)`.

    `ids` are ids already generated (e.g. the prompt) whose text is not returned but gives the
    context for the first new ids.  One stream follows one sequence; use a new one (or
    `copy.copy`) per sequence."""

    def __init__(self, ids: Sequence[int] | None = None, skip_special_tokens: bool = False):
        self.skip_special_tokens = bool(skip_special_tokens)
        self._ids: list[int] = [] if ids is None else _ids_of(ids)  # context + pending ids
        self._prefix = ""          # the text of _ids[:_prefix_index] already returned
        self._prefix_index = 0

    def step(self, tokenizer, id_or_ids) -> str | None:
        """Add one id (or a list of ids); return the newly completed text, or None if there is
        none yet (ValueError if the tokenizer's decode of the window contradicts the text
        already returned, as HF raises)."""
        new_ids = _ids_of(id_or_ids)
        if hasattr(tokenizer, "decode_bytes") and hasattr(tokenizer, "encode_ordinary"):
            raise TypeError("DecodeStream needs a tokenizer with decode(ids, skip_special_tokens); "
                            "use ByteDecodeStream for a tiktoken-style Encoding")
        skip = self.skip_special_tokens
        if not self._prefix and self._ids:
            prefix = tokenizer.decode(self._ids, skip_special_tokens=skip)
            if not prefix.endswith("\ufffd"):
                self._prefix = prefix
                self._prefix_index = len(self._ids)
        self._ids.extend(new_ids)
        text = tokenizer.decode(self._ids, skip_special_tokens=skip)
        if _utf8_len(text) <= _utf8_len(self._prefix) or text.endswith("\ufffd"):
            return None
        if not text.startswith(self._prefix):
            raise ValueError(f"decode stream: the text of token {self._ids[-1]} does not continue the "
                             f"text so far (expected prefix {self._prefix!r}, got {text!r})")
        new_text = text[len(self._prefix):]
        # Keep as context only the ids of the text just returned: the next window starts there.
        new_prefix_index = len(self._ids) - self._prefix_index
        del self._ids[: self._prefix_index]
        self._prefix = tokenizer.decode(self._ids, skip_special_tokens=skip)
        self._prefix_index = new_prefix_index
        return new_text

    def __copy__(self) -> DecodeStream:
        other = DecodeStream(skip_special_tokens=self.skip_special_tokens)
        other._ids, other._prefix, other._prefix_index = list(self._ids), self._prefix, self._prefix_index
        return other


class ByteDecodeStream:
    """Incremental decoding for a tiktoken-style `fastbpe.Encoding`:
    `step(encoding, id_or_ids) -> str | None`, as `DecodeStream`."""

    def __init__(self, skip_special_tokens: bool = False):
        self.skip_special_tokens = bool(skip_special_tokens)
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def step(self, encoding, id_or_ids) -> str | None:
        """Add one id (or a list of ids); return the newly completed text, or None.  Unknown
        ids raise as `encoding.decode_bytes` does (KeyError)."""
        ids = _ids_of(id_or_ids)
        if self.skip_special_tokens:
            ids = [i for i in ids if not encoding.is_special_token(i)]
        text = self._utf8.decode(encoding.decode_bytes(ids), final=False)
        return text or None

    def __copy__(self) -> ByteDecodeStream:
        other = ByteDecodeStream(self.skip_special_tokens)
        other._utf8.setstate(self._utf8.getstate())
        return other
