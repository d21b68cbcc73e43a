"""mistral-common's `Tekkenizer` on fastbpe's kernels: a tekken.json file (formats/tekken.py)
becomes a tiktoken-style `fastbpe.Encoding` whose ordinary ids are the file's ranks plus the
number of special tokens, and the special ids below them are handled as mistral-common does:
never matched in text by `encode` (text that spells "<s>" is ordinary text), added as BOS/EOS
when asked, and kept, skipped or refused by `decode` (`SpecialTokenPolicy`)."""
from __future__ import annotations

import enum
import os
from itertools import groupby

from ..encoding import Encoding
from ..formats.tekken import TekkenFile, read_tekken


class SpecialTokenPolicy(str, enum.Enum):
    """What `decode` does with special ids (mistral-common's names and values: its enum and
    the strings "ignore", "keep", "raise" are accepted)."""
    IGNORE = "ignore"
    KEEP = "keep"
    RAISE = "raise"

    @classmethod
    def validate(cls, policy) -> "SpecialTokenPolicy":
        try:
            return cls(getattr(policy, "value", policy))
        except ValueError:
            raise ValueError(f"Invalid `special_token_policy` {policy!r}. Expected one of: 'ignore', 'keep', 'raise'.") from None


class Tekkenizer:
    """A tekken.json vocabulary with mistral-common's Tekkenizer interface."""

    def __init__(self, data: TekkenFile):
        self._data = data
        n = self.num_special_tokens = len(data.special_tokens)
        self._special_ids = {text: i for i, (text, _) in enumerate(data.special_tokens)}
        self._encoding = Encoding(data.name, pat_str=data.pattern,
                                  mergeable_ranks={b: i + n for i, b in enumerate(data.token_bytes)},
                                  special_tokens=dict(self._special_ids))
        self.n_words = n + len(data.token_bytes)
        self.special_token_policy = SpecialTokenPolicy.IGNORE
        self._vocab = None

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "Tekkenizer":
        return cls(read_tekken(path))

    # -- ids ----------------------------------------------------------------------------------

    def encode(self, s: str, bos: bool, eos: bool) -> list[int]:
        """The ids of s (special tokens' text is ordinary text), with BOS/EOS when asked."""
        ids = self._encoding.encode_ordinary(s)
        if bos:
            ids.insert(0, self.bos_id)
        if eos:
            ids.append(self.eos_id)
        return ids

    def encode_batch(self, texts: list[str], bos: bool = False, eos: bool = False,
                     num_threads: int | None = None) -> list[list[int]]:
        """`encode` of many texts, on threads (not in mistral-common)."""
        out = self._encoding.encode_ordinary_batch(texts, num_threads=num_threads or 8)
        if bos or eos:
            out = [([self.bos_id] if bos else []) + ids + ([self.eos_id] if eos else []) for ids in out]
        return out

    def to_encoding(self) -> Encoding:
        """The tiktoken-style Encoding: ordinary ids as `encode`, special tokens by their text
        (`allowed_special`), ids below `num_special_tokens`."""
        return self._encoding

    # -- special tokens -----------------------------------------------------------------------

    @property
    def bos_id(self) -> int:
        return self.get_special_token("<s>")

    @property
    def eos_id(self) -> int:
        return self.get_special_token("</s>")

    @property
    def pad_id(self) -> int:
        return self.get_special_token("<pad>")

    @property
    def unk_id(self) -> int:
        return self.get_special_token("<unk>")

    @property
    def special_ids(self) -> set[int]:
        return set(range(self.num_special_tokens))

    @property
    def version(self) -> str:
        return self._data.version

    def get_special_token(self, s: str) -> int:
        if s not in self._special_ids:
            raise ValueError(f"Unknown control token {s}")
        return self._special_ids[s]

    get_control_token = get_special_token

    def is_special(self, token) -> bool:
        if isinstance(token, str):
            return token in self._special_ids
        return 0 <= int(token) < self.num_special_tokens

    def is_byte(self, token_id: int) -> bool:
        return 0 <= token_id - self.num_special_tokens < 256

    # -- text ---------------------------------------------------------------------------------

    def decode(self, tokens: list[int], special_token_policy=SpecialTokenPolicy.IGNORE) -> str:
        """The text of tokens; special ids kept as their text, skipped, or a ValueError."""
        policy = SpecialTokenPolicy.validate(special_token_policy)
        n, out = self.num_special_tokens, []
        for special, group in groupby(tokens, lambda t: t < n):
            group = list(group)
            if not special:
                out.append(self._encoding.decode(group))
            elif policy == SpecialTokenPolicy.RAISE:
                raise ValueError(f"Decoding `tokens` that contain special tokens ({group}) is not allowed")
            elif policy == SpecialTokenPolicy.KEEP:
                out.extend(self._data.special_tokens[t][0] for t in group)
        return "".join(out)

    def id_to_piece(self, token_id: int) -> str:
        return self.decode([token_id], SpecialTokenPolicy.KEEP)

    def id_to_byte_piece(self, token_id: int, special_token_policy=SpecialTokenPolicy.IGNORE) -> bytes:
        if token_id < self.num_special_tokens:
            policy = SpecialTokenPolicy.validate(special_token_policy)
            if policy == SpecialTokenPolicy.KEEP:
                return self._data.special_tokens[token_id][0].encode("utf-8")
            if policy == SpecialTokenPolicy.RAISE:
                raise ValueError(f"{token_id} is a special token")
            return b""
        return self._encoding.decode_single_token_bytes(token_id)

    def vocab(self) -> list[str]:
        if self._vocab is None:
            self._vocab = [self.id_to_piece(i) for i in range(self.n_words)]
        return self._vocab
