"""tiktoken's `tiktoken._educational` module: BPE written to be read, not to be fast.

`bpe_encode` and `bpe_train` are the textbook loops (every step scans all parts), with an
optional picture of each step; `SimpleBytePairEncoding` wraps them like an `Encoding`.
Training gives tiktoken's ranks: the most frequent pair wins, the first one seen on ties.
"""
from __future__ import annotations

import collections

import regex

from .pure_bpe import merge  # replaces every (a, b) in a list; works on bytes parts too
from .visualise import visualise_tokens
from .pretokenize import whole_matches
from .formats.tiktoken_bpe import encoding_fields

__all__ = ["SimpleBytePairEncoding", "bpe_encode", "bpe_train", "visualise_tokens",
           "train_simple_encoding"]


class SimpleBytePairEncoding:
    def __init__(self, *, pat_str: str, mergeable_ranks: dict[bytes, int]) -> None:
        self.pat_str = pat_str
        self.mergeable_ranks = mergeable_ranks
        self._decoder = {rank: token for token, rank in mergeable_ranks.items()}
        self._pat = regex.compile(pat_str)

    def encode(self, text: str, visualise: str | None = "colour") -> list[int]:
        """Split text with the pattern, then BPE each piece (showing each merge step)."""
        tokens = []
        for piece in whole_matches(self._pat)(text):
            tokens.extend(bpe_encode(self.mergeable_ranks, piece.encode("utf-8"), visualise=visualise))
        return tokens

    def decode_bytes(self, tokens: list[int]) -> bytes:
        return b"".join(self._decoder[token] for token in tokens)

    def decode(self, tokens: list[int]) -> str:
        """The text of tokens; bytes that are not valid UTF-8 become U+FFFD."""
        return self.decode_bytes(tokens).decode("utf-8", errors="replace")

    def decode_tokens_bytes(self, tokens: list[int]) -> list[bytes]:
        return [self._decoder[token] for token in tokens]

    @staticmethod
    def train(training_data: str, vocab_size: int, pat_str: str) -> "SimpleBytePairEncoding":
        return SimpleBytePairEncoding(pat_str=pat_str,
                                      mergeable_ranks=bpe_train(training_data, vocab_size, pat_str))

    @staticmethod
    def from_tiktoken(encoding) -> "SimpleBytePairEncoding":
        """From an `Encoding` or the name of one."""
        if isinstance(encoding, str):
            from .registry import get_encoding

            encoding = get_encoding(encoding)
        fields = encoding_fields(encoding)
        if fields is None:
            raise TypeError(f"expected an Encoding or its name, not {type(encoding).__name__}")
        pattern, ranks, _ = fields
        return SimpleBytePairEncoding(pat_str=pattern, mergeable_ranks=ranks)


def _show_parts(parts: list[bytes], visualise: str | None) -> None:
    if visualise in ("colour", "color"):
        visualise_tokens(parts)
    elif visualise == "simple":
        print(parts)


def bpe_encode(mergeable_ranks: dict[bytes, int], input: bytes, visualise: str | None = "colour") -> list[int]:
    """Start from single bytes; merge the adjacent pair of lowest rank until none is left."""
    parts = [bytes([b]) for b in input]
    while True:
        _show_parts(parts, visualise)
        best_i, best_rank = None, None
        for i in range(len(parts) - 1):
            rank = mergeable_ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best_rank is None or rank < best_rank):
                best_i, best_rank = i, rank
        if best_i is None:
            break
        parts[best_i:best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    if visualise:
        print()
    return [mergeable_ranks[part] for part in parts]


def bpe_train(data: str, vocab_size: int, pat_str: str, visualise: str | None = "colour") -> dict[bytes, int]:
    """Ranks for vocab_size tokens: the 256 bytes, then repeatedly the most frequent adjacent
    pair within the pieces of data (the first seen among equals) becomes a new token."""
    if vocab_size < 2**8:
        raise ValueError("vocab_size must be at least 256, so we can encode all bytes")
    ranks = {bytes([i]): i for i in range(2**8)}
    words = [[bytes([b]) for b in piece.encode("utf-8")] for piece in whole_matches(regex.compile(pat_str))(data)]
    while len(ranks) < vocab_size:
        stats = collections.Counter()
        for word in words:
            for pair in zip(word[:-1], word[1:]):
                stats[pair] += 1
        if not stats:
            break  # every piece is a single token: nothing left to merge
        best = max(stats, key=lambda pair: stats[pair])
        token = best[0] + best[1]
        ranks[token] = len(ranks)
        words = [merge(word, best, token) for word in words]
        if visualise:
            print(f"The most common pair {best[0]!r} + {best[1]!r} has a count of {stats[best]}")
            print(f"So we made {token!r} our {len(ranks)}th token")
            if visualise in ("colour", "color"):
                print("Now the first fifteen pieces of the training data look like:")
                for word in words[:15]:
                    visualise_tokens(word)
            print()
    return ranks


def train_simple_encoding() -> SimpleBytePairEncoding:
    """Train a 600-token encoding on this file's own source and show 'hello world' encoded."""
    from .patterns import GPT2_PATTERN

    with open(__file__, encoding="utf-8") as f:
        data = f.read()
    enc = SimpleBytePairEncoding.train(data, vocab_size=600, pat_str=GPT2_PATTERN)
    print("The merges that encode 'hello world':")
    tokens = enc.encode("hello world")
    if enc.decode(tokens) != "hello world":
        raise AssertionError("round trip failed")
    return enc
