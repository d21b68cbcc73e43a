"""The parts of `tokenizers.Tokenizer`'s API that sit beside the pipeline: the asyncio calls
(the same calls on a worker thread; the kernels release the GIL), text as plain text (what
transformers 5 encodes stage by stage), the tiktoken-style view (`to_encoding`) and training
(HF's own trainers; the tokenizer then takes the trained model).  A mixin for `Tokenizer`."""
from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from . import normalizers
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


class HFExtras:
    async def async_encode(self, sequence, pair=None, is_pretokenized: bool = False,
                           add_special_tokens: bool = True) -> Encoding:
        return await asyncio.to_thread(self.encode, sequence, pair, is_pretokenized, add_special_tokens)

    async def async_encode_batch(self, inputs, is_pretokenized: bool = False,
                                 add_special_tokens: bool = True) -> list[Encoding]:
        return await asyncio.to_thread(self.encode_batch, inputs, is_pretokenized, add_special_tokens)

    async def async_encode_batch_fast(self, inputs, is_pretokenized: bool = False,
                                      add_special_tokens: bool = True) -> list[Encoding]:
        return await asyncio.to_thread(self.encode_batch_fast, inputs, is_pretokenized, add_special_tokens)

    async def async_decode_batch(self, sequences, skip_special_tokens: bool = True) -> list[str]:
        return await asyncio.to_thread(self.decode_batch, sequences, skip_special_tokens)

    # -- text as plain text -----------------------------------------------------------------

    def encode_ids_without_added_tokens(self, text: str) -> list[int]:
        """The ids of text as plain text: no added token is matched (special or not) and no
        post-processor runs; the normalizer, pre-tokenizer and model as usual.  What
        transformers 5 computes with the backend's stages for `split_special_tokens` and
        `apply_chat_template(..., sanitize_control_tokens=True)` (see transformers_patch.py)."""
        if not isinstance(text, str):
            raise TypeError(f"expected str, not {type(text).__name__}")
        if self._uses_fast_path():   # the segment as _plan gives it: NFC'd when the file says so
            return list(self._segment_ids(normalizers.nfc(text) if self.normalizer is not None else text))
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

        if self._pattern is None or self.model.uses_dropout():
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

    # -- training: HF's trainers, then this tokenizer takes the trained model -------------

    def train(self, files: list, trainer=None) -> None:
        """HF's Tokenizer.train (a `tokenizers.trainers` trainer; needs tokenizers): trains
        with this pipeline and takes the trained model and added tokens."""
        hf = self._hf_twin()
        hf.train(files, trainer) if trainer is not None else hf.train(files)
        self._load(json.loads(hf.to_str()))

    def train_from_iterator(self, iterator, trainer=None, length: int | None = None) -> None:
        """HF's Tokenizer.train_from_iterator, as `train`."""
        hf = self._hf_twin()
        hf.train_from_iterator(iterator, trainer=trainer, length=length)
        self._load(json.loads(hf.to_str()))

    def _hf_twin(self):
        twin = hf_tokenizer_class()
        if twin is None:
            raise ImportError("training a fastbpe.Tokenizer uses HF tokenizers' trainers: "
                              "pip install tokenizers")
        return twin.from_str(self.to_str())
