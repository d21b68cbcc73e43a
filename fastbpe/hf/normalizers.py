"""Normalizers (HF `normalizers.*`): NFC/NFD/NFKC/NFKD, Lowercase, Strip, Replace, Prepend,
Sequence.  Each maps a `NormalizedText` to a new one, keeping the alignment to the input."""
from __future__ import annotations

import functools
import unicodedata
from array import array
from itertools import repeat

from .._nfc import nfc_spans
from ._nodes import json_bool, json_field, json_list, json_str, node_type, unsupported
from .normalized import NormalizedText
from .oniguruma import compile_split_pattern


def is_whitespace(c: str) -> bool:
    """Rust's char::is_whitespace (Unicode White_Space), which HF uses."""
    return c.isspace() and c not in "\x1c\x1d\x1e\x1f"


@functools.lru_cache(maxsize=1)
def _composes_with_previous() -> frozenset:
    """Characters of combining class 0 that can still compose with the character before
    them (the second half of a canonical pair: Hangul vowels/trailing consonants, a few
    vowel signs).  Normalization never crosses a boundary before any other starter."""
    seconds = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    for cp in range(0x110000):
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2:
                seconds.add(int(parts[1], 16))
    return frozenset(chr(c) for c in seconds)


class Unicode:
    def __init__(self, form: str):
        self.form = form

    def normalize(self, t: NormalizedText) -> NormalizedText:
        if unicodedata.is_normalized(self.form, t.text):
            return t
        text, n = t.text, len(t.text)
        joins = _composes_with_previous()
        parts = []  # (output character, index of the input character it takes its span from)
        i = 0
        while i < n:
            j = i + 1
            while j < n and (unicodedata.combining(text[j]) or text[j] in joins):
                j += 1
            r = unicodedata.normalize(self.form, text[i:j])
            # as HF (unicode-normalization-alignments): output characters take the input
            # characters in order; when the cluster shrinks, the first one absorbs the rest,
            # when it grows, the extra characters share the last input character
            m, k = len(r), j - i
            for q, c in enumerate(r):
                parts.append((c, i + (q + (k - m) if m <= k and q > 0 else min(q, k - 1))))
            i = j
        out = t.from_parts(parts)
        whole = unicodedata.normalize(self.form, text)
        if out.text != whole:  # a composition across clusters: one span for all
            s, e = t.offsets(0, n)
            out = NormalizedText(whole, 0, array("q", [s] * len(whole)), array("q", [e] * len(whole)))
        return out


class Lowercase:
    def normalize(self, t: NormalizedText) -> NormalizedText:
        # character by character, as HF (no final-sigma rule, which str.lower applies)
        return t.map_chars(str.lower)


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


class Replace:
    def __init__(self, pattern, content: str):
        self.pattern = compile_split_pattern("normalizer Replace", pattern)
        self.content = content

    def normalize(self, t: NormalizedText) -> NormalizedText:
        # as HF, empty matches count: content is inserted there
        matches = self.pattern.spans(t.text)
        return t.replace_matches(matches, self.content) if matches else t


class Prepend:
    def __init__(self, prepend: str):
        self.prepend = prepend

    def normalize(self, t: NormalizedText) -> NormalizedText:
        return t.prepend(self.prepend)


class Sequence:
    def __init__(self, steps: list):
        self.steps = steps

    def normalize(self, t: NormalizedText) -> NormalizedText:
        for step in self.steps:
            t = step.normalize(t)
        return t

    def is_nfc_only(self) -> bool:
        return all(isinstance(s, Unicode) and s.form == "NFC" for s in self.steps)


def from_json(node, path: str = "normalizer"):
    """The normalizer of a tokenizer.json node (None for none)."""
    if node is None:
        return None
    kind = node_type("normalizer", node)
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return Unicode(kind)
    if kind == "Lowercase":
        return Lowercase()
    if kind == "Strip":
        return Strip(json_field(node, "strip_left", json_bool, path, True),
                     json_field(node, "strip_right", json_bool, path, True))
    if kind == "Replace":
        return Replace(node.get("pattern"), json_field(node, "content", json_str, path, ""))
    if kind == "Prepend":
        return Prepend(json_field(node, "prepend", json_str, path, ""))
    if kind == "Sequence":
        steps = json_field(node, "normalizers", json_list, path, [])
        return Sequence([from_json(n, f"{path}.normalizers[{k}]") for k, n in enumerate(steps)])
    raise unsupported("normalizer", node)


# the code points _nfc_table() looks at one by one; the others (planes 4-13, 15, 16:
# unassigned or private use) count as unstable, which only costs a call to normalize
_NFC_PLANES = ((0, 0x40000), (0xE0000, 0xE1000))


@functools.lru_cache(maxsize=1)
def _nfc_table() -> bytes:
    """The table of fastbpe._nfc.nfc_spans, a byte per code point from this Python's
    unicodedata: 0 for a stable starter (combining class 0, unchanged by NFC, composes with
    nothing before it), 255 for a code point NFC may change or compose backwards, or that is
    unassigned (a later Unicode version may make it either), else the combining class of a
    mark NFC keeps where the marks are in order.  Built once (~0.2 s), with C-level loops."""
    table = bytearray(b"\xff" * 0x110000)
    for lo, hi in _NFC_PLANES:
        chars = list(map(chr, range(lo, hi)))
        unassigned = map("Cn".__eq__, map(unicodedata.category, chars))
        changes = map(str.__ne__, map(unicodedata.normalize, repeat("NFC"), chars), chars)
        table[lo:hi] = bytes(255 if bad else ccc for bad, ccc in zip(map(any, zip(unassigned, changes)),
                                                                     map(unicodedata.combining, chars)))
    for c in _composes_with_previous():
        table[ord(c)] = 255
    return bytes(table)


def nfc(text: str) -> str:
    """unicodedata.normalize("NFC", text), fast on text that is NFC already.

    CPython returns text that passes its quick check at once, but one character that only
    *may* compose (a Devanagari nukta, a Bengali vowel sign, Hangul jamo) sends the whole
    string through full normalization, ~40x slower.  The C scan finds the spans NFC may
    change (each starts and ends before a stable starter, so they normalize apart from the
    rest) and only those go to unicodedata."""
    if text.isascii():
        return text
    spans = nfc_spans(text, _nfc_table())
    if not spans:
        return text
    parts, done = [], 0
    for start, end in spans:
        parts.append(text[done:start])
        parts.append(unicodedata.normalize("NFC", text[start:end]))
        done = end
    parts.append(text[done:])
    return "".join(parts)


def is_nfc_or_none(normalizer) -> bool:
    """True when the normalizer is absent or only NFC (the fast path applies NFC itself)."""
    if normalizer is None:
        return True
    if isinstance(normalizer, Unicode):
        return normalizer.form == "NFC"
    return isinstance(normalizer, Sequence) and normalizer.is_nfc_only()
