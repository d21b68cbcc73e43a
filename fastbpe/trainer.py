"""Training front end: texts -> piece counts -> merge kernel -> Encoding.

The two steps are separate on purpose:

1. *Counting* (:mod:`fastbpe.counting`) splits each text with the pattern and counts
   unique pieces.  Counts merge by addition, so this step can run elsewhere
   (``count_pieces`` on shards, then ``train_from_counts`` on the summed mapping).
2. *Merging* runs :class:`fastbpe._train.PieceTrainer` over the unique pieces without
   the GIL.

Ids: 0..255 are the raw bytes, then one id per merge in order, then the special tokens.
``vocab_size`` counts all three.  Ties between pairs with equal counts go to the
smallest (left id, right id), as in HF tokenizers, rustbpe and bpeasy, so on the same
documents and pattern the vocabulary equals rustbpe's.

The result is a :class:`fastbpe.bpe_model.BPEModel` (saved and loaded there), returned as an
Encoding.  This module re-exports the counting and model names it always had.
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping

import numpy as np

from . import _count, _train
from .bpe_model import NO_MERGE, BPEModel, as_model, load_model, save_model
from .counting import compile_pattern, count_files, count_pieces, read_blocks
from .patterns import GPT4_PATTERN
from .progress import Progress, wants_progress
from .text import fix_surrogates

__all__ = [
    "BPEModel",
    "train",
    "train_files",
    "train_from_counts",
    "train_model",
    "count_pieces",
    "count_files",
    "save_model",
    "load_model",
    "as_model",
    "check_train_args",
    "compile_pattern",
    "read_blocks",
    "NO_MERGE",
]

_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1


# ---------------------------------------------------------------------------------------
# argument checks
# ---------------------------------------------------------------------------------------

def _check_special_tokens(special_tokens) -> list:
    if special_tokens is None:
        return []
    if isinstance(special_tokens, (str, bytes)):
        raise TypeError("special_tokens must be an iterable of str, not a single string")
    out = []
    for s in special_tokens:
        if not isinstance(s, str):
            raise TypeError(f"special tokens must be str, got {type(s).__name__}")
        if not s:
            raise ValueError("a special token cannot be empty")
        if s in out:
            raise ValueError(f"duplicate special token {s!r}")
        out.append(s)
    return out


def check_train_args(vocab_size, special_tokens, min_frequency, max_token_length):
    specials = _check_special_tokens(special_tokens)
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, (int, np.integer)):
        raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
    if vocab_size < 256 + len(specials):
        raise ValueError(
            f"vocab_size={vocab_size} is too small: it must be at least 256 (the byte "
            f"tokens) + {len(specials)} special token(s) = {256 + len(specials)}")
    if vocab_size > _INT32_MAX:
        raise ValueError(f"vocab_size={vocab_size} is too large: ids are 32-bit, at most {_INT32_MAX}")
    if min_frequency is None:
        min_frequency = 0
    if (isinstance(min_frequency, bool) or not isinstance(min_frequency, (int, np.integer))
            or not 0 <= min_frequency <= _INT64_MAX):
        raise ValueError(f"min_frequency must be an int in 0..{_INT64_MAX} (counts are 64-bit), "
                         f"not {min_frequency!r}")
    if max_token_length is not None and (
            isinstance(max_token_length, bool)
            or not isinstance(max_token_length, (int, np.integer))
            or not 1 <= max_token_length <= _INT32_MAX):
        raise ValueError(f"max_token_length must be an int in 1..{_INT32_MAX} or None "
                         "(the kernel stores it in 32 bits)")
    return int(vocab_size), specials, int(min_frequency), int(max_token_length or 0)


# ---------------------------------------------------------------------------------------
# step 2: merging
# ---------------------------------------------------------------------------------------

def _counts_to_counter(counts) -> "_count.PieceCounter":
    if isinstance(counts, _count.PieceCounter):
        return counts
    if not isinstance(counts, Mapping):
        raise TypeError("counts must be a mapping of piece (str or bytes) -> count")
    counter = _count.PieceCounter()
    pair_total = 0  # the sum of all pair counts bounds every count the merge kernel keeps
    for piece, c in counts.items():
        if isinstance(piece, str):
            piece = fix_surrogates(piece).encode("utf-8") if not piece.isascii() else piece.encode()
        elif not isinstance(piece, (bytes, bytearray, memoryview)):
            raise TypeError(f"pieces must be str or bytes, got {type(piece).__name__}")
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)):
            raise TypeError(f"counts must be ints, got {type(c).__name__}")
        if c < 0:
            raise ValueError("counts must be non-negative")
        pair_total += int(c) * max(len(piece), 1)
        if pair_total > _INT64_MAX:
            raise ValueError("counts too large: the pair counts would overflow 64 bits")
        counter.add_bytes(bytes(piece), int(c))
    return counter


def _merge(counter, num_merges, min_frequency, max_token_length, tie, show_progress):
    if counter.total == 0:
        raise ValueError("no pieces to train on: the corpus is empty, or the split pattern "
                         "matched none of its text")
    tokens, offsets, counts = counter.to_arrays()
    # each merge shortens some piece by a symbol: no more merges than that can happen, so a
    # huge vocab_size asks for no more memory than the corpus gives
    num_merges = min(num_merges, len(tokens) - (len(offsets) - 1))
    trainer = _train.PieceTrainer(tokens, offsets, counts, tie=tie)
    with Progress("merges", total=num_merges, enabled=wants_progress(show_progress)) as bar:
        return trainer.train(num_merges, min_frequency=min_frequency,
                             max_token_length=max_token_length, progress=bar.update)


def train_model(counts, vocab_size, *, pattern=GPT4_PATTERN, special_tokens=None,
                min_frequency=0, max_token_length=None, show_progress=None,
                tie=_train.TIE_PAIR) -> BPEModel:
    """Run the merge kernel on piece counts (a PieceCounter or a mapping) -> BPEModel."""
    vocab_size, specials, min_frequency, max_len = check_train_args(
        vocab_size, special_tokens, min_frequency, max_token_length)
    counter = _counts_to_counter(counts)
    num_merges = vocab_size - 256 - len(specials)
    pairs, merge_counts = _merge(counter, num_merges, min_frequency, max_len, tie,
                                 show_progress)
    if len(pairs) < num_merges:  # the CLI shows this warning too (one source for both)
        why = (f"no pair occurs at least {min_frequency} times" if min_frequency > 1
               else "no pair left to merge")
        warnings.warn(f"the corpus yields only {256 + len(pairs) + len(specials)} tokens of the "
                      f"{vocab_size} asked for ({why})", UserWarning, stacklevel=3)
    first_special = 256 + len(pairs)
    return BPEModel(merges=pairs, pattern=pattern,
                    special_tokens={s: first_special + i for i, s in enumerate(specials)},
                    merge_counts=merge_counts)


def train_from_counts(counts, vocab_size, *, pattern=GPT4_PATTERN, special_tokens=None,
                      min_frequency=0, max_token_length=None, show_progress=None,
                      name="fastbpe-trained"):
    """Train from piece counts: a mapping {piece (str or bytes): count}, e.g. summed from
    ``count_pieces(...).to_dict()`` run on many shards.  ``pattern`` is only recorded in
    the Encoding (the pieces are already split).  Returns an Encoding."""
    return train_model(counts, vocab_size, pattern=pattern, special_tokens=special_tokens,
                       min_frequency=min_frequency, max_token_length=max_token_length,
                       show_progress=show_progress).to_encoding(name)


def train(texts: Iterable[str], vocab_size: int, *, pattern: str = GPT4_PATTERN,
          special_tokens=None, min_frequency: int = 0, max_token_length=None,
          show_progress=None, num_threads=None, name: str = "fastbpe-trained"):
    """Train a byte-level BPE on an iterable of str (consumed as a stream).

    ``vocab_size`` counts the 256 byte tokens, the merges and the special tokens.
    Training stops early if no pair occurs at least ``max(min_frequency, 1)`` times.
    ``max_token_length`` caps the byte length of merged tokens.  ``show_progress=None``
    draws a progress bar only on an interactive terminal.  Returns an Encoding; its
    ``bpe_model`` attribute (when settable) holds the :class:`BPEModel` with the merges.
    """
    check_train_args(vocab_size, special_tokens, min_frequency, max_token_length)
    counter = count_pieces(texts, pattern, show_progress=show_progress,
                           num_threads=num_threads)
    return train_model(counter, vocab_size, pattern=pattern, special_tokens=special_tokens,
                       min_frequency=min_frequency, max_token_length=max_token_length,
                       show_progress=show_progress).to_encoding(name)


def train_files(paths, vocab_size: int, *, pattern: str = GPT4_PATTERN, special_tokens=None,
                min_frequency: int = 0, max_token_length=None, show_progress=None,
                num_threads=None, name: str = "fastbpe-trained"):
    """Like :func:`train`, reading UTF-8 text files (read in blocks; memory stays bounded)."""
    check_train_args(vocab_size, special_tokens, min_frequency, max_token_length)
    counter = count_files(paths, pattern, show_progress=show_progress, num_threads=num_threads)
    return train_model(counter, vocab_size, pattern=pattern, special_tokens=special_tokens,
                       min_frequency=min_frequency, max_token_length=max_token_length,
                       show_progress=show_progress).to_encoding(name)
