"""The end of HF's pipeline for `Tokenizer`: truncation (with overflowing windows and the
pairs HF makes of them), the post-processor, padding.  A mixin: `Tokenizer` keeps the
options (`_truncation`, `_padding`) and the post-processor; this is what runs them."""
from __future__ import annotations

from . import post_processors
from .encoding import Encoding


class PostProcessing:
    def _post_process(self, encodings: list, add_special_tokens: bool, options: tuple | None = None) -> Encoding:
        """options: (truncation, padding) to apply instead of the tokenizer's own (an
        Encoding made later, when read, applies the options of the call that made it)."""
        truncation, padding = options if options is not None else (self._truncation, self._padding)
        if truncation:
            self._truncate(encodings, add_special_tokens, truncation)
        overflow = [e.own("overflowing") for e in encodings]   # (their own: each is set to [] next)
        for e in encodings:
            e.put("overflowing", [])
        # (sequences of an overflow, the sequences of its own overflows); each sequence as
        # (Encoding, whether it is an overflow piece)
        if len(encodings) == 1:
            combos = [([(o, True)], []) for o in overflow[0]]
        else:  # HF's Encoding::merge_with: every overflow of A with B and B's overflows, then A with B's
            a, b = encodings
            combos = []
            for a_o in overflow[0]:
                # A's overflow merged with B keeps B's overflows, each merged with it in turn
                with_b = [[(a_o.copy(), True), (b_o.copy(), True)] for b_o in overflow[1]]
                combos.append(([(a_o.copy(), True), (b.copy(), False)], with_b))
                combos.extend(([(a_o.copy(), True), (b_o.copy(), True)], []) for b_o in overflow[1])
            # A merged with one of B's overflows keeps A's overflows, each merged with that one
            combos.extend(([(a.copy(), False), (b_o.copy(), True)],
                           [[(a_o.copy(), True), (b_o.copy(), True)] for a_o in overflow[0]])
                          for b_o in overflow[1])
        out = self._post_process_plain(encodings, add_special_tokens=add_special_tokens)
        overflowing = []
        for seqs, nested in combos:
            o = self._post_process_plain(*zip(*seqs), add_special_tokens=add_special_tokens)
            o.put("overflowing", [self._post_process_plain(*zip(*n), add_special_tokens=add_special_tokens)
                                   for n in nested])
            overflowing.append(o)
        out.put("overflowing", overflowing)
        if padding:
            length = padding["length"] if padding["length"] is not None else len(out)
            self._pad(out, length, padding)
        return out

    def _post_process_plain(self, encodings, overflows: tuple | None = None, *, add_special_tokens: bool) -> Encoding:
        """The post-processor on the sequences (overflows[k]: sequence k is an overflow piece)."""
        proc = self.post_processor
        process = proc.process_all if proc is not None else post_processors.default_process
        return process(list(encodings), add_special_tokens, overflows)

    def _pad(self, enc: Encoding, length: int, padding: dict | None = None) -> None:
        p = padding if padding is not None else self._padding
        multiple = p["pad_to_multiple_of"]
        if multiple and length % multiple:
            length += multiple - length % multiple
        enc.pad(length, p["direction"], p["pad_id"], p["pad_type_id"], p["pad_token"])

    def _truncate(self, encodings: list, add_special_tokens: bool, t: dict) -> None:
        """HF's truncate_encodings, with max_length less the post-processor's added tokens."""
        n_added = self.num_special_tokens_to_add(len(encodings) == 2) if add_special_tokens else 0
        if n_added > t["max_length"]:
            return  # as HF: its unsigned max_length - n_added wraps around, so nothing is cut
        max_length = t["max_length"] - n_added
        stride, direction = t["stride"], t["direction"]
        if max_length == 0:
            for e in encodings:
                e.truncate(0, stride, direction)
            return
        total = sum(len(e) for e in encodings)
        if total <= max_length:
            return
        if t["strategy"] == "longest_first":
            if len(encodings) == 1:
                encodings[0].truncate(max_length, stride, direction)
                return
            a, b = encodings  # the shorter keeps what it can, else both get about half
            n1, n2 = len(a), len(b)
            swap = n1 > n2
            if swap:
                n1, n2 = n2, n1
            n2 = n1 if n1 > max_length else max(n1, max_length - n1)
            if n1 + n2 > max_length:
                n1 = max_length // 2
                n2 = n1 + max_length % 2
            if swap:
                n1, n2 = n2, n1
            a.truncate(n1, stride, direction)
            b.truncate(n2, stride, direction)
            return
        if t["strategy"] == "only_second" and len(encodings) == 1:
            raise ValueError("truncation strategy only_second needs a pair of sequences")
        target = encodings[0] if t["strategy"] == "only_first" else encodings[1]
        remove = total - max_length
        if len(target) <= remove:
            raise ValueError("truncation: the sequence to truncate is too short to remove "
                             f"{remove} tokens (strategy {t['strategy']})")
        target.truncate(len(target) - remove, stride, direction)
