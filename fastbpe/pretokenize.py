"""Pre-tokenizing: cutting text into pieces with the split pattern before BPE.

`Splitter` picks the fastest exact way to apply a pattern: the C scanner
(`fastbpe._pretokenize`) when the pattern is one it knows (compared by text), else the `regex`
package.  Set `FASTBPE_FORCE_REGEX=1` (or pass `force_regex=True`) to always use `regex`, e.g.
to rule the scanner out while debugging.

Unicode version: the scanner's tables follow tiktoken's (16.0 for tiktoken 0.14), so its
pieces, and the ids, are tiktoken's even on characters new in a later Unicode version.  The
`regex` path follows the installed `regex` package's version instead (17.0 for regex
2026.5.9): on those ~4.7k characters (`tools/tiktoken_unicode_overrides.txt`) custom patterns
and `FASTBPE_FORCE_REGEX=1` can give other pieces than tiktoken.  See docs/pretokenize.md.
"""
from __future__ import annotations

import os

import regex

try:  # the C scanner; absent only in a partial build
    from . import _pretokenize
except ImportError:  # pragma: no cover
    _pretokenize = None


def scanner_kind(pat_str: str, force_regex: bool | None = None) -> int:
    """The C scanner's id for this pattern, or -1 when `regex` must be used."""
    if force_regex is None:
        force_regex = os.environ.get("FASTBPE_FORCE_REGEX", "") not in ("", "0")
    if force_regex or _pretokenize is None:
        return -1
    return _pretokenize.pattern_kind(pat_str)


class Splitter:
    """Applies one split pattern. `kind >= 0` means the C scanner handles it (the encode
    kernel then scans and merges in one GIL-free call); `findall` always works."""

    def __init__(self, pat_str: str, force_regex: bool | None = None):
        self.pat_str = pat_str
        try:
            self.regex = regex.compile(pat_str)
        except regex.error as e:
            raise ValueError(f"invalid split pattern {pat_str!r}: {e}") from None
        self.kind = scanner_kind(pat_str, force_regex)
        self.regex_pieces = whole_matches(self.regex)

    def findall(self, text: str) -> list[str]:
        """The pieces of text."""
        if self.kind >= 0:
            return _pretokenize.split(text, self.kind)
        return self.regex_pieces(text)


def whole_matches(compiled: "regex.Pattern[str]"):
    """A function text -> list of the whole matches of `compiled`, as tiktoken splits.
    `findall` returns the capture groups instead when the pattern has any, which would
    drop or repeat text, so it is used only for patterns without groups (it is faster)."""
    if compiled.groups == 0:
        return compiled.findall
    return lambda text: [m.group() for m in compiled.finditer(text)]
