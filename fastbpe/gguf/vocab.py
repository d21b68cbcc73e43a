"""The vocabulary of a GGUF file as llama.cpp sees it: token texts, scores, attributes, special ids.

llama.cpp (src/llama-vocab.cpp, `llama_vocab::impl::load`) does more than read the arrays: it
gives empty tokens a placeholder text, lets the last of two equal texts win a lookup, marks
end-of-turn / fill-in-the-middle tokens found by name as control tokens, and sets lstrip/rstrip
on a few models' special tokens.  Those decide which texts are cut out as special tokens, so they
are repeated here.
"""
from __future__ import annotations

import numpy as np

from . import reader as gguf
from .pretokenizers import PreTokenizer, pre_tokenizer

# llama_token_attr bits
UNKNOWN, UNUSED, NORMAL, CONTROL, USER_DEFINED, BYTE = 1, 2, 4, 8, 16, 32
LSTRIP, RSTRIP = 128, 256
# llama.cpp's other tokenizer models (llama-vocab.cpp), what each is
_OTHER_MODELS = {"bert": "WordPiece", "t5": "Unigram", "rwkv": "RWKV's greedy trie", "plamo2": "PLaMo-2's Unigram",
                 "hybriddna": "HybriDNA's DNA k-mers and BPE",
                 "whitespace": "whitespace-split words", "none": "no vocabulary", "no_vocab": "no vocabulary",
                 "test": "llama.cpp's test vocabulary"}
# tokenizer.ggml.token_type values -> attributes
_TYPE_ATTR = {1: NORMAL, 2: UNKNOWN, 3: CONTROL, 4: USER_DEFINED, 5: UNUSED, 6: BYTE}

_EOT_NAMES = ["<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
              "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"]
_FIM_NAMES = {
    "fim_pre": ["<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
                "<|code_prefix|>", "<|prefix|>"],
    "fim_suf": ["<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
                "<|code_suffix|>", "<|suffix|>"],
    "fim_mid": ["<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
                "<|code_middle|>", "<|middle|>"],
    "fim_pad": ["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"],
    "fim_rep": ["<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"],
    "fim_sep": ["<|file_sep|>"],
}
_EOG_NAMES = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
              "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
              "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
              "<｜end▁of▁sentence｜>", "[e~["}
_SPECIAL_KEYS = ["bos", "eos", "eot", "eom", "unknown", "seperator", "padding", "mask",
                 "fim_pre", "fim_suf", "fim_mid", "fim_pad", "fim_rep", "fim_sep"]
# deprecated keys of the fill-in-the-middle ids
_FIM_OLD_KEYS = {"prefix": "fim_pre", "suffix": "fim_suf", "middle": "fim_mid"}

# Every key the tokenizer reads, with the GGUF types llama.cpp accepts for it (its loader's
# get_key checks the type exactly; llama-vocab.cpp checks the arrays'): `reader.read_metadata`
# reads these and steps over every other key.
KEYS = {
    "general.architecture": {gguf.STRING}, "general.name": {gguf.STRING},
    "tokenizer.ggml.model": {gguf.STRING}, "tokenizer.ggml.pre": {gguf.STRING},
    "tokenizer.ggml.tokens": {gguf.ARRAY_OF_STRING}, "tokenizer.ggml.merges": {gguf.ARRAY_OF_STRING},
    "tokenizer.ggml.scores": {gguf.ARRAY_OF_FLOAT32, gguf.ARRAY_OF_INT32},
    "tokenizer.ggml.token_type": {gguf.ARRAY_OF_INT32},
    "tokenizer.ggml.add_space_prefix": {gguf.BOOL}, "tokenizer.ggml.add_bos_token": {gguf.BOOL},
    "tokenizer.ggml.add_eos_token": {gguf.BOOL},
    "tokenizer.chat_template": {gguf.STRING},
    **{f"tokenizer.ggml.{k}_token_id": {gguf.UINT32} for k in _SPECIAL_KEYS + list(_FIM_OLD_KEYS)},
}


def _get(meta: dict, key: str, kind: type, path: str, default=None):
    """meta[key] when it is a `kind` (a str, a bool, an int); a value of another kind is a
    ValueError naming the file and the key (metadata given as a dict, not read from a file)."""
    value = meta.get(key)
    if value is None:
        return default
    if kind is int and isinstance(value, np.integer) and not isinstance(value, np.bool_):
        value = int(value)
    elif kind is bool and isinstance(value, np.bool_):
        value = bool(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{path}: {key} must be a {kind.__name__}, not {type(value).__name__} ({value!r:.40})")
    return value


class Vocab:
    """Token texts, attributes and special ids of a GGUF file (`meta` from reader.read_metadata)."""

    def __init__(self, meta: dict, path: str):
        self.path = path
        self.model = _get(meta, "tokenizer.ggml.model", str, path)
        if self.model not in ("gpt2", "llama", "gemma4"):
            what = f", {_OTHER_MODELS[self.model]}" if self.model in _OTHER_MODELS else ""
            raise ValueError(f"{path}: tokenizer model {self.model!r} (tokenizer.ggml.model{what}) is not supported "
                             "by fastbpe (only 'gpt2', byte-level BPE, 'llama', SentencePiece BPE, and 'gemma4', "
                             "BPE on raw UTF-8 with ▁ for spaces)")
        tokens = meta.get("tokenizer.ggml.tokens")
        if not isinstance(tokens, list) or not tokens:
            raise ValueError(f"{path}: tokenizer.ggml.tokens is missing or not an array of strings")
        n = len(tokens)
        self.tokens = [t if t else f"[EMPTY_{i}]" for i, t in enumerate(tokens)]
        self.scores = self._array(meta, "tokenizer.ggml.scores", n, np.float32)
        types = self._array(meta, "tokenizer.ggml.token_type", n, np.int32)
        if types is None:
            self.attrs = [NORMAL] * n
        else:
            table = np.zeros(8, dtype=np.int64)
            for t, a in _TYPE_ATTR.items():
                table[t] = a
            self.attrs = table[np.where((types >= 0) & (types < 8), types, 0)].tolist()
        self.text_to_id = {t: i for i, t in enumerate(self.tokens)}  # the last of equal texts wins, as llama.cpp
        self.meta_spaces = self.model in ("llama", "gemma4")   # " " as ▁ in the model's text and tokens
        self.pre: PreTokenizer | None = None
        if self.model == "gpt2":
            self.pre = pre_tokenizer(_get(meta, "tokenizer.ggml.pre", str, path), path)
        self._set_flags(meta)
        self._set_special_ids(meta)
        self._mark_by_name(meta)
        self.byte_values = self._byte_values()
        # text llama.cpp cuts out before tokenizing (parse_special=False: user-defined ones only),
        # longest first (llama.cpp sorts by length; equal lengths keep id order here)
        special = [i for i, a in enumerate(self.attrs) if a & (CONTROL | USER_DEFINED | UNKNOWN)]
        self.special_ids = sorted(special, key=lambda i: -len(self.tokens[i].encode("utf-8", "surrogateescape")))
        # the ones cut out even without parse_special
        self.user_defined_ids = [i for i in self.special_ids if not self.attrs[i] & (CONTROL | UNKNOWN)]

    def _array(self, meta: dict, key: str, n: int, dtype):
        value = meta.get(key)
        if value is None:
            return None
        if not isinstance(value, np.ndarray) or value.ndim != 1:
            raise ValueError(f"{self.path}: {key} must be an array of numbers")
        if len(value) < n:
            raise ValueError(f"{self.path}: {key} has {len(value)} entries for {n} tokens")
        return value[:n].astype(dtype)

    def _set_flags(self, meta: dict) -> None:
        if self.model == "llama":
            self.add_space_prefix, self.clean_spaces, self.add_bos, self.add_eos = True, False, True, False
        elif self.model == "gemma4":    # llama.cpp's BPE defaults; add_bos forced on below
            self.add_space_prefix, self.clean_spaces, self.add_bos, self.add_eos = False, True, True, False
        else:
            self.add_space_prefix, self.clean_spaces = False, self.pre.clean_spaces
            self.add_bos, self.add_eos = self.pre.add_bos, False
        self.ignore_merges = self.pre.ignore_merges if self.pre else False
        self.add_space_prefix = _get(meta, "tokenizer.ggml.add_space_prefix", bool, self.path, self.add_space_prefix)
        # llama.cpp prefixes a space only in its SentencePiece branch ("llama"); gemma4 is its BPE type,
        # where the key changes decoding (remove_space) alone
        self.encode_space_prefix = self.add_space_prefix and self.model == "llama"
        self.add_bos = _get(meta, "tokenizer.ggml.add_bos_token", bool, self.path, self.add_bos)
        self.add_bos = self.add_bos or self.model == "gemma4"   # llama.cpp overrides a false one for Gemma4
        self.add_eos = _get(meta, "tokenizer.ggml.add_eos_token", bool, self.path, self.add_eos)
        self.chat_template = _get(meta, "tokenizer.chat_template", str, self.path)

    def _set_special_ids(self, meta: dict) -> None:
        n = len(self.tokens)
        ids = dict.fromkeys(_SPECIAL_KEYS)
        if self.model == "llama":
            ids.update(bos=1, eos=2, unknown=0)
        elif self.model == "gemma4":
            pass    # only the file's ids
        else:
            ids.update(bos=11, eos=11)
        if self.pre is not None and self.pre.no_bos_id:
            ids["bos"] = None
        for key, value in ids.items():
            if value is not None and value >= n:
                ids[key] = None  # a default outside the vocabulary is dropped, as llama.cpp
        for key in _SPECIAL_KEYS:
            self._take_id(meta, ids, key, key)
        for old, key in _FIM_OLD_KEYS.items():
            self._take_id(meta, ids, old, key)
        self.ids = ids

    def _take_id(self, meta: dict, ids: dict, file_key: str, key: str) -> None:
        value = _get(meta, f"tokenizer.ggml.{file_key}_token_id", int, self.path)
        if value is not None and 0 <= value < len(self.tokens):  # one outside the vocabulary is ignored, as llama.cpp
            ids[key] = value

    def _mark_by_name(self, meta: dict) -> None:
        """llama.cpp's fix-ups by token text (in id order; llama.cpp walks a hash map)."""
        ids, attrs, t2i = self.ids, self.attrs, self.text_to_id
        for key, names in [("eot", _EOT_NAMES), ("eom", ["<|eom_id|>"])] + list(_FIM_NAMES.items()):
            if ids[key] is not None:
                continue
            for name in names:
                if name in t2i:
                    ids[key] = t2i[name]
                    attrs[t2i[name]] |= CONTROL
                    break
        for i in [i for i, a in enumerate(attrs) if a & CONTROL]:
            if "unused" in self.tokens[i] and t2i[self.tokens[i]] == i:
                attrs[i] |= UNUSED
        eog = {ids[k] for k in ("fim_pad", "fim_rep", "fim_sep") if ids[k] is not None}
        for text in _EOG_NAMES:
            i = t2i.get(text)
            if i is not None:
                eog.add(i)
                attrs[i] |= CONTROL
        for name in ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"):
            if name in t2i:
                attrs[t2i[name]] = USER_DEFINED
        eog |= {ids[k] for k in ("eos", "eot", "eom") if ids[k] is not None}
        texts = {self.tokens[i] for i in eog}
        if ({"<|return|>", "<|call|>", "<|end|>"} <= texts
                or {"<|call|>", "<|flush|>", "<|end|>"} <= texts or {"<|calls|>", "<|flush|>", "<|end|>"} <= texts):
            end = next(i for i in eog if self.tokens[i] == "<|end|>")
            eog.discard(end)
            attrs[end] = USER_DEFINED
        if ("<|tool_response>" in texts or "<|plamo:eos|>" in texts) and "</s>" in texts:
            s = next(i for i in eog if self.tokens[i] == "</s>")
            eog.discard(s)
            attrs[s] = NORMAL
        self.eog_ids = eog
        self._strip_flags(meta)

    def _strip_flags(self, meta: dict) -> None:
        pre = _get(meta, "tokenizer.ggml.pre", str, self.path, "")
        arch = _get(meta, "general.architecture", str, self.path, "")
        name = _get(meta, "general.name", str, self.path, "").lower()
        t2i, attrs = self.text_to_id, self.attrs
        if any(s in pre for s in ("jina-v2-de", "jina-v2-es", "jina-v2-code", "mmbert")) or \
                any(s in arch for s in ("nomic-bert-moe", "jina-bert-v3")):
            if "<mask>" in t2i:
                attrs[t2i["<mask>"]] |= LSTRIP
        elif "phi-3" in name or "phi3" in name:
            for i, a in enumerate(attrs):
                if a & (CONTROL | USER_DEFINED | UNKNOWN):
                    attrs[i] |= RSTRIP
            for text, on in (("</s>", True), ("<unk>", False), ("<s>", False), ("<|endoftext|>", False)):
                if text in t2i:
                    attrs[t2i[text]] = attrs[t2i[text]] | RSTRIP if on else attrs[t2i[text]] & ~RSTRIP
        elif "modern-bert" in name and "[MASK]" in t2i:
            attrs[t2i["[MASK]"]] |= LSTRIP

    def _byte_values(self) -> dict[int, int]:
        """{id: byte} of the tokens decoded as one byte: llama.cpp's token_to_byte reads the
        two bytes after `<0x` with strtol(.., 16) ("<0x0A>" -> 10; garbage -> what strtol makes of
        it), and throws at load when the text is shorter than 3 bytes (building its piece cache)."""
        out = {}
        for i, a in enumerate(self.attrs):
            if a & BYTE and not a & (UNKNOWN | CONTROL | USER_DEFINED | NORMAL):
                raw = self.token_bytes(i)
                if len(raw) < 3:
                    raise ValueError(f"{self.path}: token {i} {self.tokens[i]!r} has type BYTE "
                                     "(tokenizer.ggml.token_type) but its text (tokenizer.ggml.tokens) is not <0xNN>")
                out[i] = _strtol_hex(raw[3:5]) & 0xFF
        return out

    def token_bytes(self, token_id: int) -> bytes:
        return self.tokens[token_id].encode("utf-8", "surrogateescape")


def _strtol_hex(raw: bytes) -> int:
    """C's strtol(raw, NULL, 16) on at most two bytes: spaces, a sign, then hex digits."""
    k = 0
    while k < len(raw) and raw[k] in b" \t\n\v\f\r":
        k += 1
    sign = 1
    if k < len(raw) and raw[k] in b"+-":
        sign = -1 if raw[k] == ord("-") else 1
        k += 1
    value = 0
    while k < len(raw) and raw[k] in b"0123456789abcdefABCDEF":
        value = value * 16 + int(chr(raw[k]), 16)
        k += 1
    return sign * value
