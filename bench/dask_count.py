#!/usr/bin/env python3
"""Piece counting on one machine against a Dask LocalCluster, plus the per-shard costs that
docs/distributed.md scales to 1 TB.

On the 250 MB English corpus (shared/data/corpus/large_en.txt.xz, decompressed once to
/tmp) it times, best of --repeat:

* local, ``trainer.count_files(path, num_threads=k)`` for k = 1 and 2;
* Dask, ``count_pieces_dask(path, blocksize=...)`` on a LocalCluster of 2 worker
  processes with 1 thread each (started before the clock; its start-up is reported);

checks both give the same counts, then measures one shard alone (count time, the size of
its exported counts, the time to add two shards' counts) and the workers' peak RSS.

    python bench/dask_count.py                  # -> the dask section of bench/RESULTS.md
    python bench/dask_count.py --mb 20 --no-write
"""
from __future__ import annotations

import argparse
import lzma
import os
import platform
import resource
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import datasources as ds  # noqa: E402

CORPUS = "large_en"


def corpus_file(mb: float | None) -> Path:
    """The corpus decompressed to /tmp (once), or its first `mb` MB cut at a newline."""
    src = ds.corpus_path(CORPUS)
    full = Path("/tmp") / f"fastbpe_bench_{CORPUS}.txt"
    if not full.exists():
        tmp = full.with_suffix(".part")
        with lzma.open(src, "rb") as f, open(tmp, "wb") as out:
            shutil.copyfileobj(f, out, 1 << 24)
        os.replace(tmp, full)
    if mb is None:
        return full
    part = Path("/tmp") / f"fastbpe_bench_{CORPUS}_{mb:g}MB.txt"
    if not part.exists():
        with open(full, "rb") as f:
            data = f.read(int(mb * 1e6))
        part.write_bytes(data[: data.rfind(b"\n") + 1])
    return part


def best(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=None, help="first MB of the corpus (default: all)")
    ap.add_argument("--blocksize-mb", type=float, default=32)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--vocab-size", type=int, default=100_000)
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)

    import distributed

    from fastbpe import _train, trainer
    from fastbpe.distributed import _count_shards, _prune, count_pieces_dask, shards_of
    from fastbpe.patterns import GPT4_PATTERN

    path = str(corpus_file(args.mb))
    size = os.path.getsize(path)
    blocksize = int(args.blocksize_mb * 1e6)
    results = {}
    for k in (1, 2):
        results[f"local, {k} thread(s)"], local = best(
            lambda: trainer.count_files(path, num_threads=k, show_progress=False), args.repeat)
    t = time.perf_counter()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        startup = time.perf_counter() - t
        results["Dask LocalCluster, 2 workers x 1 thread"], dist = best(
            lambda: count_pieces_dask(path, blocksize=blocksize, client=client), args.repeat)
        worker_rss = client.run(_peak_rss_mb)
        shards = shards_of(path, blocksize, client=client)
    same = dist.to_dict() == local.to_dict()
    print(f"same counts: {same}; {len(local)} unique pieces, {local.total} pieces")

    # one shard alone, in this process: the unit the 1 TB estimate scales
    shard_s, exported = best(lambda: _count_shards(shards[:1], GPT4_PATTERN, None), 1)
    shard_bytes = shards[0].end - shards[0].start
    export_mb = (len(exported[0]) + exported[1].nbytes + exported[2].nbytes) / 1e6
    pruned = _prune(exported, 2)
    second = _count_shards(shards[1:2], GPT4_PATTERN, None) if len(shards) > 1 else exported

    def add_two():
        c = _train.PieceCounter()
        c.add_exported(*exported)
        c.add_exported(*second)
        return c.export()

    add_s, both = best(add_two, 1)
    # the merge loop that runs on the client after the reduction
    merge_s, _ = best(lambda: trainer.train_model(local, args.vocab_size), 1)

    mb = size / 1e6
    lines = ["## Piece counting: one machine vs a Dask LocalCluster", "",
             f"`python bench/dask_count.py{'' if args.mb is None else f' --mb {args.mb:g}'} "
             f"--blocksize-mb {args.blocksize_mb:g}` on {platform.machine()}, "
             f"{os.cpu_count()} cores (shared with other jobs), {mb:.0f} MB of English "
             f"({CORPUS}), GPT-4 pattern, best of {args.repeat}. The cluster runs on the same "
             f"2 cores; it shows the overhead of the distributed path, not a speed-up.", "",
             "| counting | wall (s) | MB/s |", "|---|---:|---:|"]
    for name, sec in results.items():
        lines.append(f"| {name} | {sec:.2f} | {mb / sec:.0f} |")
    lines += ["", f"Same counts as local: {same} ({len(local):,} unique pieces, "
              f"{local.total:,} pieces). Cluster start-up (not in the wall times): "
              f"{startup:.1f} s. Shards: {len(shards)} of {args.blocksize_mb:g} MB. Workers' "
              f"peak RSS: {', '.join(f'{v:.0f} MB' for v in worker_rss.values())}.", "",
              "Per-shard costs (one process, one thread; used by docs/distributed.md):", "",
              "| measure | value |", "|---|---:|",
              f"| count one {shard_bytes / 1e6:.0f} MB shard | {shard_s:.2f} s "
              f"({shard_bytes / 1e6 / shard_s:.0f} MB/s) |",
              f"| its exported counts | {len(exported[1]):,} pieces, {export_mb:.1f} MB |",
              f"| the same pruned at min_frequency=2 | {len(pruned[1]):,} pieces |",
              f"| add two shards' counts | {add_s:.2f} s ({len(both[1]):,} pieces) |",
              f"| all {mb:.0f} MB: unique pieces | {len(local):,} |",
              f"| merge loop on them, vocab {args.vocab_size:,} (client) | {merge_s:.2f} s |",
              f"| this script's peak RSS (local counts, merges) | {_peak_rss_mb():.0f} MB |"]
    print("\n".join(lines))
    if args.no_write:
        return
    from compare import write_marked_lines

    write_marked_lines(args.out, "dask", lines)


if __name__ == "__main__":
    main()
