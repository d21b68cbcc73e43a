"""fastbpe.hf against `tokenizers` on tokenizer.json files the tests build with `tokenizers`
(no download): every normalizer, pre-tokenizer, post-processor and decoder fastbpe supports,
BPE options, added-token flags, truncation and padding.  Parity is exact on every field."""
from __future__ import annotations

import json

import pytest

from hf_reference import SAMPLES, assert_same, build

from tokenizers import AddedToken, Regex  # noqa: E402
from tokenizers import decoders as D  # noqa: E402
from tokenizers import normalizers as N  # noqa: E402
from tokenizers import pre_tokenizers as P  # noqa: E402
from tokenizers import processors as PP  # noqa: E402

from fastbpe.hf import Tokenizer  # noqa: E402
from fastbpe.patterns import LLAMA3_PATTERN  # noqa: E402

BYTE_FALLBACK = dict(byte_fallback=True, unk_token="<unk>")
LLAMA2_DECODER = D.Sequence([D.Replace("▁", " "), D.ByteFallback(), D.Fuse(), D.Strip(" ", 1, 0)])


def test_byte_level():
    assert_same(build(pre_tokenizer=P.ByteLevel(add_prefix_space=False), decoder=D.ByteLevel(), byte_level_alphabet=True))


def test_byte_level_prefix_space_and_trimmed_offsets():
    assert_same(build(pre_tokenizer=P.ByteLevel(add_prefix_space=True), decoder=D.ByteLevel(),
                      post_processor=PP.ByteLevel(trim_offsets=True), byte_level_alphabet=True), pair=False)


def test_byte_level_without_regex_after_split():
    split = P.Split(Regex(r"\p{L}+|\p{N}{1,3}|\s+|[^\s\p{L}\p{N}]+"), "isolated")
    assert_same(build(pre_tokenizer=P.Sequence([split, P.ByteLevel(add_prefix_space=False, use_regex=False)]),
                      decoder=D.ByteLevel(), byte_level_alphabet=True))


def test_byte_level_pre_tokenizer_with_a_partial_alphabet():
    # not all 256 bytes are tokens, no unk token: bytes without a token are skipped, as HF
    # skips characters its vocabulary lacks, on the byte-level kernel
    ours = assert_same(build(pre_tokenizer=P.ByteLevel(add_prefix_space=False), decoder=D.ByteLevel()))
    assert ours.model.byte_level and ours.engine == "kernel"
    # with an unk token the missing bytes become unk: the model runs char-level
    ours = assert_same(build(model_kwargs=dict(unk_token="<unk>"), pre_tokenizer=P.ByteLevel(), decoder=D.ByteLevel()))
    assert not ours.model.byte_level


def test_byte_fallback_metaspace_llama2_style():
    assert_same(build(model_kwargs=BYTE_FALLBACK, pre_tokenizer=P.Metaspace(), decoder=LLAMA2_DECODER))


def test_unk_token_fused():
    assert_same(build(model_kwargs=dict(unk_token="<unk>", fuse_unk=True), pre_tokenizer=P.Whitespace(), vocab_size=200))


def test_unk_token_not_fused():
    assert_same(build(model_kwargs=dict(unk_token="<unk>"), pre_tokenizer=P.Whitespace(), vocab_size=200))


def test_no_unk_token_drops_unknown_characters():
    assert_same(build(pre_tokenizer=P.Whitespace(), vocab_size=200, special_tokens=()))


@pytest.mark.parametrize("delimiter", [" ", "e"])
def test_char_delimiter_split(delimiter):
    assert_same(build(pre_tokenizer=P.CharDelimiterSplit(delimiter), model_kwargs=dict(unk_token="<unk>")))
    assert_same(build(pre_tokenizer=P.Sequence([P.CharDelimiterSplit(delimiter), P.ByteLevel(add_prefix_space=False)]),
                      byte_level_alphabet=True, decoder=D.ByteLevel()))


@pytest.mark.parametrize("prefix_space", [False, True])
def test_metaspace_after_bytelevel(prefix_space):
    """Metaspace's "▁" is outside the byte-level alphabet: the model reads such pieces as
    characters (HF's BPE), it does not drop them."""
    assert_same(build(pre_tokenizer=P.Sequence([P.ByteLevel(add_prefix_space=prefix_space, use_regex=False),
                                                P.Metaspace(prepend_scheme="always", split=False)]),
                      byte_level_alphabet=True, decoder=D.ByteLevel()))


def test_char_delimiter_split_needs_one_character():
    for node in ({"type": "CharDelimiterSplit"}, {"type": "CharDelimiterSplit", "delimiter": "ab"}):
        with pytest.raises(ValueError, match="CharDelimiterSplit"):
            Tokenizer.from_str(json.dumps({"model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": node}))


def test_subword_prefix_and_word_suffix():
    assert_same(build(model_kwargs=dict(unk_token="<unk>", continuing_subword_prefix="##", end_of_word_suffix="</w>"),
                      pre_tokenizer=P.WhitespaceSplit(), decoder=D.BPEDecoder("</w>")))


def test_ignore_merges_on_a_char_level_model():
    ref = build(model_kwargs=BYTE_FALLBACK, pre_tokenizer=P.Metaspace())
    spec = json.loads(ref.to_str())
    spec["model"]["ignore_merges"] = True
    from tokenizers import Tokenizer as HFTokenizer

    assert_same(HFTokenizer.from_str(json.dumps(spec)))


@pytest.mark.parametrize("normalizer", [
    N.NFC(), N.NFD(), N.NFKC(), N.NFKD(), N.Lowercase(), N.Strip(), N.Strip(left=True, right=False),
    N.Replace(" ", "▁"), N.Replace(Regex(r"\d+"), "#"), N.Prepend("▁"),
    N.Sequence([N.NFKC(), N.Lowercase(), N.Replace(" ", "▁"), N.Prepend("▁")]),
], ids=lambda n: json.loads(n.__getstate__())["type"] if hasattr(n, "__getstate__") else str(n))
def test_normalizers(normalizer):
    assert_same(build(model_kwargs=dict(unk_token="<unk>"), normalizer=normalizer,
                      pre_tokenizer=P.ByteLevel(), decoder=D.ByteLevel(), byte_level_alphabet=True))


@pytest.mark.parametrize("behavior", ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"])
@pytest.mark.parametrize("invert", [False, True])
def test_split_behaviors(behavior, invert):
    assert_same(build(model_kwargs=BYTE_FALLBACK, pre_tokenizer=P.Split(Regex(r"\s+|\d"), behavior, invert=invert)))


@pytest.mark.parametrize("behavior", ["removed", "isolated", "merged_with_next"])
def test_split_on_a_string(behavior):
    assert_same(build(model_kwargs=BYTE_FALLBACK, pre_tokenizer=P.Split(" ", behavior)))


@pytest.mark.parametrize("individual", [True, False])
def test_digits(individual):
    assert_same(build(model_kwargs=BYTE_FALLBACK, pre_tokenizer=P.Sequence([P.WhitespaceSplit(), P.Digits(individual)])))


@pytest.mark.parametrize("scheme", ["always", "first", "never"])
@pytest.mark.parametrize("split", [True, False])
def test_metaspace(scheme, split):
    assert_same(build(model_kwargs=BYTE_FALLBACK, pre_tokenizer=P.Metaspace(prepend_scheme=scheme, split=split),
                      decoder=D.Metaspace(prepend_scheme=scheme, split=split)))


TEMPLATE = PP.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                                 special_tokens=[("<s>", 1), ("</s>", 2)])


@pytest.mark.parametrize("pair", [False, True])
@pytest.mark.parametrize("processor", [
    TEMPLATE, PP.RobertaProcessing(("</s>", 2), ("<s>", 1)), PP.BertProcessing(("</s>", 2), ("<s>", 1)),
    PP.ByteLevel(trim_offsets=True), PP.Sequence([PP.ByteLevel(trim_offsets=True), TEMPLATE]), None,
], ids=["template", "roberta", "bert", "bytelevel", "sequence", "none"])
def test_post_processors(processor, pair):
    assert_same(build(pre_tokenizer=P.ByteLevel(), post_processor=processor, decoder=D.ByteLevel(),
                      byte_level_alphabet=True), pair=pair)


@pytest.mark.parametrize("decoder", [
    D.Sequence([D.Replace("▁", " "), D.ByteFallback(), D.Fuse(), D.Strip(" ", 2, 0)]),
    D.Sequence([D.ByteFallback(), D.Metaspace()]),
    D.Fuse(),
    D.ByteFallback(),
    None,
], ids=["llama2", "metaspace", "fuse", "bytefallback", "none"])
def test_decoders(decoder):
    assert_same(build(model_kwargs=BYTE_FALLBACK, pre_tokenizer=P.Metaspace(), decoder=decoder))


ADDED_SAMPLES = SAMPLES + ["hello world HELLO ok ok<X>  <X>  x", "helloworld hello_ 日本語 ok.ok", " ok ", "<x><X>"]


@pytest.mark.parametrize("flags", [
    {}, {"lstrip": True}, {"rstrip": True}, {"single_word": True}, {"normalized": True}, {"normalized": False},
    {"lstrip": True, "rstrip": True, "single_word": True},
], ids=lambda f: "-".join(f) or "plain")
@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("kind", ["char", "byte"])
def test_added_token_flags(flags, special, kind):
    if kind == "char":
        ref = build(model_kwargs=BYTE_FALLBACK, normalizer=N.Lowercase(), pre_tokenizer=P.Metaspace(),
                    decoder=D.Sequence([D.Replace("▁", " "), D.ByteFallback(), D.Fuse()]))
    else:
        ref = build(pre_tokenizer=P.ByteLevel(add_prefix_space=False), decoder=D.ByteLevel(), byte_level_alphabet=True)
    tokens = [AddedToken(t, **flags) for t in ("hello", "ok", "<X>", "日本")]
    (ref.add_special_tokens if special else ref.add_tokens)(tokens)
    ours = assert_same(ref, ADDED_SAMPLES)
    assert ours.get_vocab() == ref.get_vocab()
    assert ours.get_vocab_size() == ref.get_vocab_size()
    assert ours.get_vocab_size(with_added_tokens=False) == ref.get_vocab_size(with_added_tokens=False)
    for t in ("hello", "<X>", "<x>", "missing"):
        assert ours.token_to_id(t) == ref.token_to_id(t)
    for i in range(ref.get_vocab_size() + 2):
        assert ours.id_to_token(i) == ref.id_to_token(i)


def test_add_tokens_at_run_time_like_hf():
    ref = build(pre_tokenizer=P.ByteLevel(add_prefix_space=False), decoder=D.ByteLevel(), byte_level_alphabet=True)
    ours = Tokenizer.from_str(ref.to_str())
    for method in ("add_tokens", "add_special_tokens"):
        batch = ["<new>", "the", AddedToken("[X]", lstrip=True), "<new>", ""]
        assert getattr(ours, method)(batch) == getattr(ref, method)(batch)
    assert_same(ref, ADDED_SAMPLES + ["a <new> b [X] the", "<new><new>"], ours=ours)


TRUNCATIONS = [dict(max_length=10), dict(max_length=10, stride=3), dict(max_length=10, direction="left"),
               dict(max_length=12, strategy="only_first"), dict(max_length=12, strategy="only_second", stride=2),
               dict(max_length=3)]
PADDINGS = [None, dict(), dict(length=16, pad_id=7, pad_token="<pad>"), dict(pad_to_multiple_of=8, direction="left")]


def _fast_path_pre_tokenizer(scanner: bool):
    """ByteLevel files whose ids take the fast path: through the regex split, or (a pattern the
    C scanner knows) through the batch kernel."""
    if scanner:
        return P.Sequence([P.Split(Regex(LLAMA3_PATTERN), "isolated"), P.ByteLevel(add_prefix_space=False, use_regex=False)])
    return P.ByteLevel(add_prefix_space=False)


@pytest.mark.parametrize("truncation", TRUNCATIONS, ids=lambda t: "-".join(f"{k}={v}" for k, v in t.items()))
@pytest.mark.parametrize("padding", PADDINGS, ids=lambda p: "none" if p is None else "-".join(p) or "longest")
@pytest.mark.parametrize("scanner", [False, True], ids=["regex", "scanner"])
def test_truncation_and_padding(truncation, padding, scanner):
    ref = build(pre_tokenizer=_fast_path_pre_tokenizer(scanner), post_processor=TEMPLATE, decoder=D.ByteLevel(),
                byte_level_alphabet=True)
    ref.enable_truncation(**truncation)
    if padding is not None:
        ref.enable_padding(**padding)
    ours = Tokenizer.from_str(ref.to_str())
    assert ours.truncation == ref.truncation and ours.padding == ref.padding
    texts = ["word " * 40, "Hello world " * 7, "short"]
    for pair in (False, True):
        for add in (True, False):
            for text in texts:
                second = text[:20] if pair else None
                try:
                    want = ref.encode(text, second, add_special_tokens=add)
                except BaseException:  # tokenizers raises (or panics) when truncation is impossible
                    with pytest.raises(ValueError):
                        ours.encode(text, second, add_special_tokens=add)
                    continue
                got = ours.encode(text, second, add_special_tokens=add)
                for field in ("ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask"):
                    assert getattr(got, field) == getattr(want, field)
                assert [o.ids for o in got.overflowing] == [o.ids for o in want.overflowing]
                if not pair:
                    assert ours.encode_ids(text, add) == want.ids
            batch = [(t, t[:20]) if pair else t for t in texts]
            try:
                want_batch = ref.encode_batch(batch, add_special_tokens=add)
            except BaseException:
                continue
            assert [e.ids for e in ours.encode_batch(batch, add_special_tokens=add)] == [e.ids for e in want_batch]
            if not pair:
                for threads in (1, 2):
                    assert ours.encode_ids_batch(batch, add, threads) == [e.ids for e in want_batch]


def test_truncation_and_padding_switch_off():
    ref = build(pre_tokenizer=P.ByteLevel(), decoder=D.ByteLevel(), byte_level_alphabet=True)
    ours = Tokenizer.from_str(ref.to_str())
    ours.enable_truncation(4)
    ours.enable_padding(length=6, pad_id=3)
    assert ours.encode_ids("Hello world, hello world") == ours.encode("Hello world, hello world").ids
    assert len(ours.encode_ids("Hello world, hello world")) == 6
    ours.no_truncation()
    ours.no_padding()
    assert ours.truncation is None and ours.padding is None
    assert ours.encode_ids("Hello world, hello world") == ref.encode("Hello world, hello world").ids


@pytest.mark.parametrize("kind", ["char", "byte"])
def test_dropout(kind):
    if kind == "char":
        ref = build(model_kwargs=BYTE_FALLBACK, pre_tokenizer=P.Metaspace(), decoder=LLAMA2_DECODER)
    else:
        ref = build(pre_tokenizer=P.ByteLevel(), decoder=D.ByteLevel(), byte_level_alphabet=True)
    spec = json.loads(ref.to_str())
    # dropout 1: every merge is skipped, in HF too (deterministic, so comparable)
    spec["model"]["dropout"] = 1.0
    from tokenizers import Tokenizer as HFTokenizer

    assert_same(HFTokenizer.from_str(json.dumps(spec)))
    spec["model"]["dropout"] = 0.3
    ours = Tokenizer.from_str(json.dumps(spec))
    ours.set_dropout_seed(5)
    first = [ours.encode_ids(s) for s in SAMPLES]
    ours.set_dropout_seed(5)
    assert [ours.encode_ids(s) for s in SAMPLES] == first
    seen = {tuple(ours.encode_ids("Hello world hello")) for _ in range(40)}
    assert len(seen) > 1  # the merges really are dropped at random
    plain = Tokenizer.from_str(ref.to_str())
    for ids in seen:  # every dropout result is a valid tokenization of the same text
        assert ours.decode(list(ids)) == plain.decode(plain.encode_ids("Hello world hello"))
