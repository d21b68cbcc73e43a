"""Export to Hugging Face tokenizer.json (`save_model(..., "tokenizer.json")`): the file loads in
`tokenizers` (and transformers) and encodes with fastbpe's ids, for trained models, the OpenAI
encodings and minbpe tokenizers."""
from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import datasources as ds
import fastbpe
from conftest import encoding_pair
from fastbpe import patterns as P
from fastbpe.formats import hf_json
from fastbpe.minbpe import BasicTokenizer, GPT4Tokenizer, RegexTokenizer
from fastbpe.pretokenize import scanner_kind
from fastbpe.trainer import load_model, save_model

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is the reference loader")

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# Texts we wrote: whitespace, digit and contraction storms, code, several scripts, specials.
STORMS = [
    "",
    " ",
    "Hello world! It's 2024; we'll see. I'M HERE, y'all've 'Re 'S",
    "  two  spaces   three   \n\n\n  \t\ttabs \r\n\r\n trailing   ",
    "1 12 123 1234 12345 123456 3.14159 1,000,000 0x7fff ١٢٣٤٥ ½² Ⅻ",
    "def f(x):\n    return [x**2 for x in range(10)]  # squares\n\n\nclass A: pass\n",
    "Grüße aus Köln — naïve café «quotes» “curly” ’s Ünïcödé",
    "日本語のテキストです。中文文本，汉字！한국어 텍스트 Привет, мир! Γειά σου κόσμε مرحبا بالعالم",
    "emoji 👍🏽👨‍👩‍👧 mixed😀text zero\u200bwidth nbsp\u00a0here ideographic\u3000space",
    "<|endoftext|>before<|im_start|>user\nhi<|im_end|> after <|endoftext|>",
    "'s's's 'll've 're're !!! ??? ... --- === *** ///\n\n//",
]


def training_text(seed: int = 0, n_words: int = 6000) -> str:
    """Deterministic text with words, numbers, punctuation and several scripts."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ren", "tha", "qu", "ös", "ñe", "中", "文", "ж", "ы", "λα", "the", "ing", " "]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(300)]
    out = []
    for i in range(n_words):
        out.append(rng.choice(words))
        if i % 17 == 0:
            out.append(str(rng.randint(0, 99999)))
        if i % 11 == 0:
            out.append(rng.choice([",", ".", "!", "'s", "\n", "  ", "\n\n", "(x)", "::"]))
    return " ".join(out)


def export(tmp_path, obj, name="tokenizer.json", **kw):
    path = tmp_path / name
    save_model(obj, path, **kw)
    return tokenizers.Tokenizer.from_file(str(path)), path


def assert_hf_matches(hf, encode, texts, label=""):
    for text in texts:
        got = hf.encode(text, add_special_tokens=False).ids
        want = encode(text)
        assert got == want, f"{label}: ids differ for {text[:120]!r}"
        assert hf.decode(got, skip_special_tokens=False) == text, f"{label}: decode differs for {text[:120]!r}"


# ------------------------------------------------------------------ trained models


@pytest.fixture(scope="module")
def trained():
    return fastbpe.train([training_text(1)], 256 + 400 + len(SPECIALS), special_tokens=SPECIALS)


def test_trained_encoding_exports(tmp_path, trained):
    hf, path = export(tmp_path, trained)
    texts = STORMS + [training_text(2, 2000)]
    assert_hf_matches(hf, lambda t: trained.encode(t, allowed_special="all"), texts, "trained")
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["model"]["ignore_merges"] is True
    assert [(t["content"], t["id"], t["special"]) for t in doc["added_tokens"]] == [
        (s, trained.encode_single_token(s), True) for s in SPECIALS]


def test_trained_model_exports_with_format_name(tmp_path, trained):
    """A BPEModel, any file name with format="huggingface"; encodes as its Encoding does."""
    model = trained.bpe_model
    hf, path = export(tmp_path, model, name="my-model.hf", format="huggingface")
    enc = model.to_encoding()
    assert_hf_matches(hf, lambda t: enc.encode(t, allowed_special="all"), STORMS, "BPEModel")


@pytest.mark.parametrize("pattern", ["gpt2", "o200k", "qwen2"])
def test_trained_with_other_patterns(tmp_path, pattern):
    enc = fastbpe.train([training_text(3)], 256 + 300, pattern=P.BY_NAME[pattern])
    hf, _ = export(tmp_path, enc)
    assert_hf_matches(hf, enc.encode_ordinary, STORMS[:-2] + [training_text(4, 1500)], pattern)


def test_native_json_stays_native(tmp_path, trained):
    save_model(trained, tmp_path / "model.json")
    doc = json.loads((tmp_path / "model.json").read_text(encoding="utf-8"))
    assert doc["format"] == "fastbpe-bpe"
    with pytest.raises(ValueError, match="Tokenizer.from_file"):
        load_model(tmp_path / "tokenizer.json")


# ------------------------------------------------------------------ minbpe tokenizers


@pytest.mark.parametrize("cls", [BasicTokenizer, RegexTokenizer])
def test_minbpe_exports(tmp_path, cls):
    tok = cls()
    tok.train(training_text(5, 3000), 256 + 200)
    specials = {}
    if cls is RegexTokenizer:
        specials = {s: 256 + 200 + i for i, s in enumerate(SPECIALS)}
        tok.register_special_tokens(specials)
    hf, path = export(tmp_path, tok)
    assert json.loads(path.read_text(encoding="utf-8"))["model"]["ignore_merges"] is False
    texts = STORMS if specials else [t for t in STORMS if "<|" not in t]
    encode = (lambda t: tok.encode(t, allowed_special="all")) if specials else tok.encode
    assert_hf_matches(hf, encode, texts + [training_text(6, 1000)], cls.__name__)


def test_minbpe_gpt4_exports(tmp_path):
    encoding_pair("cl100k_base")  # skips without the vocabulary
    tok = GPT4Tokenizer()
    hf, _ = export(tmp_path, tok)
    assert_hf_matches(hf, lambda t: tok.encode(t, allowed_special="all"),
                      [s.replace("<|im_start|>", "").replace("<|im_end|>", "") for s in STORMS], "GPT4Tokenizer")


def test_duplicate_token_bytes_is_valueerror(tmp_path):
    tok = RegexTokenizer()
    tok.merges = {(97, 98): 256, (256, 99): 257, (98, 99): 258, (97, 258): 259}  # "abc" twice
    tok.vocab = tok._build_vocab()
    with pytest.raises(ValueError, match="same bytes"):
        save_model(tok, tmp_path / "tokenizer.json")
    assert not (tmp_path / "tokenizer.json").exists()


def test_bad_objects(tmp_path):
    with pytest.raises(TypeError, match="cannot export"):
        save_model(object(), tmp_path / "tokenizer.json")
    with pytest.raises(ValueError, match="unknown format"):
        save_model(object(), tmp_path / "x.json", format="hf")
    assert list(tmp_path.iterdir()) == []


def test_unwritable_directory_is_oserror(tmp_path, trained):
    with pytest.raises(OSError):
        save_model(trained, tmp_path / "missing" / "tokenizer.json")


def test_oniguruma_pattern():
    """HF's Oniguruma reads X{1,3}+ as (X{1,3})+, not possessive: the export uses (?>X{1,3})."""
    assert hf_json.oniguruma_pattern(P.CL100K_PATTERN) == P.CL100K_HF_PATTERN
    assert scanner_kind(P.CL100K_HF_PATTERN, force_regex=False) == scanner_kind(P.CL100K_PATTERN, force_regex=False) >= 0
    assert hf_json.oniguruma_pattern(r"[a\]]{2}+\d{1,}+x{3}") == r"(?>[a\]]{2})(?>\d{1,})x{3}"
    for name in ["gpt2", "r50k", "o200k", "llama3", "qwen2", "gpt4"]:
        assert hf_json.oniguruma_pattern(P.BY_NAME[name]) == P.BY_NAME[name]


# ------------------------------------------------------------------ OpenAI encodings


def corpus_docs(max_bytes: int) -> list[str]:
    docs = []
    for name in ["multilingual", "code", "taylorswift"]:
        if ds.corpus_available(name):
            docs += ds.load_corpus(name, max_bytes).split("\n\n")
    return docs


@pytest.fixture(scope="module", params=["cl100k_base", "o200k_base", "r50k_base", "p50k_base"])
def exported_openai(request, tmp_path_factory):
    enc, _ = encoding_pair(request.param)
    hf, _ = export(tmp_path_factory.mktemp(request.param), enc)
    return enc, hf


def test_openai_encodings_export(exported_openai):
    """tiktoken's rank semantics through HF's merges: ignore_merges + the complete split table."""
    enc, hf = exported_openai
    texts = STORMS + corpus_docs(200_000)
    want = enc.encode_batch(texts, allowed_special="all")
    got = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    bad = [t for t, g, w in zip(texts, got, want) if g != w]
    assert not bad, f"{enc.name}: {len(bad)} of {len(texts)} texts differ, e.g. {bad[0][:200]!r}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cn"]), max_size=60))
def test_openai_encodings_export_fuzz(exported_openai, text):
    enc, hf = exported_openai
    # HF always matches added tokens in the text (add_special_tokens is only the template):
    # the same as tiktoken's allowed_special="all"
    assert hf.encode(text, add_special_tokens=False).ids == enc.encode(text, allowed_special="all")
    assert hf.encode(text + "<|endoftext|>", add_special_tokens=False).ids == \
        enc.encode(text + "<|endoftext|>", allowed_special="all")


# ------------------------------------------------------------------ transformers


def test_transformers_loads_export(tmp_path, trained):
    transformers = pytest.importorskip("transformers", reason="transformers is optional (pip install transformers)")
    _, path = export(tmp_path, trained)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    for text in STORMS:
        ids = fast(text, add_special_tokens=False)["input_ids"]
        assert ids == trained.encode(text, allowed_special="all")
        assert fast.decode(ids) == text


# ------------------------------------------------------------------ fastbpe's own loader


def test_fastbpe_tokenizer_loads_export(tmp_path, trained):
    """fastbpe.Tokenizer reads the exported files back with the same ids (trained, minbpe, cl100k)."""
    from fastbpe.hf import Tokenizer

    tok = RegexTokenizer()
    tok.train(training_text(7, 2000), 256 + 150)
    cases = [(trained, lambda t: trained.encode(t, allowed_special="all"), STORMS),
             (tok, tok.encode, [t for t in STORMS if "<|" not in t])]
    if ds.missing_reason("cl100k_base") is None:
        cl100k, _ = encoding_pair("cl100k_base")
        cases.append((cl100k, lambda t: cl100k.encode(t, allowed_special="all"), STORMS + corpus_docs(20_000)))
    for i, (obj, encode, texts) in enumerate(cases):
        path = tmp_path / str(i) / "tokenizer.json"
        path.parent.mkdir()
        save_model(obj, path)
        ours = Tokenizer.from_file(str(path))
        for text in texts:
            assert ours.encode_ids(text, add_special_tokens=False) == encode(text), (type(obj).__name__, text[:80])
