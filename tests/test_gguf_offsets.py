"""GGUF encodings' character offsets (`GGUFTokenizer.encode(...).offsets`): against HF
tokenizers on the equivalent tokenizer.json (llama.cpp's vocab files beside the shared HF
folders of the same vocabulary, and byte-level files written here), and, for SentencePiece
files, against what each token's text says it covers."""
from __future__ import annotations

import json

import pytest

from fastbpe.gguf import GGUFTokenizer
from fastbpe.gguf.vocab import BYTE

import datasources as ds
import gguf_files as gf

GGUF_DIR = ds.SHARED / "data" / "gguf"
HF_DIR = ds.VOCAB_DIR / "hf"
# llama.cpp's vocab file -> a shared HF folder with the same vocabulary
SAME_VOCAB = {"gpt-2": "gpt2", "qwen2": "qwen2.5", "llama-bpe": "deepseek-r1-distill-llama-8b"}
SPECIAL_TEXTS = ["<|im_start|>user\nhi 日本<|im_end|>\n", "<|endoftext|><|endoftext|> x", "a<|endoftext|>",
                 "<|begin▁of▁sentence|>x", "🦙<|im_end|>🦙"]


def _hf_without_post_processor(spec: dict):
    """HF with the file's stages but no post-processor (GGUF files carry none: no BOS, no
    offset trimming)."""
    from tokenizers import Tokenizer

    spec = dict(spec, post_processor=None)
    return Tokenizer.from_str(json.dumps(spec))


def _inputs(path) -> list[str]:
    return open(f"{path}.inp", encoding="utf-8").read().split("\n__ggml_vocab_test__\n")


@pytest.mark.parametrize("name", sorted(SAME_VOCAB))
def test_shared_files_give_hfs_offsets(name):
    pytest.importorskip("tokenizers")
    path, folder = GGUF_DIR / f"ggml-vocab-{name}.gguf", HF_DIR / SAME_VOCAB[name] / "tokenizer.json"
    if not path.is_file() or not folder.is_file():
        pytest.skip(f"needs {path} and {folder} (../shared)")
    tok = GGUFTokenizer.from_file(path)
    hf = _hf_without_post_processor(json.loads(folder.read_text(encoding="utf-8")))
    compared = 0
    for text in _inputs(path) + gf.TEXTS:
        want = hf.encode(text, add_special_tokens=False)
        got = tok.encode(text)
        if got.ids != want.ids:   # the two files differ (GPT-2's: 2 of llama.cpp's inputs)
            continue
        assert got.offsets == want.offsets, text
        compared += 1
    for text in SPECIAL_TEXTS:  # special tokens as llama.cpp's parse_special, HF's added tokens
        want = hf.encode(text, add_special_tokens=False)
        got = tok.encode(text, parse_special=True)
        if got.ids == want.ids:
            assert got.offsets == want.offsets, text
            compared += 1
    assert compared >= 45


@pytest.mark.parametrize("pre", ["gpt-2", "llama-bpe", "qwen2", "deepseek-coder", "command-r"])
def test_written_bytelevel_files_give_hfs_offsets(pre, tmp_path):
    pytest.importorskip("tokenizers")
    from gguf_cases import hf_equivalent

    spec, tokens, merges = gf.train_bytelevel()
    types = [3 if t == "<|endoftext|>" else 1 for t in tokens]
    path = tmp_path / "vocab.gguf"
    path.write_bytes(gf.gguf_bytes(gf.gpt2_kv(tokens, merges, pre, types)))
    tok = GGUFTokenizer.from_file(path)
    hf = hf_equivalent(dict(spec, post_processor=None), pre)
    for text in gf.TEXTS:
        want = hf.encode(text, add_special_tokens=False)
        assert tok.encode(text).ids == want.ids, text
        assert tok.encode(text).offsets == want.offsets, text
    batch = tok.encode_batch(gf.TEXTS, num_threads=2)
    assert [e.offsets for e in batch] == [tok.encode(t).offsets for t in gf.TEXTS]


def _check_spm_offsets(tok: GGUFTokenizer, text: str, **kw) -> None:
    """Each token covers the text it stands for: a whole token its own text (spaces for ▁,
    the prefix space llama.cpp adds belonging to the first character), a run of byte tokens
    the one character they spell; offsets never go back."""
    enc = tok.encode(text, **kw)
    assert len(enc.offsets) == len(enc.ids)
    k, prev_end = 0, 0
    while k < len(enc.ids):
        start, end = enc.offsets[k]
        assert 0 <= start <= end <= len(text) and start >= 0
        i = enc.ids[k]
        if tok.vocab.attrs[i] & BYTE:
            run = k
            while run < len(enc.ids) and tok.vocab.attrs[enc.ids[run]] & BYTE and enc.offsets[run] == (start, end):
                run += 1
            assert b"".join(tok.token_to_piece(j) for j in enc.ids[k:run]) == text[start:end].encode(), text
            k = run
            continue
        piece = tok.token_to_piece(i).decode()
        covered = text[start:end]
        if (start, end) == (0, 0) and i in (tok.bos_token_id, tok.eos_token_id):
            pass
        elif i in tok.vocab.special_ids:   # a special token: its text and the spaces it strips
            assert covered.strip(" \t\n\v\f\r") == piece, (text, piece, covered)
        elif covered != piece:  # the added prefix space: one space more than the text has
            assert piece.startswith(" ") and piece[1:] == covered or (piece == " " and end - start == 1), \
                (text, piece, covered)
        assert end >= prev_end or (start, end) == (0, 0), text
        prev_end = max(prev_end, end)
        k += 1


def test_spm_offsets_follow_the_tokens(tmp_path):
    pytest.importorskip("tokenizers")
    tokens, scores, types = gf.train_metaspace()
    path = tmp_path / "spm.gguf"
    path.write_bytes(gf.gguf_bytes(gf.spm_kv(tokens, scores, types)))
    files = [GGUFTokenizer.from_file(path)]
    shared, _ = ds.llama_cpp_vocab("llama-spm")
    if shared is not None:
        files.append(GGUFTokenizer.from_file(shared))
    for tok in files:
        for text in gf.TEXTS + ["<s>a</s> b", " <s> x"]:
            _check_spm_offsets(tok, text)
            _check_spm_offsets(tok, text, add_special_tokens=True, parse_special=True)


def test_spm_offsets_by_hand():
    path, why_not = ds.llama_cpp_vocab("llama-spm")
    if path is None:
        pytest.skip(why_not)
    tok = GGUFTokenizer.from_file(path)
    enc = tok.encode("Hello world", add_special_tokens=True)
    assert (enc.tokens, enc.offsets) == (["<s>", "▁Hello", "▁world"], [(0, 0), (0, 5), (5, 11)])
    enc = tok.encode("<s>a</s> b", parse_special=True)
    assert (enc.tokens, enc.offsets) == (["<s>", "▁a", "</s>", "▁", "▁b"], [(0, 3), (3, 4), (4, 8), (8, 9), (8, 10)])
    enc = tok.encode("Cửa")   # ử is three byte tokens, each covering the character
    assert enc.offsets == [(0, 1), (1, 2), (1, 2), (1, 2), (2, 3)]


def test_stripping_special_tokens_cover_the_spaces_they_strip(tmp_path):
    """Phi-3's fix-up by name: control and user-defined tokens strip the spaces after them;
    the token's span takes them in, as an HF added token's span does."""
    pytest.importorskip("tokenizers")
    tokens, scores, types = gf.train_metaspace()
    tokens, scores, types = tokens + ["<|user|>"], scores + [0.0], types + [4]
    kv = gf.spm_kv(tokens, scores, types) + [("general.name", gf.STRING, "Phi-3 mini")]
    path = tmp_path / "phi3.gguf"
    path.write_bytes(gf.gguf_bytes(kv))
    tok = GGUFTokenizer.from_file(path)
    text = "a <|user|>   b"
    enc = tok.encode(text)
    user = enc.ids.index(len(tokens) - 1)
    assert enc.offsets[user] == (2, 13)
    assert text[enc.offsets[user + 1][0]:enc.offsets[-1][1]] == "b"
    _check_spm_offsets(tok, text)


def test_offsets_need_the_texts_ids(tmp_path):
    tokens, scores, types = ["<unk>", "<s>", "</s>", "a", "b", "\u2581"], [0.0] * 6, [2, 3, 3, 1, 1, 1]
    path = tmp_path / "tiny.gguf"
    path.write_bytes(gf.gguf_bytes(gf.spm_kv(tokens, scores, types)))
    tok = GGUFTokenizer.from_file(path)
    assert tok.offsets("ab", tok.encode_ids("ab")) == [(0, 1), (0, 1), (1, 2)]
    with pytest.raises(ValueError, match="end too soon"):
        tok.offsets("ab", tok.encode_ids("a"))
