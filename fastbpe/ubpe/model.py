"""UBPE: tokens stand for symbol sequences; a word's encodings are the paths of the DAG of all its
segmentations into known sequences, scored by tf-idf, the best `top_n` kept per position."""
from __future__ import annotations

from .._ubpe_lookup import UBPELookup
from .base import UBPEBase
from .split import SplitMode


class UBPE(UBPEBase):
    """``UBPE(alphabet=..., n_tokens=1024, known_words=None, break_tokens=None, regex_str=None,
    stop_tokens=None)``; `fit(corpus)`, `encode(doc, top_n=1) -> [(ids, weight), ...]`, `decode`,
    `dumps()` / `UBPE.loads(json)` -- the API and results of `ubpe_native.UBPE` 0.3.0.

    Ties: candidates compare by weight, then fewer tokens; candidates still equal keep the order
    in which the reference's heap holds them (it is reproduced exactly)."""

    _classic = False

    def _build_encoder(self) -> None:
        sequences = [(a,) for a in self.inverse_alphabet]
        ids = list(self.inverse_alphabet)
        for seq, token in self.tokens_mapper["forward"].items():
            sequences.append(seq)
            ids.append(token)
        self._lookup = UBPELookup(sequences, ids, self._weights_array())

    def encode(self, doc, *, split_mode: SplitMode = SplitMode.FULL, top_n: int = 1) -> list:
        """The best `top_n` encodings of `doc` as [(ids, tf-idf weight)], best first."""
        self._check_fitted()
        if not isinstance(doc, (str, list)):
            raise ValueError("Data can only be a list or a string")
        if isinstance(top_n, bool) or not isinstance(top_n, int):
            raise TypeError("`top_n` must be an int")
        if top_n < 1:
            raise ValueError("`top_n` must be at least one")
        self._check_split_mode(split_mode)
        ids, offsets = self.split_pipeline(doc, split_mode, leave_separators=True)
        n_parts = offsets.shape[0] - 1
        if n_parts == 1:
            if ids.shape[0] == 1:
                return [([int(ids[0])], 0.0)]
            return self._lookup.encode_top(ids, top_n)
        if top_n == 1:
            return [self._lookup.encode_best(ids, offsets)]
        return self._lookup.encode_top_doc(ids, offsets, top_n)
