"""minbpe's ``regex`` module: ``RegexTokenizer``, which splits text with a pattern first.

Training runs ``_train.PieceTrainer`` over unique pieces in order of first appearance, with
minbpe's tie rule (first occurrence wins)."""
from __future__ import annotations

import regex

from .. import _train, alternatives
from ..patterns import GPT2_PATTERN, GPT4_PATTERN
from ..pretokenize import whole_matches
from ..progress import Progress, wants_progress
from ..text import utf8_bytes
from .base import SpecialTokenError, Tokenizer, check_text, check_vocab_size

__all__ = ["RegexTokenizer", "GPT2_SPLIT_PATTERN", "GPT4_SPLIT_PATTERN"]

GPT2_SPLIT_PATTERN = GPT2_PATTERN
GPT4_SPLIT_PATTERN = GPT4_PATTERN


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
        from ..trainer import count_pieces

        text = check_text(text)
        vocab_size = check_vocab_size(vocab_size)
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
        text = check_text(text)
        pieces = whole_matches(self.compiled_pattern)(text)  # as training splits: whole matches
        if dropout is not None and alternatives.check_dropout(dropout, seed) > 0:
            return alternatives.dropout_fn(dropout, seed)(self._bpe_table(), [utf8_bytes(p) for p in pieces])
        try:
            return self._bpe_table().encode_pieces(pieces)
        except UnicodeEncodeError:
            return self._bpe_table().encode_pieces(
                [utf8_bytes(p).decode("utf-8") for p in pieces])

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
        text = check_text(text)
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
                seed = None if seed is None else seed + 1  # other draws for the next part
        return ids
