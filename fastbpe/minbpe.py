"""minbpe-compatible tokenizers: ``BasicTokenizer``, ``RegexTokenizer``, ``GPT4Tokenizer``.

Same methods, attributes (``merges``, ``vocab``, ``pattern``, ``special_tokens``) and files
as Karpathy's minbpe, and the same merges from ``train`` -- including minbpe's tie rule:
among pairs with equal counts, the one whose first occurrence in the current text comes
first (what ``max(stats, key=stats.get)`` over an insertion-ordered dict gives).  The
work runs in the Cython kernels:

* ``BasicTokenizer.train`` -- ``_train.SequenceTrainer`` (Re-Pair style: the positions
  of every pair are indexed, so a merge touches only its own occurrences);
* ``RegexTokenizer.train`` -- ``_train.PieceTrainer`` over unique pieces in order of
  first appearance, with the first-occurrence tie rule;
* encoding -- ``_core.BPETable.from_merges`` (listed merges only, lowest index first).

Differences on purpose: a failed check raises ``ValueError`` instead of
``AssertionError`` (``SpecialTokenError`` is both, so old ``except AssertionError`` code
still works); training stops early, instead of crashing, when nothing is left to merge;
files are written atomically.
"""
from __future__ import annotations

import os

import numpy as np
import regex

from . import _train, alternatives
from ._core import BPETable
from .formats import minbpe_files
from .patterns import GPT2_PATTERN, GPT4_PATTERN
from .progress import Progress, wants_progress

__all__ = ["Tokenizer", "BasicTokenizer", "RegexTokenizer", "GPT4Tokenizer",
           "GPT2_SPLIT_PATTERN", "GPT4_SPLIT_PATTERN", "GPT4_SPECIAL_TOKENS",
           "SpecialTokenError"]

GPT2_SPLIT_PATTERN = GPT2_PATTERN
GPT4_SPLIT_PATTERN = GPT4_PATTERN
GPT4_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


class SpecialTokenError(ValueError, AssertionError):
    """A special token's text appeared in text encoded with allowed_special="none_raise"."""


def _check_vocab_size(vocab_size) -> int:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, (int, np.integer)):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    if vocab_size < 256:
        raise ValueError(f"vocab_size must be at least 256, got {vocab_size}")
    return int(vocab_size)


def _check_text(text) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    return text


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: replace them, as tiktoken does
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


class Tokenizer:
    """Base class: merges, vocab, special tokens, save/load -- as in minbpe."""

    def __init__(self):
        self.merges = {}          # (int, int) -> int
        self.pattern = ""         # str
        self.special_tokens = {}  # str -> int, e.g. {'<|endoftext|>': 100257}
        self.vocab = self._build_vocab()  # int -> bytes
        self._table = None
        self._table_key = None

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
        key = (id(self.merges), len(self.merges))
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
        merges = list(self.merges)
        minbpe_files.write_model(file_prefix + ".model", self.pattern, self.special_tokens,
                                 merges)
        minbpe_files.write_vocab(file_prefix + ".vocab", self.vocab, self.merges)

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


class BasicTokenizer(Tokenizer):
    """Byte-level BPE on the whole text, no splitting."""

    def train(self, text, vocab_size, verbose=False, *, show_progress=None):
        text = _check_text(text)
        vocab_size = _check_vocab_size(vocab_size)
        self._num_merges = vocab_size - 256
        trainer = _train.SequenceTrainer(np.frombuffer(_utf8(text), dtype=np.uint8))
        with Progress("merges", total=self._num_merges,
                      enabled=wants_progress(show_progress)) as bar:
            pairs, counts = trainer.train(self._num_merges, progress=bar.update)
        self._set_trained(pairs, counts, verbose)

    def decode(self, ids):
        text_bytes = b"".join(self.vocab[idx] for idx in ids)
        return text_bytes.decode("utf-8", errors="replace")

    def encode(self, text, *, dropout=None, seed=None):
        """``dropout=p``: BPE-dropout (each merge skipped with probability p; see alternatives)."""
        text = _check_text(text)
        if dropout is not None and alternatives.check_dropout(dropout, seed) > 0:
            return alternatives.dropout_fn(dropout, seed)(self._bpe_table(), [_utf8(text)])
        return self._bpe_table().encode_bytes(_utf8(text))


class RegexTokenizer(Tokenizer):
    """Split the text with a pattern first (GPT-4's by default); merges never cross pieces."""

    def __init__(self, pattern=None):
        super().__init__()
        self.pattern = GPT4_SPLIT_PATTERN if pattern is None else pattern
        self.compiled_pattern = regex.compile(self.pattern)
        self.special_tokens = {}
        self.inverse_special_tokens = {}

    def _after_load(self):
        self.compiled_pattern = regex.compile(self.pattern)
        self.inverse_special_tokens = {v: k for k, v in self.special_tokens.items()}

    def train(self, text, vocab_size, verbose=False, *, show_progress=None):
        from .trainer import count_pieces

        text = _check_text(text)
        vocab_size = _check_vocab_size(vocab_size)
        self._num_merges = vocab_size - 256
        # one thread: pieces must be numbered in order of first appearance
        counter = count_pieces([text], self.pattern, num_threads=1,
                               show_progress=show_progress)
        trainer = _train.PieceTrainer(*counter.to_arrays(), tie=_train.TIE_FIRST)
        with Progress("merges", total=self._num_merges,
                      enabled=wants_progress(show_progress)) as bar:
            pairs, counts = trainer.train(self._num_merges, progress=bar.update)
        self._set_trained(pairs, counts, verbose)

    def register_special_tokens(self, special_tokens):
        """special_tokens: str -> int, e.g. {"<|endoftext|>": 100257}."""
        self.special_tokens = special_tokens
        self.inverse_special_tokens = {v: k for k, v in special_tokens.items()}

    def decode(self, ids):
        part_bytes = []
        for idx in ids:
            if idx in self.vocab:
                part_bytes.append(self.vocab[idx])
            elif idx in self.inverse_special_tokens:
                part_bytes.append(self.inverse_special_tokens[idx].encode("utf-8"))
            else:
                raise ValueError(f"invalid token id: {idx}")
        return b"".join(part_bytes).decode("utf-8", errors="replace")

    def _encode_chunk(self, text_bytes):
        return self._bpe_table().encode_bytes(bytes(text_bytes))

    def encode_ordinary(self, text, *, dropout=None, seed=None):
        """Encoding that ignores any special tokens; ``dropout=p`` as in BasicTokenizer.encode."""
        text = _check_text(text)
        pieces = self.compiled_pattern.findall(text)
        if dropout is not None and alternatives.check_dropout(dropout, seed) > 0:
            return alternatives.dropout_fn(dropout, seed)(self._bpe_table(), [_utf8(p) for p in pieces])
        try:
            return self._bpe_table().encode_pieces(pieces)
        except UnicodeEncodeError:
            return self._bpe_table().encode_pieces(
                [_utf8(p).decode("utf-8") for p in pieces])

    def _specials_for(self, text, allowed_special):
        if allowed_special == "all":
            return self.special_tokens
        if allowed_special == "none":
            return {}
        if allowed_special == "none_raise":
            for token in self.special_tokens:
                if token in text:
                    raise SpecialTokenError(
                        f"special token {token!r} found in text; pass allowed_special="
                        f"\"all\" or a set to encode it, or \"none\" to treat it as text")
            return {}
        if isinstance(allowed_special, (set, frozenset)):
            return {k: v for k, v in self.special_tokens.items() if k in allowed_special}
        raise ValueError(f"allowed_special={allowed_special} not understood")

    def encode(self, text, allowed_special="none_raise", *, dropout=None, seed=None):
        """Like ``encode_ordinary`` but handles special tokens.  allowed_special: "all",
        "none", "none_raise" (raise if one appears in text) or a custom set."""
        text = _check_text(text)
        special = self._specials_for(text, allowed_special)
        if not special:
            return self.encode_ordinary(text, dropout=dropout, seed=seed)
        special_pattern = "(" + "|".join(regex.escape(k) for k in special) + ")"
        ids = []
        for part in regex.split(special_pattern, text):
            if part in special:
                ids.append(special[part])
            else:
                ids.extend(self.encode_ordinary(part, dropout=dropout, seed=seed))
                seed = None if seed is None else seed + 1    # other draws for the next part
        return ids


class GPT4Tokenizer(RegexTokenizer):
    """GPT-4's tokenizer (tiktoken's cl100k_base): encodes exactly like it.

    ``merges`` and ``vocab`` are minbpe's (merges recovered from the ranks, in minbpe's
    shuffled byte order); they are computed on first use."""

    def __init__(self):
        self._recovered = None
        super().__init__(pattern=GPT4_SPLIT_PATTERN)
        from . import get_encoding

        self._enc = get_encoding("cl100k_base")
        self.register_special_tokens(dict(GPT4_SPECIAL_TOKENS))

    def _build_vocab(self):
        return {}  # recovered on first use

    def _recover(self):
        if self._recovered is None:
            ranks = self._enc._mergeable_ranks
            pairs = minbpe_files.recover_merges(ranks)
            by_rank = sorted((r, t) for t, r in ranks.items() if len(t) > 1)
            merges = {pair: rank for pair, (rank, _) in zip(pairs, by_rank)}
            byte_shuffle = {i: ranks[bytes([i])] for i in range(256)}
            vocab = {idx: bytes([idx]) for idx in range(256)}
            for (p0, p1), idx in merges.items():
                vocab[idx] = vocab[p0] + vocab[p1]
            self._recovered = (merges, vocab, byte_shuffle)
        return self._recovered

    @property
    def merges(self):
        return self._recover()[0]

    @merges.setter
    def merges(self, value):  # the base __init__ assigns {}; the real ones are recovered
        pass

    @property
    def vocab(self):
        return self._recover()[1]

    @vocab.setter
    def vocab(self, value):
        pass

    @property
    def byte_shuffle(self):
        return self._recover()[2]

    @property
    def inverse_byte_shuffle(self):
        return {v: k for k, v in self.byte_shuffle.items()}

    def encode_ordinary(self, text, *, dropout=None, seed=None):
        if dropout is not None:
            return self._enc.encode(_check_text(text), disallowed_special=(), dropout=dropout, seed=seed)
        return self._enc.encode_ordinary(_check_text(text))

    def encode(self, text, allowed_special="none_raise", *, dropout=None, seed=None):
        text = _check_text(text)
        special = self._specials_for(text, allowed_special)
        return self._enc.encode(text, allowed_special=set(special), disallowed_special=(),
                                dropout=dropout, seed=seed)

    def decode(self, ids):
        return self._enc.decode(list(ids))

    def train(self, text, vocab_size, verbose=False):
        raise NotImplementedError("GPT4Tokenizer is pretrained; it cannot be trained")

    def save(self, file_prefix):
        raise NotImplementedError("GPT4Tokenizer cannot be saved.")

    def load(self, model_file):
        raise NotImplementedError("GPT4Tokenizer cannot be loaded.")

    def save_vocab(self, vocab_file):
        """minbpe's GPT4Tokenizer.save_vocab: the vocab in unshuffled bytes, for people."""
        merges, vocab, _ = self._recover()
        inverse = self.inverse_byte_shuffle
        vocab = {idx: bytes(inverse[b] for b in token) for idx, token in vocab.items()}
        minbpe_files.write_vocab(vocab_file, vocab, merges)
