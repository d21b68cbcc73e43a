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

from dataclasses import dataclass, field


class NotLowered(ValueError):
    """A stage that has no kernel form (the message names the stage and says why)."""


@dataclass(frozen=True)
class Level:
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
    pattern: str
    dialect: str = "regex"
    byte_level: bool = False
    builtin: int = -1
    members: object = field(default=None, compare=False, hash=False, repr=False)
    drop: str | None = None

    @property
    def key(self) -> tuple:
        return (self.pattern, self.dialect, self.byte_level, self.builtin, self.drop)


@dataclass(frozen=True)
class Plan:
    """What the kernel runs for one tokenizer.  `engine` is "kernel" (one GIL-free call a
    text or batch), "kernel+matcher" (the single split is matched in Python, the kernel
    merges: a pattern outside the compiled subset), or "pipeline" (`refusal` says which
    stage did not lower, and why).  `model` says which kernel: "byte-level" (the scanner
    chain `kind`, then the byte-level merge) or "char-level" (`_char_bpe.CharBPE`: the
    normalizer and pre-tokenizer lower to its text form, `char_kinds`)."""
    engine: str
    kind: int = -1                 # the scanner kind of the pre-tokenizer chain
    pattern: str | None = None     # the one split pattern, when the chain is one level
    matcher: object = None         # spans(text) of that pattern, for "kernel+matcher"
    levels: tuple = ()
    refusal: str | None = None
    model: str = "byte-level"
    # char-level: CharBPE's kind flags for a segment at a text's start and for one after an
    # added token (they differ for Metaspace's prepend_scheme "first")
    char_kinds: tuple | None = None

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
