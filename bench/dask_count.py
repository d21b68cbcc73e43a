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
import math
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


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def memory_added_by(fn) -> tuple:
    """(result, peak bytes fn added to this process's RSS): VmHWM is reset first."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak resident size (Linux >= 4.0)
    before = _status_kb("VmRSS")
    out = fn()
    return out, (_status_kb("VmHWM") - before) * 1024


def estimate(m: dict, total_bytes: float = 1e12, cores: int = 8,
             workers=(4, 16, 64, 256), net_bytes_s: float = 1e9) -> list:
    """Markdown lines: wall time and memory for `total_bytes` on N workers of `cores` cores,
    scaled from the measurements in `m` (see docs/distributed.md for the model)."""
    b = m["shard_bytes"]
    beta = math.log(m["unique_all"] / m["unique_shard"]) / math.log(m["all_bytes"] / b)

    def unique(x):  # Heaps' law through the shard and the whole corpus
        return m["unique_shard"] * (x / b) ** beta

    piece_len = m["arena_bytes"] / m["unique_shard"]
    export_b = piece_len + 16  # arena + int64 length + int64 count
    counter_b = piece_len + 48  # entry (hash, count, offset, length) + hash slots
    add_per_piece = m["add_s"] / (2 * m["unique_shard"])
    rate = b / m["shard_s"]
    leaves = math.ceil(total_bytes / b)
    u_all = unique(total_bytes)
    lines = [f"Estimate for {total_bytes / 1e12:g} TB of text like this corpus, {cores} cores per "
             f"worker, shards of {b / 1e6:.0f} MB ({leaves:,} of them), reduction fan-in 8, "
             f"{net_bytes_s / 1e9:g} GB/s network per worker (model: docs/distributed.md). "
             f"Unique pieces follow Heaps' law U(x) = U(shard) (x / shard)^{beta:.2f} through the "
             f"two measured points: {u_all / 1e6:,.0f} M unique pieces at {total_bytes / 1e12:g} TB.",
             "", "| workers | count (min) | reduce (min) | to client (min) | merge loop (min) | "
             "total (min) | worker RAM (GB) | top reducer RAM (GB) | client RAM (GB) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n in workers:
        slots = n * cores
        count_s = total_bytes / (slots * rate)
        reduce_s, level, tasks = 0.0, 1, leaves
        while tasks > 1:
            part = unique(min(8 ** (level - 1) * b, total_bytes))
            tasks = math.ceil(tasks / 8)
            waves = math.ceil(tasks / slots)
            reduce_s += waves * (8 * part * add_per_piece + 8 * part * export_b / net_bytes_s)
            level += 1
        to_client_s = u_all * export_b / net_bytes_s
        merge_s = m["merge_s"] * u_all / m["unique_all"]
        total = count_s + reduce_s + to_client_s + merge_s
        worker_gb = cores * m["worker_rss_mb"] / 1e3
        top_gb = (8 * unique(total_bytes / 8) * export_b + u_all * (counter_b + export_b)) / 1e9
        client_gb = u_all * (counter_b + m["merge_bytes_per_piece"]) / 1e9
        lines.append(f"| {n} | {count_s / 60:.1f} | {reduce_s / 60:.1f} | {to_client_s / 60:.1f} | "
                     f"{merge_s / 60:.1f} | {total / 60:.0f} | {worker_gb:.1f} | {top_gb:.0f} | "
                     f"{client_gb:.0f} |")
    return lines


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

    load_at_start = os.getloadavg()[0]
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
    _, merge_bytes = memory_added_by(lambda: trainer.train_model(local, args.vocab_size))

    mb = size / 1e6
    lines = ["## Piece counting: one machine vs a Dask LocalCluster", "",
             f"`python bench/dask_count.py{'' if args.mb is None else f' --mb {args.mb:g}'} "
             f"--blocksize-mb {args.blocksize_mb:g}` on {platform.machine()}, "
             f"{os.cpu_count()} cores (shared with other jobs: load average {load_at_start:.1f} "
             f"at start), {mb:.0f} MB of English "
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
              f"| memory the merge loop adds (peak) | {merge_bytes / 1e6:.0f} MB "
              f"({merge_bytes / len(local):.0f} B per unique piece) |"]
    measured = {"shard_bytes": shard_bytes, "shard_s": shard_s, "all_bytes": size,
                "unique_shard": len(exported[1]), "unique_all": len(local),
                "arena_bytes": len(exported[0]), "add_s": add_s, "merge_s": merge_s,
                "worker_rss_mb": max(worker_rss.values()),
                "merge_bytes_per_piece": merge_bytes / len(local)}
    lines += ["", *estimate(measured)]
    print("\n".join(lines))
    if args.no_write:
        return
    from compare import write_marked_lines

    write_marked_lines(args.out, "dask", lines)


if __name__ == "__main__":
    main()
