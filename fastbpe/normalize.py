"""Normalizer programs: HF's normalizer steps as data, run in C (`fastbpe/_normalize.pyx`).

Each step a tokenizer file names (NFC, Lowercase, Replace, ...) lowers to one or more ops
below; a `NormalizerProgram` runs a list of them over a str in one call: `normalize(text)`,
`normalize_aligned(text)` with HF's alignment (each output character's span in the input),
`normalize_batch(texts)` without the GIL.  A text no op changes comes back as the same
object, after read-only scans.  A step that cannot lower raises `NotLowered` saying why; the
front ends' Python normalizers (`fastbpe.hf.normalizers`) stay the readable reference.
"""
from __future__ import annotations

import functools
from array import array

from ._nfc import FORMS, stability_table
from ._normalize import Program
from .plan import NotLowered  # noqa: F401 - one exception for every stage that has no kernel form
from .plan import FrozenFields


@functools.lru_cache(maxsize=None)
def form_table(form: str) -> bytes:
    """The stability table of a Unicode form (built once per process, ~10-20 ms)."""
    return stability_table(form)


class _Op(FrozenFields):
    """A normalizer op: named fields, immutable, equal by value (plan.FrozenFields, what a frozen
    dataclass gives without importing `dataclasses`: ~30M instructions of a file's load)."""
    __slots__ = _shown = ()

    def _key(self) -> tuple:
        return tuple(getattr(self, n) for n in self._shown)


class UnicodeForm(_Op):
    __slots__ = _shown = ("form",)   # NFC, NFD, NFKC, NFKD: HF's Unicode 9.0 tables

    def __init__(self, form: str):
        if form not in FORMS:
            raise ValueError(f"unknown normalization form {form!r}")
        self._set(form=form)

    def spec(self) -> tuple:
        return ("form", FORMS[self.form], form_table(self.form))


class Lowercase(_Op):
    __slots__ = _shown = ()

    def spec(self) -> tuple:
        return ("lowercase",)


class ReplaceLiteral(_Op):
    __slots__ = _shown = ("literal", "content")

    def __init__(self, literal: str, content: str):
        # every leftmost non-overlapping occurrence ("" : an empty match everywhere)
        self._set(literal=literal, content=content)

    def spec(self) -> tuple:
        return ("replace", self.literal, self.content)


class ReplaceRun(_Op):
    """Replace by a regex that is one character class repeated run_min..run_max times (`\\s+`
    -> " ", `" {2,}"` -> "▁"): `table` is the class as pattern_program keeps it (ascii lo,
    ascii hi, block index, blocks), read in the dialect the file's regex is in (not compared:
    the pattern says it)."""
    __slots__ = ("pattern", "table", "run_max", "content", "run_min")
    _shown = ("pattern", "run_max", "content", "run_min")

    def __init__(self, pattern: str, table: tuple, run_max: int = 1, content: str = "", run_min: int = 1):
        self._set(pattern=pattern, table=table, run_max=run_max, content=content, run_min=run_min)

    def spec(self) -> tuple:
        lo, hi, index, blocks = self.table
        return ("replace_run", lo, hi, bytes(index), bytes(blocks), self.run_max, self.content, self.run_min)


class PadClass(_Op):
    """Each member c of a character class becomes content, c, content, all three with c's span
    (HF's BertNormalizer handle_chinese_chars: " c " around each CJK ideograph).  `table` as
    ReplaceRun's; `name` says which class (not compared: it names the table)."""
    __slots__ = ("name", "table", "content")
    _shown = ("name", "content")

    def __init__(self, name: str, table: tuple, content: str = " "):
        self._set(name=name, table=table, content=content)

    def spec(self) -> tuple:
        lo, hi, index, blocks = self.table
        return ("pad_class", lo, hi, bytes(index), bytes(blocks), self.content)


class Prepend(_Op):
    """HF's Prepend; unless_first: not before a text that starts with the prefix's first
    character (ByteLevel's add_prefix_space, which hf's lowering puts last in the program)."""
    __slots__ = _shown = ("prefix", "unless_first")

    def __init__(self, prefix: str, unless_first: bool = False):
        self._set(prefix=prefix, unless_first=unless_first)

    def spec(self) -> tuple:
        return ("prepend", self.prefix, self.unless_first)


class Strip(_Op):
    __slots__ = _shown = ("left", "right")

    def __init__(self, left: bool, right: bool):
        self._set(left=left, right=right)

    def spec(self) -> tuple:
        return ("strip", self.left, self.right)


class StripAccents(_Op):
    __slots__ = _shown = ()

    def spec(self) -> tuple:
        return ("strip_accents",)


class ByteLevel(_Op):
    __slots__ = _shown = ()

    def spec(self) -> tuple:
        return ("bytelevel",)


class NormalizerProgram:
    """A list of ops compiled for the C kernel (see the module docstring)."""

    __slots__ = ("ops", "_kernel")

    def __init__(self, ops):
        self.ops = tuple(ops)
        self._kernel = None

    @property
    def kernel(self) -> Program:
        """The compiled _normalize.Program (C callers take it), made on first use: a Unicode
        form's table costs a few ms, which loading a file should not pay."""
        kernel = self._kernel
        if kernel is None:   # two threads may both make one: the same program
            kernel = self._kernel = Program([op.spec() for op in self.ops])
        return kernel

    def normalize(self, text: str) -> str:
        """The normalized text; text itself when no op changes it."""
        return self.kernel.normalize(text)

    def __repr__(self) -> str:
        return f"NormalizerProgram({list(self.ops)!r})"

    def __bool__(self) -> bool:
        return bool(self.ops)

    def normalize_aligned(self, text: str, base: int = 0) -> tuple[str, array | None, array | None]:
        """(normalized, starts, ends): character k of the result comes from the input's
        characters [starts[k], ends[k]) (+ base), as HF aligns them; (text, None, None) when
        no op changes text (every character is its own span)."""
        out, starts, ends = self.kernel.normalize_aligned(text)
        if starts is None:
            return out, None, None
        a, b = array("q"), array("q")
        a.frombytes(starts)
        b.frombytes(ends)
        if base:
            a, b = array("q", (x + base for x in a)), array("q", (x + base for x in b))
        return out, a, b

    def normalize_aligned_bytes(self, text: str) -> tuple:
        """normalize_aligned's (normalized, starts, ends) with starts/ends as int64 bytes (or
        None): for callers that read them with numpy."""
        return self.kernel.normalize_aligned(text)

    def normalize_batch(self, texts: list) -> list:
        """normalize of each str, in one GIL-free call."""
        return self.kernel.normalize_batch(texts if type(texts) is list else list(texts))
