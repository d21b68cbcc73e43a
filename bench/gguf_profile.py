"""One GGUF file, one GGUFTokenizer call, the gguf section's documents (a companion to peers.py):
a warm-up part, then one part seen for the first time, per corpus.

    python bench/gguf_profile.py falcon --parse-special          # encode_ids_batch, every corpus
    python bench/gguf_profile.py gpt-2 --call ids --corpus code
    valgrind --tool=callgrind --instr-atstart=no python bench/gguf_profile.py falcon --callgrind

`falcon` is llama.cpp's vocab file ggml-vocab-falcon.gguf (bench/gguf_libs.py finds it), or a path
to a .gguf.  `--call batch` is `encode_ids_batch` on one thread, `--call ids` `encode_ids` per
document.  With `--parse-special`, each document also holds the file's special tokens (the
texts a chat template makes), spread through it.  With `--callgrind` the timed call alone is
instrumented, so its instruction count can be compared between two builds on a loaded machine.
Not a test: timings belong here, never in tests/.
"""
from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]   # common.py, and fastbpe built in place
import common as c  # noqa: E402
from gguf_libs import gguf_path  # noqa: E402

from fastbpe.gguf import GGUFTokenizer  # noqa: E402


def with_specials(docs: list, tok: GGUFTokenizer) -> list:
    """docs with the file's parse_special tokens put between words, one per ~200 characters."""
    words = [tok.vocab.tokens[i] for i in tok._special_ids(True)]
    if not words:
        return docs
    rng = random.Random(1)
    out = []
    for d in docs:
        parts = d.split(" ")
        for k in range(0, len(parts), 30):
            parts[k] = rng.choice(words) + parts[k]
        out.append(" ".join(parts))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="a llama.cpp vocab name (gpt-2, falcon, ...) or a .gguf path")
    ap.add_argument("--call", default="batch", choices=["batch", "ids"])
    ap.add_argument("--parse-special", action="store_true", help="parse_special=True, specials in the text")
    ap.add_argument("--corpus", action="append", choices=sorted(c.CORPORA), help="default: every corpus")
    ap.add_argument("--callgrind", action="store_true", help="instrument the timed call only")
    a = ap.parse_args(argv)
    path = a.model if a.model.endswith(".gguf") else str(gguf_path(a.model))
    tok = GGUFTokenizer.from_file(path)
    special = a.parse_special
    if a.call == "batch":
        def call(docs):
            return tok.encode_ids_batch(docs, parse_special=special, num_threads=1)
    else:
        def call(docs):
            return [tok.encode_ids(d, parse_special=special) for d in docs]
    print(f"{path}: engine {tok.engine}; {a.call}, parse_special={special}")
    for label in a.corpus or list(c.CORPORA):
        parts = [c.documents(p, 2000) for p in c.parts(c.CORPORA[label], 2.0)]
        if special:
            parts = [with_specials(docs, tok) for docs in parts]
        warm, timed = parts[0], parts[1]
        call(warm)
        gc.collect()
        if a.callgrind:
            c.callgrind_instrument(True)
        t0 = time.perf_counter()
        ids = call(timed)
        seconds = time.perf_counter() - t0
        if a.callgrind:
            c.callgrind_instrument(False)
        size = sum(len(d.encode()) for d in timed)
        print(f"{label:<13} {size / seconds / 1e6:7.2f} MB/s ({size / 1e6:.2f} MB in {seconds * 1e3:.1f} ms,"
              f" {sum(map(len, ids))} ids)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
