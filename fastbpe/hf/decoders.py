"""Decoders (HF `decoders.*`): ByteLevel, ByteFallback, Fuse, Strip, Replace, Metaspace, BPEDecoder,
Sequence.  Each `decode_chain(tokens) -> tokens`; `decode(tokens) -> str` joins the result.
`Tokenizer.decode` and streaming decoders build on these."""
from __future__ import annotations

from ..formats.bytelevel import CHAR_TO_BYTE
from ._nodes import json_bool, json_field, json_list, json_str, json_usize, node_type, unsupported
from .oniguruma import compile_split_pattern


class Decoder:
    def decode_chain(self, tokens: list[str]) -> list[str]:
        raise NotImplementedError

    def decode(self, tokens: list[str]) -> str:
        return "".join(self.decode_chain(list(tokens)))


class ByteLevel(Decoder):
    def decode_chain(self, tokens):
        out = bytearray()
        for t in tokens:
            try:
                out += bytes(CHAR_TO_BYTE[c] for c in t)
            except KeyError:  # a token outside the byte alphabet (an added token) stays as text
                out += t.encode("utf-8", "surrogatepass")
        return [out.decode("utf-8", "replace")]


def _fallback_byte(token: str):
    if len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
        try:
            return int(token[3:5], 16)
        except ValueError:
            return None
    return None


class ByteFallback(Decoder):
    def decode_chain(self, tokens):
        out, pending = [], bytearray()

        def flush():
            if pending:
                try:
                    out.append(pending.decode("utf-8"))
                except UnicodeDecodeError:
                    out.extend(["\ufffd"] * len(pending))
                pending.clear()

        for t in tokens:
            b = _fallback_byte(t)
            if b is not None:
                pending.append(b)
            else:
                flush()
                out.append(t)
        flush()
        return out


class Fuse(Decoder):
    def decode_chain(self, tokens):
        return ["".join(tokens)]


class Strip(Decoder):
    def __init__(self, content: str, start: int, stop: int):
        self.content, self.start, self.stop = content, start, stop

    def decode_chain(self, tokens):
        out = []
        for t in tokens:
            a = 0
            while a < min(self.start, len(t)) and t[a] == self.content:
                a += 1
            b = len(t)
            while len(t) - b < self.stop and b > a and t[b - 1] == self.content:
                b -= 1
            out.append(t[a:b])
        return out


class Replace(Decoder):
    def __init__(self, pattern, content: str):
        self.pattern = compile_split_pattern("decoder Replace", pattern)
        self.content = content

    def decode_chain(self, tokens):
        out = []
        for t in tokens:
            parts, prev = [], 0
            for s, e in self.pattern.spans(t):  # empty matches too, as HF
                parts.append(t[prev:s])
                parts.append(self.content)
                prev = e
            parts.append(t[prev:])
            out.append("".join(parts))
        return out


class Metaspace(Decoder):
    def __init__(self, replacement: str, prepend_scheme: str):
        self.replacement, self.prepend_scheme = replacement, prepend_scheme

    def decode_chain(self, tokens):
        out = []
        for i, t in enumerate(tokens):
            if i == 0 and self.prepend_scheme != "never":
                out.append("".join(c for c in t if c != self.replacement))  # as HF: every one
            else:
                out.append(t.replace(self.replacement, " "))
        return out


class BPEDecoder(Decoder):
    def __init__(self, suffix: str):
        self.suffix = suffix

    def decode_chain(self, tokens):
        last = len(tokens) - 1
        return [t.replace(self.suffix, "" if i == last else " ") for i, t in enumerate(tokens)]


class Sequence(Decoder):
    def __init__(self, steps: list):
        self.steps = steps

    def decode_chain(self, tokens):
        for step in self.steps:
            tokens = step.decode_chain(tokens)
        return tokens


def from_json(node, path: str = "decoder"):
    if node is None:
        return None
    kind = node_type("decoder", node)
    if kind == "ByteLevel":
        return ByteLevel()
    if kind == "ByteFallback":
        return ByteFallback()
    if kind == "Fuse":
        return Fuse()
    if kind == "Strip":
        return Strip(json_field(node, "content", json_str, path, " "),
                     json_field(node, "start", json_usize, path, 0),
                     json_field(node, "stop", json_usize, path, 0))
    if kind == "Replace":
        return Replace(node.get("pattern"), json_field(node, "content", json_str, path, ""))
    if kind == "Metaspace":
        scheme = json_field(node, "prepend_scheme", json_str, path)
        if scheme is None:
            scheme = "always" if json_field(node, "add_prefix_space", json_bool, path, True) else "never"
        return Metaspace(json_field(node, "replacement", json_str, path, "\u2581"), scheme)
    if kind == "BPEDecoder":
        return BPEDecoder(json_field(node, "suffix", json_str, path, "</w>"))
    if kind == "Sequence":
        steps = json_field(node, "decoders", json_list, path, [])
        return Sequence([from_json(n, f"{path}.decoders[{k}]") for k, n in enumerate(steps)])
    raise unsupported("decoder", node)
