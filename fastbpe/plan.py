"""One plan per tokenizer: what the compiled kernels run for a file's pipeline (DESIGN.md §8).

Every vocabulary file says the same few things: how to normalize, how to cut pieces, how to
turn a piece into ids, which added tokens to cut out first.  Each front end's stages *lower*
themselves into the kernel forms below (a stage that cannot raises `NotLowered`, naming
itself and why), and one `Plan` holds the result; the ids paths, the Encodings built from
kernel output, batches, short calls and the transformers patch read its fields.

* `Level` — one cut of the pre-tokenizer chain: a split pattern in a regex dialect (or a
  built-in scanner kind); `pretokenize.chain_kind` registers a chain of levels as one scanner
  kind, so the kernel cuts every level in one GIL-free pass.
* `Plan` — which kernel merges (`model`: "byte-level", the encode kernel over a scanner
  chain; "char-level", `_char_bpe.CharBPE` over SentencePiece's text form), the chain's
  scanner kind, the pattern when the chain is one level (what a tiktoken-style view of the
  file needs), the char-level model's text form (`char_kinds`), and the engine: "kernel"
  when every stage lowered, else "pipeline" with the refusal (the Python stage-by-stage
  pipeline, the readable reference the kernels are tested against, encodes the file).
"""
from __future__ import annotations



class FrozenFields:
    """A value with named fields, compared and hashed by `_key()`, immutable after __init__
    (what a frozen dataclass gives, without importing `dataclasses`: that import and the code
    it generates were ~15% of a tokenizer.json load's instructions)."""
    __slots__ = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}")

    __delattr__ = __setattr__

    def _set(self, **fields) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __eq__(self, other):
        return self._key() == other._key() if type(other) is type(self) else NotImplemented

    def __hash__(self):
        return hash(self._key())

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self._shown) + ")"

    def __reduce__(self):   # copy and pickle: the constructor's arguments (__slots__ is their order)
        return type(self), tuple(getattr(self, n) for n in self.__slots__)


class NotLowered(ValueError):
    """A stage that has no kernel form (the message names the stage and says why)."""


class Level(FrozenFields):
    """One cut of a chain: every piece of the level before is cut into this pattern's matches
    and the text between them (HF's Split with behavior Isolated; llama.cpp's regex lists).

    `dialect` names whose reading of the pattern counts ("regex": the `regex` package, as
    tiktoken's patterns and llama.cpp's lists are matched; "oniguruma": HF tokenizers);
    `members`, when given, answers which characters a one-character atom matches in that
    dialect (pattern_program.compile_pattern's `members`).  `byte_level`: the level cuts text
    already mapped to GPT-2's byte alphabet (a Split after a ByteLevel step), so it reads
    one byte as one character.  `builtin`: a built-in scanner kind that cuts exactly so.
    `drop`: "matches" or "gaps" when the level removes those pieces (HF's Split Removed,
    without or with invert): the kernel gives them no ids."""
    __slots__ = ("pattern", "dialect", "byte_level", "builtin", "members", "drop")
    _shown = ("pattern", "dialect", "byte_level", "builtin", "drop")   # not members

    def __init__(self, pattern: str, dialect: str = "regex", byte_level: bool = False, builtin: int = -1,
                 members=None, drop: str | None = None):
        self._set(pattern=pattern, dialect=dialect, byte_level=byte_level, builtin=builtin, members=members,
                  drop=drop)

    def _key(self) -> tuple:
        return self.key

    @property
    def key(self) -> tuple:
        return (self.pattern, self.dialect, self.byte_level, self.builtin, self.drop)


class Plan(FrozenFields):
    """What the kernel runs for one tokenizer.  `engine` is "kernel" (one GIL-free call a
    text or batch), "kernel+matcher" (the single split is matched in Python, the kernel
    merges: a pattern outside the compiled subset), or "pipeline" (`refusal` says which
    stage did not lower, and why).  `model` says which kernel: "byte-level" (the scanner
    chain `kind`, then the byte-level merge) or "char-level" (`_char_bpe.CharBPE`: the
    normalizer and pre-tokenizer lower to its text form, `char_kinds`)."""
    __slots__ = _shown = ("engine", "kind", "pattern", "matcher", "levels", "refusal", "model", "char_kinds",
                          "char_program")

    def __init__(self, engine: str, kind: int = -1, pattern: str | None = None, matcher=None, levels: tuple = (),
                 refusal: str | None = None, model: str = "byte-level", char_kinds: tuple | None = None,
                 char_program=None):
        # kind: the scanner kind of the pre-tokenizer chain; pattern: the one split pattern, when
        # the chain is one level; matcher: spans(text) of that pattern, for "kernel+matcher";
        # char_kinds (char-level): CharBPE's kind flags for a segment at a text's start and for
        # one after an added token (they differ for Metaspace's prepend_scheme "first");
        # char_program (char-level): the normalizer's ops before that text form (NFKC, Strip,
        # Replace " {2,}", ...) as a normalize.NormalizerProgram, run before CharBPE; or None
        self._set(engine=engine, kind=kind, pattern=pattern, matcher=matcher, levels=levels, refusal=refusal,
                  model=model, char_kinds=char_kinds, char_program=char_program)

    def _key(self) -> tuple:
        return tuple(getattr(self, n) for n in self._shown)

    @property
    def drops(self) -> bool:
        """Whether a level removes pieces (the kernel's piece ends then mark them)."""
        return any(level.drop for level in self.levels)

    @property
    def on_kernel(self) -> bool:
        return self.engine != "pipeline"

    @property
    def byte_level_kernel(self) -> bool:
        """The byte-level kernel encodes (the scanner chain and merge of _core)."""
        return self.engine != "pipeline" and self.model == "byte-level"

    def describe(self) -> str:
        """What `Tokenizer.engine` reports."""
        if self.engine == "pipeline":
            return f"pipeline ({self.refusal})"
        return self.engine


def pipeline(refusal: str) -> Plan:
    return Plan("pipeline", refusal=refusal)
