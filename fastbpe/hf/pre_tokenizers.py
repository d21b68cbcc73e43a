"""Pre-tokenizers (HF `pre_tokenizers.*`): Split (every behavior, invert), ByteLevel, Digits,
Metaspace, Whitespace, WhitespaceSplit, Sequence.  Each maps a list of `NormalizedText` pieces
to a new list; empty pieces are dropped, as HF does."""
from __future__ import annotations

from functools import lru_cache

import regex

from .. import _pretokenize, _scan_program, pattern_program
from ..pretokenize import scanner_kind
from ..formats.bytelevel import BYTELEVEL_PATTERN
from ._nodes import json_bool, json_field, json_list, json_str, node_type, unsupported
from .normalized import NormalizedText
from .normalizers import char_to_bytelevel
from .oniguruma import OnigPattern, compile_split_pattern, onigurumacffi

BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")


class RegexSpans:
    """A Python `regex` pattern as a matcher (`spans(text)`): for the fixed patterns HF runs
    on Rust's regex crate (Whitespace, digits, Metaspace's delimiter), which agree with it."""

    def __init__(self, pattern: str):
        self.pattern = regex.compile(pattern)

    def spans(self, text: str) -> list:
        return [m.span() for m in self.pattern.finditer(text)]


BYTELEVEL_REGEX = RegexSpans(BYTELEVEL_PATTERN)  # ByteLevel's split (use_regex)


def split_by(t: NormalizedText, matcher, behavior: str, invert: bool = False) -> list:
    """HF's NormalizedString::split with a pattern: the text tiled by (span, is_match), empty
    matches included (they change what MergedWith*/Contiguous join), then merged."""
    text = t.text
    if not text:
        return []
    tiles, prev = [], 0
    for start, end in matcher.spans(text):
        if prev != start:
            tiles.append((prev, start, False))
        tiles.append((start, end, True))
        prev = end
    if prev != len(text):
        tiles.append((prev, len(text), False))
    if invert:
        tiles = [(s, e, not m) for s, e, m in tiles]
    spans = []  # (start, end, removed)
    if behavior == "Isolated":
        spans = [(s, e, False) for s, e, _ in tiles]
    elif behavior == "Removed":
        spans = tiles
    elif behavior == "Contiguous":
        previous = False
        for s, e, m in tiles:
            if m == previous and spans:
                spans[-1] = (spans[-1][0], e, False)
            else:
                spans.append((s, e, False))
            previous = m
    elif behavior == "MergedWithPrevious":
        previous = False
        for s, e, m in tiles:
            if m and not previous and spans:
                spans[-1] = (spans[-1][0], e, False)
            else:
                spans.append((s, e, False))
            previous = m
    elif behavior == "MergedWithNext":
        previous = False
        for s, e, m in reversed(tiles):
            if m and not previous and spans:
                spans[-1] = (s, spans[-1][1], False)
            else:
                spans.append((s, e, False))
            previous = m
        spans.reverse()
    else:
        raise ValueError(f"tokenizer.json: unknown split behavior {behavior!r}")
    return [t.slice(s, e) for s, e, removed in spans if not removed and e > s]


def split_isolated(t: NormalizedText, matcher, kind: int) -> list:
    """Split(Isolated): with the C scanner when it knows the pattern (kind >= 0), so that the
    pieces are those of the ids fast path (and its Unicode tables), else with the matcher."""
    if kind >= 0:
        pieces = _pretokenize.split(t.text, kind)
        if sum(map(len, pieces)) == len(t.text):  # the known patterns tile the text
            out, pos = [], 0
            for piece in pieces:
                out.append(t.slice(pos, pos + len(piece)))
                pos += len(piece)
            return out
    return split_by(t, matcher, "Isolated")


# constructs Oniguruma (Ruby syntax) reads otherwise than regex: line anchors, full case
# folding, `{m,n}+` as a repeat of `{m,n}` rather than possessive
_ONIGURUMA_DIFFERS = {"$", "\\Z", "(?i:", "{m,n}+"}


@lru_cache(maxsize=256)
def _oniguruma_members(atom: str):
    """Packed bits of the characters Oniguruma's one-character atom `atom` matches (every code
    point but the surrogates, which a tokenizer.json text cannot hold): HF's classes, on
    Oniguruma's Unicode version."""
    import numpy as np
    literal = pattern_program.literal_bits(atom)
    if literal is not None:
        return literal
    try:
        onig = OnigPattern(f"(?:{atom})+")
    except ValueError as e:
        raise pattern_program.Unsupported(str(e)) from None
    every = np.concatenate([np.arange(0xD800), np.arange(0xE000, 0x110000)]).astype("<u4")
    inside = np.zeros(len(every), dtype=bool)
    for start, end in onig.spans(every.tobytes().decode("utf-32-le")):
        inside[start:end] = True
    bits = np.zeros(0x110000, dtype=bool)
    bits[every] = inside
    return np.packbits(bits, bitorder="little")


@lru_cache(maxsize=256)
def split_program_kind(pattern: str) -> int:
    """A scanner program for a Split(Isolated) regex, with Oniguruma's character classes, when
    the pattern has no construct Oniguruma reads otherwise than regex; else -1."""
    if onigurumacffi is None:
        return -1
    try:
        prog = pattern_program.compile_pattern(pattern, members=_oniguruma_members)
    except ValueError:
        return -1
    if prog.features & _ONIGURUMA_DIFFERS:
        return -1
    try:
        return _scan_program.register(("oniguruma", pattern), [prog])
    except ValueError:   # the program table is full
        return -1


class Split:
    def __init__(self, pattern, behavior: str, invert: bool):
        if behavior not in BEHAVIORS:
            raise ValueError(f"tokenizer.json: pre-tokenizer Split has an unknown behavior {behavior!r}")
        self.pattern_node = pattern
        known = isinstance(pattern, dict) and "Regex" in pattern and behavior == "Isolated" and not invert
        self.kind = scanner_kind(pattern["Regex"]) if known else -1
        # a pattern outside the scanner's set: a scanner program when it cuts as Oniguruma does
        self.engine = "scanner" if self.kind >= 0 else "oniguruma"
        if known and self.kind < 0:
            self.kind = split_program_kind(pattern["Regex"])
            self.engine = "program" if self.kind >= 0 else "oniguruma"
        # patterns the scanner knows never reach Oniguruma (it is only needed for the others)
        self.pattern = (RegexSpans(pattern["Regex"]) if self.engine == "scanner"
                        else compile_split_pattern("pre-tokenizer Split", pattern))
        self.behavior, self.invert = behavior, invert

    def pre_tokenize(self, pieces: list) -> list:
        if self.kind >= 0:
            return [p for t in pieces for p in split_isolated(t, self.pattern, self.kind)]
        return [p for t in pieces for p in split_by(t, self.pattern, self.behavior, self.invert)]


class ByteLevel:
    """Optional prefix space, GPT-2 regex split (use_regex), then each byte as one character
    of the byte-level alphabet (every byte keeps the span of its character)."""
    _regex = BYTELEVEL_REGEX

    def __init__(self, add_prefix_space: bool, use_regex: bool, trim_offsets: bool):
        self.add_prefix_space, self.use_regex, self.trim_offsets = add_prefix_space, use_regex, trim_offsets
        self.kind = scanner_kind(BYTELEVEL_PATTERN) if use_regex else -1

    def split(self, pieces: list) -> list:
        """The pieces before the byte mapping (original characters)."""
        out = []
        for t in pieces:
            if self.add_prefix_space and not t.text.startswith(" "):
                t = t.prepend(" ")
            out.extend(split_isolated(t, self._regex, self.kind) if self.use_regex else [t])
        return out

    def pre_tokenize(self, pieces: list) -> list:
        return [t.map_chars(char_to_bytelevel) for t in self.split(pieces)]


class Digits:
    _digit = RegexSpans(r"\p{N}")

    def __init__(self, individual_digits: bool):
        self.individual_digits = individual_digits

    def pre_tokenize(self, pieces: list) -> list:
        behavior = "Isolated" if self.individual_digits else "Contiguous"
        return [p for t in pieces for p in split_by(t, self._digit, behavior)]


class Metaspace:
    def __init__(self, replacement: str, prepend_scheme: str, split: bool):
        if len(replacement) != 1:
            raise ValueError(f"tokenizer.json: Metaspace replacement must be one character, got {replacement!r}")
        if prepend_scheme not in ("always", "first", "never"):
            raise ValueError(f"tokenizer.json: Metaspace has an unknown prepend_scheme {prepend_scheme!r}")
        self.replacement, self.prepend_scheme, self.split = replacement, prepend_scheme, split
        self._delimiter = RegexSpans(regex.escape(replacement))

    def pre_tokenize(self, pieces: list) -> list:
        out = []
        for t in pieces:
            t = t.map_chars(lambda c: self.replacement if c == " " else c)
            if not t.text.startswith(self.replacement) and (
                    self.prepend_scheme == "always"
                    or (self.prepend_scheme == "first" and t.original_start() == 0)):
                t = t.prepend(self.replacement)
            out.extend(split_by(t, self._delimiter, "MergedWithNext") if self.split else [t] if t.text else [])
        return out


class Whitespace:
    WORDS = r"\w+|[^\w\s]+"   # the words (the rest, white space, is dropped)
    _words = RegexSpans(WORDS)

    def pre_tokenize(self, pieces: list) -> list:
        return [p for t in pieces for p in split_by(t, self._words, "Removed", invert=True)]


class WhitespaceSplit:
    _space = RegexSpans(r"\s+")

    def pre_tokenize(self, pieces: list) -> list:
        return [p for t in pieces for p in split_by(t, self._space, "Removed")]


class Sequence:
    def __init__(self, steps: list):
        self.steps = steps

    def pre_tokenize(self, pieces: list) -> list:
        for step in self.steps:
            pieces = step.pre_tokenize(pieces)
        return pieces


def pre_tokenize_str(self, sequence: str) -> list[tuple[str, tuple[int, int]]]:
    """HF's `pre_tokenize_str` (tokenizers.pre_tokenizers.*): each piece of sequence with its
    character offsets in sequence."""
    if not isinstance(sequence, str):
        raise TypeError(f"pre_tokenize_str takes a str, not {type(sequence).__name__}")
    if not sequence:
        return []
    return [(p.text, p.offsets(0, len(p.text)))
            for p in self.pre_tokenize([NormalizedText.from_original(sequence)]) if p.text]


# HF's component API on every pre-tokenizer class of this module (each has `pre_tokenize`)
for _stage in [v for v in list(globals().values()) if isinstance(v, type) and hasattr(v, "pre_tokenize")]:
    _stage.pre_tokenize_str = pre_tokenize_str


def from_json(node, path: str = "pre_tokenizer"):
    """The pre-tokenizer of a tokenizer.json node (None for none)."""
    if node is None:
        return None
    kind = node_type("pre-tokenizer", node)
    flag = lambda key, default: json_field(node, key, json_bool, path, default)  # noqa: E731
    if kind == "Split":
        return Split(node.get("pattern"), json_field(node, "behavior", json_str, path, "Isolated"),
                     flag("invert", False))
    if kind == "ByteLevel":
        return ByteLevel(flag("add_prefix_space", True), flag("use_regex", True), flag("trim_offsets", True))
    if kind == "Digits":
        return Digits(flag("individual_digits", False))
    if kind == "Metaspace":
        scheme = json_field(node, "prepend_scheme", json_str, path)
        if scheme is None:  # files written before prepend_scheme existed
            scheme = "always" if flag("add_prefix_space", True) else "never"
        return Metaspace(json_field(node, "replacement", json_str, path, "\u2581"), scheme, flag("split", True))
    if kind == "Whitespace":
        return Whitespace()
    if kind == "WhitespaceSplit":
        return WhitespaceSplit()
    if kind == "Sequence":
        steps = json_field(node, "pretokenizers", json_list, path, [])
        return Sequence([from_json(n, f"{path}.pretokenizers[{k}]") for k, n in enumerate(steps)])
    raise unsupported("pre-tokenizer", node)


def steps_of(pre_tokenizer) -> list:
    if pre_tokenizer is None:
        return []
    if isinstance(pre_tokenizer, Sequence):
        return [s for step in pre_tokenizer.steps for s in steps_of(step)]
    return [pre_tokenizer]
