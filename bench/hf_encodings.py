#!/usr/bin/env python3
"""Full Encodings (ids, tokens, char offsets, word ids, masks) from tokenizer.json files:
fastbpe's `Tokenizer.encode_batch` vs HF tokenizers' `encode_batch`, side by side in one run.

fastokens, tokie and kitoken are left out: none of them computes offsets (fastokens raises
"does not track character offsets", tokie returns empty offsets), so only HF tokenizers
builds the same thing.  Per model and corpus: ~4 kB documents cut from distinct 0.5 MB
slices; the first slice warms up, the others are encoded once each; MB/s = their bytes /
their time.  Every Encoding is checked against HF's (ids, tokens, offsets, word ids) before
anything is timed.  Each library and thread count runs in a child process of its own,
pinned to k cores with RAYON_NUM_THREADS=k (HF sizes its pool at start).

    python bench/hf_encodings.py                 # -> bench/RESULTS.md (hf_encodings section)
    python bench/hf_encodings.py --slices 2 --no-write
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
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

import compare  # noqa: E402
import compare_hf  # noqa: E402
import hf_peers  # noqa: E402
import peers  # noqa: E402

MODELS = ["llama3", "qwen2.5"]   # labels of hf_peers.MODELS
LABELS = ["english", "code", "multilingual"]
FIELDS = ("ids", "tokens", "offsets", "word_ids")


def _tokenizer(lib: str, model: str):
    path = str(hf_peers.MODELS[model])
    if lib == "fastbpe":
        from fastbpe.hf import Tokenizer

        return Tokenizer.from_file(path)
    import tokenizers

    return tokenizers.Tokenizer.from_file(path)


def worker(args) -> None:
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.threads])
    docs_by_label = pickle.loads(Path(args.data).read_bytes())
    tok = _tokenizer(args.lib, args.model)
    if args.lib == "fastbpe":
        def batch(docs):
            return tok.encode_batch(docs, add_special_tokens=False, num_threads=args.threads)
    else:
        def batch(docs):
            return tok.encode_batch(docs, add_special_tokens=False)
    out = {}
    for label, slices in docs_by_label.items():
        seconds, nbytes = [0.0, 0.0], 0
        for i, docs in enumerate(slices):
            t = time.perf_counter()
            encs = batch(docs)
            for e in encs:   # what a model needs
                e.ids, e.attention_mask
            t1 = time.perf_counter()
            for e in encs:   # and every other field
                e.tokens, e.offsets, e.word_ids, e.type_ids, e.special_tokens_mask
            t2 = time.perf_counter()
            if i:
                seconds[0] += t1 - t
                seconds[1] += t2 - t
                nbytes += sum(len(d.encode("utf-8")) for d in docs)
        out[label] = [nbytes / s / 1e6 for s in seconds]
    print(json.dumps(out))


def check(model: str, docs_by_label: dict) -> None:
    """fastbpe's Encodings equal HF's on every document, or stop."""
    ours, ref = _tokenizer("fastbpe", model), _tokenizer("hf", model)
    for label, slices in docs_by_label.items():
        for docs in slices:
            for g, w in zip(ours.encode_batch(docs, add_special_tokens=False),
                            ref.encode_batch(docs, add_special_tokens=False)):
                for f in FIELDS:
                    if getattr(g, f) != getattr(w, f):
                        sys.exit(f"{model} {label}: {f} differs from HF tokenizers'")


def child(lib: str, model: str, data: str, threads: int) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="true")
    proc = subprocess.run([sys.executable, __file__, "--worker", "--lib", lib, "--model", model,
                           "--data", data, "--threads", str(threads)],
                          capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--slices", type=int, default=4, help="timed slices per corpus (plus one warm-up)")
    p.add_argument("--slice-mb", type=float, default=0.5)
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--lib", help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--data", help=argparse.SUPPRESS)
    p.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args)
    args.quick = False
    args.command = "python bench/hf_encodings.py" + ("" if args.slices == 4 else f" --slices {args.slices}")
    started, load_start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), compare.loadavg()
    threads = [1, 2] if (os.cpu_count() or 1) >= 2 else [1]
    rows = []
    for model in MODELS:
        if not Path(hf_peers.MODELS[model]).is_file():
            print(f"skip {model}: no {hf_peers.MODELS[model]}")
            continue
        docs_by_label = {}
        for label in LABELS:
            got = compare_hf.corpus_slices(label, args.slices + 1, int(args.slice_mb * 1e6))
            if got is not None:
                docs_by_label[label] = [peers.documents(s) for s in got[1]]
        check(model, docs_by_label)
        with tempfile.NamedTemporaryFile(suffix=".pkl", delete=False) as f:
            f.write(pickle.dumps(docs_by_label))
        try:
            res = {(lib, k): child(lib, model, f.name, k) for k in threads for lib in ("hf", "fastbpe")}
        finally:
            os.unlink(f.name)
        for label in docs_by_label:
            for j, fields in enumerate(("ids, attention_mask", "all fields")):
                cells = []
                for k in threads:
                    hf, ours = res["hf", k][label][j], res["fastbpe", k][label][j]
                    cells += [f"{hf:.1f}", f"{ours:.1f}", f"{ours / hf:.1f}×"]
                rows.append(f"| {model} | {label} | {fields} | " + " | ".join(cells) + " |")
                print(rows[-1])
    head = "".join(f" HF, {k} thr | fastbpe, {k} thr | fastbpe/HF, {k} thr |" for k in threads)
    lines = [
        "## tokenizer.json: full Encodings with offsets (`encode_batch`, MB/s; higher is better)",
        "",
        *compare.run_info(args, started, load_start),
        "- Method: see `bench/hf_encodings.py`: `encode_batch(docs, add_special_tokens=False)` on "
        "~4 kB documents from distinct 0.5 MB slices, each Encoding checked equal to HF's (ids, "
        "tokens, char offsets, word ids) first; one child process per library and thread count, "
        "pinned to k cores. Timed up to reading each Encoding's ids and attention_mask (what a "
        "model needs), and up to reading every field: fastbpe makes tokens, offsets and word ids "
        "when first read, HF in the call. fastokens, tokie and kitoken compute no offsets, so "
        "they are not in this table (see the ids-only table above).",
        "",
        "| model | corpus | fields read |" + head,
        "|---|---|---|" + "---:|" * (3 * len(threads)),
        *rows,
    ]
    print("\n".join(lines))
    if not args.no_write:
        compare.write_marked_lines(HERE / "RESULTS.md", "hf_encodings", lines)


if __name__ == "__main__":
    main()
