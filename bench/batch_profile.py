"""The batch section's exact call, one library, one vocabulary (a companion to peers.py): a
warm-up part, then the timed parts, results kept, as peers.py's batch rows.

    python bench/batch_profile.py --vocab cl100k_base --corpus English
    python bench/batch_profile.py --vocab "Qwen2.5 tokenizer.json" --call one
    valgrind --tool=callgrind --instr-atstart=no python bench/batch_profile.py --callgrind

`--call batch` is `common.batcher` (fastbpe: `encode_ordinary_batch(docs, num_threads=k)` or
`encode_ids_batch`), `--call one` the encode rows' call (`common.encoder`) on each part's
documents joined into one text: the same bytes without the batch.  The parts are the batch
section's (`common.parts`, 2 MB of each corpus in 4, cut into ~2 kB documents); part 0 warms up,
parts 1-3 are timed (`--parts 1`: part 1 only).  With `--callgrind` the timed calls alone are
instrumented.  The collector's passes over the kept lists land inside the timed calls, as in
the bench: the report counts them per generation (gc.callbacks); `--gc-off` leaves them out.
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default="fastbpe")
    ap.add_argument("--vocab", default="cl100k_base", choices=sorted(c.VOCABS))
    ap.add_argument("--corpus", action="append", choices=sorted(c.CORPORA), help="default: every corpus")
    ap.add_argument("--call", default="batch", choices=["batch", "one"],
                    help="batch: the library's batch API; one: each part's documents as one text")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--parts", type=int, default=3, help="timed parts (1-3)")
    ap.add_argument("--callgrind", action="store_true", help="instrument the timed calls only")
    ap.add_argument("--gc-off", action="store_true", help="gc.disable() over the timed calls")
    a = ap.parse_args(argv)
    if a.call == "batch":
        batch = c.batcher(a.lib, a.vocab)

        def call(docs):
            return batch(docs, a.threads)
    else:
        one = c.encoder(a.lib, a.vocab)

        def call(docs):
            return one("".join(docs))
    passes = [0, 0, 0]

    def count(phase, info):
        if phase == "start":
            passes[info["generation"]] += 1

    print(f"{a.lib} {a.vocab}: {a.call}, {a.threads} thread(s)")
    for label in a.corpus or list(c.CORPORA):
        parts = [c.documents(p, 2000) for p in c.parts(c.CORPORA[label], 2.0)]
        warm, timed = parts[0], parts[1:1 + a.parts]
        call(warm)
        gc.collect()
        if a.gc_off:
            gc.disable()
        passes[:] = [0, 0, 0]
        gc.callbacks.append(count)
        kept = []
        if a.callgrind:
            c.callgrind_instrument(True)
        t0, c0 = time.perf_counter(), time.thread_time()
        for docs in timed:
            kept.append(call(docs))
        seconds, cpu = time.perf_counter() - t0, time.thread_time() - c0
        if a.callgrind:
            c.callgrind_instrument(False)
        gc.callbacks.remove(count)
        gc.enable()
        del kept
        size = sum(len(d.encode()) for docs in timed for d in docs)
        print(f"{label:<13} {size / seconds / 1e6:7.2f} MB/s ({size / 1e6:.2f} MB in {seconds * 1e3:.1f} ms), "
              f"thread CPU {size / cpu / 1e6:.2f} MB/s; collections by generation {passes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
