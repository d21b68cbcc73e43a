"""`Tokenizer.encode` / `encode_batch` Encodings built from the kernels (fastbpe/hf/
kernel_encodings.py) against `tokenizers`, field by field: ids, tokens, char offsets, word
ids, masks, type and sequence ids, overflowing; one thread and several; and against the
pipeline path they replace.  Built files run everywhere; the real files need ../shared."""
from __future__ import annotations

import functools
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import datasources as ds
from hf_reference import SAMPLES, TRAIN_TEXT, build
from test_hf_fast_path import ADDED, BATCH, TRICKY, _ref
from test_hf_models import MODELS, _load

from tokenizers import Regex  # noqa: E402
from tokenizers import Tokenizer as HFTokenizer  # noqa: E402
from tokenizers import decoders as D  # noqa: E402
from tokenizers import normalizers as N  # noqa: E402
from tokenizers import pre_tokenizers as P  # noqa: E402
from tokenizers import processors as PP  # noqa: E402

from fastbpe.hf import Tokenizer  # noqa: E402

ALL_FIELDS = ("ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask",
              "word_ids", "sequence_ids")

TEXTS = BATCH + SAMPLES + [
    TRICKY,                                   # NFC changes it: that text takes the pipeline
    "naïve café — “quotes” 😀👍🏽 漢字かな 123456 x\n\n\n  \t end  ",
    " " * 40 + "\n" * 5 + "  a  ", "x" * 300, "\U0001f600" * 9 + "é" * 9,
    TRAIN_TEXT[:1500],
]


def assert_encoding(got, want, where) -> None:
    for field in ALL_FIELDS:
        assert list(getattr(got, field)) == list(getattr(want, field)), (field, where)
    assert len(got.overflowing) == len(want.overflowing), ("overflowing", where)
    for k, (g, w) in enumerate(zip(got.overflowing, want.overflowing)):
        assert_encoding(g, w, (where, "overflow", k))


def assert_batches(ours: Tokenizer, ref: HFTokenizer, inputs: list) -> None:
    for add in (True, False):
        want = ref.encode_batch(inputs, add_special_tokens=add)
        for threads in (None, 1, 2, 3):
            got = ours.encode_batch(inputs, add_special_tokens=add, num_threads=threads)
            assert len(got) == len(want)
            for k, (g, w) in enumerate(zip(got, want)):
                assert_encoding(g, w, (threads, add, inputs[k]))
        for item in inputs:   # one at a time (padding to the batch's longest does not apply)
            a, b = item if isinstance(item, tuple) else (item, None)
            assert_encoding(ours.encode(a, b, add_special_tokens=add), ref.encode(a, b, add_special_tokens=add),
                            (add, item))


def _pairs(texts: list) -> list:
    return [(a, b) for a, b in zip(texts, texts[1:] + texts[:1])]


@pytest.mark.parametrize("normalizer", [None, "nfc"])
@pytest.mark.parametrize("post", ["none", "template", "bytelevel-trim", "bytelevel-prefix-trim"])
@pytest.mark.parametrize("added", ["none", "raw", "raw+normalized"])
def test_built_files(normalizer, post, added):
    """Llama-3's split (the C scanner) + ByteLevel: every post-processor that changes the
    Encoding (specials, ByteLevel's offset trimming), added tokens of every kind."""
    processor = {
        "none": None,
        "template": PP.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                                          special_tokens=[("<s>", 1), ("</s>", 2)]),
        "bytelevel-trim": PP.ByteLevel(trim_offsets=True, add_prefix_space=False),
        "bytelevel-prefix-trim": PP.ByteLevel(trim_offsets=True, add_prefix_space=True),
    }[post]
    tokens = {"none": (), "raw": ADDED[:-1], "raw+normalized": ADDED}[added]
    ref, ours = _ref(N.NFC() if normalizer else None, tokens, processor)
    assert_batches(ours, ref, TEXTS)
    assert_batches(ours, ref, _pairs(TEXTS[:12]) + TEXTS[:5])
    assert ours._kernel is not None     # the kernels built these, not the pipeline


def test_truncation_with_stride_and_padding():
    template = PP.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                                     special_tokens=[("<s>", 1), ("</s>", 2)])
    ref, ours = _ref(None, ADDED[:3], template)
    for direction in ("right", "left"):
        for tok in (ref, ours):
            tok.enable_truncation(12, stride=3, strategy="longest_first", direction=direction)
            tok.enable_padding(direction=direction, pad_id=0, pad_token="<unk>", pad_to_multiple_of=8)
        assert_batches(ours, ref, TEXTS[:14] + _pairs(TEXTS[4:10]))
    for tok in (ref, ours):
        tok.enable_padding(length=64)
    assert_batches(ours, ref, TEXTS[:8])


@pytest.mark.parametrize("split,engine", [("bytelevel-regex", "kernel"), ("program-regex", "kernel"),
                                          ("oniguruma-regex", "kernel+matcher")])
def test_other_pre_tokenizers_on_the_fast_path(split, engine):
    """GPT-2's ByteLevel(use_regex) (the C scanner), a Split whose regex compiles to a scanner
    program, and one that does not (a lookbehind: Oniguruma cuts in Python, the kernel merges;
    a line anchor `$` compiles since e5846cf)."""
    if split == "bytelevel-regex":
        pre = P.ByteLevel(add_prefix_space=False, use_regex=True)
    else:
        regex = r"\w+|[^\w\s]+|\s+" if split == "program-regex" else r"(?<=a)\w+|\w+|[^\w\s]+|\s+"
        pre = P.Sequence([P.Split(Regex(regex), "isolated"), P.ByteLevel(add_prefix_space=False, use_regex=False)])
    ref = build(pre_tokenizer=pre, decoder=D.ByteLevel(), byte_level_alphabet=True,
                post_processor=PP.ByteLevel(trim_offsets=True))
    ours = Tokenizer.from_str(ref.to_str())
    assert ours._uses_fast_path() and ours.engine == engine
    assert_batches(ours, ref, TEXTS)


def test_not_the_fast_path_still_matches():
    """A file the kernels cannot take (ByteLevel's prefix space after a step that cuts) builds
    Encodings in the pipeline; encode_batch gives the same answers."""
    ref = build(normalizer=N.Lowercase(), pre_tokenizer=P.Sequence([P.WhitespaceSplit(), P.ByteLevel(add_prefix_space=True)]),
                decoder=D.ByteLevel(), byte_level_alphabet=True)
    ours = Tokenizer.from_str(ref.to_str())
    assert not ours._uses_fast_path()
    assert_batches(ours, ref, SAMPLES)


def test_pending_fields_copy_and_pickle():
    """tokens, offsets and word ids made on first read survive copy, slicing and pickle."""
    import pickle

    ref, ours = _ref(None, ADDED[:3], None)
    text = "naïve <|eot|> café 😀 and more words here"
    want = ref.encode(text)
    for touch in (lambda e: e.copy(), lambda e: pickle.loads(pickle.dumps(e)), lambda e: e):
        got = touch(ours.encode(text))
        assert_encoding(got, want, "touched")
    enc = ours.encode(text)
    enc.truncate(4)
    ref_enc = ref.encode(text)
    ref_enc.truncate(4)
    assert_encoding(enc, ref_enc, "truncated before its fields were read")


PROCESSORS = {
    "none": None,
    "template": PP.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
                                      special_tokens=[("<s>", 1), ("</s>", 2)]),
    "bytelevel": PP.ByteLevel(trim_offsets=False),
    "bytelevel-trim": PP.ByteLevel(trim_offsets=True, add_prefix_space=False),
}
FIRST_READS = {   # what a caller may read first, before the other fields
    "transformers": lambda e: (e.ids, e.attention_mask, len(e.overflowing), e.n_sequences),
    "shaped": lambda e: (e.type_ids, e.special_tokens_mask, e.sequence_ids, e.attention_mask),
    "lookups": lambda e: (e.char_to_token(0, 1), e.char_to_token(0), e.token_to_sequence(0), e.word_to_tokens(0)),
}


OPTIONS = {   # truncation and padding as transformers sets them
    "none": ({}, {}),
    "padding": ({}, dict(pad_id=0, pad_token="!", pad_type_id=3, direction="left")),
    "truncation+padding": (dict(max_length=9, stride=2), dict(pad_id=0, pad_token="!", pad_to_multiple_of=4)),
    "max_length": (dict(max_length=12, direction="left"), dict(length=14, pad_id=0, pad_token="!")),
}


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("post", sorted(PROCESSORS))
def test_fields_read_in_any_order(post, options):
    """Batches of texts without truncation or padding (transformers' `tok(docs)`) give
    Encodings holding their ids: the shaped fields (type ids, masks, sequence ids) are made
    from the post-processor's shape, the rest by encoding the text again, in whatever order
    they are read; reading what transformers reads makes none of the others; a field written
    before the others are made keeps what was written."""
    ref, ours = _ref(N.NFC(), ADDED, PROCESSORS[post])
    truncation, padding = OPTIONS[options]
    for tok in (ref, ours):
        if truncation:
            tok.enable_truncation(**truncation)
        if padding:
            tok.enable_padding(**padding)
    texts = TEXTS + ["", "<|eot|>", " [B] "]
    for add in (True, False):
        want = ref.encode_batch(texts, add_special_tokens=add)
        for name, first in FIRST_READS.items():
            got = ours.encode_batch(texts, add_special_tokens=add, num_threads=2)
            for g, w, text in zip(got, want, texts):
                assert first(g) == first(w), (name, text)
                if name == "transformers" and unicodedata.normalize("NFC", text) == text and not w.overflowing:
                    assert g._pending is not None, "the fields transformers reads made the others"
                assert_encoding(g, w, (name, add, text))
                assert g.n_sequences == w.n_sequences
        for text in texts:  # encode's short path leaves the same fields
            g, w = ours.encode(text, add_special_tokens=add), ref.encode(text, add_special_tokens=add)
            assert FIRST_READS["shaped"](g) == FIRST_READS["shaped"](w), text
            assert_encoding(g, w, ("encode", add, text))
    # fields made after the options changed are those of the call that made the Encoding
    kept = ours.encode_batch(texts) + [ours.encode(t) for t in texts]
    want = ref.encode_batch(texts) + [ref.encode(t) for t in texts]
    ours.enable_truncation(3)
    ours.enable_padding(length=40)
    for g, w in zip(kept, want):
        assert_encoding(g, w, "after the options changed")
    ours.no_truncation()
    ours.no_padding()
    enc = ours.encode_batch(["plain ascii text " * 40])[0]
    with pytest.raises(AttributeError):   # read-only, as HF's
        enc.attention_mask = [0] * len(enc.ids)
    enc._attention_mask = [0] * len(enc.ids)   # the pipeline's write: kept when the rest is made
    enc._type_ids = [7] * len(enc.ids)
    ref.no_truncation()
    ref.no_padding()
    assert enc.offsets == ref.encode("plain ascii text " * 40).offsets
    assert enc.attention_mask == [0] * len(enc.ids) and enc.type_ids == [7] * len(enc.ids)


def test_long_texts_cut_for_the_threads():
    """A batch of few long texts is cut where no piece can span the cut, each part on a
    thread: the same Encodings as HF, whatever the thread count (added tokens, NFC, text
    without any cut point)."""
    ref, ours = _ref(N.NFC(), ADDED, PROCESSORS["template"])
    long = (TRAIN_TEXT + " naïve café 😀 12345 ") * (70_000 // len(TRAIN_TEXT) + 1)
    texts = [long, long[:40_000] + "<|eot|> [B] " + long[:40_000], "x" * 70_000, TRICKY * 3000, "short"]
    for batch in ([texts[0]], texts[1:3], texts[3:]):
        want = ref.encode_batch(batch)
        for threads in (1, 2, 3):
            got = ours.encode_batch(batch, num_threads=threads)
            assert [g.ids for g in got] == [w.ids for w in want], threads
            assert [g.n_sequences for g in got] == [w.n_sequences for w in want]
        for g, w in zip(got, want):
            assert_encoding(g, w, "long")


def test_bad_inputs():
    ref, ours = _ref()
    with pytest.raises(TypeError):
        ours.encode_batch("one str")
    with pytest.raises(TypeError):
        ours.encode_batch(["ok", 3])
    with pytest.raises(ValueError):
        ours.encode_batch([("a", "b", "c")])
    with pytest.raises(UnicodeEncodeError):
        ours.encode_batch(["fine", "bad \ud800 surrogate"], num_threads=2)
    with pytest.raises(UnicodeEncodeError):
        ours.encode("bad \udfff")
    assert ours.encode_batch([]) == []


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cn",)), max_size=60) | \
    st.text(" \n\t'sdmtlvre0123456789aAbé日😀<|>[]eotcafé\u0301", max_size=60)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_TEXT, min_size=1, max_size=5))
def test_kernels_equal_the_pipeline(texts):
    """The kernels' Encodings are the pipeline's (`_encode_sequence`), generated text."""
    _, ours = _built_with_added()
    for text in texts:
        got = ours._sequences([text], [1], 1)[0]
        want = ours._encode_sequence(text, 1)
        assert_encoding(got, want, text)


@functools.lru_cache(maxsize=None)
def _built_with_added():
    return _ref(N.NFC(), ADDED, None)


# ---------------------------------------------------------------- real files (../shared)

@pytest.mark.parametrize("name", MODELS)
def test_real_files_on_corpora(name):
    loaded = _load(name)
    if loaded is None:
        pytest.skip(f"no {ds.VOCAB_DIR / 'hf' / name / 'tokenizer.json'}")
    ours, ref = loaded
    docs = []
    for corpus in ("multilingual", "code", "tinyshakespeare"):
        if ds.corpus_available(corpus):
            lines = ds.load_corpus(corpus, 60_000).splitlines(keepends=True)
            docs += ["".join(lines[i:i + 20]) for i in range(0, len(lines), 20)]
    if not docs:
        pytest.skip("no shared corpora")
    docs += ["<|endoftext|> a <|im_start|>user\nhi<|im_end|>", "<|begin_of_text|>hey<|eot_id|>", "", TRICKY]
    assert_batches(ours, ref, docs)
    # pairs of short texts: GPT-2's file truncates at 50 tokens, and a long pair's overflows are
    # every overflow of one with every overflow of the other (HF's merge_with)
    assert_batches(ours, ref, _pairs([d[:120] for d in docs[:10]]))


EDGE = ["", " ", "\n\n\n", " \t \n  \r\n   x", " " * 64 + "\n" * 9 + "\t" * 5, "\U0001f600" * 5,
        "a" * 200, "日本語のテキスト、そして English.", "  leading", "trailing   ",
        "<|endoftext|><|endoftext|>", " <|im_start|> x <|im_end|> ", "<|begin_of_text|> <|eot_id|>\n"]


@pytest.mark.parametrize("name", MODELS)
def test_real_files_truncated_and_padded(name):
    """The real files with truncation (stride, both directions) and padding on: specials,
    overflows and pads around kernel-built Encodings, singles and pairs, edge texts (empty,
    whitespace only, emoji, added tokens)."""
    path = ds.VOCAB_DIR / "hf" / name / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"no {path}")
    # fresh objects: _load's are cached and shared with other tests, and these are changed
    ours, ref = Tokenizer.from_file(path), HFTokenizer.from_file(str(path))
    docs = EDGE + TEXTS[:12]
    if ds.corpus_available("multilingual"):
        lines = ds.load_corpus("multilingual", 12_000).splitlines(keepends=True)
        docs += ["".join(lines[i:i + 8]) for i in range(0, len(lines), 8)][:10]
    for length, stride, direction in ((16, 4, "right"), (9, 2, "left")):
        for tok in (ours, ref):
            tok.enable_truncation(length, stride=stride, strategy="longest_first", direction=direction)
            tok.enable_padding(direction="left" if direction == "right" else "right", pad_id=0,
                               pad_token="!", pad_to_multiple_of=8)
        assert_batches(ours, ref, docs)
        assert_batches(ours, ref, _pairs(docs[:16]))
    assert_batches(ours, ref, ["", "", ""])
    assert_batches(ours, ref, [("", ""), ("", "x"), (" ", "")])
    assert ours._kernel is not None     # the kernels built these, not the pipeline


def test_lazy_encodings_keep_the_tokenizer_they_were_made_with():
    """Encodings that hold only ids are made before the tokenizer changes (added tokens,
    encode_special_tokens, a new stage), so their fields stay those of the call."""
    ref, ours = _ref(N.NFC(), ADDED, PROCESSORS["template"])
    texts = ["a <|eot|> b <new> c", "plain <new> text", "x" * 40]
    want = ref.encode_batch(texts)
    for change in (lambda t: t.add_tokens(["<new>"]), lambda t: setattr(t, "encode_special_tokens", True),
                   lambda t: setattr(t, "post_processor", PP.ByteLevel(trim_offsets=True))):
        got = ours.encode_batch(texts)
        fresh = Tokenizer.from_str(ours.to_str())
        change(fresh)   # another tokenizer changing changes nothing here
        change(ours)
        for g, w, text in zip(got, want, texts):
            assert_encoding(g, w, text)
        ours = Tokenizer.from_str(ref.to_str())
