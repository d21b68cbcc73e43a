"""The two GGUF tokenizer models, each on fastbpe's one merge kernel (`_core.BPETable`).

* `ByteLevelBPE` (`tokenizer.ggml.model = "gpt2"`): token texts are bytes in GPT-2's byte
  alphabet and `tokenizer.ggml.merges` ranks the pairs, so the table is `from_merges` over the
  bytes, exactly as for a byte-level tokenizer.json; pieces come from the pre-tokenizer's regexes
  (or the C scanner for the standard patterns) and are merged by the same GIL-free kernel.
* `SentencePieceBPE` (`"llama"`): llama.cpp's llm_tokenizer_spm merges adjacent symbols (UTF-8
  characters at first) whose concatenation is a token, highest score first, leftmost on ties.
  As a pair table: every split of every token into two symbols is a merge whose rank is the
  order of the token's score (equal scores share a rank, so ties go leftmost, as llama.cpp).
  A character that is not a token starts as its own symbol and, if it stays alone, becomes its
  `<0xNN>` byte tokens.
"""
from __future__ import annotations

import re
from functools import partial
from itertools import chain, repeat
from operator import add

import numpy as np

from .._char_bpe import CharBPE
from .._core import BPETable
from .._formats import hf_merge_rows
from .._merge_ids import merge_ids
from .._spm_model import split_rows
from ..formats.bytelevel import BYTE_TO_CHAR
from ..formats.bytelevel import token_bytes as bytelevel_bytes
from .vocab import Vocab


class ByteLevelBPE:
    def __init__(self, vocab: Vocab, merges):
        path = vocab.path
        if not isinstance(merges, list):
            raise ValueError(f"{path}: tokenizer.ggml.merges is missing or not an array of strings "
                             "(a 'gpt2' vocabulary needs it)")
        t2i = vocab.text_to_id
        token_bytes = [None] * len(vocab.tokens)
        for text, i in t2i.items():  # only the id a text lookup gives (the last of equal texts)
            token_bytes[i] = bytelevel_bytes(text)
        # A symbol that is no token gets a stand-in id past the vocabulary, so the kernel can merge
        # through it: a byte with no token of its own (Falcon lacks 28), so the kernel can start
        # from bytes, and a merge's result that is no token (llama.cpp merges by text and looks up
        # only the final symbols).  llama.cpp looks a final symbol that is no token up byte by byte
        # as raw one-byte text and drops what it does not find: `_fix_stand_ins` does the same.
        self.n_tokens = n = len(token_bytes)
        present = {b[0] for b in token_bytes if b is not None and len(b) == 1}
        self.stand_ins = {}
        symbols = {}  # the text of each symbol that is no token -> its stand-in id
        for byte in range(256):
            if byte not in present:
                symbols[BYTE_TO_CHAR[byte]] = n + len(self.stand_ins)
                self.stand_ins[n + len(self.stand_ins)] = _bytelevel_char_lookups(byte, t2i)
                token_bytes.append(bytes([byte]))

        taken = None  # the token bytes a stand-in of a merged symbol must not take (see _unmatchable)

        def new_symbol(text: str) -> int:
            nonlocal taken
            if taken is None:
                taken = {b for b in token_bytes if b and b[0] == 0xFF}
            i = symbols[text] = n + len(self.stand_ins)
            self.stand_ins[i] = _bytelevel_text_lookups(text, t2i)
            token_bytes.append(_unmatchable(bytelevel_bytes(text), taken))
            return i

        rows = _merge_rows(merges, t2i, token_bytes, symbols, new_symbol)
        # Which texts can meet a stand-in (may_stand_in): any, when a merge's result needs one; else
        # those holding a lacking ASCII character, or any non-ASCII one when a byte UTF-8 uses (not
        # C0, C1, F5-FF) is lacking.  Falcon lacks 28 bytes, 14 of them ASCII controls.
        lacking = [b for b in range(256) if b not in present and not (b in (0xC0, 0xC1) or b >= 0xF5)]
        self._merge_stand_ins = len(self.stand_ins) > 256 - len(present)
        self._lacking_ascii = [chr(b) for b in lacking if b < 0x80]
        self._lacking_high = any(b >= 0x80 for b in lacking)
        try:
            self.table = BPETable.from_merges(rows, token_bytes, None, whole_piece=vocab.ignore_merges)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
        self.table.learn_whole_tokens(16)   # as hf.model: whole tokens known at load, not at first meeting

    def encode_pieces(self, pieces: list[str]) -> list[int]:
        return self._fix_stand_ins(self.table.encode_pieces(pieces))

    def encode_text(self, text: str, kind: int) -> list[int]:
        return self._fix_stand_ins(self.table.encode_text(text, kind))

    def encode_texts(self, texts: list[str], kind: int) -> list[int]:
        """The ids of texts one after the other, each scanned on its own (one kernel call)."""
        return self._fix_stand_ins(list(chain.from_iterable(self.table.encode_texts(texts, kind))))

    def may_stand_in(self, text: str) -> bool:
        """Whether text's ids can hold a stand-in (False: they need no _fix_stand_ins)."""
        if not self.stand_ins:
            return False
        if self._merge_stand_ins or (self._lacking_high and not text.isascii()):
            return True
        return any(c in text for c in self._lacking_ascii)

    def fix_stand_ins_lists(self, lists: list, texts: list) -> list:
        """_fix_stand_ins of each list of ids (a batch's, of `texts`) whose text may_stand_in:
        `max(ids)` over each of Falcon's lists was a sixth of its batch's instructions."""
        if not self.stand_ins:
            return lists
        return [self._fix_stand_ins(ids) if self.may_stand_in(text) else ids for ids, text in zip(lists, texts)]

    def _fix_stand_ins(self, ids: list[int]) -> list[int]:
        if not self.stand_ins or not ids or max(ids) < self.n_tokens:
            return ids
        out = []
        for i in ids:
            if i < self.n_tokens:
                out.append(i)
            else:
                out.extend(self.stand_ins[i])
        return out


def _merge_rows(merges: list[str], t2i: dict, token_bytes: list, symbols: dict, new_symbol) -> np.ndarray:
    """(left, right, merged) ids of llama.cpp's bpe_ranks in rank order: a merge is split at its
    first space after the first character, the first of equal pairs wins, and a merge whose
    parts are not symbols (tokens, stand-ins of `symbols`, or results of other merges) is left
    out (it cannot apply to bytes).  A result that is no token gets a stand-in (`new_symbol`),
    as llama.cpp merges texts and looks up only the final symbols.  Bulk operations: a
    vocabulary has 10^5 merges."""
    n = len(merges)
    joined = "\n".join(merges)
    if joined.count(" ") == n and joined.count("\n") == n - 1 and not any(m[:1] == " " for m in merges):
        # the usual file: one space a merge, no newline in any (byte-level text has none)
        parts = joined.replace(" ", "\n").split("\n")
        del joined
        lefts, rights = parts[0::2], parts[1::2]
        del parts
    else:
        parts = [(m[:c], m[c + 1:]) if (c := m.find(" ", 1)) > 0 else ("", "") for m in merges]
        lefts, rights = (list(x) for x in zip(*parts)) if parts else ([], [])
    ids = partial(np.fromiter, dtype=np.int64, count=n)
    a = ids(map(t2i.get, lefts, repeat(-1)))
    b = ids(map(t2i.get, rights, repeat(-1)))
    c = ids(map(t2i.get, map(add, lefts, rights), repeat(-1)))
    has_bytes = np.fromiter((t is not None for t in token_bytes), dtype=bool, count=len(token_bytes))
    has_bytes = np.append(has_bytes, False)  # index -1: not a token
    ok = has_bytes[a] & has_bytes[b] & has_bytes[c] & (a >= 0) & (b >= 0) & (c >= 0)
    rows = np.stack([a, b, c], axis=1)[ok]
    order = np.flatnonzero(ok)
    more = _merges_through_stand_ins(np.flatnonzero(~ok), lefts, rights, t2i, has_bytes, symbols, new_symbol)
    if more:
        more_order, more_rows = zip(*more)
        rows = np.concatenate([rows, np.array(more_rows, dtype=np.int64).reshape(-1, 3)])
        rows = rows[np.argsort(np.concatenate([order, more_order]), kind="stable")]
    # keep the first row of each pair
    _, first = np.unique(rows[:, 0] * (len(token_bytes) + 1) + rows[:, 1], return_index=True)
    return rows[np.sort(first)]


def _merges_through_stand_ins(todo, lefts: list, rights: list, t2i: dict, has_bytes, symbols: dict, new_symbol):
    """[(merge index, (left, right, merged))] of the merges `todo` whose parts become symbols:
    a token, a stand-in, or a merge's result that is no token (which gets a stand-in here and
    may let more merges apply).  A merge waits for the text it lacks; when that text becomes a
    symbol the merges waiting for it are tried again (a work list: no recursion, each merge
    tried at most three times)."""
    def symbol(text: str):
        i = t2i.get(text)
        if i is not None and has_bytes[i]:
            return i
        return symbols.get(text)

    out, waiting, work = [], {}, list(reversed(todo.tolist()))
    while work:
        k = work.pop()
        left, right = lefts[k], rights[k]
        i = symbol(left)
        j = symbol(right) if i is not None else None
        if i is None or j is None:
            waiting.setdefault(right if i is not None else left, []).append(k)
            continue
        text = left + right
        merged = symbol(text)
        if merged is None:
            merged = new_symbol(text)
            work.extend(reversed(waiting.pop(text, [])))
        out.append((k, (i, j, merged)))
    return out


def _unmatchable(raw: bytes, taken: set) -> bytes:
    """Bytes for a merged symbol's stand-in that no piece of text can be, added to `taken`: the
    kernel must reach it by merging only, never find it as a whole piece (with ignore_merges
    llama.cpp merges a piece that is no token).  0xFF never occurs in UTF-8; the last byte is a
    continuation byte, so the kernel's shortcuts for multi-byte characters (build_char_tokens)
    count the stand-in as a neighbour of either kind, which only makes them more careful."""
    out = b"\xff" + raw + b"\xbf"
    while out in taken:
        out = b"\xff" + out
    taken.add(out)
    return out


def _bytelevel_text_lookups(text: str, t2i: dict) -> list[int]:
    """What llama.cpp emits for a final symbol that is no token: each byte of its (byte-level)
    text looked up as a one-byte text; the ids found."""
    out = []
    for b in text.encode("utf-8", "surrogateescape"):
        i = t2i.get(chr(b) if b < 0x80 else chr(0xDC00 + b))
        if i is not None:
            out.append(i)
    return out


def _bytelevel_char_lookups(byte: int, t2i: dict) -> list[int]:
    """What llama.cpp emits for a lone byte with no token (usually nothing)."""
    return _bytelevel_text_lookups(BYTE_TO_CHAR[byte], t2i)


class SentencePieceBPE:
    def __init__(self, vocab: Vocab):
        self.vocab = vocab
        path = vocab.path
        if vocab.scores is None:
            raise ValueError(f"{path}: tokenizer.ggml.scores is missing (a 'llama' vocabulary needs it)")
        n = len(vocab.tokens)
        t2i = vocab.text_to_id
        # rank = position of the token's score among the distinct scores, highest first
        scores = vocab.scores.astype(np.float64)
        distinct = np.unique(scores)[::-1]
        rank_of = np.searchsorted(-distinct, -scores)
        # symbols that are not tokens: single characters (they may still merge into a token)
        extra: dict[str, int] = {}
        texts = [None] * n
        for text, i in t2i.items():
            texts[i] = text
        flat, _ = split_rows(texts, rank_of.astype(np.int64), extra)   # the .model files' loader too
        rows = np.frombuffer(flat, dtype=np.int64).reshape(-1, 3)
        ranks = rank_of[rows[:, 2]]
        self.n_tokens = n
        self.extra = extra
        self.lone = n + len(extra)  # a character in no token and no merge
        token_bytes = [vocab.token_bytes(i) for i in range(n)] + [s.encode("utf-8", "surrogateescape") for s in extra]
        token_bytes.append(b"\0")
        self.table = BPETable.from_merges(rows, token_bytes, None, whole_piece=False, require_all_bytes=False,
                                          ranks=ranks.astype(np.int64))
        self._byte_ids = [self._byte_token(b) for b in range(256)]
        self._char_ids = _CharIds(vocab.text_to_id, extra, self.lone)
        self.word_cut = not any(_GLUED_SPACE.search(t) for t in vocab.tokens)
        self._cache: dict[str, list[int]] = {}
        self.compiled, self.compiled_refusal = self._compiled(rows, ranks)

    def _compiled(self, rows, ranks) -> tuple:
        """(`_char_bpe.CharBPE`, None): the char-level kernel the SentencePiece-style
        tokenizer.json and .model files run on, when it gives llama.cpp's ids: every character
        inside a token is a token itself (no stand-in symbols) and all 256 <0xNN> tokens exist
        (a lone unknown character then falls back to bytes in both, and nothing is ever unk).
        Else (None, why not): the merges run here, word by word."""
        if len(rows) and int(rows[:, :2].max()) >= self.n_tokens:
            return None, "characters inside tokens that are no tokens themselves"
        if any(f"<0x{b:02X}>" not in self.vocab.text_to_id for b in range(256)):
            return None, "some <0xNN> byte tokens are missing"
        try:
            return CharBPE.build(self.vocab.text_to_id, rows, None, True, False, False, _SPM_SPACE,
                                 ranks=ranks.astype(np.int64), table=self.table), None
        except ValueError as e:
            return None, str(e)

    def _byte_token(self, b: int) -> int | None:
        i = self.vocab.text_to_id.get(f"<0x{b:02X}>")
        if i is None and b < 128:
            i = self.vocab.text_to_id.get(chr(b))
        return i

    def encode(self, text: str) -> list[int]:
        """llm_tokenizer_spm on text (spaces already escaped as ▁).  When no token has a ▁ after
        another character (Llama's, Phi-3's, Baichuan's vocabularies), no merge can join a
        character to a following ▁, so the text is merged word by word (a word: ▁s, then
        other characters) with the same result, and words seen before come from a cache."""
        if self.compiled is not None:
            return self.compiled.encode_text(text, 0)
        if not self.word_cut:
            return self._encode_word(text)
        out, cache = [], self._cache
        for word in _SPM_WORDS.findall(text):
            ids = cache.get(word)
            if ids is None:
                ids = self._encode_word(word)
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                cache[word] = ids
            out.extend(ids)
        return out

    def _encode_word(self, text: str) -> list[int]:
        if not text:
            return []
        merged, starts = merge_ids(self.table, list(map(self._char_ids.__getitem__, text)))
        if max(merged) < self.n_tokens:
            return merged
        out = []
        for i, s in zip(merged, starts):
            if i < self.n_tokens:
                out.append(i)
                continue
            for b in text[s].encode("utf-8", "surrogateescape"):
                t = self._byte_ids[b]
                if t is None:
                    raise ValueError(f"{self.vocab.path}: the vocabulary has no byte token <0x{b:02X}> "
                                     f"for the character {text[s]!r}")
                out.append(t)
        return out


class Gemma4BPE:
    """llama.cpp's Gemma4 tokenizer (`tokenizer.ggml.model = "gemma4"`): BPE over the characters of
    the text with " " as ▁ (no prefix), merges by their order in tokenizer.ggml.merges, a final
    symbol that is no token as its <0xNN> byte tokens; the text is cut into runs of newlines and of
    the rest, and a newline run that is a token is taken whole.  That is the char-level kernel's
    model (`_char_bpe.CharBPE`, as SentencePiece-style files) when no merge joins a newline to
    another character and every newline run that is a token is what its merges make (checked
    here: else the file is refused, naming which)."""

    def __init__(self, vocab: Vocab, merges):
        path, t2i = vocab.path, vocab.text_to_id
        if not isinstance(merges, list):
            raise ValueError(f"{path}: tokenizer.ggml.merges is missing (a 'gemma4' vocabulary needs it)")
        table = self._rows_in_c(vocab, merges)
        if table is None:
            table = self._rows(vocab, merges)
        if any(f"<0x{b:02X}>" not in t2i for b in range(256)):
            raise ValueError(f"{path}: some <0xNN> byte tokens are missing")
        self.vocab, self.n_tokens = vocab, len(vocab.tokens)
        self.compiled = CharBPE.build(t2i, np.ascontiguousarray(table[:, :3]), None, True, False, False, _SPM_SPACE,
                                      ranks=np.ascontiguousarray(table[:, 3]))
        self.compiled_refusal = None
        for n in range(1, 257):
            run = "\n" * n
            if run in t2i and self.compiled.encode_text(run, 0) != [t2i[run]]:
                raise ValueError(f"{path}: the newline run of {n} is a token its merges do not make "
                                 "(llama.cpp takes such a run whole)")

    @staticmethod
    def _rows_in_c(vocab: Vocab, merges: list):
        """The (left, right, merged, rank) rows by `_formats.hf_merge_rows` (the lookups in C:
        Gemma-4's 514,906 merges), or None for `_rows` to judge: a merge not "a b" of two tokens,
        a pair listed twice (llama.cpp keeps the first place, HF's reading the last), an empty
        token (`_rows` cuts at the first space after the first character), or a merge `_rows`
        refuses (its message names the merge)."""
        if "" in vocab.text_to_id:
            return None
        try:
            flat = hf_merge_rows(merges, vocab.text_to_id, 0)
        except ValueError:
            return None
        if len(flat) != 3 * len(merges):
            return None
        rows = np.frombuffer(flat, dtype=np.int64).reshape(-1, 3)
        tokens = vocab.tokens
        refused = np.zeros(len(tokens), dtype=bool)   # a byte token, or a newline beside another character
        refused[[i for i, t in enumerate(tokens) if t.startswith("<0x") or ("\n" in t and t.strip("\n"))]] = True
        if refused[rows].any():
            return None
        return np.column_stack([rows, np.arange(len(rows), dtype=np.int64)])

    @staticmethod
    def _rows(vocab: Vocab, merges: list):
        """The rows merge by merge in Python, refusing what the char-level kernel cannot run."""
        path, t2i = vocab.path, vocab.text_to_id
        rows, seen = [], set()
        for k, merge in enumerate(merges):
            cut = merge.find(" ", 1)
            left, right = (merge[:cut], merge[cut + 1:]) if cut >= 0 else ("", "")
            if (left, right) in seen:
                continue       # llama.cpp's emplace keeps the first
            seen.add((left, right))
            ids = t2i.get(left), t2i.get(right), t2i.get(left + right)
            if None in ids:
                raise ValueError(f"{path}: merge {k} {merge!r} has a part or a result that is no token "
                                 "(the char-level kernel merges tokens)")
            if left.startswith("<0x") or right.startswith("<0x"):
                raise ValueError(f"{path}: merge {k} {merge!r} joins a byte token (llama.cpp merges characters)")
            if "\n" in left + right and (left + right).strip("\n"):
                raise ValueError(f"{path}: merge {k} {merge!r} joins a newline to another character "
                                 "(llama.cpp cuts the text at newline runs first)")
            rows.append((*ids, k))
        return np.array(rows, dtype=np.int64).reshape(-1, 4)

    def encode(self, text: str) -> list[int]:
        """Gemma4's ids of text (spaces already escaped as ▁)."""
        return self.compiled.encode_text(text, 0)


_SPM_SPACE = "\u2581"
_GLUED_SPACE = re.compile(f"[^{_SPM_SPACE}]{_SPM_SPACE}")
_SPM_WORDS = re.compile(f"{_SPM_SPACE}*[^{_SPM_SPACE}]+|{_SPM_SPACE}+")
_CACHE_LIMIT = 1 << 16


class _CharIds(dict):
    """char -> the id of its initial symbol (its token, its stand-in, or the id of characters in
    no token), filled on first sight: one C-level lookup a character."""

    def __init__(self, text_to_id: dict, extra: dict, lone: int):
        super().__init__()
        self.text_to_id, self.extra, self.lone = text_to_id, extra, lone

    def __missing__(self, c: str) -> int:
        i = self.text_to_id.get(c)
        if i is None:
            i = self.extra.get(c, self.lone)
        self[c] = i
        return i
