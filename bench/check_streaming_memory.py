"""Train from a generator over a large stream and report peak memory (bounded-memory check).

    python bench/check_streaming_memory.py --mb 100 --times 5 --vocab 32000

Streams the first N MB of large_en.txt.xz ``--times`` times (read line by line, never held
whole), trains, and prints the peak RSS of this process: it should track the number of
unique pieces, not the size of the stream.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import train_table  # noqa: E402

import fastbpe  # noqa: E402


def stream(path, times):
    for _ in range(times):
        with open(path, encoding="utf-8", errors="replace") as f:
            block = []
            for line in f:
                block.append(line)
                if len(block) == 2000:
                    yield "".join(block)
                    block = []
            if block:
                yield "".join(block)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--times", type=int, default=5)
    ap.add_argument("--vocab", type=int, default=32000)
    args = ap.parse_args(argv)
    path = train_table.text_slice(args.mb)
    t0 = time.perf_counter()
    enc = fastbpe.train(stream(path, args.times), args.vocab, show_progress=False)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"streamed {args.mb * args.times} MB, vocab {enc.n_vocab}: {wall:.1f} s, "
          f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
