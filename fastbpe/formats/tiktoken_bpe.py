"""`.tiktoken` rank files and GPT-2's `encoder.json` + `vocab.bpe` ("data gym") files.

A `.tiktoken` file has one line per token: `base64(token bytes) rank`.  Everything read here is
validated: bad base64, a bad or repeated rank, a repeated token or a hash mismatch is a
ValueError, never silently used.
"""
from __future__ import annotations

import binascii
import hashlib
import json
import os

from .. import _formats
from .atomic import atomic_write_bytes


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_hash(data: bytes, expected_hash: str | None, source: str) -> None:
    """Raise ValueError when data's sha256 is not expected_hash (None: no check)."""
    if expected_hash is not None:
        actual = sha256_hex(data)
        if actual != expected_hash:
            raise ValueError(
                f"{source}: sha256 {actual} does not match the expected {expected_hash}; "
                "the file is corrupt or not the file it is named after. Delete or replace it."
            )


class TokensByRank(tuple):
    """The tokens of a vocabulary as a tuple indexed by rank (None for an unused rank).

    What the C parser returns; `Encoding` accepts it in place of a {bytes: rank} dict and then
    builds that dict only if someone asks for `_mergeable_ranks`.  A tuple the garbage
    collector does not track (`of`): 200k tokens walked by a collection would cost ms of
    the caller's time after every load."""
    __slots__ = ()

    @classmethod
    def of(cls, tokens) -> "TokensByRank":
        return _formats.untracked(cls(tokens))

    def to_dict(self) -> dict[bytes, int]:
        ranks = {token: rank for rank, token in enumerate(self) if token is not None}
        if len(ranks) != sum(token is not None for token in self):
            raise ValueError("a token appears twice")
        return ranks


def tokens_of_ranks(mergeable_ranks: dict[bytes, int]) -> "tuple | list":
    """[bytes of rank 0, bytes of rank 1, ...] with None for unused ranks; checks the types
    (an `Encoding`'s `mergeable_ranks` argument)."""
    if not mergeable_ranks:
        raise ValueError("mergeable_ranks is empty")
    max_rank = -1
    for token, rank in mergeable_ranks.items():
        if type(rank) is not int:
            rank = index_or_none(rank)  # numpy integers work, as in tiktoken
            if rank is None:
                raise ValueError(f"token {token!r} has a bad rank {mergeable_ranks[token]!r}")
        if rank < 0:
            raise ValueError(f"token {token!r} has a bad rank {rank!r}")
        if rank > max_rank:
            max_rank = rank
    if max_rank > 16 * len(mergeable_ranks) + 65536:
        raise ValueError(f"ranks are too sparse: {len(mergeable_ranks)} tokens, largest rank {max_rank}")
    tokens: list = [None] * (max_rank + 1)
    exact = True
    for token, rank in mergeable_ranks.items():
        rank = index_or_none(rank)
        if not isinstance(token, bytes):
            raise TypeError(f"mergeable_ranks keys must be bytes, got {type(token).__name__}")
        exact = exact and type(token) is bytes
        if tokens[rank] is not None:
            raise ValueError(f"rank {rank} is given to two tokens: {tokens[rank]!r} and {token!r}")
        tokens[rank] = token
    # exact bytes only (a subclass may hold references): a tuple the collector does not track,
    # as TokensByRank, so no collection walks 200k tokens after the Encoding is built
    return _formats.untracked(tuple(tokens)) if exact else tokens


def index_or_none(value):
    """An int-like value (int, bool, numpy integer) as int, else None."""
    import operator

    try:
        return operator.index(value)
    except TypeError:
        return None


def encoding_fields(obj) -> tuple[str, dict[bytes, int], dict[str, int]] | None:
    """(split pattern, mergeable ranks, special tokens) of an `Encoding`, fastbpe's or tiktoken's
    own, else None.  Read through tiktoken's field names: tiktoken has no public ones, and
    these are the names code that rebuilds an Encoding reads (tokencost, langchain)."""
    ranks = getattr(obj, "_mergeable_ranks", None)
    pattern = getattr(obj, "_pat_str", None)
    if not (isinstance(ranks, dict) and isinstance(pattern, str)):
        return None
    return pattern, ranks, dict(getattr(obj, "_special_tokens", {}))


def parse_tiktoken_tokens(data: bytes, source: str = "<bytes>") -> TokensByRank:
    """Parse the contents of a `.tiktoken` file into tokens by rank (validated, see module doc)."""
    return TokensByRank.of(_formats.parse_tiktoken(data, source))


def parse_tiktoken_bpe(data: bytes, source: str = "<bytes>") -> dict[bytes, int]:
    """Parse the contents of a `.tiktoken` file into {token bytes: rank}."""
    try:
        return parse_tiktoken_tokens(data, source).to_dict()
    except ValueError as e:
        if "appears twice" in str(e) and not str(e).startswith(source):
            raise ValueError(f"{source}: {e}") from None
        raise


def load_tiktoken_bpe(path: str | os.PathLike, expected_hash: str | None = None) -> dict[bytes, int]:
    """Read a `.tiktoken` file (plain or gzip) into {token bytes: rank}."""
    with open(path, "rb") as f:
        data = f.read()
    data = maybe_gunzip(data)
    check_hash(data, expected_hash, os.fspath(path))
    return parse_tiktoken_bpe(data, os.fspath(path))


def maybe_gunzip(data: bytes) -> bytes:
    if data[:2] == b"\x1f\x8b":
        import gzip

        return gzip.decompress(data)
    return data


def format_tiktoken_bpe(ranks: dict[bytes, int]) -> bytes:
    """The `.tiktoken` text for ranks, in rank order."""
    lines = [binascii.b2a_base64(token, newline=False) + b" " + str(rank).encode()
             for token, rank in sorted(ranks.items(), key=lambda kv: kv[1])]
    return b"\n".join(lines) + b"\n"


def dump_tiktoken_bpe(ranks: dict[bytes, int], path: str | os.PathLike) -> None:
    """Write ranks as a `.tiktoken` file, atomically."""
    atomic_write_bytes(path, format_tiktoken_bpe(ranks))


# The side file `save_model` writes beside a `.tiktoken` file: what ranks cannot hold.
SIDE_SUFFIX = ".meta.json"
SIDE_FORMAT = "fastbpe-tiktoken-meta"


def format_side(pattern: str, special_tokens: dict) -> bytes:
    """The side file of a `.tiktoken` save: the split pattern and the special tokens."""
    doc = {"format": SIDE_FORMAT, "version": 1, "pattern": pattern,
           "special_tokens": dict(special_tokens)}
    return json.dumps(doc, ensure_ascii=False).encode("utf-8") + b"\n"


def read_side(path) -> tuple[str, dict]:
    """(pattern, special tokens) of a side file; ValueError naming it if malformed."""
    from .text_files import parse_json, read_text

    path = os.fspath(path)
    what = "the pattern and special tokens of a .tiktoken file"
    doc = parse_json(read_text(path, what), path, what)
    if (not isinstance(doc, dict) or doc.get("format") != SIDE_FORMAT
            or not isinstance(doc.get("pattern"), str)
            or not isinstance(doc.get("special_tokens"), dict)
            or not all(type(i) is int and i >= 0 for i in doc["special_tokens"].values())):
        raise ValueError(f"{path}: not {what} (a JSON object with \"format\": "
                         f"\"{SIDE_FORMAT}\", a \"pattern\" and \"special_tokens\" with ids >= 0)")
    return doc["pattern"], doc["special_tokens"]


def _gpt2_unicode_to_byte() -> dict[str, int]:
    """GPT-2 stores each byte as a printable character: printable Latin-1 bytes stand for
    themselves, the other 68 bytes are shifted to U+0100 onwards in byte order."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    mapping = {chr(b): b for b in printable}
    shift = 0
    for b in range(256):
        if b not in printable:
            mapping[chr(256 + shift)] = b
            shift += 1
    return mapping


def decode_gpt2_token(text: str, table: dict[str, int] | None = None) -> bytes:
    table = table or _gpt2_unicode_to_byte()
    try:
        return bytes(table[c] for c in text)
    except KeyError as e:
        raise ValueError(f"{text!r} is not a GPT-2 byte-level token (bad character {e})") from None


def parse_gpt2_files(encoder_json: bytes, vocab_bpe: bytes, source: str = "<gpt2>") -> dict[bytes, int]:
    """{token bytes: rank} from GPT-2's encoder.json and vocab.bpe, checked against each other.

    The ranks are encoder.json's ids without the special tokens; vocab.bpe must list, in order,
    the merge that makes each token after the 256 single bytes."""
    try:
        encoder = json.loads(encoder_json)
    except ValueError as e:
        raise ValueError(f"{source}: encoder.json is not valid JSON: {e}") from None
    table = _gpt2_unicode_to_byte()
    ranks: dict[bytes, int] = {}
    for text, rank in encoder.items():
        if text in ("<|endoftext|>", "<|startoftext|>"):
            continue
        if not isinstance(rank, int) or rank < 0:
            raise ValueError(f"{source}: bad id {rank!r} for {text!r}")
        ranks[decode_gpt2_token(text, table)] = rank
    if len(set(ranks.values())) != len(ranks):
        raise ValueError(f"{source}: encoder.json gives two tokens the same id")
    lines = vocab_bpe.decode("utf-8").split("\n")
    if lines and lines[0].startswith("#version"):
        lines = lines[1:]
    merges = [line.split() for line in lines if line.strip()]
    by_rank = {rank: token for token, rank in ranks.items()}
    for i, merge in enumerate(merges):
        if len(merge) != 2:
            raise ValueError(f"{source}: vocab.bpe line {i + 2} is not a merge: {' '.join(merge)!r}")
        made = decode_gpt2_token(merge[0], table) + decode_gpt2_token(merge[1], table)
        if by_rank.get(256 + i) != made:
            raise ValueError(f"{source}: vocab.bpe merge {i} ({' '.join(merge)}) does not match "
                             f"encoder.json id {256 + i}")
    if len(merges) + 256 != len(ranks):
        raise ValueError(f"{source}: vocab.bpe has {len(merges)} merges but encoder.json "
                         f"has {len(ranks)} tokens")
    return ranks
