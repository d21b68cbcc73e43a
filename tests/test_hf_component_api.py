"""HF's component API on fastbpe's pipeline stages (what transformers and user code call on
`tok.backend_tokenizer.normalizer` and the rest): normalizers' `normalize_str`, pre-tokenizers'
`pre_tokenize_str`, the model's `tokenize` / `token_to_id` / `id_to_token`, decoders' `decode`,
post-processors' `num_special_tokens_to_add` / `process`.  Each stage type fastbpe supports is
built from the same tokenizer.json node in both libraries and compared with HF live, on
generated documents always and on the shared model folders when present."""
from __future__ import annotations

import inspect
import json

import pytest

from hf_reference import FIELDS, SAMPLES, build

import datasources as ds
from fastbpe.formats.bytelevel import BYTE_TO_CHAR
from fastbpe.hf import Tokenizer, decoders, normalizers, post_processors, pre_tokenizers

tokenizers = pytest.importorskip("tokenizers", reason="the tokenizers package is the reference (pip install '.[test]')")
from tokenizers import Tokenizer as HFTokenizer  # noqa: E402
from tokenizers import decoders as hd, pre_tokenizers as hp  # noqa: E402

TEXTS = SAMPLES + ["ab  cd\t\n12 345 ▁x", "Hello, World! ½ İ ﬁ"]
_VOCAB = {c: i for i, c in enumerate(sorted(set("".join(TEXTS)) | set("▁")))}


def _doc(**stages) -> str:
    doc = {"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
           "post_processor": None, "decoder": None,
           "model": {"type": "BPE", "vocab": _VOCAB, "merges": [], "unk_token": None}}
    doc.update(stages)
    return json.dumps(doc)


def _pair(**stages):
    spec = _doc(**stages)
    return HFTokenizer.from_str(spec), Tokenizer.from_str(spec)


NORMALIZERS = [
    {"type": "NFC"}, {"type": "NFD"}, {"type": "NFKC"}, {"type": "NFKD"}, {"type": "Lowercase"},
    {"type": "ByteLevel"}, {"type": "Strip", "strip_left": True, "strip_right": True},
    {"type": "Strip", "strip_left": False, "strip_right": True},
    {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
    {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": "-"},
    {"type": "Prepend", "prepend": "▁"},
    {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}, {"type": "Prepend", "prepend": "▁"}]},
]


@pytest.mark.parametrize("node", NORMALIZERS, ids=lambda n: n["type"] + str(len(json.dumps(n))))
def test_normalize_str_as_hf(node):
    ref, ours = _pair(normalizer=node)
    for text in TEXTS:
        assert ours.normalizer.normalize_str(text) == ref.normalizer.normalize_str(text), text


def _split(pattern, behavior, invert=False):
    return {"type": "Split", "pattern": pattern, "behavior": behavior, "invert": invert}


PRE_TOKENIZERS = [
    *[_split({"Regex": r"\s+|\p{N}"}, b, inv) for b in pre_tokenizers.BEHAVIORS for inv in (False, True)],
    _split({"String": " "}, "MergedWithNext"), _split({"Regex": r"\s*"}, "Isolated"),
    _split({"Regex": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"}, "Isolated"),
    *[{"type": "ByteLevel", "add_prefix_space": a, "trim_offsets": True, "use_regex": r} for a in (False, True) for r in (False, True)],
    {"type": "Digits", "individual_digits": True}, {"type": "Digits", "individual_digits": False},
    *[{"type": "Metaspace", "replacement": "▁", "prepend_scheme": s, "split": sp}
      for s in ("always", "first", "never") for sp in (True, False)],
    {"type": "Whitespace"}, {"type": "WhitespaceSplit"},
    *[{"type": "CharDelimiterSplit", "delimiter": d} for d in (" ", "x", "é")],
    {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Digits", "individual_digits": True},
                                           {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": False}]},
]


@pytest.mark.parametrize("node", PRE_TOKENIZERS, ids=lambda n: n["type"] + str(abs(hash(json.dumps(n))) % 1000))
def test_pre_tokenize_str_as_hf(node):
    ref, ours = _pair(pre_tokenizer=node)
    for text in TEXTS:
        assert ours.pre_tokenizer.pre_tokenize_str(text) == ref.pre_tokenizer.pre_tokenize_str(text), text


def _model_pairs():
    """(name, HF tokenizer, ours) for each kind of BPE model fastbpe runs."""
    byte_level = build(pre_tokenizer=hp.ByteLevel(add_prefix_space=False), byte_level_alphabet=True)
    yield "byte-level", byte_level
    yield "char-level unk", build(pre_tokenizer=hp.Whitespace(), model_kwargs={"unk_token": "<unk>"})
    yield "fuse_unk", build(pre_tokenizer=hp.Whitespace(), model_kwargs={"unk_token": "<unk>", "fuse_unk": True})
    yield "prefix+suffix", build(pre_tokenizer=hp.Whitespace(), model_kwargs={
        "unk_token": "<unk>", "continuing_subword_prefix": "##", "end_of_word_suffix": "</w>"})
    yield "ignore_merges", build(pre_tokenizer=hp.ByteLevel(add_prefix_space=False), byte_level_alphabet=True,
                                 model_kwargs={"ignore_merges": True})
    fallback = {"<0x%02X>" % b: b for b in range(256)}
    fallback.update({c: 256 + i for i, c in enumerate("abcdeHlo▁")})
    fallback["ab"] = len(fallback)
    spec = _doc(model={"type": "BPE", "vocab": fallback, "merges": [["a", "b"]], "byte_fallback": True,
                       "unk_token": None}, pre_tokenizer={"type": "Metaspace", "replacement": "▁",
                                                          "prepend_scheme": "always", "split": True})
    yield "byte_fallback", HFTokenizer.from_str(spec)


@pytest.mark.parametrize("name, ref", list(_model_pairs()), ids=lambda v: v if isinstance(v, str) else "")
def test_model_tokenize_and_vocabulary_as_hf(name, ref):
    ours = Tokenizer.from_str(ref.to_str())
    pieces = [p for text in TEXTS for p, _ in ref.pre_tokenizer.pre_tokenize_str(text)]
    for piece in pieces:
        want = [(t.id, t.value, t.offsets) for t in ref.model.tokenize(piece)]
        assert [t.as_tuple() for t in ours.model.tokenize(piece)] == want, piece
    vocab = ref.get_vocab(with_added_tokens=False)
    for token, i in list(vocab.items())[:3000]:
        assert ours.model.token_to_id(token) == ref.model.token_to_id(token) == i
        assert ours.model.id_to_token(i) == ref.model.id_to_token(i) == token
    for missing in ("not a token ✗", ""):
        assert ours.model.token_to_id(missing) == ref.model.token_to_id(missing)
    assert ours.model.id_to_token(10**6) is ref.model.id_to_token(10**6) is None


DECODERS = [
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    {"type": "ByteFallback"}, {"type": "Fuse"},
    {"type": "Strip", "content": "▁", "start": 1, "stop": 0},
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": True},
    {"type": "BPEDecoder", "suffix": "</w>"},
    {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                                      {"type": "ByteFallback"}, {"type": "Fuse"},
                                      {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
]
_TOKEN_LISTS = [["▁Hello", "▁wor", "ld</w>", "<0x41>", "<0xC3>", "<0xA9>", "x"], ["ĠhÃ©", "llo", "Ġ", "<0xZZ>"],
                [], ["▁"], ["a</w>", "b", "▁▁c"], [BYTE_TO_CHAR[b] for b in "½ ok".encode()]]


@pytest.mark.parametrize("node", DECODERS, ids=lambda n: n["type"] + str(len(json.dumps(n))))
def test_decode_as_hf(node):
    ref, ours = _pair(decoder=node)
    for tokens in _TOKEN_LISTS:
        assert ours.decoder.decode(tokens) == ref.decoder.decode(tokens), tokens


_SPECIALS = {"<s>": 0, "</s>": 1, "<unk>": 2}


def _post_processors():
    from tokenizers import processors as hpp

    template = hpp.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> </s> $B:1 </s>:1",
                                      special_tokens=[("<s>", 0), ("</s>", 1)])
    yield "template", template
    yield "bytelevel", hpp.ByteLevel(trim_offsets=True)
    yield "roberta", hpp.RobertaProcessing(("</s>", 1), ("<s>", 0), trim_offsets=True, add_prefix_space=True)
    yield "bert", hpp.BertProcessing(("</s>", 1), ("<s>", 0))
    yield "sequence", hpp.Sequence([hpp.ByteLevel(trim_offsets=True), hpp.TemplateProcessing(
        single="<s> $A", pair="<s> $A $B:1", special_tokens=[("<s>", 0)])])


@pytest.mark.parametrize("name, processor", list(_post_processors()), ids=lambda v: v if isinstance(v, str) else "")
def test_post_processor_as_hf(name, processor):
    ref = build(pre_tokenizer=hp.ByteLevel(add_prefix_space=True), byte_level_alphabet=True,
                special_tokens=tuple(_SPECIALS))
    ref.post_processor = processor
    ours = Tokenizer.from_str(ref.to_str())
    for is_pair in (False, True):
        assert ours.post_processor.num_special_tokens_to_add(is_pair) == ref.post_processor.num_special_tokens_to_add(is_pair)
    for text in TEXTS[:8]:
        second = text[::-1] + " end"
        for add in (True, False):
            for pair in (False, True):
                a, b = ours.encode(text, add_special_tokens=False), ours.encode(second, add_special_tokens=False)
                before = [list(a.ids), list(a.offsets)]
                got = ours.post_processor.process(a, b if pair else None, add)
                want = ref.post_processor.process(ref.encode(text, add_special_tokens=False),
                                                  ref.encode(second, add_special_tokens=False) if pair else None, add)
                # (not sequence_ids: HF's process loses sequence 0's there, unlike its encode;
                # ours are encode's)
                for field in FIELDS:
                    assert getattr(got, field) == getattr(want, field), (field, text, add, pair)
                assert [a.ids, a.offsets] == before   # the arguments are left as they are


@pytest.mark.parametrize("module, method", [(normalizers, "normalize_str"), (pre_tokenizers, "pre_tokenize_str"),
                                            (decoders, "decode"), (post_processors, "process")])
def test_every_stage_class_has_the_component_api(module, method):
    """A stage type added later gets the component method too (the class has the stage's own
    method: normalize, pre_tokenize, decode_chain, process_encodings)."""
    own = {"normalize_str": "normalize", "pre_tokenize_str": "pre_tokenize", "decode": "decode_chain",
           "process": "process_encodings"}[method]
    stages = [c for _, c in inspect.getmembers(module, inspect.isclass)
              if c.__module__ == module.__name__ and hasattr(c, own)]
    assert stages and all(hasattr(c, method) for c in stages), [c for c in stages if not hasattr(c, method)]


_FOLDERS = sorted(p.parent.name for p in (ds.VOCAB_DIR / "hf").glob("*/tokenizer.json")) if (ds.VOCAB_DIR / "hf").is_dir() else []


@pytest.mark.skipif(not _FOLDERS, reason=f"no tokenizer.json folders in {ds.VOCAB_DIR / 'hf'} (../shared)")
@pytest.mark.parametrize("folder", _FOLDERS or ["none"])
def test_component_api_on_shared_files(folder):
    path = ds.VOCAB_DIR / "hf" / folder / "tokenizer.json"
    ref = HFTokenizer.from_file(str(path))
    try:
        ours = Tokenizer.from_file(path)
    except ValueError as e:   # a stage fastbpe does not run (it says which)
        pytest.skip(f"{folder}: {e}")
    texts = TEXTS[:8]
    if ref.normalizer is not None:
        for text in texts:
            assert ours.normalizer.normalize_str(text) == ref.normalizer.normalize_str(text), (folder, text)
    pieces = []
    if ref.pre_tokenizer is not None:
        for text in texts:
            want = ref.pre_tokenizer.pre_tokenize_str(text)
            assert ours.pre_tokenizer.pre_tokenize_str(text) == want, (folder, text)
            pieces += [p for p, _ in want]
    for piece in pieces:
        assert [t.as_tuple() for t in ours.model.tokenize(piece)] == \
            [(t.id, t.value, t.offsets) for t in ref.model.tokenize(piece)], (folder, piece)
    for i in range(0, ref.get_vocab_size(with_added_tokens=False), 997):
        token = ref.model.id_to_token(i)
        assert ours.model.id_to_token(i) == token and ours.model.token_to_id(token) == ref.model.token_to_id(token)
    if ref.decoder is not None:
        for text in texts:
            tokens = ref.encode(text).tokens
            assert ours.decoder.decode(tokens) == ref.decoder.decode(tokens), (folder, text)
    if ref.post_processor is not None:
        for is_pair in (False, True):
            assert ours.post_processor.num_special_tokens_to_add(is_pair) == \
                ref.post_processor.num_special_tokens_to_add(is_pair)
        for text in texts:
            got = ours.post_processor.process(ours.encode(text, add_special_tokens=False))
            want = ref.post_processor.process(ref.encode(text, add_special_tokens=False))
            assert (got.ids, got.offsets, got.type_ids) == (want.ids, want.offsets, want.type_ids), (folder, text)


def test_transformers_backend_components(tmp_path):
    """What transformers' own backend tests ask of a patched tokenizer (issue 29 item 9: two of
    them failed on Qwen2.5): train_new_from_iterator, then the decoded text compared with the
    backend normalizer's normalize_str; the backend's stages answer as HF's."""
    pytest.importorskip("transformers", reason="transformers is the caller here")
    import fastbpe
    from tokenizers import normalizers as hn
    from transformers import AutoTokenizer

    ref = build(normalizer=hn.NFC(), pre_tokenizer=hp.ByteLevel(add_prefix_space=False), byte_level_alphabet=True,
                decoder=hd.ByteLevel())
    ref.save(str(tmp_path / "tokenizer.json"))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "</s>", "bos_token": "<s>"}))
    stock = AutoTokenizer.from_pretrained(str(tmp_path))
    fastbpe.patch_transformers()
    try:
        tok = AutoTokenizer.from_pretrained(str(tmp_path))
        backend = tok.backend_tokenizer
        assert isinstance(backend, fastbpe.Tokenizer)
        new = tok.train_new_from_iterator([["This is the first sentence.", "This is the second one."]], 100)
        ids = new(["This is the first sentence", "different 🤗."])["input_ids"]
        expected = backend.normalizer.normalize_str("This is the first sentence")
        assert new.decode(ids[0], skip_special_tokens=True) == expected
    finally:
        fastbpe.unpatch_transformers()
    hf = stock.backend_tokenizer
    text = "Café e\u0301 ½ ok"
    assert backend.normalizer.normalize_str(text) == hf.normalizer.normalize_str(text)
    assert backend.pre_tokenizer.pre_tokenize_str(text) == hf.pre_tokenizer.pre_tokenize_str(text)
    assert [t.as_tuple() for t in backend.model.tokenize("ĠCafÃ©")] == \
        [(t.id, t.value, t.offsets) for t in hf.model.tokenize("ĠCafÃ©")]
    assert backend.decoder.decode(["ĠCaf", "Ã©"]) == hf.decoder.decode(["ĠCaf", "Ã©"])
