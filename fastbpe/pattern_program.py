"""Compiling split patterns to scanner programs (run by the C matcher in `_scan_program`).

A pattern outside the C scanner's fixed set would go through the `regex` package at 2-15 MB/s.
`compile_pattern` turns the tokenizer-regex subset into a small program instead: alternation,
groups (`(?:...)`, capturing, atomic `(?>...)`, `(?i:...)`), greedy / lazy / possessive
quantifiers with `{m,n}`, one-character atoms (a literal, an escape, `.`, `\\p{..}`, `\\s`, `\\d`,
`\\w`, a `[...]` set), lookahead `(?=...)` / `(?!...)`, `$` and `\\Z`.  Anything else (lookbehind,
`^`, `\\b`, backreferences, global flags, a repeated group that can repeat without bound, a
pattern that can match the empty string) raises `Unsupported`, and the caller keeps `regex`.

Exact by construction where it matters: the characters of every one-character atom are asked
of `regex` itself (the atom's own text matched against every code point once), so classes,
negation, case folding and the Unicode version are `regex`'s.  The structure (leftmost-first
alternation, backtracking, possessive and atomic parts) is the matcher's, fuzzed against
`regex` in tests/test_pattern_program.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import regex

# item types, quantifier modes: the numbers _scan_program.pyx reads (kept in program_items)
from .program_items import GREEDY, LAZY, POSSESSIVE, T_CLASS, T_DOLLAR, T_END, T_GROUP, T_LOOK, T_NLOOK  # noqa: E402,F401
UNBOUNDED = 1 << 30
MAX_ITEMS = 256            # per program (the matcher's memo is sized by it)
MAX_GROUP_REPEAT = 64      # a group repeated more than this recurses too deep
N_BLOCKS = 0x110000 >> 8


class Unsupported(ValueError):
    """The pattern is outside the subset the program matcher runs (regex is used instead)."""


class InvalidPattern(ValueError):
    """The pattern is no regex `regex` reads (another engine's, such as HF's Oniguruma, may)."""


# ------------------------------------------------------------------------------------------
# The characters of one-character atoms, asked of regex
# ------------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _every_code_point() -> str:
    import numpy as np
    return np.arange(0x110000, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")


def literal_bits(text: str):
    """Packed bits of a plain ASCII literal atom (any engine reads it alike), else None."""
    import numpy as np
    if len(text) != 1 or ord(text) >= 128 or text == ".":
        return None
    bits = np.zeros(0x110000 // 8, dtype=np.uint8)
    bits[ord(text) >> 3] = 1 << (ord(text) & 7)
    return bits


@lru_cache(maxsize=512)
def _members(text: str):
    """Packed bits (numpy uint8, 0x110000 bits, little-endian in each byte) of the code points
    that the one-character atom `text` matches, by regex."""
    import numpy as np
    literal = literal_bits(text)
    if literal is not None:
        return literal
    inside = np.zeros(0x110000, dtype=bool)
    for m in regex.finditer(f"(?:{text})+", _every_code_point()):
        inside[m.start():m.end()] = True
    return np.packbits(inside, bitorder="little")


def _table(bits):
    """(ascii low word, ascii high word, block index uint16[4352], blocks uint8[32 k]): the
    bits in blocks of 256 code points, each distinct block stored once."""
    import numpy as np
    words = bits[:16].view("<u8")
    rows = np.ascontiguousarray(bits[:N_BLOCKS * 32]).reshape(N_BLOCKS, 32)
    # distinct blocks found by a hash of each block's four words, then checked whole
    q = rows.view("<u8")
    h = (q[:, 0] * np.uint64(0x9E3779B97F4A7C15) ^ q[:, 1] * np.uint64(0xC2B2AE3D27D4EB4F)
         ^ q[:, 2] * np.uint64(0x165667B19E3779F9) ^ q[:, 3] * np.uint64(0x27D4EB2F165667C5))
    _, first, index = np.unique(h, return_index=True, return_inverse=True)
    index = index.reshape(-1)
    if not (rows[first[index]] == rows).all():   # two blocks with one hash: the plain way
        seen: dict[bytes, int] = {}
        raw = rows.tobytes()
        index = np.array([seen.setdefault(raw[32 * b:32 * b + 32], len(seen)) for b in range(N_BLOCKS)])
        return (int(words[0]), int(words[1]), index.astype(np.uint16),
                np.frombuffer(b"".join(seen), dtype=np.uint8).copy())
    return int(words[0]), int(words[1]), index.astype(np.uint16), np.ascontiguousarray(rows[first]).reshape(-1)


@lru_cache(maxsize=512)
def _class_table(text: str):
    return _table(_members(text))


# ------------------------------------------------------------------------------------------
# Parsing
# ------------------------------------------------------------------------------------------

@dataclass
class Item:
    type: int
    arg: object = None          # class text (T_CLASS) or an Alt
    min: int = 1
    max: int = 1
    mode: int = GREEDY


@dataclass
class Alt:
    seqs: list = field(default_factory=list)   # each a list of Item


_SIMPLE_ESCAPES = set("sSdDwWnrtfvae\\.^$|?*+()[]{}-/'\"!#%&,:;<=>@_`~ ")
_UNSUPPORTED_ESCAPES = set("AbBGKXzQEL123456789gkhHRNmMyYV")


class _Parser:
    def __init__(self, pattern: str):
        self.p, self.i = pattern, 0
        self.features: set = set()   # what other regex dialects may read differently

    def fail(self, what: str):
        raise Unsupported(f"{what} at offset {self.i} of {self.p!r}")

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def alt(self, ci: bool) -> Alt:
        out = Alt([self.seq(ci)])
        while self.peek() == "|":
            self.i += 1
            out.seqs.append(self.seq(ci))
        return out

    def seq(self, ci: bool) -> list:
        items = []
        while self.peek() not in ("", "|", ")"):
            items.append(self.quantified(ci))
        return items

    def quantified(self, ci: bool) -> Item:
        item = self.atom(ci)
        c = self.peek()
        if c not in ("?", "*", "+", "{"):
            return item
        if c == "{":
            lo, hi = self.braces()
        else:
            self.i += 1
            lo, hi = {"?": (0, 1), "*": (0, UNBOUNDED), "+": (1, UNBOUNDED)}[c]
        if item.type not in (T_CLASS, T_GROUP):
            self.fail("a quantified assertion")
        mode = GREEDY
        if self.peek() in ("?", "+"):
            mode = LAZY if self.peek() == "?" else POSSESSIVE
            if c == "{" and mode == POSSESSIVE:
                self.features.add("{m,n}+")
            self.i += 1
        if self.peek() in ("?", "*", "+", "{"):
            self.fail("a repeated quantifier")
        if item.min != 1 or item.max != 1:
            self.fail("a quantifier on a quantified atom")
        item.min, item.max, item.mode = lo, hi, mode
        return item

    def braces(self):
        m = regex.compile(r"\{(\d*)(,?)(\d*)\}").match(self.p, self.i)
        if m is None or (not m.group(1) and not m.group(3)):
            self.fail("a literal '{'")
        self.i = m.end()
        lo = int(m.group(1) or 0)
        hi = int(m.group(3)) if m.group(3) else (UNBOUNDED if m.group(2) else lo)
        if hi < lo:
            self.fail("a bad {m,n}")
        return lo, hi

    def atom(self, ci: bool) -> Item:
        c = self.peek()
        if c == "(":
            return self.group(ci)
        if c == "[":
            return self.char_class(self.set_end(), ci)
        if c == ".":
            return self.char_class(self.i + 1, ci)
        if c == "$":
            self.i += 1
            self.features.add("$")
            return Item(T_DOLLAR)
        if c == "\\":
            return self.escape(ci)
        if c in "^)*+?{":
            self.fail(f"{c!r}")
        return self.char_class(self.i + 1, ci)

    def char_class(self, end: int, ci: bool) -> Item:
        text = self.p[self.i:end]
        self.i = end
        if ci:
            self.features.add("(?i:")
        return Item(T_CLASS, f"(?i:{text})" if ci else text)

    def set_end(self) -> int:
        j = self.i + 1
        if self.p[j:j + 1] == "^":
            j += 1
        if self.p[j:j + 1] == "]":
            j += 1
        while j < len(self.p):
            c = self.p[j]
            if c == "\\":
                j += 2
            elif c == "[":
                self.fail("a nested set")
            elif c == "]":
                return j + 1
            else:
                j += 1
        self.fail("an unterminated set")

    def escape(self, ci: bool) -> Item:
        nxt = self.peek(1)
        if nxt == "Z":
            self.i += 2
            self.features.add("\\Z")
            return Item(T_END)
        if nxt in ("p", "P"):
            if self.peek(2) == "{":
                end = self.p.find("}", self.i)
                if end < 0:
                    self.fail("an unterminated \\p{")
                return self.char_class(end + 1, ci)
            return self.char_class(self.i + 3, ci)
        if nxt == "x":
            return self.char_class(self.i + 4, ci)
        if nxt in ("u", "U"):
            return self.char_class(self.i + (6 if nxt == "u" else 10), ci)
        if nxt == "N" and self.peek(2) == "{":
            return self.char_class(self.p.find("}", self.i) + 1, ci)
        if nxt in _UNSUPPORTED_ESCAPES or nxt == "" or (nxt.isalnum() and nxt not in _SIMPLE_ESCAPES):
            self.fail(f"\\{nxt}")
        return self.char_class(self.i + 2, ci)

    def group(self, ci: bool) -> Item:
        p = self.p
        kind, start = T_GROUP, self.i + 1
        mode = GREEDY
        if p.startswith("(?:", self.i):
            start = self.i + 3
        elif p.startswith("(?i:", self.i):
            start, ci = self.i + 4, True
        elif p.startswith("(?>", self.i):
            start, mode = self.i + 3, POSSESSIVE
        elif p.startswith("(?=", self.i) or p.startswith("(?!", self.i):
            start, kind = self.i + 3, (T_LOOK if p[self.i + 2] == "=" else T_NLOOK)
        elif p.startswith("(?P<", self.i) or (p.startswith("(?<", self.i) and p[self.i + 3:self.i + 4] not in "=!"):
            close = p.find(">", self.i)
            start = close + 1
        elif p.startswith("(?", self.i):
            self.fail("this group kind")
        self.i = start
        body = self.alt(ci)
        if self.peek() != ")":
            self.fail("an unbalanced group")
        self.i += 1
        one = _one_char(body, p[start:self.i - 1], ci)
        if one is not None and kind == T_GROUP:
            return Item(T_CLASS, one)
        return Item(kind, body, mode=mode)


def _one_char(body: Alt, text: str, ci: bool):
    """The text of a group that always matches exactly one character (alternatives of a
    class, each after lookaheads of classes): then it is a class itself, as regex reads it."""
    for seq in body.seqs:
        if not seq or seq[-1].type != T_CLASS or (seq[-1].min, seq[-1].max) != (1, 1):
            return None
        for look in seq[:-1]:
            if look.type not in (T_LOOK, T_NLOOK) or _one_char(look.arg, "", ci) is None:
                return None
    return f"(?i:(?:{text}))" if ci else f"(?:{text})"


def parse(pattern: str, features: set | None = None) -> Alt:
    """The pattern's tree; `features` (if given) gets the constructs other dialects may read
    differently: "$", "\\Z", "(?i:", "{m,n}+"."""
    try:
        regex.compile(pattern)
    except regex.error as e:
        raise InvalidPattern(f"invalid split pattern {pattern!r}: {e}") from None
    parser = _Parser(pattern)
    root = parser.alt(False)
    if parser.i != len(pattern):
        parser.fail("an unbalanced ')'")
    if features is not None:
        features |= parser.features
    return root


# ------------------------------------------------------------------------------------------
# Analysis: what the matcher needs to know in advance
# ------------------------------------------------------------------------------------------

def _min_len(items: list) -> int:
    n = 0
    for it in items:
        if it.type == T_CLASS:
            n += it.min
        elif it.type == T_GROUP:
            n += it.min * min(_min_len(s) for s in it.arg.seqs)
    return n


def _check_limits(alt: Alt) -> None:
    for seq in alt.seqs:
        for it in seq:
            if it.type in (T_GROUP, T_LOOK, T_NLOOK):
                if it.type == T_GROUP and it.max > MAX_GROUP_REPEAT:
                    raise Unsupported(f"a group repeated without bound or over {MAX_GROUP_REPEAT} times")
                _check_limits(it.arg)


def _first(items: list, members):
    """Packed bits of the characters that can start a non-empty match of items, or None when
    any can (or the items can match empty)."""
    out = None
    for it in items:
        if it.type in (T_LOOK, T_NLOOK):
            continue
        if it.type in (T_DOLLAR, T_END):
            return None
        if it.type == T_CLASS:
            bits = members(it.arg)
        else:
            parts = [_first(s, members) for s in it.arg.seqs]
            if any(p is None for p in parts):
                return None
            bits = _union(parts)
        out = bits if out is None else out | bits
        nullable = it.min == 0 or (it.type == T_GROUP and _min_len_alt(it.arg) == 0)
        if not nullable:
            return out
    return None


def _min_len_alt(alt: Alt) -> int:
    return min(_min_len(s) for s in alt.seqs)


def _union(parts: list):
    out = parts[0].copy()
    for p in parts[1:]:
        out |= p
    return out


def _always_matches(items: list) -> bool:
    return all(it.type in (T_CLASS, T_GROUP) and it.min == 0 for it in items)


def _sure(items: list, members):
    """Packed bits of characters c such that items surely match non-empty text starting
    with c (whatever follows it); None for none known."""
    if not items:
        return None
    it, rest = items[0], items[1:]
    if it.type in (T_CLASS, T_GROUP) and it.min == 0:
        tail = _sure(rest, members)
        if tail is None or it.mode != POSSESSIVE:
            return tail
        if it.type != T_CLASS:
            return None
        return tail & ~members(it.arg)    # a possessive atom that takes c never gives it back
    if it.type == T_CLASS and it.min == 1 and _always_matches(rest):
        return members(it.arg)
    return None


def is_total(root: Alt, members=None) -> bool:
    """Whether the pattern matches non-empty text at every position of every text: then
    its matches tile the text, and findall (which drops the gaps) equals the gap-keeping cut."""
    if _min_len_alt(root) == 0:
        return False
    sure = [_sure(s, members or _members) for s in root.seqs]
    sure = [s for s in sure if s is not None]
    if not sure:
        return False
    covered = _union(sure)
    covered[0xD800 >> 3:0xE000 >> 3] = 0xFF   # surrogates: no text the scanner reads has them
    return bool((covered == 0xFF).all())


# ------------------------------------------------------------------------------------------
# Emitting the program: flat arrays for the C matcher
# ------------------------------------------------------------------------------------------

class Program:
    """A compiled pattern: the arrays `_scan_program.register` takes (plain numpy data)."""

    def __init__(self, pattern: str, root: Alt, features: set = frozenset(), members=None):
        import numpy as np
        self.pattern = pattern
        self.tree = root                       # the parsed pattern (pattern_dfa reads it)
        self.features = frozenset(features)
        self.members = members or _members
        self.total = is_total(root, self.members)
        self._classes: dict[str, int] = {}
        self.tables: list = []                 # (ascii_lo, ascii_hi, index, blocks)
        self.items: list = []                  # [type, arg, min, max, mode]
        self.seq_start: list = []
        self.seq_end: list = []
        self.seq_first: list = []              # class id of a seq's first characters, -1 any
        self.alt_start: list = []
        self.alt_end: list = []
        self.alt_seqs: list = []
        self.root = self._alt(root)
        # (class, max) when the pattern is one class repeated 1..max times, greedy or
        # possessive: the matcher then cuts runs without backtracking machinery
        self.run = None
        only = root.seqs[0] if len(root.seqs) == 1 and len(root.seqs[0]) == 1 else None
        if only and only[0].type == T_CLASS and only[0].min == 1 and only[0].mode != LAZY:
            self.run = (self.items[self.seq_start[self.alt_seqs[self.alt_start[self.root]]]][1], only[0].max)
        if len(self.items) > MAX_ITEMS:
            raise Unsupported(f"{len(self.items)} items (the matcher takes {MAX_ITEMS})")
        first = _first_alt(root, self.members)
        self.root_first = -1 if first is None else self._class_bits("first", first)
        # the one-character atoms, as regex reads them (membership_bits gives their characters)
        self.atoms = [k for k in self._classes if not k.startswith("first")]
        as32 = lambda xs: np.asarray(xs, dtype=np.int32).reshape(-1)  # noqa: E731
        self.item_array = as32(self.items)
        self.seq_arrays = (as32(self.seq_start), as32(self.seq_end), as32(self.seq_first))
        self.alt_arrays = (as32(self.alt_start), as32(self.alt_end), as32(self.alt_seqs))

    def _class_bits(self, key: str, bits) -> int:
        self.tables.append(_table(bits))
        self._classes[key] = len(self.tables) - 1
        return len(self.tables) - 1

    def class_index(self, text: str) -> int:
        """The table (in `tables`) of the one-character atom `text` of this program."""
        return self._classes[text]

    def _class(self, text: str) -> int:
        got = self._classes.get(text)
        if got is None:
            self.tables.append(_class_table(text) if self.members is _members else _table(self.members(text)))
            got = self._classes[text] = len(self.tables) - 1
        return got

    def _alt(self, alt: Alt) -> int:
        seq_ids = [self._seq(s) for s in alt.seqs]
        self.alt_start.append(len(self.alt_seqs))
        self.alt_seqs.extend(seq_ids)
        self.alt_end.append(len(self.alt_seqs))
        return len(self.alt_start) - 1

    def _seq(self, items: list) -> int:
        rows = []
        for it in items:       # children first, so this seq's items are contiguous
            arg = 0
            if it.type == T_CLASS:
                arg = self._class(it.arg)
            elif it.type in (T_GROUP, T_LOOK, T_NLOOK):
                arg = self._alt(it.arg)
            rows.append([it.type, arg, it.min, it.max, it.mode])
        self.seq_start.append(len(self.items))
        self.items.extend(rows)
        self.seq_end.append(len(self.items))
        first = _first(items, self.members)
        self.seq_first.append(-1 if first is None else self._class_bits(f"first{len(self.seq_first)}", first))
        return len(self.seq_start) - 1


def _first_alt(alt: Alt, members):
    parts = [_first(s, members) for s in alt.seqs]
    return None if any(p is None for p in parts) else _union(parts)


def compile_pattern(pattern: str, members=None) -> Program:
    """The program of `pattern` (its text, as regex reads it).  Raises Unsupported outside the
    subset, and for patterns that can match the empty string; InvalidPattern when `regex` cannot
    read it.
    `members(atom)` (default: regex's) gives the packed bits of a one-character atom's
    characters, for a pattern of another engine with regex's structure (HF's Oniguruma)."""
    features: set = set()
    root = parse(pattern, features)
    _check_limits(root)
    if _min_len_alt(root) == 0:
        raise Unsupported(f"{pattern!r} can match the empty string")
    return Program(pattern, root, features, members)


def byte_level_members(members=None):
    """`members` for a pattern that reads text in GPT-2's byte alphabet (after HF's ByteLevel
    step), run over the raw bytes one byte a character: the atom's members are the bytes
    whose byte-level characters it matches (as code points 0-255)."""
    import numpy as np
    from .formats.bytelevel import BYTE_TO_CHAR
    base = members or _members
    chars = np.array([ord(BYTE_TO_CHAR[b]) for b in range(256)])

    def remap(atom: str):
        inside = np.unpackbits(base(atom), bitorder="little")
        out = np.zeros(0x110000, dtype=bool)
        out[:256] = inside[chars] != 0
        return np.packbits(out, bitorder="little")
    return remap


def membership_bits(atom: str):
    """Packed bits (numpy uint8, little-endian per byte) of the code points a one-character atom
    of a Program matches, by regex (for comparing with other engines)."""
    return _members(atom)
