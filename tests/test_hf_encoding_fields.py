"""An Encoding's list fields, read and changed by the caller, against HF tokenizers: each read is a
new list (HF's getters copy), so `ids = enc.ids; ids.append(eos)` (a common way to add an EOS by
hand) leaves the Encoding as it was, and so does changing tokens, offsets, masks, word ids or an
overflowing part.  Before, `ids` was the Encoding's own list: the append showed in `enc.ids`, and a
lazy Encoding (a short `encode` call's, a plain `encode_batch`'s) made its type ids and attention
mask from the longer list, one entry more than its offsets and tokens (review's finding)."""
from __future__ import annotations

import pytest

tokenizers = pytest.importorskip("tokenizers")
from fastbpe.hf import Tokenizer  # noqa: E402

FIELDS = ["ids", "type_ids", "tokens", "offsets", "attention_mask", "special_tokens_mask", "word_ids",
          "sequence_ids"]
TEXTS = ["hello world", "the lazy dog", "the quick brown fox jumps over the lazy dog, hello world"]


@pytest.fixture(scope="module")
def files():
    from tokenizers import decoders, models, pre_tokenizers, processors, trainers

    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    hf.train_from_iterator(["hello world, the quick brown fox jumps over the lazy dog"] * 50, trainer)
    plain = hf.to_str()
    hf.add_special_tokens(["<s>", "</s>"])
    hf.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                                                      special_tokens=[("<s>", hf.token_to_id("<s>")),
                                                                      ("</s>", hf.token_to_id("</s>"))])
    return {"plain": plain, "template": hf.to_str()}


def _pair(files, name, padding=False, truncation=False):
    ref, ours = tokenizers.Tokenizer.from_str(files[name]), Tokenizer.from_str(files[name])
    for tok in (ref, ours):
        if padding:
            tok.enable_padding(pad_id=0, pad_token="<pad>")
        if truncation:
            tok.enable_truncation(8, stride=1)
    return ref, ours


def _encodings(tok, how):
    if how == "encode":
        return [tok.encode(t) for t in TEXTS]
    if how == "pair":
        return [tok.encode(t, "hello world") for t in TEXTS]
    return tok.encode_batch(TEXTS)


def _fields(e):
    return {field: getattr(e, field) for field in FIELDS}


CASES = [("plain", "encode", {}), ("plain", "encode_batch", {}), ("plain", "pair", {}),
         ("template", "encode", {}), ("template", "encode_batch", {}),
         ("plain", "encode_batch", {"padding": True}), ("template", "encode_batch", {"padding": True}),
         ("template", "encode", {"truncation": True}), ("plain", "encode_batch", {"truncation": True})]


@pytest.mark.parametrize("name, how, options", CASES)
def test_appending_to_the_ids_read_first_leaves_the_encoding_as_hf(files, name, how, options):
    """The review's case: ids read (and changed) before any other field is made."""
    ref, ours = _pair(files, name, **options)
    for e, r in zip(_encodings(ours, how), _encodings(ref, how)):
        ids, rids = e.ids, r.ids
        ids.append(5)
        rids.append(5)
        assert _fields(e) == _fields(r)
        assert len({len(v) for v in _fields(e).values()}) == 1


@pytest.mark.parametrize("name, how, options", CASES)
@pytest.mark.parametrize("field", FIELDS)
def test_changing_any_field_read_leaves_the_encoding_as_hf(files, name, how, options, field):
    ref, ours = _pair(files, name, **options)
    for e, r in zip(_encodings(ours, how), _encodings(ref, how)):
        for enc in (e, r):
            value = getattr(enc, field)
            value.append(value[-1] if value else 0)
            value[0:1] = []
            assert getattr(enc, field) is not value   # a new list a read
        assert _fields(e) == _fields(r)


@pytest.mark.parametrize("how", ["encode", "pair", "encode_batch"])
def test_overflowing_parts_are_copies_as_hf(files, how):
    """HF's `overflowing` gives copies of the parts: padding one or dropping it leaves the
    Encoding's own parts as they were."""
    ref, ours = _pair(files, "template", truncation=True)
    cut = 0
    for e, r in zip(_encodings(ours, how), _encodings(ref, how)):
        assert len(e.overflowing) == len(r.overflowing)
        if not r.overflowing:
            continue
        cut += 1
        for enc in (e, r):
            parts = enc.overflowing
            parts[0].pad(20, pad_id=0, pad_token="<pad>")
            parts.pop()
        assert [_fields(o) for o in e.overflowing] == [_fields(o) for o in r.overflowing]
        e.pad(12, pad_id=0, pad_token="<pad>")   # the Encoding's own parts still pad with it
        r.pad(12, pad_id=0, pad_token="<pad>")
        assert [_fields(o) for o in e.overflowing] == [_fields(o) for o in r.overflowing]
        assert _fields(e) == _fields(r)
    assert cut
