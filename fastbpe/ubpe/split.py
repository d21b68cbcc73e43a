"""Splitting a document into parts before UBPE sees it (known words, break tokens, regex, stop tokens).

The order and rules are the reference's (`ubpe-native` 0.3.0 `SplitPipeline`): known words are
matched longest first, left to right, and the text between them goes through break tokens, then
the regex (`re.findall`, str parts only), then stop tokens.  With `leave_separators` the known words
and separator symbols stay as one-symbol parts (encoding); without, they are dropped (fitting).
"""
from __future__ import annotations

import functools
import re
from enum import Flag, auto

import numpy as np

from .._ubpe_text import WORD_REGEX, map_str_parts, split_words_map


class SplitMode(Flag):
    """Which splitting steps run (the reference's flags)."""

    NONE = auto()
    KNOWN_WORDS = auto()
    BREAK_TOKENS = auto()
    REGEX = auto()
    STOP_TOKENS = auto()
    FULL = KNOWN_WORDS | BREAK_TOKENS | REGEX | STOP_TOKENS


class Splitter:
    """Turns one document into (flat int32 ids, int64 part offsets) for the kernels."""

    def __init__(self, alphabet: dict, known_words: dict | None, break_tokens: set | None,
                 stop_tokens: set | None, regex_str: str | None):
        self.alphabet = alphabet
        self.known_words = known_words or None
        self.kw_lengths = sorted({len(k) for k in known_words}, reverse=True) if known_words else []
        self.break_tokens = break_tokens
        self.stop_tokens = stop_tokens
        self.regex = re.compile(regex_str) if regex_str else None
        # one-character str symbols map a whole str at once through a code point table
        self.char_table = None
        if alphabet and all(isinstance(k, str) and len(k) == 1 for k in alphabet):
            table = np.full(max(ord(k) for k in alphabet) + 1, -1, dtype=np.int32)
            for k, v in alphabet.items():
                table[ord(k)] = v
            self.char_table = table
        # the usual word regex alone on str documents: split and mapped in one C pass (exactly
        # re.findall's parts, tests/test_ubpe.py checks every code point); other regexes use `re`
        self.words_only = (regex_str == WORD_REGEX and self.char_table is not None and
                           not self.known_words and not break_tokens and not stop_tokens)

    # ------------------------------------------------------------------ raw parts

    def parts(self, doc, mode: SplitMode, leave_separators: bool) -> list:
        """Raw parts of `doc`: slices of it, or an int for a known word kept as a separator."""
        if isinstance(doc, list):
            doc = tuple(doc)
        steps = _steps(mode)
        if not steps[0] or self.known_words is None:
            return self._split_plain(doc, steps, leave_separators)
        out: list = []
        part_start = si = 0
        while si < len(doc):
            word_len = self._known_word_at(doc, si)
            if word_len == 0:
                si += 1
                continue
            if si != part_start:
                out.extend(self._split_plain(doc[part_start:si], steps, leave_separators))
            if leave_separators:
                out.append(self.known_words[doc[si:si + word_len]])
            part_start = si = si + word_len
        if part_start < len(doc):
            out.extend(self._split_plain(doc[part_start:], steps, leave_separators))
        return out

    def _known_word_at(self, doc, i: int) -> int:
        """Length of the longest known word starting at doc[i], 0 if none."""
        for n in self.kw_lengths:
            if i + n <= len(doc) and doc[i:i + n] in self.known_words:
                return n
        return 0

    def _split_plain(self, part, steps: tuple, leave_separators: bool) -> list:
        _, by_break, by_regex, by_stop = steps
        if not by_break or self.break_tokens is None:
            if by_regex and self.regex is not None and isinstance(part, str):
                parts = self.regex.findall(part)       # the common case, without copies
            else:
                parts = [part]
        else:
            parts = _split_on(part, self.break_tokens, leave_separators)
            if by_regex and self.regex is not None:
                parts = [p for x in parts for p in (self.regex.findall(x) if isinstance(x, str) else [x])]
        if by_stop and self.stop_tokens is not None:
            parts = [p for x in parts for p in _split_on(x, self.stop_tokens, leave_separators)]
        return parts

    # ------------------------------------------------------------------ ids

    def __call__(self, doc, mode: SplitMode = SplitMode.FULL, leave_separators: bool = True):
        """(ids int32, offsets int64): part i is ids[offsets[i]:offsets[i + 1]]."""
        if self.words_only and type(doc) is str and _steps(mode)[2]:
            return split_words_map(doc, self.char_table)
        parts = self.parts(doc, mode, leave_separators)
        if self.char_table is not None and isinstance(doc, str) and self.known_words is None:
            return map_str_parts(parts, self.char_table)      # every part is a str: one C pass
        lengths = np.fromiter((1 if isinstance(p, int) else len(p) for p in parts),
                              dtype=np.int64, count=len(parts))
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        ids: list = []
        for p in parts:
            if isinstance(p, int):
                ids.append(p)
            elif isinstance(p, str) and self.char_table is not None:
                ids.extend(self._map_chars(p).tolist())
            else:
                ids.extend(self._symbol_id(s) for s in p)
        return np.asarray(ids, dtype=np.int32).reshape(-1), offsets

    def _map_chars(self, text: str) -> np.ndarray:
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        table = self.char_table
        if codes.size and int(codes.max()) >= table.shape[0]:
            bad = next(c for c in text if ord(c) >= table.shape[0])
            raise ValueError(f"symbol {bad!r} is not in the alphabet")
        ids = table[codes]
        if codes.size and int(ids.min()) < 0:
            bad = text[int(np.argmin(ids))]
            raise ValueError(f"symbol {bad!r} is not in the alphabet")
        return ids

    def _symbol_id(self, symbol) -> int:
        try:
            return self.alphabet[symbol]
        except (KeyError, TypeError):
            raise ValueError(f"symbol {symbol!r} is not in the alphabet") from None


@functools.lru_cache(maxsize=None)
def _steps(mode: SplitMode) -> tuple:
    """(known words, break tokens, regex, stop tokens) flags of a mode (Flag tests are slow)."""
    return (SplitMode.KNOWN_WORDS in mode, SplitMode.BREAK_TOKENS in mode,
            SplitMode.REGEX in mode, SplitMode.STOP_TOKENS in mode)


def _split_on(part, separators: set, leave_separators: bool) -> list:
    """Split a str/tuple at separator symbols (kept as one-symbol parts if asked)."""
    out = []
    part_start = 0
    for i, symbol in enumerate(part):
        if symbol not in separators:
            continue
        if i != part_start:
            out.append(part[part_start:i])
        if leave_separators:
            out.append(part[i:i + 1])
        part_start = i + 1
    if part_start < len(part):
        out.append(part[part_start:])
    return out
