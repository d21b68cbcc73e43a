#!/usr/bin/env python3
"""DeepSeek-R1-Distill-Llama against cl100k_base: the tokenizer.json front end or the table size?

    python bench/front_end_vs_table.py [--corpus English] [--parts 24]

Four encoders in one process pinned to one core, interleaved on the same fresh text, each
0.5 MB part timed once per encoder (the first part warms up):
  a  cl100k_base `encode_ordinary`
  b  cl100k_base exported as tokenizer.json, `encode_ids` (a's table, HF's front end)
  c  DeepSeek-R1-Distill-Llama tokenizer.json, `encode_ids`
  d  DeepSeek's 128k tokens as tiktoken ranks with cl100k's pattern, `encode_ordinary`
     (c's table, twice a's token slots, behind a's front end)
Prints each encoder's time over a's: median and min–max over the parts (bench/RESULTS.md kernel
notes round 8).  Needs the shared data (the DeepSeek file and the corpora).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import common as c  # noqa: E402


def encoders() -> dict:
    import fastbpe
    from fastbpe.formats.bytelevel import token_bytes

    cl = fastbpe.get_encoding("cl100k_base")
    c.export_tokenizer_json()
    exported = fastbpe.Tokenizer.from_file(c.VOCABS[c.EXPORTED][1])
    path = c.VOCABS["DeepSeek-R1-Distill-Llama tokenizer.json"][1]
    deepseek = fastbpe.Tokenizer.from_file(path)
    vocab = json.loads(Path(path).read_text(encoding="utf-8"))["model"]["vocab"]
    ranks = fastbpe.Encoding("deepseek-llama-ranks", pat_str=cl.pattern,
                             mergeable_ranks={token_bytes(t): i for t, i in vocab.items()}, special_tokens={})
    return {"a cl100k encode_ordinary": cl.encode_ordinary,
            "b cl100k tokenizer.json": lambda s: exported.encode_ids(s, add_special_tokens=False),
            "c DeepSeek tokenizer.json": lambda s: deepseek.encode_ids(s, add_special_tokens=False),
            "d DeepSeek ranks, encode_ordinary": ranks.encode_ordinary}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default="English", choices=list(c.CORPORA))
    p.add_argument("--parts", type=int, default=24, help="timed 0.5 MB parts (code has room for ~18)")
    a = p.parse_args()
    c.pin(1)
    fns = encoders()
    texts = c.parts(c.CORPORA[a.corpus], 0.5 * (a.parts + 1), n=a.parts + 1)
    for f in fns.values():
        f(c.fresh_strs([texts[0]])[0])
    times = {k: [] for k in fns}
    for text in texts[1:]:
        for k, f in fns.items():
            s = c.fresh_strs([text])[0]
            t0 = time.perf_counter()
            f(s)
            times[k].append(time.perf_counter() - t0)
    first = next(iter(times.values()))
    print(f"{a.corpus}, {a.parts} parts of 0.5 MB, load {c.loadavg()}")
    for k, v in times.items():
        r = [x / y for x, y in zip(v, first)]
        print(f"{k:<36} time / a: median {statistics.median(r):.3f} (min {min(r):.3f}, max {max(r):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
