#!/usr/bin/env python3
"""Hugging Face tokenizer.json models: encode throughput of fastbpe and its peers side by side,
in one run.

For the Llama-3-based (DeepSeek-R1-Distill-Llama-8B) and Qwen2.5 tokenizer.json files x English /
code / multilingual, MB/s of UTF-8 input for fastbpe, HF tokenizers (the baseline and the
reference ids), fastokens, tokie and kitoken (bench/hf_peers.py says how each is called; no
special tokens added).  Inputs: distinct slices of each corpus (default 5 x 0.5 MB, spread over
the file): the first is the warm-up, the others are timed once each (a tokenizer that caches
results cannot gain from repeats) and MB/s = their bytes / their total time.  Every slice's ids
are checked against HF tokenizers' (outside the timing); a library that differs anywhere gets
"≠" after its number and a note with the first difference.

Modes: "1 doc" = one call per slice; "batch, k thr" = the library's batch API on ~4 kB documents
of each slice.  Each library runs each mode in a child process of its own, pinned to k cores
(sched_setaffinity) with RAYON_NUM_THREADS=k, because the Rust libraries size their thread pools
at start; so "1 doc" and "batch, 1 thr" are one core.  A process per mode, because the modes
encode the same slices: in one process a library's caches that outlive a call (fastbpe's piece
cache, fastokens' own) would meet the batch rows' text again, warm from the "1 doc" row.

The section goes to stdout and into bench/RESULTS.md between `<!-- hf:start -->` and
`<!-- hf:end -->` (the rest of the file is kept).

    python bench/compare_hf.py               # the full run -> bench/RESULTS.md
    python bench/compare_hf.py --quick       # smoke run -> bench/.work/RESULTS-quick.md
    python bench/compare_hf.py --models qwen2.5 --libs fastbpe,fastokens --no-write
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _p in (str(ROOT / "tests"), str(ROOT), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import compare  # noqa: E402  (shared: corpora, run info, RESULTS.md sections)
import datasources as ds  # noqa: E402
import hf_peers  # noqa: E402
import peers  # noqa: E402


def corpus_slices(label: str, n: int, size: int) -> tuple[str, list[str]] | None:
    """(source corpus, n distinct slices of `size` bytes) for a corpus label of compare.CORPORA."""
    for name in compare.CORPORA[label]:
        if ds.corpus_available(name):
            # large_en is huge: read just what the slices need (consecutive, still distinct)
            text = ds.load_corpus(name, n * size + (1 << 16) if name == "large_en" else None)
            return name, hf_peers.slices(text, n, size)
    return None


def modes_for(threads: int) -> list[str]:
    return ["1 doc", "batch, 1 thr"] if threads == 1 else [f"batch, {threads} thr"]


# ------------------------------------------------------------------ child process


def worker(args) -> None:
    """Child: time one library in one mode on every corpus of one model, pinned to `threads`
    cores."""
    cores = sorted(os.sched_getaffinity(0))[: args.threads]
    os.sched_setaffinity(0, cores)
    data = pickle.loads(Path(args.data).read_bytes())
    try:
        peer = hf_peers.build(args.lib, args.model)
    except peers.Unavailable as e:
        print(json.dumps({"unavailable": str(e)}))
        return
    out = {}
    mode, single = args.mode, args.mode == "1 doc"
    for label, d in data.items():
        inputs = d["slices"] if single else d["docs"]
        want = d["single"] if single else d["batch"]
        fn = peer.single if single else (lambda docs: peer.batch(docs, args.threads))
        same, diff = True, ""
        seconds, nbytes = 0.0, 0
        for i, x in enumerate(inputs):
            t = time.perf_counter()
            ids = fn(x)
            elapsed = time.perf_counter() - t
            if i:  # slice 0 is the warm-up
                seconds += elapsed
                nbytes += d["bytes"][i]
            if same and ids != want[i]:
                same, diff = False, first_difference(x, ids, want[i], single)
        out.setdefault(label, {})[mode] = {"seconds": seconds, "bytes": nbytes, "same": same, "diff": diff}
    print(json.dumps(out))


def first_difference(x, ids, want, single: bool) -> str:
    """Where `ids` first differ from `want` (for a batch: in the first document that differs)."""
    if not single:
        if len(ids) != len(want):
            return f"{len(ids)} results for {len(want)} documents"
        k = next(k for k, (a, b) in enumerate(zip(ids, want)) if a != b)
        ids, want = ids[k], want[k]
    j = next((j for j, (a, b) in enumerate(zip(ids, want)) if a != b), min(len(ids), len(want)))
    return f"token {j} of {len(want)}: {ids[j:j + 3]} instead of {want[j:j + 3]}"


def run_child(lib: str, model: str, data: Path, threads: int, mode: str) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="true")
    proc = subprocess.run([sys.executable, __file__, "--worker", "--lib", lib, "--model", model,
                           "--data", str(data), "--threads", str(threads), "--mode", mode],
                          capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1][:300] if proc.stderr.strip() else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ parent


def reference_data(model: str, labels, n: int, size: int, notes: dict) -> dict:
    """Per corpus: the slices, their ~4 kB documents, and HF tokenizers' ids for both."""
    ref = hf_peers.build(hf_peers.BASELINE, model)
    data = {}
    for label in labels:
        got = corpus_slices(label, n, size)
        if got is None:
            notes[f"corpus {label}"] = f"corpus {label}: not found (shared data absent)"
            continue
        source, texts = got
        docs = [peers.documents(s) for s in texts]
        data[label] = {
            "source": source,
            "slices": texts,
            "docs": docs,
            "bytes": [len(s.encode("utf-8")) for s in texts],
            "single": [ref.single(s) for s in texts],
            "batch": [ref.batch(d, 0) for d in docs],
        }
    return data


def cell_text(res: dict | None, base: dict | None) -> str:
    if res is None:
        return "n/a"
    mbs = res["bytes"] / res["seconds"] / 1e6
    s = f"{mbs:.1f}" + ("" if res["same"] else " ≠")
    if base is not None and base is not res:
        s += f" ({mbs / (base['bytes'] / base['seconds'] / 1e6):.2f}×)"
    return s


def fastbpe_vs_best(cells: dict) -> str:
    """fastbpe's MB/s over the fastest peer with HF's exact ids."""
    ours = cells.get("fastbpe")
    if ours is None or not ours["same"]:
        return "—"
    exact = {lib: r for lib, r in cells.items() if r is not None and r["same"] and lib != "fastbpe"}
    if not exact:
        return "—"
    lib, best = min(exact.items(), key=lambda kv: kv[1]["seconds"] / kv[1]["bytes"])
    ratio = (best["seconds"] / best["bytes"]) / (ours["seconds"] / ours["bytes"])
    return f"{ratio:.2f}× {lib}"


def section(args, rows, notes, started, load_start, labels_info) -> str:
    start, end = compare.MARKERS["hf"]
    vers = ", ".join(f"{k} {v}" for k, v in hf_peers.versions().items())
    lines = [
        start,
        "## Hugging Face tokenizer.json models (MB/s of UTF-8 input, and the ratio to HF tokenizers; higher is better)",
        "",
        *compare.run_info(args, started, load_start),
        f"- Peers: {vers}",
        f"- Method: per model and corpus, {args.slices + 1} distinct slices of {args.slice_mb} MB "
        "spread over the corpus; the first is the warm-up, the others are timed once each (no "
        "repeats, so a tokenizer's result cache cannot help); MB/s = their bytes / their total "
        "time. Every slice's ids are checked against HF tokenizers' (no special tokens added); "
        "\"≠\" = the ids differ somewhere (notes below). \"1 doc\" = one call per slice; "
        "\"batch, k thr\" = the library's batch API on ~4 kB documents. Each library runs each "
        "mode in a child process of its own (so no cache that outlives a call sees a slice "
        "twice), pinned to k cores with RAYON_NUM_THREADS=k. Calls: fastbpe "
        "`Tokenizer.from_file(p).encode_ids` / `encode_ids_batch(num_threads=k)`; HF "
        "`encode(...).ids` / `encode_batch_fast`; fastokens and tokie `encode(...).ids` / "
        "`encode_batch`; kitoken `encode` / `encode_all`. Last column: fastbpe's speed over the "
        "fastest other library with exact ids.",
        f"- Corpora: {labels_info}",
        "",
        "| model | corpus | mode | " + " | ".join(args.libs) + " | fastbpe vs fastest exact peer |",
        "|---|---|---|" + "---:|" * (len(args.libs) + 1),
    ]
    for model, label, mode, cells in rows:
        base = cells.get(hf_peers.BASELINE)
        lines.append(f"| {model} | {label} | {mode} | "
                     + " | ".join(cell_text(cells.get(lib), base) for lib in args.libs)
                     + f" | {fastbpe_vs_best(cells)} |")
    if notes:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in sorted(set(notes.values()))]
    lines.append(end)
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=",".join(hf_peers.MODELS))
    p.add_argument("--libs", default=",".join(hf_peers.LIBS), help="comma list (HF tokenizers is always run)")
    p.add_argument("--corpora", default=",".join(compare.CORPORA))
    p.add_argument("--slices", type=int, default=4, help="timed slices per corpus (plus one warm-up)")
    p.add_argument("--slice-mb", type=float, default=0.5)
    p.add_argument("--threads", default="1,2", help="thread counts for the batch rows")
    p.add_argument("--quick", action="store_true", help="smoke run: 2 slices of 0.05 MB -> bench/.work/RESULTS-quick.md")
    p.add_argument("--out", default=None, help="results file (default bench/RESULTS.md)")
    p.add_argument("--no-write", action="store_true", help="print only")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--lib", help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--data", help=argparse.SUPPRESS)
    p.add_argument("--mode", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        args.threads = int(args.threads)
        return worker(args)

    given = {a.split("=")[0] for a in argv}
    if args.quick:
        args.slices = args.slices if "--slices" in given else 2
        args.slice_mb = args.slice_mb if "--slice-mb" in given else 0.05
    if args.out is None:
        args.out = str(HERE / ".work" / "RESULTS-quick.md") if args.quick else str(HERE / "RESULTS.md")
    args.command = shlex.join(["python", "bench/compare_hf.py", *argv])
    args.libs = [hf_peers.BASELINE] + [x for x in hf_peers.LIBS
                                       if x in {s.strip() for s in args.libs.split(",")} and x != hf_peers.BASELINE]
    models = [m for m in args.models.split(",") if m]
    labels = [c for c in args.corpora.split(",") if c]
    threads = [int(t) for t in args.threads.split(",") if t]
    if set(models) - set(hf_peers.MODELS) or set(labels) - set(compare.CORPORA) or not threads or min(threads) < 1:
        p.error(f"--models from {list(hf_peers.MODELS)}, --corpora from {list(compare.CORPORA)}, --threads >= 1")
    if 1 not in threads:
        threads = [1] + threads  # "1 doc" runs in the one-core child

    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_start = compare.loadavg()
    t0 = time.perf_counter()
    notes: dict[str, str] = {}
    rows, labels_info = [], {}
    size = int(args.slice_mb * 1e6)
    with tempfile.TemporaryDirectory(prefix="fastbpe-hfbench-") as tmp:
        for model in models:
            try:
                data = reference_data(model, labels, args.slices + 1, size, notes)
            except peers.Unavailable as e:
                notes[f"model {model}"] = f"{model}: {e}"
                continue
            path = Path(tmp, f"{model}.pickle")
            path.write_bytes(pickle.dumps(data))
            results = {}
            for lib in args.libs:
                for k, mode in [(k, m) for k in threads for m in modes_for(k)]:
                    res = run_child(lib, model, path, k, mode)
                    if "unavailable" in res or "error" in res:
                        notes[f"{lib} {model}"] = f"{lib} on {model}: {res.get('unavailable') or res.get('error')}"
                        continue
                    for label, by_mode in res.items():
                        for mode, r in by_mode.items():
                            results.setdefault((label, mode), {})[lib] = r
                            if not r["same"]:
                                notes[f"{lib} {model} {label} {mode}"] = (
                                    f"≠ {lib}, {model}, {label}, {mode}: ids differ from HF's ({r['diff']})")
                    print(f"  {model} {lib} {mode} done", file=sys.stderr)
            for label in labels:
                if label not in data:
                    continue
                d = data[label]
                labels_info[label] = f"{label} = {d['source']}"
                for mode in [m for k in threads for m in modes_for(k)]:
                    cells = results.get((label, mode), {})
                    rows.append((model, label, mode, cells))
                    print(f"{model:<8} {label:<13} {mode:<13} "
                          + "  ".join(f"{lib} {cell_text(cells.get(lib), cells.get(hf_peers.BASELINE))}"
                                      for lib in args.libs), file=sys.stderr)
    text = section(args, rows, notes, started, load_start, "; ".join(labels_info.values()))
    print(text)
    if not args.no_write:
        compare.write_section(Path(args.out), "hf", text)
        print(f"written to {args.out}", file=sys.stderr)
    print(f"total time {time.perf_counter() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
