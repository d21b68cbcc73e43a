"""A trained byte-level BPE (:class:`BPEModel`) and its files: save and load in fastbpe's
native JSON, ``.tiktoken``, minbpe's ``.model`` and (save only) Hugging Face's tokenizer.json."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .formats.tiktoken_bpe import encoding_fields
from .patterns import GPT4_PATTERN

__all__ = ["BPEModel", "NO_MERGE", "as_model", "save_model", "load_model"]

# a merges row for an id that no merge makes (a gap in a vocabulary's ranks)
NO_MERGE = -1


# ---------------------------------------------------------------------------------------
# the result of training
# ---------------------------------------------------------------------------------------

@dataclass
class BPEModel:
    """A trained byte-level BPE: merges in order (merge i makes id 256 + i), the split
    pattern and the special tokens (str -> id).  ``merge_counts`` holds how often each
    pair occurred when it was merged (empty when loaded from a file without them).
    ``byte_order`` gives the byte of ids 0..255 when they are not in byte order (GPT-2 and
    the OpenAI vocabularies); None means id b is byte b.  ``source`` (set by
    :func:`load_model`) lets a pickle carry the file path instead of the merges."""

    merges: np.ndarray  # rows of (left id, right id); NO_MERGE rows are unused ids
    pattern: str = GPT4_PATTERN
    special_tokens: dict = field(default_factory=dict)
    merge_counts: np.ndarray | None = None
    byte_order: bytes | None = None
    source: tuple | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        self.merges = np.ascontiguousarray(np.asarray(self.merges, dtype=np.int32).reshape(-1, 2))
        if self.byte_order is not None:
            self.byte_order = bytes(self.byte_order)
            if sorted(self.byte_order) != list(range(256)):
                raise ValueError("byte_order must hold each byte 0..255 once")
            if self.byte_order == bytes(range(256)):
                self.byte_order = None

    def __getstate__(self):
        # loaded from a file that is still as it was: pickle where to load it from (small,
        # for shipping to worker processes), else everything
        if self.source is not None and _file_stamp(self.source[0]) == self.source[3]:
            return {"source": self.source}
        state = dict(self.__dict__)
        state["source"] = None
        return state

    def __setstate__(self, state):
        if set(state) == {"source"}:
            path, fmt, pattern, stamp = state["source"]
            if _file_stamp(path) != stamp:
                raise ValueError(f"cannot unpickle the model loaded from {path!r}: the file "
                                 "has changed or is gone since it was pickled")
            state = load_model(path, fmt, pattern=pattern).__dict__
        self.__dict__.update(state)

    @property
    def n_merges(self) -> int:
        return int(self.merges.shape[0])

    @property
    def n_vocab(self) -> int:
        ids = [256 + self.n_merges - 1, *self.special_tokens.values()]
        return max(ids) + 1

    def token_bytes(self) -> list:
        """The bytes of every non-special id, in id order (None for an unused id)."""
        vocab = [bytes([b]) for b in (self.byte_order or range(256))]
        for left, right in self.merges.tolist():
            vocab.append(None if left == NO_MERGE else vocab[left] + vocab[right])
        return vocab

    def tokenizer_json_document(self) -> dict:
        """This model as a Hugging Face tokenizer.json document.  fastbpe encodes it through
        its Encoding (rank semantics), so it is exported by ranks."""
        from .formats.hf_json import document_from_ranks

        return document_from_ranks(self.pattern, self.mergeable_ranks(), self.special_tokens)

    def mergeable_ranks(self) -> dict:
        """token bytes -> id, as tiktoken wants.  If two merges made the same bytes (rare,
        possible in BPE), the first id keeps them."""
        ranks = {}
        for i, b in enumerate(self.token_bytes()):
            if b is not None:
                ranks.setdefault(b, i)
        return ranks

    def to_encoding(self, name: str = "fastbpe-trained"):
        """A tiktoken-style `fastbpe.Encoding`.  Note: it encodes with tiktoken's rank
        semantics, as rustbpe's exported vocabularies do."""
        from .encoding import Encoding

        enc = Encoding(name, pat_str=self.pattern, mergeable_ranks=self.mergeable_ranks(),
                      special_tokens=dict(self.special_tokens), pattern_dialect="regex")
        enc.bpe_model = self  # lets the savers write the exact merges
        return enc


# ---------------------------------------------------------------------------------------
# saving and loading trained models
# ---------------------------------------------------------------------------------------

_FORMATS = ("native", "tiktoken", "minbpe", "huggingface")


def _format_for(path, format, saving: bool = False):
    """The format `format` names, else the one the file name says.  Saving, a name that
    says none (``x.txt``) is refused rather than silently written in the native format."""
    if format is not None:
        if format not in _FORMATS:
            raise ValueError(f"unknown format {format!r}; use one of {_FORMATS}")
        return format
    p = os.fspath(path)
    if os.path.basename(p) == "tokenizer.json":
        return "huggingface"
    if p.endswith(".tiktoken"):
        return "tiktoken"
    if p.endswith(".model"):
        return "minbpe"
    if saving and not p.endswith(".json"):
        raise ValueError(f"{p}: the name does not say which format to write: use a name ending "
                         "in .json (fastbpe's own), .tiktoken or .model, or tokenizer.json, or "
                         "pass format= (one of " + ", ".join(_FORMATS) + ")")
    return "native"


def as_model(obj) -> BPEModel:
    """A BPEModel from a BPEModel or an Encoding (trained here: exact merges; otherwise the
    merges are recovered from the ranks, as minbpe's GPT4Tokenizer does)."""
    if isinstance(obj, BPEModel):
        return obj
    model = getattr(obj, "bpe_model", None)
    if isinstance(model, BPEModel):
        return model
    fields = encoding_fields(obj)
    if fields is None:
        raise TypeError(f"cannot save {type(obj).__name__}: not a BPEModel or Encoding")
    pattern, ranks, special_tokens = fields
    return _model_from_ranks(ranks, pattern, special_tokens)


def _model_from_ranks(ranks: dict, pattern: str, special_tokens: dict) -> BPEModel:
    """The BPEModel that gives exactly these ranks as ids.  The single bytes must be ranks
    0..255 (in any order: GPT-2's are permuted, kept as ``byte_order``), else ValueError.
    An unused rank (p50k's 50256, its special token's id) becomes a ``NO_MERGE`` row."""
    from .formats.minbpe_files import recover_merges

    byte_order = bytearray(256)
    for b in range(256):
        rank = ranks.get(bytes([b]))
        if rank is None or rank >= 256:
            raise ValueError(f"byte {b} must be one of ranks 0..255 to be saved as merges")
        byte_order[rank] = b
    merged_ranks = sorted(r for t, r in ranks.items() if len(t) > 1)
    merges = np.full((merged_ranks[-1] - 255 if merged_ranks else 0, 2), NO_MERGE, dtype=np.int32)
    for rank, pair in zip(merged_ranks, recover_merges(ranks)):
        merges[rank - 256] = pair
    return BPEModel(merges=merges, pattern=pattern,
                    special_tokens=special_tokens, byte_order=bytes(byte_order))


def _file_stamp(path) -> tuple | None:
    """(size, mtime in ns) of a file, None if it is gone: a cheap 'has it changed' check."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


def save_model(model, path, format=None) -> None:
    """Save a trained model (BPEModel or Encoding), atomically.  ``format``: "native"
    (JSON: pattern, special tokens, merges; the default for ``*.json``), "tiktoken" (the
    default for ``*.tiktoken``: the ranks, which tiktoken reads, plus ``<path>.meta.json``
    beside it with the split pattern and special tokens, which ranks cannot hold and
    `load_model` reads back), "minbpe" (``.model`` + ``.vocab`` next to it; the default for
    ``*.model``) or "huggingface" (a ``tokenizer.json`` for HF tokenizers; the default for a
    file named ``tokenizer.json``; minbpe tokenizers too).  Any other name needs
    ``format=`` (ValueError otherwise)."""
    from .formats import minbpe_files, native
    from .formats.atomic import atomic_write_many
    from .formats.tiktoken_bpe import SIDE_SUFFIX, format_side, format_tiktoken_bpe

    fmt = _format_for(path, format, saving=True)
    path = os.fspath(path)
    if fmt == "huggingface":
        from .formats.hf_json import write_tokenizer_json

        return write_tokenizer_json(path, model)
    model = as_model(model)
    merges = [tuple(m) for m in model.merges.tolist()]
    if fmt == "native":
        native.write_native(path, model.pattern, model.special_tokens, merges, model.byte_order)
    elif fmt == "tiktoken":
        atomic_write_many({path: format_tiktoken_bpe(model.mergeable_ranks()),
                           path + SIDE_SUFFIX: format_side(model.pattern, model.special_tokens)})
    else:
        if model.byte_order is not None or (model.merges == NO_MERGE).any():
            raise ValueError("minbpe's .model format cannot store a byte order other than "
                             "0..255 (as GPT-2's) or unused ids: save as native JSON or "
                             ".tiktoken instead")
        minbpe_files.write_model(path, model.pattern, model.special_tokens, merges)
        vocab = dict(enumerate(model.token_bytes()))
        for s, idx in model.special_tokens.items():
            vocab[idx] = s.encode("utf-8")
        prefix = path[:-len(".model")] if path.endswith(".model") else path
        minbpe_files.write_vocab(prefix + ".vocab", vocab,
                                 {m: 256 + i for i, m in enumerate(merges)})


def load_model(path, format=None, *, pattern=None) -> BPEModel:
    """Load a model saved by :func:`save_model` (or by minbpe, or any byte-level
    ``.tiktoken`` file).  A ``.tiktoken`` file's pattern and special tokens come from the
    ``<path>.meta.json`` save_model writes beside it; without one it has none and the
    pattern is the GPT-4 pattern.  ``pattern`` overrides the split pattern."""
    from .formats import minbpe_files, native
    from .formats.tiktoken_bpe import SIDE_SUFFIX, load_tiktoken_bpe, read_side

    fmt = _format_for(path, format)
    if fmt == "huggingface":
        raise ValueError(f"{os.fspath(path)}: load a tokenizer.json with fastbpe.Tokenizer.from_file")
    stamp = _file_stamp(path)
    byte_order = None
    if fmt == "native":
        pat, specials, merges, byte_order = native.read_native(path)
    elif fmt == "minbpe":
        pat, specials, merges = minbpe_files.read_model(path)
    else:
        side = os.fspath(path) + SIDE_SUFFIX
        pat, specials = read_side(side) if os.path.exists(side) else (GPT4_PATTERN, {})
        model = _model_from_ranks(load_tiktoken_bpe(path), pat, specials)
        merges, byte_order = model.merges, model.byte_order
    model = BPEModel(merges=np.asarray(merges, dtype=np.int32).reshape(-1, 2),
                     pattern=pat if pattern is None else pattern, special_tokens=specials,
                     byte_order=byte_order)
    model.source = (os.path.abspath(os.fspath(path)), fmt, pattern, stamp)
    return model
