"""HF BPE's `continuing_subword_prefix` and `end_of_word_suffix` on a byte-level vocabulary
(CLIP's "</w>"), lowered to the byte-level kernel (`_word_marks.pxd`).

HF starts a word's symbols as its characters, each after the first with the prefix, the last
with the suffix, looked up as strings in the vocabulary (BPE::merge_word), and a merge makes
`a + b[len(prefix):]`.  The kernel holds each token as the bytes of its text with two marks
that UTF-8 never holds: START before a token that begins a word (prefix files: the tokens
without the prefix), END after one that ends a word (the tokens with the suffix).  A piece is
merged as START + bytes + END; the first merges of the table, ranked below the file's, are
(START, ##c) -> c and (c, END) -> c</w> for every byte, so after them the parts are HF's first
symbols and the file's merges follow by rank.  The kernel then needs every byte's forms: a
byte a form of which the vocabulary lacks gets HF's unk token or is skipped, which the
kernel does not do, so such a file stays on the pipeline (`refusal` says which byte)."""
from __future__ import annotations

import array

from .._core import BPETable
from .._formats import first_unjoined_merge, split_word_affixes, untracked
from .._json_vocab import strict_token_bytes
from ..formats.bytelevel import BYTE_TO_CHAR, token_bytes as bytelevel_bytes

START_MARK, END_MARK = 0xF8, 0xF9    # _word_marks.pxd
MARK_START, MARK_END = 1, 2
# bytes valid UTF-8 never holds: no text reaches them, and the marks are two of them
NOT_UTF8 = frozenset([0xC0, 0xC1, *range(0xF5, 0x100)])


class WordAffixes:
    """The kernel table of a byte-level BPE with a prefix and/or suffix.  `table` (None when
    `refusal` says why not), `token_bytes` (the text bytes of each id: what a token covers,
    for offsets), `merge_rows` (the file's merges by id, rank order)."""

    def __init__(self, vocab, merge_rows, prefix: str, suffix: str, n_ids: int):
        """merge_rows(token_bytes): the file's merges as hf_merge_rows gives them, for these
        kernel bytes (hf.model's: read with the file, not parsed again)."""
        self.prefix, self.suffix = prefix, suffix
        self.table = None
        self.refusal = None
        text, kernel = self._token_bytes(vocab, n_ids)
        self.token_bytes = untracked(tuple(text))
        self.merge_rows = rows = merge_rows(tuple(kernel))
        bad = first_unjoined_merge(rows, kernel)   # (C: a loop here cost CLIP's load ~40 ms)
        if bad >= 0:
            a, b = rows[3 * bad], rows[3 * bad + 1]
            self.refusal = (f"merge ({_token(vocab, a)!r}, {_token(vocab, b)!r}) does not join the text "
                            f"of its tokens with the prefix {prefix!r} / suffix {suffix!r}")
            return
        first, why = self._first_merges(vocab, n_ids)
        if why is not None:
            self.refusal = why
            return
        kernel += [bytes([START_MARK]), bytes([END_MARK])]
        marks = (MARK_START if prefix else 0) | (MARK_END if suffix else 0)
        self.table = BPETable.from_merges(first + rows, kernel, None, skip_missing_bytes=True, word_marks=marks)

    def _token_bytes(self, vocab: dict, n_ids: int) -> tuple:
        """(text bytes, kernel bytes) of every id: the kernel's with START before a token that
        begins a word (prefix files) and END after one that ends a word; None for an id no
        token has, or a token no text reaches (a mark byte in its text, or a character outside
        the byte-level alphabet such as a raw " " beside "Ġ": read strictly, as hf/model.py does)."""
        text, kernel = [None] * n_ids, [None] * n_ids
        start, end = bytes([START_MARK]), bytes([END_MARK])
        p, s = bytelevel_bytes(self.prefix), bytelevel_bytes(self.suffix)
        if p is None or s is None:   # an affix outside the byte alphabet: token by token
            pairs = ((i,) + self._parts(token) for token, i in vocab.items())
            pairs = ((i, bytelevel_bytes(core, True) if core else None, starts, ends) for i, core, starts, ends in pairs)
        else:   # the alphabet maps characters one to one: the affixes are found in the bytes (C)
            return split_word_affixes(strict_token_bytes(vocab, n_ids), p, s, start, end, start + end)
        for i, raw, starts, ends in pairs:
            if not raw:
                continue
            text[i] = raw
            if START_MARK not in raw and END_MARK not in raw:   # (else no text reaches it)
                kernel[i] = (start if starts else b"") + raw + (end if ends else b"")
        return text, kernel

    def _parts(self, token: str) -> tuple:
        """(text, begins a word (prefix files), ends a word) of a vocabulary token."""
        starts = True
        if self.prefix and token.startswith(self.prefix):
            token, starts = token[len(self.prefix):], False
        ends = bool(self.suffix) and token.endswith(self.suffix)
        if ends:
            token = token[:len(token) - len(self.suffix)]
        return token, bool(self.prefix) and starts, ends

    def _first_merges(self, vocab: dict, n_ids: int) -> tuple:
        """The rows (START, ##c) -> c, then (##c, END) -> ##c</w> and (c, END) -> c</w>, for
        every byte text can hold, or (None, why) when the vocabulary lacks one of those
        forms of a byte (HF's unk or skip: the pipeline's)."""
        start_id, end_id = n_ids, n_ids + 1
        starts, ends = array.array("q"), array.array("q")
        p, s = self.prefix, self.suffix
        for b in range(256):
            if b in NOT_UTF8:
                continue
            c = BYTE_TO_CHAR[b]
            inner = vocab.get(p + c)          # the byte inside a word (no prefix: the byte)
            needed = [p + c]
            if p:
                first = vocab.get(c)
                needed.append(c)
                starts.extend((start_id, inner if inner is not None else -1, first if first is not None else -1))
            if s:
                needed.append(p + c + s)
                ends.extend((inner if inner is not None else -1, end_id, vocab.get(p + c + s, -1)))
                if p:
                    needed.append(c + s)
                    ends.extend((first if first is not None else -1, end_id, vocab.get(c + s, -1)))
            missing = [t for t in needed if t not in vocab]
            if missing:
                return None, (f"byte 0x{b:02X} has no token {missing[0]!r} (HF gives the unk token or "
                              "skips it, which the kernel does not)")
        return starts + ends, None


def _token(vocab: dict, i: int) -> str:
    return next((t for t, j in vocab.items() if j == i), str(i))
