"""`Encoding`: the result of `Tokenizer.encode`, with the fields of `tokenizers.Encoding`."""
from __future__ import annotations

import contextlib
import gc
import sys
import warnings
import weakref

from .._encoding_base import EncodingFields, untracked_subclass


@contextlib.contextmanager
def gc_paused():
    """The cyclic garbage collector off while Encodings are built: they are several small
    objects a token (offset tuples, list growth), none of which can form a cycle, and the
    collector's passes every few hundred allocations otherwise take half the time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _stored(enc: "Encoding", slot: str) -> list:
    """The Encoding's own list in `slot`, made first if it is pending (see Encoding): what its
    methods and the pipeline read and change.  A field already set is taken as it is
    (transformers reads ids, attention_mask and overflowing of every Encoding, and those
    must not make the offsets).  Ids are never pending: the C base's own list of them."""
    if slot == "_ids":
        return enc.own_ids()
    if enc._pending is not None:
        value = getattr(enc, slot, None)   # unset (lazy) or None (pending): not made yet
        if value is not None:
            return value
        enc._make(slot)
    return getattr(enc, slot)


def _pending_field(slot: str) -> property:
    """A field that may be pending (see Encoding): made on first read.  A read gives a new
    list, as HF's (`ids = enc.ids; ids.append(eos)` leaves enc as it was).  Read-only, as
    HF's (AttributeError): the pipeline writes the slot; a caller's write could also put the
    Encoding itself in a field, a cycle the collector would never see (see EncodingFields)."""
    def get(self):
        return _stored(self, slot)[:]

    return property(get)


def _overflowing_get(enc: "Encoding") -> list:
    """Copies, as HF's: padding or changing one leaves this Encoding's parts as they were."""
    return [o.copy() for o in _stored(enc, "_overflowing")]


# the fields a single sequence's shape gives without encoding again (see single_sequence_shape)
SHAPED = ("_type_ids", "_attention_mask", "_special_tokens_mask", "_sequence_ids")
# every per-token field's slot, in Encoding's order
_FIELDS = ("_ids", "_type_ids", "_tokens", "_offsets", "_attention_mask", "_special_tokens_mask", "_word_ids",
           "_sequence_ids")
# what padding puts in them (Encoding.pad; type ids take the padding's pad_type_id)
_PAD_VALUES = {"_attention_mask": 0, "_special_tokens_mask": 1, "_sequence_ids": None}


def single_sequence_shape(processed: "Encoding") -> tuple[dict, frozenset | None]:
    """What a post-processor does to one sequence, from `processed`: the post-processed
    Encoding of a one-token sequence whose id is -1.  Every post-processor treats each token
    of a sequence alike (type id, sequence id, masks) and only adds tokens around it, so each
    shaped field of any single sequence is before + [value] * n + after."""
    k = processed.own_ids().index(-1)
    shape = {}
    for slot in SHAPED:
        field = _stored(processed, slot)
        shape[slot] = (field[:k], field[k], field[k + 1:])
    return shape, processed._sequences


new_object = EncodingFields.__new__  # an Encoding without __init__ (the short-call path fills its fields)


def _unsigned(index: int) -> int:
    """HF's lookups take usize: a negative index is an OverflowError, as there."""
    if index < 0:
        raise OverflowError("can't convert negative int to unsigned")
    return index


# the fields a make fills (C fields of _encoding_base.EncodingFields, as _pending, _sequences and _text)
_MADE = ("_type_ids", "_tokens", "_offsets", "_attention_mask", "_special_tokens_mask", "_word_ids",
         "_sequence_ids", "_overflowing")


@untracked_subclass   # (a class statement alone makes tracked instances in CPython 3.11+)
class Encoding(EncodingFields):
    """Ids are held by the C base (_encoding_base.EncodingIds: the kernel's bytes of uint32s,
    a new list each read of `ids`, `own_ids()` the Encoding's own list, len() the count),
    the other fields by _encoding_base.EncodingFields (C fields, None until set): with no
    slots of its own, an Encoding is not tracked by the cyclic garbage collector, as HF's
    is not (EncodingFields says why no cycle can go through one).  `own()` / `own_ids()`
    lists are the pipeline's: only ints, strs, (int, int) tuples and None go in them.
    Fields may be pending: an Encoding built from the kernels keeps a function that makes
    them and calls it the first time one is read, so a caller that needs only ids never pays
    for the rest.  `pending` leaves tokens, offsets and word ids (kernel_encodings.py);
    `lazy` leaves every field but ids (the short-call path of Tokenizer.encode).  Every
    method reads fields through `_stored` (or makes them first), so nothing sees a pending
    field.  A caller's read of a list field is a new list, as HF's: changing it leaves the
    Encoding as it was (`own(field)` is the Encoding's own list, for the pipeline)."""
    __slots__ = ()   # no field of its own (untracked_subclass leaves only such a class untracked)

    def __init__(self, ids, type_ids, tokens, offsets, attention_mask, special_tokens_mask,
                 word_ids, sequence_ids, overflowing=None):
        self._ids, self._type_ids, self._tokens, self._offsets = ids, type_ids, tokens, offsets
        self._attention_mask, self._special_tokens_mask = attention_mask, special_tokens_mask
        self._word_ids, self._sequence_ids = word_ids, sequence_ids
        self._overflowing = overflowing if overflowing is not None else []
        self._pending = None
        self._sequences = None  # the input sequences merged in, empty ones too (HF's sequence ranges)
        self._text = None   # a short call's text or a batch's index (ShortCall, lazy_objects: SHORT_FIELDS)

    def __reduce__(self):
        """Pickles (multiprocessing, datasets.map) with every field made."""
        if self._pending is not None:
            self._make()
        return (Encoding, (self.ids, self._type_ids, self._tokens, self._offsets, self._attention_mask,
                           self._special_tokens_mask, self._word_ids, self._sequence_ids, self._overflowing),
                (None, {"_sequences": self._sequences}))   # (HF's sequence ranges: its pads' None)

    @classmethod
    def pending(cls, ids: list, type_id: int, make) -> "Encoding":
        """ids now, and `make() -> (tokens, offsets, word_ids)` when one is first read."""
        n = len(ids)
        enc = cls(ids, [type_id] * n, None, None, [1] * n, [0] * n, None, [0] * n)
        enc._pending = make
        return enc

    @staticmethod
    def lazy(ids: list, source: tuple, sequences) -> "Encoding":
        """ids now, every other field when first read (see `lazy_encoding`)."""
        return lazy_encoding(ids, source, sequences)

    @property
    def lazy_source(self):
        """The source tuple of a lazy Encoding (see `lazy`) while its other fields are not made
        yet, else None or a maker: for the tokenizer that padded a batch of them later."""
        return self._pending

    @lazy_source.setter
    def lazy_source(self, source) -> None:
        self._pending = source

    def own(self, field: str) -> list:
        """The Encoding's own list of `field` ("ids", "offsets", "overflowing", ...), made if
        pending, not a copy: for the pipeline that builds Encodings and changes them in place.
        A caller's read (`enc.ids`) gets a new list, as HF's."""
        return _stored(self, "_" + field)

    def put(self, field: str, value: list) -> None:
        """The pipeline's write of `field` ("offsets", "overflowing", ...; a pending Encoding
        keeps it when it makes the rest): a caller's fields are read-only, as HF's."""
        setattr(self, "_" + field, value)

    def set_lazy(self, ids: list, source: tuple) -> None:
        """A lazy Encoding's ids and source at once, its other fields still not made
        (encode_batch pads a batch of them to its longest)."""
        self._ids, self._pending = ids, source

    def _make(self, slot: str | None = None) -> None:
        # fields first, then _pending cleared: a thread reading at the same time makes them
        # again (the same values) instead of finding a field not yet set
        make = self._pending
        if type(make) is tuple:
            tokenizer, text, add_special_tokens, shape, n, total, options = make
            if text is None:   # a short call's shared source (SHORT_FIELDS): the text is kept apart
                text = self._text
                n = total = len(self)   # (a caller's list is a copy: this one keeps its length)
            if slot in SHAPED:
                before, value, after = shape[slot]
                field = [value] * (n - len(before) - len(after))
                if before or after:
                    field = before + field + after
                if total > n:   # padded as Encoding.pad pads
                    padding = options[1]
                    pad = _PAD_VALUES.get(slot, padding["pad_type_id"])
                    if slot == "_sequence_ids" and not self._sequences:
                        pad = 0   # no sequence recorded: pads count as sequence 0 (Encoding.pad)
                    fill = [pad] * (total - n)
                    field = field + fill if padding["direction"] == "right" else fill + field
                setattr(self, slot, field)
                return
            if slot == "_overflowing" and (options is None or not options[3]):
                self._overflowing = []   # an uncut sequence has no overflow
                return
            with gc_paused():
                made = tokenizer.encoding_of(text, add_special_tokens, options[:3] if options else None)
        else:
            with gc_paused():
                made = make()
        if isinstance(made, Encoding):
            if made._pending is not None:
                made._make()
            # only the fields not set yet: one already set may have been written since
            for name in _MADE:
                if getattr(self, name, None) is None:
                    setattr(self, name, getattr(made, name))
            if getattr(self, "_sequences", None) is None:
                self._sequences = made._sequences
        else:
            for name, value in zip(("_tokens", "_offsets", "_word_ids"), made):
                if getattr(self, name, None) is None:
                    setattr(self, name, value)
        self._pending = None

    type_ids = _pending_field("_type_ids")
    attention_mask = _pending_field("_attention_mask")
    special_tokens_mask = _pending_field("_special_tokens_mask")
    sequence_ids = _pending_field("_sequence_ids")
    overflowing = property(_overflowing_get)
    tokens = _pending_field("_tokens")
    offsets = _pending_field("_offsets")
    word_ids = _pending_field("_word_ids")

    @classmethod
    def empty(cls) -> "Encoding":
        return cls([], [], [], [], [], [], [], [])

    @classmethod
    def specials(cls, ids: list, tokens: list, type_id: int) -> "Encoding":
        """Special tokens added by a post-processor: offsets (0, 0), no word, no sequence."""
        n = len(ids)
        return cls(list(ids), [type_id] * n, list(tokens), [(0, 0)] * n, [1] * n, [1] * n, [None] * n, [None] * n)

    @property
    def words(self) -> list:
        """The deprecated name of `word_ids` (HF warns the same way)."""
        warnings.warn("Encoding.words is deprecated, use Encoding.word_ids instead", DeprecationWarning,
                      stacklevel=2)
        return self.word_ids

    @property
    def n_sequences(self) -> int:
        # transformers reads it for every call: it must not make pending fields it does not need
        if getattr(self, "_sequences", None):   # known without the fields (set before any make)
            return len(self._sequences)
        seq = _stored(self, "_sequence_ids")
        if self._sequences:
            return len(self._sequences)
        if seq.count(0) + seq.count(None) == len(seq):  # one sequence (the common case), quickly
            return 1
        found = set(seq)
        found.discard(None)
        return len(found) or 1

    # -- alignment lookups, as tokenizers.Encoding's --------------------------------------

    def _sequence_range(self, sequence_index: int) -> tuple[int, int]:
        """The token span of one input sequence (the whole encoding when it has none)."""
        _unsigned(sequence_index)
        seq = _stored(self, "_sequence_ids")
        try:
            first = seq.index(sequence_index)
        except ValueError:  # an empty sequence has an empty span; no sequence at all, everything
            return (0, 0) if self._sequences and sequence_index in self._sequences else (0, len(self))
        last = first
        for k in range(first + 1, len(seq)):
            if seq[k] == sequence_index:
                last = k
        return first, last + 1

    def token_to_sequence(self, token_index: int) -> int | None:
        """The input sequence a token belongs to (None for an added special token)."""
        n = len(self)
        if _unsigned(token_index) > n:
            return None
        if self._pending is not None:
            self._make()
        seq = self._sequence_ids
        if not self._sequences and all(s is None or s == 0 for s in seq):
            return 0  # no sequence recorded: HF counts every position as sequence 0 (pads too)
        return seq[token_index] if token_index < n else None

    def word_to_tokens(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        """(first token, last token + 1) of a word of one sequence, or None."""
        start, end = self._sequence_range(sequence_index)
        _unsigned(word_index)
        first = last = None
        for k, w in enumerate(_stored(self, "_word_ids")[start:end]):
            if w is not None and w > word_index:
                break  # word ids only grow within a sequence (as HF stops there)
            if w == word_index:
                if first is None:
                    first = k
                last = k
        return None if first is None else (start + first, start + last + 1)

    def word_to_chars(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        span = self.word_to_tokens(word_index, sequence_index)
        if span is None:
            return None
        offsets = _stored(self, "_offsets")
        return offsets[span[0]][0], offsets[span[1] - 1][1]

    def token_to_chars(self, token_index: int) -> tuple[int, int] | None:
        if self.token_to_sequence(token_index) is None or not 0 <= token_index < len(self):
            return None
        return _stored(self, "_offsets")[token_index]

    def token_to_word(self, token_index: int) -> int | None:
        if self.token_to_sequence(token_index) is None or not 0 <= token_index < len(self):
            return None
        return _stored(self, "_word_ids")[token_index]

    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> int | None:
        start, end = self._sequence_range(sequence_index)
        _unsigned(char_pos)
        for k, (s, e) in enumerate(_stored(self, "_offsets")[start:end]):
            if s <= char_pos < e:
                return start + k
        return None

    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> int | None:
        token = self.char_to_token(char_pos, sequence_index)
        return None if token is None else self.token_to_word(token)

    def set_sequence_id(self, sequence_id: int) -> None:
        self._sequence_ids = [sequence_id] * len(self)
        self._sequences = frozenset((sequence_id,))

    @staticmethod
    def merge(encodings, growing_offsets: bool = True) -> "Encoding":
        """One Encoding of several, as HF's Encoding.merge (offsets of each part shifted past
        the previous part's last offset when growing_offsets)."""
        out = Encoding.empty()
        for e in encodings:
            out._merge_with(e.copy(), growing_offsets)
        return out

    def _merge_with(self, pair: "Encoding", growing_offsets: bool) -> None:
        """HF's Encoding::merge_with: every overflowing part meets the pair and its parts."""
        overflowing = []
        for mine in _stored(self, "_overflowing"):
            for theirs in [pair, *_stored(pair, "_overflowing")]:
                o = mine.copy()
                o._merge_with(theirs.copy(), growing_offsets)
                overflowing.append(o)
        for theirs in _stored(pair, "_overflowing"):
            o = self.copy()
            o._merge_with(theirs.copy(), growing_offsets)
            overflowing.append(o)
        offsets = _stored(self, "_offsets")
        shift = offsets[-1][1] if growing_offsets and offsets else 0
        pair = pair.copy()
        common = self._sequences and pair._sequences and self._sequences & pair._sequences
        if common:   # HF keeps one range a sequence id, the pair's: these tokens are in none
            self._sequence_ids = [None if s in common else s for s in _stored(self, "_sequence_ids")]
        if shift:
            pair._offsets = [(s + shift, e + shift) for s, e in pair._offsets]
        self.extend(pair)
        self._overflowing = overflowing

    def __repr__(self) -> str:
        return (f"Encoding(num_tokens={len(self)}, attributes=[ids, type_ids, tokens, offsets, "
                f"attention_mask, special_tokens_mask, overflowing])")

    def copy(self) -> "Encoding":
        if self._pending is not None:
            self._make()
        out = Encoding(self.ids, self._type_ids[:], self._tokens[:], self._offsets[:],
                       self._attention_mask[:], self._special_tokens_mask[:], self._word_ids[:],
                       self._sequence_ids[:], [o.copy() for o in self._overflowing])
        out._sequences = self._sequences
        return out

    def _slice(self, start: int, end: int) -> "Encoding":
        if self._pending is not None:
            self._make()
        return Encoding(self.own_ids()[start:end], self._type_ids[start:end], self._tokens[start:end],
                        self._offsets[start:end], self._attention_mask[start:end],
                        self._special_tokens_mask[start:end], self._word_ids[start:end],
                        self._sequence_ids[start:end])

    def set_type_id(self, type_id: int, sequence_id: int) -> None:
        self._type_ids = [type_id] * len(self)
        self.set_sequence_id(sequence_id)

    def extend(self, other: "Encoding") -> None:
        for slot in _FIELDS:   # each own list grows in place (a word at a time: no copies)
            _stored(self, slot).extend(_stored(other, slot))
        if other._sequences:
            self._sequences = other._sequences | self._sequences if self._sequences else other._sequences

    def truncate(self, max_length: int, stride: int = 0, direction: str = "right") -> None:
        """Keep max_length tokens; the rest goes to `overflowing` in windows that overlap by
        `stride` tokens, as HF's Encoding::truncate."""
        if direction not in ("right", "left"):
            raise ValueError(f"Invalid truncation direction value : {direction}")
        n = len(self)
        if max_length >= n:
            return
        if max_length == 0:
            whole = self.copy()
            whole._overflowing = []
            self.__init__([], [], [], [], [], [], [], [], [whole])
            return
        if stride >= max_length:
            raise ValueError(f"stride ({stride}) must be smaller than max_length ({max_length})")
        step = max_length - stride
        if direction == "right":
            starts = list(range(0, n, step))
            parts = []
            for s in starts:
                parts.append(self._slice(s, min(s + max_length, n)))
                if s + max_length >= n:
                    break
        elif direction == "left":
            parts = []
            e = n
            while True:
                parts.append(self._slice(max(e - max_length, 0), e))
                if e - max_length <= 0:
                    break
                e -= step
        else:
            raise ValueError(f"truncation direction must be 'right' or 'left', got {direction!r}")
        for part in parts:   # HF drops the sequence ranges: every position (specials, pads) is sequence 0
            part._sequence_ids = [0] * len(part._sequence_ids)
        first = parts[0]
        self.__init__(first.own_ids(), first._type_ids, first._tokens, first._offsets, first._attention_mask,
                      first._special_tokens_mask, first._word_ids, first._sequence_ids, parts[1:])

    def pad(self, length: int, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0,
            pad_token: str = "[PAD]") -> None:
        """HF's Encoding.pad (same argument order); overflowing parts are padded too."""
        if direction not in ("right", "left"):
            raise ValueError(f"Invalid padding direction value : {direction}")
        if self._pending is not None:
            self._make()   # before ids grow: a short call's pending fields are as long as its ids
        for o in self._overflowing:
            o.pad(length, direction, pad_id, pad_type_id, pad_token)
        k = length - len(self)
        if k <= 0:
            return
        # with no sequence recorded, HF counts every position as sequence 0, pads too
        fill = (([pad_id] * k, [pad_type_id] * k, [pad_token] * k, [(0, 0)] * k, [0] * k, [1] * k,
                 [None] * k, [None if self._sequences else 0] * k))
        for slot, pad in zip(_FIELDS, fill):
            cur = _stored(self, slot)
            setattr(self, slot, cur + pad if direction == "right" else pad + cur)


def lazy_encoding(ids: list, source: tuple, sequences) -> Encoding:
    """An Encoding with ids now and every other field when first read.  source is
    (tokenizer, text, add_special_tokens, shape, n, total, options): n ids before padding,
    total after; options None (no truncation, no padding) or (truncation, padding, batch
    length, whether the text was cut).  The shaped fields (single_sequence_shape) come from
    the shape, padded to total; the rest from `tokenizer.encoding_of(text,
    add_special_tokens, options[:3])`.  A tuple, not a closure: the short-call path and
    transformers' batches make one per text, where each object counts.  sequences: the
    shape's input sequences.  A module function, not only `Encoding.lazy`: the short call
    makes one per call, and a global is found without the class's attribute lookup."""
    enc = new_object(Encoding)
    enc._ids = ids
    enc._pending = source
    enc._sequences = sequences
    return enc


# the fields fastbpe._short_call.lazy_objects fills to make lazy Encodings (as lazy_encoding)
LAZY_FIELDS = ("_ids", "_pending", "_sequences")
# and ShortCall: its source is one tuple for every call, (tokenizer, None, ...): the text in _text
SHORT_FIELDS = (*LAZY_FIELDS, "_text")


class ShortSource:
    """What the lazy Encodings of `Tokenizer.encode`'s short calls make their other fields
    from (the first item of their source): the tokenizer, until it changes.  A tokenizer
    that is about to change (added tokens, stages, encode_special_tokens) calls `freeze`,
    and while any such Encoding is alive its fields must still come from the tokenizer as it
    was: then this object keeps a copy of it made before the change (a batch's Encodings are
    made instead, see ids_path._LazyBatch: a short call cannot afford to register each one).
    The tokenizer makes a new ShortSource with its next plan.  The tokenizer is held by a
    weak reference (an Encoding is not tracked by the cycle collector, so a strong one made
    `tok.last = tok.encode(s)` a cycle nobody frees): a tokenizer going away freezes this
    source first, as a change does (Tokenizer.__del__)."""
    __slots__ = ("_tokenizer", "_frozen")

    def __init__(self, tokenizer):
        self._tokenizer, self._frozen = weakref.ref(tokenizer), None

    @property
    def tokenizer(self):
        """The tokenizer the Encodings' fields come from: the copy kept by `freeze`, else the live one."""
        frozen = self._frozen
        return frozen if frozen is not None else self._tokenizer()

    def encoding_of(self, text: str, add_special_tokens: bool, options: tuple | None) -> "Encoding":
        tokenizer = self.tokenizer
        if tokenizer is None:   # (only if its __del__ could not run: interpreter shutdown)
            raise RuntimeError("the tokenizer of this Encoding is gone: its other fields cannot be made")
        return tokenizer.encoding_of(text, add_special_tokens, options)

    def freeze(self, held: int, alive: bool = False, tokenizer=None) -> None:
        """Keep a copy of the tokenizer (`tokenizer`, else the live one) when some Encoding
        still refers to this source: when `alive` (the ShortCall's results_alive) or more
        than `held` references to it exist besides this call's own (the tokenizer's and its
        ShortCall's)."""
        if self._frozen is None and (alive or sys.getrefcount(self) - 2 > held):   # minus the argument and self
            tokenizer = tokenizer if tokenizer is not None else self._tokenizer()
            if tokenizer is None:
                return
            copy = type(tokenizer).from_str(tokenizer.to_str())
            copy.encode_special_tokens = tokenizer.encode_special_tokens
            self._frozen = copy


def without_offsets(enc: Encoding) -> Encoding:
    """A sequence's Encoding as HF's encode_batch_fast makes it (tokens "", offsets (0, 0), no
    word ids; its fields never made)."""
    n = len(enc.ids)
    return Encoding(enc.ids, enc.type_ids, [""] * n, [(0, 0)] * n, enc.attention_mask, enc.special_tokens_mask,
                    [None] * n, enc.sequence_ids)
