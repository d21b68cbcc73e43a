"""Normalizers (HF `normalizers.*`): NFC/NFD/NFKC/NFKD, Lowercase, ByteLevel, Strip, Replace,
Prepend, StripAccents, BertNormalizer, Sequence.  Each maps a `NormalizedText` to a new one, keeping the
alignment to the input (the readable reference), and `lower()`s itself to the ops of a
`fastbpe.normalize.NormalizerProgram` (the C kernel), or raises `NotLowered` saying why."""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from ..formats.bytelevel import BYTE_TO_CHAR
from .._nfc import combining_mark_table, lowercase, nfc_spans, normalize
from ..plan import NotLowered
from ._nodes import json_bool, json_field, json_list, json_str, node_type, unsupported
from .normalized import NormalizedText
from .oniguruma import LiteralPattern, compile_split_pattern


if TYPE_CHECKING:
    from ..normalize import NormalizerProgram


def _ops():
    """fastbpe.normalize (the ops as values, NormalizerProgram), imported when a normalizer is
    lowered: a file without one loads without it."""
    from .. import normalize
    return normalize

def is_whitespace(c: str) -> bool:
    """Rust's char::is_whitespace (Unicode White_Space), which HF uses."""
    return c.isspace() and c not in "\x1c\x1d\x1e\x1f"


class Unicode:
    """NFC/NFD/NFKC/NFKD as HF (Unicode 9.0 tables, its alignment of each output character)."""

    def __init__(self, form: str):
        self.form = form

    def normalize(self, t: NormalizedText) -> NormalizedText:
        text, sources = normalize(t.text, self.form)
        return t if sources is None else t.from_sources(text, sources)

    def lower(self) -> list:
        return [_ops().UnicodeForm(self.form)]


class Lowercase:
    """Rust's char::to_lowercase per character, as HF (Unicode 17; no final-sigma rule)."""

    def normalize(self, t: NormalizedText) -> NormalizedText:
        text, sources = lowercase(t.text)
        return t if sources is None else t.from_sources(text, sources)

    def lower(self) -> list:
        return [_ops().Lowercase()]


def char_to_bytelevel(c: str) -> str:
    """c's UTF-8 bytes as characters of GPT-2's byte-level alphabet."""
    return "".join(BYTE_TO_CHAR[b] for b in c.encode("utf-8", "surrogatepass"))


class ByteLevel:
    """HF's ByteLevel normalizer: every character becomes its bytes in the byte-level
    alphabet, each taking the character's span."""

    def normalize(self, t: NormalizedText) -> NormalizedText:
        if t.text.isascii() and all(BYTE_TO_CHAR[ord(c)] == c for c in t.text):
            return t  # printable ASCII maps to itself
        return t.map_chars(char_to_bytelevel)

    def lower(self) -> list:
        return [_ops().ByteLevel()]


class Strip:
    def __init__(self, left: bool, right: bool):
        self.left, self.right = left, right

    def normalize(self, t: NormalizedText) -> NormalizedText:
        start, end = 0, len(t.text)
        if self.left:
            while start < end and is_whitespace(t.text[start]):
                start += 1
        if self.right:
            while end > start and is_whitespace(t.text[end - 1]):
                end -= 1
        return t.slice(start, end)

    def lower(self) -> list:
        return [_ops().Strip(self.left, self.right)]


class Replace:
    def __init__(self, pattern, content: str):
        self.pattern = compile_split_pattern("normalizer Replace", pattern)
        self.pattern_node = pattern
        self.content = content

    def normalize(self, t: NormalizedText) -> NormalizedText:
        # as HF, empty matches count: content is inserted there
        matches = self.pattern.spans(t.text)
        return t.replace_matches(matches, self.content) if matches else t

    def lower(self) -> list:
        if isinstance(self.pattern, LiteralPattern) or self.pattern_node == {"String": ""}:
            return [_ops().ReplaceLiteral(self.pattern_node["String"], self.content)]
        pattern = self.pattern_node.get("Regex")
        prog = regex_program(pattern) if regex_program is not None and isinstance(pattern, str) else None
        run = _class_run(prog) if prog is not None else None
        if run is not None:   # one class repeated: CLIP's \s+, transformers' " {2,}"
            cls, run_min, run_max = run
            return [_ops().ReplaceRun(pattern, prog.tables[cls], min(run_max, 1 << 62), self.content, run_min)]
        raise NotLowered(f"normalizer Replace with the regex {pattern!r} (the kernel runs a String "
                         "pattern, or a regex that is one character class repeated)")


def _class_run(prog) -> tuple | None:
    """(class, least, most) of a scanner program that is one class repeated greedily or
    possessively (`\\s+`, `" {2,}"`), else None: read off its item arrays, which a program
    read back from the cache has too."""
    from ..program_items import LAZY, T_CLASS
    alt_start, alt_end, alt_seqs = prog.alt_arrays
    seq_start, seq_end, _ = prog.seq_arrays
    if alt_end[prog.root] - alt_start[prog.root] != 1:
        return None
    seq = alt_seqs[alt_start[prog.root]]
    if seq_end[seq] - seq_start[seq] != 1:
        return None
    kind, cls, least, most, mode = (int(x) for x in prog.item_array[5 * seq_start[seq]:5 * seq_start[seq] + 5])
    if kind != T_CLASS or mode == LAZY or not 1 <= least <= most:
        return None
    return cls, least, most


# Oniguruma's reading of a regex as a scanner program, or None (pre_tokenizers.oniguruma_program:
# that module imports this one, and sets it here when it loads)
regex_program = None


class Prepend:
    def __init__(self, prepend: str):
        self.prepend = prepend

    def normalize(self, t: NormalizedText) -> NormalizedText:
        return t.prepend(self.prepend)

    def lower(self) -> list:
        return [_ops().Prepend(self.prepend)]


@functools.lru_cache(maxsize=1)
def combining_marks() -> bytes:
    """One byte per code point, 1 for a combining mark (Unicode 9.0 General_Category M)."""
    return combining_mark_table()


class StripAccents:
    """HF's StripAccents: combining marks (General_Category M, Unicode 9.0, as HF's crate)
    removed; every other character keeps its span."""

    def normalize(self, t: NormalizedText) -> NormalizedText:
        marks = combining_marks()
        if t.text.isascii() or not any(marks[ord(c)] for c in t.text):
            return t
        return t.map_chars(lambda c: "" if marks[ord(c)] else c)

    def lower(self) -> list:
        return [_ops().StripAccents()]


# HF's BertNormalizer is_chinese_char: the CJK Unified Ideographs blocks and extensions (not Hangul nor kana)
CHINESE = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
           (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


@functools.lru_cache(maxsize=None)
def _bert_table(name: str) -> bytes:
    """One byte per code point, 1 inside the bert_ranges table `name` (HF's, asked of tokenizers;
    "CHINESE": the ranges above)."""
    from . import bert_ranges
    table = bytearray(0x110000)
    for first, last in CHINESE if name == "CHINESE" else getattr(bert_ranges, name):
        table[first:last + 1] = b"\x01" * (last - first + 1)
    return bytes(table)


def _bert_class(name: str) -> tuple:
    """The class table (pattern_program's) of the bert_ranges table `name`, for a normalizer op."""
    import numpy as np

    from .. import pattern_program
    bits = np.packbits(np.frombuffer(_bert_table(name), dtype=np.uint8).astype(bool), bitorder="little")
    prog = pattern_program.compile_pattern("[\\U000F0000]+", members=lambda atom: bits)
    return prog.tables[prog.run[0]]


def _bert_run(name: str, run_max: int, content: str):
    """A ReplaceRun op over the bert_ranges table `name`."""
    return _ops().ReplaceRun(f"BertNormalizer {name}", _bert_class(name), run_max, content)


def is_chinese_char(c: str) -> bool:
    """HF's BertNormalizer: the CJK Unified Ideographs blocks and extensions (CHINESE)."""
    o = ord(c)
    return any(first <= o <= last for first, last in CHINESE)


class BertNormalizer:
    """HF's BertNormalizer: clean_text (NUL, U+FFFD and other-category characters removed, white
    space as " "), handle_chinese_chars (" c " for each CJK ideograph c, all three with c's
    span), strip_accents (default: lowercase; NFD, then nonspacing marks removed), lowercase;
    the character classes are HF's own (bert_ranges.py, from tools/gen_hf_bert.py)."""

    def __init__(self, clean_text: bool, handle_chinese_chars: bool, strip_accents, lowercase: bool):
        self.clean_text, self.handle_chinese_chars, self.lowercase = clean_text, handle_chinese_chars, lowercase
        self.strip_accents = lowercase if strip_accents is None else strip_accents

    def normalize(self, t: NormalizedText) -> NormalizedText:
        if self.clean_text:
            removed, spaces = _bert_table("REMOVED"), _bert_table("SPACES")
            t = t.map_chars(lambda c: "" if removed[ord(c)] else " " if spaces[ord(c)] else c)
        if self.handle_chinese_chars:
            t = t.map_chars(lambda c: f" {c} " if is_chinese_char(c) else c)
        if self.strip_accents:
            marks = _bert_table("MARKS")
            t = Unicode("NFD").normalize(t).map_chars(lambda c: "" if marks[ord(c)] else c)
        return Lowercase().normalize(t) if self.lowercase else t

    def lower(self) -> list:
        ops = [_bert_run("REMOVED", 1 << 62, ""), _bert_run("SPACES", 1, " ")] if self.clean_text else []
        if self.handle_chinese_chars:
            ops.append(_ops().PadClass("BertNormalizer CJK ideographs", _bert_class("CHINESE"), " "))
        if self.strip_accents:
            ops += [_ops().UnicodeForm("NFD"), _bert_run("MARKS", 1 << 62, "")]
        return ops + ([_ops().Lowercase()] if self.lowercase else [])


class Sequence:
    def __init__(self, steps: list):
        self.steps = steps

    def normalize(self, t: NormalizedText) -> NormalizedText:
        for step in self.steps:
            t = step.normalize(t)
        return t

    def lower(self) -> list:
        return [op for step in self.steps for op in step.lower()]

    def is_nfc_only(self) -> bool:
        return all(isinstance(s, Unicode) and s.form == "NFC" for s in self.steps)


def normalize_str(self, sequence: str) -> str:
    """HF's `normalize_str` (tokenizers.normalizers.*): the normalized text of sequence."""
    if not isinstance(sequence, str):
        raise TypeError(f"normalize_str takes a str, not {type(sequence).__name__}")
    return self.normalize(NormalizedText.from_original(sequence)).text


# HF's component API on every normalizer class of this module (each has `normalize`)
for _stage in [v for v in list(globals().values()) if isinstance(v, type) and hasattr(v, "normalize")]:
    _stage.normalize_str = normalize_str


def from_json(node, path: str = "normalizer"):
    """The normalizer of a tokenizer.json node (None for none)."""
    if node is None:
        return None
    kind = node_type("normalizer", node)
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return Unicode(kind)
    if kind == "Lowercase":
        return Lowercase()
    if kind == "ByteLevel":
        return ByteLevel()
    if kind == "Strip":
        return Strip(json_field(node, "strip_left", json_bool, path, True),
                     json_field(node, "strip_right", json_bool, path, True))
    if kind == "Replace":
        return Replace(node.get("pattern"), json_field(node, "content", json_str, path, ""))
    if kind == "Prepend":
        return Prepend(json_field(node, "prepend", json_str, path, ""))
    if kind == "StripAccents":
        return StripAccents()
    if kind == "BertNormalizer":
        return BertNormalizer(json_field(node, "clean_text", json_bool, path, True),
                              json_field(node, "handle_chinese_chars", json_bool, path, True),
                              json_field(node, "strip_accents", json_bool, path),   # null: as lowercase
                              json_field(node, "lowercase", json_bool, path, True))
    if kind == "Sequence":
        steps = json_field(node, "normalizers", json_list, path, [])
        return Sequence([from_json(n, f"{path}.normalizers[{k}]") for k, n in enumerate(steps)])
    raise unsupported("normalizer", node)


def program_of(normalizer) -> "NormalizerProgram | None":
    """The kernel program of a normalizer (None for none, or one that changes nothing); raises
    NotLowered naming the step that has no kernel form."""
    if normalizer is None:
        return None
    lower = getattr(normalizer, "lower", None)
    if lower is None:
        raise NotLowered(f"normalizer {type(normalizer).__name__} has no kernel form")
    ops = lower()
    return _ops().NormalizerProgram(ops) if ops else None


def kernel_program(normalizer) -> tuple:
    """(program_of(normalizer), None), or (None, why) when it does not lower."""
    try:
        return program_of(normalizer), None
    except NotLowered as e:
        return None, str(e)


def nfc_table() -> bytes:
    """The table of fastbpe._nfc.nfc_spans (from fastbpe's Unicode 9.0 tables; built once,
    shared with the NFC op of normalizer programs)."""
    return _ops().form_table("NFC")


def nfc(text: str) -> str:
    """HF's NFC of text, fast on text that is NFC already: the C scan finds the spans NFC
    may change (each starts and ends before a stable starter, so they normalize apart from
    the rest) and only those are normalized."""
    if text.isascii():
        return text
    spans = nfc_spans(text, nfc_table())
    if not spans:
        return text
    parts, done = [], 0
    for start, end in spans:
        parts.append(text[done:start])
        parts.append(normalize(text[start:end], "NFC")[0])
        done = end
    parts.append(text[done:])
    return "".join(parts)


def nfc_changes(text: str) -> bool:
    """nfc(text) != text, without building nfc(text): only the spans NFC may change are
    normalized and compared (a text of code with a few such characters: 0.1 ms a 300 KB text
    instead of 0.3-0.6 ms to build the normalized copy and compare it whole)."""
    if text.isascii():
        return False
    return any(normalize(text[start:end], "NFC")[0] != text[start:end]
               for start, end in nfc_spans(text, nfc_table()))


def is_nfc_or_none(normalizer) -> bool:
    """True when the normalizer is absent or only NFC (the fast path applies NFC itself)."""
    if normalizer is None:
        return True
    if isinstance(normalizer, Unicode):
        return normalizer.form == "NFC"
    return isinstance(normalizer, Sequence) and normalizer.is_nfc_only()


def token_normalizer(norm, program):
    """What normalizes an added token's content: the normalizer's C program, else (none, or
    a text it refuses) the Python stages."""
    def normalize(text: str) -> str:
        if program is not None:
            try:
                return program.normalize(text)
            except ValueError:   # (UnicodeEncodeError: a lone surrogate)
                pass
        return norm.normalize(NormalizedText.from_original(text)).text
    return normalize
