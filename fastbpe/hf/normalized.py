"""Text with its alignment to the original input, as HF's `NormalizedString`.

Each character of `text` knows the span of original characters it came from (`align[i]` is a
(start, end) pair of original char offsets).  Normalizers and pre-tokenizers build new texts
from old ones; a token's offsets are the span from its first character's start to its last
character's end, as HF computes them.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class NormalizedText:
    text: str
    align: list  # [(start, end)] per character of text, in original char offsets

    @classmethod
    def from_original(cls, text: str, base: int = 0) -> "NormalizedText":
        return cls(text, [(base + i, base + i + 1) for i in range(len(text))])

    def slice(self, start: int, end: int) -> "NormalizedText":
        return NormalizedText(self.text[start:end], self.align[start:end])

    def offsets(self, start: int, end: int) -> tuple[int, int]:
        """Original offsets of the characters [start, end) of text."""
        if start >= end:
            if start < len(self.align):
                return (self.align[start][0], self.align[start][0])
            return (self.align[-1][1], self.align[-1][1]) if self.align else (0, 0)
        return (self.align[start][0], self.align[end - 1][1])

    def original_start(self) -> int:
        return self.align[0][0] if self.align else 0

    def prepend(self, prefix: str) -> "NormalizedText":
        """HF's prepend: inserted characters share the first character's span."""
        if not self.text:
            return self
        return NormalizedText(prefix + self.text, [self.align[0]] * len(prefix) + self.align)

    def map_chars(self, fn) -> "NormalizedText":
        """Replace each character c by fn(c) (a str, maybe empty or longer); every new
        character keeps the span of the character it came from."""
        out, align = [], []
        for c, a in zip(self.text, self.align):
            r = fn(c)
            out.append(r)
            align.extend([a] * len(r))
        return NormalizedText("".join(out), align)

    def replace_matches(self, matches, content: str) -> "NormalizedText":
        """Replace each (start, end) match of text by content; the new characters take the
        span of the whole match."""
        out, align, prev = [], [], 0
        for start, end in matches:
            out.append(self.text[prev:start])
            align.extend(self.align[prev:start])
            out.append(content)
            span = self.offsets(start, end)
            align.extend([span] * len(content))
            prev = end
        out.append(self.text[prev:])
        align.extend(self.align[prev:])
        return NormalizedText("".join(out), align)
