"""Pre-tokenizers (HF `pre_tokenizers.*`): Split (every behavior, invert), ByteLevel, Digits,
Punctuation, Metaspace, Whitespace, WhitespaceSplit, CharDelimiterSplit, FixedLength, Sequence,
UnicodeScripts (unicode_scripts.py); BertPreTokenizer is WhitespaceSplit then Punctuation.  Each
maps a list of `NormalizedText` pieces to a new list; empty pieces are dropped, as HF does.

Each also lowers itself (`lower`) to the levels of a scanner chain (`plan.Level`), or raises
`plan.NotLowered` saying why; `lower_steps` composes a Sequence's, so the kernel cuts a file's
whole pre-tokenizer in one pass (HF's own Sequence semantics: each step cuts the pieces of the
step before).  A step after ByteLevel reads the byte-level alphabet, one byte a character."""
from __future__ import annotations

import os
import zlib
from functools import lru_cache

# `regex` and pattern_program are imported where used: a file whose split the C scanner knows
# loads without them (importing regex alone is ~60M instructions)
from .. import _pretokenize, patterns
from ..plan import Level, NotLowered
from ..pretokenize import builtin_chain_kind, chain_kind, clip_kind, scanner_kind
from ..formats.bytelevel import BYTELEVEL_PATTERN
from ._nodes import json_bool, json_field, json_list, json_str, node_type, unsupported
from .normalized import NormalizedText
from . import normalizers
from .normalizers import char_to_bytelevel
from . import oniguruma
from .oniguruma import OnigPattern, compile_split_pattern, onig_text
from .punctuation_ranges import RANGES as PUNCTUATION_RANGES
from .split_behavior import BEHAVIORS, INVERTED, isolating as _isolating, never_adjacent, split_by

class RegexSpans:
    """A Python `regex` pattern as a matcher (`spans(text)`): for the fixed patterns HF runs
    on Rust's regex crate (Whitespace, digits, Metaspace's delimiter), which agree with it."""

    def __init__(self, pattern: str):
        self.source = pattern
        self._compiled = None     # compiled on first use: the kernel paths never ask

    @property
    def pattern(self):
        if self._compiled is None:
            import regex

            self._compiled = regex.compile(self.source)
        return self._compiled

    def spans(self, text: str) -> list:
        return [m.span() for m in self.pattern.finditer(text)]


def _escape(text: str) -> str:
    """regex.escape(text), character for character, without importing `regex` (~60M
    instructions of a fresh process: a Metaspace file's load needs no regex): `re` escapes
    the same specials, `regex` every whitespace character too."""
    import re

    return "".join("\\" + c if c.isspace() else re.escape(c) for c in text)


BYTELEVEL_REGEX = RegexSpans(BYTELEVEL_PATTERN)  # ByteLevel's split (use_regex)


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
    Oniguruma's Unicode version.  Asking Oniguruma takes ~0.2 s an atom (it matches every code
    point), so answers are kept on disk per Oniguruma version (`_members_cache_path`): a file's
    first load on a machine asks, later loads read ~140 KB."""
    import numpy as np

    from .. import pattern_program
    literal = pattern_program.literal_bits(atom)
    if literal is not None:
        return literal
    path = _members_cache_path(atom)
    if path is not None:    # the bits, then their crc32: a flipped bit is asked again, never compiled
        try:
            with open(path, "rb") as f:
                data = f.read()
            if len(data) == 0x110000 // 8 + 4 and zlib.crc32(data[:-4]).to_bytes(4, "little") == data[-4:]:
                return np.frombuffer(data[:-4], dtype=np.uint8).copy()
        except OSError:
            pass
    bits = _ask_oniguruma(atom)
    if path is not None:    # (a read-only or full cache: asked again next time)
        from ..program_cache import store
        raw = bits.tobytes()
        store(path, raw + zlib.crc32(raw).to_bytes(4, "little"))
    return bits


def _members_cache_path(atom: str) -> str | None:
    """Where Oniguruma's answer for `atom` is kept: program_cache's folder (None: no cache),
    under the Oniguruma version."""
    from ..program_cache import cache_root
    root = cache_root()
    onig = oniguruma.module()
    if not root or onig is None:
        return None
    import hashlib
    version = getattr(onig, "__onig_version__", "unknown")
    digest = hashlib.sha256(atom.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return os.path.join(root, f"oniguruma-{version}", f"{digest}.bits")


def _ask_oniguruma(atom: str):
    import numpy as np

    from .. import pattern_program
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


# Oniguruma folds case fully: in `(?i:...)` a literal may match a character whose folding is
# two letters (U+00DF "ß" for "ss", U+FB01 "ﬁ" for "fi"); one-character atoms alone cannot say
# that, so a case-insensitive group compiles only when it holds no such pair
_MULTI_CHAR_FOLDS = ("ss", "st", "ff", "fi", "fl")
_CI_GROUP = r"\(\?i:([^()]*)\)"


def _onig_case_ok(pattern: str) -> bool:
    """Whether every `(?i:...)` group of pattern has alternatives of ASCII letters and
    apostrophes with no pair of letters that a single character folds to, or of one class of
    ASCII letters (tiktoken's cl100k spelling `'(?i:[sdmt]|ll|ve|re)`, LLaDA's and Ling's files:
    a class is one character, never beside a letter of the group): then each atom's members,
    asked of Oniguruma, say exactly what the group matches ("s" is s, S and U+017F)."""
    import regex

    for m in regex.finditer(_CI_GROUP, pattern):
        for alt in m.group(1).split("|"):
            if regex.fullmatch(r"\[[A-Za-z]+\]", alt):
                continue
            if not regex.fullmatch(r"[A-Za-z']*", alt) or any(pair in alt.lower() for pair in _MULTI_CHAR_FOLDS):
                return False
    return "(?i:" not in regex.sub(_CI_GROUP, "", pattern)


@lru_cache(maxsize=256)
def oniguruma_program(pattern: str, byte_level: bool = False):
    """`pattern` compiled with Oniguruma's character classes (HF's reading), or None when it
    has a construct Oniguruma reads otherwise than the scanner program would; kept on disk
    (`program_cache`) for the next process."""
    if not oniguruma.available():
        return None
    from .. import program_cache
    return program_cache.compiled(("oniguruma", pattern, byte_level), lambda: _oniguruma_program(pattern, byte_level))


def _oniguruma_program(pattern: str, byte_level: bool):
    from .. import pattern_program
    members = pattern_program.byte_level_members(_oniguruma_members) if byte_level else _oniguruma_members
    try:
        prog = pattern_program.compile_pattern(pattern, members=members)
    except (pattern_program.Unsupported, pattern_program.InvalidPattern):
        return None   # outside the subset, or Oniguruma-only syntax: Oniguruma splits (any other error is a bug)
    differs = prog.features & _ONIGURUMA_DIFFERS
    if differs - {"(?i:"} or ("(?i:" in differs and not _onig_case_ok(pattern)):
        return None
    return prog


normalizers.regex_program = oniguruma_program   # Replace's regex, read as Split's


@lru_cache(maxsize=256)
def split_program_kind(pattern: str) -> int:
    """A scanner program for a Split(Isolated) regex, with Oniguruma's character classes, when
    the pattern has no construct Oniguruma reads otherwise than the program; else -1."""
    pattern = onig_text(pattern)
    if oniguruma_program(pattern) is None:
        return -1
    return chain_kind([_onig_level(pattern, False)])[0]


_REGEX_SPECIAL = set("\\^$.|?*+()[]{}#-& \t\n\r\f\v")


def _regex_of(node) -> str:
    """A Split/Replace pattern node as regex text (a String pattern matches itself)."""
    if isinstance(node, dict) and isinstance(node.get("Regex"), str):
        return node["Regex"]
    if isinstance(node, dict) and isinstance(node.get("String"), str):
        return "".join(f"\\u{ord(c):04x}" if c in _REGEX_SPECIAL else c for c in node["String"])
    raise NotLowered(f"Split pattern {node!r}")


_REGEX_SYNTAX = set("\\^$.|?*+()[]{}")


def literal_of(node) -> str | None:
    """The text a Split pattern node matches, and only it: a String, or a non-empty Regex with
    no character Oniguruma reads as syntax (sarvam's Split(Regex " ") as Gemma's String " ")."""
    if isinstance(node, dict) and isinstance(node.get("String"), str):
        return node["String"]
    regex = node.get("Regex") if isinstance(node, dict) else None
    return regex if isinstance(regex, str) and regex and not _REGEX_SYNTAX.intersection(regex) else None


class Split:
    def __init__(self, pattern, behavior: str, invert: bool):
        if behavior not in BEHAVIORS:
            raise ValueError(f"tokenizer.json: pre-tokenizer Split has an unknown behavior {behavior!r}")
        self.pattern_node = pattern
        known = isinstance(pattern, dict) and "Regex" in pattern and behavior == "Isolated" and not invert
        self._kind = scanner_kind(pattern["Regex"]) if known else -1
        # else a scanner program when it cuts as Oniguruma does, compiled when this step runs by
        # itself (`kind`), not at load: the plan may not need it (DeepSeek-V3's Splits: one kind)
        self._engine = "scanner" if self._kind >= 0 else None if known else "oniguruma"
        # patterns the scanner knows never reach Oniguruma (it is only needed for the others)
        self.pattern = (RegexSpans(pattern["Regex"]) if self._engine == "scanner"
                        else compile_split_pattern("pre-tokenizer Split", pattern))
        self.behavior, self.invert = behavior, invert

    @property
    def kind(self) -> int:
        """The scanner kind this step cuts with by itself (built-in or program), or -1."""
        if self._engine is None:
            self._kind = split_program_kind(self.pattern_node["Regex"])
            self._engine = "program" if self._kind >= 0 else "oniguruma"
        return self._kind

    @property
    def engine(self) -> str:   # "scanner" (built-in kind), "program" or "oniguruma"
        return "oniguruma" if self.kind < 0 else self._engine

    def pre_tokenize(self, pieces: list) -> list:
        if self.kind >= 0:
            return [p for t in pieces for p in split_isolated(t, self.pattern, self.kind)]
        return [p for t in pieces for p in split_by(t, self.pattern, self.behavior, self.invert)]

    def lower(self, byte_level: bool) -> list:
        """One level.  invert swaps which tiles are matches, which changes nothing for Isolated;
        Removed with invert drops the text between matches, which is none when the pattern's
        matches tile every text (o200k's and Llama-3's do: MiniMax, OLMo-2)."""
        raw = _regex_of(self.pattern_node)
        if not byte_level and (self.behavior == "Isolated" or (self.behavior == "Removed" and self.invert)):
            # a built-in pattern's matches tile every text (the scanner cuts findall's pieces),
            # so Removed with invert removes nothing: MiniMax's o200k, OLMo-2's Llama-3.  Asked
            # of the file's own text: a built-in kind is proven against Oniguruma's reading of
            # it (cl100k's `\s++$` included), which onig_text would respell
            kind = scanner_kind(raw)
            if kind >= 0:
                return [Level(raw, "oniguruma", builtin=kind)]
        pattern = onig_text(raw)
        prog = oniguruma_program(pattern, byte_level)
        if prog is None:
            raise NotLowered(f"Split regex {pattern!r} (outside the compiled subset, or read otherwise by Oniguruma)")
        behavior = self.behavior
        if behavior == "Removed" and self.invert and prog.total:
            behavior = "Isolated"
        elif behavior == "Removed":   # the matches (invert: the text between them) are removed
            return [_onig_level(pattern, byte_level, "gaps" if self.invert else "matches")]
        elif self.invert:    # Isolated and Contiguous cut the same inverted
            behavior = INVERTED.get(behavior, behavior)
        alt_start, alt_end, _ = prog.alt_arrays     # the root's alternatives (a cached program has no tree)
        branches = int(alt_end[prog.root]) - int(alt_start[prog.root])
        adjacent = behavior != "Contiguous" or not never_adjacent(prog)
        return [_onig_level(_isolating(pattern, behavior, prog.run, branches, adjacent), byte_level)]


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

    def lower(self, byte_level: bool) -> list:
        """GPT-2's split (use_regex) as a level; the byte mapping is the byte-level model's."""
        if byte_level:
            raise NotLowered("a second ByteLevel pre-tokenizer")
        if self.add_prefix_space:
            raise NotLowered("ByteLevel add_prefix_space after a step that cuts, or with an added token matched "
                             "in normalized text (hf/lowering.prefix_space)")
        return [Level(BYTELEVEL_PATTERN, "oniguruma", builtin=self.kind)] if self.use_regex else []


class Digits:
    _digit = RegexSpans(r"\p{N}")

    def __init__(self, individual_digits: bool):
        self.individual_digits = individual_digits

    def pre_tokenize(self, pieces: list) -> list:
        behavior = "Isolated" if self.individual_digits else "Contiguous"
        return [p for t in pieces for p in split_by(t, self._digit, behavior)]

    def lower(self, byte_level: bool) -> list:
        # Contiguous over one-character matches: runs of digits, and runs of the rest
        return [Level(r"\p{N}" if self.individual_digits else r"\p{N}+", "regex", byte_level)]


@lru_cache(maxsize=1)
def _punctuation_table() -> dict:
    import numpy as np
    inside = np.zeros(0x110000, dtype=bool)
    for a, b in PUNCTUATION_RANGES:
        inside[a:b + 1] = True
    return {PUNCTUATION_ATOM: np.packbits(inside, bitorder="little"),
            NOT_PUNCTUATION_ATOM: np.packbits(~inside, bitorder="little")}


def _punctuation_members(atom: str):
    """members for the atoms `\\p{P}` (HF's punctuation) and its complement (the table is
    built when a program is compiled, not when a file's steps are lowered)."""
    from .. import pattern_program
    table = _punctuation_table()
    while atom not in table and atom.startswith("(?:") and atom.endswith(")"):
        atom = atom[3:-1]   # a group around one atom: (?:\p{P})
    return table[atom] if atom in table else pattern_program.membership_bits(atom)


# HF's punctuation as a regex class (the Python pipeline's matcher), and as a program's atom
PUNCTUATION_CLASS = "[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in PUNCTUATION_RANGES) + "]"
PUNCTUATION_ATOM = r"\p{P}"
NOT_PUNCTUATION_ATOM = r"(?:(?!\p{P})[\s\S])"


class Punctuation:
    """Splits at HF's punctuation (Rust's ASCII punctuation, or categories Pc, Pd, Pe, Pf, Pi,
    Po, Ps as of HF's Unicode tables: punctuation_ranges.py), with a Split behavior."""
    _punct = RegexSpans(PUNCTUATION_CLASS)

    def __init__(self, behavior: str):
        if behavior not in BEHAVIORS:
            raise ValueError(f"tokenizer.json: pre-tokenizer Punctuation has an unknown behavior {behavior!r}")
        self.behavior = behavior

    def pre_tokenize(self, pieces: list) -> list:
        return [p for t in pieces for p in split_by(t, self._punct, self.behavior)]

    def lower(self, byte_level: bool) -> list:
        members = _punctuation_members
        if self.behavior == "Removed":
            return [Level(PUNCTUATION_ATOM, "hf-punctuation", byte_level, members=members, drop="matches")]
        pattern = _isolating(PUNCTUATION_ATOM, self.behavior, (0, 1))
        return [Level(pattern, "hf-punctuation", byte_level, members=members)]


class Metaspace:
    def __init__(self, replacement: str, prepend_scheme: str, split: bool):
        if len(replacement) != 1:
            raise ValueError(f"tokenizer.json: Metaspace replacement must be one character, got {replacement!r}")
        if prepend_scheme not in ("always", "first", "never"):
            raise ValueError(f"tokenizer.json: Metaspace has an unknown prepend_scheme {prepend_scheme!r}")
        self.replacement, self.prepend_scheme, self.split = replacement, prepend_scheme, split
        self._delimiter = RegexSpans(_escape(replacement))

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

    def lower(self, byte_level: bool) -> list:
        raise NotLowered("Metaspace (it changes the text)")

    def lower_char_level(self, meta: str) -> tuple[int, int]:
        """Its kernel form before a char-level model (SentencePiece's text form, which the
        model's kernel makes): CharBPE's kind flags at a text's start and after an added
        token; NotLowered when its replacement is not the model's meta character."""
        if self.replacement != meta:
            raise NotLowered(f"Metaspace's replacement {self.replacement!r} is not the model's {meta!r}")
        from .._char_bpe import PREPEND_UNLESS_META, REPLACE_SPACE, SPLIT   # (char-level files only)
        flags = REPLACE_SPACE | (SPLIT if self.split else 0)
        if self.prepend_scheme == "always":
            return flags | PREPEND_UNLESS_META, flags | PREPEND_UNLESS_META
        if self.prepend_scheme == "first":
            return flags | PREPEND_UNLESS_META, flags
        return flags, flags


class Whitespace:
    WORDS = r"\w+|[^\w\s]+"   # the words (the rest, white space, is dropped)
    _words = RegexSpans(WORDS)

    def pre_tokenize(self, pieces: list) -> list:
        return [p for t in pieces for p in split_by(t, self._words, "Removed", invert=True)]

    def lower(self, byte_level: bool) -> list:
        return [Level(self.WORDS, "regex", byte_level, drop="gaps")]


class WhitespaceSplit:
    _space = RegexSpans(r"\s+")

    def pre_tokenize(self, pieces: list) -> list:
        return [p for t in pieces for p in split_by(t, self._space, "Removed")]

    def lower(self, byte_level: bool) -> list:
        return [Level(r"\s+", "regex", byte_level, drop="matches")]


class CharDelimiterSplit:
    """Splits at one character, which is removed (HF's split with Removed)."""

    def __init__(self, delimiter: str):
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise ValueError(f"tokenizer.json: CharDelimiterSplit delimiter must be one character, got {delimiter!r}")
        self.delimiter = delimiter
        self._delimiter = RegexSpans(_escape(delimiter))

    def pre_tokenize(self, pieces: list) -> list:
        return [p for t in pieces for p in split_by(t, self._delimiter, "Removed")]

    def lower(self, byte_level: bool) -> list:
        return [Level(_escape(self.delimiter), "regex", byte_level, drop="matches")]


class FixedLength:
    """Chunks of `length` characters (bytes, after ByteLevel), the last one shorter."""

    def __init__(self, length: int):
        if not isinstance(length, int) or isinstance(length, bool) or length < 1:
            raise ValueError(f"tokenizer.json: FixedLength length must be a positive integer, got {length!r}")
        self.length, self._chunk = length, RegexSpans(f"[\\s\\S]{{1,{length}}}")

    def pre_tokenize(self, pieces: list) -> list:
        return [p for t in pieces for p in split_by(t, self._chunk, "Isolated")]

    def lower(self, byte_level: bool) -> list:
        return [Level(self._chunk.source, "regex", byte_level)]


class Sequence:
    def __init__(self, steps: list):
        self.steps = steps

    def pre_tokenize(self, pieces: list) -> list:
        for step in self.steps:
            pieces = step.pre_tokenize(pieces)
        return pieces


def _onig_level(pattern: str, byte_level: bool, drop: str | None = None) -> Level:
    return Level(pattern, "oniguruma", byte_level, members=_oniguruma_members, drop=drop)


def lower_steps(steps: list) -> tuple[list, bool]:
    """The levels of a pre-tokenizer's steps (Sequence flattened: steps_of), and whether the
    text ends in the byte-level alphabet (a ByteLevel step ran); NotLowered names the step
    that has no kernel form."""
    if _is_clips(steps) and clip_kind() >= 0:     # CLIP's Split and ByteLevel: one built-in kind
        return [Level(steps[0].pattern_node["Regex"] + " \u2192 ByteLevel", "oniguruma", builtin=clip_kind(),
                      drop="gaps")], True
    levels, byte_level, k = [], False, 0
    while k < len(steps):
        kind, taken = (-1, 0) if byte_level else _builtin_chain(steps, k)
        if kind >= 0:      # Splits one built-in kind cuts as a whole (DeepSeek-V3's three)
            pats = tuple(s.pattern_node["Regex"] for s in steps[k:k + taken])
            levels.append(Level(" \u2192 ".join(pats), "oniguruma", builtin=kind))
            k += taken
            continue
        levels += steps[k].lower(byte_level)
        byte_level = byte_level or isinstance(steps[k], ByteLevel)
        k += 1
    return levels, byte_level


def _is_clips(steps: list) -> bool:
    """CLIP's pre-tokenizer: Split(CLIP_PATTERN, Removed, invert), ByteLevel with its regex, no prefix space."""
    return (len(steps) == 2 and isinstance(steps[0], Split) and isinstance(steps[1], ByteLevel)
            and steps[0].pattern_node == {"Regex": patterns.CLIP_PATTERN} and steps[0].behavior == "Removed"
            and steps[0].invert and steps[1].use_regex and not steps[1].add_prefix_space)


def _builtin_chain(steps: list, k: int) -> tuple[int, int]:
    """(kind, how many steps) when steps[k:] begin with Isolated Splits (invert changes nothing then)
    that one built-in scanner kind cuts as a whole, else (-1, 0)."""
    pats = []
    for s in steps[k:]:
        if not (isinstance(s, Split) and s.behavior == "Isolated" and isinstance(s.pattern_node, dict)
                and isinstance(s.pattern_node.get("Regex"), str)):
            break
        pats.append(s.pattern_node["Regex"])
    found = ((builtin_chain_kind(tuple(pats[:m])), m) for m in range(len(pats), 1, -1))
    return next((got for got in found if got[0] >= 0), (-1, 0))


def ends_in_bytes(steps: list) -> bool:
    """Whether the model reads byte-level text only: a ByteLevel step ran, and no step after it
    puts in a character outside the byte-level alphabet (Metaspace's replacement).  Else the
    model reads its pieces as characters, each a vocabulary token, as HF's BPE always does."""
    after = next((k for k, s in enumerate(steps) if isinstance(s, ByteLevel)), None)
    return after is not None and not any(isinstance(s, Metaspace) for s in steps[after:])


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
    if kind == "Punctuation":
        return Punctuation(json_field(node, "behavior", json_str, path, "Isolated"))
    if kind == "Metaspace":
        scheme = json_field(node, "prepend_scheme", json_str, path)
        if scheme is None:  # files written before prepend_scheme existed
            scheme = "always" if flag("add_prefix_space", True) else "never"
        return Metaspace(json_field(node, "replacement", json_str, path, "\u2581"), scheme, flag("split", True))
    if kind == "Whitespace":
        return Whitespace()
    if kind == "WhitespaceSplit":
        return WhitespaceSplit()
    if kind == "CharDelimiterSplit":
        return CharDelimiterSplit(json_field(node, "delimiter", json_str, path))
    if kind == "BertPreTokenizer":   # HF's: white space removed, then punctuation isolated
        return Sequence([WhitespaceSplit(), Punctuation("Isolated")])
    if kind == "UnicodeScripts":
        return _unicode_scripts()()
    if kind == "FixedLength":
        return FixedLength(node.get("length", 5))
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


def _unicode_scripts() -> type:
    """The UnicodeScripts class (unicode_scripts.py), imported on first use: its tables cost a
    load ~6M instructions, and only its files need them; with the component API as the rest."""
    from .unicode_scripts import UnicodeScripts
    UnicodeScripts.pre_tokenize_str = pre_tokenize_str
    return UnicodeScripts


def __getattr__(name: str):
    if name == "UnicodeScripts":
        return _unicode_scripts()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
