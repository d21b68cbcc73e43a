"""GGUF files written here from a byte-level vocabulary trained with HF tokenizers, checked
against HF tokenizers (fresh machine); special tokens cut in the kernel call against llama.cpp's
partition run in Python; Encodings."""
from __future__ import annotations

import os

import pytest

import fastbpe
from fastbpe.gguf import GGUFTokenizer
from fastbpe.gguf.tokenizer import GGUFEncoding, _clean_spaces

import gguf_files as gf
from gguf_cases import (assert_kernel_ids_as_python, bytelevel_vocab, hf_equivalent, llama_cpp_cases,  # noqa: F401
                        load_shared, python_partition, shared_tokenizers)


@pytest.mark.parametrize("pre", ["gpt-2", "llama-bpe", "qwen2", "starcoder", "falcon", "deepseek-coder", "command-r",
                                 "refact", "mpt", "olmo", "smollm", "default", "deepseek-llm", "deepseek-v3",
                                 "gpt-4o", "tekken", "bloom", "viking", "chatglm-bpe", "jais-2", "seed-coder",
                                 "bailingmoe", "exaone-moe", "minicpm5", "laguna", "superbpe", "youtu", "spark2_5",
                                 "chameleon", "qwen35", "dbrx", "granite-embed-multi-97m", "ufakzeka"])
def test_written_bytelevel_file_matches_hf(pre, bytelevel_vocab, tmp_path):
    spec, tokens, merges = bytelevel_vocab
    types = [3 if t == "<|endoftext|>" else 1 for t in tokens]
    path = tmp_path / "vocab.gguf"
    path.write_bytes(gf.gguf_bytes(gf.gpt2_kv(tokens, merges, pre, types)))
    tok = fastbpe.Tokenizer.from_file(path)
    hf = hf_equivalent(spec, pre)
    for text in gf.TEXTS:
        want = hf.encode(text, add_special_tokens=False).ids
        assert tok.encode_ids(text) == want, text
        assert tok.decode_bytes(want) == (_clean_spaces(text.encode()) if tok.vocab.clean_spaces else text.encode())


def test_written_file_user_defined_tokens_always_split(bytelevel_vocab, tmp_path):
    spec, tokens, merges = bytelevel_vocab
    tokens = tokens + ["<tool>", "<tool_call>"]
    types = [3 if t == "<|endoftext|>" else 1 for t in tokens[:-2]] + [4, 4]
    path = tmp_path / "vocab.gguf"
    path.write_bytes(gf.gguf_bytes(gf.gpt2_kv(tokens, merges, "gpt-2", types)))
    tok = GGUFTokenizer.from_file(path)
    n = len(tokens)
    ids = tok.encode_ids("a<tool_call>b<tool> <|endoftext|>")
    # user-defined tokens are cut out even without parse_special, longest first; control ones are not
    assert ids[1] == n - 1 and n - 2 in ids and tokens.index("<|endoftext|>") not in ids
    assert tokens.index("<|endoftext|>") in tok.encode_ids("x<|endoftext|>", parse_special=True)


def test_special_tokens_cut_in_c_equal_llama_cpp_partition(bytelevel_vocab, tmp_path):
    """User-defined tokens that occur everywhere (DeepSeek-Coder's file has u-umlaut, o-umlaut, ... as
    user-defined tokens) are cut inside the kernel call, leftmost-longest: the same ids as the
    longest-first partition in Python, on texts dense with them, one by one and in batches."""
    import random

    spec, tokens, merges = bytelevel_vocab
    extra = ["\u00fc", "\u00f6", "\u00e9", "zz", "z", "<tool>", "<tool_call>", "<|fim hole|>", "[PAD7]", "[PAD77]", "\u00e9t\u00e9",
             "  ", "   ", "     ", "\t\t", "\t\t\t\t"]   # runs of one character overlap each other: GPT-NeoX's spaces
    tokens = tokens + extra
    types = [3 if t == "<|endoftext|>" else 1 for t in tokens[:-len(extra)]] + [4] * len(extra)
    path = tmp_path / "vocab.gguf"
    path.write_bytes(gf.gguf_bytes(gf.gpt2_kv(tokens, merges, "deepseek-coder", types)))
    fast, slow = GGUFTokenizer.from_file(path), python_partition(GGUFTokenizer.from_file(path))
    assert fast._cut_plan(False) is not None and fast._cut_plan(True) is not None
    rng = random.Random(5)
    bits = extra + ["<|endoftext|>", "<tool", "PAD7]", "\u00e9t", " ", "a", "Z\u00fcrich", "\n", "9", "\u00e9", "\u0301", "zzz", "        ", "\t\t\t", " \t  "]
    texts = ["".join(rng.choice(bits) for _ in range(rng.randrange(0, 30))) for _ in range(300)] + gf.TEXTS
    assert_kernel_ids_as_python(fast, slow, texts)
    with pytest.raises(TypeError):
        fast.encode_ids_batch(["a", b"b"])

    class Text(str):   # a str subclass is read as its text (its __str__ is not asked), as on the Python path
        def __str__(self):
            return "other"

    assert fast.encode_ids(Text(texts[3])) == slow.encode_ids(texts[3])
    assert fast.encode_ids_batch([Text(texts[3])]) == [slow.encode_ids(texts[3])]


def test_overlapping_special_tokens_cut_longest_first_in_c(bytelevel_vocab, tmp_path):
    """Tokens whose occurrences can overlap ("ab" / "bcd"; Falcon's `<|endoftext|>` and
    `>>TITLE<<`) keep llama.cpp's longest-first cut (leftmost-longest would take "ab" in
    "abcd"): the C cut searches them level by level, longest first, and equals the partition."""
    import random

    spec, tokens, merges = bytelevel_vocab
    extra = ["ab", "bcd", "<|endoftext|>x", ">>TITLE<<", ">>INTRODUCTION<<", "<<", "c<", "xab", "b"]
    tokens = tokens + extra
    types = [3 if t == "<|endoftext|>" else 1 for t in tokens[:-len(extra)]] + [4] * len(extra)
    path = tmp_path / "vocab.gguf"
    path.write_bytes(gf.gguf_bytes(gf.gpt2_kv(tokens, merges, "deepseek-coder", types)))
    fast, slow = GGUFTokenizer.from_file(path), python_partition(GGUFTokenizer.from_file(path))
    assert fast._cut_plan(False).deeper is not None and fast._cut_plan(True) is not None   # 3+ levels
    ids = fast.encode_ids("xabcd")
    assert ids[-1] == len(tokens) - len(extra) + 1 and len(tokens) - len(extra) not in ids
    rng = random.Random(7)
    bits = extra + ["<|endoftext|>", ">", ">>", "<", "a", "c", "d", "x", " ", "\n", "\u00e9"]
    texts = ["".join(rng.choice(bits) for _ in range(rng.randrange(0, 30))) for _ in range(500)] + gf.TEXTS
    for special in (False, True):
        want = [slow.encode_ids(t, True, special) for t in texts]
        assert [fast.encode_ids(t, True, special) for t in texts] == want
        assert fast.encode_ids_batch(texts, True, special, num_threads=2) == want


@pytest.mark.parametrize("spaced", [False, True])
def test_lstrip_rstrip_special_tokens_cut_in_c(spaced, bytelevel_vocab, tmp_path):
    """Special tokens with llama.cpp's lstrip / rstrip (ModernBERT's [MASK], Phi-3's specials)
    are cut in the kernel call too, the C spaces beside them dropped within their fragment:
    the partition's ids on texts dense with spaces, tabs and newlines around them.  With
    `spaced`, some tokens begin or end with a space (a run of spaces is a user-defined token in
    GPT-NeoX's file): a strip beside them goes to another level, or the text to Python."""
    import random

    from fastbpe.gguf.vocab import LSTRIP, RSTRIP

    spec, tokens, merges = bytelevel_vocab
    extra = ["[MASK]", "<|end|>", "<|user|>", "</s>", "ab", "<x>"] + (["  ", " <y>", "<z> ", "\t\t"] if spaced else [])
    tokens = tokens + extra
    types = [3 if t == "<|endoftext|>" else 1 for t in tokens[:-len(extra)]] + [4] * len(extra)
    path = tmp_path / "vocab.gguf"
    path.write_bytes(gf.gguf_bytes(gf.gpt2_kv(tokens, merges, "deepseek-coder", types)))
    fast, slow = GGUFTokenizer.from_file(path), python_partition(GGUFTokenizer.from_file(path))
    base = len(tokens) - len(extra)
    strips = {0: LSTRIP, 1: RSTRIP, 2: LSTRIP | RSTRIP, 3: RSTRIP}
    if spaced:
        strips.update({6: 0, 7: LSTRIP, 8: RSTRIP})
    for tok in (fast, slow):
        for k, flag in strips.items():
            tok.vocab.attrs[base + k] |= flag
    assert fast._cut_plan(False) is not None and fast._cut_plan(True) is not None
    ids = fast.encode_ids("a  [MASK] b <|end|>\n\tc", parse_special=True)   # <|end|>: control (an end of turn)
    assert ids.count(base) == 1 and ids.count(base + 1) == 1
    rng = random.Random(11)
    bits = extra + ["<|endoftext|>", " ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\u3000", "\u00a0", "a", "b", "z", "\u00e9", "<", ">"]
    texts = ["".join(rng.choice(bits) for _ in range(rng.randrange(0, 40))) for _ in range(800)] + gf.TEXTS
    assert_kernel_ids_as_python(fast, slow, texts)


@pytest.mark.parametrize("lacking", ["q", "\u00c3"])
def test_a_vocabulary_lacking_a_byte_in_batches(lacking, bytelevel_vocab, tmp_path):
    """A byte with no token of its own gets a stand-in id that each list of ids is cleared of
    (Falcon lacks 28 bytes, 14 of them ASCII controls): a list is left unread only when its text
    holds no character whose UTF-8 has a lacking byte; the batch's ids equal the Python path's."""
    spec, tokens, merges = bytelevel_vocab
    tokens = [("<lacking>" if t == lacking else t) for t in tokens]
    path = tmp_path / "vocab.gguf"
    path.write_bytes(gf.gguf_bytes(gf.gpt2_kv(tokens, merges, "gpt-2")))
    fast, slow = GGUFTokenizer.from_file(path), python_partition(GGUFTokenizer.from_file(path))
    assert fast.model.stand_ins and not fast.model.may_stand_in("plain text")
    assert fast.model.may_stand_in("quick") == (lacking == "q") and fast.model.may_stand_in("caf\u00e9") == (lacking != "q")
    texts = ["quick queue", "Qatar q", "caf\u00e9 \u00c3 ok", "plain text", "\u00e9q\u00e9", ""] + gf.TEXTS
    want = [slow.encode_ids(t) for t in texts]
    assert fast.encode_ids_batch(texts, num_threads=1) == want
    assert all(max(ids, default=0) < len(tokens) for ids in want)


@pytest.mark.parametrize("name", ["deepseek-coder", "command-r", "qwen2", "gpt-neox", "falcon", "gpt-2", "starcoder"])
def test_shared_vocab_special_cut_in_c_equals_partition(name, shared_tokenizers):
    tok = load_shared(shared_tokenizers, name)
    slow = python_partition(GGUFTokenizer.from_file(tok.path))
    texts = ([t for t, _ in llama_cpp_cases(tok.path)] if os.path.exists(f"{tok.path}.inp") else list(gf.TEXTS)) + ["M\u00fcnchen \u00f6l \u00fc\u00fc<|EOT|>[PAD32022]x\u00e9", "\u00fc" * 50,
                                                "def f():\n" + " " * 37 + "x\n\t\t  y" + " " * 25 + "<|endoftext|>",
                                                "<|endoftext|>>TITLE<<>>INTRODUCTION<<|endoftext|>>>SUMMARY<<<|endoftext|>"]
    assert tok._cut_plan(False) is not None and tok._cut_plan(True) is not None
    for special in (False, True):
        want = [slow.encode_ids(t, True, special) for t in texts]
        assert [tok.encode_ids(t, True, special) for t in texts] == want


def test_encode_batch_equals_one_by_one(bytelevel_vocab, tmp_path):
    spec, tokens, merges = bytelevel_vocab
    path = tmp_path / "vocab.gguf"
    path.write_bytes(gf.gguf_bytes(gf.gpt2_kv(tokens, merges, "llama-bpe")))
    tok = GGUFTokenizer.from_file(path)
    texts = gf.TEXTS * 3
    want = [tok.encode_ids(t) for t in texts]
    assert tok.encode_ids_batch(texts, num_threads=2) == want
    assert tok.encode_ids_batch(texts) == want
    assert [e.ids for e in tok.encode_batch(texts)] == want
    assert tok.encode_batch(texts)[9].tokens == [tokens[i] for i in want[9]]
    assert tok.encode_ids_batch([]) == []
    with pytest.raises(ValueError, match="num_threads"):
        tok.encode_ids_batch(texts, num_threads=0)


def test_encoding_fields_are_copies_as_hf(bytelevel_vocab, tmp_path):
    """A GGUFEncoding's list fields are a new list each read, as HF's Encoding's: changing one
    (`ids.append(eos)`) leaves the Encoding, its masks and its offsets as they were."""
    import copy
    import pickle

    spec, tokens, merges = bytelevel_vocab
    path = tmp_path / "vocab.gguf"
    path.write_bytes(gf.gguf_bytes(gf.gpt2_kv(tokens, merges, "llama-bpe")))
    tok = GGUFTokenizer.from_file(path)
    text = max(gf.TEXTS, key=len)
    for enc in (tok.encode(text), tok.encode_batch([text])[0]):
        want_ids, want_tokens, want_offsets = enc.ids, enc.tokens, enc.offsets
        for field in (enc.ids, enc.tokens, enc.offsets, enc.attention_mask, enc.type_ids):
            field.append(field[0])
        assert (enc.ids, enc.tokens, enc.offsets) == (want_ids, want_tokens, want_offsets)
        assert len(enc) == len(enc.attention_mask) == len(enc.type_ids) == len(want_ids)
        assert enc.ids is not enc.ids and enc.tokens is not enc.tokens
        with pytest.raises(AttributeError):   # read-only, as HF's: tokens and offsets are of these ids
            enc.ids = [7, 8]
        with pytest.raises(AttributeError):
            enc.tokens = ["x"]
        assert (enc.ids, enc.tokens, enc.offsets) == (want_ids, want_tokens, want_offsets)
        # pickle / deepcopy: plain fields, offsets made now (the tokenizer in it does not pickle)
        for back in (pickle.loads(pickle.dumps(enc)), copy.deepcopy(enc), copy.copy(enc)):
            assert (back.ids, back.tokens, back.offsets, len(back)) == (want_ids, want_tokens, want_offsets,
                                                                        len(want_ids))
    bare = pickle.loads(pickle.dumps(GGUFEncoding([5, 6], ["a", "b"])))
    assert (bare.ids, bare.tokens, len(bare)) == ([5, 6], ["a", "b"], 2)
    with pytest.raises(ValueError, match="without its text"):
        bare.offsets
