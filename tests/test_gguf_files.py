"""SentencePiece GGUF files written here (checked against a reference of llama.cpp's merges),
files that are cut, garbage or huge, the CLI on GGUF files, decode and byte order."""
from __future__ import annotations

import json
import os
import resource
import struct
import tracemalloc

import pytest

import fastbpe
from fastbpe import patterns
from fastbpe.gguf import GGUFTokenizer, is_gguf, read_metadata

import gguf_files as gf
from gguf_cases import assert_kernel_ids_as_python, bytelevel_vocab, hf_equivalent, spm_vocab  # noqa: F401
from reference_gguf import spm_tokenize


def test_written_spm_file_matches_reference(spm_vocab, tmp_path):
    tokens, scores, types = spm_vocab
    path = tmp_path / "spm.gguf"
    path.write_bytes(gf.gguf_bytes(gf.spm_kv(tokens, scores, types)))
    tok = GGUFTokenizer.from_file(path)
    assert tok.model_type == "llama" and tok.bos_token_id == 1 and tok.add_bos_token
    for text in gf.TEXTS:
        want = spm_tokenize(text, tokens, scores)
        assert tok.encode_ids(text) == want, text
        assert tok.decode(want) == text
        assert tok.encode_ids(text, add_special_tokens=True) == ([1] + want)


def test_spm_equal_scores_merge_leftmost(tmp_path):
    """Two tokens with one score: llama.cpp merges the leftmost pair first, whatever the token."""
    tokens = ["<unk>", "<s>", "</s>", "a", "b", "c", "ab", "bc", "\u2581", "\u2581a"]
    scores = [0, 0, 0, -1, -1, -1, -5, -5, -1, -9]
    types = [2, 3, 3] + [1] * 7
    path = tmp_path / "tie.gguf"
    path.write_bytes(gf.gguf_bytes(gf.spm_kv(tokens, [float(s) for s in scores], types,
                                             add_space_prefix=(gf.BOOL, False))))
    tok = GGUFTokenizer.from_file(path)
    assert tok.model.compiled is None   # no byte tokens: merged here
    for text in ["abc", "bcab", "abcabc", "cbabc"]:
        assert tok.encode_ids(text) == spm_tokenize(text, tokens, scores, add_space_prefix=False), text
    assert tok.encode_ids("abc") == [6, 5]
    # with the 256 byte tokens the char-level kernel merges, leftmost on ties too
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    path.write_bytes(gf.gguf_bytes(gf.spm_kv(tokens, [float(s) for s in scores] + [0.0] * 256, types + [6] * 256,
                                             add_space_prefix=(gf.BOOL, False))))
    tok = GGUFTokenizer.from_file(path)
    assert tok.model.compiled is not None
    for text in ["abc", "bcab", "abcabc", "cbabc", "abxc", "▁ab▁c▁▁a"]:
        assert tok.encode_ids(text) == spm_tokenize(text, tokens, scores + [0] * 256, add_space_prefix=False), text


def test_spm_character_only_inside_tokens_merges_here(tmp_path):
    """'b' is no token but 'ab' is: llama.cpp merges a + b into ab, and a lone b falls back to
    bytes; the char-level kernel has no such symbol, so these merges run here."""
    tokens = ["<unk>", "<s>", "</s>", "a", "ab", "\u2581"] + [f"<0x{b:02X}>" for b in range(256)]
    scores = [0.0, 0.0, 0.0, -1.0, -2.0, -1.0] + [0.0] * 256
    types = [2, 3, 3, 1, 1, 1] + [6] * 256
    path = tmp_path / "inside.gguf"
    path.write_bytes(gf.gguf_bytes(gf.spm_kv(tokens, scores, types, add_space_prefix=(gf.BOOL, False))))
    tok = GGUFTokenizer.from_file(path)
    assert tok.model.compiled is None and "no tokens" in tok.model.compiled_refusal
    assert tok.engine.startswith("pipeline (characters inside tokens")
    for text in ["ab", "bab", "b", "aab b"]:
        assert tok.encode_ids(text) == spm_tokenize(text, tokens, scores, add_space_prefix=False), text
    assert tok.encode_ids("ab") == [4]


# -- bad files ---------------------------------------------------------------------------------

def _small_file(tmp_path, **kw):
    tokens = ["<|endoftext|>"] + [chr(c) for c in range(33, 127)] + ["ab", "abc"]
    from fastbpe.formats.bytelevel import BYTE_TO_CHAR

    tokens += [BYTE_TO_CHAR[b] for b in range(256) if not 33 <= b < 127]
    merges = ["a b", "ab c"]
    data = gf.gguf_bytes(gf.gpt2_kv(tokens, merges, kw.get("pre", "gpt-2")))
    path = tmp_path / "small.gguf"
    path.write_bytes(data)
    return path, data


def test_truncated_files_fail_cleanly(tmp_path):
    path, data = _small_file(tmp_path)
    assert GGUFTokenizer.from_file(path).encode_ids("abc") == [96]
    cuts = sorted(set(list(range(0, 120)) + list(range(120, len(data), max(1, len(data) // 97)))))
    for cut in cuts:
        if cut >= len(data) - 31:  # only alignment padding left: still a whole file
            continue
        bad = tmp_path / f"cut{cut}.gguf"
        bad.write_bytes(data[:cut])
        with pytest.raises(ValueError, match="cut"):
            GGUFTokenizer.from_file(bad)


def _header(n_keys: int) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, 0, n_keys)


@pytest.mark.parametrize("body,problem", [
    (b"GGML" + b"\0" * 40, "no GGUF magic"),
    (b"GGUF" + struct.pack("<IQQ", 7, 0, 0), "unsupported GGUF version 7"),
    (b"GGUF" + struct.pack("<IQQ", 1, 0, 0), "version 1"),
    (_header(1 << 40), "absurd key count"),
    (_header(1) + gf._string("k") + struct.pack("<IIQ", gf.ARRAY, gf.STRING, 1 << 60), "strings"),
    (_header(1) + gf._string("k") + struct.pack("<IIQ", gf.ARRAY, gf.UINT32, 1 << 61), "elements"),
    (_header(1) + struct.pack("<Q", 1 << 62) + b"k", "key 0"),
    (_header(1) + gf._string("k") + struct.pack("<I", 99), "unknown value type 99"),
])
def test_garbage_files_fail_cleanly(tmp_path, body, problem):
    path = tmp_path / "bad.gguf"
    path.write_bytes(body)
    with pytest.raises(ValueError, match=problem) as info:
        read_metadata(path)
    assert str(path) in str(info.value)


def test_bad_tokenizer_metadata_is_named(tmp_path):
    path, _ = _small_file(tmp_path, pre="no-such-pre")
    with pytest.raises(ValueError, match="unknown pre-tokenizer 'no-such-pre'"):
        GGUFTokenizer.from_file(path)
    path, _ = _small_file(tmp_path, pre="kimi-k2")
    with pytest.raises(ValueError, match="'kimi-k2' is not supported"):
        GGUFTokenizer.from_file(path)
    t5 = tmp_path / "t5.gguf"
    t5.write_bytes(gf.gguf_bytes([("tokenizer.ggml.model", gf.STRING, "t5"),
                                  ("tokenizer.ggml.tokens", gf.ARRAY, ["a"], gf.STRING)]))
    with pytest.raises(ValueError, match="tokenizer model 't5'"):
        GGUFTokenizer.from_file(t5)
    nothing = tmp_path / "none.gguf"
    nothing.write_bytes(gf.gguf_bytes([("general.architecture", gf.STRING, "llama")]))
    with pytest.raises(ValueError, match="tokenizer model None"):
        GGUFTokenizer.from_file(nothing)
    not_json = tmp_path / "x.bin"
    not_json.write_bytes(b"\xff\xfe\x00garbage")
    assert not is_gguf(not_json)
    with pytest.raises(ValueError, match="not a tokenizer.json"):
        fastbpe.Tokenizer.from_file(not_json)


def test_big_sparse_file_opens_without_reading_tensors(tmp_path, bytelevel_vocab):
    """A 4 GiB model file (sparse: the tensor data is a hole) opens with memory of its vocabulary."""
    spec, tokens, merges = bytelevel_vocab
    size = 1 << 30
    path = tmp_path / "model.gguf"
    path.write_bytes(gf.gguf_bytes(gf.gpt2_kv(tokens, merges, "llama-bpe"), n_tensors=4, tensor_data=size))
    os.truncate(path, path.stat().st_size + 4 * size)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    try:
        tok = fastbpe.Tokenizer.from_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    assert read_metadata(path)["GGUF.tensor_count"] == 4
    assert peak < 16 << 20, f"{peak} bytes allocated to open a {len(tokens)}-token vocabulary"
    assert grown_kib < 64 << 10, f"resident memory grew by {grown_kib} KiB"
    assert tok.encode_ids("Hello world") == hf_equivalent(spec, "llama-bpe").encode("Hello world").ids


def test_cli_model_gguf(bytelevel_vocab, spm_vocab, tmp_path, capsys):
    from fastbpe.cli import main

    spec, tokens, merges = bytelevel_vocab
    path = tmp_path / "vocab.gguf"
    path.write_bytes(gf.gguf_bytes(gf.gpt2_kv(tokens, merges, "qwen2")))
    text = "Hello world, it's 2024!\n  Ünïcödé"
    ids = GGUFTokenizer.from_file(path).encode_ids(text)
    assert main(["encode", "-m", str(path), text]) == 0
    assert json.loads(capsys.readouterr().out) == ids
    assert main(["decode", "-m", str(path), json.dumps(ids)]) == 0
    assert capsys.readouterr().out.rstrip("\n") == text
    spm_tokens, scores, types = spm_vocab
    spm_path = tmp_path / "spm.gguf"
    spm_path.write_bytes(gf.gguf_bytes(gf.spm_kv(spm_tokens, scores, types)))
    doc = tmp_path / "doc.txt"
    doc.write_text(text * 50, encoding="utf-8")
    assert main(["count", "-m", str(spm_path), str(doc)]) == 0
    want = len(spm_tokenize(text * 50, spm_tokens, scores))
    assert capsys.readouterr().out.split("\t")[0] == str(want)


def test_decode_bad_ids(spm_vocab, tmp_path):
    tokens, scores, types = spm_vocab
    path = tmp_path / "spm.gguf"
    path.write_bytes(gf.gguf_bytes(gf.spm_kv(tokens, scores, types)))
    tok = GGUFTokenizer.from_file(path)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.decode([len(tokens)])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.decode([-1])
    with pytest.raises(TypeError):
        tok.decode(["5"])
    with pytest.raises(TypeError):
        tok.encode_ids(b"bytes")
    import numpy as np

    ids = tok.encode_ids("Hello world")
    assert tok.decode(np.array(ids)) == "Hello world"
    assert tok.decode([1] + ids) == "<s> Hello world"  # llama.cpp strips the space of the first piece only and tok.decode([1] + ids, skip_special_tokens=True) == " Hello world"


def test_big_endian_file(spm_vocab, tmp_path):
    tokens, scores, types = spm_vocab
    little, big = tmp_path / "le.gguf", tmp_path / "be.gguf"
    little.write_bytes(gf.gguf_bytes(gf.spm_kv(tokens, scores, types, eos_token_id=(gf.UINT32, 2))))
    big.write_bytes(gf.gguf_bytes(gf.spm_kv(tokens, scores, types, eos_token_id=(gf.UINT32, 2)), order=">"))
    a, b = GGUFTokenizer.from_file(little), GGUFTokenizer.from_file(big)
    assert b.eos_token_id == 2 and list(b.vocab.scores) == list(a.vocab.scores)
    for text in gf.TEXTS:
        assert b.encode_ids(text) == a.encode_ids(text)


def test_cli_count_in_blocks_equals_whole(bytelevel_vocab, tmp_path, capsys):
    from fastbpe.cli import main
    from fastbpe.cli.tokenizer_args import GGUFFile

    spec, tokens, merges = bytelevel_vocab
    path = tmp_path / "vocab.gguf"
    path.write_bytes(gf.gguf_bytes(gf.gpt2_kv(tokens, merges, "llama-bpe")))
    assert GGUFFile(str(path)).pattern == patterns.LLAMA3_PATTERN  # may be cut between pieces
    doc = tmp_path / "doc.txt"
    text = "\n".join(gf.CORPUS) * 200  # several blocks
    doc.write_text(text, encoding="utf-8")
    assert main(["count", "-m", str(path), str(doc)]) == 0
    assert capsys.readouterr().out.split("\t")[0] == str(len(GGUFTokenizer.from_file(path).encode_ids(text)))
    starcoder = tmp_path / "star.gguf"
    starcoder.write_bytes(gf.gguf_bytes(gf.gpt2_kv(tokens, merges, "starcoder")))
    assert GGUFFile(str(starcoder)).pattern == r"[\s\S]+"  # a chain: counted whole


def test_spm_word_by_word_equals_whole_text(spm_vocab, tmp_path):
    """Merging word by word (a vocabulary with no token like 'a▁') gives the whole-text ids."""
    import random

    tokens, scores, types = spm_vocab
    path = tmp_path / "spm.gguf"
    path.write_bytes(gf.gguf_bytes(gf.spm_kv(tokens, scores, types)))
    tok = GGUFTokenizer.from_file(path)
    assert tok.model.word_cut and tok.model.compiled is not None
    rng = random.Random(3)
    alphabet = list("the quick  brown\n\tfox 12 ,.!é中") + ["  ", "\u2581", "😀", "\x00"]
    texts = gf.TEXTS + ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 60))) for _ in range(500)]
    compiled = [tok.encode_ids(t) for t in texts]   # the char-level kernel
    tok.model.compiled = None                       # the merges here, word by word
    by_word = [tok.encode_ids(t) for t in texts]
    assert by_word == compiled
    tok.model.word_cut = False
    assert [tok.encode_ids(t) for t in texts] == by_word
    # a token with a space after a letter: merges may cross words, so the text is merged whole
    glued = tokens + ["s\u2581"]
    path.write_bytes(gf.gguf_bytes(gf.spm_kv(glued, scores + [-0.5], types + [1])))
    tok = GGUFTokenizer.from_file(path)
    assert not tok.model.word_cut
    for text in ["its a test", "this is"]:
        assert tok.encode_ids(text) == spm_tokenize(text, glued, scores + [-0.5])


@pytest.mark.parametrize("prefix", [True, False])
def test_spm_batches_put_the_spaces_in_on_the_kernel(prefix, spm_vocab, tmp_path):
    """A SentencePiece file's texts go to the char-level kernel with " " read as ▁ and the
    space prefix put in by it (its REPLACE_SPACE / PREPEND flags), a batch's texts without
    special tokens in one call: the ids of the merges run here on the ▁-escaped text
    (llama.cpp's " " + fragment), one by one and in batches, with specials, both modes."""
    import random

    tokens, scores, types = spm_vocab
    tokens = tokens + ["<|user|>", "[INST]"]
    path = tmp_path / "spm.gguf"
    path.write_bytes(gf.gguf_bytes(gf.spm_kv(tokens, scores + [0.0, 0.0], types + [4, 3],
                                             add_space_prefix=(gf.BOOL, prefix))))
    fast, slow = GGUFTokenizer.from_file(path), GGUFTokenizer.from_file(path)
    assert fast.model.compiled is not None
    slow.model.compiled = None                       # the merges here, on the escaped text
    rng = random.Random(4)
    alphabet = list("the quick  brown\n\tfox 12 ,.!\u00e9\u4e2d") + ["  ", "\u2581", "\U0001f600", "<|user|>", "[INST]"]
    texts = gf.TEXTS + ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40))) for _ in range(400)]
    assert_kernel_ids_as_python(fast, slow, texts)
