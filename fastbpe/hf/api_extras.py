"""The parts of `tokenizers.Tokenizer`'s API that sit beside the pipeline: the asyncio calls
(the same calls on a worker thread; the kernels release the GIL), text as plain text (what
transformers 5 encodes stage by stage), the tiktoken-style view (`to_encoding`) and training
(fastbpe's kernels with HF's BpeTrainer rules, fastbpe/trainers.py; the tokenizer then takes
the trained model).  A mixin for `Tokenizer`."""
from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING


from ..formats.bytelevel import BYTELEVEL_PATTERN
from ..pretokenize import program_kind
from ..progress import Progress, wants_progress
from ..text import fix_surrogates
from . import normalizers, pre_tokenizers, spec
from .normalized import NormalizedText

if TYPE_CHECKING:
    from .encoding import Encoding


def hf_tokenizer_class():
    """HF's own Tokenizer class (from its compiled module, which stays HF's even where
    `tokenizers.Tokenizer` has been pointed at fastbpe's), or None without tokenizers."""
    try:
        from tokenizers.tokenizers import Tokenizer as HFTokenizer
    except ImportError:
        return None
    return HFTokenizer


def _to_thread(fn, *args):
    """asyncio.to_thread, asyncio imported at the first async call (importing it costs a fresh
    process as much as loading GPT-2's tokenizer.json)."""
    import asyncio
    return asyncio.to_thread(fn, *args)


class HFExtras:
    async def async_encode(self, sequence, pair=None, is_pretokenized: bool = False,
                           add_special_tokens: bool = True) -> Encoding:
        return await _to_thread(self.encode, sequence, pair, is_pretokenized, add_special_tokens)

    async def async_encode_batch(self, inputs, is_pretokenized: bool = False,
                                 add_special_tokens: bool = True) -> list[Encoding]:
        return await _to_thread(self.encode_batch, inputs, is_pretokenized, add_special_tokens)

    async def async_encode_batch_fast(self, inputs, is_pretokenized: bool = False,
                                      add_special_tokens: bool = True) -> list[Encoding]:
        return await _to_thread(self.encode_batch_fast, inputs, is_pretokenized, add_special_tokens)

    async def async_decode_batch(self, sequences, skip_special_tokens: bool = True) -> list[str]:
        return await _to_thread(self.decode_batch, sequences, skip_special_tokens)

    # -- text as plain text -----------------------------------------------------------------

    def encode_ids_without_added_tokens(self, text: str) -> list[int]:
        """The ids of text as plain text: no added token is matched (special or not) and no
        post-processor runs; the normalizer, pre-tokenizer and model as usual.  What
        transformers 5 computes with the backend's stages for `split_special_tokens` and
        `apply_chat_template(..., sanitize_control_tokens=True)` (see transformers_patch.py)."""
        if not isinstance(text, str):
            raise TypeError(f"expected str, not {type(text).__name__}")
        if self._char_path is not None:   # char-level kernel (added tokens aside, it always applies)
            return self._char_path.plain_ids(text)
        if self._uses_fast_path():   # the segment as _plan gives it: normalized by the file's program
            program = self._normalize_program
            return list(self._segment_ids(program.normalize(text) if program is not None else text))
        seg = NormalizedText.from_original(text)
        if self.normalizer is not None:
            seg = self.normalizer.normalize(seg)
        pieces, tokenize = self._pieces_and_model(seg)
        return [token_id for piece in pieces if piece.text for token_id, _, _ in tokenize(piece.text)]

    # -- tiktoken-style view --------------------------------------------------------------

    def to_encoding(self, name: str = "hf"):
        """A tiktoken-style `fastbpe.Encoding` with this file's vocabulary, merges and split
        pattern; every added token becomes a special token.  Its `encode_ordinary` gives
        `encode_ids(text, add_special_tokens=False)`'s ids for text without added tokens (on
        NFC text when the file normalizes with NFC).  ValueError unless the file is a plain
        byte-level BPE."""
        from .._core import BPETable
        from ..encoding import Encoding as TiktokenEncoding

        if self.byte_level_pattern is None or self.model.uses_dropout():
            raise ValueError("to_encoding needs a plain byte-level BPE file (ByteLevel pre-tokenizer, "
                             "optionally after a regex Split; no normalizer but NFC; no dropout)")
        tokens = self.model.token_bytes
        ranks = {t: i for i, t in enumerate(tokens) if t is not None}
        specials = {t.content: i for i, t in self.added.by_id.items() if i >= len(tokens) or tokens[i] is None}
        enc = TiktokenEncoding(name, pat_str=self._pattern, mergeable_ranks=ranks, special_tokens=specials)
        # HF merges by its merge list, not by id: the kernel gets the same pair table as here
        enc.kernel = BPETable.from_merges(
            self.model.merge_rows, tokens, {i: s.encode("utf-8") for s, i in specials.items()},
            whole_piece=self.model.ignore_merges)
        return enc

    # -- training: fastbpe's kernels with HF's BpeTrainer rules (fastbpe/trainers.py) ------

    def train_from_iterator(self, iterator, trainer=None, length: int | None = None) -> None:
        """HF's Tokenizer.train_from_iterator on fastbpe's kernels: every item (a str, or a
        batch of str) is normalized and pre-tokenized by this pipeline, its words counted
        (streamed: memory grows with the distinct words), and a BPE model trained with HF's
        rules replaces the model; the trainer's special tokens become added tokens.
        `trainer`: a `fastbpe.trainers.BpeTrainer` or HF's `tokenizers.trainers.BpeTrainer`
        (its settings are read), None for HF's defaults.  `length` is accepted as HF's (a
        progress hint)."""
        if length is not None and (isinstance(length, bool) or not isinstance(length, int) or length < 0):
            raise ValueError(f"length must be a non-negative int or None, not {length!r}")
        if isinstance(iterator, (str, bytes)):
            raise TypeError("train_from_iterator expects an iterable of str (or of lists of str), not a single text")
        self._train_on(_sequences(iterator), trainer)

    def train(self, files: list, trainer=None) -> None:
        """HF's Tokenizer.train: files read as HF reads them (UTF-8, each line with its line
        ending one sequence), then as `train_from_iterator`."""
        if isinstance(files, (str, bytes, os.PathLike)):
            files = [files]
        paths = [os.fspath(f) for f in files]
        for path in paths:
            os.stat(path)   # FileNotFoundError / OSError naming the file, before any work
        self._train_on(_file_lines(paths), trainer)

    def untrained_str(self) -> str:
        """`to_str()` with the model's vocabulary and merges empty: what transformers'
        `train_new_from_iterator` makes of `to_str()` before training, without writing out
        (and parsing back) a large vocabulary."""
        doc = self._document(with_model=False)
        doc["model"] = dict(doc["model"], vocab={}, merges=[])
        return spec.dumps(doc, False)

    def _train_on(self, sequences, trainer) -> None:
        # training's modules (numpy among them) load on first use: loading and encoding a
        # tokenizer.json never needs them (~0.2 s of a fresh process's from_file)
        from .. import trainers
        from ..counting import count_pieces

        settings = trainers.settings_of(trainer)
        scan = self._training_scan()
        progress = None if settings.show_progress else False
        if scan is not None:
            texts = (_prepared(sequences, scan.normalize, scan.prefix_space)
                     if scan.normalize is not None or scan.prefix_space else sequences)
            counter = count_pieces(texts, scan.pattern, kind=scan.kind, show_progress=progress)
            if scan.words is not None:
                counter = _only_words(counter, scan.words)
            byte_words = scan.byte_level
        else:
            counter, byte_words = self._count_words(sequences, progress)
        result = trainers.train_words(counter, settings, chars_of_bytes=byte_words)
        node = dict(self._model_json)
        node.update(vocab=result.vocab, merges=[list(m) for m in result.merges],   # HF sets both, "" too
                    continuing_subword_prefix=settings.continuing_subword_prefix,
                    end_of_word_suffix=settings.end_of_word_suffix)
        self.model = node
        if result.special_tokens:
            self.add_special_tokens(result.special_tokens)

    def _training_scan(self) -> "_Scan | None":
        """How the words can be counted straight from the text (by the C scanner, or the
        `regex` pattern whose matches are the words, in worker processes) when the normalizer is
        NFC or none and the tokenizer has no added tokens: a ByteLevel pre-tokenizer splitting
        with its regex, a known Split before a ByteLevel that does not split (byte-level words),
        Whitespace, WhitespaceSplit (the words are the pattern's matches).  Else None: the
        words come from the pipeline, stage by stage."""
        program, why_not = normalizers.kernel_program(self.normalizer)
        if why_not is not None or self.added.by_id:
            return None
        normalize = program.normalize if program is not None else None
        steps = pre_tokenizers.steps_of(self.pre_tokenizer)
        if len(steps) == 1 and isinstance(steps[0], pre_tokenizers.ByteLevel):
            if steps[0].use_regex and steps[0].kind >= 0:
                return _Scan(steps[0].kind, BYTELEVEL_PATTERN, steps[0].add_prefix_space, True, normalize)
        elif (len(steps) == 2 and isinstance(steps[0], pre_tokenizers.Split) and steps[0].kind >= 0
              and isinstance(steps[1], pre_tokenizers.ByteLevel)
              and not steps[1].use_regex and not steps[1].add_prefix_space):
            return _Scan(steps[0].kind, steps[0].pattern_node["Regex"], False, True, normalize)
        elif len(steps) == 1 and type(steps[0]) in _WORD_PATTERNS:
            words = _WORD_PATTERNS[type(steps[0])]
            # the words and the white space between them tile the text: a scanner program
            # when the pattern compiles, then the white space is dropped
            tiled = words + r"|\s+"
            kind = program_kind(tiled)
            return _Scan(kind if kind >= 0 else None, tiled, False, False, normalize, words)
        return None

    def _count_words(self, sequences, show_progress):
        """The words of every sequence as HF's trainer sees them (added tokens' text, the
        pre-tokenizer's pieces of the normalized rest), counted by their UTF-8; with no added
        tokens and a ByteLevel last, its pieces before the byte mapping (the words are then
        bytes of byte-level characters: the mapping and its offsets are skipped), and the
        normalizer's kernel program when it has one.  Returns (counter, byte words)."""
        from .._count import PieceCounter

        counter = PieceCounter()
        steps = pre_tokenizers.steps_of(self.pre_tokenizer)
        byte_words = not self.added.by_id and bool(steps) and isinstance(steps[-1], pre_tokenizers.ByteLevel)
        program, why_not = normalizers.kernel_program(self.normalizer)
        plain = not self.added.by_id and why_not is None
        before = pre_tokenizers.Sequence(steps[:-1]) if byte_words else None
        seen = 0
        with Progress("counting", unit=" M chars", scale=1e6, enabled=wants_progress(show_progress)) as bar:
            for text in sequences:
                if plain:
                    segments = [(NormalizedText.from_original(program.normalize(text) if program else text), None)]
                else:
                    segments = self._split_added(text)
                words = []
                for seg, aid in segments:
                    if aid is not None:
                        words.append(seg.text)
                    elif byte_words:
                        words.extend(p.text for p in steps[-1].split(before.pre_tokenize([seg])))
                    elif self.pre_tokenizer is not None:
                        words.extend(p.text for p in self.pre_tokenizer.pre_tokenize([seg]))
                    else:
                        words.append(seg.text)
                done = counter.add_pieces(words)
                if done < len(words):   # a lone surrogate: counted as tiktoken replaces it
                    counter.add_pieces([fix_surrogates(w) for w in words[done:]])
                seen += len(text)
                bar.update(seen)
        return counter, byte_words


class _Scan:
    """How `_training_scan` counts words: a C scanner kind (None: the `regex` pattern's
    matches), the pattern, ByteLevel's prefix space, whether words are bytes of byte-level
    characters (else each word is its UTF-8).  (A plain class: importing `dataclasses` is
    ~10% of a tokenizer.json load's instructions.)"""

    def __init__(self, kind: int | None, pattern: str, prefix_space: bool, byte_level: bool,
                 normalize=None, words: str | None = None):
        self.kind, self.pattern, self.prefix_space, self.byte_level = kind, pattern, prefix_space, byte_level
        self.normalize = normalize   # the normalizer's kernel program's normalize(text), or None
        self.words = words           # pieces that do not match this whole are dropped (white space)


# pre-tokenizers whose words are exactly a pattern's matches (the rest is dropped)
_WORD_PATTERNS = {pre_tokenizers.Whitespace: pre_tokenizers.Whitespace.WORDS,
                  pre_tokenizers.WhitespaceSplit: r"\S+"}


def _only_words(counter, words: str):
    """The counter without the pieces that are not `words` matches (the white space the
    pre-tokenizer drops)."""
    import regex

    from .._count import PieceCounter

    match = regex.compile(words).fullmatch
    kept = PieceCounter()
    for piece, count in counter.items():
        if match(piece.decode("utf-8")):
            kept.add_bytes(piece, count)
    return kept


def _sequences(iterator):
    """HF's training input: str items, or batches (lists, tuples, any iterable) of str."""
    for item in iterator:
        if isinstance(item, str):
            yield item
        elif isinstance(item, (bytes, bytearray)) or not hasattr(item, "__iter__"):
            raise TypeError(f"training input must be str or a batch of str, not {type(item).__name__}")
        else:
            for text in item:
                if not isinstance(text, str):
                    raise TypeError(f"training input must be str or a batch of str, not a batch holding "
                                    f"{type(text).__name__}")
                yield text


def _prepared(texts, normalize, prefix_space: bool):
    """The texts as the C scanner must see them: normalized (the normalizer's kernel program),
    with ByteLevel's prefix space (HF adds it to a non-empty text that does not start with one)."""
    for text in texts:
        if normalize is not None:
            text = normalize(text)
        if prefix_space and text and text[0] != " ":
            text = " " + text
        yield text


def _file_lines(paths):
    """The lines of text files as HF's Tokenizer.train reads them: cut after each "\n" (a
    "\r" stays in its line), UTF-8; a file that is not UTF-8 is a ValueError naming it."""
    for path in paths:
        with open(path, "rb") as f:
            for number, line in enumerate(f, 1):
                try:
                    yield line.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise ValueError(f"{path}: line {number} is not UTF-8 ({e.reason})") from None
