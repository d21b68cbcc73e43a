"""A tokenizer.json with many added tokens: load time and first encode (which builds the
added-token automaton), fastbpe.hf vs HF tokenizers; ids compared.  The file is a small
byte-level BPE written here with N added tokens `<tok…_k>` (no shared data needed).

    python bench/bench_added_tokens.py [--n 100000 300000]
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fastbpe.formats.bytelevel import BYTE_TO_CHAR  # noqa: E402
from fastbpe.hf import Tokenizer  # noqa: E402


def spec(n: int) -> str:
    vocab = {BYTE_TO_CHAR[b]: b for b in range(256)}
    rng = random.Random(0)
    added = [{"id": 256 + k, "content": f"<tok{rng.randrange(10**9)}_{k}>", "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True} for k in range(n)]
    return json.dumps({"version": "1.0", "added_tokens": added, "normalizer": None,
                       "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                         "use_regex": True},
                       "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": False,
                                                           "trim_offsets": True, "use_regex": True},
                       "model": {"type": "BPE", "vocab": vocab, "merges": []}})


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[100_000])
    args = ap.parse_args()
    try:
        from tokenizers import Tokenizer as HFTokenizer
    except ImportError:
        HFTokenizer = None
    for n in args.n:
        text = spec(n)
        probe = "hello " + json.loads(text)["added_tokens"][n // 2]["content"] + " world"
        ours, load = timed(lambda: Tokenizer.from_str(text))
        enc, first = timed(lambda: ours.encode(probe))
        print(f"n={n}: fastbpe load {load:.2f} s, first encode {first:.2f} s, "
              f"max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
        if HFTokenizer is not None:
            ref, load = timed(lambda: HFTokenizer.from_str(text))
            want, first = timed(lambda: ref.encode(probe))
            print(f"n={n}: HF      load {load:.2f} s, first encode {first:.2f} s; ids equal: {want.ids == enc.ids}")


if __name__ == "__main__":
    main()
