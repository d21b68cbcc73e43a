"""Where fastbpe's encode time goes, in wall time (one core; a companion to peers.py).

    python bench/encode_profile.py [--vocab cl100k_base] [--corpus English]
    valgrind --tool=callgrind --instr-atstart=no [--branch-sim=yes] [--cache-sim=yes] \
        python bench/encode_profile.py --vocab 'Qwen2.5 tokenizer.json' --corpus code --callgrind

Two measurements, each a median over fresh slices of the shared corpus:

1. **First-seen against seen-before.**  Each 0.3 MB slice is encoded the first time any
   call sees it, then again: the second call finds nearly every piece in the thread's piece
   cache, so the gap between the two is what pieces the cache has not met yet cost (token
   lookups and merges).  Also the same with `encode_to_numpy` (no list of ints) and the
   slice's `str.encode` alone.
2. **One merged piece against how many distinct pieces are merged.**  Pieces of the slices
   that are not tokens, merged again and again by merge_scan in a C loop (no cache, no
   Python between calls), k distinct ones in turn: with k = 1 everything the merge reads
   stays in L1 and the branch predictor learns the piece; as k grows the pair-table slots
   the merges read (several MiB for a 100k vocabulary) fall out of the caches.

With `--callgrind` it measures nothing itself: it runs one row of peers.py's encode section
(`--vocab` is then any of its rows, tokenizer.json ones too) the section's way, a warm-up part
(`common.parts` part 0) then the first-seen 0.5 MB part 1 through `common.encoder`, and only
that call is instrumented (callgrind_control), so two builds compare by instruction counts,
simulated mispredicts and misses on a loaded machine (bench/RESULTS.md's kernel notes).

Not a test: timings belong here, never in tests/.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]   # common.py, and fastbpe built in place
import common as c  # noqa: E402

import fastbpe  # noqa: E402
from fastbpe._testing import merge_seconds  # noqa: E402


def rate(nbytes: int, fn) -> float:
    t0 = time.perf_counter()
    fn()
    return nbytes / (time.perf_counter() - t0) / 1e6


def first_and_again(enc, texts: list[str]) -> dict[str, float]:
    """Median MB/s of each way of encoding the slices (the first slice only warms up)."""
    enc.encode_ordinary(texts[0])
    rows: dict[str, list[float]] = {k: [] for k in (
        "str.encode alone", "encode_ordinary, first seen", "encode_ordinary, seen before",
        "encode_to_numpy, first seen", "encode_to_numpy, seen before")}
    for i, t in enumerate(texts[1:]):
        nb = len(t.encode())
        rows["str.encode alone"].append(rate(nb, lambda: t.encode()))
        # alternate which API meets the slice first, so neither always gets the warmer cache
        first, second = (("encode_ordinary", enc.encode_ordinary), ("encode_to_numpy", enc.encode_to_numpy))[::1 if i % 2 else -1]
        rows[f"{first[0]}, first seen"].append(rate(nb, lambda: first[1](t)))
        rows[f"{second[0]}, seen before"].append(rate(nb, lambda: second[1](t)))
        rows[f"{first[0]}, seen before"].append(rate(nb, lambda: first[1](t)))
    return {k: statistics.median(v) for k, v in rows.items() if v}


def merged_pieces(enc, text: str) -> list[bytes]:
    ranks = enc.mergeable_ranks
    pieces = dict.fromkeys(p.encode() for p in enc.splitter.findall(text))
    out = [p for p in pieces if 1 < len(p) <= 48 and p not in ranks]
    random.Random(1).shuffle(out)
    return out


def merge_cost(enc, pieces: list[bytes], calls: int = 200_000) -> list[tuple[int, float, float]]:
    """(k distinct pieces, bytes a piece, ns a merge_scan call) for growing k: the merge loop
    alone, in C (`_testing.merge_seconds`), best of three."""
    out = []
    for k in (1, 10, 50, 200, 1000, 5000, 20000):
        if k > len(pieces):
            break
        sub = pieces[:k]
        rounds = max(1, calls // k)
        merge_seconds(enc.kernel, sub, 1)   # first touch
        best = min(merge_seconds(enc.kernel, sub, rounds) for _ in range(3))
        out.append((k, sum(map(len, sub)) / k, best / (rounds * k) * 1e9))
    return out


def callgrind_row(vocab: str, corpus: str) -> None:
    """The encode section's call on one first-seen part, alone instrumented."""
    if vocab not in c.VOCABS:
        raise SystemExit(f"--callgrind: --vocab must be one of the encode section's rows: {sorted(c.VOCABS)}")
    texts = c.parts(c.CORPORA[corpus], 2.0)
    encode = c.encoder("fastbpe", vocab)
    encode(texts[0])
    c.callgrind_instrument(True)
    encode(texts[1])
    c.callgrind_instrument(False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vocab", default="cl100k_base",
                    help="a get_encoding name; with --callgrind, a row of the encode section")
    ap.add_argument("--corpus", default="English", choices=sorted(c.CORPORA))
    ap.add_argument("--slices", type=int, default=9)
    ap.add_argument("--callgrind", action="store_true",
                    help="run the encode section's call on one first-seen part, instrumenting it alone")
    args = ap.parse_args()
    if args.callgrind:
        callgrind_row(args.vocab, args.corpus)
        return
    c.pin(1)
    enc = fastbpe.get_encoding(args.vocab)
    texts = c.parts(c.CORPORA[args.corpus], 0.3 * (args.slices + 1), n=args.slices + 1)
    print(f"fastbpe {args.vocab}, {args.corpus}, {args.slices} slices of "
          f"{len(texts[1].encode()) / 1e6:.2f} MB, one core\n")
    print("| call | MB/s (median) |\n|---|---:|")
    for k, v in first_and_again(enc, texts).items():
        print(f"| {k} | {v:.0f} |")
    pieces = merged_pieces(enc, "".join(texts))
    print(f"\n{len(pieces)} distinct pieces of the slices are not tokens and merge.\n")
    print("| distinct pieces merged in turn | bytes a piece | ns a merge_scan call |\n|---:|---:|---:|")
    for k, nb, ns in merge_cost(enc, pieces):
        print(f"| {k} | {nb:.1f} | {ns:.0f} |")


if __name__ == "__main__":
    main()
