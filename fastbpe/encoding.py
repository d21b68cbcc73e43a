"""`Encoding`: tiktoken's `Encoding` API (methods, special-token rules, ids) over the Cython kernel.

The class is thin: it checks arguments, applies the special-token rules, cuts text at allowed
special tokens, and hands each ordinary segment to `_core.BPETable` in one call.
"""
from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from typing import AbstractSet, Collection, Literal, Sequence

import regex

from . import alternatives
from ._core import BPETable
from .formats.tiktoken_bpe import TokensByRank
from .pretokenize import Splitter



class Encoding:
    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
    ):
        """A byte-level BPE encoding, built like `tiktoken.Encoding`.

        mergeable_ranks maps token bytes to rank (= token id); special_tokens maps special-token
        text to id.  Ids of the BPE tokens equal tiktoken's for the same arguments."""
        if not isinstance(name, str):
            raise TypeError(f"name must be str, not {type(name).__name__}")
        if not isinstance(pat_str, str):
            raise TypeError(f"pat_str must be str, not {type(pat_str).__name__}")
        self.name = name
        self._pat_str = pat_str
        self._special_tokens = dict(special_tokens)
        if isinstance(mergeable_ranks, TokensByRank):  # from our loader: the dict is made on demand
            token_bytes = mergeable_ranks
            self._ranks_dict = None
            n_mergeable = sum(t is not None for t in token_bytes)
        else:
            token_bytes = _ranks_to_list(mergeable_ranks)
            self._ranks_dict = mergeable_ranks
            n_mergeable = len(mergeable_ranks)
        self._tokens_by_rank = token_bytes
        special_bytes: dict[int, bytes] = {}
        for text, token in self._special_tokens.items():
            if not isinstance(text, str):
                raise TypeError(f"special token names must be str, got {text!r}")
            if not text:
                raise ValueError("a special token cannot be the empty string")
            if type(token) is not int or token < 0:
                raise ValueError(f"special token {text!r} has a bad id {token!r}")
            special_bytes.setdefault(token, text.encode("utf-8"))  # first name wins on decode
        self.max_token_value = max(len(token_bytes) - 1, max(self._special_tokens.values(), default=0))
        if explicit_n_vocab is not None:
            if n_mergeable + len(self._special_tokens) != explicit_n_vocab:
                raise ValueError(
                    f"explicit_n_vocab={explicit_n_vocab} but there are {n_mergeable} "
                    f"mergeable tokens and {len(self._special_tokens)} special tokens")
            if self.max_token_value != explicit_n_vocab - 1:
                raise ValueError(f"explicit_n_vocab={explicit_n_vocab} but the largest token id "
                                 f"is {self.max_token_value}")

        self._table = BPETable.from_ranks(token_bytes, special_bytes)
        self._splitter = Splitter(pat_str)
        self._special_token_values = frozenset(self._special_tokens.values())
        self._all_special = frozenset(self._special_tokens)

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # ====================
    # Encoding
    # ====================

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode text, treating special-token text as ordinary text.

        >>> enc.encode_ordinary("hello world")
        [31373, 995]
        """
        return self._encode_ordinary(text, False)

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
        dropout: float | None = None,
        seed: int | None = None,
    ) -> list[int]:
        """Encode text, with tiktoken's special-token rules.

        Special-token text listed in `allowed_special` becomes its special token; text of a
        token in `disallowed_special` (by default every special token not allowed) raises
        ValueError; any other text is encoded as ordinary text.  `dropout=p` skips each merge
        with probability p (BPE-dropout, reproducible with `seed`; see fastbpe/alternatives.py)."""
        allowed = self._check_specials(text, allowed_special, disallowed_special)
        if dropout is not None and alternatives.check_dropout(dropout, seed) > 0:
            return alternatives.encode_with(self, text, allowed, alternatives.dropout_fn(dropout, seed))
        if not allowed:
            return self._encode_ordinary(text, False)
        return self._encode_with_specials(text, allowed, False)

    def encode_shortest(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Each piece in the fewest vocabulary tokens (ties: longest first token); the same
        special-token rules as `encode`.  Decodes to `text`."""
        allowed = self._check_specials(text, allowed_special, disallowed_special)
        return alternatives.encode_with(self, text, allowed, alternatives.shortest)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> "numpy.ndarray":
        """Like `encode`, returning a numpy uint32 array (built without Python ints)."""
        allowed = self._check_specials(text, allowed_special, disallowed_special)
        if not allowed:
            return self._encode_ordinary(text, True)
        return self._encode_with_specials(text, allowed, True)

    def encode_ordinary_batch(self, text: Sequence[str], *, num_threads: int = 8) -> list[list[int]]:
        """Encode many texts on `num_threads` threads (the kernels release the GIL)."""
        _check_batch(text)
        return _parallel_map(self._encode_ordinary_many, text, self._batch_threads(num_threads))

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[list[int]]:
        """`encode` for many texts, on `num_threads` threads."""
        _check_batch(text)
        if allowed_special == "all":
            allowed_special = self._all_special
        if disallowed_special == "all":
            disallowed_special = self._all_special - frozenset(allowed_special)

        def chunk(texts: list) -> list:
            allowed = [self._check_specials(t, allowed_special, disallowed_special) for t in texts]
            if not any(allowed):
                return self._encode_ordinary_many(texts)
            return [self._encode_with_specials(t, a, False) if a else self._encode_ordinary(t, False)
                    for t, a in zip(texts, allowed)]

        return _parallel_map(chunk, text, self._batch_threads(num_threads))

    def _batch_threads(self, num_threads: int) -> int:
        """Threads worth using: with the C scanner the whole encode is GIL-free and scales;
        a pattern split by `regex` does not, because `regex` takes the GIL back for every
        match it returns, so more threads only add contention (measured: 2 threads run at
        half the speed of 1) and that path runs on one."""
        return num_threads if self._splitter.kind >= 0 else 1

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the single token whose text or bytes is given; KeyError if there is none.

        >>> enc.encode_single_token("hello")
        31373
        """
        if isinstance(text_or_bytes, str):
            as_bytes = text_or_bytes.encode("utf-8")
        elif isinstance(text_or_bytes, (bytes, bytearray, memoryview)):
            as_bytes = bytes(text_or_bytes)
        else:
            raise TypeError(f"expected str or bytes, not {type(text_or_bytes).__name__}")
        token = self._table.lookup_bytes(as_bytes)
        if token >= 0:
            return token
        try:
            return self._special_tokens[as_bytes.decode("utf-8")]
        except (UnicodeDecodeError, KeyError):
            raise KeyError(text_or_bytes) from None

    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        """BPE of one piece without splitting it with the pattern."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._table.encode_bytes(bytes(text_or_bytes))

    # ====================
    # Decoding
    # ====================

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of a sequence of tokens.

        >>> enc.decode_bytes([31373, 995])
        b'hello world'
        """
        return self._table.decode_bytes(tokens)

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """The text of a sequence of tokens; invalid UTF-8 is handled per `errors`.

        >>> enc.decode([31373, 995])
        'hello world'
        """
        return self._table.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (a token may hold part of a UTF-8 character).

        >>> enc.decode_single_token_bytes(31373)
        b'hello'
        """
        token = _as_token_id(token)
        try:
            return self._table.token_bytes(token)
        except KeyError:
            raise KeyError(str(token)) from None

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token.

        >>> enc.decode_tokens_bytes([31373, 995])
        [b'hello', b' world']
        """
        return [self.decode_single_token_bytes(token) for token in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text, and the index in it of the character where each token starts.

        A token that starts inside a UTF-8 character gets the index of that character.
        Raises UnicodeDecodeError if the tokens do not decode to valid UTF-8, like tiktoken.

        >>> enc.decode_with_offsets([31373, 995])
        ('hello world', [0, 5])
        """
        parts = self.decode_tokens_bytes(tokens)
        offsets = []
        chars = 0  # characters begun so far = bytes that are not UTF-8 continuation bytes
        for part in parts:
            starts_inside = 0x80 <= part[0] < 0xC0
            offsets.append(max(0, chars - starts_inside))
            chars += len(part) - sum(1 for b in part if 0x80 <= b < 0xC0)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace",
                     num_threads: int = 8) -> list[str]:
        """`decode` for many token lists."""
        decode = functools.partial(self.decode, errors=errors)
        return _parallel_map(lambda chunk: [decode(tokens) for tokens in chunk], batch, num_threads)

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        """`decode_bytes` for many token lists."""
        return _parallel_map(lambda chunk: [self.decode_bytes(tokens) for tokens in chunk], batch, num_threads)

    # ====================
    # Miscellaneous
    # ====================

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every mergeable token, sorted."""
        return sorted(t for t in self._tokens_by_rank if t is not None)

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        """{token bytes: rank}, as tiktoken's private attribute (code that builds a new
        Encoding from an existing one reads it)."""
        if self._ranks_dict is None:
            self._ranks_dict = self._tokens_by_rank.to_dict()
        return self._ranks_dict

    @property
    def eot_token(self) -> int:
        return self._special_tokens["<|endoftext|>"]

    @functools.cached_property
    def special_tokens_set(self) -> set[str]:
        return set(self._special_tokens)

    def is_special_token(self, token: int) -> bool:
        if not isinstance(token, int):
            raise TypeError(f"token must be int, not {type(token).__name__}")
        return token in self._special_token_values

    @property
    def n_vocab(self) -> int:
        """One more than the largest token id (ids need not be dense)."""
        return self.max_token_value + 1

    # ====================
    # Private
    # ====================

    def _encode_ordinary(self, text: str, as_numpy: bool):
        if type(text) is not str:
            text = _plain_str(text)
        try:
            return self._encode_segment(text, as_numpy)
        except UnicodeEncodeError:
            # lone surrogates: tiktoken pairs up what it can and replaces the rest with U+FFFD
            return self._encode_segment(_fix_surrogates(text), as_numpy)

    def _encode_ordinary_many(self, texts: list) -> list[list[int]]:
        """encode_ordinary of each text; with the C scanner, one kernel call for them all."""
        if self._splitter.kind >= 0:
            plain = [t if type(t) is str else _plain_str(t) for t in texts]
            try:
                return self._table.encode_texts(plain, self._splitter.kind)
            except UnicodeEncodeError:
                return self._table.encode_texts([_fix_surrogates(t) for t in plain], self._splitter.kind)
        return [self._encode_ordinary(t, False) for t in texts]

    def _encode_segment(self, text: str, as_numpy: bool):
        splitter = self._splitter
        if splitter.kind >= 0:
            return self._table.encode_text(text, splitter.kind, as_numpy)
        return self._table.encode_pieces(splitter.regex.findall(text), as_numpy, text)

    def _check_specials(self, text: str, allowed_special, disallowed_special) -> frozenset[str]:
        """Apply tiktoken's special-token rules; return the allowed set, raise ValueError for
        disallowed special-token text in `text`."""
        if not isinstance(text, str):
            raise TypeError(f"expected str, not {type(text).__name__}")
        if allowed_special == "all":
            allowed = self._all_special
        elif not allowed_special:
            allowed = frozenset()
        else:
            allowed = frozenset(allowed_special)
        if disallowed_special == "all":
            # the default: reuse the one frozenset (its hash is cached for the regex lookup)
            disallowed = self._all_special - allowed if allowed else self._all_special
        else:
            disallowed = frozenset(disallowed_special)
        if disallowed:
            match = _special_token_regex(disallowed).search(text)
            if match is not None:
                raise_disallowed_special_token(match.group())
        return allowed & self._all_special

    def _encode_with_specials(self, text: str, allowed: frozenset[str], as_numpy: bool):
        parts = []
        start = 0
        for match in _special_token_regex(allowed).finditer(text):
            parts.append(self._encode_ordinary(text[start:match.start()], as_numpy))
            parts.append([self._special_tokens[match.group()]])
            start = match.end()
        parts.append(self._encode_ordinary(text[start:], as_numpy))
        if as_numpy:
            import numpy as np

            return np.concatenate([np.asarray(p, dtype=np.uint32) for p in parts])
        out: list[int] = []
        for p in parts:
            out.extend(p)
        return out

    def __getstate__(self) -> object:
        from . import registry

        # registered encodings pickle by name, as in tiktoken
        if self is registry.ENCODINGS.get(self.name):
            return self.name
        return {"name": self.name, "pat_str": self._pat_str,
                "mergeable_ranks": self._mergeable_ranks, "special_tokens": self._special_tokens}

    def __setstate__(self, value: object) -> None:
        from . import registry

        if isinstance(value, str):
            self.__dict__ = registry.get_encoding(value).__dict__
            return
        self.__init__(**value)


def _ranks_to_list(mergeable_ranks: dict[bytes, int]) -> list:
    """[bytes of rank 0, bytes of rank 1, ...] with None for unused ranks; checks the types."""
    if not mergeable_ranks:
        raise ValueError("mergeable_ranks is empty")
    max_rank = -1
    for token, rank in mergeable_ranks.items():
        if type(rank) is not int or rank < 0:
            raise ValueError(f"token {token!r} has a bad rank {rank!r}")
        if rank > max_rank:
            max_rank = rank
    if max_rank > 16 * len(mergeable_ranks) + 65536:
        raise ValueError(f"ranks are too sparse: {len(mergeable_ranks)} tokens, largest rank {max_rank}")
    tokens: list = [None] * (max_rank + 1)
    for token, rank in mergeable_ranks.items():
        if not isinstance(token, bytes):
            raise TypeError(f"mergeable_ranks keys must be bytes, got {type(token).__name__}")
        if tokens[rank] is not None:
            raise ValueError(f"rank {rank} is given to two tokens: {tokens[rank]!r} and {token!r}")
        tokens[rank] = token
    return tokens


def _plain_str(text) -> str:
    """A str subclass (numpy.str_, a str enum) as its plain text; TypeError for non-str."""
    if not isinstance(text, str):
        raise TypeError(f"expected str, not {type(text).__name__}")
    return str.__str__(text)


def _fix_surrogates(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _as_token_id(token) -> int:
    import operator

    token = operator.index(token)
    if token < 0 or token > 0xFFFFFFFF:
        raise OverflowError("out of range integral type conversion attempted")
    return token


def _check_batch(texts) -> None:
    if isinstance(texts, str):
        raise TypeError("expected a sequence of str, got a single str")


def _parallel_map(fn_chunk, items, num_threads: int) -> list:
    """fn_chunk over contiguous chunks of items on up to num_threads threads, results
    concatenated in order.  Few, large chunks: each thread makes few calls into the kernels,
    so the threads rarely wait for the GIL."""
    items = list(items)
    if num_threads is None or num_threads <= 1 or len(items) <= 1:
        return fn_chunk(items)
    n_chunks = min(len(items), num_threads * 2)
    size = -(-len(items) // n_chunks)
    chunks = [items[i:i + size] for i in range(0, len(items), size)]
    with ThreadPoolExecutor(min(num_threads, len(chunks))) as pool:
        return [r for part in pool.map(fn_chunk, chunks) for r in part]


@functools.lru_cache(maxsize=128)
def _special_token_regex(tokens: frozenset[str]) -> "regex.Pattern[str]":
    # longest first, so that of two specials starting at one place the longer wins
    inner = "|".join(regex.escape(t) for t in sorted(tokens, key=lambda t: (-len(t), t)))
    return regex.compile(f"({inner})")


def raise_disallowed_special_token(token: str):
    raise ValueError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        "If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )
