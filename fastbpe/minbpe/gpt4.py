"""minbpe's ``gpt4`` module: ``GPT4Tokenizer``, tiktoken's cl100k_base in minbpe's clothes."""
from __future__ import annotations

from ..formats import hf_json, minbpe_files
from .base import check_text
from .regex import GPT4_SPLIT_PATTERN, RegexTokenizer

__all__ = ["GPT4Tokenizer", "GPT4_SPECIAL_TOKENS", "recover_merges", "bpe"]

GPT4_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def bpe(mergeable_ranks, token, max_rank=None):
    """The parts of token after BPE with only the ranks below max_rank (all when None)."""
    parts = [bytes([b]) for b in token]
    while True:
        best_i, best_rank = None, None
        for i in range(len(parts) - 1):
            rank = mergeable_ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best_rank is None or rank < best_rank):
                best_i, best_rank = i, rank
        if best_rank is None or (max_rank is not None and best_rank >= max_rank):
            break
        parts[best_i:best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    return parts


def recover_merges(mergeable_ranks):
    """{(left rank, right rank): rank} for every token longer than one byte: the last merge
    that makes it (tiktoken files keep ranks, not merges)."""
    pairs = minbpe_files.recover_merges(mergeable_ranks)
    ranks = sorted(r for t, r in mergeable_ranks.items() if len(t) > 1)
    return dict(zip(pairs, ranks))


class GPT4Tokenizer(RegexTokenizer):
    """GPT-4's tokenizer (tiktoken's cl100k_base): encodes exactly like it.

    ``merges`` and ``vocab`` are minbpe's (merges recovered from the ranks, in minbpe's
    shuffled byte order); they are computed on first use."""

    def __init__(self):
        self._recovered = None
        super().__init__(pattern=GPT4_SPLIT_PATTERN)
        from ..registry import get_encoding

        self._enc = get_encoding("cl100k_base")
        self.register_special_tokens(dict(GPT4_SPECIAL_TOKENS))

    def _build_vocab(self):
        return {}  # recovered on first use

    def tokenizer_json_document(self) -> dict:
        """cl100k_base's tokenizer.json: this tokenizer encodes with it, not with its merges."""
        return hf_json.document_from_ranks(self._enc.pattern, self._enc.mergeable_ranks, self.special_tokens)

    def _recover(self):
        if self._recovered is None:
            ranks = self._enc.mergeable_ranks
            merges = recover_merges(ranks)
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
            return self._enc.encode(check_text(text), disallowed_special=(), dropout=dropout, seed=seed)
        return self._enc.encode_ordinary(check_text(text))

    def encode(self, text, allowed_special="none_raise", *, dropout=None, seed=None):
        text = check_text(text)
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
