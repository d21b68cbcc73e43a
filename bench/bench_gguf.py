"""GGUF encode speed: fastbpe's GGUFTokenizer vs HF tokenizers on the same vocabulary.

For each llama.cpp vocab file in ../shared/data/gguf, HF tokenizers gets the equivalent
tokenizer.json (the file's tokens and merges, llama.cpp's split regexes as isolated Splits, then
ByteLevel; SentencePiece files: Llama's Metaspace-style pipeline with merges by score), and both
encode the same corpus slice; ids are compared after timing.  MB/s of UTF-8 input, one core.

    RAYON_NUM_THREADS=1 taskset -c 0 python bench/bench_gguf.py [--mb 1] [--corpus large_en code multilingual] [--cpu]
"""
from __future__ import annotations

import argparse
import json
import lzma
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fastbpe import patterns  # noqa: E402
from fastbpe.gguf import GGUFTokenizer, read_metadata  # noqa: E402
from fastbpe.gguf.pretokenizers import REGEXES, to_python  # noqa: E402
from fastbpe.gguf.vocab import USER_DEFINED  # noqa: E402

SHARED = Path(os.environ.get("FASTBPE_SHARED") or REPO.parent / "shared")
NAMES = ["gpt-2", "llama-bpe", "qwen2", "deepseek-coder", "falcon", "starcoder", "command-r", "llama-spm"]


def hf_spec(tok: GGUFTokenizer, meta: dict) -> dict:
    """A tokenizer.json that HF tokenizers runs like llama.cpp runs the GGUF file (user-defined
    tokens, which llama.cpp always cuts out, as added tokens)."""
    vocab = {t: i for t, i in tok.vocab.text_to_id.items()}
    added = [{"id": i, "content": tok.vocab.tokens[i], "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": False} for i in tok.vocab.special_ids if tok.vocab.attrs[i] & USER_DEFINED]
    if tok.model_type == "llama":
        scores = tok.vocab.scores
        merges = []
        for t, c in vocab.items():
            for k in range(1, len(t)):
                if t[:k] in vocab and t[k:] in vocab:
                    merges.append((-float(scores[c]), c, t[:k], t[k:]))
        merges.sort()
        return {"version": "1.0", "added_tokens": added, "normalizer": {"type": "Sequence", "normalizers": [
                    {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
                "pre_tokenizer": None, "post_processor": None, "decoder": None,
                "model": {"type": "BPE", "vocab": vocab, "merges": [[a, b] for _, _, a, b in merges],
                          "byte_fallback": True, "unk_token": "<unk>", "fuse_unk": True}}
    originals = {REGEXES["llama3"][0]: patterns.LLAMA3_PATTERN, REGEXES["qwen2"][0]: patterns.QWEN2_PATTERN}
    steps = [{"type": "Split", "pattern": {"Regex": originals.get(e, to_python(e))}, "behavior": "Isolated",
              "invert": False} for e in REGEXES[tok.vocab.pre.kind]]
    steps.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False})
    return {"version": "1.0", "added_tokens": added, "normalizer": None,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": steps}, "post_processor": None, "decoder": None,
            "model": {"type": "BPE", "vocab": vocab, "merges": meta["tokenizer.ggml.merges"],
                      "ignore_merges": tok.vocab.ignore_merges}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--corpus", nargs="+", default=["large_en", "code", "multilingual"])
    ap.add_argument("--names", nargs="+", default=NAMES)
    ap.add_argument("--cpu", action="store_true", help="time CPU seconds of this process (a loaded machine)")
    args = ap.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    from tokenizers import Tokenizer

    texts = {}
    for c in args.corpus:
        with lzma.open(SHARED / "data" / "corpus" / f"{c}.txt.xz", "rt", encoding="utf-8") as f:
            texts[c] = f.read(int(args.mb * 1_000_000))
    print(f"| vocab | pre | corpus | fastbpe MB/s | HF MB/s | ratio | same ids | path |")
    print("|---|---|---|---:|---:|---:|---|---|")
    for name in args.names:
        path = SHARED / "data" / "gguf" / f"ggml-vocab-{name}.gguf"
        tok = GGUFTokenizer.from_file(path)
        hf = Tokenizer.from_str(json.dumps(hf_spec(tok, read_metadata(path))))
        how = "SPM merge_ids" if tok.model_type == "llama" else (
            "C scanner" if tok.splitter.scanner_kind >= 0 else "regex chain")
        for c, text in texts.items():
            mb = len(text.encode("utf-8")) / 1e6
            tok.encode_ids(text[:2000])
            t0 = clock()
            ours = tok.encode_ids(text)
            t1 = clock()
            theirs = hf.encode(text, add_special_tokens=False).ids
            t2 = clock()
            print(f"| {name} | {tok.pre_tokenizer or '-'} | {c} | {mb / (t1 - t0):.1f} | {mb / (t2 - t1):.1f} | "
                  f"{(t2 - t1) / (t1 - t0):.1f}x | {ours == theirs} | {how} |", flush=True)


if __name__ == "__main__":
    main()
