"""UBPEClassic: tokens stand for pairs of tokens; encoding substitutes several non-conflicting
vocabulary pairs per round (the reference's "classic" encoder), weighted by tf-idf."""
from __future__ import annotations

import numpy as np

from .._ubpe_classic import ClassicMerges
from .base import UBPEBase
from .split import SplitMode


class UBPEClassic(UBPEBase):
    """The API and results of `ubpe_native.UBPEClassic` 0.3.0: `encode(doc) -> [(ids, weight)]`.

    Each round takes the first vocabulary pair (in id order) that occurs in the word, then every
    following pair that occurs, stopping at the first vocabulary pair sharing a token with those
    taken; the taken pairs are substituted left to right."""

    _classic = True

    def _build_encoder(self) -> None:
        rows = []
        for pair, token in self.tokens_mapper["forward"].items():
            if len(pair) != 2:
                raise ValueError(f"classic token {token} must stand for a pair, not {pair!r}")
            rows.append((pair[0], pair[1], token))
        weights = self._weights_array()
        self._max_id = max([weights.shape[0] - 1] + [max(r) for r in rows])
        self._merges = ClassicMerges(np.asarray(rows, dtype=np.int64).reshape(-1, 3), weights)

    def encode(self, doc, *, split_mode: SplitMode = SplitMode.FULL) -> list:
        """[(ids, tf-idf weight)] for `doc` (one encoding)."""
        self._check_fitted()
        if not isinstance(doc, (str, list, tuple)):
            raise ValueError("Data can only be a list or a string")
        self._check_split_mode(split_mode)
        ids, offsets = self.split_pipeline(doc, split_mode, leave_separators=True)
        return [self._merges.encode(ids, offsets, self._max_id)]
