"""Quick single-thread A/B: fastbpe vs fastokens on distinct 0.5 MB slices (first slice warms up).

Usage: python bench/slices_vs_fastokens.py CORPUS.txt [encoding ...]
Prints MB/s medians per library over the timed slices; ids checked equal between the two.
"""
import os
import statistics
import sys
import time

import fastokens

from fastbpe import get_encoding

SLICE = 500_000


def slices(text, n):
    data = text.encode()
    out, start = [], 0
    for _ in range(n):
        end = min(start + SLICE, len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:
            end += 1
        out.append(data[start:end].decode())
        start = end
    return out


def main():
    path = sys.argv[1]
    names = sys.argv[2:] or ["cl100k_base"]
    text = open(path, encoding="utf-8", errors="ignore").read()
    parts = slices(text, 5)
    vocab_dir = os.environ.get("FASTBPE_DATA_DIR", "/work/shared/data/vocab")
    for name in names:
        fb = get_encoding(name)
        fo = fastokens.Tokenizer.from_tiktoken(os.path.join(vocab_dir, name + ".tiktoken"), encoding=name)
        rates = {"fastbpe": [], "fastokens": []}
        for i, part in enumerate(parts):
            t0 = time.perf_counter(); a = fb.encode_ordinary(part); t1 = time.perf_counter()
            b = fo.encode_ordinary(part).ids; t2 = time.perf_counter()
            assert a == list(b), (name, i)
            if i:
                mb = len(part.encode()) / 1e6
                rates["fastbpe"].append(mb / (t1 - t0)); rates["fastokens"].append(mb / (t2 - t1))
        a, b = statistics.median(rates["fastbpe"]), statistics.median(rates["fastokens"])
        print(f"{name} {os.path.basename(path)}: fastbpe {a:.0f} MB/s  fastokens {b:.0f} MB/s  ratio {a / b:.2f}")


if __name__ == "__main__":
    main()
