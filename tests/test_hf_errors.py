"""tokenizer.json input fastbpe cannot honour gives a clear error naming what, never other ids."""
from __future__ import annotations

import json

import pytest

from hf_reference import build

from tokenizers import decoders as D  # noqa: E402
from tokenizers import normalizers as N  # noqa: E402
from tokenizers import pre_tokenizers as P  # noqa: E402

import fastbpe  # noqa: E402
from fastbpe.hf import Tokenizer, UnsupportedError  # noqa: E402


@pytest.fixture(scope="module")
def spec():
    return json.loads(build(pre_tokenizer=P.ByteLevel(), decoder=D.ByteLevel(), byte_level_alphabet=True).to_str())


def _with(spec, key, node):
    changed = json.loads(json.dumps(spec))
    changed[key] = node
    return json.dumps(changed)


@pytest.mark.parametrize("key, component, name", [
    ("normalizer", N.Nmt(), "Nmt"),
    ("pre_tokenizer", {"type": "Mystery"}, "Mystery"),   # (every HF pre-tokenizer is supported now)
    ("post_processor", {"type": "Mystery"}, "Mystery"),
    ("decoder", D.WordPiece(), "WordPiece"),
    ("decoder", D.CTC(), "CTC"),
])
def test_unsupported_components_are_named(spec, key, component, name):
    node = component if isinstance(component, dict) else json.loads(component.__getstate__())
    with pytest.raises(UnsupportedError, match=name):
        Tokenizer.from_str(_with(spec, key, node))


def test_unsupported_model(spec):
    changed = json.loads(json.dumps(spec))
    changed["model"] = {"type": "WordPiece", "vocab": {"a": 0}, "unk_token": "a"}
    with pytest.raises(UnsupportedError, match="WordPiece"):
        Tokenizer.from_str(json.dumps(changed))


def test_unsupported_is_a_value_error():
    assert issubclass(UnsupportedError, ValueError)


@pytest.mark.parametrize("text", ["", "{", "[]", '{"model": 3}', '{"model": {"type": "BPE", "vocab": [], "merges": []}}',
                                  '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "truncation": {"stride": 1}}',
                                  '{"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}}',
                                  '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a"]}}'])
def test_malformed_json(text):
    with pytest.raises(ValueError):
        Tokenizer.from_str(text)


def test_merge_with_unknown_token(spec):
    changed = json.loads(json.dumps(spec))
    changed["model"]["merges"] = changed["model"]["merges"][:5] + [["nope", "Ġ"]]
    with pytest.raises(ValueError, match="nope"):
        Tokenizer.from_str(json.dumps(changed))


def test_bad_unk_token(spec):
    changed = json.loads(json.dumps(spec))
    changed["model"]["unk_token"] = "<not there>"
    with pytest.raises(ValueError, match="unk_token"):
        Tokenizer.from_str(json.dumps(changed))


def test_missing_file(tmp_path):
    with pytest.raises(OSError):
        Tokenizer.from_file(tmp_path / "absent.json")


def test_bad_arguments(spec):
    tok = Tokenizer.from_str(json.dumps(spec))
    for call in (lambda: tok.encode(b"bytes"), lambda: tok.encode_ids(None), lambda: tok.encode_ids_batch("one str"),
                 lambda: tok.encode_batch("one str"), lambda: tok.decode(["a"]), lambda: tok.add_tokens("one")):
        with pytest.raises(TypeError):
            call()
    with pytest.raises(ValueError, match="not in the vocabulary"):
        tok.decode([10 ** 9])
    with pytest.raises(ValueError):
        tok.enable_truncation(-1)
    with pytest.raises(ValueError):
        tok.enable_truncation(10, strategy="middle")
    with pytest.raises(ValueError):
        tok.enable_padding(direction="up")


def test_to_encoding_needs_a_byte_level_file():
    char_level = build(model_kwargs=dict(byte_fallback=True, unk_token="<unk>"), pre_tokenizer=P.Metaspace())
    with pytest.raises(ValueError, match="byte-level"):
        Tokenizer.from_str(char_level.to_str()).to_encoding()


def test_lazy_export():
    assert fastbpe.Tokenizer is Tokenizer
    assert "Tokenizer" in dir(fastbpe)


@pytest.mark.parametrize("truncate", [False, True])
def test_lone_surrogates_raise_on_every_path(spec, truncate):
    tok = Tokenizer.from_str(json.dumps(spec))
    if truncate:  # truncation routes encode_ids through the full pipeline
        tok.enable_truncation(100)
    for call in (lambda: tok.encode("a\ud800b"), lambda: tok.encode_ids("a\ud800b"),
                 lambda: tok.encode_ids_batch(["ok", "a\ud800b"]), lambda: tok.encode_to_numpy("\udfff")):
        with pytest.raises(UnicodeEncodeError):
            call()


@pytest.mark.parametrize("key, node", [
    ("post_processor", {"type": "RobertaProcessing"}),
    ("post_processor", {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}}], "special_tokens": {}}),
    ("pre_tokenizer", {"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated"}),
    ("pre_tokenizer", {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Sideways"}),
    ("normalizer", {"type": "Replace", "pattern": 5, "content": "x"}),
    ("decoder", {"type": "Sequence", "decoders": [3]}),
])
def test_malformed_stages(spec, key, node):
    with pytest.raises(ValueError):
        Tokenizer.from_str(_with(spec, key, node))
