"""The ids-only paths of `Tokenizer` on a plain byte-level BPE file (see tokenizer.py).

`encode`'s short-call path (one kernel call, an Encoding whose other fields are made when
first read) and `encode_ids`, `encode_to_numpy`, `encode_ids_batch`: text is cut at its
added tokens in Python, each other segment is scanned and merged by the GIL-free kernel of
`fastbpe.Encoding`, and the post-processor's ids, truncation and padding are applied to the
ids alone.  A mixin over `Tokenizer`'s fields (`model`, `added`, `_pattern`, `_kind`, ...)."""
from __future__ import annotations

import re
import sys
import weakref

from ..patterns import BY_NAME
from ..threads import available_cores, batch_threads, parallel_map
from .._added_split import encode_cut_texts
from .._short_call import ShortCall, lazy_objects, plain_normalized, plain_texts
from .added_tokens import MAX_FIRSTS
from .encoding import (SHORT_FIELDS, Encoding, ShortSource, gc_paused, lazy_encoding, single_sequence_shape,
                       without_offsets)


# a text this long (characters) is cut in parts for the threads when a batch has few texts
_LONG_TEXT = 1 << 16
# patterns whose pieces never span a space after an ASCII letter or digit (shards.py proves
# it for every pattern by name; the cut is before an ASCII space, so never inside a character)
CUTTABLE_PATTERNS = frozenset(BY_NAME.values())
_CUT_POINT = re.compile(r"(?<=[A-Za-z0-9])[ \t\r\n]")


def _cut_positions(text: str, size: int) -> list[int]:
    """Cut points about `size` characters apart: the first one at or after each multiple."""
    cuts, at = [], size
    while at < len(text):
        m = _CUT_POINT.search(text, at)
        if m is None:
            break
        cuts.append(m.start())
        at = m.start() + size
    return cuts


def _cut(text: str, size: int) -> list[str]:
    """text in parts of about `size` characters, cut at cut points (the whole when none)."""
    bounds = [0, *_cut_positions(text, size), len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


# each tokenizer's set of live _LazyBatch objects (its _lazy_batches), by id() while it lives: the
# collector clears every weak reference held only by garbage before it runs finalizers, so a
# tokenizer in a cycle would find its own set empty in __del__; this one it finds whole
_LIVE_BATCHES: dict = {}


class _LazyBatch:
    """The texts of one encode_batch call whose Encodings hold only their ids: it stands
    for the tokenizer in their pending source (Encoding.lazy), and the first Encoding made
    makes every one of them in one batch pass.  The tokenizer makes them all before it
    changes (added tokens, stages) or goes away (Tokenizer.__del__), so they stay those of
    the call.  The tokenizer is held by a weak reference: a strong one from Encodings the
    cycle collector does not track (hf.encoding.EncodingFields) would leak a tokenizer that
    keeps one of its Encodings."""
    __slots__ = ("_tokenizer", "texts", "add_special_tokens", "options", "with_offsets", "made", "__weakref__")

    def __init__(self, tokenizer, texts: list, add_special_tokens: bool, options: tuple | None,
                 with_offsets: bool = True):
        self._tokenizer, self.texts, self.made = weakref.ref(tokenizer), texts, None
        self.add_special_tokens, self.options, self.with_offsets = add_special_tokens, options, with_offsets

    def make(self, tokenizer=None) -> list:
        """The batch's Encodings, made by `tokenizer` (the one going away), else the live one."""
        made = self.made
        if made is None:   # two threads may both get here: the same Encodings, made twice
            if tokenizer is None:
                tokenizer = self._tokenizer()
            if tokenizer is None:   # (only if its __del__ could not run: interpreter shutdown)
                raise RuntimeError("the tokenizer of these Encodings is gone: their other fields cannot be made")
            made = self.made = tokenizer._encode_all(self.texts, self.add_special_tokens, self.options,
                                                     self.with_offsets)
            self.texts = None
        return made

    def encoding_of(self, index: int, add_special_tokens: bool, options: tuple | None):
        return self.make()[index]


class _EitherPattern:
    """contains_any over two automata (raw and normalized added tokens, both looked for in
    the text itself when there is no normalizer): `_plain_test`'s pattern for such a file."""
    __slots__ = ("raw", "normalized")

    def __init__(self, raw, normalized):
        self.raw, self.normalized = raw, normalized

    def contains_any(self, text: str) -> bool:
        return self.raw.contains_any(text) or self.normalized.contains_any(text)


def _tries(pattern) -> tuple | None:
    """The automata of `_plain_test`'s pattern, for ShortCall: a text holding a token's first
    character is searched for a token there (Phi-2's runs of spaces start with " ")."""
    if pattern is None:
        return None
    return (pattern.raw, pattern.normalized) if type(pattern) is _EitherPattern else (pattern,)


class _NormalizedPattern:
    """contains_any for a file with normalized tokens and a normalizer program (`_short_ids`):
    a raw token in the text, or a normalized one in the normalized text (HF's order, for a text
    with no raw token)."""
    __slots__ = ("raw", "normalized", "program")

    def __init__(self, raw, normalized, program):
        self.raw, self.normalized, self.program = raw, normalized, program

    def contains_any(self, text: str) -> bool:
        return (self.raw is not None and self.raw.contains_any(text)) \
            or self.normalized.contains_any(self.program.normalize(text))


class IdsPath:
    def _short_plan(self):
        """What encode's short-call path needs, or False when this tokenizer cannot take it:
        the byte-level kernel with a C scanner, no truncation or padding, no added token
        matched after normalizing.  (kernel encode, scanner kind, the normalizer program or
        None, the raw added tokens' pattern and first characters, the post-processor's ids
        around a sequence, the single-sequence shapes, and the compiled call that does the
        whole short call)."""
        if not self._uses_fast_path() or self._kind < 0 or self._truncation is not None or self._padding is not None:
            return False
        test, normalized_test = self._plain_test(), None
        if test is None:
            test, normalized_test = self._normalized_test()
            if test is None:
                return False
        pattern, first = test
        tries = _tries(pattern)
        program = self._normalize_program
        wraps = {flag: self._wraps(flag) for flag in (False, True)}
        if not any(before or after for before, after in wraps.values()):
            wraps = None  # nothing around a sequence (Qwen, GPT-2): the kernel's list is the answer
        shapes = {flag: self._single_sequence(flag)[1:] for flag in (False, True)}
        # the lazy Encodings' source: this tokenizer until it changes (_make_lazy_encodings);
        # one for every plan until then, so a plan dropped (no_padding) leaves none unfrozen
        source = self.__dict__.get("_short_source")
        if source is None:
            source = self._short_source = ShortSource(self)
        call = ShortCall(self.model.table, self._kind, pattern is not None, first, wraps, shapes,
                         Encoding, source, SHORT_FIELDS, normalize=program.kernel if program is not None else None,
                         tries=tries, normalized_first=normalized_test and normalized_test[0],
                         normalized_tries=normalized_test and normalized_test[1], cut=self.added.cut_matchers())
        if normalized_test is not None:   # _short_ids: the raw tokens in the text, the normalized ones after normalizing
            pattern, first = _NormalizedPattern(pattern, self.added.matcher(normalized=True)[0], program), None
        return (self.model.table.encode_text, self._kind, program, pattern, first, wraps, shapes, call)

    def _normalized_test(self) -> tuple:
        """For a file whose normalized tokens make `_plain_test` None (Qwen3.5's and GPT-NeoX's
        NFC): ((the raw tokens' pattern or None, their first characters), (the normalized tokens'
        first characters, their automata)), what ShortCall checks before and after normalizing (as
        `plain_normalized`); (None, None) when it cannot tell."""
        if self._normalize_program is None or self._normalizer_not_lowered is not None:
            return None, None
        raw, _, raw_firsts = self.added.matcher_and_first_chars(False)
        normalized, _, firsts = self.added.matcher_and_first_chars(True)
        if normalized is None or not firsts or len(firsts) > MAX_FIRSTS \
                or (raw is not None and (not raw_firsts or len(raw_firsts) > MAX_FIRSTS)):
            return None, None
        return (raw, "".join(raw_firsts) if raw is not None else None), ("".join(firsts), (normalized,))

    def _plain_test(self) -> tuple | None:
        """What tells a text that goes to the kernel whole, normalized by the normalizer
        program (no added token can be in it): (the raw added tokens' pattern or None, a str
        of the 1-16 characters they start with, or None); None when an added token matched after
        normalizing makes every text take the plan.  With lone surrogates the kernel raises
        str.encode's error."""
        pattern, _, firsts = self.added.matcher_and_first_chars(False)
        if self.added.matcher(normalized=True)[0] is not None:
            if self._normalizer is not None and (self._normalize_program is not None
                                                 or self._normalizer_not_lowered is not None):
                return None
            # no normalizer, or one that changes nothing (DeepSeek-V3's empty Sequence: no
            # program and nothing left unlowered): the normalized text is the text, so a normalized
            # token (GPT-2's <|endoftext|>) is looked for in the text itself, as a raw one would be; with raw
            # ones too (GPT-J's <|endoftext|> and <|extratoken_N|>), a text holding neither
            raw, raw_firsts = pattern, firsts
            pattern, _, firsts = self.added.matcher_and_first_chars(True)
            if raw is not None:
                pattern = _EitherPattern(raw, pattern)
                firsts = tuple(sorted({*raw_firsts, *firsts})) if raw_firsts is not None and firsts is not None \
                    else None
        return pattern, "".join(firsts) if firsts and len(firsts) <= MAX_FIRSTS else None   # (_short_call.first_chars)

    def _plain_after_normalizing(self, texts: list) -> tuple | None:
        """(for each text whether it holds no added token, the normalized texts of those) for a
        file whose normalized tokens make `_plain_test` None (Qwen3.5's NFC), or None when it
        cannot tell (no program, a text not a str, more first characters than `plain_normalized`
        takes).  HF finds the raw tokens in the text, then the normalized ones in the normalized
        stretches between them: with none of the raw ones' first characters in the text and none
        of the normalized ones' in its normalized text there is no token and the normalized text
        is encoded whole (every English 2 kB document went through the automaton's cut before)."""
        if self._normalizer_not_lowered is not None or self._plain_test() is not None \
                or not all(type(t) is str for t in texts):
            return None
        raw, _, raw_firsts = self.added.matcher_and_first_chars(False)
        normalized, _, firsts = self.added.matcher_and_first_chars(True)
        if normalized is None or not firsts or len(firsts) > MAX_FIRSTS \
                or (raw is not None and (not raw_firsts or len(raw_firsts) > MAX_FIRSTS)):
            return None
        done = plain_normalized(texts, self._normalize_program.kernel, "".join(firsts),
                                "".join(raw_firsts) if raw is not None else None)
        return [t is not None for t in done], [t for t in done if t is not None]

    def _plain_texts(self, texts: list) -> list:
        """For each text, whether it goes to the kernel whole (`_plain_test`; the short call's
        checks, compiled, for a batch: the per-text Python of `_plan` cost as much as a fifth
        of a batch of 2 kB documents)."""
        test = self._plain_test()
        if test is None:
            return [False] * len(texts)
        pattern, first = test
        return plain_texts(texts, pattern is not None, first)

    @staticmethod
    def _short_ids(short, text: str, add_special_tokens) -> list | None:
        """encode(text).ids in one kernel call (on the normalized text), or None when text
        holds an added token (ShortCall cuts it in the kernel call when no token matches
        single words)."""
        encode_text, kind, program, pattern, first, wraps, _, _ = short
        if pattern is not None and (first is None or any(c in text for c in first)) and pattern.contains_any(text):
            return None
        # no text.encode check for lone surrogates: encode_text raises str.encode's error
        ids = encode_text(text if program is None else program.normalize(text), kind, False)
        if wraps is None:
            return ids
        before, after = wraps[True if add_special_tokens else False]
        return before + ids + after

    # -- the fast path --------------------------------------------------------------------

    def _char_kernel(self) -> bool:
        """The char-level kernel encodes (`_char_path`; not while an added token is matched
        in normalized text: the pipeline does that)."""
        return self._char_path is not None and self._char_path.usable(self)

    def _uses_fast_path(self) -> bool:
        """The byte-level kernel encodes (char-level files: `_char_path`)."""
        return self._kernel_plan.byte_level_kernel

    def _wraps(self, add_special_tokens: bool) -> tuple[list, list]:
        """The ids the post-processor puts before and after a single sequence."""
        return self._single_sequence(add_special_tokens)[0]

    def _single_sequence(self, add_special_tokens: bool) -> tuple:
        """((ids before, ids after), shape, input sequences): what the post-processor does to
        a single sequence (encoding.single_sequence_shape), from a probe sequence."""
        wraps = self._fast_wraps
        if wraps is None:  # built whole, then published (threads)
            wraps = {}
            for flag in (False, True):
                probe = Encoding([-1], [0], [""], [(0, 0)], [1], [0], [0], [0])
                processed = self._post_process_plain([probe], add_special_tokens=flag)
                ids = processed.own("ids")
                k = ids.index(-1)
                wraps[flag] = ((ids[:k], ids[k + 1:]), *single_sequence_shape(processed))
            self._fast_wraps = wraps
        return wraps[add_special_tokens]

    def _plan(self, text: str) -> tuple[list, bool]:
        """text cut at its added tokens, for the fast paths: [(start, end, item)] with item
        an added token's id or a str segment to BPE (normalized by the file's normalizer
        program), and whether normalizing changed a segment (then the spans are not all in
        text: `_plan_aligned` gives them)."""
        if type(text) is not str:
            if not isinstance(text, str):
                raise TypeError(f"expected str, not {type(text).__name__}")
            text = str.__str__(text)  # exact str, by contents (not a subclass's __str__), as HF
        program = self._normalize_program
        normalized, _ = self.added.matcher(normalized=True)
        if normalized is None and not self.added.occurs_in(text, normalized=False):  # the common case
            seg = program.normalize(text) if program is not None else text
            return [(0, len(text), seg)], seg is not text and seg != text
        out, changed = [], False
        for s, e, aid in self.added.find(text, normalized=False):
            if aid is not None:
                out.append((s, e, aid))
                continue
            seg = text[s:e] if (s, e) != (0, len(text)) else text
            if program is not None:
                raw, seg = seg, program.normalize(seg)
                changed = changed or (seg is not raw and seg != raw)
            if normalized is not None:
                for s2, e2, aid2 in self.added.find(seg, normalized=True):
                    out.append((s + s2, s + e2, aid2 if aid2 is not None else seg[s2:e2]))
            else:
                out.append((s, e, seg))
        return out, changed

    def _plan_aligned(self, text: str) -> tuple[list, list | None]:
        """_plan with every span in text, for Encodings: (plan, aligns), aligns None when
        normalizing changed no segment, else one entry per plan entry: for a str segment
        normalizing changed, (starts, ends, base), int64 memoryviews giving each of its
        characters' span in text (+ base), as HF aligns them; for an added token found in
        normalized text, the text it matched (HF's token); else None."""
        program = self._normalize_program
        if program is None:
            return self._plan(text)[0], None
        if type(text) is not str:
            if not isinstance(text, str):
                raise TypeError(f"expected str, not {type(text).__name__}")
            text = str.__str__(text)
        normalized, _ = self.added.matcher(normalized=True)
        out, aligns, changed = [], [], False
        for s, e, aid in self.added.find(text, normalized=False):
            if aid is not None:
                out.append((s, e, aid))
                aligns.append(None)
                continue
            seg, starts, ends = program.normalize_aligned_bytes(text[s:e] if (s, e) != (0, len(text)) else text)
            if starts is not None:
                changed = True
                starts, ends = memoryview(starts).cast("q"), memoryview(ends).cast("q")
            if normalized is None:
                out.append((s, e, seg))
                aligns.append(None if starts is None else (starts, ends, s))
                continue
            for s2, e2, aid2 in self.added.find(seg, normalized=True):
                if starts is None:
                    out.append((s + s2, s + e2, aid2 if aid2 is not None else seg[s2:e2]))
                    aligns.append(None)
                    continue
                if e2 == s2:
                    continue   # as the pipeline: an empty piece has no tokens
                # a piece's span: its first character's start to its last one's end
                span = (s + starts[s2], s + ends[e2 - 1])
                if aid2 is not None:
                    out.append((*span, aid2))
                    aligns.append(seg[s2:e2])
                else:
                    out.append((*span, seg[s2:e2]))
                    aligns.append((starts[s2:e2], ends[s2:e2], s))
        return out, (aligns if changed else None)

    def _fast_segments(self, text: str) -> list:
        """text as a list of str segments (to BPE) and int ids (added tokens)."""
        return [item for _, _, item in self._plan(text)[0]]

    def _segment_ids(self, seg: str, as_numpy: bool = False):
        if not seg:
            return []
        if self._kind >= 0:
            return self.model.table.encode_text(seg, self._kind, as_numpy)
        return self.model.table.encode_pieces(self._isolated_pieces(seg), as_numpy, seg)

    def _isolated_pieces(self, seg: str) -> list[str]:
        """Split(Isolated): every match and every gap between matches is a piece; an empty
        match is no piece but still ends the gap before it (HF: `\\s*` cuts "ab" into a, b)."""
        pieces, prev = [], 0
        for s, e in self._pattern_regex.spans(seg):
            if s > prev:
                pieces.append(seg[prev:s])
            if e > s:
                pieces.append(seg[s:e])
            prev = e
        if prev < len(seg):
            pieces.append(seg[prev:])
        return pieces

    def _body_ids(self, segments: list, encoded=None) -> list[int]:
        """The ids of a text's segments (encoded: an iterator over the str segments' ids when
        a batch call already has them)."""
        if len(segments) == 1 and type(segments[0]) is str:
            return next(encoded) if encoded is not None else self._segment_ids(segments[0])
        ids = []
        for seg in segments:
            if type(seg) is int:
                ids.append(seg)
            else:
                ids.extend(next(encoded) if encoded is not None else self._segment_ids(seg))
        return ids

    def _finish_ids(self, body: list, add_special_tokens: bool) -> list[int]:
        """Truncation, the post-processor's ids and fixed-length padding, on ids alone: what
        `encode` does for one sequence."""
        if self._truncation is not None:
            body, _ = self._truncated(body, add_special_tokens)
        before, after = self._wraps(add_special_tokens)
        ids = before + body + after if before or after else body
        if self._padding is not None:
            length = self._padding["length"]
            ids = self._pad_ids(ids, length if length is not None else len(ids))
        return ids

    def _pad_ids(self, ids: list, length: int) -> list[int]:
        p = self._padding
        multiple = p["pad_to_multiple_of"]
        if multiple and length % multiple:
            length += multiple - length % multiple
        if len(ids) >= length:
            return ids
        fill = [p["pad_id"]] * (length - len(ids))
        return ids + fill if p["direction"] == "right" else fill + ids

    def _pad_batch(self, batch: list) -> list:
        """encode_batch's padding to the longest sequence, when no length is fixed."""
        if self._padding is not None and self._padding["length"] is None and batch:
            longest = max(len(ids) for ids in batch)
            batch = [self._pad_ids(ids, longest) for ids in batch]
        return batch

    def _encode_ids(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """`encode_ids` (_short_call.CompiledEncode's C method) for what its compiled call does not take."""
        short = self._short
        if short is None:
            short = self._short = self._short_plan()
            if short and type(text) is str:   # planned now: the compiled call (it cuts added tokens in C)
                return self.encode_ids(text, add_special_tokens)
        if short and type(text) is str:
            ids = self._short_ids(short, text, add_special_tokens)
            if ids is not None:
                return ids
        if self._char_kernel():
            return self._finish_ids(self._char_path.body_ids(self, text), add_special_tokens)
        if not self._uses_fast_path():
            return self.encode(text, add_special_tokens=add_special_tokens).own("ids")   # (no copy)
        body = self._body_ids(self._fast_segments(text))
        if self._truncation is None and self._padding is None and not any(self._wraps(add_special_tokens)):
            return body
        return self._finish_ids(body, add_special_tokens)

    def encode_to_numpy(self, text: str, add_special_tokens: bool = True):
        """`encode_ids` as a numpy uint32 array."""
        import numpy as np

        if self._uses_fast_path() and self._truncation is None and self._padding is None:
            segments = self._fast_segments(text)
            before, after = self._wraps(add_special_tokens)
            if len(segments) == 1 and type(segments[0]) is str and not before and not after:
                return self._segment_ids(segments[0], True) if segments[0] else np.zeros(0, np.uint32)
        return np.asarray(self.encode_ids(text, add_special_tokens), dtype=np.uint32)

    def encode_ids_batch(self, texts, add_special_tokens: bool = True, num_threads: int | None = None) -> list[list[int]]:
        """`encode_ids` of each text (padded as `encode_batch` pads), on threads: each
        thread's share of the texts is one GIL-free kernel call."""
        if isinstance(texts, str):
            raise TypeError("encode_ids_batch expects a list of str, not a single str")
        texts = list(texts)
        num_threads = batch_threads(texts, available_cores() if num_threads is None else num_threads)
        if self._char_kernel():
            bodies = self._char_path.bodies(self, texts, num_threads)
        elif not self._uses_fast_path():
            return [e.own("ids") for e in self.encode_batch(texts, add_special_tokens=add_special_tokens)]
        elif self._kind < 0:
            # the regex split re-takes the GIL per match: threads would only contend
            bodies = [self._body_ids(self._fast_segments(t)) for t in texts]
        else:
            bodies = parallel_map(self._fast_bodies, texts, num_threads, keep_threads=True)
        if self._truncation is None and self._padding is None and not any(self._wraps(add_special_tokens)):
            return bodies
        return self._pad_batch([self._finish_ids(b, add_special_tokens) for b in bodies])

    def _single_encodings(self, texts: list, add_special_tokens: bool, num_threads: int,
                          with_offsets: bool = True) -> list[Encoding]:
        """encode_batch of str inputs on the kernel path (transformers' `tok(texts)`): each
        thread's share of the texts is one GIL-free kernel call, then one Encoding a text
        holding its ids (truncated, wrapped in the post-processor's ids, padded); its shaped
        fields are made when read, cheaply, and its tokens, offsets, word ids and overflowing
        pieces by encoding that text again with this call's options, if read (without
        `with_offsets`, encode_batch_fast's: as `without_offsets` makes them)."""
        (before, after), shape, sequences = self._single_sequence(add_special_tokens)
        truncation, padding = self._truncation, self._padding
        options = (truncation, padding, None) if truncation or padding else None
        # the texts whose Encodings stay lazy: the first one made makes them all (a caller
        # reading one's offsets reads them all, and one batch pass costs far less)
        batch = _LazyBatch(self, list(texts), add_special_tokens, options, with_offsets)
        _LIVE_BATCHES[id(self)] = self._lazy_batches   # (reachable while this tokenizer is in a cycle: __del__)
        self._lazy_batches.add(batch)

        def finish(index: int, body: list) -> Encoding:
            cut = False
            if truncation is not None:
                body, cut = self._truncated(body, add_special_tokens)
            ids = before + body + after if before or after else body
            n = len(ids)
            if padding is not None:
                ids = self._pad_ids(ids, padding["length"] if padding["length"] is not None else n)
            return lazy_encoding(ids, (batch, index, add_special_tokens, shape, n, len(ids),
                                       options and (*options, cut)), sequences)

        char_path = self._char_path if self._char_kernel() else None
        plain = truncation is None and padding is None   # finish only wraps the body

        def chunk(indexes: list) -> list[Encoding]:
            share = [texts[i] for i in indexes]
            if char_path is not None:   # the char-level kernel, a call for the share
                bodies = char_path.share_bodies(self, share, plain)
            else:
                bodies = self._fast_bodies(share, plain)   # as encode_ids_batch (bytes: Encodings' ids)
            if plain:   # finish's result, made in C (a batch of 2 kB documents: ~2%); one source
                # tuple for the batch, each index in _text; ids the kernel's bytes, wrapped
                return lazy_objects(Encoding, SHORT_FIELDS, bodies, indexes, batch, add_special_tokens, shape,
                                    sequences, (before, after))
            return list(map(finish, indexes, bodies))

        if 1 < num_threads and len(texts) < 2 * num_threads and self._pattern in CUTTABLE_PATTERNS \
                and any(len(t) >= _LONG_TEXT for t in texts):
            out = list(map(finish, range(len(texts)), self._long_bodies(texts, num_threads)))
        else:
            out = parallel_map(chunk, range(len(texts)), num_threads, keep_threads=True)
        if padding is not None and padding["length"] is None and out:   # to the batch's longest
            longest = max(len(e) for e in out)
            for e in out:
                source = e.lazy_source
                if type(source) is not tuple:
                    self._pad(e, longest)
                    continue
                ids = self._pad_ids(e.own("ids"), longest)
                maker, index, add, shape_, n, _, (trunc, pad, _, cut) = source
                e.set_lazy(ids, (maker, index, add, shape_, n, len(ids), (trunc, pad, longest, cut)))
            batch.options = (truncation, padding, longest)
        return out

    def __del__(self):
        """Encodings that make their fields later (a batch's, a short call's) hold this
        tokenizer weakly (they are not tracked by the cycle collector): make or freeze them
        before it goes.  (Run by the collector too: a tokenizer in a cycle is finalized first.
        Not at interpreter exit: a batch kept in a module's globals would be encoded again for
        nobody.)"""
        try:
            _LIVE_BATCHES.pop(id(self), None)
            if not sys.is_finalizing():
                self._make_lazy_encodings()
        except Exception:   # interpreter shutdown, a tokenizer whose loading failed: nothing to keep
            pass

    def _make_lazy_encodings(self) -> None:
        """Before the tokenizer changes: make the Encodings of every batch still holding only
        ids, with the tokenizer they were encoded with."""
        batches = getattr(self, "_lazy_batches", None)
        while batches:
            batches.pop().make(self)
        source = self.__dict__.pop("_short_source", None)
        if source is not None:   # held here, and by this tokenizer's plan's ShortCall (and its two sources)
            short = self._short
            source.freeze(4 if short else 1, short[7].results_alive() if short else False, self)

    def _encode_all(self, texts: list, add_special_tokens: bool, options: tuple | None,
                    with_offsets: bool = True) -> list[Encoding]:
        """encoding_of of every text, in one batch pass (the kernels on every core); without
        `with_offsets`, as encode_batch_fast makes them."""
        truncation, padding, longest = options if options is not None else (None, None, None)
        with gc_paused():
            sequences = self._sequences(texts, [0] * len(texts), available_cores())
            out = [self._post_process([e if with_offsets else without_offsets(e)], add_special_tokens,
                                      (truncation, padding)) for e in sequences]
            for e in out:
                if longest is not None:
                    self._pad(e, longest, padding)
                e.own("tokens")   # made here, under the one GC pause, not one by one
        return out

    def _truncated(self, body: list, add_special_tokens: bool) -> tuple[list, bool]:
        """A single sequence's ids cut as truncation cuts it (room left for the
        post-processor's ids), and whether anything was cut."""
        t = self._truncation
        n_added = self.num_special_tokens_to_add(False) if add_special_tokens else 0
        if n_added > t["max_length"]:
            return body, False   # HF's unsigned max_length - n_added wraps around: no cut
        keep = t["max_length"] - n_added
        if len(body) <= keep:
            return body, False
        if t["strategy"] == "only_second":
            raise ValueError("truncation strategy only_second needs a pair of sequences")
        return (body[:keep] if t["direction"] == "right" else body[len(body) - keep:]), True

    def _long_bodies(self, texts: list, num_threads: int) -> list:
        """The BPE ids of a few long texts, on every thread: each
        segment is cut where no piece of the split pattern can span the cut (see shards.py)
        into a part per thread's share, the parts run through the kernel at once, and each
        text's ids are its parts' ids in order."""
        plans, parts, counts = [], [], []
        for t in texts:   # lone surrogates: encode_texts raises
            plan = self._plan(t)[0]
            plans.append(plan)
            for _, _, item in plan:
                if type(item) is str:
                    cut = _cut(item, max(len(item) // (2 * num_threads), _LONG_TEXT // 4))
                    parts += cut
                    counts.append(len(cut))
        encoded = iter(parallel_map(lambda share: self.model.table.encode_texts(share, self._kind),
                                    parts, num_threads, keep_threads=True))
        counts = iter(counts)
        bodies = []
        for plan in plans:
            ids = []
            for _, _, item in plan:
                if type(item) is not str:
                    ids.append(item)
                    continue
                for _ in range(next(counts)):
                    ids += next(encoded)
            bodies.append(ids)
        return bodies

    def _fast_bodies(self, texts: list, as_bytes: bool = False) -> list:
        """One GIL-free kernel call for the texts that hold no added token (most of them: a
        plain test in C), each whole, normalized in one GIL-free call too; the others are cut
        at their added tokens (and normalized) inside one more kernel call (in Python when a
        token matches single words), then stitched.  Only those others pay for the
        automaton: run over every text, it was 10% of a batch of 2 kB documents.  With
        `as_bytes`, the ids of the texts whole or cut in the kernel are bytes of uint32s (what an
        Encoding holds, EncodingIds; a list held instead is copied on each read of `ids`)."""
        plain = self._plain_texts(texts)
        program = self._normalize_program
        found = self._plain_after_normalizing(texts) if program is not None and not any(plain) else None
        if found is not None:   # the plain texts normalized already (Qwen3.5's NFC)
            plain, whole = found
        else:
            whole = [t for t, ok in zip(texts, plain) if ok] if not all(plain) else texts
            if whole and program is not None:
                whole = program.normalize_batch(whole)
        encoded = self.model.table.encode_texts(whole, self._kind, False, as_bytes) if whole else []
        if len(whole) == len(texts):
            return encoded
        rest = [t for t, ok in zip(texts, plain) if not ok]
        matchers = self.added.cut_matchers()
        if matchers is not None and all(type(t) is str for t in rest):   # cut (and normalized) in the kernel call
            cut = encode_cut_texts(self.model.table, self._kind, *matchers, rest,
                                   program.kernel if program is not None else None, as_bytes)
        else:
            plans = [self._fast_segments(text) for text in rest]
            pieces = iter(self.model.table.encode_texts([s for plan in plans for s in plan if type(s) is str],
                                                        self._kind))
            cut = [self._body_ids(plan, pieces) for plan in plans]
        encoded, cut = iter(encoded), iter(cut)
        return [next(encoded) if ok else next(cut) for ok in plain]
