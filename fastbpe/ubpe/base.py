"""What UBPE and UBPEClassic share: the constructor's checks, the training driver, rearranging
and trimming the vocabulary, decoding, and the reference's JSON model format.

The models are the reference's (`ubpe-native` 0.3.0) token for token: the same candidate order
(more occurrences, fewer documents, larger pair), the same multi-pair filter, idf weights
``log((1 + n_docs) / (1 + docs_with_pair))``, the same rearranging (by weight, highest first) and
the same `dumps()` JSON, so models move between the two libraries.
"""
from __future__ import annotations

import json
import sys
from math import log

import numpy as np

from .._ubpe_text import map_str_parts, split_words_map_docs
from .._ubpe_train import fit_pairs
from ..progress import Progress
from .split import SplitMode, Splitter


class UBPEBase:
    """Shared state: `alphabet` (symbol -> id), `known_words`, `tokens_mapper` ("backward": new id ->
    sequence, "forward": sequence -> id) and `tokens_weights` (new id -> idf)."""

    _classic = False

    def __init__(self, *, alphabet=None, n_tokens: int = 2 ** 10, known_words=None,
                 break_tokens=None, regex_str: str | None = None, stop_tokens=None):
        if alphabet is None:
            raise TypeError("`alphabet` must be specified, or model should be load from json string")
        if not isinstance(alphabet, (dict, list, set)):
            raise TypeError("If `alphabet` is provided, it must be a dict, a list, or a set")
        if len(alphabet) == 0:
            raise ValueError("`alphabet` must be non-empty")
        if known_words is not None and not isinstance(known_words, (dict, list, set)):
            raise TypeError("If `known_words` is provided, it must be a dict, a list, or a set")
        key_types = {type(key) for key in alphabet}
        if len(key_types) > 1:
            raise TypeError("Elements in `alphabet` must have the same type")
        if isinstance(n_tokens, bool) or not isinstance(n_tokens, int):
            raise TypeError("`n_tokens` must be an int")
        if isinstance(alphabet, (list, set)):
            alphabet = {token: i for i, token in enumerate(alphabet)}
        elif sorted(alphabet.values()) != list(range(len(alphabet))):
            raise ValueError("Values in `alphabet` should form a sequence `0..len(alphabet)`")
        if known_words is not None and len(known_words) != 0:
            known_words = _known_words_dict(known_words, key_types.pop(), len(alphabet))
        else:
            known_words = None

        self.alphabet = alphabet
        self.inverse_alphabet = {value: key for key, value in alphabet.items()}
        self.n_tokens = n_tokens
        self.known_words = known_words
        self.inverse_known_words = ({v: k for k, v in known_words.items()}
                                    if known_words is not None else None)
        self.break_tokens = _symbol_set(break_tokens, alphabet)
        self.regex_str = regex_str if isinstance(regex_str, str) and regex_str else None
        self.stop_tokens = _symbol_set(stop_tokens, alphabet)
        self.tokens_mapper = {"backward": {}, "forward": {}}
        self.tokens_weights = {}
        self._fitted = False
        self._build_splitter()

    def __getstate__(self) -> dict:
        # pickles and deep-copies by value: the model's own fields; the splitter, kernel
        # tables and caches are rebuilt from them (the same as loads() does)
        state = {k: v for k, v in self.__dict__.items() if k not in _DERIVED}
        state["tokens_mapper"] = {"backward": self.tokens_mapper["backward"], "forward": {}}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._build_splitter()
        self._expanded = {}
        if self._fitted:
            self.tokens_mapper["forward"] = {seq: t for t, seq in self.tokens_mapper["backward"].items()}
            self._build_encoder()

    def _build_splitter(self) -> None:
        self.split_pipeline = Splitter(self.alphabet, self.known_words, self.break_tokens,
                                       self.stop_tokens, self.regex_str)

    @property
    def _first_new_id(self) -> int:
        return len(self.alphabet) + (len(self.known_words) if self.known_words else 0)

    # ------------------------------------------------------------------ fitting

    def fit(self, corpus, *, n_candidates: int = 50, rearrange_tokens: bool = True,
            quiet: bool = False, split_mode: SplitMode = SplitMode.FULL) -> None:
        """Fit on `corpus` (str or sequences of symbols): each step adds every top-`n_candidates`
        pair that shares no token with a better one and whose border pairs are rarer; then
        (`rearrange_tokens`) tokens are renumbered by idf weight and trimmed to `n_tokens`."""
        if self._fitted:
            raise ValueError("Tokenizer can be fitted only once")
        if isinstance(n_candidates, bool) or not isinstance(n_candidates, int):
            raise TypeError("`n_candidates` must be an int")
        if n_candidates < 1:
            raise ValueError("`n_candidates` should be greater than 0")
        if isinstance(corpus, (str, bytes)):
            raise TypeError("`corpus` must be a list of documents, not a single document")
        seq, part_start, part_doc, n_docs = self._corpus_arrays(corpus, split_mode)
        first = self._first_new_id
        progress = Progress(type(self).__name__ + ".fit", total=self.n_tokens, unit=" tokens",
                            enabled=not quiet)
        made = [first]

        def on_step(n_new: int) -> None:
            made[0] += n_new
            progress.update(made[0])

        rows = fit_pairs(seq, part_start, part_doc, first, self.n_tokens, n_candidates, on_step)
        progress.close()
        self._store_merges(rows, n_docs)
        if rearrange_tokens:
            self._rearrange(self.n_tokens)
        self._after_vocabulary_change()
        if not quiet:
            print(f"[{type(self).__name__}.fit::INFO]: {len(self.tokens_weights)} artificial tokens",
                  file=sys.stderr)

    def _corpus_arrays(self, corpus, split_mode):
        """All documents' parts end to end: (ids, part starts + end, document of each part, n_docs)."""
        corpus = list(corpus)
        for doc in corpus:
            if not isinstance(doc, (str, list, tuple)):
                raise TypeError(f"a document must be a str, list or tuple, not {type(doc).__name__}")
        split = self.split_pipeline
        if split.words_only and SplitMode.REGEX in split_mode and all(type(doc) is str for doc in corpus):
            seq, part_start, counts = split_words_map_docs(corpus, split.char_table)
            part_doc = np.repeat(np.arange(len(corpus), dtype=np.int64), counts)
            return seq, part_start, part_doc, len(corpus)
        if split.char_table is not None and split.known_words is None and \
                all(type(doc) is str for doc in corpus):
            # text documents: every part of every document mapped to ids in one C pass
            raw, counts = [], []
            for doc in corpus:
                parts = split.parts(doc, split_mode, False)
                raw.extend(parts)
                counts.append(len(parts))
            seq, part_start = map_str_parts(raw, split.char_table)
            part_doc = np.repeat(np.arange(len(corpus), dtype=np.int64), counts)
            return seq, part_start, part_doc, len(corpus)
        chunks, lengths, docs = [], [], []
        n_docs = 0
        for doc in corpus:
            ids, offsets = split(doc, split_mode, leave_separators=False)
            chunks.append(ids)
            part_lengths = np.diff(offsets)
            lengths.append(part_lengths)
            docs.append(np.full(part_lengths.shape[0], n_docs, dtype=np.int64))
            n_docs += 1
        seq = np.concatenate(chunks).astype(np.int32) if chunks else np.zeros(0, np.int32)
        part_len = np.concatenate(lengths) if lengths else np.zeros(0, np.int64)
        part_start = np.zeros(part_len.shape[0] + 1, dtype=np.int64)
        np.cumsum(part_len, out=part_start[1:])
        part_doc = np.concatenate(docs) if docs else np.zeros(0, np.int64)
        return np.ascontiguousarray(seq), part_start, part_doc, n_docs

    def _store_merges(self, rows: np.ndarray, n_docs: int) -> None:
        backward: dict = {}
        weights: dict = {}
        for left, right, new_id, docs in rows.tolist():
            weights[new_id] = log((1 + n_docs) / (1 + docs))
            if self._classic:
                backward[new_id] = (left, right)
            else:
                backward[new_id] = backward.get(left, (left,)) + backward.get(right, (right,))
        self.tokens_mapper = {"backward": backward, "forward": {}}
        self.tokens_weights = weights

    def rearrange_tokens(self, *, n_tokens: int | None = None, quiet: bool = False) -> None:
        """Renumber the learned tokens by weight (highest first) and keep at most `n_tokens` ids."""
        if not self._fitted:
            raise ValueError("Tokenizer is not fitted")
        self._rearrange(n_tokens if n_tokens is not None else self.n_tokens, n_tokens is not None)
        self._after_vocabulary_change()

    def _rearrange(self, n_tokens: int, check: bool = False) -> None:
        if not self.tokens_weights:
            raise ValueError("Tokenizer is not fitted")
        if check and n_tokens < 1:
            raise ValueError("`n_tokens` must be greater than 0")
        backward = self.tokens_mapper["backward"]
        weights = self.tokens_weights
        ranked = sorted(backward.items(), key=lambda item: weights[item[0]])   # stable: lowest first
        first = self._first_new_id
        quantity = len(weights) - n_tokens + first
        to_delete = _classic_deletions(ranked, quantity) if self._classic else \
            list(range(min(max(quantity, 0), len(ranked))))
        deleted = {ranked[i][0] for i in to_delete}
        ranked.reverse()
        # the reference counts repeated deletions too (len(to_delete)), which may drop survivors
        renumber: dict = {}
        offset = 0
        for i in range(len(ranked) - len(to_delete)):
            while ranked[i + offset][0] in deleted:
                offset += 1
            renumber[ranked[i + offset][0]] = first + i
        self.tokens_weights = {new: weights[old] for old, new in renumber.items()}
        self.tokens_mapper["backward"] = {
            new: tuple(renumber.get(t, t) for t in backward[old]) for old, new in renumber.items()
        }

    def _check_ids(self) -> None:
        """A loaded model's ids are about as many as the tokens it defines (a fitted model's
        are exactly 0..n-1): an id far beyond would size the per-id tables (8+ bytes each)
        by a number the file does not pay for, so it is refused, as is a negative id."""
        backward = self.tokens_mapper["backward"]
        limit = self._first_new_id + len(backward) + len(self.tokens_weights) + _ID_SLACK
        ids = [*backward, *self.tokens_weights, *(t for seq in backward.values() for t in seq)]
        if self.inverse_known_words:
            ids += list(self.inverse_known_words)
        low, high = min(ids, default=0), max(ids, default=0)
        if low < 0 or high >= limit:
            bad = low if low < 0 else high
            raise ValueError(f"not a UBPE model dump: token id {bad} is out of range (a model "
                             f"of {len(backward)} tokens over {self._first_new_id} symbols "
                             f"uses ids below {limit})")

    def _after_vocabulary_change(self) -> None:
        self.n_tokens = self._first_new_id + len(self.tokens_weights)
        self.tokens_mapper["forward"] = {seq: t for t, seq in self.tokens_mapper["backward"].items()}
        self._build_encoder()
        self._fitted = True
        self._expanded = {}

    def _build_encoder(self) -> None:
        raise NotImplementedError   # each front end builds its kernel table

    def _weights_array(self) -> np.ndarray:
        """idf per id (0 for symbols and known words), indexed by id."""
        backward = self.tokens_mapper["backward"]
        ids = list(self.inverse_alphabet) + list(self.tokens_weights) + list(backward)
        ids += [t for seq in backward.values() for t in seq]
        if self.inverse_known_words:
            ids += list(self.inverse_known_words)
        size = max(ids) + 1 if ids else 1
        if min(ids, default=0) < 0:
            raise ValueError("token ids must be non-negative")
        out = np.zeros(size, dtype=np.float64)
        for t, w in self.tokens_weights.items():
            out[t] = w
        return out

    # ------------------------------------------------------------------ encoding helpers

    def _check_fitted(self) -> None:
        if not self._fitted:
            raise ValueError("Tokenizer is not fitted")

    @staticmethod
    def _check_split_mode(split_mode) -> None:
        if not isinstance(split_mode, SplitMode):
            raise TypeError("`split_mode` must be a SplitMode")

    # ------------------------------------------------------------------ decoding

    def _expand(self, token: int) -> tuple:
        """The alphabet / known-word ids a token stands for (memoized).  UBPE sequences are
        already flat; classic pairs expand recursively, as the reference's decode does."""
        done = self._expanded
        if token in done:
            return done[token]
        backward = self.tokens_mapper["backward"]
        if not self._classic:
            done[token] = backward.get(token, (token,))
            return done[token]
        if token not in backward:
            return (token,)
        path, next_child, on_path = [token], [0], {token}     # depth first, one child at a time
        while path:
            t = path[-1]
            parts = backward[t]
            i = next_child[-1]
            while i < len(parts) and not (parts[i] in backward and parts[i] not in done):
                i += 1
            if i < len(parts):
                next_child[-1] = i + 1
                if parts[i] in on_path:
                    raise ValueError(f"token {parts[i]} is defined through itself")
                path.append(parts[i])
                next_child.append(0)
                on_path.add(parts[i])
                continue
            out: list = []
            for p in parts:
                out.extend(done[p] if p in backward else (p,))
            done[t] = tuple(out)
            on_path.discard(path.pop())
            next_child.pop()
        return done[token]

    def decode(self, tokens):
        """The document the ids stand for: a str for str symbols, else a list of symbols."""
        self._check_fitted()
        symbols: list = []
        alphabet = self.inverse_alphabet
        words = self.inverse_known_words or {}
        for token in tokens:
            for t in self._expand(token):
                if t in alphabet:
                    symbols.append(alphabet[t])
                elif t in words:
                    symbols.extend(words[t])
                else:
                    raise ValueError(f"Unknown token {t}")
        if symbols and isinstance(symbols[0], str):
            return "".join(symbols)
        if not symbols and all(isinstance(s, str) for s in alphabet.values()):
            return ""
        return symbols

    # ------------------------------------------------------------------ the reference's JSON

    def dumps(self) -> str:
        """The model as the reference's JSON (field order and `None`s left out, as it does)."""
        inst = {
            "n_tokens": self.n_tokens,
            "alphabet": self.alphabet,
            "known_words": self.inverse_known_words,
            "break_tokens": list(self.break_tokens) if self.break_tokens is not None else None,
            "regex_str": self.regex_str,
            "stop_tokens": list(self.stop_tokens) if self.stop_tokens is not None else None,
            "mapper": self.tokens_mapper["backward"],
            "weights": self.tokens_weights,
        }
        return json.dumps({k: v for k, v in inst.items() if v is not None})

    @classmethod
    def loads(cls, dump: str, token_type: type = int):
        """A model from `dumps()` JSON (ours or the reference's); `token_type` converts the
        alphabet's JSON keys back (int by default, as the reference; str for text models)."""
        try:
            model = json.loads(dump)
            alphabet = {token_type(k): int(v) for k, v in model["alphabet"].items()}
            inst = cls(n_tokens=int(model["n_tokens"]), alphabet=alphabet)
            if "known_words" in model:
                inst.known_words = {}
                inst.inverse_known_words = {}
                for value, key in model["known_words"].items():
                    key = key if token_type is str else tuple(key)
                    inst.known_words[key] = int(value)
                    inst.inverse_known_words[int(value)] = key
            if "break_tokens" in model:
                inst.break_tokens = {token_type(t) for t in model["break_tokens"]}
            if "regex_str" in model:
                inst.regex_str = model["regex_str"]
            if "stop_tokens" in model:
                inst.stop_tokens = {token_type(t) for t in model["stop_tokens"]}
            inst.tokens_mapper = {"backward": {int(t): tuple(int(x) for x in seq)
                                               for t, seq in model["mapper"].items()}, "forward": {}}
            inst.tokens_weights = {int(t): float(w) for t, w in model["weights"].items()}
        except (KeyError, AttributeError, TypeError) as e:
            raise ValueError(f"not a UBPE model dump: {e}") from None
        except RecursionError:
            raise ValueError("not a UBPE model dump: nested too deeply") from None
        inst._check_ids()
        inst._build_splitter()
        n_tokens = inst.n_tokens
        inst._after_vocabulary_change()
        inst.n_tokens = n_tokens      # loads keeps the stored value, like the reference
        return inst


# rebuilt after unpickling, not pickled: the splitter, the memo of expansions, the kernels
_DERIVED = frozenset({"split_pipeline", "_expanded", "_lookup", "_merges", "_max_id"})
_ID_SLACK = 1024  # ids a loaded model may use beyond one per token it defines


def _known_words_dict(known_words, key_type, n_alphabet: int) -> dict:
    """The reference's accepted shapes: a list of str/lists/tuples (ids follow the alphabet) or a
    dict word -> id with ids len(alphabet)..len(alphabet)+len(known_words)."""
    if key_type not in (str, tuple):
        raise TypeError("If `known_words` is a `dict` its keys must be strings or tuples")
    if isinstance(known_words, set):
        raise TypeError("`known_words` must be a list or a dict (a set has no order for the ids)")
    if isinstance(known_words, list):
        words = known_words
        if isinstance(words[0], str):
            return {w: i for i, w in enumerate(words, start=n_alphabet)}
        if isinstance(words[0], (list, tuple)):
            return {tuple(w): i for i, w in enumerate(words, start=n_alphabet)}
        raise TypeError("If `known_words` is provided, it must be a list of strings or lists/tuples")
    if min(known_words.values()) != n_alphabet:
        raise ValueError("Minimal token value in `known_words` must be one more than the maximal "
                         "token value in `alphabet`")
    if sorted(known_words.values()) != list(range(n_alphabet, n_alphabet + len(known_words))):
        raise ValueError("Values in `known_words` should form a sequence "
                         "`len(alphabet)..len(alphabet)+len(known_words)`")
    return dict(known_words)


def _symbol_set(symbols, alphabet: dict):
    """Break/stop symbols that are in the alphabet, or None (as the reference filters them)."""
    if symbols is None or not isinstance(symbols, (list, str, set, tuple)):
        return None
    kept = {s for s in symbols if s in alphabet}
    return kept or None


def _classic_deletions(ranked: list, quantity: int) -> list:
    """Indices into `ranked` (lowest weight first) to delete for the classic model: the weakest
    tokens and, depth first, every token built from a deleted one (repeats kept, as the reference)."""
    users: dict = {}
    for j, (_, pair) in enumerate(ranked):
        for t in set(pair):
            users.setdefault(t, []).append(j)
    to_delete: list = []
    deleted: set = set()
    for i in range(len(ranked)):
        if i in deleted:
            continue
        if len(to_delete) >= quantity:
            break
        queue = [i]
        while queue:
            k = queue.pop()
            to_delete.append(k)
            deleted.add(k)
            for j in users.get(ranked[k][0], ()):
                if j not in deleted:
                    queue.append(j)
    return to_delete
