"""tiktoken's "unstable" encodings: `Encoding.encode_with_unstable` and `Encoding._encode_bytes`.

Both start from the same idea: the tokens of the last piece of a text may change when more
text follows, so they are set aside ("unstable bytes") and handled on their own.  The rules
(which tokens count as the last piece, how completions are enumerated) are tiktoken's, so the
results are the same; this is a rarely used API, so it is plain Python over the kernel.
"""
from __future__ import annotations

import bisect
import functools
from typing import TYPE_CHECKING

from .special_tokens import special_token_regex

if TYPE_CHECKING:
    from .encoding import Encoding

_SPACE_BYTES = frozenset(b" \n\t")


def _native_encode(enc: Encoding, text: str, allowed: frozenset) -> tuple[list[int], int]:
    """encode(), and how many of the final tokens belong to the last ordinary piece
    (0 when the text ends with a special token)."""
    ids = enc.encode(text, allowed_special=allowed, disallowed_special=())
    tail = text
    if allowed:
        last_special = None
        for last_special in special_token_regex(allowed).finditer(text):
            pass
        if last_special is not None:
            tail = text[last_special.end():]
    pieces = enc.splitter.findall(tail)
    if not pieces:
        return ids, 0
    return ids, len(enc.encode_single_piece(pieces[-1]))


def _is_all_space(enc: Encoding, token: int) -> bool:
    if enc.is_special_token(token):
        return False
    try:
        return all(b in _SPACE_BYTES for b in enc.decode_single_token_bytes(token))
    except KeyError:
        return False


def _widen_last_piece(enc: Encoding, ids: list[int], n_last: int) -> int:
    """Whitespace pieces can merge with the piece before them once text is appended (e.g.
    cl100k's "\\s*[\\r\\n]+"), so runs of whitespace-only tokens join the last piece."""
    if n_last > 0 and _is_all_space(enc, ids[len(ids) - n_last]):
        while n_last < len(ids) and _is_all_space(enc, ids[len(ids) - n_last - 1]):
            n_last += 1
    return n_last


def _bpe(enc: Encoding, data: bytes) -> list[int]:
    return enc.encode_single_piece(data)


@functools.lru_cache(maxsize=8)
def _sorted_tokens(enc: Encoding) -> list[bytes]:
    return enc.token_byte_values()


def _tokens_starting_with(enc: Encoding, prefix: bytes):
    tokens = _sorted_tokens(enc)
    i = bisect.bisect_left(tokens, prefix)
    while i < len(tokens) and tokens[i].startswith(prefix):
        yield tokens[i]
        i += 1


def encode_with_unstable(enc: Encoding, text: str, allowed: frozenset) -> tuple[list[int], list[list[int]]]:
    ids, n_last = _native_encode(enc, text, allowed)
    if n_last == 0:
        return ids, []
    n_last = _widen_last_piece(enc, ids, n_last)
    unstable = enc.decode_bytes(ids[len(ids) - n_last:])
    del ids[len(ids) - n_last:]
    completions: set[tuple[int, ...]] = set()
    if not unstable:
        return ids, []
    for token in _tokens_starting_with(enc, unstable):
        completions.add((enc.encode_single_token(token),))
    # a token may straddle the end of the text at any position inside the unstable bytes
    for i in range(1, len(unstable)):
        prefix, suffix = unstable[:i], unstable[i:]
        for token in _tokens_starting_with(enc, suffix):
            possibility = prefix + token
            try:
                encoded = enc.encode_ordinary(possibility.decode("utf-8"))
            except UnicodeDecodeError:
                encoded = _bpe(enc, possibility)
            seq, seq_len = [], 0
            for t in encoded:
                seq.append(t)
                seq_len += len(enc.decode_single_token_bytes(t))
                if seq_len >= len(unstable):
                    break
            completions.add(tuple(seq))
    # appending text can make a split appear before a trailing whitespace character
    if len(unstable) > 1:
        last_char_len = _last_utf8_char_len(unstable)
        last_char = unstable[len(unstable) - last_char_len:].decode("utf-8", errors="ignore")
        # str.isspace also accepts U+001C..U+001F, which tiktoken (Rust's is_whitespace) does not
        if len(unstable) - last_char_len > 0 and last_char.isspace() and last_char not in "\x1c\x1d\x1e\x1f":
            completions.add(tuple(_bpe(enc, unstable[:len(unstable) - last_char_len])
                                  + _bpe(enc, unstable[len(unstable) - last_char_len:])))
    return ids, [list(c) for c in completions]


def _last_utf8_char_len(data: bytes) -> int:
    """Length of the last UTF-8 character of data (1 for a byte that does not end one)."""
    for n in range(1, min(4, len(data)) + 1):
        try:
            data[len(data) - n:].decode("utf-8")
            return n
        except UnicodeDecodeError:
            continue
    return 1


def encode_bytes(enc: Encoding, data: bytes) -> list[int]:
    try:
        return enc.encode_ordinary(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        valid = e.start
    ids, n_last = _native_encode(enc, data[:valid].decode("utf-8"), frozenset())
    n_last = _widen_last_piece(enc, ids, n_last)
    if ids and n_last > 0:
        unstable = enc.decode_bytes(ids[len(ids) - n_last:]) + data[valid:]
        del ids[len(ids) - n_last:]
    else:
        unstable = data[valid:]
    if unstable:
        ids.extend(_bpe(enc, unstable))
    return ids
