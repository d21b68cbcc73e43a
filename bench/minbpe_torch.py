#!/usr/bin/env python3
"""minbpe-compatible training: fastbpe's kernel against the vectorised-torch minbpe trainer.

The peer is minbpe-pytorch (github.com/kuprel/minbpe-pytorch), which runs Karpathy's
BasicTokenizer training as whole-tensor operations.  It is no pip package, so this file
re-implements its algorithm from the project's description (no code of it is copied and
nothing is fetched at run time): per merge,

1. stack every adjacent pair of ids into an (n - 1, 2) tensor,
2. ``torch.unique(..., dim=0, return_counts=True)`` and ``argmax`` pick the top pair
   (among equal counts, the smallest pair: unique's output is sorted),
3. a mask marks every position where the pair starts; the first id becomes the new id and
   the second is dropped (``~roll(mask, 1)``).

Step 3 marks overlapping occurrences too, so a run "aaa" whose pair "aa" is merged turns
into one token, not two (the project's README describes this as a known difference); with
its different tie rule, the merges can drift from minbpe's.  The table reports both: how
many merges equal minbpe's (fastbpe's BasicTokenizer gives exactly minbpe's merges; the
minbpe tests check that) and the speed ratio.

    python bench/minbpe_torch.py            # tinyshakespeare and taylorswift -> RESULTS.md
    python bench/minbpe_torch.py --no-write --corpora taylorswift
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import datasources as ds  # noqa: E402

VOCAB_SIZE = 512


def torch_basic_train(data: bytes, vocab_size: int) -> list:
    """The vectorised-torch BasicTokenizer training described above; returns the merges
    as [(left, right), ...] in order."""
    import torch

    ids = torch.tensor(list(data), dtype=torch.int64)
    merges = []
    for i in range(vocab_size - 256):
        if ids.numel() < 2:
            break
        pairs = torch.stack((ids[:-1], ids[1:]), dim=1)
        unique, counts = torch.unique(pairs, dim=0, return_counts=True)
        pair = unique[torch.argmax(counts)]
        mask = torch.all(pairs == pair, dim=1)
        mask = torch.cat((mask, torch.zeros(1, dtype=torch.bool)))
        ids = ids.clone()
        ids[mask] = 256 + i
        ids = ids[~torch.roll(mask, 1, 0)]
        merges.append(tuple(pair.tolist()))
    return merges


def fastbpe_basic_train(text: str, vocab_size: int) -> list:
    from fastbpe.minbpe import BasicTokenizer

    tok = BasicTokenizer()
    tok.train(text, vocab_size)
    return sorted(tok.merges, key=tok.merges.get)


def pair_counts_after(text: str, n_merges: int, pairs) -> list:
    """How often each pair occurs in the text after minbpe's first ``n_merges`` merges
    (encoding with them replays training: each merge only makes a new, higher id)."""
    import numpy as np

    from fastbpe.minbpe import BasicTokenizer

    tok = BasicTokenizer()
    tok.train(text, 256 + n_merges)
    ids = np.asarray(tok.encode(text), dtype=np.int64)
    keys = ids[:-1] * (1 << 20) + ids[1:]
    return [int(np.count_nonzero(keys == a * (1 << 20) + b)) for a, b in pairs]


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out


def rows(corpora, vocab_size):
    import torch

    fastbpe_basic_train("warm-up: imports and first call", 257)  # not in the timings

    for name in corpora:
        if not ds.corpus_available(name):
            print(f"skip {name}: {ds.corpus_path(name)} not found", file=sys.stderr)
            continue
        text = ds.load_corpus(name)
        fast_s, fast = timed(fastbpe_basic_train, text, vocab_size)
        torch_s, slow = timed(torch_basic_train, text.encode("utf-8"), vocab_size)
        same = next((i for i, (a, b) in enumerate(zip(fast, slow)) if a != b), len(fast))
        first = ""
        if same < min(len(fast), len(slow)):
            n_fast, n_slow = pair_counts_after(text, same, [fast[same], slow[same]])
            first = (f"merge {same}: {fast[same]} ({n_fast}x) vs {slow[same]} ({n_slow}x)"
                     f"{', a tie' if n_fast == n_slow else ''}")
        yield (name, len(text.encode("utf-8")), fast_s, torch_s, same, len(fast),
               torch.get_num_threads(), first)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default="tinyshakespeare,taylorswift")
    ap.add_argument("--vocab-size", type=int, default=VOCAB_SIZE)
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    import torch

    lines = [f"## minbpe-compatible training: fastbpe vs vectorised torch (BasicTokenizer, "
             f"vocab {args.vocab_size})", "",
             f"`python bench/minbpe_torch.py` on {platform.machine()}, {os.cpu_count()} cores, "
             f"torch {torch.__version__} on the CPU. The torch trainer is minbpe-pytorch's "
             "algorithm re-implemented from its description (see the script). \"Merges equal "
             "to minbpe\" counts the leading merges that match fastbpe's, which are minbpe's.", "",
             "| corpus | MB | fastbpe (s) | torch (s) | torch threads | speed-up | "
             "merges equal to minbpe | first difference (pair counts at that point) |",
             "|---|---:|---:|---:|---:|---:|---|---|"]
    for name, nbytes, fast_s, torch_s, same, n, threads, first in rows(
            args.corpora.split(","), args.vocab_size):
        lines.append(f"| {name} | {nbytes / 1e6:.2f} | {fast_s:.3f} | {torch_s:.2f} | {threads} | "
                     f"{torch_s / fast_s:.0f}x | {same} of {n} | {first} |")
        print(lines[-1], flush=True)
    if args.no_write:
        return
    from compare import write_marked_lines

    write_marked_lines(args.out, "minbpe_torch", lines)


if __name__ == "__main__":
    main()
