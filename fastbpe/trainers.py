"""HF tokenizers' BPE trainer (`tokenizers.trainers.BpeTrainer`) on fastbpe's kernels.

`BpeTrainer` holds HF's settings; `train_words` trains on counted words (the pieces a
tokenizer's normalizer and pre-tokenizer make, counted by `fastbpe.counting` or a front end)
with HF's rules, so the vocabulary, its ids and the merges in order are HF's.  The rules, read
from HF's `models/bpe/trainer.rs` (docs/training.md lists them):

* ids: the special tokens first (in order, a repeated content once), then the alphabet sorted
  by code point (a character that is a special token's content keeps that id), then one id
  per merge in order;
* the alphabet: every character of every word, weighted by the word's count, plus
  `initial_alphabet` (the first character of each string); `limit_alphabet` drops the rarest
  (HF breaks equal counts arbitrarily; here the lower code point goes first); a dropped
  character disappears from the words (its neighbours become adjacent);
* pairs are counted within words, weighted by word counts; the most frequent pair merges
  next, equal counts to the smallest (left id, right id): the kernel's TIE_PAIR over symbols
  numbered in HF's id order gives exactly that;
* training stops at `vocab_size` tokens (specials and alphabet included) or when the best
  count is below `max(min_frequency, 1)`;
* `max_token_length` L (in characters: bytes for byte-level words): a pair of two single
  characters always counts; a longer one only when its token is shorter than L (HF's
  `Word::merge` tests `len < L`), so tokens are at most max(2, L - 1) characters.

* `continuing_subword_prefix` / `end_of_word_suffix`: a character after a word's first is
  `prefix + c`, a word's last `c + suffix`, each a symbol with an id after the alphabet's in
  order of first appearance (HF's order is its hash map's: not deterministic, this is one of
  its results); a merge's token is the left part and the right part without its prefix.

The front ends (`fastbpe.hf`'s `Tokenizer.train_from_iterator`, the transformers patch) count
the words and take the result.  A token HF would build twice (a special token's text made by
merges or decoration) gets the first one's id in HF: `train_words` raises `NeedsHFTrainer`
(a ValueError) instead of giving other ids.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _train
from .formats.bytelevel import BYTE_TO_CHAR
from .progress import Progress, wants_progress

__all__ = ["BpeTrainer", "bytelevel_alphabet", "settings_of", "train_words", "TrainedBPE", "NeedsHFTrainer"]

_BYTE_CPS = np.array([ord(c) for c in BYTE_TO_CHAR], dtype=np.int64)
_ALWAYS = float("inf")   # HF counts an initial_alphabet character as usize::MAX
_CHUNK = 1 << 22         # code points handled at once when counting the alphabet


class NeedsHFTrainer(ValueError):
    """A setting whose results need HF's own trainer (continuing_subword_prefix,
    end_of_word_suffix, or a merge that rebuilds an existing token)."""


def bytelevel_alphabet() -> list[str]:
    """The 256 characters of the byte-level alphabet (HF's `pre_tokenizers.ByteLevel.alphabet()`),
    in code point order."""
    return sorted(BYTE_TO_CHAR)


def _token_content(token) -> str:
    content = token if isinstance(token, str) else getattr(token, "content", None)
    if not isinstance(content, str):
        raise TypeError(f"special tokens must be str or AddedToken, got {type(token).__name__}")
    return content


def _optional_int(name: str, value, low: int = 0):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an int >= {low} or None, not {value!r}")
    return int(value)


class BpeTrainer:
    """HF's `tokenizers.trainers.BpeTrainer`, with the same arguments and defaults, trained
    by fastbpe's kernels.  Pass it to `fastbpe.Tokenizer.train_from_iterator` / `train`.

    `show_progress=True` (HF's default) draws the bars on a terminal, as HF's do."""

    def __init__(self, vocab_size: int = 30000, min_frequency: int = 0, show_progress: bool = True,
                 special_tokens=None, limit_alphabet: int | None = None, initial_alphabet=None,
                 continuing_subword_prefix: str | None = None, end_of_word_suffix: str | None = None,
                 max_token_length: int | None = None):
        self.vocab_size = _optional_int("vocab_size", vocab_size)
        if self.vocab_size is None:
            raise ValueError("vocab_size must be an int >= 0")
        self.min_frequency = _optional_int("min_frequency", min_frequency) or 0
        self.show_progress = bool(show_progress)
        if isinstance(special_tokens, (str, bytes)):
            raise TypeError("special_tokens must be a list of str or AddedToken")
        self.special_tokens = list(special_tokens or [])
        for t in self.special_tokens:
            _token_content(t)
        self.limit_alphabet = _optional_int("limit_alphabet", limit_alphabet)
        if isinstance(initial_alphabet, str):
            raise TypeError("initial_alphabet must be a list of str")
        self.initial_alphabet = [s for s in (initial_alphabet or [])]
        for s in self.initial_alphabet:
            if not isinstance(s, str):
                raise TypeError(f"initial_alphabet must hold str, got {type(s).__name__}")
        for name, value in (("continuing_subword_prefix", continuing_subword_prefix),
                            ("end_of_word_suffix", end_of_word_suffix)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a str or None")
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.max_token_length = _optional_int("max_token_length", max_token_length)

    FIELDS = ("vocab_size", "min_frequency", "show_progress", "special_tokens", "limit_alphabet",
               "initial_alphabet", "continuing_subword_prefix", "end_of_word_suffix", "max_token_length")

    @classmethod
    def from_hf(cls, trainer) -> "BpeTrainer":
        """The settings of an HF `tokenizers.trainers.BpeTrainer` (read, not kept)."""
        return cls(**{name: getattr(trainer, name) for name in cls.FIELDS})

    def settings(self) -> dict:
        """The settings that are set (HF's BpeTrainer takes these keyword arguments)."""
        return {name: getattr(self, name) for name in self.FIELDS if getattr(self, name) is not None}

    def alphabet_chars(self) -> list[str]:
        """initial_alphabet as HF reads it: the first character of each non-empty string."""
        return [s[0] for s in self.initial_alphabet if s]

    def __repr__(self) -> str:
        args = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS
                         if name not in ("special_tokens", "initial_alphabet"))
        return (f"BpeTrainer({args}, special_tokens={[_token_content(t) for t in self.special_tokens]!r}, "
                f"initial_alphabet=<{len(self.initial_alphabet)} chars>)")


def settings_of(trainer) -> BpeTrainer:
    """A trainer argument as fastbpe's BpeTrainer: None (HF's defaults), fastbpe's own, or an HF
    `tokenizers.trainers.BpeTrainer` (its settings); other trainers are refused."""
    if trainer is None:
        return BpeTrainer()
    if isinstance(trainer, BpeTrainer):
        return trainer
    if type(trainer).__module__.split(".")[0] == "tokenizers":
        if type(trainer).__name__ != "BpeTrainer":
            raise TypeError(f"fastbpe trains BPE models: {type(trainer).__name__} is not a BpeTrainer")
        return BpeTrainer.from_hf(trainer)
    raise TypeError(f"trainer must be a fastbpe.trainers.BpeTrainer or tokenizers.trainers.BpeTrainer, "
                    f"not {type(trainer).__name__}")


@dataclass
class TrainedBPE:
    """What training gives: the vocabulary {token: id}, the merges in order (pairs of tokens)
    and the special tokens to add (as given to the trainer)."""
    vocab: dict
    merges: list
    special_tokens: list


# ---------------------------------------------------------------------------------------
# words -> code points -> kernel symbols
# ---------------------------------------------------------------------------------------

def _words_of(counter, chars_of_bytes: bool):
    """(characters as code points, characters per word, word counts) of a PieceCounter whose
    pieces are words: byte-level words as their bytes (each byte one character of the
    byte-level alphabet) or any words as their UTF-8."""
    arena, lengths, counts = counter.export()
    data = np.frombuffer(arena, dtype=np.uint8)
    if chars_of_bytes:
        return data, lengths, counts
    cps = np.frombuffer(arena.decode("utf-8").encode("utf-32-le"), dtype=np.uint32)
    lead = np.concatenate(([0], np.cumsum((data & 0xC0) != 0x80)))
    ends = np.concatenate(([0], np.cumsum(lengths)))
    return cps, np.diff(lead[ends]), counts


def _alphabet_counts(symbols, lengths, counts, chars_of_bytes: bool) -> dict:
    """{code point: count over all words}; in chunks of words, so the weights stay small."""
    starts = np.concatenate(([0], np.cumsum(lengths)))
    totals: dict = {}
    w = 0
    while w < len(lengths):
        # the words whose characters start within the next _CHUNK
        end = max(int(np.searchsorted(starts, starts[w] + _CHUNK, side="right")) - 1, w + 1)
        part = symbols[starts[w]:starts[end]]
        weights = np.repeat(counts[w:end], lengths[w:end]).astype(np.float64)
        if chars_of_bytes:
            found = np.bincount(part, weights=weights, minlength=256)
            keys = np.nonzero(found)[0]
            pairs = zip(_BYTE_CPS[keys].tolist(), found[keys].tolist())
        else:
            keys, inverse = np.unique(part, return_inverse=True)
            pairs = zip(keys.tolist(), np.bincount(inverse, weights=weights).tolist())
        for cp, c in pairs:
            totals[cp] = totals.get(cp, 0) + c
        w = end
    return {cp: c for cp, c in totals.items() if c > 0}


def _ids_before_merges(settings: BpeTrainer, alphabet: dict) -> tuple[dict, list]:
    """HF's first ids: special tokens, then the kept alphabet by code point.  Returns the
    vocabulary so far and the kept characters."""
    vocab: dict = {}
    for token in settings.special_tokens:
        vocab.setdefault(_token_content(token), len(vocab))
    kept = list(alphabet)
    to_remove = max(0, len(kept) - settings.limit_alphabet) if settings.limit_alphabet is not None else 0
    if to_remove:
        kept.sort(key=lambda cp: (alphabet[cp], cp))
        kept = kept[to_remove:]
    kept.sort()
    for cp in kept:
        vocab.setdefault(chr(cp), len(vocab))
    return vocab, kept


def _kernel_input(symbols, lengths, counts, lut):
    """Words as kernel symbols (dropped characters removed), only words of 2+ symbols."""
    toks = lut[symbols]
    keep = toks >= 0
    if not keep.all():
        cum = np.concatenate(([0], np.cumsum(keep)))
        ends = np.concatenate(([0], np.cumsum(lengths)))
        lengths = np.diff(cum[ends])
        toks = toks[keep]
    long_enough = lengths >= 2
    if not long_enough.all():
        toks = toks[np.repeat(long_enough, lengths)]
        lengths, counts = lengths[long_enough], counts[long_enough]
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    return np.ascontiguousarray(toks, dtype=np.int32), offsets, np.ascontiguousarray(counts, dtype=np.int64)


def _kernel_max_length(max_token_length):
    """HF's `max_token_length` L as the kernel's cap: pairs of two characters always count,
    longer tokens must be shorter than L."""
    if max_token_length is None:
        return 0
    return max(2, max_token_length - 1)


def _decorated(symbols, lengths, lut, settings: BpeTrainer, vocab: dict, n_base: int, chars: list):
    """HF's continuing_subword_prefix / end_of_word_suffix: a character after a word's first
    is `prefix + c`, a word's last is `c + suffix` (both from the positions in the whole word,
    before limit_alphabet drops characters).  Each decorated string is a symbol of its own, with
    an id after the alphabet's in order of first appearance (HF's order is that of its hash
    map's walk over the words: this is one of them).  Returns the words' kernel symbols (-1:
    dropped) and the decorated strings, kernel symbols n_base, n_base + 1, ..."""
    prefix, suffix = settings.continuing_subword_prefix or "", settings.end_of_word_suffix or ""
    ends = np.cumsum(lengths)
    starts = ends - lengths
    n = len(symbols)
    flags = np.zeros(n, dtype=np.int64)
    if prefix:
        flags[:] = 1
        flags[starts[lengths > 0]] = 0
    if suffix:
        flags[ends[lengths > 0] - 1] += 2
    toks = lut[symbols]
    decorated = (flags > 0) & (toks >= 0)
    keys = toks[decorated] * 4 + flags[decorated]
    found, first = np.unique(keys, return_index=True)
    order = found[np.argsort(first, kind="stable")]
    strings = []
    for key in order.tolist():
        base, flag = divmod(key, 4)
        text = (prefix if flag & 1 else "") + chars[base] + (suffix if flag & 2 else "")
        if text in vocab:
            raise NeedsHFTrainer(f"the decorated character {text!r} is a special token "
                                 "(HF gives it that token's id)")
        vocab[text] = len(vocab)
        strings.append(text)
    ids = np.full(4 * max(n_base, 1), -1, dtype=np.int64)
    ids[order] = n_base + np.arange(len(order))
    toks[decorated] = ids[keys]
    return toks, strings


def train_words(counter, settings: BpeTrainer, *, chars_of_bytes: bool) -> TrainedBPE:
    """Train on counted words (a `fastbpe._count.PieceCounter`) with HF's BpeTrainer rules.
    ``chars_of_bytes``: the pieces are bytes standing for byte-level characters (the C
    scanner's pieces of a ByteLevel pipeline); else each piece is a word's UTF-8."""
    symbols, lengths, counts = _words_of(counter, chars_of_bytes)
    alphabet = _alphabet_counts(symbols, lengths, counts, chars_of_bytes)
    for c in settings.alphabet_chars():
        alphabet[ord(c)] = _ALWAYS
    vocab, kept = _ids_before_merges(settings, alphabet)
    # kernel symbols numbered in HF's id order, so that the kernel's tie rule is HF's
    by_id = sorted(kept, key=lambda cp: vocab[chr(cp)])
    if chars_of_bytes:
        lut = np.full(256, -1, dtype=np.int64)
        where = {cp: k for k, cp in enumerate(by_id)}
        for b, cp in enumerate(_BYTE_CPS.tolist()):
            lut[b] = where.get(cp, -1)
    else:
        lut_keys = np.array(sorted(alphabet), dtype=np.int64)   # every character seen, and the initial ones
        lut_vals = np.full(len(lut_keys), -1, dtype=np.int64)
        for k, cp in enumerate(by_id):
            lut_vals[np.searchsorted(lut_keys, cp)] = k
        symbols = np.searchsorted(lut_keys, symbols)
        lut = lut_vals
    strings = [chr(cp) for cp in by_id]
    if settings.continuing_subword_prefix or settings.end_of_word_suffix:
        toks, more = _decorated(symbols, lengths, lut, settings, vocab, len(by_id), strings)
        strings += more
        # the words are kernel symbols now; a dropped character points at the lut's -1
        symbols = np.where(toks >= 0, toks, len(strings))
        lut = np.append(np.arange(len(strings), dtype=np.int64), -1)
    toks, offsets, word_counts = _kernel_input(symbols, lengths, counts, lut)
    del symbols
    num_merges = max(0, settings.vocab_size - len(vocab))
    num_merges = min(num_merges, len(toks) - (len(offsets) - 1))   # no more than the words allow
    prefix = settings.continuing_subword_prefix or ""
    merges = []
    if num_merges > 0 and len(strings):
        trainer = _train.PieceTrainer(toks, offsets, word_counts, tie=_train.TIE_PAIR, n_symbols=len(strings))
        del toks, offsets, word_counts
        with Progress("merges", total=num_merges, enabled=wants_progress(None if settings.show_progress else False)) as bar:
            pairs, _ = trainer.train(num_merges, min_frequency=settings.min_frequency,
                                     max_token_length=_kernel_max_length(settings.max_token_length),
                                     progress=bar.update)
        for a, b in pairs.tolist():
            right = strings[b]
            if prefix and right.startswith(prefix):   # HF: the right part loses its prefix
                right = right[len(prefix):]
            token = strings[a] + right
            if token in vocab:
                raise NeedsHFTrainer(f"merge {len(merges)} rebuilds the existing token {token!r} "
                                     "(HF gives it that token's id)")
            vocab[token] = len(vocab)
            strings.append(token)
            merges.append((strings[a], strings[b]))
    return TrainedBPE(vocab, merges, list(settings.special_tokens))
