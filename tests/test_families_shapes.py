"""Issue 28 "follow HF's semantics in general": each stage HF documents that a BPE tokenizer.json
may hold, put into a family's file one at a time (over a vocabulary HF's trainer learns here, no
download), run against HF tokenizers live: HF's ids, offsets, tokens, word ids and decode (with and
without special tokens, pairs, generated strings), and the engine each shape takes today: the
kernel, or the pipeline naming the stage that does not lower (a change either way shows here)."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

import family_files as ff
from hf_reference import assert_same_as_hf
from test_families import HARD, TEXT, _train_text

from tokenizers import Tokenizer as HFTokenizer  # noqa: E402

from fastbpe.hf import Tokenizer  # noqa: E402

_BL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
_BL_NO_REGEX = dict(_BL, use_regex=False)
_METASPACE = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}


def _seq(*steps) -> dict:
    return {"type": "Sequence", "pretokenizers": list(steps)}


def _norm(*steps) -> dict:
    return {"type": "Sequence", "normalizers": list(steps)}


KERNEL = "kernel"
_BERT = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
         "lowercase": True}
# name -> (base family, stage, node or model fields, engine: "kernel" or words of the pipeline's reason)
SHAPES = {
    # normalizers before a byte-level model
    "nfd": ("gpt-j", "normalizer", {"type": "NFD"}, KERNEL),
    "nfkd": ("gpt-j", "normalizer", {"type": "NFKD"}, KERNEL),
    "lowercase": ("gpt-j", "normalizer", {"type": "Lowercase"}, KERNEL),
    "strip": ("gpt-j", "normalizer", {"type": "Strip", "strip_left": True, "strip_right": True}, KERNEL),
    "strip-right": ("gpt-j", "normalizer", {"type": "Strip", "strip_left": False, "strip_right": True}, KERNEL),
    "nfd-stripaccents-lowercase": ("gpt-j", "normalizer", _norm({"type": "NFD"}, {"type": "StripAccents"},
                                                                {"type": "Lowercase"}), KERNEL),
    "replace-regex": ("gpt-j", "normalizer", {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}, KERNEL),
    "prepend": ("gpt-j", "normalizer", {"type": "Prepend", "prepend": "x"}, KERNEL),
    # pre-tokenizers before / after ByteLevel
    "bert-pre-tokenizer": ("gpt-j", "pre_tokenizer", _seq({"type": "BertPreTokenizer"}, _BL_NO_REGEX), KERNEL),
    # a char-level model after it (no ByteLevel): the char-level kernel runs Metaspace only
    "bert-pre-tokenizer-alone": ("gpt-j", "pre_tokenizer", {"type": "BertPreTokenizer"}, "WhitespaceSplit, Punctuation"),
    "whitespace": ("gpt-j", "pre_tokenizer", _seq({"type": "Whitespace"}, _BL_NO_REGEX), KERNEL),
    "whitespace-split": ("gpt-j", "pre_tokenizer", _seq({"type": "WhitespaceSplit"}, _BL_NO_REGEX), KERNEL),
    "char-delimiter": ("gpt-j", "pre_tokenizer", _seq({"type": "CharDelimiterSplit", "delimiter": "-"},
                                                      _BL_NO_REGEX), KERNEL),
    "fixed-length": ("gpt-j", "pre_tokenizer", _seq({"type": "FixedLength", "length": 5}, _BL_NO_REGEX), KERNEL),
    "fixed-length-bytes": ("gpt-j", "pre_tokenizer", _seq(_BL_NO_REGEX, {"type": "FixedLength", "length": 3}), KERNEL),
    "digits-runs": ("gpt-j", "pre_tokenizer", _seq({"type": "Digits", "individual_digits": False}, _BL), KERNEL),
    **{f"punctuation-{b}": ("gpt-j", "pre_tokenizer", _seq({"type": "Punctuation", "behavior": b}, _BL), KERNEL)
       for b in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")},
    # every behavior lowers (tests/test_families_split.py: many patterns, generated text) ...
    **{f"split-{b}-{inv}": ("gpt-j", "pre_tokenizer", _seq(ff._split(pat, b, inv == "invert"), _BL_NO_REGEX), KERNEL)
       for b in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")
       for inv in ("", "invert") for pat in ("[a-z]+",)},
    **{f"split-{b}-{inv}-multi": ("gpt-j", "pre_tokenizer", _seq(ff._split("a[a-z]", b, inv == "invert"), _BL_NO_REGEX),
                                  KERNEL) for b in ("MergedWithPrevious", "MergedWithNext") for inv in ("", "invert")},
    # ... but Contiguous over a longer pattern: (?:P)+ repeats a group without bound
    "split-contiguous-multi": ("gpt-j", "pre_tokenizer", _seq(ff._split("a[a-z]", "Contiguous"), _BL_NO_REGEX),
                               "Split behavior Contiguous with a pattern longer than one character"),
    "split-one-char-merged-next": ("gpt-j", "pre_tokenizer", _seq(ff._split("[,.]", "MergedWithNext"), _BL), KERNEL),
    "nested-set": ("gpt-j", "pre_tokenizer", _seq(ff._split(ff.BLOOM), _BL_NO_REGEX), KERNEL),
    "nested-negated-set": ("gpt-j", "pre_tokenizer", _seq(ff._split("[a[^b]]+"), _BL_NO_REGEX), "kernel+matcher"),
    "prefix-space-after-split": ("gpt-j", "pre_tokenizer", _seq(ff._split("\\s+"), dict(_BL, add_prefix_space=True)),
                                 "ByteLevel add_prefix_space"),
    "prefix-space-then-split": ("roberta-prefix-space", "pre_tokenizer", _seq(dict(_BL, add_prefix_space=True), ff._split("\\s+")),
                                KERNEL),
    "prefix-space-after-nfkc": ("roberta-prefix-space", "normalizer", {"type": "NFKC"}, KERNEL),
    "prefix-space-no-regex": ("roberta-prefix-space", "pre_tokenizer", dict(_BL_NO_REGEX, add_prefix_space=True),
                              KERNEL),
    # GPT-J's extra tokens are matched in normalized text: HF puts the prefix in after finding them
    "prefix-space-normalized-tokens": ("gpt-j", "pre_tokenizer", dict(_BL, add_prefix_space=True),
                                       "ByteLevel add_prefix_space"),
    "metaspace-then-bytelevel": ("gpt-j", "pre_tokenizer", _seq(dict(_METASPACE, split=True), _BL_NO_REGEX),
                                 "Metaspace"),
    # the model's options
    "dropout-zero": ("gpt-j", "model", {"dropout": 0.0}, KERNEL),
    "dropout-absent": ("gpt-j", "model", {"dropout": None}, KERNEL),
    "ignore-merges": ("gpt-j", "model", {"ignore_merges": True}, KERNEL),
    "dropout-one": ("gpt-j", "model", {"dropout": 1.0}, "BPE dropout"),
    # char-level files: Metaspace's schemes, byte fallback, fuse_unk, a normalizer before the meta steps
    **{f"metaspace-{scheme}-{split}": ("yi", "pre_tokenizer", dict(_METASPACE, prepend_scheme=scheme,
                                                                  split=split == "split"), KERNEL)
       for scheme in ("always", "first", "never") for split in ("split", "whole")},
    "char-no-byte-fallback": ("baichuan", "model", {"byte_fallback": False}, KERNEL),
    "char-no-fuse-unk": ("baichuan", "model", {"fuse_unk": False}, KERNEL),
    "char-ignore-merges": ("baichuan", "model", {"ignore_merges": True}, KERNEL),
    "char-dropout-zero": ("baichuan", "model", {"dropout": 0.0}, KERNEL),
    "char-nfkc-prepend-replace": ("baichuan", "normalizer", _norm(
        {"type": "NFKC"}, {"type": "Prepend", "prepend": "▁"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}), KERNEL),   # 21e4f68: NFKC first, on the kernel
    "char-metaspace-digits": ("yi", "pre_tokenizer", _seq(_METASPACE, {"type": "Digits", "individual_digits": True}),
                              "Metaspace, Digits"),
    # census P03 (multilingual-e5's, a Unigram file there) on a char-level BPE model: the pipeline
    "char-whitespace-split-metaspace": ("yi", "pre_tokenizer", _seq({"type": "WhitespaceSplit"}, dict(
        _METASPACE, prepend_scheme="always", split=True)), "WhitespaceSplit, Metaspace"),
    # HF's UnicodeScripts: two scanner levels (unicode_scripts.py); BertNormalizer: a normalizer program
    # (handle_chinese_chars, " c " around each CJK ideograph: a PadClass op)
    "unicode-scripts": ("gpt-j", "pre_tokenizer", _seq({"type": "UnicodeScripts"}, _BL_NO_REGEX), KERNEL),
    "unicode-scripts-bytelevel-regex": ("gpt-j", "pre_tokenizer", _seq({"type": "UnicodeScripts"}, _BL), KERNEL),
    "unicode-scripts-after-digits": ("gpt-j", "pre_tokenizer", _seq({"type": "Digits", "individual_digits": True},
                                                                    {"type": "UnicodeScripts"}, _BL), KERNEL),
    # after ByteLevel: the levels read each byte as its byte-level character's script, as HF
    "unicode-scripts-after-bytelevel": ("gpt-j", "pre_tokenizer", _seq(_BL_NO_REGEX, {"type": "UnicodeScripts"}),
                                        KERNEL),
    "unicode-scripts-after-bytelevel-regex": ("gpt-j", "pre_tokenizer", _seq(_BL, {"type": "UnicodeScripts"},
                                                                             {"type": "Digits", "individual_digits": True}),
                                              KERNEL),
    "bert-normalizer": ("gpt-j", "normalizer", _BERT, KERNEL),
    "bert-normalizer-chinese-cased": ("gpt-j", "normalizer", dict(_BERT, lowercase=False, strip_accents=False), KERNEL),
    "bert-normalizer-no-chinese": ("gpt-j", "normalizer", dict(_BERT, handle_chinese_chars=False), KERNEL),
    "bert-normalizer-cased": ("gpt-j", "normalizer", dict(_BERT, handle_chinese_chars=False, lowercase=False),
                              KERNEL),
    "bert-normalizer-strip-only": ("gpt-j", "normalizer", dict(_BERT, clean_text=False, handle_chinese_chars=False,
                                                               strip_accents=True, lowercase=False), KERNEL),
    "bert-normalizer-clean-only": ("gpt-j", "normalizer", dict(_BERT, handle_chinese_chars=False,
                                                               strip_accents=False, lowercase=False), KERNEL),
    # pre-tokenizer chains of other real files, as they spell them (tests/family_files.py's patterns)
    "gpt-oss": ("gpt-j", "pre_tokenizer", _seq(ff._split(ff.O200K), _BL_NO_REGEX), KERNEL),
    "mistral-nemo": ("gpt-j", "pre_tokenizer", _seq(ff._split(ff.NEMO), _BL_NO_REGEX), KERNEL),   # Nemotron too
    "smollm2": ("gpt-j", "pre_tokenizer", _seq({"type": "Digits", "individual_digits": True}, _BL), KERNEL),
    "phi-4": ("gpt-j", "pre_tokenizer", _seq(ff._split(ff.LLAMA3, "Removed", True), _BL_NO_REGEX), KERNEL),
    "minicpm": ("gpt-j", "pre_tokenizer", _seq(ff._split("\\p{N}{1,3}"), ff._split(ff.MINICPM), _BL_NO_REGEX), KERNEL),
    "minimax-m2": ("gpt-j", "pre_tokenizer", _seq(ff._split(ff.O200K, "Removed", True), _BL_NO_REGEX), KERNEL),
    "spark": ("gpt-j", "pre_tokenizer", _seq(ff._split("\\p{N}{1,3}"), ff._split(ff.KANA_HAN), ff._split(ff.SPARK),
                                              {"type": "Digits", "individual_digits": True}, _BL_NO_REGEX), KERNEL),
    "a.x": ("gpt-j", "pre_tokenizer", _seq(ff._split(ff.KANA_HAN), ff._split(ff.QWEN2), _BL_NO_REGEX), KERNEL),
    "one-char": ("gpt-j", "pre_tokenizer", _seq(ff._split("."), _BL_NO_REGEX), KERNEL),
    "byte-fallback-bytelevel": ("gpt-j", "model", {"byte_fallback": True}, KERNEL),
    # sarvam: Gemma's file with Split(Regex " ") for String " " (a regex of one literal)
    "sarvam": ("gemma", "pre_tokenizer", {"type": "Split", "pattern": {"Regex": " "}, "behavior": "MergedWithPrevious",
                                          "invert": False}, KERNEL),
    # tiktoken's cl100k spelling (LLaDA, Ling-3.0): (?i:[sdmt]) a class case-folded as Oniguruma folds it
    # (its members asked of Oniguruma: s is s, S and U+017F); possessive ?+ and ++
    "cl100k-tiktoken-spelling": ("gpt-j", "pre_tokenizer", _seq(ff._split(ff.CL100K_TIKTOKEN), _BL_NO_REGEX), KERNEL),
    # ... but a class beside a letter in (?i:) may meet a two-letter fold ("fi" of U+FB01): Oniguruma splits
    "ci-class-beside-letter": ("gpt-j", "pre_tokenizer", _seq(ff._split("'(?i:[sf]i|ll)|\\s+|[^\\s']+"), _BL_NO_REGEX),
                               "kernel+matcher"),
    # Zeta / Seed-Coder's spelling: \p{N}{1}, \r\n as characters inside the classes
    "zeta": ("gpt-j", "pre_tokenizer", _seq(ff._split("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}"
                                                      "| ?[^\\s\\p{L}\\p{N}\r\n]+|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"),
                                             _BL_NO_REGEX), KERNEL),
    # char-level: Gemma 1 (Replace, no pre-tokenizer; Yi-Coder's Metaspace never is metaspace-never-whole above)
    "gemma-1": ("gemma", "pre_tokenizer", None, KERNEL),
    # Command-R7B (Cohere2): digits by three from the right, a group repeated without bound in a lookahead
    "cohere2": ("gpt-j", "pre_tokenizer", _seq(ff._split("\\d{1,3}(?=(?:\\d{3})*\\b)"), ff._split(ff.O200K),
                                               _BL_NO_REGEX), "outside the compiled subset"),
    # Laguna: runs of newlines merged with the next piece, a group repeated without bound
    "laguna": ("gpt-j", "pre_tokenizer", _seq(ff._split("(?:\\r?\\n)+(?!\\r?\\n)", "MergedWithNext"), ff._split(ff.QWEN2),
                                              _BL_NO_REGEX), "outside the compiled subset"),
    # round 16: more of HF's spellings a real file may carry (each HF live, as above)
    "post-bytelevel-trim-offsets": ("gpt-j", "post_processor", dict(_BL, trim_offsets=True), KERNEL),
    "post-roberta-no-trim": ("roberta", "post_processor", {
        "type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1], "trim_offsets": False,
        "add_prefix_space": False}, KERNEL),
    "pre-bytelevel-no-trim": ("gpt-j", "pre_tokenizer", dict(_BL, trim_offsets=False), KERNEL),
    "split-space-merged-next": ("gpt-j", "pre_tokenizer", _seq({"type": "Split", "pattern": {"String": " "},
                                                                "behavior": "MergedWithNext", "invert": False},
                                                               _BL_NO_REGEX), KERNEL),
    "split-string-contiguous": ("gpt-j", "pre_tokenizer", _seq({"type": "Split", "pattern": {"String": "ab"},
                                                                "behavior": "Contiguous", "invert": False},
                                                               _BL_NO_REGEX),
                                "Split behavior Contiguous with a pattern longer than one character"),   # "abab": one piece
    "char-delimiter-bytelevel-regex": ("gpt-j", "pre_tokenizer", _seq({"type": "CharDelimiterSplit", "delimiter": " "},
                                                                      _BL), KERNEL),
    "whitespace-split-digits": ("gpt-j", "pre_tokenizer", _seq({"type": "WhitespaceSplit"},
                                                               {"type": "Digits", "individual_digits": True},
                                                               _BL_NO_REGEX), KERNEL),
    "nfc-lowercase-strip": ("gpt-j", "normalizer", _norm({"type": "NFC"}, {"type": "Lowercase"},
                                                         {"type": "Strip", "strip_left": True, "strip_right": False}),
                            KERNEL),
    "replace-string-multi": ("gpt-j", "normalizer", {"type": "Replace", "pattern": {"String": "ab"}, "content": "x y"},
                             KERNEL),
    "metaspace-split-punctuation": ("yi", "pre_tokenizer", _seq(dict(_METASPACE, split=True),
                                                                {"type": "Punctuation", "behavior": "Isolated"}),
                                    "Metaspace, Punctuation"),
}
# a tokenizer.json HF runs whose stage fastbpe does not have: refused at load, naming the stage
UNSUPPORTED = {
    "nmt": ("gpt-j", "normalizer", {"type": "Nmt"}, "Nmt"),
}
EXTRA = ["'S '\u017f '\ufb01 'FI x'll\r\n\r\n", "Hello, wo-rld!!  x\u00a0y\u3000z。a\x1cb", " Привет мир hello 123 京い ok\u0301é\x00\ufffd\u200b", "abcdefghijkl", "a(b|c)d [x] (y)", "。，、।۔، a.b,c", "AbC aBc",
         " ▁x", "x<mask>y", "  "]

_BASES: dict = {}


def _doc(name: str, table: dict = SHAPES) -> str:
    base, stage, node, _ = table[name]
    if base not in _BASES:
        _BASES[base] = json.loads(HFTokenizer.from_str(ff.trained(base, _train_text())).to_str())
    doc = json.loads(json.dumps(_BASES[base]))
    if stage == "model":
        doc["model"].update(node)
    else:
        doc[stage] = node
    return json.dumps(doc)


_BUILT: dict = {}


def _pair(name: str):
    if name not in _BUILT:
        text = _doc(name)
        _BUILT[name] = HFTokenizer.from_str(text), Tokenizer.from_str(text)
    return _BUILT[name]


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shape_engine_and_ids(name):
    ref, ours = _pair(name)
    want = SHAPES[name][3]
    if want in (KERNEL, "kernel+matcher"):
        assert ours.engine == want, ours.engine
    else:
        assert ours.engine.startswith("pipeline") and want in ours.engine, ours.engine
    for text in HARD + EXTRA:
        assert_same_as_hf(ref, ours, text)
    for text in EXTRA[:3]:
        assert_same_as_hf(ref, ours, text, text[::-1])
    docs = HARD * 2
    assert ours.encode_ids_batch(docs) == [e.ids for e in ref.encode_batch(docs)]


@pytest.mark.parametrize("name", sorted(SHAPES))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_shape_generated(name, text):
    assert_same_as_hf(*_pair(name), text)


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_stage_is_named(name):
    text = _doc(name, UNSUPPORTED)
    HFTokenizer.from_str(text)          # HF runs it
    with pytest.raises(ValueError, match=UNSUPPORTED[name][3]):
        Tokenizer.from_str(text)


def test_precompiled_normalizer_is_refused_naming_file_and_stage(tmp_path):
    """A SentencePiece charsmap (`Precompiled`, what transformers writes converting a `.model`
    trained with nmt_nfkc) HF runs; fastbpe refuses it at load, naming the file and the stage
    (HF applies it per grapheme cluster, which no normalizer program here does: round 15)."""
    import base64
    import io

    spm = pytest.importorskip("sentencepiece")
    from fastbpe.formats.sentencepiece_model import sentencepiece_model_from_bytes

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(_train_text().splitlines()), model_writer=out,
                                   vocab_size=300, model_type="bpe")
    charsmap = sentencepiece_model_from_bytes(out.getvalue()).precompiled_charsmap
    assert charsmap
    doc = json.loads(_doc("nfd"))
    doc["normalizer"] = {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc))
    assert HFTokenizer.from_file(str(path)).encode("\uff48\uff49 \u2460").tokens   # HF runs it (NFKC-like)
    with pytest.raises(ValueError, match=f"{path}.*normalizer 'Precompiled'"):
        Tokenizer.from_file(str(path))

