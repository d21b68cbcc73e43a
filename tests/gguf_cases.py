"""What the GGUF tests share: llama.cpp's vocab test files, the vocabularies trained here, the
HF tokenizers equivalent of a pre-tokenizer, and the kernel-vs-Python ids check (a plain module:
the test files import the fixtures by name)."""
from __future__ import annotations

import json

import pytest

from fastbpe import patterns
from fastbpe.gguf import GGUFTokenizer
from fastbpe.gguf.pretokenizers import PRE_TOKENIZERS, REGEXES, to_python

import datasources as ds
import gguf_files as gf


def shared_path(name: str):
    """llama.cpp's vocab test file `name` (../shared, or its source tree's models/ dir), else a skip."""
    path, why_not = ds.llama_cpp_vocab(name)
    if path is None:
        pytest.skip(why_not)
    return path


@pytest.fixture(scope="module")
def shared_tokenizers():
    return {}


def load_shared(cache: dict, name: str) -> GGUFTokenizer:
    if name not in cache:
        cache[name] = GGUFTokenizer.from_file(shared_path(name))
    return cache[name]


def llama_cpp_cases(path) -> list[tuple[str, list[int]]]:
    texts = open(f"{path}.inp", encoding="utf-8").read().split("\n__ggml_vocab_test__\n")
    ids = open(f"{path}.out", encoding="utf-8").read().split("\n")
    assert len(ids) >= len(texts)
    return [(t, [int(x) for x in line.split()]) for t, line in zip(texts, ids)]


@pytest.fixture(scope="module")
def bytelevel_vocab():
    pytest.importorskip("tokenizers")
    return gf.train_bytelevel()


def assert_kernel_ids_as_python(fast: GGUFTokenizer, slow: GGUFTokenizer, texts: list[str]) -> None:
    """fast's encode_ids and encode_ids_batch (two threads) give slow's (the Python path's)
    ids on every text, with and without parse_special and add_special."""
    for special in (False, True):
        for add in (False, True):
            want = [slow.encode_ids(t, add, special) for t in texts]
            assert [fast.encode_ids(t, add, special) for t in texts] == want
            assert fast.encode_ids_batch(texts, add, special, num_threads=2) == want


def hf_equivalent(spec: dict, pre: str):
    """HF tokenizers with the pre-tokenizer llama.cpp runs for `pre`: its regexes as isolated
    splits, then ByteLevel without its own regex."""
    from tokenizers import Tokenizer

    spec = json.loads(json.dumps(spec))
    info = PRE_TOKENIZERS[pre]
    exprs = REGEXES[info.kind]
    originals = {gf_expr: gf_expr for gf_expr in exprs}
    # llama.cpp's rewritten Llama-3 / Qwen2 regexes mean the tokenizer.json originals
    originals.update({REGEXES["llama3"][0]: patterns.LLAMA3_PATTERN, REGEXES["qwen2"][0]: patterns.QWEN2_PATTERN})
    # Oniguruma's \Z also matches before a final newline; Python's (and ECMAScript's $) only at the end
    steps = [{"type": "Split", "pattern": {"Regex": originals[e] if e in (REGEXES["llama3"][0], REGEXES["qwen2"][0])
                                           else to_python(e).replace(r"\Z", r"\z")},
              "behavior": "Isolated", "invert": False} for e in exprs]
    steps.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False})
    spec["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": steps}
    spec["model"]["ignore_merges"] = info.ignore_merges
    spec["added_tokens"] = []
    return Tokenizer.from_str(json.dumps(spec))


def python_partition(tok: GGUFTokenizer) -> GGUFTokenizer:
    """tok with its special tokens cut in Python (llama.cpp's longest-first partition), not in C."""
    tok._cut_by_mode = {False: None, True: None}
    return tok


@pytest.fixture(scope="module")
def spm_vocab():
    pytest.importorskip("tokenizers")
    return gf.train_metaspace()
