"""UBPE: tokens stand for symbol sequences; a word's encodings are the paths of the DAG of all its
segmentations into known sequences, scored by tf-idf, the best `top_n` kept per position."""
from __future__ import annotations

import numpy as np

from .._ubpe import UBPELookup
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
        return self._merge_parts(ids, offsets, top_n)

    def _merge_parts(self, ids: np.ndarray, offsets: np.ndarray, top_n: int) -> list:
        """Best `top_n` concatenations, built from the last part back (the reference's merge of two
        sorted lists, preferring a later tail on ties).  Tails are shared chains, not copies."""
        tails = [(None, 0.0, 0)]                       # (chain of id lists, weight, length)
        bounds = offsets.tolist()
        for p in range(len(bounds) - 2, -1, -1):
            s, e = bounds[p], bounds[p + 1]
            if e - s == 1:
                head = [int(ids[s])]
                tails = [((head, chain), w, n + 1) for chain, w, n in tails]
                continue
            cands = [(c, w, len(c)) for c, w in self._lookup.encode_top(ids[s:e], top_n)]
            merged = []
            ti = ci = 0
            while ci < len(cands) and ti < len(tails) and len(merged) < top_n:
                c_ids, c_w, c_n = cands[ci]
                chain, t_w, t_n = tails[ti]
                merged.append(((c_ids, chain), c_w + t_w, c_n + t_n))
                if len(merged) == top_n:
                    break
                last_c, last_t = ci == len(cands) - 1, ti == len(tails) - 1
                if last_c and last_t:
                    break
                if last_c:
                    ti += 1
                elif last_t:
                    ci += 1
                elif ((tails[ti + 1][1] + c_w, -tails[ti + 1][2] - c_n)
                      > (t_w + cands[ci + 1][1], -t_n - cands[ci + 1][2])):
                    ti += 1
                else:
                    ci += 1
            tails = merged
        return [(_flatten(chain), w) for chain, w, _ in tails]


def _flatten(chain) -> list:
    out: list = []
    while chain is not None:
        head, chain = chain
        out.extend(head)
    return out
