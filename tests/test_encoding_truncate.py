"""Sequence ids after truncation, as tokenizers 0.23 (compared live).

HF's Encoding::truncate drops the encoding's sequence ranges: afterwards every position
(special tokens and pads included, in the kept part and in every overflowing part) reads as
sequence 0.  Its Roberta/Bert processors set sequence k on every part even without special
tokens, overflow pieces too, so those pieces' pads read None."""
import itertools

import pytest

tokenizers = pytest.importorskip("tokenizers")
import fastbpe  # noqa: E402
from tokenizers import decoders, models, pre_tokenizers, processors, trainers  # noqa: E402


def _hf():
    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.train_from_iterator(["ab cd ab cd abc", "hello world"] * 20,
                           trainers.BpeTrainer(vocab_size=300, special_tokens=["<s>", "</s>"],
                                               initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    hf.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B </s>",
                                                      special_tokens=[("<s>", 0), ("</s>", 1)])
    return hf


def _fields(e):
    return {"sequence_ids": e.sequence_ids, "token_to_sequence": [e.token_to_sequence(i) for i in range(len(e))],
            "overflowing": [o.sequence_ids for o in e.overflowing]}


@pytest.mark.parametrize("pad", [0, 12])
@pytest.mark.parametrize("add_special_tokens", [True, False])
@pytest.mark.parametrize("batch", [False, True])
def test_truncate_reads_every_position_as_sequence_0_as_hf(pad, add_special_tokens, batch):
    hf = _hf()
    fb = fastbpe.Tokenizer.from_str(hf.to_str())
    got, want = [], []
    for tok, out in ((hf, want), (fb, got)):
        text = "ab cd ab hello"
        e = tok.encode_batch([text], add_special_tokens=add_special_tokens)[0] if batch else \
            tok.encode(text, add_special_tokens=add_special_tokens)
        if pad:
            e.pad(pad)
        e.truncate(4, stride=1)
        out.append(_fields(e))
    assert got == want


def _processors():
    return {"roberta": processors.RobertaProcessing(("</s>", 1), ("<s>", 0)),
            "bert": processors.BertProcessing(("</s>", 1), ("<s>", 0)),
            "bytelevel": processors.ByteLevel(),
            "template": processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B </s>",
                                                      special_tokens=[("<s>", 0), ("</s>", 1)])}


@pytest.mark.parametrize("processor", ["roberta", "bert", "bytelevel", "template"])
def test_padded_overflow_sequence_ids_as_hf(processor):
    """Tokenizer truncation + padding (CLIP / RoBERTa-style files with add_special_tokens=False
    and return_overflowing_tokens): sequence ids, type ids, ids and token_to_sequence of the
    Encoding and of every overflowing part, single and pair, encode and encode_batch."""
    hf = _hf()
    hf.post_processor = _processors()[processor]
    fb = fastbpe.Tokenizer.from_str(hf.to_str())

    def f(e):
        return e.sequence_ids, e.type_ids, e.ids, [e.token_to_sequence(i) for i in range(len(e))]

    for special, pair, strategy, direction in itertools.product(
            [False, True], [False, True], ["longest_first", "only_first"], ["right", "left"]):
        got, want = [], []
        for tok, out in ((hf, want), (fb, got)):
            tok.enable_truncation(6 if pair else 3, stride=1, strategy=strategy)
            tok.enable_padding(direction=direction, length=12)
            args = ("ab cd ab hello world ab", "hello ab cd") if pair else ("ab cd ab hello world ab",)
            try:
                one = tok.encode(*args, add_special_tokens=special)
                batch = tok.encode_batch([args if pair else args[0]], add_special_tokens=special)[0]
            except BaseException:   # (HF panics where fastbpe raises ValueError: stride >= max_length)
                out.append("error")
                continue
            out.append([(f(x), [f(o) for o in x.overflowing]) for x in (one, batch)])
        assert got == want, (special, pair, strategy, direction)


def _every_field(e):
    return {"ids": e.ids, "type_ids": e.type_ids, "tokens": e.tokens, "offsets": e.offsets,
            "words": e.word_ids, "sequence_ids": e.sequence_ids, "attention_mask": e.attention_mask,
            "special_tokens_mask": e.special_tokens_mask,
            "overflowing": [(o.ids, o.type_ids, o.tokens, o.offsets, o.word_ids, o.sequence_ids, o.attention_mask,
                             o.special_tokens_mask) for o in e.overflowing]}


@pytest.mark.parametrize("pair", [False, True])
@pytest.mark.parametrize("add_special_tokens", [True, False])
@pytest.mark.parametrize("stride,side", [(0, "right"), (0, "left"), (1, "right")])
@pytest.mark.parametrize("batch", [False, True])
def test_truncate_to_zero_as_hf(pair, add_special_tokens, stride, side, batch):
    """truncate(0): nothing kept, the whole encoding in one overflowing part whose sequence ids
    are the encoding's own (a pair's second sequence reads 1 there), every field as HF's."""
    hf = _hf()
    fb = fastbpe.Tokenizer.from_str(hf.to_str())
    got, want = [], []
    args = ("ab cd ab hello", "cd abc") if pair else ("ab cd ab hello",)
    for tok, out in ((hf, want), (fb, got)):
        e = tok.encode_batch([args if pair else args[0]], add_special_tokens=add_special_tokens)[0] if batch else \
            tok.encode(*args, add_special_tokens=add_special_tokens)
        e.truncate(0, stride=stride, direction=side)
        out.append(_every_field(e))
    assert got == want
