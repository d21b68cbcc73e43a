"""Which regex dialect a split pattern is written in, and what it means in Python's `regex`.

The same characters mean different things to the engines our reference tokenizers use, and the
pieces (so the ids) follow the engine.  fastbpe knows four dialects:

- `REGEX`: Python's `regex` package (V0).  fastbpe's own: training patterns, minbpe, tiktoken's
  `_educational`.  It is what fastbpe runs, so it needs no translation.
- `FANCY_REGEX`: tiktoken's (`Encoding(pat_str=...)`): Rust's fancy-regex 0.19 over the regex
  crate.  `to_regex` rewrites it into `regex` where the meaning is kept exactly and refuses the
  rest (`DialectError`, a ValueError naming the construct and where it is): see the table below.
- `ONIGURUMA`: HF tokenizers' Split/Replace regexes (Ruby syntax).  Their meanings differ in
  too many places (`^`/`$` are line anchors, `\\w` holds every number, empty matches count), so
  the hf front end runs them on Oniguruma itself (`hf/oniguruma.py`), never through `to_regex`.
- `STD_REGEX`: llama.cpp's (std::regex plus its own hand-written splitters).  Its patterns are
  fixed texts chosen by a GGUF file's pre-tokenizer name (`gguf/pretokenizers.py`), written for
  the scanner and for `regex`, never read from the file.

fancy-regex → `regex`, construct by construct (checked against tiktoken live by
tests/test_regex_dialects.py):

| fancy-regex | meaning | in `regex` |
|---|---|---|
| `$` | end of text only (no multiline) | `\\Z` (`regex`'s `$` also matches before a final `\\n`) |
| `(?m)` `^` / `$` | after / before a `\\n`, or the ends | written out with lookarounds |
| `\\z`, `\\Z` | end of text; end before any trailing `\\n`s | `\\Z`; `(?=\\n*\\Z)` |
| `[a&&b]`, `[a--b]`, `[a~~b]`, nested `[a[b]]` | class intersection, difference, symmetric difference, union | one-character lookaheads (`regex` V0 has no set operations) |
| `[[:alpha:]]` ... | ASCII classes | ASCII ranges (`regex`'s are Unicode) |
| `\\x{..}`, `\\u{..}`, `\\h`, `\\H`, `\\e`, `\\a`, `\\O`, `\\N`, `\\p{^X}`, `\\p{X!=Y}` | spelled differently | the `regex` spelling |
| `(?flags)` at the start, `(?flags:...)` with `i`, `m`, `s` | scoped flags | kept (`i`) or written out (`m`, `s`) |
| `\\s`, `\\d`, `\\w`, `\\b`, `\\p{..}`, `.`, lookarounds (variable-length too), atomic groups, possessive and lazy quantifiers | the same (Unicode `\\w` = Alphabetic, M, Nd, Pc, Join_Control in both) | kept |

Refused: backreferences and subroutines (`\\1`, `\\k<..>`, `\\g<..>`, `(?P=..)`), `\\K`, `\\G`, `\\R`,
`\\b{..}`, `\\<`, `\\>`, flags `x`, `U`, `R`, `-u`, `(?flags)` after the start (fancy-regex keeps
them past the end of the group), conditionals, `(?~..)`, `(*..)`, `(?#..)`, a quantifier on an
assertion or on a quantifier, POSIX-style property names (`\\p{alnum}`, `\\p{word}`, ...).
Empty matches: tiktoken panics on one; fastbpe drops it (regex's stepping).

Unicode: properties follow the installed `regex` (Unicode 17); the C scanner's known patterns
follow tiktoken's tables (16.0).  A known pattern's text (`patterns.BY_NAME`) is kept as it is:
its meaning in both dialects is the same, checked against tiktoken by the parity tests.
"""
from __future__ import annotations

from . import patterns

REGEX = "regex"
FANCY_REGEX = "fancy-regex"
ONIGURUMA = "oniguruma"
STD_REGEX = "std::regex"

DIALECTS = (REGEX, FANCY_REGEX, ONIGURUMA, STD_REGEX)

_KNOWN = frozenset(patterns.BY_NAME.values()) | {patterns.CL100K_HF_PATTERN}


class DialectError(ValueError):
    """A pattern uses a construct whose meaning `regex` cannot give exactly."""

    def __init__(self, pattern: str, dialect: str, position: int, construct: str):
        self.pattern, self.dialect, self.position, self.construct = pattern, dialect, position, construct
        super().__init__(f"split pattern {pattern!r}: {construct} at position {position}: fastbpe "
                         f"reads the pattern as {dialect} does and cannot give this its exact meaning "
                         f"with Python's regex (docs/tiktoken.md lists what is translated)")


def to_regex(pattern: str, dialect: str) -> str:
    """The pattern text that gives `pattern`'s matches (as read in `dialect`) to Python's
    `regex`.  Raises DialectError (a ValueError) for what cannot be translated exactly."""
    if dialect == REGEX or pattern in _KNOWN:
        return pattern
    if dialect == FANCY_REGEX:
        return _FancyToRegex(pattern).translate()
    if dialect in DIALECTS:
        raise ValueError(f"{dialect} patterns are not translated to regex: "
                         + ("run them on Oniguruma (fastbpe.hf.oniguruma)" if dialect == ONIGURUMA
                            else "llama.cpp's are fixed texts (fastbpe.gguf.pretokenizers)"))
    raise ValueError(f"unknown regex dialect {dialect!r} (one of {', '.join(DIALECTS)})")


_POSIX = {   # regex-syntax's ASCII classes, as ranges
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7F", "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F", "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~",
    "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\x0B\\x0C\\r ", "upper": "A-Z",
    "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
}
# \p{..} names fancy-regex rewrites into its own POSIX-like classes
_REMAPPED_PROPERTIES = {"alnum", "blank", "cntrl", "word", "graph", "print", "cs"}
_HEX = set("0123456789abcdefABCDEF")
_CLASS_SPECIAL = set("\\]^-[&~|")
_ASSERT, _ATOM, _LOOK = "assertion", "atom", "lookaround"


def _class_char(c: str) -> str:
    """One character as a `regex` class item."""
    if c in _CLASS_SPECIAL:
        return "\\" + c
    if c in "\n\r\t":
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[c]
    return c


def _hex_escape(cp: int) -> str:
    return f"\\x{cp:02X}" if cp < 0x100 else f"\\u{cp:04X}" if cp < 0x10000 else f"\\U{cp:08X}"


class _Class:
    """A bracketed class: `negated`, and `expr`: ("union", [item]) or (op, left, right) where
    an item is ("text", regex class item) or ("class", _Class)."""

    def __init__(self, negated, expr, source, changed):
        self.negated, self.expr, self.source, self.changed = negated, expr, source, changed

    def simple(self) -> bool:
        return self.expr[0] == "union" and all(kind == "text" for kind, _ in self.expr[1])

    def emit(self) -> str:
        if not self.changed:
            return self.source
        if self.simple():
            return "[" + ("^" if self.negated else "") + "".join(t for _, t in self.expr[1]) + "]"
        return "(?:" + self.one_char() + ")"

    def one_char(self) -> str:
        """A regex consuming one character exactly when it is in the class."""
        test = _set_test(self.expr)
        return f"(?!{test})(?s:.)" if self.negated else test


def _set_test(expr) -> str:
    if expr[0] == "union":
        texts = "".join(t for kind, t in expr[1] if kind == "text")
        alts = ([f"[{texts}]"] if texts else []) + [c.one_char() for kind, c in expr[1] if kind == "class"]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
    op, left, right = expr
    a, b = _set_test(left), _set_test(right)
    if op == "&&":
        return f"(?:(?={a}){b})"
    if op == "--":
        return f"(?:(?!{b}){a})"
    return f"(?:(?!{b}){a}|(?!{a}){b})"      # ~~


class _FancyToRegex:
    """A recursive-descent reader of fancy-regex syntax that writes `regex` syntax, keeping the
    source text of every part whose meaning is the same."""

    def __init__(self, pattern: str):
        self.s, self.i = pattern, 0
        self.flags = {"i": False, "m": False, "s": False}

    def refuse(self, construct: str, at: int | None = None):
        raise DialectError(self.s, FANCY_REGEX, self.i if at is None else at, construct)

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def translate(self) -> str:
        prefix = ""
        if self.s.startswith("(?") and self._flag_group_end(2) is not None \
                and self.s[self._flag_group_end(2)] == ")":
            end = self._flag_group_end(2)
            letters = self._apply_flags(2, end)
            self.i = end + 1
            prefix = "(?i)" if "i" in letters and self.flags["i"] else ""
        out = self.alternation()
        if self.i < len(self.s):
            self.refuse("an unbalanced ')'" if self.peek() == ")" else
                        f"a quantifier {self.peek()!r} with nothing to repeat")
        return prefix + out

    # ---- structure
    def alternation(self) -> str:
        parts = [self.concat()]
        while self.peek() == "|":
            self.i += 1
            parts.append(self.concat())
        return "|".join(parts)

    def concat(self) -> str:
        out = []
        while self.i < len(self.s) and self.peek() not in "|)":
            out.append(self.piece())
        return "".join(out)

    def piece(self) -> str:
        start = self.i
        text, kind = self.atom()
        q = self.quantifier()
        if q is None:
            return text
        if kind != _ATOM:
            self.refuse(f"a quantifier on {'a lookaround' if kind == _LOOK else 'an assertion'}", start)
        if self.quantifier(probe=True) is not None or self.peek() in ("*", "+", "?"):
            self.refuse("a quantifier on a quantifier")
        return text + q

    def quantifier(self, probe: bool = False) -> str | None:
        c, start = self.peek(), self.i
        if c in ("?", "*", "+"):
            q, end = c, self.i + 1
        elif c == "{":
            got = self._repeat(self.i)
            if got is None:
                return None      # not a repeat: fancy-regex reads a literal '{'
            q, end = got
        else:
            return None
        if probe:
            return q
        self.i = end
        lazy = self.peek() == "?"
        if lazy:
            self.i += 1
        possessive = self.peek() == "+"
        if possessive:
            self.i += 1
        if lazy and possessive:
            self.refuse("a lazy possessive quantifier", start)
        return q + ("?" if lazy else "") + ("+" if possessive else "")

    def _repeat(self, j: int):
        """fancy-regex's `{lo}`, `{lo,}`, `{lo,hi}`, `{,hi}`: (regex text, end) or None."""
        s, k = self.s, j + 1
        lo_start = k
        while k < len(s) and s[k].isdigit() and s[k].isascii():
            k += 1
        lo = s[lo_start:k]
        if not lo and not (k < len(s) and s[k] == ","):
            return None
        if k < len(s) and s[k] == "}":
            return s[j:k + 1], k + 1
        if k >= len(s) or s[k] != ",":
            return None
        k += 1
        hi_start = k
        while k < len(s) and s[k].isdigit() and s[k].isascii():
            k += 1
        hi = s[hi_start:k]
        if k >= len(s) or s[k] != "}":
            return None
        if lo and hi and int(lo) > int(hi):
            self.refuse("a repeat whose minimum exceeds its maximum", j)
        text = s[j:k + 1] if lo else "{0," + hi + "}"
        return text, k + 1

    def atom(self) -> tuple:
        c = self.peek()
        if c == "(":
            return self.group()
        if c == "[":
            return self.char_class().emit(), _ATOM
        if c == "\\":
            return self.escape()
        self.i += 1
        if c == ".":
            return ("(?s:.)" if self.flags["s"] else "."), _ATOM
        if c == "^":
            return ("(?:^|(?<=\n))" if self.flags["m"] else "^"), _ASSERT
        if c == "$":
            return ("(?=\n|\\Z)" if self.flags["m"] else "\\Z"), _ASSERT
        if c in ("*", "+", "?"):
            self.refuse(f"a quantifier {c!r} with nothing to repeat", self.i - 1)
        if c == "{":
            return "\\{", _ATOM
        return c, _ATOM

    # ---- groups and flags
    def _flag_group_end(self, j: int):
        """Index of the ':' or ')' ending flag letters that start at j, or None."""
        while j < len(self.s) and (self.s[j].isalpha() or self.s[j] == "-"):
            j += 1
        return j if j < len(self.s) and self.s[j] in ":)" else None

    def _apply_flags(self, j: int, end: int) -> str:
        letters = self.s[j:end]
        if not letters and self.s[end] == ")":
            self.refuse("an empty flag group", j - 2)
        neg = False
        for k, f in enumerate(letters):
            if f == "-":
                if neg:
                    self.refuse("a flag group with two '-'", j + k)
                neg = True
            elif f in self.flags:
                self.flags[f] = not neg
            elif f == "u" and not neg:
                pass
            elif f in "xURu":
                self.refuse({"x": "the x (verbose) flag", "U": "the U (swap greed) flag",
                             "R": "the R (CRLF) flag", "u": "the -u flag"}[f], j + k)
            else:
                self.refuse(f"an unknown flag {f!r}", j + k)
        return letters

    def group(self) -> tuple:
        start, s = self.i, self.s
        rest = s[self.i + 1:]
        head, kind = None, _ATOM
        for prefix, out, k in (("?=", "(?=", _LOOK), ("?!", "(?!", _LOOK), ("?<=", "(?<=", _LOOK),
                               ("?<!", "(?<!", _LOOK), ("?>", "(?>", _ATOM), ("?:", "(?:", _ATOM)):
            if rest.startswith(prefix):
                head, kind = out, k
                self.i += 1 + len(prefix)
                break
        saved = dict(self.flags)
        if head is None:
            if rest.startswith(("?P<", "?<", "?'")):
                opener = "?P<" if rest.startswith("?P<") else rest[:2]
                close = "'" if opener == "?'" else ">"
                name_end = s.find(close, self.i + 1 + len(opener))
                name = s[self.i + 1 + len(opener):name_end] if name_end > 0 else ""
                if not name.isidentifier() or not name.isascii():
                    self.refuse(f"a group name {name!r} regex does not accept")
                head = f"(?P<{name}>"
                self.i = name_end + 1
            elif rest.startswith("?"):
                end = self._flag_group_end(self.i + 2)
                if end is None:
                    self.refuse("a group kind " + repr(s[self.i:self.i + 3]) +
                                " (backreference, subroutine, conditional, comment, absent "
                                "operator or a verb)")
                if s[end] == ")":
                    self.refuse("flags set in the middle of a pattern (fancy-regex keeps them "
                                "past the end of their group)")
                letters = self._apply_flags(self.i + 2, end)
                self.i = end + 1
                keep = "".join(f for f in letters if f in "i-").rstrip("-")
                head = f"(?{keep}:" if keep and keep != "-" else "(?:"
            elif rest.startswith("*"):
                self.refuse("a backtracking verb")
            else:
                head = "("
                self.i += 1
        inner = self.alternation()
        if self.peek() != ")":
            self.refuse("an unclosed '('", start)
        self.i += 1
        self.flags = saved
        return head + inner + ")", kind

    # ---- escapes
    def escape(self, in_class: bool = False) -> tuple:
        """(regex text, kind) for the escape at self.i; in a class, kind is "text" for an item,
        "char" for one literal character (usable in a range; text is the character)."""
        s, start = self.s, self.i
        if self.i + 1 >= len(s):
            self.refuse("a trailing backslash")
        b = s[self.i + 1]
        self.i += 2
        src = s[start:self.i]
        if b.isdigit():
            self.refuse("a backreference", start)
        if b in "xuU":
            return self.hex_escape(start, b, in_class)
        if b in "dswDSW":
            return src, ("text" if in_class else _ATOM)
        if b in "pP":
            return self.property(start, b == "P", in_class)
        if b == "h":
            return ("0-9A-Fa-f" if in_class else "[0-9A-Fa-f]"), ("text" if in_class else _ATOM)
        if b == "H":
            if in_class:
                return _Class(True, ("union", [("text", "0-9A-Fa-f")]), "", True), "class"
            return "[^0-9A-Fa-f]", _ATOM
        simple = {"a": "\x07", "f": "\x0c", "n": "\n", "r": "\r", "t": "\t", "v": "\x0b",
                  "e": "\x1b", " ": " "}
        if in_class:
            if b == "b":
                return "\x08", "char"
            if b in simple:
                return simple[b], "char"
            if b.isascii() and b.isalpha():
                self.refuse(f"the escape {src!r} in a class", start)
            return b, "char"
        if b in "Az":
            return ("\\A" if b == "A" else "\\Z"), _ASSERT
        if b == "Z":
            return "(?=\n*\\Z)", _ASSERT
        if b in "bB":
            if self.peek() == "{" and self._repeat(self.i) is None:
                self.refuse("a word-boundary kind \\b{...}", start)
            return src, _ASSERT
        if b == "O":
            return "(?s:.)", _ATOM
        if b == "N":
            return "[^\n]", _ATOM
        if b in "<>":
            self.refuse(f"the word-{'start' if b == '<' else 'end'} assertion {src}", start)
        if b in "kgKGR":
            what = {"k": "a named backreference", "g": "a subroutine call", "K": "\\K (keep out)",
                    "G": "\\G (continue from the last match)", "R": "\\R (general newline)"}[b]
            self.refuse(what, start)
        if b in simple:
            c = simple[b]
            return (src if b in "fnrtv " else _hex_escape(ord(c))), _ATOM
        if b.isascii() and b.isalpha():
            self.refuse(f"an invalid escape {src!r}", start)
        return (src if b.isascii() else b), _ATOM   # an escaped literal

    def hex_escape(self, start: int, b: str, in_class: bool) -> tuple:
        s, digits = self.s, {"x": 2, "u": 4, "U": 8}[b]
        fixed = s[self.i:self.i + digits]
        if len(fixed) == digits and set(fixed) <= _HEX:
            self.i += digits
            cp, verbatim = int(fixed, 16), True
        elif self.peek() == "{":
            end = s.find("}", self.i)
            body = s[self.i + 1:end] if end > 0 else ""
            if not body or len(body) > 8 or not set(body) <= _HEX:
                self.refuse(f"an invalid hex escape", start)
            self.i = end + 1
            cp, verbatim = int(body, 16), False
        else:
            self.refuse("an invalid hex escape", start)
        if cp > 0x10FFFF or 0xD800 <= cp < 0xE000:
            self.refuse("an escape of an invalid code point", start)
        if in_class:
            return chr(cp), "char"
        return (s[start:self.i] if verbatim else _hex_escape(cp)), _ATOM

    def property(self, start: int, negated: bool, in_class: bool) -> tuple:
        s = self.s
        if self.peek() == "{":
            end = s.find("}", self.i)
            if end < 0:
                self.refuse("an unclosed \\p{", start)
            name = s[self.i + 1:end]
            self.i = end + 1
        else:
            if not self.peek():
                self.refuse("a \\p without a name", start)
            name = self.peek()
            self.i += 1
        source = s[start:self.i]
        changed = False
        if name.startswith("^"):
            negated, name, changed = not negated, name[1:], True
        if "!=" in name:
            negated, name, changed = not negated, name.replace("!=", "="), True
        if name.strip().lower() in _REMAPPED_PROPERTIES:
            self.refuse(f"the property \\p{{{name}}} (fancy-regex gives it its own meaning)", start)
        text = source if not changed else ("\\P{" if negated else "\\p{") + name + "}"
        return text, ("text" if in_class else _ATOM)

    # ---- classes
    def char_class(self) -> _Class:
        s, start = self.s, self.i
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        changed = [False]
        expr = self.class_union(changed, first=True)
        while True:
            if self.i >= len(s):
                self.refuse("an unclosed '['", start)
            if self.peek() == "]":
                self.i += 1
                break
            op = s[self.i:self.i + 2]
            self.i += 2
            changed[0] = True
            right = self.class_union(changed, first=False)
            expr = (op, expr, right)
        items = expr[1] if expr[0] == "union" else None
        if items is not None and not items:
            self.refuse("an empty class", start)
        return _Class(negated, expr, s[start:self.i], changed[0])

    def class_union(self, changed: list, first: bool):
        s, items = self.s, []
        if first and self.peek() == "]":
            items.append(("text", "\\]"))
            self.i += 1
            changed[0] = True
        while self.i < len(s) and self.peek() != "]" and s[self.i:self.i + 2] not in ("&&", "--", "~~"):
            c = self.peek()
            if c == "[":
                if s.startswith("[:", self.i):
                    end = s.find(":]", self.i + 2)
                    name = s[self.i + 2:end] if end > 0 else ""
                    neg = name.startswith("^")
                    if neg:
                        name = name[1:]
                    if name not in _POSIX:
                        self.refuse(f"an unknown ASCII class [:{name}:]")
                    self.i = end + 2
                    changed[0] = True
                    text = _POSIX[name]
                    items.append(("class", _Class(True, ("union", [("text", text)]), "", True))
                                 if neg else ("text", text))
                    continue
                nested = self.char_class()
                changed[0] = True
                items.append(("class", nested))
                continue
            item_start = self.i
            lo = self.class_atom(items, changed)
            if lo is None:
                continue
            if self.peek() == "-" and self.peek(1) not in ("]", "-", ""):
                self.i += 1
                hi = self.class_atom(None, changed)
                if hi is None or ord(hi) < ord(lo):
                    self.refuse("an invalid class range", item_start)
                items.append(("text", _class_char(lo) + "-" + _class_char(hi)))
            else:
                items.append(("text", _class_char(lo)))
            if s[item_start:self.i] != items[-1][1]:
                changed[0] = True
        return ("union", items)

    def class_atom(self, items, changed):
        """One literal character (returned), or an item appended to items (returns None)."""
        c = self.peek()
        if c != "\\":
            self.i += 1
            return c
        esc_start = self.i
        text, kind = self.escape(in_class=True)
        if kind == "char":
            return text
        if items is None:
            self.refuse("a class range whose end is not a character", esc_start)
        if kind == "class":
            items.append(("class", text))
            changed[0] = True
        else:
            items.append(("text", text))
            if text != self.s[esc_start:self.i]:
                changed[0] = True
        return None
