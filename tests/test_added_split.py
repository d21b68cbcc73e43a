"""Added tokens cut out inside the kernel call (fastbpe/_added_split.pyx): a file whose added
tokens occur everywhere (Phi-2's runs of spaces; GPT-NeoX's, after its NFC normalizer) gives
HF's ids on encode_ids_batch and encode_batch, raw tokens first and normalized ones between
them (in the normalized stretch), as HF's AddedVocabulary."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_reference import build, tokenizers

from tokenizers import normalizers as hn  # noqa: E402
from tokenizers import pre_tokenizers as hp  # noqa: E402

from fastbpe.hf import Tokenizer  # noqa: E402


def _with_added(tokens: list[dict], normalizer=None):
    ref = build(pre_tokenizer=hp.ByteLevel(add_prefix_space=False), decoder=tokenizers.decoders.ByteLevel(),
                byte_level_alphabet=True, normalizer=normalizer)
    doc = json.loads(ref.to_str())
    n = max(t["id"] for t in doc["added_tokens"]) + 1
    n = max(n, max(doc["model"]["vocab"].values()) + 1)
    for k, t in enumerate(tokens):
        doc["added_tokens"].append({"id": n + k, "single_word": False, "lstrip": False, "rstrip": False,
                                    "normalized": True, "special": False, **t})
    text = json.dumps(doc)
    return tokenizers.Tokenizer.from_str(text), Tokenizer.from_str(text)


SPACE_RUNS = [{"content": " " * k} for k in range(2, 12)]                 # Phi-2 / CodeGen
MIXED = SPACE_RUNS + [{"content": "<tag>", "normalized": False, "special": True},
                      {"content": "ag>x", "normalized": True}, {"content": "中文", "normalized": False},
                      {"content": "é é", "normalized": True}]

_PIECES = ["a", "b", " ", "  ", "     ", "\n", "\t", "<tag>", "ag>x", "<ta", "中文", "中", "é", "é é", "x", "1", "😀"]


def _ids(tok, texts):
    return [e.ids for e in tok.encode_batch(texts)]


def _assert_batches_are_hfs(ref, ours, texts):
    """Both batch paths (ids alone, and Encodings with offsets) give HF's answer."""
    want = _ids(ref, texts)
    assert ours.encode_ids_batch(texts) == want
    got = ours.encode_batch(texts)
    assert [e.ids for e in got] == want
    assert [e.offsets for e in got] == [e.offsets for e in ref.encode_batch(texts)]


@pytest.mark.parametrize("tokens", [SPACE_RUNS, MIXED], ids=["space-runs", "mixed"])
@settings(max_examples=150, deadline=None)
@given(texts=st.lists(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join), min_size=1, max_size=6))
def test_cut_in_the_kernel_is_hfs_cut(tokens, texts):
    _assert_batches_are_hfs(*_pairs(tokens), texts)


_CACHE: dict = {}


def _pairs(tokens):
    key = id(tokens)
    if key not in _CACHE:
        _CACHE[key] = _with_added(tokens)
        assert _CACHE[key][1].added.cut_matchers() is not None
    return _CACHE[key]


# RoBERTa's "<mask>" (lstrip, normalized), Phi-3's "<|end|>"-style raw specials (rstrip), and
# tokens a strip can reach into: a raw "\n" and a normalized " z" inside the spaces an rstrip takes
STRIPS = [{"content": "<mask>", "lstrip": True}, {"content": "<|end|>", "rstrip": True, "normalized": False,
                                                 "special": True},
          {"content": "<b>", "lstrip": True, "rstrip": True, "normalized": False}, {"content": "\n", "normalized": False},
          {"content": " z"}, {"content": "<n>", "rstrip": True}, {"content": "ab", "lstrip": True}]
# Unicode White_Space (HF strips it) and characters Python's isspace has but Rust's is_whitespace not
_STRIP_PIECES = ["a", "b", "z", " ", "  ", "\n", "\t", "\v", "\u3000", "\u00a0", "\u0085", "\u2028", "\x1c", "\x1f",
                 "\u200b", "<mask>", "<|end|>", "<b>", "<n>", "ab", " z", "é", "中", "😀", "<ma"]


@pytest.mark.parametrize("normalizer", [None, "nfc"], ids=["raw", "nfc"])
@settings(max_examples=150, deadline=None)
@given(texts=st.lists(st.lists(st.sampled_from(_STRIP_PIECES), max_size=30).map("".join), min_size=1, max_size=6))
def test_strips_cut_in_the_kernel_are_hfs(normalizer, texts):
    key = ("strips", normalizer)
    if key not in _CACHE:
        _CACHE[key] = _with_added(STRIPS, NORMALIZERS[normalizer]() if normalizer else None)
        assert _CACHE[key][1].added.cut_matchers() is not None
    _assert_batches_are_hfs(*_CACHE[key], texts)


def test_strip_flags_are_cut_in_the_kernel_call(monkeypatch):
    """lstrip / rstrip tokens (RoBERTa's "<mask>", Phi-3's specials) no longer send a text to the
    Python cut; HF's ids, including its overlapping splits: a token found inside the spaces an
    rstrip took is cut, and the text after it encoded from its end."""
    ref, ours = _with_added(STRIPS)
    texts = ["a  b <|end|>  c", "   <|end|>", "no tokens", "x <mask> y", "<n> \n z", "<|end|>\u3000 \n  z",
             "é\u2028<mask>\x1c<n>\x1f", "ab <b> ab", "<|end|>  z z"]
    want = _ids(ref, texts)

    def no_python_cut(text):
        raise AssertionError("the Python cut ran")

    monkeypatch.setattr(ours, "_fast_segments", no_python_cut)
    assert ours.encode_ids_batch(texts, num_threads=1) == want
    assert [ours.encode_ids(t) for t in texts] == want


def test_a_token_its_lstrip_leaves_empty_is_dropped():
    """A whitespace token with lstrip inside the spaces an rstrip took: HF panics ("bad split"),
    fastbpe drops it, the kernel's cut as the Python plan's."""
    _, ours = _with_added([{"content": "<r>", "rstrip": True, "normalized": False}, {"content": " \t", "lstrip": True,
                                                                                    "normalized": False}])
    assert ours.added.cut_matchers() is not None
    texts = ["<r>  \t x", "a \t<r> \t \t", "<r>\t \tb", "é<r> \t"]
    assert ours.encode_ids_batch(texts) == [e.ids for e in ours.encode_batch(texts)]


def test_single_word_keeps_the_python_cut():
    ref, ours = _with_added([{"content": "ab", "single_word": True}, {"content": "<x>", "rstrip": True}])
    assert ours.added.cut_matchers() is None
    texts = ["ab cab ab_ <x>  ab", "中ab ab", "no tokens"]
    assert ours.encode_ids_batch(texts) == _ids(ref, texts)


def test_encode_special_tokens_is_cut_in_the_kernel_call():
    ref, ours = _with_added(MIXED)
    for tok in (ref, ours):
        tok.encode_special_tokens = True
    assert ours.added.cut_matchers() is not None
    texts = ["x<tag>y  z", "中文 <tag>", "ag>x<tag>ag>x"]
    assert ours.encode_ids_batch(texts) == _ids(ref, texts)
    assert [ours.encode_ids(t) for t in texts] == _ids(ref, texts)


def test_lone_surrogates_raise():
    _, ours = _with_added(SPACE_RUNS)
    with pytest.raises(UnicodeEncodeError):
        ours.encode_ids_batch(["fine  text", "bad \ud800  here"])


# normalizers that change the text between added tokens: GPT-NeoX's NFC, CLIP's sequence, one
# that makes a token ("é é" from "É\u0301 É"), one whose output is longer than its input
NORMALIZERS = {
    "nfc": lambda: hn.NFC(),
    "clip": lambda: hn.Sequence([hn.NFC(), hn.Replace(tokenizers.Regex(r"\s+"), " "), hn.Lowercase()]),
    "nfkc-lower": lambda: hn.Sequence([hn.NFKC(), hn.Lowercase()]),
    "longer": lambda: hn.Sequence([hn.Replace("x", "  x"), hn.NFD()]),
}
_NORMALIZED_PIECES = _PIECES + ["É", "e\u0301", "E\u0301", "ﬁ", "Ａ", "\u00a0", "X", "  \u3000 "]


@pytest.mark.parametrize("name", sorted(NORMALIZERS))
@settings(max_examples=100, deadline=None)
@given(texts=st.lists(st.lists(st.sampled_from(_NORMALIZED_PIECES), max_size=30).map("".join), min_size=1,
                      max_size=6))
def test_cut_after_a_normalizer_is_hfs_cut(name, texts):
    _assert_batches_are_hfs(*_normalized_pair(name), texts)


def _normalized_pair(name):
    """MIXED's tokens less those whose normalized text repeats an earlier one's (CLIP's `\\s+`
    makes every space run " "): HF then picks one of them by a hash map's order, run to run."""
    key = ("normalized", name)
    if key not in _CACHE:
        seen, tokens = set(), []
        for t in MIXED:
            text = NORMALIZERS[name]().normalize_str(t["content"]) if t.get("normalized", True) else t["content"]
            if text not in seen:
                seen.add(text)
                tokens.append(t)
        _CACHE[key] = _with_added(tokens, NORMALIZERS[name]())
        assert _CACHE[key][1].added.cut_matchers() is not None
    return _CACHE[key]


def test_a_normalizer_does_not_send_texts_to_the_python_plan(monkeypatch):
    """With a normalizer (GPT-NeoX's NFC) the texts are cut and normalized in the kernel call,
    not planned text by text in Python (which cost GPT-NeoX's code 4.6x GPT-2's instructions)."""
    ref, ours = _normalized_pair("nfc")
    texts = ["def f(x):\n        return  x", "Cafe\u0301  <tag> ag>x", "plain"]
    want = _ids(ref, texts)

    def no_plan(text):
        raise AssertionError("the Python plan ran")

    monkeypatch.setattr(ours, "_plan", no_plan)
    assert ours.encode_ids_batch(texts, num_threads=1) == want
    assert [e.ids for e in ours.encode_batch(texts, num_threads=1)] == want


def test_a_surrogate_the_normalizer_puts_raises():
    """A Replace whose content is a lone surrogate (json allows "\\ud800"; HF cannot build it)."""
    ref = build(pre_tokenizer=hp.ByteLevel(add_prefix_space=False), byte_level_alphabet=True,
                normalizer=hn.Replace("q", "r"))
    doc = json.loads(ref.to_str())
    doc["normalizer"]["content"] = "\ud800"
    doc["added_tokens"].append({"id": 10_000, "content": "  ", "single_word": False, "lstrip": False,
                                "rstrip": False, "normalized": True, "special": False})
    ours = Tokenizer.from_str(json.dumps(doc))
    assert ours.encode_ids_batch(["a  b"]) == ours.encode_ids_batch(["a  b"])
    with pytest.raises(UnicodeEncodeError):
        ours.encode_ids_batch(["a  q b"])


def test_cut_ids_as_bytes_are_the_lists():
    """`as_bytes` (what encode_batch's Encodings hold: no list copied on each read of .ids) gives
    the same ids as uint32s, text by text."""
    from array import array

    from fastbpe._added_split import encode_cut_texts
    _, ours = _pairs(MIXED)
    texts = ["", "a  b <tag>", "中文 é é  ag>x", "x" * 300 + "     " * 40, "😀<ta"]
    args = (ours.model.table, ours._kind, *ours.added.cut_matchers(), texts)
    lists, held = encode_cut_texts(*args), encode_cut_texts(*args, None, True)
    assert all(type(h) is bytes for h in held)
    assert [array("I", h).tolist() for h in held] == lists
    assert [e.ids for e in ours.encode_batch(texts)] == lists


def test_an_empty_normalizer_and_several_first_characters_keep_plain_texts_whole():
    """A normalizer that changes nothing (DeepSeek-V3's empty Sequence) lets normalized tokens be
    looked for in the text itself, and tokens starting with two characters (GLM-4's "[PAD..]" and
    "<|...|>") are tested for both: a text holding neither goes to the kernel whole; HF's ids."""
    tokens = [{"content": "<tag>", "normalized": False, "special": True}, {"content": "[x]", "normalized": True},
              {"content": "~~", "normalized": True}]
    ref, ours = _with_added(tokens, hn.Sequence([]))
    texts = ["plain text", "a <tag> b", "b [x] c", "c [y", "d ~~ e", "é <ta", "中文"]
    assert ours._plain_texts(texts) == [True, False, False, False, False, False, True]
    _assert_batches_are_hfs(ref, ours, texts)
    assert [ours.encode(t).ids for t in texts] == [ref.encode(t).ids for t in texts]
    assert [ours.encode_ids(t) for t in texts] == [ref.encode(t).ids for t in texts]


def test_texts_plain_after_normalizing_go_whole():
    """With a normalizer (Qwen3.5's NFC), a text is encoded whole when none of the raw tokens'
    first characters is in it and none of the normalized tokens' is in its normalized text; a
    normalizer that makes a token's first character ("q" -> "<") still sends the text to the cut."""
    tokens = [{"content": "<t>", "normalized": True}, {"content": "[p]", "normalized": True},
              {"content": "<raw>", "normalized": False, "special": True}]
    ref, ours = _with_added(tokens, hn.Sequence([hn.NFC(), hn.Replace("q", "<")]))
    texts = ["plain text", "Cafe\u0301 au lait", "a qt> b", "a <t> b", "b [p] c", "<raw>", "c [y", "中文 e\u0301"]
    plain, whole = ours._plain_after_normalizing(texts)
    assert plain == [True, True, False, False, False, False, False, True]
    assert whole == ["plain text", "Caf\u00e9 au lait", "中文 \u00e9"]
    _assert_batches_are_hfs(ref, ours, texts)
    assert ours._plain_after_normalizing(texts + [b"x"]) is None


def _assert_short_calls_are_hfs(ref, ours, texts):
    """encode (every field) and encode_ids of each text, both flags, give HF's answer."""
    for text in texts:
        for flag in (False, True):
            enc, want = ours.encode(text, add_special_tokens=flag), ref.encode(text, add_special_tokens=flag)
            for field in ("ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask",
                          "word_ids", "sequence_ids"):
                assert getattr(enc, field) == getattr(want, field), (field, text)
            assert ours.encode_ids(text, add_special_tokens=flag) == want.ids, text


def test_short_call_with_tokens_matched_after_normalizing():
    """Qwen3.5's shape (NFC, normalized tokens): encode of a text is one compiled call when no raw
    token is in it and no normalized one in its normalized text (it took the
    Python pipeline: ~95,000 instructions a 100-character call against Qwen2.5's ~8,800); a text
    that holds a token, or whose normalizer makes one ("q" -> "<"), is cut at it in the kernel call."""
    tokens = [{"content": "<t>", "normalized": True}, {"content": "\u00e9t\u00e9", "normalized": True},
              {"content": "<raw>", "normalized": False, "special": True}]
    ref, ours = _with_added(tokens, hn.Sequence([hn.NFC(), hn.Replace("q", "<")]))
    texts = ["plain text", "Cafe\u0301 au lait", "a qt> b", "a <t> b", "un e\u0301te\u0301 chaud", "<raw>",
             "\u00e9t\u00e9", "中文 e\u0301", "", "a < b"]
    ours.encode("x")
    call = ours._short[7]
    for t in texts:   # every exact str is one compiled call: whole, or cut at its tokens in the kernel call
        assert call(t, False).ids == ref.encode(t, add_special_tokens=False).ids, t
    _assert_short_calls_are_hfs(ref, ours, texts)
    _assert_batches_are_hfs(ref, ours, texts)


@pytest.mark.parametrize("normalizer", [None, "nfc"], ids=["phi-2", "gpt-neox"])
def test_short_call_searches_texts_holding_a_first_character(normalizer):
    """Phi-2's and GPT-NeoX's tokens are runs of spaces and tabs and "<|...": every text with a
    space held a token's first character, so every encode took the general way (~36,000 and
    ~100,000 instructions a 100-character call).  The short call now searches such a text with
    the tokens' automaton: one holding no token is encoded whole, another cut at its tokens in the
    kernel call; HF's answer either way.
    (A batch still cuts such texts: the cut searches them once.)"""
    tokens = [{"content": "  "}, {"content": "   "}, {"content": "\t\t"},
              {"content": "<|endoftext|>", "normalized": False, "special": True}]
    ref, ours = _with_added(tokens, hn.NFC() if normalizer else None)
    texts = ["plain text here", "a  b", "x\t\ty", "a\tb c", "<|endoftext|>", "a < b |", "中文 x", "tab\t",
             "e\u0301 x", " ", "  ", "a \t b", "<|endoftext", "  <|endoftext|>"]
    ours.encode("x")
    call = ours._short[7]
    for t in texts:   # whole when no token is in it, else cut at its tokens in the kernel call
        assert call(t, False).ids == ref.encode(t, add_special_tokens=False).ids, t
    _assert_short_calls_are_hfs(ref, ours, texts)
    _assert_batches_are_hfs(ref, ours, texts)


def test_runs_of_every_length_are_hfs_cut():
    """GPT-NeoX's shape after its NFC: normalized runs of 2-24 spaces and "[PAD…]" tokens,
    raw specials; runs of 1-40 spaces (the kernel answers a run by its length), tabs and
    newlines beside them, each run length at the start, middle and end of a text."""
    tokens = ([{"content": " " * k} for k in range(2, 25)]
              + [{"content": f"[PAD{k}]"} for k in (1, 12, 123)]
              + [{"content": "<|endoftext|>", "normalized": False, "special": True}])
    ref, ours = _with_added(tokens, hn.NFC())
    texts = []
    for k in range(1, 41):
        run = " " * k
        texts += [run, run + "x", "x" + run, "def f():\n" + run + "return [PAD1]" + run + "\t" + run,
                  "\t" + run + "\n" + run + "<|endoftext|>" + run + "[PAD12" + run + "é"]
    _assert_batches_are_hfs(ref, ours, texts)
