"""Pre-tokenizing: cutting text into pieces with the split pattern before BPE.

`Splitter` picks the fastest exact way to apply a pattern (`Splitter.engine` says which): the C
scanner (`fastbpe._pretokenize`) when the pattern is one it knows (compared by text), else a
scanner program compiled from the pattern (`fastbpe.pattern_program`, run by
`fastbpe._scan_program`) when the pattern is in the subset it compiles, else the `regex`
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

# `regex`, pattern_program and pattern_dfa are imported where used: a file whose split the C
# scanner knows loads without them (importing regex alone is ~60M instructions)
from .plan import Level

try:  # the C scanner; absent only in a partial build
    from . import _pretokenize, _scan_program
except ImportError:  # pragma: no cover
    _pretokenize = _scan_program = None

PROGRAM_BASE = 64   # kinds from here on are scanner programs (_scan_program.pxd)


def _forced(force_regex: bool | None) -> bool:
    if force_regex is None:
        force_regex = os.environ.get("FASTBPE_FORCE_REGEX", "") not in ("", "0")
    return bool(force_regex) or _pretokenize is None


def scanner_kind(pat_str: str, force_regex: bool | None = None) -> int:
    """The built-in C scanner's id for this pattern, or -1 (scanner programs are not
    considered: see `program_kind`)."""
    if _forced(force_regex):
        return -1
    kind = _pretokenize.pattern_kind(pat_str)
    return kind if kind < PROGRAM_BASE else -1


def clip_kind(force_regex: bool | None = None) -> int:
    """The built-in kind for CLIP's Split (patterns.CLIP_PATTERN, Removed, invert) followed by
    ByteLevel's regex, or -1 when forced to regex."""
    return -1 if _forced(force_regex) else _pretokenize.KINDS["clip"]


def builtin_chain_kind(pats: tuple, force_regex: bool | None = None) -> int:
    """The built-in C scanner's id for a chain of split patterns (their exact texts, each cutting
    the pieces of the one before: DeepSeek-V3's three Splits), or -1."""
    if _forced(force_regex):
        return -1
    return _pretokenize.chain_pattern_kind(tuple(pats))


def program_kind(pat_str: str, gaps: bool = False, force_regex: bool | None = None) -> int:
    """The kind of `pat_str` compiled to a scanner program, registered once per process, or -1
    when it is outside the compiled subset (`program_refusal` says why).  With gaps=False the
    pieces must be regex.findall's, so only a pattern whose matches tile every text (see
    pattern_program.is_total) qualifies; with gaps=True the text between matches is a piece
    too (llama.cpp's and HF Split(Isolated)'s cut)."""
    return _program(pat_str, gaps, force_regex)[0]


def program_refusal(pat_str: str, gaps: bool = False) -> str | None:
    """Why `pat_str` does not run as a scanner program (None when it does)."""
    return _program(pat_str, gaps, False)[1]


_PROGRAMS: dict = {}   # (pattern, gaps) -> (kind, why not)


def _program(pat_str: str, gaps: bool, force_regex: bool | None) -> tuple:
    if _forced(force_regex):
        return -1, "FASTBPE_FORCE_REGEX / force_regex"
    key = (pat_str, gaps)
    got = _PROGRAMS.get(key)
    if got is None:
        from . import pattern_program
        try:
            prog = pattern_program.compile_pattern(pat_str)
        except pattern_program.Unsupported as e:
            got = (-1, str(e))
        else:
            if prog.total:       # findall's pieces tile the text: one kind for both cuts
                got = _register(pat_str, [prog])
            elif gaps:
                got = _register(("gaps", pat_str), [prog])
            else:
                got = (-1, "some text matches no alternative, and findall drops it")
        _PROGRAMS[key] = got
    return got


def _register(key, levels: list) -> tuple:
    for level in levels:
        if not isinstance(level, int):
            _with_automaton(level)
    try:
        return _scan_program.register(key, levels), None
    except _scan_program.ProgramCapacity as e:   # the table is full, or too many levels: regex it is
        return -1, str(e)


def chain_kind(levels: list, force_regex: bool | None = None) -> tuple:
    """(kind, None) for a chain of levels run as one scanner program, or (-1, why not).  Each
    level is a built-in scanner kind (int), a pattern text (read as `regex` reads it) or a
    `plan.Level` (a pattern in a dialect), and cuts every piece of the level before it into
    its matches and the text between them (llama.cpp's chains of regexes, HF's Splits).  The
    one registry of compiled split programs: front ends lower their stages to levels and
    register chains here, each chain once per process."""
    if _forced(force_regex):
        return -1, "FASTBPE_FORCE_REGEX / force_regex"
    if (len(levels) == 1 and isinstance(levels[0], Level) and levels[0].builtin >= 0
            and levels[0].drop == _pretokenize.KIND_DROPS.get(levels[0].builtin)):
        return levels[0].builtin, None     # one built-in pattern: the scanner's own kind
    key = ("chain",) + tuple(level.key if isinstance(level, Level) else level for level in levels)
    got = _PROGRAMS.get(key)
    if got is None:
        compiled = []
        for level in levels:
            if isinstance(level, Level) and level.builtin >= 0:
                if level.drop:   # a chain reads a built-in level's ends without their DROPPED marks
                    got = (-1, f"built-in scanner kind {level.builtin} removes pieces ({level.drop}): "
                               "it runs alone, not as a level of a longer chain")
                    break
                level = level.builtin    # (its pattern text may be no regex: CLIP's, DeepSeek-V3's)
            if isinstance(level, int):
                compiled.append(level)
                continue
            try:
                compiled.append(_cached_level(level))
            except ValueError as e:
                from . import pattern_program    # loaded: compiling raised e
                if not isinstance(e, pattern_program.Unsupported):
                    raise
                got = (-1, str(e))
                break
        if got is None:
            got = _register(key, compiled)
        _PROGRAMS[key] = got
    return got


def _with_automaton(prog):
    """prog with its automaton (`dfa`: None when the pattern needs backtracking) built once."""
    if prog.run is None and not hasattr(prog, "dfa"):
        from . import pattern_dfa
        prog.dfa = pattern_dfa.build(prog)
    return prog


def _cached_level(level):
    """A level's program with its automaton, from the disk cache (`program_cache`) when an
    earlier process compiled the same level: no compiling, numpy or `regex` then."""
    from . import program_cache
    key = ("level",) + (level.key if isinstance(level, Level) else (level,))
    return program_cache.compiled(key, lambda: _with_automaton(_compile_level(level)))


def _compile_level(level) -> "pattern_program.Program":
    from . import pattern_program
    if not isinstance(level, Level):
        return pattern_program.compile_pattern(level)
    members = level.members
    if level.byte_level:
        members = pattern_program.byte_level_members(members)
    prog = pattern_program.compile_pattern(level.pattern, members=members)
    if level.byte_level:
        prog.byte_level = True
    prog.drop = level.drop   # HF's Removed: which pieces the scanner marks removed
    return prog


class Splitter:
    """Applies one split pattern. `kind >= 0` means a C scanner handles it (the encode
    kernel then scans and merges in one GIL-free call): `engine` is "scanner" (built in) or
    "program" (compiled from the pattern), else "regex" (`refusal` says why); `findall`
    always works."""

    def __init__(self, pat_str: str, force_regex: bool | None = None):
        import regex

        self.pat_str = pat_str
        try:
            self.regex = regex.compile(pat_str)
        except regex.error as e:
            raise ValueError(f"invalid split pattern {pat_str!r}: {e}") from None
        self.kind = scanner_kind(pat_str, force_regex)
        self.engine, self.refusal = "scanner", None
        if self.kind < 0:
            self.kind, self.refusal = _program(pat_str, False, force_regex)
            self.engine = "program" if self.kind >= 0 else "regex"
        self.regex_pieces = whole_matches(self.regex)

    def __repr__(self) -> str:
        why = f", regex because {self.refusal}" if self.refusal else ""
        return f"<Splitter {self.pat_str[:40]!r} engine={self.engine}{why}>"

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
