"""SentencePiece `.model` files (the ModelProto protobuf) read into plain data.

A small reader of the protobuf wire format for the fields an encoder needs, not the
`protobuf` package: a `.model` file is a few hundred KB of three message types, the
sentencepiece package itself does not need protobuf to load one, and a reader this size is
easier to keep exact (and to make reject a bad file with a clear error) than a dependency
with its own generated code.  The pieces are read in C (`_spm_model.read_model`), the two
spec messages here.  Field numbers are those of sentencepiece_model.proto.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .._spm_model import read_model

# SentencePiece.Type
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
# TrainerSpec.ModelType
MODEL_TYPES = {1: "UNIGRAM", 2: "BPE", 3: "WORD", 4: "CHAR"}


@dataclass(frozen=True)
class SentencePieceModel:
    pieces: tuple            # (piece text, score, type) by id
    model_type: str          # "BPE", "UNIGRAM", ...
    byte_fallback: bool
    unk_id: int
    bos_id: int              # -1: none
    eos_id: int
    pad_id: int
    normalizer: str          # NormalizerSpec.name ("identity", "nmt_nfkc", ...)
    precompiled_charsmap: bytes
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool
    escape_whitespaces: bool
    treat_whitespace_as_suffix: bool
    split_digits: bool
    unk_surface: str = " \u2047 "   # what decode writes for the unk piece
    denormalizer_charsmap: bytes = b""   # ModelProto.denormalizer_spec: rules decode applies (b"": none)
    denormalizer_flags: tuple = (True, True, True)   # its add_dummy_prefix, remove_extra_whitespaces, escape


class _Reader:
    def __init__(self, data: bytes, path: str):
        self.data, self.path = data, path

    def error(self, what: str) -> ValueError:
        return ValueError(f"{self.path}: not a SentencePiece model ({what})")

    def varint(self, pos: int) -> tuple[int, int]:
        value, shift, data = 0, 0, self.data
        while True:
            if pos >= len(data) or shift > 63:
                raise self.error("a varint runs past the end")
            b = data[pos]
            value |= (b & 0x7F) << shift
            pos += 1
            if b < 0x80:
                return value, pos
            shift += 7

    def fields(self, start: int, end: int):
        """(field number, wire type, value) of a message in data[start:end]; a length-delimited
        value is its (start, end), a fixed32 its 4 bytes."""
        pos = start
        while pos < end:
            key, pos = self.varint(pos)
            number, wire = key >> 3, key & 7
            if wire == 0:
                value, pos = self.varint(pos)
            elif wire == 2:
                n, pos = self.varint(pos)
                if pos + n > end:
                    raise self.error("a field runs past its message")
                value, pos = (pos, pos + n), pos + n
            elif wire == 5:
                if pos + 4 > end:
                    raise self.error("a fixed32 runs past its message")
                value, pos = self.data[pos:pos + 4], pos + 4
            elif wire == 1:
                if pos + 8 > end:
                    raise self.error("a fixed64 runs past its message")
                value, pos = self.data[pos:pos + 8], pos + 8
            else:
                raise self.error(f"wire type {wire}")
            yield number, wire, value

    def text(self, span) -> str:
        try:
            return self.data[span[0]:span[1]].decode("utf-8")
        except (UnicodeDecodeError, TypeError):
            raise self.error("a string is not UTF-8") from None


def _signed(v: int) -> int:
    """An int32 field's varint (negative values are 10-byte two's complement)."""
    return v - (1 << 64) if v >= 1 << 63 else v


def looks_like_sentencepiece_model(head: bytes) -> bool:
    """Whether a file's first bytes are a ModelProto's (its first piece: field 1, a message
    whose own field 1 is the piece text), not text (a tokenizer.json, a minbpe .model)."""
    return (len(head) >= 4 and head[0] == 0x0A and head[1] != 0x7B   # not "\n{": a JSON document
            and (head[1] >= 0x80 or head[2] == 0x0A))


def read_sentencepiece_model(path: str | os.PathLike) -> SentencePieceModel:
    path = os.fspath(path)
    with open(path, "rb") as f:
        return sentencepiece_model_from_bytes(f.read(), path)


def sentencepiece_model_from_bytes(data: bytes, path: str = "tokenizer.model") -> SentencePieceModel:
    r = _Reader(bytes(data), path)
    pieces, fields = read_model(r.data, path)   # the pieces in C: 32k messages were 0.1 s here
    trainer, normalizer, denormalizer = {}, {}, {}
    for number, into in ((2, trainer), (3, normalizer), (5, denormalizer)):
        for wire, value in fields.get(number, ()):
            if wire != 2:
                raise r.error(f"field {number} is not a message")
            for n2, w2, v2 in r.fields(*value):   # repeated messages merge, the last value wins
                into[n2] = (w2, v2)
    if not pieces:
        raise r.error("no pieces")

    def flag(spec, number, default):
        w, v = spec.get(number, (0, default))
        return bool(v) if w == 0 else default

    def integer(spec, number, default):
        w, v = spec.get(number, (0, default))
        return _signed(v) if w == 0 else default

    def string(spec, number, default):
        w, v = spec.get(number, (2, None))
        return r.text(v) if w == 2 and v is not None else default

    def blob(spec, number):
        w, span = spec.get(number, (2, None))
        return r.data[span[0]:span[1]] if w == 2 and span else b""

    model_type = integer(trainer, 3, 1)
    return SentencePieceModel(
        pieces=tuple(pieces), model_type=MODEL_TYPES.get(model_type, f"type {model_type}"),
        byte_fallback=flag(trainer, 35, False),
        unk_id=integer(trainer, 40, 0), bos_id=integer(trainer, 41, 1), eos_id=integer(trainer, 42, 2),
        pad_id=integer(trainer, 43, -1),
        normalizer=string(normalizer, 1, "nmt_nfkc"),
        precompiled_charsmap=blob(normalizer, 2),
        add_dummy_prefix=flag(normalizer, 3, True), remove_extra_whitespaces=flag(normalizer, 4, True),
        escape_whitespaces=flag(normalizer, 5, True),
        treat_whitespace_as_suffix=flag(trainer, 24, False), split_digits=flag(trainer, 25, False),
        unk_surface=string(trainer, 44, " \u2047 "),
        denormalizer_charsmap=blob(denormalizer, 2),
        denormalizer_flags=(flag(denormalizer, 3, True), flag(denormalizer, 4, True), flag(denormalizer, 5, True)))
