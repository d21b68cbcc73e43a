"""One tokenizer.json file, one library call, the models section's way (a companion to peers.py):
a warm-up part, then one timed part seen for the first time, per corpus.

    python bench/model_profile.py phi3                       # encode_batch (+ .ids), every corpus
    python bench/model_profile.py phi3 --call ids --corpus code
    valgrind --tool=callgrind --instr-atstart=no python bench/model_profile.py phi3 --callgrind

`phi3` is a folder of the shared data's vocab/hf/ (or a path to a tokenizer.json).  The parts
are the models section's (`common.parts`, 2 MB of each corpus in 4, cut into ~2 kB documents).
With `--callgrind` the timed call alone is instrumented (callgrind_control switches it on and
off around it), so its instruction count can be compared between two builds on a loaded
machine.  `--keep` times the other three parts instead, keeping what each call returns as
peers.py does: the collector's passes over the returned lists of ids then land inside the timed
calls, as in the bench (8-14% of a batch's instructions; `--gc-off` leaves them out).
Not a test: timings belong here, never in tests/.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]   # common.py, and fastbpe built in place
import common as c  # noqa: E402

import fastbpe  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="a folder name under vocab/hf/ of the shared data, or a tokenizer.json path")
    ap.add_argument("--call", default="batch", choices=["batch", "ids", "fast"],
                    help="batch: encode_batch then .ids of each; ids: encode_ids_batch; fast: encode_batch_fast "
                         "then .ids of each")
    ap.add_argument("--corpus", action="append", choices=sorted(c.CORPORA), help="default: every corpus")
    ap.add_argument("--callgrind", action="store_true", help="instrument the timed call only")
    ap.add_argument("--keep", action="store_true",
                    help="time parts 1-3, results kept (peers.py's protocol: the collector's passes inside)")
    ap.add_argument("--gc-off", action="store_true", help="gc.disable() over the timed calls")
    a = ap.parse_args(argv)
    path = a.model if a.model.endswith(".json") else str(c.HF_DIR / a.model / "tokenizer.json")
    tok = fastbpe.Tokenizer.from_file(path)
    tok.no_truncation()
    if a.call == "batch":
        def call(docs):
            return [e.ids for e in tok.encode_batch(docs, add_special_tokens=False, num_threads=1)]
    elif a.call == "fast":
        def call(docs):
            return [e.ids for e in tok.encode_batch_fast(docs, add_special_tokens=False, num_threads=1)]
    else:
        def call(docs):
            return tok.encode_ids_batch(docs, add_special_tokens=False, num_threads=1)
    print(f"{path}: engine {tok.engine}; {a.call}")
    for label in a.corpus or list(c.CORPORA):
        parts = [c.documents(p, 2000) for p in c.parts(c.CORPORA[label], 2.0)]
        warm, timed = parts[0], parts[1:] if a.keep else parts[1:2]
        call(warm)
        gc.collect()
        if a.gc_off:
            gc.disable()
        kept = []
        if a.callgrind:
            c.callgrind_instrument(True)
        t0 = time.perf_counter()
        for docs in timed:
            kept.append(call(docs))
        seconds = time.perf_counter() - t0
        if a.callgrind:
            c.callgrind_instrument(False)
        gc.enable()
        del kept
        size = sum(len(d.encode()) for docs in timed for d in docs)
        print(f"{label:<13} {size / seconds / 1e6:7.2f} MB/s ({size / 1e6:.2f} MB in {seconds * 1e3:.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
