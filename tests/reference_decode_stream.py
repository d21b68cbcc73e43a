"""Streaming decode, the slow and obvious way: after every step, decode everything so far and
return what is new.  The specs that fastbpe.hf.decode_stream is tested against."""
from __future__ import annotations

import functools


class ReferenceDecodeStream:
    """For a tokenizer with decode(ids, skip_special_tokens): the text returned so far is always
    decode(all ids) minus the text of the context ids, taken whenever that decode does not end in
    U+FFFD (an unfinished character)."""

    def __init__(self, ids=None, skip_special_tokens=False):
        self.ids = list(ids or [])
        self.n_context = len(self.ids)
        self.skip = skip_special_tokens
        self.context = None  # the context ids' text, once it is whole
        self.returned = ""

    def step(self, tokenizer, id_or_ids):
        if self.context is None and self.n_context:
            text = tokenizer.decode(self.ids[: self.n_context], skip_special_tokens=self.skip)
            self.context = None if text.endswith("\ufffd") else text
        self.ids += [id_or_ids] if isinstance(id_or_ids, int) else list(id_or_ids)
        full = tokenizer.decode(self.ids, skip_special_tokens=self.skip)
        done = (self.context or "") + self.returned
        if full.endswith("\ufffd") or len(full) <= len(done):
            return None
        assert full.startswith(done), (full, done)
        self.returned = full[len(self.context or ""):]
        return full[len(done):]


@functools.lru_cache(maxsize=1)
def unfinished_utf8() -> frozenset[bytes]:
    """Every proper prefix of the UTF-8 encoding of every character."""
    out = set()
    for cp in range(0x80, 0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        b = chr(cp).encode("utf-8")
        out.update(b[:k] for k in range(1, len(b)))
    return frozenset(out)


class ReferenceByteDecodeStream:
    """For a tiktoken-style Encoding: the text returned so far is always the decode (errors
    "replace") of all bytes so far minus an unfinished character at the end."""

    def __init__(self, skip_special_tokens=False):
        self.skip = skip_special_tokens
        self.data = b""
        self.returned = ""

    def step(self, encoding, id_or_ids):
        ids = [id_or_ids] if isinstance(id_or_ids, int) else list(id_or_ids)
        if self.skip:
            ids = [i for i in ids if not encoding.is_special_token(i)]
        self.data += encoding.decode_bytes(ids)
        cut = len(self.data)
        for k in (1, 2, 3):
            if len(self.data) >= k and self.data[-k:] in unfinished_utf8():
                cut = len(self.data) - k
        text = self.data[:cut].decode("utf-8", "replace")
        assert text.startswith(self.returned)
        new, self.returned = text[len(self.returned):], text
        return new or None
