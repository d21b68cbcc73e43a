"""Export to Hugging Face's ``tokenizer.json``: a file that ``tokenizers.Tokenizer.from_file``
and transformers' ``PreTrainedTokenizerFast(tokenizer_file=...)`` load and that encodes with
fastbpe's ids.

The file is a byte-level BPE as Llama-3's is: a ``Split`` pre-tokenizer with the pattern
(``Isolated``), then ``ByteLevel`` with ``use_regex: false`` (bytes -> GPT-2's printable
characters), a ``BPE`` model, special tokens as added tokens (``special: true``), and the
``ByteLevel`` decoder.  The model part depends on how the source merges (DESIGN.md, section 2):

* tiktoken semantics (any ``Encoding``, a trained ``BPEModel``, tiktoken's own encodings):
  ``ignore_merges: true`` (a piece that is a token is emitted whole) and the *complete* split
  table as merges: for every token T, each cut T = L + R where L and R are tokens, ordered by
  T's rank.  HF then merges, at each step, the pair whose result has the lowest rank -- what
  tiktoken does.  The one case this cannot express is a tie between two different cuts of
  the same token that overlap in a piece (x+y == y+z == T): tiktoken takes the leftmost, HF
  the cut listed first.  Real vocabularies give the same ids on real text (the tests check).
* merges semantics (minbpe's tokenizers): the listed merges in order, ``ignore_merges: false``.
"""
from __future__ import annotations

import json
import os
import re

from .bytelevel import BYTE_TO_CHAR
from .atomic import atomic_write_text
from .tiktoken_bpe import encoding_fields


def byte_level(token: bytes) -> str:
    """The token's text in HF's ByteLevel alphabet."""
    return "".join(BYTE_TO_CHAR[b] for b in token)


# An atom followed by a possessive counted repeat, X{n,m}+ (the pattern's own syntax: regex and
# tiktoken read it as possessive).  Oniguruma, which HF tokenizers uses, reads {n,m}+ as a
# repeat of the repeat (X{n,m})+ instead, so cl100k's \p{N}{1,3}+ would take any number of
# digits.  An atomic group says "possessive" in both.
_POSSESSIVE_COUNTED = re.compile(
    r"(\\[pP]\{[^}]*\}|\\.|\[(?:\\.|[^\]\\])*\]|[^\\()|])(\{\d+(?:,\d*)?\})\+")


def oniguruma_pattern(pattern: str) -> str:
    """The pattern written so that Oniguruma matches what `regex` matches."""
    return _POSSESSIVE_COUNTED.sub(r"(?>\1\2)", pattern)


def _pre_tokenizer(pattern: str | None) -> dict:
    byte_level_step = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                       "use_regex": False}
    if not pattern:  # minbpe's BasicTokenizer: the whole text is one piece
        return byte_level_step
    split = {"type": "Split", "pattern": {"Regex": oniguruma_pattern(pattern)}, "behavior": "Isolated", "invert": False}
    return {"type": "Sequence", "pretokenizers": [split, byte_level_step]}


def _document(pattern: str | None, vocab: dict[str, int], merges: list[str],
              special_tokens: dict[str, int], ignore_merges: bool) -> dict:
    taken = set(vocab.values())
    vocab = dict(vocab)
    added = []
    for text, idx in sorted(special_tokens.items(), key=lambda kv: kv[1]):
        if idx in taken or text in vocab:
            raise ValueError(f"special token {text!r} (id {idx}) collides with a BPE token")
        # Also in the model's vocab: tokenizers gives an added token that is not in it the next
        # free id after the vocab, not the file's id (cl100k's specials follow a gap).
        vocab[text] = idx
        added.append({"id": idx, "content": text, "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": True})
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": _pre_tokenizer(pattern),
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": ignore_merges,
            "vocab": vocab,
            "merges": merges,
        },
    }


def _check_bytes(ranks: dict[bytes, int]) -> None:
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise ValueError(f"cannot export to tokenizer.json: byte 0x{missing[0]:02x} is not a token "
                         f"({len(missing)} bytes missing); a byte-level BPE needs all 256")


def document_from_ranks(pattern: str, ranks: dict[bytes, int], special_tokens: dict[str, int]) -> dict:
    """tokenizer.json (as a dict) that encodes like tiktoken with these ranks (token bytes ->
    id = rank), the pattern and the special tokens."""
    _check_bytes(ranks)
    vocab = {byte_level(token): rank for token, rank in sorted(ranks.items(), key=lambda kv: kv[1])}
    merges = []
    for token, _ in sorted(ranks.items(), key=lambda kv: kv[1]):
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in ranks and right in ranks:
                merges.append(byte_level(left) + " " + byte_level(right))
    return _document(pattern, vocab, merges, special_tokens, ignore_merges=True)


def document_from_merges(pattern: str | None, vocab: dict[int, bytes], merges: dict[tuple[int, int], int],
                         special_tokens: dict[str, int]) -> dict:
    """tokenizer.json (as a dict) for a minbpe-style model: ``vocab`` id -> bytes of every
    BPE token, ``merges`` (left id, right id) -> new id, applied lowest new id first."""
    special_ids = set(special_tokens.values())
    strings: dict[int, str] = {}
    by_string: dict[str, int] = {}
    for idx, token in sorted(vocab.items()):
        if idx in special_ids:
            continue
        text = byte_level(token)
        if text in by_string:
            raise ValueError(f"cannot export to tokenizer.json: ids {by_string[text]} and {idx} are the "
                             f"same bytes {token!r} (a tokenizer.json vocabulary maps text to one id)")
        strings[idx] = text
        by_string[text] = idx
    _check_bytes({token: idx for idx, token in vocab.items() if idx not in special_ids})
    merge_lines = []
    for (left, right), idx in sorted(merges.items(), key=lambda kv: kv[1]):
        if left not in strings or right not in strings or idx not in strings:
            raise ValueError(f"merge ({left}, {right}) -> {idx} refers to an id without bytes")
        if strings[left] + strings[right] != strings[idx]:
            raise ValueError(f"merge ({left}, {right}) -> {idx}: the token is not its parts joined")
        merge_lines.append(strings[left] + " " + strings[right])
    return _document(pattern, by_string, merge_lines, special_tokens, ignore_merges=False)


def document_for(obj) -> dict:
    """The tokenizer.json of a fastbpe or tiktoken ``Encoding``, a trained ``BPEModel``, or a
    minbpe-style tokenizer (``fastbpe.minbpe`` classes); TypeError for anything else.

    This module knows no front end: a model describes itself through its
    ``tokenizer_json_document()`` (BPEModel, the minbpe tokenizers); an ``Encoding``, fastbpe's
    or tiktoken's own, is read through tiktoken's field names."""
    describe = getattr(obj, "tokenizer_json_document", None)
    if callable(describe):
        return describe()
    fields = encoding_fields(obj)
    if fields is not None:
        return document_from_ranks(*fields)
    raise TypeError(f"cannot export {type(obj).__name__} to tokenizer.json: expected an Encoding, "
                    "a BPEModel or a minbpe tokenizer")


def format_tokenizer_json(document: dict) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def write_tokenizer_json(path: str | os.PathLike, obj) -> None:
    """Write ``obj``'s tokenizer.json to ``path``, atomically (OSError if not writable)."""
    atomic_write_text(path, format_tokenizer_json(document_for(obj)))
