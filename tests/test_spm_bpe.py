"""The compiled char-level BPE model (`_char_bpe.CharBPE`, `hf/char_level.py`): SentencePiece-style
tokenizer.json files (Prepend + Replace normalizers or Metaspace; byte_fallback, unk_token,
fuse_unk, ignore_merges) give HF tokenizers' ids, tokens, offsets, word ids and decode, on
files trained here with every setting, on generated hard strings, against the Python pipeline,
and on the shared Phi-3 file when ../shared is present."""
from __future__ import annotations

import json
import lzma
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datasources import CORPUS_DIR, SHARED
from hf_reference import FIELDS, SAMPLES, build

from tokenizers import Tokenizer as HFTokenizer  # noqa: E402
from tokenizers import decoders as D  # noqa: E402
from tokenizers import normalizers as N  # noqa: E402
from tokenizers import pre_tokenizers as P  # noqa: E402

from fastbpe._char_bpe import PREPEND, REPLACE_SPACE, CharBPE  # noqa: E402
from fastbpe.hf import Tokenizer  # noqa: E402

META = "\u2581"
SPM_DECODER = D.Sequence([D.Replace(META, " "), D.ByteFallback(), D.Fuse(), D.Strip(" ", 1, 0)])
PIECES = list("aZ09 \t\n'-.,!?") + [
    "  ", "   ", META, META + META, " " + META, "the ", "quick ", "lazy dog", "é", "ß", "日本", "語", "😀", "🎉",
    "\U0001d55c", "\u0301", "\x00", "\x7f", "\u00a0", "Ω", "ꙮ", "\U00010348", "<s>", "</s>", "<unk>", "<0x41>",
    "ing", "tion", "ZZZ"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)
TEXTS = SAMPLES + ["ꙮꙮꙮ ꙮ x", "Ω😀Ω a", "\U00010348\U00010348", "lazy  dog   ", META * 5 + "a", "a" * 300,
                   " " * 50 + "x", "<s>a</s> b <unk>c", "日本語日本語 語"]


def _words_json() -> dict:
    """A vocabulary trained on words (Metaspace split): no merge joins across a "▁"."""
    ref = build(pre_tokenizer=P.Metaspace(), vocab_size=420, special_tokens=("<unk>", "<s>", "</s>"))
    return json.loads(ref.to_str())


def _text_json() -> dict:
    """One trained on whole lines (no pre-tokenizer): merges across "▁", so no cut applies."""
    ref = build(normalizer=N.Sequence([N.Prepend(META), N.Replace(" ", META)]), vocab_size=420)
    return json.loads(ref.to_str())


_BASES: dict = {}


def variant(base: str, normalizer=None, pre_tokenizer=None, fallback_bytes=True, **model) -> dict:
    """A tokenizer.json document: the trained base with these stages and model flags; with
    fallback_bytes, the 256 <0xNN> tokens join the vocabulary (limited ones: only some)."""
    if base not in _BASES:
        _BASES[base] = _words_json() if base == "words" else _text_json()
    doc = json.loads(json.dumps(_BASES[base]))
    doc["normalizer"] = normalizer
    doc["pre_tokenizer"] = pre_tokenizer
    doc["decoder"] = json.loads(SPM_DECODER.__getstate__())
    vocab = doc["model"]["vocab"]
    if fallback_bytes:
        n = max(vocab.values()) + 1
        for b in (range(256) if fallback_bytes is True else fallback_bytes):
            vocab.setdefault(f"<0x{b:02X}>", n + b)
    doc["model"].update(model)
    return doc


PREPEND_REPLACE = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": META},
                                                       {"type": "Replace", "pattern": {"String": " "}, "content": META}]}
REPLACE_ONLY = {"type": "Replace", "pattern": {"String": " "}, "content": META}


def char_level_doc(vocab: dict, merges: list) -> dict:
    """A Llama-2-style tokenizer.json over this small vocabulary (the 256 <0xNN> byte tokens
    added after it) and these merges: Prepend + Replace, byte fallback, fused <unk>."""
    vocab = dict(vocab)
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": PREPEND_REPLACE,
            "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                      "vocab": vocab, "merges": merges}}


def both_from(doc: dict):
    """(HF tokenizers, fastbpe) loaded from the same document."""
    return HFTokenizer.from_str(json.dumps(doc)), Tokenizer.from_str(json.dumps(doc))


def metaspace(scheme: str, split: bool) -> dict:
    return {"type": "Metaspace", "replacement": META, "prepend_scheme": scheme, "split": split}


CONFIGS = {
    "llama2": ("words", PREPEND_REPLACE, None, dict(byte_fallback=True, unk_token="<unk>", fuse_unk=True)),
    "llama2-whole-text": ("text", PREPEND_REPLACE, None, dict(byte_fallback=True, unk_token="<unk>", fuse_unk=True)),
    "unk-fused": ("words", PREPEND_REPLACE, None, dict(byte_fallback=False, unk_token="<unk>", fuse_unk=True)),
    "unk-not-fused": ("text", PREPEND_REPLACE, None, dict(byte_fallback=False, unk_token="<unk>", fuse_unk=False)),
    "no-unk": ("words", PREPEND_REPLACE, None, dict(byte_fallback=False, unk_token=None, fuse_unk=False)),
    "gemma": ("words", REPLACE_ONLY, None, dict(byte_fallback=True, unk_token="<unk>", fuse_unk=True)),
    "ignore-merges": ("words", PREPEND_REPLACE, None, dict(byte_fallback=True, unk_token="<unk>", ignore_merges=True)),
    **{f"metaspace-{scheme}-{'split' if split else 'whole'}":
       ("words", None, metaspace(scheme, split), dict(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
       for scheme in ("always", "first", "never") for split in (True, False)},
    "metaspace-ignore-merges": ("words", None, metaspace("always", True),
                                dict(byte_fallback=True, unk_token="<unk>", ignore_merges=True)),
}

_BUILT: dict = {}


def built(name: str):
    """(HF's tokenizer, fastbpe's, fastbpe's on the Python pipeline) of a config."""
    if name not in _BUILT:
        base, normalizer, pre, model = CONFIGS[name]
        text = json.dumps(variant(base, normalizer, pre, **model))
        ref, ours, pipeline = HFTokenizer.from_str(text), Tokenizer.from_str(text), Tokenizer.from_str(text)
        pipeline._char_path = None   # the readable reference: HF's stages one by one
        _BUILT[name] = (ref, ours, pipeline)
    return _BUILT[name]


def assert_same(ref, ours, text: str, pair: str | None = None) -> None:
    for add in (True, False):
        want, got = ref.encode(text, pair, add_special_tokens=add), ours.encode(text, pair, add_special_tokens=add)
        for field in FIELDS:
            assert getattr(got, field) == getattr(want, field), (field, text, pair, add)
        if pair is None:
            assert ours.encode_ids(text, add_special_tokens=add) == want.ids, (text, add)
    assert ours.decode(want.ids) == ref.decode(want.ids)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_configs_take_the_kernel(name):
    _, ours, _ = built(name)
    assert ours._char_path is not None, name


def test_cut_before_meta_decided_from_the_merges():
    """Merges trained on words never join across "▁": the text is cut into pieces there.
    Merges trained on whole lines do: those files merge each text whole."""
    assert built("llama2")[1].model.char_model.cut_before_meta
    assert not built("llama2-whole-text")[1].model.char_model.cut_before_meta


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_samples_match_hf(name):
    ref, ours, _ = built(name)
    for text in TEXTS:
        assert_same(ref, ours, text)
    assert_same(ref, ours, "a pair  of texts", " second one ")
    batch = ours.encode_batch(TEXTS)
    for got, want in zip(batch, ref.encode_batch(TEXTS)):
        for field in FIELDS:
            assert getattr(got, field) == getattr(want, field), (field, name)
    assert ours.encode_ids_batch(TEXTS, add_special_tokens=False) == \
        [e.ids for e in ref.encode_batch(TEXTS, add_special_tokens=False)]


BATCH_OPTIONS = {   # name -> (truncation, padding) set on both sides
    "plain": (None, None),
    "truncation": (dict(max_length=6, stride=2), None),
    "padding-left": (None, dict(direction="left", pad_id=2, pad_token="</s>")),
    "both": (dict(max_length=9, direction="left"), dict(length=12, pad_id=2, pad_token="</s>")),
}


@pytest.mark.parametrize("order", ["ids-first", "offsets-first"])
@pytest.mark.parametrize("options", sorted(BATCH_OPTIONS))
def test_batches_with_a_post_processor_truncation_and_padding_match_hf(options, order):
    """encode_batch on the char-level kernel holds ids at once and makes every other field
    when first read (the byte-level batches' lazy Encodings): each field equals HF's, read in
    either order, with a post-processor, truncation (overflowing pieces) and padding."""
    from tokenizers import processors

    ref = HFTokenizer.from_str(json.dumps(variant("words", PREPEND_REPLACE, None, byte_fallback=True,
                                                  unk_token="<unk>", fuse_unk=True)))
    ref.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A </s> $B:1", special_tokens=[("<s>", ref.token_to_id("<s>")),
                                                                  ("</s>", ref.token_to_id("</s>"))])
    ours = Tokenizer.from_str(ref.to_str())
    truncation, padding = BATCH_OPTIONS[options]
    for tok in (ref, ours):
        tok.no_truncation()
        if truncation:
            tok.enable_truncation(**truncation)
        if padding:
            tok.enable_padding(**padding)
    texts = TEXTS + ["a<s>b c</s> d"]
    for add in (True, False):
        got, want = ours.encode_batch(texts, add_special_tokens=add), ref.encode_batch(texts, add_special_tokens=add)
        assert all(type(e.lazy_source) is tuple for e in got)   # ids only, so far
        if options == "plain":   # the kernel's bytes (EncodingIds), but a text cut at an added token: a list
            assert [type(e._ids) for e in got] == [list if "<" in t else bytes for t in texts]
        fields = FIELDS if order == "ids-first" else FIELDS[::-1]
        for g, w, t in zip(got, want, texts):
            for field in fields:
                assert getattr(g, field) == getattr(w, field), (field, t, add)
            assert [o.ids for o in g.overflowing] == [o.ids for o in w.overflowing], (t, add)


@pytest.mark.parametrize("name", sorted(CONFIGS))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT, pair=st.one_of(st.none(), TEXT))
def test_generated_strings_match_hf(name, text, pair):
    ref, ours, _ = built(name)
    assert_same(ref, ours, text, pair)


@pytest.mark.parametrize("name", ["llama2", "llama2-whole-text", "unk-not-fused", "metaspace-first-split"])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(TEXT, max_size=6))
def test_kernel_matches_the_python_pipeline(name, texts):
    """The kernel and the pipeline (HF's stages one by one in Python) agree field by field."""
    _, ours, pipeline = built(name)
    for got, want in zip(ours.encode_batch(texts), pipeline.encode_batch(texts)):
        for field in FIELDS:
            assert getattr(got, field) == getattr(want, field), field


def _ascii_texts() -> list[str]:
    """Mostly ASCII texts (CharBPE.encode_spaced probes their words in place): runs of spaces before,
    inside and after words, words of 15 and 16 bytes after the space, many first-seen words
    (the rest of a text then goes in one run) and many indented lines (likewise)."""
    rng = random.Random(28)
    words = ["the", "quick", "x", "abcdefghijklmno", "abcdefghijklmnop", "a-b", "it's", "ZZZ", "ing", "\t", "\n",
             "antidisestablishmentarianism", "<s>", "\x00", "\x7f"]
    texts = ["", " ", "  ", "a", " a", "a ", "a  b", "    def f():\n        return 1\n" * 5, "x\n   y" * 12]
    for _ in range(60):
        fresh = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 18))) for _ in range(40)]
        texts.append(" " * rng.choice([0, 0, 1, 3]) + "".join(
            rng.choice(words + fresh) + " " * rng.choice([1, 1, 1, 2, 4]) for _ in range(rng.randint(0, 60))))
    # non-ASCII strs with few non-ASCII characters take the same path from their UTF-8, unless
    # they hold the meta character itself (then normalized as before)
    texts += [t.replace("'", "\u2019") + " caf\u00e9" for t in texts[:40]] + [
        t + " \U0001f600" for t in texts[40:50]] + ["a\u2581 b\u2019", "x \u2581 y \u2581\u2581 z\u00e9", "\u2581 a\u2019 b",
                                                 "ab\u2581  cd \u2581x" + "\u2019" * 3 + " e" * 40,
                                                 "the " * 70 + "\u65e5\u672c\u8a9e" * 40 + " \u05e9\u05dc\u05d5\u05dd" * 20]
    return texts


@pytest.mark.parametrize("name", ["llama2", "llama2-whole-text", "unk-fused", "no-unk", "gemma", "ignore-merges",
                                  "metaspace-first-whole", "metaspace-always-whole", "metaspace-never-whole",
                                  "metaspace-first-split", "metaspace-always-split", "metaspace-never-split",
                                  "metaspace-ignore-merges"])
def test_ascii_texts_probed_in_place_match_hf(name):
    ref, ours, _ = built(name)
    texts = _ascii_texts()
    want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
    for _ in range(2):   # the second time most words are in the thread's cache
        assert ours.encode_ids_batch(texts, add_special_tokens=False) == want
        assert [ours.encode_ids(t, add_special_tokens=False) for t in texts] == want


def test_added_token_later_in_text_gets_no_prepended_meta_with_scheme_first():
    ref, ours, _ = built("metaspace-first-whole")
    assert_same(ref, ours, "a<s>b c</s> d")
    assert_same(ref, ours, "<s>b")


def test_long_texts_match_hf():
    """Long runs take the heap loop (one word of 100k characters), as do whole-text files."""
    for name in ("llama2", "llama2-whole-text"):
        ref, ours, _ = built(name)
        for text in ("a" * 100_000, " " * 100_000, "the lazy dog " * 8000, "9" * 50_000, "日本" * 30_000):
            assert ours.encode_ids(text) == ref.encode(text).ids


def test_some_fallback_bytes_missing_is_refused_with_an_unk_token():
    """byte_fallback with only some <0xNN> tokens and an unk token: HF writes a pending unk
    after the fallback bytes; the kernel does not take such a file (the pipeline does)."""
    text = json.dumps(variant("words", PREPEND_REPLACE, None, fallback_bytes=range(0x80),
                              byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    ours = Tokenizer.from_str(text)
    assert ours._char_path is None
    assert "byte_fallback" in ours.model.char_model_refusal
    ref = HFTokenizer.from_str(text)
    for s in ("日本 x é😀", "ok"):
        assert ours.encode(s).ids == ref.encode(s).ids


def test_kernel_entry_points():
    _, ours, _ = built("llama2")
    char = ours.model.char_model
    kind = PREPEND | REPLACE_SPACE
    assert char.encode_text("the lazy dog", kind) == ours.encode_ids("the lazy dog", add_special_tokens=False)
    assert char.encode_text("the lazy dog", kind, True).tolist() == char.encode_text("the lazy dog", kind)
    assert char.encode_texts(["a b", ""], kind) == [char.encode_text("a b", kind), []]
    with pytest.raises(UnicodeEncodeError):
        char.encode_text("a\ud800b", kind)
    with pytest.raises(ValueError):
        char.encode_text("a", 99)
    with pytest.raises(TypeError):
        char.encode_texts([b"a"], kind)
    assert char.initial_ids("ab") == [ours.model.vocab["a"], ours.model.vocab["b"]]


def test_build_refuses_bad_inputs():
    with pytest.raises(ValueError, match="unk_token"):
        CharBPE.build({"a": 0}, [], "<unk>")
    with pytest.raises(ValueError, match="one character"):
        CharBPE.build({"a": 0}, [], None, meta="ab")


# -- the shared Phi-3 file -------------------------------------------------------------------

PHI3 = SHARED / "data" / "vocab" / "hf" / "phi3" / "tokenizer.json"
_PHI3: list = []


def phi3():
    if not PHI3.exists():
        pytest.skip(f"{PHI3} not found (shared data absent)")
    if not _PHI3:
        _PHI3.append((HFTokenizer.from_file(str(PHI3)), Tokenizer.from_file(PHI3)))
    return _PHI3[0]


def test_phi3_takes_the_kernel_and_cuts():
    _, ours = phi3()
    assert ours._char_path is not None
    assert ours.model.char_model.cut_before_meta


@pytest.mark.parametrize("corpus", ["large_en", "multilingual", "code"])
def test_phi3_corpus_documents_match_hf(corpus):
    ref, ours = phi3()
    path = CORPUS_DIR / f"{corpus}.txt.xz"
    if not path.exists():
        pytest.skip(f"{path} not found (shared data absent)")
    with lzma.open(path, "rt", encoding="utf-8") as f:
        text = f.read(400_000)
    docs = [text[i:i + 2000] for i in range(0, len(text), 2000)]
    want = ref.encode_batch(docs, add_special_tokens=True)
    assert ours.encode_ids_batch(docs) == [e.ids for e in want]
    for got, w in zip(ours.encode_batch(docs[:60]), want):
        for field in FIELDS:
            assert getattr(got, field) == getattr(w, field), field


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT, pair=st.one_of(st.none(), TEXT))
def test_phi3_generated_strings_match_hf(text, pair):
    ref, ours = phi3()
    assert_same(ref, ours, text, pair)
    assert_same(ref, ours, "<|user|>" + text + "<|end|>\n<|assistant|>" + (pair or ""))


@pytest.mark.parametrize("text", ["----", "a----", "a-----", "x ---- y", "a----b"])
def test_offsets_when_a_merge_takes_a_later_merges_token(text):
    # Baichuan's vocabulary ranks "-- -" before "- -": the merged token's byte length was read in
    # one pass in merge order, left unknown, and its end offset became the rest of the word
    vocab = {"<unk>": 0, "a": 1, "\u2581": 2, "-": 3, "--": 4, "---": 5, "\u2581a": 6}
    ref, ours = both_from(char_level_doc(vocab, ["\u2581 a", "-- -", "- -"]))
    assert ours.engine == "kernel"
    want, got = ref.encode(text), ours.encode(text)
    assert (got.ids, got.offsets) == (want.ids, want.offsets), (want.tokens, want.offsets, got.offsets)


def test_phi3_meta_character_beside_spaces_in_mostly_ascii_text():
    """A literal "▁" before a space in a mostly-ASCII str: the normalized text has a run of
    meta characters there ("▁▁" is a Phi-3 token), which the in-place word probes would cut."""
    ref, ours = phi3()
    texts = ["a\u2581 b\u2019", "x\u2581  y\u00e9 z", "the \u2581\u2581 end\u2019", "\u2581 a", "a \u2581 b \u2581",
             "it\u2019s a\u2581   b"]
    texts += [t + " more words here" * 5 for t in texts]
    assert ours.encode_ids_batch(texts, add_special_tokens=False) == [
        e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]


_RUN_MERGES = {   # the merges of "▁" runs (mm) placed last, first, or with a run token joined to a word
    "last": ["\u2581 a", "a b", "\u2581 ab", "\u2581 b", "\u2581 \u2581", "\u2581\u2581 \u2581\u2581", "\u2581\u2581 \u2581"],
    "first": ["\u2581 \u2581", "\u2581\u2581 \u2581\u2581", "\u2581\u2581 \u2581", "\u2581 a", "a b", "\u2581 ab", "\u2581 b"],
    "joined": ["\u2581 a", "a b", "\u2581 ab", "\u2581 b", "\u2581\u2581 c", "\u2581 \u2581", "\u2581\u2581 \u2581\u2581",
               "\u2581\u2581 \u2581"],
    "meta-word": ["\u2581 a", "a b", "\u2581 ab", "\u2581 b", "\u2581 \u2581a", "\u2581 \u2581", "\u2581\u2581 \u2581\u2581",
                  "\u2581\u2581 \u2581"],
}


@pytest.mark.parametrize("order", sorted(_RUN_MERGES))
def test_runs_of_meta_characters_before_a_word_merge_apart_only_when_exact(order):
    """A run of k "▁" and a word (code's indentation) is merged as "▁" + word and the run of
    k - 1 (or k) apart when every merge of "▁" runs ranks last and none joins a run to a word
    (runs_apart; an ASCII text's indented words probed as " word", the run's ids from a table
    of runs of up to 3 ids: meta_runs); the other orders keep merging the piece whole.  Each
    order against HF."""
    vocab = {"<unk>": 0, "\u2581": 1, "a": 2, "b": 3, "\u2581a": 4, "ab": 5, "\u2581ab": 6, "\u2581b": 7, "\u2581\u2581": 8,
             "\u2581\u2581\u2581\u2581": 9, "\u2581\u2581\u2581": 10, "\u2581\u2581a": 11, "c": 12, "\u2581\u2581c": 13}
    ref, ours = both_from(char_level_doc(vocab, _RUN_MERGES[order]))
    assert ours.engine == "kernel"
    assert ours.model.char_model.runs_apart == ours.model.char_model.meta_runs == (order == "last")
    words = ["a", "b", "ab", "ba", "abab", "c", "\u00e9a", "x ab", "a\u2581", "\u2581"]
    texts = [" " * k + w + " " * j for k in [*range(12), 13, 14, 20] for w in words for j in (0, 1, 3)]
    texts += [" ".join(texts[i:i + 7]) for i in range(0, len(texts), 7)]
    for text in texts[:40]:
        assert_same(ref, ours, text)
    assert ours.encode_ids_batch(texts) == [e.ids for e in ref.encode_batch(texts)]
    assert ours.encode_ids_batch(texts) == [e.ids for e in ref.encode_batch(texts)]   # from the cache


# Gemma 4's file: one merge (">" + "▁</") joins a character to the "▁" after it.  The cut before "▁"
# stays everywhere else (CUT_JOINS_META on ">"): the old rule turned it off for the whole file.
_JOIN_VOCAB = {"<unk>": 0, "\u2581": 1, "a": 2, "b": 3, ">": 4, "<": 5, "/": 6, "x": 7, "\u00e9": 8, "</": 9,
               "\u2581</": 10, ">\u2581</": 11, "\u2581a": 12, "ab": 13, "\u2581ab": 14, "\u2581\u2581": 15,
               "\u2581b": 16, "a>": 17, "\u2581x": 18}
_JOIN_MERGES = [["<", "/"], ["\u2581", "</"], ["a", ">"], [">", "\u2581</"], ["\u2581", "a"], ["a", "b"],
                ["\u2581", "ab"], ["\u2581", "\u2581"], ["\u2581", "b"], ["\u2581", "x"]]
JOIN_PIECES = [">", " ", "  ", "</", "<", "/", "a", "b", "x", "ab", " </", "> </", ">\u2581</", "\u2581", "a>", "\u00e9",
               ">>", "\n", "\u00e9>", "<0x3E>", "\U0001f600"]


def _join_doc(normalizer: dict, vocab: dict = _JOIN_VOCAB, merges: list = _JOIN_MERGES) -> dict:
    doc = char_level_doc(vocab, merges)
    doc["normalizer"] = normalizer
    return doc


@pytest.mark.parametrize("normalizer", ["prepend", "replace"])
def test_cut_before_meta_except_after_a_character_a_merge_joins_to_it(normalizer):
    """A file with a merge ">" + "▁</" still cuts before every "▁" but the ones after ">" (the
    old rule, one such merge, cut nowhere), and gives HF's ids and offsets on texts dense with
    "> </" (Replace alone is Gemma's: its first word is probed apart, encode_spaced)."""
    ref, ours = both_from(_join_doc(PREPEND_REPLACE if normalizer == "prepend" else REPLACE_ONLY))
    assert ours.engine == "kernel"
    cm = ours.model.char_model
    assert cm.cut_before_meta and cm.joins_meta and not cm.runs_apart
    rnd = random.Random(28)
    texts = ["a> </b", "x > </y", "> </", ">  </x", "a>   </b> </ab", "<a> </a>" * 40, "ab ab> </ab ab",
             "\u00e9> </a", " > </", ">\u2581</", "ab" * 20 + "> </" + " ab" * 20]
    texts += ["".join(rnd.choice(JOIN_PIECES) for _ in range(rnd.randint(1, 24))) for _ in range(400)]
    for text in texts[:150]:
        assert_same(ref, ours, text)
    for _ in range(2):   # the second time from the cache
        assert ours.encode_ids_batch(texts) == [e.ids for e in ref.encode_batch(texts)]
        assert ours.encode_ids_batch(texts, add_special_tokens=False) == \
            [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]


@pytest.mark.parametrize("left", ["\u00e9", "<0x3E>"])
def test_a_merge_joining_meta_after_a_byte_token_or_non_ascii_cuts_nowhere(left):
    """Where the character joined to "▁" is not ASCII text (a <0xNN> token stands for any character
    with that byte), the cut before "▁" stays off for the whole file, and the ids are HF's."""
    vocab = dict(_JOIN_VOCAB)
    vocab[left + "\u2581</"] = len(vocab)
    merges = _JOIN_MERGES + [[left, "\u2581</"]]
    doc = _join_doc(REPLACE_ONLY, vocab, merges)
    if left.startswith("<0x"):
        del doc["model"]["vocab"][">"]   # ">" falls back to <0x3E>
        doc["model"]["vocab"] = {t: i for i, t in enumerate(doc["model"]["vocab"])}
        doc["model"]["merges"] = [m for m in merges if ">" not in m and not m[0].endswith(">") and
                                  ">" + "\u2581</" != "".join(m) or m == merges[-1]]
    ref, ours = both_from(doc)
    assert ours.engine == "kernel"
    assert not ours.model.char_model.cut_before_meta
    for text in ["a> </b", "\u00e9 </a", "x\u00e9 </ab > </", "<a> </a>" * 5]:
        assert_same(ref, ours, text)


# "\n" and "é" have no token in this vocabulary: byte fallback gives <0x0A> and <0xC3> <0xA9>.
_INERT_VOCAB = {"<unk>": 0, META: 1, "a": 2, "b": 3, ".": 4, "ab": 5, META + "a": 6, META + "ab": 7, "b.": 8}
_INERT_MERGES = [["a", "b"], [META, "a"], [META, "ab"], ["b", "."]]


@pytest.mark.parametrize("merged", [None, ("<0x0A>", "a"), ("<0xC3>", "<0xA9>")])
def test_a_character_falling_back_to_bytes_no_merge_takes_cuts_its_piece(merged):
    """Where no merge takes a character's <0xNN> tokens, merge_cuts cuts on both sides of it
    (Phi-3's "word.\nThe": "\n" was inside one first-seen piece); where one does, not; HF's ids
    and offsets either way."""
    from array import array

    from fastbpe._char_cuts import merge_cuts
    vocab, merges = dict(_INERT_VOCAB), list(_INERT_MERGES)
    if merged:
        vocab["".join(merged)] = len(vocab)
        merges.append(list(merged))
    doc = char_level_doc(vocab, merges)
    ids = doc["model"]["vocab"]
    rows = array("q", [ids[x] for left, right in merges for x in (left, right, left + right)])
    _, ascii_cut, flags, _ = merge_cuts(ids, rows, META, len(ids), None, True)
    words = array("Q", ascii_cut)
    newline_cut = merged != ("<0x0A>", "a")
    for a, b in [(".", "\n"), ("\n", "a"), ("\n", "\n")]:
        assert (words[2 * ord(a) + (ord(b) >> 6)] >> (ord(b) & 63)) & 1 == newline_cut, (a, b)
    assert (flags[0xE9] == 7) == (merged != ("<0xC3>", "<0xA9>"))   # CUT_TOKEN | CUT_AFTER | CUT_BEFORE
    _, no_fallback, _, _ = merge_cuts(ids, rows, META, len(ids), None, False)
    assert not (array("Q", no_fallback)[2 * ord(".")] >> ord("\n")) & 1
    ref, ours = both_from(doc)
    assert ours.engine == "kernel"
    texts = ["ab.\nab", "a\na", "b\n\nab", "\u00e9", "ab\u00e9ab", "\nab", "ab\n", " a\n b \u00e9.\n", "ab.\n" * 30,
             "\u00e9\u00e9a\u00e9\n\u00e9", "a\tb\r\nab"]
    for text in texts:
        assert_same(ref, ours, text)
    for _ in range(2):   # the second time from the cache
        assert ours.encode_ids_batch(texts) == [e.ids for e in ref.encode_batch(texts)]


def test_gemma4_file_cuts_before_meta_except_after_gt_and_matches_hf():
    """Gemma 4's own tokenizer.json (tests/family_files.py; 262k tokens, one of them ">▁</"):
    the cut before "▁" is on, not after ">"; HF 0.23's ids and offsets on texts dense with
    "> </" (HTML, XML, shell redirections)."""
    import family_files as ff
    path, why_not = ff.build("gemma-4")
    if path is None:
        pytest.skip(f"gemma-4: {why_not}")
    ref, ours = HFTokenizer.from_file(str(path)), Tokenizer.from_file(str(path))
    assert ours.engine == "kernel"
    cm = ours.model.char_model
    assert cm.cut_before_meta and cm.joins_meta
    pieces = [">", " ", "  ", "</", "<", "div", "x", " the", "> </", ">\u2581</", "\u2581", "b>", "\n", "=", '"', "\u00e9",
              "\u65e5", "\U0001f600", ">>", "> ", "</b>", "\t", " > ", "cat a > b", "<0x3E>"]
    rnd = random.Random(4)
    texts = ["a>\u2581</b", "x > </y", "<p>a</p> <b> </b>", "> </", ">  </x", "x>   </y> </z", "<a> </a>" * 50,
             "<ul>\n  <li>one</li> <li>two</li> </ul>", "echo hi > </dev/null"]
    texts += ["".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 30))) for _ in range(1500)]
    for text in texts[:200]:
        want, got = ref.encode(text, add_special_tokens=False), ours.encode(text, add_special_tokens=False)
        assert (got.ids, got.offsets) == (want.ids, want.offsets), text
    for add in (True, False):
        assert ours.encode_ids_batch(texts, add_special_tokens=add) == \
            [e.ids for e in ref.encode_batch(texts, add_special_tokens=add)]
