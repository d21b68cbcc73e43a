"""Malformed tokenizer.json values that HF tokenizers refuses are refused at load with a
ValueError naming the file and the JSON path (never read loosely into other ids), nesting
too deep is a ValueError (not a RecursionError), and post-processors run as HF runs them
(a Sequence of any processors; Roberta's overflow type ids)."""
from __future__ import annotations

import json

import pytest

from hf_reference import FIELDS, build

from tokenizers import Tokenizer as HFTokenizer  # noqa: E402
from tokenizers import decoders as D  # noqa: E402
from tokenizers import pre_tokenizers as P  # noqa: E402
from tokenizers import processors as PP  # noqa: E402

from fastbpe.hf import Tokenizer  # noqa: E402


@pytest.fixture(scope="module")
def spec():
    return json.loads(build(pre_tokenizer=P.ByteLevel(), decoder=D.ByteLevel(), byte_level_alphabet=True).to_str())


def _set(spec, path: list, value) -> str:
    changed = json.loads(json.dumps(spec))
    node = changed
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(changed)


_ADDED = {"id": 400, "content": "<x>", "single_word": False, "lstrip": False, "rstrip": False,
          "normalized": False, "special": True}
_ROBERTA = {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1], "trim_offsets": True,
            "add_prefix_space": False}
_TEMPLATE = json.loads(PP.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)]).__getstate__())

BAD = [
    # (where, value, the JSON path the error names)
    (["added_tokens"], [dict(_ADDED, lstrip="false")], "added_tokens[0].lstrip"),
    (["added_tokens"], [dict(_ADDED, special=1)], "added_tokens[0].special"),
    (["added_tokens"], [dict(_ADDED, id=-1)], "added_tokens[0].id"),
    (["added_tokens"], [dict(_ADDED, id=2**40)], "added_tokens[0].id"),
    (["added_tokens"], [dict(_ADDED, id="a")], "added_tokens[0].id"),
    (["added_tokens"], [dict(_ADDED, id=True)], "added_tokens[0].id"),
    (["post_processor"], dict(_ROBERTA, sep=["</s>", -1]), "post_processor.sep[1]"),
    (["post_processor"], dict(_ROBERTA, cls=["<s>", 10**20]), "post_processor.cls[1]"),
    (["post_processor"], dict(_ROBERTA, cls=["<s>", "a"]), "post_processor.cls[1]"),
    (["post_processor"], dict(_TEMPLATE, special_tokens={"<s>": {"id": "<s>", "ids": [2**40], "tokens": ["<s>"]}}),
     "post_processor.special_tokens['<s>'].ids[0]"),
    (["post_processor"], dict(_TEMPLATE, special_tokens={"<s>": {"id": "<s>", "ids": [-1], "tokens": ["<s>"]}}),
     "post_processor.special_tokens['<s>'].ids[0]"),
    (["pre_tokenizer", "add_prefix_space"], "false", "pre_tokenizer.add_prefix_space"),
    (["pre_tokenizer", "use_regex"], 0, "pre_tokenizer.use_regex"),
    (["normalizer"], {"type": "Strip", "strip_left": "false", "strip_right": True}, "normalizer.strip_left"),
    (["decoder"], {"type": "Strip", "content": " ", "start": -1, "stop": 0}, "decoder.start"),
    (["model", "vocab", "a"], -1, "model.vocab['a']"),
    (["model", "vocab", "a"], 2**40, "model.vocab['a']"),
    (["model", "vocab", "a"], 2**32, "model.vocab['a']"),   # one past u32 (checked in C, no Python compare)
    (["model", "vocab", "a"], 2**70, "model.vocab['a']"),   # past a C long long
    (["model", "vocab", "a"], True, "model.vocab['a']"),
    (["model", "vocab", "a"], 1.0, "model.vocab['a']"),
    (["model", "fuse_unk"], "false", "model.fuse_unk"),
    (["model", "byte_fallback"], 1, "model.byte_fallback"),
    (["truncation"], {"max_length": -1, "stride": 0, "strategy": "LongestFirst", "direction": "Right"},
     "truncation.max_length"),
    (["truncation"], {"max_length": 8, "stride": 0, "strategy": "Longest", "direction": "Right"},
     "truncation.strategy"),
    (["padding"], {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None, "pad_id": 10**20,
                   "pad_type_id": 0, "pad_token": "<pad>"}, "padding.pad_id"),
    (["padding"], {"strategy": {"Fixed": -3}, "direction": "Right", "pad_to_multiple_of": None, "pad_id": 0,
                   "pad_type_id": 0, "pad_token": "<pad>"}, "padding.strategy.Fixed"),
    (["version"], "2.0", "version"),
]


@pytest.mark.parametrize("where, value, path", BAD, ids=[b[2] + "=" + repr(b[1])[:20] for b in BAD])
def test_values_hf_refuses_are_refused_naming_file_and_path(spec, tmp_path, where, value, path):
    text = _set(spec, where, value)
    with pytest.raises(Exception):
        HFTokenizer.from_str(text)  # the oracle refuses it too
    with pytest.raises(ValueError) as info:
        Tokenizer.from_str(text)
    assert path in str(info.value)
    file = tmp_path / "tokenizer.json"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        Tokenizer.from_file(file)
    assert str(file) in str(info.value) and path in str(info.value)


def test_good_values_still_load(spec):
    text = _set(spec, ["added_tokens"], [_ADDED])
    assert Tokenizer.from_str(text).encode("a<x>").ids == HFTokenizer.from_str(text).encode("a<x>").ids


@pytest.mark.parametrize("depth", [200, 5000, 100_000])
def test_deep_nesting_is_a_value_error(spec, depth):
    texts = ['{"normalizer": ' + '{"type": "Sequence", "normalizers": [' * depth + "]}" * depth + "}",
             '{"decoder": ' + "[" * depth + "]" * depth + "}",
             '{"model": ' + "[" * depth + "]" * depth + "}"]
    for text in texts:
        with pytest.raises(ValueError, match="nested"):
            Tokenizer.from_str(text)
    with pytest.raises(ValueError, match="nested"):
        Tokenizer(json.loads(texts[0]) if depth < 1000 else {"normalizer": _nested_dict(depth)})


def _nested_dict(depth: int) -> dict:
    node = {"type": "Lowercase"}
    for _ in range(depth):
        node = {"type": "Sequence", "normalizers": [node]}
    return node


def test_nesting_within_the_limit_loads(spec):
    node = {"type": "Lowercase"}
    for _ in range(40):
        node = {"type": "Sequence", "normalizers": [node]}
    text = _set(spec, ["normalizer"], node)
    assert Tokenizer.from_str(text).encode("AbC").ids == HFTokenizer.from_str(text).encode("AbC").ids


def _flat(e) -> list:
    return [getattr(e, f) for f in FIELDS] + [_flat(o) for o in e.overflowing]


@pytest.mark.parametrize("processor", [
    PP.Sequence([PP.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                                       special_tokens=[("<s>", 1), ("</s>", 2)]), PP.ByteLevel()]),
    PP.Sequence([PP.ByteLevel(), PP.RobertaProcessing(("</s>", 2), ("<s>", 1))]),
    PP.RobertaProcessing(("</s>", 2), ("<s>", 1)),
    PP.BertProcessing(("</s>", 2), ("<s>", 1)),
], ids=["template-then-bytelevel", "bytelevel-then-roberta", "roberta", "bert"])
@pytest.mark.parametrize("truncation", [None, 6])
def test_post_processors_with_pairs_and_overflow_like_hf(processor, truncation):
    ref = build(pre_tokenizer=P.ByteLevel(), decoder=D.ByteLevel(), byte_level_alphabet=True)
    ref.post_processor = processor
    if truncation:
        ref.enable_truncation(truncation)
    ours = Tokenizer.from_str(ref.to_str())
    for add in (True, False):
        for pair in (None, "second  sentence here ok"):
            want = ref.encode(" hello world  it is", pair, add_special_tokens=add)
            got = ours.encode(" hello world  it is", pair, add_special_tokens=add)
            assert _flat(got) == _flat(want), (add, pair)


@pytest.mark.parametrize("max_length", [0, 1, 2, 3, 4])
def test_truncation_shorter_than_the_special_tokens_like_hf(max_length):
    """HF subtracts the post-processor's added tokens from max_length unsigned: when they are
    more than max_length it wraps around and nothing is cut; when equal, everything is."""
    ref = build(pre_tokenizer=P.ByteLevel(add_prefix_space=False), decoder=D.ByteLevel(), byte_level_alphabet=True,
                post_processor=PP.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                                                     special_tokens=[("<s>", 1), ("</s>", 2)]))
    ref.enable_truncation(max_length)
    ref.enable_padding(pad_id=3, pad_token="<pad>", pad_to_multiple_of=4)
    ours = Tokenizer.from_str(ref.to_str())
    for add in (True, False):
        for pair in (None, "and a second one"):
            want = ref.encode("hello world, it is", pair, add_special_tokens=add)
            assert _flat(ours.encode("hello world, it is", pair, add_special_tokens=add)) == _flat(want), (add, pair)
            if pair is None:
                assert ours.encode_ids("hello world, it is", add_special_tokens=add) == want.ids
