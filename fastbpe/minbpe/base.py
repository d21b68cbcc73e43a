"""minbpe's ``base`` module: the ``Tokenizer`` base class (merges, vocab, special tokens,
save/load) and minbpe's helpers ``get_stats``, ``merge``, ``render_token``,
``replace_control_characters``.  Encoding runs ``_core.BPETable.from_merges`` (listed merges
only, lowest index first); the table is rebuilt whenever the merges change.
"""
from __future__ import annotations

import os

import numpy as np

from .._core import BPETable
from ..formats import hf_json, minbpe_files
from ..formats.minbpe_files import render_token, replace_control_characters
from ..pure_bpe import get_stats, merge

__all__ = ["Tokenizer", "SpecialTokenError", "get_stats", "merge", "render_token",
           "replace_control_characters"]


class SpecialTokenError(ValueError, AssertionError):
    """A special token's text appeared in text encoded with allowed_special="none_raise"."""


class _Merges(dict):
    """The merges dict, counting its changes: the encode table is rebuilt whenever the count
    differs from the one it was built at (replacing or editing ``tok.merges`` in place both
    count, so the table is never stale)."""

    __slots__ = ("changes",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.changes = 0

    def _changed(self):
        self.changes += 1

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self._changed()

    def __delitem__(self, key):
        super().__delitem__(key)
        self._changed()

    def __ior__(self, other):
        self.update(other)
        return self

    def __reduce__(self):  # pickles (and deep-copies) as a plain dict of its items
        return (_Merges, (dict(self),))


def _tracked_method(name):
    def method(self, *args, **kwargs):
        result = getattr(dict, name)(self, *args, **kwargs)
        self._changed()
        return result
    method.__name__ = name
    return method


for _name in ("update", "pop", "popitem", "clear", "setdefault"):
    setattr(_Merges, _name, _tracked_method(_name))


def check_vocab_size(vocab_size) -> int:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, (int, np.integer)):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    if vocab_size < 256:
        raise ValueError(f"vocab_size must be at least 256, got {vocab_size}")
    return int(vocab_size)


def check_text(text) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    return text


class Tokenizer:
    """Base class: merges, vocab, special tokens, save/load -- as in minbpe."""

    def __init__(self):
        self._table = None
        self._table_key = None
        self.merges = {}          # (int, int) -> int
        self.pattern = ""         # str
        self.special_tokens = {}  # str -> int, e.g. {'<|endoftext|>': 100257}
        self.vocab = self._build_vocab()  # int -> bytes

    @property
    def merges(self):
        return self._merges

    @merges.setter
    def merges(self, value):
        self._merges = value if type(value) is _Merges else _Merges(value)
        self._table = None

    def tokenizer_json_document(self) -> dict:
        """This tokenizer as a Hugging Face tokenizer.json document (its merges in order)."""
        return hf_json.document_from_merges(self.pattern, self.vocab, self.merges, self.special_tokens)

    def __getstate__(self):
        # the encode table is a C object: rebuilt on first use after unpickling or copying
        state = dict(self.__dict__)
        state["_table"] = None
        state["_table_key"] = None
        return state

    def _build_vocab(self):
        vocab = {idx: bytes([idx]) for idx in range(256)}
        for (p0, p1), idx in self.merges.items():
            vocab[idx] = vocab[p0] + vocab[p1]
        for special, idx in self.special_tokens.items():
            vocab[idx] = special.encode("utf-8")
        return vocab

    # -- training -------------------------------------------------------------------------

    def _set_trained(self, pairs, counts, verbose):
        """Store kernel output as minbpe does and print minbpe's verbose log."""
        merges = {}
        vocab = {idx: bytes([idx]) for idx in range(256)}
        for i, (p0, p1) in enumerate(pairs.tolist()):
            idx = 256 + i
            merges[(p0, p1)] = idx
            vocab[idx] = vocab[p0] + vocab[p1]
        if verbose:
            n = self._num_merges
            lines = [f"merge {i + 1}/{n}: {pair} -> {idx} ({vocab[idx]}) had {c} occurrences"
                     for i, ((pair, idx), c) in enumerate(zip(merges.items(), counts.tolist()))]
            if lines:
                print("\n".join(lines))
        self.merges = merges
        self.vocab = vocab

    # -- encoding helpers -----------------------------------------------------------------

    def _bpe_table(self) -> BPETable:
        """The encode kernel for the current merges (rebuilt when ``merges`` changes)."""
        key = self._merges.changes
        if self._table is None or self._table_key != key:
            items = sorted(self.merges.items(), key=lambda kv: kv[1])
            n_ids = max([255] + [idx for _, idx in items]) + 1
            token_bytes = [None] * n_ids
            for i in range(256):
                token_bytes[i] = bytes([i])
            rows = np.zeros((len(items), 3), dtype=np.int64)
            for k, ((p0, p1), idx) in enumerate(items):
                token_bytes[idx] = token_bytes[p0] + token_bytes[p1]
                rows[k] = (p0, p1, idx)
            self._table = BPETable.from_merges(rows, token_bytes)
            self._table_key = key
        return self._table

    # -- files ----------------------------------------------------------------------------

    def save(self, file_prefix):
        """Write ``file_prefix.model`` (for ``load``) and ``file_prefix.vocab`` (for
        people), byte-identical to minbpe's."""
        file_prefix = os.fspath(file_prefix)
        minbpe_files.write_model_and_vocab(file_prefix, self.pattern, self.special_tokens,
                                           self.merges, self.vocab)

    def load(self, model_file):
        """Read a ``.model`` file written by minbpe or ``save``."""
        model_file = os.fspath(model_file)
        if not model_file.endswith(".model"):
            raise ValueError(f"expected a .model file, got {model_file!r}")
        pattern, special_tokens, merges = minbpe_files.read_model(model_file)
        self.pattern = pattern
        self.merges = {pair: 256 + i for i, pair in enumerate(merges)}
        self.special_tokens = special_tokens
        self.vocab = self._build_vocab()
        self._after_load()

    def _after_load(self):
        pass
