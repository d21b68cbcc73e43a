"""`GGUFTokenizer`: llama.cpp's tokenizer of a GGUF file, without llama.cpp.

`encode_ids(text, add_special_tokens, parse_special)` gives the ids of llama.cpp's
`llama_tokenize(vocab, text, add_special, parse_special)`; `decode(ids)` gives its
`llama_detokenize`.  The steps follow llama-vocab.cpp:

1. special-token text is cut out (`tokenizer_st_partition`): user-defined tokens always,
   control and unknown tokens only with parse_special, longest token first;
2. each remaining fragment is tokenized by the model (byte-level BPE after the pre-tokenizer's
   regexes, or SentencePiece BPE with ▁ for spaces and a leading space);
3. BOS / EOS are added when asked and the file says so.
"""
from __future__ import annotations

import os

import regex

from ..hf.encoding import Encoding
from .models import ByteLevelBPE, SentencePieceBPE
from .pretokenizers import Splitter
from .reader import read_metadata
from .vocab import BYTE, CONTROL, LSTRIP, NORMAL, RSTRIP, UNKNOWN, USER_DEFINED, Vocab

_C_SPACE = " \t\n\v\f\r"  # C's isspace, which llama.cpp's lstrip/rstrip use
_SPM_SPACE = "\u2581"


class GGUFTokenizer:
    def __init__(self, meta: dict, path: str = "<gguf>"):
        self.path = path
        self.metadata = {k: v for k, v in meta.items() if not k.startswith("tokenizer.ggml.")
                         or k in ("tokenizer.ggml.model", "tokenizer.ggml.pre")}
        self.vocab = vocab = Vocab(meta, path)
        if vocab.model == "gpt2":
            self.model = ByteLevelBPE(vocab, meta.get("tokenizer.ggml.merges"))
            self.splitter = Splitter(vocab.pre)
        else:
            self.model = SentencePieceBPE(vocab)
            self.splitter = None
        self._specials_by_mode = {}

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "GGUFTokenizer":
        name = os.fspath(path)
        return cls(read_metadata(name), name)

    # -- facts of the file -----------------------------------------------------------------

    @property
    def model_type(self) -> str:
        return self.vocab.model

    @property
    def pre_tokenizer(self) -> str | None:
        return self.vocab.pre.name if self.vocab.pre else None

    @property
    def bos_token_id(self) -> int | None:
        return self.vocab.ids["bos"]

    @property
    def eos_token_id(self) -> int | None:
        return self.vocab.ids["eos"]

    @property
    def pad_token_id(self) -> int | None:
        return self.vocab.ids["padding"]

    @property
    def unk_token_id(self) -> int | None:
        return self.vocab.ids["unknown"]

    @property
    def add_bos_token(self) -> bool:
        return self.vocab.add_bos

    @property
    def add_eos_token(self) -> bool:
        return self.vocab.add_eos

    @property
    def chat_template(self) -> str | None:
        return self.vocab.chat_template

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        return dict(self.vocab.text_to_id)

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return len(self.vocab.tokens)

    def token_to_id(self, token: str) -> int | None:
        return self.vocab.text_to_id.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self.vocab.tokens[token_id] if 0 <= token_id < len(self.vocab.tokens) else None

    def __repr__(self) -> str:
        how = f"pre={self.pre_tokenizer!r}, {self.splitter!r}" if self.splitter else "SentencePiece BPE"
        return f"<GGUFTokenizer {os.path.basename(self.path)!r}: {self.vocab.model}, {len(self.vocab.tokens)} tokens, {how}>"

    # -- encoding ---------------------------------------------------------------------------

    def encode_ids(self, text: str, add_special_tokens: bool = False, parse_special: bool = False) -> list[int]:
        """llama.cpp's llama_tokenize(text, add_special=add_special_tokens, parse_special)."""
        if not isinstance(text, str):
            raise TypeError(f"expected str, not {type(text).__name__}")
        fragments = self._partition(text, parse_special)
        vocab = self.vocab
        out = []
        if add_special_tokens and vocab.add_bos:
            if vocab.ids["bos"] is None:
                raise ValueError(f"{self.path}: the file asks for a BOS token but has none")
            out.append(vocab.ids["bos"])
        if vocab.model == "llama":
            prev_special = True  # a leading space before the first text and after each special token
            for frag in fragments:
                if type(frag) is int:
                    out.append(frag)
                    prev_special = True
                    continue
                if vocab.add_space_prefix and prev_special:
                    frag = " " + frag
                out.extend(self.model.encode(frag.replace(" ", _SPM_SPACE)))
                prev_special = False
        else:
            for frag in fragments:
                if type(frag) is int:
                    out.append(frag)
                else:
                    out.extend(self._encode_bpe(frag))
        if add_special_tokens and vocab.add_eos:
            if vocab.ids["eos"] is None:
                raise ValueError(f"{self.path}: the file asks for an EOS token but has none")
            out.append(vocab.ids["eos"])
        return out

    def encode(self, text: str, add_special_tokens: bool = False, parse_special: bool = False) -> Encoding:
        """`encode_ids` as an Encoding (ids, tokens; offsets are not tracked: all (0, 0))."""
        ids = self.encode_ids(text, add_special_tokens, parse_special)
        tokens = [self.vocab.tokens[i] for i in ids]
        n = len(ids)
        return Encoding(ids, [0] * n, tokens, [(0, 0)] * n, [1] * n, [0] * n, [None] * n, [0] * n)

    def encode_batch(self, texts, add_special_tokens: bool = False, parse_special: bool = False) -> list[list[int]]:
        return [self.encode_ids(t, add_special_tokens, parse_special) for t in texts]

    def _encode_bpe(self, text: str) -> list[int]:
        kind = self.splitter.scanner_kind
        if kind >= 0:
            return self.model.encode_text(text, kind)
        return self.model.encode_pieces(self.splitter.split(text))

    def _partition(self, text: str, parse_special: bool) -> list:
        """tokenizer_st_partition: text pieces (str) and special-token ids (int), in order."""
        specials, finder = self._specials(parse_special)
        if not specials or not text or finder.search(text) is None:
            return [text] if text else []
        tokens, attrs = self.vocab.tokens, self.vocab.attrs
        fragments = [text]
        for sid in specials:
            word = tokens[sid]
            out = []
            for frag in fragments:
                if type(frag) is int or word not in frag:
                    out.append(frag)
                    continue
                pos = 0
                while True:
                    at = frag.find(word, pos)
                    if at < 0:
                        break
                    left = frag[pos:at]
                    if attrs[sid] & LSTRIP:
                        left = left.rstrip(_C_SPACE)
                    if left:
                        out.append(left)
                    out.append(sid)
                    pos = at + len(word)
                    if attrs[sid] & RSTRIP:
                        while pos < len(frag) and frag[pos] in _C_SPACE:
                            pos += 1
                if pos < len(frag):
                    out.append(frag[pos:])
            fragments = out
        return fragments

    def _specials(self, parse_special: bool):
        """The special tokens cut out in this mode, and one regex that finds any of them."""
        hit = self._specials_by_mode.get(parse_special)
        if hit is None:
            skip = 0 if parse_special else CONTROL | UNKNOWN
            vocab = self.vocab
            ids = [i for i in vocab.special_ids if not vocab.attrs[i] & skip]
            finder = regex.compile("|".join(regex.escape(vocab.tokens[i]) for i in ids)) if ids else None
            hit = self._specials_by_mode[parse_special] = (ids, finder)
        return hit

    # -- decoding ---------------------------------------------------------------------------

    def token_to_piece(self, token_id: int, special: bool = True) -> bytes:
        """llama.cpp's token_to_piece: the bytes of one token (control tokens only if special)."""
        vocab = self.vocab
        if not 0 <= token_id < len(vocab.tokens):
            raise ValueError(f"token id {token_id} is outside the vocabulary (size {len(vocab.tokens)})")
        attr = vocab.attrs[token_id]
        if attr & (UNKNOWN | CONTROL) and not special:
            return b""
        text = vocab.tokens[token_id]
        if attr & (UNKNOWN | CONTROL | USER_DEFINED):
            return text.encode("utf-8", "surrogateescape")
        if attr & NORMAL:
            if vocab.model == "llama":
                return text.replace(_SPM_SPACE, " ").encode("utf-8", "surrogateescape")
            return _bytelevel_decode(text)
        if attr & BYTE:
            return bytes([int(text[3:5], 16)])
        return b""

    def decode_bytes(self, ids, skip_special_tokens: bool = False) -> bytes:
        """llama_detokenize(ids, remove_special=skip_special_tokens, unparse_special=not skip_special_tokens)."""
        vocab = self.vocab
        ids = [int(i) for i in ids]
        remove_space = vocab.add_space_prefix
        if skip_special_tokens and vocab.add_bos and ids and ids[0] == vocab.ids["bos"]:
            remove_space = False
            ids = ids[1:]
        if skip_special_tokens and vocab.add_eos and ids and ids[-1] == vocab.ids["eos"]:
            ids = ids[:-1]
        parts = []
        for i in ids:
            piece = self.token_to_piece(i, not skip_special_tokens)
            if remove_space and piece[:1] == b" ":
                piece = piece[1:]
            remove_space = False
            parts.append(piece)
        text = b"".join(parts)
        return _clean_spaces(text) if vocab.clean_spaces else text

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        """The text of ids, as llama.cpp's detokenize (invalid UTF-8 becomes U+FFFD)."""
        return self.decode_bytes(ids, skip_special_tokens).decode("utf-8", "replace")

    def decode_batch(self, sequences, skip_special_tokens: bool = False) -> list[str]:
        return [self.decode(s, skip_special_tokens) for s in sequences]


def _bytelevel_decode(text: str) -> bytes:
    """llama_decode_text: byte-level characters back to bytes; others as llama.cpp marks them."""
    from ..formats.bytelevel import CHAR_TO_BYTE

    out = bytearray()
    for c in text:
        b = CHAR_TO_BYTE.get(c)
        if b is not None:
            out.append(b)
        else:
            utf8 = c.encode("utf-8", "surrogateescape")
            out += b"[UNK_BYTE_0x" + utf8.hex().encode() + text.encode("utf-8", "surrogateescape") + b"]"
    return bytes(out)


def _clean_spaces(text: bytes) -> bytes:
    """llama.cpp's clean_up_tokenization_spaces, three passes over the bytes."""
    t = bytearray(text)
    # " ?", " !", " .", " ,"
    out = bytearray(t[:1])
    for i in range(1, len(t)):
        if t[i - 1] == 0x20 and t[i] in b"?!.,":
            out.pop()
        out.append(t[i])
    t = out
    # " ' " -> "'" (llama.cpp zeroes the dropped space in place, which the next step sees)
    out = bytearray(t[:1])
    i = 1
    while i < len(t):
        x = t[i]
        if x == 0x27 and i + 1 < len(t) and t[i - 1] == 0x20 and t[i + 1] == 0x20:
            out.pop()
            i += 1
            t[i] = 0
        out.append(x)
        i += 1
    t = out
    # " 's", " 'm", " 're", " 've" lose their space
    out = bytearray(t[:1])
    for i in range(1, len(t)):
        x = t[i]
        if t[i - 1] == 0x20 and x == 0x27 and i + 1 < len(t):
            x1 = t[i + 1]
            if x1 in b"sm" or (i + 2 < len(t) and (t[i + 1:i + 3] in (b"re", b"ve"))):
                out.pop()
        out.append(x)
    return bytes(out)
