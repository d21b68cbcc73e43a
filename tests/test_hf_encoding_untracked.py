"""hf.Encoding is left to reference counting alone, as HF's Rust Encoding: the cyclic collector
neither counts nor walks one (encode_batch makes one a document).  That holds only while no
cycle can go through an Encoding: its public fields are read-only, as HF's, and lazy ones hold
their tokenizer weakly (_encoding_base.EncodingFields says why)."""
from __future__ import annotations

import gc
import weakref

import pytest

from test_hf_fast_path import ADDED, _ref

pytest.importorskip("tokenizers")

from fastbpe.hf import Tokenizer  # noqa: E402

FIELDS = ("ids", "type_ids", "tokens", "offsets", "attention_mask", "special_tokens_mask", "word_ids",
          "sequence_ids", "overflowing")


def test_short_call_results_in_cycles_are_freed():
    """A lazy Encoding (a short call's, a batch's) makes its other fields from its tokenizer on
    first read, but holds it weakly: Encodings are not tracked by the cycle collector, so a
    strong reference made one kept on its tokenizer (or on something the tokenizer holds) a
    cycle nobody frees.  The tokenizer going away (by its reference count, or by the collector
    when it is in a cycle of its own) makes or freezes its Encodings first: their fields are
    still its."""
    import gc
    import weakref

    ref, ours = _ref(normalizer=None, added=ADDED[:3])
    text = ours.to_str()
    want = ref.encode("hello world", add_special_tokens=False)

    class Box:
        pass

    def kept_on_its_tokenizer(in_cycle: bool):
        tok = Tokenizer.from_str(text)
        tok.last = tok.encode("hello world", add_special_tokens=False)   # the short call
        tok.batch = tok.encode_batch(["hello world", "x y"], add_special_tokens=False)   # a lazy batch
        assert tok._short and tok.last.ids == want.ids and tok.last.lazy_source is not None
        if in_cycle:
            box = Box()
            box.tok, tok.box = tok, box
        kept = tok.last, tok.batch[0]
        return weakref.ref(tok), kept

    for in_cycle in (False, True):
        ref_tok, kept = kept_on_its_tokenizer(in_cycle)
        gc.collect()
        assert ref_tok() is None, in_cycle
        assert kept[0].tokens == want.tokens and kept[0].offsets == want.offsets   # made from the tokenizer as it was
        assert kept[1].tokens == want.tokens and kept[1].offsets == want.offsets


def test_encodings_are_not_tracked():
    """Every Encoding (short call, batch, pipeline, padded, truncated, merged, copied, unpickled)
    is left to reference counting alone, as HF's: the collector neither counts nor walks them
    (encode_batch makes one a document).  Its type has no GC flag; a subclass is tracked again."""
    import copy
    import gc
    import pickle

    from fastbpe.hf.encoding import Encoding

    ref, ours = _ref(normalizer=None, added=ADDED[:3])
    assert not Encoding.__flags__ & (1 << 14)   # Py_TPFLAGS_HAVE_GC
    short = ours.encode("hello world")
    batch = ours.encode_batch(["hello world", "a <tool> b", "x"])
    pair = ours.encode("hello", "world")
    fast = ours.encode_batch_fast(["hello world"])
    every = [short, *batch, pair, *fast, copy.copy(short), pickle.loads(pickle.dumps(batch[0])),
             Encoding.merge([short, pair]), Encoding.empty()]
    padded = ours.encode("hello world")
    padded.pad(20)
    cut = ours.encode("hello world and more words here")
    cut.truncate(3)
    every += [padded, cut, *cut.overflowing]
    for enc in every:
        assert type(enc) is Encoding and not gc.is_tracked(enc), enc
    assert batch[1].tokens == ref.encode("a <tool> b").tokens and short.offsets == ref.encode("hello world").offsets

    class Sub(Encoding):
        pass

    assert gc.is_tracked(Sub([1], [0], ["a"], [(0, 1)], [1], [0], [0], [0]))


def test_public_fields_are_read_only_as_hfs():
    """HF 0.23: every field of an Encoding is read-only (AttributeError).  A writable field on
    an untracked Encoding let `enc.ids = [enc, x]` make a cycle the collector never frees."""
    ref, ours = _ref(normalizer=None, added=ADDED[:3])
    theirs = ref.encode("hello world")

    class Leak:
        pass

    for enc in (ours.encode("hello world"), ours.encode_batch(["hello world", "x"])[0],
                ours.encode_batch_fast(["hello world"])[0], ours.encode("hello", "world")):
        ids = enc.ids
        for field in FIELDS:
            with pytest.raises(AttributeError):
                setattr(theirs, field, getattr(theirs, field))
            x = Leak()
            freed = weakref.ref(x)
            with pytest.raises(AttributeError):
                setattr(enc, field, [enc, x])
            del x
            gc.collect()
            assert freed() is None, field
        assert enc.ids == ids
    assert ours.encode("hello world").ids == theirs.ids
