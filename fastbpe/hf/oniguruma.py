"""Split and Replace patterns of a tokenizer.json, matched as HF matches them: with Oniguruma.

HF compiles `{"Regex": ...}` patterns with Oniguruma (Ruby syntax), whose semantics differ from
Python's `regex` in ways that change pieces: `^`/`$` are line anchors, `\\w` holds every
number (`½²³¼¾`) but not ZWJ, `\\s` is narrower, and empty matches count.  Running Oniguruma
itself (the `onigurumacffi` package) gives HF's matches by construction.

`OnigPattern.spans(text)` follows the onig crate's `find_iter`, which HF uses: each search
starts where the last match ended, and an empty match right at the end of the previous match
is skipped by moving one character on.  Offsets are in characters.
"""
from __future__ import annotations

import os

# the onigurumacffi module, imported when a regex is first matched or asked of Oniguruma (~6M
# instructions with cffi's backend: a file whose splits the C scanner knows, or whose programs
# the cache holds, never needs it); None: not installed
_NOT_YET = object()
onigurumacffi = _NOT_YET


class MissingOnigurumaError(ImportError):
    """A tokenizer.json regex needs Oniguruma and the onigurumacffi package is absent."""


def module():
    """The onigurumacffi module, or None when it is not installed."""
    global onigurumacffi
    if onigurumacffi is _NOT_YET:
        try:
            import onigurumacffi as onig
        except ImportError:  # pragma: no cover - depends on the environment
            onig = None
        onigurumacffi = onig
    return onigurumacffi


def available() -> bool:
    """Whether onigurumacffi is installed, found without importing it (a compiled program read
    back from the cache needs no Oniguruma, only to know that it would be the same)."""
    if onigurumacffi is _NOT_YET:
        import importlib.util
        try:
            return importlib.util.find_spec("onigurumacffi") is not None
        except (ImportError, ValueError):
            return False
    return onigurumacffi is not None


def _require():
    if module() is None:
        raise MissingOnigurumaError(
            "this tokenizer.json has a regex that fastbpe matches with Oniguruma, as HF does: "
            "pip install onigurumacffi (or fastbpe[hf])")
    return onigurumacffi


class OnigPattern:
    """A compiled Oniguruma regex with HF's find_iter.  Compiled now (an invalid regex is a
    ValueError at load, as HF's), or at its first match when `checked`: this Oniguruma build
    compiled it in an earlier process (program_cache.regex_compiled_before), so a load whose
    regexes all run as scanner programs needs neither cffi nor Oniguruma."""

    def __init__(self, pattern: str, checked: bool = False):
        self.pattern = pattern
        self._pattern = None
        if not checked:
            self._compile()

    def _compile(self) -> None:
        onig = _require()
        try:
            self._pattern = onig.compile(self.pattern)
        except onig.OnigError as e:
            raise ValueError(f"invalid regex {self.pattern!r}: {e}") from None
        # the package's C entry point: one call per match on the text encoded once (its
        # `search` re-encodes the whole text and re-decodes a prefix per match: quadratic)
        lib = getattr(onig, "_lib", None)
        self._search = getattr(lib, "onigcffi_search", None)
        self._regex_t = getattr(self._pattern, "_regex_t", None)
        self._region = getattr(onig, "_region", None)
        self._mismatch = getattr(lib, "ONIG_MISMATCH", None)

    def _byte_spans(self, raw: bytes):
        """Oniguruma's (start, end) byte spans of raw, as the onig crate's FindMatches."""
        if self._pattern is None:
            self._compile()
        n, last_end, last_match_end = len(raw), 0, -1
        fast = None not in (self._search, self._regex_t, self._region, self._mismatch)
        region = self._region() if fast else None
        text = None if fast else raw.decode("utf-8")
        while last_end <= n:
            if fast:
                ret = self._search(self._regex_t, raw, n, last_end, region, 0)
                if ret == self._mismatch:
                    return
                if ret < 0:
                    raise ValueError(f"Oniguruma failed on pattern {self.pattern!r} (code {ret})")
                s, e = region[0].beg[0], region[0].end[0]
            else:
                m = self._pattern.search(text, len(raw[:last_end].decode("utf-8")))
                if m is None:
                    return
                s, e = (len(text[:k].encode("utf-8")) for k in m.span())
            if s == e and e == last_match_end:
                # one character on (its UTF-8 length from the lead byte)
                lead = raw[last_end] if last_end < n else 0
                last_end += 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
                continue
            last_end = last_match_end = e
            yield s, e

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Every match of the pattern in text, as (start, end) character offsets (none in
        empty text: HF's find_matches does not search it)."""
        if not text:
            return []
        if text.isascii():
            return list(self._byte_spans(text.encode("ascii")))
        raw = text.encode("utf-8")
        out, byte_pos, char_pos = [], 0, 0
        for s, e in self._byte_spans(raw):
            char_pos += len(raw[byte_pos:s].decode("utf-8"))
            start = char_pos
            char_pos += len(raw[s:e].decode("utf-8"))
            byte_pos = e
            out.append((start, char_pos))
        return out


class LiteralPattern:
    """A `{"String": s}` pattern: HF escapes it into a regex; a non-empty literal's matches
    are its leftmost non-overlapping occurrences."""

    def __init__(self, literal: str):
        self.pattern = literal

    def spans(self, text: str) -> list[tuple[int, int]]:
        out, k, n = [], 0, len(self.pattern)
        while True:
            k = text.find(self.pattern, k)
            if k < 0:
                return out
            out.append((k, k + n))
            k += n


def compile_split_pattern(stage: str, node):
    """The matcher of a Split/Replace pattern node: {"String": s} or {"Regex": r}."""
    if isinstance(node, dict) and len(node) == 1 and isinstance(node.get("String"), str):
        literal = node["String"]
        return LiteralPattern(literal) if literal else OnigPattern("")
    if isinstance(node, dict) and len(node) == 1 and isinstance(node.get("Regex"), str):
        from ..program_cache import note_regex_compiled, regex_compiled_before
        pattern = node["Regex"]
        if available() and regex_compiled_before(pattern):
            return OnigPattern(pattern, checked=True)
        try:
            compiled = OnigPattern(pattern)
        except ValueError as e:
            raise ValueError(f"tokenizer.json: {stage} has an {e}") from None
        note_regex_compiled(pattern)
        return compiled
    raise ValueError(f"tokenizer.json: {stage} pattern must be {{\"String\": ...}} or {{\"Regex\": ...}}, got {node!r}")


# Oniguruma's `$` (HF's Ruby syntax) is the end of a line: before any "\n" or at the end of
# the text (regex's `$` also stops before a final "\n" only); spelled so, it compiles
_ONIG_DOLLAR = "(?:(?=\\n)|(?![\\s\\S]))"


def onig_text(pattern: str) -> str:
    """pattern with each `$` outside a set spelled as Oniguruma reads it (`_ONIG_DOLLAR`):
    DeepSeek-LLM's `\\s+$` Split; sets nested in a set flattened (`_flat_sets`: Bloom's
    `[^(\\s|[.,!?…])]`).  Any other construct is left for the compiler to judge."""
    pattern = _flat_sets(pattern)
    if "$" not in pattern:
        return pattern
    out, i, in_set = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_set:
            in_set = c != "]" or pattern[i - 1] == "[" or pattern[i - 2:i] == "[^"
        elif c == "[":
            in_set = True
        elif c == "$":
            c = _ONIG_DOLLAR
        out.append(c)
        i += 1
    return "".join(out)


def _flat_sets(pattern: str) -> str:
    """pattern with each set nested in a set, `[a[bc]]`, spelled as its members, `[abc]`, which
    Oniguruma reads the same (a set is the union of its items, and a nested set is one item;
    `regex` would read the inner `[` as a literal).  Only plain nested sets: negated ones
    (`[^..]`), POSIX brackets (`[:alpha:]`), deeper nesting and sets with `&&` stay as written."""
    if pattern.count("[") < 2:
        return pattern
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
        elif c != "[":
            out.append(c)
            i += 1
        else:
            end, flat = _flat_set(pattern, i)
            out.append(flat)
            i = end
    return "".join(out)


def _flat_set(pattern: str, start: int) -> tuple[int, str]:
    """(the end of the set at pattern[start], its text with plain nested sets opened), or the
    set as written where it holds anything else (see _flat_sets)."""
    i = start + (2 if pattern.startswith("[^", start) else 1)
    if pattern.startswith("]", i):      # a leading "]" is a member
        i += 1
    out, nested, plain = [pattern[start:i]], False, True
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "]":
            text = "".join(out) + "]"
            return i + 1, text if nested and plain else pattern[start:i + 1]
        if pattern.startswith("&&", i):
            plain = False
        if c == "[":
            close = _inner_end(pattern, i)
            if close < 0:
                plain = False
                out.append(c)
                i += 1
                continue
            inner = pattern[i + 1:close]
            # a "-" beside the nested set would join its members into a range once pasted in
            # (`[x[-y]]` is {x, -, y}, `[x-y]` a range): such a set stays as written
            if inner.startswith("-") or (inner.endswith("-") and not inner.endswith("\\-")) \
                    or (out[-1].endswith("-") and len(out) > 1) or pattern.startswith("-", close + 1):
                plain = False
            nested = True
            out.append(inner)
            i = close + 1
            continue
        out.append(c)
        i += 1
    return len(pattern), pattern[start:]


def _inner_end(pattern: str, i: int) -> int:
    """The index of the "]" closing a plain nested set at pattern[i] ("[" not followed by "^",
    ":" or "]", holding no "[" or "&&"), else -1."""
    if pattern[i + 1:i + 2] in ("^", ":", "]", ""):
        return -1
    k = i + 1
    while k < len(pattern):
        if pattern[k] == "\\":
            k += 2
            continue
        if pattern[k] == "[" or pattern.startswith("&&", k):
            return -1
        if pattern[k] == "]":
            return k
        k += 1
    return -1
