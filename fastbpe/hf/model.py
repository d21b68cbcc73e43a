"""The BPE model of a tokenizer.json, on fastbpe's one merge kernel (`_core.BPETable`).

Two ways in, one pair table each:

* byte-level vocabularies (GPT-2, Llama-3, Qwen2.5, ...): token strings are bytes in GPT-2's
  byte alphabet, so the table is built over the bytes (`from_merges`, ids = HF's vocab ids) and
  pieces are merged from their bytes by the same kernel `fastbpe.Encoding` uses;
* every other vocabulary (char-level: byte_fallback, unk tokens, subword prefixes/suffixes):
  a word starts from HF's initial symbols (one per character, or `<0xXX>` tokens, or unk) and
  `_merge_ids.merge_ids` merges them with the same heap loop (also used for BPE-dropout).
"""
from __future__ import annotations

import random

from .._core import BPETable
from ..formats.bytelevel import BYTE_TO_CHAR, token_bytes as bytelevel_token_bytes
from .._formats import (checked_vocab, frozen_merges, hf_merge_rows, ids_to_tokens, kept_merge_rows,
                        single_bytes, tokens_by_id, untracked)
from .._json_vocab import JsonVocab, strict_token_bytes
from .._merge_ids import merge_ids
from ._nodes import LazyMerges, json_bool, json_field, json_str
from .._tokenizer_json import bytes_digest, rows_digest, whole_token_states
from ..program_cache import kept
from .word_affixes import WordAffixes


# the UTF-8 length of each byte's character in GPT-2's byte-level alphabet (1 or 2)
_BYTELEVEL_UTF8_LEN = [len(BYTE_TO_CHAR[b].encode("utf-8")) for b in range(256)]
# the bytes valid UTF-8 never holds (text never reaches a BPE model with them)
NOT_UTF8 = frozenset([0xC0, 0xC1, *range(0xF5, 0x100)])


def _table_with_whole_tokens(merges, tokens: tuple, **options) -> BPETable:
    """BPETable.from_merges(merges, tokens, None, **options) that has learned which tokens of
    up to 16 bytes merge back into themselves (learn_whole_tokens(16)), its answers kept on
    disk (program_cache.kept) per tokens, merges and every option the table was built with:
    ~1,000 instructions a token, 50M of GPT-2's load, 150M of Qwen2.5's; read back they cost
    a file read and a checksum of the rows."""
    table = BPETable.from_merges(merges, tokens, None, **options)
    fresh = whole_token_states(table)
    if fresh is None:   # (tiktoken semantics: nothing to learn)
        return table

    def learn() -> bytes:
        table.learn_whole_tokens(16)
        return whole_token_states(table)

    def fits(body: bytes) -> bool:   # one state (0, 1, 2) a token, as whole_token_states takes
        return len(body) == len(fresh) and not body.translate(None, b"\0\1\2")

    key = ("whole-tokens", 16, tuple(sorted(options.items())), len(tokens), len(merges), rows_digest(merges),
           bytes_digest(tokens))
    whole_token_states(table, kept(key, learn, fits))
    return table


def _without(items: list, value) -> list:
    """items with each item equal to value set to None (found by list.index: C speed)."""
    i = -1
    try:
        while True:
            i = items.index(value, i + 1)
            items[i] = None
    except ValueError:
        return items


class BPE:
    def __init__(self, node: dict, byte_level_input: bool):
        self.byte_level_input = byte_level_input  # a ByteLevel pre-tokenizer feeds it
        vocab = node.get("vocab")
        if isinstance(vocab, JsonVocab):   # read from the file's bytes, checked there: a dict when asked
            self._vocab, self.lookup = None, vocab
        elif not isinstance(vocab, dict):
            raise ValueError("tokenizer.json: model.vocab must be an object {token: id}")
        else:
            self._vocab = self.lookup = checked_vocab(vocab)   # the file's own dict, checked in C
        self._id_to_token = self._tokens_by_id = None   # made on first use (`id_to_token`, `tokens_by_id`)
        self.unk_token = json_field(node, "unk_token", json_str, "model")
        self.prefix = json_field(node, "continuing_subword_prefix", json_str, "model", "")
        self.suffix = json_field(node, "end_of_word_suffix", json_str, "model", "")
        self.fuse_unk = json_field(node, "fuse_unk", json_bool, "model", False)
        self.byte_fallback = json_field(node, "byte_fallback", json_bool, "model", False)
        self.ignore_merges = json_field(node, "ignore_merges", json_bool, "model", False)
        dropout = node.get("dropout")
        if dropout is not None and (type(dropout) not in (int, float) or not 0.0 <= dropout <= 1.0):
            raise ValueError(f"tokenizer.json: BPE dropout must be between 0 and 1, got {dropout}")
        self.dropout = float(dropout) if dropout else 0.0
        self._rng = random.Random()
        if self.unk_token is not None and len(self.lookup) and self.unk_token not in self.lookup:   # (an untrained model may name it)
            raise ValueError(f"tokenizer.json: unk_token {self.unk_token!r} is not in the vocabulary")
        merges_source = node.get("merges", [])
        if isinstance(merges_source, LazyMerges) and merges_source.n_prefix != len(self.prefix):
            merges_source = merges_source.source()   # read for another prefix: looked up again
        if isinstance(merges_source, LazyMerges):   # read from the file's bytes, already looked up
            self._merges_source = merges_source
        elif not isinstance(merges_source, (list, tuple)):   # a tuple: merges_source, written back
            raise ValueError("tokenizer.json: model.merges must be a list")
        else:
            self._merges_source = frozen_merges(merges_source)
        n_ids = (vocab.max_id if self._vocab is None else max(self._vocab.values(), default=-1)) + 1
        if n_ids > 16 * len(self.lookup) + 65536:
            raise ValueError(f"tokenizer.json: token ids are too sparse ({len(self.lookup)} tokens, largest id {n_ids - 1})")
        # a byte-level model: its input is byte-level text and every token maps to bytes
        self.byte_level = byte_level_input and not self.prefix and not self.suffix
        self.char_model, self.char_model_refusal = None, "the model is byte-level BPE"
        self.affix_refusal = None   # why a byte-level model with a prefix / suffix is not on the kernel
        affixes = self._word_affixes(n_ids) if byte_level_input and not self.byte_level else None
        # the merges: (left, right, new id) rows in rank order, an array.array('q') of 3m ids
        if self.byte_level:
            # strict: a token with a character the byte-level alphabet lacks is never reached
            tokens = strict_token_bytes(self.lookup, n_ids)
            if b"" in tokens:   # an empty token (Whisper's): BPE never makes it; it decodes to ""
                tokens = untracked(tuple(_without(list(tokens), b"")))
            # a merge involving a token outside the byte alphabet can never apply to bytes
            merges = self._merge_rows(0, tokens)
            singles = set(single_bytes(tokens))
            # a byte without a token is skipped, as HF skips a character its vocabulary lacks
            # (GPT-NeoX lacks the 13 bytes UTF-8 never holds, Falcon control bytes), unless
            # the file says otherwise (an unk token, byte fallback)
            self.missing_bytes = bytes(b for b in range(256) if b not in singles)
            self.skipped_bytes = bytes(sorted(set(self.missing_bytes) - NOT_UTF8))   # text can hold these
            self.byte_level = not (set(self.missing_bytes) - NOT_UTF8) or (
                self.unk_token is None and not self.byte_fallback)
        if affixes is not None:   # the kernel's word marks (hf/word_affixes.py)
            self.byte_level = True
            self.merge_rows, self.token_bytes, self.table = affixes.merge_rows, affixes.token_bytes, affixes.table
            self.missing_bytes = self.skipped_bytes = b""
            self._single_byte_ids = [self.table.lookup_bytes(bytes([b])) for b in range(256)]
        elif self.byte_level:
            self.merge_rows = merges
            self.token_bytes = tokens   # an untracked tuple: see merges_source
            # which tokens of up to 16 bytes merge back into themselves, found now (~25 ms for
            # 150k tokens) and not at each one's first meeting in a text: a fresh tokenizer's
            # first megabytes of English were 20% merges that only re-derived a known token
            self.table = _table_with_whole_tokens(merges, tokens, whole_piece=bool(self.ignore_merges),
                                                  skip_missing_bytes=True)
            self._single_byte_ids = [self.table.lookup_bytes(bytes([b])) for b in range(256)]
        else:
            self.merge_rows = all_merges = self._merge_rows(len(self.prefix))
            self.token_bytes = None
            self.missing_bytes = self.skipped_bytes = b""
            tokens = [None] * n_ids
            for t, i in self.vocab.items():
                tokens[i] = t.encode("utf-8", "surrogatepass")
            self.table = BPETable.from_merges(all_merges, tokens, None, whole_piece=False, require_all_bytes=False)
            self._byte_ids = [self.vocab.get(f"<0x{b:02X}>") for b in range(256)]
            self.char_model, self.char_model_refusal = self._compiled_char_model(all_merges)
        self._cache: dict[str, tuple] = {}

    @property
    def vocab(self) -> dict[str, int]:
        """{token: id}, the file's (a `JsonVocab` read with the file makes it on first use: a
        load looks tokens up in `lookup` and never needs the dict)."""
        if self._vocab is None:
            self._vocab = self.lookup = self.lookup.to_dict()
        return self._vocab

    def _word_affixes(self, n_ids: int):
        """The byte-level kernel's table of a prefix / suffix model (word_affixes.WordAffixes),
        or None (`affix_refusal` says why)."""
        if self.ignore_merges:   # HF looks the piece up without its prefix or suffix
            self.affix_refusal = "ignore_merges with continuing_subword_prefix / end_of_word_suffix"
        elif self.dropout:
            self.affix_refusal = "BPE dropout"
        else:
            affixes = WordAffixes(self.lookup, lambda token_bytes: self._merge_rows(len(self.prefix), token_bytes),
                                  self.prefix, self.suffix, n_ids)
            if affixes.table is not None:
                return affixes
            self.affix_refusal = affixes.refusal
        return None

    def _merge_rows(self, n_prefix: int, token_bytes: tuple | None = None):
        """hf_merge_rows of the file's merges (rows read with the file: only their clean-up)."""
        if isinstance(self._merges_source, LazyMerges):
            return kept_merge_rows(self._merges_source.rows, token_bytes)
        return hf_merge_rows(self._merges_source, self.vocab, n_prefix, token_bytes)

    def _compiled_char_model(self, merges) -> tuple:
        """(`_char_bpe.CharBPE` over this model's table, None), or (None, why not): the
        compiled char-level model the SentencePiece-style files run on (hf/char_level.py)."""
        if self.prefix or self.suffix:
            return None, "a char-level model with continuing_subword_prefix / end_of_word_suffix"
        from .._char_bpe import CharBPE   # (char-level models only)
        try:
            return CharBPE.build(self.vocab, merges, self.unk_token, self.byte_fallback, self.fuse_unk,
                                 self.ignore_merges, table=self.table), None
        except ValueError as e:
            return None, str(e)

    @property
    def merges_source(self) -> tuple:
        """The file's merges as read ("a b" strings, or (a, b) for the list form), for writing
        them back: a tuple of str and tuples, which the garbage collector stops tracking at
        its first pass (a list of 150k merges would be walked by every full collection);
        parsed from the file's text on first use when the file was read by `read_document`."""
        if isinstance(self._merges_source, LazyMerges):
            self._merges_source = self._merges_source.source()
        return self._merges_source

    @property
    def merges_kept(self):
        """What the tokenizer keeps to write the merges back: merges_source, or the
        `LazyMerges` it is parsed from when first written."""
        return self._merges_source

    def save(self, folder: str, name: str | None = None) -> list[str]:
        """HF's Model.save for BPE: vocab.json (tokens by id) and merges.txt in folder (names
        prefixed by `name-`), as transformers' save_vocabulary calls it.  Returns the paths."""
        import json
        import os

        from ..formats.atomic import atomic_write_many

        prefix = f"{name}-" if name else ""
        vocab_path = os.path.join(folder, f"{prefix}vocab.json")
        merges_path = os.path.join(folder, f"{prefix}merges.txt")
        ordered = dict(sorted(self.vocab.items(), key=lambda kv: kv[1]))
        lines = ["#version: 0.2"] + [m if type(m) is str else " ".join(m) for m in self.merges_source]
        atomic_write_many({vocab_path: json.dumps(ordered, ensure_ascii=False, separators=(",", ":")).encode("utf-8"),
                           merges_path: ("\n".join(lines) + "\n").encode("utf-8")})
        return [vocab_path, merges_path]

    # -- tokenizing one pre-token piece --------------------------------------------------

    def uses_dropout(self) -> bool:
        return self.dropout > 0.0

    def seed_dropout(self, seed: int | None) -> None:
        """Make dropout reproducible: the same seed gives the same sequence of results."""
        self._rng = random.Random(seed)

    @property
    def id_to_token(self) -> IdToToken:
        """The id -> token dict (callable as HF's `Model.id_to_token(id)`), made on first use:
        making and freeing it cost GPT-2's load 33M instructions (6%), which a process that
        never asks a token's string (ids, decode) need not pay."""
        made = self._id_to_token
        if made is None:
            # (copied whole from a dict made at its size: ids_to_tokens)
            # untracked: a dict subclass is always tracked, and this one (ints to strs, no cycle
            # possible) was young at the first collection after loading: 4.4 ms of the first
            # user call that allocated enough (Qwen2.5's 151k ids)
            made = self._id_to_token = untracked(IdToToken(ids_to_tokens(self.vocab)))
        return made

    @property
    def tokens_by_id(self) -> list:
        """Each id's token (None: no token has the id), made on first use in C (~30 instructions a
        token, no hashing): what an Encoding's tokens are read from."""
        made = self._tokens_by_id
        if made is None:
            made = self._tokens_by_id = (self.lookup.tokens_by_id() if self._vocab is None   # (no dict made)
                                         else tokens_by_id(self._vocab))
        return made

    # -- HF's component API (tokenizers.models.BPE): tokenize, token_to_id, id_to_token ---

    def tokenize(self, sequence: str) -> list["Token"]:
        """HF's Model.tokenize: the tokens of one pre-tokenized piece (byte-level text for a
        byte-level model), each with its id, text and UTF-8 byte offsets in `sequence`."""
        if not isinstance(sequence, str):
            raise TypeError(f"tokenize takes a str, not {type(sequence).__name__}")
        if not sequence:
            return []
        if self.byte_level:   # offsets in the byte-level text's characters
            byte_of = [0]
            for c in sequence:
                byte_of.append(byte_of[-1] + len(c.encode("utf-8", "surrogatepass")))
            spans = [(i, byte_of[s], byte_of[e]) for i, s, e in self.tokenize_piece(sequence)]
        else:
            spans = self._merge_chars(sequence)
        return [Token(i, self.id_to_token.get(i), (s, e)) for i, s, e in spans]

    def token_to_id(self, token: str) -> int | None:
        """HF's Model.token_to_id: the id of a vocabulary token, or None."""
        return self.lookup.get(token)

    # (id_to_token: the dict below, callable as HF's Model.id_to_token(id))

    def tokenize_piece(self, piece: str) -> list[tuple[int, int, int]]:
        """(id, start, end) per token; start/end are character offsets in piece."""
        if not piece:
            return []
        if self.byte_level:
            return self._tokenize_bytes(piece)
        return self._tokenize_chars(piece)

    def tokenize_utf8(self, piece: str) -> list[tuple[int, int, int]]:
        """A byte-level model on the UTF-8 of piece (original characters): (id, start, end)
        with character offsets; a token holding part of a character covers that character."""
        ids_spans = self._merge_bytes(piece.encode("utf-8"))
        if piece.isascii():
            return ids_spans
        char_of = _char_of_byte(piece)
        return [(i, char_of[s], char_of[e - 1] + 1) for i, s, e in ids_spans]

    def skips_bytes_of(self, text: str) -> bool:
        """Whether text holds a byte this byte-level model skips (it has no token): the kernel's
        ids are right, its Encodings' offsets assume every byte is in a token."""
        if not self.skipped_bytes or (text.isascii() and self.skipped_bytes[0] >= 0x80):
            return False
        raw = text.encode("utf-8", "surrogatepass")
        return len(raw.translate(None, self.skipped_bytes)) != len(raw)

    def _tokenize_bytes(self, piece: str) -> list:
        return self._merge_bytes(bytelevel_token_bytes(piece))

    def _merge_bytes(self, raw: bytes) -> list:
        """(id, start byte, end byte) of the tokens of raw.  A byte without a token is skipped
        (as HF); the tokens after it then take HF's spans, which count the kept symbols' lengths
        in the byte-level text from its start (`_spans_after_skips`)."""
        whole = raw
        if self.missing_bytes and len(raw.translate(None, self.missing_bytes)) != len(raw):
            raw = raw.translate(None, self.missing_bytes)
        if self.dropout > 0.0:
            ids, _ = merge_ids(self.table, [self._single_byte_ids[b] for b in raw], self.dropout,
                               self._rng.getrandbits(64))
        else:
            ids = self.table.encode_bytes(raw)
        if raw is not whole:
            return self._spans_after_skips(whole, ids)
        out, pos = [], 0
        for i in ids:
            n = len(self.token_bytes[i])
            out.append((i, pos, pos + n))
            pos += n
        return out

    def _spans_after_skips(self, whole: bytes, ids: list) -> list:
        """HF's spans when bytes were skipped: its word adds each kept symbol's length (of the
        byte-level character's UTF-8) to a running offset into the byte-level text, as if
        nothing had been skipped; those offsets, taken back to the bytes of `whole`."""
        mapped_len = _BYTELEVEL_UTF8_LEN
        raw_at = [k for k, b in enumerate(whole) for _ in range(mapped_len[b])]
        out, pos = [], 0
        for i in ids:
            n = sum(mapped_len[b] for b in self.token_bytes[i])
            out.append((i, raw_at[pos], raw_at[pos + n - 1] + 1))
            pos += n
        return out

    def _tokenize_chars(self, piece: str) -> list:
        if self.dropout == 0.0:
            if self.ignore_merges and piece in self.lookup:
                return [(self.lookup[piece], 0, len(piece))]
            hit = self._cache.get(piece)
            if hit is not None:
                return hit
        # UTF-8 byte offsets (as HF) turned into character offsets
        char_of = _char_of_byte(piece)
        out = []
        last = len(char_of) - 1  # (HF counts a prefix's fallback bytes too: clamp)
        for i, s, e in self._merge_chars(piece):
            # a token holding part of a character (a fallback byte) covers that character
            out.append((i, char_of[min(s, last)], char_of[min(e - 1, last)] + 1))
        if self.dropout == 0.0:
            if len(self._cache) > 100_000:
                self._cache.clear()
            self._cache[piece] = out
        return out

    def _merge_chars(self, piece: str) -> list[tuple[int, int, int]]:
        """(id, start, end) of piece's tokens, in UTF-8 bytes of piece (HF's offsets)."""
        ids, lens = self._initial_symbols(piece)
        seed = self._rng.getrandbits(64) if self.dropout > 0.0 else 0
        merged, starts = merge_ids(self.table, ids, self.dropout, seed)
        byte_pos = [0]
        for n in lens:
            byte_pos.append(byte_pos[-1] + n)
        return [(i, byte_pos[s], byte_pos[starts[k + 1] if k + 1 < len(starts) else len(ids)])
                for k, (i, s) in enumerate(zip(merged, starts))]

    def _initial_symbols(self, piece: str) -> tuple[list, list]:
        """HF's BPE::merge_word before merging: ids and UTF-8 byte lengths of the symbols."""
        ids, lens = [], []
        unk = None  # (id, byte length) of a pending unk symbol
        last = len(piece) - 1
        for k, c in enumerate(piece):
            s = c
            if k > 0 and self.prefix:
                s = self.prefix + s
            if k == last and self.suffix:
                s = s + self.suffix
            n = len(c.encode("utf-8", "surrogatepass"))
            i = self.lookup.get(s)
            if i is not None:
                if unk is not None:
                    ids.append(unk[0])
                    lens.append(unk[1])
                    unk = None
                ids.append(i)
                lens.append(n)
                continue
            if self.byte_fallback:
                fallback = [self._byte_ids[b] for b in s.encode("utf-8", "surrogatepass")]
                if all(f is not None for f in fallback):
                    ids.extend(fallback)
                    lens.extend([1] * len(fallback))
                    continue
            if self.unk_token is not None:
                unk_id = self.lookup.get(self.unk_token)
                if unk_id is None:   # HF's error too (an untrained model)
                    raise ValueError(f"unk token {self.unk_token!r} is not in the vocabulary")
                if unk is not None and self.fuse_unk:
                    unk = (unk[0], unk[1] + n)
                else:
                    if unk is not None:
                        ids.append(unk[0])
                        lens.append(unk[1])
                    unk = (unk_id, n)
        if unk is not None:
            ids.append(unk[0])
            lens.append(unk[1])
        return ids, lens


def _char_of_byte(text: str) -> list[int]:
    """For each UTF-8 byte offset of text, the index of the character holding that byte."""
    if text.isascii():
        return range(len(text))
    out = []
    for k, c in enumerate(text):
        out.extend([k] * len(c.encode("utf-8", "surrogatepass")))
    return out


class IdToToken(dict):
    """The id -> token dict, also callable as HF's `Model.id_to_token(id)` (None if absent)."""

    __slots__ = ()

    def __call__(self, token_id: int) -> str | None:
        return self.get(token_id)


class Token:
    """HF's `tokenizers.Token`: a model token's `id`, `value` and byte `offsets` in the piece."""

    __slots__ = ("id", "value", "offsets")

    def __init__(self, token_id: int, value: str | None, offsets: tuple[int, int]):
        self.id, self.value, self.offsets = token_id, value, offsets

    def as_tuple(self) -> tuple:
        return (self.id, self.value, self.offsets)

    def __eq__(self, other) -> bool:
        return isinstance(other, Token) and self.as_tuple() == other.as_tuple()

    def __hash__(self) -> int:
        return hash(self.as_tuple())

    def __repr__(self) -> str:
        return f"Token(id={self.id}, value={self.value!r}, offsets={self.offsets})"
