"""Text with its alignment to the original input, as HF's `NormalizedString`.

Each character of `text` knows the span of original characters it came from; a token's offsets
run from its first character's start to its last character's end, as HF computes them.

Most text is never changed in length (no normalizer, NFC on normalized text, a one-for-one
replacement), so the alignment is kept as "identity from `base`" until a change needs it, and
then as two compact integer arrays: memory stays small on long inputs.
"""
from __future__ import annotations

from array import array


class NormalizedText:
    __slots__ = ("text", "base", "starts", "ends")

    def __init__(self, text: str, base: int = 0, starts: array | None = None, ends: array | None = None):
        self.text = text
        self.base = base        # with starts None: character i came from original base + i
        self.starts = starts    # else: original span [starts[i], ends[i]) of character i
        self.ends = ends

    @classmethod
    def from_original(cls, text: str, base: int = 0) -> "NormalizedText":
        return cls(text, base)

    def span(self, i: int) -> tuple[int, int]:
        if self.starts is None:
            return (self.base + i, self.base + i + 1)
        return (self.starts[i], self.ends[i])

    def _spans(self) -> tuple[array, array]:
        if self.starts is not None:
            return self.starts, self.ends
        n, b = len(self.text), self.base
        return array("q", range(b, b + n)), array("q", range(b + 1, b + n + 1))

    def slice(self, start: int, end: int) -> "NormalizedText":
        if self.starts is None:
            return NormalizedText(self.text[start:end], self.base + start)
        return NormalizedText(self.text[start:end], 0, self.starts[start:end], self.ends[start:end])

    def offsets(self, start: int, end: int) -> tuple[int, int]:
        """Original offsets of the characters [start, end) of text."""
        if start >= end:
            if start < len(self.text):
                s = self.span(start)[0]
                return (s, s)
            if self.text:
                e = self.span(len(self.text) - 1)[1]
                return (e, e)
            return (self.base, self.base)
        return (self.span(start)[0], self.span(end - 1)[1])

    def original_start(self) -> int:
        return self.span(0)[0] if self.text else self.base

    def same_length(self, text: str) -> "NormalizedText":
        """text (as long as ours, character for character) with our alignment."""
        return NormalizedText(text, self.base, self.starts, self.ends)

    def prepend(self, prefix: str) -> "NormalizedText":
        """HF's prepend: inserted characters share the first character's span."""
        if not self.text:
            return self
        s, e = self.span(0)
        starts, ends = self._spans()
        k = len(prefix)
        return NormalizedText(prefix + self.text, 0, array("q", [s] * k) + starts, array("q", [e] * k) + ends)

    def map_chars(self, fn) -> "NormalizedText":
        """Replace each character c by fn(c) (a str, maybe empty or longer); every new
        character keeps the span of the character it came from."""
        parts = [fn(c) for c in self.text]
        out = "".join(parts)
        if len(out) == len(self.text) and all(len(p) == 1 for p in parts):
            return self.same_length(out)
        starts, ends = array("q"), array("q")
        for i, r in enumerate(parts):
            if r:
                s, e = self.span(i)
                starts.extend([s] * len(r))
                ends.extend([e] * len(r))
        return NormalizedText(out, 0, starts, ends)

    def replace_matches(self, matches, content: str) -> "NormalizedText":
        """Replace each (start, end) match of text by content; as in HF, the new characters
        are inserted after the removed ones and so take the span of the character before
        them: the match's last one (for an empty match, the one before it; at the very start,
        the empty span where the text starts)."""
        if len(content) == 1 and all(e - s == 1 for s, e in matches):
            chars = list(self.text)
            for s, _ in matches:
                chars[s] = content
            return self.same_length("".join(chars))
        old_starts, old_ends = self._spans()
        out, starts, ends, prev = [], array("q"), array("q"), 0
        for start, end in matches:
            out.append(self.text[prev:start])
            starts.extend(old_starts[prev:start])
            ends.extend(old_ends[prev:start])
            out.append(content)
            if end > 0:
                s, e = self.span(end - 1)
            else:
                s = e = self.original_start()
            starts.extend([s] * len(content))
            ends.extend([e] * len(content))
            prev = end
        out.append(self.text[prev:])
        starts.extend(old_starts[prev:])
        ends.extend(old_ends[prev:])
        return NormalizedText("".join(out), 0, starts, ends)

    def from_sources(self, text: str, sources: bytes) -> "NormalizedText":
        """text with character k taking the span of our character sources[k] (int64 bytes;
        -1: HF's (0, 0), the empty span where this text starts in the original)."""
        index = array("q")
        index.frombytes(sources)
        old_starts, old_ends = self._spans()
        origin = self.original_start()
        starts, ends = array("q"), array("q")
        for k in index:
            if k < 0:
                starts.append(origin)
                ends.append(origin)
            else:
                starts.append(old_starts[k])
                ends.append(old_ends[k])
        return NormalizedText(text, 0, starts, ends)
