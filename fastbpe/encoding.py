"""`Encoding`: tiktoken's `Encoding` API (methods, special-token rules, ids) over the Cython kernel.

The class is thin: it checks arguments, applies the special-token rules, cuts text at allowed
special tokens, and hands each ordinary segment to `_core.BPETable` in one call.
"""
from __future__ import annotations

import functools
from types import MappingProxyType
from typing import AbstractSet, Collection, Literal, Mapping, Sequence

from . import alternatives, regex_dialects
from ._core import BPETable
from ._short_call import CompiledOrdinary, OrdinaryCall
from .formats.tiktoken_bpe import TokensByRank, index_or_none, tokens_of_ranks
from .pretokenize import Splitter
from .special_tokens import raise_disallowed_special_token, special_token_regex
from .text import fix_surrogates
from .threads import batch_threads, check_threads, parallel_map


class Encoding(CompiledOrdinary):
    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
        pattern_dialect: str = regex_dialects.FANCY_REGEX,
    ):
        """A byte-level BPE encoding, built like `tiktoken.Encoding`.

        mergeable_ranks maps token bytes to rank (= token id); special_tokens maps special-token
        text to id.  Ids of the BPE tokens equal tiktoken's for the same arguments: pat_str is
        read as tiktoken reads it (Rust's fancy-regex), and a construct whose meaning Python's
        `regex` cannot give exactly is a ValueError (fastbpe/regex_dialects.py);
        `pattern_dialect="regex"` reads it as Python's `regex` instead (fastbpe's trainers)."""
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
            n_mergeable = len(token_bytes) - token_bytes.count(None)
        else:
            token_bytes = tokens_of_ranks(mergeable_ranks)
            self._ranks_dict = mergeable_ranks
            n_mergeable = len(mergeable_ranks)
        self._tokens_by_rank = token_bytes
        special_bytes: dict[int, bytes] = {}
        for text, token in self._special_tokens.items():
            if not isinstance(text, str):
                raise TypeError(f"special token names must be str, got {text!r}")
            if not text:
                raise ValueError("a special token cannot be the empty string")
            token = index_or_none(token)
            if token is None or token < 0:
                raise ValueError(f"special token {text!r} has a bad id {special_tokens[text]!r}")
            self._special_tokens[text] = token
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

        self._table, self._far_special_bytes, self._phantom = _build_table(token_bytes, special_bytes)
        self.pattern_dialect = pattern_dialect
        self._splitter = Splitter(regex_dialects.to_regex(pat_str, pattern_dialect))
        self._special_token_values = frozenset(self._special_tokens.values())
        self._all_special = frozenset(self._special_tokens)
        self._compile_short_call()

    def _compile_short_call(self) -> None:
        """What the compiled encode_ordinary and encode read (_short_call.OrdinaryCall), where
        the C scanner and the table take every str (None: they take the Python way)."""
        self._compiled = None
        if self._splitter.kind >= 0 and self._phantom is None:
            firsts = None if "" in self._all_special else tuple({t[0] for t in self._all_special})
            self._compiled = OrdinaryCall(self._table, self._splitter.kind, firsts)

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # ====================
    # Encoding
    # ====================

    # encode_ordinary(text) and encode(text, *, allowed_special=frozenset(), disallowed_special=
    # "all", dropout=None, seed=None): C methods of CompiledOrdinary, the uncommon cases come here

    def _encode(self, text: str, allowed_special, disallowed_special, dropout, seed) -> list[int]:
        """encode's Python way (special-token text, other rules, dropout, other types)."""
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
        _check_batch(text, num_threads)
        # kept threads: each one's piece cache stays warm from batch to batch (a new thread per
        # call started cold every time: 2 threads ran slower than 1 on English and code)
        return parallel_map(self._encode_ordinary_many, text, self._batch_threads(num_threads, text),
                            keep_threads=True)

    def encode_batch(
        self,
        text: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[list[int]]:
        """`encode` for many texts, on `num_threads` threads."""
        _check_batch(text, num_threads)
        allowed_special = _check_allowed(allowed_special)
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

        return parallel_map(chunk, text, self._batch_threads(num_threads, text), keep_threads=True)

    def encode_files(self, paths, out=None, *, separator="<|endoftext|>", split_on=None,
                     keep_empty=False, dtype=None, num_threads=None, buffer_bytes=64 << 20,
                     show_progress=None):
        """Encode whole files for training into one flat array of ids plus document offsets,
        on all cores, in memory bounded by `buffer_bytes`: ``(ids, offsets)``, or written to
        `out` (a raw ``.bin`` of ids and ``out + ".offsets"``).  See `fastbpe.corpus`."""
        from . import corpus

        return corpus.encode_files(self, paths, out, separator=separator, split_on=split_on,
                                   keep_empty=keep_empty, dtype=dtype, num_threads=num_threads,
                                   buffer_bytes=buffer_bytes, show_progress=show_progress)

    def encode_documents(self, documents, out=None, *, separator="<|endoftext|>",
                         keep_empty=False, dtype=None, num_threads=None, buffer_bytes=64 << 20,
                         show_progress=None):
        """`encode_files` for an iterable of documents (str or bytes), read lazily."""
        from . import corpus

        return corpus.encode_documents(self, documents, out, separator=separator,
                                       keep_empty=keep_empty, dtype=dtype, num_threads=num_threads,
                                       buffer_bytes=buffer_bytes, show_progress=show_progress)

    def _batch_threads(self, num_threads: int, texts) -> int:
        """Threads worth using: with the C scanner the whole encode is GIL-free and scales;
        a pattern split by `regex` does not, because `regex` takes the GIL back for every
        match it returns, so more threads only add contention (measured: 2 threads run at
        half the speed of 1) and that path runs on one.  A small batch runs on one too
        (threads.batch_threads)."""
        return batch_threads(texts, num_threads) if self._splitter.kind >= 0 else 1

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
            raise KeyError(as_bytes) from None

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """The stable tokens of `text`, and every token sequence that may follow them when
        more text is appended (tiktoken's unstable API, same results; the completions come
        as a list in no particular order).

        >>> stable, completions = enc.encode_with_unstable("hello fanta")
        """
        from ._unstable import encode_with_unstable

        allowed = self._check_specials(text, allowed_special, disallowed_special)
        return encode_with_unstable(self, text, allowed)

    def encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        """BPE of one piece without splitting it with the pattern (special-token text is
        ordinary bytes here)."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._refuse_uncovered(self._table.encode_bytes(bytes(text_or_bytes)))

    _encode_single_piece = encode_single_piece  # tiktoken's name

    def _encode_only_native_bpe(self, text: str) -> list[int]:
        """encode_ordinary with the pattern applied by the `regex` package (a slow check of
        the fast path)."""
        if not isinstance(text, str):
            raise TypeError(f"expected str, not {type(text).__name__}")
        text = fix_surrogates(text)
        pieces = self._splitter.regex_pieces(text)
        return self._refuse_uncovered(self._table.encode_pieces(pieces, False, text))

    def _encode_bytes(self, text: bytes) -> list[int]:
        """Tokens of bytes that may not be valid UTF-8: the valid prefix is encoded as text,
        the rest with the last piece of that prefix by BPE, as tiktoken does."""
        from ._unstable import encode_bytes

        if not isinstance(text, (bytes, bytearray, memoryview)):
            raise TypeError(f"expected bytes, not {type(text).__name__}")
        return encode_bytes(self, bytes(text))

    # ====================
    # Decoding
    # ====================

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of a sequence of tokens.

        >>> enc.decode_bytes([31373, 995])
        b'hello world'
        """
        if self._phantom is not None:
            tokens = self._refuse_phantom_ids(tokens)
        try:
            return self._table.decode_bytes(tokens)
        except KeyError:
            if not self._far_special_bytes:
                raise
            return self._decode_bytes_with_far_specials(tokens)

    def _decode_bytes_with_far_specials(self, tokens) -> bytes:
        """decode_bytes when some ids are special tokens kept out of the kernel's tables."""
        import numpy as np

        ids = np.asarray(tokens).tolist() if isinstance(tokens, np.ndarray) else tokens
        return b"".join(self.decode_single_token_bytes(t) for t in _checked_sequence(ids))

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """The text of a sequence of tokens; invalid UTF-8 is handled per `errors`.

        >>> enc.decode([31373, 995])
        'hello world'
        """
        if self._phantom is not None:
            tokens = self._refuse_phantom_ids(tokens)
        try:
            data = self._table.decode_bytes(tokens)
        except KeyError:
            if not self._far_special_bytes:
                raise
            data = self._decode_bytes_with_far_specials(tokens)
        return data.decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (a token may hold part of a UTF-8 character).

        >>> enc.decode_single_token_bytes(31373)
        b'hello'
        """
        token = _as_token_id(token)
        if self._phantom is not None and token in self._phantom:
            raise KeyError(str(token))
        try:
            return self._table.token_bytes(token)
        except KeyError:
            far = self._far_special_bytes.get(token)
            if far is not None:
                return far
            raise KeyError(str(token)) from None

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token.

        >>> enc.decode_tokens_bytes([31373, 995])
        [b'hello', b' world']
        """
        return [self.decode_single_token_bytes(token) for token in _checked_sequence(tokens)]

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
        check_threads(num_threads)
        decode = functools.partial(self.decode, errors=errors)
        return parallel_map(lambda chunk: [decode(tokens) for tokens in chunk], batch, num_threads)

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        """`decode_bytes` for many token lists."""
        check_threads(num_threads)
        return parallel_map(lambda chunk: [self.decode_bytes(tokens) for tokens in chunk], batch, num_threads)

    # ====================
    # Miscellaneous
    # ====================

    def _refuse_phantom_ids(self, tokens) -> list:
        tokens = list(tokens)
        for token in tokens:
            if _as_token_id(token) in self._phantom:
                raise KeyError(f"Invalid token for decoding: {token}")
        return tokens

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
    # Not in tiktoken: the parts fastbpe's other modules build on (corpus, dropout, front ends)
    # ====================

    @property
    def pattern(self) -> str:
        """The split pattern (tiktoken keeps it as `_pat_str`)."""
        return self._pat_str

    @property
    def mergeable_ranks(self) -> dict[bytes, int]:
        """{token bytes: rank} (tiktoken's `_mergeable_ranks`)."""
        return self._mergeable_ranks

    @property
    def special_tokens(self) -> Mapping[str, int]:
        """{special-token text: id}, read-only (tiktoken's `_special_tokens`)."""
        return MappingProxyType(self._special_tokens)

    @property
    def kernel(self) -> BPETable:
        """The `_core.BPETable` that encodes and decodes; a special id far above the others is
        kept out of it (see `_build_table`).  The HF front end sets one built from merges."""
        return self._table

    @kernel.setter
    def kernel(self, table: BPETable) -> None:
        self._table = table
        self._compile_short_call()

    @property
    def splitter(self) -> Splitter:
        """The `pretokenize.Splitter` that cuts text into pieces (`kind >= 0`: the C scanner)."""
        return self._splitter

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
            return self._encode_segment(fix_surrogates(text), as_numpy)

    def _encode_ordinary_many(self, texts: list) -> list[list[int]]:
        """encode_ordinary of each text; with the C scanner, one kernel call for them all."""
        if self._splitter.kind >= 0:
            plain = [t if type(t) is str else _plain_str(t) for t in texts]
            try:
                out = self._table.encode_texts(plain, self._splitter.kind)
            except UnicodeEncodeError:
                out = self._table.encode_texts([fix_surrogates(t) for t in plain], self._splitter.kind)
            if self._phantom is not None:
                for ids in out:
                    self._refuse_uncovered(ids)
            return out
        return [self._encode_ordinary(t, False) for t in texts]

    def _encode_segment(self, text: str, as_numpy: bool):
        splitter = self._splitter
        if splitter.kind >= 0:
            ids = self._table.encode_text(text, splitter.kind, as_numpy)
        else:
            ids = self._table.encode_pieces(splitter.regex_pieces(text), as_numpy, text)
        if self._phantom is not None:
            self._refuse_uncovered(ids)
        return ids

    def _refuse_uncovered(self, ids):
        """ValueError when ids hold a stand-in for a single byte the vocabulary lacks (see
        `_build_table`); tiktoken panics there."""
        if self._phantom is not None and len(ids) and max(ids) >= self._phantom.start:
            missing = self._table.token_bytes(int(max(ids)))
            raise ValueError(f"encoding {self.name!r} cannot encode this text: its vocabulary "
                             f"has no token for the byte {missing!r}")
        return ids

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
            allowed = frozenset(_check_allowed(allowed_special))
        if disallowed_special == "all":
            # the default: reuse the one frozenset (its hash is cached for the regex lookup)
            disallowed = self._all_special - allowed if allowed else self._all_special
        elif disallowed_special is None:  # tiktoken: None means no check
            disallowed = frozenset()
        elif isinstance(disallowed_special, str):
            raise TypeError(f"disallowed_special must be \"all\" or a collection of special-token "
                            f"strings, not the string {disallowed_special!r}")
        else:
            disallowed = frozenset(disallowed_special)
        if disallowed:
            match = special_token_regex(disallowed).search(text)
            if match is not None:
                raise_disallowed_special_token(match.group())
        return allowed & self._all_special

    def _encode_with_specials(self, text: str, allowed: frozenset[str], as_numpy: bool):
        parts = []
        start = 0
        for match in special_token_regex(allowed).finditer(text):
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
        model = self.__dict__.get("bpe_model")
        if model is not None:  # trained or loaded: the merges (or the file path) are enough
            return {"name": self.name, "bpe_model": model}
        return {"name": self.name, "pat_str": self._pat_str, "pattern_dialect": self.pattern_dialect,
                "mergeable_ranks": self._mergeable_ranks, "special_tokens": self._special_tokens}

    def __setstate__(self, value: object) -> None:
        from . import registry

        if isinstance(value, str):
            self.__dict__ = registry.get_encoding(value).__dict__
            self._compile_short_call()   # a C field: not in the __dict__
            return
        if "bpe_model" in value:
            self.__dict__ = value["bpe_model"].to_encoding(value["name"]).__dict__
            self._compile_short_call()
            return
        self.__init__(**value)


def _build_table(token_bytes: list, special_bytes: dict):
    """The kernel table, the special tokens kept out of it, and the stand-in ids (or None).

    Special ids far above the BPE ids would make the kernel's dense per-id tables huge (one
    special id of 10**8 cost 5 GB): those decode through a small dict instead.

    tiktoken accepts a vocabulary that lacks some single bytes: BPE starts from bytes, and a
    byte without a token can still merge into a longer token.  The kernel works on ids, so
    each missing byte gets a stand-in id after every real one; text whose tokens would
    include a stand-in is refused (tiktoken panics there) and stand-ins never decode."""
    dense_limit = len(token_bytes) + 2 * len(special_bytes) + 1024
    near = {t: b for t, b in special_bytes.items() if t < dense_limit}
    try:
        table = BPETable.from_ranks(token_bytes, near)
        return table, {t: b for t, b in special_bytes.items() if t >= dense_limit}, None
    except ValueError:
        present = {t[0] for t in token_bytes if t is not None and len(t) == 1}
        if len(present) == 256:
            raise
    missing = [bytes([b]) for b in range(256) if b not in present]
    first_free = max([len(token_bytes), *(t + 1 for t in near)])
    for t in sorted(special_bytes):  # a special id where the stand-ins would land stays near
        if first_free <= t < first_free + len(missing):
            near[t] = special_bytes[t]
            first_free = t + 1
    far = {t: b for t, b in special_bytes.items() if t not in near}
    extended = list(token_bytes) + [None] * (first_free - len(token_bytes)) + missing
    return BPETable.from_ranks(extended, near), far, range(first_free, first_free + len(missing))


def _plain_str(text) -> str:
    """A str subclass (numpy.str_, a str enum) as its plain text; TypeError for non-str."""
    if not isinstance(text, str):
        raise TypeError(f"expected str, not {type(text).__name__}")
    return str.__str__(text)


def _as_token_id(token) -> int:
    import operator

    token = operator.index(token)
    if token < 0 or token > 0xFFFFFFFF:
        raise OverflowError("out of range integral type conversion attempted")
    return token


def _check_batch(texts, num_threads) -> None:
    if isinstance(texts, str):
        raise TypeError("expected a sequence of str, got a single str")
    check_threads(num_threads)


def _check_allowed(allowed_special):
    """A plain string other than "all" would be read as a set of characters (tiktoken
    raises TypeError for it too)."""
    if isinstance(allowed_special, str) and allowed_special != "all":
        raise TypeError(f"allowed_special must be \"all\" or a set of special-token strings, "
                        f"not the string {allowed_special!r}")
    return allowed_special


def _checked_sequence(tokens):
    """Refuse unordered collections (their order is arbitrary) and single strings."""
    if isinstance(tokens, (str, bytes, AbstractSet, Mapping)):
        raise TypeError(f"'{type(tokens).__name__}' object is not a sequence of token ids")
    return tokens
