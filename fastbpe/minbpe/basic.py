"""minbpe's ``basic`` module: ``BasicTokenizer``, byte-level BPE on the whole text.

Training runs ``_train.SequenceTrainer`` (Re-Pair style: the positions of every pair are
indexed, so a merge touches only its own occurrences)."""
from __future__ import annotations

import numpy as np

from .. import _train, alternatives
from ..progress import Progress, wants_progress
from ..text import utf8_bytes
from .base import Tokenizer, check_text, check_vocab_size

__all__ = ["BasicTokenizer"]


class BasicTokenizer(Tokenizer):
    """Byte-level BPE on the whole text, no splitting."""

    def train(self, text, vocab_size, verbose=False, *, show_progress=None):
        text = check_text(text)
        vocab_size = check_vocab_size(vocab_size)
        self._num_merges = vocab_size - 256
        trainer = _train.SequenceTrainer(np.frombuffer(utf8_bytes(text), dtype=np.uint8))
        with Progress("merges", total=self._num_merges,
                      enabled=wants_progress(show_progress)) as bar:
            pairs, counts = trainer.train(self._num_merges, progress=bar.update)
        self._set_trained(pairs, counts, verbose)

    def decode(self, ids):
        text_bytes = b"".join(self.vocab[idx] for idx in ids)
        return text_bytes.decode("utf-8", errors="replace")

    def encode(self, text, *, dropout=None, seed=None):
        """``dropout=p``: BPE-dropout (each merge skipped with probability p; see alternatives)."""
        text = check_text(text)
        if dropout is not None and alternatives.check_dropout(dropout, seed) > 0:
            return alternatives.dropout_fn(dropout, seed)(self._bpe_table(), [utf8_bytes(text)])
        return self._bpe_table().encode_bytes(utf8_bytes(text))
