"""`GGUFTokenizer`: llama.cpp's tokenizer of a GGUF file, without llama.cpp.

`encode_ids(text, add_special_tokens, parse_special)` gives the ids of llama.cpp's
`llama_tokenize(vocab, text, add_special, parse_special)`; `decode(ids)` gives its
`llama_detokenize`.  The steps follow llama-vocab.cpp:

1. special-token text is cut out (`tokenizer_st_partition`): user-defined tokens always,
   control and unknown tokens only with parse_special, longest token first;
2. each remaining fragment is tokenized by the model (byte-level BPE after the pre-tokenizer's
   regexes, or SentencePiece BPE with ▁ for spaces and a leading space);
3. BOS / EOS are added when asked and the file says so.
"""
from __future__ import annotations

import itertools
import operator
import os
import re

import numpy as np
import regex

from .._added_split import encode_cut_texts
from .._char_bpe import PREPEND, REPLACE_SPACE
from .._encoding_base import EncodingIds
from ..threads import available_cores, check_threads, parallel_map
from .models import ByteLevelBPE, Gemma4BPE, SentencePieceBPE
from .pretokenizers import FOLD_TRAP, Splitter, has_marks
from .reader import read_metadata
from .special_cut import C_SPACE as _C_SPACE, LONG_SPECIAL as _LONG_SPECIAL, special_cut
from .vocab import BYTE, CONTROL, KEYS, LSTRIP, NORMAL, RSTRIP, UNKNOWN, USER_DEFINED, Vocab

_SPM_SPACE = "\u2581"


class GGUFTokenizer:
    def __init__(self, meta: dict, path: str = "<gguf>"):
        self.path = path
        self.metadata = {k: v for k, v in meta.items() if not k.startswith("tokenizer.ggml.")
                         or k in ("tokenizer.ggml.model", "tokenizer.ggml.pre")}
        self.vocab = vocab = Vocab(meta, path)
        if vocab.model == "gpt2":
            self.model = ByteLevelBPE(vocab, meta.get("tokenizer.ggml.merges"))
            self.splitter = Splitter(vocab.pre)
        else:
            self.model = Gemma4BPE(vocab, meta.get("tokenizer.ggml.merges")) if vocab.model == "gemma4" \
                else SentencePieceBPE(vocab)
            self.splitter = None
        self._specials_by_mode = {}
        self._cut_by_mode = {}   # parse_special -> a SpecialCut, or None (_cut_plan)
        # token_to_piece per id, filled as ids are decoded (llama.cpp keeps such a cache too)
        self._pieces = {special: _Pieces(self, special) for special in (False, True)}

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "GGUFTokenizer":
        name = os.fspath(path)
        return cls(read_metadata(name, KEYS), name)

    # -- facts of the file -----------------------------------------------------------------

    @property
    def model_type(self) -> str:
        return self.vocab.model

    @property
    def pre_tokenizer(self) -> str | None:
        return self.vocab.pre.name if self.vocab.pre else None

    @property
    def bos_token_id(self) -> int | None:
        return self.vocab.ids["bos"]

    @property
    def eos_token_id(self) -> int | None:
        return self.vocab.ids["eos"]

    @property
    def pad_token_id(self) -> int | None:
        return self.vocab.ids["padding"]

    @property
    def unk_token_id(self) -> int | None:
        return self.vocab.ids["unknown"]

    @property
    def add_bos_token(self) -> bool:
        return self.vocab.add_bos

    @property
    def add_eos_token(self) -> bool:
        return self.vocab.add_eos

    @property
    def chat_template(self) -> str | None:
        return self.vocab.chat_template

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        return dict(self.vocab.text_to_id)

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return len(self.vocab.tokens)

    def token_to_id(self, token: str) -> int | None:
        return self.vocab.text_to_id.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self.vocab.tokens[token_id] if 0 <= token_id < len(self.vocab.tokens) else None

    @property
    def engine(self) -> str:
        """Which path encodes this file, as `fastbpe.Tokenizer.engine` says it: "kernel" (one
        GIL-free call cuts and merges a text), "kernel+matcher (why)" (pieces cut in Python,
        merged by the kernel) or "pipeline (why)" (merged here, word by word)."""
        if self.splitter is None:
            m = self.model
            return "kernel" if m.compiled is not None else f"pipeline ({m.compiled_refusal})"
        sp = self.splitter
        if sp.scanner_kind >= 0:
            return "kernel"
        if sp.markless_kind >= 0:
            return "kernel+matcher (texts with combining marks)"
        return f"kernel+matcher ({sp.refusal})"

    def __repr__(self) -> str:
        how = f"pre={self.pre_tokenizer!r}, {self.splitter!r}" if self.splitter else "SentencePiece BPE"
        return f"<GGUFTokenizer {os.path.basename(self.path)!r}: {self.vocab.model}, {len(self.vocab.tokens)} tokens, {how}>"

    # -- encoding ---------------------------------------------------------------------------

    def encode_ids(self, text: str, add_special_tokens: bool = False, parse_special: bool = False) -> list[int]:
        """llama.cpp's llama_tokenize(text, add_special=add_special_tokens, parse_special)."""
        if not isinstance(text, str):
            raise TypeError(f"expected str, not {type(text).__name__}")
        cut = self._cut_plan(parse_special)
        if cut is not None and not (self.splitter.fold_guard and FOLD_TRAP in text):
            return self._encode_cut([text], cut, add_special_tokens)[0]
        fragments = self._partition(text, parse_special)
        vocab = self.vocab
        out = []
        if add_special_tokens and vocab.add_bos:
            if vocab.ids["bos"] is None:
                raise ValueError(f"{self.path}: the file asks for a BOS token but has none")
            out.append(vocab.ids["bos"])
        if vocab.meta_spaces:
            prev_special = True  # a leading space before the first text and after each special token
            compiled = self.model.compiled
            for frag in fragments:
                if type(frag) is int:
                    out.append(frag)
                    prev_special = True
                    continue
                if compiled is not None:   # the kernel puts the ▁s in (no str made here)
                    out.extend(compiled.encode_text(frag, self._meta_kind(prev_special)))
                else:
                    if vocab.encode_space_prefix and prev_special:
                        frag = " " + frag
                    out.extend(self.model.encode(frag.replace(" ", _SPM_SPACE)))
                prev_special = False
        else:
            for frag in fragments:
                if type(frag) is int:
                    out.append(frag)
                else:
                    out.extend(self._encode_bpe(frag))
        if add_special_tokens and vocab.add_eos:
            if vocab.ids["eos"] is None:
                raise ValueError(f"{self.path}: the file asks for an EOS token but has none")
            out.append(vocab.ids["eos"])
        return out

    def encode(self, text: str, add_special_tokens: bool = False, parse_special: bool = False) -> "GGUFEncoding":
        """`encode_ids` with the tokens' texts (an HF-style result: .ids, .tokens, masks)."""
        ids = self.encode_ids(text, add_special_tokens, parse_special)
        return GGUFEncoding(ids, [self.vocab.tokens[i] for i in ids], (self, text, add_special_tokens, parse_special))

    def encode_batch(self, texts, add_special_tokens: bool = False, parse_special: bool = False,
                     num_threads: int | None = None) -> list["GGUFEncoding"]:
        """`encode` of each text (ids from `encode_ids_batch`)."""
        tokens = self.vocab.tokens
        texts = list(texts)
        return [GGUFEncoding(ids, [tokens[i] for i in ids], (self, text, add_special_tokens, parse_special))
                for text, ids in zip(texts, self.encode_ids_batch(texts, add_special_tokens, parse_special, num_threads))]

    def encode_ids_batch(self, texts, add_special_tokens: bool = False, parse_special: bool = False,
                         num_threads: int | None = None) -> list[list[int]]:
        """encode_ids of each text, on threads (default: one per core): the merge kernel (and the
        C scanner, for Llama-3 / Qwen2 / GPT-2 splits) runs with the GIL released."""
        check_threads(num_threads)
        texts = list(texts)
        if num_threads is None:
            num_threads = available_cores()

        cut = self._cut_plan(parse_special)

        def chunk(part):
            if self.vocab.meta_spaces and self.model.compiled is not None:
                return self._encode_meta_batch(part, add_special_tokens, parse_special)
            if cut is None or (self.splitter.fold_guard and any(FOLD_TRAP in t for t in part)):
                return [self.encode_ids(t, add_special_tokens, parse_special) for t in part]
            for t in part:
                if not isinstance(t, str):
                    raise TypeError(f"expected str, not {type(t).__name__}")
            return self._encode_cut(part, cut, add_special_tokens)

        return parallel_map(chunk, texts, num_threads, keep_threads=True)

    def _encode_cut(self, texts: list, cut, add_special_tokens: bool) -> list:
        """encode_ids of each text (str or a subclass) in one kernel call, specials cut by `cut`."""
        texts = [t if type(t) is str else str.__str__(t) for t in texts]
        lists = encode_cut_texts(self.model.table, self.splitter.scanner_kind, cut.raw, cut.second, texts,
                                 deeper=cut.deeper)
        return [self._with_bos_eos(ids, add_special_tokens) for ids in self.model.fix_stand_ins_lists(lists, texts)]

    def _meta_kind(self, prev_special: bool) -> int:
        """The char-level kernel's flags for a SentencePiece fragment: " " read as ▁, and a ▁ in
        front of the text's first fragment and of each after a special token when the file adds
        a space prefix (llama.cpp's " " + fragment)."""
        return REPLACE_SPACE | (PREPEND if self.vocab.encode_space_prefix and prev_special else 0)

    def _encode_meta_batch(self, texts: list, add_special_tokens: bool, parse_special: bool) -> list:
        """encode_ids of each text of a SentencePiece file on the char-level kernel: the texts with
        no special token of the mode in one GIL-free call, the others one by one."""
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"expected str, not {type(t).__name__}")
        texts = [t if type(t) is str else str.__str__(t) for t in texts]
        specials, finder, long_words = self._specials(parse_special)
        plain = [not specials or ((finder is None or finder.search(t) is None) and not any(w in t for w in long_words))
                 for t in texts]
        lists = iter(self.model.compiled.encode_texts([t for t, p in zip(texts, plain) if p], self._meta_kind(True)))
        return [self._with_bos_eos(next(lists), add_special_tokens) if p
                else self.encode_ids(t, add_special_tokens, parse_special) for t, p in zip(texts, plain)]

    def _with_bos_eos(self, ids: list, add_special_tokens: bool) -> list:
        """ids with BOS / EOS added as encode_ids adds them (ids: a list this call owns)."""
        vocab = self.vocab
        if add_special_tokens and vocab.add_bos:
            if vocab.ids["bos"] is None:
                raise ValueError(f"{self.path}: the file asks for a BOS token but has none")
            ids.insert(0, vocab.ids["bos"])
        if add_special_tokens and vocab.add_eos:
            if vocab.ids["eos"] is None:
                raise ValueError(f"{self.path}: the file asks for an EOS token but has none")
            ids.append(vocab.ids["eos"])
        return ids

    def _cut_plan(self, parse_special: bool):
        """The special tokens' plan (special_cut.SpecialCut) when this mode's whole encode is one
        kernel call (`_added_split.encode_cut_texts`: the tokens found in C level by level, each
        stretch between them scanned and merged from UTF-8), else None: a byte-level model on a
        scanner kind, specials of at most 64 characters in at most 8 levels (special_cut says
        why that cuts what llama.cpp's longest-first partition cuts, lstrip / rstrip included).
        DeepSeek-Coder's file has 251 user-defined tokens, 13 of them Latin-1 letters
        (u-umlaut, o-umlaut, ...): cut in Python, its multilingual text ran at a tenth of the
        kernel's rate."""
        hit = self._cut_by_mode.get(parse_special, False)
        if hit is not False:
            return hit
        plan = None
        sp = self.splitter
        if sp is not None and sp.scanner_kind >= 0 and not self.vocab.meta_spaces:
            ids = self._special_ids(parse_special)
            plan = special_cut([self.vocab.tokens[i] for i in ids], ids, self.vocab.attrs)
        self._cut_by_mode[parse_special] = plan
        return plan

    def _encode_bpe(self, text: str) -> list[int]:
        splitter = self.splitter
        if splitter.fold_guard and FOLD_TRAP in text:   # (?i) kinds read 'ſ as 's; llama.cpp does not
            return self.model.encode_pieces(splitter.split(text))
        if splitter.scanner_kind >= 0:
            return self.model.encode_text(text, splitter.scanner_kind)
        if splitter.markless_kind >= 0 and not has_marks(text):
            return self.model.encode_text(text, splitter.markless_kind)
        if splitter.tail_kind >= 0:
            return self.model.encode_texts(splitter.split_head(text), splitter.tail_kind)
        return self.model.encode_pieces(splitter.split(text))

    def _partition(self, text: str, parse_special: bool) -> list:
        """tokenizer_st_partition: text pieces (str) and special-token ids (int), in order."""
        return [item for _, _, item in self._partition_spans(text, parse_special)]

    def _partition_spans(self, text: str, parse_special: bool) -> list:
        """_partition with each item's span of text, (start, end, item): a text piece is
        text[start:end]; a special token's span takes in the spaces its lstrip / rstrip
        removed (as HF's added tokens' offsets do)."""
        specials, finder, long_words = self._specials(parse_special)
        if not specials or not text or ((finder is None or finder.search(text) is None)
                                        and not any(w in text for w in long_words)):
            return [(0, len(text), text)] if text else []
        tokens, attrs = self.vocab.tokens, self.vocab.attrs
        spans = [(0, len(text), text)]
        for sid in specials:
            word = tokens[sid]
            out = []
            for start, end, frag in spans:
                if type(frag) is int or word not in frag:
                    out.append((start, end, frag))
                    continue
                pos = 0
                while True:
                    at = frag.find(word, pos)
                    if at < 0:
                        break
                    left_end = at
                    if attrs[sid] & LSTRIP:
                        left_end = pos + len(frag[pos:at].rstrip(_C_SPACE))
                    if left_end > pos:
                        out.append((start + pos, start + left_end, frag[pos:left_end]))
                    pos = at + len(word)
                    if attrs[sid] & RSTRIP:
                        while pos < len(frag) and frag[pos] in _C_SPACE:
                            pos += 1
                    out.append((start + left_end, start + pos, sid))
                if pos < len(frag):
                    out.append((start + pos, end, frag[pos:]))
            spans = out
        return spans

    def _special_ids(self, parse_special: bool) -> list:
        """The special tokens cut out in this mode, longest first (vocab.special_ids' order)."""
        skip = 0 if parse_special else CONTROL | UNKNOWN
        return [i for i in self.vocab.special_ids if not self.vocab.attrs[i] & skip]

    def _specials(self, parse_special: bool):
        """The special tokens cut out in this mode, one regex that finds any of the short ones,
        and the long ones: `regex` searches a long periodic literal ("abab...") in time
        quadratic in its length, str's `in` in linear time."""
        hit = self._specials_by_mode.get(parse_special)
        if hit is None:
            ids = self._special_ids(parse_special)
            words = [self.vocab.tokens[i] for i in ids]
            short = [regex.escape(w) for w in words if len(w) <= _LONG_SPECIAL]
            finder = regex.compile("|".join(short)) if short else None
            long_words = [w for w in words if len(w) > _LONG_SPECIAL]
            hit = self._specials_by_mode[parse_special] = (ids, finder, long_words)
        return hit

    def offsets(self, text: str, ids: list, add_special_tokens: bool = False, parse_special: bool = False) -> list:
        """The character span of text that each of `encode_ids(text, ...)`'s ids covers (ids:
        that call's result).  A token holding part of a character's UTF-8 covers the whole
        character, as HF's byte-level offsets do; a special token covers its text and the
        spaces its lstrip / rstrip removed; BOS / EOS cover (0, 0).  With SentencePiece, the
        leading space llama.cpp adds belongs to the fragment's first character."""
        vocab = self.vocab
        spm = vocab.meta_spaces
        out, k = [], 0
        if add_special_tokens and vocab.add_bos:
            out.append((0, 0))
            k = 1
        prev_special = True
        for start, end, frag in self._partition_spans(text, parse_special):
            if type(frag) is int:
                out.append((start, end))
                k += 1
                prev_special = True
                continue
            prefix = 1 if spm and vocab.encode_space_prefix and prev_special else 0
            prev_special = False
            # the text the model merged (SentencePiece: ▁ for spaces, the prefix), as UTF-8
            merged = (_SPM_SPACE * prefix + frag.replace(" ", _SPM_SPACE) if spm else frag).encode("utf-8", "surrogateescape")
            n, lengths = len(merged), []
            while n > 0:
                if k >= len(ids):
                    raise ValueError("offsets: ids are not this text's encode_ids (they end too soon)")
                size = self._merged_size(ids[k])
                lengths.append(size)
                n -= size
                k += 1
            if n < 0:
                raise ValueError("offsets: ids are not this text's encode_ids (a token crosses a fragment)")
            out += _char_spans(merged, lengths, start - prefix, start, prefix)
        if k < len(ids):
            out += [(0, 0)] * (len(ids) - k)   # EOS
        return out

    def _merged_size(self, token_id: int) -> int:
        """How many bytes of the merged text one token holds."""
        if self.vocab.meta_spaces:
            return 1 if self.vocab.attrs[token_id] & BYTE else len(self.vocab.token_bytes(token_id))
        return len(self._pieces[True][token_id])

    # -- decoding ---------------------------------------------------------------------------

    def token_to_piece(self, token_id: int, special: bool = True) -> bytes:
        """llama.cpp's token_to_piece: the bytes of one token (control tokens only if special)."""
        vocab = self.vocab
        if not 0 <= token_id < len(vocab.tokens):
            raise ValueError(f"token id {token_id} is outside the vocabulary (size {len(vocab.tokens)})")
        attr = vocab.attrs[token_id]
        if attr & (UNKNOWN | CONTROL) and not special:
            return b""
        text = vocab.tokens[token_id]
        if attr & (UNKNOWN | CONTROL | USER_DEFINED):
            return text.encode("utf-8", "surrogateescape")
        if attr & NORMAL:
            if vocab.meta_spaces:
                return text.replace(_SPM_SPACE, " ").encode("utf-8", "surrogateescape")
            return _bytelevel_decode(text)
        if attr & BYTE:
            return bytes([vocab.byte_values[token_id]])
        return b""

    def decode_bytes(self, ids, skip_special_tokens: bool = False) -> bytes:
        """llama_detokenize(ids, remove_special=skip_special_tokens, unparse_special=not skip_special_tokens)."""
        vocab = self.vocab
        ids = list(map(operator.index, ids))  # TypeError for a non-integer
        remove_space = vocab.add_space_prefix
        if skip_special_tokens and vocab.add_bos and ids and ids[0] == vocab.ids["bos"]:
            remove_space = False
            ids = ids[1:]
        if skip_special_tokens and vocab.add_eos and ids and ids[-1] == vocab.ids["eos"]:
            ids = ids[:-1]
        cache = self._pieces[not skip_special_tokens]
        parts = list(map(cache.__getitem__, ids))
        if remove_space and parts and parts[0][:1] == b" ":
            parts[0] = parts[0][1:]
        text = b"".join(parts)
        return _clean_spaces(text) if vocab.clean_spaces else text

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        """The text of ids, as llama.cpp's detokenize (invalid UTF-8 becomes U+FFFD)."""
        return self.decode_bytes(ids, skip_special_tokens).decode("utf-8", "replace")

    def decode_batch(self, sequences, skip_special_tokens: bool = False) -> list[str]:
        return [self.decode(s, skip_special_tokens) for s in sequences]


class _Pieces(dict):
    """token id -> token_to_piece(id, special), made on first use."""

    def __init__(self, tok: "GGUFTokenizer", special: bool):
        super().__init__()
        self.tok, self.special = tok, special

    def __missing__(self, token_id: int) -> bytes:
        piece = self[token_id] = self.tok.token_to_piece(token_id, self.special)
        return piece


class GGUFEncoding(EncodingIds):
    """The ids of one text, their token texts and character offsets (made when first read:
    llama.cpp does not track them), with the HF Encoding fields that make sense here.  Each
    read of a list field is a new list, as HF's (`ids = enc.ids; ids.append(eos)` leaves the
    Encoding as it was); `ids` is EncodingIds' (a list built in C a read)."""
    __slots__ = ("_tokens", "_source", "_offsets")

    def __init__(self, ids: list[int], tokens: list[str], source: tuple | None = None,
                 offsets: list | None = None):
        # source: (tokenizer, text, add_special_tokens, parse_special) the ids came from
        self._ids, self._tokens, self._source, self._offsets = ids, tokens, source, offsets

    def __reduce__(self):
        # plain fields, offsets made now: the tokenizer in _source does not pickle
        offsets = self.offsets if self._source is not None or self._offsets is not None else None
        return (GGUFEncoding, (self.ids, self._tokens, None, offsets))

    @property
    def tokens(self) -> list[str]:
        return self._tokens[:]

    @property
    def offsets(self) -> list[tuple[int, int]]:
        if self._offsets is None:
            if self._source is None:
                raise ValueError("this GGUFEncoding was built without its text: no offsets")
            tok, text, add_special_tokens, parse_special = self._source
            self._offsets = tok.offsets(text, self.own_ids(), add_special_tokens, parse_special)
        return self._offsets[:]

    @property
    def attention_mask(self) -> list[int]:
        return [1] * len(self)

    @property
    def type_ids(self) -> list[int]:
        return [0] * len(self)

    def __repr__(self) -> str:
        return f"GGUFEncoding(num_tokens={len(self)})"


def _char_spans(data: bytes, lengths: list, shift: int, low: int, prefix: int) -> list:
    """Character spans of consecutive tokens of `lengths` bytes over UTF-8 `data`: char
    index + shift, starts kept at `low` or above and ends above `low` when the `prefix`
    characters added in front are not in the text (they belong to its first character)."""
    ends = list(itertools.accumulate(lengths))
    starts = [0] + ends[:-1]
    if data.isascii():
        char_start, char_end = starts, ends
    else:
        utf8 = np.frombuffer(data, dtype=np.uint8)
        char_of = (np.cumsum((utf8 & 0xC0) != 0x80) - 1).tolist()
        char_start = [char_of[b] for b in starts]
        char_end = [char_of[b - 1] + 1 for b in ends]
    if not prefix:
        return [(s + shift, e + shift) for s, e in zip(char_start, char_end)]
    return [(max(s + shift, low), max(e + shift, low + 1)) for s, e in zip(char_start, char_end)]


def _bytelevel_decode(text: str) -> bytes:
    """llama_decode_text: byte-level characters back to bytes; others as llama.cpp marks them."""
    from ..formats.bytelevel import CHAR_TO_BYTE

    out = bytearray()
    for c in text:
        b = CHAR_TO_BYTE.get(c)
        if b is not None:
            out.append(b)
        else:
            utf8 = c.encode("utf-8", "surrogateescape")
            out += b"[UNK_BYTE_0x" + utf8.hex().encode() + text.encode("utf-8", "surrogateescape") + b"]"
    return bytes(out)


_SPACE_BEFORE_PUNCT = re.compile(rb" (?=[?!.,])")
_SPACED_QUOTE = re.compile(rb" ' ")
_SPACE_BEFORE_CONTRACTION = re.compile(rb" (?='(?:s|m|re|ve))")


def _clean_spaces(text: bytes) -> bytes:
    """llama.cpp's clean_up_tokenization_spaces (three passes over the bytes, each a regex here;
    tests/reference_gguf.py has the byte loops they equal): " ?" " !" " ." " ," lose the space,
    " ' " becomes "'", and " 's" " 'm" " 're" " 've" lose the space (" 't" " 'd" " 'll" do not)."""
    text = _SPACE_BEFORE_PUNCT.sub(b"", text)
    text = _SPACED_QUOTE.sub(b"'", text)
    return _SPACE_BEFORE_CONTRACTION.sub(b"", text)
