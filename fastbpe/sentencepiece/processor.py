"""A SentencePiece BPE `.model` file (formats/sentencepiece_model.py) on the compiled
char-level model (`_char_bpe.CharBPE`, the one Llama-2/Phi-3-style tokenizer.json files use).

SentencePiece's BPE (bpe_model.cc): the normalized text ("▁" prepended with
`add_dummy_prefix`, spaces as "▁"; a file's precompiled charsmap and `remove_extra_whitespaces`
by `_spm_normalize.SpmNormalizer` first, the kernel's own pass for the identity rule) is split into characters, a user-defined symbol being one
symbol (longest match, left to right); then the adjacent pair whose concatenation is a piece
with the highest score merges, leftmost on equal scores, until none does; a final symbol that
is no piece becomes its UTF-8 bytes' `<0xNN>` pieces (`byte_fallback`) or unk, consecutive
unks one.  As merge rows: every split of every piece into two pieces, ranked by the piece's
score (equal scores share a rank: the kernel merges leftmost first).  User-defined symbols cut
the text (no piece contains one, checked at load, so no merge reaches across them).
"""
from __future__ import annotations

import os

import regex

from .._char_bpe import PREPEND, REPLACE_SPACE, CharBPE
from .._spm_model import split_rows
from .._spm_normalize import SpmNormalizer
from ..formats.sentencepiece_model import (BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED,
                                           SentencePieceModel, read_sentencepiece_model)
from ..threads import parallel_map

META = "\u2581"


def _bytes_text(run: bytearray) -> str:
    """A run of byte pieces as sentencepiece decodes it: UTF-8, U+FFFD for each bad byte."""
    try:
        return run.decode("utf-8")
    except UnicodeDecodeError:
        return "".join("\ufffd" if "\udc80" <= c <= "\udcff" else c
                       for c in run.decode("utf-8", "surrogateescape"))


class SentencePieceProcessor:
    """The `sentencepiece.SentencePieceProcessor` calls that encode and decode, for BPE models."""

    def __init__(self, model_file: str | os.PathLike | None = None, *, model: SentencePieceModel | None = None):
        if model is None:
            if model_file is None:
                raise TypeError("SentencePieceProcessor needs model_file")
            model = read_sentencepiece_model(model_file)
        self._path = os.fspath(model_file) if model_file is not None else "tokenizer.model"
        if model.model_type != "BPE":
            raise ValueError(f"{self._path}: a SentencePiece {model.model_type} model; fastbpe reads BPE models only")
        if not model.escape_whitespaces:   # sentencepiece's BPE trainer refuses it too
            raise ValueError(f"{self._path}: escape_whitespaces is off; not supported")
        self._model = model
        texts, scores, types = (list(column) for column in zip(*model.pieces))
        self._pieces, self._types = texts, types
        self._ids = dict(zip(texts, range(len(texts))))
        if len(self._ids) != len(texts):   # sentencepiece refuses such a file too
            raise ValueError(f"{self._path}: a piece is defined twice")
        users = sorted((p for p, t in zip(texts, types) if t == USER_DEFINED), key=len, reverse=True)
        self._users = regex.compile("|".join(map(regex.escape, users))) if users else None
        # the one character every user-defined symbol starts with (Mistral's "[..]"), if any: a
        # text without it needs no regex search (str's `in` runs in C)
        firsts = {u[0] for u in users if u}
        self._user_first = firsts.pop() if len(firsts) == 1 else None
        self._char = self._build(scores)
        self._kind = (PREPEND if model.add_dummy_prefix else 0) | REPLACE_SPACE
        # the identity normalizer without remove_extra_whitespaces is the kernel's own (kind);
        # anything else runs SentencePiece's normalizer first
        self._denormalizer = None   # decode's rules, when the file has them (sentencepiece's denormalizer)
        if model.denormalizer_charsmap:
            try:
                self._denormalizer = SpmNormalizer(model.denormalizer_charsmap, (), *model.denormalizer_flags)
            except ValueError as e:
                raise ValueError(f"{self._path}: denormalizer: {e}") from None
        self._normalizer = None
        self._late_spaces = not any(" " in u or META in u for u in users)
        if model.precompiled_charsmap or model.remove_extra_whitespaces or model.treat_whitespace_as_suffix:
            try:
                self._normalizer = SpmNormalizer(model.precompiled_charsmap, users, model.add_dummy_prefix,
                                                 model.remove_extra_whitespaces, model.escape_whitespaces,
                                                 model.treat_whitespace_as_suffix)
            except ValueError as e:
                raise ValueError(f"{self._path}: {e}") from None

    def _build(self, scores: list) -> CharBPE:
        """The kernel's model: (each pass over the pieces here is one comprehension: a 32k-piece
        file's load is mostly these and CharBPE.build)."""
        m, texts, types = self._model, self._pieces, self._types
        merging = [p if t == NORMAL or t == USER_DEFINED else None for p, t in zip(texts, types)]
        vocab = {p: i for i, p in enumerate(merging) if p is not None}
        # a character of a piece that is no piece itself would merge in SentencePiece and fall
        # back to bytes here; a piece holding a user-defined symbol would merge across a cut
        joined = "\x00".join([p for p, t in zip(texts, types) if t == NORMAL])
        missing = set(joined) - vocab.keys() - {"\x00"}
        if missing:
            raise ValueError(f"{self._path}: pieces hold characters that are no pieces ({sorted(missing)[:5]}); "
                             "not compiled")
        for i in [i for i, t in enumerate(types) if t == BYTE or t == UNKNOWN]:
            vocab.setdefault(texts[i], i)
        inside = self._users.search(joined) if self._users is not None else None
        if inside:
            raise ValueError(f"{self._path}: a piece contains the user-defined symbol {inside.group()!r}; "
                             "not compiled")
        rank_of = {s: r for r, s in enumerate(sorted(set(scores), reverse=True))}
        rows, ranks = split_rows(merging, [rank_of[s] for s in scores])
        unk = texts[m.unk_id] if 0 <= m.unk_id < len(texts) else None
        try:
            return CharBPE.build(vocab, rows, unk, m.byte_fallback, True, False, META, ranks=ranks)
        except ValueError as e:
            raise ValueError(f"{self._path}: {e}") from None

    # -- ids --------------------------------------------------------------------------------

    def _has_user(self, text: str) -> bool:
        """Whether a user-defined symbol occurs in text."""
        if self._users is None or (self._user_first is not None and self._user_first not in text):
            return False
        return self._users.search(text) is not None

    def _ids_of(self, text: str) -> list[int]:
        kind = 0
        if self._normalizer is not None:
            # spaces left for the kernel to escape (an English text stays an ASCII str) unless a
            # user-defined symbol holds one: symbols are matched in the escaped text
            norm = self._normalizer.normalize(text, self._late_spaces)
            kind = REPLACE_SPACE if self._late_spaces else 0
            if not self._has_user(norm):
                return self._char.encode_text(norm, kind)
        elif not self._has_user(text):
            return self._char.encode_text(text, self._kind)
        else:
            norm = text.replace(" ", META)
            if self._kind & PREPEND and text:
                norm = META + norm
        # cut at user-defined symbols (each one symbol), pieces between
        ids, done = [], 0
        for m in self._users.finditer(norm):
            if m.start() > done:
                ids += self._char.encode_text(norm[done:m.start()], kind)
            ids.append(self._ids[m.group()])
            done = m.end()
        if done < len(norm):
            ids += self._char.encode_text(norm[done:], kind)
        return ids

    def encode(self, input, out_type=int, add_bos: bool = False, add_eos: bool = False, reverse: bool = False,
               emit_unk_piece: bool = False, enable_sampling: bool = False, num_threads: int = -1, **_):
        """sentencepiece's encode: ids (out_type=int) or pieces (out_type=str) of a str, or of
        each str of a list (on threads); `reverse` reverses them (before BOS/EOS), and
        `emit_unk_piece` names unk pieces "<unk>" instead of the text they cover.  Sampling
        (BPE-dropout, `enable_sampling`) is refused rather than ignored."""
        if enable_sampling:
            raise ValueError(f"{self._path}: enable_sampling (BPE-dropout) is not supported by fastbpe's "
                             "SentencePieceProcessor")
        options = (out_type, add_bos, add_eos, reverse, emit_unk_piece)
        if type(input) is str:
            if out_type is int and not (add_bos or add_eos or reverse):
                return self._ids_of(input)   # the common call, without _finish
            return self._finish(self._ids_of(input), input, *options)
        if isinstance(input, str):
            return self._finish(self._ids_of(input), input, *options)
        texts = originals = list(input)
        if all(type(t) is str for t in texts) and (
                self._users is None or (self._normalizer is None and not any(map(self._has_user, texts)))):
            threads = os.cpu_count() if num_threads is None or num_threads < 0 else max(num_threads, 1)
            kind = self._kind
            if self._normalizer is not None:
                texts = [self._normalizer.normalize(t, self._late_spaces) for t in texts]
                kind = REPLACE_SPACE if self._late_spaces else 0
            bodies = parallel_map(lambda share: self._char.encode_texts(share, kind), texts, threads,
                                  keep_threads=True)
        else:
            bodies = [self._ids_of(t) for t in texts]
        return [self._finish(ids, t, *options) for ids, t in zip(bodies, originals)]

    def _finish(self, ids: list, text: str, out_type, add_bos: bool, add_eos: bool, reverse: bool,
                emit_unk_piece: bool):
        if out_type is str:
            pieces = [self._pieces[i] for i in ids]
            if self._model.unk_id in ids and not emit_unk_piece:
                self._unk_surfaces(pieces, ids, self.normalize(text))
            ids = pieces
        if reverse:
            ids.reverse()
        if add_bos and self._model.bos_id >= 0:
            ids.insert(0, self._pieces[self._model.bos_id] if out_type is str else self._model.bos_id)
        if add_eos and self._model.eos_id >= 0:
            ids.append(self._pieces[self._model.eos_id] if out_type is str else self._model.eos_id)
        return ids

    def _unk_surfaces(self, pieces: list, ids: list, norm: str) -> None:
        """sentencepiece's pieces name an unk run by the normalized text it covers: the
        characters from there that are no piece (every other token covers its own piece)."""
        at, unk = 0, self._model.unk_id
        for k, i in enumerate(ids):
            if i != unk:
                at += len(self._pieces[i]) if self._types[i] != BYTE else 0
                continue
            end = at + 1
            while end < len(norm) and self._ids.get(norm[end], unk) == unk:
                end += 1
            pieces[k], at = norm[at:end], end

    def normalize(self, text: str) -> str:
        """sentencepiece's normalize: the text the model splits ("▁" for spaces and the dummy
        prefix, the file's charsmap and whitespace rules applied)."""
        if self._normalizer is not None:
            return self._normalizer.normalize(text)
        norm = text.replace(" ", META)
        return META + norm if self._kind & PREPEND and text else norm

    def encode_as_ids(self, input):
        return self.encode(input)

    def encode_as_pieces(self, input):
        return self.encode(input, out_type=str)

    EncodeAsIds, EncodeAsPieces, Encode = encode_as_ids, encode_as_pieces, encode

    # -- text -------------------------------------------------------------------------------

    def decode(self, input):
        """sentencepiece's decode: the text of ids (or pieces; or a list of such lists).
        Control ids decode to nothing, unk to the file's unk surface (" ⁇ "), a run of byte
        pieces to its bytes (U+FFFD for each byte of a bad sequence); while nothing visible
        came yet, a piece's leading "▁" is the dummy prefix and goes (every such piece's with
        remove_extra_whitespaces, the first one's with add_dummy_prefix)."""
        if input and not isinstance(input, str) and isinstance(input[0], (list, tuple)):
            return [self.decode(x) for x in input]
        m = self._model
        strip = m.add_dummy_prefix or m.remove_extra_whitespaces
        out, run, at_start, stripped = [], bytearray(), True, False
        for x in input:
            i = self._ids[x] if isinstance(x, str) else int(x)
            if not 0 <= i < len(self._pieces):
                raise IndexError(f"piece id is out of range: {i}")
            kind = self._types[i]
            if kind == BYTE:
                run.append(int(self._pieces[i][3:5], 16))
                continue
            if run:
                out.append(_bytes_text(run))
                run.clear()
                at_start = False
            if stripped:
                at_start = False
            stripped = False
            if kind == CONTROL:
                continue
            if kind == UNKNOWN:
                text = m.unk_surface
            else:
                text = self._pieces[i]
                if at_start and strip and text.startswith(META):
                    text, stripped = text[1:], not m.remove_extra_whitespaces
                text = text.replace(META, " ")
            if text:
                out.append(text)
                at_start = False
        if run:
            out.append(_bytes_text(run))
        text = "".join(out)
        return text if self._denormalizer is None else self._denormalizer.normalize(text)

    decode_ids = decode_pieces = DecodeIds = DecodePieces = Decode = decode

    # -- vocabulary -------------------------------------------------------------------------

    def get_piece_size(self) -> int:
        return len(self._pieces)

    vocab_size = GetPieceSize = get_piece_size

    def id_to_piece(self, i):
        """The piece of an id (a list of ids: their pieces, as sentencepiece)."""
        if isinstance(i, (list, tuple)):
            return [self.id_to_piece(k) for k in i]
        if not 0 <= i < len(self._pieces):
            raise IndexError(f"piece id is out of range: {i}")
        return self._pieces[i]

    def id_to_bytes(self, i: int) -> bytes:
        """The bytes an id decodes to on its own ("▁" as a space, a byte piece its byte)."""
        if self._types[i] == BYTE:
            return bytes([int(self._pieces[i][3:5], 16)])
        if self._types[i] == CONTROL:
            return b""
        return (" \u2047 " if self._types[i] == UNKNOWN else self._pieces[i].replace(META, " ")).encode("utf-8")

    def piece_to_id(self, piece):
        """The id of a piece, unk's for no piece (a list of pieces: their ids)."""
        if isinstance(piece, (list, tuple)):
            return [self._ids.get(p, self._model.unk_id) for p in piece]
        return self._ids.get(piece, self._model.unk_id)

    IdToPiece, PieceToId = id_to_piece, piece_to_id

    def get_score(self, i: int) -> float:
        return self._model.pieces[i][1]

    def bos_id(self) -> int:
        return self._model.bos_id

    def eos_id(self) -> int:
        return self._model.eos_id

    def unk_id(self) -> int:
        return self._model.unk_id

    def pad_id(self) -> int:
        return self._model.pad_id

    def is_control(self, i: int) -> bool:
        return self._types[i] == CONTROL

    def is_unknown(self, i: int) -> bool:
        return self._types[i] == UNKNOWN

    def is_unused(self, i: int) -> bool:
        return self._types[i] == UNUSED

    def is_byte(self, i: int) -> bool:
        return self._types[i] == BYTE
