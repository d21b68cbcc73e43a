#!/usr/bin/env python3
"""Corpus encoding for training data, side by side on both cores: fastbpe `encode_files` vs
tokie's `encode_files` vs tiktoken `encode_ordinary_batch` + numpy, on the 250 MB English
corpus (`large_en.txt.xz`, decompressed once into a temporary directory, never the repo).

Two shapes of corpus, each run by every peer:

    books        708 files, one book per file, each file one document (cut from large_en by
                 its manifest's byte counts)
    paragraphs   one 250 MB file cut into documents at every blank line ("\\n\\n"), ~800k docs

Peers, each in a fresh process (so peak memory is that peer's own: ru_maxrss from wait4):

    fastbpe -> numpy  enc.encode_files(paths, split_on=..., separator=None, num_threads=2)
    fastbpe -> .bin   the same with out= a .bin in the temporary directory (ids stream to disk)
    tokie             tokie.Tokenizer.from_json(GPT-2 tokenizer.json).encode_files(paths,
                      separator=...), RAYON_NUM_THREADS=2
    tiktoken + numpy  read the files, split, enc.encode_ordinary_batch(docs, num_threads=2),
                      then one flat uint32 array + offsets (what a prepare.py does)
    baseline          a process that imports numpy and fastbpe and does nothing

The encoding is r50k_base (GPT-2): the one vocabulary tokie can load here (from the GPT-2
tokenizer.json in shared/data/vocab/hf; nothing is downloaded).  No separator token is added,
since tokie's `encode_files` has none; every peer's ids and offsets are checked equal to
fastbpe's (a digest of both arrays), and a peer that differs shows "ids differ".

Prints the table and writes the `<!-- corpus:start -->` section of bench/RESULTS.md (the
rest of the file is kept):

    python bench/corpus_table.py                  # 250 MB, best of 2 -> bench/RESULTS.md
    python bench/corpus_table.py --mb 20 --no-write
"""
from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import datasources as ds  # noqa: E402
from train_table import run_measured  # noqa: E402  (one child-process runner for the tables)

ENCODING = "r50k_base"
PEERS = ["fastbpe -> numpy", "fastbpe -> .bin", "tokie", "tiktoken + numpy"]
SHAPES = {"books": None, "paragraphs": "\n\n"}
WORK = Path(os.environ.get("FASTBPE_CORPUS_BENCH_DIR", Path(tempfile.gettempdir()) / "fastbpe-corpus-bench"))


# ------------------------------------------------------------------ the corpus


def prepare(mb: float) -> dict[str, list[str]]:
    """{shape: file paths}: the first `mb` MB of large_en as book files and as one file."""
    src = ds.corpus_path("large_en")
    manifest = src.with_name("large_en.manifest.tsv")
    if not src.exists() or not manifest.exists():
        sys.exit(f"missing {src} or {manifest} (shared data absent; set FASTBPE_SHARED)")
    root = WORK / f"{mb:g}MB"
    books_dir = root / "books"
    whole = root / "large_en.txt"
    done = root / "done"
    if not done.exists():
        books_dir.mkdir(parents=True, exist_ok=True)
        sizes = [int(line.split("\t")[2]) for line in manifest.read_text().splitlines()[1:]]
        limit = mb * 1e6
        taken = 0
        with lzma.open(src, "rb") as f, open(whole, "wb") as out:
            for i, size in enumerate(sizes):
                if taken >= limit:
                    break
                book = f.read(size)
                f.read(2)  # books are joined by one blank line
                (books_dir / f"{i:04d}.txt").write_bytes(book)
                out.write(book + b"\n\n")
                taken += size + 2
        done.write_text("ok")
    return {"books": sorted(str(p) for p in books_dir.iterdir()), "paragraphs": [str(whole)]}


# ------------------------------------------------------------------ one peer, in a child process


def child(peer: str, shape: str, paths: list[str], threads: int) -> dict:
    """Run one peer once; return its time and a digest of (ids, offsets)."""
    os.environ.setdefault("FASTBPE_DATA_DIR", str(ds.VOCAB_DIR))
    import numpy as np

    split = SHAPES[shape]
    if peer == "baseline":
        import fastbpe  # noqa: F401

        return {"seconds": 0.0}
    if peer.startswith("fastbpe"):
        import fastbpe

        enc = fastbpe.get_encoding(ENCODING)
        out = str(WORK / f"bench-{os.getpid()}.bin") if peer.endswith(".bin") else None
        t0, c0 = time.perf_counter(), _cpu()
        ids, offsets = enc.encode_files(paths, out, split_on=split, separator=None,
                                        num_threads=threads, show_progress=False)
        seconds, cpu = time.perf_counter() - t0, _cpu() - c0
        if out is not None:
            result = _summary(seconds, cpu, _chunks_of_file(out, ids.dtype), offsets)
            del ids, offsets
            os.unlink(out)
            os.unlink(out + ".offsets")
            return result
    elif peer == "tokie":
        import tokie

        tk = tokie.Tokenizer.from_json(str(ds.HF_GPT2_JSON))
        tk.no_truncation()  # this copy of tokenizer.json sets truncation to 50 tokens
        t0, c0 = time.perf_counter(), _cpu()
        ids, offsets = tk.encode_files(paths, separator=None if split is None else split.encode())
        seconds, cpu = time.perf_counter() - t0, _cpu() - c0
    elif peer == "tiktoken + numpy":
        enc = ds.reference_encoding(ENCODING)
        t0, c0 = time.perf_counter(), _cpu()
        docs = []
        for p in paths:
            with open(p, encoding="utf-8", errors="replace") as f:
                text = f.read()
            docs.extend(d for d in (text.split(split) if split else [text]) if d)
        lists = enc.encode_ordinary_batch(docs, num_threads=threads)
        del docs
        lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        ids = np.concatenate([np.array(x, dtype=np.uint32) for x in lists] or [np.empty(0, np.uint32)])
        del lists
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        seconds, cpu = time.perf_counter() - t0, _cpu() - c0
    else:
        raise SystemExit(f"unknown peer {peer!r}")
    return _summary(seconds, cpu, (ids[i:i + CHUNK] for i in range(0, len(ids), CHUNK)), offsets)


CHUNK = 1 << 20


def _cpu() -> float:
    """CPU seconds of this process so far, all threads (user + system)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _summary(seconds: float, cpu: float, id_chunks, offsets) -> dict:
    """Time, counts and a digest of (ids as uint32, offsets as int64), hashed a chunk at a time
    so that checking adds no memory to the peak being measured."""
    import numpy as np

    digest = hashlib.blake2b(digest_size=16)
    n_ids = 0
    for chunk in id_chunks:
        digest.update(np.asarray(chunk).astype("<u4").tobytes())
        n_ids += len(chunk)
    digest.update(np.asarray(offsets).astype("<i8").tobytes())
    return {"seconds": seconds, "cpu": cpu, "n_ids": n_ids, "n_docs": int(len(offsets) - 1),
            "digest": digest.hexdigest()}


def _chunks_of_file(path: str, dtype):
    """The ids of a .bin, read a chunk at a time (not mapped: mapped pages count as resident)."""
    import numpy as np

    with open(path, "rb") as f:
        while True:
            chunk = np.fromfile(f, dtype=dtype, count=CHUNK)
            if not len(chunk):
                return
            yield chunk


def run_child(peer: str, shape: str, mb: float, threads: int, timeout: float) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", peer, "--shape", shape,
           "--mb", f"{mb:g}", "--threads", str(threads)]
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), PYTHONPATH=str(ROOT))
    return run_measured(cmd, timeout, env)


# ------------------------------------------------------------------ the table


def measure(args) -> dict:
    """{(shape, peer): best-of-repeat result with the largest peak}."""
    results = {}
    for shape in args.shapes:
        for peer in ["baseline", *args.peers]:
            best = None
            for _ in range(1 if peer == "baseline" else args.repeat):
                r = run_child(peer, shape, args.mb, args.threads, args.timeout)
                if "error" in r:
                    best = r
                    break
                if best is None or r["seconds"] < best["seconds"]:
                    r["peak_mb"] = max(r["peak_mb"], best["peak_mb"] if best else 0)
                    best = r
                else:
                    best["peak_mb"] = max(best["peak_mb"], r["peak_mb"])
            results[shape, peer] = best
            print(f"  {shape:<10} {peer:<18} {best}", file=sys.stderr)
    return results


def section(args, results: dict, nbytes: dict, started: str, load_start: str) -> str:
    from compare import MARKERS, loadavg, machine, versions_line

    start, end = MARKERS["corpus"]
    lines = [
        start,
        "## Corpus encoding for training data (`encode_files`, both cores; higher MB/s is better)",
        "",
        f"- Machine: {machine()}",
        f"- Load average (1 / 5 / 15 min): {load_start} at the start, {loadavg()} at the end",
        f"- Versions: {versions_line()}, tokie {_version('tokie')}",
        f"- Date: {started}",
        f"- Command: `{args.command}` (from the repository root, after "
        "`python setup.py build_ext --inplace`)",
        f"- {ENCODING} (GPT-2; the vocabulary tokie loads here), {args.threads} threads each, "
        f"no separator token (tokie has none), best of {args.repeat} runs, each peer in a fresh "
        "process; peak = the process's peak resident memory (ru_maxrss), which includes the "
        "interpreter (the baseline row) and, for the numpy results, the result arrays.",
        "- Every peer's ids and offsets are checked equal to fastbpe's (a digest of both arrays).",
        "- CPU = user + system seconds of the peer's process during the encode, all threads: the "
        "work done, which other jobs on the machine move less than the wall time.",
        "",
        "| corpus | peer | time (s) | MB/s | vs tokie | CPU (s) | peak memory (MB) | tokens | documents |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for shape in args.shapes:
        label = {"books": f"{nbytes[shape] / 1e6:.0f} MB, {results[shape, args.peers[0]].get('n_docs', '?')} files (1 doc each)",
                 "paragraphs": f"{nbytes[shape] / 1e6:.0f} MB, 1 file split on blank lines"}[shape]
        ref = results.get((shape, "fastbpe -> numpy"), {}).get("digest")
        tokie_s = results.get((shape, "tokie"), {}).get("seconds")
        base = results[shape, "baseline"]
        lines.append(f"| {label} | baseline (interpreter + imports) | – | – | – | – | "
                     f"{base.get('peak_mb', 0):.0f} | – | – |")
        for peer in args.peers:
            r = results[shape, peer]
            if "error" in r:
                lines.append(f"| {label} | {peer} | {r['error']} | | | | | | |")
                continue
            if ref is not None and r["digest"] != ref:
                lines.append(f"| {label} | {peer} | ids differ | | | | {r['peak_mb']:.0f} | {r['n_ids']:,} | {r['n_docs']:,} |")
                continue
            ratio = f"{tokie_s / r['seconds']:.2f}x" if tokie_s else "–"
            lines.append(f"| {label} | {peer} | {r['seconds']:.2f} | {nbytes[shape] / 1e6 / r['seconds']:.1f} "
                         f"| {ratio} | {r['cpu']:.2f} | {r['peak_mb']:.0f} | {r['n_ids']:,} | {r['n_docs']:,} |")
    lines += ["", *target_lines(args, results), "", end]
    return "\n".join(lines)


def target_lines(args, results: dict) -> list[str]:
    """Where the issue's targets stand in this run: >= 1.5x tokie's speed, peak < 1 GB."""
    out = ["Targets: `encode_files` >= 1.5x tokie's `encode_files` on both cores, peak memory < 1 GB."]
    for shape in args.shapes:
        tokie_r = results.get((shape, "tokie"), {})
        for peer in ("fastbpe -> numpy", "fastbpe -> .bin"):
            r = results.get((shape, peer), {})
            if "seconds" not in r or "seconds" not in tokie_r:
                continue
            speed = tokie_r["seconds"] / r["seconds"]
            work = tokie_r["cpu"] / r["cpu"]
            out.append(f"- {shape}, {peer}: {speed:.2f}x tokie's speed "
                       f"({'met' if speed >= 1.5 else 'missed'}); tokie needs {work:.2f}x our CPU time; "
                       f"peak {r['peak_mb']:.0f} MB ({'met' if r['peak_mb'] < 1024 else 'missed'}).")
    return out


def _version(pkg: str) -> str:
    import importlib.metadata as md

    try:
        return md.version(pkg)
    except md.PackageNotFoundError:
        return "absent"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mb", type=float, default=250, help="MB of large_en to use (default: all)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=2, help="runs per peer; the fastest is reported")
    p.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    p.add_argument("--peers", nargs="+", default=PEERS, choices=PEERS)
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--no-write", action="store_true", help="print only")
    p.add_argument("--out", default=str(HERE / "RESULTS.md"))
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--shape", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    files = prepare(args.mb)
    if args.child:
        print(json.dumps(child(args.child, args.shape, files[args.shape], args.threads)))
        return 0
    args.command = "python bench/corpus_table.py " + " ".join(argv)
    from compare import loadavg, write_section

    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_start = loadavg()
    nbytes = {shape: sum(os.path.getsize(f) for f in files[shape]) for shape in args.shapes}
    results = measure(args)
    text = section(args, results, nbytes, started, load_start)
    print(text)
    if not args.no_write:
        write_section(Path(args.out), "corpus", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
