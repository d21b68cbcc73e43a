"""Char-level (SentencePiece-style) files whose normalizer does more than Prepend("▁") +
Replace(" " -> "▁"): NFC / NFKC / NFD, Strip, Lowercase, transformers' Replace(Regex " {2,}")
before the text form stay on the char-level kernel (`Plan.char_program`, run before
`_char_bpe.CharBPE`) and give HF tokenizers' ids, tokens, offsets and word ids; an op after the
text form is refused by name and the pipeline stays exact.  Also the normalizer op behind
" {2,}" (`ReplaceRun` with a least run) against HF's own normalizers."""
from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hf_reference import FIELDS
from test_spm_bpe import META, PIECES, PREPEND_REPLACE, TEXTS, assert_same, metaspace, variant

from tokenizers import Regex  # noqa: E402
from tokenizers import Tokenizer as HFTokenizer  # noqa: E402
from tokenizers import normalizers as N  # noqa: E402

from fastbpe.hf import Tokenizer  # noqa: E402
from fastbpe.hf import normalizers as hf_normalizers  # noqa: E402

PREPEND = {"type": "Prepend", "prepend": META}
REPLACE = {"type": "Replace", "pattern": {"String": " "}, "content": META}
STRIP_RIGHT = {"type": "Strip", "strip_left": False, "strip_right": True}
COLLAPSE_META = {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": META}
COLLAPSE = {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}


def seq(*normalizers) -> dict:
    return {"type": "Sequence", "normalizers": list(normalizers)}


LOWERED = {   # name -> (normalizer, pre-tokenizer): each runs on the char-level kernel
    "nfkc-legacy": (seq({"type": "NFKC"}, PREPEND, REPLACE), None),
    "nfc-legacy": (seq({"type": "NFC"}, PREPEND, REPLACE), None),
    "nfd-metaspace": ({"type": "NFD"}, metaspace("always", True)),
    "strip-legacy": (seq({"type": "Strip", "strip_left": True, "strip_right": True}, PREPEND, REPLACE), None),
    # transformers' SpmConverter (no precompiled charsmap): Strip right, runs of spaces -> "▁", Metaspace
    "spm-converter": (seq(STRIP_RIGHT, COLLAPSE_META), metaspace("always", True)),
    "spm-converter-first": (seq(STRIP_RIGHT, COLLAPSE_META), metaspace("first", False)),
    "strip-left-always": (seq({"type": "Strip", "strip_left": True, "strip_right": False}, COLLAPSE_META),
                          metaspace("always", False)),
    "collapse-metaspace": (COLLAPSE, metaspace("always", True)),   # UMT5-style " {2,}" -> " "
    "nfkc-collapse-legacy": (seq({"type": "NFKC"}, COLLAPSE, PREPEND, REPLACE), None),
    "lowercase-nfkd": (seq({"type": "NFKD"}, {"type": "Lowercase"}), metaspace("never", True)),
}
REFUSED = {   # an op after the text form: the pipeline, named
    "nfc-after": (seq(PREPEND, REPLACE, {"type": "NFC"}), "UnicodeForm(form='NFC') after Prepend"),
    "collapse-after": (seq(PREPEND, REPLACE, COLLAPSE), "ReplaceRun(pattern=' {2,}'"),
    # HF's "first" prepends only to a piece starting at offset 0, which Strip left may move
    "strip-left-first": (seq({"type": "Strip", "strip_left": True, "strip_right": True}, COLLAPSE_META),
                         "prepend_scheme 'first' after the normalizer op Strip(left=True"),
}
EXTRA = ["  lead and trail  ", "a  b   c    d", "\ufb01ne \ufb02ow \u2460 \u00bd", "\u00a0a\u3000b\u2002c",
         "A\u030a e\u0301  x", "   ", "\t\n  \n", "x" + " " * 9, "  " + META + "  " + META * 2 + " a",
         "\u1e9b\u0323 \u2126 K\u212a \u00c5", "ＡＢＣ　ｄｅｆ", "<s>  a  </s>  b", "trailing\u3000", "I\u0307 \u0130"]
NPIECES = PIECES + ["\ufb01", "\u2460", "\u3000", "\u00a0", "\u2002", "A\u030a", "e\u0301", "\u212b", "Ｚ", "  ", "    "]
NTEXT = st.lists(st.sampled_from(NPIECES), max_size=20).map("".join)

_BUILT: dict = {}


def built(name: str):
    """(HF's tokenizer, fastbpe's) of a LOWERED or REFUSED config over the words vocabulary."""
    if name not in _BUILT:
        normalizer, pre = LOWERED[name] if name in LOWERED else (REFUSED[name][0], None)
        if name == "strip-left-first":
            pre = metaspace("first", False)
        text = json.dumps(variant("words", normalizer, pre, byte_fallback=True, unk_token="<unk>", fuse_unk=True))
        _BUILT[name] = HFTokenizer.from_str(text), Tokenizer.from_str(text)
    return _BUILT[name]


@pytest.mark.parametrize("name", sorted(LOWERED))
def test_lowered_normalizers_take_the_char_level_kernel(name):
    _, ours = built(name)
    assert ours.engine == "kernel", ours.engine
    assert ours._char_path is not None and ours._char_path.program is not None


def test_runs_put_as_meta_before_metaspace_run_as_spaces():
    """Replace(" {2,}" -> "▁") last before Metaspace runs as " {2,}" -> " " (Metaspace then puts
    "▁" for it): an ASCII text with no run of spaces is not copied, and stays ASCII."""
    _, ours = built("spm-converter")
    last = ours._char_path.program.ops[-1]
    assert (last.pattern, last.content, last.run_min) == (" {2,}", " ", 2)
    assert ours._char_path.program.normalize("a b") == "a b"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_an_op_after_the_text_form_is_refused_by_name_and_stays_exact(name):
    ref, ours = built(name)
    assert ours.engine.startswith("pipeline") and REFUSED[name][1] in ours.engine, ours.engine
    for text in TEXTS[:12] + EXTRA + ["    hgea", " \t x  y"]:
        assert_same(ref, ours, text)


@pytest.mark.parametrize("name", sorted(LOWERED))
def test_samples_match_hf(name):
    ref, ours = built(name)
    texts = TEXTS + EXTRA
    for text in texts:
        assert_same(ref, ours, text)
    assert_same(ref, ours, "a pair  of  texts ", "  second one  ")
    for add in (True, False):
        for got, want in zip(ours.encode_batch(texts, add_special_tokens=add), ref.encode_batch(texts, add_special_tokens=add)):
            for field in FIELDS:
                assert getattr(got, field) == getattr(want, field), (field, name)
        assert ours.encode_ids_batch(texts, add_special_tokens=add) == \
            [e.ids for e in ref.encode_batch(texts, add_special_tokens=add)]


@pytest.mark.parametrize("name", sorted(LOWERED))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=NTEXT, pair=st.one_of(st.none(), NTEXT))
def test_generated_strings_match_hf(name, text, pair):
    ref, ours = built(name)
    assert_same(ref, ours, text, pair)


def test_a_normalized_added_token_sends_the_file_to_the_pipeline_exactly():
    """HF matches a normalized added token in the normalized text: with ops before the text
    form the kernel does not follow that, so the pipeline encodes (and says why)."""
    ref, ours = built("spm-converter")
    ref, ours = HFTokenizer.from_str(ref.to_str()), Tokenizer.from_str(ref.to_str())
    from tokenizers import AddedToken
    for tok in (ref, ours):
        tok.add_tokens([AddedToken("ab  c", normalized=True)])
    assert ours.engine.startswith("pipeline (an added token matched in normalized text")
    for text in ["xab  c", "ab   c d", "  ab  c  "] + EXTRA:
        assert_same(ref, ours, text)


@pytest.mark.parametrize("pattern,content", [(" {2,}", " "), (" {2,}", META), (" {2,5}", "x"), ("\\s{3,}", ""),
                                             ("[ \\t]{2,}", "_"), (" +", " "), ("\\s{2,4}", "ab")])
def test_replace_of_a_class_repeated_at_least_n_times_runs_as_hf(pattern, content):
    """Replace(Regex C{m,n}) lowers to one ReplaceRun with its least run; the C op leaves a run
    (or a run's rest after the most) shorter than that alone, as the regex does."""
    ours = hf_normalizers.from_json({"type": "Replace", "pattern": {"Regex": pattern}, "content": content})
    program, why = hf_normalizers.kernel_program(ours)
    assert why is None, why
    ref = N.Replace(Regex(pattern), content)
    rng = random.Random(15)
    texts = ["", " ", "  ", "a  b", " \t \t  x", "x" + " " * 11 + "y", "\u3000 \u3000  z"] + [
        "".join(rng.choice(" \t\u00a0ab") for _ in range(rng.randint(0, 24))) for _ in range(400)]
    for text in texts:
        want = ref.normalize_str(text)
        assert program.normalize(text) == want, (text, want)
        got, starts, ends = program.normalize_aligned(text)
        assert got == want
    # the alignments through a byte-level file, against HF's offsets
    doc = json.loads(HFTokenizer.from_str(json.dumps(variant("words", None, None))).to_str())
    doc["normalizer"] = {"type": "Replace", "pattern": {"Regex": pattern}, "content": content}
    hf, fb = HFTokenizer.from_str(json.dumps(doc)), Tokenizer.from_str(json.dumps(doc))
    for text in texts[:120]:
        want, got = hf.encode(text), fb.encode(text)
        assert (got.ids, got.offsets) == (want.ids, want.offsets), text


def test_a_lazy_least_run_is_not_lowered():
    ours = hf_normalizers.from_json({"type": "Replace", "pattern": {"Regex": " {2,}?"}, "content": "x"})
    assert hf_normalizers.kernel_program(ours)[0] is None


@pytest.mark.parametrize("name", sorted(LOWERED) + ["plain-legacy", "metaspace-split"])
def test_ids_without_added_tokens_on_the_char_level_kernel(name, monkeypatch):
    """encode_ids_without_added_tokens (transformers' split_special_tokens): HF's stages one by
    one, added tokens never matched; the char-level kernel encodes (no Python pipeline)."""
    from tokenizers import Tokenizer as HF

    if name == "plain-legacy":
        normalizer, pre = PREPEND_REPLACE, None
    elif name == "metaspace-split":
        normalizer, pre = None, metaspace("always", True)
    else:
        normalizer, pre = LOWERED[name]
    text_doc = json.dumps(variant("words", normalizer, pre, byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    ref, ours = HF.from_str(text_doc), Tokenizer.from_str(text_doc)
    assert ours._char_path is not None
    monkeypatch.setattr(ours, "_pieces_and_model", None)   # the Python pipeline's stages: not used
    for text in TEXTS + EXTRA + ["<s>a</s> b <unk>c", "  <s>  "]:
        norm = ref.normalizer.normalize_str(text) if ref.normalizer is not None else text
        splits = [s for s, _ in ref.pre_tokenizer.pre_tokenize_str(norm)] if ref.pre_tokenizer is not None else [norm]
        want = [t.id for s in splits for t in ref.model.tokenize(s)]
        assert ours.encode_ids_without_added_tokens(text) == want, (name, text)
